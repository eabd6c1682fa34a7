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

import abc
import dataclasses
import enum
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._validation import check_int, check_real, parse_enum
from .errors import InvalidParameterError, InvalidTypeError, UnsupportedCombinationError
from .mechanisms.base import Mechanism
from .profiles import GroupPrivacy, PrivacyProfile
from .relations import NeighbouringRelation
from .results import Bracket
from .sampling.schemes import SamplingScheme

__all__ = ["BACKENDS", "Accountant", "AccountingBackend", "Backend", "Event"]


class Backend(enum.StrEnum):
    """How an :class:`Accountant` composes: ``pld`` (certified bracket), ``rdp`` (upper bound
    only), ``fourier`` (Koskela et al., for comparison). Plain strings are accepted too."""

    PLD = "pld"
    RDP = "rdp"
    FOURIER = "fourier"

    @classmethod
    def parse(cls, value: Backend | str) -> Backend:
        return parse_enum("backend", value, cls)


class _Identity:
    """A key comparing its object by identity, and holding it: a bare ``id()`` could be reused by
    another object once the first is collected, and a memo keyed on it (``AccountingCache``)
    would then hand one event's RDP curve to another."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def _value_key(obj: Any, depth: int = 0) -> Any:
    """A hashable key equal for equal values: what makes events comparable by ``==``.

    Arrays compare by contents, dataclasses by their fields, other objects (privacy profiles)
    by type and every attribute; an object that is none of these (or too deeply nested)
    compares by identity (:class:`_Identity`, which keeps it alive). Equal keys mean equal
    state, so two events with equal keys are the same event; the converse may fail (a cache
    filled in one and not the other), which only makes the Fourier backend refuse a ledger it
    could have composed.
    """
    if obj is None or isinstance(obj, str | int | float | bool | enum.Enum):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if depth > 8:
        return _Identity(obj)
    if isinstance(obj, np.ndarray):
        return ("array", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(_value_key(v, depth + 1) for v in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _value_key(v, depth + 1)) for k, v in obj.items()))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj), tuple(_value_key(getattr(obj, f.name), depth + 1)
                                 for f in dataclasses.fields(obj)))
    if hasattr(obj, "__dict__") and not callable(obj):
        return (type(obj), _value_key(vars(obj), depth + 1))
    try:
        hash(obj)
    except TypeError:
        return _Identity(obj)
    return obj


@dataclass(frozen=True, eq=False)
class Event:
    """One ledger line: ``mechanism`` run ``count`` times on subsamples drawn by ``scheme``,
    under ``relation`` on the whole dataset.

    Events are values: two events built separately from equal parts are equal (``==``, and
    they hash alike); :attr:`kind` is the event without its count and label.
    """

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

    @property
    def kind(self) -> tuple:
        """What the event composes, as a hashable value: (mechanism, scheme, relation, group
        privacy), without the count and the label."""
        return (_value_key(self.mechanism), _value_key(self.scheme), self.effective_relation,
                _value_key(self.group_privacy))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return (self.kind, self.count, self.label) == (other.kind, other.count, other.label)

    def __hash__(self) -> int:
        return hash((self.kind, self.count, self.label))


class AccountingBackend(abc.ABC):
    """A way of composing a ledger: :meth:`supports` (asked when an event is added, so that an
    event a backend cannot account is refused at once, naming it), :meth:`epsilon` and
    :meth:`delta`. The backends are registered in :data:`BACKENDS`; the bounds each uses for a
    (scheme, mechanism, relation) are its rule table (:mod:`privamp.pld.builders`,
    :mod:`privamp.rdp.sources`)."""

    name: ClassVar[Backend]

    def supports(self, event: Event, ledger: tuple[Event, ...] = ()) -> str | None:
        """``None`` if ``event`` can be added to ``ledger``, else the reason it cannot."""
        return None

    @abc.abstractmethod
    def epsilon(self, acc: Accountant, delta: float, lower: bool) -> Bracket:
        """The bracket on ε(``delta``) of the ledger of ``acc``."""

    @abc.abstractmethod
    def delta(self, acc: Accountant, eps: float) -> Bracket:
        """The bracket on δ(``eps``) of the ledger of ``acc``."""


#: Backend -> the backend object (filled by :func:`_register` below).
BACKENDS: dict[Backend, AccountingBackend] = {}


def _register(cls: type[AccountingBackend]) -> type[AccountingBackend]:
    BACKENDS[cls.name] = cls()
    return cls

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
        self.backend = Backend.parse(backend)
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
        if group_privacy is not None:
            group_privacy = GroupPrivacy.parse(group_privacy)
        if scheme is not None:
            outer, needed = scheme.resolve(rel)
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
        event = dataclasses.replace(event, relation=event.effective_relation)
        if self._events and event.effective_relation is not self.relation:
            raise UnsupportedCombinationError(
                f"this ledger holds events under the {self.relation.value!r} relation and the "
                f"new event is under {event.effective_relation.value!r}: a guarantee for the "
                "composition needs one relation for every event (account them in separate "
                "ledgers, or state every mechanism under the same relation)")
        reason = BACKENDS[self.backend].supports(event, self.events)
        if reason is not None:
            raise UnsupportedCombinationError(
                f"the {self.backend.value!r} backend cannot account {event.count} x "
                f"{event.mechanism!r}" + ("" if scheme is None else f" on {scheme!r}")
                + f": {reason}")
        self._events.append(event)
        return self

    compose = add

    def supports(self, mechanism: Any, *, scheme: SamplingScheme | None = None,
                 relation: NeighbouringRelation | str | None = None,
                 group_privacy: Any = None) -> bool:
        """Whether :meth:`add` would accept this event (a dry run: the ledger is unchanged)."""
        trial = Accountant(self.backend)
        trial._events = list(self._events)
        try:
            trial.add(mechanism, 1, scheme=scheme, relation=relation,
                      group_privacy=group_privacy)
        except (UnsupportedCombinationError, InvalidParameterError, InvalidTypeError):
            return False
        return True

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
        own ε may be below. Read from the PLD backend's rules (:data:`PAIR_RULES`, ``exact``)."""
        from .pld.builders import PAIR_RULES

        for ev in self._events:
            if not isinstance(ev.mechanism, Mechanism) or not ev.mechanism.exact_pair:
                return "bound"
            rel = None if ev.scheme is None else ev.effective_relation
            if not PAIR_RULES.find(ev.mechanism, ev.scheme, rel, ev.group_privacy).exact:
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
        return BACKENDS[self.backend].epsilon(self, delta, lower)

    def delta(self, eps: float) -> Bracket:
        """Certified bracket on δ(``eps``) of the composition."""
        eps = check_real("eps", eps, "[0, inf)")
        self._require_events()
        return BACKENDS[self.backend].delta(self, eps)


