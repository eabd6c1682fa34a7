"""Random allocation (balls-in-bins, k-out-of-t): the certified pair of a round and its accounting.

References: the issue's table (a published tool's [lower, upper] ranges, Feldman & Shenfeld's
random-allocation accounting); the exact curves for t = 2 by numerical integration with mpmath;
exact moments E[R^λ] of the mean likelihood ratio (multinomial expansion: an independent
computation) for the convex-order and Rényi cross-checks; the sampler's law.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from privamp import Accountant, GaussianMechanism, Poisson, RandomAllocation
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.pld.allocation import (
    allocation_blocks,
    gaussian_allocation_law,
    random_allocation_curves,
)

# (σ, t, k, epochs, δ, published lower, published upper, Poisson at q = k/t)
TABLE = [
    (2.0, 100, 10, 1, 1e-6, 2.3803, 2.4661, 2.6750),
    (1.0, 1000, 5, 1, 1e-8, 1.3097, 1.3630, 1.4073),
    (1.0, 1000, 1, 1, 1e-5, 0.1364, 0.1422, 0.1490),
    (1.0, 100, 1, 10, 1e-5, 1.6644, 1.7398, 1.8282),
]


@pytest.mark.parametrize("row", TABLE, ids=[f"s{r[0]}-t{r[1]}-k{r[2]}-E{r[3]}" for r in TABLE])
def test_reference_table(row):
    sigma, t, k, epochs, delta, lo, hi, poisson = row
    acc = Accountant().add(GaussianMechanism(sigma), t * epochs, scheme=RandomAllocation(t, k))
    b = acc.epsilon(delta)
    assert lo <= b.lower <= b.upper <= hi
    assert b.width <= 1e-3 * b.upper
    assert b.upper < poisson          # better than Poisson at the same rate (these rows)
    assert acc.lower_end_of == ("mechanism" if k == 1 else "bound")


# ---- the exact curves for t = 2 ---------------------------------------------------------------

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 30


def _call(strike, theta):
    """E[(Y − K)₊] for Y = exp(θZ − θ²/2) (a lognormal of mean 1)."""
    if strike <= 0:
        return 1 - strike
    d2 = (-mp.log(strike) - theta ** 2 / 2) / theta
    return mp.ncdf(d2 + theta) - strike * mp.ncdf(d2)


def _exact_t2(eps, theta, orientation):
    alpha = mp.e ** eps
    y = lambda z: mp.e ** (theta * z - theta ** 2 / 2)  # noqa: E731
    # the integrand has a kink where Y1 alone reaches the strike: a breakpoint of the quadrature
    strike = 2 * alpha if orientation == "remove" else 2 / alpha
    kink = (mp.log(strike) + theta ** 2 / 2) / theta
    points = sorted({-mp.inf, mp.mpf(-5), mp.mpf(0), mp.mpf(5), kink, mp.inf})
    if orientation == "remove":   # E[((Y1 + Y2)/2 − α)₊]
        f = lambda z: mp.npdf(z) * _call(2 * alpha - y(z), theta)  # noqa: E731
        return mp.quad(f, points) / 2
    # E[(1 − α(Y1 + Y2)/2)₊] = (α/2) E[(2/α − Y1 − Y2)₊]; put = K − 1 + call
    def put(strike):
        return mp.mpf(0) if strike <= 0 else strike - 1 + _call(strike, theta)
    f = lambda z: mp.npdf(z) * put(2 / alpha - y(z))  # noqa: E731
    return alpha / 2 * mp.quad(f, points)


@pytest.mark.parametrize("theta", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("orientation", ["remove", "add"])
def test_two_steps_bracket_the_exact_curve(theta, orientation):
    curve = random_allocation_curves(theta, 2)[orientation]
    for eps in (-2.0, -0.3, 0.0, 0.3, 1.0, 3.0):
        exact = float(_exact_t2(eps, theta, orientation))
        lo = float(np.exp(curve.log_lower(np.array([eps]))[0]))
        up = float(np.exp(curve.log_upper(np.array([eps]))[0]))
        assert lo <= exact <= up, (eps, lo, exact, up)
        assert up - lo <= 1e-2 * exact


# ---- exact moments: convex order and the Rényi cross-check ----------------------------------


def _exact_moment(theta: float, t: int, order: int) -> mp.mpf:
    """E[R^λ] for R = (1/t) Σ Y_i: λ! [s^λ] F(s)^t with F(s) = Σ_j E[Y^j] s^j / j! and
    E[Y^j] = exp(θ² j(j − 1)/2) (the multinomial theorem for independent terms)."""
    coeffs = [mp.e ** (theta ** 2 * j * (j - 1) / 2) / mp.factorial(j) for j in range(order + 1)]
    power = [mp.mpf(1)] + [mp.mpf(0)] * order
    for _ in range(t):
        power = [sum(power[i] * coeffs[j - i] for i in range(j + 1)) for j in range(order + 1)]
    return mp.factorial(order) * power[order] / mp.mpf(t) ** order


@pytest.mark.parametrize(("theta", "t"), [(0.5, 1), (0.5, 7), (1.0, 3), (1.0, 64), (2.0, 10),
                                          (0.25, 1000)])
def test_moments_are_in_convex_order(theta, t):
    law = gaussian_allocation_law(theta, t)
    # the mean is kept: 1 on the upper side (mass at ∞ counted), at most 1 below
    assert law.moment(1) + law.p_inf == pytest.approx(1.0, abs=1e-12)
    assert law.moment(1, upper=False) <= 1 + 1e-12
    for order in (2, 3, 4):
        exact = float(_exact_moment(theta, t, order))
        assert law.moment(order, upper=False) <= exact * (1 + 1e-12)
        # the upper law's finite part misses only the mass it sent to ∞ (P-tail < 1e-30)
        assert law.moment(order) >= exact * (1 - 1e-12)


@pytest.mark.parametrize(("theta", "t"), [(1.0, 3), (0.5, 20), (2.0, 4)])
def test_remove_curve_is_below_every_renyi_bound(theta, t):
    """E[(R − α)₊] ≤ E[R^λ] ((λ−1)/λ)^λ / ((λ−1) α^{λ−1}) for every λ > 1 (the Rényi bound of
    the remove direction, from exact integer moments): the certified lower values never exceed
    it, and the upper values approach the best of them in the far tail."""
    curve = random_allocation_curves(theta, t)["remove"]
    eps = np.linspace(0.05, 4.0, 25)
    low = np.exp(curve.log_lower(eps))
    best = np.full(eps.size, np.inf)
    for order in range(2, 9):
        m = float(_exact_moment(theta, t, order))
        c = ((order - 1) / order) ** order / (order - 1)
        best = np.minimum(best, m * c * np.exp(-(order - 1) * eps))
    assert np.all(low <= best * (1 + 1e-9))


# ---- accounting -------------------------------------------------------------------------------


def test_k_equal_t_is_the_plain_composition():
    mech = GaussianMechanism(1.5)
    alloc = Accountant().add(mech, 6, scheme=RandomAllocation(3, 3)).epsilon(1e-6)
    plain = Accountant().add(mech, 6).epsilon(1e-6)
    assert alloc.lower <= plain.upper and plain.lower <= alloc.upper


def test_a_partial_round_lies_between_whole_rounds():
    mech = GaussianMechanism(1.0)
    one, part, two = (Accountant().add(mech, s, scheme=RandomAllocation(100)).epsilon(1e-5)
                      for s in (100, 150, 200))
    assert one.upper < part.lower and part.upper < two.lower


@pytest.mark.parametrize("theta", [0.5, 1.0, 2.0])
def test_a_partial_round_is_exact(theta):
    """One step run of a 1-out-of-2 round: R = (Y + 1)/2, so E[(R − α)₊] = C(2α − 1)/2 and
    E[(1 − αR)₊] = (α/2) E[(2/α − 1 − Y)₊] (lognormal calls and puts)."""
    curves = random_allocation_curves(theta, 2, run=1)
    for eps in (-1.0, 0.0, 0.5, 2.0):
        a = mp.e ** eps
        k = 2 / a - 1
        exact = {"remove": _call(2 * a - 1, theta) / 2,
                 "add": a / 2 * (mp.mpf(0) if k <= 0 else k - 1 + _call(k, theta))}
        for o, curve in curves.items():
            lo = float(np.exp(curve.log_lower(np.array([eps]))[0]))
            up = float(np.exp(curve.log_upper(np.array([eps]))[0]))
            assert lo <= float(exact[o]) <= up, (o, eps)


def test_epsilon_falls_with_t_and_grows_with_rounds():
    mech = GaussianMechanism(1.0)
    eps = [Accountant().add(mech, t, scheme=RandomAllocation(t)).epsilon(1e-5).upper
           for t in (10, 100, 1000)]
    assert eps[0] > eps[1] > eps[2]
    more = Accountant().add(mech, 300, scheme=RandomAllocation(100)).epsilon(1e-5)
    assert more.lower > eps[1]


def test_stratified_blocks():
    assert allocation_blocks(100, 10) == [(10, 10)]
    assert allocation_blocks(10, 3) == [(3, 2), (4, 1)]
    assert sum(b * c for b, c in allocation_blocks(1000, 7)) == 1000
    assert allocation_blocks(5, 1) == [(5, 1)]


def test_other_backends_and_mechanisms_are_refused():
    from privamp import LaplaceMechanism

    for backend in ("rdp", "fourier"):
        with pytest.raises(UnsupportedCombinationError, match="'pld' backend only"):
            Accountant(backend).add(GaussianMechanism(1.0), 10, scheme=RandomAllocation(10))
    from privamp.sampling import Shuffle

    with pytest.raises(UnsupportedCombinationError, match="Gaussian"):
        Accountant().add(LaplaceMechanism(1.0), 10, scheme=Shuffle(100, 10))
    with pytest.raises(UnsupportedCombinationError, match="add-remove"):
        RandomAllocation(10).resolve("substitute")
    with pytest.raises(UnsupportedCombinationError, match="not a per-step"):
        RandomAllocation(10).multiplicity()


@pytest.mark.parametrize(("kwargs", "name"), [({"t": 0}, "t"), ({"t": 5, "k": 6}, "k"),
                                               ({"t": 5, "k": 0}, "k"), ({"t": 1.5}, "t"),
                                               ({"t": float("nan")}, "t")])
def test_bad_parameters(kwargs, name):
    with pytest.raises(InvalidParameterError) as info:
        RandomAllocation(**kwargs)
    assert info.value.parameter == name


# ---- the sampler ----------------------------------------------------------------------------


@pytest.mark.parametrize(("t", "k"), [(1, 1), (10, 1), (10, 3), (7, 7)])
def test_batches_use_every_record_k_times(t, k):
    n = 500
    batches = RandomAllocation(t, k).batches(n, rng=np.random.default_rng(3))
    assert len(batches) == t
    counts = np.bincount(np.concatenate(batches), minlength=n)
    assert np.all(counts == k)
    for b in batches:
        assert np.unique(b).size == b.size   # distinct records within a batch


def test_batch_sizes_follow_the_allocation_law():
    """Each step's batch size is Binomial(n, k/t): the mean over many rounds is n k / t."""
    rng = np.random.default_rng(7)
    scheme = RandomAllocation(20, 4)
    sizes = np.array([[b.size for b in scheme.batches(200, rng)] for _ in range(200)])
    assert abs(sizes.mean() - 200 * 4 / 20) < 0.5
    assert abs(sizes.var() - 200 * 0.2 * 0.8) < 6


