"""The multiplicity sum evaluated in blocks (issue 17, item 1).

``log_delta_rows`` evaluates several group profiles in one call (a broadcast over (θ, ε) for the
Gaussian and Laplace families, one base evaluation for black-box groups): every row must equal
the profile's own call, bit for bit. ``AmplifiedProfile._log_sum`` must sum exactly the terms of
the one-term-at-a-time loop whatever the block sizes, and its upper (lower) values must bound
the amplification theorem's δ' from above (below), checked against mpmath.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from conformance import references as ref
from privamp import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.amplification import amplify
from privamp.amplification import subsampling as sub
from privamp.mechanisms import gaussian
from privamp.mechanisms.gaussian import GaussianProfile, gaussian_log_delta_bounds
from privamp.mechanisms.laplace import LaplaceProfile
from privamp.profiles import BlackBoxGroupProfile, log_delta_rows
from privamp.sampling import WOR, WR, MustOW, MustWO, MustWW, Poisson, StageChain

EPS = np.concatenate([[0.0, 5e-324, 1e-300, 1e-12], np.geomspace(1e-6, 1.0, 25),
                      np.linspace(1.0, 60.0, 60), [1e3, 1e6, 1e300, math.inf]])


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("row_by_row", [1, 1 << 30])
@pytest.mark.parametrize("lower", [False, True])
def test_gaussian_rows_equal_separate_calls(monkeypatch, lower, row_by_row):
    monkeypatch.setattr(gaussian, "_ROW_BY_ROW", row_by_row)  # both ways of evaluating rows
    thetas = [0.0, 1e-310, 1e-8, 1e-3, 0.3, 1.0, 2.0, 7.5, 1e2, 1e4, 1e154]
    profs = [GaussianProfile(t, theta_lower=t * 0.999) for t in thetas]
    rows = log_delta_rows(profs, EPS, lower)
    for prof, row in zip(profs, rows, strict=True):
        own = prof._log_delta_lower(EPS) if lower else prof._log_delta(EPS)
        assert _same(row, own), prof
    # the array-θ form of the bounds, one θ per point
    th = np.repeat(np.array(thetas), EPS.size)
    lo, up = gaussian_log_delta_bounds(th, np.tile(EPS, len(thetas)))
    for i, t in enumerate(thetas):
        lo1, up1 = gaussian_log_delta_bounds(t, EPS)
        assert _same(lo[i * EPS.size:(i + 1) * EPS.size], lo1)
        assert _same(up[i * EPS.size:(i + 1) * EPS.size], up1)


@pytest.mark.parametrize("lower", [False, True])
def test_laplace_black_box_mixed_and_repeated_rows(lower):
    def own(p):
        return p._log_delta_lower(EPS) if lower else p._log_delta(EPS)

    lap = [LaplaceProfile(t, theta_lower=t * 0.99) for t in (0.0, 0.1, 1.0, 3.0, 50.0)]
    gauss = GaussianMechanism(1.3).profile()
    rr = RandomizedResponse.from_epsilon(1.0).profile()
    black = [BlackBoxGroupProfile(gauss, k) for k in (2, 3, 7, 20)]
    black_rr = [BlackBoxGroupProfile(rr, k) for k in (2, 5)]
    for group in (lap, black, black + black_rr, lap + [gauss] + black, [rr, rr, rr],
                  [gauss, lap[1], gauss]):
        rows = log_delta_rows(group, EPS, lower)
        assert rows.shape == (len(group), EPS.size)
        for prof, row in zip(group, rows, strict=True):
            assert _same(row, own(prof)), prof


def test_subclass_does_not_inherit_the_broadcast():
    class Doubled(GaussianProfile):
        def _log_delta(self, eps):
            return np.minimum(super()._log_delta(eps) + math.log(2), 0.0)

    profs = [Doubled(1.0), Doubled(2.0)]
    rows = log_delta_rows(profs, EPS)
    for prof, row in zip(profs, rows, strict=True):
        assert _same(row, prof._log_delta(EPS))


def _one_term_at_a_time(prof, eps, lower):
    """The multiplicity sum as it was before the blocks: one group profile call per term."""
    log_w, groups, left = prof._by_weight
    acc = np.full(eps.size, -np.inf)
    active = np.arange(eps.size)
    rel = math.log(1e-17 if lower else 1e-12)
    for t, (lw, grp) in enumerate(zip(log_w, groups, strict=True)):
        if active.size == 0:
            break
        term = grp._log_delta_lower(eps[active]) if lower else grp._log_delta(eps[active])
        with np.errstate(invalid="ignore"):
            acc[active] = np.logaddexp(acc[active], lw + term)
        done = left[t + 1] <= acc[active] + rel
        if np.any(done) and not lower:
            idx = active[done]
            acc[idx] = np.logaddexp(acc[idx], left[t + 1])
        active = active[~done]
    margin = (64 + 4 * len(groups)) * sub.ULP
    if lower:
        with np.errstate(invalid="ignore"):
            return np.minimum(sub.round_down_log(acc - margin, ulps=8), 0.0)
    if active.size:
        acc[active] = np.logaddexp(acc[active], left[-1])
    return np.minimum(sub.round_up_log(acc, margin), 0.0)


SCHEMES = [WOR(200, 20), WR(200, 20), WR(20, 15), MustOW(200, 100, 20), MustWO(200, 100, 20),
           MustWW(200, 100, 20), StageChain(100, [("wr", 50), ("wor", 30), ("wr", 20)])]
MECHS = [GaussianMechanism(1.0, relation="substitute"),
         GaussianMechanism(0.3, relation="substitute"),
         LaplaceMechanism(1.0, relation="substitute"),
         RandomizedResponse.from_epsilon(1.0, relation="substitute")]


@pytest.mark.parametrize("block_values", [1, 7, 1 << 14, 1 << 30])
@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_blocks_sum_the_same_terms(monkeypatch, scheme, block_values):
    monkeypatch.setattr(sub, "_BLOCK_VALUES", block_values)
    eps = np.concatenate([EPS[:-4], [1e3]])
    for mech in MECHS:
        for group in (None, "black-box"):
            prof = amplify(mech, scheme, group_privacy=group)
            for lower in (False, True):
                assert _same(prof._log_sum(eps, lower), _one_term_at_a_time(prof, eps, lower))
    # Poisson under add/remove: one term
    prof = amplify(GaussianMechanism(1.0), Poisson(0.01))
    assert _same(prof._log_sum(eps), _one_term_at_a_time(prof, eps, False))


@pytest.mark.parametrize("scheme", [WR(30, 10), WOR(30, 10), MustOW(30, 15, 10),
                                    MustWO(30, 15, 10), MustWW(30, 15, 10),
                                    StageChain(30, [("wr", 15), ("wor", 10), ("wr", 6)])],
                         ids=repr)
@pytest.mark.parametrize("mech", [GaussianMechanism(0.8, relation="substitute"),
                                  LaplaceMechanism(2.0, relation="substitute")], ids=repr)
def test_blocked_values_bound_the_mpmath_reference(scheme, mech):
    """Upper values ≥ the theorem's δ'(ε') (200-bit mpmath), lower values ≤ it."""
    prof = amplify(mech, scheme)
    eps_prime = np.concatenate([[0.0, 1e-6, 1e-3], np.linspace(0.01, 4.0, 14), [6.0, 9.0]])
    up = prof.log_delta(eps_prime)
    lo = prof.log_delta_lower(eps_prime)
    with mpmath.workprec(200):
        for e, u, lw in zip(eps_prime, up, lo, strict=True):
            exact = ref.amplified_delta(mech, scheme, float(e))
            if exact == 0:
                assert lw == -math.inf
                continue
            log_exact = mpmath.log(exact)
            assert u >= log_exact, (e, u, float(log_exact))
            assert lw <= log_exact, (e, lw, float(log_exact))
