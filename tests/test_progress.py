"""Progress of long computations: the ``privamp.progress`` logger (Python) and the command
line's one-line display that follows it (privamp._progress, privamp.cli._common.Progress)."""

from __future__ import annotations

import io
import logging
import sys
import time

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
