"""ε after every epoch: grids planned for a horizon, and what the queries of a growing ledger
share (``Accountant(horizon=H)``, :func:`privamp.pld.engine.pld_epsilon` ``horizon``, the
steps' memoised transforms in :mod:`privamp.pld.distribution`).

The conformance suite runs the horizon on every scheme kind (tests/conformance/test_horizon.py);
here: exactness against μ-GDP on the boundaries of the plan, the reuse itself (structurally,
by the cache's counters: never by timing), bit-for-bit equality of memoised and fresh
transforms, and the argument checks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conformance import references as ref
from privamp import GaussianMechanism, LaplaceMechanism
from privamp.accountant import Accountant
from privamp.cache import AccountingCache
from privamp.errors import InvalidParameterError, InvalidTypeError
from privamp.pld.builders import pair_curves
from privamp.pld.distribution import StepPLD, compose, ladder_length
from privamp.pld.engine import PldEvent, _plan, pld_epsilon
from privamp.sampling import Poisson, WithoutReplacement

ROUND = 8 * 2.0**-52


@pytest.mark.parametrize("delta", [1e-5, 1e-12])
@pytest.mark.parametrize("horizon", [1, 7, 8, 100, 10**9])
def test_epochs_contain_the_exact_gaussian_epsilon(horizon, delta):
    """σ = 2 without subsampling: T steps are μ-GDP with μ = √T/2 exactly. Epochs of 1, 3 and
    4 steps (T = 1, 4, 8) cross the plan's doublings for small horizons, sit below it for large
    ones; δ = 1e-12 takes the tilted path."""
    acc = Accountant(horizon=horizon)
    total = 0
    for steps in (1, 3, 4):
        acc.add(GaussianMechanism(2.0), steps)
        total += steps
        b = acc.epsilon(delta)
        exact = float(ref.gdp_epsilon(ref.mpmath.sqrt(total) / 2, delta))
        assert b.upper >= exact * (1 - ROUND), (total, b, exact)
        assert b.lower <= exact * (1 + ROUND), (total, b, exact)
        assert b.upper - b.lower <= 2e-3 * b.upper, (total, b)


@pytest.mark.parametrize(("mech", "scheme"), [
    (GaussianMechanism(1.0), Poisson(0.01)),
    (LaplaceMechanism(1.0), Poisson(0.02)),
    (GaussianMechanism(1.5, 2.0, relation="substitute"), WithoutReplacement(1000, 10)),
])
def test_epoch_queries_do_not_depend_on_the_previous_ones(mech, scheme):
    """Four epochs asked one after the other give exactly the brackets of fresh accountants
    asked once (the shared work changes the time, never the answer), and overlap the default
    grids' brackets."""
    acc = Accountant(horizon=400)
    for epoch in range(1, 5):
        acc.add(mech, 100, scheme=scheme)
        seen = acc.epsilon(1e-6)
        fresh = Accountant(horizon=400).add(mech, 100 * epoch, scheme=scheme).epsilon(1e-6)
        assert seen == fresh
        default = Accountant().add(mech, 100 * epoch, scheme=scheme).epsilon(1e-6)
        assert seen.lower <= default.upper and default.lower <= seen.upper


def test_epochs_within_a_plan_reuse_the_steps():
    """After the first epoch of a plan, an epoch's query discretises no new step (the step
    table's misses do not grow) and finds the previous steps (its hits grow); only the
    compositions at the new count are new."""
    cache = AccountingCache()
    acc = Accountant(horizon=2000, cache=cache)
    acc.add(GaussianMechanism(1.0), 500, scheme=Poisson(0.01))
    acc.epsilon(1e-5)
    misses = cache.stats["step"]["misses"]
    hits = cache.stats["step"]["hits"]
    composed = cache.stats["composed"]["misses"]
    for _ in range(3):
        acc.add(GaussianMechanism(1.0), 500, scheme=Poisson(0.01))
        acc.epsilon(1e-5)
    assert cache.stats["step"]["misses"] == misses
    assert cache.stats["step"]["hits"] >= hits + 3
    assert cache.stats["composed"]["misses"] > composed  # new counts are composed anew
    # the same ledger without a plan discretises its steps again at every epoch
    cache2 = AccountingCache()
    plain = Accountant(cache=cache2)
    for _ in range(4):
        plain.add(GaussianMechanism(1.0), 500, scheme=Poisson(0.01))
        plain.epsilon(1e-5)
    assert cache2.stats["step"]["misses"] > misses


