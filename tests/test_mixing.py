"""Amplification by uniformly mixing kernels (BBGG 2019, §3: Definition 1, Theorem 1, Figs 1–2).

Brute force: for random finite kernels K and finite mechanisms M (randomized response, the
randomized membership mechanism, random pairs of output laws) the exact hockey-stick divergence
of K∘M is computed and compared with Theorem 1's bound for each condition; the coefficients are
compared with their definitions (maximum over all pairs of rows, minimum over columns); the
implication lattice of Figure 1 and the local-DP table of Figure 2 are checked on random kernels.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import (
    GaussianProfile,
    InvalidParameterError,
    RandomizedMembershipMechanism,
    RandomizedResponse,
    UnsupportedCombinationError,
)
from privamp.amplification.mixing import (
    Blanket,
    Dobrushin,
    Doeblin,
    EpsDobrushin,
    LocalDP,
    MarkovKernel,
    UltraMixing,
    eps_tilde,
    implies,
    read_kernel_csv,
)
from privamp.divergences import hockey_stick
from privamp.mechanisms import DiscretePairProfile
from privamp.profiles import PrivacyProfile

EPS_GRID = [0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0, math.inf]
KEYS = ("dobrushin", "eps_dobrushin", "doeblin", "ultra_mixing")


@st.composite
def kernels(draw, max_inputs=5, max_outputs=6, zeros=True):
    n = draw(st.integers(1, max_inputs))
    m = draw(st.integers(1, max_outputs))
    lo = 0.0 if zeros else 1e-3
    rows = []
    for _ in range(n):
        w = np.array(draw(st.lists(st.floats(lo, 1.0), min_size=m, max_size=m)))
        if zeros and draw(st.booleans()):
            w[w < 0.3] = 0.0
        if w.sum() == 0:
            w[draw(st.integers(0, m - 1))] = 1.0
        rows.append(w / w.sum())
    return MarkovKernel(np.array(rows))


def random_kernel(rng, n, m, zeros=False):
    k = rng.dirichlet(np.full(m, rng.uniform(0.2, 3.0)), size=n)
    if zeros:
        k[k < 0.15] = 0.0
        k[np.arange(n), rng.integers(0, m, size=n)] += 0.5
        k /= k.sum(axis=1, keepdims=True)
    return MarkovKernel(k)


def both_ways(p, q, eps):
    return max(hockey_stick(p, q, eps), hockey_stick(q, p, eps))


# ---------------------------------------------------------------------------------------------
# Theorem 1: the catalogue's test vectors and edge cases
# ---------------------------------------------------------------------------------------------


def test_theorem1_catalogue_vectors():
    """ε = 1, δ = 0.01, γ = 0.5 (catalogue §1.2, recomputed with mpmath)."""
    assert eps_tilde(1.0, 0.01) == pytest.approx(5.152297938, abs=1e-9)
    assert Dobrushin(0.5).amplify(1.0, 0.01) == (1.0, pytest.approx(0.005, rel=1e-14))
    assert EpsDobrushin(0.5, 5.15).amplify(1.0, 0.01) == (1.0, pytest.approx(0.005, rel=1e-14))
    e, d = Doeblin(0.5).amplify(1.0, 0.01)
    assert e == pytest.approx(0.6201145070, abs=1e-10)
    assert d == pytest.approx(0.1614498383, abs=1e-10)
    e, d = UltraMixing(0.5).amplify(1.0, 0.01)
    assert e == pytest.approx(0.6201145070, abs=1e-10)
    assert d == pytest.approx(0.0034196986, abs=1e-10)


def test_theorem1_values_against_mpmath():
    """The stable forms equal the printed formulas evaluated at 50 digits, rounded up."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    for eps, delta, gamma in [(1e-8, 1e-3, 0.3), (0.5, 1e-12, 0.9), (30.0, 0.2, 1e-4),
                              (3.0, 0.0, 0.5), (800.0, 1e-5, 0.5)]:
        e, d, g = mp.mpf(eps), mp.mpf(delta), mp.mpf(gamma)
        ep = mp.log(1 + g * mp.expm1(e))
        for cond, exact_d in [(Doeblin(gamma), g * (1 - mp.exp(ep - e) * (1 - d))),
                              (UltraMixing(gamma), g * d * mp.exp(ep - e))]:
            got_e, got_d = cond.amplify(eps, delta)
            assert got_e >= float(ep) and got_e == pytest.approx(float(ep), rel=1e-13)
            assert got_d >= float(exact_d) * (1 - 1e-15)
            assert got_d == pytest.approx(float(exact_d), rel=1e-12, abs=1e-300)
        et = mp.log(1 + mp.expm1(e) / d) if delta > 0 else mp.inf
        got = eps_tilde(eps, delta)
        assert got <= et and (math.isinf(got) or got == pytest.approx(float(et), rel=1e-13))


