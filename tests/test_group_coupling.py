"""The coupling group bound (issue 20, item 2; :mod:`privamp.pld.group`): groups of K records
under Poisson (any mechanism, add/remove), WOR and WR (substitution).

Independent references:

* the hit-count laws against brute force: every subset (WOR), every sequence of draws (WR),
  every coin pattern (Poisson) of a small dataset, counted exactly with fractions;
* validity: the exact hockey-stick divergence of concrete neighbouring datasets (a clipped sum
  query, the group's records at +C in one dataset and −C or absent in the other, the rest at
  0 or at the clipping bound) computed by scipy quadrature of the output mixtures, must be
  below the bound — and, under Poisson, the tight double-mixture pairs of the Gaussian
  (Schuchardt et al. 2024) must be too;
* boundaries: K = 1 is the scheme's own multiplicity law and amplified profile; q = 1 / m = n
  is the mechanism's K-group profile itself; K > n is refused;
* the bound is never above the post-hoc one it is combined with, and grows with K.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from cli_helpers import run_json
from privamp import (
    Accountant,
    ApproxDPMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
)
from privamp.amplification.subsampling import amplify
from privamp.errors import InvalidParameterError, NumericalError, UnsupportedCombinationError
from privamp.pld.group import GroupGaussianCurve, group_bound, group_pair_curves, split_names
from privamp.profiles import GroupPrivacy, MinimumProfile
from privamp.sampling import WOR, WR, Poisson
from privamp.sampling.schemes import SCHEMES

# ---- the hit-count laws ---------------------------------------------------------------------


def _brute_wor(n, m, k):
    counts = [Fraction(0)] * (k + 1)
    subsets = list(itertools.combinations(range(n), m))
    for s in subsets:
        counts[sum(1 for i in s if i < k)] += 1
    return [c / len(subsets) for c in counts]


def _brute_wr(n, m, k):
    counts = [Fraction(0)] * (m + 1)
    for seq in itertools.product(range(n), repeat=m):
        counts[sum(1 for i in seq if i < k)] += 1
    return [c / n ** m for c in counts]


def _brute_poisson(q, k):
    q = Fraction(q)
    counts = [Fraction(0)] * (k + 1)
    for coins in itertools.product((0, 1), repeat=k):
        h = sum(coins)
        counts[h] += q ** h * (1 - q) ** (k - h)
    return counts


@pytest.mark.parametrize(("n", "m"), [(1, 1), (3, 1), (4, 2), (5, 5), (6, 3), (7, 6)])
def test_wor_hits_are_hypergeometric(n, m):
    for k in range(1, n + 1):
        got = WOR(n, m).group_multiplicity(k).pmf
        want = _brute_wor(n, m, k)
        assert np.allclose(got, [float(w) for w in want[:got.size]], rtol=1e-12, atol=0)
        assert sum(want[got.size:]) == 0


@pytest.mark.parametrize(("n", "m"), [(1, 1), (1, 3), (3, 2), (4, 4), (5, 3)])
def test_wr_hits_are_binomial(n, m):
    for k in range(1, n + 1):
        mult = WR(n, m).group_multiplicity(k)
        want = _brute_wr(n, m, k)
        assert np.allclose(mult.pmf, [float(w) for w in want[:mult.pmf.size]], rtol=1e-12)
        assert mult.log_tail == -math.inf


@pytest.mark.parametrize("q", [1e-9, 0.01, 0.3, 0.5, 1 - 1e-12, 1.0])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_poisson_hits_are_binomial(q, k):
    mult = Poisson(q).group_multiplicity(k)
    want = [float(w) for w in _brute_poisson(q, k)]
    assert np.allclose(mult.pmf, want, rtol=1e-11, atol=0)
    # η = 1 − (1 − q)^K, rounded both ways
    eta = -math.expm1(k * math.log1p(-q)) if q < 1 else 1.0
    assert mult.eta_lower <= eta * (1 + 1e-14) and eta <= mult.eta * (1 + 1e-14)


@pytest.mark.parametrize("kind", sorted(SCHEMES))
def test_group_of_one_is_the_multiplicity(kind):
    """Generated over the scheme registry: where a scheme has a hit-count law, K = 1 is its
    multiplicity law; where it has none, groups fall back to the post-hoc bound."""
    for scheme in SCHEMES[kind].examples():
        for rel in scheme.relations:
            mult = scheme.group_multiplicity(1, rel)
            if mult is None:
                continue
            assert kind in ("poisson", "wor", "wr")
            own = scheme.multiplicity()
            assert np.allclose(np.exp(mult.log_pmf), np.exp(own.log_pmf), rtol=1e-13, atol=0)


@pytest.mark.parametrize("scheme", [WOR(5, 2), WR(5, 2)])
def test_group_larger_than_the_dataset_is_refused(scheme):
    with pytest.raises(InvalidParameterError, match="group_size"):
        scheme.group_multiplicity(6)
    scheme.group_multiplicity(5)


def test_relations_without_a_coupling():
    assert Poisson(0.1, n=10).group_multiplicity(2, "substitute") is None
    assert WR(10, 3).group_multiplicity(2, "add-remove") is None
    with pytest.raises(UnsupportedCombinationError, match="no coupling bound"):
        amplify(GaussianMechanism(1.0, relation="substitute"), Poisson(0.1, n=10), "substitute",
                group_size=2)


# ---- boundaries of the profile ---------------------------------------------------------------

EPS = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 5.0])


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize(("mech", "scheme"), [
    (GaussianMechanism(1.5, relation="substitute"), WOR(10, 10)),
    (LaplaceMechanism(1.0, relation="substitute"), WOR(6, 6)),
    (LaplaceMechanism(0.5), Poisson(1.0)),
    (RandomizedResponse(1.0), Poisson(1.0)),
])
def test_everything_sampled_is_the_group_profile(mech, scheme, k):
    """q = 1 and m = n: every member of the group is drawn, η = 1, the bound is δ_K itself."""
    prof = amplify(mech, scheme, group_size=k)
    grp = mech.profile().group(k)
    assert np.allclose(prof.delta(EPS), grp.delta(EPS), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("scheme", [WOR(100, 7), WR(100, 7), Poisson(0.07)])
def test_group_of_one_is_the_amplified_profile(scheme):
    mech = (GaussianMechanism(1.0) if isinstance(scheme, Poisson)
            else GaussianMechanism(1.0, relation="substitute"))
    one = amplify(mech, scheme)
    assert np.array_equal(amplify(mech, scheme, group_size=1).delta(EPS), one.delta(EPS))


# ---- validity against concrete datasets -------------------------------------------------------


def _hockey_stick(p_pdf, q_pdf, alpha, lo, hi, breaks):
    f = lambda t: max(p_pdf(t) - alpha * q_pdf(t), 0.0)  # noqa: E731
    val, err = integrate.quad(f, lo, hi, points=breaks, limit=400, epsabs=1e-13, epsrel=1e-10)
    return val - err


def _wor_pair(n, m, k, shifts_x, shifts_xp, rest_x, sigma):
    """Output laws of a clipped 1-d sum of a WOR(n, m) subsample with Gaussian noise: the group
    (positions < k) holds ``shifts_x`` in x and ``shifts_xp`` in x'; every other record holds
    ``rest_x``. Returns the mixtures as (weights, means) over the hit count and the rest."""
    weights = stats.hypergeom(n, k, m).pmf(np.arange(k + 1))
    mx = [sum(shifts_x[:i]) + (m - i) * rest_x for i in range(k + 1)]
    mxp = [sum(shifts_xp[:i]) + (m - i) * rest_x for i in range(k + 1)]
    return weights, np.array(mx), np.array(mxp)


@pytest.mark.parametrize(("n", "m", "k"), [(10, 3, 2), (12, 6, 3), (8, 8, 2), (20, 2, 4)])
@pytest.mark.parametrize("rest", [0.0, -1.0])
def test_wor_bound_holds_on_concrete_datasets(n, m, k, rest):
    """The group records at +1 in x and −1 in x' (clipping C = 1, substitution sensitivity 2),
    the others at 0 or at −1: the exact δ of the output laws is below the bound."""
    sigma = 1.2
    w, mx, mxp = _wor_pair(n, m, k, [1.0] * k, [-1.0] * k, rest, sigma)
    mech = GaussianMechanism(sigma / 2, relation="substitute")  # θ = Δ/σ with Δ = 2C = 2
    prof = amplify(mech, WOR(n, m), group_size=k)
    p = lambda t: float(np.dot(w, stats.norm.pdf(t, mx, sigma)))  # noqa: E731
    q = lambda t: float(np.dot(w, stats.norm.pdf(t, mxp, sigma)))  # noqa: E731
    lo, hi = min(mx.min(), mxp.min()) - 12 * sigma, max(mx.max(), mxp.max()) + 12 * sigma
    for e in (0.0, 0.3, 1.0, 2.0):
        exact = _hockey_stick(p, q, math.exp(e), lo, hi, sorted(set(mx) | set(mxp)))
        exact_rev = _hockey_stick(q, p, math.exp(e), lo, hi, sorted(set(mx) | set(mxp)))
        bound = float(prof.delta(e))
        assert max(exact, exact_rev) <= bound * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("q", [0.05, 0.4, 1.0])
@pytest.mark.parametrize("k", [2, 3])
def test_poisson_bound_is_above_the_tight_pairs(q, k):
    """Under Poisson the Gaussian has exact group pairs: every split's curve lies below the
    coupling bound (which covers every split at once)."""
    theta = 0.8
    prof = amplify(GaussianMechanism(1 / theta), Poisson(q), group_size=k)
    eps = np.array([0.0, 0.2, 0.7, 1.5, 3.0])
    bound = prof.log_delta(eps)
    for name in split_names(k):
        a = {"remove": k, "add": 0}.get(name)
        a = int(name[5:]) if a is None else a
        exact = GroupGaussianCurve(theta, q, a, k - a).log_upper(eps)
        assert np.all(exact <= bound + 1e-9)


# ---- the accountant ---------------------------------------------------------------------------


def _eps(mech, scheme, k, steps=50, delta=1e-5):
    acc = Accountant().add(mech, steps, scheme=scheme, group_size=k)
    return acc.epsilon(delta), acc


@pytest.mark.parametrize(("mech", "scheme"), [
    (GaussianMechanism(2.0, relation="substitute"), WOR(1000, 100)),
    (GaussianMechanism(2.0, relation="substitute"), WR(1000, 100)),
    (ApproxDPMechanism(0.5, 1e-7), Poisson(0.1)),
])
def test_accountant_uses_the_coupling(mech, scheme):
    one, _ = _eps(mech, scheme, 1)
    two, acc = _eps(mech, scheme, 2)
    four, _ = _eps(mech, scheme, 4)
    assert acc.details["group_bound"] == "coupling"
    # the Gaussian under WOR/WR has realizable pairs for its lower end (test_group_realizable)
    gaussian = isinstance(mech, GaussianMechanism)
    assert acc.lower_end_of == ("mechanism" if gaussian else "bound")
    assert (two.lower is not None) == gaussian
    assert one.upper <= two.upper <= four.upper
    # never above the post-hoc bound alone (the minimum of the two is composed)
    post = amplify(mech, scheme).group(2, GroupPrivacy.BLACK_BOX)
    try:
        post_eps = Accountant().add(post, 50).epsilon(1e-5).upper
    except NumericalError:  # WR: the post-hoc profile's loss range overflows; ours answers
        post_eps = math.inf
    assert two.upper <= post_eps * (1 + 1e-3)


def test_coupling_gains_at_large_sampling_ratios():
    """At m/n = 1/2 the group's hit count is concentrated: the coupling bound is well below the
    post-hoc one (Vadhan's lemma on the amplified profile, δ = 1 here, 0.65 for the coupling)."""
    mech = GaussianMechanism(0.7, relation="substitute")
    prof = amplify(mech, WOR(100, 50), group_size=4)
    post = amplify(mech, WOR(100, 50)).group(4, GroupPrivacy.BLACK_BOX)
    assert float(prof.delta(1.0)) < 0.8 * float(post.delta(1.0))


def test_post_hoc_remains_for_the_rest():
    assert group_bound(GaussianMechanism(1.0, relation="substitute"),
                       SCHEMES["must-ow"].examples()[0], None) == "post-hoc"
    curves, bound = group_pair_curves(GaussianMechanism(1.0, relation="substitute"),
                                      Poisson(0.1, n=100), "substitute", 2)
    assert bound == "post-hoc"
    curves, bound = group_pair_curves(GaussianMechanism(1.0, relation="substitute"),
                                      WOR(100, 10), None, 2)
    assert bound == "coupling" and isinstance(curves["symmetric"].profile, MinimumProfile)


def test_cli_reports_the_coupling(capsys):
    out = run_json(["epsilon", "--mechanism", "gaussian", "--sigma", "2",
                    "--relation", "substitute", "--sampling", "wor", "--n", "1000", "--m",
                    "100", "--steps", "20", "--delta", "1e-5", "--group-size", "3"], capsys)
    assert out["group_bound"] == "coupling"


# ---- randomized response: the coupling bound (not tight under composition: review F1) ------


def _rr_delta(p, rho, rho_p, eps):
    """Exact δ(ε) = Σ_o (P(o) − e^ε Q(o))⁺ of RR_p mixtures with P(b = 1) = ρ, ρ'."""
    out = 0.0
    for o in (0, 1):
        po = (1 - rho) * (p if o == 0 else 1 - p) + rho * (1 - p if o == 0 else p)
        qo = (1 - rho_p) * (p if o == 0 else 1 - p) + rho_p * (1 - p if o == 0 else p)
        out += max(po - math.exp(eps) * qo, 0.0)
    return out


@pytest.mark.parametrize(("n", "m", "k"), [(6, 2, 2), (6, 3, 3), (5, 5, 2), (7, 1, 3)])
def test_rr_group_under_wor_on_bit_functions(n, m, k):
    """Bit functions of the subsample (thresholds and parity of the group's count, and random
    tables of the group's and the rest's counts) on K-neighbours by substitution: every exact
    δ of one step is below the coupling curve, and "some member of the group is drawn" attains
    it at ε ≥ 0 (the symmetric profile η_K δ(ε') is the remove pair's curve there)."""
    rr = RandomizedResponse.from_epsilon(1.2, relation="substitute")
    curves, bound = group_pair_curves(rr, WOR(n, m), None, k)
    assert bound == "coupling" and list(curves) == ["symmetric"]
    eps = np.array([0.0, 0.3, 1.0, 2.0])
    upper = np.exp(curves["symmetric"].log_upper(eps))
    subs = list(itertools.combinations(range(n), m))
    w = 1.0 / len(subs)
    rng = np.random.default_rng(7)
    funcs = [lambda c, t=t: int(c >= t) for t in range(1, k + 1)] + [lambda c: c % 2]
    best = np.zeros(eps.size)
    for f in funcs:
        rho = sum(w * f(sum(1 for i in s if i < k)) for s in subs)
        rho_p = f(0)
        for j, e in enumerate(eps):
            d = max(_rr_delta(rr.p, rho, rho_p, e), _rr_delta(rr.p, rho_p, rho, e))
            assert d <= upper[j] * (1 + 1e-12)
            best[j] = max(best[j], d)
    for _ in range(20):
        tab = rng.integers(0, 2, size=(k + 1, n - k + 1))
        rho = sum(w * tab[sum(1 for i in s if i < k), sum(1 for i in s if i >= k)] for s in subs)
        rho_p = sum(w * tab[0, sum(1 for i in s if i >= k)] for s in subs)
        for j, e in enumerate(eps):
            assert max(_rr_delta(rr.p, rho, rho_p, e),
                       _rr_delta(rr.p, rho_p, rho, e)) <= upper[j] * (1 + 1e-12)
    assert np.allclose(best, upper, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize(("scheme", "rel"), [(Poisson(0.01), "add-remove"),
                                             (WOR(1000, 10), "substitute"),
                                             (WR(1000, 10), "substitute")])
@pytest.mark.parametrize("k", [2, 5])
def test_rr_group_against_poisson_at_the_hit_rate(scheme, rel, k):
    """One record under Poisson at rate η_K: its remove pair is attained by a group ledger
    (b = "some member drawn"), so its certified lower end is a lower bound the group's upper
    end must not cross; and the coupling bound is not far above it."""
    rr = RandomizedResponse.from_epsilon(1.0, relation=rel)
    acc = Accountant().add(rr, 300, scheme=scheme, group_size=k)
    got = acc.epsilon(1e-5)
    assert acc.details["group_bound"] == "coupling" and acc.lower_end_of == "bound"
    eta = 1 - float(scheme.group_multiplicity(k, rel).pmf[0])
    ref = Accountant().add(RandomizedResponse.from_epsilon(1.0), 300,
                           scheme=Poisson(eta)).epsilon(1e-5)
    assert ref.lower <= got.upper <= 1.3 * ref.upper
    one = Accountant().add(rr, 300, scheme=scheme).epsilon(1e-5)
    assert one.upper < got.upper


# ---- group privacy after composition -----------------------------------------------------------


def _gauss_log_delta(u, mu):
    """log δ of the Gaussian pair at distance μ, vectorised, in log space:
    log(Φ(a) − e^u Φ(b)) = log Φ(a) + log(1 − e^{u + log Φ(b) − log Φ(a)})."""
    la = stats.norm.logcdf(-u / mu + mu / 2)
    lb = stats.norm.logcdf(-u / mu - mu / 2)
    with np.errstate(divide="ignore"):
        return la + np.log(-np.expm1(np.minimum(u + lb - la, 0.0)))


@pytest.mark.parametrize(("theta", "steps"), [(0.5, 1), (0.2, 100), (0.05, 2000)])
@pytest.mark.parametrize("k", [2, 3, 8])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_after_composition_against_the_exact_gaussian(theta, steps, k, delta):
    """T Gaussian steps compose to a Gaussian of θ√T exactly. The smallest u with
    δ₁(u) ≤ δ(e^u − 1)/(e^{Ku} − 1), scanned densely in closed form, is never above our
    certified u (safety: ``inf`` is allowed, no answer); where it lies within three times the
    one-record ε, our u is found and within 1 % of it."""
    from privamp.pld.builders import pair_curves
    from privamp.pld.engine import PldEvent
    from privamp.pld.group import composed_group_epsilon

    mu = theta * math.sqrt(steps)
    events = [PldEvent(pair_curves(GaussianMechanism(1 / theta)), steps, "")]
    got = composed_group_epsilon(events, k, delta)
    grid = np.arange(1e-4, 60.0, 1e-4)
    with np.errstate(over="ignore"):
        log_ratio = np.log(np.expm1(grid)) - np.log(np.expm1(k * grid))
    ok = _gauss_log_delta(grid, mu) <= math.log(delta) + log_ratio
    if not ok.any():
        assert got == math.inf
        return
    u_ref = grid[np.argmax(ok)]
    assert got >= k * (u_ref - 1e-4) * (1 - 1e-12)
    one = grid[np.argmax(_gauss_log_delta(grid, mu) <= math.log(delta))]
    if u_ref <= 3 * one:
        assert got <= k * u_ref * 1.01 + 1e-3


def test_after_composition_answers_where_each_step_fails():
    """MUST.OW with groups of 3: Vadhan's factor on each step's profile has a loss range no
    double holds; the composed one-record guarantee still gives a certified ε. Where neither
    route answers, the error names the group size."""
    mech = GaussianMechanism(2.0, relation="substitute")
    scheme = SCHEMES["must-ow"](n=60000, b=30000, m=600)
    acc = Accountant().add(mech, 300, scheme=scheme, group_size=3)
    three = acc.epsilon(1e-5)
    assert acc.details["group_after_composition"] and acc.details["group_bound"] == "post-hoc"
    assert three.lower is None
    one = Accountant().add(mech, 300, scheme=scheme).epsilon(1e-5, lower=False)
    assert one.upper < three.upper < 6 * one.upper
    small = SCHEMES["must-ow"](n=1000, b=500, m=50)
    with pytest.raises(NumericalError, match="groups of 3 records"):
        Accountant().add(mech, 300, scheme=small, group_size=3).epsilon(1e-5)


def test_after_composition_never_raises_the_answer():
    mech = GaussianMechanism(2.0, relation="substitute")
    acc = Accountant().add(mech, 300, scheme=WOR(60000, 600), group_size=4)
    got = acc.epsilon(1e-5)
    assert acc.details["group_after_composition"] is False
    coupled = amplify(mech, WOR(60000, 600), group_size=4)
    post = amplify(mech, WOR(60000, 600)).group(4, GroupPrivacy.BLACK_BOX)
    per_step = Accountant().add(MinimumProfile([coupled, post]), 300).epsilon(1e-5)
    assert got.upper <= per_step.upper
