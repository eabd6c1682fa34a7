"""Certified ε(δ) and δ(ε) brackets for compositions of dominating pairs, by PLD and FFT.

This is the ``pld`` backend of :class:`privamp.accountant.Accountant`. A composition is a list of
:class:`PldEvent` (one or two :class:`~privamp.pld.curves.PairCurve` per event, and a count).

**Orientations.** A symmetric event has one curve, dominating both orders of every neighbouring
pair. Poisson subsampling under add/remove has two (Zhu, Dong, Wang 2022): the *remove* pair and
the *add* pair. A neighbouring pair of datasets is either a removal or an addition for every step
of a composition, so the compositions of all *remove* curves and of all *add* curves (symmetric
curves in both) are two candidate worst cases, and the profile is their maximum.

**Grid spacing from the accuracy asked for.** Connect-the-dots (the upper side) spreads each
step's loss over a grid cell, which adds about h²/6 of variance per step without moving the mean;
the optimistic side loses about twice that. Added variance ΔV moves the composed log-MGF by about
λ²ΔV/2 at the Chernoff tilt λ of the target, hence ε by about ``ΔV (1 + λ)/2`` (for a Gaussian
loss λ = z/√V and this is the exact derivative ``1/2 + z/(2√V)``), so the upper side is off by
about ``T h²/6 · (1 + λ)/2``. The spacing of the upper side is chosen to make that estimate
``upper_error`` (default 1e-5 relative) and the spacing of the lower side to make the bracket
width ``eps_error`` (default 1e-3 relative). The estimates only choose the grids: the reported
bracket is certified whatever they say, and the lower side is refined (up to three times,
shrinking its spacing in proportion to the missed width) when the certified width misses the
target. For δ(ε) queries a relative error r in
δ is about r/λ in ε.

**Orientation screening.** With two orientations, the one whose Chernoff estimate of ε is larger
is composed on the fine grid and the other screened on an 8× coarser one (a coarser upper side
is still an upper bound; up to 32× first when its estimate lies far below, :func:`_screen_factors`);
it is refined only if its screen exceeds the fine value. When the two
estimates are within 2 %, both are screened first. The lower side is computed only for the
orientation that decides the upper end (any valid lower bound of one orientation is a lower
bound of the maximum).

**Memory bound: answer, and say the width.** Every composition is checked against
:data:`~privamp.pld.distribution.MAX_FFT` before anything of that size is allocated (the step
grids here, the composed window in :func:`~privamp.pld.distribution.compose`). A grid that
would exceed it is replaced by the finest coarser one that fits (:class:`_Fitter`): a coarser
grid is as certified as a finer one, only less tight. When the certified bracket then misses
its target width, an :class:`~privamp.errors.AccuracyWarning` says how wide it is and why
(also :attr:`PldResult.accuracy_note`); nothing is refused for accuracy. Only a fixed
``grid_step`` finer than the bound allows is refused, naming a spacing that fits (found by
sizing every composition without transforming it, :func:`_fitting_spacing`).

**Tiny δ.** Below δ = 1e-9 the compositions are exponentially tilted by the Chernoff-optimal λ
(see :func:`~privamp.pld.distribution.compose`), and the tail budgets shrink with δ.

The grid choices (spacings, tilts, atoms on the grid, refinement of the lower side) are in
:mod:`privamp.pld.grids`; this module ranges the steps, composes them and reports.

**Tails of each step.** The range of each step's grid is chosen so that the P-mass beyond it is at
most a tail budget: on the right ``f(e^ε) ≤ budget`` (the upper side turns the rest into mass at
+∞, the lower side drops it); on the left ``P(L < ε₀) ≤ e^{ε₀} g(α)/(α − e^{ε₀})`` with
``g = f − (1 − α)`` and α = e^{ε₀/2} (the upper side moves that mass up to the first grid point,
the lower side drops it). Both only cost tightness, never validity.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import _special
from .._numerics import (
    ULP,
    bisect_threshold,
    floor_pow,
    round_down_log,
    round_up_log,
    section_threshold,
)
from .._progress import report
from .._validation import check_int, check_optional_real, check_real
from ..errors import (
    AccuracyWarning,
    InconsistentBoundsError,
    InvalidParameterError,
    LossRangeError,
    NumericalError,
)
from ..results import Bracket
from . import distribution as _distribution
from . import grids as _grids_mod
from .curves import PairCurve
from .distribution import ComposedPLD, GridTooLargeError, StepPLD, compose
from .grids import (
    _EPS_FLOOR,
    _MIN_POINTS,
    ATOM_LIFT,
    _aligned_range,
    _atom_offset,
    _ceil_pow,
    _choose_grids,
    _clip_grid,
    _clip_lower,
    _finite_atoms,
    _grid_for,
    _grids,
    _lambda_grid,
    _max_tilt,
    _min_step_spacing,
    _placement,
    _reference_deltas,
    _refine_lower,
    _resolve_bulk,
    _slope,
    _snap,
    _snap_up,
    _step_points,
    _tilt_for_eps,
)

__all__ = ["PldEvent", "PldProfile", "PldResult", "pld_delta", "pld_epsilon", "pld_profile"]

#: Smallest δ for which ε(δ) is certified: tail budgets are a millionth of δ and must stay
#: normal doubles.
MIN_DELTA = 1e-300



@dataclass(frozen=True)
class PldEvent:
    """One ledger line for the PLD backend: pair curves keyed by orientation, and a count.

    ``curves`` maps ``"symmetric"`` (one curve for both orders of neighbours) or ``"remove"`` and
    ``"add"`` (both required) to a :class:`PairCurve`.
    """

    curves: dict
    count: int
    label: str = ""

    def __post_init__(self):
        keys = set(self.curves)
        # a group of K records (privamp.pld.group) has K + 1 splits: "remove", "add" and
        # "mixed1" … "mixed{K-1}"
        if keys != {"symmetric"} and not (
                {"remove", "add"} <= keys
                and all(k in ("remove", "add") or k.startswith("mixed") for k in keys)):
            raise InvalidParameterError("curves", "keys {'symmetric'} or {'remove', 'add'} "
                                        "(and 'mixed<a>' for a group's mixed splits)",
                                        sorted(keys))
        for curve in self.curves.values():
            if not isinstance(curve, PairCurve):
                raise InvalidParameterError("curves", "PairCurve values", type(curve).__name__)
        check_int("count", self.count, "[1, inf)")


@dataclass
class PldResult:
    """A certified bracket with the choices that produced it (for reports and benchmarks)."""

    bracket: Bracket
    orientation: str
    grid_upper: float
    grid_lower: float | None
    fft_sizes: dict = field(default_factory=dict)
    seconds: float = 0.0
    #: why the bracket has no lower end, when it has none
    lower_note: str = ""
    #: the width the grids aimed at (absolute: ε for pld_epsilon, δ for pld_delta)
    target_width: float | None = None
    #: why the bracket is wider than ``target_width``, when it is
    accuracy_note: str = ""

    @property
    def width(self) -> float:
        """The certified bracket's width (``inf`` without a lower end)."""
        return self.bracket.width


def _checked_lower(low: float, upper: float) -> float:
    """The lower end, after making sure it is not above the upper end: if it were (beyond
    rounding), one of the two would be wrong, and no number could be reported safely."""
    if low > upper * (1 + 1e-9) + 1e-300:
        raise InconsistentBoundsError(
            f"internal inconsistency: the certified lower end {low!r} exceeds the certified "
            f"upper end {upper!r}; please report this (privamp refuses rather than report "
            "either)")
    return min(low, upper)


_NOT_CONVEX = ("no lower end: a step's bound is not itself a privacy profile (not convex in "
               "e^ε: BBG Theorem 14, a black-box or post-hoc group bound, the smaller of two "
               "bounds), so only the upper end is certified")


def _log_p_inf(items, lower: bool) -> float:
    """log P(composed loss = +∞) = log(1 − Π(1 − p_i)^{c_i}), from upper (or lower) values of
    the p_i, every rounding to the same side: the p_i by 4 ulp (exp), log1p and the products
    within 2 ulp of their magnitudes, the sum once (fsum), expm1 by 2 ulp, the log by
    :func:`round_up_log` / :func:`round_down_log`."""
    terms = []
    for curve, count in items:
        lp = float((curve.log_lower if lower else curve.log_upper)(np.array([np.inf]))[0])
        if lp >= 0.0:
            return 0.0
        if lp > -np.inf:
            p = math.exp(lp)
            p = p * (1 - 4 * ULP) if lower else p * (1 + 4 * ULP)
            if p >= 1.0:
                return 0.0
            terms.append(count * math.log1p(-p))
    if not terms:
        return -np.inf
    total = math.fsum(terms)
    err = 2 * ULP * math.fsum(abs(t) for t in terms) + ULP * abs(total)
    value = -math.expm1(total + err if lower else total - err)
    value = value * (1 - 2 * ULP) if lower else min(value * (1 + 2 * ULP), 1.0)
    if value <= 0.0:
        return -np.inf
    log_value = math.log(value)
    return float(round_down_log(log_value) if lower else min(round_up_log(log_value), 0.0))


# ------------------------------------------------------------------------------------------
# step ranges and grid spacing
# ------------------------------------------------------------------------------------------


