"""The accountant: a ledger of (mechanism, scheme, relation, count) events and three backends.

>>> from privamp import GaussianMechanism
>>> from privamp.sampling import Poisson
>>> acc = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.01))
>>> b = acc.epsilon(1e-5)        # landscape.md: 1.82824 (dp_accounting PLD)
>>> b.lower <= 1.8282 <= b.upper, round(b.upper, 4)
(True, 1.8282)

Backends (``backend=``):

* ``"pld"`` (default): privacy loss distributions composed by FFT with certified error terms
  (:mod:`privamp.pld`). The bracket ``(lower, upper)`` encloses the exact ε(δ) (or δ(ε)) of the
  composition of the events' dominating pairs: Poisson-subsampled Gaussians under add/remove
  exactly (both orientations), every other event through its (amplified) privacy profile.
* ``"rdp"``: Rényi DP curves added order by order and converted to (ε, δ) (Canonne, Kamath,
  Steinke 2020); an upper bound only (``lower`` is ``None``). Poisson-Gaussian is exact at every
  order; Poisson with other mechanisms uses the Zhu–Wang bound; WOR the Wang–Balle–Kasiviswanathan
  bound; other schemes Theorem 6 applied to the amplified profile.
* ``"fourier"``: the Fourier accountant of Koskela et al. (MUST Algorithm 1), made rigorous with
  its truncation and rounding terms; for comparison. It composes one kind of event (any count).

Every event states its relation: the mechanism's own relation must be the one the scheme needs
(:meth:`~privamp.sampling.SamplingScheme.base_relation`), which is how the factor-2 sensitivity
confusions of other libraries are ruled out.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import check_choice, check_int, check_real
from .errors import InvalidParameterError, InvalidTypeError, UnsupportedCombinationError
from .mechanisms.base import Mechanism
from .profiles import PrivacyProfile
from .relations import NeighbouringRelation
from .results import Bracket
from .sampling.schemes import SamplingScheme

__all__ = ["BACKENDS", "Accountant", "Backend", "Event"]


class Backend(enum.StrEnum):
    """How an :class:`Accountant` composes: ``pld`` (certified bracket), ``rdp`` (upper bound
    only), ``fourier`` (Koskela et al., for comparison). Plain strings are accepted too."""

    PLD = "pld"
    RDP = "rdp"
    FOURIER = "fourier"

    @classmethod
    def parse(cls, value: Backend | str) -> Backend:
        if isinstance(value, cls):
            return value
        return cls(check_choice("backend", value, [b.value for b in cls]))


#: The accountant backends (their names).
BACKENDS = tuple(b.value for b in Backend)


@dataclass(frozen=True)
class Event:
    """One ledger line: ``mechanism`` run ``count`` times on subsamples drawn by ``scheme``."""

    mechanism: Any
    count: int
    scheme: SamplingScheme | None = None
    relation: NeighbouringRelation | None = None
    group_privacy: Any = None
    label: str = ""

    @property
    def effective_relation(self) -> NeighbouringRelation:
        """The relation on the whole dataset this event's guarantee holds for."""
        if self.relation is not None:
            return self.relation
        if self.scheme is not None:
            return self.scheme.natural_relation
        return getattr(self.mechanism, "relation", NeighbouringRelation.ADD_REMOVE)


