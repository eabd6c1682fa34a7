"""The privacy filter in a training loop: 10,000 ``can_add`` + ``add`` calls against one
batched query.

Cases (Poisson-subsampled Gaussian, q = 0.01, σ = 1, δ = 1e-5; 10,000 steps have certified
ε ≈ 6.19):

* ``batched``: ``Accountant().add(mech, 10_000, scheme=...).epsilon(δ, lower=False)`` — the
  yardstick (one composition);
* ``filter, ample budget``: budget ε = 8; 10,000 × (``can_add``, ``add``) with a new mechanism
  and scheme object each step, as a loop builds them (the filter answers from the first,
  coarse evaluation of its search: certified, no exact boundary needed); with and without a
  final ``budget_left()`` (one composition at the final count, what the batched query is);
* ``filter, to the budget``: budget ε = 6.2 (T_max ≈ 10,034); the loop runs until ``can_add``
  says no (the fine phase of the search runs once, at the boundary), then ``budget_left()``;
* ``filter, adaptive``: the Rényi filter (``adaptive=True``) at budget ε = 8, 10,000 steps.

Every timing is in-process after a warm-up on another budget (imports and first-use set-up
excluded), the median of ``--repeat`` runs.

    /work/main/.venv/bin/python benchmarks/bench_filter.py --out benchmarks/results/filter.md
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

from privamp import GaussianMechanism, __version__
from privamp.accountant import Accountant
from privamp.filter import PrivacyFilter
from privamp.sampling import Poisson

Q, SIGMA, DELTA, STEPS = 0.01, 1.0, 1e-5, 10_000


def median_time(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def batched():
    return Accountant().add(GaussianMechanism(SIGMA), STEPS, scheme=Poisson(Q)).epsilon(
        DELTA, lower=False).upper


def loop(budget: float, adaptive: bool = False, limit: int = STEPS, final: bool = True):
    f = PrivacyFilter(budget, DELTA, adaptive=adaptive)
    steps = 0
    while steps < limit:
        mech, scheme = GaussianMechanism(SIGMA), Poisson(Q)
        if not f.can_add(mech, scheme=scheme):
            break
        f.add(mech, scheme=scheme)
        steps += 1
    return steps, (f.budget_left().epsilon_spent if final else float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    loop(3.0, limit=50)  # warm-up: imports, first-use set-up
    loop(3.0, adaptive=True, limit=50)
    batched_eps, t_batched = median_time(batched, args.repeat)
    rows = [("batched (one add of 10,000, one epsilon)", STEPS, batched_eps, t_batched)]
    for name, fn in [
        ("filter, ample budget 8 (10,000 can_add + add)", lambda: loop(8.0, final=False)),
        ("filter, ample budget 8 (10,000 can_add + add, then budget_left)", lambda: loop(8.0)),
        ("filter, to the budget 6.2 (can_add + add until no, budget_left)",
         lambda: loop(6.2, limit=10**9)),
        ("filter, adaptive (Renyi), budget 8 (10,000 steps)", lambda: loop(8.0, True)),
    ]:
        (steps, spent), t = median_time(fn, args.repeat)
        rows.append((name, steps, spent, t))
    lines = [f"# The privacy filter in a training loop (privamp {__version__})", "",
             f"{platform.machine()}, Python {platform.python_version()}; q = {Q}, sigma = "
             f"{SIGMA}, delta = {DELTA:g}; median of {args.repeat} runs, in-process.", "",
             "| case | steps | certified epsilon | seconds | x batched |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name, steps, eps, t in rows:
        lines.append(f"| {name} | {steps} | {eps:.6f} | {t:.3f} | {t / t_batched:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
