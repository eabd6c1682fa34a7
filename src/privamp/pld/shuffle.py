"""The best known *lower* bound on the privacy of DP-SGD with shuffled fixed batches.

**The sampler.** Every epoch a fresh uniformly random permutation of the n records is cut into
T = n/m fixed batches of m records; each step releases the sum of the batch's gradients, clipped
to norm C, plus Gaussian noise N(0, σ²). No amplification *upper* bound is known for this
sampler; the certified upper end is the un-amplified composition (one Gaussian step per epoch for
each record). This module gives the lower end: a pair of output distributions of the mechanism
itself, on a pair of neighbouring datasets, post-processed. Every hockey-stick divergence of
that pair is a valid lower bound on the mechanism's (Chua, Ghazi, Kamath, Kumar, Manurangsi,
Sinha, Zhang, "How Private are DP-SGD Implementations?", ICML 2024, arXiv 2403.17673: the
shuffled-ABLQ lower bound, its worst-case datasets and the maximum of the outputs as the test;
"Scalable DP-SGD: Shuffling vs. Poisson Subsampling", NeurIPS 2024, arXiv 2411.04205: the
multi-epoch lower bounds).

**The pair.** One-dimensional gradients, C = 1, θ = C/σ. Every record of x has gradient −1
except the differing one, which has +1; in x' it is replaced by a record contributing 0
("zero-out": the batch shapes stay fixed, sensitivity C). In units of σ the T outputs of one
epoch, shifted by the baseline m/σ, are independent standard normals, except the one of the
batch holding the differing record (uniformly random position), whose mean is a = 2θ under x
and b = θ under x'. Post-processing by the maximum M = max_j of the T outputs gives

    F_P(c) = Φ(c)^{T−1} Φ(c − a),   F_Q(c) = Φ(c)^{T−1} Φ(c − b)       (the CDFs of M).

Binning M into cells is a further post-processing, so, by the data-processing inequality, for
every α = e^ε > 0

    D_α(p ‖ q) ≤ D_α(M(x) ‖ M(x')) ≤ D_α(mechanism(x) ‖ mechanism(x'))

for the cell probabilities (p, q). The values of :class:`DiscretePairCurve` of (p, q) are
therefore lower bounds on the mechanism's hockey-stick curve *for this ordered pair of
neighbours*, and the lower end of a PLD composition of such curves is a lower bound on the
composed mechanism (composition of dominated pairs is dominated, for every α ≥ 0).

**Rounding.** The cell probabilities are computed in log space and are known only within an
error bound; the vectors returned are p rounded *down* and q rounded *up* by that bound (the
argument is at :func:`shuffle_lower_pair`). ``D_α(p' ‖ q') = Σ_j (p'_j − α q'_j)_+`` is
non-decreasing in every p'_j and non-increasing in every q'_j, so the rounded vectors only lower
every value; the same holds for their products (compositions). The PLD engine's lower side
builds its dominated pair from values and supporting lines of the rounded curve, which lie
below the exact binned pair's curve, and from the line 1 − α, which lies below the curve of every
pair of probability measures: its lower end is a lower bound on the composition of the exact
binned pairs.

**Orientations.** Under the ordered pair (x', x) the roles swap: (q, p) (rounded the other way,
q down and p up) is a post-processing of (mechanism(x'), mechanism(x)). Both are valid lower
pairs; the engine composes each orientation separately and reports the larger, which is still a
lower bound (the privacy of the mechanism is a supremum over ordered neighbours).

**Epochs.** *Reshuffled* (a fresh permutation each epoch): the epochs are independent, so E
epochs are E compositions of the one-epoch pair. *Persistent* (one permutation reused every
epoch): the differing record sits in the same batch position j in every epoch, and the E outputs
of position i are independent N(μ_i, 1), μ_i the same in every epoch. For a fixed permutation
the likelihood of the E·T outputs depends on them only through the per-position sums S_i (the
Gaussian likelihood factorises as exp(Σ_i μ_i S_i − E μ_i²/2) times a function of the data
alone), so the sums are sufficient also for the mixture over the random position: the
likelihood ratio of the two mixtures is a function of (S_i), and the pair of distributions of
(S_i) has the same hockey-stick curve as the full outputs. S_i/√E ~ N(√E μ_i, 1): E persistent
epochs are exactly one epoch at θ√E.

Chua et al. report (δ = 1e-6, T = 1000): σ = 0.5 → ε ≥ 10.997, σ = 1 → 3.724, σ = 2 → 0.110,
and five reshuffled epochs at σ = 1 → 4.701; ``tests/test_shuffle_lower.py`` checks all four.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _special
from .._numerics import FUNC_ULPS, ULP, log1mexp, round_down_log, round_up_log
from .._validation import check_choice, check_int, check_real, check_real_array
from ..errors import InvalidParameterError
from .curves import PairCurve

__all__ = ["DiscretePairCurve", "shuffle_lower_curves", "shuffle_lower_pair"]

#: The smallest positive double: a probability rounded up must not become 0 by underflow.
_TINY = math.ulp(0.0)

#: Sums of the vectors of a :class:`DiscretePairCurve` must be within this of 1: the rounded
#: vectors of :func:`shuffle_lower_pair` miss 1 by about 1e-12, anything else is a mistake.
_SUM_TOL = 1e-6


def _log_interval_diff(log_a: np.ndarray, log_b: np.ndarray, err: np.ndarray,
                       lower: bool) -> np.ndarray:
    """A bound on ``log(A − B)`` from ``log A`` and ``log B`` each known within ``err``
    (absolute, in the log): lower: ``log A − err + log1mexp(log B + err − log A + err)``,
    upper with the signs reversed; ``-inf`` where the lower bound of A − B is not positive.

    The subtraction of the logs adds at most ``ULP(|log A| + |log B|)`` (two roundings, each
    within half an ulp of the result, ≤ the sum of magnitudes); log1mexp is log(−expm1(x)) or
    log1p(−exp(x)): within ``FUNC_ULPS`` ulp of its argument's function and of the log, which
    the final ``round_*_log`` by ``2·FUNC_ULPS`` ulp of ``1 + |value|`` covers."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        sub = ULP * (np.abs(log_a) + np.abs(np.where(np.isfinite(log_b), log_b, 0.0)))
        if lower:
            x = log_b - log_a + 2 * err + sub
            val = np.where(x < 0, log_a - err + log1mexp(np.minimum(x, 0.0)), -np.inf)
            val = np.where(np.isneginf(log_b), log_a - err, val)
            return round_down_log(val, ulps=2 * FUNC_ULPS)
        x = log_b - log_a - 2 * err - sub
        val = np.where(x < 0, log_a + err + log1mexp(np.minimum(x, 0.0)), log_a + err)
        val = np.where(np.isneginf(log_b), log_a + err, val)
        return round_up_log(val, ulps=2 * FUNC_ULPS)


