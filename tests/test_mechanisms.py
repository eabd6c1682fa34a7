"""Base mechanisms: parameters, release, profiles against direct divergences, calibration."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import (
    ApproxDPMechanism,
    ApproxDPProfile,
    DiscretePairMechanism,
    DiscretePairProfile,
    GaussianMechanism,
    LaplaceMechanism,
    NeighbouringRelation,
    RandomizedMembershipMechanism,
    RandomizedResponse,
)
from privamp.divergences import hockey_stick
from privamp.errors import InvalidParameterError, InvalidTypeError
from privamp.mechanisms import REGISTRY, classical_gaussian_sigma
from strategies import MECHANISMS, pmf_pairs

EPS = np.array([0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0])


def test_every_registered_mechanism_has_a_test_strategy():
    """Registry-driven tests cover every mechanism the CLI and library register."""
    assert set(REGISTRY) == set(MECHANISMS)


def test_registry_is_complete_whatever_was_imported():
    """Mechanisms registered outside privamp.mechanisms (diffusion) are in the registry on its
    first read in a fresh interpreter, and ``import privamp`` alone imports neither them nor
    the slow SciPy submodules (quadrature and optimisation are imported where they are used)."""
    code = (
        "import sys, privamp\n"
        "assert 'privamp.amplification' not in sys.modules\n"
        "from privamp.mechanisms import REGISTRY\n"
        "assert {'brownian-motion', 'ornstein-uhlenbeck'} <= set(REGISTRY), sorted(REGISTRY)\n"
        "from privamp.amplification import *\n"
        "import privamp.amplification.tightness, privamp.applications, privamp.rdp\n"
        "slow = [m for m in ('scipy.integrate', 'scipy.optimize', 'scipy.stats')\n"
        "        if m in sys.modules]\n"
        "assert not slow, slow\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------


def test_gaussian_release_statistics_and_reproducibility():
    """Noise is N(0, σ²) per coordinate; the same seed gives the same output."""
    m = GaussianMechanism(sigma=2.0)
    out = m.release(np.full(200_000, 5.0), rng=np.random.default_rng(7))
    assert out.shape == (200_000,)
    assert abs(out.mean() - 5.0) < 5 * 2.0 / math.sqrt(out.size)
    assert abs(out.std() - 2.0) < 0.02
    a = m.release([1.0, 2.0], rng=3)
    b = m.release([1.0, 2.0], rng=3)
    np.testing.assert_array_equal(a, b)
    assert isinstance(m.release(1.0, rng=0), float)
    assert m.release(np.zeros((2, 3)), rng=0).shape == (2, 3)


def test_gaussian_theta_is_rounded_up():
    """θ = Δ/σ is rounded up: Fraction(θ) ≥ Δ/σ exactly, and exact ratios are kept."""
    m = GaussianMechanism(sigma=3.0, sensitivity=1.0)
    assert Fraction(m.theta) >= Fraction(1) / Fraction(3)
    assert GaussianMechanism(sigma=4.0).theta == 0.25
    assert GaussianMechanism(sigma=2.0).noise_multiplier == 2.0
    z = GaussianMechanism.from_noise_multiplier(1.5, sensitivity=2.0)
    assert z.sigma == 3.0 and z.noise_multiplier == 1.5


def test_gaussian_sensitivity_zero_is_perfectly_private():
    """Δ = 0: the output does not depend on the data, δ ≡ 0."""
    prof = GaussianMechanism(sigma=1.0, sensitivity=0.0).profile()
    assert float(prof.delta(0.0)) == 0.0 and prof.epsilon(1e-10) == 0.0


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-5), (0.1, 1e-6), (3.0, 1e-9), (8.0, 1e-3)])
def test_gaussian_calibration_is_tight_and_safe(eps, delta):
    """calibrated σ gives δ(ε) ≤ target and σ·(1 − 1e-9) does not."""
    m = GaussianMechanism.calibrated(eps, delta)
    assert float(m.profile().delta(eps)) <= delta
    smaller = GaussianMechanism(sigma=m.sigma * (1 - 1e-9))
    assert float(smaller.profile().delta(eps)) > delta


def test_gaussian_calibration_beats_classical():
    """Exact calibration needs less noise than σ = √(2 ln(1.25/δ))/ε (valid for ε < 1)."""
    for eps in [0.1, 0.5, 0.9]:
        classic = classical_gaussian_sigma(eps, 1e-5)
        exact = GaussianMechanism.calibrated(eps, 1e-5).sigma
        assert exact < classic
        # the classical σ is a valid guarantee too
        assert float(GaussianMechanism(sigma=classic).profile().delta(eps)) <= 1e-5


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------


def test_laplace_release_statistics():
    """Noise is Lap(0, b): mean 0, mean absolute deviation b."""
    m = LaplaceMechanism(scale=0.5)
    out = m.release(np.zeros(200_000), rng=np.random.default_rng(11))
    assert abs(out.mean()) < 5 * 0.5 * math.sqrt(2) / math.sqrt(out.size)
    assert abs(np.abs(out).mean() - 0.5) < 0.005


def test_laplace_boundary_and_rounding():
    """(Δ/b, 0)-DP and not (Δ/b − 1e-9, 0)-DP; θ rounds up when Δ/b is not a float."""
    m = LaplaceMechanism(scale=0.5, sensitivity=1.0)
    prof = m.profile()
    assert prof.is_dp(2.0, 0.0) and not prof.is_dp(2.0 - 1e-9, 0.0)
    inexact = LaplaceMechanism(scale=3.0)
    assert Fraction(inexact.theta) > Fraction(1, 3)
    # the float nearest 1/3 is below 1/3: the mechanism is NOT (fl(1/3), 0)-DP
    assert Fraction(1 / 3) < Fraction(1, 3)
    assert not inexact.profile().is_dp(1 / 3, 0.0)
    assert inexact.profile().is_dp(inexact.theta, 0.0)


def test_laplace_calibrated():
    """b = Δ/ε rounded up gives an (ε, 0)-DP mechanism."""
    for eps in [0.1, 1 / 3, 1.0, 7.0]:
        m = LaplaceMechanism.calibrated(eps, sensitivity=2.0)
        assert m.profile().is_dp(eps, 0.0)


# ---------------------------------------------------------------------------------------------
# randomized response and randomized membership
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 0.1, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0])
def test_rr_profile_equals_direct_divergence(p):
    """ψ_p = max of both hockey-stick divergences of the output laws, for every p (E1)."""
    rr = RandomizedResponse(p)
    a, b = rr.output_pmf(0), rr.output_pmf(1)
    direct = np.maximum(hockey_stick(a, b, EPS), hockey_stick(b, a, EPS))
    got = rr.profile().delta(EPS)
    assert np.all(got >= direct)
    np.testing.assert_allclose(got, direct, rtol=1e-13, atol=1e-15)


def test_rr_erratum_e1():
    """p = 0.3 at ε = 0: total variation 0.4, where the paper's [p − e^ε(1−p)]_+ gives 0."""
    assert float(RandomizedResponse(0.3).profile().delta(0.0)) == pytest.approx(0.4, rel=1e-13)
    assert max(0.3 - (1 - 0.3), 0.0) == 0.0  # the paper's formula


