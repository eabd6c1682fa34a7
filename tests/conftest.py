"""Shared test configuration: hypothesis profiles, the path to the shared data folder, and the
quick ``privamp reproduce all`` run shared by the reproduce tests."""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from pathlib import Path

import mpmath
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: mpmath's precision (decimal digits) for a test whose module does not set ``MPMATH_DPS``.
MPMATH_DEFAULT_DPS = 50


@pytest.fixture(autouse=True)
def _mpmath_precision(request):
    """Every test starts at its module's mpmath precision, ``MPMATH_DPS`` (default
    :data:`MPMATH_DEFAULT_DPS`), and mpmath's global context is restored after it. A module that
    set ``mpmath.mp.dps`` at import, or a test that set it and left it, made the precision of
    other tests depend on which modules were collected and which tests ran before them on the
    same worker."""
    saved = mpmath.mp.prec
    mpmath.mp.dps = getattr(request.module, "MPMATH_DPS", MPMATH_DEFAULT_DPS)
    try:
        yield
    finally:
        mpmath.mp.prec = saved


#: ../shared next to the repository (read-only data, the CLI contract checker).
SHARED = Path(__file__).resolve().parents[2] / "shared"
#: The MUST authors' preprocessed Adult data (read by the logistic-regression experiment; privamp
#: ships a compressed copy, privamp/data/adult_processed.csv.gz, which the tests compare with it).
ADULT = SHARED / "data" / "adult_processed.csv"


def _quick_run(out: Path) -> str:
    """Run ``privamp reproduce all --quick --json`` into ``out``; its one JSON line."""
    from privamp.cli import main

    argv = ["reproduce", "all", "--quick", "--out", str(out), "--json"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(argv)
    assert status == 0
    lines = buf.getvalue().strip().splitlines()
    assert len(lines) == 1  # exactly one JSON object
    return lines[0]


@pytest.fixture(scope="session")
def quick(tmp_path_factory, worker_id):
    """``privamp reproduce all --quick --json`` into a temporary folder, once per test run:
    ``(folder, the printed JSON)``. No ``--data``: MUST Table 8 and Figure S4 read the Adult
    data shipped with privamp, as in a fresh install.

    Under pytest-xdist every worker that draws one of these tests asks for it (about two minutes
    each): the first one runs it in the run's shared temporary folder, the others wait for its
    JSON file and read the same folder (no test writes into it)."""
    if worker_id == "master":
        out = tmp_path_factory.mktemp("reproduction")
        return out, json.loads(_quick_run(out))
    shared = tmp_path_factory.getbasetemp().parent  # one per run, above the workers' own
    out, done, failed = (shared / "reproduction", shared / "reproduction.json",
                         shared / "reproduction.failed")
    try:
        os.close(os.open(shared / "reproduction.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:  # another worker runs it
        deadline = time.monotonic() + 3600.0
        while not (done.exists() or failed.exists()):
            if time.monotonic() > deadline:
                pytest.fail("the quick reproduction run of another worker did not finish")
            time.sleep(1.0)
        if failed.exists():
            pytest.fail(f"the quick reproduction run failed on another worker: "
                        f"{failed.read_text()}")
        return out, json.loads(done.read_text())
    try:
        out.mkdir()
        line = _quick_run(out)
    except BaseException as exc:
        failed.write_text(repr(exc))
        raise
    partial = shared / "reproduction.json.partial"
    partial.write_text(line)
    partial.replace(done)  # atomic: a waiting worker never reads half a file
    return out, json.loads(line)

