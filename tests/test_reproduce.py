"""``privamp reproduce``: every table and figure of the five papers, regenerated.

One quick run of ``privamp reproduce all --quick`` (the CI version, ~1.5 minutes; the Adult data
of MUST Table 8 and Figure S4 is the copy shipped with privamp;
the ``quick`` fixture in conftest.py, shared with test_reproduce_must_experiments.py) feeds the
tests:
each figure file is produced and non-trivial, each table's numbers are checked against the
paper's printed values cell by cell (every disagreement is a documented erratum), every paper
claim our numbers contradict is reported as an erratum, and REPRODUCTION.md summarises it all.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import distinct_colours, run_error, run_json
from privamp.cli import main
from privamp.reproduce import ARTIFACTS, PAPERS, resolve, run
from privamp.reproduce._output import compare_printed, printed_unit
from privamp.reproduce.paper_values import ERRATA
from privamp.reproduce.report import PENDING

matplotlib = pytest.importorskip("matplotlib")
pytest.importorskip("matplotlib.image")  # matplotlib.image.imread (not imported by matplotlib)

EXPECTED = {
    "bbg-table1", "bbg-fig1a", "bbg-fig1b", "bbg-fig1c", "bbg-fig1d", "bbg-fig1e",
    "wang-fig-rdp", "wang-fig-composition", "wang-fig-chi",
    "bbgg-fig1", "bbgg-fig2", "bbgg-thm8", "bbgg-iteration",
    "must-table1", "must-table2", "must-table3", "must-table4", "must-table6", "must-table8",
    "must-table9", "must-table10", "must-fig3", "must-fig4", "must-fig5", "must-figS1",
    "must-figS2", "must-figS3",
    # the utility experiments (reproduce/must2023/experiments.py); the last two read the Adult data
    # (the copy shipped with privamp, or --data)
    "must-table5", "must-table6-rmse", "must-table7", "must-fig6",
    "must-table8-metrics", "must-figS4",
}
NEEDS_DATA = {"must-table8-metrics", "must-figS4"}


def comparison(folder: Path, artifact_id: str) -> list[dict]:
    with (folder / f"{artifact_id}-comparison.csv").open() as fh:
        return list(csv.DictReader(fh))


def manifest(folder: Path, artifact_id: str) -> dict:
    return json.loads((folder / f"{artifact_id}.json").read_text())


# ---------------------------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------------------------


def test_registry_has_every_table_and_figure():
    assert set(ARTIFACTS) == EXPECTED
    for key in ARTIFACTS:
        art = ARTIFACTS[key]
        assert art.id == key and art.paper in PAPERS and art.kind in ("table", "figure")
        assert art.title and art.label


def test_nothing_is_pending_and_only_the_adult_artifacts_read_data():
    """Every table and figure announced is registered (PENDING is empty), and exactly the two
    Adult artifacts declare a data file."""
    assert not [aid for aid, *_ in PENDING if aid not in ARTIFACTS]
    assert {k for k in ARTIFACTS if ARTIFACTS[k].needs} == NEEDS_DATA
    assert all("adult_processed.csv" in ARTIFACTS[k].needs for k in NEEDS_DATA)


def test_resolve_names():
    assert resolve("all") == list(ARTIFACTS)
    assert set(resolve("bbg2018")) == {k for k in EXPECTED if k.startswith("bbg-")}
    assert resolve("must-table3") == ["must-table3"]
    assert resolve("must-table5") == ["must-table5"]
    with pytest.raises(Exception, match="artifact id"):
        resolve("must-table11")


# ---------------------------------------------------------------------------------------------
# the quick run: files, figures, the JSON contract
# ---------------------------------------------------------------------------------------------


def test_quick_run_json_lists_every_artifact(quick):
    folder, data = quick
    assert data["quick"] is True and data["report"].endswith("REPRODUCTION.md")
    assert [a["id"] for a in data["artifacts"]] == list(ARTIFACTS)
    for a in data["artifacts"]:
        assert "skipped" not in a  # the Adult artifacts read the packaged copy
        for name in a["files"]:
            assert (folder / name).exists(), name


@pytest.mark.parametrize("artifact_id", sorted(EXPECTED))
def test_artifact_files_are_produced_and_not_trivial(quick, artifact_id):
    folder, _ = quick
    png = folder / f"{artifact_id}.png"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000
    image = matplotlib.image.imread(str(png))
    h, w = image.shape[:2]
    assert 500 <= w <= 3000 and 300 <= h <= 3000  # legible at a normal size
    assert distinct_colours(image[..., :3]) > 50  # drawn, not blank
    rows = list(csv.reader((folder / f"{artifact_id}.csv").open()))
    assert len(rows) >= 5
    numbers = [float(v) for r in rows[1:] for v in r
               if v.replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).isdigit()]
    assert numbers and all(np.isfinite(numbers))
    record = manifest(folder, artifact_id)
    assert record["shows"] and record["parameters"] and record["files"]


def test_every_contradicted_claim_is_an_erratum(quick):
    """A check that does not hold is a claim of the paper our numbers contradict: the
    artifact must report an erratum, and every erratum key is documented."""
    folder, _ = quick
    for artifact_id in ARTIFACTS:
        record = manifest(folder, artifact_id)
        assert all(key in ERRATA for key in record["errata"])
        if any(not c["holds"] for c in record["checks"]):
            assert record["errata"], artifact_id


def test_no_printed_value_disagrees_without_an_erratum(quick):
    folder, _ = quick
    for artifact_id in ARTIFACTS:
        path = folder / f"{artifact_id}-comparison.csv"
        if path.exists():
            for cell in comparison(folder, artifact_id):
                assert cell["status"] != "disagrees", (artifact_id, cell)
                if cell["status"] == "erratum":
                    assert cell["note"].split(";")[0].strip() in ERRATA or any(
                        key in cell["note"] for key in ERRATA), cell


# ---------------------------------------------------------------------------------------------
# tables: the paper's printed values against ours
# ---------------------------------------------------------------------------------------------


def test_must_table3_agrees_except_the_misprinted_row(quick):
    """240 printed values; the only differences are the six δ' of the Gaussian Δ/σ = 1
    MUST.WW row, printed as a copy of the Laplace row (the values themselves are checked to 6
    digits in test_must_table3.py)."""
    folder, _ = quick
    cells = comparison(folder, "must-table3")
    assert len(cells) == 240
    errata = [c for c in cells if c["status"] != "agrees"]
    assert len(errata) == 6
    assert all(c["status"] == "erratum" and c["note"] == "MUST-8" for c in errata)
    assert all(c["row"] == "Gaussian Δ/σ=1: ∘MUST.WW" and c["quantity"] == "δ'" for c in errata)


@pytest.mark.parametrize("artifact_id", ["bbg-table1", "must-table2", "must-table4",
                                         "must-table6"])
def test_tables_that_reproduce_fully(quick, artifact_id):
    folder, _ = quick
    cells = comparison(folder, artifact_id)
    assert cells and all(c["status"] == "agrees" for c in cells)


def test_must_table4_values(quick):
    folder, _ = quick
    cells = {(c["column"], c["quantity"]): c for c in comparison(folder, "must-table4")}
    assert len(cells) == 13 * 3
    assert float(cells[("WR", "δ'")]["ours"]) == pytest.approx(5.728e-5, rel=2e-4)
    assert float(cells[("MUST.OW, b = 10", "σ (τ²)")]["ours"]) == pytest.approx(0.504, abs=5e-4)


def test_must_table8_sigma_reproduces_and_delta_c_does_not(quick):
    folder, _ = quick
    cells = comparison(folder, "must-table8")
    sigma = [c for c in cells if c["quantity"] == "σ·m"]
    assert len(sigma) == 5 and all(c["status"] == "agrees" for c in sigma)
    upper = [c for c in cells if c["quantity"] == "δ_c,U"]
    assert all(c["status"] == "erratum" and c["note"] == "MUST-18" for c in upper)
    # the brackets are far above the printed upper bounds (and above 1/n)
    assert all(float(c["ours"]) > 10 * float(c["paper"]) for c in upper)
    # the mixture pair dominates for Poisson and WOR only: WR and MUST are estimates, in the
    # CSV, the JSON and the report's text
    delta_cells = [c for c in cells if c["quantity"] in ("δ_c,L", "δ_c,U")]
    assert {c["column"]: c["certified"] for c in delta_cells} == {
        "Poisson": "true", "WOR": "true", "WR": "false", "MUST.OW": "false", "MUST.WW": "false"}
    assert all(c["certified"] == "" for c in sigma)
    record = manifest(folder, "must-table8")
    flags = {(d["column"], d["quantity"]): d.get("certified") for d in record["differences"]}
    assert flags[("WR", "δ_c,U")] is False and flags[("Poisson", "δ_c,U")] is True
    assert [v["certified"] for v in record["values"]] == [True, True, False, False, False]
    rows = {r["scheme"]: r["certified"] for r in csv.DictReader(
        (folder / "must-table8.csv").open())}
    assert rows == {"Poisson": "True", "WOR": "True", "WR": "False", "MUST.OW": "False",
                    "MUST.WW": "False"}
    report = (folder / "REPRODUCTION.md").read_text()
    for scheme in ("WR", "MUST.OW", "MUST.WW"):
        assert any(line.startswith(f"| Table 8 | {scheme} | δ_c,U |")
                   and "(estimate)" in line for line in report.splitlines())


def test_must_figure_s2_labels_the_mixture_pair_numbers_estimates(quick):
    folder, _ = quick
    record = manifest(folder, "must-figS2")
    fa = [v for v in record["values"] if "mixture pair" in v["what"]]
    ours = [v for v in record["values"] if "mixture pair" not in v["what"]]
    assert fa and all(v["certified"] is False for v in fa)
    assert ours and all(v["certified"] is True for v in ours)
    assert all("certified" not in c["detail"] or "(estimate)" in c["detail"]
               for c in record["checks"] if "mixture" in c["claim"] or "MUST.WW" in c["claim"])
    rows = list(csv.DictReader((folder / "must-figS2-values.csv").open()))
    assert {r["certified"] for r in rows if r["method"].startswith("Fourier")} == {"False"}
    assert "Estimates, not certified" in (folder / "REPRODUCTION.md").read_text()


def test_must_table9_monte_carlo_and_swapped_cells(quick):
    folder, _ = quick
    cells = comparison(folder, "must-table9")
    assert len(cells) == 3 * 3 * 6
    errata = [c for c in cells if c["status"] == "erratum"]
    assert {(c["row"], c["column"], c["quantity"]) for c in errata} == {
        ("experiment 2", s, q) for s in ("MUST.OW", "MUST.WW") for q in ("min", "mean")}
    means = {(c["row"], c["column"]): float(c["ours"]) for c in cells if c["quantity"] == "mean"}
    assert means[("experiment 2", "MUST.OW")] == pytest.approx(78.85, abs=1.0)  # E[m0] exact


def test_must_table10_timings_are_not_compared(quick):
    folder, _ = quick
    assert {c["status"] for c in comparison(folder, "must-table10")} == {"not-compared"}


def test_must_figure_s3_thresholds(quick):
    """The supplement's thresholds are the base δ at the last 0.01-grid point with δ' < δ."""
    folder, _ = quick
    grid = [c for c in comparison(folder, "must-figS3") if "0.01 ε grid" in c["quantity"]]
    assert len(grid) == 6 and all(c["status"] == "agrees" for c in grid)


def test_must_figure5_claims_and_errata(quick):
    folder, _ = quick
    record = manifest(folder, "must-fig5")
    claims = {c["claim"]: c["holds"] for c in record["checks"]}
    assert claims["η increases with b"] and claims["δ' − δ increases with m"]
    assert not claims["η decreases with m"]  # erratum MUST-13
    assert {"MUST-12", "MUST-13", "MUST-F5", "MUST-F5b"} <= set(record["errata"])


def test_bbg_table1_checks_theorem13(quick):
    folder, _ = quick
    checks = manifest(folder, "bbg-table1")["checks"]
    assert len(checks) == 3 and all(c["holds"] for c in checks)


# ---------------------------------------------------------------------------------------------
# REPRODUCTION.md
# ---------------------------------------------------------------------------------------------


def test_report_summarises_every_artifact(quick):
    folder, _ = quick
    text = (folder / "REPRODUCTION.md").read_text()
    for artifact_id in ARTIFACTS:
        assert f"### {artifact_id}" in text
    assert "Not yet regenerated" not in text and "Not built here" not in text
    assert "| MUST-8 |" in text and "Quick mode" in text and "| MUST-14 |" in text
    assert "drawings without data" in text


def test_single_artifact_run_adds_to_an_existing_report(tmp_path):
    run(["bbg-table1"], tmp_path)
    run(["bbgg-fig2"], tmp_path)
    text = (tmp_path / "REPRODUCTION.md").read_text()
    assert "### bbg-table1" in text and "### bbgg-fig2" in text
    assert "2 of" in text


# ---------------------------------------------------------------------------------------------
# comparison rule
# ---------------------------------------------------------------------------------------------


def test_printed_units():
    assert printed_unit("0.038") == pytest.approx(1e-3)
    assert printed_unit("7.47e-6") == pytest.approx(1e-8)
    assert printed_unit("2") == 1.0 and printed_unit("350.00") == pytest.approx(0.01)


def test_compare_printed_statuses():
    assert compare_printed(0.0, "0") == ("agrees", "")
    assert compare_printed(1e-300, "0")[0] == "disagrees"
    assert compare_printed(0.0386, "0.038")[0] == "rounding"
    assert compare_printed(0.0396, "0.038")[0] == "disagrees"
    assert compare_printed(0.05, "0.038", erratum="X-1") == ("erratum", "X-1")
    assert compare_printed(79.0, "76", tolerance=4.0)[0] == "monte-carlo"
    assert compare_printed(76.2, "76", tolerance=4.0)[0] == "agrees"
    assert compare_printed(float("nan"), "0.1")[0] == "disagrees"


# ---------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------


def test_cli_list(capsys):
    d = run_json(["reproduce", "list"], capsys)
    assert [a["id"] for a in d["artifacts"]] == list(ARTIFACTS)
    assert d["pending"] == []
    assert {a["id"] for a in d["artifacts"] if a["needs"]} == NEEDS_DATA
    assert main(["reproduce", "list"]) == 0
    out, _ = capsys.readouterr()
    assert "must-table3" in out and "must-figS4 (reads Adult)" in out
    assert "Not yet regenerated" not in out


def test_cli_one_artifact(tmp_path, capsys):
    d = run_json(["reproduce", "bbg-table1", "--out", str(tmp_path)], capsys)
    assert [a["id"] for a in d["artifacts"]] == ["bbg-table1"]
    assert d["artifacts"][0]["comparison"] == {"agrees": 16}
    assert (tmp_path / "bbg-table1.png").exists() and (tmp_path / "REPRODUCTION.md").exists()
    assert main(["reproduce", "bbg-table1", "--out", str(tmp_path)]) == 0
    out, _ = capsys.readouterr()
    assert "16 cells: 16 agree" in out and "REPRODUCTION.md" in out


def test_cli_errors(tmp_path, capsys):
    line = run_error(["reproduce", "must-table11", "--out", str(tmp_path)], capsys)
    assert "ARTIFACT" in line and "must-table11" in line
    line = run_error(["reproduce", "must-figS4", "--data", str(tmp_path / "none.csv"),
                      "--out", str(tmp_path)], capsys)
    assert "--data must be an existing data file" in line and "none.csv" in line
    assert not list(tmp_path.iterdir())  # refused before anything was built
    line = run_error(["reproduce", "bbg-table1", "--seed", "-1", "--out", str(tmp_path)],
                     capsys)
    assert "--seed" in line
    line = run_error(["reproduce", "bbg-table1", "--out", "/proc/nonexistent/x"], capsys)
    assert "privamp: error" in line
