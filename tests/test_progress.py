"""Progress of long computations: the ``privamp.progress`` logger (Python) and the command
line's one-line display that follows it (privamp._progress, privamp.cli._common.Progress)."""

from __future__ import annotations

import io
import logging
import sys
import time

import numpy as np
import pytest

from privamp import Accountant, GaussianMechanism, Poisson, calibrate_sigma
from privamp._progress import LOGGER
from privamp.cli._common import Progress


def test_long_calls_report_their_stages_on_the_logger(caplog):
    with caplog.at_level(logging.INFO, logger="privamp.progress"):
        Accountant().add(GaussianMechanism(1.0), 500, scheme=Poisson(0.01)).epsilon(1e-5)
        composing = [r.getMessage() for r in caplog.records]
        assert any(m.startswith("composing 500 steps (upper side") for m in composing)
        assert any("lower side" in m for m in composing)
        caplog.clear()
        calibrate_sigma(1.0, 1e-5, steps=100, scheme=Poisson(0.01))
        assert any(r.getMessage().startswith("calibrating sigma: fine evaluation at ")
                   for r in caplog.records)


def test_nothing_listens_by_default():
    assert LOGGER.handlers == [] and LOGGER.level == logging.NOTSET


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_cli_progress_redraws_a_running_stage_with_the_librarys_reports(monkeypatch):
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    level = LOGGER.level
    bar = Progress(True)
    bar.TICK = 0.02
    bar.stage("computing epsilon")
    LOGGER.info("composing %s steps", "1,000")
    time.sleep(0.2)  # a few ticks
    bar.done()
    text = err.getvalue()
    assert "computing epsilon: composing 1,000 steps" in text
    assert text.count("\r  computing epsilon") >= 3  # redrawn while it runs
    assert text.endswith("\r")  # blanked at the end
    assert LOGGER.handlers == [] and LOGGER.level == level  # restored


def test_cli_progress_is_silent_off_a_terminal(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = Progress(True)
    bar.stage("computing epsilon")
    bar(3, 10, "label")
    bar.done()
    assert err.getvalue() == "" and LOGGER.handlers == []


def _bootstrap_run():
    from privamp import WOR
    from privamp.applications import DpBootstrap

    boot = DpBootstrap(WOR(100, 10), replicates=20, bounds=(-1, 1), delta=1e-3,
                       noise_multiplier=1.0)
    boot.run(np.linspace(-1, 1, 100), rng=0)


def _bootstrap_experiment():
    from privamp.reproduce.must2023.experiments import bootstrap_experiment

    bootstrap_experiment("wor", n=100, m=10, repeats=2, replicates=20, seed=0)


def _sweep_rows():
    from privamp.sweep.batch import evaluate

    evaluate([{"mechanism": "gaussian", "sigma": 1.0, "sampling": "poisson", "rate": 0.01,
               "steps": t, "delta": 1e-5, "accountant": "rdp"} for t in (10, 20)])


def _reproduce(tmp_path):
    from privamp.reproduce import run

    run(["must-table1"], tmp_path, quick=True, report=False)


#: Every long Python entry point outside the PLD engine and the calibrations, with the report
#: it must make on the ``privamp.progress`` logger.
LONG_CALLS = {
    "DpBootstrap.run": (_bootstrap_run, "bootstrap: replicate 20 of 20"),
    "bootstrap_experiment": (_bootstrap_experiment, "of 2"),
    "sweep.batch.evaluate": (_sweep_rows, "sweep: 2 of 2 rows"),
    "reproduce.run": (_reproduce, "reproducing must-table1"),
}


@pytest.mark.parametrize("name", sorted(LONG_CALLS))
def test_every_long_python_call_reports_on_the_logger(name, caplog, tmp_path):
    call, needle = LONG_CALLS[name]
    with caplog.at_level(logging.INFO, logger="privamp.progress"):
        call(tmp_path) if name == "reproduce.run" else call()
    messages = [r.getMessage() for r in caplog.records]
    assert any(needle in m for m in messages), messages[-5:]


def test_the_engine_reports_each_discretisation(caplog):
    with caplog.at_level(logging.INFO, logger="privamp.progress"):
        Accountant().add(GaussianMechanism(1.0), 50, scheme=Poisson(0.1)).epsilon(1e-5)
    assert any(r.getMessage().startswith("discretising a step's privacy loss (upper side")
               for r in caplog.records)
