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

from cli_helpers import run_error, run_json
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


# ---------------------------------------------------------------------------------------------
# the command line refuses what it would otherwise ignore, misread or crash on (issue 15, 7)
# ---------------------------------------------------------------------------------------------

GS = ["--mechanism", "gaussian", "--sigma", "1"]
POISSON = ["--sampling", "poisson", "--rate", "0.1"]
WOR = ["--sampling", "wor", "--n", "100", "--m", "10"]
MUST = ["--sampling", "must-ow", "--n", "100", "--b", "50", "--m", "10"]
EPS = ["--steps", "10", "--delta", "1e-5"]

# (description, argv, texts the one-line message must contain)
INAPPLICABLE = [
    ("rate without sampling", ["epsilon", *GS, "--rate", "0.1", *EPS],
     ["--rate does not apply to --sampling none"]),
    ("rate with wor", ["epsilon", *GS, *WOR, "--rate", "0.1", *EPS],
     ["--rate does not apply to --sampling wor", "--n, --m"]),
    ("rate with wr", ["profile", *GS, "--sampling", "wr", "--n", "9", "--m", "3", "--rate",
                      "0.1", "--eps", "1"], ["--rate does not apply to --sampling wr"]),
    ("rate with must", ["delta", *GS, *MUST, "--rate", "0.1", "--steps", "2", "--epsilon", "1"],
     ["--rate does not apply to --sampling must-ow"]),
    ("m with poisson", ["profile", *GS, *POISSON, "--m", "3", "--eps", "1"],
     ["--m does not apply to --sampling poisson (it reads --rate"]),
    ("b with poisson", ["profile", *GS, *POISSON, "--b", "3", "--eps", "1"],
     ["--b does not apply to --sampling poisson"]),
    ("n with poisson under add-remove", ["profile", *GS, *POISSON, "--n", "30", "--eps", "1"],
     ["--n does not apply to --sampling poisson", "--n only under --relation substitute"]),
    ("b with wor", ["profile", *GS, *WOR, "--b", "20", "--eps", "1"],
     ["--b does not apply to --sampling wor"]),
    ("b with wr", ["epsilon", *GS, "--sampling", "wr", "--n", "9", "--m", "3", "--b", "4", *EPS],
     ["--b does not apply to --sampling wr"]),
    ("n without sampling", ["profile", *GS, "--n", "5", "--eps", "1"],
     ["--n does not apply to --sampling none"]),
    ("m without sampling", ["calibrate", "--mechanism", "gaussian", "--target-epsilon", "1",
                            "--delta", "1e-5", "--steps", "3", "--m", "4"],
     ["--m does not apply to --sampling none"]),
    ("scale with gaussian", ["profile", *GS, "--scale", "2", "--eps", "1"],
     ["--scale does not apply to --mechanism gaussian", "--sigma, --sensitivity"]),
    ("sigma with laplace", ["epsilon", "--mechanism", "laplace", "--scale", "1", "--sigma", "2",
                            *EPS], ["--sigma does not apply to --mechanism laplace"]),
    ("rr-p with gaussian", ["profile", *GS, "--rr-p", "0.7", "--eps", "1"],
     ["--rr-p does not apply to --mechanism gaussian"]),
    ("rr-epsilon with laplace", ["rdp", "--mechanism", "laplace", "--scale", "1",
                                 "--rr-epsilon", "1"],
     ["--rr-epsilon does not apply to --mechanism laplace"]),
    ("sensitivity with randomized response",
     ["profile", "--mechanism", "randomized-response", "--rr-p", "0.7", "--sensitivity", "2",
      "--eps", "1"], ["--sensitivity does not apply to --mechanism randomized-response"]),
    ("group privacy with wor", ["profile", *GS, *WOR, "--group-privacy", "black-box", "--eps",
                                "1"], ["--group-privacy does not apply to --sampling wor"]),
    ("group privacy with poisson", ["epsilon", *GS, *POISSON, "--group-privacy", "white-box",
                                    *EPS], ["--group-privacy does not apply"]),
    ("group privacy for one record", ["profile", *GS, "--group-privacy", "black-box", "--eps",
                                      "1"], ["--group-privacy does not apply to --sampling none"]),
    ("rate with rdp, no sampling", ["rdp", *GS, "--rate", "0.1"],
     ["--rate does not apply to --sampling none"]),
    ("n with rdp poisson", ["rdp", *GS, "--sampling", "poisson", "--rate", "0.1", "--n", "10"],
     ["--n does not apply to --sampling poisson"]),
    ("b with plot composition, no must", ["plot", "composition", *GS, "--n", "100", "--m", "10",
                                          "--b", "20", "--schemes", "wor", "--out", "c.png"],
     ["--b does not apply to --schemes wor"]),
    ("b with plot aligned, no must", ["plot", "aligned", *GS, "--n", "100", "--m", "10", "--b",
                                      "20", "--schemes", "wor", "wr", "--out", "a.png"],
     ["--b does not apply to --schemes wor wr (they read --n, --m)"]),
    ("sigma with plot delta laplace", ["plot", "delta", "--mechanism", "laplace", "--scale", "1",
                                       "--sigma", "1", "--steps", "2", "--out", "d.png"],
     ["--sigma does not apply"]),
    ("b with experiment poisson", ["experiment", "bootstrap", "--scheme", "poisson", "--b", "20"],
     ["--b does not apply to --scheme poisson"]),
    ("b with experiment wor", ["experiment", "linear", "--scheme", "wor", "--b", "20"],
     ["--b does not apply to --scheme wor"]),
    ("b with efficiency, no must", ["experiment", "efficiency", "--schemes", "wor", "--n", "50",
                                    "--b", "20", "--m", "5"],
     ["--b does not apply to --schemes wor"]),
    ("calibrated sigma given", ["calibrate", *GS, "--target-epsilon", "1", "--delta", "1e-5",
                                "--steps", "3"], ["--sigma is what --calibrate sigma computes"]),
    ("calibrated rate given", ["calibrate", *GS, "--target-epsilon", "1", "--delta", "1e-5",
                               *POISSON, "--steps", "3", "--calibrate", "rate"],
     ["--rate is what --calibrate rate computes"]),
    ("calibrated steps given", ["calibrate", *GS, "--target-epsilon", "1", "--delta", "1e-5",
                                "--steps", "3", "--calibrate", "steps"],
     ["--steps is what --calibrate steps computes"]),
    ("calibrated b given", ["calibrate", *GS, "--target-epsilon", "1", "--delta", "1e-5", *MUST,
                            "--steps", "3", "--calibrate", "b"],
     ["--b is what --calibrate b computes"]),
    ("max-steps without calibrating steps", ["calibrate", "--mechanism", "gaussian",
                                             "--target-epsilon", "1", "--delta", "1e-5",
                                             "--steps", "3", "--max-steps", "10"],
     ["--max-steps applies to --calibrate steps only"]),
    ("calibrate rate under substitution", ["calibrate", *GS, "--target-epsilon", "1", "--delta",
                                           "1e-5", "--steps", "3", "--calibrate", "rate",
                                           "--relation", "substitute"],
     ["--calibrate rate is analysed under --relation add-remove only"]),
    ("calibrate m under add-remove", ["calibrate", *GS, "--target-epsilon", "1", "--delta",
                                      "1e-5", "--sampling", "must-ow", "--n", "100", "--b", "50",
                                      "--steps", "3", "--calibrate", "m", "--relation",
                                      "add-remove"],
     ["--calibrate m is analysed under --relation substitute only"]),
    ("calibrate randomized response noise", ["calibrate", "--mechanism", "randomized-response",
                                             "--rr-p", "0.7", "--target-epsilon", "1", "--delta",
                                             "1e-5", "--steps", "3"],
     ["has no noise to calibrate"]),
    ("calibrate rate with wor", ["calibrate", *GS, "--target-epsilon", "1", "--delta", "1e-5",
                                 "--sampling", "wor", "--n", "100", "--steps", "3",
                                 "--calibrate", "rate"],
     ["--calibrate rate needs --sampling poisson"]),
    ("add-remove with wor", ["epsilon", *GS, *WOR, "--relation", "add-remove", *EPS],
     ["not analysed under the 'add-remove' relation"]),
    ("sensitivity zero", ["profile", *GS, "--sensitivity", "0", "--eps", "1"],
     ["--sensitivity must be a real number in (0, inf); got 0.0"]),
]

