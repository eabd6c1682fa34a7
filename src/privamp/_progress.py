"""Progress of long computations, for Python callers and the command line alike.

privamp reports the stages of its long computations as INFO records on the logger
``"privamp.progress"``: each discretisation and each composition of the PLD engine (so every
accountant query, calibration, trade-off curve and plot that composes), each evaluation of a
calibration, each replicate of :meth:`~privamp.applications.DpBootstrap.run`, each repeat of the
MUST experiments, each artifact of :func:`privamp.reproduce.run` and each row (or chunk) of a
sweep. The ``progress=`` callbacks some of those functions take are called as before; the logger
is the one channel that covers them all. Nothing is shown unless asked for — the standard
logging convention:

>>> import logging
>>> logging.basicConfig(level=logging.INFO, format="%(relativeCreated)8.0f ms  %(message)s")
... # doctest: +SKIP

or, for privamp alone, ``logging.getLogger("privamp.progress").setLevel(logging.INFO)`` with a
handler of your choice. The command line subscribes to the same records and draws them on one
line of stderr, with the elapsed time, when stderr is a terminal and ``--json`` is not given
(:class:`privamp.cli._common.Progress`). A report costs one ``isEnabledFor`` check when nobody
listens.
"""

from __future__ import annotations

import logging

__all__ = ["LOGGER", "report"]

LOGGER = logging.getLogger("privamp.progress")


def report(message: str, *args: object) -> None:
    """Report one stage of a long computation (``message % args``, formatted only when some
    handler listens)."""
    if LOGGER.isEnabledFor(logging.INFO):
        LOGGER.info(message, *args)
