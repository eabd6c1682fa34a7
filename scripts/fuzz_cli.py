"""Fuzz the command line against its contract: every command, every option, garbage values.

For each command (found by walking the real argument parser, so a new option is fuzzed without
editing this file) the script starts from one or more valid command lines (:data:`BASES`) and
replaces, or adds, one option at a time with a boundary or garbage value (NaN, ±inf, 0, -1,
1e308, an empty string, a huge integer, a word, a missing file, a folder, a binary file, ...).
Each run is checked against the contract of ``DESIGN.md``:

* exit status 0 with output on stdout (with ``--json``: exactly one JSON object on one line and
  nothing on stderr), or
* exit status 2, nothing on stdout and exactly one line on stderr starting ``privamp: error:``;
* never an exception escaping ``main`` (a traceback, exit status 1 for the console script).

Runs are in-process (``privamp.cli.main``) with a time limit each; a run over the limit is
reported as slow, not as a contract failure. Run from the repository root::

    PYTHONPATH=src .venv/bin/python scripts/fuzz_cli.py                  # everything
    PYTHONPATH=src .venv/bin/python scripts/fuzz_cli.py profile rdp      # commands matching
    PYTHONPATH=src .venv/bin/python scripts/fuzz_cli.py --list           # the commands

Exit status 1 when a run breaks the contract. ``tests/test_cli_fuzz.py`` runs a reduced
version (:func:`cases` with ``quick=True``) in the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Where the bases read and write files ({tmp} in a base is replaced by it).
TMP = Path(tempfile.mkdtemp(prefix="privamp-fuzz-"))

G = ["--mechanism", "gaussian", "--sigma", "1"]
L = ["--mechanism", "laplace", "--scale", "1"]
RR = ["--mechanism", "randomized-response", "--rr-p", "0.7"]
POISSON = ["--sampling", "poisson", "--rate", "0.01"]
WOR = ["--sampling", "wor", "--n", "100", "--m", "10"]
MUST = ["--sampling", "must-ow", "--n", "100", "--b", "50", "--m", "10"]
ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult_processed.csv"

#: Valid command lines each command is fuzzed from (cheap ones: the fuzzing runs thousands).
BASES: dict[str, list[list[str]]] = {
    "profile": [[*G, "--eps", "1"], [*L, *WOR, "--eps", "1"], [*RR, *MUST, "--eps", "1"],
                [*G, *POISSON, "--eps", "1"]],
    "epsilon": [[*G, *POISSON, "--steps", "10", "--delta", "1e-5"],
                [*L, *WOR, "--steps", "3", "--delta", "1e-5", "--accountant", "rdp"],
                [*RR, *MUST, "--steps", "2", "--delta", "1e-5"]],
    "delta": [[*G, *POISSON, "--steps", "10", "--epsilon", "1"],
              [*L, "--steps", "3", "--epsilon", "1"]],
    "calibrate": [["--mechanism", "gaussian", "--target-epsilon", "2", "--delta", "1e-5",
                   *POISSON, "--steps", "10", "--accountant", "rdp"],
                  [*G, "--target-epsilon", "2", "--delta", "1e-5", "--sampling", "poisson",
                   "--steps", "10", "--calibrate", "rate", "--accountant", "rdp"],
                  [*G, "--target-epsilon", "2", "--delta", "1e-5", *POISSON,
                   "--calibrate", "steps", "--accountant", "rdp", "--max-steps", "1000"]],
    "tradeoff": [[*G, *POISSON, "--steps", "10", "--fpr", "0.1", "--fpr-min", "0.01"],
                 [*L, "--steps", "3", "--fpr", "0.01", "0.5", "--accountant", "rdp"]],
    "rdp": [[*G, "--orders", "2", "8"], [*G, *POISSON, "--orders", "2", "8"],
            [*L, *WOR, "--orders", "2", "8"]],
    "mixing": [["--kernel", "{tmp}/kernel.csv", "--eps", "1", "--delta", "0.01"]],
    "iteration": [["--n", "10", "--step-size", "0.1", "--lipschitz", "1", "--smoothness", "1",
                   "--strong-convexity", "0.5", "--sigma", "1"]],
    "ou": [["--theta", "1", "--rho", "1", "--radius", "1"],
           ["--rdp-epsilon", "1", "--radius", "1", "--orders", "2", "4"]],
    "reproduce": [["must-table1", "--quick", "--out", "{tmp}/reproduction"]],
    "experiment bootstrap": [["--quick", "--n", "50", "--m", "5", "--replicates", "4",
                              "--repeats", "2"]],
    "experiment linear": [["--quick", "--n", "50", "--m", "5", "--steps", "3",
                           "--repeats", "2"]],
    "experiment logistic": [["--data", str(ADULT), "--quick", "--steps", "3", "--m", "5"]],
    "experiment efficiency": [["--draws", "5", "--n", "50", "--b", "20", "--m", "5"]],
    "sweep": [["{tmp}/grid.toml", "--out", "{tmp}/sweep.parquet", "--workers", "1",
               "--overwrite"]],
    "plot profile": [[*G, "--out", "{tmp}/p.png"]],
    "plot composition": [[*G, "--n", "100", "--m", "10", "--max-steps", "4", "--points", "2",
                          "--schemes", "poisson", "--accountants", "rdp", "--out",
                          "{tmp}/c.png"]],
    "plot rdp": [["--max-order", "8", "--out", "{tmp}/r.png"]],
    "plot ou-mse": [["--rdp-epsilon", "1", "--out", "{tmp}/o.png"]],
    "plot aligned": [[*G, "--n", "100", "--m", "10", "--points", "5", "--schemes", "wor",
                      "--out", "{tmp}/a.png"]],
    "plot delta": [[*G, *POISSON, "--steps", "10", "--points", "3", "--accountant", "rdp",
                    "--out", "{tmp}/d.png"]],
    "plot tradeoff": [[*G, "--n", "100", "--m", "10", "--steps", "4", "--points", "8",
                       "--schemes", "poisson", "--out", "{tmp}/t.png"]],
    "plot sweep": [["{tmp}/table.parquet", "--x", "steps", "--y", "epsilon", "--out",
                    "{tmp}/s.png"]],
}

FLOATS = ["nan", "inf", "-inf", "0", "-1", "-0", "1e308", "-1e308", "1e-320", "1e400", "",
          "abc"]
INTS = ["0", "-1", "", "abc", "1.5", "1e3", "nan", "99999999999999999999999999999"]
STRINGS = ["", "/nonexistent/x", "{tmp}", "{tmp}/binary.bin", "{tmp}/latin1.csv",
           "{tmp}/x.jpgg", "/dev/null"]
#: The values tried in the quick version (the test suite's).
QUICK = {"float": ["nan", "-inf", "1e308", "abc"], "int": ["0", "-1", "1e3", "9" * 30],
         "str": ["", "{tmp}", "{tmp}/binary.bin"]}


def _prepare() -> None:
    """The files the bases and the garbage values name."""
    (TMP / "kernel.csv").write_text("0.9,0.1\n0.2,0.8\n")
    (TMP / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (TMP / "latin1.csv").write_bytes("caf\xe9,0.5\n".encode("latin-1"))
    (TMP / "grid.toml").write_text('mechanism = "gaussian"\nsigma = 1.0\nsampling = "poisson"\n'
                                   'rate = 0.01\nsteps = 10\ndelta = 1e-5\naccountant = "rdp"\n')
    from privamp.sweep import evaluate, expand
    from privamp.sweep.table import to_table, write_table

    rows = evaluate(expand({"mechanism": "gaussian", "sigma": 1.0, "sampling": "poisson",
                            "rate": 0.01, "steps": [10, 100], "delta": 1e-5,
                            "accountant": "rdp"}))
    for i, row in enumerate(rows):
        row["id"], row["key"] = i, f"k{i}"
    write_table(to_table(rows), TMP / "table.parquet", "parquet")


# ---------------------------------------------------------------------------------------------
# the commands and their options, read from the parser
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]  # ("--n", "--steps"), or () for a positional argument
    kind: str  # "float", "int", "str", "choice", "flag"
    nargs: object
    position: int = 0  # for positional arguments: its index in the base command lines
    required: bool = False


def commands() -> dict[str, list[Option]]:
    """Every leaf command (``"plot profile"``) with its options."""
    from privamp.cli import build_parser

    out: dict[str, list[Option]] = {}

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        sub = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if sub:
            for name, child in sub[0].choices.items():
                walk(child, f"{prefix} {name}".strip())
            return
        options, position = [], 0
        for a in parser._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            if a.nargs == 0:
                kind = "flag"
            elif a.choices is not None:
                kind = "choice"
            elif a.type is float:
                kind = "float"
            elif a.type is int or getattr(a.type, "__name__", "") == "integer":
                kind = "int"
            else:
                kind = "str"
            options.append(Option(tuple(a.option_strings), kind, a.nargs, position,
                                  bool(a.required)))
            position += not a.option_strings
        out[prefix] = options

    walk(build_parser(), "")
    return out


def _replace(base: list[str], option: Option, values: list[str]) -> list[str]:
    """``base`` with ``option`` set to ``values`` (replaced where present, added otherwise)."""
    argv = list(base)
    if not option.flags:  # positional arguments come first in the bases
        argv[option.position] = values[0]
        return argv
    for i, a in enumerate(argv):
        if a in option.flags:
            j = i + 1
            while j < len(argv) and not (argv[j].startswith("--") and argv[j][2:3].isalpha()):
                j += 1
            return argv[:i] + [a, *values] + argv[j:]
    return [*argv, option.flags[0], *values]


def _values(option: Option, value: str) -> list[list[str]]:
    """The ways to give ``value`` to ``option`` (each place of a fixed-size list)."""
    if isinstance(option.nargs, int) and option.nargs > 1:
        return [["1"] * i + [value] + ["1"] * (option.nargs - 1 - i)
                for i in range(option.nargs)]
    return [[value]]


def cases(quick: bool = False, only: list[str] | None = None) -> Iterator[tuple[str, list]]:
    """``(command, argv)`` pairs: each base, then each option of the command with each value."""
    table = commands()
    for command, options in table.items():
        if only and not any(o in command for o in only):
            continue
        bases = BASES.get(command)
        if bases is None:
            raise SystemExit(f"fuzz_cli: no base command line for {command!r}: add one to "
                             "BASES")
        head = command.split()
        pool = QUICK if quick else {"float": FLOATS, "int": INTS, "str": STRINGS}
        for base in bases:
            yield command, [*head, *base]
            for option in options:
                if option.kind == "flag":
                    continue
                for value in ["bogus"] if option.kind == "choice" else pool[option.kind]:
                    for values in _values(option, value):
                        yield command, [*head, *_replace(base, option, values)]
                    if option.nargs in ("+", "*") and not quick:
                        yield command, [*head, *_replace(base, option, ["2", value])]


def _value_of(base: list[str], option: Option) -> str | None:
    if not option.flags:
        return base[option.position]
    for i, a in enumerate(base[:-1]):
        if a in option.flags:
            return base[i + 1]
    return None


def _without(base: list[str], option: Option) -> list[str]:
    """``base`` without ``option`` (and its values)."""
    if not option.flags:
        return base[:option.position] + base[option.position + 1:]
    i = next(i for i, a in enumerate(base) if a in option.flags)
    j = i + 1
    while j < len(base) and not (base[j].startswith("--") and base[j][2:3].isalpha()):
        j += 1
    return base[:i] + base[j:]


#: Values besides :data:`QUICK` that every number option gets in :func:`bad_cases`.
BOUNDARY = {"float": ["inf", "0", "-1"], "int": ["-5", "1e3"]}


def bad_cases(only: list[str] | None = None, numbers: dict[str, list[str]] | None = None
              ) -> Iterator[tuple[str, list[str], bool]]:
    """``(command, argv, must_fail)``: the structural mistakes every command must refuse in one
    line (``must_fail``: an unknown option, each required option left out, a missing input file
    or a folder in its place, an output in a folder that cannot be written, that does not exist,
    or that is a folder), and the boundary numbers of :data:`BOUNDARY` given to every number
    option (refused or answered by the contract; ``numbers``: other values per kind)."""
    numbers = BOUNDARY if numbers is None else numbers
    for command, options in commands().items():
        if only and command not in only:
            continue
        head, base = command.split(), BASES[command][0]
        yield command, [*head, *base, "--no-such-option", "1"], True
        yield command, [*head, *base, "stray-argument"], True
        for option in options:
            value = _value_of(base, option)
            if option.required and value is not None:
                yield command, [*head, *_without(base, option)], True
            if option.kind in numbers:
                for bad in numbers[option.kind]:
                    for values in _values(option, bad):
                        yield command, [*head, *_replace(base, option, values)], False
            if option.kind != "str" or value is None or "/" not in value:
                continue
            suffix = Path(value).suffix
            if "--out" in option.flags:
                bads = [f"/proc/x{suffix}", f"/nonexistent/folder/x{suffix}", "{tmp}"]
                if not suffix:  # a folder to create: not inside a file
                    bads = ["/proc/x", "{tmp}/kernel.csv/x", "{tmp}/kernel.csv"]
            else:
                bads = [f"{{tmp}}/missing{suffix}", "{tmp}", "/proc/self/x"]
            for bad in bads:
                yield command, [*head, *_replace(base, option, [bad])], True


# ---------------------------------------------------------------------------------------------
# running and checking
# ---------------------------------------------------------------------------------------------


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run(argv: list[str], limit: float = 60.0) -> tuple[str, int | None, str, str]:
    """Run ``privamp ARGV`` in-process: (verdict, status, stdout, stderr); verdict ``"ok"``,
    ``"slow"`` or a description of the contract broken."""
    from privamp.cli import main

    argv = [a.replace("{tmp}", str(TMP)) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    status = None
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:  # in TMP: relative paths (--out "") write nothing into the repository
        with contextlib.chdir(TMP), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("always")
            status = main(argv)
    except _Timeout:
        return "slow", None, out.getvalue(), err.getvalue()
    except BaseException as exc:  # what would be a traceback
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = "".join(traceback.format_exception(exc)).strip().splitlines()
        return f"uncaught {type(exc).__name__}: {exc}", None, out.getvalue(), \
            "\n".join(tb[-6:])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return check(argv, status, out.getvalue(), err.getvalue()), status, out.getvalue(), \
        err.getvalue()


def check(argv: list[str], status, out: str, err: str) -> str:
    """The contract (``"ok"`` or what is wrong)."""
    lines = [x for x in err.splitlines() if x.strip()]
    if status == 2:
        if out:
            return "exit 2 with output on stdout"
        if len(lines) != 1:
            return f"exit 2 with {len(lines)} lines on stderr"
        if not lines[0].startswith("privamp: error: "):
            return "exit 2 without 'privamp: error: '"
        return "ok"
    if status != 0:
        return f"exit status {status}"
    if not out.strip():
        return "exit 0 without output"
    if "--json" in argv:
        if err.strip():
            return "exit 0 with --json but something on stderr"
        rows = out.strip().splitlines()
        if len(rows) != 1:
            return f"--json printed {len(rows)} lines"
        try:
            obj = json.loads(rows[0])
        except ValueError:
            return "--json printed invalid JSON"
        if not isinstance(obj, dict):
            return "--json printed something other than an object"
    return "ok"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="fuzz the commands containing these words")
    parser.add_argument("--quick", action="store_true", help="fewer values")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--list", action="store_true", help="list the commands and options")
    args = parser.parse_args(argv)
    if args.list:
        for command, options in commands().items():
            print(command, " ".join(f"{(o.flags or ('ARG',))[0]}:{o.kind}" for o in options))
        return 0
    _prepare()
    failures, slow, total = 0, 0, 0
    start = time.perf_counter()
    for _command, case in cases(args.quick, args.only):
        # with --json first; the text output too when the input was accepted
        for json_flag in (["--json"], []):
            total += 1
            verdict, status, out, err = run([*case, *json_flag], args.limit)
            if verdict == "ok":
                if status != 0:
                    break
                continue
            shown = " ".join(a.replace("{tmp}", "TMP") for a in [*case, *json_flag])
            if verdict == "slow":
                slow += 1
                print(f"SLOW  privamp {shown}", flush=True)
                continue
            failures += 1
            detail = err.strip().replace(str(TMP), "TMP")[-600:]
            print(f"FAIL  privamp {shown}\n      {verdict}\n      {detail}", flush=True)
    print(f"{total} runs, {failures} contract failures, {slow} over {args.limit:g} s, "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
