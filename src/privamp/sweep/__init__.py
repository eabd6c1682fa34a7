"""Parameter sweeps: evaluate thousands to millions of accounting configurations.

* :mod:`~privamp.sweep.grid` — :class:`Configuration` (one row: everything ``privamp epsilon``,
  ``delta`` or ``calibrate`` takes), grids of axes and ranges, TOML grid files;
* :mod:`~privamp.sweep.batch` — :func:`evaluate`: a table of configurations answered with the
  work they share reused (results identical to the per-row accountant, or on shared grids);
* :mod:`~privamp.sweep.runner` — :func:`run_sweep`: the same on a Dask cluster (a local one by
  default), written to Parquet or CSV, resumable after an interruption (needs the ``dask``
  extra: ``pip install 'privamp[dask]'``);
* :mod:`~privamp.sweep.table` — reading and writing result tables.

>>> from privamp.sweep import evaluate, expand
>>> rows = evaluate(expand({"mechanism": "gaussian", "sigma": [0.8, 1.0], "sampling": "poisson",
...                         "rate": 0.01, "steps": 100, "delta": 1e-5, "accountant": "rdp"}))
>>> [round(r["epsilon"], 3) for r in rows]
[2.185, 1.214]
"""

from __future__ import annotations

from .batch import OUTPUT_COLUMNS, REUSE, evaluate, evaluate_one, result_columns
from .grid import AXES, Configuration, expand, fingerprint, read_grid

__all__ = ["AXES", "OUTPUT_COLUMNS", "REUSE", "Configuration", "evaluate", "evaluate_one",
           "expand", "fingerprint", "read_grid", "result_columns", "run_sweep"]


def __getattr__(name: str):
    if name == "run_sweep":  # imported on use: the runner needs the dask extra
        from .runner import run_sweep

        return run_sweep
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
