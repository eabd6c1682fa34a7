"""The RDP accountant: landscape reference values (RDP column as the target, PLD column as the
floor), conversion never below the exact Gaussian profile, the ledger, refinement, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from privamp import GaussianMechanism, GaussianProfile, LaplaceMechanism
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.rdp import (
    OrderGridWarning,
    RdpAccountant,
    RdpCurve,
    poisson_gaussian_epsilon,
    poisson_gaussian_rdp,
    rdp_curve,
    subsampled_lower_bound,
)

# ../shared/spec/landscape.md: Poisson-subsampled Gaussian, add/remove, δ = 1e-5.
# (σ, q, steps, dp_accounting PLD ε, RDP ε of the established libraries)
LANDSCAPE = [
    (1.0, 0.01, 1_000, 1.82824, 2.101),
    (1.0, 0.01, 10_000, 6.18774, 6.713),
    (1.0, 0.01, 100_000, 25.57327, 27.238),
    (0.8, 0.001, 100_000, 2.57556, 2.825),
    (2.0, 0.05, 5_000, 9.37994, 10.095),
    (0.6, 0.02, 2_000, 19.98175, 22.157),
]


@pytest.mark.parametrize("sigma, q, steps, pld, rdp", LANDSCAPE)
def test_landscape_rows(sigma, q, steps, pld, rdp):
    """As tight as the established RDP accountants (their values are printed to 3 decimals, so
    half a unit of the last digit is allowed) and never below the PLD value, which is close to
    the true ε (RDP conversions are upper bounds)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrderGridWarning)
        eps = poisson_gaussian_epsilon(sigma, q, steps, 1e-5)
    assert eps <= rdp + 5e-4
    assert eps >= pld


def test_landscape_first_row_value():
    """ε ≈ 2.10 for σ = 1, q = 0.01, 1000 steps, δ = 1e-5 (the issue's reference)."""
    acc = RdpAccountant().compose(lambda o: poisson_gaussian_rdp(1.0, 0.01, o), 1000)
    eps, order = acc.epsilon(1e-5, return_order=True)
    assert eps == pytest.approx(2.1013, abs=1e-4)
    assert 7.0 < order < 8.5
    assert acc.delta(eps) <= 1e-5 * (1 + 1e-9)


