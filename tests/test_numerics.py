"""Tests for privamp._numerics against high-precision (mpmath) and brute-force oracles."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import special, stats

from privamp._numerics import (
    ULP,
    binomial_logpmf,
    bisect_threshold,
    div_up,
    hypergeom_logpmf,
    log1mexp,
    log_add,
    log_comb,
    log_expm1,
    log_norm_cdf,
    log_norm_sf,
    log_sub,
    log_sub_sign,
    logsumexp_signed,
    lse_error,
    mul_up,
    next_up,
    round_down_log,
    round_up_log,
    section_threshold,
)

mp = mpmath.mp
#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 60

FMAX = float(np.finfo(float).max)
INF = math.inf

finite = st.floats(allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=0.0, exclude_min=True, allow_infinity=False)


# ---------------------------------------------------------------------------------------------
# mpmath oracles (all evaluated at mp.dps = 60)
# ---------------------------------------------------------------------------------------------


def mp_log1mexp(x: float):
    """log(1 - e^x) for x < 0, accurate in both regimes (no cancellation inside mpmath)."""
    x = mpmath.mpf(x)
    return mpmath.log(-mpmath.expm1(x)) if x > -1 else mpmath.log1p(-mpmath.exp(x))


def mp_log_expm1(x: float):
    """log(e^x - 1) for x > 0."""
    return mpmath.log(mpmath.expm1(mpmath.mpf(x)))


def mp_log_ncdf(x: float):
    """log Phi(x), computed from the small tail so that 1 - tiny does not cancel."""
    x = mpmath.mpf(x)
    return mpmath.log(mpmath.ncdf(x)) if x <= 0 else mpmath.log1p(-mpmath.ncdf(-x))


def mp_log_comb(n, k):
    return mpmath.log(mpmath.binomial(mpmath.mpf(n), mpmath.mpf(k)))


def close(got, exact, rtol, atol=0.0) -> bool:
    """|got - exact| <= rtol |exact| + atol, evaluated in mpmath."""
    return abs(mpmath.mpf(float(got)) - exact) <= rtol * abs(exact) + atol


# ---------------------------------------------------------------------------------------------
# log_add / log1mexp / log_expm1
# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.floats(-700, 700), st.floats(-700, 700))
def test_log_add_matches_mpmath(a, b):
    """log_add(a, b) = log(e^a + e^b)."""
    hi, lo = mpmath.mpf(max(a, b)), mpmath.mpf(min(a, b))
    exact = hi + mpmath.log1p(mpmath.exp(lo - hi))  # log1p: no 1 + tiny cancellation
    assert close(log_add(a, b), exact, 4 * ULP, 1e-300)


def test_log_add_log_of_zero_is_identity():
    """e^-inf = 0, so log_add(a, -inf) = a and log_add(-inf, -inf) = -inf."""
    assert log_add(3.5, -INF) == 3.5
    assert log_add(-INF, -7.0) == -7.0
    assert log_add(-INF, -INF) == -INF
    assert log_add(0.0, 0.0) == pytest.approx(math.log(2), rel=1e-15)


@settings(max_examples=150, deadline=None)
@given(st.floats(min_value=-700.0, max_value=0.0, exclude_max=True))
def test_log1mexp_matches_mpmath(x):
    """log1mexp(x) = log(1 - e^x) to a few ulps for x in [-700, 0)."""
    assert close(log1mexp(x), mp_log1mexp(x), 8 * ULP)


@pytest.mark.parametrize(
    "x",
    [-1e-300, -5e-324, -1e-20, -1e-8, -math.log(2), math.nextafter(-math.log(2), 0.0),
     math.nextafter(-math.log(2), -INF), -1.0, -36.0, -100.0, -700.0],
)
def test_log1mexp_edge_points_match_mpmath(x):
    """log1mexp near 0 (log(-x)), at the log 2 switch, and deep in the tail (-e^x)."""
    assert close(log1mexp(x), mp_log1mexp(x), 8 * ULP)


def test_log1mexp_special_values():
    """log(1 - e^0) = log 0 = -inf; log(1 - e^-inf) = 0; x > 0 is the log of a negative: NaN."""
    assert log1mexp(0.0) == -INF
    assert log1mexp(-0.0) == -INF
    assert log1mexp(-INF) == 0.0
    assert math.isnan(log1mexp(1e-300))
    assert math.isnan(log1mexp(2.0))
    assert math.isnan(log1mexp(INF))
    # far below the subnormal range e^x underflows: log(1 - e^x) rounds to 0
    assert log1mexp(-800.0) == 0.0


def test_log1mexp_vectorised_without_warnings():
    """Arrays (including the -inf / NaN cases) are handled element-wise without warnings."""
    x = np.array([[-INF, -1.0], [0.0, 1.0]])
    with np.errstate(all="raise"):
        out = log1mexp(x)
    assert out.shape == (2, 2)
    assert out[0, 0] == 0.0
    assert out[0, 1] == pytest.approx(math.log(1 - math.exp(-1.0)), rel=1e-15)
    assert out[1, 0] == -INF
    assert math.isnan(out[1, 1])


@settings(max_examples=150, deadline=None)
@given(st.floats(min_value=0.0, max_value=700.0, exclude_min=True))
def test_log_expm1_matches_mpmath(x):
    """log_expm1(x) = log(e^x - 1) (relative error few ulps, absolute near the root x=log 2)."""
    assert close(log_expm1(x), mp_log_expm1(x), 8 * ULP, 4 * ULP)


@pytest.mark.parametrize("x", [5e-324, 1e-300, 1e-20, 1e-8, math.log(2), 29.9, 30.0, 30.1, 1e3,
                               1e15, 1e300])
def test_log_expm1_edge_points_match_mpmath(x):
    """log(e^x - 1) ~ log x for tiny x, ~ x for huge x, and continuous across the 30 switch."""
    assert close(log_expm1(x), mp_log_expm1(x), 8 * ULP, 4 * ULP)


def test_log_expm1_special_values():
    """log(e^0 - 1) = -inf, log(e^inf - 1) = inf, x < 0 is NaN (log of a negative)."""
    assert log_expm1(0.0) == -INF
    assert log_expm1(INF) == INF
    assert math.isnan(log_expm1(-1e-300))
    assert math.isnan(log_expm1(-INF))
    assert log_expm1(1000.0) == 1000.0


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=-700.0, max_value=-1e-300))
def test_log_expm1_and_log1mexp_are_consistent(x):
    """log(e^{-x} - 1) = log(1 - e^{x}) - x for x < 0."""
    assert log_expm1(-x) == pytest.approx(log1mexp(x) - x, rel=1e-13, abs=1e-13)


# ---------------------------------------------------------------------------------------------
# log_sub / log_sub_sign / logsumexp_signed
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.floats(-700, 700), st.floats(min_value=1e-14, max_value=1e4))
def test_log_sub_matches_mpmath(a, gap):
    """log_sub(a, b) = log(e^a - e^b) for b < a, including nearly equal arguments."""
    b = a - gap
    assume(b < a)
    exact = mpmath.mpf(a) + mp_log1mexp(mpmath.mpf(b) - mpmath.mpf(a))
    assert close(log_sub(a, b), exact, 8 * ULP, 8 * ULP)


def test_log_sub_special_values():
    """e^a - e^a = 0 -> -inf; e^a - 0 = e^a; a < b -> NaN; inf - finite = inf."""
    assert log_sub(2.0, 2.0) == -INF
    assert log_sub(-INF, -INF) == -INF
    assert log_sub(1.5, -INF) == 1.5
    assert log_sub(INF, 0.0) == INF
    assert math.isnan(log_sub(0.0, 1.0))
    assert math.isnan(log_sub(-INF, 0.0))
    assert log_sub(math.log(3), 0.0) == pytest.approx(math.log(2), rel=1e-15)


def test_log_sub_vectorised_broadcast():
    """log_sub broadcasts and keeps the a == b -> -inf rule element-wise."""
    a = np.array([[0.0], [1.0]])
    b = np.array([-INF, 0.0, 1.0])
    out = log_sub(a, b)
    assert out.shape == (2, 3)
    assert out[0, 0] == 0.0 and out[0, 1] == -INF and math.isnan(out[0, 2])
    assert out[1, 0] == 1.0 and out[1, 2] == -INF
    assert out[1, 1] == pytest.approx(math.log(math.e - 1), rel=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.floats(-700, 700), st.floats(-700, 700))
def test_log_sub_sign_matches_mpmath(a, b):
    """(sign, log|e^a - e^b|) with sign = sign(a - b)."""
    s, v = log_sub_sign(a, b)
    diff = mpmath.exp(mpmath.mpf(a)) - mpmath.exp(mpmath.mpf(b))
    if a == b:
        assert s == 0 and v == -INF
        return
    assert s == (1.0 if a > b else -1.0)
    hi, lo = max(a, b), min(a, b)
    exact = mpmath.mpf(hi) + mp_log1mexp(mpmath.mpf(lo) - mpmath.mpf(hi))
    assert close(v, exact, 8 * ULP, 8 * ULP)
    if abs(a - b) > 1e-3:  # no cancellation: the naive mpmath difference is accurate too
        assert close(v, mpmath.log(abs(diff)), 1e-12, 1e-12)


@pytest.mark.parametrize(
    ("a", "b", "sign", "value"),
    [
        (0.0, math.log(3), -1.0, math.log(2)),  # 1 - 3 = -2
        (math.log(3), 0.0, 1.0, math.log(2)),  # 3 - 1 = 2
        (1.0, 1.0, 0.0, -INF),  # equal: zero difference
        (-INF, -INF, 0.0, -INF),  # 0 - 0 = 0
        (-INF, 2.0, -1.0, 2.0),  # 0 - e^2
        (2.0, -INF, 1.0, 2.0),  # e^2 - 0
        (INF, 5.0, 1.0, INF),
        (5.0, INF, -1.0, INF),
        (INF, -INF, 1.0, INF),
        (-INF, INF, -1.0, INF),
    ],
)
def test_log_sub_sign_conventions(a, b, sign, value):
    """Sign in {-1, 0, +1} and value log|e^a - e^b|, including infinite arguments."""
    s, v = log_sub_sign(a, b)
    assert s == sign
    if math.isinf(value):
        assert v == value
    else:
        assert v == pytest.approx(value, rel=1e-15)


def test_log_sub_sign_both_plus_inf_is_consistent():
    """For a = b = +inf, sign and value must agree: (0, -inf) like log_sub, or (NaN, NaN)."""
    s, v = log_sub_sign(INF, INF)
    assert (s == 0 and v == -INF) or (math.isnan(s) and math.isnan(v))


def test_log_sub_sign_vectorised():
    """Arrays: every element gets its own sign and magnitude."""
    a = np.array([0.0, 1.0, 2.0, -INF])
    b = np.array([1.0, 1.0, 0.0, -INF])
    s, v = log_sub_sign(a, b)
    np.testing.assert_array_equal(s, [-1.0, 0.0, 1.0, 0.0])
    assert v[1] == -INF and v[3] == -INF
    assert v[0] == pytest.approx(math.log(math.e - 1), rel=1e-15)
    assert v[2] == pytest.approx(math.log(math.e**2 - 1), rel=1e-15)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-300, 300), st.floats(-10, 10)), min_size=1, max_size=8),
)
def test_logsumexp_signed_matches_mpmath(pairs):
    """(log|sum b_i e^{a_i}|, sign(sum)) against an exact mpmath sum."""
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    exact = mpmath.fsum(mpmath.mpf(bi) * mpmath.exp(mpmath.mpf(ai)) for ai, bi in pairs)
    scale = mpmath.fsum(abs(mpmath.mpf(bi)) * mpmath.exp(mpmath.mpf(ai)) for ai, bi in pairs)
    # only check well-conditioned sums (no catastrophic cancellation)
    assume(exact != 0 and abs(exact) > 1e-6 * scale)
    with np.errstate(over="ignore"):  # scipy warns (harmlessly) for subnormal weights b_i
        v, s = logsumexp_signed(a, b=b)
    assert s == (1.0 if exact > 0 else -1.0)
    assert close(v, mpmath.log(abs(exact)), 1e-12, 1e-12)


def test_logsumexp_signed_exact_cancellation_and_axis():
    """1 - 1 = 0 gives (-inf, 0); the axis argument reduces row by row."""
    v, s = logsumexp_signed([0.0, 0.0], b=[1.0, -1.0])
    assert v == -INF and s == 0.0
    v, s = logsumexp_signed(np.array([[0.0, 1.0], [2.0, 3.0]]), b=[[1.0, -1.0], [-1.0, 1.0]],
                            axis=1)
    np.testing.assert_allclose(v, [math.log(math.e - 1), math.log(math.e**3 - math.e**2)],
                               rtol=1e-14)
    np.testing.assert_array_equal(s, [-1.0, 1.0])


def _adversarial_exponents(rng, kind, n):
    if kind == "normal":
        return rng.normal(0, 1, n)
    if kind == "huge-range":
        return rng.uniform(-800, 800, n)
    if kind == "enormous":
        return rng.uniform(-1e300, 1e300, n)
    if kind == "minus-inf":
        return np.where(rng.random(n) < 0.4, -np.inf, rng.normal(0, 50, n))
    if kind == "subnormal":
        return rng.normal(0, 1, n) * 1e-310
    if kind == "near-overflow":
        return 1.7e308 - rng.uniform(0, 1e300, n)
    if kind == "underflowing-terms":
        return np.append(rng.uniform(-760, -700, n), 0.0)
    return np.array([rng.normal(0, 1e5)])  # one term


@pytest.mark.parametrize("kind", ["normal", "huge-range", "enormous", "minus-inf", "subnormal",
                                  "near-overflow", "underflowing-terms", "one-term"])
def test_logsumexp_signed_error_bound_adversarial(kind):
    """The NumPy log-sum-exp is within its stated error bound of a 200-bit mpmath sum on
    adversarial exponents: huge ranges, −inf entries, subnormal exponents, terms whose e^{a − M}
    underflow to subnormals or 0, values near the float limit."""
    rng = np.random.default_rng(sum(map(ord, kind)))
    with mpmath.workprec(200):
        for _ in range(150):
            n = int(rng.integers(1, 80))
            a = _adversarial_exponents(rng, kind, n)
            v, s = logsumexp_signed(a)
            fin = a[np.isfinite(a)]
            if fin.size == 0:
                assert v == -INF and s == 0.0
                continue
            top = mpmath.mpf(float(np.max(fin)))
            exact = top + mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(float(x)) - top)
                                                 for x in fin))
            assert s == 1.0
            assert abs(mpmath.mpf(float(v)) - exact) <= lse_error(fin.size, float(exact))


def test_logsumexp_signed_signed_cancellation_and_special_values():
    """Mixed signs: the error is relative to the largest term (as the docstring says), the sign
    is exact whenever the sum is not within that error of 0; special values as SciPy's."""
    rng = np.random.default_rng(7)
    with mpmath.workprec(200):
        for _ in range(300):
            n = int(rng.integers(2, 40))
            a = rng.normal(0, 3, n)
            b = rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 1.5, n)
            v, s = logsumexp_signed(a, b=b)
            exact = mpmath.fsum(mpmath.mpf(float(bi)) * mpmath.exp(mpmath.mpf(float(ai)))
                                for ai, bi in zip(a, b, strict=True))
            big = float(np.max(np.abs(b) * np.exp(a)))
            got = 0.0 if v == -INF else float(s) * math.exp(float(v))
            assert abs(got - exact) <= 16 * n * ULP * big
            if abs(exact) > 32 * n * ULP * big:
                assert s == (1.0 if exact > 0 else -1.0)
    assert logsumexp_signed([-INF, -INF]) == (-INF, 0.0)
    assert logsumexp_signed([INF, 0.0]) == (INF, 1.0)
    assert logsumexp_signed([1.0, 2.0], b=[-1.0, -1.0])[1] == -1.0
    v, s = logsumexp_signed([INF, INF], b=[1.0, -1.0])
    assert math.isnan(v) and math.isnan(s)
    assert math.isnan(logsumexp_signed([math.nan, 1.0])[0])
    assert logsumexp_signed(np.zeros(0)) == (-INF, 0.0)
    v, s = logsumexp_signed(np.zeros((2, 0)), axis=1)
    np.testing.assert_array_equal(v, [-INF, -INF])
    v, s = logsumexp_signed([0.0, 1.0], b=[0.0, 0.0])
    assert v == -INF and s == 0.0
    # subnormal weights keep their precision (folded into the exponents)
    v, _ = logsumexp_signed([0.0, 0.0], b=[5e-324, 1e-320])
    assert abs(v - math.log(5e-324 + 1e-320)) < 1e-12
    mat = rng.normal(size=(6, 5, 4))
    for axis in (0, 1, 2, -1):
        np.testing.assert_allclose(logsumexp_signed(mat, axis=axis)[0],
                                   special.logsumexp(mat, axis=axis), rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# log_comb
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_log_comb_small_n_matches_mpmath(data):
    """log C(n, k) to ~1e-13 for integer n <= 1000 (all k)."""
    n = data.draw(st.integers(0, 1000))
    k = data.draw(st.integers(0, n))
    exact = mp_log_comb(n, k)
    assert close(log_comb(n, k), exact, 5e-13, 5e-13)


def test_log_comb_exact_for_small_n_by_enumeration():
    """C(n, k) equals math.comb(n, k) for every 0 <= k <= n <= 60."""
    n = np.arange(61)[:, None]
    k = np.arange(61)[None, :]
    got = log_comb(n, k)
    for ni in range(61):
        for ki in range(61):
            if ki <= ni:
                exact = math.log(math.comb(ni, ki))
                assert got[ni, ki] == pytest.approx(exact, rel=1e-13, abs=1e-13)
            else:
                assert got[ni, ki] == -INF


def test_log_comb_where_scipy_binom_overflows():
    """C(1030, 515) ~ e^710.25 overflows float64, but its log is finite and exact."""
    assert math.isinf(special.binom(1030, 515))
    got = log_comb(1030, 515)
    assert math.isfinite(got)
    assert close(got, mp_log_comb(1030, 515), 1e-13)
    assert round(float(got), 6) == 710.246905  # same value as the docstring


@pytest.mark.parametrize(
    ("n", "k"),
    [
        (1e12, 1.0),
        (1e12, 2.0),
        (1e12, 12345.0),
        (1e12, 3e5),
        (1e12, 5e11),
        (1e12, 1e12 - 1),
        (1e12, 1e9),
        (1e7, 5.0),
        (1e6, 5e5),
        (1e6, 1000.0),
    ],
)
def test_log_comb_large_n_matches_mpmath(n, k):
    """log C(n, k) for n up to 1e12, where the textbook gammaln formula loses ~1e-5."""
    assert close(log_comb(n, k), mp_log_comb(n, k), 1e-12)


@pytest.mark.parametrize(
    ("n", "k"),
    [
        pytest.param(1e6, 1.0, id="n=1e6,k=1"),  # betaln: rel. error 1.7e-11
        pytest.param(1e6, 1e6 - 1, id="n=1e6,k=n-1"),  # betaln: 1.7e-11
        pytest.param(1e8, 165.0, id="n=1e8,k=165"),  # betaln: 8.4e-11
        pytest.param(1e10, 18798.0, id="n=1e10,k=18798"),  # betaln: 9.3e-11
        pytest.param(1e12, 1e6, id="n=1e12,k=1e6"),  # betaln: 6.7e-11 (abs 1e-3)
    ],
)
def test_log_comb_documented_accuracy_everywhere(n, k):
    """A few ulp of the result up to n = 1e12 (betaln was 1e-11..1e-10 here)."""
    assert close(log_comb(n, k), mp_log_comb(n, k), 2e-15)


def test_log_comb_conventions():
    """C(n, 0) = C(n, n) = 1; k < 0 or k > n gives log 0 = -inf; real n is allowed."""
    assert log_comb(1e12, 0) == 0.0
    assert log_comb(1e12, 1e12) == 0.0
    assert log_comb(0, 0) == 0.0
    assert log_comb(3, 4) == -INF
    assert log_comb(3, -1) == -INF
    assert log_comb(0, 1) == -INF
    # generalised coefficient: C(5.5, 2) = 5.5 * 4.5 / 2
    assert log_comb(5.5, 2) == pytest.approx(math.log(5.5 * 4.5 / 2), rel=1e-14)
    assert log_comb(5.5, 5.5) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**9), st.data())
