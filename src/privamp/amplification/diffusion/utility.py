"""Utility of the Ornstein-Uhlenbeck mechanism: eq. (4), Gaussian comparisons, Theorem 8
(Balle, Barthe, Gaboardi, Geumlek 2019, §5.2; see :mod:`privamp.amplification.diffusion`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..._numerics import up_ulps
from ..._validation import check_int, check_real, check_real_array
from ...errors import InvalidParameterError, NumericalError
from ...relations import NeighbouringRelation
from .mechanisms import OrnsteinUhlenbeckMechanism, _check_ou, ou_intrinsic_sensitivity

__all__ = [
    "OUParameters",
    "ou_gaussian_mse",
    "ou_mse",
    "ou_mse_ratio",
    "ou_parameters",
    "post_processed_gaussian_mse",
    "theorem8_condition",
    "theorem8_ratio_bound",
]


# ---------------------------------------------------------------------------------------------
# utility: eq. (4), Gaussian comparisons, Theorem 8
# ---------------------------------------------------------------------------------------------



def ou_mse(theta: float, rho: float, t: Any, dimension: int, norm: float):
    """Eq. (4): ``E_OU = E‖f(D) − M_t(D)‖² = (1 − e^{−θt})²‖f(D)‖² + (dρ²/θ)(1 − e^{−2θt})``.

    Vectorised over t ≥ 0 (``norm`` = ‖f(D)‖; use R for the worst case).

    >>> round(ou_mse(math.log(1.5), math.sqrt(0.1621860432), 1.0, 1, 1.0), 9)
    0.333333333
    """
    theta, rho = _check_ou(theta, rho)
    ts = check_real_array("t", t, "[0, inf]")
    d = check_int("dimension", dimension, "[1, inf)")
    r = check_real("norm", norm, "[0, inf)")
    bias = -np.expm1(-theta * ts)
    out = bias * bias * r * r + d * rho * rho / theta * -np.expm1(-2 * theta * ts)
    return float(out) if out.ndim == 0 else out


def ou_gaussian_mse(theta: float, rho: float, t: Any, dimension: int):
    """``E_GM = dσ̃² = dρ²(e^{2θt} − 1)/θ``: the MSE of the Gaussian mechanism with the same RDP
    as the OU mechanism at time t. Vectorised over t ≥ 0.

    >>> round(ou_gaussian_mse(math.log(1.5), math.sqrt(0.1621860432), 1.0, 1), 9)
    0.5
    """
    theta, rho = _check_ou(theta, rho)
    ts = check_real_array("t", t, "[0, inf]")
    d = check_int("dimension", dimension, "[1, inf)")
    with np.errstate(over="ignore"):
        out = d * rho * rho / theta * np.expm1(2 * theta * ts)
    return float(out) if out.ndim == 0 else out


def post_processed_gaussian_mse(sigma: float, dimension: int, radius: float) -> float:
    """Worst-case MSE over ‖f(D)‖ ≤ R of the optimally shrunk Gaussian mechanism
    ``β(f(D) + N(0, σ²I))`` with β = R²/(R² + dσ²): ``dσ²/(1 + dσ²/R²)`` (the bound
    ``E_PGM ≤ E_GM (1 + dσ̃²/R²)^{-1}`` of BBGG §5.1, attained at ‖f(D)‖ = R).

    >>> post_processed_gaussian_mse(1.0, 1, 1.0)
    0.5
    """
    s = check_real("sigma", sigma, "(0, inf)")
    d = check_int("dimension", dimension, "[1, inf)")
    r = check_real("radius", radius, "(0, inf)")
    v = d * s * s
    # 1/(1/v + 1/R²), with no R² (it underflows for tiny R) and v = inf allowed
    inverse = 1.0 / v + (1.0 / r) / r
    return 1.0 / inverse if inverse > 0 else math.inf


def ou_mse_ratio(theta: float, rho: float, t: Any, dimension: int, norm: float):
    """``E_OU/E_GM`` at times t > 0 (undefined at t = 0, where both are 0). Vectorised over t.

    >>> round(ou_mse_ratio(math.log(1.5), math.sqrt(0.1621860432), 1.0, 1, 1.0), 9)
    0.666666667
    """
    ts = check_real_array("t", t, "(0, inf)")
    num = np.asarray(ou_mse(theta, rho, ts, dimension, norm))
    den = np.asarray(ou_gaussian_mse(theta, rho, ts, dimension))
    out = num / den
    return float(out) if out.ndim == 0 else out


def theorem8_condition(theta: float, rho: float, radius: float, dimension: int) -> bool:
    """The hypothesis ``θR² ≤ 4dρ²`` of Theorem 8 (then E_OU ≤ E_GM for all t > 0 whenever
    ‖f(D)‖ ≤ R, and E_OU/E_GM → 0 as t → ∞).

    >>> theorem8_condition(1.0, 1.0, 2.0, 1), theorem8_condition(1.0, 1.0, 2.1, 1)
    (True, False)
    """
    theta, rho = _check_ou(theta, rho)
    r = check_real("radius", radius, "(0, inf)")
    d = check_int("dimension", dimension, "[1, inf)")
    return Fraction(theta) * Fraction(r) ** 2 <= 4 * d * Fraction(rho) ** 2


def theorem8_ratio_bound(epsilon: float, sensitivity: float, radius: float,
                         dimension: int) -> float:
    """``(1 + dΔ²/(2ϵR²))^{-1}``: Theorem 8's bound on E_OU/E_GM at t = 1 with the parameters
    of :func:`ou_parameters`.

    >>> round(theorem8_ratio_bound(1.0, 1.0, 1.0, 1), 12)
    0.666666666667
    """
    eps = check_real("epsilon", epsilon, "(0, inf)")
    d = check_real("sensitivity", sensitivity, "(0, inf)")
    r = check_real("radius", radius, "(0, inf)")
    dim = check_int("dimension", dimension, "[1, inf)")
    return 1.0 / (1.0 + dim * d * d / (2.0 * eps * r * r))


@dataclass(frozen=True)
class OUParameters:
    """θ and ρ chosen by Theorem 8 for a target RDP slope ϵ at t = 1 (:func:`ou_parameters`).

    >>> p = ou_parameters(0.1, 1.0, 1.0, 1)   # dΔ²/(2ϵR²) = 5 > 2
    >>> round(p.ratio_bound, 6), p.satisfies_condition()
    (0.166667, False)
    """

    theta: float
    rho: float
    epsilon: float
    sensitivity: float
    radius: float
    dimension: int

    def mechanism(self, relation=NeighbouringRelation.ADD_REMOVE) -> OrnsteinUhlenbeckMechanism:
        """The OU mechanism at t = 1 with these parameters."""
        return OrnsteinUhlenbeckMechanism(self.theta, self.rho, 1.0, self.sensitivity, relation)

    @property
    def ratio_bound(self) -> float:
        """Theorem 8's ``(1 + dΔ²/(2ϵR²))^{-1}``."""
        return theorem8_ratio_bound(self.epsilon, self.sensitivity, self.radius, self.dimension)

    def satisfies_condition(self) -> bool:
        """Whether these parameters also satisfy ``θR² ≤ 4dρ²`` (true iff dΔ²/(2ϵR²) ≤ 2)."""
        return theorem8_condition(self.theta, self.rho, self.radius, self.dimension)


