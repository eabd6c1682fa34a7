"""Privacy loss distributions on a uniform grid, composed by FFT with certified error terms.

A :class:`StepPLD` is the distribution of the privacy loss L = log(P/Q) under P of one
dominating pair, on the grid ``l_j = (i_lo + j) h``, plus a mass at +∞. It comes in two kinds:
``"upper"`` (a dominating pair, :func:`~privamp.pld.discretize.upper_masses`) and ``"lower"`` (a
dominated one). For a composition the privacy profile is

    δ(ε) = E[(1 − e^{ε − S})_+] + P(S = +∞),   S = L_1 + … + L_T,

so composing is convolving the finite parts (FFT; self-composition by exponentiation in the
Fourier domain, one FFT for any number of steps) and combining the masses at +∞.

Certified error terms of :func:`compose` (each goes to the safe side of the bracket):

* **window/aliasing**: the FFT is circular; the window [A, B] is chosen with Chernoff bounds
  ``P(S ≥ B) ≤ e^{Λ(λ) − λB}`` and ``P(S ≤ A) ≤ e^{Λ(−λ) + λA}`` (Λ the log-MGF of the composed
  finite part, computed exactly from the discrete masses) so that both tails are below a
  tolerance; mass above B is missing from the top (added to the upper δ), mass below A folds to the
  top (subtracted from the lower δ);
* **FFT rounding**: each forward rfft coefficient is within κ·u·‖p‖₁ of the exact DFT (κ from
  :mod:`._fft_bounds`: a rounding-error analysis of the pocketfft passes NumPy runs, for the
  factorisation of N, docs/certification.md; about 5–13 log₂N). Raising to the power T
  multiplies a relative error by T, so the forward transforms and the powering run in extended
  precision (``numpy.longdouble``, u ≈ 5.4e-20, where the platform has it); the perturbation
  of a product of powers is bounded exactly by ``Π(|X_s| + e_s)^{c_s} − Π|X_s|^{c_s}`` per
  frequency. Through Parseval, an error D_k in the spectrum changes ⟨g, y⟩ by at most
  ``Σ_k |G_k| D_k / N ≤ (Σ g) Σ_k D_k / N`` (g ≥ 0 the δ weights), and the double-precision
  inverse transform adds at most ``(Σ g) κ' u Σ_k |Y_k| / N`` (κ' for the backward passes and
  the 1/N scaling). Both are proportional to Σ g, so the certified δ stays a closed form on
  each grid cell (:meth:`ComposedPLD.fft_error`);
* **masses and loss positions**: per-step masses carry relative rounding ≤ 2u, which composes to a
  relative factor (1 + 2u)^T on the finite part; losses carry ≤ 4u(1 + |l|) each, which shifts
  the composed loss by at most T times that.
"""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy import fft  # the same pocketfft as scipy.fft, without SciPy's ~0.25 s import

from .._numerics import ULP, bisect_threshold, floor_pow
from .._validation import check_real
from ..errors import InvalidParameterError, NumericalError
from . import _fft_bounds as _fb
from .curves import PairCurve
from .discretize import lower_masses, upper_masses

__all__ = ["ComposedPLD", "GridTooLargeError", "StepPLD", "compose"]

#: Largest FFT length: 2^23 points, 64 MB per real and 128 MB per complex double array; with
#: the dozen work arrays of a composition (and an extended-precision FFT in the worst case) the
#: peak is about 1 GB (0.9–1.1 GB measured at T = 1e7).
MAX_FFT = 2**23
#: Largest log untilting factor at which a tilted composition's δ is evaluated: below the
#: loss where ``e^{log_scale − λ l}`` reaches e^300 the upper δ is reported as 1 and the lower
#: as 0. Nothing is lost: the FFT's rounding bound there is at least e^300 times the composed
#: window's relative accuracy (about 1e-16 / N of the tilted mass per grid point, N ≤ 2^23),
#: far above 1. And the δ functional's sums of mass times factor stay below e^600, where no
#: block of :func:`_discounted_suffix` can overflow.
_MAX_LOG_UNTILT = 300.0
#: Bins of :meth:`StepPLD.log_mgf_bound` (steps with more grid points are binned).
_MGF_BINS = 8192
#: The largest tail outside the window a tilted composition leaves, as a fraction of its
#: (tilted) mass, in logarithms: however small the untilting factor, the window keeps the bulk.
_MAX_LOG_TILTED_TAIL = math.log(1e-3)
#: λ grid of the Chernoff window bounds (every λ gives a valid bound; the best one is used).
_LAMBDAS = np.geomspace(1e-3, 1e4, 36)
#: Extended precision for the forward transforms and the powering, where the platform has it.
#: NumPy ≥ 2 transforms long doubles natively; a build that would round them to doubles (NumPy
#: 1.x) falls back to double precision, whose error bounds then apply.
#: (x87 extended only: the format :mod:`._fft_bounds` has an error analysis for.)
_EXT = (np.longdouble if np.finfo(np.longdouble).nmant == 63
        and fft.rfft(np.zeros(4, dtype=np.longdouble)).dtype == np.clongdouble else np.float64)
_EXT_U = float(np.finfo(_EXT).eps) / 2


class GridTooLargeError(NumericalError):
    """A composition whose window needs more than :data:`MAX_FFT` points at spacing ``h``,
    raised before any array of that size is allocated. ``span`` is the window's width in loss
    units (it barely depends on ``h``), so ``span / MAX_FFT`` is about the finest spacing that
    fits (:func:`min_spacing`)."""

    def __init__(self, message: str, *, points: int, h: float, span: float):
        super().__init__(message)
        self.points = points
        self.h = h
        self.span = span

    def min_spacing(self, fill: float = 0.8) -> float:
        """A spacing at which the same window takes at most ``fill · MAX_FFT`` points (the
        window of a coarser grid is a little wider: connect-the-dots on a coarser grid
        dominates the finer one, so its Chernoff tails are heavier — hence the margin)."""
        return self.span / (fill * MAX_FFT)


