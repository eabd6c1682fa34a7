"""Privacy loss random variables (Theorem 5) and the MGF–profile relation (Theorem 6).

For an ordered pair of output distributions (P, Q) = (M(x), M(x')) with densities p, q, the
privacy loss random variables are (Balle, Barthe, Gaboardi 2018, §3)::

    L  = log(p/q)(Z),   Z  ~ P        (may be +inf where q = 0)
    L' = log(q/p)(Z'),  Z' ~ Q

**Theorem 5** (Balle & Wang 2018): ``D_{e^ε}(P ‖ Q) = Pr[L > ε] − e^ε Pr[L' < −ε]``.

**Theorem 6**: for s ≥ 0 the moment generating function ``φ(s) = E[e^{sL}]`` satisfies::

    φ(s) = 1 + s(s+1) ∫_0^∞ ( e^{sε} D_{e^ε}(P‖Q) + e^{−(s+1)ε} D_{e^ε}(Q‖P) ) dε

and hence, for every neighbouring pair, ``sup φ ≤ 1 + s(s+1) ∫_0^∞ (e^{sε} + e^{−(s+1)ε}) δ(ε) dε``
(equality when one pair is worst for every ε, as for Gaussian and Laplace; catalogue erratum E5).
With order = s + 1 this is the Rényi-DP curve of any mechanism known by its profile:
``ε_RDP(order) = log φ(order − 1) / (order − 1)``.
"""

from __future__ import annotations

import abc
import math
from typing import Any

import numpy as np

from . import _special
from ._numerics import ULP, log_expm1, log_sub, logsumexp_signed, lse_error, up_ulps
from ._validation import check_int, check_real, check_real_array, check_rng
from .divergences import align
from .errors import InvalidParameterError, InvalidTypeError, NumericalError
from .results import Bracket

__all__ = [
    "DiscretePrivacyLoss",
    "GaussianPrivacyLoss",
    "LaplacePrivacyLoss",
    "PrivacyLoss",
    "ProfileValues",
    "mgf_from_profile",
]


def _out(arr: np.ndarray, like: np.ndarray):
    arr = arr.reshape(like.shape)
    return float(arr) if arr.ndim == 0 else arr


class PrivacyLoss(abc.ABC):
    """The privacy loss random variables (L, L') of an ordered pair (P, Q)."""

    @abc.abstractmethod
    def _sf(self, t: np.ndarray) -> np.ndarray:
        """Pr[L > t]."""

    @abc.abstractmethod
    def _reverse_cdf(self, t: np.ndarray) -> np.ndarray:
        """Pr[L' < t] (strict inequality)."""

    @abc.abstractmethod
    def sample(self, size: int, rng: Any = None) -> np.ndarray:
        """Draw ``size`` samples of L (Z ~ P)."""

    @abc.abstractmethod
    def _mgf(self, s: float) -> float:
        """E[e^{sL}] for s ≥ 0 (``inf`` if infinite)."""

    @abc.abstractmethod
    def reverse(self) -> PrivacyLoss:
        """The privacy loss of the pair (Q, P)."""

    def sf(self, t: Any):
        """Survival function ``Pr[L > t]``, vectorised over real t (±inf allowed)."""
        arr = check_real_array("t", t, "[-inf, inf]")
        return _out(self._sf(arr.reshape(-1)), arr)

    def reverse_cdf(self, t: Any):
        """``Pr[L' < t]`` (strict), vectorised."""
        arr = check_real_array("t", t, "[-inf, inf]")
        return _out(self._reverse_cdf(arr.reshape(-1)), arr)

    def delta(self, eps: Any):
        """Theorem 5: ``D_{e^ε}(P‖Q) = Pr[L > ε] − e^ε Pr[L' < −ε]`` (ε ≥ 0), vectorised.

        The subtraction is done in log space; values are clipped at 0 from below.
        """
        arr = check_real_array("eps", eps, "[0, inf)")
        e = arr.reshape(-1)
        with np.errstate(divide="ignore"):
            first = np.log(self._sf(e))
            second = e + np.log(self._reverse_cdf(-e))
        val = np.exp(log_sub(first, np.minimum(second, first)))
        return _out(np.where(second >= first, 0.0, val), arr)

    def mgf(self, s: float) -> float:
        """``φ(s) = E[e^{sL}] = E_Q[(p/q)^{s+1}]`` for s ≥ 0."""
        return self._mgf(check_real("s", s, "[0, inf)"))


