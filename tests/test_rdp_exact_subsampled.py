"""Exact Poisson-subsampled RDP of Laplace and randomized response (privamp.rdp.poisson_exact).

Independent references: both directions of the pair ((1−q)Q + qP, Q) integrated with mpmath at
60 digits (Laplace: the two atoms in closed form and the middle piece by mpmath.quad; randomized
response: two atoms), on grids over q, θ (or p) and the order including the boundaries; the
factor-3 bound (W-20) and the general W-8-type caps must lie above; q = 1 gives the base curve,
q = 0 gives 0; the catalogue's W-9/W-20 Laplace values.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from privamp import (
    ApproxDPMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    LaplaceProfile,
    RandomizedMembershipMechanism,
    RandomizedResponse,
)
from privamp.errors import UnsupportedCombinationError
from privamp.rdp import (
    DEFAULT_ORDERS,
    poisson_gaussian_rdp,
    rdp_curve,
    subsampled_rdp,
    zhu_wang_upper_bound,
)
from privamp.rdp.poisson_exact import poisson_exact_rdp

DPS = 60  # A − 1 ~ 1e-30 at q = 1e-6, θ = 4e-9: 60 digits leave 30 (set per call: no global)


def _laplace_moment(theta, q, beta):
    """E_Q[(1 + q(L − 1))^β] for Q = Lap(0, 1), P = Lap(θ, 1), by mpmath."""
    th, q, b = mp.mpf(theta), mp.mpf(q), mp.mpf(beta)

    def g(u):
        return (1 - q + q * mp.exp(u)) ** b

    atoms = g(-th) / 2 + mp.exp(-th) / 2 * g(th)
    mid = mp.quad(lambda t: mp.exp(-t) * g(2 * t - th) / 2, [0, th / 4, th / 2, 3 * th / 4, th])
    return atoms + mid


def _rr_moment(p, q, beta):
    p, q, b = mp.mpf(p), mp.mpf(q), mp.mpf(beta)
    pmax, pmin = max(p, 1 - p), min(p, 1 - p)
    r = pmax / pmin
    return pmax * (1 - q + q / r) ** b + pmin * (1 - q + q * r) ** b


def _reference(moment, param, q, order):
    """max of the two directions: log(E[(1+x)^α])/(α−1) and log(E[(1+x)^{1−α}])/(α−1)."""
    with mp.workdps(DPS):
        a = mp.mpf(order)
        fwd = mp.log(moment(param, q, a)) / (a - 1)
        rev = mp.log(moment(param, q, 1 - a)) / (a - 1)
        return max(fwd, rev), fwd, rev


def _check(curve, refs, orders, width=1e-3):
    """Valid bracket everywhere; relative width at most ``width`` (the add direction's
    first-order quadrature sets it where the two directions are close; where the remove
    direction is clearly larger the integer orders are tight to ~1e-12, see the catalogue
    test)."""
    for o, up, lo, ref in zip(orders, curve.epsilons, curve.lower_epsilons, refs, strict=True):
        assert mp.mpf(float(lo)) <= ref <= mp.mpf(float(up)), (o, lo, ref, up)
        if ref > 1e-300:
            assert (up - lo) <= width * up, (o, up, lo)


LAP_THETAS = [1e-4, 0.1, 2.0, 8.0, 40.0]
RATES = [1e-6, 1e-3, 0.05, 0.5, 0.999]
ORDERS = [1.001, 1.5, 2.0, 3.0, 7.5, 10.0, 64.0]


@pytest.mark.parametrize("theta", LAP_THETAS)
@pytest.mark.parametrize("q", RATES)
def test_laplace_against_mpmath(theta, q):
    mech = LaplaceMechanism(scale=1.0 / theta) if theta >= 1e-3 else LaplaceProfile(theta)
    curve = poisson_exact_rdp(mech, q, ORDERS)
    th = float(mech.theta)
    refs = [_reference(_laplace_moment, th, q, o)[0] for o in ORDERS]
    _check(curve, refs, ORDERS, width=1e-3 if theta < 5 else 3e-2)
    assert curve.bound == "exact"


@pytest.mark.parametrize("p", [0.5 + 1e-9, 0.6, 0.9, 0.999999, 0.2])
@pytest.mark.parametrize("q", RATES)
def test_randomized_response_against_mpmath(p, q):
    orders = [*ORDERS, 300.0]
    curve = poisson_exact_rdp(RandomizedResponse(p), q, orders)
    refs = [_reference(_rr_moment, p, q, o)[0] for o in orders]
    # two atoms: exact up to rounding at every order
    _check(curve, refs, orders, width=1e-6)


@pytest.mark.parametrize("theta, q", [(2.0, 0.05), (0.5, 0.3), (10.0, 1e-3)])
def test_large_orders_and_order_near_one(theta, q):
    orders = [1.0 + 1e-6, 1.01, 256.0, 1000.0, 1000.5, 5000.0]
    curve = poisson_exact_rdp(LaplaceMechanism(1.0 / theta), q, orders)
    th = float(LaplaceMechanism(1.0 / theta).theta)
    refs = [_reference(_laplace_moment, th, q, o)[0] for o in orders]
    for o, up, lo, ref in zip(orders, curve.epsilons, curve.lower_epsilons, refs, strict=True):
        assert mp.mpf(float(lo)) <= ref <= mp.mpf(float(up)), (o, lo, ref, up)
    # integer orders: tight; order → 1: the bracket closes on the KL divergence's scale
    assert curve.epsilons[2] - curve.lower_epsilons[2] <= 1e-9 * curve.epsilons[2]
    assert curve.epsilons[0] - curve.lower_epsilons[0] <= 1e-2 * curve.epsilons[0]


def test_remove_direction_is_the_larger_on_the_grid():
    """What the catalogue observed (W-20): D_α(mixture ‖ base) ≥ D_α(base ‖ mixture) — both are
    computed anyway; this documents which one the value is."""
    for th in (0.1, 2.0, 8.0):
        for q in (1e-3, 0.05, 0.5):
            for o in (1.001, 2.0, 7.5, 64.0):
                _, fwd, rev = _reference(_laplace_moment, th, q, o)
                assert fwd >= rev


@pytest.mark.parametrize("mech", [LaplaceMechanism(0.5), LaplaceMechanism(3.0, 2.0),
                                  RandomizedResponse(0.8), RandomizedMembershipMechanism(0, 0.7)])
def test_boundaries_q0_q1_and_monotone(mech):
    o = np.array([1.5, 2.0, 3.0, 10.0, math.inf])
    assert np.all(poisson_exact_rdp(mech, 0.0, o).epsilons == 0.0)
    one = poisson_exact_rdp(mech, 1.0, o)
    base = rdp_curve(mech, o)
    assert np.array_equal(one.epsilons, base.epsilons)
    prev = None
    grid = DEFAULT_ORDERS[::4]
    for q in [1e-8, 1e-4, 0.1, 0.9, 1.0]:
        c = poisson_exact_rdp(mech, q, grid)
        assert np.all(np.diff(c.epsilons) >= 0)  # non-decreasing in the order
        assert np.all(c.epsilons <= rdp_curve(mech, grid).epsilons)
        if prev is not None:
            assert np.all(c.lower_epsilons >= prev.lower_epsilons * (1 - 1e-9))  # in q
        prev = c


@pytest.mark.parametrize("mech", [LaplaceMechanism(0.5), LaplaceMechanism(0.05),
                                  LaplaceMechanism(50.0), RandomizedResponse(0.9),
                                  RandomizedResponse(0.5 + 1e-6)])
@pytest.mark.parametrize("q", [1e-5, 0.05, 0.5, 0.99])
def test_exact_below_the_factor_three_bound(mech, q):
    orders = np.arange(2.0, 65.0)
    exact = poisson_exact_rdp(mech, q, orders)
    zw = zhu_wang_upper_bound(mech, q, orders)
    assert np.all(exact.epsilons <= zw.epsilons * (1 + 1e-12))  # equal at order 2
    assert np.all(exact.lower_epsilons <= exact.epsilons)


def test_catalogue_values_w9_w20():
    """Catalogue W-9 / W-20 (computed with mpmath there): Laplace b = 0.5, γ = 0.05 — the exact
    values (W-9's, equal to W-20 without the factor 3) and the factor-3 ones, 25 % / 78 % / 19 %
    above at orders 3 / 10 / 30."""
    exact = {2: 0.00978235291459976, 3: 0.0157427934202343, 5: 0.029988180859819,
             10: 0.076388311390861, 30: 0.196330289053222}
    factor3 = {3: 0.019695191534343, 5: 0.0489083189741833, 10: 0.13604819939774,
               30: 0.234071575582317}
    orders = sorted(exact)
    c = poisson_exact_rdp(LaplaceMechanism(0.5), 0.05, [float(o) for o in orders])
    for o, up, lo in zip(orders, c.epsilons, c.lower_epsilons, strict=True):
        assert lo <= exact[o] * (1 + 1e-13) and exact[o] * (1 - 1e-13) <= up
        assert up <= exact[o] * (1 + 1e-11)
    zw = zhu_wang_upper_bound(LaplaceMechanism(0.5), 0.05, [3.0, 5.0, 10.0, 30.0],
                              refine=False)
    for o, v in zip([3, 5, 10, 30], zw.epsilons, strict=True):
        assert v == pytest.approx(factor3[o], rel=1e-12)
    ratios = [factor3[o] / exact[o] - 1 for o in (3, 10, 30)]
    assert [round(r, 2) for r in ratios] == [0.25, 0.78, 0.19]


def test_dispatch_auto_and_accountant():
    lap = LaplaceMechanism(0.5)
    auto = subsampled_rdp(lap, sampling="poisson", sampling_rate=0.05, orders=[2.0, 10.0])
    assert auto.bound == "exact"
    assert np.array_equal(auto.epsilons, poisson_exact_rdp(lap, 0.05, [2.0, 10.0]).epsilons)
    g = poisson_exact_rdp(GaussianMechanism(2.0), 0.1, [2.0, 2.5, 20.0])
    assert np.array_equal(g.epsilons, poisson_gaussian_rdp(2.0, 0.1, [2.0, 2.5, 20.0]).epsilons)
    from privamp import Accountant, Poisson

    exact = Accountant("rdp").add(lap, 1000, scheme=Poisson(0.05)).epsilon(1e-6).upper
    zw = Accountant("rdp")
    zw.add(ApproxDPMechanism(2.0, 0.0), 1000, scheme=Poisson(0.05))  # same ε(∞), Zhu–Wang
    pld = Accountant("pld").add(lap, 1000, scheme=Poisson(0.05)).epsilon(1e-6)
    assert pld.lower <= exact  # an upper bound still
    assert exact < zw.epsilon(1e-6).upper


@pytest.mark.parametrize("bad, match", [
    (dict(base=ApproxDPMechanism(1.0, 0.0)), "randomized membership mechanisms only"),
    (dict(base=LaplaceMechanism(0.5, relation="substitute")), "stated under 'substitute'"),
])
def test_refusals(bad, match):
    with pytest.raises(UnsupportedCombinationError, match=match):
        subsampled_rdp(sampling="poisson", sampling_rate=0.1, method="exact", **bad)
    with pytest.raises(UnsupportedCombinationError):
        poisson_exact_rdp(bad["base"], 0.1, [2.0])


def test_tiny_scale_skips_the_quadrature_safely():
    """θ = 1000 (b = Δ/1000): the quadrature would overflow; the chord and the caps remain."""
    c = poisson_exact_rdp(LaplaceMechanism(1e-3), 0.01, [1.5, 2.0, 3.0, 3.5, math.inf])
    assert np.all(np.isfinite(c.epsilons)) and np.all(c.lower_epsilons <= c.epsilons)
    # order ∞: log(1 + q(e^θ − 1)) ≈ θ + log q
    assert c.epsilons[-1] == pytest.approx(1000.0 + math.log(0.01), rel=1e-12)
    assert c.epsilons[2] - c.lower_epsilons[2] <= 1e-9 * c.epsilons[2]


@pytest.mark.parametrize("gamma", [0.3, 1.0])
def test_factor3_bound_with_infinite_base_orders(gamma):
    """An infinite base order (a pure-DP-free curve) at γ = 1 gave NaN (−inf weight × inf
    term): weights that are exactly 0 contribute 0; finite orders stay the base's at γ = 1."""
    from privamp.rdp import RdpCurve
    from privamp.rdp.subsampled import zhu_wang_upper_bound

    base = RdpCurve(np.array([2.0, 3.0, 4.0]), np.array([1.0, 2.0, np.inf]),
                    relation="add-remove")
    got = zhu_wang_upper_bound(base, gamma, [2.0, 3.0, 4.0]).epsilons
    assert not np.any(np.isnan(got)) and np.isinf(got[2])
    if gamma == 1.0:
        assert got[0] == pytest.approx(1.0, rel=1e-12) and got[1] == pytest.approx(2.0, rel=1e-12)
