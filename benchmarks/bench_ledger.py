"""The training-loop ledger: one accountant call per training step against one batched call, for
privamp and for dp_accounting's accountants composing per step.

Cases (Poisson-subsampled Gaussian, q = 0.01, σ = 1, δ = 1e-5, unless said):

* ``per-step T``: T calls of ``Accountant.step(mech, scheme=...)`` (a new mechanism and scheme
  object each step, as a loop builds them) and one ``epsilon``; against one ``add(mech, T)`` and
  one ``epsilon``. dp_accounting: T ``compose(PoissonSampledDpEvent(...))`` calls and one
  ``get_epsilon`` (PLD and RDP accountants), against one ``compose(..., T)``.
* ``schedule``: 10 noise levels cycled through 100 runs of 100 steps (10 distinct events).
* ``per-epoch``: 20 epochs of 500 steps, ε asked after each epoch (20 queries), with the default
  grids and with ``Accountant(horizon=10_000)``; dp_accounting's accountants composing 500
  steps per epoch and asked after each.

Every timing is in-process after a warm-up query on a different ledger (imports excluded),
the median of ``--repeat`` runs, with the peak resident memory of the process at the end.

    .venv-bench/bin/python benchmarks/bench_ledger.py --out benchmarks/results/ledger.md
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time
from pathlib import Path

from privamp import GaussianMechanism, __version__
from privamp.accountant import Accountant
from privamp.display import upper
from privamp.sampling import Poisson

Q, SIGMA, DELTA = 0.01, 1.0, 1e-5


def median_time(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def privamp_per_step(steps: int):
    acc = Accountant()
    for _ in range(steps):
        acc.step(GaussianMechanism(SIGMA), scheme=Poisson(Q))
    return acc.epsilon(DELTA).upper


def privamp_batched(steps: int):
    return Accountant().add(GaussianMechanism(SIGMA), steps, scheme=Poisson(Q)).epsilon(
        DELTA).upper


def privamp_schedule():
    sigmas = [0.8 + 0.05 * i for i in range(10)]
    acc = Accountant()
    for run in range(100):
        for _ in range(100):
            acc.step(GaussianMechanism(sigmas[run % 10]), scheme=Poisson(Q))
    return acc.epsilon(DELTA).upper


def privamp_per_epoch(horizon=None):
    acc = Accountant(horizon=horizon)
    for _ in range(20):
        for _ in range(500):
            acc.step(GaussianMechanism(SIGMA), scheme=Poisson(Q))
        eps = acc.epsilon(DELTA).upper
    return eps


def dp_accountants():
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant
    except ImportError:
        return {}

    def event():
        return dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(SIGMA))

    def per_step(make, steps):
        def run():
            acc = make()
            for _ in range(steps):
                acc.compose(event())
            return acc.get_epsilon(DELTA)
        return run

    def batched(make, steps):
        return lambda: make().compose(event(), steps).get_epsilon(DELTA)

    def per_epoch(make):
        def run():
            acc = make()
            for _ in range(20):
                acc.compose(event(), 500)
                eps = acc.get_epsilon(DELTA)
            return eps
        return run

    return {"dp_accounting PLD": (pld_privacy_accountant.PLDAccountant, per_step, batched,
                                  per_epoch),
            "dp_accounting RDP": (rdp_privacy_accountant.RdpAccountant, per_step, batched,
                                  per_epoch)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--peer-repeat", type=int, default=1,
                    help="runs of the peers' cases (dp_accounting PLD per step: minutes a run)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--skip-per-step-peers", action="store_true",
                    help="leave out dp_accounting composing per step (about 6 minutes)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    Accountant().add(GaussianMechanism(2.0), 10, scheme=Poisson(0.02)).epsilon(1e-6)  # warm-up

    rows = []
    for steps in (1000, 10_000):
        eps_s, t_s = median_time(lambda s=steps: privamp_per_step(s), args.repeat)
        eps_b, t_b = median_time(lambda s=steps: privamp_batched(s), args.repeat)
        rows.append((f"privamp pld, {steps} steps", t_s, t_b, eps_s, eps_b))
    peers = dp_accountants()
    epoch_peers = []
    for name, (make, per_step, batched, per_epoch) in peers.items():
        batched(make, 10)()  # warm-up
        if not args.skip_per_step_peers:
            for steps in (1000,):
                eps_s, t_s = median_time(per_step(make, steps), args.peer_repeat)
                eps_b, t_b = median_time(batched(make, steps), args.peer_repeat)
                rows.append((f"{name}, {steps} steps", t_s, t_b, eps_s, eps_b))
        eps_pe, t_pe = median_time(per_epoch(make), args.repeat)
        epoch_peers.append((name, t_pe, eps_pe))
    eps_sched, t_sched = median_time(privamp_schedule, args.repeat)
    eps_one, t_one = median_time(lambda: privamp_batched(10_000), args.repeat)
    eps_ep, t_ep = median_time(privamp_per_epoch, args.repeat)
    eps_hz, t_hz = median_time(lambda: privamp_per_epoch(10_000), args.repeat)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    lines = [
        "# The training-loop ledger: per-step calls against one batched call",
        "",
        f"privamp {__version__}; Python {platform.python_version()}; {platform.machine()}; "
        f"median of {args.repeat} (peers: {args.peer_repeat}); in-process after a warm-up; "
        f"peak RSS {peak:.0f} MiB; load average at the start {load0:.2f}, at the end "
        f"{os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs). "
        f"Poisson q = {Q}, σ = {SIGMA}, δ = {DELTA:g}; ε is the certified upper end (privamp) or "
        "the value reported (dp_accounting), rounded up.",
        "",
        "| case | per-step calls + one query (s) | one batched call (s) | ratio | ε per-step | "
        "ε batched |",
        "|---|---|---|---|---|---|",
    ]
    for name, t_s, t_b, eps_s, eps_b in rows:
        lines.append(f"| {name} | {t_s:.3f} | {t_b:.3f} | {t_s / t_b:.2f}x | {upper(eps_s, 6)} "
                     f"| {upper(eps_b, 6)} |")
    lines += [
        "",
        "| privamp case | seconds | compared with | ε |",
        "|---|---|---|---|",
        f"| 10 noise levels cycled through 100 runs of 100 steps (10,000 step calls) | "
        f"{t_sched:.3f} | one level, one batched call: {t_one:.3f} s | {upper(eps_sched, 6)} |",
        f"| 20 epochs x 500 steps, ε after every epoch (20 queries) | {t_ep:.3f} | one query "
        f"at 10,000 steps: {t_one:.3f} s | {upper(eps_ep, 6)} |",
        f"| the same with `Accountant(horizon=10_000)` (grids planned for the run, steps and "
        f"transforms reused) | {t_hz:.3f} | one query at 10,000 steps: {t_one:.3f} s | "
        f"{upper(eps_hz, 6)} |",
    ]
    for name, t_pe, eps_pe in epoch_peers:
        lines.append(f"| {name}: the same 20 epochs, `compose(event, 500)` and `get_epsilon` "
                     f"after each | {t_pe:.3f} | | {upper(eps_pe, 6)} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
