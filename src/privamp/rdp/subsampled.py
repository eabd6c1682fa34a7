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

* :func:`~privamp.rdp.poisson_gaussian.poisson_gaussian_rdp` — the **exact** RDP of the
  Poisson-subsampled Gaussian mechanism at every order (:mod:`privamp.rdp.poisson_gaussian`).
* :func:`~privamp.rdp.poisson_exact.poisson_exact_rdp` — the **exact** RDP of the
  Poisson-subsampled Laplace mechanism and randomized response (W-20 without the factor 3 at
  integer orders, which the W-20 remark says is exact for them; proof note in
  :mod:`privamp.rdp.poisson_exact`).

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
import math
from typing import Any

import numpy as np

from .._numerics import ULP, div_up, down_ulps, log_comb, log_expm1, up_ulps
from .._validation import check_int, check_real, parse_enum
from ..errors import InvalidParameterError, InvalidTypeError, UnsupportedCombinationError
from ..relations import NeighbouringRelation
from ..sampling.schemes import Poisson, SamplingScheme, WithoutReplacement
from ._kernels import (
    _LOG2,
    _check_orders,
    _check_rate,
    _mixture_eps,
    _positive_segments,
    _ragged,
    _segment_log1p_sum,
    _term_error,
)
from .curve import DEFAULT_ORDERS, RdpCurve
from .mechanisms import ExactRdpCurve, floor_positive, rdp_curve
from .poisson_exact import has_exact_poisson, poisson_exact_rdp
from .poisson_gaussian import poisson_gaussian_rdp

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
_LOG4 = math.log(4.0)


class SubsampledBound(enum.Enum):
    """Which subsampled-RDP result :func:`subsampled_rdp` computes."""

    AUTO = "auto"
    WBK = "wbk"
    ZHU_WANG = "zhu-wang"
    EXACT = "exact"
    LOWER = "lower"

    @classmethod
    def parse(cls, value, *, name: str = "method") -> SubsampledBound:
        return parse_enum(name, value, cls)


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------



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
        lo = down_ulps(curve.epsilons, 64)  # a user's exact curve: allow for its rounding
    else:
        raise UnsupportedCombinationError(
            "the subsampled lower bound (W-9) needs the exact RDP curve of a base mechanism whose "
            "worst-case pair attains it at every order (Gaussian, Laplace, randomized response); "
            f"got a {curve.bound!r} curve")
    return lo[:-1], float(lo[-1])


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
    return up_ulps(val, 8) + dx / (1.0 + math.exp(min(-x, 700.0)))


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
            cap = down_ulps(cap, 16)
        out[~np.isfinite(o)] = cap
    return RdpCurve(o, np.maximum(out, 0.0), bound="lower", relation=rel, label=label)




# ---------------------------------------------------------------------------------------------
# one entry point
# ---------------------------------------------------------------------------------------------


#: The schemes :func:`subsampled_rdp` has bounds for (their kinds are the ``sampling`` names).
SUBSAMPLED_SCHEMES = (Poisson, WithoutReplacement)


def _scheme_parameters(scheme: Any) -> dict[str, Any]:
    """``sampling`` and its numbers from a scheme object."""
    if isinstance(scheme, Poisson):
        return {"sampling": scheme.kind, "sampling_rate": scheme.rate}
    if isinstance(scheme, WithoutReplacement):
        return {"sampling": scheme.kind, "n": scheme.n, "m": scheme.m}
    if isinstance(scheme, SamplingScheme):
        raise UnsupportedCombinationError(
            f"no subsampled RDP bound for {scheme!r}: the bounds here are for "
            + " and ".join(c.__name__ for c in SUBSAMPLED_SCHEMES) + " (for other schemes, "
            "privamp.rdp.rdp_from_profile on the amplified profile, or the 'pld' backend)")
    raise InvalidTypeError("scheme", "a SamplingScheme (Poisson or WithoutReplacement)", scheme)


