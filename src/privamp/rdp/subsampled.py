"""Rényi DP of subsampled mechanisms (Wang's slides W-8, W-9, W-20; Mironov, Talwar, Zhang 2019).

The subsampled mechanism runs M on a random subsample of the dataset. Which subsample and which
neighbouring relation go together:

* **sampling without replacement** (WOR): a uniformly random subset of m of the n records,
  γ = m/n, under **substitution** (replace one record; n is public);
* **Poisson sampling**: each record independently with probability γ, under **add/remove**.

The base mechanism's RDP curve ε(·) must hold under the same relation (its sensitivity stated
for that relation, see :mod:`privamp.relations`); a mismatch raises
:class:`~privamp.errors.UnsupportedCombinationError` naming both relations.

Bounds
------
* :func:`wbk_upper_bound` — Wang, Balle, Kasiviswanathan 2019 (AISTATS), Theorem 9 (slides W-8;
  scope per catalogue erratum E21: WOR, substitution, integer orders ≥ 2)::

    ε'(α) ≤ log(1 + γ² C(α,2) min{4(e^{ε(2)}−1), e^{ε(2)} min{2, (e^{ε(∞)}−1)²}}
                  + Σ_{j=3}^{α} γ^j C(α,j) e^{(j−1)ε(j)} min{2, (e^{ε(∞)}−1)^j}) / (α − 1)

* :func:`subsampled_lower_bound` — the matching lower bound (slides W-9) in the stable form of
  catalogue erratum E23: ``log1p(Σ_{j=2}^{α} C(α,j) γ^j (1−γ)^{α−j} expm1((j−1)ε(j)))/(α−1)``.
  It is the Rényi divergence of the pair ((1−γ)q + γp, q) of W-9's construction, so it is a
  lower bound on the worst case whenever one pair (p, q) of the base mechanism attains ε(j) at
  every order j ("mild conditions": true for the Gaussian, Laplace and randomized response). It
  therefore needs the *exact* base curve (:class:`~privamp.rdp.mechanisms.ExactRdpCurve`).
* :func:`zhu_wang_upper_bound` — Zhu & Wang 2019 (ICML), Theorem 6 (slides W-20), Poisson,
  add/remove, any mechanism, integer orders ≥ 2, in the stable form of the catalogue::

    ε'(α) ≤ log1p(C(α,2)γ²(1−γ)^{α−2} expm1(ε(2))
                  + Σ_{ℓ=3}^{α} C(α,ℓ)γ^ℓ(1−γ)^{α−ℓ} (3e^{(ℓ−1)ε(ℓ)} − 1)) / (α − 1)

* :func:`poisson_gaussian_rdp` — the **exact** RDP of the Poisson-subsampled Gaussian mechanism
  at every order, see its docstring.

Refinements not in the slides (``refine=True``, the default; documented as such, E21): the
upper bounds are also capped by the base curve ε(α) (subsampling is a mixture of pairs of
neighbouring or identical inputs, and ``e^{(α−1)D_α}`` is jointly convex), by the pure-DP cap
``log(1 + γ(e^{ε(∞)} − 1))`` (Balle, Barthe, Gaboardi 2018, Theorems 8 and 9 with δ = 0, since
D_α ≤ D_∞), and made non-decreasing from the right (D_α is non-decreasing in α). The value at
order ∞ is always that pure-DP cap.

Integer orders and interpolation
--------------------------------
The W-8, W-9 and W-20 sums are stated at integer orders. At other orders the upper bounds are
interpolated with :meth:`RdpCurve.at`: the cumulant generating function ``(α−1)D_α`` of every
pair is convex in α and vanishes at α = 1, so the chord between the bounds at ⌊α⌋ and ⌈α⌉ (and
between (1, 0) and (2, ε'(2)) below 2) bounds it — never looser than using ⌈α⌉. The lower bound
uses ⌊α⌋ (D_α is non-decreasing in α) and needs orders ≥ 2.

Numerics: every sum is a log-sum-exp of log-terms with ``log_comb`` binomials (accurate to a few
ulp at orders up to 1e4 and beyond), each term inflated (upper bounds) or deflated (lower bounds)
by a bound on its rounding error, and ``log1p`` of the sum, so nothing cancels for tiny γ.

>>> from privamp import GaussianMechanism
>>> base = GaussianMechanism(sigma=2.0, relation="substitute")
>>> c = wbk_upper_bound(base, n=1000, m=100, orders=[2.0, 3.0, 5.0])
>>> [round(float(e), 10) for e in c.epsilons]  # catalogue W-8 (σ=2, γ=0.1)
[0.011296965, 0.0188005906, 0.0372505421]
"""

from __future__ import annotations

import enum
import functools
import math
from typing import Any

import numpy as np

from .. import _special
from .._numerics import ULP, div_up, log_comb, log_expm1
from .._validation import check_int, check_real
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..mechanisms import GaussianMechanism, GaussianProfile
from ..relations import NeighbouringRelation
from .curve import DEFAULT_ORDERS, RdpCurve
from .mechanisms import ExactRdpCurve, check_orders, floor_positive, rdp_curve

__all__ = [
    "SubsampledBound",
    "poisson_gaussian_rdp",
    "subsampled_lower_bound",
    "subsampled_rdp",
    "wbk_upper_bound",
    "zhu_wang_upper_bound",
]

_ADD_REMOVE = NeighbouringRelation.ADD_REMOVE
_SUBSTITUTE = NeighbouringRelation.SUBSTITUTE
_LOG2 = math.log(2.0)
_LOG3 = math.log(3.0)
_LOG4 = math.log(4.0)
_TERM_ULPS = 32.0  # rounding allowance per log-term, in ulp of the sum of its components' sizes


