"""The samplers practitioners run, end to end: shuffling and truncated Poisson through the
accountant, the CLI, the samplers, the sweeps and the plots (random allocation has its own file,
``test_random_allocation.py``; the pairs have ``test_shuffle_lower.py`` and
``test_truncated_poisson.py``).

References: Chua et al. (ICML 2024 / NeurIPS 2024) lower bounds for shuffled batches at
δ = 1e-6, 1,000 steps an epoch (the issue's table); dp_accounting's truncated-Poisson values.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from privamp import Accountant, GaussianMechanism, Poisson, Shuffle, TruncatedPoisson
from privamp.applications.samplers import SchemeBatchSampler
from privamp.cli import main
from privamp.errors import InvalidParameterError, UnsupportedCombinationError

pytestmark = pytest.mark.filterwarnings("ignore::privamp.errors.AccuracyWarning")


def run_json(argv, capsys):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


SHUFFLE = ["epsilon", "--mechanism", "gaussian", "--sampling", "shuffle", "--n", "10000",
           "--m", "10", "--delta", "1e-6"]


@pytest.mark.parametrize(("sigma", "epochs", "reference"),
                         [(0.5, 1, 10.997), (1.0, 1, 3.724), (2.0, 1, 0.110), (1.0, 5, 4.701)])
def test_shuffle_brackets_the_published_lower_bounds(capsys, sigma, epochs, reference):
    d = run_json([*SHUFFLE, "--sigma", str(sigma), "--steps", str(1000 * epochs)], capsys)
    gaussian = Accountant().add(GaussianMechanism(sigma), epochs).epsilon(1e-6)
    assert d["epsilon"] == gaussian.upper             # no amplification: the honest upper end
    assert reference - 1e-3 <= d["epsilon_lower"] <= reference + 0.01
    assert d["lower_end_of"] == "mechanism"
    assert "Chua et al." in d["accounted"] and "Poisson" in d["accounted"]
    # Poisson accounting at q = 1/1000 under-reports shuffled batches by 10-20x (σ = 1)
    if sigma == 1.0:
        poisson = Accountant().add(GaussianMechanism(1.0), 1000 * epochs,
                                   scheme=Poisson(1e-3)).epsilon(1e-6)
        assert d["epsilon_lower"] > 10 * poisson.upper


def test_shuffle_text_says_the_lower_end_is_a_lower_bound(capsys):
    assert main([*SHUFFLE, "--sigma", "1", "--steps", "1000"]) == 0
    out = capsys.readouterr().out
    assert "best known lower bound" in out and "no amplification" in out


def test_persistent_order_and_partial_epochs():
    mech = GaussianMechanism(1.0)
    one = Accountant().add(mech, 1000, scheme=Shuffle(10000, 10)).epsilon(1e-6)
    per = Accountant().add(mech, 1000, scheme=Shuffle(10000, 10, "persistent")).epsilon(1e-6)
    assert one == per                                   # one epoch: the same pair
    five_p = Accountant().add(mech, 5000, scheme=Shuffle(10000, 10, "persistent"))
    five_r = Accountant().add(mech, 5000, scheme=Shuffle(10000, 10))
    bp, br = five_p.epsilon(1e-6), five_r.epsilon(1e-6)
    assert bp.upper == br.upper and bp.lower > br.lower  # a fixed position leaks more
    part = Accountant().add(mech, 1500, scheme=Shuffle(10000, 10)).epsilon(1e-6)
    two = Accountant().add(mech, 2000, scheme=Shuffle(10000, 10)).epsilon(1e-6)
    assert part == two                                  # a partial epoch counts whole


def test_shuffle_under_substitution_uses_2c():
    """Substitution: sensitivity 2C; the lower end replaces the record's +C by −C (the others
    at −C), which identifies its batch better than zeroing it out."""
    sub = Accountant().add(GaussianMechanism(1.0, 2.0, "substitute"), 1000,
                           scheme=Shuffle(10000, 10), relation="substitute").epsilon(1e-6)
    add = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Shuffle(10000, 10)).epsilon(1e-6)
    assert sub.upper == Accountant().add(GaussianMechanism(1.0, 2.0, "substitute"), 1,
                                         relation="substitute").epsilon(1e-6).upper
    assert add.lower < sub.lower < sub.upper


def test_shuffle_batches_are_a_partition_each_epoch():
    rng = np.random.default_rng(0)
    scheme = Shuffle(103, 10)
    sampler = SchemeBatchSampler(scheme, steps=20, rng=rng)
    batches = list(sampler)
    assert all(b.size == 10 for b in batches)
    for epoch in (batches[:10], batches[10:]):
        seen = np.concatenate(epoch)
        assert np.unique(seen).size == 100               # 3 records left out each epoch
    assert not np.array_equal(np.sort(np.concatenate(batches[:10])),
                              np.sort(np.concatenate(batches[10:])))  # reshuffled


@pytest.mark.parametrize(("kwargs", "name"), [({"n": 10, "m": 11}, "m"), ({"n": 0, "m": 1}, "n"),
                                               ({"n": 10, "m": 2, "order": "sorted"}, "order")])
def test_shuffle_bad_parameters(kwargs, name):
    with pytest.raises(InvalidParameterError) as info:
        Shuffle(**kwargs)
    assert info.value.parameter == name


# ---- truncated Poisson ---------------------------------------------------------------------


def test_truncated_poisson_matches_or_beats_dp_accounting(capsys):
    d = run_json(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling",
                  "truncated-poisson", "--n", "60000", "--rate", "0.01", "--max-batch", "700",
                  "--steps", "1000", "--delta", "1e-5"], capsys)
    assert d["epsilon"] <= 1.879227 and d["epsilon"] - d["epsilon_lower"] <= 1e-3 * d["epsilon"]
    assert d["sampling"] == {"scheme": "truncated-poisson", "n": 60000, "rate": 0.01,
                             "max_batch": 700}


def test_truncated_poisson_heterogeneous_reference():
    """3 × (n = 4, q = 0.5, B = 2) and 2 × (n = 3, q = 0.5, B = 2), σ = 1: dp_accounting gives
    17.904330 at δ = 1e-6; privamp's certified bound is below it."""
    mech = GaussianMechanism(1.0)
    acc = (Accountant().add(mech, 3, scheme=TruncatedPoisson(4, 0.5, 2))
           .add(mech, 2, scheme=TruncatedPoisson(3, 0.5, 2)))
    b = acc.epsilon(1e-6)
    assert b.upper <= 17.904330 and b.width <= 1e-3 * b.upper


