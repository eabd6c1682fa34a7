"""Amplification by post-processing with uniformly mixing Markov kernels.

Balle, Barthe, Gaboardi, Geumlek (2019), *Privacy Amplification by Mixing and Diffusion
Mechanisms*, §3 (catalogue §1.2–1.3). A Markov kernel K maps each output x of a mechanism M to a
distribution K(x); the post-processed mechanism K∘M releases a sample of K(M(D)). Plain
post-processing only says K∘M is as private as M. Definition 1 lists four *uniform mixing
conditions* (``γ ∈ [0, 1]``, suprema over **all** pairs of inputs, not only neighbouring ones):

1. γ-Dobrushin: ``sup_{x,x'} TV(K(x), K(x')) ≤ γ``;
2. (γ, ε)-Dobrushin: ``sup_{x,x'} D_{e^ε}(K(x) ‖ K(x')) ≤ γ`` (hockey-stick divergence);
3. γ-Doeblin: ``K(x) ≥ (1 − γ) ω`` for all x, for some distribution ω;
4. γ-ultra-mixing: ``K(x) ≪ K(x')`` and ``dK(x)/dK(x') ≥ 1 − γ`` for all x, x'.

Theorem 1 turns an (ε, δ)-DP guarantee of M into one for K∘M:

1. γ-Dobrushin: ``(ε, γδ)``;
2. (γ, ε̃)-Dobrushin with ``ε̃ = log(1 + (e^ε − 1)/δ)`` (``ε̃ = ∞`` when δ = 0, with
   ``D_∞(μ‖ν) = μ(supp μ \\ supp ν)``): ``(ε, γδ)``;
3. γ-Doeblin: ``(ε', γ(1 − e^{ε'−ε}(1 − δ)))`` with ``ε' = log(1 + γ(e^ε − 1))``;
4. γ-ultra-mixing: ``(ε', γ δ e^{ε'−ε})`` with the same ε'.

Figure 1 (implications): ultra-mixing ⇒ Doeblin ⇒ Dobrushin ⇒ (γ, ε)-Dobrushin for every ε ≥ 0,
all with the same γ (:func:`implies`). Figure 2 (local DP): γ-Dobrushin ⇔ (0, γ)-LDP,
(γ, ε)-Dobrushin ⇔ (ε, γ)-LDP, γ-Doeblin ⇔ the blanket condition, γ-ultra-mixing ⇔
(log 1/(1 − γ), 0)-LDP (:meth:`MixingCondition.local_dp`). The paper's text calls the first of
these "Figure 2" and the second "Table 2"; the captions, followed here, are Figure 1 and Figure 2.

Finite kernels (catalogue §1.3, derived from Definition 1). For a row-stochastic matrix
``K[x, y]`` (rows = inputs) :class:`MarkovKernel` computes the best constants:

* Dobrushin ``γ_D = max_{x,x'} ½ Σ_y |K[x,y] − K[x',y]|``;
* (γ, ε)-Dobrushin curve ``γ_ε = max_{x,x'} Σ_y [K[x,y] − e^ε K[x',y]]_+`` (``γ_0 = γ_D``);
* Doeblin ``γ = 1 − Σ_y min_x K[x,y]`` with the optimal minorising distribution ω ∝ column minima;
* ultra-mixing ``1 − γ_U = min_y min_x K[x,y] / max_x K[x,y]`` over non-zero columns, when every
  column is either all zero or all positive. Otherwise the absolute-continuity part of
  Definition 1(4) fails for every γ: privamp reports ``γ_U = 1`` (catalogue convention, for
  which Theorem 1(4) would be plain post-processing), :attr:`MarkovKernel.absolutely_continuous`
  is false, and ultra-mixing is not among the conditions the kernel satisfies.

They satisfy ``γ_ε ≤ γ_D ≤ γ_Doeblin ≤ γ_U`` (the lattice of Figure 1, checked in the tests).

Safety. Every coefficient is rounded *up* (a larger γ is a weaker claim) and every amplified
(ε', δ') is rounded up. Profiles returned by :meth:`MixingCondition.amplify_profile` never exceed
the profile of M itself (plain post-processing) and are upper bounds on the true profile of K∘M.
Kernel rows must sum to 1 within a stated tolerance; they are then divided by their sums, so the
coefficients are those of an exactly stochastic kernel.
"""

from __future__ import annotations

import abc
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._numerics import (
    ULP,
    amplify_eps,
    deamplify_eps,
    log0,
    log1mexp,
    mul_up,
    next_up,
    round_down_log,
    round_up_log,
)
from .._validation import check_pmf, check_real, check_real_array, read_text_file
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..profiles import PrivacyProfile

__all__ = [
    "Blanket",
    "Dobrushin",
    "Doeblin",
    "EpsDobrushin",
    "LocalDP",
    "MarkovKernel",
    "MixingCondition",
    "UltraMixing",
    "eps_tilde",
    "implies",
    "read_kernel_csv",
]

_CHUNK = 2_000_000  # elements of the (ε × inputs × outputs) work array processed at once
_SUBNORMAL = math.ulp(0.0)  # 5e-324, the absolute rounding unit of the subnormal range
_NORMAL = float(np.finfo(float).tiny)  # 2.2e-308, the smallest normal float


# ---------------------------------------------------------------------------------------------
# small numerical helpers (directed rounding)
# ---------------------------------------------------------------------------------------------


