"""Diffusion mechanisms (BBGG 2019, §5: Theorem 6, Examples 4–5, Corollary 7, eq. (4), Thm 8).

The samplers are checked by Monte Carlo (mean e^{−θt}f(D), covariance (ρ²/θ)(1 − e^{−2θt})I,
semigroup property); Corollary 7 against the Gaussian RDP with sensitivity e^{−θt}Δ and variance
ρ²(1 − e^{−2θt})/θ, against mpmath, against Λ(t) recomputed from the transition kernel
(Theorem 6's definition, numerically), and against the Rényi divergence of the transition
densities by quadrature; Theorem 8's inequalities on a parameter grid.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from privamp import GaussianMechanism, InvalidParameterError
from privamp.amplification.diffusion import (
    BrownianMotionMechanism,
    OrnsteinUhlenbeckMechanism,
    brownian_intrinsic_sensitivity,
    brownian_semigroup,
    equivalent_gaussian_sigma,
    intrinsic_sensitivity_numerical,
    ou_gaussian_mse,
    ou_intrinsic_sensitivity,
    ou_mse,
    ou_mse_ratio,
    ou_parameters,
    ou_semigroup,
    post_processed_gaussian_mse,
    theorem8_condition,
    theorem8_ratio_bound,
    transition_renyi_divergence,
)
from privamp.mechanisms import Mechanism

mpmath = pytest.importorskip("mpmath")
ORDERS = np.array([1.1, 2.0, 5.0, 50.0])


# ---------------------------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------------------------


def test_ou_monte_carlo_mean_and_covariance():
    """200 000 draws in R^3: mean e^{−θt} f(D) and covariance (ρ²/θ)(1 − e^{−2θt}) I within
    five standard errors."""
    theta, rho, t = 0.7, 1.3, 0.9
    m = OrnsteinUhlenbeckMechanism(theta, rho, t)
    f = np.array([2.0, -1.0, 0.5])
    rng = np.random.default_rng(2019)
    n = 200_000
    draws = np.array([m.release(f, rng) for _ in range(50)])  # the public API, vectors
    assert draws.shape == (50, 3)
    big = m.release(np.broadcast_to(f, (n, 3)), rng)  # n independent releases of f
    mean = math.exp(-theta * t) * f
    var = rho**2 / theta * -math.expm1(-2 * theta * t)
    se = math.sqrt(var / n)
    assert np.all(np.abs(big.mean(axis=0) - mean) < 5 * se)
    cov = np.cov(big.T)
    se_var = var * math.sqrt(2.0 / n)
    assert np.all(np.abs(np.diag(cov) - var) < 5 * se_var)
    off = cov[~np.eye(3, dtype=bool)]
    assert np.all(np.abs(off) < 5 * var / math.sqrt(n))
    assert m.noise_variance == pytest.approx(var) and m.mean_factor == pytest.approx(
        math.exp(-theta * t))


def test_brownian_monte_carlo_and_scalar_release():
    m = BrownianMotionMechanism(t=0.3)
    rng = np.random.default_rng(5)
    x = m.release(np.zeros(100_000), rng)
    assert abs(x.mean()) < 5 * math.sqrt(0.6 / 1e5)
    assert x.var() == pytest.approx(0.6, rel=5 * math.sqrt(2 / 1e5))
    assert isinstance(m.release(1.0, rng), float)


def test_randomness_only_through_rng():
    m = OrnsteinUhlenbeckMechanism(1.0, 1.0, 1.0)
    a = m.release([1.0, 2.0], rng=7)
    b = m.release([1.0, 2.0], rng=np.random.default_rng(7))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, m.release([1.0, 2.0], rng=8))


@pytest.mark.parametrize("mech", [OrnsteinUhlenbeckMechanism(0.8, 1.1, 0.4),
                                  BrownianMotionMechanism(0.4)])
def test_semigroup_property_post_processing(mech):
    """P_s ∘ M_t = M_{t+s}: evolving a release by s matches a release at t + s (MC)."""
    rng = np.random.default_rng(3)
    f = np.full(200_000, 1.5)
    evolved = mech.evolve(mech.release(f, rng), 0.7, rng)
    later = type(mech)(**{**mech.__dict__, "t": mech.t + 0.7}).release(f, rng)
    se = later.std() / math.sqrt(f.size)
    assert abs(evolved.mean() - later.mean()) < 6 * se
    assert evolved.var() == pytest.approx(later.var(), rel=6 * math.sqrt(2 / f.size))


def test_mechanisms_are_mechanisms():
    for m in (OrnsteinUhlenbeckMechanism(1.0, 1.0, 1.0), BrownianMotionMechanism(1.0)):
        assert isinstance(m, Mechanism)
        assert m.group_profile(2).delta(1.0) >= m.profile().delta(1.0)
        assert m.privacy_loss().theta == m.profile().theta


def test_mechanisms_are_registered():
    """Registered like the base mechanisms (so the registry property tests cover them); the
    RDP dispatch reaches the exact Gaussian curve through their profiles."""
    from privamp.mechanisms import REGISTRY
    from privamp.rdp import rdp_curve

    assert REGISTRY["brownian-motion"] is BrownianMotionMechanism
    assert REGISTRY["ornstein-uhlenbeck"] is OrnsteinUhlenbeckMechanism
    m = OrnsteinUhlenbeckMechanism(0.5, 1.0, 2.0)
    via_dispatch = rdp_curve(m, orders=ORDERS)
    assert via_dispatch.bound == "exact"
    np.testing.assert_allclose(via_dispatch.epsilons, m.rdp(ORDERS).epsilons, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Corollary 7 / Example 5: RDP and profiles
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta, rho, t, delta", list(itertools.product(
    (0.1, 1.0, 7.0), (0.3, 2.0), (1e-6, 0.05, 1.0, 4.0), (0.5, 2.0))))
def test_corollary7_equals_gaussian_rdp(theta, rho, t, delta):
    """θΔ²/(2ρ²(e^{2θt} − 1)) equals the Gaussian RDP with sensitivity e^{−θt}Δ and variance
    ρ²(1 − e^{−2θt})/θ, at every order, and is an upper bound (rounded up)."""
    m = OrnsteinUhlenbeckMechanism(theta, rho, t, delta)
    sens = math.exp(-theta * t) * delta
    var = rho**2 * -math.expm1(-2 * theta * t) / theta
    gaussian = ORDERS * sens**2 / (2 * var)
    got = m.rdp(ORDERS).epsilons
    np.testing.assert_allclose(got, gaussian, rtol=1e-12)
    mpmath.mp.dps = 50
    exact = float(mpmath.mpf(theta) * mpmath.mpf(delta) ** 2
                  / (2 * mpmath.mpf(rho) ** 2 * mpmath.expm1(2 * mpmath.mpf(theta) * t)))
    assert m.intrinsic_sensitivity >= exact
    assert m.intrinsic_sensitivity == pytest.approx(exact, rel=1e-12)


def test_corollary7_catalogue_vector_and_extremes():
    assert ou_intrinsic_sensitivity(1.0, 1.0, 1.0, 1.0) == pytest.approx(0.0782588214,
                                                                         abs=1e-10)
    # e^{-1000}/2 underflows; it stays positive (0 would claim identical output laws)
    far = OrnsteinUhlenbeckMechanism(1.0, 1.0, 500.0)
    assert 0 < far.intrinsic_sensitivity < 1e-300
    assert far.rdp().epsilon(0.0) == math.inf and far.rdp().epsilon(1e-10, warn=False) == 0.0
    assert ou_intrinsic_sensitivity(1.0, 1.0, math.inf, 1.0) == 0.0
    small = ou_intrinsic_sensitivity(1e-3, 1.0, 1e-9, 1.0)  # e^{2θt} − 1 by expm1
    assert small == pytest.approx(1.0 / (4e-9), rel=1e-6)
    np.testing.assert_allclose(ou_intrinsic_sensitivity(2.0, 1.0, [0.5, 1.0], 1.0),
                               [2.0 / (2 * math.expm1(2.0)), 2.0 / (2 * math.expm1(4.0))],
                               rtol=1e-13)


def test_effective_theta_keeps_its_precision_at_extremes():
    """θ_G comes from log Λ: it keeps its relative precision where Λ = θ_G²/2 is below the
    float range (e^{−θt}Δ tiny) or Δ² would overflow, and is never below the exact value."""
    mpmath.mp.dps = 50
    for theta, rho, t, delta in [(1.0, 1.0, 400.0, 1.0), (30.0, 0.5, 20.0, 2.0),
                                 (1e-300, 1.0, 1e-10, 1.0), (1.0, 1e-200, 1e-200, 1e-150)]:
        m = OrnsteinUhlenbeckMechanism(theta, rho, t, delta)
        th, r, tt, d = (mpmath.mpf(v) for v in (theta, rho, t, delta))
        exact = mpmath.sqrt(th * d**2 / (r**2 * mpmath.expm1(2 * th * tt)))
        assert m.gaussian_theta >= exact
        # margins: 32 ulp of |log θ_G| (≈ 345 here at most) and the log terms' own rounding
        assert m.gaussian_theta == pytest.approx(float(exact), rel=1e-11)
        assert 0 < m.noise_sigma < math.inf
    for t, delta in [(1e-300, 1e-170), (1e-10, 1e200), (1e300, 1e-10)]:
        m = BrownianMotionMechanism(t, delta)
        exact = mpmath.mpf(delta) / mpmath.sqrt(2 * mpmath.mpf(t))
        assert m.theta >= exact and m.theta == pytest.approx(float(exact), rel=1e-11)
        assert 0 < m.sigma < math.inf
    # a subnormal 2θt: the noise is still ρ sqrt(2t), not 0 (release stays private)
    tiny = OrnsteinUhlenbeckMechanism(5e-324, 1.0, 2.0)
    assert tiny.noise_sigma == pytest.approx(2.0, rel=1e-12)


def test_not_private_at_all_is_rejected():
    """Parameters whose effective Gaussian ratio overflows are rejected, as for the Gaussian
    mechanism (sensitivity / sigma must be finite)."""
    with pytest.raises(InvalidParameterError) as info:
        BrownianMotionMechanism(1e-300, 1e300)
    assert info.value.parameter == "t"
    with pytest.raises(InvalidParameterError) as info:
        OrnsteinUhlenbeckMechanism(1.0, 1e-100, 1e-200, 1e200)
    assert info.value.parameter == "t"
    with pytest.raises(InvalidParameterError) as info:  # ρ sqrt(2t) overflows
        OrnsteinUhlenbeckMechanism(1e-300, 1e300, 1e300)
    assert info.value.parameter == "rho"


def test_brownian_is_the_gaussian_mechanism():
    """Example 4/5: Λ(t) = Δ²/(4t) and the profile of N(0, 2t) with sensitivity Δ."""
    for t, delta in [(0.5, 1.0), (0.02, 3.0), (40.0, 0.1)]:
        m = BrownianMotionMechanism(t, delta)
        assert m.intrinsic_sensitivity == pytest.approx(delta**2 / (4 * t), rel=1e-14)
        np.testing.assert_allclose(m.rdp(ORDERS).epsilons, ORDERS * delta**2 / (4 * t),
                                   rtol=1e-13)
        g = GaussianMechanism(sigma=math.sqrt(2 * t), sensitivity=delta)
        eps = np.array([0.0, 0.5, 2.0, 8.0])
        np.testing.assert_allclose(m.profile().delta(eps), g.profile().delta(eps), rtol=1e-9)
        assert np.all(m.profile().delta(eps) >= g.profile().delta(eps) * (1 - 1e-15))


def test_ou_profile_is_the_effective_gaussian_profile():
    """OU is a Gaussian mechanism with sensitivity e^{−θt}Δ and noise sqrt(ρ²(1−e^{−2θt})/θ)."""
    m = OrnsteinUhlenbeckMechanism(0.6, 0.9, 1.7, 2.0)
    g = GaussianMechanism(sigma=m.noise_sigma, sensitivity=math.exp(-0.6 * 1.7) * 2.0)
    eps = np.array([0.0, 0.3, 1.0, 3.0, 10.0])
    np.testing.assert_allclose(m.profile().delta(eps), g.profile().delta(eps), rtol=1e-9)
    assert np.all(m.profile().delta(eps) >= g.profile().delta(eps) * (1 - 1e-15))
    # the exact profile inverts to a smaller ε than the RDP conversion (both valid)
    assert m.profile().epsilon(1e-5) <= m.rdp().epsilon(1e-5, warn=False)
    assert m.gaussian_theta == pytest.approx(math.sqrt(2 * m.intrinsic_sensitivity))


def test_equivalent_sigma():
    """σ̃² = ρ²(e^{2θt} − 1)/θ: the Gaussian mechanism N(f, σ̃²) has the OU's RDP."""
    theta, rho, t, delta = 0.4, 1.2, 2.0, 1.5
    s = equivalent_gaussian_sigma(theta, rho, t)
    assert s**2 == pytest.approx(rho**2 * math.expm1(2 * theta * t) / theta, rel=1e-14)
    assert delta**2 / (2 * s**2) == pytest.approx(
        ou_intrinsic_sensitivity(theta, rho, t, delta), rel=1e-13)


