"""The DP subsampling bootstrap: its joint sensitivity (brute force), the unbiasedness of its
estimates for every scheme, the coverage of its intervals, its privacy statement, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from privamp import GaussianMechanism, InvalidParameterError
from privamp.accountant import Accountant
from privamp.applications import DpBootstrap
from privamp.applications.bootstrap import joint_sensitivity, per_copy_sensitivities
from privamp.sampling import MustOW, MustWO, MustWW, Poisson, WithoutReplacement, WithReplacement


@pytest.mark.parametrize("relation", ["add-remove", "substitute"])
def test_joint_sensitivity_is_the_maximum_over_a_fine_grid(relation):
    """max over u, u' ∈ [−1, 1] of the scaled change of (Σ K u, Σ K u²) by one copy."""
    d1, d2 = per_copy_sensitivities(relation)
    u = np.linspace(-1, 1, 2001)
    if relation == "add-remove":
        worst = np.max(np.sqrt((u / d1) ** 2 + (u * u / d2) ** 2))
    else:
        a, b = np.meshgrid(u, u)
        worst = np.max(np.sqrt(((b - a) / d1) ** 2 + ((b * b - a * a) / d2) ** 2))
    j = joint_sensitivity(relation)
    assert worst <= j <= worst * (1 + 1e-6)


SCHEMES = {
    "poisson": Poisson(0.1),
    "wor": WithoutReplacement(300, 30),
    "wr": WithReplacement(300, 30),
    "must-ow b=10": MustOW(300, 10, 30),
    "must-wo": MustWO(300, 50, 30),
    "must-ww b=10": MustWW(300, 10, 30),
}


@pytest.mark.parametrize("name", list(SCHEMES))
def test_estimates_are_unbiased_for_the_clipped_data_given_the_data(name):
    """For one fixed dataset, the replicate estimates average to its x̄ and S² (n − 1) — also
    for MUST with b = 10, where the paper's estimator is biased down by ≈ 11% (Table 5)."""
    scheme = SCHEMES[name]
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, 1.0, size=300) - 2.0  # skewed, a few values clipped at 4
    boot = DpBootstrap(scheme, 4000, (-4, 4), delta=1e-3, noise_multiplier=1.0)
    res = boot.run(x, rng=1)
    xc = np.clip(x, -4, 4)
    se_mean = res.replicate_means.std() / np.sqrt(4000)
    se_var = res.replicate_variances.std() / np.sqrt(4000)
    assert abs(res.mean - xc.mean()) < 4.5 * se_mean
    assert abs(res.variance - xc.var(ddof=1)) < 4.5 * se_var


def test_paper_estimator_would_be_biased_for_must_with_small_b():
    """The naive average of subsample variances under MUST.OW(300, 10, 30) sits near
    (1 − 1/b)-ish of S²; privamp's corrected one does not."""
    x = np.random.default_rng(2).normal(size=300)
    scheme = MustOW(300, 10, 30)
    rng = np.random.default_rng(3)
    naive = np.mean([scheme.sample(300, rng).take(x).var(ddof=1) for _ in range(4000)])
    assert naive < 0.92 * x.var(ddof=1)
    res = DpBootstrap(scheme, 4000, (-4, 4), delta=1e-3, noise_multiplier=1.0).run(x, rng=4)
    assert abs(res.variance / x.var(ddof=1) - 1) < 0.03


@pytest.mark.slow
@pytest.mark.parametrize("scheme, z", [(WithoutReplacement(300, 30), 0.5),
                                       (Poisson(0.1), 3.0), (MustOW(300, 50, 30), 2.5)],
                         ids=["wor-low-noise", "poisson-paper-noise", "must-ow-paper-noise"])
