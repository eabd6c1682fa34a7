"""Groups of K records under Poisson subsampling of the Laplace mechanism (issue 20, item 2;
:mod:`privamp.pld.group_laplace`).

References, all independent of the code under test:

* one step: the hockey-stick divergence of the double mixture in mpmath (40 digits), from its
  root found by bisection on p − αq and the closed-form Laplace tails, itself checked against
  mpmath quadrature of ``∫ (p − αq)⁺`` split at the centres and the root;
* the slope ``−Q(L > ε)`` from the same mpmath root;
* the domination claim: the exact hockey-stick divergence of the subsampled mechanism on
  concrete datasets with shifts of any sign and size (every subset enumerated, a fine grid);
* small compositions: a second, simple PLD (the loss on a fine grid of outputs, rounded up or
  down onto a loss grid, convolved with numpy);
* boundaries: K = 1 is privamp's Poisson Laplace pair (:class:`PoissonPairCurve`), q = 1 the
  Laplace mechanism at sensitivity KΔ, ε at and beyond L_max and below L_min;
* the current alternative (the coupling bound) is never better.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from privamp import Accountant, LaplaceMechanism
from privamp.errors import InvalidParameterError
from privamp.mechanisms.laplace import LaplaceProfile
from privamp.pld.builders import pair_curves
from privamp.pld.curves import ProfileCurve
from privamp.pld.group import group_bound, group_pair_curves
from privamp.pld.group_laplace import GroupLaplaceCurve
from privamp.profiles import MinimumProfile
from privamp.sampling import Poisson
from simple_pld import simple_split_delta

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 40

QS = (1e-6, 0.01, 0.3, 1.0)
THETAS = (0.05, 0.5, 2.0, 10.0)
SPLITS = [(a, k - a) for k in (1, 2, 3, 5) for a in range(k + 1)]


class _MpPair:
    """The double mixture in mpmath: weights, densities, tails, L_min / L_max, the root."""

    def __init__(self, theta, q, a, b):
        th, q = mpmath.mpf(theta), mpmath.mpf(q)
        self.wa = [(mpmath.binomial(a, i) * q**i * (1 - q) ** (a - i), i * th)
                   for i in range(a + 1)]
        self.wb = [(mpmath.binomial(b, j) * q**j * (1 - q) ** (b - j), -j * th)
                   for j in range(b + 1)]
        self.wa = [(w, m) for w, m in self.wa if w > 0]
        self.wb = [(w, m) for w, m in self.wb if w > 0]
        self.lo = min(m for _, m in self.wb)
        self.hi = max(m for _, m in self.wa)
        self.l_max = mpmath.log(self.p(self.hi + 1) / self.qd(self.hi + 1))
        self.l_min = mpmath.log(self.p(self.lo - 1) / self.qd(self.lo - 1))

    def p(self, t):
        return sum(w * mpmath.exp(-abs(t - m)) / 2 for w, m in self.wa)

    def qd(self, t):
        return sum(w * mpmath.exp(-abs(t - m)) / 2 for w, m in self.wb)

    @staticmethod
    def _sf(comps, t):
        return sum(w * (mpmath.exp(-(t - m)) / 2 if t >= m else 1 - mpmath.exp(t - m) / 2)
                   for w, m in comps)

    def root(self, eps):
        """t* with p ≤ αq left of it and ≥ right of it (inside [lo, hi]); None outside."""
        alpha = mpmath.exp(eps)
        if mpmath.mpf(eps) >= self.l_max or mpmath.mpf(eps) <= self.l_min:
            return None
        lo, hi = self.lo, self.hi
        for _ in range(160):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.p(mid) < alpha * self.qd(mid) else (lo, mid)
        return hi

    def hockey(self, eps):
        alpha = mpmath.exp(eps)
        if mpmath.mpf(eps) >= self.l_max:
            return mpmath.mpf(0)
        if mpmath.mpf(eps) <= self.l_min:
            return 1 - alpha
        t = self.root(eps)
        return self._sf(self.wa, t) - alpha * self._sf(self.wb, t)

    def q_tail_loss(self, eps):
        """Q(L > ε)."""
        if mpmath.mpf(eps) >= self.l_max:
            return mpmath.mpf(0)
        if mpmath.mpf(eps) < self.l_min:
            return mpmath.mpf(1)
        if mpmath.mpf(eps) == self.l_min:  # L > L_min exactly right of the lowest centre
            return self._sf(self.wb, self.lo)
        return self._sf(self.wb, self.root(eps))

    def quad(self, eps):
        alpha = mpmath.exp(eps)
        cuts = sorted({m for _, m in self.wa} | {m for _, m in self.wb})
        t = self.root(eps)
        if t is not None:
            cuts = sorted(set(cuts) | {t})
        pts = [-mpmath.inf, *cuts, mpmath.inf]
        return mpmath.quad(lambda x: max(self.p(x) - alpha * self.qd(x), 0), pts)


def _eps_grid(ref):
    lmax, lmin = float(ref.l_max), float(ref.l_min)
    grid = [-3.0, -0.5, -1e-3, 0.0, 1e-3, 0.2, 1.0, lmin, lmin - 1e-9, lmin + 1e-9,
            lmax, lmax - 1e-9, lmax + 1e-9, 0.5 * lmax, 0.5 * lmin, lmax + 1.0]
    return np.array(sorted(set(grid)))


@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("theta", THETAS)
def test_one_step_against_mpmath(theta, q):
    rng = np.random.default_rng(int(theta * 1000 + q * 1e6))
    splits = SPLITS if q in (0.3, 1.0) else [SPLITS[i] for i in rng.choice(len(SPLITS), 6,
                                                                         replace=False)]
    for a, b in splits:
        curve = GroupLaplaceCurve(theta, q, a, b)
        ref = _MpPair(theta, q, a, b)
        eps = _eps_grid(ref)
        up, lo = curve.log_upper(eps), curve.log_lower(eps)
        s_lo, s_hi = curve.slope_bounds(eps, 1e-6)
        for e, u, lw, sl, sh in zip(eps, up, lo, s_lo, s_hi, strict=True):
            exact = ref.hockey(float(e))
            assert lw <= u
            tail = float(ref.q_tail_loss(float(e)))
            assert sl <= -tail * (1 - 1e-12), (a, b, e, sl, tail)
            assert sh >= -tail * (1 + 1e-12), (a, b, e, sh, tail)
            if exact == 0:
                assert lw == -np.inf, (a, b, e, lw)
                continue
            lex = float(mpmath.log(exact))
            assert lw <= lex + 1e-13 * (1 + abs(lex)), (a, b, e, lw, lex)
            assert u >= lex - 1e-13 * (1 + abs(lex)), (a, b, e, u, lex)
            near_atom = min(abs(e - float(ref.l_max)), abs(e - float(ref.l_min))) < 1e-6
            if lex > -600 and not near_atom:  # beyond the doubles' range only bounded
                assert u - lw <= 1e-6 * (1 + abs(lex)), (a, b, e, u, lw, lex)


@pytest.mark.parametrize(("theta", "q", "a", "b"),
                         [(0.5, 0.3, 2, 1), (2.0, 0.01, 0, 3), (0.05, 1.0, 1, 1),
                          (10.0, 0.3, 3, 2)])
def test_the_closed_form_reference_against_quadrature(theta, q, a, b):
    ref = _MpPair(theta, q, a, b)
    for e in (-1.0, -0.01, 0.0, 0.3, float(ref.l_max) / 2):
        exact, quad = ref.hockey(e), ref.quad(e)
        assert abs(exact - quad) <= mpmath.mpf(10) ** -20 * (1 + abs(exact))


@pytest.mark.parametrize(("theta", "q", "a", "b"), [(100.0, 0.3, 5, 5), (40.0, 0.5, 2, 3)])
def test_long_flat_stretches_of_the_loss(theta, q, a, b):
    """Far from every centre but the shared one at 0, L is within rounding of 0 over a long
    stretch (|t| ≲ θ/3): the bracket of the root is wide there, the rise bound keeps the
    values tight."""
    curve = GroupLaplaceCurve(theta, q, a, b)
    ref = _MpPair(theta, q, a, b)
    eps = np.array([-1e-3, -1e-300, 0.0, 1e-300, 1e-3, 0.5])
    up, lo = curve.log_upper(eps), curve.log_lower(eps)
    for e, u, lw in zip(eps, up, lo, strict=True):
        lex = float(mpmath.log(ref.hockey(float(e))))
        assert lw <= lex + 1e-13 * (1 + abs(lex)) and u >= lex - 1e-13 * (1 + abs(lex))
        assert u - lw <= 1e-8 * (1 + abs(lex)), (e, u, lw, lex)


def test_large_group():
    acc = Accountant().add(LaplaceMechanism(4.0), 100, scheme=Poisson(0.001), group_size=24)
    b = acc.epsilon(1e-6)
    small = Accountant().add(LaplaceMechanism(4.0), 100, scheme=Poisson(0.001),
                             group_size=2).epsilon(1e-6)
    assert small.upper < b.lower and math.isfinite(b.upper)
    assert acc.details["group_bound"] == "tight"


def test_values_at_the_atoms():
    """D = 0 from L_max on, D = 1 − α up to L_min, and the loss is bounded (no mass at ∞)."""
    for theta, q, a, b in [(0.5, 0.3, 2, 1), (2.0, 0.01, 0, 3), (1.0, 1.0, 2, 2)]:
        curve = GroupLaplaceCurve(theta, q, a, b)
        ref = _MpPair(theta, q, a, b)
        lmax, lmin = float(ref.l_max), float(ref.l_min)
        assert lmax <= (a + b) * theta * (1 + 1e-15)
        beyond = np.array([lmax * (1 + 1e-9) + 1e-12, lmax + 1, 1e3, np.inf])
        assert np.all(curve.log_upper(beyond) == -np.inf)
        below = np.array([lmin * (1 + 1e-9) - 1e-12, lmin - 1, -1e3])
        one_minus = np.log(-np.expm1(below))
        assert np.allclose(curve.log_upper(below), one_minus, rtol=1e-12, atol=0)
        assert np.all(curve.log_lower(below) <= one_minus)
        assert np.all(curve.log_excess(below) == -np.inf)
        assert curve.log_mass_at_infinity == -np.inf
        assert curve.log_upper(np.array([-np.inf]))[0] == 0.0


# ---- boundaries: K = 1 and q = 1 ---------------------------------------------------------------


@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("theta", THETAS)
def test_group_of_one_is_the_poisson_laplace_pair(theta, q):
    eps = np.concatenate([np.linspace(-3, 3, 31), [-theta, theta, 0.99 * theta]])
    curves = pair_curves(LaplaceMechanism(1.0 / theta), Poisson(q))
    mech_theta = LaplaceMechanism(1.0 / theta).theta
    for (a, b), o in [((1, 0), "remove"), ((0, 1), "add")]:
        g = GroupLaplaceCurve(mech_theta, q, a, b)
        ref = curves[o]
        assert np.all(g.log_lower(eps) <= ref.log_upper(eps) + 1e-12)
        assert np.all(ref.log_lower(eps) <= g.log_upper(eps) + 1e-12)
        fin = np.isfinite(ref.log_upper(eps)) & (ref.log_upper(eps) > -500)
        # the values subtract tails of size ~½ known to ~1e-14 relative: 2e-7 relative at
        # q = 1e-6 where the value is ~q (valid either way: the brackets above)
        assert np.allclose(g.log_upper(eps)[fin], ref.log_upper(eps)[fin], rtol=0,
                           atol=1e-9 + 1e-11 / q)


@pytest.mark.parametrize("theta", THETAS)
@pytest.mark.parametrize(("a", "b"), [(2, 0), (1, 2), (0, 3), (4, 1)])
def test_rate_one_is_the_laplace_mechanism_at_k_times_the_sensitivity(theta, a, b):
    curve = GroupLaplaceCurve(theta, 1.0, a, b)
    ref = ProfileCurve(LaplaceProfile((a + b) * theta))
    eps = np.concatenate([np.linspace(-2 * (a + b) * theta, 2 * (a + b) * theta, 61), [0.0]])
    assert np.all(curve.log_lower(eps) <= ref.log_upper(eps) + 1e-12)
    assert np.all(ref.log_lower(eps) <= curve.log_upper(eps) + 1e-12)


def test_total_variation_bound():
    for q, k in itertools.product((1e-12, 1e-6, 0.01, 0.5), (2, 5)):
        for a in range(k + 1):
            curve = GroupLaplaceCurve(1.0, q, a, k - a)
            tv = float(np.exp(curve.log_upper(np.array([0.0]))[0]))
            assert 0 <= tv <= -math.expm1(k * math.log1p(-q)) * (1 + 1e-9) + 1e-11


# ---- the domination claim on concrete datasets -------------------------------------------------


def _subsampled_hockey(shifts_x, shifts_xp, q, eps):
    """D_{e^ε}(M(x) ‖ M(x')) of the Poisson-subsampled 1-D Laplace mechanism (b = 1): x has
    extra records moving the output by ``shifts_x``, x' by ``shifts_xp``; every subset
    enumerated; the integral on a fine grid (trapezoid)."""
    def mix(shifts):
        for r in range(len(shifts) + 1):
            for sub in itertools.combinations(range(len(shifts)), r):
                yield q**r * (1 - q) ** (len(shifts) - r), sum(shifts[i] for i in sub)

    t = np.linspace(-45, 45, 900_001)
    p = sum(w * stats.laplace.pdf(t, m) for w, m in mix(shifts_x))
    qd = sum(w * stats.laplace.pdf(t, m) for w, m in mix(shifts_xp))
    return float(np.trapezoid(np.maximum(p - math.exp(eps) * qd, 0.0), t))


@pytest.mark.parametrize("seed", range(5))
def test_the_pair_dominates_concrete_datasets(seed):
    rng = np.random.default_rng(seed)
    theta = float(rng.uniform(0.3, 2.0))
    q = float(rng.uniform(0.05, 0.9))
    a, b = int(rng.integers(0, 3)), int(rng.integers(0, 3))
    if a + b == 0:
        a = 1
    sx = list(rng.uniform(-theta, theta, a))
    sxp = list(rng.uniform(-theta, theta, b))
    curve = GroupLaplaceCurve(theta, q, a, b)
    # the aligned datasets (a sum query, +Δ and −Δ) attain the pair
    aligned = _subsampled_hockey([theta] * a, [-theta] * b, q, 0.2)
    assert abs(aligned - float(np.exp(curve.log_upper(np.array([0.2]))[0]))) < 1e-7
    for e in (-0.5, 0.0, 0.2, 1.0):
        got = _subsampled_hockey(sx, sxp, q, e)
        assert got <= float(np.exp(curve.log_upper(np.array([e]))[0])) + 1e-8


# ---- composition: a second, simple PLD; the coupling bound ------------------------------------


def _simple_delta(theta, q, a, b, steps, eps):
    """The shared simple PLD (``tests/simple_pld.py``) of this family's split pair."""
    return simple_split_delta(stats.laplace, theta, q, a, b, steps, eps, reach=40)


@pytest.mark.parametrize(("theta", "q", "k", "steps"),
                         [(1.0, 0.3, 2, 3), (0.7, 0.5, 3, 2), (1.5, 0.1, 2, 4)])
def test_composition_against_a_simple_pld(theta, q, k, steps):
    eps = 1.0
    los, ups = zip(*[_simple_delta(theta, q, a, k - a, steps, eps) for a in range(k + 1)],
                   strict=True)
    ref_lo, ref_up = max(los), max(ups)
    acc = Accountant().add(LaplaceMechanism(1 / theta), steps, scheme=Poisson(q), group_size=k)
    b = acc.delta(eps)
    assert b.lower <= ref_up and ref_lo <= b.upper, (b, ref_lo, ref_up)
    assert ref_up - ref_lo < 0.02 * ref_up  # the reference is informative
    assert acc.details["group_bound"] == "tight" and acc.lower_end_of == "mechanism"


@pytest.mark.parametrize(("theta", "q", "k"), [(0.5, 0.01, 2), (1.0, 0.05, 4), (2.0, 0.2, 3)])
def test_not_above_the_coupling_bound(theta, q, k):
    mech = LaplaceMechanism(1 / theta)
    tight = Accountant().add(mech, 200, scheme=Poisson(q), group_size=k).epsilon(1e-5)
    # the coupling bound privamp used before (module privamp.pld.group), composed alone
    from privamp.amplification.subsampling import amplify
    from privamp.pld.engine import PldEvent, pld_epsilon

    amp = amplify(mech, Poisson(q), None)
    prof = MinimumProfile([amplify(mech, Poisson(q), None, group_size=k),
                           amp.group(k, "black-box")])
    res = pld_epsilon([PldEvent({"symmetric": ProfileCurve(prof)}, 200)], 1e-5, lower=False)
    assert tight.upper <= res.bracket.upper
    one = Accountant().add(mech, 200, scheme=Poisson(q)).epsilon(1e-5)
    assert one.upper < tight.lower


def test_group_of_one_through_the_accountant():
    """The K = 1 split curves composed give the plain Poisson bracket (overlap)."""
    from privamp.pld.engine import PldEvent, pld_epsilon

    mech = LaplaceMechanism(2.0)
    plain = Accountant().add(mech, 300, scheme=Poisson(0.02)).epsilon(1e-5)
    curves = {"remove": GroupLaplaceCurve(mech.theta, 0.02, 1, 0),
              "add": GroupLaplaceCurve(mech.theta, 0.02, 0, 1)}
    got = pld_epsilon([PldEvent(curves, 300)], 1e-5).bracket
    assert got.lower <= plain.upper and plain.lower <= got.upper


# ---- wiring and input ----------------------------------------------------------------------------


def test_wiring():
    curves, bound = group_pair_curves(LaplaceMechanism(2.0), Poisson(0.01), None, 3)
    assert bound == "tight" and sorted(curves) == ["add", "mixed1", "mixed2", "remove"]
    assert all(isinstance(c, GroupLaplaceCurve) for c in curves.values())
    assert curves["mixed1"].orientation == "mixed1" and curves["mixed1"].group_size == 3
    assert (curves["mixed2"].n_remove, curves["mixed2"].n_add) == (2, 1)
    assert group_bound(LaplaceMechanism(2.0), Poisson(0.01), None) == "tight"
    assert group_bound(LaplaceProfile(0.5), Poisson(0.01), None) == "tight"
    # a Laplace mechanism stated under substitution is not this pair
    sub = LaplaceMechanism(2.0, relation="substitute")
    assert group_bound(sub, Poisson(0.01), "add-remove") != "tight"
    # the mechanism's lower values use Δ/b rounded down
    c = group_pair_curves(LaplaceMechanism(3.0), Poisson(0.01), None, 2)[0]["remove"]
    assert c.theta_lower <= 1 / 3 <= c.theta


def test_bad_curve_parameters():
    with pytest.raises(InvalidParameterError, match="theta"):
        GroupLaplaceCurve(-1.0, 0.1, 1, 1)
    with pytest.raises(InvalidParameterError, match="theta"):
        GroupLaplaceCurve(math.nan, 0.1, 1, 1)
    with pytest.raises(InvalidParameterError, match="rate"):
        GroupLaplaceCurve(1.0, 0.0, 1, 1)
    with pytest.raises(InvalidParameterError, match="rate"):
        GroupLaplaceCurve(1.0, 1.5, 1, 1)
    with pytest.raises(InvalidParameterError, match="n_remove"):
        GroupLaplaceCurve(1.0, 0.1, -1, 1)
    with pytest.raises(InvalidParameterError, match="n_remove"):
        GroupLaplaceCurve(1.0, 0.1, 0, 0)
    with pytest.raises(InvalidParameterError, match="theta_lower"):
        GroupLaplaceCurve(1.0, 0.1, 1, 1, theta_lower=2.0)


def test_cli_group_size(capsys):
    from cli_helpers import run_json

    out = run_json(["epsilon", "--mechanism", "laplace", "--scale", "2", "--sampling",
                    "poisson", "--rate", "0.01", "--steps", "100", "--delta", "1e-5",
                    "--group-size", "2"], capsys)
    assert out["group_bound"] == "tight" and out["group_size"] == 2


@pytest.mark.parametrize("scale", [0.3, 0.7, 3.0, 1 / 3])
def test_laplace_mechanism_lower_values_use_theta_rounded_down(scale):
    """Δ/b is not a double: the profile's upper values use it rounded up, its lower values
    rounded down, so both bracket the exact 1 − e^{(ε−θ)/2} (mpmath, 50 digits) even at ε
    within a few ulp of θ, where a 1-ulp error of θ changes δ by a large relative amount."""
    from privamp import LaplaceMechanism

    with mpmath.workdps(50):
        _check_laplace_rounding(LaplaceMechanism(scale), scale)


def _check_laplace_rounding(mech, scale):
    mp = mpmath
    prof = mech.profile()
    theta = mp.mpf(1) / mp.mpf(scale)
    assert prof.theta_lower <= theta <= prof.theta
    top = float(theta)
    eps = np.array([top * (1 - 1e-9), np.nextafter(top, 0), np.nextafter(np.nextafter(top, 0), 0),
                    top / 2, 0.0])
    for e, lo, up in zip(eps, prof.log_delta_lower(eps), prof.log_delta(eps), strict=True):
        exact = 1 - mp.exp((mp.mpf(e) - theta) / 2)
        if exact <= 0:
            assert lo == -np.inf
            continue
        assert lo <= float(mp.log(exact)) <= up
    assert mech.profile().group(3).theta_lower <= 3 * theta <= mech.profile().group(3).theta
