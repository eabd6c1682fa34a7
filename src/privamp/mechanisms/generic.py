"""Generic mechanisms: "some (ε, δ)-DP mechanism", and a mechanism given by two discrete laws.

(ε₀, δ₀)-DP mechanism
---------------------
All that is known is that M is (ε₀, δ₀)-DP. The largest profile compatible with that is the
profile of the canonical pair (Kairouz, Oh, Viswanath 2015: the privacy region of every
(ε₀, δ₀)-DP mechanism lies inside this pair's)::

    P = (δ₀, (1−δ₀) e^{ε₀}/(1+e^{ε₀}), (1−δ₀)/(1+e^{ε₀}), 0),   Q = P reversed,
    δ(ε) = δ₀ + (1 − δ₀) [e^{ε₀} − e^ε]_+ / (1 + e^{ε₀}).

So every (ε₀, δ₀)-DP mechanism has a profile below this one, which makes it the right input for
amplification theorems when only (ε₀, δ₀) is known (the subsampling lemma W-5 is its η-scaled
value at ε₀). Group privacy is black-box: nothing else is known about the mechanism.

Discrete pair
-------------
A mechanism whose worst-case neighbouring inputs produce the distributions p and q on a finite
set of outcomes (the user asserts that (p, q) is a dominating pair). Its profile is
``max(D_{e^ε}(p‖q), D_{e^ε}(q‖p))`` (the relation is symmetric), computed in log space and
rounded up; group privacy is black-box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._numerics import ULP, log1mexp, round_down_log, round_up_log
from .._validation import check_real, check_rng
from ..divergences import align, log_hockey_stick
from ..privacy_loss import DiscretePrivacyLoss
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from .base import Mechanism, register
from .randomized_response import _check_bits

__all__ = [
    "ApproxDPMechanism",
    "ApproxDPProfile",
    "DiscretePairMechanism",
    "DiscretePairProfile",
]


def _canonical_pmf(eps0: float, delta0: float) -> np.ndarray:
    keep = (1.0 - delta0) / (1.0 + math.exp(-eps0))  # (1−δ₀) e^{ε₀}/(1+e^{ε₀}), no overflow
    flip = (1.0 - delta0) / (1.0 + math.exp(eps0)) if eps0 < 709 else 0.0
    return np.array([delta0, keep, flip, 0.0])


class ApproxDPProfile(PrivacyProfile):
    """Largest profile of an (ε₀, δ₀)-DP mechanism: ``δ₀ + (1−δ₀)[e^{ε₀} − e^ε]_+/(1+e^{ε₀})``.

    >>> p = ApproxDPProfile(1.0, 1e-6)
    >>> round(float(p.delta(1.0)), 15), p.plateau
    (1e-06, (1.0, 1e-06))
    >>> round(float(p.delta(0.0)), 6)  # δ₀ + (1−δ₀) tanh(ε₀/2)
    0.462118
    """

    def __init__(self, eps: float, delta: float, relation=NeighbouringRelation.ADD_REMOVE):
        self.eps0 = check_real("eps", eps, "[0, inf)")
        self.delta0 = check_real("delta", delta, "[0, 1]")
        self.relation = NeighbouringRelation.parse(relation)

    def _log_delta(self, eps):
        e0, d0 = self.eps0, self.delta0
        with np.errstate(divide="ignore", invalid="ignore"):
            log_d0 = math.log(d0) if d0 > 0 else -math.inf
            x = eps - e0
            # (1−δ₀) e^{ε₀}/(1+e^{ε₀}) (1 − e^{ε−ε₀}), in logs
            head = math.log1p(-d0) + e0 - np.logaddexp(0.0, e0) if d0 < 1 else -math.inf
            slope = head + log1mexp(np.minimum(x, 0.0))
            cond = (np.abs(eps) + e0) / np.maximum(np.abs(x), ULP)
            slope = round_up_log(slope, 16 * ULP * cond, ulps=16)
            val = np.logaddexp(log_d0, np.where(x >= 0, -np.inf, slope))
        # on the plateau (ε ≥ ε₀) the value is δ₀ exactly (see `plateau`); its logarithm still
        # needs the margin so that exp(log δ) cannot round below δ₀
        return round_up_log(np.where(x >= 0, log_d0, val), ulps=4)

    def _log_delta_lower(self, eps):
        """``δ₀ + (1 − δ₀) e^{ε₀}/(1 + e^{ε₀}) (1 − e^{ε − ε₀})`` rounded down. ε and ε₀ are
        floats, so x = ε − ε₀ is one subtraction, within ½ ulp of |x| (no error from the kink:
        the formula is well conditioned there, unlike the upper value's margin); raising x by
        1 ulp of |x| lowers 1 − e^x. The factor is ``log1p(−δ₀) − log1p(e^{−ε₀})`` (no
        cancellation for large ε₀); each piece is within a few ulp of its magnitude."""
        e0, d0 = self.eps0, self.delta0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_d0 = math.log(d0) if d0 > 0 else -math.inf
            x = eps - e0
            x_up = x + ULP * np.abs(x)
            head = math.log1p(-d0) - math.log1p(math.exp(-e0)) if d0 < 1 else -math.inf
            slope = np.where(x_up < 0, head + log1mexp(np.minimum(x_up, 0.0)), -np.inf)
            slope = np.where(np.isfinite(slope), slope - 8 * ULP * (1.0 + abs(head)), slope)
            val = np.logaddexp(log_d0, slope)
        # log δ₀ is within ½ ulp of its magnitude; the log-add-exp adds a few ulp
        return round_down_log(np.where(x >= 0, log_d0, val), ulps=8)

    @property
    def pure_epsilon(self) -> float:
        return self.eps0 if self.delta0 == 0.0 else math.inf

    @property
    def plateau(self):
        # for ε ≥ ε₀ the bracket [e^{ε₀} − e^ε]_+ is exactly 0: δ(ε) = δ₀ exactly
        return (self.eps0, self.delta0)

    def curve_kinks(self):
        """The canonical pair's finite losses are ±ε₀ (its other outcomes have losses ±∞)."""
        return np.array([-self.eps0, self.eps0]), 4 * ULP * (1 + self.eps0)

    def __repr__(self) -> str:
        return (f"ApproxDPProfile(eps={self.eps0!r}, delta={self.delta0!r}, "
                f"relation={self.relation.value!r})")


@register("approx-dp")
@dataclass(frozen=True)
class ApproxDPMechanism(Mechanism):
    """A mechanism known only to be (ε, δ)-DP, realised by the canonical four-outcome mechanism.

    Parameters
    ----------
    epsilon, delta : float
        The guarantee: ε ≥ 0, δ ∈ [0, 1].
    relation : NeighbouringRelation or str
        The relation the guarantee holds for.

    Notes
    -----
    :meth:`profile` is the largest profile any (ε, δ)-DP mechanism can have, with black-box group
    privacy. :meth:`release` runs the canonical mechanism on a bit (outputs 0…3), the concrete
    mechanism that attains that profile.

    >>> m = ApproxDPMechanism(epsilon=1.0, delta=1e-5)
    >>> m.profile().epsilon(1e-5)  # its own guarantee
    1.0
    """

    epsilon: float
    delta: float
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_real("epsilon", self.epsilon, "[0, inf)"))
        object.__setattr__(self, "delta", check_real("delta", self.delta, "[0, 1]"))
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))

    def output_pmf(self, bit: int) -> np.ndarray:
        """Output law of the canonical mechanism on input bit 0 or 1 (outcomes 0, 1, 2, 3)."""
        b = int(_check_bits("bit", bit))
        pmf = _canonical_pmf(self.epsilon, self.delta)
        return pmf if b == 0 else pmf[::-1].copy()

    def release(self, value: Any, rng: Any = None):
        bits = _check_bits("value", value)
        gen = check_rng(rng)
        pmf0 = _canonical_pmf(self.epsilon, self.delta)
        draws = gen.choice(4, size=bits.shape, p=pmf0 / pmf0.sum())
        out = np.where(bits == 0, draws, 3 - draws)
        return int(out) if out.ndim == 0 else out

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """Approximate, pure and "δ only" guarantees."""
        return [cls(1.0, 1e-6, relation=relation), cls(0.5, 0.0, relation=relation),
                cls(0.0, 0.01, relation=relation)]

    def profile(self) -> ApproxDPProfile:
        return ApproxDPProfile(self.epsilon, self.delta, self.relation)

    def privacy_loss(self, reverse: bool = False) -> DiscretePrivacyLoss:
        pair = (self.output_pmf(0), self.output_pmf(1))
        return DiscretePrivacyLoss(*(pair[::-1] if reverse else pair))


