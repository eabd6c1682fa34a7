"""Shared test configuration: hypothesis profiles, the path to the shared data folder, and the
quick ``privamp reproduce all`` run shared by the reproduce tests."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: ../shared next to the repository (read-only data, the CLI contract checker).
SHARED = Path(__file__).resolve().parents[2] / "shared"
#: The MUST authors' preprocessed Adult data (read by the logistic-regression experiment; privamp
#: ships a compressed copy, privamp/data/adult_processed.csv.gz, which the tests compare with it).
ADULT = SHARED / "data" / "adult_processed.csv"


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    """``privamp reproduce all --quick --json`` into a temporary folder, once per session:
    ``(folder, the printed JSON)``. No ``--data``: MUST Table 8 and Figure S4 read the Adult
    data shipped with privamp, as in a fresh install."""
    from privamp.cli import main

    out = tmp_path_factory.mktemp("reproduction")
    argv = ["reproduce", "all", "--quick", "--out", str(out), "--json"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(argv)
    assert status == 0
    lines = buf.getvalue().strip().splitlines()
    assert len(lines) == 1  # exactly one JSON object
    return out, json.loads(lines[0])