def test_the_sampler_refuses_per_step_draws():
    with pytest.raises(UnsupportedCombinationError, match="batches"):
        RandomAllocation(10).sample(100, rng=0)


def test_poisson_reference_column():
    """The issue's Poisson column is what privamp's Poisson accounting gives (same steps)."""
    for sigma, t, k, epochs, delta, *_, poisson in TABLE[2:]:
        b = Accountant().add(GaussianMechanism(sigma), t * epochs,
                             scheme=Poisson(k / t)).epsilon(delta)
        assert math.isclose(b.upper, poisson, rel_tol=1e-3)


# ---- any mechanism, from its dominating pair: brute force on finite outputs ------------------


@pytest.mark.parametrize("p", [0.6, 0.75, 0.95])
@pytest.mark.parametrize("t", [1, 2, 3, 5])
def test_randomized_response_allocation_by_enumeration(p, t):
    """A record answers by randomized response in one of t steps; the others answer nothing
    informative. The round's likelihood ratio is the mean of t independent ratios Y ∈ {p/q,
    q/p} — a finite law, enumerated exactly."""
    import functools
    import itertools

    from privamp.pld.allocation import discrete_allocation_law

    q = 1 - p
    values = [(mp.mpf(p) / q, mp.mpf(q)), (mp.mpf(q) / p, mp.mpf(p))]   # (Y, Q-probability)
    curves = random_allocation_curves(
        functools.partial(discrete_allocation_law, (p, q), (q, p)), t)
    for eps in (-1.0, 0.0, 0.2, 0.7, 1.5):
        a = mp.e ** eps
        exact = {"remove": mp.mpf(0), "add": mp.mpf(0)}
        for combo in itertools.product(values, repeat=t):
            r = sum(y for y, _ in combo) / t
            w = mp.fprod(pr for _, pr in combo)
            exact["remove"] += w * max(r - a, 0)
            exact["add"] += w * max(1 - a * r, 0)
        for o, curve in curves.items():
            lo = float(np.exp(curve.log_lower(np.array([eps]))[0]))
            up = float(np.exp(curve.log_upper(np.array([eps]))[0]))
            assert lo <= float(exact[o]) * (1 + 1e-12) and float(exact[o]) <= up * (1 + 1e-12)
            assert up - lo <= 0.02 * float(exact[o]) + 1e-12, (o, eps, lo, float(exact[o]), up)


