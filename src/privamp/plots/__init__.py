"""Plots of computed privacy objects (matplotlib, behind the ``plots`` extra).

This package draws what the library computed; it never computes privacy itself beyond evaluating
the objects it is given on a grid. Every figure is drawn in one style by the machinery of
``_figure`` (:class:`Panel` axes of labelled :class:`Curve` objects); the modules ``post``,
``rdp``, ``reproduce`` and ``sweep`` hold the layouts of their feature areas and take the curves
or tables already computed.

Legends never cover data: :func:`save_figure` applies :func:`place_legends` to every figure
(a legend whose box meets a curve, a band, a scatter or a reference line is moved to the right
of its axes, and the figure widened); call :func:`place_legends` yourself before saving a
figure of this package by other means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..profiles import PrivacyProfile
from ._figure import (
    LINE_STYLES as LINE_STYLES,  # re-exported: the style cycle of every figure
)
from ._figure import (
    Curve,
    LegendOverlapError,
    Panel,
    draw_panel,
    legend_covers_data,
    place_legends,
    plot_panels,
    pyplot,
    save_figure,
    wrap_note,
    write_note,
)

__all__ = [
    "Curve",
    "LegendOverlapError",
    "Panel",
    "aligned_panel",
    "draw_panel",
    "legend_covers_data",
    "place_legends",
    "plot_composition",
    "plot_panels",
    "plot_profiles",
    "save_figure",
]


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
    plt = pyplot()
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
    plt = pyplot()
    # the legend goes right of the axes (the curves span the whole height): the figure is as
    # wide as 6.2 inches of axes plus the longest label
    longest = max((len(str(c["label"])) for c in curves), default=0)
    width = max(9.5, 6.2 + 0.062 * longest)
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
        write_note(fig, caption)
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
