"""The Fourier accountant (MUST Algorithm 1, made rigorous) and the mixture-of-Gaussians PLDs.

Oracles: mpmath (30 digits) with the multiplicity weights written out from the MUST paper's
formulas (independently of privamp.sampling), the exact binomial composition of the canonical
(ε₀, δ₀) pair, direct (non-FFT) convolution, and published values (MUST S7, the catalogue's WOR
example, the landscape's Poisson-Gaussian reference).
"""

from __future__ import annotations

import math
import time

import mpmath as mp
import numpy as np
import pytest
from scipy import special

from privamp.errors import InvalidParameterError, InvalidTypeError, NumericalError
from privamp.mechanisms.generic import ApproxDPMechanism
from privamp.pld import PoissonGaussianCurve, ProfileCurve
from privamp.pld.fourier import (
    MAX_GRID,
    FourierBracket,
    _compose,
    _grid_pld,
    _power_spectrum,
    fourier_accountant,
)
from privamp.pld.mixture import MixturePLD
from privamp.sampling import WOR, WR, MultiplicityPmf, MustOW, MustWO, MustWW, Poisson

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 30

# ---------------------------------------------------------------------------------------------
# mpmath oracles, from the paper's formulas
# ---------------------------------------------------------------------------------------------


def must_ow_weights(n, b, m):
    """MUST §3.3: (b/n)·Bin(l; m, 1/b) for l ≥ 1 and (b/n)(1 − 1/b)^m + 1 − b/n for l = 0."""
    n, b = mp.mpf(n), mp.mpf(b)
    w = [(b / n) * mp.binomial(m, j) * (1 / b) ** j * (1 - 1 / b) ** (m - j)
         for j in range(m + 1)]
    w[0] += 1 - b / n
    return w


def wr_weights(n, m):
    """S6: Bin(l; m, 1/n)."""
    n = mp.mpf(n)
    return [mp.binomial(m, j) * (1 / n) ** j * (1 - 1 / n) ** (m - j) for j in range(m + 1)]


class MpPair:
    """P = Σ a_j N(μ_j, σ²), Q = Σ b_j N(ν_j, σ²) in mpmath."""

    def __init__(self, p, q, sigma):
        self.p = [(mp.mpf(mu), mp.mpf(a)) for mu, a in p]
        self.q = [(mp.mpf(nu), mp.mpf(b)) for nu, b in q]
        self.sigma = mp.mpf(sigma)

    @classmethod
    def substitution(cls, weights, sigma):
        return cls([(j, w) for j, w in enumerate(weights)],
                   [(-j, w) for j, w in enumerate(weights)], sigma)

    def f(self, comps, t):
        s = self.sigma
        return mp.fsum(a * mp.exp(-(t - mu) ** 2 / (2 * s * s)) for mu, a in comps) \
            / (mp.sqrt(2 * mp.pi) * s)

    def loss(self, t):
        t = mp.mpf(t)
        return mp.log(self.f(self.p, t)) - mp.log(self.f(self.q, t))

    def root(self, s, guess):
        """L⁻¹(s) by the secant method from a guess, then certified: L changes sign across
        the returned point ± 1e-20 (L is increasing)."""
        s = mp.mpf(s)
        t = mp.findroot(lambda t: self.loss(t) - s, (mp.mpf(guess) - mp.mpf("1e-6"),
                                                      mp.mpf(guess) + mp.mpf("1e-6")),
                        solver="secant")
        eps = mp.mpf("1e-20")
        assert self.loss(t - eps) < s < self.loss(t + eps)
        return t

    def tail(self, comps, t):
        return mp.fsum(a * mp.ncdf((mu - t) / self.sigma) for mu, a in comps)

    def survival(self, s, guess):
        return self.tail(self.p, self.root(s, guess))

    def hockey(self, eps, guess):
        t = self.root(eps, guess)
        return self.tail(self.p, t) - mp.exp(eps) * self.tail(self.q, t)


OW = dict(n=10_000, b=118, m=200)


@pytest.fixture(scope="module")
def must_ow():
    return MixturePLD.from_scheme(MustOW(**OW), noise_multiplier=4.0)


@pytest.fixture(scope="module")
def must_ow_mp():
    # module-scoped: built before the per-test precision fixture runs, so at this module's own
    with mp.workdps(MPMATH_DPS):
        return MpPair.substitution(must_ow_weights(**OW), 4.0)


# ---------------------------------------------------------------------------------------------
# MixturePLD: the loss, its inverse, the distribution
# ---------------------------------------------------------------------------------------------


def test_weights_from_privamp_sampling_match_the_paper(must_ow):
    w = np.exp(must_ow.p_log_weights)
    ref = np.array([float(v) for v in must_ow_weights(**OW)])
    assert np.allclose(w, ref, rtol=1e-12, atol=1e-300)
    assert np.array_equal(must_ow.q_means, -must_ow.p_means)


