"""The lower end of WOR/WR group brackets, and of Poisson groups beyond the tight split pairs:
realizable pairs of datasets (privamp.pld.group, "A lower end for WOR and WR groups").

The pairs are checked against the output laws of the sum query they stand for, computed by
enumerating every subsample (not from the hit law privamp uses), with 40-digit hockey-stick
divergences; their composition against a two-step brute force; and the accountant's brackets
over the registry's WOR/WR examples, including no amplification (m = n), where the bracket
must close on the plain group Gaussian.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from cli_helpers import run_json
from privamp import Accountant, GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.pld.group import REALIZED_MAX_HITS, realizable_group_curves
from privamp.sampling import WOR, WR, Poisson

SIGMA = 2.0  # Δ = 1 under substitution: θ = 0.5
_T_OF = {"remove": 1, "add": -1, "mixed1": 0}


def _mech(sigma=SIGMA):
    return GaussianMechanism(sigma, relation="substitute")


def _enumerated_pair(scheme, k: int, t: int):
    """Output laws (units of σ) of the sum query on the datasets of the construction: the group
    (records 0..k−1) at +Δ/2 in x and −Δ/2 in x', every other record at −tΔ/2; every subsample
    enumerated with its exact probability. Returns ``({mean: prob}, {mean: prob})``."""
    n, m = scheme.n, scheme.m
    half = Fraction(1, 2)
    phi_x = [half] * k + [-t * half] * (n - k)
    phi_xp = [-half] * k + [-t * half] * (n - k)
    if isinstance(scheme, WOR):
        batches = list(itertools.combinations(range(n), m))
    else:
        batches = list(itertools.product(range(n), repeat=m))
    prob = Fraction(1, len(batches))
    px, pxp = Counter(), Counter()
    for b in batches:
        px[sum(phi_x[i] for i in b) / Fraction(SIGMA)] += prob
        pxp[sum(phi_xp[i] for i in b) / Fraction(SIGMA)] += prob
    return px, pxp


def _mp_hockey(p: dict, q: dict, eps: float, family: str = "gaussian") -> mp.mpf:
    """D_{e^ε}(P ‖ Q) of two unit-scale mixtures (normal or Laplace components) on a line whose
    privacy loss is non-decreasing (every P centre ≥ every Q centre up to a common shift):
    sup_t P(T > t) − αQ(T > t), at the root of L(t) = ε found by bisection at 40 digits."""
    mp.mp.dps = 40
    if family == "laplace":
        def kernel(x):
            return mp.e ** (-abs(x))

        def upper_tail(x):  # P(Lap(0, 1) > x)
            return mp.e ** (-x) / 2 if x >= 0 else 1 - mp.e ** x / 2
    else:
        def kernel(x):
            return mp.e ** (-x ** 2 / 2)

        def upper_tail(x):
            return mp.ncdf(-x)
    pm = [(mp.mpf(a.numerator) / a.denominator, mp.mpf(w.numerator) / w.denominator)
          for a, w in p.items()]
    qm = [(mp.mpf(a.numerator) / a.denominator, mp.mpf(w.numerator) / w.denominator)
          for a, w in q.items()]
    alpha = mp.e ** mp.mpf(eps)

    def dens(mix, t):
        return mp.fsum(w * kernel(t - a) for a, w in mix)

    def surv(mix, t):
        return mp.fsum(w * upper_tail(t - a) for a, w in mix)

    lo = min(a for a, _ in pm + qm) - 40
    hi = max(a for a, _ in pm + qm) + 40

    def g(t):
        return surv(pm, t) - alpha * surv(qm, t)

    if dens(pm, lo) > alpha * dens(qm, lo):
        return max(g(lo), mp.mpf(0)) if eps >= 0 else 1 - alpha + max(g(lo) - (1 - alpha), 0)
    if dens(pm, hi) <= alpha * dens(qm, hi):
        return max(g(hi), mp.mpf(0))
    a, b = mp.mpf(lo), mp.mpf(hi)
    for _ in range(200):
        mid = (a + b) / 2
        if dens(pm, mid) > alpha * dens(qm, mid):
            b = mid
        else:
            a = mid
    return g((a + b) / 2)


def _assert_brackets_the_outputs(curve, px: dict, pxp: dict, eps, family: str = "gaussian"):
    """The curve's lower values never above the 40-digit hockey stick of the output laws and
    within 1e-6 of it; its upper values never below it."""
    for e in eps:
        exact = _mp_hockey(px, pxp, e, family)
        low = float(np.exp(curve.log_lower(np.array([e]))[0]))
        up = float(np.exp(curve.log_upper(np.array([e]))[0]))
        assert low <= float(exact) * (1 + 1e-12) + 1e-300, (e, low, exact)
        assert up >= float(exact) * (1 - 1e-12), (e, up, exact)
        if exact > 1e-250:
            # (the lower value loses a few digits where P(T > t) and αQ(T > t) nearly cancel)
            assert low >= float(exact) * (1 - 1e-6), (e, low, exact)


CASES = [(WOR(6, 3), 2), (WOR(5, 5), 2), (WOR(7, 1), 3), (WOR(4, 2), 4),
         (WR(4, 3), 2), (WR(3, 2), 3), (WR(5, 1), 2)]


@pytest.mark.parametrize(("scheme", "k"), CASES, ids=lambda v: repr(v))
@pytest.mark.parametrize("orientation", ["remove", "add", "mixed1"])
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_the_pairs_are_the_sum_query_output(scheme, k, orientation, family):
    """Each orientation's curve is, to 1e-6 relative, the hockey-stick divergence of the output
    laws of the sum query on its datasets (Gaussian noise σ = 2 or Laplace noise b = 2),
    enumerated subsample by subsample; the lower values never exceed it and the upper values
    never fall below it."""
    mech = _mech() if family == "gaussian" else LaplaceMechanism(SIGMA, relation="substitute")
    curve = realizable_group_curves(mech, scheme, None, k)[orientation]
    px, pxp = _enumerated_pair(scheme, k, _T_OF[orientation])
    _assert_brackets_the_outputs(curve, px, pxp, (-1.0, -0.2, 0.0, 0.1, 0.5, 1.0, 2.0, 4.0),
                                 family)


def test_neither_realizable_pair_dominates_the_other():
    """Why the mixture pair Σ w_j N(jθ) against N(0) (t = 1) serves only from below: the pair at
    t = 0, realizable too, is 4 % above it at α = 1 (total variation), and below it at large α.
    Hypergeometric(100, 4, 30) hits, θ = 1 (the example the module doc quotes)."""
    curves = realizable_group_curves(_mech(1.0), WOR(100, 30), None, 4)
    e = np.array([0.0, math.log(10.0)])
    rem = np.maximum(np.exp(curves["remove"].log_upper(e)), np.exp(curves["add"].log_upper(e)))
    mid = np.exp(curves["mixed1"].log_lower(e))
    assert mid[0] > 1.04 * rem[0]
    assert mid[1] < rem[1]


def test_hit_count_is_clipped_with_its_tail_mass():
    """The hit count stops at REALIZED_MAX_HITS (or where less than 1e-40 is left), and the
    last weight carries everything beyond: the weights still sum to 1."""
    many = realizable_group_curves(_mech(), WR(1000, 1000), None, 900)["remove"]
    assert many.hits == REALIZED_MAX_HITS
    few = realizable_group_curves(_mech(), WR(60000, 600), None, 8)["remove"]
    assert few.hits < REALIZED_MAX_HITS
    for c in (many, few):
        assert math.fsum(np.exp(c._up.la)) == pytest.approx(1.0, rel=1e-12)
    # the lumped weight against the exact binomial tail (50 digits)
    with mp.workdps(50):
        p = mp.mpf(8) / 60000
        tail = mp.fsum(mp.binomial(600, j) * p ** j * (1 - p) ** (600 - j)
                       for j in range(few.hits, 601))
    assert math.exp(few._up.la[-1]) == pytest.approx(float(tail), rel=1e-13)


@pytest.mark.parametrize("scheme", [s for s in WOR.examples() + WR.examples() if s.n >= 2],
                         ids=repr)
def test_registry_examples_bracket_and_order(scheme):
    """Every WOR/WR example of the registry (n = 10 and 1000, m = 1, n − 1, n) with groups of
    2 and of min(n, 8): the curves' lower values are below their upper values, and the composed
    bracket of a short ledger is ordered with a positive lower end."""
    for k in sorted({2, min(scheme.n, 8)}):
        curves = realizable_group_curves(_mech(), scheme, None, k)
        assert set(curves) == {"remove", "add", "mixed1"}
        e = np.array([-2.0, -0.1, 0.0, 0.3, 1.0, 3.0])
        for c in curves.values():
            assert np.all(c.log_lower(e) <= c.log_upper(e))
        acc = Accountant("pld").add(_mech(), 3, scheme=scheme, group_size=k)
        b = acc.epsilon(1e-5)
        assert b.lower is not None and 0 < b.lower <= b.upper
        assert acc.details["lower_from"] == "realizable pairs of datasets"
        assert acc.lower_end_of == "mechanism"


def test_no_amplification_closes_on_the_group_gaussian():
    """m = n: every record is drawn, the group is hit K times, and both ends are the plain
    Gaussian mechanism at sensitivity KΔ."""
    k, steps = 3, 5
    b = Accountant("pld").add(_mech(), steps, scheme=WOR(50, 50), group_size=k).epsilon(1e-5)
    plain = Accountant("pld").add(GaussianMechanism(SIGMA, sensitivity=k,
                                                    relation="substitute"), steps).epsilon(1e-5)
    assert b.lower <= plain.upper and plain.lower <= b.upper
    assert b.lower >= 0.999 * b.upper


def _two_step_delta(px: dict, pxp: dict, eps: float) -> float:
    """δ(ε) of the enumerated output laws (:func:`_enumerated_pair`, units of σ) composed twice,
    by a 2-D quadrature of (p⊗p − α q⊗q)⁺ on a fine grid: independent of privamp's curves,
    hit laws and PLD engine."""
    centres = [float(a) for a in list(px) + list(pxp)]
    z = np.linspace(min(centres) - 14.0, max(centres) + 14.0, 4001)

    def dens(mix):
        means = np.array([float(a) for a in mix])
        w = np.array([float(v) for v in mix.values()])
        return (w[None, :] * np.exp(-(z[:, None] - means[None, :]) ** 2 / 2)).sum(axis=1) \
            / math.sqrt(2 * math.pi)

    p, q = dens(px), dens(pxp)
    dz = z[1] - z[0]
    return float(np.maximum(np.outer(p, p) - math.exp(eps) * np.outer(q, q), 0).sum() * dz * dz)


@pytest.mark.parametrize("scheme", [WOR(10, 5), WR(6, 3)], ids=repr)
def test_two_steps_against_a_brute_force_composition(scheme):
    """The lower end of δ(ε) after two steps is at most the largest orientation's brute-force
    δ, and within 2 % of one orientation's (the engine composes the worst one). The reference
    composes the sum query's outputs, enumerated subsample by subsample."""
    k, eps = 2, 0.5
    brute = {name: _two_step_delta(*_enumerated_pair(scheme, k, t), eps)
             for name, t in _T_OF.items()}
    b = Accountant("pld").add(_mech(), 2, scheme=scheme, group_size=k).delta(eps)
    assert b.lower <= max(brute.values()) * (1 + 1e-6)
    assert any(b.lower >= 0.98 * v for v in brute.values())
    assert b.lower <= b.upper


