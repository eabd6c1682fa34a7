"""The DP subsampling bootstrap: private estimates of a mean and a variance, with confidence
intervals, from B subsamples drawn by any sampling scheme (Zhao & Liu 2023, utility
experiment 1, done with correct sensitivities).

Each replicate b draws a subsample (a multiset: record i appears K_i times) and releases two
noisy moments of the data clipped to public bounds [L, U]. With centre c = (L + U)/2, half-width
h = (U − L)/2 and u_i = (clip(x_i) − c)/h ∈ [−1, 1]::

    S1 = Σ_i K_i u_i + N(0, (z Δ1)²),      S2 = Σ_i K_i u_i² + N(0, (z Δ2)²)
    M1 = h S1 / B,                         M2 = h² S2 / B            (B = E Σ K_i, fixed)

Per-copy sensitivities of (Σ K u, Σ K u²): (1, 1) under add/remove (a copy of u appears or
disappears), (2, 1) under substitution (u ↦ u'). The pair, scaled by (Δ1, Δ2), has L2
sensitivity J = √2 under add/remove (attained at |u| = 1) and J = √(71 + 8√2)/8 ≈ 1.13409 under
substitution (the maximum of ((u' − u)/2)² + (u'² − u²)² on [−1, 1]², at u' = 1,
u = −(2 − √2)/4), so one replicate is one Gaussian mechanism with θ = J/z on its subsample; the
accountant composes the B replicates (k copies of a record: white-box group sensitivity kJ, as
for every WR/MUST analysis). Two mechanisms on the *same* subsample must not be accounted as two
independently subsampled events — that would amplify twice.

Why moments about a public centre with a fixed divisor B (γn for Poisson, m otherwise), rather
than the paper's per-subsample mean and variance with sensitivities (U − L)/n and (U − L)²/n:

* the statistic is an average over the *subsample*, so its sensitivity is per subsample size,
  not per n (the paper's choice is ≈ n/m = 10 times too small; catalogue errata 15), and the data
  must actually be clipped to [L, U] (the authors' code does not clip);
* with a fixed divisor the sensitivity does not depend on the realised subsample size, so
  Poisson subsampling works under add/remove, and empty subsamples are harmless;
* M2 has per-copy sensitivity h²/B = (U − L)²/(4B), a quarter of the sample variance's
  (U − L)²/B.

Estimates per replicate (unbiased for the clipped data's x̄ and S² = Σ(x − x̄)²/(n − 1) for every
scheme, given the data)::

    mean_b = c + M1
    var_b  = n/(n − 1) · (M2 − (M1² − σ1² − α M2)/(1 + β))

where σ1 is M1's noise standard deviation and α = (v − w)n/B², β = wn²/B² come from the exact
multiplicity law of the scheme (v = Var K, w = Cov(K_i, K_j);
:func:`~privamp.applications.samplers.multiplicity_moments`): E[M1²] = D1² + αD2 + βD1² + σ1²
with D1 = x̄ − c, D2 = mean (x − c)². This removes the paper's downward bias of MUST with small b
(Table 5: 0.886 for b = 10), which is the variance of a subsample whose m draws come from only b
stage-I records.

The estimates are the averages over replicates. Confidence intervals are normal intervals whose
variance has two parts: the sampling variance of the full-data statistic (τ̂²/n for the mean;
for the variance Var((X − μ)²)/n, estimated from the spread of the replicates after removing the
known DP-noise variance and rescaling from the scheme's subsample to n by the same α, β) and the
spread of the B noisy replicates over B (the noise and the resampling of the bootstrap average).
With strong noise the first part of the variance interval is poorly determined (it is a small
difference of two large numbers and is floored at 0); the mean interval does not have this
problem.

>>> from privamp.sampling import WOR
>>> boot = DpBootstrap(WOR(300, 30), replicates=500, bounds=(-4, 4), delta=1 / 300,
...                    target_epsilon=1.0)
>>> res = boot.run(np.random.default_rng(0).normal(size=300), rng=1)
>>> res.privacy.epsilon <= 1.0, res.mean_ci[0] < 0.0 < res.mean_ci[1]
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _special
from .._numerics import ULP
from .._progress import report
from .._validation import check_int, check_real, check_real_array, check_rng
from ..errors import InvalidParameterError, NumericalError
from ..mechanisms.gaussian import GaussianMechanism
from ..relations import NeighbouringRelation
from ..sampling.schemes import SamplingScheme
from .privacy import (
    PrivacyStatement,
    account,
    calibrate_noise,
    per_step_noise_multiplier,
    per_step_statement,
    resolve_relations,
)
from .samplers import check_batch_fits, expected_batch_size, multiplicity_moments

__all__ = ["DpBootstrap", "DpBootstrapResult", "joint_sensitivity"]

_J_SUBSTITUTE = math.sqrt(71.0 + 8.0 * math.sqrt(2.0)) / 8.0


def joint_sensitivity(relation: NeighbouringRelation | str) -> float:
    """L2 sensitivity of (Σ K u / Δ1, Σ K u² / Δ2) per copy, u ∈ [−1, 1], rounded up.

    >>> round(joint_sensitivity("add-remove"), 6), round(joint_sensitivity("substitute"), 6)
    (1.414214, 1.134086)
    """
    rel = NeighbouringRelation.parse(relation)
    j = math.sqrt(2.0) if rel is NeighbouringRelation.ADD_REMOVE else _J_SUBSTITUTE
    return j * (1 + 8 * ULP)


def per_copy_sensitivities(relation: NeighbouringRelation | str) -> tuple[float, float]:
    """(Δ1, Δ2): per-copy sensitivities of Σ K u and Σ K u² (u ∈ [−1, 1]) under ``relation``."""
    rel = NeighbouringRelation.parse(relation)
    return (1.0, 1.0) if rel is NeighbouringRelation.ADD_REMOVE else (2.0, 1.0)


@dataclass(frozen=True)
class DpBootstrapResult:
    """The outcome of :meth:`DpBootstrap.run`.

    Attributes
    ----------
    mean, variance : float
        DP estimates of the (clipped) data's mean and variance (denominator n − 1).
    mean_ci, variance_ci : (float, float)
        Normal confidence intervals at level ``confidence`` for the population mean and variance
        (under an i.i.d. model of the data), including the DP noise.
    confidence : float
    replicate_means, replicate_variances : ndarray
        The B per-replicate estimates (post-processing of the noisy moments).
    sigma_mean, sigma_second_moment : float
        Standard deviation of the Gaussian noise on each replicate's released M1 (the mean about
        the centre) and M2 (the second moment about it), in data units.
    privacy : PrivacyStatement
        Of the whole procedure (B replicates composed).
    """

    mean: float
    variance: float
    mean_ci: tuple[float, float]
    variance_ci: tuple[float, float]
    confidence: float
    replicate_means: np.ndarray
    replicate_variances: np.ndarray
    sigma_mean: float
    sigma_second_moment: float
    privacy: PrivacyStatement


class DpBootstrap:
    """The DP subsampling bootstrap of a mean and a variance (see the module docstring).

    Parameters
    ----------
    scheme : SamplingScheme
        How each replicate's subsample is drawn (any privamp scheme).
    replicates : int
        B, the number of subsamples (each is one composed step).
    bounds : (float, float)
        Public bounds L < U; the data are clipped to them.
    delta : float
        δ of the statement for the whole procedure.
    target_epsilon : float, optional
        Calibrate the noise so that all B replicates together are (target_epsilon, δ)-DP.
    noise_multiplier : float, optional
        z: each moment's noise is z times its per-copy sensitivity.
    step_epsilon, step_delta : float, optional
        The MUST paper's protocol: z such that *one* statistic of one replicate is (ε', δ')-DP
        after amplification (δ' before it; default ``delta``). Both statistics use that z, and
        the joint release is accounted honestly.
    relation : NeighbouringRelation or str, optional
        Relation on the whole dataset (default: the scheme's natural one).
    backend : str
        Accountant backend.
    """

    def __init__(self, scheme: SamplingScheme, replicates: int, bounds: tuple[float, float], *,
                 delta: float, target_epsilon: float | None = None,
                 noise_multiplier: float | None = None, step_epsilon: float | None = None,
                 step_delta: float | None = None,
                 relation: NeighbouringRelation | str | None = None, backend: str = "pld"):
        self.replicates = check_int("replicates", replicates, "[2, inf)")
        try:
            low, high = bounds
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError("bounds", "a pair (L, U) with L < U", bounds) from exc
        low = check_real("bounds", low)
        high = check_real("bounds", high)
        if not low < high:
            raise InvalidParameterError("bounds", "a pair (L, U) with L < U", (low, high))
        if not math.isfinite(high - low):
            raise InvalidParameterError("bounds", "a pair (L, U) with U - L a finite float",
                                        (low, high))
        self.bounds = (low, high)
        outer, base = resolve_relations(scheme, relation)
        self.scheme, self.relation, self.base_relation = scheme, outer, base
        self.joint = joint_sensitivity(base)
        given = [v is not None for v in (target_epsilon, noise_multiplier, step_epsilon)]
        if sum(given) != 1:
            raise InvalidParameterError(
                "target_epsilon", "given alone, or replaced by exactly one of noise_multiplier, "
                "step_epsilon", target_epsilon)
        if target_epsilon is not None:
            self.privacy = calibrate_noise(target_epsilon, delta, scheme=scheme,
                                           steps=self.replicates, sensitivity=self.joint,
                                           relation=outer, backend=backend)
        elif noise_multiplier is not None:
            z = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
            self.privacy = account(GaussianMechanism(z, self.joint, base), scheme=scheme,
                                   steps=self.replicates, delta=delta, relation=outer,
                                   backend=backend)
        else:
            z = per_step_noise_multiplier(step_epsilon, delta if step_delta is None
                                          else step_delta, scheme)
            self.privacy = per_step_statement(
                step_epsilon, delta if step_delta is None else step_delta, scheme=scheme,
                steps=self.replicates, delta=delta, sensitivity=self.joint, relation=outer,
                noise_multiplier=z / self.joint, backend=backend)

    @property
    def noise_multiplier(self) -> float:
        """z: each standardised moment's noise standard deviation (the accounted σ)."""
        return self.privacy.sigma

    def noise_std(self, n: int) -> tuple[float, float]:
        """Noise standard deviations of M1 and M2 (data units) on a dataset of n records."""
        low, high = self.bounds
        h = (high - low) / 2
        d1, d2 = per_copy_sensitivities(self.base_relation)
        b = expected_batch_size(self.scheme, n)
        z = self.noise_multiplier
        return h * z * d1 / b, h * h * z * d2 / b

    def run(self, data: Any, *, rng: Any = None, confidence: float = 0.95,
            progress: Callable[[int, int], None] | None = None) -> DpBootstrapResult:
        """Run the B replicates on ``data`` (a 1-D array of n records); randomness only from
        ``rng``."""
        x = check_real_array("data", data, "(-inf, inf)", ndim=1)
        level = check_real("confidence", confidence, "(0, 1)")
        n = check_batch_fits(self.scheme, x.size)
        if n < 2:
            raise InvalidParameterError("data", "at least 2 records", n)
        gen = check_rng(rng)
        low, high = self.bounds
        c, h = (low + high) / 2, (high - low) / 2
        u = (np.clip(x, low, high) - c) / h
        d1, d2 = per_copy_sensitivities(self.base_relation)
        z = self.noise_multiplier
        reps = self.replicates
        s1 = np.empty(reps)
        s2 = np.empty(reps)
        for r in range(reps):
            sub = self.scheme.sample(n, gen)
            vals = u[sub.indices]
            s1[r] = sub.counts @ vals
            s2[r] = sub.counts @ (vals * vals)
            report("bootstrap: replicate %s of %s", r + 1, reps)
            if progress is not None:
                progress(r + 1, reps)
        s1 += gen.normal(0.0, z * d1, size=reps)
        s2 += gen.normal(0.0, z * d2, size=reps)
        try:
            with np.errstate(over="raise", invalid="raise"):
                return self._estimate(s1, s2, n, level, c, h)
        except (OverflowError, FloatingPointError):
            raise NumericalError(
                f"the bootstrap estimates overflow floating point with bounds {self.bounds} and "
                f"noise multiplier {z:g}: use narrower bounds") from None

    def _estimate(self, s1, s2, n, level, c, h) -> DpBootstrapResult:
        # ---- post-processing of the released (S1, S2) ----------------------------------
        reps = self.replicates
        b = expected_batch_size(self.scheme, n)
        sigma1, sigma2 = self.noise_std(n)
        m1 = h * s1 / b
        m2 = h * h * s2 / b
        v, w = multiplicity_moments(self.scheme, n)
        alpha = (v - w) * n / (b * b)
        beta = w * n * n / (b * b)
        corr = n / (n - 1)
        d1sq = (m1 * m1 - sigma1 ** 2 - alpha * m2) / (1 + beta)
        means = c + m1
        variances = corr * (m2 - d1sq)
        mean = float(np.mean(means))
        variance = float(np.mean(variances))
        quantile = float(_special.ndtri(0.5 + level / 2))
        spread_mean = float(np.var(means, ddof=1))
        spread_var = float(np.var(variances, ddof=1))
        se_mean = math.sqrt(max(variance, 0.0) / n + spread_mean / reps)
        # Var((X − μ)²) from the replicate spread: remove the DP-noise part, undo the scheme's
        # subsampling variance (first order: ℓ_i = (x_i − x̄)² − D1², mean q, Var_samp of the
        # linear statistic = corr² (α mean ℓ² + β q²))
        m1_sq = max(float(np.mean(m1 * m1)) - sigma1 ** 2, 0.0)
        noise_var = corr ** 2 * (sigma2 ** 2 * (1 + alpha / (1 + beta)) ** 2
                                 + (4 * m1_sq * sigma1 ** 2 + 2 * sigma1 ** 4) / (1 + beta) ** 2)
        q = variance / corr - float(np.mean(d1sq))
        sampling = max(spread_var - noise_var, 0.0) / corr ** 2
        var_psi = max((sampling - (alpha + beta) * q * q) / alpha, 0.0) if alpha > 0 else 0.0
        se_var = math.sqrt(var_psi / n + spread_var / reps)
        return DpBootstrapResult(
            mean, variance, (mean - quantile * se_mean, mean + quantile * se_mean),
            (variance - quantile * se_var, variance + quantile * se_var), level, means,
            variances, sigma1, sigma2, self.privacy)

    def __repr__(self) -> str:
        return (f"DpBootstrap({self.scheme!r}, replicates={self.replicates}, "
                f"bounds={self.bounds}, z={self.noise_multiplier:.6g})")
