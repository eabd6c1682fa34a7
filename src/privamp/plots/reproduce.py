"""Figure layouts of ``privamp reproduce`` that are not panels of curves: tables rendered as
images (cells coloured by their comparison with the paper), contour grids and 3-D surfaces
(MUST Figures 5 and S1).

Like :mod:`privamp.plots` (whose style it shares), this module only draws what
:mod:`privamp.reproduce` computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._figure import finish_grid, note_height, pyplot, wrap_note

__all__ = ["STATUS_COLOURS", "plot_contours", "plot_lattice", "plot_surfaces", "plot_table"]

#: Cell colours by comparison status (colour-blind friendly, light enough for black text).
STATUS_COLOURS = {
    "agrees": "#c7e9c0",
    "rounding": "#fff3b0",
    "monte-carlo": "#fff3b0",
    "erratum": "#fdae6b",
    "not-compared": "#e0e0e0",
    "disagrees": "#fb6a4a",
    None: "#ffffff",
}

_LEGEND = (("agrees", "agrees with the print"), ("rounding", "last digit / Monte Carlo"),
           ("erratum", "erratum (paper wrong)"), ("not-compared", "not compared"),
           ("disagrees", "disagrees"))


def plot_table(title: str, columns: Sequence[str],
               rows: Sequence[tuple[str, Sequence[str], Sequence[str | None]]], *,
               footnote: str | None = None, col_width: float = 1.25,
               first_width: float = 1.9):
    """A table as a figure. ``rows``: ``(label, cell texts, cell statuses)``; a row whose label
    starts with ``"§"`` is a section heading spanning the table. Widths are in inches. Returns
    the figure."""
    plt = pyplot()
    row_h, title_h, legend_h = 0.3, 0.55, 0.45
    table_w = first_width + col_width * len(columns)
    fig_w = max(table_w + 0.2, 6.5)
    if footnote:
        footnote = wrap_note(footnote, table_w, font_inches=0.058)
    foot_lines = footnote.count("\n") + 1 if footnote else 0
    fig_h = title_h + row_h * (len(rows) + 1) + legend_h + 0.18 * foot_lines + 0.15
    fig = plt.figure(figsize=(fig_w, fig_h))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(0, fig_w)
    ax.set_ylim(0, fig_h)  # axes coordinates in inches, origin bottom left
    x0 = (fig_w - table_w) / 2
    xs = [x0, x0 + first_width] + [x0 + first_width + (i + 1) * col_width
                                   for i in range(len(columns))]
    ax.text(fig_w / 2, fig_h - 0.15, title, ha="center", va="top", fontsize="large",
            fontweight="bold")

    def cell(x_left, x_right, y_top, text, colour, bold=False, align="center"):
        ax.add_patch(plt.Rectangle((x_left, y_top - row_h), x_right - x_left, row_h,
                                   facecolor=colour, edgecolor="0.75", linewidth=0.5))
        xt = (x_left + x_right) / 2 if align == "center" else x_left + 0.06
        ax.text(xt, y_top - row_h / 2, text, ha=align, va="center", fontsize="small",
                fontweight="bold" if bold else "normal")

    y = fig_h - title_h
    cell(xs[0], xs[1], y, "", "#f0f0f0", bold=True)
    for j, name in enumerate(columns):
        cell(xs[j + 1], xs[j + 2], y, name, "#f0f0f0", bold=True)
    for label, texts, statuses in rows:
        y -= row_h
        if label.startswith("§"):
            cell(xs[0], xs[-1], y, label[1:].strip(), "#dde6f0", bold=True, align="left")
            continue
        cell(xs[0], xs[1], y, label, "#f7f7f7", bold=True, align="left")
        for j, (text, status) in enumerate(zip(texts, statuses, strict=True)):
            cell(xs[j + 1], xs[j + 2], y, text, STATUS_COLOURS.get(status, "#ffffff"))
    # legend of the colours, then the footnote
    y -= row_h + 0.12
    x = x0
    for status, text in _LEGEND:
        ax.add_patch(plt.Rectangle((x, y - 0.18), 0.18, 0.18, facecolor=STATUS_COLOURS[status],
                                   edgecolor="0.6", linewidth=0.5))
        ax.text(x + 0.25, y - 0.09, text, va="center", fontsize="x-small")
        x += 0.45 + 0.065 * len(text)
    if footnote:
        ax.text(x0, y - legend_h + 0.05, footnote, ha="left", va="top", fontsize="x-small",
                color="0.25")
    return fig


def plot_contours(grids: Sequence[dict[str, Any]], *, ncols: int = 3,
                  suptitle: str | None = None, footnote: str | None = None):
    """Filled contour panels with labelled contour lines. Each grid is a dict with ``x``,
    ``y`` (1-D), ``z`` (``len(y) × len(x)``), ``title``, ``xlabel``, ``ylabel``, ``zlabel``.
    Returns the figure."""
    plt = pyplot()
    n = len(grids)
    nrows = -(-n // ncols)
    if footnote:
        footnote = wrap_note(footnote, 5.0 * ncols)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(5.0 * ncols, 4.2 * nrows + note_height(footnote)))
    for ax, g in zip(axes.flat, grids, strict=False):
        x, y, z = (np.asarray(g[k], dtype=float) for k in ("x", "y", "z"))
        filled = ax.contourf(x, y, z, levels=14, cmap="viridis")
        lines = ax.contour(x, y, z, levels=7, colors="white", linewidths=0.6)
        ax.clabel(lines, fontsize="x-small", fmt=lambda v: f"{v:.3g}")
        bar = fig.colorbar(filled, ax=ax, shrink=0.9)
        bar.set_label(g["zlabel"])
        ax.set_xlabel(g["xlabel"])
        ax.set_ylabel(g["ylabel"])
        ax.set_title(g["title"], fontsize="medium")
    return finish_grid(fig, axes, n, suptitle, footnote)


def plot_surfaces(grids: Sequence[dict[str, Any]], *, ncols: int = 2,
                  suptitle: str | None = None, footnote: str | None = None):
    """3-D surface panels (same grid dicts as :func:`plot_contours`). Returns the figure."""
    plt = pyplot()
    n = len(grids)
    nrows = -(-n // ncols)
    if footnote:
        footnote = wrap_note(footnote, 5.6 * ncols)
    extra = note_height(footnote, 0.2)
    fig = plt.figure(figsize=(5.6 * ncols, 4.6 * nrows + extra))
    bottom = extra / fig.get_figheight()
    for i, g in enumerate(grids):
        ax = fig.add_subplot(nrows, ncols, i + 1, projection="3d")
        x, y, z = (np.asarray(g[k], dtype=float) for k in ("x", "y", "z"))
        xx, yy = np.meshgrid(x, y)
        ax.plot_surface(xx, yy, z, cmap="viridis", linewidth=0, antialiased=True)
        ax.set_xlabel(g["xlabel"], labelpad=6)
        ax.set_ylabel(g["ylabel"], labelpad=6)
        ax.set_zlabel(g["zlabel"], labelpad=10)
        ax.tick_params(labelsize="x-small")
        ax.set_title(g["title"], fontsize="medium")
        ax.view_init(elev=25, azim=-125)
    fig.subplots_adjust(left=0.02, right=0.95, bottom=bottom + 0.03, top=0.93, wspace=0.1,
                        hspace=0.15)
    if suptitle:
        fig.suptitle(suptitle)
    if footnote:
        fig.text(0.01, 0.005, footnote, ha="left", va="bottom", fontsize="small", color="0.25")
    return fig


def plot_lattice(labels: Sequence[str], edges: Sequence[tuple[int, int, str]], *,
                 title: str, footnote: str | None = None):
    """A vertical implication diagram: ``labels`` top to bottom, ``edges`` ``(i, j, text)`` an
    arrow from node i to node j annotated with ``text``. Returns the figure."""
    plt = pyplot()
    n = len(labels)
    fig_w = 7.5
    if footnote:
        footnote = wrap_note(footnote, fig_w)
    foot_h = note_height(footnote, 0.2)
    fig_h = 1.1 + 1.2 * (n - 1) + 0.6 + foot_h
    fig = plt.figure(figsize=(fig_w, fig_h))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(0, fig_w)
    ax.set_ylim(0, fig_h)
    ax.text(fig_w / 2, fig_h - 0.25, title, ha="center", va="top", fontsize="large",
            fontweight="bold")
    ys = [fig_h - 1.1 - 1.2 * i for i in range(n)]
    x = fig_w / 2 - 0.8
    for label, y in zip(labels, ys, strict=True):
        ax.text(x, y, label, ha="center", va="center", fontsize="large",
                bbox={"boxstyle": "round,pad=0.5", "facecolor": "#dde6f0", "edgecolor": "0.4"})
    for i, j, text in edges:
        ax.annotate("", xy=(x, ys[j] + 0.3), xytext=(x, ys[i] - 0.3),
                    arrowprops={"arrowstyle": "-|>", "color": "0.2", "linewidth": 1.5})
        ax.text(x + 0.25, (ys[i] + ys[j]) / 2, f"⇒  verified on {text}", ha="left",
                va="center", fontsize="small", color="#2ca02c")
    if footnote:
        ax.text(0.15, 0.1, footnote, ha="left", va="bottom", fontsize="small", color="0.25")
    return fig