def test_log_comb_pascal_and_symmetry(n, data):
    """C(n, k) = C(n, n-k) and C(n, k) = C(n-1, k-1) + C(n-1, k), up to n = 1e9."""
    k = data.draw(st.integers(1, n))
    assert log_comb(n, k) == pytest.approx(log_comb(n, n - k), rel=1e-12, abs=1e-12)
    rhs = log_add(log_comb(n - 1, k - 1), log_comb(n - 1, k))
    assert log_comb(n, k) == pytest.approx(rhs, rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# binomial and hypergeometric log-pmfs
# ---------------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 1000), st.floats(min_value=1e-12, max_value=1 - 1e-12), st.data())
def test_binomial_logpmf_matches_mpmath(n, p, data):
    """log P[Bin(n, p) = k] = log C(n, k) + k log p + (n - k) log(1 - p)."""
    k = data.draw(st.integers(0, n))
    mp_p = mpmath.mpf(p)
    terms = [mp_log_comb(n, k), k * mpmath.log(mp_p), (n - k) * mpmath.log1p(-mp_p)]
    exact = mpmath.fsum(terms)
    # the error is relative to the size of the terms that cancel, not to the result
    scale = mpmath.fsum(abs(t) for t in terms) + 1
    got = binomial_logpmf(k, n, p)
    assert abs(mpmath.mpf(float(got)) - exact) <= 1e-12 * scale
    assert got == pytest.approx(stats.binom.logpmf(k, n, p), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("n", [0, 1, 7, 50, 400])
@pytest.mark.parametrize("p", [1e-9, 0.01, 0.3, 0.5, 0.99])
def test_binomial_pmf_sums_to_one(n, p):
    """sum_k P[Bin(n, p) = k] = 1 (log-sum-exp over the support is 0)."""
    lp = binomial_logpmf(np.arange(n + 1), n, p)
    assert abs(special.logsumexp(lp)) < 1e-12
    np.testing.assert_allclose(np.exp(lp), stats.binom.pmf(np.arange(n + 1), n, p),
                               rtol=1e-9, atol=1e-300)


def test_binomial_pmf_small_cases_exact():
    """P[Bin(4, 1/2) = 2] = 6/16 and P[Bin(3, 1/4) = k] = C(3,k) 3^(3-k) / 64."""
    assert math.exp(binomial_logpmf(2, 4, 0.5)) == pytest.approx(0.375, rel=1e-14)
    got = np.exp(binomial_logpmf(np.arange(4), 3, 0.25))
    np.testing.assert_allclose(got, [27 / 64, 27 / 64, 9 / 64, 1 / 64], rtol=1e-14)


def test_binomial_logpmf_degenerate_p():
    """p = 0 is a point mass at 0 and p = 1 at n (0 log 0 = 0); other k get log 0 = -inf."""
    k = np.arange(-1, 6)
    np.testing.assert_array_equal(binomial_logpmf(k, 4, 0.0), [-INF, 0, -INF, -INF, -INF, -INF,
                                                                -INF])
    np.testing.assert_array_equal(binomial_logpmf(k, 4, 1.0), [-INF, -INF, -INF, -INF, -INF, 0,
                                                                -INF])
    assert binomial_logpmf(0, 0, 0.3) == 0.0


@pytest.mark.parametrize("k", [-1, -5, 11, 100])
def test_binomial_logpmf_outside_support(k):
    """k outside [0, n] is impossible: -inf."""
    assert binomial_logpmf(k, 10, 0.4) == -INF


@pytest.mark.parametrize("k", [0.0, 1e5, 5e5, 1e6, 2e6])
def test_binomial_logpmf_large_n(k):
    """n = 1e12 trials, p = 1e-6: the log-pmf matches mpmath to 1e-14 of its own size, although
    its three textbook terms are each about 1e7 and cancel (Loader's saddle-point form)."""
    n, p = 1e12, 1e-6
    mp_p = mpmath.mpf(p)
    terms = [mp_log_comb(n, k), k * mpmath.log(mp_p), (n - k) * mpmath.log1p(-mp_p)]
    exact = mpmath.fsum(terms)
    got = binomial_logpmf(k, n, p)
    assert abs(mpmath.mpf(float(got)) - exact) <= 1e-14 * max(1, abs(exact))


def brute_force_hypergeom(population: int, successes: int, draws: int) -> dict[int, Fraction]:
    """Exact pmf by enumerating all draws-subsets of range(population); items < successes are
    marked."""
    counts: dict[int, int] = {}
    subsets = list(itertools.combinations(range(population), draws))
    for subset in subsets:
        marked = sum(1 for item in subset if item < successes)
        counts[marked] = counts.get(marked, 0) + 1
    return {k: Fraction(c, len(subsets)) for k, c in counts.items()}


@pytest.mark.parametrize(
    ("population", "successes", "draws"),
    [(5, 1, 2), (6, 3, 3), (8, 2, 5), (8, 5, 6), (7, 0, 3), (7, 7, 4), (9, 4, 9), (9, 4, 0)],
)
def test_hypergeom_logpmf_matches_subset_enumeration(population, successes, draws):
    """The hypergeometric pmf equals the exact fraction of subsets with k marked items."""
    exact = brute_force_hypergeom(population, successes, draws)
    for k in range(-1, draws + 2):
        got = hypergeom_logpmf(k, population, successes, draws)
        if k in exact:
            assert math.exp(got) == pytest.approx(float(exact[k]), rel=1e-13)
        else:
            assert got == -INF


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 1000), st.data())
def test_hypergeom_logpmf_matches_mpmath_and_scipy(population, data):
    """log P[X = k] = log C(K, k) + log C(N-K, m-k) - log C(N, m), and agrees with scipy."""
    successes = data.draw(st.integers(0, population))
    draws = data.draw(st.integers(0, population))
    lo, hi = max(0, draws - (population - successes)), min(successes, draws)
    k = data.draw(st.integers(lo, hi))
    terms = [mp_log_comb(successes, k), mp_log_comb(population - successes, draws - k),
             -mp_log_comb(population, draws)]
    exact = mpmath.fsum(terms)
    scale = mpmath.fsum(abs(t) for t in terms) + 1
    got = hypergeom_logpmf(k, population, successes, draws)
    assert abs(mpmath.mpf(float(got)) - exact) <= 1e-12 * scale
    ref = stats.hypergeom.logpmf(k, population, successes, draws)
    assert got == pytest.approx(ref, rel=1e-8, abs=1e-8)


