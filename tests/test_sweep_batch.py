"""The batch API: results equal to the per-row accountant (exact reuse), certified brackets
around the same exact value (shared grids), errors recorded per row; the accounting cache."""

from __future__ import annotations

import math

import pytest

from privamp import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.accountant import Accountant
from privamp.cache import AccountingCache
from privamp.calibrate import calibrate_sigma
from privamp.errors import InvalidTypeError
from privamp.mechanisms.gaussian import GaussianProfile
from privamp.sampling import MustOW, Poisson, WithoutReplacement
from privamp.sweep import Configuration, evaluate, evaluate_one, expand


def reference(cfg: Configuration):
    """The per-row accountant, built by hand as ``privamp epsilon`` does."""
    sub = "substitute"
    if cfg.mechanism == "gaussian":
        rel = "add-remove" if cfg.sampling in ("none", "poisson") else sub
        mech = GaussianMechanism(cfg.sigma, sensitivity=cfg.sensitivity, relation=rel)
    elif cfg.mechanism == "laplace":
        rel = "add-remove" if cfg.sampling in ("none", "poisson") else sub
        mech = LaplaceMechanism(cfg.scale, sensitivity=cfg.sensitivity, relation=rel)
    else:
        mech = RandomizedResponse.from_epsilon(cfg.rr_epsilon, relation=sub)
    scheme = {"none": None, "poisson": lambda: Poisson(cfg.rate),
              "wor": lambda: WithoutReplacement(cfg.n, cfg.m),
              "must-ow": lambda: MustOW(cfg.n, cfg.b, cfg.m)}[cfg.sampling]
    acc = Accountant(cfg.backend).add(mech, cfg.steps, scheme=scheme() if scheme else None)
    return acc.epsilon(cfg.delta) if cfg.query == "epsilon" else acc.delta(cfg.epsilon)


MIXED = expand({"steps": [10, 200], "delta": [1e-5, 1e-7]}, [
    {"mechanism": "gaussian", "sigma": [0.9, 1.3], "sampling": "poisson", "rate": 0.02,
     "accountant": ["pld", "rdp"]},
    {"mechanism": "gaussian", "sigma": 1.0, "sampling": "wor", "n": 5000, "m": 50},
    {"mechanism": "laplace", "scale": 2.0, "sampling": "must-ow", "n": 1000, "b": 200,
     "m": 10},
    {"mechanism": "randomized-response", "rr_epsilon": 1.0, "sampling": "wor", "n": 100,
     "m": 5, "accountant": "rdp"},
    {"mechanism": "gaussian", "sigma": 2.0, "query": "delta", "epsilon": [0.5, 2.0]},
])


@pytest.mark.slow
def test_exact_reuse_equals_the_per_row_accountant():
    rows = evaluate(MIXED, reuse="exact")
    assert len(rows) == len(MIXED) == 32
    for cfg, row in zip(MIXED, rows, strict=True):
        assert row["error"] is None, row["error"]
        ref = reference(cfg)
        if cfg.query == "epsilon":
            assert (row["epsilon_lower"], row["epsilon"]) == (ref.lower, ref.upper), cfg
        else:
            assert (row["delta_lower"], row["delta"]) == (ref.lower, ref.upper), cfg


def test_exact_reuse_does_not_depend_on_the_order_or_the_company():
    cfgs = MIXED[:8]
    together = evaluate(cfgs)
    alone = [evaluate_one(c) for c in cfgs]
    backwards = evaluate(cfgs[::-1])[::-1]
    for a, b, c in zip(together, alone, backwards, strict=True):
        assert (a["epsilon"], a["epsilon_lower"]) == (b["epsilon"], b["epsilon_lower"])
        assert (a["epsilon"], a["epsilon_lower"]) == (c["epsilon"], c["epsilon_lower"])


def exact_gaussian_epsilon(sigma: float, steps: int, delta: float) -> float:
    """T Gaussian steps of sensitivity 1 compose to one Gaussian of noise σ/√T (exact)."""
    return float(GaussianProfile(math.sqrt(steps) / sigma).epsilon(delta))


@pytest.mark.slow
def test_shared_grids_bracket_the_same_exact_value():
    cfgs = expand({"mechanism": "gaussian", "sigma": [0.7, 1.5], "steps": [5, 50, 400],
                   "delta": [1e-3, 1e-5, 1e-7, 1e-10]})
    exact_rows = evaluate(cfgs, reuse="exact")
    grid_rows = evaluate(cfgs, reuse="grid")
    for cfg, e, g in zip(cfgs, exact_rows, grid_rows, strict=True):
        truth = exact_gaussian_epsilon(cfg.sigma, cfg.steps, cfg.delta)
        for row in (e, g):
            assert row["epsilon_lower"] <= truth * (1 + 1e-12), (cfg, row)
            assert truth <= row["epsilon"], (cfg, row)
        assert g["reuse"] == "grid" and e["reuse"] == "exact"
    assert any(e["epsilon"] != g["epsilon"] for e, g in zip(exact_rows, grid_rows, strict=True))


