"""The multiplicity view of subsampling: how many copies of the differing record reach M.

For every scheme in the papers, amplification depends on the law of K, the number of copies of
the record that differs between neighbouring datasets in the subsample (DESIGN.md, "the
multiplicity view"). A :class:`MultiplicityPmf` holds ``log P(K = k)`` for ``k = 0 … K_max`` and a
rigorous upper bound on the truncated tail ``P(K > K_max)``, which amplification adds
pessimistically (δ_k ≤ 1).

Stage transitions (a stage maps j copies among ``size_in`` items to k copies among ``size_out``):

* without replacement, WOR(size_in → size_out): ``k ~ Hypergeometric(size_in, j, size_out)``;
* with replacement, WR(size_in → size_out): ``k ~ Binomial(size_out, j / size_in)``.

Supports are kept whole when they have at most ``EXACT_SUPPORT`` points (then there is no tail at
all, and pure-DP mechanisms keep a finite pure ε after amplification); larger supports are cut where
a Chernoff bound on the remaining tail is below ``TAIL_TOLERANCE``. Both bounds are monotone in j
(binomial and hypergeometric laws are stochastically increasing in their success count), so the
bound at the largest retained j covers every j.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._numerics import (
    ULP,
    binomial_logpmf,
    hypergeom_logpmf,
    log1mexp,
    logsumexp_signed,
    lse_error,
)
from ..errors import NumericalError

__all__ = ["EXACT_SUPPORT", "TAIL_TOLERANCE", "MultiplicityPmf", "binomial_log_tail_bound"]

#: Supports up to this many points are computed in full (no truncation).
EXACT_SUPPORT = 20_000
#: Largest support (number of copies + 1) and number of terms (support × previous support) of a
#: stage transition: beyond, the computation would take minutes and gigabytes, and is refused.
MAX_SUPPORT = 10_000_000
MAX_CELLS = 50_000_000
#: Larger supports are cut where the tail mass bound is below this (it is then added as δ_k = 1).
TAIL_TOLERANCE = 1e-300
_LOG_TAIL_TOLERANCE = math.log(TAIL_TOLERANCE)


def binomial_log_tail_bound(k: float, trials: float, p: float) -> float:
    """``log`` of the Chernoff bound on ``P[Binomial(trials, p) > k]`` (also valid for a
    hypergeometric with the same mean, by Hoeffding 1963, Theorem 4).

    ``P[X ≥ a] ≤ exp(−trials · KL(a/trials ‖ p))`` for a > trials·p; returns 0 (probability 1)
    when k is not above the mean.
    """
    a = k + 1.0  # P[X > k] = P[X ≥ k + 1] for integer X
    if a > trials:
        return -math.inf
    if p <= 0.0:
        return -math.inf
    x = a / trials
    if x <= p:
        return 0.0
    from scipy import special  # deferred (import time; see privamp._special)

    kl = float(special.xlogy(x, x / p) + special.xlog1py(1.0 - x, -x)
               - special.xlog1py(1.0 - x, -p))
    return -trials * kl * (1 - 8 * ULP)


@dataclass(frozen=True)
class MultiplicityPmf:
    """Law of the number of copies K of the differing record in the subsample.

    Attributes
    ----------
    log_pmf : ndarray
        ``log P(K = k)`` for k = 0, …, len − 1 (computed to a few ulp in relative terms).
    log_tail : float
        ``log`` of an upper bound on ``P(K ≥ len)`` (``-inf`` when the support is complete).
    """

    log_pmf: np.ndarray
    log_tail: float = -math.inf

    @classmethod
    def point(cls, k: int) -> MultiplicityPmf:
        """K = k with certainty."""
        arr = np.full(k + 1, -np.inf)
        arr[k] = 0.0
        return cls(arr)

    @classmethod
    def bernoulli(cls, prob: float) -> MultiplicityPmf:
        """K ∈ {0, 1} with P(K = 1) = prob (Poisson subsampling, WOR with m/n)."""
        with np.errstate(divide="ignore"):
            return cls(np.array([math.log1p(-prob) if prob < 1 else -math.inf,
                                 math.log(prob) if prob > 0 else -math.inf]))

    @property
    def pmf(self) -> np.ndarray:
        """``P(K = k)`` for the retained k (may underflow to 0 for tiny masses)."""
        return np.exp(self.log_pmf)

    @property
    def support_size(self) -> int:
        return int(self.log_pmf.size)

    @property
    def max_multiplicity(self) -> int | None:
        """The largest k with positive probability, or ``None`` if the tail was truncated."""
        if self.log_tail > -math.inf:
            return None
        positive = np.flatnonzero(self.log_pmf > -np.inf)
        return int(positive[-1]) if positive.size else 0

    @property
    def log_eta(self) -> float:
        """``log`` of an upper bound on η = P(K ≥ 1), the total variation between the
        subsample laws of neighbouring datasets (Balle et al. 2018, Table 1)."""
        lw = self.log_pmf
        if lw.size > 1:
            positive, _ = logsumexp_signed(np.append(lw[1:], self.log_tail))
            positive = float(positive + lse_error(lw.size, positive))  # its own rounding
        else:
            positive = self.log_tail
        positive = float(positive)
        if lw[0] < math.log(0.5):
            # η = 1 − P(K = 0) is accurate when P(K = 0) is not close to 1
            direct = float(log1mexp(lw[0] * (1 + 16 * ULP) if lw[0] < 0 else lw[0]))
            positive = min(positive, direct) if math.isfinite(positive) else direct
        return min(0.0, positive + 32 * ULP * (1 + abs(positive)))

    @property
    def eta(self) -> float:
        """An upper bound on η = P(K ≥ 1) (rounded up: a larger η is the safe side)."""
        return min(1.0, math.exp(self.log_eta))

    @property
    def log_eta_lower(self) -> float:
        """``log`` of a lower bound on η = P(K ≥ 1): :attr:`log_eta` with every rounding
        reversed and the truncated tail counted as 0 (the same error model for the pmf
        entries: within 32 ulp·(1 + |log|) of the exact values)."""
        lw = self.log_pmf
        positive = float(logsumexp_signed(lw[1:])[0]) if lw.size > 1 else -math.inf
        if math.isfinite(positive):
            positive -= 32 * ULP * (1 + abs(positive)) + float(lse_error(lw.size, positive))
        if lw[0] < math.log(0.5):
            # η ≥ 1 − P(K = 0), with P(K = 0) rounded up (its logarithm towards 0)
            direct = float(log1mexp(lw[0] * (1 - 16 * ULP)))
            direct -= 32 * ULP * (1 + abs(direct))
            positive = max(positive, direct)
        return min(0.0, positive)

    @property
    def eta_lower(self) -> float:
        """A lower bound on η = P(K ≥ 1) (rounded down), for lower values of amplified
        profiles."""
        log_eta = self.log_eta_lower
        return 0.0 if log_eta == -math.inf else math.exp(log_eta) * (1 - 2 * ULP)

    def total_mass(self) -> float:
        """Σ_k P(K = k) + tail bound (≥ 1 up to rounding; tests check it is ≈ 1)."""
        val, _ = logsumexp_signed(np.append(self.log_pmf, self.log_tail))
        return math.exp(float(val))

    # ----------------------------------------------------------------------------------------
    # stage transitions
    # ----------------------------------------------------------------------------------------

    def then_without_replacement(self, size_in: int, size_out: int) -> MultiplicityPmf:
        """After drawing ``size_out`` of the ``size_in`` items without replacement."""
        return self._transition("wor", size_in, size_out)

    def then_with_replacement(self, size_in: int, size_out: int) -> MultiplicityPmf:
        """After ``size_out`` independent uniform draws from the ``size_in`` items."""
        return self._transition("wr", size_in, size_out)

    def _transition(self, kind: str, size_in: int, size_out: int) -> MultiplicityPmf:
        lw = self.log_pmf
        j_max = lw.size - 1
        k_cap = min(size_out, j_max) if kind == "wor" else size_out
        if k_cap + 1 <= EXACT_SUPPORT:
            k_max = k_cap
            new_tail = -math.inf
        else:
            p_top = min(j_max, size_in) / size_in
            k_max = _cut_point(size_out, p_top, k_cap)
            new_tail = binomial_log_tail_bound(k_max, size_out, p_top) if k_max < k_cap \
                else -math.inf
        keep = lw > -np.inf
        cells = (k_max + 1) * int(np.count_nonzero(keep))
        if k_max + 1 > MAX_SUPPORT or cells > MAX_CELLS:
            how = "with" if kind == "wr" else "without"
            raise NumericalError(
                f"{size_out:,} draws {how} replacement from {size_in:,} items can put up to "
                f"{k_max:,} copies of a record into the subsample: its multiplicity law would "
                f"need {cells:,} terms (privamp tabulates at most {MAX_SUPPORT:,} copies and "
                f"{MAX_CELLS:,} terms); ask for a smaller subsample")
        ks = np.arange(k_max + 1, dtype=float)
        js = np.arange(j_max + 1, dtype=float)
        js, lwj = js[keep], lw[keep]
        if kind == "wor":
            trans = hypergeom_logpmf(ks[None, :], size_in, js[:, None], size_out)
        else:
            trans = binomial_logpmf(ks[None, :], size_out, js[:, None] / size_in)
        out, _ = logsumexp_signed(lwj[:, None] + trans, axis=0)
        out = np.atleast_1d(out)
        # mass that was already in the tail stays unaccounted: carry it
        tails = [t for t in (self.log_tail, new_tail) if t > -math.inf]
        log_tail = float(logsumexp_signed(np.array(tails))[0]) if tails else -math.inf
        return MultiplicityPmf(np.asarray(out, dtype=float), log_tail)


def _cut_point(trials: int, p: float, cap: int) -> int:
    """Smallest k ≤ cap with Chernoff tail P[Bin(trials, p) > k] ≤ TAIL_TOLERANCE."""
    mean = trials * p
    lo = int(min(cap, math.floor(mean)))
    hi = cap
    if binomial_log_tail_bound(lo, trials, p) <= _LOG_TAIL_TOLERANCE:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if binomial_log_tail_bound(mid, trials, p) <= _LOG_TAIL_TOLERANCE:
            hi = mid
        else:
            lo = mid
    return hi
