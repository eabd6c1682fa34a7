"""The one-sided tail bounds of a pair curve (``p_tail_upper`` / ``p_tail_lower``, what the
Fourier backend discretises with) are the same numbers as the loop over ``p_tail_bounds`` they
replaced — for every registered mechanism's first example, unsampled and on a scheme of each
kind (Poisson's own pair curves override the slopes; the amplified profiles of WR, MUST and WOR
use the default secants, of which each side now evaluates only the one it needs) and for the
group split curves. They evaluate the curve fewer times, never differently."""

from __future__ import annotations

import numpy as np
import pytest

from privamp import GaussianMechanism, LaplaceMechanism
from privamp.errors import PrivampError
from privamp.mechanisms import REGISTRY
from privamp.pld.builders import pair_curves
from privamp.pld.fourier import _CURVE_TAUS
from privamp.pld.group import group_pair_curves
from privamp.relations import NeighbouringRelation
from privamp.sampling import WOR, WR, MustOW, Poisson

R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE
SCHEMES = {"none": (None, R), "poisson": (Poisson(0.1), R), "poisson-1": (Poisson(1.0), R),
           "wor": (WOR(100, 10), S), "wr": (WR(100, 10), S), "must-ow": (MustOW(100, 50, 10), S)}
# both sides of 0, the atoms' neighbourhood and far tails; each nudged one ulp as the backend does
X = np.concatenate([np.linspace(-4.0, 12.0, 97), [0.0, 1e-12, -1e-12, 40.0, 700.0, np.inf]])


def _curves(name, scheme_key):
    scheme, rel = SCHEMES[scheme_key]
    mech = REGISTRY[name].examples(rel)[0]
    try:
        return list(pair_curves(mech, scheme, None if scheme is None else rel).values())
    except PrivampError:
        return []  # a combination privamp refuses has no curve to check


def _old(curve, x_dn, x_up):
    t_up, t_lo = np.ones(x_dn.shape), np.zeros(x_up.shape)
    for tau in _CURVE_TAUS:
        _, up = curve.p_tail_bounds(x_dn, tau)
        lo, _ = curve.p_tail_bounds(x_up, tau)
        t_up = np.fmin(t_up, np.where(np.isnan(up), 1.0, up))
        t_lo = np.fmax(t_lo, np.where(np.isnan(lo), 0.0, lo))
    return t_up, t_lo


def _check(curve):
    x_dn, x_up = np.nextafter(X, -np.inf), np.nextafter(X, np.inf)
    with np.errstate(all="ignore"):
        t_up, t_lo = _old(curve, x_dn, x_up)
        up = curve.p_tail_upper(x_dn, _CURVE_TAUS)
        lo = curve.p_tail_lower(x_up, _CURVE_TAUS)
    np.testing.assert_array_equal(up, t_up)
    np.testing.assert_array_equal(lo, t_lo)
    assert np.all((0.0 <= lo) & (up <= 1.0))
    if curve.convex:  # both bound the one pair's survival (lo at x⁺, up at x⁻)
        assert np.all(lo <= up)


@pytest.mark.parametrize("scheme_key", list(SCHEMES))
@pytest.mark.parametrize("name", list(REGISTRY))
def test_one_sided_tails_equal_the_two_sided_loop(name, scheme_key):
    for curve in _curves(name, scheme_key):
        _check(curve)


@pytest.mark.parametrize("mech", [GaussianMechanism(2.0), LaplaceMechanism(2.0)], ids=repr)
def test_group_split_curves_too(mech):
    curves, bound = group_pair_curves(mech, Poisson(0.1), None, 3)
    assert bound == "tight"
    for curve in curves.values():
        _check(curve)
