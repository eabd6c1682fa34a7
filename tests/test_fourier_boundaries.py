"""The Fourier backend at its boundaries, against exact references written here with mpmath.

References (nothing from privamp's profiles, curves or accountants):

* **Gaussian at Poisson rate 1** and without sampling: T steps of noise multiplier σ compose to
  μ-GDP, μ = √T/σ: ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``.
* **One Poisson-subsampled step** of a base pair (P, Q) under add/remove: the *remove* pair
  ``((1 − γ)Q + γP, Q)`` and the *add* pair ``(Q, (1 − γ)Q + γP)``, the worse of the two; the
  hockey-stick divergence in closed form for the Gaussian (P = N(1, σ²), Q = N(0, σ²)) and the
  Laplace (P = Lap(1, b), Q = Lap(0, b)) pairs.
* **Randomized response** (P = (p, 1 − p), Q = (1 − p, p)), subsampled or not: every pair has two
  outcomes, so T steps compose to a binomial law of the loss — exact in mpmath.
* **Two Laplace steps**: the single-step δ functional in closed form, integrated over the
  continuous part of the first step's loss with mpmath quadrature.

An ε bracket [lo, up] contains the exact ε(δ) = inf{ε ≥ 0: δ(ε) ≤ δ} iff δ_ref(up) ≤ δ and
(lo = 0 or δ_ref(lo) ≥ δ) — δ_ref is non-increasing — so no root finding is needed.
"""

from __future__ import annotations

import math
import time

import mpmath as mp
import pytest

from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.errors import NumericalError, PrivampError
from privamp.mechanisms import LaplaceMechanism, RandomizedResponse
from privamp.pld.fourier import fourier_accountant
from privamp.pld.mixture import MixturePLD
from privamp.sampling import WOR, Poisson

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 40

DELTAS = (1e-3, 1e-6, 1e-9, 1e-12)


# ---------------------------------------------------------------------------------------------
# exact references
# ---------------------------------------------------------------------------------------------


def gdp_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def _sf_gauss(x, mean, sigma):
    return mp.ncdf(-(x - mean) / sigma)


def subsampled_gaussian_delta(gamma, sigma, eps):
    """One Poisson-subsampled Gaussian step (sensitivity 1), worse orientation."""
    g, s, e = mp.mpf(gamma), mp.mpf(sigma), mp.exp(mp.mpf(eps))
    # remove: ∫(γp − c q)_+, c = e^ε − 1 + γ > 0; p/q = exp((2x − 1)/(2σ²)) > c/γ ⇔ x > x*
    c = e - 1 + g
    x = s * s * mp.log(c / g) + mp.mpf(1) / 2
    rem = g * _sf_gauss(x, 1, s) - c * _sf_gauss(x, 0, s)
    # add: ∫(a q − β p)_+, a = 1 − e^ε(1 − γ), β = e^ε γ; region x < x*
    a, beta = 1 - e * (1 - g), e * g
    add = mp.mpf(0)
    if a > 0:
        x = s * s * mp.log(a / beta) + mp.mpf(1) / 2
        add = a * (1 - _sf_gauss(x, 0, s)) - beta * (1 - _sf_gauss(x, 1, s))
    return max(rem, add, mp.mpf(0))


def _sf_laplace(x, mean, b):
    z = (x - mean) / b
    return mp.exp(-z) / 2 if z >= 0 else 1 - mp.exp(z) / 2


def subsampled_laplace_delta(gamma, b, eps):
    """One Poisson-subsampled Laplace step (sensitivity 1, scale b), worse orientation. The
    likelihood ratio p/q is e^{−1/b} on x ≤ 0, e^{(2x−1)/b} on [0, 1], e^{1/b} on x ≥ 1."""
    g, b, e = mp.mpf(gamma), mp.mpf(b), mp.exp(mp.mpf(eps))
    c = e - 1 + g  # remove: region p/q > c/γ ≥ 1
    t = mp.log(c / g)
    rem = mp.mpf(0)
    if t < 1 / b:
        x = (b * t + 1) / 2
        rem = g * _sf_laplace(x, 1, b) - c * _sf_laplace(x, 0, b)
    a, beta = 1 - e * (1 - g), e * g  # add: region p/q < a/β
    add = mp.mpf(0)
    if a > 0:
        t = mp.log(a / beta)
        if t > 1 / b:
            add = a - beta
        elif t > -1 / b:
            x = (b * t + 1) / 2
            add = a * (1 - _sf_laplace(x, 0, b)) - beta * (1 - _sf_laplace(x, 1, b))
    return max(rem, add, mp.mpf(0))


