"""RDP of base mechanisms: closed forms against mpmath, limits, group privacy, Theorem 6, pure DP,
dispatch and bad input."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privamp import (
    ApproxDPMechanism,
    ApproxDPProfile,
    DiscretePairMechanism,
    GaussianMechanism,
    GaussianProfile,
    LaplaceMechanism,
    LaplaceProfile,
    RandomizedMembershipMechanism,
    RandomizedResponse,
    RandomizedResponseProfile,
    TabulatedProfile,
)
from privamp.divergences import renyi_divergence
from privamp.errors import (
    InvalidParameterError,
    InvalidTypeError,
    NumericalError,
    UnsupportedCombinationError,
)
from privamp.rdp import (
    DEFAULT_ORDERS,
    ExactRdpCurve,
    RdpCurve,
    check_orders,
    pure_dp_rdp,
    rdp_bracket_from_profile,
    rdp_curve,
    rdp_from_profile,
)

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 50

ORDERS = np.array([1.0 + 1e-9, 1.0 + 1e-6, 1.01, 1.5, 2.0, 2.5, 3.0, 7.3, 32.0, 100.5, 1024.0,
                   1e4])


# ---------------------------------------------------------------------------------------------
# mpmath oracles (50 digits) — the formulas of Wang's slides W-3
# ---------------------------------------------------------------------------------------------


def mp_laplace(theta, order):
    """Laplace RDP, θ = Δ/b: log((a/(2a−1)) e^{(a−1)θ} + ((a−1)/(2a−1)) e^{−aθ})/(a−1)."""
    a, t = mp.mpf(order), mp.mpf(theta)
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * t) + (a - 1) / (2 * a - 1)
                  * mp.exp(-a * t)) / (a - 1)


def mp_rr(p, order):
    """Randomized response RDP: log(p^a (1−p)^{1−a} + (1−p)^a p^{1−a})/(a−1)."""
    a, p = mp.mpf(order), mp.mpf(p)
    return mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


def mp_laplace_integral(theta, order):
    """Independent check: D_a(Lap(0,1) ‖ Lap(θ,1)) by quadrature of p^a q^{1−a}."""
    a, t = mp.mpf(order), mp.mpf(theta)

    def f(z):
        return mp.exp(-a * abs(z) - (1 - a) * abs(z - t)) / 2

    return mp.log(mp.quad(f, [-mp.inf, 0, t, mp.inf])) / (a - 1)


def assert_bracket(curve, oracle_values, rel=1e-12):
    """lower ≤ oracle ≤ upper, and the bracket is tight."""
    for up, lo, o in zip(curve.epsilons, curve.lower_epsilons, oracle_values, strict=True):
        o = mp.mpf(o)
        assert mp.mpf(float(lo)) <= o <= mp.mpf(float(up))
        assert float(up) - float(lo) <= rel * max(float(o), 1e-300) + 1e-300


# ---------------------------------------------------------------------------------------------
# closed forms
# ---------------------------------------------------------------------------------------------


def test_catalogue_values_w3():
    """Catalogue W-3 values (computed there by direct Rényi-divergence integration)."""
    g = rdp_curve(GaussianMechanism(2.0), [1.5, 2.0])
    np.testing.assert_allclose(g.epsilons, [0.1875, 0.25], rtol=1e-15)
    lap = rdp_curve(LaplaceMechanism(1.5), [1.5, 2.0, 5.0, 20.0])
    np.testing.assert_allclose(lap.epsilons, [0.25973795175064, 0.32667805367807,
                                              0.52021525998833, 0.631517752320835], rtol=1e-12)
    rr = rdp_curve(RandomizedResponse(0.8), [2.0, 3.0])
    ref = np.array([1.1786549963416464, 1.2752106284493137])
    np.testing.assert_allclose(rr.epsilons, ref, rtol=1e-12)
    assert np.all(rr.epsilons >= ref) and np.all(rr.lower_epsilons <= ref)  # rounded outward


@pytest.mark.parametrize("theta", [1e-6, 0.01, 0.3, 1.0, 2.0, 7.0, 40.0])
def test_laplace_matches_mpmath_everywhere(theta):
    """Certified bracket around the 50-digit value from order 1 + 1e-9 to 1e4 (no cancellation
    near 1, no overflow at large orders)."""
    mech = LaplaceMechanism(scale=1.0, sensitivity=theta)
    curve = rdp_curve(mech, ORDERS)
    assert isinstance(curve, ExactRdpCurve) and curve.bound == "exact"
    assert_bracket(curve, [mp_laplace(mech.theta, a) for a in ORDERS], rel=1e-10)


@pytest.mark.parametrize("order", [1.3, 2.0, 6.5])
def test_laplace_formula_is_the_renyi_divergence(order):
    """The slides' closed form equals D_a of the Laplace pair (quadrature)."""
    assert mp.almosteq(mp_laplace(0.7, order), mp_laplace_integral(0.7, order), 1e-30)


