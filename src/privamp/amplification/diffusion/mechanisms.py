"""The Brownian-motion and Ornstein-Uhlenbeck mechanisms and their intrinsic sensitivities
(Balle, Barthe, Gaboardi, Geumlek 2019, §5; see :mod:`privamp.amplification.diffusion`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._numerics import ULP, down_ulps, log0, log_expm1, round_down_log, round_up_log, up_ulps
from ..._validation import check_real, check_real_array, check_rng
from ...errors import InvalidParameterError
from ...mechanisms import GaussianProfile, Mechanism, register
from ...privacy_loss import GaussianPrivacyLoss
from ...rdp import RdpCurve
from ...relations import NeighbouringRelation
from ..iteration import ITERATION_ORDERS

__all__ = ["BrownianMotionMechanism", "OrnsteinUhlenbeckMechanism",
           "brownian_intrinsic_sensitivity", "equivalent_gaussian_sigma",
           "ou_intrinsic_sensitivity"]


#: Positive values below the smallest normal float are reported as it: subnormals have too few
#: significant bits to carry a relative rounding margin, and 0 would claim identical output laws.
_MIN_NORMAL = float(np.finfo(float).tiny)  # 2.2e-308
_MAX_LOG = math.log(float(np.finfo(float).max))


def _check_ou(theta: Any, rho: Any) -> tuple[float, float]:
    return check_real("theta", theta, "(0, inf)"), check_real("rho", rho, "(0, inf)")


def _exp_up(log_value: Any, abs_error: Any = 0.0):
    """``exp`` of a computed logarithm as an upper bound: the logarithm is raised by its
    absolute error ``abs_error`` and by the rounding of ``log``/``exp`` (``round_up_log``);
    ``-inf`` gives 0, a positive result below the normal range the smallest normal float."""
    lv = np.asarray(log_value, dtype=float)
    with np.errstate(over="ignore"):
        v = np.exp(round_up_log(lv, abs_error, ulps=32))
    return np.where(np.isneginf(lv), 0.0, np.maximum(v, _MIN_NORMAL))


def _log_expm1_lower(theta: float, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A lower bound on ``log(e^{2θt} − 1)`` and its absolute error allowance, for 0 < t < ∞.

    ``2θt`` is formed as a product (error ≤ ulp·2θt, hence ≤ ulp·(1 + 2θt) in the logarithm).
    Where the product would be below 1e-300 (subnormal products lose their relative precision)
    the bound ``log(e^x − 1) ≥ log x`` is used with x = 2θt formed in log space; where it
    overflows, ``log(e^x − 1) ≥ x − 1 ≥ 1e308``."""
    ts = np.asarray(ts, dtype=float)
    with np.errstate(over="ignore"):
        log_x = math.log(theta) + math.log(2.0) + np.log(ts)
        x = 2.0 * theta * ts
    tiny = log_x < -690.0
    huge = ~np.isfinite(x)
    val = np.where(tiny, log_x, log_expm1(np.where(tiny | huge, 1.0, x)))
    val = np.where(huge, 1e308, val)
    err = 4 * ULP * (1.0 + np.abs(log_x) + np.where(tiny | huge, 0.0, x))
    return val, err


def _ou_log_lambda(theta: float, rho: float, ts: Any, d: float):
    """``log Λ(t) = log θ + 2 log Δ − log 2 − 2 log ρ − log(e^{2θt} − 1)`` (Corollary 7) with an
    upper bound on its absolute error; ``-inf`` where Λ = 0 (Δ = 0 or t = ∞)."""
    ts = np.asarray(ts, dtype=float)
    l_theta, l_d, l_rho = math.log(theta), log0(d), math.log(rho)
    l_e, e_err = _log_expm1_lower(theta, np.where(np.isinf(ts), 1.0, ts))
    with np.errstate(invalid="ignore"):
        val = l_theta + 2 * l_d - math.log(2.0) - 2 * l_rho - l_e
    val = np.where(np.isposinf(ts) | (d == 0.0), -np.inf, val)
    err = e_err + 4 * ULP * (1.0 + abs(l_theta) + 2 * abs(l_d if d > 0 else 0.0)
                             + 2 * abs(l_rho))
    return val, err


