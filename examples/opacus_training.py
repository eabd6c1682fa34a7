"""Opacus training with the right accountant: Opacus's own ε next to privamp's, same runs.

A logistic regression on random data is trained by Opacus (DP-SGD, clipping norm C, noise
multiplier z) three times, with batches drawn by a privamp ``TorchBatchSampler``: Poisson at rate
m/n, m records without replacement (WOR) and m draws with replacement (WR). Opacus's accountants
see only ``sample_rate = 1/len(data_loader)`` and assume Poisson sampling under add/remove; the
:class:`~privamp.integrations.opacus.PrivampPrivacyEngine` binds privamp's accountant to the
sampler, so WOR and WR are accounted under substitution (clipped-sum sensitivity 2C).

    python examples/opacus_training.py                       # small, a few seconds
    python examples/opacus_training.py --n 10000 --batch 100 --steps 300   # the issue's setup

Columns: Opacus's rate, the ε of Opacus's RDP and PRV accountants for the history Opacus
recorded, and privamp's certified bracket on ε (its upper end is the guarantee).
"""

from __future__ import annotations

import argparse
import warnings

import torch
from opacus.accountants import PRVAccountant, RDPAccountant
from torch import nn
from torch.utils.data import TensorDataset

from privamp.applications.torch_sampler import TorchBatchSampler
from privamp.integrations.opacus import PrivampPrivacyEngine
from privamp.sampling import Poisson, WithoutReplacement, WithReplacement


def train(scheme, dataset, steps, steps_per_pass, noise_multiplier, clip, seed):
    torch.manual_seed(seed)
    model = nn.Linear(dataset.tensors[0].shape[1], 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    sampler = TorchBatchSampler(scheme, steps=steps_per_pass, rng=seed)
    engine = PrivampPrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=sampler.data_loader(dataset),
        noise_multiplier=noise_multiplier, max_grad_norm=clip)
    done = 0
    while done < steps:
        for xb, yb in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
            done += 1
            if done == steps:
                break
    x, y = dataset.tensors
    accuracy = float((model(x).argmax(1) == y).float().mean())
    return engine, accuracy


def opacus_epsilon(cls, history, delta):
    acc = cls()
    acc.history = list(history)
    return acc.get_epsilon(delta)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1200, help="records")
    parser.add_argument("--batch", type=int, default=20, help="batch size m (Poisson: γ = m/n)")
    parser.add_argument("--steps", type=int, default=60, help="optimizer steps")
    parser.add_argument("--steps-per-pass", type=int, default=None,
                        help="batches per pass of the loader (Opacus's rate is 1/this; "
                             "default: --steps, one pass)")
    parser.add_argument("--noise", type=float, default=1.0, help="noise multiplier z = σ/C")
    parser.add_argument("--clip", type=float, default=1.0, help="clipping norm C")
    parser.add_argument("--delta", type=float, default=1e-5)
    args = parser.parse_args(argv)
    per_pass = args.steps_per_pass or args.steps
    warnings.filterwarnings("ignore", message="Secure RNG turned off")
    warnings.filterwarnings("ignore", message="Full backward hook is firing")

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(args.n, 5, generator=gen)
    y = (x @ torch.tensor([1.0, -0.5, 0.25, 0.0, 0.0]) > 0).long()
    dataset = TensorDataset(x, y)

    print(f"n = {args.n}, batch {args.batch}, {args.steps} steps ({per_pass} per pass), "
          f"z = {args.noise}, C = {args.clip}, δ = {args.delta:g}")
    print(f"{'sampler':8} {'rate':>10} {'opacus-rdp':>11} {'opacus-prv':>11} "
          f"{'privamp-lower':>14} {'privamp-upper':>14}  relation      accuracy")
    schemes = {"Poisson": Poisson(args.batch / args.n, n=args.n),
               "WOR": WithoutReplacement(args.n, args.batch),
               "WR": WithReplacement(args.n, args.batch)}
    for name, scheme in schemes.items():
        engine, accuracy = train(scheme, dataset, args.steps, per_pass, args.noise,
                                 args.clip, seed=1)
        history = engine.accountant.history
        rdp = opacus_epsilon(RDPAccountant, history, args.delta)
        prv = opacus_epsilon(PRVAccountant, history, args.delta)
        bracket = engine.epsilon_bracket(args.delta)
        print(f"{name:8} {history[0][1]:>10.6g} {rdp:>11.4f} {prv:>11.4f} "
              f"{bracket.lower:>14.4f} {bracket.upper:>14.4f}  "
              f"{engine.accountant.relation.value:12}  {accuracy:.3f}")
    print("Opacus assumes Poisson sampling at 1/len(loader) under add/remove; privamp accounts "
          "the sampler used (WOR/WR under substitution, sensitivity 2C).")


if __name__ == "__main__":
    main()
