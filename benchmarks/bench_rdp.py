"""Speed and accuracy of the RDP accountant for the Poisson-subsampled Gaussian (DP-SGD).

Run: .venv/bin/python benchmarks/bench_rdp.py   (the peers need the benchmark virtualenv, e.g.
PYTHONPATH=src /work/benchvenv/bin/python benchmarks/bench_rdp.py; ``--grid`` runs only the
comparison grid below)

Measures, on this machine:
* ε(δ = 1e-5) of 10^6 steps of the Poisson-subsampled Gaussian (σ = 1, q = 0.01) over the 200
  default orders (+ order ∞): the exact RDP curve, the composition, the conversion and the local
  order refinement (target: under 50 ms);
* the same with Google's dp_accounting RDP accountant if it is importable (it is not a privamp
  dependency: ``pip install dp-accounting`` into the virtualenv to compare);
* both accountants on the reference rows of ../shared/spec/landscape.md;
* the comparison grid σ ∈ {0.5, 1, 2} × q ∈ {0.001, 0.01, 0.1} × T ∈ {1e3 … 1e6}, δ = 1e-5:
  privamp's RdpAccountant, Opacus' RDPAccountant (history [(σ, q, T)], get_epsilon) and
  dp_accounting's RdpAccountant, each a fresh accountant per call (as users do), timed on the
  first call and as the best of repeated calls; privamp's ε is flagged where it is above
  Opacus' (Opacus excludes orders whose series do not converge, and rounds to nearest).
Benchmarks are measurements, never assertions.
"""

from __future__ import annotations

import itertools
import logging
import os
import platform
import sys
import time
import warnings

import numpy as np

from privamp.rdp import (
    DEFAULT_ORDERS,
    RdpAccountant,
    poisson_gaussian_epsilon,
    poisson_gaussian_rdp,
)

try:  # optional comparison
    import dp_accounting
    from dp_accounting import rdp as dp_rdp
except ImportError:  # pragma: no cover - depends on the environment
    dp_accounting = None
try:  # optional comparison
    from opacus.accountants import RDPAccountant as OpacusRdp
except ImportError:  # pragma: no cover - depends on the environment
    OpacusRdp = None

LANDSCAPE = [  # σ, q, steps, PLD ε (dp_accounting 0.6.0), RDP ε (any library), δ = 1e-5
    (1.0, 0.01, 1_000, 1.82824, 2.101),
    (1.0, 0.01, 10_000, 6.18774, 6.713),
    (1.0, 0.01, 100_000, 25.57327, 27.238),
    (0.8, 0.001, 100_000, 2.57556, 2.825),
    (2.0, 0.05, 5_000, 9.37994, 10.095),
    (0.6, 0.02, 2_000, 19.98175, 22.157),
]


def best_of(func, repeat=7):
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def dp_accounting_epsilon(sigma, q, steps, delta, orders=None):
    acc = dp_rdp.RdpAccountant() if orders is None else dp_rdp.RdpAccountant(list(orders))
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    acc.compose(event)
    return acc.get_epsilon(delta)


def privamp_epsilon(sigma, q, steps, delta):
    acc = RdpAccountant().compose(lambda o: poisson_gaussian_rdp(sigma, q, o), steps)
    return float(acc.epsilon(delta))


def opacus_epsilon(sigma, q, steps, delta):
    acc = OpacusRdp()
    acc.history = [(sigma, q, steps)]
    return acc.get_epsilon(delta)


def first_and_best(func, repeat=5):
    start = time.perf_counter()
    value = func()
    first = time.perf_counter() - start
    best, _ = best_of(func, repeat)
    return value, first, best