def _brownian_log_lambda(t: float, d: float) -> tuple[float, float]:
    """``log Λ(t) = 2 log Δ − log 4 − log t`` (Example 5) and its absolute error allowance."""
    if d == 0.0:
        return -math.inf, 0.0
    l_d, l_t = math.log(d), math.log(t)
    return 2 * l_d - math.log(4.0) - l_t, 4 * ULP * (1.0 + 2 * abs(l_d) + abs(l_t))


def _theta_from_log_lambda(log_lambda: float, err: float, name: str, value: float) -> float:
    """θ_G = sqrt(2Λ) (rounded up) of the Gaussian mechanism with the same RDP; raises if it
    is not finite (the mechanism would not be private at all)."""
    log_theta = 0.5 * (math.log(2.0) + log_lambda)
    if log_theta >= _MAX_LOG - 1e-9:
        raise InvalidParameterError(name, "such that the effective Gaussian ratio "
                                    "sqrt(2Λ(t)) (sensitivity over noise) is finite", value)
    return float(_exp_up(log_theta, 0.5 * err + 4 * ULP))


def _theta_lower_from_log_lambda(log_lambda: float, err: float) -> float:
    """θ_G = sqrt(2Λ) rounded down (the lower values of the equivalent Gaussian profile):
    the logarithm lowered by its error allowance and the rounding of log/exp."""
    if log_lambda == -math.inf:
        return 0.0
    log_theta = 0.5 * (math.log(2.0) + log_lambda) - (0.5 * err + 4 * ULP)
    return down_ulps(math.exp(round_down_log(log_theta, ulps=32)), 2)


# ---------------------------------------------------------------------------------------------
# closed forms: Λ(t), noise levels, RDP curves
# ---------------------------------------------------------------------------------------------


def brownian_intrinsic_sensitivity(t: float, sensitivity: float = 1.0) -> float:
    """Λ(t) = Δ²/(4t) of the Brownian-motion mechanism (BBGG Example 5), rounded up (computed
    in log space: no overflow or underflow of Δ²).

    >>> brownian_intrinsic_sensitivity(0.5, 1.0)
    0.5000000000000018
    """
    t = check_real("t", t, "(0, inf)")
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    return _brownian_lambda(t, d)


def _brownian_lambda(t: float, d: float) -> float:
    """Λ(t) = Δ²/(4t) rounded up: directly where Δ² and the quotient are normal floats (two
    roundings, a 16-ulp margin), in log space otherwise."""
    if d == 0.0:
        return 0.0
    direct = d * d / (4.0 * t)
    if 1e-290 < d * d < math.inf and 1e-290 < direct < math.inf:  # three roundings, no range loss
        return up_ulps(direct, 16)
    return float(_exp_up(*_brownian_log_lambda(t, d)))


def ou_intrinsic_sensitivity(theta: float, rho: float, t: float, sensitivity: float = 1.0):
    """Λ(t) = θΔ²/(2ρ²(e^{2θt} − 1)) of the Ornstein–Uhlenbeck mechanism (BBGG Corollary 7).

    Computed in log space with ``log(e^{2θt} − 1)`` from ``expm1``; rounded up; vectorised over
    ``t > 0`` (``0`` at t = ∞). A positive Λ below the normal float range is reported as the
    smallest normal float (2.2e-308), never as 0, which would claim identical output laws.

    >>> round(ou_intrinsic_sensitivity(1.0, 1.0, 1.0, 1.0), 10)   # catalogue test vector
    0.0782588214
    """
    theta, rho = _check_ou(theta, rho)
    ts = check_real_array("t", t, "(0, inf]")
    d = check_real("sensitivity", sensitivity, "[0, inf)")
    out = _exp_up(*_ou_log_lambda(theta, rho, ts, d))
    return float(out) if out.ndim == 0 else out


