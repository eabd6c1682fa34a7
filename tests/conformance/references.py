"""Independent references for the conformance suite, written without privamp's numerics.

Each function here recomputes a privacy quantity from its definition with mpmath (arbitrary
precision) or by brute force; nothing in it imports privamp's profiles, curves or accountants,
so a defect in privamp's code cannot hide in its own reference.

* :func:`gdp_delta` / :func:`gdp_epsilon` — T Gaussian steps of noise multiplier σ (sensitivity
  1) compose to μ-GDP with μ = √T/σ exactly (Dong, Roth, Su 2022, Cor. 2.3); the profile is
  Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Theorem 8).
"""

from __future__ import annotations

import mpmath

mpmath.mp.dps = 50


def _phi(x):
    return mpmath.ncdf(x)


def gdp_delta(mu, eps) -> mpmath.mpf:
    """δ(ε) of μ-GDP, exactly (50 digits)."""
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return _phi(-eps / mu + mu / 2) - mpmath.exp(eps) * _phi(-eps / mu - mu / 2)


def gdp_epsilon(mu, delta) -> mpmath.mpf:
    """The ε ≥ 0 with δ(ε) = ``delta`` for μ-GDP (0 if δ(0) ≤ delta), to 40 digits."""
    mu, delta = mpmath.mpf(mu), mpmath.mpf(delta)
    if gdp_delta(mu, 0) <= delta:
        return mpmath.mpf(0)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    while gdp_delta(mu, hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):  # bisection: δ(ε) is decreasing
        mid = (lo + hi) / 2
        if gdp_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def gaussian_composition_epsilon(sigma, steps, delta) -> float:
    """ε(δ) of ``steps`` Gaussian releases of noise multiplier σ (sensitivity 1)."""
    return float(gdp_epsilon(mpmath.sqrt(steps) / mpmath.mpf(sigma), delta))


def gaussian_composition_delta(sigma, steps, eps) -> float:
    return float(gdp_delta(mpmath.sqrt(steps) / mpmath.mpf(sigma), eps))


# ---------------------------------------------------------------------------------------------
# a second, slow but simple PLD composition: round losses to a grid, convolve
# ---------------------------------------------------------------------------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from scipy.signal import fftconvolve  # noqa: E402


