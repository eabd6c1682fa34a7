"""Subsampled RDP: catalogue values (W-8, W-9, W-20) reproduced by mpmath snippets, the exact
Poisson-subsampled Gaussian against mpmath integrals at extreme parameters, orderings
upper ≥ exact ≥ lower, γ = 1 and γ = 0, unsupported combinations and bad input."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import (
    ApproxDPMechanism,
    DiscretePairMechanism,
    GaussianMechanism,
    GaussianProfile,
    LaplaceMechanism,
    RandomizedResponse,
)
from privamp.divergences import renyi_divergence
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.rdp import (
    DEFAULT_ORDERS,
    ExactRdpCurve,
    RdpCurve,
    poisson_gaussian_rdp,
    rdp_curve,
    subsampled_lower_bound,
    subsampled_rdp,
    wbk_upper_bound,
    zhu_wang_upper_bound,
)

G2S = GaussianMechanism(2.0, relation="substitute")
G5S = GaussianMechanism(5.0, relation="substitute")
LAPS = LaplaceMechanism(0.5, relation="substitute")
G2 = GaussianMechanism(2.0)
G5 = GaussianMechanism(5.0)
LAP = LaplaceMechanism(0.5)


# ---------------------------------------------------------------------------------------------
# mpmath snippets that produce the catalogue's reference constants (§4 W-8, W-9, W-20)
# ---------------------------------------------------------------------------------------------


def mp_gauss(sigma):
    return lambda a: mp.mpf(a) / (2 * mp.mpf(sigma) ** 2), mp.inf


def mp_lap(b):
    def eps(a):
        a, lam = mp.mpf(a), mp.mpf(b)
        return mp.log(a / (2 * a - 1) * mp.exp((a - 1) / lam)
                      + (a - 1) / (2 * a - 1) * mp.exp(-a / lam)) / (a - 1)
    return eps, 1 / mp.mpf(b)


def mp_wbk(base, gamma, alpha):
    """W-8 exactly as printed (integer α ≥ 2)."""
    eps, e_inf = base
    g = mp.mpf(gamma)
    cap = lambda j: 2 if e_inf == mp.inf else min(2, (mp.exp(e_inf) - 1) ** j)  # noqa: E731
    s = 1 + g**2 * mp.binomial(alpha, 2) * min(4 * (mp.exp(eps(2)) - 1),
                                               mp.exp(eps(2)) * cap(2))
    for j in range(3, alpha + 1):
        s += g**j * mp.binomial(alpha, j) * mp.exp((j - 1) * eps(j)) * cap(j)
    return mp.log(s) / (alpha - 1)


def mp_lower(base, gamma, alpha):
    """W-9 in its printed form (safe at 50 digits; it cancels in float64, erratum E23)."""
    eps, _ = base
    g = mp.mpf(gamma)
    s = 1 + alpha * g / (1 - g)
    for j in range(2, alpha + 1):
        s += mp.binomial(alpha, j) * (g / (1 - g)) ** j * mp.exp((j - 1) * eps(j))
    return alpha / mp.mpf(alpha - 1) * mp.log(1 - g) + mp.log(s) / (alpha - 1)


def mp_zhu_wang(base, gamma, alpha):
    """W-20 as printed (factor 3)."""
    eps, _ = base
    g = mp.mpf(gamma)
    s = (1 - g) ** (alpha - 1) * (alpha * g - g + 1)
    s += mp.binomial(alpha, 2) * g**2 * (1 - g) ** (alpha - 2) * mp.exp(eps(2))
    for ell in range(3, alpha + 1):
        s += 3 * mp.binomial(alpha, ell) * (1 - g) ** (alpha - ell) * g**ell \
            * mp.exp((ell - 1) * eps(ell))
    return mp.log(s) / (alpha - 1)


# (mechanism for privamp, mpmath base, γ, {order: catalogue constant})
WBK_REF = [
    (G2S, mp_gauss(2), 0.1, {2: 0.0112969649892399, 3: 0.0188005906498947,
                             5: 0.0372505420874595, 10: 0.092185131332226}),
    (G5S, mp_gauss(5), 0.001, {2: 1.632430834454e-7, 8: 6.71036209554217e-7,
                               32: 2.97552009079025e-6}),
    (LAPS, mp_lap(0.5), 0.05, {2: 0.0243615461463627, 3: 0.0394851169575187,
                               5: 0.0739032726788651, 10: 0.15558372074495,
                               30: 0.258763140191435}),
]
LOWER_REF = [
    (G2S, mp_gauss(2), 0.1, {2: 0.00283622826626362, 3: 0.00437365834857706,
                             5: 0.00773696848979586, 10: 0.0186242542581988}),
    (G5S, mp_gauss(5), 0.001, {2: 4.08107733596286e-8, 8: 1.63283580969606e-7,
                               32: 6.53783208992642e-7}),
    (LAPS, mp_lap(0.5), 0.05, {2: 0.00978235291459976, 3: 0.0157427934202343,
                               5: 0.029988180859819, 10: 0.076388311390861,
                               30: 0.196330289053222}),
]
ZW_REF = [
    (G2, mp_gauss(2), 0.1, {2: 0.00283622826626362, 3: 0.00646782937025296,
                            5: 0.0169156687388575, 10: 0.0506701533282541}),
    (G5, mp_gauss(5), 0.001, {8: 1.81258836637325e-7, 32: 1.00714190059587e-6}),
    (LAP, mp_lap(0.5), 0.05, {3: 0.019695191534343, 5: 0.0489083189741833,
                              10: 0.13604819939774, 30: 0.234071575582317}),
]


def _n_m(gamma):
    """WOR sizes with m/n = γ exactly."""
    n = 10**6
    return n, round(gamma * n)


@pytest.mark.parametrize("mech, base, gamma, ref", WBK_REF)
def test_wbk_reference_values(mech, base, gamma, ref):
    mp.mp.dps = 40
    orders = np.array(sorted(ref), dtype=float)
    curve = wbk_upper_bound(mech, *_n_m(gamma), orders, refine=False)
    for a, value, const in zip(ref, curve.epsilons, ref.values(), strict=True):
        exact = mp_wbk(base, gamma, a)
        assert float(exact) == pytest.approx(const, rel=1e-12)  # the snippet reproduces it
        assert value >= float(exact) * (1 - 1e-15)  # rounded up
        assert value == pytest.approx(float(exact), rel=1e-12)
    assert curve.bound == "upper" and curve.relation.value == "substitute"


@pytest.mark.parametrize("mech, base, gamma, ref", LOWER_REF)
def test_lower_bound_reference_values(mech, base, gamma, ref):
    mp.mp.dps = 40
    orders = np.array(sorted(ref), dtype=float)
    curve = subsampled_lower_bound(mech, gamma, orders)
    for a, value, const in zip(ref, curve.epsilons, ref.values(), strict=True):
        exact = mp_lower(base, gamma, a)
        assert float(exact) == pytest.approx(const, rel=1e-12)
        assert value <= float(exact) * (1 + 1e-15)  # rounded down
        assert value == pytest.approx(float(exact), rel=1e-12)
    assert curve.bound == "lower"


@pytest.mark.parametrize("mech, base, gamma, ref", ZW_REF)
def test_zhu_wang_reference_values(mech, base, gamma, ref):
    mp.mp.dps = 40
    orders = np.array(sorted(ref), dtype=float)
    curve = zhu_wang_upper_bound(mech, gamma, orders, refine=False)
    for a, value, const in zip(ref, curve.epsilons, ref.values(), strict=True):
        exact = mp_zhu_wang(base, gamma, a)
        assert float(exact) == pytest.approx(const, rel=1e-12)
        assert value >= float(exact) * (1 - 1e-15)
        assert value == pytest.approx(float(exact), rel=1e-12)
    assert curve.relation.value == "add-remove"


def test_pure_dp_cap_reference():
    """W-8's Laplace line: the pure-DP cap log(1 + 0.05(e² − 1)) = 0.27721710894494067 is the
    value at order ∞, and caps every order with the refinements."""
    c = wbk_upper_bound(LAPS, 100, 5, [30.0, 1e4, np.inf])
    assert c.epsilons[-1] == pytest.approx(0.27721710894494067, rel=1e-14)
    assert c.epsilons[-1] >= 0.27721710894494067
    assert np.all(c.epsilons <= c.epsilons[-1])


def test_stable_form_at_tiny_rates():
    """Erratum E23: at γ = 1e-7 the printed W-9 form cancels in float64, the stable form used
    here keeps full accuracy (50-digit reference)."""
    mp.mp.dps = 60
    gamma = 1e-7
    for a in [2, 5, 40]:
        ref = mp_lower(mp_gauss(5), gamma, a)
        ours = subsampled_lower_bound(G5S, gamma, [float(a)]).epsilons[0]
        assert ours == pytest.approx(float(ref), rel=1e-12)
        g = gamma
        printed = (a / (a - 1)) * math.log(1 - g) + math.log(
            1 + a * g / (1 - g) + sum(math.comb(a, j) * (g / (1 - g)) ** j
                                      * math.exp((j - 1) * j / 50) for j in range(2, a + 1))
        ) / (a - 1)
        assert abs(printed - float(ref)) > 1e-4 * float(ref)  # the naive form is wrong here


# ---------------------------------------------------------------------------------------------
# the exact Poisson-subsampled Gaussian against mpmath integrals
# ---------------------------------------------------------------------------------------------


def mp_poisson_gaussian(sigma, q, a):
    """ε(a) = log(A)/(a − 1), A − 1 = ∫ φ_σ(z)[(1 + q(r − 1))^a − 1 − aq(r − 1)] dz with
    r = e^{(2z−1)/(2σ²)} (the linear term integrates to 0). The bracket cancels to about q²
    relative to 1, so the working precision grows by two digits per decade of q."""
    mp.mp.dps = 18 + 2 * max(0, math.ceil(-math.log10(q)))
    s, q, a = mp.mpf(sigma), mp.mpf(q), mp.mpf(a)

    def f(z):
        r = mp.exp((2 * z - 1) / (2 * s * s))
        return mp.npdf(z, 0, s) * ((1 + q * (r - 1)) ** a - 1 - a * q * (r - 1))

    z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
    pts = sorted({mp.mpf(0), z0, a, a - 40 * s, a + 40 * s, -40 * s, z0 - 40 * s, z0 + 40 * s})
    return mp.log1p(mp.quad(f, [-mp.inf, *pts, mp.inf], maxdegree=10)) / (a - 1)


def mp_reverse_direction(sigma, q, a, dps=30):
    """D_a(μ₀ ‖ μ): log ∫ φ_σ (1 − q + q r)^{1−a} / (a − 1) (the "add" direction)."""
    mp.mp.dps = dps
    s, q, a = mp.mpf(sigma), mp.mpf(q), mp.mpf(a)

    def f(z):
        r = mp.exp((2 * z - 1) / (2 * s * s))
        return mp.npdf(z, 0, s) * (1 + q * (r - 1)) ** (1 - a)

    z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
    return mp.log(mp.quad(f, [-mp.inf, -40 * s, 0, z0, 40 * s, mp.inf])) / (a - 1)


def _check_against_mpmath(sigma, q, orders):
    curve = poisson_gaussian_rdp(sigma, q, orders)
    assert isinstance(curve, ExactRdpCurve)
    for a, up, lo in zip(orders, curve.epsilons, curve.lower_epsilons, strict=True):
        ref = mp_poisson_gaussian(sigma, q, a)
        assert mp.mpf(float(lo)) <= ref <= mp.mpf(float(up)), (sigma, q, a)
        assert float(up) <= float(ref) * (1 + 1e-7)  # and tight


@pytest.mark.parametrize("sigma, q, orders", [
    (1.0, 0.01, [1.5, 2.0, 2.5, 7.3]),
    (0.3, 1e-7, [1.5, 2.0, 2.5]),
    (50.0, 1e-7, [1.5, 2.0, 4095.5, 4096.0]),
    (5.0, 0.5, [1.01, 2.5, 32.0]),
])
def test_exact_poisson_gaussian_against_mpmath(sigma, q, orders):
    _check_against_mpmath(sigma, q, orders)


@pytest.mark.slow
@pytest.mark.parametrize("q", [1e-7, 1e-3, 0.5])
@pytest.mark.parametrize("sigma", [0.3, 5.0, 50.0])
def test_exact_poisson_gaussian_extreme_grid(sigma, q):
    """Rate 1e-7 … 0.5, σ 0.3 … 50, orders 1.5 … 4096 (integer and fractional)."""
    _check_against_mpmath(sigma, q, [1.5, 7.3, 4095.5])  # 4096: in the fast test above


def test_remove_direction_dominates():
    """D_a(μ ‖ μ₀) ≥ D_a(μ₀ ‖ μ) (Mironov, Talwar, Zhang 2019), so the exact curve covers both
    directions of add/remove."""
    for sigma, q, a in [(0.5, 0.1, 1.5), (1.0, 0.01, 2.0), (1.0, 0.3, 7.5), (2.0, 0.5, 3.0),
                        (0.8, 0.9, 4.0), (5.0, 1e-3, 20.0)]:
        forward = poisson_gaussian_rdp(sigma, q, [a]).lower_epsilons[0]
        assert float(mp_reverse_direction(sigma, q, a)) <= forward


def test_exact_matches_the_integer_sum_at_fractional_neighbours():
    """Continuity across integers: the fractional series at 3 ± 1e-9 agrees with the integer
    binomial sum at 3 (two independent code paths)."""
    for sigma, q in [(0.5, 1e-3), (2.0, 0.2), (20.0, 1e-6)]:
        c = poisson_gaussian_rdp(sigma, q, [3.0 - 1e-9, 3.0, 3.0 + 1e-9])
        np.testing.assert_allclose(c.epsilons, c.epsilons[1], rtol=1e-7)


def test_exact_edges():
    c = poisson_gaussian_rdp(2.0, 1.0, [1.5, 3.0, np.inf])
    np.testing.assert_allclose(c.epsilons, [1.5 / 8, 3 / 8, np.inf], rtol=1e-15)
    assert np.all(poisson_gaussian_rdp(2.0, 0.0, [1.5, np.inf]).epsilons == 0)
    assert math.isinf(poisson_gaussian_rdp(2.0, 0.1, [np.inf]).epsilons[0])
    big = poisson_gaussian_rdp(1.0, 0.01, DEFAULT_ORDERS)
    assert np.all(np.isfinite(big.epsilons[:-1])) and np.all(np.diff(big.epsilons) >= 0)


# ---------------------------------------------------------------------------------------------
# orderings and reductions
# ---------------------------------------------------------------------------------------------

GRID_ORDERS = np.array([2.0, 2.7, 3.0, 4.5, 10.0, 33.3, 100.0, 1000.0])


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 5.0, 20.0])
@pytest.mark.parametrize("gamma", [1e-6, 1e-3, 0.05, 0.3, 0.9])
def test_upper_exact_lower_ordering_gaussian(sigma, gamma):
    """WBK ≥ exact ≥ lower and Zhu–Wang ≥ exact, everywhere on a grid (the W-9 pair is a valid
    WOR pair and the Poisson worst pair)."""
    n, m = 10**7, round(gamma * 10**7)
    wbk = wbk_upper_bound(GaussianMechanism(sigma, relation="substitute"), n, m, GRID_ORDERS)
    zw = zhu_wang_upper_bound(GaussianMechanism(sigma), gamma, GRID_ORDERS)
    exact = poisson_gaussian_rdp(sigma, gamma, GRID_ORDERS)
    lower = subsampled_lower_bound(GaussianMechanism(sigma, relation="substitute"), gamma,
                                   GRID_ORDERS)
    assert np.all(wbk.epsilons >= exact.epsilons * (1 - 1e-12))
    assert np.all(zw.epsilons >= exact.epsilons * (1 - 1e-12))
    assert np.all(exact.lower_epsilons >= lower.epsilons)
    assert np.all(exact.epsilons >= exact.lower_epsilons)


@pytest.mark.parametrize("mech", [LaplaceMechanism(0.5), LaplaceMechanism(3.0),
                                  RandomizedResponse(0.8)])
@pytest.mark.parametrize("gamma", [1e-4, 0.05, 0.5])
def test_upper_lower_ordering_other_mechanisms(mech, gamma):
    sub = type(mech)(*[getattr(mech, f) for f in ("scale", "sensitivity")], "substitute") \
        if isinstance(mech, LaplaceMechanism) else RandomizedResponse(mech.p, "substitute")
    n, m = 10**6, round(gamma * 10**6)
    lower = subsampled_lower_bound(sub, gamma, GRID_ORDERS).epsilons
    assert np.all(wbk_upper_bound(sub, n, m, GRID_ORDERS).epsilons >= lower)
    assert np.all(zhu_wang_upper_bound(mech, gamma, GRID_ORDERS).epsilons >= lower)
    assert np.all(lower >= 0)


def test_rate_one_reduces_to_the_mechanism():
    """At γ = 1 every bound equals the mechanism's own RDP (with the refinements for the upper
    bounds; the slides' WBK formula alone is looser there, erratum E21)."""
    orders = np.array([1.5, 2.0, 3.0, 7.5, 64.0])
    for sub, add in [(G2S, G2), (LAPS, LAP), (RandomizedResponse(0.8, "substitute"),
                                              RandomizedResponse(0.8))]:
        base = rdp_curve(add, orders).epsilons
        np.testing.assert_allclose(wbk_upper_bound(sub, 7, 7, orders).epsilons, base,
                                   rtol=1e-13)
        np.testing.assert_allclose(zhu_wang_upper_bound(add, 1.0, orders).epsilons, base,
                                   rtol=1e-13)
        np.testing.assert_allclose(subsampled_lower_bound(sub, 1.0, orders[1:]).epsilons,
                                   base[1:], rtol=1e-12)
        raw = wbk_upper_bound(sub, 7, 7, [3.0], refine=False).epsilons[0]
        assert raw > base[2]  # E21: the printed formula does not reduce to ε(α)
    np.testing.assert_allclose(poisson_gaussian_rdp(2.0, 1.0, orders).epsilons, orders / 8,
                               rtol=1e-15)