@pytest.mark.parametrize("t", [-300.0, -40.0, -3.0, -0.5, 0.0, 0.7, 5.0, 40.0, 300.0])
def test_loss_matches_mpmath_without_overflow(must_ow, must_ow_mp, t):
    # t·l/σ² reaches 3750 at t = 300: the naive sums overflow, the log-sum-exp form does not
    got = must_ow.loss(t)
    want = float(must_ow_mp.loss(t))
    assert math.isfinite(got)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-14)


def test_loss_is_increasing_and_derivative_is_closed_form(must_ow, must_ow_mp):
    t = np.linspace(-60, 60, 2001)
    lv = must_ow.loss(t)
    assert np.all(np.diff(lv) > 0)
    for tt in (-20.0, -1.0, 0.3, 12.0):
        want = float(mp.diff(must_ow_mp.loss, tt))
        assert must_ow.loss_derivative(tt) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("s", [-9.5, -2.0, -1e-3, 0.0, 0.4, 3.0, 9.9])
def test_inverse_loss_against_mpmath_root(must_ow, must_ow_mp, s):
    t = must_ow.inverse_loss(s)
    guess = float(np.interp(s, must_ow.loss(np.linspace(-60, 60, 241)), np.linspace(-60, 60, 241)))
    want = float(must_ow_mp.root(s, guess))
    assert t == pytest.approx(want, rel=1e-10, abs=1e-10)
    assert must_ow.loss(t) == pytest.approx(s, abs=1e-12)


def test_wor_inverse_and_derivative_match_the_s6_closed_forms():
    # MUST S6 (WOR, q = m/n): L⁻¹(s) = σ² log((n/(2m)) e^{1/(2σ²)} (−c(1−e^s) + R)), c = 1 − q,
    # a = q e^{−1/(2σ²)}, R = √(c²(1−e^s)² + 4a²e^s); derivative as catalogued (§2.6)
    n, m, sigma = 10_000, 200, 4.0
    pld = MixturePLD.from_scheme(WOR(n=n, m=m), sigma)
    q = m / n
    c = 1 - q
    a = q * math.exp(-1 / (2 * sigma**2))
    for s in (-3.0, -0.2, 0.0, 0.05, 1.0, 4.0):
        es = math.exp(s)
        big_r = math.sqrt(c * c * (1 - es) ** 2 + 4 * a * a * es)
        inv = sigma**2 * math.log(n / (2 * m) * math.exp(1 / (2 * sigma**2))
                                  * (-c * (1 - es) + big_r))
        deriv = sigma**2 * (c * es * big_r + c * c * (1 - es) * (-es) + 2 * a * a * es) \
            / (-c * (1 - es) * big_r + c * c * (1 - es) ** 2 + 4 * a * a * es)
        t = pld.inverse_loss(s)
        assert t == pytest.approx(inv, rel=1e-9, abs=1e-12)
        assert 1.0 / pld.loss_derivative(t) == pytest.approx(deriv, rel=1e-8)


def test_poisson_loss_and_range_match_s6():
    q, sigma = 0.01, 1.0
    rem, add = MixturePLD.poisson_pair(q, sigma)
    assert rem.loss_range == (pytest.approx(math.log1p(-q)), math.inf)
    assert add.loss_range == (-math.inf, pytest.approx(-math.log1p(-q)))
    for t in (-5.0, 0.0, 0.5, 3.0):
        want = math.log(q * math.exp((2 * t - 1) / (2 * sigma**2)) + 1 - q)
        assert rem.loss(t) == pytest.approx(want, rel=1e-13, abs=1e-15)
        assert add.loss(-t) == pytest.approx(-want, rel=1e-13, abs=1e-15)
    for s in (-0.009, 0.0, 0.3, 5.0):  # L⁻¹(s) = σ² log((e^s − (1 − q))/q) + 1/2
        want = sigma**2 * math.log((math.exp(s) - (1 - q)) / q) + 0.5
        assert rem.inverse_loss(s) == pytest.approx(want, rel=1e-10)
    # outside the range of L the survival function is exact
    lo, up = rem.survival_bounds(np.array([-0.02, -1.0]))
    assert np.all(lo == 1.0) and np.all(up == 1.0)
    lo, up = add.survival_bounds(np.array([0.02, 3.0]))
    assert np.all(lo == 0.0) and np.all(up == 0.0)


