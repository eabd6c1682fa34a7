"""Coupling and iteration bounds (BBGG 2019, §4: Theorem 2, Examples 1–3, Lemma 3, Theorems 4–5).

Closed forms are checked against mpmath and quadrature; Theorem 2's translation bound against
the exact Rényi divergence of the post-processed mechanism; Theorem 4 with L = 1 against the
O(1/r) rate; Theorem 5 on a grid of (n, i, η, β, ρ) against an independent mpmath evaluation and
against the exact Rényi divergence of a linear (Gaussian) instance of noisy SGD.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate

from privamp import InvalidParameterError
from privamp.amplification.iteration import (
    ITERATION_ORDERS,
    NoisySgdPrivacy,
    gaussian_location_renyi,
    gaussian_split_bound,
    iterated_gaussian_rdp,
    iterated_laplace_log_density,
    iterated_laplace_privacy_loss,
    iterated_laplace_pure_epsilon,
    iterated_laplace_rdp,
    laplace_location_renyi,
    laplace_log_g,
    lipschitz_gaussian_kernel_rdp,
    noisy_iteration_rdp,
    noisy_iteration_rdp_path,
    noisy_sgd_rdp,
    optimal_path_distances,
    translation_kernel_rdp,
)
from privamp.rdp import RdpCurve

mpmath = pytest.importorskip("mpmath")
ORDERS = np.array([1.01, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0])


# ---------------------------------------------------------------------------------------------
# Example 1 (iterated Gaussian) and Example 3 (Lipschitz kernel)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("s1, s2, delta", [(1.0, 1.0, 1.0), (0.3, 2.0, 0.7), (5.0, 0.1, 3.0)])
def test_example1_reproduces_exact_gaussian_rdp(s1, s2, delta):
    """α Δ²/(2(σ₁² + σ₂²)), from the closed form, from Theorem 2 at θ*, and from the numerical
    minimisation over the split."""
    exact = ORDERS * delta**2 / (2 * (s1**2 + s2**2))
    curve = iterated_gaussian_rdp(s1, s2, delta, ORDERS)
    np.testing.assert_allclose(curve.epsilons, exact, rtol=1e-13)
    assert np.all(curve.epsilons >= exact)
    theta_star = 1.0 / (1.0 + s2**2 / s1**2)
    np.testing.assert_allclose(gaussian_split_bound(s1, s2, delta, ORDERS, theta_star), exact,
                               rtol=1e-12)
    for theta in (0.0, theta_star / 2, (1 + theta_star) / 2, 1.0):  # any other split is worse
        assert np.all(gaussian_split_bound(s1, s2, delta, ORDERS, theta) >= exact * (1 - 1e-12))
    b = translation_kernel_rdp(lambda d, o: gaussian_location_renyi(d, o, s1),
                               lambda d, o: gaussian_location_renyi(d, o, s2), delta, ORDERS)
    np.testing.assert_allclose(b.curve.epsilons, exact, rtol=1e-9)
    np.testing.assert_allclose(b.split, theta_star * delta, rtol=1e-5, atol=1e-9)


def test_example1_equals_gaussian_mechanism_rdp_by_quadrature():
    """K∘M is N(f(D), σ₁² + σ₂²): its Rényi divergence by quadrature equals the curve."""
    s1, s2, delta, order = 0.8, 0.6, 1.3, 3.0
    s = math.hypot(s1, s2)

    def integrand(y):
        lp = -((y - delta) ** 2) / (2 * s * s)
        lq = -(y**2) / (2 * s * s)
        return math.exp(order * lp + (1 - order) * lq) / math.sqrt(2 * math.pi * s * s)

    val, _ = integrate.quad(integrand, -40, 40, points=[0.0, delta], epsabs=0, epsrel=1e-13)
    exact = math.log(val) / (order - 1)
    got = iterated_gaussian_rdp(s1, s2, delta, [order]).epsilons[0]
    assert got == pytest.approx(exact, rel=1e-10)


def test_example3_lipschitz_kernel():
    """σ*² = σ₁² + σ₂²/L²; L = 1 is Example 1; L = 0 gives 0; amplification decreases in L."""
    s1, s2, delta = 1.0, 1.5, 2.0
    for lip in (0.2, 0.5, 1.0, 3.0):
        sstar2 = s1**2 + s2**2 / lip**2
        np.testing.assert_allclose(
            lipschitz_gaussian_kernel_rdp(s1, s2, lip, delta, ORDERS).epsilons,
            ORDERS * delta**2 / (2 * sstar2), rtol=1e-13)
        theta = 1.0 / (1.0 + s2**2 / (lip**2 * s1**2))
        np.testing.assert_allclose(gaussian_split_bound(s1, s2, delta, ORDERS, theta, lip),
                                   ORDERS * delta**2 / (2 * sstar2), rtol=1e-12)
    np.testing.assert_allclose(lipschitz_gaussian_kernel_rdp(s1, s2, 1.0, delta, ORDERS).epsilons,
                               iterated_gaussian_rdp(s1, s2, delta, ORDERS).epsilons, rtol=1e-14)
    assert np.all(lipschitz_gaussian_kernel_rdp(s1, s2, 0.0, delta, ORDERS).epsilons == 0)
    values = [lipschitz_gaussian_kernel_rdp(s1, s2, lip, delta, [2.0]).epsilons[0]
              for lip in (0.1, 0.5, 1.0, 2.0, 10.0)]
    assert values == sorted(values)
    base = 2.0 * delta**2 / (2 * s1**2)  # the Gaussian mechanism alone
    assert values[-1] < base  # amplification for any finite L


@pytest.mark.parametrize("func", [
    lambda lip: lipschitz_gaussian_kernel_rdp(1.0, 1.0, lip),
    lambda lip: noisy_iteration_rdp(1.0, lip, 1.0, 5, form="tight"),
    lambda lip: noisy_iteration_rdp_path([0.5, 0.5], lip, 1.0),
])
def test_negative_lipschitz_rejected(func):
    for bad in (-1.0, -1e-300, math.nan, math.inf):
        with pytest.raises(InvalidParameterError, match="lipschitz") as info:
            func(bad)
        assert info.value.parameter == "lipschitz"


# ---------------------------------------------------------------------------------------------
# Example 2 and Lemma 3 (iterated Laplace)
# ---------------------------------------------------------------------------------------------


def test_laplace_g_catalogue_vectors():
    assert laplace_log_g(2.0, 1.0) == pytest.approx(0.6191236300, abs=1e-10)
    b = iterated_laplace_rdp(1.0, 1.0, 1.0, [2.0])
    assert b.curve.epsilons[0] == pytest.approx(0.4006077923, abs=1e-9)
    assert b.split[0] == pytest.approx(0.5, abs=1e-6)  # the midpoint for λ₁ = λ₂
    assert 2 * laplace_log_g(2.0, 0.5) == pytest.approx(0.4006077923, abs=1e-10)


@pytest.mark.parametrize("order", [1.001, 1.5, 2.0, 7.0, 100.0, 1e4])
@pytest.mark.parametrize("z", [1e-6, 0.3, 1.0, 5.0, 40.0])
def test_laplace_renyi_against_mpmath(order, z):
    """Mironov's formula at 50 digits; privamp's value is an upper bound within 1e-10."""
    mpmath.mp.dps = 50
    a, x = mpmath.mpf(order), mpmath.mpf(z)
    g = a / (2 * a - 1) * mpmath.exp(x * (a - 1)) + (a - 1) / (2 * a - 1) * mpmath.exp(-x * a)
    exact = float(mpmath.log(g) / (a - 1))
    got = laplace_location_renyi(z, order, 1.0)
    assert got >= exact * (1 - 1e-15)
    assert got == pytest.approx(exact, rel=1e-10, abs=1e-14)
    assert laplace_location_renyi(z, 1.0, 1.0) == pytest.approx(z + math.expm1(-z), rel=1e-12)
    assert laplace_location_renyi(z, math.inf, 1.0) >= z


def exact_iterated_laplace_renyi(l1, l2, delta, order):
    """R_order(p_Δ ‖ p_0) of the sum of two Laplace noises, by quadrature."""

    def log_ratio_integrand(y):
        lp = iterated_laplace_log_density(y, delta, l1, l2)
        lq = iterated_laplace_log_density(y, 0.0, l1, l2)
        return math.exp(order * lp + (1 - order) * lq)

    val, _ = integrate.quad(log_ratio_integrand, -np.inf, np.inf, epsabs=0, epsrel=1e-12,
                            limit=400, points=None)
    return math.log(val) / (order - 1)


@pytest.mark.parametrize("l1, l2", [(1.0, 1.0), (1.0, 2.5), (3.0, 0.7)])
def test_iterated_laplace_bound_is_valid(l1, l2):
    """The Theorem 2 bound is never below the exact divergence of K∘M (computed by
    quadrature of the convolution density), and never above the base mechanism's or the
    kernel's own RDP (post-processing)."""
    delta = 1.0
    orders = [1.5, 2.0, 4.0, 10.0]
    b = iterated_laplace_rdp(l1, l2, delta, orders)
    for order, bound in zip(orders, b.curve.epsilons, strict=True):
        exact = exact_iterated_laplace_renyi(l1, l2, delta, order)
        assert exact <= bound * (1 + 1e-9)
        assert bound <= laplace_location_renyi(delta, order, l1) * (1 + 1e-12)
        assert bound <= laplace_location_renyi(delta, order, l2) * (1 + 1e-12)
    if l1 == l2:  # strict amplification with equal scales (log-convexity of g_α)
        assert np.all(b.curve.epsilons < laplace_location_renyi(delta, np.array(orders), l1))


