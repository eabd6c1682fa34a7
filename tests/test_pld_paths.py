"""The PLD engine answers where the memory bound used to refuse (issue 17).

Every case checks the certified bracket against an independent reference:

* q = 1: the T-fold Gaussian mechanism is the Gaussian mechanism with μ = θ√T, whose profile
  ``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` is evaluated with mpmath (50 digits);
* q < 1: a brute-force composition written from the definition, independent of privamp's
  discretisation: the Poisson-subsampled Gaussian's pairs ``((1 − q)N(0, σ²) + qN(1, σ²),
  N(0, σ²))`` (remove) and ``(N(0, σ²), (1 − q)N(0, σ²) + qN(1, σ²))`` (add), the line cut
  into fine bins whose losses are rounded up (or down) to a lattice, composed by convolution;
  ``δ_T(ε) = E_{P^T}[(1 − e^{ε − S})_+]`` is monotone in every loss, so rounding the losses up
  (down) gives an upper (lower) bound of each orientation's δ, and the composition's δ is the
  larger orientation's.

The memory bound (:data:`privamp.pld.distribution.MAX_FFT`, the one setting every check reads)
is lowered to a few thousand points so that the coarsening paths run at test scale.
"""

from __future__ import annotations

import itertools
import math
import re
import tracemalloc
import warnings

import mpmath
import numpy as np
import pytest
from scipy.special import ndtr

from cli_helpers import run_error, run_json
from privamp.errors import AccuracyWarning, InvalidParameterError
from privamp.pld import PoissonGaussianCurve, distribution
from privamp.pld.engine import PldEvent, pld_delta, pld_epsilon

# ------------------------------------------------------------------------------------------
# independent references
# ------------------------------------------------------------------------------------------


def gaussian_dp_delta(mu: float, eps: float) -> float:
    """δ(ε) of the Gaussian mechanism with μ = sensitivity / σ, in 50-digit arithmetic."""
    with mpmath.workdps(50):
        mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
        return float(mpmath.ncdf(-eps / mu + mu / 2)
                     - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2))


def _orientation_lattice(theta: float, q: float, orientation: str, up: bool, h: float,
                         bins: int = 40_000):
    """(first lattice index, masses, mass at +∞) of one step's loss, rounded up or down."""
    sigma = 1.0 / theta
    k = 12.0 * sigma
    edges = np.linspace(-k, 1.0 + k, bins + 1)
    centre = 0.0 if orientation == "add" else None  # the add pair draws x from N(0, σ²)

    def loss_remove(x):  # log(1 − q + q e^{(2x − 1)/(2σ²)}), increasing in x
        z = (2 * x - 1) / (2 * sigma**2)
        return np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + z)

    if orientation == "remove":
        cdf = (1 - q) * ndtr(edges / sigma) + q * ndtr((edges - 1) / sigma)
    else:
        cdf = ndtr((edges - centre) / sigma)
    mass = np.diff(cdf)
    lo_tail, hi_tail = cdf[0], 1.0 - cdf[-1]
    lr = loss_remove(edges)
    if orientation == "remove":
        loss = lr[1:] if up else lr[:-1]
        below = lr[0] if up else (math.log1p(-q) if q < 1 else -np.inf)  # x < −k
        above = np.inf if up else lr[-1]  # x > 1 + k
    else:
        la = -lr
        loss = la[:-1] if up else la[1:]
        below = (-math.log1p(-q) if q < 1 else np.inf) if up else la[0]
        above = la[-1] if up else -np.inf
    losses = np.concatenate([loss, [below, above]])
    masses = np.concatenate([mass, [lo_tail, hi_tail]])
    p_inf = float(np.sum(masses[np.isposinf(losses)]))
    finite = np.isfinite(losses) & (masses > 0)
    idx = (np.ceil(losses[finite] / h) if up else np.floor(losses[finite] / h)).astype(np.int64)
    i0 = int(idx.min())
    hist = np.bincount(idx - i0, weights=masses[finite])
    return i0, hist, p_inf


def _compose_lattice(i0, hist, p_inf, steps):
    n = steps * (hist.size - 1) + 1
    size = 1 << (n - 1).bit_length()
    spec = np.fft.rfft(hist, size) ** steps
    out = np.maximum(np.fft.irfft(spec, size)[:n], 0.0)
    return steps * i0, out, 1.0 - (1.0 - p_inf) ** steps


