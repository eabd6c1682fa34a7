"""Command line for amplification by post-processing: ``privamp mixing``, ``iteration``, ``ou``
and ``plot ou-mse`` — the JSON contract, the library's numbers, tables, and one-line errors with
exit status 2 that name the option."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from cli_helpers import distinct_colours, run_error, run_json
from privamp.amplification.diffusion import (
    OrnsteinUhlenbeckMechanism,
    ou_mse,
    ou_parameters,
)
from privamp.amplification.iteration import NoisySgdPrivacy
from privamp.amplification.mixing import MarkovKernel
from privamp.cli import main

KERNEL = [[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]]


@pytest.fixture
def kernel_csv(tmp_path):
    path = tmp_path / "kernel.csv"
    path.write_text("\n".join(",".join(str(v) for v in row) for row in KERNEL) + "\n")
    return path


# ---------------------------------------------------------------------------------------------
# privamp mixing
# ---------------------------------------------------------------------------------------------


def test_mixing_json_contract_and_values(kernel_csv, capsys):
    d = run_json(["mixing", "--kernel", str(kernel_csv), "--eps", "1", "--delta", "0.01"],
                 capsys)
    assert {"dobrushin", "doeblin", "ultra_mixing", "bounds"} <= set(d)
    k = MarkovKernel(KERNEL)
    assert d["dobrushin"] == k.dobrushin
    assert d["doeblin"] == k.doeblin
    assert d["ultra_mixing"] == k.ultra_mixing
    assert d["dobrushin"] == pytest.approx(0.3) and d["ultra_mixing"] == pytest.approx(0.6)
    expected = k.amplify(1.0, 0.01)
    assert set(d["bounds"]) == {"dobrushin", "eps_dobrushin", "doeblin", "ultra_mixing"}
    for key, (e, dl) in expected.items():
        assert d["bounds"][key] == {"eps": e, "delta": dl}
    assert d["bounds"]["ultra_mixing"]["eps"] == pytest.approx(math.log1p(0.6 * math.expm1(1)))
    assert d["doeblin_minorant"] == pytest.approx([2 / 7, 3 / 7, 2 / 7])
    assert d["kernel"] == {"path": str(kernel_csv), "inputs": 3, "outputs": 3}


def test_mixing_omits_ultra_mixing_when_supports_differ(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("0.5,0.5,0\n0.2,0.3,0.5\n")
    d = run_json(["mixing", "--kernel", str(path), "--eps", "0.5", "--delta", "0"], capsys)
    assert "ultra_mixing" not in d["bounds"] and d["absolutely_continuous"] is False
    assert d["ultra_mixing"] == 1.0
    assert d["eps_tilde"] == "inf"  # δ = 0: the D_∞ condition of footnote 3
    assert d["bounds"]["eps_dobrushin"]["delta"] == 0.0
    assert d["bounds"]["doeblin"]["delta"] > 0  # Doeblin can create δ' > 0 from δ = 0


def test_mixing_table(kernel_csv, capsys):
    assert main(["mixing", "--kernel", str(kernel_csv), "--eps", "1", "--delta", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "uniform mixing coefficients" in out and "Theorem 1" in out
    # eps' of the ultra-mixing bound is 0.70851307…: the text rounds bounds up
    for word in ("dobrushin", "doeblin", "ultra_mixing", "0.708514"):
        assert word in out


@pytest.mark.parametrize("content, fragment", [
    ("0.5,0.6\n0.5,0.5\n", "row-stochastic"),
    ("1.5,-0.5\n0.5,0.5\n", "--kernel must be"),
    ("0.5,0.5\n0.2,0.3,0.5\n", "--kernel must be"),
    ("0.5,nan\n0.5,0.5\n", "--kernel must be"),
])
def test_mixing_bad_kernels(tmp_path, capsys, content, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    line = run_error(["mixing", "--kernel", str(path), "--eps", "1", "--delta", "0.1"], capsys)
    assert fragment in line and "--kernel" in line


def test_mixing_bad_options(kernel_csv, tmp_path, capsys):
    line = run_error(["mixing", "--kernel", str(tmp_path / "none.csv"), "--eps", "1",
                      "--delta", "0.1"], capsys)
    assert "--kernel" in line and "readable" in line
    line = run_error(["mixing", "--kernel", str(kernel_csv), "--eps", "nan", "--delta", "0.1",
                      "--json"], capsys)
    assert "--eps" in line
    line = run_error(["mixing", "--kernel", str(kernel_csv), "--eps", "1", "--delta", "2"],
                     capsys)
    assert "--delta" in line and "[0, 1]" in line
    line = run_error(["mixing", "--kernel", str(kernel_csv), "--eps", "-1", "--delta", "0"],
                     capsys)
    assert "--eps" in line


# ---------------------------------------------------------------------------------------------
# privamp iteration
# ---------------------------------------------------------------------------------------------


ITER = ["iteration", "--n", "1000", "--step-size", "0.5", "--lipschitz", "1",
        "--smoothness", "1", "--strong-convexity", "0.1", "--sigma", "1"]


def test_iteration_json_values(capsys):
    d = run_json([*ITER, "--index", "1", "500", "999", "1000", "--delta", "1e-6"], capsys)
    p = NoisySgdPrivacy(1000, 0.5, 1.0, 1.0, 0.1, 1.0)
    assert [pt["index"] for pt in d["points"]] == [1, 500, 999, 1000]
    for pt in d["points"]:
        assert pt["rdp_slope"] == p.rdp_slope(pt["index"])
        assert pt["epsilon"] == p.epsilon(pt["index"], 1e-6)
    assert d["points"][-1]["rdp_slope"] == pytest.approx(2.0)
    assert d["relation"] == "substitute" and d["form"] == "paper"
    assert d["contraction"] == pytest.approx(math.sqrt(1 - 2 * 0.5 * 0.1 / 1.1))
    tight = run_json([*ITER, "--index", "999", "--form", "tight"], capsys)
    assert tight["points"][0]["rdp_slope"] <= d["points"][2]["rdp_slope"]


def test_iteration_default_indices_and_table(capsys):
    d = run_json(ITER, capsys)
    assert [pt["index"] for pt in d["points"]] == [1, 500, 999, 1000]
    assert main(ITER) == 0
    out = capsys.readouterr().out
    assert "Theorem 5" in out and "index" in out and "10.7676" in out


@pytest.mark.parametrize("change, option", [
    (["--step-size", "2"], "--step-size"),
    (["--strong-convexity", "3"], "--strong-convexity"),
    (["--lipschitz", "-1"], "--lipschitz"),
    (["--sigma", "0"], "--sigma"),
    (["--n", "0"], "--n"),
    (["--delta", "1"], "--delta"),
])
def test_iteration_errors(capsys, change, option):
    argv = list(ITER)
    i = argv.index(change[0]) if change[0] in argv else None
    if i is None:
        argv += change
    else:
        argv[i + 1] = change[1]
    line = run_error(argv, capsys)
    assert option in line


def test_iteration_bad_index_and_step_size_message(capsys):
    line = run_error([*ITER, "--index", "1001"], capsys)
    assert "--index" in line and "[1, 1000]" in line
    argv = list(ITER)
    argv[argv.index("--step-size") + 1] = "1.9"
    line = run_error(argv, capsys)
    assert "--step-size must be at most 2/(smoothness + strong_convexity)" in line
    line = run_error([*ITER, "--index", "x"], capsys)
    assert "--index" in line


# ---------------------------------------------------------------------------------------------
# privamp ou
# ---------------------------------------------------------------------------------------------


def test_ou_json_values(capsys):
    d = run_json(["ou", "--theta", "1", "--rho", "1", "--t", "1", "--sensitivity", "1",
                  "--dimension", "2", "--radius", "1.5", "--orders", "2", "8"], capsys)
    m = OrnsteinUhlenbeckMechanism(1.0, 1.0, 1.0, 1.0)
    assert d["intrinsic_sensitivity"] == m.intrinsic_sensitivity
    assert d["intrinsic_sensitivity"] == pytest.approx(0.0782588214, abs=1e-10)
    assert d["orders"] == [2.0, 8.0] and d["rdp"] == list(m.rdp([2.0, 8.0]).epsilons)
    assert d["bound"] == "upper"
    assert d["epsilon"] == m.profile().epsilon(1e-5)
    assert d["epsilon"] <= d["epsilon_rdp"]
    assert d["mse"]["ou"] == ou_mse(1.0, 1.0, 1.0, 2, 1.5)
    assert d["mse"]["ratio"] == pytest.approx(d["mse"]["ou"] / d["mse"]["gaussian"])
    assert d["theorem8"]["condition"] is True  # 1 · 1.5² ≤ 4 · 2 · 1
    assert d["equivalent_sigma"] == pytest.approx(math.sqrt(math.expm1(2.0)))


def test_ou_theorem8_choice(capsys):
    d = run_json(["ou", "--rdp-epsilon", "1", "--radius", "1"], capsys)
    p = ou_parameters(1.0, 1.0, 1.0, 1)
    assert d["theta"] == p.theta and d["rho"] == p.rho and d["t"] == 1.0
    assert d["intrinsic_sensitivity"] <= 1.0
    assert d["mse"]["ratio"] == pytest.approx(2 / 3)
    assert d["theorem8"]["ratio_bound"] == pytest.approx(2 / 3)
    assert d["mse"]["post_processed_gaussian"] == pytest.approx(1 / 3)


def test_ou_table(capsys):
    assert main(["ou", "--rdp-epsilon", "1", "--radius", "1"]) == 0
    out = capsys.readouterr().out
    assert "Ornstein-Uhlenbeck" in out and "Corollary 7" in out and "0.666667" in out


@pytest.mark.parametrize("argv, option", [
    (["ou", "--theta", "0", "--rho", "1"], "--theta"),
    (["ou", "--theta", "-1", "--rho", "1"], "--theta"),
    (["ou", "--theta", "1", "--rho", "0"], "--rho"),
    (["ou", "--theta", "1", "--rho", "1", "--t", "-1"], "--t"),
    (["ou", "--theta", "1", "--rho", "1", "--t", "nan"], "--t"),
    (["ou", "--theta", "1", "--rho", "1", "--dimension", "0"], "--dimension"),
    (["ou", "--theta", "1", "--rho", "1", "--radius", "-2"], "--radius"),
    (["ou", "--rdp-epsilon", "-1", "--radius", "1"], "--rdp-epsilon"),
    (["ou", "--rdp-epsilon", "1"], "--radius"),
    (["ou", "--theta", "1"], "--rho"),
    (["ou", "--rdp-epsilon", "1", "--radius", "1", "--theta", "2"], "--rdp-epsilon"),
])
def test_ou_errors(capsys, argv, option):
    line = run_error(argv, capsys)
    assert option in line


# ---------------------------------------------------------------------------------------------
# privamp plot ou-mse
# ---------------------------------------------------------------------------------------------


def test_plot_ou_mse_writes_a_png(tmp_path, capsys):
    matplotlib = pytest.importorskip("matplotlib")
    out = tmp_path / "ou.png"
    d = run_json(["plot", "ou-mse", "--out", str(out), "--rdp-epsilon", "0.2", "1",
                  "--dimension", "2"], capsys)
    assert d["out"] == str(out) and d["rdp_epsilon"] == [0.2, 1.0]
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    image = matplotlib.image.imread(str(out))
    assert distinct_colours(image) > 50


def test_plot_ou_mse_errors(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    line = run_error(["plot", "ou-mse", "--out", str(tmp_path / "x.png"), "--rdp-epsilon",
                      "0"], capsys)
    assert "--rdp-epsilon" in line
    line = run_error(["plot", "ou-mse", "--out", str(tmp_path / "x.png"), "--t-max", "-1"],
                     capsys)
    assert "--t-max" in line
    line = run_error(["plot", "ou-mse", "--out", "/nonexistent-dir/x.png"], capsys)
    assert "nonexistent" in line


def test_console_script_runs_mixing(kernel_csv):
    r = subprocess.run([sys.executable, "-m", "privamp", "mixing", "--kernel", str(kernel_csv),
                        "--eps", "1", "--delta", "0.01", "--json"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout)["doeblin"] == pytest.approx(0.3)
    r = subprocess.run([sys.executable, "-m", "privamp", "ou", "--theta", "0", "--rho", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--theta" in r.stderr and "Traceback" not in r.stderr
