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

Pruned search. ``epsilon`` does not evaluate every grid and refinement order: it evaluates
every eighth, then only inside the gaps where the conversion could still be below the best
value found, by a certified floor from the lower bounds of exact curves (the Rényi divergence
is non-decreasing in the order and its CGF convex; a plain curve's lower bound is 0). The
skipped orders are provably worse, so the answer is the minimum over all of them, as if each
were evaluated (the costly orders are the fractional ones of the exact Poisson-subsampled
Gaussian, and the large ones).

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
from typing import Any

import numpy as np

from .._numerics import down_ulps
from .._validation import check_int, check_real, check_real_array
from ..errors import InvalidParameterError, UnsupportedCombinationError
from .curve import DEFAULT_ORDERS, OrderGridWarning, RdpCurve, _round_up, shaped_result
from .mechanisms import ExactRdpCurve, check_orders, rdp_curve
from .subsampled import poisson_gaussian_rdp

__all__ = ["RdpAccountant", "RdpEvent", "poisson_gaussian_epsilon"]

_REFINE_POINTS = 33


class RdpEvent:
    """One ledger line: ``source`` composed ``count`` times.

    ``curve`` is the source's curve on the accountant's grid, evaluated when first read (the
    accountant itself only evaluates the orders a query needs, see :class:`RdpAccountant`).
    """

    __slots__ = ("_curve", "_grid", "count", "label", "source")

    def __init__(self, source: Any, count: int, label: str | None, grid: np.ndarray):
        self.source, self.count, self.label, self._grid = source, count, label, grid
        self._curve: RdpCurve | None = None

    @property
    def curve(self) -> RdpCurve:
        if self._curve is None:
            self._curve = _evaluate(self.source, self._grid)
        return self._curve

    def __repr__(self) -> str:
        return f"RdpEvent(source={self.source!r}, count={self.count}, label={self.label!r})"


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


def _lower_values(curve: RdpCurve) -> np.ndarray:
    """Certified lower bounds on the true RDP at the curve's orders: an exact curve's lower
    values, else 0 (always valid)."""
    if isinstance(curve, ExactRdpCurve):
        return np.nan_to_num(curve.lower_epsilons, nan=0.0)
    return np.zeros(curve.orders.shape)


class _Values:
    """A source's (upper, lower) values per order, evaluated on demand and remembered."""

    __slots__ = ("_known", "event")

    def __init__(self, event: RdpEvent):
        self.event = event
        self._known: dict[float, tuple[float, float]] = {}

    def at(self, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        missing = np.array([o for o in orders.tolist() if o not in self._known])
        if missing.size:
            curve = _evaluate(self.event.source, missing)
            for o, u, v in zip(missing.tolist(), curve.epsilons.tolist(),
                               _lower_values(curve).tolist(), strict=True):
                self._known[o] = (u, v)
        pairs = [self._known[o] for o in orders.tolist()]
        return (np.array([u for u, _ in pairs], dtype=float),
                np.array([v for _, v in pairs], dtype=float))


def _times(lower: np.ndarray, count: int) -> np.ndarray:
    """``count`` × lower bounds, 0 for a count of 0 (never ∞·0)."""
    if not count:
        return np.zeros(lower.shape)
    with np.errstate(over="ignore"):  # a huge lower bound times a count: ∞, still a bound
        return lower * count


def _scaled(upper: np.ndarray, count: int) -> np.ndarray:
    """``count`` × upper values raised by 8 ulp, as ``RdpCurve * count`` (0 for a count of 0)."""
    if not count:
        return np.zeros(upper.shape)
    return _round_up(upper * count)


def _conversion(eps: np.ndarray, orders: np.ndarray, log_delta: float) -> np.ndarray:
    """The conversion of :meth:`RdpCurve.epsilon` at each (finite) order."""
    with np.errstate(invalid="ignore", over="ignore"):
        return eps + np.log1p(-1.0 / orders) - (log_delta + np.log(orders)) / (orders - 1.0)


def _linear_floor(p: float, s: float, a: float, b: float, log_delta: float) -> float:
    """A lower bound on the conversion at every order α in [a, b] (1 < a < b < ∞) when the
    composed CGF K(α) = (α − 1)·ε_RDP(α) ≥ p + s·(α − 1) there.

    The conversion is K(α)/(α − 1) + L/(α − 1) + g(α) with L = −log δ and
    g(α) = log1p(−1/α) − log α/(α − 1), so it is ≥ φ(α) = s + c/(α − 1) + g(α), c = p + L.
    Two bounds on min φ, the larger is returned:

    * term by term: c/(α − 1) is monotone (its minimum is at a or b) and g increases (both of
      its parts do), so φ ≥ s + min(c/(a − 1), c/(b − 1)) + g(a);
    * by curvature: φ is at least its chord minus (b − a)²/8 · max|φ''| (the error of linear
      interpolation), so min φ ≥ min(φ(a), φ(b)) − (b − a)²/8 · M with, for u = α − 1 ≥ a − 1
      and g = log u − log α − log α/u, M = 2|c|/u³ + 1/u² + 1/a² + 1/(a²u) + 2/(a u²)
      + 2 log b/u³ at u = a − 1 (|(c/u)''| = 2|c|/u³, |(log u)''| = 1/u², |(log α)''| = 1/α²,
      (log α/u)'' = −1/(α²u) − 2/(αu²) + 2 log α/u³). Its slack is second order in b − a,
      so gaps near a flat optimum can be skipped too.
    """
    if not (math.isfinite(p) and math.isfinite(s)):
        return -math.inf
    c = p - log_delta

    def phi(x: float) -> float:
        return s + c / (x - 1.0) + math.log1p(-1.0 / x) - math.log(x) / (x - 1.0)

    by_terms = s + min(c / (a - 1.0), c / (b - 1.0)) + math.log1p(-1.0 / a) \
        - math.log(a) / (a - 1.0)
    u = a - 1.0
    curvature = (2.0 * abs(c) / u**3 + 1.0 / u**2 + 1.0 / a**2 + 1.0 / (a * a * u)
                 + 2.0 / (a * u * u) + 2.0 * math.log(b) / u**3)
    by_curvature = min(phi(a), phi(b)) - (b - a) ** 2 / 8.0 * curvature
    return max(by_terms, by_curvature)


def _gap_floor(a: float, lo_a: float, left, b: float, right, log_delta: float) -> float:
    """A lower bound on the conversion at every order in [a, b], 1 < a < b < ∞.

    ``lo_a`` is a certified lower bound on the true composed RDP at a; ``left`` is
    ``(a', up(a'))`` for an order a' < a with an upper bound on the composed RDP there (or
    None), ``right`` is ``(lo(b), b', up(b'))`` for b' > b (or None).

    The composed CGF K(α) = (α − 1)·ε_RDP(α) of the true divergence is convex with K(1) = 0
    (van Erven & Harremoës 2014, Corollary 2: (α − 1)D_α is convex in α), so on [a, b] it
    lies above the extension of each of its chords outside [a, b]: the chord from a' to a
    (from 1, where K = 0, without ``left``) and the chord from b to b'. Each is bounded below
    with K's lower bound at a (or b) and its upper bound at a' (or b'), giving a line
    p + s(α − 1) under K for :func:`_linear_floor`. With a' = 1 this is the bound of the
    monotonicity of D_α in α (ε_RDP(α) ≥ ε_RDP(a)).
    """
    k_lo_a = (a - 1.0) * lo_a
    if left is not None and math.isfinite(left[1]):
        a1, up_a1 = left
        s = (k_lo_a - (a1 - 1.0) * up_a1) / (a - a1)
    else:
        s = lo_a
    floor = _linear_floor(k_lo_a - s * (a - 1.0), s, a, b, log_delta)
    if right is not None and math.isfinite(right[2]):
        lo_b, b1, up_b1 = right
        k_lo_b = (b - 1.0) * lo_b
        s = ((b1 - 1.0) * up_b1 - k_lo_b) / (b1 - b)
        floor = max(floor, _linear_floor(k_lo_b - s * (b - 1.0), s, a, b, log_delta))
    return floor


#: first stride of the pruned search over a sorted list of orders
_STRIDE = 8
#: first stride over the refinement orders: they lie between two grid neighbours of the
#: optimum, where few gaps can be pruned, so a finer first pass saves a round of evaluations
#: (each round is a call of every source; for the exact Poisson-subsampled Gaussian the call's
#: overhead, not the number of orders, dominates)
_REFINE_STRIDE = 4
#: a gap left after pruning is split at _SPLIT - 1 points, or evaluated whole below _ALL_BELOW
_SPLIT = 2
_ALL_BELOW = 5


def _pruned_search(orders: np.ndarray, delta: float, values, stride: int = _STRIDE) -> np.ndarray:
    """Indices into ``orders`` (finite, increasing) that contain every order where the
    conversion at ``delta`` can attain its minimum over ``orders``.

    ``values(idx) -> (upper, lower)`` gives the composed curve's upper values (the ones the
    conversion uses) and certified lower bounds on the true composed RDP at ``orders[idx]``.
    Every ``stride``-th order is evaluated first; a gap between two evaluated orders (or
    after the last evaluated one) is skipped when :func:`_gap_floor` exceeds the best value
    found (by a relative margin of 1e-9, far above the rounding of these formulas), otherwise
    its middle (or, in a gap of at most three, all of it) is evaluated, until no gap is left.
    Skipping only ever leaves out orders whose value is provably larger than the minimum, so the
    minimum over the returned orders is the minimum over all of them.
    """
    n = orders.size
    if n <= 2 * stride:
        return np.arange(n)
    log_delta = math.log(delta)
    known = np.arange(0, n, stride)
    up, lo = values(known)
    while True:
        at = orders[known]
        conv = _conversion(up, at, log_delta)
        finite = conv[np.isfinite(conv)]
        best = float(finite.min()) if finite.size else math.inf
        margin = 1e-9 * (1.0 + abs(best))
        new: list[int] = []
        for k in range(known.size):
            # the orders after known[k]: up to the next evaluated one, or to the last order
            i = int(known[k])
            last = k + 1 == known.size
            j = n if last else int(known[k + 1])
            if j - i <= 1:
                continue
            left = (float(at[k - 1]), float(up[k - 1])) if k >= 1 else None
            right = (float(lo[k + 1]), float(at[k + 2]), float(up[k + 2])) \
                if k + 2 < known.size else None
            b = float(orders[n - 1]) if last else float(at[k + 1])
            if _gap_floor(float(at[k]), float(lo[k]), left, b, right, log_delta) \
                    > best + margin:
                continue
            new.extend(range(i + 1, j) if j - i <= _ALL_BELOW else
                       sorted({i + (j - i) * t // _SPLIT for t in range(1, _SPLIT)}))
        if not new:
            return known
        new_idx = np.array(new)
        u2, l2 = values(new_idx)
        order = np.argsort(np.concatenate([known, new_idx]), kind="stable")
        known = np.concatenate([known, new_idx])[order]
        up = np.concatenate([up, u2])[order]
        lo = np.concatenate([lo, l2])[order]


class RdpAccountant:
    """Ledger of RDP events answering ε(δ) and δ(ε) with certified upper bounds.

    Parameters
    ----------
    orders : array_like
        The order grid (default :data:`~privamp.rdp.curve.DEFAULT_ORDERS`).
    refine : bool
        Refine the optimal order around the grid optimum (default True; see the module
        docstring).

    Notes
    -----
    ``epsilon`` evaluates the sources only at the orders it needs: a pruned search
    (:func:`_pruned_search`) over the grid and over the refinement orders skips orders whose
    value is provably above the minimum, so the answer is the minimum over every grid and
    refinement order, as if all were evaluated. ``curve``, ``delta`` and the ledger's curves
    use the whole grid (evaluated when first needed).

    >>> from privamp import GaussianMechanism
    >>> acc = RdpAccountant().compose(GaussianMechanism(sigma=5.0), 10)
    >>> round(acc.epsilon(1e-5), 3), len(acc.ledger)
    (2.814, 1)
    """

    def __init__(self, orders: Any = DEFAULT_ORDERS, *, refine: bool = True):
        self._orders = check_orders(orders)
        self._refine = bool(refine)
        self._events: list[RdpEvent] = []
        self._values: list[_Values] = []
        self._relation = None
        self._total: RdpCurve | None = RdpCurve(self._orders, np.zeros(self._orders.shape))
        finite = np.isfinite(self._orders)
        self._finite = self._orders[finite]
        # checked at compose: every _STRIDE-th finite order (those the search evaluates
        # first), and ∞
        probe = np.arange(0, self._finite.size, _STRIDE)
        self._probe = np.append(self._finite[probe], self._orders[~finite])

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
        if self._total is None:
            total = RdpCurve(self._orders, np.zeros(self._orders.shape))
            for ev in self._events:
                total = total + ev.curve * ev.count
            self._total = total
        return self._total

    def compose(self, event: Any, count: int = 1, *, label: str | None = None) -> RdpAccountant:
        """Add ``count`` runs of ``event`` (a curve, a mechanism, a profile or a callable
        ``orders -> RdpCurve``); returns the accountant, so calls chain.

        Raises :class:`~privamp.errors.UnsupportedCombinationError` for lower-bound curves and
        for events under a different neighbouring relation than those already composed.
        """
        k = check_int("count", count, "[0, inf)")
        ev = RdpEvent(event, k, label, self._orders)
        values = _Values(ev)
        # the source is evaluated (and checked) at the orders every query starts with
        probe = _evaluate(event, self._probe)
        here = RdpCurve(self._probe, np.zeros(self._probe.shape), relation=self._relation)
        self._relation = (here + probe * k).relation  # checks relations (and the count)
        for o, u, v in zip(self._probe.tolist(), probe.epsilons.tolist(),
                           _lower_values(probe).tolist(), strict=True):
            values._known[o] = (u, v)
        if label is None:
            ev.label = probe.label
        self._events.append(ev)
        self._values.append(values)
        self._total = None
        return self

    # -------------------------------------------------------------------------------------

    def _composed(self, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The composed curve's upper values at ``orders``, exactly as :attr:`curve` has them
        (each event's curve times its count, summed, each step rounded up), and a lower bound
        on the true composed RDP there."""
        # the arithmetic of RdpCurve's * and + (each result raised by 8 ulp), without building
        # curves: bit for bit the values of the composed curve on the whole grid
        total = np.zeros(orders.shape)
        lower = np.zeros(orders.shape)
        for ev, values in zip(self._events, self._values, strict=True):
            up, lo = values.at(orders)
            total = _round_up(total + _scaled(up, ev.count))
            with np.errstate(over="ignore"):  # huge lower bounds summed: ∞, as in _times
                lower = lower + _times(lo, ev.count)
        return total, down_ulps(lower, 8)

    def _total_at(self, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Upper values of the composition at refinement orders (summed, then raised by 8 ulp)
        and lower bounds on the true composed RDP there."""
        total = np.zeros(orders.shape)
        lower = np.zeros(orders.shape)
        for ev, values in zip(self._events, self._values, strict=True):
            if ev.count:
                up, lo = values.at(orders)
                total = total + _scaled(up, ev.count)
                with np.errstate(over="ignore"):
                    lower = lower + _times(lo, ev.count)
        up = total * (1 + 8 * np.finfo(float).eps) if total.size else total
        return up, down_ulps(lower, 8)

    def _local_orders(self, best: float) -> tuple[np.ndarray, bool, bool]:
        """Fine orders around ``best`` between its grid neighbours (beyond an edge: toward 1
        below the first order, up to twice the last finite order above it)."""
        fo = self._finite
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

    def _grid_curve(self, delta: float) -> RdpCurve:
        """The composed curve on the grid orders where the conversion at ``delta`` can attain
        its minimum over the grid (all of them outside 0 < δ < 1), and ∞ if on the grid."""
        if not (self._events and 0.0 < delta < 1.0 and self._finite.size):
            return self.curve
        fo = self._finite
        idx = _pruned_search(fo, delta, lambda i: self._composed(fo[i]))
        orders = fo[idx]
        if math.isinf(self._orders[-1]):
            orders = np.append(orders, math.inf)
        return RdpCurve(orders, self._composed(orders)[0], relation=self._relation)

    def _epsilon_one(self, delta: float) -> tuple[float, float]:
        eps, order = self._grid_curve(delta).epsilon(delta, return_order=True, warn=False)
        if not (self._refine and self._events and 0.0 < delta < 1.0 and math.isfinite(order)
                and eps > 0.0):
            if eps > 0.0:  # ε = 0 cannot improve: the order does not matter
                self._maybe_warn(order, False, False, None)
            return eps, order
        cand, low_edge, high_edge = self._local_orders(order)
        if cand.size:
            idx = _pruned_search(cand, delta, lambda i: self._total_at(cand[i]),
                                 _REFINE_STRIDE)
            local = RdpCurve(cand[idx], self._total_at(cand[idx])[0], relation=self._relation)
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
        delta, order = self.curve.delta(eps, return_order=True)
        if not (self._refine and self._events and math.isfinite(order) and 0.0 < delta):
            return delta, order
        cand, _, _ = self._local_orders(order)
        if cand.size:
            local = RdpCurve(cand, self._total_at(cand)[0], relation=self._relation)
            d2, o2 = local.delta(eps, return_order=True)
            if d2 < delta:
                delta, order = d2, o2
        return delta, order

    def _maybe_warn(self, order: float, low_edge: bool, high_edge: bool, cand) -> None:
        fo = self._finite
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