@pytest.mark.parametrize(("population", "successes", "draws"), [(20, 7, 9), (100, 1, 37),
                                                                 (500, 250, 250)])
def test_hypergeom_pmf_sums_to_one_and_outside_support(population, successes, draws):
    """The pmf sums to 1 over k, and k outside [max(0, m-(N-K)), min(K, m)] gives -inf."""
    k = np.arange(-2, draws + 3)
    lp = hypergeom_logpmf(k, population, successes, draws)
    assert abs(special.logsumexp(lp)) < 1e-12
    lo, hi = max(0, draws - (population - successes)), min(successes, draws)
    outside = (k < lo) | (k > hi)
    assert np.all(lp[outside] == -INF)
    assert np.all(np.isfinite(lp[~outside]))


# ---------------------------------------------------------------------------------------------
# Gaussian tails
# ---------------------------------------------------------------------------------------------


def test_log_norm_cdf_far_tail_is_finite():
    """log Phi(-40) ~ -804.608 stays finite where log(ndtr(-40)) = log(0) = -inf."""
    with np.errstate(divide="ignore"):
        assert np.log(special.ndtr(-40.0)) == -INF
    got = log_norm_cdf(-40.0)
    assert math.isfinite(got)
    assert close(got, mp_log_ncdf(-40.0), 1e-14)
    assert got == pytest.approx(-804.6084420137538, rel=1e-14)  # float(mp.log(mp.ncdf(-40)))