def test_doeblin_amplifies_delta_only_below_threshold():
    """δ' ≤ δ iff γ ≤ γ* = δe^ε/((1−δ)(e^ε−1)) (or γ = 1): both sides of the boundary."""
    eps, delta = 1.0, 0.01
    gstar = delta * math.e / ((1 - delta) * (math.e - 1))
    assert gstar == pytest.approx(0.0159795627, abs=1e-10)
    assert Doeblin(gstar * (1 - 1e-6)).amplify(eps, delta)[1] < delta
    assert Doeblin(gstar * (1 + 1e-6)).amplify(eps, delta)[1] > delta
    assert Doeblin(1.0).amplify(eps, delta) == (pytest.approx(eps), pytest.approx(delta))
    # pure DP input: Doeblin makes δ' > 0, ultra-mixing keeps it 0
    assert Doeblin(0.5).amplify(1.0, 0.0)[1] > 0
    assert UltraMixing(0.5).amplify(1.0, 0.0)[1] == 0.0


@pytest.mark.parametrize("cls", [Dobrushin, Doeblin, UltraMixing])
def test_gamma_zero_and_one(cls):
    """γ = 0: K ignores its input (δ' = 0); γ = 1: no amplification (the input back)."""
    e0, d0 = cls(0.0).amplify(1.3, 0.2)
    assert d0 == 0.0 and e0 in (0.0, 1.3)
    e1, d1 = cls(1.0).amplify(1.3, 0.2)
    assert e1 == pytest.approx(1.3, rel=1e-14) and e1 >= 1.3
    assert d1 == pytest.approx(0.2, rel=1e-14) and d1 >= 0.2
    base = GaussianProfile(1.0)
    assert cls(0.0).amplify_profile(base).delta(0.0) == 0.0
    np.testing.assert_allclose(cls(1.0).amplify_profile(base).delta([0.0, 1.0, 3.0]),
                               base.delta([0.0, 1.0, 3.0]), rtol=1e-12)


def test_eps_dobrushin_applies_only_from_eps_tilde():
    """(γ, ε_K)-Dobrushin amplifies at (ε, δ) iff ε̃(ε, δ) ≥ ε_K (both sides)."""
    et = eps_tilde(1.0, 0.01)
    assert EpsDobrushin(0.3, et).amplify(1.0, 0.01)[1] == pytest.approx(0.003)
    assert EpsDobrushin(0.3, et * (1 + 1e-9)).amplify(1.0, 0.01)[1] == 0.01
    assert EpsDobrushin(0.3, math.inf).amplify(1.0, 0.0) == (1.0, 0.0)


def test_point_inputs_validated():
    for bad in (-0.1, math.nan):
        with pytest.raises(InvalidParameterError, match="eps"):
            Doeblin(0.5).amplify(bad, 0.1)
    with pytest.raises(InvalidParameterError, match="delta"):
        UltraMixing(0.5).amplify(1.0, 1.5)
    for bad in (-0.1, 1.1, math.nan, math.inf):
        for cls in (Dobrushin, Doeblin, UltraMixing):
            with pytest.raises(InvalidParameterError, match="gamma"):
                cls(bad)


# ---------------------------------------------------------------------------------------------
# coefficients against the definitions
# ---------------------------------------------------------------------------------------------


