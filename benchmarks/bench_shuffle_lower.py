"""The shuffling lower bound (``privamp.pld.shuffle``): values and time per query.

For each case: the certified lower end of ε(δ = 1e-6) for shuffled fixed batches (the binned
max-of-Gaussians pair of Chua et al. 2024, composed by the PLD engine), the published value
where there is one, the un-amplified Gaussian composition (the certified upper end), the number
of cells, and the median time (of ``--repeat`` runs, in-process) of building the curves and of
the ε query.

    .venv/bin/python benchmarks/bench_shuffle_lower.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import privamp
from privamp.pld.engine import PldEvent, pld_epsilon
from privamp.pld.shuffle import shuffle_lower_curves

DELTA = 1e-6

#: (σ, T, epochs, order, published value or None); the published values are Chua et al.'s
CASES = [
    (0.5, 1000, 1, "reshuffle", 10.997),
    (1.0, 1000, 1, "reshuffle", 3.724),
    (2.0, 1000, 1, "reshuffle", 0.110),
    (1.0, 1000, 5, "reshuffle", 4.701),
    (1.0, 1000, 5, "persistent", None),
    (1.0, 1000, 50, "reshuffle", None),
    (1.0, 10**7, 1, "reshuffle", None),
    (0.5, 100, 20, "reshuffle", None),
]


def _median_time(func, repeat: int):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"delta = {DELTA:g}; times are medians of {args.repeat} runs")
    print("| σ | T | epochs | order | lower end | published | Gaussian (upper end) | cells "
          "| curves s | ε query s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for sigma, batches, epochs, order, published in CASES:
        t_build, items = _median_time(
            lambda s=sigma, b=batches, e=epochs, o=order:
            shuffle_lower_curves(2 / s, 1 / s, b, e, o),  # zero-out: means 2C/σ and C/σ
            args.repeat)
        events = [PldEvent(c, n) for c, n in items]
        t_query, result = _median_time(lambda ev=events: pld_epsilon(ev, DELTA), args.repeat)
        gauss = privamp.Accountant().add(privamp.GaussianMechanism(sigma), epochs)
        upper = gauss.epsilon(DELTA).upper
        cells = items[0][0]["remove"].p.size
        pub = "" if published is None else f"{published:.3f}"
        print(f"| {sigma:g} | {batches:g} | {epochs} | {order} | {result.bracket.lower:.6f} | "
              f"{pub} | {upper:.4f} | {cells} | {t_build:.3f} | {t_query:.3f} |")


if __name__ == "__main__":
    main()
