"""The relaxed double mixture of WOR/WR groups (privamp.pld.group.RelaxedGroupProfile), an
upper bound the coupling bound is combined with.

* its values against an independent evaluation of the same pair (mpmath, 30 digits:
  ``conformance.references.relaxed_pair_delta``), never below it and within 1e-6 of it;
* the bound against brute force: the output laws of sum queries on small datasets (random
  records and the realizable extremes), every subsample enumerated, the hockey-stick divergence
  integrated numerically, at WOR's boundary m = n − K as well;
* where it applies (and where not: K = 1, black-box group privacy, WOR with n − K < m, other
  mechanisms and schemes), and what it changes in a composition: never a larger upper end,
  never an upper end below the realizable lower end.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate

from conformance import references
from privamp import Accountant, GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.pld import group as group_mod
from privamp.pld.group import RelaxedGroupProfile, group_pair_curves, relaxed_group_profile
from privamp.profiles import MinimumProfile
from privamp.relations import NeighbouringRelation
from privamp.sampling import WOR, WR, MustOW, Poisson

S = NeighbouringRelation.SUBSTITUTE
MPMATH_DPS = 40


def _mech(sigma=2.0):
    return GaussianMechanism(sigma, relation="substitute")


def _laplace(scale=2.0):
    return LaplaceMechanism(scale, relation="substitute")


def _exact_weights(scheme, k):
    if isinstance(scheme, WOR):
        n, m = scheme.n, scheme.m
        return [mp.binomial(k, j) * mp.binomial(n - k, m - j) / mp.binomial(n, m)
                for j in range(k + 1)]
    p = mp.mpf(k) / scheme.n
    # counts up to 20 (the reference drops a mass below 1e-30 at the rates tested: far below
    # the tolerance of the values compared)
    return [mp.binomial(scheme.m, j) * p ** j * (1 - p) ** (scheme.m - j)
            for j in range(min(scheme.m, 20) + 1)]


@pytest.mark.parametrize("scheme,k", [(WOR(60000, 600), 2), (WOR(60000, 600), 4),
                                      (WR(60000, 600), 2), (WR(1000, 100), 3),
                                      (WOR(100, 50), 2)])
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_values_against_an_mpmath_evaluation(scheme, k, family):
    noise = 2.0
    mech = _mech(noise) if family == "gaussian" else _laplace(noise)
    prof = relaxed_group_profile(mech, scheme, S, k)
    assert isinstance(prof, RelaxedGroupProfile) and prof.family == family
    w = _exact_weights(scheme, k)
    eps = np.array([0.0, 0.01, 0.1, 0.5, 1.0, 2.0])
    got = np.exp(prof._log_delta(eps))
    for e, g in zip(eps, got, strict=True):
        ref = references.relaxed_pair_delta(family, w, 1 / noise, e)
        if ref < mp.mpf("1e-290"):
            continue
        assert g >= ref, (e, g, ref)
        assert g <= ref * (1 + 1e-6) + 1e-29, (e, g, ref)  # the dropped tail is ≤ 1e-30


def _laws(scheme, k, phi_x, phi_xp):
    """{mean: probability} of the sum query on x and x' (records 0..k−1 are the group), every
    subsample enumerated (WOR: subsets; WR: sequences of draws)."""
    n, m = scheme.n, scheme.m
    batches = (list(itertools.combinations(range(n), m)) if isinstance(scheme, WOR)
               else list(itertools.product(range(n), repeat=m)))
    px, pxp = {}, {}
    for b in batches:
        a = round(sum(phi_x[i] for i in b), 12)
        c = round(sum(phi_xp[i] for i in b), 12)
        px[a] = px.get(a, 0.0) + 1.0 / len(batches)
        pxp[c] = pxp.get(c, 0.0) + 1.0 / len(batches)
    return px, pxp


def _hockey(p, q, eps, sigma, family="gaussian"):
    """∫ (dP − e^ε dQ)⁺ of two Gaussian (Laplace) mixtures (means in units of Δ, noise σ
    (scale b = σ)), numerically (absolute error ~1e-12)."""
    mp_, wp = np.array(list(p)), np.array(list(p.values()))
    mq, wq = np.array(list(q)), np.array(list(q.values()))
    alpha = math.exp(eps)

    if family == "gaussian":
        def f(z):
            dp = np.sum(wp * np.exp(-0.5 * ((z - mp_) / sigma) ** 2))
            dq = np.sum(wq * np.exp(-0.5 * ((z - mq) / sigma) ** 2))
            return max(dp - alpha * dq, 0.0) / (sigma * math.sqrt(2 * math.pi))
        reach = 12 * sigma
    else:
        def f(z):
            dp = np.sum(wp * np.exp(-np.abs(z - mp_) / sigma))
            dq = np.sum(wq * np.exp(-np.abs(z - mq) / sigma))
            return max(dp - alpha * dq, 0.0) / (2 * sigma)
        reach = 40 * sigma

    lo = min(mp_.min(), mq.min()) - reach
    hi = max(mp_.max(), mq.max()) + reach
    # the Laplace densities' kinks at the centres are integration breakpoints
    pts = np.unique(np.concatenate([np.linspace(lo, hi, 41), mp_, mq]))
    return sum(integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-10, limit=200)[0]
               for a, b in zip(pts[:-1], pts[1:], strict=True))


def _datasets(n, k, rng):
    """Records (φ values, Δ = 1: |φ| ≤ 1/2 so that one substitution moves the sum by ≤ 1) of
    x and x': the realizable extremes (the rest at −t/2, the group at ±1/2) and random ones."""
    out = []
    for t in (1.0, 0.0, -1.0):
        out.append(([0.5] * k + [-t / 2] * (n - k), [-0.5] * k + [-t / 2] * (n - k)))
    for _ in range(3):
        rest = list(rng.uniform(-0.5, 0.5, n - k))
        out.append((list(rng.uniform(-0.5, 0.5, k)) + rest,
                    list(rng.uniform(-0.5, 0.5, k)) + rest))
    return out