def test_stress_cases_of_the_landscape():
    """Tiny δ (1e-18, where dp_accounting's PLD returns inf and its RDP 6.205) and large ε
    (σ = 0.5, q = 0.1, 10 000 steps: RDP ≈ 807, a fixed PRV ≈ 782)."""
    tiny = poisson_gaussian_epsilon(1.0, 0.01, 1000, 1e-18)
    assert math.isfinite(tiny) and tiny <= 6.205 + 5e-4
    assert tiny > poisson_gaussian_epsilon(1.0, 0.01, 1000, 1e-5)
    big = poisson_gaussian_epsilon(0.5, 0.1, 10_000, 1e-5)
    assert 780.0 < big <= 807.5


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 5.0, 20.0])
@pytest.mark.parametrize("count", [1, 10, 1000])
def test_conversion_upper_bounds_the_exact_gaussian(sigma, count):
    """k Gaussians with σ compose to a Gaussian with θ = √k/σ; the accountant's ε(δ) and δ(ε)
    are never below the exact profile (Balle & Wang 2018), with order refinement on."""
    acc = RdpAccountant().compose(GaussianMechanism(sigma), count)
    exact = GaussianProfile(math.sqrt(count) / sigma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        for delta in [1e-3, 1e-5, 1e-10]:
            assert acc.epsilon(delta) >= exact.epsilon(delta)
        for eps in [0.5, 1.0, 3.0, 10.0]:
            assert acc.delta(eps) >= float(exact.delta(eps))


def test_heterogeneous_composition():
    """Different mechanisms and counts add order by order; two Gaussians compose to the exact
    Gaussian with θ² = θ₁² + θ₂², which the conversion upper-bounds."""
    acc = RdpAccountant()
    acc.compose(GaussianMechanism(2.0), 3).compose(GaussianMechanism(1.0), 2, label="big")
    assert [e.count for e in acc.ledger] == [3, 2]
    assert acc.ledger[1].label == "big"
    o = acc.orders
    np.testing.assert_allclose(acc.curve.epsilons, 3 * o / 8 + 2 * o / 2, rtol=1e-13)
    theta = math.sqrt(3 / 4 + 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        assert acc.epsilon(1e-6) >= GaussianProfile(theta).epsilon(1e-6)
    # a curve, a mechanism and a callable in one ledger
    acc2 = RdpAccountant(orders=[2.0, 4.0, np.inf])
    acc2.compose(RdpCurve([2.0, 4.0, np.inf], [0.1, 0.2, 1.0]), 2)
    acc2.compose(LaplaceMechanism(1.0))
    acc2.compose(lambda o: rdp_curve(LaplaceMechanism(2.0), o), 0)
    lap = rdp_curve(LaplaceMechanism(1.0), [2.0, 4.0, np.inf]).epsilons
    np.testing.assert_allclose(acc2.curve.epsilons, 2 * np.array([0.1, 0.2, 1.0]) + lap,
                               rtol=1e-13)
    assert len(acc2.ledger) == 3


def test_pure_dp_and_trivial_cases():
    acc = RdpAccountant()
    assert acc.epsilon(1e-5) == 0.0 and acc.delta(0.0) == 0.0
    acc.compose(LaplaceMechanism(0.5), 3)
    assert acc.epsilon(0.0) == pytest.approx(6.0, rel=1e-14)
    assert acc.epsilon(0.0) >= 6.0
    assert acc.delta(6.0 + 1e-12) == 0.0 and acc.delta(5.9) > 0.0
    assert acc.epsilon(1.0) == 0.0
    np.testing.assert_allclose(acc.epsilon([0.0, 1.0]), [acc.epsilon(0.0), 0.0])


def test_refinement_only_helps_and_stays_valid():
    exact = GaussianProfile(math.sqrt(50) / 3.0)
    fine = RdpAccountant().compose(GaussianMechanism(3.0), 50)
    coarse = RdpAccountant(refine=False).compose(GaussianMechanism(3.0), 50)
    for delta in [1e-4, 1e-8]:
        assert exact.epsilon(delta) <= fine.epsilon(delta) <= coarse.epsilon(delta)
    for eps in [1.0, 4.0]:
        assert float(exact.delta(eps)) <= fine.delta(eps) <= coarse.delta(eps)


def test_order_grid_warning_at_the_edge():
    """The optimum at the edge of everything searched warns; in the interior it does not."""
    acc = RdpAccountant(orders=[1.5, 2.0]).compose(GaussianMechanism(5.0))
    with pytest.warns(OrderGridWarning):
        acc.epsilon(1e-5)
    acc = RdpAccountant().compose(GaussianMechanism(5.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrderGridWarning)
        acc.epsilon(1e-5)


def test_bad_input():
    acc = RdpAccountant()
    with pytest.raises(InvalidParameterError, match="count"):
        acc.compose(GaussianMechanism(1.0), -1)
    with pytest.raises(InvalidParameterError, match="delta"):
        acc.epsilon(2.0)
    with pytest.raises(InvalidParameterError, match="delta"):
        acc.epsilon(float("nan"))
    with pytest.raises(InvalidParameterError, match="epsilon"):
        acc.delta(-1.0)
    with pytest.raises(InvalidParameterError, match="orders"):
        RdpAccountant(orders=[0.5, 2.0])
    with pytest.raises(InvalidParameterError, match="orders"):
        RdpAccountant(orders=[])
    with pytest.raises(InvalidParameterError, match="callable returning an RdpCurve"):
        acc.compose(lambda o: 3.0)
    low = subsampled_lower_bound(GaussianMechanism(1.0, relation="substitute"), 0.1,
                                 [2.0, 3.0])
    with pytest.raises(UnsupportedCombinationError, match="lower-bound"):
        RdpAccountant(orders=[2.0, 3.0]).compose(low)
    mixed = RdpAccountant().compose(GaussianMechanism(1.0))  # add/remove
    with pytest.raises(UnsupportedCombinationError, match="substitute"):
        mixed.compose(GaussianMechanism(1.0, relation="substitute"))
    with pytest.raises(InvalidParameterError, match="noise_multiplier"):
        poisson_gaussian_epsilon(0.0, 0.01, 10, 1e-5)
    with pytest.raises(InvalidParameterError, match="steps"):
        poisson_gaussian_epsilon(1.0, 0.01, 1.5, 1e-5)
    with pytest.raises(InvalidParameterError, match="sampling_rate"):
        poisson_gaussian_epsilon(1.0, 1.01, 10, 1e-5)
