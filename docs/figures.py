"""The figures of the documentation: every image a page shows, with the command that makes it.

``docs/images/`` is a build output (not in git): the docs build (``docs/conf.py``, on
``builder-inited``) calls :func:`build`, which runs each entry below in-process into
``docs/images/``. By hand::

    PYTHONPATH=src python docs/figures.py [NAME.png ...]     # all, or the ones named

An entry is skipped when its image exists and its stamp — a SHA-256 of this file, of every
source file of privamp and of the entry's benchmark script, recorded in
``docs/images/.stamps.json`` with the seconds the figure took — is unchanged (content, not
modification times: reliable across checkouts); ``PRIVAMP_DOCS_FIGURES=always`` regenerates
every figure. Each page's caption names its entry's command (``Figure.command``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IMAGES = HERE / "images"


@dataclass(frozen=True)
class Figure:
    """One image of the docs: ``name`` in ``docs/images/``, the ``command`` a reader can run
    (shown in the page's caption) and ``make(path)``, which draws it in-process."""

    name: str
    command: str
    make: Callable[[Path], None]
    script: str | None = None  # a benchmark script the figure comes from (part of the stamp)


def _cli(argv: list[str], path: Path) -> None:
    from privamp.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        status = main([*argv, "--out", str(path)])
    if status != 0:
        raise RuntimeError(f"privamp {' '.join(argv)} exited with status {status}")


def privamp(command: str) -> Callable[[Path], None]:
    """``privamp COMMAND --out PATH``, run in-process."""
    return lambda path: _cli(command.split(), path)


def reproduce(artifact: str, *options: str) -> Callable[[Path], None]:
    """``privamp reproduce ARTIFACT``: its PNG, copied from a temporary folder."""
    def make(path: Path) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            _cli(["reproduce", artifact, *options], Path(tmp))
            shutil.copyfile(Path(tmp) / f"{artifact}.png", path)
    return make


def benchmark(script: str, function: str = "figure") -> Callable[[Path], None]:
    """``FUNCTION(path)`` of a benchmark script (the figure only: no timing repeats)."""
    def make(path: Path) -> None:
        spec = importlib.util.spec_from_file_location(Path(script).stem, ROOT / script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with contextlib.redirect_stdout(io.StringIO()):
            getattr(module, function)(path)
    return make


def sweep_figure(path: Path) -> None:
    """``privamp sweep examples/sweep.toml`` (evaluated in-process, without Dask: the same
    rows), then ``privamp plot sweep``."""
    from privamp.sweep import read_grid
    from privamp.sweep.batch import evaluate
    from privamp.sweep.table import to_table, write_table

    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "sweep.parquet"
        write_table(to_table(evaluate(read_grid(ROOT / "examples" / "sweep.toml"))), table)
        _cli(["plot", "sweep", str(table), *SWEEP_PLOT.split()], path)


SWEEP_PLOT = "--x steps --y epsilon --hue sampling sigma --where delta=1e-5"
TRADEOFF = ("plot tradeoff --mechanism gaussian --sigma 1 --n 60000 --m 600 --steps 1000 "
            "--schemes poisson wor random-allocation")
SAMPLERS = ("plot composition --mechanism gaussian --sigma 1 --n 60000 --m 600 --schemes "
            "poisson wor random-allocation shuffle truncated-poisson --max-steps 10000 "
            "--points 4 --accountants pld")

FIGURES = [
    Figure("rdp.png", "privamp plot rdp", privamp("plot rdp")),
    Figure("ou-mse.png", "privamp plot ou-mse", privamp("plot ou-mse")),
    Figure("tradeoff.png", f"privamp {TRADEOFF}", privamp(TRADEOFF)),
    Figure("samplers.png", f"privamp {SAMPLERS}", privamp(SAMPLERS)),
    Figure("sweep.png", "privamp sweep examples/sweep.toml --out sweep.parquet; privamp plot "
                        f"sweep sweep.parquet {SWEEP_PLOT}", sweep_figure),
    Figure("reproduce-bbg-fig1b.png", "privamp reproduce bbg-fig1b --quick",
           reproduce("bbg-fig1b", "--quick")),
    Figure("reproduce-must-fig4.png", "privamp reproduce must-fig4", reproduce("must-fig4")),
    Figure("reproduce-wang-composition.png", "privamp reproduce wang-fig-composition --quick",
           reproduce("wang-fig-composition", "--quick")),
    Figure("group.png", "benchmarks/bench_group.py: figure()",
           benchmark("benchmarks/bench_group.py"), "benchmarks/bench_group.py"),
    Figure("group_laplace.png", "benchmarks/bench_group_laplace.py: figure() (with the "
                                "coupling bound)",
           benchmark("benchmarks/bench_group_laplace.py"), "benchmarks/bench_group_laplace.py"),
    Figure("filter.png", "benchmarks/plot_filter.py: figure()",
           benchmark("benchmarks/plot_filter.py"), "benchmarks/plot_filter.py"),
    Figure("rdp_exact.png", "benchmarks/bench_rdp_exact.py: figure()",
           benchmark("benchmarks/bench_rdp_exact.py"), "benchmarks/bench_rdp_exact.py"),
]


def _source_digest() -> str:
    """SHA-256 of this file and of every file of privamp's source (paths and contents)."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    src = ROOT / "src" / "privamp"
    for path in sorted(p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                       and p.suffix not in (".pyc", ".so")):
        h.update(str(path.relative_to(src)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _stamp(fig: Figure, sources: str) -> str:
    h = hashlib.sha256(f"{fig.name}\n{fig.command}\n{sources}".encode())
    if fig.script:
        h.update((ROOT / fig.script).read_bytes())
    return h.hexdigest()


def build(out: Path = IMAGES, names: list[str] | None = None, *,
          log: Callable[[str], None] | None = None) -> dict[str, float]:
    """Make the figures (all, or ``names``) into ``out``, skipping those up to date; returns
    the seconds each figure made took."""
    if log is None:
        def log(line: str) -> None:
            sys.stdout.write(line + "\n")
    os.environ.setdefault("MPLBACKEND", "Agg")
    out.mkdir(parents=True, exist_ok=True)
    stamps_file = out / ".stamps.json"
    try:
        stamps = json.loads(stamps_file.read_text())
        stamps = {k: v for k, v in stamps.items() if isinstance(v, dict)}
    except (OSError, ValueError, AttributeError):
        stamps = {}
    always = os.environ.get("PRIVAMP_DOCS_FIGURES") == "always"
    sources = _source_digest()
    unknown = set(names or ()) - {f.name for f in FIGURES}
    if unknown:
        raise ValueError(f"no such figure in docs/figures.py: {', '.join(sorted(unknown))}")
    seconds: dict[str, float] = {}
    for fig in FIGURES:
        if names and fig.name not in names:
            continue
        path, stamp = out / fig.name, _stamp(fig, sources)
        if not always and path.is_file() and stamps.get(fig.name, {}).get("stamp") == stamp:
            continue
        start = time.perf_counter()
        fig.make(path)
        seconds[fig.name] = time.perf_counter() - start
        stamps[fig.name] = {"stamp": stamp, "seconds": round(seconds[fig.name], 2)}
        stamps_file.write_text(json.dumps(stamps, indent=1, sort_keys=True) + "\n")
        log(f"docs figure {fig.name}: {seconds[fig.name]:.1f} s ({fig.command})")
    return seconds


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    made = build(names=sys.argv[1:] or None)
    sys.stdout.write(f"{len(made)} figure(s) made in {sum(made.values()):.1f} s\n")
