"""Truncated Poisson subsampling of the Gaussian mechanism (privamp.pld.truncated) and the
disjoint-union mixture curve (privamp.pld.mixture_curve).

References, all independent of the code under test:

* **brute force** on tiny datasets (n ≤ 4): the exact output law of the mechanism (a 1-D Gaussian
  sum of clipped gradients: the record +1, the others −1 or 0) enumerated over every kept set
  and every truncated batch, and its hockey-stick divergence computed exactly (the crossing
  points of the two mixture densities found by root finding, the masses from Φ), in both
  orientations and at ε < 0 too: it must be ≤ the certified curve;
* a second implementation of the mixture: a disjoint union of discrete pairs, whose divergence is
  a finite sum;
* mpmath for the binomial weights;
* dp_accounting 0.6.0 (cross-check): the certified upper end must not exceed its ε.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import optimize, special

from privamp.errors import InvalidParameterError
from privamp.pld.curves import PairCurve, PoissonGaussianCurve
from privamp.pld.engine import PldEvent, pld_epsilon
from privamp.pld.mixture_curve import MixtureCurve
from privamp.pld.truncated import (
    _PMF_REL,
    draw_truncated_poisson,
    truncated_poisson_curves,
)

# ------------------------------------------------------------------------------------------
# brute force: the exact output law of the mechanism on a tiny dataset
# ------------------------------------------------------------------------------------------


def output_law(gradients, rate, max_batch):
    """``{mean: probability}`` of the batch's gradient sum (before the noise), by enumerating
    every kept set (Poisson) and every B-subset of it when it is truncated."""
    m = len(gradients)
    law: dict[float, float] = {}
    for kept in itertools.product((0, 1), repeat=m):
        idx = [i for i in range(m) if kept[i]]
        p_kept = rate ** len(idx) * (1 - rate) ** (m - len(idx))
        if p_kept == 0.0:
            continue
        if len(idx) <= max_batch:
            batches = [idx]
        else:
            batches = list(itertools.combinations(idx, max_batch))
        for batch in batches:
            mean = float(sum(gradients[i] for i in batch))
            law[mean] = law.get(mean, 0.0) + p_kept / len(batches)
    return law


def hockey_stick(p_law, q_law, sigma, alpha):
    """Exact ``D_α(P ‖ Q)`` of ``P = Σ a_i N(μ_i, σ²)``, ``Q = Σ b_j N(ν_j, σ²)``.

    The set {p > αq} is a finite union of intervals: its end points are the sign changes of
    ``log p − log α − log q`` (located on a fine grid, refined by Brent's method), and the
    divergence is ``Σ_intervals P(I) − α Q(I)`` with the masses from Φ."""
    mu, a = np.array(list(p_law)), np.array(list(p_law.values()))
    nu, b = np.array(list(q_law)), np.array(list(q_law.values()))
    log_a = np.log(np.maximum(a, 1e-300))
    log_b = np.log(np.maximum(b, 1e-300))

    def g(t):
        t = np.atleast_1d(t)[:, None]
        lp = special.logsumexp(log_a - (t - mu) ** 2 / (2 * sigma**2), axis=1)
        lq = special.logsumexp(log_b - (t - nu) ** 2 / (2 * sigma**2), axis=1)
        return lp - math.log(alpha) - lq

    lo = min(mu.min(), nu.min()) - 40 * sigma
    hi = max(mu.max(), nu.max()) + 40 * sigma
    grid = np.linspace(lo, hi, 8001)
    vals = g(grid)
    cuts = [-np.inf]
    for k in np.flatnonzero(np.sign(vals[:-1]) != np.sign(vals[1:])):
        cuts.append(optimize.brentq(lambda t: g(t)[0], grid[k], grid[k + 1], xtol=1e-14))
    cuts.append(np.inf)
    total = 0.0
    for left, right in itertools.pairwise(cuts):
        mid = (0.5 * (left + right) if np.isfinite(left) and np.isfinite(right)
               else (right - 1.0 if np.isfinite(right) else
                     left + 1.0 if np.isfinite(left) else 0.0))
        if g(mid)[0] <= 0:
            continue
        p_mass = np.sum(a * _mass((left - mu) / sigma, (right - mu) / sigma))
        q_mass = np.sum(b * _mass((left - nu) / sigma, (right - nu) / sigma))
        total += p_mass - alpha * q_mass
    return max(total, 0.0)


def _mass(lo, hi):
    """Φ(hi) − Φ(lo) without cancellation: from the upper tails where lo > 0."""
    right = lo > 0
    return np.where(right, special.ndtr(-lo) - special.ndtr(-hi),
                    special.ndtr(hi) - special.ndtr(lo))


EPS_GRID = (-3.0, -1.0, -0.3, 0.0, 0.3, 1.0, 2.0, 4.0)


def _cases():
    for n in (2, 3, 4):
        for max_batch in sorted({1, n - 1, n}):
            for rate in (0.3, 1.0):
                for sigma in (0.7, 2.0):
                    yield n, max_batch, rate, sigma


@pytest.mark.parametrize(("n", "max_batch", "rate", "sigma"), list(_cases()))
def test_brute_force_below_curve(n, max_batch, rate, sigma):
    """The exact divergence of the mechanism on every dataset with clipped gradients in
    {−1, 0, +1} for the others and +1 for the record is below the certified curve, both
    orientations, ε < 0 too (the others are exchangeable: only how many take each value
    matters)."""
    curves = truncated_poisson_curves(1.0 / sigma, n, rate, max_batch)
    eps = np.array(EPS_GRID)
    upper = {o: np.exp(curves[o].log_upper(eps)) for o in ("remove", "add")}
    for others in itertools.combinations_with_replacement((-1.0, 0.0, 1.0), n - 1):
        with_rec = output_law([1.0, *others], rate, max_batch)
        without = output_law(others, rate, max_batch)
        for i, e in enumerate(eps):
            alpha = math.exp(e)
            rem = hockey_stick(with_rec, without, sigma, alpha)
            add = hockey_stick(without, with_rec, sigma, alpha)
            assert rem <= upper["remove"][i] * (1 + 1e-9) + 1e-15, (others, e, rem)
            assert add <= upper["add"][i] * (1 + 1e-9) + 1e-15, (others, e, add)


def test_brute_force_attains_poisson_curve():
    """B ≥ n: the curves are the exact Poisson ones, attained by the dataset whose others have
    gradient 0 — so the brute force above is a reference that can fail."""
    sigma, rate, n = 1.3, 0.4, 3
    curves = truncated_poisson_curves(1.0 / sigma, n, rate, n)
    with_rec = output_law([1.0, 0.0, 0.0], rate, n)
    without = output_law([0.0, 0.0], rate, n)
    for e in EPS_GRID:
        up = {o: float(np.exp(curves[o].log_upper(np.array([e])))[0]) for o in curves}
        assert hockey_stick(with_rec, without, sigma, math.exp(e)) == pytest.approx(
            up["remove"], rel=1e-9, abs=1e-15)
        assert hockey_stick(without, with_rec, sigma, math.exp(e)) == pytest.approx(
            up["add"], rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(("n", "max_batch"), [(1, 1), (5, 5), (5, 9), (10**6, 10**6)])
@pytest.mark.parametrize("rate", [1e-3, 0.5, 1.0])
def test_no_truncation_is_poisson(n, max_batch, rate):
    """B ≥ n: truncation never happens, the curves are PoissonGaussianCurve's, value for value."""
    curves = truncated_poisson_curves(0.8, n, rate, max_batch)
    eps = np.linspace(-5, 8, 27)
    for o in ("remove", "add"):
        ref = PoissonGaussianCurve(0.8, rate, o)
        assert isinstance(curves[o], PoissonGaussianCurve)
        np.testing.assert_array_equal(curves[o].log_upper(eps), ref.log_upper(eps))
        np.testing.assert_array_equal(curves[o].log_lower(eps), ref.log_lower(eps))


# ------------------------------------------------------------------------------------------
# the mixture curve against a second implementation
# ------------------------------------------------------------------------------------------


class DiscretePair(PairCurve):
    """Exact curve of a pair of discrete distributions: ``log Σ_i max(p_i − α q_i, 0)``
    (test-side second implementation; P(q = 0) is the mass at +∞)."""

    def __init__(self, p, q, orientation="remove"):
        self.p, self.q = np.asarray(p, float), np.asarray(q, float)
        self.orientation = orientation

    def _value(self, eps):
        alpha = np.exp(np.asarray(eps, float))[:, None]
        with np.errstate(invalid="ignore"):
            terms = np.where(self.q[None, :] > 0, self.p[None, :] - alpha * self.q[None, :],
                             self.p[None, :])
        return np.maximum(terms, 0.0).sum(axis=1)

    def log_upper(self, eps):
        with np.errstate(divide="ignore"):
            return np.log(self._value(eps) * (1 + 1e-14))

    def log_lower(self, eps):
        with np.errstate(divide="ignore"):
            return np.log(self._value(eps) * (1 - 1e-14))


def _random_pmf(rng, size, zero=False):
    w = rng.random(size)
    if zero:
        w[0] = 0.0
    return w / w.sum()


@pytest.mark.parametrize("seed", range(6))
def test_mixture_equals_disjoint_union(seed):
    """MixtureCurve of discrete pairs = the divergence of the tagged (disjoint-union) pair,
    computed directly from the concatenated distributions; lower ≤ exact ≤ upper."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    weights = _random_pmf(rng, k)
    pairs = [(_random_pmf(rng, 4), _random_pmf(rng, 4, zero=bool(rng.integers(2))))
             for _ in range(k)]
    orientation = ("remove", "add", "symmetric")[seed % 3]
    comps = [(math.log(w) + 1e-15, math.log(w) - 1e-15, DiscretePair(p, q, orientation))
             for w, (p, q) in zip(weights, pairs, strict=True)]
    mix = MixtureCurve(comps, orientation)
    union = DiscretePair(np.concatenate([w * p for w, (p, _) in zip(weights, pairs, strict=True)]),
                         np.concatenate([w * q for w, (_, q) in zip(weights, pairs, strict=True)]))
    eps = np.concatenate([np.linspace(-6, 6, 49), [np.inf]])
    exact = union._value(eps)
    up, lo = np.exp(mix.log_upper(eps)), np.exp(mix.log_lower(eps))
    assert np.all(lo <= exact * (1 + 1e-15)) and np.all(exact <= up)
    np.testing.assert_allclose(up, exact, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(lo, exact, rtol=1e-12, atol=1e-300)
    # log_excess bounds f − (1 − α) at ε ≤ 0; slopes bracket the secants of the exact curve
    neg = eps[eps <= 0]
    excess = union._value(neg) - (1 - np.exp(neg))
    assert np.all(excess <= np.exp(mix.log_excess(neg)) * (1 + 1e-12) + 1e-300)
    e0 = np.linspace(-3, 3, 25)
    s_lo, s_hi = mix.slope_bounds(e0, 1e-3)
    a0, a1 = np.exp(e0), np.exp(e0 + 1e-7)
    secant = (union._value(e0 + 1e-7) - union._value(e0)) / (a1 - a0)
    assert np.all(s_lo <= secant + 1e-6) and np.all(secant <= s_hi + 1e-6)
    assert mix.log_mass_at_infinity == pytest.approx(math.log(exact[-1]), abs=1e-12) \
        if exact[-1] > 0 else mix.log_mass_at_infinity == -np.inf


def test_mixture_rejects_bad_components():
    c = PoissonGaussianCurve(1.0, 0.1, "remove")
    with pytest.raises(InvalidParameterError, match="orientation"):
        MixtureCurve([(0.0, 0.0, c)], "sideways")
    with pytest.raises(InvalidParameterError, match="components\\[0\\] curve"):
        MixtureCurve([(0.0, 0.0, c)], "add")  # a remove curve in an add mixture
    with pytest.raises(InvalidParameterError, match="log_weight_lower"):
        MixtureCurve([(-1.0, -0.5, c)], "remove")
    with pytest.raises(InvalidParameterError, match="log_weight_upper"):
        MixtureCurve([(0.5, 0.0, c)], "remove")
    with pytest.raises(InvalidParameterError, match="log_weight_upper"):
        MixtureCurve([(math.nan, 0.0, c)], "remove")
    with pytest.raises(InvalidParameterError, match="PairCurve"):
        MixtureCurve([(0.0, 0.0, "curve")], "remove")
    with pytest.raises(InvalidParameterError, match="triple"):
        MixtureCurve([(0.0, c)], "remove")
    with pytest.raises(InvalidParameterError, match="positive weight"):
        MixtureCurve([(-math.inf, -math.inf, c)], "remove")


# ------------------------------------------------------------------------------------------
# weights
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("trials", "rate"), [(3, 0.5), (59_999, 0.01), (10**7 - 1, 1e-3),
                                              (200, 0.999), (10**6, 0.3)])
def test_binomial_weights_within_bracket(trials, rate):
    """The weights rest on binomial_logpmf being within _PMF_REL (relative) of P(J = j):
    checked against mpmath at j around the mean and far in the tails."""
    from privamp._numerics import binomial_logpmf

    mpmath.mp.dps = 50
    mean, sd = trials * rate, math.sqrt(trials * rate * (1 - rate))
    js = sorted({max(0, min(trials, int(mean + z * sd))) for z in (-30, -8, -1, 0, 2, 9, 35)})
    for j in js:
        exact = mpmath.binomial(trials, j) * mpmath.mpf(rate) ** j * (
            1 - mpmath.mpf(rate)) ** (trials - j)
        got = float(binomial_logpmf(float(j), float(trials), rate))
        if exact == 0:
            continue
        rel = abs(mpmath.e ** (mpmath.mpf(got) - mpmath.log(exact)) - 1)
        assert rel < _PMF_REL / 10, (j, rel)


@pytest.mark.parametrize(("n", "rate", "max_batch"), [
    (4, 0.5, 2), (3, 1.0, 1), (60_000, 0.01, 700), (60_000, 0.01, 500), (10**7, 1e-3, 9_000),
    (10**7, 1e-3, 11_000), (10**7, 0.5, 10), (50_000, 1.0, 3), (30_000, 1e-6, 1)])
def test_weights_bracket_a_probability_vector(n, rate, max_batch):
    """Upper weights sum to ≥ 1, lower ones to ≤ 1, both within a hair of 1; at most 30
    components; the curves are finite, ordered and a pair's (f ≤ 1, f(α → 0) → 1)."""
    curves = truncated_poisson_curves(0.9, n, rate, max_batch)
    for o in ("remove", "add"):
        mix = curves[o]
        assert len(mix.components) <= 30
        up = math.fsum(np.exp(mix.log_weights_upper))
        lo = math.fsum(np.exp(mix.log_weights_lower))
        assert lo <= 1.0 <= up
        assert up - 1.0 < 1e-8 and 1.0 - lo < 1e-8
        eps = np.linspace(-20, 20, 41)
        u, low = mix.log_upper(eps), mix.log_lower(eps)
        assert np.all(low <= u) and np.all(u <= 0.0)
        assert u[0] > -1e-8  # f → 1 as α → 0
        assert np.all(np.diff(u) <= 1e-12)  # non-increasing


# ------------------------------------------------------------------------------------------
# composition: the references of dp_accounting 0.6.0
# ------------------------------------------------------------------------------------------


def _dp_accounting_epsilon(events, delta):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant()
    acc.compose(dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.TruncatedSubsampledGaussianDpEvent(
            dataset_size=n, sampling_probability=q, truncated_batch_size=b,
            noise_multiplier=s), count) for (n, q, b, s, count) in events]))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize(("events", "delta"), [
    ([(4, 0.5, 2, 1.0, 3), (3, 0.5, 2, 1.0, 2)], 1e-6),
    ([(60_000, 0.01, 700, 1.0, 1000)], 1e-5),
])
def test_compose_against_dp_accounting(events, delta):
    """Cross-check: our certified upper end is at most dp_accounting's ε (its one mean-η
    substitution component uses the pair ((1 − η)N(0) + ηN(−2θ), (1 − η)N(0) + ηN(2θ)), whose
    components are 4θ apart, looser than the 2θ pair of advanced joint convexity used here)."""
    ours = pld_epsilon([PldEvent(truncated_poisson_curves(1.0 / s, n, q, b), count)
                        for (n, q, b, s, count) in events], delta)
    theirs = _dp_accounting_epsilon(events, delta)
    assert ours.bracket.lower <= ours.bracket.upper <= theirs