@pytest.mark.parametrize("s", [-8.0, -0.05, 0.0, 0.02, 0.5, 2.0, 6.0])
def test_survival_bounds_bracket_the_mpmath_tail(must_ow, must_ow_mp, s):
    lo, up = must_ow.survival_bounds(np.array([s]))
    want = float(must_ow_mp.survival(s, must_ow.inverse_loss(s)))
    assert lo[0] <= want <= up[0]
    # the bracket width is the L⁻¹ bracket (rounding of L over the small slope L' ≈ 1e-3 near
    # t = 0) times the density: ~1e-10 relative, i.e. ~1e-13 in the loss
    assert up[0] - lo[0] <= 1e-9 * want + 1e-300


def test_wr_survival_bounds_bracket_mpmath():
    pld = MixturePLD.from_scheme(WR(n=1000, m=50), 2.0)
    ref = MpPair.substitution(wr_weights(1000, 50), 2.0)
    for s in (-1.0, 0.01, 0.3, 2.5):
        lo, up = pld.survival_bounds(np.array([s]))
        want = float(ref.survival(s, pld.inverse_loss(s)))
        assert lo[0] <= want <= up[0]


def test_cell_masses_sum_to_one(must_ow):
    edges = np.concatenate([[-np.inf], np.linspace(-10, 10, 4001), [np.inf]])
    cells = must_ow.cell_masses(edges)
    assert np.all(cells >= 0)
    assert math.fsum(cells.tolist()) == pytest.approx(1.0, abs=1e-12)
    # the truncated tails of a finite grid are tiny here
    assert math.fsum(cells[1:-1].tolist()) == pytest.approx(1.0, abs=1e-12)


def test_grid_pld_is_a_probability_vector_on_each_side(must_ow):
    grid = _grid_pld(must_ow, 20 / 2**14, 2**14)
    up_total = math.fsum(grid.upper.tolist()) + grid.p_inf_upper
    lo_total = math.fsum(grid.lower.tolist()) + grid.p_inf_lower + grid.dropped_lower
    assert up_total == pytest.approx(1.0, abs=1e-12)
    assert lo_total == pytest.approx(1.0, abs=1e-11)
    assert np.all(grid.upper >= 0) and np.all(grid.lower >= 0)


@pytest.mark.parametrize("make", [
    lambda: MixturePLD.from_scheme(MustOW(**OW), 4.0),
    lambda: MixturePLD.poisson(0.05, 1.5, "remove"),
    lambda: MixturePLD.poisson(0.05, 1.5, "add"),
])
def test_lemma2_symmetry(make):
    # Sommer's Lemma 2 (MUST §2): ω_{X/X'}(s) = e^s ω_{X'/X}(−s)
    pld = make()
    rev = pld.swapped()
    s = np.array([-2.0, -0.3, 0.01, 0.2, 1.5, 3.0])
    lo, hi = pld.loss_range
    s = s[(s > lo) & (s < hi) & (-s > rev.loss_range[0]) & (-s < rev.loss_range[1])]
    left = pld.density(s)
    right = np.exp(s) * rev.density(-s)
    assert np.all(left > 0)
    assert np.allclose(left, right, rtol=1e-9)


def test_symmetric_schemes_have_equal_directions(must_ow):
    # f_X'(−t) = f_X(t): the swapped pair is the same pair (MUST §3.3)
    rev = must_ow.swapped()
    s = np.linspace(-5, 5, 11)
    assert np.allclose(must_ow.survival(s), rev.survival(s), rtol=1e-12, atol=1e-300)


def test_certified_flags():
    assert MixturePLD.from_scheme(WOR(n=100, m=5), 1.0).certified
    assert MixturePLD.from_scheme(Poisson(0.1), 1.0).certified
    assert MixturePLD.from_scheme(Poisson(0.1), 1.0, orientation="add").certified
    for scheme in (WR(n=100, m=5), MustOW(100, 20, 5), MustWO(100, 20, 5), MustWW(100, 20, 5)):
        assert not MixturePLD.from_scheme(scheme, 1.0).certified


def test_results_on_unproven_pairs_are_labelled_estimates():
    # the bracket holds for the pair; whether the pair dominates the mechanism is the source's
    # flag, and the result carries it (WR and MUST: estimates, never "certified")
    kw = dict(count=20, eps=1.0, L=8.0, r=2**12)
    wor = fourier_accountant(MixturePLD.from_scheme(WOR(n=100, m=5), 1.0), **kw)
    assert isinstance(wor, FourierBracket) and wor.certified and wor.status == "certified"
    pois = fourier_accountant(MixturePLD.poisson_pair(0.05, 1.0), **kw)
    assert pois.certified
    curve = fourier_accountant(PoissonGaussianCurve(1.0, 0.05, "remove"), **kw)
    assert curve.certified
    for scheme in (WR(n=100, m=5), MustOW(100, 20, 5), MustWO(100, 20, 5), MustWW(100, 20, 5)):
        pld = MixturePLD.from_scheme(scheme, 1.0)
        for b in (fourier_accountant(pld, **kw),
                  fourier_accountant([pld, pld.swapped()], **kw),
                  fourier_accountant([MixturePLD.from_scheme(WOR(n=100, m=5), 1.0), pld], **kw),
                  fourier_accountant(pld, count=20, delta=1e-3, L=8.0, r=2**12)):
            assert b.certified is False and b.status == "estimate"
            assert "certified=False" in repr(b)


