"""Two implementations of the same object must agree, and privamp must agree with references.

* The Poisson-subsampled Gaussian has a closed-form curve (``PoissonGaussianCurve``) and the
  generic construction from the base profile (``PoissonPairCurve``): they must give the same
  values, both orientations, at every rate including the boundaries 1 and 1e-9 — the check
  that would have caught the rate-1 defect of issue 15.
* Poisson-subsampled compositions of mechanisms without a closed form are compared with the
  slow, simple composition of :mod:`conformance.references` (losses rounded up / down on a fine
  grid and convolved): privamp's certified bracket must overlap the reference's.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.references import (
    composed_epsilon_bracket,
    gaussian_base,
    laplace_base,
    poisson_laws,
)
from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.mechanisms import LaplaceMechanism
from privamp.pld.curves import PoissonGaussianCurve, PoissonPairCurve, ProfileCurve
from privamp.sampling import Poisson

EPS = np.concatenate([-np.geomspace(30, 1e-9, 40), [0.0], np.geomspace(1e-9, 30, 40)])


@pytest.mark.parametrize("rate", [1.0, 1 - 2**-53, 1 - 1e-12, 0.5, 0.01, 1e-6, 1e-9])
@pytest.mark.parametrize("theta", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("orientation", ["remove", "add"])
def test_generic_poisson_curve_equals_the_gaussian_closed_form(rate, theta, orientation):
    generic = PoissonPairCurve(ProfileCurve(GaussianMechanism(1 / theta).profile()), rate,
                               orientation)
    closed = PoissonGaussianCurve(theta, rate, orientation)
    a, b = generic.log_upper(EPS), closed.log_upper(EPS)
    low = generic.log_lower(EPS)
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    fin = np.isfinite(b) & (b > -600)
    # both are upper bounds on the same exact value; the generic curve carries its own error
    # interval [low, a] (wide only where c = 1 − α(1 − γ) cancels), which must hold the other
    assert np.all(low <= a)
    assert np.all(b[fin] >= low[fin])
    width = a[fin] - low[fin]
    assert np.all(np.abs(a[fin] - b[fin]) <= width + 1e-9 * (1 + np.abs(b[fin])))


@pytest.mark.parametrize(("make_base", "mechanism", "steps", "h"), [
    (lambda: laplace_base(1.0), lambda: LaplaceMechanism(1.0), 1, 2e-6),
    (lambda: laplace_base(1.0), lambda: LaplaceMechanism(1.0), 10, 2e-6),
    (lambda: laplace_base(0.5), lambda: LaplaceMechanism(0.5), 2, 4e-6),
    (lambda: gaussian_base(1.0), lambda: GaussianMechanism(1.0), 2, 1e-4),
])
def test_poisson_composition_against_the_simple_reference(make_base, mechanism, steps, h):
    rate, delta = 0.01, 1e-5
    ref_lo, ref_hi = composed_epsilon_bracket(
        lambda up: poisson_laws(make_base(), rate, h, up), steps, delta)
    b = Accountant().add(mechanism(), steps, scheme=Poisson(rate)).epsilon(delta)
    assert b.upper >= ref_lo  # never below the truth
    assert b.lower <= ref_hi
    assert b.upper - b.lower <= 1e-3 * b.upper


def test_laplace_poisson_bracket_of_the_issue():
    """Issue 15: Laplace b = 1, q = 0.01, T = 10, δ = 1e-5; the true ε is 0.099385 (the
    symmetrised profile gave [0.105104, 0.105109], entirely above it)."""
    b = Accountant().add(LaplaceMechanism(1.0), 10, scheme=Poisson(0.01)).epsilon(1e-5)
    assert b.lower <= 0.099385 <= b.upper * (1 + 1e-5)
    assert b.upper < 0.0994


@pytest.mark.parametrize("steps", [1, 10, 100])
@pytest.mark.parametrize("rate", [None, 0.01, 0.5, 1.0])
@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_randomized_response_is_exact_on_the_grid(steps, rate, eps0):
    """A two-point loss law sits exactly on the grid (its atoms are grid points): the bracket
    holds the exact binomial value and is far below 0.1 % wide (issue 15: 2–41 % before)."""
    from conformance.references import binary_composition_epsilon, poisson_pairs, rr_pair
    from privamp.mechanisms import RandomizedResponse

    pair = rr_pair(eps0)
    pairs = {"pair": pair} if rate is None else poisson_pairs(pair, rate)
    exact = binary_composition_epsilon(pairs, steps, 1e-5)
    mech = RandomizedResponse.from_epsilon(eps0)
    b = Accountant().add(mech, steps, scheme=None if rate is None else Poisson(rate)).epsilon(1e-5)
    assert b.lower <= exact <= b.upper
    assert b.upper - b.lower <= 1e-5 * max(b.upper, 1e-3)
