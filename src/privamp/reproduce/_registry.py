"""The artifact registry of :mod:`privamp.reproduce`: what an artifact is, what it returns, and
how the registry finds them.

An :class:`Artifact` is one table or figure of one paper. Its ``build`` function receives a
:class:`Context` (output folder, ``quick`` flag, seed, a per-run cache), computes the numbers with
the library, writes the PNG and the CSV files through :mod:`privamp.reproduce._output`, and returns
a :class:`Result`: the parameters (and which of them the paper leaves out), a comparison of the
paper's printed values with ours cell by cell (:class:`Cell`), the paper's claims it checked
(:class:`Check`) and the errata involved. The runner (:func:`privamp.reproduce.run`) times it and
writes the manifest from which ``REPRODUCTION.md`` is generated.

Discovery: every public module of the package (``privamp.reproduce.<name>`` without a leading
underscore, a module or a package) is imported on the first read of :data:`ARTIFACTS` and
registers its artifacts with :func:`register`; a package imports its own modules (as
:mod:`~privamp.reproduce.must2023` does). Adding the artifacts of a new paper is one new module
or package.
"""

from __future__ import annotations

import importlib
import pkgutil
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = [
    "ARTIFACTS",
    "PAPERS",
    "STATUSES",
    "Artifact",
    "Cell",
    "Check",
    "Context",
    "Result",
    "register",
]

#: The five papers (keys used by artifact ids and the report), in report order.
PAPERS = {
    "bbg2018": "Balle, Barthe, Gaboardi (NeurIPS 2018), Privacy Amplification by Subsampling: "
               "Tight Analyses via Couplings and Divergences (with its appendix)",
    "wang2019": "Yu-Xiang Wang, slides: Privacy Amplification by Subsampling and Rényi "
                "Differential Privacy (Wang, Balle, Kasiviswanathan, AISTATS 2019; Zhu, Wang "
                "2019)",
    "bbgg2019": "Balle, Barthe, Gaboardi, Geumlek (NeurIPS 2019), Privacy Amplification by "
                "Mixing and Diffusion Mechanisms",
    "must2023": "Zhao, Liu (arXiv 2312.13389, 2023), Enhancing Trade-offs in Privacy, Utility, "
                "and Computational Efficiency through MUltistage Sampling Technique (MUST)",
}

#: Comparison outcomes of one printed cell, best first.
STATUSES = ("agrees", "rounding", "monte-carlo", "erratum", "not-compared", "disagrees")


@dataclass(frozen=True)
class Cell:
    """One printed value of a paper next to ours.

    ``status``: ``agrees`` (ours, rounded as printed, is the printed value), ``rounding`` (within
    one unit of the last printed digit), ``monte-carlo`` (a Monte-Carlo statistic within the
    stated tolerance), ``erratum`` (the printed value is wrong; ``note`` names the erratum),
    ``not-compared`` (platform-dependent, e.g. timings), ``disagrees`` (none of these).

    ``certified``: for a privacy bound, whether ours is a guarantee (``True``) or an estimate
    (``False``: e.g. the Fourier accountant on a mixture pair not proven to dominate the
    mechanism); ``None`` where it does not apply (σ, RMSE, counts).
    """

    row: str
    column: str
    quantity: str
    paper: str
    ours: float | str
    status: str
    note: str = ""
    certified: bool | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise InvalidParameterError("status", f"one of {', '.join(STATUSES)}", self.status)


@dataclass(frozen=True)
class Check:
    """A claim of the paper (or a property of the figure) and whether our numbers bear it out."""

    claim: str
    holds: bool
    detail: str = ""


@dataclass
class Result:
    """What an artifact's ``build`` returns (the runner adds the timing and the file list)."""

    shows: str
    parameters: dict[str, Any]
    chosen: dict[str, str] = field(default_factory=dict)
    cells: list[Cell] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    errata: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    #: privacy numbers the artifact shows outside its cells (a figure's curves), each a dict
    #: with a ``"certified"`` key: ``False`` marks an estimate, not a guarantee
    values: list[dict[str, Any]] = field(default_factory=list)

    def status_counts(self) -> dict[str, int]:
        """Number of compared cells per status (statuses with no cell left out)."""
        counts = {s: 0 for s in STATUSES}
        for c in self.cells:
            counts[c.status] += 1
        return {s: n for s, n in counts.items() if n}


