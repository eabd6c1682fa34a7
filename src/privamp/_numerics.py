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

* :func:`log_comb`, :func:`binomial_logpmf` and :func:`hypergeom_logpmf` use Stirling's error
  terms and the deviance ``bd0`` (Loader 2000, as in R's ``dbinom``/``dhyper``): a few ulp of
  the result for any size. The textbook ``gammaln(n+1) - gammaln(k+1) - gammaln(n-k+1)`` loses
  1e-5 relative at n = 1e12, and SciPy's ``betaln`` still 1e-10, because numbers of size
  n log n cancel.
* Gaussian tails use privamp's own :func:`privamp._special.log_ndtr` (within 4 ulp), which
  stays finite far in the tail (``log_ndtr(-40) ≈ -804.6`` where ``log(ndtr(-40)) = -inf``).
  SciPy is imported lazily, inside the functions that need it: its import costs ~0.25 s.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _special
from ._validation import check_real_array

__all__ = [
    "ULP",
    "amplify_eps",
    "deamplify_eps",
    "down_ulps",
    "expm1_minus_x",
    "floor_pow",
    "log0",
    "up_ulps",
    "binomial_logpmf",
    "bisect_threshold",
    "section_threshold",
    "div_down",
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
    "lse_error",
    "mul_down",
    "mul_up",
    "next_up",
    "round_down_log",
    "round_up_log",
]

#: Unit roundoff of float64 (distance from 1.0 to the next float).
ULP = float(np.finfo(float).eps)

#: The smallest positive normal float64 (2.2e-308); below it rounding errors are absolute.
TINY = float(np.finfo(float).tiny)

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


def floor_pow(x: float, base: float) -> float:
    """The largest power of ``base`` that is at most ``x`` > 0 (exact: base 2 reads the binary
    exponent with :func:`math.frexp`; any other base corrects the logarithm's rounding at exact
    powers by a step either way).

    >>> floor_pow(3.0, 2.0), floor_pow(0.5, 2.0), floor_pow(2.5e7, 1e6)
    (2.0, 0.5, 1000000.0)
    """
    if base == 2.0:
        return math.ldexp(1.0, math.frexp(x)[1] - 1)
    p = base ** math.floor(math.log(x, base))
    while p > x:
        p /= base
    while p * base <= x:
        p *= base
    return p


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


def sorted_unique(a) -> np.ndarray:
    """``np.unique`` of a 1-D float array without its import of ``numpy.ma`` (≈8 ms at start-up
    in NumPy 2.4), for module-level constants.

    >>> sorted_unique([3.0, 1.0, 3.0]).tolist()
    [1.0, 3.0]
    """
    a = np.sort(np.asarray(a, dtype=float).reshape(-1))
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if a.size else a


def log0(x: float) -> float:
    """``log x`` for a scalar ``x >= 0`` with ``log 0 = -inf`` (no warning, no error).

    >>> log0(0.0), log0(1.0)
    (-inf, 0.0)
    """
    return -math.inf if x == 0.0 else math.log(x)


def expm1_minus_x(x):
    """``e^x − 1 − x`` (≥ 0) to a few ulp for every real x, vectorised.

    Taylor series for |x| < ½ (Horner, terms to x^21/21!, truncation < 1e-25 relative), where
    ``expm1(x) − x`` would cancel; ``expm1(x) − x`` beyond (the subtraction then loses at most a
    factor 5 in relative accuracy).

    >>> float(expm1_minus_x(1e-10))  # x²/2 + x³/6
    5.000000000166667e-21
    """
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 0.5
    xs = np.where(small, x, 0.0)
    acc = np.zeros_like(xs)
    for k in range(21, 1, -1):  # Σ_{k≥2} x^k/k! = x²(1/2! + x(1/3! + …))
        acc = acc * xs + 1.0 / math.factorial(k)
    series = acc * xs * xs
    with np.errstate(over="ignore", invalid="ignore"):
        direct = np.expm1(np.where(small, 0.0, x)) - np.where(small, 0.0, x)
    out = np.where(small, series, direct)
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
    """Signed subtraction: returns ``(sign, log|e^a - e^b|)`` with sign in {-1, 0, +1}
    (both NaN for ``a = b = +inf``, where the difference is undefined).

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
    both_inf = np.isposinf(a) & np.isposinf(b)  # ∞ − ∞ is undefined
    sign = np.where(both_inf, np.nan, sign)
    value = np.where(both_inf, np.nan, value)
    return (sign[()] if sign.ndim == 0 else sign), (value[()] if value.ndim == 0 else value)


def logsumexp_signed(a, b=None, axis=None):
    """Signed ``log Σ b_i e^{a_i}``: returns ``(log|sum|, sign)``, like SciPy's ``return_sign``.

    NumPy only (SciPy's ``logsumexp`` costs tens of µs per call in array-API dispatch; privamp
    calls this in loops of small arrays). ``b`` is folded into the exponents as ``log|b|`` (so
    subnormal weights keep their precision), with its sign kept apart.

    Method (the max-shifted sum): with M the largest exponent among the non-zero terms and i* one
    index where it is reached, ``log|Σ| = M + log|s* + R|``, ``R = Σ_{i ≠ i*} s_i e^{a_i − M}``
    (s* = ±1 the sign of the term at i*); ``log1p(R)`` where s* = +1 and R ≥ −½, else
    ``log|s* + R|``. R is summed pairwise in a fixed order (:func:`_pairwise_rows`: ⌈log2 n⌉
    levels of one rounding each, whatever NumPy's own reduction order).

    Rounding, for terms of one sign (every certified caller), with u = 1 ulp: each a_i − M is
    within ½u·|a_i − M|; the argument errors move log Σ by ½u·Σ p_i |a_i − M|, p_i = e^{a_i}/Σ,
    and as a_i − M = log p_i + log(Σ_j e^{a_j − M}) that is at most ½u·(H(p) + ln n) ≤ u·ln n.
    Each exp is within :data:`FUNC_ULPS`·u relative, the pairwise sum within ⌈log2 n⌉·u of R, and
    a relative error r of R moves log1p(R) by at most r; log1p itself is within FUNC_ULPS·u of
    its value (≤ ln n); the final addition within ½u·(|M| + |log1p R|) ≤ ½u·|log Σ| + u·ln n
    (M ≤ log Σ ≤ M + ln n). In all at most :func:`lse_error` =
    ``(FUNC_ULPS + 1 + ⌈log2 n⌉ + (FUNC_ULPS + 2)·ln n)·u + u·|log Σ|`` absolute on log Σ (the
    extra ½u·|log Σ| and 1u absorb the second-order terms). With mixed signs the sum can cancel:
    its error is then relative to the largest term, not to the sum (as in SciPy).

    Special values as SciPy: ``(−inf, 0)`` for an empty or all-zero sum (every a_i = −inf or
    b_i = 0, or exact cancellation), ``+inf`` terms dominate (``nan`` when +inf terms of both
    signs meet), ``nan`` propagates.

    >>> v, s = logsumexp_signed([0.0, 0.0], b=[1.0, -0.5])
    >>> round(float(v), 12) == round(math.log(0.5), 12), float(s)
    (True, 1.0)
    """
    a = np.asarray(a, dtype=float)
    if b is None:
        sign = None
    else:
        a, b = np.broadcast_arrays(a, np.asarray(b, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(b != 0, a + np.log(np.abs(b)), -np.inf)
        sign = np.where(b != 0, np.sign(b), 0.0)
    if axis is None:
        a = a.reshape(1, -1)
        sign = None if sign is None else sign.reshape(1, -1)
        val, sgn = _lse_rows(a, sign)
        return val[0][()], sgn[0][()]
    axis = axis % max(a.ndim, 1)
    a = np.moveaxis(a, axis, -1)
    shape = a.shape[:-1]
    a = a.reshape(-1, a.shape[-1]) if a.shape[-1] else np.zeros((int(np.prod(shape)), 0))
    if sign is not None:
        sign = np.moveaxis(sign, axis, -1).reshape(a.shape)
    val, sgn = _lse_rows(a, sign)
    return val.reshape(shape)[()], sgn.reshape(shape)[()]


def lse_error(n, value):
    """Bound on the absolute rounding error of :func:`logsumexp_signed` on n terms of one sign
    with result ``value`` (see its docstring): ``(FUNC_ULPS + 1 + ⌈log2 n⌉ + (FUNC_ULPS + 2)
    ln n) ulp + ulp·|value|`` (0 where ``value`` is infinite). Callers add it to their own
    margins."""
    n = max(int(n), 1)
    const = (FUNC_ULPS + 1 + math.ceil(math.log2(n)) + (FUNC_ULPS + 2) * math.log(n)) * ULP
    v = np.asarray(value, dtype=float)
    with np.errstate(invalid="ignore"):
        out = np.where(np.isfinite(v), const + ULP * np.abs(v), 0.0)
    return out[()] if out.ndim == 0 else out


def _pairwise_rows(e: np.ndarray) -> np.ndarray:
    """Row sums of a 2-D array by pairwise addition in a fixed order: ⌈log2 n⌉ levels, each
    element of a level the sum of two of the previous one (one rounding), so a sum of
    non-negative terms is within (1 + u)^⌈log2 n⌉ − 1 of the exact one."""
    while e.shape[1] > 1:
        n = e.shape[1]
        half = n // 2
        paired = e[:, :half] + e[:, half:2 * half]
        e = np.concatenate([paired, e[:, 2 * half:]], axis=1) if n % 2 else paired
    return e[:, 0]


def _lse_rows(a: np.ndarray, sign: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`logsumexp_signed` along the last axis of a 2-D array (``sign``: ±1/0 or None)."""
    rows, n = a.shape
    if n == 0:
        return np.full(rows, -np.inf), np.zeros(rows)
    with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
        top = np.argmax(a, axis=1)  # NaN rows: argmax finds the NaN, propagated below
        r = np.arange(rows)
        m = a[r, top]
        finite_m = np.isfinite(m)
        shift = np.where(finite_m, m, 0.0)
        e = np.exp(a - shift[:, None])
        s_top = np.ones(rows) if sign is None else sign[r, top]
        if sign is not None:
            e = e * sign
        e[r, top] = 0.0
        rest = _pairwise_rows(e)
        if sign is None:
            val = shift + np.log1p(rest)
            sgn = np.ones(rows)
        else:
            total = s_top + rest
            use_log1p = (s_top > 0) & (rest >= -0.5)
            val = shift + np.where(use_log1p, np.log1p(rest), np.log(np.abs(total)))
            sgn = np.sign(total)
            val = np.where(sgn == 0, -np.inf, val)
        # special values: all terms −inf (or zero weight), +inf terms, NaN
        empty = np.isneginf(m)
        val = np.where(empty, -np.inf, val)
        sgn = np.where(empty, 0.0, sgn)
        pos_inf = np.isposinf(m)
        if np.any(pos_inf):
            inf_terms = np.isposinf(a)
            s_all = np.ones_like(a) if sign is None else sign
            has_plus = np.any(inf_terms & (s_all > 0), axis=1)
            has_minus = np.any(inf_terms & (s_all < 0), axis=1)
            val = np.where(pos_inf, np.where(has_plus & has_minus, np.nan, np.inf), val)
            sgn = np.where(pos_inf, np.where(has_plus & has_minus, np.nan,
                                             np.where(has_plus, 1.0, -1.0)), sgn)
        nan_rows = np.any(np.isnan(a), axis=1)
        val = np.where(nan_rows, np.nan, val)
        sgn = np.where(nan_rows, np.nan, sgn)
    return val, sgn


# ---------------------------------------------------------------------------------------------
# combinatorics and log-pmfs
# ---------------------------------------------------------------------------------------------


_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Stirling series coefficients 1/12, 1/360, 1/1260, 1/1680, 1/1188
_STIRLING = (1.0 / 12.0, 1.0 / 360.0, 1.0 / 1260.0, 1.0 / 1680.0, 1.0 / 1188.0)


def _stirlerr(x):
    """Stirling's error ``log Γ(x+1) − (x+½) log x + x − ½ log 2π`` for x > 0.

    The asymptotic series (five terms; truncation below 3e-16) for x ≥ 15, the defining
    expression (no harmful cancellation at that size) below.
    """
    x = np.asarray(x, dtype=float)
    big = x >= 15.0
    xb = np.where(big, x, 15.0)
    x2 = 1.0 / (xb * xb)
    s0, s1, s2, s3, s4 = _STIRLING
    out = np.array((s0 - (s1 - (s2 - (s3 - s4 * x2) * x2) * x2) * x2) / xb, dtype=float)
    small = ~big & ~np.isnan(x)
    if np.any(small):
        xs = x[small]
        out[small] = _lgamma(xs + 1.0) - (xs + 0.5) * np.log(xs) + xs - _LN_SQRT_2PI
    return out


def _lgamma(x: np.ndarray) -> np.ndarray:
    """``log Γ(x)`` for x > 0 element by element (:func:`math.lgamma`, a few ulp; privamp only
    needs it below 31, on the few entries that are that small; no SciPy import)."""
    return np.array([math.lgamma(v) for v in np.ravel(x).tolist()], dtype=float).reshape(
        np.shape(x))


def _bd0(x, mean):
    """Deviance term ``x log(x/M) + M − x`` (≥ 0), by its series when x is close to M."""
    x = np.asarray(x, dtype=float)
    mean = np.asarray(mean, dtype=float)
    near = np.abs(x - mean) < 0.1 * (x + mean)
    v = np.where(near, (x - mean) / np.where(near, x + mean, 1.0), 0.0)
    total = (x - mean) * v
    term = 2.0 * x * v
    v2 = v * v
    for j in range(1, 40):  # |v| < 1/11: v^2 < 0.0083, converged long before 40 terms
        term = term * v2
        total = total + term / (2 * j + 1)
    with np.errstate(divide="ignore", invalid="ignore"):  # x log(x/M), 0 at x = 0 (xlogy)
        x_log = np.where(x == 0, 0.0, x * np.log(x / np.where(mean > 0, mean, 1.0)))
    far = x_log + mean - x
    return np.where(near, total, far)


@_silent
def log_comb(n, k):
    """``log C(n, k)``, accurate to a few ulp of the result for any size.

    Uses Stirling's error terms and the entropy form
    ``k log(n/k) + m log(n/m) + ½ log(n/(k m)) − ½ log 2π + δ(n) − δ(k) − δ(m)`` (m = n − k), in
    which no large terms cancel; ``log1p`` handles the small ratio. (The textbook
    ``gammaln`` difference loses 1e-5 relative at n = 1e12, and ``betaln`` 1e-10.) Real n is
    allowed; returns ``-inf`` for ``k < 0`` or ``k > n``.

    >>> round(float(log_comb(1030, 515)), 6)  # scipy.special.binom overflows here
    710.246905
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    m = n - k
    inside = (k > 0) & (m > 0)
    ks = np.where(inside, k, 1.0)
    ms = np.where(inside, m, 1.0)
    ns = np.where(inside, n, 2.0)
    small_k = ks <= ms
    # log(n/k) and log(n/m), with log1p for the ratio close to 1
    log_n_k = np.where(small_k, np.log(ns / ks), -np.log1p(-ms / ns))
    log_n_m = np.where(small_k, -np.log1p(-ks / ns), np.log(ns / ms))
    body = (ks * log_n_k + ms * log_n_m + 0.5 * (np.log(ns / ks) - np.log(ms))
            - _LN_SQRT_2PI + _stirlerr(ns) - _stirlerr(ks) - _stirlerr(ms))
    tiny = ns < 30.0  # small n: the gamma-function form is exact enough and covers real n < 1
    out = np.array(body, dtype=float)
    if np.any(tiny):
        out[tiny] = (_lgamma(ns[tiny] + 1.0) - _lgamma(ks[tiny] + 1.0)
                     - _lgamma(ms[tiny] + 1.0))
    out = np.where(inside, out, 0.0)
    out = np.where((k < 0) | (k > n), -np.inf, out)
    return out[()] if out.ndim == 0 else out


def _log_binom_raw(k, n, p, q, log_p, log_q):
    """log P[Binomial(n, p) = k] with q = 1 − p, log p and log q given separately (so that
    log q = log1p(−p) keeps its accuracy for tiny p); Loader's saddle point form."""
    m = n - k
    inside = (k > 0) & (m > 0)
    ks = np.where(inside, k, 1.0)
    ms = np.where(inside, m, 1.0)
    ns = np.where(inside, n, 2.0)
    body = (_stirlerr(ns) - _stirlerr(ks) - _stirlerr(ms)
            - _bd0(ks, ns * p) - _bd0(ms, ns * q)
            + 0.5 * (np.log(ns / ks) - np.log(ms)) - _LN_SQRT_2PI)
    at_zero = np.where(n == 0, 0.0, n * log_q)  # k = 0
    at_n = np.where(n == 0, 0.0, n * log_p)  # k = n
    out = np.where(inside, body, np.where(k == 0, at_zero, at_n))
    # degenerate laws
    out = np.where((p == 0) & inside, -np.inf, out)
    out = np.where((q == 0) & inside, -np.inf, out)
    out = np.where((k < 0) | (m < 0), -np.inf, out)
    return out


@_silent
def binomial_logpmf(k, n, p):
    """``log P[Binomial(n, p) = k]``, accurate in relative terms even at n = 1e12.

    Loader's saddle-point form (Stirling errors and the deviance ``bd0``), as in R's
    ``dbinom``; exact conventions at ``p ∈ {0, 1}`` (``0 log 0 = 0``).

    >>> round(float(np.exp(binomial_logpmf(2, 4, 0.5))), 12)
    0.375
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    out = _log_binom_raw(k, n, p, 1.0 - p, np.log(p), np.log1p(-p))
    return out[()] if out.ndim == 0 else out


@_silent
def hypergeom_logpmf(k, population, successes, draws):
    """``log P[X = k]`` for X ~ Hypergeometric: ``draws`` items without replacement from a
    ``population`` that contains ``successes`` marked items; X counts marked items drawn.

    Computed as a ratio of binomial pmfs with p = draws/population (the identity holds for any
    p), each accurate in relative terms, so nothing of size N log N cancels (R's ``dhyper``).

    >>> round(float(np.exp(hypergeom_logpmf(1, 5, 1, 2))), 12)  # a record in a 2-of-5 draw
    0.4
    """
    k = np.asarray(k, dtype=float)
    N = np.asarray(population, dtype=float)
    K = np.asarray(successes, dtype=float)
    m = np.asarray(draws, dtype=float)
    Ns = np.where(N > 0, N, 1.0)
    p = m / Ns
    q = (N - m) / Ns
    logs = (p, q, np.log(p), np.log1p(-p))
    out = (_log_binom_raw(k, K, *logs) + _log_binom_raw(m - k, N - K, *logs)
           - _log_binom_raw(m, N, *logs))
    impossible = (k < np.maximum(0.0, m - (N - K))) | (k > np.minimum(K, m))
    out = np.where(impossible, -np.inf, out)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# Gaussian tails
# ---------------------------------------------------------------------------------------------


def log_norm_cdf(x):
    """``log Φ(x)`` for the standard normal CDF Φ, finite far into the lower tail."""
    return _special.log_ndtr(x)


def log_norm_sf(x):
    """``log(1 - Φ(x))``, finite far into the upper tail."""
    return _special.log_ndtr(np.negative(x))


# ---------------------------------------------------------------------------------------------
# directed rounding (toward the privacy-safe side)
# ---------------------------------------------------------------------------------------------


def next_up(x):
    """The next float above ``x`` (``inf`` stays ``inf``)."""
    return np.nextafter(x, np.inf)


def _scalar_out(out, like):
    """A Python float for scalar input, else the array."""
    return float(out) if np.ndim(like) == 0 and not isinstance(like, np.ndarray) else out


def up_ulps(x, k: float):
    """``x`` raised by ``k`` relative units of rounding: ``x + k·ULP·|x|`` (finite values;
    ``±inf`` and NaN unchanged), vectorised; a Python float in gives a float out.

    For ``x ≥ 0`` this is exactly what the inline idiom ``x·(1 + k·ULP)`` gives when ``k`` is a
    power of two: ``k·ULP·|x|`` is then exact (outside the subnormal range) and both round the
    same real number ``x + k·ULP·x`` once, to nearest. That rounding costs at most
    ``½·ULP·|result|``, so the result is at least ``(k − 1)·ULP·|x|`` above ``x``: it covers a
    relative error of ``k − 1`` units ULP (for any ``k ≥ 1``). It does not raise 0 (an exact
    zero stays zero): for a value whose error is absolute (a subnormal result, a difference) add
    that absolute bound separately.

    >>> up_ulps(1.0, 4) == 1.0 + 4 * ULP, up_ulps(-1.0, 4) > -1.0, up_ulps(math.inf, 4)
    (True, True, inf)
    """
    v = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.where(np.isfinite(v), v + (k * ULP) * np.abs(v), v)
    return _scalar_out(out, x) if out.ndim == 0 else out


def down_ulps(x, k: float):
    """``x`` lowered by ``k`` relative units of rounding: ``x − k·ULP·|x|`` (the mirror of
    :func:`up_ulps`; ``x·(1 − k·ULP)`` for ``x ≥ 0``).

    >>> down_ulps(1.0, 4) < 1.0, down_ulps(0.0, 4)
    (True, 0.0)
    """
    v = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.where(np.isfinite(v), v - (k * ULP) * np.abs(v), v)
    return _scalar_out(out, x) if out.ndim == 0 else out


def div_up(a: float, b: float) -> float:
    """``a / b`` rounded *up*: the smallest float ``>=`` the exact quotient (finite a, b > 0).

    privamp uses it for ratios such as θ = Δ/σ whose rounding must not favour privacy.

    >>> div_up(1.0, 3.0) > 1 / 3
    True
    >>> div_up(1.0, 4.0)
    0.25
    """
    from fractions import Fraction  # deferred: not needed to list the CLI's options

    q = a / b
    if math.isfinite(q):
        if Fraction(q) < Fraction(a) / Fraction(b):
            q = math.nextafter(q, math.inf)
    elif q == -math.inf and math.isfinite(a) and b != 0:
        q = -sys.float_info.max  # the exact quotient is finite: round up, not to -inf
    return q


def mul_up(a: float, b: float) -> float:
    """``a * b`` rounded *up* (finite a, b)."""
    from fractions import Fraction  # deferred: not needed to list the CLI's options

    p = a * b
    if math.isfinite(p):
        if Fraction(p) < Fraction(a) * Fraction(b):
            p = math.nextafter(p, math.inf)
    elif p == -math.inf and math.isfinite(a) and math.isfinite(b):
        p = -sys.float_info.max  # the exact product is finite: round up, not to -inf
    return p


def div_down(a: float, b: float) -> float:
    """``a / b`` rounded *down* (finite a ≥ 0, b > 0): the lower θ = Δ/σ of lower values.

    >>> div_down(1.0, 3.0) <= 1 / 3 < div_up(1.0, 3.0)
    True
    >>> div_down(1.0, 10.0) < 0.1  # the float 0.1 is above 1/10
    True
    """
    from fractions import Fraction  # deferred: not needed to list the CLI's options

    q = a / b
    if math.isfinite(q) and Fraction(q) > Fraction(a) / Fraction(b):
        q = math.nextafter(q, -math.inf)
    return q


def mul_down(a: float, b: float) -> float:
    """``a * b`` rounded *down* (finite a, b ≥ 0)."""
    from fractions import Fraction  # deferred: not needed to list the CLI's options

    p = a * b
    if math.isfinite(p) and Fraction(p) > Fraction(a) * Fraction(b):
        p = math.nextafter(p, -math.inf)
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
# the ε-map of advanced joint convexity
# ---------------------------------------------------------------------------------------------

#: Relative error bound, in ULP, of one NumPy elementary function (exp, log, expm1, log1p):
#: glibc is within 1 ulp, but NumPy may dispatch to SIMD versions (SVML on AVX-512) that are
#: only documented to 4 ulp, so privamp budgets 4.
FUNC_ULPS = 4.0

#: The ε-map's margin (ULP): see :func:`_eps_map` for the error analysis (≤ 8.5 + 5 needed).
EPS_MAP_ULPS = 16.0


def _eps_map(x: np.ndarray, eta, log_eta, inverse: bool, up: bool) -> np.ndarray:
    """``log(1 + η(e^x − 1))`` (``inverse``: ``log(1 + (e^x − 1)/η)``), moved ``up`` or down
    by a bound on its rounding error; x ≥ 0 and η ∈ [0, 1] (η ≥ 1 gives x exactly).

    Error analysis (u = ULP; every NumPy function within F = :data:`FUNC_ULPS` ulp, i.e. a
    relative error ≤ F·u; a basic operation ≤ u/2).

    A. Where nothing over- or underflows (η known as a float, x ≤ 700, y ≥ TINY):
       y = η·expm1(x) (inverse: expm1(x)/η) has relative error ≤ (F + ½)u, and ``log1p(y)``
       has condition number ``y/((1 + y) log1p(y)) ≤ 1`` and its own F·u: the result is within
       (2F + ½)u = 8.5u **relative**. (Given log η instead, η = exp(log η) adds F·u: 12.5u.)
    B. Otherwise: t = log η + ℓ with ℓ = log(e^x − 1) (``log_expm1``; inverse: t = ℓ − log η)
       is within |Δt| ≤ (F + 1)u·(1 + |log η| + |ℓ|) **absolute**, and
       ``softplus(t) = logaddexp(0, t)`` has derivative σ(t) ≤ min(1, softplus(t)) (since
       log(1 + z) ≥ z/(1 + z)) and its own error ≤ (2F + ½)u relative (an exp and a log1p,
       plus a sum of non-negative terms for t > 0). So the result v is within
       ``8.5u·v + 5u·min(1, v)(1 + |log η| + |ℓ|)``.

    The margin is :data:`EPS_MAP_ULPS` = 16 u times the same expressions (``16u·v`` in A,
    ``16u·(v + min(1, v)(1 + |log η| + |ℓ|))`` in B): at least 1.2 times every bound above,
    which also absorbs the rounding of the margin itself. Only B's margin carries |log η|: for
    η = 1e-300 and x = 701 the result is ~0.3 but t is a difference of two numbers near 700,
    whose rounding is ~1e-13 absolute. Results below TINY (only possible in B, where
    e^t is subnormal and its error absolute) are replaced by 2·TINY going up and by the
    trivial bound going down (0 for the map, x for the inverse, since η ≤ 1 gives
    map(x) ≤ x ≤ inverse(x)).
    """
    if log_eta is None:
        eta_arr = np.asarray(eta, dtype=float)
        with np.errstate(divide="ignore"):
            log_eta = np.log(eta_arr)
    else:
        log_eta = np.minimum(np.asarray(log_eta, dtype=float), 0.0)
        with np.errstate(under="ignore"):
            eta_arr = np.exp(log_eta)
    x, eta_arr, log_eta = np.broadcast_arrays(x, eta_arr, log_eta)
    shape = x.shape
    x, eta_arr, log_eta = (v.reshape(-1) for v in (x, eta_arr, log_eta))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        em1 = np.expm1(np.minimum(x, 700.0))
        y = em1 / eta_arr if inverse else eta_arr * em1
        a = (x <= 700.0) & np.isfinite(y) & (y >= TINY) & (eta_arr >= TINY)
        val = np.log1p(np.where(a, y, 0.0))
        err = (EPS_MAP_ULPS * ULP) * val
        b = ~a
        if np.any(b):  # case B only where A does not apply (every operation is elementwise)
            xb, log_eta_b = x[b], log_eta[b]
            ell = log_expm1(xb)
            t = ell - log_eta_b if inverse else ell + log_eta_b
            val_b = np.logaddexp(0.0, t)
            err_b = val_b + np.minimum(1.0, val_b) * (1.0 + np.abs(log_eta_b) + np.abs(ell))
            val[b] = val_b
            err[b] = (EPS_MAP_ULPS * ULP) * np.where(np.isfinite(err_b), err_b, 0.0)
    zero_eta = np.isneginf(log_eta)
    trivial = x if inverse else np.zeros_like(x)
    if up:
        out = np.where(val < TINY, 2.0 * TINY, val + err)
    else:
        out = np.where(val < TINY, trivial, val - err)
    out = np.where(x == 0.0, 0.0, out)
    if inverse:  # η ≤ 1: the inverse map is ≥ x; η = 0: ∞ (no ε maps anywhere)
        out = np.where(zero_eta, np.inf, np.maximum(out, x))
    else:  # the map is ≤ x, and 0 for η = 0
        out = np.maximum(np.minimum(out, x), 0.0)
        out = np.where(zero_eta, 0.0, out)
    out = np.where(np.isposinf(x) & ~zero_eta, np.inf, out)
    out = np.where(log_eta >= 0.0, x, out)  # η ≥ 1: the identity
    return out.reshape(shape)


def amplify_eps(eps: Any, eta: Any = None, *, log_eta: Any = None, up: bool = True):
    """ε' = log(1 + η(e^ε − 1)) (Balle, Barthe, Gaboardi 2018, Theorem 2; Balle et al. 2019,
    Theorem 1(3)-(4)), rounded **up** (``up=False``: down, for lower values); vectorised.

    ``eta`` ∈ [0, 1] (or ``log_eta`` ≤ 0, its logarithm, for η below the float range). The
    rounding is directed by :data:`EPS_MAP_ULPS` ulp of the error bounds written in
    ``_eps_map``; the result always lies in [0, ε].

    >>> amplify_eps(1.0, 0.01)  # catalogue §6.4: 0.01703686323617655 (here rounded up)
    0.017036863236176612
    """
    e = check_real_array("eps", eps, "[0, inf]")
    out = _eps_map(e, eta, log_eta, inverse=False, up=up)
    return float(out) if out.ndim == 0 else out


def deamplify_eps(eps_prime: Any, eta: Any = None, up: bool = False, *, log_eta: Any = None):
    """The inverse map ε = log(1 + (e^{ε'} − 1)/η), rounded **down** (``up=True``: up, for lower
    values of amplified profiles); vectorised. Never below ε' (η ≤ 1); ``inf`` for η = 0.

    Same error analysis and margin as :func:`amplify_eps`. With ``eta = δ`` it is ε̃ of Balle
    et al. 2019, Theorem 1(2).

    >>> round(deamplify_eps(0.017036863236176612, 0.01), 12)
    1.0
    """
    e = check_real_array("eps_prime", eps_prime, "[0, inf]")
    out = _eps_map(e, eta, log_eta, inverse=True, up=up)
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# monotone root finding
# ---------------------------------------------------------------------------------------------


def section_threshold(
    feasible: Callable[[np.ndarray], np.ndarray],
    lo: float,
    hi: float,
    *,
    rtol: float = 4 * ULP,
    points: int = 32,
    max_iter: int = 400,
) -> float:
    """:func:`bisect_threshold` for one scalar threshold, ``points − 1`` trial points per round.

    ``feasible(xs)`` gets an array of trial points and returns a boolean array; ``hi`` must be
    feasible and ``lo`` not known feasible. Each round tries the points dividing [lo, hi] into
    ``points`` equal parts, in one call, and keeps the first feasible one as ``hi`` and its left
    neighbour as ``lo``: the invariant ``feasible(hi)`` of the bisection is kept, so the answer is
    a feasible point (the smallest one when the feasible set is an interval), within
    ``rtol·|hi|`` of ``lo``. For a vectorised test whose cost is per call rather than per point
    (a privacy curve at a few dozen points), 32 parts reach 1e-6 in four rounds instead of
    twenty.

    >>> section_threshold(lambda x: x * x >= 2.0, 0.0, 2.0, rtol=1e-12) >= math.sqrt(2)
    True
    """
    lo, hi = float(lo), float(hi)
    parts = np.arange(1, points, dtype=float) / points
    for _ in range(max_iter):
        if not hi - lo > rtol * abs(hi):
            break
        xs = lo + (hi - lo) * parts
        xs = xs[(xs > lo) & (xs < hi)]  # an interval a few floats wide has fewer points
        if xs.size == 0:
            break
        ok = np.asarray(feasible(xs), dtype=bool)
        if not ok.any():
            lo = float(xs[-1])
            continue
        first = int(np.argmax(ok))
        hi = float(xs[first])
        if first > 0:
            lo = float(xs[first - 1])
    return hi


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
        wide = ~np.isfinite(mid)  # hi − lo overflowed: halve each end first
        mid[wide] = 0.5 * lo[idx][wide] + 0.5 * hi[idx][wide]
        stuck = (mid <= lo[idx]) | (mid >= hi[idx])  # interval narrower than one float step
        ok = np.asarray(feasible(mid, idx), dtype=bool)
        hi[idx[ok & ~stuck]] = mid[ok & ~stuck]
        lo[idx[~ok & ~stuck]] = mid[~ok & ~stuck]
        lo[idx[stuck]] = hi[idx[stuck]]
    out = hi.reshape(shape)
    return out[()] if out.ndim == 0 else out
