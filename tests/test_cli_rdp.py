"""`privamp rdp` and `privamp plot rdp`: the JSON contract, the library's numbers, tables, plots,
and bad input (exit status 2, one line naming the option)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from cli_helpers import run_json
from privamp import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.cli import main
from privamp.rdp import (
    DEFAULT_ORDERS,
    poisson_gaussian_rdp,
    rdp_curve,
    subsampled_lower_bound,
    wbk_upper_bound,
    zhu_wang_upper_bound,
)

G = ["--mechanism", "gaussian", "--sigma", "2"]


def floats(values):
    return np.array([float(v) for v in values])


def test_rdp_json_contract_poisson(capsys):
    """{"orders", "rdp", "bound"} with the library's exact Poisson-Gaussian values."""
    d = run_json(["rdp", *G, "--sampling", "poisson", "--rate", "0.01", "--orders", "2", "8.5",
                  "32"], capsys)
    assert d["orders"] == [2.0, 8.5, 32.0]
    assert d["bound"] == "exact" and d["relation"] == "add-remove"
    expected = poisson_gaussian_rdp(2.0, 0.01, [2.0, 8.5, 32.0])
    assert d["rdp"] == expected.epsilons.tolist()
    assert d["rdp_lower"] == expected.lower_epsilons.tolist()
    assert d["sampling"] == "poisson" and d["sampling_rate"] == 0.01
    assert d["mechanism"]["name"] == "gaussian" and d["mechanism"]["sigma"] == 2.0


def test_rdp_wor_lower_and_zhu_wang(capsys):
    lap_s = LaplaceMechanism(0.5, relation="substitute")
    d = run_json(["rdp", "--mechanism", "laplace", "--scale", "0.5", "--sampling", "wor",
                  "--n", "100", "--m", "5", "--orders", "2", "30", "inf"], capsys)
    assert d["bound"] == "upper" and d["relation"] == "substitute" and d["method"] == "auto"
    assert d["rdp"][:2] == wbk_upper_bound(lap_s, 100, 5, [2.0, 30.0]).epsilons.tolist()
    assert d["orders"][-1] == "inf" and d["rdp"][-1] == pytest.approx(0.27721710894494067)
    d = run_json(["rdp", "--mechanism", "laplace", "--scale", "0.5", "--sampling", "wor",
                  "--n", "100", "--m", "5", "--method", "lower"], capsys)
    assert d["bound"] == "lower" and d["rdp_lower"] is None
    orders = DEFAULT_ORDERS[DEFAULT_ORDERS >= 2]
    assert floats(d["orders"]).tolist() == orders.tolist()
    assert floats(d["rdp"]).tolist() == subsampled_lower_bound(lap_s, 0.05, orders).epsilons \
        .tolist()
    d = run_json(["rdp", "--mechanism", "laplace", "--scale", "0.5", "--sampling", "poisson",
                  "--rate", "0.05", "--orders", "3", "10", "--method", "zhu-wang"], capsys)
    assert d["rdp"] == zhu_wang_upper_bound(LaplaceMechanism(0.5), 0.05, [3.0, 10.0]) \
        .epsilons.tolist()


def test_rdp_of_the_mechanism_itself(capsys):
    """--sampling none: the closed forms, default orders (200 and ∞), white-box groups."""
    d = run_json(["rdp", *G], capsys)
    assert len(d["orders"]) == DEFAULT_ORDERS.size and d["orders"][-1] == "inf"
    assert d["rdp"][-1] == "inf" and d["bound"] == "exact"
    d = run_json(["rdp", *G, "--group-size", "3", "--orders", "2"], capsys)
    assert d["rdp"] == rdp_curve(GaussianMechanism(2.0), [2.0], 3).epsilons.tolist()
    d = run_json(["rdp", "--mechanism", "randomized-response", "--rr-p", "0.8", "--orders", "2",
                  "3"], capsys)
    assert d["rdp"] == rdp_curve(RandomizedResponse(0.8), [2.0, 3.0]).epsilons.tolist()


