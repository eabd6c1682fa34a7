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

__all__ = ["plot_sweep", "sweep_parameters"]

_LABELS = {"epsilon": "certified ε", "delta": "certified δ", "steps": "steps",
           "target_epsilon": "target ε", "sigma": "σ", "rate": "sampling rate"}

#: How a column's value is written in a legend label or the note: its symbol.
_SYMBOLS = {"sigma": "σ", "scale": "b", "rate": "q", "delta": "δ", "epsilon": "ε",
            "target_epsilon": "target ε", "sensitivity": "Δ", "rr_epsilon": "RR ε",
            "rr_p": "RR p"}

#: Columns that are not parameters of a configuration (bookkeeping, or the answer).
_NOT_PARAMETERS = {"id", "key", "seconds", "error", "epsilon_lower", "delta_lower", "reuse"}

#: The order in which the note states the parameters (the others follow, sorted).
_FIRST = ("mechanism", "sigma", "scale", "rr_epsilon", "rr_p", "sensitivity", "relation",
          "sampling", "rate", "n", "m", "b", "t", "k", "max_batch", "steps", "delta",
          "epsilon", "target_epsilon", "backend", "query")


def _auto_log(values: np.ndarray) -> bool:
    v = values[np.isfinite(values)]
    return bool(v.size and np.all(v > 0) and v.max() / v.min() >= 50)


def _value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v).replace("add-remove", "add/remove").replace("substitute", "substitution")


def _term(name: str, v: Any) -> str:
    """``σ = 1``, ``sampling = poisson``, ``relation = add/remove``."""
    return f"{_SYMBOLS.get(name, name)} = {_value(v)}"


def _ordered(names) -> list[str]:
    return sorted(names, key=lambda c: (_FIRST.index(c) if c in _FIRST else len(_FIRST), c))


def sweep_parameters(rows: Sequence[dict[str, Any]], *, x: str, y: str,
                     hue: Sequence[str] = ()) -> tuple[list[str], dict[tuple, list[str]]]:
    """The parameters of a sweep plot: the columns with one value over all ``rows`` (said in
    the note) and, per line (value of the ``hue`` columns), the columns constant along that
    line but not over all rows (added to the line's label, e.g. the relation of each sampling
    scheme). Columns that are empty (``None``) everywhere are left out. Returns ``(note
    terms, {hue values: label terms})``."""
    columns = [c for c in (rows[0] if rows else {}) if c not in _NOT_PARAMETERS
               and c not in (x, y, *hue)]
    lines: dict[tuple, list[dict]] = {}
    for row in rows:
        lines.setdefault(tuple(row.get(h) for h in hue), []).append(row)
    common, per_line = [], {key: [] for key in lines}
    for c in _ordered(columns):
        values = {r.get(c) for r in rows}
        if values == {None}:
            continue
        if len(values) == 1:
            common.append(_term(c, values.pop()))
            continue
        for key, group in lines.items():
            own = {r.get(c) for r in group}
            if len(own) == 1 and own != {None}:
                per_line[key].append(_term(c, own.pop()))
    return common, per_line


def plot_sweep(rows: Sequence[dict[str, Any]], *, x: str, y: str, hue: Sequence[str] = (),
               logx: bool | None = None, logy: bool | None = None, title: str | None = None,
               band: bool = True, filters: Sequence[tuple[str, str]] = ()):
    """Plot ``y`` against ``x`` for result rows (dicts), one line per distinct value of the
    ``hue`` columns; returns the figure. With ``band`` and a ``<y>_lower`` column, the certified
    bracket is shaded. ``logx``/``logy``: log axes (default: when positive values span more
    than a factor 50).

    The figure says its parameters: the title (default: ``y`` against ``x``), and a note under
    the axes with the row filters (``filters``: ``(column, value)`` pairs, as given to
    ``privamp plot sweep --where``) and every column that has one value over the rows
    (mechanism, σ, δ, relation, ...); a column constant along each line but not over all rows
    (the relation of each sampling scheme, say) goes into the lines' labels
    (:func:`sweep_parameters`)."""
    from ._figure import note_height, wrap_note, write_note

    plt = pyplot()
    common, per_line = sweep_parameters(rows, x=x, y=y, hue=hue)
    filtered = {_SYMBOLS.get(c, c) for c, _ in filters}  # said once, with the filters
    common = [t for t in common if t.split(" = ")[0] not in filtered]
    parts = []
    if filters:
        parts.append("Rows with " + ", ".join(_term(c, v) for c, v in filters) + ".")
    if common:
        parts.append("Parameters: " + ", ".join(common) + ".")
    if band and any(r.get(f"{y}_lower") is not None for r in rows):
        parts.append(f"Shaded: the certified bracket [{y}_lower, {y}].")
    width = 7.5
    note = wrap_note(" ".join(parts), width) if parts else ""
    fig, ax = plt.subplots(figsize=(width, 4.6 + note_height(note or None)),
                           layout="constrained")
    lines: dict[tuple, list[dict]] = {}
    for row in rows:
        lines.setdefault(tuple(row.get(h) for h in hue), []).append(row)
    xs_all, ys_all = [], []
    for label_values, group in sorted(lines.items(), key=lambda kv: str(kv[0])):
        group = sorted(group, key=lambda r: r[x])
        xs = np.array([r[x] for r in group], dtype=float)
        ys = np.array([np.nan if r[y] is None else r[y] for r in group], dtype=float)
        terms = [_term(h, v) for h, v in zip(hue, label_values, strict=True)]
        label = ", ".join(terms + per_line.get(label_values, [])) or _LABELS.get(y, y)
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
    ax.set_title(title if title else f"{_LABELS.get(y, y)} against {_LABELS.get(x, x)}"
                 + (f", by {', '.join(_SYMBOLS.get(h, h) for h in hue)}" if hue else ""))
    ax.grid(True, alpha=0.3)
    if hue or any(per_line.values()):
        ax.legend(fontsize=8, frameon=False)
    if note:
        write_note(fig, note)
    return fig
