"""Run ``privamp`` (or a piece of Python) in a process where some installed packages are absent.

Used as a script by ``tests/test_missing_extras.py``::

    python -P tests/extras_launcher.py SPEC.json

SPEC: ``{"hide": [top-level names], "argv": [...]}`` (the command line) or ``{"hide": [...],
"code": "..."}`` (Python run with ``exec``), and ``"report": path`` where a JSON summary is
written at exit: the top-level names the run asked the import system for (imports and
``importlib.util.find_spec`` probes alike), the number of records on the ``privamp.progress``
logger, when the command's handler (the ``func`` of its parser) was entered (None: the command
ended while parsing), and the seconds from the start of the command to its end. Only this
process hides the packages: the worker processes a sweep spawns do not (they import this file
without running it), which is why a sweep must refuse in this process, before it starts any.

A hidden package is absent for real, not stubbed: every finder of ``sys.meta_path`` is wrapped so
that it does not find the package or its submodules, so ``import`` raises ModuleNotFoundError
(``No module named 'dask'``) and ``importlib.util.find_spec`` returns None, as when it is not
installed.
"""

from __future__ import annotations

import atexit
import json
import logging
import sys
import time

ASKED: set[str] = set()
STATE = {"progress": 0, "entered": None}


class _Hiding:
    """A meta-path finder that asks ``inner``, except for the hidden packages."""

    def __init__(self, inner, hide):
        self.inner, self.hide = inner, hide

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        ASKED.add(top)
        if top in self.hide:
            return None
        find = getattr(self.inner, "find_spec", None)
        return None if find is None else find(name, path, target)

    def invalidate_caches(self):
        if hasattr(self.inner, "invalidate_caches"):
            self.inner.invalidate_caches()

    def __getattr__(self, attr):
        return getattr(self.inner, attr)


class _Count(logging.Handler):
    def emit(self, record):
        STATE["progress"] += 1


def _watch_handlers(start: float) -> None:
    """Note when the command's handler (the ``func`` its parser sets) is entered."""
    import argparse

    import privamp.cli as cli

    build = cli.build_parser

    def wrap(func):
        def handler(args):
            if STATE["entered"] is None:
                STATE["entered"] = time.perf_counter() - start
            return func(args)
        return handler

    def walk(parser):
        if "func" in parser._defaults:
            parser._defaults["func"] = wrap(parser._defaults["func"])
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    walk(child)

    def build_parser(argv=None):
        parser = build(argv)
        walk(parser)
        return parser

    cli.build_parser = build_parser


def _main() -> None:
    spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
    hide = frozenset(spec.get("hide", ()))
    already = sorted(n for n in sys.modules if n.partition(".")[0] in hide)
    if already:  # imported while Python started (a .pth file): the hiding would be a lie
        raise SystemExit(f"extras_launcher: already imported at start-up: {already}")
    sys.meta_path[:] = [_Hiding(f, hide) for f in sys.meta_path]
    sys.path_importer_cache.clear()
    logger = logging.getLogger("privamp.progress")
    logger.addHandler(_Count(logging.INFO))
    logger.setLevel(logging.INFO)
    start = time.perf_counter()

    def report():
        with open(spec["report"], "w", encoding="utf-8") as f:
            json.dump({"asked": sorted(ASKED), "progress": STATE["progress"],
                       "entered": STATE["entered"], "seconds": time.perf_counter() - start}, f)

    atexit.register(report)
    if "code" in spec:
        exec(compile(spec["code"], "<extras_launcher code>", "exec"), {"__name__": "__main__"})
        return
    _watch_handlers(start)
    from privamp.cli import main

    sys.argv[1:] = spec["argv"]  # argv[0] stays this file: Dask's spawned workers import it
    raise SystemExit(main(spec["argv"]))


if __name__ == "__main__":  # not in the worker processes a sweep spawns (they import this file)
    _main()