class SubsampledBound(enum.Enum):
    """Which subsampled-RDP result :func:`subsampled_rdp` computes."""

    AUTO = "auto"
    WBK = "wbk"
    ZHU_WANG = "zhu-wang"
    EXACT = "exact"
    LOWER = "lower"

    @classmethod
    def parse(cls, value, *, name: str = "method") -> SubsampledBound:
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower().replace("_", "-")
            for member in cls:
                if key == member.value:
                    return member
        raise InvalidParameterError(
            name, "one of " + ", ".join(repr(m.value) for m in cls), value)


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------


def _check_rate(sampling_rate: Any) -> float:
    return check_real("sampling_rate", sampling_rate, "[0, 1]")


def _wor_rate(n: Any, m: Any, *, up: bool = True) -> float:
    """γ = m/n, rounded up for the upper bounds (non-decreasing in γ); plain for lower bounds."""
    n = check_int("n", n, "[1, inf)")
    m = check_int("m", m, "[0, inf)")
    if m > n:
        raise InvalidParameterError("m", f"an integer in [0, n] = [0, {n}]", m)
    return min(div_up(float(m), float(n)), 1.0) if up else m / n


def _relation_of(base: Any) -> NeighbouringRelation | None:
    rel = getattr(base, "relation", None)
    return rel if isinstance(rel, NeighbouringRelation) else None


def _require_relation(base: Any, required: NeighbouringRelation, what: str) -> None:
    rel = _relation_of(base)
    if rel is not None and rel is not required:
        raise UnsupportedCombinationError(
            f"{what} holds under the {required.value!r} relation, but the base mechanism is "
            f"stated under {rel.value!r}; state the base mechanism (and its sensitivity) under "
            f"{required.value!r}")


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


def _integer_grid(orders: np.ndarray) -> np.ndarray:
    """Integer orders ≥ 2 needed to bound (by chords) every finite requested order."""
    finite = orders[np.isfinite(orders)]
    ints = np.unique(np.concatenate([np.floor(finite), np.ceil(finite)]))
    return ints[ints >= 2]


def _base_curve(base: Any, orders: np.ndarray) -> RdpCurve:
    """The base RDP curve on ``orders`` (which end with ∞). Closed forms are evaluated
    directly; a numerical (Theorem 6) curve on a long integer grid is computed on a coarse grid
    and interpolated safely (CGF chords), which costs a little tightness and saves hours."""
    if isinstance(base, RdpCurve) or orders.size <= 256:
        return rdp_curve(base, orders)
    finite = orders[np.isfinite(orders)]
    coarse = np.unique(np.concatenate([
        finite[:64], np.round(np.geomspace(finite[min(64, finite.size - 1)], finite[-1], 64)),
        [math.inf]]))
    probe = rdp_curve(base, coarse)
    if probe.bound == "exact":
        return rdp_curve(base, orders)
    return probe.at(orders)


def _base_upper(base: Any, orders: np.ndarray, pure_epsilon: float | None):
    """(ε at ``orders`` (finite, ascending), ε(∞)) as upper bounds, from ``base``."""
    curve = _base_curve(base, np.append(orders, math.inf))
    if curve.bound == "lower":
        raise UnsupportedCombinationError(
            "an upper bound on subsampled RDP needs an upper-bound (or exact) base curve; got a "
            "lower-bound curve")
    eps = curve.epsilons[:-1]
    pure = float(curve.epsilons[-1])
    if pure_epsilon is not None:
        pure = min(pure, check_real("pure_epsilon", pure_epsilon, "[0, inf]"))
    return eps, pure


def _base_lower(base: Any, orders: np.ndarray):
    """Lower values of an exact base curve at ``orders`` (finite, ascending) and at ∞."""
    curve = _base_curve(base, np.append(orders, math.inf))
    if isinstance(curve, ExactRdpCurve):
        lo = curve.lower_epsilons
    elif curve.bound == "exact":
        lo = curve.epsilons * (1.0 - 64 * ULP)  # a user's exact curve: allow for its rounding
    else:
        raise UnsupportedCombinationError(
            "the subsampled lower bound (W-9) needs the exact RDP curve of a base mechanism whose "
            "worst-case pair attains it at every order (Gaussian, Laplace, randomized response); "
            f"got a {curve.bound!r} curve")
    return lo[:-1], float(lo[-1])


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
    err = _term_error(lc, lg, l1g, k)
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


def _by_integer(values_at_ints: np.ndarray, ints: np.ndarray) -> np.ndarray:
    """Array indexed by integer j (0..max) holding ``values_at_ints`` at j = ints."""
    out = np.zeros(int(ints.max()) + 1 if ints.size else 1)
    out[ints.astype(np.int64)] = values_at_ints
    return out


def _finish(orders: np.ndarray, ints: np.ndarray, at_ints: np.ndarray, pure_cap: float,
            relation: NeighbouringRelation, label: str, refine: bool, base: Any,
            pure_epsilon: float | None) -> RdpCurve:
    """Refine at integer orders, interpolate to ``orders`` (CGF chords), refine again."""
    ints_curve_orders = np.append(ints, math.inf)
    if refine and ints.size:
        base_eps, _ = _base_upper(base, ints, pure_epsilon)
        at_ints = np.minimum(np.minimum(at_ints, base_eps), pure_cap)
        at_ints = np.minimum.accumulate(at_ints[::-1])[::-1]
    vals = np.append(at_ints, pure_cap)
    curve = RdpCurve(ints_curve_orders, vals, bound="upper", relation=relation, label=label)
    out = curve.at(orders).epsilons.copy()
    if refine:
        finite = orders[np.isfinite(orders)]
        if finite.size:
            base_eps, _ = _base_upper(base, finite, pure_epsilon)
            out[np.isfinite(orders)] = np.minimum(out[np.isfinite(orders)], base_eps)
    return RdpCurve(orders, out, bound="upper", relation=relation, label=label)