# ------------------------------------------------------------------------------------------
# the sampler
# ------------------------------------------------------------------------------------------


def _inclusion_probability(n, rate, max_batch):
    """P(a given record is in the batch) = q · E[min(1, B/(J + 1))], J ~ Bin(n − 1, q), summed
    exactly with mpmath."""
    total = mpmath.mpf(0)
    for j in range(n):
        pj = mpmath.binomial(n - 1, j) * mpmath.mpf(rate) ** j * (1 - mpmath.mpf(rate)) ** (
            n - 1 - j)
        total += pj * min(mpmath.mpf(1), mpmath.mpf(max_batch) / (j + 1))
    return float(rate * total)


@pytest.mark.parametrize(("n", "rate", "max_batch"), [(10, 0.5, 3), (6, 1.0, 2), (8, 0.2, 8)])
def test_sampler_inclusion_frequencies(n, rate, max_batch):
    """Each record's inclusion frequency over 20,000 batches (fixed seed) is within 5 standard
    errors of the exact inclusion probability; every record equally."""
    rng = np.random.default_rng(12345)
    draws = 20_000
    counts = np.zeros(n)
    sizes = np.zeros(draws, dtype=int)
    for t in range(draws):
        idx, mask = draw_truncated_poisson(n, rate, max_batch, rng)
        counts += np.bincount(idx[mask], minlength=n)
        sizes[t] = mask.sum()
    p = _inclusion_probability(n, rate, max_batch)
    se = math.sqrt(p * (1 - p) / draws) + 1e-12
    assert np.all(np.abs(counts / draws - p) <= 5 * se), (counts / draws, p)
    assert sizes.max() <= max_batch
    assert abs(sizes.mean() - n * p) <= 5 * math.sqrt(max(sizes.var(), 1e-12) / draws) + 1e-12


