"""The MUST paper's utility experiments (§4.2) as the artifacts run them: their settings, the
noise the paper added (:func:`paper_sigma`, :func:`paper_noise_multiplier`), what privamp's
accountant certifies for it (:func:`paper_epsilon`), the paper's bootstrap estimator
(:func:`paper_bootstrap`) and the Monte-Carlo tolerances of the comparisons."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import display
from ...amplification.subsampling import deamplify_eps
from ...applications.privacy import resolve_relations
from ...errors import NumericalError
from ...relations import clipped_sum_sensitivity
from .._registry import Context
from .calibration import eq9_sigma

ADULT = ("the MUST authors' preprocessed Adult CSV (41,292 rows, 13 features and income; "
         "shipped with privamp as privamp/data/adult_processed.csv.gz)")

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
    from ...applications.privacy import account
    from ...mechanisms.gaussian import GaussianMechanism

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




def _ms(mean: float, sd: float, digits: int = 3) -> str:
    return f"{mean:.{digits}f} ({sd:.3f})"



#: Utility experiment 1 (the DP bootstrap, Table 5).
BOOT_N, BOOT_M, BOOT_T, BOOT_EPS, BOOT_BOUND = 300, 30, 500, 0.1, 4.0
BOOT_B = (10, 20, 30, 50, 70, 100)
#: Utility experiment 2 (DP-SGD linear regression, Tables 6, 7, Figure 6).
LIN_N, LIN_B, LIN_M, LIN_T, LIN_C, LIN_LR = 1000, 200, 100, 200, 3.0, 0.04
LIN_EPS = (0.01, 0.001)
LIN_BETA = (1.0, 0.5, 0.2)
NOISES = ("paper", "valid")
NOISE_LABEL = {"paper": "paper's σ", "valid": "σ valid for ε'"}
#: Utility experiment 3 (DP-SGD logistic regression on Adult, Table 8, Figure S4).
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
