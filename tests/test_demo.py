"""`make demo`'s main job runs end to end and produces readable output and a plot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_and_writes_its_plot(tmp_path):
    """examples/demo.py prints the profile tables and writes profiles.png."""
    pytest.importorskip("matplotlib")
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py"), "--out",
                        str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Privacy profiles δ(ε)" in r.stdout
    assert "Gaussian σ=1" in r.stdout and "Laplace b=1" in r.stdout
    # the Gaussian row at ε = 1 carries Theorem 4's value 0.12694
    row = next(line for line in r.stdout.splitlines() if line.strip().startswith("1  "))
    assert "1.2694e-01" in row
    png = tmp_path / "profiles.png"
    assert png.exists() and png.stat().st_size > 20_000