def ou_parameters(epsilon: float, sensitivity: float, radius: float,
                  dimension: int) -> OUParameters:
    """Theorem 8's parameter choice: ``θ = log(1 + dΔ²/(2ϵR²))`` and
    ``ρ² = θΔ²/(2ϵ(e^{2θ} − 1))``, so that M_1 is (order, order ϵ)-RDP (Λ(1) = ϵ) and
    ``E_OU(θ, ρ, 1) ≤ E_GM(θ, ρ, 1)(1 + dΔ²/(2ϵR²))^{-1}`` with ``E_GM = dΔ²/(2ϵ)``.

    ρ is rounded *up* (more noise), so the computed Λ(1) never exceeds ϵ.

    >>> p = ou_parameters(1.0, 1.0, 1.0, 1)   # catalogue test vector
    >>> round(p.theta, 10), round(p.rho ** 2, 10)
    (0.4054651081, 0.1621860432)
    >>> p.mechanism().intrinsic_sensitivity <= 1.0
    True
    """
    eps = check_real("epsilon", epsilon, "(0, inf)")
    d = check_real("sensitivity", sensitivity, "(0, inf)")
    r = check_real("radius", radius, "(0, inf)")
    dim = check_int("dimension", dimension, "[1, inf)")
    ratio = d / r  # Δ/R first: R² alone may underflow to 0 (or Δ² overflow)
    a = dim * ratio * ratio / (2.0 * eps)
    theta = math.log1p(a)
    if not (math.isfinite(theta) and theta > 0):
        raise InvalidParameterError("epsilon", "such that log(1 + dΔ²/(2ϵR²)) is a positive "
                                    "finite number", eps,
                                    detail=f"dΔ²/(2ϵR²) = {a:g} with d = {dim}, Δ = {d:g}, "
                                           f"R = {r:g}")
    with np.errstate(over="ignore"):
        em1 = math.expm1(2 * theta) if 2 * theta < 709 else math.inf
    rho2 = theta * d * d / (2.0 * eps * em1)
    rho = up_ulps(math.sqrt(rho2), 16)
    if not (math.isfinite(rho) and rho > 0):
        raise InvalidParameterError("epsilon", "such that the chosen ρ is a positive finite "
                                    "number", eps)
    # the guarantee must hold as computed: nudge ρ up until Λ(1) ≤ ϵ (at most a few steps)
    for _ in range(64):
        if ou_intrinsic_sensitivity(theta, rho, 1.0, d) <= eps:
            break
        rho = up_ulps(math.nextafter(rho, math.inf), 4)
    else:  # pragma: no cover - the margin above always suffices
        raise NumericalError("could not certify Λ(1) ≤ ϵ for the Theorem 8 parameters")
    return OUParameters(theta, rho, eps, d, r, dim)


