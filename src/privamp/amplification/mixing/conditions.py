"""The uniform mixing conditions of Balle, Barthe, Gaboardi, Geumlek (2019), Definition 1, with
their amplification statements (Theorem 1), local-DP counterparts (Figure 2) and implications
(Figure 1). See :mod:`privamp.amplification.mixing` for the statements and the safety rules.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..._numerics import (
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
from ..._validation import check_pmf, check_real, check_real_array
from ...errors import InvalidParameterError
from ...profiles import PrivacyProfile
from .amplified import (
    _AmplifiedProfile,
    _eps_dobrushin_profile,
    _require_profile,
    _zero_profile,
)

__all__ = [
    "Blanket",
    "Dobrushin",
    "Doeblin",
    "EpsDobrushin",
    "LocalDP",
    "MixingCondition",
    "UltraMixing",
    "eps_tilde",
    "implies",
]


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

    >>> from privamp.amplification.mixing import MarkovKernel
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


class _EpsMapCondition(MixingCondition):
    """Template of Theorem 1(3) and 1(4), the two conditions that move ε:
    ``ε' = log(1 + γ(e^ε − 1))`` (the toolkit's ε-map, rounded up) and a δ' formula in log space.

    Subclasses give the formula (:meth:`_log_delta_at`, rounded up), its lower bound at an ε'
    (:meth:`_log_delta_lower_at`, from the base's lower values) and the pure ε of K∘M
    (:meth:`_pure`; the base's by default); the point and profile forms are written once here.
    """

    gamma: float

    @abc.abstractmethod
    def _log_delta_at(self, eps: np.ndarray, log_delta: np.ndarray, lg: float,
                      l1g: float) -> np.ndarray:
        """log δ' at the base point (ε, log δ) (γ's logs lg, l1g), rounded up."""

    @abc.abstractmethod
    def _log_delta_lower_at(self, eps_prime: np.ndarray, base: PrivacyProfile, lg: float,
                            l1g: float) -> np.ndarray:
        """A lower bound on log δ'(ε') from the lower values of ``base``."""

    def _pure(self, pure: float) -> float:
        return pure

    def amplify(self, eps, delta):
        eps, delta = _check_point(eps, delta)
        if self.gamma == 0.0:
            return 0.0, 0.0
        lg, l1g = _logs(self.gamma)
        e = np.array([eps])
        eps_p = amplify_eps(e, self.gamma)[0]
        log_d = self._log_delta_at(e, np.array([log0(delta)]), lg, l1g)[0]
        return float(eps_p), min(1.0, math.exp(min(0.0, float(log_d))))

    def amplify_profile(self, profile):
        profile = _require_profile(profile)
        if self.gamma == 0.0:
            return _zero_profile(profile, self)
        lg, l1g = _logs(self.gamma)

        def log_delta(eps_prime, base):
            eps = deamplify_eps(eps_prime, self.gamma)
            return self._log_delta_at(eps, base._log_delta(eps), lg, l1g)

        def log_delta_lower(eps_prime, base):
            return self._log_delta_lower_at(eps_prime, base, lg, l1g)

        return _AmplifiedProfile(profile, self, log_delta, self._pure(profile.pure_epsilon),
                                 self.amplify_profile, log_delta_lower)


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
class Doeblin(_EpsMapCondition):
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

    def _log_delta_at(self, eps, log_delta, lg, l1g):
        return _doeblin_log_delta(eps, log_delta, lg, l1g)

    def _log_delta_lower_at(self, eps_prime, base, lg, l1g):
        eps_lo = deamplify_eps(eps_prime, self.gamma)
        eps_hi = deamplify_eps(eps_prime, self.gamma, up=True)
        return _doeblin_log_delta_lower(eps_lo, eps_hi, base._log_delta_lower(eps_hi), lg, l1g)

    def local_dp(self):
        return Blanket(self.gamma, self.omega)


@dataclass(frozen=True)
class UltraMixing(_EpsMapCondition):
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

    def _log_delta_at(self, eps, log_delta, lg, l1g):
        return _ultra_log_delta(eps, log_delta, lg, l1g)

    def _log_delta_lower_at(self, eps_prime, base, lg, l1g):
        # γ δ(ε) (γ + (1 − γ) e^{−ε}) decreases in ε: at the inverse map rounded up
        eps = deamplify_eps(eps_prime, self.gamma, up=True)
        return _ultra_log_delta_lower(eps, base._log_delta_lower(eps), lg, l1g)

    def _pure(self, pure: float) -> float:
        # a pure-DP M stays pure: ε₀ ↦ log(1 + γ(e^{ε₀} − 1)), rounded up
        return float(amplify_eps(pure, self.gamma)) if math.isfinite(pure) else pure

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