def equivalent_gaussian_sigma(theta: float, rho: float, t: float) -> float:
    """σ̃ = sqrt(ρ²(e^{2θt} − 1)/θ): the Gaussian mechanism f(D) + N(0, σ̃²I) has the same RDP
    as the OU mechanism at time t (BBGG §5.1, before Theorem 8). Rounded *down* (a smaller σ̃
    is the less private Gaussian, so the equivalence errs on the safe side).

    >>> round(equivalent_gaussian_sigma(1.0, 1.0, 1.0), 10)
    2.5276582243
    """
    theta, rho = _check_ou(theta, rho)
    t = check_real("t", t, "(0, inf)")
    with np.errstate(over="ignore"):
        val = math.sqrt(rho * rho * math.expm1(2 * theta * t) / theta) \
            if 2 * theta * t < 709 else math.inf
    return down_ulps(val, 8)


def _rdp_curve(slope: float, orders: Any, label: str, relation) -> RdpCurve:
    o = ITERATION_ORDERS if orders is None else check_real_array("orders", orders, "(1, inf]",
                                                                 ndim=1)
    with np.errstate(invalid="ignore", over="ignore"):
        eps = np.where(np.isinf(o), np.inf if slope > 0 else 0.0, o * slope)
    eps = up_ulps(eps, 4)
    if slope > 0:
        eps = np.maximum(eps, _MIN_NORMAL)
    return RdpCurve(o, eps, bound="upper", relation=relation, label=label)


# ---------------------------------------------------------------------------------------------
# mechanisms
# ---------------------------------------------------------------------------------------------


def _check_vector(value: Any) -> np.ndarray:
    return check_real_array("value", value, "(-inf, inf)", nonempty=False)


def _sqrt_2s(s: float) -> float:
    """sqrt(2s), the standard deviation of Brownian motion after time s (no overflow of 2s)."""
    return math.sqrt(2.0 * s) if s < 1e300 else math.sqrt(2.0) * math.sqrt(s)


def _ou_noise_sigma(theta: float, rho: float, s: float) -> float:
    """sqrt((ρ²/θ)(1 − e^{−2θs})) for s > 0, without overflow of ρ² and, where θs < 1e-5 (a
    subnormal 2θs has lost its relative precision), from ``(1 − e^{−x})/x = 1 − x/2 + x²/6 − …``
    with the factor 2s taken out."""
    ts = theta * s
    if ts < 1e-5:
        factor = 2.0 * s * (1.0 - ts + 2.0 * ts * ts / 3.0)
    else:
        factor = -math.expm1(-2.0 * ts) / theta
    return rho * math.sqrt(factor)