def _pure_cap(gamma: float, pure: float) -> float:
    """``log(1 + γ(e^{ε(∞)} − 1))`` rounded up (Balle et al. 2018, Theorems 8/9 at δ = 0)."""
    if gamma == 0.0 or pure == 0.0:
        return 0.0
    if math.isinf(pure):
        return math.inf
    log_gamma = math.log(gamma)
    lem = float(log_expm1(pure))
    x = log_gamma + lem
    val = float(np.logaddexp(0.0, x))
    # an absolute error Δx of x moves log(1 + e^x) by at most expit(x)·Δx
    dx = 16 * ULP * (1.0 + abs(log_gamma) + abs(lem))
    # expit(x) = 1/(1 + e^{−x}), with the exponent capped at 700: that only raises the factor
    return val * (1.0 + 8 * ULP) + dx / (1.0 + math.exp(min(-x, 700.0)))


def _zero_curve(orders: np.ndarray, relation, label, bound="upper") -> RdpCurve:
    return RdpCurve(orders, np.zeros(orders.shape), bound=bound, relation=relation, label=label)


# ---------------------------------------------------------------------------------------------
# W-8: Wang–Balle–Kasiviswanathan upper bound (WOR, substitution)
# ---------------------------------------------------------------------------------------------


def wbk_upper_bound(base: Any, n: int, m: int, orders: Any = DEFAULT_ORDERS, *,
                    pure_epsilon: float | None = None, refine: bool = True) -> RdpCurve:
    """Upper bound on the RDP of M on a uniformly random m-subset of n records (substitution).

    Wang, Balle, Kasiviswanathan 2019, Theorem 9 (Wang's slides W-8), γ = m/n (rounded up),
    evaluated at the integer orders around the requested ones and interpolated by CGF chords
    (see the module docstring); with ``refine`` capped by ε(α), by the pure-DP cap
    ``log(1 + γ(e^{ε(∞)} − 1))`` and made monotone (refinements not in the slides).

    Parameters
    ----------
    base : Mechanism, PrivacyProfile or RdpCurve
        The base mechanism (or its RDP curve) under **substitution**; the curve's value at
        order ∞ (if any) is ε(∞).
    n, m : int
        Dataset size n ≥ 1 and subsample size 0 ≤ m ≤ n.
    orders : array_like
        Strictly increasing orders in (1, ∞].
    pure_epsilon : float, optional
        ε(∞) of the base mechanism when ``base`` is a curve without order ∞ (the smaller of the
        two is used).
    refine : bool
        Apply the refinements (default True). With False the finite orders carry exactly the
        slides' formula (which does not reduce to ε(α) at γ = 1, erratum E21).

    Returns
    -------
    RdpCurve
        ``bound="upper"``, relation substitute.

    Raises
    ------
    UnsupportedCombinationError
        The base mechanism is stated under add/remove, or ``base`` is a lower-bound curve.

    >>> from privamp import LaplaceMechanism
    >>> lap = LaplaceMechanism(scale=0.5, relation="substitute")
    >>> c = wbk_upper_bound(lap, n=100, m=5, orders=[2.0, 30.0], refine=False)
    >>> [round(float(e), 10) for e in c.epsilons]  # catalogue W-8, Laplace b=0.5, γ=0.05
    [0.0243615461, 0.2587631402]
    """
    gamma = _wor_rate(n, m)
    o = _check_orders(orders)
    _require_relation(base, _SUBSTITUTE, "the Wang–Balle–Kasiviswanathan bound (W-8)")
    label = f"WBK upper bound (WOR, gamma={gamma:g})"
    if gamma == 0.0:
        return _zero_curve(o, _SUBSTITUTE, label)
    ints = _integer_grid(o)
    if ints.size == 0:
        ints = np.array([2.0])
    eps_int, pure = _base_upper(base, np.arange(2.0, ints.max() + 1.0), pure_epsilon)
    eps_by_j = np.concatenate([[0.0, 0.0], eps_int])
    at_ints = _wbk_values(ints, gamma, eps_by_j, pure)
    return _finish(o, ints, at_ints, _pure_cap(gamma, pure), _SUBSTITUTE, label, refine, base,
                   pure_epsilon)


def _wbk_values(alphas: np.ndarray, gamma: float, eps_by_j: np.ndarray, pure: float
                ) -> np.ndarray:
    alpha_rep, j, counts = _ragged(alphas, 2)
    ji = j.astype(np.int64)
    e = eps_by_j[ji]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        le_inf = float(log_expm1(pure))  # log(e^{ε(∞)} − 1): inf for ε(∞) = ∞, −inf for 0
        cap_j = np.minimum(_LOG2, j * le_inf)  # log min{2, (e^{ε(∞)}−1)^j}
        body = (j - 1.0) * e + cap_j
        e2 = eps_by_j[2]
        two = min(_LOG4 + float(log_expm1(e2)), e2 + min(_LOG2, 2.0 * le_inf))
        body = np.where(ji == 2, two, body)
        lc = log_comb(alpha_rep, j)
        lg = j * math.log(gamma)
        terms = lc + lg + body
    err = _term_error(lc, lg, (j - 1.0) * e, cap_j)
    s = _segment_log1p_sum(terms, err, counts, upper=True)
    with np.errstate(invalid="ignore"):
        return floor_positive(s / (alphas - 1.0) * (1.0 + 2.0 * ULP),
                              _positive_segments(terms, counts))


# ---------------------------------------------------------------------------------------------
# W-20: Zhu–Wang upper bound (Poisson, add/remove)
# ---------------------------------------------------------------------------------------------


