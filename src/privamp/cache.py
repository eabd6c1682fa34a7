"""Memo of the pure intermediate results of accounting, shared between many queries.

An :class:`AccountingCache` handed to :class:`~privamp.accountant.Accountant` (``cache=``) or to
the PLD engine (:func:`~privamp.pld.engine.pld_epsilon`, ``cache=``) remembers work that does
not depend on the query: the dominating-pair curves of an event, the ranges and coarse moments
of each step's privacy loss, discretised step PLDs, composed PLDs, and the RDP curves of each
source at each set of orders. Every memoised function is pure — the same inputs give the same
floating-point result — so a cache changes how long a query takes, **never its answer**: an
accountant with a cache returns exactly the numbers of one without (the sweep tests check this
row by row).

Keys hold values, not identities, except for objects the cache itself keeps alive (the curves of
:meth:`pair_curves`; anything passed to :meth:`token`), so an identity can never be reused by a
different object while its entries exist. Large entries (step and composed PLDs) live in
byte-bounded least-recently-used tables; past :data:`MAX_PINNED` kept-alive objects the cache
starts over (a new generation of tokens), so a cache that lives as long as a training run stays
bounded.

>>> from privamp import GaussianMechanism
>>> from privamp.accountant import Accountant
>>> from privamp.sampling import Poisson
>>> cache = AccountingCache()
>>> a = Accountant(cache=cache).add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.01))
>>> b = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.01))
>>> a.epsilon(1e-5) == b.epsilon(1e-5), a.epsilon(1e-6).upper > a.epsilon(1e-5).upper
(True, True)
>>> cache.stats["step_range"]["hits"] > 0       # the second δ reused the step ranges
True
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from ._validation import check_int

__all__ = ["MAX_PINNED", "AccountingCache"]

#: Default byte budgets of the large tables (discretised steps, composed PLDs).
_DEFAULT_BYTES = {"step": 256 * 2**20, "composed": 512 * 2**20}
#: Most objects a cache keeps alive for their identity keys (:meth:`AccountingCache.token`).
#: Beyond it every table is emptied together with the pins, and the tokens change generation, so
#: a long-lived cache fed new curve objects (group pairs are built per query) stays bounded.
MAX_PINNED = 4096


def _nbytes(value: Any) -> int:
    """Rough memory footprint of a cached value (arrays dominate; 1 kB otherwise)."""
    total = 1024
    for name in ("masses",):
        arr = getattr(value, name, None)
        if isinstance(arr, np.ndarray):
            # a composed PLD also keeps about seven suffix-sum arrays of the same length
            total += arr.nbytes * (8 if hasattr(value, "spectral_coeff") else 1)
    return total


class _Table:
    """One memo table: unbounded, or least-recently-used within a byte budget."""

    def __init__(self, max_bytes: int | None):
        self.max_bytes = max_bytes
        self.items: OrderedDict = OrderedDict()
        self.sizes: dict = {}
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        if key in self.items:
            self.hits += 1
            if self.max_bytes is not None:
                self.items.move_to_end(key)
            return self.items[key]
        self.misses += 1
        value = compute()  # exceptions propagate and nothing is stored
        if self.max_bytes is not None:
            size = _nbytes(value)
            if size > self.max_bytes:
                return value
            while self.items and self.bytes + size > self.max_bytes:
                old, _ = self.items.popitem(last=False)
                self.bytes -= self.sizes.pop(old)
            self.sizes[key] = size
            self.bytes += size
        self.items[key] = value
        return value


class AccountingCache:
    """Memo tables for accounting work shared between queries (see the module doc).

    Parameters
    ----------
    step_bytes, composed_bytes : int, optional
        Memory budgets of the discretised-step and composed-PLD tables (least recently used
        entries are dropped beyond them; defaults 256 MB and 512 MB).

    Attributes
    ----------
    stats : dict
        ``{table: {"hits": h, "misses": m, "entries": n}}`` (a snapshot on each read).
    """

    def __init__(self, *, step_bytes: int | None = None, composed_bytes: int | None = None):
        budgets = dict(_DEFAULT_BYTES)
        if step_bytes is not None:
            budgets["step"] = check_int("step_bytes", step_bytes, "[0, inf)")
        if composed_bytes is not None:
            budgets["composed"] = check_int("composed_bytes", composed_bytes, "[0, inf)")
        self._budgets = budgets
        self._tables: dict[str, _Table] = {}
        self._pinned: dict[int, Any] = {}
        self._generation = 0

    def memo(self, table: str, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()`` the first time ``(table, key)`` is asked for, the stored value after."""
        tab = self._tables.get(table)
        if tab is None:
            tab = self._tables[table] = _Table(self._budgets.get(table))
        return tab.get(key, compute)

    def token(self, obj: Any) -> tuple[int, int]:
        """A key standing for ``obj`` itself: ``(generation, identity)``, kept valid by keeping
        ``obj`` alive while its generation lasts.

        Past :data:`MAX_PINNED` objects the cache starts a new generation: it empties every table
        and drops its pins. A computation under way may still store an entry keyed by a token
        of the old generation (its object alive while it runs); no later token equals that key,
        even if a new object reuses the identity, so no query ever reads it."""
        ident = id(obj)
        if ident not in self._pinned and len(self._pinned) >= MAX_PINNED:
            self.clear()
        self._pinned.setdefault(ident, obj)
        return (self._generation, ident)

    def clear(self) -> None:
        """Forget every entry and every pinned object, and start a new generation of tokens
        (the hit and miss counts are kept)."""
        for tab in self._tables.values():
            tab.items.clear()
            tab.sizes.clear()
            tab.bytes = 0
        self._pinned.clear()
        self._generation += 1

    def pair_curves(self, source: Any, scheme: Any = None, relation: Any = None,
                    group_privacy: Any = None) -> dict:
        """:func:`~privamp.pld.builders.pair_curves`, one set of curve objects per distinct
        (frozen, hashable) event, so that later tables can key on the curves' identities."""
        from .pld.builders import pair_curves

        try:
            key = (source, scheme, relation, group_privacy)
            hash(key)
        except TypeError:  # an unhashable user object: no sharing, still correct
            return pair_curves(source, scheme, relation, group_privacy)
        curves = self.memo("pair_curves", key,
                           lambda: pair_curves(source, scheme, relation, group_privacy))
        for curve in curves.values():
            self.token(curve)
        return curves

    def rdp_curve(self, key: Hashable, orders: np.ndarray, compute: Callable[[], Any]) -> Any:
        """The RDP curve of the source identified by ``key`` at ``orders`` (memoised)."""
        orders = np.asarray(orders, dtype=float)
        return self.memo("rdp", (key, orders.shape, orders.tobytes()), compute)

    @property
    def stats(self) -> dict:
        return {name: {"hits": t.hits, "misses": t.misses, "entries": len(t.items)}
                for name, t in self._tables.items()}

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}: {v['hits']}/{v['hits'] + v['misses']}"
                          for k, v in self.stats.items())
        return f"AccountingCache({parts})"
