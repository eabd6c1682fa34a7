"""``privamp sweep`` and ``privamp plot sweep``: parameter sweeps on Dask and their plots.

Thin, like the rest of the command line: parse, call :mod:`privamp.sweep`, format. ::

    privamp sweep grid.toml --out results.parquet                 # local cluster, all cores
    privamp sweep grid.toml --out results.csv --workers 2
    privamp sweep grid.toml --out results.parquet --scheduler tcp://10.0.0.5:8786
    privamp plot sweep results.parquet --x steps --y epsilon --hue sampling \\
        --where delta=1e-5 --out epsilon.png

``--json`` prints the summary ``{"out", "rows", "computed", "resumed", "errors", "seconds",
"throughput", "workers", "scheduler", "reuse", ...}``. On a terminal (and not with ``--json``)
a progress bar runs on stderr. An interrupted sweep (Ctrl-C, a lost machine) keeps its
finished rows in ``OUT.partial/``; the same command resumes it.
"""

from __future__ import annotations

import argparse
import math
import sys

from ..display import num
from ..errors import InvalidParameterError, MissingDependencyError
from . import SUMMARIES
from ._common import (
    CliError,
    Progress,
    add_json,
    add_plot_outputs,
    emit_json,
    int_in,
    writable_file,
)

__all__ = ["add_plot_sweep", "add_sweep"]


#: Parameter names of these commands -> options, for error messages.
OPTION_NAMES = {"scheduler": "--scheduler", "workers": "--workers", "out": "--out",
                "chunk_size": "--chunk-size", "connect_timeout": "--connect-timeout",
                "format": "--format", "results": "RESULTS"}


def add_sweep(sub) -> None:
    """Add ``privamp sweep``."""
    p = sub.add_parser("sweep", help=SUMMARIES["sweep"])
    p.add_argument("grid", metavar="GRID.toml",
                   help="TOML file naming the axes (see privamp.sweep.grid)")
    p.add_argument("--out", required=True, type=_table_path,
                   help="result table: Parquet, or CSV (.csv or --format csv)")
    p.add_argument("--format", choices=("parquet", "csv"), default=None, dest="fmt",
                   help="table format (default: from the extension; Parquet otherwise)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="address of an existing Dask scheduler, tcp://host:port (default: a "
                        "local cluster on this machine)")
    p.add_argument("--workers", type=int_in("[1, 1024]"), default=None,
                   help="worker processes of the local cluster, 1 to 1024 (default: one per "
                        "core)")
    p.add_argument("--reuse", choices=("exact", "grid"), default="exact",
                   help="exact (default): every row equals the per-row accountant; grid: PLD "
                        "epsilon rows share rounded (finer) grids, certified but not "
                        "digit-for-digit equal")
    p.add_argument("--chunk-size", type=int_in("[1, inf)"), default=None, dest="chunk_size",
                   help="configurations per Dask task (default: automatic, at most 64)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing table and discard the parts of another sweep")
    p.add_argument("--connect-timeout", type=float, default=10.0, dest="connect_timeout",
                   help="seconds to wait for a remote scheduler (default 10)")
    add_json(p)
    p.set_defaults(func=_cmd_sweep)


def add_plot_sweep(plot_sub) -> None:
    """Add ``privamp plot sweep``."""
    ps = plot_sub.add_parser("sweep", help="plot a column of a sweep table against another")
    ps.add_argument("results", metavar="RESULTS", type=_results_table,
                    help="table written by privamp sweep")
    ps.add_argument("--x", required=True, help="column on the x axis (e.g. steps)")
    ps.add_argument("--y", required=True, help="column on the y axis (e.g. epsilon, sigma)")
    ps.add_argument("--hue", nargs="+", default=[],
                    help="columns whose values get a line each (e.g. sampling backend)")
    ps.add_argument("--where", nargs="+", default=[], metavar="COLUMN=VALUE",
                    help="keep the rows with these values (e.g. delta=1e-5 sigma=1)")
    ps.add_argument("--format", choices=("parquet", "csv"), default=None, dest="fmt",
                    help="table format (default: from the extension)")
    ps.add_argument("--logx", choices=("auto", "yes", "no"), default="auto",
                    help="logarithmic x axis (default: auto)")
    ps.add_argument("--logy", choices=("auto", "yes", "no"), default="auto",
                    help="logarithmic y axis (default: auto)")
    ps.add_argument("--title", default=None, help="figure title")
    add_plot_outputs(ps)
    ps.set_defaults(func=_cmd_plot_sweep)


def _table_path(text: str) -> str:
    """``--out`` of ``privamp sweep``: a file (not a folder) in an existing folder."""
    writable_file(text, "a table file")
    return text


def _results_table(text: str) -> str:
    """``RESULTS`` of ``privamp plot sweep``: reading it needs pyarrow (the ``dask`` extra),
    said while parsing, with matplotlib's check of ``--out``."""
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise MissingDependencyError("pyarrow", "dask")
    return text


