"""Plots of computed privacy objects (matplotlib, behind the ``plots`` extra).

This module draws what the library computed; it never computes privacy itself beyond evaluating
the objects it is given on a grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, MissingDependencyError
from ..profiles import PrivacyProfile

__all__ = [
    "Curve",
    "Panel",
    "aligned_panel",
    "draw_panel",
    "plot_composition",
    "plot_panels",
    "plot_profiles",
    "save_figure",
]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError("matplotlib", "plots") from exc
    return plt


def plot_profiles(
    curves: Sequence[tuple[str, PrivacyProfile]],
    eps: Any,
    *,
    log_scale: bool = True,
    title: str | None = None,
    ax: Any = None,
):
    """Plot δ(ε) for several labelled profiles on one set of axes; returns the figure.

    With ``log_scale`` the δ axis is logarithmic (profiles span many decades); points where
    δ = 0 are not drawn, and a profile that reaches 0 gets a marker at its pure ε. When every
    δ is 0 (a perfectly private mechanism) the axis is linear instead.
    """
    plt = _pyplot()
    eps = np.asarray(eps, dtype=float)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.0, 4.5), layout="constrained")
    else:
        fig = ax.figure
    styles = ("-", "--", "-.", ":")  # coinciding curves stay visible
    deltas = [np.asarray(profile.delta(eps), dtype=float) for _, profile in curves]
    log_scale = log_scale and any(np.any(d > 0) for d in deltas)  # nothing to log-scale
    for i, ((label, profile), delta) in enumerate(zip(curves, deltas, strict=True)):
        shown = np.where(delta > 0, delta, np.nan) if log_scale else delta
        (line,) = ax.plot(eps, shown, label=label, linewidth=1.8,
                          linestyle=styles[(i // 10 + i) % len(styles)] if i else "-")
        pure = profile.pure_epsilon
        if np.isfinite(pure) and eps.min() <= pure <= eps.max() and log_scale:
            ax.axvline(pure, color=line.get_color(), linestyle=":", linewidth=1.0)
    if log_scale:
        ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    return fig


def plot_composition(curves: Sequence[dict[str, Any]], *, delta: float, title: str = "",
                     caption: str = "", yscale: str = "auto"):
    """ε against the number of steps: ``curves`` are dicts with ``label``, ``steps``,
    ``epsilon`` (certified upper ends) and optionally ``epsilon_lower`` and ``accountant``
    (``"rdp"`` curves are dashed). ``caption`` (what is compared, under which relation and
    sensitivity) is written under the axes; ``yscale`` is ``"linear"``, ``"log"`` or ``"auto"``
    (log when the certified ε span a factor 20 or more). Returns the figure."""
    plt = _pyplot()
    width = 9.5  # the legend goes right of the axes: the curves span the whole height
    if caption:
        caption = wrap_note(caption, width)
    lines = caption.count("\n") + 1 if caption else 0
    fig, ax = plt.subplots(figsize=(width, 4.5 + 0.2 * lines), layout="constrained")
    tops = []
    for c in curves:
        style = "--" if c.get("accountant") == "rdp" else "-"
        line, = ax.plot(c["steps"], c["epsilon"], style, marker="o", ms=3, label=c["label"])
        tops += [float(v) for v in c["epsilon"] if v is not None]
        lower = c.get("epsilon_lower")
        if lower is not None and all(v is not None for v in lower):
            ax.fill_between(c["steps"], lower, c["epsilon"], color=line.get_color(), alpha=0.25)
    ax.set_xscale("log")
    positive = [v for v in tops if v > 0 and np.isfinite(v)]
    if yscale == "log" or (yscale == "auto" and positive
                           and max(positive) >= 20 * min(positive)):
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")  # ticks at 1, 2, 5 × 10^k, written plainly (0.5, 2, 20)
        ax.yaxis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("steps")
    ax.set_ylabel(f"certified ε at δ = {delta:g}")
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if caption:
        fig.text(0.01, 0.005, caption, ha="left", va="bottom", fontsize="small", color="0.25")
        bottom = (0.2 * lines + 0.08) / fig.get_figheight()
        fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))
    return fig


def save_figure(fig, path: str, *, dpi: int = 150) -> None:
    """Write a figure to ``path`` (format from the extension) and close it."""
    plt = _pyplot()
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


def plot_panels(panels: Sequence[Panel], *, ncols: int | None = None,
                suptitle: str | None = None, footnote: str | None = None,
                panel_size: tuple[float, float] = (5.6, 4.2)):
    """Draw panels side by side (``ncols`` per row, default all in one row up to 3); returns the
    figure. ``footnote`` (parameters, what was chosen) is written under the panels.

    >>> fig = plot_panels([Panel("t", "x", "y", [Curve("a", [0, 1], [1, 2])])])
    >>> [ax.get_title() for ax in fig.axes]
    ['t']
    """
    plt = _pyplot()
    n = len(panels)
    if n == 0:
        raise InvalidParameterError("panels", "at least one Panel", panels)
    ncols = min(n, 3) if ncols is None else ncols
    nrows = -(-n // ncols)
    if footnote:
        footnote = wrap_note(footnote, panel_size[0] * ncols)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(panel_size[0] * ncols, panel_size[1] * nrows
                                      + (0.2 * (footnote.count("\n") + 1) + 0.1
                                         if footnote else 0.0)))
    for ax, panel in zip(axes.flat, panels, strict=False):
        draw_panel(ax, panel)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if suptitle:
        fig.suptitle(suptitle)
    if footnote:
        lines = footnote.count("\n") + 1
        height = fig.get_figheight()
        fig.text(0.01, 0.005, footnote, ha="left", va="bottom", fontsize="small",
                 color="0.25")
        bottom = (0.2 * lines + 0.08) / height
        fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))
    return fig


def aligned_panel(aligned: dict[str, Any], title: str, *, xlim=None, ylim=None,
                  legend: str = "upper right") -> Panel:
    """A panel of aligned privacy profiles (MUST Figure 4): for each label, the curve
    ``(ε'/ε, δ' − δ)`` of an :class:`~privamp.amplification.tightness.AlignedProfile`, over the
    shaded regions of Definition 5 (strong, weak type I/II, dilution)."""
    curves = [Curve(label, a.eps_ratio, a.delta_difference) for label, a in aligned.items()]
    if ylim is None:
        top = max(float(np.max(np.abs(a.delta_difference))) for a in aligned.values())
        ylim = (-1.1 * top, 1.1 * top) if top > 0 else (-1.0, 1.0)
    if xlim is None:
        lo = min(float(np.min(a.eps_ratio)) for a in aligned.values())
        hi = max(float(np.max(a.eps_ratio)) for a in aligned.values())
        pad = 0.05 * max(hi - lo, 1e-3)
        xlim = (max(0.0, lo - pad), hi + pad)
    return Panel(title, "ε'/ε  (amplified over base ε)", "δ'(ε') − δ(ε)", curves, xlim=xlim,
                 ylim=ylim, quadrants=True, legend=legend)
