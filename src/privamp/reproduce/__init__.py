"""Regenerate the tables and figures of the five papers privamp implements.

Every artifact (one table or one figure of one paper; :data:`ARTIFACTS`) is computed by the
library, drawn by :mod:`privamp.plots`, and written to an output folder as

* ``<id>.png`` — the figure (for a table: the table, each cell coloured by its comparison);
* ``<id>.csv`` — the numbers behind it, at full precision;
* ``<id>-comparison.csv`` — for tables (and figures whose text prints numbers): the paper's
  printed value next to ours, cell by cell, with its status (agrees, rounding, Monte Carlo,
  erratum, not compared, disagrees);
* ``<id>.json`` — the manifest (parameters, which of them the paper leaves out, checks of the
  paper's claims, errata, timing), from which ``REPRODUCTION.md`` is generated.

Modules, one per paper: :mod:`~privamp.reproduce.bbg2018` (Balle, Barthe, Gaboardi 2018),
:mod:`~privamp.reproduce.wang2019` (Wang's slides), :mod:`~privamp.reproduce.bbgg2019` (Balle,
Barthe, Gaboardi, Geumlek 2019), the package :mod:`~privamp.reproduce.must2023` (Zhao, Liu
2023; one module per concept). The papers' printed values used for the comparisons live in
:mod:`~privamp.reproduce.paper_values`, and nowhere in the computations. Two of the MUST paper's
utility experiments (DP-SGD logistic regression: Table 8, Figure S4) read the Adult data: the
copy shipped with privamp (:mod:`privamp.data`), or another one (``run(..., data=PATH)``,
``privamp reproduce --data PATH``).

>>> from privamp.reproduce import ARTIFACTS
>>> "must-table3" in ARTIFACTS and ARTIFACTS["must-table3"].kind
'table'
"""

from __future__ import annotations

import importlib.util
import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from .._progress import report as report_progress
from .._validation import check_int
from ..errors import InvalidParameterError, MissingDependencyError
from . import _registry
from ._registry import (  # noqa: F401 (re-exported: _registry.__all__)
    ARTIFACTS,
    PAPERS,
    STATUSES,
    Artifact,
    Cell,
    Check,
    Context,
    Result,
)

__all__ = [*_registry.__all__, "resolve", "run"]


def resolve(target: str) -> list[str]:
    """Artifact ids for ``target``: an artifact id, ``"all"``, or a paper key (all of its
    artifacts). Raises :class:`InvalidParameterError` naming the choices otherwise."""
    if target == "all":
        return list(ARTIFACTS)
    if target in PAPERS:
        return [k for k in ARTIFACTS if ARTIFACTS[k].paper == target]
    if target in ARTIFACTS:
        return [target]
    raise InvalidParameterError(
        "artifact", f"an artifact id, a paper ({', '.join(PAPERS)}) or 'all' "
        "(list them with 'privamp reproduce list')", target)


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def manifest(artifact: Artifact, result: Result, seconds: float, ctx: Context) -> dict:
    """The JSON record of one built artifact (what ``REPRODUCTION.md`` is generated from)."""
    return _plain({
        "id": artifact.id,
        "paper": artifact.paper,
        "kind": artifact.kind,
        "label": artifact.label,
        "title": artifact.title,
        "shows": result.shows,
        "parameters": result.parameters,
        "chosen": result.chosen,
        "comparison": result.status_counts(),
        "differences": [
            {"row": c.row, "column": c.column, "quantity": c.quantity, "paper": c.paper,
             "ours": c.ours, "status": c.status, "note": c.note,
             **({} if c.certified is None else {"certified": c.certified})}
            for c in result.cells if c.status not in ("agrees", "monte-carlo")],
        "checks": [{"claim": c.claim, "holds": bool(c.holds), "detail": c.detail}
                   for c in result.checks],
        "errata": result.errata,
        "notes": result.notes,
        "files": result.files,
        **({"values": result.values} if result.values else {}),
        "seconds": round(seconds, 3),
        "quick": ctx.quick,
        "seed": ctx.seed,
        "privamp": __version__,
    })


def run(targets: Iterable[str], out: str | Path, *, quick: bool = False, seed: int = 0,
        data: str | Path | None = None,
        progress: Callable[[str, dict | None], None] | None = None,
        report: bool = True) -> list[dict]:
    """Build the artifacts named by ``targets`` (ids, paper keys or ``"all"``) into ``out``.

    Writes each artifact's files and manifest, then (``report=True``) regenerates
    ``REPRODUCTION.md`` from every manifest in ``out``. ``progress(id, record)`` is called
    before (``record=None``) and after each artifact. Returns the manifests, in order.

    ``data`` is the data file read by the artifacts that need one (:attr:`Artifact.needs`;
    MUST Table 8 and Figure S4 read the preprocessed Adult CSV). Without it they read the copy
    shipped with privamp (:mod:`privamp.data`; its sha256 is checked before anything is built,
    a damaged copy raises :class:`~privamp.errors.DataIntegrityError`).
    """
    seed = check_int("seed", seed, "[0, inf)")
    if data is not None and not Path(data).is_file():
        raise InvalidParameterError("data", "an existing data file", str(data))
    ids: list[str] = []
    for t in targets:
        for i in resolve(t):
            if i not in ids:
                ids.append(i)
    # everything that can fail is checked before anything is computed
    readers = [i for i in ids if ARTIFACTS[i].needs]
    if data is not None and not readers:
        raise InvalidParameterError(
            "data", "left out: none of these artifacts reads a data file (those that do: "
            + ", ".join(a for a in ARTIFACTS if ARTIFACTS[a].needs) + ")", str(data))
    if readers:
        from .must2023.experiments import load_adult

        # the one data file the artifacts read: the Adult CSV given, or the packaged copy
        load_adult(data)
    if ids and importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError("matplotlib", "plots")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    ctx = Context(folder, quick=quick, seed=seed,
                  data=None if data is None else Path(data))
    records = []
    for artifact_id in ids:
        artifact = ARTIFACTS[artifact_id]
        report_progress("reproducing %s", artifact_id)
        if progress:
            progress(artifact_id, None)
        start = time.perf_counter()
        result = artifact.build(replace(ctx, artifact=artifact_id))
        record = manifest(artifact, result, time.perf_counter() - start, ctx)
        (folder / f"{artifact_id}.json").write_text(json.dumps(record, indent=1) + "\n")
        records.append(record)
        if progress:
            progress(artifact_id, record)
    if report:
        from .report import write_report

        write_report(folder)
    return records
