"""Zhao & Liu (2023), *MUST*: the utility experiments of §4.2 — the DP subsampling bootstrap
and DP-SGD linear and logistic regression.

===================  ==========================================================================
artifact             what
===================  ==========================================================================
must-table5          Table 5, DP bootstrap of μ and τ²: mean (SD) over simulated data sets
must-table6-rmse     Table 6, RMSE columns: DP-SGD linear regression, mean (SD) RMSE of ŷ
must-table7          Table 7, bias and RMSE of the DP-SGD linear-regression coefficients
must-table8-metrics  Table 8, prediction columns: DP-SGD logistic regression on Adult (reads
                     ``--data``)
must-fig6            Figure 6, training loss of DP-SGD linear regression on one data set
must-figS4           Figure S4, training loss of DP-SGD logistic regression on Adult (reads
                     ``--data``)
===================  ==========================================================================

Every experiment is run twice, at two noise levels, with privamp's applications
(:mod:`privamp.applications.experiments`):

* **the paper's σ** — the noise the paper added: σ of its Eq. (9) at the back-solved base ε,
  with the sensitivity divided by n (C/n, (U − L)/n, (U − L)²/n), on the *averaged* statistic.
  That is about n/m times too little noise for the stated per-query ε' (erratum MUST-15). The
  printed utilities are compared with this run, cell by cell, within Monte-Carlo tolerance; the
  accountant says what privacy the run really has (its ε over the whole run at δ = 1/n);
* **a σ valid for the stated ε'** — privamp's applications as they are: per-subsample
  sensitivities, the exact Gaussian calibration at the back-solved ε, every step accounted. This
  is the utility one actually gets at the paper's privacy level; it is shown next to the print
  (not compared: the print is not about it), and the paper's claims are checked on it.

The bootstrap at the paper's σ also needs the paper's *estimator* (the subsample mean and the
sample variance of each subsample, noised and averaged; :func:`paper_bootstrap`): privamp's
:class:`~privamp.applications.DpBootstrap` releases moments about a public centre with a fixed
divisor and removes the downward bias of MUST with small b (Table 5: 0.886 for b = 10), so it
would not reproduce the print even at the paper's noise.

On the Adult data the paper's metrics come from the label itself being a feature (erratum
MUST-14): the artifact is run with the label excluded (accuracy ≈ 0.76, the majority class is
0.74) and, as evidence for the erratum, with it kept, which reproduces the print. The data are
read from the file given to ``privamp reproduce --data`` (never downloaded).

Repeats: the paper uses 200 data sets per cell (one run for Adult); the full mode uses 200 (5
runs per Adult cell), the quick (CI) mode 5–10 (1–2); every artifact states its counts and
derives its Monte-Carlo tolerances from them (:func:`_mc_tolerance`). The runs are shared within
a ``privamp reproduce`` run: Tables 6, 7 and Figure 6 read one set of linear-regression runs,
Table 8 and Figure S4 one set of logistic ones (``Context.memo``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import display
from ..amplification.subsampling import deamplify_eps
from ..applications.experiments import (
    bootstrap_experiment,
    linear_experiment,
    logistic_experiment,
    make_scheme,
)
from ..applications.privacy import resolve_relations
from ..errors import NumericalError
from ..plots import Curve, Panel
from ..relations import clipped_sum_sensitivity
from . import paper_values as pv
from ._output import compare_printed, write_comparison, write_panels, write_table, write_table_png
from ._registry import Cell, Check, Context, Result, register
from .must2023 import eq9_sigma

__all__ = ["paper_bootstrap", "paper_epsilon", "paper_noise_multiplier", "paper_sigma"]

PAPER = "must2023"
ADULT = ("the MUST authors' preprocessed Adult CSV (41,292 rows, 13 features and income; "
         "e.g. ../shared/data/adult_processed.csv)")

#: The schemes of Tables 6–8 in print order: privamp's name → the paper's.
DPSGD_SCHEMES = {"poisson": "Poisson", "wor": "WOR", "wr": "WR", "must-ow": "MUST.OW",
                 "must-ww": "MUST.WW"}
#: The paper's colours (the authors' R code), for Figures 6 and S4.
COLOURS = {"non-private": "black", "Poisson": "#8c510a", "WOR": "#2ca02c", "WR": "#1f5fbf",
           "MUST.OW": "#d62728", "MUST.WW": "#7b3294"}


def _seed(ctx: Context, name: str) -> int:
    """An integer seed for an application run, from the run's seed and ``name``."""
    return int(ctx.rng(name).integers(2**31 - 1))


def paper_sigma(scheme, eps_prime: float, delta: float, sensitivity: float) -> float:
    """The paper's Gaussian σ for a per-query ε' after amplification by ``scheme``: the base
    ε = log(1 + (e^{ε'} − 1)/η), then Eq. (9) σ = Δ√(2 log(1.25/δ))/ε with the paper's
    sensitivity Δ (divided by n: erratum MUST-15; Eq. (9) is applied also where ε ≥ 1,
    erratum MUST-16). Reproduces Tables 4, 6 and 8 (see must-table4, must-table6,
    must-table8).

    >>> from privamp.sampling import WOR
    >>> round(paper_sigma(WOR(300, 30), 0.1, 1 / 300, 8 / 300), 4)  # Table 4, σ(μ): 0.13
    0.1278
    """
    eps = float(deamplify_eps(eps_prime, float(scheme.eta)))
    return eq9_sigma(eps, delta, sensitivity)[0]


