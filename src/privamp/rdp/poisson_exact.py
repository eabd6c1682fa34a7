"""The exact Rényi DP of the Poisson-subsampled Laplace mechanism and randomized response under
add/remove: :func:`poisson_exact_rdp` (issue 20, item 3).

Why the value is exact (the proof note)
---------------------------------------
Let M be the base mechanism and x' = x ∪ {v} (add/remove). Write J for the Poisson subsample of
x (each record with probability q), ``Q_J = M(J)`` and ``P_J = M(J ∪ {v})``. Then

    M∘S(x) = Σ_J Pr(J) Q_J,        M∘S(x') = Σ_J Pr(J) ((1−q) Q_J + q P_J),

and ``e^{(α−1) D_α}`` is jointly convex, so both directions of the neighbouring relation are
bounded by the worst J:

* remove (x' against x):  D_α((1−q)Q_J + qP_J ‖ Q_J),
* add    (x against x'):  D_α(Q_J ‖ (1−q)Q_J + qP_J).

(Zhu & Wang 2019, ICML, §3, the "two directions" of Poisson RDP; Wang's slides W-21.) For the
Gaussian, Mironov, Talwar, Zhang 2019 (arXiv:1908.10530, §3) prove that the first is the
larger, which is what :mod:`privamp.rdp.poisson_gaussian` uses. Here both are computed and the
larger is taken, so no such comparison has to be proved (the tests find the remove direction
larger on every grid point, as the catalogue's W-20 remark says).

Which (Q_J, P_J) is worst. Zhu, Dong, Wang 2022 (AISTATS, "Optimal accounting of differential
privacy via characteristic function", Theorem 11, Poisson subsampling of dominating pairs):
if (P, Q) dominates every pair (P_J, Q_J) of M in hockey-stick divergence H_γ for every
γ ≥ 0, then ((1−q)Q + qP, Q) dominates the remove direction and (Q, (1−q)Q + qP) — written
(P, (1−q)P + qQ) there, the same pair reflected — the add direction. Domination in H_γ for
all γ ≥ 0 implies domination in every Rényi divergence: with L = dP/dQ (E_Q[L] = 1 for these
mutually absolutely continuous pairs) and f convex and twice differentiable, Taylor's formula
with integral remainder gives ``E_Q[f(L)] = f(1) + ∫_1^∞ f''(γ) E_Q[(L−γ)_+] dγ +
∫_0^1 f''(γ) E_Q[(γ−L)_+] dγ`` and ``E_Q[(γ−L)_+] = γ − 1 + E_Q[(L−γ)_+]``, so E_Q[f(L)] is a
non-decreasing function of the curve γ ↦ H_γ = E_Q[(L−γ)_+]; f(L) = L^α gives D_α.

* **Laplace** (scalar query, sensitivity Δ, scale b, θ = Δ/b): every pair of neighbouring
  inputs gives (Lap(d, b), Lap(0, b)) up to a translation and a reflection, |d| ≤ Δ, and
  (Lap(Δ, b), Lap(0, b)) dominates them all (its hockey-stick divergence is non-decreasing in
  |d|; Balle, Barthe, Gaboardi 2018, Theorem 3 is the profile privamp uses for it).
* **Randomized response** R_p and the randomized membership mechanism: the input bit changes
  at most once, so every pair is (R_p(1), R_p(0)), itself or identical outputs.

The dominating pair is *attained*: for Laplace, the query f(S) = Δ·Σ_{s∈S} s on records in
{0, 1}, x = all zeros and v = 1 give f(J) = 0 and f(J ∪ {v}) = Δ for every J, so M∘S(x) =
Lap(0, b) and M∘S(x') = (1−q)Lap(0, b) + qLap(Δ, b) exactly; for randomized response the bit
"some record of the subsample is 1" (randomized membership: "v is in the subsample") does the
same. Hence the worst case over neighbouring datasets **equals** the larger of the two
divergences — the value is exact, not just an upper bound.

Under **substitution** with Poisson sampling the pair is different: replacing v by v' gives
((1−q)R_J + qP_J, (1−q)R_J + qP'_J) with three distributions, not covered here (refused, as
before: :func:`~privamp.rdp.subsampled.subsampled_rdp` analyses Poisson under add/remove).

How each direction is evaluated (certified: ``epsilons`` rounded up, ``lower_epsilons`` down)
-------------------------------------------------------------------------------------------------
With L = dP/dQ and x = q(L − 1) (so E_Q[x] = 0), A_α = E_Q[(1 + x)^α] (remove) and
B_α = E_Q[(1 + x)^{1−α}] (add), D = log(A or B)/(α − 1), and for β ∈ {α, 1 − α}

    E_Q[(1 + x)^β] − 1 = E_Q[φ_β(x)],   φ_β(x) = (1+x)^β − 1 − βx ≥ 0,

a sum of non-negative terms however small q is.

* Remove direction, **integer** orders: the binomial sum of W-9 / W-20 without the factor 3,
  ``A_α − 1 = Σ_{j=2}^{α} C(α,j) q^j (1−q)^{α−j} expm1((j−1)ε(j))`` with the base mechanism's
  exact RDP ε(j) (all terms positive; evaluated by :func:`~privamp.rdp._kernels._mixture_eps`,
  once with the base curve's upper values, rounded up, once with its lower values, rounded
  down). This is the equality of catalogue W-20's remark.
* Everything else (the remove direction at non-integer orders, the add direction at every
  order) by a **certified quadrature**. Randomized response has two outputs: E_Q is a sum of two
  atoms, evaluated directly. Laplace, in units t = z/b: L = e^{−θ} on t < 0 (Q-mass ½),
  L = e^{θ} on t > θ (Q-mass e^{−θ}/2) and L = e^{2t−θ} on [0, θ] (density e^{−t}/2). On
  [0, θ/2] the integrand e^{−t} φ_β(x(t)) is non-increasing (both factors are: x(t) < 0 there
  and φ_β decreases on x < 0), so each cell lies between its right and left values; on
  [θ/2, θ], φ_β(x(t)) is non-decreasing and e^{−t} decreasing, so each cell lies between
  e^{−t_{k+1}} φ(x(t_k)) and e^{−t_k} φ(x(t_{k+1})). Summing the cells brackets the integral;
  each value carries a bound on its rounding error. The bracket is tight at small |β|θ and
  loose at large orders, where the next item takes over.
* Safe refinements (each is a valid bound on the exact value): at non-integer orders the chord
  of the CGF (α−1)D_α between the neighbouring integer upper values (convexity, as in
  :meth:`RdpCurve.at`) and, below, the value at ⌊α⌋ (D_α is non-decreasing in α); the add
  direction at most its order-∞ value ``−log(1 − q(1 − e^{−θ}))``; both at most the base
  curve ε(α) (joint convexity) and at most Zhu & Wang's factor-3 bound (W-20, which bounds
  both directions, slide W-21; at order 2 it has no factor 3 and equals the remove direction,
  so there the value is tight whatever the quadrature gives), chords of it in between; upper
  values made non-increasing from the right and lower values non-decreasing from the left
  (monotonicity in α).
* Order ∞: ``log(1 + q(e^{θ} − 1))`` (remove direction; the add direction's
  ``−log(1 − q(1 − e^{−θ}))`` is never larger: ``(1 + q(a−1))(a − q(a−1)) = a + q(1−q)(a−1)²
  ≥ a`` with a = e^θ). Balle, Barthe, Gaboardi 2018, Theorem 8 at δ = 0 says the same.

So the curve is exact up to rounding at integer orders (its ``lower_epsilons`` and
``epsilons`` agree to ~1e-12 relative), and at other orders a certified bracket whose width is
that of the quadrature or the chord (reported by the ``lower_epsilons``). θ above 600 (b below
Δ/600) skips the quadrature (it would overflow) and uses the chord and caps alone.

>>> from privamp import LaplaceMechanism
>>> c = poisson_exact_rdp(LaplaceMechanism(scale=0.5), 0.05, [3.0, 10.0, 30.0])
>>> [round(float(e), 10) for e in c.epsilons]  # catalogue W-9 / W-20 "exact" values
[0.0157427934, 0.0763883114, 0.1963302891]
>>> c.bound
'exact'
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import ULP, _silent, down_ulps, expm1_minus_x, up_ulps
from ..mechanisms.gaussian import GaussianMechanism, GaussianProfile
from ..mechanisms.laplace import LaplaceMechanism, LaplaceProfile
from ..mechanisms.randomized_response import (
    RandomizedMembershipMechanism,
    RandomizedResponse,
    RandomizedResponseProfile,
)
from ..relations import NeighbouringRelation
from ._kernels import _check_orders, _check_rate, _mixture_eps
from .curve import DEFAULT_ORDERS, RdpCurve
from .mechanisms import ExactRdpCurve, rdp_curve

__all__ = ["EXACT_POISSON_TYPES", "has_exact_poisson", "poisson_exact_rdp"]

_ADD_REMOVE = NeighbouringRelation.ADD_REMOVE

#: cells of the Laplace quadrature on [0, θ] (even: θ/2 is a cell boundary)
_CELLS = 8192
#: cells of the second (remainder) route: its bracket is first order in the remainder only
_QUAD_CELLS = 2048
#: largest θ (Laplace) or log-odds (randomized response) the quadrature runs at
_MAX_THETA = 600.0


@dataclass(frozen=True)
class _Pair:
    """The dominating pair of a base mechanism: ``kind`` "laplace" (``theta`` = Δ/b) or "rr"
    (``theta`` = L = log(p_max/p_min), ``w`` = 2 p_max − 1)."""

    kind: str
    theta: float
    w: float = 0.0


@functools.singledispatch
def _pair(base: Any) -> _Pair | None:
    """The pair whose Poisson subsampling is exact for ``base``, else None."""
    return None


@_pair.register(LaplaceMechanism)
@_pair.register(LaplaceProfile)
def _(base) -> _Pair:
    return _Pair("laplace", float(base.theta))


@_pair.register(RandomizedResponse)
@_pair.register(RandomizedMembershipMechanism)
@_pair.register(RandomizedResponseProfile)
def _(base) -> _Pair:
    p = float(base.p)
    pmax = max(p, 1.0 - p)
    w = abs(2.0 * p - 1.0)
    log_odds = math.inf if pmax == 1.0 else math.log1p(w / (1.0 - pmax))
    return _Pair("rr", log_odds, w)


#: Base types with an exact Poisson-subsampled RDP under add/remove (Gaussian: MTZ 2019).
EXACT_POISSON_TYPES = (GaussianMechanism, GaussianProfile, LaplaceMechanism, LaplaceProfile,
                       RandomizedResponse, RandomizedMembershipMechanism,
                       RandomizedResponseProfile)


def has_exact_poisson(base: Any) -> bool:
    """Whether :func:`poisson_exact_rdp` knows the exact curve of ``base`` (not a bare curve:
    exactness needs the pair that attains it)."""
    return isinstance(base, EXACT_POISSON_TYPES)


def poisson_exact_rdp(base: Any, sampling_rate: float, orders: Any = DEFAULT_ORDERS
                      ) -> ExactRdpCurve:
    """Exact RDP of ``base`` on a Poisson subsample (rate q) under add/remove.

    See the module docstring for the proof that the value is exact and how it is certified.

    Parameters
    ----------
    base : LaplaceMechanism, RandomizedResponse, RandomizedMembershipMechanism, their profiles,
        or GaussianMechanism / GaussianProfile (:func:`~privamp.rdp.poisson_gaussian_rdp`)
        Stated under add/remove (randomized response holds for every relation).
    sampling_rate : float
        q ∈ [0, 1] (q = 0: zero; q = 1: the base curve).
    orders : array_like
        Strictly increasing orders in (1, ∞] (finite ones up to 1e6).

    Returns
    -------
    ExactRdpCurve
        ``epsilons`` upper bounds (exact at integer orders up to rounding), ``lower_epsilons``
        lower bounds on the worst case.

    Raises
    ------
    UnsupportedCombinationError
        A base without a known exact curve, or stated under substitution.
    """
    from ..errors import UnsupportedCombinationError
    from .poisson_gaussian import _poisson_gaussian
    from .subsampled import _require_relation

    q = _check_rate(sampling_rate)
    o = _check_orders(orders)
    if not has_exact_poisson(base):
        raise UnsupportedCombinationError(
            f"no exact Poisson-subsampled RDP for {base!r}: it is known for the Gaussian, "
            "Laplace, randomized response and randomized membership mechanisms (whose "
            "worst-case pair is attained); use method 'zhu-wang' (upper) or 'lower'")
    if not isinstance(base, RandomizedResponse | RandomizedMembershipMechanism |
                      RandomizedResponseProfile):
        _require_relation(base, _ADD_REMOVE, "the exact Poisson-subsampled RDP")
    if isinstance(base, GaussianMechanism | GaussianProfile):
        theta = float(base.theta)
        return _poisson_gaussian(theta, q, o, f"exact Poisson Gaussian (theta={theta:g}, "
                                              f"q={q:g})")
    pair = _pair(base)
    label = (f"exact Poisson {'Laplace' if pair.kind == 'laplace' else 'randomized response'}"
             f" ({'theta' if pair.kind == 'laplace' else 'log-odds'}={pair.theta:g}, q={q:g})")
    base_curve = rdp_curve(base, o)
    if q == 0.0 or pair.theta == 0.0:
        zero = np.zeros(o.shape)
        return ExactRdpCurve(o, zero, zero, relation=_ADD_REMOVE, label=label)
    if q == 1.0:
        return ExactRdpCurve(o, base_curve.epsilons, base_curve.lower_epsilons,
                             relation=_ADD_REMOVE, label=label)
    if math.isinf(pair.theta):
        # p ∈ {0, 1}: P puts mass where Q has none, so D_α = ∞ at every order > 1 (q > 0)
        inf = np.full(o.shape, math.inf)
        return ExactRdpCurve(o, inf, inf, relation=_ADD_REMOVE, label=label)
    up, lo = _exact_values(pair, q, o, base)
    return ExactRdpCurve(o, up, np.minimum(lo, up), relation=_ADD_REMOVE, label=label)


def _exact_values(pair: _Pair, q: float, o: np.ndarray, base: Any):
    finite = np.isfinite(o)
    fo = o[finite]
    up = np.full(o.shape, math.inf)
    lo = np.zeros(o.shape)
    # order ∞: the remove direction, log(1 + q(e^θ − 1))
    pure = float(np.logaddexp(math.log1p(-q), math.log(q) + pair.theta)) if pair.theta > 1 \
        else math.log1p(q * math.expm1(pair.theta))
    pure_up, pure_lo = up_ulps(pure, 16), max(down_ulps(pure, 16), 0.0)
    up[~finite] = pure_up
    lo[~finite] = pure_lo
    if fo.size == 0:
        return up, lo
    # remove direction at the integer orders around the requested ones (binomial sum)
    ints = np.unique(np.concatenate([np.floor(fo), np.ceil(fo)]))
    ints = ints[ints >= 2]
    if ints.size == 0:
        ints = np.array([2.0])
    jj = np.arange(2.0, ints.max() + 1.0)
    bc = rdp_curve(base, jj)
    cgf_up = np.concatenate([[0.0, 0.0], (jj - 1.0) * bc.epsilons])
    cgf_lo = np.concatenate([[0.0, 0.0], (jj - 1.0) * bc.lower_epsilons])
    int_up, _ = _mixture_eps(ints, q, up_ulps(cgf_up, 4))
    _, int_lo = _mixture_eps(ints, q, down_ulps(cgf_lo, 4))
    # Zhu & Wang's factor-3 bound holds for both directions (slides W-20/W-21): a cap on the
    # add direction's quadrature (at order 2 it equals the remove direction's exact value)
    int_zw, _ = _mixture_eps(ints, q, up_ulps(cgf_up, 4), factor3=True)
    zw_chord = RdpCurve(np.append(ints, math.inf), np.append(int_zw, pure_up)).at(fo).epsilons
    # the chord of the CGF between integer upper values (below 2: the value at 2)
    chord = RdpCurve(np.append(ints, math.inf), np.append(int_up, pure_up)).at(fo).epsilons
    is_int = fo == np.floor(fo)
    idx_int = np.searchsorted(ints, fo)
    fwd_up = chord.copy()
    fwd_lo = np.zeros(fo.shape)
    fwd_up[is_int] = int_up[idx_int[is_int]]
    fwd_lo[is_int] = int_lo[idx_int[is_int]]
    floor_idx = np.searchsorted(ints, np.floor(fo))
    has_floor = ~is_int & (fo >= 2.0)
    fwd_lo[has_floor] = int_lo[floor_idx[has_floor]]
    # add direction: at most its order-∞ value −log(1 − q(1 − e^{−θ}))
    rev_cap = up_ulps(-math.log1p(q * math.expm1(-min(pair.theta, 745.0))), 16)
    rev_up = np.full(fo.shape, rev_cap)
    rev_lo = np.zeros(fo.shape)
    if pair.theta <= _MAX_THETA:
        # quadrature: the add direction everywhere, the remove direction off the integers
        chi2 = None
        if pair.kind == "laplace":  # χ² = e^{ε(2)} − 1 of the base pair, bracketed
            b2 = rdp_curve(base, [2.0])
            chi2 = (float(np.expm1(b2.lower_epsilons[0])) * (1 - 4 * ULP),
                    float(np.expm1(b2.epsilons[0])) * (1 + 4 * ULP))
        frac = ~is_int
        if np.any(frac):
            f_up, f_lo = _divergence_bracket(pair, q, fo[frac], fo[frac] - 1.0, chi2)
            fwd_up[frac] = np.minimum(fwd_up[frac], f_up)
            fwd_lo[frac] = np.maximum(fwd_lo[frac], f_lo)
        # the add direction where its order-∞ cap does not already put it below the remove
        # direction's lower value (there the maximum is the remove direction: nothing to do)
        need = rev_cap > fwd_lo
        if np.any(need):
            r_up, r_lo = _divergence_bracket(pair, q, 1.0 - fo[need], fo[need] - 1.0, chi2)
            rev_up[need] = np.minimum(rev_up[need], r_up)
            rev_lo[need] = np.maximum(rev_lo[need], r_lo)
    base_up = rdp_curve(base, fo).epsilons
    fin_up = np.minimum(np.maximum(fwd_up, rev_up),
                        np.minimum(np.minimum(base_up, pure_up), zw_chord))
    fin_lo = np.maximum(fwd_lo, rev_lo)
    # D_α is non-decreasing in α: upper values from the right, lower values from the left
    fin_up = np.minimum.accumulate(fin_up[::-1])[::-1]
    fin_lo = np.maximum.accumulate(fin_lo)
    up[finite] = fin_up
    lo[finite] = np.minimum(fin_lo, pure_lo)
    return up, lo


# ---------------------------------------------------------------------------------------------
# the certified quadrature of E_Q[φ_β(x)]
# ---------------------------------------------------------------------------------------------


def _log1p_minus_x(x: np.ndarray) -> np.ndarray:
    """``log1p(x) − x`` (≤ 0) for |x| ≤ 0.1 by its series (40 terms: truncation < 1e-40)."""
    acc = np.zeros_like(x)
    for k in range(41, 1, -1):  # Σ_{k≥2} (−1)^{k+1} x^k / k = x²(−1/2 + x(1/3 − …))
        acc = acc * x + (-1.0) ** (k + 1) / k
    return acc * x * x


def _phi_lin(beta: np.ndarray, u: np.ndarray, q: float):
    """``(val, err, shift, x)``: φ_β(x)·e^{−shift} and a bound on its absolute error, for
    x = q·expm1(u), broadcast over β and u.

    Two forms: for |x| ≤ 0.1 and |β log1p(x)| ≤ ½, ``E(βl) + β(l − x)`` with l = log1p(x) and
    E(y) = e^y − 1 − y (:func:`expm1_minus_x`) and l − x by its series (shift 0), so nothing
    cancels beyond a factor β/(β − 1); otherwise ``e^{βl} − 1 − βx`` scaled by
    e^{−shift}, shift = max(βl, 0). The error bound is 64 ulp times the sum of the magnitudes
    of the parts (each part is within a few ulp, and an absolute error of ~4 ulp·|y| in y = βl
    moves e^y by that relative amount), which covers the rounding of l and the products; the
    rounding of x itself is :func:`_arg_slack`'s."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        x = q * np.expm1(u)
        lg = np.log1p(x)
        y = beta * lg
        small = (np.abs(x) <= 0.1) & (np.abs(y) <= 0.5)
        xs = np.where(small, x, 0.0)
        ys = np.where(small, y, 0.0)
        e_part = expm1_minus_x(ys)
        g_part = beta * _log1p_minus_x(xs)
        val_s = e_part + g_part
        err_s = 64 * ULP * (np.abs(e_part) * (1.0 + np.abs(ys)) + np.abs(g_part))
        shift = np.maximum(np.where(small, 0.0, y), 0.0)
        ey = np.exp(np.where(small, 0.0, y) - shift)
        rest = (1.0 + beta * np.where(small, 0.0, x)) * np.exp(-shift)
        val_b = ey - rest
        err_b = 64 * ULP * (ey * (1.0 + np.abs(y)) + (1.0 + np.abs(beta * x)) * np.exp(-shift))
        val = np.where(small, val_s, val_b)
        err = np.where(small, err_s, err_b)
        sh = np.where(small, 0.0, shift)
    return val, err, sh, x