def _log_shrink(eps: np.ndarray, log_gamma: float, log_one_minus_gamma: float) -> np.ndarray:
    """``log e^{ε'−ε} = log(γ + (1 − γ) e^{−ε})`` (a sum of non-negative terms)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.logaddexp(log_gamma, log_one_minus_gamma - eps)


def eps_tilde(eps: Any, delta: Any):
    """``ε̃ = log(1 + (e^ε − 1)/δ)`` of Theorem 1(2), rounded *down*; ``inf`` when δ = 0.

    A smaller ε̃ is the safe side: the (γ, ε̃)-Dobrushin coefficient of a kernel is non-increasing
    in ε̃, so a kernel that is (γ, ε̃_down)-Dobrushin is (γ, ε̃)-Dobrushin.

    >>> round(float(eps_tilde(1.0, 0.01)), 9)  # catalogue test vector
    5.152297938
    >>> float(eps_tilde(1.0, 0.0)), float(eps_tilde(0.0, 0.5))
    (inf, 0.0)
    """
    e = check_real_array("eps", eps, "[0, inf]")
    d = check_real_array("delta", delta, "[0, 1]")
    val = deamplify_eps(e, d)  # the inverse ε-map with η = δ, rounded down
    return float(val) if np.ndim(val) == 0 else val


# ---------------------------------------------------------------------------------------------
# Figure 2: local-DP counterparts
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalDP:
    """(ε, δ)-local DP of a kernel viewed as a local randomiser: for **every** pair of inputs
    ``D_{e^ε}(K(x) ‖ K(x')) ≤ δ``.

    >>> LocalDP(0.0, 0.25)
    LocalDP(eps=0.0, delta=0.25)
    """

    eps: float
    delta: float

    def __post_init__(self):
        object.__setattr__(self, "eps", check_real("eps", self.eps, "[0, inf]"))
        object.__setattr__(self, "delta", check_real("delta", self.delta, "[0, 1]"))


@dataclass(frozen=True)
class Blanket:
    """The blanket condition (Balle et al. 2019, shuffling; BBGG Figure 2, footnote 4):
    ``K(x) = (1 − γ) ω + γ K̃(x)`` for every x, with a common "blanket" distribution ω.

    It is γ-Doeblin restated: the part of every output law that does not depend on the input.
    ``omega`` may be ``None`` when only the existence of ω is asserted.

    >>> k = MarkovKernel([[0.6, 0.4], [0.4, 0.6]])
    >>> k.satisfies(Blanket(0.2, [0.5, 0.5])), k.satisfies(Blanket(0.1, [0.5, 0.5]))
    (True, False)
    """

    gamma: float
    omega: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, "[0, 1]"))


# ---------------------------------------------------------------------------------------------
# the four conditions (Definition 1) and Theorem 1
# ---------------------------------------------------------------------------------------------


class MixingCondition(abc.ABC):
    """A uniform mixing condition of Definition 1 with its amplification statement (Theorem 1).

    Subclasses: :class:`Dobrushin`, :class:`EpsDobrushin`, :class:`Doeblin`,
    :class:`UltraMixing`. Each gives

    * :meth:`amplify` — Theorem 1 at one (ε, δ) point of M (rounded up);
    * :meth:`amplify_profile` — Theorem 1 at every ε of a whole privacy profile of M, as a
      :class:`~privamp.profiles.PrivacyProfile` of K∘M;
    * :meth:`local_dp` — the local-DP counterpart of Figure 2.
    """

    #: Short name used as a key in reports and in the ``privamp mixing`` JSON output.
    key: ClassVar[str] = ""
    gamma: float

    @abc.abstractmethod
    def amplify(self, eps: float, delta: float) -> tuple[float, float]:
        """(ε', δ') such that K∘M is (ε', δ')-DP whenever M is (ε, δ)-DP (Theorem 1)."""

    @abc.abstractmethod
    def amplify_profile(self, profile: PrivacyProfile) -> PrivacyProfile:
        """An upper bound on the privacy profile of K∘M given the profile of M (Theorem 1 at
        every ε, never above the profile of M itself)."""

    @abc.abstractmethod
    def local_dp(self) -> LocalDP | Blanket:
        """The equivalent local-DP statement about K (Figure 2)."""


def _check_point(eps: Any, delta: Any) -> tuple[float, float]:
    return check_real("eps", eps, "[0, inf]"), check_real("delta", delta, "[0, 1]")


@dataclass(frozen=True)
class Dobrushin(MixingCondition):
    """γ-Dobrushin: ``sup_{x,x'} TV(K(x), K(x')) ≤ γ`` (Definition 1(1)).

    Theorem 1(1): K∘M is (ε, γδ)-DP when M is (ε, δ)-DP.

    >>> Dobrushin(0.5).amplify(1.0, 0.01)[1] == 0.005
    True
    >>> Dobrushin(0.5).local_dp()
    LocalDP(eps=0.0, delta=0.5)
    """

    key: ClassVar[str] = "dobrushin"
    gamma: float

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, "[0, 1]"))

    def amplify(self, eps, delta):
        eps, delta = _check_point(eps, delta)
        return eps, min(1.0, mul_up(self.gamma, delta))

    def amplify_profile(self, profile):
        profile = _require_profile(profile)
        if self.gamma == 0.0:
            return _zero_profile(profile, self)
        gamma = self.gamma
        return _AmplifiedProfile(
            profile, self, lambda e, base: _log_scale(gamma, base._log_delta(e)),
            profile.pure_epsilon, self.amplify_profile,
            lambda e, base: _log_scale_lower(gamma, base._log_delta_lower(e)))

    def local_dp(self):
        return LocalDP(0.0, self.gamma)


@dataclass(frozen=True)
class EpsDobrushin(MixingCondition):
    """(γ, ε)-Dobrushin: ``sup_{x,x'} D_{e^ε}(K(x) ‖ K(x')) ≤ γ`` (Definition 1(2)).

    ``eps = inf`` is the footnote-3 condition with ``D_∞(μ‖ν) = μ(supp μ \\ supp ν)``.

    Theorem 1(2): if M is (ε_M, δ)-DP and ``ε̃ = log(1 + (e^{ε_M} − 1)/δ) ≥ eps`` (the condition
    at ``eps`` implies it at ε̃ because ``D_{e^ε}`` is non-increasing in ε), K∘M is
    (ε_M, γδ)-DP. Where ε̃ < ``eps`` the condition says nothing and the result is plain
    post-processing, (ε_M, δ).

    >>> c = EpsDobrushin(0.5, 5.0)
    >>> c.amplify(1.0, 0.01)  # ε̃ = 5.15 ≥ 5: amplified
    (1.0, 0.005)
    >>> c.amplify(1.0, 0.1)   # ε̃ = 2.86 < 5: not applicable
    (1.0, 0.1)
    """

    key: ClassVar[str] = "eps_dobrushin"
    gamma: float
    eps: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, "[0, 1]"))
        object.__setattr__(self, "eps", check_real("eps", self.eps, "[0, inf]"))

    def amplify(self, eps, delta):
        eps, delta = _check_point(eps, delta)
        if float(eps_tilde(eps, delta)) >= self.eps:
            return eps, min(1.0, mul_up(self.gamma, delta))
        return eps, delta

    def amplify_profile(self, profile):
        profile = _require_profile(profile)
        gamma, threshold = self.gamma, self.eps

        def curve(eps_t):
            return np.where(eps_t >= threshold, gamma, 1.0)

        # the step curve is exact: it is its own lower curve
        return _eps_dobrushin_profile(profile, self, curve, curve)

    def local_dp(self):
        return LocalDP(self.eps, self.gamma)


@dataclass(frozen=True)
class Doeblin(MixingCondition):
    """γ-Doeblin: ``K(x) ≥ (1 − γ) ω`` for every x, for some distribution ω (Definition 1(3)).

    Theorem 1(3): K∘M is (ε', δ')-DP with ``ε' = log(1 + γ(e^ε − 1))`` and
    ``δ' = γ(1 − e^{ε'−ε}(1 − δ))``, evaluated as the sum of non-negative terms
    ``γ[(1 − γ)(1 − e^{−ε}) + (γ + (1 − γ)e^{−ε}) δ]`` (no cancellation). δ' can exceed δ, even
    for δ = 0: Doeblin amplifies δ only for ``γ ≤ δe^ε/((1 − δ)(e^ε − 1))`` (and at γ = 1).

    >>> eps_p, delta_p = Doeblin(0.5).amplify(1.0, 0.01)   # catalogue test vector
    >>> round(eps_p, 10), round(delta_p, 10)
    (0.620114507, 0.1614498383)
    """

    key: ClassVar[str] = "doeblin"
    gamma: float
    omega: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, "[0, 1]"))
        if self.omega is not None:
            object.__setattr__(self, "omega", check_pmf("omega", self.omega, atol=1e-9))

    def amplify(self, eps, delta):
        eps, delta = _check_point(eps, delta)
        if self.gamma == 0.0:
            return 0.0, 0.0
        lg, l1g = _logs(self.gamma)
        e = np.array([eps])
        eps_p = amplify_eps(e, self.gamma)[0]
        log_d = _doeblin_log_delta(e, np.array([log0(delta)]), lg, l1g)[0]
        return float(eps_p), min(1.0, math.exp(min(0.0, float(log_d))))

    def amplify_profile(self, profile):
        profile = _require_profile(profile)
        if self.gamma == 0.0:
            return _zero_profile(profile, self)
        lg, l1g = _logs(self.gamma)

        def log_delta(eps_prime, base):
            eps = deamplify_eps(eps_prime, self.gamma)
            return _doeblin_log_delta(eps, base._log_delta(eps), lg, l1g)

        def log_delta_lower(eps_prime, base):
            eps_lo = deamplify_eps(eps_prime, self.gamma)
            eps_hi = deamplify_eps(eps_prime, self.gamma, up=True)
            return _doeblin_log_delta_lower(eps_lo, eps_hi, base._log_delta_lower(eps_hi), lg,
                                            l1g)

        return _AmplifiedProfile(profile, self, log_delta, profile.pure_epsilon,
                                 self.amplify_profile, log_delta_lower)

    def local_dp(self):
        return Blanket(self.gamma, self.omega)


@dataclass(frozen=True)
class UltraMixing(MixingCondition):
    """γ-ultra-mixing: ``K(x) ≪ K(x')`` and ``dK(x)/dK(x') ≥ 1 − γ`` (Definition 1(4)).

    Theorem 1(4): K∘M is (ε', δ')-DP with ``ε' = log(1 + γ(e^ε − 1))`` and
    ``δ' = γ δ e^{ε'−ε}``. Unlike Doeblin, a pure-DP M stays pure: ε₀ becomes
    ``log(1 + γ(e^{ε₀} − 1))``.

    >>> eps_p, delta_p = UltraMixing(0.5).amplify(1.0, 0.01)   # catalogue test vector
    >>> round(eps_p, 10), round(delta_p, 10)
    (0.620114507, 0.0034196986)
    """

    key: ClassVar[str] = "ultra_mixing"
    gamma: float

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, "[0, 1]"))

    def amplify(self, eps, delta):
        eps, delta = _check_point(eps, delta)
        if self.gamma == 0.0:
            return 0.0, 0.0
        lg, l1g = _logs(self.gamma)
        e = np.array([eps])
        eps_p = amplify_eps(e, self.gamma)[0]
        log_d = _ultra_log_delta(e, np.array([log0(delta)]), lg, l1g)[0]
        return float(eps_p), min(1.0, math.exp(min(0.0, float(log_d))))

    def amplify_profile(self, profile):
        profile = _require_profile(profile)
        if self.gamma == 0.0:
            return _zero_profile(profile, self)
        lg, l1g = _logs(self.gamma)
        pure = profile.pure_epsilon
        if math.isfinite(pure):
            pure = float(amplify_eps(pure, self.gamma))

        def log_delta(eps_prime, base):
            eps = deamplify_eps(eps_prime, self.gamma)
            return _ultra_log_delta(eps, base._log_delta(eps), lg, l1g)

        def log_delta_lower(eps_prime, base):
            # γ δ(ε) (γ + (1 − γ) e^{−ε}) decreases in ε: at the inverse map rounded up
            eps = deamplify_eps(eps_prime, self.gamma, up=True)
            return _ultra_log_delta_lower(eps, base._log_delta_lower(eps), lg, l1g)

        return _AmplifiedProfile(profile, self, log_delta, pure, self.amplify_profile,
                                 log_delta_lower)

    def local_dp(self):
        # (log 1/(1 − γ), 0)-LDP; rounded up
        eps = math.inf if self.gamma == 1.0 else float(next_up(next_up(-math.log1p(-self.gamma))))
        return LocalDP(eps, 0.0)


def _logs(gamma: float) -> tuple[float, float]:
    return log0(gamma), (-math.inf if gamma == 1.0 else math.log1p(-gamma))


def _log_scale(gamma: float, base_log_delta: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return round_up_log(math.log(gamma) + base_log_delta) if gamma > 0 else \
            np.full(base_log_delta.shape, -np.inf)


def _log_scale_lower(gamma: float, base_log_lower: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return round_down_log(math.log(gamma) + base_log_lower) if gamma > 0 else \
            np.full(base_log_lower.shape, -np.inf)


def _doeblin_log_delta_lower(eps_lo, eps_hi, log_delta_lower, lg, l1g):
    """Lower bound on Theorem 1(3)'s δ' at an exact ε in [eps_lo, eps_hi]: (1 − γ)(1 − e^{−ε})
    increases in ε (taken at eps_lo), γ + (1 − γ)e^{−ε} decreases (at eps_hi, where the lower
    δ is also taken); the upper value's margins are subtracted."""
    with np.errstate(divide="ignore", invalid="ignore"):
        first = l1g + log1mexp(-eps_lo)
        second = _log_shrink(eps_hi, lg, l1g) + log_delta_lower
        val = lg + np.logaddexp(first, second)
    return round_down_log(val - 8 * ULP, ulps=8)


