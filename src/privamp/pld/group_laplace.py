"""Groups of K records under Poisson subsampling of the **Laplace** mechanism: the tight pairs.

The Gaussian case is :mod:`privamp.pld.group` (its module doc sets out the K-neighbours, the
splits and how they are composed). Here the mechanism is ``f(x) + Lap(0, b)`` with sensitivity
Δ, and θ = Δ/b (units of b).

**The pair.** Write x = D ∪ A and x' = D ∪ B with A ∩ B = ∅, |A| = a, |B| = b, a + b = K (a
removals and b insertions from x to x'). For every α ≥ 0,
``D_α(M(x) ‖ M(x')) ≤ D_α(P_{a,b} ‖ Q_{a,b})`` with the one-dimensional double mixture

    P_{a,b} = Σ_i Bin(i; a, q) Lap(iθ, 1),    Q_{a,b} = Σ_j Bin(j; b, q) Lap(−jθ, 1),

and the bound is attained (a sum query whose group members contribute +Δ in A and −Δ in B).

*Proof.* ``D_α(M(x)‖M(x')) = E_Z[(Σ_S w_S X_S − α Σ_S w'_S Y_S)⁺]``, Z ~ Lap(f(D_s), b)^d the
common reference, with X_S, Y_S the likelihood ratios of the shifted Laplace laws of the
subsets S ⊆ A (S ⊆ B) against it; the sampled part of D shifts every component by the same
vector and cancels by translation (joint convexity over it), so take it empty. Each X_S is
nonnegative with mean 1. For nonnegative variables of equal mean, convex order is equivalent to
the ordering of ``E(X − c)⁺`` for every c ≥ 0, i.e. of every hockey-stick divergence; the ℓ1
Laplace mechanism at shift u is dominated by its one-dimensional pair at ‖u‖₁, and the 1-d
Laplace hockey-stick divergence ``[1 − e^{(ε − s)/2}]⁺`` (Balle, Barthe, Gaboardi 2018,
Theorem 3; extended to ε < 0 through ``1 − α + α D_{1/α}``) grows with the shift s, so X_S is
dominated in convex order by the 1-d ratio at shift ``‖u_S‖₁ ≤ |S|Δ`` (likewise Y_S). A sum is
largest in convex order when its terms are comonotone, and comonotone sums preserve convex
order (Dhaene, Denuit, Goovaerts, Kaas, Vyncke 2002, "The concept of comonotonicity in actuarial
science and finance: theory", Theorems 7 and 8); (·)⁺ is convex. In one dimension with every
P shift ≥ 0 and every Q shift ≤ 0, each X_S = e^{|z| − |z − u_S|} is non-decreasing in z and
each −Y_S too: comonotone, realised by the pair above after grouping the subsets by size (the
binomial weights). The splits and their composition are as for the Gaussian: each split is
composed over the whole ledger, the guarantee is the maximum over the K + 1 splits. K = 1 gives
the two Poisson orientations of Zhu, Dong, Wang 2022, Theorem 11; q = 1 the Laplace mechanism at
sensitivity KΔ.

**The privacy loss.** ``L(t) = log(p/q)(t) = LSE_i(log w_i − |t − μ_i|) − LSE_j(log w'_j −
|t − ν_j|)`` (μ_i = iθ ≥ 0 ≥ ν_j = −jθ) is non-decreasing (each component ratio against
Lap(0, 1), ``e^{|t| − |t − μ|}``, is non-decreasing for μ ≥ 0 and non-increasing for μ ≤ 0)
and, unlike the Gaussian's, **constant beyond the extreme centres**: ``L = L_max`` for
t ≥ max μ and ``L = L_min`` for t ≤ min ν. So L has atoms at L_min < 0 < L_max (pure DP with
``L_max ≤ Kθ``) and a continuous part between. With g(t) = P(T > t) − α Q(T > t):

* ``D_α = sup_t g(t) = g(t*)`` for the crossing t* of L and ε = log α (monotone loss);
* ``D_α = 0`` for ε ≥ L_max (p ≤ αq everywhere), ``D_α = 1 − α`` for ε ≤ L_min;
* for L_min < ε < L_max, t* ∈ [min ν, max μ]. Hence, for any t_lo ≤ t_hi bracketing t* inside
  that interval, ``D_α ≤ max(0, P(T > t_lo) − α Q(T > t_hi))`` for ε ≥ 0 (where L_min < 0 ≤ ε:
  the clamp t_lo ≥ min ν is always valid, and ε ≥ L_max makes D_α = 0), and
  ``D_α − (1 − α) ≤ max(0, α Q(T ≤ t_hi) − P(T ≤ t_lo))`` for ε < 0 (where ε < 0 < L_max: the
  clamp t_hi ≤ max μ is valid, and ε ≤ L_min makes the excess 0). The slope of the curve is
  ``−Q(L > ε)`` (right) and ``−Q(L ≥ ε)`` (left), bracketed by ``−Q(T > t_lo)`` and
  ``−Q(T > t_hi)`` where the bracket ends are certified (else −1 and 0).

**Certification.** The centres are rounded outwards (``mul_up`` for the upper values and slopes,
``mul_down`` of θ_lower for the lower values: D_α grows with every shift, the convex-order step
above), so every later statement is about a pair with exactly representable centres. L is
evaluated with a bound e_L on its rounding (log weights within 8 ulp of their terms' sizes,
``|t − μ|`` within ½ ulp, the log-sum-exp a share-weighted sum of the terms' errors plus
(n + 4) ulp of the result; doubled), and the bracket ends are *checked*: L(t_lo) < ε − e_L and
L(t_hi) > ε + e_L. The root is proposed in closed form (between two consecutive centres
``p ∝ A e^{−t} + B e^{t}``, so ``e^{2t} = (αC − A)/(B − αD)``), checked at t ∓ δ, and found by
bisection with the same checks where a check fails or the checked bracket is wide (L within
rounding of ε over a long stretch, as far from every centre but 0 at large θ); ε beyond the
certified range of L needs no search. The Laplace tails are closed form,
``log S(x) = log ½ − x`` (x ≥ 0) and ``log1p(−½ e^{x})`` (x < 0), with |d log S/dx| ≤ 1, so the
rounding of x = t − μ moves log S by at most its own size; each tail is rounded up or down by
its error bound. Between t_lo and t* the slope of g is ``α q(t)(1 − e^{L(t) − ε}) ≤ α · ½ ·
(ε − L(t_lo))`` (a mixture of unit-scale Laplace densities is at most ½): the "rise" bound
``g(t*) ≤ g(t_lo) + ½ α (t_hi − t_lo)(ε − L(t_lo))``, whose width term is second order, is
used where smaller than the two-ended bound.
"""