class DiscretePairProfile(PrivacyProfile):
    """``max(D_{e^ε}(p‖q), D_{e^ε}(q‖p))`` for two laws on a common finite support, rounded up.

    >>> round(float(DiscretePairProfile([0.75, 0.25], [0.25, 0.75]).delta(0.0)), 12)  # RR
    0.5
    """

    def __init__(self, p: Any, q: Any, relation=NeighbouringRelation.ADD_REMOVE):
        self.p, self.q, _ = align(p, q)
        self.relation = NeighbouringRelation.parse(relation)

    def _log_delta(self, eps):
        forward = np.atleast_1d(log_hockey_stick(self.p, self.q, eps, round_up=True))
        backward = np.atleast_1d(log_hockey_stick(self.q, self.p, eps, round_up=True))
        return np.maximum(forward, backward)

    def _log_delta_lower(self, eps):
        # the larger of two lower bounds bounds the larger of the two divergences from below
        forward = np.atleast_1d(log_hockey_stick(self.p, self.q, eps, round_down=True))
        backward = np.atleast_1d(log_hockey_stick(self.q, self.p, eps, round_down=True))
        return np.maximum(forward, backward)

    def curve_kinks(self):
        """For a pair whose two orders coincide ((q, p) is (p, q) with its outcomes relabelled,
        as randomized response), the curve is that of one order, piecewise affine in α = e^ε
        with kinks at the finite losses ±log(p_i/q_i) (outcomes only one side produces carry
        losses ±∞: no kink); each within 8 ulp of the magnitudes of its two logarithms, as for
        :meth:`RandomizedResponseProfile.curve_kinks`. ``None`` otherwise: the maximum of two
        different curves also kinks where they cross, which are not listed."""
        pairs = sorted(zip(self.p.tolist(), self.q.tolist(), strict=True))
        if pairs != sorted(zip(self.q.tolist(), self.p.tolist(), strict=True)):
            return None
        both = (self.p > 0) & (self.q > 0)
        lp, lq = np.log(self.p[both]), np.log(self.q[both])
        losses = lp - lq
        err = 8 * ULP * (1 + float(np.max(np.abs(lp) + np.abs(lq), initial=0.0)))
        return np.unique(np.concatenate([losses, -losses])), err

    @property
    def pure_epsilon(self) -> float:
        both = (self.p > 0) & (self.q > 0)
        if np.any((self.p > 0) != (self.q > 0)):
            return math.inf
        ratio = np.abs(np.log(self.p[both]) - np.log(self.q[both]))
        cand = float(np.max(ratio))
        # the rounded-up profile vanishes once ε clears every log-ratio by its error bound
        margin = 8 * ULP * (1.0 + 2 * cand + float(np.max(np.abs(np.log(self.p[both])))) +
                            float(np.max(np.abs(np.log(self.q[both])))))
        cand += margin
        while self._log_delta(np.array([cand]))[0] > -math.inf:  # pragma: no cover - safety net
            margin *= 2
            cand += margin
        return cand

    def __repr__(self) -> str:
        return f"DiscretePairProfile({self.p.size} outcomes, relation={self.relation.value!r})"


