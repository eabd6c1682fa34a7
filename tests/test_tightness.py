"""Lower bounds (Lemma 12 / Theorem 13), tightness reports and aligned privacy profiles."""

from __future__ import annotations

import numpy as np
import pytest

from privamp import (
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedMembershipMechanism,
    RandomizedResponse,
    TabulatedProfile,
)
from privamp.amplification.subsampling import amplify, amplify_eps
from privamp.amplification.tightness import (
    aligned_profile,
    classify_amplification,
    membership_lower_bound,
    tightness_report,
)
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.sampling import MustOW, MustWW, Poisson, WithoutReplacement, WithReplacement


@pytest.mark.parametrize(
    ("scheme", "relation", "expected"),
    [  # catalogue §3.11 / §6.2, p = 0.8, ε = 0.5 (exact enumeration values)
        (Poisson(0.3), "add-remove", 0.14107672375799235),
        (WithoutReplacement(5, 2), "substitute", 0.1881022983439898),
        (WithReplacement(4, 3), "substitute", 0.27186660307529775),
        (WithReplacement(4, 3), "add-remove", 0.27186660307529775),
    ],
)
def test_membership_lower_bound_values(scheme, relation, expected):
    """η ψ_p(ε) at ε' = amplify(ε, η)."""
    lb = membership_lower_bound(scheme, 0.8, relation)
    eta = scheme.eta if not isinstance(scheme, Poisson) else scheme.rate
    assert float(lb.delta(float(amplify_eps(0.5, eta)))) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("scheme", [Poisson(0.3), WithoutReplacement(50, 10),
                                    WithReplacement(50, 10), MustOW(50, 20, 10),
                                    MustWW(50, 20, 10, bound="published")], ids=repr)
def test_theorem13_upper_equals_lower_for_membership(scheme):
    """For M_{v,p} the multiplicity bound equals the exact lower bound (Theorem 13). For MUST.WW
    that is the paper's bound (Theorem 5(c)); privamp's proved default is looser (next test)."""
    rel = scheme.natural_relation
    mech = RandomizedMembershipMechanism(0, 0.75, relation=scheme.base_relation(rel))
    rep = tightness_report(mech, scheme, [0.0, 0.3, 0.8, 1.0])
    np.testing.assert_allclose(rep.upper, rep.lower, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(rep.ratio, 1.0, rtol=1e-12)


def test_proved_must_ww_bound_lies_above_the_membership_lower_bound():
    """MUST.WW's proved bound uses η* ≥ η, so it lies on or above the exact lower bound, with a
    gap (it is not tight where Theorem 5(c) would be)."""
    scheme = MustWW(50, 20, 10)
    mech = RandomizedMembershipMechanism(0, 0.75, relation=scheme.base_relation(
        scheme.natural_relation))
    rep = tightness_report(mech, scheme, [0.0, 0.3, 0.8, 1.0])
    assert np.all(rep.upper >= rep.lower * (1 - 1e-12))
    assert rep.upper[-1] > rep.lower[-1]


def test_tightness_report_for_noise_mechanisms():
    """Gaussian and Laplace: Theorems 8 and 9 are attained by a sum query; for WR the bound is
    within 10% of the achieved divergence at these parameters; never below it."""
    for scheme in [Poisson(0.1), WithoutReplacement(100, 10)]:
        rep = tightness_report(GaussianMechanism(1.0, relation=scheme.natural_relation),
                               scheme, [0.0, 0.5, 1.0, 2.0])
        np.testing.assert_allclose(rep.ratio, 1.0, rtol=1e-7)
    rep = tightness_report(LaplaceMechanism(1.0, relation="substitute"),
                           WithReplacement(100, 10), [0.2, 0.5, 0.9])
    assert np.all(rep.lower <= rep.upper) and np.all(rep.ratio < 1.1)
    with pytest.raises(UnsupportedCombinationError, match="lower-bound construction"):
        tightness_report(TabulatedProfile([0.0, 1.0], [0.3, 0.0], "substitute"),
                         WithoutReplacement(10, 2), [0.5])


def test_aligned_profile_matches_figure4_claims():
    """Figure 4 (n = 1000, m = 400, b = 500): WOR is 100% strong; WR and the MUST schemes
    visit the type-I weak quadrant; MUST.WW stays weak longest; nobody is weak-II or diluting."""
    eps = np.arange(1, 601) / 100  # the authors' grid seq(0.01, 6, 0.01)
    fractions = {}
    for kind, mech in [("laplace", LaplaceMechanism(1.0, relation="substitute")),
                       ("gaussian", GaussianMechanism(1.0, relation="substitute"))]:
        for name, scheme in [("WOR", WithoutReplacement(1000, 400)),
                             ("WR", WithReplacement(1000, 400)),
                             ("OW", MustOW(1000, 500, 400)), ("WW", MustWW(1000, 500, 400))]:
            al = aligned_profile(amplify(mech, scheme), eps)
            fractions[(kind, name)] = al.fraction("weak-I")
            assert al.fraction("weak-II") == 0 and al.fraction("dilution") == 0
            assert np.all(al.eps_ratio < 1)
    for kind in ("laplace", "gaussian"):
        assert fractions[(kind, "WOR")] == 0.0
        assert 0 < fractions[(kind, "WR")] < fractions[(kind, "OW")] < fractions[(kind, "WW")]


def test_classification_boundaries():
    """δ' = δ meets the δ condition (non-strict); ε'/ε = 1 does not meet the ε condition."""
    classes = classify_amplification([0.9, 0.9, 1.0, 1.5, 0.5], [0.0, 1e-9, -0.1, 0.2, 0.05],
                                     delta_tolerance=0.0)
    assert classes.tolist() == ["strong", "weak-I", "weak-II", "dilution", "weak-I"]
    assert classify_amplification([0.5], [0.05], delta_tolerance=0.1).tolist() == ["strong"]
    with pytest.raises(InvalidParameterError, match="eps_ratio"):
        classify_amplification([float("nan")], [0.0])
    with pytest.raises(InvalidParameterError, match="eps"):
        aligned_profile(amplify(RandomizedResponse(0.7), Poisson(0.1)), [0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="kind"):
        aligned_profile(amplify(RandomizedResponse(0.7), Poisson(0.1)), [1.0]).fraction("weak")