# integer counts: refused while parsing, by name, with the accepted range
COUNTS = [
    ("n zero", ["profile", *GS, "--sampling", "wor", "--n", "0", "--m", "1", "--eps", "1"],
     ["--n must be an integer in [1, inf); got 0"]),
    ("m negative", ["profile", *GS, "--sampling", "wor", "--n", "5", "--m", "-1", "--eps", "1"],
     ["--m must be an integer in [1, inf); got -1"]),
    ("b not an integer", ["profile", *GS, "--sampling", "must-ww", "--n", "5", "--b", "2.5",
                          "--m", "1", "--eps", "1"], ["--b must be an integer", "got '2.5'"]),
    ("group size negative", ["profile", *GS, "--group-size", "-2", "--eps", "1"],
     ["--group-size must be an integer in [1, inf); got -2"]),
    ("steps zero", ["epsilon", *GS, "--steps", "0", "--delta", "1e-5"],
     ["--steps must be an integer in [1, inf); got 0"]),
    ("steps not a number", ["delta", *GS, "--steps", "ten", "--epsilon", "1"],
     ["--steps must be an integer in [1, inf); got 'ten'"]),
    ("max-steps zero", ["calibrate", *GS, "--target-epsilon", "1", "--delta", "1e-5",
                        "--calibrate", "steps", "--max-steps", "0"],
     ["--max-steps must be an integer in [1, inf); got 0"]),
    ("points one", ["plot", "composition", *GS, "--n", "100", "--m", "10", "--points", "1",
                    "--out", "c.png"], ["--points must be an integer in [2, 1000]; got 1"]),
    ("max-steps huge", ["plot", "composition", *GS, "--n", "100", "--m", "10", "--max-steps",
                        "9" * 30, "--out", "c.png"], ["--max-steps must be an integer in [2, "]),
    ("plot delta steps zero", ["plot", "delta", *GS, "--steps", "5", "0", "--out", "d.png"],
     ["--steps must be an integer in [1, inf); got 0"]),
    ("plot aligned points", ["plot", "aligned", *GS, "--n", "100", "--m", "10", "--points", "0",
                             "--out", "a.png"], ["--points must be an integer in [2, 100000]"]),
    ("rdp m negative", ["rdp", *GS, "--sampling", "wor", "--n", "5", "--m", "-1"],
     ["--m must be an integer in [0, inf); got -1"]),
    ("iteration n zero", ["iteration", "--n", "0", "--step-size", "0.1", "--lipschitz", "1",
                          "--smoothness", "1", "--strong-convexity", "0.5", "--sigma", "1"],
     ["--n/--steps must be an integer in [1, inf); got 0"]),
    ("iteration index zero", ["iteration", "--n", "5", "--index", "0", "--step-size", "0.1",
                              "--lipschitz", "1", "--smoothness", "1", "--strong-convexity",
                              "0.5", "--sigma", "1"], ["--index must be an integer in [1, inf)"]),
    ("ou dimension zero", ["ou", "--theta", "1", "--rho", "1", "--dimension", "0"],
     ["--dimension must be an integer in [1, inf); got 0"]),
    ("replicates zero", ["experiment", "bootstrap", "--replicates", "0"],
     ["--replicates must be an integer in [2, inf); got 0"]),
    ("repeats zero", ["experiment", "bootstrap", "--repeats", "0"],
     ["--repeats must be an integer in [2, inf); got 0"]),
    ("repeats zero with quick", ["experiment", "linear", "--quick", "--repeats", "0"],
     ["--repeats must be an integer in [2, inf); got 0"]),
    ("logistic repeats zero", ["experiment", "logistic", "--data", "x.csv", "--repeats", "0"],
     ["--repeats must be an integer in [1, inf); got 0"]),
    ("draws zero", ["experiment", "efficiency", "--draws", "0"],
     ["--draws must be an integer in [1, inf); got 0"]),
    ("draws negative", ["experiment", "efficiency", "--quick", "--draws", "-3"],
     ["--draws must be an integer in [1, inf); got -3"]),
    ("experiment n zero", ["experiment", "linear", "--n", "0"],
     ["--n must be an integer in [1, inf); got 0"]),
    ("experiment seed negative", ["experiment", "bootstrap", "--seed", "-1"],
     ["--seed must be an integer in [0, inf); got -1"]),
    ("efficiency seed negative", ["experiment", "efficiency", "--seed", "-1"],
     ["--seed must be an integer in [0, inf); got -1"]),
    ("reproduce seed negative", ["reproduce", "must-table1", "--seed", "-1"],
     ["--seed must be an integer in [0, inf); got -1"]),
    ("sweep workers zero", ["sweep", "grid.toml", "--out", "x.parquet", "--workers", "0"],
     ["--workers must be an integer in [1, 1024]; got 0"]),
    ("sweep chunk size zero", ["sweep", "grid.toml", "--out", "x.parquet", "--chunk-size", "0"],
     ["--chunk-size must be an integer in [1, inf); got 0"]),
    ("efficiency sizes apart", ["experiment", "efficiency", "--n", "50", "--m", "5"],
     ["--n, --m and --b (for the must-* schemes) go together"]),
]

