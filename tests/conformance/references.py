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


# ---------------------------------------------------------------------------------------------
# T = 1: base profiles and amplification theorems, evaluated from their formulas with mpmath
# ---------------------------------------------------------------------------------------------

_mp = mpmath.mpf


def gaussian_family_theta(mech):
    """θ = Δ/σ of a Gaussian-noise mechanism, from its public parameters (None otherwise)."""
    name = getattr(mech, "registry_name", "")
    if name not in ("gaussian", "brownian-motion", "ornstein-uhlenbeck"):
        return None
    d = _mp(mech.sensitivity)
    if name == "gaussian":
        return d / _mp(mech.sigma)
    if name == "brownian-motion":
        return d / mpmath.sqrt(2 * _mp(mech.t))
    if name == "ornstein-uhlenbeck":
        th, rho, t = _mp(mech.theta), _mp(mech.rho), _mp(mech.t)
        noise = mpmath.sqrt(rho**2 / th * (1 - mpmath.e ** (-2 * th * t)))
        return mpmath.e ** (-th * t) * d / noise
    return None


def base_delta(mech, k: int, eps):
    """δ_k(ε) of the base mechanism for groups of k (white-box), or None if not known here."""
    eps = _mp(eps)
    name = getattr(mech, "registry_name", "")
    theta = gaussian_family_theta(mech)
    if theta is not None:
        th = k * theta
        if th == 0:
            return _mp(0)
        return mpmath.ncdf(th / 2 - eps / th) - mpmath.e**eps * mpmath.ncdf(-th / 2 - eps / th)
    if name == "laplace":
        a = k * _mp(mech.sensitivity) / _mp(mech.scale)
        return max(_mp(0), 1 - mpmath.e ** ((eps - a) / 2)) if eps < a else _mp(0)
    if name in ("randomized-response", "randomized-membership"):
        p = _mp(mech.p)  # the bit changes at most once however many records change
        hi, lo = max(p, 1 - p), min(p, 1 - p)
        return max(_mp(0), hi - mpmath.e**eps * lo)
    if k != 1:
        return None
    if name == "approx-dp":
        e0, d0 = _mp(mech.epsilon), _mp(mech.delta)
        return d0 + (1 - d0) * max(_mp(0), mpmath.e**e0 - mpmath.e**eps) / (1 + mpmath.e**e0)
    if name == "discrete-pair":
        p = [_mp(x) for x in mech.p]
        q = [_mp(x) for x in mech.q]
        a = mpmath.e**eps
        return max(mpmath.fsum(max(_mp(0), x - a * y) for x, y in zip(p, q, strict=True)),
                   mpmath.fsum(max(_mp(0), y - a * x) for x, y in zip(p, q, strict=True)))
    return None


def _binom_pmf(k, n, p):
    return mpmath.binomial(n, k) * _mp(p) ** k * (1 - _mp(p)) ** (n - k)


def _hypergeom_pmf(k, population, successes, draws):
    return (mpmath.binomial(successes, k) * mpmath.binomial(population - successes, draws - k)
            / mpmath.binomial(population, draws))


_LAWS: dict = {}


def multiplicity_law(scheme) -> dict[int, mpmath.mpf]:
    """P(K = k): copies of the differing record in one subsample, from the definitions."""
    if scheme not in _LAWS:
        _LAWS[scheme] = _multiplicity_law(scheme)
    return _LAWS[scheme]


def _multiplicity_law(scheme) -> dict[int, mpmath.mpf]:
    kind = scheme.kind
    if kind == "poisson":
        return {0: 1 - _mp(scheme.rate), 1: _mp(scheme.rate)}
    if kind == "wor":
        return {0: 1 - _mp(scheme.m) / scheme.n, 1: _mp(scheme.m) / scheme.n}
    if kind == "wr":
        return {k: _binom_pmf(k, scheme.m, _mp(1) / scheme.n) for k in range(scheme.m + 1)}
    law = {1: _mp(1)}  # a chain of stages (MUST schemes are chains)
    size_in = scheme.n
    for stage, size in scheme.stages:
        new: dict[int, mpmath.mpf] = {}
        for j, pj in law.items():
            if stage == "wor":
                ks = range(max(0, size - (size_in - j)), min(j, size) + 1)
                terms = {k: _hypergeom_pmf(k, size_in, j, size) for k in ks}
            else:
                terms = {k: _binom_pmf(k, size, _mp(j) / size_in) for k in range(size + 1)}
            for k, pk in terms.items():
                if pk > 0:
                    new[k] = new.get(k, _mp(0)) + pj * pk
        law = new
        size_in = size
    return law


