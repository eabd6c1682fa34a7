"""The log-space numerics toolkit every privamp module uses (and none re-implements).

Conventions
-----------
* Everything is vectorised (NumPy broadcasting) and float64.
* ``log(0) = -inf`` is a legitimate value (a probability or a δ that is exactly zero) and is
  propagated without warnings; NaN is never produced for valid inputs.
* Functions that round *on purpose* say which way. privamp's rule is that a number presented as a
  privacy guarantee is an upper bound, so the helpers here that support that (``div_up``,
  ``round_up_log``, :func:`bisect_threshold`) round toward the safe side.

Accuracy notes (checked against mpmath in ``tests/test_numerics.py``):

* :func:`log_comb` uses ``-log1p(n) - betaln(n-k+1, k+1)``, which keeps about 1e-13 relative
  accuracy up to n = 1e12; the textbook ``gammaln(n+1) - gammaln(k+1) - gammaln(n-k+1)`` loses
  up to 1e-5 there because of cancellation between numbers of size n log n.
* Gaussian tails use :func:`scipy.special.log_ndtr`, which stays finite far in the tail
  (``log_ndtr(-40) ≈ -804.6`` where ``log(ndtr(-40)) = -inf``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from scipy import special

__all__ = [
    "ULP",
    "binomial_logpmf",
    "bisect_threshold",
    "div_up",
    "hypergeom_logpmf",
    "log1mexp",
    "log_add",
    "log_comb",
    "log_expm1",
    "log_norm_cdf",
    "log_norm_sf",
    "log_sub",
    "log_sub_sign",
    "logsumexp_signed",
    "mul_up",
    "next_up",
    "round_down_log",
    "round_up_log",
]

#: Unit roundoff of float64 (distance from 1.0 to the next float).
ULP = float(np.finfo(float).eps)

_LOG2 = math.log(2.0)


def _silent(func):
    """Run ``func`` with floating-point warnings off (log(0) = -inf is intended here)."""

    def wrapper(*args, **kwargs):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            return func(*args, **kwargs)

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    wrapper.__wrapped__ = func
    return wrapper


# ---------------------------------------------------------------------------------------------
# log-space arithmetic
# ---------------------------------------------------------------------------------------------


def log_add(a, b):
    """``log(e^a + e^b)`` without overflow (``-inf`` is the log of zero).

    >>> float(log_add(0.0, 0.0)) == math.log(2)
    True
    """
    return np.logaddexp(a, b)


@_silent
def log1mexp(x):
    """``log(1 - e^x)`` for ``x <= 0``, accurate near 0 and far below it.

    Uses Mächler's switch: ``log(-expm1(x))`` for ``x > -log 2`` and ``log1p(-exp(x))`` below.
    ``x = 0`` gives ``-inf``; ``x > 0`` gives NaN (the logarithm of a negative number).

    >>> float(log1mexp(-1e-20))  # log(1e-20)
    -46.051701859880914
    """
    x = np.asarray(x, dtype=float)
    out = np.where(
        x > -_LOG2,
        np.log(-np.expm1(np.minimum(x, 0.0))),
        np.log1p(-np.exp(np.minimum(x, 0.0))),
    )
    out = np.where(x > 0, np.nan, out)
    return out[()] if out.ndim == 0 else out


@_silent
def log_expm1(x):
    """``log(e^x - 1)`` for ``x >= 0`` (``-inf`` at 0), accurate for tiny and huge ``x``.

    >>> float(log_expm1(1000.0))
    1000.0
    """
    x = np.asarray(x, dtype=float)
    out = np.where(x > 30.0, x + np.log1p(-np.exp(-x)), np.log(np.expm1(np.minimum(x, 30.0))))
    out = np.where(x < 0, np.nan, out)
    return out[()] if out.ndim == 0 else out


@_silent
def log_sub(a, b):
    """``log(e^a - e^b)`` for ``a >= b``; ``-inf`` when ``a == b``; NaN when ``a < b``.

    >>> round(float(log_sub(math.log(3), math.log(1))), 12) == round(math.log(2), 12)
    True
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    out = a + log1mexp(b - a)
    out = np.where(np.isneginf(b), a, out)
    out = np.where(a == b, -np.inf, out)
    return out[()] if np.ndim(out) == 0 else out


