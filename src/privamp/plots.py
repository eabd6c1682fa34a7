"""Plots of computed privacy objects (matplotlib, behind the ``plots`` extra).

This module draws what the library computed; it never computes privacy itself beyond evaluating
the objects it is given on a grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import MissingDependencyError
from .profiles import PrivacyProfile

__all__ = ["plot_composition", "plot_profiles", "save_figure"]


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
    δ = 0 are not drawn, and a profile that reaches 0 gets a marker at its pure ε.
    """
    plt = _pyplot()
    eps = np.asarray(eps, dtype=float)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.0, 4.5), layout="constrained")
    else:
        fig = ax.figure
    styles = ("-", "--", "-.", ":")  # coinciding curves stay visible
    for i, (label, profile) in enumerate(curves):
        delta = np.asarray(profile.delta(eps), dtype=float)
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


def plot_composition(curves: Sequence[dict[str, Any]], *, delta: float, title: str = ""):
    """ε against the number of steps: ``curves`` are dicts with ``label``, ``steps``,
    ``epsilon`` (certified upper ends) and optionally ``epsilon_lower`` and ``accountant``
    (``"rdp"`` curves are dashed). Returns the figure."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for c in curves:
        style = "--" if c.get("accountant") == "rdp" else "-"
        line, = ax.plot(c["steps"], c["epsilon"], style, marker="o", ms=3, label=c["label"])
        lower = c.get("epsilon_lower")
        if lower is not None and all(v is not None for v in lower):
            ax.fill_between(c["steps"], lower, c["epsilon"], color=line.get_color(), alpha=0.25)
    ax.set_xscale("log")
    ax.set_xlabel("steps")
    ax.set_ylabel(f"certified ε at δ = {delta:g}")
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def save_figure(fig, path: str, *, dpi: int = 150) -> None:
    """Write a figure to ``path`` (format from the extension) and close it."""
    plt = _pyplot()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