def amplification_eta(scheme, law):
    """The η of the theorem's ε map: P(K ≥ 1), except the first-stage probability for a
    general stage chain (privamp's first-stage coupling bound)."""
    if scheme.kind == "chain":
        stage, size = scheme.stages[0]
        if stage == "wor":
            return _mp(size) / scheme.n
        return 1 - (1 - _mp(1) / scheme.n) ** size
    if scheme.kind == "must-ww" and scheme.bound == "proved":
        # privamp's proved bound: the η of min(b, m) draws (docs/certification.md)
        return 1 - (1 - _mp(1) / scheme.n) ** min(scheme.b, scheme.m)
    return 1 - law.get(0, _mp(0))


def amplified_delta(mech, scheme, eps_prime):
    """δ'(ε') of the amplification theorem for ``scheme`` (BBG Thms 8–11, MUST Thm 5, the
    stage-chain bound), or None where a group profile is not known here."""
    law = multiplicity_law(scheme)
    eta = amplification_eta(scheme, law)
    eps_prime = _mp(eps_prime)
    eps = mpmath.log(1 + (mpmath.e**eps_prime - 1) / eta)
    # the terms of weight below 1e-60 are skipped only when they cannot matter: each δ_k ≤ 1,
    # so they add at most (their count) · 1e-60, under 1e-17 of a total above 1e-40; below that
    # (tiny δ at large ε, where the many-copies terms dominate) every term is summed
    total = _mp(0)
    for small in (False, True):
        for k, w in law.items():
            if k == 0 or (w < _mp(10) ** -60) != small:
                continue
            d = base_delta(mech, k, eps)
            if d is None:
                return None
            total += w * d
        if total > _mp(10) ** -40:
            break
    return total


def theorem14_delta(mech, rate, n, eps_prime):
    """BBG Theorem 14 (Poisson under substitution, datasets of size n), with the extended
    profile for ε_k < 0 (catalogue erratum E3)."""
    g = _mp(rate)
    eps_prime = _mp(eps_prime)
    if g == 1:
        return base_delta(mech, 1, eps_prime)
    eps = mpmath.log(1 + (mpmath.e**eps_prime - 1) / g)
    beta = mpmath.e ** (eps_prime - eps)

    def ext(e):
        if e >= 0:
            return base_delta(mech, 1, e)
        return 1 - mpmath.e**e + mpmath.e**e * base_delta(mech, 1, -e)

    inner = _mp(0)
    for k in range(1, n + 1):
        gk = _binom_pmf(k - 1, n - 1, g)
        if k < n:
            inner += gk * ext(eps + mpmath.log(g / (1 - g) * (_mp(n) / k - 1)))
        else:
            inner += gk
    return g * beta * base_delta(mech, 1, eps) + g * (1 - beta) * inner


def one_step_delta(mech, scheme, relation, eps_prime):
    """δ of one step of ``mech`` on ``scheme`` under the outer ``relation`` (None: unknown)."""
    if base_delta(mech, 1, 0) is None:
        return None
    if scheme is None:
        return base_delta(mech, 1, eps_prime)
    if scheme.kind == "poisson" and relation.value == "substitute":
        if scheme.n is None:  # Theorem 14 needs the dataset size (privamp refuses without)
            return None
        return theorem14_delta(mech, scheme.rate, scheme.n, eps_prime)
    return amplified_delta(mech, scheme, eps_prime)