@pytest.mark.parametrize("p", [0.5 + 1e-9, 0.51, 0.8, 0.99, 1 - 1e-12, 0.2, 1e-9])
def test_randomized_response_matches_mpmath(p):
    curve = rdp_curve(RandomizedResponse(p), ORDERS)
    assert_bracket(curve, [mp_rr(p, a) for a in ORDERS], rel=1e-10)


def test_limits_at_order_one_and_infinity():
    """Order → 1 gives the KL divergence; order ∞ the pure ε (W-3 limits)."""
    theta = 0.8
    lap = rdp_curve(LaplaceMechanism(1.0, theta), [1 + 1e-12, np.inf])
    assert lap.epsilons[0] == pytest.approx(theta + math.exp(-theta) - 1, rel=1e-10)
    assert lap.epsilons[1] == theta
    p = 0.7
    rr = rdp_curve(RandomizedResponse(p), [1 + 1e-12, np.inf])
    assert rr.epsilons[0] == pytest.approx((2 * p - 1) * math.log(p / (1 - p)), rel=1e-10)
    assert rr.epsilons[1] == pytest.approx(math.log(p / (1 - p)), rel=1e-14)
    assert rr.epsilons[1] >= math.log(p / (1 - p)) * (1 - 1e-15)
    assert math.isinf(rdp_curve(GaussianMechanism(1.0), [np.inf]).epsilons[0])


def test_degenerate_randomized_response():
    assert np.all(rdp_curve(RandomizedResponse(0.5), [2.0, np.inf]).epsilons == 0.0)
    assert np.all(np.isinf(rdp_curve(RandomizedResponse(1.0), [2.0, np.inf]).epsilons))
    assert np.all(np.isinf(rdp_curve(RandomizedResponse(0.0), [2.0, np.inf]).epsilons))


def test_curves_are_monotone_and_below_pure_epsilon():
    for mech in [LaplaceMechanism(0.5), RandomizedResponse(0.9), LaplaceMechanism(1e-3)]:
        c = rdp_curve(mech, DEFAULT_ORDERS)
        e = c.epsilons
        assert np.all(np.diff(e) >= -1e-15 * e[1:])
        assert np.all(e <= e[-1])


