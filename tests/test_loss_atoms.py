"""Atoms of a privacy loss with a continuous part (Laplace): the hint that keeps them whole.

The Laplace pair's loss has two heavy atoms (±θ) at the ends of its range and a continuous part
between them; Poisson subsampling maps them to ±log(1 − γ + γe^{±θ}). The PLD engine puts them
a little above grid points (:func:`privamp.pld.grids._atom_offset`) and the lower
discretisation moves them down to those points instead of spreading them
(:func:`privamp.pld.discretize.lower_masses`, step 3). Before, the lower end drifted: Laplace
b = 1 under Poisson(0.01) at 10⁴ steps gave a bracket 0.14 % wide, 3 % at 10⁵.

Checked here, for every orientation, rate boundary (γ = 1, tiny γ) and scale:

* the hint is right: the curve kinks at the listed atoms, with the Q-mass the loss law says;
* the lower step is a dominated pair (below the exact curve, in 50 digits, including just below
  each atom where moving an atom up would show), and it stays dominated with a wrong hint;
* composed, the brackets overlap the simple reference of :mod:`conformance.references` and
  the bracket computed without the hint, and meet the 0.1 % target the old code missed.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest

from privamp import Accountant, GaussianMechanism, LaplaceMechanism
from privamp.amplification.subsampling import amplify
from privamp.mechanisms.laplace import LaplaceProfile
from privamp.pld import curves as _curves
from privamp.pld.curves import PoissonPairCurve, ProfileCurve
from privamp.pld.distribution import StepPLD
from privamp.pld.grids import ATOM_LIFT, _atom_offset, _finite_atoms, _snap
from privamp.sampling import WOR, WR, Poisson

#: mpmath precision of this module's tests (tests/conftest.py sets it for each test)
MPMATH_DPS = 50

THETAS = [0.3, 1.0, 4.0]
RATES = [None, 1.0, 0.5, 0.01, 1e-4, 1e-7]
ORIENTATIONS = ["remove", "add"]


def _curve(theta, rate, orientation):
    base = ProfileCurve(LaplaceProfile(theta))
    return base if rate is None else PoissonPairCurve(base, rate, orientation)


def _cases():
    return [pytest.param(theta, rate, orientation, id=f"th{theta}-q{rate}-{orientation}")
            for theta in THETAS for rate in RATES
            for orientation in (["-"] if rate is None else ORIENTATIONS)]


# ---- the exact curve in 50 digits (independent of privamp's curves) ------------------------

def _base_curve(theta, beta):
    """D_β(P‖Q) of the Laplace pair (symmetric): δ(ε) = [1 − e^{(ε−θ)/2}]_+ for β = e^ε ≥ 1,
    1 − β + β δ(−log β) below."""
    theta, beta = mpmath.mpf(theta), mpmath.mpf(beta)
    if beta <= 0:
        return mpmath.mpf(1)

    def delta(x):
        return max(mpmath.mpf(0), 1 - mpmath.e ** ((x - theta) / 2))

    if beta >= 1:
        return delta(mpmath.log(beta))
    return 1 - beta + beta * delta(-mpmath.log(beta))


def exact_curve(theta, rate, orientation, eps):
    """f(e^ε) of the (subsampled) Laplace pair (Zhu, Dong, Wang 2022, Theorem 11 mixtures)."""
    alpha = mpmath.e ** mpmath.mpf(eps)
    if rate is None:
        return _base_curve(theta, alpha)
    g = mpmath.mpf(rate)
    if orientation == "remove":
        if alpha <= 1 - g:
            return 1 - alpha
        return g * _base_curve(theta, (alpha - 1 + g) / g)
    c = 1 - alpha * (1 - g)
    return c * _base_curve(theta, alpha * g / c) if c > 0 else mpmath.mpf(0)


def expected_atoms(theta, rate, orientation):
    """(position, Q-mass) of the atoms from the loss law: the base pair has Q-mass ½ at −θ and
    ½e^{−θ} at +θ; remove keeps them at log(1 − γ + γe^l); add puts the base's P-and-Q mixture
    at −log(1 − γ + γe^l)."""
    th = mpmath.mpf(theta)
    base = {-1: mpmath.mpf(1) / 2, 1: mpmath.e ** (-th) / 2}  # Q-masses of ±θ
    if rate is None:
        return [(s * th, base[s]) for s in (-1, 1)]
    g = mpmath.mpf(rate)
    out = []
    for s in (-1, 1):
        loss = mpmath.log(1 - g + g * mpmath.e ** (s * th))
        if orientation == "remove":
            out.append((loss, base[s]))
        else:  # the mixture (1 − γ)Q + γP; P-mass of {ℓ = sθ} is e^{sθ} times its Q-mass
            out.append((-loss, (1 - g) * base[s] + g * mpmath.e ** (s * th) * base[s]))
    return sorted(out)


def _deltas(step: StepPLD, eps: np.ndarray) -> np.ndarray:
    losses = step.losses
    out = []
    for e in eps:
        above = losses > e
        out.append(math.fsum((step.masses[above] * -np.expm1(e - losses[above])).tolist())
                   + step.p_inf)
    return np.array(out)


# ---- the hint ----------------------------------------------------------------------------

@pytest.mark.parametrize(("theta", "rate", "orientation"), _cases())
def test_the_curve_kinks_at_its_atoms_with_the_q_mass_of_the_loss_law(theta, rate, orientation):
    curve = _curve(theta, rate, orientation)
    atoms = _finite_atoms(curve)
    want = expected_atoms(theta, rate, orientation)
    assert atoms is not None and atoms.size == 2
    for (pos, mass), got in zip(want, atoms.tolist(), strict=True):
        assert got == pytest.approx(float(pos), rel=1e-12, abs=1e-15)
        # the slope of f jumps by the atom's Q-mass: one-sided secants in 50 digits
        d = abs(pos) * mpmath.mpf("1e-20")
        a = pos

        def f(x):
            return exact_curve(theta, rate, orientation, x)

        # 50 digits whatever another module left in mpmath's global context (test_fourier's
        # 30 made these secants fail when it was collected after this module)
        with mpmath.workdps(50):
            left = (f(a) - f(a - d)) / (mpmath.e ** a - mpmath.e ** (a - d))
            right = (f(a + d) - f(a)) / (mpmath.e ** (a + d) - mpmath.e ** a)
        assert float(right - left) == pytest.approx(float(mass), rel=1e-6)


def test_laplace_profile_lists_its_atoms_and_no_kinks():
    """The curve is not piecewise affine (a continuous part): no kinks, which would make the
    lower side join chords (valid only for discrete losses); atoms only."""
    prof = LaplaceProfile(1.5)
    assert prof.curve_kinks() is None
    assert prof.curve_atoms().tolist() == [-1.5, 1.5]
    assert LaplaceProfile(0.0).curve_atoms() is None


# ---- the lower step stays dominated, with the hint and with wrong ones ---------------------

def _probe_points(curve, h, offset):
    pts = [np.linspace(-0.05, 0.05, 41)]
    for a in _finite_atoms(curve).tolist():
        k = np.arange(-8, 9)
        pts.append(a + k * h / 4096)  # the lift is h/1024: moving an atom up would show here
        pts.append(a + k * h / 3)
        pts.append(offset + (math.floor((a - offset) / h) + np.arange(-2, 3)) * h)
    return np.unique(np.concatenate(pts))


@pytest.mark.parametrize(("theta", "rate", "orientation"), _cases())
@pytest.mark.parametrize("wrong", [None, "shifted", "elsewhere"])
def test_lower_step_is_dominated(theta, rate, orientation, wrong):
    curve = _curve(theta, rate, orientation)
    atoms = _finite_atoms(curve)
    h = _snap(float(atoms[-1] - atoms[0]) / 700, [(curve, 1)])
    offset = _atom_offset(curve, h)
    assert offset is not None
    hint = atoms
    if wrong == "shifted":
        hint = atoms + h * (1 / 3000)
    elif wrong == "elsewhere":
        hint = np.linspace(atoms[0], atoms[-1], 7)[1:-1]
    lo, hi = float(atoms[0]) - 5 * h, float(atoms[-1]) + 5 * h
    step = StepPLD.from_curve(curve, h, lo, hi, "lower", offset=offset, atoms=hint)
    assert math.fsum(step.masses.tolist()) + step.p_inf <= 1.0
    eps = _probe_points(curve, h, offset)
    got = _deltas(step, eps)
    for e, d in zip(eps.tolist(), got.tolist(), strict=True):
        exact = exact_curve(theta, rate, orientation, e)
        assert d <= exact * (1 + mpmath.mpf("1e-15")) + mpmath.mpf("1e-300"), (e, d, exact)
    if wrong is None:
        # the information kept, E_P[L] (merging and moving atoms down only lower it), against
        # the upper step's: within ~ATOM_LIFT steps, and closer than without the hint on a
        # grid that ignores the atoms (up to 500 times; the atoms spread or fell a step)
        upper = StepPLD.from_curve(curve, h, lo, hi, "upper", offset=offset)
        plain = StepPLD.from_curve(curve, h, lo, hi, "lower")
        plain_up = StepPLD.from_curve(curve, h, lo, hi, "upper")

        def gap(low, up):
            return float(np.dot(up.masses, up.losses) - np.dot(low.masses, low.losses))

        def kept(low):
            return math.fsum(low.masses.tolist()) + low.p_inf

        # (E_P[L] compares only steps that keep their mass: one that drops mass below its grid
        # can even gain; at tiny rates the plain step loses most of it, secant windows of
        # 4e-6 straddling atoms 1e-7 apart)
        assert kept(step) >= 1 - 1e-6
        assert gap(step, upper) <= 8 * ATOM_LIFT * h
        if rate is None or rate >= 1e-4:  # below, E_P[L] itself is ~1e-14: no measure
            assert gap(step, upper) <= 0.7 * gap(plain, plain_up)


@pytest.mark.parametrize("asked", [1e-2, 3.3e-4, 1e-5])
def test_the_grid_puts_the_atoms_just_above_grid_points(asked):
    curve = _curve(1.0, 0.01, "add")
    atoms = _finite_atoms(curve)
    h = _snap(asked, [(curve, 1)])
    assert asked / 2 <= h <= asked or h == float(atoms[1] - atoms[0])
    offset = _atom_offset(curve, h)
    for a in atoms.tolist():
        frac = (a - offset) / h - math.floor((a - offset) / h)
        assert frac == pytest.approx(ATOM_LIFT, abs=1e-6)
    # a spacing the two atoms do not fit: no offset
    assert _atom_offset(curve, h * 1.000123) is None


@pytest.mark.parametrize("scheme", [WOR(1000, 100), WOR(50, 3), WR(100, 5)], ids=repr)
def test_amplified_laplace_lower_step_is_dominated(scheme):
    """Laplace under WOR/WR (substitution): the amplified profile lists its atoms (±the map of
    each group's ±kθ, and 0); the lower step stays below the exact one-step curve (the
    independent reference of :mod:`conformance.references`, 50 digits)."""
    from conformance.references import one_step_delta

    mech = LaplaceMechanism(1.0, relation="substitute")
    curve = ProfileCurve(amplify(mech, scheme, "substitute"))
    atoms = _finite_atoms(curve)
    assert atoms is not None and 0.0 in atoms.tolist()
    h = _snap(float(atoms[-1] - atoms[0]) / 900, [(curve, 1)])
    offset = _atom_offset(curve, h)
    if isinstance(scheme, WOR):
        assert offset is not None  # ±a and 0: a lattice
    lo, hi = float(atoms[0]) - 5 * h, float(atoms[-1]) + 5 * h
    step = StepPLD.from_curve(curve, h, lo, hi, "lower", offset=offset or 0.0, atoms=atoms)
    assert math.fsum(step.masses.tolist()) + step.p_inf <= 1.0
    eps = np.unique(np.concatenate([_probe_points(curve, h, offset or 0.0),
                                    np.linspace(lo, hi, 60)]))
    got = _deltas(step, eps)

    def exact(e):
        if e >= 0:
            return one_step_delta(mech, scheme, mech.relation, e)
        a = mpmath.e ** mpmath.mpf(e)
        return 1 - a + a * one_step_delta(mech, scheme, mech.relation, -e)

    for e, d in zip(eps.tolist(), got.tolist(), strict=True):
        ref = exact(e)
        assert d <= ref * (1 + mpmath.mpf("1e-12")) + mpmath.mpf("1e-300"), (e, d, ref)


@pytest.mark.parametrize("scheme", [WOR(1000, 100), WR(60000, 600), WR(100, 5)], ids=repr)
@pytest.mark.parametrize("hint", [True, False])
def test_amplified_gaussian_lower_step_is_dominated(scheme, hint):
    """The Gaussian under WOR/WR (substitution): a continuous loss with an atom at 0, where
    both laws agree (mass about 1 − η). The amplified profile lists it; the lower step has a
    line just above it as well as at the grid point just below, and stays below the exact
    one-step curve (50 digits), also 1/4096 step from the atom, with the hint and without."""
    from conformance.references import one_step_delta

    mech = GaussianMechanism(1.0, relation="substitute")
    curve = ProfileCurve(amplify(mech, scheme, "substitute"))
    atoms = _finite_atoms(curve)
    assert atoms is not None and atoms.tolist() == [0.0]
    h = 1.3e-3
    offset = _atom_offset(curve, h) if hint else 0.0
    assert offset is not None
    lo, hi = -0.2, 0.2
    step = StepPLD.from_curve(curve, h, lo, hi, "lower", offset=offset,
                              atoms=atoms if hint else None)
    assert math.fsum(step.masses.tolist()) + step.p_inf <= 1.0
    eps = np.unique(np.concatenate([_probe_points(curve, h, offset), np.linspace(lo, hi, 40)]))

    def exact(e):
        if e >= 0:
            return one_step_delta(mech, scheme, mech.relation, e)
        a = mpmath.e ** mpmath.mpf(e)
        return 1 - a + a * one_step_delta(mech, scheme, mech.relation, -e)

    for e, d in zip(eps.tolist(), _deltas(step, eps).tolist(), strict=True):
        ref = exact(e)
        assert d <= ref * (1 + mpmath.mpf("1e-12")) + mpmath.mpf("1e-300"), (e, d, ref)


@pytest.mark.parametrize(("scheme", "width"), [(WR(60000, 600), 0.009), (WOR(1000, 100), 4e-4)],
                         ids=repr)
def test_the_line_above_the_atom_keeps_the_bracket_narrow(scheme, width):
    """On a fixed coarse grid (4e-3, 10⁴ steps) the amplified Gaussian's bracket is narrow
    only with both the hint and the line just above the atom: WR 7.9 % wide without the hint,
    1.16 % with the hint alone, 0.76 % with both (review 35); WOR 0.161 %, 0.068 %, 0.028 %."""
    mech = GaussianMechanism(1.0, relation="substitute")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = Accountant("pld", grid_step=4e-3).add(mech, 10_000, scheme=scheme).epsilon(1e-5)
    assert 0 < b.lower <= b.upper
    assert b.upper - b.lower <= width * b.upper


# ---- composed: against the simple reference, without the hint, and the target ------------

@pytest.mark.parametrize(("rate", "steps", "delta"), [(1e-6, 100_000, 1e-6),
                                                      (1e-7, 1_000_000, 1e-8)])
def test_tiny_rates_get_a_lower_end(rate, steps, delta):
    """At tiny rates the secant windows (≥ 4e-6) reach both atoms from every grid point; each
    point takes the narrower window. The lower end was 0 before the atoms were kept; with the
    last atom's window winning (a review finding) the bracket was 7.5–8 % wide."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # still wider than 0.1 %: an AccuracyWarning
        b = Accountant("pld").add(LaplaceMechanism(1.0), steps,
                                  scheme=Poisson(rate)).epsilon(delta)
    assert b.lower > 0
    assert b.upper - b.lower <= 0.04 * b.upper


