"""The exact Rényi DP of the Poisson-subsampled Gaussian mechanism under add/remove, at every
order (Mironov, Talwar, Zhang 2019, arXiv:1908.10530, §3): :func:`poisson_gaussian_rdp`.

Integer orders are a sum of positive terms (the W-9 form with the Gaussian's cumulants);
fractional orders two alternating series split at the point where the likelihood ratio crosses
1 − q, truncated with certified tails. Every term carries a bound on its rounding error, so the
result is an :class:`~privamp.rdp.mechanisms.ExactRdpCurve` whose ``epsilons`` are upper bounds
and ``lower_epsilons`` lower bounds. :func:`privamp.rdp.subsampled.subsampled_rdp` uses it for a
Gaussian base under Poisson sampling.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _special
from .._numerics import ULP, div_up, log_comb
from .._validation import check_real
from ..relations import NeighbouringRelation
from ._kernels import _TERM_ULPS, _check_orders, _check_rate, _mixture_eps, _term_error
from .curve import DEFAULT_ORDERS, RdpCurve
from .mechanisms import ExactRdpCurve, floor_positive

__all__ = ["poisson_gaussian_rdp"]

_ADD_REMOVE = NeighbouringRelation.ADD_REMOVE


def poisson_gaussian_rdp(noise_multiplier: float, sampling_rate: float,
                         orders: Any = DEFAULT_ORDERS) -> ExactRdpCurve:
    """Exact RDP of the Poisson-subsampled Gaussian mechanism under add/remove, at every order.

    The mechanism adds N(0, σ²) noise, σ = ``noise_multiplier`` × Δ, to a query of sensitivity Δ
    evaluated on a Poisson subsample with rate q. The worst pair is μ = (1−q)N(0,σ²) + qN(Δ,σ²)
    (dataset with the record) against μ₀ = N(0,σ²) (without it), and D_α(μ ‖ μ₀) ≥ D_α(μ₀ ‖ μ)
    for every α ≥ 1 (Mironov, Talwar, Zhang 2019, arXiv:1908.10530, §3: A_α ≥ B_α), so the
    "remove" direction computed here dominates and covers both directions of add/remove; the
    tests also check the other direction against mpmath integrals. With θ = Δ/σ and
    ``A_α = E_{μ₀}[(μ/μ₀)^α]``:

    * integer α (Mironov et al. 2019, §3; equal to W-20 without the factor 3)::

        A_α − 1 = Σ_{k=2}^{α} C(α,k) q^k (1−q)^{α−k} expm1((k² − k)θ²/2)

      (all terms positive: no cancellation however small q is);

    * fractional α (Mironov et al. 2019, §3.3): split the integral at
      z₀ = log((1−q)/q)/θ² + ½ where q·μ₁/μ₀ = 1 − q, and expand the binomial on each side::

        A_α = Σ_{i≥0} C(α,i) (1−q)^{α−i} q^i e^{(i²−i)θ²/2} Φ(θ(z₀ − i))
            + Σ_{i≥0} C(α,i) (1−q)^{i} q^{α−i} e^{((α−i)²−(α−i))θ²/2} Φ(θ(α − i − z₀)).

      The i = 0, 1 terms of the first series equal ``(1−q)^{α−1}(1 + (α−1)q) − (1−q)^α Φ(−θz₀)
      − αq(1−q)^{α−1} Φ(θ(1 − z₀))``, and ``(1−q)^{α−1}(1 + (α−1)q) − 1 = expm1(f)`` with
      ``f = c log1p(−q) + log1p(cq)`` (c = α − 1) evaluated by its power series
      ``Σ_{k≥2} ((−1)^{k+1}(cq)^k − c q^k)/k`` for q, cq < ¼ (the k = 1 terms cancel exactly),
      so ``A_α − 1`` is formed without cancelling against 1. (What remains is a cancellation
      of relative size about 1/θ² between that term and the i = 2 term, covered by the error
      bound: the bracket is ~1e-9 wide at σ = 50.)
      Truncation: the ratio of consecutive terms of each series is
      ``|(α−i)/(i+1)| · g(x+θ)/g(x)`` with ``g(x) = Φ(−x)e^{x²/2}`` decreasing, hence below 1 for
      i > (α−1)/2, and the signs alternate for i > ⌈α⌉. Each tail is therefore bounded by its
      first omitted term and has its sign: the upper value adds the omitted term when positive.
      (The split point z₀ is itself rounded; that perturbs the ratio by a factor e^{±1e-16·z₀},
      which keeps it below 1 for every i < 1e15, far beyond the truncation point.) A series
      stops once both first omitted terms are within 1e-9 of the sum A_α − 1, so the bracket
      [``lower_epsilons``, ``epsilons``] is about 1e-9 relative wide (ε = log A/(α − 1) moves
      by at most the relative change of A − 1); the truncation only ever widens it, the
      bounds stay certified at any tolerance. (It was 1e-11 until the RDP accountant was made
      faster than Opacus's: at q = 0.01 and orders near 1.3 the terms fall like i^{−3.3}, so
      the tighter stop took four times the terms and a third pass.) If the series cannot be
      certified, the CGF chord between the neighbouring integer orders is used.

    ε(α) = log1p(A_α − 1)/(α − 1); order ∞ gives ∞ (q > 0). The sum is formed in log space from
    log_comb binomials (the generalized binomial via ``|C(α,i)| = |sin πα| /
    (π i C(i−1, α))`` for i > α + 1), with a bound on each term's rounding error, giving an
    :class:`ExactRdpCurve` whose ``epsilons`` are upper bounds and ``lower_epsilons`` lower
    bounds. Accurate at q down to 1e-7 and below, orders up to 1e4 and beyond, σ from 0.3 to 50
    (checked against mpmath integrals in the tests).

    Parameters
    ----------
    noise_multiplier : float
        σ/Δ > 0.
    sampling_rate : float
        q ∈ [0, 1] (q = 1: the Gaussian's own curve; q = 0: zero).
    orders : array_like
        Strictly increasing orders in (1, ∞].

    >>> c = poisson_gaussian_rdp(2.0, 0.1, [2.0, 2.5, 20.0])
    >>> round(float(c.epsilons[2]), 12)  # catalogue W-20 "exact" value at α = 20
    0.188313613447
    """
    nm = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
    q = _check_rate(sampling_rate)
    o = _check_orders(orders)
    theta = div_up(1.0, nm)
    label = f"exact Poisson Gaussian (noise multiplier {nm:g}, q={q:g})"
    return _poisson_gaussian(theta, q, o, label)


def _poisson_gaussian(theta: float, q: float, o: np.ndarray, label: str) -> ExactRdpCurve:
    if q == 0.0 or theta == 0.0:
        zero = np.zeros(o.shape)
        return ExactRdpCurve(o, zero, zero, relation=_ADD_REMOVE, label=label)
    if q == 1.0:
        return _gaussian_own(theta, o, label)
    up = np.full(o.shape, math.inf)
    lo = np.full(o.shape, math.inf)
    finite = np.isfinite(o)
    integer = finite & (o == np.floor(o))
    if np.any(integer):
        up[integer], lo[integer] = _gaussian_integer(theta, q, o[integer])
    fractional = np.flatnonzero(finite & ~integer)
    if fractional.size:
        up[fractional], lo[fractional] = _fractional(theta, q, o[fractional])
        failed = fractional[np.isnan(up[fractional])]
        if failed.size:
            # safety net (never needed in the tested range): the CGF chord between the exact
            # values at the neighbouring integers bounds ε from above; ε(⌊α⌋) from below
            a = o[failed]
            ints = np.unique(np.concatenate([np.floor(a), np.ceil(a)]))
            ints = ints[ints >= 2]
            at_up, at_lo = _gaussian_integer(theta, q, ints)
            chord = RdpCurve(np.append(ints, math.inf), np.append(at_up, math.inf))
            up[failed] = chord.at(a).epsilons
            floor_idx = np.minimum(np.searchsorted(ints, np.floor(a)), ints.size - 1)
            lo[failed] = np.where(a >= 2, at_lo[floor_idx], 0.0)
    return ExactRdpCurve(o, up, np.minimum(np.maximum(lo, 0.0), up), relation=_ADD_REMOVE,
                         label=label)


def _gaussian_integer(theta: float, q: float, alphas: np.ndarray):
    """(upper, lower) exact RDP at integer orders: W-9's form with K(j) = (j² − j)θ²/2."""
    jj = np.arange(0.0, alphas.max() + 1.0)
    return _mixture_eps(alphas, q, (jj * jj - jj) * (theta * theta) / 2.0)


def _gaussian_own(theta: float, o: np.ndarray, label: str) -> ExactRdpCurve:
    eps = o * theta * theta / 2.0
    return ExactRdpCurve(o, eps * (1 + 4 * ULP), eps * (1 - 4 * ULP), relation=_ADD_REMOVE,
                         label=label)


def _log_abs_binom(a: np.ndarray, i: np.ndarray):
    """``log|C(a, i)|`` and the sign of C(a, i) for real a > 0 (not integers) and integers
    i ≥ 0, broadcast against each other.

    i ≤ ⌊a⌋: ``log_comb(a, i)``; i = ⌈a⌉: one step of the recurrence; i > ⌈a⌉: reflection,
    ``|C(a,i)| = |sin πa| / (π i C(i−1, a))`` (from Γ(x)Γ(1−x) = π/sin πx), sign (−1)^{i−⌈a⌉}.
    """
    a, i = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(i, dtype=float))
    fl = np.floor(a)
    ce = fl + 1.0
    out = np.empty(a.shape)
    sign = np.ones(a.shape)
    low = i <= fl
    mid = i == ce
    hi = i > ce
    am = a[mid]
    ah, ih = a[hi], i[hi]
    # one log_comb call for the three cases (it works element by element)
    nl, nm = int(low.sum()), int(mid.sum())
    lc = log_comb(np.concatenate([a[low], am, ih - 1.0]),
                  np.concatenate([i[low], np.floor(am), ah]))
    out[low] = lc[:nl]
    out[mid] = lc[nl:nl + nm] + np.log(am - np.floor(am)) - np.log(np.floor(am) + 1)
    log_sin = np.log(np.abs(np.sin(np.pi * (ah - np.round(ah)))))
    out[hi] = log_sin - math.log(math.pi) - np.log(ih) - lc[nl + nm:]
    sign[hi] = np.where((ih - ce[hi]) % 2 == 1, -1.0, 1.0)
    return out, sign