@register("brownian-motion")
@dataclass(frozen=True)
class BrownianMotionMechanism(Mechanism):
    """The diffusion mechanism of Brownian motion ``dX = √2 dW`` at time t (BBGG Example 4):
    ``M_t(D) = f(D) + N(0, 2t I)`` — the Gaussian mechanism with σ² = 2t.

    Parameters
    ----------
    t : float
        Diffusion time t > 0.
    sensitivity : float
        Global L2 sensitivity Δ of f under ``relation``.

    RDP (Theorem 6, Example 5): (order, order Δ²/(4t)). Profile: Gaussian with θ_G = Δ/sqrt(2t).

    >>> m = BrownianMotionMechanism(t=0.5)
    >>> round(m.intrinsic_sensitivity, 12), round(float(m.profile().delta(1.0)), 10)
    (0.5, 0.1269367375)
    """

    t: float
    sensitivity: float = 1.0
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)

    def __post_init__(self):
        object.__setattr__(self, "t", check_real("t", self.t, "(0, inf)"))
        object.__setattr__(self, "sensitivity",
                           check_real("sensitivity", self.sensitivity, "[0, inf)"))
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))
        self.theta  # noqa: B018 - validates that Δ/sqrt(2t) is finite

    @property
    def sigma(self) -> float:
        """Noise standard deviation sqrt(2t)."""
        return _sqrt_2s(self.t)

    @property
    def intrinsic_sensitivity(self) -> float:
        """Λ(t) = Δ²/(4t) (rounded up)."""
        return _brownian_lambda(self.t, self.sensitivity)

    @property
    def theta(self) -> float:
        """θ_G = sqrt(2Λ(t)) = Δ/sqrt(2t) of the equivalent Gaussian mechanism (rounded up;
        from log Λ where Λ is not a normal float, so it keeps its precision at extremes)."""
        lam = _brownian_lambda(self.t, self.sensitivity)
        if 1e-290 < lam < 1e290:
            return up_ulps(math.sqrt(2.0 * lam), 4)
        if lam == 0.0:
            return 0.0
        return _theta_from_log_lambda(*_brownian_log_lambda(self.t, self.sensitivity), "t",
                                      self.t)

    def release(self, value: Any, rng: Any = None):
        """A sample of ``P_t(value) = N(value, 2t I)`` (value: scalar or vector)."""
        x = _check_vector(value)
        out = x + check_rng(rng).normal(0.0, self.sigma, size=x.shape)
        return float(out) if out.ndim == 0 else out

    def evolve(self, released: Any, s: float, rng: Any = None):
        """Post-process an output of M_t by P_s: the result is distributed as M_{t+s}(D)."""
        s = check_real("s", s, "[0, inf)")
        x = _check_vector(released)
        out = x + check_rng(rng).normal(0.0, _sqrt_2s(s), size=x.shape)
        return float(out) if out.ndim == 0 else out

    def rdp(self, orders: Any = None) -> RdpCurve:
        """(order, order Λ(t)) for every order (Theorem 6)."""
        return _rdp_curve(self.intrinsic_sensitivity, orders,
                          f"Brownian motion t={self.t:g}", self.relation)

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """σ = √(2t) = 1 and σ = 0.1."""
        return [cls(0.5, relation=relation), cls(0.005, relation=relation)]

    def profile(self) -> GaussianProfile:
        return GaussianProfile(self.theta, self.relation, theta_lower=min(self.theta, (
            _theta_lower_from_log_lambda(*_brownian_log_lambda(self.t, self.sensitivity)))))

    def privacy_loss(self, reverse: bool = False) -> GaussianPrivacyLoss:
        return GaussianPrivacyLoss(self.theta)