@pytest.fixture
def without_hints(monkeypatch):
    def off():
        monkeypatch.setattr(_curves.PoissonPairCurve, "atoms", lambda self: None)
        monkeypatch.setattr(_curves.ProfileCurve, "atoms", lambda self: None)
    return off


@pytest.mark.parametrize(("scale", "rate", "steps"), [
    (1.0, 0.01, 3), (0.3, 0.05, 2), (3.0, 0.5, 2), (1.0, 1.0, 3),
])
def test_composed_bracket_holds_the_simple_reference(scale, rate, steps):
    from conformance.references import composed_epsilon_bracket, laplace_base, poisson_laws

    delta = 1e-5
    span = 2 * rate * math.expm1(1 / scale) + 1e-3
    h = span / 2e5
    ref_lo, ref_hi = composed_epsilon_bracket(
        lambda up: poisson_laws(laplace_base(scale), rate, h, up), steps, delta)
    b = Accountant("pld").add(LaplaceMechanism(scale), steps, scheme=Poisson(rate)).epsilon(delta)
    assert b.upper >= ref_lo
    assert b.lower <= ref_hi
    assert b.upper - b.lower <= 1e-4 * b.upper


ROWS = [  # (scale, scheme, steps, query, argument): the row and its neighbours
    (1.0, Poisson(0.01), 10_000, "epsilon", 1e-5),
    (1.0, Poisson(0.01), 100_000, "epsilon", 1e-5),
    (0.5, Poisson(0.001), 10_000, "epsilon", 1e-8),
    (1.0, Poisson(0.01), 10_000, "delta", 4.0),
    (3.0, Poisson(0.2), 1_000, "delta", 0.5),
    (1.0, WOR(1000, 100), 10_000, "epsilon", 1e-5),  # substitution: 0.25 % before
]


