"""MUST Tables 9 and 10: the number of distinct records in a subsample and the time to draw
one, by privamp's samplers."""

from __future__ import annotations

import math
import time

import numpy as np

from ...sampling import MustOW, MustWO, MustWW, Poisson, WithoutReplacement, WithReplacement
from .. import paper_values as pv
from .._output import compare_printed, write_comparison, write_table, write_table_png
from .._registry import Cell, Check, Context, Result, register
from ._common import PAPER

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
    reps = 1000 if ctx.quick else 10_000
    rng = ctx.rng(ctx.artifact)
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
        write_table(ctx, ["experiment", "n", "b", "m", "scheme", "min", "mean", "max",
                               "sd", "draws"], csv_rows),
        write_comparison(ctx, cells),
        write_table_png(
            ctx, f"MUST Table 9, regenerated: distinct records per subsample "
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
    reps = 1000 if ctx.quick else 10_000
    rng = ctx.rng(ctx.artifact)
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
        write_table(ctx, ["experiment", "n", "b", "m", "scheme", "microseconds_per_draw",
                               "percent_over_wor", "paper_percent"], csv_rows),
        write_comparison(ctx, cells),
        write_table_png(
            ctx, "MUST Table 10: % more time than WOR to draw a subsample — privamp "
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
