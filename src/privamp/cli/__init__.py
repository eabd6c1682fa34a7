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
from ..errors import InvalidParameterError, PrivampError
from . import _common
from ._common import OPTION_NAMES, CliError, Parser, check_applicable

__all__ = ["COMMANDS", "build_parser", "main"]

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
    },
    "epsilon": ("accounting", "add_epsilon"),
    "delta": ("accounting", "add_delta"),
    "calibrate": ("accounting", "add_calibrate"),
    "rdp": ("rdp", "add_rdp"),
    "mixing": ("post", "add_mixing"),
    "iteration": ("post", "add_iteration"),
    "ou": ("post", "add_ou"),
    "reproduce": ("reproduce", "add_reproduce"),
    "experiment": ("apps", "add_experiment"),
    "sweep": ("sweep", "add_sweep"),
}

#: The command modules, in the order their option names are registered (a later module's name
#: for a parameter wins).
_MODULES = ("profile", "accounting", "rdp", "post", "reproduce", "apps", "sweep")


def _modules_for(command: str | None) -> tuple[str, ...]:
    """The modules to import for ``command``: ``profile`` and the command's own module (every
    command of it is added), so that running one command imports only what it needs (start-up
    time matters for a command-line tool); all of them for ``plot``, ``--help`` or an unknown
    command."""
    entry = COMMANDS.get(command) if command is not None else None
    if isinstance(entry, tuple):
        return tuple(m for m in _MODULES if m in ("profile", entry[0]))
    return _MODULES


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The argument parser; with ``argv``, only the command modules it invokes are loaded."""
    parser = Parser(prog="privamp",
                     description="Privacy amplification and privacy accounting.")
    parser.add_argument("--version", action="version", version=f"privamp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    command = next((a for a in (argv or []) if not a.startswith("-")), None)
    modules = {}
    for name in _modules_for(command):
        modules[name] = importlib.import_module(f"{__package__}.{name}")
        _common.register_option_names(modules[name].OPTION_NAMES)
    for name, entry in COMMANDS.items():
        if name == "plot":
            plot = sub.add_parser("plot", help="plots (needs the 'plots' extra)")
            plot_sub = plot.add_subparsers(dest="what", required=True, parser_class=Parser)
            for module, add in entry.values():
                if module in modules:
                    getattr(modules[module], add)(plot_sub)
        elif entry[0] in modules:
            getattr(modules[entry[0]], entry[1])(sub)
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
            _common.WARNINGS = caught
            args = parser.parse_args(argv)
            check_applicable(args)
            status = args.func(args)
        if status == 0 and not getattr(args, "json", False):
            for line in _common.warning_lines():
                print(f"privamp: warning: {line}", file=sys.stderr)
        return status
    except CliError as exc:
        message = str(exc)
    except InvalidParameterError as exc:
        message = exc.render(OPTION_NAMES.get(exc.parameter, exc.parameter))
    except PrivampError as exc:
        message = str(exc)
    except OSError as exc:
        message = str(exc)
    finally:
        _common.WARNINGS = []
    print(f"privamp: error: {' '.join(message.split())}", file=sys.stderr)
    return 2