@_silent
def log_sub_sign(a, b):
    """Signed subtraction: returns ``(sign, log|e^a - e^b|)`` with sign in {-1, 0, +1}.

    >>> s, v = log_sub_sign(0.0, math.log(3))
    >>> int(s), round(float(v), 12) == round(math.log(2), 12)
    (-1, True)
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    hi = np.maximum(a, b)
    lo = np.minimum(a, b)
    sign = np.sign(a - b)
    sign = np.where(np.isneginf(a) & np.isneginf(b), 0.0, sign)
    sign = np.where(np.isposinf(a) & ~np.isposinf(b), 1.0, sign)
    sign = np.where(np.isposinf(b) & ~np.isposinf(a), -1.0, sign)
    value = log_sub(hi, lo)
    value = np.where(sign == 0, -np.inf, value)
    return sign[()] if sign.ndim == 0 else sign, value


def logsumexp_signed(a, b=None, axis=None):
    """Signed ``log Σ b_i e^{a_i}``: returns ``(log|sum|, sign)``, like SciPy's ``return_sign``.

    >>> v, s = logsumexp_signed([0.0, 0.0], b=[1.0, -0.5])
    >>> round(float(v), 12) == round(math.log(0.5), 12), float(s)
    (True, 1.0)
    """
    with np.errstate(divide="ignore"):
        return special.logsumexp(a, b=b, axis=axis, return_sign=True)


# ---------------------------------------------------------------------------------------------
# combinatorics and log-pmfs
# ---------------------------------------------------------------------------------------------


@_silent
def log_comb(n, k):
    """``log C(n, k)`` via ``betaln`` (accurate to ~1e-13 relative up to n = 1e12).

    Real (non-integer) ``n`` is allowed (generalised binomial coefficient for ``n >= k``).
    Returns ``-inf`` for ``k < 0`` or ``k > n``.

    >>> round(float(log_comb(1030, 515)), 6)  # scipy.special.binom overflows here
    710.246905
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    out = -np.log1p(n) - special.betaln(n - k + 1.0, k + 1.0)
    out = np.where((k < 0) | (k > n), -np.inf, out)
    out = np.where((k == 0) | (k == n), 0.0, out)
    return out[()] if out.ndim == 0 else out


