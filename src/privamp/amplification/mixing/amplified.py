"""Privacy profiles of K∘M built from Theorem 1 of Balle, Barthe, Gaboardi, Geumlek (2019):
the minimum of M's profile and an amplified bound, the pointwise minimum of several bounds, and
the Theorem 1(2) profile from a (γ, ε̃)-Dobrushin curve. Upper values are rounded up, lower
values down (see :mod:`privamp.amplification.mixing`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._numerics import deamplify_eps, round_down_log, round_up_log
from ...errors import InvalidParameterError
from ...profiles import PrivacyProfile

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