def _binomial_delta(pa, la, lb, steps, eps, p_inf=0):
    eps = mp.mpf(eps)
    tot = mp.mpf(0)
    for j in range(steps + 1):
        s = j * la + (steps - j) * lb
        if s > eps:
            tot += mp.binomial(steps, j) * pa**j * (1 - pa) ** (steps - j) * (1 - mp.exp(eps - s))
    return tot


def rr_delta(p, gamma, steps, eps):
    """T steps of randomized response (P = (p, 1−p), Q = (1−p, p)), Poisson-subsampled at γ
    (γ = 1: no sampling): the worse orientation, exactly."""
    p, g = mp.mpf(p), mp.mpf(gamma)
    P, Q = (p, 1 - p), (1 - p, p)
    mix = tuple((1 - g) * qq + g * pp for pp, qq in zip(P, Q, strict=True))
    out = mp.mpf(0)
    for first, second in ((mix, Q), (Q, mix)):  # remove, add
        la, lb = (mp.log(first[i] / second[i]) for i in range(2))
        out = max(out, _binomial_delta(first[0], la, lb, steps, eps))
    return out


def _laplace_g(tau, b):
    """E[(1 − e^{τ − L})_+] for one Laplace step (X ~ Lap(1, b), L = (|X| − |X − 1|)/b):
    atoms +1/b (mass ½) and −1/b (mass ½e^{−1/b}), density (1/2b)e^{−(1−x)/b} of X on (0, 1)
    where L = (2x − 1)/b, in closed form."""
    tau, b = mp.mpf(tau), mp.mpf(b)
    out = mp.mpf(0)
    if tau < 1 / b:
        out += (1 - mp.exp(tau - 1 / b)) / 2
    if tau < -1 / b:
        out += mp.exp(-1 / b) * (1 - mp.exp(tau + 1 / b)) / 2
    x0 = max(mp.mpf(0), (b * tau + 1) / 2)  # L > τ ⇔ x > x0
    if x0 < 1:
        k = mp.exp(-1 / b) / 2
        out += k * ((mp.exp(1 / b) - mp.exp(x0 / b))
                    - mp.exp(tau + 1 / b) * (mp.exp(-x0 / b) - mp.exp(-1 / b)))
    return out


def laplace2_delta(b, eps):
    """Two Laplace steps: E over the first loss of the single-step functional at ε − L₁."""
    b, eps = mp.mpf(b), mp.mpf(eps)
    out = _laplace_g(eps - 1 / b, b) / 2 + mp.exp(-1 / b) * _laplace_g(eps + 1 / b, b) / 2
    kinks = sorted({mp.mpf(0), mp.mpf(1)} | {x for x in (b * eps / 2, (b * eps + 2) / 2)
                                             if 0 < x < 1})
    dens = lambda x: mp.exp(-(1 - x) / b) / (2 * b)  # noqa: E731
    out += mp.quad(lambda x: _laplace_g(eps - (2 * x - 1) / b, b) * dens(x), kinks)
    return out


def contains_epsilon(bracket, delta_ref, delta):
    """The ε bracket contains the exact ε(δ) (see the module docstring)."""
    up_ok = bracket.upper == math.inf or delta_ref(bracket.upper) <= delta
    lo_ok = bracket.lower == 0.0 or delta_ref(bracket.lower) >= delta
    return up_ok and lo_ok


# ---------------------------------------------------------------------------------------------
# the references themselves
# ---------------------------------------------------------------------------------------------


def test_references_agree_with_each_other():
    # rate 1: the subsampled formulas are the plain mechanisms
    for eps in (0.0, 0.3, 2.0):
        assert subsampled_gaussian_delta(1, 2.0, eps) == pytest.approx(gdp_delta(0.5, eps),
                                                                       rel=1e-30)
        # randomized response at rate 1 and T = 1: ψ_p(ε) = [p − e^ε(1 − p)]_+
        assert rr_delta(0.75, 1, 1, eps) == pytest.approx(max(0.75 - math.exp(eps) / 4, 0),
                                                         rel=1e-12, abs=1e-30)
    # Laplace at rate 1, T = 1: ψ(ε) = 1 − e^{(ε − 1/b)/2} for ε ≤ 1/b (b = 1)
    for eps in (0.0, 0.4, 0.9):
        assert subsampled_laplace_delta(1, 1, eps) == pytest.approx(
            1 - math.exp((eps - 1) / 2), rel=1e-12)
    # two Laplace steps: the functional at ε = 0 is TV; quadrature against a brute-force sum
    b = mp.mpf(1)
    tv = laplace2_delta(b, 0)
    assert 0 < tv < 1
    n = 4000  # midpoint rule on the continuous parts (both steps)
    xs = [(i + mp.mpf(1) / 2) / n for i in range(n)]
    dens = [mp.exp(-(1 - x) / b) / (2 * b) / n for x in xs]
    ls = [(2 * x - 1) / b for x in xs]
    crude = _laplace_g(-1 / b, b) / 2 + mp.exp(-1 / b) * _laplace_g(1 / b, b) / 2 \
        + mp.fsum(d * _laplace_g(-lv, b) for d, lv in zip(dens, ls, strict=True))
    assert tv == pytest.approx(crude, rel=1e-6)


