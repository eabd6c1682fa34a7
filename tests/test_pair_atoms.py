"""A pair given by its two PMFs lists the same loss once per outcome, each copy a few ulp off:
the grid must see one atom, not a lattice of step 1e-18.

The two-sided geometric shifted by one on the integers −30 … 31 has the loss log(p_i/q_i) = ±1 at
every outcome, so it *is* randomized response with ε = 1 (P(L = 1) = e/(1 + e) under either law).
Its 62 copies of ±1 differ in their last bits; after Poisson sampling they were 1e-18 apart and
made ``_lattice_step`` a lattice of that step: a grid at the memory bound (6.7M points, 60 s at
10⁴ steps). Checked here: the atoms merge, the grid is the accuracy's, and the bracket agrees
with randomized response's, computed by its own curve (an independent path), for both
orientations' worst case, at several rates including γ = 1 and without sampling.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from privamp import Accountant, DiscretePairMechanism, RandomizedResponse
from privamp.pld.grids import _finite_atoms, _lattice_step
from privamp.sampling import Poisson

SUPPORT = np.arange(-30, 32).astype(float)


def _geometric_pair(scale: float = 1.0):
    p = np.exp(-np.abs(SUPPORT - 1) / scale)
    q = np.exp(-np.abs(SUPPORT) / scale)
    return DiscretePairMechanism(p / p.sum(), q / q.sum())


def test_copies_of_one_loss_are_one_atom():
    """Near-duplicate positions (a few ulp of the largest) merge; distinct ones stay."""

    class _Atoms:
        def __init__(self, pos):
            self.pos = pos

        def atoms(self):
            return np.asarray(self.pos, dtype=float)

    one = 0.017036863602697852
    copies = [one * (1 + k * 2.2e-16) for k in range(8)] + [-0.006340, -0.006340 * (1 + 4e-16)]
    pos = _finite_atoms(_Atoms(copies))
    assert pos.size == 2
    g = _lattice_step(_Atoms(copies))
    assert g == pytest.approx(one + 0.006340, rel=1e-12)
    # a real lattice (steps 1e-6 of the largest position) is kept whole
    lattice = np.arange(0, 11) * 1e-6
    assert _finite_atoms(_Atoms(lattice)).size == 11
    assert _lattice_step(_Atoms(lattice)) == pytest.approx(1e-6)


@pytest.mark.parametrize("rate", [None, 1.0, 0.5, 0.01, 1e-4])
def test_geometric_pair_is_randomized_response(rate):
    """The PMF pair and randomized response (ε = 1) give overlapping certified brackets, on a
    grid the accuracy sets (far from the memory bound)."""
    scheme = None if rate is None else Poisson(rate)
    steps, delta = 1000, 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = Accountant().add(_geometric_pair(), steps, scheme=scheme)
        b_pair = pair.epsilon(delta)
        rr = Accountant().add(RandomizedResponse.from_epsilon(1.0), steps, scheme=scheme)
        b_rr = rr.epsilon(delta)
    assert b_pair.lower <= b_rr.upper * (1 + 1e-12) and b_rr.lower <= b_pair.upper * (1 + 1e-12)
    assert b_pair.upper - b_pair.lower <= 1e-3 * b_pair.upper
    details = pair.details
    assert details["backend"] == "pld", details  # composed on a grid at every rate here
    assert max(details["fft_sizes"].values()) <= 1 << 20, details
    assert details["grid_upper"] >= 1e-7 * max(b_pair.upper, 1.0), details


def test_geometric_pair_scale_two_meets_the_target_fast_enough():
    """Losses ±1/2: 10⁴ steps under Poisson(0.01) on a grid of at most 2^20 points, bracket
    within the 0.1 % target. (A companion case, not a regression test: it passed before the
    fix too — the copies of ±1/2 happen to come out closer together or equal there.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = Accountant().add(_geometric_pair(2.0), 10_000, scheme=Poisson(0.01))
        b = acc.epsilon(1e-5)
    assert math.isfinite(b.upper) and b.upper - b.lower <= 1e-3 * b.upper
    assert max(acc.details["fft_sizes"].values()) <= 1 << 20, acc.details
