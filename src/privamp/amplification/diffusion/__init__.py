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

from .mechanisms import (
    BrownianMotionMechanism,
    OrnsteinUhlenbeckMechanism,
    brownian_intrinsic_sensitivity,
    equivalent_gaussian_sigma,
    ou_intrinsic_sensitivity,
)
from .semigroup import (
    DiffusionSemigroup,
    brownian_semigroup,
    intrinsic_sensitivity_numerical,
    ou_semigroup,
    transition_renyi_divergence,
)
from .utility import (
    OUParameters,
    ou_gaussian_mse,
    ou_mse,
    ou_mse_ratio,
    ou_parameters,
    post_processed_gaussian_mse,
    theorem8_condition,
    theorem8_ratio_bound,
)

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
