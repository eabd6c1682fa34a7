"""Sweep grids: axes, ranges, sub-grids, TOML files, and their errors."""

from __future__ import annotations

import pytest

from privamp.errors import InvalidParameterError
from privamp.sweep import Configuration, expand, read_grid
from privamp.sweep import grid as grid_mod

BASE = {"mechanism": "gaussian", "sigma": 1.0, "steps": 100, "delta": 1e-5}


def test_cartesian_product_in_order():
    rows = expand({**BASE, "sigma": [1.0, 2.0], "steps": [10, 20, 30]})
    assert len(rows) == 6
    assert [(r.sigma, r.steps) for r in rows[:4]] == [(1.0, 10), (1.0, 20), (1.0, 30),
                                                      (2.0, 10)]
    assert all(r.relation == "add-remove" and r.sampling == "none" for r in rows)


def test_ranges_linear_log_step_and_integer_rounding():
    rows = expand({**BASE, "steps": {"start": 10, "stop": 1000, "num": 3, "scale": "log"}})
    assert [r.steps for r in rows] == [10, 100, 1000]
    rows = expand({**BASE, "sigma": {"start": 0.5, "stop": 1.5, "step": 0.5}})
    assert [r.sigma for r in rows] == [0.5, 1.0, 1.5]
    rows = expand({**BASE, "sigma": {"start": 1, "stop": 2, "num": 3}})
    assert [r.sigma for r in rows] == [1.0, 1.5, 2.0]
    # integer axes: rounded, repeated values dropped
    rows = expand({**BASE, "steps": {"start": 1, "stop": 3, "num": 5}})
    assert [r.steps for r in rows] == [1, 2, 3]


def test_inapplicable_parameters_dropped_and_duplicates_removed():
    rows = expand({**BASE, "sampling": ["poisson", "wor"], "rate": 0.01, "n": 1000,
                   "m": [10, 20], "scale": 3.0})
    poisson = [r for r in rows if r.sampling == "poisson"]
    wor = [r for r in rows if r.sampling == "wor"]
    assert len(poisson) == 1 and poisson[0].m is None and poisson[0].n is None
    assert poisson[0].scale is None and poisson[0].relation == "add-remove"
    assert [r.m for r in wor] == [10, 20] and all(r.relation == "substitute" for r in wor)
    assert all(r.rate is None for r in wor)


def test_poisson_rate_from_batch_size_and_n_under_substitution():
    (row,) = expand({**BASE, "sampling": "poisson", "n": 1000, "m": 10})
    assert row.rate == 0.01 and row.n is None and row.m is None
    (row,) = expand({**BASE, "sampling": "poisson", "rate": 0.02, "n": 1000,
                     "relation": "substitute"})
    assert row.n == 1000


def test_sub_grids_join_with_shared_axes_and_aliases():
    rows = expand({**BASE, "accountant": ["pld", "rdp"]},
                  [{"sampling": "poisson", "rate": 0.01},
                   {"sampling": "must-ow", "n": 100, "b": 50, "m": 5}])
    assert len(rows) == 4
    assert {r.backend for r in rows} == {"pld", "rdp"}
    rr = expand({"mechanism": "randomized-response", "rr-epsilon": 1.0, "steps": 10,
                 "delta": 1e-5, "sigma": 5.0})
    assert rr[0].rr_epsilon == 1.0 and rr[0].sigma is None and rr[0].sensitivity is None


def test_queries_keep_their_own_parameters():
    (d,) = expand({**BASE, "query": "delta", "epsilon": 1.0, "eps_error": 0.1})
    assert d.delta is None and d.epsilon == 1.0 and d.eps_error is None
    (c,) = expand({**BASE, "query": "calibrate", "target_epsilon": 2.0})
    assert c.calibrate == "sigma" and c.sigma is None
    (s,) = expand({**BASE, "query": "calibrate", "calibrate": "steps", "target_epsilon": 2.0,
                   "accountant": "rdp"})
    assert s.steps is None and s.max_steps == 10**9 and s.sigma == 1.0
    (r,) = expand({**BASE, "accountant": "rdp", "grid_step": 0.01, "eps_error": 0.1})
    assert r.grid_step is None and r.eps_error is None


def test_keys_identify_values():
    a, b = expand({**BASE, "sigma": [1.0, 2.0]})
    assert a.key != b.key and a.key == Configuration.make(**BASE).key
    assert len(a.key) == 20