def subsampled_rdp(base: Any, scheme: SamplingScheme | None = None, *,
                   method: SubsampledBound | str = SubsampledBound.AUTO,
                   orders: Any = DEFAULT_ORDERS,
                   relation: NeighbouringRelation | str | None = None,
                   refine: bool = True, sampling: str | None = None,
                   sampling_rate: float | None = None, n: int | None = None,
                   m: int | None = None) -> RdpCurve:
    """RDP curve of ``base`` run on a subsample: the one entry point for schemes and methods.

    Parameters
    ----------
    base : Mechanism, PrivacyProfile or RdpCurve
        The base mechanism, stated under the scheme's relation.
    scheme : Poisson or WithoutReplacement
        The sampling scheme (the accountant passes its event's scheme).
    sampling, sampling_rate, n, m : optional
        The scheme given by numbers instead (``sampling="poisson"`` with ``sampling_rate`` γ ∈
        [0, 1], or ``"wor"`` with ``n`` and 0 ≤ ``m`` ≤ n): the boundary values γ = 0 and
        m = 0, which no scheme object takes, are accepted here (the curve is 0).
    method : SubsampledBound or str
        ``"auto"`` (exact under Poisson for the Gaussian, Laplace, randomized response and
        randomized membership — :func:`~privamp.rdp.poisson_exact.poisson_exact_rdp` —,
        Zhu–Wang for other Poisson, WBK for WOR), ``"wbk"``, ``"zhu-wang"``, ``"exact"`` or
        ``"lower"``.
    orders : array_like
        Strictly increasing orders in (1, ∞] (≥ 2 for ``"lower"``).
    relation : NeighbouringRelation or str, optional
        Must be the scheme's relation (add/remove for Poisson, substitute for WOR) if given.
    refine : bool
        Refinements of the upper bounds (see the module docstring).

    Raises
    ------
    UnsupportedCombinationError
        WBK asked for Poisson, Zhu–Wang or exact asked for WOR, exact asked for a mechanism
        without a known exact curve, a relation that is not the scheme's, or a base mechanism
        stated under another relation.
    InvalidParameterError
        Missing or extra scheme parameters, out-of-range values, bad orders.

    >>> from privamp import GaussianMechanism, Poisson
    >>> c = subsampled_rdp(GaussianMechanism(1.0), Poisson(0.01), orders=[2.0, 32.0])
    >>> c.bound, c.relation.value
    ('exact', 'add-remove')
    >>> same = subsampled_rdp(GaussianMechanism(1.0), sampling="poisson", sampling_rate=0.01,
    ...                       orders=[2.0, 32.0])
    >>> bool((same.epsilons == c.epsilons).all())
    True
    >>> subsampled_rdp(GaussianMechanism(1.0), sampling="poisson", sampling_rate=0.01,
    ...                method="wbk")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    privamp.errors.UnsupportedCombinationError: the Wang–Balle–Kasiviswanathan bound ... 'zhu-wang'
    """
    if scheme is not None:
        given = {k: v for k, v in {"sampling": sampling, "sampling_rate": sampling_rate,
                                   "n": n, "m": m}.items() if v is not None}
        if given:
            name = next(iter(given))
            raise InvalidParameterError(name, "unset when a scheme object is given", given[name])
        return subsampled_rdp(base, method=method, orders=orders, relation=relation,
                              refine=refine, **_scheme_parameters(scheme))
    kinds = {c.kind: c for c in SUBSAMPLED_SCHEMES}
    if sampling not in kinds:
        raise InvalidParameterError("sampling", "one of " + ", ".join(map(repr, kinds)),
                                    sampling)
    meth = SubsampledBound.parse(method)
    natural = kinds[sampling].default_relation()
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
        exact = has_exact_poisson(base)
        if meth is SubsampledBound.AUTO:
            meth = SubsampledBound.EXACT if exact else SubsampledBound.ZHU_WANG
        if meth is SubsampledBound.EXACT:
            if not exact:
                raise UnsupportedCombinationError(
                    "the exact Poisson-subsampled RDP is available for the Gaussian, Laplace, "
                    "randomized response and randomized membership mechanisms only (their "
                    f"worst-case pair is attained), not for {base!r}; use method 'zhu-wang' "
                    "(upper) or 'lower'")
            return poisson_exact_rdp(base, sampling_rate, orders)
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