def _ultra_log_delta_lower(eps, log_delta_lower, lg, l1g):
    """Lower bound on ``γ δ e^{ε'−ε}`` (Theorem 1(4)) at an ε above the exact one."""
    with np.errstate(divide="ignore", invalid="ignore"):
        val = lg + log_delta_lower + _log_shrink(eps, lg, l1g)
    return round_down_log(val - 8 * ULP, ulps=8)


def _doeblin_log_delta(eps, log_delta, lg, l1g):
    """log of ``γ[(1 − γ)(1 − e^{−ε}) + (γ + (1 − γ)e^{−ε}) δ]`` (Theorem 1(3)), rounded up."""
    with np.errstate(divide="ignore", invalid="ignore"):
        first = l1g + log1mexp(-eps)
        second = _log_shrink(eps, lg, l1g) + log_delta
        val = lg + np.logaddexp(first, second)
    return round_up_log(val, 8 * ULP)


def _ultra_log_delta(eps, log_delta, lg, l1g):
    """log of ``γ δ e^{ε'−ε} = γ δ (γ + (1 − γ)e^{−ε})`` (Theorem 1(4)), rounded up."""
    with np.errstate(divide="ignore", invalid="ignore"):
        val = lg + log_delta + _log_shrink(eps, lg, l1g)
    return round_up_log(val, 8 * ULP)