from __future__ import annotations

import math

import numpy as np

from .._numerics import (
    ULP,
    log1mexp,
    log_expm1,
    mul_down,
    mul_up,
    round_down_log,
    round_up_log,
)
from .curves import _SUBNORMAL_SLACK, PairCurve
from .group import _log_binom, _log_diff, _RealizedPair, _same_centres, _SplitCurve

__all__ = ["GroupLaplaceCurve", "LaplaceMixtureCurve", "RealizedLaplaceGroupCurve",
           "laplace_split_curves"]

_LOG_HALF = -math.log(2.0)
_BISECTIONS = 64
#: the density of a mixture of Lap(·, 1) laws is at most ½
_DENSITY = 0.5
#: relative error of one NumPy elementary function (privamp._numerics.FUNC_ULPS)
_F = 4.0


def _lse(terms: np.ndarray, term_err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise log-sum-exp of ``terms`` (rows: points, columns: components) and a bound on its
    rounding error: the softmax share of each term times its error bound, plus the shifted
    exponentials, their sum and the log, (n + 4)·F ulp of the result's size; doubled (a safety
    factor on the shares, themselves rounded)."""
    top = np.max(terms, axis=1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        safe_top = np.where(np.isfinite(top), top, 0.0)
        ex = np.exp(terms - safe_top[:, None])
        total = np.sum(ex, axis=1)
        val = np.where(np.isfinite(top), safe_top + np.log(total), top)
        share = ex / np.where(total > 0, total, 1.0)[:, None]
        spread = np.sum(np.where(share > 0, share * term_err, 0.0), axis=1)
    n = terms.shape[1]
    err = 2 * (spread + (n + 4) * _F * ULP * (1.0 + np.where(np.isfinite(val), np.abs(val), 0)))
    return val, err


def _log_sf(x: np.ndarray) -> np.ndarray:
    """log P(Lap(0, 1) > x): ``log ½ − x`` for x ≥ 0, ``log1p(−½ e^x)`` below."""
    with np.errstate(over="ignore"):
        return np.where(x >= 0, _LOG_HALF - x, np.log1p(-0.5 * np.exp(np.minimum(x, 0.0))))


class _LaplaceDoubleMixture:
    """``P = Σ w_i Lap(μ_i, 1)``, ``Q = Σ w'_j Lap(ν_j, 1)``, μ_i ≥ 0 ≥ ν_j (module doc)."""

    def __init__(self, mu, la, nu, lb, mag_a, mag_b):
        keep_a = la > -np.inf
        keep_b = lb > -np.inf
        self.mu, self.la = mu[keep_a], la[keep_a]
        self.nu, self.lb = nu[keep_b], lb[keep_b]
        # log weights: log C(n, i) within a few ulp of itself (privamp._numerics.log_comb),
        # i log q and (n − i) log(1 − q) within F + 1 ulp of their sizes, two additions: 8 ulp
        # of the sum of the sizes bounds the error (mag_* = that sum, computed by the caller)
        self.ea = 8 * ULP * (1.0 + mag_a[keep_a])
        self.eb = 8 * ULP * (1.0 + mag_b[keep_b])
        self.t_min = float(np.min(self.nu))
        self.t_max = float(np.max(self.mu))
        self.breaks = np.unique(np.concatenate([self.mu, self.nu]))
        self._memo: tuple | None = None
        self._pieces = self._closed_form_pieces()
        # L (and its error bound) at the centres, once: L_min at t_min, L_max at t_max
        self._break_loss = self.loss(self.breaks)
        self._l_min = (self._break_loss[0][0], self._break_loss[1][0])
        self._l_max = (self._break_loss[0][-1], self._break_loss[1][-1])

    # ---- the privacy loss --------------------------------------------------------------------

    @staticmethod
    def _side(lw, ew, centres, t):
        """LSE_i(lw_i − |t − c_i|) and its error bound (|t − c| within ½ ulp of |t| + |c|, the
        subtraction ½ ulp of the sum of the sizes)."""
        dist = np.abs(t[:, None] - centres[None, :])
        terms = lw[None, :] - dist
        err = ew[None, :] + ULP * (np.abs(t)[:, None] + np.abs(centres)[None, :]
                                   + np.abs(lw)[None, :] + dist)
        return _lse(terms, err)

    def loss(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """L(t) and a bound on its rounding error (finite t)."""
        va, ea = self._side(self.la, self.ea, self.mu, t)
        vb, eb = self._side(self.lb, self.eb, self.nu, t)
        val = va - vb
        return val, ea + eb + ULP * np.abs(val)

    def _below(self, t, eps):
        """Certified L(t) < ε (the exact L too)."""
        val, err = self.loss(t)
        return val < eps - err

    def _above(self, t, eps):
        """Certified L(t) > ε."""
        val, err = self.loss(t)
        return val > eps + err

    # ---- the root: closed-form proposal, certified checks, bisection --------------------------

    def _closed_form_pieces(self):
        """For each interval (s_k, s_{k+1}) between consecutive centres: log A, log B, log C,
        log D with ``2p = A e^{−t} + B e^{t}``, ``2q = C e^{−t} + D e^{t}`` on it. Only
        proposals are made from them (checked afterwards)."""
        s = self.breaks
        if s.size < 2:
            return None
        from scipy.special import logsumexp

        def coef(lw, c, left):
            out = np.full(s.size - 1, -np.inf)
            for k in range(s.size - 1):
                sel = c <= s[k] if left else c >= s[k + 1]
                if np.any(sel):
                    out[k] = logsumexp(lw[sel] + (c[sel] if left else -c[sel]))
            return out

        return (coef(self.la, self.mu, True), coef(self.la, self.mu, False),
                coef(self.lb, self.nu, True), coef(self.lb, self.nu, False))

    def _propose(self, eps: np.ndarray):
        """A proposed root t̂ ∈ [t_min, t_max] and L'(t̂) (0 where unknown)."""
        s = self.breaks
        if self._pieces is None:
            return np.full(eps.shape, s[0]), np.zeros(eps.shape)
        lvals = np.maximum.accumulate(self._break_loss[0])
        k = np.clip(np.searchsorted(lvals, eps) - 1, 0, s.size - 2)
        la_, lb_, lc_, ld_ = (p[k] for p in self._pieces)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            num = _log_sub_safe(eps + lc_, la_)  # log(αC − A)
            den = _log_sub_safe(lb_, eps + ld_)  # log(B − αD)
            t = 0.5 * (num - den)
            t = np.where(np.isfinite(t), t, 0.5 * (s[k] + s[k + 1]))
            t = np.clip(t, s[k], s[k + 1])
            slope = (np.tanh(t + 0.5 * (lb_ - la_)) - np.tanh(t + 0.5 * (ld_ - lc_)))
        slope = np.where(np.isfinite(slope), slope, 0.0)
        return t, slope

    def _bisect(self, eps: np.ndarray, below: bool) -> np.ndarray:
        """below: the largest t found on [t_min, t_max] with L(t) < ε − e_L certified (t_min if
        none: the clamp of the module doc); otherwise the smallest t with L(t) > ε + e_L
        (t_max if none)."""
        lo = np.full(eps.shape, self.t_min)
        hi = np.full(eps.shape, self.t_max)
        pred = self._below if below else self._above
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            m = pred(mid, eps)
            if below:
                lo, hi = np.where(m, mid, lo), np.where(m, hi, mid)
            else:
                lo, hi = np.where(m, lo, mid), np.where(m, mid, hi)
        if below:
            return np.where(pred(hi, eps), hi, lo)
        return np.where(pred(lo, eps), lo, hi)

    def brackets(self, eps: np.ndarray):
        """``(t_lo, t_hi, cert_lo, cert_hi, gap, above_max, below_min)`` for finite ε:
        t_min ≤ t_lo ≤ t_hi ≤ t_max; ``cert_lo``: L(t_lo) < ε is certified (else t_lo = t_min,
        the clamp); ``cert_hi`` likewise L(t_hi) > ε (else t_hi = t_max); gap ≥ ε − L(t_lo);
        ``above_max`` / ``below_min``: ε > L_max / ε < L_min certified."""
        key = eps.tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        t, slope = self._propose(eps)
        err = self.loss(t)[1]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            delta = 4 * err / np.maximum(slope, 1e-300) + 16 * ULP * (1 + np.abs(t))
        delta = np.where(np.isfinite(delta), delta, self.t_max - self.t_min)
        t_lo = np.maximum(t - delta, self.t_min)
        t_hi = np.minimum(t + delta, self.t_max)
        cert_lo = self._below(t_lo, eps)
        cert_hi = self._above(t_hi, eps)
        # a wide checked bracket is valid but loose (L within rounding of ε over a long
        # stretch, e.g. far from every centre at large θ): bisection finds the tightest ends
        # (and a failed check on one side means the proposal was off: both sides again)
        wide = (t_hi - t_lo) > 1e-6 * (1 + np.abs(t))
        # ε beyond the certified range of L: the ends are known without a search (ε > L_max
        # certified, L < ε at t_max and constant from there on: D_α = 0; ε < L_min certified,
        # L > ε at t_min and constant below: D_α = 1 − α)
        above_max = self._l_max[0] < eps - self._l_max[1]
        below_min = self._l_min[0] > eps + self._l_min[1]
        t_lo[above_max], cert_lo[above_max] = self.t_max, True
        t_hi[above_max], cert_hi[above_max] = self.t_max, False
        t_lo[below_min], cert_lo[below_min] = self.t_min, False
        t_hi[below_min], cert_hi[below_min] = self.t_min, True
        redo = (~cert_lo | ~cert_hi | wide) & ~above_max & ~below_min
        if np.any(redo):
            t_lo[redo] = self._bisect(eps[redo], below=True)
            cert_lo[redo] = self._below(t_lo[redo], eps[redo])
            t_hi[redo] = self._bisect(eps[redo], below=False)
            cert_hi[redo] = self._above(t_hi[redo], eps[redo])
        # uncertified ends are the clamps (module doc); a certified pair is ordered by the
        # monotonicity of L, an uncertified end is an end of [t_min, t_max]
        t_lo = np.where(cert_lo, t_lo, self.t_min)
        t_hi = np.where(cert_hi, t_hi, self.t_max)
        v, ev = self.loss(t_lo)
        gap = np.maximum(eps - v + ev, 0.0)
        out = (t_lo, t_hi, cert_lo, cert_hi, gap, above_max, below_min)
        self._memo = (key, out)
        return out

    @staticmethod
    def rise(eps, t_lo, t_hi, gap) -> np.ndarray:
        """log of a bound on g(t*) − g(t_lo) (module doc: density ≤ ½, 1 − e^{−x} ≤ x)."""
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            bound = _DENSITY * (t_hi - t_lo) * gap * (1 + 1e-9)
            return eps + np.log(bound)

    # ---- tails ---------------------------------------------------------------------------------

    def tails(self, t, p_side: bool, above: bool, up: bool) -> np.ndarray:
        """log of the P (or Q) mass of T > t (``above``) or T ≤ t, rounded up or down (finite
        t). Per term: x = ±(t − c) within ½ ulp of |t| + |c|, which moves log S by at most that
        (|d log S/dx| ≤ 1); log S itself within 2F ulp of 1 + |log S|; the weight's error; the
        sum ½ ulp of the sizes."""
        centres, lw, ew = (self.mu, self.la, self.ea) if p_side else (self.nu, self.lb, self.eb)
        x = t[:, None] - centres[None, :]
        if not above:
            x = -x
        ls = _log_sf(x)
        terms = lw[None, :] + ls
        err = (ew[None, :] + ULP * (np.abs(t)[:, None] + np.abs(centres)[None, :])
               + 2 * _F * ULP * (1 + np.abs(ls)) + ULP * (np.abs(lw)[None, :] + np.abs(ls)))
        val, e = _lse(terms, err)
        if up:
            return np.minimum(val + e, 0.0)
        return val - e


def _log_sub_safe(a, b):
    """log(e^a − e^b), NaN where a ≤ b (a proposal only)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(a > b, a + log1mexp(np.minimum(b - a, 0.0)), np.nan)


class LaplaceMixtureCurve(PairCurve):
    """The curve of a pair of unit-scale Laplace mixtures on a line, ``P = Σ a_i Lap(μ_i, 1)``
    against ``Q = Σ b_j Lap(ν_j, 1)`` with μ_i ≥ 0 ≥ ν_j (:class:`_LaplaceDoubleMixture`, module
    doc): certified upper and lower values on all of ℝ and slope bounds. ``_up`` gives the upper
    values and slopes, ``_lo`` the lower values. Subclasses set both, and ``orientation``."""

    lower_slack = 1e-12
    _up: _LaplaceDoubleMixture
    _lo: _LaplaceDoubleMixture

    # ---- values --------------------------------------------------------------------------------

    def _values(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        out = np.empty(eps.shape)
        out[np.isposinf(eps)] = -np.inf  # α = ∞: D = 0 (L is bounded)
        out[np.isneginf(eps)] = 0.0  # α = 0: D = 1
        fin = np.isfinite(eps)
        if np.any(fin):
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                out[fin] = self._finite(eps[fin], lower)
        out = np.minimum(out, 0.0)
        if lower:
            out = np.maximum(out, super().log_lower(eps))
        return out

    def _finite(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        mix = self._lo if lower else self._up
        t_lo, t_hi, cert_lo, cert_hi, gap, above_max, below_min = mix.brackets(eps)
        out = np.empty(eps.shape)
        pos = eps >= 0
        if lower:
            # g(t) ≤ D_α at any t (here the middle of the bracket)
            t = 0.5 * (t_lo + t_hi)
            if np.any(pos):
                e, tt = eps[pos], t[pos]
                p = mix.tails(tt, True, True, up=False)
                q = e + mix.tails(tt, False, True, up=True)
                out[pos] = _log_diff(p, q, False)
            neg = ~pos
            if np.any(neg):
                e, tt = eps[neg], t[neg]
                qv = e + mix.tails(tt, False, False, up=False)
                pv = mix.tails(tt, True, False, up=True)
                exc = _log_diff(qv, pv, False)
                out[neg] = round_down_log(np.logaddexp(log1mexp(e), exc), ulps=8)
            return out
        if np.any(pos):
            e = eps[pos]
            lo, hi = t_lo[pos], t_hi[pos]
            p = mix.tails(lo, True, True, up=True)
            crude = _log_diff(p, e + mix.tails(hi, False, True, up=False), True)
            q_same = e + mix.tails(lo, False, True, up=False)
            rise = mix.rise(e, lo, hi, gap[pos])
            near = round_up_log(np.logaddexp(_log_diff(p, q_same, True), rise), ulps=8)
            val = np.minimum(crude, near)
            out[pos] = np.where(above_max[pos], -np.inf, val)  # D_α = 0
        neg = ~pos
        if np.any(neg):
            e = eps[neg]
            exc = self._excess(mix, e, t_lo[neg], t_hi[neg], below_min[neg], gap[neg])
            out[neg] = round_up_log(np.logaddexp(log1mexp(e), exc), ulps=8)
        return out

    @staticmethod
    def _excess(mix, e, t_lo, t_hi, below_min, gap) -> np.ndarray:
        """Upper bound on log(D_α − (1 − α)) = log sup_t (α Q(T ≤ t) − P(T ≤ t)), ε < 0: the
        two-ended bound or the value at t_lo plus the rise, the smaller; −inf where ε < L_min
        is certified (L > ε at t_min, constant below: D = 1 − α)."""
        pv = mix.tails(t_lo, True, False, up=False)
        crude = _log_diff(e + mix.tails(t_hi, False, False, up=True), pv, True)
        q_same = e + mix.tails(t_lo, False, False, up=True)
        rise = mix.rise(e, t_lo, t_hi, gap)
        near = round_up_log(np.logaddexp(_log_diff(q_same, pv, True), rise), ulps=8)
        return np.where(below_min, -np.inf, np.minimum(crude, near))

    def log_upper(self, eps):
        return self._values(eps, lower=False)

    def log_lower(self, eps):
        return np.minimum(self._values(eps, lower=True), self._values(eps, lower=False))

    def log_excess(self, eps):
        """Upper bound on ``log(f(α) − (1 − α))``: for ε < 0 as in the values; for ε ≥ 0 the
        larger of that bound and log(α − 1) (the excess where ε ≥ L_max, D = 0)."""
        eps = np.asarray(eps, dtype=float)
        if eps.size == 0:
            return np.empty(0)
        out = np.empty(eps.shape)
        out[np.isneginf(eps)] = -np.inf  # D_0 − 1 = 0
        out[np.isposinf(eps)] = np.inf
        fin = np.isfinite(eps)
        if np.any(fin):
            e = eps[fin]
            t_lo, t_hi, _, _, gap, _, below_min = self._up.brackets(e)
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                exc = self._excess(self._up, e, t_lo, t_hi, below_min, gap)
                grow = round_up_log(log_expm1(np.maximum(e, 0.0)), ulps=8)
                out[fin] = np.where(e > 0, np.maximum(exc, grow), exc)
        return out

    def slope_bounds(self, eps, tau, log_lower=None):
        """``−Q(T > t_lo) ≤ −Q(L ≥ ε) ≤ −Q(L > ε) ≤ −Q(T > t_hi)`` where the ends are
        certified, or are the clamps that the sign of ε makes valid (module doc); −1 and 0
        otherwise."""
        eps = np.asarray(eps, dtype=float)
        fin = np.isfinite(eps)
        s_lo = np.where(np.isposinf(eps), 0.0, -1.0)
        s_hi = np.where(np.isneginf(eps), -1.0, 0.0)
        if np.any(fin):
            e = eps[fin]
            t_lo, t_hi, cert_lo, cert_hi, _, above_max, below_min = self._up.brackets(e)
            with np.errstate(under="ignore"):
                q_hi = np.exp(self._up.tails(t_lo, False, True, up=True))
                q_lo = np.exp(self._up.tails(t_hi, False, True, up=False))
            # the relative margins cover exp where the tails are normal floats; a subnormal
            # tail (or one below 2^-1075, which exp returns as 0) is accurate only to half a
            # subnormal spacing, absolute: _SUBNORMAL_SLACK covers it (as for the Gaussian
            # mixtures, privamp.pld.group.GaussianMixtureCurve.slope_bounds)
            lo = -np.minimum(q_hi * (1 + 1e-12) + _SUBNORMAL_SLACK, 1.0)
            hi = -np.clip(q_lo * (1 - 1e-12) - _SUBNORMAL_SLACK, 0.0, 1.0)
            # certified ε > L_max: Q(L ≥ ε) = 0; certified ε < L_min: Q(L > ε) = 1
            s_lo[fin] = np.where(above_max, 0.0,
                                 np.where(cert_lo | (e >= 0), lo, -1.0))
            s_hi[fin] = np.where(below_min, -1.0,
                                 np.where(cert_hi | (e < 0), hi, 0.0))
        return s_lo, s_hi

    @property
    def log_mass_at_infinity(self) -> float:
        return -math.inf  # Laplace mixtures: mutually absolutely continuous, the loss bounded


class GroupLaplaceCurve(_SplitCurve, LaplaceMixtureCurve):
    """The split (a removals, b insertions) of a group of K = a + b records under Poisson
    sampling (rate q) of the Laplace mechanism (θ = Δ/b): the curve of

        P = Σ_i Bin(i; a, q) Lap(iθ, 1)   against   Q = Σ_j Bin(j; b, q) Lap(−jθ, 1)

    (module doc: a dominating pair of the split, tight). Upper values and slopes use ``theta``,
    lower values ``theta_lower`` (D_α grows with θ).

    Parameters
    ----------
    theta : float
        θ = Δ/b > 0 (an upper bound on the exact value).
    rate : float
        Poisson rate q ∈ (0, 1].
    n_remove, n_add : int
        a, b ≥ 0 with a + b ≥ 1.
    theta_lower : float, optional
        A lower bound on the exact θ, in (0, theta] (default ``theta``).

    Raises
    ------
    InvalidParameterError
        For a parameter out of range.

    >>> rem = GroupLaplaceCurve(0.5, 0.01, 2, 0)
    >>> e = np.array([-0.5, 0.0, 0.5, 2.0])
    >>> bool(np.all(rem.log_lower(e) <= rem.log_upper(e))), float(rem.log_upper(e)[-1])
    (True, -inf)
    """

    def __init__(self, theta: float, rate: float, n_remove: int, n_add: int,
                 theta_lower: float | None = None):
        super().__init__(theta, rate, n_remove, n_add, theta_lower)
        self._up = self._mixture(self.theta, up=True)
        # the lower values need the inward rounding even where θ_lower = θ (3θ, 5θ, ... may
        # round up): the outward mixture serves both only where the roundings agree
        lo = self._mixture(self.theta_lower, up=False)
        self._lo = self._up if _same_centres(lo, self._up) else lo

    def _mixture(self, theta: float, up: bool) -> _LaplaceDoubleMixture:
        a, b = self.n_remove, self.n_add
        rnd = mul_up if up else mul_down
        mu = np.array([rnd(float(i), theta) for i in range(a + 1)])
        nu = -np.array([rnd(float(j), theta) for j in range(b + 1)])
        return _LaplaceDoubleMixture(mu, _log_binom(a, self.rate), nu, _log_binom(b, self.rate),
                                     self._magnitudes(a), self._magnitudes(b))

    def _magnitudes(self, n: int) -> np.ndarray:
        """Bounds on the sizes of the terms of log Bin(i; n, q): |log C(n, i)| ≤ n log 2,
        |i log q|, |(n − i) log(1 − q)|."""
        i = np.arange(n + 1, dtype=float)
        lq = abs(math.log(self.rate))
        l1q = abs(math.log1p(-self.rate)) if self.rate < 1 else 0.0
        return n * math.log(2.0) + i * lq + (n - i) * l1q

    def __repr__(self) -> str:
        low = "" if self.theta_lower == self.theta else f", theta_lower={self.theta_lower!r}"
        return (f"GroupLaplaceCurve(theta={self.theta!r}, rate={self.rate!r}, "
                f"n_remove={self.n_remove}, n_add={self.n_add}{low})")


class RealizedLaplaceGroupCurve(_RealizedPair, LaplaceMixtureCurve):
    """One realizable pair of a group of K records under WOR or WR (substitution), or Poisson
    (add/remove), of the Laplace mechanism (θ = Δ/b): the curve of

        P = Σ_j w_j Lap(j·s_P, 1)   against   Q = Σ_j w_j Lap(−j·s_Q, 1)

    in units of b, with w the (clipped) hit law; the Laplace counterpart of
    :class:`privamp.pld.group.RealizedGroupCurve` (that module's doc, "A lower end for WOR and
    WR groups": the sum query's outputs, exactly; D_α grows with every Laplace shift too, the
    convex-order step of this module's doc). ``s_P = 0`` (``s_Q = 0``) is the single component
    Lap(0, 1).
    """

    def __init__(self, log_w: np.ndarray, shift_p: float, shift_q: float, orientation: str):
        (mu, la), (nu, lb) = self._sides(log_w, shift_p, shift_q, orientation)
        # the hit law's log weights are within a few ulp; 16 + |log w| over-covers them
        self._up = self._lo = _LaplaceDoubleMixture(mu, la, -nu, lb, 16.0 + np.abs(la),
                                                    16.0 + np.abs(lb))


class _RelaxedLaplaceCurve(LaplaceMixtureCurve):
    """The curve of the Laplace relaxed double mixture of
    :class:`privamp.pld.group.RelaxedGroupProfile` (its weights as given)."""

    orientation = "symmetric"

    def __init__(self, mix: _LaplaceDoubleMixture):
        self._up = self._lo = mix


def laplace_split_curves(source, rate: float, group_size: int) -> dict[str, GroupLaplaceCurve]:
    """The K + 1 split curves (:func:`privamp.pld.group.split_names`) of a Laplace mechanism or
    profile under Poisson sampling at ``rate``. θ of a mechanism is Δ/b rounded up; its lower
    values use Δ/b rounded down (``theta_lower``: the exact θ lies between)."""
    from .group import _split_of, split_names

    theta = source.theta
    lower = min(getattr(source, "theta_lower", theta), theta)
    curves = {}
    for name in split_names(group_size):
        a, b = _split_of(name, group_size)
        curves[name] = GroupLaplaceCurve(theta, rate, a, b, theta_lower=lower)
    return curves