def test_accountant_fourier_never_composes_a_mixture_pair(monkeypatch):
    # Accountant("fourier") feeds the accountant the events' dominating pair curves (amplified
    # profiles for WR and MUST), never the MUST paper's mixture pairs
    from privamp import GaussianMechanism
    from privamp.accountant import Accountant
    from privamp.pld import fourier as fmod
    from privamp.pld.curves import PairCurve

    seen = []
    real = fmod.fourier_accountant

    def spy(source, **kw):
        seen.append(source)
        out = real(source, **kw)
        assert out.certified
        return out

    monkeypatch.setattr(fmod, "fourier_accountant", spy)
    mech = GaussianMechanism(2.0, relation="substitute")
    for scheme in (WR(n=100, m=2), MustOW(100, 20, 2)):
        b = Accountant("fourier").add(mech, 5, scheme=scheme).delta(1.0)
        assert 0.0 <= b.lower <= b.upper <= 1.0
    assert seen and all(isinstance(s, PairCurve) for s in seen)


def test_untracked_multiplicity_tail_goes_to_the_safe_side():
    # a law with 1e-4 of its mass not listed (multiplicities ≥ 2): the upper survival keeps it
    pmf = MultiplicityPmf(np.log([0.9, 0.0999]), math.log(1e-4))
    pld = MixturePLD.from_multiplicity(pmf, 1.0)
    lo, up = pld.survival_bounds(np.array([0.0, 5.0, 50.0]))
    assert np.all(up >= 1e-4) and np.all(lo <= up)
    assert lo[2] < 1e-30
    b = fourier_accountant(pld, count=3, eps=50.0, L=60.0, r=2**14)
    assert b.upper >= 1 - (1 - 1e-4) ** 3 - 1e-15
    assert b.lower == 0.0


# ---------------------------------------------------------------------------------------------
# the accountant
# ---------------------------------------------------------------------------------------------

#: MUST Supplement S7 / catalogue §2.6: MUST.OW(10000, 118, 200), σ = 4, L = 10, r = 5e5,
#: δ(ε = 1) after k compositions, with the number of significant digits printed.
S7 = {200: (1.3723e-8, 5), 400: (9.87e-8, 3), 600: (3.08e-6, 3), 800: (2.90e-5, 3),
      1000: (1.228e-4, 4)}


def _printed_interval(value: float, digits: int) -> tuple[float, float]:
    """The numbers that print as ``value`` with ``digits`` significant digits."""
    half = 0.5 * 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return value - half, value + half


def test_s7_values_inside_the_bracket_on_a_coarser_grid(must_ow):
    # r = 2^17 instead of 5e5 (faster); the bracket only widens
    for k, (value, _) in S7.items():
        b = fourier_accountant(must_ow, count=k, eps=1.0, L=10.0, r=2**17)
        assert b.lower <= value <= b.upper, (k, b)


@pytest.mark.slow
def test_s7_values_are_the_lower_end_at_the_papers_grid(must_ow):
    # At the paper's grid (L = 10, r = 5e5) the printed values sit at the *lower* end of the
    # bracket: they are the left-endpoint sums (the catalogue's "lower/upper agree to ~4
    # digits" is not what the construction gives — the sides drift k·Δx = 0.04 apart).
    for k in (200, 1000):
        value, digits = S7[k]
        b = fourier_accountant(must_ow, count=k, eps=1.0, L=10.0, r=500_000)
        lo, hi = _printed_interval(value, digits)
        assert b.lower <= hi and lo <= b.upper, (k, b)
        assert b.lower == pytest.approx(value, rel=0.01)
        assert b.upper > 1.05 * value


@pytest.mark.slow
def test_s7_values_are_below_the_true_delta(must_ow):
    # on a finer grid the certified lower bound exceeds the printed values: they under-report δ
    for k in (600, 1000):
        value, digits = S7[k]
        b = fourier_accountant(must_ow, count=k, eps=1.0, L=5.0, r=2**19)
        assert b.lower > _printed_interval(value, digits)[1], (k, b)
    assert b.lower <= FINE_OW_1000[0] <= FINE_OW_1000[1] <= b.upper