def test_shared_grids_overlap_on_poisson_and_do_not_depend_on_the_company():
    cfgs = expand({"mechanism": "gaussian", "sigma": 1.0, "sampling": "poisson",
                   "rate": [0.01, 0.05], "steps": [100, 1000],
                   "delta": [1e-4, 1e-5, 1e-6, 1e-8]})
    cache = AccountingCache()
    together = evaluate(cfgs, reuse="grid", cache=cache)
    assert cache.stats["composed"]["hits"] >= cache.stats["composed"]["misses"]
    for cfg, row in zip(cfgs, together, strict=True):
        ref = reference(cfg)
        assert max(ref.lower, row["epsilon_lower"]) <= min(ref.upper, row["epsilon"])
        assert abs(row["epsilon"] - ref.upper) <= 1e-4 * ref.upper
        # the target accuracy of the bracket holds for the shared grids too
        assert row["epsilon"] - row["epsilon_lower"] <= 1.2e-3 * row["epsilon"]
    for i in (0, 5, 11):
        alone = evaluate_one(cfgs[i], reuse="grid")
        assert (alone["epsilon"], alone["epsilon_lower"]) == (together[i]["epsilon"],
                                                              together[i]["epsilon_lower"])
        acc = Accountant(shared_grid=True).add(GaussianMechanism(1.0), cfgs[i].steps,
                                               scheme=Poisson(cfgs[i].rate))
        b = acc.epsilon(cfgs[i].delta)
        assert (b.lower, b.upper) == (together[i]["epsilon_lower"], together[i]["epsilon"])


def test_failures_are_recorded_per_row():
    cfgs = expand({"mechanism": "gaussian", "sigma": 1.0, "steps": 10, "delta": 1e-5,
                   "accountant": "rdp"},
                  [{"sampling": "wr", "n": 100, "m": 5},  # no RDP bound: error
                   {"sampling": "poisson", "rate": 0.01}])
    # m > n: expand refuses it with the grid (test_sweep_grid); made directly, it is a row error
    cfgs.append(Configuration.make(mechanism="gaussian", sigma=1.0, steps=10, delta=1e-5,
                                   backend="rdp", sampling="wor", n=10, m=20))
    rows = evaluate(cfgs)
    assert "UnsupportedCombinationError" in rows[0]["error"] and rows[0]["epsilon"] is None
    assert rows[1]["error"] is None and rows[1]["epsilon"] > 0
    assert "InvalidParameterError: m must be at most n = 10" in rows[2]["error"]
    assert all(r["seconds"] >= 0 for r in rows)


def test_calibration_rows_match_calibrate():
    (cfg,) = expand({"mechanism": "gaussian", "sampling": "poisson", "rate": 0.01,
                     "steps": 100, "delta": 1e-5, "query": "calibrate",
                     "target_epsilon": 1.0})
    (row,) = evaluate([cfg])
    ref = calibrate_sigma(1.0, 1e-5, steps=100, scheme=Poisson(0.01))
    assert row["sigma"] == ref.value and row["epsilon"] == ref.epsilon <= 1.0
    (bad,) = evaluate(expand({"mechanism": "gaussian", "sigma": 1.0, "steps": 10,
                              "delta": 1e-5, "query": "calibrate", "calibrate": "rate",
                              "target_epsilon": 1.0}))
    assert "needs sampling 'poisson'" in bad["error"]


def test_mappings_are_validated():
    rows = evaluate([{"mechanism": "gaussian", "sigma": 2.0, "steps": 3, "delta": 1e-5,
                      "accountant": "rdp"}])
    assert rows[0]["backend"] == "rdp" and rows[0]["epsilon"] > 0
    with pytest.raises(InvalidTypeError):
        evaluate([42])


def test_cache_gives_the_same_numbers_and_reuses_work():
    cache = AccountingCache()
    mech, scheme = GaussianMechanism(1.0), Poisson(0.02)
    for delta in (1e-4, 1e-5, 1e-6):
        with_cache = Accountant(cache=cache).add(mech, 300, scheme=scheme).epsilon(delta)
        without = Accountant().add(mech, 300, scheme=scheme).epsilon(delta)
        assert with_cache == without
        d_cache = Accountant(cache=cache).add(mech, 300, scheme=scheme).delta(delta * 1e5)
        assert d_cache == Accountant().add(mech, 300, scheme=scheme).delta(delta * 1e5)
    stats = cache.stats
    assert stats["step_range"]["hits"] > 0 and stats["pair_curves"]["hits"] > 0
    rdp_cache = AccountingCache()
    for steps in (10, 100, 1000):
        a = Accountant("rdp", cache=rdp_cache).add(mech, steps, scheme=scheme).epsilon(1e-5)
        assert a == Accountant("rdp").add(mech, steps, scheme=scheme).epsilon(1e-5)
    assert rdp_cache.stats["rdp"]["hits"] >= 2
    with pytest.raises(InvalidTypeError):
        Accountant(cache={})


def test_cache_byte_budget_evicts_least_recently_used():
    cache = AccountingCache(composed_bytes=10_000)
    for delta in (1e-5, 1e-6):
        Accountant(cache=cache).add(GaussianMechanism(1.0), 100,
                                    scheme=Poisson(0.01)).epsilon(delta)
    table = cache._tables["composed"]
    assert table.bytes <= 10_000
    assert "AccountingCache(" in repr(cache)
