"""The analytical moments accountant: a ledger of RDP curves composed by addition (slides W-12).

Each ledger line is an RDP *source* composed ``count`` times: an :class:`RdpCurve`, anything
:func:`~privamp.rdp.mechanisms.rdp_curve` accepts (a mechanism or a privacy profile), or a
callable ``orders -> RdpCurve`` (for example ``lambda o: poisson_gaussian_rdp(1.0, 0.01, o)``).
RDP composes by adding curves order by order (Mironov 2017, Proposition 1; W-2), heterogeneous
mechanisms and counts included. The total converts to (ε, δ)-DP with the conversion of
:meth:`RdpCurve.epsilon` / :meth:`RdpCurve.delta` (Canonne, Kamath, Steinke 2020,
Proposition 12), whose answers are upper bounds.

Order refinement. The conversion minimises over the order grid. After the grid search the
accountant re-evaluates every source on a fine grid around the best order (between its grid
neighbours; beyond the grid's edge when the best order is an edge) and keeps the smallest
value: every order gives a valid bound, so the minimum over more orders is still valid and
never larger. Sources that can only be interpolated (plain curves) use the safe CGF-chord rule
of :meth:`RdpCurve.at`. An :class:`~privamp.rdp.curve.OrderGridWarning` is issued when the
optimum stays at the edge of everything searched.

>>> from privamp.rdp.subsampled import poisson_gaussian_rdp
>>> acc = RdpAccountant()
>>> _ = acc.compose(lambda o: poisson_gaussian_rdp(1.0, 0.01, o), 1000, label="DP-SGD")
>>> eps, order = acc.epsilon(1e-5, return_order=True)
>>> round(eps, 3), round(order, 2)  # landscape.md: RDP 2.101, PLD 1.82824
(2.101, 7.78)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int, check_real, check_real_array
from ..errors import InvalidParameterError, UnsupportedCombinationError
from .curve import DEFAULT_ORDERS, OrderGridWarning, RdpCurve, shaped_result
from .mechanisms import check_orders, rdp_curve
from .subsampled import poisson_gaussian_rdp

__all__ = ["RdpAccountant", "RdpEvent", "poisson_gaussian_epsilon"]

_REFINE_POINTS = 33


@dataclass(frozen=True)
class RdpEvent:
    """One ledger line: ``source`` composed ``count`` times, with its curve on the grid."""

    source: Any
    count: int
    curve: RdpCurve
    label: str | None = None


def _evaluate(source: Any, orders: np.ndarray) -> RdpCurve:
    """The RDP curve of a ledger source on ``orders`` (an upper or exact curve)."""
    if callable(source) and not isinstance(source, RdpCurve):
        curve = source(orders)
        if not isinstance(curve, RdpCurve):
            raise InvalidParameterError("event", "a callable returning an RdpCurve", curve)
        if curve.orders.shape != orders.shape or np.any(curve.orders != orders):
            curve = curve.at(orders)
    else:
        curve = rdp_curve(source, orders)
    if curve.bound == "lower":
        raise UnsupportedCombinationError(
            "a lower-bound RDP curve cannot be composed into a privacy guarantee")
    return curve


class RdpAccountant:
    """Ledger of RDP events answering ε(δ) and δ(ε) with certified upper bounds.

    Parameters
    ----------
    orders : array_like
        The order grid (default :data:`~privamp.rdp.curve.DEFAULT_ORDERS`).
    refine : bool
        Refine the optimal order around the grid optimum (default True; see the module
        docstring).

    >>> from privamp import GaussianMechanism
    >>> acc = RdpAccountant().compose(GaussianMechanism(sigma=5.0), 10)
    >>> round(acc.epsilon(1e-5), 3), len(acc.ledger)
    (2.814, 1)
    """

    def __init__(self, orders: Any = DEFAULT_ORDERS, *, refine: bool = True):
        self._orders = check_orders(orders)
        self._refine = bool(refine)
        self._events: list[RdpEvent] = []
        self._total = RdpCurve(self._orders, np.zeros(self._orders.shape))

    # -------------------------------------------------------------------------------------

    @property
    def orders(self) -> np.ndarray:
        return self._orders

    @property
    def ledger(self) -> tuple[RdpEvent, ...]:
        """What was composed, in order."""
        return tuple(self._events)

    @property
    def curve(self) -> RdpCurve:
        """The composed RDP curve on the accountant's grid."""
        return self._total

    def compose(self, event: Any, count: int = 1, *, label: str | None = None) -> RdpAccountant:
        """Add ``count`` runs of ``event`` (a curve, a mechanism, a profile or a callable
        ``orders -> RdpCurve``); returns the accountant, so calls chain.

        Raises :class:`~privamp.errors.UnsupportedCombinationError` for lower-bound curves and
        for events under a different neighbouring relation than those already composed.
        """
        k = check_int("count", count, "[0, inf)")
        curve = _evaluate(event, self._orders)
        total = self._total + curve * k  # checks relations
        self._total = total
        self._events.append(RdpEvent(event, k, curve, label if label is not None else
                                     curve.label))
        return self

    # -------------------------------------------------------------------------------------

    def _total_at(self, orders: np.ndarray) -> np.ndarray:
        total = np.zeros(orders.shape)
        for ev in self._events:
            if ev.count:
                total = total + (_evaluate(ev.source, orders) * ev.count).epsilons
        return total * (1 + 8 * np.finfo(float).eps) if total.size else total

    def _local_orders(self, best: float) -> tuple[np.ndarray, bool, bool]:
        """Fine orders around ``best`` between its grid neighbours (beyond an edge: toward 1
        below the first order, up to twice the last finite order above it)."""
        fo = self._orders[np.isfinite(self._orders)]
        j = int(np.searchsorted(fo, best))
        low_edge = j == 0
        high_edge = j == fo.size - 1
        lo = 1.0 + (fo[0] - 1.0) / 8.0 if low_edge else fo[j - 1]
        hi = 2.0 * fo[-1] if high_edge else fo[j + 1]
        cand = np.linspace(lo, hi, _REFINE_POINTS)
        cand = cand[(cand > 1.0) & ~np.isin(cand, fo)]
        return np.unique(cand), low_edge, high_edge

    def epsilon(self, delta: Any, *, return_order: bool = False):
        """Smallest certified ε with (ε, δ)-DP for the composition, vectorised over ``delta``.

        ``delta = 0`` gives the composed ε(∞) (``inf`` unless every event is pure DP). With
        ``return_order`` also returns the optimal order.
        """
        d = check_real_array("delta", delta, "[0, 1]")
        return _each(self._epsilon_one, d, return_order)

    def _epsilon_one(self, delta: float) -> tuple[float, float]:
        eps, order = self._total.epsilon(delta, return_order=True, warn=False)
        if not (self._refine and self._events and 0.0 < delta < 1.0 and math.isfinite(order)
                and eps > 0.0):
            if eps > 0.0:  # ε = 0 cannot improve: the order does not matter
                self._maybe_warn(order, False, False, None)
            return eps, order
        cand, low_edge, high_edge = self._local_orders(order)
        if cand.size:
            local = RdpCurve(cand, self._total_at(cand), relation=self._total.relation)
            e2, o2 = local.epsilon(delta, return_order=True, warn=False)
            if e2 < eps:
                eps, order = e2, o2
        self._maybe_warn(order, low_edge, high_edge, cand)
        return eps, order

    def delta(self, epsilon: Any, *, return_order: bool = False):
        """Smallest certified δ with (ε, δ)-DP for the composition, vectorised over
        ``epsilon``; with ``return_order`` also the optimal order."""
        e = check_real_array("epsilon", epsilon, "[0, inf]")
        return _each(self._delta_one, e, return_order)

    def _delta_one(self, eps: float) -> tuple[float, float]:
        delta, order = self._total.delta(eps, return_order=True)
        if not (self._refine and self._events and math.isfinite(order) and 0.0 < delta):
            return delta, order
        cand, _, _ = self._local_orders(order)
        if cand.size:
            local = RdpCurve(cand, self._total_at(cand), relation=self._total.relation)
            d2, o2 = local.delta(eps, return_order=True)
            if d2 < delta:
                delta, order = d2, o2
        return delta, order

    def _maybe_warn(self, order: float, low_edge: bool, high_edge: bool, cand) -> None:
        fo = self._orders[np.isfinite(self._orders)]
        if not math.isfinite(order) or fo.size < 2:
            return
        if cand is None:
            at_edge = order in (fo[0], fo[-1])
        else:
            searched_lo = cand[0] if (low_edge and cand.size) else fo[0]
            searched_hi = cand[-1] if (high_edge and cand.size) else fo[-1]
            at_edge = order <= searched_lo or order >= searched_hi
        if at_edge:
            warnings.warn(
                f"optimal RDP order {order:g} is at the edge of the orders searched; a wider "
                "grid may give a smaller epsilon", OrderGridWarning, stacklevel=3)

    def __repr__(self) -> str:
        return f"RdpAccountant({len(self._events)} events, {self._orders.size} orders)"