def test_iterated_laplace_density_normalised_and_continuous():
    for l1, l2 in [(1.0, 1.0), (1.0, 1.0 + 1e-9), (2.0, 0.5)]:
        val, _ = integrate.quad(lambda y, a=l1, b=l2: math.exp(
            iterated_laplace_log_density(y, 0.3, a, b)), -np.inf, np.inf, epsrel=1e-12)
        assert val == pytest.approx(1.0, rel=1e-9)
    # (λ₁e^{−z/λ₁} − λ₂e^{−z/λ₂}) / (2(λ₁² − λ₂²)) where it is well conditioned
    z, l1, l2 = 1.7, 2.0, 0.5
    direct = (l1 * math.exp(-z / l1) - l2 * math.exp(-z / l2)) / (2 * (l1**2 - l2**2))
    assert math.exp(iterated_laplace_log_density(z, 0.0, l1, l2)) == pytest.approx(direct,
                                                                                    rel=1e-13)
    assert iterated_laplace_log_density(0.5, 0.0, 1.0, 1.0 + 1e-12) == pytest.approx(
        iterated_laplace_log_density(0.5, 0.0, 1.0, 1.0), rel=1e-11)


@pytest.mark.parametrize("l1, l2, delta", [(1.0, 1.0, 1.0), (1.0, 2.0, 1.0), (0.5, 3.0, 2.0)])
def test_lemma3_no_pure_dp_amplification(l1, l2, delta):
    """The privacy loss is increasing, tends to Δ/max(λ₁, λ₂), never exceeds it: K∘M is not
    (ε, 0)-DP for ε < Δ/max(λ₁, λ₂), and is for ε = that (post-processing)."""
    bound = iterated_laplace_pure_epsilon(l1, l2, delta)
    assert bound == pytest.approx(delta / max(l1, l2), rel=1e-15) and bound >= delta / max(l1,
                                                                                         l2)
    x = np.linspace(-50, 300, 3001)
    loss = iterated_laplace_privacy_loss(x, l1, l2, delta)
    assert np.all(np.diff(loss) >= -1e-12)
    assert np.max(np.abs(loss)) <= bound * (1 + 1e-12)
    far = iterated_laplace_privacy_loss(np.geomspace(301, 1e8, 200), l1, l2, delta)
    assert np.all(far <= bound + 1e-7)  # log-densities of size 1e8 cancel to ~1e-8
    assert far[-1] == pytest.approx(bound, rel=1e-6)
    # Theorem 2's best bound at order ∞ matches Lemma 3 (the improvement vanishes)
    at_inf = iterated_laplace_rdp(l1, l2, delta, [math.inf]).curve.epsilons[0]
    assert at_inf == pytest.approx(bound, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# Theorem 2 in general
# ---------------------------------------------------------------------------------------------


def test_translation_bound_any_split_is_valid_and_search_finds_minimum():
    """The reported value is the bound at the reported split, and no grid split is better."""
    def base(d, o):
        return laplace_location_renyi(d, o, 1.3)

    def kern(d, o):
        return gaussian_location_renyi(d, o, 0.8)

    delta = 2.0
    b = translation_kernel_rdp(base, kern, delta, [2.0, 5.0])
    for j, order in enumerate([2.0, 5.0]):
        a = b.split[j]
        at_split = base(a, order) + kern(delta - a, order)
        assert b.curve.epsilons[j] == pytest.approx(at_split, rel=1e-12)
        grid = np.linspace(0, delta, 20001)
        assert b.curve.epsilons[j] <= np.min(base(grid, order) + kern(delta - grid, order)) \
            * (1 + 1e-9)


def test_translation_bound_validation():
    def zero(d, o):
        return np.zeros_like(np.asarray(d, dtype=float))

    with pytest.raises(InvalidParameterError, match="sensitivity"):
        translation_kernel_rdp(zero, zero, -1.0)
    with pytest.raises(InvalidParameterError, match="orders"):
        translation_kernel_rdp(zero, zero, 1.0, [0.5])
    curve = translation_kernel_rdp(zero, zero, 0.0, [2.0]).curve
    assert isinstance(curve, RdpCurve) and curve.epsilons[0] == 0.0


# ---------------------------------------------------------------------------------------------
# Theorem 4
# ---------------------------------------------------------------------------------------------


def test_theorem4_catalogue_vectors():
    """α = 2, Δ = 1, L = 0.9, σ = 1, r = 10: eq. (3) 0.0313810596, path optimum 0.0262966194."""
    paper = noisy_iteration_rdp(1.0, 0.9, 1.0, 10, [2.0]).epsilons[0]
    tight = noisy_iteration_rdp(1.0, 0.9, 1.0, 10, [2.0], form="tight").epsilons[0]
    assert paper == pytest.approx(0.0313810596, abs=1e-10)
    assert tight == pytest.approx(0.0262966194, abs=1e-10)


def test_theorem4_with_L_equal_1_is_order_one_over_r():
    """L = 1: α Δ²/(2rσ²) for both forms; r × bound is constant (the O(1/r) rate of
    Feldman et al. 2018, Theorem 1)."""
    delta, sigma = 1.7, 0.9
    rs = np.array([1, 2, 5, 10, 100, 1000, 10**6])
    for form in ("paper", "tight"):
        vals = np.array([noisy_iteration_rdp(delta, 1.0, sigma, int(r), [2.0], form=form)
                         .epsilons[0] for r in rs])
        np.testing.assert_allclose(vals * rs, 2.0 * delta**2 / (2 * sigma**2), rtol=1e-12)


@given(st.floats(0.01, 1.0), st.integers(1, 60), st.floats(0.1, 5.0), st.floats(0.1, 5.0))
def test_theorem4_tight_never_above_paper_and_equals_path_optimum(lip, r, delta, sigma):
    paper = noisy_iteration_rdp(delta, lip, sigma, r, [2.0]).epsilons[0]
    tight = noisy_iteration_rdp(delta, lip, sigma, r, [2.0], form="tight").epsilons[0]
    assert tight <= paper * (1 + 1e-12)
    path = optimal_path_distances(delta, lip, r)
    assert path.sum() == pytest.approx(delta, rel=1e-12)
    via_path = noisy_iteration_rdp_path(path, lip, sigma, [2.0]).epsilons[0]
    assert via_path == pytest.approx(tight, rel=1e-9, abs=1e-300)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12), st.floats(0.05, 2.0))