# plot outputs: refused before anything is computed
OUTPUTS = [
    ("unknown extension", ["plot", "profile", *GS, "--out", "x.jpgg"],
     ["--out must be an image file name ending in .png, .pdf, .svg", "got 'x.jpgg'"]),
    ("no extension", ["plot", "rdp", "--out", "figure"], ["--out must be an image file name"]),
    ("a folder", ["plot", "ou-mse", "--out", "folder.png"], ["--out must be an image file, not "
                                                             "a folder"]),
    ("missing folder", ["plot", "delta", *GS, "--steps", "2", "--out", "nowhere/x.png"],
     ["--out must be an image file in an existing folder"]),
    ("composition", ["plot", "composition", *GS, "--n", "100", "--m", "10", "--out", "c.gif"],
     ["--out must be an image file name"]),
    ("aligned", ["plot", "aligned", *GS, "--n", "100", "--m", "10", "--out", "a.txt"],
     ["--out must be an image file name"]),
    ("sweep plot", ["plot", "sweep", "t.parquet", "--x", "a", "--y", "b", "--out", "s.csv"],
     ["--out must be an image file name"]),
    ("sweep table to a folder", ["sweep", "grid.toml", "--out", "folder.png"],
     ["--out must be a table file, not a folder"]),
    ("reproduce into ''", ["reproduce", "must-table1", "--out", ""],
     ["--out must be a folder name; got ''"]),
    ("reproduce into a file", ["reproduce", "must-table1", "--out", "file.txt"],
     ["--out must be a folder, not a file; got 'file.txt'"]),
]


