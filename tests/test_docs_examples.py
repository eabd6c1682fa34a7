"""The console examples of the documentation site are what the command prints (docs/**/*.md).

Every ```console block's ``$ privamp ...`` commands run, and each output line shown under a
command (a ``...`` line stands for lines left out) must appear in the real output, in order —
so the pages cannot go stale. The Python examples are ``{doctest}`` blocks, run by
``make docs`` (``sphinx-build -b doctest``)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _examples():
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts or "generated" in page.parts:
            continue
        text = page.read_text("utf-8")
        for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
            command, shown = None, []
            for line in block.splitlines() + ["$ end"]:
                if line.startswith("$ "):
                    if command is not None and command.startswith("privamp "):
                        out.append(pytest.param(command, shown, id=f"{page.name}:{command[:60]}"))
                    command, shown = line[2:].split("  #")[0].strip(), []
                else:
                    shown.append(line)
    return out


@pytest.mark.parametrize(("command", "shown"), _examples())
def test_console_example_matches_the_command(command, shown):
    args = shlex.split(command)[1:]
    res = subprocess.run([sys.executable, "-m", "privamp", *args], capture_output=True,
                         text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    pos = 0
    for want in shown:
        if want.strip() in ("", "..."):
            continue
        while pos < len(lines) and lines[pos].rstrip() != want.rstrip():
            pos += 1
        assert pos < len(lines), f"{want!r} not in the output of {command!r}:\n{res.stdout}"
        pos += 1


def test_there_are_console_examples():
    assert len(_examples()) >= 2
