"""An adversarial review of the batch-sampler accounting (issue 19): independent references and
the review's findings, fixed.

The references check the random-allocation curves against mpmath integrals at t = 2 (θ from 0.05
to 3) and exact enumeration of finite pairs; the last tests are the findings (a noise change
inside a round, lines of one round merged, the add curve's mass at ∞, the grid's last point,
a huge θ), each a strict xfail until it was fixed.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from privamp.accountant import Accountant
from privamp.errors import PrivampError, UnsupportedCombinationError
from privamp.mechanisms.gaussian import GaussianMechanism
from privamp.pld import allocation
from privamp.pld.allocation import AllocationCurve, discrete_allocation_law
from privamp.sampling.rounds import RandomAllocation

# ---- references --------------------------------------------------------------------------


def _lognormal_call(c, theta):
    """E[(Y − c)₊], Y = exp(θZ − θ²/2) (Black–Scholes)."""
    if c <= 0:
        return 1 - c
    d1 = (-mp.log(c) + theta * theta / 2) / theta
    return mp.ncdf(d1) - c * mp.ncdf(d1 - theta)


def _lognormal_put(c, theta):
    """E[(c − Y)₊]."""
    if c <= 0:
        return mp.mpf(0)
    d1 = (-mp.log(c) + theta * theta / 2) / theta
    return c * mp.ncdf(theta - d1) - mp.ncdf(-d1)


def _exact_t2(theta, eps, orientation):
    """D_α of the balls-in-bins pair of t = 2 Gaussian steps, by a 1-D mpmath integral over the
    first step (the second in closed form)."""
    with mp.workdps(25):
        th, a = mp.mpf(theta), mp.e ** mp.mpf(eps)
        y = lambda z: mp.e ** (th * z - th * th / 2)  # noqa: E731
        if orientation == "remove":   # E[((Y1 + Y2)/2 − α)₊]
            f = lambda z: mp.npdf(z) * _lognormal_call(2 * a - y(z), th) / 2  # noqa: E731
            zc = (mp.log(2 * a) + th * th / 2) / th
        else:                         # E[(1 − αR)₊] = α/2 E[(2/α − Y1 − Y2)₊]
            f = lambda z: mp.npdf(z) * a * _lognormal_put(2 / a - y(z), th) / 2  # noqa: E731
            zc = (mp.log(2 / a) + th * th / 2) / th
        pts = [-mp.inf] + list(mp.linspace(min(-20, zc - 20), max(20, zc + 20), 120)) + [mp.inf]
        return float(mp.quad(f, pts))


def _exact_discrete(p, q, t, eps, orientation):
    """D_α of the random-allocation pair of t steps of the finite pair (p, q), enumerated."""
    a = math.exp(eps)
    total = 0.0
    for idx in itertools.product(range(len(p)), repeat=t):
        qm = math.prod(q[i] for i in idx)
        pm = sum(p[idx[j]] * math.prod(q[idx[i]] for i in range(t) if i != j)
                 for j in range(t)) / t
        total += max(pm - a * qm, 0.0) if orientation == "remove" else max(qm - a * pm, 0.0)
    return total


# ---- checks that hold ------------------------------------------------------------------------


@pytest.mark.parametrize("theta", [0.05, 0.3, 1.0, 3.0])
@pytest.mark.parametrize("orientation", ["remove", "add"])
def test_t2_curves_bracket_the_mpmath_integral(theta, orientation):
    curve = AllocationCurve(allocation.gaussian_allocation_law(theta, 2), orientation)
    for eps in np.linspace(-2.0, 3.0 * theta + 0.5, 7):
        exact = _exact_t2(theta, eps, orientation)
        if exact < 1e-250:
            continue
        up = math.exp(curve.log_upper(np.array([eps]))[0])
        lo = math.exp(curve.log_lower(np.array([eps]))[0])
        assert lo <= exact * (1 + 1e-12) <= up * (1 + 2e-12), (eps, lo, exact, up)


@pytest.mark.parametrize("pq", [((0.75, 0.25), (0.25, 0.75)),
                                ((0.6, 0.3, 0.1), (0.1, 0.3, 0.6)),
                                ((0.5, 0.5, 0.0), (0.0, 0.5, 0.5))])
@pytest.mark.parametrize("t", [1, 2, 3, 5])
def test_discrete_curves_bracket_enumeration(pq, t):
    p, q = pq
    law = discrete_allocation_law(p, q, t)
    for orientation in ("remove", "add"):
        curve = AllocationCurve(law, orientation)
        for eps in (-2.0, -0.5, 0.0, 0.3, 1.0, 2.0, 5.0, 20.0):
            exact = _exact_discrete(p, q, t, eps, orientation)
            up = math.exp(curve.log_upper(np.array([eps]))[0])
            lo = math.exp(curve.log_lower(np.array([eps]))[0])
            assert lo <= exact * (1 + 1e-12) + 1e-300
            assert exact <= up * (1 + 1e-12)


# ---- the review's findings, fixed ------------------------------------------------------------


def test_a_round_split_over_two_mechanisms_is_refused():
    """A noise change inside a round (σ → σ + 1e-9 at t = 2) would be accounted as two partial
    rounds — below the round it is: the ledger refuses a second mechanism on a round-tied
    sampler."""
    s = RandomAllocation(2)
    a = GaussianMechanism(sigma=1.0, sensitivity=1.0)
    b = GaussianMechanism(sigma=1.0 + 1e-9, sensitivity=1.0)
    with pytest.raises(UnsupportedCombinationError, match="one mechanism"):
        Accountant().add(a, 1, scheme=s).add(b, 1, scheme=s)
    with pytest.raises(UnsupportedCombinationError, match="one mechanism"):
        Accountant().add(a, 1, scheme=s).add(a, 1, scheme=RandomAllocation(3))
    # the same event again merges (one line), and other events compose freely
    acc = Accountant().add(a, 1, scheme=s).add(a, 1, scheme=s).add(b, 3)
    assert len(acc.events) == 2 and acc.events[0].count == 2


def test_lines_in_different_rounds_cannot_be_merged():
    s = RandomAllocation(2)
    a = GaussianMechanism(sigma=1.0, sensitivity=1.0)
    b = GaussianMechanism(sigma=1e4, sensitivity=1.0)
    with pytest.raises(UnsupportedCombinationError):
        Accountant().add(a, 1, scheme=s).add(b, 2, scheme=s).add(a, 1, scheme=s)


def test_truncated_poisson_steps_are_independent_and_may_change_noise():
    from privamp import TruncatedPoisson

    s = TruncatedPoisson(100, 0.1, 20)
    acc = (Accountant().add(GaussianMechanism(1.0), 5, scheme=s)
           .add(GaussianMechanism(2.0), 5, scheme=s))
    assert len(acc.events) == 2


def test_add_mass_at_infinity_is_q_of_zero():
    t = 2
    law = discrete_allocation_law((0.5, 0.5, 0.0), (0.0, 0.5, 0.5), t)
    curve = AllocationCurve(law, "add")
    assert curve.log_mass_at_infinity >= math.log(0.5 ** t) - 1e-12


def test_stage_grid_covers_the_largest_value():
    for theta in (0.5, 5.0, 20.0):
        up, _ = allocation._gaussian_step(theta, 0.02, 60.0)
        grid = allocation._grid_for(up, up, 1, 1, math.expm1(theta ** 2), 0.02, 60.0)
        assert 0.5 * up[0][-1] + 0.5 * up[0][-1] < grid.points[-1]
        assert grid.points.size <= 2 * allocation._MAX_CELLS


def test_huge_theta_is_a_typed_error():
    g = GaussianMechanism(sigma=0.03, sensitivity=1.0)
    with pytest.raises(PrivampError):
        Accountant().add(g, 4, scheme=RandomAllocation(4)).epsilon(1e-5)


def _floats_around(x: float, k: int = 3) -> list[float]:
    out, lo, hi = [x], x, x
    for _ in range(k):
        lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
        out += [lo, hi]
    return out


@pytest.mark.parametrize("pq", [((0.6, 0.3, 0.1), (0.1, 0.3, 0.6)),
                                ((0.5, 0.5, 0.0), (0.0, 0.5, 0.5))])
@pytest.mark.parametrize("orientation", ["remove", "add"])
def test_slopes_at_an_atom_bracket_every_float_within_three_ulp(pq, orientation):
    """An atom of R within a few ulp of the computed α (or 1/α) must not fall on the wrong side
    of the strict / non-strict split: the slopes bracket the lower law's subgradient at every
    float within 3 ulp of fl(e^ε) — and within 8, what two exps of FUNC_ULPS each can differ
    by — whichever way another call's exp rounds."""
    law = discrete_allocation_law(*pq, 3)
    sums = law._lo
    curve = AllocationCurve(law, orientation)
    scale = 1 - allocation._MARGIN
    # ε at every atom (remove: α = x ≥ 1; add: 1/α = x ≤ 1, ε ≥ 0 so that no floor line
    # replaces the law's slopes), and at the floats next to those ε
    atoms = [x for x in sums.x.tolist() if (x >= 1 if orientation == "remove" else 0 < x <= 1)]
    eps = np.array(sorted({e for x in atoms
                           for e in _floats_around(math.log(x) if orientation == "remove"
                                                   else -math.log(x))} - {-0.0}))
    eps = eps[eps >= 0]
    s_lo, s_hi = curve.slope_bounds(eps, 1e-4)
    for e, lo, hi in zip(eps.tolist(), s_lo.tolist(), s_hi.tolist(), strict=True):
        if orientation == "remove":
            ends = _floats_around(float(np.exp(e)), 8)
            left = [-scale * float(sums.q_above(np.array([a]), strict=False)[0]) for a in ends]
            right = [-scale * float(sums.q_above(np.array([a]), strict=True)[0]) for a in ends]
        else:
            ends = _floats_around(float(np.exp(-e)), 8)
            left = [-scale * float(sums.p_below(np.array([a]), strict=False)[0]) for a in ends]
            right = [-scale * float(sums.p_below(np.array([a]), strict=True)[0]) for a in ends]
        assert lo <= min(left) and hi >= max(right), (e, lo, hi, left, right)