@pytest.mark.parametrize(
    "x", [-1e4, -1000.0, -200.0, -40.0, -38.5, -10.0, -1.0, -1e-8, 0.0, 1e-8, 0.5, 3.0, 8.0,
          20.0, 35.0],
)
def test_log_norm_cdf_and_sf_match_mpmath(x):
    """log Phi(x) and log(1 - Phi(x)) = log Phi(-x) against mpmath across both tails."""
    # atol: log Phi(x) ~ -Phi(-x) underflows to -0.0 beyond x ~ 38
    assert close(log_norm_cdf(x), mp_log_ncdf(x), 1e-12, 1e-300)
    assert close(log_norm_sf(x), mp_log_ncdf(-x), 1e-12, 1e-300)


@settings(max_examples=60, deadline=None)
@given(st.floats(-1e5, 1e5))
def test_log_norm_sf_is_reflected_cdf(x):
    """Symmetry of the normal law: 1 - Phi(x) = Phi(-x)."""
    assert log_norm_sf(x) == log_norm_cdf(-x)


def test_log_norm_tails_at_infinity_and_vectorised():
    """Phi(-inf) = 0, Phi(inf) = 1, and arrays keep their shape."""
    assert log_norm_cdf(-INF) == -INF
    assert log_norm_cdf(INF) == 0.0
    assert log_norm_sf(INF) == -INF
    assert log_norm_sf(-INF) == 0.0
    x = np.array([[-40.0, 0.0], [1.0, 40.0]])
    out = log_norm_cdf(x)
    assert out.shape == (2, 2)
    assert out[0, 1] == pytest.approx(math.log(0.5), rel=1e-15)