def _log1p_f(c: np.ndarray, q: float, lq1: float):
    """``f = c·log1p(−q) + log1p(cq)`` (≤ 0) and an absolute error bound, per c = α − 1.

    For q < ¼ and cq < ¼ the power series ``Σ_{k≥2} (q^k/k)((−1)^{k+1}c^k − c)`` (the k = 1 terms
    cancel exactly; 88 terms leave < 4^{-88}); otherwise the direct form, whose cancellation is
    then at most a factor 16.
    """
    k = np.arange(2.0, 90.0)[None, :]
    cc = c[:, None]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # ((−1)^{k+1}(cq)^k − c q^k)/k: both parts stay in range (cq < ¼, q < ¼)
        terms = ((-1.0) ** (k + 1) * (cc * q) ** k - cc * q ** k) / k
        series = np.sum(terms[:, ::-1], axis=1)  # smallest first
        series_err = 16 * ULP * np.sum(np.abs(terms), axis=1)
    direct = c * lq1 + np.log1p(c * q)
    direct_err = 16 * ULP * (np.abs(c * lq1) + np.abs(np.log1p(c * q)))
    use_series = (q < 0.25) & (c * q < 0.25)
    return (np.where(use_series, series, direct),
            np.where(use_series, series_err, direct_err))


def _hazard(x: np.ndarray) -> np.ndarray:
    """A bound on (log Φ)'(x) = φ(x)/Φ(x): 1 + |x| for x < 0 (Mills ratio), 2φ(x) + 1e-300
    for x ≥ 0 (Φ(x) ≥ ½)."""
    with np.errstate(under="ignore"):
        return np.where(x < 0, 1.0 + np.abs(x), 0.8 * np.exp(-0.5 * np.minimum(x * x, 1e6))
                        + 1e-300)


