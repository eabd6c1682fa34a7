"""The Fourier accountant of Koskela et al. (MUST Algorithm 1), made rigorous. The MUST paper's
mixture-of-Gaussians privacy-loss distributions it composes are in :mod:`privamp.pld.mixture`.

This backend exists **for comparison** with the published method. privamp's own ``pld`` backend
(:mod:`privamp.pld.distribution`) discretises a dominating pair without drift; the Fourier
accountant, as published, rounds every step's loss up (upper bound) or down (lower bound) to a
grid of spacing Δx, so after k compositions the two bounds have drifted apart by up to k·Δx in the
loss. That is the method (Koskela, Jälkö, Honkela 2020; Koskela, Jälkö, Prediger, Honkela 2021;
Zhao & Liu 2023, Algorithm 1); it is kept here, documented, and every other approximation is made
rigorous.

The method (MUST Algorithm 1, with the changes listed below)
-------------------------------------------------------------
Grid ``x_i = −L + iΔx``, ``i = 0, …, r − 1``, ``Δx = 2L/r`` (r even). For the privacy loss L of a
pair (P, Q) under P (``δ(ε) = E_P[(1 − e^{ε − L})_+]`` plus the mass at +∞):

1. **Discretise** (step 3). Instead of ``Δx·ω(x_i)`` and cell minima/maxima of the density (which
   need unimodality and are not bounds), privamp uses bounds on the survival function
   ``T(s) = P(L > s)`` at the grid points — from the mixture CDFs for :class:`MixturePLD` (the
   catalogue's "most robust" recommendation: exact cell probabilities, no density, no
   derivative), from :meth:`~privamp.pld.curves.PairCurve.p_tail_bounds` for a pair curve.
   An upper sequence ``T⁺ ≥ T`` (made non-increasing by a running minimum, which keeps it an upper
   bound because T is non-increasing) is the survival function of a loss that is stochastically
   larger than L; rounding that loss up to the grid gives the *upper* PLD: cell
   ``(x_i, x_{i+1}]`` at ``x_{i+1}``, everything at or below ``x_0`` at ``x_0``, everything above
   ``x_{r−1}`` (finite or not) at +∞. A lower sequence ``T⁻ ≤ T`` (running maximum from the
   right) gives the *lower* PLD: cell ``(x_i, x_{i+1}]`` at ``x_i``, the finite mass above
   ``x_{r−1}`` at ``x_{r−1}``, a lower bound on ``P(L = +∞)`` kept at +∞, the mass at or below
   ``x_0`` dropped (sent to −∞). Both vectors are probability vectors (up to rounding), so the
   k-th power does not amplify a surplus of mass. (The alternative, per-cell mass intervals
   ``[T⁻(x_i) − T⁺(x_{i+1}), T⁺(x_i) − T⁻(x_{i+1})]``, sums to more than 1 — by 2e-4 for the
   Poisson-Gaussian curve at r = 5·10⁵ — and that surplus is raised to the power k.) δ is
   non-decreasing in every loss value and in every mass, so the upper PLD's composition bounds
   the true δ from above and the lower PLD's from below.
2. **Compose** (step 5): half-swap H, ``rfft``, k-th power, ``irfft``, H. The FFT convolution is
   circular: the composed loss is folded into the window ``[−L, L − Δx]``.
3. **δ** (step 7) ``Σ_{x_j > ε} (1 − e^{ε − x_j}) u_j`` plus the mass at +∞
   ``1 − (1 − δ(∞))^k`` (MUST footnote 12; for the lower PLD, whose dropped mass kills a
   composition, ``(1 − d)^k − (1 − d − δ(∞))^k``).

Error terms (each to the safe side; results clipped to [0, 1]):

* **Truncation / aliasing** (Koskela, Jälkö, Prediger, Honkela 2021, Theorem 7 — the term MUST
  Algorithm 1 omits, catalogue erratum 20). With ``α^±(λ) = log Σ_i c_i e^{±λ x_i}`` the
  Chernoff bounds ``P(S ≥ L) ≤ e^{kα⁺(λ) − λL}`` and ``P(S < −L) ≤ e^{kα⁻(λ) − λL}`` hold for
  the composed finite part S. The FFT composes modulo 2L: mass of S at or above L lands at a
  lower loss, where its δ weight ``(1 − e^{ε − s})_+`` is smaller — missing at most its mass,
  added to the upper δ, and harmless for the lower one; mass below −L has weight 0 and lands
  higher — at most its mass too much, subtracted from the lower δ, harmless for the upper one.
  The authors' code (catalogue §2.6.3) adds and subtracts the sum of both terms, each divided by
  ``1 − e^{−2Lλ}`` (a geometric sum over the copies that fold once, twice, …); a single
  Chernoff bound on the whole out-of-window mass already covers every fold, so privamp drops
  that factor and uses one term per side. λ = L/2 is the authors' default; every λ > 0 gives a
  valid bound, and privamp takes the best of L/2 and a geometric grid.
* **FFT rounding** (docs/certification.md, "The Fourier accountant"): the transforms are
  NumPy's (pocketfft's real FFT, the code whose rounding errors :mod:`._fft_bounds` bounds), on
  5-smooth r only. Each forward coefficient is within ``e = κ u ‖x‖₁ + a(r)`` of the exact DFT
  (κ derived for the radf passes of r's factorisation); raising to the power k,
  ``|(X + E)^k − X^k| ≤ (|X| + e)^k − |X|^k`` per frequency, plus the rounding of the power
  itself: together ``D_f``. Through an exact inverse transform this error is ``e₁ =
  irfft(Z)``, ``|Z_f| ≤ D_f``: ``|e₁_j| ≤ Σ_f w_f D_f / r`` (w_f the rfft multiplicity 1 or 2),
  and by Parseval ``‖e₁‖₂ = √(Σ_f w_f |Z_f|² / r)``. The inverse transform's own rounding e₂ is
  bounded componentwise only (``κ' u Σ_f w_f |P_f| / r + a(r)`` per output, κ' of the radb
  passes and the 1/r scaling). The δ functional ``Σ_j g_j u_j`` (``g_j = 1 − e^{ε − x_j}``)
  moves by at most ``min(Σg·max|e₁|, ‖g‖₂‖e₁‖₂) + Σg·max|e₂|``. (The ℓ2 route for e₂ — a
  normwise bound for the inverse transform, Higham's Theorem 24.2 for radix 2 — is not used:
  no such bound is derived for pocketfft's mixed-radix passes, and the componentwise one gives
  only ``‖e₂‖₂ ≤ √r max|e₂|``, never better than Σg·max|e₂|.)
* **Summation** of the δ functional: ``(n + 4)·2u Σ_j g_j |u_j|`` (any summation order), plus
  the rounding of the weights (≤ 8u(|ε| + |x| + 1) each) and of the final additions.

Published numbers this implementation corrects
--------------------------------------------------
* The values printed for the MUST S7 example (catalogue §2.6: δ(1) = 1.3723e-8, …, 1.228e-4 for
  k = 200, …, 1000) and the catalogue's WOR example (q = 0.02, σ = 4, k = 1000, ε = 1:
  "δ ≈ 8.75e-5, lower 8.7492e-5 / upper 8.7531e-5") are the *left-endpoint* sums at L = 10,
  r = 5·10⁵ — the lower end of the bracket; with losses rounded up the same grid gives
  1.87e-4 and 1.37e-4. The two sides are not 4 digits apart but k·Δx = 0.04 apart in the loss.
  On finer grids the certified lower bounds exceed the printed values, which therefore
  *under-report* δ: MUST.OW at L = 6, r = 2²² gives [1.4027e-8, 1.4139e-8], [1.1032e-7,
  1.1237e-7], [3.692e-6, 3.796e-6], [3.512e-5, 3.616e-5], [1.4952e-4, 1.5408e-4] for
  k = 200, …, 1000; the WOR bracket shrinks to [1.0877e-4, 1.1022e-4] (L = 5, r = 2²³), true
  value about 1.095e-4 — the catalogue's "naive point rule" value, which it wrongly calls
  outside the bracket. (The authors' notebook prints (1.2282e-7, 1.0514e-4) for this setting:
  its upper end is below privamp's certified lower bound, consistent with its cell maxima being
  placed at the left grid points, ``linspace(−L, L, nx, endpoint=False)``.)
* MUST Algorithm 1 has no truncation term (erratum 20): it is added here.
* S7 reports that the accountant "produced numerical errors" for MUST.WW: the log-sum-exp loss,
  the bracketed inversion and the CDF cell masses have no trouble with it.

Inputs (``source``):

* a :class:`~privamp.pld.curves.PairCurve` (any dominating pair privamp knows, e.g.
  :class:`~privamp.pld.curves.ProfileCurve` of a privacy profile, or the exact Poisson-Gaussian
  :class:`~privamp.pld.curves.PoissonGaussianCurve` — pass both orientations);
* a :class:`MixturePLD` (the pairs of MUST eqs (6)–(8), S5, S6);
* a sequence of those: the accountant returns the worse (Theorem 4(a) of the MUST paper: δ is
  the maximum over the two orientations of an asymmetric relation).

The result (:class:`FourierBracket`) is certified for the pair; ``certified=False`` (``status ==
"estimate"``) says that the pair is not proven to dominate the mechanism — the MUST paper's WR and
MUST mixture pairs — so its numbers are estimates, never guarantees. :class:`~privamp.accountant.
Accountant` (``backend="fourier"``) composes dominating pair curves only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._numerics import ULP, bisect_threshold, up_ulps
from .._validation import check_int, check_real
from ..errors import (
    InconsistentBoundsError,
    InvalidParameterError,
    InvalidTypeError,
    NumericalError,
)
from ..results import Bracket
from . import _fft_bounds as _fb
from .curves import PairCurve
from .distribution import fast_length
from .engine import _MAX_LOSS  # |loss| where e^{±loss} stays a normal double
from .mixture import MixturePLD

__all__ = ["MAX_GRID", "FourierBracket", "MixturePLD", "fourier_accountant"]

#: Largest grid (number of points r) the accountant accepts: 2^24 points are 128 MB per array.
MAX_GRID = 2**24
#: Largest and smallest grids the accountant chooses by itself when r is not given.
DEFAULT_MAX_GRID = 2**22
MIN_DEFAULT_GRID = 2**14
#: Default target width of the ε bracket caused by the grid drift (k·Δx ≈ this).
DEFAULT_EPS_RESOLUTION = 0.02
#: Largest drift k·Δx accepted on an automatic grid: beyond it (many compositions over a wide
#: window) the bracket would span more than this in ε, and the query is refused quickly
#: instead of spending the largest grid on it (explicit ``L`` and ``r`` are always honoured).
MAX_AUTO_DRIFT = 10.0
#: Default truncation tolerances: absolute when ε is given, relative to δ when δ is given.
DEFAULT_TAIL_TOL_FOR_EPS = 1e-12
DEFAULT_TAIL_TOL_FOR_DELTA = 1e-3

#: Secant widths tried for the slope bounds of a pair curve (see ``_source_survival``).
_CURVE_TAUS = (1e-6, 1e-3)
#: λ grid for the Chernoff tail bounds (each λ gives a valid bound; the best one is used).
_LAMBDAS = np.geomspace(1e-2, 1e3, 41)


@dataclass(frozen=True)
class FourierBracket(Bracket):
    """What :func:`fourier_accountant` returns: a :class:`~privamp.results.Bracket` and whether it
    is a guarantee for the mechanism.

    ``lower ≤ exact ≤ upper`` always holds for the *pair* the accountant composed (every
    truncation and rounding term is certified). ``certified`` is ``True`` when that pair is a
    proven dominating pair of the mechanism (every :class:`~privamp.pld.curves.PairCurve`;
    the Poisson and WOR :class:`MixturePLD`), ``False`` when it is not (the MUST paper's WR and
    MUST mixture pairs): the numbers are then **estimates** for the mechanism, not bounds —
    :attr:`status` says so.

    >>> FourierBracket(0.1, 0.2, certified=False).status
    'estimate'
    """

    certified: bool = True

    @property
    def status(self) -> str:
        """``"certified"`` or ``"estimate"``."""
        return "certified" if self.certified else "estimate"


# =============================================================================================
# discretisation on the Fourier-accountant grid
# =============================================================================================


@dataclass(frozen=True)
class _GridPLD:
    """Upper and lower PLDs of one step on the grid ``x_i = (i − r/2)Δx``."""

    dx: float
    r: int
    upper: np.ndarray  # masses, loss rounded up; mass above x_{r−1} in p_inf_upper
    p_inf_upper: float
    lower: np.ndarray  # masses, loss rounded down
    p_inf_lower: float
    dropped_lower: float  # lower PLD's mass sent to −∞ (at or below x_0)


def _source_survival(source, x_dn: np.ndarray, x_up: np.ndarray):
    """(T_up at x_dn, T_lo at x_up, lower bound on P(L = +∞)) for a source."""
    if isinstance(source, MixturePLD):
        # grids are uniform: size and end points identify one (cached: the same grid serves
        # every count)
        key = (x_dn.size, float(x_dn[0]), float(x_dn[-1]))
        hit = source._cache.get(key)
        if hit is not None:
            return hit
        t_lo, t_up = source._survival_pair(x_dn, x_up)
        if x_dn.size >= 1024:
            if len(source._cache) >= 4:
                source._cache.clear()
            source._cache[key] = (t_up, t_lo, 0.0)
        return t_up, t_lo, 0.0
    # p_tail_bounds brackets the slope of the curve by secants of width τ: a small τ is best
    # near kinks, a large one where the curve is flat in α (it divides the value slack by τ);
    # both are valid bounds, so take the best of a few
    # (each side evaluates the curve's values once and only the secant it uses)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        t_up = source.p_tail_upper(x_dn, _CURVE_TAUS)
        t_lo = source.p_tail_lower(x_up, _CURVE_TAUS)
        p_inf_lo = float(np.exp(source.log_lower(np.array([np.inf]))[0]))
    if not p_inf_lo >= 0.0:  # NaN
        p_inf_lo = 0.0
    return t_up, t_lo, p_inf_lo


#: Absolute slack for survival bounds that underflowed (4 × the smallest subnormal).
_SUBNORMAL_SLACK = 2.0**-1072
#: Coarse points per grid (see :func:`_survival_on_grid`).
_COARSE = 4096


def _survival_on_grid(source, x_dn: np.ndarray, x_up: np.ndarray):
    """:func:`_source_survival` on a fine grid, evaluated only where it is informative.

    Any value ≥ T is an upper bound and any value ≤ T a lower bound, so a point may be left at
    the trivial bounds (1 and 0): the running minimum/maximum of :func:`_grid_pld` then carries
    the neighbouring bounds into it (T is non-increasing), and the result stays valid. The
    survival bounds are first evaluated on every ⌈r/4096⌉-th point; below the last coarse point
    whose upper bound is exactly 1 and whose lower bound has reached its largest coarse value,
    and above the first coarse point whose upper bound is exactly 0 (T = 0 there), the fine
    points are not evaluated. (With a window much wider than one step's loss range — many
    compositions — this skips most of the grid.)"""
    r = x_dn.size
    step = -(-r // _COARSE)
    if step <= 2:
        return _source_survival(source, x_dn, x_up)
    idx = np.append(np.arange(0, r, step), r - 1)
    c_up, c_lo, p_inf_lo = _source_survival(source, x_dn[idx], x_up[idx])
    left = np.flatnonzero((c_up >= 1.0) & (c_lo >= np.max(c_lo)))
    right = np.flatnonzero(c_up <= 0.0)
    a = int(idx[left[-1]]) if left.size else 0
    b = int(idx[right[0]]) if right.size else r - 1
    if b < a:  # not a survival function: evaluate everything
        a, b = 0, r - 1
    t_up = np.ones(r)
    t_lo = np.zeros(r)
    t_up[b + 1:] = 0.0  # T ≤ T(x_b) ≤ 0 there (exact)
    f_up, f_lo, p_inf_lo = _source_survival(source, x_dn[a:b + 1], x_up[a:b + 1])
    t_up[a:b + 1] = f_up
    t_lo[a:b + 1] = f_lo
    return t_up, t_lo, p_inf_lo


def _hull_survival(source: PairCurve, dx: float, r: int):
    """(T_up, T_lo, 0) on the grid for a curve that is an upper bound without being convex in
    e^ε (``convex`` False: Theorem 14, black-box group profiles and the amplified profiles built
    on them, user-tabulated profiles).

    The survival bounds of :func:`_source_survival` bracket the slope of f by secants through
    its *lower* values, which for such an object bound the formula, not any pair's curve: the
    "upper" survival came out below that of the curve this object certifies (up to 41 % at
    WR(100, 10) with a discrete pair, and δ(ε = 0.5) of one step at half the profile's convex
    minorant). Here the pair composed is the connect-the-dots pair of the upper values on the
    grid (:func:`~privamp.pld.discretize.upper_masses`: the greatest convex minorant of
    f̂(e^{x_i}), flat beyond the last point), whose curve lies above every convex function below
    the upper values — the true curve included — so it dominates the mechanism. Its losses are
    the grid points, and T_up(x_i⁻) = P(L ≥ x_i) is the sum of its masses from x_i on plus its
    mass at +∞ (a cumulative sum of non-negative terms: relative error ≤ r·u, added). No lower
    survival is claimed (0): the backend reports no lower end for such sources."""
    from .discretize import upper_masses

    i_lo = -(r // 2)
    # the dots stay where e^{x} is a finite, non-zero double (|x| ≤ 700): below them T_up = 1
    # (trivially valid), above them the pair is flat at its last value, i.e. that mass sits at
    # +∞ (T_up = p∞ there) — the connect-the-dots pair of the dots that were used
    first = max(0, math.ceil(-_MAX_LOSS / dx) - i_lo)
    last = min(r - 1, math.floor(_MAX_LOSS / dx) - i_lo)
    masses, p_inf = upper_masses(source, dx, i_lo + first, i_lo + last)
    t_up = np.ones(r)
    t_up[first:last + 1] = np.cumsum(masses[::-1])[::-1] + p_inf
    t_up[last + 1:] = p_inf
    t_up = np.minimum(t_up * (1 + (r + 2) * ULP), 1.0)
    return t_up, np.zeros(r), 0.0


def _grid_pld(source, dx: float, r: int) -> _GridPLD:
    """Discretise a source on the grid (module docstring, step 1)."""
    x = (np.arange(r, dtype=float) - r // 2) * dx
    # evaluate the upper survival at a point ≤ the exact grid point j·Δx and the lower at a
    # point ≥ it (the float product may be rounded either way)
    x_dn = np.nextafter(x, -np.inf)
    x_up = np.nextafter(x, np.inf)
    if isinstance(source, PairCurve) and not source.convex:
        t_up_raw, t_lo_raw, p_inf_lo = _hull_survival(source, dx, r)
    else:
        t_up_raw, t_lo_raw, p_inf_lo = _survival_on_grid(source, x_dn, x_up)
    # the bounds carry relative margins, which do not cover a result that underflowed (an
    # upper bound rounded to 0 or to a subnormal is off by up to a few 2^-1075): 2^-1072
    # absolute each way (the upper side then keeps ≥ 2^-1072 at +∞, ≈ k·2e-323 in δ)
    t_up = np.minimum.accumulate(np.clip(t_up_raw + _SUBNORMAL_SLACK, 0.0, 1.0))
    t_lo = np.maximum.accumulate(np.clip(t_lo_raw - _SUBNORMAL_SLACK, 0.0, 1.0)[::-1])[::-1]
    grow, shrink = 1 + 2 * ULP, 1 - 2 * ULP
    upper = np.empty(r)
    upper[0] = (1.0 - t_up[0]) * grow
    upper[1:] = (t_up[:-1] - t_up[1:]) * grow
    p_inf_up = float(t_up[-1])
    p_inf_lo = min(max(p_inf_lo, 0.0), float(t_lo[-1]))
    lower = np.empty(r)
    lower[:-1] = (t_lo[:-1] - t_lo[1:]) * shrink
    lower[-1] = (float(t_lo[-1]) - p_inf_lo) * shrink
    dropped = 1.0 - float(t_lo[0])
    return _GridPLD(dx, r, upper, p_inf_up, np.maximum(lower, 0.0), p_inf_lo,
                    min(1.0, max(dropped, 0.0) * (1 + 4 * ULP) + 4 * ULP))


# =============================================================================================
# composition by FFT, with certified error terms
# =============================================================================================


#: Unit roundoff of float64 (``ULP`` is the machine epsilon, 2u).
_U = 2.0**-53
#: Smallest normal float64: a per-frequency allowance for results that underflow.
_TINY = float(np.finfo(float).tiny)
#: Assumed accuracy of the float64 elementary functions evaluated below (``np.log``, ``np.exp``,
#: ``np.log1p``, ``np.expm1``, ``np.abs`` of a complex = hypot, ``np.angle`` = arctan2, and cos/sin
#: inside ``np.exp`` of an imaginary number): within 4 ulp, i.e. a relative error ≤ 8u (cos/sin:
#: absolute ≤ 8u on [−1, 1]) — the allowance :mod:`._fft_bounds` makes for NumPy's own float64
#: trigonometry (``NUMPY_F64_TRIG_ERROR``). glibc documents ≤ 1–2 ulp for these.
_FN = 8 * _U


def _log_mgf(masses: np.ndarray, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``log Σ_i c_i e^{λ x_i}`` for each λ (c ≥ 0), rounded up.

    The terms ``log c_i + λx_i`` carry ≤ 8u|log c_i| + 2u|λ x_i| (and u|λx_i| for the float grid
    loss); a term below the maximum by d enters the sum with weight e^{−d}, and |log c_i| ≤ |out|
    + d + λ|x_i|, so the relative error of the sum is ≤ 9u(|out| + 1 + λ max|x|) plus the
    exponentials, the summation (γ_{log₂ n}) and the logarithm: within the 32u(…) added."""
    pos = masses > 0
    lc = np.log(masses[pos])
    xs = x[pos]
    out = np.array([special.logsumexp(lc + lam_i * xs) for lam_i in lam])
    return out + 16 * ULP * (1 + np.abs(out) + lam * float(np.max(np.abs(xs), initial=0.0))
                             + math.log2(xs.size + 2))


