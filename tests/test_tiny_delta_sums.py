"""δ down to 1e-300: the tilted compositions against exact references.

Below δ = 1e-9 the pld backend composes exponentially tilted laws and untilts them in the δ
functional, whose discounted suffix sums ``Σ_{k≥j} p_k f_k e^{−(k−j)h}`` then meet values near
1e-300. Scaled across a block of e^{500} those terms underflowed to zero: the discounted sum
vanished, and the lower δ of the composition came out too large — σ 1, q 0.01, 10 steps,
δ 1e-300 was certified as [72.1112, 72.1184] while ε is 71.8962 (the lower end invalid). These
tests check both ends against

* the Gaussian composition, exactly μ-GDP with μ = √T/σ (mpmath, 50 digits), and
* the Poisson-subsampled Gaussian, against a bound of its own: every step's P-density is at
  least q φ(x − 1) and its loss log(1 − q + q e^{x − ½}) at least log q + x − ½, so δ(ε) is at
  least q^T E[(1 − e^{ε − S − c})₊], S ~ N(T, T), c = T (log q − ½), in closed form (the certified
  upper end must lie above the ε of that bound), and against an importance-sampled estimate
  of ε (the lower end must lie below it; it is 5σ-accurate to 0.002 here, the bracket's error
  0.0011 wide).
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest

from conformance.references import gaussian_composition_delta, gaussian_composition_epsilon
from privamp import Accountant, GaussianMechanism, Poisson
from privamp.pld.distribution import _discounted_suffix

TINY_DELTAS = (1e-300, 1e-250, 1e-200, 1e-150, 1e-100, 1e-30)


@pytest.mark.parametrize("delta", TINY_DELTAS)
@pytest.mark.parametrize(("sigma", "steps"), [(1.0, 10), (2.0, 100), (0.5, 3)])
def test_gaussian_composition_brackets_the_exact_epsilon(sigma, steps, delta):
    b = Accountant("pld").add(GaussianMechanism(sigma=sigma), steps).epsilon(delta)
    exact = gaussian_composition_epsilon(sigma, steps, delta)
    assert b.lower <= exact <= b.upper, (b, exact)
    # the certified values at the ends, against the exact profile
    assert gaussian_composition_delta(sigma, steps, b.upper) <= delta * (1 + 1e-9)
    assert gaussian_composition_delta(sigma, steps, b.lower) >= delta * (1 - 1e-9)


def _hits_only_delta(rate, steps, eps) -> mpmath.mpf:
    """A lower bound on δ(ε) of the Poisson-subsampled Gaussian (σ 1, remove orientation):
    only the samples where every step included the record, at a loss rounded down."""
    with mpmath.workdps(60):
        q, t = mpmath.mpf(rate), mpmath.mpf(steps)
        a = mpmath.mpf(eps) - t * (mpmath.log(q) - mpmath.mpf(1) / 2)
        s = mpmath.sqrt(t)
        # E[(1 − e^{a − S})₊] for S ~ N(T, T): P(S > a) − e^{a − T + T/2} P(S > a + T)
        return +(q**steps * (mpmath.ncdf(-(a - t) / s)
                             - mpmath.exp(a - t / 2) * mpmath.ncdf(-a / s)))


def _hits_only_epsilon(rate, steps, delta) -> float:
    lo, hi = mpmath.mpf(0), mpmath.mpf(200)
    for _ in range(120):
        mid = (lo + hi) / 2
        if _hits_only_delta(rate, steps, mid) > delta:
            lo = mid
        else:
            hi = mid
    return float(lo)


def _sampled_epsilon(rate, steps, delta, target, rng) -> float:
    """ε(δ) by importance sampling: each step's x drawn from the exactly tilted one-step law
    ∝ φ(x)(1 − q + q e^{x − ½})^{1 + λ} on a fine grid, δ(ε) = M(λ)^T E[e^{−λS}(1 − e^{ε−S})₊],
    with the λ whose tilted mean of the composed loss is ``target``."""
    x = np.arange(-10.0, 60.0, 1e-4)
    loss = np.log1p(-rate + rate * np.exp(x - 0.5))
    log_p = -x**2 / 2 - 0.5 * math.log(2 * math.pi) + loss

    def tilted_mean(lam):
        lw = log_p + lam * loss
        w = np.exp(lw - lw.max())
        return steps * float(np.sum(w * loss) / np.sum(w))

    lo, hi = 0.0, 100.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tilted_mean(mid) < target else (lo, mid)
    tilt = lo
    log_w = log_p + tilt * loss
    top = log_w.max()
    weights = np.exp(log_w - top)
    log_m = top + math.log(weights.sum() * 1e-4)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    draws = np.minimum(np.searchsorted(cdf, rng.random((400_000, steps))), x.size - 1)
    s = loss[draws].sum(axis=1)

    def log_delta(eps):
        terms = np.where(s > eps, -np.expm1(eps - np.minimum(s, eps + 700)), 0.0)
        with np.errstate(divide="ignore"):
            return np.log(np.mean(terms * np.exp(-tilt * (s - eps)))) - tilt * eps \
                + steps * log_m

    lo, hi = 0.0, 200.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if log_delta(mid) > math.log(delta):
            lo = mid
        else:
            hi = mid
    return lo


@pytest.mark.parametrize(("rate", "steps", "delta"),
                         [(0.01, 10, 1e-300), (0.01, 10, 1e-200), (0.05, 20, 1e-250)])
def test_poisson_gaussian_at_tiny_delta(rate, steps, delta):
    b = Accountant("pld").add(GaussianMechanism(sigma=1.0), steps,
                              scheme=Poisson(rate=rate)).epsilon(delta)
    hits = _hits_only_epsilon(rate, steps, delta)
    assert b.upper >= hits, b
    sampled = _sampled_epsilon(rate, steps, delta, hits, np.random.default_rng(7))
    assert b.lower <= sampled + 0.01, (b, sampled)
    assert b.upper >= sampled - 0.01, (b, sampled)


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e-310, 1e250])
@pytest.mark.parametrize(("n", "h"), [(1, 0.1), (700, 0.9), (5000, 0.2), (3000, 2e-3)])
def test_discounted_suffix_within_its_bound(n, h, scale):
    """Against the backward recurrence in 60-digit arithmetic: within (n + 8) u of the
    discounted absolute sum plus the absolute underflow bound returned, at values near 1e-300
    and across blocks whose discount reaches e^{−500}."""
    rng = np.random.default_rng(n)
    v = rng.random(n) * scale * np.exp(-np.arange(n) * h * rng.random())
    v[rng.random(n) < 0.3] *= -1
    out, tiny = _discounted_suffix(v, h)
    with mpmath.workdps(60):
        decay = mpmath.exp(-mpmath.mpf(h))
        ref = absref = mpmath.mpf(0)
        for j in range(n - 1, -1, -1):
            ref = mpmath.mpf(float(v[j])) + decay * ref
            absref = abs(mpmath.mpf(float(v[j]))) + decay * absref
            bound = (n + 8) * mpmath.mpf(2) ** -53 * absref + tiny
            assert abs(mpmath.mpf(float(out[j])) - ref) <= bound, (j, out[j], ref)


# ------------------------------------------------------------------------------------------
# δ(ε) queries far in the tail, and the choices of cost behind them
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sigma", "steps", "eps"), [(1.0, 10, 60.0), (2.0, 100, 80.0),
                                                     (1.0, 10, 20.0), (0.5, 3, 40.0)])
def test_gaussian_delta_far_in_the_tail(sigma, steps, eps):
    """δ from 1e-290 to 1e-30: bracketed, and within the default 0.1 % (the tail budget of
    the tilted pass follows the Chernoff bound when the budget rules the upper end)."""
    b = Accountant("pld").add(GaussianMechanism(sigma=sigma), steps).delta(eps)
    exact = gaussian_composition_delta(sigma, steps, eps)
    assert b.lower <= exact <= b.upper, (b, exact)
    assert b.upper - b.lower <= 1e-3 * b.upper, b


def test_poisson_gaussian_delta_at_1e_minus_291():
    """σ 1, q 0.01, 10 steps, δ(70): [0, 1.4e-30] after three passes whose tail budgets each
    moved 1e-7 below the last upper end; now within 0.1 %, above the hits-only bound and
    around the importance-sampled value."""
    b = Accountant("pld").add(GaussianMechanism(sigma=1.0), 10,
                              scheme=Poisson(rate=0.01)).delta(70.0)
    assert b.upper >= float(_hits_only_delta(0.01, 10, 70.0))
    assert b.upper - b.lower <= 1e-3 * b.upper, b
    assert 1.70e-291 < b.lower <= b.upper < 1.85e-291, b  # sampled: 1.775e-291 ± 0.5 %


def test_compose_refuses_a_bad_tail_point():
    from privamp.errors import InvalidParameterError
    from privamp.pld.distribution import StepPLD, compose

    step = StepPLD(0.1, -3, np.array([0.2, 0.3, 0.5]), 0.0, "upper")
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(InvalidParameterError, match="tail_at"):
            compose([(step, 3)], tilt=1.0, tail_at=bad)


@pytest.mark.parametrize("size", [100, 20_000, 300_001])
def test_binned_log_mgf_bounds_the_exact_one(size):
    from privamp.pld.distribution import _MGF_BINS, StepPLD

    rng = np.random.default_rng(size)
    masses = rng.random(size) ** 4
    masses[rng.random(size) < 0.5] = 0.0
    masses[rng.random(size) < 0.05] *= -1  # a lower step's negative masses are left out
    h = 1e-4
    step = StepPLD(h, -size // 3, masses, 0.0, "lower")
    lam = np.array([-50.0, -3.0, -1e-3, 0.0, 1e-3, 0.5, 3.5, 50.0])
    exact, bound = step.log_mgf(lam), step.log_mgf_bound(lam)
    # the reference in extended precision: log Σ m e^{λ l} over the positive masses
    pos = masses > 0
    z = np.log(masses[pos].astype(np.longdouble)) + lam[:, None].astype(np.longdouble) * \
        step.losses[pos].astype(np.longdouble)
    top = z.max(axis=1)
    ref = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
    width = -(-size // _MGF_BINS)
    assert np.all(bound >= ref) and np.all(exact >= ref)
    assert np.all(bound <= exact + np.abs(lam) * width * h + 1e-9)
    if size <= _MGF_BINS:
        assert np.array_equal(bound, exact)
    # bins at most max_width wide (what the Chernoff windows ask for): still upper bounds,
    # within |λ| (W − 1) h of the exact value; no binning below one spacing or for NaN
    for max_width in (0.0, 0.5 * h, 3 * h, 1e6 * h, math.nan, -1.0):
        w = step._bin_width(max_width)
        assert w == 0 or (w > 1 and (w - 1) * h <= max_width * (1 + 1e-12) and w <= width)
        capped = step.log_mgf_bound(lam, max_width)
        assert np.all(capped >= ref)
        assert np.all(capped <= exact + np.abs(lam) * max(w - 1, 0) * h + 1e-9)
        if w == 0:
            assert np.array_equal(capped, exact)


@pytest.mark.parametrize("max_fft", [2**20, 2**18])
def test_coarsened_tilted_delta_pass_keeps_a_valid_lower_end(monkeypatch, max_fft):
    """σ 0.5, q 1e-4, 1,000 steps, δ(3): the untilted pass's FFT bound rules, so it is composed
    again tilted; under a smaller memory bound that pass is coarsened. It stands when its upper
    end is better, and its lower side — on a grid that may not resolve the bulk of a step's
    loss — is backed by the lower side of the pass before: the bracket stays within 0.25 %
    (not [4e-12, 5.13e-9]) and meets the default memory bound's bracket."""
    from privamp.pld import distribution

    acc = Accountant("pld").add(GaussianMechanism(sigma=0.5), 1000, scheme=Poisson(rate=1e-4))
    fine = acc.delta(3.0)
    monkeypatch.setattr(distribution, "MAX_FFT", max_fft)
    small = Accountant("pld").add(GaussianMechanism(sigma=0.5), 1000,
                                  scheme=Poisson(rate=1e-4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an AccuracyWarning where the width misses 0.1 %
        coarse = small.delta(3.0)
    assert coarse.lower <= fine.upper and fine.lower <= coarse.upper
    assert coarse.upper - coarse.lower <= 2.5e-3 * coarse.upper, coarse


def test_tilted_delta_is_not_read_where_the_tail_weight_passes_its_cap():
    """A tilted window that starts above the loss where the untilting factor reaches e^300
    (found by review, hand-built: P = {loss 50: 1 − e^-100, loss 900: e^-100} tilted at λ = 1,
    log_scale 800, the tilted tail below the window e^-750). The tails' weight at ε = 0 is
    e^800, past the e^700 cap of the δ functional: δ(0) read 1.9e-22 and ε(1e-20) 0, where the
    exact ε is about 50. Below e^300 the upper δ is now 1 and the lower δ 0."""
    from privamp.pld.distribution import ComposedPLD

    masses = np.zeros(21)
    masses[10] = 1.0
    kw = dict(h=1.0, i_start=890, masses=masses, p_inf=0.0, steps=2, log_tail_below=-750.0,
              log_tail_above=-math.inf, spectral_coeff=1e-30, fft_size=32, loss_shift=1e-13,
              tilt=1.0, log_scale=800.0)
    upper = ComposedPLD(kind="upper", **kw)
    assert upper.delta(0.0) == 1.0
    assert upper.epsilon(1e-20) >= 500.0  # the cut: e^{800 − ε} ≤ e^300
    lower = ComposedPLD(kind="lower", **kw)
    assert lower.delta(0.0) == 0.0


def test_width_note_names_the_reason_of_the_pass_kept():
    """The note on a bracket wider than its target blames the memory bound only when it
    coarsened the pass whose lower side was kept (``pld_delta`` may keep the lower side of the
    pass before a coarsened one); otherwise the lower side's FFT budget."""
    from privamp.pld.engine import _width_note

    assert _width_note(1.0, 1.001, 0.01, True, "δ") == ""  # within the target: no note
    coarse = _width_note(1.0, 1.1, 0.01, True, "δ")
    budget = _width_note(1.0, 1.1, 0.01, False, "δ")
    assert "memory bound" in coarse and "FFT budget" not in coarse
    assert "FFT budget" in budget and "memory bound" not in budget
    assert "[1, 1.1]" in budget and "both ends are certified" in budget


@pytest.mark.parametrize("count", [1, 100, 10**4, 10**7])
def test_binned_windows_stay_within_a_thousandth_of_a_deviation(monkeypatch, count):
    """The binned log-MGF (``StepPLD.log_mgf_bound``) widens a Chernoff window of c copies by
    c (W − 1) h on each side. Bins of n/8192 points whatever c widened the window of 10⁷ steps
    by 10⁷ bins (found when the 10⁷-step benchmark's bracket went from 0.094 % to 0.17 %): the
    bins are now narrow enough that the window is at most 1e-3 standard deviations of the
    composed loss wider than with the exact log-MGF, which it contains."""
    from privamp.pld import distribution
    from privamp.pld.distribution import StepPLD, _window

    size = 200_000
    h = 1e-4
    x = (np.arange(size) - size // 3) * h
    masses = np.exp(-0.5 * ((x - 1.0) / 2.0) ** 2)
    masses /= masses.sum()
    step = StepPLD(h, -(size // 3), masses, 0.0, "upper")
    sd = math.sqrt(count * step.mean_var()[1])
    if count <= 100:  # the bins are in use here (wider than one grid point)
        assert step._bin_width(1e-3 * sd / count) > 1
    binned = _window([(StepPLD(h, -(size // 3), masses, 0.0, "upper"), count)], math.log(1e-20))
    monkeypatch.setattr(distribution, "_MGF_BINS", 10**9)  # no binning: the exact log-MGF
    exact = _window([(StepPLD(h, -(size // 3), masses, 0.0, "upper"), count)], math.log(1e-20))
    assert binned[0] <= exact[0] + 1e-9 * sd and exact[1] <= binned[1] + 1e-9 * sd
    assert exact[0] - binned[0] <= 1e-3 * sd + 2 * h and binned[1] - exact[1] <= 1e-3 * sd + 2 * h