def test_group_privacy_white_box():
    """kΔ for Gaussian and Laplace; randomized response (membership too) is unchanged; pure ε-DP
    becomes kε."""
    o = np.array([2.0, 10.0])
    g3 = rdp_curve(GaussianMechanism(2.0), o, group_size=3)
    np.testing.assert_allclose(g3.epsilons, 9 * o / 8, rtol=1e-14)
    lap = rdp_curve(LaplaceMechanism(1.0), o, group_size=2)
    np.testing.assert_allclose(lap.epsilons, rdp_curve(LaplaceMechanism(0.5), o).epsilons,
                               rtol=1e-14)
    rr = RandomizedResponse(0.8)
    np.testing.assert_array_equal(rdp_curve(rr, o, group_size=5).epsilons,
                                  rdp_curve(rr, o).epsilons)
    memb = RandomizedMembershipMechanism(target=0, p=0.8)
    np.testing.assert_array_equal(rdp_curve(memb, o, 4).epsilons, rdp_curve(rr, o).epsilons)
    pure = rdp_curve(ApproxDPMechanism(0.5, 0.0), o, group_size=2)
    np.testing.assert_allclose(pure.epsilons, pure_dp_rdp(1.0, o).epsilons, rtol=1e-15)
    # group profiles dispatch to their closed forms too
    np.testing.assert_allclose(rdp_curve(GaussianProfile(0.5), o, 3).epsilons, g3.epsilons,
                               rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# pure DP
# ---------------------------------------------------------------------------------------------


def test_pure_dp_is_randomized_response_and_below_classical_bounds():
    """ε'(order) = RDP of RR with p = e^ε/(1+e^ε) ≤ min(ε, order ε²/2) (Bun & Steinke 2016)."""
    orders = DEFAULT_ORDERS[np.isfinite(DEFAULT_ORDERS)]
    for eps in [1e-6, 0.1, 1.0, 3.0, 30.0]:
        c = pure_dp_rdp(eps, orders)
        assert np.all(c.epsilons <= np.minimum(eps, orders * eps**2 / 2) * (1 + 1e-12))
        assert pure_dp_rdp(eps, [np.inf]).pure_epsilon == eps
        if eps <= 3.0:  # beyond, p = e^ε/(1+e^ε) is not representable closely enough
            p = 1 / (1 + math.exp(-eps))
            rr = rdp_curve(RandomizedResponse(p), orders)
            np.testing.assert_allclose(c.epsilons, rr.epsilons, rtol=1e-9)
    # the cosh form, in mpmath
    a, e = mp.mpf(7.5), mp.mpf(2)
    ref = mp.log(mp.cosh((a - mp.mpf(1) / 2) * e) / mp.cosh(e / 2)) / (a - 1)
    assert pure_dp_rdp(2.0, [7.5]).epsilons[0] == pytest.approx(float(ref), rel=1e-13)


@given(st.floats(0.01, 5.0), st.lists(st.floats(0.01, 1.0), min_size=2, max_size=6),
       st.floats(1.05, 200.0))
def test_every_pure_dp_pair_is_below_the_pure_dp_curve(eps, weights, order):
    """A random pair with e^{−ε} ≤ p/q ≤ e^ε (a pure ε-DP pair) never exceeds pure_dp_rdp —
    this fails if the bound were not the worst case."""
    q = np.array(weights) / np.sum(weights)
    rng = np.random.default_rng(len(weights))
    ratio = np.exp(rng.uniform(-eps, eps, size=q.size))
    p = q * ratio
    p = p / p.sum()
    # renormalising can push a ratio past e^ε: shrink towards q until it fits
    while np.max(np.abs(np.log(p / q))) > eps:
        p = 0.5 * (p + q)
    bound = pure_dp_rdp(eps, [order]).epsilons[0]
    for x, y in ((p, q), (q, p)):
        assert float(renyi_divergence(x, y, order)) <= bound * (1 + 1e-9) + 1e-15


def test_laplace_is_below_the_pure_dp_curve():
    """Laplace with θ is θ-DP, so its RDP is below the tight pure-DP curve (strictly)."""
    orders = np.array([1.5, 2.0, 10.0, 100.0])
    for theta in [0.1, 1.0, 5.0]:
        lap = rdp_curve(LaplaceMechanism(1.0, theta), orders).epsilons
        assert np.all(lap < pure_dp_rdp(theta, orders).epsilons)


def test_approx_dp_with_positive_delta_has_no_finite_rdp():
    c = rdp_curve(ApproxDPMechanism(1.0, 1e-6), [1.5, 2.0, np.inf])
    assert np.all(np.isinf(c.epsilons)) and c.bound == "exact"
    assert np.all(np.isinf(rdp_curve(ApproxDPProfile(1.0, 1e-6), [2.0]).epsilons))
    assert rdp_curve(ApproxDPProfile(1.0, 0.0), [np.inf]).epsilons[0] == 1.0


# ---------------------------------------------------------------------------------------------
# Theorem 6
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile, closed", [
    (GaussianProfile(1.0), lambda a: a / 2),
    (GaussianProfile(0.3), lambda a: a * 0.09 / 2),
    (LaplaceProfile(1.0), lambda a: float(mp_laplace(1.0, a))),
    (LaplaceProfile(2.0), lambda a: float(mp_laplace(2.0, a))),
    (RandomizedResponseProfile(0.8), lambda a: float(mp_rr(0.8, a))),
])
def test_theorem6_matches_closed_forms(profile, closed):
    """Theorem 6 (numerical, certified) reproduces the closed forms: the bracket contains them
    and is narrow (relative error ≤ rtol)."""
    orders = np.array([1.05, 1.5, 2.0, 3.0, 7.5, 20.0])
    lower, upper = rdp_bracket_from_profile(profile, orders, rtol=1e-7)
    truth = np.array([closed(a) for a in orders])
    assert np.all(lower <= truth * (1 + 1e-12))
    assert np.all(upper >= truth * (1 - 1e-12))
    np.testing.assert_allclose(upper, truth, rtol=2e-6)
    curve = rdp_from_profile(profile, orders)
    assert curve.bound == "upper" and curve.relation is profile.relation
    assert np.all(curve.epsilons >= truth * (1 - 1e-12))