def _chernoff_tail(masses: np.ndarray, x: np.ndarray, k: int, level: float, above: bool,
                   lam_extra: float) -> float:
    """Bound on the composed finite mass at or above ``level`` (``above``) or at or below it:
    ``P(S ≥ level) ≤ e^{kα(λ) − λ level}``, ``P(S ≤ level) ≤ e^{kα(−λ) + λ level}`` for every
    λ > 0, α the log-MGF of one step's masses (Chernoff; :func:`_log_mgf`, rounded up). The
    exponent gets ``8u(k|α| + λ|level|)`` for the roundings of ``k·α`` (k as a float, the
    product), of ``λ·level``, of the sum, and for ``level`` being the float of the exact window
    edge; the exponential 16u relative."""
    if not np.any(masses > 0):
        return 0.0
    lam = np.append(_LAMBDAS, lam_extra)
    kf = float(k)
    alpha = _log_mgf(masses, x if above else -x, lam)
    with np.errstate(over="ignore", invalid="ignore"):
        lam_level = lam * level
        expo = kf * alpha + (-lam_level if above else lam_level)
        expo = expo + 4 * ULP * (kf * np.abs(alpha) + np.abs(lam_level))
        tail = up_ulps(float(np.min(np.exp(expo))), 8)
    return min(tail, 1.0) if tail == tail else 1.0


