"""Bad input gets a typed error naming the parameter — never a wrong number.

One table for the Python API and one for the command line (exit status 2, a one-line message on
stderr naming the option, nothing on stdout, no traceback).
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from privamp import (
    ApproxDPMechanism,
    DiscretePairMechanism,
    GaussianMechanism,
    GaussianProfile,
    InvalidParameterError,
    InvalidTypeError,
    LaplaceMechanism,
    LaplaceProfile,
    NeighbouringRelation,
    RandomizedMembershipMechanism,
    RandomizedResponse,
    TabulatedProfile,
    clipped_sum_sensitivity,
)
from privamp.cli import main
from privamp.divergences import hockey_stick, renyi_divergence
from privamp.privacy_loss import mgf_from_profile

NAN, INF = math.nan, math.inf

# (description, callable, parameter named in the message, exception type)
API_CASES = [
    ("gaussian sigma negative", lambda: GaussianMechanism(sigma=-1.0), "sigma",
     InvalidParameterError),
    ("gaussian sigma zero", lambda: GaussianMechanism(sigma=0.0), "sigma", InvalidParameterError),
    ("gaussian sigma NaN", lambda: GaussianMechanism(sigma=NAN), "sigma", InvalidParameterError),
    ("gaussian sigma inf", lambda: GaussianMechanism(sigma=INF), "sigma", InvalidParameterError),
    ("gaussian sigma string", lambda: GaussianMechanism(sigma="1"), "sigma", InvalidTypeError),
    ("gaussian sigma None", lambda: GaussianMechanism(sigma=None), "sigma", InvalidTypeError),
    ("gaussian sigma bool", lambda: GaussianMechanism(sigma=True), "sigma", InvalidTypeError),
    ("gaussian sigma list", lambda: GaussianMechanism(sigma=[1.0]), "sigma", InvalidTypeError),
    ("gaussian sensitivity negative", lambda: GaussianMechanism(1.0, sensitivity=-0.5),
     "sensitivity", InvalidParameterError),
    ("gaussian sensitivity NaN", lambda: GaussianMechanism(1.0, sensitivity=NAN),
     "sensitivity", InvalidParameterError),
    ("gaussian ratio overflows", lambda: GaussianMechanism(1e-300, sensitivity=1e300),
     "sigma", InvalidParameterError),
    ("gaussian relation unknown", lambda: GaussianMechanism(1.0, relation="neighbours"),
     "relation", InvalidParameterError),
    ("gaussian relation int", lambda: GaussianMechanism(1.0, relation=1), "relation",
     InvalidTypeError),
    ("laplace scale negative", lambda: LaplaceMechanism(scale=-2.0), "scale",
     InvalidParameterError),
    ("laplace scale NaN", lambda: LaplaceMechanism(scale=NAN), "scale", InvalidParameterError),
    ("laplace complex", lambda: LaplaceMechanism(scale=1 + 2j), "scale", InvalidTypeError),
    ("rr p above 1", lambda: RandomizedResponse(p=1.5), "p", InvalidParameterError),
    ("rr p negative", lambda: RandomizedResponse(p=-0.1), "p", InvalidParameterError),
    ("rr p NaN", lambda: RandomizedResponse(p=NAN), "p", InvalidParameterError),
    ("rr epsilon negative", lambda: RandomizedResponse.from_epsilon(-1.0), "epsilon",
     InvalidParameterError),
    ("rr calibrated delta above 1", lambda: RandomizedResponse.calibrated(1.0, 2.0), "delta",
     InvalidParameterError),
    ("membership p NaN", lambda: RandomizedMembershipMechanism(0, NAN), "p",
     InvalidParameterError),
    ("approx-dp delta above 1", lambda: ApproxDPMechanism(1.0, 1.5), "delta",
     InvalidParameterError),
    ("approx-dp epsilon inf", lambda: ApproxDPMechanism(INF, 0.1), "epsilon",
     InvalidParameterError),
    ("discrete pair negative mass", lambda: DiscretePairMechanism([1.2, -0.2], [0.5, 0.5]), "p",
     InvalidParameterError),
    ("discrete pair not summing to 1", lambda: DiscretePairMechanism([0.5, 0.4], [0.5, 0.5]),
     "p", InvalidParameterError),
    ("discrete pair length mismatch", lambda: DiscretePairMechanism([1.0], [0.5, 0.5]), "p, q",
     InvalidParameterError),
    ("profile delta at negative eps", lambda: GaussianProfile(1.0).delta(-1.0), "eps",
     InvalidParameterError),
    ("profile delta at NaN", lambda: GaussianProfile(1.0).delta([0.5, NAN]), "eps",
     InvalidParameterError),
    ("profile epsilon delta above 1", lambda: GaussianProfile(1.0).epsilon(2.0), "delta",
     InvalidParameterError),
    ("profile epsilon delta negative", lambda: LaplaceProfile(1.0).epsilon(-0.1), "delta",
     InvalidParameterError),
    ("profile epsilon delta NaN", lambda: LaplaceProfile(1.0).epsilon(NAN), "delta",
     InvalidParameterError),
    ("profile epsilon string", lambda: LaplaceProfile(1.0).epsilon("small"), "delta",
     InvalidTypeError),
    ("profile is_dp delta above 1", lambda: LaplaceProfile(1.0).is_dp(1.0, 1.5), "delta",
     InvalidParameterError),
    ("group size zero", lambda: GaussianProfile(1.0).group(0), "k", InvalidParameterError),
    ("group size fractional", lambda: GaussianProfile(1.0).group(1.5), "k",
     InvalidParameterError),
    ("group method unknown", lambda: GaussianProfile(1.0).group(2, "grey-box"), "group_privacy",
     InvalidParameterError),
    ("theta negative", lambda: GaussianProfile(-1.0), "theta", InvalidParameterError),
    ("tabulated not increasing", lambda: TabulatedProfile([1.0, 0.5], [0.1, 0.2]), "eps",
     InvalidParameterError),
    ("hockey stick NaN eps", lambda: hockey_stick([0.5, 0.5], [0.5, 0.5], NAN), "eps",
     InvalidParameterError),
    ("renyi negative order", lambda: renyi_divergence([0.5, 0.5], [0.5, 0.5], -1.0), "order",
     InvalidParameterError),
    ("mgf negative s", lambda: mgf_from_profile(GaussianProfile(1.0), -1.0), "s",
     InvalidParameterError),
    ("clip norm zero", lambda: clipped_sum_sensitivity(0.0, "add-remove"), "clip_norm",
     InvalidParameterError),
    ("relation parse", lambda: NeighbouringRelation.parse("both"), "relation",
     InvalidParameterError),
    ("release non-finite value", lambda: GaussianMechanism(1.0).release(INF, rng=0), "value",
     InvalidParameterError),
    ("release bad rng", lambda: GaussianMechanism(1.0).release(0.0, rng="seed"), "rng",
     InvalidTypeError),
    ("calibrate delta zero", lambda: GaussianMechanism.calibrated(1.0, 0.0), "delta",
     InvalidParameterError),
]


def test_api_table_is_large_enough():
    """The issue asks for at least 30 invalid combinations."""
    assert len(API_CASES) >= 30


@pytest.mark.parametrize(("call", "parameter", "exc"), [c[1:] for c in API_CASES],
                         ids=[c[0] for c in API_CASES])
def test_api_rejects_bad_input(call, parameter, exc):
    """A typed error whose message starts with the parameter's name and states the rule."""
    with pytest.raises(exc) as info:
        call()
    err = info.value
    assert isinstance(err, InvalidParameterError)
    assert str(err).startswith(f"{parameter} must be"), str(err)
    assert "; got " in str(err)


