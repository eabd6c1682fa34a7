"""Calibration never overshoots, and is not needlessly conservative.

For every calibrated parameter: the certified ε at the returned value is at most the target, and
a slightly less private value (noise 0.1 % smaller, rate 0.1 % larger, one more step, one more
record in the MUST stage) has a certified ε above the target.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import GaussianMechanism, LaplaceMechanism
from privamp.accountant import Accountant
from privamp.calibrate import (
    calibrate,
    calibrate_must,
    calibrate_rate,
    calibrate_sigma,
    calibrate_steps,
)
from privamp.errors import InvalidParameterError, UnreachableTargetError
from privamp.sampling import MustOW, Poisson


def certified(mech, steps, delta, scheme=None):
    return Accountant().add(mech, steps, scheme=scheme).epsilon(delta, lower=False).upper


@settings(max_examples=8, deadline=None)
@given(target=st.floats(0.3, 8.0), steps=st.integers(1, 40),
       log_delta=st.floats(-10.0, -3.0))
def test_sigma_never_overshoots_and_is_tight(target, steps, log_delta):
    delta = 10.0**log_delta
    c = calibrate_sigma(target, delta, steps=steps, report_lower=False)
    assert c.epsilon <= target
    assert certified(GaussianMechanism(c.value), steps, delta) <= target
    assert certified(GaussianMechanism(c.value * (1 - 1e-3)), steps, delta) > target


def test_sigma_with_poisson_sampling():
    c = calibrate_sigma(2.0, 1e-5, steps=300, scheme=Poisson(0.02))
    assert c.parameter == "sigma" and c.epsilon <= 2.0
    assert c.epsilon_lower is not None and c.epsilon_lower <= c.epsilon
    assert certified(GaussianMechanism(c.value * 0.999), 300, 1e-5, Poisson(0.02)) > 2.0
    # the RDP backend is looser, so it needs more noise
    r = calibrate_sigma(2.0, 1e-5, steps=300, scheme=Poisson(0.02), backend="rdp")
    assert r.value >= c.value and r.epsilon_lower is None


def test_laplace_scale():
    c = calibrate_sigma(1.0, 1e-6, steps=5, mechanism="laplace")
    assert c.parameter == "scale"
    assert certified(LaplaceMechanism(c.value), 5, 1e-6) <= 1.0
    assert certified(LaplaceMechanism(c.value * 0.999), 5, 1e-6) > 1.0


def test_rate():
    mech = GaussianMechanism(1.0)
    c = calibrate_rate(1.5, 1e-5, steps=500, mechanism=mech)
    assert certified(mech, 500, 1e-5, Poisson(c.value)) <= 1.5
    assert certified(mech, 500, 1e-5, Poisson(min(1.0, c.value * 1.001))) > 1.5
    # a generous target: every rate works
    assert calibrate_rate(50.0, 1e-5, steps=2, mechanism=mech).value == 1.0


def test_steps():
    mech = GaussianMechanism(2.0)
    c = calibrate_steps(1.0, 1e-5, mechanism=mech, scheme=Poisson(0.05))
    assert isinstance(c.value, int) and c.value >= 1
    assert certified(mech, c.value, 1e-5, Poisson(0.05)) <= 1.0
    assert certified(mech, c.value + 1, 1e-5, Poisson(0.05)) > 1.0
    capped = calibrate_steps(1.0, 1e-5, mechanism=mech, scheme=Poisson(0.05), max_steps=10)
    assert capped.value == 10


@pytest.mark.slow
def test_must_sizes():
    mech = GaussianMechanism(2.0, relation="substitute")
    c = calibrate_must(1.0, 1e-5, steps=20, mechanism=mech, n=600, kind="ow", b=150)
    assert c.parameter == "m"
    assert certified(mech, 20, 1e-5, MustOW(600, 150, c.value)) <= 1.0
    assert certified(mech, 20, 1e-5, MustOW(600, 150, c.value + 1)) > 1.0
    d = calibrate_must(1.0, 1e-5, steps=20, mechanism=mech, n=600, kind="ow", m=10)
    assert d.parameter == "b"
    assert certified(mech, 20, 1e-5, MustOW(600, d.value, 10)) <= 1.0
    if d.value < 600:
        assert certified(mech, 20, 1e-5, MustOW(600, d.value + 1, 10)) > 1.0
    # not monotone in b: with b = 1 every draw repeats one record
    assert certified(mech, 20, 1e-5, MustOW(600, 1, 10)) > 1.0


def test_unreachable_targets_and_bad_input():
    with pytest.raises(UnreachableTargetError, match="steps = 1"):
        calibrate_steps(0.1, 1e-5, mechanism=GaussianMechanism(1.0))
    with pytest.raises(UnreachableTargetError):
        calibrate_must(0.01, 1e-5, steps=100, mechanism=GaussianMechanism(0.5,
                                                                          relation="substitute"),
                       n=100, kind="ww", b=50)
    assert issubclass(UnreachableTargetError, InvalidParameterError)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(InvalidParameterError):
            calibrate_sigma(bad, 1e-5, steps=10)
    with pytest.raises(InvalidParameterError):
        calibrate_sigma(1.0, 1.5, steps=10)
    with pytest.raises(InvalidParameterError):
        calibrate_sigma(1.0, 1e-5, steps=0)
    with pytest.raises(InvalidParameterError):
        calibrate_sigma(1.0, 1e-5, steps=10, mechanism="exponential")
    with pytest.raises(InvalidParameterError):
        calibrate_must(1.0, 1e-5, steps=10, mechanism=GaussianMechanism(1.0, relation="substitute"),
                       n=100, b=10, m=5)


def test_generic_search_keeps_the_feasible_end():
    # ε(v) = 1/v (noise-like): the boundary for target 0.5 is v = 2
    v, eps, calls = calibrate(lambda x: 1.0 / x, parameter="v", target_epsilon=0.5,
                              increasing=False, lo=0.1, hi=100.0, rtol=1e-9)
    assert eps <= 0.5 and v >= 2.0 and v - 2.0 < 1e-8 and calls < 80
    # integer, increasing: ε(t) = 0.1 t, target 1 → 10
    t, eps, _ = calibrate(lambda x: 0.1 * x, parameter="t", target_epsilon=1.0, increasing=True,
                          lo=1, hi=1000, integer=True)
    assert t == 10 and eps <= 1.0
