"""``privamp plot aligned`` and ``privamp plot delta``: the JSON contract, the library's
numbers behind the plots, the image files, and one-line errors with exit status 2."""

from __future__ import annotations

import numpy as np
import pytest

from cli_helpers import distinct_colours, run_error, run_json
from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.amplification.subsampling import amplify
from privamp.amplification.tightness import aligned_profile
from privamp.cli import main
from privamp.relations import clipped_sum_sensitivity
from privamp.sampling import MustOW, MustWW, Poisson, WithoutReplacement, WithReplacement

matplotlib = pytest.importorskip("matplotlib")


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    image = matplotlib.image.imread(str(path))
    assert distinct_colours(image) > 50


def test_plot_aligned(tmp_path, capsys):
    out = tmp_path / "aligned.png"
    d = run_json(["plot", "aligned", "--mechanism", "gaussian", "--sigma", "1", "--n", "1000",
                  "--b", "500", "--m", "400", "--points", "120", "--out", str(out)], capsys)
    assert_png(out)
    rows = {r["scheme"]: r for r in d["schemes"]}
    assert list(rows) == ["wor", "wr", "must-ow", "must-ww"]
    for r in rows.values():
        assert sum(r[k] for k in ("strong", "weak-I", "weak-II", "dilution")) == \
            pytest.approx(1.0)
    assert rows["wor"]["strong"] == 1.0 and rows["must-ww"]["weak-I"] > 0.5
    assert rows["must-ww"]["eta"] == pytest.approx(0.240907592, rel=1e-8)
    # the numbers behind the plot are the library's aligned profile
    eps = np.linspace(0.01, 6.0, 120)
    a = aligned_profile(amplify(GaussianMechanism(1.0, relation="substitute"),
                                MustWW(1000, 500, 400)), eps)
    assert rows["must-ww"]["weak-I"] == pytest.approx(a.fraction("weak-I"))


def test_plot_aligned_with_poisson_and_table(tmp_path, capsys):
    out = tmp_path / "aligned.svg"
    assert main(["plot", "aligned", "--mechanism", "laplace", "--scale", "1", "--n", "100",
                 "--m", "10", "--schemes", "poisson", "wr", "--points", "50", "--out",
                 str(out)]) == 0
    text, _ = capsys.readouterr()
    assert "poisson" in text and "wrote" in text
    assert out.read_text().startswith("<?xml")


def test_plot_delta_band_is_the_accountant_bracket(tmp_path, capsys):
    out = tmp_path / "delta.png"
    d = run_json(["plot", "delta", "--mechanism", "gaussian", "--sigma", "1", "--sampling",
                  "poisson", "--rate", "0.01", "--steps", "100", "1000", "--eps-min", "0.5",
                  "--eps-max", "3", "--points", "4", "--out", str(out)], capsys)
    assert_png(out)
    assert d["accountant"] == "pld" and [c["steps"] for c in d["curves"]] == [100, 1000]
    for c in d["curves"]:
        assert all(lo <= up for lo, up in zip(c["delta_lower"], c["delta"], strict=True))
        assert all(np.diff(c["delta"]) < 0)
    b = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.01)).delta(3.0)
    assert d["curves"][1]["delta"][-1] == pytest.approx(b.upper, rel=1e-6)
    # more steps, more privacy loss
    assert all(np.array(d["curves"][1]["delta"]) > np.array(d["curves"][0]["delta"]))


def test_plot_delta_rdp_has_no_lower_band(tmp_path, capsys):
    out = tmp_path / "delta.png"
    d = run_json(["plot", "delta", "--mechanism", "gaussian", "--sigma", "2", "--sampling",
                  "poisson", "--rate", "0.01", "--steps", "100", "--accountant", "rdp",
                  "--points", "3", "--eps-min", "0.1", "--out", str(out)], capsys)
    assert d["curves"][0]["delta_lower"] is None
    assert main(["plot", "delta", "--mechanism", "gaussian", "--sigma", "2", "--steps", "10",
                 "--points", "3", "--eps-min", "0.1", "--out", str(out)]) == 0
    text, _ = capsys.readouterr()
    assert "delta (upper)" in text and "wrote" in text


COMPOSITION = ["plot", "composition", "--mechanism", "gaussian", "--n", "200", "--m", "4",
               "--max-steps", "20", "--points", "3"]