def test_rate_zero_and_monotone_in_rate():
    for f in (lambda g: zhu_wang_upper_bound(LAP, g, GRID_ORDERS).epsilons,
              lambda g: poisson_gaussian_rdp(1.0, g, GRID_ORDERS).epsilons,
              lambda g: subsampled_lower_bound(LAPS, g, GRID_ORDERS).epsilons):
        assert np.all(f(0.0) == 0.0)
        values = np.array([f(g) for g in [1e-5, 1e-3, 0.1, 0.5, 1.0]])
        assert np.all(np.diff(values, axis=0) >= 0)
    assert np.all(wbk_upper_bound(LAPS, 10, 0, GRID_ORDERS).epsilons == 0.0)


def test_fractional_orders_are_chord_interpolated():
    """Between integers the upper bounds use the CGF chord: never above the next integer value,
    never below the exact Poisson value, and below 2 the value at 2."""
    orders = np.array([1.5, 2.0, 2.5, 3.0])
    zw = zhu_wang_upper_bound(G2, 0.1, orders).epsilons
    assert zw[0] == zw[1] and zw[1] <= zw[2] <= zw[3]
    chord = (0.5 * (2 - 1) * zw[1] + 0.5 * (3 - 1) * zw[3]) / (2.5 - 1)  # CGF chord at 2.5
    assert zw[2] == pytest.approx(chord, rel=1e-12)
    exact = poisson_gaussian_rdp(2.0, 0.1, orders).epsilons
    assert np.all(zw >= exact)