# ---- pld ------------------------------------------------------------------------------------


@_register
class PldBackend(AccountingBackend):
    """Privacy loss distributions composed by FFT with certified error terms; every event is
    composed through the pair curves of :data:`privamp.pld.builders.PAIR_RULES`."""

    name = Backend.PLD

    @staticmethod
    def events(acc: Accountant):
        from .pld.builders import pair_curves
        from .pld.engine import PldEvent

        curves = pair_curves if acc.cache is None else acc.cache.pair_curves
        return [PldEvent(curves(ev.mechanism, ev.scheme, ev.relation, ev.group_privacy),
                         ev.count, ev.label) for ev in acc.events]

    def epsilon(self, acc, delta, lower):
        from .pld.engine import pld_epsilon

        res = pld_epsilon(self.events(acc), delta, eps_error=acc.eps_error,
                          upper_error=acc.upper_error, grid_step=acc.grid_step, lower=lower,
                          cache=acc.cache, shared_grid=acc.shared_grid)
        _record(acc, res)
        return res.bracket

    def delta(self, acc, eps):
        from .pld.engine import pld_delta

        res = pld_delta(self.events(acc), eps, delta_error=acc.delta_error,
                        grid_step=acc.grid_step, cache=acc.cache)
        _record(acc, res)
        return res.bracket


