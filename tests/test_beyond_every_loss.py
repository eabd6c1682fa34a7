"""δ(ε) beyond every finite loss: when ε is at least the sum of the steps' largest finite losses,
the composed loss exceeds ε only where some step's is +∞, so δ(ε) = 1 − Π(1 − p_i)^{c_i}
(``privamp.pld.engine._beyond_every_loss``) — answered without a grid.

Generated from the registries (the conformance cases: every mechanism × scheme example ×
relation). For every case whose losses privamp certifies bounded, the answer just beyond the
sum must overlap the grid's own (a fixed spacing takes the grid path), and just below the sum
the shortcut must not apply. Cases with unbounded losses (the Gaussian family) and bounds that
are not a pair's curve must not take it at any ε.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.cases import cases
from conformance.checks import overlap
from privamp.accountant import BACKENDS, Accountant
from privamp.errors import PrivampError
from privamp.pld import engine

STEPS = 3


def _events(case):
    mech, scheme, rel = case.build()
    try:
        acc = Accountant("pld").add(mech, STEPS, scheme=scheme,
                                    relation=rel if scheme is not None else None)
        return acc, BACKENDS["pld"].events(acc)
    except PrivampError:
        return None


def _total_max(events) -> float | None:
    """The largest, over the orientations, of the sum of their steps' largest finite losses."""
    worst = 0.0
    for items in engine._orientation_sets(events).values():
        total = 0.0
        for curve, count in items:
            m = engine._max_finite_loss(curve, None)
            if m is None:
                return None
            total += count * m
        worst = max(worst, total)
    return worst


# the cheap cases: the grid path runs once per case at a fixed spacing
CASES = [c for c in cases()
         if not any(s in c.id for s in ("WR(n=1000", "MUST", "StageChain", "Shuffle"))]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_beyond_every_loss_agrees_with_the_grid(case):
    got = _events(case)
    if got is None:
        return
    acc, events = got
    convex = all(curve.convex for items in engine._orientation_sets(events).values()
                 for curve, _ in items)
    total = _total_max(events) if convex else None
    if total is None:
        # unbounded (or not certified bounded), or a bound that is not a pair's curve (BBG
        # Theorem 14, black-box groups: no P(L = ∞) to speak of): no ε takes the shortcut
        for eps in (1.0, 50.0, 500.0):
            assert engine._beyond_every_loss(events, eps, None, 0.0) is None, case.id
        return
    eps = total * 1.01 + 1e-9
    res = engine._beyond_every_loss(events, eps, None, 0.0)
    assert res is not None, case.id
    assert res.grid_upper == 0.0  # answered without a grid
    b = res.bracket
    assert 0.0 <= b.lower <= b.upper <= 1.0
    grid = engine.pld_delta(events, eps, grid_step=0.01).bracket
    assert overlap(b, grid), (case.id, b, grid)
    # below the sum the shortcut does not apply (the check is on the sum, not per step)
    if total > 1e-6:
        assert engine._beyond_every_loss(events, total * 0.99, None, 0.0) is None, case.id


def test_randomized_response_composition_is_exact_beyond_its_largest_loss():
    """RR(p) composed T times: the largest loss is T·log(p/(1−p)); δ is 0 at and beyond it,
    positive just below it (the binomial law: all T outcomes at their largest loss)."""
    from privamp import RandomizedResponse

    p, t = 0.75, 10
    acc = Accountant("pld").add(RandomizedResponse(p), t)
    top = t * math.log(p / (1 - p))
    assert acc.delta(top * 1.001).upper == 0.0
    below = acc.delta(top - 0.01)
    exact = p ** t * (1 - math.exp(-0.01))  # only the all-top outcome is above
    assert below.lower <= exact <= below.upper


def test_the_shortcut_is_fast_where_the_grid_was_slow():
    """RR under Poisson(1e-6), 1,000 steps, δ at ε = 10 took the grid 22 s for 0; the answer is
    now exact and immediate (checked for value, not time)."""
    from privamp import RandomizedResponse
    from privamp.sampling import Poisson

    mech = RandomizedResponse(1 / (1 + math.exp(-1.0)))
    b = Accountant("pld").add(mech, 1000, scheme=Poisson(1e-6)).delta(10.0)
    assert b.lower == 0.0 and b.upper == 0.0
    assert np.isfinite(b.upper)