def test_toml_file(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text('mechanism = "gaussian"\nsigma = [0.8, 1.0]\nsteps = 100\n'
                    'delta = [1e-5, 1e-6]\n\n[[grid]]\nsampling = "poisson"\nrate = 0.01\n\n'
                    '[[grid]]\nsampling = "wor"\nn = 60000\nm = 600\n')
    rows = read_grid(path)
    assert len(rows) == 8 and {r.sampling for r in rows} == {"poisson", "wor"}


@pytest.mark.parametrize("axes, message", [
    ({**BASE, "sigmaa": 1.0}, "did you mean 'sigma'"),
    ({**BASE, "sigma": []}, "non-empty list"),
    ({**BASE, "sigma": -1.0}, "sigma must be a real number in (0, inf)"),
    ({**BASE, "steps": 2.5}, "steps must be an integer"),
    ({**BASE, "sampling": "bernoulli"}, "sampling must be one of"),
    ({"mechanism": "gaussian", "steps": 10, "delta": 1e-5}, "sigma must be given"),
    ({**BASE, "sampling": "wor", "n": 100}, "m must be given"),
    ({"mechanism": "gaussian", "sigma": 1.0, "delta": 1e-5}, "steps must be given"),
    ({**BASE, "sigma": {"start": 1, "stop": 2}}, "exactly one of 'num' and 'step'"),
    ({**BASE, "sigma": {"start": 1, "stop": 2, "num": 2, "base": 3}}, "unknown key 'base'"),
    ({**BASE, "sigma": {"start": 0, "stop": 2, "num": 2, "scale": "log"}}, "positive"),
    ({**BASE, "sigma": {"start": 2, "stop": 1, "step": 0.5}}, "start <= stop"),
    ({**BASE, "mechanism": ["gaussian", "laplace"]}, "scale must be given"),
    ({**BASE, "backend": "pld", "accountant": "rdp"}, "named once"),
])
def test_bad_axes_are_named(axes, message):
    with pytest.raises(InvalidParameterError) as info:
        expand(axes)
    assert message in str(info.value)


def test_too_many_configurations(monkeypatch):
    monkeypatch.setattr(grid_mod, "MAX_CONFIGURATIONS", 100)
    with pytest.raises(InvalidParameterError, match="at most 100 configurations"):
        expand({**BASE, "sigma": {"start": 1, "stop": 2, "num": 11},
                "steps": {"start": 1, "stop": 10, "num": 10}})


def test_bad_files(tmp_path):
    with pytest.raises(InvalidParameterError, match="readable TOML file"):
        read_grid(tmp_path / "missing.toml")
    empty = tmp_path / "empty.toml"
    empty.write_text("# nothing\n")
    with pytest.raises(InvalidParameterError, match="naming at least one axis"):
        read_grid(empty)
    broken = tmp_path / "broken.toml"
    broken.write_text("sigma = [1.0\n")
    with pytest.raises(InvalidParameterError, match="valid TOML"):
        read_grid(broken)
    subgrid = tmp_path / "sub.toml"
    subgrid.write_text('mechanism = "gaussian"\nsigma = 1\nsteps = 1\ndelta = 1e-5\n'
                       '[[grid]]\nrate = -1\n')
    with pytest.raises(InvalidParameterError, match=r"grid\[1\]\.rate must be"):
        read_grid(subgrid)


@pytest.mark.parametrize(("axes", "grids", "parameter", "text"), [
    ({"sampling": "wor", "n": 10, "m": [5, 20]}, [], "m", "at most n = 10"),
    ({}, [{"sampling": "poisson", "rate": 0.1}, {"sampling": "must-wo", "n": 10, "b": 5,
                                                  "m": 6}], "grid[2].m", "at most b = 5"),
    ({"sampling": "must-ow", "n": 10, "b": 20, "m": 5}, [], "b", "at most n = 10"),
    ({"sampling": "wor", "n": 10, "m": 5, "relation": "add-remove"}, [], "relation",
     "not analysed under the 'add-remove' relation"),
])
def test_rows_the_library_refuses_are_refused_with_the_grid(axes, grids, parameter, text):
    """m > n, b > n, m > b, an unsupported relation: refused by expand, naming the axis (and
    the sub-grid) and the row, before anything is computed."""
    with pytest.raises(InvalidParameterError) as info:
        expand({**BASE, **axes}, grids)
    assert info.value.parameter == parameter
    assert text in str(info.value) and "in the row" in str(info.value)


def test_calibrated_sizes_are_not_checked_before_they_exist():
    (cfg,) = expand({"mechanism": "gaussian", "sigma": 1.0, "sampling": "must-ow", "n": 100,
                     "b": 50, "steps": 10, "delta": 1e-5, "query": "calibrate",
                     "calibrate": "m", "target_epsilon": 1.0})
    assert cfg.m is None and cfg.calibrate == "m"


def test_binary_grid_file(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_bytes(b"\xff\xfe" + "sigma = 1".encode("utf-16-le"))
    with pytest.raises(InvalidParameterError, match="UTF-8") as info:
        read_grid(path)
    assert info.value.parameter == "grid"
