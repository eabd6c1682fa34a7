"""The command-line interface: contract shapes, values, tables, plots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_helpers import distinct_colours, run_json
from conftest import SHARED
from privamp import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.cli import main


def test_profile_json_contract_and_values(capsys):
    """{"eta", "points": [{"eps", "delta", "eps_amplified", "delta_amplified"}]} with the
    library's numbers; with no sampling η = 1 and the amplified values equal the base ones."""
    d = run_json(["profile", "--mechanism", "gaussian", "--sigma", "2", "--sampling", "none",
                  "--eps", "0.5", "1", "3"], capsys)
    assert d["eta"] == 1.0
    assert d["relation"] == "add-remove" and d["sampling"] == {"scheme": "none"}
    expected = GaussianMechanism(2.0).profile().delta([0.5, 1.0, 3.0])
    assert [p["eps"] for p in d["points"]] == [0.5, 1.0, 3.0]
    for p, e in zip(d["points"], expected, strict=True):
        assert {"eps", "delta", "eps_amplified", "delta_amplified", "log_delta"} <= set(p)
        assert p["delta"] == e
        assert p["eps_amplified"] == p["eps"] and p["delta_amplified"] == p["delta"]


def test_profile_options_reach_the_library(capsys):
    """Laplace scale/sensitivity, RR parameters, relation and group size are honoured."""
    d = run_json(["profile", "--mechanism", "laplace", "--scale", "0.5", "--sensitivity", "2",
                  "--relation", "substitute", "--eps", "1"], capsys)
    assert d["relation"] == "substitute"
    assert d["points"][0]["delta"] == LaplaceMechanism(0.5, 2.0).profile().delta(1.0)
    d = run_json(["profile", "--mechanism", "randomized-response", "--rr-epsilon", "1",
                  "--eps", "0", "2"], capsys)
    assert d["points"][1]["delta"] == 0.0
    assert d["points"][0]["delta"] == RandomizedResponse.from_epsilon(1.0).profile().delta(0.0)
    d = run_json(["profile", "--mechanism", "randomized-response", "--rr-p", "0.3",
                  "--eps", "0"], capsys)
    assert d["points"][0]["delta"] == pytest.approx(0.4, rel=1e-12)  # erratum E1
    d = run_json(["profile", "--mechanism", "gaussian", "--sigma", "1", "--group-size", "3",
                  "--group-privacy", "black-box", "--eps", "1"], capsys)
    black = GaussianMechanism(1.0).profile().group(3, "black-box").delta(1.0)
    assert d["group_size"] == 3 and d["points"][0]["delta"] == black


def test_profile_json_represents_tiny_and_infinite_values(capsys):
    """Underflowing δ keeps its logarithm; infinite ε is the string "inf" (strict JSON)."""
    d = run_json(["profile", "--mechanism", "gaussian", "--sigma", "4", "--eps", "60", "inf"],
                 capsys)
    tiny, at_inf = d["points"]
    assert tiny["delta"] == 0.0 and tiny["log_delta"] < -28000
    assert at_inf["eps"] == "inf" and at_inf["log_delta"] == "-inf"


def test_profile_table_output(capsys):
    """Without --json: a header naming the mechanism and relation and one row per ε."""
    assert main(["profile", "--mechanism", "laplace", "--scale", "1", "--eps", "0", "0.5",
                 "2"]) == 0
    out = capsys.readouterr().out
    assert "laplace mechanism" in out and "relation: add-remove" in out
    rows = [line.split() for line in out.splitlines()[4:]]
    assert [r[0] for r in rows] == ["0", "0.5", "2"]
    assert float(rows[1][1]) == pytest.approx(0.221199, rel=1e-5)
    assert rows[2][1] == "0"


def test_python_dash_m_and_console_script():
    """`python -m privamp` and the installed `privamp` script both work."""
    r = subprocess.run([sys.executable, "-m", "privamp", "--version"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("privamp ")
    script = Path(sys.executable).with_name("privamp")
    if script.exists():
        r = subprocess.run([str(script), "profile", "--mechanism", "gaussian", "--sigma", "1",
                            "--eps", "1", "--json"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0
        assert json.loads(r.stdout)["points"][0]["delta"] == pytest.approx(0.1269367375066,
                                                                             rel=1e-10)


def test_plot_profile_writes_a_real_png(tmp_path, capsys):
    """`privamp plot profile` writes a non-trivial PNG."""
    matplotlib = pytest.importorskip("matplotlib")
    out = tmp_path / "profile.png"
    d = run_json(["plot", "profile", "--mechanism", "gaussian", "--sigma", "1", "--eps-max",
                  "6", "--out", str(out)], capsys)
    assert d["out"] == str(out)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    image = matplotlib.image.imread(str(out))
    assert image.shape[0] > 400 and image.shape[1] > 600
    # not blank: many distinct colours
    assert distinct_colours(image) > 50


def test_plot_to_unwritable_path_is_a_clean_error(capsys):
    """An unwritable output path is exit status 2 with one line, not a traceback."""
    pytest.importorskip("matplotlib")
    status = main(["plot", "profile", "--mechanism", "gaussian", "--sigma", "1", "--out",
                   "/nonexistent-dir/x.png"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


CHECKER = SHARED / "tools" / "check-cli-contract"


@pytest.mark.skipif(not CHECKER.exists(), reason="shared CLI contract checker not available")
def test_shared_cli_contract_checker_passes():
    """The shared checker reports 0 contract failures for the commands that exist."""
    script = Path(sys.executable).with_name("privamp")
    env = dict(os.environ)
    r = subprocess.run([sys.executable, str(CHECKER), str(script)], capture_output=True,
                       text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 contract failure(s)" in r.stdout


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_text_output_rounds_bounds_to_the_safe_side(x):
    from privamp.cli._common import num, num_down, num_up

    up, down = num_up(x), num_down(x)
    assert float(up) >= x and float(down) <= x
    # at most six significant digits, like num(), and one step of the sixth digit at most away
    for text in (up, down):
        digits = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        assert len(digits) <= 6, text
    for text in (up, down):  # (beyond the largest float, "1.7977e+308" reads as ±inf: safe)
        if np.isfinite(float(text)):
            assert abs(float(text) - float(num(x))) <= 1.0001e-5 * abs(x) + 5e-324


def test_epsilon_text_shows_the_upper_end_rounded_up(capsys):
    # ε = 25.573337… must not print as 25.5733 (below the certified bound)
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling", "poisson",
                 "--rate", "0.01", "--steps", "100000", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "25.5734" in out and "25.5518" in out
