"""Truncated Poisson subsampling of the Gaussian mechanism: a certified dominating pair, and the
fixed-shape sampler.

**The scheme** (arXiv 2508.15089; dp_accounting's ``TruncatedSubsampledGaussianDpEvent``). Each
of the n records is kept independently with probability q; if more than B (``max_batch``) are
kept, a uniformly random B-subset of the kept records is used. The step releases the Gaussian
sum of the batch's clipped vectors. Relation: add/remove; θ = Δ/σ is the record's own Gaussian
sensitivity (Δ = C, the clipping norm). n is the size of the dataset *with* the record (the
others number n − 1): the guarantee is for neighbouring datasets of sizes n and n − 1.

**The dominating pair.** Let J ~ Bin(n − 1, q) be the number of *other* records kept; its law
is the same with and without the record. Revealing J to the adversary is extra information
(the released sum is a post-processing of (J, sum)), so the disjoint-union mixture over J of the
per-J pairs dominates the mechanism; its curve is ``Σ_J P(J) f_J(α)``
(:class:`~privamp.pld.mixture_curve.MixtureCurve`).

* J < B: no truncation can happen; the record is in the batch with probability q, and the pair
  is exactly the Poisson-subsampled Gaussian under add/remove,
  :class:`~privamp.pld.curves.PoissonGaussianCurve` (θ, q), in the orientation asked for
  (Zhu, Dong, Wang 2022, Theorem 11; Mironov et al. 2019).
* J ≥ B: if the record is kept (probability q) the batch is a uniform B-subset of the J + 1
  kept records and contains it with probability B/(J + 1); otherwise it is a uniform B-subset
  of the J others — and so is the batch given that it does not contain the record. So, with
  η_J = qB/(J + 1), the output with the record is ``(1 − η_J) Q_J + η_J P_J`` and without it
  ``Q_J``, where Q_J releases a uniform B-subset of the others and P_J the record plus a
  uniform (B − 1)-subset of them. Coupling a B-subset with the same subset minus a uniform
  element plus the record makes P_J, Q_J a mixture of substitution pairs (sensitivity 2C: one
  clipped vector replaced by another), so by joint convexity every D_α(P_J‖Q_J) and
  D_α(Q_J‖P_J) is at most δ_S, the Gaussian profile at θ_S = 2θ; by advanced joint convexity
  (Balle, Barthe, Gaboardi 2018, Theorem 2, as in their Theorem 9) both orders of the mixed
  pair are bounded by ``η_J δ_S(log(1 + (e^ε − 1)/η_J))`` for ε ≥ 0. Its symmetric extension
  (the :class:`~privamp.pld.curves.ProfileCurve` of that profile) dominates both orientations
  for every α. The profile is privamp's η-amplified profile
  (:class:`~privamp.amplification.subsampling.AmplifiedProfile` with a Bernoulli(η)
  multiplicity: exactly the formula above, with its rounding).
* The amplified bound ``η δ_S(log(1 + (α − 1)/η))`` increases with η at every α ≥ 1 (its
  derivative in η is ``δ_S(β) − (α − 1)/η · δ_S'(β) ≥ 0``, δ_S non-increasing in β), hence also
  its symmetric extension ``1 − α + α g(1/α)`` at α < 1; and η_J decreases with J. So the J ≥ B
  are grouped into at most ``_MAX_BINS`` consecutive bins, each bounded by the curve at the η of
  its *smallest* J: the mixture over bins, with the bins' probabilities, is a dominating pair
  (the **binned bound**, the curve this module certifies). Where there are few enough values of
  J, each J is its own bin (no loss).

**Weights.** P(J = j) from :func:`~privamp._numerics.binomial_logpmf` (Loader's form, relative
error far below ``_PMF_REL``), bracketed by ``±_PMF_REL``. For large n only a window of ±40
standard deviations is summed; the mass outside it is bounded by Chernoff
(:func:`~privamp.sampling.multiplicity.binomial_log_tail_bound`) and added to the upper weight
of a component that dominates every J it may hold: the mass above the window to the last bin
(whose η, of its smallest J, is at least every larger J's), the mass below it to the J < B
component and — if the window starts above B — also to a component at η_B (the largest η of
all); the mass beyond B when the window ends below B also to a component at η_B. Upper weights
are rounded up, lower weights down and without the tail masses.

**Lower values** bracket the binned bound (the same η per bin, rounded down instead of up),
not the finer mixture with one η per J: the PLD engine's lower end is then the lower end of the
ε of exactly the pair whose upper end is reported. (With different η on the two sides the
secant slope bounds of the engine's lower discretisation would span the gap between them.)

**Why not one mean η** (dp_accounting 0.6.0 uses a single substitution component with the
conditional mean ``E[η_J | J ≥ B] = sf(B; n, q)·B/(τ n)``, τ = P(J ≥ B)): η ↦ g_η(α) is the
perspective ``η F(1/η)`` of the convex function ``F(u) = δ_S(log(1 + (α − 1)u))``, hence
*convex* in η, so by Jensen ``Σ_J P(J | J ≥ B) g_{η_J} ≥ g_{E η}``: the one-component curve is
below the mixture of the per-J bounds, and is not justified by this argument.
"""

