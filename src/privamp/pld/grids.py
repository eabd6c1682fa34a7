"""Grid choice and refinement of the PLD engine (:mod:`privamp.pld.engine`).

The engine composes each orientation's steps on a uniform grid of the privacy loss; this module
chooses its spacing and nothing else (every choice only costs accuracy or time, never validity:
the engine's brackets are certified on any grid):

* **spacing from the accuracy asked for** — connect-the-dots adds about h²/6 of variance per step,
  which moves ε by about ``ΔV (1 + λ)/2`` at the Chernoff tilt λ of the target
  (:func:`_choose_grids`, returning a :class:`GridChoice`; the engine's module docstring has the
  derivation), clipped so that each step keeps enough points (:func:`_clip_grid`);
* **Chernoff tilts** — the λ grid scaled to the losses, the optimal tilt for a target δ or ε;
* **atoms on the grid** — the spacing snapped to the lattice of a discrete loss law and the grid
  offset to its atoms, so connect-the-dots is exact for it (:func:`_snap`, :func:`_placement`);
  the atoms of a loss with a continuous part as well (Laplace) on grid points for the upper
  discretisation and a little above them for the lower one, which keeps them whole
  (:func:`_atom_offset`);
* **refinement of the lower side** — shrink the spacing while the certified bracket misses its
  target width, within an FFT budget (:func:`_refine_lower`);
* **size check** — step grids within :data:`~privamp.pld.distribution.MAX_FFT` points (the
  composed window is checked by :func:`~privamp.pld.distribution.compose`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import _special
from .._numerics import ULP
from . import distribution as _distribution
from .curves import PairCurve

#: Default target of the upper end's estimated distance from the exact ε, relative to ε.
UPPER_ERROR = 1e-5

#: Every step grid has at least this many points (so that single steps are resolved too).
_MIN_POINTS = 2000
#: The default accuracy targets are relative to ε (0.1 % width, 0.001 % upper error) down to
#: this ε; below it they are absolute.
_EPS_FLOOR = 1e-9
_MAX_REFINE = 3

_LAMBDA_GRID = np.geomspace(1e-3, 1e3, 121)


def _sensitivity(z: float, var: float) -> float:
    """About dε/dV for a composed loss of variance V (Gaussian approximation)."""
    return z / (2 * math.sqrt(max(var, 1e-300))) + 0.5


def _grid_for(error: float, total: int, slope: float) -> float:
    return math.sqrt(6.0 * max(error, 1e-300) / (total * max(slope, 1e-300)))


#: Largest tilt used (losses bounded above make the Chernoff optimum run off to infinity).
_MAX_TILT = 50.0


def _tilt_for_delta(log_mgf: np.ndarray, delta: float,
                    grid: np.ndarray = _LAMBDA_GRID) -> float:
    """The Chernoff-optimal tilt for a target δ: the λ minimising (Λ(λ) + log 1/δ)/λ, the
    Chernoff bound on the ε where P(S ≥ ε) = δ (Λ the composed log-MGF). It is also about
    d log(1/δ)/dε there, which converts errors between ε and δ."""
    with np.errstate(invalid="ignore"):
        bound = (log_mgf - math.log(delta)) / grid
    return min(float(grid[int(np.nanargmin(bound))]), _max_tilt(grid))


def _tilt_for_eps(log_mgf: np.ndarray, eps: float, grid: np.ndarray = _LAMBDA_GRID) -> float:
    """The Chernoff-optimal tilt at ε: the λ minimising Λ(λ) − λε."""
    return min(float(grid[int(np.nanargmin(log_mgf - grid * eps))]), _max_tilt(grid))


def _max_tilt(grid: np.ndarray) -> float:
    """:data:`_MAX_TILT` in the units of a (rescaled) λ grid."""
    return _MAX_TILT * float(grid[-1] / _LAMBDA_GRID[-1])


def _lambda_grid(ranges_by_set) -> np.ndarray:
    """The λ grid for Chernoff estimates and tilts, scaled to the losses: steps whose losses
    span less than 1 (tiny sampling rates: 1e-6 and below) need λ of the order of 1/span."""
    span = max(hi - lo for ranges in ranges_by_set.values() for lo, hi in ranges)
    return _LAMBDA_GRID / min(1.0, max(span, 1e-12))


def _slope(lam: float, z: float, var: float, max_tilt: float = _MAX_TILT) -> float:
    """About dε/dV, the effect on ε of variance added to the composed loss: 1/2 + λ/2 with λ the
    Chernoff tilt (for a Gaussian loss λ = z/√V and this is the exact derivative); never less
    than the Gaussian value when the tilt is capped."""
    return 0.5 + 0.5 * max(lam, min(_sensitivity(z, var) * 2 - 1, max_tilt))


# ---- discrete loss laws: atoms exactly on the grid ------------------------------------------


def _finite_kinks(curve: PairCurve):
    kinks = curve.kinks()
    if kinks is None:
        return None
    pos, err = kinks
    pos = np.unique(np.asarray(pos, dtype=float))
    pos = pos[np.isfinite(pos)]
    return (pos, float(err)) if pos.size else None


def _finite_atoms(curve: PairCurve) -> np.ndarray | None:
    """The finite atom positions of :meth:`PairCurve.atoms` (sorted, distinct), or None.

    Positions within 1e-12 of the largest magnitude of each other count as one atom (the
    positions are approximate; they only place grids). The same loss computed from different
    outcomes differs in its last bits — a pair given by two PMFs, the two-sided geometric
    shifted by one: log(p_i/q_i) = ±1 to a few ulp at each of its 62 outcomes — and those
    copies, 1e-18 apart after Poisson sampling, made :func:`_lattice_step` a lattice of step
    1e-18: a grid at the memory bound (6.7M points, 60 s for the answer of 1 s).
    """
    atoms = curve.atoms()
    if atoms is None:
        return None
    pos = np.unique(np.asarray(atoms, dtype=float))
    pos = pos[np.isfinite(pos)]
    if pos.size > 1:
        close = np.diff(pos) <= 1e-12 * float(np.max(np.abs(pos)))
        pos = pos[np.concatenate([[True], ~close])]
    return pos if pos.size else None


def _lattice_step(curve: PairCurve) -> float | None:
    """G when the curve's atoms are ``a + kG`` (k integer; G the smallest gap), else None."""
    pos = _finite_atoms(curve)
    if pos is None or pos.size < 2:
        return None
    g = float(np.min(np.diff(pos)))
    r = (pos - pos[0]) / g
    if g <= 0 or np.any(np.abs(r - np.round(r)) > 1e-9 * np.maximum(r, 1.0)):
        return None
    return g


