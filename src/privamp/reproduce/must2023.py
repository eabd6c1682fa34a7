"""Zhao & Liu (2023), *MUltistage Sampling Technique (MUST)*: every table and figure that does
not need the DP-SGD or bootstrap experiments (those — Tables 5–8's utility columns, Figures 6
and S4 — are in :mod:`~privamp.reproduce.must2023_experiments`).

=================  ============================================================================
artifact           what
=================  ============================================================================
must-table1        Table 1, the three 2-stage MUST schemes: multiplicity law of a record against
                   Monte Carlo, and MUST.WO ≡ WR (Corollary 6)
must-table2        Table 2, η and δ' of every scheme: the printed formulas against privamp
must-table3        Table 3, (ε', δ') of Laplace/Gaussian ∘ WOR, WR, MUST.OW, MUST.WW
must-table4        Table 4, σ and δ' of utility experiment 1 (the bootstrap's calibration)
must-table6        Table 6, σ and δ' columns (utility experiment 2's calibration)
must-table8        Table 8, σ·m and (δ_{c,L}, δ_{c,U}) at ε_c = 2 (experiment 3's accounting)
must-table9        Table 9, number of distinct records in a subsample (Monte Carlo)
must-table10       Table 10, time to draw a subsample relative to WOR
must-fig3          Figure 3, the four quadrants of an aligned privacy profile
must-fig4          Figure 4, aligned privacy profiles ε'/ε against δ' − δ
must-fig5          Figure 5, contours of η and δ' − δ over (b, m)
must-figS1         Figure S1, the same as 3-D surfaces
must-figS2         Figure S2, Fourier-accountant bounds on δ(1) over k compositions
must-figS3         Figure S3, ε' against ε and δ' against δ
=================  ============================================================================

Everything is computed by the library: amplified profiles (:func:`~privamp.amplification.
subsampling.amplify`), aligned profiles (:mod:`~privamp.amplification.tightness`), the samplers
(:mod:`~privamp.sampling`), the Fourier accountant and the mixture PLDs
(:mod:`~privamp.pld.fourier`) and the certified PLD accountant (:mod:`~privamp.accountant`).
Printed values come from :mod:`~privamp.reproduce.paper_values`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .. import display
from ..amplification.subsampling import amplify, amplify_eps, deamplify_eps
from ..mechanisms import GaussianMechanism, LaplaceMechanism
from ..plots import Curve, Panel, aligned_panel
from ..sampling import MustOW, MustWO, MustWW, Poisson, WithoutReplacement, WithReplacement
from . import paper_values as pv
from ._output import (
    compare_printed,
    printed_unit,
    write_comparison,
    write_panels,
    write_table,
    write_table_png,
)
from ._registry import Cell, Check, Context, Result, register

__all__: list[str] = []

PAPER = "must2023"

#: Table 3 / Figures 4 and S3 setting (§4.1).
N, B, M = 1000, 500, 400
SCHEME_NAMES = ("WOR", "WR", "MUST.OW", "MUST.WW")


def _published_ww(n: int, b: int, m: int) -> MustWW:
    """MUST.WW with the paper's Theorem 5(c), as printed: the artifacts compare the paper's
    formulas with its numbers. privamp's accountant uses its proved bound by default (η of
    min(b, m) draws); Theorem 5(c) has no complete proof, so these values are the paper's, not
    certified guarantees."""
    return MustWW(n, b, m, bound="published")


def _schemes(n: int = N, b: int = B, m: int = M) -> dict[str, Any]:
    return {"WOR": WithoutReplacement(n, m), "WR": WithReplacement(n, m),
            "MUST.OW": MustOW(n, b, m), "MUST.WW": _published_ww(n, b, m)}


def _mechanism(kind: str, ratio: float):
    """Laplace (scale σ) or Gaussian (std σ) with Δ/σ = ``ratio``, stated under substitution
    (the relation MUST Theorem 5 needs; sensitivity 1)."""
    if kind == "laplace":
        return LaplaceMechanism(scale=1.0 / ratio, relation="substitute")
    return GaussianMechanism(sigma=1.0 / ratio, relation="substitute")


_MECH_LABEL = {"laplace": "Laplace", "gaussian": "Gaussian"}


def _printed_delta(value: float) -> str:
    """δ as the paper prints it — three decimals down to 0.001, three significant digits below —
    but rounded up (a bound; :mod:`privamp.display`)."""
    if value == 0.0:
        return "0"
    if value >= 0.001:
        return display.upper(value, 3, notation="f")
    mantissa, exponent = display.upper(value, 3, notation="e").split("e")
    return f"{mantissa}e{int(exponent)}"


def _worst(*statuses: str) -> str:
    order = ("agrees", "monte-carlo", "rounding", "not-compared", "erratum", "disagrees")
    return max(statuses, key=order.index)


def _summary_notes(cells: list[Cell]) -> str:
    counts: dict[str, int] = {}
    for c in cells:
        counts[c.status] = counts.get(c.status, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in counts.items())


# =============================================================================================
# Table 3
# =============================================================================================


def table3_values(kind: str, ratio: float, row: str) -> tuple[np.ndarray, np.ndarray]:
    """(ε, δ) of the base mechanism (``row="base"``) or (ε', δ'(ε')) after a scheme, at the six
    base ε of Table 3."""
    mech = _mechanism(kind, ratio)
    eps = np.asarray(pv.MUST_TABLE3_EPS)
    if row == "base":
        return eps, np.atleast_1d(mech.profile().delta(eps))
    pts = amplify(mech, _schemes()[row]).points(eps)
    return pts["eps_amplified"], pts["delta_amplified"]


@register("must-table3", paper=PAPER, kind="table", label="Table 3",
          title="(ε', δ') of Laplace and Gaussian mechanisms after WOR, WR, MUST.OW, MUST.WW")
def table3(ctx: Context) -> Result:
    art = "must-table3"
    eps_cols = [f"ε = {e:g}" for e in pv.MUST_TABLE3_EPS]
    cells: list[Cell] = []
    csv_rows = []
    png_rows = []
    for (kind, ratio), rows in pv.MUST_TABLE3.items():
        png_rows.append((f"§ {_MECH_LABEL[kind]}, Δ/σ = {ratio:g}", [], []))
        for row, printed in rows.items():
            e_vals, d_vals = table3_values(kind, ratio, row)
            name = _MECH_LABEL[kind] if row == "base" else f"∘{row}"
            texts, statuses = [], []
            for j, text in enumerate(printed):
                e_text, d_text = (t.strip() for t in text.split(","))
                col = eps_cols[j]
                block = f"{_MECH_LABEL[kind]} Δ/σ={ratio:g}"
                qe, qd = ("ε", "δ") if row == "base" else ("ε'", "δ'")
                se, ne = compare_printed(float(e_vals[j]), e_text)
                erratum = "MUST-8" if (kind, ratio, row) == ("gaussian", 1.0, "MUST.WW") else None
                sd, nd = compare_printed(float(d_vals[j]), d_text, erratum=erratum)
                cells.append(Cell(f"{block}: {name}", col, qe, e_text, float(e_vals[j]), se, ne))
                cells.append(Cell(f"{block}: {name}", col, qd, d_text, float(d_vals[j]), sd, nd))
                csv_rows.append([block, name, pv.MUST_TABLE3_EPS[j], float(e_vals[j]),
                                 float(d_vals[j])])
                texts.append(f"{display.upper(e_vals[j], 3, notation='f')}, "
                             f"{_printed_delta(float(d_vals[j]))}")
                statuses.append(_worst(se, sd))
            png_rows.append((name, texts, statuses))
    files = [
        write_table(ctx, art, ["block", "row", "base_eps", "eps_or_eps_amplified",
                               "delta_or_delta_amplified"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, "MUST Table 3, regenerated: (ε, δ) of M and (ε', δ'(ε')) of M∘S",
            eps_cols, png_rows, col_width=1.45,
            footnote="n = 1000, m = 400, b = 500 (as in the paper); white-box group profiles "
                     "δ_j (θ = jΔ/σ); every cell computed by privamp and coloured by comparison "
                     "with the printed (ε, δ).\nOrange: the paper's Gaussian Δ/σ = 1 ∘MUST.WW "
                     "row repeats the Laplace row (erratum MUST-8); privamp's correct values are "
                     "shown."),
    ]
    e_ww = [c for c in cells if c.status == "erratum"]
    checks = [
        Check("In every column ε'_WW < ε'_OW < ε'_WR < ε'_WOR (§4.1)",
              all(bool(np.all(table3_values("gaussian", 1.0, a)[0]
                              < table3_values("gaussian", 1.0, b)[0]))
                  for a, b in (("MUST.WW", "MUST.OW"), ("MUST.OW", "WR"), ("WR", "WOR")))),
        Check("The erratum cells are exactly the six δ' of the Gaussian Δ/σ = 1 MUST.WW row",
              len(e_ww) == 6 and all("Gaussian Δ/σ=1: ∘MUST.WW" in c.row for c in e_ww)),
    ]
    return Result(
        shows="The privacy profile of Laplace and Gaussian mechanisms (Δ/σ = 0.25 and 1) at six "
              "base ε, and the amplified (ε', δ'(ε')) after sampling without replacement, with "
              "replacement, MUST.OW and MUST.WW (MUST Theorem 5, white-box group privacy).",
        parameters={"n": N, "m": M, "b": B, "base eps": list(pv.MUST_TABLE3_EPS),
                    "Δ/σ": [0.25, 1.0], "group privacy": "white-box"},
        cells=cells, checks=checks, errata=["MUST-8"], files=files)


# =============================================================================================
# Figures 3, 4 and S3: aligned privacy profiles, ε' against ε and δ' against δ
# =============================================================================================

#: ε grid of Figures 4 and S3 (the authors' code: seq(0.01, 6, 0.01)).
EPS_GRID = np.round(np.arange(1, 601) * 0.01, 10)
_PANELS = (("laplace", 0.25), ("laplace", 1.0), ("gaussian", 0.25), ("gaussian", 1.0))


def _amplified_points(ctx: Context, kind: str, ratio: float) -> dict[str, dict[str, np.ndarray]]:
    """For the Table 3 setting: scheme → points(ε) on :data:`EPS_GRID` (shared by Figures 3, 4
    and S3 within a run)."""

    def compute():
        mech = _mechanism(kind, ratio)
        return {name: amplify(mech, s).points(EPS_GRID) for name, s in _schemes().items()}

    return ctx.memo(f"must-points-{kind}-{ratio}", compute)


def _aligned(ctx: Context, kind: str, ratio: float):
    from ..amplification.tightness import aligned_profile

    def compute():
        mech = _mechanism(kind, ratio)
        return {name: aligned_profile(amplify(mech, s), EPS_GRID)
                for name, s in _schemes().items()}

    return ctx.memo(f"must-aligned-{kind}-{ratio}", compute)


@register("must-fig4", paper=PAPER, kind="figure", label="Figure 4",
          title="aligned privacy profiles ε'/ε against δ' − δ, Laplace and Gaussian, WOR, WR, "
                "MUST.OW, MUST.WW")
def figure4(ctx: Context) -> Result:
    art = "must-fig4"
    panels, class_rows, checks = [], [], []
    letters = "abcd"
    for i, (kind, ratio) in enumerate(_PANELS):
        aligned = _aligned(ctx, kind, ratio)
        lim = 0.3 if ratio == 1.0 else 0.1
        panels.append(aligned_panel(aligned, f"({letters[i]}) {_MECH_LABEL[kind]}, "
                                             f"Δ/σ = {ratio:g}", xlim=(0.2, 0.9),
                                    ylim=(-lim, lim)))
        for name, a in aligned.items():
            class_rows.append([kind, ratio, name] + [a.fraction(c) for c in
                                                      ("strong", "weak-I", "weak-II",
                                                       "dilution")]
                              + [float(np.mean(a.delta_difference > 0.01 * lim))])
        strict = {name: a.fraction("weak-I") for name, a in aligned.items()}
        tol = 0.01 * lim  # 1% of the panel's δ' − δ range: visibly above the zero line
        weak = {name: float(np.mean((a.eps_ratio < 1) & (a.delta_difference > tol)))
                for name, a in aligned.items()}
        label = f"{_MECH_LABEL[kind]} Δ/σ = {ratio:g}"
        checks.append(Check(f"{label}: WOR (Poisson) is 100% strong",
                            aligned["WOR"].fraction("strong") == 1.0,
                            f"strong on {aligned['WOR'].fraction('strong'):.0%} of the ε grid"))
        checks.append(Check(
            f"{label}: WR and the MUST schemes visit the type-I weak quadrant for a minor "
            "portion of each curve",
            all(0.0 < weak[s] < 0.5 for s in ("WR", "MUST.OW", "MUST.WW")),
            "visibly (δ' − δ above 1% of the axis range): "
            + ", ".join(f"{s} {weak[s]:.0%}" for s in ("WR", "MUST.OW", "MUST.WW"))
            + " of the ε grid; strictly (δ' > δ): "
            + ", ".join(f"{s} {strict[s]:.0%}" for s in ("WR", "MUST.OW", "MUST.WW"))))
        checks.append(Check(
            f"{label}: MUST.WW stays weak longest, then MUST.OW, then WR, then WOR",
            weak["MUST.WW"] >= weak["MUST.OW"] >= weak["WR"] >= weak["WOR"],
            "visible fractions as above"))
        starts = all(a.classes[0] == "strong" for a in aligned.values())
        ends = max(abs(a.delta_difference[-1]) for a in aligned.values())
        checks.append(Check(f"{label}: every curve starts strong and ends near δ' − δ = 0",
                            starts and ends < 0.1 * lim,
                            f"largest |δ' − δ| at ε = 6: {ends:.2g}"))
    spread = {r: max(float(np.max(np.abs(a.delta_difference)))
                     for k, rr in _PANELS if rr == r
                     for a in _aligned(ctx, k, rr).values()) for r in (0.25, 1.0)}
    checks.append(Check("Differences shrink as Δ/σ decreases",
                        spread[0.25] < spread[1.0],
                        f"max |δ' − δ|: {spread[0.25]:.3g} (0.25) vs {spread[1.0]:.3g} (1)"))
    files = write_panels(
        ctx, art, panels, ncols=2, panel_size=(6.0, 4.4),
        suptitle="MUST Figure 4: aligned privacy profiles (ε'/ε, δ'(ε') − δ(ε)), "
                 "base ε = 0.01 … 6",
        footnote="n = 1000, m = 400, b = 500 (as in the paper); white-box group profiles; "
                 "MUST.WO is identical to WR (Corollary 6) and not drawn; axis limits as in "
                 "the authors' code.\nδ' = δ counts as strong (WOR with Laplace is 'strong' "
                 "where both are 0; Definition 5's typos corrected from Figure 3, erratum "
                 "MUST-2).")
    files.append(write_table(ctx, art, ["mechanism", "Δ/σ", "scheme", "strong", "weak-I",
                                        "weak-II", "dilution", "visibly_above_zero"],
                             class_rows,
                             suffix="-classes.csv"))
    minor = [c for c in checks if "minor portion" in c.claim]
    errata = ["MUST-2"] + (["MUST-F4"] if not all(c.holds for c in minor) else [])
    return Result(
        shows="The aligned privacy profile ε ↦ (ε'/ε, δ'(ε') − δ(ε)) of each scheme over the "
              "base ε grid, against the four regions of Definition 5 (strong amplification, "
              "weak type I/II, dilution); the fraction of the grid in each region is in "
              "must-fig4-classes.csv.",
        parameters={"n": N, "m": M, "b": B, "base eps": "0.01, 0.02, …, 6",
                    "Δ/σ": [0.25, 1.0]},
        checks=checks, errata=errata, files=files)


@register("must-fig3", paper=PAPER, kind="figure", label="Figure 3",
          title="the four regions of an aligned privacy profile (strong, weak I/II, dilution)")
def figure3(ctx: Context) -> Result:
    from ..amplification.tightness import classify_amplification

    art = "must-fig3"
    aligned = _aligned(ctx, "gaussian", 1.0)
    curves = [Curve(f"example: Gaussian Δ/σ = 1 ∘ {name}", a.eps_ratio, a.delta_difference)
              for name, a in aligned.items() if name in ("WOR", "MUST.WW")]
    # Figure 3's caption: strong iff ε'/ε < 1 and δ' − δ < 0; weak when exactly one fails
    probes = {"strong": (0.5, -0.1), "weak-I": (0.5, 0.1), "weak-II": (1.5, -0.1),
              "dilution": (1.5, 0.1)}
    got = classify_amplification([p[0] for p in probes.values()],
                                 [p[1] for p in probes.values()]).tolist()
    boundary = classify_amplification([0.5], [0.0]).tolist()[0]
    panel = Panel("MUST Figure 3: privacy amplification regions", "ε'/ε", "δ'(ε') − δ(ε)",
                  curves, xlim=(0.0, 2.0), ylim=(-0.3, 0.3), quadrants=True,
                  legend="center right")
    files = write_panels(
        ctx, art, [panel], panel_size=(7.5, 5.0),
        footnote="Regions of Definition 5 as fixed by Figure 3's caption (the definition's "
                 "type I and dilution conditions are misprinted, erratum MUST-2); privamp's "
                 "classify_amplification shades them.\nExample curves: MUST Table 3 setting "
                 "(n = 1000, m = 400, b = 500); for these samplers ε' < ε always, so types II "
                 "and dilution never occur.")
    return Result(
        shows="The schematic of Definition 5: ε'/ε against δ' − δ split into strong "
              "amplification (both smaller), weak amplification of type I (ε' < ε, δ' > δ) and "
              "type II (ε' > ε, δ' < δ), and dilution (both larger), with two aligned profiles "
              "of Figure 4 drawn in.",
        parameters={"example": "Gaussian Δ/σ = 1, n = 1000, m = 400, b = 500"},
        checks=[Check("privamp's classification puts one probe point in each quadrant as "
                      "Figure 3 does", got == list(probes), str(got)),
                Check("δ' = δ with ε' < ε counts as strong (boundary convention)",
                      boundary == "strong", boundary)],
        errata=["MUST-2"], files=files)


def _crossing(f, lo: float, hi: float) -> float:
    from scipy.optimize import brentq

    return float(brentq(f, lo, hi, xtol=1e-12, rtol=1e-12))


def _threshold(kind: str, ratio: float, scheme) -> tuple[float, float, float, float]:
    """Where δ'(ε') = δ(ε) along the profile (δ' < δ for smaller base ε, i.e. larger δ):
    ``(ε*, δ(ε*), ε_grid, δ(ε_grid))`` — the exact crossing by root-finding, and the last point
    of the paper's 0.01 grid with δ' < δ (how the supplement's numbers were read off)."""
    mech = _mechanism(kind, ratio)
    pts = amplify(mech, scheme).points(EPS_GRID)
    gap_grid = pts["delta_amplified"] - pts["delta"]
    k = int(np.flatnonzero((gap_grid[:-1] < 0) & (gap_grid[1:] >= 0))[0])
    amp = amplify(mech, scheme)

    def gap(e):
        q = amp.points([e])
        return float(q["delta_amplified"][0] - q["delta"][0])

    e_star = _crossing(gap, float(EPS_GRID[k]), float(EPS_GRID[k + 1]))
    return (e_star, float(mech.profile().delta(e_star)), float(EPS_GRID[k]),
            float(pts["delta"][k]))


def _pair_crossings(kind: str, ratio: float) -> list[tuple[str, float, float]]:
    """Where the δ' curves of two schemes cross (as functions of base ε): (pair, δ, δ')."""
    mech = _mechanism(kind, ratio)
    amps = {name: amplify(mech, s) for name, s in _schemes().items()}
    out = []
    names = list(amps)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            def gap(e, a=a, b=b):
                return float(amps[a].points([e])["delta_amplified"][0]
                             - amps[b].points([e])["delta_amplified"][0])

            grid = EPS_GRID[:300:5]
            values = np.array([gap(e) for e in grid])
            change = np.flatnonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)
            for k in change:
                e_star = _crossing(gap, float(grid[k]), float(grid[k + 1]))
                out.append((f"{a}/{b}", float(mech.profile().delta(e_star)),
                            float(amps[a].points([e_star])["delta_amplified"][0])))
    return out


@register("must-figS3", paper=PAPER, kind="figure", label="Figure S3",
          title="ε' against ε for any mechanism, δ' against δ for Laplace and Gaussian "
                "(Supplement S8)")
def figure_s3(ctx: Context) -> Result:
    art = "must-figS3"
    pts = {(k, r): _amplified_points(ctx, k, r) for k, r in _PANELS}
    any_pts = pts[("gaussian", 1.0)]
    panel_a = Panel("(a) ε' vs ε, any base mechanism", "base ε", "amplified ε'",
                    [Curve("M (no sampling)", EPS_GRID, EPS_GRID, color="0.3")]
                    + [Curve(name, EPS_GRID, p["eps_amplified"]) for name, p in any_pts.items()],
                    xlim=(0, 6), ylim=(0, 6), legend="upper left")
    panels = [panel_a]
    order = (("laplace", 1.0, "b", 0.4), ("gaussian", 1.0, "c", 0.4),
             ("laplace", 0.25, "d", 0.11), ("gaussian", 0.25, "e", 0.09))
    for kind, ratio, letter, lim in order:
        p = pts[(kind, ratio)]
        base = p["WOR"]["delta"]
        panels.append(Panel(
            f"({letter}) δ' vs δ, {_MECH_LABEL[kind]}, Δ/σ = {ratio:g}", "base δ(ε)",
            "amplified δ'(ε')",
            [Curve("M (δ' = δ)", [0, lim], [0, lim], color="0.3")]
            + [Curve(name, base, q["delta_amplified"]) for name, q in p.items()],
            xlim=(0, lim), ylim=(0, lim), legend="upper left"))
    cells, rows, checks = [], [], []
    for kind in ("laplace", "gaussian"):
        block = f"{_MECH_LABEL[kind]} Δ/σ=1"
        for name, printed in pv.MUST_FIG_S3_THRESHOLDS[kind].items():
            e_star, d_star, e_grid, d_grid = _threshold(kind, 1.0, _schemes()[name])
            label = "WR/MUST.WO" if name == "WR" else name
            status, _ = compare_printed(d_grid, printed)
            cells.append(Cell(block, label, "δ above which δ' < δ, read on the 0.01 ε grid",
                              printed, d_grid, status, f"last grid point ε = {e_grid:.2f}"))
            status, note = compare_printed(d_star, printed, erratum="MUST-S8")
            cells.append(Cell(block, label, "δ above which δ' < δ, exact crossing", printed,
                              d_star, status, f"at base ε = {e_star:.4f}; {note}".rstrip("; ")))
            rows.append(["threshold (exact)", kind, label, e_star, d_star, ""])
            rows.append(["threshold (0.01 grid)", kind, label, e_grid, d_grid, ""])
        crossings = _pair_crossings(kind, 1.0)
        for pair, d, dp in crossings:
            rows.append(["crossover", kind, pair, "", d, dp])
        pd, pdp = pv.MUST_FIG_S3_CROSSOVERS[kind]
        for q, printed, values in (("δ", pd, [c[1] for c in crossings]),
                                   ("δ'", pdp, [c[2] for c in crossings])):
            lo, hi = min(values), max(values)
            half = 0.5 * printed_unit(printed)
            inside = lo - half <= float(printed) <= hi + half
            cells.append(Cell(block, "crossovers of the δ' curves ('around')", q, printed,
                              f"{lo:.3f} … {hi:.3f}", "agrees" if inside else "disagrees",
                              f"range of the {len(crossings)} pairwise crossings"))
        p = pts[(kind, 1.0)]
        lo_d = min(c[1] for c in crossings)
        small = int(np.flatnonzero(p["WOR"]["delta"] < lo_d)[0])
        order_small_eps = [name for name, _ in sorted(p.items(),
                                                      key=lambda kv: kv[1]["delta_amplified"][0])]
        order_small_delta = [name for name, _ in sorted(
            p.items(), key=lambda kv: kv[1]["delta_amplified"][small])]
        checks.append(Check(
            f"{_MECH_LABEL[kind]}: below the crossovers δ' grows WOR < WR < MUST.OW < MUST.WW, "
            "above them the order is flipped",
            order_small_delta == list(SCHEME_NAMES)
            and order_small_eps == list(reversed(SCHEME_NAMES)),
            f"at δ = {p['WOR']['delta'][small]:.3f}: {' < '.join(order_small_delta)}; at ε = "
            f"0.01: {' < '.join(order_small_eps)}"))
    eps_ok = all(bool(np.all(p["eps_amplified"] < EPS_GRID)) for p in any_pts.values())
    ordered = all(bool(np.all(any_pts[a]["eps_amplified"] < any_pts[b]["eps_amplified"]))
                  for a, b in (("MUST.WW", "MUST.OW"), ("MUST.OW", "WR"), ("WR", "WOR")))
    checks += [Check("ε' < ε for every scheme", eps_ok),
               Check("amplification of ε: MUST.WW > MUST.OW > WR/MUST.WO > WOR", ordered),
               Check("only WOR (Poisson) has δ' ≤ δ everywhere",
                     all(bool(np.all(pts[k]["WOR"]["delta_amplified"]
                                     <= pts[k]["WOR"]["delta"])) for k in pts)
                     and all(bool(np.any(pts[k][s]["delta_amplified"] > pts[k][s]["delta"]))
                             for k in pts for s in ("WR", "MUST.OW", "MUST.WW")))]
    files = write_panels(
        ctx, art, panels, ncols=3, panel_size=(5.0, 4.4),
        suptitle="MUST Figure S3: ε' vs ε (any mechanism) and δ' vs δ (Laplace, Gaussian)",
        footnote="n = 1000, m = 400, b = 500; base ε = 0.01 … 6; white-box group profiles; "
                 "axis limits as in the authors' code. MUST.WO is identical to WR "
                 "(Corollary 6).")
    files.append(write_table(ctx, art, ["what", "mechanism", "scheme(s)", "base_eps", "delta",
                                        "delta_amplified"], rows, suffix="-crossings.csv"))
    files.append(write_comparison(ctx, art, cells))
    return Result(
        shows="(a) The amplified ε' against the base ε for every scheme (it depends on η "
              "only); (b)–(e) the amplified δ' against the base δ along the profile, with the "
              "thresholds below which δ' > δ (weak amplification) and the crossovers of the "
              "curves that the supplement's text prints.",
        parameters={"n": N, "m": M, "b": B, "base eps": "0.01, 0.02, …, 6",
                    "Δ/σ": [0.25, 1.0]},
        cells=cells, checks=checks, files=files,
        errata=["MUST-S8"],
        notes=["The text's thresholds belong to Δ/σ = 1 (catalogue B §2.7). They are the base "
               "δ at the last point of the 0.01 ε grid where δ' < δ; the exact crossings (root "
               "of δ' − δ in the base ε) are lower, so 'δ' < δ only for δ > threshold' is "
               "false just below the printed thresholds."])


# =============================================================================================
# Tables 1 and 2: the schemes and their amplification parameters
# =============================================================================================


def _binom_pmf(k, n, p):
    from scipy import stats

    return stats.binom.pmf(k, n, p)


def _hyper_pmf(u, b, j, m):
    from scipy import stats

    return stats.hypergeom.pmf(u, b, j, m)


def table2_formulas(n: int, b: int, m: int, group_deltas) -> dict[str, tuple[float, float]]:
    """η and δ' of MUST Table 2, evaluated as printed (direct sums with SciPy's binomial and
    hypergeometric pmfs): scheme → (η, δ'). ``group_deltas[u]`` is δ_u(ε) for u = 1 … max(b, m)
    (index 0 unused). Poisson is γ = m/n with δ' = γδ_1."""
    d = np.asarray(group_deltas, dtype=float)
    j_b = np.arange(1, b + 1)
    j_m = np.arange(1, m + 1)
    w_b = _binom_pmf(j_b, b, 1.0 / n)  # Bin(j; b, 1/n)
    out = {"Poisson": (m / n, m / n * d[1]), "WOR": (m / n, m / n * d[1])}
    out["WR"] = (1.0 - (1.0 - 1.0 / n) ** m, float(np.sum(_binom_pmf(j_m, m, 1.0 / n) * d[j_m])))
    # MUST.WO: Σ_j Bin(j; b, 1/n)(1 − C(b−j, m)/C(b, m)); Σ_j Bin Σ_{u ≤ min(j, m)} Hyp δ_u
    from scipy.special import comb

    eta_wo = float(np.sum(w_b * (1.0 - comb(b - j_b, m, exact=False) / comb(b, m))))
    delta_wo = 0.0
    for j, wj in zip(j_b, w_b, strict=True):
        u = np.arange(1, min(j, m) + 1)
        delta_wo += wj * float(np.sum(_hyper_pmf(u, b, j, m) * d[u]))
    out["MUST.WO"] = (eta_wo, delta_wo)
    out["MUST.OW"] = (b / n * (1.0 - (1.0 - 1.0 / b) ** m),
                      b / n * float(np.sum(_binom_pmf(j_m, m, 1.0 / b) * d[j_m])))
    eta_ww = float(np.sum(w_b * (1.0 - (1.0 - j_b / b) ** m)))
    delta_ww = float(sum(wj * np.sum(_binom_pmf(j_m, m, j / b) * d[j_m])
                         for j, wj in zip(j_b, w_b, strict=True)))
    out["MUST.WW"] = (eta_ww, delta_ww)
    return out


def _compare_formula(ours: float, formula: float, rtol: float = 1e-9) -> str:
    close = abs(ours - formula) <= rtol * max(abs(formula), 1e-300) or ours == formula
    return "agrees" if close else "disagrees"


@register("must-table2", paper=PAPER, kind="table", label="Table 2",
          title="η and δ' of Poisson, WOR, WR, MUST.WO, MUST.OW, MUST.WW: the printed formulas "
                "against privamp")
def table2(ctx: Context) -> Result:
    art = "must-table2"
    settings = ((1000, 500, 400), (300, 50, 30))
    eps = 1.0
    cells, csv_rows, png_rows = [], [], []
    checks = []
    for n, b, m in settings:
        png_rows.append((f"§ n = {n}, b = {b}, m = {m}", [], []))
        schemes = {"Poisson": Poisson(m / n), "WOR": WithoutReplacement(n, m),
                   "WR": WithReplacement(n, m), "MUST.WO": MustWO(n, b, m),
                   "MUST.OW": MustOW(n, b, m), "MUST.WW": _published_ww(n, b, m)}
        per_kind = {}
        for kind in ("laplace", "gaussian"):
            mech = _mechanism(kind, 1.0)
            top = max(b, m)
            deltas = [0.0] + [float(mech.group_profile(u).delta(eps)) for u in range(1, top + 1)]
            formulas = table2_formulas(n, b, m, deltas)
            ours = {}
            for name, s in schemes.items():
                base = mech if name != "Poisson" else (
                    LaplaceMechanism(1.0) if kind == "laplace" else GaussianMechanism(1.0))
                pts = amplify(base, s).points([eps])
                ours[name] = (float(s.eta), float(pts["delta_amplified"][0]))
            per_kind[kind] = (formulas, ours)
        for name in schemes:
            texts, statuses = [], []
            eta_f, _ = per_kind["laplace"][0][name]
            eta_o = per_kind["laplace"][1][name][0]
            st = _compare_formula(eta_o, eta_f)
            cells.append(Cell(f"n={n}, b={b}, m={m}: {name}", "η", "η", f"{eta_f:.12g}",
                              eta_o, st))
            texts.append(display.upper(eta_o))
            statuses.append(st)
            for kind in ("laplace", "gaussian"):
                d_f = per_kind[kind][0][name][1]
                d_o = per_kind[kind][1][name][1]
                st = _compare_formula(d_o, d_f)
                cells.append(Cell(f"n={n}, b={b}, m={m}: {name}", f"δ', {_MECH_LABEL[kind]}",
                                  "δ'(ε')", f"{d_f:.12g}", d_o, st))
                texts.append(display.upper(d_o))
                statuses.append(st)
            eps_p = float(amplify_eps(eps, eta_o))
            texts.append(display.upper(eps_p))
            statuses.append(None)
            png_rows.append((name, texts, statuses))
            csv_rows.append([n, b, m, name, eta_f, eta_o, eps_p,
                             per_kind["laplace"][0][name][1], per_kind["laplace"][1][name][1],
                             per_kind["gaussian"][0][name][1], per_kind["gaussian"][1][name][1]])
        f_l = per_kind["laplace"][1]
        checks.append(Check(f"(n, b, m) = ({n}, {b}, {m}): MUST.WO = WR in η and δ' "
                            "(Corollary 6)",
                            abs(f_l["MUST.WO"][0] - f_l["WR"][0]) <= 1e-12
                            and abs(f_l["MUST.WO"][1] - f_l["WR"][1]) <= 1e-12 * f_l["WR"][1]))
        checks.append(Check(f"(n, b, m) = ({n}, {b}, {m}): η_OW < η_WR < η_WOR = η_Poisson "
                            "(Proposition 7)",
                            f_l["MUST.OW"][0] < f_l["WR"][0] < f_l["WOR"][0]
                            and abs(f_l["WOR"][0] - f_l["Poisson"][0]) <= 1e-15))
    files = [
        write_table(ctx, art, ["n", "b", "m", "scheme", "eta_formula", "eta_privamp",
                               "eps_amplified_at_1", "delta_laplace_formula",
                               "delta_laplace_privamp", "delta_gaussian_formula",
                               "delta_gaussian_privamp"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, "MUST Table 2, evaluated: η, δ'(ε') at base ε = 1 (Δ/σ = 1), ε'",
            ["η", "δ', Laplace", "δ', Gaussian", "ε'"], png_rows, col_width=1.5,
            first_width=2.0,
            footnote="Green: privamp (multiplicity laws in log space) equals the printed formula "
                     "evaluated directly with SciPy's pmfs to 1e-9.\nPoisson is under add/remove "
                     "(γ = m/n, δ' = γδ); every other row under substitution, white-box group "
                     "profiles δ_u. Parameters chosen here: ε = 1, Δ/σ = 1 and the (n, b, m) of "
                     "Tables 3 and 4."),
    ]
    return Result(
        shows="Table 2 gives η and δ' of each scheme as formulas; they are evaluated as printed "
              "(direct binomial and hypergeometric sums) and compared with privamp's amplified "
              "profiles, which compute the multiplicity law stage by stage in log space.",
        parameters={"(n, b, m)": [list(s) for s in settings], "base eps": eps, "Δ/σ": 1.0},
        chosen={"(n, b, m), ε, Δ/σ": "Table 2 has formulas only; evaluated at the settings "
                                     "of Tables 3 and 4"},
        cells=cells, checks=checks, errata=["MUST-1"], files=files,
        notes=["Theorem 5(c) is printed as 'for M∘MUST.OW' but is the MUST.WW formula "
               "(erratum MUST-1); Table 2's MUST.WW row is the one evaluated."])


@register("must-table1", paper=PAPER, kind="table", label="Table 1",
          title="the three 2-stage MUST schemes: multiplicity law of a record, exact against "
                "Monte Carlo")
def table1(ctx: Context) -> Result:
    from ..sampling import StageChain

    art = "must-table1"
    n, b, m = 300, 50, 30
    reps = 2000 if ctx.quick else 20000
    rng = ctx.rng(art)
    schemes = {
        "MUST.OW": (MustOW(n, b, m), "WOR(n, b)", "WR(b, m)"),
        "MUST.WW": (MustWW(n, b, m), "WR(n, b)", "WR(b, m)"),
        "MUST.WO": (MustWO(n, b, m), "WR(n, b)", "WOR(b, m)"),
        "MUST.OO": (StageChain(n, [("wor", b), ("wor", m)]), "WOR(n, b)", "WOR(b, m)"),
        "WR": (WithReplacement(n, m), "WR(n, m)", "—"),
        "WOR": (WithoutReplacement(n, m), "WOR(n, m)", "—"),
    }
    kmax = 4
    csv_rows, png_rows, sampler_checks = [], [], []
    exact_pmfs = {}
    for name, (s, first, second) in schemes.items():
        pmf = np.zeros(kmax + 2)
        exact = s.multiplicity().pmf
        pmf[:min(exact.size, kmax + 1)] = exact[:kmax + 1]
        pmf[kmax + 1] = max(0.0, 1.0 - pmf[:kmax + 1].sum())
        exact_pmfs[name] = pmf
        counts = np.zeros(kmax + 2)
        for _ in range(reps):
            sub = s.sample(n, rng)
            full = np.zeros(n, dtype=np.int64)
            full[sub.indices] = sub.counts
            counts += np.bincount(np.minimum(full, kmax + 1), minlength=kmax + 2)
        freq = counts / counts.sum()
        total = reps * n
        se = np.sqrt(np.maximum(pmf * (1 - pmf), 1e-12) / total)
        z = np.abs(freq - pmf) / se
        worst = float(np.max(z[:kmax + 1]))
        sampler_checks.append(Check(
            f"{name}: frequencies of K in privamp's samples match the exact law",
            worst <= 4.5, f"largest deviation {worst:.1f} standard errors over k = 0 … {kmax}"))
        texts = [first, second] + [f"{pmf[k]:.4f} / {freq[k]:.4f}" for k in range(3)]
        png_rows.append((name, texts, [None] * len(texts)))
        csv_rows.append([name, first, second, float(s.eta)] + pmf.tolist() + freq.tolist())
    checks = [
        Check("MUST.WO has exactly the multiplicity law of WR(n, m) (Table 1 †, Corollary 6)",
              bool(np.max(np.abs(exact_pmfs["MUST.WO"] - exact_pmfs["WR"])) < 1e-14)),
        Check("MUST.OO has exactly the law of WOR(n, m) (Table 1: 'the same as WOR(n, m)')",
              bool(np.max(np.abs(exact_pmfs["MUST.OO"] - exact_pmfs["WOR"])) < 1e-14)),
    ] + sampler_checks
    files = [
        write_table(ctx, art, ["scheme", "stage_1", "stage_2", "eta"]
                    + [f"exact_P(K={k})" for k in range(kmax + 1)] + [f"exact_P(K>{kmax})"]
                    + [f"mc_P(K={k})" for k in range(kmax + 1)] + [f"mc_P(K>{kmax})"],
                    csv_rows),
        write_table_png(
            ctx, art, "MUST Table 1: the 2-stage schemes, P(K = k) exact / Monte Carlo",
            ["1st stage", "2nd stage", "P(K = 0)", "P(K = 1)", "P(K = 2)"], png_rows,
            col_width=1.55,
            footnote=f"K: copies of one record in the final subsample, n = {n}, b = {b}, "
                     f"m = {m} (chosen: Table 9's experiment 1); {reps:,} subsamples × {n} "
                     "records drawn by privamp's samplers.\nMUST.OO is not "
                     "in the paper's table ('the same as WOR(n, m)'); WR and WOR for "
                     "comparison."),
    ]
    return Result(
        shows="The stages of each 2-stage MUST scheme (Table 1) and, for each, the law of the "
              "number K of copies of one record in the subsample: privamp's exact stage-by-stage "
              "law against the frequencies in subsamples drawn by privamp's samplers; and the "
              "table's two identities (MUST.WO = WR, MUST.OO = WOR).",
        parameters={"n": n, "b": b, "m": m, "Monte Carlo subsamples": reps},
        chosen={"(n, b, m)": "Table 1 is symbolic; Table 9's experiment 1 is used"},
        checks=checks, files=files)


# =============================================================================================
# Figures 5 and S1: η and δ' − δ over (b, m)
# =============================================================================================


def _bm_grid(ctx: Context) -> dict[str, Any]:
    """η and δ'(ε') − δ(ε) at ε = 1 (Δ/σ = 1) for MUST.OW and MUST.WW over m = 100 … 150,
    b = 150 … 200 (n = 1000; the authors' contour_3D_plot.R), shared by Figures 5 and S1."""

    def compute():
        step = 10 if ctx.quick else 1
        ms = np.arange(100, 151, step)
        bs = np.arange(150, 201, step)
        mechs = {"laplace": _mechanism("laplace", 1.0), "gaussian": _mechanism("gaussian", 1.0)}
        base = {k: float(mm.profile().delta(1.0)) for k, mm in mechs.items()}
        out: dict[str, Any] = {"m": ms, "b": bs}
        for name, cls in (("MUST.OW", MustOW), ("MUST.WW", _published_ww)):
            eta = np.empty((bs.size, ms.size))
            diff = {k: np.empty_like(eta) for k in mechs}
            for i, b in enumerate(bs):
                for j, m in enumerate(ms):
                    scheme = cls(1000, int(b), int(m))
                    eta[i, j] = scheme.eta
                    for k, mech in mechs.items():
                        d = amplify(mech, scheme).points([1.0])["delta_amplified"][0]
                        diff[k][i, j] = d - base[k]
            out[name] = {"eta": eta, **diff}
        return out

    return ctx.memo("must-bm-grid", compute)


def _bm_panels(grid) -> list[dict[str, Any]]:
    panels = []
    for name in ("MUST.OW", "MUST.WW"):
        for key, zlabel in (("eta", "η"), ("laplace", "δ' − δ, Laplace Δ/σ = 1"),
                            ("gaussian", "δ' − δ, Gaussian Δ/σ = 1")):
            what = "η" if key == "eta" else f"δ'(ε') − δ(ε), {_MECH_LABEL[key]}"
            panels.append({"x": grid["m"], "y": grid["b"], "z": grid[name][key],
                           "title": f"{name}: {what}", "xlabel": "m (subsample size)",
                           "ylabel": "b (stage-I size)", "zlabel": zlabel})
    return panels


def _bm_checks(grid) -> tuple[list[Check], list[str]]:
    """The §4.1 claims about Figure 5, and the errata they reveal."""
    ow, ww = grid["MUST.OW"], grid["MUST.WW"]
    frac = {k: float(np.mean(ww[k] < ow[k])) for k in ("eta", "laplace", "gaussian")}

    def monotone(key, axis, sign):
        return all(bool(np.all(sign * np.diff(g[key], axis=axis) > 0)) for g in (ow, ww))

    eta_b, eta_m = monotone("eta", 0, 1), monotone("eta", 1, 1)
    eta_m_down = monotone("eta", 1, -1)
    d_b = monotone("laplace", 0, 1) and monotone("gaussian", 0, 1)
    d_b_down = monotone("laplace", 0, -1) and monotone("gaussian", 0, -1)
    d_m = monotone("laplace", 1, 1) and monotone("gaussian", 1, 1)
    checks = [
        Check("MUST.WW has a smaller η than MUST.OW", frac["eta"] == 1.0,
              f"on {frac['eta']:.0%} of the grid"),
        Check("MUST.WW has a smaller δ' − δ than MUST.OW (a stronger effect on δ)",
              frac["laplace"] == 1.0 and frac["gaussian"] == 1.0,
              f"smaller on {frac['laplace']:.0%} (Laplace) and {frac['gaussian']:.0%} "
              "(Gaussian) of the grid"),
        Check("η increases with b", eta_b),
        Check("η decreases with m", eta_m_down,
              "η increases with m everywhere" if eta_m else "η is not monotone in m"),
        Check("δ' − δ increases with b", d_b,
              "δ' − δ decreases with b everywhere" if d_b_down else "not monotone in b"),
        Check("δ' − δ increases with m", d_m),
    ]
    errata = ["MUST-12"]
    if not eta_m_down:
        errata.append("MUST-13")
    if frac["laplace"] < 1.0 or frac["gaussian"] < 1.0:
        errata.append("MUST-F5")
    if not d_b:
        errata.append("MUST-F5b")
    return checks, errata


_BM_FOOT = ("n = 1000, ε = 1, Δ/σ = 1, m = 100 … 150, b = 150 … 200 (the authors' "
            "contour_3D_plot.R); white-box group profiles. The paper labels the first row "
            "'MUST.WO': it is MUST.OW (erratum MUST-12). The authors' plotly call transposes the "
            "axes; here x = m and y = b as labelled.")


@register("must-fig5", paper=PAPER, kind="figure", label="Figure 5",
          title="contours of η and δ' − δ over (b, m) for MUST.OW and MUST.WW")
def figure5(ctx: Context) -> Result:
    from ..plots.reproduce import plot_contours
    from ._output import _png

    art = "must-fig5"
    grid = _bm_grid(ctx)
    panels = _bm_panels(grid)
    fig = plot_contours(panels, ncols=3, footnote=_BM_FOOT,
                        suptitle="MUST Figure 5: η and δ'(ε') − δ(ε) at ε = 1 over (b, m)")
    _png(fig, ctx.path(art, ".png"))
    files = [f"{art}.png", _write_grid(ctx, art, grid)]
    checks, errata = _bm_checks(grid)
    step = int(grid["m"][1] - grid["m"][0])
    return Result(
        shows="How the amplification parameter η and the change of δ at ε = 1 depend on the "
              "stage-I size b and the subsample size m, for MUST.OW and MUST.WW with the "
              "Laplace and Gaussian mechanisms (contours).",
        parameters={"n": 1000, "eps": 1.0, "Δ/σ": 1.0, "m": "100 … 150", "b": "150 … 200",
                    "grid step": step},
        checks=checks, errata=errata, files=files,
        notes=[f"Quick mode: grid step {step} instead of 1."] if step > 1 else [])


@register("must-figS1", paper=PAPER, kind="figure", label="Figure S1",
          title="3-D surfaces of η and δ' − δ over (b, m) for MUST.OW and MUST.WW")
def figure_s1(ctx: Context) -> Result:
    from ..plots.reproduce import plot_surfaces
    from ._output import _png

    art = "must-figS1"
    grid = _bm_grid(ctx)
    panels = _bm_panels(grid)
    order = [0, 3, 1, 4, 2, 5]  # (a), (b) η; (c), (d) Laplace; (e), (f) Gaussian
    letters = "abcdef"
    shown = []
    for letter, i in zip(letters, order, strict=True):
        p = dict(panels[i])
        p["title"] = f"({letter}) {p['title']}"
        shown.append(p)
    fig = plot_surfaces(shown, ncols=2, footnote=_BM_FOOT,
                        suptitle="MUST Figure S1: η and δ'(ε') − δ(ε) at ε = 1 over (b, m)")
    _png(fig, ctx.path(art, ".png"))
    files = [f"{art}.png", _write_grid(ctx, art, grid)]
    checks, errata = _bm_checks(grid)
    step = int(grid["m"][1] - grid["m"][0])
    return Result(
        shows="The data of Figure 5 as 3-D surfaces: (a), (b) η; (c), (d) δ' − δ with the "
              "Laplace mechanism; (e), (f) with the Gaussian mechanism; MUST.OW left, MUST.WW "
              "right.",
        parameters={"n": 1000, "eps": 1.0, "Δ/σ": 1.0, "m": "100 … 150", "b": "150 … 200",
                    "grid step": step},
        checks=checks, errata=[e for e in errata if e != "MUST-12"], files=files,
        notes=[f"Quick mode: grid step {step} instead of 1."] if step > 1 else [])


def _write_grid(ctx: Context, art: str, grid) -> str:
    rows = []
    for name in ("MUST.OW", "MUST.WW"):
        g = grid[name]
        for i, b in enumerate(grid["b"]):
            for j, m in enumerate(grid["m"]):
                rows.append([name, int(b), int(m), float(g["eta"][i, j]),
                             float(g["laplace"][i, j]), float(g["gaussian"][i, j])])
    return write_table(ctx, art, ["scheme", "b", "m", "eta", "delta_diff_laplace",
                                  "delta_diff_gaussian"], rows)


# =============================================================================================
# Tables 4, 6 and 8: the calibration of the utility experiments (their privacy columns)
# =============================================================================================


def eq9_sigma(eps: float, delta: float, sensitivity: float) -> tuple[float, bool]:
    """The paper's Eq. (9), σ = Δ √(2 log(1.25/δ)) / ε, as the paper uses it — also for ε ≥ 1,
    where it is *not* a valid calibration (footnote 4; erratum MUST-16). Returns ``(σ, valid)``;
    for ε < 1 the value is :func:`~privamp.mechanisms.gaussian.classical_gaussian_sigma`."""
    from ..mechanisms.gaussian import classical_gaussian_sigma

    if eps < 1.0:
        return classical_gaussian_sigma(eps, delta, sensitivity), True
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / eps, False


def _calibration_row(scheme, eps_prime: float, delta: float, sensitivity: float,
                     theta_sensitivity: float, relation: str = "substitute") -> dict[str, Any]:
    """One row of Tables 4/6/8: η, the base ε back-solved from ε', σ by Eq. (9), δ' by the
    paper's rule (η·δ for Poisson/WOR, the white-box multiplicity sum with θ_u = u ×
    ``theta_sensitivity``/σ for WR and MUST) and by the exact profile, and the analytic
    (valid) σ for the same (ε, δ)."""
    eta = float(scheme.eta)
    eps = float(deamplify_eps(eps_prime, eta))
    sigma, valid = eq9_sigma(eps, delta, sensitivity)
    mech = GaussianMechanism(sigma=sigma, sensitivity=theta_sensitivity, relation=relation)
    exact = float(amplify(mech, scheme).points([eps])["delta_amplified"][0])
    single = isinstance(scheme, Poisson | WithoutReplacement)
    paper_rule = eta * delta if single else exact
    analytic = GaussianMechanism.calibrated(eps, delta, sensitivity).sigma
    return {"eta": eta, "eps": eps, "sigma": sigma, "eq9_valid": valid,
            "delta_prime": paper_rule, "delta_prime_exact": exact, "sigma_analytic": analytic}


def _rows_cells(block: str, name: str, printed: dict[str, str], values: dict[str, float],
                errata: dict[str, str] | None = None,
                certified: dict[str, bool] | None = None):
    cells = []
    for quantity, text in printed.items():
        status, note = compare_printed(values[quantity], text,
                                       erratum=(errata or {}).get(quantity))
        cells.append(Cell(block, name, quantity, text, values[quantity], status, note,
                          (certified or {}).get(quantity)))
    return cells


@register("must-table4", paper=PAPER, kind="table", label="Table 4",
          title="σ of the base Gaussian mechanism and per-query δ' in utility experiment 1 "
                "(bootstrap)")
def table4(ctx: Context) -> Result:
    art = "must-table4"
    n, m, eps_prime = 300, 30, 0.1
    delta = 1.0 / n
    lo, hi = -4.0, 4.0
    sens_mu, sens_var = (hi - lo) / n, (hi - lo) ** 2 / n  # as printed (erratum MUST-15)
    cells, csv_rows, png_rows = [], [], []
    invalid = []
    for key, printed in pv.MUST_TABLE4.items():
        if isinstance(key, tuple):
            name, b = key
            scheme = (MustOW if name == "MUST.OW" else _published_ww)(n, b, m)
            label = f"{name}, b = {b}"
        else:
            name, label = key, key
            scheme = {"Poisson": Poisson(m / n), "WOR": WithoutReplacement(n, m),
                      "WR": WithReplacement(n, m)}[key]
        rel = "add-remove" if name == "Poisson" else "substitute"
        mu = _calibration_row(scheme, eps_prime, delta, sens_mu, sens_mu, rel)
        var = _calibration_row(scheme, eps_prime, delta, sens_var, sens_var, rel)
        if not mu["eq9_valid"]:
            invalid.append(label)
        values = {"σ (μ)": mu["sigma"], "σ (τ²)": var["sigma"], "δ'": mu["delta_prime"]}
        row_cells = _rows_cells("Table 4", label, dict(zip(values, printed, strict=True)),
                                values)
        cells += row_cells
        # the base ε budget rounded down, the σ (a calibration) up, δ' (bounds) up
        png_rows.append((label, [display.lower(mu["eps"], 4, notation="f"),
                                 display.calibrated(mu["sigma"], "sigma", 4, notation="f"),
                                 display.calibrated(var["sigma"], "sigma", 4, notation="f"),
                                 display.upper(mu["delta_prime"], 3),
                                 display.upper(mu["delta_prime_exact"], 3)],
                         [None] + [c.status for c in row_cells] + [None]))
        csv_rows.append([label, mu["eta"], mu["eps"], mu["sigma"], var["sigma"],
                         mu["delta_prime"], mu["delta_prime_exact"], mu["eq9_valid"],
                         mu["sigma_analytic"], var["sigma_analytic"]])
    files = [
        write_table(ctx, art, ["scheme", "eta", "eps_base", "sigma_mu_eq9", "sigma_tau2_eq9",
                               "delta_prime_paper_rule", "delta_prime_exact_profile",
                               "eq9_valid_eps_below_1", "sigma_mu_analytic",
                               "sigma_tau2_analytic"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, "MUST Table 4, regenerated: σ of the base Gaussian mechanism and δ'",
            ["base ε", "σ for μ", "σ for τ²", "δ' (paper's rule)", "δ' (exact profile)"],
            png_rows, col_width=1.45, first_width=1.7,
            footnote=f"n = {n}, m = {m}, ε' = {eps_prime}, δ = 1/{n}; ε from ε' by the scheme's "
                     "η; σ by Eq. (9) with the printed sensitivities (U − L)/n and (U − L)²/n, "
                     "[L, U] = [−4, 4]. δ' as the paper computes it: η·δ for Poisson/WOR, the "
                     "exact white-box sum for WR/MUST; last column: the exact profile for every "
                     f"scheme. Eq. (9) is not valid for ε ≥ 1 ({', '.join(invalid)}; erratum "
                     "MUST-16); the sensitivities should be divided by m, not n (MUST-15)."),
    ]
    return Result(
        shows="The calibration of the bootstrap experiment: for each scheme the base ε that "
              "gives ε' = 0.1 after amplification, the Gaussian noise σ of Eq. (9) for the "
              "sample mean and variance, and the per-query δ'.",
        parameters={"n": n, "m": m, "ε'": eps_prime, "δ": "1/300", "[L, U]": [lo, hi],
                    "b (MUST)": [10, 20, 30, 50, 100]},
        cells=cells, errata=["MUST-15", "MUST-16", "MUST-17"], files=files,
        notes=[f"Eq. (9) is applied as in the paper for ε ≥ 1 ({', '.join(invalid)}); "
               "must-table4.csv also gives the analytic Gaussian σ that is valid at every ε, "
               "and the exact δ' of Poisson/WOR (the paper's η·δ uses the nominal δ)."])


@register("must-table6", paper=PAPER, kind="table", label="Table 6 (σ and δ' columns)",
          title="σ of the base Gaussian mechanism and per-query δ' in utility experiment 2 "
                "(DP-SGD linear regression); the RMSE columns are must-table6-rmse")
def table6(ctx: Context) -> Result:
    art = "must-table6"
    n, b, m, clip = 1000, 200, 100, 3.0
    delta = 1.0 / n
    schemes = {"Poisson": Poisson(m / n), "WOR": WithoutReplacement(n, m),
               "WR": WithReplacement(n, m), "MUST.OW": MustOW(n, b, m),
               "MUST.WW": _published_ww(n, b, m)}
    cells, csv_rows, png_rows = [], [], []
    for name, scheme in schemes.items():
        texts, statuses = [], []
        for eps_prime, printed in pv.MUST_TABLE6[name].items():
            rel = "add-remove" if name == "Poisson" else "substitute"
            # σ calibrated for sensitivity C/n, δ' with θ_u = u·C/σ (erratum MUST-17)
            row = _calibration_row(scheme, eps_prime, delta, clip / n, clip, rel)
            values = {"σ": row["sigma"], "δ'": row["delta_prime"]}
            row_cells = _rows_cells(f"ε' = {eps_prime:g}", name,
                                    dict(zip(values, printed, strict=True)), values)
            cells += row_cells
            texts += [display.calibrated(row["sigma"], "sigma", 4, notation="f"),
                      display.upper(row["delta_prime"], 4)]
            statuses += [c.status for c in row_cells]
            csv_rows.append([name, eps_prime, row["eta"], row["eps"], row["sigma"],
                             row["delta_prime"], row["delta_prime_exact"],
                             row["sigma_analytic"]])
        png_rows.append((name, texts, statuses))
    files = [
        write_table(ctx, art, ["scheme", "eps_prime", "eta", "eps_base", "sigma_eq9",
                               "delta_prime_paper_rule", "delta_prime_exact_profile",
                               "sigma_analytic"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, "MUST Table 6, privacy columns regenerated: σ and per-query δ'",
            ["σ (ε' = 0.01)", "δ' (ε' = 0.01)", "σ (ε' = 0.001)", "δ' (ε' = 0.001)"],
            png_rows, col_width=1.55,
            footnote=f"n = {n}, b = {b}, m = {m}, C = {clip:g}, δ = 1/n; σ by Eq. (9) with "
                     "sensitivity C/n (should be C/m: erratum MUST-15); δ' = η·δ for "
                     "Poisson/WOR and the white-box sum with θ_u = u·C/σ for WR/MUST (the "
                     "paper's rules, MUST-17). The RMSE columns are regenerated by "
                     "must-table6-rmse."),
    ]
    return Result(
        shows="The privacy columns of Table 6: the Gaussian σ of DP-SGD's noisy gradient that "
              "gives a per-iteration ε' of 0.01 or 0.001 after amplification, and the "
              "per-iteration δ'. The mean RMSE columns are regenerated by must-table6-rmse "
              "(the DP-SGD experiment).",
        parameters={"n": n, "b": b, "m": m, "C": clip, "ε'": [0.01, 0.001], "δ": "1/n"},
        cells=cells, errata=["MUST-15", "MUST-17"], files=files)


@register("must-table8", paper=PAPER, kind="table", label="Table 8 (σ·m and δ_c columns)",
          title="σ·m and the Fourier-accountant bounds on δ(ε_c = 2) after 1,000 DP-SGD "
                "iterations (experiment 3); the prediction columns are must-table8-metrics")
def table8(ctx: Context) -> Result:
    from ..pld.fourier import MixturePLD, fourier_accountant

    art = "must-table8"
    n, b, m, clip, eps_prime, k, eps_c = 30969, 500, 300, 3.0, 0.0005, 1000, 2.0
    delta = 1.0 / n
    schemes = {"Poisson": Poisson(m / n), "WOR": WithoutReplacement(n, m),
               "WR": WithReplacement(n, m), "MUST.OW": MustOW(n, b, m),
               "MUST.WW": _published_ww(n, b, m)}
    cells, csv_rows, png_rows, estimates = [], [], [], []
    for name, scheme in schemes.items():
        eta = float(scheme.eta)
        eps = float(deamplify_eps(eps_prime, eta))
        sigma, _ = eq9_sigma(eps, delta, clip / n)
        sigma_m = sigma * m
        z = sigma_m / clip  # noise multiplier of the mean of m clipped gradients
        r = (2**15 if ctx.quick else (200_000 if name == "WR" else 300_000))
        source = (MixturePLD.poisson_pair(m / n, z) if name == "Poisson"
                  else MixturePLD.from_scheme(scheme, z))
        fa = fourier_accountant(source, count=k, eps=eps_c, L=6.0, r=r)
        proven = fa.certified  # the mixture pair dominates: Poisson and WOR only
        printed = dict(zip(("σ·m", "δ_c,L", "δ_c,U"), pv.MUST_TABLE8[name], strict=True))
        values = {"σ·m": sigma_m, "δ_c,L": fa.lower, "δ_c,U": fa.upper}
        row_cells = _rows_cells("Table 8", name, printed, values,
                                errata={"δ_c,L": "MUST-18", "δ_c,U": "MUST-18"},
                                certified={"δ_c,L": proven, "δ_c,U": proven})
        cells += row_cells
        png_rows.append((name, [display.calibrated(sigma_m, "sigma", 4, notation="f"),
                                display.lower(fa.lower, 3), display.upper(fa.upper, 3),
                                "yes: certified" if proven else "not proven: estimate"],
                         [c.status for c in row_cells] + [None]))
        csv_rows.append([name, eta, eps, sigma_m, z, r, fa.lower, fa.upper, proven])
        estimates.append({"what": f"{name}: δ_c bracket (Fourier accountant, mixture pair)",
                          "delta_lower": fa.lower, "delta_upper": fa.upper,
                          "certified": proven})
    files = [
        write_table(ctx, art, ["scheme", "eta", "eps_base", "sigma_times_m",
                               "noise_multiplier", "fa_grid_points", "fa_delta_lower",
                               "fa_delta_upper", "certified"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, "MUST Table 8, privacy columns regenerated: σ·m and δ(ε_c = 2), k = 1000",
            ["σ·m", "δ_c,L (FA)", "δ_c,U (FA)", "dominating pair?"], png_rows,
            col_width=1.7, first_width=1.5,
            footnote=f"n = {n:,}, b = {b}, m = {m}, C = {clip:g}, ε' = {eps_prime}, δ = 1/n; "
                     "σ by Eq. (9) with sensitivity C/n (MUST-15). δ_c: the Fourier accountant "
                     "(Algorithm 1 with every truncation and rounding term) on the paper's "
                     "mixture pair with noise multiplier σ·m/C (the paper does not state it), "
                     f"L = 6, r = {'2^15 (quick)' if ctx.quick else '2·10^5 (WR) / 3·10^5'}. "
                     "The mixture pair is a proven dominating pair for Poisson and WOR only: "
                     "the WR and MUST rows are estimates, not guarantees (last column). The "
                     "printed δ_c are not reproducible (erratum MUST-18)."),
    ]
    return Result(
        shows="The privacy columns of Table 8: σ·m of the logistic-regression DP-SGD (per-"
              "iteration ε' = 0.0005) and the bracket on the overall δ at ε_c = 2 after 1,000 "
              "iterations by the Fourier accountant (the paper's Algorithm 1 with its "
              "truncation and rounding terms) on the paper's mixture pairs: certified for "
              "Poisson and WOR, estimates for WR and MUST (their pair is not proven to "
              "dominate). The prediction metrics are regenerated by must-table8-metrics (the "
              "DP-SGD experiment on the Adult data).",
        parameters={"n": n, "b": b, "m": m, "C": clip, "ε'": eps_prime, "k": k, "ε_c": eps_c,
                    "FA grid": "L = 6, r = 2e5 (WR) / 3e5" if not ctx.quick
                    else "L = 6, r = 2^15 (quick)"},
        chosen={"noise multiplier fed to the accountant": "σ·m/C (the mean of m gradients "
                                                          "clipped to C; not stated)"},
        cells=cells, errata=["MUST-15", "MUST-18", "MUST-20"], files=files,
        values=estimates,
        notes=["With the natural noise multiplier the δ_c brackets are orders of magnitude above "
               "the printed values and above 1/n, so the text's 'every upper bound is below 1/n' "
               "does not hold either. For WR and MUST the mixture pair is not a proven "
               "dominating pair, so their δ_c are estimates; privamp's certified accountant "
               "(amplified profiles) gives δ(2) ≈ 0.5 here — no useful guarantee at this noise "
               "level."]
        + (["Quick mode: FA grid of 2^15 points."] if ctx.quick else []))


# =============================================================================================
# Tables 9 and 10: distinct records per subsample, and sampling time
# =============================================================================================

_T9_SCHEMES = ("Poisson", "WOR", "WR", "MUST.WO", "MUST.OW", "MUST.WW")


def _scheme_by_name(name: str, n: int, b: int, m: int):
    return {"Poisson": lambda: Poisson(m / n), "WOR": lambda: WithoutReplacement(n, m),
            "WR": lambda: WithReplacement(n, m), "MUST.WO": lambda: MustWO(n, b, m),
            "MUST.OW": lambda: MustOW(n, b, m), "MUST.WW": lambda: MustWW(n, b, m)}[name]()


@register("must-table9", paper=PAPER, kind="table", label="Table 9",
          title="number of distinct records in a subsample (min, mean, max over Monte-Carlo "
                "draws)")
def table9(ctx: Context) -> Result:
    art = "must-table9"
    reps = 1000 if ctx.quick else 10_000
    rng = ctx.rng(art)
    cells, csv_rows, png_rows = [], [], []
    means = {}
    for exp, ((n, b, m), printed) in pv.MUST_TABLE9.items():
        png_rows.append((f"§ experiment {exp}: (n, b, m) = ({n}, {b}, {m})", [], []))
        stats = {}
        for name in _T9_SCHEMES:
            scheme = _scheme_by_name(name, n, b, m)
            d = np.array([scheme.sample(n, rng).distinct for _ in range(reps)], dtype=float)
            stats[name] = (float(d.min()), float(d.mean()), float(d.max()), float(d.std()))
            csv_rows.append([exp, n, b, m, name, *stats[name], reps])
        means[exp] = {k: v[1] for k, v in stats.items()}
        for i, stat in enumerate(("min", "mean", "max")):
            texts, statuses = [], []
            for name in _T9_SCHEMES:
                lo, mean, hi, sd = stats[name]
                value = (lo, mean, hi)[i]
                if stat == "mean":
                    tol = 0.5 + 4.0 * sd / math.sqrt(reps)
                else:  # extremes of `reps` draws vary by about one standard deviation
                    tol = (2.0 if ctx.quick else 1.0) * sd + 1.5
                erratum = "MUST-9" if exp == 2 and name in ("MUST.OW", "MUST.WW") \
                    and stat in ("min", "mean") else None
                status, note = compare_printed(value, printed[name][i], erratum=erratum,
                                               tolerance=tol)
                cells.append(Cell(f"experiment {exp}", name, stat, printed[name][i], value,
                                  status, note or f"tolerance ±{tol:.1f}"))
                texts.append(f"{value:.1f}" if stat == "mean" else f"{value:.0f}")
                statuses.append(status)
            png_rows.append((stat, texts, statuses))
    swapped = all(
        abs(means[2][name] - float(pv.MUST_TABLE9[2][1][name][0])) <= 1.0
        for name in ("MUST.OW", "MUST.WW"))
    checks = [
        Check("Experiment 2: the printed MUST.OW/WW 'min' is the mean (min and mean swapped)",
              swapped, ", ".join(f"{k}: our mean {means[2][k]:.1f}, printed min "
                                 f"{pv.MUST_TABLE9[2][1][k][0]}" for k in ("MUST.OW", "MUST.WW"))),
        Check("MUST.WW has the fewest distinct records, then MUST.OW, then WR = MUST.WO, then "
              "WOR/Poisson (mean)",
              all(means[e]["MUST.WW"] < means[e]["MUST.OW"] < means[e]["WR"] < means[e]["WOR"]
                  for e in means)),
    ]
    files = [
        write_table(ctx, art, ["experiment", "n", "b", "m", "scheme", "min", "mean", "max",
                               "sd", "draws"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, f"MUST Table 9, regenerated: distinct records per subsample "
                      f"({reps:,} draws)", list(_T9_SCHEMES), png_rows, col_width=1.15,
            first_width=1.2,
            footnote="Subsamples drawn by privamp's samplers (NumPy generator, seeded). Yellow: "
                     "within Monte-Carlo tolerance (means: rounding + 4 standard errors; "
                     "extremes: about one standard deviation). Orange: experiment 2's MUST.OW/"
                     "WW 'min' and 'mean' are printed swapped (erratum MUST-9)."),
    ]
    return Result(
        shows="How many distinct records a subsample contains (the cost of a gradient step is "
              "proportional to it) for each scheme, as minimum, mean and maximum over "
              "Monte-Carlo draws.",
        parameters={"experiments (n, b, m)": [list(v[0]) for v in pv.MUST_TABLE9.values()],
                    "draws": reps},
        cells=cells, checks=checks, errata=["MUST-9"], files=files,
        notes=[f"Quick mode: {reps:,} draws instead of 10,000."] if ctx.quick else [])


@register("must-table10", paper=PAPER, kind="table", label="Table 10",
          title="time to draw one subsample relative to WOR (% increase)")
def table10(ctx: Context) -> Result:
    art = "must-table10"
    reps = 1000 if ctx.quick else 10_000
    rng = ctx.rng(art)
    order = ("WOR", "WR", "MUST.WW", "MUST.OW", "Poisson", "MUST.WO")
    cells, csv_rows, png_rows = [], [], []
    ours = {}
    for exp, ((n, b, m), _) in pv.MUST_TABLE9.items():
        times = {}
        for name in order:
            scheme = _scheme_by_name(name, n, b, m)
            best = math.inf
            for _ in range(3):
                start = time.perf_counter()
                for _ in range(reps):
                    scheme.sample(n, rng)
                best = min(best, (time.perf_counter() - start) / reps)
            times[name] = best
        pct = {k: 100.0 * (v / times["WOR"] - 1.0) for k, v in times.items()}
        ours[exp] = pct
        texts, statuses = [], []
        for name in order:
            printed = pv.MUST_TABLE10[exp].get(name, pv.MUST_TABLE10_WO[exp]
                                               if name == "MUST.WO" else None)
            cells.append(Cell(f"experiment {exp}", name, "% increase over WOR", printed,
                              pct[name], "not-compared",
                              "the paper times R's sample()/rbinom on its machine; privamp "
                              "times its NumPy samplers"))
            texts.append(f"{pct[name]:.0f} ({printed})")
            statuses.append("not-compared")
            csv_rows.append([exp, n, b, m, name, times[name] * 1e6, pct[name], printed])
        png_rows.append((f"({n}, {b}, {m})", texts, statuses))
    files = [
        write_table(ctx, art, ["experiment", "n", "b", "m", "scheme", "microseconds_per_draw",
                               "percent_over_wor", "paper_percent"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, "MUST Table 10: % more time than WOR to draw a subsample — privamp "
                      "(paper)", list(order), png_rows, col_width=1.3, first_width=1.6,
            footnote=f"privamp's NumPy samplers, best of 3 × {reps:,} draws on this machine; "
                     "in brackets the paper's R timings (MUST.WO from its footnote). Timings "
                     "depend on the implementation and machine: not compared. The text's "
                     "'305%' for Poisson in experiment 2 contradicts the table's 350.00 "
                     "(erratum MUST-10)."),
    ]
    fastest = all(min(p, key=p.get) == "WOR" for p in ours.values())
    return Result(
        shows="The relative cost of drawing one subsample with each scheme, with privamp's "
              "samplers, next to the paper's R timings.",
        parameters={"experiments (n, b, m)": [list(v[0]) for v in pv.MUST_TABLE9.values()],
                    "draws": reps},
        cells=cells, errata=["MUST-10"], files=files,
        notes=["Platform-dependent: the paper's numbers are R timings on the authors' machine. "
               f"With privamp's samplers WOR is {'' if fastest else 'not always '}the fastest."]
        + ([f"Quick mode: {reps:,} draws instead of 10,000."] if ctx.quick else []))


# =============================================================================================
# Figure S2: the Fourier accountant over k compositions (Supplement S7)
# =============================================================================================


@register("must-figS2", paper=PAPER, kind="figure", label="Figure S2",
          title="Fourier-accountant bounds on δ(ε = 1) over k compositions of the Gaussian "
                "mechanism ∘ MUST.OW (Supplement S7)")
def figure_s2(ctx: Context) -> Result:
    from ..accountant import Accountant
    from ..pld.fourier import MixturePLD, fourier_accountant

    art = "must-figS2"
    n, b, m, sigma, eps = 10_000, 118, 200, 4.0, 1.0
    L = 10.0
    r = 2**16 if ctx.quick else 500_000
    ks = np.array([200, 600, 1000] if ctx.quick else [200, 400, 600, 800, 1000])
    curves, rows, checks, values = [], [], [], []
    brackets = {}
    for name, scheme in (("MUST.OW", MustOW(n, b, m)), ("MUST.WW", MustWW(n, b, m))):
        pld = MixturePLD.from_scheme(scheme, sigma)
        got = [fourier_accountant(pld, count=int(k), eps=eps, L=L, r=r) for k in ks]
        lo = np.array([g.lower for g in got])
        hi = np.array([g.upper for g in got])
        brackets[name] = (lo, hi)
        # the mixture pair is not proven to dominate MUST: estimates, not bounds
        tag = "certified" if all(g.certified for g in got) else "estimate"
        curves.append(Curve(f"{name}: FA lower end ({tag})", ks, lo, marker="o", group=name))
        curves.append(Curve(f"{name}: FA upper end ({tag})", ks, hi, marker="^", group=name))
        rows += [[name, "Fourier accountant (mixture pair)", int(k), lo[i], hi[i],
                  got[i].certified] for i, k in enumerate(ks)]
        values += [{"what": f"{name}: Fourier accountant on the mixture pair", "k": int(k),
                    "delta_lower": lo[i], "delta_upper": hi[i], "certified": got[i].certified}
                   for i, k in enumerate(ks)]
    # privamp's certified accountant: the amplified profile of MUST.OW (the mixture pair puts
    # ±1 per copy, i.e. sensitivity 2 between neighbours under substitution)
    mech = GaussianMechanism(sigma, 2.0, "substitute")
    cert_ks = ks if not ctx.quick else ks[[0, -1]]
    cert = [Accountant(delta_error=0.05 if ctx.quick else None)
            .add(mech, int(k), scheme=MustOW(n, b, m)).delta(eps) for k in cert_ks]
    c_hi = np.array([c.upper for c in cert])
    curves.append(Curve("MUST.OW: privamp certified (amplified profile)", cert_ks, c_hi,
                        marker="s", color="0.25", style="--"))
    rows += [["MUST.OW", "privamp certified PLD (amplified profile)", int(k),
              "" if c.lower is None else c.lower, c.upper, True]
             for k, c in zip(cert_ks, cert, strict=True)]
    values += [{"what": "MUST.OW: privamp's PLD accountant (amplified profile)", "k": int(k),
                "delta_lower": c.lower, "delta_upper": c.upper, "certified": True}
               for k, c in zip(cert_ks, cert, strict=True)]
    lo, hi = brackets["MUST.OW"]
    checks.append(Check("The accountant runs for MUST.WW too (the paper: 'numerical errors')",
                        bool(np.all(np.isfinite(brackets["MUST.WW"][1]))),
                        f"MUST.WW bracket at k = {ks[-1]}: "
                        + display.bracket(brackets["MUST.WW"][0][-1], brackets["MUST.WW"][1][-1],
                                          3) + " (estimate: the mixture pair is not proven to "
                        "dominate MUST)"))
    checks.append(Check("lower ≤ upper and both grow with k",
                        bool(np.all(lo <= hi) and np.all(np.diff(lo) > 0)
                             and np.all(np.diff(hi) > 0))))
    checks.append(Check("privamp's certified bound is above the mixture pair's upper end "
                        "(the mixture pair is not proven to dominate MUST)",
                        bool(np.all(c_hi >= hi[np.isin(ks, cert_ks)])),
                        f"at k = {ks[-1]}: {display.upper(c_hi[-1], 3)} (certified) vs "
                        f"{display.upper(hi[-1], 3)} (estimate)"))
    panel = Panel("δ(ε = 1) after k compositions", "number of compositions k",
                  "δ(ε = 1)", curves, yscale="log", legend="lower right")
    files = write_panels(
        ctx, art, [panel], panel_size=(8.0, 5.2),
        suptitle="MUST Figure S2: Fourier accountant, Gaussian mechanism ∘ MUST.OW",
        footnote=f"n = {n:,}, m = {m}, b = {b} (= m^0.9), σ = {sigma:g} per copy, ε = 1; "
                 f"Fourier accountant on the paper's mixture pair with L = {L:g}, "
                 f"r = {r:,}" + (" (quick; the paper: 5·10^5)" if ctx.quick else "")
                 + ", with its truncation and rounding terms (which the paper's Algorithm 1 "
                 "omits, erratum MUST-20): estimates, since the mixture pair is not proven to "
                 "dominate MUST. MUST.WW added: the paper reports numerical errors for it "
                 "(MUST-S7). Grey: privamp's certified accountant for MUST.OW.")
    files.append(write_table(ctx, art, ["scheme", "method", "k", "delta_lower", "delta_upper",
                                        "certified"], rows, suffix="-values.csv"))
    return Result(
        shows="δ(ε = 1) after k compositions of the subsampled Gaussian mechanism (MUST.OW and "
              "MUST.WW) by the Fourier accountant on the paper's mixture pair (lower and upper "
              "discretisations) — estimates: the pair is not proven to dominate MUST — and "
              "privamp's certified bound for MUST.OW.",
        parameters={"n": n, "m": m, "b": b, "σ": sigma, "ε": eps, "L": L, "r": r,
                    "k": ks.tolist()},
        checks=checks, errata=["MUST-20", "MUST-S7"], files=files, values=values,
        notes=["The figure's plotted values are not printed in the paper; the catalogue's "
               "recomputed values (1.37e-8 … 1.23e-4) are the lower (left-endpoint) sums of "
               "this grid. The gap between the two ends is the grid drift k·Δx of the "
               "method. The Fourier-accountant values are estimates for MUST (\"certified\": "
               "false in the values of this record): the mixture pair is not proven to "
               "dominate every neighbouring pair."]
        + (["Quick mode: r = 2^16, k = 200, 600, 1000."] if ctx.quick else []))
