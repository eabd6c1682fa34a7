"""A ledger's Rényi-DP curve and its zero-concentrated-DP ρ, certified (issue 20, item 5a).

:func:`ledger_rdp_curve` sums, order by order, the RDP upper bounds of a ledger's events (each
event's curve from the RDP rule table :data:`~privamp.rdp.sources.RDP_RULES`, times its count:
Mironov 2017, Proposition 1) — for a ledger of any backend; an event without an RDP bound is
refused by name.

:func:`ledger_zcdp` finds ρ with ``D_α ≤ ρ α`` for **every** order α > 1 (ρ-zCDP, Bun &
Steinke 2016, Definition 1.1), certified over the continuum of orders, not just a grid: with
grid orders a_1 < … < a_n and upper values D_i of the composed curve,

* on (1, a_1]: D_α ≤ D_1 (D_α is non-decreasing in α; van Erven & Harremoës 2014, Theorem 3),
  so D_α/α ≤ D_1;
* on [a_i, a_{i+1}]: D_α/α ≤ D_{i+1}/a_i (the same monotonicity, and α ≥ a_i);
* on [a_n, ∞) (and, as a cap, at every order): an analytic bound, summed over the events
  (zCDP composes additively, Bun & Steinke 2016, Lemma 2.3): a Gaussian mechanism with
  θ = Δ/σ is θ²/2-zCDP (Bun & Steinke 2016, Proposition 1.6), and Poisson subsampling or
  sampling without replacement never raises a Rényi divergence (each is a mixture of pairs
  of neighbouring or identical inputs, and e^{(α−1)D_α} is jointly convex); an event whose
  curve has a finite ε(∞) (pure DP, e.g. Laplace or randomized response, subsampled or not)
  is ε(∞)²/2-zCDP (Bun & Steinke 2016, Proposition 1.4); and the composed ε(∞) gives
  D_α/α ≤ ε(∞)/a_n there. The smallest of these caps is used. An event with none of them
  (no Gaussian, no pure DP) makes ρ = ∞, with the reason (its RDP is not known to grow at
  most linearly in the order).

ρ is the largest of these pieces (each rounded up), or the events' summed cap if smaller (it
holds at every order); the grid is refined (denser orders in the
intervals that can bind, six times) so that the interval bound approaches max D_α/α. The result
names the piece that bounded it; ``grid_rho = max_i D_i / a_i`` is what the grid values alone
would claim (not certified between orders) — the difference is the price of certification.

>>> from privamp import Accountant, GaussianMechanism, Poisson
>>> acc = Accountant("rdp").add(GaussianMechanism(2.0), 10, scheme=Poisson(0.1))
>>> z = acc.zcdp_rho()
>>> round(z.rho, 9)  # 10·θ²/2 with θ = 1/2: subsampling does not amplify zCDP (W-11)
1.25
>>> z.bounded_by.startswith("cap")
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import up_ulps
from ..errors import InvalidParameterError, PrivampError, UnsupportedCombinationError
from ..mechanisms.gaussian import GaussianMechanism, GaussianProfile
from ..sampling.schemes import Poisson, WithoutReplacement
from .curve import DEFAULT_ORDERS, RdpCurve
from .mechanisms import check_orders

__all__ = ["ZcdpBound", "ledger_rdp_curve", "ledger_zcdp"]


@dataclass(frozen=True)
class ZcdpBound:
    """ρ-zCDP of a ledger: ``D_α ≤ rho·α`` for every order α > 1 (certified).

    Attributes
    ----------
    rho : float
        The certified ρ (``inf`` when no bound exists; ``reason`` says why).
    bounded_by : str
        The piece that gave ρ: ``"head (1, a]"``, ``"orders [a, b]"`` or ``"tail [a, inf): …"``.
    order : float
        The grid order where the binding piece starts (∞ for none).
    grid_rho : float
        ``max_i D(a_i)/a_i`` over the grid orders alone (not a guarantee).
    tail_cap : float
        The cap used beyond the largest grid order (ρ-units).
    reason : str
        Why ρ is ``inf``, else ``""``.
    """

    rho: float
    bounded_by: str
    order: float
    grid_rho: float
    tail_cap: float
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"rho": self.rho, "bounded_by": self.bounded_by, "order": self.order,
                "grid_rho": self.grid_rho, "tail_cap": self.tail_cap, "reason": self.reason}


def _name(ev) -> str:
    text = f"{ev.count} x {ev.mechanism!r}"
    if ev.scheme is not None:
        text += f" on {ev.scheme!r}"
    if ev.label:
        text += f" (label {ev.label!r})"
    return text


def _check_event(ev) -> None:
    from .sources import check_source

    if getattr(ev.scheme, "pld_only", False):
        raise UnsupportedCombinationError(
            f"no RDP bound for the ledger event {_name(ev)}: {ev.scheme!r} ties its steps "
            "together and is accounted by the 'pld' backend only")
    try:
        check_source(ev.mechanism, ev.scheme, ev.effective_relation, ev.group_privacy)
    except PrivampError as exc:  # e.g. Poisson under substitution needs n (Theorem 14)
        raise UnsupportedCombinationError(
            f"no RDP bound for the ledger event {_name(ev)}: {exc}") from None


def _event_curve(ev, orders: np.ndarray) -> RdpCurve:
    """The event's RDP upper bound (one run) on ``orders``, from the rule table."""
    from .sources import rdp_source

    source = rdp_source(ev.mechanism, ev.scheme, ev.effective_relation, ev.group_privacy,
                        orders)
    curve = source(orders) if callable(source) and not isinstance(source, RdpCurve) else source
    if not np.array_equal(curve.orders, orders):
        curve = curve.at(orders)
    if curve.bound == "lower":
        raise UnsupportedCombinationError(f"the RDP rule for {_name(ev)} gave a lower bound")
    return curve


