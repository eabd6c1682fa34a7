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

:func:`gaussian_log_delta_bounds` computes the value and its error margin once and returns both
an upper and a lower bound (:meth:`GaussianProfile.log_delta_lower`); where the upper value uses
the trapezoid rule the lower one uses the midpoint rule (a lower bound for a convex integrand).
The argument errors of a = θ/2 − ε/θ are absolute (a few ulp of θ/2 + ε/θ), not relative to |a|
(docs/certification.md, "Lower values of privacy profiles").
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
    div_down,
    div_up,
    log1mexp,
    log_expm1,
    mul_down,
    mul_up,
    round_down_log,
    round_up_log,
)
from .._params import Param
from .._validation import check_real
from ..errors import InvalidParameterError
from ..privacy_loss import GaussianPrivacyLoss
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from .base import SENSITIVITY, AdditiveNoiseMechanism, register

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
_SUBNORMAL = math.ulp(0.0)
#: rows of at least this many points are evaluated one θ at a time (see _log_delta_rows)
_ROW_BY_ROW = 4096
_TWO_OVER_SQRTPI = 2.0 / _SQRTPI


#: beyond this argument D = −erfcx' is evaluated by its asymptotic series (below, by
#: 2/√π − 2u erfcx(u), whose cancellation costs ~2u² ulp: 5.7e-12 relative at u = 20)
_ASYMPTOTIC_D = 20.0
# coefficients (2k+1)!!/2^k of D(u) = (1/(√π u²)) Σ_k (−1)^k c_k u^{−2k}
_D_SERIES = tuple(math.prod(range(1, 2 * k + 2, 2)) / 2.0**k for k in range(11))


def _neg_erfcx_prime(u: np.ndarray, lower: bool = False):
    """``D(u) = −erfcx'(u) = 2/√π − 2u·erfcx(u)`` for u > 0, and a bound on its relative error.

    For u > 20 the asymptotic series ``(1/(√π u²)) Σ_k (−1)^k ((2k+1)!!/2^k) u^{−2k}`` is used.
    ``D(u) = (4/√π) ∫_0^∞ s e^{−s²} e^{−2us} ds`` and the Taylor remainders of e^{−s²}
    alternate, so the series truncated after a positive term (k = 10) is an upper bound and
    after a negative term (k = 9, ``lower=True``) a lower bound; the k = 10 term is below 2e-19
    of D at u = 20.
    """
    big = u > _ASYMPTOTIC_D
    x2 = 1.0 / (u * u)
    terms = _D_SERIES[:10] if lower else _D_SERIES
    poly = 0.0
    for k in range(len(terms) - 1, -1, -1):
        poly = poly * x2 + (terms[k] if k % 2 == 0 else -terms[k])
    asym = x2 / _SQRTPI * poly
    direct = _TWO_OVER_SQRTPI - 2.0 * u * _special.erfcx(np.minimum(u, _ASYMPTOTIC_D))
    rel = np.where(big, _SAFE, _SAFE * (1.0 + 2.0 * u * u))
    return np.where(big, asym, direct), rel


def _neg_erfcx_prime_bound(x: np.ndarray) -> np.ndarray:
    """A non-increasing upper bound on D(x) = −erfcx'(x) for x ≥ −0.1 (error terms only).

    ``erfcx(x) > 2/(√π (x + √(x² + 2)))`` (Abramowitz–Stegun 7.1.13) gives
    ``D(x) < (4/√π)/(x + √(x² + 2))²`` for x ≥ 0; below 0, ``D(x) = 2/√π + 2|x| erfcx(x)`` with
    erfcx(x) ≤ 1.2 on [−0.1, 0].
    """
    xp = np.maximum(x, 0.0)
    with np.errstate(over="ignore"):
        t = xp + np.sqrt(xp * xp + 2.0)
    pos = 2.0 * _TWO_OVER_SQRTPI / t / t * (1 + 8 * ULP)
    return np.where(x >= 0, pos, _TWO_OVER_SQRTPI + 3.0 * np.abs(x))


