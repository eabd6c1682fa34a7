"""Certified lower values of privacy profiles: ``lower ≤ exact ≤ upper`` against mpmath.

Every reference here is written from the definitions (Theorems 3 and 4 of Balle, Barthe,
Gaboardi 2018, ψ_p, the canonical (ε₀, δ₀) pair, hockey-stick sums, the interpolation rules of
tabulated profiles, Vadhan's group bound, the amplification theorems), evaluated in mpmath at 50+
significant digits (precision raised until two evaluations agree to 45 digits, so cancellations
cost nothing), independently of privamp's floating-point formulas. The lower values must also be
tight where the problem is well conditioned (within 1e-10 relative in log δ away from kinks).

The registry-driven test draws every registered mechanism from ``strategies.MECHANISMS`` and
needs a reference for its profile class: a new mechanism whose profile class has none fails
until one is written.
"""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp.amplification.mixing import (
    Dobrushin,
    Doeblin,
    EpsDobrushin,
    MarkovKernel,
    UltraMixing,
)
from privamp.amplification.subsampling import amplify
from privamp.amplification.tightness import membership_lower_bound
from privamp.errors import InvalidParameterError
from privamp.mechanisms import (
    REGISTRY,
    ApproxDPProfile,
    DiscretePairProfile,
    GaussianProfile,
    LaplaceProfile,
    RandomizedResponseProfile,
)
from privamp.pld.curves import ProfileCurve
from privamp.profiles import (
    _GROUP_GRID,
    BlackBoxGroupProfile,
    PrivacyProfile,
    TabulatedProfile,
    ZeroProfile,
)
from privamp.sampling import MustOW, MustWO, MustWW, Poisson, StageChain
from privamp.sampling.schemes import WithoutReplacement, WithReplacement
from strategies import MECHANISMS

MAX = float(np.finfo(float).max)
TIGHT = 1e-10

# ---------------------------------------------------------------------------------------------
# references (mpmath, from the definitions)
# ---------------------------------------------------------------------------------------------


def adaptive(func, digits=45):
    """``func()`` (an mpf, possibly ±inf) at increasing precision until two runs agree (a log
    of 0 only from 480 digits on: cancellation gives exact zeros at low precision)."""
    prev = None
    for dps in (60, 120, 240, 480, 960, 1920):
        with mp.workdps(dps):
            val = func()
        if prev is not None:
            if mp.isinf(val) and val == prev and (val > 0 or dps >= 960):
                return val
            if mp.isfinite(val) and mp.isfinite(prev) and \
                    abs(val - prev) <= mp.mpf(10) ** (-digits) * (1 + abs(val)):
                return val
        prev = val
    raise AssertionError(f"no stable reference: {prev}")


def mlog(x):
    """log of a non-negative mpf (−inf at 0; a negative value from cancellation is NaN, which
    makes :func:`adaptive` raise the precision)."""
    if x == 0:
        return mp.ninf
    if x < 0:
        return mp.nan
    return mp.log(x)


def gauss_delta(theta, eps):
    """Theorem 4: Φ(θ/2 − ε/θ) − e^ε Φ(−θ/2 − ε/θ) (mp inputs, current precision)."""
    if theta == 0 or mp.isinf(eps):
        return mp.mpf(0)
    return mp.ncdf(theta / 2 - eps / theta) - mp.exp(eps) * mp.ncdf(-theta / 2 - eps / theta)


def laplace_delta(theta, eps):
    """Theorem 3: [1 − e^{(ε−θ)/2}]_+."""
    if eps >= theta:
        return mp.mpf(0)
    return 1 - mp.exp((eps - theta) / 2)


def rr_delta(p, eps):
    """ψ_p(ε) = [max(p, 1−p) − e^ε min(p, 1−p)]_+ (δ(∞) = mass outside the other's support)."""
    hi, lo = max(p, 1 - p), min(p, 1 - p)
    if mp.isinf(eps):
        return hi if lo == 0 else mp.mpf(0)
    if lo == 0:
        return hi
    # hi − e^ε lo = lo (e^{ε₀} − e^ε), ε₀ = log(hi/lo): the cancellation near ε₀ is resolved by
    # the adaptive precision (ε₀ is not a float, so the values stay ≥ 1e-17 relative)
    return max(hi - mp.exp(eps) * lo, mp.mpf(0))


