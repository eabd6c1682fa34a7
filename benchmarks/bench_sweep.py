"""Sweep throughput: 10,000 Poisson-Gaussian configurations (10 σ × 10 q × 10 steps × 10 δ).

Measures, in configurations per second of wall time:

1. the accountant called once per row (``Accountant().add(...).epsilon(δ)``, one process);
2. the batch API in one process (:func:`privamp.sweep.evaluate`), ``reuse="exact"`` (results
   checked equal to (1) row by row) and ``reuse="grid"`` (brackets checked to overlap (1)'s);
3. the same on a Dask ``LocalCluster`` with ``--workers`` processes (default 2), through
   :func:`privamp.sweep.run_sweep` — cluster start-up and writing the Parquet table included.

The per-row accountant takes 0.05–1.5 s a configuration (hours for the whole grid on 2 cores),
so its throughput is measured on ``--per-row`` random rows of the grid (default 300) and the
batch results are checked against it on those rows. The batch and Dask measurements run on
``--cells`` whole (σ, q) cells with all their 10 × 10 (steps, δ) — ``--cells 100`` (the
default) is the whole grid; fewer cells keep the same structure of shared work (a random sample
of rows would hide the reuse). ``--backend rdp`` measures the
RDP backend instead (no lower ends, no grid reuse). The reuse speed-up is (2) over (1), the
parallel speed-up (3) over (2). The numbers are wall times: run it on an otherwise idle machine.

    .venv/bin/python benchmarks/bench_sweep.py                  # PLD, the whole grid (~30 min)
    .venv/bin/python benchmarks/bench_sweep.py --cells 10       # 1,000 rows
    .venv/bin/python benchmarks/bench_sweep.py --backend rdp
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

import numpy as np

from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.sampling import Poisson
from privamp.sweep import evaluate, expand
from privamp.sweep.runner import run_sweep


def grid(backend: str, cells: int, seed: int):
    axes = {
        "mechanism": "gaussian",
        "sigma": np.geomspace(0.6, 2.0, 10).round(4).tolist(),
        "sampling": "poisson",
        "rate": np.geomspace(1e-3, 1e-1, 10).round(6).tolist(),
        "steps": {"start": 10, "stop": 10_000, "num": 10, "scale": "log"},
        "delta": np.logspace(-9, -3, 10).tolist(),
        "accountant": backend,
    }
    configs = expand(axes)
    assert len(configs) == 10_000
    if cells < 100:  # whole (σ, q) cells: configurations 100 k … 100 k + 99
        chosen = sorted(random.Random(seed).sample(range(100), cells))
        configs = [c for k in chosen for c in configs[100 * k:100 * (k + 1)]]
    return configs


def per_row(configs):
    out = []
    for c in configs:
        acc = Accountant(c.backend).add(GaussianMechanism(c.sigma), c.steps,
                                        scheme=Poisson(c.rate))
        b = acc.epsilon(c.delta)
        out.append((b.lower, b.upper))
    return out


def timed(label, fn, n):
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    print(f"  {label:<44} {n:>6,} rows {seconds:8.1f} s {n / seconds:9.1f} configurations/s",
          flush=True)
    return result, n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("pld", "rdp"), default="pld")
    parser.add_argument("--cells", type=int, default=100, choices=range(1, 101),
                        metavar="1..100", help="(σ, q) cells of the 10 × 10 grid (default 100)")
    parser.add_argument("--per-row", type=int, default=300,
                        help="random rows for the per-row accountant (default 300)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    configs = grid(args.backend, args.cells, args.seed)
    n = len(configs)
    cells = sorted({(c.sigma, c.rate) for c in configs})
    which = ("all 100 (sigma, q) cells" if len(cells) == 100 else "(sigma, q) cells "
             + ", ".join(f"({s:g}, {q:g})" for s, q in cells))
    print(f"{n:,} configurations of the 10,000 (Poisson-subsampled Gaussian, backend "
          f"{args.backend}, {os.cpu_count()} cores): {which}", flush=True)
    sample_idx = sorted(random.Random(args.seed + 1).sample(range(n), min(args.per_row, n)))
    sample = [configs[i] for i in sample_idx]
    ref, r_row = timed("accountant per row (one process)", lambda: per_row(sample),
                       len(sample))
    exact, r_exact = timed("batch, reuse=exact (one process)",
                           lambda: evaluate(configs, reuse="exact"), n)
    same = all((exact[i]["epsilon_lower"], exact[i]["epsilon"]) == ref[k]
               for k, i in enumerate(sample_idx))
    print(f"    equal to the per-row accountant on its {len(sample)} rows: {same}")
    rates = {"exact": r_exact}
    if args.backend == "pld":
        shared, r_grid = timed("batch, reuse=grid (one process)",
                               lambda: evaluate(configs, reuse="grid"), n)
        rates["grid"] = r_grid
        overlap = all(max(shared[i]["epsilon_lower"], ref[k][0])
                      <= min(shared[i]["epsilon"], ref[k][1]) for k, i in enumerate(sample_idx))
        diff = max(abs(shared[i]["epsilon"] - ref[k][1]) / ref[k][1]
                   for k, i in enumerate(sample_idx))
        print(f"    brackets overlap the per-row accountant's: {overlap}; largest relative "
              f"difference of the upper ends {diff:.2g}")
    with tempfile.TemporaryDirectory() as tmp:
        for reuse in rates:
            out = os.path.join(tmp, f"{reuse}.parquet")
            summary, r_dask = timed(
                f"Dask LocalCluster, {args.workers} workers, reuse={reuse}",
                lambda reuse=reuse, out=out: run_sweep(configs, out, workers=args.workers,
                                                       reuse=reuse), n)
            assert summary.errors == 0
            print(f"    parallel speed-up over one process: {r_dask / rates[reuse]:.2f}x; "
                  f"over the per-row accountant: {r_dask / r_row:.2f}x")
    for reuse, rate in rates.items():
        print(f"reuse speed-up of the batch API ({reuse}) over the per-row accountant: "
              f"{rate / r_row:.2f}x")


if __name__ == "__main__":
    main()