def grid() -> None:
    """privamp vs Opacus vs dp_accounting on the comparison grid (see the module doc)."""
    logging.disable(logging.WARNING)  # Opacus logs every order it excludes
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\ncomparison grid, delta = 1e-5 ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {load:.2f}, Python {sys.version.split()[0]}); "
          "ms: first call / best of 5 (dp_accounting: best of 2)")
    print(f"  {'sigma':>5} {'q':>6} {'steps':>8} | {'privamp':>11} {'1st':>6} {'best':>6} | "
          f"{'opacus':>11} {'1st':>6} {'best':>6} | {'dp_acc':>11} {'best':>6}")
    total = {"privamp": 0.0, "opacus": 0.0, "dp_accounting": 0.0}
    for sigma, q, steps in itertools.product([0.5, 1.0, 2.0], [0.001, 0.01, 0.1],
                                             [10**3, 10**4, 10**5, 10**6]):
        args = (sigma, q, steps, 1e-5)
        e_p, f_p, t_p = first_and_best(lambda a=args: privamp_epsilon(*a))
        total["privamp"] += t_p
        line = f"  {sigma:>5g} {q:>6g} {steps:>8d} | {e_p:>11.5f} {f_p * 1e3:>6.1f} " \
               f"{t_p * 1e3:>6.1f} |"
        if OpacusRdp is not None:
            e_o, f_o, t_o = first_and_best(lambda a=args: opacus_epsilon(*a))
            total["opacus"] += t_o
            line += f" {e_o:>11.5f} {f_o * 1e3:>6.1f} {t_o * 1e3:>6.1f} |"
        if dp_accounting is not None:
            t_d, e_d = best_of(lambda a=args: dp_accounting_epsilon(*a), repeat=2)
            total["dp_accounting"] += t_d
            line += f" {e_d:>11.5f} {t_d * 1e3:>6.1f}"
        if OpacusRdp is not None and e_p > e_o:
            line += f"  privamp above opacus by {e_p - e_o:.1e}"
        print(line, flush=True)
    print("  sum of best times (ms): " + ", ".join(f"{k} {v * 1e3:.0f}" for k, v in total.items()
                                                  if v))


def main() -> None:
    sigma, q, steps, delta = 1.0, 0.01, 10**6, 1e-5
    finite = DEFAULT_ORDERS[np.isfinite(DEFAULT_ORDERS)]
    print(f"Poisson Gaussian, sigma={sigma}, q={q}, {steps:.0e} steps, delta={delta:g}, "
          f"{finite.size} orders + inf")
    start = time.perf_counter()
    cold = poisson_gaussian_epsilon(sigma, q, steps, delta)
    t_cold = time.perf_counter() - start
    t_all, eps = best_of(lambda: poisson_gaussian_epsilon(sigma, q, steps, delta))
    t_curve, curve = best_of(lambda: poisson_gaussian_rdp(sigma, q, DEFAULT_ORDERS))
    t_conv, _ = best_of(lambda: (curve * steps).epsilon(delta, warn=False))
    t_noref, eps_noref = best_of(lambda: RdpAccountant(refine=False).compose(
        lambda o: poisson_gaussian_rdp(sigma, q, o), steps).epsilon(delta))
    print(f"  privamp epsilon = {eps:.6f}: {t_all * 1e3:.1f} ms (first call {t_cold * 1e3:.1f} "
          f"ms, value {cold:.6f})")
    print(f"    exact RDP curve (200 orders, fractional ones by the certified series): "
          f"{t_curve * 1e3:.1f} ms; composition + conversion: {t_conv * 1e3:.2f} ms")
    print(f"    without order refinement: {eps_noref:.6f} in {t_noref * 1e3:.1f} ms")
    if dp_accounting is None:
        print("  dp_accounting is not installed: pip install dp-accounting to compare")
    else:
        t_dp, eps_dp = best_of(lambda: dp_accounting_epsilon(sigma, q, steps, delta), repeat=3)
        t_dp200, eps_dp200 = best_of(
            lambda: dp_accounting_epsilon(sigma, q, steps, delta, finite), repeat=3)
        print(f"  dp_accounting RDP (its default orders):      epsilon = {eps_dp:.6f}: "
              f"{t_dp * 1e3:.1f} ms")
        print(f"  dp_accounting RDP (privamp's 200 orders):    epsilon = {eps_dp200:.6f}: "
              f"{t_dp200 * 1e3:.1f} ms")

    print("\nlandscape.md rows (delta = 1e-5): privamp RDP vs reference RDP and PLD values")
    header = f"  {'sigma':>5} {'q':>6} {'steps':>7} {'privamp':>10} {'ms':>6} {'RDP ref':>8} " \
             f"{'PLD':>9}"
    if dp_accounting is not None:
        header += f" {'dp_acc RDP':>11} {'ms':>6}"
    print(header)
    for s, rate, t, pld, ref in LANDSCAPE:
        t_p, e_p = best_of(lambda s=s, rate=rate, t=t: poisson_gaussian_epsilon(s, rate, t, 1e-5),
                           repeat=3)
        line = f"  {s:>5g} {rate:>6g} {t:>7d} {e_p:>10.5f} {t_p * 1e3:>6.1f} {ref:>8.3f} " \
               f"{pld:>9.5f}"
        if dp_accounting is not None:
            t_d, e_d = best_of(lambda s=s, rate=rate, t=t: dp_accounting_epsilon(s, rate, t, 1e-5),
                               repeat=3)
            line += f" {e_d:>11.5f} {t_d * 1e3:>6.1f}"
        print(line)


if __name__ == "__main__":
    if "--grid" not in sys.argv:
        main()
    grid()