class GaussianPrivacyLoss(PrivacyLoss):
    """Privacy loss of N(0, σ²) vs N(Δ, σ²): L ~ N(θ²/2, θ²) with θ = Δ/σ, and L' has the same law.

    >>> round(GaussianPrivacyLoss(1.0).mgf(1.0), 12) == round(math.e, 12)
    True
    """

    def __init__(self, theta: float):
        self.theta = check_real("theta", theta, "[0, inf)")

    def _sf(self, t):
        th = self.theta
        if th == 0:
            return (t < 0).astype(float)
        return _special.ndtr((th * th / 2 - t) / th)

    def _reverse_cdf(self, t):
        th = self.theta
        if th == 0:
            return (t > 0).astype(float)
        return _special.ndtr((t - th * th / 2) / th)

    def sample(self, size, rng=None):
        size = check_int("size", size, "[0, inf)")
        th = self.theta
        return check_rng(rng).normal(th * th / 2, th, size=size)

    def _mgf(self, s):
        return math.exp(s * (s + 1) * self.theta**2 / 2) if s * (s + 1) * self.theta**2 < 1418 \
            else math.inf

    def reverse(self):
        return self


class LaplacePrivacyLoss(PrivacyLoss):
    """Privacy loss of Lap(0, b) vs Lap(Δ, b), θ = Δ/b: L ∈ [−θ, θ] with atoms at ±θ.

    ``Pr[L > t] = 1 − ½ e^{(t−θ)/2}`` for −θ ≤ t < θ; L' has the same law (the pair is symmetric).
    """

    def __init__(self, theta: float):
        self.theta = check_real("theta", theta, "[0, inf)")

    def _sf(self, t):
        th = self.theta
        mid = 1.0 - 0.5 * np.exp((np.clip(t, -th, th) - th) / 2)
        return np.where(t < -th, 1.0, np.where(t >= th, 0.0, mid))

    def _reverse_cdf(self, t):
        th = self.theta
        mid = 0.5 * np.exp((np.clip(t, -th, th) - th) / 2)
        return np.where(t <= -th, 0.0, np.where(t > th, 1.0, mid))

    def sample(self, size, rng=None):
        size = check_int("size", size, "[0, inf)")
        z = check_rng(rng).laplace(0.0, 1.0, size=size)
        return np.abs(z - self.theta) - np.abs(z)

    def _mgf(self, s):
        # E_P[(p/q)^s] = ((s+1)/(2s+1)) e^{sθ} + (s/(2s+1)) e^{−(s+1)θ}  (Wang's slides, W-3)
        th = self.theta
        terms = [math.log((s + 1) / (2 * s + 1)) + s * th]
        if s > 0:
            terms.append(math.log(s / (2 * s + 1)) - (s + 1) * th)
        from scipy import special  # deferred (import time; see privamp._special)

        val = float(special.logsumexp(terms))
        return math.exp(val) if val < 709 else math.inf

    def reverse(self):
        return self


class DiscretePrivacyLoss(PrivacyLoss):
    """Privacy loss of two distributions on a common finite support.

    >>> pl = DiscretePrivacyLoss([0.75, 0.25], [0.25, 0.75])  # randomized response, p = 0.75
    >>> round(float(pl.delta(0.0)), 12), round(pl.mgf(1.0), 12)
    (0.5, 2.333333333333)
    """

    def __init__(self, p: Any, q: Any):
        self.p, self.q, self.support = align(p, q)
        with np.errstate(divide="ignore", invalid="ignore"):
            # +inf where q = 0 < p, −inf where p = 0 < q (NaN where both are 0: never used)
            self._loss = np.log(self.p) - np.log(self.q)

    def _sf(self, t):
        mask = self.p > 0
        w, loss = self.p[mask], self._loss[mask]
        return (w[None, :] * (loss[None, :] > t[:, None])).sum(axis=1)

    def _reverse_cdf(self, t):
        mask = self.q > 0
        w, loss = self.q[mask], -self._loss[mask]
        return (w[None, :] * (loss[None, :] < t[:, None])).sum(axis=1)

    def sample(self, size, rng=None):
        size = check_int("size", size, "[0, inf)")
        idx = check_rng(rng).choice(self.p.size, size=size, p=self.p / self.p.sum())
        return self._loss[idx]

    def _mgf(self, s):
        mask = self.p > 0
        if s > 0 and np.any(self.q[mask] == 0):
            return math.inf
        lp = np.log(self.p[mask])
        with np.errstate(divide="ignore"):
            lq = np.log(self.q[mask])
        val, _ = logsumexp_signed((s + 1) * lp - s * lq)
        return math.exp(float(val)) if val < 709 else math.inf

    def reverse(self):
        return DiscretePrivacyLoss(self.q, self.p)