def _right_end(curve: PairCurve, log_budget: float) -> float:
    """Smallest ε ≥ 0 (to 1e-6 relative) with log f(e^ε) − log(finite part) ≤ budget
    (a doubling search in at most three calls, then :func:`~privamp._numerics.section_threshold`
    with the curve at 127 points per call)."""
    log_inf = curve.log_mass_at_infinity

    def excess(e):
        val = curve.log_upper(np.atleast_1d(np.asarray(e, dtype=float)))
        if np.isfinite(log_inf):
            with np.errstate(invalid="ignore", divide="ignore"):
                val = val + np.log1p(-np.exp(np.minimum(log_inf - val, 0.0)))
        return val

    # 0, then the doublings 1, 2, 4, …, 2^20, in three calls at most
    hi = _first_feasible(lambda x: excess(x) <= log_budget, _RIGHT_TRIALS)
    if hi is None:
        raise LossRangeError("the privacy loss of a step does not fall below the tail budget "
                             "(is the mechanism's δ(ε) bounded away from its mass at ∞?)")
    if hi == 0.0:
        return 0.0
    return section_threshold(lambda x: excess(x) <= log_budget, hi / 2 if hi > 1 else 0.0, hi,
                             rtol=1e-6, points=_RANGE_PARTS)


#: The trial points of the ranges' doubling searches, one call per tuple, in order: the
#: doublings of the one-point-at-a-time search (the same points, the first feasible one wins),
#: in fewer calls (a mixture of 29 amplified Gaussians costs about 30 ms a call, whatever its
#: size). Not all in one call: a tabulated curve builds its table up to the largest ε it is
#: asked for (Poisson under substitution, up to its cap X_MAX = 64, evaluated directly
#: beyond), so the first chunk stops at 4, where most steps end, and the second at 16; an end
#: beyond 16 has the curve evaluated up to 2^20. The left end's bound evaluates the curve at
#: ε₀/2, hence the shifted chunks.
_RIGHT_TRIALS = ((0.0, 1.0, 2.0, 4.0), (8.0, 16.0), tuple(2.0**k for k in range(5, 21)))
_LEFT_TRIALS = ((-1.0, -2.0, -4.0, -8.0), (-16.0, -32.0),
                tuple(-(2.0**k) for k in range(6, 21)))
#: Parts per round of the ranges' sectioning: three rounds reach 1e-6 (128³ > 10⁶); a curve at
#: 127 points costs little more than at 31 (at these sizes its cost is per call, as above).
_RANGE_PARTS = 128


def _first_feasible(feasible, trials) -> float | None:
    """The first point of ``trials`` (a tuple of tuples, one call each, in order) at which
    ``feasible`` holds, or ``None``."""
    for chunk in trials:
        ok = np.asarray(feasible(np.array(chunk)), dtype=bool)
        if ok.any():
            return chunk[int(np.argmax(ok))]
    return None


def _left_end(curve: PairCurve, log_budget: float) -> float:
    """Largest ε₀ ≤ 0 (to 1e-6 relative) with the left-tail bound ≤ budget.

    With α = e^{ε₀/2}: P(L < ε₀) ≤ e^{ε₀} E_Q[(α − e^L)_+; L > −∞]/(α − e^{ε₀}), and
    E_Q[(α − e^L)_+] = f(α) − (1 − α) (``log_excess``) counts the Q-atom at L = −∞, which has no
    P-mass, with weight α: it is taken out (a lower bound on its mass, so what is left is still
    an upper bound). Without that, a pair whose second law has mass where the first has none
    (approx-DP under Poisson(1e-9), add orientation) bounded a loss living within ±2e-9 only
    below −8.3, and its step grids took millions of points. The subtraction is in floating
    point: a budget below about 1e-16 α m cannot be resolved, and the cut stays where it was."""
    log_m = curve.log_q_mass_at_minus_infinity

    def bound(e0):
        e0 = np.atleast_1d(np.asarray(e0, dtype=float))
        half = e0 / 2
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            log_gap = half + np.log1p(-np.exp(half))  # log(e^{ε₀/2} − e^{ε₀})
            excess = curve.log_excess(half)
            if log_m > -math.inf:
                # e^{excess} − α m, each term rounded the safe way, the difference rounded up
                # (the exponent's rounding, ulp × its size, is a relative error of the atom)
                atom = half + log_m
                rest = (np.exp(excess) * (1 + 4 * ULP)
                        - np.exp(atom) * (1 - 4 * ULP * (1 + np.abs(atom)))) * (1 + 2 * ULP)
                excess = np.log(np.maximum(rest, 0.0))
            return e0 + excess - log_gap

    lo = _first_feasible(lambda x: bound(x) <= log_budget, _LEFT_TRIALS)
    if lo is None:
        raise LossRangeError("the privacy loss of a step has no bounded left tail")
    if bound(-1e-9)[0] <= log_budget:
        return -1e-9
    return -section_threshold(lambda x: bound(-np.asarray(x)) <= log_budget, 1e-9, -lo,
                              rtol=1e-6, points=_RANGE_PARTS)


#: Largest single-step privacy loss the grid represents (e^ε must stay a finite double).
_MAX_LOSS = 700.0


def _step_range(curve: PairCurve, log_budget: float) -> tuple[float, float]:
    lo, hi = _left_end(curve, log_budget), _right_end(curve, log_budget)
    if hi > _MAX_LOSS or lo < -_MAX_LOSS:
        raise LossRangeError(
            f"a single step's privacy loss reaches {max(hi, -lo):.3g} (beyond {_MAX_LOSS:g}, "
            "where likelihood ratios overflow); such a mechanism gives no useful (ε, δ) guarantee")
    return lo, hi


def _coarse(curve: PairCurve, rng: tuple[float, float]) -> StepPLD:
    lo, hi = rng
    h = max((hi - lo) / _MIN_POINTS, 1e-9)
    return StepPLD.from_curve(curve, h, lo, hi, "upper")



def _orientation_sets(events: Sequence[PldEvent]) -> dict[str, list[tuple[PairCurve, int]]]:
    # the orientations (splits) of the asymmetric events; symmetric events join every one. A
    # neighbouring pair is the same for every step, so each orientation is composed over the
    # whole ledger and the profile is their maximum: every asymmetric event must have them all
    keysets = {frozenset(ev.curves) for ev in events if "symmetric" not in ev.curves}
    if len(keysets) > 1:
        raise InvalidParameterError("events", "asymmetric events with the same orientations "
                                    "(one group size and one kind of group pair per ledger)",
                                    sorted(sorted(k) for k in keysets))
    names = tuple(sorted(next(iter(keysets)), key=lambda n: (n != "remove", n != "add", n))
                  ) if keysets else ("symmetric",)
    out: dict[str, list[tuple[PairCurve, int]]] = {}
    for name in names:
        items = []
        for ev in events:
            curve = ev.curves.get(name, ev.curves.get("symmetric"))
            items.append((curve, ev.count))
        out[name] = items
    return out


def _log_total_variation(items) -> float:
    """Upper bound on log Σ count · TV(step) (the union bound on the composed TV)."""
    terms = [math.log(count) + float(curve.log_upper(np.array([0.0]))[0])
             for curve, count in items]
    total = float(np.logaddexp.reduce(np.array(terms)))
    return total + 8 * ULP * (1.0 + abs(total)) + len(terms) * ULP


#: Below this δ the compositions are tilted towards the upper tail (the FFT's absolute error
#: would otherwise swamp δ).
_TILT_BELOW = 1e-9



def _step(curve: PairCurve, h: float, lo: float, hi: float, kind: str, negligible: float):
    """One step discretised. ``negligible`` (the tail budget over T h): the lower side's mass
    that may skip the merging, and, times h/4, the upper side's ``tolerance`` (its curve within
    tail/(4T) of connect-the-dots through every grid point: a quarter of the tail budget over
    T steps)."""
    report("discretising a step's privacy loss (%s side, grid %.3g)", kind, h)
    tolerance = 0.25 * negligible * h
    place = _placement(curve, h)
    if place is None:
        offset = _atom_offset(curve, h, lift=0.0 if kind == "upper" else ATOM_LIFT)
        return StepPLD.from_curve(curve, h, lo, hi, kind, negligible=negligible,
                                  offset=offset or 0.0, atoms=_finite_atoms(curve),
                                  tolerance=tolerance)
    lo, hi = _aligned_range(curve, lo, hi, h)
    return StepPLD.from_curve(curve, h, lo, hi, kind, offset=place[0], kink_error=place[1],
                              tolerance=tolerance)


def _compose_set(items, ranges, h: float, kind: str, tail: float,
                 tilt: float = 0.0, cache=None, negligible_steps: int | None = None,
                 size_only: bool = False, ladder: bool = False,
                 tail_at: float = 0.0) -> ComposedPLD:
    total = sum(count for _, count in items)
    # atoms of the lower side that skip the merging lower δ by at most T h (their mass)
    negligible = tail / ((total if negligible_steps is None else negligible_steps) * h)
    if cache is None or size_only:
        steps = []
        for (curve, count), (lo, hi) in zip(items, ranges, strict=True):
            steps.append((_step(curve, h, lo, hi, kind, negligible), count))
        if not size_only:
            report("composing %s steps (%s side, grid %.3g)", f"{total:,}", kind, h)
        return compose(steps, log_tail_tol=math.log(tail), tilt=tilt, size_only=size_only,
                       ladder=ladder, tail_at=tail_at)
    steps = []
    keys = []
    for (curve, count), (lo, hi) in zip(items, ranges, strict=True):
        # (both sides use ``negligible``: the lower side's unmerged mass, the upper side's
        # tolerance)
        key = (cache.token(curve), h, lo, hi, kind, negligible)
        step = cache.memo("step", key, lambda c=curve, lo=lo, hi=hi: _step(
            c, h, lo, hi, kind, negligible))
        steps.append((step, count))
        keys.append((key, count))
    def composed():
        report("composing %s steps (%s side, grid %.3g)", f"{total:,}", kind, h)
        return compose(steps, log_tail_tol=math.log(tail), tilt=tilt, ladder=ladder,
                       tail_at=tail_at)

    return cache.memo("composed", (tuple(keys), tail, tilt, ladder, tail_at), composed)



