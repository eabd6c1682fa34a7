"""Tests for privamp.divergences: hockey-stick, TV, Rényi, KL and Pearson–Vajda divergences.

Reference facts: Balle, Barthe, Gaboardi (2018) and the checked catalogue (hockey-stick
properties, advanced joint convexity), Wang's slides (Rényi / χ^ℓ closed forms),
Wang–Balle–Kasiviswanathan (ternary |χ|^ℓ). Exact references are computed with mpmath or
fractions from the float inputs, never with the code under test.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from privamp.divergences import (
    QuadratureResult,
    align,
    hockey_stick,
    hockey_stick_density,
    kl_divergence,
    log_hockey_stick,
    pearson_vajda,
    renyi_divergence,
    ternary_pearson_vajda,
    total_variation,
)
from privamp.errors import InvalidParameterError, InvalidTypeError

SETTINGS = settings(max_examples=100, deadline=None)
FEW = settings(max_examples=50, deadline=None)

RR_P = [0.75, 0.25]  # randomized response with p = 0.75 (pure ε = log 3)
RR_Q = [0.25, 0.75]

# ---------------------------------------------------------------------------------------------
# strategies and exact references
# ---------------------------------------------------------------------------------------------

WEIGHT = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-6, max_value=1.0),
    st.sampled_from([1e-6, 0.25, 0.5, 1.0]),
)
POSITIVE_WEIGHT = st.one_of(
    st.floats(min_value=1e-6, max_value=1.0), st.sampled_from([1e-6, 0.25, 0.5, 1.0])
)
MEASURE_WEIGHT = st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=10.0))
EPS = st.floats(min_value=0.0, max_value=8.0)
REAL_EPS = st.floats(min_value=-8.0, max_value=8.0)


def _normalise(weights) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return w / w.sum()


@st.composite
def pmf_tuples(draw, count=2, min_size=1, max_size=8, weight=WEIGHT):
    """``count`` random probability vectors of a common length 1..8 (zeros allowed)."""
    n = draw(st.integers(min_value=min_size, max_value=max_size))
    vectors = st.lists(weight, min_size=n, max_size=n).filter(lambda ws: sum(ws) > 0)
    return tuple(_normalise(draw(vectors)) for _ in range(count))


@st.composite
def measure_tuples(draw, count=2, max_size=8):
    """``count`` random non-negative measures (possibly zero) of a common length 1..8."""
    n = draw(st.integers(min_value=1, max_value=max_size))
    vectors = st.lists(MEASURE_WEIGHT, min_size=n, max_size=n)
    return tuple(np.asarray(draw(vectors), dtype=float) for _ in range(count))


def exact_hockey_stick(p, q, eps) -> mpmath.mpf:
    """Σ [p − e^ε q]_+ in 200-bit arithmetic from the exact float inputs."""
    with mpmath.workprec(200):
        if eps == math.inf:
            return mpmath.fsum(mpmath.mpf(a) for a, b in zip(p, q, strict=True) if b == 0)
        alpha = mpmath.mpf(0) if eps == -math.inf else mpmath.exp(mpmath.mpf(eps))
        return mpmath.fsum(
            max(mpmath.mpf(a) - alpha * mpmath.mpf(b), mpmath.mpf(0))
            for a, b in zip(p, q, strict=True)
        )


def exact_renyi(p, q, order) -> mpmath.mpf:
    """(1/(a−1)) log Σ_{p>0} p^a q^{1−a} in 50 digits (finite cases only).

    p and q are renormalised exactly first: a float vector summing to 1 − 1e-16 would otherwise
    add −1e-16/(a − 1) to the reference near a = 1.
    """
    with mpmath.workdps(50):
        a = mpmath.mpf(order)
        sp = mpmath.fsum(mpmath.mpf(x) for x in p)
        sq = mpmath.fsum(mpmath.mpf(y) for y in q)
        s = mpmath.fsum(
            (mpmath.mpf(x) / sp) ** a * (mpmath.mpf(y) / sq) ** (1 - a)
            for x, y in zip(p, q, strict=True)
            if x > 0
        )
        return mpmath.log(s) / (a - 1)


def exact_kl(p, q) -> mpmath.mpf:
    with mpmath.workdps(50):
        return mpmath.fsum(
            mpmath.mpf(x) * mpmath.log(mpmath.mpf(x) / mpmath.mpf(y))
            for x, y in zip(p, q, strict=True)
            if x > 0
        )


def exact_pearson_vajda(p, q, ell, absolute) -> mpmath.mpf:
    """Σ_{q>0} q ((p − q)/q)^ℓ (or |·|^ℓ) in 50 digits (for supp p ⊆ supp q)."""
    with mpmath.workdps(50):
        total = mpmath.mpf(0)
        for x, y in zip(p, q, strict=True):
            if y > 0:
                d = (mpmath.mpf(x) - mpmath.mpf(y)) / mpmath.mpf(y)
                total += mpmath.mpf(y) * (abs(d) ** ell if absolute else d**ell)
        return total


def gaussian_hockey_stick(theta, eps) -> float:
    """Φ(θ/2 − ε/θ) − e^ε Φ(−θ/2 − ε/θ) (Balle–Wang), evaluated in 40 digits."""
    with mpmath.workdps(40):
        t, e = mpmath.mpf(theta), mpmath.mpf(eps)
        return float(mpmath.ncdf(t / 2 - e / t) - mpmath.exp(e) * mpmath.ncdf(-t / 2 - e / t))


def poisson_pmf(lam, kmax=60) -> np.ndarray:
    return stats.poisson(lam).pmf(np.arange(kmax + 1))


def poisson_chi(ell, lam1=0.5, lam2=1.0) -> float:
    """χ^ℓ(Poi(λ1) ‖ Poi(λ2)) by the binomial expansion of E_q[(p/q − 1)^ℓ] with
    E_q[(p/q)^j] = exp(λ1^j λ2^{1−j} − jλ1 − (1−j)λ2)."""
    with mpmath.workdps(40):
        l1, l2 = mpmath.mpf(lam1), mpmath.mpf(lam2)
        return float(
            mpmath.fsum(
                mpmath.binomial(ell, j)
                * (-1) ** (ell - j)
                * mpmath.exp(l1**j * l2 ** (1 - j) - j * l1 - (1 - j) * l2)
                for j in range(ell + 1)
            )
        )


# ---------------------------------------------------------------------------------------------
# hockey-stick divergence: definition and basic values
# ---------------------------------------------------------------------------------------------


def test_hockey_stick_randomized_response_value():
    """D_1 of randomized response p = 0.75 is 2p − 1 = 0.5 and D_{e^1} = 0.75 − 0.25e."""
    assert hockey_stick(RR_P, RR_Q, 0.0) == pytest.approx(0.5, abs=1e-15)
    assert hockey_stick(RR_P, RR_Q, 1.0) == pytest.approx(0.75 - 0.25 * math.e, rel=1e-14)
    assert isinstance(hockey_stick(RR_P, RR_Q, 1.0), float)


@SETTINGS
@given(pq=pmf_tuples(), eps=st.one_of(REAL_EPS, st.sampled_from([-math.inf, math.inf])))
def test_hockey_stick_matches_exact_sum(pq, eps):
    """hockey_stick equals Σ [p − e^ε q]_+ computed in 200-bit arithmetic (to ~1e-14)."""
    p, q = pq
    exact = float(exact_hockey_stick(p, q, eps))
    tol = 1e-15 * (2 + abs(eps)) if math.isfinite(eps) else 1e-15
    assert hockey_stick(p, q, eps) == pytest.approx(exact, rel=1e-13, abs=tol)


@SETTINGS
@given(pq=pmf_tuples(), eps=EPS)
def test_hockey_stick_in_unit_interval(pq, eps):
    """0 ≤ D_{e^ε}(p ‖ q) ≤ 1 for probability vectors and ε ≥ 0."""
    value = hockey_stick(*pq, eps)
    # normalised float vectors may sum to 1 ± 2e-16, hence the 1e-15 slack
    assert 0.0 <= value <= 1.0 + 1e-15


@SETTINGS
@given(pq=pmf_tuples(), eps=st.lists(REAL_EPS, min_size=2, max_size=10))
def test_hockey_stick_nonincreasing_in_eps(pq, eps):
    """ε ↦ D_{e^ε}(p ‖ q) is non-increasing (including the limits ε = ±inf)."""
    grid = np.array([-math.inf, *sorted(eps), math.inf])
    values = hockey_stick(*pq, grid)
    assert np.all(np.diff(values) <= 0.0)


@SETTINGS
@given(
    pqs=pmf_tuples(count=4),
    lam=st.floats(min_value=0.0, max_value=1.0),
    eps=EPS,
)
def test_hockey_stick_jointly_convex(pqs, lam, eps):
    """D(λp1 + (1−λ)p2 ‖ λq1 + (1−λ)q2) ≤ λ D(p1‖q1) + (1−λ) D(p2‖q2)."""
    p1, q1, p2, q2 = pqs
    mixed = hockey_stick(lam * p1 + (1 - lam) * p2, lam * q1 + (1 - lam) * q2, eps)
    split = lam * hockey_stick(p1, q1, eps) + (1 - lam) * hockey_stick(p2, q2, eps)
    assert mixed <= split + 1e-14


@SETTINGS
@given(pq=pmf_tuples())
def test_hockey_stick_support_criterion(pq):
    """At ε = +inf D is p(complement of supp q), which is 0 iff supp p ⊆ supp q."""
    p, q = pq
    outside = math.fsum(p[q == 0].tolist())
    value = hockey_stick(p, q, math.inf)
    assert value == pytest.approx(outside, rel=1e-14, abs=0.0)
    contained = bool(np.all(q[p > 0] > 0))
    assert (value == 0.0) == contained


@SETTINGS
@given(pq=pmf_tuples(), eps=EPS)
def test_hockey_stick_self_is_zero(pq, eps):
    """D_{e^ε}(p ‖ p) = 0 for every ε ≥ 0."""
    p, _ = pq
    assert hockey_stick(p, p, eps) == 0.0
    assert hockey_stick(p, p, math.inf) == 0.0


@SETTINGS
@given(pq=pmf_tuples())
def test_hockey_stick_at_zero_is_total_variation(pq):
    """ε = 0 gives TV = ½ Σ |p − q| = total_variation(p, q)."""
    p, q = pq
    half_l1 = 0.5 * float(sum(abs(Fraction(a) - Fraction(b)) for a, b in zip(p, q, strict=True)))
    tv = total_variation(p, q)
    assert tv == pytest.approx(half_l1, rel=1e-15, abs=1e-16)
    assert hockey_stick(p, q, 0.0) == pytest.approx(half_l1, rel=1e-14, abs=1e-15)


def test_total_variation_examples():
    """TV of disjoint point masses is 1, of identical vectors 0, docstring example 0.5."""
    assert total_variation([1.0, 0.0], [0.0, 1.0]) == 1.0
    assert total_variation([0.2, 0.8], [0.2, 0.8]) == 0.0
    assert total_variation([1.0, 0.0], [0.5, 0.5]) == 0.5
    assert total_variation({"a": 1.0}, {"b": 1.0}) == 1.0


@SETTINGS
@given(pq=pmf_tuples())
def test_hockey_stick_eps_minus_inf_is_total_mass(pq):
    """ε = −inf (α = 0) gives the total mass of p: 1 for a probability vector."""
    p, q = pq
    assert hockey_stick(p, q, -math.inf) == pytest.approx(1.0, abs=1e-15)


@SETTINGS
@given(pq=pmf_tuples(), eps=EPS)
def test_hockey_stick_alpha_below_one_identity(pq, eps):
    """For α = e^{−ε} < 1: D_α(p ‖ q) = 1 − α + α D_{1/α}(q ‖ p)."""
    p, q = pq
    alpha = math.exp(-eps)
    lhs = hockey_stick(p, q, -eps)
    rhs = 1.0 - alpha + alpha * hockey_stick(q, p, eps)
    assert lhs == pytest.approx(rhs, abs=1e-14)


@SETTINGS
@given(pq=pmf_tuples(), eps=st.floats(min_value=1e-3, max_value=8.0))
def test_hockey_stick_self_below_one(pq, eps):
    """D_α(p ‖ p) = 1 − α for α = e^{−ε} < 1."""
    p, _ = pq
    assert hockey_stick(p, p, -eps) == pytest.approx(-math.expm1(-eps), rel=1e-14)


# ---------------------------------------------------------------------------------------------
# non-negative measures
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(
    nus=measure_tuples(),
    a=st.floats(min_value=1e-3, max_value=1e3),
    b=st.floats(min_value=1e-3, max_value=1e3),
    eps=REAL_EPS,
)
def test_measures_scaling_rule(nus, a, b, eps):
    """D_α(a ν1 ‖ b ν2) = a D_{αb/a}(ν1 ‖ ν2), i.e. ε' = ε + log(b/a)."""
    nu1, nu2 = nus
    lhs = hockey_stick(a * nu1, b * nu2, eps, measures=True)
    rhs = a * hockey_stick(nu1, nu2, eps + math.log(b / a), measures=True)
    scale = a * math.fsum(nu1.tolist())
    assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-13 * scale)


