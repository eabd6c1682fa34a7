"""The Laplace mechanism and its exact privacy profile (Balle, Barthe, Gaboardi 2018, Theorem 3).

``M(x) = f(x) + Lap(b)`` for a real-valued query f with sensitivity Δ = sup |f(x) − f(x')| under
the chosen relation. With θ = Δ/b::

    δ(ε) = [1 − exp((ε − θ)/2)]_+

so the mechanism is (θ, 0)-DP and not (θ − γ, 0)-DP for any γ > 0. White-box group privacy:
δ_k uses kθ.

Vector-valued queries: :meth:`LaplaceMechanism.release` adds independent Laplace noise to each
coordinate; the profile above is the exact one when neighbouring datasets change a single
coordinate by at most Δ (histograms and counts under add/remove, for example). Theorem 3 is a
scalar statement and privamp does not claim it for general L1 sensitivity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._numerics import ULP, div_down, div_up, mul_down, mul_up, round_down_log, round_up_log
from .._params import Param
from .._validation import check_real
from ..privacy_loss import LaplacePrivacyLoss
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from .base import SENSITIVITY, AdditiveNoiseMechanism, register

__all__ = ["LaplaceMechanism", "LaplaceProfile"]

_SUBNORMAL = math.ulp(0.0)


class LaplaceProfile(PrivacyProfile):
    """Exact privacy profile ``[1 − e^{(ε−θ)/2}]_+`` of the Laplace mechanism (Theorem 3).

    >>> p = LaplaceProfile(1.0)
    >>> round(float(p.delta(0.5)), 14), p.pure_epsilon
    (0.2211992169286, 1.0)
    """

    def __init__(self, theta: float, relation=NeighbouringRelation.ADD_REMOVE,
                 theta_lower: float | None = None):
        self.theta = check_real("theta", theta, "[0, inf)")
        self.relation = NeighbouringRelation.parse(relation)
        #: θ for the lower values (≤ θ: the profile grows with θ), e.g. Δ/b rounded down where
        #: ``theta`` is Δ/b rounded up
        self.theta_lower = (self.theta if theta_lower is None
                            else check_real("theta_lower", theta_lower, f"[0, {self.theta!r}]"))

    @staticmethod
    def _upper(th, eps):
        """Upper values of log δ at ε for θ = ``th`` (a float, or an array broadcasting with ε:
        the operations are elementwise)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            x = (eps - th) / 2.0  # exact for ε ∈ [θ/2, 2θ] (Sterbenz), few ulp otherwise
            val = np.log(-np.expm1(np.minimum(x, 0.0)))
            val = round_up_log(val)
        return np.where(eps >= th, -np.inf, val)

    @staticmethod
    def _lower(th, eps):
        """Lower values of log δ at ε for θ = ``th`` (float or broadcasting array)."""
        # ε − θ is one subtraction of floats (within ½ ulp of the exact difference, in relative
        # terms: no cancellation error beyond that), the halving is exact (or off by half a
        # subnormal): raising x by 1 ulp of |x| and a subnormal gives x_up ≥ the exact (ε − θ)/2,
        # and 1 − e^x decreases in x. −expm1 and log add a few ulp (round_down_log). θ_lower:
        # the profile grows with θ.
        with np.errstate(divide="ignore", invalid="ignore"):
            x = (eps - th) / 2.0
            x_up = x + ULP * np.abs(x) + _SUBNORMAL
            val = np.where(x_up < 0, np.log(-np.expm1(np.minimum(x_up, 0.0))), -np.inf)
            val = round_down_log(val)
        return np.where(eps >= th, -np.inf, val)

    def _log_delta(self, eps):
        return self._upper(self.theta, eps)

    def _log_delta_lower(self, eps):
        return self._lower(self.theta_lower, eps)

    @classmethod
    def _log_delta_rows(cls, profiles, eps, lower=False):
        # the elementwise formula on a (θ column) × (ε row) grid: each row as its own call
        theta = np.array([[p.theta_lower if lower else p.theta] for p in profiles], dtype=float)
        return (cls._lower if lower else cls._upper)(theta, eps[None, :])

    @property
    def pure_epsilon(self) -> float:
        return self.theta

    def curve_atoms(self):
        """The privacy loss of the Laplace pair is +θ beyond the shifted mean, −θ below the
        other one and continuous in between (under the unshifted law: mass ½ at −θ and
        ½e^{−θ} at +θ): atoms at ±θ, with a continuous part (not :meth:`curve_kinks`)."""
        return np.array([-self.theta, self.theta]) if self.theta > 0 else None

    def _white_box_group(self, k):
        return LaplaceProfile(mul_up(float(k), self.theta), self.relation,
                              theta_lower=mul_down(float(k), self.theta_lower))

    def __repr__(self) -> str:
        low = "" if self.theta_lower == self.theta else f", theta_lower={self.theta_lower!r}"
        return (f"LaplaceProfile(theta={self.theta!r}, relation={self.relation.value!r}"
                f"{low})")


@register("laplace")
@dataclass(frozen=True)
class LaplaceMechanism(AdditiveNoiseMechanism):
    """Laplace mechanism ``f(x) + Lap(0, b)``.

    The privacy profile is Theorem 3 with θ = Δ/b (rounded up), the pure-DP ε of the mechanism.

    Parameters
    ----------
    scale : float
        Laplace scale b > 0 (density ``e^{−|z|/b} / 2b``).
    sensitivity : float
        Δ ≥ 0: the largest change ``|f(x) − f(x')|`` of the (scalar) query between neighbours
        under ``relation``. A count has Δ = 1 under add/remove and under substitution; a sum of
        values in [0, B] has Δ = B under add/remove and Δ = B under substitution, a sum of values
        in [−B, B] has B and 2B.
    relation : NeighbouringRelation or str
        The relation Δ refers to.

    >>> m = LaplaceMechanism(scale=1.0)
    >>> m.profile().is_dp(1.0, 0.0), m.profile().is_dp(1.0 - 1e-9, 0.0)
    (True, False)
    """

    scale: float
    sensitivity: float = 1.0
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)
    params = (Param("scale", "(0, inf)", help="Laplace scale b (> 0)"), SENSITIVITY)
    noise = "scale"

    @classmethod
    def calibrated(cls, eps: float, sensitivity: float = 1.0,
                   relation=NeighbouringRelation.ADD_REMOVE) -> LaplaceMechanism:
        """The (ε, 0)-DP Laplace mechanism: b = Δ/ε, rounded up."""
        eps = check_real("eps", eps, "(0, inf)")
        sens = check_real("sensitivity", sensitivity, "(0, inf)")
        return cls(scale=div_up(sens, eps), sensitivity=sens, relation=relation)

    def _draw_noise(self, rng, shape):
        return rng.laplace(0.0, self.scale, size=shape)  # value + Lap(0, b) on each coordinate

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """Scales giving ε₀ = 2, 1 and 0.1."""
        return [cls(scale, relation=relation) for scale in (1.0, 0.5, 10.0)]

    @property
    def theta_lower(self) -> float:
        """θ = Δ/b rounded down (for the certified lower values)."""
        return div_down(self.sensitivity, self.scale)

    def profile(self) -> LaplaceProfile:
        return LaplaceProfile(self.theta, self.relation, theta_lower=self.theta_lower)

    def privacy_loss(self, reverse: bool = False) -> LaplacePrivacyLoss:
        return LaplacePrivacyLoss(self.theta)
