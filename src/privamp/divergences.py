"""Divergences between distributions: hockey-stick, total variation, Rényi, KL, Pearson–Vajda.

Discrete distributions are given as 1-D arrays on a common support, or as dicts mapping outcomes
to probabilities (aligned on the union of their keys; a missing key has probability 0). Densities
are given as callables (or log-density callables) on an interval and integrated numerically with
the integration error reported.

Hockey-stick divergence (Balle, Barthe, Gaboardi 2018, eq. (2))::

    D_{e^ε}(μ ‖ μ') = sup_E μ(E) − e^ε μ'(E) = Σ_z [μ(z) − e^ε μ'(z)]_+

The right-hand form is used everywhere: it keeps μ-mass outside the support of μ' (the middle
form ``∫[dμ/dμ' − α]_+ dμ'`` of the paper silently drops it; catalogue erratum E6). The same
definition is used for every real ε (α = e^ε < 1 included, needed in the proofs of Theorems 6 and
14) and for non-negative measures that are not probability distributions (``measures=True``),
for which the scaling and sub-additivity rules of the catalogue §3.2 hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._numerics import (
    ULP,
    log1mexp,
    logsumexp_signed,
    lse_error,
    round_down_log,
    round_up_log,
)
from ._validation import check_int, check_pmf, check_real, check_real_array
from .errors import InvalidParameterError

__all__ = [
    "QuadratureResult",
    "align",
    "hockey_stick",
    "hockey_stick_density",
    "kl_divergence",
    "log_hockey_stick",
    "pearson_vajda",
    "renyi_divergence",
    "ternary_pearson_vajda",
    "total_variation",
]

_CHUNK = 4_000_000  # elements of the (ε × support) work array processed at once
_SUBNORMAL = math.ulp(0.0)  # 5e-324, the absolute rounding unit of the subnormal range
_TINY = float(np.finfo(float).tiny)  # 2.2e-308, the smallest normal float


def align(p: Any, q: Any, *, measures: bool = False, names=("p", "q")):
    """Validate two distributions and return them as float arrays on a common support.

    Dicts are aligned on the union of their keys (sorted when the keys are sortable); arrays must
    have the same length. Returns ``(p, q, support)`` where ``support`` is the list of keys for
    dict inputs and ``None`` for arrays.
    """
    if isinstance(p, Mapping) or isinstance(q, Mapping):
        if not (isinstance(p, Mapping) and isinstance(q, Mapping)):
            raise InvalidParameterError(
                f"{names[0]}, {names[1]}", "both arrays or both dicts", (type(p), type(q))
            )
        keys = list(dict.fromkeys([*p.keys(), *q.keys()]))
        try:
            keys.sort()
        except TypeError:
            pass
        pa = [p.get(k, 0.0) for k in keys]
        qa = [q.get(k, 0.0) for k in keys]
        support = keys
    else:
        pa, qa, support = p, q, None
    pa = check_pmf(names[0], pa, measure=measures)
    qa = check_pmf(names[1], qa, measure=measures)
    if pa.shape != qa.shape:
        raise InvalidParameterError(
            f"{names[0]}, {names[1]}", "arrays of the same length", (pa.size, qa.size)
        )
    return pa, qa, support


def _exponents(lp: np.ndarray, lq: np.ndarray, eps: np.ndarray, round_up: bool,
               same: np.ndarray | None = None, round_down: bool = False) -> np.ndarray:
    """``x = ε + log q − log p`` per (ε, outcome), shifted down by its rounding-error bound when
    ``round_up`` (so that ``1 − e^x`` is then an upper bound on the exact term), up by it when
    ``round_down`` (a lower bound on the term), clipped at 0.

    Entries with q = 0 give −inf (term = p); entries with p = 0 are handled by the callers.
    """
    with np.errstate(invalid="ignore"):
        x = eps[:, None] + (lq - lp)[None, :]
        if round_up or round_down:
            # |fl(x) − x| ≤ 2 ulp (|x| + |log p| + |log q|); log q − log p is exactly 0 when
            # p(z) = q(z) as floats (same function of the same number), leaving only ε's
            # rounding. (Equal *logarithms* of different floats do not qualify.)
            same_z = np.zeros(lp.shape, dtype=bool) if same is None else same
            logs = np.where(same_z, 0.0, np.abs(lq) + np.abs(lp))
            err = 2 * ULP * (np.abs(x) + logs[None, :])
            err = np.where(np.isfinite(x), err, 0.0)
            x = x - err if round_up else x + err
    x = np.where(np.isneginf(lq)[None, :], -np.inf, x)  # α·0 = 0 for every α, even α = ∞
    return np.minimum(x, 0.0)


def hockey_stick(p: Any, q: Any, eps: Any, *, measures: bool = False, round_up: bool = False):
    """Hockey-stick divergence ``D_{e^ε}(p ‖ q) = Σ_z [p(z) − e^ε q(z)]_+``, vectorised over ε.

    Parameters
    ----------
    p, q : array_like or dict
        Probability vectors on a common support (or dicts; see :func:`align`). With
        ``measures=True`` any finite non-negative measures.
    eps : float or array_like
        Any real ε, including ``-inf`` (α = 0: the total mass of p) and ``inf`` (α = ∞: the mass
        of p outside the support of q). ε < 0 is the α < 1 generalisation used in the proofs.
    measures : bool
        Accept non-negative measures that do not sum to 1.
    round_up : bool
        Return an upper bound that accounts for floating-point error: each exponent
        ``ε + log q − log p`` is lowered by its rounding-error bound before ``1 − e^x`` is taken
        (so terms near the kink ``p = e^ε q`` cannot be rounded away), and the sum is raised by
        the error bound of a pairwise sum of non-negative terms.

    Returns
    -------
    float or ndarray
        Same shape as ``eps``. For probability vectors the value lies in [0, 1] when ε ≥ 0.

    Examples
    --------
    Randomized response with p = 0.75 (its ψ_p at ε = 0 is 2p − 1 = 0.5):

    >>> hockey_stick([0.75, 0.25], [0.25, 0.75], 0.0)
    0.5
    """
    pa, qa, _ = align(p, q, measures=measures)
    eps_arr = check_real_array("eps", eps, "[-inf, inf]")
    flat = eps_arr.reshape(-1)
    mask = pa > 0
    w = pa[mask]
    lp = np.log(w)
    with np.errstate(divide="ignore"):
        lq = np.log(qa[mask])
    same = pa[mask] == qa[mask]
    out = np.empty(flat.shape)
    step = max(1, _CHUNK // max(1, w.size))
    for start in range(0, flat.size, step):
        x = _exponents(lp, lq, flat[start : start + step], round_up, same)
        terms = w[None, :] * -np.expm1(x)
        total = terms.sum(axis=1)
        if round_up:
            # each term ≤ 3 ulp relative and a pairwise sum of n terms ≥ 0 ≤ ⌈log2 n⌉ ulp, as
            # long as nothing is subnormal; a positive term in (or underflowed to) the
            # subnormal range is off by up to one subnormal in absolute terms
            total = total * (1.0 + (4.0 + math.ceil(math.log2(max(w.size, 2)))) * ULP)
            tiny = ((terms < _TINY) & (x < 0)).sum(axis=1)
            total = total + tiny * _SUBNORMAL
        out[start : start + step] = total
    out = out.reshape(eps_arr.shape)
    return float(out) if out.ndim == 0 else out


def log_hockey_stick(p: Any, q: Any, eps: Any, *, round_up: bool = False,
                     round_down: bool = False):
    """``log D_{e^ε}(p ‖ q)`` computed entirely in log space (no underflow for tiny values).

    Same conventions as :func:`hockey_stick` (probability vectors only), including ``round_up``
    (then the log-sum-exp is also raised by its own error bound). ``round_down`` gives a lower
    bound the same way with every shift reversed: exponents raised by their error bound (a term
    whose exponent may be ≥ 0 counts as 0), the log-sum-exp lowered by its error bound.

    >>> round(float(np.exp(log_hockey_stick([0.75, 0.25], [0.25, 0.75], 0.0))), 12)
    0.5
    """
    pa, qa, _ = align(p, q)
    eps_arr = check_real_array("eps", eps, "[-inf, inf]")
    flat = eps_arr.reshape(-1)
    mask = pa > 0
    lp = np.log(pa[mask])
    with np.errstate(divide="ignore"):
        lq = np.log(qa[mask])
    same = pa[mask] == qa[mask]
    out = np.empty(flat.shape)
    step = max(1, _CHUNK // max(1, lp.size))
    if round_up and round_down:
        raise InvalidParameterError("round_down", "not together with round_up", round_down)
    for start in range(0, flat.size, step):
        x = _exponents(lp, lq, flat[start : start + step], round_up, same, round_down)
        with np.errstate(divide="ignore"):
            terms = lp[None, :] + log1mexp(x)
        vals, _ = logsumexp_signed(terms, axis=1)
        out[start : start + step] = vals
    if round_up or round_down:
        # each term within a few ulp of its magnitude (log p ½ ulp, log1mexp a few): their
        # weighted mean magnitude is at most |log Σ| + log n (an entropy bound), covered by
        # 2 ulp (1 + |log Σ|) + (4 + ⌈log2 n⌉) ulp; the log-sum-exp's own rounding on top
        # (lse_error: the terms are of one sign)
        n = max(int(mask.sum()), 2)
        lse = lse_error(n, out)
        if round_up:
            out = round_up_log(out, (4.0 + math.ceil(math.log2(n))) * ULP + lse, ulps=2)
        else:
            out = round_down_log(out - (4.0 + math.ceil(math.log2(n))) * ULP - lse, ulps=2)
    out = out.reshape(eps_arr.shape)
    return float(out) if out.ndim == 0 else out


def total_variation(p: Any, q: Any) -> float:
    """Total variation distance ``½ Σ |p − q| = D_1(p ‖ q)`` between probability vectors.

    >>> total_variation([1.0, 0.0], [0.5, 0.5])
    0.5
    """
    pa, qa, _ = align(p, q)
    return 0.5 * math.fsum(np.abs(pa - qa).tolist())


@dataclass(frozen=True)
class QuadratureResult:
    """A numerical integral with its absolute error estimate (arrays when vectorised).

    ``upper`` and ``lower`` bracket the true value when the error estimate holds.
    """

    value: Any
    abserr: Any

    @property
    def upper(self):
        return np.asarray(self.value) + np.asarray(self.abserr)

    @property
    def lower(self):
        return np.maximum(np.asarray(self.value) - np.asarray(self.abserr), 0.0)


def hockey_stick_density(
    p: Callable[[float], float],
    q: Callable[[float], float],
    eps: Any,
    *,
    lower: float = -math.inf,
    upper: float = math.inf,
    log_density: bool = False,
    points: Any = None,
    epsabs: float = 1e-14,
    epsrel: float = 1e-10,
    limit: int = 500,
) -> QuadratureResult:
    """Hockey-stick divergence ``∫ [p(z) − e^ε q(z)]_+ dz`` between two densities on ℝ.

    Computed by adaptive Gauss–Kronrod quadrature (:func:`scipy.integrate.quad`); the returned
    :class:`QuadratureResult` carries the value and quad's absolute error estimate for each ε.
    The integrand is evaluated in log space, ``p · (1 − e^{ε + log q − log p})_+``, so huge ε and
    far tails do not overflow.

    Parameters
    ----------
    p, q : callable
        Densities (or log-densities with ``log_density=True``) of real scalars.
    eps : float or array_like
        Real ε values (α = e^ε); vectorised by looping.
    lower, upper : float
        Integration domain.
    points : sequence of float, optional
        Where the densities live (their modes, known kinks). On a finite domain privamp also
        partitions it uniformly and locates the kinks ``p = e^ε q`` on a fine grid; on an
        infinite one the points (or, without them, a window found by probing the densities on
        a log-spaced grid over ±[1e-6, 1e8]) delimit a finite window integrated with those
        break points, and the two tails are integrated separately. The end points of the
        supports of p and q are located automatically; jumps of a density *inside* its
        support are not, so pass them here. Plain adaptive quadrature over a wide domain can
        miss a narrow bump, or misjudge a jump, while reporting a tiny error.

    Examples
    --------
    The Gaussian mechanism with θ = 1 at ε = 1 (Theorem 4 gives 0.12693673750664):

    >>> from scipy import stats
    >>> r = hockey_stick_density(stats.norm(0, 1).logpdf, stats.norm(1, 1).logpdf, 1.0,
    ...                          log_density=True, lower=-40, upper=40, points=[1.5])
    >>> round(float(r.value), 10)
    0.1269367375
    """
    eps_arr = check_real_array("eps", eps, "(-inf, inf)")
    lo = check_real("lower", lower, "[-inf, inf)")
    hi = check_real("upper", upper, "(-inf, inf]")
    if lo >= hi:
        raise InvalidParameterError("upper", f"greater than lower = {lo!r}", hi)

    if log_density:
        logp, logq = p, q
    else:

        def logp(z):
            with np.errstate(divide="ignore"):
                return np.log(p(z))

        def logq(z):
            with np.errstate(divide="ignore"):
                return np.log(q(z))

    def integrand(z: float, e: float) -> float:
        lp = float(logp(z))
        if lp == -math.inf:
            return 0.0
        lq = float(logq(z))
        return math.exp(lp) * -math.expm1(min(0.0, e + lq - lp))

    user_points = [] if points is None else [float(x) for x in np.atleast_1d(points)]
    values = np.empty(eps_arr.size)
    errors = np.empty(eps_arr.size)
    for i, e in enumerate(eps_arr.reshape(-1)):
        val, err = _integrate_hockey(integrand, logp, logq, float(e), lo, hi, user_points,
                                     epsabs=epsabs, epsrel=epsrel, limit=limit)
        values[i], errors[i] = val, err
    shape = eps_arr.shape
    return QuadratureResult(values.reshape(shape)[()], errors.reshape(shape)[()])


def _break_points(logp, logq, e: float, lo: float, hi: float, user: list[float]) -> list[float]:
    """Break points for quad on a finite [lo, hi]: a uniform partition, the user's points, and
    the kinks where p = e^ε q, located on a fine grid. Adaptive quadrature over a wide domain
    without them can miss a narrow bump entirely while reporting a tiny error."""
    grid = np.linspace(lo, hi, 4097)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = _evaluate_on_grid(logp, grid) - (e + _evaluate_on_grid(logq, grid))
    sign = np.sign(np.nan_to_num(g, nan=0.0, posinf=1.0, neginf=-1.0))
    kinks = []
    for j in np.flatnonzero(sign[:-1] != sign[1:]):
        a, b = grid[j], grid[j + 1]
        if np.isfinite(g[j]) and np.isfinite(g[j + 1]) and g[j] * g[j + 1] < 0:
            def crossing(z, _e=e):
                return float(logp(z)) - (_e + float(logq(z)))

            from scipy import optimize  # deferred: scipy.optimize is slow to import

            kinks.append(optimize.brentq(crossing, a, b, xtol=1e-15, rtol=4 * ULP))
        else:
            kinks.append(0.5 * (a + b))
    edges = _support_edges(logp, grid) + _support_edges(logq, grid)
    pts = np.concatenate([np.linspace(lo, hi, 65)[1:-1], kinks, edges, user])
    return sorted({float(x) for x in pts if lo < x < hi})


def _support_edges(logf, grid: np.ndarray) -> list[float]:
    """End points of the support of a density (where log f switches between finite and −∞),
    located by bisection to machine precision between grid points."""
    with np.errstate(divide="ignore", invalid="ignore"):
        alive = np.isfinite(_evaluate_on_grid(logf, grid))
    edges = []
    for j in np.flatnonzero(alive[:-1] != alive[1:]):
        a, b, left = float(grid[j]), float(grid[j + 1]), bool(alive[j])
        for _ in range(80):
            mid = 0.5 * (a + b)
            if mid <= a or mid >= b:
                break
            with np.errstate(divide="ignore", invalid="ignore"):
                here = math.isfinite(float(logf(mid)))
            if here == left:
                a = mid
            else:
                b = mid
        edges.extend([a, b])
    return edges


def _mass_window(logp, logq, lo: float, hi: float) -> list[float]:
    """Where the densities live on an infinite domain: probe a log-spaced grid over ±[1e-6, 1e8]
    and keep the points within e^-80 of the largest density (plus one grid step each side)."""
    mag = np.geomspace(1e-6, 1e8, 400)
    grid = np.concatenate([-mag[::-1], [0.0], mag])
    grid = grid[(grid > lo) & (grid < hi)]
    if grid.size == 0:
        return []
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.maximum(_evaluate_on_grid(logp, grid), _evaluate_on_grid(logq, grid))
    dens = np.nan_to_num(dens, nan=-np.inf)
    if not np.any(np.isfinite(dens)):
        return []
    live = np.flatnonzero(dens >= np.max(dens) - 80.0)
    first, last = max(live[0] - 1, 0), min(live[-1] + 1, grid.size - 1)
    return [float(grid[first]), float(grid[last])]


def _evaluate_on_grid(func, grid: np.ndarray) -> np.ndarray:
    """``func`` on every grid point: one vectorised call when it accepts arrays, else a loop."""
    try:
        values = np.asarray(func(grid), dtype=float)
        if values.shape == grid.shape:
            return values
    except (TypeError, ValueError):
        pass
    return np.array([float(func(z)) for z in grid])


def _integrate_hockey(integrand, logp, logq, e, lo, hi, user, **kwargs):
    from scipy import integrate  # deferred: scipy.integrate is slow to import

    if math.isfinite(lo) and math.isfinite(hi):
        pts = _break_points(logp, logq, e, lo, hi, user)
        return integrate.quad(integrand, lo, hi, args=(e,), points=pts, **kwargs)
    inner = [x for x in user if lo < x < hi]
    if not inner:
        inner = _mass_window(logp, logq, lo, hi)
    if not inner:
        return integrate.quad(integrand, lo, hi, args=(e,), **kwargs)
    a, b = min(inner), max(inner)
    if a == b:
        a, b = a - 1.0, b + 1.0
    val, err = 0.0, 0.0
    if lo < a:
        v, r = integrate.quad(integrand, lo, a, args=(e,), **kwargs)
        val, err = val + v, err + r
    v, r = integrate.quad(integrand, a, b, args=(e,),
                          points=_break_points(logp, logq, e, a, b, inner), **kwargs)
    val, err = val + v, err + r
    if b < hi:
        v, r = integrate.quad(integrand, b, hi, args=(e,), **kwargs)
        val, err = val + v, err + r
    return val, err


def kl_divergence(p: Any, q: Any) -> float:
    """Kullback–Leibler divergence ``Σ p log(p/q)`` (``inf`` if p is not absolutely continuous
    with respect to q).

    >>> round(kl_divergence([0.5, 0.5], [0.25, 0.75]), 12)
    0.143841036226
    """
    from scipy import special  # deferred (import time; see privamp._special)

    pa, qa, _ = align(p, q)
    terms = special.rel_entr(pa, qa)
    if np.any(np.isinf(terms)):
        return math.inf
    return math.fsum(terms.tolist())


def renyi_divergence(p: Any, q: Any, order: Any):
    """Rényi divergence ``D_order(p ‖ q) = (1/(order − 1)) log Σ p^order q^{1−order}``.

    Vectorised over ``order`` ∈ [0, ∞]:

    * ``order = 1`` is the KL divergence (the limit); orders within 1e-5 of 1 use the
      cumulant expansion ``κ1 + κ2 t/2 + κ3 t²/6`` (t = order − 1) of the privacy loss, which
      avoids the 0/0 cancellation of the defining formula;
    * ``order = inf`` is ``log max_z p(z)/q(z)`` (the pure-DP ε of the pair);
    * ``order = 0`` is ``−log q(supp p)`` (``inf`` when the supports are disjoint);
    * ``inf`` is returned for order ≥ 1 when p puts mass where q does not.

    The vectors must sum to 1 within 1e-9; they are divided by their sums here, because near
    order 1 a deficit d of the total mass would otherwise add about −d/(order − 1).
    For order > 1 the sum is evaluated as ``M + (M + log Σ q e^{order (d − M)})/(order − 1)``
    with d = log p − log q and M = max d, which cannot overflow however large the order.

    >>> round(float(renyi_divergence([0.8, 0.2], [0.2, 0.8], 2.0)), 12)  # RR p = 0.8
    1.178654996342
    """
    pa, qa, _ = align(p, q)
    orders = check_real_array("order", order, "[0, inf]")
    pa = pa / math.fsum(pa.tolist())
    qa = qa / math.fsum(qa.tolist())
    mask = pa > 0
    lp = np.log(pa[mask])
    with np.errstate(divide="ignore"):
        lq = np.log(qa[mask])
    escapes = bool(np.any(np.isneginf(lq)))  # p-mass outside supp q
    loss = lp - lq  # privacy loss values under p (may be +inf)

    out = np.empty(orders.shape).reshape(-1)
    for i, a in enumerate(orders.reshape(-1)):
        if a == 1.0 or (abs(a - 1.0) < 1e-5 and not escapes):
            if escapes:
                out[i] = math.inf
                continue
            w = pa[mask]
            k1 = math.fsum((w * loss).tolist())
            c = loss - k1
            k2 = math.fsum((w * c * c).tolist())
            k3 = math.fsum((w * c * c * c).tolist())
            t = a - 1.0
            out[i] = k1 + k2 * t / 2.0 + k3 * t * t / 6.0
        elif math.isinf(a):
            out[i] = math.inf if escapes else float(np.max(loss))
        elif a == 0.0:
            mass = math.fsum(qa[mask].tolist())
            out[i] = math.inf if mass == 0.0 else -math.log(mass)
        elif a > 1.0:
            if escapes:
                out[i] = math.inf
                continue
            top = float(np.max(loss))
            val, _ = logsumexp_signed(lq + a * (loss - top))  # exponents ≤ 0
            out[i] = top + (top + float(val)) / (a - 1.0)
        else:
            with np.errstate(invalid="ignore"):
                terms = a * lp + (1.0 - a) * lq
            terms = np.where(np.isneginf(lq), -np.inf, terms)  # q = 0 and order < 1: no mass
            val, _ = logsumexp_signed(terms)
            out[i] = math.inf if val == -math.inf else float(val) / (a - 1.0)
    out = out.reshape(orders.shape)
    return float(out) if out.ndim == 0 else out


def pearson_vajda(p: Any, q: Any, ell: float, *, absolute: bool = False) -> float:
    """Pearson–Vajda divergences ``χ^ℓ(p ‖ q) = E_q[(p/q − 1)^ℓ]`` and ``|χ|^ℓ = E_q[|p/q − 1|^ℓ]``.

    The signed version needs an integer ``ell`` ≥ 1 (odd orders can be negative: Wang's slides,
    "Negative χ^α divergence in Poisson distribution"); the absolute one accepts real ell ≥ 1.
    Returns ``inf`` for ell > 1 when p puts mass where q does not.

    >>> round(pearson_vajda([0.5, 0.5], [0.25, 0.75], 2), 12)  # χ² = Σ (p−q)²/q
    0.333333333333
    """
    pa, qa, _ = align(p, q)
    if absolute:
        ell = check_real("ell", ell, "[1, inf)")
    else:
        ell = float(check_int("ell", ell, "[1, inf)"))
    diff = pa - qa
    escapes = bool(np.any((qa == 0) & (pa > 0)))
    if escapes and ell > 1:
        return math.inf
    keep = (qa > 0) & (diff != 0)
    d = diff[keep]
    with np.errstate(divide="ignore"):
        logs = ell * np.log(np.abs(d)) + (1.0 - ell) * np.log(qa[keep])
    if absolute or int(ell) % 2 == 0:
        signs = np.ones_like(d)
    else:
        signs = np.sign(d)
    extra = math.fsum(pa[(qa == 0)].tolist()) if ell == 1 else 0.0
    if d.size == 0:
        return extra
    val, sign = logsumexp_signed(logs, b=signs)
    return float(sign * np.exp(val)) + extra


def ternary_pearson_vajda(p: Any, q: Any, r: Any, ell: float) -> float:
    """Ternary ``|χ|^ℓ`` divergence ``E_r[|(p − q)/r|^ℓ]`` (Wang–Balle–Kasiviswanathan, W-15).

    Dicts are aligned on the union of all three key sets. Mass of ``p − q`` where r = 0 makes
    the value infinite for ℓ > 1; for ℓ = 1 it contributes ``|p − q|`` (the perspective of
    ``f(t) = |t|``, the same convention as :func:`pearson_vajda`), so the value is Σ|p − q|.

    >>> round(ternary_pearson_vajda([0.5, 0.5], [0.25, 0.75], [0.25, 0.75], 2), 12)
    0.333333333333
    """
    pa, qa, ra = _align_three(p, q, r)
    ell = check_real("ell", ell, "[1, inf)")
    d = np.abs(pa - qa)
    outside = (ra == 0) & (d > 0)
    if ell == 1.0:
        return math.fsum(d.tolist())
    if np.any(outside):
        return math.inf
    keep = (ra > 0) & (d > 0)
    if not np.any(keep):
        return 0.0
    logs = ell * np.log(d[keep]) + (1.0 - ell) * np.log(ra[keep])
    val, _ = logsumexp_signed(logs)
    return float(np.exp(val))


def _align_three(p: Any, q: Any, r: Any):
    """Align three distributions (arrays, or dicts on the union of their keys)."""
    if any(isinstance(d, Mapping) for d in (p, q, r)):
        if not all(isinstance(d, Mapping) for d in (p, q, r)):
            raise InvalidParameterError("p, q, r", "all arrays or all dicts",
                                        (type(p), type(q), type(r)))
        keys = list(dict.fromkeys([*p.keys(), *q.keys(), *r.keys()]))
        try:
            keys.sort()
        except TypeError:
            pass
        p, q, r = ([d.get(k, 0.0) for k in keys] for d in (p, q, r))
    pa, qa, _ = align(p, q)
    ra, _, _ = align(r, q, names=("r", "q"))
    return pa, qa, ra


def renyi_divergence_bounds(p: Any, q: Any, order: Any) -> tuple[np.ndarray, np.ndarray]:
    """Certified ``(upper, lower)`` on ``D_order(p ‖ q) = log Σ p^order q^{1−order}/(order − 1)``
    at orders in (1, ∞], for the vectors as given (not renormalised, unlike
    :func:`renyi_divergence`, the plain float evaluation): every rounding goes outward, so
    ``lower ≤ D ≤ upper`` exactly. ∞ where p has mass outside the support of q; at order ∞
    the largest log p_i/q_i. Used for the exact RDP of discrete pairs
    (:func:`privamp.rdp.mechanisms.discrete_pair_rdp`).

    Rounding (ULP = 2⁻⁵², NumPy's log taken within 4 ULP): each exponent
    x_i = order·log p_i + (1 − order) log q_i is within 6 ULP of mag_i =
    |order·log p_i| + |(order − 1) log q_i| (the two logarithms, the products, the sum), which
    moves log Σ e^{x_i} by at most 6 ULP of the largest mag_i; the log-sum-exp
    (:func:`~privamp._numerics.logsumexp_signed`, terms of one sign) adds at most
    :func:`~privamp._numerics.lse_error`. ``8 ULP·mag + 2·lse_error`` covers both; dividing by
    order − 1 (itself exact to ½ ULP) is covered by 4 ULP of
    :func:`~privamp._numerics.up_ulps`. The margin is absolute, so pairs that nearly coincide
    (a log-sum near 0) stay certified, with a lower end of 0. At order ∞ the ratio's two logs
    (4 ULP each) and their difference are covered by 8 ULP of their magnitudes.

    >>> up, lo = renyi_divergence_bounds([0.75, 0.25], [0.25, 0.75], [2.0])  # RR p = ¾
    >>> bool(lo[0] <= math.log(7 / 3) <= up[0])
    True
    """
    from ._numerics import down_ulps, up_ulps

    pa, qa, _ = align(p, q)
    orders = check_real_array("order", order, "(1, inf]", ndim=1)
    keep = pa > 0
    lp = np.log(pa[keep])
    with np.errstate(divide="ignore"):
        lq = np.log(qa[keep])
    if np.any(np.isneginf(lq)):
        inf = np.full(orders.shape, math.inf)
        return inf, inf.copy()
    upper = np.zeros(orders.shape)
    lower = np.zeros(orders.shape)
    finite = np.isfinite(orders)
    if lp.size and np.any(finite):
        a = orders[finite]
        s = a - 1.0
        x = a[:, None] * lp[None, :] - s[:, None] * lq[None, :]
        log_sum, _ = logsumexp_signed(x, axis=1)
        mag = np.max(np.abs(a[:, None] * lp[None, :]) + np.abs(s[:, None] * lq[None, :]),
                     axis=1)
        # the exponents' own errors (8 ULP of mag), then the sum's (lse_error, doubled)
        err = 8.0 * ULP * mag + 2.0 * lse_error(lp.size, log_sum)
        upper[finite] = up_ulps(np.maximum(log_sum + err, 0.0) / s, 4)
        lower[finite] = down_ulps(np.maximum(log_sum - err, 0.0) / s, 4)
    if lp.size and not np.all(finite):
        ratio = float(np.max(lp - lq))
        slack = 8.0 * ULP * float(np.max(np.abs(lp) + np.abs(lq)))
        upper[~finite] = max(ratio + slack, 0.0)
        lower[~finite] = max(ratio - slack, 0.0)
    return upper, lower

