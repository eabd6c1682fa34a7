"""Amplification by subsampling: the ε map, catalogue values, profile semantics, combinations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import (
    GaussianMechanism,
    GaussianProfile,
    LaplaceMechanism,
    LaplaceProfile,
    RandomizedResponse,
    TabulatedProfile,
)
from privamp.amplification.subsampling import (
    AmplifiedProfile,
    PoissonSubstitutionProfile,
    amplify,
    amplify_eps,
    deamplify_eps,
)
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.sampling import (
    MustOW,
    MustWO,
    MustWW,
    Poisson,
    StageChain,
    WithoutReplacement,
    WithReplacement,
)


@pytest.mark.parametrize(("eta", "eps", "expected"),
                         [(0.01, 1.0, 0.01703686323617655), (0.5, 2.0, 1.4337808304830273),
                          (0.1, 0.0, 0.0), (1.0, 3.0, 3.0)])
def test_amplify_eps_catalogue(eta, eps, expected):
    """ε' = log(1 + η(e^ε − 1)) (catalogue §6.4), rounded up by at most a few ulp."""
    got = amplify_eps(eps, eta)
    assert got >= expected
    assert got == pytest.approx(expected, rel=1e-14, abs=0)


@settings(max_examples=200)
@given(eta=st.floats(1e-9, 1.0), eps=st.floats(0.0, 1000.0))
def test_amplify_and_inverse_are_safe(eta, eps):
    """0 ≤ ε' ≤ ε; deamplify(amplify(ε)) ≥ ε − tiny and ≤ ε (the inverse is rounded down)."""
    ep = amplify_eps(eps, eta)
    assert 0 <= ep <= eps
    back = deamplify_eps(ep, eta)
    assert back <= eps * (1 + 1e-9) + 1e-12
    assert back >= eps * (1 - 1e-9) - 1e-12 or eps < 1e-300
    assert deamplify_eps(ep, eta) >= ep


def test_theorem10_example_and_table():
    """Laplace θ=1, WR(10, 5) (catalogue §3.10) and the Gaussian count table of §6.3."""
    prof = amplify(LaplaceMechanism(1.0, relation="substitute"), WithReplacement(10, 5))
    pts = prof.points([1.0])
    assert pts["eps_amplified"][0] == pytest.approx(0.5327751164098091, rel=1e-14)
    assert pts["delta_amplified"][0] == pytest.approx(0.034162329508561184, rel=1e-12)
    g = GaussianMechanism(1.0, relation="substitute")
    white = amplify(g, WithReplacement(10, 5)).points([0.0, 0.5, 1.0, 2.0])
    black = amplify(g, WithReplacement(10, 5), group_privacy="black-box").points(
        [0.0, 0.5, 1.0, 2.0])
    np.testing.assert_allclose(white["delta_amplified"],
                               [0.18284370885, 0.12905154245, 0.08561689636, 0.03702391623],
                               rtol=1e-9)
    np.testing.assert_allclose(black["delta_amplified"],
                               [0.19000897455, 0.13800980828, 0.09623886890, 0.04983181928],
                               rtol=1e-9)
    # the exact divergence of the Gaussian count mechanism is below both (§6.3)
    actual = [0.17827898539, 0.12719861528, 0.08528321529, 0.03374291155]
    assert np.all(np.array(actual) <= white["delta_amplified"])


@pytest.mark.parametrize(
    ("theta", "n", "rate", "eps", "eps_prime", "delta_prime"),
    [(1.0, 10, 0.2, 0.5, 0.12199128333927103, 0.0514778153652531),
     (2.0, 20, 0.1, 1.0, 0.1585650787404291, 0.04311225798701741)],
)
def test_theorem14_reference_values(theta, n, rate, eps, eps_prime, delta_prime):
    """Poisson under substitution with the extended profile (catalogue §3.10, erratum E3)."""
    prof = amplify(LaplaceMechanism(1.0 / theta, relation="substitute"), Poisson(rate, n=n),
                   relation="substitute")
    assert isinstance(prof, PoissonSubstitutionProfile)
    pts = prof.points([eps])
    assert pts["eps_amplified"][0] == pytest.approx(eps_prime, rel=1e-13)
    assert pts["delta_amplified"][0] == pytest.approx(delta_prime, rel=1e-10)
    assert pts["delta_amplified"][0] >= delta_prime