# ---------------------------------------------------------------------------------------------
# Theorem 6 numerically, from the transition kernels
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", [0.01, 0.3, 2.0])
def test_intrinsic_sensitivity_from_kernels(t):
    """Λ(t) = ∫_t^∞ sup_y Γ(∇ log p_s(x,y)/p_s(x',y)) ds computed numerically from the kernels
    matches Example 5 (Brownian) and Corollary 7 (OU), in one and two dimensions."""
    r = intrinsic_sensitivity_numerical(brownian_semigroup(), [0.0], [2.0], t)
    assert r.value == pytest.approx(brownian_intrinsic_sensitivity(t, 2.0), rel=1e-8)
    r = intrinsic_sensitivity_numerical(ou_semigroup(0.7, 1.3), [0.0, 0.0], [0.6, 0.8], t)
    assert r.value == pytest.approx(ou_intrinsic_sensitivity(0.7, 1.3, t, 1.0), rel=1e-8)
    r = intrinsic_sensitivity_numerical(ou_semigroup(3.0, 0.5), [1.0], [-0.5], t,
                                        y_points=[[-3.0], [0.0], [5.0]])
    assert r.value == pytest.approx(ou_intrinsic_sensitivity(3.0, 0.5, t, 1.5), rel=1e-8)


@pytest.mark.parametrize("order", [1.2, 2.0, 10.0])
@pytest.mark.parametrize("t", [0.05, 1.0, 3.0])
def test_theorem6_rdp_by_quadrature(order, t):
    """R_order(P_t(x) ‖ P_t(x')) from the transition densities by quadrature equals
    order·Λ(t) (Theorem 6 is tight for these Gaussian semigroups)."""
    r = transition_renyi_divergence(ou_semigroup(0.7, 1.3), 0.0, 1.0, t, order)
    assert r.value == pytest.approx(order * ou_intrinsic_sensitivity(0.7, 1.3, t, 1.0),
                                    rel=1e-9)
    r = transition_renyi_divergence(brownian_semigroup(), 0.5, -0.5, t, order)
    assert r.value == pytest.approx(order * brownian_intrinsic_sensitivity(t, 1.0), rel=1e-9)


