"""Gaussian tail functions in NumPy: ``erfcx``, ``erf``, ``ndtr``, ``log_ndtr`` and ``ndtri``.

privamp's Gaussian profiles, privacy loss distributions and tail bounds need these on arrays, on
every call of ``privamp epsilon``. They used to come from :mod:`scipy.special`, whose import
(≈ 0.25 s with SciPy 1.17, most of it the array-API layer importing ``numpy.f2py``,
``numpy.testing`` and ``numpy.ma``) was half the run time of the command. These are privamp's own
implementations, with the same signatures and special values as SciPy's, accurate to a few units
in the last place (ulp); SciPy is still used, lazily, for everything else.

Method
------
``erfcx(x) = exp(x²) erfc(x)`` is the building block; it is well conditioned for x ≥ 0 (the
relative error of the argument is not amplified: ``|x erfcx'(x)/erfcx(x)| ≤ 1``).

* 0 ≤ x ≤ 46: one polynomial of degree 11 in ``x − x_c`` per cell of a uniform partition of
  ``y = 4/(4 + x)`` into 100 cells (short cells where erfcx bends, long where it is flat). The
  coefficients interpolate erfcx at Chebyshev nodes; they were computed with mpmath by
  ``python -m privamp._special._precompute.erfcx_table``, which also checks that the stored
  polynomials are within 1.1e-16 (relative) of erfcx in exact arithmetic. Horner's rule then
  adds about one ulp.
* x > 46: the asymptotic series ``erfcx(x) = (1/(x√π)) Σ_k (−1)^k (2k−1)!!/(2x²)^k`` to k = 6;
  the series alternates with decreasing terms, so the truncation error is below the first
  omitted term, < 6e-21 (relative) at x = 46.
* x < 0: ``erfcx(x) = 2 exp(x²) − erfcx(−x)``, with ``exp(x²)`` from the exact split
  ``x² = p + e`` (Veltkamp–Dekker), so the rounding of x² does not cost ``ulp·x²``.

From it::

    Φ(−|x|) = ½ erfcx(|x|/√2) exp(−x²/2),       log Φ(x) = log(½ erfcx(−x/√2)) − x²/2  (x < 0),
    erf(x)  = 1 − erfcx(x) exp(−x²)  (x ≥ 0.75; a 17-term Taylor series below),

with ``exp(−x²/2)`` and ``x²/2`` (as 2·(x/2)², which does not overflow while x²/2 is a float)
again from the exact split. ``tests/test_special.py`` measures the relative errors against mpmath
at 40 digits on ~1,000–2,000 points a function spread over the whole range (10× as many in a
slow test), including every cell boundary of the table: erfcx and erf within 3 ulp, ndtr and
log_ndtr within 4 ulp (ndtr where Φ is a normal float); measured maxima 1.7, 0.9, 2.3 and 2.0.
privamp's callers budget 32 ulp per special-function value (``_SAFE`` in
:mod:`privamp.mechanisms.gaussian`), as they did for SciPy.

Numbers and arrays of up to 16 values take a pure-Python path with the same operations (a
vectorised call has ~10–20 µs of fixed cost); longer arrays take 0.6–3× SciPy's time.

``ndtri`` (the inverse of Φ) is only used to size grids, never in a bound; it is Newton's method
on ``log_ndtr`` from the Abramowitz–Stegun 26.2.23 starting point, to a relative step of 1e-15.
"""

from __future__ import annotations

import math

import numpy as np

from ._erfcx_table import CELLS, CENTRES, COEFFICIENTS, FIRST, X_MAX

__all__ = ["erf", "erfcx", "log_ndtr", "ndtr", "ndtri"]