# ---------------------------------------------------------------------------------------------
# directed rounding
# ---------------------------------------------------------------------------------------------


def assert_smallest_float_at_or_above(result: float, exact: Fraction) -> None:
    """result >= exact and the float just below result is < exact."""
    if result == INF:
        assert exact > Fraction(FMAX)
        return
    assert math.isfinite(result)
    assert Fraction(result) >= exact
    below = math.nextafter(result, -INF)
    assert below == -INF or Fraction(below) < exact


@settings(max_examples=300, deadline=None)
@given(finite, positive)
def test_div_up_is_smallest_float_at_or_above_quotient(a, b):
    """div_up(a, b) = min{float q : q >= a / b} for finite a and b > 0."""
    exact = Fraction(a) / Fraction(b)
    assume(exact >= -Fraction(FMAX))  # negative overflow: see the dedicated test below
    assert_smallest_float_at_or_above(div_up(a, b), exact)


@settings(max_examples=300, deadline=None)
@given(finite, finite)
def test_mul_up_is_smallest_float_at_or_above_product(a, b):
    """mul_up(a, b) = min{float p : p >= a * b} for finite a, b."""
    exact = Fraction(a) * Fraction(b)
    assume(exact >= -Fraction(FMAX))  # negative overflow: see the dedicated test below
    assert_smallest_float_at_or_above(mul_up(a, b), exact)
    assert mul_up(a, b) == mul_up(b, a)


