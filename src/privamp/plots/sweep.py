"""Plots of sweep results: one column against another, one line per value of the hue columns.

Like :mod:`privamp.plots`, this module draws what was computed (rows of a result table,
:mod:`privamp.sweep.table`); it computes no privacy itself. The usual views:

* ε against the number of steps per sampling scheme: ``x="steps", y="epsilon",
  hue=["sampling"]`` (the band between ``epsilon_lower`` and ``epsilon`` is shaded: the
  certified bracket);
* the noise needed per target ε: ``x="target_epsilon", y="sigma", hue=["sampling"]`` (rows of
  ``query = "calibrate"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._figure import pyplot

__all__ = ["plot_sweep"]

_LABELS = {"epsilon": "certified ε", "delta": "certified δ", "steps": "steps",
           "target_epsilon": "target ε", "sigma": "σ", "rate": "sampling rate"}


def _auto_log(values: np.ndarray) -> bool:
    v = values[np.isfinite(values)]
    return bool(v.size and np.all(v > 0) and v.max() / v.min() >= 50)


def plot_sweep(rows: Sequence[dict[str, Any]], *, x: str, y: str, hue: Sequence[str] = (),
               logx: bool | None = None, logy: bool | None = None, title: str | None = None,
               band: bool = True):
    """Plot ``y`` against ``x`` for result rows (dicts), one line per distinct value of the
    ``hue`` columns; returns the figure. With ``band`` and a ``<y>_lower`` column, the certified
    bracket is shaded. ``logx``/``logy``: log axes (default: when positive values span more
    than a factor 50)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    lines: dict[tuple, list[dict]] = {}
    for row in rows:
        lines.setdefault(tuple(row.get(h) for h in hue), []).append(row)
    xs_all, ys_all = [], []
    for label_values, group in sorted(lines.items(), key=lambda kv: str(kv[0])):
        group = sorted(group, key=lambda r: r[x])
        xs = np.array([r[x] for r in group], dtype=float)
        ys = np.array([np.nan if r[y] is None else r[y] for r in group], dtype=float)
        label = ", ".join(f"{h}={v}" for h, v in zip(hue, label_values, strict=True)) or y
        (line,) = ax.plot(xs, ys, marker="o", ms=3, label=label)
        lower_name = f"{y}_lower"
        if band and all(r.get(lower_name) is not None for r in group):
            lows = np.array([r[lower_name] for r in group], dtype=float)
            ax.fill_between(xs, lows, ys, color=line.get_color(), alpha=0.25, linewidth=0)
        xs_all.append(xs)
        ys_all.append(ys)
    if xs_all and (logx if logx is not None else _auto_log(np.concatenate(xs_all))):
        ax.set_xscale("log")
    if ys_all and (logy if logy is not None else _auto_log(np.concatenate(ys_all))):
        ax.set_yscale("log")
    ax.set_xlabel(_LABELS.get(x, x))
    ax.set_ylabel(_LABELS.get(y, y))
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if hue:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
