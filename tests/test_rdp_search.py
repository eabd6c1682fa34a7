"""The RDP accountant's pruned order search and the fast tails of the exact Poisson-subsampled
Gaussian: the search's answer equals the minimum over every grid and refinement order (a plain
evaluation of all of them is the reference), its floors never exceed the conversion, the
binomial recurrence stays within its error bound (mpmath), and the long series it serves stay
certified (mpmath integrals)."""

from __future__ import annotations

import itertools
import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from privamp import GaussianMechanism, LaplaceMechanism
from privamp._numerics import ULP
from privamp.rdp import (
    OrderGridWarning,
    RdpAccountant,
    RdpCurve,
    poisson_gaussian_rdp,
    rdp_curve,
)
from privamp.rdp.accountant import _REFINE_POINTS, _conversion, _gap_floor
from privamp.rdp.poisson_gaussian import _log_abs_binom, _log_abs_binom_run
from test_rdp_subsampled import mp_poisson_gaussian  # the mpmath reference


def _reference_epsilon(sources, delta, orders):
    """ε(δ) of ``sources`` [(callable, count)] the plain way: every order of the grid, then
    every refinement order between the best order's grid neighbours (as RdpAccountant
    documents), each source evaluated on all of them at once."""
    fo = orders[np.isfinite(orders)]
    total = RdpCurve(orders, np.zeros(orders.shape))
    for f, k in sources:
        total = total + RdpCurve(orders, f(orders).epsilons) * k
    eps, order = total.epsilon(delta, return_order=True, warn=False)
    if not (math.isfinite(order) and eps > 0):
        return eps
    j = int(np.searchsorted(fo, order))
    lo = 1.0 + (fo[0] - 1.0) / 8.0 if j == 0 else fo[j - 1]
    hi = 2.0 * fo[-1] if j == fo.size - 1 else fo[j + 1]
    cand = np.linspace(lo, hi, _REFINE_POINTS)
    cand = np.unique(cand[(cand > 1.0) & ~np.isin(cand, fo)])
    local = np.zeros(cand.shape)
    for f, k in sources:
        local = local + (RdpCurve(cand, f(cand).epsilons) * k).epsilons
    local = local * (1 + 8 * np.finfo(float).eps)
    return min(eps, RdpCurve(cand, local).epsilon(delta, warn=False))


CASES = list(itertools.product([0.4, 1.0, 4.0], [1e-6, 0.01, 0.3, 1.0], [1, 1000, 10**6],
                               [1e-10, 1e-3]))


@pytest.mark.parametrize("sigma, q, steps, delta", CASES)
def test_pruned_search_equals_evaluating_every_order(sigma, q, steps, delta):
    """Rates from 1e-6 to 1 (the Gaussian itself), 1 to 10^6 steps, small and large δ. The
    series at fractional orders depend (within their 1e-9 truncation tolerance) on which
    orders are evaluated together, hence the relative tolerance."""
    source = lambda o: poisson_gaussian_rdp(sigma, q, o)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        acc = RdpAccountant().compose(source, steps)
        eps = acc.epsilon(delta)
    ref = _reference_epsilon([(source, steps)], delta, acc.orders)
    assert eps == pytest.approx(ref, rel=2e-9, abs=1e-300)


@pytest.mark.parametrize("orders", [None, [1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0,
                                           144.0, 233.0, 377.0, 610.0, 987.0, 1597.0, 2584.0,
                                           4181.0, 6765.0, np.inf]])
