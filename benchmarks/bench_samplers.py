"""The samplers practitioners run (issue 19): random allocation's reference rows, the
five-epoch balls-in-bins case, shuffling and truncated Poisson, in-process and as whole commands.

    PYTHONPATH=src python benchmarks/bench_samplers.py [--repeat 3] \
        [--out benchmarks/results/samplers.md]

In-process rows time the accounting only (imports warmed up; random allocation's memo of round
laws cleared before every repeat, so each repeat builds its laws); the minimum of the repeats is
reported. Whole-command rows run ``privamp epsilon ... --json`` in a fresh process (median of
the repeats). The published tool for random allocation (Feldman & Shenfeld's) is not installed
here; its ranges are the issue's table, and its timing there ("did not finish the five-epoch case
in 9 minutes") is quoted, not measured.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from privamp import (
    Accountant,
    GaussianMechanism,
    Poisson,
    RandomAllocation,
    Shuffle,
    TruncatedPoisson,
)
from privamp.pld.allocation import gaussian_allocation_law

# (σ, t, k, epochs, δ, published lower, published upper)
ROWS = [
    (2.0, 100, 10, 1, 1e-6, 2.3803, 2.4661),
    (1.0, 1000, 5, 1, 1e-8, 1.3097, 1.3630),
    (1.0, 1000, 1, 1, 1e-5, 0.1364, 0.1422),
    (1.0, 100, 1, 10, 1e-5, 1.6644, 1.7398),
    (1.0, 1000, 1, 5, 1e-5, None, None),
]


def _timed(func, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        gaussian_allocation_law.cache_clear()
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return out, best


def _epsilon(mech, steps, scheme, delta):
    return Accountant().add(mech, steps, scheme=scheme).epsilon(delta)


def _command(argv, repeat):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "privamp", *argv, "--json"],
                             capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - start)
        out = json.loads(run.stdout)
    return out, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    Accountant().add(GaussianMechanism(1.0), 10, scheme=RandomAllocation(10)).epsilon(1e-5)

    lines = ["# Batch samplers practitioners run (issue 19)", "",
             f"`PYTHONPATH=src python benchmarks/bench_samplers.py --repeat {args.repeat}`; "
             "compute in-process (min of repeats, round laws rebuilt each time), whole "
             "commands in a fresh process (median).", "",
             "## Random allocation (add/remove, sensitivity 1)", "",
             "| σ | t | k | epochs | δ | privamp bracket | width | published range | "
             "Poisson q = k/t | privamp s | Poisson s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for sigma, t, k, epochs, delta, lo, hi in ROWS:
        mech = GaussianMechanism(sigma)
        b, secs = _timed(functools.partial(_epsilon, mech, t * epochs, RandomAllocation(t, k),
                                           delta), args.repeat)
        p, psecs = _timed(functools.partial(_epsilon, mech, t * epochs, Poisson(k / t), delta),
                          args.repeat)
        pub = "—" if lo is None else f"[{lo}, {hi}]"
        lines.append(f"| {sigma:g} | {t} | {k} | {epochs} | {delta:g} | "
                     f"[{b.lower:.5f}, {b.upper:.5f}] | {100 * b.width / b.upper:.3f} % | "
                     f"{pub} | {p.upper:.5f} | {secs:.2f} | {psecs:.2f} |")
        print(lines[-1], flush=True)

    lines += ["", "## Whole commands", "", "| command | ε | seconds (median) |", "|---|---|---|"]
    commands = [
        ["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling",
         "random-allocation", "--t", "1000", "--steps", "5000", "--delta", "1e-5"],
        ["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling", "poisson",
         "--rate", "0.001", "--steps", "5000", "--delta", "1e-5"],
        ["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling", "shuffle",
         "--n", "10000", "--m", "10", "--steps", "5000", "--delta", "1e-6"],
        ["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling",
         "truncated-poisson", "--n", "60000", "--rate", "0.01", "--max-batch", "700",
         "--steps", "1000", "--delta", "1e-5"],
    ]
    for argv in commands:
        d, secs = _command(argv, args.repeat)
        lines.append(f"| `privamp {' '.join(argv)}` | [{d['epsilon_lower']:.5f}, "
                     f"{d['epsilon']:.5f}] | {secs:.2f} |")
        print(lines[-1], flush=True)

    lines += ["", "## Shuffling and truncated Poisson in-process", "",
              "| case | bracket | seconds |", "|---|---|---|"]
    cases = [
        ("shuffle σ 1, n 10000, m 10, 5 epochs, δ 1e-6 (lower: Chua et al.)",
         lambda: Accountant().add(GaussianMechanism(1.0), 5000,
                                  scheme=Shuffle(10000, 10)).epsilon(1e-6)),
        ("truncated Poisson σ 1, n 60000, q 0.01, B 700, 1000 steps, δ 1e-5",
         lambda: Accountant().add(GaussianMechanism(1.0), 1000,
                                  scheme=TruncatedPoisson(60000, 0.01, 700)).epsilon(1e-5)),
    ]
    for label, func in cases:
        b, secs = _timed(func, args.repeat)
        lines.append(f"| {label} | [{b.lower:.5f}, {b.upper:.5f}] | {secs:.2f} |")
        print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