def test_rdp_table_output(capsys):
    assert main(["rdp", *G, "--sampling", "poisson", "--rate", "0.01", "--orders", "2",
                 "32"]) == 0
    out = capsys.readouterr().out
    assert "exact Poisson Gaussian" in out and "relation: add-remove" in out
    rows = [line.split() for line in out.splitlines()[4:]]
    assert [r[0] for r in rows] == ["2", "32"]
    assert float(rows[0][1]) == pytest.approx(2.84021e-05, rel=1e-5)


@pytest.mark.parametrize("argv, needle", [
    ([*G, "--orders", "0.5", "2"], "--orders must be real number(s) in (1, inf]; got 0.5"),
    ([*G, "--orders", "1", "2"], "--orders must be"),
    ([*G, "--orders", "2", "nan"], "NaN"),
    ([*G, "--orders", "3", "2"], "--orders must be strictly increasing"),
    ([*G, "--orders"], "--orders"),
    ([*G, "--sampling", "poisson", "--rate", "1.5"], "--rate must be a real number in [0, 1]"),
    ([*G, "--sampling", "poisson"], "--rate is required"),
    ([*G, "--rate", "0.1"], "--rate does not apply to --sampling none"),
    ([*G, "--sampling", "wor", "--n", "10", "--m", "20"], "--m must be an integer in [0, n]"),
    ([*G, "--sampling", "wor", "--n", "10"], "--n and --m are required"),
    ([*G, "--sampling", "wor", "--n", "0", "--m", "0"], "--n must be"),
    ([*G, "--sampling", "wor", "--n", "ten", "--m", "2"], "--n"),
    ([*G, "--sampling", "poisson", "--rate", "0.1", "--method", "wbk"],
     "not for Poisson sampling"),
    ([*G, "--sampling", "wor", "--n", "10", "--m", "2", "--method", "zhu-wang"],
     "not for sampling without replacement"),
    ([*G, "--sampling", "wor", "--n", "10", "--m", "2", "--method", "exact"], "no exact RDP"),
    ([*G, "--sampling", "poisson", "--rate", "0.1", "--relation", "substitute"], "Theorem 14"),
    ([*G, "--sampling", "wor", "--n", "10", "--m", "2", "--relation", "add-remove"],
     "analysed here under 'substitute', not 'add-remove'"),
    ([*G, "--method", "wbk"], "--method wbk needs --sampling"),
    ([*G, "--sampling", "poisson", "--rate", "0.1", "--group-size", "2"], "--group-size"),
    ([*G, "--group-size", "0"], "--group-size must be"),
    (["--mechanism", "gaussian", "--sigma", "-1"], "--sigma must be"),
    ([*G, "--sampling", "wor", "--n", "10", "--m", "2", "--method", "lower", "--orders", "1.5"],
     "--orders must be orders >= 2"),
])
def test_rdp_bad_input_exits_2_with_one_line(argv, needle, capsys):
    status = main(["rdp", *argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err
    assert needle in lines[0]


def test_plot_rdp_writes_a_png(tmp_path, capsys):
    out = tmp_path / "rdp.png"
    d = run_json(["plot", "rdp", "--out", str(out), "--max-order", "64"], capsys)
    assert d["out"] == str(out) and d["sampling_rate"] == 0.001
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", "rdp", "--out", str(tmp_path / "b.svg"), "--rate", "0.01",
                 "--max-order", "16"]) == 0
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["--rate", "2"], "--rate must be"),
    (["--rate", "0"], "--rate must be"),
    (["--sigma", "0"], "--sigma must be"),
    (["--max-order", "1"], "--max-order must be"),
])
def test_plot_rdp_bad_input(argv, needle, tmp_path, capsys):
    status = main(["plot", "rdp", "--out", str(tmp_path / "x.png"), *argv])
    _, err = capsys.readouterr()
    assert status == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_python_dash_m():
    r = subprocess.run([sys.executable, "-m", "privamp", "rdp", *G, "--orders", "2", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    value = json.loads(r.stdout)["rdp"][0]
    assert value == pytest.approx(0.25, rel=1e-15) and value >= 0.25  # rounded up, never down