def _lattice(items) -> float | None:
    """The lattice step G of the most frequent event with atoms (:func:`_lattice_step`)."""
    best = None
    for curve, count in items:
        g = _lattice_step(curve)
        if g is not None and (best is None or count > best[1]):
            best = (g, count)
    return None if best is None else best[0]


def _snap(h: float, items) -> float:
    """The largest spacing ≤ h that puts the atoms of a loss law (:meth:`PairCurve.atoms`) on
    one grid: G/N for the lattice step G of the most frequent event with atoms (no change if
    there is none). A finer grid is always valid; this one makes connect-the-dots exact for a
    discrete event and lets its lower side be exact too (:func:`_placement`), and keeps the
    atoms of a loss with a continuous part nearly whole on the lower side
    (:func:`_atom_offset`)."""
    g = _lattice(items)
    if g is None:
        return h
    return g / math.ceil(g / h * (1 - 1e-12))


def _snap_up(h: float, items) -> float:
    """The smallest spacing ≥ h that keeps the lattice of :func:`_snap` (G/N with N ≥ 1), or h
    itself when it exceeds the lattice step G (a grid off the atoms is still valid, only less
    exact): used when the memory bound makes a grid coarser."""
    g = _lattice(items)
    if g is None or g < h:
        return h
    return g / max(math.floor(g / h * (1 + 1e-12)), 1)


