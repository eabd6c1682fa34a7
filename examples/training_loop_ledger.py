"""DP-SGD in a plain NumPy training loop, accounted step by step with privamp's ledger.

The loop is what a JAX or NumPy user writes: draw a batch, clip per-example gradients to norm C,
sum, add Gaussian noise of standard deviation z·C, step. After each step it records the step in
the ledger (``acc.step(mechanism, scheme=...)``); equal steps merge into one line, so this costs
what one ``add(mechanism, T)`` costs however many steps are recorded. After each epoch it prints
the certified ε bracket; half-way it saves the ledger to JSON and continues from the saved file,
as a resumed training run would.

Sensitivity convention: the clipped sum has sensitivity C under add/remove (Poisson batches)
and 2C under substitution (fixed-size batches, WOR) — ``GaussianMechanism(z, sensitivity=...)``
in units of C, through :func:`privamp.clipped_sum_sensitivity`.

Usage: python examples/training_loop_ledger.py [--n N] [--batch B] [--epochs E] [--sigma Z]
       [--sampling {poisson,wor}] [--delta D] [--seed K] [--state PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from privamp import Accountant, GaussianMechanism, clipped_sum_sensitivity
from privamp.applications import SchemeBatchSampler
from privamp.display import lower, upper
from privamp.sampling import Poisson, WithoutReplacement


def data(n: int, dim: int, rng: np.random.Generator):
    x = rng.normal(size=(n, dim))
    w = np.linspace(1.5, -1.0, dim)
    y = (x @ w + 0.5 * rng.normal(size=n) > 0).astype(float)
    return x, y


def clipped_gradients(w: np.ndarray, x: np.ndarray, y: np.ndarray, clip: float) -> np.ndarray:
    """Per-example logistic-loss gradients, each clipped to norm ``clip``."""
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    g = (p - y)[:, None] * x
    norms = np.maximum(np.linalg.norm(g, axis=1) / clip, 1.0)
    return g / norms[:, None]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--sigma", type=float, default=1.0, help="noise multiplier z")
    ap.add_argument("--sampling", choices=("poisson", "wor"), default="poisson")
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--state", type=Path, default=None, help="where to save the ledger")
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    x, y = data(args.n, 5, rng)
    clip, lr = 1.0, 0.5
    if args.sampling == "poisson":
        scheme, relation = Poisson(args.batch / args.n), "add-remove"
    else:
        scheme, relation = WithoutReplacement(args.n, args.batch), "substitute"
    sensitivity = clipped_sum_sensitivity(clip, relation)  # C or 2C
    mech = GaussianMechanism(args.sigma * clip, sensitivity=sensitivity, relation=relation)
    steps_per_epoch = args.n // args.batch
    sampler = SchemeBatchSampler(scheme, steps=steps_per_epoch * args.epochs, n=args.n, rng=rng)
    print(f"{args.sampling} batches of {args.batch} of n={args.n}, z={args.sigma}, "
          f"{steps_per_epoch} steps an epoch, {relation} (clipped-sum sensitivity "
          f"{sensitivity:g}C), delta={args.delta:g}")

    state = args.state or Path(tempfile.mkdtemp()) / "ledger.json"
    # the grids are planned for the whole run: each epoch's query reuses the previous ones'
    # discretised steps and transforms (the horizon is kept by save/load)
    acc = Accountant(horizon=steps_per_epoch * args.epochs)
    w = np.zeros(x.shape[1])
    started = time.perf_counter()
    for step, batch in enumerate(sampler, 1):
        g = clipped_gradients(w, x[batch], y[batch], clip).sum(axis=0)
        noisy = g + rng.normal(scale=args.sigma * clip, size=g.shape)
        w -= lr * noisy / sampler.expected_batch_size  # a fixed normaliser (see samplers.py)
        acc.step(mech, scheme=scheme)  # one ledger line, whatever the number of steps
        if step % steps_per_epoch == 0:
            epoch = step // steps_per_epoch
            b = acc.epsilon(args.delta)
            acc_rate = float(np.mean((x @ w > 0) == (y > 0.5)))
            print(f"epoch {epoch}: {acc.steps} steps, epsilon in [{lower(b.lower, 4)}, "
                  f"{upper(b.upper, 4)}], training accuracy {acc_rate:.3f}")
            if epoch == args.epochs // 2:
                acc.save(state)
                acc = Accountant.load(state)  # as a resumed run would
                print(f"  ledger saved to {state} and loaded back ({acc.steps} steps)")
    print(f"{time.perf_counter() - started:.2f} s for {acc.steps} steps and "
          f"{args.epochs} queries")
    print(acc.explain())
    return 0


if __name__ == "__main__":
    sys.exit(main())