def _arg_rel(x: np.ndarray, dx: np.ndarray, dval: np.ndarray, drel: np.ndarray) -> np.ndarray:
    """Bound on the relative change of D between x and any point within dx of it (x ≥ 0), given
    the computed D(x) = dval within drel: −y D'(y)/D(y) ≤ 2 (the tilted mean of s in D's integral
    is at most 1/(2y)) gives 2dx/(x − dx); |D'| = erfcx'' ≤ 2.5 on [−0.1, ∞) (erfcx'' is
    decreasing, 2 at 0) gives 2.5dx/D, the better one near x = 0."""
    rel1 = np.where(x > dx, 2.0 * dx / (x - dx), np.inf)
    low = dval * (1.0 - drel) - 2.5 * dx
    rel2 = np.where(low > 0, 2.5 * dx / low, np.inf)
    return np.minimum(rel1, rel2)


def _log_phi_neg_upper(a: np.ndarray, erfcx_u: np.ndarray, da: np.ndarray) -> np.ndarray:
    """Upper bound on log Φ(a′) for every a′ within ``da`` of a < 0, from ``erfcx_u`` =
    erfcx(u) computed at u = fl(−a/√2) (the region-a ceiling of
    :func:`gaussian_log_delta_bounds`, which has erfcx(u) already): log_ndtr's own formula
    (:func:`privamp._special.log_ndtr_neg_from_erfcx`) on that value.

    Errors: what log_ndtr has (within ``_SAFE`` (1 + |·|), like every special-function value)
    except that erfcx's argument is fl(−a/√2) here, not fl(−a·fl(1/√2)): both within 0.81 ulp
    of −a/√2 (two roundings each), and erfcx's condition number is ≤ 1, so at most 2 ulp more
    of relative error in erfcx, 2 ulp absolute in the logarithm; budgeted as 48 ulp·(1 + |·|)
    in all. The argument error moves log Φ by at most (|a| + 2)·da (Birnbaum's bound on the
    Mills ratio). −inf where a²/2 overflows (|a| > 1.9e154: log Φ(a) < −a²/2 is below the float
    range; the caller reports the most negative float).
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_phi = _special.log_ndtr_neg_from_erfcx(a, erfcx_u)
        ceiling = round_up_log(log_phi + (np.abs(a) + 2.0) * da, ulps=48)
    return np.where(np.isneginf(log_phi), -np.inf, ceiling)


def _log_width(th: np.ndarray) -> np.ndarray:
    """log(v − u) = log(θ/√2) for each θ, within 2 ulp (math.log, once per distinct θ): only
    at the points that take the quadrature rules (``short``), usually none."""
    if th.size and th.min() == th.max():
        return np.full(th.shape, math.log(float(th[0]) / _SQRT2))
    th_values, th_index = np.unique(th, return_inverse=True)
    return np.array([math.log(t / _SQRT2) for t in th_values.tolist()])[th_index]


def gaussian_log_delta(theta: float, eps: np.ndarray) -> np.ndarray:
    """Upper bound on log δ(ε) of the Gaussian mechanism with θ = Δ/σ, for a 1-D array ε ≥ 0."""
    return gaussian_log_delta_bounds(theta, eps, lower=False)[1]


def gaussian_log_delta_lower(theta: float, eps: np.ndarray) -> np.ndarray:
    """Lower bound on log δ(ε) of the Gaussian mechanism with θ = Δ/σ (θ as given), for a 1-D
    array ε ≥ 0 (``-inf`` where nothing better is certified, e.g. below the float range)."""
    return gaussian_log_delta_bounds(theta, eps, upper=False)[0]


def gaussian_log_delta_bounds(theta: float | np.ndarray, eps: np.ndarray, *, lower: bool = True,
                              upper: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` bounds on log δ(ε) of Theorem 4 with θ = Δ/σ, for a 1-D array ε ≥ 0.

    ``theta`` is a float or an array of ε's shape (one θ per point: several group profiles
    evaluated in one call). Every operation is elementwise, so each element gets exactly the
    value and the margin it gets from a call with its θ alone.

    One evaluation gives a central value and a bound on its error; the upper bound is value +
    margin (then the ceilings log Φ(a) and log(Φ(a) − Φ(b))), the lower value − margin. Where the
    upper uses a one-sided bound (the trapezoid rule for the erfcx difference, an upper bound
    because D = −erfcx' is convex) the lower uses the opposite one (the midpoint rule, a lower
    bound for a convex integrand). ``lower``/``upper`` skip the work of the side not wanted (its
    array is then all ``-inf``).

    Error model (besides the special functions, within ``_SAFE`` each): a = θ/2 − ε/θ and
    s = θ/2 + ε/θ = −b are within 2.5 ulp·s of the exact values (θ/2 is exact, ε/θ and the sum
    round once each); the quantities derived from them (u = −a/√2, v = s/√2, a/√2, ...) within
    4 ulp·v. These *absolute* errors matter when a is near 0 and θ is large (a relative error
    model missed them: θ = 1e4, ε = θ²/2 was 4e-13 below the exact log δ): each is propagated
    through a bound on the derivative of the function it enters.
    """
    eps = np.asarray(eps, dtype=float)
    lo = np.full(eps.shape, -np.inf)
    up = np.full(eps.shape, -np.inf)
    theta_in = np.broadcast_to(np.asarray(theta, dtype=float), eps.shape)
    if not np.any(theta_in > 0.0):
        return lo, up
    # θ = 0: δ ≡ 0 (both −inf, left out of every region below).
    # δ grows with θ: a subnormal θ (θ/2 would lose its last bits) is raised to the smallest
    # normal float for the upper value; the lower value is then −inf (no information)
    no_lower = theta_in < _MIN_NORMAL
    theta = np.maximum(theta_in, _MIN_NORMAL)
    finite = np.isfinite(eps) & (theta_in > 0.0)
    with np.errstate(over="ignore"):
        a = theta / 2 - eps / theta
        s = theta / 2 + eps / theta  # −b
    da = 2.5 * ULP * s  # absolute error bound of a and of s
    region_a = finite & (a < 0)
    region_b = finite & ~region_a
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if np.any(region_b):
            e = eps[region_b]
            ab, sb, dab = a[region_b], s[region_b], da[region_b]
            la = _special.log_ndtr(ab)
            lnb = _special.log_ndtr(-sb)
            lb = e + lnb
            d = la - lb
            # log Φ' = φ/Φ ≤ φ(0)/Φ(0) < 0.81 at a ≥ 0 (and a hair below); for b < 0 it is
            # < |b| + 1 (Birnbaum's bound on the Mills ratio)
            err_la = _SAFE * (1.0 + np.abs(la)) + 0.81 * dab
            err_lnb = _SAFE * (1.0 + np.abs(lnb)) + (sb + 2.0) * dab
            # ε + log Φ(b) cancels (both ~ε when θ is large): its rounding is ½ ulp of the terms
            err_d = err_la + err_lnb + ULP * (e + np.abs(lnb)) + ULP * np.abs(d)
            value = la + log1mexp(-d)
            ok = (d > err_d) & np.isfinite(value)
            # log(1 − e^{−x}) has slope 1/(e^x − 1), largest at the left end of [d ± err_d]
            margin = err_la + err_d / np.expm1(np.where(ok, d - err_d, 1.0))
            # the gap form Φ(a) − Φ(b) = ½(erf(a/√2) + erf(s/√2)), a sum of two non-negative
            # terms: accurate where d cancels (tiny θ, ε ≤ θ²/2); erf' ≤ 2/√π turns the argument
            # errors (4 ulp·s/√2 each) into at most 1.2·da absolute on the half sum
            g = 0.5 * (_special.erf(ab / _SQRT2) + _special.erf(sb / _SQRT2))
            rel_g = _SAFE + (1.2 * dab + 2 * _SUBNORMAL) / g
            # δ = (Φ(a) − Φ(b)) − (e^ε − 1) Φ(b): the gap form, with the second term bounded
            # the other way, in logs (e^ε − 1 overflows beyond ε ≈ 709; log_expm1 is within
            # 2 ulp·(1 + |·|), the sum of the two logarithms within ½ ulp of their magnitudes)
            log_t = log_expm1(e) + lnb
            err_t = err_lnb + 2 * ULP * (1.0 + np.abs(log_expm1(e))) + ULP * np.abs(lnb) + ULP
            err_t = np.where(e > 0, err_t, 0.0)  # ε = 0: the term is exactly 0
            if upper:
                val = round_up_log(value + margin, ulps=16)
                g_up = g * (1.0 + rel_g)
                t_lo = np.exp(log_t - err_t) * (1 - 2 * ULP)
                rest = g_up - t_lo
                l_gap = np.where(rest > 0, np.log(rest) + np.log1p(2 * ULP * (g_up + t_lo) / rest),
                                 np.inf)
                # δ ≤ Φ(a) always, and δ ≤ Φ(a) − Φ(b) − (e^ε − 1) Φ(b)
                ceiling = np.fmin(round_up_log(la + err_la, ulps=32),
                                  round_up_log(l_gap, ulps=32))
                up[region_b] = np.where(ok & np.isfinite(val), np.minimum(val, ceiling),
                                        ceiling)
            if lower:
                lo1 = np.where(ok, round_down_log(value - margin, ulps=16), -np.inf)
                g_lo = g * (1.0 - np.minimum(rel_g, 1.0))
                t_up = np.exp(log_t + err_t) * (1 + 2 * ULP)
                gap = g_lo - t_up
                rel_gap = 2 * ULP * (g_lo + t_up) / gap
                lo2 = np.where((gap > 0) & (rel_gap < 1),
                               round_down_log(np.log(gap) + np.log1p(-rel_gap), ulps=16), -np.inf)
                lo[region_b] = np.fmax(lo1, lo2)
        if np.any(region_a):
            e = eps[region_a]
            th = theta[region_a]
            aa, sa, daa = a[region_a], s[region_a], da[region_a]
            u = -aa / _SQRT2
            v = sa / _SQRT2
            duv = 4 * ULP * v  # absolute error bound of u and of v
            eu = _special.erfcx(u)
            ev = _special.erfcx(v)
            gap = th * th / (e - th * th / 2)  # (v − u)/u
            close = gap < 1e-6
            diff = eu - ev
            log_diff = np.log(diff)
            # the erfcx difference loses its condition number eu/diff (each within a few ulp);
            # the argument errors move erfcx(u), erfcx(v) by at most D̄·duv (D decreasing)
            rel_eval = _SAFE + 8 * ULP * eu / diff
            # (D̄ is non-increasing and v ≥ u: D̄(v − duv) ≤ D̄(u − duv))
            d_arg = 2.0 * _neg_erfcx_prime_bound(u - duv) * duv
            rel = rel_eval + d_arg / (diff * (1.0 - np.minimum(rel_eval, 0.5)))
            rel = np.where(rel_eval < 0.5, rel, np.inf)
            direct = (diff > 0) & np.isfinite(log_diff)
            use_bound = close | ~direct
            # where the interval [u, v] is short (absolutely or relative to u) the quadrature
            # rules are accurate to ~(v − u)² and beat the difference, which loses eu/diff
            short = use_bound | (gap < 1e-3) | (th < 1e-3)
            # −a²/2: the argument error moves it by at most |a|·da (+ da²)
            e_sq = np.abs(aa) * daa * (1 + 1e-9) + daa * daa
            head = -aa * aa / 2 + _LOG_HALF
            if upper:
                log_up = np.where(direct, log_diff + np.log1p(rel), np.nan)
                if np.any(short):
                    # trapezoid on the convex D = −erfcx' (completely monotone): an upper bound
                    du, du_rel = _neg_erfcx_prime(u[short])
                    dv, dv_rel = _neg_erfcx_prime(v[short])
                    dd = duv[short]
                    r_t = _SAFE + 2 * ULP + np.maximum(
                        du_rel + _arg_rel(u[short], dd, du, du_rel),
                        dv_rel + _arg_rel(v[short], dd, dv, dv_rel))
                    trap = _log_width(th[short]) + np.log(0.5 * (du + dv)) + np.log1p(r_t)
                    log_up[short] = np.where(close[short], trap, np.fmin(log_up[short], trap))
                # a² carries ~5 ulp·a²/2 of rounding: an error of the logarithm itself, covered
                # (with the rounding of the logarithms and of the sum) by 16 ulp·(1 + |sum|), as
                # |sum| ≥ a²/2 − O(1) (the other terms are ≤ 0 or O(1))
                val = round_up_log(head + log_up + e_sq, ulps=16)
                ceiling = _log_phi_neg_upper(aa, eu, daa)
                # where a² or ε/θ overflow the closed form is ±inf or NaN (δ > 0 is finite in
                # log space): the ceiling log Φ(a) still holds (fmin ignores NaN)
                val = np.where(np.isfinite(val), val, np.nan)
                up[region_a] = np.fmin(val, ceiling)
            if lower:
                log_lo = np.where(direct & (rel < 1), log_diff + np.log1p(-np.minimum(rel, 1.0)),
                                  -np.inf)
                mid = short
                if np.any(mid):
                    # midpoint rule on the convex D: a lower bound on ∫_u^v D
                    um, vm = u[mid], v[mid]
                    m = 0.5 * (um + vm)
                    dm_err = 5 * ULP * vm
                    dm, dm_rel = _neg_erfcx_prime(m, lower=True)
                    r_m = _SAFE + 2 * ULP + dm_rel + _arg_rel(m, dm_err, dm, dm_rel)
                    mid_lo = np.where((r_m < 1) & (dm > 0),
                                      _log_width(th[mid]) + np.log(dm)
                                      + np.log1p(-np.minimum(r_m, 1.0)),
                                      -np.inf)
                    log_lo[mid] = np.fmax(log_lo[mid], mid_lo)
                val = round_down_log(head + log_lo - e_sq, ulps=16)
                lo[region_a] = np.where(np.isfinite(val), val, -np.inf)
    # δ(ε) > 0 at every finite ε when θ > 0: a logarithm below the float range is reported as
    # the most negative float, never −inf (which would certify (ε, 0)-DP)
    up = np.where(finite & (up < -_MAX_FLOAT), -_MAX_FLOAT, up)
    lo = np.where(no_lower, -np.inf, lo)
    return np.minimum(lo, 0.0), np.minimum(up, 0.0)