def direct_coefficients(kernel: MarkovKernel, eps_values):
    """The definitions evaluated exactly: the kernel is the raw matrix with each row divided by
    its sum in rational arithmetic; e^ε at 50 digits (mpmath)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    rows = [[Fraction(v) for v in row] for row in kernel._raw.tolist()]
    k = [[v / sum(row) for v in row] for row in rows]
    n, m = len(k), len(k[0])
    pairs = list(itertools.product(range(n), repeat=2))
    tv = max(sum(abs(k[i][y] - k[j][y]) for y in range(m)) / 2 for i, j in pairs)
    curve = []
    for e in eps_values:
        if math.isinf(e):
            curve.append(max(sum(k[i][y] for y in range(m) if k[j][y] == 0) for i, j in pairs))
            continue
        alpha = mpmath.exp(mpmath.mpf(e))
        curve.append(max(mpmath.fsum(max(mpmath.mpf(k[i][y].numerator) / k[i][y].denominator
                                         - alpha * mpmath.mpf(k[j][y].numerator)
                                         / k[j][y].denominator, 0) for y in range(m))
                         for i, j in pairs))
    doeblin = 1 - sum(min(k[x][y] for x in range(n)) for y in range(m))
    same = all((k[i][y] > 0) == (k[j][y] > 0) for i, j in pairs for y in range(m))
    ultra = 1 - min(k[i][y] / k[j][y] for i, j in pairs for y in range(m) if k[j][y] > 0) \
        if same else Fraction(1)
    return tv, curve, doeblin, ultra


@settings(max_examples=60)
@given(kernels())
def test_coefficients_match_definitions(kernel):
    """Max over all pairs of rows / min over columns, by brute force in exact arithmetic: the
    coefficients are never below the exact values and within 1e-13 above them."""
    eps_values = [0.0, 0.3, 1.0, 2.5, math.inf]
    tv, curve, doeblin, ultra = direct_coefficients(kernel, eps_values)
    assert tv <= Fraction(kernel.dobrushin) and kernel.dobrushin <= tv + 1e-13
    got = kernel.eps_dobrushin(eps_values)
    for g, c in zip(got, curve, strict=True):
        assert c <= g and g <= c + 1e-13
    assert doeblin <= Fraction(kernel.doeblin) and kernel.doeblin <= doeblin + 1e-13
    assert ultra <= Fraction(kernel.ultra_mixing)
    mat = kernel.matrix
    if not np.any((mat > 0) & (mat < 1e-300)):  # subnormal entries: only absolute accuracy
        assert kernel.ultra_mixing <= ultra + 1e-13
    omega = kernel.doeblin_minorant
    assert omega.sum() == pytest.approx(1.0) and np.all(omega >= 0)
    assert np.all(kernel.matrix >= (1 - kernel.doeblin) * omega[None, :] - 1e-15)


@settings(max_examples=60)
@given(kernels())
def test_implication_lattice_on_random_kernels(kernel):
    """Figure 1: γ_ε ≤ γ_D ≤ γ_Doeblin ≤ γ_U, and every implied condition holds."""
    curve = kernel.eps_dobrushin([0.0, 0.1, 1.0, 5.0, math.inf])
    assert np.all(np.diff(curve) <= 1e-300)  # (subnormal entries carry absolute margins)
    assert curve[0] == kernel.dobrushin
    assert kernel.dobrushin <= kernel.doeblin <= kernel.ultra_mixing
    assert kernel.check_lattice()
    conds = list(kernel.conditions(0.7).values())
    for c in conds:
        assert kernel.satisfies(c)
    for a, b in itertools.product(conds, repeat=2):
        if implies(a, b):
            assert kernel.satisfies(b)


@settings(max_examples=40)
@given(kernels(zeros=False), st.floats(0.0, 1.0))
def test_figure2_local_dp_translation(kernel, gamma):
    """Figure 2: a kernel satisfies each condition iff it satisfies its local-DP form."""
    for cond in (Dobrushin(gamma), EpsDobrushin(gamma, 0.4), UltraMixing(gamma)):
        ldp = cond.local_dp()
        assert isinstance(ldp, LocalDP)
        if isinstance(cond, UltraMixing) and gamma < 1:
            # the LDP ε is rounded up by 2 ulp; compare away from the boundary
            ratio = np.max(kernel.matrix.max(0) / kernel.matrix.min(0))
            if abs(math.log(ratio) - ldp.eps) < 1e-12:
                continue
        assert kernel.satisfies(cond) == kernel.satisfies(ldp)
    blanket = Doeblin(gamma).local_dp()
    assert isinstance(blanket, Blanket)
    assert kernel.satisfies(Doeblin(gamma)) == kernel.satisfies(blanket)


def test_figure2_table_rows():
    assert Dobrushin(0.3).local_dp() == LocalDP(0.0, 0.3)
    assert EpsDobrushin(0.3, 1.2).local_dp() == LocalDP(1.2, 0.3)
    u = UltraMixing(0.75).local_dp()
    assert u.delta == 0.0 and u.eps == pytest.approx(math.log(4.0)) and u.eps >= math.log(4.0)
    assert UltraMixing(1.0).local_dp().eps == math.inf
    assert Doeblin(0.4).local_dp() == Blanket(0.4)


def test_implies_is_the_figure1_order():
    g = 0.3
    chain = [UltraMixing(g), Doeblin(g), Dobrushin(g), EpsDobrushin(g, 0.0)]
    for i, a in enumerate(chain):
        for j, b in enumerate(chain):
            assert implies(a, b) == (i <= j)
    assert implies(Dobrushin(0.3), EpsDobrushin(0.3, 2.0))
    assert implies(EpsDobrushin(0.3, 1.0), EpsDobrushin(0.4, 2.0))
    assert not implies(EpsDobrushin(0.3, 2.0), EpsDobrushin(0.3, 1.0))
    assert not implies(UltraMixing(0.5), Dobrushin(0.4))  # γ only grows along arrows
    with pytest.raises(InvalidParameterError):
        implies(LocalDP(0.0, 0.1), Dobrushin(0.2))


def test_boundary_of_satisfies():
    """A kernel satisfies its own coefficient (exact one) and not a smaller one."""
    k = MarkovKernel([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])
    assert k.satisfies(Dobrushin(0.3)) and not k.satisfies(Dobrushin(0.3 - 1e-9))
    assert k.satisfies(Doeblin(0.3)) and not k.satisfies(Doeblin(0.3 - 1e-9))
    assert k.satisfies(UltraMixing(0.6)) and not k.satisfies(UltraMixing(0.6 - 1e-9))
    assert k.satisfies(Doeblin(0.3, k.doeblin_minorant))


def test_ultra_mixing_with_different_supports():
    """Rows with different supports: Definition 1(4) fails; γ_U = 1 by the catalogue
    convention (Theorem 1(4) would then be plain post-processing), and the condition is not
    offered as one that applies."""
    k = MarkovKernel([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    assert not k.absolutely_continuous and k.ultra_mixing == 1.0
    assert not k.satisfies(UltraMixing(1.0))
    assert "ultra_mixing" not in k.conditions() and "ultra_mixing" not in k.amplify(1.0, 0.1)
    e, d = UltraMixing(k.ultra_mixing).amplify(1.0, 0.1)
    assert e == pytest.approx(1.0) and d == pytest.approx(0.1)
    with pytest.raises(UnsupportedCombinationError, match="supports"):
        k.amplify_profile(GaussianProfile(1.0), "ultra_mixing")
    assert k.eps_dobrushin(math.inf) == pytest.approx(0.5)  # the mass of row 2 outside row 1


# ---------------------------------------------------------------------------------------------
# brute force: exact hockey-stick of K∘M vs Theorem 1
# ---------------------------------------------------------------------------------------------


def check_bounds(kernel: MarkovKernel, p, q, profile: PrivacyProfile):
    """Every Theorem 1 statement, point and profile versions, bounds the exact divergence."""
    pk, qk = p @ kernel.matrix, q @ kernel.matrix
    for eps in EPS_GRID:
        delta = float(profile.delta(eps))
        for key, (e2, d2) in kernel.amplify(eps, delta).items():
            exact = both_ways(pk, qk, e2)
            assert exact <= d2 * (1 + 1e-12) + 1e-15, (key, eps, delta, e2, d2, exact)
    eps_prime = np.array([0.0, 0.01, 0.1, 0.3, 0.7, 1.5, 3.0, 8.0, math.inf])
    exact = np.array([both_ways(pk, qk, e) for e in eps_prime])
    keys = [*kernel.conditions(), None]
    for key in keys:
        bound = kernel.amplify_profile(profile, key).delta(eps_prime)
        assert np.all(exact <= bound * (1 + 1e-12) + 1e-15), key
        assert np.all(bound <= profile.delta(eps_prime) * (1 + 1e-12) + 1e-300)


def test_brute_force_randomized_response():
    rng = np.random.default_rng(11)
    for trial in range(150):
        kernel = random_kernel(rng, 2, int(rng.integers(2, 6)), zeros=trial % 3 == 0)
        rr = RandomizedResponse(float(rng.uniform(0.0, 1.0)))
        check_bounds(kernel, rr.output_pmf(0), rr.output_pmf(1), rr.profile())


def test_brute_force_randomized_membership_on_datasets():
    """M_{v,p}(x) = R_p(1[v ∈ x]) on all neighbouring datasets of a small universe."""
    rng = np.random.default_rng(12)
    universe = [0, 1, 2]
    datasets = [list(c) for r in range(len(universe) + 1)
                for c in itertools.combinations(universe, r)]
    for _ in range(30):
        kernel = random_kernel(rng, 2, int(rng.integers(2, 5)))
        mech = RandomizedMembershipMechanism(target=1, p=float(rng.uniform(0.5, 1.0)))
        prof = mech.profile()
        pairs = {}
        for x, xp in itertools.permutations(datasets, 2):
            if len(set(x) ^ set(xp)) == 1:  # add/remove neighbours, both orders
                p, q = mech.output_pmf(x), mech.output_pmf(xp)
                pairs[(tuple(p), tuple(q))] = (p, q)
        assert len(pairs) == 4  # the bit unchanged (0 or 1) or flipped (either way)
        for p, q in pairs.values():
            check_bounds(kernel, p, q, prof)


def test_brute_force_random_finite_mechanisms():
    """Random pairs of output laws on 2–4 outcomes (with zeros) and larger kernels."""
    rng = np.random.default_rng(13)
    for trial in range(120):
        k = int(rng.integers(2, 5))
        kernel = random_kernel(rng, k, int(rng.integers(2, 6)), zeros=trial % 2 == 0)
        p, q = rng.dirichlet(np.full(k, 0.7)), rng.dirichlet(np.full(k, 0.7))
        if trial % 4 == 0:
            p[0] = 0.0
            p /= p.sum()
        check_bounds(kernel, p, q, DiscretePairProfile(p, q))


def test_bounds_are_attained():
    """The four bounds are not loose by construction: on random cases each is attained
    (ratio exact/bound reaches 1), so the brute-force checks above can fail."""
    rng = np.random.default_rng(14)
    best = dict.fromkeys(KEYS, 0.0)
    for _ in range(300):
        kernel = random_kernel(rng, 2, int(rng.integers(2, 5)))
        p = rng.dirichlet(np.ones(2))
        q = rng.dirichlet(np.ones(2))
        prof = DiscretePairProfile(p, q)
        pk, qk = p @ kernel.matrix, q @ kernel.matrix
        for eps in (0.0, 0.5, 1.0):
            delta = float(prof.delta(eps))
            for key, (e2, d2) in kernel.amplify(eps, delta).items():
                if d2 > 1e-9:
                    best[key] = max(best[key], both_ways(pk, qk, e2) / d2)
    assert all(v > 0.99 for v in best.values()), best


# ---------------------------------------------------------------------------------------------
# amplified profiles
# ---------------------------------------------------------------------------------------------


def test_amplified_profiles_are_profiles():
    """In [0, 1], below the base, ε(δ) feasible; group profiles grow with k."""
    k = MarkovKernel([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    base = GaussianProfile(1.5)
    eps = np.linspace(0.0, 6.0, 61)
    for key in (*KEYS, None):
        prof = k.amplify_profile(base, key)
        d = prof.delta(eps)
        assert np.all((d >= 0) & (d <= 1))
        assert np.all(d <= base.delta(eps) * (1 + 1e-12))
        for target in (0.1, 1e-3, 1e-6):
            e = prof.epsilon(target)
            assert prof.is_dp(e, target)
        g2 = prof.group(2).delta(eps)
        assert np.all(g2 >= d * (1 - 1e-12))
        assert prof.relation is base.relation


def test_profile_of_pure_dp_mechanism():
    """Ultra-mixing keeps pure DP with ε₀' = log(1 + γ(e^{ε₀} − 1)); Doeblin does not make a
    pure mechanism's δ vanish before ε₀ (Theorem 1(3) gives δ' > 0)."""
    rr = RandomizedResponse.from_epsilon(2.0)
    base = rr.profile()
    u = UltraMixing(0.4).amplify_profile(base)
    expected = math.log1p(0.4 * math.expm1(2.0))
    assert u.pure_epsilon >= expected and u.pure_epsilon == pytest.approx(expected, rel=1e-12)
    assert u.delta(u.pure_epsilon) == 0.0
    assert u.delta(expected * 0.999) > 0
    d = Doeblin(0.4).amplify_profile(base)
    assert d.pure_epsilon == base.pure_epsilon
    assert d.delta(1.9) > 0


def test_dobrushin_profile_scales_gaussian():
    base = GaussianProfile(2.0)
    eps = np.array([0.0, 0.5, 2.0, 10.0])
    got = Dobrushin(0.25).amplify_profile(base).delta(eps)
    np.testing.assert_allclose(got, 0.25 * base.delta(eps), rtol=1e-12)
    assert np.all(got >= 0.25 * base.delta(eps))


def test_profile_needs_a_profile():
    with pytest.raises(InvalidParameterError, match="profile"):
        Dobrushin(0.5).amplify_profile("not a profile")
    with pytest.raises(InvalidParameterError, match="profile"):
        MarkovKernel([[1.0]]).amplify_profile(0.3)
    with pytest.raises(InvalidParameterError, match="condition"):
        MarkovKernel([[1.0]]).amplify_profile(GaussianProfile(1.0), "nope")


def test_local_dp_profile_is_the_kernel_curve():
    k = MarkovKernel([[0.75, 0.25], [0.25, 0.75]])
    prof = k.local_dp_profile()
    rr = RandomizedResponse(0.75).profile()
    eps = np.array([0.0, 0.3, 1.0, math.log(3.0) * 1.000001])
    np.testing.assert_allclose(prof.delta(eps), rr.delta(eps), rtol=1e-12, atol=1e-15)
    assert prof.pure_epsilon == pytest.approx(math.log(3.0))


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("matrix, fragment", [
    ([[0.5, 0.4], [0.5, 0.5]], "row-stochastic"),           # a row sums to 0.9
    ([[1.2, -0.2], [0.5, 0.5]], "kernel"),                   # negative entry
    ([[0.5, math.nan], [0.5, 0.5]], "NaN"),
    ([[0.5, math.inf], [0.5, 0.5]], "kernel"),
    ([0.5, 0.5], "2-dimensional"),
    ([[]], "kernel"),
    ("abc", "kernel"),
])
def test_bad_kernels_raise(matrix, fragment):
    with pytest.raises(InvalidParameterError, match=fragment) as info:
        MarkovKernel(matrix)
    assert info.value.parameter == "kernel"


def test_row_sum_tolerance_is_stated_and_both_sides():
    MarkovKernel([[0.5, 0.5 - 1e-10]])
    with pytest.raises(InvalidParameterError, match="within 1e-09"):
        MarkovKernel([[0.5, 0.5 - 1e-8]])
    k = MarkovKernel([[0.5, 0.5 - 1e-8]], tolerance=1e-6)
    assert k.matrix.sum() == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(InvalidParameterError, match="tolerance"):
        MarkovKernel([[1.0]], tolerance=-1.0)


def test_csv_reader(tmp_path):
    f = tmp_path / "k.csv"
    f.write_text("# a comment\nout0,out1,out2\n0.5,0.3,0.2\n\n0.2,0.5,0.3,\n")
    k = read_kernel_csv(f)
    assert k.matrix.shape == (2, 3)
    assert MarkovKernel.from_csv(str(f)).dobrushin == pytest.approx(0.3)
    bad = {
        "ragged.csv": "0.5,0.5\n0.2,0.3,0.5\n",
        "text.csv": "0.5,0.5\nfoo,bar\n",
        "empty.csv": "# nothing\n",
        "nonstochastic.csv": "0.5,0.6\n0.5,0.5\n",
        "negative.csv": "1.5,-0.5\n0.5,0.5\n",
    }
    for name, text in bad.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(InvalidParameterError) as info:
            read_kernel_csv(path)
        assert info.value.parameter == "kernel", name
    with pytest.raises(InvalidParameterError, match="readable"):
        read_kernel_csv(tmp_path / "missing.csv")


def test_apply_is_mu_k():
    k = MarkovKernel([[0.9, 0.1], [0.2, 0.8]])
    np.testing.assert_allclose(k.apply([0.5, 0.5]), [0.55, 0.45])
    with pytest.raises(InvalidParameterError, match="pmf"):
        k.apply([1.0, 0.0, 0.0])
