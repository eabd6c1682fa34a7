"""`make demo`'s main job runs end to end, produces readable output and plots, and every number
it prints is rounded to the safe side."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import privamp
from privamp import display
from privamp.accountant import Accountant
from privamp.sampling import Poisson, WithoutReplacement

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("demo")
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py"), "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout, out


def line_with(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


def test_demo_runs_and_writes_its_plots(demo):
    """examples/demo.py prints the profile tables and writes its three plots."""
    stdout, out = demo
    assert "Privacy profiles δ(ε)" in stdout
    assert "Gaussian σ=1" in stdout and "Laplace b=1" in stdout
    # the Gaussian row at ε = 1 carries Theorem 4's value 0.126936…, rounded up
    row = next(line for line in stdout.splitlines() if line.strip().startswith("1  "))
    assert "1.2694e-01" in row
    for name in ("profiles.png", "amplification.png", "composition.png"):
        png = out / name
        assert png.exists() and png.stat().st_size > 20_000


def test_printed_sigma_meets_the_target_when_typed_back(demo):
    """σ calibrated for ε ≤ 1 (1.41462854…) is printed rounded up; the printed value still
    certifies ε ≤ 1 (σ = 1.4146, rounded to nearest, certifies 1.0000275)."""
    stdout, _ = demo
    line = line_with(stdout, "Noise for ε ≤ 1")
    printed = float(re.search(r"σ = ([0-9.]+)", line).group(1))
    assert printed >= 1.4146285413259512
    eps = Accountant().add(privamp.GaussianMechanism(printed), 1000,
                           scheme=Poisson(0.01)).epsilon(1e-5).upper
    assert eps <= 1.0
    # the certified ε is printed rounded up
    shown = float(re.search(r"certified ε = ([0-9.]+)", line).group(1))
    assert 0.999 < shown <= 1.0


def test_single_mechanism_calibrations_are_printed_on_the_safe_side(demo):
    stdout, _ = demo
    exact = privamp.GaussianMechanism.calibrated(1.0, 1e-5).sigma
    sigma = float(re.search(r"Balle & Wang 2018\): σ = ([0-9.]+)", stdout).group(1))
    assert sigma >= exact
    assert float(privamp.GaussianProfile(1.0 / sigma).epsilon(1e-5)) <= 1.0
    p = float(re.search(r"for \(1, 1e-5\): p = ([0-9.]+)", stdout).group(1))
    assert p <= privamp.RandomizedResponse.calibrated(1.0, 1e-5).p
    assert privamp.RandomizedResponse(p=p).profile().delta(1.0) <= 1e-5


def test_brackets_are_printed_outward(demo):
    """The DP-SGD table: each sampler at noise multiplier z = σ/C = 1 with its relation and
    sensitivity, the PLD bracket printed outward around the accountant's bracket."""
    stdout, _ = demo
    clip = 1.0
    for needle, scheme, relation in [
            ("Poisson q=0.01 (add/remove, Δ = C)", Poisson(0.01), "add-remove"),
            ("WOR(10000, 100) (substitution, Δ = 2C)", WithoutReplacement(10_000, 100),
             "substitute")]:
        line = line_with(stdout, needle)
        lo, hi = (float(v) for v in re.search(r"\[([0-9.]+), ([0-9.]+)\]", line).groups())
        sens = privamp.clipped_sum_sensitivity(clip, relation)
        mech = privamp.GaussianMechanism(1.0, sensitivity=sens, relation=relation)
        b = Accountant().add(mech, 1000, scheme=scheme).epsilon(1e-5)
        assert lo <= b.lower and hi >= b.upper
        assert hi - b.upper < 1e-5 * b.upper and b.lower - lo < 1e-5 * b.lower
        # the printed bracket is exactly the outward rounding of the accountant's (its last
        # digits may move with the platform's FFT rounding: the refinement of the lower side
        # stops once the bracket is within its target)
        assert f"[{display.lower(b.lower)}, {display.upper(b.upper)}]" in line
    assert "[1.82736, 1.82825]" in line_with(stdout, "Poisson q=0.01")