from __future__ import annotations

import math

import numpy as np

from .._numerics import ULP, binomial_logpmf, div_down, div_up, mul_down, mul_up
from .._validation import check_int, check_real, check_rng
from ..amplification.subsampling import AmplifiedProfile
from ..mechanisms.gaussian import GaussianProfile
from ..relations import NeighbouringRelation
from ..sampling.multiplicity import EXACT_SUPPORT, binomial_log_tail_bound
from ..sampling.schemes import Poisson
from .curves import PairCurve, PoissonGaussianCurve, ProfileCurve
from .mixture_curve import MixtureCurve

__all__ = ["draw_truncated_poisson", "truncated_poisson_curves"]

#: At most this many substitution components (bins of J ≥ B).
_MAX_BINS = 28
#: Relative error allowed to each binomial probability (Loader's saddle-point form is within
#: ~1e-13 relative: tests/test_truncated_poisson.py checks it against mpmath).
_PMF_REL = 1e-10
#: Bins are geometric in J + 1 up to the J beyond which the truncated mass left is below this
#: fraction of it; the rest is one last bin.
_BIN_TAIL = 1e-12

_S = NeighbouringRelation.SUBSTITUTE


class _BracketCurve(PairCurve):
    """Upper values of one curve, lower values of another (the same function's bounds, built
    at η rounded up and down)."""

    orientation = "symmetric"

    def __init__(self, upper: PairCurve, lower: PairCurve):
        self.upper, self.lower = upper, lower
        self.lower_slack = upper.lower_slack

    @property
    def convex(self) -> bool:
        return self.upper.convex and self.lower.convex

    def log_upper(self, eps):
        return self.upper.log_upper(eps)

    def log_lower(self, eps):
        # no minimum with the upper values is needed: the curve grows with η (module
        # docstring), so lower(η⁻) ≤ f(η⁻) ≤ f(η) ≤ f(η⁺) ≤ upper(η⁺)
        return self.lower.log_lower(eps)

    def log_excess(self, eps):
        return self.upper.log_excess(eps)

    def __repr__(self) -> str:
        return f"_BracketCurve({self.upper!r})"


def _substitution_curve(theta_s: float, rate: float, max_batch: int, j: int) -> PairCurve:
    """The symmetric curve of ``η δ_S(log(1 + (e^ε − 1)/η))``, η = qB/(j + 1) (rounded up for
    the upper values, down for the lower ones)."""
    base = GaussianProfile(theta_s, _S)
    eta_up = min(div_up(mul_up(rate, float(max_batch)), float(j + 1)), 1.0)
    eta_lo = div_down(mul_down(rate, float(max_batch)), float(j + 1))

    def curve(eta: float) -> ProfileCurve:
        prof = AmplifiedProfile(base, Poisson(eta), _S)
        prof.theorem = ("BBG Theorem 2 (advanced joint convexity), η = qB/(J + 1) of "
                        "truncated Poisson")
        return ProfileCurve(prof)

    up = curve(eta_up)
    if eta_lo == eta_up or eta_lo <= 0.0:
        return up
    return _BracketCurve(up, curve(eta_lo))