class DiscretePairCurve(PairCurve):
    """The hockey-stick curve of a pair of probability vectors on a common finite support.

    ``D_α(p ‖ q) = Σ_j (p_j − α q_j)_+`` for every α = e^ε > 0 (ε < 0 included; α = 0 gives
    Σ_j p_j and α = ∞ the P-mass where q = 0). With the privacy loss L = log(p_j/q_j) of
    outcome j, ``D_α = P(L > ε) − α Q(L > ε)`` and the slopes are ``f'(α+) = −Q(L > ε)`` and
    ``f'(α−) = −Q(L ≥ ε)``, computed exactly from sorted cumulative sums.

    The vectors may miss 1 by rounding (up to 1e-6; :func:`shuffle_lower_pair` rounds p down and
    q up): the curve is then that of the measures (p, q), whose values lie below those of every
    pair of probability vectors (P, Q) with P ≥ p and Q ≤ q entrywise, and the PLD engine's
    lower end bounds their composition from below. Its upper end is an upper bound for (p, q)
    only while Σp ≤ 1 (the engine anchors the curve at f(0) = 1; an excess of the first vector
    above 1 enters the upper end by that much) — and never a guarantee for a mechanism this
    pair is a *lower* bound of.

    Every value is bracketed with its rounding: the sorted suffix sums of n non-negative terms
    are within ``n·ULP`` relative; log p − log q within ``(FUNC_ULPS + 1)·ULP·(|log p| + |log q|)``,
    so an outcome whose computed loss is that close to ε may be on either side of it — it
    changes the sum by at most ``p_j·expm1(2·err)``, added to the upper value (the lower value
    needs nothing: a sum over *any* set of outcomes is at most the divergence).

    Parameters
    ----------
    p, q : array_like
        Non-negative vectors of the same length, each summing to 1 within 1e-6.
    orientation : {"remove", "add"}
        The orientation this pair stands for in the PLD engine.

    Raises
    ------
    InvalidParameterError
        For vectors that are not non-negative and finite, of different lengths or sums, or an
        unknown orientation.

    >>> f = DiscretePairCurve([0.5, 0.5], [0.25, 0.75])
    >>> round(float(np.exp(f.log_upper(np.array([0.0]))[0])), 12)  # TV distance
    0.25
    """

    lower_slack = 1e-12

    def __init__(self, p, q, orientation: str = "remove"):
        pa = check_real_array("p", p, "[0, inf)", ndim=1)
        qa = check_real_array("q", q, "[0, inf)", ndim=1)
        if pa.size != qa.size:
            raise InvalidParameterError("p, q", "vectors of the same length", (pa.size, qa.size))
        for name, arr in (("p", pa), ("q", qa)):
            total = math.fsum(arr.tolist())
            if abs(total - 1.0) > _SUM_TOL:
                raise InvalidParameterError(
                    name, f"a probability vector (entries >= 0 summing to 1 within {_SUM_TOL:g})",
                    total, detail="this is its sum")
        self.orientation = check_choice("orientation", orientation, ("remove", "add"))
        self.p = pa
        self.q = qa
        live = pa > 0
        ps, qs = pa[live], qa[live]
        lp = np.log(ps)
        with np.errstate(divide="ignore"):
            lq = np.log(qs)
            lr = lp - lq  # +inf where q = 0
        order = np.argsort(lr, kind="stable")
        self._lr = lr[order]
        ps, qs = ps[order], qs[order]
        finite = np.isfinite(lq)
        # the computed log-ratio is within (FUNC_ULPS + 1) ulp of each logarithm's magnitude
        # (each log within FUNC_ULPS, the difference within half an ulp of the sum)
        mags = np.abs(lp) + np.where(finite, np.abs(lq), 0.0)
        self._lr_err = (FUNC_ULPS + 1) * ULP * (float(np.max(mags, initial=0.0)) + 1.0)
        # suffix sums S_k = Σ_{i ≥ k} (S_n = 0) and prefix sums R_k = Σ_{i < k}, summed from
        # the small end so that tails are accurate; sequential sums of n non-negative terms
        # are within (n − 1)·ULP/2 of their value
        self._sp = np.concatenate([np.cumsum(ps[::-1])[::-1], [0.0]])
        self._sq = np.concatenate([np.cumsum(qs[::-1])[::-1], [0.0]])
        self._rp = np.concatenate([[0.0], np.cumsum(ps)])
        self._rq = np.concatenate([[0.0], np.cumsum(qs)])
        self._sum_err = (pa.size + 2) * ULP
        #: Q-mass where p = 0 (loss −∞: below every ε)
        self._q_dead = math.fsum(qa[~live].tolist())
        #: P-mass where q = 0 (loss +∞), summed exactly rounded
        self._p_inf = math.fsum(ps[~np.isfinite(self._lr)].tolist())

    # ---- values --------------------------------------------------------------------------

    def _log_sums(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log of cumulative sums and their absolute error in the log (relative error of the
        sum, plus the log's own FUNC_ULPS)."""
        with np.errstate(divide="ignore"):
            val = np.log(sums)
        err = self._sum_err + FUNC_ULPS * ULP * (1.0 + np.abs(np.where(np.isfinite(val), val,
                                                                        0.0)))
        return val, err

    def _ambiguous(self, eps: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """An upper bound on the weight (``_sp`` or ``_sq``: suffix sums) of the outcomes whose
        computed loss is within the loss error of ε."""
        e = self._lr_err
        i0 = np.searchsorted(self._lr, eps - e, side="left")
        i1 = np.searchsorted(self._lr, eps + e, side="right")
        return (weights[i0] - weights[i1]) + 2 * self._sum_err * weights[i0]

    def _curve(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        flat = eps.reshape(-1)
        out = np.empty(flat.shape)
        top = np.isposinf(flat)
        if self._p_inf > 0:
            lpi = math.log(self._p_inf)
            out[top] = (round_down_log(lpi, ulps=FUNC_ULPS) if lower
                        else round_up_log(lpi, ulps=FUNC_ULPS))
        else:
            out[top] = -np.inf
        e = flat[~top]
        # S = {outcomes whose computed loss exceeds ε}; Σ_S (p − αq) = P_S (1 − e^{ε + log Q_S −
        # log P_S}), bounded with the errors of both logs
        k = np.searchsorted(self._lr, e, side="right")
        log_sp, err_p = self._log_sums(self._sp[k])
        log_sq, err_q = self._log_sums(self._sq[k])
        with np.errstate(invalid="ignore"):
            log_b = np.where(np.isneginf(log_sq), -np.inf, e + log_sq)
            err = np.maximum(err_p, err_q) + ULP * np.where(np.isfinite(e), np.abs(e), 0.0)
        val = _log_interval_diff(log_sp, log_b, err, lower)
        val = np.where(np.isneginf(log_sp), -np.inf, val)
        if not lower:
            # outcomes within the loss error of ε may be on the other side: each changes the
            # sum by at most p_j·expm1(2·err) ≤ p_j·2.01·err
            amb = self._ambiguous(e, self._sp)
            with np.errstate(divide="ignore"):
                extra = np.log(np.maximum(amb, 0.0) * 2.01 * self._lr_err)
            val = round_up_log(np.logaddexp(val, extra), ulps=2)
        out[~top] = val
        # no cap at 0 on the upper value: vectors summing to 1 + 1e-16 (rounding) have values
        # above 1 at α → 0; the lower value may be capped (it stays a lower bound)
        return (np.minimum(out, 0.0) if lower else out).reshape(eps.shape)

    def log_upper(self, eps):
        """Upper bound on ``log Σ_j (p_j − e^ε q_j)_+``, any real ε (±∞ included)."""
        return self._curve(eps, lower=False)

    def log_lower(self, eps):
        """Lower bound on ``log Σ_j (p_j − e^ε q_j)_+``, any real ε (±∞ included)."""
        return self._curve(eps, lower=True)

    def slope_bounds(self, eps, tau, log_lower=None):
        """``(−Q(L ≥ ε − err), −Q(L > ε + err))`` with the sums' rounding: the left and right
        derivatives in α, ``−Q(L ≥ ε)`` and ``−Q(L > ε)``, lie between them (``tau`` is not
        needed: the slopes are exact)."""
        eps = np.asarray(eps, dtype=float)
        e = self._lr_err
        with np.errstate(invalid="ignore"):
            i_lo = np.searchsorted(self._lr, eps - e, side="left")
            i_hi = np.searchsorted(self._lr, eps + e, side="right")
        # No absolute (subnormal) slack is needed: q is the pair itself, and a suffix sum of
        # its non-negative entries that lands below 2^-1022 is exact (every term and partial
        # sum is then subnormal too, and subnormal additions are exact); one that is normal is
        # within (n − 1)/2 ulp relative. The product of an exact subnormal sum S by 1 ± sum_err
        # lies on S's safe side, so it rounds to S (a float) or beyond, never back past it; for
        # a normal sum the relative bound holds, the product's own rounding inside sum_err.
        s_lo = -self._sq[i_lo] * (1 + self._sum_err)
        s_hi = -self._sq[i_hi] * (1 - self._sum_err)
        return s_lo, np.minimum(s_hi, 0.0)

    def log_excess(self, eps):
        """Upper bound on ``log Σ_j (e^ε q_j − p_j)_+ = ε + log D_{e^{−ε}}(q ‖ p)``: for a pair of
        probability vectors it is ``f(α) − (1 − α)``; for the rounded vectors (Σp ≤ 1 ≤ Σq)
        it is above it, so the left-tail bound built on it stays valid."""
        eps = np.asarray(eps, dtype=float)
        # R = {outcomes whose computed loss is at most ε} and the outcomes with p = 0:
        # Σ_R (αq − p) = αQ_R (1 − e^{log P_R − ε − log Q_R})
        k = np.searchsorted(self._lr, eps, side="right")
        q_r = self._rq[k] + self._q_dead
        log_q, err_q = self._log_sums(q_r)
        log_p, err_p = self._log_sums(self._rp[k])
        with np.errstate(invalid="ignore"):
            log_a = eps + log_q
            err = np.maximum(err_p, err_q) + ULP * np.abs(eps)
        val = _log_interval_diff(log_a, log_p, err, lower=False)
        val = np.where(np.isneginf(log_q), -np.inf, val)
        # ambiguous outcomes: α q_j |1 − e^{L_j − ε}| ≤ α q_j expm1(2·err) each
        amb = self._ambiguous(eps, self._sq)
        with np.errstate(divide="ignore"):
            extra = eps + np.log(np.maximum(amb, 0.0) * 2.01 * self._lr_err)
        return round_up_log(np.logaddexp(val, extra), ulps=2)

    def __repr__(self) -> str:
        return f"DiscretePairCurve(<{self.p.size} outcomes>, {self.orientation})"


# ------------------------------------------------------------------------------------------
# the shuffled-batches pair
# ------------------------------------------------------------------------------------------

#: Relative error budget of ``_special.log_ndtr`` (documented and tested within 4 ulp,
#: tests/test_special.py); twice that is budgeted.
_LOG_NDTR_ULPS = 8.0

#: log of the mass lumped into each end cell (e^{−80} ≈ 1.8e-35): below it the pair is only
#: resolved by its end cells (still valid, only less tight for δ below ~1e-30).
_LOG_END_MASS = -80.0

#: Cell width of the max statistic in units of σ (c), divided by max(1, θ): the loss changes by
#: about θ per unit of c in the tail that decides ε. Measured: the one-epoch ε at δ = 1e-6 is
#: within 1e-5 relative of the unbinned supremum at σ ∈ {0.5, 1, 2}, T ∈ {10, 1000}
#: (tests/test_shuffle_lower.py checks 1e-4).
_CELL_WIDTH = 2e-3

#: Absolute error floor of log F, for underflow (a cell probability that is below it in truth
#: may be reported up to it in the second vector: likelihood ratios beyond ~e^{600} are cut).
_ABS_FLOOR = 1e-290

#: At most this many cells (beyond, the cells widen: still valid, only less tight).
_MAX_CELLS = 200_000


def _log_cdf_max(c: np.ndarray, shift: float, batches: int,
                 shift_err: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``log F(c) = (T − 1) log Φ(c) + log Φ(c − shift)`` and a bound on its absolute error.

    Error: each log_ndtr within ``_LOG_NDTR_ULPS`` ulp of its value; the argument x = c − shift
    is rounded (|Δx| ≤ ULP·|x|/2, plus ``shift_err`` when the shift itself is a rounded value
    of the exact one), which moves log Φ by at most λ(x)·|Δx| with λ = φ/Φ the
    derivative of log Φ: λ(x) < (|x| + √(x² + 4))/2 ≤ |x| + 1 for x < 0 (Birnbaum's bound on
    the Mills ratio) and λ(x) ≤ φ(x)/Φ(0) = 2φ(x) for x ≥ 0 (a bound that stays relative to the
    tiny log Φ(x) ≈ −φ(x)/x far right, where the cells are thin); the product by the exact
    integer T − 1 (< 2^53) and the sum each add half an ulp of their results. The error is
    doubled for safety, and ``_ABS_FLOOR`` added: where log Φ(c) underflows (far right, below
    1e-308 in magnitude) the relative bounds say nothing."""
    x = c - shift
    l0 = _special.log_ndtr(c)
    l1 = _special.log_ndtr(x)
    t1 = float(batches - 1)
    val = t1 * l0 + l1
    with np.errstate(under="ignore"):
        lam = np.where(x < 0, 1.0 - x, 2.0 * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))
    err = (_LOG_NDTR_ULPS * ULP * (t1 * np.abs(l0) + np.abs(l1))
           + (0.5 * ULP * np.abs(x) + shift_err) * lam
           + ULP * (t1 * np.abs(l0) + np.abs(l1) + np.abs(val)))
    return val, 2.0 * err + _ABS_FLOOR


def _find(func, target: float, lo: float, hi: float) -> float:
    """A point where the increasing function ``func`` crosses ``target`` (bisection; only
    places the grid, so its accuracy is not critical)."""
    while func(lo) > target:
        lo -= max(1.0, abs(lo))
    while func(hi) < target:
        hi += max(1.0, abs(hi))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if func(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _right_tail(c: float, shift: float, batches: int, lower: bool, other: float,
                shift_err: float = 0.0) -> float:
    """The better of ``other`` and the bound on log(1 − F(c)) from the shifted output alone
    (lower) or the union bound (upper). Errors: log_ndtr within ``_LOG_NDTR_ULPS`` ulp, its
    argument x = shift − c (or −c, exact) rounded by ULP·|x|/2 (+ ``shift_err``), moving log Φ
    by ≤ (1 + |x|)
    times that (x < 0 here; Birnbaum), log(T − 1) and the log-add-exp a few ulp — all doubled."""
    x = shift - c
    l1 = float(_special.log_ndtr(x))
    e1 = 2 * (_LOG_NDTR_ULPS * ULP * abs(l1)
              + (0.5 * ULP * abs(x) + shift_err) * (1 + max(-x, 0.0)))
    if lower:
        return max(other, l1 - e1 - FUNC_ULPS * ULP * (1 + abs(l1)))
    if batches > 1:
        l0 = math.log(batches - 1) + float(_special.log_ndtr(-c))
        e0 = 2 * (_LOG_NDTR_ULPS * ULP * abs(l0) + FUNC_ULPS * ULP * (1 + abs(l0)))
        union = float(np.logaddexp(l0 + e0, l1 + e1))
    else:
        union = l1 + e1
    union += 2 * FUNC_ULPS * ULP * (1 + abs(union))
    return min(other, union, 0.0)


def _cell_logs(edges: np.ndarray, shift: float, batches: int,
               lower: bool, shift_err: float = 0.0) -> np.ndarray:
    """Bounds (lower or upper) on the log-probabilities of the cells
    (−∞, e_0], (e_0, e_1], …, (e_{K−1}, e_K], (e_K, ∞) of the max statistic.

    With L_k = log F(e_k) known within err_k (:func:`_log_cdf_max`) and the gap
    d_k = L_k − L_{k−1} > 0 within err_k + err_{k−1} + its own half ulp:

    * middle cells: F(e_k) − F(e_{k−1}) = e^{L_k}(1 − e^{−d_k}) is increasing in both L_k and
      d_k, so the lower (upper) bound takes both at the low (high) end of their intervals;
    * left end: F(e_0) = e^{L_0};
    * right end: 1 − F(e_K) = 1 − e^{L_K}, decreasing in L_K.

    log1mexp, exp and the additions add a few ulp of the magnitudes, covered by rounding the
    logs by ``4·FUNC_ULPS`` ulp of ``1 + |value|`` in the safe direction.
    """
    big, err = _log_cdf_max(edges, shift, batches, shift_err)
    d = np.diff(big)
    d_err = err[1:] + err[:-1] + ULP * np.abs(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        if lower:
            dd = d - d_err
            mid = np.where(dd > 0, big[1:] - err[1:] + log1mexp(-np.maximum(dd, 0.0)), -np.inf)
            left = big[0] - err[0]
            hi_end = big[-1] + err[-1]
            right = log1mexp(min(hi_end, 0.0)) if hi_end < 0 else -np.inf
        else:
            dd = d + d_err
            mid = big[1:] + err[1:] + log1mexp(-dd)
            left = big[0] + err[0]
            lo_end = big[-1] - err[-1]
            # 1 − F(e_K) ≤ 1 whatever the error says
            right = float(log1mexp(lo_end)) if lo_end < 0 else 0.0
        # the right end directly, as the same cell's probability seen from the right:
        # Φ(shift − e_K) ≤ 1 − F(e_K) ≤ (T − 1)Φ(−e_K) + Φ(shift − e_K) (the shifted output
        # alone exceeds e_K; a union bound) — where log F rounds to 0 the first form says nothing
        right = _right_tail(float(edges[-1]), shift, batches, lower, right, shift_err)
    out = np.concatenate([[left], mid, [right]])
    out = np.minimum(out, 0.0) if not lower else out
    if lower:
        return round_down_log(out, ulps=4 * FUNC_ULPS)
    return np.minimum(round_up_log(out, ulps=4 * FUNC_ULPS), 0.0)


def _edges(a: float, b: float, batches: int) -> np.ndarray:
    """Cell boundaries of the max statistic: from where F_b ≤ e^{−80} (F_a ≤ F_b: b < a) to
    where 1 − F_a ≤ e^{−80}, spaced ``_CELL_WIDTH / max(1, a − b)`` (at most ``_MAX_CELLS``):
    in the tail that decides ε the loss grows like (a − b)·c."""

    def log_fb(c):
        return float(_log_cdf_max(np.array([c]), b, batches)[0][0])

    def log_sf_a(c):  # −log(1 − F_a(c)), increasing
        return -float(log1mexp(min(_log_cdf_max(np.array([c]), a, batches)[0][0], -1e-300)))

    lo = _find(log_fb, _LOG_END_MASS, -1.0, 1.0)
    hi = _find(log_sf_a, -_LOG_END_MASS, max(lo, a), max(lo, a) + 20.0)
    width = _CELL_WIDTH / max(1.0, a - b)
    cells = max(1, min(_MAX_CELLS, math.ceil((hi - lo) / width)))
    return lo + (hi - lo) * (np.arange(cells + 1) / cells)


def _check_means(a, b) -> tuple[float, float]:
    a = check_real("a", a, "(0, 2e4]")
    b = check_real("b", b, f"[0, {a!r})")
    return a, b


def _pair(a: float, b: float, batches: int, orientation: str,
          rel_err: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`shuffle_lower_pair` for means known within ``rel_err`` (relative) of the exact
    ones: their error widens each cell's interval like a rounding of c − a."""
    edges = _edges(a, b, batches)
    (s1, s2) = (a, b) if orientation == "remove" else (b, a)
    first = _cell_logs(edges, s1, batches, lower=True, shift_err=rel_err * s1)
    second = _cell_logs(edges, s2, batches, lower=False, shift_err=rel_err * s2)
    with np.errstate(under="ignore"):
        first = np.exp(first) * (1 - 4 * ULP)
        second = np.maximum(np.exp(second) * (1 + 4 * ULP), _TINY)
    return first, np.minimum(second, 1.0)


def shuffle_lower_pair(a: float, b: float, batches: int,
                       orientation: str = "remove") -> tuple[np.ndarray, np.ndarray]:
    """A dominated pair (p, q) of one epoch of shuffled fixed batches: the binned maximum of
    the T outputs (module docstring), with p rounded down and q rounded up.

    The pair of one epoch of T = ``batches`` steps of the Gaussian mechanism on fixed batches
    of a fresh random permutation, on the datasets of Chua et al. (2024): the maximum M of the
    T outputs (in units of σ, baseline removed) has CDFs ``F_a(c) = Φ(c)^{T−1} Φ(c − a)`` under
    x and ``F_b`` under x', a and b the record's batch mean under x and x'. Zero-out (add/remove,
    the other gradients at −C, the record's +C against 0): a = 2θ, b = θ with θ = C/σ;
    substitution (+C against −C): a = 2C/σ, b = 0. The cells have width
    ``2e-3/max(1, a − b)`` between the points where the lumped end cells hold e^{−80}. Binning
    is post-processing, so ``D_α(p ‖ q) ≤ D_α(M(x) ‖ M(x')) ≤ D_α(mechanism(x) ‖
    mechanism(x'))`` for every α.

    **Rounding to the safe side.** Each cell's log-probability is bracketed from the log-CDFs
    and their error bounds (:func:`_cell_logs`: the relative error of ``log_ndtr``, the
    rounding of c − a, of the product by T − 1 and of the sums, all carried as an interval on
    log F and on the gap between neighbouring log F); the first vector is the lower end of
    each cell's interval and the second the upper end, each exponentiated with a 4 ulp margin
    (a second-vector entry that would underflow is the smallest positive double, still above
    the exact value). Since ``Σ_j (p_j − α q_j)_+`` only decreases when p decreases or q
    increases entrywise, the rounded pair's values are lower bounds on the exact binned pair's.

    Parameters
    ----------
    a, b : float
        The record's batch mean under x and under x', in units of σ: 0 ≤ b < a ≤ 2e4.
    batches : int
        T = ⌊n/m⌋, the number of batches (steps) of an epoch, in [1, 2^53].
    orientation : {"remove", "add"}
        "remove": (p, q), the distributions under x and x'; "add": (q, p) — q rounded down and
        p rounded up (the ordered pair (x', x)).

    Returns
    -------
    tuple of numpy.ndarray
        (first, second): the first rounded down, the second rounded up, over the same cells.

    Raises
    ------
    InvalidParameterError
        For a outside (0, 2e4], b outside [0, a), T outside [1, 2^53] or an unknown
        orientation.

    >>> p, q = shuffle_lower_pair(2.0, 1.0, 1000)
    >>> bool(abs(p.sum() - 1) < 1e-9 and p.sum() <= 1 and q.sum() >= 1)
    True
    """
    a, b = _check_means(a, b)
    batches = check_int("batches", batches, "[1, 9007199254740992]")
    orientation = check_choice("orientation", orientation, ("remove", "add"))
    return _pair(a, b, batches, orientation, 0.0)


def shuffle_lower_curves(a: float, b: float, batches: int, epochs: int = 1,
                         order: str = "reshuffle") -> list[tuple[dict, int]]:
    """The lower-bound pair curves of ``epochs`` epochs of shuffled fixed batches, for the PLD
    engine: a list of ``(curves, count)`` (``PldEvent(curves, count)``).

    * ``order="reshuffle"`` (a fresh permutation every epoch): the one-epoch pair composed
      ``epochs`` times, ``[({"remove": …, "add": …}, epochs)]``;
    * ``order="persistent"`` (one permutation for all epochs): one epoch with means a·√epochs
      and b·√epochs, count 1 (the per-position sums are sufficient; module docstring).

    The lower end of :func:`~privamp.pld.engine.pld_epsilon` on these events is a lower bound
    on the ε(δ) of the mechanism (Chua et al. 2024); its upper end is *not* a guarantee.

    Parameters
    ----------
    a, b : float
        The record's batch mean under x and x' in units of σ (:func:`shuffle_lower_pair`;
        zero-out: 2C/σ and C/σ), 0 ≤ b < a ≤ 2e4 (after the persistent scaling too).
    batches : int
        T, the batches per epoch.
    epochs : int
        E ≥ 1.
    order : {"reshuffle", "persistent"}
        Whether each epoch draws a new permutation.

    >>> from privamp.pld.engine import PldEvent, pld_epsilon
    >>> events = [PldEvent(c, n) for c, n in shuffle_lower_curves(2.0, 1.0, 1000)]
    >>> round(pld_epsilon(events, 1e-6).bracket.lower, 3)
    3.724
    """
    a, b = _check_means(a, b)
    batches = check_int("batches", batches, "[1, 9007199254740992]")
    epochs = check_int("epochs", epochs, "[1, inf)")
    order = check_choice("order", order, ("reshuffle", "persistent"))
    count, rel_err = epochs, 0.0
    if order == "persistent":
        # the exact means are a√E and b√E; sqrt and each product are correctly rounded (half
        # an ulp each), so the computed means are within 2 ulp (relative) of them, an error
        # the cells' intervals carry like the rounding of c − a
        root = math.sqrt(epochs)
        a = check_real("a * sqrt(epochs)", a * root, "(0, 2e4]")
        b = b * root
        count, rel_err = 1, (0.0 if epochs == 1 else 2 * ULP)  # E = 1: exact
    remove = DiscretePairCurve(*_pair(a, b, batches, "remove", rel_err), "remove")
    add = DiscretePairCurve(*_pair(a, b, batches, "add", rel_err), "add")
    return [({"remove": remove, "add": add}, count)]