@settings(max_examples=40)
@given(st.floats(0.3, 30.0), st.floats(1e-6, 0.99),
       st.lists(st.integers(2, 200), min_size=1, max_size=5, unique=True))
def test_orderings_property(sigma, gamma, ints):
    """Random parameters: lower ≤ exact ≤ Zhu–Wang, exact ≤ WBK (integer orders)."""
    orders = np.array(sorted(ints), dtype=float)
    exact = poisson_gaussian_rdp(sigma, gamma, orders)
    zw = zhu_wang_upper_bound(GaussianMechanism(sigma), gamma, orders).epsilons
    lower = subsampled_lower_bound(GaussianMechanism(sigma), gamma, orders,
                                   relation="add-remove").epsilons
    assert np.all(lower <= exact.epsilons)
    assert np.all(exact.epsilons <= zw * (1 + 1e-12))
    n = 10**9
    wbk = wbk_upper_bound(GaussianMechanism(sigma, relation="substitute"), n,
                          math.ceil(gamma * n), orders).epsilons
    assert np.all(exact.epsilons <= wbk * (1 + 1e-12))


def test_large_orders_stay_finite_and_capped():
    orders = np.array([2.0, 100.0, 1000.0, 5000.0, 1e4, np.inf])
    for c in (wbk_upper_bound(LAPS, 1000, 10, orders),
              zhu_wang_upper_bound(LAP, 0.01, orders)):
        assert np.all(np.isfinite(c.epsilons)) and np.all(np.diff(c.epsilons) >= 0)
        assert c.epsilons[-1] == pytest.approx(math.log1p(0.01 * math.expm1(2.0)), rel=1e-13)


