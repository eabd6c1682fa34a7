"""The hockey-stick curve of a disjoint-union mixture of dominating pairs.

Given pairs (P_i, Q_i) and probabilities w_i (Σ w_i = 1), the *disjoint-union mixture* is the
pair (P, Q) on the tagged space {(i, y)}: draw i with probability w_i, then y from P_i (resp.
Q_i). The tag has the same law under P and Q, so every set S splits into its slices S_i and

    D_α(P ‖ Q) = sup_S Σ_i w_i (P_i(S_i) − α Q_i(S_i)) = Σ_i w_i D_α(P_i ‖ Q_i)

(each slice is optimised separately), for every α ≥ 0. This is the pair of a mechanism that
first reveals a data-independent random variable I (the tag) and then runs the i-th mechanism:
revealing I is extra information, so the mixture dominates the mechanism that hides it (the
output without the tag is a post-processing of the tagged output).

:class:`MixtureCurve` evaluates ``log Σ_i w_i f_i(α)`` in log-sum-exp form from the components'
own certified values, with the weights themselves given as brackets (they are usually binomial
probabilities known only to a few ulp): upper values use the upper weights and the components'
upper values, lower values the lower weights and lower values, each log-sum-exp rounded to its
safe side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._numerics import ULP, round_down_log, round_up_log
from .._validation import check_choice, check_real
from ..errors import InvalidParameterError, InvalidTypeError
from .curves import _SUBNORMAL_SLACK, PairCurve

__all__ = ["MixtureCurve"]


def _log_mix(log_weights: np.ndarray, values: list[np.ndarray]) -> np.ndarray:
    """``log Σ_i exp(log_weights[i] + values[i])`` (values: 1-D arrays of equal length)."""
    terms = log_weights[:, None] + np.vstack(values)
    with np.errstate(invalid="ignore"):
        return np.logaddexp.reduce(terms, axis=0)


class MixtureCurve(PairCurve):
    """``ε ↦ log Σ_i w_i D_{e^ε}(P_i ‖ Q_i)``: the curve of a disjoint-union mixture of pairs.

    Parameters
    ----------
    components : sequence of tuples
        ``(log_weight_upper, log_weight_lower, curve)``, one triple per pair: an upper and a
        lower bound on the log of its weight w_i (in [-inf, 0], lower ≤ upper) and its
        :class:`PairCurve`. The exact weights must sum to 1
        (a sub-probability would not be a pair: ``f(0) = Σ w_i`` must be 1); only brackets of
        them are needed. A component whose upper weight is ``-inf`` is dropped.
    orientation : "remove", "add" or "symmetric"
        The order of neighbours the mixture dominates. A ``"symmetric"`` component (it dominates
        both orders) may enter a mixture of any orientation; a ``"remove"`` or ``"add"``
        component only a mixture of the same orientation (a symmetric mixture needs every
        component symmetric).

    Bounds (every one to its safe side, see the methods):

    * ``log_upper`` = log Σ w_i⁺ f_i⁺, raised by the log-sum-exp's rounding bound, capped at 0
      (every hockey-stick divergence is ≤ 1);
    * ``log_lower`` = log Σ w_i⁻ f_i⁻, lowered the same way, and never below the bound
      ``max(1 − α, 0)`` every pair satisfies;
    * ``log_excess`` (ε ≤ 0) = log Σ w_i⁺ (f_i(α) − (1 − α))⁺: since Σ w_i = 1 exactly,
      ``f(α) − (1 − α) = Σ w_i (f_i(α) − (1 − α))``, a sum of non-negative terms;
    * ``slope_bounds``: f' = Σ w_i f_i' with every f_i' ∈ [−1, 0], so
      ``Σ w_i⁺ s_lo,i ≤ f' ≤ Σ w_i⁻ s_hi,i``.

    Examples
    --------
    >>> from privamp.pld.curves import PoissonGaussianCurve
    >>> a = PoissonGaussianCurve(1.0, 0.1, "remove")
    >>> b = PoissonGaussianCurve(2.0, 0.1, "remove")
    >>> half = math.log(0.5)
    >>> mix = MixtureCurve([(half, half, a), (half, half, b)], "remove")
    >>> e = np.array([0.5])
    >>> exact = 0.5 * np.exp(a.log_upper(e)) + 0.5 * np.exp(b.log_upper(e))
    >>> bool(np.exp(mix.log_lower(e)) <= exact <= np.exp(mix.log_upper(e)))
    True
    """

    def __init__(self, components: Sequence, orientation: str = "symmetric"):
        self.orientation = check_choice("orientation", orientation,
                                        ("remove", "add", "symmetric"))
        if isinstance(components, str | bytes) or not isinstance(components, Sequence):
            raise InvalidTypeError("components", "a sequence of (log_weight_upper, "
                                   "log_weight_lower, curve) triples", components)
        ups, los, curves = [], [], []
        for i, comp in enumerate(components):
            if not isinstance(comp, tuple | list) or len(comp) != 3:
                raise InvalidTypeError(f"components[{i}]", "a (log_weight_upper, "
                                       "log_weight_lower, curve) triple", comp)
            up = check_real(f"components[{i}] log_weight_upper", comp[0], "[-inf, 0]")
            lo = check_real(f"components[{i}] log_weight_lower", comp[1], "[-inf, 0]")
            curve = comp[2]
            if lo > up:
                raise InvalidParameterError(f"components[{i}] log_weight_lower",
                                            f"at most the upper log-weight {up!r}", lo)
            if not isinstance(curve, PairCurve):
                raise InvalidTypeError(f"components[{i}] curve", "a PairCurve", curve)
            if curve.orientation not in ("symmetric", self.orientation):
                raise InvalidParameterError(
                    f"components[{i}] curve",
                    f"a 'symmetric' curve or one of orientation {self.orientation!r}",
                    curve.orientation, detail="this is its orientation")
            if up == -math.inf:
                continue  # weight 0
            ups.append(up)
            los.append(lo)
            curves.append(curve)
        if not curves:
            raise InvalidParameterError("components", "at least one component of positive "
                                        "weight", len(components))
        self.log_weights_upper = np.array(ups)
        self.log_weights_lower = np.array(los)
        self.components = tuple(curves)
        self.lower_slack = max(c.lower_slack for c in curves)
        # rounding of the log-sum-exp: each log-add-exp is within a few ulp of its result, the
        # additions log w + log f within ½ ulp each (relative to |log w| + |log f|, covered by
        # the ulps·(1 + |log v|) term of round_up_log when the terms are of the result's size,
        # and by the per-component allowance otherwise)
        self._margin = (16 + 4 * len(curves)) * ULP

    @property
    def convex(self) -> bool:
        return all(c.convex for c in self.components)

    def _round(self, val: np.ndarray, terms_abs: np.ndarray, up: bool) -> np.ndarray:
        # the error of a log-sum-exp is at most (ulp-level) × (|result| + max |term|)
        rel = self._margin * (1.0 + terms_abs)
        if up:
            return np.minimum(round_up_log(val, rel, ulps=8), 0.0)
        with np.errstate(invalid="ignore"):
            out = round_down_log(np.where(np.isfinite(val), val - rel, val), ulps=8)
        return np.minimum(out, 0.0)

    def _combine(self, log_w: np.ndarray, values: list[np.ndarray], up: bool) -> np.ndarray:
        val = _log_mix(log_w, values)
        with np.errstate(invalid="ignore"):
            terms = np.abs(log_w[:, None] + np.vstack(values))
            terms_abs = np.max(np.where(np.isfinite(terms), terms, 0.0), axis=0)
        return self._round(val, terms_abs, up)

    def log_upper(self, eps):
        eps = np.asarray(eps, dtype=float)
        vals = [c.log_upper(eps) for c in self.components]
        return self._combine(self.log_weights_upper, vals, up=True)

    def log_lower(self, eps):
        eps = np.asarray(eps, dtype=float)
        return self._mix_lower(eps, [c.log_lower(eps) for c in self.components])

    def _mix_lower(self, eps, vals):
        mix = self._combine(self.log_weights_lower, vals, up=False)
        # every pair has D_α ≥ max(1 − α, 0): the lower weights may sum to less than 1
        return np.maximum(mix, super().log_lower(eps))

    def lower_with_slopes(self, eps, tau):
        """Each component's lower values evaluated once, for the mixture's lower value and for
        the component's own slope bounds (:meth:`PairCurve.lower_with_slopes`)."""
        eps = np.asarray(eps, dtype=float)
        parts = [c.lower_with_slopes(eps, tau) for c in self.components]
        return (self._mix_lower(eps, [v for v, _ in parts]),
                self._mix_slopes(eps, [b for _, b in parts]))

    def log_excess(self, eps):
        eps = np.asarray(eps, dtype=float)
        if eps.size == 0:
            return np.empty(0)
        vals = [c.log_excess(eps) for c in self.components]
        # not capped at 0 (f − (1 − α) ≤ α, a bound of its own)
        val = _log_mix(self.log_weights_upper, vals)
        with np.errstate(invalid="ignore"):
            terms = np.abs(self.log_weights_upper[:, None] + np.vstack(vals))
            terms_abs = np.max(np.where(np.isfinite(terms), terms, 0.0), axis=0)
        return round_up_log(val, self._margin * (1.0 + terms_abs), ulps=8)

    def slope_bounds(self, eps, tau, log_lower=None):
        eps = np.asarray(eps, dtype=float)
        return self._mix_slopes(eps, [c.slope_bounds(eps, tau) for c in self.components])

    def _mix_slopes(self, eps, bounds):
        """The mixture's slope bounds from the components' ``(s_lo, s_hi)``."""
        s_lo = np.zeros(eps.shape)
        s_hi = np.zeros(eps.shape)
        w_up = np.exp(self.log_weights_upper) * (1 + 4 * ULP)
        w_lo = np.exp(self.log_weights_lower) * (1 - 4 * ULP)
        for wu, wl, (lo, hi) in zip(w_up, w_lo, bounds, strict=True):
            # slopes are ≤ 0: the larger weight gives the lower bound, the smaller the upper
            s_lo = s_lo + wu * lo
            s_hi = s_hi + wl * hi
        # Rounding of S = Σ w·s (n terms of one sign, |s| ≤ 1). A term whose result is a normal
        # float is within ½ ulp relative; a subnormal one (a product below 2^-1022) only within
        # half a subnormal spacing, 2^-1075 absolute, and a subnormal weight (log weight below
        # about −708) is exp's output within 2^-1075, which the 4-ulp margins above do not
        # move: at most 2^-1074 per term (_SUBNORMAL_SLACK = 4·2^-1074 a term leaves room for a
        # less accurate exp). A partial sum is at most |S| in size: sums landing in the
        # subnormal range are exact, the others within ½ ulp. So the error is at most
        # (n/2)·ULP·|S| (the normal products and n − 1 additions) plus 2^-1074 per subnormal
        # term. If S is subnormal, so is every term and partial sum: the error is absolute,
        # ≤ n·2^-1074, and n·_SUBNORMAL_SLACK covers it (the product by 1 ± 2n ulp moves S to
        # its safe side and rounds to a float no further back than S, itself a float; the
        # subtraction or addition is exact). If S is normal, a subnormal
        # term's 2^-1074 = ULP·2^-1022 ≤ ULP·|S|, with at most n such terms (none if n = 1: the
        # single term is S): the error is ≤ 1.5n·ULP·|S| (n ≥ 2) or ½·ULP·|S| (n = 1), inside
        # the margin 2n·ULP less its own rounding (½ ulp); the slack then only rounds away
        # from 0 (or not at all).
        n = len(self.components)
        s_lo = s_lo * (1 + 2 * n * ULP) - n * _SUBNORMAL_SLACK
        s_hi = s_hi * (1 - 2 * n * ULP) + n * _SUBNORMAL_SLACK
        return np.clip(s_lo, -1.0, 0.0), np.clip(s_hi, -1.0, 0.0)

    def __repr__(self) -> str:
        return (f"MixtureCurve({len(self.components)} components, {self.orientation}, "
                f"weights={np.exp(self.log_weights_upper).round(6).tolist()})")