def zhu_wang_upper_bound(base: Any, sampling_rate: float, orders: Any = DEFAULT_ORDERS, *,
                         pure_epsilon: float | None = None, refine: bool = True) -> RdpCurve:
    """Upper bound on the RDP of a Poisson-subsampled mechanism under add/remove.

    Zhu & Wang 2019, Theorem 6 (Wang's slides W-20, the general bound with the factor 3), in the
    stable ``log1p`` form (erratum E23), at integer orders interpolated by CGF chords; with
    ``refine`` capped by ε(α), by ``log(1 + γ(e^{ε(∞)} − 1))`` and made monotone.

    Parameters
    ----------
    base : Mechanism, PrivacyProfile or RdpCurve
        The base mechanism (or its RDP curve) under **add/remove**.
    sampling_rate : float
        γ ∈ [0, 1].
    orders, pure_epsilon, refine
        As for :func:`wbk_upper_bound`.

    >>> from privamp import LaplaceMechanism
    >>> c = zhu_wang_upper_bound(LaplaceMechanism(scale=0.5), 0.05, [3.0, 10.0], refine=False)
    >>> [round(float(e), 10) for e in c.epsilons]  # catalogue W-20
    [0.0196951915, 0.1360481994]
    """
    gamma = _check_rate(sampling_rate)
    o = _check_orders(orders)
    _require_relation(base, _ADD_REMOVE, "the Zhu–Wang Poisson bound (W-20)")
    label = f"Zhu-Wang upper bound (Poisson, gamma={gamma:g})"
    if gamma == 0.0:
        return _zero_curve(o, _ADD_REMOVE, label)
    ints = _integer_grid(o)
    if ints.size == 0:
        ints = np.array([2.0])
    eps_int, pure = _base_upper(base, np.arange(2.0, ints.max() + 1.0), pure_epsilon)
    jj = np.arange(2.0, ints.max() + 1.0)
    cgf = np.concatenate([[0.0, 0.0], (jj - 1.0) * eps_int])
    at_ints, _ = _mixture_eps(ints, gamma, cgf, factor3=True)
    return _finish(o, ints, at_ints, _pure_cap(gamma, pure), _ADD_REMOVE, label, refine, base,
                   pure_epsilon)


# ---------------------------------------------------------------------------------------------
# W-9: the lower bound
# ---------------------------------------------------------------------------------------------


def subsampled_lower_bound(base: Any, sampling_rate: float, orders: Any = None, *,
                           relation: NeighbouringRelation | str = _SUBSTITUTE) -> RdpCurve:
    """Lower bound on the worst-case RDP of the subsampled mechanism (Wang's slides W-9).

    ``log1p(Σ_{j=2}^{α} C(α,j) γ^j (1−γ)^{α−j} expm1((j−1)ε(j)))/(α−1)`` (the stable form of
    erratum E23) is the Rényi divergence between ``(1−γ)q + γp`` and ``q`` for the base pair
    (p, q) that attains ε(j) at every order j. The construction (X = [0,…,0,1], X' = [0,…,0])
    is a substitution for WOR with γ = m/n and an addition for Poisson sampling with rate γ,
    so ``relation`` selects the scheme's relation; the base curve must be exact (the "mild
    conditions"). At γ = 1 it equals ε(α). Non-integer orders use ⌊α⌋; order ∞ gives
    ``log(1 + γ(e^{ε(∞)} − 1))``. Values are rounded down.

    Parameters
    ----------
    base : Mechanism, PrivacyProfile or RdpCurve
        A base mechanism with an exact RDP curve (Gaussian, Laplace, randomized response), or an
        exact curve containing every integer order up to the largest requested one.
    sampling_rate : float
        γ ∈ [0, 1].
    orders : array_like, optional
        Strictly increasing orders in [2, ∞] (default: the orders ≥ 2 of ``DEFAULT_ORDERS``).
    relation : NeighbouringRelation or str
        ``"substitute"`` (WOR, default) or ``"add-remove"`` (Poisson).

    >>> from privamp import GaussianMechanism
    >>> g = GaussianMechanism(sigma=2.0, relation="substitute")
    >>> c = subsampled_lower_bound(g, 0.1, [2.0, 10.0])
    >>> [round(float(e), 10) for e in c.epsilons]  # catalogue W-9
    [0.0028362283, 0.0186242543]
    """
    gamma = _check_rate(sampling_rate)
    if orders is None:
        orders = DEFAULT_ORDERS[DEFAULT_ORDERS >= 2]
    o = _check_orders(orders)
    if o[0] < 2.0:
        raise InvalidParameterError(
            "orders", "orders >= 2 for the lower bound (stated at integer orders; a non-integer "
            "order uses the integer below it)", float(o[0]))
    rel = NeighbouringRelation.parse(relation)
    _require_relation(base, rel, "this lower bound")
    label = f"lower bound (W-9, gamma={gamma:g})"
    if gamma == 0.0:
        return _zero_curve(o, rel, label, bound="lower")
    finite = o[np.isfinite(o)]
    if gamma == 1.0:
        lo, pure_lo = _base_lower(base, finite) if finite.size else (np.zeros(0), 0.0)
        out = np.empty(o.shape)
        out[np.isfinite(o)] = lo
        out[~np.isfinite(o)] = pure_lo
        return RdpCurve(o, out, bound="lower", relation=rel, label=label)
    floors = np.unique(np.floor(finite))
    jj = np.arange(2.0, (floors.max() if floors.size else 2.0) + 1.0)
    eps_lo, pure_lo = _base_lower(base, jj)
    cgf = np.concatenate([[0.0, 0.0], (jj - 1.0) * eps_lo])
    out = np.empty(o.shape)
    if floors.size:
        _, at_floors = _mixture_eps(floors, gamma, cgf)
        out[np.isfinite(o)] = at_floors[np.searchsorted(floors, np.floor(finite))]
    if np.any(~np.isfinite(o)):
        if math.isinf(pure_lo):
            cap = math.inf
        elif pure_lo == 0.0:
            cap = 0.0
        else:
            cap = float(np.logaddexp(0.0, math.log(gamma) + float(log_expm1(pure_lo))))
            cap = cap * (1.0 - 16 * ULP)
        out[~np.isfinite(o)] = cap
    return RdpCurve(o, np.maximum(out, 0.0), bound="lower", relation=rel, label=label)


