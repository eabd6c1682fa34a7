"""Properties every registered mechanism's profile must have (hypothesis, registry-driven).

The strategies in ``strategies.MECHANISMS`` cover :data:`privamp.mechanisms.REGISTRY`, so a new
mechanism is checked here without new test code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp.divergences import hockey_stick
from strategies import MECHANISMS

GRID = np.array([0.0, 1e-6, 0.01, 0.1, 0.3, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 30.0])
NAMES = sorted(MECHANISMS)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_profile_in_unit_interval_and_non_increasing(name, data):
    """0 ≤ δ(ε) ≤ 1 and δ is non-increasing in ε (up to 1e-12 relative rounding)."""
    prof = data.draw(MECHANISMS[name]).profile()
    d = prof.delta(GRID)
    assert np.all((d >= 0) & (d <= 1))
    assert np.all(d[1:] <= d[:-1] * (1 + 1e-12) + 1e-300)
    ld = prof.log_delta(GRID)
    prev = ld[:-1]
    slack = np.where(np.isfinite(prev), 1e-12 * (1 + np.abs(prev)), 0.0)
    assert np.all(ld[1:] <= prev + slack)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_delta_and_log_delta_agree(name, data):
    """delta = exp(log_delta); scalars give floats, arrays keep their shape."""
    prof = data.draw(MECHANISMS[name]).profile()
    np.testing.assert_allclose(prof.delta(GRID), np.exp(prof.log_delta(GRID)), rtol=1e-15)
    assert isinstance(prof.delta(0.5), float)
    assert prof.delta(GRID.reshape(2, 7)).shape == (2, 7)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data(), eps=st.floats(0.0, 20.0))
def test_epsilon_of_delta_never_undercuts(name, data, eps):
    """ε(δ(ε)) ≥ ε − tiny where δ is strictly decreasing, and δ(ε(δ)) ≤ δ always."""
    prof = data.draw(MECHANISMS[name]).profile()
    d = float(prof.delta(eps))
    back = float(prof.epsilon(d))
    if math.isfinite(back):
        assert prof.is_dp(back, d)
    plateau_start = prof.plateau[0] if prof.plateau is not None else math.inf
    # below ~1e-300 a double δ no longer resolves ε: δ is rounded up to the subnormal floor
    # (e.g. 1e-323 for every ε near 6 of a Gaussian with θ = 0.156), so ε(δ) may be smaller
    # than ε and still safe (checked above)
    if 1e-300 < d < prof.total_variation and eps < plateau_start:
        assert back >= eps - 1e-9 * (1 + eps)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data(), delta=st.floats(1e-200, 1.0))
def test_epsilon_is_feasible(name, data, delta):
    """The returned ε certifies the target: δ(ε(δ)) ≤ δ (or ε = inf when unreachable)."""
    prof = data.draw(MECHANISMS[name]).profile()
    e = float(prof.epsilon(delta))
    assert e >= 0
    if math.isfinite(e):
        assert prof.is_dp(e, delta)
    else:
        assert not prof.is_dp(1e6, delta)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_group_profiles_grow_with_k_and_white_is_below_black(name, data):
    """δ_1 ≤ δ_2 ≤ δ_3 (default method) and white-box ≤ black-box where white-box exists."""
    prof = data.draw(MECHANISMS[name]).profile()
    curves = [prof.group(k).delta(GRID) for k in (1, 2, 3)]
    assert np.all(curves[0] <= curves[1] * (1 + 1e-12) + 1e-300)
    assert np.all(curves[1] <= curves[2] * (1 + 1e-12) + 1e-300)
    white = prof._white_box_group(3)
    if white is not None:
        black = prof.group(3, "black-box").delta(GRID)
        # at a pure-DP boundary both are rounded-up zeros: kθ rounded up by one ulp can read
        # 3e-17 where the black-box value reads 2e-17, hence the absolute slack
        assert np.all(white.delta(GRID) <= black * (1 + 1e-12) + 1e-15)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data(), eps=st.floats(-30.0, -1e-9))
def test_extended_profile_bounds(name, data, eps):
    """For ε < 0: max(0, 1 − e^ε) ≤ δ(ε) ≤ 1 (the α < 1 generalisation)."""
    prof = data.draw(MECHANISMS[name]).profile()
    ext = float(prof.delta_extended(eps))
    assert -math.expm1(eps) - 1e-12 <= ext <= 1.0


@pytest.mark.parametrize("name", ["randomized-response", "approx-dp", "discrete-pair",
                                  "randomized-membership"])
@given(data=st.data())
def test_profile_is_exact_for_finite_output_mechanisms(name, data):
    """For finite-output mechanisms the profile equals the brute-force divergence of the
    worst-case pair of inputs (both orders), and never falls below it."""
    mech = data.draw(MECHANISMS[name])
    if name == "randomized-membership":
        a, b = mech.output_pmf([mech.target]), mech.output_pmf([])
    else:
        a, b = mech.output_pmf(0), mech.output_pmf(1)
    direct = np.maximum(hockey_stick(a, b, GRID), hockey_stick(b, a, GRID))
    got = mech.profile().delta(GRID)
    # output probabilities are floats: each is exact only to ~1e-16 absolute (the canonical
    # (ε₀, δ₀) pmf at ε₀ = 1e-10 differs from its ideal by 4e-18), hence the 4e-16 slack
    assert np.all(got >= direct * (1 - 1e-15) - 4e-16)
    np.testing.assert_allclose(got, direct, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_theorem5_privacy_loss_matches_profile(name, data):
    """max over both orders of Pr[L > ε] − e^ε Pr[L' < −ε] equals δ(ε) (Theorem 5)."""
    mech = data.draw(MECHANISMS[name])
    eps = GRID[GRID <= 8.0]
    via_loss = np.maximum(mech.privacy_loss().delta(eps),
                          mech.privacy_loss(reverse=True).delta(eps))
    np.testing.assert_allclose(via_loss, mech.profile().delta(eps), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=20)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_release_is_reproducible_with_a_seed(name, data, seed):
    """The same seed gives the same release; outputs have the input's shape."""
    mech = data.draw(MECHANISMS[name])
    value = {"gaussian": 1.5, "laplace": -2.0}.get(name, 1)
    if name == "randomized-membership":
        value = [mech.target, 99]
    first = mech.release(value, rng=np.random.default_rng(seed))
    second = mech.release(value, rng=np.random.default_rng(seed))
    assert first == second
