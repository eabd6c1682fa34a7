"""Groups of K records (``group_size``, :mod:`privamp.pld.group`) over the registries.

Every combination of :func:`conformance.cases.cases` that is distinct by (mechanism, scheme
kind, relation) — each mechanism meets every scheme kind and relation — with ``group_size``
K ∈ {1, 2, 3} in rotation (and the step counts 1, 2, 10 in rotation), on every backend in
rotation. Each answer must be a valid bracket or a typed refusal; K = 1 must be exactly the
query without ``group_size``; a group's upper end is never below one record's lower end; and
where the exact value is known independently — the Gaussian family without subsampling (or at
Poisson rate 1, which reduces to it), a Gaussian at sensitivity KΔ: μ-GDP with μ = √T·Kθ — the
bracket must contain it.
"""

from __future__ import annotations

import pytest

from conformance import references as ref
from conformance.cases import BACKENDS, DELTAS, cases
from conformance.checks import assert_contains, assert_valid, query
from privamp.accountant import Accountant
from privamp.errors import InconsistentBoundsError, PrivampError

GROUP_SIZES = (1, 2, 3)
GROUP_STEPS = (1, 2, 10)


def _distinct():
    seen, out = set(), []
    for case in cases():
        kind = getattr(case.scheme, "kind", None) if case.scheme is not None else None
        key = (case.mechanism, kind, case.relation, case.index == 0)
        if key not in seen:
            seen.add(key)
            out.append(case)
    return out


def _grid():
    out = []
    for i, case in enumerate(_distinct()):
        k = GROUP_SIZES[i % len(GROUP_SIZES)]
        steps = GROUP_STEPS[(i // len(GROUP_SIZES)) % len(GROUP_STEPS)]
        backend = BACKENDS[i % len(BACKENDS)] if i % 2 else "pld"
        delta = DELTAS[i % 3]
        out.append(pytest.param(case, k, steps, backend, delta,
                                id=f"{case.id}-K{k}-T{steps}-{backend}-d{delta:g}"))
    return out


def _group_query(mech, scheme, rel, steps, backend, k, delta):
    try:
        acc = Accountant(backend).add(mech, steps, scheme=scheme,
                                      relation=rel if scheme is not None else None,
                                      group_size=k)
        return acc.epsilon(delta)
    except InconsistentBoundsError:
        raise
    except PrivampError as exc:
        return exc


@pytest.mark.parametrize(("case", "k", "steps", "backend", "delta"), _grid())
def test_group_epsilon(case, k, steps, backend, delta):
    mech, scheme, rel = case.build()
    b = _group_query(mech, scheme, rel, steps, backend, k, delta)
    one = query(mech, scheme, rel, steps, backend, delta=delta)
    if k == 1:
        assert type(b) is type(one)
        if not isinstance(b, PrivampError):
            assert b == one
        return
    if isinstance(b, PrivampError):
        return  # a clean refusal (rdp/fourier, the batch samplers)
    assert_valid(b)
    if not isinstance(one, PrivampError) and one.lower is not None:
        assert b.upper >= one.lower * (1 - 1e-9)
    theta = ref.gaussian_family_theta(mech)
    plain = scheme is None or (getattr(scheme, "kind", "") == "poisson"
                               and scheme.rate == 1.0 and rel.value == "add-remove")
    if theta is not None and plain:
        exact = float(ref.gdp_epsilon(ref.mpmath.sqrt(steps) * k * theta, delta))
        assert_contains(b, exact)
