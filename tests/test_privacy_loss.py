"""Privacy loss random variables (Theorem 5) and the MGF from a profile (Theorem 6)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from privamp import (
    ApproxDPProfile,
    GaussianMechanism,
    GaussianProfile,
    LaplaceMechanism,
    LaplaceProfile,
    RandomizedResponse,
    RandomizedResponseProfile,
    TabulatedProfile,
)
from privamp.divergences import hockey_stick_density
from privamp.errors import InvalidParameterError, InvalidTypeError, NumericalError
from privamp.privacy_loss import (
    DiscretePrivacyLoss,
    GaussianPrivacyLoss,
    LaplacePrivacyLoss,
    ProfileValues,
    mgf_from_profile,
)

EPS = [0.0, 0.1, 0.5, 1.0, 2.0, 3.5]


# ---------------------------------------------------------------------------------------------
# Theorem 5: δ(ε) = Pr[L > ε] − e^ε Pr[L' < −ε]
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", [0.2, 1.0, 3.0])
def test_theorem5_gaussian_by_quadrature(theta):
    """Theorem 5 for N(0,1) vs N(θ,1) agrees with quadrature of ∫[p − e^ε q]_+ and Theorem 4."""
    pl = GaussianPrivacyLoss(theta)
    via_loss = pl.delta(EPS)
    quad = hockey_stick_density(stats.norm(0, 1).logpdf, stats.norm(theta, 1).logpdf, EPS,
                                log_density=True, lower=-40, upper=40 + theta)
    np.testing.assert_allclose(via_loss, quad.value, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(via_loss, GaussianProfile(theta).delta(EPS), rtol=1e-9,
                               atol=1e-15)


@pytest.mark.parametrize("theta", [0.3, 1.0, 2.5])
def test_theorem5_laplace_by_quadrature(theta):
    """Theorem 5 for Lap(0,1) vs Lap(θ,1) agrees with quadrature and with Theorem 3."""
    pl = LaplacePrivacyLoss(theta)
    quad = hockey_stick_density(stats.laplace(0, 1).logpdf, stats.laplace(theta, 1).logpdf, EPS,
                                log_density=True, lower=-50, upper=50 + theta,
                                points=[0.0, theta])
    np.testing.assert_allclose(pl.delta(EPS), quad.value, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(pl.delta(EPS), LaplaceProfile(theta).delta(EPS), rtol=1e-12,
                               atol=1e-15)


def test_laplace_loss_distribution_by_quadrature():
    """Pr[L > t] for the Laplace pair computed by integrating the density over {L > t}."""
    theta = 1.3
    pl = LaplacePrivacyLoss(theta)
    p = stats.laplace(0, 1)
    # atoms at ±θ: Pr[L = θ] = ½ (z ≤ 0), Pr[L = −θ] = ½ e^{−θ} (z ≥ θ)
    assert float(pl.sf(-theta)) == pytest.approx(1 - 0.5 * math.exp(-theta), rel=1e-15)
    assert float(pl.sf(theta)) == 0.0
    assert float(pl.sf(theta - 1e-12)) == pytest.approx(0.5, abs=1e-11)
    assert float(pl.reverse_cdf(-theta)) == 0.0 and float(pl.reverse_cdf(theta + 1e-12)) == 1.0
    for t in [-1.2, -1.0, 0.0, 0.7, 1.29]:  # away from the atoms (rounding of |z−θ|−|z|)
        def on_event(z, _t=t):
            loss = abs(z - theta) - abs(z)
            return p.pdf(z) if loss > _t else 0.0

        # L = θ on z ≤ 0, θ − 2z on (0, θ), −θ on z ≥ θ: the event's edge is z = (θ − t)/2
        edges = sorted({-60.0, 0.0, theta, 60.0, min(max((theta - t) / 2, 0.0), theta)})
        val = sum(integrate.quad(on_event, a, b, limit=200)[0]
                  for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a)
        assert float(pl.sf(t)) == pytest.approx(val, abs=1e-9)


@pytest.mark.parametrize(
    "mech",
    [GaussianMechanism(0.7), LaplaceMechanism(0.4), RandomizedResponse(0.85),
     RandomizedResponse(0.2)],
    ids=repr,
)
def test_theorem5_matches_profiles(mech):
    """max over both orders of the Theorem 5 expression is the mechanism's profile."""
    via_loss = np.maximum(mech.privacy_loss().delta(EPS),
                          mech.privacy_loss(reverse=True).delta(EPS))
    np.testing.assert_allclose(via_loss, mech.profile().delta(EPS), rtol=1e-9, atol=1e-14)