#: Most terms × orders :func:`_fractional` doubles its series to (after a first pass of
#: ⌈max α⌉ + 64 terms). Series that need more — they converge slowly at tiny θ = Δ/σ (σ ≥
#: 1e10) — are left to the chord between integer orders, which bounds them; without this cap
#: they took minutes and gigabytes.
_SERIES_CELLS = 1 << 21


def _fractional(theta: float, q: float, a: np.ndarray, rtol: float = 1e-9,
                max_terms: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) bounds on the exact RDP at non-integer orders ``a`` (0 < q < 1), see
    :func:`poisson_gaussian_rdp`; NaN where the series could not be certified."""
    lq = math.log(q)
    lq1 = math.log1p(-q)
    x0 = (lq1 - lq) / theta + theta / 2.0  # θ z₀, z₀ = log((1 − q)/q)/θ² + ½
    th2 = theta * theta / 2.0
    c = a - 1.0
    f, f_err = _log1p_f(c, q, lq1)
    h = np.expm1(f)  # (1−q)^{α−1}(1 + (α−1)q) − 1 < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        h_rel = (np.abs(h) * 8 * ULP + f_err * (1.0 + np.abs(h))) / np.abs(h)
        neg = np.stack([
            np.log(-h),  # NaN unless h < 0: such orders are left uncertified (NaN) below
            a * lq1 + _special.log_ndtr(-x0),
            np.log(a) + lq + c * lq1 + _special.log_ndtr(theta - x0),
        ], axis=1)
    neg_err = np.stack([
        np.log1p(h_rel),
        _term_error(a * lq1, neg[:, 1]),
        _term_error(lq, c * lq1, neg[:, 2], x0),
    ], axis=1)
    up = np.full(a.shape, math.nan)
    lo = np.full(a.shape, math.nan)
    pending = np.arange(a.size)
    # the first pass: up to ⌈max α⌉ + 192 terms, enough for q ≤ 0.01 and orders ≥ 1.1 at
    # σ = 1 (every pass costs about as much in fixed overhead as 200 columns)
    n_terms = first = int(math.ceil(float(a.max()))) + 192
    cols = None  # the pending rows' columns (t1, t2, sign, e1, e2) computed so far
    while pending.size:
        if n_terms > first and pending.size * (n_terms + 2) > _SERIES_CELLS:
            break  # left uncertified (NaN): the caller bounds these orders by a chord
        # columns 0 .. n_terms + 1 (the last: the first omitted term); a doubling computes
        # only the new columns
        have = 0 if cols is None else cols[0].shape[1]
        new = _series_columns(theta, lq, lq1, x0, th2, a[pending][:, None], have, n_terms + 2)
        cols = new if cols is None else tuple(
            np.concatenate([old, part], axis=1) for old, part in zip(cols, new, strict=True))
        t1, t2, sg, e1, e2 = cols
        logs = np.concatenate([neg[pending], t1[:, 2:-1], t2[:, :-1]], axis=1)
        signs = np.concatenate([np.full((pending.size, 3), -1.0), sg[:, 2:-1], sg[:, :-1]],
                               axis=1)
        errs = np.concatenate([neg_err[pending], e1[:, 2:-1], e2[:, :-1]], axis=1)
        scale = np.max(logs, axis=1)
        with np.errstate(over="ignore", invalid="ignore"):
            mags = np.exp(logs - scale[:, None])
            # correctly rounded sums (math.fsum): the summation error is 1 ulp of the result
            total = np.array([math.fsum(row) for row in (signs * mags).tolist()])
            om1 = sg[:, -1] * np.exp(t1[:, -1] - scale)
            om2 = sg[:, -1] * np.exp(t2[:, -1] - scale)
        broken = ~np.all(np.isfinite(logs) | np.isneginf(logs), axis=1) | ~np.isfinite(total)
        done = ((np.maximum(np.abs(om1), np.abs(om2)) <= rtol * np.abs(total)) & (total > 0)) \
            | (n_terms >= max_terms) | broken
        if np.any(done):
            mags_d = mags[done]
            # Σ |term|·(relative error bound), itself inflated for its own rounding, plus the
            # rounding of the correctly rounded signed sum
            rounding = np.sum(mags_d * np.expm1(errs[done]), axis=1) * (1 + logs.shape[1] * ULP) \
                + 2 * ULP * np.abs(total[done])
            # alternating tails with decreasing terms: each lies between 0 and its first term
            upper = total[done] + rounding + np.maximum(om1[done], 0) + np.maximum(om2[done], 0)
            lower = total[done] - rounding + np.minimum(om1[done], 0) + np.minimum(om2[done], 0)
            sc = scale[done]
            cd = c[pending[done]]
            ok = np.isfinite(upper) & (upper > 0) & ~broken[done]
            with np.errstate(divide="ignore", invalid="ignore"):
                e_up = np.logaddexp(0.0, np.log(upper) + sc) / cd * (1 + 8 * ULP)
                e_lo = np.where(lower > 0, np.logaddexp(0.0, np.log(lower) + sc) / cd
                                * (1 - 8 * ULP), 0.0)
            idx = pending[done]
            e_up = floor_positive(e_up, True)  # A_α > 1 for q > 0, θ > 0
            up[idx] = np.where(ok, e_up, math.nan)
            lo[idx] = np.where(ok, np.maximum(e_lo, 0.0), math.nan)
        rest = ~done
        n_terms = _next_length(n_terms, np.maximum(np.abs(om1), np.abs(om2))[rest],
                               np.abs(total[rest]) * rtol, a[pending[rest]], int(rest.sum()))
        pending = pending[rest]
        cols = tuple(c[rest] for c in cols)
    return up, lo


def _next_length(n_terms: int, omitted: np.ndarray, target: np.ndarray, orders: np.ndarray,
                 rows: int) -> int:
    """The series length of :func:`_fractional`'s next pass: at least double, and as far as
    the terms' decay says the remaining rows need.

    For large i both series' terms fall like i^{-(α+2)} (C(α, i) ~ i^{-(α+1)}, and the Gaussian
    tail factor, q^i e^{(i²−i)θ²/2} Φ(x₀ − θi) ≈ (1 − q)^i/q^i · q^i/(θi) · const, adds 1/i), so the
    first omitted term reaches ``target`` (rtol × the sum) near n·(omitted/target)^{1/(α+2)}.
    The jump assumes the slower decay i^{-(α+1)} (the asymptotic regime starts late) and adds
    10 %; a short pass only costs another one. This changes where the passes stop, never when a
    row is accepted: the acceptance test of :func:`_fractional` is unchanged. The length stays
    within :data:`_SERIES_CELLS` when doubling would, and is at most 8 × the current one.
    """
    doubled = 2 * n_terms
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = omitted / target
        grow = np.where(np.isfinite(ratio) & (ratio > 1.0),
                        1.1 * ratio ** (1.0 / (orders + 1.0)), 2.0)
    factor = float(np.clip(np.max(grow), 2.0, 8.0)) if grow.size else 2.0
    want = int(math.ceil(n_terms * factor))
    if rows * (want + 2) > _SERIES_CELLS and rows * (doubled + 2) <= _SERIES_CELLS:
        want = max(doubled, _SERIES_CELLS // rows - 2)
    return want


def _series_columns(theta: float, lq: float, lq1: float, x0: float, th2: float,
                    aa: np.ndarray, start: int, stop: int):
    """Columns i = start .. stop − 1 of the two series of :func:`_fractional` for the orders
    ``aa`` (a column vector): the log-terms t1, t2, the sign of C(α, i) and the bounds e1, e2
    on the terms' rounding errors."""
    i = np.arange(start, stop, dtype=float)[None, :]
    # by the ratio recurrence between anchors, for the first pass as for the columns a
    # doubling adds (the element-wise gamma functions of every column were most of the time)
    lc, sg, binom_err = _log_abs_binom_run(aa, i)
    m = aa - i
    arg1 = x0 - theta * i  # the same for every order: one row
    arg2 = theta * m - x0
    with np.errstate(over="ignore", invalid="ignore"):
        t1 = lc + i * lq + m * lq1 + (i * i - i) * th2 + _special.log_ndtr(arg1)
        t2 = lc + i * lq1 + m * lq + (m * m - m) * th2 + _special.log_ndtr(arg2)
    # rounding of each log-term, plus the effect of the argument's rounding on log Φ
    e1 = _term_error(lc, i * lq, m * lq1, (i * i - i) * th2, t1) + \
        _TERM_ULPS * ULP * _hazard(arg1) * (1 + abs(x0) + theta * i) + binom_err
    e2 = _term_error(lc, i * lq1, m * lq, (m * m - m) * th2, t2) + \
        _TERM_ULPS * ULP * _hazard(arg2) * (1 + abs(x0) + theta * np.abs(m)) + binom_err
    return t1, t2, sg, e1, e2