@pytest.mark.parametrize(("n", "rate", "max_batch"), [
    (0, 0.5, 4), (1, 1.0, 1), (7, 1.0, 3), (10**7, 1e-3, 5_000), (10**7, 1e-3, 20_000),
    (10**7, 1e-6, 3)])
def test_sampler_shapes_and_masks(n, rate, max_batch):
    idx, mask = draw_truncated_poisson(n, rate, max_batch, rng=7)
    assert idx.shape == mask.shape == (max_batch,)
    assert idx.dtype == np.int64 and mask.dtype == np.bool_
    k = int(mask.sum())
    assert np.all(mask[:k]) and not np.any(mask[k:])  # real records first
    assert np.all(idx[k:] == 0)  # padding
    real = idx[:k]
    assert np.all(np.diff(real) > 0)  # distinct, increasing
    assert np.all((real >= 0) & (real < max(n, 1)))
    if n and rate == 1.0:
        assert k == min(n, max_batch)
    if n == 10**7 and max_batch == 5_000:
        assert k == max_batch  # 10^4 expected: always truncated
    if n == 10**7 and max_batch == 20_000:
        assert 9_000 < k < 11_000  # never truncated (mean 10^4, sd 100)


def test_sampler_is_reproducible():
    a = draw_truncated_poisson(1000, 0.3, 50, rng=3)
    b = draw_truncated_poisson(1000, 0.3, 50, rng=np.random.default_rng(3))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"theta": 0.0}, "theta"), ({"theta": -1.0}, "theta"), ({"theta": math.nan}, "theta"),
    ({"theta": math.inf}, "theta"), ({"n": 0}, "n"), ({"n": 2.5}, "n"), ({"n": True}, "n"),
    ({"rate": 0.0}, "rate"), ({"rate": 1.5}, "rate"), ({"rate": math.nan}, "rate"),
    ({"max_batch": 0}, "max_batch"), ({"max_batch": 3.5}, "max_batch"),
    ({"max_batch": "3"}, "max_batch")])