class Accountant:
    """A ledger of composed events answering ε(δ) and δ(ε) as certified brackets.

    Parameters
    ----------
    backend : Backend or {"pld", "rdp", "fourier"}
    eps_error : float, optional
        ``pld``: target width of the ε bracket (default 0.1 % of ε).
    delta_error : float, optional
        ``pld``: target relative width of the δ bracket (default 1e-3).
    grid_step : float, optional
        ``pld``: a fixed grid spacing of the privacy loss instead of the automatic one.
    upper_error : float, optional
        ``pld``: estimated distance of the upper end from the exact ε that the grid is chosen
        for (default 0.001 % of ε); coarser is faster and still certified.
    orders : array_like, optional
        ``rdp``: the grid of Rényi orders (default :data:`~privamp.rdp.DEFAULT_ORDERS`).
    cache : AccountingCache, optional
        Memo of intermediate results shared with other accountants (pair curves, step ranges,
        discretised and composed PLDs, RDP curves): queries that share work run faster and
        return exactly the numbers they return without it (:mod:`privamp.cache`).
    shared_grid : bool, optional
        ``pld``, ε queries: round the grid choices to the safe side so that queries on the same
        events share compositions through ``cache`` (every δ ≥ 1e-6 of a composition shares
        one, and so does every δ in [1e-12, 1e-6)); certified, at least as accurate as the
        default, but not digit-for-digit equal to it (:func:`~privamp.pld.engine.pld_epsilon`).
    """

    def __init__(self, backend: Backend | str = "pld", *, eps_error: float | None = None,
                 delta_error: float | None = None, grid_step: float | None = None,
                 upper_error: float | None = None, orders: Any = None, cache: Any = None,
                 shared_grid: bool = False):
        self.backend = Backend.parse(backend).value
        self.upper_error = None if upper_error is None else check_real("upper_error",
                                                                       upper_error, "(0, inf)")
        self.eps_error = None if eps_error is None else check_real("eps_error", eps_error,
                                                                   "(0, inf)")
        self.delta_error = None if delta_error is None else check_real("delta_error",
                                                                       delta_error, "(0, 1)")
        self.grid_step = None if grid_step is None else check_real("grid_step", grid_step,
                                                                   "(0, 1]")
        self.orders = orders
        if cache is not None:
            from .cache import AccountingCache

            if not isinstance(cache, AccountingCache):
                raise InvalidTypeError("cache", "an AccountingCache or None", cache)
        self.cache = cache
        if not isinstance(shared_grid, bool):
            raise InvalidTypeError("shared_grid", "True or False", shared_grid)
        self.shared_grid = shared_grid
        self._events: list[Event] = []
        #: details of the last computation (grid, orientation, FFT sizes, seconds)
        self.details: dict = {}

    # ---- the ledger ---------------------------------------------------------------------

    def add(self, mechanism: Any, count: int = 1, *, scheme: SamplingScheme | None = None,
            relation: NeighbouringRelation | str | None = None, group_privacy: Any = None,
            label: str = "") -> Accountant:
        """Compose ``mechanism`` ``count`` more times (on ``scheme``'s subsamples); chainable."""
        if not isinstance(mechanism, (Mechanism, PrivacyProfile)):
            raise InvalidTypeError("mechanism", "a Mechanism or a PrivacyProfile", mechanism)
        count = check_int("count", count, "[1, inf)")
        if scheme is not None and not isinstance(scheme, SamplingScheme):
            raise InvalidTypeError("scheme", "a SamplingScheme or None", scheme)
        rel = None if relation is None else NeighbouringRelation.parse(relation)
        if scheme is not None:
            outer = scheme.natural_relation if rel is None else rel
            needed = scheme.base_relation(outer)
            own = getattr(mechanism, "relation", needed)
            if own is not needed:
                raise UnsupportedCombinationError(
                    f"{scheme!r} under {outer.value!r} needs the base mechanism stated under "
                    f"{needed.value!r}, but it is stated under {own.value!r} (its sensitivity "
                    "depends on the relation)")
        elif rel is not None and getattr(mechanism, "relation", rel) is not rel:
            raise UnsupportedCombinationError(
                f"the mechanism is stated under {mechanism.relation.value!r}, not {rel.value!r}")
        event = Event(mechanism, count, scheme, rel, group_privacy, label)
        if self._events and event.effective_relation is not self.relation:
            raise UnsupportedCombinationError(
                f"this ledger holds events under the {self.relation.value!r} relation and the "
                f"new event is under {event.effective_relation.value!r}: a guarantee for the "
                "composition needs one relation for every event (account them in separate "
                "ledgers, or state every mechanism under the same relation)")
        self._events.append(event)
        return self

    compose = add

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def steps(self) -> int:
        return sum(ev.count for ev in self._events)

    @property
    def relation(self) -> NeighbouringRelation | None:
        """The neighbouring relation every event of the ledger holds for (``None`` if empty)."""
        return self._events[0].effective_relation if self._events else None

    @property
    def lower_end_of(self) -> str:
        """What the lower end of a bracket bounds: ``"mechanism"`` when every event is composed
        through its own exact dominating pair (no subsampling, or Poisson under add/remove of a
        mechanism's worst-case pair: Zhu, Dong, Wang 2022), so the bracket holds the
        mechanism's exact ε; ``"bound"`` when some event is composed through an amplification
        theorem's profile (WOR, WR, MUST, chains, Poisson under substitution) or a given
        profile — the bracket then holds the ε of composing that bound, which the mechanism's
        own ε may be below."""
        from .sampling.schemes import Poisson

        for ev in self._events:
            if not isinstance(ev.mechanism, Mechanism) or not ev.mechanism.exact_pair:
                return "bound"
            if ev.scheme is None:
                continue
            if not (isinstance(ev.scheme, Poisson)
                    and ev.effective_relation is NeighbouringRelation.ADD_REMOVE):
                return "bound"
        return "mechanism"

    @property
    def certified(self) -> bool:
        """Whether every bound the ledger rests on is proved. False when an event uses an
        unproved theorem (MUST.WW with ``bound="published"``): its numbers are estimates."""
        for ev in self._events:
            if ev.scheme is not None and not ev.scheme.certified:
                return False
            if not getattr(ev.mechanism, "certified", True):
                return False
        return True

    def _require_events(self) -> None:
        if not self._events:
            raise InvalidParameterError("events", "at least one composed event (use .add)", "[]")

    # ---- queries ------------------------------------------------------------------------

    def epsilon(self, delta: float, *, lower: bool = True) -> Bracket:
        """Certified bracket on the smallest ε with δ(ε) ≤ ``delta`` (``lower`` is ``None`` for
        the ``rdp`` backend, or when ``lower=False`` asks for the upper end only — faster)."""
        delta = check_real("delta", delta, "(0, 1)")
        self._require_events()
        if self.backend == "pld":
            return self._pld_epsilon(delta, lower)
        return getattr(self, f"_{self.backend}_epsilon")(delta)

    def delta(self, eps: float) -> Bracket:
        """Certified bracket on δ(``eps``) of the composition."""
        eps = check_real("eps", eps, "[0, inf)")
        self._require_events()
        return getattr(self, f"_{self.backend}_delta")(eps)

    # ---- pld ----------------------------------------------------------------------------

    def _pld_events(self):
        from .pld.builders import pair_curves
        from .pld.engine import PldEvent

        curves = pair_curves if self.cache is None else self.cache.pair_curves
        return [PldEvent(curves(ev.mechanism, ev.scheme, ev.relation, ev.group_privacy),
                         ev.count, ev.label) for ev in self._events]

    def _pld_epsilon(self, delta: float, lower: bool = True) -> Bracket:
        from .pld.engine import pld_epsilon

        res = pld_epsilon(self._pld_events(), delta, eps_error=self.eps_error,
                          upper_error=self.upper_error, grid_step=self.grid_step, lower=lower,
                          cache=self.cache, shared_grid=self.shared_grid)
        self._record("pld", res)
        return res.bracket

    def _pld_delta(self, eps: float) -> Bracket:
        from .pld.engine import pld_delta

        res = pld_delta(self._pld_events(), eps, delta_error=self.delta_error,
                        grid_step=self.grid_step, cache=self.cache)
        self._record("pld", res)
        return res.bracket

    def _record(self, backend: str, res) -> None:
        self.details = {"backend": backend, "orientation": res.orientation,
                        "grid_upper": res.grid_upper, "grid_lower": res.grid_lower,
                        "fft_sizes": dict(res.fft_sizes), "seconds": res.seconds}
        if res.lower_note:
            self.details["lower_note"] = res.lower_note

    # ---- rdp ----------------------------------------------------------------------------

    def _rdp_accountant(self):
        from .rdp.accountant import RdpAccountant
        from .rdp.curve import DEFAULT_ORDERS

        orders = DEFAULT_ORDERS if self.orders is None else self.orders
        acc = RdpAccountant(orders)
        for ev in self._events:
            source = (_rdp_source(ev, orders) if self.cache is None
                      else _memo_source(self.cache, ev, orders))
            acc.compose(source, ev.count, label=ev.label or None)
        return acc

    def _rdp_epsilon(self, delta: float) -> Bracket:
        eps, order = self._rdp_accountant().epsilon(delta, return_order=True)
        self.details = {"backend": "rdp", "order": order}
        return Bracket(None, eps)

    def _rdp_delta(self, eps: float) -> Bracket:
        d, order = self._rdp_accountant().delta(eps, return_order=True)
        self.details = {"backend": "rdp", "order": order}
        return Bracket(None, d)

    # ---- fourier ------------------------------------------------------------------------

    def _fourier_sources(self):
        from .pld.builders import pair_curves

        # one kind of event, compared by value (mechanisms and schemes are frozen dataclasses;
        # profiles by identity); the relation and the group privacy change the pair curves, so
        # they are part of it (ignoring group privacy under-reported δ for mixed white-box and
        # black-box WR steps)
        first = self._events[0]
        kind = (first.mechanism, first.scheme, first.effective_relation, first.group_privacy)

        def same(ev) -> bool:
            other = (ev.mechanism, ev.scheme, ev.effective_relation, ev.group_privacy)
            try:
                return bool(other == kind)
            except (TypeError, ValueError):  # fields holding arrays: identity only
                return all(a is b for a, b in zip(other, kind, strict=True))

        if not all(same(ev) for ev in self._events[1:]):
            raise UnsupportedCombinationError(
                "the Fourier accountant composes one kind of event (Koskela et al.; MUST "
                "Algorithm 1); use the 'pld' backend for heterogeneous compositions")
        return (pair_curves(first.mechanism, first.scheme, first.relation, first.group_privacy),
                self.steps)

    def _fourier_epsilon(self, delta: float) -> Bracket:
        from .pld.fourier import fourier_accountant

        curves, count = self._fourier_sources()
        brackets = [fourier_accountant(c, count=count, delta=delta) for c in curves.values()]
        self.details = {"backend": "fourier"}
        return _max_bracket(brackets)

    def _fourier_delta(self, eps: float) -> Bracket:
        from .pld.fourier import fourier_accountant

        curves, count = self._fourier_sources()
        brackets = [fourier_accountant(c, count=count, eps=eps) for c in curves.values()]
        self.details = {"backend": "fourier"}
        return _max_bracket(brackets)


