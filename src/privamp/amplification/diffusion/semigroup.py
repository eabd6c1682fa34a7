"""Theorem 6 numerically: diffusion semigroups given by their transition kernels (Balle,
Barthe, Gaboardi, Geumlek 2019, §5.1; see :mod:`privamp.amplification.diffusion`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validation import check_real, check_real_array
from ...divergences import QuadratureResult
from ...errors import InvalidParameterError, NumericalError
from .mechanisms import _check_ou

__all__ = [
    "DiffusionSemigroup",
    "brownian_semigroup",
    "intrinsic_sensitivity_numerical",
    "ou_semigroup",
    "transition_renyi_divergence",
]


# ---------------------------------------------------------------------------------------------
# Theorem 6 numerically: semigroups given by their transition kernels
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffusionSemigroup:
    """A Markov diffusion semigroup on R^d given by its transition log-density and carré du
    champ, for the numerical checks of Theorem 6.

    Parameters
    ----------
    log_transition : callable
        ``log_transition(t, x, y)``: log of the Lebesgue density of P_t(x) at the points y
        (rows of a 2-D array), up to an additive term that may depend on t and y but not on x.
        The kernel with respect to the invariant measure λ differs by ``− log(dλ/dy)``, which
        cancels in ``log p_t(x, y)/p_t(x', y)`` (the only quantity Theorem 6 uses).
    carre_du_champ : callable
        ``Γ(f)`` as a function of the gradient ∇f (rows of a 2-D array): ``½⟨vvᵀ∇f, ∇f⟩`` for
        the SDE ``dX = u dt + v dW``.
    name : str
        A label.
    """

    log_transition: Callable[[float, np.ndarray, np.ndarray], np.ndarray]
    carre_du_champ: Callable[[np.ndarray], np.ndarray]
    name: str = "semigroup"


def brownian_semigroup() -> DiffusionSemigroup:
    """Brownian motion ``dX = √2 dW``: P_t(x) = N(x, 2tI), ``Γ(f) = ‖∇f‖²`` (Example 4).

    >>> s = brownian_semigroup()
    >>> float(s.carre_du_champ(np.array([[3.0, 4.0]]))[0])
    25.0
    """

    def log_transition(t, x, y):
        return -np.sum((y - x) ** 2, axis=-1) / (4.0 * t)

    return DiffusionSemigroup(log_transition, lambda g: np.sum(g * g, axis=-1),
                              "Brownian motion")


def ou_semigroup(theta: float, rho: float) -> DiffusionSemigroup:
    """Ornstein–Uhlenbeck ``dX = −θX dt + √2ρ dW``: P_t(x) = N(e^{−θt}x, (ρ²/θ)(1 − e^{−2θt})I),
    ``Γ(f) = ρ²‖∇f‖²`` (BBGG §5.1).

    >>> s = ou_semigroup(1.0, 2.0)
    >>> float(s.carre_du_champ(np.array([[1.0, 0.0]]))[0])
    4.0
    """
    theta, rho = _check_ou(theta, rho)

    def log_transition(t, x, y):
        var = rho * rho / theta * -math.expm1(-2 * theta * t)
        return -np.sum((y - math.exp(-theta * t) * x) ** 2, axis=-1) / (2.0 * var)

    return DiffusionSemigroup(log_transition, lambda g: rho * rho * np.sum(g * g, axis=-1),
                              f"Ornstein-Uhlenbeck theta={theta:g} rho={rho:g}")


def _kappa(semigroup: DiffusionSemigroup, x: np.ndarray, xp: np.ndarray, s: float,
           ys: np.ndarray, step: float) -> float:
    """κ_{x,x'}(s) = max over the points y of Γ(∇_y log p_s(x, y)/p_s(x', y)), with the
    gradient by central differences (exact for log-ratios that are affine in y)."""
    d = ys.shape[1]
    grads = np.empty_like(ys)
    for j in range(d):
        e = np.zeros(d)
        h = step * (1.0 + np.abs(ys[:, j]))
        e[j] = 1.0
        plus = ys + h[:, None] * e
        minus = ys - h[:, None] * e
        f_plus = semigroup.log_transition(s, x, plus) - semigroup.log_transition(s, xp, plus)
        f_minus = semigroup.log_transition(s, x, minus) - semigroup.log_transition(s, xp, minus)
        grads[:, j] = (f_plus - f_minus) / (2.0 * h)
    return float(np.max(semigroup.carre_du_champ(grads)))


def intrinsic_sensitivity_numerical(
    semigroup: DiffusionSemigroup, x: Any, x_prime: Any, t: float, *, y_points: Any = None,
    step: float = 1e-5, epsabs: float = 1e-13, epsrel: float = 1e-9,
) -> QuadratureResult:
    """``∫_t^∞ κ_{x,x'}(s) ds`` of Theorem 6 computed from the semigroup's transition density.

    κ is evaluated at each s by numerical differentiation of ``log p_s(x, y)/p_s(x', y)`` in y
    and a maximum over ``y_points`` (default: 65 points spread over the segment between the two
    means and beyond); the integral over [t, ∞) is adaptive Gauss–Kronrod quadrature. Λ(t) is
    this value for a pair of inputs at the sensitivity (for Brownian motion and OU it depends
    only on ‖x − x'‖).

    This is a *verification* of closed forms (tests compare it with
    :func:`brownian_intrinsic_sensitivity` and :func:`ou_intrinsic_sensitivity`), not a
    guarantee: the supremum over y is taken over finitely many points (exact when κ does not
    depend on y, as for both semigroups above) and the result carries quad's error estimate.

    >>> r = intrinsic_sensitivity_numerical(ou_semigroup(1.0, 1.0), [0.0], [1.0], 1.0)
    >>> round(float(r.value), 8)
    0.07825882
    """
    xa = check_real_array("x", x, "(-inf, inf)", ndim=1)
    xb = check_real_array("x_prime", x_prime, "(-inf, inf)", ndim=1)
    if xa.shape != xb.shape:
        raise InvalidParameterError("x_prime", f"a vector of dimension {xa.size}", xb.shape)
    t = check_real("t", t, "(0, inf)")
    if y_points is None:
        lam = np.linspace(-2.0, 3.0, 65)[:, None]
        ys = xa[None, :] + lam * (xb - xa)[None, :] + 0.37 * np.linspace(-1, 1, 65)[:, None]
    else:
        ys = check_real_array("y_points", y_points, "(-inf, inf)", ndim=2)
        if ys.shape[1] != xa.size:
            raise InvalidParameterError("y_points", f"points of dimension {xa.size}", ys.shape)

    def kappa(s):
        return _kappa(semigroup, xa, xb, s, ys, step)

    from scipy import integrate  # deferred: scipy.integrate is slow to import

    val, err = integrate.quad(kappa, t, math.inf, epsabs=epsabs, epsrel=epsrel, limit=200)
    return QuadratureResult(val, err)


_WIDE = np.concatenate([-np.geomspace(1e5, 1e-4, 3000), [0.0], np.geomspace(1e-4, 1e5, 3000)])


def _window(values: np.ndarray, grid: np.ndarray, drop: float = 60.0) -> tuple[float, float, float]:
    """``[lo, hi]`` around where ``values`` (logs on ``grid``) exceed their maximum − drop, padded
    by a grid step on each side, and the grid point of the maximum."""
    values = np.where(np.isnan(values), -np.inf, values)
    k = int(np.argmax(values))
    live = np.flatnonzero(values > values[k] - drop)
    lo = grid[max(live[0] - 1, 0)]
    hi = grid[min(live[-1] + 1, grid.size - 1)]
    return float(lo), float(hi), float(grid[k])


def transition_renyi_divergence(semigroup: DiffusionSemigroup, x: float, x_prime: float,
                                t: float, order: float, *, epsabs: float = 0.0,
                                epsrel: float = 1e-11) -> QuadratureResult:
    """``R_order(P_t(x) ‖ P_t(x'))`` for a one-dimensional semigroup, by quadrature.

    ``log_transition`` is normalised numerically first (it may omit constants), then
    ``(1/(order − 1)) log ∫ p^order q^{1−order}`` is integrated with the exponent shifted by its
    maximum. Windows are located on a log-spaced grid over ±[1e-4, 1e5] (bumps narrower than
    about 1% of their distance from 0 may be missed). Theorem 6 says the result is at most
    order·Λ(t) when ‖x − x'‖ ≤ Δ (with equality for the Gaussian semigroups here). A
    verification tool, like :func:`intrinsic_sensitivity_numerical`; the returned error is
    quad's estimate propagated to the logarithm.

    >>> r = transition_renyi_divergence(brownian_semigroup(), 0.0, 1.0, 0.5, 2.0)
    >>> round(float(r.value), 9)   # 2 · Δ²/(4t) = 1
    1.0
    """
    xa = np.array([check_real("x", x, "(-inf, inf)")])
    xb = np.array([check_real("x_prime", x_prime, "(-inf, inf)")])
    t = check_real("t", t, "(0, inf)")
    a = check_real("order", order, "(1, inf)")

    def logp(y, at):
        return np.asarray(semigroup.log_transition(t, at, np.atleast_1d(y)[:, None]),
                          dtype=float)

    from scipy import integrate  # deferred: scipy.integrate is slow to import

    def log_integral(func):
        lo, hi, mode = _window(func(_WIDE), _WIDE)
        ys = np.linspace(lo, hi, 4001)
        shift = float(np.max(func(ys)))
        pts = [mode] if lo < mode < hi else None
        val, err = integrate.quad(lambda y: math.exp(float(func(np.array([y]))[0]) - shift),
                                  lo, hi, points=pts, limit=400, epsabs=epsabs, epsrel=epsrel)
        if not val > 0:
            raise NumericalError("a transition density integral underflowed")
        return shift + math.log(val), err / val

    ca, ea = log_integral(lambda y: logp(y, xa))
    cb, eb = log_integral(lambda y: logp(y, xb))
    lv, ev = log_integral(lambda y: a * (logp(y, xa) - ca) + (1 - a) * (logp(y, xb) - cb))
    out = lv / (a - 1)
    out_err = (ev + a * ea + abs(1 - a) * eb) / (a - 1)
    return QuadratureResult(out, out_err)