def _record(acc: Accountant, res) -> None:
    acc.details = {"backend": "pld", "orientation": res.orientation,
                   "grid_upper": res.grid_upper, "grid_lower": res.grid_lower,
                   "fft_sizes": dict(res.fft_sizes), "seconds": res.seconds}
    if res.lower_note:
        acc.details["lower_note"] = res.lower_note


# ---- rdp ------------------------------------------------------------------------------------


@_register
class RdpBackend(AccountingBackend):
    """Rényi DP curves added order by order (an upper bound only); the curve of each event
    comes from the rules of :data:`privamp.rdp.sources.RDP_RULES`."""

    name = Backend.RDP

    def supports(self, event, ledger=()):
        from .rdp.sources import check_source

        try:
            check_source(event.mechanism, event.scheme, event.effective_relation,
                         event.group_privacy)
        except UnsupportedCombinationError as exc:
            return str(exc)
        return None

    @staticmethod
    def accountant(acc: Accountant):
        from .rdp.accountant import RdpAccountant
        from .rdp.curve import DEFAULT_ORDERS

        orders = DEFAULT_ORDERS if acc.orders is None else acc.orders
        rdp = RdpAccountant(orders)
        for ev in acc.events:
            source = (_rdp_source(ev, orders) if acc.cache is None
                      else _memo_source(acc.cache, ev, orders))
            rdp.compose(source, ev.count, label=ev.label or None)
        return rdp

    def epsilon(self, acc, delta, lower):
        eps, order = self.accountant(acc).epsilon(delta, return_order=True)
        acc.details = {"backend": "rdp", "order": order}
        return Bracket(None, eps)

    def delta(self, acc, eps):
        d, order = self.accountant(acc).delta(eps, return_order=True)
        acc.details = {"backend": "rdp", "order": order}
        return Bracket(None, d)


def _rdp_source(ev: Event, orders):
    from .rdp.sources import rdp_source

    return rdp_source(ev.mechanism, ev.scheme, ev.effective_relation, ev.group_privacy, orders)


def _memo_source(cache, ev: Event, orders):
    """:func:`_rdp_source` memoised in ``cache``: the source per (event, orders), and a callable
    source's curves per set of orders it is evaluated at."""
    from .rdp.curve import DEFAULT_ORDERS, RdpCurve

    key = ev.kind
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


# ---- fourier --------------------------------------------------------------------------------


@_register
class FourierBackend(AccountingBackend):
    """The Fourier accountant of Koskela et al. (MUST Algorithm 1), made rigorous with its
    truncation and rounding terms: one kind of event (any count)."""

    name = Backend.FOURIER

    def supports(self, event, ledger=()):
        # one kind of event, compared by value; the relation and the group privacy change the
        # pair curves, so they are part of it (ignoring group privacy under-reported δ for
        # mixed white-box and black-box WR steps)
        if ledger and event.kind != ledger[0].kind:
            return ("the Fourier accountant composes one kind of event (Koskela et al.; MUST "
                    "Algorithm 1); use the 'pld' backend for heterogeneous compositions")
        return None

    @staticmethod
    def _curves(acc: Accountant):
        from .pld.builders import pair_curves

        first = acc.events[0]
        return (pair_curves(first.mechanism, first.scheme, first.relation, first.group_privacy),
                acc.steps)

    def epsilon(self, acc, delta, lower):
        from .pld.fourier import fourier_accountant

        curves, count = self._curves(acc)
        brackets = [fourier_accountant(c, count=count, delta=delta) for c in curves.values()]
        acc.details = {"backend": "fourier"}
        return _max_bracket(brackets)

    def delta(self, acc, eps):
        from .pld.fourier import fourier_accountant

        curves, count = self._curves(acc)
        brackets = [fourier_accountant(c, count=count, eps=eps) for c in curves.values()]
        acc.details = {"backend": "fourier"}
        return _max_bracket(brackets)


def _max_bracket(brackets: list[Bracket]) -> Bracket:
    upper = max(b.upper for b in brackets)
    lowers = [b.lower for b in brackets if b.lower is not None]
    lower = max(lowers) if lowers else None
    if lower is not None:
        lower = min(lower, upper)
    return Bracket(lower, upper)
