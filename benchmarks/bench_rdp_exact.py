"""Exact Poisson-subsampled RDP of Laplace / randomized response vs the factor-3 bound (issue 20).

Run: PYTHONPATH=src .venv/bin/python benchmarks/bench_rdp_exact.py [--figure PATH]

Measures, on this machine, and writes benchmarks/results/rdp_exact.md:
* per order, the exact value (upper and lower end) and Zhu & Wang's factor-3 bound (W-20) for
  Laplace b = 0.5, q = 0.05 (the catalogue's case) and randomized response p = 0.75, q = 0.05,
  and the time of one curve on the 200 default orders (+ ∞), best of 3;
* ε(δ = 1e-6) of ledgers of T Poisson-subsampled Laplace steps through the RDP accountant,
  before (the factor-3 curve, what ``Accountant("rdp")`` used until issue 20) and after (the
  exact curve), with the PLD backend's certified bracket for reference;
* the zCDP ρ of those ledgers (Accountant.zcdp_rho) and its time.
``--figure PATH`` also draws exact vs factor-3 vs order (Laplace b = 0.5, q = 0.05).
Benchmarks are measurements, never assertions.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

from privamp import Accountant, LaplaceMechanism, Poisson, RandomizedResponse
from privamp.rdp import DEFAULT_ORDERS, RdpAccountant, zhu_wang_upper_bound
from privamp.rdp.poisson_exact import poisson_exact_rdp

OUT = Path(__file__).parent / "results" / "rdp_exact.md"
ORDERS = [2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1000.0]


def best_of(fn, n=3):
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        val = fn()
        best = min(best, time.perf_counter() - t)
    return val, best


def per_order(mech, q, lines, title):
    exact = poisson_exact_rdp(mech, q, ORDERS)
    zw = zhu_wang_upper_bound(mech, q, ORDERS, refine=False)
    lines += [f"### {title}", "",
              "| order | exact (upper) | exact (lower) | factor-3 (W-20) | factor-3 / exact − 1 |",
              "|---:|---:|---:|---:|---:|"]
    for o, up, lo, z in zip(ORDERS, exact.epsilons, exact.lower_epsilons, zw.epsilons,
                            strict=True):
        lines.append(f"| {o:g} | {up:.12g} | {lo:.12g} | {z:.12g} | {z / up - 1:+.1%} |")
    _, t_exact = best_of(lambda: poisson_exact_rdp(mech, q, DEFAULT_ORDERS))
    _, t_zw = best_of(lambda: zhu_wang_upper_bound(mech, q, DEFAULT_ORDERS))
    lines += ["", f"One curve on the 200 default orders + ∞: exact {t_exact * 1e3:.0f} ms, "
              f"factor-3 {t_zw * 1e3:.0f} ms (best of 3).", ""]


def ledgers(lines):
    lines += ["### Ledger ε(δ = 1e-6) through the RDP accountant: before (factor 3) → after "
              "(exact)", "",
              "| b | q | T | RDP before | RDP after | change | PLD bracket | zCDP ρ | "
              "t(after) | t(ρ) |",
              "|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for b, q, steps in [(0.5, 0.05, 100), (0.5, 0.05, 1000), (2.0, 0.01, 1000),
                        (2.0, 0.01, 10000), (1.0, 0.1, 1000)]:
        lap = LaplaceMechanism(b)
        before = RdpAccountant(DEFAULT_ORDERS).compose(
            lambda o, lap=lap, q=q: zhu_wang_upper_bound(lap, q, o), steps).epsilon(1e-6)
        after, t_after = best_of(
            lambda lap=lap, q=q, steps=steps: Accountant("rdp").add(
                lap, steps, scheme=Poisson(q)).epsilon(1e-6).upper, n=1)
        pld = Accountant("pld").add(lap, steps, scheme=Poisson(q)).epsilon(1e-6)
        z, t_rho = best_of(lambda lap=lap, q=q, steps=steps: Accountant("rdp").add(
            lap, steps, scheme=Poisson(q)).zcdp_rho(), n=1)
        lines.append(f"| {b:g} | {q:g} | {steps} | {before:.5f} | {after:.5f} | "
                     f"{after / before - 1:+.1%} | [{pld.lower:.5f}, {pld.upper:.5f}] | "
                     f"{z.rho:.5g} | {t_after:.2f} s | {t_rho:.2f} s |")
    lines += ["", "RDP before: `RdpAccountant.compose(lambda o: zhu_wang_upper_bound(lap, q, o),"
              " T)` (the factor-3 curve the rule table used for Laplace until issue 20); after:"
              " `Accountant(\"rdp\").add(lap, T, scheme=Poisson(q))` (first call, no cache); "
              "ρ: `Accountant(\"rdp\").add(...).zcdp_rho()`.", ""]


def figure(path):
    """Only the figure: what the docs build runs (docs/figures.py)."""
    from privamp.plots import pyplot, save_figure

    plt = pyplot()

    lap = LaplaceMechanism(0.5)
    o = np.unique(np.round(np.geomspace(2.0, 2000.0, 80)))
    exact = poisson_exact_rdp(lap, 0.05, o)
    zw = zhu_wang_upper_bound(lap, 0.05, o, refine=False)
    zw_ref = zhu_wang_upper_bound(lap, 0.05, o)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    ax.plot(o, zw.epsilons, label="Zhu–Wang factor-3 bound (W-20, as stated)", color="C3")
    ax.plot(o, zw_ref.epsilons, "--", label="factor-3 bound with privamp's caps (before)",
            color="C1")
    ax.plot(o, exact.epsilons, label="exact (this work: attained pair, certified)",
            color="C0", lw=2)
    ax.axhline(float(np.log1p(0.05 * np.expm1(2.0))), color="grey", lw=0.8, ls=":",
               label="order ∞: log(1 + q(e^θ − 1))")
    ax.set_xscale("log")
    ax.set_xlabel("Rényi order")
    ax.set_ylabel("RDP ε(order)")
    ax.set_title("Poisson-subsampled Laplace, b = 0.5, Δ = 1, q = 0.05, add/remove",
                 fontsize="medium")
    ax.legend(fontsize=8, frameon=False)
    save_figure(fig, str(path), dpi=120)
    print(f"wrote {path}")


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--figure", default=None)
    args = p.parse_args(argv)
    lines = ["# Exact Poisson-subsampled RDP (Laplace, randomized response) vs the factor-3 "
             "bound", "",
             f"Machine: {platform.processor() or platform.machine()}, Python "
             f"{sys.version.split()[0]}, NumPy {np.__version__}. Command: `PYTHONPATH=src "
             ".venv/bin/python benchmarks/bench_rdp_exact.py`.", ""]
    per_order(LaplaceMechanism(0.5), 0.05, lines, "Laplace b = 0.5 (θ = 2), q = 0.05")
    per_order(RandomizedResponse(0.75), 0.05, lines, "Randomized response p = 0.75, q = 0.05")
    ledgers(lines)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    if args.figure:
        figure(args.figure)


if __name__ == "__main__":
    main()