def _placement(curve: PairCurve, h: float):
    """``(offset, kink_error)`` when every atom of the curve lies on ``offset + i h`` within
    ``kink_error`` (its own position error, the distance to the grid point as computed, and
    the rounding of that computation), else ``None``."""
    kinks = _finite_kinks(curve)
    if kinks is None:
        return None
    pos, err = kinks
    offset = float(pos[0] - math.floor(pos[0] / h) * h)
    r = (pos - offset) / h
    dev = float(np.max(np.abs(r - np.round(r)))) * h
    if dev > 1e-7 * h:
        return None
    rounding = 8 * ULP * (float(np.max(np.abs(pos))) + abs(offset) + h)
    return offset, err + dev + rounding


#: How far above a grid point the engine puts an atom of a loss with a continuous part on the
#: lower side, in grid steps: its tangent lines then meet just above that point, and the lower
#: side moves it down by about this much (:func:`privamp.pld.discretize.lower_masses`). The
#: upper side puts it on the grid point (lift 0).
ATOM_LIFT = 1.0 / 1024.0


def _atom_offset(curve: PairCurve, h: float, lift: float = ATOM_LIFT) -> float | None:
    """The grid offset that puts the atoms of a loss with a continuous part
    (:meth:`PairCurve.atoms`) ``lift`` steps (:data:`ATOM_LIFT` by default) above grid points
    ``offset + i h`` when they fit one grid (within 1e-7 h; h from :func:`_snap`), else None.

    The upper discretisation (connect-the-dots) takes ``lift = 0``: a kink on a grid point
    costs it nothing, and an atom at 0 — the kink of every amplified profile, where the
    sampled record is missed — then leaves the grid symmetric about 0, so the symmetric
    curves evaluate their profile once per magnitude
    (:meth:`~privamp.pld.curves.ProfileCurve.log_upper`).

    The lower discretisation then keeps each atom nearly whole
    (:func:`~privamp.pld.discretize.lower_masses`, step 3): the tangent line at the point just
    below an atom, from secants that stop short of it, meets the next line just above that
    point, and the atom moves down to it by about the lift — at the top of a Laplace loss,
    where nothing lies above to merge with, and at the bottom, where it is the last
    remainder of the merging sweep towards it. On an arbitrary grid either end could fall a
    whole step or be spread over many cells. Connect-the-dots is nearly exact at the atoms
    too. Tightness only: any offset is valid."""
    pos = _finite_atoms(curve)
    if pos is None:
        return None
    start = float(pos[0]) - lift * h
    offset = start - math.floor(start / h) * h
    r = (pos - pos[0]) / h
    if float(np.max(np.abs(r - np.round(r)))) > 1e-7:
        return None
    return offset


def _aligned_range(curve: PairCurve, lo: float, hi: float, h: float) -> tuple[float, float]:
    pos = _finite_kinks(curve)[0]
    return min(lo, float(pos[0]) - h), max(hi, float(pos[-1]) + h)

#: The lower side is refined only while its FFT stays within this many points, or four times
#: the upper side's: past that, a tighter lower end costs minutes (a 3M-point tilted transform
#: in extended precision took 250 s) and the bracket is reported as it is (still certified).
_REFINE_POINTS = 2**19


def _budget(sizes: dict) -> float:
    upper = max((v for k, v in sizes.items() if k.startswith("upper")), default=0)
    return max(_REFINE_POINTS, 4 * upper)


def _over_budget(next_size: float, sizes: dict) -> bool:
    return next_size > _budget(sizes)


def _next_lower_grid(h: float, h_next: float, size: int, sizes: dict, items) -> float | None:
    """The lower side's next spacing: ``h_next``, or, if that is beyond the FFT budget, the
    finest spacing within it (``None`` when that is not meaningfully finer than ``h``). Without
    the second choice a bracket far from its target (WR(10000, 100), 1,000 steps: 10 % wide)
    stopped at its first coarse grid because the jump it asked for was over budget."""
    if not _over_budget(size * h / h_next, sizes):
        return h_next
    h_cap = _snap(h * size / (0.8 * _budget(sizes)), items)
    if h_cap < h / 1.5 and not _over_budget(size * h / h_cap, sizes):
        return h_cap
    return None