def ledger_rdp_curve(events, orders: Any = None) -> RdpCurve:
    """The composed RDP upper bound of ``events`` (ledger lines with ``count``) on ``orders``.

    Parameters
    ----------
    events : sequence of privamp.accountant.Event
        The ledger's lines (:attr:`Accountant.segments`).
    orders : array_like, optional
        Strictly increasing orders in (1, ∞] (default :data:`DEFAULT_ORDERS`).

    Raises
    ------
    UnsupportedCombinationError
        An event has no RDP bound (named), or the events hold for different relations.
    """
    o = check_orders(DEFAULT_ORDERS if orders is None else orders)
    if not events:
        raise InvalidParameterError("events", "at least one composed event (use .add)", "[]")
    for ev in events:
        _check_event(ev)
    total = RdpCurve(o, np.zeros(o.shape))
    for ev in events:
        total = total + _event_curve(ev, o) * ev.count
    label = f"ledger of {sum(ev.count for ev in events)} steps in {len(events)} line" + \
        ("s" if len(events) != 1 else "")
    return RdpCurve(o, total.epsilons, bound="upper", relation=total.relation, label=label)


def _gaussian_cap(ev) -> float | None:
    """θ²/2 (rounded up) for a Gaussian event without sampling, on Poisson under add/remove or
    WOR under substitution, without explicit group privacy; else None."""
    mech = ev.mechanism
    if not isinstance(mech, GaussianMechanism | GaussianProfile) or ev.group_privacy is not None:
        return None
    if ev.scheme is not None and not isinstance(ev.scheme, Poisson | WithoutReplacement):
        return None
    rel = getattr(mech, "relation", None)
    if rel is not None and rel is not ev.effective_relation:
        return None
    theta = float(mech.theta)
    return up_ulps(theta * theta / 2.0, 4)