def paper_noise_multiplier(scheme, sigma_mean: float, batch: float, clip: float) -> float:
    """The noise multiplier z that makes privamp's DP-SGD add the paper's noise: the paper adds
    N(0, σ²) to the *averaged* clipped gradient; privamp adds N(0, (zΔ)²) to the *sum* and
    divides by the expected batch size B, so zΔ = σB, with Δ the per-copy sensitivity of the
    sum under the scheme's base relation (C for Poisson under add/remove, 2C otherwise).

    >>> from privamp.sampling import WOR
    >>> round(paper_noise_multiplier(WOR(1000, 100), 0.1183, 100, 3.0), 4)  # Table 6, ε' = 0.01
    1.9717
    """
    _, base = resolve_relations(scheme, None)
    return sigma_mean * batch / clipped_sum_sensitivity(clip, base)


def paper_epsilon(scheme, noise_multiplier: float, clip: float, steps: int,
                  delta: float) -> float | None:
    """What privamp's accountant certifies for ``steps`` DP-SGD iterations at the paper's noise
    (the statement :class:`~privamp.applications.DPSGD` would make): ε at ``delta`` on the whole
    data set, or ``None`` when no finite ε can be certified (one step's privacy loss overflows
    e^700: the MUST schemes at the paper's σ·m on Adult).

    >>> from privamp.sampling import WOR
    >>> round(paper_epsilon(WOR(1000, 100), 1.9717, 3.0, 200, 1e-3), 2)  # ε' = 0.01 per step
    2.67
    """
    from ..applications.privacy import account
    from ..mechanisms.gaussian import GaussianMechanism

    outer, base = resolve_relations(scheme, None)
    sens = clipped_sum_sensitivity(clip, base)
    mech = GaussianMechanism(noise_multiplier * sens, sens, base)
    try:
        return account(mech, scheme=scheme, steps=steps, delta=delta, relation=outer).epsilon
    except NumericalError:
        return None


def _eps_text(run: dict[str, Any]) -> str:
    """A run's ε for a table cell: the value, "no bound" (nothing certifiable) or "—" (not
    accounted: the paper's-σ runs in quick mode)."""
    if not run.get("accounted", True):
        return "—"
    return "no bound" if run["epsilon"] is None else display.upper(run["epsilon"], 3)


def _sigma_text(run: dict[str, Any]) -> str:
    """A run's σ on the averaged gradient for a table cell, rounded up (more noise)."""
    return display.calibrated(run["sigma_averaged_gradient"], "sigma", 3, notation="f")


def _eps_csv(run: dict[str, Any]) -> Any:
    if not run.get("accounted", True):
        return ""
    return "inf (none certified)" if run["epsilon"] is None else run["epsilon"]


def paper_bootstrap(x: np.ndarray, scheme, replicates: int, sigma_mean: float,
                    sigma_variance: float, rng: np.random.Generator
                    ) -> tuple[float, float, float, float]:
    """The paper's DP subsampling bootstrap of one data set (its ``bootstrap experiment.R``),
    reproduced to compare with Table 5 — **not** a valid DP procedure (use
    :class:`privamp.applications.DpBootstrap`).

    For each of ``replicates`` subsamples drawn by ``scheme`` (privamp's sampler; multiset), the
    sample mean and the sample variance (denominator size − 1) of the drawn values, data not
    clipped, plus N(0, σ²) noise with the paper's σ; the estimates are the averages over the
    replicates (subsamples of fewer than two records are left out, as for the non-private
    baseline). Returns ``(μ̂, τ̂², μ̂ without noise, τ̂² without noise)`` — the last two are the
    paper's "non-private" bootstrap when ``scheme`` is Poisson(m/n).

    >>> from privamp.sampling import WOR
    >>> x = np.random.default_rng(1).normal(size=300)
    >>> mu, tau2, mu0, tau20 = paper_bootstrap(x, WOR(300, 30), 500, 0.1278, 1.022,
    ...                                        np.random.default_rng(2))
    >>> bool(abs(mu - x.mean()) < 0.02), bool(abs(tau20 - x.var(ddof=1)) < 0.05)
    (True, True)
    """
    n = x.size
    means = np.full(replicates, np.nan)
    variances = np.full(replicates, np.nan)
    for r in range(replicates):
        sub = scheme.sample(n, rng)
        size = int(sub.counts.sum())
        if size < 2:
            continue
        values = x[sub.indices]
        mean = float(sub.counts @ values) / size
        centred = values - mean
        means[r] = mean
        variances[r] = float(sub.counts @ (centred * centred)) / (size - 1)
    noisy_means = means + rng.normal(0.0, sigma_mean, size=replicates)
    noisy_variances = variances + rng.normal(0.0, sigma_variance, size=replicates)
    return (float(np.nanmean(noisy_means)), float(np.nanmean(noisy_variances)),
            float(np.nanmean(means)), float(np.nanmean(variances)))