def _phi(beta: np.ndarray, u: np.ndarray, q: float):
    """``(log_up, log_lo)`` of φ_β(x), x = q·expm1(u) (see :func:`_phi_lin`)."""
    val, err, sh, _ = _phi_lin(beta, u, q)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_up = sh + np.log(val + err)
        log_lo = np.where(val - err > 0, sh + np.log(val - err), -np.inf)
    return log_up, log_lo


@_silent  # rows that overflow (φ > e^{50}) are computed, then masked by ``ok``
def _laplace_quadratic(theta: float, q: float, beta: np.ndarray, s: np.ndarray,
                       chi2: tuple[float, float]):
    """(upper, lower) on the Laplace divergence by the second route: E_Q[φ_β(x)] =
    c₂q²χ² + E_Q[r_β(x)] with c₂ = β(β−1)/2, χ² = E_Q[(L−1)²] = e^{ε(2)} − 1 (the base
    mechanism's order-2 RDP, ``chi2`` = (lower, upper)) and r_β = φ_β − c₂x² = O(x³). r_β is
    monotone in x (r_β' = βφ_{β−1}, whose sign does not depend on x), so on each cell
    e^{−t}·r_β(x(t)) lies between the products of the end values of e^{−t} and of r_β (interval
    product). The remainder is much smaller than φ when |x| is small (small q or θ), where
    the first route's bracket is relatively widest. Used where no value exceeds e^{50}
    (no scaling needed); ``inf``/0 elsewhere. Its cells: :data:`_QUAD_CELLS`."""
    n = _QUAD_CELLS
    t = theta * np.arange(n + 1, dtype=float) / n
    u = np.concatenate([2.0 * t - theta, [-theta, theta]])[None, :]
    b = beta[:, None]
    val, err, sh, x = _phi_lin(b, u, q)
    c2 = (b * (b - 1.0)) / 2.0
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.all(sh <= 50.0, axis=1) & np.all(np.isfinite(val), axis=1)
        phi = val * np.exp(sh)
        e_phi = err * np.exp(sh)
        quad = c2 * x * x
        r = phi - quad
        # rounding of φ, of c₂x², and the arguments' (x within δ relative: φ moves by
        # (2 + 2|β|)δφ, c₂x² by 2δc₂x²)
        move = _arg_slack(beta, theta, n)[:, None] / 2.0  # (2 + 2|β|)δ: covers both
        r_err = e_phi + 4 * ULP * np.abs(quad) + move * (np.abs(phi) + 2.0 * np.abs(quad))
    r_mid_lo, r_mid_hi = r[:, :n + 1] - r_err[:, :n + 1], r[:, :n + 1] + r_err[:, :n + 1]
    rl = np.minimum(r_mid_lo[:, :-1], r_mid_lo[:, 1:])
    rh = np.maximum(r_mid_hi[:, :-1], r_mid_hi[:, 1:])
    el, eh = np.exp(-t[1:])[None, :], np.exp(-t[:-1])[None, :]
    eh = eh * (1 + 4 * ULP)
    el = el * (1 - 4 * ULP)
    prods = np.stack([el * rl, el * rh, eh * rl, eh * rh])
    h2 = theta / n / 2.0
    cell_hi = np.max(prods, axis=0) * h2 * (1 + 4 * ULP)
    cell_lo = np.min(prods, axis=0) * h2
    cell_lo = np.where(cell_lo > 0, cell_lo * (1 - 4 * ULP), cell_lo * (1 + 4 * ULP))
    # the atoms: masses ½ (t < 0) and e^{−θ}/2 (t > θ)
    m_a = np.array([0.5, math.exp(-theta) / 2.0])[None, :]
    ra, ea = r[:, n + 1:], r_err[:, n + 1:]
    atoms_hi = np.sum(m_a * (ra + ea) * (1 + 8 * ULP) + 8 * ULP * m_a * np.abs(ra), axis=1)
    atoms_lo = np.sum(m_a * (ra - ea) - 8 * ULP * m_a * np.abs(ra) - 8 * ULP * m_a * ea,
                      axis=1)
    c2v = c2[:, 0]
    q2 = q * q
    quad_hi = c2v * q2 * chi2[1] * (1 + 8 * ULP)
    quad_lo = c2v * q2 * chi2[0] * (1 - 8 * ULP)
    parts_hi = [quad_hi, atoms_hi, np.sum(cell_hi, axis=1)]
    parts_lo = [quad_lo, atoms_lo, np.sum(cell_lo, axis=1)]
    size = sum(np.abs(p) for p in parts_hi) + np.sum(np.abs(cell_lo), axis=1) + \
        np.sum(np.abs(cell_hi), axis=1)
    summing = (n + 8) * ULP * size
    tot_hi = sum(parts_hi) + summing
    tot_lo = sum(parts_lo) - summing
    with np.errstate(invalid="ignore", divide="ignore"):
        d_up = np.log1p(tot_hi) / s * (1 + 8 * ULP)
        d_lo = np.where(tot_lo > 0, np.log1p(tot_lo) / s * (1 - 8 * ULP), 0.0)
    d_up = np.where(ok & np.isfinite(d_up) & (tot_hi > 0), d_up, math.inf)
    d_lo = np.where(ok & np.isfinite(d_lo), np.maximum(d_lo, 0.0), 0.0)
    return d_up, d_lo