class _Fitter:
    """Compositions that fit in memory: ``compose(h)`` at spacing h, or — when its window
    would exceed :data:`~privamp.pld.distribution.MAX_FFT` points (refused by
    :func:`~privamp.pld.distribution.compose` before anything of that size is allocated) — at
    the finest coarser spacing that fits. A coarser grid is as certified as a finer one, only
    less tight; the engine reports the wider bracket and says so instead of refusing. With a
    fixed ``grid_step`` nothing is coarsened: the refusal names the spacing that fits (advice
    that works when followed, tested)."""

    def __init__(self, items, fixed: bool, advice=None):
        self.items = items
        self.fixed = fixed
        self.advice = advice  # h ↦ a spacing that fits every composition (fixed grids)
        self.coarsened = False  # did the memory bound coarsen any composition?
        self.used: dict[str, float] = {}  # kind → coarsest spacing used by a composition

    def __call__(self, compose_at, h: float, kind: str):
        asked = h
        for _ in range(4):
            try:
                comp = compose_at(h)
            except GridTooLargeError as exc:
                need = exc.min_spacing()
                if self.fixed:
                    raise _grid_step_error(asked, self.advice(need)) from None
                h = max(_snap_up(need, self.items), h * 1.25)
                self.coarsened = True
                continue
            self.used[kind] = max(self.used.get(kind, 0.0), h)
            return comp
        raise NumericalError(f"no grid coarser than {asked:.3g} kept the composed privacy loss "
                             f"within {_distribution.MAX_FFT:,} points; the rdp backend "
                             "accounts any number of steps")


def _floor_bits(x: float, bits: int = 6) -> float:
    """``x`` > 0 rounded down to ``bits`` significant bits (exact: a mantissa of ``bits`` bits
    times a power of 2)."""
    m, e = math.frexp(x)
    return math.ldexp(math.floor(m * 2**bits) / 2**bits, e)


def _plan(horizon: int, total: int) -> int:
    """The run a ``horizon`` plans for: H, doubled until it covers the ``total`` steps of the
    ledger (a run longer than planned keeps sharing its grids, one doubling at a time)."""
    plan = horizon
    while plan < total:
        plan *= 2
    return plan


def _grid_step_error(grid_step: float, need: float) -> InvalidParameterError:
    # two significant digits, rounded up: following the advice gives a grid that fits
    exp10 = math.floor(math.log10(need)) - 1
    advice = math.ceil(need / 10.0**exp10 * (1 + 1e-12)) * 10.0**exp10
    return InvalidParameterError(
        "grid_step", f"at least {advice:.2g} for this composition (the memory bound: "
        f"{_distribution.MAX_FFT:,} grid points)", grid_step)


def _fitting_spacing(h: float, sets, ranges_by_set, compose_size) -> float:
    """A spacing ≥ h at which every orientation's composition fits in memory (both kinds), the
    advice of a refused ``grid_step`` (tests follow it). ``compose_size(name, h, kind)``
    returns (FFT length, window width in loss units) without transforming. The window is
    sized on a coarse grid (a few thousand points a step: quick, and its connect-the-dots pair
    dominates, so its Chernoff window is if anything wider) and the spacing set so that it
    fills at most 70 % of the bound."""
    h = max(h, _min_step_spacing(ranges_by_set))
    span_max = max(hi - lo for ranges in ranges_by_set.values() for lo, hi in ranges)
    probe = max(h, span_max / _MIN_POINTS)
    for _ in range(8):
        need = h
        too_big = False
        for name in sets:
            for kind in ("upper", "lower"):
                n, span = compose_size(name, probe, kind)
                need = max(need, span / (0.7 * _distribution.MAX_FFT))
                too_big = too_big or n > _distribution.MAX_FFT
        if not too_big:
            return need
        probe = max(need, probe * 2)
    return max(need, probe)


def _min_spacing(ranges_by_set, grid_step: float | None, advice=None) -> float:
    """The finest spacing whose step grids fit in memory; a fixed ``grid_step`` finer than it
    is refused before any step is discretised, naming a spacing that fits (``advice``)."""
    need = _min_step_spacing(ranges_by_set)
    if grid_step is not None and grid_step < need:
        raise _grid_step_error(grid_step, advice(need) if advice is not None else need)
    return need


def _width_note(low: float, upper: float, target: float, coarsened: bool, what: str) -> str:
    """The warning text (also :attr:`PldResult.accuracy_note`) for a bracket wider than its
    target, or "" when it is not; ``coarsened``: whether the memory bound coarsened the grid of
    the pass whose lower side gave ``low``."""
    if low is None or not math.isfinite(upper) or upper - low <= target * (1 + 1e-9):
        return ""
    why = (f"the memory bound ({_distribution.MAX_FFT:,} grid points) allows no finer grid"
           if coarsened else "refinement of the lower side stopped at its FFT budget")
    rel = (upper - low) / upper if upper > 0 else math.inf
    return (f"the certified {what} bracket [{low:.6g}, {upper:.6g}] is {upper - low:.3g} wide "
            f"({100 * rel:.3g} % of the upper end), wider than the target {target:.3g}: {why}; "
            "both ends are certified")


# ------------------------------------------------------------------------------------------
# public entry points
# ------------------------------------------------------------------------------------------


def _range_of(curve: PairCurve, log_budget: float, cache) -> tuple[float, float]:
    if cache is None:
        return _step_range(curve, log_budget)
    return cache.memo("step_range", (cache.token(curve), log_budget),
                      lambda: _step_range(curve, log_budget))


def _coarse_summary(curve: PairCurve, rng: tuple[float, float], cache, grid: np.ndarray):
    """(mean, variance, log-MGF on the λ ``grid``) of the coarse step on ``rng``."""

    def compute():
        step = _coarse(curve, rng)
        mean, var = step.mean_var()
        return mean, var, step.log_mgf(grid)

    if cache is None:
        return compute()
    return cache.memo("coarse", (cache.token(curve), rng, float(grid[0])), compute)


def _prepare(events: Sequence[PldEvent], tail_total: float, cache=None,
             range_steps: int | None = None):
    """Orientation sets, step ranges (tail budget ``tail_total / (4 · range_steps)``, default
    the number of steps), and the composed mean, variance and log-MGF of each set."""
    if not events:
        raise InvalidParameterError("events", "at least one composed event", "[]")
    total = sum(ev.count for ev in events)
    sets = _orientation_sets(events)
    # in logarithms: with δ near 1e-300 and many steps the budget is below the double range
    log_budget = math.log(tail_total) - math.log(4.0 * (total if range_steps is None
                                                         else range_steps))
    ranges_by_set = {name: [_range_of(c, log_budget, cache) for c, _ in items]
                     for name, items in sets.items()}
    moments = {}
    mgfs = {}
    grid = _lambda_grid(ranges_by_set)
    for name, items in sets.items():
        mean = var = 0.0
        mgf = np.zeros(grid.size)
        for (curve, count), rng in zip(items, ranges_by_set[name], strict=True):
            m, v, step_mgf = _coarse_summary(curve, rng, cache, grid)
            mean += count * m
            var += count * v
            mgf += count * step_mgf
        moments[name] = (mean, var)
        mgfs[name] = mgf
    return total, sets, ranges_by_set, moments, mgfs, grid




# ------------------------------------------------------------------------------------------
# a single step: the pair's own certified values, no discretisation
# ------------------------------------------------------------------------------------------

#: grid spacing reported for a single step answered from the curve's values (no grid)
_NO_GRID = 0.0


def _without_identical(events: Sequence[PldEvent]) -> list[PldEvent]:
    """The events whose pair is not identical. A certified upper value 0 at ε = 0 in every
    orientation means TV(P, Q) = D_1(P‖Q) = 0, i.e. P = Q: the step is the identity of
    composition (randomized response with p = ½, a zero-sensitivity mechanism). Composing its
    point mass at loss 0 on ever finer grids only produced rounding noise (a lower end of 5e-10
    above an upper end of 1e-15 for ten such steps)."""
    zero = np.array([0.0])
    return [ev for ev in events
            if not all(float(c.log_upper(zero)[0]) == -math.inf for c in ev.curves.values())]


def _identical_result(events: Sequence[PldEvent], lower: bool, start: float) -> PldResult:
    """Every step's pair is identical: δ(ε) = 0 for every ε ≥ 0, and ε(δ) = 0, exactly."""
    name = next(iter(events[0].curves))
    return PldResult(Bracket(0.0 if lower else None, 0.0), name, _NO_GRID,
                     _NO_GRID if lower else None, {}, time.perf_counter() - start)