def test_lines_on_datasets_of_different_sizes_get_no_realizable_lower_end():
    """One pair of datasets must produce every line: WOR(100, ·) and WOR(200, ·) cannot."""
    acc = (Accountant("pld").add(_mech(), 3, scheme=WOR(100, 10), group_size=2)
           .add(_mech(), 3, scheme=WOR(200, 10), group_size=2))
    assert acc.epsilon(1e-5).lower is None
    assert acc.lower_end_of == "bound"
    same = (Accountant("pld").add(_mech(), 3, scheme=WOR(100, 10), group_size=2)
            .add(_mech(3.0), 3, scheme=WR(100, 20), group_size=2))
    b = same.epsilon(1e-5)
    assert b.lower is not None and b.lower <= b.upper


@pytest.mark.parametrize(("mech", "scheme", "relation"), [
    (RandomizedResponse(0.75, relation="substitute"), WOR(100, 10), None),
    (RandomizedResponse(0.75), Poisson(0.1), None),
    (GaussianMechanism(2.0, relation="substitute"), Poisson(0.1, n=100), "substitute"),
    (GaussianMechanism(2.0, relation="substitute"), Poisson(0.1), None),  # θ for substitution
    (LaplaceMechanism(2.0), WOR(100, 10), None),  # the mechanism's relation is add/remove
])
def test_other_combinations_have_no_realizable_pairs(mech, scheme, relation):
    assert realizable_group_curves(mech, scheme, relation, 2) is None
    assert realizable_group_curves(_mech(), WOR(100, 10), None, 1) is None