class GaussianProfile(PrivacyProfile):
    """Exact privacy profile of the Gaussian mechanism (Balle et al. 2018, Theorem 4).

    Parameters
    ----------
    theta : float
        θ = Δ/σ ≥ 0, sensitivity over noise standard deviation (the inverse of the noise
        multiplier).
    relation : NeighbouringRelation or str
        The relation under which Δ is the sensitivity.
    theta_lower : float, optional
        A lower bound on the exact θ (default ``theta``), for the lower values: a mechanism's θ
        is a rounded quotient (Δ/σ rounded up), and the lower values at the rounded-up θ would
        bound the bound, not the mechanism (one ulp of θ moves log δ by up to (ε/θ)² ulp).

    >>> p = GaussianProfile(1.0)
    >>> round(float(p.delta(1.0)), 12)
    0.126936737507
    >>> round(float(GaussianProfile(0.25).log_delta(4.5)), 6)  # δ = 1.27e-73
    -167.852903
    """

    def __init__(self, theta: float, relation=NeighbouringRelation.ADD_REMOVE,
                 theta_lower: float | None = None):
        self.theta = check_real("theta", theta, "[0, inf)")
        self.relation = NeighbouringRelation.parse(relation)
        self.theta_lower = (self.theta if theta_lower is None
                            else check_real("theta_lower", theta_lower, f"[0, {self.theta!r}]"))

    def _log_delta(self, eps):
        return gaussian_log_delta(self.theta, eps)

    def _log_delta_lower(self, eps):
        return gaussian_log_delta_lower(self.theta_lower, eps)

    def _log_q_tail(self, eps, lower):
        """Bounds on log Φ(−θ/2 − ε/θ): the α-derivative of Theorem 4's δ is −Φ(−θ/2 − ε/θ)
        (the φ terms cancel: φ(θ/2 − ε/θ) = e^ε φ(θ/2 + ε/θ)), the Q-tail of the privacy loss.

        The exact θ lies in [theta_lower, theta]. s(θ) = θ/2 + ε/θ is smallest at θ = √(2ε)
        (where it is √(2ε)) and largest at an end: the upper bound takes the smallest s over the
        range, the lower bound the largest. Errors as in :func:`gaussian_log_delta_bounds`: s
        within 2.5 ulp·s, log Φ within ``_SAFE`` (1 + |·|), and an argument error moves log Φ(−s)
        by at most (s + 2) times itself (Birnbaum's bound on the Mills ratio).
        """
        eps = np.asarray(eps, dtype=float)
        th_lo, th_hi = self.theta_lower, self.theta
        if th_hi == 0.0:
            return np.full(eps.shape, -np.inf)  # δ ≡ 0
        if th_hi < _MIN_NORMAL:
            return None
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            s_hi = th_hi / 2 + eps / th_hi
            s_lo = th_lo / 2 + eps / th_lo if th_lo >= _MIN_NORMAL else np.full(eps.shape, np.inf)
            if lower:
                s = np.maximum(s_lo, s_hi)
            else:
                s = np.minimum(s_lo, s_hi)
                root = np.sqrt(2.0 * eps)
                s = np.where((th_lo <= root) & (root <= th_hi), np.minimum(s, root), s)
            value = _special.log_ndtr(-s)
            err = _SAFE * (1.0 + np.abs(value)) + (s + 2.0) * (2.5 * ULP * s)
            out = value - err if lower else value + err
        finite = np.isfinite(s) & np.isfinite(out)
        if lower:
            return np.where(finite, np.minimum(out, 0.0), -np.inf)
        # ε = ∞: Q = 0 exactly; s overflowing at a finite ε: Q > 0 below the float range (the most
        # negative float, never −inf, as for δ); a non-finite bound otherwise is the trivial 0
        return np.where(finite, np.minimum(out, 0.0),
                        np.where(np.isposinf(eps), -np.inf,
                                 np.where(np.isinf(s), -_MAX_FLOAT, 0.0)))

    @classmethod
    def _log_delta_rows(cls, profiles, eps, lower=False):
        # one call of the elementwise bounds over the (θ, ε) grid: each element is computed as
        # in its profile's own call (gaussian_log_delta_bounds with an array θ)
        theta = np.array([p.theta_lower if lower else p.theta for p in profiles], dtype=float)
        if eps.size >= _ROW_BY_ROW:
            # long rows: the per-call cost is negligible, a scalar θ saves the θ array's traffic
            out = np.empty((theta.size, eps.size))
            for i, th in enumerate(theta.tolist()):
                lo, up = gaussian_log_delta_bounds(th, eps, lower=lower, upper=not lower)
                out[i] = lo if lower else up
            return out
        grid_theta = np.repeat(theta, eps.size)
        grid_eps = np.tile(eps, theta.size)
        lo, up = gaussian_log_delta_bounds(grid_theta, grid_eps, lower=lower, upper=not lower)
        return (lo if lower else up).reshape(theta.size, eps.size)

    @property
    def pure_epsilon(self) -> float:
        return 0.0 if self.theta == 0.0 else math.inf

    def _white_box_group(self, k):
        return GaussianProfile(mul_up(float(k), self.theta), self.relation,
                               theta_lower=mul_down(float(k), self.theta_lower))

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
        low = "" if self.theta_lower == self.theta else f", theta_lower={self.theta_lower!r}"
        return f"GaussianProfile(theta={self.theta!r}, relation={self.relation.value!r}{low})"


