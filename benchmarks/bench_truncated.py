"""Truncated Poisson subsampling of the Gaussian: privamp's certified bracket against
dp_accounting's TruncatedSubsampledGaussianDpEvent, and the fixed-shape sampler's speed.

Run by hand (dp_accounting is optional; without it only privamp's side is printed)::

    PYTHONPATH=src python benchmarks/bench_truncated.py [--repeat 3]

Each accounting row is timed in-process after a warm-up of the imports (one call per repeat, the
minimum reported); the sampler rows time one ``draw_truncated_poisson`` call at n = 10^7.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privamp.pld.engine import PldEvent, pld_epsilon
from privamp.pld.truncated import draw_truncated_poisson, truncated_poisson_curves

#: (label, [(n, q, B, σ, count), ...], δ)
CASES = [
    ("3x(4,.5,2)+2x(3,.5,2), sigma 1", [(4, 0.5, 2, 1.0, 3), (3, 0.5, 2, 1.0, 2)], 1e-6),
    ("1000x(60000,.01,700), sigma 1", [(60_000, 0.01, 700, 1.0, 1000)], 1e-5),
]


def _privamp(events, delta):
    return pld_epsilon([PldEvent(truncated_poisson_curves(1.0 / s, n, q, b), c)
                        for (n, q, b, s, c) in events], delta).bracket


def _dp_accounting(events, delta):
    try:
        import dp_accounting as dpa
        from dp_accounting.pld import PLDAccountant
    except ImportError:
        return None
    acc = PLDAccountant()
    acc.compose(dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.TruncatedSubsampledGaussianDpEvent(n, q, b, s), c)
        for (n, q, b, s, c) in events]))
    return acc.get_epsilon(delta)


def _timed(func, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return out, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    _privamp([(4, 0.5, 2, 1.0, 1)], 1e-3)  # warm-up: imports
    print("case | delta | privamp bracket | s | dp_accounting eps | s")
    for label, events, delta in CASES:
        br, t1 = _timed(lambda ev=events, d=delta: _privamp(ev, d), args.repeat)
        theirs, t2 = _timed(lambda ev=events, d=delta: _dp_accounting(ev, d), args.repeat)
        print(f"{label} | {delta:g} | [{br.lower:.6f}, {br.upper:.6f}] | {t1:.2f} | "
              f"{'-' if theirs is None else f'{theirs:.6f}'} | {t2:.2f}")
    rng = np.random.default_rng(0)
    for n, q, b in ((10**7, 1e-3, 5_000), (10**7, 1e-3, 20_000), (10**7, 0.05, 10_000)):
        _, t = _timed(lambda n=n, q=q, b=b: draw_truncated_poisson(n, q, b, rng), args.repeat)
        print(f"draw_truncated_poisson(n={n:.0e}, q={q:g}, B={b}) | {t * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