_XC = np.array(CENTRES, dtype=float)
# one row per power, so each Horner step gathers one contiguous row
_POWERS = np.ascontiguousarray(np.array(COEFFICIENTS, dtype=float).T)
_DEGREE = _POWERS.shape[0] - 1
# one row per cell, highest power first (the same Horner steps, for short arrays)
_ROWS_HIGH_FIRST = np.ascontiguousarray(np.array(COEFFICIENTS, dtype=float)[:, ::-1])
_INV_SQRTPI = 1.0 / math.sqrt(math.pi)
_INV_SQRT2 = math.sqrt(0.5)
_LOG_HALF = math.log(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SPLIT = 134217729.0  # 2**27 + 1 (Veltkamp)
_SPLIT_SAFE = 1e150  # |x| up to this: every term of the split is a finite float
# erf(x) = (2/√π) Σ_n (−1)^n x^(2n+1) / (n! (2n+1)), |x| < 0.75: the term n = 17 is < 2e-19
_ERF_TAYLOR = tuple((-1) ** n * 2.0 / math.sqrt(math.pi) / (math.factorial(n) * (2 * n + 1))
                    for n in range(17))
_ERF_TAYLOR_MAX = 0.75
#: Arrays up to this size take the scalar path element by element (~1 µs each, against ~20–60 µs
#: of fixed cost for the vectorised path).
_SMALL = 16


def _evaluate(x, scalar, vector):
    """``scalar`` on a number (a NumPy float back), element by element on a short array, else
    ``vector`` on the non-NaN entries (floating-point warnings silenced; NaN stays NaN)."""
    if np.ndim(x) == 0:
        return np.float64(scalar(float(x)))
    a = np.asarray(x, dtype=float)
    flat = a.ravel()
    if flat.size <= _SMALL:
        out = np.array([scalar(v) for v in flat.tolist()], dtype=float)
    else:
        with np.errstate(all="ignore"):
            out = _with_nan(vector, flat)
    return out.reshape(a.shape)


# --- arithmetic shared by both paths (Python floats or arrays alike) ---


def _split(x):
    """``(p, e)`` with ``p = fl(x²)`` and ``p + e = x²`` exactly (Veltkamp–Dekker); e is
    inf or NaN where x² or the split overflows (the callers set it to 0 there)."""
    p = x * x
    g = _SPLIT * x
    hi = g - (g - x)
    lo = x - hi
    return p, ((hi * hi - p) + 2.0 * hi * lo) + lo * lo


def _asymptotic(x):
    """erfcx(x) for x > X_MAX by its asymptotic series to k = 6 (0 at x = inf)."""
    w = 0.5 / (x * x)  # 0 at x = inf or where x² overflows
    s = 1.0 - w * (1.0 - 3.0 * w * (1.0 - 5.0 * w * (1.0 - 7.0 * w * (
        1.0 - 9.0 * w * (1.0 - 11.0 * w)))))
    return s * _INV_SQRTPI / x


def _erf_taylor(x):
    """erf(x) for |x| < 0.75 by its Taylor series (17 terms)."""
    w = x * x
    s = _ERF_TAYLOR[-1]
    for c in _ERF_TAYLOR[-2::-1]:
        s = s * w + c
    return x * s


# --- scalars: the same operations on Python floats (a NumPy call costs ~20 µs on a scalar) ---


def _split_scalar(x: float) -> tuple[float, float]:
    p, e = _split(x)
    return p, (e if math.isfinite(e) and math.isfinite(p) else 0.0)


def _erfcx_nonneg_scalar(x: float) -> float:
    if x <= X_MAX:
        k = min(int(CELLS * 4.0 / (4.0 + x)), CELLS - 1) - FIRST
        t = x - CENTRES[k]
        row = COEFFICIENTS[k]
        r = row[_DEGREE]
        for j in range(_DEGREE - 1, -1, -1):
            r = r * t + row[j]
        return r
    return _asymptotic(x)


def _exp_scalar(x: float) -> float:
    return math.inf if x > 709.78 else math.exp(x)


def _erfcx_scalar(x: float) -> float:
    if x != x:
        return math.nan
    if x >= 0:
        return _erfcx_nonneg_scalar(x)
    p, e = _split_scalar(x)
    return 2.0 * (_exp_scalar(p) * (1.0 + e)) - _erfcx_nonneg_scalar(-x)


def _lower_tail_scalar(x: float) -> float:
    ax = abs(x)
    p, e = _split_scalar(ax)
    return 0.5 * _erfcx_nonneg_scalar(ax * _INV_SQRT2) * (math.exp(-0.5 * p) * (1.0 - 0.5 * e))


def _ndtr_scalar(x: float) -> float:
    if x != x:
        return math.nan
    tail = _lower_tail_scalar(x)
    return tail if x < 0 else 1.0 - tail


def _log_ndtr_scalar(x: float) -> float:
    if x != x:
        return math.nan
    if x < 0:
        if x == -math.inf:
            return -math.inf
        # x²/2 = 2 (x/2)²: the split of x/2 does not overflow while x²/2 is a float
        p, e = _split_scalar(0.5 * x)
        return (math.log(_erfcx_nonneg_scalar(-x * _INV_SQRT2)) + (_LOG_HALF - 2.0 * e)) - 2.0 * p
    return math.log1p(-_lower_tail_scalar(x))


def _erf_scalar(x: float) -> float:
    if x != x:
        return math.nan
    if abs(x) < _ERF_TAYLOR_MAX:
        return _erf_taylor(x)
    ax = abs(x)
    p, e = _split_scalar(ax)
    return math.copysign(1.0 - _erfcx_nonneg_scalar(ax) * (math.exp(-p) * (1.0 - e)), x)


# --- arrays (the public functions silence floating-point warnings once, around all of it) ---


def _square_split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_split` on an array, with e = 0 where x² is not finite."""
    p, e = _split(x)
    # e is finite wherever |x| ≤ 1e150 (x², 2^27·x and every product in the split are then
    # below the float range), so the mask is only formed when some |x| is larger
    if x.size and not (x.max() <= _SPLIT_SAFE and x.min() >= -_SPLIT_SAFE):
        e[~np.isfinite(e)] = 0.0  # x² or the split overflowed: exp(±x²) is 0 or inf anyway
    return p, e


def _erfcx_table(x: np.ndarray) -> np.ndarray:
    """erfcx on a 1-D array of 0 ≤ x ≤ X_MAX, by the cell polynomials."""
    # the cell of y = 4/(4 + x); a y rounded across a cell boundary picks the neighbour, whose
    # polynomial is valid 0.1 % of a cell beyond its ends
    # (k ≥ FIRST holds: 4·CELLS/(4 + x) ≥ 8 exactly for x ≤ 46; k = CELLS only near x = 0)
    k = (CELLS * 4.0 / (4.0 + x)).astype(np.intp)
    np.minimum(k, CELLS - 1, out=k)
    k -= FIRST
    # every k is a valid row (above), so ``mode="clip"`` changes no index; it only skips the
    # bounds check, which is most of a gather's cost here (4.6 → 1.7 ns an element)
    t = _XC.take(k, mode="clip")
    np.subtract(x, t, out=t)
    if x.size <= 2048:  # one gather of whole rows is cheaper on short arrays
        rows = _ROWS_HIGH_FIRST.take(k, axis=0, mode="clip").T
        r = rows[0].copy()
        for row in rows[1:]:
            r *= t
            r += row
        return r
    r = _POWERS[_DEGREE].take(k, mode="clip")
    for j in range(_DEGREE - 1, -1, -1):
        r *= t
        r += _POWERS[j].take(k, mode="clip")
    return r


def _erfcx_nonneg(x: np.ndarray) -> np.ndarray:
    """erfcx on a 1-D array of x ≥ 0 (+inf allowed)."""
    if x.size == 0 or x.max() <= X_MAX:
        return _erfcx_table(x)
    out = np.empty_like(x)
    table = x <= X_MAX
    out[table] = _erfcx_table(x[table])
    far = ~table
    out[far] = _asymptotic(x[far])
    return out


def _lower_tail(a: np.ndarray) -> np.ndarray:
    """``Φ(−|x|) = ½ erfcx(|x|/√2) exp(−x²/2)`` on a 1-D array without NaN."""
    ax = np.abs(a)
    p, e = _square_split(ax)
    return 0.5 * _erfcx_nonneg(ax * _INV_SQRT2) * (np.exp(-0.5 * p) * (1.0 - 0.5 * e))


def _with_nan(func, a: np.ndarray) -> np.ndarray:
    """``func`` on the non-NaN entries of ``a`` (NaN elsewhere)."""
    nan = np.isnan(a)
    if not nan.any():
        return func(a)
    out = np.full_like(a, np.nan)
    out[~nan] = func(a[~nan])
    return out


def _erfcx_array(a: np.ndarray) -> np.ndarray:
    if a.size == 0 or a.min() >= 0:
        return _erfcx_nonneg(a)
    out = np.empty_like(a)
    pos = a >= 0
    out[pos] = _erfcx_nonneg(a[pos])
    neg = ~pos
    xn = a[neg]
    p, e = _square_split(xn)
    out[neg] = 2.0 * (np.exp(p) * (1.0 + e)) - _erfcx_nonneg(-xn)
    return out


def erfcx(x):
    """The scaled complementary error function ``exp(x²) erfc(x)`` (SciPy's ``erfcx``).

    +inf for x below about −26.6 (where it overflows), 0 at +inf, NaN for NaN.

    >>> round(float(erfcx(1.0)), 15)
    0.427583576155807
    """
    return _evaluate(x, _erfcx_scalar, _erfcx_array)


def _ndtr_array(a: np.ndarray) -> np.ndarray:
    tail = _lower_tail(a)
    return np.where(a < 0, tail, 1.0 - tail)


def ndtr(x):
    """The standard normal CDF Φ(x) (SciPy's ``ndtr``).

    >>> round(float(ndtr(-1.0)), 15)
    0.158655253931457
    """
    return _evaluate(x, _ndtr_scalar, _ndtr_array)


def log_ndtr_neg_from_erfcx(xn: np.ndarray, erfcx_value: np.ndarray) -> np.ndarray:
    """``log Φ(x) = log(½ erfcx(−x/√2)) − x²/2`` on a 1-D array of x < 0, given erfcx(−x/√2)
    (a caller that has it already saves the third of the work it is). x²/2 = 2 (x/2)²,
    exactly split: the split of x/2 does not overflow while x²/2 is a float; −inf beyond.
    Floating-point warnings are the caller's to silence."""
    p, e = _square_split(0.5 * xn)
    return (np.log(erfcx_value) + (_LOG_HALF - 2.0 * e)) - 2.0 * p


def _log_ndtr_neg(xn: np.ndarray) -> np.ndarray:
    return log_ndtr_neg_from_erfcx(xn, _erfcx_nonneg(-xn * _INV_SQRT2))


def _log_ndtr_array(a: np.ndarray) -> np.ndarray:
    if a.size == 0 or a.max() < 0:
        return _log_ndtr_neg(a)
    out = np.empty_like(a)
    neg = a < 0
    out[neg] = _log_ndtr_neg(a[neg])
    pos = ~neg
    out[pos] = np.log1p(-_lower_tail(a[pos]))
    return out


def log_ndtr(x):
    """``log Φ(x)``, finite far into the lower tail (SciPy's ``log_ndtr``).

    For x < 0 it is ``log(½ erfcx(−x/√2)) − x²/2``: no underflow until x²/2 itself overflows
    (|x| > 1.9e154, where −inf is returned); for x ≥ 0 it is ``log1p(−Φ(−x))``.

    >>> round(float(log_ndtr(-40.0)), 9)  # mpmath: -804.60844201375...
    -804.608442014
    """
    return _evaluate(x, _log_ndtr_scalar, _log_ndtr_array)


def _erf_array(a: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    small = np.abs(a) < _ERF_TAYLOR_MAX
    xs = a[small]
    if xs.size:
        out[small] = _erf_taylor(xs)
    big = ~small
    signed = a[big]
    if signed.size:
        xb = np.abs(signed)
        p, e = _square_split(xb)
        tail = _erfcx_nonneg(xb) * (np.exp(-p) * (1.0 - e))
        out[big] = np.copysign(1.0 - tail, signed)
    return out


def erf(x):
    """The error function (SciPy's ``erf``).

    >>> round(float(erf(0.5)), 15)
    0.520499877813047
    """
    return _evaluate(x, _erf_scalar, _erf_array)


def _ndtri_scalar(p: float) -> float:
    if math.isnan(p) or p < 0.0 or p > 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    if p > 0.5:
        return -_ndtri_scalar(1.0 - p)
    # Abramowitz & Stegun 26.2.23 (absolute error < 4.5e-4), then Newton on log Φ(x) = log p
    t = math.sqrt(-2.0 * math.log(p))
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t)
          / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t**3))
    target = math.log(p)
    for _ in range(60):
        lc = _log_ndtr_scalar(x)
        # f'(x) = φ(x)/Φ(x)
        slope = math.exp(-0.5 * x * x - _LOG_SQRT_2PI - lc)
        step = (lc - target) / slope
        x -= step
        if abs(step) <= 1e-15 * max(1.0, abs(x)):
            break
    return x


def _ndtri_array(a: np.ndarray) -> np.ndarray:
    return np.array([_ndtri_scalar(v) for v in a.tolist()], dtype=float)


def ndtri(p):
    """The inverse of the standard normal CDF (SciPy's ``ndtri``); NaN outside [0, 1].

    Used to size grids (never inside a bound).

    >>> round(float(ndtri(0.025)), 12)
    -1.95996398454
    """
    return _evaluate(p, _ndtri_scalar, _ndtri_array)