# ---------------------------------------------------------------------------------------------
# the exact Poisson-subsampled Gaussian
# ---------------------------------------------------------------------------------------------


def poisson_gaussian_rdp(noise_multiplier: float, sampling_rate: float,
                         orders: Any = DEFAULT_ORDERS) -> ExactRdpCurve:
    """Exact RDP of the Poisson-subsampled Gaussian mechanism under add/remove, at every order.

    The mechanism adds N(0, σ²) noise, σ = ``noise_multiplier`` × Δ, to a query of sensitivity Δ
    evaluated on a Poisson subsample with rate q. The worst pair is μ = (1−q)N(0,σ²) + qN(Δ,σ²)
    (dataset with the record) against μ₀ = N(0,σ²) (without it), and D_α(μ ‖ μ₀) ≥ D_α(μ₀ ‖ μ)
    for every α ≥ 1 (Mironov, Talwar, Zhang 2019, arXiv:1908.10530, §3: A_α ≥ B_α), so the
    "remove" direction computed here dominates and covers both directions of add/remove; the
    tests also check the other direction against mpmath integrals. With θ = Δ/σ and
    ``A_α = E_{μ₀}[(μ/μ₀)^α]``:

    * integer α (Mironov et al. 2019, §3; equal to W-20 without the factor 3)::

        A_α − 1 = Σ_{k=2}^{α} C(α,k) q^k (1−q)^{α−k} expm1((k² − k)θ²/2)

      (all terms positive: no cancellation however small q is);

    * fractional α (Mironov et al. 2019, §3.3): split the integral at
      z₀ = log((1−q)/q)/θ² + ½ where q·μ₁/μ₀ = 1 − q, and expand the binomial on each side::

        A_α = Σ_{i≥0} C(α,i) (1−q)^{α−i} q^i e^{(i²−i)θ²/2} Φ(θ(z₀ − i))
            + Σ_{i≥0} C(α,i) (1−q)^{i} q^{α−i} e^{((α−i)²−(α−i))θ²/2} Φ(θ(α − i − z₀)).

      The i = 0, 1 terms of the first series equal ``(1−q)^{α−1}(1 + (α−1)q) − (1−q)^α Φ(−θz₀)
      − αq(1−q)^{α−1} Φ(θ(1 − z₀))``, and ``(1−q)^{α−1}(1 + (α−1)q) − 1 = expm1(f)`` with
      ``f = c log1p(−q) + log1p(cq)`` (c = α − 1) evaluated by its power series
      ``Σ_{k≥2} ((−1)^{k+1}(cq)^k − c q^k)/k`` for q, cq < ¼ (the k = 1 terms cancel exactly),
      so ``A_α − 1`` is formed without cancelling against 1. (What remains is a cancellation
      of relative size about 1/θ² between that term and the i = 2 term, covered by the error
      bound: the bracket is ~1e-9 wide at σ = 50.)
      Truncation: the ratio of consecutive terms of each series is
      ``|(α−i)/(i+1)| · g(x+θ)/g(x)`` with ``g(x) = Φ(−x)e^{x²/2}`` decreasing, hence below 1 for
      i > (α−1)/2, and the signs alternate for i > ⌈α⌉. Each tail is therefore bounded by its
      first omitted term and has its sign: the upper value adds the omitted term when positive.
      (The split point z₀ is itself rounded; that perturbs the ratio by a factor e^{±1e-16·z₀},
      which keeps it below 1 for every i < 1e15, far beyond the truncation point.) If the series
      cannot be certified, the CGF chord between the neighbouring integer orders is used.

    ε(α) = log1p(A_α − 1)/(α − 1); order ∞ gives ∞ (q > 0). The sum is formed in log space from
    log_comb binomials (the generalized binomial via ``|C(α,i)| = |sin πα| /
    (π i C(i−1, α))`` for i > α + 1), with a bound on each term's rounding error, giving an
    :class:`ExactRdpCurve` whose ``epsilons`` are upper bounds and ``lower_epsilons`` lower
    bounds. Accurate at q down to 1e-7 and below, orders up to 1e4 and beyond, σ from 0.3 to 50
    (checked against mpmath integrals in the tests).

    Parameters
    ----------
    noise_multiplier : float
        σ/Δ > 0.
    sampling_rate : float
        q ∈ [0, 1] (q = 1: the Gaussian's own curve; q = 0: zero).
    orders : array_like
        Strictly increasing orders in (1, ∞].

    >>> c = poisson_gaussian_rdp(2.0, 0.1, [2.0, 2.5, 20.0])
    >>> round(float(c.epsilons[2]), 12)  # catalogue W-20 "exact" value at α = 20
    0.188313613447
    """
    nm = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
    q = _check_rate(sampling_rate)
    o = _check_orders(orders)
    theta = div_up(1.0, nm)
    label = f"exact Poisson Gaussian (noise multiplier {nm:g}, q={q:g})"
    return _poisson_gaussian(theta, q, o, label)