def test_theorem6_large_orders_fall_back_to_pure_dp():
    """Where the MGF overflows, the curve is ∞ for infinite-ε profiles and the tight pure-DP
    bound for profiles that reach 0 (never NaN, never an error)."""
    lo, up = rdp_bracket_from_profile(LaplaceProfile(2.0), [2.0, 500.0, 5000.0, np.inf])
    assert up[-1] == 2.0 and np.all(up <= 2.0) and np.all(np.diff(up) >= 0)
    assert up[2] == pytest.approx(float(pure_dp_rdp(2.0, [5000.0]).epsilons[0]))
    lo, up = rdp_bracket_from_profile(GaussianProfile(1.0), [2.0, 200.0])
    assert math.isinf(up[1]) and up[0] == pytest.approx(1.0, rel=1e-6)


def test_generic_mechanism_goes_through_theorem6():
    """A profile without a closed form (a discrete pair's, seen only through its profile): the
    Theorem 6 curve upper-bounds the pair's exact Rényi divergences in both directions; the
    mechanism itself now gets its exact curve, below the Theorem 6 one."""
    p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    mech = DiscretePairMechanism(p, q)
    orders = np.array([1.5, 2.0, 4.0, 16.0, np.inf])
    curve = rdp_from_profile(mech.profile(), orders)
    assert curve.bound == "upper"
    exact = np.maximum(renyi_divergence(p, q, orders), renyi_divergence(q, p, orders))
    assert np.all(curve.epsilons >= exact * (1 - 1e-12))
    np.testing.assert_allclose(curve.epsilons[:-1], exact[:-1], rtol=1e-5)
    own = rdp_curve(mech, orders)
    assert own.bound == "exact" and np.all(own.epsilons <= curve.epsilons * (1 + 1e-12))
    np.testing.assert_allclose(own.epsilons, exact, rtol=1e-12)
    # black-box group privacy (Theorem 6 on Vadhan's profile) can only be worse than white-box
    lap = LaplaceProfile(0.5)
    bb = rdp_curve(lap.group(2, "black-box"), [2.0, 3.0])
    wb = rdp_curve(lap, [2.0, 3.0], group_size=2)
    assert bb.bound == "upper" and np.all(bb.epsilons >= wb.epsilons)


def test_theorem6_needs_a_tail():
    """A profile that never reaches 0 and cannot bound its tail (a tabulated profile, the
    black-box group profile of a Gaussian) gives a typed error, not a number."""
    tab = TabulatedProfile([0.0, 1.0, 2.0], [0.5, 0.1, 0.01])
    with pytest.raises(NumericalError):
        rdp_from_profile(tab, [2.0])
    with pytest.raises(NumericalError):
        rdp_curve(GaussianProfile(0.5).group(2, "black-box"), [2.0])


# ---------------------------------------------------------------------------------------------
# dispatch and bad input
# ---------------------------------------------------------------------------------------------


def test_rdp_curve_of_a_curve():
    c = RdpCurve([2.0, 4.0, np.inf], [0.1, 0.3, 1.0], bound="exact")
    assert rdp_curve(c, [2.0, 4.0, np.inf]) is c
    sub = rdp_curve(c, [4.0])
    assert sub.bound == "exact" and sub.epsilons[0] == 0.3
    inter = rdp_curve(c, [3.0])
    assert inter.bound == "upper" and 0.1 <= inter.epsilons[0] <= 0.3
    with pytest.raises(UnsupportedCombinationError, match="group privacy"):
        rdp_curve(c, [2.0], group_size=2)
    exact = rdp_curve(GaussianMechanism(1.0), [2.0, 3.0, 4.0])
    assert isinstance(rdp_curve(exact, [3.0]), ExactRdpCurve)


@pytest.mark.parametrize("orders, match", [
    ([1.0, 2.0], r"orders must be real number\(s\) in \(1, inf\]; got 1.0"),
    ([0.5], "got 0.5"),
    ([2.0, float("nan")], "NaN"),
    ([], "non-empty"),
    ([3.0, 2.0], "strictly increasing"),
    ([2.0, 2.0], "strictly increasing"),
    ([[2.0, 3.0]], "1-dimensional"),
])
def test_bad_orders(orders, match):
    with pytest.raises(InvalidParameterError, match=match):
        rdp_curve(GaussianMechanism(1.0), orders)
    with pytest.raises(InvalidParameterError, match=match):
        check_orders(orders)


