"""Rule tables: which bound applies to a (scheme, mechanism, relation) — one table per backend.

A backend that treats events differently by their scheme, mechanism and relation (the RDP
accountant's sources in :mod:`privamp.rdp.sources`, the PLD engine's pair curves in
:mod:`privamp.pld.builders`) keeps its rules in one :class:`RuleTable`, in the order they are
tried (the most specific first). A rule matches an event when its scheme and its mechanism are
instances of the rule's classes (``None`` for the scheme: no sampling; :data:`ANY` for any scheme)
and the relation and group privacy agree. Adding a bound for a new (scheme, mechanism) pair is
adding one rule, next to the others of its backend.

>>> table = RuleTable("demo")
>>> @table.rule(scheme=None, source=object)
... def unsampled(mechanism, scheme, relation, group_privacy):
...     return "the mechanism's own curve"
>>> table.find(object(), None, None, None).name
'unsampled'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import UnsupportedCombinationError
from .relations import NeighbouringRelation

__all__ = ["ANY", "Rule", "RuleTable"]


class _Any:
    def __repr__(self) -> str:
        return "ANY"


#: Matches every scheme (but not "no sampling").
ANY: Any = _Any()


@dataclass(frozen=True)
class Rule:
    """One bound: applies to ``scheme`` × ``source`` × ``relation`` (``None``: any relation);
    ``grouped`` says whether it also applies with an explicit group-privacy choice; ``exact``
    that it gives the event's own worst case (not a theorem's bound on it) whenever the
    mechanism's pair is exact."""

    name: str
    scheme: Any
    source: type | tuple[type, ...]
    relation: NeighbouringRelation | None
    grouped: bool
    build: Callable[..., Any]
    exact: bool = False

    def matches(self, mechanism, scheme, relation, group_privacy) -> bool:
        if self.scheme is None:
            if scheme is not None:
                return False
        elif self.scheme is not ANY and not isinstance(scheme, self.scheme):
            return False
        if self.scheme is ANY and scheme is None:
            return False
        if self.relation is not None and relation is not self.relation:
            return False
        if group_privacy is not None and not self.grouped:
            return False
        return isinstance(mechanism, self.source)


class RuleTable:
    """The ordered rules of one backend (first match wins)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.rules: list[Rule] = []

    def rule(self, *, scheme: Any, source: type | tuple[type, ...],
             relation: NeighbouringRelation | None = None, grouped: bool = True,
             exact: bool = False):
        """Decorator adding ``build(mechanism, scheme, relation, group_privacy)`` as a rule."""

        def add(build):
            self.rules.append(Rule(build.__name__, scheme, source, relation, grouped, build,
                                   exact))
            return build

        return add

    def find(self, mechanism, scheme, relation, group_privacy) -> Rule:
        """The first rule for the event, or :class:`UnsupportedCombinationError` naming it."""
        for rule in self.rules:
            if rule.matches(mechanism, scheme, relation, group_privacy):
                return rule
        raise UnsupportedCombinationError(
            f"the {self.backend!r} backend has no bound for {mechanism!r}"
            + ("" if scheme is None else f" on {scheme!r}")
            + ("" if relation is None else f" under {relation.value!r}"))

    def build(self, mechanism, scheme, relation, group_privacy):
        """The rule's result for the event."""
        return self.find(mechanism, scheme, relation, group_privacy).build(
            mechanism, scheme, relation, group_privacy)
