"""The drawing machinery shared by every plot of privamp: the matplotlib loader, labelled
:class:`Curve` objects on :class:`Panel` axes drawn in one style, and figure notes.

Internal to :mod:`privamp.plots`, which re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, MissingDependencyError


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (files only), or :class:`MissingDependencyError`
    naming the ``plots`` extra."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError("matplotlib", "plots") from exc
    return plt


def save_figure(fig, path: str, *, dpi: int = 150) -> None:
    """Write a figure to ``path`` (format from the extension) and close it.

    The legend policy is applied first (:func:`place_legends`): a legend that covers data is
    moved to the right of its axes."""
    plt = pyplot()
    place_legends(fig)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# panels of labelled curves: the shared drawing code of ``privamp plot ...`` and
# ``privamp reproduce`` (one style for every figure)
# ---------------------------------------------------------------------------------------------

#: Line styles cycled with the colours, so that coinciding curves stay distinguishable.
LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)))


@dataclass
class Curve:
    """One labelled curve of a :class:`Panel`: ``y`` against ``x``.

    ``lower``/``upper`` draw a shaded band (a certified bracket, say) around or instead of the
    line; ``y`` may then be ``None``. ``style`` is a matplotlib line style (``None``: cycled),
    ``marker`` a marker (``kind="points"`` draws markers only). ``group`` names curves that share
    a colour (e.g. the same θ drawn for two schemes). ``note`` is written to the CSV only.
    """

    label: str
    x: Any
    y: Any = None
    lower: Any = None
    upper: Any = None
    style: Any = None
    marker: str | None = None
    color: str | None = None
    kind: str = "line"
    group: str | None = None
    linewidth: float = 1.8
    note: str = ""


@dataclass
class Panel:
    """One set of axes: curves, axis labels (with units) and scales.

    ``quadrants=True`` shades the four regions of an aligned privacy profile (MUST Figure 3:
    x = ε'/ε against 1, y = δ' − δ against 0). ``hlines``/``vlines`` are reference lines
    ``(value, label)``; ``text`` is a note drawn in the panel's corner. ``legend`` is a
    matplotlib location or ``"outside"`` (right of the axes).
    """

    title: str
    xlabel: str
    ylabel: str
    curves: list[Curve] = field(default_factory=list)
    xscale: str = "linear"
    yscale: str = "linear"
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    hlines: list[tuple[float, str]] = field(default_factory=list)
    vlines: list[tuple[float, str]] = field(default_factory=list)
    quadrants: bool = False
    text: str | None = None
    legend: str = "best"
    linthresh: float = 1e-3


_QUADRANTS = (  # (x-range, y-range, label, colour) of MUST Figure 3
    ((-np.inf, 1.0), (-np.inf, 0.0), "strong", "#2ca02c"),
    ((-np.inf, 1.0), (0.0, np.inf), "weak, type I", "#e6550d"),
    ((1.0, np.inf), (-np.inf, 0.0), "weak, type II", "#b8860b"),
    ((1.0, np.inf), (0.0, np.inf), "dilution", "#d62728"),
)


def wrap_note(text: str, width_inches: float, font_inches: float = 0.068) -> str:
    """Wrap each paragraph (line) of a figure note to the figure's width."""
    import textwrap

    chars = max(40, int(width_inches / font_inches))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def note_height(note: str | None, pad: float = 0.1) -> float:
    """The height in inches that a (wrapped) note under the panels takes, plus ``pad``; 0
    without a note."""
    return 0.2 * (note.count("\n") + 1) + pad if note else 0.0


def write_note(fig, note: str) -> None:
    """Write a (wrapped) note at the bottom left of a constrained-layout figure and keep the
    axes above it."""
    fig.text(0.01, 0.005, note, ha="left", va="bottom", fontsize="small", color="0.25")
    bottom = note_height(note, 0.08) / fig.get_figheight()
    fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))