def test_numerical_base_uses_the_coarse_grid_safely():
    """A base without a closed form (Theorem 6) on a long integer grid is evaluated on a coarse
    grid and interpolated; the result still bounds WBK applied to the exact base curve."""
    p, q = [0.6, 0.3, 0.1], [0.1, 0.3, 0.6]
    mech = DiscretePairMechanism(p, q, relation="substitute")
    orders = np.array([2.0, 10.0, 300.0, 1000.0])
    ints = np.arange(2.0, 1001.0)
    exact = np.maximum(renyi_divergence(p, q, ints), renyi_divergence(q, p, ints))
    pure = float(np.max(np.abs(np.log(np.array(p) / np.array(q)))))
    exact_curve = RdpCurve(np.append(ints, np.inf), np.append(exact, pure), bound="exact",
                           relation="substitute")
    via_profile = wbk_upper_bound(mech, 100, 3, orders).epsilons
    via_exact = wbk_upper_bound(exact_curve, 100, 3, orders).epsilons
    assert np.all(via_profile >= via_exact * (1 - 1e-12))
    np.testing.assert_allclose(via_profile, via_exact, rtol=1e-3)


# ---------------------------------------------------------------------------------------------
# the entry point, unsupported combinations, bad input
# ---------------------------------------------------------------------------------------------


