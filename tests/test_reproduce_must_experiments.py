"""The MUST paper's utility experiments as ``privamp reproduce`` artifacts
(:mod:`privamp.reproduce.must2023`): Tables 5, 6 (RMSE), 7 and 8 (metrics), Figures 6
and S4.

Most tests read the quick run of ``privamp reproduce all`` (the ``quick`` fixture of
conftest.py). Printed values are compared with the runs at the paper's noise, within
Monte-Carlo tolerance; the tests below also show that these comparisons discriminate (privamp's
honest runs would not pass them), that the Adult metrics are the label leak's, and that the
data-reading artifacts read the Adult data shipped with privamp without ``--data`` (and refuse a
damaged copy).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import privamp.data
from privamp.cli import main
from privamp.errors import DataIntegrityError
from privamp.reproduce import ARTIFACTS, Result, run
from privamp.reproduce import paper_values as pv
from privamp.reproduce._output import compare_printed
from privamp.reproduce.must2023 import utility as me
from privamp.sampling import MustOW, WithoutReplacement

OK = ("agrees", "rounding", "monte-carlo")


def comparison(folder: Path, artifact_id: str) -> list[dict]:
    with (folder / f"{artifact_id}-comparison.csv").open() as fh:
        return list(csv.DictReader(fh))


def table(folder: Path, artifact_id: str) -> list[dict]:
    with (folder / f"{artifact_id}.csv").open() as fh:
        return list(csv.DictReader(fh))


def manifest(folder: Path, artifact_id: str) -> dict:
    return json.loads((folder / f"{artifact_id}.json").read_text())


def curves(folder: Path, artifact_id: str) -> dict[tuple[str, str], np.ndarray]:
    """(panel, curve) → y values of a figure's CSV."""
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in table(folder, artifact_id):
        out[(row["panel"], row["curve"])].append(float(row["y"]))
    return {k: np.array(v) for k, v in out.items()}


# ---------------------------------------------------------------------------------------------
# Table 5: the DP bootstrap
# ---------------------------------------------------------------------------------------------


def test_table5_reproduces_the_print_at_the_papers_noise(quick):
    folder, _ = quick
    cells = comparison(folder, "must-table5")
    assert len(cells) == 16 * 4  # 15 private rows + non-private, (mean, SD) of μ̂ and τ̂²
    assert all(c["status"] in OK for c in cells), [c for c in cells if c["status"] not in OK]
    record = manifest(folder, "must-table5")
    assert all(c["holds"] for c in record["checks"]) and "MUST-15" in record["errata"]
    valid = [r for r in table(folder, "must-table5") if r["noise"].startswith("σ valid")]
    assert len(valid) >= 7 and all(float(r["epsilon_whole_procedure"]) > 0.1 for r in valid)


def test_paper_sigma_is_table4s_and_the_bootstrap_comparison_discriminates():
    """The paper's protocol with Table 4's σ has the printed downward bias of MUST with
    b = 10 (E τ̂² ≈ 1 − 1/b) and passes the Table 5 comparison; an unbiased estimate (privamp's
    DP bootstrap, ≈ 1) would not."""
    n, m = 300, 30
    wor, ow = WithoutReplacement(n, m), MustOW(n, 10, m)
    sigma_wor = me.paper_sigma(wor, 0.1, 1 / n, 8 / n)
    assert compare_printed(sigma_wor, pv.MUST_TABLE4["WOR"][0])[0] == "agrees"
    sigmas = {s: (me.paper_sigma(s, 0.1, 1 / n, 8 / n), me.paper_sigma(s, 0.1, 1 / n, 64 / n))
              for s in (wor, ow)}
    assert compare_printed(sigmas[ow][1], pv.MUST_TABLE4[("MUST.OW", 10)][1])[0] == "agrees"
    rng = np.random.default_rng(7)
    reps = 40
    est = {s: [] for s in sigmas}
    for _ in range(reps):
        x = rng.normal(size=n)
        for s, (s_mu, s_tau) in sigmas.items():
            est[s].append(me.paper_bootstrap(x, s, 500, s_mu, s_tau, rng)[1])
    tau_ow, tau_wor = np.array(est[ow]), np.array(est[wor])
    assert abs(tau_ow.mean() - 0.9) < 0.035 and abs(tau_wor.mean() - 1.0) < 0.04
    printed = pv.MUST_TABLE5[("MUST.OW", 10)]
    tol = me._mc_tolerance(tau_ow.std(ddof=1), reps, float(printed[3]), 200, "mean")
    assert compare_printed(tau_ow.mean(), printed[2], tolerance=tol)[0] in OK
    assert compare_printed(1.0, printed[2], tolerance=tol)[0] == "disagrees"


