"""Poisson sampling at rate 1 is no subsampling: every path must give the plain composition.

Issue 15: the add orientation of the Poisson-subsampled Gaussian was written as −∞ at γ = 1
(``c = 1 − α(1 − γ)`` is exactly 1 there), which removed it from the composition and from the
left tail of the remove orientation; ε was under-reported by up to 100×. These tests pin the
reported cases against the exact μ-GDP value (mpmath, :mod:`.references`).
"""

from __future__ import annotations

import math

import pytest

from cli_helpers import run_json
from conformance.references import gaussian_composition_delta, gaussian_composition_epsilon
from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.calibrate import calibrate_rate, calibrate_sigma
from privamp.sampling import Poisson

POISSON_1 = ["--mechanism", "gaussian", "--sampling", "poisson", "--rate", "1.0"]


@pytest.mark.parametrize("rate", [1.0, 1 - 2**-53, 1 - 1e-12, 0.999999])
@pytest.mark.parametrize("backend", ["pld", "fourier", "rdp"])
def test_epsilon_at_rate_one_is_the_plain_composition(capsys, rate, backend):
    out = run_json(["epsilon", *POISSON_1[:-1], repr(rate), "--sigma", "1", "--steps", "10",
                    "--delta", "1e-5", "--accountant", backend], capsys)
    exact = gaussian_composition_epsilon(1, 10, 1e-5)  # 17.8566
    assert out["epsilon"] >= exact
    if out["epsilon_lower"] is not None:
        assert out["epsilon_lower"] <= exact
    if backend == "pld":
        assert out["epsilon"] <= exact * (1 + 1e-3)


@pytest.mark.parametrize(("sigma", "steps", "delta"),
                         [(1, 1, 1e-3), (0.5, 2, 1e-5), (5, 10, 1e-5), (2, 10_000, 1e-5)])
def test_accountant_at_rate_one(sigma, steps, delta):
    b = Accountant().add(GaussianMechanism(sigma), steps, scheme=Poisson(1.0)).epsilon(delta)
    exact = gaussian_composition_epsilon(sigma, steps, delta)
    assert b.lower <= exact <= b.upper
    assert b.upper <= exact * (1 + 1e-3) + 1e-9


@pytest.mark.parametrize("steps", [1, 10])
def test_delta_at_rate_one(capsys, steps):
    out = run_json(["delta", *POISSON_1, "--sigma", "1", "--steps", str(steps),
                    "--epsilon", "2.189"], capsys)
    exact = gaussian_composition_delta(1, steps, 2.189)
    assert out["delta_lower"] <= exact <= out["delta"]


def test_heterogeneous_ledger_with_a_rate_one_event():
    g = GaussianMechanism(1.0)
    b = Accountant().add(g, 5, scheme=Poisson(1.0)).add(g, 5).epsilon(1e-5)
    exact = gaussian_composition_epsilon(1, 10, 1e-5)
    assert b.lower <= exact <= b.upper


def test_fourier_backend_at_rate_one_does_not_crash():
    acc = Accountant("fourier").add(GaussianMechanism(1.0), 10, scheme=Poisson(1.0))
    b = acc.epsilon(1e-5)
    exact = gaussian_composition_epsilon(1, 10, 1e-5)
    assert b.lower <= exact <= b.upper


def test_calibrated_rate_has_the_epsilon_it_reports():
    res = calibrate_rate(2.1, 1e-5, steps=10, mechanism=GaussianMechanism(5.0))
    assert res.value < 1  # rate 1 gives ε 2.59 > 2.1
    check = Accountant().add(GaussianMechanism(5.0), 10, scheme=Poisson(res.value))
    assert check.epsilon(1e-5).upper <= 2.1


def test_calibrated_sigma_at_rate_one_meets_the_target_exactly():
    res = calibrate_sigma(1.0, 1e-5, steps=1000, scheme=Poisson(1.0))
    assert gaussian_composition_epsilon(res.value, 1000, 1e-5) <= 1.0
    assert not math.isclose(res.value, 12.84, rel_tol=1e-2)  # the defect's answer