@pytest.mark.slow
def test_wor_example_inside_the_bracket_at_the_notebook_grid():
    # catalogue §2.6.3: WOR(q = 0.02), σ = 4, k = 1000, ε = 1, L = 10, r = 5e5: "δ ≈ 8.75e-5"
    pld = MixturePLD.from_scheme(WOR(n=10_000, m=200), 4.0)
    b = fourier_accountant(pld, count=1000, eps=1.0, L=10.0, r=500_000)
    lo, hi = _printed_interval(8.75e-5, 3)
    assert b.lower <= hi and lo <= b.upper
    # on a finer grid the bracket excludes 8.75e-5: that value is the drifted lower end; the
    # true δ is about 1.095e-4 (the catalogue's "naive point rule" value)
    fine = fourier_accountant(pld, count=1000, eps=1.0, L=6.0, r=2**20)
    assert fine.lower > 1e-4 > 8.75e-5
    assert fine.lower <= 1.095e-4 <= fine.upper
    assert b.lower <= fine.lower <= fine.upper <= b.upper


def test_poisson_gaussian_reference_epsilon():
    # landscape.md: σ = 1, q = 0.01, 1000 steps, δ = 1e-5 → ε = 1.82824 (three libraries)
    pair = MixturePLD.poisson_pair(0.01, 1.0)
    b = fourier_accountant(pair, count=1000, delta=1e-5)
    assert b.lower <= 1.82824 <= b.upper
    assert b.upper - b.lower < 0.05
    # the remove orientation alone is not enough for add/remove, but it is the worse one here
    rem = fourier_accountant(pair[0], count=1000, delta=1e-5)
    assert rem.upper <= b.upper


def test_poisson_from_curves_and_from_mixtures_agree():
    curves = (PoissonGaussianCurve(1.0, 0.01, "remove"), PoissonGaussianCurve(1.0, 0.01, "add"))
    pair = MixturePLD.poisson_pair(0.01, 1.0)
    a = fourier_accountant(curves, count=300, eps=1.0, L=3.0, r=2**16)
    b = fourier_accountant(pair, count=300, eps=1.0, L=3.0, r=2**16)
    assert a.lower <= b.upper and b.lower <= a.upper
    assert a.upper == pytest.approx(b.upper, rel=1e-6)
    # the curves' certified lower values collapse where c = 1 − α(1 − γ) cancels (the add
    # pair near ε = −log(1 − γ)): a valid lower end, 3e-5 relative below the mixtures'
    assert a.lower == pytest.approx(b.lower, rel=1e-4)


def test_single_step_brackets_the_exact_hockey_stick(must_ow, must_ow_mp):
    for eps in (0.0, 0.005, 0.02):
        want = float(must_ow_mp.hockey(eps, must_ow.inverse_loss(eps)))
        assert must_ow.hockey_stick(np.array([eps]))[0] == pytest.approx(want, rel=1e-9)
        b = fourier_accountant(must_ow, count=1, eps=eps, L=1.0, r=2**16)
        assert b.lower <= want <= b.upper
        assert b.upper - b.lower < 0.05 * want


#: Certified brackets at L = 6, r = 2^22 (this code; ~2 min per scheme), δ(ε = 1) at k = 1000:
#:   fourier_accountant(MixturePLD.from_scheme(MustOW(10000, 118, 200), 4.0), count=1000,
#:                      eps=1.0, L=6.0, r=2**22)  → [1.49517e-4, 1.54083e-4]; MustWW: →
#:   [1.51808e-4, 1.56427e-4]; for MUST.OW at k = 200, 400, 600, 800: [1.40274e-8, 1.41390e-8],
#:   [1.10317e-7, 1.12366e-7], [3.69224e-6, 3.79604e-6], [3.51178e-5, 3.61608e-5].
FINE_OW_1000 = (1.49517e-4, 1.54083e-4)
FINE_WW_1000 = (1.51808e-4, 1.56427e-4)


def test_must_ww_runs_where_the_paper_reports_numerical_errors():
    # S7: "The FA algorithm produced numerical errors in the case of MUST.WW"
    ww = MixturePLD.from_scheme(MustWW(**OW), 4.0)
    b = fourier_accountant(ww, count=1000, eps=1.0, L=10.0, r=2**16)
    assert 0.0 < b.lower <= FINE_WW_1000[0] <= FINE_WW_1000[1] <= b.upper < 1e-3


def test_bracket_widens_with_coarser_grids():
    pld = MixturePLD.from_scheme(WOR(n=1000, m=20), 2.0)
    widths = []
    for r in (2**12, 2**14, 2**16):  # nested grids
        b = fourier_accountant(pld, count=100, eps=0.5, L=4.0, r=r)
        assert 0.0 <= b.lower <= b.upper <= 1.0
        widths.append(b.width)
    assert widths[0] > widths[1] > widths[2]


@pytest.mark.parametrize("sigma, k, eps", [(0.3, 200, 0.0), (0.5, 50, 1.0), (1.0, 1, 0.0),
                                           (8.0, 10, 0.001), (2.0, 5000, 40.0)])