def _refined(h: float, width: float, target: float) -> float:
    """The next lower-side spacing after a bracket ``width`` missed ``target``. The width
    shrinks like h² where the curve is smooth and only like h at kinks off the grid; assume
    h^1.5 in between (at least halving, at most a factor 10 at once): a linear assumption
    jumped a factor 28 for a smooth tail (σ = 0.5, q = 1e-4, δ = 1e-10) and composed 5.9M
    points for a bracket 1000 times narrower than asked; the next refinement catches up
    where the convergence is linear. A near miss (within 25 % of the target) takes 0.7 h,
    which meets the target even where the convergence is linear (WR(60000, 600), 10⁴ steps:
    0.0096 against 0.00947 had composed twice the points it needed)."""
    if width <= 1.25 * target:
        return 0.7 * h
    return h * min(max((0.8 * target / max(width, 1e-300)) ** (2.0 / 3.0), 0.1), 0.5)


def _step_points(ranges_by_set, h: float) -> float:
    """Points of the longest step grid at spacing h (the step arrays are allocated before the
    composition's own size check)."""
    span = max(hi - lo for ranges in ranges_by_set.values() for lo, hi in ranges)
    return span / h


def _max_points() -> int:
    """The memory bound, read where it is defined (:data:`~privamp.pld.distribution.MAX_FFT`)
    so that one setting governs every check."""
    return _distribution.MAX_FFT


def _min_step_spacing(ranges_by_set) -> float:
    """The finest spacing whose step grids fit in the memory bound (with a margin)."""
    return _step_points(ranges_by_set, 1.0) / (0.8 * _max_points())


def _grids(total, slope, eps_est, eps_error, upper_error, grid_step):
    scale = max(eps_est, _EPS_FLOOR)
    target_u = upper_error if upper_error is not None else UPPER_ERROR * scale
    target_w = eps_error if eps_error is not None else 1e-3 * scale
    target_u = min(target_u, target_w / 2)
    if grid_step is not None:
        return grid_step, grid_step, target_w
    h_u = _grid_for(target_u, total, slope)
    h_l = (_grid_for(max(target_w - target_u, target_w / 2) / 2, total, slope)
           if math.isfinite(target_w) else math.inf)
    return h_u, h_l, target_w


def _ceil_pow(n: int, base: int) -> int:
    """The smallest power of ``base`` that is at least ``n`` ≥ 1."""
    p = 1
    while p < n:
        p *= base
    return p


def _clip_grid(h: float, ranges_by_set, total: int = 1) -> float:
    """At most the accuracy-driven spacing h, with at least :data:`_MIN_POINTS` points per step
    range for up to 1,000 steps (so that short compositions resolve each step), fewer beyond
    (the composed law is smooth, and the accuracy estimate rules: 10^9 steps of losses spanning
    1e-5 would otherwise need 10^7-point grids)."""
    span = min(hi - lo for ranges in ranges_by_set.values() for lo, hi in ranges)
    points = _MIN_POINTS * min(1.0, math.sqrt(1000.0 / max(total, 1)))
    return float(min(h, max(span, 1e-6) / max(points, 20.0), 0.05))


#: The lower side's spacing is at most this fraction of the narrower side of a step's loss
#: range around 0 (:func:`_resolve_bulk`).
_BULK_FRACTION = 0.7


def _bulk_width(ranges_by_set) -> float:
    """The narrower side, around 0, of the step loss ranges that have both signs: ``hi`` for a
    loss bounded above (the range ends there), ``−lo / 2`` for one bounded below (the left cut
    of :func:`~privamp.pld.engine._left_end` is at about twice the smallest loss, where
    α = e^{ε₀/2} reaches it). Infinite when no range has both signs."""
    widths = [min(-lo / 2.0, hi) for ranges in ranges_by_set.values() for lo, hi in ranges
              if lo < 0.0 < hi]
    return min(widths, default=math.inf)