@SETTINGS
@given(nus=measure_tuples(count=4), eps=REAL_EPS)
def test_measures_subadditive(nus, eps):
    """D_α(ν1 + ν2 ‖ ν1' + ν2') ≤ D_α(ν1 ‖ ν1') + D_α(ν2 ‖ ν2')."""
    n1, m1, n2, m2 = nus
    whole = hockey_stick(n1 + n2, m1 + m2, eps, measures=True)
    parts = hockey_stick(n1, m1, eps, measures=True) + hockey_stick(n2, m2, eps, measures=True)
    assert whole <= parts + 1e-12 * (1.0 + parts)


@SETTINGS
@given(nus=measure_tuples(count=1), eps=st.one_of(REAL_EPS, st.just(math.inf)))
def test_measures_against_zero_measure(nus, eps):
    """D_α(ν ‖ 0) = ν(Z) for every α, including α = ∞."""
    (nu,) = nus
    zero = np.zeros_like(nu)
    assert hockey_stick(nu, zero, eps, measures=True) == pytest.approx(
        math.fsum(nu.tolist()), rel=1e-14, abs=0.0
    )


def test_measures_flag_required_for_non_probability_vectors():
    """Without measures=True a vector not summing to 1 is rejected; with it, it is accepted."""
    with pytest.raises(InvalidParameterError):
        hockey_stick([2.0, 1.0], [1.0, 1.0], 0.0)
    assert hockey_stick([2.0, 1.0], [1.0, 1.0], 0.0, measures=True) == 1.0
    assert hockey_stick([2.0, 1.0], [1.0, 1.0], -math.inf, measures=True) == 3.0