@register("ornstein-uhlenbeck")
@dataclass(frozen=True)
class OrnsteinUhlenbeckMechanism(Mechanism):
    """The Ornstein–Uhlenbeck mechanism (BBGG §5.1): release a sample of
    ``P_t(f(D)) = N(e^{−θt} f(D), (ρ²/θ)(1 − e^{−2θt}) I)``.

    Parameters
    ----------
    theta : float
        Mean-reversion rate θ > 0 of ``dX = −θX dt + √2 ρ dW``.
    rho : float
        Diffusion coefficient ρ > 0.
    t : float
        Diffusion time t > 0 (at t = 0 the mechanism releases f(D) itself).
    sensitivity : float
        Global L2 sensitivity Δ of f under ``relation``.

    RDP (Corollary 7): (order, order Λ(t)), ``Λ(t) = θΔ²/(2ρ²(e^{2θt} − 1))``. Exact profile:
    the Gaussian one with θ_G = sqrt(2Λ(t)) (sensitivity e^{−θt}Δ over noise sqrt(ρ²(1 −
    e^{−2θt})/θ)).

    Examples
    --------
    >>> m = OrnsteinUhlenbeckMechanism(theta=1.0, rho=1.0, t=1.0)
    >>> round(m.intrinsic_sensitivity, 10), round(m.mean_factor, 10), round(m.noise_sigma, 10)
    (0.0782588214, 0.3678794412, 0.929873495)
    >>> m.release([1.0, 2.0], rng=0).shape
    (2,)
    """

    theta: float
    rho: float
    t: float
    sensitivity: float = 1.0
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)

    def __post_init__(self):
        theta, rho = _check_ou(self.theta, self.rho)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "t", check_real("t", self.t, "(0, inf)"))
        object.__setattr__(self, "sensitivity",
                           check_real("sensitivity", self.sensitivity, "[0, inf)"))
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))
        if not (0.0 < self.noise_sigma < math.inf):
            raise InvalidParameterError("rho", "such that the noise standard deviation "
                                        f"ρ sqrt((1 − e^(−2θt))/θ) is finite (θ={theta!r}, "
                                        f"t={self.t!r})", rho)
        self.gaussian_theta  # noqa: B018 - validates that the effective θ_G is finite

    @property
    def mean_factor(self) -> float:
        """e^{−θt}: ``E[M_t^f(D)] = e^{−θt} f(D)``."""
        return math.exp(-self.theta * self.t)

    @property
    def noise_variance(self) -> float:
        """(ρ²/θ)(1 − e^{−2θt}) per coordinate (the square of :attr:`noise_sigma`)."""
        return self.noise_sigma ** 2

    @property
    def noise_sigma(self) -> float:
        """sqrt((ρ²/θ)(1 − e^{−2θt})), the noise standard deviation per coordinate."""
        return _ou_noise_sigma(self.theta, self.rho, self.t)

    @property
    def intrinsic_sensitivity(self) -> float:
        """Λ(t) of Corollary 7 (rounded up)."""
        return ou_intrinsic_sensitivity(self.theta, self.rho, self.t, self.sensitivity)

    @property
    def gaussian_theta(self) -> float:
        """θ_G = sqrt(2Λ(t)) = e^{−θt}Δ / noise σ (rounded up; from log Λ, so it keeps its
        relative precision where Λ itself is below the float range)."""
        if self.sensitivity == 0.0:
            return 0.0
        log_l, err = _ou_log_lambda(self.theta, self.rho, self.t, self.sensitivity)
        return _theta_from_log_lambda(float(log_l), float(err), "t", self.t)

    @property
    def equivalent_sigma(self) -> float:
        """σ̃ of the Gaussian mechanism with the same RDP (:func:`equivalent_gaussian_sigma`)."""
        return equivalent_gaussian_sigma(self.theta, self.rho, self.t)

    def release(self, value: Any, rng: Any = None):
        """A sample of P_t(value): ``e^{−θt} value + N(0, (ρ²/θ)(1 − e^{−2θt}) I)``."""
        x = _check_vector(value)
        out = self.mean_factor * x + check_rng(rng).normal(0.0, self.noise_sigma, size=x.shape)
        return float(out) if out.ndim == 0 else out

    def evolve(self, released: Any, s: float, rng: Any = None):
        """Post-process an output of M_t by P_s: the result is distributed as M_{t+s}(D)
        (the semigroup property ``P_s ∘ M_t = M_{t+s}``)."""
        s = check_real("s", s, "[0, inf)")
        x = _check_vector(released)
        sd = _ou_noise_sigma(self.theta, self.rho, s) if s > 0 else 0.0
        out = math.exp(-self.theta * s) * x + check_rng(rng).normal(0.0, sd, size=x.shape)
        return float(out) if out.ndim == 0 else out

    def rdp(self, orders: Any = None) -> RdpCurve:
        """(order, order Λ(t)) for every order (Corollary 7)."""
        return _rdp_curve(self.intrinsic_sensitivity, orders,
                          f"Ornstein-Uhlenbeck theta={self.theta:g} rho={self.rho:g} "
                          f"t={self.t:g}", self.relation)

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """Moderate and fast mean reversion."""
        return [cls(1.0, 1.0, 1.0, relation=relation), cls(5.0, 1.0, 2.0, relation=relation)]

    def profile(self) -> GaussianProfile:
        if self.sensitivity == 0.0:
            return GaussianProfile(0.0, self.relation)
        log_l, err = _ou_log_lambda(self.theta, self.rho, self.t, self.sensitivity)
        return GaussianProfile(self.gaussian_theta, self.relation, theta_lower=min(
            self.gaussian_theta, _theta_lower_from_log_lambda(float(log_l), float(err))))

    def privacy_loss(self, reverse: bool = False) -> GaussianPrivacyLoss:
        return GaussianPrivacyLoss(self.gaussian_theta)

    def mse(self, norm: float, dimension: int) -> float:
        """E_OU of eq. (4) for ‖f(D)‖ = ``norm`` in dimension d."""
        from .utility import ou_mse  # the utility module imports this one

        return ou_mse(self.theta, self.rho, self.t, dimension, norm)