# ---- Poisson groups beyond the tight split pairs ----------------------------------------------

def _poisson_pair(k: int, rate: float, hits: int, orientation: str):
    """Output laws (units of σ, θ = 1/σ) of the query Δ·min(|S ∩ G|, J) under Poisson(rate) on
    x = D ∪ G against x' = D ("remove"; "add" is the reverse, reflected): the count's law from
    exact binomial coefficients in rationals, not from privamp's binomial pmf."""
    q = Fraction(rate)
    theta = 1 / Fraction(SIGMA)
    mix = Counter()
    for j in range(k + 1):
        mix[min(j, hits) * theta] += math.comb(k, j) * q ** j * (1 - q) ** (k - j)
    point = {Fraction(0): Fraction(1)}
    if orientation == "remove":
        return dict(mix), point
    return point, {-a: w for a, w in mix.items()}


@pytest.mark.parametrize(("k", "rate"), [(3, 0.3), (100, 0.5), (150, 0.01)], ids=repr)
@pytest.mark.parametrize("orientation", ["remove", "add"])
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_poisson_pairs_are_the_clipped_count_query_output(k, rate, orientation, family):
    """Under Poisson (add/remove) the pairs are the outputs of Δ·min(|S ∩ G|, J): to 1e-6
    relative, lower values never above and upper values never below, including a clip with
    heavy mass beyond it (K = 100, rate 0.5: P(hits ≥ 64) ≈ 3e-3)."""
    mech = GaussianMechanism(SIGMA) if family == "gaussian" else LaplaceMechanism(SIGMA)
    curves = realizable_group_curves(mech, Poisson(rate), None, k)
    assert sorted(curves) == ["add", "remove"]  # t = 0 has no add/remove counterpart
    curve = curves[orientation]
    # no clip, a clip with heavy mass beyond it, a clip where the tail is below 1e-40
    assert curve.hits == {3: 3, 100: REALIZED_MAX_HITS}.get(k, curve.hits)
    assert k != 150 or 1 < curve.hits < REALIZED_MAX_HITS
    px, pxp = _poisson_pair(k, rate, curve.hits, orientation)
    _assert_brackets_the_outputs(curve, px, pxp, (-0.5, 0.0, 0.3, 1.0, 3.0), family)