def test_discrete_privacy_loss_asymmetric_pair():
    """For an asymmetric pair the two orders differ; sf and reverse_cdf use strict inequalities."""
    pl = DiscretePrivacyLoss([0.5, 0.5, 0.0], [0.25, 0.25, 0.5])
    assert float(pl.sf(math.log(2) - 1e-12)) == pytest.approx(1.0)
    assert float(pl.sf(math.log(2))) == 0.0  # atom exactly at t: L > t is false
    assert float(pl.reverse_cdf(-math.log(2))) == 0.0
    assert float(pl.reverse_cdf(-math.log(2) + 1e-12)) == pytest.approx(0.5)
    forward = pl.delta(0.3)
    backward = pl.reverse().delta(0.3)
    assert forward == pytest.approx(1 - math.exp(0.3) * 0.5)
    assert backward == pytest.approx(0.5)  # the mass q puts where p has none
    assert pl.mgf(1.0) == pytest.approx(0.5 ** 2 / 0.25 * 2)
    assert pl.reverse().mgf(1.0) == math.inf


@pytest.mark.parametrize(
    "pl", [GaussianPrivacyLoss(1.2), LaplacePrivacyLoss(0.8),
           DiscretePrivacyLoss([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])],
    ids=lambda p: type(p).__name__,
)
def test_samples_follow_the_survival_function(pl):
    """Empirical Pr[L > t] from sample() matches sf(t) within 5 standard errors."""
    n = 200_000
    draws = pl.sample(n, rng=np.random.default_rng(3))
    assert draws.shape == (n,)
    for t in [-1.0, -0.2, 0.0, 0.4, 0.9]:
        s = float(pl.sf(t))
        emp = float(np.mean(draws > t))
        assert abs(emp - s) <= 5 * math.sqrt(max(s * (1 - s), 1e-12) / n) + 1e-12


# ---------------------------------------------------------------------------------------------
# MGFs: closed forms against direct integration
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("theta", "s", "expected"),
    [(1.0, 1.0, math.e), (2.0, 2.0, 162754.791419004), (0.5, 3.0, 4.48168907033806)],
)
def test_gaussian_mgf_values(theta, s, expected):
    """φ(s) = exp(s(s+1)θ²/2) (catalogue §3.9)."""
    assert GaussianPrivacyLoss(theta).mgf(s) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize(("s", "expected"), [(1.0, 1.8572996467182343), (2.0, 4.4533484867055355)])
def test_laplace_mgf_values(s, expected):
    """Laplace θ = 1 (catalogue §3.9) and the same by 50-digit integration of E_P[(p/q)^s]."""
    assert LaplacePrivacyLoss(1.0).mgf(s) == pytest.approx(expected, rel=1e-13)
    mp.mp.dps = 50

    def integrand(z):
        p = mp.exp(-abs(z)) / 2
        q = mp.exp(-abs(z - 1)) / 2
        return p * (p / q) ** s

    direct = mp.quad(integrand, [-mp.inf, 0, 1, mp.inf])
    assert float(direct) == pytest.approx(expected, rel=1e-13)


# ---------------------------------------------------------------------------------------------
# Theorem 6: the MGF from the profile, as a certified bracket
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", [0.3, 1.0, 2.0])
@pytest.mark.parametrize("s", [0.5, 1.0, 2.0, 4.0])
def test_theorem6_gaussian_bracket_contains_closed_form(theta, s):
    """For the Gaussian the integral equals φ(s) exactly; the bracket holds it, tightly."""
    b = mgf_from_profile(GaussianProfile(theta), s)
    exact = math.exp(s * (s + 1) * theta**2 / 2)
    assert b.lower <= exact <= b.upper
    assert (b.upper - b.lower) / exact < 1e-8