# ---------------------------------------------------------------------------------------------
# the Gaussian: rate 1 (μ-GDP), rates 1e-9 and 1 − 1e-12
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", [None, Poisson(1.0)], ids=["plain", "rate-1"])
@pytest.mark.parametrize(("sigma", "steps"), [(1.0, 1), (0.5, 10), (3.0, 100)])
def test_gaussian_composition_is_mu_gdp(scheme, sigma, steps):
    mu = math.sqrt(steps) / sigma
    acc = Accountant("fourier").add(GaussianMechanism(sigma), steps, scheme=scheme)
    for delta in DELTAS:
        b = acc.epsilon(delta)
        assert contains_epsilon(b, lambda e: gdp_delta(mu, e), delta), (delta, b)
        assert b.upper < math.inf
    for eps in (0.0, 0.5, 3.0):
        b = acc.delta(eps)
        assert b.lower <= gdp_delta(mu, eps) <= b.upper, (eps, b)


@pytest.mark.parametrize("rate", [1e-9, 1 - 1e-12, 0.01])
@pytest.mark.parametrize("sigma", [1.0, 0.5])
def test_one_subsampled_gaussian_step(rate, sigma):
    acc = Accountant("fourier").add(GaussianMechanism(sigma), 1, scheme=Poisson(rate))
    ref = lambda e: subsampled_gaussian_delta(rate, sigma, e)  # noqa: E731
    for delta in DELTAS:
        b = acc.epsilon(delta)
        assert contains_epsilon(b, ref, delta), (delta, b)
    for eps in (0.0, 1e-9, 1.0, 5.0):
        b = acc.delta(eps)
        assert b.lower <= ref(eps) <= b.upper, (eps, b)


def test_gaussian_at_rate_one_minus_1e_12_is_mu_gdp_within_tv():
    # |δ_γ − δ_1| ≤ T·TV(P_γ, P_1) ≤ T(1 − γ) for the composition: μ-GDP ± 1e-11 at T = 10
    steps, sigma, slack = 10, 1.0, 10 * 1e-12
    mu = math.sqrt(steps) / sigma
    acc = Accountant("fourier").add(GaussianMechanism(sigma), steps, scheme=Poisson(1 - 1e-12))
    for delta in (1e-3, 1e-6):
        b = acc.epsilon(delta)
        assert gdp_delta(mu, b.upper) + slack <= delta
        assert b.lower == 0.0 or gdp_delta(mu, b.lower) - slack >= delta
    for eps in (0.0, 2.0):
        b = acc.delta(eps)
        assert b.lower - slack <= gdp_delta(mu, eps) <= b.upper + slack


# ---------------------------------------------------------------------------------------------
# Laplace and randomized response
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [None, 1.0, 1e-9, 1 - 1e-12, 0.01])
def test_one_laplace_step(rate):
    scheme = None if rate is None else Poisson(rate)
    acc = Accountant("fourier").add(LaplaceMechanism(1.0), 1, scheme=scheme)
    ref = lambda e: subsampled_laplace_delta(1 if rate is None else rate, 1, e)  # noqa: E731
    for delta in (1e-3, 1e-6, 1e-12):
        b = acc.epsilon(delta)
        assert contains_epsilon(b, ref, delta), (delta, b)
    for eps in (0.0, 0.5, 0.999, 1.0, 2.0):
        b = acc.delta(eps)
        assert b.lower <= ref(eps) <= b.upper, (eps, b)


def test_two_laplace_steps():
    acc = Accountant("fourier").add(LaplaceMechanism(1.0), 2)
    for eps in (0.0, 0.5, 1.5, 1.999):
        b = acc.delta(eps)
        assert b.lower <= laplace2_delta(1, eps) <= b.upper, (eps, b)
    for delta in (1e-3, 1e-6):
        b = acc.epsilon(delta)
        assert contains_epsilon(b, lambda e: laplace2_delta(1, e), delta), (delta, b)


def test_laplace_composition_gets_a_window_that_holds_it():
    # the Laplace loss has atoms at ±1/b = ±1, the first truncation bound tried: the Chernoff
    # step used to see the +1 atom at +∞ and keep L = 1.05, far below the composed loss
    # (mean 100 × 0.37 = 37): ε(1e-5) was [16.5, inf]
    b = Accountant("fourier").add(LaplaceMechanism(1.0), 100).epsilon(1e-5)
    assert b.upper < 68.27 and b.lower > 68.2
    ref = Accountant("pld").add(LaplaceMechanism(1.0), 100).epsilon(1e-5)
    assert b.lower <= ref.upper and ref.lower <= b.upper