def test_laplace_is_accounted_from_its_pair():
    from privamp import LaplaceMechanism

    acc = Accountant().add(LaplaceMechanism(1.0), 1000, scheme=RandomAllocation(100))
    b = acc.epsilon(1e-5)
    assert b.width <= 1e-3 * b.upper
    poisson = Accountant().add(LaplaceMechanism(1.0), 1000, scheme=Poisson(0.01)).epsilon(1e-5)
    assert b.upper < poisson.upper * 1.1   # comparable to Poisson at the same rate


@pytest.mark.parametrize("theta", [0.1, 1.0, 3.0])
def test_laplace_step_law_brackets_the_laplace_profile(theta):
    """One step (t = 1) of the Laplace law: the remove curve is the Laplace mechanism's own
    profile, δ(ε) = 1 − e^{(ε − θ)/2} for 0 ≤ ε ≤ θ (Δ/b = θ)."""
    from privamp.pld.allocation import AllocationCurve, laplace_allocation_law

    curve = AllocationCurve(laplace_allocation_law(theta, 1), "remove")
    eps = np.linspace(0.0, theta, 7)
    exact = -np.expm1((eps - theta) / 2)
    lo, up = np.exp(curve.log_lower(eps)), np.exp(curve.log_upper(eps))
    assert np.all(lo <= exact * (1 + 1e-12)) and np.all(exact <= up * (1 + 1e-12))
    assert np.all(up - lo <= 1e-2 * exact + 1e-15)


