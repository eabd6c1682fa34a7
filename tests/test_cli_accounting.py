"""``privamp epsilon | delta | calibrate`` and ``privamp plot composition``."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_error, run_json
from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.cli import main
from privamp.sampling import MustWW, Poisson

G = ["--mechanism", "gaussian", "--sigma", "1"]
P = ["--sampling", "poisson", "--rate", "0.01"]


def test_epsilon_contract_and_values(capsys):
    d = run_json(["epsilon", *G, *P, "--steps", "1000", "--delta", "1e-5"], capsys)
    assert {"epsilon", "epsilon_lower", "accountant"} <= set(d)
    assert d["accountant"] == "pld" and d["relation"] == "add-remove"
    assert d["epsilon_lower"] <= 1.82824 <= d["epsilon"] + 1e-4
    ref = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.01)).epsilon(1e-5)
    assert d["epsilon"] == ref.upper and d["epsilon_lower"] == ref.lower
    assert d["details"]["orientation"] == "remove"


def test_epsilon_rdp_backend_has_no_lower_end(capsys):
    d = run_json(["epsilon", *G, *P, "--steps", "1000", "--delta", "1e-5", "--accountant",
                  "rdp"], capsys)
    assert d["epsilon_lower"] is None and abs(d["epsilon"] - 2.101) < 1e-3


def test_delta_contract_and_values(capsys):
    d = run_json(["delta", "--mechanism", "laplace", "--scale", "2", "--sampling", "must-ww",
                  "--n", "100", "--b", "50", "--m", "5", "--steps", "20", "--epsilon", "0.5"],
                 capsys)
    assert {"delta", "delta_lower"} <= set(d) and d["relation"] == "substitute"
    ref = Accountant().add(
        __import__("privamp").LaplaceMechanism(2.0, relation="substitute"), 20,
        scheme=MustWW(100, 50, 5)).delta(0.5)
    assert d["delta"] == ref.upper and d["delta_lower"] == ref.lower
    assert 0 <= d["delta_lower"] <= d["delta"] <= 1


def test_calibrate_contract(capsys):
    d = run_json(["calibrate", "--mechanism", "gaussian", "--target-epsilon", "2", "--delta",
                  "1e-5", *P, "--steps", "100"], capsys)
    assert {"sigma", "epsilon"} <= set(d) and d["parameter"] == "sigma"
    assert d["epsilon"] <= 2.0
    steps = run_json(["calibrate", *G, "--target-epsilon", "1", "--delta", "1e-5", *P,
                      "--calibrate", "steps"], capsys)
    assert steps["parameter"] == "steps" and isinstance(steps["steps"], int)


def test_text_output(capsys):
    assert main(["epsilon", *G, *P, "--steps", "100", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "epsilon (certified upper)" in out and "100 steps of the gaussian" in out
    assert main(["calibrate", "--mechanism", "gaussian", "--target-epsilon", "1", "--delta",
                 "1e-5", "--steps", "3", "--calibrate", "sigma"]) == 0
    assert "Calibrated sigma" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "needle"), [
    (["epsilon", *G, *P, "--steps", "0", "--delta", "1e-5"], "--steps"),
    (["epsilon", *G, *P, "--steps", "10", "--delta", "2"], "--delta"),
    (["epsilon", *G, *P, "--steps", "10", "--delta", "0"], "--delta"),
    (["delta", *G, *P, "--steps", "10", "--epsilon", "-1"], "--epsilon"),
    (["epsilon", *G, *P, "--steps", "10", "--delta", "1e-5", "--group-size", "3",
      "--accountant", "rdp"], "group_size=3"),
    (["calibrate", "--mechanism", "gaussian", *P, "--target-epsilon", "1", "--delta",
      "1e-5", "--steps", "3", "--group-size", "3", "--accountant", "rdp"], "--group-size"),
    (["calibrate", *G, "--target-epsilon", "0.01", "--delta", "1e-5", "--calibrate", "steps"],
     "--target-epsilon"),
    (["calibrate", "--mechanism", "laplace", "--target-epsilon", "1", "--delta", "1e-5",
      "--steps", "3", "--calibrate", "sigma"], "--mechanism gaussian"),
    (["calibrate", *G, "--target-epsilon", "1", "--delta", "1e-5", "--steps", "3",
      "--calibrate", "m"], "must"),
])
def test_bad_input_exits_2_with_one_line(argv, needle, capsys):
    line = run_error(argv, capsys)
    assert needle in line


def test_plot_composition(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "comp.png"
    d = run_json(["plot", "composition", *G, "--n", "200", "--m", "4", "--max-steps", "20",
                  "--points", "3", "--schemes", "poisson", "wor", "--accountants", "pld", "rdp",
                  "--out", str(out)], capsys)
    assert out.exists() and out.stat().st_size > 1000
    names = {(c["scheme"], c["accountant"]) for c in d["curves"]}
    assert names == {("poisson", "pld"), ("poisson", "rdp"), ("wor", "pld"), ("wor", "rdp")}
    for c in d["curves"]:
        assert all(b >= a - 1e-9 for a, b in zip(c["epsilon"], c["epsilon"][1:], strict=False))
    # the RDP curves are never below the PLD ones
    by = {(c["scheme"], c["accountant"]): c["epsilon"] for c in d["curves"]}
    for s in ("poisson", "wor"):
        assert all(r >= p - 1e-9 for p, r in zip(by[(s, "pld")], by[(s, "rdp")], strict=True))


def test_progress_on_a_terminal_only(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    assert main(["epsilon", *G, *P, "--steps", "100", "--delta", "1e-5"]) == 0
    err = capsys.readouterr().err
    assert "computing epsilon" in err
    assert main(["epsilon", *G, *P, "--steps", "100", "--delta", "1e-5", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["epsilon"] > 0


def test_absurd_grid_is_refused_quickly(capsys):
    line = run_error(["epsilon", *G, *P, "--steps", "100000", "--delta", "1e-5",
                      "--grid-step", "1e-9"], capsys)
    assert "grid points" in line
