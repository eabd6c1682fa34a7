"""MUST Tables 6 (RMSE columns) and 7 and Figure 6: DP-SGD linear regression (utility
experiment 2), at the paper's noise and at noise valid for the stated ε'."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import display
from ...plots import Curve, Panel
from .. import paper_values as pv
from .._output import compare_printed, write_comparison, write_panels, write_table, write_table_png
from .._registry import Cell, Check, Context, Result, register
from ._common import PAPER, _worst
from .experiments import linear_experiment, make_scheme
from .utility import (
    COLOURS,
    DPSGD_SCHEMES,
    LIN_B,
    LIN_BETA,
    LIN_C,
    LIN_EPS,
    LIN_LR,
    LIN_M,
    LIN_N,
    LIN_T,
    NOISE_LABEL,
    NOISES,
    _eps_csv,
    _eps_text,
    _mc_tolerance,
    _ms,
    _seed,
    _sigma_text,
    paper_epsilon,
    paper_noise_multiplier,
    paper_sigma,
)

# =============================================================================================
# Tables 6 (RMSE columns) and 7, Figure 6: DP-SGD linear regression (utility experiment 2)
# =============================================================================================



def _linear_runs(ctx: Context) -> dict[str, Any]:
    """Every DP-SGD linear-regression run of Tables 6, 7 and Figure 6 (shared within a run):
    noise ∈ {paper, valid} × ε' × scheme, each over the same simulated data sets (one seed: the
    first data set, whose loss curves Figure 6 draws, is common to all), and the non-private
    Poisson baseline."""

    def compute():
        repeats = 5 if ctx.quick else 200
        seed = _seed(ctx, "must-linear")
        common = {"n": LIN_N, "b": LIN_B, "m": LIN_M, "steps": LIN_T, "clip_norm": LIN_C,
                  "learning_rate": LIN_LR, "repeats": repeats, "seed": seed,
                  "coefficients": LIN_BETA, "loss_curve": True}
        runs: dict[tuple[str, float, str], dict[str, Any]] = {}
        for eps_prime in LIN_EPS:
            for kind, name in DPSGD_SCHEMES.items():
                scheme = make_scheme(kind, n=LIN_N, m=LIN_M, b=LIN_B)
                sigma = paper_sigma(scheme, eps_prime, 1.0 / LIN_N, LIN_C / LIN_N)
                first = (eps_prime, kind) == (LIN_EPS[0], "poisson")
                z = paper_noise_multiplier(scheme, sigma, LIN_M, LIN_C)
                run = linear_experiment(kind, noise_multiplier=z, baseline=first,
                                        account_privacy=False, **common)
                run["accounted"] = not ctx.quick  # the accountant is the slow part
                run["epsilon"] = (None if ctx.quick else
                                  paper_epsilon(scheme, z, LIN_C, LIN_T, 1.0 / LIN_N))
                run["paper_sigma"] = sigma
                runs[("paper", eps_prime, name)] = run
                runs[("valid", eps_prime, name)] = linear_experiment(
                    kind, step_epsilon=eps_prime, baseline=False, **common)
        baseline = runs[("paper", LIN_EPS[0], "Poisson")]["baseline"]
        return {"repeats": repeats, "seed": seed, "runs": runs, "baseline": baseline}

    return ctx.memo("must-linear-runs", compute)


def _linear_parameters(lin: dict[str, Any]) -> dict[str, Any]:
    return {"n": LIN_N, "b": LIN_B, "m": LIN_M, "T": LIN_T, "C": LIN_C,
            "learning rate": LIN_LR, "β": list(LIN_BETA), "initial β": [-1, -1, -1],
            "ε' per iteration": list(LIN_EPS), "δ": "1/n", "data sets": lin["repeats"]}


_LIN_NOTE = ("The paper's σ (Eq. (9) with sensitivity C/n on the averaged gradient) is about "
             "n/m = 10 times too small for its ε' (erratum MUST-15); σ valid for ε': privamp's "
             "DP-SGD with per-copy sensitivity 2C (C for Poisson) of the clipped sum divided by "
             "m, calibrated exactly. MUST.WW is sampled as MUST.WW (the authors' code sampled "
             "MUST.OW, erratum MUST-19).")


@register("must-table6-rmse", paper=PAPER, kind="table", label="Table 6 (RMSE columns)",
          title="DP-SGD linear regression: mean (SD) RMSE of ŷ over simulated data sets")
def table6_rmse(ctx: Context) -> Result:
    lin = _linear_runs(ctx)
    runs, repeats, base = lin["runs"], lin["repeats"], lin["baseline"]
    cells, csv_rows, png_rows = [], [], []

    def compare(row, column, ours_mean, ours_sd, printed):
        out = []
        for j, (what, value) in enumerate((("mean", ours_mean), ("SD", ours_sd))):
            tol = _mc_tolerance(ours_sd, repeats, float(printed[1]), 200, what)
            status, note = compare_printed(value, printed[j], tolerance=tol)
            cells.append(Cell(row, column, f"RMSE {what}", printed[j], value, status,
                              note or f"tolerance ±{tol:.4f}"))
            out.append(status)
        return _worst(*out)

    for eps_prime in LIN_EPS:
        png_rows.append((f"§ ε' = {eps_prime:g} per iteration", [], []))
        for name in DPSGD_SCHEMES.values():
            printed = pv.MUST_TABLE6_RMSE[name][eps_prime]
            p, v = runs[("paper", eps_prime, name)], runs[("valid", eps_prime, name)]
            status = compare(name, f"ε' = {eps_prime:g}", p["rmse"], p["rmse_sd"], printed)
            png_rows.append((name, [f"{printed[0]} ({printed[1]})",
                                    _ms(p["rmse"], p["rmse_sd"]), _ms(v["rmse"], v["rmse_sd"]),
                                    f"{_sigma_text(p)} → {_sigma_text(v)}",
                                    f"{_eps_text(p)} → {display.upper(v['epsilon'], 3)}"],
                             [None, status, None, None, None]))
            for noise, r in (("paper", p), ("valid", v)):
                csv_rows.append([name, eps_prime, NOISE_LABEL[noise], repeats, r["rmse"],
                                 r["rmse_sd"], r["sigma_averaged_gradient"], r["noise_multiplier"],
                                 _eps_csv(r), *printed])
    printed = pv.MUST_TABLE6_RMSE_NONPRIVATE
    png_rows.append(("§ no noise", [], []))
    status = compare("non-private Poisson", "—", base["rmse"], base["rmse_sd"], printed)
    png_rows.append(("non-private Poisson", [f"{printed[0]} ({printed[1]})",
                                             _ms(base["rmse"], base["rmse_sd"]), "", "", ""],
                     [None, status, None, None, None]))
    csv_rows.append(["non-private Poisson", "", "none", repeats, base["rmse"], base["rmse_sd"],
                     0.0, 0.0, "", *printed])
    # the paper's claims, at both noise levels
    checks, errata = [], ["MUST-15", "MUST-19"]
    for noise in NOISES:
        for eps_prime in LIN_EPS:
            worst = max(runs[(noise, eps_prime, s)]["rmse"] for s in DPSGD_SCHEMES.values())
            holds = worst <= 1.1 * base["rmse"]
            checks.append(Check(
                f"{NOISE_LABEL[noise]}, ε' = {eps_prime:g}: the DP-SGD mean RMSE is only "
                "slightly larger than the non-private one (within 10%)", holds,
                f"largest {worst:.3f} vs non-private {base['rmse']:.3f}"))
            if not holds and "MUST-U1" not in errata:
                errata.append("MUST-U1")
    paper_runs = [runs[("paper", e, s)] for e in LIN_EPS for s in DPSGD_SCHEMES.values()]
    if ctx.quick:
        eps_note = ("Quick mode: the privacy of the runs with the paper's noise is not "
                    "accounted (the full mode gives it).")
    else:
        eps = [math.inf if r["epsilon"] is None else r["epsilon"] for r in paper_runs]
        eps_note = (f"With the paper's noise the 200 iterations are "
                    f"({display.upper(min(eps), 2)} … {display.upper(max(eps), 3)}, 1/n)-DP "
                    "by privamp's accountant, against ε' = 0.01 or "
                    "0.001 per iteration.")
    files = [
        write_table(ctx, ["scheme", "eps_prime", "noise", "data_sets", "rmse_mean",
                               "rmse_sd", "sigma_averaged_gradient", "noise_multiplier",
                               "epsilon_run_at_delta_1_over_n", "paper_rmse_mean",
                               "paper_rmse_sd"], csv_rows),
        write_comparison(ctx, cells),
        write_table_png(
            ctx, f"MUST Table 6 (RMSE columns), regenerated: mean (SD) RMSE of ŷ over "
                      f"{repeats} data sets",
            ["printed", "privamp, paper's σ", "privamp, σ valid for ε'",
             "σ: paper's → valid", "run's ε: paper's σ → valid"], png_rows, col_width=1.9,
            first_width=1.8,
            footnote=f"n = {LIN_N}, b = {LIN_B}, m = {LIN_M}, T = {LIN_T}, C = {LIN_C:g}, "
                     f"learning rate {LIN_LR}, β = (1, 0.5, 0.2), initial β = (−1, −1, −1), "
                     "RMSE = √(mean training MSE of the last 16 iterations). Coloured: the run "
                     "with the paper's noise, compared with the print within Monte-Carlo "
                     "tolerance. σ: standard deviation of the noise on the averaged gradient. "
                     "Run's ε: privamp's accountant, all T iterations, δ = 1/n. " + _LIN_NOTE),
    ]
    return Result(
        shows="The prediction error of DP-SGD linear regression (RMSE of ŷ on the training "
              "data) for each scheme at ε' = 0.01 and 0.001 per iteration, with the paper's "
              "noise (compared with the print) and with noise valid for ε', and the privacy "
              "the whole run really has.",
        parameters=_linear_parameters(lin),
        chosen={"data sets": f"{repeats} (the paper: 200)"} if ctx.quick else {},
        cells=cells, checks=checks, errata=errata, files=files,
        notes=[eps_note, "The σ and δ' columns of Table 6 are regenerated by must-table6.",
               _LIN_NOTE]
        + ([f"Quick mode: {repeats} data sets instead of 200."] if ctx.quick else []))


@register("must-table7", paper=PAPER, kind="table", label="Table 7",
          title="DP-SGD linear regression: bias and RMSE of the coefficients (β̂0, β̂1, β̂2)")
def table7(ctx: Context) -> Result:
    lin = _linear_runs(ctx)
    runs, repeats, base = lin["runs"], lin["repeats"], lin["baseline"]
    cells, csv_rows, png_rows = [], [], []

    def compare(row, column, coef, printed):
        statuses = []
        for k, what in ((0, "bias"), (1, "RMSE")):
            ours = coef["bias"] if k == 0 else coef["rmse"]
            for j in range(3):
                rmse_p = float(printed[1][j])
                tol = _mc_tolerance(coef["rmse"][j], repeats, rmse_p, 200,
                                    "mean" if k == 0 else "sd")
                status, note = compare_printed(ours[j], printed[k][j], tolerance=tol)
                cells.append(Cell(row, column, f"{what} of β̂{j}", printed[k][j], ours[j],
                                  status, note or f"tolerance ±{tol:.4f}"))
                statuses.append(status)
        return _worst(*statuses[:3]), _worst(*statuses[3:])

    def triple(values, digits):
        return ", ".join(f"{v:.{digits}f}" for v in values)

    for eps_prime in LIN_EPS:
        png_rows.append((f"§ ε' = {eps_prime:g} per iteration", [], []))
        for name in DPSGD_SCHEMES.values():
            printed = pv.MUST_TABLE7[name][eps_prime]
            p, v = runs[("paper", eps_prime, name)], runs[("valid", eps_prime, name)]
            s_bias, s_rmse = compare(name, f"ε' = {eps_prime:g}", p["coefficients"], printed)
            pc, vc = p["coefficients"], v["coefficients"]
            png_rows.append((name, [", ".join(printed[0]), triple(pc["bias"], 4),
                                    triple(vc["bias"], 3), ", ".join(printed[1]),
                                    triple(pc["rmse"], 3), triple(vc["rmse"], 3)],
                             [None, s_bias, None, None, s_rmse, None]))
            for noise, c in (("paper", pc), ("valid", vc)):
                csv_rows.append([name, eps_prime, NOISE_LABEL[noise], repeats, *c["bias"],
                                 *c["rmse"], *printed[0], *printed[1]])
    printed = pv.MUST_TABLE7_NONPRIVATE
    bc = base["coefficients"]
    s_bias, s_rmse = compare("non-private Poisson", "—", bc, printed)
    png_rows.append(("§ no noise", [], []))
    png_rows.append(("non-private Poisson", [", ".join(printed[0]), triple(bc["bias"], 4), "",
                                             ", ".join(printed[1]), triple(bc["rmse"], 3), ""],
                     [None, s_bias, None, None, s_rmse, None]))
    csv_rows.append(["non-private Poisson", "", "none", repeats, *bc["bias"], *bc["rmse"],
                     *printed[0], *printed[1]])
    checks, errata = [], ["MUST-15", "MUST-19"]
    for noise in NOISES:
        ok = all(abs(runs[(noise, e, s)]["coefficients"]["bias"][j])
                 <= 4 * runs[(noise, e, s)]["coefficients"]["rmse"][j] / math.sqrt(repeats)
                 for e in LIN_EPS for s in DPSGD_SCHEMES.values() for j in range(3))
        checks.append(Check(f"{NOISE_LABEL[noise]}: the biases are all close to 0 (within "
                            "four standard errors)", ok))
        ratio = [runs[(noise, 0.001, s)]["coefficients"]["rmse"][j]
                 / runs[(noise, 0.01, s)]["coefficients"]["rmse"][j]
                 for s in DPSGD_SCHEMES.values() for j in range(3)]
        checks.append(Check(f"{NOISE_LABEL[noise]}: the RMSE is larger at ε' = 0.001 than at "
                            "0.01", min(ratio) > 1.0,
                            f"ratio {min(ratio):.2f} … {max(ratio):.2f}"))
    if not ctx.quick:  # needs the full number of data sets to be resolved
        must = [runs[("paper", 0.001, s)]["coefficients"]["rmse"][j]
                for s in ("MUST.OW", "MUST.WW") for j in range(3)]
        rest = [runs[("paper", 0.001, s)]["coefficients"]["rmse"][j]
                for s in ("Poisson", "WOR", "WR") for j in range(3)]
        checks.append(Check("Paper's σ, ε' = 0.001: the RMSE with MUST.OW and MUST.WW is "
                            "noticeably smaller than with the other schemes",
                            max(must) < min(rest),
                            f"MUST {min(must):.3f} … {max(must):.3f}, others {min(rest):.3f} "
                            f"… {max(rest):.3f}"))
    worst = max(runs[("valid", 0.001, s)]["coefficients"]["rmse"][j]
                for s in DPSGD_SCHEMES.values() for j in range(3))
    files = [
        write_table(ctx, ["scheme", "eps_prime", "noise", "data_sets", "bias_b0",
                               "bias_b1", "bias_b2", "rmse_b0", "rmse_b1", "rmse_b2",
                               "paper_bias_b0", "paper_bias_b1", "paper_bias_b2",
                               "paper_rmse_b0", "paper_rmse_b1", "paper_rmse_b2"], csv_rows),
        write_comparison(ctx, cells),
        write_table_png(
            ctx, f"MUST Table 7, regenerated: bias and RMSE of (β̂0, β̂1, β̂2) over "
                      f"{repeats} data sets",
            ["bias: printed", "bias: paper's σ", "bias: valid σ", "RMSE: printed",
             "RMSE: paper's σ", "RMSE: valid σ"], png_rows, col_width=2.15, first_width=1.8,
            footnote=f"β = (1, 0.5, 0.2); n = {LIN_N}, b = {LIN_B}, m = {LIN_M}, T = {LIN_T}, "
                     f"C = {LIN_C:g}, learning rate {LIN_LR}; bias = mean of β̂ − β, RMSE = "
                     "√mean (β̂ − β)² over the data sets. Coloured: the run with the paper's "
                     "noise, compared with the print (tolerance: four standard errors of the "
                     "two Monte-Carlo estimates). " + _LIN_NOTE),
    ]
    return Result(
        shows="How well DP-SGD linear regression recovers the coefficients: bias and RMSE of "
              "each β̂ over the simulated data sets, per scheme and ε', with the paper's noise "
              "(compared with the print) and with noise valid for ε'.",
        parameters=_linear_parameters(lin),
        chosen={"data sets": f"{repeats} (the paper: 200)"} if ctx.quick else {},
        cells=cells, checks=checks, errata=errata, files=files,
        notes=[f"With noise valid for ε' = 0.001 per iteration the coefficients' RMSE reaches "
               f"{worst:.2f} (the paper's σ: ≈ 0.1–0.17).", _LIN_NOTE]
        + ([f"Quick mode: {repeats} data sets instead of 200; the comparison of MUST with "
            "the other schemes needs the full run."] if ctx.quick else []))


@register("must-fig6", paper=PAPER, kind="figure", label="Figure 6",
          title="training loss of DP-SGD linear regression on one data set, ε' = 0.01 and 0.001")
def figure6(ctx: Context) -> Result:
    lin = _linear_runs(ctx)
    runs, base = lin["runs"], lin["baseline"]
    panels, checks, errata = [], [], ["MUST-15", "MUST-19"]
    tail = 16
    base_curve = base["loss_curve"]
    base_tail = float(np.mean(base_curve["loss"][-tail:]))
    letters = iter("abcd")
    for noise in NOISES:
        for eps_prime in LIN_EPS:
            curves = [Curve("Poisson (non-private)", base_curve["steps"], base_curve["loss"],
                            color=COLOURS["non-private"], style="--", linewidth=2.2)]
            finals = {}
            decreasing = True
            for name in DPSGD_SCHEMES.values():
                c = runs[(noise, eps_prime, name)]["loss_curve"]
                curves.append(Curve(name, c["steps"], c["loss"], color=COLOURS[name],
                                    linewidth=1.4))
                finals[name] = float(np.mean(c["loss"][-tail:]))
                decreasing &= finals[name] < c["loss"][0]
            top = max(max(c.y) for c in curves)
            log = top > 1.2 * base_curve["loss"][0]  # the loss grows: a log scale shows it
            title = (f"({next(letters)}) ε' = {eps_prime:g}, "
                     + ("the paper's σ" if noise == "paper" else "σ valid for ε' (privamp)"))
            panels.append(Panel(title, "iteration t", "training loss (MSE)", curves,
                                yscale="log" if log else "linear",
                                ylim=(0.8, 6 * top) if log else (0.0, 10.0),
                                legend="upper right", hlines=[(1.0, "noise variance")]))
            label = f"{NOISE_LABEL[noise]}, ε' = {eps_prime:g}"
            checks.append(Check(f"{label}: every training loss decreases (mean of the last "
                                f"{tail} iterations below the initial loss)", decreasing,
                                ", ".join(f"{k} {v:.2f}" for k, v in finals.items())))
            similar = max(finals.values()) <= 1.25 * base_tail
            checks.append(Check(f"{label}: all schemes converge to about the non-private level "
                                "(final loss within 25% of it)", similar,
                                f"largest {max(finals.values()):.2f} vs non-private "
                                f"{base_tail:.2f}"))
            if not similar and "MUST-U1" not in errata:
                errata.append("MUST-U1")
    files = write_panels(
        ctx, panels, ncols=2, panel_size=(6.2, 4.4),
        suptitle="MUST Figure 6: training loss of DP-SGD linear regression on one data set",
        footnote=f"n = {LIN_N}, b = {LIN_B}, m = {LIN_M}, T = {LIN_T}, C = {LIN_C:g}, learning "
                 f"rate {LIN_LR}, initial β = (−1, −1, −1); loss = mean squared error on the "
                 "n training points after each iteration (a non-private diagnostic). Top: the "
                 "noise the paper used (Eq. (9) with sensitivity C/n, erratum MUST-15), as in "
                 "the paper; bottom: noise valid for the stated ε' per iteration (privamp's "
                 "DP-SGD), log scale where it is needed. MUST.WW is sampled as MUST.WW "
                 "(erratum MUST-19).")
    return Result(
        shows="The training loss of DP-SGD linear regression over the 200 iterations on one "
              "simulated data set, per scheme, for ε' = 0.01 and 0.001 per iteration: with the "
              "paper's noise (as in the paper) and with noise valid for ε'.",
        parameters={**_linear_parameters(lin), "data sets": 1},
        chosen={"data set": "the first of the Table 6/7 runs (same seed for every curve)"},
        checks=checks, errata=errata, files=files)