def test_type_errors_are_also_builtin_type_errors():
    """Generic code catching TypeError / ValueError keeps working."""
    with pytest.raises(TypeError):
        GaussianMechanism(sigma="1")
    with pytest.raises(ValueError):
        GaussianMechanism(sigma=-1.0)


G = ["profile", "--mechanism", "gaussian", "--sigma", "2", "--sampling", "none"]

# (description, argv, text the message must contain)
CLI_CASES = [
    ("sigma negative", ["profile", "--mechanism", "gaussian", "--sigma", "-1", "--eps", "1"],
     "--sigma must be a real number in (0, inf)"),
    ("sigma NaN", ["profile", "--mechanism", "gaussian", "--sigma", "nan", "--eps", "1"],
     "--sigma"),
    ("sigma inf", ["profile", "--mechanism", "gaussian", "--sigma", "inf", "--eps", "1"],
     "--sigma"),
    ("sigma not a number", ["profile", "--mechanism", "gaussian", "--sigma", "abc", "--eps", "1"],
     "--sigma"),
    ("sigma missing", ["profile", "--mechanism", "gaussian", "--eps", "1"], "--sigma"),
    ("scale zero", ["profile", "--mechanism", "laplace", "--scale", "0", "--eps", "1"],
     "--scale"),
    ("sensitivity negative", [*G[:5], "--sensitivity", "-1", "--eps", "1"], "--sensitivity"),
    ("rr epsilon negative", ["profile", "--mechanism", "randomized-response", "--rr-epsilon",
                             "-1", "--eps", "1"], "--rr-epsilon"),
    ("rr p above one", ["profile", "--mechanism", "randomized-response", "--rr-p", "1.5",
                        "--eps", "1"], "--rr-p"),
    ("rr both parameters", ["profile", "--mechanism", "randomized-response", "--rr-p", "0.7",
                            "--rr-epsilon", "1", "--eps", "1"], "--rr-epsilon"),
    ("eps negative", [*G, "--eps", "-0.5"], "--eps"),
    ("eps NaN", [*G, "--eps", "0.5", "nan"], "--eps"),
    ("eps missing", G, "--eps"),
    ("unknown mechanism", ["profile", "--mechanism", "magic", "--eps", "1"], "--mechanism"),
    ("unknown relation", [*G, "--relation", "both", "--eps", "1"], "--relation"),
    ("group size zero", [*G, "--group-size", "0", "--eps", "1"], "--group-size"),
    ("group size fractional", [*G, "--group-size", "1.5", "--eps", "1"], "--group-size"),
    ("unknown group method", [*G, "--group-privacy", "grey", "--eps", "1"], "--group-privacy"),
    ("unknown command", ["frobnicate"], "frobnicate"),
    ("plot eps-max negative", ["plot", "profile", "--mechanism", "gaussian", "--sigma", "1",
                               "--eps-max", "-1", "--out", "x.png"], "--eps-max"),
]


