"""Slope brackets where the slope −Q(L > ε) is subnormal or below the smallest double.

``slope_bounds`` must return s_lo ≤ f'(α−) ≤ f'(α+) ≤ s_hi. A relative margin such as
``q·(1 + 1e-12)`` does nothing to a subnormal q (below 2^-1022, accurate only to half a
spacing, 2^-1075), nor to an exp that underflows to 0 while the tail is positive: the curves
below add an absolute slack (``privamp.pld.curves._SUBNORMAL_SLACK``). Checked against 50-digit
mpmath references built from each class's own definition of its pair, at ε chosen (by solving
for them) where the slope is between about 1e-300 and 1e-335:

* the Gaussian and Laplace double mixtures (:class:`GroupGaussianCurve`,
  :class:`RealizedGroupCurve`, :class:`GroupLaplaceCurve`,
  :class:`RealizedLaplaceGroupCurve`): the root t* of L(t) = ε by bisection, Q(T > t) of the
  Q-side mixture in closed form;
* :class:`MixtureCurve`: Σ w_i Q_i(L_i ≥ ε), the weights e^{log w_i} exactly, over mixtures of
  group curves and of discrete pairs (whose own slopes are exact, so only the mixture's rounding
  is tested there);
* :class:`AllocationCurve` and :class:`MaxCurve`: the lower law's curve g = (1 − m) E[(R − α)₊]
  (remove) or (1 − m) α E[(1/α − R)₊] (add), its slopes summed exactly over the law's atoms;
  discrete step laws with subnormal masses (the Gaussian and Laplace laws have none);
* :class:`DiscretePairCurve`: exact suffix sums (no slack needed: the sums of its entries are
  exact where subnormal).

Most of the ε where the tail is below 2^-1075 fail without the slack (the old bound was
exactly 0 there); ``test_ordinary_eps_are_unchanged`` checks that elsewhere the brackets only
widen by the slack (a few 1e-323), and not at all where the slopes are normal floats.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import privamp.pld.allocation as allocation_mod
import privamp.pld.group as group_mod
import privamp.pld.group_laplace as group_laplace_mod
import privamp.pld.mixture_curve as mixture_mod
from privamp.pld.allocation import discrete_allocation_law, random_allocation_curves
from privamp.pld.curves import _SUBNORMAL_SLACK
from privamp.pld.group import GroupGaussianCurve, RealizedGroupCurve, _log_binom
from privamp.pld.group_laplace import GroupLaplaceCurve, RealizedLaplaceGroupCurve
from privamp.pld.mixture_curve import MixtureCurve
from privamp.pld.shuffle import DiscretePairCurve

DPS = 50
TINY = 2.0 ** -1022          # smallest normal double
SPACING = 2.0 ** -1074       # subnormal spacing
MPF = mpmath.mpf


# ---- references: one-dimensional double mixtures ----------------------------------------------


class _Mixture:
    """``P = Σ a_i K(μ_i)`` against ``Q = Σ b_j K(ν_j)`` (K the unit Gaussian or Laplace
    kernel), in mpmath: the loss L(t) = log(dP/dQ)(t) (non-decreasing) and the Q-tail."""

    def __init__(self, kernel: str, p_side, q_side):
        self.kernel = kernel
        self.p = [(MPF(w), MPF(c)) for w, c in p_side]
        self.q = [(MPF(w), MPF(c)) for w, c in q_side]

    def _log_density(self, side, t):
        if self.kernel == "gauss":
            return mpmath.log(mpmath.fsum(w * mpmath.exp(-(t - c) ** 2 / 2) for w, c in side))
        return mpmath.log(mpmath.fsum(w * mpmath.exp(-abs(t - c)) for w, c in side))

    def loss(self, t):
        return self._log_density(self.p, t) - self._log_density(self.q, t)

    def q_tail(self, t):
        """Q(T > t)."""
        if self.kernel == "gauss":
            return mpmath.fsum(w * mpmath.ncdf(c - t) for w, c in self.q)
        out = []
        for w, c in self.q:
            x = t - c
            out.append(w * (mpmath.exp(-x) / 2 if x >= 0 else 1 - mpmath.exp(x) / 2))
        return mpmath.fsum(out)

    def t_at_tail(self, target, lo=-100.0, hi=1500.0):
        """t with Q(T > t) = target (bisection: the tail is decreasing)."""
        lo, hi, target = MPF(lo), MPF(hi), MPF(target)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.q_tail(mid) > target else (lo, mid)
        return lo

    def slope_refs(self, eps: float):
        """``(Q(L ≥ ε) upper, Q(L > ε) lower)``: t_lo < t* ≤ t_hi with L(t_lo) < ε ≤ L(t_hi)
        (L non-decreasing), then Q(L ≥ ε) ≤ Q(T > t_lo) and Q(L > ε) ≥ Q(T > t_hi). The
        bracket: bisection to 1e-6, a bracketing root finder, the ends checked (bisection
        on where the check fails)."""
        e = MPF(eps)
        lo, hi = MPF(-200), MPF(1500)
        assert self.loss(lo) < e <= self.loss(hi), eps
        while hi - lo > 1e-6:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.loss(mid) < e else (lo, mid)
        try:
            t = mpmath.findroot(lambda u: self.loss(u) - e, (lo, hi), solver="anderson")
            width = MPF(10) ** -35
            if lo <= t - width and t + width <= hi and \
                    self.loss(t - width) < e <= self.loss(t + width):
                lo, hi = t - width, t + width
        except (ValueError, ZeroDivisionError):
            pass
        while hi - lo > MPF(10) ** -30:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.loss(mid) < e else (lo, mid)
        return self.q_tail(lo), self.q_tail(hi)


def _tail_points(ref: _Mixture, t_max=None, count=24):
    """Float ε where Q(L > ε) runs from about 1e-300 to 1e-335 (t_max: the loss is constant
    beyond; the points stay 1 below it)."""
    t0, t1 = ref.t_at_tail(MPF("1e-300")), ref.t_at_tail(MPF("1e-335"))
    if t_max is not None:
        t1 = min(t1, MPF(t_max) - 1)
    return sorted({float(ref.loss(t0 + (t1 - t0) * k / (count - 1))) for k in range(count)})


def _check_bracket(curve, points, refs, tau=1e-4):
    """s_lo ≤ −Q(L ≥ ε) and s_hi ≥ −Q(L > ε) at every point; returns the references (Q upper)."""
    eps = np.array(points)
    s_lo, s_hi = curve.slope_bounds(eps, tau)
    bad = []
    for e, lo, hi, (q_ge, q_gt) in zip(eps.tolist(), s_lo.tolist(), s_hi.tolist(), refs,
                                       strict=True):
        if not (MPF(lo) <= -q_ge and MPF(hi) >= -q_gt):
            bad.append((e, lo, mpmath.nstr(-q_ge, 6), hi))
    assert not bad, f"{len(bad)} of {eps.size} brackets miss the slope: {bad[:5]}"
    return [q for q, _ in refs]


def _binom(n, q):
    q = MPF(q)
    return [mpmath.binomial(n, i) * q ** i * (1 - q) ** (n - i) for i in range(n + 1)]


def _group_reference(kernel, theta, rate, a, b):
    """The split's pair from its definition: Bin(i; a, q) at iθ against Bin(j; b, q) at −jθ."""
    th = MPF(theta)
    return _Mixture(kernel, [(w, i * th) for i, w in enumerate(_binom(a, rate)) if w > 0],
                    [(w, -j * th) for j, w in enumerate(_binom(b, rate)) if w > 0])


