"""ε grows with the sampling rate, the number of steps, 1/σ and the subsample size, and falls
with δ — within the reported brackets: for parameters a ≤ b the bracket at a may not lie
entirely above the bracket at b (its lower end ≤ the other's upper end). A defect at a boundary
(rate 1 under-reported 100×) breaks exactly this."""

from __future__ import annotations

import itertools

import pytest

from conformance.checks import assert_valid, query
from privamp.errors import PrivampError
from privamp.mechanisms import REGISTRY, GaussianMechanism
from privamp.relations import NeighbouringRelation
from privamp.sampling import Poisson, WithoutReplacement, WithReplacement

R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE
RATES = (1e-6, 1e-3, 0.01, 0.1, 0.5, 1 - 1e-12, 1.0)


def _non_decreasing(brackets):
    """lower(a) ≤ upper(b) for every a before b (refusals skipped)."""
    ok = [b for b in brackets if not isinstance(b, PrivampError)]
    for b in ok:
        assert_valid(b)
    for a, b in itertools.combinations(ok, 2):
        if a.lower is not None:
            assert a.lower <= b.upper * (1 + 1e-12), (a, b)


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("steps", [1, 10])
def test_epsilon_grows_with_the_poisson_rate(name, steps):
    mech = REGISTRY[name].examples(R)[0]
    _non_decreasing([query(mech, Poisson(q), R, steps, "pld", delta=1e-5) for q in RATES])


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("scheme", [None, Poisson(0.01), Poisson(1.0)], ids=repr)
def test_epsilon_grows_with_the_steps(name, scheme):
    mech = REGISTRY[name].examples(R)[0]
    _non_decreasing([query(mech, scheme, R, t, "pld", delta=1e-5) for t in (1, 2, 10, 100)])


@pytest.mark.parametrize("scheme", [None, Poisson(0.01), Poisson(1.0),
                                    WithoutReplacement(1000, 10)], ids=repr)
def test_epsilon_grows_with_one_over_sigma(scheme):
    rel = R if scheme is None or isinstance(scheme, Poisson) else S
    _non_decreasing([query(GaussianMechanism(s, relation=rel), scheme, rel, 10, "pld",
                           delta=1e-5) for s in (5.0, 2.0, 1.0, 0.7, 0.5)])


@pytest.mark.parametrize("cls", [WithoutReplacement, WithReplacement], ids=lambda c: c.kind)
def test_epsilon_grows_with_the_subsample_size(cls):
    mech = GaussianMechanism(2.0, relation=S)
    _non_decreasing([query(mech, cls(1000, m), S, 10, "pld", delta=1e-5)
                     for m in (1, 10, 100, 999, 1000)])


@pytest.mark.parametrize("scheme", [None, Poisson(0.01), Poisson(1.0)], ids=repr)
def test_epsilon_falls_with_delta(scheme):
    mech = GaussianMechanism(1.0)
    brackets = [query(mech, scheme, R, 10, "pld", delta=d)
                for d in (1e-3, 1e-5, 1e-10, 1e-30, 1e-100)]
    _non_decreasing(brackets)  # δ decreasing: ε non-decreasing