def test_bracket_stays_in_unit_interval(sigma, k, eps):
    pld = MixturePLD.from_scheme(WOR(n=100, m=10), sigma)
    b = fourier_accountant(pld, count=k, eps=eps, L=8.0, r=2**12)
    assert 0.0 <= b.lower <= b.upper <= 1.0


def test_mass_at_infinity_term():
    # canonical (ε₀, δ₀) pair (Kairouz et al.): losses +ε₀, −ε₀ and +∞ (mass δ₀); its k-fold
    # composition is a binomial, δ(ε) = 1 − (1 − δ₀)^k + Σ_j C(k,j) p₊^j p₋^{k−j} (1 − e^{ε − s_j})₊
    e0, d0, k = 0.5, 1e-3, 20
    curve = ProfileCurve(ApproxDPMechanism(epsilon=e0, delta=d0).profile())
    pp = (1 - d0) / (1 + math.exp(-e0))
    pm = (1 - d0) / (1 + math.exp(e0))
    at_inf = -math.expm1(k * math.log1p(-d0))

    def exact(eps):
        tot = mp.mpf(at_inf)
        for j in range(k + 1):
            s = (2 * j - k) * e0
            if s > eps:
                tot += mp.binomial(k, j) * mp.mpf(pp) ** j * mp.mpf(pm) ** (k - j) \
                    * (1 - mp.exp(eps - s))
        return float(tot)

    for eps in (0.0, 1.0, 3.0, 20.0):
        b = fourier_accountant(curve, count=k, eps=eps)
        assert b.lower <= exact(eps) <= b.upper
        # the +∞ atom is in both ends (the lower end loses ~2e-5 relative to the slack of the
        # curve's tail bounds, which puts ~1e-9 of spurious mass far left and inflates the
        # Chernoff term of the folded-back mass)
        assert b.lower >= at_inf * (1 - 1e-4)
    tight = fourier_accountant(curve, count=k, eps=20.0)
    assert tight.upper - tight.lower < 1e-4 * at_inf


def test_epsilon_bracket_inverts_the_delta_bracket():
    pld = MixturePLD.from_scheme(WOR(n=1000, m=20), 1.0)
    kw = dict(count=200, L=8.0, r=2**15)
    delta = 1e-5
    eb = fourier_accountant(pld, delta=delta, **kw)
    assert 0 < eb.lower < eb.upper < math.inf
    # both sides of each boundary
    assert fourier_accountant(pld, eps=eb.upper, **kw).upper <= delta
    assert fourier_accountant(pld, eps=eb.upper - 1e-6, **kw).upper > delta
    assert fourier_accountant(pld, eps=eb.lower, **kw).lower > delta
    assert fourier_accountant(pld, eps=eb.lower + 1e-6, **kw).lower <= delta


def test_epsilon_is_infinite_when_the_grid_cannot_certify():
    pld = MixturePLD.from_scheme(WOR(n=10, m=5), 0.3)
    b = fourier_accountant(pld, count=50, delta=1e-6, L=2.0, r=2**10)
    assert b.upper == math.inf