def _realized_reference(kernel, curve):
    """A realized pair: the hit law's weights e^{log w} (exactly those given) at the centres
    the class rounds down to (its definition of the pair)."""
    mix = curve._up

    def side(log_w, centres):
        return [(mpmath.exp(MPF(float(lw))), MPF(float(c)))
                for lw, c in zip(log_w, centres, strict=True)]

    return _Mixture(kernel, side(mix.la, mix.mu), side(mix.lb, mix.nu))


GAUSS_SPLITS = [(1.0, 0.5, 1, 0), (0.5, 0.01, 2, 0), (2.0, 0.1, 1, 1), (1.0, 0.2, 3, 2),
                (0.3, 1.0, 1, 0), (3.0, 0.3, 2, 1)]
LAPLACE_SPLITS = [(400.0, 0.5, 2, 0), (800.0, 1.0, 1, 0), (260.0, 0.3, 3, 1),
                  (760.0, 0.1, 1, 0), (380.0, 0.05, 2, 2)]


def _subnormal_share(qs):
    return sum(1 for q in qs if q < TINY), sum(1 for q in qs if q < SPACING)


@pytest.mark.parametrize("theta, rate, a, b", GAUSS_SPLITS)
def test_group_gaussian_subnormal_slopes(theta, rate, a, b):
    with mpmath.workdps(DPS):
        ref = _group_reference("gauss", theta, rate, a, b)
        points = _tail_points(ref)
        refs = [ref.slope_refs(e) for e in points]
        qs = _check_bracket(GroupGaussianCurve(theta, rate, a, b), points, refs)
    sub, under = _subnormal_share(qs)
    assert sub >= 10 and under >= 3  # the range was reached (and past the smallest double)


