"""Groups of K records (``group_size``, :mod:`privamp.pld.group`) over the registries.

Every combination of :func:`conformance.cases.cases` that is distinct by (mechanism, scheme
kind, relation) — each mechanism meets every scheme kind and relation — with ``group_size``
K ∈ {1, 2, 3} in rotation (and the step counts 1, 2, 10 in rotation), on every backend in
rotation. Each answer must be a valid bracket or a typed refusal; K = 1 must be exactly the
query without ``group_size``; a group's upper end is never below one record's lower end; and
where the exact value is known independently — the Gaussian family without subsampling (or at
Poisson rate 1, which reduces to it), a Gaussian at sensitivity KΔ: μ-GDP with μ = √T·Kθ — the
bracket must contain it. Over the WOR/WR examples of the registry: the realizable lower end,
and the relaxed double mixture (built exactly where its proof holds, its values never below
an independent mpmath evaluation of its pair).
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


# ---- the realizable lower end of WOR/WR groups (privamp.pld.group.realizable_group_curves) ----

def _wor_wr_grid():
    from privamp.sampling import WOR, WR

    out = []
    for scheme in WOR.examples() + WR.examples():
        if scheme.n < 2:
            continue  # a group of K ≥ 2 needs two records
        for name in ("gaussian", "laplace"):
            for steps, delta in ((1, 1e-5), (2, 1e-12)):
                out.append(pytest.param(scheme, name, steps, delta,
                                        id=f"{scheme!r}-{name}-T{steps}-d{delta:g}"))
    return out


@pytest.mark.parametrize(("scheme", "name", "steps", "delta"), _wor_wr_grid())
def test_wor_wr_group_brackets_have_a_realizable_lower_end(scheme, name, steps, delta):
    """Every WOR/WR example of the registry (m = 1, n − 1, n) with the Gaussian and the Laplace
    under substitution, K = min(n, 3), T = 1 at δ 1e-5 and T = 2 at δ 1e-12: a valid bracket
    whose lower end comes from realizable pairs (so it bounds the mechanism: ``lower_end_of``
    is "mechanism"); without amplification (WOR with m = n: the group is always drawn whole)
    the Gaussian's bracket holds the exact μ-GDP value μ = √T·Kθ."""
    from privamp import GaussianMechanism, LaplaceMechanism

    k = min(scheme.n, 3)
    mech = (GaussianMechanism(2.0, relation="substitute") if name == "gaussian"
            else LaplaceMechanism(2.0, relation="substitute"))
    acc = Accountant("pld").add(mech, steps, scheme=scheme, group_size=k)
    b = acc.epsilon(delta)
    assert_valid(b)
    assert b.lower is not None
    assert acc.lower_end_of == "mechanism"
    assert acc.details["lower_from"] == "realizable pairs of datasets"
    if name == "gaussian" and getattr(scheme, "kind", "") == "wor" and scheme.m == scheme.n:
        theta = ref.gaussian_family_theta(mech)
        exact = float(ref.gdp_epsilon(ref.mpmath.sqrt(steps) * k * theta, delta))
        assert_contains(b, exact)


def _poisson_large_group_grid():
    from privamp.pld.group import TIGHT_MAX_GROUP
    from privamp.sampling import Poisson

    k = TIGHT_MAX_GROUP + 1
    out = []
    for scheme in Poisson.examples():
        if scheme.n is not None and scheme.n < k:
            continue  # a group larger than the dataset is refused
        for name in ("gaussian", "laplace"):
            for steps, delta in ((1, 1e-5), (2, 1e-12)):
                out.append(pytest.param(scheme, name, k, steps, delta,
                                        id=f"rate={scheme.rate!r}-n={scheme.n}-{name}-K{k}"
                                           f"-T{steps}-d{delta:g}"))
    return out


@pytest.mark.parametrize(("scheme", "name", "k", "steps", "delta"), _poisson_large_group_grid())
def test_poisson_groups_beyond_the_tight_pairs_have_a_realizable_lower_end(scheme, name, k,
                                                                           steps, delta):
    """Every Poisson example of the registry (rates 1e-9 … 1) with the Gaussian and the Laplace
    under add/remove (σ = b = 8: at rate 1 a group of 65 then stays within the engine's loss
    range), one record past the tight split pairs (the coupling bound): a valid bracket whose
    lower end comes from realizable pairs; at rate 1 (the whole group is always drawn) the
    Gaussian's bracket holds the exact μ-GDP value μ = √T·Kθ."""
    from privamp import GaussianMechanism, LaplaceMechanism

    mech = GaussianMechanism(8.0) if name == "gaussian" else LaplaceMechanism(8.0)
    acc = Accountant("pld").add(mech, steps, scheme=scheme, group_size=k)
    b = acc.epsilon(delta)
    assert_valid(b)
    assert acc.group_bound == "coupling"
    assert b.lower is not None
    assert acc.lower_end_of == "mechanism"
    assert acc.details["lower_from"] == "realizable pairs of datasets"
    if name == "gaussian" and scheme.rate == 1.0:
        theta = ref.gaussian_family_theta(mech)
        exact = float(ref.gdp_epsilon(ref.mpmath.sqrt(steps) * k * theta, delta))
        assert_contains(b, exact)


# ---- the relaxed double mixture of WOR/WR groups (privamp.pld.group.relaxed_group_profile) ----

def _relaxed_grid():
    from privamp.sampling import WOR, WR

    out = []
    for scheme in WOR.examples() + WR.examples():
        for k in (2, 3):
            if k >= scheme.n:
                continue  # a group needs a record outside it (and at most n records)
            for family in ("gaussian", "laplace"):
                out.append(pytest.param(scheme, k, family, id=f"{scheme!r}-K{k}-{family}"))
    return out


@pytest.mark.parametrize(("scheme", "k", "family"), _relaxed_grid())
def test_relaxed_group_bound_over_the_registry(scheme, k, family):
    """Every WOR/WR example of the registry (m = 1, n − 1, n) with K = 2, 3 and both families:
    the relaxed bound is built exactly where its proof holds (WOR: a reference batch of m
    records outside the group, n − K ≥ m; WR: a record outside the group, n > K), and there its
    values are never below the pair's 50-digit value (:func:`references.relaxed_pair_delta` with
    the hit law from the definitions) and within 1e-6 of it."""
    import numpy as np

    from privamp import GaussianMechanism, LaplaceMechanism
    from privamp.pld.group import relaxed_group_profile
    from privamp.relations import NeighbouringRelation

    noise = 2.0
    mech = (GaussianMechanism(noise, relation="substitute") if family == "gaussian"
            else LaplaceMechanism(noise, relation="substitute"))
    prof = relaxed_group_profile(mech, scheme, NeighbouringRelation.SUBSTITUTE, k)
    applies = (scheme.n - k >= scheme.m) if scheme.kind == "wor" else scheme.n > k
    assert (prof is not None) == applies, (scheme, k)
    if prof is None:
        return
    weights = ref.group_hit_law(scheme, k)
    eps = np.array([0.0, 0.3, 1.0, 3.0])
    got = np.exp(prof._log_delta(eps))
    for e, value in zip(eps.tolist(), got.tolist(), strict=True):
        exact = ref.relaxed_pair_delta(family, weights, 1 / noise, e)
        if exact < ref.mpmath.mpf("1e-290"):
            continue
        assert value >= exact, (e, value, exact)
        assert value <= exact * (1 + 1e-6) + 1e-29, (e, value, exact)