@_silent
def binomial_logpmf(k, n, p):
    """``log P[Binomial(n, p) = k]``, exact conventions at ``p in {0, 1}`` (``0 log 0 = 0``).

    >>> round(float(np.exp(binomial_logpmf(2, 4, 0.5))), 12)
    0.375
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    out = log_comb(n, k) + special.xlogy(k, p) + special.xlog1py(n - k, -p)
    out = np.where((k < 0) | (k > n), -np.inf, out)
    return out[()] if out.ndim == 0 else out


@_silent
def hypergeom_logpmf(k, population, successes, draws):
    """``log P[X = k]`` for X ~ Hypergeometric: ``draws`` items without replacement from a
    ``population`` that contains ``successes`` marked items; X counts marked items drawn.

    >>> round(float(np.exp(hypergeom_logpmf(1, 5, 1, 2))), 12)  # a record in a 2-of-5 draw
    0.4
    """
    k = np.asarray(k, dtype=float)
    N = np.asarray(population, dtype=float)
    K = np.asarray(successes, dtype=float)
    m = np.asarray(draws, dtype=float)
    out = log_comb(K, k) + log_comb(N - K, m - k) - log_comb(N, m)
    impossible = (k < np.maximum(0.0, m - (N - K))) | (k > np.minimum(K, m))
    out = np.where(impossible, -np.inf, out)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# Gaussian tails
# ---------------------------------------------------------------------------------------------


def log_norm_cdf(x):
    """``log Φ(x)`` for the standard normal CDF Φ, finite far into the lower tail."""
    return special.log_ndtr(x)


def log_norm_sf(x):
    """``log(1 - Φ(x))``, finite far into the upper tail."""
    return special.log_ndtr(np.negative(x))


# ---------------------------------------------------------------------------------------------
# directed rounding (toward the privacy-safe side)
# ---------------------------------------------------------------------------------------------


def next_up(x):
    """The next float above ``x`` (``inf`` stays ``inf``)."""
    return np.nextafter(x, np.inf)


def div_up(a: float, b: float) -> float:
    """``a / b`` rounded *up*: the smallest float ``>=`` the exact quotient (finite a, b > 0).

    privamp uses it for ratios such as θ = Δ/σ whose rounding must not favour privacy.

    >>> div_up(1.0, 3.0) > 1 / 3
    True
    >>> div_up(1.0, 4.0)
    0.25
    """
    q = a / b
    if math.isfinite(q) and Fraction(q) < Fraction(a) / Fraction(b):
        q = math.nextafter(q, math.inf)
    return q


def mul_up(a: float, b: float) -> float:
    """``a * b`` rounded *up* (finite a, b)."""
    p = a * b
    if math.isfinite(p) and Fraction(p) < Fraction(a) * Fraction(b):
        p = math.nextafter(p, math.inf)
    return p


def round_up_log(log_value, relative_error=0.0, *, ulps: float = 8.0):
    """Raise log-values to upper bounds: ``log v + ulps·ULP·(1 + |log v|) + relative_error``.

    ``ulps·ULP·(1 + |log v|)`` covers the absolute rounding error of a computed logarithm (it
    grows with its magnitude); ``relative_error`` is a bound on the relative error of v itself
    (``log(v (1 + r)) ≤ log v + r``). Infinite values are returned unchanged, so ``log 0 = -inf``
    stays exactly zero.

    >>> float(round_up_log(-1.0)) > -1.0, float(round_up_log(-np.inf))
    (True, -inf)
    """
    v = np.asarray(log_value, dtype=float)
    with np.errstate(invalid="ignore"):
        up = v + ulps * ULP * (1.0 + np.abs(v)) + relative_error
    out = np.where(np.isfinite(v), up, v)
    return out[()] if out.ndim == 0 else out


def round_down_log(log_value, *, ulps: float = 4.0):
    """Lower log-values by ``ulps·ULP·(1 + |log v|)`` (infinities unchanged): used for targets,
    so that "computed ≤ target" implies "exact ≤ target"."""
    v = np.asarray(log_value, dtype=float)
    with np.errstate(invalid="ignore"):
        down = v - ulps * ULP * (1.0 + np.abs(v))
    out = np.where(np.isfinite(v), down, v)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# monotone root finding
# ---------------------------------------------------------------------------------------------


def bisect_threshold(
    feasible: Callable[[np.ndarray, np.ndarray], np.ndarray],
    lo,
    hi,
    *,
    rtol: float = 4 * ULP,
    atol: float = 0.0,
    max_iter: int = 2100,
) -> np.ndarray:
    """Vectorised bisection that returns the *feasible* end of each bracket.

    For every element, ``lo`` must be infeasible (or simply "not known feasible") and ``hi`` must
    be feasible. ``feasible(x, idx)`` receives trial points ``x`` for the elements ``idx`` (flat
    indices into the broadcast ``lo``/``hi``) and returns a boolean array. The invariant
    ``feasible(hi)`` is kept at every step, so the answer satisfies the constraint even when the
    feasibility region is not an interval (then it is *a* feasible point, maybe not the smallest).
    This is how privamp turns "δ(ε) ≤ target" into an ε that is never smaller than the truth.

    The loop stops when ``hi - lo <= max(atol, rtol * |hi|)`` for every element.

    >>> float(bisect_threshold(lambda x, idx: x * x >= 2.0, 0.0, 2.0)) >= math.sqrt(2)
    True
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    shape = lo.shape
    lo = lo.reshape(-1).copy()
    hi = hi.reshape(-1).copy()
    for _ in range(max_iter):
        width = hi - lo
        active = width > np.maximum(atol, rtol * np.abs(hi))
        if not np.any(active):
            break
        idx = np.flatnonzero(active)
        mid = lo[idx] + 0.5 * width[idx]
        stuck = (mid <= lo[idx]) | (mid >= hi[idx])  # interval narrower than one float step
        ok = np.asarray(feasible(mid, idx), dtype=bool)
        hi[idx[ok & ~stuck]] = mid[ok & ~stuck]
        lo[idx[~ok & ~stuck]] = mid[~ok & ~stuck]
        lo[idx[stuck]] = hi[idx[stuck]]
    out = hi.reshape(shape)
    return out[()] if out.ndim == 0 else out