def test_theorem4_any_path_is_no_better_than_the_optimum(weights, lip):
    """eq. (2) at any path with Σ w_i = Δ is at least the tight value."""
    w = np.asarray(weights)
    if w.sum() == 0:
        w[0] = 1.0
    w = w / w.sum() * 1.5
    r = w.size
    eq2 = noisy_iteration_rdp_path(w, lip, 1.0, [3.0]).epsilons[0]
    tight = noisy_iteration_rdp(1.5, lip, 1.0, r, [3.0], form="tight").epsilons[0]
    assert eq2 >= tight * (1 - 1e-9)


def test_theorem4_eq2_against_mpmath():
    mpmath.mp.dps = 40
    w, lip, sigma, order = [0.3, 0.0, 1.2, 0.5], 0.7, 1.3, 2.5
    r = len(w)
    exact = mpmath.mpf(order) * lip**2 / (2 * sigma**2) * mpmath.fsum(
        mpmath.mpf(lip) ** (2 * (r - i)) * mpmath.mpf(wi) ** 2 for i, wi in enumerate(w, 1))
    got = noisy_iteration_rdp_path(w, lip, sigma, [order]).epsilons[0]
    assert got >= float(exact) and got == pytest.approx(float(exact), rel=1e-13)


def test_theorem4_edges_and_errors():
    assert noisy_iteration_rdp(1.0, 0.0, 1.0, 3, [2.0]).epsilons[0] == 0.0
    assert noisy_iteration_rdp(1.0, 0.0, 1.0, 3, [2.0], form="tight").epsilons[0] == 0.0
    big = noisy_iteration_rdp(1.0, 1.5, 1.0, 4, [2.0], form="tight").epsilons[0]
    assert big > 2.0 / (2 * 4)  # L > 1: worse than the L = 1 rate, but finite
    with pytest.raises(InvalidParameterError, match=r"lipschitz must be in \[0, 1\]"):
        noisy_iteration_rdp(1.0, 1.0 + 1e-12, 1.0, 4)
    noisy_iteration_rdp(1.0, 1.0, 1.0, 4)  # the boundary itself is fine
    with pytest.raises(InvalidParameterError, match="steps"):
        noisy_iteration_rdp(1.0, 0.5, 1.0, 0)
    with pytest.raises(InvalidParameterError, match="sigma"):
        noisy_iteration_rdp(1.0, 0.5, 0.0, 3)
    with pytest.raises(InvalidParameterError, match="form"):
        noisy_iteration_rdp(1.0, 0.5, 1.0, 3, form="loose")
    with pytest.raises(InvalidParameterError, match="path_distances"):
        noisy_iteration_rdp_path([0.5, -0.1], 0.5, 1.0)
    # huge r and tiny L: log space, no underflow to a wrong non-zero or NaN
    tiny = noisy_iteration_rdp(1.0, 0.5, 1.0, 100_000, [2.0], form="tight")
    assert 0.0 < tiny.epsilons[0] < 1e-300  # underflow keeps it positive: not "identical"
    assert tiny.epsilon(0.0) == math.inf