def _each(one, points: np.ndarray, return_order: bool):
    """``one(point) -> (value, order)`` at every point, shaped like ``points`` (floats for a
    scalar), with the orders when ``return_order``."""
    flat = points.reshape(-1)
    values = np.empty(flat.shape)
    orders = np.empty(flat.shape)
    for i, x in enumerate(flat):
        values[i], orders[i] = one(float(x))
    return shaped_result(values, orders, points.shape, return_order)


def poisson_gaussian_epsilon(noise_multiplier: float, sampling_rate: float, steps: int,
                             delta: float, orders: Any = DEFAULT_ORDERS) -> float:
    """Certified ε of ``steps`` runs of the Poisson-subsampled Gaussian mechanism (DP-SGD).

    The exact RDP (:func:`~privamp.rdp.subsampled.poisson_gaussian_rdp`, add/remove) composed
    ``steps`` times and converted at ``delta`` with order refinement. ``noise_multiplier`` is
    σ/Δ (the noise standard deviation relative to the sensitivity, e.g. the clipping norm).

    >>> round(poisson_gaussian_epsilon(1.0, 0.01, 1000, 1e-5), 4)  # landscape.md: 2.101
    2.1013
    """
    nm = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
    q = check_real("sampling_rate", sampling_rate, "[0, 1]")
    t = check_int("steps", steps, "[0, inf)")
    d = check_real("delta", delta, "[0, 1]")
    source: Callable[[np.ndarray], RdpCurve] = lambda o: poisson_gaussian_rdp(nm, q, o)  # noqa: E731
    acc = RdpAccountant(orders).compose(source, t, label="Poisson Gaussian")
    return float(acc.epsilon(d))