@pytest.mark.parametrize("r", [256, 810, 1250, 4096])  # 4⁴, 2·3⁴·5, 2·5⁴, 4⁶
@pytest.mark.parametrize("k", [1, 6, 40])
def test_fft_error_bound_covers_the_rounding(r, k):
    # direct convolution in long double (error ≤ k·60·u_ext ≈ 1.3e-16 per entry, added),
    # folded onto the window; factors 3 and 5 run radf3/radf5 and radb3/radb5
    rng = np.random.default_rng(3)
    c = np.zeros(r)
    c[r // 3:r // 3 + 60] = rng.random(60)
    c /= c.sum()
    u_fft, fe = _power_spectrum(c, k)
    part = c[r // 3:r // 3 + 60].astype(np.longdouble)
    full = part
    for _ in range(k - 1):
        full = np.convolve(full, part)
    # index i of c is loss (i − r/2)Δx; entry t of the k-fold sum is index t + k⌊r/3⌋ of the
    # k-fold sum of indices, loss (t + k⌊r/3⌋ − k r/2)Δx
    folded = np.zeros(r, dtype=np.longdouble)
    np.add.at(folded, (np.arange(full.size) + k * (r // 3) - k * (r // 2) + r // 2) % r, full)
    err = np.abs(u_fft - folded).astype(float)
    ref_err = k * 60 * 2.0**-63
    assert np.all(err <= fe.d_inf + fe.rnd + ref_err)
    assert math.sqrt(float(np.sum(err**2))) <= fe.d_2 + math.sqrt(r) * (fe.rnd + ref_err)
    assert fe.d_inf + fe.rnd < 1e-13


def test_grid_lengths_are_5_smooth(monkeypatch):
    # the FFT error constants exist for pocketfft's radix-2/3/4/5 passes only: other lengths
    # (Bluestein, generic radix) are refused, and the automatic grid is 5-smooth
    from privamp.pld import fourier as fmod

    with pytest.raises(InvalidParameterError, match="5-smooth"):
        fourier_accountant(_PLD, count=10, eps=1.0, r=2 * 7 * 64)
    seen = []
    build = fmod._build

    def spy(source, k, L, r):
        seen.append(r)
        return build(source, k, L, r)

    monkeypatch.setattr(fmod, "_build", spy)
    fourier_accountant(_PLD, count=7, eps=1.0, L=3.1)  # 2⌈3.1·7/0.02⌉ = 2172 → 2^14
    fourier_accountant(_PLD, count=3, eps=1.0, L=7.01, grid_step=7.01 / 11_000)
    assert seen[0] == 2**14 and seen[1] == 22_500  # 2·11,000 → 2²·3²·5⁴
    assert all(fmod._even_fast_length(r) == r for r in seen)


def test_truncation_term_keeps_a_too_small_window_honest():
    pair = MixturePLD.poisson_pair(0.2, 1.0)
    truth = fourier_accountant(pair, count=50, eps=1.0, L=12.0, r=2**18)
    small = fourier_accountant(pair, count=50, eps=1.0, L=2.5, r=2**15)
    assert small.lower <= truth.upper and truth.lower <= small.upper
    assert small.width > truth.width
    grid = _grid_pld(pair[0], 5.0 / 2**15, 2**15)
    upper, lower = _compose(grid, 50)
    # the upper side adds the mass above the window, the lower one subtracts the mass below it
    # (mass above the window folds to lower losses, which only lowers δ)
    assert upper.tail > 1e-8 and 0.0 < lower.tail < 1.0


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------

_PLD = MixturePLD.from_scheme(WOR(n=100, m=10), 1.0)

BAD = [
    (lambda: fourier_accountant(_PLD, count=0, eps=1.0), "count", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=2.5, eps=1.0), "count", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=-1.0), "eps", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=math.nan), "eps", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, delta=0.0), "delta", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, delta=1.5), "delta", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10), "eps/delta", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, delta=1e-5), "eps/delta",
     InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, r=1001), "r", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, r=2), "r", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, L=0.0), "L", InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, L=math.inf), "L",
     InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, r=1024, grid_step=0.01), "grid_step",
     InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, grid_step=-0.1), "grid_step",
     InvalidParameterError),
    (lambda: fourier_accountant(_PLD, count=10, eps=1.0, tail_tol=2.0), "tail_tol",
     InvalidParameterError),
    (lambda: fourier_accountant("gaussian", count=10, eps=1.0), "source", InvalidTypeError),
    (lambda: fourier_accountant([], count=10, eps=1.0), "source", InvalidTypeError),
    (lambda: fourier_accountant([_PLD, 3], count=10, eps=1.0), "source[1]", InvalidTypeError),
    (lambda: MixturePLD.from_scheme(WOR(n=100, m=10), -1.0), "noise_multiplier",
     InvalidParameterError),
    (lambda: MixturePLD.from_scheme(WOR(n=100, m=10), math.nan), "noise_multiplier",
     InvalidParameterError),
    (lambda: MixturePLD.from_scheme("wor", 1.0), "scheme", InvalidTypeError),
    (lambda: MixturePLD.from_scheme(Poisson(0.1), 1.0, orientation="sideways"), "orientation",
     InvalidParameterError),
    (lambda: MixturePLD.poisson(0.0, 1.0), "rate", InvalidParameterError),
    (lambda: MixturePLD.from_multiplicity([0.5, 0.5], 1.0), "pmf", InvalidTypeError),
    (lambda: MixturePLD([0.0, -1.0], [math.log(0.5)] * 2, [0.0], [0.0], 1.0), "p_means",
     InvalidParameterError),
    (lambda: MixturePLD([0.0], [0.0], [0.0, 1.0], [math.log(0.5)] * 2, 1.0), "q_means",
     InvalidParameterError),
    (lambda: MixturePLD([0.0, 1.0], [math.log(0.5), math.log(0.4)], [0.0], [0.0], 1.0),
     "p_log_weights", InvalidParameterError),
    (lambda: MixturePLD([0.0, 1.0], [0.0], [0.0], [0.0], 1.0), "p_log_weights",
     InvalidParameterError),
    (lambda: _PLD.cell_masses([0.0, 0.0, 1.0]), "edges", InvalidParameterError),
    (lambda: _PLD.loss("x"), "t", InvalidTypeError),
]


@pytest.mark.parametrize("call, name, exc", BAD)
def test_bad_input_raises_a_typed_error_naming_the_parameter(call, name, exc):
    with pytest.raises(exc) as info:
        call()
    assert name in str(info.value)