def brute_delta(theta: float, q: float, steps: int, eps: np.ndarray, up: bool,
                h: float = 2e-3) -> np.ndarray:
    """Upper (``up``) or lower bound on δ(ε) of the T-fold Poisson-subsampled Gaussian, the
    larger of the two orientations (module doc). The FFT convolution's rounding (~1e-16 of
    the largest mass) is covered by the tolerances of the checks."""
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    best = np.zeros(eps.size)
    for orientation in ("remove", "add"):
        i0, hist, p_inf = _compose_lattice(*_orientation_lattice(theta, q, orientation, up, h),
                                           steps)
        losses = (i0 + np.arange(hist.size)) * h
        vals = np.array([float(np.sum(hist * -np.expm1(np.minimum(e - losses, 0.0))))
                         for e in eps]) + p_inf
        best = np.maximum(best, vals)
    return best


def reference(theta: float, q: float, steps: int):
    """(δ lower bound, δ upper bound) as functions of ε arrays: exact for q = 1."""
    if q == 1.0:
        mu = theta * math.sqrt(steps)

        def exact(e):
            return np.array([gaussian_dp_delta(mu, float(x)) for x in np.atleast_1d(e)])

        return exact, exact
    return (lambda e: brute_delta(theta, q, steps, e, up=False),
            lambda e: brute_delta(theta, q, steps, e, up=True))


def check_epsilon_bracket(res, theta, q, steps, delta):
    lo_ref, up_ref = reference(theta, q, steps)
    upper, lower = res.bracket.upper, res.bracket.lower
    # the certified upper end: the exact δ there is ≤ δ (a lower bound on it above δ refutes it)
    assert lo_ref(upper)[0] <= delta * (1 + 1e-6) + 1e-13, (upper, lo_ref(upper)[0], delta)
    # the certified lower end: the exact δ there is ≥ δ
    if lower is not None and lower > 0:
        assert up_ref(lower)[0] >= delta * (1 - 1e-6) - 1e-13, (lower, up_ref(lower)[0], delta)


def events(theta, q, steps):
    return [PldEvent({"remove": PoissonGaussianCurve(theta, q, "remove"),
                      "add": PoissonGaussianCurve(theta, q, "add")}, steps)]


# ------------------------------------------------------------------------------------------
# cases: the rows of the issue at test scale, boundaries included (T = 1, q = 1, tiny δ)
# ------------------------------------------------------------------------------------------

SIGMAS = (0.7, 1.5)
RATES = (0.02, 0.3, 1.0)
STEPS = (1, 6)
DELTAS = (1e-5, 1e-12)
CASES = [c for c in itertools.product(SIGMAS, RATES, STEPS, DELTAS)
         # the brute force needs δ well above its rounding: tiny δ only with the exact reference
         if not (c[3] < 1e-9 and c[1] < 1.0)]


@pytest.fixture
def small_memory(monkeypatch):
    """A memory bound of 2^12 points: the default accuracy needs more in most cases below."""
    monkeypatch.setattr(distribution, "MAX_FFT", 2**12)
    return distribution.MAX_FFT


@pytest.mark.parametrize(("sigma", "rate", "steps", "delta"), CASES)
def test_epsilon_within_memory_bound_is_certified_and_says_its_width(
        sigma, rate, steps, delta, small_memory):
    """Where the default grids exceed the memory bound the engine answers on the finest grid
    that fits — a valid bracket, no transform beyond the bound — and, when that bracket misses
    the target width, says how wide it is (warning and result)."""
    theta = 1.0 / sigma
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = pld_epsilon(events(theta, rate, steps), delta)
    check_epsilon_bracket(res, theta, rate, steps, delta)
    assert all(size <= small_memory for size in res.fft_sizes.values())
    notes = [str(w.message) for w in caught if issubclass(w.category, AccuracyWarning)]
    if res.target_width is not None and res.bracket.width > res.target_width * (1 + 1e-9):
        assert res.accuracy_note and notes == [res.accuracy_note]
        assert f"{res.bracket.upper:.6g}" in res.accuracy_note and "wide" in res.accuracy_note
    else:
        assert not notes and not res.accuracy_note


@pytest.mark.parametrize(("sigma", "rate", "steps"),
                         [(0.7, 0.3, 6), (1.5, 0.02, 6), (1.5, 1.0, 6), (0.7, 1.0, 1)])
def test_delta_within_memory_bound_is_certified(sigma, rate, steps, small_memory):
    theta = 1.0 / sigma
    lo_ref, up_ref = reference(theta, rate, steps)
    for eps in (0.5, 2.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AccuracyWarning)
            res = pld_delta(events(theta, rate, steps), eps)
        assert lo_ref(eps)[0] <= res.bracket.upper * (1 + 1e-9) + 1e-13
        assert res.bracket.lower <= up_ref(eps)[0] * (1 + 1e-9) + 1e-13
        assert all(size <= small_memory for size in res.fft_sizes.values())


