"""The upper discretisation takes the curve's values only where they matter
(:func:`privamp.pld.discretize._adaptive_upper`).

The greatest convex minorant of upper values at a *subset* of the grid points is still above the
true curve, so the step is still an upper discretisation whichever points are taken; the
tolerance only promises tightness: the step's curve within τ of connect-the-dots through every
grid point. That argument needs a convex curve: a bound that is not one (BBG Theorem 14 under
Poisson substitution, the smaller of two bounds) keeps every point. Checked on curves whose tails
are heavy (WR, MUST, groups), light (Poisson-Gaussian), piecewise linear (randomized response),
with atoms (Laplace) and on two bounds that are not convex, at tolerances from 0 to far too
loose:

* the step's hockey-stick curve, evaluated exactly from its masses, is ≥ the curve's certified
  lower values at every grid point and between them (it dominates the pair);
* it is ≥ the full step's curve (a subset's minorant lies above the whole set's) and at most τ
  above it (up to the rounding of the values);
* with the engine's tolerance, far fewer points are evaluated on the heavy-tailed curves, and the
  ε of 10⁴ composed steps is not below, and within 1e-7 of, the one computed with every point.

The lower side keeps a tangent line at every grid point: thinned the same way, its lines' margins
(slope uncertainty times the distance to the next line) grew with the gaps, and the lower end of
truncated Poisson (n 1000, B 5, 10⁴ steps) fell from 24.80082 to 24.79504.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privamp import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.amplification.subsampling import amplify
from privamp.mechanisms import REGISTRY
from privamp.pld.curves import PoissonGaussianCurve, ProfileCurve
from privamp.pld.discretize import _FIRST_STRIDE, _adaptive_upper, upper_masses
from privamp.pld.distribution import StepPLD
from privamp.relations import NeighbouringRelation
from privamp.sampling import WOR, WR, MustWW, Poisson

S = NeighbouringRelation.SUBSTITUTE
R = NeighbouringRelation.ADD_REMOVE


def _curves():
    gs = GaussianMechanism(1.0, 1.0, relation=S)
    return {
        "wr": ProfileCurve(amplify(gs, WR(60_000, 600), S)),
        "must-ww": ProfileCurve(amplify(gs, MustWW(60_000, 30_000, 600), S)),
        "wor-m=n": ProfileCurve(amplify(gs, WOR(100, 100), S)),
        "poisson-subst": ProfileCurve(amplify(gs, Poisson(0.01, n=60_000), S)),
        "wr-group-3": ProfileCurve(amplify(GaussianMechanism(2.0, 1.0, relation=S), WR(1000, 50),
                                           S, group_size=3)),
        "poisson-gaussian": PoissonGaussianCurve(1.0, 0.01),
        "laplace-poisson": ProfileCurve(amplify(LaplaceMechanism(1.0), Poisson(0.01), R)),
        "rr-poisson": ProfileCurve(amplify(RandomizedResponse.from_epsilon(1.0), Poisson(0.5),
                                           R)),
        # not convex (the smaller of bounds): every point is kept. Taking the subset made the
        # conformance suite's trade-off curve of two steps 0.333 instead of 0.275 at α 0.001
        "discrete-pair-must-ww": ProfileCurve(amplify(
            REGISTRY["discrete-pair"].examples(S)[0], MustWW(10, 4, 10), S)),
    }


CURVES = _curves()


def _step_curve(masses, losses, p_inf, eps):
    """δ(ε) of a discrete step, exactly as a sum of its atoms (P-mass p at loss l weighs
    p (1 − e^{ε − l})_+)."""
    w = np.clip(-np.expm1(eps[:, None] - losses[None, :]), 0.0, None)
    return w @ masses + p_inf


def _both(full, sparse, p_inf, i_lo, h):
    """Both steps' curves at every 5th grid point and half-way past it (the matrix of atoms ×
    points stays small): ``(eps, full, sparse)``."""
    losses = (i_lo + np.arange(full.size)) * h
    eps = np.sort(np.concatenate([losses[::5], losses[:-1:5] + h / 2]))
    return eps, _step_curve(full, losses, p_inf, eps), _step_curve(sparse, losses, p_inf, eps)


def _grid(h=4e-3, hi=12.0):
    """A step grid on [−1, hi]: ``(h, i_lo, i_hi)``."""
    return h, math.floor(-1.0 / h), math.ceil(hi / h)


@pytest.mark.parametrize("name", sorted(CURVES))
@pytest.mark.parametrize("tolerance", [0.0, 1e-16, 1e-12, 1e-6, 1e-2])
def test_dominates_and_stays_within_tolerance(name, tolerance):
    curve = CURVES[name]
    h, i_lo, i_hi = _grid()
    full, p_full = upper_masses(curve, h, i_lo, i_hi)
    sparse, p_sparse = upper_masses(curve, h, i_lo, i_hi, tolerance=tolerance)
    if tolerance == 0.0 or not curve.convex:
        # (a bound that is not convex has no lower values of the pair's own curve to check
        # domination against: its minorant dips below the bound by design)
        np.testing.assert_array_equal(sparse, full)
        assert p_sparse == p_full
        return
    assert p_sparse == p_full  # the last point is always taken
    assert np.all(sparse >= 0.0) and math.fsum(sparse.tolist()) + p_sparse >= 1.0 - 1e-12
    eps, d_full, d_sparse = _both(full, sparse, p_full, i_lo, h)
    with np.errstate(under="ignore"):
        lower = np.exp(curve.log_lower(eps))
    slack = 1e-12 * d_full + 1e-300
    assert np.all(d_sparse >= lower - slack), "the step must dominate the pair"
    assert np.all(d_sparse >= d_full - slack), "a subset's minorant lies above the full one"
    if tolerance <= 1e-6:
        # the refinement bounds the chords' excess from the values' own chords; with values
        # within rounding of a convex curve the excess stays within the tolerance
        assert np.all(d_sparse <= d_full + tolerance + slack)


@pytest.mark.parametrize("name", ["wr", "must-ww", "wr-group-3"])
def test_heavy_tails_take_few_points(name):
    """At the engine's tolerance (tail 1e-11 over 4 × 10⁴ steps) the heavy-tailed curves are
    evaluated at a fraction of the grid; the light-tailed bulk keeps every point."""
    curve = CURVES[name]
    h = 2e-4
    n = math.ceil(20.0 / h) + 1
    eps = np.arange(n) * h
    taken, f = _adaptive_upper(curve, eps, np.exp(eps), 1e-11 / 4e4)
    assert taken[0] == 0 and taken[-1] == n - 1 and np.all(np.diff(taken) > 0)
    assert taken.size < 0.7 * n
    with np.errstate(under="ignore"):
        np.testing.assert_array_equal(f, np.exp(curve.log_upper(eps[taken])))
    # the first points (the bulk near ε = 0) are all taken
    assert np.array_equal(taken[:50], np.arange(50))


def test_short_grids_take_every_point():
    curve = CURVES["wr"]
    eps = np.arange(4 * _FIRST_STRIDE) * 1e-3
    taken, _ = _adaptive_upper(curve, eps, np.exp(eps), 1.0)
    np.testing.assert_array_equal(taken, np.arange(eps.size))


@pytest.mark.parametrize("name", ["wr", "must-ww", "laplace-poisson"])
def test_composed_bracket_contains_the_full_one(name):
    """10⁴ steps composed at the engine's spacing: the ε of the step with every point and the
    ε of the adaptive step differ by far less than the certified bracket's width, and the
    adaptive one is not smaller (its curve lies above)."""
    from privamp.pld.distribution import compose

    curve = CURVES[name]
    h = 2e-4
    steps = {}
    for tol in (0.0, 1e-11 / 4e4):
        step = StepPLD.from_curve(curve, h, -1.0, 25.0, "upper", tolerance=tol)
        steps[tol] = compose([(step, 10_000)], log_tail_tol=math.log(1e-11)).epsilon(1e-5)
    full, sparse = steps[0.0], steps[1e-11 / 4e4]
    assert sparse >= full - 1e-12 * full
    assert sparse - full <= 1e-7 * full