# ---------------------------------------------------------------------------------------------
# Theorem 6: the MGF from a privacy profile, as a certified bracket
# ---------------------------------------------------------------------------------------------


def _log_weights(s: float, a: np.ndarray, h: np.ndarray):
    """Per cell [a, a+h], logs of W0 = ∫ w, Wt = ∫ w·t and W0 − Wt, for the weight
    w(ε) = e^{sε} + e^{−(s+1)ε} and t(ε) = (e^{ε−a} − 1)/(e^h − 1) ∈ [0, 1].

    Also returns a bound on the relative error of Wt and W0 − Wt (closed forms with a difference
    of two exponential integrals; condition number about 1/h).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lh = log_expm1(h)
        # ∫_0^h e^{sx} dx, ∫_0^h e^{sx} expm1(x) dx, and the e^{-(s+1)x} analogues
        log_a0 = log_expm1(s * h) - math.log(s)
        log_j = log_sub(log_expm1((s + 1) * h) - math.log(s + 1), log_a0)
        log_b0 = np.log(-np.expm1(-(s + 1) * h)) - math.log(s + 1)
        log_jm = log_sub(np.log(-np.expm1(-s * h)) - math.log(s), log_b0)
        # ∫ e^{sx}(1 - t) = (e^h A0 - J1)/expm1(h) with J1 = ∫ e^{(s+1)x}: use A0 - A1 directly
        log_a1 = log_j - lh
        log_a01 = log_sub(log_a0, log_a1)
        log_b1 = log_jm - lh
        log_b01 = log_sub(log_b0, log_b1)
        up = s * a
        down = -(s + 1) * a
        log_w0 = np.logaddexp(up + log_a0, down + log_b0)
        log_wt = np.logaddexp(up + log_a1, down + log_b1)
        log_w01 = np.logaddexp(up + log_a01, down + log_b01)
    rel = 64 * ULP * (1.0 + 2.0 / np.minimum(h, 1.0)) * (1.0 + s * np.minimum(h, 1.0))
    return log_w0, log_wt, log_w01, rel


class ProfileValues:
    """``profile._log_delta`` with the values it has computed kept, for many integrals of one
    profile.

    The Theorem 6 integrals of the orders of an RDP curve place the same nodes (the same
    ``linspace(0, T)`` whenever their ``T`` agree, and the same eighths of a cell when they
    refine it), and a node's value does not depend on the order that asks for it: each node is
    evaluated once. A stored value is the float the profile returned for that node, so answers
    are those of the profile itself. At most ``max_size`` values are kept.

    >>> from privamp.mechanisms import LaplaceProfile
    >>> values = ProfileValues(LaplaceProfile(1.0))
    >>> a = values(np.array([0.5, 1.0])); b = values(np.array([1.0, 2.0]))
    >>> bool(a[1] == b[0]), values.size
    (True, 3)
    """

    def __init__(self, profile, *, max_size: int = 4_000_000):
        self.profile = profile
        self._f = profile._log_delta
        self._max_size = max_size
        self._x = np.empty(0)
        self._y = np.empty(0)

    @property
    def size(self) -> int:
        return int(self._x.size)

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        out = np.empty(x.shape)
        hit = np.zeros(x.shape, dtype=bool)
        if self._x.size:
            idx = np.minimum(np.searchsorted(self._x, x), self._x.size - 1)
            hit = self._x[idx] == x
            out[hit] = self._y[idx[hit]]
        if not hit.all():
            new = np.unique(x[~hit])
            values = np.asarray(self._f(new), dtype=float).reshape(new.shape)
            out[~hit] = values[np.searchsorted(new, x[~hit])]
            if self._x.size + new.size <= self._max_size:
                xs = np.concatenate([self._x, new])
                perm = np.argsort(xs, kind="stable")
                self._x, self._y = xs[perm], np.concatenate([self._y, values])[perm]
        return out


def mgf_from_profile(
    profile, s: float, *, rtol: float = 1e-9, max_cells: int = 2_000_000,
    values: ProfileValues | None = None,
) -> Bracket:
    """Bracket on ``sup φ(s)`` from a privacy profile (Balle et al. 2018, Theorem 6).

    ``upper`` is a certified upper bound on ``1 + s(s+1) ∫_0^∞ (e^{sε} + e^{−(s+1)ε}) δ(ε) dε``
    (and therefore on the MGF of the privacy loss of every neighbouring pair); ``lower`` is a
    lower bound on that integral expression computed from the same profile values.

    Method: on each cell of a grid of [0, T] the profile, convex in α = e^ε, lies below its chord
    (upper bound) and above the extension of the next cell's secant (lower bound); both are
    integrated against the weight in closed form. Cells are refined where the bracket is widest
    until its relative width is ≤ ``rtol`` (or ``max_cells`` is reached: the bracket stays
    valid, only wider). Beyond T the profile is 0 (T = its pure ε) or its own tail bound is used
    (Gaussian: closed form); profiles with neither raise :class:`NumericalError`. ``values``, a
    :class:`ProfileValues` of the same profile, shares its evaluations between calls.

    >>> from privamp.mechanisms import GaussianProfile
    >>> b = mgf_from_profile(GaussianProfile(1.0), 1.0)
    >>> b.lower <= math.e <= b.upper, b.upper - b.lower < 1e-8
    (True, True)
    """
    s = check_real("s", s, "[0, inf)")
    rtol = check_real("rtol", rtol, "(0, 1)")
    if s == 0.0:
        return Bracket(1.0, 1.0)
    if values is None:
        values = profile._log_delta
    elif not isinstance(values, ProfileValues):
        raise InvalidTypeError("values", "a ProfileValues", values)
    elif values.profile is not profile:
        raise InvalidParameterError("values", "the ProfileValues of this profile", values.profile)
    pure = profile.pure_epsilon
    if math.isfinite(pure):
        T = float(pure)
        tail_up = 0.0
    else:
        T = _tail_start(profile, s, values)
        tail = profile._mgf_tail(s, T)
        if tail is None:
            raise NumericalError(
                f"cannot bound the tail of {profile!r} for Theorem 6: the profile neither reaches "
                "0 nor provides a tail bound"
            )
        log_dT = float(values(np.array([T]))[0])
        tail_up = tail + math.exp(min(log_dT, 0.0) - (s + 1) * T) / (s + 1)
    if T == 0.0:
        lo_int, up_int = 0.0, 0.0
    else:
        lo_int, up_int = _bracket_integral(values, s, T, rtol, max_cells)
    factor = s * (s + 1)
    upper = 1.0 + factor * (up_int + tail_up)
    upper = up_ulps(upper, 16)
    lower = 1.0 + factor * lo_int
    return Bracket(min(lower, upper), upper)


def _tail_start(profile, s: float, log_delta) -> float:
    """A point T past the peak of ε ↦ sε + log δ(ε) where the integrand is negligible."""
    grid = 0.25 * 2.0 ** np.arange(0, 40)
    g = s * grid + log_delta(grid)
    peak = -math.inf
    for x, v in zip(grid, g, strict=True):
        peak = max(peak, v)
        if v < peak - 120.0 or v == -math.inf:
            return float(x)
    raise NumericalError(
        f"the Theorem 6 integrand e^(s eps) delta(eps) of {profile!r} does not decay (s = {s})"
    )


def _cell_weights(s: float, a: np.ndarray, h: np.ndarray):
    """:func:`_log_weights` per cell: log W0, log X (log W0 where the closed form of X is
    unresolvable), the relative error, and that flag."""
    log_w0, _, log_x, rel = _log_weights(s, a, h)
    bad = np.isnan(log_x)  # closed form unresolvable: first-order bounds on this cell
    return log_w0, np.where(bad, log_w0, log_x), rel, bad


def _bracket_integral(log_delta, s: float, T: float, rtol: float, max_cells: int, *,
                      reuse: bool = True):
    """Lower and upper bounds on ∫_0^T (e^{sε} + e^{−(s+1)ε}) δ(ε) dε (see
    :func:`mgf_from_profile`). ``reuse=False`` recomputes every cell's weights in every round
    (the reference the tests compare the reuse with, bit for bit)."""
    nodes = np.linspace(0.0, T, 4097)
    logd = log_delta(nodes)
    a, b = nodes[:-1], nodes[1:]
    h = b - a
    cells = _cell_weights(s, a, h)
    while True:
        log_w0, log_x, rel, bad = cells
        la, lb = logd[:-1], logd[1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            w0_up = log_w0 + 16 * ULP
            w0_lo = log_w0 - 16 * ULP
            # upper, chord in α:  δ_b W0 + (δ_a − δ_b) X,  X = ∫ w (1 − t) inflated (safe side)
            d_ab = log_sub(la, np.minimum(lb, la))
            up_terms = np.logaddexp(lb + w0_up, d_ab + log_x + np.log1p(2.5 * rel))
            up_terms = np.where(np.isneginf(la), -np.inf, up_terms)
            # lower: δ_b W0 + (δ_b − δ_c) ρ X, the next cell's secant extended to the left
            lc = np.append(logd[2:], -np.inf)
            h_next = np.append(h[1:], 1.0)
            log_rho = np.log(-np.expm1(-h)) - log_expm1(h_next)
            d_bc = log_sub(lb, np.minimum(lc, lb))
            sec = d_bc + log_rho + log_x + np.log1p(-np.minimum(2.5 * rel, 0.5))
            sec[-1] = -np.inf
            sec = np.where(np.isneginf(d_bc) | bad, -np.inf, sec)
            lo_terms = np.minimum(np.logaddexp(lb + w0_lo, sec), up_terms)
        up_log, _ = logsumexp_signed(up_terms)
        lo_log, _ = logsumexp_signed(lo_terms)
        # the log-sum-exps' own rounding (terms of one sign), outward
        up_log = float(up_log + lse_error(up_terms.size, up_log))
        lo_log = float(lo_log - lse_error(lo_terms.size, lo_log))
        if up_log == -math.inf:
            return 0.0, 0.0
        gap = np.exp(up_terms - up_log) - np.exp(lo_terms - up_log)
        rel_gap = float(np.sum(gap))
        if rel_gap <= rtol or nodes.size > max_cells:
            return math.exp(lo_log), math.exp(up_log)
        order = np.argsort(gap)[::-1]
        cum = np.cumsum(gap[order])
        n_split = int(np.searchsorted(cum, 0.9 * cum[-1])) + 1
        split = np.sort(order[:n_split])
        new = (a[split, None] + h[split, None] * (np.arange(1, 8) / 8.0)[None, :]).reshape(-1)
        new_logd = log_delta(new)
        old_size = nodes.size
        nodes = np.concatenate([nodes, new])
        logd = np.concatenate([logd, new_logd])
        perm = np.argsort(nodes, kind="stable")
        nodes, logd = nodes[perm], logd[perm]
        # a cell between two old nodes is an old cell that was not split (a split cell has new
        # nodes inside): its weights are kept (cell i of the old grid starts at old node i);
        # only the cells next to a new node are computed
        a, b = nodes[:-1], nodes[1:]
        h = b - a
        old = perm < old_size
        kept = old[:-1] & old[1:] & reuse
        fresh = np.flatnonzero(~kept)
        from_old = perm[:-1][kept]
        weights = _cell_weights(s, a[fresh], h[fresh])
        merged = []
        for before, now in zip(cells, weights, strict=True):
            out = np.empty(a.size, dtype=before.dtype)
            out[kept] = before[from_old]
            out[fresh] = now
            merged.append(out)
        cells = tuple(merged)