@pytest.mark.parametrize(("argv", "needles"), [c[1:] for c in INAPPLICABLE + COUNTS + OUTPUTS],
                         ids=[c[0] for c in INAPPLICABLE + COUNTS + OUTPUTS])
def test_cli_refuses(argv, needles, capsys, tmp_path, monkeypatch):
    """Exit status 2, one line ``privamp: error: ...`` naming the option, the rule and the value;
    nothing computed (the refusals come before any computation)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.png").mkdir()
    (tmp_path / "file.txt").write_text("not a folder\n")
    line = run_error(argv, capsys)
    assert line.startswith("privamp: error: "), line
    for needle in needles:
        assert needle in line, line


def test_every_refusal_happens_before_computing(capsys, tmp_path, monkeypatch):
    """The inapplicable options and bad outputs are refused without computing a profile."""
    import privamp.amplification.subsampling as sub
    import privamp.mechanisms as mechs

    def boom(*args, **kwargs):
        raise AssertionError("computed before refusing")

    monkeypatch.setattr(sub, "amplify", boom)
    monkeypatch.setattr(mechs.GaussianMechanism, "profile", boom)
    monkeypatch.chdir(tmp_path)
    for argv in (["profile", *GS, *POISSON, "--m", "3", "--eps", "1"],
                 ["plot", "profile", *GS, "--out", "x.jpgg"],
                 ["plot", "profile", *GS, *POISSON, "--out", str(tmp_path)]):
        run_error(argv, capsys)


def test_the_options_that_apply_still_work(capsys):
    """Poisson reads --n under substitution (Balle et al. 2018, Theorem 14); --group-privacy
    applies to wr/must and to groups without sampling; --calibrate rate needs no --rate."""
    d = run_json(["profile", *GS, *POISSON, "--n", "50", "--relation", "substitute", "--eps",
                  "1"], capsys)
    assert d["sampling"] == {"scheme": "poisson", "rate": 0.1, "n": 50}
    run_json(["profile", *GS, "--sampling", "wr", "--n", "50", "--m", "5", "--group-privacy",
              "black-box", "--eps", "1"], capsys)
    run_json(["profile", *GS, "--group-size", "2", "--group-privacy", "black-box", "--eps", "1"],
             capsys)
    d = run_json(["calibrate", *GS, "--target-epsilon", "2", "--delta", "1e-5", "--sampling",
                  "poisson", "--steps", "10", "--calibrate", "rate", "--accountant", "rdp"],
                 capsys)
    assert d["parameter"] == "rate" and 0 < d["rate"] <= 1


def test_explicit_counts_win_over_quick(capsys, monkeypatch):
    """``--quick`` makes the counts small unless they are given (then they are honoured)."""
    from privamp.reproduce.must2023 import experiments

    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs)
        return {"experiment": "efficiency", "draws": kwargs["draws"], "seed": 0, "settings": []}

    monkeypatch.setattr(experiments, "efficiency_experiment", fake)
    run_json(["experiment", "efficiency", "--quick"], capsys)
    assert seen["draws"] == 1000
    run_json(["experiment", "efficiency", "--quick", "--draws", "7"], capsys)
    assert seen["draws"] == 7


# ---------------------------------------------------------------------------------------------
# files: missing, folders, binary or mis-encoded
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def bad_files(tmp_path):
    # a deep folder: paths longer than any shortening of values in messages (a path is shown
    # whole; CI's temporary paths are longer than a developer's)
    tmp_path = tmp_path / ("a-folder-with-a-long-name-" * 4) / "and-another-one"
    tmp_path.mkdir(parents=True)
    binary = tmp_path / "binary.bin"
    binary.write_bytes(bytes(range(256)) * 8)
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("caf\xe9,0.5\n".encode("latin-1"))
    return {"binary": binary, "latin-1": latin1, "folder": tmp_path,
            "missing": tmp_path / "missing.csv"}


FILE_COMMANDS = [
    ("kernel", lambda p: ["mixing", "--kernel", p, "--eps", "1", "--delta", "0"], "--kernel"),
    ("data", lambda p: ["experiment", "logistic", "--data", p, "--quick"], "--data"),
    ("grid", lambda p: ["sweep", p, "--out", "out.parquet"], "grid"),
    ("results csv", lambda p: ["plot", "sweep", p, "--format", "csv", "--x", "steps", "--y",
                               "epsilon", "--out", "s.png"], "RESULTS"),
    ("results parquet", lambda p: ["plot", "sweep", p, "--x", "steps", "--y", "epsilon", "--out",
                                   "s.png"], "RESULTS"),
]


@pytest.mark.parametrize("kind", ["binary", "latin-1", "folder", "missing"])
@pytest.mark.parametrize(("make", "name"), [c[1:] for c in FILE_COMMANDS],
                         ids=[c[0] for c in FILE_COMMANDS])
def test_bad_files_are_one_line_errors(make, name, kind, bad_files, capsys, tmp_path,
                                       monkeypatch):
    """Every file the CLI reads: exit 2 and one line naming the option, never a
    UnicodeDecodeError traceback."""
    monkeypatch.chdir(tmp_path)
    line = run_error(make(str(bad_files[kind])), capsys)
    assert name in line and str(bad_files[kind]) in line, line


def _no_artifact_builds(monkeypatch):
    """Make building any artifact fail the test (the refusals must come first)."""
    import dataclasses

    from privamp.reproduce import ARTIFACTS

    def boom(ctx):
        raise AssertionError("computed before refusing")

    ARTIFACTS._load()
    monkeypatch.setattr(ARTIFACTS, "_items", {k: dataclasses.replace(a, build=boom)
                                              for k, a in ARTIFACTS._items.items()})


def test_reproduce_data_is_checked_before_computing(bad_files, capsys, tmp_path, monkeypatch):
    _no_artifact_builds(monkeypatch)
    line = run_error(["reproduce", "must-table8-metrics", "--data", str(bad_files["binary"]),
                      "--out", str(tmp_path / "r")], capsys)
    assert "--data must be a CSV file in UTF-8 text" in line
    line = run_error(["reproduce", "must-table1", "--data", str(bad_files["latin-1"]),
                      "--out", str(tmp_path / "r")], capsys)
    assert "--data must be left out" in line


def test_a_csv_that_is_not_a_result_table(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    line = run_error(["plot", "sweep", str(table), "--x", "a", "--y", "b", "--out",
                      str(tmp_path / "s.png")], capsys)
    assert "RESULTS must be a csv result table of privamp sweep" in line


# ---------------------------------------------------------------------------------------------
# sweep grids, RDP orders, optional dependencies, warnings
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "needles"), [
    ('sampling = "wor"\nn = 10\nm = [5, 20]\n',
     ["m must be at most n = 10", "got 20", "in the row", "m=20"]),
    ('[[grid]]\nsampling = "poisson"\nrate = 0.1\n[[grid]]\nsampling = "must-ow"\nn = 10\n'
     'b = 20\nm = 5\n', ["grid[2].b must be at most n = 10", "got 20"]),
    ('sampling = "wor"\nn = 10\nm = 5\nrelation = "add-remove"\n',
     ["relation must be a relation the scheme is analysed under", "'add-remove'"]),
])
def test_sweep_grid_rows_are_checked_at_once(text, needles, tmp_path, capsys):
    """A row the library would refuse is refused with the grid, before any computation."""
    grid = tmp_path / "grid.toml"
    grid.write_text('mechanism = "gaussian"\nsigma = 1.0\nsteps = 10\ndelta = 1e-5\n' + text)
    line = run_error(["sweep", str(grid), "--out", str(tmp_path / "o.parquet")], capsys)
    for needle in needles:
        assert needle in line, line
    assert not (tmp_path / "o.parquet.partial").exists()


def test_sweep_without_dask_is_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    """The missing extra is reported on one line, before OUT.partial/ is created."""
    for name in ("dask", "dask.distributed", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    grid = tmp_path / "grid.toml"
    grid.write_text('mechanism = "gaussian"\nsigma = 1.0\nsampling = "poisson"\nrate = 0.01\n'
                    'steps = 10\ndelta = 1e-5\naccountant = "rdp"\n')
    out = tmp_path / "o.parquet"
    line = run_error(["sweep", str(grid), "--out", str(out)], capsys)
    assert "needs the optional package 'dask'" in line and "privamp[dask]" in line
    assert not out.exists() and not (tmp_path / "o.parquet.partial").exists()


def test_missing_matplotlib_is_reported_before_computing(tmp_path, capsys, monkeypatch):
    """Plots and ``reproduce`` say that matplotlib is missing before any computation."""
    import importlib.util

    _no_artifact_builds(monkeypatch)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    for argv in (["reproduce", "must-table1", "--out", str(tmp_path / "r")],
                 ["plot", "profile", *GS, "--out", str(tmp_path / "p.png")]):
        line = run_error(argv, capsys)
        assert "needs the optional package 'matplotlib'" in line


@pytest.mark.parametrize("scheme", [POISSON, WOR, [*POISSON, "--method", "lower"]])
@pytest.mark.parametrize("order", ["1e300", "1e7"])
def test_rdp_orders_beyond_the_subsampled_range(scheme, order, capsys):
    """Subsampled bounds cost about one term per unit of order: finite orders above 10^6 are
    refused by name (inf is computed in closed form); unsampled mechanisms take any order."""
    line = run_error(["rdp", *GS, *scheme, "--orders", "2", order], capsys)
    assert "--orders must be real number(s) in (1, 1000000] or inf" in line
    d = run_json(["rdp", *GS, *scheme, "--orders", "2", "inf"], capsys)
    assert d["orders"] == [2.0, "inf"]


@pytest.mark.parametrize("mech", [GS, ["--mechanism", "laplace", "--scale", "1"],
                                  ["--mechanism", "randomized-response", "--rr-p", "0.7"]])
def test_rdp_huge_orders_without_sampling(mech, capsys):
    d = run_json(["rdp", *mech, "--orders", "1.0000001", "1e300", "inf"], capsys)
    assert len(d["rdp"]) == 3 and d["rdp"][0] != "nan"


def test_warnings_go_into_the_json_or_one_line_each(capsys):
    """A warning never prints a Python warning (two lines with the source) on stderr: with
    --json it is in the object's "warnings", otherwise one ``privamp: warning:`` line."""
    argv = ["epsilon", *GS, "--sampling", "poisson", "--rate", "0.01", "--steps", "1" + "0" * 30,
            "--delta", "1e-5", "--accountant", "rdp"]
    d = run_json(argv, capsys)
    assert any(w.startswith("OrderGridWarning: ") for w in d["warnings"])
    assert main(argv) == 0
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert lines and all(x.startswith("privamp: warning: OrderGridWarning") for x in lines)


