"""DP-SGD (privamp.applications.dpsgd): which sensitivity goes where, the noise actually added,
the privacy statement against independent accountant calls, convergence, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import GaussianMechanism, InvalidParameterError, clipped_sum_sensitivity
from privamp.accountant import Accountant
from privamp.amplification.subsampling import amplify
from privamp.applications import (
    DPSGD,
    LinearRegression,
    LogisticRegression,
    clip_gradients,
    clipped_gradient_sum,
    nonprivate_sgd,
)
from privamp.calibrate import calibrate_sigma
from privamp.errors import UnreachableTargetError, UnsupportedCombinationError
from privamp.mechanisms.gaussian import GaussianProfile
from privamp.sampling import (
    MustOW,
    MustWO,
    MustWW,
    Poisson,
    WithoutReplacement,
    WithReplacement,
)

C = 1.5

# (scheme, relation on the data, expected per-copy sensitivity of the clipped-gradient sum)
CASES = [
    ("poisson/R", Poisson(0.05), "add-remove", C),
    ("poisson/S", Poisson(0.05, n=200), "substitute", 2 * C),
    ("wor/S", WithoutReplacement(200, 10), "substitute", 2 * C),
    ("wr/S", WithReplacement(200, 10), "substitute", 2 * C),
    ("wr/R (Thm 11)", WithReplacement(200, 10), "add-remove", 2 * C),
    ("must-ow/S", MustOW(200, 40, 10), "substitute", 2 * C),
    ("must-wo/S", MustWO(200, 40, 10), "substitute", 2 * C),
    ("must-ww/S", MustWW(200, 40, 10), "substitute", 2 * C),
]


# ---------------------------------------------------------------------------------------------
# the released statistic and its sensitivity
# ---------------------------------------------------------------------------------------------


def test_clipping_bounds_every_row_and_keeps_small_ones():
    g = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [1e300, -1e300]])
    out = clip_gradients(g, 1.0)
    assert np.all(np.linalg.norm(out, axis=1) <= 1.0)
    assert np.array_equal(out[1], g[1]) and np.array_equal(out[2], g[2])
    assert np.allclose(out[0], [0.6, 0.8])
    with pytest.raises(InvalidParameterError, match="clip_norm"):
        clip_gradients(g, 0.0)


@settings(max_examples=60)
@given(k=st.integers(1, 6), other=st.integers(0, 5), seed=st.integers(0, 2**32 - 1),
       clip=st.floats(0.1, 10.0))
def test_changing_a_record_with_k_copies_moves_the_sum_by_at_most_2kC(k, other, seed, clip):
    """The white-box group sensitivity that the WR/MUST amplification theorems use (δ_k with
    sensitivity k·Δ, Δ = 2C per copy under substitution) bounds the real statistic; adding or
    removing the k copies moves it by at most kC."""
    rng = np.random.default_rng(seed)
    d = 3
    grads = rng.normal(size=(other + 1, d)) * rng.uniform(0.1, 5.0)
    counts = np.append(rng.integers(1, 4, size=other), k)
    replaced = grads.copy()
    replaced[-1] = -grads[-1] * rng.uniform(1.0, 50.0)  # the opposite direction: worst case
    s = clipped_gradient_sum(grads, counts, clip)
    s2 = clipped_gradient_sum(replaced, counts, clip)
    removed = clipped_gradient_sum(grads[:-1], counts[:-1], clip)
    tol = 1e-9 * (1 + np.abs(s).max())
    assert np.linalg.norm(s - s2) <= clipped_sum_sensitivity(clip, "substitute", k) + tol
    assert np.linalg.norm(s - removed) <= clipped_sum_sensitivity(clip, "add-remove", k) + tol
    if np.linalg.norm(grads[-1]) >= clip:  # both clipped: the bound is attained
        assert np.linalg.norm(s - s2) == pytest.approx(2 * k * clip, rel=1e-9)


@pytest.mark.parametrize("name, scheme, relation, sens", CASES, ids=[c[0] for c in CASES])
def test_base_mechanism_has_the_per_copy_sensitivity(name, scheme, relation, sens):
    sgd = DPSGD(LinearRegression(), scheme=scheme, steps=20, clip_norm=C, learning_rate=0.1,
                delta=1e-5, noise_multiplier=10.0, relation=relation)
    st_ = sgd.privacy
    assert sgd.sensitivity == st_.sensitivity == sens
    assert st_.sigma == sgd.noise_std == pytest.approx(10.0 * sens)
    assert st_.relation.value == relation
    assert st_.base_relation is scheme.base_relation(relation)
    assert st_.steps == 20 and st_.scheme is scheme


def test_copies_are_counted_once_by_the_group_profiles_not_by_the_sensitivity():
    """For WR and MUST the per-step δ'(ε') is Σ_k P(K = k) δ_Gauss(ε; θ = k·2C/σ): the 2kC of k
    copies enters through the group profiles. Putting the per-copy C (add/remove's) into a
    substitution analysis would under-report ε; putting 2kC into the base would count twice."""
    scheme = MustOW(200, 40, 10)
    sgd = DPSGD(LinearRegression(), scheme=scheme, steps=50, clip_norm=C, learning_rate=0.1,
                delta=1e-5, noise_multiplier=2.0)
    sigma = sgd.noise_std
    amp = amplify(sgd.privacy.mechanism, scheme)
    eps = 1.0
    eps_prime = float(amp.points([eps])["eps_amplified"][0])
    w = scheme.multiplicity().pmf
    manual = sum(w[k] * float(GaussianProfile(k * 2 * C / sigma).delta(eps))
                 for k in range(1, w.size))
    assert float(amp.delta(eps_prime)) == pytest.approx(manual, rel=1e-6)
    # the wrong conventions, side by side
    half = Accountant().add(GaussianMechanism(sigma, C, "substitute"), 50,
                            scheme=scheme).epsilon(1e-5).upper
    assert sgd.privacy.epsilon > 1.2 * half


@pytest.mark.parametrize("name, scheme, relation, sens", CASES, ids=[c[0] for c in CASES])
def test_noise_actually_added_has_the_stated_standard_deviation(name, scheme, relation, sens):
    """With all-zero features every gradient is 0, so each step moves w by −η·noise/B exactly:
    the spread of the moves is σ = z·Δ (Δ = C or 2C as the scheme's relation says)."""
    n, d, steps, lr = 200, 10, 400, 0.05
    z = 10.0
    sgd = DPSGD(LinearRegression(), scheme=scheme, steps=steps, clip_norm=C,
                learning_rate=lr, delta=1e-5, noise_multiplier=z, relation=relation)
    res = sgd.fit(np.zeros((n, d)), np.ones(n), rng=5, keep_trajectory=True, loss_every=0)
    moves = np.diff(res.trajectory, axis=0).ravel()
    b = sgd.normaliser(n)
    assert b == (0.05 * n if isinstance(scheme, Poisson) else scheme.m)
    measured = moves.std() * b / lr
    # 4000 normal samples: the SD estimate is within ±1.1% (1 SE); ±4.5% is 4 SE
    assert measured == pytest.approx(z * sens, rel=0.045)
    assert abs(moves.mean()) < 4 * moves.std() / math.sqrt(moves.size)


@pytest.mark.parametrize("scheme, relation", [
    (Poisson(0.05), None), (WithoutReplacement(400, 20), None),
    pytest.param(WithReplacement(400, 20), "add-remove", marks=pytest.mark.slow)])
def test_calibrated_noise_is_the_calibrated_multiplier_times_the_sensitivity(scheme, relation):
    """noise_std = (σ calibrated for a unit-sensitivity statistic) × the stated sensitivity, and
    the statement agrees with an independent accountant call on that mechanism."""
    steps, delta, target = 100, 1e-5, 2.0
    sgd = DPSGD(LogisticRegression(), scheme=scheme, steps=steps, clip_norm=C,
                learning_rate=0.1, delta=delta, target_epsilon=target, relation=relation)
    unit = calibrate_sigma(target, delta, steps=steps, scheme=scheme, relation=relation)
    assert sgd.noise_std == pytest.approx(unit.value * sgd.sensitivity, rel=3e-5)
    st_ = sgd.privacy
    assert st_.epsilon <= target and st_.epsilon_lower <= st_.epsilon
    outer = scheme.natural_relation if relation is None else relation
    base = scheme.base_relation(outer)
    mech = GaussianMechanism(sgd.noise_std, clipped_sum_sensitivity(C, base), base)
    ref = Accountant().add(mech, steps, scheme=scheme, relation=outer).epsilon(delta)
    assert st_.epsilon == pytest.approx(ref.upper, rel=1e-9)
    assert st_.accountant().epsilon(delta).upper == pytest.approx(ref.upper, rel=1e-9)
    # 0.1 % less noise would break the target: calibration is tight
    lower = GaussianMechanism(sgd.noise_std * 0.999, mech.sensitivity, base)
    assert Accountant().add(lower, steps, scheme=scheme,
                            relation=outer).epsilon(delta).upper > target


def test_per_step_protocol_reports_the_exact_amplified_step_and_the_whole_run():
    scheme = WithoutReplacement(1000, 100)
    sgd = DPSGD(LinearRegression(), scheme=scheme, steps=200, clip_norm=3.0,
                learning_rate=0.04, delta=1e-3, step_epsilon=0.01)
    st_ = sgd.privacy
    assert st_.method == "per_step" and st_.step_epsilon == 0.01
    # WOR: δ' = η δ at the back-solved ε (BBG Theorem 9), here (m/n)·(1/n) = 1e-4
    assert st_.step_delta == pytest.approx(1e-4, rel=1e-6)
    assert sgd.sensitivity == 6.0 and sgd.noise_multiplier == pytest.approx(18.02, abs=0.01)
    ref = Accountant().add(st_.mechanism, 200, scheme=scheme).epsilon(1e-3)
    assert st_.epsilon == ref.upper


# ---------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------


def _linear_data(n, rng):
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = X @ np.array([1.0, 0.5, 0.2]) + rng.normal(size=n)
    return X, y


def _logistic_data(n, rng):
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    p = 1 / (1 + np.exp(-(X @ np.array([-0.5, 1.0, -1.0, 0.5]))))
    return X, (rng.random(n) < p).astype(float)


@pytest.mark.parametrize("scheme", [Poisson(0.02), WithoutReplacement(5000, 100)],
                         ids=["poisson", "wor"])
def test_linear_regression_converges_to_the_least_squares_loss(scheme):
    """ε = 8 at δ = 1e-5 over 500 steps: the final training MSE is within 5% of the least
    squares optimum, and far below the start."""
    rng = np.random.default_rng(0)
    X, y = _linear_data(5000, rng)
    w_star = np.linalg.lstsq(X, y, rcond=None)[0]
    optimum = LinearRegression().loss(w_star, X, y)
    sgd = DPSGD(LinearRegression(), scheme=scheme, steps=500, clip_norm=5.0,
                learning_rate=0.05, delta=1e-5, target_epsilon=8.0)
    res = sgd.fit(X, y, rng=1, initial_weights=[-1.0, -1.0, -1.0])
    assert res.loss_history[0] > 2 * optimum
    assert res.loss_history[-1] <= 1.05 * optimum
    assert res.privacy.epsilon <= 8.0
    assert res.loss_steps[0] == 0 and res.loss_steps[-1] == 500 and res.loss_history.size == 501


@pytest.mark.parametrize("scheme", [Poisson(0.02), MustOW(5000, 1000, 100)],
                         ids=["poisson", "must-ow"])
def test_logistic_regression_converges_to_the_optimum(scheme):
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    X, y = _logistic_data(5000, rng)
    model = LogisticRegression()
    opt = minimize(lambda w: model.loss(w, X, y), np.zeros(4),
                   jac=lambda w: model.per_example_gradients(w, X, y).mean(axis=0))
    sgd = DPSGD(model, scheme=scheme, steps=600, clip_norm=2.0, learning_rate=0.5,
                delta=1e-5, noise_multiplier=1.2)
    res = sgd.fit(X, y, rng=2)
    assert res.privacy.epsilon < 10
    assert res.loss_history[-1] <= 1.05 * opt.fun
    acc = np.mean((X @ res.weights > 0) == (y == 1))
    assert acc >= np.mean((X @ opt.x > 0) == (y == 1)) - 0.02


def test_empty_poisson_batches_still_add_noise():
    """A Poisson step with no record is a normal step: w moves by the noise alone."""
    sgd = DPSGD(LinearRegression(), scheme=Poisson(1e-4), steps=50, clip_norm=1.0,
                learning_rate=0.1, delta=1e-5, noise_multiplier=5.0)
    X = np.ones((100, 2))
    res = sgd.fit(X, np.zeros(100), rng=0, keep_trajectory=True, loss_every=0)
    assert np.sum(res.batch_sizes == 0) >= 45
    empty = np.flatnonzero(res.batch_sizes == 0)
    assert np.all(np.linalg.norm(np.diff(res.trajectory, axis=0)[empty], axis=1) > 0)


def test_randomness_only_through_rng_and_batches_have_multiplicities():
    rng = np.random.default_rng(4)
    X, y = _linear_data(300, rng)
    sgd = DPSGD(LinearRegression(), scheme=MustWW(300, 30, 60), steps=30, clip_norm=2.0,
                learning_rate=0.05, delta=1e-5, noise_multiplier=3.0)
    a = sgd.fit(X, y, rng=9)
    b = sgd.fit(X, y, rng=np.random.default_rng(9))
    c = sgd.fit(X, y, rng=10)
    assert np.array_equal(a.weights, b.weights) and not np.array_equal(a.weights, c.weights)
    assert np.all(a.batch_sizes == 60) and np.all(a.distinct <= 30)
    assert np.all(a.distinct < a.batch_sizes)


def test_nonprivate_baseline_averages_the_realised_batch():
    rng = np.random.default_rng(5)
    X, y = _linear_data(2000, rng)
    res = nonprivate_sgd(LinearRegression(), X, y, scheme=Poisson(0.05), steps=300,
                         learning_rate=0.05, rng=1)
    w_star = np.linalg.lstsq(X, y, rcond=None)[0]
    assert res.privacy is None
    assert np.allclose(res.weights, w_star, atol=0.1)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


def _sgd(**kw):
    args = {"scheme": WithoutReplacement(100, 10), "steps": 10, "clip_norm": 1.0,
            "learning_rate": 0.1, "delta": 1e-5, "noise_multiplier": 2.0}
    args.update(kw)
    return DPSGD(LinearRegression(), **args)


@pytest.mark.parametrize("kw, param", [
    ({"clip_norm": 0.0}, "clip_norm"),
    ({"clip_norm": -1.0}, "clip_norm"),
    ({"clip_norm": float("nan")}, "clip_norm"),
    ({"learning_rate": 0.0}, "learning_rate"),
    ({"steps": 0}, "steps"),
    ({"delta": 1.0}, "delta"),
    ({"noise_multiplier": -1.0}, "noise_multiplier"),
    ({"target_epsilon": 1.0}, "target_epsilon"),  # together with noise_multiplier
    ({"noise_multiplier": None}, "target_epsilon"),  # none given
    ({"noise_multiplier": None, "step_epsilon": 0.1, "account_privacy": False},
     "account_privacy"),  # only a given noise multiplier can skip the accountant
])
def test_bad_parameters_are_clear_errors(kw, param):
    with pytest.raises(InvalidParameterError) as info:
        _sgd(**kw)
    assert info.value.parameter == param


def test_unaccounted_run_has_no_statement_but_the_same_noise():
    """account_privacy=False (re-running a published noise level no accountant certifies)
    keeps σ = z·Δ and the training, and says nothing about privacy."""
    X = np.column_stack([np.ones(100), np.linspace(-1, 1, 100)])
    y = X @ [0.5, 1.0]
    accounted, bare = _sgd(), _sgd(account_privacy=False)
    assert bare.privacy is None and accounted.privacy is not None
    assert bare.noise_std == accounted.noise_std == 2.0 * bare.sensitivity
    assert bare.noise_multiplier == pytest.approx(2.0)
    fit = bare.fit(X, y, rng=3)
    assert fit.privacy is None
    assert np.array_equal(fit.weights, accounted.fit(X, y, rng=3).weights)


@pytest.mark.slow
def test_unreachable_target_is_a_clear_error():
    """ε = 1e-7 at δ = 1e-12: even σ = 10^6·Δ (the search's end) gives more."""
    with pytest.raises(UnreachableTargetError, match="target_epsilon"):
        _sgd(noise_multiplier=None, target_epsilon=1e-7, delta=1e-12, steps=10)


def test_unsupported_relation_is_named():
    with pytest.raises(UnsupportedCombinationError, match="add-remove"):
        _sgd(relation="add-remove")  # WOR has no add/remove analysis


def test_batch_larger_than_data_and_wrong_dataset_size_are_refused():
    X, y = np.zeros((50, 2)), np.zeros(50)
    with pytest.raises(InvalidParameterError) as info:
        _sgd(scheme=WithReplacement(50, 80)).fit(X, y)
    assert info.value.parameter == "m" and "larger than the data" in str(info.value)
    with pytest.raises(InvalidParameterError) as info:
        _sgd().fit(X, y)  # the scheme is for n = 100
    assert info.value.parameter == "n"
    with pytest.raises(InvalidParameterError, match="labels"):
        DPSGD(LogisticRegression(), scheme=Poisson(0.1), steps=5, clip_norm=1.0,
              learning_rate=0.1, delta=1e-5, noise_multiplier=2.0).fit(X, np.full(50, 2.0))
    with pytest.raises(InvalidParameterError, match="initial_weights"):
        _sgd(scheme=Poisson(0.1)).fit(X, y, initial_weights=[0.0])
    with pytest.raises(InvalidParameterError, match="y"):
        _sgd(scheme=Poisson(0.1)).fit(X, y[:-1])