def test_curves_reject_bad_input(kwargs, name):
    args = {"theta": 1.0, "n": 10, "rate": 0.1, "max_batch": 3, **kwargs}
    with pytest.raises(InvalidParameterError) as err:
        truncated_poisson_curves(**args)
    assert err.value.parameter == name


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"n": -1}, "n"), ({"n": 1.5}, "n"), ({"rate": 0.0}, "rate"), ({"rate": -0.1}, "rate"),
    ({"max_batch": 0}, "max_batch"), ({"rng": -3}, "rng"), ({"rng": "seed"}, "rng"),
    ({"rng": np.random.RandomState(0)}, "rng")])
def test_sampler_rejects_bad_input(kwargs, name):
    args = {"n": 10, "rate": 0.1, "max_batch": 3, "rng": 0, **kwargs}
    with pytest.raises(InvalidParameterError) as err:
        draw_truncated_poisson(**args)
    assert err.value.parameter == name


def _gaussian_delta(theta, eps):
    """Balle–Wang profile of the Gaussian mechanism, written from the formula (SciPy's Φ)."""
    return (special.ndtr(-eps / theta + theta / 2)
            - np.exp(eps) * special.ndtr(-eps / theta - theta / 2))


def _unbinned_mixture(theta, n, rate, max_batch, eps):
    """``Σ_J P(J) f_J(α)`` with one η_J = qB/(J + 1) per J (no bins), ε ≥ 0, the Poisson part
    from :class:`PoissonGaussianCurve`'s remove orientation and the substitution part from the
    formula ``η δ_{2θ}(log(1 + (α − 1)/η))``; the weights from mpmath."""
    mpmath.mp.dps = 30
    total = np.zeros(eps.shape)
    pois = np.exp(PoissonGaussianCurve(theta, rate, "remove").log_upper(eps))
    for j in range(n):
        w = float(mpmath.binomial(n - 1, j) * mpmath.mpf(rate) ** j
                  * (1 - mpmath.mpf(rate)) ** (n - 1 - j))
        if j < max_batch:
            total += w * pois
        else:
            eta = rate * max_batch / (j + 1)
            total += w * eta * _gaussian_delta(2 * theta, np.log1p(np.expm1(eps) / eta))
    return total