@dataclass
class Context:
    """Where and how an artifact is built.

    ``quick`` asks for the CI version: fewer Monte-Carlo repetitions, coarser grids and smaller
    FFTs (the figure and its comparison are still produced; the report says what was reduced).
    ``data`` is the data file given by the user (``privamp reproduce --data PATH``) for the
    artifacts that read one (:attr:`Artifact.needs`); ``None``: the copy shipped with privamp
    (:mod:`privamp.data`). privamp never downloads data.
    ``cache`` is shared by the artifacts of one run (e.g. MUST Figures 5 and S1 share a grid).
    ``artifact`` is the id of the artifact being built (the runner sets it), the stem of its
    files.
    """

    out: Path
    quick: bool = False
    seed: int = 0
    data: Path | None = None
    cache: dict[str, Any] = field(default_factory=dict)
    artifact: str = ""

    def path(self, artifact_id: str, suffix: str) -> Path:
        """``<out>/<artifact_id><suffix>`` (e.g. ``.png``, ``.csv``, ``-comparison.csv``)."""
        return self.out / f"{artifact_id}{suffix}"

    def rng(self, artifact_id: str) -> np.random.Generator:
        """A generator seeded by the run's seed and the artifact id (stable across runs and
        independent of which other artifacts run)."""
        return np.random.default_rng([self.seed, zlib.crc32(artifact_id.encode())])

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per run for ``key``."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]


@dataclass(frozen=True)
class Artifact:
    """One table or figure of one paper and the function that regenerates it.

    ``needs`` describes the data file the artifact reads from :attr:`Context.data` (``None``:
    none; everything else is simulated or computed).
    """

    id: str
    paper: str
    kind: str
    label: str
    title: str
    build: Callable[[Context], Result]
    needs: str | None = None

    def __post_init__(self):
        if self.paper not in PAPERS:
            raise InvalidParameterError("paper", f"one of {', '.join(PAPERS)}", self.paper)
        if self.kind not in ("table", "figure"):
            raise InvalidParameterError("kind", "'table' or 'figure'", self.kind)


class ArtifactRegistry(Mapping):
    """Artifact id → :class:`Artifact`, in registration order; imports the provider modules of
    the package on first read."""

    def __init__(self):
        self._items: dict[str, Artifact] = {}
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        package = importlib.import_module(__package__)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if not info.name.startswith("_") and info.name != "report":
                importlib.import_module(f"{__package__}.{info.name}")

    def add(self, artifact: Artifact) -> None:
        if artifact.id in self._items and self._items[artifact.id].build is not artifact.build:
            raise InvalidParameterError("id", "an artifact id not registered yet", artifact.id)
        self._items[artifact.id] = artifact

    def __getitem__(self, key: str) -> Artifact:
        self._load()
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        self._load()
        papers = list(PAPERS)
        return iter(sorted(self._items, key=lambda k: (papers.index(self._items[k].paper),
                                                       _natural(k))))

    def __len__(self) -> int:
        self._load()
        return len(self._items)


def _natural(key: str) -> tuple:
    """Sort key with numbers compared numerically (fig1a < fig5 < figS1, table2 < table10)."""
    import re

    parts = re.split(r"(\d+)", key)
    return tuple(int(p) if p.isdigit() else p for p in parts)


#: Every registered artifact (complete on first read).
ARTIFACTS = ArtifactRegistry()


def register(id: str, *, paper: str, kind: str, label: str, title: str,
             needs: str | None = None):
    """Decorator registering ``build(ctx) -> Result`` as artifact ``id`` (``needs``: the data
    file it reads, see :class:`Artifact`)."""

    def decorate(build: Callable[[Context], Result]):
        ARTIFACTS.add(Artifact(id, paper, kind, label, title, build, needs))
        return build

    return decorate