def _plain_minor_labels(ax) -> None:
    """On a log axis spanning about a decade or less, matplotlib labels the minor ticks in
    scientific notation ("2×10⁰, 3×10⁰, 4×10⁰, 6×10⁰": crowded). Where the axis lies within
    [1e-3, 1e5] those labels are written plainly ("2, 3, 4, 6"); elsewhere (tiny or huge values)
    the default stays."""
    from matplotlib.ticker import LogFormatter

    for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() != "log":
            continue
        lo, hi = sorted(lim)
        if lo >= 1e-3 and hi <= 1e5:
            axis.set_minor_formatter(LogFormatter(labelOnlyBase=False))


def _draw_quadrants(ax) -> None:
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    pad_x, pad_y = 0.02 * (x1 - x0), 0.03 * (y1 - y0)
    for (xa, xb), (ya, yb), label, colour in _QUADRANTS:
        lo_x, hi_x = max(xa, x0), min(xb, x1)
        lo_y, hi_y = max(ya, y0), min(yb, y1)
        if lo_x >= hi_x or lo_y >= hi_y:
            continue
        ax.axvspan(lo_x, hi_x, ymin=(lo_y - y0) / (y1 - y0), ymax=(hi_y - y0) / (y1 - y0),
                   color=colour, alpha=0.08, linewidth=0, zorder=0)
        left = label == "weak, type I"  # the other labels go to the right edge
        top = ya >= 0.0   # δ' − δ > 0: label at the top, else at the bottom
        ax.text(lo_x + pad_x if left else hi_x - pad_x, hi_y - pad_y if top else lo_y + pad_y,
                label, color=colour, fontsize="small", ha="left" if left else "right",
                va="top" if top else "bottom", fontweight="bold", alpha=0.9)
    ax.axhline(0.0, color="0.4", linewidth=0.8)
    if x0 < 1.0 < x1:
        ax.axvline(1.0, color="0.4", linewidth=0.8)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)


def _positive(values: np.ndarray, log: bool) -> np.ndarray:
    return np.where(values > 0, values, np.nan) if log else values


def draw_panel(ax, panel: Panel) -> None:
    """Draw one :class:`Panel` on matplotlib axes ``ax`` (the shared style)."""
    logx, logy = panel.xscale == "log", panel.yscale == "log"
    colours: dict[str, Any] = {}
    in_group: dict[str, int] = {}
    auto = 0  # curves without an explicit colour: they take the colour cycle and the styles
    for curve in panel.curves:
        key = curve.group if curve.group is not None else curve.label
        if curve.color is not None:
            colour, rank = curve.color, 0
        else:
            if key not in colours:
                colours[key] = f"C{len(colours) % 10}"
            colour = colours[key]
            # without groups every curve gets its own style; in a group, its rank in the group
            rank = in_group.get(key, -1) + 1 if curve.group is not None else auto
            in_group[key] = rank
            auto += 1
        style = curve.style if curve.style is not None else LINE_STYLES[rank % len(LINE_STYLES)]
        x = np.asarray(curve.x, dtype=float)
        if curve.lower is not None and curve.upper is not None:
            lo = _positive(np.asarray(curve.lower, dtype=float), logy)
            hi = _positive(np.asarray(curve.upper, dtype=float), logy)
            ax.fill_between(x, lo, hi, color=colour, alpha=0.25, linewidth=0,
                            label=None if curve.y is not None else curve.label)
        if curve.y is None:
            continue
        y = _positive(np.asarray(curve.y, dtype=float), logy)
        if curve.kind == "points":
            ax.plot(x, y, linestyle="none", marker=curve.marker or "o", color=colour,
                    label=curve.label, markersize=5)
        else:
            ax.plot(x, y, linestyle=style, marker=curve.marker, color=colour,
                    label=curve.label, linewidth=curve.linewidth, markersize=4)
    for value, label in panel.hlines:
        ax.axhline(value, color="0.35", linestyle=":", linewidth=1.0, label=label or None)
    for value, label in panel.vlines:
        ax.axvline(value, color="0.35", linestyle=":", linewidth=1.0, label=label or None)
    for axis, scale in (("x", panel.xscale), ("y", panel.yscale)):
        if scale == "symlog":
            getattr(ax, f"set_{axis}scale")("symlog", linthresh=panel.linthresh)
        elif scale == "log":
            getattr(ax, f"set_{axis}scale")("log")
    if panel.xlim is not None:
        ax.set_xlim(*panel.xlim)
    if panel.ylim is not None:
        ax.set_ylim(*panel.ylim)
    _plain_minor_labels(ax)
    if panel.quadrants:
        _draw_quadrants(ax)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    if logy or logx:
        ax.grid(True, which="minor", alpha=0.08)
    if panel.text:
        ax.text(0.98, 0.02, panel.text, transform=ax.transAxes, ha="right", va="bottom",
                fontsize="x-small", color="0.3",
                bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.8,
                      "edgecolor": "0.8"})
    if ax.get_legend_handles_labels()[0]:
        if panel.legend == "outside":  # to the right of the axes (many curves)
            ax.legend(frameon=False, fontsize="small", loc="upper left",
                      bbox_to_anchor=(1.01, 1.0))
        else:
            ax.legend(frameon=False, fontsize="small", loc=panel.legend)