def implies(stronger: MixingCondition, weaker: MixingCondition) -> bool:
    """Whether ``stronger`` implies ``weaker`` by the lattice of Figure 1.

    The implications (same γ) are γ-ultra-mixing ⇒ γ-Doeblin ⇒ γ-Dobrushin ⇒ (γ, ε)-Dobrushin
    for every ε ≥ 0; each condition also implies itself with any larger γ, and (γ, ε)-Dobrushin
    implies (γ, ε')-Dobrushin for ε' ≥ ε (``D_{e^ε}`` is non-increasing in ε; γ-Dobrushin is
    (γ, 0)-Dobrushin because ``D_1 = TV``). Proofs: take ω = K(x₀) for the first arrow; if
    ``K(x), K(x') ≥ (1 − γ)ω`` then ``TV(K(x), K(x')) ≤ γ`` for the second.

    >>> implies(UltraMixing(0.3), Dobrushin(0.4)), implies(Dobrushin(0.3), Doeblin(0.9))
    (True, False)
    """
    rank = {UltraMixing: 3, Doeblin: 2, Dobrushin: 1, EpsDobrushin: 0}
    for name, cond in (("stronger", stronger), ("weaker", weaker)):
        if type(cond) not in rank:
            raise InvalidParameterError(name, "a MixingCondition", cond)
    if stronger.gamma > weaker.gamma:
        return False
    rs, rw = rank[type(stronger)], rank[type(weaker)]
    if rs < rw:
        return False
    if rw == 0:
        base_eps = stronger.eps if isinstance(stronger, EpsDobrushin) else 0.0
        return base_eps <= weaker.eps
    return True


# ---------------------------------------------------------------------------------------------
# amplified privacy profiles
# ---------------------------------------------------------------------------------------------


class _AmplifiedProfile(PrivacyProfile):
    """Profile of K∘M: ``min(δ_M(ε), bound(ε))`` for a Theorem 1 bound (both upper bounds).

    ``log_bound(eps, base)`` receives the base profile; ``rebuild(profile)`` builds the same
    amplified profile on another base (used for group privacy: Theorem 1 holds for any pair of
    inputs of M, hence for k-neighbours with the group profile δ_k). ``log_bound_lower(eps,
    base)`` is a lower bound on the same formula (from the base's lower values; ``None``: no
    lower information). Lower values are of this object's function, min(δ_M, bound), not of
    the profile of K∘M.
    """

    #: a minimum of bounds (or a kernel's ε-Dobrushin curve) need not be convex in e^ε
    is_curve = False

    def __init__(self, base: PrivacyProfile, condition, log_bound: Callable, pure: float,
                 rebuild: Callable[[PrivacyProfile], PrivacyProfile],
                 log_bound_lower: Callable | None = None):
        if not isinstance(base, PrivacyProfile):
            raise InvalidParameterError("profile", "a PrivacyProfile", base)
        self.base = base
        self.condition = condition
        self._log_bound = log_bound
        self._log_bound_lower = log_bound_lower
        self._rebuild = rebuild
        self._pure = min(pure, base.pure_epsilon)
        self.relation = base.relation

    @property
    def pure_epsilon(self) -> float:
        return self._pure

    def _log_delta(self, eps):
        out = np.minimum(self.base._log_delta(eps), self._log_bound(eps, self.base))
        return _zero_beyond(out, eps, self._pure)

    def _log_delta_lower(self, eps):
        if self._log_bound_lower is None:
            return np.full(eps.shape, -np.inf)
        # min(f, g) ≥ min(f_lo, g_lo)
        out = np.minimum(self.base._log_delta_lower(eps), self._log_bound_lower(eps, self.base))
        return _zero_beyond(out, eps, self._pure)

    def _white_box_group(self, k):
        return self._rebuild(self.base.group(k))

    def __repr__(self) -> str:
        return f"AmplifiedProfile({self.condition!r}, base={self.base!r})"


def _zero_beyond(log_delta: np.ndarray, eps: np.ndarray, pure: float) -> np.ndarray:
    """``-inf`` at ε ≥ the pure ε (when finite: an infinite pure ε means δ never reaches 0)."""
    if math.isinf(pure):
        return log_delta
    return np.where(eps >= pure, -np.inf, log_delta)


def _require_profile(profile: Any) -> PrivacyProfile:
    if not isinstance(profile, PrivacyProfile):
        raise InvalidParameterError("profile", "a PrivacyProfile", profile)
    return profile


def _zero_profile(profile: PrivacyProfile, condition) -> PrivacyProfile:
    """γ = 0: K ignores its input, so K∘M has δ ≡ 0."""
    return _AmplifiedProfile(profile, condition, lambda e, b: np.full(e.shape, -np.inf), 0.0,
                             lambda p: _zero_profile(p, condition),
                             lambda e, b: np.full(e.shape, -np.inf))


