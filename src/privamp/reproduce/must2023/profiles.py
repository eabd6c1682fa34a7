"""MUST Table 3 and Figures 3, 4 and S3: the amplified privacy profiles of the Laplace and
Gaussian mechanisms after WOR, WR, MUST.OW and MUST.WW (Theorem 5, white-box group privacy),
their aligned profiles and the regions of Definition 5."""

from __future__ import annotations

import numpy as np

from ... import display
from ...amplification.subsampling import amplify
from ...plots import Curve, Panel, aligned_panel
from .. import paper_values as pv
from .._output import (
    compare_printed,
    printed_unit,
    write_comparison,
    write_panels,
    write_table,
    write_table_png,
)
from .._registry import Cell, Check, Context, Result, register
from ._common import (
    _MECH_LABEL,
    PAPER,
    SCHEME_NAMES,
    B,
    M,
    N,
    _mechanism,
    _printed_delta,
    _schemes,
    _worst,
)

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
        write_table(ctx, ["block", "row", "base_eps", "eps_or_eps_amplified",
                               "delta_or_delta_amplified"], csv_rows),
        write_comparison(ctx, cells),
        write_table_png(
            ctx, "MUST Table 3, regenerated: (ε, δ) of M and (ε', δ'(ε')) of M∘S",
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
    from ...amplification.tightness import aligned_profile

    def compute():
        mech = _mechanism(kind, ratio)
        return {name: aligned_profile(amplify(mech, s), EPS_GRID)
                for name, s in _schemes().items()}

    return ctx.memo(f"must-aligned-{kind}-{ratio}", compute)


@register("must-fig4", paper=PAPER, kind="figure", label="Figure 4",
          title="aligned privacy profiles ε'/ε against δ' − δ, Laplace and Gaussian, WOR, WR, "
                "MUST.OW, MUST.WW")
def figure4(ctx: Context) -> Result:
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
        ctx, panels, ncols=2, panel_size=(6.0, 4.4),
        suptitle="MUST Figure 4: aligned privacy profiles (ε'/ε, δ'(ε') − δ(ε)), "
                 "base ε = 0.01 … 6",
        footnote="n = 1000, m = 400, b = 500 (as in the paper); substitution relation (Δ: "
                 "the sensitivity under substitution); white-box group profiles; "
                 "MUST.WO is identical to WR (Corollary 6) and not drawn; axis limits as in "
                 "the authors' code.\nδ' = δ counts as strong (WOR with Laplace is 'strong' "
                 "where both are 0; Definition 5's typos corrected from Figure 3, erratum "
                 "MUST-2).")
    files.append(write_table(ctx, ["mechanism", "Δ/σ", "scheme", "strong", "weak-I",
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
    from ...amplification.tightness import classify_amplification

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
        ctx, [panel], panel_size=(7.5, 5.0),
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
        ctx, panels, ncols=3, panel_size=(5.0, 4.4),
        suptitle="MUST Figure S3: ε' vs ε (any mechanism) and δ' vs δ (Laplace, Gaussian)",
        footnote="n = 1000, m = 400, b = 500; base ε = 0.01 … 6; white-box group profiles; "
                 "axis limits as in the authors' code. MUST.WO is identical to WR "
                 "(Corollary 6).")
    files.append(write_table(ctx, ["what", "mechanism", "scheme(s)", "base_eps", "delta",
                                        "delta_amplified"], rows, suffix="-crossings.csv"))
    files.append(write_comparison(ctx, cells))
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