def test_numerical_checks_validate_inputs():
    with pytest.raises(InvalidParameterError, match="x_prime"):
        intrinsic_sensitivity_numerical(brownian_semigroup(), [0.0], [1.0, 2.0], 1.0)
    with pytest.raises(InvalidParameterError, match="t"):
        intrinsic_sensitivity_numerical(brownian_semigroup(), [0.0], [1.0], 0.0)
    with pytest.raises(InvalidParameterError, match="order"):
        transition_renyi_divergence(brownian_semigroup(), 0.0, 1.0, 1.0, 1.0)


# ---------------------------------------------------------------------------------------------
# eq. (4), the Gaussian comparisons and Theorem 8
# ---------------------------------------------------------------------------------------------


def test_mse_eq4_against_monte_carlo():
    theta, rho, t, d = 0.5, 0.8, 1.3, 4
    f = np.array([1.0, -2.0, 0.5, 0.0])
    m = OrnsteinUhlenbeckMechanism(theta, rho, t)
    rng = np.random.default_rng(1)
    out = m.release(np.broadcast_to(f, (100_000, d)), rng)
    err = np.sum((out - f) ** 2, axis=1)
    expected = ou_mse(theta, rho, t, d, float(np.linalg.norm(f)))
    assert err.mean() == pytest.approx(expected, rel=5 * err.std() / err.mean() / math.sqrt(1e5))
    assert m.mse(float(np.linalg.norm(f)), d) == expected
    assert ou_mse(theta, rho, 0.0, d, 3.0) == 0.0