def approx_delta(eps0, delta0, eps):
    """δ₀ + (1 − δ₀)[e^{ε₀} − e^ε]_+/(1 + e^{ε₀}) (e^{ε₀} − e^ε written e^ε expm1(ε₀ − ε):
    a tiny ε₀ − ε is not absorbed by δ₀ at every working precision)."""
    if mp.isinf(eps) or eps >= eps0:
        return delta0
    return delta0 + (1 - delta0) * mp.exp(eps) * mp.expm1(eps0 - eps) / (1 + mp.exp(eps0))


def hockey(p, q, eps):
    """Σ_z [p(z) − e^ε q(z)]_+ (at ε = ∞: the p-mass where q = 0)."""
    if mp.isinf(eps):
        return mp.fsum(a for a, b in zip(p, q, strict=True) if b == 0)
    alpha = mp.exp(eps)
    return mp.fsum(max(a - alpha * b, 0) for a, b in zip(p, q, strict=True))


def pair_delta(p, q, eps):
    return max(hockey(p, q, eps), hockey(q, p, eps))


def mpf(x):
    return mp.mpf(float(x)) if np.isfinite(x) else (mp.inf if x > 0 else mp.ninf)


def profile_delta(prof, eps):
    """The exact δ(ε) of a leaf profile object (its stored parameters), mp ε ≥ 0."""
    if isinstance(prof, GaussianProfile):
        return gauss_delta(mpf(prof.theta), eps)
    if isinstance(prof, LaplaceProfile):
        return laplace_delta(mpf(prof.theta), eps)
    if isinstance(prof, RandomizedResponseProfile):
        return rr_delta(mpf(prof.p), eps)
    if isinstance(prof, ApproxDPProfile):
        return approx_delta(mpf(prof.eps0), mpf(prof.delta0), eps)
    if isinstance(prof, DiscretePairProfile):
        return pair_delta([mpf(v) for v in prof.p], [mpf(v) for v in prof.q], eps)
    if isinstance(prof, ZeroProfile):
        return mp.mpf(0)
    raise KeyError(type(prof).__name__)


def exact_log(prof, eps):
    """log δ(ε) of a leaf profile at a float ε, at 50+ digits."""
    return adaptive(lambda: mlog(profile_delta(prof, mpf(eps))))


def below_float_range(prof, eps):
    """``−a²/2`` (≥ log Φ(a) ≥ log δ) when it is below −1.5e308 (Gaussian with ε/θ huge, where
    mpmath's ncdf overflows), else None."""
    if isinstance(prof, GaussianProfile) and prof.theta > 0 and np.isfinite(eps):
        a = mp.mpf(prof.theta) / 2 - mpf(eps) / mp.mpf(prof.theta)
        if a < 0 and a * a / 2 > mp.mpf(1.5e308):
            return -a * a / 2
    return None


# ---------------------------------------------------------------------------------------------
# the check
# ---------------------------------------------------------------------------------------------


def check_bracket(lower, upper, exact, *, tight=None, what=""):
    """lower ≤ exact ≤ upper (exact an mpf log value); with ``tight`` also that the lower is
    within ``tight`` (relative, in log δ) of the exact value."""
    lo, up = float(lower), float(upper)
    assert not math.isnan(lo), what
    assert lo <= 0.0, what
    if exact == mp.ninf:
        assert lo == -math.inf, (what, lo)
        return
    assert mp.mpf(lo) <= exact, (what, lo, float(exact), "lower above the exact value")
    assert exact <= mp.mpf(up), (what, up, float(exact), "upper below the exact value")
    if tight is not None:
        gap = (exact - mp.mpf(lo)) / max(1, abs(exact))
        assert gap <= tight, (what, lo, float(exact), float(gap), "lower not tight")


def check_profile(prof, eps_grid, *, tight_where=lambda e: False, what=""):
    eps_grid = np.asarray(eps_grid, dtype=float)
    lower = prof.log_delta_lower(eps_grid)
    upper = prof.log_delta(eps_grid)
    assert np.all(lower <= upper), what
    for e, lo, up in zip(eps_grid, lower, upper, strict=True):
        ceiling = below_float_range(prof, e)
        if ceiling is not None:
            # log δ ≤ −a²/2 < −1.5e308: the lower value is below that, the upper finite
            assert mp.mpf(lo) <= ceiling and up > -math.inf, (what, e, lo, up)
            continue
        # δ ≤ 1 (input laws whose float entries sum to 1 + 1e-16 give a formula value a hair
        # above 1; profiles report at most 1)
        exact = min(exact_log(prof, e), mp.mpf(0))
        check_bracket(lo, up, exact, tight=TIGHT if tight_where(e) else None,
                      what=f"{what} eps={e!r}")