@register("discrete-pair")
@dataclass(frozen=True)
class DiscretePairMechanism(Mechanism):
    """A mechanism given by the output laws ``p`` (input 0) and ``q`` (input 1) of its worst-case
    pair of neighbouring inputs, on a common finite set of ``outcomes``.

    Parameters
    ----------
    p, q : array_like or dict
        Probability vectors on a common support (dicts are aligned on the union of keys).
    outcomes : sequence, optional
        Labels of the outcomes returned by :meth:`release` (default: indices; for dict inputs,
        the keys).
    relation : NeighbouringRelation or str
        The relation under which (p, q) is the worst-case pair.

    >>> m = DiscretePairMechanism({"yes": 0.75, "no": 0.25}, {"yes": 0.25, "no": 0.75})
    >>> m.outcomes, m.release(0, rng=1) in ("yes", "no")
    (('no', 'yes'), True)
    """

    p: Any
    q: Any
    outcomes: Any = None
    relation: NeighbouringRelation = field(default=NeighbouringRelation.ADD_REMOVE)

    def __post_init__(self):
        pa, qa, support = align(self.p, self.q)
        labels = self.outcomes if self.outcomes is not None else support
        labels = tuple(range(pa.size)) if labels is None else tuple(labels)
        if len(labels) != pa.size:
            from ..errors import InvalidParameterError

            raise InvalidParameterError("outcomes", f"a sequence of {pa.size} labels", labels)
        pa.setflags(write=False)
        qa.setflags(write=False)
        object.__setattr__(self, "p", pa)
        object.__setattr__(self, "q", qa)
        object.__setattr__(self, "outcomes", labels)
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))

    def output_pmf(self, bit: int) -> np.ndarray:
        """``p`` for input 0, ``q`` for input 1."""
        return (self.p if int(_check_bits("bit", bit)) == 0 else self.q).copy()

    def release(self, value: Any, rng: Any = None):
        """Draw an outcome label from ``p`` (value 0) or ``q`` (value 1)."""
        b = int(_check_bits("value", value))
        pmf = self.p if b == 0 else self.q
        idx = int(check_rng(rng).choice(pmf.size, p=pmf / pmf.sum()))
        return self.outcomes[idx]

    @classmethod
    def examples(cls, relation=NeighbouringRelation.ADD_REMOVE):
        """An asymmetric three-outcome pair, a pair with an outcome only one side has, and the
        two-sided geometric (scale 1) shifted by one on 12 outcomes: its loss is ±1 at every
        outcome, computed to a few ulp (randomized response with ε = 1 written as PMFs; the
        copies of one loss once made the PLD grid a lattice of step 1e-18)."""
        x = np.arange(-5.0, 7.0)
        p, q = np.exp(-np.abs(x - 1.0)), np.exp(-np.abs(x))
        return [cls([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], relation=relation),
                cls([0.5, 0.5, 0.0], [0.4, 0.5, 0.1], relation=relation),
                cls(p / p.sum(), q / q.sum(), relation=relation)]

    @property
    def exact_pair(self) -> bool:
        """True when (q, p) is (p, q) with its outcomes relabelled: then both orders have the
        same curve, the profile's."""
        pairs = sorted(zip(np.asarray(self.p).tolist(), np.asarray(self.q).tolist(),
                           strict=True))
        swapped = sorted(zip(np.asarray(self.q).tolist(), np.asarray(self.p).tolist(),
                             strict=True))
        return pairs == swapped

    def profile(self) -> DiscretePairProfile:
        return DiscretePairProfile(self.p, self.q, self.relation)

    def privacy_loss(self, reverse: bool = False) -> DiscretePrivacyLoss:
        return DiscretePrivacyLoss(self.q, self.p) if reverse else DiscretePrivacyLoss(self.p,
                                                                                       self.q)
