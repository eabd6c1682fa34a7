"""A ledger asked for ε after every epoch, with grids planned for a horizon, on every scheme.

``Accountant(horizon=H)`` chooses the grids for the planned run so that the queries of a growing
ledger share their discretised steps and transforms (:func:`privamp.pld.engine.pld_epsilon`,
``horizon``). For every scheme kind and relation, two mechanisms in rotation (every mechanism
meets the horizon; every example is in test_accounting), two epochs of a ledger with a horizon
shorter than the run (so that the plan doubles) must give

* valid brackets that contain the exact value where one is known independently and overlap the
  default grids' bracket (both enclose the same ε),
* exactly the bracket of a fresh accountant asked once at the same count (the answer depends on
  the arguments, never on the previous queries: what the queries share changes only the time).
"""

from __future__ import annotations

import warnings

import pytest

from conformance.cases import DELTAS, cases
from conformance.checks import assert_contains, assert_valid, exact_epsilon, overlap
from conformance.test_accounting import _large
from privamp.accountant import Accountant
from privamp.errors import AccuracyWarning, PrivampError


def _rotation():
    """One case per scheme class and relation (no subsampling included), the mechanisms and
    the scheme examples taken in turn, so that every mechanism and every scheme kind meets the
    horizon (every pair is in test_accounting; the horizon changes only the grid choices)."""
    by_key: dict = {}
    for case in cases():
        if _large(case) or case.index != 0:
            continue
        key = (type(case.scheme).__name__, case.relation.value)
        by_key.setdefault(key, {}).setdefault(case.mechanism, []).append(case)
    out = []
    for i, (_key, by_mech) in enumerate(sorted(by_key.items())):
        names = sorted(by_mech)
        for j in range(2):  # two mechanisms per scheme kind, in rotation
            group = by_mech[names[(2 * i + j) % len(names)]]
            case = group[(i + j) % len(group)]
            out.append(pytest.param(case, DELTAS[(i + j) % 3], id=case.id))
    return out


def _ledger(case, horizon, epochs):
    mech, scheme, rel = case.build()
    acc = Accountant(horizon=horizon)
    for steps in epochs:
        acc.add(mech, steps, scheme=scheme, relation=rel if scheme is not None else None)
    return acc


@pytest.mark.parametrize(("case", "delta"), _rotation())
def test_epoch_queries_with_a_horizon(case, delta):
    mech, scheme, rel = case.build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)  # widths are checked elsewhere
        try:
            acc = _ledger(case, 4, [3])
            first = acc.epsilon(delta)
            acc.add(mech, 9, scheme=scheme, relation=rel if scheme is not None else None)
            second = acc.epsilon(delta)  # 12 steps: the plan doubled from 4 to 16
        except PrivampError:
            return  # a clean refusal (the default accountant refuses it alike: test_accounting)
        fresh = _ledger(case, 4, [12]).epsilon(delta)
        default = Accountant().add(mech, 12, scheme=scheme,
                                   relation=rel if scheme is not None else None).epsilon(delta)
    for b in (first, second):
        assert_valid(b)
    assert fresh == second, (fresh, second)
    assert overlap(second, default), (second, default)
    for steps, b in ((3, first), (12, second)):
        exact = exact_epsilon(mech, scheme, rel, steps, delta)
        if exact is not None:
            assert_contains(b, exact)