def _pow_up(base: np.ndarray, k: int) -> np.ndarray:
    """An upper bound on ``base^k`` (elementwise; base ≥ 0, normal or 0).

    ``t = log(base)`` is within 8u|log base| (:data:`_FN`), ``s = k·t`` (k as a float, within
    u; the product, u) within ``u|s| + 9.2u·k|t|`` of ``k log base``; ``12u(k|t| + |s|)`` covers
    that and the rounding of ``s + slack``; ``exp`` (8u) and the final product by ``1 + 10u``
    (u) leave ``(1 − 8u)(1 + 10u)(1 − u) ≥ 1``. A result that underflows is within a few 2^-1074
    of the truth (the callers add :data:`_TINY`)."""
    kf = float(k)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        t = np.log(base)
        s = kf * t
        slack = 12 * _U * (kf * np.abs(t) + np.abs(s))
        out = np.exp(s + slack) * (1 + 10 * _U)
    return np.where(base > 0, out, 0.0)


@dataclass(frozen=True)
class _FftError:
    """Bounds on the rounding error ``Δu`` of the composed masses ``u = H irfft(rfft(Hc)^k)``
    (:func:`_power_spectrum`): ``Δu = e₁ + e₂`` with

    * ``e₁ = irfft(P − X^k)``, the error of the powered spectrum P pushed through an *exact*
      inverse transform: ``|e₁_j| ≤ d_inf`` for every j and ``‖e₁‖₂ ≤ d_2`` (Parseval);
    * ``e₂ = fl(irfft(P)) − irfft(P)``, the rounding of the inverse transform itself:
      ``|e₂_j| ≤ rnd`` for every j (componentwise, docs/certification.md "FFT rounding errors").
    """

    d_inf: float
    d_2: float
    rnd: float

    def weighted(self, g_sum: float, g_norm: float) -> float:
        """Bound on ``|⟨g, Δu⟩|`` for weights g with ``Σ|g| ≤ g_sum`` and ``‖g‖₂ ≤ g_norm``:
        Hölder (ℓ1, ℓ∞) or Cauchy–Schwarz (ℓ2, ℓ2) for e₁, whichever is smaller, and
        (ℓ1, ℓ∞) for e₂."""
        return min(g_sum * self.d_inf, g_norm * self.d_2) + g_sum * self.rnd