@register("gaussian")
@dataclass(frozen=True)
class GaussianMechanism(AdditiveNoiseMechanism):
    """Gaussian mechanism ``f(x) + N(0, σ² I)``.

    The privacy profile is Theorem 4 with θ = Δ/σ (rounded up); the noise multiplier is σ/Δ.

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

    >>> m = GaussianMechanism(sigma=2.0)
    >>> round(float(m.profile().delta(0.5)), 10), m.noise_multiplier
    (0.0524403233, 2.0)
    >>> m.release(10.0, rng=0) != 10.0
    True
    """

    sigma: float
    sensitivity: float = 1.0
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)
    params = (Param("sigma", "(0, inf)", help="Gaussian noise standard deviation (> 0)"),
              SENSITIVITY)
    noise = "sigma"

    def describe(self) -> dict[str, Any]:
        return {"name": "gaussian", "sigma": self.sigma, "sensitivity": self.sensitivity,
                "noise_multiplier": self.noise_multiplier, "relation": self.relation.value}

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
    def theta_lower(self) -> float:
        """θ = Δ/σ rounded down (for the certified lower values)."""
        return div_down(self.sensitivity, self.sigma)

    def _draw_noise(self, rng, shape):
        return rng.normal(0.0, self.sigma, size=shape)  # value + N(0, σ² I)

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """Noise from weak (σ = 0.5) to strong (σ = 5), and a sensitivity other than 1."""
        return [cls(sigma, relation=relation) for sigma in (1.0, 0.5, 5.0)] + [
            cls(2.0, sensitivity=2.0, relation=relation)]

    def profile(self) -> GaussianProfile:
        return GaussianProfile(self.theta, self.relation, theta_lower=self.theta_lower)

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
