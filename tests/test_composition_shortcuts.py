"""The shortcuts of the composition's spectral stage, of its ε search and of orientation
screening, each checked against the computation it replaces.

* :func:`~privamp.pld.distribution._power_spectrum` computes phases and exponentials only where
  ``Π(|X_s| + e_s)^{c_s}`` does not underflow; every other frequency must get exactly what the
  full computation gives it (spectrum 0, error 5e-324). The reference below is the full
  computation written out, over counts from 1 (nothing underflows) to 10⁶ (almost everything
  does), one and two steps; and so must its extended-precision recomputation at selected
  frequencies, with and without light masses left to double precision.
* :meth:`~privamp.pld.distribution.ComposedPLD.epsilon` with ``search_from`` sums only the
  losses above that point: those suffix sums must be the full ones' bit for bit, and the ε
  found the full search's (up to the smaller error terms of shorter sums), falling back to the
  full search when the crossing is not above the point.
* :func:`~privamp.pld.engine._screen_factors` screens an orientation far below the deciding one
  on a grid up to 32× coarser, and always falls back to the 8× screen; the bracket must not move.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import privamp as P
from privamp.pld import PoissonGaussianCurve, compose, engine
from privamp.pld import distribution as dist
from privamp.pld.distribution import StepPLD

ULP = 2.0**-52


def _logs(steps, n, sel=None, rest_budget=0.0):
    """log Π|X_s|^{c_s}, log Π(|X_s| + e_s)^{c_s}, the phase and the relative rounding term, in
    double precision over every frequency or in extended precision at ``sel``."""
    dtype = np.float64 if sel is None else dist._EXT
    unit = ULP if sel is None else dist._EXT_U
    size = n // 2 + 1 if sel is None else sel.size
    log_abs = np.zeros(size, dtype=dtype)
    log_pert = np.zeros(size, dtype=dtype)
    phase = np.zeros(size, dtype=dtype)
    rel = 0.0
    tiny = np.finfo(dtype).tiny
    for step, count in steps:
        spec, e_s, _ = dist._step_spectrum(step, n, sel, rest_budget)
        mag = np.abs(spec)
        with np.errstate(divide="ignore"):
            lm = np.log(np.maximum(mag, tiny))
            lp = np.log(mag + dtype(e_s))
        log_abs += count * lm
        log_pert += count * lp
        phase += count * np.angle(spec)
        rel += count * 8 * unit * (float(np.max(np.abs(lp))) + math.pi + 1)
    return log_abs, log_pert, phase, rel


def full_power_spectrum(steps, n, sel=None, rest_budget=0.0):
    """The power spectrum over every frequency (the former code path): in double precision,
    or with ``sel`` in extended precision at those frequencies only (``rest_budget``: the
    light masses' share, as the engine passes it)."""
    log_abs, log_pert, phase, rel = _logs(steps, n, sel, rest_budget)
    with np.errstate(under="ignore"):
        modulus = np.exp(log_abs)
        upper = np.exp(log_pert)
        spectrum = (modulus * np.exp(1j * phase)).astype(np.complex128)
        err = (np.maximum(upper - modulus, 0.0) * (1 + 1e-6) + upper * rel).astype(np.float64)
    err = np.maximum(err, 5e-324)
    return spectrum, err + np.abs(spectrum) * 2 * ULP


def random_step(rng, size, h=0.01):
    masses = rng.random(size) ** 4
    masses /= masses.sum() * (1 + 1e-3)  # a little mass at +∞'s expense, as steps have
    return StepPLD(h, -size // 3, masses, 0.0, "upper")


@pytest.mark.parametrize("counts", [(1,), (30,), (1000,), (10**6,), (7, 2), (5000, 10**5)])
@pytest.mark.parametrize("n", [256, 3000, 65536])
def test_power_spectrum_skips_only_what_underflows(counts, n):
    rng = np.random.default_rng(n + sum(counts))
    steps = [(random_step(rng, min(n // 2, 200 + 50 * i)), c) for i, c in enumerate(counts)]
    got_spec, got_err = dist._power_spectrum(steps, n)
    want_spec, want_err = full_power_spectrum(steps, n)
    assert np.array_equal(got_spec, want_spec)
    assert np.array_equal(got_err, want_err)
    if max(counts) >= 1000:
        # the shortcut is taken: most frequencies underflow
        assert np.count_nonzero(got_spec) < 0.5 * got_spec.size


def nyquist_zero_step(size=300, h=0.01):
    """A step whose spectrum is exactly 0 at the Nyquist frequency (two equal masses side by
    side) while its error bound is not: at two or more steps log|X|·c underflows there and
    log(|X| + e)·c does not, so the frequency must stay alive."""
    masses = np.zeros(size)
    masses[:2] = 0.4995
    return StepPLD(h, -size // 3, masses, 0.0, "upper")


@pytest.mark.parametrize("counts", [(2,), (3, 2)])
def test_power_spectrum_keeps_a_zero_coefficient_with_an_error(counts):
    n = 4096
    rng = np.random.default_rng(7)
    steps = [(nyquist_zero_step(), counts[0])]
    steps += [(random_step(rng, 300), c) for c in counts[1:]]
    got_spec, got_err = dist._power_spectrum(steps, n)
    want_spec, want_err = full_power_spectrum(steps, n)
    assert np.array_equal(got_spec, want_spec)
    assert np.array_equal(got_err, want_err)
    assert got_spec[n // 2] == 0 and got_err[n // 2] > 1e-300  # the case the test is about


def extended_case(case, n):
    """Steps for the extended-precision test: random ones at given counts; one whose count puts
    the logarithms at frequency 3 just above (``"above"``) or just below (``"below"``) the
    threshold −746, where a double is subnormal; one with masses at even offsets only, alive
    near 0 and near the Nyquist frequency and underflowed in between (``"even"``); and the
    step whose spectrum is 0 at the Nyquist frequency with a nonzero error (``"nyquist"``)."""
    rng = np.random.default_rng(sum(map(ord, str(case))))
    if case == "nyquist":
        return [(nyquist_zero_step(), 3)]
    if case == "even":
        masses = np.zeros(301)
        masses[::2] = rng.random(151) ** 4
        masses /= masses.sum() * (1 + 1e-3)
        return [(StepPLD(0.01, -100, masses, 0.0, "upper"), 1000)]
    if case in ("above", "below"):
        step = random_step(rng, 300)
        _, log_pert, _, _ = _logs([(step, 1)], n, np.array([3]), 0.0)
        target = -742.0 if case == "above" else -750.0
        return [(step, max(1, round(target / float(log_pert[0]))))]
    return [(random_step(rng, 300 + 50 * i), c) for i, c in enumerate(case)]


@pytest.mark.skipif(dist._EXT is np.float64, reason="no extended precision on this platform")
@pytest.mark.parametrize("case", [(1,), (1000,), (10**6,), (5000, 10**5), "above", "below",
                                  "even", "nyquist"])
@pytest.mark.parametrize("light", [False, True])
def test_extended_power_spectrum_skips_only_what_underflows(case, light):
    """The extended-precision recomputation at selected frequencies (``sel``) takes the same
    shortcut in long double: its values and errors there are the full computation's, bit for
    bit, and every other frequency keeps the double-precision pass's; ``light`` leaves the
    smaller masses to the double-precision transform (``rest_budget`` > 0). The selection is
    scattered (not a prefix, and with underflowed frequencies between live ones, so a frequency
    is never its own position in ``sel``) and takes in every frequency whose logarithms lie
    within 8 of the threshold."""
    n = 4096
    m = n // 2 + 1
    steps = extended_case(case, n)
    spec, err = dist._power_spectrum(steps, n)
    budget = 1e-6 if light else 0.0
    log_abs, log_pert, _, _ = _logs(steps, n, np.arange(m), budget)
    top = np.maximum(log_abs, log_pert)
    near = np.flatnonzero((top > -754) & (top <= -738))
    sel = np.unique(np.concatenate([np.arange(1, m, 37), near, [m - 2, m - 1]]))
    got_spec, got_err = dist._power_spectrum(steps, n, sel=sel, keep=(spec, err),
                                             rest_budget=budget)
    want_spec, want_err = full_power_spectrum(steps, n, sel=sel, rest_budget=budget)
    assert np.array_equal(got_spec[sel], want_spec)
    assert np.array_equal(got_err[sel], want_err)
    others = np.setdiff1d(np.arange(spec.size), sel)
    assert np.array_equal(got_spec[others], spec[others])
    assert np.array_equal(got_err[others], err[others])
    if case in ("above", "below"):
        assert near.size  # the case the test is about: a frequency near the threshold


@pytest.mark.parametrize(("gap", "factors"), [(-1.0, [8]), (0.0, [8]), (0.01, [8]),
                                              (0.0103, [16, 8]), (0.03, [16, 8]),
                                              (0.041, [32, 8]), (0.9, [32, 8])])
def test_screen_factors(gap, factors):
    assert engine._screen_factors(gap) == factors


@pytest.mark.parametrize(("sigma", "q", "steps", "delta"),
                         [(1.0, 0.01, 1000, 1e-5), (2.0, 0.3, 100, 1e-5), (0.7, 0.001, 3000, 1e-8),
                          (1.5, 0.05, 2000, 1e-6)])
def test_coarse_screen_leaves_the_bracket(sigma, q, steps, delta, monkeypatch):
    """The add orientation lies well below remove here: the coarse screen clears it, and the
    bracket is the one the 8× screen gives (which the fine grid of remove decides)."""
    def run():
        acc = P.Accountant()
        acc.add(P.GaussianMechanism(sigma), steps, scheme=P.Poisson(q))
        return acc.epsilon(delta), acc.details["fft_sizes"]

    coarse, sizes = run()
    monkeypatch.setattr(engine, "_MAX_SCREEN", 8)
    eight, sizes8 = run()
    assert coarse == eight
    assert sizes["upper/add/screen"] < sizes8["upper/add/screen"]


def composed(kind, sigma=1.0, q=0.05, steps=400, h=2e-3):
    curve = PoissonGaussianCurve(1.0 / sigma, q, "remove")
    step = StepPLD.from_curve(curve, h, -1.0, 6.0, kind)
    return compose([(step, steps)], tail_tol=1e-14)


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_sums_from_a_floor_are_the_full_sums(kind):
    comp = composed(kind)
    full = comp._sums(0.0)
    for floor in (1e-9, 0.3, 1.7, 4.0):
        part = comp._sums(floor)
        k = full[0].size - part[0].size
        assert k > 0 or floor < 1e-6
        for a, b in zip(full[:7], part[:7], strict=True):
            if a is None:
                assert b is None
                continue
            assert np.array_equal(a[k:], b)


@pytest.mark.parametrize("kind", ["upper", "lower"])
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-9])
def test_search_from_finds_the_full_search_epsilon(kind, delta):
    comp = composed(kind)
    eps = comp.epsilon(delta)
    assert 0 < eps < math.inf
    for start in (0.01 * eps, 0.5 * eps, 0.999 * eps):
        got = comp.epsilon(delta, start)
        assert abs(got - eps) <= 1e-12 * (1 + eps)  # the sums' error terms only
        if kind == "upper":
            assert got <= eps  # shorter sums, smaller error terms: never looser
        else:
            assert got >= eps
    for start in (1.001 * eps, 3 * eps, 1e6):  # at or beyond the crossing: the full search
        assert comp.epsilon(delta, start) == eps


@pytest.mark.parametrize("tilt", [0.0, 2.0])
def test_sums_are_computed_once_per_floor(tilt, monkeypatch):
    """Every δ evaluation of a search reuses the suffix sums (a tilted window once stored them
    under the untilting floor's key instead of the one asked for: each of 169 evaluations
    summed 2.8M points again, 2.4 s → 16.6 s)."""
    curve = PoissonGaussianCurve(1.0, 0.05, "remove")
    step = StepPLD.from_curve(curve, 2e-3, -1.0, 6.0, "upper")
    comp = compose([(step, 400)], tail_tol=1e-14, tilt=tilt)
    calls = []
    original = dist._discounted_suffix
    monkeypatch.setattr(dist, "_discounted_suffix",
                        lambda v, h: calls.append(1) or original(v, h))
    eps = comp.epsilon(1e-12)
    comp.delta(eps)
    comp.epsilon(1e-12)
    assert set(comp._caches) == {0.0}
    assert len(calls) == (2 if tilt > 0 else 1)  # the masses' and the weights' sums


@pytest.mark.parametrize("nsel", [3, 400])  # the direct light path, and the light FFT's
def test_kept_and_unkept_steps_give_the_same_coefficients(nsel):
    """A step's memo (``ladder`` compositions keep it) changes how long its extended-precision
    coefficients take, never their values or their bound: the light part's path depends only
    on the sizes."""
    rng = np.random.default_rng(nsel)
    n, size = 7500, 300
    masses = rng.random(size) ** 8
    masses[[10, 200]] = [0.4, 0.2]
    masses /= masses.sum()
    sel = np.sort(rng.choice(n // 2 + 1, size=nsel, replace=False))
    plain = StepPLD(0.01, -size // 2, masses, 0.0, "upper")
    kept = StepPLD(0.01, -size // 2, masses.copy(), 0.0, "upper")
    dist._keep(kept)
    want, want_err, _ = dist._step_spectrum(plain, n, sel, 0.05)
    for part in (sel[::2], sel):  # partly memoised, then all
        got, err, _ = dist._step_spectrum(kept, n, part, 0.05)
        assert err == want_err
        assert np.array_equal(got, want[np.searchsorted(sel, part)])


def test_restricted_sums_are_kept_for_one_floor_only():
    """A cached composition queried at many δ's keeps the full sums and one restricted set,
    not a window's sums per floor."""
    comp = composed("upper")
    for floor in (0.3, 1.7, 4.0, 0.0, 2.5):
        comp._sums(floor)
    assert set(comp._caches) == {0.0, 2.5}
