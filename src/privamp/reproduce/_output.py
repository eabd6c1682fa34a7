"""Files of an artifact and the cell-by-cell comparison with a paper's printed values.

Every writer names its files after the artifact being built (:attr:`Context.artifact`).

* :func:`write_panels` — the PNG of a figure (drawn by :func:`privamp.plots.plot_panels`) and
  the CSV of exactly the numbers drawn (long format: one row per point of every curve).
* :func:`write_table` — the CSV of a regenerated table; :func:`write_comparison` — the
  comparison CSV (paper, ours, status per cell); :func:`write_table_png` — the table as an image,
  each cell coloured by its comparison status.
* :func:`compare_printed` — does our value round to the printed one?
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..plots import Panel, plot_panels, save_figure
from ._registry import Cell, Context

__all__ = [
    "compare_printed",
    "fmt",
    "printed_unit",
    "write_comparison",
    "write_panels",
    "write_table",
    "write_table_png",
]

_SCI = re.compile(r"^([+-]?[0-9]*\.?[0-9]+)[eE]([+-]?\d+)$")


def printed_unit(text: str) -> float:
    """One unit of the last printed digit: ``"0.038"`` → 1e-3, ``"7.47e-6"`` → 1e-8,
    ``"2"`` → 1."""
    text = text.strip()
    m = _SCI.match(text)
    mantissa, exponent = (m.group(1), int(m.group(2))) if m else (text, 0)
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 10.0 ** (exponent - decimals)


def compare_printed(value: float, printed: str, *, erratum: str | None = None,
                    tolerance: float | None = None) -> tuple[str, str]:
    """Status of our ``value`` against a ``printed`` number (a string as the paper prints it).

    * ``agrees``: ``value`` rounds to ``printed`` (within half a unit of the last digit; a
      printed ``0`` needs an exact 0);
    * ``rounding``: within one and a half units (the paper rounded differently or truncated);
    * ``monte-carlo``: when a ``tolerance`` is given (a Monte-Carlo statistic), within it;
    * ``erratum``: neither, and the cell is a documented erratum (``erratum`` names it);
    * ``disagrees``: otherwise.

    Returns ``(status, note)``.

    >>> compare_printed(7.47262e-6, "7.47e-6")
    ('agrees', '')
    >>> compare_printed(0.8991, "0.898")[0], compare_printed(0.1, "0.123")[0]
    ('rounding', 'disagrees')
    """
    p = float(printed)
    if not math.isfinite(value):
        status = "disagrees"
    elif printed.strip() in ("0", "0.0"):
        status = "agrees" if value == 0.0 else "disagrees"
    else:
        unit = printed_unit(printed)
        gap = abs(value - p)
        if gap <= 0.5 * unit * (1 + 1e-9):
            status = "agrees"
        elif gap <= 1.5 * unit * (1 + 1e-9):
            status = "rounding"
        elif tolerance is not None and gap <= tolerance:
            status = "monte-carlo"
        else:
            status = "disagrees"
    if status == "disagrees" and erratum:
        return "erratum", erratum
    if tolerance is not None and status in ("agrees", "rounding"):
        return "monte-carlo" if status == "rounding" else status, ""
    return status, ""


def fmt(value: Any, digits: int = 4) -> str:
    """A number as text for tables and CSVs (``digits`` significant digits; 0 stays ``0``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    v = float(value)
    if v == 0.0:
        return "0"
    if not math.isfinite(v):
        return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
    return f"{v:.{digits}g}"


def _png(fig, path: Path) -> None:
    save_figure(fig, str(path), dpi=130)


def write_panels(ctx: Context, panels: Sequence[Panel], *,
                 ncols: int | None = None, suptitle: str | None = None,
                 footnote: str | None = None, panel_size=(5.6, 4.2), fig=None) -> list[str]:
    """Draw ``panels`` to ``<id>.png`` (or save ``fig`` if given, drawn elsewhere from the same
    panels) and write every drawn point to ``<id>.csv``; returns the file names."""
    if fig is None:
        fig = plot_panels(panels, ncols=ncols, suptitle=suptitle, footnote=footnote,
                          panel_size=panel_size)
    png = ctx.path(ctx.artifact, ".png")
    _png(fig, png)
    path = ctx.path(ctx.artifact, ".csv")
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["panel", "curve", "x_name", "x", "y_name", "y", "lower", "upper", "note"])
        for panel in panels:
            for curve in panel.curves:
                x = np.atleast_1d(np.asarray(curve.x, dtype=float))
                cols = [np.atleast_1d(np.asarray(c, dtype=float)) if c is not None
                        else None for c in (curve.y, curve.lower, curve.upper)]
                for i, xi in enumerate(x):
                    row = [panel.title, curve.label, panel.xlabel, repr(float(xi)),
                           panel.ylabel]
                    row += ["" if c is None else repr(float(c[i])) for c in cols]
                    row.append(curve.note)
                    w.writerow(row)
    return [png.name, path.name]


def write_table(ctx: Context, header: Sequence[str],
                rows: Sequence[Sequence[Any]], suffix: str = ".csv") -> str:
    """Write a regenerated table (numbers at full precision) to ``<id><suffix>``."""
    path = ctx.path(ctx.artifact, suffix)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in rows:
            w.writerow([repr(float(v)) if isinstance(v, float | np.floating) else v
                        for v in row])
    return path.name


def write_comparison(ctx: Context, cells: Sequence[Cell]) -> str:
    """The cell-by-cell comparison with the paper, ``<id>-comparison.csv``."""
    path = ctx.path(ctx.artifact, "-comparison.csv")
    # a "certified" column (true: a guarantee, false: an estimate) where some cell says which
    flagged = any(c.certified is not None for c in cells)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["row", "column", "quantity", "paper", "ours", "status", "note"]
                   + (["certified"] if flagged else []))
        for c in cells:
            ours = repr(float(c.ours)) if isinstance(c.ours, float | np.floating) else c.ours
            row = [c.row, c.column, c.quantity, c.paper, ours, c.status, c.note]
            if flagged:
                row.append("" if c.certified is None else str(c.certified).lower())
            w.writerow(row)
    return path.name


def write_table_png(ctx: Context, title: str, columns: Sequence[str],
                    rows: Sequence[tuple[str, Sequence[str], Sequence[str | None]]], *,
                    footnote: str | None = None, col_width: float = 1.25,
                    first_width: float = 1.9) -> str:
    """The regenerated table as an image: ``rows`` are ``(label, texts, statuses)``; a status
    colours its cell (green agrees, yellow rounding / Monte Carlo, orange erratum, grey not
    compared, red disagrees, white: no printed value)."""
    from ..plots.reproduce import plot_table

    fig = plot_table(title, columns, rows, footnote=footnote, col_width=col_width,
                     first_width=first_width)
    png = ctx.path(ctx.artifact, ".png")
    _png(fig, png)
    return png.name
