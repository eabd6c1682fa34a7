"""NoisyProjSGD (BBGG 2019, Algorithm 1): convergence on a strongly convex problem, iterates in
the constraint set, randomness only through ``rng``, the privacy statement it returns, and the
checks it makes on its inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privamp import InvalidParameterError
from privamp.amplification.iteration import NoisySgdPrivacy
from privamp.applications import (
    Box,
    EuclideanBall,
    NoisyProjSGD,
    RegularizedLogisticLoss,
    Unconstrained,
)


def logistic_data(n, dim, rng):
    a = rng.normal(size=(n, dim))
    a /= np.maximum(1.0, np.linalg.norm(a, axis=1))[:, None]
    w = np.linspace(1.5, -1.0, dim)
    b = np.where(a @ w + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return a, b


def test_converges_on_regularised_logistic_loss_and_stays_in_the_ball():
    """One pass over 8000 records: the loss falls from log 2 to within 0.01 of the optimum, and
    every iterate lies in the ball."""
    rng = np.random.default_rng(0)
    a, b = logistic_data(8000, 3, rng)
    loss = RegularizedLogisticLoss(regularization=0.1, radius=2.0)
    x_star = loss.minimize(a, b)
    f_star = loss.loss(x_star, a, b)
    sgd = NoisyProjSGD(loss.gradient, step_size=0.02, sigma=0.5, lipschitz=loss.lipschitz,
                       smoothness=loss.smoothness, strong_convexity=loss.strong_convexity,
                       constraint=loss.constraint)
    res = sgd.run(zip(a, b, strict=True), x0=np.zeros(3), rng=1, return_path=True)
    f0 = loss.loss(np.zeros(3), a, b)
    f = loss.loss(res.x, a, b)
    assert f < f0 - 0.05
    assert f - f_star < 0.01
    assert np.all(np.linalg.norm(res.path, axis=1) <= 2.0 * (1 + 1e-12))
    assert res.path.shape == (8001, 3) and np.array_equal(res.path[-1], res.x)
    # the loss along the path decreases on average: last quarter far below the first points
    late = np.mean([loss.loss(x, a, b) for x in res.path[-2000::200]])
    assert late < loss.loss(res.path[10], a, b)


def test_ball_constraint_is_active_and_respected():
    """A small ball excluding the optimum: iterates pile up on the sphere, never outside, and
    end near the constrained optimum."""
    rng = np.random.default_rng(2)
    a, b = logistic_data(6000, 2, rng)
    loss = RegularizedLogisticLoss(regularization=0.05, radius=0.3)
    x_star = loss.minimize(a, b)
    assert np.linalg.norm(x_star) == pytest.approx(0.3, rel=1e-6)
    sgd = NoisyProjSGD(loss.gradient, 0.05, 0.2, loss.lipschitz, loss.smoothness,
                       loss.strong_convexity, loss.constraint)
    res = sgd.run(zip(a, b, strict=True), x0=np.zeros(2), rng=3, return_path=True)
    norms = np.linalg.norm(res.path, axis=1)
    assert np.all(norms <= 0.3 * (1 + 1e-12))
    assert np.mean(norms[1000:] > 0.3 * (1 - 1e-9)) > 0.5
    assert loss.loss(res.x, a, b) - loss.loss(x_star, a, b) < 0.01


def test_box_constraint_quadratic_mean():
    """ℓ(x, z) = ½‖x − z‖² on a box: iterates stay in the box, and averaged over runs the final
    iterate sits at the projection of the data mean."""
    box = Box(lower=[-0.5, 0.0], upper=[0.5, 2.0])
    data = np.tile([1.0, 0.8], (400, 1))
    sgd = NoisyProjSGD(lambda x, z: x - z, step_size=0.1, sigma=0.5, lipschitz=3.0,
                       smoothness=1.0, strong_convexity=1.0, constraint=box)
    rng = np.random.default_rng(4)
    finals = []
    for _ in range(60):
        res = sgd.run(data, x0=np.zeros(2), rng=rng, return_path=True)
        assert np.all(res.path >= box.lower) and np.all(res.path <= box.upper)
        finals.append(res.x)
    finals = np.array(finals)
    assert finals[:, 0].mean() == pytest.approx(0.5, abs=0.05)  # pinned at the face
    assert finals[:, 1].mean() == pytest.approx(0.8, abs=0.05)


def test_randomness_only_through_rng():
    sgd = NoisyProjSGD(lambda x, z: x - z, 0.5, 1.0, 2.0, 1.0, 1.0, EuclideanBall(1.0))
    data = np.full((30, 2), 0.2)
    a = sgd.run(data, x0=np.zeros(2), rng=11).x
    b = sgd.run(data, x0=np.zeros(2), rng=np.random.default_rng(11)).x
    c = sgd.run(data, x0=np.zeros(2), rng=12).x
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    # a sampled start x0 ~ ξ0 also uses the same generator
    d = sgd.run(data, x0=lambda g: g.uniform(-0.1, 0.1, size=2), rng=5).x
    e = sgd.run(data, x0=lambda g: g.uniform(-0.1, 0.1, size=2), rng=5).x
    assert np.array_equal(d, e)


def test_privacy_statement_matches_theorem5():
    loss = RegularizedLogisticLoss(0.1, 3.0)
    sgd = NoisyProjSGD(loss.gradient, 0.1, 2.0, loss.lipschitz, loss.smoothness,
                       loss.strong_convexity, loss.constraint)
    rng = np.random.default_rng(6)
    a, b = logistic_data(50, 2, rng)
    res = sgd.run(zip(a, b, strict=True), np.zeros(2), rng=rng)
    expected = NoisySgdPrivacy(50, 0.1, loss.lipschitz, loss.smoothness,
                               loss.strong_convexity, 2.0)
    assert res.privacy == expected
    assert res.path is None
    assert res.epsilon(1, 1e-5) == expected.epsilon(1, 1e-5)
    assert res.epsilon(1, 1e-5) < res.epsilon(50, 1e-5)
    assert sgd.privacy(50) == expected


def test_logistic_loss_constants_hold():
    """C, β, ρ are valid: gradient norms ≤ C on the ball, gradient differences within
    [ρ, β] × distance (random checks)."""
    loss = RegularizedLogisticLoss(0.2, 1.5, feature_bound=2.0)
    assert loss.lipschitz == pytest.approx(2.0 + 0.3)
    assert loss.smoothness == pytest.approx(1.0 + 0.2)
    rng = np.random.default_rng(7)
    for _ in range(500):
        a = rng.normal(size=3)
        a *= rng.uniform(0, 2.0) / np.linalg.norm(a)
        z = (a, float(rng.choice([-1.0, 1.0])))
        x = loss.constraint.project(rng.normal(size=3) * 2)
        y = loss.constraint.project(rng.normal(size=3) * 2)
        gx, gy = loss.gradient(x, z), loss.gradient(y, z)
        assert np.linalg.norm(gx) <= loss.lipschitz * (1 + 1e-12)
        d = np.linalg.norm(x - y)
        assert np.linalg.norm(gx - gy) <= loss.smoothness * d * (1 + 1e-9) + 1e-15
        assert (gx - gy) @ (x - y) >= loss.strong_convexity * d * d * (1 - 1e-9) - 1e-15


# ---------------------------------------------------------------------------------------------
# projections
# ---------------------------------------------------------------------------------------------


vectors = st.lists(st.floats(-50, 50), min_size=3, max_size=3).map(np.array)


@given(vectors, vectors)
def test_projections_are_non_expansive_and_idempotent(x, y):
    for c in (EuclideanBall(2.0), EuclideanBall(1.0, center=[1.0, -1.0, 0.5]),
              Box(-1.0, [1.0, 2.0, 3.0]), Unconstrained()):
        px, py = c.project(x), c.project(y)
        assert np.linalg.norm(px - py) <= np.linalg.norm(x - y) * (1 + 1e-12) + 1e-12
        assert c.contains(px)
        np.testing.assert_allclose(c.project(px), px, rtol=1e-12, atol=1e-12)


def test_projection_values_and_validation():
    np.testing.assert_allclose(EuclideanBall(1.0).project([3.0, 4.0]), [0.6, 0.8])
    np.testing.assert_allclose(EuclideanBall(1.0, [1.0, 1.0]).project([1.0, 3.0]), [1.0, 2.0])
    assert not EuclideanBall(1.0).contains([0.8, 0.8])
    with pytest.raises(InvalidParameterError, match="radius"):
        EuclideanBall(0.0)
    with pytest.raises(InvalidParameterError, match="radius"):
        EuclideanBall(math.nan)
    with pytest.raises(InvalidParameterError, match="upper"):
        Box([0.0, 1.0], [1.0, 0.5])
    with pytest.raises(InvalidParameterError, match="x"):
        EuclideanBall(1.0, [0.0, 0.0]).project([1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


def make(**kwargs):
    params = {"gradient": lambda x, z: x - z, "step_size": 0.5, "sigma": 1.0,
              "lipschitz": 2.0, "smoothness": 1.0, "strong_convexity": 1.0,
              "constraint": EuclideanBall(1.0)}
    params.update(kwargs)
    return NoisyProjSGD(**params)


@pytest.mark.parametrize("kwargs, name", [
    ({"step_size": 1.0 + 1e-9}, "step_size"),   # η ≤ 2/(β + ρ) = 1
    ({"step_size": -0.1}, "step_size"),
    ({"sigma": 0.0}, "sigma"),
    ({"lipschitz": -1.0}, "lipschitz"),
    ({"strong_convexity": 1.5}, "strong_convexity"),
    ({"gradient": "not callable"}, "gradient"),
    ({"constraint": "ball"}, "constraint"),
])
def test_construction_errors(kwargs, name):
    with pytest.raises(InvalidParameterError) as info:
        make(**kwargs)
    assert info.value.parameter == name


def test_step_size_at_the_boundary_is_accepted():
    assert make(step_size=1.0).step_size == 1.0


def test_run_errors_name_the_parameter():
    sgd = make()
    data = np.full((5, 2), 0.1)
    with pytest.raises(InvalidParameterError, match="x0") as info:
        sgd.run(data, x0=np.array([2.0, 0.0]), rng=0)  # outside the ball
    assert info.value.parameter == "x0"
    with pytest.raises(InvalidParameterError) as info:
        sgd.run([], x0=np.zeros(2), rng=0)
    assert info.value.parameter == "data"
    with pytest.raises(InvalidParameterError) as info:
        sgd.run(data, x0=np.zeros(2), rng=-3)
    assert info.value.parameter == "rng"
    bad_shape = make(gradient=lambda x, z: np.zeros(3))
    with pytest.raises(InvalidParameterError) as info:
        bad_shape.run(data, x0=np.zeros(2), rng=0)
    assert info.value.parameter == "gradient"
    nan_grad = make(gradient=lambda x, z: np.array([math.nan, 0.0]))
    with pytest.raises(InvalidParameterError) as info:
        nan_grad.run(data, x0=np.zeros(2), rng=0)
    assert info.value.parameter == "gradient"


def test_a_gradient_above_the_stated_lipschitz_constant_is_refused():
    """The privacy statement would be false: C must bound every gradient seen."""
    sgd = make(lipschitz=0.5)
    with pytest.raises(InvalidParameterError, match="record 1 has gradient norm") as info:
        sgd.run(np.full((5, 2), 3.0), x0=np.zeros(2), rng=0)
    assert info.value.parameter == "lipschitz"


def test_logistic_loss_validates_records():
    loss = RegularizedLogisticLoss(0.1, 1.0)
    with pytest.raises(InvalidParameterError, match="labels"):
        loss.gradient(np.zeros(2), (np.array([0.5, 0.0]), 0.0))
    with pytest.raises(InvalidParameterError, match="feature_bound"):
        loss.gradient(np.zeros(2), (np.array([3.0, 0.0]), 1.0))
    with pytest.raises(InvalidParameterError, match="records"):
        loss.gradient(np.zeros(2), 1.0)
    with pytest.raises(InvalidParameterError, match="regularization"):
        RegularizedLogisticLoss(0.0, 1.0)
