"""`privamp profile` and `privamp plot profile` with every sampling option of the contract."""

from __future__ import annotations

import pytest

from cli_helpers import run_json
from privamp import GaussianMechanism, LaplaceMechanism
from privamp.amplification.subsampling import amplify
from privamp.cli import main
from privamp.sampling import MustOW, MustWO, MustWW, Poisson, WithoutReplacement, WithReplacement

G = ["profile", "--mechanism", "gaussian", "--sigma", "2"]


@pytest.mark.parametrize(
    ("options", "scheme", "relation"),
    [
        (["--sampling", "poisson", "--rate", "0.1"], Poisson(0.1), "add-remove"),
        (["--sampling", "poisson", "--rate", "0.1", "--n", "50", "--relation", "substitute"],
         Poisson(0.1, n=50), "substitute"),
        (["--sampling", "wor", "--n", "100", "--m", "10"], WithoutReplacement(100, 10),
         "substitute"),
        (["--sampling", "wr", "--n", "100", "--m", "10"], WithReplacement(100, 10),
         "substitute"),
        (["--sampling", "wr", "--n", "100", "--m", "10", "--relation", "add-remove"],
         WithReplacement(100, 10), "add-remove"),
        (["--sampling", "must-ow", "--n", "100", "--b", "50", "--m", "20"], MustOW(100, 50, 20),
         "substitute"),
        (["--sampling", "must-wo", "--n", "100", "--b", "50", "--m", "20"], MustWO(100, 50, 20),
         "substitute"),
        (["--sampling", "must-ww", "--n", "100", "--b", "50", "--m", "20"], MustWW(100, 50, 20),
         "substitute"),
    ],
)
def test_every_sampling_option(options, scheme, relation, capsys):
    """JSON contract keys, η and the values equal the library's amplify(...).points()."""
    d = run_json([*G, *options, "--eps", "0.5", "1", "3"], capsys)
    assert d["relation"] == relation
    assert d["sampling"]["scheme"] == scheme.kind
    assert d["theorem"]
    base_rel = scheme.base_relation(relation)
    prof = amplify(GaussianMechanism(2.0, relation=base_rel), scheme, relation)
    assert d["eta"] == prof.eta
    pts = prof.points([0.5, 1.0, 3.0])
    for i, p in enumerate(d["points"]):
        assert set(p) >= {"eps", "delta", "eps_amplified", "delta_amplified"}
        assert p["eps_amplified"] == pts["eps_amplified"][i]
        assert p["delta_amplified"] == pts["delta_amplified"][i]
        assert p["eps_amplified"] <= p["eps"]


def test_contract_case_must_ww_laplace(capsys):
    """The contract checker's MUST.WW case, with the values of the library."""
    d = run_json(["profile", "--mechanism", "laplace", "--scale", "2", "--sampling", "must-ww",
                  "--n", "100", "--b", "50", "--m", "20", "--relation", "substitute",
                  "--group-privacy", "white-box", "--eps", "1"], capsys)
    prof = amplify(LaplaceMechanism(2.0, relation="substitute"), MustWW(100, 50, 20),
                   group_privacy="white-box")
    assert d["points"][0]["delta_amplified"] == prof.points([1.0])["delta_amplified"][0]


def test_table_output_with_sampling(capsys):
    """The readable table shows ε, δ, ε' and δ' and names the theorem."""
    assert main([*G, "--sampling", "wor", "--n", "10", "--m", "3", "--eps", "1"]) == 0
    out = capsys.readouterr().out
    assert "BBG Theorem 9" in out and "delta'(eps')" in out and "wor(n=10, m=3)" in out


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (["--sampling", "poisson", "--rate", "1.5"], "--rate"),
        (["--sampling", "poisson"], "--rate is required"),
        (["--sampling", "wor", "--n", "10", "--m", "20"], "--m must be at most n = 10"),
        (["--sampling", "wor", "--n", "10"], "--m is required"),
        (["--sampling", "wor", "--n", "10", "--m", "3", "--relation", "add-remove"],
         "not analysed under the 'add-remove' relation"),
        (["--sampling", "must-wo", "--n", "10", "--b", "5", "--m", "6"], "--m"),
        (["--sampling", "must-ow", "--n", "10", "--b", "20", "--m", "6"], "--b"),
        (["--sampling", "poisson", "--rate", "0.1", "--relation", "substitute"], "--n"),
        (["--sampling", "chain"], "invalid choice"),
    ],
)
def test_bad_sampling_input(options, needle, capsys):
    """Exit status 2, one line naming the option or the unsupported combination."""
    status = main([*G, *options, "--eps", "1", "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err, err


def test_plot_profile_with_sampling(tmp_path, capsys):
    """The plot shows the base and the amplified profile."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "amp.png"
    d = run_json(["plot", "profile", "--mechanism", "gaussian", "--sigma", "1", "--sampling",
                  "wr", "--n", "100", "--m", "30", "--out", str(out)], capsys)
    assert d["out"] == str(out) and out.stat().st_size > 20_000


def test_group_size_with_sampling(capsys):
    """--group-size after sampling takes the black-box group profile of the amplified one."""
    d = run_json([*G, "--sampling", "poisson", "--rate", "0.1", "--group-size", "2",
                  "--eps", "1"], capsys)
    single = run_json([*G, "--sampling", "poisson", "--rate", "0.1", "--eps", "1"], capsys)
    assert d["group_size"] == 2 and d["eta"] == single["eta"]
    p, s = d["points"][0], single["points"][0]
    assert p["eps_amplified"] == s["eps_amplified"] and p["delta"] == s["delta"]
    assert s["delta_amplified"] <= p["delta_amplified"] < 1.0  # groups of 2 are less private