def test_grid_above_the_memory_bound_fails_fast():
    start = time.perf_counter()
    with pytest.raises(NumericalError, match="2\\^24"):
        fourier_accountant(_PLD, count=10, eps=1.0, r=MAX_GRID + 2)
    with pytest.raises(NumericalError):
        fourier_accountant(_PLD, count=10, eps=1.0, L=10.0, grid_step=1e-7)
    assert time.perf_counter() - start < 1.0


def test_ndtr_assumption_is_conservative():
    # the survival bounds assume log_ndtr is accurate to 1e-12 relative; check a spread of
    # arguments against mpmath
    z = np.array([-38.0, -20.0, -5.0, -1.0, 0.0, 0.5, 3.0, 8.0])
    got = special.log_ndtr(z)
    want = np.array([float(mp.log(mp.ncdf(v))) for v in z])
    assert np.all(np.abs(np.expm1(got - want)) < 1e-13)


def test_elementary_function_accuracy_assumption():
    # the powering and δ-functional error terms assume NumPy's float64 log, exp, log1p, expm1,
    # complex abs (hypot), angle (arctan2) and the cos/sin of exp(i·b) within 4 ulp (8u relative;
    # cos/sin 8u absolute): measured here on the kinds of arguments the accountant passes
    rng = np.random.default_rng(11)
    u = 2.0**-53
    mp.mp.dps = 40
    re = rng.standard_normal(400) * 10.0 ** rng.uniform(-12, 0, 400)
    im = rng.standard_normal(400) * 10.0 ** rng.uniform(-12, 0, 400)
    z = re + 1j * im
    pos = 10.0 ** rng.uniform(-300, 0.3, 400)
    tiny_to_big = 10.0 ** rng.uniform(-18, 2, 400)
    args = np.concatenate([-tiny_to_big, rng.uniform(-708, 0, 400)])  # normal results
    phases = rng.uniform(-1, 1, 400) * 10.0 ** rng.uniform(0, 9, 400)

    def rel(got, want):
        return abs(mp.mpf(float(got)) - want) / abs(want) if want != 0 else abs(got)

    worst = 0.0
    for v in pos:
        worst = max(worst, rel(np.log(v), mp.log(mp.mpf(v))))
    for a in args:
        worst = max(worst, rel(np.exp(a), mp.exp(mp.mpf(a))), rel(np.expm1(a),
                    mp.expm1(mp.mpf(a))))
    for v in tiny_to_big:
        worst = max(worst, rel(np.log1p(v), mp.log1p(mp.mpf(v))))
    for w in z:
        worst = max(worst, rel(np.abs(w), mp.hypot(mp.mpf(w.real), mp.mpf(w.imag))),
                    rel(np.angle(w), mp.atan2(mp.mpf(w.imag), mp.mpf(w.real))))
    assert worst <= 8 * u
    # the phase factor: absolute error of each part on [−1, 1]
    e = np.exp(1j * phases)
    err = max(max(abs(mp.mpf(float(e[i].real)) - mp.cos(mp.mpf(b))),
                  abs(mp.mpf(float(e[i].imag)) - mp.sin(mp.mpf(b)))) for i, b in enumerate(phases))
    assert err <= 8 * u
    # logarithms near 1 (the zero frequency: |X| ≈ 1): relative accuracy of the result holds
    near = 1.0 + rng.standard_normal(200) * 10.0 ** rng.uniform(-15, -1, 200)
    assert max(rel(np.log(v), mp.log(mp.mpf(v))) for v in near) <= 8 * u


def test_accountant_fourier_compares_events_by_value():
    # two equal events built separately are one kind of event
    from privamp import GaussianMechanism
    from privamp.accountant import Accountant
    from privamp.sampling import WR as _WR

    acc = Accountant("fourier").add(GaussianMechanism(1.0), 5).add(GaussianMechanism(1.0), 5)
    one = Accountant("fourier").add(GaussianMechanism(1.0), 10)
    assert acc.delta(2.0) == one.delta(2.0)
    # ... and events that differ in how group privacy enters are not: composing the first
    # event's curves for all ten steps reported δ(2) ≤ 0.00431 where the exact composition has
    # δ(2) ≥ 0.00636 (pld lower end): an upper bound below the truth
    mech = GaussianMechanism(1.0, relation="substitute")
    scheme = _WR(100, 10)
    mixed = Accountant("fourier").add(mech, 5, scheme=scheme, group_privacy="white-box")
    from privamp.errors import UnsupportedCombinationError

    # refused when the second kind is added, not at the query
    with pytest.raises(UnsupportedCombinationError, match="one kind of event"):
        mixed.add(mech, 5, scheme=scheme, group_privacy="black-box")
    assert len(mixed.events) == 1