# ---------------------------------------------------------------------------------------------
# Theorem 5
# ---------------------------------------------------------------------------------------------


def test_theorem5_catalogue_vectors():
    p = NoisySgdPrivacy(10, 1.0, 1.0, 1.0, 0.5, 1.0)
    got = p.rdp_slope([1, 5, 9, 10])
    np.testing.assert_allclose(got, [0.0009144947, 0.0148148148, 0.6666666667, 2.0], atol=1e-10)
    assert p.contraction_squared == pytest.approx(1 / 3)


def theorem5_mpmath(n, i, eta, c, beta, rho, sigma):
    mpmath.mp.dps = 40
    c, sigma, eta, beta, rho = (mpmath.mpf(v) for v in (c, sigma, eta, beta, rho))
    if i == n:
        return 2 * c**2 / sigma**2
    factor = 1 - 2 * eta * beta * rho / (beta + rho)
    return 2 * c**2 / ((n - i) * sigma**2) * factor ** (mpmath.mpf(n - i + 1) / 2)


def test_theorem5_grid_against_mpmath():
    """Tabulated ϵ_i for a grid of (n, i, η, β, ρ) against an independent 40-digit evaluation;
    upper bounds, within 1e-12 relative."""
    rows = []
    for n, beta, rho in itertools.product((1, 2, 10, 1000), (0.5, 1.0, 4.0), (0.0, 0.1, 0.5)):
        if rho > beta:
            continue
        for eta_frac in (0.1, 0.5, 1.0 - 1e-12):
            eta = eta_frac * 2.0 / (beta + rho)
            p = NoisySgdPrivacy(n, eta, 1.3, beta, rho, 0.7)
            for i in sorted({1, max(1, n // 2), max(1, n - 1), n}):
                exact = float(theorem5_mpmath(n, i, eta, 1.3, beta, rho, 0.7))
                got = p.rdp_slope(i)
                rows.append((n, i, eta, beta, rho, got))
                assert got >= exact * (1 - 1e-15)
                # the margin is 32 ulp of |log ϵ_i| (up to ~140 here): 1e-11 relative
                assert got == pytest.approx(exact, rel=1e-11, abs=1e-300)
    assert len(rows) > 150


def test_theorem5_is_theorem4_with_sgd_constants():
    """Step sensitivity 2ηC, noise ησ, contraction sqrt(1 − 2ηβρ/(β + ρ)), r = n − i steps."""
    n, eta, c, beta, rho, sigma = 50, 0.3, 2.0, 2.0, 0.5, 1.5
    for form in ("paper", "tight"):
        p = NoisySgdPrivacy(n, eta, c, beta, rho, sigma, form)
        lip = math.sqrt(1 - 2 * eta * beta * rho / (beta + rho))
        for i in (1, 10, 49):
            via4 = noisy_iteration_rdp(2 * eta * c, lip, eta * sigma, n - i, [1.5], form=form)
            assert p.rdp(i, [1.5]).epsilons[0] == pytest.approx(via4.epsilons[0], rel=1e-10)


def test_theorem5_convex_case_and_monotonicity():
    """ρ = 0 gives 2C²/((n − i)σ²); earlier records are better protected; tight ≤ paper."""
    p = NoisySgdPrivacy(100, 0.5, 1.0, 1.0, 0.0, 2.0)
    i = np.arange(1, 100)
    np.testing.assert_allclose(p.rdp_slope(i), 2.0 / ((100 - i) * 4.0), rtol=1e-13)
    q = NoisySgdPrivacy(100, 0.5, 1.0, 1.0, 0.3, 2.0)
    s = q.rdp_slope(np.arange(1, 101))
    assert np.all(np.diff(s) > 0)
    t = NoisySgdPrivacy(100, 0.5, 1.0, 1.0, 0.3, 2.0, "tight").rdp_slope(np.arange(1, 101))
    assert np.all(t <= s * (1 + 1e-12))
    eps = [q.epsilon(int(k), 1e-5) for k in (1, 50, 99, 100)]
    assert eps == sorted(eps)


def test_theorem5_valid_on_a_linear_instance():
    """ℓ(x, z) = (ρ/2)x² − zx on R (β = ρ, gradient difference |z − z'| = 2C): the final
    iterate is Gaussian, so its exact RDP at index i is known in closed form and must not
    exceed Theorem 5 (both forms)."""
    n, rho, eta, sigma, c = 40, 0.5, 0.8, 1.2, 1.0
    a = 1.0 - eta * rho  # the exact contraction (≤ sqrt(1 − ηρ) of Theorem 5)
    var = (eta * sigma) ** 2 * sum(a ** (2 * k) for k in range(n))
    for form in ("paper", "tight"):
        p = NoisySgdPrivacy(n, eta, c, rho, rho, sigma, form)
        for i in range(1, n + 1):
            shift = eta * 2 * c * abs(a) ** (n - i)
            exact = shift**2 / (2 * var)  # RDP slope of N(m, var) vs N(m + shift, var)
            assert exact <= p.rdp_slope(i) * (1 + 1e-12)


def test_theorem5_conversion_is_rdp_curve_epsilon():
    p = NoisySgdPrivacy(20, 0.5, 1.0, 1.0, 0.2, 1.0)
    for i in (1, 10, 20):
        curve = p.rdp(i)
        assert np.array_equal(curve.orders, ITERATION_ORDERS)
        assert p.epsilon(i, 1e-6) == curve.epsilon(1e-6, warn=False)
    np.testing.assert_allclose(
        noisy_sgd_rdp(20, 10, step_size=0.5, lipschitz=1.0, smoothness=1.0,
                      strong_convexity=0.2, sigma=1.0, orders=[2.0]).epsilons,
        [2 * p.rdp_slope(10)], rtol=1e-12)


def test_theorem5_step_size_condition_both_sides():
    """η ≤ 2/(β + ρ) exactly (checked in rational arithmetic)."""
    NoisySgdPrivacy(10, 1.0, 1.0, 1.0, 1.0, 1.0)  # η = 2/(1 + 1) exactly
    with pytest.raises(InvalidParameterError, match="step_size") as info:
        NoisySgdPrivacy(10, math.nextafter(1.0, 2.0), 1.0, 1.0, 1.0, 1.0)
    assert "2/(smoothness + strong_convexity)" in str(info.value)
    assert "largest admissible float is 1.0" in str(info.value)
    with pytest.raises(InvalidParameterError, match="step_size"):
        NoisySgdPrivacy(10, 0.6, 1.0, 3.0, 0.5, 1.0)


@pytest.mark.parametrize("kwargs, name", [
    ({"n": 0}, "n"), ({"n": 2.5}, "n"), ({"step_size": 0.0}, "step_size"),
    ({"step_size": math.nan}, "step_size"), ({"lipschitz": -1.0}, "lipschitz"),
    ({"smoothness": -0.1}, "smoothness"), ({"strong_convexity": -0.1}, "strong_convexity"),
    ({"strong_convexity": 2.0}, "strong_convexity"), ({"sigma": 0.0}, "sigma"),
    ({"sigma": math.inf}, "sigma"), ({"form": "other"}, "form"),
])
def test_theorem5_bad_parameters(kwargs, name):
    params = {"n": 10, "step_size": 0.5, "lipschitz": 1.0, "smoothness": 1.0,
              "strong_convexity": 0.5, "sigma": 1.0}
    params.update(kwargs)
    with pytest.raises(InvalidParameterError) as info:
        NoisySgdPrivacy(**params)
    assert info.value.parameter == name


def test_theorem5_bad_index():
    p = NoisySgdPrivacy(10, 0.5, 1.0, 1.0, 0.5, 1.0)
    for bad in (0, 11, -1, 2.5, [1, 12]):
        with pytest.raises(InvalidParameterError, match="index"):
            p.rdp_slope(bad)
    with pytest.raises(InvalidParameterError, match="index"):
        p.rdp(0)


def test_theorem5_exact_contraction_to_a_point():
    """β = ρ and η = 1/β: the gradient step is constant in x, so only the last record leaks."""
    p = NoisySgdPrivacy(10, 0.5, 1.0, 2.0, 2.0, 1.0)
    assert p.contraction_squared == 0.0
    assert np.all(p.rdp_slope(np.arange(1, 10)) == 0.0)
    assert p.rdp_slope(10) == pytest.approx(2.0)
    assert p.epsilon(3, 1e-5) == 0.0 and p.epsilon(3, 0.0) == 0.0  # truly identical laws
    far = NoisySgdPrivacy(100_000, 0.5, 1.0, 1.0, 0.5, 1.0)
    assert 0.0 < far.rdp_slope(1) and far.log_rdp_slope(1) < -5000
    assert far.epsilon(1, 0.0) == math.inf
