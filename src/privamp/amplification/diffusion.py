"""Diffusion mechanisms: Brownian motion and the Ornstein–Uhlenbeck mechanism.

Balle, Barthe, Gaboardi, Geumlek (2019), §5 (catalogue §1.6–1.7). A Markov semigroup
``(P_t)_{t≥0}`` on R^d defines the mechanisms ``M_t^f(D) = P_t(f(D))``, closed under
post-processing by the semigroup: ``P_s ∘ M_t^f = M_{t+s}^f``.

**Theorem 6.** Under Assumption 1 (a unique invariant measure λ, a kernel ``p_t(x, y)`` with
respect to λ that is symmetric, and the diffusion property of the generator L), M_t^f is
(order, order Λ(t))-RDP with the *intrinsic sensitivity*::

    Λ(t) = sup_{D≃D'} ∫_t^∞ κ_{f(D), f(D')}(s) ds,
    κ_{x,x'}(s) = sup_y Γ(log p_s(x, y)/p_s(x', y)),

Γ the carré du champ ``Γ(f, g) = ½(L(fg) − f Lg − g Lf)``.

* Brownian motion ``dX = √2 dW``: ``P_t(x) = N(x, 2t I)``, ``Γ(f) = ‖∇f‖²``,
  ``Λ(t) = Δ²/(4t)`` (Examples 4–5): the Gaussian mechanism with σ² = 2t.
* Ornstein–Uhlenbeck ``dX = −θX dt + √2 ρ dW`` (θ, ρ > 0):
  ``P_t(x) = N(e^{−θt}x, (ρ²/θ)(1 − e^{−2θt}) I)``, ``Γ(f) = ρ²‖∇f‖²`` and (Corollary 7)
  ``Λ(t) = θΔ²/(2ρ²(e^{2θt} − 1))`` — the Gaussian mechanism with sensitivity e^{−θt}Δ and
  variance (ρ²/θ)(1 − e^{−2θt}), so its exact privacy profile is the Gaussian one.

Both mechanisms here are real mechanisms (:meth:`~privamp.mechanisms.Mechanism.release` samples
them on vectors of R^d) whose profile is :class:`~privamp.mechanisms.GaussianProfile` with the
effective θ_G = sqrt(2Λ(t)) (rounded up; computed from log Λ, so it keeps its precision where Λ
leaves the float range). They are registered in :data:`privamp.mechanisms.REGISTRY` as
``brownian-motion`` and ``ornstein-uhlenbeck`` (the registry imports this module on first use),
and parameters for which θ_G or the noise level is not a finite positive number are rejected at
construction.
:func:`intrinsic_sensitivity_numerical` recomputes Λ(t) from a semigroup's transition density by
numerical differentiation and quadrature, and :func:`transition_renyi_divergence` computes
``R_order(P_t(x) ‖ P_t(x'))`` by quadrature, so the closed forms are checked rather than assumed.

Utility (eq. (4) and Theorem 8). ``E_OU = (1 − e^{−θt})²‖f(D)‖² + (dρ²/θ)(1 − e^{−2θt})``; the
Gaussian mechanism with the same RDP has ``E_GM = dσ̃²``, ``σ̃² = ρ²(e^{2θt} − 1)/θ``; the
optimally shrunk Gaussian ``β(f(D) + N(0, σ̃²I))`` on ‖f(D)‖ ≤ R has
``E_PGM ≤ E_GM/(1 + dσ̃²/R²)``. If ``θR² ≤ 4dρ²`` then E_OU ≤ E_GM for every t > 0, and the
choice ``θ = log(1 + dΔ²/(2ϵR²))``, ``ρ² = θΔ²/(2ϵ(e^{2θ} − 1))`` makes M_1 (order, order ϵ)-RDP
with ``E_OU/E_GM ≤ (1 + dΔ²/(2ϵR²))^{-1}`` (:func:`ou_parameters`). At t = 0 both errors are 0
and the ratio is undefined (catalogue §1.9 item 5): ratios are defined for t > 0 only.
The second claim of Theorem 8 does not need the first one's condition (it is an identity at
t = 1 with ‖f(D)‖ = R), and the parameter choice satisfies ``θR² ≤ 4dρ²`` only when
``dΔ²/(2ϵR²) ≤ 2``; :meth:`OUParameters.satisfies_condition` reports which case applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._numerics import ULP, log0, log_expm1, round_down_log, round_up_log
from .._validation import check_int, check_real, check_real_array, check_rng
from ..divergences import QuadratureResult
from ..errors import InvalidParameterError, NumericalError
from ..mechanisms import GaussianProfile, Mechanism, register
from ..privacy_loss import GaussianPrivacyLoss
from ..rdp import RdpCurve
from ..relations import NeighbouringRelation
from .iteration import ITERATION_ORDERS

__all__ = [
    "BrownianMotionMechanism",
    "DiffusionSemigroup",
    "OUParameters",
    "OrnsteinUhlenbeckMechanism",
    "brownian_intrinsic_sensitivity",
    "brownian_semigroup",
    "equivalent_gaussian_sigma",
    "intrinsic_sensitivity_numerical",
    "ou_gaussian_mse",
    "ou_intrinsic_sensitivity",
    "ou_mse",
    "ou_mse_ratio",
    "ou_parameters",
    "ou_semigroup",
    "post_processed_gaussian_mse",
    "theorem8_condition",
    "theorem8_ratio_bound",
    "transition_renyi_divergence",
]


#: Positive values below the smallest normal float are reported as it: subnormals have too few
#: significant bits to carry a relative rounding margin, and 0 would claim identical output laws.
_MIN_NORMAL = float(np.finfo(float).tiny)  # 2.2e-308
_MAX_LOG = math.log(float(np.finfo(float).max))


def _round_up(x: float, ulps: float = 16) -> float:
    return x * (1 + ulps * ULP) if math.isfinite(x) else x


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
    return float(math.exp(round_down_log(log_theta, ulps=32)) * (1 - 2 * ULP))


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
        return _round_up(direct)
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
    return val * (1 - 8 * ULP) if math.isfinite(val) else val


def _rdp_curve(slope: float, orders: Any, label: str, relation) -> RdpCurve:
    o = ITERATION_ORDERS if orders is None else check_real_array("orders", orders, "(1, inf]",
                                                                 ndim=1)
    with np.errstate(invalid="ignore", over="ignore"):
        eps = np.where(np.isinf(o), np.inf if slope > 0 else 0.0, o * slope)
    eps = np.where(np.isfinite(eps), eps * (1 + 4 * ULP), eps)
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
            return _round_up(math.sqrt(2.0 * lam), 4)
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
        return ou_mse(self.theta, self.rho, self.t, dimension, norm)


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
    rho = math.sqrt(rho2) * (1 + 16 * ULP)
    if not (math.isfinite(rho) and rho > 0):
        raise InvalidParameterError("epsilon", "such that the chosen ρ is a positive finite "
                                    "number", eps)
    # the guarantee must hold as computed: nudge ρ up until Λ(1) ≤ ϵ (at most a few steps)
    for _ in range(64):
        if ou_intrinsic_sensitivity(theta, rho, 1.0, d) <= eps:
            break
        rho = math.nextafter(rho, math.inf) * (1 + 4 * ULP)
    else:  # pragma: no cover - the margin above always suffices
        raise NumericalError("could not certify Λ(1) ≤ ϵ for the Theorem 8 parameters")
    return OUParameters(theta, rho, eps, d, r, dim)


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
