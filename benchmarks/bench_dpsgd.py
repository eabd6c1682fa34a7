"""One DP-SGD epoch over 10^6 records (logistic regression, d = 20) with each sampling scheme.

    .venv/bin/python benchmarks/bench_dpsgd.py [--n 1000000] [--m 1000] [--b 2000] [--repeat 3]

An epoch is n/m steps of batch size m (Poisson: rate m/n); MUST uses b = 2m stage-I records.
For each scheme the script reports (best of ``--repeat`` runs):

* ``epoch``: the whole training loop (sampling, per-example gradients of the distinct records,
  clipping, the weighted sum, the noise, the update), without the loss history;
* ``sampling``: drawing the epoch's batches alone (``scheme.sample``);
* ``distinct``: the mean number of distinct records per batch (= gradient evaluations);
* ``accounting``: the certified ε at δ = 1e-6 of that epoch at noise multiplier 1 (PLD
  accountant, once: it does not depend on the data).
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import scipy

from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.applications import DPSGD, LogisticRegression
from privamp.sampling import MustOW, MustWO, MustWW, Poisson, WithoutReplacement, WithReplacement


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--b", type=int, default=None, help="MUST stage-I size (default 2m)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n, d, m = args.n, args.d, args.m
    b = args.b or 2 * m
    steps = n // m
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1))])
    w_true = rng.normal(size=d) / np.sqrt(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w_true)))).astype(float)
    schemes = {
        "poisson": Poisson(m / n),
        "wor": WithoutReplacement(n, m),
        "wr": WithReplacement(n, m),
        "must-ow": MustOW(n, b, m),
        "must-wo": MustWO(n, b, m),
        "must-ww": MustWW(n, b, m),
    }
    print(f"DP-SGD, logistic regression: n = {n}, d = {d}, batch m = {m} (MUST b = {b}), "
          f"{steps} steps per epoch, noise multiplier 1, C = 1")
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, SciPy "
          f"{scipy.__version__}, {platform.machine()}; best of {args.repeat}")
    print(f"{'scheme':>8}  {'epoch (s)':>9}  {'sampling (s)':>12}  {'distinct':>8}  "
          f"{'accounting (s)':>14}  {'epsilon':>8}")
    for name, scheme in schemes.items():
        base = scheme.base_relation(scheme.natural_relation)
        t0 = time.perf_counter()
        sgd = DPSGD(LogisticRegression(), scheme=scheme, steps=steps, clip_norm=1.0,
                    learning_rate=0.5, delta=1e-6, noise_multiplier=1.0)
        accounting = time.perf_counter() - t0
        epoch = sampling = np.inf
        for r in range(args.repeat):
            t0 = time.perf_counter()
            res = sgd.fit(X, y, rng=r, loss_every=0)
            epoch = min(epoch, time.perf_counter() - t0)
            gen = np.random.default_rng(r)
            t0 = time.perf_counter()
            for _ in range(steps):
                scheme.sample(n, gen)
            sampling = min(sampling, time.perf_counter() - t0)
        eps = Accountant().add(GaussianMechanism(1.0, 1.0, base), steps,
                               scheme=scheme).epsilon(1e-6, lower=False).upper
        assert abs(eps - sgd.privacy.epsilon) <= 1e-9 * eps + 1e-12
        print(f"{name:>8}  {epoch:9.3f}  {sampling:12.3f}  {res.distinct.mean():8.1f}  "
              f"{accounting:14.2f}  {sgd.privacy.epsilon:8.4f}")


if __name__ == "__main__":
    main()
