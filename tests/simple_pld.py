"""A second, simple PLD for the group tests (independent of privamp's engine): δ(ε) of
``steps`` compositions of the split pair P = Σ_i Bin(i; a, q) F(· − iθ) against
Q = Σ_j Bin(j; b, q) F(· + jθ) of a location family F (scipy's ``norm`` or ``laplace``).

Outputs on a fine grid; each cell's P-mass put at the loss of its right end (upper: the loss is
non-decreasing in the output) or left end (lower), rounded up/down onto a loss grid of spacing h
and convolved (FFT: its ~1e-16 absolute error is far below the tests' tolerances); the mass beyond
the output grid goes to +∞ (upper) or is dropped (lower). Returns ``(lower, upper)``."""

from __future__ import annotations

import numpy as np
from scipy import signal, stats


def simple_split_delta(family, theta, q, a, b, steps, eps, *, reach, h=5e-4):
    t = np.linspace(-reach - b * theta, reach + a * theta, 400_001)
    wa = stats.binom.pmf(np.arange(a + 1), a, q)
    wb = stats.binom.pmf(np.arange(b + 1), b, q)
    cdf = sum(w * family.cdf(t - i * theta) for i, w in enumerate(wa))
    mass = np.diff(cdf)
    lp = np.log(sum(w * family.pdf(t, i * theta) for i, w in enumerate(wa)))
    lq = np.log(sum(w * family.pdf(t, -j * theta) for j, w in enumerate(wb)))
    loss = lp - lq
    out_mass = 1 - mass.sum()
    res = []
    for upper in (True, False):
        ends = loss[1:] if upper else loss[:-1]
        idx = np.ceil(ends / h) if upper else np.floor(ends / h)
        base = int(idx.min())
        pmf = np.bincount((idx - base).astype(int), weights=mass)
        total, off = np.array([1.0]), 0
        for _ in range(steps):
            total = np.maximum(signal.fftconvolve(total, pmf), 0.0)
            off += base
        losses = (np.arange(total.size) + off) * h
        d = float(np.sum(total * np.maximum(0.0, -np.expm1(eps - losses))))
        if upper:
            d += 1 - (1 - out_mass) ** steps + 1e-12
        res.append(d)
    return res[1], res[0]
