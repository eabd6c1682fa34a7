"""Issue 20: the ledger's RDP curve, its zCDP ρ and the exact Poisson-subsampled RDP over the
registered mechanisms and schemes (generated from the registries, like the rest of the suite).

For every case (a rotation over :func:`conformance.cases.cases`): if the RDP backend accepts
the event, ``Accountant.rdp_curve`` answers for a ledger of *every* backend, its conversion is
never below the RDP backend's ε (which optimises the order further), and ``zcdp_rho`` bounds the
curve on its grid (D_a ≤ ρa); if not, both refuse by naming the event. For every mechanism
with an exact Poisson curve: the exact curve lies below the factor-3 bound, its lower values
below its upper values, and at rate 1 it is the mechanism's own curve.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.cases import cases
from privamp.accountant import BACKENDS, Accountant, Backend, Event
from privamp.errors import PrivampError, UnsupportedCombinationError
from privamp.mechanisms import REGISTRY
from privamp.rdp import rdp_curve, zhu_wang_upper_bound
from privamp.rdp.ledger import ledger_zcdp
from privamp.rdp.poisson_exact import has_exact_poisson, poisson_exact_rdp
from privamp.rdp.sources import RDP_RULES
from privamp.relations import NeighbouringRelation
from privamp.sampling import Poisson

ORDERS = np.array([1.05, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0, 256.0, 1024.0, math.inf])
ZCDP_GRID = ORDERS[:-1]
def _large(case) -> bool:
    """A WR/MUST example with n ≥ 1000: its multiplicity law takes seconds to half a minute per
    curve (the same schemes at n = 10 and 100 are covered)."""
    s = case.scheme
    return bool(s is not None and getattr(s, "n", 0) and s.n >= 1000 and s.kind != "poisson")


#: a deterministic rotation: every 13th case, without the n ≥ 1000 WR/MUST examples
CASES = [c for c in cases()[::13] if not _large(c)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_ledger_rdp_curve_and_zcdp(case):
    mech, scheme, rel = case.build()
    event = Event(mech, 10, scheme, rel)
    try:
        reason = BACKENDS[Backend.RDP].supports(event)
    except PrivampError as exc:
        reason = str(exc)
    for backend in ("pld", "rdp"):
        acc = Accountant(backend)
        try:
            acc.add(mech, 10, scheme=scheme, relation=rel)
        except PrivampError:
            continue  # this backend refuses the event at add (its own rules)
        if reason is not None:
            with pytest.raises(UnsupportedCombinationError, match="ledger event 10 x"):
                acc.rdp_curve(ORDERS)
            with pytest.raises(UnsupportedCombinationError, match="ledger event 10 x"):
                ledger_zcdp(acc.segments, ZCDP_GRID)
            continue
        rule = RDP_RULES.find(mech, scheme, event.effective_relation, None)
        if rule.name == "amplified_theorem6":
            # Theorem 6 on an amplified profile: an integral per order (seconds): the curve
            # at three orders only, no ε or ρ search
            curve = acc.rdp_curve([2.0, 8.0, math.inf])
            assert curve.bound == "upper" and np.all(curve.epsilons >= 0)
            continue
        curve = acc.rdp_curve(ORDERS)
        assert curve.bound == "upper" and np.all(curve.epsilons >= 0)
        if backend == "rdp":
            eps_rdp = acc.epsilon(1e-6).upper
            eps_curve = curve.epsilon(1e-6, warn=False)
            assert eps_curve >= eps_rdp * (1 - 1e-12)
        z = ledger_zcdp(acc.segments, ZCDP_GRID, refinements=1)
        finite = np.isfinite(curve.orders)
        assert np.all(curve.epsilons[finite] <= z.rho * curve.orders[finite] * (1 + 1e-12)), z
        if math.isinf(z.rho):
            assert z.reason


EXACT = [(name, i) for name in REGISTRY
         for i, m in enumerate(REGISTRY[name].examples(NeighbouringRelation.ADD_REMOVE))
         if has_exact_poisson(m)]


@pytest.mark.parametrize("name, index", EXACT)
@pytest.mark.parametrize("rate", [1e-9, 1e-3, 0.3, 1.0])
def test_exact_poisson_curve(name, index, rate):
    mech = REGISTRY[name].examples(NeighbouringRelation.ADD_REMOVE)[index]
    ints = np.arange(2.0, 40.0)
    exact = poisson_exact_rdp(mech, rate, ints)
    assert np.all(exact.lower_epsilons <= exact.epsilons)
    if np.all(np.isfinite(exact.epsilons)):  # (the factor-3 bound of an infinite curve is NaN)
        zw = zhu_wang_upper_bound(mech, rate, ints)
        assert np.all(exact.epsilons <= zw.epsilons * (1 + 1e-12))
    if rate == 1.0:
        base = rdp_curve(mech, ints)
        np.testing.assert_allclose(exact.epsilons, base.epsilons, rtol=1e-12)
        assert np.all(exact.epsilons >= base.lower_epsilons)
    # the accountant's rule uses it
    acc = Accountant("rdp").add(mech, 3, scheme=Poisson(rate))
    ledger = acc.rdp_curve(ints).epsilons
    direct = (poisson_exact_rdp(mech, rate, ints) * 3).epsilons
    np.testing.assert_allclose(ledger, direct, rtol=1e-13)
    assert np.all(ledger >= direct)  # the sum is rounded up once more
