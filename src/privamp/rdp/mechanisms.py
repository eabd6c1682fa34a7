"""Rényi-DP curves of base mechanisms: closed forms, Theorem 6 for any profile, pure ε-DP.

A mechanism is (order, ε)-RDP when ``sup_{x≃x'} D_order(M(x) ‖ M(x')) ≤ ε`` (Mironov 2017).
This module turns mechanisms and privacy profiles into :class:`~privamp.rdp.curve.RdpCurve`
objects on a grid of orders (each > 1, ``inf`` for the pure-DP limit). The single entry point is
:func:`rdp_curve`, a :func:`functools.singledispatch` function: new mechanism types register an
implementation instead of growing an ``isinstance`` ladder.

Closed forms (Wang's slides W-3; sensitivity Δ under the mechanism's relation)
----------------------------------------------------------------------------------
* Gaussian, θ = Δ/σ: ``ε(order) = order θ²/2``, ``ε(∞) = ∞``.
* Laplace, θ = Δ/b: ``ε(order) = log( (order/(2order−1)) e^{(order−1)θ}
  + ((order−1)/(2order−1)) e^{−order θ} ) / (order − 1)``, ``ε(∞) = θ``, and the order → 1 limit
  is the KL divergence ``θ + e^{−θ} − 1``.
* Randomized response with probability p of the true bit, L = |log(p/(1−p))|:
  ``ε(order) = log(p^order (1−p)^{1−order} + (1−p)^order p^{1−order}) / (order − 1)``,
  ``ε(∞) = L``.

Stable evaluation. With s = order − 1 the Laplace value is ``log1p(N/(2 order − 1))/s`` where
``N = order·E(sθ) + s·E(−order θ)`` and ``E(x) = e^x − 1 − x ≥ 0`` (the linear parts cancel
exactly: ``order·sθ = s·order θ``), so nothing cancels and the KL limit comes out as s → 0. The
randomized-response value is ``log1p(2 sinh²(x/2) + (2p−1) sinh x)/s`` with x = sL (p ≥ ½), a sum
of non-negative terms. Large arguments switch to the log-sum-exp form. Every value carries a
bound on its relative rounding error: curves returned here are :class:`ExactRdpCurve` objects
whose ``epsilons`` are rounded *up* and whose ``lower_epsilons`` are rounded *down*.

White-box group privacy: k records change a Gaussian or Laplace query by at most kΔ (θ → kθ);
randomized response (and the randomized membership mechanism) see at most one changed bit, so
their curve does not change; a pure ε-DP mechanism is kε-DP for groups of k.

Any profile (Balle, Barthe, Gaboardi 2018, Theorem 6)
------------------------------------------------------
``e^{(order−1) ε(order)} ≤ 1 + order(order−1) ∫_0^∞ (e^{(order−1)ε} + e^{−order ε}) δ(ε) dε``
for every mechanism whose profile is ≤ δ. :func:`rdp_from_profile` evaluates the right-hand side
with :func:`privamp.privacy_loss.mgf_from_profile` (a certified bracket), rounds the logarithm
up, and states the numerical error through :func:`rdp_bracket_from_profile`.

Pure ε-DP
---------
An ε-DP mechanism is (order, ε')-RDP with the tight

    ε'(order) = log( (e^{order ε} + e^{(1−order) ε}) / (1 + e^ε) ) / (order − 1)
              = log( cosh((order − ½) ε) / cosh(ε/2) ) / (order − 1),

the RDP of randomized response with p = e^ε/(1 + e^ε). Proof: any pair (P, Q) with
``e^{−ε} ≤ dP/dQ ≤ e^ε`` is the image of that randomized-response pair under the Markov kernel
``K(·|0) = (pP − (1−p)Q)/(2p−1)``, ``K(·|1) = (pQ − (1−p)P)/(2p−1)`` (non-negative exactly because
of the ratio bounds; Kairouz, Oh, Viswanath 2015), and Rényi divergences cannot increase under a
Markov kernel (van Erven & Harremoës 2014, Theorem 9). Randomized response attains it, so it is
optimal (it equals the ``sinh`` form of Steinke's "Tight RDP & zCDP bounds from pure DP",
differentialprivacy.org, 2022). It never exceeds ``min(ε, order ε²/2)`` (the second is Bun &
Steinke 2016, Proposition 3.3); both are checked in the tests.

>>> from privamp import GaussianMechanism, LaplaceMechanism
>>> c = rdp_curve(GaussianMechanism(sigma=2.0), orders=[1.5, 2.0, float("inf")])
>>> [round(float(e), 12) for e in c.epsilons]
[0.1875, 0.25, inf]
>>> round(float(rdp_curve(LaplaceMechanism(scale=1.5), orders=[2.0]).epsilons[0]), 12)
0.326678053678
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .._numerics import ULP, down_ulps, expm1_minus_x, mul_up, round_down_log, round_up_log, up_ulps
from .._validation import check_int, check_real, check_real_array
from ..divergences import renyi_divergence_bounds
from ..errors import InvalidParameterError, InvalidTypeError, UnsupportedCombinationError
from ..mechanisms.base import Mechanism
from ..mechanisms.gaussian import GaussianMechanism, GaussianProfile
from ..mechanisms.generic import ApproxDPMechanism, ApproxDPProfile, DiscretePairProfile
from ..mechanisms.laplace import LaplaceMechanism, LaplaceProfile
from ..mechanisms.randomized_response import (
    RandomizedMembershipMechanism,
    RandomizedResponse,
    RandomizedResponseProfile,
)
from ..privacy_loss import ProfileValues, mgf_from_profile
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from .curve import DEFAULT_ORDERS, RdpCurve

__all__ = [
    "ExactRdpCurve",
    "check_orders",
    "pure_dp_rdp",
    "rdp_bracket_from_profile",
    "rdp_curve",
    "rdp_from_profile",
]

_LOG2 = math.log(2.0)
_REL = 64 * ULP  # per-operation allowance of the closed forms (NumPy's special functions: < 4 ulp)

#: Upper values of distinct distributions never round to 0 (an RDP of 0 means "identical" to the
#: conversion): a value that underflowed (true value below ~2e-308) is raised to this floor.
POSITIVE_FLOOR = 1e-300


def floor_positive(upper: np.ndarray, positive) -> np.ndarray:
    """``upper`` with values that underflowed to 0 raised to :data:`POSITIVE_FLOOR` where
    ``positive`` (the true value is known to be > 0)."""
    return np.where(positive & (upper < POSITIVE_FLOOR), np.maximum(upper, POSITIVE_FLOOR), upper)


def check_orders(orders: Any, name: str = "orders") -> np.ndarray:
    """Validate a grid of Rényi orders: a non-empty, strictly increasing 1-D array of reals in
    (1, ∞] (``inf`` is the pure-DP order). A scalar is a grid of one order.

    >>> check_orders([1.5, 2, float("inf")])
    array([1.5, 2. , inf])
    >>> check_orders([2.0, 1.0])
    Traceback (most recent call last):
    ...
    privamp.errors.InvalidParameterError: orders must be real number(s) in (1, inf]; got 1.0
    """
    if isinstance(orders, int | float | np.integer | np.floating) and not isinstance(orders, bool):
        orders = [orders]
    o = check_real_array(name, orders, "(1, inf]", ndim=1)
    if np.any(np.diff(o) <= 0):
        raise InvalidParameterError(name, "strictly increasing (no repeats)", o)
    return o


class ExactRdpCurve(RdpCurve):
    """An RDP curve known exactly up to rounding: ``lower_epsilons ≤ true ≤ epsilons``.

    ``bound`` is ``"exact"``; :attr:`epsilons` are rounded up (so the curve is a valid upper
    bound for composition and conversion) and :attr:`lower_epsilons` are rounded down (the lower
    bounds of :mod:`privamp.rdp.subsampled` use them). Composition (``+``, ``*``) and
    interpolation (:meth:`at`) return plain :class:`RdpCurve` objects.

    >>> c = ExactRdpCurve([2.0, 3.0], [0.25, 0.375], [0.25, 0.375])
    >>> c.bound, c.lower_epsilons.tolist()
    ('exact', [0.25, 0.375])
    """

    __slots__ = ("_lower",)

    def __init__(self, orders: Any, epsilons: Any, lower_epsilons: Any, *,
                 relation: NeighbouringRelation | str | None = None, label: str | None = None):
        super().__init__(orders, epsilons, bound="exact", relation=relation, label=label)
        lo = check_real_array("lower_epsilons", lower_epsilons, "[0, inf]", ndim=1)
        if lo.size != self.orders.size:
            raise InvalidParameterError(
                "lower_epsilons", f"an array of the same length as orders ({self.orders.size})",
                lo.size)
        if np.any(lo > self.epsilons):
            raise InvalidParameterError("lower_epsilons", "element-wise <= epsilons", lo)
        self._lower = lo.copy()
        self._lower.setflags(write=False)

    @property
    def lower_epsilons(self) -> np.ndarray:
        return self._lower

    def restrict(self, orders: Any) -> ExactRdpCurve:
        """The same curve on a subset of its orders (every requested order must be on the grid)."""
        new = check_orders(orders)
        idx = np.searchsorted(self.orders, new)
        ok = (idx < self.orders.size) & (self.orders[np.minimum(idx, self.orders.size - 1)] == new)
        if not np.all(ok):
            raise InvalidParameterError("orders", "orders on the curve's grid", new[~ok])
        return ExactRdpCurve(new, self.epsilons[idx], self._lower[idx], relation=self.relation,
                             label=self.label)


# ---------------------------------------------------------------------------------------------
# closed forms: (ε, relative error bound) at finite orders
# ---------------------------------------------------------------------------------------------


def _gaussian_eps(theta: float, a: np.ndarray):
    """Gaussian RDP ``a θ²/2`` and its relative error bound."""
    return a * (theta * theta) / 2.0, np.full(a.shape, 4 * ULP)


def _laplace_eps(theta: float, a: np.ndarray):
    """Laplace RDP (slides W-3) in the cancellation-free form of the module docstring."""
    s = a - 1.0
    u = s * theta
    v = a * theta
    big = u > 30.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        n_small = a * expm1_minus_x(np.where(big, 0.0, u)) + s * expm1_minus_x(-v)
        small_eps = np.log1p(n_small / (2.0 * a - 1.0)) / s
        two = 2.0 * a - 1.0
        big_eps = np.logaddexp(np.log(a / two) + u, np.log(s / two) - v) / s
    eps = np.where(big, big_eps, small_eps)
    # small branch: E(x) has condition number ≤ 2 + |x| in x (u ≤ 30; E(−v) ≤ 2);
    # log-sum branch: the logarithm of two exponentials, condition ≤ 2
    rel = np.where(big, 8 * _REL, _REL * (6.0 + u))
    return np.minimum(eps, theta), rel


def _rr_eps(log_odds: float, w: float, a: np.ndarray):
    """RDP of randomized response, ``log_odds`` = L = log(p_max/p_min) ≥ 0, ``w`` = 2 p_max − 1.

    ``p_max e^{x} + p_min e^{−x} − 1 = 2 sinh²(x/2) + w sinh(x)`` with x = sL (no cancellation);
    for x > 20 the log-sum form ``x + log p_max + log1p(e^{−L−2x})``.
    """
    s = a - 1.0
    if math.isinf(log_odds):
        return np.full(a.shape, math.inf), np.zeros(a.shape)
    x = s * log_odds
    big = x > 20.0
    xs = np.where(big, 0.0, x)
    sh = np.sinh(xs / 2.0)
    n_small = 2.0 * sh * sh + w * np.sinh(xs)
    with np.errstate(over="ignore"):
        small_eps = np.log1p(n_small) / s
        big_eps = (x + math.log1p(w) - _LOG2 + np.log1p(np.exp(-log_odds - 2.0 * x))) / s
    eps = np.where(big, big_eps, small_eps)
    rel = np.where(big, 8 * _REL, _REL * (4.0 + x))  # sinh terms: condition ≤ 2 + x (x ≤ 20)
    return np.minimum(eps, log_odds), rel


def _exact_curve(orders: np.ndarray, eps_fn, pure: tuple[float, float], relation, label: str
                 ) -> ExactRdpCurve:
    """Assemble an :class:`ExactRdpCurve` from a closed form ``eps_fn(finite orders) -> (ε,
    relative error)`` and the (upper, lower) pure value at order ∞."""
    up = np.empty(orders.shape)
    lo = np.empty(orders.shape)
    finite = np.isfinite(orders)
    if np.any(finite):
        eps, rel = eps_fn(orders[finite])
        with np.errstate(invalid="ignore"):
            e_up = np.where(np.isfinite(eps), eps * (1.0 + rel), eps)
            e_lo = np.where(np.isfinite(eps), np.maximum(eps * (1.0 - rel), 0.0), eps)
        # distinct distributions (pure ε > 0) have a positive RDP at every order
        e_up = floor_positive(e_up, pure[0] > 0)
        up[finite] = np.minimum(e_up, pure[0])
        lo[finite] = np.minimum(e_lo, pure[1])
    up[~finite] = pure[0]
    lo[~finite] = pure[1]
    return ExactRdpCurve(orders, up, np.minimum(lo, up), relation=relation, label=label)


def _gaussian_curve(theta: float, orders, relation, label) -> ExactRdpCurve:
    pure = (0.0, 0.0) if theta == 0.0 else (math.inf, math.inf)
    return _exact_curve(orders, lambda a: _gaussian_eps(theta, a), pure, relation, label)


def _laplace_curve(theta: float, orders, relation, label) -> ExactRdpCurve:
    return _exact_curve(orders, lambda a: _laplace_eps(theta, a), (theta, theta), relation,
                        label)


def _rr_params(p: float) -> tuple[float, float]:
    """(L, w) = (log(p_max/p_min), 2 p_max − 1), each to a few ulp (L by log1p, w exactly)."""
    with np.errstate(divide="ignore"):
        if p >= 0.5:
            w = 2.0 * p - 1.0  # exact (Sterbenz)
            log_odds = math.inf if p == 1.0 else math.log1p(w / (1.0 - p))
        else:
            w = 1.0 - 2.0 * p
            log_odds = math.inf if p == 0.0 else math.log1p(-p) - math.log(p)
    return log_odds, w


def _rr_curve(log_odds: float, w: float, orders, relation, label, *,
              exact_log_odds: bool = False) -> ExactRdpCurve:
    """``exact_log_odds``: L is the given ε itself (pure DP), not computed from p."""
    slack = 0.0 if exact_log_odds else 4 * ULP
    pure = (log_odds * (1 + slack), log_odds * (1 - slack))
    return _exact_curve(orders, lambda a: _rr_eps(log_odds, w, a), pure, relation, label)


def discrete_pair_rdp(p: Any, q: Any, orders: Any = DEFAULT_ORDERS, *,
                      relation: NeighbouringRelation | str | None = None) -> ExactRdpCurve:
    """The exact RDP curve of a pair of output laws on a finite support, both orders:
    ``max(D_a(p‖q), D_a(q‖p))`` (Mironov 2017, Definition 3, for discrete laws), rounded
    outward (:class:`ExactRdpCurve`: ``epsilons`` up, ``lower_epsilons`` down).

    Theorem 6 of Balle, Barthe, Gaboardi 2018 applied to the pair's privacy profile (the
    generic path) is a valid but looser upper bound computed by numerical integration; this is
    the pair's own Rényi divergence, in closed form. At order ∞ it is the largest
    |log p_i/q_i| (∞ when one law has an outcome the other never produces).

    >>> c = discrete_pair_rdp([0.75, 0.25], [0.25, 0.75], [2.0])  # randomized response, p = ¾
    >>> bool(c.lower_epsilons[0] <= math.log(7 / 3) <= c.epsilons[0])
    True
    """
    o = check_orders(orders)
    rel = None if relation is None else NeighbouringRelation.parse(relation)
    up_pq, lo_pq = renyi_divergence_bounds(p, q, o)
    up_qp, lo_qp = renyi_divergence_bounds(q, p, o)
    up, lo = np.maximum(up_pq, up_qp), np.maximum(lo_pq, lo_qp)
    # Rényi divergences are non-decreasing in the order: an upper value bounds every smaller
    # order from above, a lower value every larger order from below
    up = np.minimum.accumulate(up[::-1])[::-1]
    lo = np.maximum.accumulate(lo)
    return ExactRdpCurve(o, up, np.minimum(lo, up), relation=rel,
                         label="discrete pair (exact Rényi divergence)")


def _infinite_curve(orders, relation, label) -> ExactRdpCurve:
    inf = np.full(orders.shape, math.inf)
    return ExactRdpCurve(orders, inf, inf, relation=relation, label=label)


def pure_dp_rdp(epsilon: float, orders: Any = DEFAULT_ORDERS, *,
                relation: NeighbouringRelation | str | None = None) -> ExactRdpCurve:
    """The tight RDP curve of the class of pure ε-DP mechanisms (see the module docstring).

    ``ε'(order) = log(cosh((order − ½)ε)/cosh(ε/2))/(order − 1)``: the RDP of randomized response
    with p = e^ε/(1 + e^ε), which every ε-DP pair is a post-processing of (Kairouz, Oh,
    Viswanath 2015; data processing for Rényi divergences, van Erven & Harremoës 2014,
    Theorem 9); ``ε'(∞) = ε``, and ``ε' ≤ min(ε, order ε²/2)`` (Bun & Steinke 2016,
    Proposition 3.3).

    Parameters
    ----------
    epsilon : float
        The pure-DP ε ≥ 0 (``inf`` allowed: no bound).
    orders : array_like
        Strictly increasing orders in (1, ∞].
    relation : NeighbouringRelation or str, optional
        Recorded on the curve.

    >>> c = pure_dp_rdp(1.0, orders=[2.0, 10.0, float("inf")])
    >>> [round(float(e), 6) for e in c.epsilons]
    [0.735326, 0.965193, 1.0]
    """
    eps = check_real("epsilon", epsilon, "[0, inf]")
    o = check_orders(orders)
    rel = None if relation is None else NeighbouringRelation.parse(relation)
    label = f"pure {eps:g}-DP"
    if math.isinf(eps):
        return _infinite_curve(o, rel, label)
    return _rr_curve(eps, math.tanh(eps / 2.0), o, rel, label, exact_log_odds=True)


# ---------------------------------------------------------------------------------------------
# Theorem 6: any profile
# ---------------------------------------------------------------------------------------------


def rdp_bracket_from_profile(profile: PrivacyProfile, orders: Any = DEFAULT_ORDERS, *,
                             rtol: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Numerical bracket ``(lower, upper)`` on the Theorem 6 RDP bound of a privacy profile.

    For each finite order, ``(lower, upper)`` brackets
    ``log(1 + order(order−1) ∫_0^∞ (e^{(order−1)ε} + e^{−order ε}) δ(ε) dε)/(order − 1)``
    (Balle, Barthe, Gaboardi 2018, Theorem 6 with s = order − 1): the integral is bracketed by
    :func:`privamp.privacy_loss.mgf_from_profile` to relative width ``rtol``, the logarithms are
    rounded outward. ``upper`` is an upper bound on the RDP of every mechanism whose profile is
    ≤ δ; ``upper − lower`` is the numerical error. At order ∞ both are the profile's pure ε.

    ``upper`` is further improved by two valid refinements: the tight pure-DP bound when the
    profile reaches 0 (:func:`pure_dp_rdp`), and monotonicity (RDP is non-decreasing in the
    order, so a bound at a larger order bounds every smaller one). Once the MGF passes the
    float range (``e^{709}``) the order gets ``inf`` before those refinements.

    >>> from privamp import LaplaceProfile
    >>> lo, up = rdp_bracket_from_profile(LaplaceProfile(1.0), [2.0])
    >>> bool(lo[0] <= 0.6191236299985928 <= up[0]), bool(up[0] - lo[0] < 1e-6)
    (True, True)
    """
    if not isinstance(profile, PrivacyProfile):
        raise InvalidTypeError("profile", "a PrivacyProfile", profile)
    o = check_orders(orders)
    rtol = check_real("rtol", rtol, "(0, 1)")
    pure = float(profile.pure_epsilon)
    lower = np.zeros(o.shape)
    upper = np.full(o.shape, math.inf)
    overflow = False
    best_lower = 0.0
    values = ProfileValues(profile)  # the orders' integrals share the profile's nodes
    for i, a in enumerate(o):
        if math.isinf(a):
            lower[i] = upper[i] = pure
            continue
        if not overflow:
            s = a - 1.0
            try:
                b = mgf_from_profile(profile, s, rtol=rtol, values=values)
            except OverflowError:  # mgf_from_profile overflows once φ passes the float range
                overflow = True
            else:
                log_up = float(round_up_log(math.log(b.upper)))
                upper[i] = max(up_ulps(log_up / s, 4), 0.0)
                if b.lower is not None and b.lower > 0:
                    log_lo = float(round_down_log(math.log(b.lower)))
                    best_lower = max(best_lower, max(down_ulps(log_lo / s, 4), 0.0))
        lower[i] = best_lower
    if math.isfinite(pure):
        upper = np.minimum(upper, pure_dp_rdp(pure, o).epsilons)
    upper = np.minimum.accumulate(upper[::-1])[::-1]
    return np.minimum(lower, upper), upper


