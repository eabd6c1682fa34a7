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
import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._validation import check_int, check_real, parse_enum
from .errors import (
    GroupRangeError,
    InconsistentBoundsError,
    InvalidParameterError,
    InvalidTypeError,
    LossRangeError,
    NumericalError,
    UnsupportedCombinationError,
)
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
    #: a guarantee for groups of this many records (:mod:`privamp.pld.group`); not the
    #: ``group_privacy`` choice above, which concerns one record drawn several times
    group_size: int = 1

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
        privacy, and the group size when it is not 1), without the count and the label."""
        key = (_value_key(self.mechanism), _value_key(self.scheme), self.effective_relation,
               _value_key(self.group_privacy))
        return key if self.group_size == 1 else key + (("group_size", self.group_size),)

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


#: Byte budgets of an accountant's private query cache (see :attr:`Accountant.query_cache`).
_OWN_CACHE_BYTES = {"step": 32 * 2**20, "composed": 64 * 2**20}

#: Backend -> the backend object (filled by :func:`_register` below).
BACKENDS: dict[Backend, AccountingBackend] = {}


def _register(cls: type[AccountingBackend]) -> type[AccountingBackend]:
    BACKENDS[cls.name] = cls()
    return cls


def _names_group_size(query):
    """A query of a ledger for groups of K > 1 records whose step loss leaves the engine's range
    (:class:`~privamp.errors.LossRangeError`) is refused naming ``group_size``
    (:class:`~privamp.errors.GroupRangeError`, still a ``NumericalError``): the group is what
    pushed it there (without sampling the group's loss grows like K·Δ, and no check before
    the work can know where the engine's tail budget puts the limit)."""

    @functools.wraps(query)
    def wrapped(self, *args, **kwargs):
        try:
            return query(self, *args, **kwargs)
        except GroupRangeError:
            raise  # already named by an inner query (advantage → delta, tpr → tradeoff)
        except LossRangeError as err:
            if self.group_size == 1:
                raise
            raise GroupRangeError(
                "group_size", "small enough that one step's privacy loss for the group stays "
                "within the PLD engine's range", self.group_size, detail=str(err)) from err

    return wrapped

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
    horizon : int, optional
        ``pld``, ε queries: the number of steps the run is planned to take (a training loop
        that asks ε after every epoch). The grids are chosen for the planned run (doubled when
        the ledger outgrows it), so that every query of the growing ledger lands on the same
        grids and reuses the previous queries' discretised steps and their transforms; only the
        composition at the new count is computed. Certified like the default and usually
        tighter, not digit-for-digit equal to it
        (:func:`~privamp.pld.engine.pld_epsilon`, ``horizon``).
    """

    def __init__(self, backend: Backend | str = "pld", *, eps_error: float | None = None,
                 delta_error: float | None = None, grid_step: float | None = None,
                 upper_error: float | None = None, orders: Any = None, cache: Any = None,
                 shared_grid: bool = False, horizon: int | None = None):
        self._events: list[Event] = []
        self._counts: list[int] = []
        self.backend = backend
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
        self.horizon = None if horizon is None else check_int("horizon", horizon, "[1, inf)")
        # the ledger's lines: the event as first added (its count may be stale), the line's
        # total count and the number of add() calls merged into it (_events and _counts are
        # created above, before the backend is set)
        self._calls: list[int] = []
        self._lines: dict[tuple, int] = {}  # (kind, label) -> line
        self._seen: dict[tuple, int] = {}  # the add() arguments as given -> line (fast path)
        self._last_line = -1  # the line the last add() went to
        self._own_cache = None  # the private memo of queries when no cache is given
        #: details of the last computation (grid, orientation, FFT sizes, seconds)
        self.details: dict = {}

    # ---- the ledger ---------------------------------------------------------------------

    @property
    def backend(self) -> Backend:
        """The accounting backend. Setting it re-checks every line of the ledger against the
        new backend (a group of records or a batch sampler only some backends account), and
        refuses — keeping the old backend — where one cannot be accounted."""
        return self._backend

    @backend.setter
    def backend(self, value: Backend | str) -> None:
        new = Backend.parse(value)
        for ev in self.events:
            reason = self._group_supports(new, ev) or BACKENDS[new].supports(ev, self.events)
            if reason is not None:
                raise UnsupportedCombinationError(
                    f"the {new.value!r} backend cannot account the ledger's line {ev.count} x "
                    f"{ev.mechanism!r}: {reason}")
        self._backend = new

    def add(self, mechanism: Any, count: int = 1, *, scheme: SamplingScheme | None = None,
            relation: NeighbouringRelation | str | None = None, group_privacy: Any = None,
            label: str = "", group_size: int = 1) -> Accountant:
        """Compose ``mechanism`` ``count`` more times (on ``scheme``'s subsamples); chainable.

        An event equal to one already in the ledger (same mechanism, scheme, relation, group
        privacy and label, whether added just before or earlier) adds its count to that line,
        so a training loop calling ``add(mech, 1, scheme=...)`` (or its alias :meth:`step`)
        once per step keeps a ledger of one line and a query as cheap as for one
        ``add(mech, T, scheme=...)``.

        ``group_size`` K ≥ 1: the guarantee is for groups of K records (K insertions/removals
        or K substitutions), the same K for every line of a ledger (:mod:`privamp.pld.group`:
        tight pairs for Poisson under add/remove of the Gaussian and the Laplace mechanism, the
        coupling bound for other mechanisms under Poisson and for WOR/WR, the post-hoc group
        bound otherwise — per step or after composition, the smaller;
        ``details["group_bound"]`` says which).
        """
        seen = (mechanism, scheme, relation, group_privacy, label, group_size)
        try:
            index = self._seen.get(seen)
        except TypeError:  # unhashable parts (arrays): the full path compares by value
            index, seen = None, None
        if index is not None:
            self._counts[index] += (count if type(count) is int and count >= 1
                                    else check_int("count", count, "[1, inf)"))
            self._calls[index] += 1
            self._last_line = index
            return self
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
        if not isinstance(label, str):
            raise InvalidTypeError("label", "a string", label)
        group_size = self._check_group_size(group_size)
        event = Event(mechanism, count, scheme, rel, group_privacy, label, group_size)
        event = dataclasses.replace(event, relation=event.effective_relation)
        line = (event.kind, label)
        index = self._lines.get(line)
        if index is not None:
            # the same event again (consecutive or not: composition commutes): one line whose
            # count grows, so a loop of add(..., 1) costs what one add(..., T) costs
            self._counts[index] += count
            self._calls[index] += 1
            self._remember(seen, index)
            self._last_line = index
            return self
        if self._events and event.effective_relation is not self.relation:
            raise UnsupportedCombinationError(
                f"this ledger holds events under the {self.relation.value!r} relation and the "
                f"new event is under {event.effective_relation.value!r}: a guarantee for the "
                "composition needs one relation for every event (account them in separate "
                "ledgers, or state every mechanism under the same relation)")
        reason = (self._group_supports(self.backend, event)
                  or BACKENDS[self.backend].supports(event, self.events))
        if reason is not None:
            raise UnsupportedCombinationError(
                f"the {self.backend.value!r} backend cannot account {event.count} x "
                f"{event.mechanism!r}" + ("" if scheme is None else f" on {scheme!r}")
                + f": {reason}")
        if group_size != 1:
            # before any work: a group larger than the dataset, or beyond what privamp can
            # account under sampling, is refused by name (privamp.pld.group.check_group_reach)
            from .pld.group import check_group_reach

            check_group_reach(scheme, group_size)
        self._lines[line] = len(self._events)
        self._remember(seen, len(self._events))
        self._events.append(event)
        self._counts.append(count)
        self._calls.append(1)
        self._last_line = len(self._events) - 1
        return self

    compose = add
    step = add

    def _remember(self, seen: tuple | None, index: int) -> None:
        """Map the arguments of an add() to their line. Objects hashed by identity (profiles)
        would pile up if a loop built a new one every step: the map is bounded, and clearing
        it only sends later calls through the full path."""
        if seen is None:
            return
        if len(self._seen) >= 4096:
            self._seen.clear()
        self._seen[seen] = index

    def supports(self, mechanism: Any, *, scheme: SamplingScheme | None = None,
                 relation: NeighbouringRelation | str | None = None,
                 group_privacy: Any = None, group_size: int = 1) -> bool:
        """Whether :meth:`add` would accept this event (a dry run: the ledger is unchanged)."""
        trial = Accountant(self.backend)
        trial._events = list(self.events)
        trial._counts = list(self._counts)
        trial._calls = list(self._calls)
        trial._lines = dict(self._lines)
        try:
            trial.add(mechanism, 1, scheme=scheme, relation=relation,
                      group_privacy=group_privacy, group_size=group_size)
        except (UnsupportedCombinationError, InvalidParameterError, InvalidTypeError):
            return False
        return True

    @property
    def events(self) -> tuple[Event, ...]:
        """The ledger's lines, in the order first added: equal events (same mechanism, scheme,
        relation, group privacy and label) are one line whose count is their total."""
        for i, (ev, count) in enumerate(zip(self._events, self._counts, strict=True)):
            if ev.count != count:
                self._events[i] = dataclasses.replace(ev, count=count)
        return tuple(self._events)

    @property
    def segments(self) -> tuple[Event, ...]:
        """What the backends compose: the lines merged by :attr:`Event.kind` (labels joined),
        so equal events added under different labels are composed once, with their counts
        summed. Composition commutes, so this is the same guarantee as composing the lines."""
        merged: dict[tuple, Event] = {}
        for ev in self.events:
            prev = merged.get(ev.kind)
            if prev is None:
                merged[ev.kind] = ev
            else:
                label = ", ".join(x for x in (prev.label, ev.label) if x)
                merged[ev.kind] = dataclasses.replace(prev, count=prev.count + ev.count,
                                                      label=label)
        return tuple(merged.values())

    @property
    def query_cache(self):
        """The memo queries use: the ``cache`` given, else one private to this accountant
        (created at the first query, with smaller byte budgets), so that repeated queries on
        a growing ledger — ε after every epoch — reuse the pair curves, step ranges and
        discretisations of the previous ones. A cache changes how long a query takes, never its
        answer (:mod:`privamp.cache`)."""
        if self.cache is not None:
            return self.cache
        if self._own_cache is None:
            from .cache import AccountingCache

            self._own_cache = AccountingCache(step_bytes=_OWN_CACHE_BYTES["step"],
                                              composed_bytes=_OWN_CACHE_BYTES["composed"])
        return self._own_cache

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_own_cache"] = None  # a memo, rebuilt on demand: never pickled
        return state

    def __setstate__(self, state: dict) -> None:
        """Restore a pickled accountant, including one pickled by an earlier version: the
        backend was a plain attribute (now a property over ``_backend``), and the options added
        since take their defaults."""
        state = dict(state)
        if "_backend" not in state and "backend" in state:
            state["_backend"] = Backend.parse(state.pop("backend"))
        state.pop("backend", None)
        for name, default in (("horizon", None), ("shared_grid", False), ("_own_cache", None)):
            state.setdefault(name, default)
        self.__dict__.update(state)

    @property
    def steps(self) -> int:
        return sum(self._counts)

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
            if getattr(ev.scheme, "pld_only", False):
                # the batch samplers know whether their lower events bound the mechanism
                if not ev.scheme.exact_pair:
                    return "bound"
                continue
            rel = None if ev.scheme is None else ev.effective_relation
            if ev.group_size > 1:
                # groups: the group pairs decide (privamp.pld.group), not the one-record rule
                continue
            if not PAIR_RULES.find(ev.mechanism, ev.scheme, rel, ev.group_privacy).exact:
                return "bound"
        if self.group_bound in ("post-hoc", "coupling"):
            # groups with realizable pairs (WOR/WR; Poisson beyond the tight pairs): the
            # bracket holds the true ε
            return "mechanism" if _realized_group_events(self) is not None else "bound"
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

    # ---- groups of K records (privamp.pld.group; issue 20) -----------------------------------

    @property
    def group_size(self) -> int:
        """The number of records the ledger's guarantee is for (1 if empty)."""
        return self._events[0].group_size if self._events else 1

    @property
    def group_bound(self) -> str | None:
        """``"tight"``, ``"coupling"`` or ``"post-hoc"``: the group bound of the ledger
        (``None`` for groups of one record) — the weakest of its lines'
        (:func:`privamp.pld.group.group_pair_curves`)."""
        if self.group_size == 1:
            return None
        from .pld.group import group_bound

        kinds = {group_bound(ev.mechanism, ev.scheme, ev.effective_relation, ev.group_privacy,
                             ev.group_size)
                 for ev in self._events}
        for kind in ("post-hoc", "coupling"):
            if kind in kinds:
                return kind
        return "tight"

    def _check_group_size(self, group_size: Any) -> int:
        """``group_size`` validated, and the same as the ledger's (a guarantee is for one K)."""
        k = group_size if type(group_size) is int and group_size >= 1 else check_int(
            "group_size", group_size, "[1, inf)")
        if self._events and k != self.group_size:
            raise UnsupportedCombinationError(
                f"this ledger accounts groups of {self.group_size} records and the new event "
                f"has group_size={k}: one group size per ledger (a guarantee is for one K)")
        return k

    @staticmethod
    def _group_supports(backend: Backend, event: Event) -> str | None:
        """Why ``backend`` cannot account ``event``'s group size (``None`` if it can)."""
        if event.group_size == 1:
            return None
        if backend is not Backend.PLD:
            return (f"group_size={event.group_size} is accounted by the 'pld' backend only "
                    "(its group pairs are privacy-loss distributions)")
        if getattr(event.scheme, "pld_only", False):
            return (f"group_size={event.group_size} does not apply to {event.scheme!r}: the "
                    "sampler ties the records of a round together and privamp has no group "
                    "pair for it")
        return None

    # ---- persistence and explanation --------------------------------------------------------

    _OPTIONS = ("eps_error", "delta_error", "grid_step", "upper_error", "shared_grid",
                "horizon")

    def state_dict(self) -> dict:
        """The ledger and the options as plain data (JSON-ready): what :meth:`from_state_dict`
        reads back into an equal accountant, so a resumed training run continues its ledger.

        Mechanisms must be registered (:data:`privamp.mechanisms.REGISTRY`) and schemes
        registered (:data:`privamp.sampling.SCHEMES`); anything else (a privacy profile, a user
        class) is refused by name (:class:`UnsupportedCombinationError`) rather than written
        approximately. The cache is not part of the state.

        >>> from privamp import GaussianMechanism
        >>> from privamp.sampling import Poisson
        >>> acc = Accountant().add(GaussianMechanism(1.0), 300, scheme=Poisson(0.01))
        >>> again = Accountant.from_state_dict(acc.state_dict())
        >>> again.events == acc.events, again.epsilon(1e-5) == acc.epsilon(1e-5)
        (True, True)
        """
        from . import __version__
        from ._state import FORMAT, VERSION, encode_mechanism, encode_scheme, encode_value

        lines = []
        for i, (ev, calls) in enumerate(zip(self.events, self._calls, strict=True)):
            where = f"events[{i}]"
            lines.append({
                "mechanism": encode_mechanism(ev.mechanism, f"{where}.mechanism"),
                "count": ev.count,
                "scheme": encode_scheme(ev.scheme, f"{where}.scheme"),
                "relation": ev.effective_relation.value,
                "group_privacy": None if ev.group_privacy is None else ev.group_privacy.value,
                "label": ev.label,
                "calls": calls,
                "group_size": ev.group_size,
            })
        options = {name: getattr(self, name) for name in self._OPTIONS}
        if self.orders is not None:
            options["orders"] = encode_value(np.asarray(self.orders, dtype=float), "orders")
        return {"format": FORMAT, "version": VERSION, "privamp": __version__,
                "backend": self.backend.value, "options": options, "events": lines}

    @classmethod
    def from_state_dict(cls, state: dict, *, cache: Any = None) -> Accountant:
        """The accountant :meth:`state_dict` wrote (its events re-added, so every check of
        :meth:`add` runs again: a tampered state cannot mix relations or bypass validation)."""
        from ._state import FORMAT, VERSION, decode_mechanism, decode_scheme, decode_value

        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise InvalidParameterError("state", f"a dict written by Accountant.state_dict "
                                        f"(format {FORMAT!r})", type(state).__name__
                                        if not isinstance(state, dict) else state.get("format"))
        if state.get("version") != VERSION:
            raise InvalidParameterError("state.version", f"{VERSION} (the version this privamp "
                                        "reads)", state.get("version"))
        options = dict(state.get("options", {}))
        unknown = set(options) - set(cls._OPTIONS) - {"orders"}
        if unknown:
            raise InvalidParameterError("state.options", "options of Accountant ("
                                        + ", ".join(cls._OPTIONS + ("orders",)) + ")",
                                        sorted(unknown))
        if "orders" in options:
            options["orders"] = decode_value(options["orders"], "state.options.orders")
        acc = cls(state.get("backend", "pld"), cache=cache, **options)
        for i, line in enumerate(state.get("events", [])):
            where = f"state.events[{i}]"
            if not isinstance(line, dict):
                raise InvalidParameterError(where, "a dict", line)
            acc.add(decode_mechanism(line.get("mechanism"), f"{where}.mechanism"),
                    line.get("count"), scheme=decode_scheme(line.get("scheme"), f"{where}.scheme"),
                    relation=line.get("relation"), group_privacy=line.get("group_privacy"),
                    label=line.get("label", ""), group_size=line.get("group_size", 1))
            calls = check_int(f"{where}.calls", line.get("calls", 1), "[1, inf)")
            # the line this add() went to: the last one, or an earlier equal line it merged into
            acc._calls[acc._last_line] += calls - 1
        return acc

    def save(self, path: Any) -> None:
        """Write :meth:`state_dict` to ``path`` as JSON (UTF-8, written whole or not at all)."""
        import json
        import os
        from pathlib import Path

        target = Path(path)
        text = json.dumps(self.state_dict(), indent=1, allow_nan=False)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, target)

    @classmethod
    def load(cls, path: Any, *, cache: Any = None) -> Accountant:
        """The accountant :meth:`save` wrote to ``path``."""
        import json
        from pathlib import Path

        try:
            state = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InvalidParameterError("path", "a JSON file written by Accountant.save",
                                        str(path), detail=str(exc)) from exc
        return cls.from_state_dict(state, cache=cache)

    def explain(self) -> str:
        """What the ledger holds and how it will be composed: one line per segment (count, the
        add() calls merged into it, mechanism, scheme, the relation and its sensitivity
        convention), the bound the backend uses for it (its rule and theorem), the backend and
        why, what the lower end bounds, and whether every bound is proved."""
        lines = []
        n = len(self._events)
        if not n:
            return f"empty ledger (backend {self.backend.value!r})"
        rel = self.relation
        lines.append(f"ledger: {self.steps} steps in {n} line{'s' * (n != 1)}, relation "
                     f"{rel.value} ({_SENSITIVITY_NOTE[rel]})")
        table = _rule_table(self.backend)
        for i, ev in enumerate(self.segments, 1):
            calls = sum(c for e, c in zip(self._events, self._calls, strict=True)
                        if e.kind == ev.kind)
            mech = (ev.mechanism.describe() if isinstance(ev.mechanism, Mechanism)
                    else {"profile": type(ev.mechanism).__name__})
            text = f"  [{i}] {ev.count} x {_describe(mech)}"
            if ev.scheme is not None:
                text += f" on {_describe(ev.scheme.describe())}"
            if ev.group_privacy is not None:
                text += f", group privacy {ev.group_privacy.value}"
            if ev.group_size != 1:
                text += f", groups of {ev.group_size} records ({self.group_bound} bound)"
            text += f" ({calls} add call{'s' * (calls != 1)}"
            text += f", label {ev.label!r})" if ev.label else ")"
            lines.append(text)
            rule = table.find(ev.mechanism, ev.scheme,
                              None if ev.scheme is None else ev.effective_relation,
                              ev.group_privacy)
            doc = (rule.build.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            lines.append(f"      {table.backend} rule {rule.name!r}: {' '.join(doc.split())}")
            if ev.scheme is not None:
                lines.append(f"      theorem: {ev.scheme.theorem(ev.effective_relation)}")
        lines.append(f"backend: {self.backend.value} — {_BACKEND_WHY[self.backend]}")
        if self.horizon is not None and self.backend is Backend.PLD:
            lines.append(f"grids: planned for a run of {self.horizon:,} steps (doubled while "
                         "the ledger outgrows it); epoch queries share their steps")
        if self.backend is not Backend.RDP:
            why = (" (an amplification theorem's profile is composed)"
                   if self.lower_end_of == "bound"
                   else " (realizable pairs of datasets for the group)"
                   if self.group_bound == "coupling" else " (exact pairs throughout)")
            lines.append(f"lower end bounds: the {self.lower_end_of}{why}")
        lines.append("certified: " + ("yes (every bound used is proved)" if self.certified
                                      else "no — an unproved bound is used: estimates only"))
        return "\n".join(lines)

    def _require_events(self) -> None:
        if not self._events:
            raise InvalidParameterError("events", "at least one composed event (use .add)", "[]")

    # ---- queries ------------------------------------------------------------------------

    @_names_group_size
    def epsilon(self, delta: float, *, lower: bool = True) -> Bracket:
        """Certified bracket on the smallest ε with δ(ε) ≤ ``delta`` (``lower`` is ``None`` for
        the ``rdp`` backend, or when ``lower=False`` asks for the upper end only — faster)."""
        delta = check_real("delta", delta, "(0, 1)")
        self._require_events()
        return BACKENDS[self.backend].epsilon(self, delta, lower)

    @_names_group_size
    def delta(self, eps: float) -> Bracket:
        """Certified bracket on δ(``eps``) of the composition."""
        eps = check_real("eps", eps, "[0, inf)")
        self._require_events()
        return BACKENDS[self.backend].delta(self, eps)

    # ---- vector queries and attack risk (issue 20) ------------------------------------------

    @_names_group_size
    def epsilons(self, deltas: Any, *, lower: bool = True) -> list[Bracket]:
        """:meth:`epsilon` at each of ``deltas``, reusing the composition between them.

        With the ``pld`` backend the grids are chosen with ``shared_grid`` rounding (every
        δ ≥ 1e-6 of a ledger shares one composition, and so does every δ in [1e-12, 1e-6):
        :func:`~privamp.pld.engine.pld_epsilon`), so the brackets are certified and at least as
        tight as the default, not digit-for-digit equal to one :meth:`epsilon` call each.
        """
        from .tradeoff import real_values

        values = real_values("deltas", deltas)
        for d in values:
            check_real("deltas", float(d), "(0, 1)")
        self._require_events()
        shared, self.shared_grid = self.shared_grid, True
        try:
            return [BACKENDS[self.backend].epsilon(self, float(d), lower) for d in values]
        finally:
            self.shared_grid = shared

    @_names_group_size
    def deltas(self, eps: Any) -> list[Bracket]:
        """:meth:`delta` at each of ``eps`` (≥ 0) from one composition per orientation and side
        (``pld``; :func:`~privamp.pld.engine.pld_profile`: grids chosen once for the whole
        profile, so each bracket may be a little wider than :meth:`delta`'s, which chooses its
        grid for its one ε). Other backends answer point by point."""
        from .tradeoff import real_values

        values = real_values("eps", eps)
        for e in values:
            check_real("eps", float(e), "[0, inf)")
        self._require_events()
        if self.backend is Backend.RDP:
            return [self.delta(float(e)) for e in values]
        if self.group_size > 1 and self.group_bound != "tight":
            # groups without a tight pair: the upper end is the smaller of the per-step bound
            # and group privacy after composition, point by point; the lower end (realizable
            # pairs under WOR/WR) from one composition for all the points
            low_events = PldBackend.events(self, lower_side=True)
            if low_events is None:
                return [self.delta(float(e)) for e in values]
            ups = [BACKENDS[self.backend].delta(self, float(e), own_lower=False).upper
                   for e in values]
            from .pld.engine import pld_profile

            try:
                low = pld_profile(low_events, np.asarray(values, dtype=float),
                                  eps_error=self.eps_error, grid_step=self.grid_step,
                                  cache=self.query_cache).lower
            except NumericalError:
                low = None  # the lower side is optional: the upper ends stand
            if low is None:
                return [Bracket(None, u) for u in ups]
            _lower_from(self)
            return [Bracket(_checked_lower(float(lo), u), u)
                    for u, lo in zip(ups, low, strict=True)]
        up, low = self._profile(values)
        return [Bracket(None if low is None else float(lo), float(u))
                for u, lo in zip(up, low if low is not None else up, strict=True)]

    def _profile(self, eps: np.ndarray, orientations: bool = False):
        """Certified (upper, lower) δ at every ``eps`` (``lower`` ``None`` when there is none);
        with ``orientations``, also each orientation's own ``{name: (upper, lower)}`` for the
        upper and for the lower side (``None`` where not known: the rdp backend)."""
        if self.backend is Backend.RDP:
            # the RDP conversion at coarse points; in between δ(ε) ≤ δ_up(previous point)
            # (δ is non-increasing), so a step function through them is an upper bound
            coarse = np.unique(np.concatenate([eps[eps <= 0.0], np.arange(
                0.0, float(np.max(eps)) + 0.05, 0.05)]))
            rdp = RdpBackend.accountant(self)
            vals = np.minimum(np.atleast_1d(rdp.delta(coarse)), 1.0)
            idx = np.searchsorted(coarse, eps, side="right") - 1
            self.details = {"backend": "rdp", "profile_points": int(coarse.size)}
            return (vals[idx], None, None, None) if orientations else (vals[idx], None)
        from .pld.engine import pld_profile

        # (the fourier backend's events are read through the PLD engine too: certified)
        kw = dict(eps_error=self.eps_error, grid_step=self.grid_step, cache=self.query_cache)
        try:
            prof = pld_profile(PldBackend.events(self), eps, **kw)
        except NumericalError as err:
            if self.group_size == 1 or self.group_bound == "tight":
                raise
            raise NumericalError(
                f"groups of {self.group_size} records: the per-step group curves cannot be "
                f"composed here ({err}); epsilon() and delta() also try group privacy applied "
                "after composition, the trade-off curve does not") from err
        low = prof.lower
        by_low = prof.orientations
        self.details = {"backend": "pld", "grid_upper": prof.grid_upper,
                        "grid_lower": prof.grid_lower, "fft_sizes": prof.fft_sizes,
                        "seconds": prof.seconds}
        if prof.lower_note:
            self.details["lower_note"] = prof.lower_note
        low_events = PldBackend.events(self, lower_side=True)
        if low_events is not None:
            # shuffling: the lower end from the pairs that bound the mechanism from below
            low_prof = pld_profile(low_events, eps, **kw)
            low = np.array([_checked_lower(float(lo), float(u))
                            for lo, u in zip(low_prof.lower, prof.upper, strict=True)])
            by_low = low_prof.orientations
            _lower_from(self)
        if orientations:
            return prof.upper, low, prof.orientations, by_low
        return prof.upper, low

    @_names_group_size
    def tradeoff(self, fpr: Any, *, fpr_min: float | None = 1e-6) -> Any:
        """The attack-risk curve: certified brackets on the best membership-inference attack's
        true-positive rate at each false-positive rate ``fpr``, the attack advantage, and
        (unless ``fpr_min`` is ``None``) the μ-GDP value over the tests whose two error rates
        are both ≥ fpr_min (:mod:`privamp.tradeoff`; Dong, Roth, Su 2022). Returns a
        :class:`~privamp.tradeoff.TradeoffCurve`.

        With the ``pld`` (or ``fourier``) backend the curve is the best attack's over every
        ordered pair of neighbours, orientation by orientation
        (:func:`~privamp.tradeoff.best_attack`): the upper end is never below it and the lower
        end never above it — for the composed dominating pairs, i.e. for the mechanism itself
        where :attr:`lower_end_of` is ``"mechanism"``. With ``rdp`` only the upper end of the
        profile's symmetrised curve is known."""
        from .tradeoff import (
            TradeoffCurve,
            _check_fpr,
            best_attack,
            gdp_mu,
            tradeoff_eps_grid,
            tradeoff_from_profile,
        )

        alpha = _check_fpr(fpr)
        if fpr_min is not None:
            fpr_min = _check_fpr(fpr_min, "fpr_min", upper=0.5)[0]
        self._require_events()
        smallest = min(float(np.min(alpha)), fpr_min if fpr_min is not None else 1.0)
        eps = tradeoff_eps_grid(math.log(1.0 / smallest) + 0.5)
        up, low, by_up, by_low = self._profile(eps, orientations=True)
        details = dict(self.details)

        def tpr_of(a):
            if by_up is None:  # rdp: the symmetrised curve's upper end only
                return tradeoff_from_profile(eps, up, None, a)[0], None
            u = best_attack(eps, {n: (v[0], None) for n, v in by_up.items()}, a)
            lo = None
            if by_low is not None and all(v[1] is not None for v in by_low.values()):
                lo_pair = best_attack(eps, by_low, a)
                lo = None if lo_pair is None else lo_pair[1]
            if u is None:  # an orientation without its reversal: the symmetrised curve
                return tradeoff_from_profile(eps, up, None, a)[0], None
            u = u[0]
            if lo is not None:
                if np.any(lo > u * (1 + 1e-9) + 1e-300):
                    i = int(np.flatnonzero(lo > u * (1 + 1e-9) + 1e-300)[0])
                    raise InconsistentBoundsError(
                        f"internal inconsistency: the certified lower TPR {lo[i]!r} exceeds "
                        f"the certified upper TPR {u[i]!r} at FPR {a[i]!r}")
                lo = np.minimum(lo, u)
            return u, lo

        tpr, tpr_low = tpr_of(alpha)
        adv = Bracket(None if low is None else float(low[0]), float(up[0]))
        mu = gdp_mu(tpr_of, fpr_min=fpr_min) if fpr_min is not None else None
        details["lower_end_of"] = self.lower_end_of
        self.details = details
        return TradeoffCurve(alpha, tpr, tpr_low, self.relation.value, adv, mu, fpr_min,
                             self.certified, details)

    @_names_group_size
    def tpr(self, fpr: float) -> Bracket:
        """Certified bracket on the best attack's true-positive rate at false-positive rate
        ``fpr`` (:meth:`tradeoff` at one point)."""
        curve = self.tradeoff(check_real("fpr", fpr, "(0, 1)"), fpr_min=None)  # (range: tradeoff)
        return Bracket(None if curve.tpr_lower is None else float(curve.tpr_lower[0]),
                       float(curve.tpr[0]))

    @_names_group_size
    def advantage(self) -> Bracket:
        """Certified bracket on the best attack's advantage max_α (TPR − FPR) = δ(0), the total
        variation between the outputs on neighbouring datasets (Kairouz, Oh, Viswanath 2015)."""
        return self.delta(0.0)

    @_names_group_size
    def gdp_mu(self, *, fpr_min: float = 1e-6) -> Bracket:
        """Certified bracket on the smallest μ such that the ledger's trade-off curve lies above
        the μ-GDP curve at every test whose two error rates are both ≥ ``fpr_min``
        (:func:`~privamp.tradeoff.gdp_mu_from_profile`)."""
        return self.tradeoff(0.5, fpr_min=fpr_min).mu

    # ---- the ledger's RDP curve and zCDP ρ (issue 20; logic in privamp.rdp.ledger) ------

    def _refuse_groups(self, query: str) -> None:
        """The RDP rules are per record: a ledger of groups has no RDP curve here (found in
        review: the group size was ignored, under-reporting ρ by K²)."""
        if self.group_size != 1:
            raise UnsupportedCombinationError(
                f"{query} accounts single records; this ledger is for groups of "
                f"{self.group_size} records (group_size), which only the pld backend's "
                "epsilon/delta/tradeoff queries account")

    @_names_group_size
    def rdp_curve(self, orders: Any = None):
        """The ledger's composed RDP upper bound (an :class:`~privamp.rdp.RdpCurve`) on
        ``orders`` (default: the accountant's ``orders``, else
        :data:`~privamp.rdp.DEFAULT_ORDERS`), for a ledger of any backend: each event's curve
        from the RDP rule table, times its count, summed. An event without an RDP bound is
        refused by name (:class:`UnsupportedCombinationError`)."""
        from .rdp.ledger import ledger_rdp_curve

        self._require_events()
        self._refuse_groups("rdp_curve")
        return ledger_rdp_curve(self.segments, self.orders if orders is None else orders)

    @_names_group_size
    def zcdp_rho(self, orders: Any = None):
        """The ledger's certified ρ-zCDP (``D_α ≤ ρα`` at every order α > 1) as a
        :class:`~privamp.rdp.ledger.ZcdpBound` naming what bounded it
        (:func:`~privamp.rdp.ledger.ledger_zcdp`)."""
        from .rdp.ledger import ledger_zcdp

        self._require_events()
        self._refuse_groups("zcdp_rho")
        return ledger_zcdp(self.segments, orders)


_SENSITIVITY_NOTE = {
    NeighbouringRelation.ADD_REMOVE: "clipped DP-SGD sum: sensitivity C",
    NeighbouringRelation.SUBSTITUTE: "clipped DP-SGD sum: sensitivity 2C",
}

_BACKEND_WHY = {
    Backend.PLD: "privacy loss distributions composed by FFT: a certified [lower, upper] "
                 "bracket on the exact epsilon of the composed bounds",
    Backend.RDP: "Renyi DP curves added order by order and converted: an upper bound only, "
                 "looser than pld, cheap at any number of steps",
    Backend.FOURIER: "the Fourier accountant of Koskela et al. (one kind of event), made "
                     "rigorous: for comparison with the MUST paper",
}


def _rule_table(backend: Backend):
    if backend is Backend.RDP:
        from .rdp.sources import RDP_RULES

        return RDP_RULES
    from .pld.builders import PAIR_RULES

    return PAIR_RULES


def _describe(desc: dict) -> str:
    desc = dict(desc)
    head = desc.pop("name", None) or desc.pop("scheme", None) or desc.pop("profile", "")
    desc.pop("relation", None)
    return f"{head}(" + ", ".join(f"{k}={v}" for k, v in desc.items()) + ")"


# ---- pld ------------------------------------------------------------------------------------


@_register
class PldBackend(AccountingBackend):
    """Privacy loss distributions composed by FFT with certified error terms; every event is
    composed through the pair curves of :data:`privamp.pld.builders.PAIR_RULES`."""

    name = Backend.PLD

    def supports(self, event, ledger=()):
        scheme = event.scheme
        if getattr(scheme, "pld_only", False):
            if event.group_privacy is not None:
                return f"group privacy does not apply to {scheme!r} (a record is in one batch)"
            if scheme.ties_steps:
                # the steps of a round are accounted together: lines that could share a round
                # (another mechanism, e.g. a noise change, or another tied sampler) would be
                # composed as separate rounds, which can under-report
                for other in ledger:
                    if getattr(other.scheme, "ties_steps", False) and other.kind != event.kind:
                        return (f"{scheme!r} accounts the steps of a round together, and the "
                                f"ledger already holds {other.count} steps of "
                                f"{other.mechanism!r} on {other.scheme!r}: one mechanism and "
                                "one such sampler per ledger (a change of noise inside a "
                                "round cannot be accounted line by line)")
            return scheme.check_mechanism(event.mechanism, event.effective_relation)
        return None

    @staticmethod
    def events(acc: Accountant, lower_side: bool = False):
        """The engine's events; with ``lower_side``, the events whose composed lower end bounds
        the mechanism where a batch sampler has its own (shuffling), ``None`` if none has."""
        from .pld.engine import PldEvent

        curves = acc.query_cache.pair_curves
        if lower_side and acc.group_size > 1:
            # groups without tight pairs: realizable pairs bound the true ε from below (or None)
            return _realized_group_events(acc)
        out = []
        own_lower = False
        for ev in acc.segments:
            if getattr(ev.scheme, "pld_only", False):
                low = ev.scheme.pld_lower_events(ev.mechanism, ev.count, ev.label) \
                    if lower_side else None
                own_lower |= low is not None
                out.extend(low if low is not None
                           else ev.scheme.pld_events(ev.mechanism, ev.count, ev.label))
                continue
            if ev.group_size != 1:
                from .pld.group import group_pair_curves

                out.append(PldEvent(group_pair_curves(ev.mechanism, ev.scheme, ev.relation,
                                                      ev.group_size, ev.group_privacy)[0],
                                    ev.count, ev.label))
                continue
            out.append(PldEvent(curves(ev.mechanism, ev.scheme, ev.relation, ev.group_privacy),
                                ev.count, ev.label))
        return out if own_lower or not lower_side else None

    def epsilon(self, acc, delta, lower):
        from .pld.engine import pld_epsilon

        kw = dict(eps_error=acc.eps_error, upper_error=acc.upper_error,
                  grid_step=acc.grid_step, cache=acc.query_cache, shared_grid=acc.shared_grid,
                  horizon=acc.horizon)
        low_events = self.events(acc, lower_side=True) if lower else None
        try:
            res = pld_epsilon(self.events(acc), delta, lower=lower and low_events is None, **kw)
        except NumericalError as err:
            # a per-step group bound whose loss range overflows (Vadhan's factor on a MUST
            # profile): group privacy after composition may still answer
            if acc.group_size == 1 or acc.group_bound == "tight":
                raise
            try:
                after = self._group_after(acc, Bracket(None, math.inf), delta=delta)
            except NumericalError:
                after = Bracket(None, math.inf)
            if not math.isfinite(after.upper):
                raise NumericalError(
                    f"groups of {acc.group_size} records: the per-step group bound fails ({err}) "
                    f"and group privacy applied after composition finds no ε at δ = {delta:g}; "
                    "ask for a smaller group size or a larger δ") from err
            return after
        _record(acc, res)
        if low_events is None:
            return self._group_after(acc, res.bracket, delta=delta)
        # the upper end from the certified upper pairs, the lower end from the pairs that bound
        # the mechanism from below (shuffling: Chua et al.'s construction; groups under WOR/WR:
        # realizable pairs of datasets)
        upper = self._group_after(acc, res.bracket, delta=delta).upper
        try:
            low = pld_epsilon(low_events, delta, lower=True, **kw)
        except NumericalError:
            return Bracket(None, upper)  # the lower side is optional: the upper end stands
        _lower_from(acc)
        return Bracket(_checked_lower(low.bracket.lower, upper), upper)

    def delta(self, acc, eps, own_lower: bool = True):
        """``own_lower=False`` skips the lower-side events (:meth:`Accountant.deltas` composes
        them once for all its points)."""
        from .pld.engine import pld_delta

        kw = dict(delta_error=acc.delta_error, grid_step=acc.grid_step, cache=acc.query_cache)
        try:
            res = pld_delta(self.events(acc), eps, **kw)
        except NumericalError:
            if acc.group_size == 1 or acc.group_bound == "tight":
                raise
            return self._group_after(acc, Bracket(None, 1.0), eps=eps)
        _record(acc, res)
        low_events = self.events(acc, lower_side=True) if own_lower else None
        if low_events is None:
            return self._group_after(acc, res.bracket, eps=eps)
        upper = self._group_after(acc, res.bracket, eps=eps).upper
        try:
            low = pld_delta(low_events, eps, **kw)
        except NumericalError:
            return Bracket(None, upper)  # the lower side is optional: the upper end stands
        _lower_from(acc)
        return Bracket(_checked_lower(low.bracket.lower, upper), upper)


    @staticmethod
    def _group_after(acc: Accountant, bracket: Bracket, *, delta: float | None = None,
                     eps: float | None = None) -> Bracket:
        """For groups without a tight pair: the smaller of the per-step group bound and group
        privacy applied once to the composed one-record guarantee
        (:func:`privamp.pld.group.composed_group_epsilon`); both are valid upper bounds. When
        the second is used the lower end is dropped (it bounded the first route only)."""
        if acc.group_size == 1 or acc.group_bound == "tight":
            return bracket
        from .pld.engine import PldEvent
        from .pld.group import composed_group_delta, composed_group_epsilon

        curves = acc.query_cache.pair_curves
        one = [PldEvent(curves(ev.mechanism, ev.scheme, ev.relation, ev.group_privacy),
                        ev.count, ev.label) for ev in acc.segments]
        kw = dict(grid_step=acc.grid_step, cache=acc.query_cache)
        if delta is not None:
            after = composed_group_epsilon(one, acc.group_size, delta, bracket.upper, **kw)
        else:
            after = composed_group_delta(one, acc.group_size, eps, **kw)
        if not acc.details or acc.details.get("backend") != "pld":
            acc.details = {"backend": "pld", "group_size": acc.group_size,
                           "group_bound": acc.group_bound}
        acc.details["group_after_composition"] = bool(after < bracket.upper)
        if after < bracket.upper:
            return Bracket(None, after)
        return bracket


def _realized_group_events(acc: Accountant):
    """The PLD events of the realizable pairs of a ledger for groups of K > 1 records
    (:func:`privamp.pld.group.realizable_group_curves`: WOR/WR under substitution, and Poisson
    groups beyond the tight split pairs), or ``None`` unless every line has them:
    one pair of datasets must produce every line's outputs, so a ledger whose lines do not all
    have such pairs gets no lower end from them."""
    from .pld.engine import PldEvent
    from .pld.group import realizable_group_curves

    if acc.group_bound == "tight":
        return None  # the tight split pairs carry their own lower end, at least as large
    out = []
    for ev in acc.segments:
        curves = realizable_group_curves(ev.mechanism, ev.scheme, ev.relation, ev.group_size)
        if curves is None:
            return None
        out.append(PldEvent(curves, ev.count, ev.label))
    if len({ev.scheme.n for ev in acc.segments}) > 1:
        return None  # lines sampling datasets of different sizes: no one pair of datasets
    return out


def _checked_lower(low: float, upper: float) -> float:
    """A lower end from lower-bound pairs (realizable pairs, shuffling's), checked against the
    upper end from the certified upper pairs: the two are independent certificates, so a lower
    end above the upper one means one of them is wrong — refused, never clipped
    (:func:`privamp.pld.engine._checked_lower`)."""
    from .pld.engine import _checked_lower as checked

    return checked(low, upper)


def _lower_from(acc: Accountant) -> None:
    """Say in ``details`` where a lower end from lower-bound pairs comes from (and drop the note
    that the upper pairs give none)."""
    acc.details.pop("lower_note", None)
    acc.details["lower_from"] = ("realizable pairs of datasets" if acc.group_size > 1
                                 else "the best known lower bound's pairs")


def _record(acc: Accountant, res) -> None:
    acc.details = {"backend": "pld", "orientation": res.orientation,
                   "grid_upper": res.grid_upper, "grid_lower": res.grid_lower,
                   "fft_sizes": dict(res.fft_sizes), "seconds": res.seconds}
    if acc.group_size != 1:
        acc.details.update(group_size=acc.group_size, group_bound=acc.group_bound)
    if res.lower_note:
        acc.details["lower_note"] = res.lower_note


# ---- rdp ------------------------------------------------------------------------------------


@_register
class RdpBackend(AccountingBackend):
    """Rényi DP curves added order by order (an upper bound only); the curve of each event
    comes from the rules of :data:`privamp.rdp.sources.RDP_RULES`."""

    name = Backend.RDP

    def __init__(self):
        # kind -> the answer of check_source, which may evaluate an amplified profile's pure ε
        # (tens of ms): asked once per kind of event, not once per ledger
        self._checked: dict[tuple, str | None] = {}

    def supports(self, event, ledger=()):
        from .rdp.sources import check_source

        if getattr(event.scheme, "pld_only", False):
            return (f"{event.scheme!r} ties its steps together and is accounted by the 'pld' "
                    "backend only")

        kind = event.kind
        if kind in self._checked:
            return self._checked[kind]
        try:
            check_source(event.mechanism, event.scheme, event.effective_relation,
                         event.group_privacy)
            reason = None
        except UnsupportedCombinationError as exc:
            reason = str(exc)
        if len(self._checked) >= 1024:
            self._checked.clear()
        self._checked[kind] = reason
        return reason

    @staticmethod
    def accountant(acc: Accountant):
        from .rdp.accountant import RdpAccountant
        from .rdp.curve import DEFAULT_ORDERS

        orders = DEFAULT_ORDERS if acc.orders is None else acc.orders
        rdp = RdpAccountant(orders)
        for ev in acc.segments:
            source = _memo_source(acc.query_cache, ev, orders)
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
        if getattr(event.scheme, "pld_only", False):
            return (f"{event.scheme!r} ties its steps together and is accounted by the 'pld' "
                    "backend only")
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