def test_plot_composition_reports_bad_delta_instead_of_dropping_curves(tmp_path, capsys):
    """An invalid --delta used to drop every RDP curve silently (an empty plot, exit 0)."""
    for delta in ("nan", "0", "2"):
        line = run_error(["plot", "composition", *GS, "--n", "100", "--m", "10", "--schemes",
                          "poisson", "--accountants", "rdp", "--delta", delta, "--out",
                          str(tmp_path / "c.png")], capsys)
        assert "--delta must be a real number in (0, 1)" in line
    line = run_error(["plot", "composition", *GS, "--n", "10", "--m", "20", "--schemes",
                      "poisson", "--out", str(tmp_path / "c.png")], capsys)
    assert "--m must be at most --n = 10" in line


def test_plot_profile_of_a_perfectly_private_mechanism(tmp_path, capsys):
    """δ(ε) = 0 everywhere (randomized response with ε = 0) is drawn on a linear axis."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "zero.png"
    run_json(["plot", "profile", "--mechanism", "randomized-response", "--rr-epsilon", "0",
              "--out", str(out)], capsys)
    assert out.stat().st_size > 1000


def test_a_huge_subsample_is_refused_not_allocated(capsys):
    line = run_error(["profile", "--mechanism", "randomized-response", "--rr-p", "0.7",
                      "--sampling", "must-ow", "--n", "100", "--b", "50", "--m", "9" * 29,
                      "--eps", "1"], capsys)
    assert "ask for a smaller subsample" in line
