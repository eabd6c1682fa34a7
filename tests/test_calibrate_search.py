"""The calibration search (``privamp.calibrate``): generated over targets, parameters and
boundaries, against independent references.

The generic search is checked against functions whose boundary is known in closed form (power
laws, exponentials) or by brute force (staircases, integers); the accountant-backed calibrations
against a second, independent accountant evaluation at the returned value and just beyond it
(ε(value) ≤ target, ε(value moved by 2 rtol towards less privacy) > target).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.calibrate import calibrate, calibrate_rate, calibrate_sigma, calibrate_steps
from privamp.errors import InvalidParameterError, UnreachableTargetError
from privamp.sampling import Poisson


def certified(mech, steps, delta, scheme=None):
    return Accountant().add(mech, steps, scheme=scheme).epsilon(delta, lower=False).upper


# ---- the generic search on functions with a known boundary ---------------------------------


@settings(max_examples=60, deadline=None)
@given(c=st.floats(0.01, 100.0), k=st.floats(0.2, 4.0), target=st.floats(0.05, 50.0),
       increasing=st.booleans(), rtol=st.sampled_from([1e-9, 1e-6, 1e-5, 1e-3, 0.1]),
       log_guess=st.floats(-8.0, 8.0), coarse_bias=st.sampled_from([None, 1e-4, 1e-2]))
def test_power_laws_boundary_within_rtol(c, k, target, increasing, rtol, log_guess,
                                         coarse_bias):
    sign = 1.0 if increasing else -1.0

    def eps(v):
        return c * v ** (sign * k)

    coarse = None if coarse_bias is None else (lambda v: eps(v) * (1 + coarse_bias))
    lo, hi = 1e-6, 1e6
    root = (target / c) ** (sign / k)   # the exact boundary
    kwargs = dict(parameter="v", target_epsilon=target, increasing=increasing, lo=lo, hi=hi,
                  rtol=rtol, guess=math.exp(log_guess), coarse=coarse)
    if eps(lo if increasing else hi) > target:     # even the private end overshoots
        with pytest.raises(UnreachableTargetError):
            calibrate(eps, **kwargs)
        return
    value, e, calls = calibrate(eps, **kwargs)
    assert e == eps(value) and e <= target
    if eps(hi if increasing else lo) <= target:    # the whole range is feasible
        assert value == (hi if increasing else lo)
        return
    # feasible, and within rtol of the boundary on the feasible side
    assert (value <= root * (1 + 1e-12)) if increasing else (value >= root * (1 - 1e-12))
    assert abs(value - root) <= 2 * rtol * root + 1e-12 * root
    assert calls < 200


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.floats(0.01, 3.0), min_size=1, max_size=30),
       target=st.floats(0.01, 40.0), guess=st.integers(1, 400))
def test_integer_staircase_against_brute_force(steps, target, guess):
    # a monotone staircase with flat stretches and jumps: the largest feasible integer in
    # [1, 300] by brute force is what the search must find
    cum = [sum(steps[: i + 1]) for i in range(len(steps))]

    def eps(t):
        return cum[min(int(t) // 10, len(cum) - 1)] + 1e-3 * t

    feasible = [t for t in range(1, 301) if eps(t) <= target]
    if not feasible:
        with pytest.raises(UnreachableTargetError):
            calibrate(eps, parameter="t", target_epsilon=target, increasing=True, lo=1,
                      hi=300, integer=True, guess=guess)
        return
    t, e, _ = calibrate(eps, parameter="t", target_epsilon=target, increasing=True, lo=1,
                        hi=300, integer=True, guess=guess, coarse=lambda x: eps(x) * 1.01)
    assert t == max(feasible) and e <= target


def test_evaluator_failures_and_flat_regions():
    from privamp.errors import NumericalError

    def eps(v):  # beyond the memory bound below 0.5, exactly 0 above 4 (an identical pair)
        if v < 0.5:
            raise NumericalError("too fine")
        return 0.0 if v > 4 else 1.0 / v

    v, e, _ = calibrate(eps, parameter="v", target_epsilon=1.2, increasing=False, lo=1e-3,
                        hi=1e3, guess=1e-2, rtol=1e-7)
    assert e <= 1.2 and abs(v - 1 / 1.2) <= 2e-7
    v, e, _ = calibrate(eps, parameter="v", target_epsilon=1e-3, increasing=False, lo=1e-3,
                        hi=1e3, guess=1.0)
    assert e == 0.0 and 4 < v and eps(v / (1 + 2e-5)) > 1e-3


def test_bad_search_parameters():
    for bad in (0.0, -1e-3, 0.6, math.nan):
        with pytest.raises(InvalidParameterError, match="rtol"):
            calibrate(lambda v: v, parameter="v", target_epsilon=1.0, increasing=True, lo=0.1,
                      hi=10.0, rtol=bad)
        with pytest.raises(InvalidParameterError, match="rtol"):
            calibrate_sigma(1.0, 1e-5, steps=10, rtol=bad)
    with pytest.raises(InvalidParameterError, match="slope"):
        calibrate(lambda v: v, parameter="v", target_epsilon=1.0, increasing=True, lo=0.1,
                  hi=10.0, slope=-1.0)
    with pytest.raises(InvalidParameterError, match="lo"):
        calibrate(lambda v: v, parameter="v", target_epsilon=1.0, increasing=True, lo=0.0,
                  hi=10.0)


# ---- the accountant-backed calibrations ------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(target=st.floats(0.2, 10.0), steps=st.sampled_from([1, 2, 50, 1000]),
       rate=st.sampled_from([1e-3, 0.01, 0.3, 1.0]), log_delta=st.floats(-9.0, -3.0),
       rtol=st.sampled_from([1e-5, 1e-3]))
def test_sigma_never_overshoots_and_is_within_rtol(target, steps, rate, log_delta, rtol):
    delta = 10.0**log_delta
    c = calibrate_sigma(target, delta, steps=steps, scheme=Poisson(rate), rtol=rtol)
    assert c.epsilon <= target and c.evaluations >= 1
    assert c.epsilon_lower is not None and c.epsilon_lower <= c.epsilon
    assert certified(GaussianMechanism(c.value), steps, delta, Poisson(rate)) <= target
    assert certified(GaussianMechanism(c.value * (1 - 2 * rtol)), steps, delta,
                     Poisson(rate)) > target


@settings(max_examples=5, deadline=None)
@given(target=st.floats(0.3, 6.0), steps=st.sampled_from([1, 10, 1000]),
       sigma=st.sampled_from([0.7, 1.0, 3.0]))
def test_rate_never_overshoots_and_is_within_rtol(target, steps, sigma):
    mech = GaussianMechanism(sigma)
    delta = 1e-5
    try:
        c = calibrate_rate(target, delta, steps=steps, mechanism=mech, report_lower=False)
    except UnreachableTargetError:
        # then even the smallest rate of the range overshoots
        assert certified(mech, steps, delta, Poisson(1e-9)) > target
        return
    assert c.epsilon <= target
    assert certified(mech, steps, delta, Poisson(c.value)) <= target
    if c.value < 1.0:
        assert certified(mech, steps, delta, Poisson(min(1.0, c.value * (1 + 2e-5)))) > target
    else:  # the boundary q = 1: every rate works
        assert certified(mech, steps, delta, Poisson(1.0)) <= target


@settings(max_examples=4, deadline=None)
@given(target=st.floats(0.5, 4.0), sigma=st.sampled_from([1.0, 2.0]),
       rate=st.sampled_from([0.01, 0.1, 1.0]))
def test_steps_boundary_is_exact(target, sigma, rate):
    mech = GaussianMechanism(sigma)
    try:
        c = calibrate_steps(target, 1e-5, mechanism=mech, scheme=Poisson(rate),
                            max_steps=20_000, report_lower=False)
    except UnreachableTargetError:
        assert certified(mech, 1, 1e-5, Poisson(rate)) > target   # T = 1 already overshoots
        return
    assert c.epsilon <= target
    if c.value < 20_000:
        assert certified(mech, c.value + 1, 1e-5, Poisson(rate)) > target


def test_unreachable_and_whole_range_boundaries():
    mech = GaussianMechanism(0.3)
    with pytest.raises(UnreachableTargetError, match="steps = 1"):
        calibrate_steps(0.05, 1e-5, mechanism=mech)               # T = 1 overshoots
    tiny = calibrate_rate(1e-4, 1e-5, steps=10, mechanism=mech, report_lower=False)
    assert certified(mech, 10, 1e-5, Poisson(tiny.value)) <= 1e-4    # a tiny target
    c = calibrate_rate(100.0, 1e-5, steps=3, mechanism=GaussianMechanism(1.0))
    assert c.value == 1.0 and c.epsilon <= 100.0                 # every rate works
    # the evaluations are counted: every search evaluates, and the bracket is one more
    assert c.evaluations >= 2 and 0 <= c.coarse_evaluations < c.evaluations