def test_pruned_search_on_a_mixed_ledger(orders):
    """Exact curves, a plain curve (lower bound 0) and mechanisms in one ledger; the default
    grid and a grid of the user's own."""
    grid = RdpAccountant().orders if orders is None else np.asarray(orders, dtype=float)
    plain = RdpCurve(grid, np.where(np.isfinite(grid), grid / 40.0, np.inf))
    sources = [(lambda o: poisson_gaussian_rdp(1.3, 0.02, o), 500),
               (lambda o: plain.at(o), 3),
               (lambda o: poisson_gaussian_rdp(0.8, 0.001, o), 20_000),
               (lambda o: rdp_curve(GaussianMechanism(4.0), o), 7),
               (lambda o: rdp_curve(LaplaceMechanism(3.0), o), 2)]
    acc = RdpAccountant(grid)
    for f, k in sources[:3]:
        acc.compose(f, k)
    acc.compose(GaussianMechanism(4.0), 7).compose(LaplaceMechanism(3.0), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        for delta in [1e-12, 1e-6, 0.01]:
            ref = _reference_epsilon(sources, delta, grid)
            assert acc.epsilon(delta) == pytest.approx(ref, rel=2e-9)


@pytest.mark.parametrize("sigma, q, steps", [(0.5, 0.1, 10**5), (1.0, 0.01, 1000),
                                             (2.0, 1e-4, 10**6), (1.0, 1.0, 10)])
@pytest.mark.parametrize("delta", [1e-9, 1e-4])
def test_gap_floors_never_exceed_the_conversion(sigma, q, steps, delta):
    """Every floor (from any neighbouring orders on either side) is below the conversion of the
    upper values at 40 orders inside its gap: generated over gap positions and widths."""
    rng = np.random.default_rng(17)
    log_delta = math.log(delta)
    for trial in range(50):
        if trial % 2:  # wide gaps anywhere
            pts = np.sort(1.0 + np.exp(rng.uniform(math.log(1e-3), math.log(300.0), 4)))
        else:  # narrow gaps with close neighbours (the refinement's, near an optimum)
            a = 1.0 + math.exp(rng.uniform(math.log(1e-2), math.log(300.0)))
            w = (a - 1.0) * 10 ** rng.uniform(-4, -1)
            pts = np.array([a - w * rng.uniform(0.5, 3), a, a + w,
                            a + w * (1 + rng.uniform(0.5, 3))])
        a1, a, b, b1 = pts
        if len(set(pts.tolist())) < 4 or a1 <= 1.0:
            continue
        inside = np.linspace(a, b, 40)
        c_ends = poisson_gaussian_rdp(sigma, q, pts)
        up = c_ends.epsilons * steps
        lo = c_ends.lower_epsilons * steps
        vals = _conversion(poisson_gaussian_rdp(sigma, q, inside).epsilons * steps, inside,
                           log_delta)
        for left in [None, (a1, up[0])]:
            for right in [None, (lo[2], b1, up[3])]:
                floor = _gap_floor(a, lo[1], left, b, right, log_delta)
                assert floor <= vals.min() + 1e-9 * (1 + abs(vals.min()))


@pytest.mark.parametrize("a", [1.0001, 1.09, 1.5, 2.5, 7.77, 33.3, 150.5])
@pytest.mark.parametrize("start", [66, 130, 1000, 4226])
def test_binomial_recurrence_within_its_bound(a, start):
    """log|C(α, i)| by the recurrence from every 32nd value, against 40-digit mpmath, within
    its stated bound plus log_comb's own few ulp; signs as the direct function's."""
    i = np.arange(start, start + 100, dtype=float)[None, :]
    lc, sign, err = _log_abs_binom_run(np.array([[a]]), i)
    direct_lc, direct_sign = _log_abs_binom(np.array([[a]]), i)
    np.testing.assert_array_equal(sign, direct_sign)
    mp.mp.dps = 40
    for k in range(0, 100, 7):
        ref = mp.log(abs(mp.binomial(mp.mpf(a), int(i[0, k]))))
        bound = err[0, k] + 16 * ULP * (1 + abs(float(ref)))
        assert abs(mp.mpf(float(lc[0, k])) - ref) <= bound, (a, start, k)


@pytest.mark.parametrize("sigma, q, orders", [
    (1.0, 0.1, [1.02, 1.09]),      # thousands of terms: several doublings
    (0.5, 0.3, [1.05, 1.5]),
    (2.0, 0.01, [1.0375, 1.2]),
    (1.0, 0.6, [1.001, 3.5]),
])
def test_long_series_still_bracket_mpmath(sigma, q, orders):
    curve = poisson_gaussian_rdp(sigma, q, orders)
    for a, up, lo in zip(orders, curve.epsilons, curve.lower_epsilons, strict=True):
        ref = mp_poisson_gaussian(sigma, q, a)
        assert mp.mpf(float(lo)) <= ref <= mp.mpf(float(up)), (sigma, q, a)
        assert float(up) <= float(ref) * (1 + 1e-7)