def test_theorem14_edge_cases_and_large_n():
    """γ = 1 reduces to the base profile; n = 1 to γβδ + γ(1 − β); large n is windowed."""
    base = LaplaceMechanism(1.0, relation="substitute")
    full = amplify(base, Poisson(1.0, n=10), relation="substitute")
    np.testing.assert_allclose(full.delta([0.2, 0.7]), base.profile().delta([0.2, 0.7]),
                               rtol=1e-12)
    single = amplify(base, Poisson(0.3, n=1), relation="substitute")
    e = 0.6
    ep = amplify_eps(e, 0.3)
    beta = math.exp(ep - e)
    expected = 0.3 * beta * float(base.profile().delta(e)) + 0.3 * (1 - beta)
    assert float(single.delta(ep)) == pytest.approx(expected, rel=1e-9)
    big = amplify(GaussianMechanism(1.0, relation="substitute"), Poisson(0.01, n=10**6),
                  relation="substitute")
    small = amplify(GaussianMechanism(1.0), Poisson(0.01))
    d_big, d_small = float(big.delta(0.05)), float(small.delta(0.05))
    assert d_big >= d_small * 0.5 and d_big < 1.0  # same order as Theorem 8
    with pytest.raises(InvalidParameterError, match="dataset size"):
        amplify(base, Poisson(0.3), relation="substitute")


@pytest.mark.parametrize("base", [GaussianMechanism(1.0, relation="substitute"),
                                  LaplaceMechanism(1.0, relation="substitute")], ids=repr)
def test_theorem14_at_infinity_is_the_limit(base):
    """δ'(∞) is the limit of the bound (β → γ), not NaN: (1 − γ) γ^n for a base with δ(∞) = 0,
    and no larger ε' gives a larger δ'."""
    g, n = 0.1, 100
    prof = amplify(base, Poisson(g, n=n), relation="substitute")
    d = prof.delta(np.array([0.0, 1.0, 50.0, 1e6, np.inf]))
    assert np.all(np.isfinite(d))
    assert np.all(np.diff(d) <= 1e-9 * d[:-1])  # non-increasing up to rounding
    assert float(prof.delta(math.inf)) == pytest.approx((1 - g) * g**n, rel=1e-9)
    assert float(prof.delta(math.inf)) >= (1 - g) * g**n  # rounded up, never down


@pytest.mark.parametrize("scheme", [Poisson(0.2), WithoutReplacement(50, 10),
                                    WithReplacement(50, 10), MustOW(50, 20, 10),
                                    MustWW(50, 20, 10), MustWO(50, 20, 10)], ids=repr)
def test_profile_semantics(scheme):
    """delta(ε') of the amplified profile agrees with points(); it is a valid PrivacyProfile:
    non-increasing, inverts safely, and is below the base profile at the base ε."""
    rel = scheme.natural_relation
    mech = GaussianMechanism(1.3, relation=scheme.base_relation(rel))
    prof = amplify(mech, scheme)
    assert isinstance(prof, AmplifiedProfile) and prof.relation is rel
    eps = np.linspace(0.0, 6.0, 25)
    pts = prof.points(eps)
    np.testing.assert_allclose(prof.delta(pts["eps_amplified"]), pts["delta_amplified"],
                               rtol=1e-9)
    grid = np.linspace(0, 5, 101)
    d = prof.delta(grid)
    assert np.all(np.diff(d) <= 1e-15)
    for target in [1e-3, 1e-6, 1e-10]:
        e = prof.epsilon(target)
        assert prof.is_dp(e, target)
    if isinstance(scheme, Poisson | WithoutReplacement):
        assert np.all(pts["delta_amplified"] <= pts["delta"] + 1e-15)  # strong amplification


def test_pure_epsilon_survives_amplification():
    """Laplace under WR keeps a finite pure ε when the multiplicity support is complete:
    the record appears at most m times, so ε' = amplify(mθ)."""
    prof = amplify(LaplaceMechanism(2.0, relation="substitute"), WithReplacement(10, 3))
    expected = float(amplify_eps(3 * 0.5, prof.eta))
    assert prof.pure_epsilon == pytest.approx(expected, rel=1e-12)
    assert float(prof.delta(prof.pure_epsilon)) == 0.0
    assert float(prof.delta(prof.pure_epsilon * (1 - 1e-6))) > 0.0
    assert prof.epsilon(0.0) <= prof.pure_epsilon
    assert float(prof.delta(prof.epsilon(0.0))) == 0.0
    wor = amplify(LaplaceMechanism(2.0, relation="substitute"), WithoutReplacement(10, 3))
    assert wor.pure_epsilon == pytest.approx(float(amplify_eps(0.5, 0.3)), rel=1e-12)


def test_white_box_beats_black_box_and_defaults():
    """White-box group profiles give smaller δ' than black-box; default is white-box."""
    mech = LaplaceMechanism(1.0, relation="substitute")
    scheme = WithReplacement(20, 15)
    eps = np.linspace(0.1, 4, 30)
    white = amplify(mech, scheme, group_privacy="white-box").points(eps)["delta_amplified"]
    black = amplify(mech, scheme, group_privacy="black-box").points(eps)["delta_amplified"]
    default = amplify(mech, scheme).points(eps)["delta_amplified"]
    assert np.all(white <= black + 1e-15) and np.any(white < black * 0.9)
    np.testing.assert_array_equal(default, white)
    tab = TabulatedProfile([0.0, 1.0, 3.0], [0.4, 0.1, 0.0], relation="substitute")
    with pytest.raises(UnsupportedCombinationError, match="white-box"):
        amplify(tab, scheme, group_privacy="white-box").delta(1.0)
    assert float(amplify(tab, scheme).delta(0.5)) > 0