def test_large_composition_answers_by_default(small_memory):
    """The T = 10^7 row at test scale: 10^4 steps at σ = 1, q = 0.01 need far more than 2^12
    points at the default accuracy; the engine answers on a coarser grid, valid against the
    composition of the same pair on the default memory bound (a finer, independent grid)."""
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        coarse = pld_epsilon(events(1.0, 0.01, 10_000), 1e-5)
    distribution.MAX_FFT = 2**23
    fine = pld_epsilon(events(1.0, 0.01, 10_000), 1e-5)
    # two certified brackets of the same number intersect
    assert coarse.bracket.lower <= fine.bracket.upper
    assert fine.bracket.lower <= coarse.bracket.upper
    assert coarse.grid_upper >= fine.grid_upper
    assert max(coarse.fft_sizes.values()) <= 2**12


def test_unreachable_eps_error_is_answered_with_its_width(small_memory):
    """An eps_error finer than the memory bound allows: the finest grid that fits, and the
    width said (it used to be refused with advice that did not work when followed)."""
    with pytest.warns(AccuracyWarning, match="memory bound") as caught:
        res = pld_epsilon(events(1.0, 0.3, 6), 1e-5, eps_error=1e-13)
    check_epsilon_bracket(res, 1.0, 0.3, 6, 1e-5)
    assert res.target_width == 1e-13 and res.accuracy_note == str(caught[0].message)
    assert f"{res.bracket.upper - res.bracket.lower:.3g} wide" in res.accuracy_note


def _advice(message: str) -> float:
    found = re.search(r"grid.step.*at least ([0-9.eE+-]+)", message)
    assert found, message
    return float(found.group(1))


@pytest.mark.parametrize(("sigma", "rate", "steps"), [(1.0, 0.3, 50), (0.7, 0.02, 400)])
def test_grid_step_refusal_advice_works_when_followed(sigma, rate, steps, small_memory):
    """A fixed grid_step too fine for the memory bound is refused naming the spacing that fits;
    that spacing, passed back, answers (and is certified)."""
    ev = events(1.0 / sigma, rate, steps)
    for tiny in (1e-7, 1e-4):  # refused at the step grids, and at the composed window
        with pytest.raises(InvalidParameterError, match="grid_step") as info:
            pld_epsilon(ev, 1e-5, grid_step=tiny)
        res = pld_epsilon(ev, 1e-5, grid_step=_advice(str(info.value)))
        if steps <= 6:
            check_epsilon_bracket(res, 1.0 / sigma, rate, steps, 1e-5)
        assert res.bracket.upper >= res.bracket.lower


def test_refusal_comes_before_the_allocation(small_memory):
    """A grid_step whose composed window needs about 50× the memory bound is refused having
    allocated a small fraction of it (tracemalloc peak)."""
    ev = events(1.0, 0.3, 50)
    with pytest.raises(InvalidParameterError) as info:
        pld_epsilon(ev, 1e-5, grid_step=1e-4)
    need = _advice(str(info.value))
    assert need > 20 * 1e-4  # the refused window was over 20× the bound
    tracemalloc.start()
    try:
        with pytest.raises(InvalidParameterError):
            pld_epsilon(ev, 1e-5, grid_step=1e-4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the transform alone would be ≥ 20 × 2^12 complex doubles (1.3 MB) in several arrays
    assert peak < 20 * small_memory * 16


def test_cli_refusal_advice_works(small_memory, capsys):
    argv = ["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling", "poisson",
            "--rate", "0.3", "--steps", "50", "--delta", "1e-5"]
    line = run_error([*argv, "--grid-step", "1e-4"], capsys)
    assert line.startswith("privamp: error:") and "grid" in line
    out = run_json([*argv, "--grid-step", repr(_advice(line))], capsys)
    assert out["epsilon_lower"] <= out["epsilon"] < math.inf


def test_cli_says_the_width_when_the_memory_bound_rules(small_memory, capsys):
    out = run_json(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling",
                    "poisson", "--rate", "0.01", "--steps", "10000", "--delta", "1e-5"], capsys)
    assert out["epsilon_lower"] <= out["epsilon"] < math.inf
    rel = (out["epsilon"] - out["epsilon_lower"]) / out["epsilon"]
    if rel > 1e-3:
        assert any("wide" in w for w in out["warnings"])


def test_brute_force_reference_brackets_the_exact_gaussian():
    """The brute force itself, at q = 1 where the exact answer is known: its bounds enclose it."""
    theta, steps = 1.0 / 0.7, 6
    eps = np.array([0.5, 2.0, 4.0])
    lo = brute_delta(theta, 1.0, steps, eps, up=False)
    hi = brute_delta(theta, 1.0, steps, eps, up=True)
    exact = np.array([gaussian_dp_delta(theta * math.sqrt(steps), e) for e in eps])
    assert np.all(lo <= exact * (1 + 1e-9)) and np.all(exact <= hi * (1 + 1e-9))
    assert np.all(hi - lo < 0.05 * exact)