@pytest.mark.parametrize(("n", "rate", "max_batch"), [(200, 0.5, 60), (300, 0.2, 50),
                                                       (120, 0.9, 100)])
def test_bins_bound_the_unbinned_mixture(n, rate, max_batch):
    """With more values of J ≥ B than bins, the binned curve is above the mixture with one η
    per J (a second, direct implementation), and not far above it (η varies little per bin)."""
    theta = 0.8
    curves = truncated_poisson_curves(theta, n, rate, max_batch)
    eps = np.linspace(0.0, 6.0, 25)
    ref = _unbinned_mixture(theta, n, rate, max_batch, eps)
    up = np.exp(curves["remove"].log_upper(eps))
    assert np.all(ref <= up * (1 + 1e-9))
    assert np.all(up <= ref * 1.05)
    assert len(curves["remove"].components) <= 30


def _exact_substitution_curve(theta_s, eta, e):
    """``f(α) = η δ(log(1 + (α − 1)/η))`` of the Gaussian profile δ at θ_S, and its symmetric
    extension ``1 − α + α f(1/α)`` at ε < 0, at mpmath precision (ε a float)."""
    e = mpmath.mpf(e)
    if e < 0:
        return 1 - mpmath.exp(e) + mpmath.exp(e) * _exact_substitution_curve(theta_s, eta, -e)
    beta = 1 + mpmath.expm1(e) / eta
    lb = mpmath.log(beta)
    t = mpmath.mpf(theta_s)
    return eta * (mpmath.ncdf(t / 2 - lb / t) - beta * mpmath.ncdf(-t / 2 - lb / t))