def one_step_epsilon(mech, scheme, relation, delta):
    """ε(δ) of one step (the smallest ε with δ(ε) ≤ delta; inf if none below 1e4)."""
    f = lambda e: one_step_delta(mech, scheme, relation, e)  # noqa: E731
    delta = _mp(delta)
    if f(0) is None:
        return None
    if f(0) <= delta:
        return 0.0
    lo, hi = _mp(0), _mp(1)
    while f(hi) > delta:
        lo, hi = hi, 2 * hi
        if hi > 1e4:
            return math.inf
    # [lo, hi] with f(lo) > delta ≥ f(hi), shrunk to 1e-25 relative (80 halvings of the first
    # bracket before: each f is a 50-digit sum of up to 1000 terms). Illinois steps on
    # log f − log δ, smooth in ε, converge in ~10 evaluations; halving where f is 0 or an
    # interpolated point falls outside the bracket. Only the bracket is trusted: hi is returned.
    def g(x):
        v = f(x)
        return mpmath.log(v) - mpmath.log(delta) if v > 0 else -mpmath.inf

    g_lo, g_hi = g(lo), g(hi)
    kept = 0  # +1: lo was kept by the last step, −1: hi was
    for _ in range(400):
        if hi - lo <= _mp(10) ** -25 * max(1, hi):
            break
        mid = (lo + hi) / 2
        if mpmath.isfinite(g_hi) and mpmath.isfinite(g_lo) and g_lo != g_hi:
            guess = lo + (hi - lo) * g_lo / (g_lo - g_hi)
            if lo < guess < hi:
                mid = guess
        g_mid = g(mid)
        if g_mid > 0:
            lo, g_lo = mid, g_mid
            if kept == -1:
                g_hi /= 2
            kept = -1
        else:
            hi, g_hi = mid, g_mid
            if kept == 1:
                g_lo /= 2
            kept = 1
    return float(hi)


# ---- the relaxed double mixture of WOR/WR groups (privamp.pld.group.RelaxedGroupProfile) ----

def group_hit_law(scheme, k: int) -> list[mpmath.mpf]:
    """P(j members of a group of k are drawn), j = 0, 1, …: Hypergeometric(n, k, m) for WOR,
    Binomial(m, k/n) for WR (cut where the mass left is below 1e-40, far below any tolerance
    the tests use), from the definitions."""
    n, m = scheme.n, scheme.m
    if getattr(scheme, "kind", "") == "wor":
        return [_hypergeom_pmf(j, n, k, m) for j in range(min(k, m) + 1)]
    p = mpmath.mpf(k) / n
    out, left = [], mpmath.mpf(1)
    for j in range(m + 1):
        w = _binom_pmf(j, m, p)
        out.append(w)
        left -= w
        if j > m * p and left < mpmath.mpf("1e-40"):
            break
    return out


def relaxed_pair_delta(family: str, weights, theta, eps) -> mpmath.mpf:
    """D_{e^ε}(Σ w_j N(jθ) ‖ Σ w_j N(−jθ)) (``family`` "gaussian", unit normal components) or
    the same with unit Laplace components ("laplace"), at 30 digits. The loss is non-decreasing
    in the output (each component ratio is, and the mixture ratio Σ c_j e^{jθt}/Σ c_j e^{−jθt}
    is), so {p > e^ε q} is a half-line (t*, ∞) and the divergence is P(T > t*) − e^ε Q(T > t*),
    with t* found by bisection and both tails in closed form."""
    with mpmath.workdps(30):
        w = [mpmath.mpf(x) for x in weights]
        theta, alpha = mpmath.mpf(theta), mpmath.e ** mpmath.mpf(eps)
        if family == "gaussian":
            def dens(t, sign):
                return mpmath.fsum(wj * mpmath.npdf(t, sign * j * theta)
                                   for j, wj in enumerate(w))

            def tail(t, sign):
                return mpmath.fsum(wj * mpmath.ncdf(-(t - sign * j * theta))
                                   for j, wj in enumerate(w))
        else:
            def dens(t, sign):
                return mpmath.fsum(wj * mpmath.exp(-abs(t - sign * j * theta)) / 2
                                   for j, wj in enumerate(w))

            def _one(t, c):  # P(c + Laplace(1) > t)
                return 1 - mpmath.exp(t - c) / 2 if t < c else mpmath.exp(c - t) / 2

            def tail(t, sign):
                return mpmath.fsum(wj * _one(t, sign * j * theta) for j, wj in enumerate(w))

        reach = len(w) * theta + 60
        lo, hi = -reach, reach
        if dens(hi, 1) - alpha * dens(hi, -1) <= 0:
            return mpmath.mpf(0)  # beyond the largest loss (Laplace components)
        for _ in range(120):
            mid = (lo + hi) / 2
            if dens(mid, 1) - alpha * dens(mid, -1) < 0:
                lo = mid
            else:
                hi = mid
        return max(tail(hi, 1) - alpha * tail(hi, -1), mpmath.mpf(0))
