"""The Gaussian mechanism and its exact privacy profile (Balle & Wang 2018).

``M(x) = f(x) + N(0, σ² I)`` for a query f with L2 sensitivity Δ under the chosen relation.
With θ = Δ/σ (the inverse noise multiplier), Balle, Barthe, Gaboardi 2018, Theorem 4::

    δ(ε) = Φ(θ/2 − ε/θ) − e^ε Φ(−θ/2 − ε/θ),     ε ≥ 0,

independent of the dimension. White-box group privacy: k records move f by at most kΔ, so
δ_k is the same formula with kθ.

Numerics. The textbook form cancels catastrophically once δ is small compared with Φ(θ/2 − ε/θ)
(small θ, large ε). privamp uses ``Φ(x) = ½ erfcx(−x/√2) e^{−x²/2}`` and the identity
``ε − b²/2 = −a²/2`` (a = θ/2 − ε/θ, b = −θ/2 − ε/θ) to write, for a < 0::

    δ(ε) = ½ e^{−a²/2} (erfcx(u) − erfcx(v)),    u = −a/√2,  v = −b/√2 = u + θ/√2,

which is finite in log space for any ε (δ ≈ exp(−180000) at θ = 0.1, ε = 60 is no problem). When
the two erfcx values are too close to subtract (θ²/ε < 1e-6) the difference, the integral of
``D = −erfcx'`` over [u, v], is bounded above by the trapezoid rule: D is completely monotone
(a Laplace transform of a positive function), hence convex. For a ≥ 0 (ε ≤ θ²/2, where δ is
not small) the direct form with ``log_ndtr`` is used. Every branch adds a bound on its rounding
error, so the result is an upper bound on the exact profile (checked against mpmath in the tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _special
from .._numerics import (
    ULP,
    bisect_threshold,
    div_up,
    log1mexp,
    mul_up,
    round_down_log,
    round_up_log,
)
from .._validation import check_real, check_real_array, check_rng
from ..errors import InvalidParameterError
from ..privacy_loss import GaussianPrivacyLoss
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from .base import Mechanism, register

__all__ = [
    "GaussianMechanism",
    "GaussianProfile",
    "classical_gaussian_sigma",
]

_SQRT2 = math.sqrt(2.0)
_SQRTPI = math.sqrt(math.pi)
_LOG_HALF = math.log(0.5)
_MAX_FLOAT = float(np.finfo(float).max)
_MIN_NORMAL = float(np.finfo(float).tiny)
_SAFE = 32 * ULP  # per-value error allowance (privamp._special's functions: within 4 ulp)


def _neg_erfcx_prime(u: np.ndarray):
    """``D(u) = −erfcx'(u) = 2/√π − 2u·erfcx(u)`` for u > 0, and a bound on its relative error.

    For u > 100 the asymptotic series ``(1/(√π u²))(1 − 3/(2u²) + 15/(4u⁴) − 105/(8u⁶) +
    945/(16u⁸))`` is used; it stops after a positive term, so it is an upper bound.
    """
    big = u > 100.0
    x2 = 1.0 / (u * u)
    asym = x2 / _SQRTPI * (1 - 1.5 * x2 + 3.75 * x2**2 - 13.125 * x2**3 + 59.0625 * x2**4)
    direct = 2.0 / _SQRTPI - 2.0 * u * _special.erfcx(np.minimum(u, 100.0))
    rel = np.where(big, _SAFE, _SAFE * (1.0 + 2.0 * u * u))
    return np.where(big, asym, direct), rel


def gaussian_log_delta(theta: float, eps: np.ndarray) -> np.ndarray:
    """Upper bound on log δ(ε) of the Gaussian mechanism with θ = Δ/σ, for a 1-D array ε ≥ 0."""
    eps = np.asarray(eps, dtype=float)
    out = np.full(eps.shape, -np.inf)
    if theta == 0.0:
        return out
    # δ grows with θ: a subnormal θ (θ/2 would lose its last bits) is raised to the smallest
    # normal float
    theta = max(theta, _MIN_NORMAL)
    finite = np.isfinite(eps)
    with np.errstate(over="ignore"):
        a = theta / 2 - eps / theta
    region_a = finite & (a < 0)
    region_b = finite & ~region_a
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.any(region_b):
            e = eps[region_b]
            la = _special.log_ndtr(a[region_b])
            lb = e + _special.log_ndtr(-theta / 2 - e / theta)
            d = la - lb
            err_d = _SAFE * (1.0 + np.abs(la) + np.abs(lb))
            rel = _SAFE * (1.0 + np.abs(la)) + err_d / np.where(d > 0, d, np.nan)
            val = la + log1mexp(-d) + np.log1p(rel)
            # δ ≤ Φ(a) always, and δ ≤ Φ(a) − Φ(b) = ½(erf(a/√2) + erf(−b/√2)) (e^ε ≥ 1): a sum
            # of two non-negative terms (a ≥ 0 > b), accurate where d cancels (tiny θ, ε ≤ θ²/2)
            b = -theta / 2 - e / theta
            l_gap = np.log(0.5 * (_special.erf(a[region_b] / _SQRT2) + _special.erf(-b / _SQRT2)))
            ceiling = np.minimum(round_up_log(la, ulps=32), round_up_log(l_gap, ulps=32))
            val = np.where((d > 0) & np.isfinite(val), np.minimum(val, ceiling), ceiling)
            out[region_b] = val
        if np.any(region_a):
            e = eps[region_a]
            aa = a[region_a]
            u = -aa / _SQRT2
            v = (theta / 2 + e / theta) / _SQRT2
            eu = _special.erfcx(u)
            ev = _special.erfcx(v)
            gap = theta * theta / (e - theta * theta / 2)  # (v − u)/u
            close = gap < 1e-6
            diff = eu - ev
            log_diff = np.log(diff)
            # the erfcx difference loses its condition number eu/diff (each within a few ulp)
            rel = _SAFE + 8 * ULP * eu / diff
            use_bound = close | ~(diff > 0) | ~np.isfinite(log_diff)
            if np.any(use_bound):
                # trapezoid on the convex D = −erfcx' (completely monotone): an upper bound
                du, du_rel = _neg_erfcx_prime(u[use_bound])
                dv, dv_rel = _neg_erfcx_prime(v[use_bound])
                log_diff[use_bound] = math.log(theta / _SQRT2) + np.log(0.5 * (du + dv))
                rel[use_bound] = _SAFE + np.maximum(du_rel, dv_rel)
            # a has ~2 ulp relative error, so −a²/2 has ~5 ulp·a²/2 absolute error: an error
            # of the logarithm itself, not a relative error of δ (log1p(rel) would be far too
            # small once ulp·a² > 1, i.e. |a| > 1e8); the other terms are negative or O(1), so
            # |sum| ≥ a²/2 − O(1) and 16 ulp·(1 + |sum|) covers it together with the rounding of
            # the logarithms and of the sum
            val = round_up_log(-aa * aa / 2 + _LOG_HALF + log_diff + np.log1p(rel), ulps=16)
            ceiling = round_up_log(_special.log_ndtr(aa), ulps=32)
            # where a² or ε/θ overflow the closed form is ±inf or NaN (δ > 0 is finite in log
            # space): the ceiling log Φ(a) still holds (fmin ignores NaN)
            val = np.where(np.isfinite(val), val, np.nan)
            out[region_a] = np.fmin(val, ceiling)
    # δ(ε) > 0 at every finite ε when θ > 0: a logarithm below the float range is reported as
    # the most negative float, never −inf (which would certify (ε, 0)-DP)
    out = np.where(finite & (out < -_MAX_FLOAT), -_MAX_FLOAT, out)
    return np.minimum(out, 0.0)


class GaussianProfile(PrivacyProfile):
    """Exact privacy profile of the Gaussian mechanism (Balle et al. 2018, Theorem 4).

    Parameters
    ----------
    theta : float
        θ = Δ/σ ≥ 0, sensitivity over noise standard deviation (the inverse of the noise
        multiplier).
    relation : NeighbouringRelation or str
        The relation under which Δ is the sensitivity.

    >>> p = GaussianProfile(1.0)
    >>> round(float(p.delta(1.0)), 12)
    0.126936737507
    >>> round(float(GaussianProfile(0.25).log_delta(4.5)), 6)  # δ = 1.27e-73
    -167.852903
    """

    def __init__(self, theta: float, relation=NeighbouringRelation.ADD_REMOVE):
        self.theta = check_real("theta", theta, "[0, inf)")
        self.relation = NeighbouringRelation.parse(relation)

    def _log_delta(self, eps):
        return gaussian_log_delta(self.theta, eps)

    @property
    def pure_epsilon(self) -> float:
        return 0.0 if self.theta == 0.0 else math.inf

    def _white_box_group(self, k):
        return GaussianProfile(mul_up(float(k), self.theta), self.relation)

    def _mgf_tail(self, s, start):
        # ∫_T^∞ e^{sε} δ(ε) dε ≤ ∫_T^∞ e^{sε} Φ(θ/2 − ε/θ) dε
        #                      ≤ (1/s) e^{s(s+1)θ²/2} Φ(θ(s + ½) − T/θ)   (integration by parts)
        th = self.theta
        if th == 0.0:
            return 0.0
        log_bound = (
            -math.log(s) + s * (s + 1) * th * th / 2 + float(_special.log_ndtr(th * (s + 0.5)
                                                                              - start / th))
        )
        log_bound = float(round_up_log(log_bound, ulps=32))
        return math.exp(log_bound) if log_bound < 709 else math.inf

    def __repr__(self) -> str:
        return f"GaussianProfile(theta={self.theta!r}, relation={self.relation.value!r})"


@register("gaussian")
@dataclass(frozen=True)
class GaussianMechanism(Mechanism):
    """Gaussian mechanism ``f(x) + N(0, σ² I)``.

    Parameters
    ----------
    sigma : float
        Standard deviation σ > 0 of the noise on each coordinate.
    sensitivity : float
        L2 sensitivity Δ ≥ 0 of f under ``relation``: the largest ``‖f(x) − f(x')‖₂`` over
        neighbours. For a sum of vectors clipped to norm C this is C under add/remove and 2C
        under substitution (see :func:`privamp.relations.clipped_sum_sensitivity`).
    relation : NeighbouringRelation or str
        The relation Δ refers to (default add/remove).

    The privacy profile is Theorem 4 with θ = Δ/σ (rounded up); the noise multiplier is σ/Δ.

    >>> m = GaussianMechanism(sigma=2.0)
    >>> round(float(m.profile().delta(0.5)), 10), m.noise_multiplier
    (0.0524403233, 2.0)
    >>> m.release(10.0, rng=0) != 10.0
    True
    """

    sigma: float
    sensitivity: float = 1.0
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)

    def __post_init__(self):
        sigma = check_real("sigma", self.sigma, "(0, inf)")
        sens = check_real("sensitivity", self.sensitivity, "[0, inf)")
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))
        if not math.isfinite(sens / sigma):
            raise InvalidParameterError(
                "sigma", f"large enough that sensitivity / sigma is finite (sensitivity={sens!r})",
                sigma,
            )

    @classmethod
    def from_noise_multiplier(
        cls, noise_multiplier: float, sensitivity: float = 1.0,
        relation=NeighbouringRelation.ADD_REMOVE,
    ) -> GaussianMechanism:
        """σ = noise_multiplier × Δ (the noise multiplier is relative to the sensitivity)."""
        z = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
        sens = check_real("sensitivity", sensitivity, "(0, inf)")
        return cls(sigma=z * sens, sensitivity=sens, relation=relation)

    @classmethod
    def calibrated(
        cls, eps: float, delta: float, sensitivity: float = 1.0,
        relation=NeighbouringRelation.ADD_REMOVE,
    ) -> GaussianMechanism:
        """The smallest σ (rounded up) with δ(ε) ≤ delta: the analytic Gaussian mechanism of
        Balle & Wang (2018), found by bisection on the noise multiplier that keeps the feasible
        end of its bracket.

        >>> m = GaussianMechanism.calibrated(1.0, 1e-5)
        >>> round(m.sigma, 6), bool(m.profile().delta(1.0) <= 1e-5)
        (3.730632, True)
        """
        eps = check_real("eps", eps, "[0, inf)")
        delta = check_real("delta", delta, "(0, 1)")
        sens = check_real("sensitivity", sensitivity, "(0, inf)")
        log_target = float(round_down_log(math.log(delta)))
        e = np.array([eps])

        def feasible(z, idx):  # z = noise multiplier σ/Δ; feasible when δ ≤ target
            return np.array([gaussian_log_delta(div_up(1.0, float(zi)), e)[0] <= log_target
                             for zi in np.atleast_1d(z)])

        hi = 1.0
        while not feasible(np.array([hi]), None)[0]:
            hi *= 2.0
            if hi > 1e300:  # pragma: no cover - every target in (0, 1) is reachable
                raise InvalidParameterError("delta", "reachable", delta)
        lo = hi / 2.0
        while feasible(np.array([lo]), None)[0] and lo > 1e-300:
            hi, lo = lo, lo / 2.0
        z = float(bisect_threshold(feasible, lo, hi))
        return cls(sigma=mul_up(z, sens), sensitivity=sens, relation=relation)

    @property
    def noise_multiplier(self) -> float:
        """σ / Δ."""
        return math.inf if self.sensitivity == 0 else self.sigma / self.sensitivity

    @property
    def theta(self) -> float:
        """θ = Δ/σ rounded up (privacy gets worse as θ grows, so rounding up is safe)."""
        return div_up(self.sensitivity, self.sigma)

    def release(self, value: Any, rng: Any = None):
        """``value + N(0, σ² I)``: value is a finite real scalar or array."""
        x = check_real_array("value", value, "(-inf, inf)", nonempty=False)
        noisy = x + check_rng(rng).normal(0.0, self.sigma, size=x.shape)
        return float(noisy) if noisy.ndim == 0 else noisy

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """Noise from weak (σ = 0.5) to strong (σ = 5), and a sensitivity other than 1."""
        return [cls(sigma, relation=relation) for sigma in (1.0, 0.5, 5.0)] + [
            cls(2.0, sensitivity=2.0, relation=relation)]

    def profile(self) -> GaussianProfile:
        return GaussianProfile(self.theta, self.relation)

    def privacy_loss(self, reverse: bool = False) -> GaussianPrivacyLoss:
        """L ~ N(θ²/2, θ²) for the pair N(0, σ²), N(Δ, σ²) (symmetric: ``reverse`` is the same)."""
        return GaussianPrivacyLoss(self.theta)


def classical_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classical calibration σ = Δ √(2 log(1.25/δ)) / ε (Dwork & Roth 2014, Theorem A.1).

    Valid only for ε ∈ (0, 1); loose. Kept as a baseline for comparisons: the exact calibration is
    :meth:`GaussianMechanism.calibrated`.

    >>> round(classical_gaussian_sigma(0.5, 1e-5), 6)
    9.689611
    """
    eps = check_real("eps", eps, "(0, 1)")
    delta = check_real("delta", delta, "(0, 1)")
    sens = check_real("sensitivity", sensitivity, "(0, inf)")
    return sens * math.sqrt(2 * math.log(1.25 / delta)) / eps