@pytest.mark.parametrize("theta", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("s", [0.5, 1.0, 2.0, 5.0])
def test_theorem6_laplace_bracket_contains_closed_form(theta, s):
    """Laplace has a uniformly worst pair, so Theorem 6 holds with equality."""
    b = mgf_from_profile(LaplaceProfile(theta), s)
    exact = LaplacePrivacyLoss(theta).mgf(s)
    assert b.lower <= exact <= b.upper
    assert (b.upper - b.lower) / exact < 1e-8


def test_theorem6_by_direct_quadrature_of_the_integral():
    """The bracket agrees with scipy quadrature of 1 + s(s+1)∫(e^{sε}+e^{−(s+1)ε})δ(ε)dε."""
    prof, s = RandomizedResponseProfile(0.8), 1.5
    top = prof.pure_epsilon

    def integrand(e):
        return (math.exp(s * e) + math.exp(-(s + 1) * e)) * float(prof.delta(e))

    value = 1 + s * (s + 1) * integrate.quad(integrand, 0, top, epsabs=1e-14)[0]
    b = mgf_from_profile(prof, s)
    assert b.lower - 1e-10 <= value <= b.upper + 1e-10
    # and it equals E_P[(p/q)^s] for randomized response (a symmetric, uniformly worst pair)
    direct = 0.8 * (0.8 / 0.2) ** s + 0.2 * (0.2 / 0.8) ** s
    assert value == pytest.approx(direct, rel=1e-9)


def test_theorem6_is_an_upper_bound_for_every_pair():
    """For an (ε₀, δ₀ = 0) profile, the bound dominates the MGF of its canonical pair."""
    prof = ApproxDPProfile(1.0, 0.0)
    pl = DiscretePrivacyLoss([0.0, math.e / (1 + math.e), 1 / (1 + math.e), 0.0],
                             [0.0, 1 / (1 + math.e), math.e / (1 + math.e), 0.0])
    for s in [0.5, 1.0, 3.0]:
        assert pl.mgf(s) <= mgf_from_profile(prof, s).upper


def test_theorem6_edge_cases():
    """s = 0 gives 1; a profile with an unbounded tail cannot be certified."""
    assert mgf_from_profile(GaussianProfile(1.0), 0.0).upper == 1.0
    with pytest.raises(NumericalError, match="does not decay"):
        mgf_from_profile(TabulatedProfile([0.0, 1.0], [0.5, 0.1]), 1.0)
    with pytest.raises(NumericalError, match="tail"):
        mgf_from_profile(GaussianProfile(1.0).group(2, "black-box"), 1.0)
    with pytest.raises(NumericalError):
        mgf_from_profile(ApproxDPProfile(1.0, 1e-3), 1.0)
    # a tabulated profile that reaches 0 is fine, and bounds the true MGF
    truth = LaplaceProfile(1.0)
    nodes = np.linspace(0.0, 1.0, 201)
    tab = TabulatedProfile(nodes, truth.delta(nodes))
    assert mgf_from_profile(tab, 2.0).upper >= LaplacePrivacyLoss(1.0).mgf(2.0)


def _shared_value_profiles():
    from privamp.amplification.subsampling import amplify
    from privamp.mechanisms import DiscretePairMechanism
    from privamp.relations import NeighbouringRelation
    from privamp.sampling import Poisson, WithReplacement

    pair = DiscretePairMechanism([0.6, 0.3, 0.1], [0.2, 0.3, 0.5],
                                 relation=NeighbouringRelation.SUBSTITUTE)
    return [GaussianProfile(1.0), LaplaceProfile(0.5), RandomizedResponseProfile(0.8),
            amplify(GaussianMechanism(2.0), Poisson(0.05)),
            amplify(pair, WithReplacement(100, 10))]


@pytest.mark.parametrize("prof", _shared_value_profiles(), ids=repr)
def test_shared_profile_values_change_no_bracket(prof):
    """The RDP curve's orders share one ProfileValues: each call's bracket is bit-for-bit the
    bracket of a call that evaluates the profile itself, in whatever order the calls come."""
    values = ProfileValues(prof)
    for s in [4.0, 0.5, 1.0, 15.0, 2.5, 1.0]:
        shared = mgf_from_profile(prof, s, rtol=1e-6, values=values)
        assert shared == mgf_from_profile(prof, s, rtol=1e-6)
    assert values.size > 4097
    # and a stored value is the profile's value at that node, whatever the batch asked for
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.choice(values._x, 300), rng.uniform(0, 3, 50)])
    np.testing.assert_array_equal(values(x), prof._log_delta(x))


def test_shared_profile_values_belong_to_their_profile():
    values = ProfileValues(GaussianProfile(1.0))
    with pytest.raises(InvalidParameterError, match="values"):
        mgf_from_profile(GaussianProfile(2.0), 1.0, values=values)
    with pytest.raises(InvalidTypeError, match="values"):
        mgf_from_profile(GaussianProfile(1.0), 1.0, values=lambda x: x)
    small = ProfileValues(GaussianProfile(1.0), max_size=10)
    assert np.array_equal(small(np.linspace(0, 1, 50)), GaussianProfile(1.0)._log_delta(
        np.linspace(0, 1, 50))) and small.size == 0


@pytest.mark.parametrize("prof", _shared_value_profiles(), ids=repr)
def test_refinement_reuses_cell_weights_bit_for_bit(prof):
    """The refinement keeps the weights of the cells it does not split: the integral is bit for
    bit the one that recomputes every cell in every round."""
    from privamp.privacy_loss import _bracket_integral

    for s in [0.5, 3.0, 12.0]:
        T = float(prof.pure_epsilon) if math.isfinite(prof.pure_epsilon) else 8.0
        for rtol in (1e-6, 1e-10):
            assert _bracket_integral(prof._log_delta, s, T, rtol, 200_000) == \
                _bracket_integral(prof._log_delta, s, T, rtol, 200_000, reuse=False)
