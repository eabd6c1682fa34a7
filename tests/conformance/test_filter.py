"""The privacy filter's queries on the conformance grid: for every mechanism example (without
subsampling and with Poisson) and the first example of each scheme kind, under every relation,
``PrivacyFilter.steps_left`` is the exact boundary of the certified upper ε (T_max steps within
the budget, T_max + 1 not, on the filter's grid), the truth is within the budget where it is
known independently (:func:`conformance.checks.exact_epsilon`), ``can_add`` agrees, and a case
the ledger refuses is refused with a typed error (never another exception).

The budget is the certified ε of a few steps of the case (2 or 10, in rotation) loosened by
0.1 %, so T_max is at least that many steps and the search is near a known count (cases whose
ε is about 0 or infinite have no budget to speak of)."""

from __future__ import annotations

import math

import pytest

from conformance.cases import DELTAS, cases
from conformance.checks import exact_epsilon
from privamp.accountant import Accountant
from privamp.errors import PrivampError
from privamp.filter import PrivacyFilter

MAX_STEPS = 10**5


def _selected():
    """The first example of every mechanism without subsampling and with Poisson(0.01), under
    every relation, and the Gaussian on the first example of every scheme kind (small n)."""
    out, kinds = [], set()
    for case in cases():
        scheme = case.scheme
        if case.index > 0:
            continue
        if scheme is None or (scheme.kind == "poisson" and scheme.rate == 0.01
                              and getattr(scheme, "n", None) is None):
            out.append(case)
        elif case.mechanism == "gaussian" and (scheme.kind, case.relation) not in kinds \
                and (getattr(scheme, "n", None) or 0) <= 100:
            kinds.add((scheme.kind, case.relation))
            out.append(case)
    return out


CASES = _selected()


def _upper(mech, scheme, rel, steps, delta, budget, coarse=False):
    """The certified upper ε on the grid of the filter's fine trials, or of its coarse ones."""
    acc = (Accountant(upper_error=1e-3 * budget, shared_grid=True) if coarse
           else Accountant(upper_error=1e-5 * budget))
    acc.add(mech, steps, scheme=scheme, relation=rel if scheme is not None else None)
    return acc.epsilon(delta, lower=False).upper


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c.id for c in CASES])
def test_steps_left_is_the_boundary(i):
    case = CASES[i]
    mech, scheme, rel = case.build()
    start = (2, 10)[i % 2]
    delta = DELTAS[:3][i % 3]
    relation = rel if scheme is not None else None
    try:
        eps0 = Accountant().add(mech, start, scheme=scheme, relation=relation).epsilon(
            delta, lower=False).upper
    except PrivampError:
        return  # the ledger refuses the case: nothing to filter (typed)
    if not (1e-3 < eps0 < 1e3) or not math.isfinite(eps0):
        return  # no budget to speak of (ε about 0, or infinite)
    budget = eps0 * (1 + 1e-3)
    f = PrivacyFilter(budget, delta, max_steps=MAX_STEPS)
    try:
        t = f.steps_left(mech, scheme=scheme, relation=relation)
    except PrivampError:
        return
    assert start <= t <= MAX_STEPS
    assert f.can_add(mech, t, scheme=scheme, relation=relation)
    # certified by the fine grid, or (the count the coarse phase certified, when the coarse
    # grid is the tighter one there) by the coarse grid
    assert min(_upper(mech, scheme, rel, t, delta, budget),
               _upper(mech, scheme, rel, t, delta, budget, coarse=True)) <= budget
    if t < MAX_STEPS:
        assert not f.can_add(mech, t + 1, scheme=scheme, relation=relation)
        assert _upper(mech, scheme, rel, t + 1, delta, budget) > budget
    exact = exact_epsilon(mech, scheme, rel, t, delta)
    if exact is not None:
        assert exact <= budget * (1 + 1e-12)
