"""The ``privamp`` command line (also ``python -m privamp``).

Thin by design: it parses options, builds library objects, calls them, and formats the result as
a readable table or, with ``--json``, as exactly one JSON object on stdout. Bad input exits with
status 2 and a one-line message on stderr naming the option and the accepted range; no traceback.

Non-finite numbers appear in JSON as the strings ``"inf"`` / ``"-inf"`` (JSON has no infinity).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence

from .. import __version__
from ._parser import CliError, Parser

__all__ = ["COMMANDS", "SUMMARIES", "build_parser", "main"]

#: Every command: its name -> (the module of this package that has it, the function of that
#: module that adds its parser, with the handler, to the subparsers), in the order of ``privamp
#: --help``. ``plot`` is the group of plot commands, laid out the same way. A command module also
#: has ``OPTION_NAMES``, its parameter names -> options, for error messages.
COMMANDS: dict[str, tuple[str, str] | dict[str, tuple[str, str]]] = {
    "profile": ("profile", "add_profile"),
    "plot": {
        "profile": ("profile", "add_plot_profile"),
        "composition": ("accounting", "add_plot_composition"),
        "rdp": ("rdp", "add_plot_rdp"),
        "ou-mse": ("post", "add_plot_ou_mse"),
        "aligned": ("profile", "add_plot_aligned"),
        "delta": ("accounting", "add_plot_delta"),
        "sweep": ("sweep", "add_plot_sweep"),
        "tradeoff": ("risk", "add_plot_tradeoff"),
    },
    "epsilon": ("accounting", "add_epsilon"),
    "delta": ("accounting", "add_delta"),
    "calibrate": ("accounting", "add_calibrate"),
    "tradeoff": ("risk", "add_tradeoff"),
    "rdp": ("rdp", "add_rdp"),
    "mixing": ("post", "add_mixing"),
    "iteration": ("post", "add_iteration"),
    "ou": ("post", "add_ou"),
    "reproduce": ("reproduce", "add_reproduce"),
    "experiment": ("apps", "add_experiment"),
    "sweep": ("sweep", "add_sweep"),
}

#: The one-line help of every command in ``privamp --help``; the command modules read theirs
#: from here, and ``privamp --help`` (or no or an unknown command) lists the commands from here
#: without importing any command module (nor the library: start-up time).
SUMMARIES: dict[str, str] = {
    "profile": "privacy profile delta(eps) of a mechanism",
    "plot": "plots (needs the 'plots' extra)",
    "epsilon": "certified epsilon(delta) of a composition",
    "delta": "certified delta(epsilon) of a composition",
    "calibrate": "parameter value meeting a target (epsilon, delta)",
    "tradeoff": "attack risk: TPR at given FPRs, advantage and mu-GDP of a composition",
    "rdp": "Rényi-DP curve of a mechanism, optionally subsampled",
    "mixing": "amplification by a finite Markov kernel (BBGG Thm 1)",
    "iteration": "per-index privacy of noisy projected SGD (BBGG Thm 5)",
    "ou": "Ornstein-Uhlenbeck mechanism (BBGG Cor 7, Thm 8)",
    "reproduce": "regenerate the papers' tables and figures (PNG, CSV, comparison with the "
                 "paper, REPRODUCTION.md)",
    "experiment": "the MUST paper's utility and efficiency experiments, with correct "
                  "sensitivities",
    "sweep": "evaluate a grid of configurations on Dask (needs the 'dask' extra)",
}

#: The command modules, in the order their option names are registered (a later module's name
#: for a parameter wins).
_MODULES = ("profile", "accounting", "risk", "rdp", "post", "reproduce", "apps", "sweep")


def _modules_for(command: str | None) -> tuple[str, ...]:
    """The modules to import for ``command``: ``profile`` and the command's own module, so that
    running one command imports only what it needs (start-up time matters for a command-line
    tool); all of them for ``plot``, ``--help`` or an unknown command."""
    entry = COMMANDS.get(command) if command is not None else None
    if isinstance(entry, tuple):
        return tuple(m for m in _MODULES if m in ("profile", entry[0]))
    return _MODULES


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The argument parser: every command's (``argv`` None), or only what ``argv`` invokes.

    With ``argv``, the invoked command's parser is built (only its module is imported; the
    commands listed are those of :func:`_modules_for`); the other commands are listed by name
    and :data:`SUMMARIES` only (argparse needs no more to show them in
    ``privamp --help`` or to refuse an unknown command), so ``privamp --help`` imports no
    command module and not the library.
    """
    parser = Parser(prog="privamp",
                     description="Privacy amplification and privacy accounting.")
    parser.add_argument("--version", action="version", version=f"privamp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    if argv is None:
        command = None
    else:
        command = next((a for a in argv if not a.startswith("-")), None)
        if command not in COMMANDS:  # --help, --version, nothing or an unknown command
            for name in COMMANDS:
                sub.add_parser(name, help=SUMMARIES[name])
            return parser
    listed = _modules_for(command)  # the modules whose commands are listed
    # imported: the module of the command run (every one for plot or without argv); their
    # option names are registered in the order of _MODULES
    entry = COMMANDS.get(command)
    imported = listed if not isinstance(entry, tuple) else (entry[0],)
    modules = {}
    for name in imported:
        modules[name] = importlib.import_module(f"{__package__}.{name}")
        _loaded_common().register_option_names(modules[name].OPTION_NAMES)
    for name, entry in COMMANDS.items():
        built = command is None or name == command
        if name == "plot":
            plot = sub.add_parser("plot", help=SUMMARIES["plot"])
            if not built:
                continue
            plot_sub = plot.add_subparsers(dest="what", required=True, parser_class=Parser)
            for module, add in entry.values():
                if module in modules:
                    getattr(modules[module], add)(plot_sub)
        elif entry[0] in listed:
            if built:
                getattr(modules[entry[0]], entry[1])(sub)
            else:
                sub.add_parser(name, help=SUMMARIES[name])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privamp`` console script; returns the exit status.

    Bad input is exit status 2 and one line ``privamp: error: ...`` on stderr (the option, the
    rule and the value); options that do not apply to the chosen mechanism or scheme are bad
    input (:func:`~privamp.cli._common.check_applicable`).
    """
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            _set_warnings(caught)
            args = parser.parse_args(argv)
            # a command was parsed, so its modules (and _common) are loaded
            _loaded_common().check_applicable(args)
            status = args.func(args)
        if status == 0 and not getattr(args, "json", False):
            for line in _loaded_common().warning_lines():
                print(f"privamp: warning: {line}", file=sys.stderr)
        return status
    except CliError as exc:
        message = str(exc)
    except Exception as exc:  # the library's errors, imported only now (start-up time)
        from ..errors import InvalidParameterError, PrivampError

        if isinstance(exc, InvalidParameterError):
            names = _loaded_common().OPTION_NAMES
            message = exc.render(names.get(exc.parameter, exc.parameter))
        elif isinstance(exc, PrivampError | OSError):
            message = str(exc)
        else:
            raise
    finally:
        _set_warnings([])
    print(f"privamp: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _loaded_common():
    """:mod:`privamp.cli._common`, imported on first use (it imports the library)."""
    from . import _common as common

    return common


def _set_warnings(caught: list) -> None:
    """Where :mod:`~privamp.cli._common` records a command's warnings (only once it is
    loaded: without a command nothing warns)."""
    common = sys.modules.get(f"{__package__}._common")
    if common is not None:
        common.WARNINGS = caught