@pytest.mark.parametrize("scheme,k", [(WOR(6, 3), 2), (WOR(5, 3), 2), (WOR(7, 2), 3),
                                      (WR(4, 3), 2), (WR(5, 2), 3)])
@pytest.mark.parametrize("sigma", [0.5, 2.0])
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_bounds_every_enumerated_pair_of_small_datasets(scheme, k, sigma, family):
    """Both orders of the datasets, at ε from 0 to 3: the brute-force divergence never exceeds
    the relaxed profile (WOR(5, 3), K = 2 is the boundary n − K = m)."""
    mech = _mech(sigma) if family == "gaussian" else _laplace(sigma)
    prof = relaxed_group_profile(mech, scheme, S, k)
    assert prof is not None
    rng = np.random.default_rng(20261128)
    eps = [0.0, 0.25, 1.0, 3.0]
    bound = np.exp(prof._log_delta(np.array(eps)))
    for phi_x, phi_xp in _datasets(scheme.n, k, rng):
        px, pxp = _laws(scheme, k, phi_x, phi_xp)
        for e, b in zip(eps, bound, strict=True):
            for p, q in ((px, pxp), (pxp, px)):
                assert _hockey(p, q, e, sigma, family) <= b + 1e-11, (phi_x, phi_xp, e)


def test_where_it_applies():
    m = _mech()
    assert relaxed_group_profile(m, WOR(100, 10), S, 2) is not None
    assert relaxed_group_profile(m, WR(100, 10), S, 2) is not None
    assert relaxed_group_profile(m, WOR(100, 10), S, 2, "white-box") is not None
    # one record: the coupling bound is the tight WOR/WR result
    assert relaxed_group_profile(m, WOR(100, 10), S, 1) is None
    # black-box group privacy asked for
    assert relaxed_group_profile(m, WR(100, 10), S, 2, "black-box") is None
    # WOR without a reference batch outside the group (n − K < m)
    assert relaxed_group_profile(m, WOR(10, 9), S, 2) is None
    assert relaxed_group_profile(m, WOR(10, 8), S, 2) is not None
    # the Laplace mechanism too; not a profile, another relation or another mechanism
    assert relaxed_group_profile(_laplace(), WOR(100, 10), S, 2).family == "laplace"
    assert relaxed_group_profile(m.profile(), WOR(100, 10), S, 2) is None
    assert relaxed_group_profile(_laplace().profile(), WOR(100, 10), S, 2) is None
    assert relaxed_group_profile(GaussianMechanism(2.0), WOR(100, 10), S, 2) is None
    rr = RandomizedResponse(0.7, relation="substitute")
    assert relaxed_group_profile(rr, WOR(100, 10), S, 2) is None
    assert relaxed_group_profile(GaussianMechanism(2.0), Poisson(0.1),
                                 NeighbouringRelation.ADD_REMOVE, 2) is None
    assert relaxed_group_profile(m, MustOW(100, 50, 10), S, 2) is None
    # a hit law needing more than RELAXED_MAX_HITS counts: the coupling bound alone
    assert relaxed_group_profile(m, WR(1000, 1000), S, 200) is None