def _max_bracket(brackets: list[Bracket]) -> Bracket:
    upper = max(b.upper for b in brackets)
    lowers = [b.lower for b in brackets if b.lower is not None]
    lower = max(lowers) if lowers else None
    if lower is not None:
        lower = min(lower, upper)
    return Bracket(lower, upper)


def _memo_source(cache, ev: Event, orders):
    """:func:`_rdp_source` memoised in ``cache``: the source per (event, orders), and a callable
    source's curves per set of orders it is evaluated at."""
    from .rdp.curve import DEFAULT_ORDERS, RdpCurve

    key = (ev.mechanism, ev.scheme, ev.effective_relation, ev.group_privacy)
    try:
        hash(key)
    except TypeError:  # an unhashable user object: no sharing, still correct
        return _rdp_source(ev, orders)
    grid = np.asarray(DEFAULT_ORDERS if orders is None else orders, dtype=float)
    source = cache.rdp_curve(("source", key), grid, lambda: _rdp_source(ev, orders))
    if callable(source) and not isinstance(source, RdpCurve):
        return _MemoSource(cache, key, source)
    return source


class _MemoSource:
    """A callable RDP source ``orders -> RdpCurve`` whose values are memoised per orders."""

    def __init__(self, cache, key, source):
        self.cache, self.key, self.source = cache, key, source

    def __call__(self, orders):
        return self.cache.rdp_curve(self.key, orders, lambda: self.source(orders))