@settings(max_examples=100, deadline=None)
@given(st.integers(-(2**26), 2**26), st.integers(1, 2**26), st.integers(-60, 60))
def test_directed_rounding_returns_exact_results_unchanged(m, d, e):
    """When a*b or a/b is a float already, it is returned as is (no spurious bump)."""
    a = math.ldexp(float(m), e)
    b = float(d)
    assert mul_up(a, b) == a * b  # |m d| < 2^53: exact
    assert div_up(a * b, b) == a


@pytest.mark.parametrize(
    ("func", "a", "b", "expected"),
    [
        (div_up, 1.0, 4.0, 0.25),
        (div_up, 3.0, 1.5, 2.0),
        (div_up, 1.0, 3.0, math.nextafter(1 / 3, INF)),  # fl(1/3) < 1/3
        (div_up, 1.0, 10.0, 0.1),  # fl(0.1) = 0.1000000000000000055... > 1/10 already
        (div_up, 1e-300, 1e300, 5e-324),  # underflow rounds up to the least subnormal
        (div_up, -1e-300, 1e300, 0.0),  # -1e-600 rounds up to (-)0
        (div_up, 1e300, 1e-300, INF),  # positive overflow: inf is the only float >= 1e600
        (mul_up, 0.5, 0.5, 0.25),
        (mul_up, 0.1, 3.0, 0.30000000000000004),  # exact 0.3000000000000000166... rounds up
        (mul_up, 1e-200, 1e-200, 5e-324),
        (mul_up, 1e200, 1e200, INF),
    ],
)
def test_directed_rounding_examples(func, a, b, expected):
    """Worked examples of upward rounding, including underflow and overflow."""
    assert func(a, b) == expected


@pytest.mark.parametrize(
    ("func", "a", "b"),
    [
        pytest.param(mul_up, -1e200, 1e200, id="mul_up"),
        pytest.param(div_up, -1e300, 1e-300, id="div_up"),
    ],
)
def test_directed_rounding_negative_overflow_rounds_up(func, a, b):
    """A finite negative result beyond -FLOAT_MAX must round up to -FLOAT_MAX, not to -inf."""
    assert func(a, b) == -FMAX


def test_next_up():
    """next_up is one ulp up and leaves inf fixed."""
    assert next_up(1.0) == 1.0 + ULP
    assert next_up(0.0) == 5e-324
    assert next_up(-5e-324) == 0.0
    assert next_up(INF) == INF
    np.testing.assert_array_equal(next_up(np.array([-1.0, 2.0])),
                                  [math.nextafter(-1.0, INF), math.nextafter(2.0, INF)])


@pytest.mark.parametrize("log_v", [-745.0, -700.0, -1.0, 0.0, 3.0, 1e5])
@pytest.mark.parametrize("r", [0.0, 1e-15, 1e-6, 0.5])
def test_round_up_log_is_documented_upper_bound(log_v, r):
    """round_up_log(l, r) = l + 8 ULP (1 + |l|) + r >= log(e^l (1 + r)), strictly above l."""
    bumped = round_up_log(log_v, r)
    assert bumped == pytest.approx(log_v + 8 * ULP * (1 + abs(log_v)) + r, rel=1e-15, abs=1e-300)
    assert bumped > log_v
    assert mpmath.mpf(float(bumped)) >= mpmath.mpf(log_v) + mpmath.log1p(r)
    down = round_down_log(log_v)
    assert down == pytest.approx(log_v - 4 * ULP * (1 + abs(log_v)), rel=1e-15, abs=1e-300)
    assert down < log_v


