"""Plots for amplification by post-processing (matplotlib, behind the ``plots`` extra).

Draws what the library computed (:mod:`privamp.amplification.diffusion`); computes nothing
itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .plots import _pyplot

__all__ = ["plot_ou_mse"]


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

    Returns the figure.
    """
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.5), layout="constrained")
    for label, t, ratio, bound in over_t:
        (line,) = left.plot(np.asarray(t), np.asarray(ratio), label=label, linewidth=1.8)
        left.plot([1.0], [bound], marker="o", color=line.get_color())
    left.axhline(1.0, color="0.5", linestyle=":", linewidth=1.0)
    left.axvline(1.0, color="0.7", linestyle="--", linewidth=0.8)
    left.set_xlabel("diffusion time t")
    left.set_ylabel("E_OU / E_GM")
    left.set_title("ratio over time (dots: Theorem 8 bound at t = 1)")
    left.grid(True, alpha=0.3)
    left.legend(frameon=False)

    eps, ratio, pgm, bound = (np.asarray(a) for a in at_one)
    right.plot(eps, ratio, label="OU at t = 1", linewidth=2.4)
    right.plot(eps, pgm, label="post-processed Gaussian", linestyle="--", linewidth=1.6)
    right.plot(eps, bound, label="(1 + dΔ²/(2ϵR²))⁻¹", linestyle=":", linewidth=1.6,
               color="k")
    right.set_xscale("log")
    right.set_xlabel("RDP slope ϵ (order ↦ order·ϵ)")
    right.set_ylabel("MSE / E_GM")
    right.set_title("at t = 1 over ϵ")
    right.grid(True, which="both", alpha=0.3)
    right.legend(frameon=False)
    if title:
        fig.suptitle(title)
    return fig