def _eps_dobrushin_profile(profile: PrivacyProfile, condition, gamma_of_eps_tilde: Callable,
                          gamma_lower_of_eps_tilde: Callable | None = None):
    """Theorem 1(2) at every ε: ``δ'(ε) = γ(ε̃(ε, δ(ε))) δ(ε)`` with ε̃ rounded down and
    ``gamma_of_eps_tilde`` an upper bound on the kernel's (γ, ε̃)-Dobrushin curve.

    ``gamma_lower_of_eps_tilde`` (a lower bound on the exact curve) gives lower values:
    γ(ε̃(δ)) δ is non-decreasing in δ (ε̃ decreases in δ, the curve is non-increasing in ε̃), so
    the base's lower δ with ε̃ rounded up and the lower curve there bound it below."""

    def directed(eps, base, lower: bool):
        # upper: the base's upper δ, ε̃ rounded down, the upper curve, the result rounded up;
        # lower: the base's lower δ, ε̃ rounded up, the lower curve, the result rounded down
        base_log = base._log_delta_lower(eps) if lower else base._log_delta(eps)
        # ε̃ = the inverse ε-map with η = δ (given by its logarithm: δ may be below 1e-308)
        et = np.asarray(deamplify_eps(eps, log_eta=base_log, up=lower), dtype=float)
        curve = gamma_lower_of_eps_tilde if lower else gamma_of_eps_tilde
        gamma = np.asarray(curve(et), dtype=float)
        with np.errstate(divide="ignore"):
            log_value = np.log(gamma) + base_log
            return round_down_log(log_value) if lower else round_up_log(log_value)

    def log_bound(eps, base):
        return directed(eps, base, lower=False)

    def log_bound_lower(eps, base):
        return directed(eps, base, lower=True)

    return _AmplifiedProfile(
        profile, condition, log_bound, profile.pure_epsilon,
        lambda p: _eps_dobrushin_profile(p, condition, gamma_of_eps_tilde,
                                         gamma_lower_of_eps_tilde),
        None if gamma_lower_of_eps_tilde is None else log_bound_lower)


class _MinimumProfile(PrivacyProfile):
    """The pointwise minimum of several upper bounds on one profile."""

    #: a minimum of bounds (or a kernel's ε-Dobrushin curve) need not be convex in e^ε
    is_curve = False

    def __init__(self, profiles: list[PrivacyProfile], label: str = ""):
        self.profiles = list(profiles)
        self.relation = self.profiles[0].relation
        self.label = label

    @property
    def pure_epsilon(self) -> float:
        return min(p.pure_epsilon for p in self.profiles)

    def _log_delta(self, eps):
        out = self.profiles[0]._log_delta(eps)
        for p in self.profiles[1:]:
            out = np.minimum(out, p._log_delta(eps))
        return _zero_beyond(out, eps, self.pure_epsilon)

    def _log_delta_lower(self, eps):
        # min(f, g) ≥ min(f_lo, g_lo): the minimum of the lower values
        out = self.profiles[0]._log_delta_lower(eps)
        for p in self.profiles[1:]:
            out = np.minimum(out, p._log_delta_lower(eps))
        return _zero_beyond(out, eps, self.pure_epsilon)

    def _white_box_group(self, k):
        return _MinimumProfile([p.group(k) for p in self.profiles], self.label)

    def __repr__(self) -> str:
        return f"_MinimumProfile({self.label or len(self.profiles)})"


# ---------------------------------------------------------------------------------------------
# finite kernels
# ---------------------------------------------------------------------------------------------


def _sum_up(total: float, m: int) -> float:
    """A computed sum of m non-negative terms raised by its rounding-error bound, capped at 1."""
    if total == 0.0:
        return 0.0
    return min(1.0, total * (1.0 + (4.0 + math.ceil(math.log2(max(m, 2)))) * ULP))


def read_kernel_csv(path: str | os.PathLike, *, tolerance: float = 1e-9) -> MarkovKernel:
    """Read a row-stochastic matrix from a CSV file (rows = inputs, columns = outputs).

    Numbers are separated by commas; blank lines and lines starting with ``#`` are ignored, and a
    first line that is not numeric is taken as a header. Every row must have the same number of
    entries, each finite and non-negative, summing to 1 within ``tolerance``.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("0.9,0.1\\n0.2,0.8\\n")
    >>> k = read_kernel_csv(f.name); os.unlink(f.name)
    >>> round(k.dobrushin, 12)
    0.7
    """
    tol = check_real("tolerance", tolerance, "[0, 1)")
    lines = read_text_file("kernel", path, "CSV file").splitlines()
    rows: list[list[float]] = []
    header_allowed = True
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        cells = [c.strip() for c in text.split(",")]
        if cells[-1] == "":
            cells = cells[:-1]  # a trailing comma
        try:
            rows.append([float(c) for c in cells])
        except ValueError as exc:
            if header_allowed:
                header_allowed = False  # the first non-comment line may be a header
                continue
            raise InvalidParameterError(
                "kernel", "a CSV file of numbers", f"{path}, line {number}: {text[:60]!r}"
            ) from exc
        header_allowed = False
    if not rows:
        raise InvalidParameterError("kernel", "a CSV file with at least one row of numbers",
                                    str(path))
    width = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width:
            raise InvalidParameterError(
                "kernel", f"a CSV file whose rows all have {width} entries",
                f"{path}: row {i + 1} has {len(r)}")
    return MarkovKernel(np.array(rows, dtype=float), tolerance=tol)