# ---------------------------------------------------------------------------------------------
# Tables 6 and 7, Figure 6: DP-SGD linear regression
# ---------------------------------------------------------------------------------------------


def test_table6_rmse_reproduces_the_print_and_valid_noise_costs_utility(quick):
    folder, _ = quick
    cells = comparison(folder, "must-table6-rmse")
    assert len(cells) == 5 * 2 * 2 + 2
    assert all(c["status"] in OK for c in cells), [c for c in cells if c["status"] not in OK]
    rows = table(folder, "must-table6-rmse")
    for r in rows:  # the runs "at the paper's σ" really add Table 6's σ
        if r["noise"] == "paper's σ":
            printed = pv.MUST_TABLE6[r["scheme"]][float(r["eps_prime"])][0]
            sigma = float(r["sigma_averaged_gradient"])
            assert compare_printed(sigma, printed)[0] == "agrees", (r, printed)
    valid = {(r["scheme"], float(r["eps_prime"])): float(r["rmse_mean"]) for r in rows
             if r["noise"] == "σ valid for ε'"}
    assert max(valid[(s, 0.001)] for s in me.DPSGD_SCHEMES.values()) > 1.3
    assert max(valid[(s, 0.01)] for s in me.DPSGD_SCHEMES.values()) < 1.1
    record = manifest(folder, "must-table6-rmse")
    holds = [c["holds"] for c in record["checks"]]
    assert holds == [True, True, True, False] and "MUST-U1" in record["errata"]


def test_table7_reproduces_the_print(quick):
    folder, _ = quick
    cells = comparison(folder, "must-table7")
    assert len(cells) == (5 * 2 + 1) * 6
    assert all(c["status"] in OK for c in cells), [c for c in cells if c["status"] not in OK]
    rows = {(r["scheme"], r["eps_prime"], r["noise"]): r for r in table(folder, "must-table7")}
    for s in me.DPSGD_SCHEMES.values():  # valid noise at ε' = 0.001: much worse coefficients
        paper, valid = rows[(s, "0.001", "paper's σ")], rows[(s, "0.001", "σ valid for ε'")]
        assert float(valid["rmse_b1"]) > 1.5 * float(paper["rmse_b1"]), s


def test_figure6_loss_curves_decrease(quick):
    folder, _ = quick
    ys = curves(folder, "must-fig6")
    panels = sorted({p for p, _ in ys})
    assert len(panels) == 4 and len(ys) == 4 * 6
    for (panel, curve), y in ys.items():
        assert y.size == me.LIN_T + 1
        if not panel.startswith("(d)"):  # (d): σ valid for ε' = 0.001, it need not converge
            assert np.mean(y[-16:]) < y[0] / 4, (panel, curve)
    first = {y[0] for y in ys.values()}
    assert max(first) - min(first) < 1e-12  # one data set for every curve


# ---------------------------------------------------------------------------------------------
# Table 8, Figure S4: DP-SGD logistic regression on Adult
# ---------------------------------------------------------------------------------------------


def test_table8_metrics_honest_accuracy_and_the_label_leak(quick):
    folder, _ = quick
    cells = comparison(folder, "must-table8-metrics")
    assert len(cells) == 6 * 6
    accuracy = [c for c in cells if c["quantity"] == "accuracy"]
    assert all(c["status"] == "erratum" and c["note"] == "MUST-14" for c in accuracy)
    assert all(0.70 <= float(c["ours"]) <= 0.85 for c in accuracy)
    base = next(c for c in accuracy if c["row"] == "non-private Poisson")
    assert 0.755 <= float(base["ours"]) <= 0.775  # a leak-free logistic regression: ≈ 0.764
    rows = table(folder, "must-table8-metrics")
    leak = [r for r in rows if r["setting"].startswith("the authors' setting")]
    assert len(leak) == 6 and all(float(r["accuracy"]) > 0.97 for r in leak)
    checks = manifest(folder, "must-table8-metrics")["checks"]
    assert all(c["holds"] for c in checks) and "reproduces the printed" in checks[0]["claim"]