@pytest.mark.parametrize("theta, rate, a, b", LAPLACE_SPLITS)
def test_group_laplace_subnormal_slopes(theta, rate, a, b):
    with mpmath.workdps(DPS):
        ref = _group_reference("laplace", theta, rate, a, b)
        points = _tail_points(ref, t_max=a * theta)
        refs = [ref.slope_refs(e) for e in points]
        qs = _check_bracket(GroupLaplaceCurve(theta, rate, a, b), points, refs)
    sub, _ = _subnormal_share(qs)
    assert sub >= 5


@pytest.mark.parametrize("kernel, shifts", [("gauss", (1.0, 0.5)), ("gauss", (0.7, 0.0)),
                                            ("laplace", (300.0, 0.0)), ("laplace", (260.0, 2.0))])
def test_realized_group_subnormal_slopes(kernel, shifts):
    log_w = _log_binom(3, 0.2)
    cls = RealizedGroupCurve if kernel == "gauss" else RealizedLaplaceGroupCurve
    curve = cls(log_w, shifts[0], shifts[1], "remove")
    with mpmath.workdps(DPS):
        ref = _realized_reference(kernel, curve)
        t_max = None if kernel == "gauss" else float(np.max(curve._up.mu))
        points = _tail_points(ref, t_max=t_max)
        refs = [ref.slope_refs(e) for e in points]
        qs = _check_bracket(curve, points, refs)
    assert _subnormal_share(qs)[0] >= 5


# ---- mixtures -------------------------------------------------------------------------------


def _discrete_pair(rng, top: int):
    """p, q with ``top`` outcomes of subnormal Q-mass and P-mass 1e-12..1e-10 (losses around
    700), the rest of the mass on two ordinary outcomes."""
    q_small = [float(k) * SPACING for k in rng.integers(1, 2 ** 22, size=top)]
    p_small = [float(v) for v in rng.uniform(1e-12, 1e-10, size=top)]
    p = [0.3, 0.7 - math.fsum(p_small)] + p_small
    q = [0.55, 0.45] + q_small
    return p, q


def _discrete_q_tail(p, q, eps, strict):
    """Q(L > ε) or Q(L ≥ ε), L = log(p/q) per outcome, exactly."""
    e = MPF(eps)
    out = []
    for pj, qj in zip(p, q, strict=True):
        if pj == 0:
            continue
        lr = mpmath.inf if qj == 0 else mpmath.log(MPF(pj) / MPF(qj))
        if lr > e or (not strict and lr == e):
            out.append(MPF(qj))
    return mpmath.fsum(out)


def _eps_between(losses, count):
    """ε on a grid from 0 to past the largest loss, kept 1e-6 away from every loss."""
    grid = np.linspace(0.0, max(losses) + 5.0, count)
    keep = [e for e in grid.tolist() if min(abs(e - lr) for lr in losses) > 1e-6]
    return np.array(keep)


