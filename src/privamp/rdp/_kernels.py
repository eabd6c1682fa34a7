"""Log-space kernels of the subsampled RDP bounds (:mod:`privamp.rdp.subsampled`) and of the exact
Poisson-subsampled Gaussian (:mod:`privamp.rdp.poisson_gaussian`): their input checks, and sums
``log(1 + Σ_j e^{t_{α,j}})`` over integer orders α with every log-term moved by a bound on its
rounding error, rounded up (upper bounds) or down (lower bounds).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numerics import ULP, log_comb, log_expm1
from .._validation import check_real
from ..errors import InvalidParameterError
from .mechanisms import check_orders, floor_positive

_LOG2 = math.log(2.0)
_LOG3 = math.log(3.0)
_TERM_ULPS = 32.0  # rounding allowance per log-term, in ulp of the sum of its components' sizes


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------



def _check_rate(sampling_rate: Any) -> float:
    return check_real("sampling_rate", sampling_rate, "[0, 1]")

#: The largest finite order the subsampled bounds evaluate. They sum about ``order`` terms
#: (time and memory grow linearly with it: 10^6 takes about a second); ∞ is in closed form.
MAX_FINITE_ORDER = 1e6


def _check_orders(orders: Any) -> np.ndarray:
    """:func:`check_orders`, and finite orders at most :data:`MAX_FINITE_ORDER`."""
    o = check_orders(orders)
    finite = o[np.isfinite(o)]
    if finite.size and finite[-1] > MAX_FINITE_ORDER:
        raise InvalidParameterError(
            "orders", f"real number(s) in (1, {int(MAX_FINITE_ORDER)}] or inf for a subsampled "
            "bound (its cost grows with the order)", float(finite[-1]))
    return o

# ---------------------------------------------------------------------------------------------
# kernels: log(1 + Σ_j e^{t_{α,j}}) over integer orders α, with directed rounding
# ---------------------------------------------------------------------------------------------


def _ragged(alphas: np.ndarray, start: int):
    """Flattened pairs (α, j) for j = start..α, and the segment sizes."""
    counts = np.maximum(alphas.astype(np.int64) - start + 1, 0)
    alpha_rep = np.repeat(alphas, counts)
    offsets = np.cumsum(counts) - counts
    j = (np.arange(int(counts.sum())) - np.repeat(offsets, counts) + start).astype(float)
    return alpha_rep, j, counts


def _segment_log1p_sum(terms: np.ndarray, errors: np.ndarray, counts: np.ndarray,
                       upper: bool) -> np.ndarray:
    """``log(1 + Σ_{segment} e^{t})`` per segment, rounded up (or down): each log-term moved by
    its error bound, the summation allowed (n + 4)·2 ulp relative, the outer log1p 4 ulp."""
    sign = 1.0 if upper else -1.0
    with np.errstate(invalid="ignore"):
        moved = np.where(np.isfinite(terms), terms + sign * errors, terms)
    out = np.full(counts.shape, -np.inf)
    nonempty = counts > 0
    if moved.size:
        starts = (np.cumsum(counts) - counts)[nonempty]
        top = np.maximum.reduceat(moved, starts)
        finite_top = np.where(np.isfinite(top), top, 0.0)
        rep = np.repeat(finite_top, counts[nonempty])
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # log(0): top = -inf
            total = np.add.reduceat(np.exp(moved - rep), starts)
            log_sum = np.where(np.isfinite(top), finite_top + np.log(total), top)
        slack = (counts[nonempty] + 4.0) * 2.0 * ULP
        out[nonempty] = np.where(np.isfinite(log_sum), log_sum + sign * slack, log_sum)
    with np.errstate(invalid="ignore"):
        res = np.logaddexp(0.0, out)
        return np.where(np.isfinite(res), res * (1.0 + sign * 4 * ULP), res)


def _term_error(*components) -> np.ndarray:
    """Rounding allowance of a log-term: ulps × (1 + Σ |component|), ignoring infinities."""
    total = 1.0
    for c in components:
        c = np.asarray(c, dtype=float)
        total = total + np.where(np.isfinite(c), np.abs(c), 0.0)
    return _TERM_ULPS * ULP * total


def _times(count: np.ndarray, log_value: float) -> np.ndarray:
    """``count · log_value`` with ``0 · (−inf) = 0`` (the γ = 1 corner: (1−γ)^0 = 1)."""
    with np.errstate(invalid="ignore"):
        return np.where(count == 0, 0.0, count * log_value)


def _mixture_eps(alphas: np.ndarray, gamma: float, cgf: np.ndarray, *,
                 factor3: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``log1p(Σ_{j=2}^{α} C(α,j) γ^j (1−γ)^{α−j} g(j))/(α−1)`` at integer α, rounded up and
    rounded down: ``(upper, lower)``. ``g(j) = expm1(K(j))`` with K(j) = ``cgf[j]`` (the W-9 /
    exact Poisson form) or, with ``factor3``, ``g(2) = expm1(K(2))`` and
    ``g(j) = 3e^{K(j)} − 1 = 2 + 3(e^{K(j)} − 1)`` for j ≥ 3 (W-20). K(j) is taken to be
    accurate to a few ulp; each log-term gets :func:`_term_error` (which includes |K|)."""
    alpha_rep, j, counts = _ragged(alphas, 2)
    ji = j.astype(np.int64)
    k = cgf[ji]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = log_expm1(k)
        if factor3:
            g = np.where(ji >= 3, np.logaddexp(_LOG2, _LOG3 + log_expm1(k)), g)
        lc = log_comb(alpha_rep, j)
        lg = j * math.log(gamma)
        l1g = _times(alpha_rep - j, float(np.log1p(-gamma)))  # −inf at γ = 1
        terms = lc + lg + l1g + g
        # a weight that is exactly 0 (γ = 1, j < α) makes its term 0 even where g is +inf (an
        # infinite base order): −inf + inf would be NaN
        zero = np.isneginf(l1g) | np.isneginf(lc + lg)
        terms = np.where(zero, -np.inf, terms)
    err = _term_error(lc, lg, l1g, k)
    err = np.where(zero, 0.0, err)
    out = []
    for upper in (True, False):
        s = _segment_log1p_sum(terms, err, counts, upper)
        with np.errstate(invalid="ignore"):
            out.append(s / (alphas - 1.0) * (1.0 + (2.0 if upper else -2.0) * ULP))
    return floor_positive(out[0], _positive_segments(terms, counts)), np.maximum(out[1], 0.0)


def _positive_segments(terms: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Whether each segment's sum Σ e^{t} is positive (some term is not log 0)."""
    pos = np.zeros(counts.shape, dtype=bool)
    nonempty = counts > 0
    if terms.size:
        starts = (np.cumsum(counts) - counts)[nonempty]
        pos[nonempty] = np.maximum.reduceat(terms, starts) > -np.inf
    return pos
