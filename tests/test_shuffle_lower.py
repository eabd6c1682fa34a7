"""The lower bound of shuffled fixed batches (``privamp.pld.shuffle``) against independent
references.

* The four values Chua et al. report (ICML 2024 and NeurIPS 2024: δ = 1e-6, T = 1000; σ = 0.5,
  1, 2 for one epoch, five reshuffled epochs at σ = 1) — the lower end of the certified bracket
  must reproduce them and stay below the un-amplified Gaussian composition (the upper end).
* The one-epoch value against the supremum over thresholds c of P(M > c) − e^ε Q(M > c) for the
  unbinned maximum, maximised and inverted in mpmath at 40 digits: the binning costs < 1e-4.
* Brute force on T = 2 and 3: the exact hockey-stick divergence of the two T-dimensional Gaussian
  mixtures (every output, not only the maximum), integrated numerically, is at least every value
  of the binned curve, in both orientations.
* The rounded cell probabilities against mpmath at 80 digits (first vector below, second above),
  and :class:`DiscretePairCurve` (values, slopes, excess) against the definition in mpmath.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import log_ndtr, logsumexp

import privamp
from privamp.errors import InvalidParameterError
from privamp.pld.engine import PldEvent, pld_delta, pld_epsilon
from privamp.pld.shuffle import (
    DiscretePairCurve,
    _edges,
    shuffle_lower_curves,
    shuffle_lower_pair,
)

DELTA = 1e-6


def _lower(theta, batches, epochs=1, order="reshuffle", delta=DELTA, means=None):
    # zero-out: the record's batch means (a, b) = (2θ, θ), θ = C/σ
    a, b = (2 * theta, theta) if means is None else means
    events = [PldEvent(c, n) for c, n in shuffle_lower_curves(a, b, batches, epochs, order)]
    return pld_epsilon(events, delta).bracket


def _gaussian_upper(sigma, epochs, delta=DELTA):
    acc = privamp.Accountant().add(privamp.GaussianMechanism(sigma), epochs)
    return acc.epsilon(delta).upper


# ---------------------------------------------------------------------------------------------
# the published values
# ---------------------------------------------------------------------------------------------

# Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang (ICML 2024, arXiv 2403.17673; NeurIPS
# 2024, arXiv 2411.04205): the shuffling lower bound at δ = 1e-6, T = 1000 batches
REFERENCES = [(0.5, 1, 10.997), (1.0, 1, 3.724), (2.0, 1, 0.110), (1.0, 5, 4.701)]


@pytest.mark.parametrize(("sigma", "epochs", "reference"), REFERENCES)
def test_published_lower_bounds(sigma, epochs, reference):
    low = _lower(1.0 / sigma, 1000, epochs).lower
    assert reference - 1e-3 <= low <= reference + 0.01
    assert low <= _gaussian_upper(sigma, epochs)


# ---------------------------------------------------------------------------------------------
# the unbinned supremum over thresholds, in mpmath
# ---------------------------------------------------------------------------------------------


def _mp_sup_epsilon(theta: float, batches: int, delta: float) -> float:
    """ε with sup_c [P(M > c) − e^ε Q(M > c)] = δ for the unbinned maximum, at 40 digits.

    The maximiser over c is located on a float grid and refined by solving f_P(c) = e^ε f_Q(c)
    (the densities of M) in mpmath; ε by the secant method on log δ(ε) − log δ."""
    with mp.workdps(40):
        t = mp.mpf(batches)
        a, b = 2 * mp.mpf(theta), mp.mpf(theta)

        def sf(c, s):
            return 1 - mp.ncdf(c) ** (t - 1) * mp.ncdf(c - s)

        def dens(c, s):
            return ((t - 1) * mp.ncdf(c) ** (t - 2) * mp.npdf(c) * mp.ncdf(c - s)
                    + mp.ncdf(c) ** (t - 1) * mp.npdf(c - s))

        grid = np.linspace(-8.0, 2 * float(a) + 15.0, 40001)

        def float_sf(s):
            return -np.expm1((batches - 1) * log_ndtr(grid) + log_ndtr(grid - float(s)))

        sp, sq = float_sf(a), float_sf(b)

        def log_sup(eps):
            c0 = grid[int(np.argmax(sp - math.exp(float(eps)) * sq))]
            alpha = mp.exp(eps)
            c = mp.findroot(lambda x: dens(x, a) - alpha * dens(x, b), mp.mpf(c0))
            return mp.log(sf(c, a) - alpha * sf(c, b))

        # a float estimate: bisection on the grid supremum
        lo, hi = 0.0, 80.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if np.max(sp - math.exp(mid) * sq) > delta:
                lo = mid
            else:
                hi = mid
        eps0 = lo
        root = mp.findroot(lambda e: log_sup(e) - mp.log(delta),
                           (mp.mpf(eps0), mp.mpf(eps0) * (1 + mp.mpf(1e-4))), solver="secant")
        return float(root)


@pytest.mark.parametrize(("sigma", "batches"), [(0.5, 1000), (1.0, 1000), (2.0, 1000),
                                                (1.0, 10), (0.7, 100000)])
def test_one_epoch_matches_mpmath_supremum(sigma, batches):
    ref = _mp_sup_epsilon(1.0 / sigma, batches, DELTA)
    low = _lower(1.0 / sigma, batches).lower
    assert abs(low - ref) <= 1e-4 * ref


# ---------------------------------------------------------------------------------------------
# brute force: the exact T-dimensional mixtures at T = 2, 3
# ---------------------------------------------------------------------------------------------


def _mixture_hockey_stick(a: float, b: float, batches: int, eps: np.ndarray,
                          orientation: str, h: float) -> np.ndarray:
    """D_{e^ε} of the two mixtures (1/T) Σ_j N(μ e_j, I) (μ = a under x, b under x').

    Rotate: u = Σ x_j/√T has mean μ/√T in every component and is independent of the
    orthogonal complement w ∈ ℝ^{T−1}, a mixture of T Gaussians. For fixed w the integral over u
    is a Gaussian hockey-stick in closed form (A φ(u − m₁) against B φ(u − m₂), A and B the
    two densities of w with the factor e^ε), which leaves a smooth integral over w, done by the
    trapezoid rule on a grid of spacing h (exponentially accurate for smooth integrands)."""
    t = batches
    first, second = (a, b) if orientation == "remove" else (b, a)
    basis = np.linalg.qr(np.column_stack([np.ones(t), np.eye(t)[:, : t - 1]]))[0][:, 1:]
    centres = basis  # row j: the w-coordinates of e_j
    width = a + 10.0
    axis = np.arange(-width, width + h / 2, h)
    w = np.stack(np.meshgrid(*([axis] * (t - 1)), indexing="ij"), axis=-1).reshape(-1, t - 1)

    def log_density(mu):
        d2 = ((w[:, None, :] - mu * centres[None, :, :]) ** 2).sum(axis=-1)
        return logsumexp(-d2 / 2, axis=1) - math.log(t) - (t - 1) / 2 * math.log(2 * math.pi)

    la, lb = log_density(first), log_density(second)
    m1, m2 = first / math.sqrt(t), second / math.sqrt(t)
    out = []
    for e in eps:
        lbe = lb + e
        lr = la - lbe  # log(A/B)
        if m1 > m2:  # A φ(u − m1) > B φ(u − m2) for u > u*
            u = ((m1 * m1 - m2 * m2) / 2 - lr) / (m1 - m2)
            g = np.exp(la + log_ndtr(m1 - u)) - np.exp(lbe + log_ndtr(m2 - u))
        else:  # for u < u*
            u = (lr + (m2 * m2 - m1 * m1) / 2) / (m2 - m1)
            g = np.exp(la + log_ndtr(u - m1)) - np.exp(lbe + log_ndtr(u - m2))
        out.append(float(np.sum(np.maximum(g, 0.0))) * h ** (t - 1))
    return np.array(out)


@pytest.mark.parametrize("orientation", ["remove", "add"])
@pytest.mark.parametrize(("a", "b", "batches", "h"), [
    (1.0, 0.5, 2, 0.01), (2.0, 1.0, 2, 0.01), (4.0, 2.0, 2, 0.01), (2.0, 1.0, 3, 0.06),
    (4.0, 2.0, 3, 0.06), (2.0, 0.0, 2, 0.01), (3.0, 0.0, 3, 0.06)])  # b = 0: substitution
def test_brute_force_mixture_dominates(a, b, batches, h, orientation):
    eps = np.concatenate([np.linspace(-3.0, 6.0, 19), [0.01, 1e-6, -1e-6]])
    exact = _mixture_hockey_stick(a, b, batches, eps, orientation, h)
    curve = DiscretePairCurve(*shuffle_lower_pair(a, b, batches, orientation), orientation)
    upper = np.exp(curve.log_upper(eps))
    lower = np.exp(curve.log_lower(eps))
    # the integration is accurate far below this slack (h and h/2 agree to 1e-12 at T = 2)
    assert np.all(upper <= exact * (1 + 1e-9) + 1e-13)
    assert np.all(lower <= upper)
    # and the binned maximum is informative: within a factor 2 of the full pair where δ > 1e-4
    big = exact > 1e-4
    assert np.all(lower[big] >= 0.5 * exact[big])


def test_brute_force_integration_converged():
    eps = np.array([-1.0, 0.0, 1.0, 3.0])
    coarse = _mixture_hockey_stick(2.0, 1.0, 2, eps, "remove", 0.02)
    fine = _mixture_hockey_stick(2.0, 1.0, 2, eps, "remove", 0.01)
    assert np.allclose(coarse, fine, rtol=1e-10, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# the rounded cell probabilities
# ---------------------------------------------------------------------------------------------


def _mp_cells(batches, shift, idx, edges):
    """Exact cell probabilities (80 digits) of the cells ``idx`` (0 = (−∞, e_0], K + 1 =
    (e_K, ∞))."""
    out = []
    with mp.workdps(80):
        t = mp.mpf(batches)
        s = mp.mpf(shift)

        def cdf(c):
            return mp.ncdf(c) ** (t - 1) * mp.ncdf(c - s)

        k_last = edges.size
        for i in idx:
            if i == 0:
                v = cdf(mp.mpf(edges[0]))
            elif i == k_last:
                v = 1 - cdf(mp.mpf(edges[-1]))
            else:
                v = cdf(mp.mpf(edges[i])) - cdf(mp.mpf(edges[i - 1]))
            out.append(v)
    return out


@pytest.mark.parametrize(("a", "b", "batches"), [(4.0, 2.0, 1000), (2.0, 1.0, 1),
                                                 (0.6, 0.3, 10**7), (10.0, 5.0, 7),
                                                 (2.0, 1.0, 2), (2.0, 0.0, 1000)])
@pytest.mark.parametrize("orientation", ["remove", "add"])
def test_cells_rounded_to_the_safe_side(a, b, batches, orientation):
    first, second = shuffle_lower_pair(a, b, batches, orientation)
    edges = _edges(a, b, batches)
    assert first.size == second.size == edges.size + 1
    assert math.fsum(first.tolist()) <= 1.0 <= math.fsum(second.tolist())
    s1, s2 = (a, b) if orientation == "remove" else (b, a)
    rng = np.random.default_rng(19)
    k = edges.size
    idx = sorted({0, 1, 2, k - 1, k, *rng.integers(0, k + 1, 12).tolist(),
                  int(np.argmax(first)), int(np.argmax(second))})
    ex1 = _mp_cells(batches, s1, idx, edges)
    ex2 = _mp_cells(batches, s2, idx, edges)
    for i, v1, v2 in zip(idx, ex1, ex2, strict=True):
        assert first[i] <= v1 and second[i] >= v2, i
        if v1 > 1e-250:  # tight too: the margins are rounding-level
            assert first[i] >= v1 * (1 - 1e-9), i
        if v2 > 1e-250:
            assert second[i] <= v2 * (1 + 1e-9), i


# ---------------------------------------------------------------------------------------------
# DiscretePairCurve against the definition
# ---------------------------------------------------------------------------------------------


def _random_pair(rng, n, zeros):
    p = rng.exponential(size=n) * rng.choice([1.0, 1e-30, 1e-200], size=n, p=[0.8, 0.1, 0.1])
    q = rng.exponential(size=n)
    if zeros:
        p[rng.integers(0, n, 2)] = 0.0
        q[rng.integers(0, n, 2)] = 0.0
    return p / math.fsum(p.tolist()), q / math.fsum(q.tolist())


def _mp_curve(p, q, eps):
    with mp.workdps(50):
        alpha = mp.exp(mp.mpf(eps)) if math.isfinite(eps) else None
        pos = mp.mpf(0)
        excess = mp.mpf(0)
        q_gt = mp.mpf(0)
        q_ge = mp.mpf(0)
        for pj, qj in zip(p.tolist(), q.tolist(), strict=True):
            pj, qj = mp.mpf(pj), mp.mpf(qj)
            if alpha is None:
                if eps > 0 and qj == 0:
                    pos += pj
                elif eps < 0:
                    pos += pj
                continue
            d = pj - alpha * qj
            if d > 0:
                pos += d
                q_gt += qj
            elif pj > 0:
                excess -= d
            else:
                excess += alpha * qj
            if d >= 0 and pj > 0:
                q_ge += qj
        return pos, excess, q_gt, q_ge


@pytest.mark.parametrize("seed", range(6))
def test_discrete_curve_against_definition(seed):
    rng = np.random.default_rng(seed)
    p, q = _random_pair(rng, int(rng.integers(2, 40)), zeros=seed % 2 == 1)
    curve = DiscretePairCurve(p, q)
    with np.errstate(divide="ignore"):
        ties = np.log(p[(p > 0) & (q > 0)]) - np.log(q[(p > 0) & (q > 0)])
    eps = np.concatenate([np.linspace(-8, 8, 33), ties, ties + 1e-14, ties - 1e-14,
                          [np.inf, -np.inf, 0.0]])
    low, up = curve.log_lower(eps), curve.log_upper(eps)
    s_lo, s_hi = curve.slope_bounds(eps, 1e-6)
    finite = np.isfinite(eps) & (eps <= 0)
    excess = curve.log_excess(eps[finite])
    j = 0
    for i, e in enumerate(eps.tolist()):
        pos, exc, q_gt, q_ge = _mp_curve(p, q, e)
        with mp.workdps(50):
            lv = mp.log(pos) if pos > 0 else -mp.inf
            assert low[i] <= lv <= up[i], (e, low[i], lv, up[i])
            # tight up to the rounding of the cumulative sums and of the losses (~1e-13 of
            # P(L > ε) absolutely: near a tie the divergence itself may be below that)
            gap = math.exp(float(up[i])) - (math.exp(float(low[i])) if low[i] > -np.inf else 0)
            assert gap <= 1e-12 + 1e-9 * float(pos), e
            if math.isfinite(e):
                assert s_lo[i] <= -q_ge and -q_gt <= s_hi[i], e
            if finite[i]:
                assert (mp.log(exc) if exc > 0 else -mp.inf) <= excess[j], e
                j += 1


def test_discrete_curve_matches_log_hockey_stick():
    from privamp.divergences import log_hockey_stick

    rng = np.random.default_rng(7)
    p, q = _random_pair(rng, 200, zeros=True)
    eps = np.linspace(-5, 5, 41)
    curve = DiscretePairCurve(p, q)
    ref_lo = log_hockey_stick(p, q, eps, round_down=True)
    ref_up = log_hockey_stick(p, q, eps, round_up=True)
    assert np.all(curve.log_lower(eps) <= ref_up)
    assert np.all(ref_lo <= curve.log_upper(eps))


# ---------------------------------------------------------------------------------------------
# epochs, the Gaussian case, orientations
# ---------------------------------------------------------------------------------------------


def test_persistent_one_epoch_is_one_epoch():
    one = _lower(1.0, 1000)
    persistent = _lower(1.0, 1000, 1, "persistent")
    assert persistent.lower == one.lower and persistent.upper == one.upper


def test_persistent_epochs_are_one_epoch_at_scaled_theta():
    four = _lower(0.5, 1000, 4, "persistent")
    scaled = _lower(1.0, 1000)
    # the means times √4, carried with a 2-ulp error: the same pair up to rounding
    assert four.lower == pytest.approx(scaled.lower, rel=1e-9)
    assert four.lower <= scaled.lower
    assert four.lower <= _gaussian_upper(2.0, 4)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_one_batch_is_the_gaussian_mechanism(sigma):
    # T = 1: the maximum is the output itself, N(2θ, 1) against N(θ, 1) (zero-out) or N(2θ, 1)
    # against N(0, 1) (substitution: the Gaussian mechanism of sensitivity 2C)
    gauss = _gaussian_upper(sigma, 1)
    low = _lower(1.0 / sigma, 1).lower
    assert gauss * (1 - 1e-6) <= low <= gauss
    gauss2 = _gaussian_upper(sigma / 2, 1)
    low2 = _lower(None, 1, means=(2.0 / sigma, 0.0)).lower
    assert gauss2 * (1 - 1e-6) <= low2 <= gauss2


@pytest.mark.parametrize("batches", [2, 10, 1000])
def test_reshuffled_epochs_grow_and_stay_below_gaussian(batches):
    values = [_lower(1.0, batches, e).lower for e in (1, 2, 4)]
    assert values[0] < values[1] < values[2]
    assert values[2] <= _gaussian_upper(1.0, 4)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"a": 0.0}, "a"), ({"a": -1.0}, "a"), ({"a": math.nan}, "a"), ({"a": math.inf}, "a"),
    ({"a": 3e4}, "a"), ({"a": "1"}, "a"), ({"b": -0.5}, "b"), ({"b": 2.0}, "b"),
    ({"b": 3.0}, "b"), ({"b": math.nan}, "b"),
    ({"batches": 0}, "batches"), ({"batches": 1.5}, "batches"), ({"batches": True}, "batches"),
    ({"batches": 2**60}, "batches"), ({"epochs": 0}, "epochs"), ({"epochs": 2.5}, "epochs"),
    ({"order": "random"}, "order"), ({"order": None}, "order"),
    ({"a": 1e4, "epochs": 100, "order": "persistent"}, "a * sqrt(epochs)"),
])
def test_bad_curve_arguments(kwargs, name):
    args = {"a": 2.0, "b": 1.0, "batches": 10, "epochs": 1, "order": "reshuffle", **kwargs}
    with pytest.raises(InvalidParameterError) as info:
        shuffle_lower_curves(**args)
    assert info.value.parameter == name
    assert name in str(info.value)


def test_bad_pair_orientation():
    with pytest.raises(InvalidParameterError, match="orientation"):
        shuffle_lower_pair(2.0, 1.0, 10, "symmetric")


@pytest.mark.parametrize(("p", "q", "name"), [
    ([0.5, 0.5], [1.0], "p, q"), ([0.5, -0.5, 1.0], [0.2, 0.3, 0.5], "p"),
    ([0.5, 0.4], [0.5, 0.5], "p"), ([0.5, 0.5], [0.5, 0.6], "q"),
    ([0.5, math.nan], [0.5, 0.5], "p"), ([[0.5, 0.5]], [0.5, 0.5], "p"),
    ([], [], "p"), ([0.5, 0.5], [0.5, math.inf], "q"),
])
def test_bad_discrete_pairs(p, q, name):
    with pytest.raises(InvalidParameterError) as info:
        DiscretePairCurve(p, q)
    assert info.value.parameter == name


def test_bad_discrete_orientation():
    with pytest.raises(InvalidParameterError, match="orientation"):
        DiscretePairCurve([0.5, 0.5], [0.5, 0.5], "both")


@pytest.mark.parametrize(("seed", "count"), [(0, 2), (1, 3), (2, 2)])
def test_engine_brackets_brute_force_composition(seed, count):
    # a discrete pair rounded like the shuffle pair (first vector down, second up, in each
    # orientation): the engine's lower end is below the exact δ(ε) of the composed *exact*
    # pair, its upper end above that of the composed rounded vectors, both enumerated outcome
    # by outcome
    rng = np.random.default_rng(100 + seed)
    p, q = _random_pair(rng, 12, zeros=False)
    down, up = 1 - 1e-10, 1 + 1e-10
    event = [PldEvent({"remove": DiscretePairCurve(p * down, q * up),
                       "add": DiscretePairCurve(q * down, p * up, "add")}, count)]

    def composed(a, b):
        ac, bc = a, b
        for _ in range(count - 1):
            ac, bc = np.outer(ac, a).ravel(), np.outer(bc, b).ravel()
        return ac, bc

    exact, rounded = composed(p, q), (composed(p * down, q * up), composed(q * down, p * up))
    for eps in (0.1, 0.5, 1.0, 2.0):
        alpha = math.exp(eps)
        true = max(math.fsum(np.maximum(exact[0] - alpha * exact[1], 0.0).tolist()),
                   math.fsum(np.maximum(exact[1] - alpha * exact[0], 0.0).tolist()))
        low_pair = max(math.fsum(np.maximum(a - alpha * b, 0.0).tolist()) for a, b in rounded)
        bracket = pld_delta(event, eps).bracket
        assert bracket.lower <= true
        assert low_pair <= bracket.upper * (1 + 1e-12)
