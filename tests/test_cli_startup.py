"""Start-up of the command line: what ``privamp --help`` and a command's ``--help`` import, and
that building only what argv invokes gives the same parsers as building every command."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from privamp.cli import COMMANDS, SUMMARIES, build_parser
from privamp.cli._parser import CliError

HEAVY = ("numpy", "scipy", "matplotlib", "pandas", "dask", "torch", "privamp.accountant",
         "privamp.pld", "privamp.rdp", "privamp.reproduce", "privamp.sweep")


def _imported_after(code: str) -> set[str]:
    """The modules of HEAVY (and their submodules) imported by a fresh interpreter running
    ``code``."""
    probe = (f"import sys\n{code}\n"
             "import json\n"
             f"heavy = {HEAVY!r}\n"
             "print(json.dumps(sorted(m for m in sys.modules "
             "if any(m == h or m.startswith(h + '.') for h in heavy))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _run(argv: list[str]) -> str:
    return ("import contextlib, io\nfrom privamp.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), "
            "contextlib.redirect_stderr(io.StringIO()):\n"
            f"    try:\n        main({argv!r})\n    except SystemExit:\n        pass")


@pytest.mark.parametrize("argv", [["--help"], [], ["--version"], ["no-such-command"]])
def test_top_level_imports_nothing_heavy(argv):
    """No command: neither NumPy nor any part of the library beyond the CLI's own modules."""
    assert _imported_after(_run(argv)) == set()


def test_import_privamp_is_lazy():
    assert _imported_after("import privamp, privamp.cli") == set()
    assert _imported_after("import privamp; privamp.GaussianMechanism") >= {"numpy"}


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "plot"])
def test_a_command_help_imports_no_plotting_nor_other_commands(command):
    loaded = _imported_after(_run([command, "--help"]))
    assert not loaded & {"scipy", "matplotlib", "pandas", "dask", "torch"}, loaded
    if command in ("profile", "epsilon", "delta", "calibrate"):
        assert not loaded & {"privamp.accountant", "privamp.pld", "privamp.reproduce",
                             "privamp.sweep"}, loaded


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_top_level_help_and_refusal_are_those_of_the_full_parser():
    full = build_parser()
    for argv in (["--help"], [], ["nope"]):
        assert build_parser(argv).format_help() == full.format_help()
    with pytest.raises(CliError) as lazy_error:
        build_parser(["nope"]).parse_args(["nope"])
    with pytest.raises(CliError) as full_error:
        full.parse_args(["nope"])
    assert str(lazy_error.value) == str(full_error.value)
    assert list(_subparsers(full)) == list(COMMANDS) == list(SUMMARIES)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_parser_is_the_full_parsers(command):
    """The parser built for one command (with every nested subcommand) prints the same help as
    in the parser of every command."""
    lazy = _subparsers(build_parser([command]))[command]
    full = _subparsers(build_parser())[command]
    assert lazy.format_help() == full.format_help()
    nested = [(lazy, full)]
    while nested:
        a, b = nested.pop()
        if any(isinstance(x, argparse._SubParsersAction) for x in b._actions):
            sa, sb = _subparsers(a), _subparsers(b)
            assert list(sa) == list(sb)
            for name in sb:
                assert sa[name].format_help() == sb[name].format_help()
                nested.append((sa[name], sb[name]))