def _grid_error(path: str, exc: InvalidParameterError) -> CliError:
    if exc.parameter == "grid":
        return CliError(f"{exc.render('the grid file')}")
    return CliError(f"{path}: {exc.render(exc.parameter)}")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweep import read_grid

    try:
        configs = read_grid(args.grid)
    except InvalidParameterError as exc:
        raise _grid_error(args.grid, exc) from None
    from ..sweep.runner import run_sweep

    bar = Progress(not args.json)
    try:
        summary = run_sweep(configs, args.out, scheduler=args.scheduler, workers=args.workers,
                            fmt=args.fmt, reuse=args.reuse, chunk_size=args.chunk_size,
                            overwrite=args.overwrite, connect_timeout=args.connect_timeout,
                            progress=bar)
    except KeyboardInterrupt:
        bar.done()
        print(f"privamp sweep: interrupted; the finished rows are kept in {args.out}.partial "
              "(run the same command again to resume)", file=sys.stderr)
        return 130
    finally:
        bar.done()
    if args.json:
        emit_json(summary.as_dict())
        return 0
    where = ("a local Dask cluster" if summary.scheduler == "local"
             else f"the Dask cluster at {summary.scheduler}")
    print(f"wrote {summary.out} ({summary.format}): {summary.rows:,} configurations — "
          f"{summary.computed:,} computed, {summary.resumed:,} already finished, "
          f"{summary.errors:,} with an error")
    if summary.computed:
        print(f"{summary.workers} workers on {where}: {summary.seconds:.1f} s, "
              f"{num(summary.throughput)} configurations/s")
    return 0


def _parse_where(items, columns) -> list[tuple[str, str]]:
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"--where takes COLUMN=VALUE, not {item!r}")
        if name not in columns:
            raise CliError(f"--where: no column {name!r} (columns: "
                           f"{', '.join(columns)})")
        out.append((name, value))
    return out


def _matches(value, text: str) -> bool:
    if value is None:
        return text.lower() in ("", "none", "null")
    if isinstance(value, float):
        try:
            want = float(text)
        except ValueError:
            return False
        return math.isclose(value, want, rel_tol=1e-9, abs_tol=0.0)
    if isinstance(value, int):
        try:
            return value == int(float(text))
        except ValueError:
            return False
    return str(value) == text


def _cmd_plot_sweep(args: argparse.Namespace) -> int:
    from ..plots import save_figure
    from ..plots.sweep import plot_sweep
    from ..sweep.table import read_table

    table = read_table(args.results, args.fmt)
    columns = table.column_names
    for opt, name in (("--x", args.x), ("--y", args.y), *(("--hue", h) for h in args.hue)):
        if name not in columns:
            raise CliError(f"{opt}: no column {name!r} (columns: "
                           f"{', '.join(columns)})")
    where = _parse_where(args.where, columns)
    rows = [r for r in table.to_pylist()
            if all(_matches(r[name], value) for name, value in where)]
    failed = sum(r["error"] is not None for r in rows)
    rows = [r for r in rows if r["error"] is None and r[args.x] is not None
            and r[args.y] is not None]
    if not rows:
        raise CliError("no rows left to plot (check --where, and "
                       f"the error column: {failed} rows failed)")
    # one y per (hue, x): name the inputs that still vary
    fixed = {args.x, args.y, *args.hue}
    meta = {"id", "key", "seconds", "error", "epsilon_lower", "delta_lower", "reuse"}
    answer: set[str] = set()  # the columns the queries filled in (not inputs)
    for r in rows:
        answer |= {"epsilon": {"epsilon"}, "delta": {"delta"}}.get(r["query"],
                                                                    {"epsilon", r["calibrate"]})
    seen: dict[tuple, dict] = {}
    varying: set[str] = set()
    for r in rows:
        mark = (tuple(r[h] for h in args.hue), r[args.x])
        if mark in seen:
            other = seen[mark]
            varying |= {c for c in columns if c not in fixed | meta | answer
                        and r[c] != other[c]}
            if not varying:
                varying.add("(duplicate rows)")
        seen[mark] = r
    if varying:
        raise CliError(f"several rows per line and x value: "
                       f"{', '.join(sorted(varying))} vary; add them to --hue or fix them "
                       "with --where")
    flag = {"auto": None, "yes": True, "no": False}
    fig = plot_sweep(rows, x=args.x, y=args.y, hue=args.hue, logx=flag[args.logx],
                     logy=flag[args.logy], title=args.title, filters=where)
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out, "rows": len(rows), "failed_rows": failed,
                   "lines": len({tuple(r[h] for h in args.hue) for r in rows})})
    else:
        note = f" ({failed} rows with an error left out)" if failed else ""
        print(f"wrote {args.out}: {len(rows)} rows{note}")
    return 0