@pytest.mark.parametrize("seed", range(6))
def test_mixture_of_discrete_pairs_subnormal_slopes(seed):
    """The components' slopes are exact (DiscretePairCurve): any miss is the mixture's own
    rounding of Σ w_i s_i (subnormal products, and a subnormal weight where drawn)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    pairs = [_discrete_pair(rng, int(rng.integers(1, 4))) for _ in range(n)]
    w = rng.dirichlet(np.ones(n))
    if seed % 2:                 # one weight of e^{-720} (itself subnormal)
        w[-1] = math.exp(-720.0)
        w[0] = 1.0 - math.fsum(w[1:])
    log_w = [math.log(v) for v in w]
    curves = [DiscretePairCurve(p, q) for p, q in pairs]
    mix = MixtureCurve([(lw, lw, c) for lw, c in zip(log_w, curves, strict=True)], "remove")
    losses = [float(lr) for c in curves for lr in c._lr]
    eps = _eps_between(losses, 300)
    s_lo, s_hi = mix.slope_bounds(eps, 1e-4)
    bad, sub = [], 0
    with mpmath.workdps(DPS):
        for i, e in enumerate(eps.tolist()):
            q_ge = mpmath.fsum(mpmath.exp(MPF(lw)) * _discrete_q_tail(p, q, e, False)
                               for lw, (p, q) in zip(log_w, pairs, strict=True))
            q_gt = mpmath.fsum(mpmath.exp(MPF(lw)) * _discrete_q_tail(p, q, e, True)
                               for lw, (p, q) in zip(log_w, pairs, strict=True))
            sub += 0 < q_ge < TINY
            if not (MPF(s_lo[i]) <= -q_ge and MPF(s_hi[i]) >= -q_gt):
                bad.append((e, float(s_lo[i]), mpmath.nstr(-q_ge, 8), float(s_hi[i])))
    assert not bad, f"{len(bad)} of {eps.size} mixture brackets miss: {bad[:4]}"
    assert sub >= 20


REMOVE_SPLITS = [(1.0, 0.5, 1, 0), (0.5, 0.01, 2, 0), (0.3, 1.0, 1, 0), (2.0, 0.2, 3, 0)]


@pytest.mark.parametrize("first, second", [(0, 1), (2, 3), (1, 3)])
def test_mixture_of_group_curves_subnormal_slopes(first, second):
    splits = [REMOVE_SPLITS[first], REMOVE_SPLITS[second]]
    w = np.random.default_rng(10 * first + second).dirichlet(np.ones(2))
    log_w = [math.log(v) for v in w]
    mix = MixtureCurve([(lw, lw, GroupGaussianCurve(*s))
                        for lw, s in zip(log_w, splits, strict=True)], "remove")
    with mpmath.workdps(DPS):
        refs = [_group_reference("gauss", *s) for s in splits]
        # ε where either component's tail is subnormal (the other's is what it is there)
        eps = np.array(sorted(set(_tail_points(refs[0], count=10))
                              | set(_tail_points(refs[1], count=10))))
        s_lo, s_hi = mix.slope_bounds(eps, 1e-4)
        bad, sub = [], 0
        for i, e in enumerate(eps.tolist()):
            parts = [ref.slope_refs(e) for ref in refs]
            weights = [mpmath.exp(MPF(lw)) for lw in log_w]
            q_ge = mpmath.fsum(w * ge for w, (ge, _) in zip(weights, parts, strict=True))
            q_gt = mpmath.fsum(w * gt for w, (_, gt) in zip(weights, parts, strict=True))
            sub += q_ge < TINY
            if not (MPF(s_lo[i]) <= -q_ge and MPF(s_hi[i]) >= -q_gt):
                bad.append((e, float(s_lo[i]), mpmath.nstr(-q_ge, 8), float(s_hi[i])))
    assert not bad, f"{len(bad)} of {eps.size} mixture brackets miss: {bad[:4]}"
    assert sub >= 5


# ---- random allocation --------------------------------------------------------------------


def _allocation_step(rng, orientation: str):
    """A discrete step pair (p, q) whose lower law has subnormal slopes: for ``remove``,
    outcomes of subnormal Q-mass (Q(R ≥ α) subnormal for large α); for ``add``, outcomes
    whose products q·x = p are subnormal (E[R; R ≤ 1/α] subnormal for large α)."""
    k = int(rng.integers(2, 5))
    if orientation == "remove":
        return _discrete_pair(rng, k)
    p_small = [float(v) * SPACING for v in rng.integers(1, 2 ** 30, size=k)]
    q_small = [float(v) for v in rng.uniform(1e-16, 1e-14, size=k)]
    return [0.6, 0.4] + p_small, [0.3, 0.7 - math.fsum(q_small)] + q_small


def _lower_law_refs(sums_x, sums_q, eps, orientation, scale):
    """Slopes of g from the lower law's atoms, exactly: remove −s·Q(R ≥ α) (left) and
    −s·Q(R > α) (right); add −s·E[R; R ≤ 1/α] and −s·E[R; R < 1/α]."""
    alpha = mpmath.exp(MPF(eps))
    x = [MPF(v) for v in sums_x.tolist()]
    q = [MPF(v) for v in sums_q.tolist()]
    if orientation == "remove":
        ge = mpmath.fsum(qi for xi, qi in zip(x, q, strict=True) if xi >= alpha)
        gt = mpmath.fsum(qi for xi, qi in zip(x, q, strict=True) if xi > alpha)
    else:
        inv = 1 / alpha
        ge = mpmath.fsum(qi * xi for xi, qi in zip(x, q, strict=True) if xi <= inv)
        gt = mpmath.fsum(qi * xi for xi, qi in zip(x, q, strict=True) if xi < inv)
    return MPF(scale) * ge, MPF(scale) * gt


def _allocation_eps(laws, orientation, count=120):
    """ε ≥ 0 across the atoms of the lower laws (remove: log x; add: −log x), away from them."""
    logs = []
    for law in laws:
        x = law.x_lo[law.x_lo > 0]
        logs += (np.log(x) if orientation == "remove" else -np.log(x)).tolist()
    top = max(logs)
    grid = np.linspace(0.0, top + 2.0, count)
    return np.array([e for e in grid.tolist() if min(abs(e - v) for v in logs) > 1e-9])


@pytest.mark.parametrize("orientation", ["remove", "add"])
@pytest.mark.parametrize("steps, seed", [(1, 0), (1, 1), (2, 2), (3, 4)])
def test_allocation_subnormal_slopes(orientation, steps, seed):
    rng = np.random.default_rng(seed)
    p, q = _allocation_step(rng, orientation)
    curve = random_allocation_curves(lambda t: discrete_allocation_law(p, q, t),
                                     steps)[orientation]
    law = curve.law
    eps = _allocation_eps([law], orientation)
    s_lo, s_hi = curve.slope_bounds(eps, 1e-4)
    scale = 1 - allocation_mod._MARGIN
    bad, sub = [], 0
    with mpmath.workdps(DPS):
        for i, e in enumerate(eps.tolist()):
            ge, gt = _lower_law_refs(law.x_lo, law.q_lo, e, orientation, scale)
            sub += 0 < ge < TINY
            if not (MPF(s_lo[i]) <= -ge and MPF(s_hi[i]) >= -gt):
                bad.append((e, float(s_lo[i]), mpmath.nstr(-ge, 8), mpmath.nstr(-gt, 8),
                            float(s_hi[i])))
    assert not bad, f"{len(bad)} of {eps.size} allocation brackets miss: {bad[:4]}"
    assert sub >= 5


@pytest.mark.parametrize("orientation", ["remove", "add"])
def test_max_curve_passes_the_slack_through(orientation):
    """MaxCurve only selects among its curves' brackets (the active ones: largest lower value):
    the union of the active curves' exact slopes stays inside."""
    rng = np.random.default_rng(7)
    steps = [_allocation_step(rng, orientation) for _ in range(2)]
    fns = tuple((lambda t, p=p, q=q: discrete_allocation_law(p, q, t)) for p, q in steps)
    curve = random_allocation_curves(fns, 1)[orientation]
    parts = curve.curves
    eps = _allocation_eps([c.law for c in parts], orientation)
    s_lo, s_hi = curve.slope_bounds(eps, 1e-4)
    lows = np.array([c.log_lower(eps) for c in parts])
    active = lows >= lows.max(axis=0)
    scale = 1 - allocation_mod._MARGIN
    bad, sub = [], 0
    with mpmath.workdps(DPS):
        for i, e in enumerate(eps.tolist()):
            refs = [_lower_law_refs(c.law.x_lo, c.law.q_lo, e, orientation, scale)
                    for k, c in enumerate(parts) if active[k, i]]
            ge, gt = max(r[0] for r in refs), min(r[1] for r in refs)
            sub += 0 < ge < TINY
            if not (MPF(s_lo[i]) <= -ge and MPF(s_hi[i]) >= -gt):
                bad.append((e, float(s_lo[i]), mpmath.nstr(-ge, 8), float(s_hi[i])))
    assert not bad, f"{len(bad)} of {eps.size} brackets miss: {bad[:4]}"
    assert sub >= 3