def ledger_zcdp(events, orders: Any = None, *, refinements: int = 6) -> ZcdpBound:
    """The certified ρ-zCDP of a ledger (see the module docstring).

    Parameters
    ----------
    events : sequence of privamp.accountant.Event
    orders : array_like, optional
        Starting grid of finite orders > 1 (default: :data:`DEFAULT_ORDERS` and 1.001).
    refinements : int
        How many times the binding intervals are refined (default 6).
    """
    if orders is None:
        grid = np.unique(np.append(DEFAULT_ORDERS[np.isfinite(DEFAULT_ORDERS)], 1.001))
    else:
        grid = check_orders(orders)
        grid = grid[np.isfinite(grid)]
        if grid.size == 0:
            raise InvalidParameterError("orders", "at least one finite order", orders)
    if not events:
        raise InvalidParameterError("events", "at least one composed event (use .add)", "[]")
    for ev in events:
        _check_event(ev)
    # tail caps per event, and ε(∞) of each event
    inf_vals = [float(_event_curve(ev, np.array([math.inf])).epsilons[0]) for ev in events]
    tail = 0.0
    reasons = []
    for ev, e_inf in zip(events, inf_vals, strict=True):
        caps = []
        g = _gaussian_cap(ev)
        if g is not None:
            caps.append(g)
        if math.isfinite(e_inf):
            caps.append(up_ulps(e_inf * e_inf / 2.0, 4))
        if not caps:
            reasons.append(f"{_name(ev)} has neither a Gaussian zCDP bound nor pure DP")
            continue
        tail = up_ulps(tail + ev.count * min(caps), 4)
    pure_total = math.fsum(ev.count * e for ev, e in zip(events, inf_vals, strict=True))
    pure_total = up_ulps(pure_total, 8) if math.isfinite(pure_total) else math.inf
    values: dict[float, float] = {}

    def evaluate(new: np.ndarray) -> None:
        new = np.unique(np.array([a for a in new if a not in values]))
        if new.size == 0:
            return
        total = np.zeros(new.shape)
        for ev in events:
            total = up_ulps(total + _event_curve(ev, new).epsilons * ev.count, 8)
        values.update(zip(new.tolist(), total.tolist(), strict=True))

    evaluate(grid)
    cap = tail if not reasons else math.inf  # holds at every order, not only in the tail
    for step in range(refinements + 1):
        a = np.array(sorted(values))
        d = np.array([values[x] for x in a])
        pieces = [("head", float(a[0]), float(d[0]))]
        with np.errstate(invalid="ignore"):
            mids = up_ulps(d[1:] / a[:-1], 2)
        pieces += [("orders", float(x), float(v)) for x, v in zip(a[:-1], mids, strict=True)]
        tail_piece = min(cap, up_ulps(pure_total / a[-1], 2))
        pieces.append(("tail", float(a[-1]), tail_piece))
        kind, start, rho = max(pieces, key=lambda p: p[2])
        # what no refinement can go below: the head, the tail and the grid values themselves
        floor = max(float(d[0]), tail_piece, float(np.max(d / a)))
        if kind != "orders" or step == refinements or min(rho, cap) <= floor:
            break
        # refine the (at most 16) highest intervals whose bound is above every grid value
        # D_i/a_i (where the supremum of D_α/α can lie), 8 new orders in each
        above = np.flatnonzero(mids > np.max(d / a))
        top = above[np.argsort(mids[above])[::-1][:16]]
        evaluate(np.concatenate([np.linspace(a[i], a[i + 1], 10)[1:-1] for i in top]))
    grid_rho = float(np.max(d / a))
    if cap <= rho:
        kind, start, rho = "cap", 1.0, cap
    if kind == "head":
        by = f"head (1, {start:g}]: D at order {start:g}"
    elif kind == "orders":
        nxt = float(a[int(np.searchsorted(a, start)) + 1])
        by = f"orders [{start:g}, {nxt:g}]: D({nxt:g})/{start:g}"
    elif kind == "cap":
        by = ("cap at every order: the events' Gaussian θ²/2 and pure-DP ε(∞)²/2 zCDP bounds, "
              "summed")
    else:
        by = f"tail [{start:g}, inf): composed ε(∞)/{start:g}"
    reason = ""
    if math.isinf(rho):
        reason = "; ".join(reasons) or "the composed curve is infinite at some order"
    return ZcdpBound(rho=float(rho), bounded_by=by, order=start, grid_rho=grid_rho,
                     tail_cap=float(tail_piece), reason=reason)
