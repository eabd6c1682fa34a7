"""Certified upper values of a weighted sum of shifted hockey-stick curves, by tabulation.

Theorem 14 of Balle, Barthe, Gaboardi (2018) — Poisson subsampling under substitution — needs, at
every base ε, the sum ::

    S(ε) = Σ_k w_k D(ε + s_k)

of the base mechanism's extended profile D at hundreds or thousands of shifts s_k (one per
subsample size k in the binomial window). Evaluated term by term over an accountant's grid this
costs (number of shifts) × (grid points) evaluations of D and as many floats of memory — minutes
and gigabytes at n = 60,000. :class:`ShiftedSum` gives certified upper values of S at the cost of
one evaluation of D per table point and a short correlation.

**Why interpolation is safe here: convexity in α = e^ε.** A privacy profile extended to negative
ε is the hockey-stick divergence ``D(α) = sup E_α(P‖Q)`` over the (ordered) neighbouring pairs,
a supremum of functions ``α ↦ ∫ (p − α q)_+`` that are convex and non-increasing in α. So D is
convex and non-increasing in α, and so is S (a positive combination of ``α ↦ D(α e^{s_k})``).
For a convex function the chord between two points lies above it, and a chord through *upper
values* lies above the chord through the true values. Hence:

1. the table of D holds certified upper values at the exact dyadic points ``x_i = i·h``
   (``h = 2^-11``, so every ``x_i`` is a double);
2. ``D(x_j + s_k)`` is bounded by the chord (in α) between the two table points around it — with
   ``s_k`` rounded down and its position in the cell (``t``) rounded down, both of which move the
   chord's point toward the larger value — so ``S(x_j) ≤ Σ_m K_m D(x_{j+m})`` with a non-negative
   kernel K (the chord weights ``w_k (1 − t_k)`` and ``w_k t_k``, the weights rounded up);
3. S between table points is bounded by the chord of the S table, again in α.

The correlation is formed in blocks, each scaled by its largest value (no overflow); terms that
underflow are bounded by the smallest normal double and added; every sum is of non-negative terms,
so its relative rounding error is at most (number of terms + a few) ulp, which is added to the log
(:func:`~privamp._numerics.round_up_log`). The interpolation error is of second order,
``h²/8 · (D_xx − D_x)/D`` relative at each level (about 1e-6 relative for a Gaussian profile at
ε = 5) and always on the safe side.

Shifts whose weight is negligible are not tabulated one by one. Weights below 1e-30 of the
largest sit on a coarser grid of taps (every 32 h, the shift rounded down: no chord), so values
of S made mostly of them — 30 orders of magnitude below the bulk — can be high by a factor up
to ``e^{32 h |D'/D|}``. Weights below e^-700 of the largest are merged: those of shifts above the
core's first into its tap, those below its last into one extra term evaluated directly at the
smallest shift of all. Every one of these only raises the sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._numerics import ULP, round_up_log

__all__ = ["ShiftedSum"]

#: Table spacing (a power of two: grid points ``i·h`` and positions ``x/h`` are exact doubles).
H = 2.0 ** -11
#: Output points per block of the correlation (each block has its own scale).
_BLOCK_MIN, _BLOCK_MAX = 1024, 1 << 15
#: Largest drop of log D within one block's window (so that nothing relevant underflows).
_RANGE = 600.0
#: Log of the relative weight below which shifts are merged into the core's end taps.
_CORE_LOG_MASS = -700.0
#: Log of the relative weight below which shifts get coarse taps (see ShiftedSum).
_FINE_LOG_MASS = math.log(1e-30)
#: Coarse taps sit on multiples of this many grid steps.
_COARSE = 32
#: Largest table end: queries beyond it are answered term by term.
X_MAX = 64.0
#: Smallest positive normal double: a bound on what an underflowed term could have been.
_TINY = 2.0 ** -1022


class ShiftedSum:
    """Certified upper values of ``S(x) = Σ_k w_k D(x + s_k)`` for ``0 ≤ x ≤`` :data:`X_MAX`.

    Parameters
    ----------
    log_d : callable
        Upper values of ``log D`` on a 1-D array of real arguments (the base profile's extended
        log-profile); ``D`` must be (an upper bound on) a hockey-stick curve, convex and
        non-increasing in ``e^x``.
    shifts : ndarray
        The shifts ``s_k``, strictly decreasing.
    log_weights : ndarray
        ``log w_k`` (exact up to a few ulp; the caller's margin covers them).
    """

    def __init__(self, log_d: Callable[[np.ndarray], np.ndarray], shifts: np.ndarray,
                 log_weights: np.ndarray):
        self._log_d = log_d
        # each computed shift is within a few ulp of its exact value (the caller lowers it by its
        # own bound); lower it again by a margin that covers this module's arithmetic on it
        s = np.asarray(shifts, dtype=float)
        s = s - 8 * ULP * (1.0 + np.abs(s))
        lw = np.asarray(log_weights, dtype=float)
        top = float(np.max(lw))
        w = np.exp(lw) * (1 + 4 * ULP)  # exp rounds by ≤ 1 ulp: rounded up
        fine = np.flatnonzero(lw >= top + _FINE_LOG_MASS)
        core = np.flatnonzero(lw >= top + _CORE_LOG_MASS)
        lo, hi = int(core[0]), int(core[-1])
        # weights of larger shifts than the core's first (smaller D) are merged into it
        w_core = w[lo:hi + 1].copy()
        w_core[0] += float(np.sum(w[:lo])) * (1 + lo * ULP)
        s_core = s[lo:hi + 1]
        is_fine = np.zeros(hi + 1 - lo, dtype=bool)
        is_fine[fine - lo] = True
        # the extra term: every weight beyond the core, at the smallest shift of all
        self._extra_w = float(np.sum(w[hi + 1:])) * (1 + (len(w) - hi) * ULP)
        self._extra_s = float(s[-1])
        # fine taps (the bulk of the weight): s = m·h + r with 0 ≤ r < h, and
        # D(x + s) ≤ (1 − t) D(x_{j+m}) + t D(x_{j+m+1}), t = expm1(r)/expm1(h) rounded down
        # (toward the larger value); coarse taps (relative weight below 1e-30): the shift rounded
        # down to a multiple of _COARSE·h, D(x + s) ≤ D(x_{j+m}) — looser, on negligible weight,
        # and far fewer taps
        sf, wf = s_core[is_fine], w_core[is_fine]
        mf = np.floor(sf / H)
        r = sf - mf * H  # exact: a multiple of ulp(s) in [0, h)
        t = np.clip(np.expm1(r) / math.expm1(H) * (1 - 4 * ULP), 0.0, 1.0)
        mf = mf.astype(np.int64)
        mc = (np.floor(s_core[~is_fine] / (_COARSE * H)) * _COARSE).astype(np.int64)
        wc = w_core[~is_fine]
        every = np.concatenate([mf, mf + 1, mc])
        self._m_min = int(every.min())
        span = int(every.max()) - self._m_min + 1
        kernel = np.zeros(span)
        np.add.at(kernel, mf - self._m_min, wf * (1.0 - t))
        np.add.at(kernel, mf + 1 - self._m_min, wf * t)
        np.add.at(kernel, mc - self._m_min, wc)
        nz = np.flatnonzero(kernel)
        self._taps = nz  # offsets (from m_min) of the non-zero taps
        self._k = kernel[nz]
        self._k_sum = float(np.sum(self._k))
        self._span = span
        # every output is a sum of len(taps) non-negative products (plus the extra term); each
        # product carries the kernel's rounding (3 ulp) and the exp's (1 ulp); the rounding of
        # ``log D − ref`` is added per block
        self._rel = (len(nz) + 16) * ULP
        self._n = 0  # table points (x_0 = 0 ... x_{n−1})
        self._log_s = np.empty(0)
        self._log_dt = np.empty(0)  # D at x_i, i = m_min ... m_min + len − 1

    # -- the table ------------------------------------------------------------------------------

    def _d_table(self, n: int) -> np.ndarray:
        """Upper values of log D at ``x_i = i·h`` (exact dyadic points), ``m_min ≤ i <
        n + m_min + span``, made non-increasing by a running maximum from the right (still
        upper values: the true D is non-increasing; and rounding t down can then only raise a
        chord). Grown by appending: the running maximum of the old part only needs the new
        part's first value."""
        have = self._log_dt.size
        want = n + self._span
        if want > have:
            idx = np.arange(self._m_min + have, self._m_min + want, dtype=float)
            new = np.minimum(self._log_d(idx * H), 0.0)
            new = np.maximum.accumulate(new[::-1])[::-1]
            old = np.maximum(self._log_dt, new[0]) if have else self._log_dt
            self._log_dt = np.concatenate([old, new])
        return self._log_dt

    def _build(self, n: int) -> None:
        """Tabulate upper values of log S at ``x_j = j·h`` for ``j < n`` (appending)."""
        log_d = self._d_table(n)
        start = self._n
        out = np.empty(n - start)
        j0 = start
        while j0 < n:
            # a block whose window of D spans at most _RANGE nats (no relevant underflow), of
            # at least _BLOCK_MIN and at most _BLOCK_MAX outputs
            first = log_d[j0]
            if first == -math.inf:
                out[j0 - start:] = -math.inf
                break
            below = int(np.searchsorted(-log_d[j0:], -(first - _RANGE), side="right"))
            j1 = min(n, j0 + min(_BLOCK_MAX, max(_BLOCK_MIN, below - self._span + 1)))
            window = log_d[j0:j1 + self._span - 1]
            ref = float(window[0])  # the largest: the table is non-increasing
            with np.errstate(under="ignore"):
                scaled = np.exp(window - ref)
            acc = np.zeros(j1 - j0)
            for off, kv in zip(self._taps, self._k, strict=True):
                acc += kv * scaled[off:off + j1 - j0]
            # underflowed terms were each below the smallest normal (relative to e^ref)
            acc += self._k_sum * _TINY
            # ``window − ref`` rounds by up to 1 ulp of the larger magnitude: a relative error
            finite = window[np.isfinite(window)]
            rel = self._rel + 2 * ULP * (float(np.max(np.abs(finite))) + abs(ref))
            out[j0 - start:j1 - start] = round_up_log(ref + np.log(acc), rel)
            j0 = j1
        if self._extra_w > 0:
            x = np.arange(start, n, dtype=float) * H + self._extra_s
            x = x - 2 * ULP * (1.0 + np.abs(x))  # rounded down: D is non-increasing
            extra = round_up_log(math.log(self._extra_w) + np.minimum(self._log_d(x), 0.0),
                                 4 * ULP)
            out = round_up_log(np.logaddexp(out, extra), 2 * ULP)
        # non-increasing, as for D (the old part only needs the new part's first value)
        out = np.maximum.accumulate(out[::-1])[::-1]
        old = np.maximum(self._log_s, out[0]) if start else self._log_s
        self._log_s = np.concatenate([old, out])
        self._n = n

    def covers(self, x: np.ndarray) -> np.ndarray:
        """Which finite ``x ≥ 0`` the table can answer (x ≤ :data:`X_MAX`)."""
        return np.isfinite(x) & (x >= 0) & (x <= X_MAX)

    def log_upper(self, x: np.ndarray) -> np.ndarray:
        """Upper values of ``log S(x)`` for ``0 ≤ x ≤`` :data:`X_MAX` (see :meth:`covers`)."""
        x = np.asarray(x, dtype=float)
        if x.size == 0:
            return np.empty(0)
        need = int(math.floor(float(np.max(x)) / H)) + 2
        if need > self._n:
            target = max(need, self._n + self._n // 2, _BLOCK_MIN)
            self._build(min(target, int(X_MAX / H) + 2))
        u = x / H  # exact: h is a power of two
        i = np.minimum(np.floor(u), self._n - 2).astype(np.int64)
        r = x - i * H  # exact: a multiple of ulp(x) in [0, h)
        t = np.clip(np.expm1(r) / math.expm1(H) * (1 - 4 * ULP), 0.0, 1.0)
        a, b = self._log_s[i], self._log_s[i + 1]
        with np.errstate(divide="ignore"):
            val = np.logaddexp(np.log1p(-t) + a, np.log(t) + b)
        # t rounded down moves the chord's point toward the larger end; log1p/log/logaddexp
        # round by a few ulp of values of magnitude ≤ |a| + 40
        return round_up_log(val, 4 * ULP)