def test_post_processed_gaussian_monte_carlo():
    """β = R²/(R² + dσ²) attains dσ²/(1 + dσ²/R²) at ‖f‖ = R."""
    sigma, d, r = 1.3, 3, 2.0
    beta = r**2 / (r**2 + d * sigma**2)
    f = np.array([r, 0.0, 0.0])
    rng = np.random.default_rng(4)
    out = beta * (f + sigma * rng.standard_normal((200_000, d)))
    err = np.sum((out - f) ** 2, axis=1)
    bound = post_processed_gaussian_mse(sigma, d, r)
    assert bound == pytest.approx(d * sigma**2 / (1 + d * sigma**2 / r**2), rel=1e-14)
    assert err.mean() == pytest.approx(bound, rel=5 * err.std() / err.mean() / math.sqrt(2e5))


def test_theorem8_catalogue_vector():
    """d = Δ = R = ϵ = 1: θ = log 1.5, ρ² = 0.1621860432, Λ(1) = 1, E_GM = 0.5, E_OU = 1/3."""
    p = ou_parameters(1.0, 1.0, 1.0, 1)
    assert p.theta == pytest.approx(0.4054651081, abs=1e-10)
    assert p.rho**2 == pytest.approx(0.1621860432, abs=1e-10)
    m = p.mechanism()
    assert m.intrinsic_sensitivity <= 1.0
    assert m.intrinsic_sensitivity == pytest.approx(1.0, rel=1e-13)
    assert ou_gaussian_mse(p.theta, p.rho, 1.0, 1) == pytest.approx(0.5, rel=1e-12)
    assert ou_mse(p.theta, p.rho, 1.0, 1, 1.0) == pytest.approx(1 / 3, rel=1e-12)
    assert p.ratio_bound == pytest.approx(2 / 3) and p.satisfies_condition()


