"""Plots of Rényi-DP curves: the panels of Wang's slides (W-10), "Numerical evaluation of the
bounds" — RDP of the subsampled Gaussian (σ = 5) and Laplace (b = 0.5) mechanisms.

Like :mod:`privamp.plots`, this module draws what the library computes: the curves come from
:mod:`privamp.rdp`; nothing here computes privacy itself.

The slides give neither the sampling ratio nor the order range (catalogue erratum E18); the
defaults follow the catalogue's suggestion γ = 0.001, orders 2 … 4096, and the figure states them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validation import check_real
from .mechanisms import GaussianMechanism, LaplaceMechanism
from .plots import _pyplot
from .rdp import (
    RdpCurve,
    check_orders,
    poisson_gaussian_rdp,
    rdp_curve,
    subsampled_lower_bound,
    wbk_upper_bound,
    zhu_wang_upper_bound,
)

__all__ = ["plot_rdp_curves", "plot_rdp_panels", "rdp_panel_curves"]

#: WOR needs integer sizes: γ is represented as m / n with this n (exact for γ = k·1e-9).
_WOR_N = 10**9


def plot_rdp_curves(curves: Sequence[tuple[str, RdpCurve]], *, ax: Any = None,
                    title: str | None = None, loglog: bool = True):
    """Plot labelled RDP curves ε(order) on one set of axes (finite orders, positive values on
    log axes; lower bounds dashed); returns the figure."""
    plt = _pyplot()
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


def rdp_panel_curves(sampling_rate: float = 0.001, sigma: float = 5.0, scale: float = 0.5,
                     orders: Any = None) -> dict[str, list[tuple[str, RdpCurve]]]:
    """The curves of the two panels: ``{"gaussian": [...], "laplace": [...]}``, each a list of
    ``(label, curve)``: WBK upper bound (WOR, substitution), the W-9 lower bound, the Zhu–Wang
    Poisson upper bound, the exact Poisson RDP (Gaussian only) and the unsubsampled curve.
    Sensitivity 1 under each relation, as in the slides."""
    gamma = check_real("sampling_rate", sampling_rate, "(0, 1]")
    sigma = check_real("sigma", sigma, "(0, inf)")
    scale = check_real("scale", scale, "(0, inf)")
    if orders is None:
        orders = np.unique(np.round(np.geomspace(2.0, 4096.0, 60)))
    o = check_orders(orders)
    m = round(gamma * _WOR_N)
    panels = {}
    for name, make in (("gaussian", lambda rel: GaussianMechanism(sigma, 1.0, rel)),
                       ("laplace", lambda rel: LaplaceMechanism(scale, 1.0, rel))):
        wor, poisson = make("substitute"), make("add-remove")
        curves = [
            ("upper bound (WBK, WOR)", wbk_upper_bound(wor, _WOR_N, m, o)),
            ("Zhu–Wang upper bound (Poisson)", zhu_wang_upper_bound(poisson, gamma, o)),
        ]
        if name == "gaussian":  # equal to the lower bound's expression at integer orders
            curves.append(("exact (Poisson)", poisson_gaussian_rdp(sigma, gamma, o)))
        curves.append(("lower bound (W-9)", subsampled_lower_bound(wor, m / _WOR_N, o[o >= 2])))
        curves.append(("no subsampling", rdp_curve(poisson, o)))
        panels[name] = curves
    return panels


def plot_rdp_panels(sampling_rate: float = 0.001, sigma: float = 5.0, scale: float = 0.5,
                    orders: Any = None):
    """The slides' two panels (W-10): RDP of the subsampled Gaussian (σ) and Laplace (b)
    mechanisms against the order, log–log axes, with γ stated on the figure; returns it.

    >>> fig = plot_rdp_panels(orders=[2, 4, 8, 16])
    >>> [ax.get_title() for ax in fig.axes]
    ['Subsampled Gaussian, σ = 5', 'Subsampled Laplace, b = 0.5']
    """
    panels = rdp_panel_curves(sampling_rate, sigma, scale, orders)
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12.0, 4.8), layout="constrained")
    plot_rdp_curves(panels["gaussian"], ax=axes[0], title=f"Subsampled Gaussian, σ = {sigma:g}")
    plot_rdp_curves(panels["laplace"], ax=axes[1], title=f"Subsampled Laplace, b = {scale:g}")
    fig.suptitle(f"RDP of subsampled mechanisms, sampling ratio γ = {sampling_rate:g} "
                 "(WOR bounds under substitution, Poisson under add/remove; sensitivity 1)")
    return fig