def test_rr_constructors():
    """from_epsilon gives pure ε-DP; calibrated(ε, δ) gives ψ_p(ε) = δ."""
    rr = RandomizedResponse.from_epsilon(1.0)
    assert rr.epsilon == pytest.approx(1.0, rel=1e-14) and rr.epsilon >= 1.0 - 1e-15
    assert rr.profile().is_dp(rr.epsilon, 0.0)
    for eps, delta in [(0.5, 1e-3), (1.0, 1e-5), (2.0, 0.1)]:
        c = RandomizedResponse.calibrated(eps, delta)
        assert float(c.profile().delta(eps)) == pytest.approx(delta, rel=1e-9)
        assert c.p == pytest.approx((math.exp(eps) + delta) / (math.exp(eps) + 1), rel=1e-15)
    assert RandomizedResponse(0.5).profile().pure_epsilon == 0.0
    assert RandomizedResponse(1.0).profile().pure_epsilon == math.inf
    assert float(RandomizedResponse(1.0).profile().delta(50.0)) == 1.0


def test_rr_release_flip_frequency():
    """Bits are kept with probability p."""
    rr = RandomizedResponse(0.8)
    out = rr.release(np.ones(100_000, dtype=int), rng=5)
    assert abs(out.mean() - 0.8) < 0.005
    assert rr.release(0, rng=1) in (0, 1)
    with pytest.raises(InvalidParameterError, match="bit"):
        rr.release(2, rng=1)
    with pytest.raises(InvalidParameterError, match="bit"):
        rr.release(0.5, rng=1)


def test_randomized_membership():
    """M_{v,p}(x) = R_p(1[v ∈ x]); its profile ψ_p is attained by x ∋ v versus x ∌ v."""
    m = RandomizedMembershipMechanism(target="v", p=0.8)
    with_v, without = m.output_pmf(["a", "v"]), m.output_pmf(["a", "b"])
    np.testing.assert_allclose(with_v, [0.2, 0.8])
    np.testing.assert_allclose(without, [0.8, 0.2])
    np.testing.assert_allclose(hockey_stick(with_v, without, EPS), m.profile().delta(EPS),
                               rtol=1e-13, atol=1e-15)
    # group privacy: any number of changed records flips at most the one bit
    assert m.profile().group(5) is m.profile().group(1) or float(
        m.profile().group(5).delta(0.5)) == float(m.profile().delta(0.5))
    draws = [m.release(["v"], rng=i) for i in range(2000)]
    assert abs(np.mean(draws) - 0.8) < 0.04
    with pytest.raises(InvalidParameterError, match="dataset"):
        m.release("v", rng=0)