def _mc_tolerance(sd_ours: float, repeats: int, sd_paper: float, paper_repeats: int,
                  what: str) -> float:
    """Four standard errors of the difference between our Monte-Carlo statistic and the
    paper's (independent runs of R and R' repeats): SE² = SD²(1/R + 1/R') for a mean over
    repeats, SD²(1/(2(R − 1)) + 1/(2(R' − 1))) for a standard deviation (normal data), with SD
    the larger of the two estimates (ours is itself noisy when R is small)."""
    sd = max(sd_ours, sd_paper)
    if what == "mean":
        factor = 1.0 / repeats + 1.0 / paper_repeats
    else:
        factor = 1.0 / (2 * (repeats - 1)) + 1.0 / (2 * (paper_repeats - 1))
    return 4.0 * sd * math.sqrt(factor)


def _worst(*statuses: str | None) -> str | None:
    order = ("agrees", "monte-carlo", "rounding", "not-compared", "erratum", "disagrees")
    present = [s for s in statuses if s is not None]
    return max(present, key=order.index) if present else None


def _ms(mean: float, sd: float, digits: int = 3) -> str:
    return f"{mean:.{digits}f} ({sd:.3f})"


# =============================================================================================
# Table 5: the DP subsampling bootstrap (utility experiment 1)
# =============================================================================================

BOOT_N, BOOT_M, BOOT_T, BOOT_EPS, BOOT_BOUND = 300, 30, 500, 0.1, 4.0
BOOT_B = (10, 20, 30, 50, 70, 100)


def _table5_schemes() -> dict[str, tuple[str, int | None]]:
    """Table 5's private rows: label → (privamp scheme name, b)."""
    rows: dict[str, tuple[str, int | None]] = {"Poisson": ("poisson", None), "WOR": ("wor", None),
                                               "WR": ("wr", None)}
    for name, kind in (("MUST.OW", "must-ow"), ("MUST.WW", "must-ww")):
        for b in BOOT_B:
            rows[f"{name}, b = {b}"] = (kind, b)
    return rows


def _table5_key(label: str):
    return (label.split(",")[0], int(label.split("= ")[1])) if "b =" in label else label


@register("must-table5", paper=PAPER, kind="table", label="Table 5",
          title="DP subsampling bootstrap of the mean μ and variance τ² of N(0, 1) data: mean "
                "(SD) of the estimates over simulated data sets")
