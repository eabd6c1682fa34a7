"""Closed-form slopes of dominating curves (``PrivacyProfile._log_q_tail``): the Gaussian
profile's Q-tail Φ(−θ/2 − ε/θ) and the multiplicity sums of the subsampled Gaussian
(WOR, WR, MUST), which :meth:`privamp.pld.curves.ProfileCurve.slope_bounds` uses instead of
secants. Checked against 40-digit mpmath values, and for every registered mechanism and scheme
example against the certified secant bracket of the same curve (both contain the true slope).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from conformance.cases import scheme_examples
from privamp._numerics import ULP
from privamp.amplification.subsampling import AmplifiedProfile, amplify
from privamp.mechanisms import REGISTRY
from privamp.mechanisms.gaussian import GaussianMechanism, GaussianProfile
from privamp.pld.curves import ProfileCurve
from privamp.sampling import WithoutReplacement, WithReplacement

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 40

EPS = np.array([1e-12, 1e-6, 1e-3, 0.05, 0.5, 1.0, 3.0, 10.0, 40.0, 300.0, 1e4])


def _q_tail(theta, eps) -> mpmath.mpf:
    """Φ(−θ/2 − ε/θ), exactly."""
    theta, eps = mpmath.mpf(theta), mpmath.mpf(eps)
    return mpmath.ncdf(-theta / 2 - eps / theta)


@pytest.mark.parametrize("theta, theta_lower", [
    (1e-3, 1e-3), (0.2, 0.19999999999999998), (1.0, 1.0), (1 / 1.37, 1 / 1.37 * (1 - 1e-15)),
    (7.0, 7.0), (1e3, 1e3), (0.5, 0.25)])
def test_gaussian_q_tail_brackets_every_theta_in_its_range(theta, theta_lower):
    prof = GaussianProfile(theta, theta_lower=theta_lower)
    up = prof._log_q_tail(EPS, False)
    lo = prof._log_q_tail(EPS, True)
    for e, u, l_ in zip(EPS.tolist(), up.tolist(), lo.tolist(), strict=True):
        # the exact θ is anywhere in [theta_lower, theta]: the ends and the minimiser of s
        thetas = [theta_lower, theta]
        if theta_lower <= math.sqrt(2 * e) <= theta:
            thetas.append(math.sqrt(2 * e))
        values = [mpmath.log(_q_tail(t, e)) for t in thetas]
        assert l_ <= min(values) and max(values) <= u, (e, l_, values, u)
        if theta_lower == theta and min(values) > -700:
            assert u - l_ <= 1e-12 * (1 + abs(u)), (e, l_, u)
    # ε = ∞: Q = 0; θ = 0: δ ≡ 0
    assert prof._log_q_tail(np.array([np.inf]), False)[0] == -np.inf
    assert GaussianProfile(0.0)._log_q_tail(EPS, False).tolist() == [-np.inf] * EPS.size


def _amplified_reference(sigma: float, n: int, m: int, replacement: bool, eps_prime: float):
    """(1/η) Σ_k P(K = k) Φ(−kθ/2 − ε/(kθ)), ε = log(1 + (e^{ε'} − 1)/η), K the draws that hit
    the substituted record: Binomial(m, 1/n) with replacement, 1{hit} with P = m/n without."""
    theta = mpmath.mpf(1) / sigma
    if replacement:
        p = mpmath.mpf(1) / n
        weights = {k: mpmath.binomial(m, k) * p**k * (1 - p)**(m - k) for k in range(1, m + 1)}
    else:
        weights = {1: mpmath.mpf(m) / n}
    eta = sum(weights.values())
    eps = mpmath.log(1 + (mpmath.exp(eps_prime) - 1) / eta)
    # terms below 1e-60 of weight change the sum by less than 1e-57 of it (Q ≤ 1, η ≥ 1e-3)
    return sum(w * _q_tail(k * theta, eps) for k, w in weights.items()
               if w > mpmath.mpf(10) ** -60) / eta


@pytest.mark.parametrize("sigma", [0.5, 1.0, 1.37, 4.0])
@pytest.mark.parametrize("n, m, replacement", [
    (60000, 600, True), (1000, 999, True), (10, 10, True), (1, 1, True), (60000, 600, False),
    (10, 10, False), (1000, 1, False)])
def test_subsampled_gaussian_slopes_match_the_exact_sum(sigma, n, m, replacement):
    scheme = WithReplacement(n, m) if replacement else WithoutReplacement(n, m)
    prof = amplify(GaussianMechanism(sigma, relation="substitute"), scheme, "substitute")
    assert isinstance(prof, AmplifiedProfile)
    eps = np.array([1e-9, 1e-4, 0.01, 0.3, 1.0, 4.0, 20.0])
    up = prof._log_q_tail(eps, False)
    lo = prof._log_q_tail(eps, True)
    for e, u, l_ in zip(eps.tolist(), up.tolist(), lo.tolist(), strict=True):
        exact = mpmath.log(_amplified_reference(sigma, n, m, replacement, e))
        assert l_ <= exact <= u, (e, l_, exact, u)
        if exact > -600:
            assert u - l_ <= 1e-9 * (1 + abs(exact)), (e, l_, exact, u)


def _secants(curve, eps, tau):
    """The secant bracket of the same curve (the default's, without the closed form)."""
    with np.errstate(under="ignore"):
        f_lo = np.exp(curve.log_lower(eps)) * (1 - 2 * ULP)
    return curve._secant_lo(eps, tau, f_lo), curve._secant_hi(eps, tau, f_lo)


def _curves():
    """(id, ProfileCurve) for every registered mechanism example under every scheme example
    whose amplified profile has a closed-form slope."""
    out = []
    for scheme in scheme_examples():
        for relation in scheme.relations:
            base = scheme.base_relation(relation)
            for name, entry in REGISTRY.items():
                for i, mech in enumerate(entry.examples(base)):
                    try:
                        prof = amplify(mech, scheme, relation)
                    except Exception:  # combinations the library refuses are tested elsewhere
                        continue
                    if prof._log_q_tail(np.ones(1), False) is not None:
                        out.append((f"{name}#{i}-{scheme!r}-{relation.value}", prof))
    return out


CURVES = _curves()


def test_the_registry_has_closed_form_slopes():
    ids = " ".join(i for i, _ in CURVES)
    for kind in ("gaussian#0-WOR", "gaussian#0-WR", "gaussian#0-MUST.OW", "gaussian#0-MUST.WW"):
        assert kind in ids, kind


@pytest.mark.parametrize("ident, prof", CURVES, ids=[i for i, _ in CURVES])
def test_closed_form_slopes_meet_the_secants(ident, prof):
    """Both brackets hold the true slope, so they intersect; the closed form is the
    narrower one away from rounding; ε ≤ 0 keeps the secants."""
    curve = ProfileCurve(prof)
    eps = np.concatenate([-EPS[::-1], [0.0], EPS])
    for tau in (1e-3, 1e-6):
        c_lo, c_hi = curve.slope_bounds(eps, tau)
        s_lo, s_hi = _secants(curve, eps, tau)
        assert np.all((c_lo <= c_hi) & (-1 <= c_lo) & (c_hi <= 0))
        assert np.all(c_lo <= s_hi) and np.all(s_lo <= c_hi), ident
        neg = eps <= 0
        # the secants of the points ε ≤ 0 alone (the closed form leaves exactly those to them:
        # the same calls, so the same last bits of NumPy's vector loops)
        n_lo, n_hi = _secants(curve, eps[neg], tau)
        assert np.array_equal(c_lo[neg], n_lo) and np.array_equal(c_hi[neg], n_hi)
        assert np.all(c_hi[~neg] - c_lo[~neg] <= s_hi[~neg] - s_lo[~neg] + 1e-15)


class _Doubled(GaussianProfile):
    """A subclass whose values are another function (the Gaussian at 2θ): it must not inherit
    the parent's closed-form slope."""

    def _log_delta(self, eps):
        return GaussianProfile(2 * self.theta)._log_delta(eps)

    def _log_delta_lower(self, eps):
        return GaussianProfile(2 * self.theta)._log_delta_lower(eps)


def test_a_subclass_keeps_the_secants():
    curve = ProfileCurve(_Doubled(1.0))
    eps = np.array([0.5, 2.0, 5.0])
    assert curve._closed_slopes(eps) is None
    s_lo, s_hi = curve.slope_bounds(eps, 1e-5)
    exact = np.array([-float(_q_tail(2.0, e)) for e in eps])
    assert np.all(s_lo <= exact) and np.all(exact <= s_hi)
    assert np.all(curve.p_tail_upper(eps, (1e-5,)) >= curve.p_tail_lower(eps, (1e-5,)))


def test_subnormal_slopes_are_bracketed():
    """θ = 1 at ε ≈ 37–39: the slope −Φ(−1/2 − ε) is subnormal; relative margins alone do not
    cover its rounding (absolute, half a subnormal spacing)."""
    curve = ProfileCurve(GaussianProfile(1.0))
    eps = np.linspace(37.0, 38.9, 400)
    for s_lo, s_hi in (curve.slope_bounds(eps, 1e-3), _secants(curve, eps, 1e-3)):
        for e, lo, hi in zip(eps.tolist(), s_lo.tolist(), s_hi.tolist(), strict=True):
            exact = -_q_tail(1.0, e)
            assert lo <= exact <= hi, (e, lo, exact, hi)


def test_odd_inputs_get_valid_slopes():
    """NaN gets the trivial bounds, a 0-d array its shape back, ε = ∞ a zero slope."""
    curve = ProfileCurve(GaussianProfile(1.0))
    s_lo, s_hi = curve.slope_bounds(np.array([np.nan, 1.0, np.inf]), 1e-4)
    assert s_lo[0] == -1.0 and s_hi[0] == 0.0
    assert s_hi[2] == 0.0 and -1e-300 < s_lo[2] <= 0.0
    lo0, hi0 = curve.slope_bounds(np.array(1.0), 1e-4)
    assert np.shape(lo0) == () and lo0 <= -float(_q_tail(1.0, 1.0)) <= hi0
    empty = curve.slope_bounds(np.empty(0), 1e-4)
    assert empty[0].shape == (0,) and empty[1].shape == (0,)
