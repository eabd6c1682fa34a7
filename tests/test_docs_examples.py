"""The examples of README.md and of the documentation site (docs/**/*.md) are what privamp
prints, so they cannot go stale.

* Every ```console block's ``$ privamp ...`` commands run (a trailing ``\\`` continues a command
  on the next line), in a fresh directory; each output line shown under a command must appear in
  the real output, in order. ``...`` inside a shown line stands for any text (abbreviated JSON, a
  value left out), a line of only ``...`` for any lines; a shown line may be a fragment of a real
  line (wrapped JSON).
* Every ```python or ```{doctest} block with ``>>>`` prompts runs as a doctest (ELLIPSIS,
  NORMALIZE_WHITESPACE), the blocks of one page in one namespace, in order.
"""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted(
    p for p in (ROOT / "docs").rglob("*.md")
    if not {"_build", "generated", "tutorials"} & set(p.relative_to(ROOT / "docs").parts))
#: commands too long for the test suite (each is run by its own tests): prefix -> reason
SKIP = {
    "privamp sweep": "a Dask sweep (tests/test_sweep_*.py)",
    "privamp reproduce": "the paper artifacts (tests/test_reproduce*.py)",
    "privamp experiment": "the MUST experiments (tests/test_experiments.py)",
    "privamp plot sweep": "plots a sweep's table (tests/test_cli_plots.py)",
}


def _console_examples():
    out = []
    for page in PAGES:
        text = page.read_text("utf-8")
        for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
            lines = block.splitlines()
            joined: list[str] = []
            for line in lines:
                if joined and joined[-1].startswith("$ ") and joined[-1].endswith("\\"):
                    joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
                else:
                    joined.append(line)
            command, shown = None, []
            for line in joined + ["$ end"]:
                if line.startswith("$ "):
                    if command is not None and command.startswith("privamp "):
                        name = f"{page.relative_to(ROOT)}:{command[:70]}"
                        skip = next((why for pre, why in SKIP.items()
                                     if command.startswith(pre)), None)
                        marks = [pytest.mark.skip(reason=skip)] if skip else []
                        out.append(pytest.param(command, shown, id=name, marks=marks))
                    command, shown = line[2:].split("  #")[0].strip(), []
                else:
                    shown.append(line)
    return out


def _pattern(line: str) -> re.Pattern:
    parts = [re.escape(p) for p in line.strip().split("...")]
    return re.compile(".*?".join(parts))


@pytest.mark.parametrize(("command", "shown"), _console_examples())
def test_console_example_matches_the_command(command, shown, tmp_path):
    args = shlex.split(command)[1:]
    # a command reading a file of the repository (examples/kernel.csv) runs from its root; the
    # others in a fresh directory (they may write files)
    reads_repo = any(a.startswith("examples/") for a in args)
    res = subprocess.run([sys.executable, "-m", "privamp", *args], capture_output=True,
                         text=True, timeout=600, check=False,
                         cwd=ROOT if reads_repo else tmp_path)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    pos = 0
    for want in shown:
        if want.strip() in ("", "..."):
            continue
        match = _pattern(want).search(out, pos)
        assert match is not None, (f"{want.strip()!r} is not in the output of {command!r} "
                                   f"(from position {pos}):\n{out}")
        pos = match.end()


def _doctest_pages():
    out = []
    for page in PAGES:
        blocks = re.findall(r"```(?:python|\{doctest\})\n(.*?)```", page.read_text("utf-8"),
                            flags=re.S)
        source = "\n".join(b for b in blocks if ">>>" in b)
        if source:
            out.append(pytest.param(page, source, id=str(page.relative_to(ROOT))))
    return out


@pytest.mark.parametrize(("page", "source"), _doctest_pages())
def test_python_examples_run_as_shown(page, source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(source, {}, str(page), str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: print(text, end=""))
    assert runner.failures == 0, f"{runner.failures} example(s) of {page} fail (output above)"


def test_there_are_examples():
    assert len(_console_examples()) >= 5 and len(_doctest_pages()) >= 3
