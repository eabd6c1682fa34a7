"""The Fourier backend on a bound that is not a curve (``convex`` False: amplified profiles of
black-box group profiles under WR and MUST, Theorem 14).

Its survival bounds used to bracket the curve's slope with secants through the object's *lower*
values — which bound the formula, not any pair — and one step's "upper" δ(ε) came out at half
the greatest convex minorant of the upper values (discrete pair under WR(100, 10), ε = 0.5:
0.00176 against 0.00297), the smallest curve privamp can certify. It now composes the
connect-the-dots pair of the upper values. Checked against an independent reference: the lower
convex hull of the upper values on a fine grid, by a plain monotone chain (the upper end after
one step must not be below it), for every registered mechanism whose amplified profile is not a
curve; and the backend claims no lower end for them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privamp.accountant import Accountant
from privamp.errors import PrivampError
from privamp.mechanisms import REGISTRY
from privamp.pld.builders import pair_curves
from privamp.relations import NeighbouringRelation
from privamp.sampling import WR, MustOW

S = NeighbouringRelation.SUBSTITUTE
SCHEMES = {"wr": WR(100, 10), "must-ow": MustOW(100, 50, 10)}


def _lower_hull(x, y):
    """Vertices of the lower convex hull of points sorted by x (Andrew's monotone chain)."""
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b when it lies on or above the segment from a to i
            if (y[b] - y[a]) * (x[i] - x[a]) >= (y[i] - y[a]) * (x[b] - x[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.array(hull)


def _minorant_at(curve, eps_points):
    eps = np.linspace(-12.0, 30.0, 200_001)
    alpha = np.exp(eps)
    with np.errstate(under="ignore"):
        f = np.exp(curve.log_upper(eps))
    x = np.concatenate([[0.0], alpha])
    y = np.concatenate([[1.0], f])  # every curve starts at (0, 1)
    h = _lower_hull(x, y)
    return np.interp(np.exp(eps_points), x[h], y[h])


def _nonconvex_cases():
    out = []
    for name in REGISTRY:
        mech = REGISTRY[name].examples(S)[0]
        for key, scheme in SCHEMES.items():
            try:
                curves = pair_curves(mech, scheme, S)
            except PrivampError:
                continue
            if not all(c.convex for c in curves.values()):
                out.append(pytest.param(mech, scheme, id=f"{name}-{key}"))
    return out


CASES = _nonconvex_cases()


def test_there_are_such_sources():
    assert len(CASES) >= 2  # the black-box groups of the approx-DP and discrete-pair examples


@pytest.mark.parametrize(("mech", "scheme"), CASES)
def test_one_step_upper_end_is_not_below_the_convex_minorant(mech, scheme):
    (curve,) = pair_curves(mech, scheme, S).values()
    eps = np.array([0.2, 0.5, 1.0, 2.0])
    ref = _minorant_at(curve, eps)
    for e, h in zip(eps.tolist(), ref.tolist(), strict=True):
        got = Accountant("fourier").add(mech, 1, scheme=scheme).delta(e)
        assert got.lower is None
        assert got.upper >= h * (1 - 1e-4) - 1e-300, (e, got.upper, h)


@pytest.mark.parametrize(("mech", "scheme"), CASES)
def test_composed_upper_end_agrees_with_the_pld_backend(mech, scheme):
    """Both compose a dominating pair of the same upper values; the Fourier grid rounds every
    loss up by up to a step per composition (it drifts), so it is the larger, within a few %."""
    fourier = Accountant("fourier").add(mech, 10, scheme=scheme).epsilon(1e-5)
    pld = Accountant("pld").add(mech, 10, scheme=scheme).epsilon(1e-5)
    assert fourier.lower is None and math.isfinite(fourier.upper)
    assert pld.upper * (1 - 1e-3) <= fourier.upper <= pld.upper * 1.05


@pytest.mark.parametrize(("mech", "scheme"), CASES[:2])
def test_a_window_beyond_the_float_range_still_answers(mech, scheme):
    """Grid points beyond |x| = 700 (e^x overflows) are not dots of the hull: below them the
    survival is 1, above them the pair's mass at +∞ — a finite, valid, looser answer (it came
    out NaN, and read as the trivial δ = 1, before)."""
    from privamp.pld.fourier import fourier_accountant

    (curve,) = pair_curves(mech, scheme, S).values()
    ref = _minorant_at(curve, np.array([1.0]))[0]
    wide = fourier_accountant(curve, count=1, L=800.0, r=2**14, eps=1.0)
    assert math.isfinite(wide.upper) and ref * (1 - 1e-4) <= wide.upper < 1.0