def table5(ctx: Context) -> Result:
    art = "must-table5"
    n, m, replicates = BOOT_N, BOOT_M, BOOT_T
    delta = 1.0 / n
    width = 2 * BOOT_BOUND
    repeats = 10 if ctx.quick else 200
    valid_repeats = 5 if ctx.quick else 200
    rows = _table5_schemes()
    schemes = {label: make_scheme(kind, n=n, m=m, b=b or 50) for label, (kind, b) in rows.items()}
    sigmas = {label: (paper_sigma(s, BOOT_EPS, delta, width / n),
                      paper_sigma(s, BOOT_EPS, delta, width**2 / n))
              for label, s in schemes.items()}
    # the paper's protocol, at the paper's σ: every scheme on the same simulated data sets
    rng = ctx.rng(art)
    est = {label: np.empty((repeats, 2)) for label in ["Poisson (non-private)", *rows]}
    for r in range(repeats):
        x = rng.normal(0.0, 1.0, size=n)
        for label, scheme in schemes.items():
            mu, tau2, mu0, tau20 = paper_bootstrap(x, scheme, replicates, *sigmas[label], rng)
            est[label][r] = (mu, tau2)
            if label == "Poisson":
                est["Poisson (non-private)"][r] = (mu0, tau20)
    paper_stats = {label: (float(e[:, 0].mean()), float(e[:, 0].std(ddof=1)),
                           float(e[:, 1].mean()), float(e[:, 1].std(ddof=1)))
                   for label, e in est.items()}
    # privamp's DP bootstrap, σ valid for ε' = 0.1 per statistic (a subset in quick mode)
    valid_rows = (["Poisson", "WOR", "WR", "MUST.OW, b = 10", "MUST.OW, b = 100",
                   "MUST.WW, b = 10", "MUST.WW, b = 100"] if ctx.quick else list(rows))
    valid: dict[str, dict[str, Any]] = {}
    seed = _seed(ctx, art + "-valid")
    for label in valid_rows:
        kind, b = rows[label]
        valid[label] = bootstrap_experiment(kind, n=n, m=m, b=b or 50, replicates=replicates,
                                            repeats=valid_repeats, step_epsilon=BOOT_EPS,
                                            bounds=(-BOOT_BOUND, BOOT_BOUND), seed=seed,
                                            baseline=False)
    # comparison with the print (the paper's-σ run)
    cells, csv_rows = [], []
    statuses: dict[str, list[str | None]] = {}
    for label, (mu, mu_sd, tau2, tau2_sd) in paper_stats.items():
        printed = pv.MUST_TABLE5[_table5_key(label)]
        ours = (mu, mu_sd, tau2, tau2_sd)
        row_status = []
        for j, (quantity, what) in enumerate((("μ̂", "mean"), ("μ̂", "SD"), ("τ̂²", "mean"),
                                              ("τ̂²", "SD"))):
            sd_ours = ours[1] if quantity == "μ̂" else ours[3]
            sd_paper = float(printed[1] if quantity == "μ̂" else printed[3])
            tol = _mc_tolerance(sd_ours, repeats, sd_paper, 200, what)
            status, note = compare_printed(ours[j], printed[j], tolerance=tol)
            cells.append(Cell(label, f"{quantity} {what} over data sets", f"{quantity} {what}",
                              printed[j], ours[j], status, note or f"tolerance ±{tol:.4f}"))
            row_status.append(status)
        statuses[label] = row_status
        sig = sigmas.get(label, (0.0, 0.0))
        csv_rows.append([label, "paper's σ" if label in sigmas else "non-private", repeats,
                         sig[0], sig[1], mu, mu_sd, tau2, tau2_sd, "", *printed])
    for label, res in valid.items():
        csv_rows.append([label, "σ valid for ε' = 0.1 (privamp)", valid_repeats, res["sigma"],
                         res["sigma_second_moment"], res["mean"]["mean"], res["mean"]["sd"],
                         res["variance"]["mean"], res["variance"]["sd"], res["epsilon"],
                         *pv.MUST_TABLE5[_table5_key(label)]])
    # the table image: μ then τ², columns printed / paper's σ (coloured) / valid σ
    png_rows = []
    for q, (i_mean, i_sd), digits in (("μ", (0, 1), 4), ("τ²", (2, 3), 3)):
        png_rows.append((f"§ estimation of {q}", [], []))
        for label, stats in paper_stats.items():
            printed = pv.MUST_TABLE5[_table5_key(label)]
            res = valid.get(label)
            if res is not None:
                v = res["mean"] if q == "μ" else res["variance"]
                valid_text = _ms(v["mean"], v["sd"], digits)
            else:
                valid_text = "—" if label != "Poisson (non-private)" else "(no noise)"
            png_rows.append((label, [f"{printed[i_mean]} ({printed[i_sd]})",
                                     _ms(stats[i_mean], stats[i_sd], digits), valid_text],
                             [None, _worst(*statuses[label][i_mean:i_sd + 1]), None]))
    # checks
    ps = paper_stats
    checks = []
    small_b = [ps[f"{s}, b = 10"] for s in ("MUST.OW", "MUST.WW")]
    bias_theory = 1.0 - 1.0 / 10
    checks.append(Check(
        "Paper's σ: MUST with b = 10 ≤ m underestimates τ² (the paper's 'noticeable downward "
        "bias'), by the factor 1 − 1/b of m draws from b stage-I records (within four "
        "standard errors + 0.02)",
        all(abs(v[2] - bias_theory) <= 4 * v[3] / math.sqrt(repeats) + 0.02 for v in small_b),
        f"mean τ̂² {small_b[0][2]:.3f} (OW), {small_b[1][2]:.3f} (WW); 1 − 1/b = "
        f"{bias_theory:.2f}"))
    unbiased = []
    for res in valid.values():
        se = res["variance"]["sd"] / math.sqrt(valid_repeats)
        unbiased.append(abs(res["variance"]["mean"] - 1.0) <= 4 * se + 0.01)
    checks.append(Check(
        "Valid σ: privamp's DP bootstrap (moments with the scheme's exact multiplicity law) has "
        "no such bias: every mean τ̂² is 1 within four standard errors",
        all(unbiased), ", ".join(f"{lab}: {res['variance']['mean']:.3f}"
                                 for lab, res in valid.items() if "b = 10" in lab)))
    checks.append(Check(
        "Mean estimates of μ are unbiased (the paper: bias o(10^-3)), at the paper's σ and at "
        "the valid σ (|bias| within four standard errors)",
        all(abs(ps[lab][0]) <= 4 * ps[lab][1] / math.sqrt(repeats) for lab in ps)
        and all(abs(res["mean"]["mean"]) <= 4 * res["mean"]["sd"] / math.sqrt(valid_repeats)
                for res in valid.values())))
    eps_run = {lab: res["epsilon"] for lab, res in valid.items()}
    files = [
        write_table(ctx, art, ["row", "noise", "data_sets", "sigma_mean", "sigma_variance",
                               "mu_mean", "mu_sd", "tau2_mean", "tau2_sd",
                               "epsilon_whole_procedure", "paper_mu_mean", "paper_mu_sd",
                               "paper_tau2_mean", "paper_tau2_sd"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, f"MUST Table 5, regenerated: DP bootstrap, mean (SD) over {repeats} data "
                      "sets", ["printed", "privamp, paper's σ", "privamp, σ valid for ε'"],
            png_rows, col_width=1.9, first_width=1.9,
            footnote=f"n = {n}, m = {m}, T = {replicates} subsamples per data set, ε' = "
                     f"{BOOT_EPS} and δ = 1/n per statistic, [L, U] = [−4, 4]. Middle column: "
                     "the paper's protocol (subsample mean and variance, each plus Gaussian "
                     "noise with the σ of Table 4, i.e. sensitivities (U − L)/n and (U − L)²/n, "
                     f"erratum MUST-15), {repeats} data sets, compared with the print (colour)."
                     f"\nRight: privamp's DP bootstrap with σ valid for ε' = 0.1 per statistic "
                     f"(per-subsample sensitivities, data clipped to [L, U], unbiased moments), "
                     f"{valid_repeats} data sets"
                     + (" (quick: a subset of rows)" if ctx.quick else "")
                     + ". The paper's Poisson (non-private) row is the Poisson subsamples "
                       "without noise."),
    ]
    sd_ratio = [valid[lab]["variance"]["sd"] / ps[lab][3] for lab in valid]
    notes = [
        "The middle column reproduces the paper's estimator and noise (σ from Eq. (9) with "
        "sensitivities divided by n): that is what the print is compared with. The right column "
        "is privamp's DP bootstrap at ε' = 0.1 per statistic: the noise on a replicate's mean is "
        f"{valid['WOR']['sigma'] / sigmas['WOR'][0]:.1f} times the paper's for WOR (the "
        "sensitivity of a mean of m values is (U − L)/m, not (U − L)/n), but averaging 500 "
        "replicates keeps the estimates usable: the SD of τ̂² is "
        f"{min(sd_ratio):.1f}–{max(sd_ratio):.1f} times the paper's-σ value.",
        "Per statistic ε' = 0.1 is not the privacy of the procedure: one data set's 500 "
        "replicates × 2 statistics, accounted by privamp, give ε at δ = 1/n from "
        f"{display.upper(min(eps_run.values()), 2)} ({min(eps_run, key=eps_run.get)}) to "
        f"{display.upper(max(eps_run.values()), 3)} ({max(eps_run, key=eps_run.get)}) "
        "(must-table5.csv: epsilon_whole_procedure).",
    ]
    if ctx.quick:
        notes.append(f"Quick mode: {repeats} data sets for the paper's σ (the paper: 200), "
                     f"{valid_repeats} for the valid σ on {len(valid)} of the 14 private rows.")
    return Result(
        shows="The DP subsampling bootstrap of the mean and variance of n = 300 N(0, 1) values "
              "(500 subsamples of m = 30, per scheme and stage-I size b): the mean and SD of the "
              "estimates over simulated data sets, with the paper's noise (compared with the "
              "print) and with noise valid for the stated ε' = 0.1.",
        parameters={"n": n, "m": m, "T (subsamples)": replicates, "ε' per statistic": BOOT_EPS,
                    "δ": "1/n", "[L, U]": [-BOOT_BOUND, BOOT_BOUND], "b (MUST)": list(BOOT_B),
                    "data sets (paper's σ)": repeats, "data sets (valid σ)": valid_repeats},
        chosen={"σ for b = 70": "not in Table 4; computed as for the other b",
                **({"data sets": f"{repeats} and {valid_repeats} (quick mode; the paper: 200)"}
                   if ctx.quick else {})},
        cells=cells, checks=checks, errata=["MUST-15", "MUST-16"], files=files, notes=notes)


# =============================================================================================
# Tables 6 (RMSE columns) and 7, Figure 6: DP-SGD linear regression (utility experiment 2)
# =============================================================================================

LIN_N, LIN_B, LIN_M, LIN_T, LIN_C, LIN_LR = 1000, 200, 100, 200, 3.0, 0.04
LIN_EPS = (0.01, 0.001)
LIN_BETA = (1.0, 0.5, 0.2)
NOISES = ("paper", "valid")
NOISE_LABEL = {"paper": "paper's σ", "valid": "σ valid for ε'"}


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
    art = "must-table6-rmse"
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
        write_table(ctx, art, ["scheme", "eps_prime", "noise", "data_sets", "rmse_mean",
                               "rmse_sd", "sigma_averaged_gradient", "noise_multiplier",
                               "epsilon_run_at_delta_1_over_n", "paper_rmse_mean",
                               "paper_rmse_sd"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, f"MUST Table 6 (RMSE columns), regenerated: mean (SD) RMSE of ŷ over "
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
    art = "must-table7"
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
        write_table(ctx, art, ["scheme", "eps_prime", "noise", "data_sets", "bias_b0",
                               "bias_b1", "bias_b2", "rmse_b0", "rmse_b1", "rmse_b2",
                               "paper_bias_b0", "paper_bias_b1", "paper_bias_b2",
                               "paper_rmse_b0", "paper_rmse_b1", "paper_rmse_b2"], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, f"MUST Table 7, regenerated: bias and RMSE of (β̂0, β̂1, β̂2) over "
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
    art = "must-fig6"
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
        ctx, art, panels, ncols=2, panel_size=(6.2, 4.4),
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


# =============================================================================================
# Table 8 (prediction columns) and Figure S4: DP-SGD logistic regression on Adult (experiment 3)
# =============================================================================================

LOG_B, LOG_M, LOG_T, LOG_C, LOG_LR, LOG_EPS = 500, 300, 1000, 3.0, 0.01, 0.0005
METRICS = ("accuracy", "sensitivity", "specificity", "ppv", "npv", "f1")
METRIC_LABEL = {"accuracy": "accuracy", "sensitivity": "sensitivity",
                "specificity": "specificity", "ppv": "PPV", "npv": "NPV", "f1": "F1"}
#: The three settings of the logistic experiment: key → (label feature kept?, noise, label).
LOG_SETTINGS = {
    "valid": (False, "valid", "label excluded, σ valid for ε' (privamp)"),
    "paper": (False, "paper", "label excluded, the paper's σ·m"),
    "leak": (True, "paper", "the authors' setting: label kept as a feature, the paper's σ·m"),
}


def _logistic_runs(ctx: Context) -> dict[str, Any]:
    """Every DP-SGD logistic-regression run of Table 8 and Figure S4 (shared within a run):
    setting (:data:`LOG_SETTINGS`) × scheme, ``repeats`` runs each, and the non-private
    Poisson baselines with and without the label."""
    from ..applications.experiments import load_adult

    def compute():
        repeats = {"valid": 1, "paper": 1, "leak": 2} if ctx.quick else dict.fromkeys(
            LOG_SETTINGS, 5)
        seed = _seed(ctx, "must-logistic")
        labels = load_adult(ctx.data)[1]
        n_train = (3 * labels.size) // 4
        common = {"b": LOG_B, "m": LOG_M, "steps": LOG_T, "clip_norm": LOG_C,
                  "learning_rate": LOG_LR, "seed": seed, "loss_curve": True}
        runs: dict[tuple[str, str], dict[str, Any]] = {}
        sigma_m, z_paper, eps_paper = {}, {}, {}
        for kind, name in DPSGD_SCHEMES.items():
            scheme = make_scheme(kind, n=n_train, m=LOG_M, b=LOG_B)
            sigma_m[name] = LOG_M * paper_sigma(scheme, LOG_EPS, 1.0 / n_train, LOG_C / n_train)
            z_paper[name] = paper_noise_multiplier(scheme, sigma_m[name] / LOG_M, LOG_M, LOG_C)
            eps_paper[name] = (None if ctx.quick else  # the accountant is the slow part
                               paper_epsilon(scheme, z_paper[name], LOG_C, LOG_T, 1.0 / n_train))
        for key, (leak, noise, _) in LOG_SETTINGS.items():
            for kind, name in DPSGD_SCHEMES.items():
                noise_kw = ({"step_epsilon": LOG_EPS} if noise == "valid" else
                            {"noise_multiplier": z_paper[name], "account_privacy": False})
                run = logistic_experiment(
                    ctx.data, kind, include_label=leak, repeats=repeats[key],
                    baseline=kind == "poisson" and key in ("valid", "leak"), **noise_kw,
                    **common)
                if noise == "paper":
                    run["epsilon"], run["accounted"] = eps_paper[name], not ctx.quick
                runs[(key, name)] = run
        baselines = {"valid": runs[("valid", "Poisson")]["baseline"],
                     "leak": runs[("leak", "Poisson")]["baseline"]}
        baselines["paper"] = baselines["valid"]
        first = runs[("valid", "Poisson")]
        return {"repeats": repeats, "seed": seed, "runs": runs, "baselines": baselines,
                "sigma_m": sigma_m, "n_train": n_train,
                "n_test": first["parameters"]["n_test"],
                "majority": first["majority_class_accuracy"]}

    return ctx.memo("must-logistic-runs", compute)


def _logistic_parameters(log: dict[str, Any]) -> dict[str, Any]:
    return {"n (training)": log["n_train"], "test records": log["n_test"], "b": LOG_B,
            "m": LOG_M, "T": LOG_T, "C": LOG_C, "learning rate": LOG_LR,
            "ε' per iteration": LOG_EPS, "δ": "1/n", "initial β": "1, …, 1",
            "runs per cell (valid σ / paper's σ / label kept)":
                " / ".join(str(log["repeats"][k]) for k in LOG_SETTINGS)}


def pooled_sd(results: list[dict[str, Any]], metric: str, repeats: int) -> float:
    """The run-to-run SD of ``metric`` pooled over several cells of ``repeats`` runs each (one
    SD per cell in ``results[i]["metrics_sd"]``)."""
    if repeats < 2:
        return 0.0
    return math.sqrt(float(np.mean([r["metrics_sd"][metric] ** 2 for r in results])))


def _metric_tolerance(sd: float, repeats: int) -> float:
    """Our mean over ``repeats`` runs against the paper's single run: four standard deviations
    of the difference, SD·√(1 + 1/R), with a floor of 0.005 (the SD is estimated from few
    runs)."""
    return max(4.0 * sd * math.sqrt(1.0 + 1.0 / repeats), 0.005)


@register("must-table8-metrics", paper=PAPER, kind="table",
          label="Table 8 (prediction columns)",
          title="DP-SGD logistic regression on Adult: accuracy, sensitivity, specificity, PPV, "
                "NPV and F1 on the test set", needs=ADULT)
def table8_metrics(ctx: Context) -> Result:
    art = "must-table8-metrics"
    log = _logistic_runs(ctx)
    runs, repeats = log["runs"], log["repeats"]
    cells, csv_rows, png_rows = [], [], []
    leak_status = []
    leak_runs = [runs[("leak", s)] for s in DPSGD_SCHEMES.values()]
    leak_tol = {mt: _metric_tolerance(pooled_sd(leak_runs, mt, repeats["leak"]),
                                      repeats["leak"]) for mt in METRICS}
    for key, (_, _, title) in LOG_SETTINGS.items():
        png_rows.append((f"§ {title}" + (": compared with the print" if key == "valid" else ""),
                         [], []))
        rows = [("non-private Poisson", log["baselines"][key])] + [
            (name, runs[(key, name)]) for name in DPSGD_SCHEMES.values()]
        for name, res in rows:
            printed = pv.MUST_TABLE8_METRICS[name]
            texts, statuses = [], []
            for metric, text in zip(METRICS, printed, strict=True):
                value = float(res[metric])
                if key == "valid":  # a different experiment from the print's: no tolerance
                    status, note = compare_printed(value, text, erratum="MUST-14")
                    cells.append(Cell(name, METRIC_LABEL[metric], METRIC_LABEL[metric], text,
                                      value, status, note))
                elif key == "leak":
                    status, _ = compare_printed(value, text, tolerance=leak_tol[metric])
                    leak_status.append((name, metric, value, text, status))
                else:
                    status = None
                texts.append(f"{value:.3f} ({text})")
                statuses.append(status)
            private = name != "non-private Poisson"
            texts.append(_eps_text(res) if private else "—")
            statuses.append(None)
            png_rows.append((name, texts, statuses))
            csv_rows.append([title, name, repeats[key], res["sigma"] if private else 0.0,
                             _eps_csv(res) if private else "", *[res[mt] for mt in METRICS],
                             *[res["metrics_sd"][mt] for mt in METRICS], *printed])
    base = log["baselines"]["valid"]
    dp_acc = [runs[("valid", s)]["accuracy"] for s in DPSGD_SCHEMES.values()]
    leak_ok = all(s in ("agrees", "rounding", "monte-carlo") for *_, s in leak_status)
    off = [f"{name} {METRIC_LABEL[mt]} {v:.3f} vs {t}" for name, mt, v, t, s in leak_status
           if s not in ("agrees", "rounding", "monte-carlo")]
    checks = [
        Check("With the label kept among the features and the paper's σ·m (the authors' "
              "script), privamp reproduces the printed metrics (erratum MUST-14): every cell "
              "within tolerance", leak_ok,
              ("; ".join(off) if off else f"{len(leak_status)} cells")
              + "; tolerance (4 pooled SDs of a run) "
              + ", ".join(f"{METRIC_LABEL[mt]} ±{t:.3f}" for mt, t in leak_tol.items())),
        Check("Label excluded: the non-private baseline reaches the accuracy of a leak-free "
              "logistic regression (≈ 0.76; the majority class is "
              f"{log['majority']:.3f})", 0.74 <= base["accuracy"] <= 0.79,
              f"accuracy {base['accuracy']:.3f}, sensitivity {base['sensitivity']:.3f}"),
        Check("Label excluded, σ valid for ε': the DP-SGD prediction performance is similar to "
              "the non-private baseline (accuracy within 0.03)",
              max(abs(a - base["accuracy"]) for a in dp_acc) <= 0.03,
              "accuracy " + ", ".join(f"{a:.3f}" for a in dp_acc)),
    ]
    files = [
        write_table(ctx, art, ["setting", "scheme", "runs", "sigma_sum", "epsilon_run",
                               *METRICS, *[f"{mt}_sd" for mt in METRICS],
                               *[f"paper_{mt}" for mt in METRICS]], csv_rows),
        write_comparison(ctx, art, cells),
        write_table_png(
            ctx, art, "MUST Table 8 (prediction columns), regenerated: privamp (printed)",
            [METRIC_LABEL[mt] for mt in METRICS] + ["run's ε"], png_rows, col_width=1.3,
            first_width=1.9,
            footnote=f"Adult: first {log['n_train']:,} rows train, last {log['n_test']:,} test; "
                     f"b = {LOG_B}, m = {LOG_M}, T = {LOG_T}, C = {LOG_C:g}, learning rate "
                     f"{LOG_LR}, ε' = {LOG_EPS} per iteration, δ = 1/n; mean of "
                     f"{repeats['valid']} / {repeats['paper']} / {repeats['leak']} runs per "
                     "block (the paper: one). The printed metrics were obtained with "
                     "the label income among the features (erratum MUST-14): first block, "
                     "privamp's honest run, compared (orange: erratum); last block, the "
                     "authors' setting reproduced, coloured by its agreement with the print. "
                     "Run's ε: privamp's accountant over the T iterations at δ = 1/n. MUST.WW "
                     "sampled as MUST.WW (erratum MUST-19)."),
    ]
    eps_paper = {s: runs[("paper", s)]["epsilon"] for s in DPSGD_SCHEMES.values()}
    uncertified = [s for s, e in eps_paper.items() if e is None]
    certified = [e for e in eps_paper.values() if e is not None]
    eps_valid = [runs[("valid", s)]["epsilon"] for s in DPSGD_SCHEMES.values()]
    if ctx.quick:
        eps_note = ("Quick mode: the privacy of the runs with the paper's σ·m is not accounted; "
                    f"with σ valid for ε' = {LOG_EPS} per iteration the 1000 iterations are "
                    f"({display.upper(min(eps_valid), 2)} … "
                    f"{display.upper(max(eps_valid), 2)}, 1/n)-DP.")
    else:
        eps_note = (f"With the paper's σ·m the 1000 iterations are "
                    f"({display.upper(min(certified), 3)} … "
                    f"{display.upper(max(certified), 3)}, 1/n)-DP by privamp's accountant"
                    + (f" ({', '.join(uncertified)}: no finite ε can be certified, one step's "
                       "privacy loss overflows e^700)" if uncertified else "")
                    + f"; with σ valid for ε' = {LOG_EPS} per iteration, "
                    f"{display.upper(min(eps_valid), 2)} … "
                    f"{display.upper(max(eps_valid), 2)}.")
    return Result(
        shows="Test-set prediction metrics of logistic regression on the Adult data trained by "
              "DP-SGD with each scheme: privamp's honest run (label excluded, σ valid for the "
              "stated ε'), the paper's noise with the label excluded, and the authors' setting "
              "(label kept as a feature), which reproduces the print.",
        parameters=_logistic_parameters(log),
        chosen={"runs per cell": f"{repeats['valid']} / {repeats['paper']} / "
                                 f"{repeats['leak']} per block (the paper: one run), metrics "
                                 "averaged"},
        cells=cells, checks=checks, errata=["MUST-14", "MUST-15", "MUST-19"], files=files,
        notes=["A leak-free logistic regression predicts income > 50K with accuracy ≈ 0.76 "
               f"(majority class {log['majority']:.3f}); the printed 0.98 needs the label as a "
               "feature. The σ·m and δ_c columns of Table 8 are regenerated by must-table8.",
               eps_note]
        + (["Quick mode: 1 / 1 / 2 runs per cell (full: 5)."] if ctx.quick else []))


@register("must-figS4", paper=PAPER, kind="figure", label="Figure S4",
          title="training loss of DP-SGD logistic regression on Adult", needs=ADULT)
def figure_s4(ctx: Context) -> Result:
    art = "must-figS4"
    log = _logistic_runs(ctx)
    runs = log["runs"]
    panels, checks = [], []
    letters = iter("abc")
    for key in ("leak", "paper", "valid"):
        title = LOG_SETTINGS[key][2]
        base = log["baselines"][key]["loss_curve"]
        curves = [Curve("Poisson (non-private)", base["steps"], base["loss"],
                        color=COLOURS["non-private"], style="--", linewidth=2.2)]
        finals, starts = {}, {}
        for name in DPSGD_SCHEMES.values():
            c = runs[(key, name)]["loss_curve"]
            curves.append(Curve(name, c["steps"], c["loss"], color=COLOURS[name],
                                linewidth=1.4))
            finals[name], starts[name] = float(c["loss"][-1]), float(c["loss"][0])
        panels.append(Panel(f"({next(letters)}) {title}", "iteration t",
                            "training loss (cross-entropy)", curves, ylim=(0.0, 4.8),
                            legend="upper right"))
        short = {"leak": "label kept, paper's σ·m", "paper": "label excluded, paper's σ·m",
                 "valid": "label excluded, valid σ"}[key]
        checks.append(Check(f"{short}: every training loss decreases (final below a third of "
                            "the initial loss)",
                            all(finals[s] < starts[s] / 3 for s in finals),
                            ", ".join(f"{s} {starts[s]:.2f} → {finals[s]:.3f}"
                                      for s in finals)))
        base_final = float(base["loss"][-1])
        checks.append(Check(f"{short}: the DP-SGD curves end close to the non-private one "
                            "(the paper: 'substantial similarities'; within 0.05)",
                            max(abs(v - base_final) for v in finals.values()) <= 0.05,
                            f"non-private {base_final:.3f}, DP-SGD "
                            f"{min(finals.values()):.3f} … {max(finals.values()):.3f}"))
    files = write_panels(
        ctx, art, panels, ncols=3, panel_size=(5.4, 4.4),
        suptitle="MUST Figure S4: training loss of DP-SGD logistic regression on Adult",
        footnote=f"n = {log['n_train']:,} training records, b = {LOG_B}, m = {LOG_M}, "
                 f"T = {LOG_T}, C = {LOG_C:g}, learning rate {LOG_LR}, initial β = 1, ε' = "
                 f"{LOG_EPS} per iteration; loss = cross-entropy on the training data every "
                 f"{LOG_T // 100} iterations, first run (a non-private diagnostic; the authors "
                 "plot y ≤ 3.5, which cuts the start). (a) The paper's setting: income among "
                 "the features (erratum MUST-14) and its noise σ·m (MUST-15); (b) label "
                 "excluded, same "
                 "noise; (c) label excluded, noise valid for ε' (privamp). MUST.WW sampled as "
                 "MUST.WW (MUST-19).")
    return Result(
        shows="The training cross-entropy of DP-SGD logistic regression on Adult over the 1000 "
              "iterations, per scheme, in the authors' setting (label among the features) and "
              "with the label excluded, at the paper's noise and at noise valid for ε'.",
        parameters=_logistic_parameters(log),
        chosen={"run": "the first run of each must-table8-metrics cell",
                "loss recorded": f"every {LOG_T // 100} iterations"},
        checks=checks, errata=["MUST-14", "MUST-15", "MUST-19"], files=files)