def fast_length(n: int) -> int:
    """The smallest 5-smooth number (2^a 3^b 5^c) that is at least n ≥ 1: a fast FFT length.

    >>> fast_length(531_000), fast_length(100_001)
    (531441, 101250)
    """
    best = 1 << max(n - 1, 0).bit_length()  # the next power of two
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            p2 = 1 << (-(-n // p35) - 1).bit_length()  # smallest power of two with p2·p35 ≥ n
            best = min(best, p2 * p35)
            p35 *= 3
        p5 *= 5
    return best


def ladder_length(n: int) -> int:
    """The smallest 2^k or 3·2^k that is at least n ≥ 1: the FFT length of a composition.

    Coarser than :func:`fast_length` (at most 1.5× n instead of about 1.05×) so that a window
    that grows a little — the same steps composed a few more times, a ledger queried after
    every epoch — keeps its length, and with it the transforms of its steps (memoised per
    length).

    >>> ladder_length(100_001), ladder_length(131_072), ladder_length(131_073)
    (131072, 131072, 196608)
    """
    p2 = 1 << max(n - 1, 0).bit_length()  # the next power of two
    p3 = 3 * (1 << max(-(-n // 3) - 1, 0).bit_length())
    return min(p2, p3)


@dataclass(frozen=True)
class StepPLD:
    """Privacy-loss distribution of one dominating (``kind="upper"``) or dominated (``"lower"``)
    pair on the grid ``offset + (i_lo + j) h``, with mass ``p_inf`` at +∞."""

    h: float
    i_lo: int
    masses: np.ndarray
    p_inf: float
    kind: str
    label: str = ""
    #: the grid's offset: a discrete loss law has its atoms exactly on ``offset + i h``
    offset: float = 0.0

    @classmethod
    def from_curve(cls, curve: PairCurve, h: float, eps_lo: float, eps_hi: float,
                   kind: str = "upper", *, negligible: float = 0.0, offset: float = 0.0,
                   kink_error: float | None = None,
                   atoms: np.ndarray | None = None, tolerance: float = 0.0) -> StepPLD:
        """Discretise a pair's hockey-stick curve on [eps_lo, eps_hi] with spacing h.

        ``negligible`` (lower kind only): P-mass that may move down to the grid point below it
        without the drift-free merging (it lowers δ of a T-fold composition by at most
        ``T h negligible``).

        ``kink_error`` (with ``offset``): every kink of the curve (every atom of its loss law,
        :meth:`PairCurve.kinks`) is within ``kink_error`` of a grid point ``offset + i h`` and
        all of them lie in [eps_lo, eps_hi]. The curve is then affine between grid points (up
        to that error), connect-the-dots is exact, and the lower kind is connect-the-dots
        through lower values instead of the tangent construction
        (:func:`~privamp.pld.discretize.upper_masses` with ``lower=True``).

        ``atoms`` (lower kind, tangent construction): positions of atoms of a loss with a
        continuous part, a hint that keeps them whole
        (:func:`~privamp.pld.discretize.lower_masses`, step 3).

        ``tolerance`` (upper kind): the curve's values are taken only where chords of fewer
        points would exceed the full connect-the-dots curve by more than this
        (:func:`~privamp.pld.discretize._adaptive_upper`); 0 takes every grid point.
        """
        if kind not in ("upper", "lower"):
            raise InvalidParameterError("kind", "'upper' or 'lower'", kind)
        i_lo = math.floor((eps_lo - offset) / h)
        i_hi = math.ceil((eps_hi - offset) / h)
        if i_hi - i_lo + 1 > MAX_FFT:
            # refused before the step grid (and its curve values) is allocated; the engine's
            # fitter retries on a coarser grid, as for a composed window
            raise GridTooLargeError(
                f"a step grid of {i_hi - i_lo + 1:,} points at spacing {h:.3g} (more than "
                f"{MAX_FFT:,})", points=i_hi - i_lo + 1, h=h, span=eps_hi - eps_lo)
        if kind == "upper":
            masses, p_inf = upper_masses(curve, h, i_lo, i_hi, offset=offset,
                                         tolerance=tolerance)
        elif kink_error is not None:
            masses, p_inf = upper_masses(curve, h, i_lo, i_hi, offset=offset, lower=True,
                                         kink_error=kink_error)
        else:
            masses, p_inf = lower_masses(curve, h, i_lo, i_hi, negligible=negligible,
                                         offset=offset, atoms=atoms)
        return cls(h, i_lo, masses, p_inf, kind, repr(curve), offset)

    @property
    def losses(self) -> np.ndarray:
        return self.offset + (self.i_lo + np.arange(self.masses.size)) * self.h

    def log_mgf(self, lam: np.ndarray) -> np.ndarray:
        """log E[e^{λL}; L finite] for an array of λ (exact up to rounding, rounded up)."""
        return self._log_mgf(lam, binned=0)

    def log_mgf_bound(self, lam: np.ndarray, max_width: float = math.inf) -> np.ndarray:
        """An upper bound on :meth:`log_mgf`, cheaper on long steps: beyond
        :data:`_MGF_BINS` grid points the positive masses are summed in bins of W consecutive
        grid points (at most :data:`_MGF_BINS` bins, each at most ``max_width`` loss units
        wide: (W − 1) h ≤ ``max_width``), each bin at its largest loss for λ ≥ 0 and its
        smallest for λ < 0 (e^{λl} is then at least every member's), so the bound exceeds the
        exact value by at most |λ| (W − 1) h. A Chernoff window (:func:`_window`) of c copies
        of the step is then at most c (W − 1) h wider on each side: ``_window`` gives each
        step a ``max_width`` that keeps the sum small. (Exact, the windows' 72 λ's over 3.7M
        masses were 14 % of a δ query at σ 0.5, q 1e-4, 10⁴ steps. Bins of n/8192 points
        whatever the count widened the window of 10⁷ steps by 10⁷ bins: its grid was
        coarsened by the memory bound, and ε's bracket went from 0.094 % to 0.17 %.)"""
        return self._log_mgf(lam, binned=self._bin_width(max_width))

    def _bin_width(self, max_width: float) -> int:
        """Grid points per bin of :meth:`log_mgf_bound` (0: no binning)."""
        n = self.masses.size
        if n <= _MGF_BINS:
            return 0
        width = -(-n // _MGF_BINS)
        if not max_width >= 0.0:  # NaN or negative: no binning
            return 0
        if max_width < (width - 1) * self.h:
            width = 1 + int(max_width // self.h)
        return width if width > 1 else 0

    def _log_mgf(self, lam: np.ndarray, binned: int) -> np.ndarray:
        """Rounding: each exponent ``log m + λ l`` is within 3u of |log m| + |λ l| (2u a term,
        u the sum), the sum of exponentials within log₂(n + 2)·u relative (pairwise), the
        logarithm within 8u(1 + |out|), and a bin's sum of W masses within (W − 1)u."""
        masses = np.maximum(self.masses, 0.0)
        extra = 0.0
        if binned:
            width = binned  # grid points per bin
            edges = np.arange(0, masses.size, width)
            sums = np.add.reduceat(masses, edges)
            losses = self.losses
            lo_l = losses[edges]
            hi_l = losses[np.minimum(edges + width, masses.size) - 1]
            keep = sums > 0
            m, lo_l, hi_l = sums[keep], lo_l[keep], hi_l[keep]
            extra = width * ULP
        else:
            pos = np.flatnonzero(masses > 0)
            m = masses[pos]
            lo_l = hi_l = self.losses[pos]
        if m.size == 0:
            return np.full(np.shape(lam), -np.inf)
        logs = np.log(m)
        top_log = float(np.max(np.abs(logs)))
        lam_arr = np.asarray(lam, dtype=float)
        out = np.empty(np.shape(lam))
        slack = np.empty(np.shape(lam))
        # a block of λ's at a time (at most ~2^15 values, 256 KiB: the memory bound's refusals
        # come before larger allocations): each row is the same sum, pairwise along its
        # contiguous axis, that one λ at a time gave — bit for bit
        rows = max(1, (1 << 15) // m.size)
        for sign, at in ((True, hi_l), (False, lo_l)):
            idx = np.flatnonzero((lam_arr >= 0) == sign)
            if idx.size == 0:
                continue
            max_at = float(np.max(np.abs(at)))
            for first in range(0, idx.size, rows):
                part = idx[first:first + rows]
                z = logs[None, :] + lam_arr[part, None] * at[None, :]
                top = np.max(z, axis=1)
                z -= top[:, None]
                sums = np.sum(np.exp(z, out=z), axis=1)
                out[part] = top + np.array([math.log(v) for v in sums.tolist()])
                slack[part] = 2 * ULP * (top_log + np.abs(lam_arr[part]) * max_at)
        return (out + 8 * ULP * (1 + np.abs(out)) + 2 * ULP * math.log2(m.size + 2) + slack
                + extra)

    def mean_var(self) -> tuple[float, float]:
        w = self.masses
        tot = w.sum()
        if tot <= 0:
            return 0.0, 0.0
        ls = self.losses
        mean = float(np.sum(w * ls) / tot)
        var = float(np.sum(w * (ls - mean) ** 2) / tot)
        return mean, var


def _window(steps: Sequence[tuple[StepPLD, int]], log_tol: float) -> tuple[float, float, float,
                                                                            float]:
    """[A, B] with Chernoff-bounded tails ≤ e^{log_tol}; returns (A, B, log_tail_below,
    log_tail_above). The tail bounds stay logarithms: they are multiplied by untilting factors
    up to e^700 later, so an underflow to 0 here would lose a non-negligible error term."""
    # the grid of λ must reach the scale of the composed loss: for losses of size 1e-6 (tiny
    # sampling rates) the useful λ are near 1e7, far beyond the usual 1e4
    var = sum(count * step.mean_var()[1] for step, count in steps)
    lam = _LAMBDAS
    if any(not np.any(step.masses > 0) for step, _ in steps):
        # a step with no finite mass (all of it at +∞): the composed loss is +∞ surely, its
        # finite part is empty, nothing lies outside any window
        return 0.0, 0.0, -math.inf, -math.inf
    if var > 0 and 50.0 / math.sqrt(var) > lam[-1]:
        lam = np.concatenate([lam, np.geomspace(lam[-1], 50.0 / math.sqrt(var), 25)[1:]])
    up = np.zeros(lam.size)
    down = np.zeros(lam.size)
    # binned log-MGFs (StepPLD.log_mgf_bound) widen the window by Σ c (W − 1) h on each side:
    # at most 1e-3 standard deviations of the composed loss, shared among the steps
    widen = 1e-3 * math.sqrt(var) / len(steps) if var > 0 else 0.0
    for step, count in steps:
        up += count * _step_log_mgf(step, lam, widen / count)
        down += count * _step_log_mgf(step, -lam, widen / count)
    with np.errstate(invalid="ignore"):
        b_cand = (up - log_tol) / lam
        a_cand = (log_tol - down) / lam
    b = float(np.nanmin(b_cand))
    a = float(np.nanmax(a_cand))
    # the computed logarithms are rounded: a few ulp up keeps them upper bounds
    tail_above = float(np.nanmin(up - lam * b)) + 1e-12
    tail_below = float(np.nanmin(down + lam * a)) + 1e-12
    # the finite part of the composition lives on [Σ c·(lowest loss), Σ c·(highest loss)]: no
    # mass beyond it (steps of tiny losses, e.g. Poisson rates of 1e-9, would otherwise get a
    # window set by the largest λ of the grid, millions of points wide)
    lo = hi = 0.0
    for step, count in steps:
        live = np.flatnonzero(step.masses != 0)
        if live.size == 0:
            continue
        lo += count * float(step.losses[live[0]])
        hi += count * float(step.losses[live[-1]])
    if hi <= b:
        b, tail_above = hi, -math.inf
    if lo >= a:
        a, tail_below = lo, -math.inf
    return a, b, tail_below, tail_above


def _discounted_suffix(v: np.ndarray, h: float) -> tuple[np.ndarray, float]:
    """``C_j = Σ_{k≥j} v_k e^{−(k−j)h}`` and a bound on its absolute underflow error.

    In blocks of B points, each by a reverse cumulative sum of the terms scaled *up* to the
    block's end, ``S_j = Σ_{j≤k<end} v_k e^{(end−k)h}``, then ``C_j = S_j e^{−(end−j)h} +
    C_end e^{−(end−j)h}``. No term is scaled below its own size, so nothing underflows that
    is not itself below the smallest normal double. (The former scaling, ``v_k e^{−(k−start)h}``
    summed and divided by ``e^{−(j−start)h}``, flushed terms of 1e-300 to zero across a block
    of e^{500}: the discounted sum vanished, the lower δ of a tilted composition at δ = 1e-300
    came out 11× too large, and its ε 0.2 too high.) B is as long as ``Σ|v| e^{Bh}`` stays
    below e^{700} (and Bh ≤ 500), so no sum overflows. Values summing beyond e^600 (or not
    finite) give NaN: nothing is certified from them.

    Rounding: each computed ``C_j`` is within ``(n + 8 + 2 min(500, n h)) u`` times
    ``Σ_{k≥j} |v_k| e^{−(k−j)h}`` (the products' and sums' relative errors, and the scale
    factors': each e^{(end−k)h} is within about ``(end − k) h · u`` of exact, its argument
    rounded, and two of them meet in a term; the carried errors decay) plus
    an absolute ``(n + 8)·2^{−1074}`` for results and products in the subnormal range, which is
    the second value returned."""
    n = v.size
    out = np.empty(n)
    if n == 0:
        return out, 0.0
    with np.errstate(over="ignore"):
        total = float(np.sum(np.abs(v)))
    if not total <= math.exp(600.0):
        # values that are not finite (a composition whose transform overflowed) or beyond
        # e^600 (none of the δ functional's, whose terms stay below e^300): no certified sum,
        # and NaN makes every δ built on it fail both sides' tests (no end is certified there)
        return np.full(n, np.nan), math.inf
    log_total = math.log(total) if total > 0 else -745.0
    span = min(500.0, 700.0 - max(log_total, 0.0))
    block = max(1, min(n, int(span / h)))
    carry = 0.0
    with np.errstate(under="ignore"):
        for end in range(n, 0, -block):
            start = max(0, end - block)
            d = np.arange(end - start, 0, -1, dtype=float) * h  # end − k, times h
            up = np.exp(d)
            part = np.cumsum((v[start:end] * up)[::-1])[::-1] / up
            if carry != 0.0:
                part = part + carry / up
            out[start:end] = part
            carry = float(out[start])
    return out, (n + 8) * math.ulp(0.0)


@dataclass
class ComposedPLD:
    """A composed privacy-loss distribution on a window, with its certified error terms."""

    h: float
    i_start: int
    masses: np.ndarray
    p_inf: float
    kind: str
    steps: int
    #: logarithms of the Chernoff bounds on the mass below / above the window
    log_tail_below: float
    log_tail_above: float
    spectral_coeff: float
    fft_size: int
    loss_shift: float
    #: exponential tilt λ of the stored masses: the composed law is ``masses · e^{log_scale − λ l}``
    tilt: float = 0.0
    log_scale: float = 0.0
    #: Σ count × offset of the composed steps' grids
    offset: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        return self.offset + (self.i_start + np.arange(self.masses.size)) * self.h

    @property
    def tail_below(self) -> float:
        return math.exp(self.log_tail_below)

    @property
    def tail_above(self) -> float:
        return math.exp(self.log_tail_above)

    # ---- the δ functional, vectorised over the grid --------------------------------------

    def _shifted_losses(self) -> np.ndarray:
        # losses nudged by the accumulated position rounding (up for upper, down for lower)
        return self.losses + (self.loss_shift if self.kind == "upper" else -self.loss_shift)

    def _untilt_slack(self) -> float:
        """The log-factor that puts the untilting weights on the safe side. A composed mass
        was tilted at the sum of its steps' computed losses, each within ``loss_shift / T`` of
        the exact one, and is untilted at its own computed loss, also within ``loss_shift``:
        the two differ by at most 2 ``loss_shift``, so e^{log_scale − λ l} is within a factor
        e^{±2λ·loss_shift} of the exact untilting. The weights are taken at the shifted losses
        (up by ``loss_shift`` for the upper kind, down for the lower), hence ±3λ·loss_shift:
        larger weights on the upper side, smaller on the lower side."""
        if self.tilt <= 0:
            return 0.0
        slack = 3.0 * self.tilt * self.loss_shift * (1 + 1e-9)
        return slack if self.kind == "upper" else -slack

    def _sums(self, floor: float = 0.0):
        """Suffix sums over the losses ≥ ``floor`` ≥ 0 (and, with a tilt, large enough that the
        untilting factor ``f_k = e^{log_scale − λ l_k}`` stays below e^300:
        :data:`_MAX_LOG_UNTILT`), free of overflow whatever the losses: ``A_j = Σ_{k≥j} p_k
        f_k``, ``C_j = Σ_{k≥j} p_k f_k e^{l_j − l_k}`` (:func:`_discounted_suffix`), the same
        with |p_k|, and ``F_j = Σ_{k≥j} f_k``, ``G_j = Σ_{k≥j} f_k e^{l_j − l_k}`` (for the FFT
        error, which is per stored mass). A suffix sum from j involves only the masses from j
        on, so a ``floor`` changes none of the sums it keeps (their error terms, which count
        the terms summed, only get smaller); :meth:`epsilon` uses one, on untilted windows
        only, to skip the losses far below the ε it looks for. (Untilted, the masses sum to
        about 1, so :func:`_discounted_suffix` takes the same blocks, anchored at the end,
        from any floor; with a tilt its block length could depend on the floor's total, and
        the sums would differ in their rounding, each still within its bound.)"""
        caches = self.__dict__.setdefault("_caches", {})
        cache = caches.get(floor)
        if cache is not None:
            return cache
        ls = self._shifted_losses()
        start = int(np.searchsorted(ls, floor, side="left"))
        if self.tilt > 0:
            start = max(start, int(np.searchsorted(
                ls, (self.log_scale - _MAX_LOG_UNTILT) / self.tilt, side="left")))
        l_pos = ls[start:]
        p = self.masses[start:]
        if self.kind == "upper":
            p = np.maximum(p, 0.0)
        if self.tilt > 0:
            with np.errstate(under="ignore"):
                f = np.exp(self.log_scale - self.tilt * l_pos + self._untilt_slack())
        else:
            f = None  # f ≡ 1

        def suffix(v):
            return np.append(np.cumsum(v[::-1])[::-1], 0.0)

        def discounted(v):
            # (its absolute underflow bound is within the one _delta_from_sums adds)
            return np.append(_discounted_suffix(v, self.h)[0], 0.0)

        pf = p * f if f is not None else p
        cut = l_pos[0] if (self.tilt > 0 and start > 0 and l_pos.size) else -np.inf
        if self.tilt > 0:
            # below the loss where the untilting factor reaches e^300, δ is not evaluated even
            # when the window starts above it: the tails' weight there, e^{log_scale − λε},
            # could pass the e^700 the δ functional caps it at (found by review: a window
            # starting at loss 890 with log_scale 800 read δ(0) as 1.9e-22 with tails of e^50)
            untilt_floor = (self.log_scale - _MAX_LOG_UNTILT) / self.tilt
            if untilt_floor > 0:
                cut = max(cut, untilt_floor)
        if self.tilt > 0:
            f_sum, g_disc = suffix(f), discounted(f)
        else:  # f ≡ 1: the suffix sums are a count and a geometric sum
            count = np.arange(l_pos.size, -1, -1, dtype=float)
            f_sum = count
            g_disc = -np.expm1(-count * self.h) / -math.expm1(-self.h)
        pa = np.abs(pf) if self.kind == "lower" else None  # the upper masses are ≥ 0
        cache = (l_pos, suffix(pf), discounted(pf), suffix(pa) if pa is not None else None,
                 discounted(pa) if pa is not None else None, f_sum, g_disc,
                 (float(f[0]) if f.size else 0.0) if f is not None else
                 (1.0 if l_pos.size else 0.0), cut)
        if floor > 0:
            # one restricted set besides the full one: a cached composition queried at many δ's
            # (each with its own floor) would otherwise keep a window's sums per δ
            for key in [k for k in caches if k > 0]:
                del caches[key]
        caches[floor] = cache
        return cache

    def _delta_from_sums(self, eps: np.ndarray, j: np.ndarray, fft_term: bool = True,
                         floor: float = 0.0) -> np.ndarray:
        """Certified δ at ``eps`` (≥ ``floor``) given ``j`` = first index with loss > eps (in
        the sums from ``floor``, :meth:`_sums`)."""
        l_pos, a_sum, c_sum, a_abs, c_abs, f_sum, g_disc, f_max, cut = self._sums(floor)
        # relative rounding of the masses: 2u per step, and 4u more per step with a tilt
        mass_factor = (1 + (6 if self.tilt > 0 else 2) * ULP) ** self.steps
        n_sum = l_pos.size
        # l_{j}, +∞ past the end (indexing, not a copy of l_pos with ∞ appended: this runs once
        # per scanned point set, on grids of millions of points)
        j = np.asarray(j)
        l_j = (l_pos[np.minimum(j, n_sum - 1)] if n_sum else np.zeros(j.shape))
        l_j = np.where(j < n_sum, l_j, np.inf)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            w = np.where(np.isfinite(l_j), np.exp(np.minimum(eps - l_j, 0.0)), 0.0)
            body = a_sum[j] - w * c_sum[j]
            # sums and recurrences: error ≤ (n + 8) u Σ|terms| (the recurrence's errors decay
            # geometrically, so the same bound holds for it); the discounted sums also carry
            # the rounding of their scale factors e^{(end−k)h}, whose arguments reach
            # min(500, n h) within a block: 2u of that per term (:func:`_discounted_suffix`)
            disc = (n_sum + 8 + 2 * min(500.0, n_sum * self.h)) * ULP
            if a_abs is None:  # upper side: the masses are non-negative
                err = (n_sum + 8) * ULP * a_sum[j] + disc * w * c_sum[j]
            else:
                err = (n_sum + 8) * ULP * a_abs[j] + disc * w * c_abs[j]
            # and in the subnormal range an absolute 2^-1075 per product, sum and quotient
            # (the masses times f, both suffix sums, :func:`_discounted_suffix`)
            err = err + 4 * (n_sum + 8) * math.ulp(0.0) * (1 + w)
            if fft_term:
                # Σ of the δ weights f_k (1 − e^{ε − l_k}) over the losses above ε, rounded up:
                # each stored mass is within spectral_coeff of its exact value
                g_sum = np.maximum(f_sum[j] - w * g_disc[j], 0.0) * (1 + 1e-9) \
                    + disc * f_sum[j] + 1e-300
                err = err + g_sum * self.spectral_coeff
        body = np.maximum(body, 0.0)
        # mass beyond the window (missing, or aliased into it) weighs at most the untilting
        # factor at ε, e^{log_scale − λ ε}, in the δ functional (logarithms: neither factor
        # may underflow on its own)
        log_tails = np.logaddexp(self.log_tail_above, self.log_tail_below)
        with np.errstate(over="ignore", under="ignore"):
            log_scale = (np.minimum(self.log_scale - self.tilt * np.asarray(eps, dtype=float)
                                    + abs(self._untilt_slack()), 700.0)
                         if self.tilt > 0 else 0.0)
            tails = np.exp(log_tails + log_scale) * (1 + 4 * ULP)
            tails = np.where(np.isfinite(log_tails), np.maximum(tails, 5e-324), 0.0)
        below_cut = np.asarray(eps) < cut
        if self.kind == "upper":
            out = (body + err) * mass_factor + self.p_inf + tails
            return np.where(below_cut, 1.0, np.minimum(out, 1.0))
        out = (body - err) / mass_factor + self.p_inf - tails
        return np.where(below_cut, 0.0, np.maximum(out, 0.0))

    def fft_error(self, eps: float) -> float:
        """Bound on the error of the δ functional at ``eps`` due to FFT rounding."""
        l_pos, *_ = self._sums()
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        j = np.searchsorted(l_pos, e, side="right")
        with_fft = self._delta_from_sums(e, j, fft_term=True)
        without = self._delta_from_sums(e, j, fft_term=False)
        return float(abs(with_fft[0] - without[0]))

    def delta(self, eps: float) -> float:
        """Certified δ at ``eps`` ≥ 0: an upper bound (kind "upper") or a lower bound
        ("lower"), with every error term."""
        l_pos, *_ = self._sums()
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        j = np.searchsorted(l_pos, e, side="right")
        out = self._delta_from_sums(e, j)
        return float(out[0]) if np.ndim(eps) == 0 else out

    #: grids longer than this are scanned coarsely first (:meth:`_grid_crossing`)
    _SCAN_DIRECT = 4096

    def _grid_crossing(self, grid: np.ndarray, delta: float, floor: float = 0.0
                       ) -> tuple[int, int] | None:
        """Where the certified δ on the grid losses crosses ``delta``: ``(bad, good)``, adjacent
        indices of ``grid`` with ``good = bad + 1``. Upper side: ``good`` is a point with
        δ_upper ≤ ``delta`` and ``bad`` the one before it (−1 if none); lower side: ``bad`` is
        a point with δ_lower > ``delta`` and ``good`` the one after it. ``None`` if no point
        qualifies.

        Safety does not depend on which qualifying point is found: any ε with δ_upper(ε) ≤ δ is
        a valid upper end and any ε with δ_lower(ε) > δ a valid lower end (the exact δ is
        non-increasing), so the certified values need not be monotone. Short grids are scanned
        point by point (the first qualifying point on the upper side, the last on the lower
        side). A long grid is first scanned at a stride of about √n points (and its last
        point), then point by point only between the coarse crossing and its neighbour: when
        the certified δ is monotone (always, up to its error terms) this finds the same point
        as the full scan, at O(√n) evaluations instead of n; otherwise a point found is still
        a qualifying one, at most a stride less tight. If no coarse point qualifies, the whole
        grid is scanned."""
        l_pos = self._sums(floor)[0]
        upper = self.kind == "upper"
        n = grid.size

        def qualifying(index: np.ndarray) -> np.ndarray:
            x = grid[index]
            d = self._delta_from_sums(x, np.searchsorted(l_pos, x, side="right"), floor=floor)
            return np.flatnonzero(d <= delta if upper else d > delta)

        def crossing_in(index: np.ndarray) -> tuple[int, int] | None:
            hit = qualifying(index)
            if hit.size == 0:
                return None
            if upper:
                good = int(index[hit[0]])
                return good - 1, good
            bad = int(index[hit[-1]])
            return bad, bad + 1

        if n <= self._SCAN_DIRECT:
            return crossing_in(np.arange(n))
        stride = math.isqrt(n)
        coarse = np.arange(0, n, stride)
        if coarse[-1] != n - 1:
            coarse = np.append(coarse, n - 1)
        hit = qualifying(coarse)
        if hit.size == 0:
            return crossing_in(np.arange(n))
        if upper:
            k = int(hit[0])
            if k == 0:
                return -1, 0
            window = np.arange(coarse[k - 1] + 1, coarse[k] + 1)  # its last point qualifies
        else:
            k = int(hit[-1])
            if k == coarse.size - 1:
                return n - 1, n
            window = np.arange(coarse[k], coarse[k + 1])  # its first point qualifies
        return crossing_in(window)

    def epsilon(self, delta: float, search_from: float = 0.0) -> float:
        """Certified ε for ``delta``: the smallest ε ≥ 0 with certified δ_upper(ε) ≤ delta
        (kind "upper"; ``inf`` if δ never gets there), or the largest ε ≥ 0 with certified
        δ_lower(ε) > delta (kind "lower"; 0 if none).

        ``search_from`` (> 0; untilted compositions) is an estimate of a loss below that ε: the
        grid is first searched from there on only, with suffix sums over the losses above it
        (:meth:`_sums`; a 1.7M-point window of 10⁶ steps spends 70 ms on the sums from 0). If
        the crossing is not strictly above it — the upper side's first grid point there
        already meets δ, or no lower-side point there exceeds it — the whole grid is searched
        as without it. A choice of cost only: every ε returned is a grid crossing of the
        certified δ."""
        if search_from > 0 and self.tilt == 0 and math.isfinite(search_from):
            found = self._epsilon_from(delta, float(search_from))
            if found is not None:
                return found
        return self._epsilon_from(delta, 0.0)  # type: ignore[return-value]  (never None at 0)

    def _epsilon_from(self, delta: float, floor: float) -> float | None:
        """:meth:`epsilon` on the grid losses ≥ ``floor`` (0: all of them); ``None`` when
        ``floor`` > 0 and the crossing may lie below it."""
        l_pos, *_ = self._sums(floor)
        if l_pos.size == 0:
            return 0.0 if floor == 0 else None
        # δ at the grid losses ε = l_j (the losses > l_j are those of index > j). The certified
        # values need not be monotone (error terms grow where untilting weights are large), and
        # need not be: any ε with δ_upper(ε) ≤ δ is a valid upper end (the exact δ is
        # non-increasing) and any ε with δ_lower(ε) > δ a valid lower end. So the upper end is
        # a grid point that meets the target, the lower end one that exceeds it, found by a scan
        # (_grid_crossing), not by a bisection that assumes monotonicity.
        cut = self._sums(floor)[-1]
        # (below a tilt's cut δ is not evaluated: 1 for the upper side, 0 for the lower side)
        grid = l_pos if (np.isfinite(cut) or floor > 0) else np.concatenate([[0.0], l_pos])
        last = grid.size - 1
        crossing = self._grid_crossing(grid, delta, floor)
        if crossing is None:  # no grid point meets the target (upper) / exceeds it (lower)
            if floor > 0:
                return None  # the whole grid decides (lower: the last point may lie below)
            return math.inf if self.kind == "upper" else 0.0
        bad, good = crossing
        if self.kind == "upper" and good == 0:
            if floor > 0:
                return None  # the first point meeting it may lie below the floor
            return 0.0 if not np.isfinite(cut) else float(grid[0])
        if self.kind == "lower" and bad == last:
            return float(grid[-1])
        lo, hi = grid[bad], grid[good]
        # on (lo, hi) the set {l > ε} is fixed and, without a tilt, the certified δ is affine in
        # w = e^{ε − l_j}: solve it from two evaluations, then make sure of the safe side
        j = np.searchsorted(l_pos, hi, side="left")
        upper = self.kind == "upper"

        def delta_at(x):
            x = np.atleast_1d(np.asarray(x, dtype=float))
            return self._delta_from_sums(x, np.full(x.size, j), floor=floor)

        def ok(x):
            d = float(delta_at(x)[0])
            return d <= delta if upper else d > delta

        if self.tilt == 0 and hi > lo:
            xa, xb = lo + 0.25 * (hi - lo), lo + 0.75 * (hi - lo)
            da, db = delta_at(np.array([xa, xb]))
            wa, wb = math.exp(xa - hi), math.exp(xb - hi)
            if db != da:
                w_star = wa + (delta - da) * (wb - wa) / (db - da)
                if w_star > 0:
                    x = min(max(hi + math.log(w_star), lo), hi)
                    step = max((hi - lo) * 2.0**-40, 4 * ULP * (1 + abs(x)))
                    for _ in range(64):
                        if ok(x):
                            # certified on the safe side; how tight x is, is not checked: it
                            # is the affine root moved towards the safe side by the steps taken
                            return float(x)
                        x = min(x + step, hi) if upper else max(x - step, lo)
                        step *= 2.0

        def feasible(x, idx):
            d = self._delta_from_sums(np.atleast_1d(x), np.full(np.size(x), j), floor=floor)
            return d <= delta if upper else d > delta

        if upper:
            return float(bisect_threshold(feasible, lo, hi))
        # lower: the feasible end is the low one; bisect on the negated axis
        def feasible_neg(x, idx):
            return feasible(-np.asarray(x), idx)

        return float(-bisect_threshold(feasible_neg, -hi, -lo))


_TWO_PI_EXT = _EXT("6.283185307179586476925286766559005768394")
#: 2π rounded to double (relative error 0.35 u, within the 0.637 u the direct DFT's bound
#: allows for the constant).
_TWO_PI_F64 = np.float64(math.tau)


#: Transforms longer than this are not memoised (a 2^19-point step keeps about 20 MB of
#: spectra and logarithms; the memory bound's compositions would keep hundreds).
_MEMO_MAX_N = 2**19
#: Only the steps of the last few ``ladder`` compositions keep a memo (its memory is not in
#: the cache's byte budgets, which count the masses): at most this many, least recent dropped.
_KEPT_STEPS = 8
_KEPT: OrderedDict = OrderedDict()  # id(step) → weak reference to the step


def _keep(step: StepPLD) -> None:
    """Let ``step`` memoise the work that depends only on it and the FFT length (see
    :func:`_memo`): done by :func:`compose` with ``ladder=True``, whose compositions of the same
    steps at neighbouring counts share it. The least recently kept step beyond
    :data:`_KEPT_STEPS` loses its memo."""
    key = id(step)
    ref = _KEPT.get(key)
    if ref is not None and ref() is step:
        _KEPT.move_to_end(key)
        return
    if "_memo" not in step.__dict__:
        object.__setattr__(step, "_memo", {})  # a frozen dataclass: its fields stay fixed
    # an entry under this id is a collected step's (ids are reused): dropped, so that this
    # step goes to the end (assigning to an existing key would keep the old entry's place, and
    # the step would lose its memo before older ones)
    _KEPT.pop(key, None)
    _KEPT[key] = weakref.ref(step)
    while len(_KEPT) > _KEPT_STEPS:
        _, old_ref = _KEPT.popitem(last=False)
        old = old_ref()
        if old is not None:
            old.__dict__.pop("_memo", None)


def _memo(step: StepPLD) -> dict:
    """A kept step's private memo (:func:`_keep`) of its spectra (:func:`_step_spectrum`),
    their logarithms, its tilted copy and its log-MGFs; a throwaway dict for any other step.
    Compositions of the same step at different counts — a ledger queried after every epoch —
    share it; a memo changes how long a composition takes, never its result (every entry is
    what the computation it replaces returns, bit for bit)."""
    memo = step.__dict__.get("_memo")
    return memo if memo is not None else {}


def _step_log_mgf(step: StepPLD, lam: np.ndarray, max_width: float = math.inf) -> np.ndarray:
    """:meth:`StepPLD.log_mgf_bound` on ``lam`` with bins at most ``max_width`` wide, memoised
    on the step (at most four (λ grid, bin width) pairs)."""
    mgfs = _memo(step).setdefault("mgf", {})
    key = (lam.tobytes(), step._bin_width(max_width))
    out = mgfs.get(key)
    if out is None:
        if len(mgfs) >= 4:
            mgfs.pop(next(iter(mgfs)))
        out = mgfs[key] = step.log_mgf_bound(lam, max_width)
    return out


def _step_spectrum(step: StepPLD, n: int, sel, rest_budget: float):
    """rfft of one step at the frequencies ``sel`` (all if None) and a bound on the error of
    every coefficient: ``(values, error, dtype_unit)``.

    ``sel is None``: double-precision FFT, error κ u ‖x‖₁ (:func:`_fft_bounds.rfft_error_bound`).
    Otherwise extended precision where it matters: the few heaviest masses (all but at most
    ``rest_budget`` of the total) are transformed directly at the selected frequencies in
    extended precision — twiddle angles reduced exactly in integers into [−π, π], sums pairwise,
    error :func:`_fft_bounds.direct_dft_error_constant` (≈ 13 + log₂ m) u_ext per unit mass —
    and the light rest by a double FFT (error κ u ‖rest‖₁), or, at few frequencies
    (3·m_light·|sel| ≤ n), by a direct double-precision DFT (:func:`_light_direct`); when the
    heavy part is too large for that, one extended-precision FFT of everything.

    Compositions of the same step that split it alike (:func:`compose` with ``ladder=True``
    rounds the budget down to a power of 2 for that) share, through the step's memo, its
    transforms at length n: the double FFT, the light part's FFT and every extended-precision
    coefficient already computed. Each coefficient is a pairwise sum over the heavy masses
    alone, so it does not depend on which other frequencies were computed with it.
    """
    masses = step.masses
    memo = _memo(step)
    if sel is None:
        got = memo.get("double")
        if got is not None and got[0] == n:
            return got[1]
        pos = np.arange(masses.size) % n  # fold long step arrays circularly
        buf = np.zeros(n)
        np.add.at(buf, pos, masses)
        out = (fft.rfft(buf),
               _fb.rfft_error_bound(n, np.float64, float(np.sum(np.abs(masses))), masses.size),
               ULP)
        if n <= _MEMO_MAX_N:
            memo["double"] = (n, out)
        return out
    keep = "_memo" in step.__dict__ and n <= _MEMO_MAX_N  # a kept step (:func:`_keep`)
    key = (n, rest_budget)
    ext = memo.get("extended")
    if ext is None or ext["key"] != key:
        ext = _split_for_extended(masses, n, rest_budget)
        ext["key"] = key
        if keep:
            memo["extended"] = ext
    if ext["heavy"].size * sel.size <= 4_000_000:
        # few frequencies: the light part's DFT at them directly, in double precision
        # (Poisson-Gaussian, 10⁶ steps: 29,176 light masses at 18 of 864,001 frequencies,
        # 37 ms, instead of a 1.7M-point FFT of them, 80 ms; a term costs about 80 ns, a point
        # of the FFT 25–45 ns). The path depends only on the sizes, never on the memo: a
        # kept step memoises each path's coefficients apart
        direct = 3 * ext["light"].size * sel.size <= n
        error = ext["error_direct"] if direct else ext["error"]
        if not direct and "light_fft" not in ext:
            rest = np.zeros(n)
            np.add.at(rest, ext["pos"][ext["light"]], masses[ext["light"]])
            ext["light_fft"] = fft.rfft(rest)
        if not keep:  # only the frequencies asked for: no full-length arrays
            return _direct_coefficients(masses, ext, sel, n, light_direct=direct), error, _EXT_U
        values, have = ("values_direct", "have_direct") if direct else ("values", "have")
        if values not in ext:
            m = n // 2 + 1
            ext[values] = np.zeros(m, dtype=np.clongdouble if _EXT is not np.float64
                                   else np.complex128)
            ext[have] = np.zeros(m, dtype=bool)
        missing = sel[~ext[have][sel]]
        if missing.size:
            ext[values][missing] = _direct_coefficients(masses, ext, missing, n,
                                                        light_direct=direct)
            ext[have][missing] = True
        return ext[values][sel], error, _EXT_U
    full = memo.get("full_extended")
    if full is None or full[0] != n:
        buf = np.zeros(n, dtype=_EXT)
        np.add.at(buf, ext["pos"], masses.astype(_EXT))
        full = (n, fft.rfft(buf),
                _fb.rfft_error_bound(n, _EXT, float(np.sum(np.abs(masses))), masses.size))
        if keep:
            memo["full_extended"] = full
    return full[1][sel], full[2], _EXT_U


def _reduced_angles(pos: np.ndarray, freqs: np.ndarray, n: int) -> np.ndarray:
    """j·k mod n for every position j and frequency k, exactly into [−n/2, n/2] (int64): the
    twiddle angle 2π j k / n reduced into [−π, π] before any rounding."""
    jk = (pos[:, None].astype(np.int64) * freqs[None, :].astype(np.int64)) % n
    jk -= n * (2 * jk > n)
    return jk


def _light_direct(masses: np.ndarray, ext: dict, freqs: np.ndarray, n: int) -> np.ndarray:
    """The light masses' DFT at ``freqs`` in double precision, term by term: angles
    fl(fl(2π̃·j′)/n) with j′ reduced exactly (:func:`_reduced_angles`), products with the
    masses and pairwise sums — the float64 case of
    :func:`~privamp.pld._fft_bounds.direct_dft_error_constant` (NumPy's own cos and sin).
    Each coefficient depends only on its frequency."""
    light = ext["light"]
    x = masses[light]
    ang = _reduced_angles(ext["pos"][light], freqs, n).astype(np.float64)
    ang *= _TWO_PI_F64
    ang /= n
    terms = np.cos(ang)
    terms *= x[:, None]
    re = _fb.pairwise_sum(terms)
    terms = np.sin(ang, out=terms)
    terms *= x[:, None]
    return re - 1j * _fb.pairwise_sum(terms)


def _direct_coefficients(masses: np.ndarray, ext: dict, freqs: np.ndarray, n: int,
                         light_direct: bool = False):
    """The light part's double FFT (``light_direct``: its direct double-precision DFT,
    :func:`_light_direct`) plus the heavy masses' DFT in extended precision at ``freqs``:
    twiddle angles reduced exactly in integers into [−π, π], pairwise sums over the heavy
    masses (each coefficient independent of which others are computed with it)."""
    heavy = ext["heavy"]
    x = masses[heavy].astype(_EXT)
    jk = _reduced_angles(ext["pos"][heavy], freqs, n)  # angles in [−π, π]
    if 2 * (n + 1) <= jk.size:
        # fewer distinct angles than terms: cos and sin of every j in [−n/2, n/2], by the same
        # expression as below, then looked up — the same value for each term, bit for bit,
        # and a gather instead of an extended-precision cos and sin per term (small T, where
        # many frequencies need extended precision: 4M terms at n = 7,500, 0.6 s → 0.1 s)
        j = np.arange(-(n // 2), n // 2 + 1, dtype=np.int64)
        table_ang = _TWO_PI_EXT * j.astype(_EXT) / _EXT(n)
        sin_table = np.sin(table_ang)
        cos_table = np.cos(table_ang, out=table_ang)
        jk += n // 2
        terms = cos_table[jk]
        del cos_table, table_ang
        terms *= x[:, None]
        re = _fb.pairwise_sum(terms)
        np.take(sin_table, jk, out=terms)
        del jk, sin_table
    else:
        ang = _TWO_PI_EXT * jk.astype(_EXT) / _EXT(n)
        del jk
        # pairwise sums (x @ cos(ang) sums long doubles in sequence: error ~ m u, not log₂ m u)
        terms = np.cos(ang)
        terms *= x[:, None]
        re = _fb.pairwise_sum(terms)
        terms = np.sin(ang, out=terms)
    terms *= x[:, None]
    light = _light_direct(masses, ext, freqs, n) if light_direct else ext["light_fft"][freqs]
    values = light.astype(np.clongdouble if _EXT is not np.float64 else np.complex128)
    return values + (re - 1j * _fb.pairwise_sum(terms))


def _split_for_extended(masses: np.ndarray, n: int, rest_budget: float) -> dict:
    """The light/heavy split of :func:`_step_spectrum` and its error bound (the light part's
    FFT is computed when the direct transform needs it)."""
    pos = np.arange(masses.size) % n
    absm = np.abs(masses)
    order = np.argsort(absm)
    light = order[np.cumsum(absm[order]) <= rest_budget]
    heavy_mask = np.ones(masses.size, dtype=bool)
    heavy_mask[light] = False
    heavy = np.flatnonzero(heavy_mask & (absm > 0))
    light_sum = float(np.sum(absm[light]))
    # the heavy part's direct DFT, and the light part's share of the final complex addition
    # (u_ext, relative); then the light part's own error: its FFT's ("error") or its direct
    # DFT's ("error_direct", :func:`_light_direct`)
    common = (_EXT_U * light_sum * (1 + 1e-6)
              + _fb.direct_dft_error_constant(heavy.size, _EXT) * _EXT_U
              * float(np.sum(absm[heavy])) * (1 + 1e-6))
    error = common + _fb.rfft_error_bound(n, np.float64, light_sum, masses.size)
    error_direct = common + (_fb.direct_dft_error_constant(light.size, np.float64)
                             * _fb.unit_roundoff(np.float64) * light_sum * (1 + 1e-6)
                             + _fb.underflow_allowance(n))
    return {"pos": pos, "light": light, "heavy": heavy, "error": error,
            "error_direct": error_direct}


#: Below this, ``exp`` of a double is exactly 0 (the smallest subnormal is e^−744.4).
_LOG_UNDERFLOW = -746.0


def _power_spectrum(steps, n: int, sel=None, keep=None, rest_budget: float = 0.0):
    """The spectrum Π_s X_s^{c_s} of the composition and a per-frequency bound on its error.

    Each ``X_s`` comes with a per-coefficient error bound ``e_s`` (:func:`_step_spectrum`). The
    error of the product of powers is bounded by ``Π(|X_s| + e_s)^{c_s} − Π|X_s|^{c_s}``, plus
    the rounding of the logarithms, angles and exponentials (relative ``Σ_s c_s 8u(|log| + π +
    1)``, u of the arithmetic used). Frequencies where ``Π(|X_s| + e_s)^{c_s}`` underflows are 0
    with that (tiny) bound as their error. With ``sel``, only those frequencies are recomputed
    (in extended precision) and the others are taken from ``keep = (spectrum, error)``.

    The phases and exponentials are computed only where ``Π(|X_s| + e_s)^{c_s}`` does not
    underflow to 0: at many steps that is a few hundred of a million frequencies (Poisson-
    Gaussian, 10⁶ steps: a complex exponential over 864,001 frequencies took 70 ms). Every
    other frequency gets exactly what the full computation gives it: a spectrum of 0 with
    the error 5e-324.
    """
    m = n // 2 + 1
    dtype = np.float64 if sel is None else _EXT
    size = m if sel is None else sel.size
    log_abs = np.zeros(size, dtype=dtype)
    log_pert = np.zeros(size, dtype=dtype)
    rel = 0.0
    tiny = np.finfo(dtype).tiny
    specs = []
    for step, count in steps:
        spec, lm, lp, lp_max = _spectral_logs(step, n, sel, rest_budget, dtype, tiny)
        log_abs += count * lm
        log_pert += count * lp
        specs.append((spec, count))
        unit = ULP if sel is None else _EXT_U
        rel += count * 8 * unit * (lp_max + math.pi + 1)
    # exp(x) is exactly 0 for x ≤ _LOG_UNDERFLOW, in double and (a fortiori) once converted to
    # it: those frequencies' spectrum is 0 and their error the floor below
    # (NaN logarithms count as alive: they propagate as before)
    alive = np.flatnonzero(~((log_pert <= _LOG_UNDERFLOW) & (log_abs <= _LOG_UNDERFLOW)))
    phase = np.zeros(alive.size, dtype=dtype)
    for spec, count in specs:
        phase += count * np.angle(spec[alive])
    spectrum = np.zeros(size, dtype=np.complex128)
    err = np.zeros(size)
    with np.errstate(under="ignore"):
        modulus = np.exp(log_abs[alive])
        upper = np.exp(log_pert[alive])
        spectrum[alive] = (modulus * np.exp(1j * phase)).astype(np.complex128)
        err[alive] = (np.maximum(upper - modulus, 0.0) * (1 + 1e-6)
                      + upper * rel).astype(np.float64)
    # a bound that underflowed to 0 is below the smallest subnormal, not 0: keep it positive, as
    # untilting may multiply the composed masses by up to e^700
    err = np.maximum(err, 5e-324)
    err = err + np.abs(spectrum) * 2 * ULP  # the conversion to double
    if sel is None:
        return spectrum, err
    full_spec, full_err = keep[0].copy(), keep[1].copy()
    full_spec[sel] = spectrum
    full_err[sel] = err
    return full_spec, full_err


def _spectral_logs(step: StepPLD, n: int, sel, rest_budget: float, dtype, tiny):
    """``(X, log|X|, log(|X| + e), max |log(|X| + e)|)`` of the step's spectrum X at length n
    (:func:`_step_spectrum`, error e), at the frequencies ``sel`` (all if None); the
    full-length arrays are memoised on the step with its spectrum."""
    if sel is None:
        memo = _memo(step)
        got = memo.get("double_logs")
        if got is not None and got[0] == n:
            return got[1]
    spec, e_s, _ = _step_spectrum(step, n, sel, rest_budget)
    mag = np.abs(spec)
    with np.errstate(divide="ignore"):
        lm = np.log(np.maximum(mag, tiny))
        lp = np.log(mag + dtype(e_s))
    out = (spec, lm, lp, float(np.max(np.abs(lp))))
    if sel is None and n <= _MEMO_MAX_N:
        memo["double_logs"] = (n, out)
    return out


def _tilted(step: StepPLD, tilt: float) -> tuple[StepPLD, float]:
    """The step's masses times ``e^{λ l}``, normalised by its (rounded-up) MGF, and log M
    (memoised on the step for its last tilt: the tilted step then keeps its own memo)."""
    memo = _memo(step)
    got = memo.get("tilted")
    if got is not None and got[0] == tilt:
        return got[1]
    out = _tilted_step(step, tilt)
    memo["tilted"] = (tilt, out)
    return out


def _tilted_step(step: StepPLD, tilt: float) -> tuple[StepPLD, float]:
    log_m = float(step.log_mgf(np.array([tilt]))[0])
    with np.errstate(divide="ignore", under="ignore"):
        logs = np.log(np.maximum(step.masses, 0.0))
        masses = np.where(step.masses > 0, np.exp(logs + tilt * step.losses - log_m), 0.0)
    return StepPLD(step.h, step.i_lo, masses, step.p_inf, step.kind, step.label,
                   step.offset), log_m


def compose(steps: Sequence[tuple[StepPLD, int]], *, tail_tol: float = 1e-15,
            tilt: float = 0.0, log_tail_tol: float | None = None,
            size_only: bool = False, ladder: bool = False,
            tail_at: float = 0.0) -> ComposedPLD | tuple[int, float]:
    """Compose step PLDs (each with a count) by FFT; see the module doc for the error terms.

    All steps must share the grid spacing and the kind. ``tilt`` λ > 0 composes the
    exponentially tilted laws ``p_k e^{λ l_k} / M(λ)`` instead (tilting commutes with
    convolution) and untilts when δ is evaluated: the FFT's absolute error is then relative to
    the tilted masses, which is what resolves very small δ (1e-18 and below) in the upper tail.
    ``log_tail_tol`` (its logarithm, for tolerances below the double range) replaces
    ``tail_tol`` when given.

    ``tail_at`` (≥ 0; with a tilt only) is the smallest ε at which the mass outside the window
    must weigh less than the tolerance in the δ functional. Untilted, that mass weighs at most
    e^{log_scale − λ ε} at ε (:meth:`ComposedPLD._delta_from_sums`), largest at ε = 0, where
    it is e^{log_scale}; a query that reads δ only at ε ≥ ``tail_at`` needs the window's tails
    e^{λ·tail_at} less small (σ 0.5, q 1e-4, 10⁴ steps, ε ≈ 5 at δ 1e-10: λ ≈ 3.5, a window
    half as wide). The tail terms are counted at every ε whatever ``tail_at`` is, so any value
    is certified; below ``tail_at`` they may exceed the tolerance (a looser δ there, never a
    smaller one). ``size_only=True`` stops before the transform and returns
    ``(FFT length, window width in loss units)``: what the composition would need.

    ``ladder=True`` makes the choices that only set the cost coarse, so that compositions of
    the same steps at neighbouring counts share the steps' memoised transforms: the FFT length
    from :func:`ladder_length` and the double-precision budget of the extended-precision pass
    rounded down to a power of 2 (a longer circular window and a smaller light part are both
    covered by the same error terms, the latter with a smaller error).
    """
    if not steps:
        raise InvalidParameterError("steps", "a non-empty list of (StepPLD, count)", steps)
    h = steps[0][0].h
    kind = steps[0][0].kind
    for step, count in steps:
        if step.h != h or step.kind != kind:
            raise InvalidParameterError("steps", "step PLDs with the same grid spacing and kind",
                                        (step.h, step.kind))
        if count < 1:
            raise InvalidParameterError("count", "a positive integer", count)
    total_steps = sum(c for _, c in steps)
    original = list(steps)
    if ladder and not size_only:
        for step, _ in steps:
            _keep(step)
    if log_tail_tol is None:
        log_tail_tol = math.log(check_real("tail_tol", tail_tol, "(0, 1)"))
    log_scale = 0.0
    if tilt < 0 or not math.isfinite(tilt):
        raise InvalidParameterError("tilt", "a real number >= 0", tilt)
    if not (math.isfinite(tail_at) and tail_at >= 0):
        raise InvalidParameterError("tail_at", "a real number >= 0", tail_at)
    if tilt > 0:
        tilted = []
        for step, count in steps:
            t_step, log_m = _tilted(step, tilt)
            if ladder and not size_only:
                _keep(t_step)
            tilted.append((t_step, count))
            log_scale += count * log_m
        steps = tilted
        # untilting multiplies masses at loss l by e^{log_scale − λ l}, and the tails weigh
        # that factor at ε ≥ tail_at: ask the tilted tails for that much more precision (or
        # less, where the factor is below 1; never more than 1e-3 of the tilted mass)
        log_tail_tol = min(log_tail_tol - min(log_scale - tilt * tail_at, 700.0),
                           _MAX_LOG_TILTED_TAIL)
    tail_tol = math.exp(max(log_tail_tol, -745.0))  # for the FFT's accuracy choices only
    a, b, tail_below, tail_above = _window(steps, log_tail_tol)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise NumericalError("could not bound the tails of the composed privacy loss")
    offset = math.fsum(c * s.offset for s, c in steps)
    i_start = math.floor((a - offset) / h) - 1
    i_end = math.ceil((b - offset) / h) + 1
    width = i_end - i_start + 1
    n = (ladder_length if ladder else fast_length)(max(width, 16))
    if size_only:
        return n, b - a
    if n > MAX_FFT:
        # refused before the transform's arrays exist; the engine retries on a coarser grid
        raise GridTooLargeError(
            f"the composed privacy loss needs {n:,} grid points at spacing {h:g} (more than "
            f"{MAX_FFT:,}); use a grid spacing of at least {(b - a) / (0.8 * MAX_FFT):.2g}",
            points=n, h=h, span=b - a)
    shift = sum(c * s.i_lo for s, c in steps)
    if max(abs(a - offset), abs(b - offset)) / h > 2.0**52 or abs(shift) > 2**52:
        # grid indices beyond 2^52 are not exact doubles (nor C longs): no grid of this
        # backend can hold such a composition (10^30 steps, say)
        raise NumericalError(
            f"{sum(c for _, c in steps):,} steps put the composed privacy loss beyond what the "
            "pld backend's grids can index exactly; the rdp backend accounts any number of "
            "steps")
    m = n // 2 + 1
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    # δ weights sum to at most the number of window points (each weight is ≤ 1)
    g_max = float(width)
    spectrum, spec_err = _power_spectrum(steps, n)
    if g_max * float(np.sum(weights * spec_err)) / n > tail_tol and _EXT is not np.float64:
        # the powered double-precision spectrum is not accurate enough: redo the frequencies
        # that matter in extended precision
        negligible = tail_tol * 1e-3 * n / (g_max * m)
        sel = np.flatnonzero(spec_err > negligible)
        # light masses stay in double precision: their error, amplified by the count, must
        # stay below a tenth of the tolerance over the selected frequencies
        kappa = _fb.rfft_error_constant(n, np.float64) * (ULP / 2)
        rest_budget = 0.1 * tail_tol * n / (g_max * 2 * max(sel.size, 1) * kappa
                                            * total_steps)
        if ladder and rest_budget > 0:
            rest_budget = floor_pow(rest_budget, 2.0)
        spectrum, spec_err = _power_spectrum(steps, n, sel=sel, keep=(spectrum, spec_err),
                                             rest_budget=rest_budget)
    y = fft.irfft(spectrum, n)
    roll = (i_start - shift) % n
    window = np.roll(y, -roll)[:width]
    kappa = _fb.irfft_error_constant(n, np.float64) * (ULP / 2)  # ULP = 2u
    spectral_coeff = (float(np.sum(weights * spec_err))
                      + kappa * float(np.sum(weights * np.abs(spectrum))))
    spectral_coeff = spectral_coeff / n * (1 + 1e-6) + _fb.underflow_allowance(n)
    p_inf = -math.expm1(sum(c * math.log1p(-min(s.p_inf, 1.0)) for s, c in original)) \
        if all(s.p_inf < 1 for s, _ in original) else 1.0
    if kind == "upper":
        p_inf = min(1.0, p_inf * (1 + 4 * ULP * total_steps))
    else:
        p_inf = max(0.0, p_inf * (1 - 4 * ULP * total_steps))
    max_loss = max(abs(s.offset) + max(abs(s.i_lo), abs(s.i_lo + s.masses.size)) * h
                   for s, _ in steps)
    loss_shift = total_steps * 4 * ULP * (1 + max_loss)
    return ComposedPLD(h, i_start, window, p_inf, kind, total_steps, tail_below, tail_above,
                       spectral_coeff, n, loss_shift, tilt, log_scale, offset)