def test_intervals_cover_the_population_values(scheme, z):
    """95% intervals over 200 N(0, 1) datasets: the mean's covers μ = 0 in 0.90–0.99 of them
    (Monte-Carlo SE 0.015); the variance's covers τ² = 1 in at least 0.85 (its first-order
    noise removal is rougher under strong noise, see the module docstring)."""
    boot = DpBootstrap(scheme, 300, (-4, 4), delta=1 / 300, noise_multiplier=z)
    rng = np.random.default_rng(5)
    cover_m = cover_v = 0
    for _ in range(200):
        res = boot.run(rng.normal(size=300), rng=rng)
        cover_m += res.mean_ci[0] <= 0 <= res.mean_ci[1]
        cover_v += res.variance_ci[0] <= 1 <= res.variance_ci[1]
    assert 0.90 <= cover_m / 200 <= 0.99
    assert 0.85 <= cover_v / 200 <= 0.995


def test_noise_has_the_stated_standard_deviation():
    """With constant data the replicate means vary only by the noise: SD = σ_M1."""
    boot = DpBootstrap(WithoutReplacement(100, 20), 4000, (-1, 3), delta=1e-3,
                       noise_multiplier=2.0)
    res = boot.run(np.full(100, 0.5), rng=0)
    # σ_M1 = h z Δ1 / m = 2 · 2 · 2 / 20 (substitution: Δ1 = 2)
    assert res.sigma_mean == pytest.approx(0.4)
    assert res.replicate_means.std() == pytest.approx(0.4, rel=0.05)
    assert res.sigma_second_moment == pytest.approx(4 * 2 * 1 / 20)


def test_statement_is_one_joint_gaussian_per_replicate():
    scheme = MustWW(300, 50, 30)
    boot = DpBootstrap(scheme, 500, (-4, 4), delta=1 / 300, step_epsilon=0.1)
    st = boot.privacy
    assert st.steps == 500 and st.relation.value == "substitute"
    assert st.sensitivity == pytest.approx(joint_sensitivity("substitute"))
    mech = GaussianMechanism(boot.noise_multiplier, joint_sensitivity("substitute"),
                             "substitute")
    ref = Accountant().add(mech, 500, scheme=scheme).epsilon(1 / 300)
    assert st.epsilon == ref.upper


def test_two_statistics_on_one_subsample_are_one_event():
    """Under add/remove the joint sensitivity is √2 (attained): one Gaussian event per replicate
    with θ = √2/z. Accounting the two statistics as two independently subsampled events (θ = 1/z
    each, twice as many) would amplify twice and under-report ε."""
    boot = DpBootstrap(Poisson(0.1), 500, (-4, 4), delta=1 / 300, noise_multiplier=2.9)
    one = GaussianMechanism(2.9, 1.0)
    twice = Accountant().add(one, 1000, scheme=Poisson(0.1)).epsilon(1 / 300).upper
    assert twice < 0.97 * boot.privacy.epsilon


def test_target_calibration_meets_the_target():
    boot = DpBootstrap(Poisson(0.1), 500, (-4, 4), delta=1 / 300, target_epsilon=1.0)
    assert boot.privacy.epsilon <= 1.0 and boot.privacy.relation.value == "add-remove"
    assert boot.privacy.sensitivity == pytest.approx(np.sqrt(2))


@pytest.mark.parametrize("kwargs, param", [
    ({"bounds": (1.0, 1.0)}, "bounds"),
    ({"bounds": (1.0,)}, "bounds"),
    ({"bounds": (0.0, float("inf"))}, "bounds"),
    ({"replicates": 1}, "replicates"),
    ({"noise_multiplier": None}, "target_epsilon"),
    ({"target_epsilon": 1.0}, "target_epsilon"),
])
def test_bad_input_is_a_clear_error(kwargs, param):
    args = {"scheme": WithoutReplacement(10, 3), "replicates": 5, "bounds": (0.0, 1.0),
            "delta": 1e-3, "noise_multiplier": 1.0}
    args.update(kwargs)
    with pytest.raises(InvalidParameterError) as info:
        DpBootstrap(**args)
    assert info.value.parameter == param


def test_data_must_fit_the_scheme():
    boot = DpBootstrap(WithoutReplacement(10, 3), 5, (0.0, 1.0), delta=1e-3,
                       noise_multiplier=1.0)
    with pytest.raises(InvalidParameterError, match="n"):
        boot.run(np.zeros(11))
    with pytest.raises(InvalidParameterError, match="data"):
        boot.run(np.array([0.0, np.nan] * 5))