@pytest.mark.parametrize(("n", "rate", "max_batch"), [(1000, 0.01, 5), (60_000, 0.01, 700),
                                                       (7, 0.3, 2), (300, 0.2, 50)])
def test_lower_values_bracket_the_same_curve(n, rate, max_batch):
    """A substitution component's lower values come from its curve at η rounded down and its
    upper values from η rounded up, with no minimum taken between them: the curve grows with η
    (module docstring), so lower ≤ upper must hold by itself, for ε of either sign and far in
    both tails; and both bracket the curve at the exact η = qB/(J + 1), computed here at
    mpmath precision (a second implementation of the formula and of its extension)."""
    theta = 1.0
    mix = truncated_poisson_curves(theta, n, rate, max_batch)["remove"]
    eps = np.concatenate([-np.geomspace(1e-9, 40.0, 40)[::-1], [0.0],
                          np.geomspace(1e-9, 40.0, 40), [-np.inf, np.inf]])
    assert np.all(mix.log_lower(eps) <= mix.log_upper(eps))
    subst = [c for c in mix.components if not isinstance(c, PoissonGaussianCurve)]
    assert subst
    mpmath.mp.dps = 40
    probe = np.concatenate([-np.geomspace(1e-3, 3.0, 6), np.geomspace(1e-3, 12.0, 12)])
    for comp in subst:
        lo, up = comp.log_lower(eps), comp.log_upper(eps)
        assert np.all(lo <= up), comp
        eta_up = getattr(comp, "upper", comp).profile.eta
        j = round(rate * max_batch / eta_up) - 1  # the bin's first J
        eta = mpmath.mpf(rate) * max_batch / (j + 1)
        assert getattr(comp, "lower", comp).profile.eta <= eta <= eta_up
        for e, lo_v, up_v in zip(probe, comp.log_lower(probe), comp.log_upper(probe),
                                 strict=True):
            exact = _exact_substitution_curve(2 * theta, eta, e)
            assert mpmath.exp(lo_v) <= exact, (j, e)
            assert exact <= mpmath.exp(up_v), (j, e)