@pytest.mark.parametrize(("argv", "needle"), [c[1:] for c in CLI_CASES],
                         ids=[c[0] for c in CLI_CASES])
def test_cli_rejects_bad_input(argv, needle, capsys, tmp_path, monkeypatch):
    """Exit status 2, one line on stderr naming the option, nothing on stdout."""
    monkeypatch.chdir(tmp_path)
    status = main([*argv, "--json"] if argv[0] == "profile" else argv)
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    assert needle in lines[0], lines[0]
    assert "Traceback" not in err


def test_cli_table_is_large_enough():
    """CLI and API tables together exceed 30 invalid combinations."""
    assert len(CLI_CASES) >= 15 and len(CLI_CASES) + len(API_CASES) >= 30


@pytest.mark.parametrize("argv", [
    ["profile", "--mechanism", "gaussian", "--sigma", "-1", "--sampling", "none", "--eps", "1",
     "--json"],
    ["profile", "--mechanism", "gaussian", "--sigma", "nan", "--eps", "1", "--json"],
])
def test_cli_subprocess_exit_status(argv):
    """The real console entry point exits with status 2 and no traceback."""
    r = subprocess.run([sys.executable, "-m", "privamp", *argv], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2
    assert r.stdout == ""
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_no_nan_ever_leaks_from_valid_input():
    """Valid extreme inputs give numbers, never NaN."""
    for prof in [GaussianProfile(1e-12), GaussianProfile(1e6), LaplaceProfile(1e-300),
                 LaplaceProfile(700.0)]:
        vals = prof.log_delta(np.array([0.0, 1e-300, 1.0, 700.0, 1e6, INF]))
        assert not np.any(np.isnan(vals))
        assert not np.isnan(prof.epsilon(1e-10))