def _rdp_source(ev: Event, orders):
    """An RDP source (upper bound) for one event under its relation: a callable ``orders ->
    RdpCurve`` wherever the bound can be evaluated at any order, so that the RDP accountant
    can refine the order around its optimum."""
    from .mechanisms.gaussian import GaussianMechanism
    from .rdp.mechanisms import rdp_curve, rdp_from_profile
    from .rdp.subsampled import poisson_gaussian_rdp, subsampled_rdp
    from .sampling.schemes import Poisson, WithoutReplacement

    mech, scheme = ev.mechanism, ev.scheme
    rel = ev.effective_relation
    if scheme is None:
        return lambda o: rdp_curve(mech, o)
    if ev.group_privacy is None:
        if isinstance(scheme, Poisson) and rel is NeighbouringRelation.ADD_REMOVE:
            if isinstance(mech, GaussianMechanism):
                return lambda o: poisson_gaussian_rdp(mech.noise_multiplier, scheme.rate, o)
            return lambda o: subsampled_rdp(mech, sampling="poisson", sampling_rate=scheme.rate,
                                            orders=o)
        if isinstance(scheme, WithoutReplacement) and rel is NeighbouringRelation.SUBSTITUTE:
            return subsampled_rdp(mech, sampling="wor", n=scheme.n, m=scheme.m, orders=orders)
    from .amplification.subsampling import amplify
    from .errors import NumericalError

    profile = amplify(mech, scheme, rel, ev.group_privacy)
    if not math.isfinite(profile.pure_epsilon):
        # Theorem 6 on the amplified profile is valid here too (its tail is bounded through the
        # group profiles) but, with the many-copies terms of WR and MUST, it is both very loose
        # (ε ≈ 100 where the PLD gives 4.8 for σ = 1, m = 100, 1,000 steps) and slow
        raise UnsupportedCombinationError(
            f"no useful RDP bound for {mech!r} on {scheme!r}: only Theorem 6 applies, and it is "
            "very loose for mechanisms without pure DP under multiplicities; use the 'pld' "
            "backend (or privamp.rdp.rdp_from_profile on the amplified profile directly)")
    try:
        return rdp_from_profile(profile, orders)
    except NumericalError as exc:
        raise UnsupportedCombinationError(
            f"no RDP bound for {mech!r} on {scheme!r}: Theorem 6 needs the amplified profile to "
            f"reach 0 or to bound its tail ({exc}); use the 'pld' backend") from None