def test_planned_spacings_ignore_last_bit_noise():
    """The planned spacings are rounded down to 6 significant bits: spacings an ulp apart (the
    scaled moments of neighbouring counts) land on the same grid, never a coarser one."""
    from privamp.pld.engine import _floor_bits

    for h in (1.2066733275950459e-4, 4.8828125e-4, 0.3, 1e-7):
        got = _floor_bits(h)
        assert got <= h and got >= h * (1 - 2.0**-5)
        assert _floor_bits(math.nextafter(h, 0)) == got or got == h
        assert _floor_bits(math.nextafter(h, 1)) == got
    assert _floor_bits(4.8828125e-4) == 4.8828125e-4  # a power of 2 stays


def test_plan_doubles_until_it_covers_the_ledger():
    assert _plan(1, 1) == 1
    assert _plan(4, 12) == 16
    assert _plan(5, 12) == 20
    assert _plan(16, 12) == 16
    assert _plan(3, 3) == 3
    assert _plan(10**9, 1) == 10**9


@pytest.mark.parametrize("n", [*range(1, 200), 2**19 - 1, 2**19, 2**19 + 1, 3 * 2**20 + 1,
                               2**23 - 5])
def test_ladder_length_is_the_smallest_rung_at_least_n(n):
    got = ladder_length(n)
    assert got >= n
    assert got <= max(1.5 * n, 2)
    odd = got // (got & -got)  # the odd part: 1 or 3
    assert odd in (1, 3)
    # no smaller rung of the ladder is at least n
    rungs = [r for k in range(30) for r in (2**k, 3 * 2**k)]
    assert got == min(r for r in rungs if r >= n)


def _gaussian_step(h, kind="upper"):
    curve = pair_curves(GaussianMechanism(1.0), Poisson(0.02))["remove"]
    return StepPLD.from_curve(curve, h, -0.2, 0.2, kind)


@pytest.mark.parametrize("tilt", [0.0, 3.0])
@pytest.mark.parametrize("ladder", [False, True])
def test_memoised_transforms_give_the_fresh_composition_bit_for_bit(tilt, ladder):
    """A step composed at 300, then 700 steps (its memo warm) gives exactly what a fresh copy
    of the step gives at 700 — masses, error terms, window — with and without a tilt and the
    ladder (the extended-precision pass is reused per frequency)."""
    h = 2e-4
    warm = _gaussian_step(h)
    compose([(warm, 300)], log_tail_tol=math.log(1e-14), tilt=tilt, ladder=ladder)
    again = compose([(warm, 700)], log_tail_tol=math.log(1e-14), tilt=tilt, ladder=ladder)
    fresh = compose([(_gaussian_step(h), 700)], log_tail_tol=math.log(1e-14), tilt=tilt,
                    ladder=ladder)
    assert np.array_equal(again.masses, fresh.masses)
    for name in ("i_start", "p_inf", "spectral_coeff", "fft_size", "log_tail_below",
                 "log_tail_above", "loss_shift", "log_scale"):
        assert getattr(again, name) == getattr(fresh, name), name
    assert again.epsilon(1e-5) == fresh.epsilon(1e-5)


def test_ladder_composition_is_as_certified_as_the_default():
    """The ladder's longer window and smaller light part keep the bracket: its ε encloses the
    same exact value (Gaussian, no subsampling, through the engine's step pairs)."""
    curves = pair_curves(GaussianMechanism(1.0))
    curve = next(iter(curves.values()))
    exact = float(ref.gdp_epsilon(ref.mpmath.sqrt(50), 1e-5))
    for ladder in (False, True):
        up = compose([(StepPLD.from_curve(curve, 1e-3, -12, 12, "upper"), 50)],
                     ladder=ladder).epsilon(1e-5)
        low = compose([(StepPLD.from_curve(curve, 1e-3, -12, 12, "lower"), 50)],
                      ladder=ladder).epsilon(1e-5)
        assert low <= exact * (1 + ROUND) and up >= exact * (1 - ROUND), (ladder, low, up)