#: columns between two binomials taken from :func:`_log_abs_binom` in :func:`_log_abs_binom_run`
_ANCHOR = 32


def _log_abs_binom_run(aa: np.ndarray, i: np.ndarray):
    """:func:`_log_abs_binom` on a run of consecutive integers ``i`` (a row) for the orders
    ``aa`` (a column), and a bound on the absolute error it adds to that function's own.

    Every ``_ANCHOR``-th column comes from :func:`_log_abs_binom` (``log_comb``, whose
    element-wise gamma functions are what the doubling passes of :func:`_fractional` spent
    their time in); the columns after it from the recurrence C(α, k + 1) = C(α, k)(α − k)/(k + 1),
    i.e. the anchor plus a running sum of r_k = log(|α − k|/(k + 1)) (α is not an integer, so
    α − k ≠ 0). Error bound, with u = ULP (the machine epsilon, twice the unit roundoff): each
    r_k is within 4u(1 + |r_k|) (the subtraction and division are relative errors ≤ u/2 each,
    which move the log by ≤ u; the log itself is within 2 ulp of |r_k|), each step of the running
    sum c adds ≤ u|c_m|, and the final addition to the anchor ≤ u|log C|. The anchor's own
    error is that of :func:`_log_abs_binom` (0 at column 0, where log C(α, 0) = 0), which the
    caller's per-term allowance covers as it did when every column came from that function
    (:func:`_term_error` counts |log C|). The sign is that of
    :func:`_log_abs_binom`: (−1)^{i−⌈α⌉} beyond ⌈α⌉, else +.
    """
    n = i.shape[1]
    blocks = -(-n // _ANCHOR)
    width = blocks * _ANCHOR
    ii = np.arange(width, dtype=float)[None, :] + i[0, 0]
    anchors, _ = _log_abs_binom(aa, ii[:, ::_ANCHOR])  # (orders, blocks)
    with np.errstate(divide="ignore"):
        r = np.log(np.abs(aa - ii) / (ii + 1.0)).reshape(aa.shape[0], blocks, _ANCHOR)
    c = np.cumsum(r, axis=2)  # sequential sums within each block
    run = np.zeros(r.shape)
    run[:, :, 1:] = c[:, :, :-1]  # Σ_{k = anchor}^{i − 1} r_k
    err = np.zeros(r.shape)
    err[:, :, 1:] = (4.0 * np.cumsum(1.0 + np.abs(r), axis=2)
                     + np.cumsum(np.abs(c), axis=2))[:, :, :-1]
    lc = anchors[:, :, None] + run
    err = (err + np.abs(lc)) * ULP
    lc, err = lc.reshape(aa.shape[0], width)[:, :n], err.reshape(aa.shape[0], width)[:, :n]
    ce = np.floor(aa) + 1.0
    sign = np.where((i > ce) & ((i - ce) % 2 == 1), -1.0, 1.0)
    return lc, sign, err
