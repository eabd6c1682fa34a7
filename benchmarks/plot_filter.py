"""The figure of docs/privacy-filter.md: certified ε spent against the step, with the budget
line and where each filter stops (PLD filter, RDP filter on a fixed sequence, adaptive Rényi
filter at its fixed order).

DP-SGD steps: Poisson-subsampled Gaussian, q = 0.01, σ = 1, δ = 1e-5, budget ε = 3.

    PYTHONPATH=src python benchmarks/plot_filter.py --out filter.png

The docs figure (docs/images/filter.png) is made by the docs build (docs/figures.py calls
``figure(path)``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.filter import PrivacyFilter
from privamp.plots import pyplot, save_figure
from privamp.sampling import Poisson

Q, SIGMA, DELTA, BUDGET = 0.01, 1.0, 1e-5, 3.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("filter.png"))
    args = parser.parse_args()
    figure(args.out)


def figure(out) -> None:
    """Draw the figure to ``out``."""
    out = Path(out)
    mech, scheme = GaussianMechanism(SIGMA), Poisson(Q)
    filters = {
        "PLD filter (fixed sequence)": PrivacyFilter(BUDGET, DELTA),
        "RDP filter (fixed sequence)": PrivacyFilter(BUDGET, DELTA, backend="rdp"),
        "Renyi filter (adaptive)": PrivacyFilter(BUDGET, DELTA, adaptive=True),
    }
    stops = {name: f.steps_left(mech, scheme=scheme) for name, f in filters.items()}
    adaptive = filters["Renyi filter (adaptive)"]
    counts = np.unique(np.round(np.geomspace(10, 1.4 * max(stops.values()), 28)).astype(int))
    curves = {
        "PLD filter (fixed sequence)": [
            Accountant(upper_error=1e-5 * BUDGET).add(mech, int(t), scheme=scheme)
            .epsilon(DELTA, lower=False).upper for t in counts],
        "RDP filter (fixed sequence)": [
            Accountant("rdp").add(mech, int(t), scheme=scheme).epsilon(DELTA).upper
            for t in counts],
        "Renyi filter (adaptive)": [
            adaptive._adaptive_epsilon((mech, scheme, None, None, ""), int(t)) for t in counts],
    }
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.2), layout="constrained")
    colours = {"PLD filter (fixed sequence)": "C0", "RDP filter (fixed sequence)": "C1",
               "Renyi filter (adaptive)": "C2"}
    for name, eps in curves.items():
        label = (name + f" at order {adaptive.order:g}" if "adaptive" in name else name)
        ax.plot(counts, eps, color=colours[name], label=f"{label}: stops at {stops[name]}")
        ax.axvline(stops[name], color=colours[name], linestyle=":", linewidth=1)
    ax.axhline(BUDGET, color="k", linestyle="--", linewidth=1, label=f"budget ε = {BUDGET:g}")
    ax.set_xscale("log")
    ax.set_xlabel("steps")
    ax.set_ylabel(f"certified ε at δ = {DELTA:g}")
    ax.set_ylim(0, 1.6 * BUDGET)
    ax.set_title(f"Where the filter stops: Gaussian σ = {SIGMA:g}, Δ = 1, Poisson q = {Q:g}, "
                 f"add/remove;\nbudget ε = {BUDGET:g} at δ = {DELTA:g}", fontsize="medium")
    ax.legend(fontsize=8, loc="upper left", frameon=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, str(out), dpi=120)
    print(out, stops, f"adaptive order {adaptive.order:g}")


if __name__ == "__main__":
    main()
