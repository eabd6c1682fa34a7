"""Shared test configuration: hypothesis profiles and the path to the shared data folder."""

from __future__ import annotations

import os
from pathlib import Path

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