def _lse(a: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = np.max(a, axis=axis, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        s = np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis=axis)
    return s


def _arg_slack(beta: np.ndarray, theta: float, n: int) -> np.ndarray:
    """Allowance on a log-term for the rounding of its argument (see
    :func:`_divergence_bracket`): t = θk/n (n a power of 2) is within ulp·θ/2 and u = 2t − θ
    within δu = 2 ulp·θ; with |x'(u)/x| ≤ 1 + 1/|u| and |u| ≥ 2θ/n that moves log x by at most
    δu + 2 ulp·n, and x = q·expm1(u) adds 2 ulp; x φ'(x)/φ(x) ≤ 2 + 2|β|. θ itself (and, for
    randomized response, the masses) are within a few ulp: counted once more. Doubled."""
    du = 2 * ULP * theta
    move = du + 2 * ULP * n + 2 * ULP + 4 * ULP * (1.0 + theta)
    return 2.0 * (2.0 + 2.0 * np.abs(beta)) * move


def _divergence_bracket(pair: _Pair, q: float, beta: np.ndarray, s: np.ndarray,
                        chi2: tuple[float, float] | None = None):
    """(upper, lower) on log(E_Q[(1 + x)^β])/s (s = α − 1 > 0) for each β: the remove direction
    with β = α, the add direction with β = 1 − α (see the module docstring)."""
    th = pair.theta
    b = beta[:, None]
    if pair.kind == "rr":
        pmax = (1.0 + pair.w) / 2.0
        pmin = (1.0 - pair.w) / 2.0
        logm = np.array([math.log(pmax), math.log(pmin)])[None, :]
        u = np.array([-th, th])[None, :]
        lu, ll = _phi(b, u, q)
        # θ and the masses are within a few ulp: the same allowance as the quadrature's
        slack = _arg_slack(beta, th, 0)
        sum_up = _lse(lu + logm)
        sum_lo = _lse(ll + logm)
        log_sum_up = sum_up + slack + 16 * ULP * (1 + np.abs(sum_up))
        log_sum_lo = sum_lo - slack - 16 * ULP * (1 + np.abs(sum_lo))
    else:
        n = _CELLS
        k = np.arange(n + 1, dtype=float)
        t = th * k / n
        u = 2.0 * t - th  # L = e^{u} on [0, θ]
        lu, ll = _phi(b, u[None, :], q)  # (orders, n + 1)
        lu_a, ll_a = _phi(b, np.array([[-th, th]]), q)  # the two atoms
        logm_a = np.array([[-math.log(2.0), -th - math.log(2.0)]])
        half = n // 2
        # cell k = [t_k, t_{k+1}]; log h/2 with h = θ/n (rounded outward below)
        log_h2 = math.log(th / n) - math.log(2.0)
        # left half: non-increasing integrand; right half: the mixed bound
        left_up = lu[:, :half] - t[None, :half]
        left_lo = ll[:, 1:half + 1] - t[None, 1:half + 1]
        right_up = lu[:, half + 1:] - t[None, half:n]
        right_lo = ll[:, half:n] - t[None, half + 1:]
        cells_up = np.concatenate([left_up, right_up], axis=1) + log_h2
        cells_lo = np.concatenate([left_lo, right_lo], axis=1) + log_h2
        all_up = np.concatenate([cells_up, lu_a + logm_a], axis=1)
        all_lo = np.concatenate([cells_lo, ll_a + logm_a], axis=1)
        # rounding of the arguments: u = 2t − θ is within δu = 4 ulp·θ of its exact value
        # (t = θk/n within 2 ulp·θ), and x = q·expm1(u) within 2 ulp relative; x φ'(x)/φ(x) ≤
        # 2 + 2|β| for these convex φ_β, and |x'(u)/x| ≤ 1 + 1/|u| with |u| ≥ 2θ/n off the
        # midpoint, so each log φ moves by at most (2 + 2|β|)(δu(1 + n/(2θ)) + 2 ulp);
        # the cell width, the masses and the sums: 16 ulp of each log-term's size and n ulp
        slack = _arg_slack(beta, th, n)
        sum_up = _lse(all_up)
        sum_lo = _lse(all_lo)
        log_sum_up = sum_up + slack + 16 * ULP * (1 + np.abs(sum_up) + th) + 4 * ULP * n
        log_sum_lo = sum_lo - slack - 16 * ULP * (1 + np.abs(sum_lo) + th) - 4 * ULP * n
    with np.errstate(invalid="ignore", over="ignore"):
        d_up = np.logaddexp(0.0, log_sum_up) / s * (1 + 8 * ULP)
        d_lo = np.logaddexp(0.0, log_sum_lo) / s * (1 - 8 * ULP)
    d_up = np.where(np.isfinite(d_up), d_up, math.inf)
    d_lo = np.where(np.isfinite(d_lo), np.maximum(d_lo, 0.0), 0.0)
    if chi2 is not None:  # Laplace: both routes are valid brackets; keep the tighter ends
        q_up, q_lo = _laplace_quadratic(th, q, beta, s, chi2)
        d_up, d_lo = np.minimum(d_up, q_up), np.maximum(d_lo, q_lo)
    return d_up, d_lo