def _power_spectrum(c: np.ndarray, k: int) -> tuple[np.ndarray, _FftError]:
    """``u = H irfft(rfft(Hc)^k)`` (NumPy's pocketfft, r 5-smooth) and bounds on its rounding
    error (:class:`_FftError`; the derivation is in docs/certification.md, "The Fourier
    accountant").

    * **forward**: ``|X̃_f − X_f| ≤ e = κ u ‖x‖₁ + a(r)`` for every f
      (:func:`~privamp.pld._fft_bounds.rfft_error_bound`: κ of pocketfft's radf passes for the
      factorisation of r, a(r) = r·2^-1040 for underflow);
    * **power**: ``|P_f − X_f^k| ≤ D_f``, ``D_f = B_f(1 − e^{−a_f}) + B_f ρ_f + tiny`` with
      ``B_f ≥ (|X̃_f| + e)^k`` (:func:`_pow_up`) and ``a_f ≥ k log(1 + e/|X̃_f|)``: the
      perturbation ``|X^k − X̃^k| ≤ (|X̃| + e)^k − |X̃|^k``, and ρ_f the relative rounding of
      ``P = exp(k log|X̃|)·exp(i k arg X̃)``: ``expm1(u(k(11|log|X̃|| + 41) + 21))`` (logarithm,
      products by k, exponential, arctan2, cos/sin and the final product, each within
      :data:`_FN`);
    * **inverse** (``e₁``): ``|irfft(Z)_j| ≤ Σ_f w_f|Z_f|/r`` and ``‖irfft(Z)‖₂ =
      √(Σ_f w_f|Z_f|²/r)`` (Parseval; w_f = 1 at f = 0 and r/2, 2 elsewhere: the Hermitian
      spectrum; irfft drops the imaginary parts of Z_0 and Z_{r/2}, which only lowers both);
    * **inverse rounding** (``e₂``): ``κ' u Σ_f w_f|P_f|/r + a(r)`` per output
      (:func:`~privamp.pld._fft_bounds.irfft_error_constant`, the 1/r scaling included).

    The sums (≤ 2^23 terms, pairwise: relative error ≤ 24u) and the O(u) relative roundings of
    the products forming D_f are covered by the factor 1 + 1e-6."""
    r = c.size
    h = r // 2
    xvec = np.concatenate([c[h:], c[:h]])  # H: position p holds the loss ≡ pΔx (mod 2L)
    # ‖x‖₁ in floating point: within r·u ≤ 2^-29 of the exact sum in any summation order,
    # covered by the 1 + 1e-6 of rfft_error_bound
    e = _fb.rfft_error_bound(r, np.float64, float(np.sum(np.abs(xvec))))
    spec = np.fft.rfft(xvec)
    kf = float(k)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        mag = np.abs(spec)  # within 8u of |X̃|
        pos = mag > 0
        log_mag = np.log(mag)
        powered = np.exp(kf * log_mag) * np.exp(1j * (kf * np.angle(spec)))
        powered = np.where(pos, powered, 0.0)
        # B ≥ (|X̃| + e)^k: mag(1 + 32u) ≥ |X̃| after its rounding, the sum and the product
        # rounded up by (1 + 4u)
        big = _pow_up((mag * (1 + 32 * _U) + e) * (1 + 4 * _U), k)
        # a ≥ k log1p(e/|X̃|): e/(mag(1 − 32u)) ≥ e/|X̃|, log1p and the products rounded up
        a = kf * np.log1p(e / (mag * (1 - 32 * _U))) * (1 + 32 * _U)
        frac = np.minimum(-np.expm1(-a) * (1 + 20 * _U), 1.0)
        frac = np.where(pos, frac, 1.0)  # X̃_f = 0: |X_f^k| ≤ e^k ≤ B
        lam = np.where(pos, np.abs(log_mag), 0.0)
        rho = np.expm1(_U * (kf * (11 * lam + 41) + 21) * (1 + 1e-6)) * (1 + 20 * _U)
        d = big * frac + np.where(pos, big * rho, 0.0) + _TINY
        d = np.where(np.isnan(d), np.inf, d)
    y = np.fft.irfft(powered, r)
    u = np.concatenate([y[h:], y[:h]])
    m = spec.size
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if r % 2 == 0:
        weights[-1] = 1.0
    kappa_inv = _fb.irfft_error_constant(r, np.float64) * _U
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        sum_d = float(np.sum(weights * d))
        # squares that underflow lose < 2^-1074 each: 2m·tiny covers them
        sum_d2 = float(np.sum(weights * d * d)) + 2 * m * _TINY
        sum_p = float(np.sum(weights * np.abs(powered)))
        d_inf = sum_d / r * (1 + 1e-6)
        d_2 = math.sqrt(sum_d2 / r) * (1 + 1e-6)
    rnd = kappa_inv * sum_p / r * (1 + 1e-6) + _fb.underflow_allowance(r)
    return u, _FftError(d_inf, d_2, rnd)