def rdp_from_profile(profile: PrivacyProfile, orders: Any = DEFAULT_ORDERS, *,
                     rtol: float = 1e-6) -> RdpCurve:
    """Upper-bound RDP curve of any mechanism with privacy profile ≤ ``profile`` (Theorem 6).

    The values are the ``upper`` side of :func:`rdp_bracket_from_profile` (relative numerical
    error of ``e^{(order−1)ε} − 1`` at most ``rtol``, logarithms rounded up), so the curve is a
    certified upper bound (``bound="upper"``) under ``profile.relation``.

    >>> from privamp import GaussianProfile
    >>> c = rdp_from_profile(GaussianProfile(1.0), [2.0])
    >>> 1.0 <= float(c.epsilons[0]) < 1.0 + 1e-6  # closed form: order θ²/2 = 1
    True
    """
    lower, upper = rdp_bracket_from_profile(profile, orders, rtol=rtol)
    return RdpCurve(check_orders(orders), upper, bound="upper", relation=profile.relation,
                    label=f"Theorem 6 from {profile!r}")


# ---------------------------------------------------------------------------------------------
# the dispatch point
# ---------------------------------------------------------------------------------------------


@functools.singledispatch
def rdp_curve(mechanism: Any, orders: Any = DEFAULT_ORDERS, group_size: int = 1) -> RdpCurve:
    """The RDP curve of a mechanism, a privacy profile or a curve, on a grid of orders.

    Dispatches on the type of ``mechanism`` (:func:`functools.singledispatch`; register new
    types with ``rdp_curve.register``):

    * Gaussian, Laplace, randomized response, randomized membership, (ε, 0)-DP mechanisms and
      their profiles: closed forms, an :class:`ExactRdpCurve` (``bound="exact"``, values rounded
      up, lower values rounded down); white-box group privacy for ``group_size`` > 1.
    * An (ε, δ)-DP mechanism or profile with δ > 0: ``inf`` at every order (its canonical pair
      has an event of probability δ that one side never produces).
    * Any other :class:`~privamp.mechanisms.Mechanism` or
      :class:`~privamp.profiles.PrivacyProfile`: Theorem 6 (:func:`rdp_from_profile`) applied to
      the group profile (white-box where known, black-box otherwise), ``bound="upper"``.
    * An :class:`RdpCurve`: itself on the requested orders (exact values where the orders are on
      its grid, safe CGF-chord interpolation otherwise); ``group_size`` must be 1.

    Parameters
    ----------
    mechanism : Mechanism, PrivacyProfile or RdpCurve
    orders : array_like
        Strictly increasing orders in (1, ∞] (default :data:`DEFAULT_ORDERS`).
    group_size : int
        Number of records that differ (≥ 1).

    >>> from privamp import RandomizedResponse
    >>> c = rdp_curve(RandomizedResponse(0.8), orders=[2.0, 3.0])
    >>> [round(float(e), 12) for e in c.epsilons]
    [1.178654996342, 1.275210628449]
    """
    raise InvalidTypeError("mechanism", "a Mechanism, a PrivacyProfile or an RdpCurve", mechanism)