@pytest.mark.parametrize(("scale", "scheme", "steps", "query", "arg"), ROWS)
def test_laplace_brackets_meet_the_target_and_agree_without_the_hint(
        scale, scheme, steps, query, arg, without_hints):
    relation = "add-remove" if isinstance(scheme, Poisson) else "substitute"

    def bracket():
        acc = Accountant("pld").add(LaplaceMechanism(scale, relation=relation), steps,
                                    scheme=scheme)
        return getattr(acc, query)(arg)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no AccuracyWarning: the target is met
        new = bracket()
    assert new.upper - new.lower <= 1e-3 * new.upper
    without_hints()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = bracket()
    # both certified: they overlap; and the hint only tightens
    assert new.lower <= old.upper and old.lower <= new.upper
    assert new.upper - new.lower <= old.upper - old.lower


def test_an_atom_ulps_from_a_grid_point_warns_nothing():
    """A hint within ulps of a grid point gives a secant window below the ulp of ε (a zero
    gap): the slope bound is then trivial, silently (it leaked a divide-by-zero warning)."""
    curve = PoissonPairCurve(ProfileCurve(LaplaceProfile(1.0)), 0.01, "add")
    atoms = _finite_atoms(curve)
    h = _snap(float(atoms[-1] - atoms[0]) / 50, [(curve, 1)])
    offset = float(atoms[0]) - math.floor(float(atoms[0]) / h) * h  # the bottom atom on it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step = StepPLD.from_curve(curve, h, float(atoms[0]) - 3 * h, float(atoms[-1]) + 3 * h,
                                  "lower", offset=offset, atoms=atoms)
    assert math.fsum(step.masses.tolist()) + step.p_inf <= 1.0
