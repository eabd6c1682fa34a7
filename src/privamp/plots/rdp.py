"""Plots of Rényi-DP curves: the panels of Wang's slides (W-10), "Numerical evaluation of the
bounds" — RDP of the subsampled Gaussian (σ = 5) and Laplace (b = 0.5) mechanisms.

Like :mod:`privamp.plots`, this module draws what the library computed: the curves come from
:mod:`privamp.rdp`, assembled for the slides' panels by :mod:`privamp.reproduce.wang2019` (which
``privamp reproduce wang-fig-rdp`` shares) and passed in by ``privamp plot rdp``; nothing here
computes privacy itself.

The slides give neither the sampling ratio nor the order range (catalogue erratum E18); the
defaults of ``privamp plot rdp`` follow the catalogue's suggestion γ = 0.001, orders 2 … 4096,
and the figure states them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..rdp import RdpCurve
from ._figure import Panel, plot_panels, pyplot

__all__ = ["plot_rdp_curves", "plot_rdp_panels"]


def plot_rdp_curves(curves: Sequence[tuple[str, RdpCurve]], *, ax: Any = None,
                    title: str | None = None, loglog: bool = True):
    """Plot labelled RDP curves ε(order) on one set of axes (finite orders, positive values on
    log axes; lower bounds dashed); returns the figure."""
    plt = pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 4.5), layout="constrained")
    else:
        fig = ax.figure
    for label, curve in curves:
        finite = np.isfinite(curve.orders) & np.isfinite(curve.epsilons)
        x = curve.orders[finite]
        y = curve.epsilons[finite]
        if loglog:
            y = np.where(y > 0, y, np.nan)
        style = "--" if curve.bound == "lower" else "-"
        ax.plot(x, y, style, label=label, linewidth=1.8)
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("order")
    ax.set_ylabel("RDP ε(order)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(frameon=False, fontsize="small")
    if title:
        ax.set_title(title)
    return fig


def plot_rdp_panels(panels: Sequence[Panel], *, sampling_rate: float):
    """The slides' two panels (W-10): RDP of the subsampled Gaussian (σ) and Laplace (b)
    mechanisms against the order, log–log axes, with γ stated on the figure; returns it.

    ``panels`` are the computed curves as :class:`~privamp.plots.Panel` objects
    (:func:`privamp.reproduce.wang2019.rdp_panels`, which ``privamp plot rdp`` calls) and
    ``sampling_rate`` the γ they were computed for.

    >>> from privamp.plots import Curve
    >>> panels = [Panel(f"Subsampled {name}", "Rényi order", "RDP ε(order)",
    ...                 [Curve("upper bound", [2, 4, 8], [0.01, 0.02, 0.05])])
    ...           for name in ("Gaussian, σ = 5", "Laplace, b = 0.5")]
    >>> fig = plot_rdp_panels(panels, sampling_rate=0.001)
    >>> [ax.get_title() for ax in fig.axes]
    ['Subsampled Gaussian, σ = 5', 'Subsampled Laplace, b = 0.5']
    """
    return plot_panels(panels, ncols=2, panel_size=(6.0, 4.6),
                       suptitle=f"RDP of subsampled mechanisms, sampling ratio γ = "
                                f"{sampling_rate:g} (WOR bounds under substitution, Poisson "
                                "under add/remove; sensitivity 1)")