@pytest.mark.parametrize("mech", [GaussianMechanism(2.0), LaplaceMechanism(2.0)], ids=repr)
def test_poisson_realizable_pairs_are_the_tight_removal_split(mech):
    """Within the tight pairs' reach (K = 8) the composed realizable pairs give the tight
    bracket itself (the pure-removal split is the worst one): the construction and the tight
    pairs agree, 1000 steps, δ 1e-5."""
    from privamp.pld.engine import PldEvent, pld_epsilon

    tight = Accountant().add(mech, 1000, scheme=Poisson(0.01), group_size=8).epsilon(1e-5)
    curves = realizable_group_curves(mech, Poisson(0.01), None, 8)
    got = pld_epsilon([PldEvent(curves, 1000, "")], 1e-5).bracket
    assert got.lower <= tight.upper and tight.lower <= got.upper
    assert got.lower == pytest.approx(tight.lower, rel=1e-6)


@pytest.mark.parametrize("mech", [GaussianMechanism(2.0), LaplaceMechanism(2.0)], ids=repr)
def test_poisson_groups_beyond_the_tight_pairs_get_a_lower_end(mech):
    """K = 65 (one past TIGHT_MAX_GROUP) takes the coupling bound, and now a lower end from the
    realizable pairs, also for a ledger of two rates (one pair of datasets serves both); at
    K = 64 the tight pairs keep their own lower end."""
    from privamp.pld.group import TIGHT_MAX_GROUP

    k = TIGHT_MAX_GROUP + 1
    acc = Accountant().add(mech, 100, scheme=Poisson(0.01), group_size=k)
    b = acc.epsilon(1e-5)
    assert acc.group_bound == "coupling" and acc.lower_end_of == "mechanism"
    assert acc.details["lower_from"] == "realizable pairs of datasets"
    assert b.lower is not None and 0 < b.lower <= b.upper
    two = (Accountant().add(mech, 50, scheme=Poisson(0.01), group_size=k)
           .add(mech, 50, scheme=Poisson(0.02), group_size=k))
    b2 = two.epsilon(1e-5)
    assert b2.lower is not None and b.lower < b2.lower <= b2.upper
    small = Accountant().add(mech, 10, scheme=Poisson(0.01), group_size=TIGHT_MAX_GROUP)
    assert small.group_bound == "tight"
    from privamp.accountant import _realized_group_events

    assert _realized_group_events(small) is None