def _resolve_bulk(h_l: float, h_u: float, ranges_by_set) -> float:
    """The lower side's first spacing: ``h_l``, unless the bulk of a step's loss lies within one
    cell of it — then the finer of :data:`_BULK_FRACTION` × the bulk's width and the upper
    side's spacing ``h_u`` (never finer than the upper side, which resolved the same steps).

    At a small sampling rate γ a step's loss lies between log(1 − γ) and the tail, most of it
    within about γ of 0. With no grid point inside that, the tangent construction of the lower
    side sees one kink for the whole bulk, and merging it across 0 either takes the thin tail
    down with it or moves the bulk down a step: the lower end *collapses* (σ 0.5, γ 1e-4, 10³
    steps, δ 1e-10: 0 at every spacing from 6.9e-4 down to 1.2e-4, 4.3377 at 1e-4, 4.33889 at
    8.4e-5). Refining from the collapsed grid composed two grids for nothing. A tightness rule
    only: every spacing gives a certified lower end."""
    bulk = _BULK_FRACTION * _bulk_width(ranges_by_set)
    if h_l <= bulk:
        return h_l
    return min(h_l, max(bulk, h_u))


def _clip_lower(h_l: float, h_u: float, ranges_by_set, total: int) -> float:
    """The lower side's automatic spacing: :func:`_clip_grid`, then :func:`_resolve_bulk`."""
    return _resolve_bulk(_clip_grid(h_l, ranges_by_set, total), h_u, ranges_by_set)



class GridChoice(NamedTuple):
    """The estimates and grid spacings :func:`_choose_grids` gives for a target δ."""

    z: float  # the Gaussian quantile of δ
    mean: float  # mean and variance of the composed loss (the orientation that decides ε)
    var: float
    lam: dict  # orientation → Chernoff-optimal tilt for δ
    slope: float  # about dε/dV (see _slope)
    h_upper: float  # spacing of the upper side
    h_lower: float  # spacing of the lower side
    target_width: float  # target width of the ε bracket


def _choose_grids(delta, total, moments, mgfs, ranges_by_set, eps_error, upper_error,
                  grid_step, lam_grid=_LAMBDA_GRID) -> GridChoice:
    """The estimates and grid spacings of :func:`pld_epsilon` for a target δ."""
    z = float(-_special.ndtri(delta))
    mean, var = max(moments.values(), key=lambda mv: mv[0] + z * math.sqrt(mv[1]))
    eps_est = max(mean + z * math.sqrt(var), 0.0)
    lam = {name: _tilt_for_delta(m, delta, lam_grid) for name, m in mgfs.items()}
    lam_ruling = max(lam.values())
    # the Chernoff bound on ε of each orientation (coarse upper steps: an upper bound of the
    # upper side's ε up to its log-prefactor). Far beyond the Gaussian estimate (a composed
    # loss far from Gaussian in its tail: rare large losses at tiny sampling rates and δ) the
    # Gaussian estimate would aim the accuracy at an ε 20× too small, and the capped tilt of an
    # orientation that does not decide would set the slope: then both come from the Chernoff
    # estimate of the orientation that decides. Only the grids change; never the certificate.
    with np.errstate(invalid="ignore"):
        chernoff = {name: float(np.nanmin((m - math.log(delta)) / lam_grid))
                    for name, m in mgfs.items()}
    ruling = max(chernoff, key=chernoff.get)
    if chernoff[ruling] > 2.0 * eps_est:
        eps_est = 0.5 * chernoff[ruling]
        lam_ruling = lam[ruling]
    slope = _slope(lam_ruling, z, var, _max_tilt(lam_grid))
    h_u, h_l, target_w = _grids(total, slope, eps_est, eps_error, upper_error, grid_step)
    if grid_step is None:  # a spacing the user fixed is used as given
        h_u = _clip_grid(h_u, ranges_by_set, total)
        h_l = _clip_lower(h_l, h_u, ranges_by_set, total)
    return GridChoice(z, mean, var, lam, slope, h_u, h_l, target_w)



