"""Calibration for groups of K records (issue 20, item 2): every calibration function takes
``group_size`` and returns a value whose group ledger is certified within the target, and one
that is optimal to its tolerance; the CLI's ``calibrate --group-size``."""

from __future__ import annotations

import pytest

from cli_helpers import run_error, run_json
from privamp import Accountant, GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp import calibrate as cal
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.sampling import WOR, Poisson
from privamp.sampling.schemes import SCHEMES

DELTA = 1e-5


def _eps(mech, steps, scheme, k, relation=None):
    acc = Accountant().add(mech, steps, scheme=scheme, relation=relation, group_size=k)
    return acc.epsilon(DELTA, lower=False).upper


@pytest.mark.parametrize(("mechanism", "scheme", "k"), [("gaussian", Poisson(0.02), 2),
                                                        ("laplace", Poisson(0.02), 3),
                                                        ("gaussian", WOR(1000, 20), 3)])
def test_sigma_for_groups(mechanism, scheme, k):
    res = cal.calibrate_sigma(2.0, DELTA, steps=100, scheme=scheme, mechanism=mechanism,
                              group_size=k, rtol=1e-3)
    one = cal.calibrate_sigma(2.0, DELTA, steps=100, scheme=scheme, mechanism=mechanism,
                              rtol=1e-3)
    assert res.group_size == k and res.value > one.value
    cls = GaussianMechanism if mechanism == "gaussian" else LaplaceMechanism
    rel = scheme.resolve(None)[1]
    # certified at the value, and not at the value × (1 − rtol)
    assert _eps(cls.from_params(rel, **{cls.noise: res.value}), 100, scheme, k) <= 2.0
    assert _eps(cls.from_params(rel, **{cls.noise: res.value * (1 - 1e-3)}), 100, scheme,
                k) > 2.0


def test_rate_and_steps_for_groups():
    """Randomized response (tight at the group's hit rate: cheap) under Poisson."""
    mech = RandomizedResponse.from_epsilon(1.0)
    rate = cal.calibrate_rate(2.0, DELTA, steps=200, mechanism=mech, group_size=2, rtol=1e-3)
    assert rate.group_size == 2
    assert _eps(mech, 200, Poisson(rate.value), 2) <= 2.0
    assert rate.value < cal.calibrate_rate(2.0, DELTA, steps=200, mechanism=mech,
                                           rtol=1e-3).value
    steps = cal.calibrate_steps(2.0, DELTA, mechanism=mech, scheme=Poisson(0.05),
                                group_size=2, max_steps=10**5)
    t = int(steps.value)
    assert _eps(mech, t, Poisson(0.05), 2) <= 2.0 < _eps(mech, t + 1, Poisson(0.05), 2)


def test_must_for_groups():
    sub = GaussianMechanism(3.0, relation="substitute")
    must = cal.calibrate_must(3.0, DELTA, steps=5, mechanism=sub, n=200, kind="ow", b=100,
                              group_size=2)
    scheme = SCHEMES["must-ow"](200, 100, int(must.value))
    assert must.group_size == 2 and _eps(sub, 5, scheme, 2) <= 3.0


def test_risk_for_groups():
    """Without sampling a group of K is the Gaussian at sensitivity KΔ exactly: the noise
    calibrated for K = 2 is twice the one-record noise (to the search's tolerance)."""
    res = cal.calibrate_sigma_risk(steps=10, tpr=0.2, fpr=0.05, group_size=2, rtol=1e-4)
    one = cal.calibrate_sigma_risk(steps=10, tpr=0.2, fpr=0.05, rtol=1e-4)
    assert res.group_size == 2
    assert res.value == pytest.approx(2 * one.value, rel=3e-4)
    acc = Accountant().add(GaussianMechanism(res.value), 10, group_size=2)
    assert acc.tpr(0.05).upper <= 0.2


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_group_size(bad):
    with pytest.raises((InvalidParameterError, TypeError)):
        cal.calibrate_sigma(2.0, DELTA, steps=10, group_size=bad)


def test_rdp_refuses_groups():
    with pytest.raises(UnsupportedCombinationError, match="pld"):
        cal.calibrate_sigma(2.0, DELTA, steps=10, scheme=Poisson(0.1), backend="rdp",
                            group_size=2)


def test_cli(capsys):
    """Randomized response at the group's hit rate (tight): the largest T for groups of 2."""
    out = run_json(["calibrate", "--mechanism", "randomized-response", "--rr-epsilon", "1",
                    "--sampling", "poisson", "--rate", "0.01", "--target-epsilon", "3",
                    "--delta", "1e-5", "--calibrate", "steps", "--group-size", "2",
                    "--max-steps", "100000"], capsys)
    assert out["group_size"] == 2
    rr = RandomizedResponse.from_epsilon(1.0)
    t = out["steps"]
    assert _eps(rr, t, Poisson(0.01), 2) <= 3.0 < _eps(rr, t + 1, Poisson(0.01), 2)


def test_cli_refusals(capsys):
    err = run_error(["calibrate", "--mechanism", "gaussian", "--target-epsilon", "3",
                     "--delta", "1e-5", "--steps", "10", "--sampling", "poisson", "--rate",
                     "0.1", "--group-size", "2", "--accountant", "rdp"], capsys)
    assert "--group-size" in err and "pld" in err