def test_cli_reports_the_lower_end(capsys):
    argv = ["epsilon", "--mechanism", "gaussian", "--sigma", "2", "--sampling", "wor",
            "--n", "100", "--m", "50", "--relation", "substitute", "--steps", "10",
            "--delta", "1e-5", "--group-size", "8"]
    d = run_json([*argv, "--json"], capsys)
    assert d["epsilon_lower"] is not None and 0 < d["epsilon_lower"] <= d["epsilon"]
    from privamp.cli import main

    assert main(argv) == 0
    assert "the group's exact value lies in the bracket" in capsys.readouterr().out


def test_tradeoff_of_a_wor_group_has_lower_ends(capsys):
    """The attack-risk curve reads the same lower-side pairs: every true-positive rate has a
    lower end between the false-positive rate and its upper end."""
    d = run_json(["tradeoff", "--mechanism", "gaussian", "--sigma", "2", "--sampling", "wor",
                  "--n", "100", "--m", "50", "--relation", "substitute", "--steps", "10",
                  "--group-size", "4", "--fpr", "0.01", "0.1", "--json"], capsys)
    for p in d["points"]:
        assert p["fpr"] <= p["tpr_lower"] <= p["tpr"]
    assert 0 < d["mu_lower"] <= d["mu"]


def test_deltas_of_a_group_take_their_lower_ends_from_one_composition():
    """``deltas`` composes the realizable pairs once for all its points: the same upper ends as
    ``delta`` point by point, lower ends certified the same way (within 1 % of each point's)."""
    eps = [0.0, 1.0, 3.0]
    acc = Accountant("pld").add(_mech(), 10, scheme=WOR(100, 50), group_size=4)
    many = acc.deltas(eps)
    assert acc.details["lower_from"] == "realizable pairs of datasets"
    for e, b in zip(eps, many, strict=True):
        one = acc.delta(e)
        assert b.upper == one.upper
        assert 0 < b.lower <= b.upper
        assert b.lower == pytest.approx(one.lower, rel=1e-2)


