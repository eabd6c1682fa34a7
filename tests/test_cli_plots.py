"""``privamp plot aligned`` and ``privamp plot delta``: the JSON contract, the library's
numbers behind the plots, the image files, and one-line errors with exit status 2."""

from __future__ import annotations

import numpy as np
import pytest

from cli_helpers import run_error, run_json
from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.amplification.subsampling import amplify
from privamp.amplification.tightness import aligned_profile
from privamp.cli import main
from privamp.sampling import MustWW, Poisson

matplotlib = pytest.importorskip("matplotlib")


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    image = matplotlib.image.imread(str(path))
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 50


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