def _group(group_size: int) -> int:
    return check_int("group_size", group_size, "[1, inf)")


@rdp_curve.register
def _(mechanism: GaussianMechanism, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    k = _group(group_size)
    theta = mul_up(float(k), mechanism.theta)
    group = f", group of {k}" if k > 1 else ""
    return _gaussian_curve(theta, check_orders(orders), mechanism.relation,
                           f"Gaussian sigma={mechanism.sigma:g}, sensitivity="
                           f"{mechanism.sensitivity:g}{group}")


@rdp_curve.register
def _(mechanism: GaussianProfile, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    k = _group(group_size)
    return _gaussian_curve(mul_up(float(k), mechanism.theta), check_orders(orders),
                           mechanism.relation, f"Gaussian theta={k * mechanism.theta:g}")


def _laplace_of(mechanism, orders, k: int, label: str) -> ExactRdpCurve:
    """The Laplace curve at the group's θ = kΔ/b, rounded up."""
    return _laplace_curve(mul_up(float(k), mechanism.theta), check_orders(orders),
                          mechanism.relation, label)


@rdp_curve.register
def _(mechanism: LaplaceMechanism, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    k = _group(group_size)
    group = f", group of {k}" if k > 1 else ""
    return _laplace_of(mechanism, orders, k, f"Laplace b={mechanism.scale:g}, "
                       f"sensitivity={mechanism.sensitivity:g}{group}")


@rdp_curve.register
def _(mechanism: LaplaceProfile, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    k = _group(group_size)
    return _laplace_of(mechanism, orders, k, f"Laplace theta={k * mechanism.theta:g}")


def _rr_from_p(p: float, orders, relation, group_size) -> ExactRdpCurve:
    _group(group_size)  # the bit changes at most once: group privacy is free (white-box)
    log_odds, w = _rr_params(p)
    return _rr_curve(log_odds, w, check_orders(orders), relation, f"randomized response p={p:g}")


@rdp_curve.register(RandomizedResponse)
@rdp_curve.register(RandomizedMembershipMechanism)
@rdp_curve.register(RandomizedResponseProfile)
def _(mechanism, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    return _rr_from_p(mechanism.p, orders, mechanism.relation, group_size)


def _approx_dp_curve(eps0: float, delta0: float, orders, relation, group_size):
    k = _group(group_size)
    o = check_orders(orders)
    if delta0 > 0.0:
        return _infinite_curve(o, relation, f"({eps0:g}, {delta0:g})-DP")
    # pure DP: the canonical mechanism is randomized response; groups of k are kε-DP
    eps = mul_up(float(k), eps0) if k > 1 else eps0
    return pure_dp_rdp(eps, o, relation=relation)


@rdp_curve.register
def _(mechanism: ApproxDPMechanism, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    return _approx_dp_curve(mechanism.epsilon, mechanism.delta, orders, mechanism.relation,
                            group_size)


@rdp_curve.register
def _(mechanism: ApproxDPProfile, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    return _approx_dp_curve(mechanism.eps0, mechanism.delta0, orders, mechanism.relation,
                            group_size)


@rdp_curve.register
def _(mechanism: DiscretePairProfile, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    if _group(group_size) == 1:
        return discrete_pair_rdp(mechanism.p, mechanism.q, orders, relation=mechanism.relation)
    return rdp_from_profile(mechanism.group(group_size), orders)  # black-box group profile


@rdp_curve.register
def _(mechanism: PrivacyProfile, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    profile = mechanism.group(_group(group_size))
    if type(profile) is not type(mechanism):  # a white-box group profile may have a closed form
        return rdp_curve(profile, orders)
    return rdp_from_profile(profile, orders)


@rdp_curve.register
def _(mechanism: Mechanism, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    curve = rdp_curve(mechanism.group_profile(_group(group_size)), orders)
    return curve


@rdp_curve.register
def _(mechanism: RdpCurve, orders: Any = DEFAULT_ORDERS, group_size: int = 1):
    if _group(group_size) != 1:
        raise UnsupportedCombinationError(
            "group privacy cannot be derived from a bare RDP curve; pass the mechanism")
    o = check_orders(orders)
    if o.shape == mechanism.orders.shape and np.all(o == mechanism.orders):
        return mechanism
    on_grid = np.isin(o, mechanism.orders)
    if isinstance(mechanism, ExactRdpCurve) and np.all(on_grid):
        return mechanism.restrict(o)
    if mechanism.bound == "exact" and np.all(on_grid):
        idx = np.searchsorted(mechanism.orders, o)
        return RdpCurve(o, mechanism.epsilons[idx], bound="exact", relation=mechanism.relation,
                        label=mechanism.label)
    return mechanism.at(o)