@pytest.mark.parametrize("seed", range(3))
def test_discrete_pair_slopes_need_no_slack(seed):
    """Exact suffix sums of the pair's own entries: the bracket holds at subnormal tails with
    the relative margin alone (privamp.pld.shuffle, DiscretePairCurve.slope_bounds)."""
    p, q = _discrete_pair(np.random.default_rng(seed), 3)
    curve = DiscretePairCurve(p, q)
    eps = _eps_between([float(v) for v in curve._lr], 200)
    s_lo, s_hi = curve.slope_bounds(eps, 1e-4)
    with mpmath.workdps(DPS):
        for i, e in enumerate(eps.tolist()):
            assert MPF(s_lo[i]) <= -_discrete_q_tail(p, q, e, False), e
            assert MPF(s_hi[i]) >= -_discrete_q_tail(p, q, e, True), e


# ---- unchanged elsewhere --------------------------------------------------------------------


def _ordinary_cases():
    """(name, curve factory, how many slacks it may widen by; None: one plus one per small
    moment of an allocation law)."""
    half = math.log(0.5)

    def discrete(orientation):
        p, q = _allocation_step(np.random.default_rng(3), orientation)
        return random_allocation_curves(lambda t: discrete_allocation_law(p, q, t),
                                        1)[orientation]

    return [
        ("group-gauss", lambda: GroupGaussianCurve(1.0, 0.1, 2, 1), 1),
        ("group-gauss-add", lambda: GroupGaussianCurve(0.8, 0.2, 0, 2), 1),
        ("group-laplace", lambda: GroupLaplaceCurve(1.0, 0.2, 1, 1), 1),
        ("realized", lambda: RealizedGroupCurve(_log_binom(3, 0.2), 1.0, 0.5, "remove"), 1),
        # the mixture's own 2 slacks and half of each component's
        ("mixture", lambda: MixtureCurve([(half, half, GroupGaussianCurve(1.0, 0.5, 1, 0)),
                                          (half, half, GroupGaussianCurve(0.5, 0.2, 2, 0))],
                                         "remove"), 3),
        ("allocation-remove", lambda: random_allocation_curves(1.0, 4)["remove"], 1),
        ("allocation-add", lambda: random_allocation_curves(1.0, 4)["add"], 1),
        ("allocation-discrete", lambda: discrete("remove"), 1),
        ("allocation-discrete-add", lambda: discrete("add"), None),
    ]