def _reference_deltas(tail_total: float) -> list[float]:
    """The δ's whose shared-grid tail budget is ``tail_total`` (1e-2 … 1e-6 for 1e-12, then
    1e-7 … 1e-12 for 1e-18, …), for choosing one upper grid for all of them."""
    k = round(-math.log10(tail_total) / 6) - 2
    first = 2 if k == 0 else 1
    return [10.0 ** -(6 * k + j) for j in range(first, 7)]


def _refine_lower(side: Callable[[float], tuple[float, int, float]], h: float, upper: float,
                  target: float, fixed: bool, sizes: dict, key: str, items,
                  step_points: Callable[[float], float]) -> tuple[float, float]:
    """The lower end of a bracket: ``side(h)`` composes the lower side at spacing h (or the
    finest coarser one that fits in memory) and returns its certified value, FFT size and the
    spacing it used (FFT size recorded in ``sizes[key]``). While the bracket ``upper − value``
    misses ``target`` the spacing is refined (:func:`_refined`, snapped to the atoms of
    ``items``), at most :data:`_MAX_REFINE` times, never when the grid is ``fixed``, and only
    while

    * the next grid stays within the budget of :func:`_next_lower_grid`, counting the larger
      of the FFT and the step grids (``step_points(h)``; a composition whose window is tiny
      still evaluates its curves at every step grid point);
    * the last refinement did not stall (its width within 1 % of the best one's: a lower side
      limited by something other than the spacing — a curve without informative lower values
      — does not improve on finer grids, it only costs time and memory; a width that got
      worse is erratic convergence, not a stall) — except after a collapse (a lower end at
      most half the upper one: the grid did not resolve the bulk of the loss), which is
      refined by a factor 3 whatever the convergence model says;
    * the memory bound does not send it back to about the grid already composed.

    Returns ``(value, spacing)``: the largest certified value found (every one is a valid lower
    end) and the spacing that gave it."""
    best = None
    last_used = None
    for attempt in range(_MAX_REFINE + 1):
        value, size, used = side(h)
        # the memory bound sent the refinement back to about a grid already composed (the
        # previous attempt's, not only the best one's: a lower side stuck at 0 keeps its first
        # grid as the best)
        if last_used is not None and used > last_used / 1.2:
            break
        last_used = used
        sizes[key] = size
        previous = None if best is None else upper - best[0]
        # stalled: this grid's width within 1 % of the best one's. A width that got *worse*
        # is not a stall: off-grid kinks make the lower end erratic in h (Laplace under
        # WR(100, 5): 0.70614 at h = 3.1e-3, 0.69630 at 1.2e-3, 0.70838 at 3.1e-4)
        stalled = previous is not None and abs((upper - value) - previous) <= 0.01 * previous
        if best is None or value > best[0]:
            best = (value, used)
        width = upper - best[0]
        collapsed = best[0] <= 0.5 * upper
        if (width <= target or attempt == _MAX_REFINE or fixed
                or (stalled and not collapsed)):
            break
        # this attempt already got only the finest grid the memory bound allows (coarser than
        # asked): a finer request gets that same grid again, so composing it again gains nothing
        if used > h * 1.2:
            break
        # a lower side that collapsed (at most half the upper end: its grid cannot resolve the
        # bulk of the loss, e.g. losses of order q ≪ h at tiny sampling rates) says nothing of
        # the convergence rate: a factor 3, not the model's factor 10 (σ 0.5, q 1e-4, T 1e4,
        # δ 1e-10: 0 at h = 2.4e-4, 5.0843 at 7.9e-5, and 10× composed 5M points for a bracket
        # 1000× narrower than asked)
        h_next = used / 3.0 if collapsed else _refined(used, width, target)
        h_next = _snap(h_next, items)
        work = max(size, step_points(used))
        h_next = _next_lower_grid(used, h_next, work, sizes, items)
        if h_next is None or step_points(h_next) > _max_points():
            break
        h = h_next
    return best
