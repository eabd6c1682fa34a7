"""Theorem 14 (Poisson under substitution) by tabulation, against an mpmath reference.

:class:`~privamp.amplification._tables.ShiftedSum` replaces the term-by-term sum of BBG
Theorem 14 once there are more than a few dozen subsample sizes. Its values must be upper bounds
on the exact bound (computed here independently in mpmath: binomial weights, the extended
profile in closed form) and close to it; the cases are generated over mechanisms (smooth and pure
DP), dataset sizes on both sides of the switch to the table, rates from tiny to near 1, and ε'
from 0 through the table's end to ∞.
"""

from __future__ import annotations

import itertools
import math
import tracemalloc

import mpmath as mp
import numpy as np
import pytest

from privamp import GaussianMechanism, LaplaceMechanism
from privamp.amplification import amplify
from privamp.amplification import subsampling as sub
from privamp.amplification._tables import X_MAX
from privamp.mechanisms import RandomizedResponse
from privamp.sampling import Poisson

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 30


def _gauss(theta):
    def delta(e):
        return (mp.ncdf(theta / 2 - e / theta) - mp.exp(e) * mp.ncdf(-theta / 2 - e / theta))
    return delta


def _laplace(theta):
    def delta(e):
        return max(mp.mpf(0), 1 - mp.exp((e - theta) / 2))
    return delta


def _rr(p):
    def delta(e):
        q = mp.mpf(p)  # at the precision of the call
        return max(mp.mpf(0), q - mp.exp(e) * (1 - q))
    return delta


MECHANISMS = {
    "gaussian-0.5": (GaussianMechanism(0.5, relation="substitute"), _gauss(mp.mpf(2)), 1e-4),
    "gaussian-1": (GaussianMechanism(1.0, relation="substitute"), _gauss(mp.mpf(1)), 1e-4),
    "gaussian-4": (GaussianMechanism(4.0, relation="substitute"), _gauss(mp.mpf(1) / 4), 1e-4),
    "laplace-0.5": (LaplaceMechanism(0.5, relation="substitute"), _laplace(mp.mpf(2)), None),
    # an exact decimal string: the mpf is rounded at the precision current when it is used
    "rr-0.8": (RandomizedResponse(0.8, relation="substitute"), _rr("0.8"), None),
}


def _extended(delta, e):
    """The extended profile (catalogue erratum E3): δ(e) for e ≥ 0, 1 − e^e + e^e δ(−e) below."""
    if e >= 0:
        return delta(e)
    return 1 - mp.exp(e) + mp.exp(e) * delta(-e)


def theorem14_mp(delta, n, g, eps_prime):
    """BBG Theorem 14 in mpmath, every k from 1 to n (no window)."""
    g = mp.mpf(g)
    if eps_prime == mp.inf:
        eps = mp.inf
        beta = g
    else:
        eps = mp.log(1 + (mp.exp(eps_prime) - 1) / g)
        beta = mp.exp(eps_prime - eps)
    first = g * beta * (delta(eps) if eps != mp.inf else 0)
    inner = mp.mpf(0)
    for k in range(1, n + 1):
        w = mp.binomial(n - 1, k - 1) * g ** (k - 1) * (1 - g) ** (n - k)
        if k == n:
            inner += w
        elif eps != mp.inf:
            inner += w * _extended(delta, eps + mp.log(g / (1 - g) * (mp.mpf(n) / k - 1)))
    return first + g * (1 - beta) * inner


CASES = [(m, n, g) for m, n, g in itertools.product(MECHANISMS, (30, 60, 250), (1e-3, 0.05, 0.6))]


@pytest.mark.parametrize(("mech", "n", "rate"), CASES, ids=[f"{m}-n{n}-q{g}" for m, n, g in CASES])
def test_upper_values_against_mpmath(mech, n, rate):
    """Table (n > 49) and term-by-term (n ≤ 49) upper values: never below the exact bound, and
    for smooth profiles never above the exact bound at ε' lowered by 1e-5 (1 + ε') — the chords'
    second-order error, measured where it matters, in ε (relative to δ it grows with the
    profile's slope)."""
    mechanism, delta, tol = MECHANISMS[mech]
    prof = amplify(mechanism, Poisson(rate, n=n), relation="substitute")
    assert (prof._table is not None) == (n - 1 > sub._DIRECT_SHIFTS)
    pts = [0.0, 1e-6, 0.01, 0.2, 0.7, 1.5, 3.0, 6.0, X_MAX / 4, X_MAX * 1.5, math.inf]
    got = prof.delta(np.array(pts))
    for ep, d in zip(pts, got, strict=True):
        exact = theorem14_mp(delta, n, rate, mp.mpf(ep) if math.isfinite(ep) else mp.inf)
        assert d >= exact * (1 - 1e-15) - 1e-300, (ep, d, exact)
        # (below 1e-30 the sum can be made of the weights on coarse taps: safe, looser)
        if tol is not None and exact > 1e-30 and 0 < ep < math.inf and d > exact * (1 + 1e-10):
            shifted = theorem14_mp(delta, n, rate, max(mp.mpf(0), ep - tol / 10 * (1 + ep)))
            assert d <= shifted, (ep, d, exact, shifted)
        elif exact > 1e-6:
            assert d <= exact * 1.02 + 1e-9, (ep, d, exact)


@pytest.mark.parametrize("rate", [1e-4, 0.01, 0.5])
def test_large_n_window_against_term_by_term(rate):
    """n = 60,000 (a window of the binomial, mass outside counted as δ = 1): the table's values
    are upper bounds on the term-by-term sum over the same window, and close to it."""
    base = GaussianMechanism(1.0, relation="substitute")
    prof = amplify(base, Poisson(rate, n=60_000), relation="substitute")
    eps_prime = np.concatenate([np.linspace(0, 2, 41), [3.0, 5.0, 10.0]])
    table = prof._log_delta(eps_prime)
    saved, prof._table = prof._table, None
    try:
        direct = prof._log_delta(eps_prime)
    finally:
        prof._table = saved
    ok = np.isfinite(direct)
    assert np.all(table[ok] >= direct[ok] - 1e-12)
    assert np.all(table[ok] - direct[ok] <= 1e-4)


def test_memory_is_independent_of_the_window():
    """The old evaluation held (window size) × (points) floats — 4 GB in an accountant at
    n = 60,000; the table holds one row per grid point."""
    prof = amplify(GaussianMechanism(1.0, relation="substitute"), Poisson(0.01, n=60_000),
                   relation="substitute")
    eps_prime = np.linspace(0.0, 8.0, 200_000)
    tracemalloc.start()
    try:
        prof._log_delta(eps_prime)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 150 * 2**20  # 200k points × a few arrays; the window alone is ≈1,500 rows


def test_accountant_matches_term_by_term_at_small_T(monkeypatch):
    """Composed through the PLD engine, the table changes ε by a relative 1e-5 at most (and
    upward: both are certified upper ends)."""
    from privamp import Accountant

    mech = GaussianMechanism(1.0, relation="substitute")

    def eps() -> float:
        acc = Accountant()
        acc.add(mech, 20, scheme=Poisson(0.05, n=120), relation="substitute")
        return acc.epsilon(1e-6).upper

    fast = eps()
    monkeypatch.setattr(sub, "_DIRECT_SHIFTS", 10**9)
    slow = eps()
    assert fast != slow  # the second really went term by term
    assert fast >= slow * (1 - 1e-12)
    assert fast <= slow * (1 + 1e-5)
