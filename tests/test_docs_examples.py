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


#: a number as printed (integers, decimals, exponents)
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
#: relative tolerance for shown decimals: the last digits of a bracket's ends may move with the
#: platform's FFT rounding (the lower side's refinement stops once within 0.1 %), never more
REL = 1e-3


def _pattern(line: str) -> tuple[re.Pattern, list[str]]:
    """A regex for a shown line (``...``: any text; every number a group) and its numbers."""
    numbers = [p for chunk in line.strip().split("...")
               for p in re.split(f"({_NUMBER})", chunk)[1::2]]
    return re.compile(".*?".join(_chunks(line))), numbers


def _chunks(line: str) -> list[str]:
    out = []
    for chunk in line.strip().split("..."):
        pieces = re.split(f"({_NUMBER})", chunk)
        out.append("".join(f"({_NUMBER})" if j % 2 else re.escape(p)
                           for j, p in enumerate(pieces)))
    return out


def _close(shown: str, got: str) -> bool:
    if not re.search(r"[.e]", shown):
        return shown == got  # integers, counts: exact
    a, b = float(shown), float(got)
    return a == b or abs(a - b) <= REL * max(abs(a), abs(b))


def numbers_match(want: str, got: str) -> bool:
    """``got`` is ``want`` up to :data:`REL` on its decimals (doctest output, whole text)."""
    parts = re.split(f"({_NUMBER})", want)
    regex = "".join(f"({_NUMBER})" if j % 2 else re.escape(p) for j, p in enumerate(parts))
    regex = regex.replace(re.escape("..."), ".*?")
    match = re.fullmatch(regex, got, flags=re.S)
    return match is not None and all(_close(w, g) for w, g in zip(parts[1::2], match.groups(),
                                                                    strict=True))


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
        pattern, numbers = _pattern(want)
        for match in pattern.finditer(out, pos):
            if all(_close(w, g) for w, g in zip(numbers, match.groups(), strict=True)):
                break
        else:
            match = None
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


class _Checker(doctest.OutputChecker):
    """doctest's checker, with the decimals of the output compared up to :data:`REL`."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if super().check_output(want, got, optionflags):
            return True
        return numbers_match(" ".join(want.split()), " ".join(got.split()))


@pytest.mark.parametrize(("page", "source"), _doctest_pages())
def test_python_examples_run_as_shown(page, source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(source, {}, str(page), str(page), 0)
    runner = doctest.DocTestRunner(checker=_Checker(),
                                   optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: print(text, end=""))
    assert runner.failures == 0, f"{runner.failures} example(s) of {page} fail (output above)"


def test_there_are_examples():
    assert len(_console_examples()) >= 5 and len(_doctest_pages()) >= 3
