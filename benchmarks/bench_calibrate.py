"""Calibration: privamp against dp_accounting's ``calibrate_dp_mechanism`` (PLD accountant) and
Opacus' ``get_noise_multiplier`` (RDP and PRV accountants).

For each case: seconds in-process (after a warm-up call), the number of accountant evaluations
privamp ran (coarse + fine + the final bracket), the time of one default ``Accountant.epsilon``
at the calibrated value (the unit of "evaluations' time"), the returned value, and the certified
ε of every returned σ by privamp's PLD accountant — a σ whose certified ε is above the target
overshoots. Prints a markdown table.

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/bench_calibrate.py

Peers are optional (skipped when not importable). Runs against any privamp version (the
``coarse_evaluations`` column is blank before it existed).
"""

from __future__ import annotations

import time
import warnings

from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.calibrate import calibrate_must, calibrate_rate, calibrate_sigma, calibrate_steps
from privamp.sampling import MustOW, Poisson

DELTA = 1e-5
Q = 0.01


def timed(fn, repeat=1):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return out, best


def one_eval(mech, steps, scheme):
    return timed(lambda: Accountant().add(mech, steps, scheme=scheme).epsilon(DELTA), 3)


def certified(mech, steps, scheme):
    return Accountant().add(mech, steps, scheme=scheme).epsilon(DELTA, lower=False).upper


def peers_sigma(target, steps):
    rows = []
    try:
        import dp_accounting
        from dp_accounting.mechanism_calibration import calibrate_dp_mechanism
        from dp_accounting.pld import pld_privacy_accountant

        def event(sigma):
            return dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(sigma)),
                steps)

        sigma, sec = timed(lambda: calibrate_dp_mechanism(
            pld_privacy_accountant.PLDAccountant, event, target, DELTA))
        rows.append(("dp_accounting PLD", sigma, sec))
    except ImportError:
        pass
    try:
        from opacus.accountants.utils import get_noise_multiplier

        for acc in ("rdp", "prv"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sigma, sec = timed(lambda acc=acc: get_noise_multiplier(
                    target_epsilon=target, target_delta=DELTA, sample_rate=Q, steps=steps,
                    accountant=acc))
            rows.append((f"Opacus {acc}", sigma, sec))
    except ImportError:
        pass
    return rows


def row(case, tool, value, sec, evals, coarse, unit, eps):
    return (f"| {case} | {tool} | {value:.8g} | {sec:.3f} | {evals} | {coarse} | "
            f"{'' if unit is None else f'{sec / unit:.1f}'} | {eps:.6f} |")


def main() -> None:
    # warm-up (imports, first-call caches)
    calibrate_sigma(1.0, DELTA, steps=100, scheme=Poisson(Q))
    lines = ["| case | tool | value | seconds | evaluations | of which coarse | "
             "× one evaluation | certified ε (privamp PLD) |", "|---|---|---|---|---|---|---|---|"]
    for steps in (1000, 10000):
        for target in (1.0, 2.0, 8.0):
            case = f"σ, ε = {target:g}, T = {steps:g}"
            c, sec = timed(lambda t=target, s=steps: calibrate_sigma(t, DELTA, steps=s,
                                                                   scheme=Poisson(Q)))
            _, unit = one_eval(GaussianMechanism(c.value), steps, Poisson(Q))
            lines.append(row(case, "privamp", c.value, sec, c.evaluations,
                             getattr(c, "coarse_evaluations", ""), unit, c.epsilon))
            for tool, sigma, psec in peers_sigma(target, steps):
                eps = certified(GaussianMechanism(sigma), steps, Poisson(Q))
                lines.append(row(case, tool, sigma, psec, "", "", None, eps))
            print(lines[-1], flush=True)
    mech = GaussianMechanism(1.0)
    c, sec = timed(lambda: calibrate_rate(1.0, DELTA, steps=1000, mechanism=mech))
    _, unit = one_eval(mech, 1000, Poisson(c.value))
    lines.append(row("rate, σ = 1, ε = 1, T = 1e3", "privamp", c.value, sec, c.evaluations,
                     getattr(c, "coarse_evaluations", ""), unit, c.epsilon))
    c, sec = timed(lambda: calibrate_steps(2.0, DELTA, mechanism=mech, scheme=Poisson(Q)))
    _, unit = one_eval(mech, c.value, Poisson(Q))
    lines.append(row("steps, σ = 1, q = 0.01, ε = 2", "privamp", c.value, sec, c.evaluations,
                     getattr(c, "coarse_evaluations", ""), unit, c.epsilon))
    g = GaussianMechanism(2.0, relation="substitute")
    c, sec = timed(lambda: calibrate_must(1.0, DELTA, steps=20, mechanism=g, n=600, kind="ow",
                                          b=150))
    _, unit = one_eval(g, 20, MustOW(600, 150, c.value))
    lines.append(row("MUST.OW m, n = 600, b = 150, σ = 2, T = 20, ε = 1", "privamp", c.value,
                     sec, c.evaluations, getattr(c, "coarse_evaluations", ""), unit, c.epsilon))
    c, sec = timed(lambda: calibrate_must(1.0, DELTA, steps=20, mechanism=g, n=600, kind="ow",
                                          m=10))
    _, unit = one_eval(g, 20, MustOW(600, c.value, 10))
    lines.append(row("MUST.OW b, n = 600, m = 10, σ = 2, T = 20, ε = 1", "privamp", c.value,
                     sec, c.evaluations, getattr(c, "coarse_evaluations", ""), unit, c.epsilon))
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
