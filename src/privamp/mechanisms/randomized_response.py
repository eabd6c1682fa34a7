"""Binary randomized response and the randomized membership mechanism (Balle et al. 2018, §5).

Randomized response ``R_p : {0, 1} → P({0, 1})`` returns its input bit with probability p and
the flipped bit otherwise. Its privacy profile is::

    ψ_p(ε) = [max(p, 1−p) − e^ε min(p, 1−p)]_+

The paper writes ``[p − e^ε (1 − p)]_+``, which is only right for p ≥ ½ (catalogue erratum E1:
at p = 0.3, ε = 0 the total variation is 0.4 while the paper's ψ gives 0); privamp implements the
symmetric form, which is correct for every p ∈ [0, 1].

The randomized membership mechanism ``M_{v,p}(x) = R_p(𝟙[v ∈ x])`` answers "is record v in the
dataset?" with randomized response. It is the extremal mechanism of Lemma 12 / Theorem 13: it
attains the amplification bounds of Theorems 8, 9 and 10 with equality.

Group privacy is white-box for both: the input bit changes at most once however many records
change, so δ_k = ψ_p for every k ≥ 1 (under either relation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._numerics import ULP, log1mexp, next_up, round_down_log, round_up_log
from .._params import Param
from .._validation import check_real, check_rng
from ..errors import InvalidParameterError
from ..privacy_loss import DiscretePrivacyLoss
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from .base import Mechanism, register

__all__ = [
    "RandomizedMembershipMechanism",
    "RandomizedResponse",
    "RandomizedResponseProfile",
]


def _one_minus_up(p: float) -> float:
    """1 − p rounded up."""
    from fractions import Fraction  # deferred: not needed to list the CLI's options

    q = 1.0 - p
    if Fraction(q) < 1 - Fraction(p):
        q = math.nextafter(q, math.inf)
    return q


def _one_minus_down(p: float) -> float:
    """1 − p rounded down."""
    from fractions import Fraction

    q = 1.0 - p
    if Fraction(q) > 1 - Fraction(p):
        q = math.nextafter(q, -math.inf)
    return q


class RandomizedResponseProfile(PrivacyProfile):
    """ψ_p(ε) = [max(p, 1−p) − e^ε min(p, 1−p)]_+ (erratum E1 corrected), for every relation.

    >>> round(float(RandomizedResponseProfile(0.3).delta(0.0)), 12)  # TV = 0.4, not 0
    0.4
    >>> round(RandomizedResponseProfile(0.75).pure_epsilon, 12) == round(math.log(3), 12)
    True
    """

    def __init__(self, p: float, relation=NeighbouringRelation.ADD_REMOVE):
        self.p = check_real("p", p, "[0, 1]")
        self.relation = NeighbouringRelation.parse(relation)
        # p_max rounded up and p_min rounded down keep ψ an upper bound
        if self.p >= 0.5:
            self._pmax, self._pmin = self.p, _one_minus_down(self.p)
        else:
            self._pmax, self._pmin = _one_minus_up(self.p), self.p
        # the opposite rounding (p_max down, p_min up) for the lower values; for p ≥ ½, 1 − p is
        # exact (Sterbenz) and both pairs coincide
        if self.p >= 0.5:
            self._pmax_lo, self._pmin_hi = self.p, _one_minus_up(self.p)
        else:
            self._pmax_lo, self._pmin_hi = _one_minus_down(self.p), self.p

    def _log_delta(self, eps):
        if self._pmin == 0.0:
            # p ∈ {0, 1}: the bit is revealed exactly. Two distinct point masses have
            # D_{e^ε} = 1 for every ε, including ε = ∞ (the mass outside the other's support).
            return np.zeros(eps.shape)
        # x = ε + log p_min − log p_max is within 2 ulp (|ε| + |log p_min| + |log p_max|) of the
        # exact exponent (two logarithms and two sums); lowering x by that bound raises
        # 1 − e^x. (Deciding δ = 0 from the computed x alone was wrong at the float just below
        # the kink: p = 0.75, ε = fl(log 3) − 1 ulp gave 0 where δ = 1e-16.)
        with np.errstate(divide="ignore", invalid="ignore"):
            lmin, lmax = math.log(self._pmin), math.log(self._pmax)
            x = eps + (lmin - lmax)
            x_dn = x - 2 * ULP * (np.abs(eps) + abs(lmin) + abs(lmax))
            val = np.where(x_dn < 0, lmax + log1mexp(np.minimum(x_dn, 0.0)), -np.inf)
            val = round_up_log(val, ulps=8)
        return np.where(eps >= self.pure_epsilon, -np.inf, val)

    def _log_delta_lower(self, eps):
        """``log(p_max (1 − e^{ε − ε₀}))`` with p_max rounded down, p_min up, and the exponent
        x = ε + log p_min − log p_max raised by its rounding error: the two logarithms are within
        ½ ulp of their magnitudes and the two sums within ½ ulp each, so
        ``|fl(x) − x| ≤ 2 ulp (|ε| + |log p_min| + |log p_max|)``. Near the kink ε₀ that error
        is larger than |x| and the value is −inf (δ is within the rounding of ε₀ of zero)."""
        if self._pmin == 0.0:
            return np.zeros(eps.shape)  # p ∈ {0, 1}: δ ≡ 1 (exactly representable)
        with np.errstate(divide="ignore", invalid="ignore"):
            lmin, lmax = math.log(self._pmin_hi), math.log(self._pmax_lo)
            x = eps + (lmin - lmax)
            x_up = x + 2 * ULP * (np.abs(eps) + abs(lmin) + abs(lmax))
            val = np.where(x_up < 0, lmax + log1mexp(np.minimum(x_up, 0.0)), -np.inf)
            # log1mexp and the sum: a few ulp of the magnitudes (log1mexp ≤ 0, lmax ≤ 0)
            val = round_down_log(val, ulps=8)
        return np.where(np.isinf(eps), -np.inf, val)

    @property
    def pure_epsilon(self) -> float:
        if self._pmin == 0.0:
            return math.inf
        if self._pmin == self._pmax:
            return 0.0
        # log p_max − log p_min is within 1.5 ulp (|log p_max| + |log p_min|) of the exact
        # log ratio (not within 2 ulp of itself: at p = 0.5 + 1e-10 the ratio is 4e-10 and the
        # logarithms' rounding 1e-16)
        lmin, lmax = math.log(self._pmin), math.log(self._pmax)
        return float(next_up(lmax - lmin + 2 * ULP * (abs(lmax) + abs(lmin))))

    def _white_box_group(self, k):
        return self

    def curve_kinks(self):
        """The loss takes the values ±log(p/(1 − p)) only (the pair is symmetric: no kink at
        0); both p ∈ {0, 1} (all mass at ±∞) and p = ½ (loss 0) are covered."""
        if self._pmin == 0.0:
            return np.empty(0), 0.0
        e0 = math.log(self._pmax) - math.log(self._pmin)
        # the true p differs from the rounded ones by an ulp: 8 ulp of the logarithms covers it
        return np.array([-e0, e0]), 8 * ULP * (1 + abs(math.log(self._pmax))
                                                + abs(math.log(self._pmin)))

    def __repr__(self) -> str:
        return f"RandomizedResponseProfile(p={self.p!r}, relation={self.relation.value!r})"


def _check_bits(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iub" or not np.all((arr == 0) | (arr == 1)):
        if arr.dtype.kind == "f" and np.all((arr == 0) | (arr == 1)):
            return arr.astype(int)
        raise InvalidParameterError(name, "a bit (0 or 1) or an array of bits", value)
    return arr.astype(int)


@register("randomized-response")
@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """Binary randomized response: keep the input bit with probability p, flip it otherwise.

    Construct from ε with :meth:`from_epsilon` (p = e^ε/(1 + e^ε), pure ε-DP) or for a target
    (ε, δ) with :meth:`calibrated` (p = (e^ε + δ)/(e^ε + 1), so that ψ_p(ε) = δ).

    Parameters
    ----------
    p : float
        Probability of reporting the true bit, in [0, 1]. p < ½ is allowed (a systematic liar
        is as private as a truthful responder with 1 − p).
    relation : NeighbouringRelation or str
        Recorded with results; the profile is the same under either relation because the input
        bit can change between neighbours under both.

    >>> rr = RandomizedResponse.from_epsilon(math.log(3))
    >>> round(rr.p, 12), round(float(rr.profile().delta(0.0)), 12)
    (0.75, 0.5)
    """

    p: float
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)
    params = (Param("rr_epsilon", "[0, inf)",
                    help="randomized response: its pure-DP epsilon (>= 0)"),
              Param("rr_p", "[0, 1]",
                    help="randomized response: probability of the true bit, in [0, 1]"))
    one_of = ("rr_epsilon", "rr_p")

    @classmethod
    def _from_values(cls, relation, rr_epsilon=None, rr_p=None):
        if rr_epsilon is not None:
            return cls.from_epsilon(rr_epsilon, relation=relation)
        return cls(p=rr_p, relation=relation)

    def describe(self) -> dict[str, Any]:
        return {"name": "randomized-response", "p": self.p, "epsilon": self.epsilon,
                "relation": self.relation.value}

    def __post_init__(self):
        object.__setattr__(self, "p", check_real("p", self.p, "[0, 1]"))
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))

    @classmethod
    def from_epsilon(cls, epsilon: float, relation=NeighbouringRelation.ADD_REMOVE):
        """ε-DP randomized response: p = e^ε / (1 + e^ε)."""
        eps = check_real("epsilon", epsilon, "[0, inf)")
        from scipy import special  # deferred (import time; see privamp._special)

        return cls(p=float(special.expit(eps)), relation=relation)

    @classmethod
    def calibrated(cls, eps: float, delta: float, relation=NeighbouringRelation.ADD_REMOVE):
        """p = (e^ε + δ)/(e^ε + 1), for which ψ_p(ε) = δ (Balle et al. 2018, §5)."""
        eps = check_real("eps", eps, "[0, inf)")
        delta = check_real("delta", delta, "[0, 1]")
        from scipy import special  # deferred (import time; see privamp._special)

        # (e^ε + δ)/(e^ε + 1) = expit(ε) + δ·expit(−ε)
        p = float(special.expit(eps) + delta * special.expit(-eps))
        return cls(p=min(p, 1.0), relation=relation)

    @property
    def epsilon(self) -> float:
        """The pure-DP ε = |log(p / (1 − p))| (``inf`` at p ∈ {0, 1})."""
        return self.profile().pure_epsilon

    def output_pmf(self, bit: int) -> np.ndarray:
        """Output distribution ``[P(0), P(1)]`` for an input bit."""
        b = int(_check_bits("bit", bit))
        keep = np.array([self.p, 1.0 - self.p])
        return keep if b == 0 else keep[::-1].copy()

    def release(self, value: Any, rng: Any = None):
        """Randomized response on a bit or an array of bits."""
        bits = _check_bits("value", value)
        flip = check_rng(rng).random(size=bits.shape) >= self.p
        out = np.where(flip, 1 - bits, bits)
        return int(out) if out.ndim == 0 else out

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """ε₀ ∈ {1, 0.1, 3}, no privacy at all (p = 1) and perfect privacy (p = ½)."""
        return [cls.from_epsilon(e, relation=relation) for e in (1.0, 0.1, 3.0)] + [
            cls(1.0, relation=relation), cls(0.5, relation=relation)]

    def profile(self) -> RandomizedResponseProfile:
        return RandomizedResponseProfile(self.p, self.relation)

    def privacy_loss(self, reverse: bool = False) -> DiscretePrivacyLoss:
        pair = (self.output_pmf(1), self.output_pmf(0))
        return DiscretePrivacyLoss(*(pair[::-1] if reverse else pair))


@register("randomized-membership")
@dataclass(frozen=True)
class RandomizedMembershipMechanism(Mechanism):
    """``M_{v,p}(x) = R_p(𝟙[v ∈ x])``: randomized response on "is record v in the dataset?".

    The worst case for Lemma 12 of Balle et al. 2018: under any natural subsampling scheme with
    amplification parameter η, the subsampled mechanism's profile is exactly ``η ψ_p(ε)``.

    Parameters
    ----------
    target : hashable
        The record v.
    p : float
        Randomized-response probability in [0, 1].
    relation : NeighbouringRelation or str
        Recorded with results (the profile is ψ_p under both relations).

    >>> m = RandomizedMembershipMechanism(target=0, p=0.8)
    >>> m.output_pmf([0, 1, 2]), m.output_pmf([1, 2])
    (array([0.2, 0.8]), array([0.8, 0.2]))
    """

    target: Any
    p: float
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)

    def __post_init__(self):
        object.__setattr__(self, "p", check_real("p", self.p, "[0, 1]"))
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))

    def _bit(self, dataset: Any) -> int:
        if isinstance(dataset, str | bytes) or not hasattr(dataset, "__iter__"):
            raise InvalidParameterError("dataset", "an iterable of records", dataset)
        return int(any(record == self.target for record in dataset))

    def output_pmf(self, dataset: Any) -> np.ndarray:
        """``[P(output 0), P(output 1)]`` on a dataset (any iterable of records)."""
        return RandomizedResponse(self.p).output_pmf(self._bit(dataset))

    def release(self, value: Any, rng: Any = None) -> int:
        """Release the randomized membership bit for the dataset ``value``."""
        return RandomizedResponse(self.p).release(self._bit(value), rng)

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """Membership randomized response with ε₀ = 1 and ε₀ = 0.1."""
        return [cls(0, p=math.e / (1 + math.e), relation=relation),
                cls(0, p=0.52497918747894, relation=relation)]

    def profile(self) -> RandomizedResponseProfile:
        return RandomizedResponseProfile(self.p, self.relation)

    def privacy_loss(self, reverse: bool = False) -> DiscretePrivacyLoss:
        return RandomizedResponse(self.p).privacy_loss(reverse)