def finish_grid(fig, axes, used: int, suptitle: str | None, footnote: str | None):
    """Hide the axes of a grid beyond the first ``used``, add the title and the (wrapped) note;
    returns the figure."""
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    if suptitle:
        fig.suptitle(suptitle)
    if footnote:
        write_note(fig, footnote)
    return fig


def plot_panels(panels: Sequence[Panel], *, ncols: int | None = None,
                suptitle: str | None = None, footnote: str | None = None,
                panel_size: tuple[float, float] = (5.6, 4.2)):
    """Draw panels side by side (``ncols`` per row, default all in one row up to 3); returns the
    figure. ``footnote`` (parameters, what was chosen) is written under the panels.

    >>> fig = plot_panels([Panel("t", "x", "y", [Curve("a", [0, 1], [1, 2])])])
    >>> [ax.get_title() for ax in fig.axes]
    ['t']
    """
    plt = pyplot()
    n = len(panels)
    if n == 0:
        raise InvalidParameterError("panels", "at least one Panel", panels)
    ncols = min(n, 3) if ncols is None else ncols
    nrows = -(-n // ncols)
    if footnote:
        footnote = wrap_note(footnote, panel_size[0] * ncols)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(panel_size[0] * ncols,
                                      panel_size[1] * nrows + note_height(footnote)))
    for ax, panel in zip(axes.flat, panels, strict=False):
        draw_panel(ax, panel)
    return finish_grid(fig, axes, n, suptitle, footnote)


# ---------------------------------------------------------------------------------------------
# the legend policy: a legend never covers data
# ---------------------------------------------------------------------------------------------


class LegendOverlapError(AssertionError):
    """A legend still covers data after it was moved out of its axes (an internal error)."""


def _renderer(fig):
    """Lay the figure out (constrained layout included) and return its renderer."""
    if not hasattr(fig.canvas, "get_renderer"):  # a closed figure: draw it with Agg
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _line_hits(line, box) -> bool:
    """Does the drawn line (its segments, or its markers) meet the display box ``box``?"""
    from matplotlib.path import Path as MplPath

    xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
    if xy.size == 0:
        return False
    marker = line.get_marker()
    if marker not in (None, "None", "none", "", " ") and line.get_markersize() > 0:
        pad = line.get_markersize() * line.figure.dpi / 72.0 / 2.0
        near = box.expanded(1.0, 1.0)
        x0, y0, x1, y1 = near.x0 - pad, near.y0 - pad, near.x1 + pad, near.y1 + pad
        ok = np.isfinite(xy).all(axis=1)
        pts = xy[ok]
        if np.any((pts[:, 0] >= x0) & (pts[:, 0] <= x1) & (pts[:, 1] >= y0)
                  & (pts[:, 1] <= y1)):
            return True
    if line.get_linestyle() in ("None", "none", "", " "):
        return False
    # the polyline, broken at non-finite points (matplotlib draws no segment across them)
    finite = np.isfinite(xy).all(axis=1)
    start = 0
    for stop in [*np.flatnonzero(~finite), len(xy)]:
        run = xy[start:stop]
        start = stop + 1
        if len(run) == 1:
            if box.contains(*run[0]):
                return True
        elif len(run) > 1 and MplPath(run).intersects_bbox(box, filled=False):
            return True
    return False