def _single_step(events: Sequence[PldEvent], grid_step: float | None) -> dict | None:
    """The curves of a ledger that is one step of one pair (``None`` otherwise, or when a fixed
    ``grid_step`` asks for the discretised computation).

    One step needs no composition: δ(ε) of the pair is its hockey-stick curve at e^ε, the
    maximum over the orientations, and the curves' certified upper and lower values bracket it
    directly — tighter than any discretisation of the same curves, and without its cost (a
    MUST.WW(1000, 500, 10) step took ~1 min on the grid)."""
    if grid_step is not None or len(events) != 1 or events[0].count != 1:
        return None
    return dict(events[0].curves)


def _log_values(curves: dict, eps: float, lower: bool) -> dict[str, float]:
    x = np.array([eps])
    return {name: float((c.log_lower if lower else c.log_upper)(x)[0])
            for name, c in curves.items()}


def _exp_up(log_value: float) -> float:
    """e^x rounded up (exp is within 1 ulp), and never 0 for a finite x: a δ below the
    smallest subnormal is reported as that subnormal, not as 0."""
    if log_value == -math.inf:
        return 0.0
    value = math.exp(log_value) * (1 + 4 * ULP)
    return min(max(value, math.ulp(0.0)), 1.0)


def _exp_down(log_value: float) -> float:
    return max(math.exp(log_value) * (1 - 4 * ULP), 0.0) if log_value > -math.inf else 0.0


def _single_delta(curves: dict, eps: float, start: float) -> PldResult:
    ups = _log_values(curves, eps, lower=False)
    worst = max(ups, key=ups.get)
    upper = _exp_up(ups[worst])
    if not all(c.convex for c in curves.values()):
        return PldResult(Bracket(None, upper), worst, _NO_GRID, None, {},
                         time.perf_counter() - start, _NOT_CONVEX)
    # δ(ε) is the largest orientation's value: each orientation's lower value bounds it below
    lower = _checked_lower(_exp_down(max(_log_values(curves, eps, lower=True).values())), upper)
    return PldResult(Bracket(lower, upper), worst, _NO_GRID, _NO_GRID, {},
                     time.perf_counter() - start)


def _single_epsilon(curves: dict, delta: float, lower: bool, start: float) -> PldResult | None:
    """ε(δ) of one step by bisection on the certified values: an ε whose upper δ is ≤ ``delta``
    is a valid upper end (the true δ there is ≤ δ, so the smallest such ε is no larger); an ε
    whose lower δ is > ``delta`` is a valid lower end (δ is non-increasing in ε, so every
    smaller ε is infeasible too). Each end is the bisection's certified point, whatever the
    rounding of the values in between. ``None`` (use the grid) if no ε ≤ 2^12 is feasible."""
    log_d = math.log(delta)

    def log_up(e: float) -> float:
        return max(_log_values(curves, e, lower=False).values())

    def log_low(e: float) -> float:
        return max(_log_values(curves, e, lower=True).values())

    hi = 0.0
    if log_up(0.0) > log_d:
        hi = 1.0
        while log_up(hi) > log_d:
            hi *= 2.0
            if hi > 4096.0:
                return None
    upper = float(bisect_threshold(lambda x, idx: np.array([log_up(float(x[0])) <= log_d]),
                                   0.0, hi, rtol=1e-12, atol=1e-300)) if hi > 0 else 0.0
    ups = _log_values(curves, upper, lower=False)
    worst = max(ups, key=ups.get)
    if not lower:
        return PldResult(Bracket(None, upper), worst, _NO_GRID, None, {},
                         time.perf_counter() - start)
    if not all(c.convex for c in curves.values()):
        return PldResult(Bracket(None, upper), worst, _NO_GRID, None, {},
                         time.perf_counter() - start, _NOT_CONVEX)
    low = 0.0
    if upper > 0 and log_low(0.0) > log_d:
        # the largest point known infeasible: bisect for the complement (the invariant kept
        # is "lower value > δ" at the returned end, found as the feasible end of x ↦ −x)
        low = -float(bisect_threshold(
            lambda x, idx: np.array([log_low(-float(x[0])) > log_d]), -upper, 0.0,
            rtol=1e-12, atol=1e-300))
    return PldResult(Bracket(_checked_lower(low, upper), upper), worst, _NO_GRID, _NO_GRID, {},
                     time.perf_counter() - start)


def _trivial_cases(events: Sequence[PldEvent], grid_step: float | None, lower: bool,
                   start: float) -> tuple[Sequence[PldEvent], dict | None, PldResult | None]:
    """What :func:`pld_epsilon` and :func:`pld_delta` settle before any grid: an empty ledger
    is refused; unless ``grid_step`` fixes the grid, steps whose pair is identical are dropped
    (:func:`_without_identical`), and if none is left the answer is exactly 0. Returns
    ``(events, single, result)``: the events left, the curves of a ledger of one step of one
    pair (:func:`_single_step`) or ``None``, and the final result or ``None``."""
    if not events:
        raise InvalidParameterError("events", "at least one composed event", "[]")
    if grid_step is None:
        kept = _without_identical(events)
        if not kept:
            return events, None, _identical_result(events, lower, start)
        events = kept
    return events, _single_step(events, grid_step), None


#: How far below an orientation's Chernoff estimate of ε its tilted upper side asks the
#: window's tails to be negligible, in units of 1/λ (:func:`_tail_from`). The estimate lay
#: 3.5–7.2/λ above the certified upper end in the cases measured (σ 0.5–2, q 1e-4–0.1,
#: T 10–10⁴, δ 1e-10–1e-300, Gaussian and Laplace).
_CHERNOFF_MARGIN = 8.0


def _tail_from(chernoff: float, tilt: float) -> float:
    """The ε from which a tilted upper side's window tails must be negligible
    (:func:`~privamp.pld.distribution.compose`'s ``tail_at``): the Chernoff estimate less
    :data:`_CHERNOFF_MARGIN`/λ, at least 0; 0 without a tilt. A choice of cost only."""
    if tilt <= 0 or not math.isfinite(chernoff):
        return 0.0
    return max(chernoff - _CHERNOFF_MARGIN / tilt, 0.0)


def _upper_epsilon(delta: float, sets: dict, ranges_by_set: dict, mgfs: dict,
                   lam_grid: np.ndarray, h_u: float, h_l: float, tilts: dict, compose_set,
                   sizes: dict, estimate_tails: bool = True,
                   search_from: dict | None = None) -> dict[str, float]:
    """The upper stage of :func:`pld_epsilon`: a certified upper ε per orientation (only the
    largest matters). With one orientation set it is composed on the fine grid ``h_u``. With
    two, both could be screened on a coarser grid (a coarser upper side is still an upper
    bound): the one with the larger Chernoff estimate of ε is composed on the fine grid first
    (when the estimates are within 2 %, every orientation is screened first and the worst
    screen goes first); another is refined only if its screen exceeds the largest value so
    far, and otherwise keeps its screen.

    A tilted composition (δ < 1e-9) asks its window's tails to be negligible only from
    :func:`_tail_from` of its Chernoff estimate on (``estimate_tails``; the planned and shared
    grids of a horizon or of ``shared_grid`` keep 0, so that their windows do not move with
    the estimate). Where the certified ε lands below that point, the tails might not be
    negligible at it: the orientation is composed again with tails negligible from ε = 0
    (the smaller of the two certified ends is kept)."""
    with np.errstate(invalid="ignore"):
        chernoff = {name: float(np.nanmin((m - math.log(delta)) / lam_grid))
                    for name, m in mgfs.items()}
    tail_from = {name: (_tail_from(chernoff[name], tilts[name]) if estimate_tails else 0.0)
                 for name in sets}

    start = search_from or {}

    def upper_at(name: str, h: float, key: str) -> float:
        at = tail_from[name]
        # (a screen's spacing is not the upper side's: the memory bound's record skips it)
        record = "upper/screen" if key.endswith("/screen") else "upper"
        comp = compose_set(sets[name], ranges_by_set[name], h, "upper", tilts[name], at,
                           record)
        eps = comp.epsilon(delta, start.get(name, 0.0))
        sizes[key] = comp.fft_size
        if at > 0 and not eps < math.inf or eps < at:
            # no point meets δ (the tails of the narrower window may rule everywhere), or the
            # end lies below the point the window was chosen for: tails negligible from 0
            comp = compose_set(sets[name], ranges_by_set[name], h, "upper", tilts[name], 0.0,
                               record)
            eps = min(eps, comp.epsilon(delta))
            sizes[key] = comp.fft_size
        return eps

    uppers = {}
    if len(sets) == 1:
        (name,) = sets
        uppers[name] = upper_at(name, h_u, f"upper/{name}")
        return uppers
    order = sorted(sets, key=lambda name: -chernoff[name])
    screened: dict = {}
    if chernoff[order[0]] - chernoff[order[-1]] < 0.02 * abs(chernoff[order[0]]):
        # too close to call: screen every orientation first, refine the worst
        for name in order:
            screened[name] = upper_at(name, 8 * h_u, f"upper/{name}/screen")
        order = sorted(order, key=lambda name: -screened[name])
    first = order[0]
    uppers[first] = upper_at(first, h_u, f"upper/{first}")
    if first in screened:
        uppers[first] = min(uppers[first], screened[first])
    for name in order[1:]:
        if name in screened:
            screen = screened[name]
        else:
            gap = (chernoff[first] - chernoff[name]) / max(abs(chernoff[first]), 1e-300)
            # (a coarse screen only on spacings the automatic grids use, at most 0.05)
            for factor in [f for f in _screen_factors(gap) if f == 8 or f * h_u <= 0.05]:
                screen = upper_at(name, factor * h_u, f"upper/{name}/screen")
                if screen <= max(uppers.values()):
                    break
        if screen <= max(uppers.values()):
            uppers[name] = screen
            continue
        uppers[name] = min(upper_at(name, h_u, f"upper/{name}"), screen)
    return uppers


