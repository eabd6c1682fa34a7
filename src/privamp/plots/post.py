"""Plots for amplification by post-processing (matplotlib, behind the ``plots`` extra).

Draws what the library computed (:mod:`privamp.amplification.diffusion`); computes nothing
itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._figure import Curve, Panel, plot_panels

__all__ = ["ou_mse_panels", "plot_ou_mse"]


def ou_mse_panels(over_t: Sequence[tuple[str, Any, Any, float]],
                  at_one: tuple[Any, Any, Any, Any]) -> list[Panel]:
    """The two panels of the Theorem 8 figure (see :func:`plot_ou_mse` for the data)."""
    left = [Curve(label, t, ratio, group=label) for label, t, ratio, _ in over_t]
    left += [Curve(f"{label}: bound at t = 1", [1.0], [bound], kind="points", group=label)
             for label, _, _, bound in over_t]
    eps, ratio, pgm, bound = at_one
    right = [Curve("OU at t = 1", eps, ratio, linewidth=2.4),
             Curve("post-processed Gaussian", eps, pgm),
             Curve("(1 + dΔ²/(2ϵR²))⁻¹", eps, bound, style=":", color="k")]
    return [Panel("ratio over time (dots: Theorem 8 bound at t = 1)", "diffusion time t",
                  "E_OU / E_GM", left, hlines=[(1.0, "")], vlines=[(1.0, "")],
                  legend="upper right"),
            Panel("at t = 1 over ϵ", "RDP slope ϵ (order ↦ order·ϵ)", "MSE / E_GM", right,
                  xscale="log", legend="upper left")]


def plot_ou_mse(
    over_t: Sequence[tuple[str, Any, Any, float]],
    at_one: tuple[Any, Any, Any, Any],
    *,
    title: str | None = None,
):
    """Theorem 8 (BBGG): the ratio E_OU/E_GM over time and over the RDP slope ϵ.

    Parameters
    ----------
    over_t : sequence of (label, t, ratio, bound)
        For each ϵ: times, ratios ``E_OU(θ, ρ, t)/E_GM(θ, ρ, t)`` for Theorem 8's parameters,
        and the bound ``(1 + dΔ²/(2ϵR²))^{-1}`` at t = 1 (drawn as a marker).
    at_one : (eps, ratio, pgm_ratio, bound)
        Over a grid of ϵ: the ratio at t = 1, the post-processed Gaussian's E_PGM/E_GM and the
        Theorem 8 bound.

    Notes
    -----
    Returns the figure (drawn by :func:`privamp.plots.plot_panels`, the style of every plot).
    """
    return plot_panels(ou_mse_panels(over_t, at_one), ncols=2, panel_size=(5.8, 4.5),
                       suptitle=title)