@pytest.mark.parametrize("collapses", [1, 2])
def test_collapsed_lower_side_is_refined_by_three(collapses):
    """A lower side that collapses (its value at most half the upper end) is refined by a factor
    3 and a repeated collapse is not taken for "no progress"; once it resolves the loss, the
    convergence model takes over (and the best value found is returned)."""
    from privamp.pld.grids import _refine_lower

    calls = []

    def side(h):
        calls.append(h)
        value = 0.0 if len(calls) <= collapses else 10.0 - 1e-3
        return value, 1000, h

    value, used = _refine_lower(side, 1e-3, 10.0, 0.01, False, {}, "lower", [],
                                lambda h: 1.0 / h)
    assert calls[: collapses + 1] == pytest.approx([1e-3 / 3 ** i for i in range(collapses + 1)])
    assert value == 10.0 - 1e-3 and used == calls[collapses]


@pytest.mark.parametrize(("width", "factor"), [(1.01, 0.7), (1.25, 0.7), (1.3, 0.5),
                                               (3.0, (0.8 / 3.0) ** (2 / 3)), (1e6, 0.1)])
def test_refinement_factor_by_miss(width, factor):
    """A near miss (within 25 %) takes 0.7 h, enough even where the width shrinks only like h;
    a larger miss follows the h^1.5 model, at least halving and at most a factor 10."""
    from privamp.pld.grids import _refined

    assert _refined(2e-3, width * 0.01, 0.01) == pytest.approx(2e-3 * factor)


def test_near_miss_is_refined_once():
    """A lower side converging like h (the slowest the engine allows for) that misses its
    target by 20 % meets it on the next grid (a halving would compose twice the points)."""
    from privamp.pld.grids import _refine_lower

    calls = []

    def side(h):
        calls.append(h)
        return 10.0 - 0.012 * h / 1e-3, 1000, h  # width 1.2 × target at h = 1e-3

    value, used = _refine_lower(side, 1e-3, 10.0, 0.01, False, {}, "lower", [],
                                lambda h: 1.0 / h)
    assert calls == pytest.approx([1e-3, 0.7e-3])
    assert 10.0 - value <= 0.01


@pytest.mark.parametrize(("q", "steps", "delta"), [(1e-6, 10, 1e-5), (1e-7, 1000, 1e-3),
                                                   (1e-4, 1, 1e-4), (1e-3, 5, 1e-2)])
def test_zero_epsilon_when_the_total_variation_is_below_delta(q, steps, delta):
    """ε = 0 is certified, at once, when the union bound on the composed total variation
    (steps × TV of one step, TV = δ(0)) is at most δ; checked against the exact TV of one
    Poisson-subsampled Gaussian step (q · (2Φ(θ/2) − 1), θ = 1/σ) in mpmath."""
    from privamp import Accountant, GaussianMechanism
    from privamp.sampling import Poisson

    theta = 1.0 / 0.5
    with mpmath.workdps(40):
        tv = q * (2 * mpmath.ncdf(mpmath.mpf(theta) / 2) - 1)
    b = Accountant().add(GaussianMechanism(0.5), steps, scheme=Poisson(q)).epsilon(delta)
    if steps * tv <= delta * (1 - 1e-9):
        assert (b.lower, b.upper) == (0.0, 0.0)
    else:
        assert b.upper > 0.0


def test_step_grids_are_refused_before_allocation(small_memory):
    """A step grid beyond the memory bound raises GridTooLargeError (which the engine's fitter
    answers with a coarser grid) before its arrays exist."""
    from privamp.pld.distribution import GridTooLargeError, StepPLD

    curve = PoissonGaussianCurve(1.0, 0.01, "remove")
    tracemalloc.start()
    try:
        with pytest.raises(GridTooLargeError) as info:
            StepPLD.from_curve(curve, 1e-9, -1.0, 1.0, "lower")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.points > small_memory and peak < 2**20
    assert info.value.min_spacing() > 1e-9


def test_more_steps_than_any_grid_can_index_names_the_rdp_backend():
    """10^30 steps: no PLD grid indexes the composition exactly; the refusal names the backend
    that answers, and following it works."""
    from privamp import Accountant, GaussianMechanism
    from privamp.errors import NumericalError
    from privamp.sampling import Poisson

    acc = Accountant().add(GaussianMechanism(1.0), 10**30, scheme=Poisson(0.01))
    with pytest.raises(NumericalError, match="rdp backend"):
        acc.epsilon(1e-5)
    rdp = Accountant(backend="rdp").add(GaussianMechanism(1.0), 10**30, scheme=Poisson(0.01))
    assert math.isfinite(rdp.epsilon(1e-5).upper)