def test_round_up_and_down_log_keep_infinities_and_shape():
    """log 0 = -inf stays exactly -inf (and +inf stays +inf); arrays keep their shape."""
    assert round_up_log(-INF) == -INF
    assert round_up_log(-INF, 0.5) == -INF
    assert round_up_log(INF) == INF
    assert round_down_log(-INF) == -INF
    assert round_down_log(INF) == INF
    out = round_up_log(np.array([[0.0, -INF], [1.0, 2.0]]), 0.25, ulps=0.0)
    np.testing.assert_array_equal(out, [[0.25, -INF], [1.25, 2.25]])
    out = round_down_log(np.array([0.0, -INF]), ulps=2.0)
    np.testing.assert_array_equal(out, [-2 * ULP, -INF])


# ---------------------------------------------------------------------------------------------
# bisect_threshold
# ---------------------------------------------------------------------------------------------


def test_bisect_threshold_scalar_sqrt2():
    """Smallest x with x^2 >= 2 on [0, 2]: feasible, scalar, within rtol of sqrt(2)."""
    x = bisect_threshold(lambda x, idx: x * x >= 2.0, 0.0, 2.0)
    assert np.ndim(x) == 0
    assert x * x >= 2.0
    assert 0 <= x - math.sqrt(2) <= 4 * ULP * x


def test_bisect_threshold_vectorised_square_root():
    """x^2 >= t for 400 targets from 1e-300 to 1e300: every answer feasible and within rtol."""
    t = np.logspace(-300, 300, 400)
    hi = np.maximum(1.0, np.sqrt(t) * 2.0)
    calls = []

    def feasible(x, idx):
        calls.append(len(idx))
        return x * x >= t[idx]

    x = bisect_threshold(feasible, 0.0, hi)
    assert x.shape == t.shape
    assert np.all(x * x >= t)
    exact = np.array([mpmath.sqrt(mpmath.mpf(ti)) for ti in t])
    rel = np.array([float((mpmath.mpf(xi) - e) / xi) for xi, e in zip(x, exact, strict=True)])
    assert np.all(rel <= 4 * ULP + ULP)
    assert np.all(rel >= -ULP)  # never more than rounding below the real root
    assert calls[0] == t.size and max(calls) == t.size  # the active set only shrinks


def test_bisect_threshold_shape_preserved_and_flat_indices():
    """2-D inputs keep their shape and idx are flat (C-order) indices into them."""
    t = np.arange(1.0, 13.0).reshape(3, 4)
    x = bisect_threshold(lambda x, idx: x >= t.ravel()[idx], 0.0, np.full((3, 4), 20.0),
                         rtol=0.0, atol=1e-9)
    assert x.shape == (3, 4)
    assert np.all(x >= t)
    assert np.all(x - t <= 1e-9)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 100.0), st.floats(1e-9, 1.0))
def test_bisect_threshold_atol(threshold, atol):
    """With rtol = 0 the answer is feasible and within atol of a step threshold."""
    x = bisect_threshold(lambda x, idx: x >= threshold, -1.0, 200.0, rtol=0.0, atol=atol)
    assert x >= threshold
    assert x - threshold <= atol


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.01, 99.99), min_size=1, max_size=8, unique=True),
    st.floats(1e-12, 1e-3),
)
def test_bisect_threshold_non_interval_region_returns_feasible_point(breaks, rtol):
    """Feasible set = union of alternating intervals: the answer is feasible and is within
    tolerance of one of the boundaries (a point where feasibility switches)."""
    b = np.sort(np.array(breaks))

    def feasible(x, idx):
        return np.searchsorted(b, x, side="right") % 2 == 1  # odd number of breaks <= x

    lo = 0.0  # infeasible: no break at or below 0
    # feasible regions are [b0, b1), [b2, b3), ...; hi = start of the last one (or 100)
    hi = 100.0 if len(b) % 2 == 1 else b[-2]
    assert feasible(np.array([hi]), None)[0] and not feasible(np.array([lo]), None)[0]
    x = float(bisect_threshold(feasible, lo, hi, rtol=rtol))
    assert feasible(np.array([x]), None)[0]
    assert lo < x <= hi
    assert np.min(np.abs(b - x)) <= rtol * x + 1e-12


def test_bisect_threshold_non_interval_example():
    """Feasible on [1, 2] and [3, inf): bisection from [0, 4] lands on a feasible boundary."""

    def feasible(x, idx):
        return ((x >= 1.0) & (x <= 2.0)) | (x >= 3.0)

    x = bisect_threshold(feasible, 0.0, 4.0)
    assert feasible(np.array([x]), None)[0]
    assert x == pytest.approx(1.0, rel=1e-14) or x == pytest.approx(3.0, rel=1e-14)


@settings(max_examples=80, deadline=None)
@given(st.floats(1e-6, 1e6), st.floats(1e-12, 1e-3), st.integers(2, 64))
def test_section_threshold_agrees_with_the_bisection(threshold, rtol, points):
    """A step threshold: the answer is feasible and within rtol of it, like the bisection's,
    with about log_points instead of log_2 rounds."""
    calls = []

    def feasible(x):
        calls.append(np.size(x))
        return np.asarray(x) >= threshold

    x = section_threshold(feasible, 0.0, 2 * threshold, rtol=rtol, points=points)
    assert x >= threshold and x - threshold <= rtol * x + 1e-300
    y = float(bisect_threshold(lambda v, idx: v >= threshold, 0.0, 2 * threshold, rtol=rtol))
    assert abs(x - y) <= 2 * rtol * y
    assert len(calls) <= math.ceil(math.log(2 / rtol) / math.log(points)) + 2
    assert max(calls) <= points - 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.01, 99.99), min_size=1, max_size=8, unique=True),
    st.floats(1e-12, 1e-3),
)
def test_section_threshold_non_interval_region_returns_feasible_point(breaks, rtol):
    """Feasible set a union of intervals: the answer is feasible and within tolerance of a
    boundary (the invariant feasible(hi) of the bisection)."""
    b = np.sort(np.array(breaks))

    def feasible(x):
        return np.searchsorted(b, x, side="right") % 2 == 1

    hi = 100.0 if len(b) % 2 == 1 else b[-2]
    x = section_threshold(feasible, 0.0, hi, rtol=rtol)
    assert feasible(np.array([x]))[0] and 0.0 < x <= hi
    assert np.min(np.abs(b - x)) <= rtol * x + 1e-12