def _poisson_gaussian(theta: float, q: float, o: np.ndarray, label: str) -> ExactRdpCurve:
    if q == 0.0 or theta == 0.0:
        zero = np.zeros(o.shape)
        return ExactRdpCurve(o, zero, zero, relation=_ADD_REMOVE, label=label)
    if q == 1.0:
        return _gaussian_own(theta, o, label)
    up = np.full(o.shape, math.inf)
    lo = np.full(o.shape, math.inf)
    finite = np.isfinite(o)
    integer = finite & (o == np.floor(o))
    if np.any(integer):
        up[integer], lo[integer] = _gaussian_integer(theta, q, o[integer])
    fractional = np.flatnonzero(finite & ~integer)
    if fractional.size:
        up[fractional], lo[fractional] = _fractional(theta, q, o[fractional])
        failed = fractional[np.isnan(up[fractional])]
        if failed.size:
            # safety net (never needed in the tested range): the CGF chord between the exact
            # values at the neighbouring integers bounds ε from above; ε(⌊α⌋) from below
            a = o[failed]
            ints = np.unique(np.concatenate([np.floor(a), np.ceil(a)]))
            ints = ints[ints >= 2]
            at_up, at_lo = _gaussian_integer(theta, q, ints)
            chord = RdpCurve(np.append(ints, math.inf), np.append(at_up, math.inf))
            up[failed] = chord.at(a).epsilons
            floor_idx = np.minimum(np.searchsorted(ints, np.floor(a)), ints.size - 1)
            lo[failed] = np.where(a >= 2, at_lo[floor_idx], 0.0)
    return ExactRdpCurve(o, up, np.minimum(np.maximum(lo, 0.0), up), relation=_ADD_REMOVE,
                         label=label)


def _gaussian_integer(theta: float, q: float, alphas: np.ndarray):
    """(upper, lower) exact RDP at integer orders: W-9's form with K(j) = (j² − j)θ²/2."""
    jj = np.arange(0.0, alphas.max() + 1.0)
    return _mixture_eps(alphas, q, (jj * jj - jj) * (theta * theta) / 2.0)


def _gaussian_own(theta: float, o: np.ndarray, label: str) -> ExactRdpCurve:
    eps = o * theta * theta / 2.0
    return ExactRdpCurve(o, eps * (1 + 4 * ULP), eps * (1 - 4 * ULP), relation=_ADD_REMOVE,
                         label=label)


def _log_abs_binom(a: np.ndarray, i: np.ndarray):
    """``log|C(a, i)|`` and the sign of C(a, i) for real a > 0 (not integers) and integers
    i ≥ 0, broadcast against each other.

    i ≤ ⌊a⌋: ``log_comb(a, i)``; i = ⌈a⌉: one step of the recurrence; i > ⌈a⌉: reflection,
    ``|C(a,i)| = |sin πa| / (π i C(i−1, a))`` (from Γ(x)Γ(1−x) = π/sin πx), sign (−1)^{i−⌈a⌉}.
    """
    a, i = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(i, dtype=float))
    fl = np.floor(a)
    ce = fl + 1.0
    out = np.empty(a.shape)
    sign = np.ones(a.shape)
    low = i <= fl
    out[low] = log_comb(a[low], i[low])
    mid = i == ce
    am = a[mid]
    out[mid] = log_comb(am, np.floor(am)) + np.log(am - np.floor(am)) - np.log(np.floor(am) + 1)
    hi = i > ce
    ah, ih = a[hi], i[hi]
    log_sin = np.log(np.abs(np.sin(np.pi * (ah - np.round(ah)))))
    out[hi] = log_sin - math.log(math.pi) - np.log(ih) - log_comb(ih - 1.0, ah)
    sign[hi] = np.where((ih - ce[hi]) % 2 == 1, -1.0, 1.0)
    return out, sign


def _log1p_f(c: np.ndarray, q: float, lq1: float):
    """``f = c·log1p(−q) + log1p(cq)`` (≤ 0) and an absolute error bound, per c = α − 1.

    For q < ¼ and cq < ¼ the power series ``Σ_{k≥2} (q^k/k)((−1)^{k+1}c^k − c)`` (the k = 1 terms
    cancel exactly; 88 terms leave < 4^{-88}); otherwise the direct form, whose cancellation is
    then at most a factor 16.
    """
    k = np.arange(2.0, 90.0)[None, :]
    cc = c[:, None]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # ((−1)^{k+1}(cq)^k − c q^k)/k: both parts stay in range (cq < ¼, q < ¼)
        terms = ((-1.0) ** (k + 1) * (cc * q) ** k - cc * q ** k) / k
        series = np.sum(terms[:, ::-1], axis=1)  # smallest first
        series_err = 16 * ULP * np.sum(np.abs(terms), axis=1)
    direct = c * lq1 + np.log1p(c * q)
    direct_err = 16 * ULP * (np.abs(c * lq1) + np.abs(np.log1p(c * q)))
    use_series = (q < 0.25) & (c * q < 0.25)
    return (np.where(use_series, series, direct),
            np.where(use_series, series_err, direct_err))


def _hazard(x: np.ndarray) -> np.ndarray:
    """A bound on (log Φ)'(x) = φ(x)/Φ(x): 1 + |x| for x < 0 (Mills ratio), 2φ(x) + 1e-300
    for x ≥ 0 (Φ(x) ≥ ½)."""
    with np.errstate(under="ignore"):
        return np.where(x < 0, 1.0 + np.abs(x), 0.8 * np.exp(-0.5 * np.minimum(x * x, 1e6))
                        + 1e-300)


#: Most terms × orders :func:`_fractional` doubles its series to (after a first pass of
#: ⌈max α⌉ + 64 terms). Series that need more — they converge slowly at tiny θ = Δ/σ (σ ≥
#: 1e10) — are left to the chord between integer orders, which bounds them; without this cap
#: they took minutes and gigabytes.
_SERIES_CELLS = 1 << 21


