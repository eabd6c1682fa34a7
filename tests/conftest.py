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
#: The MUST authors' preprocessed Adult data (read by the logistic-regression experiment).
ADULT = SHARED / "data" / "adult_processed.csv"


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    """``privamp reproduce all --quick --json`` (with ``--data ADULT`` when the shared data are
    there) into a temporary folder, once per session: ``(folder, the printed JSON)``."""
    from privamp.cli import main

    out = tmp_path_factory.mktemp("reproduction")
    argv = ["reproduce", "all", "--quick", "--out", str(out), "--json"]
    if ADULT.exists():
        argv += ["--data", str(ADULT)]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(argv)
    assert status == 0
    lines = buf.getvalue().strip().splitlines()
    assert len(lines) == 1  # exactly one JSON object
    return out, json.loads(lines[0])