@pytest.mark.parametrize("scheme", [WOR(100, 50), WR(1000, 100), WOR(30, 30)], ids=repr)
def test_laplace_group_brackets(scheme):
    """The Laplace (b = 2) gets the same lower end; without amplification (m = n) the bracket
    closes on the plain Laplace mechanism at sensitivity KΔ."""
    k = 3
    lap = LaplaceMechanism(SIGMA, relation="substitute")
    acc = Accountant("pld").add(lap, 10, scheme=scheme, group_size=k)
    b = acc.epsilon(1e-5)
    assert b.lower is not None and 0 < b.lower <= b.upper
    assert acc.lower_end_of == "mechanism"
    if scheme.m == scheme.n:
        plain = Accountant("pld").add(LaplaceMechanism(SIGMA, sensitivity=k,
                                                       relation="substitute"), 10).epsilon(1e-5)
        assert b.lower <= plain.upper and plain.lower <= b.upper
        assert b.lower >= 0.999 * b.upper


def test_a_lower_end_above_the_upper_end_is_refused(monkeypatch):
    """The realizable lower end and the upper end are independent certificates: a lower end
    above the upper one proves one of them wrong, so the query refuses instead of clipping
    (review 36, finding 1: a defective group-after-composition route, simulated here, was
    reported as the closed bracket [30, 30])."""
    import privamp.pld.group as group_mod
    from privamp.errors import InconsistentBoundsError

    monkeypatch.setattr(group_mod, "composed_group_epsilon", lambda *a, **k: 30.0)
    monkeypatch.setattr(group_mod, "composed_group_delta", lambda *a, **k: 1e-9)
    acc = Accountant("pld").add(_mech(), 10, scheme=WOR(100, 50), group_size=8)
    with pytest.raises(InconsistentBoundsError):
        acc.epsilon(1e-5)
    with pytest.raises(InconsistentBoundsError):
        acc.delta(20.0)
    with pytest.raises(InconsistentBoundsError):
        acc.deltas([20.0, 25.0])


def _frac(x) -> Fraction:
    man, exp = mp.mpf(x).man_exp
    return Fraction(man) * Fraction(2) ** exp


@pytest.mark.parametrize("orientation", ["remove", "add", "mixed1"])
def test_wr_with_a_truncated_hit_law_gets_realizable_pairs(orientation):
    """WR with more than 20,000 draws keeps its hit law to a truncated support (review 36,
    finding 3, left then): the pairs now move the missing mass (≤ 1e-300) to the heaviest count.
    WR(100000, 30000), K = 2: each curve against the clipped Binomial(30000, 2e-5) outputs
    computed at 40 digits by mpmath (not privamp's pmf), and the ledger's bracket has a
    realizable lower end."""
    scheme = WR(100_000, 30_000)
    assert scheme.group_multiplicity(2).log_tail > -math.inf  # the truncated case
    curve = realizable_group_curves(_mech(), scheme, None, 2)[orientation]
    mp.mp.dps = 40
    p = mp.mpf(2) / 100_000
    w = [mp.binomial(30_000, j) * p ** j * (1 - p) ** (30_000 - j) for j in range(curve.hits)]
    w.append(1 - mp.fsum(w))  # P(hits ≥ J), lumped at J
    t = _T_OF[orientation]
    theta = 1 / Fraction(SIGMA)
    px, pxp = Counter(), Counter()
    for j, wj in enumerate(w):
        px[j * (1 + t) * theta / 2] += _frac(wj)
        pxp[-j * (1 - t) * theta / 2] += _frac(wj)
    _assert_brackets_the_outputs(curve, px, pxp, (-0.5, 0.0, 0.3, 1.0, 3.0))
    acc = Accountant("pld").add(_mech(), 3, scheme=scheme, group_size=2)
    b = acc.epsilon(1e-5)
    assert b.lower is not None and 0 < b.lower <= b.upper
    assert acc.lower_end_of == "mechanism"


def test_what_gets_no_realizable_lower_end():
    """A mechanism given as a profile keeps the upper end only, and says so."""
    prof = _mech().profile()
    assert realizable_group_curves(prof, WOR(100, 50), None, 2) is None
    acc = Accountant("pld").add(prof, 3, scheme=WOR(100, 50), group_size=2)
    assert acc.epsilon(1e-5).lower is None and acc.lower_end_of == "bound"