def _fractional(theta: float, q: float, a: np.ndarray, rtol: float = 1e-11,
                max_terms: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) bounds on the exact RDP at non-integer orders ``a`` (0 < q < 1), see
    :func:`poisson_gaussian_rdp`; NaN where the series could not be certified."""
    lq = math.log(q)
    lq1 = math.log1p(-q)
    x0 = (lq1 - lq) / theta + theta / 2.0  # θ z₀, z₀ = log((1 − q)/q)/θ² + ½
    th2 = theta * theta / 2.0
    c = a - 1.0
    f, f_err = _log1p_f(c, q, lq1)
    h = np.expm1(f)  # (1−q)^{α−1}(1 + (α−1)q) − 1 < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        h_rel = (np.abs(h) * 8 * ULP + f_err * (1.0 + np.abs(h))) / np.abs(h)
        neg = np.stack([
            np.log(-h),  # NaN unless h < 0: such orders are left uncertified (NaN) below
            a * lq1 + _special.log_ndtr(-x0),
            np.log(a) + lq + c * lq1 + _special.log_ndtr(theta - x0),
        ], axis=1)
    neg_err = np.stack([
        np.log1p(h_rel),
        _term_error(a * lq1, neg[:, 1]),
        _term_error(lq, c * lq1, neg[:, 2], x0),
    ], axis=1)
    up = np.full(a.shape, math.nan)
    lo = np.full(a.shape, math.nan)
    pending = np.arange(a.size)
    n_terms = first = int(math.ceil(float(a.max()))) + 64
    while pending.size:
        if n_terms > first and pending.size * (n_terms + 2) > _SERIES_CELLS:
            break  # left uncertified (NaN): the caller bounds these orders by a chord
        aa = a[pending][:, None]
        i = np.arange(n_terms + 2, dtype=float)[None, :]  # the last column: first omitted term
        lc, sg = _log_abs_binom(aa, i)
        m = aa - i
        arg1 = x0 - theta * i
        arg2 = theta * m - x0
        with np.errstate(over="ignore", invalid="ignore"):
            t1 = lc + i * lq + m * lq1 + (i * i - i) * th2 + _special.log_ndtr(arg1)
            t2 = lc + i * lq1 + m * lq + (m * m - m) * th2 + _special.log_ndtr(arg2)
        # rounding of each log-term, plus the effect of the argument's rounding on log Φ
        e1 = _term_error(lc, i * lq, m * lq1, (i * i - i) * th2, t1) + \
            _TERM_ULPS * ULP * _hazard(arg1) * (1 + abs(x0) + theta * i)
        e2 = _term_error(lc, i * lq1, m * lq, (m * m - m) * th2, t2) + \
            _TERM_ULPS * ULP * _hazard(arg2) * (1 + abs(x0) + theta * np.abs(m))
        logs = np.concatenate([neg[pending], t1[:, 2:-1], t2[:, :-1]], axis=1)
        signs = np.concatenate([np.full((pending.size, 3), -1.0), sg[:, 2:-1], sg[:, :-1]],
                               axis=1)
        errs = np.concatenate([neg_err[pending], e1[:, 2:-1], e2[:, :-1]], axis=1)
        scale = np.max(logs, axis=1)
        with np.errstate(over="ignore", invalid="ignore"):
            mags = np.exp(logs - scale[:, None])
            # correctly rounded sums (math.fsum): the summation error is 1 ulp of the result
            total = np.array([math.fsum(row) for row in (signs * mags).tolist()])
            om1 = sg[:, -1] * np.exp(t1[:, -1] - scale)
            om2 = sg[:, -1] * np.exp(t2[:, -1] - scale)
        broken = ~np.all(np.isfinite(logs) | np.isneginf(logs), axis=1) | ~np.isfinite(total)
        done = ((np.maximum(np.abs(om1), np.abs(om2)) <= rtol * np.abs(total)) & (total > 0)) \
            | (n_terms >= max_terms) | broken
        if np.any(done):
            mags_d = mags[done]
            # Σ |term|·(relative error bound), itself inflated for its own rounding, plus the
            # rounding of the correctly rounded signed sum
            rounding = np.sum(mags_d * np.expm1(errs[done]), axis=1) * (1 + logs.shape[1] * ULP) \
                + 2 * ULP * np.abs(total[done])
            # alternating tails with decreasing terms: each lies between 0 and its first term
            upper = total[done] + rounding + np.maximum(om1[done], 0) + np.maximum(om2[done], 0)
            lower = total[done] - rounding + np.minimum(om1[done], 0) + np.minimum(om2[done], 0)
            sc = scale[done]
            cd = c[pending[done]]
            ok = np.isfinite(upper) & (upper > 0) & ~broken[done]
            with np.errstate(divide="ignore", invalid="ignore"):
                e_up = np.logaddexp(0.0, np.log(upper) + sc) / cd * (1 + 8 * ULP)
                e_lo = np.where(lower > 0, np.logaddexp(0.0, np.log(lower) + sc) / cd
                                * (1 - 8 * ULP), 0.0)
            idx = pending[done]
            e_up = floor_positive(e_up, True)  # A_α > 1 for q > 0, θ > 0
            up[idx] = np.where(ok, e_up, math.nan)
            lo[idx] = np.where(ok, np.maximum(e_lo, 0.0), math.nan)
        pending = pending[~done]
        n_terms *= 2
    return up, lo


# ---------------------------------------------------------------------------------------------
# one entry point
# ---------------------------------------------------------------------------------------------


@functools.singledispatch
def _gaussian_theta(base: Any) -> float | None:
    """θ = Δ/σ when ``base`` is a Gaussian mechanism or profile (exact Poisson RDP), else None."""
    return None


@_gaussian_theta.register
def _(base: GaussianMechanism) -> float:
    return base.theta


@_gaussian_theta.register
def _(base: GaussianProfile) -> float:
    return base.theta


_NATURAL = {"poisson": _ADD_REMOVE, "wor": _SUBSTITUTE}


def subsampled_rdp(base: Any, *, sampling: str, sampling_rate: float | None = None,
                   n: int | None = None, m: int | None = None,
                   method: SubsampledBound | str = SubsampledBound.AUTO,
                   orders: Any = DEFAULT_ORDERS,
                   relation: NeighbouringRelation | str | None = None,
                   refine: bool = True) -> RdpCurve:
    """RDP curve of ``base`` run on a subsample: the one entry point for schemes and methods.

    Parameters
    ----------
    base : Mechanism, PrivacyProfile or RdpCurve
        The base mechanism, stated under the scheme's relation.
    sampling : {"poisson", "wor"}
        Poisson sampling (``sampling_rate``) or sampling without replacement (``n``, ``m``).
    sampling_rate : float, optional
        γ for Poisson sampling.
    n, m : int, optional
        Dataset and subsample sizes for WOR.
    method : SubsampledBound or str
        ``"auto"`` (exact for the Gaussian under Poisson, Zhu–Wang for other Poisson, WBK for
        WOR), ``"wbk"``, ``"zhu-wang"``, ``"exact"`` or ``"lower"``.
    orders : array_like
        Strictly increasing orders in (1, ∞] (≥ 2 for ``"lower"``).
    relation : NeighbouringRelation or str, optional
        Must be the scheme's relation (add/remove for Poisson, substitute for WOR) if given.
    refine : bool
        Refinements of the upper bounds (see the module docstring).

    Raises
    ------
    UnsupportedCombinationError
        WBK asked for Poisson, Zhu–Wang or exact asked for WOR, exact asked for a non-Gaussian
        mechanism, a relation that is not the scheme's, or a base mechanism stated under
        another relation.
    InvalidParameterError
        Missing or extra scheme parameters, out-of-range values, bad orders.

    >>> from privamp import GaussianMechanism
    >>> c = subsampled_rdp(GaussianMechanism(1.0), sampling="poisson", sampling_rate=0.01,
    ...                    orders=[2.0, 32.0])
    >>> c.bound, c.relation.value
    ('exact', 'add-remove')
    >>> subsampled_rdp(GaussianMechanism(1.0), sampling="poisson", sampling_rate=0.01,
    ...                method="wbk")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    privamp.errors.UnsupportedCombinationError: the Wang–Balle–Kasiviswanathan bound ... 'zhu-wang'
    """
    if sampling not in _NATURAL:
        raise InvalidParameterError("sampling", "one of 'poisson', 'wor'", sampling)
    meth = SubsampledBound.parse(method)
    natural = _NATURAL[sampling]
    if relation is not None:
        rel = NeighbouringRelation.parse(relation)
        if rel is not natural:
            raise UnsupportedCombinationError(
                f"{'Poisson sampling' if sampling == 'poisson' else 'sampling without replacement'}"
                f" is analysed here under {natural.value!r}, not {rel.value!r}"
                + (" (Poisson under substitution needs Balle et al. 2018, Theorem 14, which has "
                   "no RDP form here)" if sampling == "poisson" else ""))
    if sampling == "poisson":
        if n is not None or m is not None:
            raise InvalidParameterError("n", "unset for Poisson sampling (use sampling_rate)", n)
        if sampling_rate is None:
            raise InvalidParameterError("sampling_rate", "a real number in [0, 1] for Poisson "
                                        "sampling", None)
        if meth is SubsampledBound.WBK:
            raise UnsupportedCombinationError(
                "the Wang–Balle–Kasiviswanathan bound (W-8) holds for sampling without "
                "replacement under substitution, not for Poisson sampling; use method 'exact' "
                "(Gaussian) or 'zhu-wang'")
        theta = _gaussian_theta(base)
        if meth is SubsampledBound.AUTO:
            meth = SubsampledBound.EXACT if theta is not None else SubsampledBound.ZHU_WANG
        if meth is SubsampledBound.EXACT:
            if theta is None:
                raise UnsupportedCombinationError(
                    "the exact Poisson-subsampled RDP is available for the Gaussian mechanism "
                    "only; use method 'zhu-wang' (upper) or 'lower'")
            _require_relation(base, _ADD_REMOVE, "the exact Poisson-subsampled Gaussian RDP")
            q = _check_rate(sampling_rate)
            return _poisson_gaussian(theta, q, _check_orders(orders),
                                     f"exact Poisson Gaussian (theta={theta:g}, q={q:g})")
        if meth is SubsampledBound.ZHU_WANG:
            return zhu_wang_upper_bound(base, sampling_rate, orders, refine=refine)
        return subsampled_lower_bound(base, sampling_rate, _lower_orders(orders),
                                      relation=_ADD_REMOVE)
    # sampling without replacement
    if sampling_rate is not None:
        raise InvalidParameterError(
            "sampling_rate", "unset for sampling without replacement (use n and m)",
            sampling_rate)
    if n is None or m is None:
        raise InvalidParameterError("n" if n is None else "m",
                                    "an integer (sampling without replacement needs n and m)",
                                    None)
    if meth is SubsampledBound.ZHU_WANG:
        raise UnsupportedCombinationError(
            "the Zhu–Wang bound (W-20) holds for Poisson sampling under add/remove, not for "
            "sampling without replacement under substitution; use method 'wbk'")
    if meth is SubsampledBound.EXACT:
        raise UnsupportedCombinationError(
            "no exact RDP is known for sampling without replacement; use method 'wbk' (upper) "
            "or 'lower'")
    if meth is SubsampledBound.LOWER:
        gamma = _wor_rate(n, m, up=False)
        return subsampled_lower_bound(base, gamma, _lower_orders(orders), relation=_SUBSTITUTE)
    return wbk_upper_bound(base, n, m, orders, refine=refine)


def _lower_orders(orders: Any):
    """The default grid loses its orders below 2 for the lower bound; explicit grids are kept
    (and validated by :func:`subsampled_lower_bound`)."""
    if orders is DEFAULT_ORDERS:
        return DEFAULT_ORDERS[DEFAULT_ORDERS >= 2]
    return orders