class LossLaw:
    """A privacy-loss law on the grid ``(start + j) h`` plus a mass at +∞, rounded one way.

    Built from the right-continuous CDF ``F(t) = P(L ≤ t)`` of a pair's privacy loss L under its
    first distribution: the mass of each cell ``(l_{j−1}, l_j]`` goes to ``l_j`` (``up=True``,
    every loss rounded up: δ of the composition is over-estimated by at most the effect of T
    grid steps) or to ``l_{j−1}`` (``up=False``: under-estimated). Composition is plain
    convolution; nothing here is shared with privamp's own PLD code.
    """

    def __init__(self, start: int, masses: np.ndarray, h: float, p_inf: float = 0.0):
        self.start, self.masses, self.h, self.p_inf = start, masses, h, p_inf

    @classmethod
    def from_cdf(cls, cdf, lo: float, hi: float, h: float, up: bool, p_inf: float = 0.0):
        """``cdf`` vectorised, with all finite mass in [lo, hi]; ``p_inf`` = P(L = +∞)."""
        i0, i1 = math.floor(lo / h) - 1, math.ceil(hi / h) + 1
        grid = np.arange(i0, i1 + 1) * h
        cum = np.clip(cdf(grid), 0.0, 1.0 - p_inf)
        cum[-1] = 1.0 - p_inf
        masses = np.diff(np.concatenate([[0.0], cum]))
        masses = np.maximum(masses, 0.0)
        return cls(i0 if up else i0 - 1, masses, h, p_inf)

    @classmethod
    def atoms(cls, losses, masses, h: float, up: bool, p_inf: float = 0.0):
        """A discrete law: each finite loss rounded up (or down) to the grid."""
        idx = [math.ceil(x / h) if up else math.floor(x / h) for x in losses]
        start = min(idx)
        out = np.zeros(max(idx) - start + 1)
        for i, m in zip(idx, masses, strict=True):
            out[i - start] += m
        return cls(start, out, h, p_inf)

    def _trim(self, tol=1e-30):
        m = self.masses
        keep = np.flatnonzero(m > tol * max(m.max(), 1e-300))
        if keep.size == 0:
            return self
        lo, hi = keep[0], keep[-1]
        right = float(np.sum(m[hi + 1:]))
        return LossLaw(self.start + lo, m[lo:hi + 1].copy(), self.h, self.p_inf + right)

    def __mul__(self, other: LossLaw) -> LossLaw:
        """The law of the sum of independent losses (composition)."""
        m = np.maximum(fftconvolve(self.masses, other.masses), 0.0)
        p_inf = 1.0 - (1.0 - self.p_inf) * (1.0 - other.p_inf)
        return LossLaw(self.start + other.start, m, self.h, p_inf)._trim()

    def power(self, steps: int) -> LossLaw:
        result, base = None, self
        while steps:
            if steps & 1:
                result = base if result is None else result * base
            steps >>= 1
            if steps:
                base = base * base
        return result

    def delta(self, eps: float) -> float:
        losses = (self.start + np.arange(self.masses.size)) * self.h
        above = losses > eps
        return float(np.sum(self.masses[above] * -np.expm1(eps - losses[above]))) + self.p_inf

    def epsilon(self, delta: float) -> float:
        if self.delta(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, (self.start + self.masses.size) * self.h
        if self.delta(hi) > delta:
            return math.inf
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self.delta(mid) > delta else (lo, mid)
        return hi


def composed_epsilon_bracket(make_law, steps: int, delta: float) -> tuple[float, float]:
    """[lower, upper] on ε(δ) of ``steps`` compositions, from ``make_law(up)`` (a LossLaw per
    orientation: a dict name -> law); the maximum over orientations."""
    ends = []
    for up in (False, True):
        laws = make_law(up)
        ends.append(max(law.power(steps).epsilon(delta) for law in laws.values()))
    return ends[0], ends[1]


# ---- loss laws of base mechanisms: (CDF of ℓ under P, CDF of ℓ under Q, range of ℓ) -------

def gaussian_base(theta: float):
    """ℓ(x) = θx − θ²/2 for P = N(θ, 1), Q = N(0, 1): N(±θ²/2, θ²)."""
    return {"P": lambda t: stats.norm.cdf((t - theta**2 / 2) / theta),
            "Q": lambda t: stats.norm.cdf((t + theta**2 / 2) / theta),
            "P<": None, "Q<": None,
            "range": (-theta**2 / 2 - 12 * theta, theta**2 / 2 + 12 * theta)}


def laplace_base(scale: float, sensitivity: float = 1.0):
    """ℓ(x) = (|x| − |x − Δ|)/b for P = Lap(Δ, b), Q = Lap(0, b): atoms at ±Δ/b."""
    a = sensitivity / scale

    def cdf(mu, strict):
        def f(t):
            t = np.asarray(t, dtype=float)
            x = (t * scale + sensitivity) / 2  # ℓ ≤ t  ⟺  x ≤ x(t) inside (−a, a)
            val = stats.laplace.cdf(x, loc=mu, scale=scale)
            below = (t < -a) | ((t == -a) & strict)
            above = (t > a) | ((t == a) & ~strict) if not strict else (t > a)
            return np.where(below, 0.0, np.where(above, 1.0, val))
        return f

    return {"P": cdf(sensitivity, False), "Q": cdf(0.0, False),
            "P<": cdf(sensitivity, True), "Q<": cdf(0.0, True), "range": (-a, a)}


def poisson_laws(base, rate: float, h: float, up: bool) -> dict[str, LossLaw]:
    """The remove pair ((1−γ)Q + γP, Q) and the add pair (Q, (1−γ)Q + γP) as LossLaws.

    remove: L = log(1 − γ + γe^ℓ) (increasing in ℓ) under the mixture;
    add: L = −log(1 − γ + γe^ℓ) (decreasing) under Q, so P(L ≤ t) = 1 − Q(ℓ < ℓ(−t)).
    """
    g = rate
    lo, hi = base["range"]
    # the composed losses: g(ℓ) = log(1 − γ + γ e^ℓ)
    def fwd(x):
        return math.log1p(g * math.expm1(x))

    def inv(t):  # ℓ with g(ℓ) = t, for t > log(1 − γ); −inf below
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.log(np.maximum(np.expm1(t) / g + 1.0, 0.0))
        return val

    def remove_cdf(t):
        x = inv(t)
        return (1 - g) * base["Q"](x) + g * base["P"](x)

    strict_q = base["Q<"] or base["Q"]

    def add_cdf(t):
        return 1.0 - strict_q(inv(-np.asarray(t, dtype=float)))

    r_lo, r_hi = fwd(lo), fwd(hi)
    return {"remove": LossLaw.from_cdf(remove_cdf, r_lo, r_hi, h, up),
            "add": LossLaw.from_cdf(add_cdf, -r_hi, -r_lo, h, up)}


# ---------------------------------------------------------------------------------------------
# discrete pairs: exact compositions by enumeration (mpmath)
# ---------------------------------------------------------------------------------------------


def rr_pair(eps0):
    """Randomized response with P(keep) = e^ε₀/(1 + e^ε₀): the pair (P, Q) on {1, 0}."""
    p = mpmath.e ** mpmath.mpf(eps0) / (1 + mpmath.e ** mpmath.mpf(eps0))
    return (p, 1 - p), (1 - p, p)


def poisson_pairs(pair, rate):
    """The remove and add pairs of Poisson subsampling under add/remove."""
    P, Q = pair
    g = mpmath.mpf(rate)
    M = tuple((1 - g) * q + g * p for p, q in zip(P, Q, strict=True))
    return {"remove": (M, Q), "add": (Q, M)}


def binary_composition_epsilon(pairs, steps, delta) -> float:
    """ε(δ) of ``steps`` compositions of two-outcome pairs (the worst orientation), exactly:
    the composed loss k·l₁ + (T − k)·l₀ has a binomial law."""
    delta = mpmath.mpf(delta)
    worst = mpmath.mpf(0)
    for first, second in pairs.values():
        losses = [mpmath.log(first[i] / second[i]) for i in range(2)]
        terms = [(k * losses[0] + (steps - k) * losses[1],
                  mpmath.binomial(steps, k) * first[0] ** k * first[1] ** (steps - k))
                 for k in range(steps + 1)]

        def delta_of(eps, terms=terms):
            return mpmath.fsum(m * (1 - mpmath.e ** (eps - loss)) for loss, m in terms
                               if loss > eps)

        if delta_of(0) <= delta:
            continue
        lo, hi = mpmath.mpf(0), max(abs(x) for x in losses) * steps + 1
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
        worst = max(worst, hi)
    return float(worst)
