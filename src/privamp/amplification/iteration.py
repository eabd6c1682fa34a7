"""Amplification by coupling and iteration: Rényi-DP bounds for post-processing with noise.

Balle, Barthe, Gaboardi, Geumlek (2019), §4 (catalogue §1.4–1.5). All statements are Rényi-DP
bounds returned as :class:`~privamp.rdp.RdpCurve` objects (upper bounds, rounded up) and hold
for the relation under which the sensitivity is stated (the paper uses substitution).

* **Theorem 2** (coupling bound). For ``ω`` and a coupling ``π ∈ C(ω, μ)``::

      R_α(μK ‖ νK) ≤ R_α(ω ‖ ν) + sup_{x ∈ supp ν} R_α((H_π K)(x) ‖ K(x)).

  For location families and translation kernels ``K(x) = x + noise`` the translation coupling
  turns this into ``min_a  D_M(a) + D_K(Δ − a)`` over the split ``a = ‖w − v‖ ∈ [0, Δ]``
  (:func:`translation_kernel_rdp`; any ``a`` gives a valid bound, so the numerical minimiser can
  only lose tightness, never validity).
* **Example 1** (iterated Gaussian, tight): ``order Δ²/(2(σ₁² + σ₂²))``
  (:func:`iterated_gaussian_rdp`, :func:`gaussian_split_bound`).
* **Example 2 / Lemma 3** (iterated Laplace): RDP through ``g_α`` with the optimal split found
  numerically (:func:`iterated_laplace_rdp`); no amplification for pure DP
  (:func:`iterated_laplace_pure_epsilon`).
* **Example 3** (Lipschitz Gaussian kernel): ``σ*² = σ₁² + σ₂²/L²``
  (:func:`lipschitz_gaussian_kernel_rdp`).
* **Theorem 4** (r-step projected noisy iterations with L-Lipschitz maps): the W∞-path bound
  eq. (2) (:func:`noisy_iteration_rdp_path`) and eq. (3) or its exact optimum over paths
  (:func:`noisy_iteration_rdp`).
* **Theorem 5** (noisy projected SGD, C-Lipschitz, β-smooth, ρ-strongly convex losses): per-index
  RDP (:class:`NoisySgdPrivacy`, :func:`noisy_sgd_rdp`).

Rényi orders are called ``order``. Curves are linear in the order for the Gaussian statements;
their default order grid (:data:`ITERATION_ORDERS`) extends :data:`~privamp.rdp.DEFAULT_ORDERS`
to 1e10 so that tiny per-order slopes still convert well to (ε, δ).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from .._numerics import (
    ULP,
    div_up,
    expm1_minus_x,
    log0,
    log1mexp,
    log_expm1,
    round_up_log,
    up_ulps,
)
from .._validation import check_choice, check_int, check_real, check_real_array
from ..errors import InvalidParameterError
from ..rdp import DEFAULT_ORDERS, RdpCurve
from ..relations import NeighbouringRelation

__all__ = [
    "ITERATION_ORDERS",
    "NoisySgdPrivacy",
    "TranslationBound",
    "gaussian_location_renyi",
    "gaussian_split_bound",
    "iterated_gaussian_rdp",
    "iterated_laplace_log_density",
    "iterated_laplace_privacy_loss",
    "iterated_laplace_pure_epsilon",
    "iterated_laplace_rdp",
    "laplace_location_renyi",
    "laplace_log_g",
    "lipschitz_gaussian_kernel_rdp",
    "noisy_iteration_rdp",
    "noisy_iteration_rdp_path",
    "noisy_sgd_rdp",
    "optimal_path_distances",
    "translation_kernel_rdp",
]

#: Default Rényi orders for curves linear in the order: DEFAULT_ORDERS (finite part) extended
#: geometrically to 1e10 (a slope s converts best near order sqrt(log(1/δ)/s)).
ITERATION_ORDERS = np.unique(np.concatenate([
    DEFAULT_ORDERS[np.isfinite(DEFAULT_ORDERS)],
    np.round(np.geomspace(1.2e4, 1e10, 30)),
]))


def _orders(orders: Any) -> np.ndarray:
    if orders is None:
        return ITERATION_ORDERS
    return check_real_array("orders", orders, "(1, inf]", ndim=1)


def _linear_curve(log_slope: float, orders: Any, label: str,
                  relation=None) -> RdpCurve:
    """``ε(order) = order · e^{log_slope}`` (rounded up); ``inf`` at order ∞ unless the slope is
    zero."""
    o = _orders(orders)
    log_slope = float(round_up_log(log_slope, ulps=32))
    with np.errstate(over="ignore", invalid="ignore"):
        eps = np.where(np.isinf(o), np.inf, np.exp(np.log(np.where(np.isinf(o), 1.0, o))
                                                    + log_slope))
    if log_slope == -math.inf:
        eps = np.zeros(o.shape)
    else:
        # a positive slope that underflows stays positive: 0 would claim identical output laws
        # (ε = 0 even at δ = 0); values in the subnormal range lose relative precision, so
        # everything below the smallest normal float is raised to it (an upper bound)
        tiny = float(np.finfo(float).tiny)
        eps = np.where(np.isfinite(eps), np.maximum(up_ulps(eps, 4), tiny), eps)
    return RdpCurve(o, eps, bound="upper", relation=relation, label=label)


# ---------------------------------------------------------------------------------------------
# location families and Theorem 2 with translation couplings
# ---------------------------------------------------------------------------------------------


def gaussian_location_renyi(distance: Any, order: Any, sigma: float):
    """``R_order(N(u, σ²I) ‖ N(v, σ²I)) = order ‖u − v‖²/(2σ²)`` (Mironov 2017, Prop. 7).

    Vectorised over ``distance`` = ‖u − v‖ ≥ 0 (and ``order``); ``inf`` at order ∞ for a
    positive distance.

    >>> round(gaussian_location_renyi(1.0, 2.0, 1.0), 12)
    1.0
    """
    d = check_real_array("distance", distance, "[0, inf)")
    o = check_real_array("order", order, "[1, inf]")
    s = check_real("sigma", sigma, "(0, inf)")
    with np.errstate(invalid="ignore"):
        val = o * d * d / (2.0 * s * s)
    val = np.where(d == 0.0, 0.0, val)
    val = up_ulps(val, 8)
    return float(val) if val.ndim == 0 else val


def laplace_log_g(order: Any, z: Any):
    """``log g_α(z)`` with ``g_α(z) = α/(2α−1) e^{z(α−1)} + (α−1)/(2α−1) e^{−zα}`` (BBGG
    Example 2; Mironov 2017, Corollary 2), evaluated with ``logaddexp`` (no overflow).

    >>> round(float(laplace_log_g(2.0, 1.0)), 10)   # catalogue test vector
    0.61912363
    """
    a = check_real_array("order", order, "(1, inf)")
    x = check_real_array("z", z, "[0, inf)")
    return _log_g(a, x)


def _log_g_with_error(a, x):
    """``log g_α(z)`` and a bound on its absolute error.

    Small u = z(α − 1): ``g − 1 = [α h(u) + (α − 1) h(−zα)]/(2α − 1)`` with h(x) = e^x − 1 − x
    (the first-order terms cancel exactly, αu = (α − 1)zα), a sum of non-negative terms, so
    ``log1p`` of it keeps full relative accuracy even where log g ≈ z²α(α − 1)/2 is tiny.
    Otherwise the ``logaddexp`` form, whose error is a few ulp of the exponents.

    Error of the small form: :func:`~privamp._numerics.expm1_minus_x` is a series for
    |x| < ½ (a few ulp) and ``expm1(x) − x`` beyond, where a 4-ulp ``expm1`` (see
    ``_numerics.FUNC_ULPS``) gives at most 4·|expm1 x|/h(x) + 1 ≤ 18.5 ulp (worst at |x| = ½);
    the weighted sum of non-negative terms adds 2, ``log1p`` (condition ≤ 1) 4: ≤ 24.5 ulp of
    the result, covered by 32.
    """
    a = np.asarray(a, dtype=float)
    x = np.asarray(x, dtype=float)
    a, x = np.broadcast_arrays(a, x)
    u = x * (a - 1)
    v = x * a
    small = (u <= 1.0) & (v <= 2.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        series = np.log1p((a * expm1_minus_x(np.where(small, u, 0.0))
                           + (a - 1) * expm1_minus_x(np.where(small, -v, 0.0))) / (2 * a - 1))
        direct = np.logaddexp(np.log(a) - np.log(2 * a - 1) + u,
                              np.log(a - 1) - np.log(2 * a - 1) - v)
    out = np.where(small, series, direct)
    err = np.where(small, 32 * ULP * np.abs(series),
                   8 * ULP * (1.0 + u + v + np.abs(np.log(2 * a - 1))))
    return out, err


def _log_g(a, x):
    out, _ = _log_g_with_error(a, x)
    return float(out) if np.ndim(out) == 0 else out


def laplace_location_renyi(distance: Any, order: Any, scale: float):
    """``R_order(Lap(u, λ) ‖ Lap(v, λ))`` with z = |u − v|/λ (Mironov 2017, Table II):

    * order > 1 (finite): ``log g_order(z)/(order − 1)`` (:func:`laplace_log_g`);
    * order = 1 (KL): ``z + e^{−z} − 1``;
    * order = ∞: ``z`` (the pure-DP ε).

    Rounded up (the error of ``log g`` is divided by ``order − 1``).

    >>> round(float(laplace_location_renyi(1.0, 2.0, 1.0)), 10)
    0.61912363
    """
    d = check_real_array("distance", distance, "[0, inf)")
    o = check_real_array("order", order, "[1, inf]")
    lam = check_real("scale", scale, "(0, inf)")
    d, o = np.broadcast_arrays(d, o)
    z = d / lam
    out = np.empty(np.broadcast(d, o).shape)
    inf = np.isinf(o)
    one = o == 1.0
    mid = ~inf & ~one
    out[inf] = z[inf]
    out[one] = z[one] + np.expm1(-z[one])
    if np.any(mid):
        a, x = o[mid], z[mid]
        lg, err = _log_g_with_error(a, x)
        out[mid] = (lg + err) / (a - 1)
    out = np.where(z == 0.0, 0.0, up_ulps(np.maximum(out, 0.0), 8))
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class TranslationBound:
    """Result of :func:`translation_kernel_rdp`.

    Attributes
    ----------
    curve : RdpCurve
        The Theorem 2 bound at each order (upper bound).
    split : ndarray
        The split ``a = ‖w − v‖`` (distance between the centres of ω and ν) that attains it, per
        order; the coupling shifts by ``Δ − a``.

    >>> b = iterated_laplace_rdp(1.0, 1.0, 2.0, orders=[3.0])
    >>> round(float(b.split[0]), 6)   # equal scales: the midpoint
    1.0
    """

    curve: RdpCurve
    split: np.ndarray = field(repr=False)


def translation_kernel_rdp(
    base_divergence: Callable[[np.ndarray, float], np.ndarray],
    kernel_divergence: Callable[[np.ndarray, float], np.ndarray],
    sensitivity: float,
    orders: Any = None,
    *,
    grid: int = 257,
    label: str | None = None,
) -> TranslationBound:
    """Theorem 2 (BBGG) for a location-family mechanism followed by a translation kernel.

    M(D) is a location family ``P_{f(D)}`` with ``R_order(P_w ‖ P_v) ≤ base_divergence(‖w − v‖,
    order)`` and K is a translation kernel ``K(x) = Q_x`` with ``R_order(Q_{x+τ} ‖ Q_x) ≤
    kernel_divergence(‖τ‖, order)``. Taking ``ω = P_w`` with w on the segment from v to u
    (‖u − v‖ ≤ Δ) and the translation coupling of ω and μ = P_u (shift τ = u − w), Theorem 2
    gives, for every split ``a = ‖w − v‖ ∈ [0, Δ]``::

        R_order(μK ‖ νK) ≤ base_divergence(a, order) + kernel_divergence(Δ − a, order).

    The best split is found per order on a grid of ``grid`` points refined by bounded Brent
    minimisation; the value reported is the bound *at* that split (valid for any split). Both
    callables must be non-decreasing in the distance (true for the Gaussian and Laplace
    families), so a sensitivity Δ covers every pair of neighbours.

    Parameters
    ----------
    base_divergence, kernel_divergence : callable
        ``(distances: ndarray, order: float) -> ndarray`` upper bounds on the Rényi divergences
        (e.g. :func:`gaussian_location_renyi`, :func:`laplace_location_renyi` with the scale
        bound via ``functools.partial`` or a lambda).
    sensitivity : float
        Δ ≥ 0, the largest distance ‖f(D) − f(D')‖ between neighbours.
    orders : array_like, optional
        Rényi orders (> 1, ``inf`` allowed); default :data:`ITERATION_ORDERS`.

    Examples
    --------
    Gaussian then Gaussian (Example 1): the optimum reproduces order Δ²/(2(σ₁² + σ₂²)).

    >>> b = translation_kernel_rdp(lambda d, o: gaussian_location_renyi(d, o, 1.0),
    ...                            lambda d, o: gaussian_location_renyi(d, o, 2.0), 1.0, [2.0])
    >>> round(float(b.curve.epsilons[0]), 9), round(float(b.split[0]), 6)   # 2/(2·5), θ = 1/5
    (0.2, 0.2)
    """
    delta = check_real("sensitivity", sensitivity, "[0, inf)")
    o = check_real_array("orders", ITERATION_ORDERS if orders is None else orders,
                         "(1, inf]", ndim=1)
    n = check_int("grid", grid, "[3, 100000]")
    from scipy import optimize  # deferred: scipy.optimize is slow to import

    values = np.empty(o.size)
    splits = np.empty(o.size)
    a_grid = np.linspace(0.0, delta, n)
    for j, order in enumerate(o):
        order = float(order)

        def total(a, order=order):
            a = np.clip(np.asarray(a, dtype=float), 0.0, delta)
            return (np.asarray(base_divergence(a, order), dtype=float)
                    + np.asarray(kernel_divergence(delta - a, order), dtype=float))

        vals = total(a_grid)
        vals = np.where(np.isnan(vals), np.inf, vals)
        k = int(np.argmin(vals))
        best_a, best = float(a_grid[k]), float(vals[k])
        if delta > 0 and math.isfinite(best):
            lo, hi = a_grid[max(k - 1, 0)], a_grid[min(k + 1, n - 1)]
            if hi > lo:
                res = optimize.minimize_scalar(lambda a: float(total(a)), bounds=(lo, hi),
                                               method="bounded",
                                               options={"xatol": 1e-12 * max(delta, 1.0)})
                cand = float(total(res.x))
                if cand < best:
                    best_a, best = float(res.x), cand
        values[j] = best
        splits[j] = best_a
    values = up_ulps(values, 8)
    curve = RdpCurve(o, np.maximum(values, 0.0), bound="upper",
                     label=label or "Theorem 2 (translation coupling)")
    return TranslationBound(curve, splits)


# ---------------------------------------------------------------------------------------------
# Example 1 and Example 3: Gaussian kernels
# ---------------------------------------------------------------------------------------------


def gaussian_split_bound(sigma1: float, sigma2: float, sensitivity: float, order: Any,
                         theta: Any, lipschitz: float = 1.0):
    """The Theorem 2 bound of Examples 1 and 3 at interpolation point θ (w = θu + (1 − θ)v)::

        (order/2) (θ²Δ²/σ₁² + L²(1 − θ)²Δ²/σ₂²).

    Minimal at ``θ* = (1 + σ₂²/(L²σ₁²))^{-1}`` (:func:`iterated_gaussian_rdp`,
    :func:`lipschitz_gaussian_kernel_rdp`). Vectorised over ``order`` and ``theta``.

    >>> gaussian_split_bound(1.0, 1.0, 1.0, 2.0, 0.5)   # 2/2 · (1/4 + 1/4)
    0.5
    """
    s1 = check_real("sigma1", sigma1, "(0, inf)")
    s2 = check_real("sigma2", sigma2, "(0, inf)")
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    o = check_real_array("order", order, "[1, inf)")
    t = check_real_array("theta", theta, "[0, 1]")
    lip = check_real("lipschitz", lipschitz, "[0, inf)")
    val = o / 2.0 * (t * t * d * d / (s1 * s1) + lip * lip * (1 - t) ** 2 * d * d / (s2 * s2))
    return float(val) if np.ndim(val) == 0 else val


def iterated_gaussian_rdp(sigma1: float, sigma2: float, sensitivity: float = 1.0,
                          orders: Any = None) -> RdpCurve:
    """Example 1 (BBGG): the Gaussian mechanism N(f(D), σ₁²I) post-processed by the Gaussian
    kernel K(x) = N(x, σ₂²I) is (order, order Δ²/(2(σ₁² + σ₂²)))-RDP — tight, since K∘M is the
    Gaussian mechanism with variance σ₁² + σ₂². Theorem 2 with the translation coupling at
    θ = (1 + σ₂²/σ₁²)^{-1} gives exactly this value (:func:`gaussian_split_bound`).

    >>> c = iterated_gaussian_rdp(1.0, 1.0, 1.0, orders=[2.0, 10.0])
    >>> [round(float(e), 12) for e in c.epsilons]
    [0.5, 2.5]
    """
    s1 = check_real("sigma1", sigma1, "(0, inf)")
    s2 = check_real("sigma2", sigma2, "(0, inf)")
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    log_slope = 2 * log0(d) - math.log(2.0) - math.log(s1 * s1 + s2 * s2)
    return _linear_curve(log_slope, orders, "iterated Gaussian (Example 1)")


def lipschitz_gaussian_kernel_rdp(sigma1: float, sigma2: float, lipschitz: float,
                                  sensitivity: float = 1.0, orders: Any = None) -> RdpCurve:
    """Example 3 (BBGG): Gaussian mechanism N(f(D), σ₁²I) post-processed by
    K(x) = N(ψ(x), σ₂²I) with ψ L-Lipschitz is (order, order Δ²/(2σ*²))-RDP with
    ``σ*² = σ₁² + σ₂²/L²`` (L = 0, a constant ψ, gives 0).

    >>> c = lipschitz_gaussian_kernel_rdp(1.0, 1.0, 0.5, orders=[2.0])   # σ*² = 1 + 4 = 5
    >>> round(float(c.epsilons[0]), 12)
    0.2
    """
    s1 = check_real("sigma1", sigma1, "(0, inf)")
    s2 = check_real("sigma2", sigma2, "(0, inf)")
    lip = check_real("lipschitz", lipschitz, "[0, inf)")
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    # Δ² / (2σ*²) = Δ² L² / (2 (L² σ₁² + σ₂²))
    log_slope = (2 * log0(d) + 2 * log0(lip) - math.log(2.0)
                 - math.log(lip * lip * s1 * s1 + s2 * s2))
    return _linear_curve(log_slope, orders, "Lipschitz Gaussian kernel (Example 3)")


# ---------------------------------------------------------------------------------------------
# Example 2 and Lemma 3: Laplace kernels
# ---------------------------------------------------------------------------------------------


def iterated_laplace_rdp(scale1: float, scale2: float, sensitivity: float = 1.0,
                         orders: Any = None, *, grid: int = 257) -> TranslationBound:
    """Example 2 (BBGG): Laplace mechanism Lap(f(D), λ₁) (f real with sensitivity Δ) then the
    Laplace kernel K(x) = Lap(x, λ₂). Theorem 2 with ω = Lap(w, λ₁) and a translation coupling::

        R_order ≤ (log g_order(|w − v|/λ₁) + log g_order(|u − w|/λ₂)) / (order − 1),

    minimised over w numerically (:func:`translation_kernel_rdp`). For λ₁ = λ₂ = λ the optimum
    is the midpoint, ``2 log g_order(Δ/(2λ))/(order − 1)``, below the base mechanism's
    ``log g_order(Δ/λ)/(order − 1)``. The improvement vanishes as order → ∞ (Lemma 3).

    >>> b = iterated_laplace_rdp(1.0, 1.0, 1.0, orders=[2.0])   # catalogue test vector
    >>> round(float(b.curve.epsilons[0]), 9), round(float(b.split[0]), 6)
    (0.400607792, 0.5)
    """
    l1 = check_real("scale1", scale1, "(0, inf)")
    l2 = check_real("scale2", scale2, "(0, inf)")
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    return translation_kernel_rdp(
        lambda a, o: laplace_location_renyi(a, o, l1),
        lambda a, o: laplace_location_renyi(a, o, l2),
        d, orders, grid=grid, label="iterated Laplace (Example 2)")


def iterated_laplace_pure_epsilon(scale1: float, scale2: float, sensitivity: float = 1.0):
    """Lemma 3 (BBGG): the pure-DP ε of the iterated Laplace mechanism is exactly
    ``Δ / max(λ₁, λ₂)`` — no amplification in (ε, 0)-DP.

    Lemma 3 shows K∘M is not (ε, 0)-DP for any smaller ε; post-processing gives the matching
    upper bound (K∘M post-processes both f + Lap(λ₁) and, by symmetry of the sum, f + Lap(λ₂)).
    Rounded up. :func:`iterated_laplace_privacy_loss` shows the loss approaching it in the tails.

    >>> iterated_laplace_pure_epsilon(1.0, 2.0, 1.0)
    0.5
    """
    l1 = check_real("scale1", scale1, "(0, inf)")
    l2 = check_real("scale2", scale2, "(0, inf)")
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    return div_up(d, max(l1, l2))


def iterated_laplace_log_density(x: Any, location: float, scale1: float, scale2: float):
    """Log-density of ``location + Lap(0, λ₁) + Lap(0, λ₂)`` at x (the output law of K∘M).

    With ``λ₁ ≥ λ₂`` (swap otherwise), z = |x − location| and c = 1/λ₂ − 1/λ₁ ≥ 0::

        p(z) = e^{−z/λ₁} (1 + (z/λ₁) h(zc)) / (2(λ₁ + λ₂)),   h(s) = (1 − e^{−s})/s,

    a form of ``(λ₁e^{−z/λ₁} − λ₂e^{−z/λ₂})/(2(λ₁² − λ₂²))`` without cancellation, continuous
    at λ₁ = λ₂ (where it is ``(λ + z)e^{−z/λ}/(4λ²)``).

    >>> round(float(np.exp(iterated_laplace_log_density(0.0, 0.0, 1.0, 1.0))), 12)
    0.25
    """
    xs = check_real_array("x", x, "(-inf, inf)")
    loc = check_real("location", location, "(-inf, inf)")
    l1 = check_real("scale1", scale1, "(0, inf)")
    l2 = check_real("scale2", scale2, "(0, inf)")
    big, small = max(l1, l2), min(l1, l2)
    z = np.abs(xs - loc)
    c = 1.0 / small - 1.0 / big
    s = z * c
    with np.errstate(invalid="ignore", divide="ignore"):
        h = np.where(s > 1e-8, -np.expm1(-s) / np.where(s > 0, s, 1.0), 1.0 - s / 2.0)
    out = -z / big + np.log1p(z / big * h) - math.log(2.0 * (big + small))
    return float(out) if out.ndim == 0 else out


def iterated_laplace_privacy_loss(x: Any, scale1: float, scale2: float,
                                  sensitivity: float = 1.0):
    """Privacy loss ``log p_Δ(x) − log p_0(x)`` of the iterated Laplace mechanism for the pair of
    inputs 0 and Δ. It is increasing in x and tends to ``Δ/max(λ₁, λ₂)`` (Lemma 3) as x → ∞.

    >>> round(float(iterated_laplace_privacy_loss(200.0, 1.0, 2.0, 1.0)), 6)
    0.5
    """
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    return (np.asarray(iterated_laplace_log_density(x, d, scale1, scale2))
            - np.asarray(iterated_laplace_log_density(x, 0.0, scale1, scale2)))[()]


# ---------------------------------------------------------------------------------------------
# Theorem 4: r-step projected noisy iterations
# ---------------------------------------------------------------------------------------------


def noisy_iteration_rdp_path(path_distances: Any, lipschitz: float, sigma: float,
                             orders: Any = None) -> RdpCurve:
    """Theorem 4, eq. (2) (BBGG): r projected noisy steps ``Y = Π_𝕂(ψ_i(x) + N(0, σ²I))`` with
    every ψ_i L-Lipschitz, started from μ and ν, for a path μ = μ₀, μ₁, …, μ_r = ν with
    ``W∞(μ_i, μ_{i−1}) ≤ w_i``::

        R_order(μK₁⋯K_r ‖ νK₁⋯K_r) ≤ (order L²/(2σ²)) Σ_{i=1}^r L^{2(r−i)} w_i².

    ``path_distances`` are the w_i (the caller asserts such a path exists; any path with
    Σ w_i = W∞(μ, ν) does, by interpolating along an optimal coupling). Evaluated in log space.

    >>> c = noisy_iteration_rdp_path([0.5, 0.5], 1.0, 1.0, orders=[2.0])   # (2/2)(1/4 + 1/4)
    >>> round(float(c.epsilons[0]), 12)
    0.5
    """
    w = check_real_array("path_distances", path_distances, "[0, inf)", ndim=1)
    lip = check_real("lipschitz", lipschitz, "[0, inf)")
    s = check_real("sigma", sigma, "(0, inf)")
    r = w.size
    i = np.arange(1, r + 1)
    with np.errstate(divide="ignore"):
        log_w2 = 2 * np.log(w)
        log_l = log0(lip)
        if lip == 0.0:
            log_pow = np.where(i == r, 0.0, -np.inf)   # L^0 = 1
        else:
            log_pow = 2 * (r - i) * log_l
    terms = log_pow + log_w2
    log_sum = float(special.logsumexp(terms)) if np.any(np.isfinite(terms)) else -math.inf
    log_slope = 2 * log_l - math.log(2.0) - 2 * math.log(s) + log_sum
    return _linear_curve(log_slope, orders, f"Theorem 4 eq. (2), r={r}")


def _log_geometric_sum(log_q: float, r: int) -> float:
    """``log Σ_{j=0}^{r−1} q^j`` for q = e^{log_q} ≥ 0."""
    if r == 1 or log_q == -math.inf:
        return 0.0
    if log_q == 0.0:
        return math.log(r)
    if log_q < 0:
        return float(log1mexp(r * log_q) - log1mexp(log_q))
    return float(log_expm1(r * log_q) - log_expm1(log_q))


def optimal_path_distances(sensitivity: float, lipschitz: float, steps: int) -> np.ndarray:
    """The W∞ steps minimising eq. (2) subject to Σ w_i = Δ: ``w_i ∝ L^{−2(r−i)}``.

    >>> optimal_path_distances(1.0, 1.0, 4)
    array([0.25, 0.25, 0.25, 0.25])
    """
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    lip = check_real("lipschitz", lipschitz, "(0, inf)")
    r = check_int("steps", steps, "[1, inf)")
    i = np.arange(1, r + 1)
    log_w = -2.0 * (r - i) * math.log(lip)
    return d * np.exp(log_w - special.logsumexp(log_w))


def noisy_iteration_rdp(sensitivity: float, lipschitz: float, sigma: float, steps: int,
                        orders: Any = None, *, form: str = "paper") -> RdpCurve:
    """Theorem 4 with ``W∞(μ, ν) = Δ`` (BBGG): r projected noisy L-Lipschitz steps.

    * ``form="paper"``: eq. (3), ``order Δ² L^{r+1}/(2rσ²)``, for L ≤ 1. With L = 1 this is the
      O(1/r) rate ``order Δ²/(2rσ²)`` of Feldman et al. 2018, Theorem 1.
    * ``form="tight"``: the exact minimum of eq. (2) over paths with Σ w_i = Δ (catalogue §1.5,
      recomputed), ``order L²Δ² / (2σ² Σ_{k=0}^{r−1} L^{−2k})``, valid for every L ≥ 0. Eq. (3)
      is its AM–GM relaxation, so tight ≤ paper.

    Raises :class:`~privamp.errors.InvalidParameterError` for L > 1 with ``form="paper"``.

    >>> round(float(noisy_iteration_rdp(1.0, 0.9, 1.0, 10, [2.0]).epsilons[0]), 10)
    0.0313810596
    >>> round(float(noisy_iteration_rdp(1.0, 0.9, 1.0, 10, [2.0], form="tight").epsilons[0]), 10)
    0.0262966194
    """
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    lip = check_real("lipschitz", lipschitz, "[0, inf)")
    s = check_real("sigma", sigma, "(0, inf)")
    r = check_int("steps", steps, "[1, inf)")
    form = check_choice("form", form, ("paper", "tight"))
    log_l = log0(lip)
    base = 2 * log0(d) - math.log(2.0) - 2 * math.log(s)
    if form == "paper":
        if lip > 1.0:
            raise InvalidParameterError(
                "lipschitz", "in [0, 1] for eq. (3) of Theorem 4 (use form='tight' for L > 1)",
                lip)
        log_slope = base + (r + 1) * log_l - math.log(r)
    else:
        # L^{2r} / Σ_{j=0}^{r−1} L^{2j}  (= L² / Σ_k L^{−2k})
        log_slope = base + 2 * r * log_l - _log_geometric_sum(2 * log_l, r) \
            if lip > 0 else -math.inf
    return _linear_curve(log_slope, orders, f"Theorem 4 ({form}), r={r}")


# ---------------------------------------------------------------------------------------------
# Theorem 5: per-index RDP of noisy projected SGD
# ---------------------------------------------------------------------------------------------


def _fraction_up(q: Fraction) -> float:
    f = float(q)
    if Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


@dataclass(frozen=True)
class NoisySgdPrivacy:
    """Per-index Rényi DP of NoisyProjSGD (BBGG Algorithm 1, Theorem 5).

    One pass of ``x_i = Π_𝕂(x_{i−1} − η(∇ℓ(x_{i−1}, z_i) + Z))``, ``Z ~ N(0, σ²I)``, over a
    dataset of n records, with a loss that is C-Lipschitz, β-smooth and ρ-strongly convex on 𝕂.
    If ``η ≤ 2/(β + ρ)``, the final iterate is (order, order ϵ_i)-RDP *at index i* (for datasets
    differing in the i-th record: substitution)::

        ϵ_n = 2C²/σ²,
        ϵ_i = 2C²/((n − i)σ²) · (1 − 2ηβρ/(β + ρ))^{(n−i+1)/2},   1 ≤ i ≤ n − 1.

    It follows from Theorem 4 eq. (3) with step sensitivity 2ηC, step noise ησ and contraction
    ``L = sqrt(1 − 2ηβρ/(β + ρ))`` of the gradient step, over r = n − i steps. ``form="tight"``
    uses the exact path optimum of eq. (2) instead, ``2C²/σ² · L^{2r}/Σ_{j<r} L^{2j}`` (never
    larger). ρ = 0 (convex) gives Feldman et al.'s ``2C²/((n − i)σ²)``.

    Parameters
    ----------
    n : int
        Number of records (= steps), n ≥ 1.
    step_size : float
        η > 0, at most ``2/(smoothness + strong_convexity)`` (checked exactly).
    lipschitz : float
        C ≥ 0, a bound on every per-example gradient norm on 𝕂.
    smoothness : float
        β ≥ 0.
    strong_convexity : float
        ρ ∈ [0, β].
    sigma : float
        σ > 0, the gradient-noise standard deviation (the step noise is ησ).
    form : {"paper", "tight"}
        Theorem 5 as printed, or the exact optimum of the path bound.

    Examples
    --------
    The catalogue's test vector (C = σ = β = 1, ρ = 0.5, η = 1, n = 10; factor 1/3):

    >>> p = NoisySgdPrivacy(n=10, step_size=1.0, lipschitz=1.0, smoothness=1.0,
    ...                     strong_convexity=0.5, sigma=1.0)
    >>> [round(float(v), 10) for v in p.rdp_slope([1, 5, 9, 10])]
    [0.0009144947, 0.0148148148, 0.6666666667, 2.0]
    >>> round(p.epsilon(10, 1e-5), 4)   # the last record: Gaussian with σ/(2C) = 1/2
    10.7676
    """

    n: int
    step_size: float
    lipschitz: float
    smoothness: float
    strong_convexity: float
    sigma: float
    form: str = "paper"
    relation: NeighbouringRelation = NeighbouringRelation.SUBSTITUTE

    def __post_init__(self):
        n = check_int("n", self.n, "[1, inf)")
        eta = check_real("step_size", self.step_size, "(0, inf)")
        c = check_real("lipschitz", self.lipschitz, "[0, inf)")
        beta = check_real("smoothness", self.smoothness, "[0, inf)")
        rho = check_real("strong_convexity", self.strong_convexity, "[0, inf)")
        sigma = check_real("sigma", self.sigma, "(0, inf)")
        form = check_choice("form", self.form, ("paper", "tight"))
        if rho > beta:
            raise InvalidParameterError(
                "strong_convexity", f"at most smoothness = {beta!r} (a ρ-strongly convex, "
                "β-smooth function has ρ ≤ β)", rho)
        fb, fr, fe = Fraction(beta), Fraction(rho), Fraction(eta)
        if fb + fr > 0 and fe * (fb + fr) > 2:
            limit = Fraction(2) / (fb + fr)
            largest = float(limit)
            if Fraction(largest) > limit:
                largest = math.nextafter(largest, 0.0)
            raise InvalidParameterError(
                "step_size", "at most 2/(smoothness + strong_convexity) (Theorem 5; the largest "
                f"admissible float is {largest!r})", eta)
        for name, value in (("n", n), ("step_size", eta), ("lipschitz", c), ("smoothness", beta),
                            ("strong_convexity", rho), ("sigma", sigma), ("form", form)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))

    @property
    def contraction_squared(self) -> float:
        """``L² = 1 − 2ηβρ/(β + ρ)`` (exact rational arithmetic, rounded up; 1 when β + ρ = 0)."""
        fb, fr, fe = Fraction(self.smoothness), Fraction(self.strong_convexity), \
            Fraction(self.step_size)
        if fb + fr == 0:
            return 1.0
        return _fraction_up(1 - 2 * fe * fb * fr / (fb + fr))

    @property
    def contraction(self) -> float:
        """L, the Lipschitz constant of the gradient step ``x ↦ x − η∇ℓ(x, z)`` (rounded up)."""
        l2 = self.contraction_squared
        root = math.sqrt(l2)
        if Fraction(root) ** 2 < Fraction(l2):
            root = math.nextafter(root, math.inf)
        return root

    def _check_index(self, index: Any) -> np.ndarray:
        arr = np.atleast_1d(np.asarray(index))
        if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f"
                                               and np.all(np.isfinite(arr))
                                               and np.all(arr == np.round(arr))):
            raise InvalidParameterError("index", f"an integer in [1, {self.n}]", index)
        arr = arr.astype(np.int64)
        bad = (arr < 1) | (arr > self.n)
        if np.any(bad):
            raise InvalidParameterError("index", f"an integer in [1, {self.n}]",
                                        int(arr[bad][0]))
        return arr

    def log_rdp_slope(self, index: Any):
        """``log ϵ_i`` (rounded up), vectorised over indices i ∈ [1, n]; ``-inf`` where ϵ_i = 0."""
        idx = self._check_index(index)
        log_base = 2 * log0(self.lipschitz) + math.log(2.0) - 2 * math.log(self.sigma)
        l2 = self.contraction_squared
        log_l2 = log0(l2)
        r = (self.n - idx).astype(float)
        out = np.full(idx.shape, log_base)
        inner = r > 0
        if np.any(inner):
            rr = r[inner]
            if self.form == "paper":
                with np.errstate(invalid="ignore"):
                    val = log_base - np.log(rr) + (rr + 1) / 2 * log_l2
            else:
                val = np.array([log_base + ri * log_l2 - _log_geometric_sum(log_l2, int(ri))
                                if l2 > 0 else -math.inf for ri in rr])
            out[inner] = np.where(np.isnan(val), -np.inf, val)
        out = round_up_log(out, ulps=32)
        return float(out[0]) if np.ndim(index) == 0 else out

    def rdp_slope(self, index: Any):
        """ϵ_i: the curve at index i is ``order ↦ order ϵ_i`` (vectorised over indices). A
        positive ϵ_i below the float range is reported as the smallest positive float; use
        :meth:`log_rdp_slope` for its size."""
        log_v = np.asarray(self.log_rdp_slope(index))
        v = np.where(np.isneginf(log_v), 0.0, np.maximum(np.exp(log_v), math.ulp(0.0)))
        return float(v) if np.ndim(v) == 0 else v

    def rdp(self, index: int, orders: Any = None) -> RdpCurve:
        """The RDP curve at one index (upper bound)."""
        i = check_int("index", index, f"[1, {self.n}]")
        return _linear_curve(float(self.log_rdp_slope(i)), orders,
                             f"NoisyProjSGD index {i}/{self.n} ({self.form})", self.relation)

    def epsilon(self, index: int, delta: float, orders: Any = None) -> float:
        """(ε, δ)-DP at index i, converted from the RDP curve with
        :meth:`~privamp.rdp.RdpCurve.epsilon` (the optimal RDP conversion; rounded up)."""
        return float(self.rdp(index, orders).epsilon(delta, warn=False))


def noisy_sgd_rdp(n: int, index: int, *, step_size: float, lipschitz: float, smoothness: float,
                  strong_convexity: float, sigma: float, orders: Any = None,
                  form: str = "paper") -> RdpCurve:
    """Theorem 5 (BBGG) as a function: the RDP curve of NoisyProjSGD at one index
    (see :class:`NoisySgdPrivacy`).

    >>> c = noisy_sgd_rdp(10, 5, step_size=1.0, lipschitz=1.0, smoothness=1.0,
    ...                   strong_convexity=0.5, sigma=1.0, orders=[2.0])
    >>> round(float(c.epsilons[0]), 10)   # 2 · ϵ_5 = 2 · 0.4/27
    0.0296296296
    """
    return NoisySgdPrivacy(n, step_size, lipschitz, smoothness, strong_convexity, sigma,
                           form).rdp(index, orders)

