"""Discrete pairs in the PLD engine against a brute-force composition.

A pair whose two orders coincide (randomized response, or any pair that is its own swap up
to relabelling) lists the atoms of its loss (``DiscretePairProfile.curve_kinks``), so the engine
puts them on its grid and both ends are tight. Before, such a pair given as a
:class:`~privamp.DiscretePairMechanism` had a lower end of 0 under Poisson sampling, while the
same pair as :class:`~privamp.RandomizedResponse` had a 1e-8-wide bracket.
"""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest

from privamp import Accountant, DiscretePairMechanism, RandomizedResponse
from privamp.sampling import Poisson

SYMMETRIC = [([0.75, 0.25], [0.25, 0.75]), ([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]),
             ([0.6, 0.4, 0.0], [0.0, 0.4, 0.6])]


def _exact_delta(p, q, rate, steps, eps):
    """max over the two orientations of Poisson sampling (remove: ((1−γ)Q + γP, Q); add: the
    reverse) of the hockey-stick divergence of the T-fold products, 40 digits, by enumeration."""
    with mp.workdps(40):
        p = [mp.mpf(x) for x in p]
        q = [mp.mpf(x) for x in q]
        g = mp.mpf(rate)
        mix = [(1 - g) * b + g * a for a, b in zip(p, q, strict=True)]
        alpha = mp.e ** mp.mpf(eps)
        best = mp.mpf(0)
        for a, b in ((mix, q), (q, mix)):
            total = mp.mpf(0)
            for seq in itertools.product(range(len(p)), repeat=steps):
                pa = mp.fprod(a[i] for i in seq)
                pb = mp.fprod(b[i] for i in seq)
                total += max(pa - alpha * pb, 0)
            best = max(best, total)
        return best


@pytest.mark.parametrize(("p", "q"), SYMMETRIC)
@pytest.mark.parametrize("rate", [0.01, 0.5, 1.0])
def test_symmetric_pair_brackets_the_brute_force_delta(p, q, rate):
    steps, eps = 4, 0.05
    mech = DiscretePairMechanism(p, q)
    b = Accountant("pld").add(mech, steps, scheme=Poisson(rate)).delta(eps)
    exact = _exact_delta(p, q, rate, steps, eps)
    assert b.lower is not None and b.lower <= exact <= b.upper, (b, float(exact))
    acc = Accountant("pld").add(mech, steps, scheme=Poisson(rate))
    assert acc.lower_end_of == "mechanism"  # the lower end bounds the mechanism's own δ
    if len(p) == 2 or rate == 1.0:
        # the loss atoms lie on one grid (two outcomes: ±l; no subsampling: the pair's own):
        # tight. Three incommensurate subsampled atoms take the tangent construction, whose
        # lower end is valid but looser (16 % at rate ½; the upper end is exact)
        assert b.upper - b.lower <= 2e-3 * b.upper, b


def test_discrete_pair_equals_randomized_response():
    """The same pair as a DiscretePairMechanism and as RandomizedResponse: the same bracket."""
    rr = Accountant("pld").add(RandomizedResponse(0.75), 10, scheme=Poisson(0.01)).epsilon(1e-5)
    dp = Accountant("pld").add(DiscretePairMechanism([0.75, 0.25], [0.25, 0.75]), 10,
                               scheme=Poisson(0.01)).epsilon(1e-5)
    np.testing.assert_allclose([dp.lower, dp.upper], [rr.lower, rr.upper], rtol=1e-9)


def test_asymmetric_pair_lists_no_kinks():
    """The maximum of two different curves kinks where they cross, which are not listed: no
    kinks at all rather than an incomplete list."""
    mech = DiscretePairMechanism([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])
    assert mech.profile().curve_kinks() is None
    pos, err = DiscretePairMechanism([0.75, 0.25], [0.25, 0.75]).profile().curve_kinks()
    np.testing.assert_allclose(pos, [-np.log(3), np.log(3)], rtol=1e-15)
    assert 0 < err < 1e-13
