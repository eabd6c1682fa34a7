"""RdpCurve: composition, safe interpolation, and conversions that never undercut the truth."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from privamp import GaussianProfile
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.rdp import DEFAULT_ORDERS, OrderGridWarning, RdpCurve

FINITE = DEFAULT_ORDERS[np.isfinite(DEFAULT_ORDERS)]


def gaussian_curve(sigma, orders=FINITE):
    """Exact RDP of the Gaussian mechanism with sensitivity 1: order / (2σ²)."""
    return RdpCurve(orders, orders / (2 * sigma**2), bound="exact")


def laplace_rdp(order, b):
    """Exact RDP of Laplace(b), sensitivity 1 (Wang's slides W-3)."""
    return (1 / (order - 1)) * math.log(order / (2 * order - 1) * math.exp((order - 1) / b)
                                        + (order - 1) / (2 * order - 1) * math.exp(-order / b))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 5.0, 20.0])
@pytest.mark.parametrize("count", [1, 10, 1000])
def test_conversion_never_below_exact_gaussian(sigma, count):
    """The RDP → (ε, δ) conversion upper-bounds the exact Gaussian profile (composed Gaussians
    are Gaussian: σ/√count)."""
    curve = gaussian_curve(sigma) * count
    exact = GaussianProfile(math.sqrt(count) / sigma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        for delta in [1e-3, 1e-5, 1e-10]:
            assert curve.epsilon(delta) >= exact.epsilon(delta)
        for eps in [0.5, 1.0, 3.0, 10.0]:
            assert curve.delta(eps) >= float(exact.delta(eps))


def test_conversion_is_tighter_than_classical():
    """ε(δ) is at most the classical min_order ε(order) + log(1/δ)/(order − 1)."""
    curve = gaussian_curve(5.0)
    classical = np.min(FINITE / 50 + math.log(1e5) / (FINITE - 1))
    assert classical == pytest.approx(0.9797, abs=1e-3)  # catalogue W-2 value (real orders)
    assert curve.epsilon(1e-5) < classical - 0.15
    assert curve.delta(1.0) <= 6.113567966371402e-06  # classical δ form of the catalogue


def test_composition_adds_and_counts():
    """(c + c) == c * 2 and heterogeneous composition sums the curves."""
    a, b = gaussian_curve(1.0), gaussian_curve(2.0)
    np.testing.assert_allclose((a + a).epsilons, (a * 2).epsilons, rtol=1e-15)
    np.testing.assert_allclose(RdpCurve.compose([a, b, b]).epsilons,
                               FINITE * (0.5 + 2 * 0.125), rtol=1e-14)
    assert (a * 0).epsilon(1e-5) == 0.0
    assert np.all((a + b).epsilons >= a.epsilons + b.epsilons)  # rounded up, never down


def test_interpolation_is_safe_for_laplace_and_gaussian():
    """Chords of the CGF between grid orders stay above the true RDP at intermediate orders."""
    grid = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0])
    targets = np.array([1.2, 1.7, 2.5, 3.3, 5.0, 7.9, 12.0, 31.0])
    for b in [0.3, 1.0, 3.0]:
        curve = RdpCurve(grid, [laplace_rdp(o, b) for o in grid])
        inter = curve.at(targets).epsilons
        truth = np.array([laplace_rdp(o, b) for o in targets])
        assert np.all(inter >= truth)
    g = gaussian_curve(2.0, grid).at(targets)
    assert np.all(g.epsilons >= targets / 8)
    # beyond the grid only ε(∞) can help
    assert math.isinf(gaussian_curve(2.0, grid).at([64.0]).epsilons[0])
    with_inf = RdpCurve(np.append(grid, np.inf), [laplace_rdp(o, 1.0) for o in grid] + [1.0])
    assert with_inf.at([64.0]).epsilons[0] == 1.0


def test_pure_dp_and_edge_cases():
    """δ = 0 gives ε(∞); δ(ε) = 0 at and above ε(∞); inf values exclude orders."""
    orders = np.array([2.0, 4.0, np.inf])
    c = RdpCurve(orders, [0.3, 0.5, 0.8])
    assert c.epsilon(0.0) == 0.8 and c.pure_epsilon == 0.8
    assert c.delta(0.8) == 0.0
    assert math.isinf(gaussian_curve(1.0).epsilon(0.0))
    partial = RdpCurve([2.0, 3.0], [np.inf, 0.4])
    assert math.isfinite(partial.epsilon(1e-5))
    assert c.epsilon(1.0) == 0.0


def test_optimum_at_grid_edge_warns():
    """An optimum at the largest order warns that a wider grid could be tighter."""
    narrow = gaussian_curve(50.0, np.array([1.5, 2.0, 3.0]))
    with pytest.warns(OrderGridWarning, match="edge of the order grid"):
        narrow.epsilon(1e-10)
    eps, order = gaussian_curve(5.0).epsilon(1e-5, return_order=True)
    assert 2 < order < 100


def test_validation_and_unsupported_uses():
    """Orders must exceed 1 and increase; lower-bound curves cannot be converted."""
    with pytest.raises(InvalidParameterError, match=r"orders must be real number\(s\) in \(1"):
        RdpCurve([1.0, 2.0], [0.1, 0.2])
    with pytest.raises(InvalidParameterError, match="strictly increasing"):
        RdpCurve([3.0, 2.0], [0.1, 0.2])
    with pytest.raises(InvalidParameterError, match="NaN"):
        RdpCurve([2.0, 3.0], [0.1, math.nan])
    with pytest.raises(InvalidParameterError, match="non-empty"):
        RdpCurve([], [])
    with pytest.raises(InvalidParameterError, match="same length"):
        RdpCurve([2.0, 3.0], [0.1])
    low = RdpCurve([2.0, 3.0], [0.1, 0.2], bound="lower")
    with pytest.raises(UnsupportedCombinationError, match="lower-bound"):
        low.epsilon(1e-5)
    with pytest.raises(UnsupportedCombinationError, match="different order grids"):
        gaussian_curve(1.0) + RdpCurve([2.0], [0.1])
    with pytest.raises(UnsupportedCombinationError, match="substitute"):
        RdpCurve([2.0], [0.1], relation="add-remove") + RdpCurve([2.0], [0.1],
                                                                  relation="substitute")
    with pytest.raises(InvalidParameterError, match="delta"):
        gaussian_curve(1.0).epsilon(1.5)