def _composite_curves():
    from privamp.pld.allocation import MaxCurve

    trunc = truncated_poisson_curves(1.0, 1000, 0.01, 5)
    pair = [PoissonGaussianCurve(1.0, 0.1, "remove"), PoissonGaussianCurve(2.0, 0.05, "remove")]
    biggest = MaxCurve(pair, "remove")
    half = math.log(0.5)
    return [trunc["remove"], trunc["add"], biggest,
            MixtureCurve([(half, half, biggest), (half, half, pair[0])], "remove")]


@pytest.mark.parametrize("index", range(4))
def test_lower_with_slopes_is_log_lower_and_slope_bounds(index):
    """The composite curves' one-pass ``lower_with_slopes`` (each component's lower values
    evaluated once) gives exactly the numbers of ``log_lower`` and ``slope_bounds`` called
    apart, with a scalar window and with a window per point."""
    curve = _composite_curves()[index]
    eps = np.concatenate([np.linspace(-6.0, 6.0, 41), [0.0, 1e-300, 30.0]])
    for tau in (1e-5, np.full(eps.shape, 2e-6)):
        low, (s_lo, s_hi) = curve.lower_with_slopes(eps, tau)
        ref_lo, ref_hi = curve.slope_bounds(eps, tau)
        assert np.array_equal(low, curve.log_lower(eps))
        assert np.array_equal(s_lo, ref_lo)
        assert np.array_equal(s_hi, ref_hi)