def test_truncated_poisson_without_truncation_is_poisson():
    mech = GaussianMechanism(1.0)
    a = Accountant().add(mech, 100, scheme=TruncatedPoisson(50, 0.1, 50)).epsilon(1e-5)
    b = Accountant().add(mech, 100, scheme=Poisson(0.1)).epsilon(1e-5)
    assert a.lower <= b.upper and b.lower <= a.upper


def test_padded_batches_have_a_fixed_shape():
    sampler = SchemeBatchSampler(TruncatedPoisson(1000, 0.05, 40), steps=50, rng=3)
    sizes = []
    for idx, mask in sampler.padded():
        assert idx.shape == mask.shape == (40,)
        assert np.all(idx[~mask] == 0) and np.unique(idx[mask]).size == mask.sum()
        sizes.append(int(mask.sum()))
    assert max(sizes) <= 40 and sampler.batches_drawn == 50
    with pytest.raises(InvalidParameterError):
        next(SchemeBatchSampler(Shuffle(100, 10), steps=1).padded())


# ---- CLI, sweeps, plots --------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["--sampling", "random-allocation", "--steps", "10"], "--t is required"),
    (["--sampling", "random-allocation", "--t", "10", "--k", "11", "--steps", "10"], "--k"),
    (["--sampling", "poisson", "--rate", "0.1", "--order", "persistent", "--steps", "10"],
     "--order does not apply"),
    (["--sampling", "truncated-poisson", "--n", "10", "--rate", "0.1", "--max-batch", "0",
      "--steps", "10"], "--max-batch"),
    (["--sampling", "shuffle", "--n", "10", "--m", "2", "--steps", "10", "--accountant",
      "rdp"], "'pld' backend only"),
])
def test_cli_refusals(capsys, argv, message):
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--delta", "1e-5",
                 *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("privamp: error:") and message in err and "Traceback" not in err


def test_sweep_axes_of_the_new_samplers():
    from privamp.sweep.grid import expand

    rows = expand({"mechanism": "gaussian", "sigma": 1.0, "delta": 1e-5, "steps": 200},
                  [{"sampling": "random-allocation", "t": [10, 100]},
                   {"sampling": "shuffle", "n": 100, "m": 10,
                    "order": ["reshuffle", "persistent"]},
                   {"sampling": "truncated-poisson", "n": 100, "rate": 0.1, "max_batch": 12}])
    assert [r.sampling for r in rows].count("random-allocation") == 2
    assert {r.k for r in rows if r.sampling == "random-allocation"} == {1}   # the default
    assert {r.order for r in rows if r.sampling == "shuffle"} == {"reshuffle", "persistent"}
    assert all(r.order is None for r in rows if r.sampling != "shuffle")
    from privamp.sweep.batch import _scheme

    assert _scheme(rows[3]) == Shuffle(100, 10, "persistent")


def test_plot_composition_compares_every_sampler(capsys, tmp_path):
    out = tmp_path / "samplers.png"
    d = run_json(["plot", "composition", "--mechanism", "gaussian", "--sigma", "1", "--n",
                  "1000", "--m", "10", "--schemes", "poisson", "random-allocation", "shuffle",
                  "truncated-poisson", "--max-steps", "300", "--points", "3", "--out",
                  str(out)], capsys)
    assert out.stat().st_size > 0
    curves = {(c["scheme"], c["accountant"]): c for c in d["curves"]}
    assert ("shuffle", "rdp") not in curves and ("poisson", "rdp") in curves
    shuffle = curves[("shuffle", "pld")]
    assert all(lo < up for lo, up in zip(shuffle["epsilon_lower"], shuffle["epsilon"],
                                         strict=True))
    ra, po = curves[("random-allocation", "pld")], curves[("poisson", "pld")]
    assert ra["epsilon"][-1] < shuffle["epsilon_lower"][-1]
    assert ra["epsilon"][-1] < po["epsilon"][-1] * 1.05


def test_the_new_samplers_refuse_group_privacy():
    with pytest.raises(UnsupportedCombinationError, match="group privacy"):
        Accountant().add(GaussianMechanism(1.0), 10, scheme=Shuffle(100, 10),
                         group_privacy="black-box")