@settings(max_examples=60)
@given(n=st.integers(10, 2000), data=st.data())
def test_amplification_is_monotone_in_subsample_size(n, data):
    """δ' and ε' grow with m (more copies, larger η) for WR and WOR."""
    m1 = data.draw(st.integers(1, n - 1))
    m2 = data.draw(st.integers(m1 + 1, n))
    mech = GaussianMechanism(1.0, relation="substitute")
    for cls in (WithoutReplacement, WithReplacement):
        a = amplify(mech, cls(n, m1)).points([1.0])
        b = amplify(mech, cls(n, m2)).points([1.0])
        assert a["eps_amplified"][0] <= b["eps_amplified"][0]
        assert a["delta_amplified"][0] <= b["delta_amplified"][0] * (1 + 1e-12)


def test_rate_one_and_full_sampling_reduce_to_the_base():
    """η = 1: Poisson(1) and WOR(n, n) give back the base profile."""
    base = GaussianProfile(0.8)
    for scheme, rel in [(Poisson(1.0), "add-remove"), (WithoutReplacement(7, 7), "substitute")]:
        mech = GaussianMechanism(1.25, relation=rel)
        np.testing.assert_allclose(amplify(mech, scheme).delta([0.0, 0.5, 2.0]),
                                   base.delta([0.0, 0.5, 2.0]), rtol=1e-12)


def test_relation_mismatches_name_both_sides():
    """A base mechanism stated under the wrong relation is rejected, naming both."""
    with pytest.raises(UnsupportedCombinationError, match="needs a base mechanism stated under "
                                                          "'substitute'.*'add-remove'"):
        amplify(GaussianMechanism(1.0), WithoutReplacement(10, 3))
    with pytest.raises(UnsupportedCombinationError, match="'add-remove'"):
        amplify(LaplaceProfile(1.0, "substitute"), Poisson(0.1))
    with pytest.raises(UnsupportedCombinationError, match="not analysed under"):
        amplify(GaussianMechanism(1.0, relation="substitute"), MustOW(10, 5, 3), "add-remove")
    with pytest.raises(InvalidParameterError, match="scheme"):
        amplify(GaussianMechanism(1.0), "poisson")
    # Theorem 11: add/remove on the data, substitution on the base mechanism
    hybrid = amplify(RandomizedResponse(0.8, relation="substitute"), WithReplacement(4, 3),
                     "add-remove")
    assert hybrid.relation.value == "add-remove" and "Theorem 11" in hybrid.theorem


def test_stage_chain_uses_first_stage_eta():
    """A general chain maps ε with η₁ (first stage) and uses the exact final multiplicity."""
    chain = StageChain(100, [("wr", 60), ("wor", 30), ("wr", 20)])
    prof = amplify(GaussianMechanism(1.0, relation="substitute"), chain)
    assert prof.eta == pytest.approx(chain.first_stage_eta) and prof.eta > chain.eta
    assert "first-stage" in prof.theorem
    # MUST.WW: the proved bound maps ε with the η of min(b, m) draws (between the chain's η₁
    # and the published Theorem 5(c)'s η = P(K ≥ 1)), and says so
    must = amplify(GaussianMechanism(1.0, relation="substitute"), MustWW(100, 60, 20))
    assert must.eta == pytest.approx(WithReplacement(100, 20).eta)
    assert MustWW(100, 60, 20).eta < must.eta < chain.first_stage_eta
    assert must.certified and "proved" in must.theorem
    published = amplify(GaussianMechanism(1.0, relation="substitute"),
                        MustWW(100, 60, 20, bound="published"))
    assert published.eta == pytest.approx(MustWW(100, 60, 20).eta)
    assert not published.certified and "estimate" in published.theorem



def test_large_schemes_are_fast_and_finite():
    """n = 10^6, m = 10^5, b = 2·10^5 at 1,000 ε values (the benchmark's setting)."""
    eps = np.linspace(0.01, 10, 1000)
    for scheme in [WithReplacement(10**6, 10**5), MustWW(10**6, 2 * 10**5, 10**5)]:
        prof = amplify(GaussianMechanism(2.0, relation="substitute"), scheme)
        pts = prof.points(eps)
        assert np.all(np.isfinite(pts["delta_amplified"]))
        assert np.all(pts["delta_amplified"] >= 1e-300)  # the truncated tail is counted