#: The coarsest screen of an orientation that does not decide is this many times the upper
#: grid spacing (:func:`_screen_factors`).
_MAX_SCREEN = 32


def _screen_factors(gap: float) -> list[int]:
    """The spacings, in units of the upper one, at which :func:`_upper_epsilon` screens an
    orientation whose Chernoff estimate of ε lies ``gap`` (relative) below the deciding one's:
    8×, and first the coarsest power of 2 up to :data:`_MAX_SCREEN` whose discretisation error
    (∝ spacing², :data:`~privamp.pld.grids.UPPER_ERROR` at 1×) is at most a quarter of the gap.
    The 10⁶-step Poisson-Gaussian's add/remove orientation lies 3 % below (its 8× screen was a
    207,360-point composition). A choice of cost only: every screen is an upper bound, and
    one that does not clear the deciding value is followed by the next."""
    factor = 8
    while 2 * factor <= _MAX_SCREEN and (2 * factor) ** 2 * _grids_mod.UPPER_ERROR <= gap / 4:
        factor *= 2
    return [factor, 8] if factor > 8 else [8]


def pld_epsilon(events: Sequence[PldEvent], delta: float, *, eps_error: float | None = None,
                upper_error: float | None = None, grid_step: float | None = None,
                lower: bool = True, cache=None, shared_grid: bool = False,
                horizon: int | None = None) -> PldResult:
    """Certified bracket on the smallest ε with δ(ε) ≤ ``delta`` for the composition.

    ``eps_error``: target width of the bracket (default 0.1 % of ε); ``upper_error``: target
    distance of the upper end from the exact value, estimated (default 0.001 % of ε);
    ``grid_step``: a fixed grid spacing instead (both sides); ``lower=False`` skips the lower end
    (``bracket.lower`` is then ``None``; calibration only needs the upper end).

    ``cache`` (an :class:`~privamp.cache.AccountingCache`) memoises step ranges, discretised
    steps and compositions across calls; the result is the same with or without it.

    ``shared_grid=True`` rounds the choices that only set the accuracy so that neighbouring
    queries land on the same grids and, with a ``cache``, share their compositions: the tail
    budget down to a power of 10^6, the step ranges to the tail budget of a power of 8 steps (at
    least the actual number), the upper grid spacing to the finest over the δ's that share the
    tail budget, both grid spacings and a tilt (δ < 1e-9) down to a power of 2. Every choice is
    at least as fine as the default's (a different tilt only moves the rounding errors), so the
    bracket is certified and at least as accurate as the target, but its digits differ slightly
    from the default's (both enclose the exact ε). The result depends only on the arguments,
    never on what else was computed.

    ``horizon=H`` plans the grids for a run of H steps (a ledger asked for ε after every
    epoch): every choice that only sets the accuracy — tail budgets and step ranges, both grid
    spacings, the tilt, the FFT lengths (:func:`~privamp.pld.distribution.ladder_length`) — is
    made as if the ledger's events had been scaled to the plan P (H, doubled until it covers
    the ledger), so that it is the same for every number of steps up to P. With a ``cache``
    the queries of a growing ledger then reuse the previous queries' step ranges, discretised
    steps, tilted steps, their transforms and MGFs, and only the composition at the new count
    (one power of the spectrum and one inverse transform per orientation) is new. The grids are
    those of the larger composition, so the bracket is as certified as the default's and
    usually narrower; like ``shared_grid``, its digits are not the default's, and it depends
    only on the arguments.
    """
    delta = check_real("delta", delta, "(0, 1)")
    if delta < MIN_DELTA:
        raise InvalidParameterError(
            "delta", f"at least {MIN_DELTA:g} for the pld backend", delta,
            detail="below it the error terms of a certified δ are not representable in double "
                   "precision")
    eps_error = check_optional_real("eps_error", eps_error, "(0, inf)")
    upper_error = check_optional_real("upper_error", upper_error, "(0, inf)")
    grid_step = check_optional_real("grid_step", grid_step, "(0, 1]")
    if horizon is not None:
        horizon = check_int("horizon", horizon, "[1, inf)")
    start = time.perf_counter()
    # the tail budget: a millionth of δ (every error term it sets is counted in the certified
    # δ, so any budget is safe; this one keeps them ~1e-6 of δ, far inside the bracket target),
    # at most 1e-9. Large δ's need no more: a cap of 1e-12 forced extended-precision transforms
    # at δ = 1e-3 and small rates for no gain (σ 0.5, q 1e-4, T 1e3: 3.1 → 1.5 s, the upper end
    # 1.2e-5 relative looser, within UPPER_ERROR's reach)
    tail_total = min(1e-6 * delta, 1e-9)
    range_steps = None
    if shared_grid:
        tail_total = floor_pow(tail_total, 1e6)
        range_steps = _ceil_pow(sum(ev.count for ev in events), 8)
    plan = None
    if horizon is not None:
        plan = _plan(horizon, sum(ev.count for ev in events))
        # the tail budget of a step shared out over P ≥ T steps: smaller shares, still within
        # the budget over the T actual steps (and the same step ranges for every T ≤ P)
        range_steps = max(range_steps or 0, plan)
    # a mass at +∞ above δ: no finite ε is certified (and none exists if its lower value is)
    inf_sets = _orientation_sets(events)
    log_d = math.log(delta)
    if any(_log_p_inf(items, lower=False) > log_d for items in inf_sets.values()):
        certain = any(_log_p_inf(items, lower=True) > log_d for items in inf_sets.values())
        return PldResult(Bracket(math.inf if certain else 0.0, math.inf), "", math.nan, None,
                         {}, time.perf_counter() - start)
    # ε = 0 is certified when the composition's total variation is at most δ: for any pair of
    # neighbours, TV of the T-fold product is at most the sum of the steps' TVs (a coupling per
    # step), and each step's TV is its curve at ε = 0 (rounded up). Tiny sampling rates reach
    # it (q = 1e-6: a 2^23-point grid and 20 s for the same answer)
    log_tv = max(_log_total_variation(items) for items in inf_sets.values())
    if log_tv <= log_d - 1e-9:
        return PldResult(Bracket(0.0, 0.0), "", math.nan, None, {}, time.perf_counter() - start)
    events, single, done = _trivial_cases(events, grid_step, lower, start)
    if done is not None:
        return done
    if single is not None:
        res = _single_epsilon(single, delta, lower, start)
        if res is not None:
            return res
    total, sets, ranges_by_set, moments, mgfs, lam_grid = _prepare(events, tail_total, cache,
                                                                   range_steps)
    # without a lower end there is no width to aim at: the upper side's accuracy alone rules
    width_goal = eps_error if (lower or eps_error is not None) else math.inf
    _, mean, var, lam, slope, h_u, h_l, target_w = _choose_grids(
        delta, total, moments, mgfs, ranges_by_set, width_goal, upper_error, grid_step,
        lam_grid)
    h_u_own = h_u  # this ledger's own upper spacing (the planned lower grid's floor)
    if plan is not None and grid_step is None:
        # the spacings of the planned run: the ledger's moments and log-MGFs scaled to P
        # steps (the certificate never depends on them, only the cost and tightness), also
        # when the ledger has reached P (its own spacings would then differ from the planned
        # ones in their last bits)
        scale = plan / total
        moments_p = {k: (m * scale, v * scale) for k, (m, v) in moments.items()}
        mgfs_p = {k: v * scale for k, v in mgfs.items()}
        planned = _choose_grids(delta, plan, moments_p, mgfs_p, ranges_by_set, width_goal,
                                upper_error, None, lam_grid)
        # rounded down to 6 significant bits (at most 1.6 % finer: cost only): the scaled
        # moments of neighbouring counts differ in their last bits, and a spacing one ulp
        # apart is a new grid, whose steps would be discretised again
        h_u, h_l = _floor_bits(planned.h_upper), _floor_bits(planned.h_lower)
    else:
        moments_p, mgfs_p = moments, mgfs
    tilts = {name: (lam[name] if delta < _TILT_BELOW else 0.0) for name in mgfs}
    if plan is not None:
        # the tilt must suit the T steps composed (the plan's would be far too small for a
        # horizon far beyond them): this ledger's own, rounded down to a power of 2 so that
        # neighbouring counts share the tilted steps (any tilt ≥ 0 is exact)
        tilts = {name: (floor_pow(t, 2.0) if t > 0 else 0.0) for name, t in tilts.items()}
    if shared_grid and grid_step is None:
        # the finest grids over the δ's of this tail budget, so that they all share them
        for ref in _reference_deltas(tail_total):
            grids = _choose_grids(ref, max(total, plan or 0), moments_p, mgfs_p,
                                  ranges_by_set, eps_error, upper_error, None, lam_grid)
            h_u, h_l = min(h_u, grids.h_upper), min(h_l, grids.h_lower)
        tilts = {name: (floor_pow(t, 2.0) if t > 0 else 0.0) for name, t in tilts.items()}
    all_items = [item for items in sets.values() for item in items]
    if grid_step is None:
        h_u, h_l = _snap(h_u, all_items), _snap(h_l, all_items)
    # the step grids must fit in memory (refused before allocating with a fixed grid_step;
    # otherwise the grids are made coarser, and the composed window is fitted by ``fit``)
    def advice(h):
        return _fitting_spacing(h, sets, ranges_by_set, lambda name, hh, kind: _compose_set(
            sets[name], ranges_by_set[name], hh, kind, tail_total, tilts[name], None,
            range_steps, size_only=True))

    h_min = _min_spacing(ranges_by_set, grid_step, advice)
    if h_u < h_min:
        h_u = _snap_up(h_min, all_items)
    if h_l < h_min:
        h_l = _snap_up(h_min, all_items)
    sizes: dict = {}
    fit = _Fitter(all_items, grid_step is not None, advice)

    def compose_set(items, ranges, h, kind, tilt, tail_at=0.0, record=None):
        return fit(lambda hh: _compose_set(items, ranges, hh, kind, tail_total, tilt, cache,
                                           range_steps, ladder=plan is not None,
                                           tail_at=tail_at), h, record or kind)

    # the windows' tails negligible from an estimate of ε on, not from 0 (tilted compositions
    # only; the planned and shared grids keep theirs fixed)
    estimate_tails = plan is None and not shared_grid
    # where the δ searches may start: 3 standard deviations below the Gaussian estimate of ε
    # (a cost choice only, :meth:`~privamp.pld.distribution.ComposedPLD.epsilon`)
    z = float(-_special.ndtri(delta))
    search_from = {name: max(mean + (z - 3.0) * math.sqrt(max(var, 0.0)), 0.0)
                   for name, (mean, var) in moments.items()}
    uppers = _upper_epsilon(delta, sets, ranges_by_set, mgfs, lam_grid, h_u, h_l, tilts,
                            compose_set, sizes, estimate_tails, search_from)
    h_u = max(h_u, fit.used.get("upper", h_u)) if fit.coarsened else h_u
    worst = max(uppers, key=uppers.get)
    upper = uppers[worst]
    low = None
    note = ""
    accuracy = ""
    if lower and not all(curve.convex for curve, _ in sets[worst]):
        lower, note = False, _NOT_CONVEX
    if lower and math.isfinite(upper):
        if shared_grid:
            pass  # the shared grid and its target stay
        elif eps_error is None and grid_step is None:
            # the relative target refers to the certified upper end (5 % margin on the estimate)
            target_w = 0.95e-3 * max(upper, _EPS_FLOOR)
            target_u = upper_error or _grids_mod.UPPER_ERROR * max(upper, _EPS_FLOOR)
            h_own = _grid_for(max(target_w - target_u, target_w / 2) / 2, total, slope)
            if plan is None:
                h_own = _clip_grid(max(h_own, h_u), ranges_by_set, total)
            else:
                # the planned grid, or this ledger's own rounded down to a power of 2 where it
                # is finer (a smaller target at fewer steps, for losses whose error is linear
                # in the spacing): the same for the queries of a stretch of the plan. Like the
                # default, not finer than the ledger's own upper spacing here (an ε of 0 would
                # otherwise aim at a width of 1e-12); the bulk rule below may still go finer, to
                # the planned upper spacing (cost only: every spacing is certified)
                h_own = min(h_l, floor_pow(_clip_grid(max(h_own, h_u_own), ranges_by_set,
                                                       total), 2.0))
            h_l = _snap(_resolve_bulk(h_own, h_u, ranges_by_set), all_items)
        if fit.coarsened:
            h_l = max(h_l, h_u)  # the memory bound already decided for a coarser window
        if h_l < h_min:  # the clip to a minimum of points per step can go below it
            h_l = _snap_up(h_min, all_items)

        # the lower stage: composed for the orientation that decides the upper end (a lower
        # bound of one orientation bounds the maximum), refined while the bracket is too wide
        # a tilted lower side reads δ near the lower end, at most the target width below the
        # upper one when the target is met: its tails negligible from 4 widths below on (a
        # lower end further down is certified all the same, with tails maybe not negligible)
        lower_tail_at = (max(upper - 4 * target_w, 0.0)
                         if estimate_tails and tilts[worst] > 0 else 0.0)

        def lower_side(h):
            comp = compose_set(sets[worst], ranges_by_set[worst], h, "lower", tilts[worst],
                               lower_tail_at)
            return (_checked_lower(comp.epsilon(delta, search_from.get(worst, 0.0)), upper),
                    comp.fft_size, comp.h)

        low, h_l = _refine_lower(lower_side, h_l, upper, target_w, grid_step is not None,
                                 sizes, f"lower/{worst}", all_items,
                                 lambda h: _step_points(ranges_by_set, h))
        accuracy = _width_note(low, upper, target_w, fit.coarsened, "ε")
        if accuracy:
            warnings.warn(accuracy, AccuracyWarning, stacklevel=2)
    elif fit.coarsened and math.isfinite(upper):
        accuracy = (f"the memory bound ({_distribution.MAX_FFT:,} grid points) made the grid "
                    "coarser than the accuracy asked for; the upper end is certified")
    return PldResult(Bracket(low, upper), worst, h_u, h_l if lower else None, sizes,
                     time.perf_counter() - start, note, target_w, accuracy)