class MarkovKernel:
    """A Markov kernel between finite sets, given as a row-stochastic matrix ``K[x, y]``.

    Parameters
    ----------
    matrix : array_like, shape (n_inputs, n_outputs)
        Finite, non-negative entries; each row sums to 1 within ``tolerance`` and is then divided
        by its sum (documented, not silent: the coefficients are those of that stochastic matrix).
    tolerance : float
        Admissible deviation of the row sums from 1 (default 1e-9).

    Attributes give the best constants of Definition 1 (all rounded up, see the module
    docstring): :attr:`dobrushin`, :meth:`eps_dobrushin` (the (γ, ε)-Dobrushin curve),
    :attr:`doeblin` with :attr:`doeblin_minorant`, :attr:`ultra_mixing`.

    Examples
    --------
    >>> k = MarkovKernel([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])
    >>> [round(g, 10) for g in (k.dobrushin, k.doeblin, k.ultra_mixing)]
    [0.3, 0.3, 0.6]
    >>> [round(float(w), 10) for w in k.doeblin_minorant]
    [0.2857142857, 0.4285714286, 0.2857142857]
    >>> eps_p, delta_p = k.amplify(1.0, 0.01)["ultra_mixing"]
    >>> round(eps_p, 6), round(delta_p, 6)
    (0.708513, 0.004483)
    """

    __slots__ = ("_cache", "_raw", "matrix", "tolerance")

    def __init__(self, matrix: Any, *, tolerance: float = 1e-9):
        tol = check_real("tolerance", tolerance, "[0, 1)")
        k = check_real_array("kernel", matrix, "[0, inf)", ndim=2)
        if k.shape[0] < 1 or k.shape[1] < 1:
            raise InvalidParameterError("kernel", "a non-empty 2-D matrix", k.shape)
        sums = np.array([math.fsum(row) for row in k.tolist()])
        bad = np.abs(sums - 1.0) > tol
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(
                "kernel", f"row-stochastic (every row sums to 1 within {tol:g})", float(sums[i]),
                detail=f"the sum of row {i}")
        self._raw = k.copy()
        self._raw.setflags(write=False)
        k = k / sums[:, None]
        k.setflags(write=False)
        self.matrix = k
        self.tolerance = tol
        self._cache: dict[str, Any] = {}

    @classmethod
    def from_csv(cls, path: str | os.PathLike, *, tolerance: float = 1e-9) -> MarkovKernel:
        """Read the matrix from a CSV file (see :func:`read_kernel_csv`)."""
        return read_kernel_csv(path, tolerance=tolerance)

    @property
    def n_inputs(self) -> int:
        return self.matrix.shape[0]

    @property
    def n_outputs(self) -> int:
        return self.matrix.shape[1]

    def __repr__(self) -> str:
        return f"MarkovKernel({self.n_inputs}x{self.n_outputs})"

    def apply(self, pmf: Any) -> np.ndarray:
        """``μK``: the output distribution when the input is drawn from ``pmf``."""
        mu = check_pmf("pmf", pmf, atol=1e-9)
        if mu.size != self.n_inputs:
            raise InvalidParameterError("pmf", f"a probability vector of length {self.n_inputs}",
                                        mu.size)
        return mu @ self.matrix

    # -----------------------------------------------------------------------------------------
    # coefficients
    # -----------------------------------------------------------------------------------------

    @property
    def dobrushin(self) -> float:
        """``γ_D = max_{x,x'} TV(K(x), K(x'))``, rounded up."""
        if "dobrushin" not in self._cache:
            k = self.matrix
            best = 0.0
            for i in range(k.shape[0]):
                a, b = k[i][None, :], k
                # each normalised entry is within 2 ulp of the exact K_raw[x, y]/Σ_y K_raw[x, y]
                # (division and the correctly rounded sum), so |a − b| is within 3 ulp (a + b)
                # of the exact term — even when a = b as floats. Rows that are identical before
                # normalisation are identical after, exactly: no margin for those pairs.
                same = np.all(self._raw[i][None, :] == self._raw, axis=1)
                # (in the subnormal range the error is absolute: one subnormal unit per entry)
                tv = 0.5 * (np.abs(a - b) + 4 * ULP * (a + b) + 4 * _SUBNORMAL).sum(axis=1)
                best = max(best, float(np.where(same, 0.0, tv).max()))
            # the true TV is at most the true Doeblin constant (Figure 1): keep the lattice
            # exact on the reported (rounded-up) values too
            self._cache["dobrushin"] = min(_sum_up(best, k.shape[1]), self.doeblin)
        return self._cache["dobrushin"]

    def eps_dobrushin(self, eps: Any):
        """The (γ, ε)-Dobrushin curve ``γ_ε = max_{x,x'} Σ_y [K[x,y] − e^ε K[x',y]]_+``.

        Vectorised over ε ∈ [0, ∞]; rounded up (each term is raised by its rounding-error bound
        before the positive part is taken, so exact zeros stay zero only when every term is
        clearly negative); ``γ_0 = γ_D`` and ``γ_∞ = max_{x,x'} K(x)(supp K(x) \\ supp K(x'))``.

        >>> k = MarkovKernel([[0.75, 0.25], [0.25, 0.75]])
        >>> [round(float(g), 10) for g in k.eps_dobrushin([0.0, 0.5, math.log(3) + 1e-9])]
        [0.5, 0.3378196823, 0.0]
        """
        arr = check_real_array("eps", eps, "[0, inf]")
        flat = arr.reshape(-1)
        out = np.empty(flat.shape)
        k = self.matrix
        n, m = k.shape
        finite = np.isfinite(flat)
        if np.any(~finite):
            best = 0.0
            for i in range(n):
                outside = np.where((k[i][None, :] > 0) & (k == 0),
                                   k[i][None, :] + 2 * _SUBNORMAL, 0.0)
                best = max(best, float(outside.sum(axis=1).max()))
            out[~finite] = _sum_up(best, m)
        idx = np.flatnonzero(finite)
        step = max(1, _CHUNK // (n * m))
        for start in range(0, idx.size, step):
            sel = idx[start:start + step]
            with np.errstate(over="ignore"):
                alpha = np.exp(flat[sel])[:, None, None]
            # e^ε within 1 ulp, α·b within 2 ulp more, entries within 2 ulp: 8 ulp (a + α b);
            # subnormal entries are off by up to one subnormal unit (absolute), times α for b
            sub = (k > 0) & (k < _NORMAL)
            with np.errstate(invalid="ignore", over="ignore"):
                scaled = np.where(k[None, :, :] > 0, alpha * k[None, :, :], 0.0)
                tiny_b = np.where(sub[None, :, :], 2.0 * alpha * _SUBNORMAL, 0.0)
            best = np.zeros(sel.size)
            for i in range(n):
                a = k[i][None, None, :]
                tiny = np.where(sub[i][None, None, :], 2.0 * _SUBNORMAL, 0.0) + tiny_b
                with np.errstate(invalid="ignore"):
                    terms = a - scaled + 8 * ULP * (a + scaled) + tiny
                terms = np.where(np.isnan(terms) | np.isneginf(terms), 0.0, terms)
                val = np.maximum(terms, 0.0).sum(axis=2).max(axis=1)
                best = np.maximum(best, val)
            out[sel] = [_sum_up(float(v), m) for v in best]
        # D_{e^ε} ≤ D_1 = TV: never above γ_D (and exactly γ_D at ε = 0)
        out = np.where(flat == 0.0, self.dobrushin, np.minimum(out, self.dobrushin))
        out = out.reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    def _eps_dobrushin_lower(self, eps: Any) -> np.ndarray:
        """A lower bound on the exact (γ, ε)-Dobrushin curve of the (exactly normalised)
        kernel, for a 1-D array of ε ∈ [0, ∞]: :meth:`eps_dobrushin` with every rounding
        reversed (each term lowered by its error bound before the positive part, the sum
        lowered by its own)."""
        flat = np.asarray(eps, dtype=float).reshape(-1)
        out = np.zeros(flat.shape)
        k = self.matrix
        raw = self._raw
        n, m = k.shape
        shrink = 1.0 - (4.0 + math.ceil(math.log2(max(m, 2)))) * ULP
        finite = np.isfinite(flat)
        if np.any(~finite):
            best = 0.0
            for i in range(n):
                # mass of K(x) where K(x') is exactly 0 (zero entries stay zero)
                outside = np.where((raw[i][None, :] > 0) & (raw == 0),
                                   k[i][None, :] * (1 - 2 * ULP) - 2 * _SUBNORMAL, 0.0)
                best = max(best, float(np.maximum(outside, 0.0).sum(axis=1).max()))
            out[~finite] = best * shrink
        idx = np.flatnonzero(finite)
        step = max(1, _CHUNK // (n * m))
        sub = (k > 0) & (k < _NORMAL)
        for start in range(0, idx.size, step):
            sel = idx[start:start + step]
            with np.errstate(over="ignore"):
                alpha = np.exp(flat[sel])[:, None, None]
            with np.errstate(invalid="ignore", over="ignore"):
                scaled = np.where(k[None, :, :] > 0, alpha * k[None, :, :], 0.0)
                tiny_b = np.where(sub[None, :, :], 2.0 * alpha * _SUBNORMAL, 0.0)
            best = np.zeros(sel.size)
            for i in range(n):
                a = k[i][None, None, :]
                tiny = np.where(sub[i][None, None, :], 2.0 * _SUBNORMAL, 0.0) + tiny_b
                with np.errstate(invalid="ignore"):
                    terms = a - scaled - 8 * ULP * (a + scaled) - tiny
                terms = np.where(np.isnan(terms), 0.0, terms)
                val = np.maximum(terms, 0.0).sum(axis=2).max(axis=1)
                best = np.maximum(best, val)
            out[sel] = best * shrink
        return out

    @property
    def doeblin(self) -> float:
        """Best Doeblin constant ``γ = 1 − Σ_y min_x K[x, y]``, rounded up."""
        self._doeblin()
        return self._cache["doeblin"]

    @property
    def doeblin_minorant(self) -> np.ndarray:
        """The optimal ω of Definition 1(3): the column minima divided by their sum (uniform when
        every column minimum is 0, where γ = 1 and any ω works)."""
        self._doeblin()
        return self._cache["omega"].copy()

    def _doeblin(self) -> None:
        if "doeblin" in self._cache:
            return
        k = self.matrix
        mins = k.min(axis=0)
        total = math.fsum(mins.tolist())
        # each entry is within 2 ulp (or, subnormal, one subnormal unit) of the exact normalised
        # value: lower the sum accordingly
        total_down = max(0.0, total * (1.0 - 4.0 * ULP) - 2 * k.shape[1] * _SUBNORMAL)
        gamma = min(1.0, float(next_up(1.0 - total_down)), self.ultra_mixing)
        omega = mins / total if total > 0 else np.full(k.shape[1], 1.0 / k.shape[1])
        self._cache["doeblin"] = gamma
        self._cache["omega"] = omega

    @property
    def absolutely_continuous(self) -> bool:
        """Whether all rows have the same support (``K(x) ≪ K(x')`` for all x, x')."""
        positive = self.matrix > 0
        return bool(np.all(positive.all(axis=0) | ~positive.any(axis=0)))

    @property
    def ultra_mixing(self) -> float:
        """Best ultra-mixing constant ``1 − min_y min_x K[x,y]/max_x K[x,y]``, rounded up; 1 when
        the rows have different supports (see the module docstring)."""
        if "ultra" not in self._cache:
            if not self.absolutely_continuous:
                gamma = 1.0
            else:
                k = self.matrix
                cmax = k.max(axis=0)
                live = cmax > 0
                # entries within 2 ulp or one subnormal unit of their exact values
                lo = np.maximum(k.min(axis=0)[live] * (1 - 2 * ULP) - 2 * _SUBNORMAL, 0.0)
                hi = cmax[live] * (1 + 2 * ULP) + 2 * _SUBNORMAL
                ratio_down = float((lo / hi).min()) * (1.0 - 2.0 * ULP)
                gamma = min(1.0, float(next_up(1.0 - ratio_down)))
            self._cache["ultra"] = gamma
        return self._cache["ultra"]

    # -----------------------------------------------------------------------------------------
    # conditions, checks and amplification
    # -----------------------------------------------------------------------------------------

    def conditions(self, eps: float = 0.0) -> dict[str, MixingCondition]:
        """The conditions the kernel satisfies, with its best constants (the (γ, ε)-Dobrushin
        one at ``eps``): all four, except ultra-mixing when the rows have different supports."""
        e = check_real("eps", eps, "[0, inf]")
        out: dict[str, MixingCondition] = {
            "dobrushin": Dobrushin(self.dobrushin),
            "eps_dobrushin": EpsDobrushin(float(self.eps_dobrushin(e)), e),
            "doeblin": Doeblin(self.doeblin, self.doeblin_minorant),
        }
        if self.absolutely_continuous:
            out["ultra_mixing"] = UltraMixing(self.ultra_mixing)
        return out

    def satisfies(self, condition: MixingCondition | LocalDP | Blanket, *,
                  tol: float = 1e-12) -> bool:
        """Whether the kernel satisfies a mixing condition or its local-DP form (Figure 2),
        checked directly from the definitions in floating point, with an absolute slack
        ``tol`` for rounding (a check, not a bound: the bounds use the rounded-up
        coefficients)."""
        k = self.matrix
        tol = check_real("tol", tol, "[0, 1]")
        if isinstance(condition, Dobrushin):
            return self._max_pair(lambda a, b: 0.5 * np.abs(a - b).sum(axis=-1)) \
                <= condition.gamma + tol
        if isinstance(condition, EpsDobrushin | LocalDP):
            gamma = condition.gamma if isinstance(condition, EpsDobrushin) else condition.delta
            return self._max_hockey(condition.eps) <= gamma + tol
        if isinstance(condition, Doeblin | Blanket):
            if condition.omega is not None:
                omega = np.asarray(condition.omega, dtype=float)
                if omega.size != k.shape[1]:
                    return False
                return bool(np.all(k >= (1.0 - condition.gamma) * omega[None, :] - tol))
            return 1.0 - math.fsum(k.min(axis=0).tolist()) <= condition.gamma + tol
        if isinstance(condition, UltraMixing):
            if not self.absolutely_continuous:
                return False
            cmax = k.max(axis=0)
            live = cmax > 0
            return bool(np.all(k.min(axis=0)[live]
                               >= (1.0 - condition.gamma) * cmax[live] - tol))
        raise InvalidParameterError("condition", "a MixingCondition, LocalDP or Blanket",
                                    condition)

    def _max_pair(self, func) -> float:
        k = self.matrix
        return max(float(func(k[i][None, :], k).max()) for i in range(k.shape[0]))

    def _max_hockey(self, eps: float) -> float:
        if math.isinf(eps):
            return self._max_pair(lambda a, b: (((a > 0) & (b == 0)) * a).sum(axis=-1))
        alpha = math.exp(eps) if eps < 709 else math.inf

        def hockey(a, b):
            with np.errstate(invalid="ignore", over="ignore"):
                scaled = np.where(b > 0, alpha * b, 0.0)
            return np.maximum(a - scaled, 0.0).sum(axis=-1)

        return self._max_pair(hockey)

    def check_lattice(self, eps: Any = (0.0, 0.5, 1.0, 2.0, math.inf)) -> bool:
        """Figure 1 on this kernel: ``γ_ε ≤ γ_D ≤ γ_Doeblin ≤ γ_U`` at the given ε, and each
        implied condition (:func:`implies`) is satisfied."""
        curve = np.atleast_1d(self.eps_dobrushin(eps))
        chain = bool(np.all(curve <= self.dobrushin)) and \
            self.dobrushin <= self.doeblin <= self.ultra_mixing
        conds = [c for c in self.conditions().values() if self.satisfies(c)]
        implied = all(self.satisfies(w) for s in conds for w in conds if implies(s, w))
        return chain and implied

    def local_dp_profile(self) -> PrivacyProfile:
        """The kernel as a local randomiser: ``δ_K(ε) = γ_ε`` (Figure 2: K is (ε, δ)-LDP iff
        ``γ_ε ≤ δ``). An upper bound (the curve is rounded up)."""
        return _KernelLocalProfile(self)

    def amplify(self, eps: float, delta: float) -> dict[str, tuple[float, float]]:
        """Theorem 1 for every condition the kernel satisfies, at its best constants: a map from
        the condition key (``dobrushin``, ``eps_dobrushin``, ``doeblin``, ``ultra_mixing``; the
        last only when the rows share their support) to (ε', δ').

        The (γ, ε)-Dobrushin entry uses the kernel's coefficient at ``ε̃(ε, δ)``.
        """
        eps, delta = _check_point(eps, delta)
        conds = self.conditions(float(eps_tilde(eps, delta)))
        return {key: cond.amplify(eps, delta) for key, cond in conds.items()}

    def amplify_profile(self, profile: PrivacyProfile,
                        condition: str | None = None) -> PrivacyProfile:
        """Profile of K∘M from the profile of M: Theorem 1 for one condition (``condition`` is a
        key as in :meth:`amplify`), or the pointwise minimum over all four (default).

        >>> from privamp import RandomizedResponse
        >>> k = MarkovKernel([[0.9, 0.1], [0.2, 0.8]])
        >>> base = RandomizedResponse.from_epsilon(1.0).profile()
        >>> bool(k.amplify_profile(base).delta(0.0) < base.delta(0.0))
        True
        """
        profile = _require_profile(profile)
        conds = self.conditions()
        builders = {
            "dobrushin": lambda: conds["dobrushin"].amplify_profile(profile),
            "eps_dobrushin": lambda: _eps_dobrushin_profile(
                profile, EpsDobrushin(self.dobrushin, 0.0), self.eps_dobrushin,
                self._eps_dobrushin_lower),
            "doeblin": lambda: conds["doeblin"].amplify_profile(profile),
            "ultra_mixing": lambda: conds["ultra_mixing"].amplify_profile(profile),
        }
        if condition is not None:
            if condition not in builders:
                raise InvalidParameterError("condition", "one of " + ", ".join(builders),
                                            condition)
            if condition not in conds and condition != "eps_dobrushin":
                raise UnsupportedCombinationError(
                    f"the kernel is not {condition.replace('_', '-')}: its rows have "
                    "different supports (Definition 1(4))")
            return builders[condition]()
        keys = [k for k in builders if k in conds or k == "eps_dobrushin"]
        return _MinimumProfile([builders[k]() for k in keys], label=repr(self))


class _KernelLocalProfile(PrivacyProfile):
    """``ε ↦ γ_ε`` of a finite kernel (its local-DP profile, Figure 2)."""

    #: a minimum of bounds (or a kernel's ε-Dobrushin curve) need not be convex in e^ε
    is_curve = False

    def __init__(self, kernel: MarkovKernel):
        self.kernel = kernel

    def _log_delta(self, eps):
        with np.errstate(divide="ignore"):
            out = round_up_log(np.log(np.asarray(self.kernel.eps_dobrushin(eps), dtype=float)))
        return _zero_beyond(out, eps, self.pure_epsilon)

    def _log_delta_lower(self, eps):
        with np.errstate(divide="ignore"):
            out = round_down_log(np.log(self.kernel._eps_dobrushin_lower(eps)))
        return _zero_beyond(out, eps, self.pure_epsilon)

    @property
    def pure_epsilon(self) -> float:
        k = self.kernel
        if not k.absolutely_continuous:
            return math.inf
        mat = k.matrix
        cmax, cmin = mat.max(axis=0), mat.min(axis=0)
        live = cmax > 0
        # log max ratio, rounded up
        val = float(np.max(np.log(cmax[live]) - np.log(cmin[live])))
        return float(round_up_log(val, 8 * ULP)) if val > 0 else 0.0

    def __repr__(self) -> str:
        return f"_KernelLocalProfile({self.kernel!r})"