def _log_sum(log_terms: np.ndarray, up: bool) -> float:
    """log Σ exp(terms), rounded to the safe side (each term already bracketed)."""
    if log_terms.size == 0:
        return -math.inf
    val = float(np.logaddexp.reduce(log_terms))
    if not math.isfinite(val):
        return val
    margin = (8 + 2 * log_terms.size) * ULP * (1.0 + abs(val) + float(np.max(np.abs(
        log_terms[np.isfinite(log_terms)]), initial=0.0)))
    return min(val + margin, 0.0) if up else val - margin


def _bins(first: int, last: int, log_pmf: np.ndarray, offset: int) -> list[tuple[int, int]]:
    """Consecutive bins [a, b] covering [first, last]: one per J if there are few, else
    geometric in J + 1 up to where the mass left is below ``_BIN_TAIL`` of the total, then one
    bin for the rest. ``log_pmf[j − offset]`` is log P(J = j)."""
    count = last - first + 1
    if count <= _MAX_BINS:
        return [(j, j) for j in range(first, last + 1)]
    lp = log_pmf[first - offset:last - offset + 1]
    w = np.exp(lp - np.max(lp))
    left = np.cumsum(w[::-1])[::-1]  # mass of [j, last]
    beyond = np.flatnonzero(left <= _BIN_TAIL * left[0])
    cut = first + int(beyond[0]) - 1 if beyond.size else last
    cut = max(cut, first)
    ratio = ((cut + 1) / (first + 1)) ** (1.0 / (_MAX_BINS - 1))
    edges = {first}
    for k in range(1, _MAX_BINS - 1):
        edges.add(min(cut, int(math.floor((first + 1) * ratio**k)) - 1))
    if cut < last:
        edges.add(cut + 1)
    starts = sorted(e for e in edges if first <= e <= last)
    ends = [s - 1 for s in starts[1:]] + [last]
    return list(zip(starts, ends, strict=True))