def _collection_hits(coll, box) -> bool:
    """Does a filled collection (``fill_between`` bands) or a scatter meet ``box``?"""
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection

    if isinstance(coll, PathCollection):  # scatter: its markers' centres, padded
        offsets = np.asarray(coll.get_offsets(), dtype=float)
        if offsets.size == 0:
            return False
        xy = coll.get_offset_transform().transform(offsets)
        sizes = coll.get_sizes()
        pad = (np.sqrt(sizes.max()) if sizes.size else 6.0) * coll.figure.dpi / 72.0 / 2.0
        return bool(np.any((xy[:, 0] >= box.x0 - pad) & (xy[:, 0] <= box.x1 + pad)
                           & (xy[:, 1] >= box.y0 - pad) & (xy[:, 1] <= box.y1 + pad)))
    if isinstance(coll, PolyCollection | LineCollection):
        filled = not isinstance(coll, LineCollection)
        transform = coll.get_transform()
        for path in coll.get_paths():
            shown = transform.transform_path(path).cleaned(remove_nans=True)
            if len(shown.vertices) and shown.intersects_bbox(box, filled=filled):
                return True
    return False  # other collections (contours, images) carry no legend here


def legend_covers_data(ax, renderer=None) -> bool:
    """Whether the legend of ``ax`` meets a data artist of ``ax``: a line (reference lines
    included: ``axhline``/``axvline``), a filled band (``fill_between``) or a scatter.
    Background shading (``axvspan`` patches) and texts do not count. Lays the figure out first
    unless a ``renderer`` of the finished layout is given."""
    legend = ax.get_legend()
    if legend is None or not legend.get_visible():
        return False
    if renderer is None:
        renderer = _renderer(ax.figure)
    box = legend.get_window_extent(renderer)
    for line in ax.get_lines():
        if line.get_visible() and _line_hits(line, box):
            return True
    return any(coll.get_visible() and _collection_hits(coll, box) for coll in ax.collections)


def _move_outside(ax, renderer) -> float:
    """Move the legend of ``ax`` to the right of the axes; returns its width in inches."""
    legend = ax.get_legend()
    legend.set_loc("upper left")
    legend.set_bbox_to_anchor((1.01, 1.0), transform=ax.transAxes)
    return legend.get_window_extent(renderer).width / ax.figure.dpi


def place_legends(fig, *, strict: bool | None = None) -> list:
    """Apply the legend policy to ``fig``: a legend never covers data.

    After the layout is final, each axes legend whose box meets a data artist of its axes
    (:func:`legend_covers_data`) is moved to the right of the axes (``loc="upper left"``,
    ``bbox_to_anchor=(1.01, 1)``) and the figure is widened by the legend's width, so that the
    axes keep their size; legends at free places stay where they were asked for. Returns the
    axes whose legend was moved. :func:`save_figure` applies it to every figure of privamp;
    call it before saving a figure yourself.

    A legend still covering data after the move is an internal error: ``strict`` (default:
    under pytest) raises :class:`LegendOverlapError`, otherwise a warning is issued.
    """
    axes = [ax for ax in fig.axes if ax.get_legend() is not None]
    if not axes:
        return []
    renderer = _renderer(fig)
    moved = [ax for ax in axes if legend_covers_data(ax, renderer)]
    if not moved:
        return []
    widen = sum(_move_outside(ax, renderer) for ax in moved)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width + widen + 0.15 * len(moved), height, forward=False)
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    renderer = _renderer(fig)
    still = [ax for ax in moved if legend_covers_data(ax, renderer)]
    if still:
        import os
        import warnings

        message = ("legend still covers data after it was moved outside the axes: "
                   + ", ".join(repr(ax.get_title()) for ax in still))
        if strict if strict is not None else "PYTEST_CURRENT_TEST" in os.environ:
            raise LegendOverlapError(message)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    return moved