def _max_finite_loss(curve: PairCurve, cache) -> float | None:
    """A point M above every finite privacy loss of the pair (``None`` when none is certified:
    unbounded losses, or values too coarse to tell). f(e^M) = P(L = ∞) + E_P[(1 − e^{M−L})₊;
    L < ∞], and the second term is positive as soon as any finite loss lies above M: so an upper
    value at M no larger than a lower value of P(L = ∞) leaves no finite mass above M. The
    candidate is the step's right end at a tail budget of 1e-300 (that end is found to 1e-6
    relative), moved up by 1e-5 relative; only the check certifies it."""
    try:
        hi = _range_of(curve, math.log(1e-300), cache)[1]
    except (LossRangeError, NumericalError):
        return None
    m = hi * (1 + 1e-5) + 1e-12
    x = np.array([m, np.inf])
    log_up = float(curve.log_upper(x[:1])[0])
    log_inf = float(curve.log_lower(x[1:])[0])
    return m if log_up <= log_inf else None


def _beyond_every_loss(events: Sequence[PldEvent], eps: float, cache, start: float
                       ) -> PldResult | None:
    """δ(ε) where ε is at least the sum of every step's largest finite loss: the composed loss
    is then at most ε unless one step's loss is +∞, so δ(ε) = P(composed loss = +∞) =
    1 − Π_i (1 − p_i)^{c_i} exactly, per orientation (the largest counts), bracketed from the
    steps' upper and lower values of p_i with every rounding directed. ``None`` when some
    step's loss is not certified to be bounded or ε is below the sum. Randomized response and
    the Laplace mechanism have bounded losses: δ(ε) of a composition beyond them took the full
    grid machinery (RR under Poisson(1e-6), 1,000 steps, ε = 10: 22 s for δ = 0)."""
    sets = _orientation_sets(events)
    # only pairs: a bound that is not a hockey-stick curve (not convex in e^ε) has no P(L = ∞)
    # and no losses to speak of (the grid gives it an upper end only)
    if not all(curve.convex for items in sets.values() for curve, _ in items):
        return None
    # first a necessary condition, one value per curve (the search for M costs many): a step
    # with finite mass above ε/c (the curve above its mass at ∞ there) has M > ε/c
    for items in sets.values():
        for curve, count in items:
            x = np.array([eps / count, np.inf])
            if float(curve.log_upper(x[:1])[0]) > float(curve.log_lower(x[1:])[0]):
                return None
    # per orientation: its composed loss is the sum of its own curves' losses
    for items in sets.values():
        maxima = []
        for curve, count in items:
            m = _max_finite_loss(curve, cache)
            if m is None:
                return None
            maxima.append(count * m)
        # each product and the sum within (n + 1) ulp relative
        if eps < math.fsum(maxima) * (1 + (len(maxima) + 2) * ULP):
            return None
    up_best, lo_best, worst = -1.0, 0.0, ""
    for name, items in sets.items():
        up = _exp_up(_log_p_inf(items, lower=False))
        if up > up_best:
            up_best, worst = up, name
        # each orientation's lower value bounds the maximum
        lo_best = max(lo_best, _exp_down(_log_p_inf(items, lower=True)))
    return PldResult(Bracket(_checked_lower(lo_best, up_best), up_best), worst, _NO_GRID,
                     _NO_GRID, {}, time.perf_counter() - start)


