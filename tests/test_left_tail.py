"""The left end of a step's loss range leaves out the loss −∞ (it has no P-mass).

The PLD engine cuts each step's loss at a left end ε₀ whose P-mass below is within the tail
budget, from P(L < ε₀) ≤ e^{ε₀} E_Q[(α − e^L)_+; L > −∞]/(α − e^{ε₀}). The excess f(α) − (1 − α)
counts the Q-atom at −∞ too; before it was taken out, the add orientation of an (ε₀, δ₀) pair
under Poisson(1e-9) — losses within ±2e-9 and a Q-atom γδ₀ at −∞ — was cut only at −8.3,
and its step grids took millions of points (a conformance case: 26 s, lower end 0).

Checked against the brute-force loss law of the canonical four-outcome pair (50 digits): the
P-mass left out is within the budget, the cut is next to the smallest finite loss, and the
Q-mass at −∞ a curve reports is a lower bound on the true one.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from privamp.mechanisms.generic import ApproxDPProfile
from privamp.mechanisms.laplace import LaplaceProfile
from privamp.pld.curves import PoissonPairCurve, ProfileCurve
from privamp.pld.engine import _left_end

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 50

RATES = [1e-9, 1e-6, 0.01, 0.5, 1.0]
PAIRS = [(1.0, 1e-3), (0.1, 1e-6), (3.0, 0.2), (0.0, 1e-5)]


def canonical(eps0, delta0):
    """P and Q of the (ε₀, δ₀) pair on four outcomes (its profile is the largest one)."""
    e, d = mpmath.e ** mpmath.mpf(eps0), mpmath.mpf(delta0)
    a, b = (1 - d) * e / (1 + e), (1 - d) / (1 + e)
    return [d, a, b, mpmath.mpf(0)], [mpmath.mpf(0), b, a, d]


def pair_law(eps0, delta0, rate, orientation):
    """(first, second) laws of the Poisson pair: remove ((1 − γ)Q + γP, Q), add (Q, mixture)."""
    p, q = canonical(eps0, delta0)
    g = mpmath.mpf(rate)
    mix = [(1 - g) * y + g * x for x, y in zip(p, q, strict=True)]
    return (mix, q) if orientation == "remove" else (q, mix)


def left_out(first, second, cut):
    """P-mass of the finite losses below ``cut``, and the Q-mass at −∞."""
    mass, at_minus_inf = mpmath.mpf(0), mpmath.mpf(0)
    smallest = mpmath.inf
    for x, y in zip(first, second, strict=True):
        if x == 0:
            at_minus_inf += y
            continue
        if y == 0:
            continue
        loss = mpmath.log(x / y)
        smallest = min(smallest, loss)
        if loss < cut:
            mass += x
    return mass, at_minus_inf, smallest


@pytest.mark.parametrize("orientation", ["remove", "add"])
@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize(("eps0", "delta0"), PAIRS)
@pytest.mark.parametrize("log_budget", [math.log(1e-12), math.log(1e-30)])
def test_left_end_of_approx_dp_pairs(eps0, delta0, rate, orientation, log_budget):
    curve = PoissonPairCurve(ProfileCurve(ApproxDPProfile(eps0, delta0)), rate, orientation)
    first, second = pair_law(eps0, delta0, rate, orientation)
    cut = _left_end(curve, log_budget)
    mass, m_inf, smallest = left_out(first, second, mpmath.mpf(cut))
    assert mass <= mpmath.e ** mpmath.mpf(log_budget)  # what is cut off fits the budget
    # the reported atom at −∞ is a lower bound on the true one
    reported = curve.log_q_mass_at_minus_infinity
    if reported > -math.inf:
        assert mpmath.e ** mpmath.mpf(reported) <= m_inf
    if orientation == "add" and rate < 1:
        assert reported > -math.inf  # the mixture has mass where Q has none: it is known
    # and the cut is next to the smallest finite loss s: the bound evaluates the excess at
    # α = e^{ε₀/2}, which vanishes once ε₀ < 2s (it was below −8 for tiny rates). Not at a
    # budget of 1e-30: the atom is taken out of f − (1 − α) in floating point, which cannot
    # resolve a remainder 1e-16 times smaller than it (the cut then stays where it was)
    if smallest < 0 and log_budget > math.log(1e-20):
        assert cut >= float(smallest) * 2 * (1 + 1e-6) - 1e-6


@pytest.mark.parametrize("orientation", ["remove", "add"])
@pytest.mark.parametrize("rate", RATES)
def test_left_end_without_an_atom_at_minus_infinity(rate, orientation):
    """Laplace has no loss −∞: nothing is subtracted, and the cut is where it was."""
    curve = PoissonPairCurve(ProfileCurve(LaplaceProfile(1.0)), rate, orientation)
    assert curve.log_q_mass_at_minus_infinity == -math.inf
    cut = _left_end(curve, math.log(1e-12))
    atoms = np.sort(curve.atoms())
    # the bottom atom carries about half the P-mass: the cut must lie below it, at every rate
    assert cut < atoms[0]