def test_subsampled_rdp_dispatch():
    c = subsampled_rdp(G2, sampling="poisson", sampling_rate=0.1, orders=[2.0, 2.5])
    assert c.bound == "exact"
    c = subsampled_rdp(GaussianProfile(0.5), sampling="poisson", sampling_rate=0.1,
                       orders=[2.0])
    assert c.bound == "exact"
    assert subsampled_rdp(LAP, sampling="poisson", sampling_rate=0.1).bound == "exact"
    assert subsampled_rdp(ApproxDPMechanism(1.0, 0.0), sampling="poisson",
                          sampling_rate=0.1).label.startswith("Zhu")
    assert subsampled_rdp(LAPS, sampling="wor", n=10, m=2).label.startswith("WBK")
    low = subsampled_rdp(LAPS, sampling="wor", n=10, m=2, method="lower")
    assert low.bound == "lower" and low.orders[0] >= 2
    low = subsampled_rdp(LAP, sampling="poisson", sampling_rate=0.2, method="lower",
                         orders=[2.0, 3.5])
    assert low.relation.value == "add-remove"


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(base=G2, sampling="poisson", sampling_rate=0.1, method="wbk"),
     UnsupportedCombinationError, "not for Poisson sampling"),
    (dict(base=G2S, sampling="wor", n=10, m=2, method="zhu-wang"),
     UnsupportedCombinationError, "not for sampling without replacement"),
    (dict(base=G2S, sampling="wor", n=10, m=2, method="exact"),
     UnsupportedCombinationError, "no exact RDP is known"),
    (dict(base=ApproxDPMechanism(1.0, 0.0), sampling="poisson", sampling_rate=0.1,
          method="exact"),
     UnsupportedCombinationError, "randomized membership mechanisms only"),
    (dict(base=G2, sampling="poisson", sampling_rate=0.1, relation="substitute"),
     UnsupportedCombinationError, "Theorem 14"),
    (dict(base=G2, sampling="wor", n=10, m=2),
     UnsupportedCombinationError, "stated under 'add-remove'"),
    (dict(base=G2S, sampling="poisson", sampling_rate=0.1),
     UnsupportedCombinationError, "stated under 'substitute'"),
    (dict(base=G2, sampling="bernoulli", sampling_rate=0.1),
     InvalidParameterError, "sampling must be one of"),
    (dict(base=G2, sampling="poisson"), InvalidParameterError, "sampling_rate"),
    (dict(base=G2, sampling="poisson", sampling_rate=1.5), InvalidParameterError,
     r"sampling_rate must be a real number in \[0, 1\]; got 1.5"),
    (dict(base=G2, sampling="poisson", sampling_rate=float("nan")), InvalidParameterError,
     "NaN"),
    (dict(base=G2, sampling="poisson", sampling_rate=0.1, n=10), InvalidParameterError, "n"),
    (dict(base=G2S, sampling="wor", n=10), InvalidParameterError, "m must be"),
    (dict(base=G2S, sampling="wor", n=10, m=20), InvalidParameterError,
     r"m must be an integer in \[0, n\] = \[0, 10\]; got 20"),
    (dict(base=G2S, sampling="wor", n=0, m=0), InvalidParameterError, "n must be"),
    (dict(base=G2S, sampling="wor", n=10, m=2, sampling_rate=0.2), InvalidParameterError,
     "sampling_rate"),
    (dict(base=G2S, sampling="wor", n=10, m=2, method="best"), InvalidParameterError,
     "method must be one of"),
    (dict(base=G2S, sampling="wor", n=10, m=2, orders=[1.0, 2.0]), InvalidParameterError,
     r"orders must be real number\(s\) in \(1, inf\]"),
    (dict(base=G2S, sampling="wor", n=10, m=2, orders=[]), InvalidParameterError,
     "non-empty"),
    (dict(base=G2S, sampling="wor", n=10, m=2, orders=[2.0, float("nan")]),
     InvalidParameterError, "NaN"),
    (dict(base=G2S, sampling="wor", n=10, m=2, method="lower", orders=[1.5, 2.0]),
     InvalidParameterError, "orders >= 2"),
])
def test_unsupported_and_bad_input(kwargs, error, match):
    base = kwargs.pop("base")
    with pytest.raises(error, match=match):
        subsampled_rdp(base, **kwargs)