@pytest.mark.parametrize("t", [1, 2, 3])
def test_an_asymmetric_pair_takes_the_worse_order(t):
    """A finite pair that is not symmetric: either law may hold the record, so the curves are
    the maximum over both orders — checked against both orders enumerated exactly."""
    import itertools

    from privamp import DiscretePairMechanism
    from privamp.sampling.rounds import _step_law

    p, q = (0.6, 0.3, 0.1), (0.2, 0.3, 0.5)
    mech = DiscretePairMechanism(p, q)
    assert not mech.exact_pair
    curves = random_allocation_curves(_step_law(mech), t)

    def exact(first, second, eps, orientation):
        a = mp.e ** eps
        atoms = [(mp.mpf(x) / y, mp.mpf(y)) for x, y in zip(first, second, strict=True)]
        total = mp.mpf(0)
        for combo in itertools.product(atoms, repeat=t):
            r = sum(y for y, _ in combo) / t
            w = mp.fprod(pr for _, pr in combo)
            total += w * (max(r - a, 0) if orientation == "remove" else max(1 - a * r, 0))
        return float(total)

    for eps in (-0.5, 0.0, 0.4, 1.2):
        for o, curve in curves.items():
            worse = max(exact(p, q, eps, o), exact(q, p, eps, o))
            lo = float(np.exp(curve.log_lower(np.array([eps]))[0]))
            up = float(np.exp(curve.log_upper(np.array([eps]))[0]))
            assert lo <= worse * (1 + 1e-12) and worse <= up * (1 + 1e-12), (o, eps)
    acc = Accountant().add(mech, 3 * t, scheme=RandomAllocation(t))
    b = acc.epsilon(1e-3)
    assert b.lower <= b.upper and acc.lower_end_of == "bound"