GRID = list(itertools.product((0.05, 0.5, 2.0, 20.0), (0.1, 1.0, 5.0), (0.3, 1.0, 4.0),
                              (1, 10, 1000)))


@pytest.mark.parametrize("eps, delta, radius, dim", GRID)
def test_theorem8_parameter_choice_on_grid(eps, delta, radius, dim):
    """Λ(1) ≤ ϵ (never above), E_GM(θ, ρ, 1) = dΔ²/(2ϵ), and at t = 1 the ratio is at most
    (1 + dΔ²/(2ϵR²))^{-1} for every ‖f(D)‖ ≤ R, with equality at ‖f(D)‖ = R."""
    p = ou_parameters(eps, delta, radius, dim)
    lam = p.mechanism().intrinsic_sensitivity
    assert lam <= eps and lam == pytest.approx(eps, rel=1e-12)
    assert ou_gaussian_mse(p.theta, p.rho, 1.0, dim) == pytest.approx(dim * delta**2 / (2 * eps),
                                                                       rel=1e-12)
    bound = p.ratio_bound
    for norm in (0.0, 0.3 * radius, radius):
        assert ou_mse_ratio(p.theta, p.rho, 1.0, dim, norm) <= bound * (1 + 1e-12)
    assert ou_mse_ratio(p.theta, p.rho, 1.0, dim, radius) == pytest.approx(bound, rel=1e-10)
    ou_err = ou_mse(p.theta, p.rho, 1.0, dim, radius)
    assert ou_err <= dim * delta**2 * radius**2 / (2 * eps * radius**2 + dim * delta**2) \
        * (1 + 1e-12)
    # the condition θR² ≤ 4dρ² holds for this choice iff dΔ²/(2ϵR²) ≤ 2
    a = dim * delta**2 / (2 * eps * radius**2)
    if abs(a - 2.0) > 1e-9:
        assert p.satisfies_condition() == (a < 2.0)


@pytest.mark.parametrize("theta, rho, radius, dim", [
    (1.0, 1.0, 2.0, 1), (0.3, 0.5, 1.0, 3), (5.0, 2.0, 1.5, 2), (2.0, 0.3, 0.1, 1)])
