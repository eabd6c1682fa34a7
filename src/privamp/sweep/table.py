"""Result tables of sweeps: one row per configuration, as Parquet or CSV (through pyarrow).

Columns (:func:`~privamp.sweep.batch.result_columns`): ``id`` (the configuration's position in
the grid), ``key`` (a digest of its values), every parameter of the configuration (null where it
does not apply), the answers ``epsilon``/``epsilon_lower`` (ε queries and calibrations; the
calibrated value is in its parameter's column) or ``delta``/``delta_lower`` (δ queries),
``reuse``, ``seconds`` (wall time of the row on its worker; with reuse, the first row of a group
carries the shared work) and ``error`` (null, or why the configuration failed).

Files are written to a temporary name and renamed, so an interrupted write never leaves a
truncated table behind.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError, MissingDependencyError
from .grid import AXES

__all__ = ["FORMATS", "read_table", "schema", "to_table", "write_table"]

FORMATS = ("parquet", "csv")


def _pa(module: str = "pyarrow"):
    """``pyarrow`` (or its submodule ``module``: ``pyarrow.parquet``, ``pyarrow.csv``), or
    :class:`MissingDependencyError` naming the ``dask`` extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # tests/test_missing_extras.py runs without pyarrow
        raise MissingDependencyError("pyarrow", "dask") from exc


def _type_of(name: str):
    pa = _pa()
    if name in ("id",):
        return pa.int64()
    if name in ("key", "reuse", "error"):
        return pa.string()
    if name in ("seconds", "epsilon_lower", "delta_lower"):
        return pa.float64()
    kind = AXES[name][0]
    return {"real": pa.float64(), "int": pa.int64(), "choice": pa.string()}[kind]


def schema():
    """The Arrow schema of a result table."""
    from .batch import result_columns

    pa = _pa()
    return pa.schema([pa.field(name, _type_of(name)) for name in result_columns()])


def to_table(rows: Sequence[dict[str, Any]]):
    """An Arrow table of result rows (dicts with the result columns)."""
    pa = _pa()
    sch = schema()
    return pa.table({f.name: pa.array([r.get(f.name) for r in rows], type=f.type)
                     for f in sch}, schema=sch)


def format_of(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The table format: ``fmt`` if given, else from the extension (``.csv`` or Parquet)."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise InvalidParameterError("format", "one of 'parquet', 'csv'", fmt)
        return fmt
    return "csv" if str(path).lower().endswith(".csv") else "parquet"


def write_table(table, path: str | os.PathLike, fmt: str | None = None) -> None:
    """Write an Arrow table atomically (temporary file, then rename)."""
    fmt = format_of(path, fmt)
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        if fmt == "csv":
            _pa("pyarrow.csv").write_csv(table, tmp)
        else:
            _pa("pyarrow.parquet").write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def read_table(path: str | os.PathLike, fmt: str | None = None):
    """Read a result table (Parquet or CSV) with the result schema's column types."""
    fmt = format_of(path, fmt)
    path = Path(path)
    if not path.is_file():
        raise InvalidParameterError("results", "an existing result table", path)
    csv, pq = (_pa("pyarrow.csv"), None) if fmt == "csv" else (None, _pa("pyarrow.parquet"))
    try:
        if fmt == "csv":
            sch = schema()
            opts = csv.ConvertOptions(column_types={f.name: f.type for f in sch},
                                      strings_can_be_null=True)
            table = csv.read_csv(path, convert_options=opts)
        else:
            table = pq.read_table(path)
        columns = table.column_names  # decodes the names: UnicodeDecodeError if not UTF-8
    except (OSError, ValueError) as exc:
        # pyarrow raises ArrowInvalid (a ValueError) for files that are not tables, and a
        # UnicodeDecodeError (a ValueError too) for a binary file read as CSV
        lines = str(exc).splitlines() or [type(exc).__name__]
        raise InvalidParameterError("results", f"a readable {fmt} result table", path,
                                    detail=lines[0]) from None
    missing = [name for name in schema().names if name not in columns]
    if missing:
        raise InvalidParameterError("results", f"a {fmt} result table of privamp sweep",
                                    path, detail="no column " + ", ".join(missing[:5])
                                    + (", ..." if len(missing) > 5 else ""))
    return table

