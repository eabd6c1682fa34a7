"""The command line against its contract, with garbage and boundary values (a reduced run of
``scripts/fuzz_cli.py``, which fuzzes every command and option; run it in full by hand).

Every run exits 0 with output (``--json``: one JSON object, nothing on stderr) or exits 2 with
one line ``privamp: error: ...``; nothing escapes ``main`` as a traceback.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "fuzz_cli.py"
spec = importlib.util.spec_from_file_location("fuzz_cli", SCRIPT)
fuzz_cli = importlib.util.module_from_spec(spec)
sys.modules["fuzz_cli"] = fuzz_cli
spec.loader.exec_module(fuzz_cli)

#: The cheap commands, fuzzed here with the quick values (the others: by the script).
COMMANDS = ["profile", "epsilon", "rdp", "mixing", "iteration", "ou", "plot profile",
            "plot aligned", "plot ou-mse", "plot sweep", "experiment efficiency"]


@pytest.fixture(scope="module")
def files():
    fuzz_cli._prepare()
    return fuzz_cli.TMP


def test_every_command_has_a_base():
    """A new command needs a valid command line in the fuzzer's BASES."""
    assert set(fuzz_cli.commands()) == set(fuzz_cli.BASES)


@pytest.mark.parametrize("command", COMMANDS)
def test_contract_under_garbage(command, files):
    failures = []
    for name, argv in fuzz_cli.cases(quick=True, only=[command]):
        if name != command:  # "profile" also matches "plot profile"
            continue
        verdict, status, out, err = fuzz_cli.run([*argv, "--json"], limit=60.0)
        if verdict not in ("ok", "slow"):
            failures.append(f"privamp {' '.join(argv)} --json: {verdict}: {err[-300:]}")
    assert not failures, "\n".join(failures)


def test_the_checker_sees_contract_breaks():
    """The checker itself: a traceback-like exit, two lines, noise on stderr with --json."""
    check = fuzz_cli.check
    assert check(["x"], 2, "", "privamp: error: --n must be ...\n") == "ok"
    assert check(["x"], 2, "", "privamp: error: a\nb\n") != "ok"
    assert check(["x"], 2, "", "Traceback (most recent call last):\n") != "ok"
    assert check(["x", "--json"], 0, '{"a": 1}\n', "warning\n") != "ok"
    assert check(["x", "--json"], 0, '{"a": 1}\n{"b": 2}\n', "") != "ok"
    assert check(["x"], 1, "", "") != "ok"


@pytest.mark.parametrize("command", sorted(fuzz_cli.BASES))
def test_structural_mistakes_are_one_line(command, files):
    """Every command (not only the cheap ones above): an unknown option, a stray argument,
    each required option left out, a missing or unreadable input file, an output that cannot
    be written, and boundary numbers (inf, 0, -1, ...) in every number option: exit 2 with one
    line ``privamp: error: ...`` (or, for numbers, a valid answer), never a traceback. The
    commands not fuzzed above also get the quick garbage values in their number options."""
    numbers = fuzz_cli.BOUNDARY
    if command not in COMMANDS:  # not fuzzed above: the quick values too
        numbers = {kind: [*fuzz_cli.QUICK[kind], *values] for kind, values in numbers.items()}
    failures = []
    for _, argv, must_fail in fuzz_cli.bad_cases(only=[command], numbers=numbers):
        # a run over 3 s is not a contract failure (--repeats 10^30 is a long experiment)
        verdict, status, out, err = fuzz_cli.run([*argv, "--json"], limit=3.0)
        if verdict == "slow":
            continue
        if verdict != "ok" or (must_fail and status != 2):
            failures.append(f"privamp {' '.join(argv)} --json: {verdict}, exit {status}: "
                            f"{(out + err)[-300:]}")
    assert not failures, "\n".join(failures)