def test_lower_bound_needs_an_exact_base():
    upper_curve = RdpCurve([2.0, 3.0, np.inf], [0.1, 0.2, 1.0], relation="substitute")
    with pytest.raises(UnsupportedCombinationError, match="exact RDP curve"):
        subsampled_lower_bound(upper_curve, 0.1, [2.0, 3.0])
    lower_curve = RdpCurve([2.0, 3.0], [0.1, 0.2], bound="lower")
    with pytest.raises(UnsupportedCombinationError, match="lower-bound curve"):
        wbk_upper_bound(lower_curve, 10, 2, [2.0])
    exact_curve = RdpCurve([2.0, 3.0, np.inf], [0.1, 0.2, 1.0], bound="exact")
    assert subsampled_lower_bound(exact_curve, 0.1, [2.0, 3.0]).bound == "lower"


def test_underflow_never_reports_identical_distributions():
    """At absurdly small rates the true RDP (~1e-600) underflows; an RDP of 0 would mean
    "identical distributions" (ε = 0 at every δ), so positive values are floored at 1e-300,
    a valid bound. An exactly zero case (m = 0) stays 0."""
    assert np.all(poisson_gaussian_rdp(1.0, 5e-324, [1.5, 2.0]).epsilons >= 1e-300)
    assert np.all(zhu_wang_upper_bound(LAP, 1e-200, [2.0, 3.5]).epsilons >= 1e-300)
    assert np.all(wbk_upper_bound(LAPS, 10**9, 1, [2.0]).epsilons > 0)
    assert np.all(rdp_curve(LaplaceMechanism(1e200), [2.0]).epsilons >= 1e-300)
    assert np.all(wbk_upper_bound(LAPS, 10, 0, [2.0]).epsilons == 0.0)
    curve = poisson_gaussian_rdp(1.0, 5e-324, [2.0, 8.0]) * 10
    assert curve.epsilon(1e-5, warn=False) > 0