def test_bad_inputs_are_typed():
    with pytest.raises(InvalidTypeError, match="mechanism must be a Mechanism"):
        rdp_curve("gaussian", [2.0])
    with pytest.raises(InvalidTypeError):
        rdp_curve(GaussianMechanism(1.0), "2")
    with pytest.raises(InvalidParameterError, match="group_size"):
        rdp_curve(GaussianMechanism(1.0), [2.0], group_size=0)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        pure_dp_rdp(-1.0, [2.0])
    with pytest.raises(InvalidParameterError, match="rtol"):
        rdp_from_profile(GaussianProfile(1.0), [2.0], rtol=0.0)
    with pytest.raises(InvalidTypeError, match="profile"):
        rdp_from_profile(GaussianMechanism(1.0), [2.0])
    with pytest.raises(InvalidParameterError, match="lower_epsilons"):
        ExactRdpCurve([2.0], [0.1], [0.2])
    assert check_orders(3.0).tolist() == [3.0]


_PAIRS = [([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]), ([0.5, 0.5, 0.0], [0.4, 0.5, 0.1]),
          ([0.5, 0.5], [0.5 + 1e-12, 0.5 - 1e-12]), ([1e-300, 1 - 1e-300], [1e-200, 1 - 1e-200]),
          ([0.25, 0.75], [0.75, 0.25]), ([1.0, 0.0], [0.5, 0.5]), ([0.3, 0.7], [0.3, 0.7])]


def _mp_renyi(p, q, order):
    """max of both directions' Rényi divergence at one finite order, 60 digits."""
    with mp.workdps(60):
        best = mp.mpf(0)
        for x, y in ((p, q), (q, p)):
            x, y = [mp.mpf(v) for v in x], [mp.mpf(v) for v in y]
            if any(a > 0 and b == 0 for a, b in zip(x, y, strict=True)):
                return mp.inf
            total = mp.fsum(a**order * b ** (1 - order) for a, b in zip(x, y, strict=True) if a > 0)
            best = max(best, mp.log(total) / (order - 1))
        return best


@pytest.mark.parametrize(("p", "q"), _PAIRS)
def test_discrete_pair_rdp_brackets_mpmath(p, q):
    """The exact discrete-pair curve (both directions, rounded outward) contains the 60-digit
    Rényi divergence at orders from 1 + 1e-4 to 1e4, including pairs that nearly coincide, have
    subnormal-scale masses, differ in support, or are equal."""
    orders = np.array([1.0001, 1.01, 1.5, 2.0, 3.0, 10.0, 100.0, 1e4, np.inf])
    curve = rdp_curve(DiscretePairMechanism(p, q), orders)
    assert curve.bound == "exact"
    logs = [abs(math.log(v)) for v in (*p, *q) if v > 0]
    for a, up, lo in zip(orders[:-1], curve.epsilons, curve.lower_epsilons, strict=False):
        ref = _mp_renyi(p, q, mp.mpf(float(a)))
        assert lo <= ref <= up, (a, lo, float(ref), up)
        if mp.isfinite(ref) and ref > 1e-6:  # tight: margins absolute, in units of a·|log p|
            assert up - lo <= 1e-13 * (1 + ref) * (1 + a * max(logs)) / min(1.0, a - 1.0)
    with mp.workdps(60):  # order ∞: the largest log-ratio, both directions
        if any((x > 0) != (y > 0) for x, y in zip(p, q, strict=True)):
            ref = mp.inf
        else:
            ref = max(abs(mp.log(mp.mpf(x)) - mp.log(mp.mpf(y))) for x, y in zip(p, q, strict=True)
                      if x > 0)
    assert curve.lower_epsilons[-1] <= ref <= curve.epsilons[-1]


@given(st.lists(st.floats(1e-12, 1.0), min_size=2, max_size=6),
       st.lists(st.floats(1e-12, 1.0), min_size=2, max_size=6),
       st.floats(1.001, 64.0))
def test_discrete_pair_rdp_random_pairs(xs, ys, order):
    n = min(len(xs), len(ys))
    p = np.array(xs[:n]) / math.fsum(xs[:n])
    q = np.array(ys[:n]) / math.fsum(ys[:n])
    curve = rdp_curve(DiscretePairMechanism(p, q), [order])
    ref = _mp_renyi(p.tolist(), q.tolist(), mp.mpf(order))
    assert curve.lower_epsilons[0] <= ref <= curve.epsilons[0]

