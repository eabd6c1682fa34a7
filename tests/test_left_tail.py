"""The ends of a step's loss range; the left one leaves out the loss −∞ (it has no P-mass).

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

from privamp.errors import LossRangeError
from privamp.mechanisms.generic import ApproxDPProfile
from privamp.mechanisms.laplace import LaplaceProfile
from privamp.pld.curves import PairCurve, PoissonPairCurve, ProfileCurve
from privamp.pld.engine import _left_end, _right_end

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


# ------------------------------------------------------------------------------------------
# the search itself: doublings in a few calls, sectioning, curves that never get there
# ------------------------------------------------------------------------------------------


class _Linear(PairCurve):
    """A synthetic curve with log f(e^ε) = −slope·ε for ε ≥ 0 and log(f − (1 − α)) =
    slope·ε for ε ≤ 0 (not a real pair: only the tests the range search makes), recording the
    points it is asked for; ``slope`` 0 never falls below a budget on the right, −2 never on
    the left, NaN answers NaN."""

    def __init__(self, slope):
        self.slope = slope
        self.calls = []

    def log_upper(self, eps):
        eps = np.asarray(eps, dtype=float)
        self.calls.append(eps.copy())
        return np.where(eps >= 0, -self.slope * eps, 0.0)

    def log_excess(self, eps):
        eps = np.asarray(eps, dtype=float)
        self.calls.append(eps.copy())
        return self.slope * eps


BUDGET = math.log(1e-12)


@pytest.mark.parametrize("end", [0.7, 3.0, 12.0, 40.0, 3e5])
def test_right_end_is_the_smallest_feasible_point(end):
    """The right end of log f = −slope·ε is −budget/slope: found within the 1e-6 tolerance
    from above (a feasible point), whichever doubling chunk holds it, in at most three
    doubling calls, and evaluating no doubling point beyond the chunk that holds it."""
    curve = _Linear(-BUDGET / end)
    curve.log_mass_at_infinity  # noqa: B018 - one call of its own, before the search
    curve.calls.clear()
    got = _right_end(curve, BUDGET)
    assert end <= got <= end * (1 + 1e-6) * (1 + 1e-12)
    # the doubling calls: every point 0 or a power of two ≥ 1 (sectioning rounds have 127
    # points, most of them not powers of two)
    doubling = [c for c in curve.calls
                if np.all((c == 0) | ((c >= 1) & (np.frexp(c)[0] == 0.5)))]
    assert 1 <= len(doubling) <= 3
    chunk_top = {0.7: 4.0, 3.0: 4.0, 12.0: 16.0}.get(end, 2.0**20)
    assert max(float(np.max(c)) for c in doubling) <= chunk_top
    assert len(curve.calls) <= len(doubling) + 4  # then three or four sectioning rounds


@pytest.mark.parametrize("end", [0.5, 3.0, 12.0, 40.0])
def test_left_end_is_feasible_and_tight(end):
    """The left end of the synthetic curve is a feasible point of the left-tail bound, and
    a point 2e-6 inside it is not (the bound's own tolerance is 1e-6)."""
    curve = _Linear(-BUDGET / end)
    got = _left_end(curve, BUDGET)

    def bound(e0):
        half = e0 / 2
        return e0 + curve.slope * half - (half + math.log1p(-math.exp(half)))

    assert got < 0
    assert bound(got) <= BUDGET
    if got < -1e-9:
        assert bound(got * (1 - 2e-6)) > BUDGET


@pytest.mark.parametrize(("slope", "end"), [(0.0, "right"), (-2.0, "left"),
                                            (math.nan, "right"), (math.nan, "left")])
def test_ranges_of_a_curve_that_never_falls_are_refused(slope, end):
    """A curve whose tail never falls below the budget (log f ≡ 0 on the right; on the left
    an excess growing like e^{−2ε₀/2}, faster than the bound's factor e^{ε₀} shrinks), or that
    answers NaN, gets a LossRangeError after the last doubling (2^20), never an end: the old
    one-point search took NaN for a feasible point and returned 1.0 as a right end."""
    search = _right_end if end == "right" else _left_end
    with np.errstate(invalid="ignore"), pytest.raises(LossRangeError):
        search(_Linear(slope), BUDGET)