def around(x, rel=(1e-15, 1e-12, 1e-9, 1e-6, 1e-3)):
    """x and points just below and above it (relative steps), the float neighbours included."""
    if not np.isfinite(x) or x < 0:
        return []
    pts = [x, float(np.nextafter(x, 0)), float(np.nextafter(x, np.inf))]
    for r in rel:
        pts += [x * (1 - r), x * (1 + r)]
    return [p for p in pts if p >= 0]


BASE_GRID = [0.0, 5e-324, 1e-300, 1e-15, 1e-8, 1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0,
             1e4, 1e300, math.inf]


def grid(*kinks):
    pts = list(BASE_GRID)
    for k in kinks:
        pts += around(k)
    return np.unique(np.array(pts, dtype=float))


# ---------------------------------------------------------------------------------------------
# leaf profiles at boundary parameters
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", [0.0, 1e-300, 1e-8, 1e-3, 1.0, 50.0, 1e4])
def test_gaussian_lower(theta):
    prof = GaussianProfile(theta)
    pts = grid(theta * theta / 2, theta, 2 * theta * theta)
    # well conditioned everywhere the value is representable (no kinks; the erfcx difference
    # is handled by quadrature bounds where it cancels)
    check_profile(prof, pts, tight_where=lambda e: np.isfinite(e), what=f"gauss {theta}")


def test_gaussian_subnormal_theta_has_no_lower_information():
    """θ below the smallest normal float: the upper value raises θ, the lower is −inf."""
    prof = GaussianProfile(1e-310)
    assert np.all(prof.log_delta_lower(np.array([0.0, 1.0])) == -np.inf)


@pytest.mark.parametrize("theta", [0.0, 1e-300, 1e-3, 1.0, 50.0])
def test_laplace_lower(theta):
    prof = LaplaceProfile(theta)

    def tight(e):  # 1 − e^{(ε−θ)/2} with ε − θ exact to ½ ulp: tight up to the kink itself
        return e < theta and (theta - e) > 1e-12 * theta

    check_profile(prof, grid(theta), tight_where=tight, what=f"laplace {theta}")


@pytest.mark.parametrize("p", [0.0, 1e-300, 1e-16, 0.3, 0.5, 0.75, 1 - 1e-16, 1.0])
def test_randomized_response_lower(p):
    prof = RandomizedResponseProfile(p)
    lo, hi = min(p, 1 - p), max(p, 1 - p)
    kink = math.log(hi / lo) if lo > 0 else math.inf

    def tight(e):  # the kink ε₀ = log(p_max/p_min) is not a float: away from it
        return np.isfinite(e) and (not np.isfinite(kink) or abs(e - kink) > 1e-4 * (1 + kink))

    check_profile(prof, grid(kink), tight_where=tight, what=f"rr {p}")


@pytest.mark.parametrize("delta0", [0.0, 1e-300, 1e-6, 0.5, 1.0])
@pytest.mark.parametrize("eps0", [0.0, 1e-8, 0.5, 3.0, 40.0])
def test_approx_dp_lower(eps0, delta0):
    prof = ApproxDPProfile(eps0, delta0)

    def tight(e):  # x = ε − ε₀ is one rounding: tight right up to the kink
        return True

    check_profile(prof, grid(eps0), tight_where=tight, what=f"approx {eps0} {delta0}")


PAIRS = [
    ([0.75, 0.25], [0.25, 0.75]),
    ([0.5, 0.5, 0.0], [0.25, 0.25, 0.5]),
    ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]),  # identical laws: δ ≡ 0
    ([1e-300, 0.4, 0.6 - 1e-300], [0.4, 1e-300, 0.6 - 1e-300]),
    ([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]),
    ([1.0, 0.0], [0.0, 1.0]),
]


@pytest.mark.parametrize("p,q", PAIRS)
def test_discrete_pair_lower(p, q):
    prof = DiscretePairProfile(p, q)
    pa, qa = prof.p, prof.q
    both = (pa > 0) & (qa > 0)
    kinks = np.abs(np.log(pa[both]) - np.log(qa[both]))

    def tight(e):
        return np.isfinite(e) and np.all(np.abs(e - kinks) > 1e-4 * (1 + kinks))

    check_profile(prof, grid(*kinks), tight_where=tight, what=f"pair {p} {q}")