def test_theorem8_first_claim_on_a_time_grid(theta, rho, radius, dim):
    """If θR² ≤ 4dρ², E_OU ≤ E_GM at every t > 0 and every ‖f(D)‖ ≤ R, and the ratio → 0."""
    assert theorem8_condition(theta, rho, radius, dim)
    t = np.geomspace(1e-6, 50.0, 400)
    for norm in (0.0, radius / 2, radius):
        r = ou_mse_ratio(theta, rho, t, dim, norm)
        assert np.all(r <= 1.0 + 1e-12)
    assert ou_mse_ratio(theta, rho, 30.0 / theta, dim, radius) < 1e-20


def test_theorem8_condition_boundary_and_what_fails_beyond_it():
    """θR² = 4dρ² is admitted, slightly above is not; beyond the condition the ratio can exceed
    1 at small t (the first claim really needs the hypothesis — and Theorem 8's own parameter
    choice violates it when dΔ²/(2ϵR²) > 2)."""
    assert theorem8_condition(1.0, 1.0, 2.0, 1)
    assert not theorem8_condition(1.0, 1.0, math.nextafter(2.0, 3.0), 1)
    p = ou_parameters(0.1, 1.0, 1.0, 1)  # a = 5 > 2
    assert not p.satisfies_condition()
    t = np.geomspace(1e-4, 1.0, 200)
    assert np.max(ou_mse_ratio(p.theta, p.rho, t, 1, 1.0)) > 1.0
    assert ou_mse_ratio(p.theta, p.rho, 1.0, 1, 1.0) <= p.ratio_bound * (1 + 1e-12)


def test_theorem8_ratio_bound_formula():
    assert theorem8_ratio_bound(1.0, 1.0, 1.0, 1) == pytest.approx(2 / 3)
    assert theorem8_ratio_bound(2.0, 3.0, 0.5, 4) == pytest.approx(1 / (1 + 4 * 9 / (4 * 0.25)))


def test_ratio_is_undefined_at_t_zero():
    with pytest.raises(InvalidParameterError, match="t"):
        ou_mse_ratio(1.0, 1.0, 0.0, 1, 1.0)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, name", [
    ({"theta": 0.0}, "theta"), ({"theta": -1.0}, "theta"), ({"theta": math.nan}, "theta"),
    ({"rho": 0.0}, "rho"), ({"rho": math.inf}, "rho"),
    ({"t": -1.0}, "t"), ({"t": 0.0}, "t"), ({"t": math.nan}, "t"),
    ({"sensitivity": -0.5}, "sensitivity"),
])
def test_ou_bad_parameters(kwargs, name):
    params = {"theta": 1.0, "rho": 1.0, "t": 1.0, "sensitivity": 1.0}
    params.update(kwargs)
    with pytest.raises(InvalidParameterError) as info:
        OrnsteinUhlenbeckMechanism(**params)
    assert info.value.parameter == name


@pytest.mark.parametrize("call, name", [
    (lambda: BrownianMotionMechanism(-1.0), "t"),
    (lambda: ou_intrinsic_sensitivity(0.0, 1.0, 1.0), "theta"),
    (lambda: ou_intrinsic_sensitivity(1.0, 1.0, -1.0), "t"),
    (lambda: ou_mse(1.0, 1.0, -0.1, 1, 1.0), "t"),
    (lambda: ou_mse(1.0, 1.0, 1.0, 0, 1.0), "dimension"),
    (lambda: ou_mse(-1.0, 1.0, 1.0, 1, 1.0), "theta"),
    (lambda: ou_parameters(0.0, 1.0, 1.0, 1), "epsilon"),
    (lambda: ou_parameters(1.0, 1.0, -1.0, 1), "radius"),
    (lambda: equivalent_gaussian_sigma(1.0, 1.0, -2.0), "t"),
    (lambda: OrnsteinUhlenbeckMechanism(1.0, 1.0, 1.0).release([1.0, math.nan]), "value"),
    (lambda: OrnsteinUhlenbeckMechanism(1.0, 1.0, 1.0).evolve([1.0], -1.0), "s"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert info.value.parameter == name
