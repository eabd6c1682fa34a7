"""Exact enumeration of subsampling on tiny datasets, for brute-force checks of amplification.

Datasets are tuples of record labels (ints). A scheme's exact output law is a dict mapping each
subsample — a sorted tuple of labels (a multiset, or a set for Poisson/WOR) — to its probability.
Mechanisms on subsamples are kernels: dicts mapping subsamples to output pmfs. Their exact
(group-)privacy profiles are computed by enumerating all pairs of subsamples at distance ≤ k.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable

import numpy as np

from privamp.divergences import hockey_stick
from privamp.profiles import PrivacyProfile
from privamp.relations import NeighbouringRelation

Subsample = tuple


def poisson_law(x: tuple, rate: float) -> dict[Subsample, float]:
    """Each record kept independently with probability ``rate``."""
    law: Counter = Counter()
    n = len(x)
    for r in range(n + 1):
        for subset in itertools.combinations(x, r):
            law[tuple(sorted(subset))] += rate**r * (1 - rate) ** (n - r)
    return dict(law)


def chain_law(x: tuple, stages) -> dict[Subsample, float]:
    """Exact law of a chain of ('wor' | 'wr', size) stages; the first draws from ``x``."""
    states: dict[tuple, float] = {tuple(x): 1.0}
    for kind, size in stages:
        new: Counter = Counter()
        for current, prob in states.items():
            k = len(current)
            if kind == "wr":
                weight = prob / k**size
                for idx in itertools.product(range(k), repeat=size):
                    new[tuple(sorted(current[i] for i in idx))] += weight
            else:
                combos = list(itertools.combinations(range(k), size))
                weight = prob / len(combos)
                for idx in combos:
                    new[tuple(sorted(current[i] for i in idx))] += weight
        states = dict(new)
    return states


def scheme_law(x: tuple, spec) -> dict[Subsample, float]:
    """``spec``: ("poisson", rate) or ("chain", [(kind, size), ...])."""
    if spec[0] == "poisson":
        return poisson_law(x, spec[1])
    return chain_law(x, spec[1])


def push(law: dict[Subsample, float], kernel: Callable[[Subsample], np.ndarray]) -> np.ndarray:
    """Output pmf of the mechanism run on a subsample drawn from ``law``."""
    return sum(prob * kernel(y) for y, prob in law.items())


def both_directions(p: np.ndarray, q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """max(D_{e^ε}(p‖q), D_{e^ε}(q‖p)), vectorised over ε."""
    return np.maximum(hockey_stick(p, q, eps, measures=True),
                      hockey_stick(q, p, eps, measures=True))


def multiset_distance(a: Subsample, b: Subsample, relation: NeighbouringRelation) -> float:
    """Path distance d_s (equal sizes: ‖a − b‖₁/2, else inf) or d_r (‖a − b‖₁)."""
    ca, cb = Counter(a), Counter(b)
    l1 = sum(((ca - cb) + (cb - ca)).values())
    if relation is NeighbouringRelation.SUBSTITUTE:
        return l1 / 2 if len(a) == len(b) else math.inf
    return float(l1)


class KernelProfile(PrivacyProfile):
    """Exact (group-)privacy profile of a finite kernel on a finite domain of subsamples:
    the max over ordered pairs at distance in [1, k] of the hockey-stick divergence."""

    def __init__(self, kernel: dict[Subsample, np.ndarray], relation: NeighbouringRelation,
                 k: int = 1):
        self.kernel = kernel
        self.relation = relation
        self.k = k
        keys = list(kernel)
        pairs = [(a, b) for a in keys for b in keys
                 if 1 <= multiset_distance(a, b, relation) <= k]
        self._p = np.array([kernel[a] for a, _ in pairs])
        self._q = np.array([kernel[b] for _, b in pairs])

    def _log_delta(self, eps):
        if self._p.size == 0:
            return np.full(eps.shape, -np.inf)
        diff = self._p[None, :, :] - np.exp(np.minimum(eps, 700.0))[:, None, None] * \
            self._q[None, :, :]
        best = np.maximum(diff, 0.0).sum(axis=2).max(axis=1)
        best = np.where(np.isinf(eps), 0.0, best)
        with np.errstate(divide="ignore"):
            return np.log(best) + 1e-12  # tiny margin: this oracle is exact to rounding

    def _white_box_group(self, k):
        return KernelProfile(self.kernel, self.relation, self.k * k)


def random_kernel(domain, outputs: int, rng: np.random.Generator, scale: float):
    """A random smooth kernel: output logits = Σ_{u ∈ y} w_u + c_{|y|} + noise."""
    labels = sorted({u for y in domain for u in y})
    w = {u: rng.normal(size=outputs) * scale for u in labels}
    c = {s: rng.normal(size=outputs) * scale for s in {len(y) for y in domain}}
    kernel = {}
    for y in domain:
        logits = c[len(y)] + sum((w[u] for u in y), np.zeros(outputs))
        logits = logits + rng.normal(size=outputs) * 0.3 * scale
        pmf = np.exp(logits - logits.max())
        kernel[y] = pmf / pmf.sum()
    return kernel


def multisets(universe, size: int):
    return [tuple(c) for c in itertools.combinations_with_replacement(sorted(universe), size)]


def subsets(universe):
    u = sorted(universe)
    return [tuple(c) for r in range(len(u) + 1) for c in itertools.combinations(u, r)]