def test_plot_composition_at_equal_noise_multiplier(tmp_path, capsys):
    """DP-SGD semantics: the same noise σ on a sum clipped to C (--sensitivity) for every
    scheme; Poisson under add/remove with sensitivity C, WOR/WR/MUST under substitution with
    2C (privamp.applications.privacy's conventions), and the JSON says so per curve."""
    out = tmp_path / "comp.png"
    d = run_json([*COMPOSITION, "--sigma", "1", "--schemes", "poisson", "wor", "wr", "must-ow",
                  "--accountants", "pld", "--out", str(out)], capsys)
    assert_png(out)
    assert d["clip_norm"] == 1.0 and d["noise_multiplier"] == 1.0
    curves = {c["scheme"]: c for c in d["curves"]}
    assert list(curves) == ["poisson", "wor", "wr", "must-ow"]
    assert (curves["poisson"]["relation"], curves["poisson"]["base_relation"],
            curves["poisson"]["sensitivity"]) == ("add-remove", "add-remove", 1.0)
    for name in ("wor", "wr", "must-ow"):
        c = curves[name]
        assert (c["relation"], c["base_relation"], c["sensitivity"]) == \
            ("substitute", "substitute", 2.0)
    assert all(c["sigma"] == 1.0 for c in d["curves"])
    assert "Δ = 2" in curves["wor"]["label"] and "Δ = 1" in curves["poisson"]["label"]
    # the numbers are the accountant's for those mechanisms
    for name, scheme in [("poisson", Poisson(0.02)), ("wor", WithoutReplacement(200, 4)),
                         ("wr", WithReplacement(200, 4)), ("must-ow", MustOW(200, 100, 4))]:
        rel = curves[name]["base_relation"]
        mech = GaussianMechanism(1.0, sensitivity=clipped_sum_sensitivity(1.0, rel),
                                 relation=rel)
        eps = Accountant().add(mech, 20, scheme=scheme).epsilon(1e-5, lower=False).upper
        assert curves[name]["epsilon"][-1] == pytest.approx(eps, rel=1e-9)


def test_plot_composition_depends_on_the_noise_multiplier_only(tmp_path, capsys):
    """--sensitivity is the clip norm C: σ = 0.5 with C = 0.5 is the same run as σ = C = 1."""
    out = tmp_path / "comp.png"
    argv = [*COMPOSITION, "--schemes", "poisson", "wor", "--accountants", "pld", "rdp",
            "--out", str(out)]
    one = run_json([*argv, "--sigma", "1"], capsys)
    half = run_json([*argv, "--sigma", "0.5", "--sensitivity", "0.5"], capsys)
    assert half["noise_multiplier"] == 1.0 and half["clip_norm"] == 0.5
    for a, b in zip(one["curves"], half["curves"], strict=True):
        assert (a["scheme"], a["accountant"]) == (b["scheme"], b["accountant"])
        assert b["sensitivity"] == a["sensitivity"] / 2
        assert b["epsilon"] == pytest.approx(a["epsilon"], rel=1e-6)
    # --relation substitute puts Poisson under substitution too: sensitivity 2C
    sub = run_json([*argv, "--sigma", "1", "--relation", "substitute"], capsys)
    poisson = next(c for c in sub["curves"] if c["scheme"] == "poisson")
    assert poisson["relation"] == "substitute" and poisson["sensitivity"] == 2.0


@pytest.mark.parametrize(("argv", "option"), [
    (["plot", "aligned", "--mechanism", "gaussian", "--sigma", "1", "--n", "100", "--m", "10",
      "--eps-min", "2", "--eps-max", "1"], "--eps-max"),
    (["plot", "aligned", "--mechanism", "gaussian", "--sigma", "1", "--n", "100", "--m", "10",
      "--points", "1"], "--points"),
    (["plot", "aligned", "--mechanism", "gaussian", "--n", "100", "--m", "10"], "--sigma"),
    (["plot", "aligned", "--mechanism", "gaussian", "--sigma", "1", "--n", "100", "--m",
      "200"], "--m"),
    (["plot", "delta", "--mechanism", "gaussian", "--sigma", "1", "--steps", "0"], "--steps"),
    (["plot", "delta", "--mechanism", "gaussian", "--sigma", "1", "--steps", "10",
      "--eps-min", "-1"], "--eps-min"),
    (["plot", "delta", "--mechanism", "gaussian", "--sigma", "-1", "--steps", "10"],
     "--sigma"),
])
def test_plot_errors(tmp_path, capsys, argv, option):
    line = run_error([*argv, "--out", str(tmp_path / "x.png")], capsys)
    assert option in line