@pytest.mark.parametrize("bad", [0, -3, 1.5, math.nan, math.inf, "10", True])
def test_horizon_is_checked_by_name(bad):
    with pytest.raises((InvalidParameterError, InvalidTypeError), match="horizon"):
        Accountant(horizon=bad)
    events = [PldEvent(pair_curves(GaussianMechanism(1.0), Poisson(0.1)), 10)]
    with pytest.raises((InvalidParameterError, InvalidTypeError), match="horizon"):
        pld_epsilon(events, 1e-5, horizon=bad)


def test_horizon_survives_the_state_round_trip(tmp_path):
    acc = Accountant(horizon=3000).add(GaussianMechanism(1.0), 700, scheme=Poisson(0.01))
    again = Accountant.from_state_dict(json.loads(json.dumps(acc.state_dict())))
    assert again.horizon == 3000
    assert again.epsilon(1e-5) == acc.epsilon(1e-5)


def test_explain_says_the_grids_are_planned():
    acc = Accountant(horizon=1000).add(GaussianMechanism(1.0), 100, scheme=Poisson(0.01))
    assert "planned for a run of 1,000 steps" in acc.explain()
    assert "planned" not in Accountant().add(GaussianMechanism(1.0), 100).explain()


def test_only_the_last_few_ladder_steps_keep_a_memo():
    """The memo's memory is outside the cache's byte budgets: only the steps of the last few
    ladder compositions keep one (default compositions keep none)."""
    from privamp.pld import distribution as dist

    plain = _gaussian_step(1e-3)
    compose([(plain, 10)])
    assert "_memo" not in plain.__dict__
    steps = [_gaussian_step(1e-3 * (1 + k / 100)) for k in range(dist._KEPT_STEPS + 3)]
    for step in steps:
        compose([(step, 10)], ladder=True)
    kept = ["_memo" in step.__dict__ for step in steps]
    assert kept == [False] * 3 + [True] * dist._KEPT_STEPS


def test_a_reused_id_does_not_keep_the_place_of_a_collected_step(monkeypatch):
    """The kept steps are keyed by id(), and ids of collected steps are reused: a new step
    under the id of a collected one went to that entry's old place and lost its memo before
    older steps (a CI run saw the wrong step keep its memo after other tests had run)."""
    import collections
    import weakref

    from privamp.pld import distribution as dist

    monkeypatch.setattr(dist, "_KEPT", collections.OrderedDict())
    steps = [_gaussian_step(1e-3 * (1 + k / 100)) for k in range(dist._KEPT_STEPS + 1)]

    class Gone:
        pass

    dead = Gone()
    # the first entry: a collected step that had the id the last step now has
    dist._KEPT[id(steps[-1])] = weakref.ref(dead)
    del dead
    half = dist._KEPT_STEPS // 2
    # kept in this order: steps[0 … half−1], steps[−1], steps[half …]; one too many, so the
    # least recent, steps[0], loses its memo (not steps[−1] at the collected step's place)
    for step in [*steps[:half], steps[-1], *steps[half:-1]]:
        compose([(step, 10)], ladder=True)
    kept = ["_memo" in step.__dict__ for step in steps]
    assert kept == [False] + [True] * dist._KEPT_STEPS


def test_an_accountant_pickled_by_an_earlier_version_loads():
    """Earlier versions pickled ``backend`` as a plain attribute and had no ``horizon``: such a
    state still loads, with the same ledger and answers."""
    import pickle

    acc = Accountant("pld").add(GaussianMechanism(1.0), 100, scheme=Poisson(0.01))
    state = acc.__getstate__()
    state["backend"] = state.pop("_backend")
    del state["horizon"]
    old = Accountant.__new__(Accountant)
    old.__setstate__(state)
    assert old.backend is acc.backend and old.horizon is None
    assert old.epsilon(1e-5) == acc.epsilon(1e-5)
    again = pickle.loads(pickle.dumps(old))
    assert again.epsilon(1e-5) == acc.epsilon(1e-5)