def test_figure_s4_loss_curves_decrease(quick):
    folder, _ = quick
    ys = curves(folder, "must-figS4")
    assert len({p for p, _ in ys}) == 3 and len(ys) == 3 * 6
    for key, y in ys.items():
        assert y.size == 101 and y[-1] < y[0] / 3, key
    # the label leak is what makes the paper's loss low
    final = {p[:3]: y[-1] for (p, c), y in ys.items() if c == "Poisson (non-private)"}
    assert final["(a)"] < 0.3 < 0.45 < final["(b)"]


# ---------------------------------------------------------------------------------------------
# --data: the Adult artifacts read the packaged copy without it, never a download
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fake_must_builds(monkeypatch):
    """Every MUST artifact's build replaced by a trivial one (the runner logic only)."""

    def build(ctx):
        return Result(shows="test", parameters={"data": str(ctx.data)})

    for key in ARTIFACTS:
        art = ARTIFACTS[key]
        if art.paper == "must2023":
            monkeypatch.setitem(ARTIFACTS._items, key, dataclasses.replace(art, build=build))


def test_paper_run_without_data_builds_the_adult_artifacts(tmp_path, fake_must_builds, capsys):
    """Without ``--data`` nothing is skipped or refused: the Adult artifacts get no data file
    (``ctx.data is None``: their experiments read the packaged copy)."""
    records = run(["must2023"], tmp_path)
    assert not [r for r in records if "skipped" in r]
    assert {r["id"] for r in records} >= {"must-table8-metrics", "must-figS4"}
    assert all(r["parameters"]["data"] == "None" for r in records)
    assert (tmp_path / "must-figS4.json").exists() and (tmp_path / "must-table5.json").exists()
    report = (tmp_path / "REPRODUCTION.md").read_text()
    assert "### must-figS4" in report and "Not built here" not in report
    assert main(["reproduce", "must-table8-metrics", "--out", str(tmp_path / "cli"),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["id"] for a in data["artifacts"]] == ["must-table8-metrics"]
    assert "skipped" not in data["artifacts"][0]
    assert main(["reproduce", "must2023", "--out", str(tmp_path / "cli")]) == 0
    out = capsys.readouterr().out
    assert "skipped" not in out and f"wrote {len(records)} artifact(s)" in out


def test_a_damaged_packaged_copy_is_refused_before_anything_is_built(tmp_path, monkeypatch,
                                                                     fake_must_builds, capsys):
    import gzip

    damaged = tmp_path / "adult_processed.csv.gz"
    text = privamp.data.adult_bytes().replace(b"\n25,1,226802,", b"\n26,1,226802,", 1)
    damaged.write_bytes(gzip.compress(text, mtime=0))
    monkeypatch.setattr(privamp.data, "adult_path", lambda: damaged)
    with pytest.raises(DataIntegrityError, match="adult_processed.csv.gz") as info:
        run(["must-figS4"], tmp_path / "out")
    assert info.value.path == str(damaged) and "sha256" in str(info.value)
    assert not (tmp_path / "out").exists()
    assert main(["reproduce", "must-table8-metrics", "--out", str(tmp_path / "cli")]) == 2
    err = capsys.readouterr().err
    assert str(damaged) in err and "damaged" in err and not (tmp_path / "cli").exists()
    # a copy given by --data is the user's: read as it is
    plain = tmp_path / "adult.csv"
    plain.write_bytes(text)
    assert run(["must-figS4"], tmp_path / "given", data=plain)[0]["parameters"]["data"] == str(
        plain)


def test_data_reaches_the_artifacts(tmp_path, fake_must_builds):
    from privamp.reproduce.must2023.experiments import ADULT_COLUMNS, ADULT_LABEL

    data = tmp_path / "adult.csv"  # a valid file: run() reads --data before building anything
    columns = [*ADULT_COLUMNS, ADULT_LABEL]
    data.write_text(",".join(columns) + "\n"
                    + "".join(",".join(["1"] * (len(columns) - 1) + [str(i % 2)]) + "\n"
                              for i in range(4)))
    records = run(["must-figS4", "must-table5"], tmp_path / "out", data=data)
    assert [r["id"] for r in records] == ["must-figS4", "must-table5"]
    assert all("skipped" not in r and r["parameters"]["data"] == str(data) for r in records)
    assert math.isfinite(records[0]["seconds"])
