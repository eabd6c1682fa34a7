"""A ledger's RDP curve and certified zCDP ρ (Accountant.rdp_curve, Accountant.zcdp_rho).

References: the RDP backend's own composition (RdpAccountant.compose of the same sources, a
second implementation of the sum); the closed forms θ²/2 (Gaussian) and, by mpmath, sup_α D_α/α
of the Laplace mechanism and of randomized response; validity of ρ checked at orders off the
grid (between grid orders, near 1 and up to 1e5) with the events' own curves.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from privamp import (
    Accountant,
    ApproxDPMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Poisson,
    RandomizedResponse,
    WithoutReplacement,
    WithReplacement,
)
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.rdp import DEFAULT_ORDERS, RdpAccountant, rdp_curve, subsampled_rdp
from privamp.sampling.rounds import Shuffle

LEDGERS = {
    "gauss-poisson": [(GaussianMechanism(1.5), 100, Poisson(0.01))],
    "mixed-poisson": [(GaussianMechanism(2.0), 50, Poisson(0.05)),
                      (LaplaceMechanism(1.0), 20, Poisson(0.1)),
                      (RandomizedResponse(0.7), 5, None)],
    "wor": [(GaussianMechanism(3.0, relation="substitute"), 30,
             WithoutReplacement(n=1000, m=20))],
    "plain": [(LaplaceMechanism(0.5), 3, None), (GaussianMechanism(4.0), 7, None)],
}


def _ledger(backend, name):
    acc = Accountant(backend)
    for mech, count, scheme in LEDGERS[name]:
        acc.add(mech, count, scheme=scheme)
    return acc


def _event_rdp(mech, scheme, orders):
    if scheme is None:
        return rdp_curve(mech, orders)
    return subsampled_rdp(mech, scheme, orders=orders)


@pytest.mark.parametrize("name", sorted(LEDGERS))
@pytest.mark.parametrize("backend", ["rdp", "pld"])
def test_rdp_curve_is_the_sum_of_the_events(name, backend):
    orders = np.array([1.5, 2.0, 3.0, 8.0, 32.0, 256.0, math.inf])
    curve = _ledger(backend, name).rdp_curve(orders)
    assert curve.bound == "upper"
    ref = RdpAccountant(orders)
    for mech, count, scheme in LEDGERS[name]:
        ref.compose(_event_rdp(mech, scheme, orders), count)
    np.testing.assert_allclose(curve.epsilons, ref.curve.epsilons, rtol=1e-12)
    assert np.all(curve.epsilons >= ref.curve.epsilons * (1 - 1e-15))


def test_rdp_curve_refuses_events_without_an_rdp_bound_by_name():
    acc = Accountant("pld").add(GaussianMechanism(1.0), 10, scheme=Shuffle(1000, 10))
    with pytest.raises(UnsupportedCombinationError, match=r"ledger event 10 x .*Shuffle"):
        acc.rdp_curve()
    acc = Accountant("pld").add(GaussianMechanism(1.0, relation="substitute"), 4,
                               scheme=WithReplacement(n=100, m=10))
    with pytest.raises(UnsupportedCombinationError, match=r"ledger event 4 x .* on WR\("):
        acc.zcdp_rho()
    with pytest.raises(InvalidParameterError, match="events"):
        Accountant("rdp").rdp_curve()


def _sup_ratio(curve_fn, orders):
    c = curve_fn(orders)
    return float(np.max(c.epsilons / orders))


@pytest.mark.parametrize("name", sorted(LEDGERS))
def test_rho_is_valid_off_the_grid(name):
    acc = _ledger("rdp", name)
    z = acc.zcdp_rho()
    assert math.isfinite(z.rho) and z.rho >= z.grid_rho * (1 - 1e-15)
    rng = np.random.default_rng(20)
    # (orders above 1e4 cost one term per unit of order in the subsampled sums: a few only)
    probe = np.unique(np.concatenate([1 + 10 ** rng.uniform(-6, 0, 60),
                                      10 ** rng.uniform(0, 4, 100), [1.0 + 1e-9, 3e4, 1e5]]))
    total = np.zeros(probe.shape)
    for mech, count, scheme in LEDGERS[name]:
        total += count * _event_rdp(mech, scheme, probe).epsilons
    assert np.all(total <= z.rho * probe * (1 + 1e-12)), z


@pytest.mark.parametrize("sigma, steps, q", [(1.0, 1, 1.0), (2.0, 10, 0.1), (0.7, 1000, 1e-3)])
def test_gaussian_rho_is_the_closed_form(sigma, steps, q):
    """ρ = T/(2σ²) (Bun & Steinke 2016, Prop 1.6); subsampling does not lower it (W-11)."""
    acc = Accountant("rdp").add(GaussianMechanism(sigma), steps,
                                scheme=None if q == 1.0 else Poisson(q))
    z = acc.zcdp_rho()
    exact = steps / (2 * sigma * sigma)
    assert exact <= z.rho <= exact * (1 + 1e-12)


def _mp_laplace_rdp(theta, a):
    th, a = mp.mpf(theta), mp.mpf(a)
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * th)
                  + (a - 1) / (2 * a - 1) * mp.exp(-a * th)) / (a - 1)


def _mp_rr_rdp(p, a):
    p, a = mp.mpf(p), mp.mpf(a)
    return mp.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


@pytest.mark.parametrize("mech, fn, param", [
    (LaplaceMechanism(0.5), _mp_laplace_rdp, 2.0),
    (LaplaceMechanism(5.0), _mp_laplace_rdp, 0.2),
    (RandomizedResponse(0.9), _mp_rr_rdp, 0.9),
    (RandomizedResponse(0.55), _mp_rr_rdp, 0.55),
])
def test_pure_dp_rho_against_mpmath(mech, fn, param):
    """sup_α D_α/α by mpmath on a fine grid plus the order → 1 limit: ρ is above it and within
    1 % of it; and never above the pure-DP ε²/2 (Bun & Steinke 2016, Prop 1.4)."""
    with mp.workdps(40):
        grid = [1 + mp.mpf(10) ** (-k) for k in range(2, 9)] + \
            [mp.mpf(a) for a in np.geomspace(1.01, 1e4, 400)]
        sup = max(fn(param, a) / a for a in grid)
    z = Accountant("rdp").add(mech, 3).zcdp_rho()
    assert mp.mpf(z.rho) >= 3 * sup
    assert z.rho <= 3 * float(sup) * 1.01
    eps = float(rdp_curve(mech, [math.inf]).epsilons[0])
    assert z.rho <= 3 * eps * eps / 2 * (1 + 1e-12)


def test_rho_infinite_with_a_reason():
    acc = Accountant("rdp").add(ApproxDPMechanism(1.0, 1e-6), 2)
    z = acc.zcdp_rho()
    assert math.isinf(z.rho) and "neither a Gaussian zCDP bound nor pure DP" in z.reason


def test_exact_laplace_tightens_ledger_epsilon():
    """The RDP backend now uses the exact Poisson-subsampled Laplace curve: ε(δ) of a ledger is
    smaller than with the factor-3 bound (measured in benchmarks/bench_rdp_exact.py)."""
    from privamp.rdp import zhu_wang_upper_bound

    lap = LaplaceMechanism(0.5)
    exact = Accountant("rdp").add(lap, 1000, scheme=Poisson(0.05)).epsilon(1e-6).upper
    zw = RdpAccountant(DEFAULT_ORDERS).compose(
        lambda o: zhu_wang_upper_bound(lap, 0.05, o), 1000).epsilon(1e-6)
    assert exact < zw


# ---------------------------------------------------------------------------------------------
# the command line: privamp rdp --steps T --zcdp
# ---------------------------------------------------------------------------------------------

LAP_CLI = ["rdp", "--mechanism", "laplace", "--scale", "0.5", "--sampling", "poisson",
           "--rate", "0.05"]


def test_cli_exact_laplace_steps_and_zcdp(capsys):
    from cli_helpers import run_json
    from privamp.rdp.poisson_exact import poisson_exact_rdp

    d = run_json([*LAP_CLI, "--orders", "3", "10", "--method", "exact"], capsys)
    exact = poisson_exact_rdp(LaplaceMechanism(0.5), 0.05, [3.0, 10.0])
    assert d["bound"] == "exact" and d["rdp"] == exact.epsilons.tolist()
    assert "steps" not in d and "zcdp" not in d  # the existing keys only, unless asked
    auto = run_json([*LAP_CLI, "--orders", "3", "10"], capsys)
    assert auto["bound"] == "exact" and auto["rdp"] == d["rdp"]
    t = run_json([*LAP_CLI, "--orders", "3", "10", "--steps", "100", "--zcdp"], capsys)
    assert t["steps"] == 100
    assert np.all(np.array(t["rdp"]) >= 100 * exact.epsilons)
    assert np.all(np.array(t["rdp_lower"]) <= 100 * exact.lower_epsilons)
    z = Accountant("rdp").add(LaplaceMechanism(0.5), 100, scheme=Poisson(0.05)).zcdp_rho()
    assert t["zcdp"]["rho"] == z.rho and t["zcdp"]["bounded_by"] == z.bounded_by


@pytest.mark.parametrize("argv, match", [
    ([*LAP_CLI, "--zcdp", "--method", "zhu-wang"], "--zcdp uses the accountant's bounds"),
    ([*LAP_CLI, "--steps", "0"], "--steps must be"),
    (["rdp", "--mechanism", "gaussian", "--sigma", "1", "--group-size", "2", "--zcdp"],
     "--zcdp needs --group-size 1"),
])
def test_cli_refusals(argv, match, capsys):
    from cli_helpers import run_error

    err = run_error(argv, capsys)
    assert match in err