def test_zero_profile_lower_is_exact():
    assert np.all(ZeroProfile().log_delta_lower(np.array(BASE_GRID)) == -np.inf)


def test_default_lower_is_no_information():
    class Bare(PrivacyProfile):
        def _log_delta(self, eps):
            return np.zeros(eps.shape)

    assert Bare().log_delta_lower(0.5) == -math.inf
    assert Bare().log_delta_lower([0.0, 1.0]).shape == (2,)
    with pytest.raises(InvalidParameterError):
        Bare().log_delta_lower(-1.0)


# ---------------------------------------------------------------------------------------------
# registry: every mechanism's profile, drawn by hypothesis
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@settings(max_examples=15)
@given(data=st.data(), eps=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=4))
def test_registered_mechanisms_lower(name, data, eps):
    prof = data.draw(MECHANISMS[name]).profile()
    pts = list(eps) + [0.0, math.inf]
    check_profile(prof, pts, what=f"{name}: {prof!r}")


@pytest.mark.parametrize("name", sorted(REGISTRY))
@settings(max_examples=3)
@given(data=st.data())
def test_every_registered_mechanism_has_a_reference(name, data):
    assert name in MECHANISMS
    prof = data.draw(MECHANISMS[name]).profile()
    profile_delta(prof, mp.mpf(0))  # raises KeyError without a reference


# ---------------------------------------------------------------------------------------------
# group profiles
# ---------------------------------------------------------------------------------------------


@functools.cache
def _vadhan_grid(key, k):
    base = _BASES[key]
    return [_vadhan(base, k, mpf(g)) for g in _GROUP_GRID]


def _vadhan(base, k, eps):
    """V(ε) = (e^ε − 1)/(e^{ε/k} − 1) δ(ε/k) (= k δ(0) at 0), at 50 digits."""
    def f():
        e = mp.mpf(eps)
        if e == 0:
            return k * profile_delta(base, mp.mpf(0))
        if mp.isinf(e):
            d = profile_delta(base, mp.inf)
            return mp.inf if d > 0 else mp.mpf(0)
        return mp.expm1(e) / mp.expm1(e / k) * profile_delta(base, e / k)

    return adaptive(f, digits=40)


_BASES = {
    "laplace": LaplaceProfile(1.0),
    "gauss": GaussianProfile(1.0),
    "approx": ApproxDPProfile(1.0, 1e-4),
    "rr": RandomizedResponseProfile(0.8),
}


@pytest.mark.parametrize("key", sorted(_BASES))
@pytest.mark.parametrize("k", [2, 3])
def test_black_box_group_lower(key, k):
    """Lower bound on the black-box formula min(1, V(ε), min_{g ∈ G, g ≤ ε} V(g)) itself."""
    base = _BASES[key]
    grp = BlackBoxGroupProfile(base, k)
    values = _vadhan_grid(key, k)
    running = []
    cur = mp.inf
    for v in values:
        cur = min(cur, v)
        running.append(cur)
    kink = {"laplace": 1.0, "approx": 1.0, "rr": math.log(4.0), "gauss": 1.0}[key] * k
    pts = np.unique(np.array([0.0, 1e-300, 1e-6, 0.3, 1.0, 2.5, 7.0, 50.0, 1e5, math.inf]
                             + around(kink), dtype=float))
    lower = grp.log_delta_lower(pts)
    upper = grp.log_delta(pts)
    for e, lo, up in zip(pts, lower, upper, strict=True):
        idx = int(np.searchsorted(_GROUP_GRID, e, side="right")) - 1
        exact_val = min(mp.mpf(1), _vadhan(base, k, e), running[idx])
        exact = mlog(exact_val)
        tight = TIGHT if (np.isfinite(e) and abs(e - kink) > 1e-3 and e < 30) else None
        if key in ("rr", "approx", "laplace") and e > kink:
            tight = None  # zero or plateau-dominated values near the kink
        check_bracket(lo, up, exact, tight=tight, what=f"bb {key} k={k} eps={e}")


# ---------------------------------------------------------------------------------------------
# tabulated profiles
# ---------------------------------------------------------------------------------------------


def _tab_exact(tab, eps):
    e = [mpf(v) for v in tab.eps]
    d = [mpf(v) for v in tab.deltas]
    x = mpf(eps)
    if x < e[0]:
        return min(mp.mpf(1), d[0] + mp.exp(x) * mp.expm1(e[0] - x))
    if x >= e[-1]:
        return d[-1]
    i = max(j for j in range(len(e)) if e[j] <= x)
    # (e^x − e^{ε_i})/(e^{ε_{i+1}} − e^{ε_i}), both differences as e^{ε_i} expm1(·)
    t = mp.expm1(x - e[i]) / mp.expm1(e[i + 1] - e[i])
    return d[i] - (d[i] - d[i + 1]) * t