def pld_delta(events: Sequence[PldEvent], eps: float, *, delta_error: float | None = None,
              grid_step: float | None = None, cache=None) -> PldResult:
    """Certified bracket on δ(ε) of the composition at ``eps`` ≥ 0.

    ``delta_error``: target relative width of the bracket (default 1e-3); ``grid_step``: a
    fixed grid spacing instead; ``cache``: as for :func:`pld_epsilon` (same result).
    """
    eps = check_real("eps", eps, "[0, inf)")
    delta_error = check_optional_real("delta_error", delta_error, "(0, 1)")
    grid_step = check_optional_real("grid_step", grid_step, "(0, 1]")
    start = time.perf_counter()
    events, single, done = _trivial_cases(events, grid_step, True, start)
    if done is not None:
        return done
    if single is not None:
        return _single_delta(single, eps, start)
    if grid_step is None:
        beyond = _beyond_every_loss(events, eps, cache, start)
        if beyond is not None:
            return beyond
    rel = delta_error if delta_error is not None else 1e-3
    tail_total = 1e-15
    tilting = False
    best = None
    fit = None
    # d log(1/δ)/dε measured on a composed upper side (None: not yet; 0: measured, no use),
    # the passes left, and whether this pass recomposes on the measured slope's grid
    measured = None
    passes = 3
    refining = False
    # a pass composed only because the FFT's rounding bound would rule (below) is optional:
    # where it does not fit, or only on a coarser grid than asked, the pass before stands
    optional = False
    fallback = None  # (the pass before a coarsened optional one that stands, its coarsening)
    while passes > 0:
        passes -= 1
        this_refines, refining = refining, False
        this_optional, optional = optional, False
        total, sets, ranges_by_set, moments, mgfs, lam_grid = _prepare(events, tail_total, cache)
        tilts = ({name: _tilt_for_eps(m, eps, lam_grid) for name, m in mgfs.items()} if tilting
                 else {})
        mean, var = max(moments.values(), key=lambda mv: mv[0] + math.sqrt(mv[1]))
        z = max((eps - mean) / math.sqrt(max(var, 1e-300)), 1.0)
        lam = max(_tilt_for_eps(m, eps, lam_grid) for m in mgfs.values())
        all_items = [item for items in sets.values() for item in items]

        # grids that fit in memory (see pld_epsilon)
        def advice(h, sets=sets, ranges_by_set=ranges_by_set, tail_total=tail_total,
                   tilts=tilts):
            return _fitting_spacing(h, sets, ranges_by_set, lambda side, hh, kind: (
                _compose_set(sets[side], ranges_by_set[side], hh, kind, tail_total,
                             tilts.get(side, 0.0), None, size_only=True)))

        h_min = _min_spacing(ranges_by_set, grid_step, advice)

        def spacings(eps_error, total=total, lam=lam, z=z, var=var, lam_grid=lam_grid,
                     ranges_by_set=ranges_by_set, all_items=all_items, h_min=h_min):
            h_u, h_l, _ = _grids(total, _slope(lam, z, var, _max_tilt(lam_grid)),
                                 max(eps, 0.1), eps_error, eps_error / 10, grid_step)
            if grid_step is None:  # a spacing the user fixed is used as given
                h_u = _snap(_clip_grid(h_u, ranges_by_set, total), all_items)
                h_l = _snap(_clip_lower(h_l, h_u, ranges_by_set, total), all_items)
            h_u = h_u if h_u >= h_min else _snap_up(h_min, all_items)
            h_l = h_l if h_l >= h_min else _snap_up(h_min, all_items)
            return h_u, h_l

        # a relative error r in δ is an error of about r / (d log(1/δ) / dε) in ε; the slope
        # is about the Chernoff tilt λ above the composed loss's mean, and measured otherwise
        # (below it λ is about 0 while the slope, e^ε Q(L > ε) / δ(ε), is not: at ε = 0 the
        # total variation of a subsampled composition took a grid 100× too coarse, 7 % wide)
        h_u, h_l = spacings(rel / max(lam, 1e-3, measured or 0.0))
        fit = _Fitter(all_items, grid_step is not None, advice) if fit is None else fit
        fit.advice = advice
        # a discarded optional pass must not leave its coarsening on the pass that stands
        coarsened_before = fit.coarsened
        sizes: dict = {}
        uppers = {}
        comps = {}
        try:
            for name in sets:
                tilt = tilts.get(name, 0.0)
                # a tilted window needs its tails negligible only from the ε asked on
                comp = comps[name] = fit(
                    lambda hh, it=sets[name], rg=ranges_by_set[name], tl=tail_total,
                    tt=tilt: _compose_set(it, rg, hh, "upper", tl, tt, cache,
                                          tail_at=eps if tt > 0 else 0.0), h_u, "upper")
                value = comp.delta(eps)
                # (a composition whose sums are not finite certifies nothing: 1 is valid)
                uppers[name] = value if value <= 1.0 else 1.0
                sizes[f"upper/{name}"] = comp.fft_size
        except (NumericalError, InvalidParameterError):
            # the finer grid, or the tilted window, does not fit (with a fixed grid_step the
            # fitter refuses by name): the pass before gave a certified answer
            if not (this_refines or this_optional):
                raise
            fit.coarsened = coarsened_before
            break
        # this pass's spacing (coarser than asked when the memory bound coarsened it)
        asked = h_u
        h_u = max(h_u, max(c.h for c in comps.values()))
        worst = max(uppers, key=uppers.get)
        upper = uppers[worst]
        if this_optional and h_u > 1.2 * asked:
            if upper >= best[0]:
                # coarsened, and no better at the upper end: its grid would decide the lower
                # side, looser than the last
                fit.coarsened = coarsened_before
                break
            # coarsened but better: it stands, and its lower side is tried first. The pass
            # before was composed again because its FFT bound ruled, and that bound rules its
            # lower side too (σ 0.5, q 1e-4, 10⁴ steps, δ(4): 0.47 % wide in 61 s; the tilted
            # pass on a 1.7× coarser grid gives 0.0011 % in 18 s). Where the coarser grid
            # misses the target (it may not resolve the bulk of a step's loss), the lower side
            # of the pass before is composed as well, and the larger lower end kept. No pass
            # follows it (as none followed a coarsened pass before)
            fallback = (best, coarsened_before)
            best = (upper, worst, sets, ranges_by_set, tilts, tail_total, h_l, all_items, total,
                    var, mean, dict(sizes), h_u)
            break
        # every pass's upper end is certified: keep the smallest (a tilted pass can be worse,
        # e.g. at ε = 0 below its cut, where it reports 1)
        if best is None or upper < best[0]:
            best = (upper, worst, sets, ranges_by_set, tilts, tail_total, h_l, all_items, total,
                    var, mean, dict(sizes), h_u)
        if (measured is None and grid_step is None and 0 < upper < 1 and not fit.coarsened
                and upper * rel * 1e-3 >= tail_total):
            # the slope of log δ over 8 spacings of this pass's upper side; where the grid it
            # calls for is finer, the pass is composed again on it, once (only the spacings
            # change; each pass's upper end is certified and the smallest is kept). δ at
            # ε + 8h at the floor of the tail mass (beyond the top of the loss range) is no slope
            span = 8 * h_u
            further = comps[worst].delta(eps + span)
            measured = 0.0
            if further > 4 * tail_total:
                slope = math.log(upper / further) / span
                if slope > 4 * max(lam, 1e-3) and spacings(rel / slope)[0] < h_u / 1.5:
                    measured, refining = slope, True
                    passes += 1
                    continue
        # the FFT's rounding bound, absolute in the untilted composition, can be a sizeable
        # part of a small δ above _TILT_BELOW too: then tilt as well (σ 0.5, q 1e-4, 10⁴
        # steps, δ(4) ≈ 2.9e-9: a bound of 1.4e-11 on each side made the bracket 0.47 % wide,
        # and refining the lower side only widened it, 38 s)
        fft_heavy = (not tilting and 0 < upper < 1
                     and comps[worst].fft_error(eps) > 0.05 * rel * upper)
        del comps
        # the tail budget must be small against δ itself: redo with a budget scaled to it
        small = (upper < _TILT_BELOW or fft_heavy) and not tilting
        budget_met = (upper <= 0 or upper * rel * 1e-3 >= tail_total or tail_total <= 1e-290)
        if not small and budget_met:
            break
        optional = budget_met and not upper < _TILT_BELOW
        # a budget scaled to δ: to this pass's upper end; and where the budget itself may rule
        # that end (within 1e4 of it; each pass then moved it only 1e-7 down: σ 1, q 0.01, 10
        # steps, δ(70) ≈ 1.8e-291 was [0, 1.4e-30] after three passes), to the Chernoff bound
        # on δ(ε), e^{Λ(λ) − λε}, less e^{15} (it exceeded the certified upper ends by
        # e^{3.5}–e^{7.2} where measured)
        new_budget = upper * rel * 1e-4
        if upper < 1e4 * tail_total:
            with np.errstate(invalid="ignore", over="ignore"):
                log_chernoff = max(float(np.nanmin(m - lam_grid * eps)) for m in mgfs.values())
            new_budget = min(new_budget, math.exp(min(max(log_chernoff - 15.0, -745.0), 0.0))
                             * rel * 1e-4)
        tail_total = max(min(tail_total, new_budget), 1e-300)
        tilting = tilting or upper < _TILT_BELOW or fft_heavy
    (upper, worst, sets, ranges_by_set, tilts, tail_total, h_l, all_items, total, var, mean,
     sizes, h_u) = best
    if not all(curve.convex for curve, _ in sets[worst]):
        return PldResult(Bracket(None, upper), worst, h_u, None, sizes,
                         time.perf_counter() - start, _NOT_CONVEX)

    def lower_stage(config, coarsened, key):
        (_, worst_, sets_, ranges_, tilts_, tail_, h_l_, items_, *_, h_u_) = config
        if coarsened:
            h_l_ = max(h_l_, h_u_)
        tilt = tilts_.get(worst_, 0.0)

        def lower_side(h):
            comp = fit(lambda hh: _compose_set(sets_[worst_], ranges_[worst_], hh, "lower",
                                               tail_, tilt, cache,
                                               tail_at=eps if tilt > 0 else 0.0), h, "lower")
            value = comp.delta(eps)
            value = value if value >= 0.0 else 0.0  # not finite: 0 is a valid lower end
            return _checked_lower(value, upper), comp.fft_size, comp.h

        # the lower end bounds the worst orientation of the pass that set the upper end, and
        # hence δ (a lower bound of any orientation is one of the maximum)
        return _refine_lower(lower_side, h_l_, upper, rel * upper, grid_step is not None,
                             sizes, key, items_, lambda h: _step_points(ranges_, h))

    lower, h = lower_stage(best, fit.coarsened, f"lower/{worst}")
    coarsened = fit.coarsened  # of the pass whose lower side is kept (the width note says why)
    if fallback is not None and upper - lower > rel * upper:
        before, coarsened_before = fallback
        # whether the memory bound coarsened that pass or its lower side (fit.coarsened only
        # records, and is sticky: it is read around this stage alone, then restored)
        kept, fit.coarsened = fit.coarsened, coarsened_before
        low_before, h_before = lower_stage(before, coarsened_before,
                                           f"lower/{before[1]}/before")
        coarsened_fallback, fit.coarsened = fit.coarsened, kept or fit.coarsened
        if low_before > lower:
            lower, h, coarsened = low_before, h_before, coarsened_fallback
    accuracy = _width_note(lower, upper, rel * upper, coarsened, "δ")
    if accuracy:
        warnings.warn(accuracy, AccuracyWarning, stacklevel=2)
    return PldResult(Bracket(lower, upper), worst, h_u, h, sizes, time.perf_counter() - start,
                     "", rel * upper, accuracy)