# ---------------------------------------------------------------------------------------------
# generic (ε, δ)-DP and discrete pairs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("eps0", "delta0"), [(0.0, 0.0), (0.5, 0.0), (1.0, 1e-5), (3.0, 0.2)])
def test_approx_dp_canonical_mechanism_attains_the_profile(eps0, delta0):
    """The canonical four-outcome mechanism's exact profile equals ApproxDPProfile."""
    m = ApproxDPMechanism(eps0, delta0)
    direct = DiscretePairProfile(m.output_pmf(0), m.output_pmf(1))
    # the float pmfs realise e^{ε₀} only up to rounding: agreement to ~1e-14
    np.testing.assert_allclose(m.profile().delta(EPS), direct.delta(EPS), rtol=1e-12,
                               atol=1e-14)
    assert m.profile().is_dp(eps0, delta0)
    out = m.release(np.zeros(20_000, dtype=int), rng=2)
    assert set(np.unique(out)) <= {0, 1, 2}


@settings(max_examples=150)
@given(pair=pmf_pairs(), eps0=st.floats(0.0, 4.0))
def test_approx_dp_profile_dominates_every_eps_delta_mechanism(pair, eps0):
    """Any pair that is (ε₀, δ₀)-DP has a profile below ApproxDPProfile(ε₀, δ₀) everywhere
    (Kairouz–Oh–Viswanath: the canonical pair dominates)."""
    p, q = pair
    exact = DiscretePairProfile(p, q)
    delta0 = float(exact.delta(eps0))
    bound = ApproxDPProfile(eps0, min(delta0, 1.0))
    grid = np.linspace(0.0, 6.0, 61)
    assert np.all(bound.delta(grid) >= exact.delta(grid) * (1 - 1e-12) - 1e-15)


def test_discrete_pair_mechanism():
    """Labels, dict alignment, symmetric profile, exact pure ε."""
    m = DiscretePairMechanism({"a": 0.5, "b": 0.3, "c": 0.2}, {"a": 0.2, "b": 0.3, "c": 0.5})
    assert m.outcomes == ("a", "b", "c")
    assert m.release(1, rng=4) in m.outcomes
    prof = m.profile()
    pure = prof.pure_epsilon
    assert pure == pytest.approx(math.log(2.5), rel=1e-13) and pure >= math.log(2.5)
    assert float(prof.delta(pure)) == 0.0
    assert float(prof.delta(math.log(2.5) * (1 - 1e-6))) > 0.0
    np.testing.assert_allclose(prof.delta(EPS), np.maximum(
        hockey_stick(m.p, m.q, EPS), hockey_stick(m.q, m.p, EPS)), rtol=1e-13, atol=1e-16)
    # different supports: never pure
    assert DiscretePairProfile([0.5, 0.5, 0.0], [0.5, 0.0, 0.5]).pure_epsilon == math.inf
    with pytest.raises(InvalidParameterError, match="outcomes"):
        DiscretePairMechanism([0.5, 0.5], [0.5, 0.5], outcomes=["x"])


def test_mechanisms_record_their_relation():
    """Every mechanism carries the relation it is stated for, parsed from strings."""
    m = GaussianMechanism(sigma=1.0, relation="substitute")
    assert m.relation is NeighbouringRelation.SUBSTITUTE
    assert m.profile().relation is NeighbouringRelation.SUBSTITUTE
    assert LaplaceMechanism(1.0, relation="R").profile().relation is NeighbouringRelation.ADD_REMOVE


def test_mechanisms_are_immutable():
    """Validated parameters cannot be changed after construction."""
    m = GaussianMechanism(sigma=1.0)
    with pytest.raises(AttributeError):
        m.sigma = -1.0  # type: ignore[misc]


def test_rng_argument_validation():
    """rng is a Generator, a seed or None; legacy RandomState and bools are refused."""
    m = GaussianMechanism(sigma=1.0)
    with pytest.raises(InvalidTypeError, match="rng"):
        m.release(0.0, rng=np.random.RandomState(0))
    with pytest.raises(InvalidTypeError, match="rng"):
        m.release(0.0, rng=True)
    assert isinstance(m.release(0.0, rng=None), float)