def test_section_threshold_degenerate_brackets():
    """lo == hi and a bracket a few floats wide return hi; nothing feasible inside keeps hi."""
    never = lambda x: np.zeros(np.shape(x), dtype=bool)  # noqa: E731
    assert section_threshold(never, 1.0, 1.0) == 1.0
    hi = 1.0 + 4 * ULP
    assert section_threshold(never, 1.0, hi, rtol=0.0) == hi
    assert section_threshold(never, 0.0, 3.0, rtol=1e-9) == 3.0
    # threshold at the lower end: converges onto it from above
    x = section_threshold(lambda v: v >= 0.0, -1.0, 1.0, rtol=0.0)
    assert 0.0 <= x <= 1e-300 or x == 0.0


def test_bisect_threshold_degenerate_brackets():
    """lo == hi returns hi without calling feasible; hi = inf stays inf; threshold at 0."""

    def never_called(x, idx):
        raise AssertionError("feasible should not be called")

    assert bisect_threshold(never_called, 1.5, 1.5) == 1.5
    assert bisect_threshold(never_called, 0.0, INF) == INF
    x = bisect_threshold(lambda x, idx: x >= 0.0, -1.0, 0.0)  # interval narrows to 0
    assert x == 0.0


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_bisect_threshold_wide_bracket():
    """x >= 0 on [-1e308, 1e308]: the answer must be within tolerance of 0."""
    x = bisect_threshold(lambda x, idx: x >= 0.0, -1e308, 1e308, rtol=0.0, atol=1e-6)
    assert 0.0 <= x <= 1e-6


# ---------------------------------------------------------------------------------------------
# the ε-map (one implementation for subsampling and mixing): never on the wrong side of mpmath
# ---------------------------------------------------------------------------------------------

_MAP_ETAS = [1e-300, 1e-200, 1e-20, 1e-9, 0.01, 0.3, 0.5, 0.999999, 1.0 - 2 ** -53]
_MAP_EPS = [5e-324, 1e-310, 1e-300, 1e-20, 1e-10, 1e-3, 0.5, 0.5413248546129181, 1.0, 10.0,
            100.0, 699.9, 700.0, 700.5, 701.0, 709.7, 710.0, 1000.0, 1e5, 1e300]


def _mp_map(x: float, log_eta, inverse: bool):
    with mpmath.workdps(80):
        eta = mpmath.exp(mpmath.mpf(log_eta))
        em1 = mpmath.expm1(mpmath.mpf(x))
        return mpmath.log1p(em1 / eta if inverse else eta * em1)


@pytest.mark.parametrize("inverse", [False, True])
def test_eps_map_brackets_mpmath(inverse):
    """amplify_eps/deamplify_eps rounded up are never below the exact value, rounded down never
    above it, and both are within 1e-12 relative where the value is a normal float and the
    arguments are not extreme."""
    from privamp._numerics import TINY, amplify_eps, deamplify_eps

    func = deamplify_eps if inverse else amplify_eps
    for eta in _MAP_ETAS:
        x = np.array(_MAP_EPS)
        up = np.atleast_1d(func(x, eta, up=True))
        lo = np.atleast_1d(func(x, eta, up=False))
        for xi, u, lw in zip(x, up, lo, strict=True):
            exact = _mp_map(float(xi), mpmath.log(mpmath.mpf(eta)), inverse)
            assert u >= exact, (eta, xi, u, exact)
            assert lw <= exact, (eta, xi, lw, exact)
            if TINY * 4 < exact < 1e300 and eta >= 1e-20 and xi <= 690:  # not extreme
                assert u - lw <= 1e-13 * float(exact), (eta, xi, u, lw)


@pytest.mark.parametrize("inverse", [False, True])
def test_eps_map_from_log_eta_brackets_mpmath(inverse):
    """With η given by its logarithm (a δ below the float range), same brackets."""
    from privamp._numerics import amplify_eps, deamplify_eps

    func = deamplify_eps if inverse else amplify_eps
    for log_eta in (-1000.0, -745.0, -700.0, -30.0, -1e-3, -1e-17):
        x = np.array(_MAP_EPS)
        up = np.atleast_1d(func(x, log_eta=log_eta, up=True))
        lo = np.atleast_1d(func(x, log_eta=log_eta, up=False))
        for xi, u, lw in zip(x, up, lo, strict=True):
            exact = _mp_map(float(xi), log_eta, inverse)
            assert lw <= exact <= u, (log_eta, xi, lw, exact, u)


def test_eps_map_boundaries():
    """η = 0, η = 1, ε = 0 and ε = ∞ are exact; the map stays in [0, ε], the inverse ≥ ε'."""
    from privamp._numerics import amplify_eps, deamplify_eps

    for up in (True, False):
        assert amplify_eps(0.0, 0.3, up=up) == 0.0
        assert amplify_eps(2.0, 0.0, up=up) == 0.0
        assert amplify_eps(math.inf, 0.0, up=up) == 0.0
        assert amplify_eps(math.inf, 0.3, up=up) == math.inf
        assert amplify_eps(2.0, 1.0, up=up) == 2.0
        assert deamplify_eps(0.0, 0.3, up=up) == 0.0
        assert deamplify_eps(2.0, 0.0, up=up) == math.inf
        assert deamplify_eps(0.0, 0.0, up=up) == math.inf
        assert deamplify_eps(math.inf, 0.3, up=up) == math.inf
        assert deamplify_eps(2.0, 1.0, up=up) == 2.0
    x = np.array(_MAP_EPS)
    for eta in _MAP_ETAS:
        assert np.all(amplify_eps(x, eta) <= x)
        assert np.all(deamplify_eps(x, eta) >= x)