@pytest.mark.parametrize("name, factory, slacks", _ordinary_cases(),
                         ids=[c[0] for c in _ordinary_cases()])
def test_ordinary_eps_are_unchanged(name, factory, slacks, monkeypatch):
    """With the slack set to 0 the code is the old one: the new brackets contain the old ones,
    differ by at most the slacks (≤ 1e-322 but for the allocation law with small moments),
    and not at all wherever the old bound is a normal float away from 0."""
    curve = factory()
    if slacks is None:
        slacks = 1 + curve._small_moments()
        assert slacks > 1
    else:
        assert slacks * _SUBNORMAL_SLACK <= 1e-322
    eps = np.concatenate([np.linspace(-6.0, 12.0, 181), [0.0, 1e-9, 25.0, 60.0]])
    new_lo, new_hi = curve.slope_bounds(eps, 1e-4)
    for mod in (group_mod, group_laplace_mod, mixture_mod, allocation_mod):
        monkeypatch.setattr(mod, "_SUBNORMAL_SLACK", 0.0)
    old_lo, old_hi = curve.slope_bounds(eps, 1e-4)
    widen = slacks * _SUBNORMAL_SLACK
    assert np.all(new_lo <= old_lo) and np.all(new_hi >= old_hi)
    assert np.all(old_lo - new_lo <= widen) and np.all(new_hi - old_hi <= widen)
    normal_lo = old_lo <= -1e-300
    normal_hi = old_hi <= -1e-300
    assert normal_lo.sum() > 20
    assert np.array_equal(new_lo[normal_lo], old_lo[normal_lo])
    assert np.array_equal(new_hi[normal_hi], old_hi[normal_hi])