@dataclass
class _Composed:
    """A composed upper or lower PLD on the window, with its certified error terms."""

    kind: str  # "upper" or "lower"
    x: np.ndarray  # grid losses
    u: np.ndarray  # composed masses (clipped at 0 for the upper)
    fft: _FftError  # FFT rounding
    inf_term: float  # P(S = +∞) (rounded to the safe side)
    tail: float  # truncation/aliasing: P(S ≥ L) for the upper, P(S < −L) for the lower

    def delta(self, eps: float) -> float:
        """Certified δ at ``eps`` (≥ 0) for this side of the bracket."""
        x, u = self.x, self.u
        j = int(np.searchsorted(x, eps, side="right"))
        xs = x[j:]
        us = u[j:]
        n = us.size
        if n:
            g = -np.expm1(np.minimum(eps - xs, 0.0))
            body = float(np.sum(g * us))
            abs_body = float(np.sum(g * np.abs(us)))
            # each computed weight is within gerr of the weight of the exact grid loss (the
            # float x_j is within u|x_j| of it; ε − x_j, u; expm1, 8u), and the point just
            # below ε may truly lie above it (its weight is then ≤ gerr)
            gerr = min(1.0, 4 * ULP * (abs(eps) + max(abs(float(x[0])), abs(float(x[-1]))) + 1))
            g_sum = float(np.sum(g)) * (1 + 1e-9) + (n + 1) * gerr
            g_norm = math.sqrt(float(np.sum(g * g))) * (1 + 1e-9) + math.sqrt(n + 1) * gerr
            near = float(np.sum(np.abs(u[max(j - 1, 0):])))
            err = (n + 4) * ULP * abs_body + gerr * near + self.fft.weighted(g_sum, g_norm)
        else:
            body, err = 0.0, 0.0
        # the final sums: ≤ u per addition of the partial sums' moduli
        slop = 4 * ULP * (abs(body) + err + self.inf_term + self.tail)
        if self.kind == "upper":
            return min(1.0, max(body, 0.0) + err + self.inf_term + self.tail + slop)
        return max(0.0, body - err + self.inf_term - self.tail - slop)

    def epsilon(self, delta: float) -> float:
        """Upper: the smallest ε ≥ 0 with δ_upper(ε) ≤ δ (``inf`` if none); lower: the largest
        ε ≥ 0 with δ_lower(ε) > δ (0 if none). Bisection keeps the safe end."""
        top = float(self.x[-1])
        if self.kind == "upper":
            if self.delta(0.0) <= delta:
                return 0.0
            if self.delta(top) > delta:
                return math.inf

            def feasible(e, idx):
                return np.array([self.delta(float(v)) <= delta for v in np.atleast_1d(e)])

            return float(bisect_threshold(feasible, 0.0, top, rtol=1e-12, atol=1e-12))
        if self.delta(0.0) <= delta:
            return 0.0
        if self.delta(top) > delta:
            # beyond the grid δ_lower is the constant (mass at +∞ − tail) > δ: so is δ(ε)
            return math.inf

        def feasible_neg(e, idx):
            return np.array([self.delta(-float(v)) > delta for v in np.atleast_1d(e)])

        return float(-bisect_threshold(feasible_neg, -top, -0.0, rtol=1e-12, atol=1e-12))


