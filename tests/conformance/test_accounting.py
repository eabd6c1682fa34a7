"""Every (mechanism, scheme, relation, backend) the API accepts, on the boundary grid.

For each case of :func:`conformance.cases.cases` and each backend, one ε(δ) and one δ(ε) query
(step counts and δ/ε in rotation over the grids, so each value meets every mechanism and
scheme). Each answer must be a valid bracket or a typed refusal (``PrivampError``: never a
traceback of another kind, never NaN), contain the exact value where one is known
independently (:func:`conformance.checks.exact_epsilon`), and overlap the answer of the
simpler scheme the case reduces to at its boundary (Poisson at rate 1 and WOR with m = n are no
subsampling; MUST.OW with b = n is WR; MUST.WO is WR; …) — the check that catches a defect
like issue 15's rate-1 hole.
"""

from __future__ import annotations

import pytest

from conformance.cases import BACKENDS, DELTAS, EPSILONS, STEPS, cases
from conformance.checks import (
    assert_contains,
    assert_valid,
    exact_delta,
    exact_epsilon,
    overlap,
    query,
)
from privamp.errors import PrivampError

CASES = cases()


def _heavy(case, steps) -> bool:
    """Cases that take seconds: large WR/MUST multiplicities, long compositions."""
    return _large(case) or steps >= 1000


def _large(case) -> bool:
    """A WR/MUST example with n ≥ 1000: its multiplicity law makes every query take seconds."""
    s = case.scheme
    return bool(s is not None and getattr(s, "n", 0) and s.n >= 1000 and s.kind != "poisson")


def _kind(case) -> str:
    return "none" if case.scheme is None else case.scheme.kind


def _coverage_keys(case, backend, steps, delta, eps, queries: str) -> set:
    """What a query contributes to the coverage the grid must keep: the query path (backend
    and kind of query) meeting every mechanism example × scheme kind × relation, every scheme
    example × relation (each boundary of every scheme: rate 1, m = 1, m = n, b = n, …), and
    every value of the query's own parameter (δ for ε queries, ε for δ queries) and every step
    count meeting every mechanism, every scheme kind and each other."""
    value = delta if queries == "epsilon" else eps
    path = (queries, backend)
    mech = (case.mechanism, case.index)
    return {
        (*path, "mechanism×kind×relation", mech, _kind(case), case.relation),
        (*path, "scheme×relation", repr(case.scheme), case.relation),
        (*path, "mechanism×value", mech, value),
        (*path, "kind×value", _kind(case), value),
        (*path, "mechanism×steps", mech, steps),
        (*path, "kind×steps", _kind(case), steps),
        (*path, "steps×value", steps, value),
    }


def _rotation(queries: str):
    """Every case with the ``pld`` backend, and with one of the other backends in turn (the
    rdp and fourier backends alternate over the cases, ε queries only). The other backends skip
    the n ≥ 1000 examples of WR and MUST (up to two minutes a query; the same schemes at n = 10
    and 100 are covered). Step counts, δ and ε are taken in rotation."""
    out = []
    others = [b for b in BACKENDS if b != "pld"]
    for i, case in enumerate(CASES):
        backends = ["pld"] + ([others[i % len(others)]] if queries == "epsilon"
                              and not _large(case) else [])
        for j, backend in enumerate(backends):
            steps = STEPS[(i + j) % len(STEPS)]
            delta = DELTAS[(i + 2 * j) % len(DELTAS)]
            eps = EPSILONS[(i + j) % len(EPSILONS)]
            out.append((case, backend, steps, delta, eps))
    return out


def _covering(queries: str, rows=None) -> list:
    """The rows of :func:`_rotation` that keep every key of :func:`_coverage_keys`: the ε(δ)
    queries of the ``pld`` backend are all kept (every mechanism example on every scheme
    example, the suite's core); the δ(ε) queries and the other backends' queries are thinned
    to a covering, greedily in case order (a row is kept when it covers a key no earlier row
    did). This keeps each boundary the rotation reaches — every scheme example × relation,
    every δ or ε value with every mechanism, scheme kind and step count — and halves
    ``make test``'s largest module (checked by :func:`test_the_grid_keeps_its_coverage`)."""
    rows = _rotation(queries) if rows is None else rows
    kept, seen = [], set()
    for row in rows:
        keys = _coverage_keys(*row, queries)
        if (queries == "epsilon" and row[1] == "pld") or not keys <= seen:
            kept.append(row)
            seen |= keys
    return kept


def _grid(queries: str):
    out = []
    for case, backend, steps, delta, eps in _covering(queries):
        marks = [pytest.mark.slow] if _heavy(case, steps) or backend != "pld" else []
        out.append(pytest.param(case, backend, steps, delta, eps, marks=marks,
                                id=f"{case.id}-{backend}-T{steps}-d{delta:g}-e{eps:g}"))
    return out


@pytest.mark.parametrize("queries", ["epsilon", "delta"])
def test_the_grid_keeps_its_coverage(queries):
    """The thinned grid covers every key the full rotation covers, and every (mechanism
    example, scheme example, relation) still has an ε(δ) query with the pld backend."""
    full = _rotation(queries)
    kept = _covering(queries)
    want = set().union(*(_coverage_keys(*row, queries) for row in full))
    have = set().union(*(_coverage_keys(*row, queries) for row in kept))
    assert have == want
    if queries == "epsilon":
        assert {row[0] for row in kept if row[1] == "pld"} == set(CASES)


def _reduced_query(case, steps, backend, **query_kw):
    mech, scheme, rel = case.build()
    reduced = scheme.reduced() if scheme is not None else None
    if scheme is None or reduced is scheme:
        return None
    # the reduced scheme's base relation is the same (it is the same theorem's law)
    return query(mech, reduced, rel, steps, backend, **query_kw)


@pytest.mark.parametrize(("case", "backend", "steps", "delta", "eps"), _grid("epsilon"))
def test_epsilon(case, backend, steps, delta, eps):
    mech, scheme, rel = case.build()
    b = query(mech, scheme, rel, steps, backend, delta=delta)
    if isinstance(b, PrivampError):
        return  # a clean refusal (checked to be typed by query)
    assert_valid(b)
    exact = exact_epsilon(mech, scheme, rel, steps, delta)
    if exact is not None:
        assert_contains(b, exact, upper_only=backend == "rdp")
    other = _reduced_query(case, steps, backend, delta=delta)
    if other is not None and not isinstance(other, PrivampError):
        assert overlap(b, other), (b, other)


@pytest.mark.parametrize(("case", "backend", "steps", "delta", "eps"), _grid("delta"))
def test_delta(case, backend, steps, delta, eps):
    mech, scheme, rel = case.build()
    b = query(mech, scheme, rel, steps, backend, eps=eps)
    if isinstance(b, PrivampError):
        return
    assert_valid(b)
    assert b.upper <= 1
    exact = exact_delta(mech, scheme, steps, eps)
    if exact is not None:
        assert_contains(b, exact, upper_only=backend == "rdp")
    other = _reduced_query(case, steps, backend, eps=eps)
    if other is not None and not isinstance(other, PrivampError):
        assert overlap(b, other), (b, other)