def test_group_curves_take_the_smaller_bound():
    curves, bound = group_pair_curves(_mech(), WR(1000, 100), None, 2)
    assert bound == "coupling"
    (curve,) = curves.values()
    assert isinstance(curve.profile, MinimumProfile)
    assert any(isinstance(p, RelaxedGroupProfile) for p in curve.profile.parts)


@pytest.mark.parametrize("scheme,steps,k", [(WR(1000, 100), 10, 2), (WOR(2000, 100), 5, 4)])
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_composition_is_no_looser_and_stays_above_the_lower_end(scheme, steps, k, family,
                                                                 monkeypatch):
    mech = _mech() if family == "gaussian" else _laplace()

    def eps():
        acc = Accountant()
        acc.add(mech, steps, scheme=scheme, group_size=k)
        return acc.epsilon(1e-5)

    with_relaxed = eps()
    monkeypatch.setattr(group_mod, "relaxed_group_profile", lambda *a, **kw: None)
    without = eps()
    assert with_relaxed.upper <= without.upper
    assert with_relaxed.lower == without.lower  # the realizable pairs, unchanged
    assert with_relaxed.lower <= with_relaxed.upper
    if isinstance(scheme, WR):
        # WR(1000, 100), K = 2, 10 steps: Gaussian σ 2, 4.41 with the coupling bound alone,
        # 2.22 with both; Laplace b 2, 1.273 and 1.142
        assert with_relaxed.upper < (0.6 if family == "gaussian" else 0.95) * without.upper


def test_more_gating():
    """A subclass of the Gaussian mechanism, a mechanism under add/remove on WOR, WR under
    add/remove (the hybrid relation), WR with no record outside the group (n = K)."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Shifted(GaussianMechanism):
        pass

    assert relaxed_group_profile(Shifted(2.0, relation="substitute"), WOR(100, 10), S, 2) is None
    assert relaxed_group_profile(GaussianMechanism(2.0), WOR(100, 10), S, 2) is None
    assert relaxed_group_profile(GaussianMechanism(2.0), WR(100, 10),
                                 NeighbouringRelation.ADD_REMOVE, 2) is None
    assert relaxed_group_profile(_mech(), WR(2, 3), S, 2) is None
    assert relaxed_group_profile(_mech(), WR(3, 3), S, 2) is not None


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_the_dropped_hit_counts_and_the_weight_error_are_added(family):
    """WR(100, 100) with K = 50: about 50 hits, the law kept to the counts whose remaining mass
    is above 1e-30. δ(∞) is that remaining mass τ, at least the exact P(hits > J); every value
    is the curve's own at a smaller ε (at least 2r below) raised by the weights' error
    allowance (at least 3r relative)."""
    mech = _mech(20.0) if family == "gaussian" else _laplace(20.0)
    prof = relaxed_group_profile(mech, WR(100, 100), S, 50)
    assert prof is not None and 50 < prof.hits < 128
    exact_tail = mp.fsum(mp.binomial(100, j) * mp.mpf("0.5") ** 100
                         for j in range(prof.hits + 1, 101))
    tau = math.exp(float(prof._log_delta(np.array([np.inf]))[0]))
    assert tau >= exact_tail > 0
    assert tau <= 1e-29
    r = group_mod._RELAXED_WEIGHT_REL
    eps = np.linspace(0.5, 6.0, 12)
    raised = prof._log_delta(eps)
    own = prof._curve.log_upper(eps - 3 * r)
    inside = (own > -700) & (own < -1e-6)  # where neither rounding nor the cap at 1 rules
    assert inside.sum() >= 4
    assert np.all(raised[inside] >= own[inside] + 3 * r)