def _compose(grid: _GridPLD, k: int) -> tuple[_Composed, _Composed]:
    """Compose the upper and the lower PLD of one step k times (module docstring, step 2).

    Aliasing: the FFT composes modulo 2L = rΔx, so a composed loss s outside the window
    ``[−L, L)`` is counted at ``s − 2Lm`` inside it. Mass at s ≥ L lands lower, where its weight
    ``(1 − e^{ε − ·})_+`` is smaller (the weight is non-decreasing): it can only *lower* δ — the
    upper side adds ``P(S ≥ L)``, the lower side needs nothing for it. Mass at s < −L has weight
    0 (ε ≥ 0 > s) but lands higher: at most ``P(S < −L)`` too much — subtracted from the lower
    side, harmless for the upper one."""
    r, dx = grid.r, grid.dx
    x = (np.arange(r, dtype=float) - r // 2) * dx
    half = (r // 2) * dx
    lam_default = half / 2  # λ = L/2 (Koskela et al.; catalogue §2.6.3)
    kf = float(k)
    # upper: the missing top tail (S ≥ L) only
    u_up, fe_up = _power_spectrum(grid.upper, k)
    above_up = _chernoff_tail(grid.upper, x, k, half, True, lam_default)
    p = grid.p_inf_upper
    if p >= 1.0:
        inf_up = 1.0
    else:
        # 1 − (1 − p)^k: log1p (8u) and k·(…) (2u) give the argument a relative error ≤ 10.1u,
        # which moves 1 − e^{arg} by ≤ 10.1u relative (x/(e^x − 1) ≤ 1); expm1 8u, product u
        arg = kf * math.log1p(-p)
        inf_up = -math.expm1(arg) * (1 + 16 * ULP)
    upper = _Composed("upper", x, np.maximum(u_up, 0.0), fe_up, min(inf_up, 1.0), above_up)
    # lower: the mass below the window folds into it
    u_lo, fe_lo = _power_spectrum(grid.lower, k)
    below_lo = _chernoff_tail(grid.lower, x, k, -half - dx, False, lam_default)
    d, p = grid.dropped_lower, grid.p_inf_lower
    if d >= 1.0 or p <= 0.0:
        inf_lo = 0.0
    else:
        # (1 − d)^k − (1 − d − p)^k: decreasing in d (an upper bound on the dropped mass is
        # used), increasing in p (a lower bound); p is clipped to 1 − d
        arg_d = kf * math.log1p(-d)
        ratio = p / (1.0 - d)
        # all the kept mass at +∞ (ratio 1): (1 − d)^k − 0
        arg_p = kf * math.log1p(-ratio) if ratio < 1.0 else -math.inf
        inf_lo = math.exp(arg_d) * -math.expm1(arg_p)
        inf_lo *= 1 - 8 * ULP * (4 + abs(arg_d) + abs(arg_p))
    lower = _Composed("lower", x, u_lo, fe_lo, max(inf_lo, 0.0), below_lo)
    return upper, lower


# =============================================================================================
# the accountant
# =============================================================================================


def _sources(source) -> list:
    if isinstance(source, PairCurve | MixturePLD):
        return [source]
    if isinstance(source, str | bytes) or not isinstance(source, Sequence) or not source:
        raise InvalidTypeError("source", "a PairCurve, a MixturePLD or a non-empty sequence of "
                               "them", source)
    out = list(source)
    for i, s in enumerate(out):
        if not isinstance(s, PairCurve | MixturePLD):
            raise InvalidTypeError(f"source[{i}]", "a PairCurve or a MixturePLD", s)
    return out


def _check_grid(L, r):
    if r is not None:
        r = check_int("r", r, "[4, inf)")
        if r % 2:
            raise InvalidParameterError("r", "an even integer >= 4 (the half-swap H needs it)", r)
        if r > MAX_GRID:
            raise NumericalError(f"r = {r:,} grid points exceed the memory bound of "
                                 f"{MAX_GRID:,} (2^24); use a smaller r or a larger grid step")
        if _even_fast_length(r) != r:
            raise InvalidParameterError(
                "r", "an even 5-smooth integer (2^a·3^b·5^c, a ≥ 1): the FFT lengths whose "
                "rounding errors privamp bounds (pocketfft's radix-2/3/4/5 passes; other lengths "
                f"run Bluestein or generic passes); e.g. {_even_fast_length(r):,}", r)
    if L is not None:
        L = check_real("L", L, "(0, inf)")
    return L, r


def _even_fast_length(n: int) -> int:
    """The smallest even 5-smooth number ≥ n (n ≥ 2)."""
    return 2 * fast_length(-(-n // 2))


def _p_inf_upper(source) -> float:
    """Upper bound on the single-step mass at +∞ (untracked mixture components count)."""
    if isinstance(source, MixturePLD):
        return math.exp(source.log_untracked)
    return math.exp(source.log_mass_at_infinity)


def _auto_L(sources, k: int, log_tol: float, eps: float | None) -> float:
    """The truncation bound L chosen from the inputs.

    1. Grow L (×1.5 from 1) until, for every source, the single-step mass that is certainly
       finite and above L (lower survival bound minus the upper bound on the mass at +∞), and
       the mass certainly below −L, are at most ``tol/(4k)`` (so moving the former to +∞ and
       dropping the latter costs about tol/4 after k steps).
    2. Raise L until the Chernoff bounds ``e^{kα^±(λ) − λL}`` on the composed mass outside
       [−L, L), with α^± from the upper and lower PLDs on a coarse grid of 2^15 points, are at
       most tol/4 for the best λ.
    The final error terms are computed rigorously on the real grid; this only picks L. The
    tolerance comes as its logarithm (``1e-3 × delta`` underflows for δ below 1e-305).
    """
    per_step = math.exp(log_tol - math.log(4.0 * k))  # 0 if it underflows: tails must vanish
    big = 1.0
    for _ in range(40):
        pts = np.array([-big, big])
        good = True
        for src in sources:
            t_up, t_lo, _ = _source_survival(src, np.nextafter(pts, -np.inf),
                                             np.nextafter(pts, np.inf))
            # mass that is certainly finite and above L, or certainly below −L (the bounds of a
            # pair curve carry a slack of their own that no L removes)
            if float(t_lo[1]) - _p_inf_upper(src) > per_step or 1.0 - float(t_up[0]) > per_step:
                good = False
                break
        if good:
            break
        big *= 1.5
    else:
        raise NumericalError("could not find a truncation bound L at which the single-step "
                             "privacy loss tails fall below the tolerance")
    best = big
    # the coarse grid covers [−2L₁, 2L₁): an atom of the loss at ±L₁ itself (Laplace: ±ε₀ =
    # ±1 = the first L₁) must be inside it, not sent to ±∞ where no Chernoff bound sees it
    r0 = 2**15
    dx0 = 4 * big / r0
    x0 = (np.arange(r0, dtype=float) - r0 // 2) * dx0
    lam = np.append(_LAMBDAS, big / 2)
    log_tol = log_tol - math.log(4.0)
    for src in sources:
        g = _grid_pld(src, dx0, r0)
        for masses in (g.upper, g.lower):
            if not np.any(masses > 0):
                continue
            for sign in (1.0, -1.0):
                with np.errstate(over="ignore", invalid="ignore"):
                    need = (k * _log_mgf(masses, sign * x0, lam) - log_tol) / lam
                need = need[~np.isnan(need)]
                best = max(best, float(np.min(need)) if need.size else math.inf)
    if not math.isfinite(best):
        raise NumericalError("could not find a truncation bound L at which the Chernoff bounds "
                             "on the composed privacy loss fall below the tolerance")
    if eps is not None:
        best = max(best, eps + 4 * dx0)
    return best * 1.05


def _build(source, k: int, L: float, r: int) -> tuple[_Composed, _Composed]:
    dx = 2.0 * L / r
    grid = _grid_pld(source, dx, r)
    return _compose(grid, k)


def fourier_accountant(source, *, count: int, eps: float | None = None,
                       delta: float | None = None, L: float | None = None, r: int | None = None,
                       grid_step: float | None = None, tail_tol: float | None = None
                       ) -> FourierBracket:
    """The Fourier accountant (Zhao & Liu 2023, Algorithm 1; Koskela et al. 2020, 2021) with
    certified error terms: a bracket on δ(ε) (``eps`` given) or on ε(δ) (``delta`` given) after
    ``count`` compositions of the same mechanism.

    See the module docstring for the construction and every error term. The bracket is certified
    for the *pair* described by ``source``; whether that pair dominates the mechanism is the
    source's business (``MixturePLD.certified``; a ``PairCurve`` is a dominating pair by
    construction), and the result says which: ``certified=False`` (``status == "estimate"``)
    as soon as one source is a :class:`MixturePLD` with ``certified=False`` (WR, MUST) — its
    numbers are then estimates for the mechanism, not guarantees. For an asymmetric relation
    pass both orientations (a sequence): the result is the worse one (MUST Theorem 4(a)).

    **Grid drift.** Each composition rounds the loss up (upper) or down (lower) by up to one
    grid step, so the two sides drift apart by up to ``count × Δx`` in the loss — that is the
    method as published. privamp's ``pld`` backend uses a drift-free construction; this backend
    exists for comparison.

    Parameters
    ----------
    source : PairCurve, MixturePLD or sequence of them
        One step's dominating pair (both orientations for add/remove).
    count : int
        Number of compositions k ≥ 1.
    eps, delta : float
        Exactly one: ε ≥ 0 (returns a bracket on δ) or δ ∈ (0, 1) (returns a bracket on ε).
    L : float, optional
        Truncation bound; the grid covers ``[−L, L)``. Default: the smallest L (×1.05) for which
        the single-step tails beyond ±L are below ``tail_tol/(4 count)`` and the Chernoff bound
        on the composed mass outside the window is below ``tail_tol/4``.
    r : int, optional
        Number of grid points: even and 5-smooth (2^a·3^b·5^c, the FFT lengths with derived
        rounding-error constants), ≤ 2^24 (``NumericalError`` above). Default:
        ``2⌈L/grid_step⌉`` rounded up to such a number, between 2^14 and 2^22 (beyond 2^22
        the drift k·Δx exceeds the requested resolution: the bracket says so by its width).
    grid_step : float, optional
        Requested Δx when r is not given. Default ``0.02/count`` (a drift of about 0.02 in ε).
    tail_tol : float, optional
        Target for the truncation terms when L is chosen automatically: default 1e-12 (absolute)
        when ``eps`` is given, ``1e-3 × delta`` when ``delta`` is given.

    Returns
    -------
    FourierBracket
        ``(lower, upper)`` on δ(ε) (clipped to [0, 1]) or on ε(δ) (``upper = inf`` when the
        grid cannot certify the target), and ``certified`` (see above).

    Raises
    ------
    InvalidParameterError
        Bad count, eps, delta, L, r, grid_step, tail_tol, or not exactly one of eps and delta.
    NumericalError
        r > 2^24; an automatic grid on which the drift ``count × Δx`` would exceed
        :data:`MAX_AUTO_DRIFT` (10) — many compositions over a wide window, where the bracket
        would be uninformative (pass ``L`` and ``r`` to force it); no truncation bound L found.

    Examples
    --------
    >>> from privamp.sampling import WOR
    >>> pld = MixturePLD.from_scheme(WOR(n=100, m=10), noise_multiplier=1.0)
    >>> b = fourier_accountant(pld, count=20, eps=1.0, L=8.0, r=2**14)
    >>> round(b.lower, 3), round(b.upper, 3), b.status
    (0.088, 0.091, 'certified')
    >>> from privamp.sampling import WR
    >>> fourier_accountant(MixturePLD.from_scheme(WR(n=100, m=10), 1.0), count=20, eps=1.0,
    ...                    L=8.0, r=2**14).status
    'estimate'
    """
    sources = _sources(source)
    k = check_int("count", count, "[1, inf)")
    if (eps is None) == (delta is None):
        raise InvalidParameterError("eps/delta", "exactly one of eps and delta",
                                    (eps, delta))
    if eps is not None:
        eps = check_real("eps", eps, "[0, inf)")
    if delta is not None:
        delta = check_real("delta", delta, "(0, 1)")
    L, r = _check_grid(L, r)
    if grid_step is not None:
        grid_step = check_real("grid_step", grid_step, "(0, inf)")
        if r is not None:
            raise InvalidParameterError("grid_step", "omitted when r is given", grid_step)
    if tail_tol is not None:
        log_tail_tol = math.log(check_real("tail_tol", tail_tol, "(0, 1)"))
    elif eps is not None:
        log_tail_tol = math.log(DEFAULT_TAIL_TOL_FOR_EPS)
    else:
        log_tail_tol = math.log(DEFAULT_TAIL_TOL_FOR_DELTA) + math.log(delta)
    if L is None:
        L = _auto_L(sources, k, log_tail_tol, eps)
    if r is None:
        step = grid_step if grid_step is not None else DEFAULT_EPS_RESOLUTION / k
        r_want = 2 * math.ceil(min(L / step, 1e30))
        if grid_step is not None and r_want > MAX_GRID:
            raise NumericalError(f"grid_step {grid_step!r} over [-{L:g}, {L:g}) needs "
                                 f"{r_want:,} points, more than {MAX_GRID:,} (2^24)")
        # 5-smooth (the analysed FFT lengths); the bounds are powers of two
        r = min(max(_even_fast_length(min(r_want, DEFAULT_MAX_GRID)), MIN_DEFAULT_GRID),
                DEFAULT_MAX_GRID)
        drift = k * 2 * L / r
        if drift > MAX_AUTO_DRIFT:
            raise NumericalError(
                f"the Fourier accountant cannot resolve {k:,} compositions here: its upper and "
                f"lower sides drift apart by count × grid step = {drift:.3g} in the privacy "
                f"loss on its largest automatic grid ({r:,} points over [-{L:.4g}, {L:.4g})), "
                f"more than {MAX_AUTO_DRIFT:g}; the bracket would carry no information. Use "
                "the 'pld' backend (no drift), or force it with explicit L and r (up to 2^24) "
                "in privamp.pld.fourier.fourier_accountant")
    lowers, uppers = [], []
    for src in sources:
        upper, lower = _build(src, k, L, r)
        if eps is not None:
            lowers.append(lower.delta(eps))
            uppers.append(upper.delta(eps))
        else:
            lowers.append(lower.epsilon(delta))
            uppers.append(upper.epsilon(delta))
    certified = all(getattr(src, "certified", True) for src in sources)
    low, up = float(max(lowers)), float(max(uppers))
    if not all(getattr(src, "convex", True) for src in sources):
        # a bound that is not a privacy profile (Theorem 14, black-box groups): its upper side
        # is valid, its lower side is not a lower bound of anything (docs/certification.md)
        return FourierBracket(None, up, certified=certified)
    if low > up * (1 + 1e-9) + 1e-300:
        raise InconsistentBoundsError(
            f"internal inconsistency: the Fourier accountant's lower end {low!r} exceeds its "
            f"upper end {up!r}; please report this (privamp refuses rather than report either)")
    return FourierBracket(min(low, up), up, certified=certified)