# ------------------------------------------------------------------------------------------
# the whole profile at once: many ε from one composition per orientation and side
# ------------------------------------------------------------------------------------------


@dataclass
class PldProfile:
    """Certified values of δ(ε) at many ε from one composition per orientation and side
    (:func:`pld_profile`): ``upper[i]`` ≥ δ(eps[i]) ≥ ``lower[i]`` (``lower`` is ``None`` when
    a step's bound is not itself a privacy profile)."""

    eps: np.ndarray
    upper: np.ndarray
    lower: np.ndarray | None
    grid_upper: float
    grid_lower: float | None
    fft_sizes: dict = field(default_factory=dict)
    seconds: float = 0.0
    lower_note: str = ""
    #: each orientation's own (upper, lower or None) values: the profile of the composed pair
    #: that dominates one ordered pair of neighbours (``upper``/``lower`` are their maxima)
    orientations: dict = field(default_factory=dict)


def pld_profile(events: Sequence[PldEvent], eps: np.ndarray, *, eps_error: float | None = None,
                grid_step: float | None = None, cache=None) -> PldProfile:
    """Certified brackets on δ(ε) of the composition at every ``eps`` (≥ 0, any number of
    points), from one composition per orientation and side.

    :func:`pld_delta` chooses its grids for one ε; here one pair of grids serves every ε: the
    spacings are those :func:`pld_epsilon`'s rules give for an ε bracket ``eps_error`` wide
    (default 0.025 %) at the composed loss's mean plus two standard deviations of the worse
    orientation (about δ = 2 %, the region attack-risk queries read), then every orientation is
    composed once on the upper side and once on the lower side and its certified δ functional
    (:meth:`~privamp.pld.distribution.ComposedPLD.delta`) read at every ε.

    **Why the values are certified at every ε.** Each side's δ functional is a bound at any
    ε ≥ 0, not only at the ε the grid was chosen for: the upper side's losses are rounded up and
    its tails moved to +∞ or up into the window (every term of δ(ε) = E_P[(1 − e^{ε−L})₊] grows),
    the lower side's rounded down and its tails dropped, and the FFT, summation and tail error
    terms are added (subtracted) at each ε (:meth:`ComposedPLD._delta_from_sums`). δ of the
    composition is the maximum over orientations (module docstring), so the upper values are
    the maximum of the orientations' upper values and the lower values the maximum of their
    lower values (each bounds its own orientation, hence the maximum, from below). No tilt is
    used: values below about 1e-12 are bracketed by the absolute tail and FFT terms, i.e. only
    coarsely (they matter for attack risk only through ε ↦ δ(ε) + α e^ε at α of that order).
    """
    start = time.perf_counter()
    eps = np.asarray(eps, dtype=float).ravel()
    if eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise InvalidParameterError("eps", "finite values ≥ 0 (at least one)", eps)
    eps_error = check_optional_real("eps_error", eps_error, "(0, inf)")
    grid_step = check_optional_real("grid_step", grid_step, "(0, 1]")
    events, single, done = _trivial_cases(events, grid_step, True, start)
    if done is not None:
        zero = np.zeros(eps.size)
        return PldProfile(eps, zero, zero.copy(), _NO_GRID, _NO_GRID, {},
                          time.perf_counter() - start,
                          orientations={"symmetric": (zero, zero.copy())})
    if single is not None:
        convex = all(c.convex for c in single.values())
        by_name = {}
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            for name, c in single.items():
                up = np.exp(c.log_upper(eps))
                # exp of a rounded-up logarithm may land an ulp below the value: lift it
                up = np.minimum(up * (1 + 4 * ULP * (1 + np.abs(np.log(np.maximum(up, 1e-300))))),
                                1.0)
                low = None
                if convex:
                    low = np.exp(c.log_lower(eps))
                    low = np.minimum(np.maximum(low * (1 - 4 * ULP * (1 + np.abs(np.log(
                        np.maximum(low, 1e-300))))), 0.0), up)
                by_name[name] = (up, low)
        up = np.max([v[0] for v in by_name.values()], axis=0)
        if not convex:
            return PldProfile(eps, up, None, _NO_GRID, None, {}, time.perf_counter() - start,
                              _NOT_CONVEX, orientations=by_name)
        low = np.max([v[1] for v in by_name.values()], axis=0)
        return PldProfile(eps, up, np.minimum(low, up), _NO_GRID, _NO_GRID, {},
                          time.perf_counter() - start, orientations=by_name)
    tail_total = 1e-15
    total, sets, ranges_by_set, moments, mgfs, lam_grid = _prepare(events, tail_total, cache)
    mean, var = max(moments.values(), key=lambda mv: mv[0] + math.sqrt(mv[1]))
    sd = math.sqrt(max(var, 1e-300))
    eps_rep = max(mean + 2.0 * sd, 0.1)
    lam = max(_tilt_for_eps(m, eps_rep, lam_grid) for m in mgfs.values())
    # the lower side for an ε bracket a quarter of the default width: the trade-off queries
    # read δ over a whole range of ε, where a grid chosen for one ε is less tight
    h_u, h_l, _ = _grids(total, _slope(lam, 2.0, var, _max_tilt(lam_grid)), eps_rep,
                         eps_error if eps_error is not None else 2.5e-4 * eps_rep, None,
                         grid_step)
    all_items = [item for items in sets.values() for item in items]
    if grid_step is None:
        h_u = _snap(_clip_grid(h_u, ranges_by_set, total), all_items)
        h_l = _snap(_clip_lower(h_l, h_u, ranges_by_set, total), all_items)

    def advice(h):
        return _fitting_spacing(h, sets, ranges_by_set, lambda side, hh, kind: (
            _compose_set(sets[side], ranges_by_set[side], hh, kind, tail_total, 0.0, None,
                         size_only=True)))

    h_min = _min_spacing(ranges_by_set, grid_step, advice)
    h_u = h_u if h_u >= h_min else _snap_up(h_min, all_items)
    h_l = h_l if h_l >= h_min else _snap_up(h_min, all_items)
    fit = _Fitter(all_items, grid_step is not None, advice)
    sizes: dict = {}
    ups: dict = {}
    for name in sets:
        comp = fit(lambda hh, it=sets[name], rg=ranges_by_set[name]: _compose_set(
            it, rg, hh, "upper", tail_total, 0.0, cache), h_u, "upper")
        ups[name] = np.atleast_1d(comp.delta(eps))
        sizes[f"upper/{name}"] = comp.fft_size
    upper = np.max(list(ups.values()), axis=0)
    h_u = fit.used.get("upper", h_u)
    if not all(curve.convex for items in sets.values() for curve, _ in items):
        return PldProfile(eps, upper, None, h_u, None, sizes, time.perf_counter() - start,
                          _NOT_CONVEX, orientations={n: (u, None) for n, u in ups.items()})
    if fit.coarsened:
        h_l = max(h_l, h_u)
    lows: dict = {}
    for name in sets:
        comp = fit(lambda hh, it=sets[name], rg=ranges_by_set[name]: _compose_set(
            it, rg, hh, "lower", tail_total, 0.0, cache), h_l, "lower")
        lows[name] = np.atleast_1d(comp.delta(eps))
        sizes[f"lower/{name}"] = comp.fft_size
        bad = lows[name] > ups[name] * (1 + 1e-9) + 1e-300
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            _checked_lower(float(lows[name][i]), float(ups[name][i]))  # raises
        lows[name] = np.minimum(lows[name], ups[name])
    lower = np.max(list(lows.values()), axis=0)
    return PldProfile(eps, upper, lower, h_u, fit.used.get("lower", h_l), sizes,
                      time.perf_counter() - start,
                      orientations={n: (ups[n], lows[n]) for n in ups})
