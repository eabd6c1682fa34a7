"""Review 21 (groups of K records, issue 20 item 2): reproducers of the findings.

Each test computes the exact value independently (brute force over every subsample of a small
dataset, exact binomial composition of binary outputs) and compares it with privamp's
certified upper end. All four findings are fixed: F1 (randomized response takes the coupling
bound), F2 (the same ledger is accepted), F3 (deltas() answers point by point like delta()),
F4 (the backend setter re-checks the ledger)."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom

from privamp import Accountant
from privamp.mechanisms.randomized_response import RandomizedResponse
from privamp.sampling import WithoutReplacement, WithReplacement


def _bit_pair(scheme_subsamples, n):
    """ρ = P(b(S(x)) = 1), ρ' = P(b(S(x')) = 1) for K = 2 substitutions: x has the group records
    'G', x' has 'H' in their place; b = 1 if a G is drawn, else 0 if an H is drawn, else whether
    the fixed record r0 is drawn (an intermediate ρ' — neither end of the docstring's segment)."""
    x = ["G", "G", "r0"] + ["d"] * (n - 3)
    xp = ["H", "H", "r0"] + ["d"] * (n - 3)

    def b(vals):
        if "G" in vals:
            return 1
        if "H" in vals:
            return 0
        return int("r0" in vals)

    subs = list(scheme_subsamples)
    rho = sum(b([x[i] for i in s]) for s in subs) / len(subs)
    rhop = sum(b([xp[i] for i in s]) for s in subs) / len(subs)
    return rho, rhop


def _exact_rr(rho, rhop, p, steps, eps):
    """Exact δ(ε), max over both orders, of `steps` independent RR(p) outputs on Bern(ρ) vs
    Bern(ρ') (the composed output is the count of ones: binomial)."""
    r = lambda z: (1 - p) + z * (2 * p - 1)  # noqa: E731
    k = np.arange(steps + 1)
    P, Q = binom.pmf(k, steps, r(rho)), binom.pmf(k, steps, r(rhop))
    e = math.exp(eps)
    return max(np.maximum(P - e * Q, 0).sum(), np.maximum(Q - e * P, 0).sum())


@pytest.mark.parametrize("eps", [0.0, 3.0])
def test_rr_group_wor_under_reports(eps):
    n, m, p, steps = 8, 4, math.exp(2) / (1 + math.exp(2)), 5
    rho, rhop = _bit_pair(itertools.combinations(range(n), m), n)  # 13/14, 1/7
    exact = _exact_rr(rho, rhop, p, steps, eps)
    acc = Accountant()
    acc.add(RandomizedResponse(p, relation="substitution"), count=steps,
            scheme=WithoutReplacement(n, m), group_size=2)
    assert acc.delta(eps).upper >= exact  # observed 0.8642 < 0.8787 (ε=0); 0.5771 < 0.6006 (ε=3)


def test_rr_group_wr_under_reports():
    n, m, p, steps = 8, 4, math.exp(1) / (1 + math.exp(1)), 5
    rho, rhop = _bit_pair(itertools.product(range(n), repeat=m), n)
    exact = _exact_rr(rho, rhop, p, steps, 0.0)
    acc = Accountant()
    acc.add(RandomizedResponse(p, relation="substitution"), count=steps,
            scheme=WithReplacement(n, m), group_size=2)
    assert acc.delta(0.0).upper >= exact  # observed 0.5316 < 0.5541


def test_rr_group_wor_lower_end_claimed_for_mechanism():
    # the claim that went with F1 (fixed): the coupling bound, whose lower end is the bound's
    acc = Accountant()
    acc.add(RandomizedResponse(0.8, relation="substitution"), count=5,
            scheme=WithoutReplacement(8, 4), group_size=2)
    assert acc.group_bound == "coupling" and acc.lower_end_of == "bound"


def test_rr_group_wor_epsilon_under_reports():
    n, m, p, steps = 8, 4, math.exp(2) / (1 + math.exp(2)), 5
    rho, rhop = _bit_pair(itertools.combinations(range(n), m), n)
    assert _exact_rr(rho, rhop, p, steps, 3.0) > 0.6  # exact δ(3) = 0.6006
    acc = Accountant()
    acc.add(RandomizedResponse(p, relation="substitution"), count=steps,
            scheme=WithoutReplacement(n, m), group_size=2)
    assert acc.epsilon(0.59).upper >= 3.0  # a certified ε at δ = 0.59 must be ≥ 3


def test_group_ledger_gaussian_plus_rr_poisson():
    from privamp import GaussianMechanism
    from privamp.sampling import Poisson

    acc = Accountant()
    acc.add(GaussianMechanism(2.0), count=10, scheme=Poisson(0.1), group_size=2)
    acc.add(RandomizedResponse(0.8), count=10, scheme=Poisson(0.1), group_size=2)
    assert math.isfinite(acc.epsilon(1e-5).upper)


@pytest.mark.parametrize("backend", ["rdp", "fourier"])
def test_backend_switch_ignores_group_size(backend):
    """F4: switching to a backend that cannot account groups is refused, the ledger unchanged."""
    from privamp import GaussianMechanism
    from privamp.errors import UnsupportedCombinationError
    from privamp.sampling import Poisson

    acc = Accountant().add(GaussianMechanism(1.0), 100, scheme=Poisson(0.1), group_size=4)
    with pytest.raises(UnsupportedCombinationError, match="'pld' backend only"):
        acc.backend = backend
    assert acc.backend == "pld"
    one = Accountant().add(GaussianMechanism(1.0), 100, scheme=Poisson(0.1))
    one.backend = backend  # a one-record ledger switches
    assert one.backend == backend


def test_deltas_vs_delta_must_group():
    from privamp import GaussianMechanism
    from privamp.sampling.schemes import SCHEMES

    mech = GaussianMechanism(2.0, relation="substitute")
    scheme = SCHEMES["must-ow"](n=60000, b=30000, m=600)
    acc = Accountant().add(mech, 300, scheme=scheme, group_size=3)
    one = acc.delta(3.6).upper
    assert one <= 1e-5
    assert acc.deltas([3.6])[0].upper <= 1.0