@pytest.mark.parametrize("nodes", [
    ([0.0, 1.0, 2.0], [0.5, 0.2, 0.0]),
    ([0.3, 0.30000000000000004, 5.0, 60.0], [0.9, 0.4, 1e-300, 1e-320]),
    ([1e-300, 1e-10, 1.0, 700.0, 800.0], [1.0, 0.999, 0.3, 0.3, 0.0]),
    ([2.0], [0.25]),
])
def test_tabulated_lower(nodes):
    tab = TabulatedProfile(*nodes)
    pts = list(BASE_GRID) + [p for n in nodes[0] for p in around(n)]
    pts = np.unique(np.array(pts, dtype=float))
    lower = tab.log_delta_lower(pts)
    upper = tab.log_delta(pts)
    for e, lo, up in zip(pts, lower, upper, strict=True):
        exact = adaptive(lambda e=e: mlog(_tab_exact(tab, e)))
        check_bracket(lo, up, exact, tight=TIGHT if np.isfinite(e) and exact > -700 else None,
                      what=f"tab eps={e}")
    # at the nodes the lower value is the node value itself
    at_nodes = tab.log_delta_lower(tab.eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact_nodes = np.log(tab.deltas)
        assert np.all(at_nodes <= exact_nodes)
        fin = np.isfinite(exact_nodes)
        assert np.all(at_nodes[fin] >= exact_nodes[fin] - 1e-15 * (1 + np.abs(exact_nodes[fin])))
        assert np.all(at_nodes[~fin] == -np.inf)


# ---------------------------------------------------------------------------------------------
# amplification by subsampling (the theorem's formula, exact η and multiplicity law)
# ---------------------------------------------------------------------------------------------


def _chain_pmf(n, stages):
    """Exact law of the number of copies after the stages, from one copy among n items."""
    law = {1: mp.mpf(1)}
    size_in = n
    for kind, size in stages:
        new = {}
        for j, pj in law.items():
            for k in range(size + 1):
                if kind == "wor":
                    if k > j or size - k > size_in - j:
                        continue
                    pr = mp.binomial(j, k) * mp.binomial(size_in - j, size - k) \
                        / mp.binomial(size_in, size)
                else:
                    r = mp.mpf(j) / size_in
                    pr = mp.binomial(size, k) * r**k * (1 - r) ** (size - k)
                new[k] = new.get(k, 0) + pj * pr
        law = new
        size_in = size
    return law


def _scheme_law(scheme):
    """(pmf dict, η of the ε-map), exact."""
    if isinstance(scheme, Poisson):
        g = mpf(scheme.rate)
        return {0: 1 - g, 1: g}, g
    if isinstance(scheme, WithoutReplacement):
        g = mp.mpf(scheme.m) / scheme.n
        return {0: 1 - g, 1: g}, g
    if isinstance(scheme, WithReplacement):
        law = _chain_pmf(scheme.n, [("wr", scheme.m)])
        return law, 1 - law[0]
    law = _chain_pmf(scheme.n, scheme.stages)
    if isinstance(scheme, MustWW) and scheme.bound == "proved":
        # privamp's proved bound: η* = 1 − (1 − 1/n)^min(b, m) (docs/certification.md)
        return law, 1 - (1 - mpf(1) / scheme.n) ** min(scheme.b, scheme.m)
    if isinstance(scheme, MustOW | MustWO | MustWW):
        return law, 1 - law.get(0, 0)
    first = _chain_pmf(scheme.n, scheme.stages[:1])
    return law, 1 - first.get(0, 0)


def _deamp(eps_prime, eta):
    if mp.isinf(eps_prime):
        return mp.inf
    return mp.log1p(mp.expm1(eps_prime) / eta)


SCHEMES = [Poisson(1e-9), Poisson(0.01), Poisson(1.0), WithoutReplacement(10, 3),
           WithoutReplacement(7, 7), WithReplacement(10, 5), WithReplacement(3, 40),
           MustOW(12, 6, 5), MustWO(12, 6, 4), MustWW(12, 6, 5),
           StageChain(15, [("wr", 8), ("wor", 5), ("wr", 4)])]
AMP_BASES = [("gaussian", 1.0), ("laplace", 1.0), ("rr", 0.8), ("gaussian", 0.2)]


def _leaf(kind, param, relation):
    return {"gaussian": GaussianProfile, "laplace": LaplaceProfile,
            "rr": RandomizedResponseProfile}[kind](param, relation)


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@pytest.mark.parametrize("kind,param", AMP_BASES)
def test_amplified_lower(scheme, kind, param):
    relation = scheme.natural_relation
    base = _leaf(kind, param, scheme.base_relation(relation))
    prof = amplify(base, scheme, relation)
    if isinstance(scheme, Poisson) and relation.value == "substitute":
        pytest.skip("Theorem 14: see test_poisson_substitution_lower")
    law, eta = _scheme_law(scheme)
    groups = {int(k): g for k, g in zip(prof._ks, prof._groups, strict=True)}
    pts = [0.0, 1e-300, 1e-9, 1e-4, 0.01, 0.3, 1.0, 3.0, 30.0, math.inf]
    if kind == "rr":
        pts += around(float(np.log(4.0)))
    pts = np.unique(np.array(pts))
    lower = prof.log_delta_lower(pts)
    upper = prof.log_delta(pts)

    def exact_at(e):
        def f():
            base_eps = _deamp(mpf(e), eta)
            return mlog(mp.fsum(w * profile_delta(groups[k], base_eps)
                                for k, w in law.items() if k >= 1 and w > 0))
        return adaptive(f, digits=40)

    for e, lo, up in zip(pts, lower, upper, strict=True):
        exact = exact_at(e)
        tight = TIGHT if (kind != "rr" and np.isfinite(e) and exact > -600) else None
        check_bracket(lo, up, exact, tight=tight, what=f"{scheme!r} {kind} eps'={e}")


@pytest.mark.parametrize("rate", [1e-9, 0.05, 0.5, 1.0])
@pytest.mark.parametrize("kind,param", [("gaussian", 1.0), ("laplace", 2.0), ("rr", 0.7)])
def test_poisson_substitution_lower(rate, kind, param):
    n = 12
    base = _leaf(kind, param, "substitute")
    prof = amplify(base, Poisson(rate, n=n), "substitute")
    g = mpf(rate)

    def ext(e):  # the extended profile 1 − e^ε + e^ε δ(−ε) for ε < 0
        if e >= 0:
            return profile_delta(base, e)
        return 1 - mp.exp(e) + mp.exp(e) * profile_delta(base, -e)

    def formula(eps_prime):
        if g == 1:
            return profile_delta(base, eps_prime)
        if mp.isinf(eps_prime):
            eps, beta = mp.inf, g
        else:
            eps = _deamp(eps_prime, g)
            beta = mp.exp(eps_prime - eps)
        inner = mp.mpf(0)
        for k in range(1, n + 1):
            w = mp.binomial(n - 1, k - 1) * g ** (k - 1) * (1 - g) ** (n - k)
            if k < n:
                e_k = eps + mp.log(g / (1 - g) * (mp.mpf(n) / k - 1))
                inner += w * ext(e_k)
            else:
                inner += w
        return g * beta * profile_delta(base, eps) + g * (1 - beta) * inner

    pts = np.array([0.0, 1e-12, 1e-3, 0.1, 0.7, 2.0, 8.0, math.inf])
    lower = prof.log_delta_lower(pts)
    upper = prof.log_delta(pts)
    for e, lo, up in zip(pts, lower, upper, strict=True):
        exact = adaptive(lambda e=e: mlog(formula(mpf(e))), digits=40)
        tight = TIGHT if np.isfinite(e) and kind != "rr" else None
        check_bracket(lo, up, exact, tight=tight, what=f"thm14 {rate} {kind} eps'={e}")


@pytest.mark.parametrize("scheme", [Poisson(0.01), WithoutReplacement(5, 2),
                                    WithReplacement(10, 5), MustOW(12, 6, 5)], ids=repr)
@pytest.mark.parametrize("p", [0.0, 0.3, 0.8, 1.0])
def test_membership_lower_bound_lower(scheme, p):
    prof = membership_lower_bound(scheme, p)
    _, eta = _scheme_law(scheme)
    if not isinstance(scheme, Poisson | WithoutReplacement):
        law = _chain_pmf(scheme.n, scheme.stages if isinstance(scheme, StageChain)
                         else [("wr", scheme.m)])
        eta = 1 - law.get(0, 0)
    pts = np.unique(np.array([0.0, 1e-6, 0.1, 0.5, 2.0, math.inf] + around(0.0135)))
    lower = prof.log_delta_lower(pts)
    for e, lo in zip(pts, lower, strict=True):
        exact = adaptive(lambda e=e: mlog(eta * rr_delta(mpf(p), _deamp(mpf(e), eta))))
        # (the object's upper value is rounded to nearest, not up: compare the lower only)
        check_bracket(lo, math.inf, exact, what=f"membership {scheme!r} {p} eps'={e}")


# ---------------------------------------------------------------------------------------------
# mixing
# ---------------------------------------------------------------------------------------------

KERNEL = MarkovKernel([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])


def _kernel_curve(eps):
    """Exact (γ, ε)-Dobrushin curve of the normalised kernel."""
    raw = [[mpf(v) for v in row] for row in KERNEL._raw]
    rows = [[v / mp.fsum(r) for v in r] for r in raw]
    return max(hockey(a, b, eps) for a in rows for b in rows)


def _amplified_exact(condition, base, eps_prime):
    """Theorem 1 for one condition, min with δ_M, 0 beyond the object's pure ε."""
    g = mpf(condition.gamma)
    d_here = profile_delta(base, eps_prime)
    if isinstance(condition, Dobrushin):
        return min(d_here, g * d_here)
    if isinstance(condition, EpsDobrushin):
        if d_here == 0:
            return mp.mpf(0)
        et = mp.inf if mp.isinf(eps_prime) else mp.log1p(mp.expm1(eps_prime) / d_here)
        curve = g if et >= mpf(condition.eps) else 1
        return min(d_here, curve * d_here)
    eps = _deamp(eps_prime, g)
    d = profile_delta(base, eps)
    shrink = g + (1 - g) * (mp.mpf(0) if mp.isinf(eps) else mp.exp(-eps))
    if isinstance(condition, Doeblin):
        first = (1 - g) * (mp.mpf(1) if mp.isinf(eps) else -mp.expm1(-eps))
        return min(d_here, g * (first + shrink * d))
    return min(d_here, g * d * shrink)  # ultra-mixing


@pytest.mark.parametrize("condition", [Dobrushin(0.3), EpsDobrushin(0.4, 2.0), Doeblin(0.25),
                                       UltraMixing(0.6), Doeblin(1.0), UltraMixing(1e-9)],
                         ids=repr)
@pytest.mark.parametrize("base", [GaussianProfile(1.0), LaplaceProfile(1.5),
                                  RandomizedResponseProfile(0.8), ApproxDPProfile(1.0, 1e-3)],
                         ids=repr)
def test_mixing_lower(condition, base):
    prof = condition.amplify_profile(base)
    pts = np.array([0.0, 1e-9, 0.01, 0.2, 0.6, 1.0, 1.4, 3.0, 10.0, math.inf])
    lower = prof.log_delta_lower(pts)
    upper = prof.log_delta(pts)
    pure = prof.pure_epsilon
    for e, lo, up in zip(pts, lower, upper, strict=True):
        if e >= pure and math.isfinite(pure):
            exact = mp.ninf
        else:
            exact = adaptive(lambda e=e: mlog(_amplified_exact(condition, base, mpf(e))),
                             digits=40)
        check_bracket(lo, up, exact, what=f"{condition!r} {base!r} eps={e}")


def test_kernel_local_and_minimum_profiles_lower():
    local = KERNEL.local_dp_profile()
    pts = np.array([0.0, 0.1, 0.5, 0.9, 0.9162907318741551, 1.5, math.inf])
    for e, lo, up in zip(pts, local.log_delta_lower(pts), local.log_delta(pts), strict=True):
        exact = adaptive(lambda e=e: mlog(_kernel_curve(mpf(e))))
        check_bracket(lo, up, exact, tight=TIGHT if exact > -30 else None,
                      what=f"local eps={e}")
    base = GaussianProfile(0.8)
    best = KERNEL.amplify_profile(base)  # minimum over the four conditions
    conds = KERNEL.conditions()
    for e, lo, up in zip(pts, best.log_delta_lower(pts), best.log_delta(pts), strict=True):
        def f(e=e):
            vals = [_amplified_exact(c, base, mpf(e)) for key, c in conds.items()
                    if key != "eps_dobrushin"]
            d = profile_delta(base, mpf(e))
            et = mp.inf if (d == 0 or mp.isinf(mpf(e))) else mp.log1p(mp.expm1(mpf(e)) / d)
            vals.append(min(d, _kernel_curve(et) * d))
            return mlog(min(vals))
        check_bracket(lo, up, adaptive(f, digits=40), what=f"min eps={e}")


# ---------------------------------------------------------------------------------------------
# the PLD curve of a profile
# ---------------------------------------------------------------------------------------------


CURVE_PROFILES = [GaussianProfile(0.5), GaussianProfile(1e-3), LaplaceProfile(1.0),
                  RandomizedResponseProfile(0.75), ApproxDPProfile(1.0, 1e-5),
                  DiscretePairProfile([0.5, 0.5, 0.0], [0.25, 0.25, 0.5]), ZeroProfile()]


@pytest.mark.parametrize("prof", CURVE_PROFILES, ids=repr)
def test_profile_curve_lower_through_the_extension(prof):
    curve = ProfileCurve(prof)
    pts = np.unique(np.array([-math.inf, -50.0, -3.0, -math.log(3.0), -1.0, -1e-6, -1e-300,
                              0.0, 1e-300, 1e-6, 1.0, math.log(3.0), 3.0, 50.0, math.inf]
                             + [-p for p in around(math.log(3.0))] + around(math.log(3.0))))
    lower = curve.log_lower(pts)
    upper = curve.log_upper(pts)

    def ext(e):
        if e >= 0:
            return profile_delta(prof, e)
        if mp.isinf(e):
            return mp.mpf(1)
        return 1 - mp.exp(e) + mp.exp(e) * profile_delta(prof, -e)

    for e, lo, up in zip(pts, lower, upper, strict=True):
        exact = adaptive(lambda e=e: mlog(ext(mpf(e))))
        check_bracket(lo, up, exact, what=f"curve {prof!r} eps={e}")


@pytest.mark.parametrize("prof,eps", [
    (RandomizedResponseProfile(0.75), math.log(3.0) - 1e-15),
    (ApproxDPProfile(1.0, 1e-12), 1.0 - 1e-12),
    (ApproxDPProfile(1.0, 0.0), 1.0 - 1e-9),
    (TabulatedProfile([0.0, 1.0], [0.5, 0.0]), 1.0 - 1e-9),
], ids=repr)
def test_old_slack_assumption_was_violated_near_kinks(prof, eps):
    """The former lower value, upper + log1p(−1e-11), is above the exact value where an upper
    margin is large relative to δ (kinks: randomized response's ε₀, whose rounding is ~1e-16,
    the (ε₀, δ₀) profile's 16 ulp·cond margin, a chord's 4 ulp·δ_i margin next to a node with
    δ = 0); the certified lower value is below it."""
    curve = ProfileCurve(prof)
    pts = np.array([eps])
    old = float(curve.log_upper(pts)[0]) + math.log1p(-1e-11)
    new = float(curve.log_lower(pts)[0])
    exact = exact_log(prof, eps) if not isinstance(prof, TabulatedProfile) else \
        adaptive(lambda: mlog(_tab_exact(prof, eps)))
    assert mp.mpf(old) > exact  # the assumption failed
    assert mp.mpf(new) <= exact


@pytest.mark.parametrize("prof", [GaussianProfile(1.0), LaplaceProfile(1.0),
                                  RandomizedResponseProfile(0.75)], ids=repr)
def test_lower_discretisation_stays_dominated(prof):
    """The lower PLD of a profile curve is a dominated pair: its P-masses sum to at most 1 and
    its hockey-stick curve stays below the upper curve. With tight lower values the default
    secant slope bounds (rounding ~ulp/τ, formerly hidden by the 1e-11 value gap) let tangent
    lines cross f: masses summed to 1 + 1.8e-12 for the Gaussian with θ = 1."""
    from privamp.pld.discretize import lower_masses

    curve = ProfileCurve(prof)
    h, lo, hi = 1e-3, -8000, 8000
    m, p_inf = lower_masses(curve, h, lo, hi)
    assert m.sum() + p_inf <= 1.0
    losses = np.arange(lo, hi + 1) * h
    q = m * np.exp(-losses)
    es = np.concatenate([np.linspace(lo * h, hi * h, 1601), np.linspace(-0.05, 0.05, 401)])
    f_up = np.exp(curve.log_upper(es))
    for e, f in zip(es, f_up, strict=True):
        d = float(np.sum(np.maximum(m - math.exp(e) * q, 0.0))) + p_inf
        assert d <= f * (1 + 1e-15) + 1e-300, (e, d, f)