# ---------------------------------------------------------------------------------------------
# advanced joint convexity (Balle–Barthe–Gaboardi, Theorem 2)
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(
    mus=pmf_tuples(count=3),
    eta=st.floats(min_value=1e-6, max_value=1.0),
    eps=st.floats(min_value=0.0, max_value=6.0),
)
def test_advanced_joint_convexity_is_exact(mus, eta, eps):
    """D_{α'}((1−η)μ0 + ημ1 ‖ (1−η)μ0 + ημ1') = η D_α(μ1 ‖ (1−β)μ0 + βμ1'), α' = 1 + η(α−1)."""
    mu0, mu1, mu1p = mus
    eps_prime = math.log1p(eta * math.expm1(eps))  # log α'
    beta = math.exp(eps_prime - eps)  # α'/α
    lhs = hockey_stick((1 - eta) * mu0 + eta * mu1, (1 - eta) * mu0 + eta * mu1p, eps_prime)
    rhs = eta * hockey_stick(mu1, (1 - beta) * mu0 + beta * mu1p, eps)
    assert lhs == pytest.approx(rhs, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# log_hockey_stick and round_up
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(pq=pmf_tuples(), eps=st.lists(REAL_EPS, min_size=1, max_size=6))
def test_log_hockey_stick_is_log_of_hockey_stick(pq, eps):
    """log_hockey_stick == log(hockey_stick) where positive (rtol 1e-12), −inf where zero."""
    eps = np.array(eps)
    values = hockey_stick(*pq, eps)
    logs = log_hockey_stick(*pq, eps)
    positive = values > 1e-300
    np.testing.assert_allclose(logs[positive], np.log(values[positive]), rtol=1e-12, atol=1e-14)
    # where hockey_stick is 0 the log is −inf, or below the float range (e.g. ε = −5e-324)
    assert np.all(logs[values == 0.0] < math.log(1e-300))


def test_log_hockey_stick_tiny_values():
    """log_hockey_stick is exact for values near/below the float range (log space throughout)."""
    # p-mass outside supp q is 0.5 for every ε, even ε = 1e300: log 0.5.
    assert log_hockey_stick([0.5, 0.5], [0.0, 1.0], 1e300) == pytest.approx(
        math.log(0.5), rel=1e-15
    )
    # D_{e^ε}(p ‖ p) = 1 − e^ε for ε = −1e-320 (a subnormal): log D = log(−expm1(ε)).
    eps = -1e-320
    with mpmath.workprec(200):
        expected = float(mpmath.log(-mpmath.expm1(mpmath.mpf(eps))))
    assert log_hockey_stick([0.5, 0.5], [0.5, 0.5], eps) == pytest.approx(expected, rel=1e-14)
    # the randomized response far past its kink: D = 0, log D = −inf
    assert log_hockey_stick(RR_P, RR_Q, 5.0) == -math.inf


def _far_from_kinks(p, q, eps) -> bool:
    """Every exponent ε + log q_i − log p_i (p_i, q_i > 0) is at least 1 away from the kink 0."""
    both = (p > 0) & (q > 0)
    x = eps + np.log(q[both]) - np.log(p[both])
    return bool(np.all(np.abs(x) >= 1.0))


@SETTINGS
@given(pq=pmf_tuples(), eps=st.lists(REAL_EPS, min_size=1, max_size=6))
def test_round_up_is_slightly_above_plain(pq, eps):
    """round_up=True is ≥ plain, within abs 1e-13, and relative 1e-13 away from kinks."""
    # (At a kink p_i = e^ε q_i the exponent is shifted by its rounding-error bound, so the
    # relative change there is unbounded; the absolute change stays ≤ Σ p_i · 1e-14.)
    p, q = pq
    eps = np.array(eps)
    plain = hockey_stick(p, q, eps)
    up = hockey_stick(p, q, eps, round_up=True)
    assert np.all(up >= plain)
    assert np.all(up - plain <= 1e-13 * plain + 1e-13)
    for e, u, v in zip(eps, up, plain, strict=True):
        if _far_from_kinks(p, q, e):
            assert u - v <= 1e-13 * v


@SETTINGS
@given(pq=pmf_tuples(), eps=st.lists(REAL_EPS, min_size=1, max_size=6))
def test_log_round_up_is_slightly_above_plain(pq, eps):
    """log_hockey_stick(round_up=True) ≥ plain; e^up − e^plain within 1e-13 (abs and rel)."""
    p, q = pq
    eps = np.array(eps)
    plain = log_hockey_stick(p, q, eps)
    up = log_hockey_stick(p, q, eps, round_up=True)
    assert not np.any(np.isnan(up))
    assert np.all(up >= plain)
    value = np.exp(plain)
    assert np.all(np.exp(up) - value <= 1e-13 * value + 1e-13)
    for e, u, v in zip(eps, up, plain, strict=True):
        if v > -700 and _far_from_kinks(p, q, e):
            assert u - v <= 1e-13


@st.composite
def near_kink(draw):
    """A pmf pair and an ε within a few ulps of a kink log(p_i/q_i)."""
    p, q = draw(pmf_tuples(weight=POSITIVE_WEIGHT))
    i = draw(st.integers(min_value=0, max_value=p.size - 1))
    eps = math.log(p[i] / q[i])
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        eps = math.nextafter(eps, draw(st.sampled_from([-math.inf, math.inf])))
    return p, q, eps


@SETTINGS
@given(case=near_kink())
def test_round_up_bounds_exact_value_near_kinks(case):
    """Near a kink p_i = e^ε q_i, round_up=True is never below the exact (200-bit) value."""
    p, q, eps = case
    exact = exact_hockey_stick(p, q, eps)
    assert mpmath.mpf(hockey_stick(p, q, eps, round_up=True)) >= exact
    # plain value: the exponent carries a rounding error ~ ulp·(|ε| + |log p| + |log q|)
    assert hockey_stick(p, q, eps) == pytest.approx(float(exact), abs=1e-15 * (2 + abs(eps)))
    if exact > 0:
        with mpmath.workprec(200):
            assert mpmath.mpf(log_hockey_stick(p, q, eps, round_up=True)) >= mpmath.log(exact)


def test_randomized_response_kink_at_log3():
    """RR p = 0.75: D at ε = fl(log 3) is 0 (exactly: fl(log 3) > log 3), positive just below."""
    eps = math.log(3.0)
    with mpmath.workprec(200):
        assert mpmath.mpf(eps) > mpmath.log(3)  # so the exact value at fl(log 3) is 0
    assert exact_hockey_stick(RR_P, RR_Q, eps) == 0
    assert hockey_stick(RR_P, RR_Q, eps) == 0.0
    below = eps - 1e-9
    # exact: 0.75 − 0.25·e^{log 3 − 1e-9} ≈ 0.75e-9
    assert hockey_stick(RR_P, RR_Q, below) == pytest.approx(0.75e-9, rel=1e-6)
    assert hockey_stick(RR_P, RR_Q, below) > 0.0


def test_randomized_response_round_up_below_log3():
    """Just below log 3 (1..64 ulps, and 1e-15..1e-12), round_up is never below the exact value."""
    eps = math.log(3.0)
    points = []
    e = eps
    for _ in range(64):
        e = math.nextafter(e, -math.inf)
        points.append(e)
    points += [eps - d for d in (1e-15, 1e-14, 1e-13, 1e-12)]
    up = hockey_stick(RR_P, RR_Q, np.array(points), round_up=True)
    for e, u in zip(points, up, strict=True):
        exact = exact_hockey_stick(RR_P, RR_Q, e)
        assert exact > 0
        assert mpmath.mpf(u) >= exact
        assert u <= float(exact) + 1e-14  # and not absurdly above it
    # The plain value is not an upper bound here: one ulp below fl(log 3) it is 0.
    assert hockey_stick(RR_P, RR_Q, points[0]) == 0.0
    assert exact_hockey_stick(RR_P, RR_Q, points[0]) > 0


def test_round_up_is_upper_bound_under_underflow():
    """round_up=True stays ≥ the exact value when the terms are subnormal."""
    m = 5e-324  # smallest subnormal
    p, q = [2 * m, 1.0], [m, 1.0]
    eps = math.log(2.0)  # fl(log 2) < log 2, so the exact value 2m − e^ε m ≈ 2.3e-340 is > 0
    exact = exact_hockey_stick(p, q, eps)
    assert exact > 0
    assert mpmath.mpf(hockey_stick(p, q, eps, round_up=True)) >= exact


def test_round_up_measures_with_equal_logs():
    """round_up=True ≥ exact for the measures [1e300] and [1e300 − 1 ulp] at ε = 0."""
    p, q = [1e300], [math.nextafter(1e300, 0.0)]
    exact = exact_hockey_stick(p, q, 0.0)  # = 1 ulp of 1e300 ≈ 1.487e284
    assert exact > 1e284
    assert mpmath.mpf(hockey_stick(p, q, 0.0, measures=True, round_up=True)) >= exact


def test_log_round_up_of_zero_divergence_is_minus_inf():
    """log_hockey_stick(round_up=True) is −inf (not NaN) where D is exactly 0."""
    # RR p = 0.75 has pure ε = log 3: D = 0 at ε = 5 and at ε = inf (supp p ⊆ supp q).
    values = log_hockey_stick(RR_P, RR_Q, np.array([1.0, 5.0, math.inf]), round_up=True)
    assert not np.any(np.isnan(values))
    assert np.all(np.isneginf(values[1:]))
    assert values[0] >= log_hockey_stick(RR_P, RR_Q, 1.0)
    assert values[0] == pytest.approx(math.log(0.75 - 0.25 * math.e), rel=1e-14)
    assert log_hockey_stick(RR_P, RR_Q, math.inf, round_up=True) == -math.inf


@pytest.mark.parametrize("ulps_below", [1, 3, 6])
def test_round_up_when_logs_of_distinct_values_coincide(ulps_below):
    """round_up=True ≥ exact for q_0 a few ulps below p_0 = 1e-5 (same float log) at ε = 0."""
    p0 = 1e-5
    q0 = p0
    for _ in range(ulps_below):
        q0 = math.nextafter(q0, 0.0)
    assert q0 != p0 and np.log(q0) == np.log(p0)
    p, q = [p0, 1.0 - p0], [q0, 1.0 - q0]
    exact = exact_hockey_stick(p, q, 0.0)  # = p0 − q0 ≈ ulps_below · 1.7e-21
    assert exact > 0
    assert mpmath.mpf(hockey_stick(p, q, 0.0, round_up=True)) >= exact
    assert log_hockey_stick(p, q, 0.0, round_up=True) >= math.log(float(exact))


# ---------------------------------------------------------------------------------------------
# dict inputs and align
# ---------------------------------------------------------------------------------------------


def test_align_dicts_on_union_of_keys():
    """align uses the sorted union of keys; a missing key has probability 0."""
    p = {"b": 0.5, "a": 0.5}
    q = {"c": 0.75, "b": 0.25}
    pa, qa, support = align(p, q)
    assert support == ["a", "b", "c"]
    np.testing.assert_array_equal(pa, [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(qa, [0.0, 0.25, 0.75])
    pa, qa, support = align([0.5, 0.5], [0.25, 0.75])
    assert support is None
    np.testing.assert_array_equal(qa, [0.25, 0.75])


def test_align_unsortable_keys_keep_first_seen_order():
    """Unsortable keys are kept in first-seen order (p's keys first)."""
    pa, qa, support = align({1: 0.5, "b": 0.5}, {"b": 0.25, 2: 0.75})
    assert support == [1, "b", 2]
    np.testing.assert_array_equal(pa, [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(qa, [0.0, 0.25, 0.75])


@SETTINGS
@given(pq=pmf_tuples(), eps=REAL_EPS, order=st.floats(min_value=0.01, max_value=10.0))
def test_dict_inputs_equal_array_inputs(pq, eps, order):
    """Dicts (zero entries dropped) give the same results as the aligned arrays."""
    p, q = pq
    pd = {f"k{i}": float(v) for i, v in enumerate(p) if v > 0}
    qd = {f"k{i}": float(v) for i, v in enumerate(q) if v > 0}
    # the union of keys is sorted; arrays in that order ("k0" < "k1" < ... for 8 keys)
    keys = sorted(set(pd) | set(qd))
    pa = np.array([pd.get(k, 0.0) for k in keys])
    qa = np.array([qd.get(k, 0.0) for k in keys])
    assert hockey_stick(pd, qd, eps) == hockey_stick(pa, qa, eps)
    assert hockey_stick(pd, qd, eps) == pytest.approx(hockey_stick(p, q, eps), abs=1e-15)
    assert log_hockey_stick(pd, qd, eps) == log_hockey_stick(pa, qa, eps)
    assert total_variation(pd, qd) == total_variation(p, q)
    assert kl_divergence(pd, qd) == pytest.approx(kl_divergence(p, q), rel=1e-13, abs=1e-15)
    assert renyi_divergence(pd, qd, order) == renyi_divergence(pa, qa, order)
    assert pearson_vajda(pd, qd, 2) == pearson_vajda(pa, qa, 2)
    # ternary with r = q, dicts aligned on the union of keys
    assert ternary_pearson_vajda(pd, qd, qd, 2.5) == ternary_pearson_vajda(pa, qa, qa, 2.5)


def test_ternary_dicts_aligned_on_union_of_keys():
    """ternary_pearson_vajda on dicts with different keys equals the aligned-array result."""
    p, q = {"a": 0.5, "b": 0.5}, {"b": 0.25, "c": 0.75}
    r = {"a": 0.2, "b": 0.3, "c": 0.4, "d": 0.1}  # "d" is in r only
    # aligned on ["a", "b", "c", "d"]: E_r|(p − q)/r|^2 = 0.5²/0.2 + 0.25²/0.3 + 0.75²/0.4
    expected = 0.5**2 / 0.2 + 0.25**2 / 0.3 + 0.75**2 / 0.4
    arrays = ([0.5, 0.5, 0.0, 0.0], [0.0, 0.25, 0.75, 0.0], [0.2, 0.3, 0.4, 0.1])
    assert ternary_pearson_vajda(*arrays, 2) == pytest.approx(expected, rel=1e-14)
    assert ternary_pearson_vajda(p, q, r, 2) == pytest.approx(expected, rel=1e-14)


# ---------------------------------------------------------------------------------------------
# vectorisation
# ---------------------------------------------------------------------------------------------


@FEW
@given(pq=pmf_tuples(), rows=st.integers(1, 3), cols=st.integers(1, 4), data=st.data())
def test_hockey_stick_vectorised_over_eps(pq, rows, cols, data):
    """Array ε (incl. 2-D and ±inf) gives the shape of ε and the scalar values element-wise."""
    values = data.draw(
        st.lists(
            st.one_of(REAL_EPS, st.sampled_from([-math.inf, math.inf])),
            min_size=rows * cols,
            max_size=rows * cols,
        )
    )
    eps = np.array(values).reshape(rows, cols)
    for func in (hockey_stick, log_hockey_stick):
        for kwargs in ({}, {"round_up": True}):
            out = func(*pq, eps, **kwargs)
            assert isinstance(out, np.ndarray)
            assert out.shape == (rows, cols)
            loop = np.array([func(*pq, float(e), **kwargs) for e in eps.ravel()])
            np.testing.assert_allclose(out.ravel(), loop, rtol=1e-15, atol=0.0)
            flat = func(*pq, list(eps.ravel()), **kwargs)
            assert flat.shape == (rows * cols,)
            np.testing.assert_array_equal(flat, out.ravel())


def test_scalar_eps_returns_python_float_and_zero_dim_array_too():
    """A scalar (or 0-d array) ε returns a Python float; a 1-element list returns shape (1,)."""
    assert type(hockey_stick(RR_P, RR_Q, np.float64(0.0))) is float
    assert type(hockey_stick(RR_P, RR_Q, np.array(0.0))) is float
    assert type(log_hockey_stick(RR_P, RR_Q, 0.0)) is float
    assert hockey_stick(RR_P, RR_Q, [0.0]).shape == (1,)
    assert type(renyi_divergence(RR_P, RR_Q, 2)) is float


def test_renyi_vectorised_over_order():
    """Array orders (incl. 2-D, 0, 1 and inf) give the scalar values element-wise."""
    p, q = [0.6, 0.3, 0.1], [0.2, 0.5, 0.3]
    orders = np.array([[0.0, 0.5, 1.0], [1.0 + 5e-6, 2.0, math.inf]])
    out = renyi_divergence(p, q, orders)
    assert out.shape == (2, 3)
    loop = [renyi_divergence(p, q, float(a)) for a in orders.ravel()]
    np.testing.assert_array_equal(out.ravel(), loop)


# ---------------------------------------------------------------------------------------------
# densities
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", [0.5, 1.0, 2.0])
def test_density_gaussian_closed_form(theta):
    """N(0,1) vs N(θ,1): Φ(θ/2 − ε/θ) − e^ε Φ(−θ/2 − ε/θ), within abserr and 1e-9."""
    logp, logq = stats.norm(0, 1).logpdf, stats.norm(theta, 1).logpdf
    eps_values = [-1.0, 0.0, 0.1, 0.5, 1.0, 2.0]
    for eps in eps_values:
        exact = gaussian_hockey_stick(theta, eps)
        # crossing point p = e^ε q at z = θ/2 − ε/θ
        res = hockey_stick_density(
            logp,
            logq,
            eps,
            log_density=True,
            lower=-40,
            upper=40,
            points=[theta / 2 - eps / theta],
        )
        assert isinstance(res, QuadratureResult)
        assert abs(float(res.value) - exact) <= float(res.abserr) + 1e-15
        assert abs(float(res.value) - exact) <= 1e-9
        assert float(res.lower) <= exact <= float(res.upper)
        # whole real line, no break points: still accurate to 1e-9
        whole = hockey_stick_density(logp, logq, eps, log_density=True)
        assert abs(float(whole.value) - exact) <= float(whole.abserr) + 1e-15
        assert abs(float(whole.value) - exact) <= 1e-9


def test_density_far_tail_bump_with_points_on_whole_line():
    """θ = 0.5, ε = 3: the positive part lives beyond z = −5.75; with points on ℝ it is found."""
    # gaussian_hockey_stick(0.5, 3.0) = 3.400911735673529e-10 (mpmath, 40 digits)
    exact = gaussian_hockey_stick(0.5, 3.0)
    assert exact == pytest.approx(3.400911735673529e-10, rel=1e-12)
    res = hockey_stick_density(
        stats.norm(0, 1).logpdf,
        stats.norm(0.5, 1).logpdf,
        3.0,
        log_density=True,
        points=[-10.0, 0.0, 0.5],
    )
    assert float(res.value) == pytest.approx(exact, rel=1e-6)
    assert float(res.lower) <= exact <= float(res.upper)


@pytest.mark.parametrize(
    "domain",
    [{}, {"lower": -1.0, "upper": 2.0}, {"points": [0.0, 0.5, 1.0, 1.5]}],
    ids=["whole line", "finite", "points"],
)
def test_density_uniforms_with_different_supports(domain):
    """U[0,1] vs U[0.5,1.5] (plain pdfs, zeros): D = 0.5 for ε ≥ 0, 0.5 + 0.5(1 − e^ε) below."""
    eps = np.array([-1.0, -0.25, 0.0, 1.0, 20.0])
    exact = 0.5 + 0.5 * np.maximum(-np.expm1(eps), 0.0)  # mass on [0, 0.5) + [1 − e^ε]_+ / 2
    res = hockey_stick_density(stats.uniform(0, 1).pdf, stats.uniform(0.5, 1).pdf, eps, **domain)
    np.testing.assert_allclose(res.value, exact, rtol=0, atol=1e-10)
    assert np.all(np.abs(res.value - exact) <= res.abserr + 1e-15)


def test_density_scalar_only_log_densities():
    """Log-densities written with math (scalars only) work, on finite and infinite domains."""
    half_log_2pi = 0.5 * math.log(2 * math.pi)

    def logp(z):
        return -0.5 * z * z - half_log_2pi

    def logq(z):
        return -0.5 * (z - 1.0) ** 2 - half_log_2pi

    exact = np.array([gaussian_hockey_stick(1.0, e) for e in (0.0, 1.0)])
    for domain in ({"lower": -40.0, "upper": 40.0}, {"points": [0.0, 1.0]}):
        res = hockey_stick_density(logp, logq, [0.0, 1.0], log_density=True, **domain)
        np.testing.assert_allclose(res.value, exact, rtol=0, atol=1e-10)
        assert np.all(np.abs(res.value - exact) <= res.abserr + 1e-15)


def test_density_gaussian_docstring_value():
    """Gaussian θ = 1, ε = 1 with plain (not log) densities gives 0.12693673750664."""
    # gaussian_hockey_stick(1.0, 1.0) = 0.12693673750664394
    res = hockey_stick_density(stats.norm(0, 1).pdf, stats.norm(1, 1).pdf, 1.0)
    assert float(res.value) == pytest.approx(0.12693673750664394, abs=1e-12)
    assert gaussian_hockey_stick(1.0, 1.0) == pytest.approx(0.12693673750664394, abs=1e-15)


@pytest.mark.parametrize("theta", [0.5, 1.0, 2.0])
def test_density_laplace_closed_form(theta):
    """Laplace(0,1) vs Laplace(θ,1): D_{e^ε} = [1 − exp((ε − θ)/2)]_+ for ε ≥ 0."""
    logp, logq = stats.laplace(0, 1).logpdf, stats.laplace(theta, 1).logpdf
    eps = np.array([0.0, 0.25 * theta, 0.5 * theta, theta, theta + 1.0])
    exact = np.maximum(-np.expm1((eps - theta) / 2.0), 0.0)
    res = hockey_stick_density(
        logp, logq, eps, log_density=True, lower=-60.0, upper=60.0, points=[0.0, theta]
    )
    assert res.value.shape == eps.shape
    np.testing.assert_allclose(res.value, exact, rtol=0, atol=1e-12)
    assert np.all(np.abs(res.value - exact) <= res.abserr + 1e-15)
    assert np.all(res.lower <= exact + 1e-16)
    assert np.all(exact <= res.upper + 1e-16)


def test_density_vectorised_over_eps():
    """Array ε (incl. 2-D) gives the shape of ε and the values of scalar calls."""
    logp, logq = stats.norm(0, 1).logpdf, stats.norm(1, 1).logpdf
    eps = np.array([[0.0, 0.5], [1.0, 2.0]])
    res = hockey_stick_density(logp, logq, eps, log_density=True)
    assert res.value.shape == res.abserr.shape == res.lower.shape == res.upper.shape == (2, 2)
    for idx in np.ndindex(eps.shape):
        single = hockey_stick_density(logp, logq, float(eps[idx]), log_density=True)
        assert res.value[idx] == float(single.value)
        assert res.value[idx] == pytest.approx(gaussian_hockey_stick(1.0, eps[idx]), abs=1e-9)


def test_quadrature_result_bounds():
    """QuadratureResult.upper = value + abserr and lower = max(value − abserr, 0)."""
    r = QuadratureResult(np.array([0.5, 1e-20]), np.array([0.1, 1e-18]))
    np.testing.assert_allclose(r.upper, [0.6, 1.01e-18])
    np.testing.assert_allclose(r.lower, [0.4, 0.0])


def test_density_rejects_bad_domain_and_eps():
    """lower >= upper, NaN/inf ε and NaN bounds raise InvalidParameterError."""
    logp, logq = stats.norm(0, 1).logpdf, stats.norm(1, 1).logpdf
    for lo, hi in [(1.0, 1.0), (2.0, 1.0), (math.inf, math.inf), (math.nan, 1.0)]:
        with pytest.raises(InvalidParameterError):
            hockey_stick_density(logp, logq, 1.0, lower=lo, upper=hi, log_density=True)
    for eps in [math.nan, math.inf, -math.inf, [0.0, math.nan]]:
        with pytest.raises(InvalidParameterError):
            hockey_stick_density(logp, logq, eps, log_density=True)
    with pytest.raises(InvalidTypeError):
        hockey_stick_density(logp, logq, "1.0", log_density=True)


# ---------------------------------------------------------------------------------------------
# Rényi divergence
# ---------------------------------------------------------------------------------------------

RR8_P, RR8_Q = [0.8, 0.2], [0.2, 0.8]


def test_renyi_randomized_response_closed_forms():
    """RR p = 0.8: D_2 = log 3.25, D_3 = ½ log 12.8125, D_∞ = log 4, D_1 = KL."""
    # Wang's slides: 1.1786549963416464 (= math.log(3.25)), 1.2752106284493137
    # (= 0.5 * math.log(12.8125)); KL = 0.6 log 4 = 0.8317766166719343 (= 0.6 * math.log(4)).
    assert renyi_divergence(RR8_P, RR8_Q, 2) == pytest.approx(1.1786549963416464, rel=1e-14)
    assert renyi_divergence(RR8_P, RR8_Q, 3) == pytest.approx(1.2752106284493137, rel=1e-14)
    assert renyi_divergence(RR8_P, RR8_Q, math.inf) == pytest.approx(math.log(4), rel=1e-15)
    assert renyi_divergence(RR8_P, RR8_Q, 1) == pytest.approx(0.8317766166719343, rel=1e-14)
    assert kl_divergence(RR8_P, RR8_Q) == pytest.approx(0.8317766166719343, rel=1e-14)


@pytest.mark.parametrize("delta", [1e-7, -1e-7, 1e-3, -1e-3])
def test_renyi_continuous_at_order_one(delta):
    """Orders 1 ± 1e-7 and 1 ± 1e-3 are within |δ| of KL (slope at 1: Var(loss)/2 ≈ 0.38)."""
    p, q = [0.6, 0.3, 0.1], [0.2, 0.5, 0.3]
    kl = kl_divergence(p, q)
    value = renyi_divergence(p, q, 1.0 + delta)
    assert abs(value - kl) <= abs(delta)
    assert value == pytest.approx(float(exact_renyi(p, q, 1.0 + delta)), abs=1e-9)
    assert (value - kl) * delta > 0  # strictly increasing in the order through 1


def test_renyi_series_branch_matches_general_formula():
    """Near 1 (|t| < 1e-5, series) and at 1 ± 2e-5 (general formula) both match mpmath."""
    p, q = [0.6, 0.3, 0.1], [0.2, 0.5, 0.3]
    for order in [
        1 - 2e-5,
        1 - 1.0001e-5,
        1 - 9.999e-6,
        1 - 1e-6,
        1.0,
        1 + 1e-6,
        1 + 9.999e-6,
        1 + 1.0001e-5,
        1 + 2e-5,
    ]:
        ref = exact_kl(p, q) if order == 1.0 else exact_renyi(p, q, order)
        assert renyi_divergence(p, q, order) == pytest.approx(float(ref), abs=1e-10)
    # the two branches just either side of the switch agree to ~1e-9
    for sign in (-1, 1):
        series = renyi_divergence(p, q, 1 + sign * 0.99999e-5)
        general = renyi_divergence(p, q, 1 + sign * 1.00001e-5)
        assert series == pytest.approx(general, abs=1e-9)


def test_renyi_order_zero():
    """D_0(p ‖ q) = −log q(supp p)."""
    p, q = [0.5, 0.5, 0.0], [0.1, 0.2, 0.7]
    assert renyi_divergence(p, q, 0.0) == pytest.approx(-math.log(0.3), rel=1e-15)
    assert renyi_divergence([0.5, 0.5], [0.5, 0.5], 0.0) == 0.0


def test_renyi_order_zero_disjoint_supports_is_inf():
    """D_0(p ‖ q) = −log 0 = inf when q(supp p) = 0."""
    assert renyi_divergence([1.0, 0.0], [0.0, 1.0], 0.0) == math.inf


def test_renyi_escape_inf_for_order_at_least_one():
    """supp p ⊄ supp q: inf for order ≥ 1 (incl. 1 ± tiny), finite for order < 1."""
    p, q = [0.5, 0.3, 0.2, 0.0], [0.0, 0.4, 0.4, 0.2]
    high = renyi_divergence(p, q, [1.0, 1 + 1e-7, 1.5, 2.0, 10.0, math.inf])
    assert np.all(np.isposinf(high))
    low = renyi_divergence(p, q, [0.0, 0.3, 0.5, 1 - 1e-3, 1 - 1e-7])
    assert np.all(np.isfinite(low))
    for order, value in zip([0.3, 0.5, 1 - 1e-3], low[1:4], strict=True):
        assert value == pytest.approx(float(exact_renyi(p, q, order)), rel=1e-12)
    assert low[0] == pytest.approx(-math.log(0.8), rel=1e-15)  # −log q(supp p)
    # as order → 1⁻, D_a ≈ −log p(supp q)/(1 − a) = log 2/(1 − a): large but finite
    assert low[-1] == pytest.approx(math.log(2) / 1e-7, rel=1e-5)


ORDERS = st.one_of(
    st.floats(min_value=0.0, max_value=60.0),
    st.sampled_from([0.0, 0.5, 1 - 1e-6, 1.0, 1 + 1e-6, 2.0, math.inf]),
)


@SETTINGS
@given(pq=pmf_tuples(), orders=st.lists(ORDERS, min_size=2, max_size=8))
def test_renyi_nondecreasing_in_order(pq, orders):
    """order ↦ D_order(p ‖ q) is non-decreasing on [0, ∞]."""
    p, q = pq
    grid = np.array(sorted(orders))
    values = renyi_divergence(p, q, grid)
    assert not np.any(np.isnan(values))
    assert np.all(values >= -1e-12)  # ≥ 0 up to rounding
    for lo, hi in itertools.pairwise(values):
        assert hi == math.inf if lo == math.inf else hi >= lo - 1e-9 * (1 + abs(lo))


@SETTINGS
@given(
    pq=pmf_tuples(),
    order=st.one_of(
        st.floats(min_value=1e-3, max_value=1 - 1e-3),
        st.floats(min_value=1 + 1e-3, max_value=40.0),
        st.floats(min_value=1 - 5e-5, max_value=1 + 5e-5).filter(lambda a: a != 1.0),
    ),
)
def test_renyi_matches_mpmath(pq, order):
    """D_a = (1/(a−1)) log Σ p^a q^{1−a} against 50-digit mpmath (finite cases)."""
    p, q = pq
    escapes = bool(np.any(q[p > 0] == 0))
    value = renyi_divergence(p, q, order)
    if order > 1 and escapes:
        assert value == math.inf
        return
    assume(np.any(q[p > 0] > 0))
    ref = float(exact_renyi(p, q, order))
    assert value == pytest.approx(ref, rel=1e-10, abs=1e-10)


@SETTINGS
@given(pq=pmf_tuples())
def test_renyi_two_is_log_one_plus_chi_square(pq):
    """D_2(p ‖ q) = log(1 + χ²(p ‖ q)); D_∞ = log max p/q; D_1 = KL."""
    p, q = pq
    chi2 = pearson_vajda(p, q, 2)
    assert renyi_divergence(p, q, 2) == pytest.approx(math.log1p(chi2), rel=1e-12, abs=1e-14)
    assert renyi_divergence(p, q, 1) == pytest.approx(kl_divergence(p, q), rel=1e-12, abs=1e-14)
    mask = p > 0
    with np.errstate(divide="ignore"):
        d_inf = float(np.max(np.log(p[mask]) - np.log(q[mask])))
    assert renyi_divergence(p, q, math.inf) == pytest.approx(d_inf, rel=1e-14, abs=1e-15)


def test_renyi_self_divergence_zero_for_slightly_unnormalised_vector():
    """D_a(p ‖ p) = 0 for all orders when p (accepted: sums to 1 − 1e-10) is compared to itself."""
    p = [0.5, 0.5 - 1e-10]
    orders = [0.5, 1 - 1.1e-5, 1.0, 1 + 0.99e-5, 1 + 1.01e-5, 2.0]
    np.testing.assert_allclose(renyi_divergence(p, p, orders), 0.0, atol=1e-12)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_renyi_huge_finite_order_bounded_by_infinite_order():
    """D_a ≤ D_∞ for every finite a, also a = 1e308 and 1.7e308."""
    p, q = [0.5, 0.3, 0.2], [0.1, 0.1, 0.8]
    d_inf = renyi_divergence(p, q, math.inf)
    assert d_inf == pytest.approx(math.log(5), rel=1e-15)
    values = renyi_divergence(p, q, [1e300, 1e308, 1.7e308])
    assert np.all(values <= d_inf + 1e-12)
    assert np.all(values >= renyi_divergence(p, q, 100.0))


# ---------------------------------------------------------------------------------------------
# KL divergence
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(pq=pmf_tuples())
def test_kl_matches_scipy_entropy(pq):
    """kl_divergence equals scipy.stats.entropy(p, q), inf when p is not ≪ q."""
    p, q = pq
    expected = stats.entropy(p, q)
    value = kl_divergence(p, q)
    if np.any((q == 0) & (p > 0)):
        assert value == math.inf
        assert expected == math.inf
    else:
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert value == pytest.approx(float(exact_kl(p, q)), rel=1e-12, abs=1e-15)
        assert value >= -1e-16


def test_kl_examples():
    """KL docstring value, KL(p ‖ p) = 0 and inf without absolute continuity."""
    # 0.5 log(0.5/0.25) + 0.5 log(0.5/0.75) = 0.14384103622589045
    assert kl_divergence([0.5, 0.5], [0.25, 0.75]) == pytest.approx(0.14384103622589045, rel=1e-14)
    assert kl_divergence([0.3, 0.7, 0.0], [0.3, 0.7, 0.0]) == 0.0
    assert kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2), rel=1e-15)


# ---------------------------------------------------------------------------------------------
# Pearson–Vajda χ^ℓ and |χ|^ℓ
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ell", "reference"),
    # mpmath, 40 digits: poisson_chi(3), poisson_chi(5), poisson_chi(7)
    [(3, 0.016169707369), (5, -0.00182116063191), (7, -0.00864224059947)],
)
def test_pearson_vajda_poisson_odd_orders(ell, reference):
    """χ^ℓ(Poi(0.5) ‖ Poi(1)) for odd ℓ (negative for ℓ = 5, 7), pmfs truncated at k ≤ 60."""
    p, q = poisson_pmf(0.5), poisson_pmf(1.0)
    exact = poisson_chi(ell)
    assert exact == pytest.approx(reference, abs=1e-12)
    assert pearson_vajda(p, q, ell) == pytest.approx(exact, rel=1e-10)


@pytest.mark.parametrize("ell", [1, 2, 4, 6])
def test_pearson_vajda_poisson_even_orders(ell):
    """χ^ℓ(Poi(0.5) ‖ Poi(1)) for ℓ = 1, 2, 4, 6 equals the closed form (χ^1 = 0)."""
    p, q = poisson_pmf(0.5), poisson_pmf(1.0)
    exact = poisson_chi(ell)
    assert pearson_vajda(p, q, ell) == pytest.approx(exact, rel=1e-10, abs=1e-15)
    if ell % 2 == 0:
        assert pearson_vajda(p, q, ell, absolute=True) == pytest.approx(exact, rel=1e-10)


@SETTINGS
@given(pq=pmf_tuples())
def test_pearson_vajda_order_one(pq):
    """χ^1 = 0 and |χ|^1 = 2 TV (p-mass outside supp q included)."""
    p, q = pq
    assert pearson_vajda(p, q, 1) == pytest.approx(0.0, abs=1e-15)
    assert pearson_vajda(p, q, 1, absolute=True) == pytest.approx(
        2 * total_variation(p, q), rel=1e-13, abs=1e-15
    )


@SETTINGS
@given(
    pq=pmf_tuples(),
    ell=st.integers(min_value=2, max_value=8),
    real_ell=st.floats(min_value=1.0, max_value=8.0),
)
def test_pearson_vajda_matches_mpmath(pq, ell, real_ell):
    """χ^ℓ, |χ|^ℓ (real ℓ ≥ 1) agree with mpmath; χ^2 ≥ 0; inf when supp p ⊄ supp q."""
    p, q = pq
    escapes = bool(np.any((q == 0) & (p > 0)))
    if escapes:
        assert pearson_vajda(p, q, ell) == math.inf
        assert pearson_vajda(p, q, ell, absolute=True) == math.inf
        if real_ell > 1:
            assert pearson_vajda(p, q, real_ell, absolute=True) == math.inf
        return
    abs_ref = float(exact_pearson_vajda(p, q, ell, absolute=True))
    signed = pearson_vajda(p, q, ell)
    assert signed == pytest.approx(
        float(exact_pearson_vajda(p, q, ell, absolute=False)), rel=1e-10, abs=1e-12 * abs_ref
    )
    assert pearson_vajda(p, q, ell, absolute=True) == pytest.approx(abs_ref, rel=1e-10)
    real_ref = float(exact_pearson_vajda(p, q, real_ell, absolute=True))
    assert pearson_vajda(p, q, real_ell, absolute=True) == pytest.approx(real_ref, rel=1e-10)
    assert pearson_vajda(p, q, 2) >= 0.0


def test_pearson_vajda_parameter_validation():
    """Signed χ^ℓ needs an integer ℓ ≥ 1; |χ|^ℓ accepts real ℓ ≥ 1; others raise."""
    p, q = [0.5, 0.5], [0.25, 0.75]
    assert pearson_vajda(p, q, 2) == pytest.approx(1 / 3, rel=1e-14)  # 0.25²/0.25 + 0.25²/0.75
    assert pearson_vajda(p, q, 2.0) == pearson_vajda(p, q, 2)
    for bad in [1.5, 0, 0.5, -1, math.inf, math.nan]:
        with pytest.raises(InvalidParameterError):
            pearson_vajda(p, q, bad)
    for bad in [True, "2", None]:
        with pytest.raises(InvalidTypeError):
            pearson_vajda(p, q, bad)
    # |χ|^{1.5} = 0.25 (1)^{1.5} + 0.75 (1/3)^{1.5}
    assert pearson_vajda(p, q, 1.5, absolute=True) == pytest.approx(
        0.25 + 0.75 * (1 / 3) ** 1.5, rel=1e-14
    )
    for bad in [0.99, 0.0, math.inf, math.nan]:
        with pytest.raises(InvalidParameterError):
            pearson_vajda(p, q, bad, absolute=True)


# ---------------------------------------------------------------------------------------------
# ternary |χ|^ℓ
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(
    pq=pmf_tuples(),
    ell=st.one_of(
        st.floats(min_value=1.0, max_value=6.0, exclude_min=True), st.sampled_from([2, 3])
    ),
)
def test_ternary_with_r_equal_q_is_binary(pq, ell):
    """ternary_pearson_vajda(p, q, q, ℓ) == pearson_vajda(p, q, ℓ, absolute=True) for ℓ > 1."""
    p, q = pq
    binary = pearson_vajda(p, q, ell, absolute=True)
    ternary = ternary_pearson_vajda(p, q, q, ell)
    if math.isinf(binary):
        assert ternary == math.inf
    else:
        assert ternary == pytest.approx(binary, rel=1e-13, abs=1e-300)


def test_ternary_order_one_common_support():
    """With supp p ⊆ supp q, ternary |χ|^1 with r = q equals Σ|p − q| = 2 TV."""
    p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    assert ternary_pearson_vajda(p, q, q, 1) == pytest.approx(2 * total_variation(p, q))
    assert ternary_pearson_vajda(p, q, [0.1, 0.1, 0.8], 1) == pytest.approx(0.6, rel=1e-14)


def test_ternary_order_one_outside_support_matches_binary():
    """ternary(p, q, q, 1) == |χ|^1(p ‖ q) = 2 TV also when supp p ⊄ supp q."""
    p, q = [0.5, 0.5, 0.0], [0.0, 0.5, 0.5]
    assert pearson_vajda(p, q, 1, absolute=True) == pytest.approx(1.0)
    assert ternary_pearson_vajda(p, q, q, 1) == pytest.approx(1.0)


def test_ternary_examples():
    """Ternary docstring value, zero when p = q, inf when r misses p − q (ℓ > 1)."""
    assert ternary_pearson_vajda([0.5, 0.5], [0.25, 0.75], [0.25, 0.75], 2) == pytest.approx(
        1 / 3, rel=1e-14
    )
    assert ternary_pearson_vajda([0.3, 0.7], [0.3, 0.7], [1.0, 0.0], 2) == 0.0
    assert ternary_pearson_vajda([0.5, 0.5], [0.25, 0.75], [1.0, 0.0], 2) == math.inf
    # E_r |(p − q)/r|^2 with r = [0.5, 0.5]: 0.5·0.5² + 0.5·0.5² = 0.25
    assert ternary_pearson_vajda([0.5, 0.5], [0.25, 0.75], [0.5, 0.5], 2) == pytest.approx(0.25)
    with pytest.raises(InvalidParameterError):
        ternary_pearson_vajda([0.5, 0.5], [0.25, 0.75], [0.5, 0.5], 0.5)
    with pytest.raises(InvalidParameterError):
        ternary_pearson_vajda([0.5, 0.5], [0.25, 0.75], [0.5, 0.6], 2)
    with pytest.raises(InvalidParameterError):
        ternary_pearson_vajda([0.5, 0.5], [0.25, 0.75], [1.0], 2)


@FEW
@given(mech=pmf_tuples(count=3, weight=POSITIVE_WEIGHT))
def test_ternary_binary_lemma(mech):
    """ξ(α)^α ≤ ζ(α)^α ≤ 4 ξ(α)^α over a 3-output mechanism, α ∈ {2, 3, 4}."""
    for alpha in (2, 3, 4):
        xi = max(
            pearson_vajda(mech[i], mech[j], alpha, absolute=True)
            for i, j in itertools.permutations(range(3), 2)
        )
        zeta = max(
            ternary_pearson_vajda(mech[i], mech[j], mech[k], alpha)
            for i, j, k in itertools.product(range(3), repeat=3)
        )
        assert xi <= zeta * (1 + 1e-12)
        assert zeta <= 4 * xi * (1 + 1e-12)


# ---------------------------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------------------------

FUNCTIONS = {
    "hockey_stick": lambda p, q: hockey_stick(p, q, 0.5),
    "log_hockey_stick": lambda p, q: log_hockey_stick(p, q, 0.5),
    "total_variation": total_variation,
    "kl_divergence": kl_divergence,
    "renyi_divergence": lambda p, q: renyi_divergence(p, q, 2.0),
    "pearson_vajda": lambda p, q: pearson_vajda(p, q, 2),
    "ternary_pearson_vajda": lambda p, q: ternary_pearson_vajda(p, q, q, 2),
    "align": align,
}

BAD_INPUTS = {
    "mismatched lengths": ([0.5, 0.5], [1.0]),
    "negative entry": ([1.5, -0.5], [0.5, 0.5]),
    "NaN entry": ([math.nan, 1.0], [0.5, 0.5]),
    "inf entry": ([math.inf, 0.0], [1.0, 0.0]),
    "not summing to 1": ([0.5, 0.4], [0.5, 0.5]),
    "q not summing to 1": ([0.5, 0.5], [0.5, 0.5 + 1e-8]),
    "dict with array": ({"a": 1.0}, [1.0]),
    "array with dict": ([1.0], {"a": 1.0}),
    "string": ("ab", [0.5, 0.5]),
    "list of strings": (["a", "b"], [0.5, 0.5]),
    "dict of strings": ({"a": "x"}, {"a": 1.0}),
    "None": (None, [1.0]),
    "2-D": ([[0.5, 0.5]], [[0.5, 0.5]]),
    "empty": ([], []),
    "bool vector": (np.array([True, False]), [1.0, 0.0]),
}


@pytest.mark.parametrize("func", list(FUNCTIONS.values()), ids=list(FUNCTIONS))
@pytest.mark.parametrize("args", list(BAD_INPUTS.values()), ids=list(BAD_INPUTS))
def test_invalid_distributions_raise(func, args):
    """Invalid distributions raise InvalidParameterError (or its subclass InvalidTypeError)."""
    with pytest.raises(InvalidParameterError):
        func(*args)


@pytest.mark.parametrize("func", list(FUNCTIONS.values()), ids=list(FUNCTIONS))
def test_type_errors_are_invalid_type_error(func):
    """Strings and None as distributions raise the InvalidTypeError subclass."""
    for args in [("ab", [0.5, 0.5]), (["a", "b"], [0.5, 0.5]), (None, [1.0])]:
        with pytest.raises(InvalidTypeError):
            func(*args)


def test_sum_tolerance_is_1e9():
    """A probability vector may be off by < 1e-9 from summing to 1, not by more."""
    assert hockey_stick([0.5, 0.5 + 5e-10], [0.5, 0.5], 0.0) == pytest.approx(5e-10)
    with pytest.raises(InvalidParameterError):
        hockey_stick([0.5, 0.5 + 2e-9], [0.5, 0.5], 0.0)


def test_invalid_eps_and_order_raise():
    """NaN ε, string ε, empty ε, negative / NaN orders raise InvalidParameterError."""
    for eps in [math.nan, [0.0, math.nan], []]:
        with pytest.raises(InvalidParameterError):
            hockey_stick(RR_P, RR_Q, eps)
        with pytest.raises(InvalidParameterError):
            log_hockey_stick(RR_P, RR_Q, eps)
    for eps in ["1", None, True]:
        with pytest.raises(InvalidTypeError):
            hockey_stick(RR_P, RR_Q, eps)
    for order in [-0.5, math.nan, -math.inf, [1.0, -1.0]]:
        with pytest.raises(InvalidParameterError):
            renyi_divergence(RR_P, RR_Q, order)
    with pytest.raises(InvalidTypeError):
        renyi_divergence(RR_P, RR_Q, "2")


def test_measures_accept_non_probability_but_reject_negative():
    """measures=True accepts any finite non-negative vector (even zero) but not −1 or NaN."""
    assert hockey_stick([0.0, 0.0], [0.0, 0.0], 0.0, measures=True) == 0.0
    for bad in ([-1.0, 2.0], [math.nan, 1.0], [math.inf, 1.0]):
        with pytest.raises(InvalidParameterError):
            hockey_stick(bad, [1.0, 1.0], 0.0, measures=True)
    pa, qa, _ = align([2.0, 3.0], [0.0, 7.0], measures=True)
    np.testing.assert_array_equal(pa, [2.0, 3.0])
    np.testing.assert_array_equal(qa, [0.0, 7.0])