def truncated_poisson_curves(theta: float, n: int, rate: float,
                             max_batch: int) -> dict[str, PairCurve]:
    """Certified dominating pair curves of one step of the truncated-Poisson-subsampled
    Gaussian mechanism, under add/remove (see the module docstring for the argument).

    Parameters
    ----------
    theta : float
        θ = Δ/σ > 0, the Gaussian sensitivity of one record (Δ = the clipping norm C).
    n : int
        Dataset size with the record (≥ 1); the others number n − 1.
    rate : float
        Poisson sampling rate q ∈ (0, 1].
    max_batch : int
        B ≥ 1, the largest batch; B ≥ n means truncation never happens.

    Returns
    -------
    dict
        ``{"remove": curve, "add": curve}``, for :class:`~privamp.pld.engine.PldEvent`. For
        B ≥ n the plain Poisson curves (:class:`~privamp.pld.curves.PoissonGaussianCurve`),
        otherwise :class:`~privamp.pld.mixture_curve.MixtureCurve` objects.

    Raises
    ------
    InvalidParameterError
        For θ, q outside their ranges, n or B not a positive integer.

    Examples
    --------
    >>> from privamp.pld.engine import PldEvent, pld_epsilon
    >>> curves = truncated_poisson_curves(1.0, n=4, rate=0.5, max_batch=2)
    >>> sorted(curves)
    ['add', 'remove']
    >>> res = pld_epsilon([PldEvent(curves, 1)], 1e-3)
    >>> res.bracket.lower <= res.bracket.upper
    True
    """
    theta = check_real("theta", theta, "(0, inf)")
    n = check_int("n", n, "[1, inf)")
    rate = check_real("rate", rate, "(0, 1]")
    max_batch = check_int("max_batch", max_batch, "[1, inf)")
    poisson = {o: PoissonGaussianCurve(theta, rate, o) for o in ("remove", "add")}
    if max_batch >= n:
        return poisson
    trials = n - 1
    # the window of J values summed term by term (as for BBG Theorem 14)
    if trials <= EXACT_SUPPORT:
        lo, hi = 0, trials
    else:
        mean = trials * rate
        sd = math.sqrt(trials * rate * (1 - rate)) + 1.0
        hi = min(trials, int(mean + 40 * sd) + 1)
        lo = max(0, int(mean - 40 * sd) - 1)
    tail_high = binomial_log_tail_bound(hi, trials, rate) if hi < trials else -math.inf
    tail_low = (binomial_log_tail_bound(trials - lo, trials, 1 - rate)
                if lo > 0 and rate < 1 else -math.inf)
    js = np.arange(lo, hi + 1)
    log_pmf = np.asarray(binomial_logpmf(js.astype(float), float(trials), rate), dtype=float)
    with np.errstate(invalid="ignore"):
        lp_up = log_pmf + math.log1p(_PMF_REL)
        lp_lo = log_pmf + math.log1p(-_PMF_REL)

    # J < B: the Poisson pair; weight P(J < B) (plus the masses outside the window it may hold)
    below = js < max_batch
    w_pois_up = _log_sum(np.concatenate([lp_up[below], [tail_low],
                                         [tail_high] if hi < max_batch - 1 else []]), up=True)
    w_pois_lo = _log_sum(lp_lo[below], up=False)

    theta_s = 2.0 * theta  # exact in binary floating point
    subst: list[tuple[float, float, PairCurve]] = []
    if lo > max_batch and tail_low > -math.inf:
        # J in [B, lo): below the window, η at most η_B
        subst.append((tail_low, -math.inf,
                      _substitution_curve(theta_s, rate, max_batch, max_batch)))
    if hi < max_batch:
        # every J ≥ B lies above the window: P(J ≥ B) = P(J > B − 1), Chernoff
        w = binomial_log_tail_bound(max_batch - 1, trials, rate)
        subst.append((w, -math.inf, _substitution_curve(theta_s, rate, max_batch, max_batch)))
    else:
        first = max(max_batch, lo)
        bins = _bins(first, hi, log_pmf, lo)
        for k, (a, b) in enumerate(bins):
            sel = slice(a - lo, b - lo + 1)
            extra = [tail_high] if k == len(bins) - 1 else []
            w_up = _log_sum(np.concatenate([lp_up[sel], extra]), up=True)
            w_lo = _log_sum(lp_lo[sel], up=False)
            subst.append((w_up, w_lo, _substitution_curve(theta_s, rate, max_batch, a)))
    return {o: MixtureCurve([(w_pois_up, w_pois_lo, poisson[o]), *subst], o)
            for o in ("remove", "add")}


def draw_truncated_poisson(n: int, rate: float, max_batch: int,
                           rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Draw one truncated Poisson batch as fixed-shape arrays (for JAX/XLA).

    Each of the n records is kept with probability ``rate``; if more than ``max_batch`` are
    kept, a uniform ``max_batch``-subset of them is used.

    Returns
    -------
    (indices, mask)
        ``indices``: int64 array of length ``max_batch``, the batch's records in increasing
        order, then padding entries 0; ``mask``: bool array of length ``max_batch``, True for
        the real records.

    The kept records are drawn by geometric gaps (O(kept) work, as
    :class:`~privamp.sampling.Poisson`), so n = 10^7 costs what the batch costs.

    >>> idx, mask = draw_truncated_poisson(10, 0.5, 3, rng=0)
    >>> idx.shape, mask.shape, idx.dtype.name
    ((3,), (3,), 'int64')
    """
    n = check_int("n", n, "[0, inf)")
    rate = check_real("rate", rate, "(0, 1]")
    max_batch = check_int("max_batch", max_batch, "[1, inf)")
    gen = check_rng(rng)
    kept = Poisson(rate).sample(n, rng=gen).indices
    if kept.size > max_batch:
        kept = np.sort(gen.choice(kept, size=max_batch, replace=False))
    indices = np.zeros(max_batch, dtype=np.int64)
    mask = np.zeros(max_batch, dtype=bool)
    indices[:kept.size] = kept
    mask[:kept.size] = True
    return indices, mask
