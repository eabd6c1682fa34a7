"""Privacy profiles: closed forms vs mpmath, inversion, ε < 0, group privacy, tabulated data."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from privamp import (
    ApproxDPProfile,
    BlackBoxGroupProfile,
    GaussianProfile,
    LaplaceProfile,
    PrivacyProfile,
    RandomizedResponseProfile,
    TabulatedProfile,
    UnsupportedCombinationError,
    ZeroProfile,
)
from privamp.divergences import hockey_stick, hockey_stick_density
from privamp.errors import InvalidParameterError

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 80


def mp_gauss_delta(theta, eps):
    """Theorem 4 in 80-digit arithmetic."""
    th, e = mp.mpf(theta), mp.mpf(eps)
    return mp.ncdf(th / 2 - e / th) - mp.exp(e) * mp.ncdf(-th / 2 - e / th)


def mp_laplace_delta(theta, eps):
    """Theorem 3 in 80-digit arithmetic."""
    val = 1 - mp.exp((mp.mpf(eps) - mp.mpf(theta)) / 2)
    return val if val > 0 else mp.mpf(0)


# ---------------------------------------------------------------------------------------------
# Gaussian (Theorem 4) and Laplace (Theorem 3) against mpmath at extreme parameters
# ---------------------------------------------------------------------------------------------

GAUSS_THETAS = [1e-3, 3e-3, 0.01, 0.05, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0]
EPS_GRID = [0.0, 1e-6, 1e-3, 0.1, 0.5, 1.0, 2.0, 4.5, 10.0, 20.0, 40.0, 60.0]


@pytest.mark.parametrize("theta", GAUSS_THETAS)
def test_gaussian_log_delta_is_a_tight_upper_bound(theta):
    """log δ(ε) ≥ the exact value, and within 1e-11 relative in log (ε up to 60)."""
    prof = GaussianProfile(theta)
    computed = prof.log_delta(EPS_GRID)
    for eps, c in zip(EPS_GRID, computed, strict=True):
        exact = mp_gauss_delta(theta, eps)
        assert exact > 0
        lx = float(mp.log(exact))
        assert c >= lx, (theta, eps, c, lx)
        assert c - lx <= 1e-11 * (1 + abs(lx)), (theta, eps, c - lx)


@pytest.mark.parametrize("theta", GAUSS_THETAS)
def test_gaussian_delta_matches_log_delta(theta):
    """delta = exp(log_delta), including values that underflow to exactly 0."""
    prof = GaussianProfile(theta)
    d = prof.delta(EPS_GRID)
    ld = prof.log_delta(EPS_GRID)
    np.testing.assert_allclose(d, np.exp(ld), rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    ("theta", "eps", "expected"),
    [
        # catalogue §3.8, checked by quadrature and mpmath (mp_gauss_delta reproduces them)
        (1.0, 0.0, 0.38292492254803), (1.0, 0.5, 0.23842170813488),
        (1.0, 1.0, 0.12693673750664), (1.0, 3.0, 0.00153718536940),
        (2.0, 0.0, 0.68268949213709), (2.0, 1.0, 0.50986166005467),
        (2.0, 3.0, 0.18381307654447), (0.5, 0.0, 0.19741265136585),
        (0.5, 0.5, 0.05244032328767), (0.5, 1.0, 0.00682959498311),
        (0.5, 3.0, 3.4009117356735e-10), (0.5, 10.0, 9.85512061085017e-89),
        (1.0, 20.0, 2.6647067053655e-86),
    ],
)
def test_gaussian_catalogue_values(theta, eps, expected):
    """Theorem 4 values from the checked catalogue."""
    assert float(GaussianProfile(theta).delta(eps)) == pytest.approx(expected, rel=1e-11)


def test_gaussian_profile_far_below_double_range():
    """δ = 1.27e-73 at θ = 0.25, ε = 4.5 is right; log δ is finite where δ underflows."""
    prof = GaussianProfile(0.25)
    assert math.exp(float(prof.log_delta(4.5))) == pytest.approx(1.2659e-73, rel=1e-4)
    exact = float(mp.log(mp_gauss_delta(0.25, 4.5)))
    assert float(prof.log_delta(4.5)) == pytest.approx(exact, rel=1e-13)
    # θ = 0.1, ε = 60: δ ≈ exp(−180000), far below the smallest double
    deep = float(prof.__class__(0.1).log_delta(60.0))
    assert deep == pytest.approx(float(mp.log(mp_gauss_delta(0.1, 60.0))), rel=1e-12)
    assert float(GaussianProfile(0.1).delta(60.0)) == 0.0


def test_gaussian_limits():
    """θ → 0 gives δ → 0 (and θ = 0 is exactly 0); θ → ∞ gives δ → 1; δ(∞) = 0."""
    assert float(GaussianProfile(0.0).delta(0.0)) == 0.0
    assert float(GaussianProfile(1e-9).delta(0.0)) == pytest.approx(1e-9 / math.sqrt(2 * math.pi),
                                                                     rel=1e-6)
    assert float(GaussianProfile(200.0).delta(1.0)) == pytest.approx(1.0, abs=1e-12)
    assert float(GaussianProfile(1.0).log_delta(math.inf)) == -math.inf


def mp_gauss_log_delta_small_theta(theta, eps):
    """log δ(ε) for ε > 0 without cancellation: δ = E[(1 − e^{ε−L})_+] with L ~ N(θ²/2, θ²)
    (Theorem 5), integrated over l = ε + (θ²/ε)u, where the integrand is positive and of width
    O(1) in u (mpmath exponents have no range limit)."""
    th, e = mp.mpf(theta), mp.mpf(eps)
    h = th * th / e

    def integrand(u):
        z = (e + h * u - th * th / 2) / th
        return -mp.expm1(-h * u) * mp.npdf(z) / th

    return mp.log(h * mp.quad(integrand, [0, 1, 10, 60, mp.inf]))


@pytest.mark.parametrize("theta", [1e-20, 1e-100, 1e-154, 7e-155, 3e-162, 1e-300, 5e-324])
def test_gaussian_tiny_theta_stays_an_upper_bound(theta):
    """θ far below 1 (a diffusion mechanism at large t): no NaN where ε/θ or a² overflow,
    δ(0) = erf(θ/(2√2)) rather than the cancelled ½, and a log δ below the float range is the
    most negative float, never −inf (which would certify (ε, 0)-DP)."""
    prof = GaussianProfile(theta)
    eps = np.array([0.0, 1e-6, 1.5, 30.0, 1e300])
    ld = prof.log_delta(eps)
    assert not np.any(np.isnan(ld)) and np.all(ld > -np.inf)
    exact0 = float(mp.log(mp.erf(mp.mpf(theta) / (2 * mp.sqrt(2)))))
    assert ld[0] >= exact0
    # a subnormal θ is raised to the smallest normal float (θ/2 would lose its last bits)
    floor0 = float(mp.log(mp.erf(mp.mpf(2.2250738585072014e-308) / (2 * mp.sqrt(2)))))
    assert ld[0] <= max(exact0, floor0) + 1e-11 * abs(exact0)
    for e, got in zip(eps[1:], ld[1:], strict=True):
        exact = mp_gauss_log_delta_small_theta(theta, e)
        if exact > -1.7e308:
            assert got >= exact and got <= exact * (1 - 1e-11), (theta, e, got, exact)
        else:
            assert got == -np.finfo(float).max
    assert not prof.is_dp(1.5, 0.0) and not prof.is_dp(1e300, 0.0)
    assert not GaussianProfile(1.0).is_dp(1e300, 0.0)


def mp_log_ndtr(x):
    """log Φ(x) in mpmath, for x ≤ −1e5 by the asymptotic series (mpmath's erfc fails far out):
    −x²/2 − log(|x|√(2π)) + log(1 − x⁻² + 3x⁻⁴ − 15x⁻⁶), truncation below 105 x⁻⁸ < 1e-38."""
    if x > -1e5:
        return mp.log(mp.ncdf(x))
    w = 1 / (x * x)
    return -x * x / 2 - mp.log(-x * mp.sqrt(2 * mp.pi)) + mp.log1p(-w + 3 * w * w - 15 * w**3)


def test_gaussian_ceiling_log_phi_is_an_upper_bound():
    """The region-a ceiling log Φ(a) of the Gaussian bounds, formed from the erfcx(−a/√2) they
    have already (``_log_phi_neg_upper``), is above mpmath's log Φ(a + da) for a from −1e-3
    to beyond where a²/2 overflows (about −1.9e154; −inf there, below the float range), with
    and without an argument error da, and within 1e-13 relative of it."""
    from privamp import _special
    from privamp.mechanisms.gaussian import _log_phi_neg_upper

    a = -np.concatenate([np.logspace(-3, 154.3, 400), np.linspace(1.2e154, 1.95e154, 60),
                         [1.8960e154, 1.8970e154, 2.6e154, 1e300]])
    u = -a / math.sqrt(2.0)
    eu = _special.erfcx(u)
    for da in (np.zeros(a.size), 2.5 * 2.0**-52 * np.abs(a)):
        got = _log_phi_neg_upper(a, eu, da)
        for ai, di, gi in zip(a.tolist(), da.tolist(), got.tolist(), strict=True):
            exact_mp = mp_log_ndtr(mp.mpf(ai) + mp.mpf(di))
            if exact_mp < -1.7976931348623157e308:
                assert gi == -math.inf or gi >= exact_mp  # below the float range
                continue
            exact = float(exact_mp)
            assert gi >= exact, (ai, di, gi, exact)
            assert gi <= exact + 1e-13 * (1 + abs(exact)) + (abs(ai) + 2) * di * 2, (ai, gi)


@pytest.mark.parametrize("theta", [1e-3, 0.01, 0.3, 1.0, 2.0, 10.0, 50.0])
def test_laplace_against_mpmath(theta):
    """Theorem 3, upper bound within 1e-13 relative, including ε just below θ."""
    prof = LaplaceProfile(theta)
    grid = [0.0, theta * 0.1, theta * 0.5, theta * (1 - 1e-9), theta * (1 - 1e-15)]
    for eps in grid:
        exact = mp_laplace_delta(theta, eps)
        c = float(prof.delta(eps))
        if exact == 0:
            assert c == 0.0
            continue
        assert c >= float(exact) * (1 - 1e-16)
        assert c <= float(exact) * (1 + 1e-13)


@pytest.mark.parametrize(
    ("eps", "expected"),
    [(0.0, 0.39346934028737), (0.5, 0.22119921692860), (0.99, 0.00498752080732),
     (1.0, 0.0), (3.0, 0.0)],
)
def test_laplace_catalogue_values(eps, expected):
    """Theorem 3 values at θ = 1 (catalogue §3.8)."""
    assert float(LaplaceProfile(1.0).delta(eps)) == pytest.approx(expected, rel=1e-12, abs=0)


def test_laplace_pure_dp_boundary():
    """Laplace is (Δ/b, 0)-DP and not (Δ/b − 1e-9, 0)-DP."""
    prof = LaplaceProfile(1.0)
    assert prof.is_dp(1.0, 0.0)
    assert not prof.is_dp(1.0 - 1e-9, 0.0)
    assert prof.pure_epsilon == 1.0
    assert prof.epsilon(0.0) == 1.0


# ---------------------------------------------------------------------------------------------
# ε(δ): safe inversion
# ---------------------------------------------------------------------------------------------

PROFILES = [GaussianProfile(0.3), GaussianProfile(1.0), GaussianProfile(8.0),
            LaplaceProfile(0.7), RandomizedResponseProfile(0.9), ApproxDPProfile(1.0, 1e-6)]
DELTAS = [1e-300, 1e-100, 1e-20, 1e-12, 1e-8, 1e-5, 1e-3, 0.05, 0.3, 0.9]


@pytest.mark.parametrize("prof", PROFILES, ids=repr)
def test_epsilon_is_feasible_and_minimal(prof):
    """δ(ε(δ)) ≤ δ (never below the truth) and slightly smaller ε is infeasible."""
    eps = prof.epsilon(DELTAS)
    for d, e in zip(DELTAS, eps, strict=True):
        if e == 0:
            assert prof.total_variation <= d
            continue
        if math.isinf(e):
            assert float(prof.log_delta(1e6)) > math.log(d)
            continue
        assert float(prof.log_delta(e)) <= math.log(d)
        smaller = e * (1 - 1e-12) - 1e-300
        assert float(prof.log_delta(smaller)) > math.log(d) - 1e-12 * abs(math.log(d))


@pytest.mark.parametrize("theta", [0.05, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-10, 1e-50])
def test_gaussian_epsilon_never_below_mpmath_root(theta, delta):
    """ε(δ) ≥ the exact root of Theorem 4 and within 1e-9 of it."""
    e_hat = float(GaussianProfile(theta).epsilon(delta))
    mp.mp.dps = 60
    root = mp.findroot(lambda e: mp.log(mp_gauss_delta(theta, e)) - mp.log(delta), e_hat)
    assert e_hat >= float(root) - 1e-15
    assert e_hat - float(root) <= 1e-9 * (1 + float(root))


def test_epsilon_edge_cases():
    """δ ≥ δ(0) → 0; δ = 0 → pure ε (inf for the Gaussian); plateaus invert exactly."""
    g = GaussianProfile(1.0)
    assert g.epsilon(1.0) == 0.0
    assert g.epsilon(g.total_variation) == 0.0
    assert g.epsilon(0.0) == math.inf
    assert LaplaceProfile(2.0).epsilon(0.0) == 2.0
    a = ApproxDPProfile(1.0, 1e-5)
    assert a.epsilon(1e-5) == 1.0
    assert a.epsilon(9.99e-6) == math.inf  # the plateau is never left
    assert a.is_dp(1.0, 1e-5) and not a.is_dp(1.0, 9.9e-6) and not a.is_dp(0.99, 1e-5)
    assert ZeroProfile().epsilon(0.0) == 0.0


def test_epsilon_vectorised_shapes():
    """epsilon keeps the shape of its input; scalars give floats."""
    g = GaussianProfile(1.0)
    out = g.epsilon(np.array([[1e-3, 1e-5], [1e-7, 0.5]]))
    assert out.shape == (2, 2)
    assert isinstance(g.epsilon(1e-5), float)
    assert out[0, 1] == g.epsilon(1e-5)


def test_epsilon_roundtrip_never_below():
    """ε(δ(ε)) ≥ ε where δ is strictly decreasing; on a plateau it is the plateau's start."""
    for prof in PROFILES:
        eps = np.linspace(0.0, 6.0, 61)
        d = prof.delta(eps)
        back = prof.epsilon(d)
        start = prof.plateau[0] if prof.plateau is not None else math.inf
        decreasing = (eps < start) & (d < prof.total_variation)
        assert np.all(back[decreasing] >= eps[decreasing] - 1e-9 * (1 + eps[decreasing])), prof
        assert np.all(back[eps >= start] == start), prof


# ---------------------------------------------------------------------------------------------
# symmetric extension to ε < 0 (needed by Theorem 14; catalogue erratum E3)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("eps", [-3.0, -1.0, -0.2, -1e-8])
def test_gaussian_extension_matches_direct_divergence(theta, eps):
    """δ(ε) for ε < 0 equals ∫[p − e^ε q]_+ for the Gaussian pair (the α < 1 divergence)."""
    direct = hockey_stick_density(stats.norm(0, 1).logpdf, stats.norm(theta, 1).logpdf, eps,
                                  log_density=True, lower=-60, upper=60 + theta)
    ext = float(GaussianProfile(theta).delta_extended(eps))
    assert ext == pytest.approx(float(direct.value), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("p", [0.5, 0.6, 0.9, 0.3])
def test_rr_extension_matches_discrete_divergence(p):
    """ψ extended to ε < 0 equals max over both orders of Σ[p − e^ε q]_+."""
    a, b = [p, 1 - p], [1 - p, p]
    prof = RandomizedResponseProfile(p)
    for eps in [-2.0, -0.5, -1e-3, 0.0, 0.5]:
        direct = max(hockey_stick(a, b, eps), hockey_stick(b, a, eps))
        assert float(prof.delta_extended(eps)) == pytest.approx(direct, rel=1e-12, abs=1e-15)


def test_extension_bounds_and_limits():
    """max(0, 1 − e^ε) ≤ δ_ext ≤ 1; δ_ext(−∞) = 1; continuous at 0."""
    for prof in PROFILES:
        eps = np.array([-50.0, -5.0, -1.0, -1e-3, -1e-12])
        ext = prof.delta_extended(eps)
        assert np.all(ext <= 1.0 + 1e-15)
        assert np.all(ext >= -np.expm1(eps) - 1e-12)
        assert float(prof.delta_extended(-math.inf)) == 1.0
        assert float(prof.delta_extended(-1e-14)) == pytest.approx(prof.total_variation,
                                                                   abs=1e-12)


# ---------------------------------------------------------------------------------------------
# group privacy
# ---------------------------------------------------------------------------------------------


def vadhan(profile, k, eps):
    """The black-box bound (e^ε − 1)/(e^{ε/k} − 1) δ(ε/k), computed directly."""
    if eps == 0:
        return min(1.0, k * float(profile.delta(0.0)))
    return min(1.0, math.expm1(eps) / math.expm1(eps / k) * float(profile.delta(eps / k)))


@pytest.mark.parametrize(
    ("profile", "white", "black"),
    [
        # catalogue §3.9, θ = 0.5, k = 3, ε = 1
        (LaplaceProfile(0.5), 0.22119922, 0.34727481),
        (GaussianProfile(0.5), 0.32039191, 0.38102983),
    ],
    ids=["laplace", "gaussian"],
)
def test_group_catalogue_values(profile, white, black):
    """White-box and black-box group profiles at θ = 0.5, k = 3, ε = 1."""
    assert float(profile.group(3).delta(1.0)) == pytest.approx(white, abs=5e-9)
    assert float(profile.group(3, "black-box").delta(1.0)) == pytest.approx(black, abs=5e-9)


@pytest.mark.parametrize("cls", [GaussianProfile, LaplaceProfile])
@pytest.mark.parametrize("theta", [0.1, 0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_white_box_below_black_box_equals_vadhan(cls, theta, k):
    """white ≤ black, and black equals Vadhan's formula (monotone for these profiles)."""
    base = cls(theta)
    white, black = base.group(k), base.group(k, "black-box")
    for eps in np.linspace(0.0, 10.0, 41):
        w, b = float(white.delta(eps)), float(black.delta(eps))
        assert w <= b + 1e-15
        # abs: where fl(ε/k) = θ but the exact ε/k is below θ (ε = 0.5, k = 5, θ = 0.1) the
        # exact formula is positive (~1e-16) and the black-box profile says so; the float
        # reference here rounds it to 0
        assert b == pytest.approx(vadhan(base, k, eps), rel=1e-12, abs=1e-15)


def test_white_box_group_is_exact_sensitivity_scaling():
    """Gaussian/Laplace white-box δ_k is the profile with kθ; RR's is itself."""
    assert float(GaussianProfile(0.5).group(4).delta(1.0)) == float(GaussianProfile(2.0)
                                                                     .delta(1.0))
    assert float(LaplaceProfile(0.5).group(4).delta(1.0)) == float(LaplaceProfile(2.0)
                                                                    .delta(1.0))
    rr = RandomizedResponseProfile(0.8)
    assert rr.group(7) is rr
    assert rr.group(1) is rr


def test_black_box_is_monotone_where_vadhan_is_not():
    """For an (ε₀, δ₀)-DP profile Vadhan's bound grows on the plateau; the group profile
    takes the running minimum, stays valid (≤ Vadhan) and non-increasing."""
    base = ApproxDPProfile(1.0, 1e-4)
    grp = base.group(3)
    assert isinstance(grp, BlackBoxGroupProfile)
    eps = np.linspace(0.0, 20.0, 2001)
    vals = grp.delta(eps)
    assert np.all(np.diff(vals) <= 1e-15)
    direct = np.array([vadhan(base, 3, e) for e in eps])
    assert np.all(vals <= direct * (1 + 1e-12) + 1e-300)
    assert direct[-1] > 10 * vals[-1]  # Vadhan alone would be far looser at ε = 20


class _CountProfile(PrivacyProfile):
    """Exact profile of a truncated discrete-Laplace count mechanism, by enumeration."""

    def __init__(self, scale, n_counts, distance=1):
        z = np.arange(-30, n_counts + 31)
        self.laws = [np.exp(-np.abs(z - c) / scale) for c in range(n_counts + 1)]
        self.laws = [w / w.sum() for w in self.laws]
        self.distance = distance

    def _log_delta(self, eps):
        best = np.zeros(eps.shape)
        for c in range(len(self.laws) - self.distance):
            a, b = self.laws[c], self.laws[c + self.distance]
            best = np.maximum(best, hockey_stick(a, b, eps))
            best = np.maximum(best, hockey_stick(b, a, eps))
        with np.errstate(divide="ignore"):
            return np.log(best)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_black_box_bound_is_valid_by_enumeration(k):
    """Black-box δ_k ≥ the exact δ_k of a count mechanism (counts change by k for k records)."""
    base = _CountProfile(scale=1.5, n_counts=8)
    exact_k = _CountProfile(scale=1.5, n_counts=8, distance=k)
    black = base.group(k)
    for eps in [0.0, 0.3, 1.0, 2.0, 3.0]:
        assert float(black.delta(eps)) >= float(exact_k.delta(eps)) - 1e-12


def test_group_validation():
    """k must be a positive integer; white-box where unknown is an explicit error."""
    g = GaussianProfile(1.0)
    with pytest.raises(InvalidParameterError, match="k must be an integer"):
        g.group(0)
    with pytest.raises(InvalidParameterError):
        g.group(2.5)
    tab = TabulatedProfile([0.0, 1.0], [0.5, 0.1])
    with pytest.raises(UnsupportedCombinationError, match="white-box"):
        tab.group(2, "white-box")
    assert isinstance(tab.group(2), BlackBoxGroupProfile)
    with pytest.raises(InvalidParameterError, match="group_privacy"):
        g.group(2, "grey-box")
    # black-box of a black-box composes group sizes
    assert g.group(2, "black-box").group(3).k == 6


# ---------------------------------------------------------------------------------------------
# tabulated profiles
# ---------------------------------------------------------------------------------------------


def test_tabulated_interpolation_is_pessimistic():
    """Chords in α = e^ε of exact values lie above a convex-in-α profile, below the step."""
    truth = GaussianProfile(1.0)
    nodes = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 5.0])
    tab = TabulatedProfile(nodes, truth.delta(nodes))
    fine = np.linspace(0.0, 8.0, 801)
    t, g = tab.delta(fine), truth.delta(fine)
    assert np.all(t >= g)
    idx = np.searchsorted(nodes, fine, side="right") - 1
    # at most the step function, up to the rounding margin (8 ulp of |log δ|)
    assert np.all(t <= truth.delta(nodes)[idx] * (1 + 1e-13))
    np.testing.assert_allclose(tab.delta(nodes), truth.delta(nodes), rtol=1e-13)


def test_tabulated_before_first_node_uses_slope_bound():
    """Below the first node: min(1, δ₀ + e^{ε₀} − e^ε), which bounds any profile."""
    truth = LaplaceProfile(2.0)
    tab = TabulatedProfile([0.5, 1.0, 2.0], truth.delta([0.5, 1.0, 2.0]))
    for eps in [0.0, 0.2, 0.4]:
        expected = min(1.0, float(truth.delta(0.5)) + math.exp(0.5) - math.exp(eps))
        assert float(tab.delta(eps)) == pytest.approx(expected, rel=1e-14)
        assert float(tab.delta(eps)) >= float(truth.delta(eps))


def test_tabulated_plateau_pure_and_running_min():
    """Non-monotone data are replaced by their running minimum; plateau and pure ε."""
    tab = TabulatedProfile([0.0, 1.0, 2.0, 3.0], [0.5, 0.2, 0.3, 0.0])
    np.testing.assert_array_equal(tab.deltas, [0.5, 0.2, 0.2, 0.0])
    assert tab.pure_epsilon == 3.0 and tab.plateau == (3.0, 0.0)
    assert float(tab.delta(10.0)) == 0.0
    plateau = TabulatedProfile([0.0, 1.0, 2.0], [0.5, 1e-6, 1e-6])
    assert plateau.plateau == (1.0, 1e-6)
    assert plateau.epsilon(1e-6) == 1.0
    assert plateau.epsilon(1e-7) == math.inf


@pytest.mark.parametrize(
    ("eps", "delta", "match"),
    [
        ([0.0, 0.0], [0.5, 0.4], "strictly increasing"),
        ([0.0, 1.0], [0.5], "same length"),
        ([0.0, 1.0], [0.5, 1.5], r"\[0, 1\]"),
        ([-1.0, 1.0], [0.5, 0.1], "eps"),
        ([0.0, math.inf], [0.5, 0.1], "eps"),
        ([0.0, 1.0], [0.5, math.nan], "NaN"),
    ],
)
def test_tabulated_validation(eps, delta, match):
    """Malformed tables are rejected with the parameter named."""
    with pytest.raises(InvalidParameterError, match=match):
        TabulatedProfile(eps, delta)


def test_zero_profile():
    """A constant mechanism: δ ≡ 0, pure ε = 0."""
    z = ZeroProfile("substitute")
    assert float(z.delta(0.0)) == 0.0 and z.pure_epsilon == 0.0
    assert z.relation.value == "substitute"
    assert z.group(5) is z


def test_profile_input_validation():
    """ε must be ≥ 0 for delta/log_delta (use delta_extended below 0); δ in [0, 1]."""
    g = GaussianProfile(1.0)
    with pytest.raises(InvalidParameterError, match=r"eps must be real number\(s\) in \[0, inf\]"):
        g.delta(-0.1)
    with pytest.raises(InvalidParameterError, match="NaN"):
        g.log_delta(math.nan)
    with pytest.raises(InvalidParameterError, match="delta"):
        g.epsilon(1.5)
    with pytest.raises(InvalidParameterError, match="delta"):
        g.epsilon(-1e-9)
    with pytest.raises(InvalidParameterError, match="eps"):
        g.delta_extended(math.nan)


def test_extended_profile_lower_and_upper_bracket():
    """log_delta_extended_lower ≤ log_delta_extended everywhere, both exact 0 at ε = −∞, and
    both equal to the profile at ε ≥ 0."""
    from privamp import GaussianMechanism, LaplaceMechanism

    eps = np.concatenate([-np.logspace(-12, 2, 40), [-np.inf, 0.0], np.logspace(-5, 1, 10)])
    for mech in (GaussianMechanism(1.0), LaplaceMechanism(1.0)):
        p = mech.profile()
        up = p.log_delta_extended(eps)
        lo = p.log_delta_extended_lower(eps)
        assert np.all(lo <= up)
        assert up[40] == 0.0 and lo[40] == 0.0
        pos = eps >= 0
        np.testing.assert_array_equal(up[pos], p.log_delta(eps[pos]))
        np.testing.assert_array_equal(lo[pos], p.log_delta_lower(eps[pos]))
