"""Rényi-DP curves: ε(order) on a grid of orders, composition, and conversion to (ε, δ).

A mechanism is (order, ε)-RDP when ``sup_{x≃x'} D_order(M(x) ‖ M(x')) ≤ ε`` (Mironov 2017). An
:class:`RdpCurve` holds such bounds on a grid of orders (each > 1, possibly ``inf`` for the pure-DP
limit). Composition adds curves order by order (Wang's slides W-2). Conversion to (ε, δ)-DP uses

    ε(δ) = min_order  ε_RDP(order) + log((order − 1)/order) − (log δ + log order)/(order − 1)

(Canonne, Kamath, Steinke 2020, Proposition 12; equivalently Balle, Barthe, Gaboardi, Hsu, Sato
2020, Theorem 21), which is never larger than the classical ``ε_RDP + log(1/δ)/(order − 1)``
(Mironov 2017, Proposition 3) because ``(order−1) log(1 − 1/order) − log order ≤ 0``. The δ form is
``δ(ε) = min_order exp((order − 1)(ε_RDP − ε)) (1 − 1/order)^{order−1} / order``.

Between grid orders an upper-bound curve is interpolated safely: the cumulant generating function
``(order − 1) D_order`` of the true divergence is convex in the order and lies below the bounds at
the grid points, so it lies below their chord; below the first grid order the first value bounds
it (D_order is non-decreasing in the order). Extrapolation above the largest finite order is only
possible to ε(∞).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._numerics import round_up_log, up_ulps
from .._validation import check_int, check_real_array
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..relations import NeighbouringRelation

__all__ = ["DEFAULT_ORDERS", "OrderGridWarning", "RdpCurve"]

#: A default grid of 200 orders: fine near 1 (where small-ε conversions optimise), integers to 64,
#: then geometric to 1e4 — plus order ∞ (the pure-DP ε).
DEFAULT_ORDERS = np.unique(np.concatenate([
    np.linspace(1.01, 1.99, 50),
    np.arange(2.0, 64.5, 0.5),
    np.round(np.geomspace(65.0, 1e4, 25)),
    [np.inf],
]))


class OrderGridWarning(UserWarning):
    """The optimal order of an RDP → (ε, δ) conversion lies at the edge of the order grid: a
    wider grid could give a smaller ε."""


def _bound_kind(bound: str) -> str:
    if bound not in ("upper", "lower", "exact"):
        raise InvalidParameterError("bound", "one of 'upper', 'lower', 'exact'", bound)
    return bound


class RdpCurve:
    """Rényi-DP bounds ε(order) on a grid of orders.

    Parameters
    ----------
    orders : array_like
        Strictly increasing orders, each > 1; ``inf`` (the pure-DP limit) may be the last one.
    epsilons : array_like
        ε(order) ≥ 0 for each order (``inf`` allowed: no bound at that order).
    bound : {"upper", "lower", "exact"}
        What the values are. Only upper (or exact) curves can be converted to guarantees.
    relation : NeighbouringRelation or str, optional
        The relation the values hold for (``None`` if unspecified).
    label : str, optional
        A short description used in reports and plots.

    Examples
    --------
    The Gaussian mechanism with σ = 5 (ε(order) = order/50) at δ = 1e-5:

    >>> curve = RdpCurve(DEFAULT_ORDERS[:-1], DEFAULT_ORDERS[:-1] / 50)
    >>> round(curve.epsilon(1e-5), 4)  # the classical conversion gives 0.9797
    0.7943
    >>> round((curve * 10).epsilon(1e-5), 3)  # ten compositions
    2.814
    """

    __slots__ = ("_eps", "_orders", "bound", "label", "relation")

    def __init__(self, orders: Any, epsilons: Any, *, bound: str = "upper",
                 relation: NeighbouringRelation | str | None = None, label: str | None = None):
        o = check_real_array("orders", orders, "(1, inf]", ndim=1)
        e = check_real_array("epsilons", epsilons, "[0, inf]", ndim=1)
        if o.size != e.size:
            raise InvalidParameterError(
                "epsilons", f"an array of the same length as orders ({o.size})", e.size)
        if np.any(np.diff(o) <= 0):
            raise InvalidParameterError("orders", "strictly increasing", o)
        self._orders = o.copy()
        self._eps = e.copy()
        self._orders.setflags(write=False)
        self._eps.setflags(write=False)
        self.bound = _bound_kind(bound)
        self.relation = None if relation is None else NeighbouringRelation.parse(relation)
        self.label = label

    # -------------------------------------------------------------------------------------
    # basic access
    # -------------------------------------------------------------------------------------

    @property
    def orders(self) -> np.ndarray:
        return self._orders

    @property
    def epsilons(self) -> np.ndarray:
        return self._eps

    @property
    def pure_epsilon(self) -> float:
        """ε at order ∞ if the grid has it, else ``inf``."""
        return float(self._eps[-1]) if math.isinf(self._orders[-1]) else math.inf

    def __len__(self) -> int:
        return self._orders.size

    def __repr__(self) -> str:
        name = f"{self.label}, " if self.label else ""
        return (f"RdpCurve({name}{self._orders.size} orders in [{self._orders[0]:g}, "
                f"{self._orders[-1]:g}], bound={self.bound!r})")

    # -------------------------------------------------------------------------------------
    # composition
    # -------------------------------------------------------------------------------------

    def _check_compatible(self, other: RdpCurve) -> None:
        if not isinstance(other, RdpCurve):
            raise InvalidParameterError("other", "an RdpCurve", other)
        if other._orders.shape != self._orders.shape or np.any(other._orders != self._orders):
            raise UnsupportedCombinationError(
                "RDP curves on different order grids cannot be added; evaluate one on the "
                "other's orders with .at(orders) first")
        if self.relation is not None and other.relation is not None and \
                self.relation is not other.relation:
            raise UnsupportedCombinationError(
                f"cannot compose a curve for {self.relation.value!r} with one for "
                f"{other.relation.value!r}")

    def __add__(self, other: RdpCurve) -> RdpCurve:
        """Composition: ε(order) adds (Mironov 2017, Proposition 1)."""
        self._check_compatible(other)
        kind = "upper" if "upper" in (self.bound, other.bound) else self.bound
        if {self.bound, other.bound} == {"upper", "lower"}:
            raise UnsupportedCombinationError("cannot add an upper-bound curve to a lower-bound "
                                              "curve")
        eps = self._eps + other._eps
        if kind != "lower":
            eps = _round_up(eps)
        return RdpCurve(self._orders, eps, bound=kind,
                        relation=self.relation or other.relation, label=None)

    def __mul__(self, count: int) -> RdpCurve:
        """``count``-fold self-composition (ε(order) multiplied by count)."""
        k = check_int("count", count, "[0, inf)")
        eps = self._eps * k
        if self.bound != "lower":
            eps = _round_up(eps)
        label = f"{self.label} x{k}" if self.label else None
        return RdpCurve(self._orders, eps, bound=self.bound, relation=self.relation, label=label)

    __rmul__ = __mul__

    @classmethod
    def compose(cls, curves: Sequence[RdpCurve]) -> RdpCurve:
        """Sum of several curves on the same grid (heterogeneous composition)."""
        if len(curves) == 0:
            raise InvalidParameterError("curves", "a non-empty sequence of RdpCurve", curves)
        total = curves[0]
        for c in curves[1:]:
            total = total + c
        return total

    # -------------------------------------------------------------------------------------
    # evaluation at other orders
    # -------------------------------------------------------------------------------------

    def at(self, orders: Any) -> RdpCurve:
        """The curve on another grid of orders, interpolated safely (upper/exact curves only).

        Between grid orders: the chord of (order − 1)·ε (CGF convexity); below the first order:
        the first value; above the last finite order: ε(∞) if known, else ``inf``.
        """
        if self.bound == "lower":
            raise UnsupportedCombinationError("a lower-bound curve cannot be interpolated safely")
        new = check_real_array("orders", orders, "(1, inf]", ndim=1)
        return RdpCurve(new, self._interpolate(new), bound="upper", relation=self.relation,
                        label=self.label)

    def _interpolate(self, new: np.ndarray) -> np.ndarray:
        o, e = self._orders, self._eps
        finite = np.isfinite(o)
        fo, fe = o[finite], e[finite]
        out = np.full(new.shape, np.inf)
        if fo.size:
            cgf = (fo - 1.0) * fe
            idx = np.searchsorted(fo, new, side="left")
            exact = (idx < fo.size) & (fo[np.minimum(idx, fo.size - 1)] == new)
            out[exact] = fe[idx[exact]]
            below = (idx == 0) & ~exact
            out[below] = fe[0]
            inside = (idx > 0) & (idx < fo.size) & ~exact
            if np.any(inside):
                i = idx[inside]
                a0, a1 = fo[i - 1], fo[i]
                w = (new[inside] - a0) / (a1 - a0)
                with np.errstate(invalid="ignore"):
                    chord = (1.0 - w) * cgf[i - 1] + w * cgf[i]
                    val = chord / (new[inside] - 1.0)
                # never above the next grid value (monotonicity), never NaN from inf·0
                val = np.where(np.isnan(val), np.inf, val)
                out[inside] = np.minimum(_round_up(val), fe[i])
        pure = self.pure_epsilon
        out = np.where(np.isinf(new), pure, out)
        above = np.isfinite(new) & (new > (fo[-1] if fo.size else 1.0))
        out[above] = pure
        return out

    # -------------------------------------------------------------------------------------
    # conversion to (ε, δ)
    # -------------------------------------------------------------------------------------

    def _require_upper(self) -> None:
        if self.bound == "lower":
            raise UnsupportedCombinationError(
                "a lower-bound RDP curve does not give an (ε, δ) guarantee")

    def _finite_points(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """The orders and ε of the curve's finite points, and whether one ε is exactly 0
        (D_order(P‖Q) = 0 at one order > 1 ⇒ P = Q)."""
        o, e = self._orders, self._eps
        finite = np.isfinite(o) & np.isfinite(e)
        fo, fe = o[finite], e[finite]
        return fo, fe, bool(np.any(fe == 0.0))

    def epsilon(self, delta: Any, *, return_order: bool = False, warn: bool = True):
        """Smallest ε (over the grid) with (ε, δ)-DP implied by the curve, rounded up.

        ``delta = 0`` gives ε(∞) (``inf`` if unknown). With ``return_order`` also returns the
        optimal order. Warns (:class:`OrderGridWarning`) when the optimum is at the grid edge.
        """
        self._require_upper()
        d = check_real_array("delta", delta, "[0, 1]")
        flat = d.reshape(-1)
        eps_out, order_out = np.empty(flat.shape), np.empty(flat.shape)
        fo, fe, identical = self._finite_points()
        for i, dv in enumerate(flat):
            if identical:
                eps_out[i], order_out[i] = 0.0, fo[int(np.argmax(fe == 0.0))]
                continue
            if dv == 0.0 or fo.size == 0:
                eps_out[i] = self.pure_epsilon if dv == 0.0 else math.inf
                order_out[i] = math.inf
                continue
            if dv >= 1.0:
                eps_out[i], order_out[i] = 0.0, fo[0]
                continue
            cand = fe + np.log1p(-1.0 / fo) - (math.log(dv) + np.log(fo)) / (fo - 1.0)
            j = int(np.argmin(cand))
            best = max(float(cand[j]), 0.0)
            if math.isfinite(self.pure_epsilon) and self.pure_epsilon < best:
                best, order_out[i] = self.pure_epsilon, math.inf
            else:
                order_out[i] = fo[j]
                if warn and fo.size > 1 and j in (0, fo.size - 1):
                    warnings.warn(
                        f"optimal RDP order {fo[j]:g} is at the edge of the order grid "
                        f"[{fo[0]:g}, {fo[-1]:g}]; a wider grid may give a smaller ε",
                        OrderGridWarning, stacklevel=2)
            eps_out[i] = _round_up(best) if best > 0 else 0.0
        return shaped_result(eps_out, order_out, d.shape, return_order)

    def delta(self, eps: Any, *, return_order: bool = False):
        """Smallest δ (over the grid) with (ε, δ)-DP implied by the curve, rounded up."""
        self._require_upper()
        arr = check_real_array("eps", eps, "[0, inf]")
        flat = arr.reshape(-1)
        out, order_out = np.empty(flat.shape), np.empty(flat.shape)
        fo, fe, identical = self._finite_points()  # identical: P = Q, δ = 0 for every ε ≥ 0
        for i, ev in enumerate(flat):
            if identical or (math.isfinite(self.pure_epsilon) and ev >= self.pure_epsilon):
                out[i], order_out[i] = 0.0, math.inf
                continue
            if fo.size == 0 or math.isinf(ev):
                out[i], order_out[i] = (1.0 if fo.size == 0 else 0.0), math.inf
                continue
            with np.errstate(over="ignore"):  # a huge ε or ε_RDP: log δ = ∓inf, fine here
                log_d = (fo - 1.0) * (fe - ev) + (fo - 1.0) * np.log1p(-1.0 / fo) - np.log(fo)
            j = int(np.argmin(log_d))
            # δ ≤ 1 always: log δ > 0 (a bound above 1) is δ = 1, without overflowing exp
            out[i] = min(1.0, math.exp(min(0.0, float(round_up_log(log_d[j], ulps=16)))))
            order_out[i] = fo[j]
        return shaped_result(out, order_out, arr.shape, return_order)


def shaped_result(values: np.ndarray, orders: np.ndarray, shape, return_order: bool):
    """Values (and, with ``return_order``, their optimal orders) computed over a flattened
    argument, in the argument's ``shape``: floats for a scalar argument."""
    v = values.reshape(shape)
    val = float(v) if v.ndim == 0 else v
    if return_order:
        o = orders.reshape(shape)
        return val, (float(o) if o.ndim == 0 else o)
    return val


def _round_up(values):
    """Raise ε values by a few ulp of their magnitude (sums and products of rounded values)."""
    v = np.asarray(values, dtype=float)
    out = up_ulps(v, 8)
    return out[()] if out.ndim == 0 else out