@pytest.mark.parametrize("rate", [None, 1.0, 0.01, 1e-9, 1 - 1e-12])
@pytest.mark.parametrize("steps", [1, 20, 60])
def test_randomized_response_is_binomial(rate, steps):
    scheme = None if rate is None else Poisson(rate)
    gamma = 1 if rate is None else rate
    acc = Accountant("fourier").add(RandomizedResponse(0.75), steps, scheme=scheme)
    ref = lambda e: rr_delta(0.75, gamma, steps, e)  # noqa: E731
    for delta in (1e-3, 1e-6, 1e-12):
        b = acc.epsilon(delta)
        assert contains_epsilon(b, ref, delta), (delta, b)
    for eps in (0.0, 1.0, 3.0):
        b = acc.delta(eps)
        assert b.lower <= ref(eps) <= b.upper, (eps, b)


# ---------------------------------------------------------------------------------------------
# extreme but legal inputs: an answer that holds, or a typed refusal, fast
# ---------------------------------------------------------------------------------------------


def _answer_or_refuse(call, seconds=20.0):
    start = time.perf_counter()
    try:
        out = call()
    except PrivampError as exc:
        out = exc
    assert time.perf_counter() - start < seconds
    return out


@pytest.mark.parametrize("mech", [GaussianMechanism(1.0), LaplaceMechanism(1.0),
                                  RandomizedResponse(0.75)], ids=["gauss", "laplace", "rr"])
@pytest.mark.parametrize("scheme", [None, Poisson(1.0), Poisson(1e-9), Poisson(1 - 1e-12),
                                    Poisson(0.01)],
                         ids=["plain", "rate-1", "rate-1e-9", "rate-1-1e-12", "rate-0.01"])
def test_a_million_steps_is_refused_quickly(mech, scheme):
    # the drift count·Δx on the largest automatic grid (2^22 points) would exceed 10 in the loss
    acc = Accountant("fourier").add(mech, 10**6, scheme=scheme)
    for call in (lambda: acc.epsilon(1e-5), lambda: acc.epsilon(1e-300),
                 lambda: acc.delta(1e3), lambda: acc.delta(0.0)):
        out = _answer_or_refuse(call, 10.0)
        assert isinstance(out, NumericalError) and "drift" in str(out)


@pytest.mark.parametrize("mech", [GaussianMechanism(1.0), LaplaceMechanism(1.0),
                                  RandomizedResponse(0.75)], ids=["gauss", "laplace", "rr"])
def test_tiny_delta_and_huge_epsilon_answer_with_valid_brackets(mech):
    acc = Accountant("fourier").add(mech, 3)
    ref = {GaussianMechanism: lambda e: gdp_delta(math.sqrt(3), e),
           RandomizedResponse: lambda e: rr_delta(0.75, 1, 3, e)}.get(type(mech))
    for delta in (1e-300, 1e-310, 5e-324):
        out = _answer_or_refuse(lambda d=delta: acc.epsilon(d))
        if isinstance(out, PrivampError):
            continue
        assert 0.0 <= out.lower <= out.upper
        if ref is not None:
            assert contains_epsilon(out, ref, delta), (delta, out)
        elif isinstance(mech, LaplaceMechanism):  # pure 3-DP: ε(δ) ≤ 3 for every δ
            assert out.lower <= 3.0
    for eps in (1e3, 1e300):
        out = _answer_or_refuse(lambda e=eps: acc.delta(e))
        if isinstance(out, PrivampError):
            assert isinstance(out, NumericalError)
            continue
        assert out.lower == 0.0 and out.upper < 1e-9


@pytest.mark.parametrize("kw", [dict(delta=1e-300), dict(delta=5e-324), dict(eps=1e3),
                                dict(eps=1e300), dict(eps=1e3, L=1e300, r=2**12),
                                dict(delta=1e-300, L=1e-300, r=2**12),
                                dict(eps=0.0, L=1e-300, r=16)])
@pytest.mark.parametrize("count", [1, 10**6])
def test_fourier_accountant_extremes(kw, count):
    pld = MixturePLD.from_scheme(WOR(n=100, m=10), 1.0)
    out = _answer_or_refuse(lambda: fourier_accountant(pld, count=count, **kw))
    if isinstance(out, PrivampError):
        assert isinstance(out, NumericalError)
        return
    assert 0.0 <= out.lower <= out.upper
    if "eps" in kw:
        assert out.upper <= 1.0
