"""Group privacy under subsampling: the pairs of a *group of K records*, composed by the PLD engine.

Two datasets x, x' are **K-neighbours** under a relation when K steps of it lead from one to the
other (K insertions/removals under add/remove, K substitutions under substitution). A guarantee
"for groups of K" bounds every such pair. This is not the ``group_privacy`` option of
:meth:`~privamp.accountant.Accountant.add` (white- or black-box group profiles of one record
drawn several times by WR/MUST): here several *different* records differ.

**Poisson sampling (rate q) under add/remove, Gaussian mechanism (θ = Δ/σ): tight.** Write
x = D ∪ A and x' = D ∪ B with A ∩ B = ∅, |A| = a, |B| = b, a + b = K (a removals and b
insertions from x to x'). Conditional on the sampled part of D the common shift cancels, so
(Schuchardt, Stoian, Günnemann et al., NeurIPS 2024, "Unified mechanism-specific amplification
by subsampling and group privacy amplification": their Poisson group theorem for the Gaussian,
derived here from first principles):

    M(x)  = Σ_{S ⊆ A} q^{|S|}(1 − q)^{a−|S|} N(u_S, σ²I),   u_S = Σ_{i∈S} g_i, ‖g_i‖ ≤ Δ,
    M(x') = Σ_{S ⊆ B} q^{|S|}(1 − q)^{b−|S|} N(v_S, σ²I),   v_S = Σ_{i∈S} h_i, ‖h_i‖ ≤ Δ.

*Claim:* for every α ≥ 0, ``D_α(M(x) ‖ M(x')) ≤ D_α(P_{a,b} ‖ Q_{a,b})`` with the one-dimensional
double mixture (units of σ)

    P_{a,b} = Σ_i Bin(i; a, q) N(iθ, 1),    Q_{a,b} = Σ_j Bin(j; b, q) N(−jθ, 1).

*Proof sketch.* ``D_α(M(x)‖M(x')) = E_Z[(Σ_S w_S X_S − α Σ_S w'_S Y_S)⁺]``, Z ~ N(0, I), with
the likelihood ratios ``X_S = e^{⟨u_S,Z⟩ − ‖u_S‖²/2}`` and ``Y_S = e^{⟨v_S,Z⟩ − ‖v_S‖²/2}``
against N(0, I) (the expectation of (dP − α dQ)⁺/dN(0,I)). Each X_S is log-normal with mean 1
and log-variance ‖u_S‖²; the law of X_S depends on ‖u_S‖ only. (i) For fixed marginals, the
sum of the variables ``w_S X_S`` and ``−α w'_S Y_S`` is largest in convex order when they are
comonotone (Dhaene et al. 2002, "The concept of comonotonicity", Theorem 7), and (·)⁺ is
convex: putting every u_S on +e₁ and every v_S on −e₁ makes all of them increasing functions of
Z₁, i.e. comonotone. (ii) ``r ↦ e^{rZ₁ − r²/2}`` is a martingale in the variance r², so X_S
(and −Y_S) grows in convex order with ‖u_S‖ (‖v_S‖), and comonotone sums preserve convex order
(ibid., Theorem 8): the norms may be raised to their maximum |S|Δ. Grouping the subsets by size
gives the binomial weights. Both orders of neighbours and every split are needed: the pair
(x', x) is the split (b, a) reflected, and a group of fewer than K records is the case of some
g_i = 0, dominated by the same pairs. The datasets — hence the split — are the same for every
step of a composition, so each split is composed separately over the whole ledger and the
guarantee is the maximum over the K + 1 splits (the engine's "orientations"). At q = 1 the split
(a, b) is the Gaussian pair at distance (a + b)θ = Kθ: the plain group mechanism, exactly. K = 1
gives the two Poisson orientations of Zhu, Dong, Wang 2022, Theorem 11.

**Poisson under add/remove (any mechanism), WOR and WR under substitution: coupling.** Couple
the two subsamples draw by draw (for Poisson: one coin per record of D ∪ A ∪ B): they differ in
exactly the records of the group that were drawn, k of them, and when none was drawn they are
equal in law. Advanced joint convexity and joint convexity over the coupling (Balle, Barthe,
Gaboardi 2018, Theorem 8; the proofs of their Theorems 9 and 10, with the multiplicity of one
record replaced by the hit count of the group) give

    δ'(ε') ≤ Σ_k P(hits = k) δ_k(ε),   ε' = log(1 + η(e^ε − 1)),   η = P(hits ≥ 1),

with δ_k the mechanism's k-group profile (white-box: the Gaussian and Laplace at kΔ) and the hit
count Binomial(K, q) (Poisson), Hypergeometric(n, K, m) (WOR) or Binomial(m, K/n) (WR)
(:meth:`~privamp.sampling.SamplingScheme.group_multiplicity`). It is a valid bound, not known
to be tight. Where the post-hoc bound below is smaller (small rates, where it loses less to
advanced joint convexity at the group level), the pointwise smaller of the two is composed
(:class:`~privamp.profiles.MinimumProfile`; not convex in e^ε, so the composition has a
certified upper end only). Measured (δ = 1e-5): WOR(60000, 600), σ = 2, 1000 steps, K = 8:
7.536 against 7.561 post-hoc; WOR(100, 50), σ = 3, 10 steps, K = 8: 33.44 against 39.05; and
WR(1000, 100), σ = 2, K = 2 answers where the post-hoc profile's loss range overflows.

**Randomized response is not tight here.** It sees the data through one bit of the
subsample, and under the draw-by-draw coupling its output laws are RR mixtures whose weights ρ,
ρ' differ by at most η_K = P(the group is hit), so at every ε the divergence is at most that of
Poisson's "remove" or "add" pair at rate η_K. But a pair of datasets can sit strictly between the
two (ρ = (1 − η)s + η, ρ' = (1 − η)s under WOR), dominated by neither for every α, and after
two or more steps its δ exceeds both compositions (review of issue 20, F1:
``tests/test_review21_findings.py``). So randomized response takes the coupling bound, whose
symmetric curve bounds every ordered pair at every ε and therefore composes.

**Every other combination: post-hoc.** The scheme's amplified profile for one record
(:func:`~privamp.amplification.subsampling.amplify`) turned into a group profile by Vadhan's
lemma (:class:`~privamp.profiles.BlackBoxGroupProfile`; Vadhan 2017, Lemma 2.2), a valid bound
for any relation (chain K neighbours), composed as a symmetric curve; without sampling the
mechanism's own group profile (white-box where available: the Gaussian and Laplace mechanisms at
sensitivity KΔ, exact). The batch samplers (random allocation, shuffling, truncated Poisson)
have no group pair and are refused.

**A lower end for WOR and WR groups: realizable pairs.** The coupling bound has no lower end
of its own (its curve is the smaller of two bounds), and it is not known to be tight. For the
Gaussian mechanism (θ = Δ/σ, Δ the sensitivity under substitution) a lower end comes from
datasets and a query the guarantee must cover. Take the sum query f(S) = Σ_{s∈S} φ(s) with φ
in [−Δ/2, Δ/2], so one substitution moves f by at most Δ. Let every record outside the group
have φ = −tΔ/2 (t ∈ [−1, 1]), the group's records φ = +Δ/2 in x and −Δ/2 in x'. A subsample
with j hits of the group (j ~ the hit law w: Hypergeometric(n, K, m) under WOR,
Binomial(m, K/n) under WR, draws of one record counted with multiplicity) has f(x) − c =
j(1 + t)Δ/2 and f(x') − c = −j(1 − t)Δ/2, with c = −mtΔ/2 common to both. So

    M(x) = Σ_j w_j N(j(1 + t)θ/2, 1),    M(x') = Σ_j w_j N(−j(1 − t)θ/2, 1)

exactly (units of σ, the common shift removed). φ may differ from step to step, but one
fixed t already gives a valid pair of datasets for the whole ledger, so the composition of
that pair is a lower bound on the true ε of any ledger of such lines on datasets of one size n.
privamp composes t = 1 (``"remove"``: Σ_j w_j N(jθ) against N(0)), its reverse (``"add"``)
and t = 0 (``"mixed1"``); the engine's lower end is that of the orientation with the largest
upper end. At K = 1 and t = 1 this is the pair of Zhu, Dong, Wang 2022 for WOR. Per step,
neither t = ±1 nor t = 0 dominates the other (t = 0 is larger near α = 1, by 4 % in the
examples of ``tests/test_group_realizable.py``, t = 1 at large α): the mixture pair with
t = 1 alone is *not* a dominating pair for groups, and is used here only from below.

Two roundings keep it a lower bound. (a) The hit count is clipped at J (the query uses
min(j, J) copies; still sensitivity Δ): the weight of J is P(hits ≥ J) (the pmf's terms
summed by :func:`~privamp._numerics.logsumexp_signed`, within its ``lse_error``, far inside
the 1e-12 relative allowance of the mixtures' tails), J the first count
whose tail is below 1e-40, at most :data:`REALIZED_MAX_HITS`. (b) Each mean jθ is rounded
down: in the collinear arrangement a smaller shift of any component only lowers every D_α
(step (ii) of the proof above). (c) A hit law kept to a truncated support (WR with m + 1
above the exact-support limit, 20,000 draws; its missing mass is below 1e-300 and lies beyond
the support) has that mass moved to its heaviest count, below J: a smaller shift again. The
mechanism must
be given as a mechanism (a profile bounds an unknown mechanism from above only).
Measured (δ = 1e-5, σ = 2): WOR(100, 50), K = 8, 10 steps: [56.34, 62.19]; WR(1000, 100),
K = 2, 10 steps: [1.90, 2.22] (4.41 with the coupling bound alone, before the relaxed double
mixture below) — the true ε of the group lies in between.

**WOR and WR groups of the Gaussian and the Laplace: the relaxed double mixture.** A third
upper bound joins the coupling and post-hoc bounds in the minimum: Σ_j w_j N(jθ, 1) against
Σ_j w_j N(−jθ, 1) (Laplace components for the Laplace mechanism), w the hit law
(:class:`RelaxedGroupProfile`, with its proof: a reference batch outside the group, then the
comonotone and convex-order steps above, or those of :mod:`privamp.pld.group_laplace`). Looser
than the coupling bound at K = 1 and small ε, far tighter for K ≥ 2 at larger ε.

The Laplace mechanism (θ = Δ/b) takes the same construction with Lap(·, 1) components
(:class:`~privamp.pld.group_laplace.RealizedLaplaceGroupCurve`): the query is the same, only
the noise differs, and the convex-order step holds for Laplace shifts too (D_α of Lap(r) against
Lap(0) grows with r at every α).

**Poisson groups beyond the tight pairs: the same lower end.** Groups of more than
:data:`TIGHT_MAX_GROUP` records under Poisson (add/remove) take the coupling bound, which has no
lower end. The "remove" split is realizable as well: x = D ∪ G and x' = D (G the group, D any
records), the query f(S) = Δ·min(|S ∩ G|, J) (add/remove sensitivity Δ: one record moves the
count by at most one), so M(x) = Σ_j w_j N(min(j, J)θ, 1) with w = Binomial(K, q) and
M(x') = N(0, 1) — the clipped ``"remove"`` pair above with Poisson's hit law, and ``"add"`` its
reverse (t = 0 has no counterpart under add/remove). The datasets are the same for every step
(a ledger's lines may have different rates), so their composition bounds the group's ε from
below. Up to the clip at J this is the tight pure-removal split itself.

**Large groups.** The tight pairs cost K + 1 compositions of (K + 1)-component mixtures: they
are used up to :data:`TIGHT_MAX_GROUP` records, and a larger group of the same combination takes
the coupling bound (said in ``group_bound``, with :func:`tight_limit_note`'s reason). Under
sampling, groups beyond :data:`MAX_SAMPLED_GROUP` and groups larger than a dataset of known size
are refused before any work (:func:`check_group_reach`). No mixture weight is truncated: every
component of every split is kept (the time went to per-call overhead in the root search, not to
the number of components).

:func:`group_pair_curves` returns the curves and which bound was used (``"tight"``,
``"coupling"`` or ``"post-hoc"``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _special
from .._numerics import (
    ULP,
    log1mexp,
    log_comb,
    logsumexp_signed,
    mul_down,
    mul_up,
    round_down_log,
    round_up_log,
)
from .._validation import check_int, check_real
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..profiles import MinimumProfile, PrivacyProfile
from .curves import _SUBNORMAL_SLACK, PairCurve, ProfileCurve

__all__ = ["MAX_SAMPLED_GROUP", "REALIZED_MAX_HITS", "RELAXED_MAX_HITS", "TIGHT_MAX_GROUP",
           "GaussianMixtureCurve", "GroupGaussianCurve", "RealizedGroupCurve",
           "RelaxedGroupProfile", "check_group_reach", "group_bound", "group_pair_curves",
           "realizable_group_curves", "relaxed_group_profile", "split_names",
           "tight_pairs_apply"]

#: The tight split pairs (Poisson under add/remove, Gaussian and Laplace) are composed for groups
#: of at most this many records. The work is K + 1 compositions (one per split), each of a curve
#: mixing up to K + 1 components, so it grows like K² (measured, ``benchmarks/bench_group.py
#: --sizes``: Poisson(0.01), σ = 2 / b = 2, T = 1000, ε at δ = 1e-5: K = 64 in 18 s (Gaussian)
#: and 27 s (Laplace) on a shared core; Laplace K = 100 took 53 s). Beyond it the same combination
#: takes the coupling bound, composed as one symmetric curve (certified, looser; the ledger's
#: ``group_bound`` says ``"coupling"`` and :func:`tight_limit_note` why).
TIGHT_MAX_GROUP = 64
#: The largest group accounted under sampling by any bound. Each step's group curve sums the
#: mechanism's group profiles over the group's hit counts (up to K terms) and its privacy loss
#: reaches further with K: at K = 1000 the coupling bound of the reference setting (Poisson(0.01),
#: σ = 2, T = 1000) answers in a few seconds (ε ≈ 1.5e4); at K = 10⁴ one step's loss passes the
#: engine's range (e^700) and at K = 10⁶ building the curve alone takes minutes. Larger groups
#: are refused before any work (:func:`check_group_reach`).
MAX_SAMPLED_GROUP = 1000
#: The realizable lower pairs of WOR/WR groups (:func:`realizable_group_curves`) clip the hit
#: count at this many, or earlier where the mass beyond is below _REALIZED_TAIL: at most 65
#: mixture components per side, and a lower end a clip of negligible mass leaves unchanged.
REALIZED_MAX_HITS = 64
_REALIZED_TAIL = 1e-40

#: relative accuracy assumed of privamp._special.log_ndtr's exponentials (4 ulp where the value
#: is a normal float; the same allowance as :mod:`privamp.pld.mixture`)
_NDTR_REL = 1e-12
#: outputs further than this (in units of σ) beyond every component mean carry no mass a double
#: can hold (Φ(−40) ≈ 4e-350)
_REACH = 40.0
_BISECTIONS = 60


def split_names(group_size: int) -> tuple[str, ...]:
    """The engine orientation names of the K + 1 splits: ``"remove"`` (K removals from x to
    x'), ``"add"`` (K insertions) and ``"mixed{a}"`` (a removals, K − a insertions)."""
    k = check_int("group_size", group_size, "[1, inf)")
    return ("remove", "add") + tuple(f"mixed{a}" for a in range(1, k))


def _split_of(name: str, k: int) -> tuple[int, int]:
    if name == "remove":
        return k, 0
    if name == "add":
        return 0, k
    a = int(name[len("mixed"):])
    return a, k - a


def _log_binom(n: int, q: float) -> np.ndarray:
    """log Bin(i; n, q), i = 0..n (``-inf`` where a weight is 0, at q = 1)."""
    i = np.arange(n + 1, dtype=float)
    lq = math.log(q)
    with np.errstate(invalid="ignore", divide="ignore"):
        l1q = math.log1p(-q) if q < 1 else -math.inf
        out = log_comb(float(n), i) + i * lq + np.where(i < n, (n - i) * l1q, 0.0)
    return np.where(np.isnan(out), -np.inf, out)


class _DoubleMixture:
    """``P = Σ a_i N(μ_i, 1)``, ``Q = Σ b_j N(ν_j, 1)`` with μ_i ≥ 0 ≥ ν_j: the privacy loss
    ``L(t) = log(dP/dQ)(t) = LSE_i(c_i + tμ_i) − LSE_j(d_j + tν_j)`` (the quadratic terms cancel;
    c_i = log a_i − μ_i²/2) is non-decreasing in t, so the optimal set of ``D_α`` is {T > t*}
    with L(t*) = log α, and

        D_α(P ‖ Q) = max_t g(t),   g(t) = P(T > t) − α Q(T > t).

    The root t* is bracketed, ``t_lo ≤ t* ≤ t_hi``, by two bisections on ``L(t) < ε − e_L`` and
    ``L(t) > ε + e_L`` (e_L bounds the rounding of L), so that, both tails being non-increasing,

        g(t_lo) ≥ ...  (any t gives a lower bound: g(t) ≤ D_α)
        D_α = g(t*) ≤ P(T > t_lo) − α Q(T > t_hi)                       (an upper bound),

    and the slope of the curve, ``−Q(L > ε) = −Q(T > t*)``, lies in
    ``[−Q(T > t_lo), −Q(T > t_hi)]``. Where L stays above ε − e_L on the whole reach,
    t_lo = −∞ (tails 1); where it stays below ε + e_L, t_hi = +∞ (tails 0)."""

    def __init__(self, mu, la, nu, lb):
        keep_a = la > -np.inf
        keep_b = lb > -np.inf
        self.mu, self.la = mu[keep_a], la[keep_a]
        self.nu, self.lb = nu[keep_b], lb[keep_b]
        self.c = self.la - self.mu ** 2 / 2
        self.d = self.lb - self.nu ** 2 / 2
        self.t_min = float(np.min(self.nu)) - _REACH
        self.t_max = float(np.max(self.mu)) + _REACH
        self._memo: tuple | None = None

    @staticmethod
    def _lse(c, means, t):
        """LSE_i(c_i + t m_i) and a bound on its rounding error: each term is computed within
        2 ulp of ``|c_i| + |t m_i|`` (c_i itself within 2 ulp of ``|log w_i| + m_i²/2``, below
        the same allowance), and moves the sum by its softmax share s_i times that; the shifted
        exponentials, their sum and the log add ``n + 4`` ulp of the result's size."""
        tm = t[:, None] * means[None, :]
        terms = c[None, :] + tm
        top = np.max(terms, axis=1)
        with np.errstate(invalid="ignore", over="ignore"):
            ex = np.exp(terms - top[:, None])
            total = np.sum(ex, axis=1)
            val = top + np.log(total)
            share = ex / total[:, None]
            spread = np.sum(share * (np.abs(c)[None, :] + np.abs(tm)), axis=1)
        err = 4 * ULP * spread + (means.size + 4) * ULP * (1.0 + np.abs(val))
        return val, err

    def _loss(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """L(t) and a bound on its rounding error (doubled: a safety factor on the shares,
        themselves rounded)."""
        la, ea = self._lse(self.c, self.mu, t)
        lb, eb = self._lse(self.d, self.nu, t)
        val = la - lb
        return val, 2 * (ea + eb) + 2 * ULP * np.abs(val)

    def _bisect(self, eps: np.ndarray, below: bool):
        """below: the largest t found with L(t) < ε − e_L (−inf if none on the reach), the
        distance w to the first point found where that fails, and e_L there (so the exact L is
        ≥ ε − 2e_L from t + w on); otherwise the smallest t with L(t) > ε + e_L (+inf if none),
        w and e_L likewise."""
        n = eps.size
        lo = np.full(n, self.t_min)
        hi = np.full(n, self.t_max)

        def ok(t, e):
            val, err = self._loss(t)
            return val < e - err if below else val > e + err

        first = ok(lo, eps)
        last = ok(hi, eps)
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            m = ok(mid, eps)
            if below:
                lo = np.where(m, mid, lo)
                hi = np.where(m, hi, mid)
            else:
                hi = np.where(m, mid, hi)
                lo = np.where(m, lo, mid)
        if below:
            # first: a certified point below t* on the reach; last: L < ε on the whole reach
            t = np.where(last, self.t_max, np.where(first, lo, -np.inf))
            err = self._loss(hi)[1]
            w = np.where(first & ~last, hi - lo, np.inf)
        else:
            t = np.where(first, self.t_min, np.where(last, hi, np.inf))
            err = self._loss(lo)[1]
            w = np.where(last & ~first, hi - lo, np.inf)
        return t, w, err

    def _slope(self, t: np.ndarray) -> np.ndarray:
        """L'(t): the softmax-weighted mean of the P means minus that of the Q means (≥ 0)."""
        def mean(c, m):
            terms = c[None, :] + t[:, None] * m[None, :]
            with np.errstate(invalid="ignore", over="ignore"):
                ex = np.exp(terms - np.max(terms, axis=1)[:, None])
                return (ex @ m) / np.sum(ex, axis=1)
        return mean(self.c, self.mu) - mean(self.d, self.nu)

    def _loss_slope(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """L(t) and L'(t) in one pass, without error bounds (Newton's proposals only)."""
        def side(c, m):
            terms = c[None, :] + t[:, None] * m[None, :]
            top = np.max(terms, axis=1)
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                ex = np.exp(terms - top[:, None])
                total = np.sum(ex, axis=1)
                return top + np.log(total), (ex @ m) / total
        va, ma = side(self.c, self.mu)
        vb, mb = side(self.d, self.nu)
        return va - vb, ma - mb

    def _newton(self, eps: np.ndarray):
        """A fast bracket of t*: the interval of a fixed grid of L values, safeguarded Newton
        steps inside it, then the candidates t ∓ δ *checked* with the certified predicates of
        :meth:`_bisect` (``ok`` False where a check fails: those go to the bisections). Only
        the checks matter for validity; Newton only proposes."""
        if not hasattr(self, "_grid"):
            tg = np.linspace(self.t_min, self.t_max, 2049)
            self._grid = (tg, np.maximum.accumulate(self._loss(tg)[0]))
        tg, lg = self._grid
        j = np.clip(np.searchsorted(lg, eps), 1, tg.size - 1)
        lo, hi = tg[j - 1].copy(), tg[j].copy()
        t = 0.5 * (lo + hi)
        for _ in range(12):
            val, d = self._loss_slope(t)
            lo = np.where(val < eps, t, lo)
            hi = np.where(val < eps, hi, t)
            with np.errstate(divide="ignore", invalid="ignore"):
                step = t - (val - eps) / d
            inside = np.isfinite(step) & (step >= lo) & (step <= hi)
            new = np.where(inside, step, 0.5 * (lo + hi))
            # converged to rounding: further steps only move t within the ulps the checked
            # candidates t ∓ δ below step over anyway (a proposal: only the checks matter)
            done = bool(np.all(np.abs(new - t) <= 4 * ULP * (1 + np.abs(t))))
            t = new
            if done:
                break
        val, err = self._loss(t)
        d = np.maximum(self._slope(t), 1e-300)
        with np.errstate(over="ignore"):
            delta = 4 * err / d + 16 * ULP * (1 + np.abs(t))
        t_lo, t_hi = t - delta, t + delta
        v_lo, e_lo = self._loss(t_lo)
        v_hi, e_hi = self._loss(t_hi)
        ok = (np.isfinite(delta) & (v_lo < eps - e_lo) & (v_hi > eps + e_hi)
              & (t_lo > self.t_min) & (t_hi < self.t_max))
        # the exact L ≥ ε − 2e from t_hi on (computed L there > ε + e_hi): e = e_hi
        # ε outside the range of L on the reach: t* below t_min (or above t_max), checked
        ends = np.array([self.t_min, self.t_max])
        v_end, e_end = self._loss(ends)
        below = ~ok & (v_end[0] > eps + e_end[0])
        above = ~ok & (v_end[1] < eps - e_end[1])
        t_lo = np.where(below, -np.inf, np.where(above, self.t_max, t_lo))
        t_hi = np.where(below, self.t_min, np.where(above, np.inf, t_hi))
        e_hi = np.where(below | above, np.inf, e_hi)
        return t_lo, t_hi, e_hi, ok | below | above

    def brackets(self, eps: np.ndarray):
        """``(t_lo, t_hi, gap)``: t_lo ≤ t* ≤ t_hi (each checked with the certified
        predicates), and gap ≥ ε − L(t_lo) (∞ where an end is infinite)."""
        key = eps.tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        fin = np.isfinite(eps)
        t_lo = np.where(eps == np.inf, np.inf, -np.inf)
        t_hi = np.where(eps == -np.inf, -np.inf, np.inf)
        if np.any(fin):
            idx = np.flatnonzero(fin)
            lo_n, hi_n, _, ok = self._newton(eps[idx])
            t_lo[idx[ok]], t_hi[idx[ok]] = lo_n[ok], hi_n[ok]
            rest = idx[~ok]
            if rest.size:
                t_lo[rest] = self._bisect(eps[rest], below=True)[0]
                t_hi[rest] = self._bisect(eps[rest], below=False)[0]
        # the gap ε − L(t_lo) ≤ ε − (computed L − its error bound), for the rise of g
        gap = np.full(eps.shape, np.inf)
        both = np.isfinite(t_lo) & np.isfinite(t_hi)
        if np.any(both):
            v, ev = self._loss(t_lo[both])
            gap[both] = np.maximum(eps[both] - v + ev, 0.0)
        self._memo = (key, (t_lo, t_hi, gap))
        return self._memo[1]

    @staticmethod
    def rise(eps, t_lo, t_hi, gap) -> np.ndarray:
        """log of a bound on g(t*) − g(t_lo): on [t_lo, t*] the slope of g is
        αq(t)(1 − e^{L(t)−ε}) ∈ [0, α φ_max (ε − L(t_lo))] (L is non-decreasing and
        1 − e^{−x} ≤ x), φ_max ≤ 1/√(2π) < 0.4 bounding Q's density (a mixture of
        unit-variance normals), and t* − t_lo ≤ t_hi − t_lo."""
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            width = np.where(np.isfinite(t_hi) & np.isfinite(t_lo), t_hi - t_lo, np.inf)
            bound = 0.4 * width * gap * (1 + 1e-9)
            return np.where(np.isfinite(bound), eps + np.log(bound), np.inf)

    @staticmethod
    def _log_tail(means, lw, t, upper_side: bool) -> np.ndarray:
        """log Σ w exp(log Φ(±(mean − t))): ``upper_side`` = P(T > t), else P(T ≤ t)."""
        out = np.empty(t.shape)
        pos_inf, neg_inf = np.isposinf(t), np.isneginf(t)
        out[pos_inf] = -np.inf if upper_side else 0.0
        out[neg_inf] = 0.0 if upper_side else -np.inf
        mid = ~(pos_inf | neg_inf)
        if np.any(mid):
            z = means[None, :] - t[mid][:, None]
            if not upper_side:
                z = -z
            # NumPy's max-shifted sum (no SciPy per-call overhead); its error bound (lse_error:
            # (5 + ⌈log2 n⌉ + 6 ln n) ulp + ulp·|value|) is inside the (16 + 4n) ulp of
            # 1 + |value| that tails() adds
            out[mid] = np.minimum(logsumexp_signed(lw[None, :] + _special.log_ndtr(z),
                                                   axis=1)[0], 0.0)
        return out

    def tails(self, t, p_side: bool, above: bool, up: bool) -> np.ndarray:
        """log of the P (or Q) mass of T > t (``above``) or T ≤ t, rounded up or down."""
        means, lw = (self.mu, self.la) if p_side else (self.nu, self.lb)
        val = self._log_tail(means, lw, t, above)
        # log_ndtr within _NDTR_REL relative, the weights and the log-sum-exp a few ulp
        n = means.size
        rel = _NDTR_REL + (16 + 4 * n) * ULP * (1 + np.where(np.isfinite(val), np.abs(val), 0))
        if up:
            return np.minimum(np.where(np.isfinite(val), val + rel, val), 0.0)
        return np.where(np.isfinite(val), val - rel, val)


def _log_diff(a: np.ndarray, b: np.ndarray, up: bool) -> np.ndarray:
    """log(e^a − e^b), ``-inf`` where a ≤ b; rounded up by an absolute allowance of
    64 ulp·(1 + |a|) of e^a (the cancellation error of the subtraction), or down by it."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        pos = a > b
        d = np.where(pos, a + log1mexp(np.minimum(b - a, 0.0)), -np.inf)
        slack = a + np.log(64 * ULP * (1 + np.where(np.isfinite(a), np.abs(a), 0.0)))
        if up:
            out = np.where(np.isfinite(a), np.logaddexp(d, slack), a)
            return round_up_log(out, ulps=8)
        out = np.where(pos & (d > slack), d + np.log1p(-np.exp(np.minimum(slack - d, 0.0))),
                       -np.inf)
        return round_down_log(out, ulps=8)


class _SplitCurve(PairCurve):
    """What the curves of one split (a removals, b insertions) of a group of K = a + b records
    under Poisson sampling share: the validated parameters θ (upper values and slopes), θ_lower
    (lower values), the rate, a and b, and the engine orientation name of the split
    (:func:`split_names`). Subclasses build their mixtures in ``__init__`` after this one."""

    lower_slack = 1e-12

    def __init__(self, theta: float, rate: float, n_remove: int, n_add: int,
                 theta_lower: float | None = None):
        self.theta = check_real("theta", theta, "(0, inf)")
        self.theta_lower = (self.theta if theta_lower is None
                            else check_real("theta_lower", theta_lower, f"(0, {self.theta!r}]"))
        self.rate = check_real("rate", rate, "(0, 1]")
        self.n_remove = check_int("n_remove", n_remove, "[0, inf)")
        self.n_add = check_int("n_add", n_add, "[0, inf)")
        if self.n_remove + self.n_add < 1:
            check_int("n_remove + n_add", self.n_remove + self.n_add, "[1, inf)")
        self.orientation = ("remove" if self.n_add == 0 else "add" if self.n_remove == 0
                            else f"mixed{self.n_remove}")
        self.group_size = self.n_remove + self.n_add


class GaussianMixtureCurve(PairCurve):
    """The curve of a pair of unit-variance Gaussian mixtures on a line, ``P = Σ a_i N(μ_i, 1)``
    against ``Q = Σ b_j N(ν_j, 1)`` with μ_i ≥ 0 ≥ ν_j (:class:`_DoubleMixture`): certified upper
    and lower values on all of ℝ and slope bounds. ``_up`` gives the upper values and slopes,
    ``_lo`` the lower values (the same mixture, or one with smaller shifts where the shifts are
    rounded: D_α only grows with them). Subclasses set both, and ``orientation``."""

    lower_slack = 1e-12
    _up: _DoubleMixture
    _lo: _DoubleMixture

    def _values(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return self._values_inner(np.asarray(eps, dtype=float), lower)

    def _values_inner(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        mix = self._lo if lower else self._up
        t_lo, t_hi, gap = mix.brackets(eps)
        out = np.empty(eps.shape)
        pos = eps >= 0
        up = not lower
        if np.any(pos):
            e = eps[pos]
            if lower:  # g(t) ≤ D_α at t = t_lo (any t)
                t = np.where(np.isfinite(t_lo[pos]), t_lo[pos], t_hi[pos])
                p = mix.tails(t, True, True, up=False)
                q = e + mix.tails(t, False, True, up=True)
            else:
                # g(t*) ≤ P(T > t_lo) − αQ(T > t_hi) (both tails non-increasing), and
                # g(t*) ≤ g(t_lo) + rise (see _DoubleMixture.rise): the smaller of the two
                p = mix.tails(t_lo[pos], True, True, up=True)
                q = e + mix.tails(t_hi[pos], False, True, up=False)
                q_same = e + mix.tails(t_lo[pos], False, True, up=False)
                rise = mix.rise(e, t_lo[pos], t_hi[pos], gap[pos])
                near = round_up_log(np.logaddexp(_log_diff(p, q_same, True), rise), ulps=8)
            with np.errstate(invalid="ignore"):
                q = np.where(np.isposinf(e), np.inf, q)
            with np.errstate(invalid="ignore"):
                val = _log_diff(p, q, up)
                if up:
                    val = np.minimum(val, near)
                out[pos] = np.where(np.isposinf(e), -np.inf, val)
        neg = ~pos
        if np.any(neg):
            e = eps[neg]
            exc = self._excess(e, t_lo[neg], t_hi[neg], mix, up, gap[neg])
            with np.errstate(invalid="ignore"):
                val = np.logaddexp(log1mexp(e), exc)
            val = round_up_log(val, ulps=8) if up else round_down_log(val, ulps=8)
            out[neg] = np.where(np.isneginf(e), 0.0, val)
        out = np.minimum(out, 0.0)
        if lower:
            out = np.maximum(out, super().log_lower(eps))
        return out

    @staticmethod
    def _excess(e, t_lo, t_hi, mix, up: bool, gap=None) -> np.ndarray:
        """log(f(α) − (1 − α)) = log sup_t (α Q(T ≤ t) − P(T ≤ t)), attained at t*: upper
        bound α Q(T ≤ t_hi) − P(T ≤ t_lo), or the value at t_lo plus the rise of g (the same
        function up to the constant 1 − α), the smaller; lower bound the value at t_hi (any
        t)."""
        if up:
            qv = e + mix.tails(t_hi, False, False, up=True)
            pv = mix.tails(t_lo, True, False, up=False)
            crude = _log_diff(qv, pv, True)
            if gap is None:
                return crude
            q_same = e + mix.tails(t_lo, False, False, up=True)
            rise = mix.rise(e, t_lo, t_hi, gap)
            with np.errstate(invalid="ignore"):
                near = round_up_log(np.logaddexp(_log_diff(q_same, pv, True), rise), ulps=8)
            return np.minimum(crude, near)
        else:
            t = np.where(np.isfinite(t_hi), t_hi, t_lo)
            qv = e + mix.tails(t, False, False, up=False)
            pv = mix.tails(t, True, False, up=True)
        return _log_diff(qv, pv, up)

    def log_upper(self, eps):
        return self._values(eps, lower=False)

    def log_lower(self, eps):
        return np.minimum(self._values(eps, lower=True), self._values(eps, lower=False))

    def log_excess(self, eps):
        eps = np.asarray(eps, dtype=float)
        if eps.size == 0:
            return np.empty(0)
        t_lo, t_hi, gap = self._up.brackets(eps)
        return self._excess(eps, t_lo, t_hi, self._up, True, gap)

    def slope_bounds(self, eps, tau, log_lower=None):
        """``−Q(T > t_lo) ≤ −Q(L > ε) ≤ −Q(T > t_hi)`` (:class:`_DoubleMixture`), the tails
        exponentiated from their log bounds (rounded up / down).

        Rounding: where a tail is a normal float, exp is within a few ulp and the relative
        margin 1e-12 covers it. Below 2^-1022 exp is accurate only to half a subnormal spacing
        (2^-1075, absolute: the relative margin then changes nothing), and below log 2^-1075 ≈
        −745.1 it returns 0 while the tail may be up to 2^-1075; the absolute
        ``_SUBNORMAL_SLACK`` (4·2^-1074) covers both. ``q·(1 ± 1e-12) ± slack`` is a float
        moved away from the product by the slack: exact where the result is subnormal, rounded
        to nearest otherwise, which never brings it back past the product (a float itself), so
        the relative argument still holds there; the clip keeps [−1, 0]."""
        eps = np.asarray(eps, dtype=float)
        t_lo, t_hi, _ = self._up.brackets(eps)
        q_hi = np.exp(self._up.tails(t_lo, False, True, up=True))
        q_lo = np.exp(self._up.tails(t_hi, False, True, up=False))
        return (-np.minimum(q_hi * (1 + 1e-12) + _SUBNORMAL_SLACK, 1.0),
                -np.clip(q_lo * (1 - 1e-12) - _SUBNORMAL_SLACK, 0.0, 1.0))

    @property
    def log_mass_at_infinity(self) -> float:
        return -math.inf  # Gaussian mixtures with common variance: mutually absolutely continuous


def _same_centres(one, other) -> bool:
    """Whether two double mixtures (Gaussian or Laplace) of a split have the same centres (the
    outward and inward roundings agree: every iθ exact), so one can serve both sides."""
    return bool(np.array_equal(one.mu, other.mu) and np.array_equal(one.nu, other.nu))


class GroupGaussianCurve(_SplitCurve, GaussianMixtureCurve):
    """The split (a removals, b insertions) of a group of K = a + b records under Poisson
    sampling (rate q) of the Gaussian mechanism (θ = Δ/σ): the curve of

        P = Σ_i Bin(i; a, q) N(iθ, 1)   against   Q = Σ_j Bin(j; b, q) N(−jθ, 1)

    (module doc: a dominating pair of the split, tight; Schuchardt et al. 2024). Upper values and
    slopes use ``theta``, lower values ``theta_lower`` (D_α grows with θ, step (ii) of the proof).

    >>> rem = GroupGaussianCurve(0.5, 0.01, 2, 0)
    >>> e = np.array([0.0, 0.5])
    >>> bool(np.all(rem.log_lower(e) <= rem.log_upper(e)))
    True
    """

    def __init__(self, theta: float, rate: float, n_remove: int, n_add: int,
                 theta_lower: float | None = None):
        super().__init__(theta, rate, n_remove, n_add, theta_lower)
        self._up = self._mixture(self.theta, up=True)
        lo = self._mixture(self.theta_lower, up=False)
        self._lo = self._up if _same_centres(lo, self._up) else lo

    def _mixture(self, theta: float, up: bool) -> _DoubleMixture:
        """The double mixture with centres iθ and −jθ rounded outwards (``up``: upper values
        and slopes) or inwards (lower values): D_α grows with every shift (step (ii) of the
        module doc), so each side is a statement about a pair with representable centres on
        its safe side of the exact one."""
        a, b = self.n_remove, self.n_add
        rnd = mul_up if up else mul_down
        mu = np.array([rnd(float(i), theta) for i in range(a + 1)])
        nu = -np.array([rnd(float(j), theta) for j in range(b + 1)])
        return _DoubleMixture(mu, _log_binom(a, self.rate), nu, _log_binom(b, self.rate))

    def __repr__(self) -> str:
        return (f"GroupGaussianCurve(theta={self.theta!r}, rate={self.rate!r}, "
                f"n_remove={self.n_remove}, n_add={self.n_add})")


class _RealizedPair:
    """What the realizable pairs of the Gaussian and the Laplace share (module doc, "A lower end
    for WOR and WR groups"): the parameters, and the two sides' component centres and log
    weights, P's at j·s_P and Q's at −j·s_Q (returned as magnitudes; a zero shift is the single
    component at 0). Each centre is rounded down (``mul_down``): a smaller shift of one component
    only lowers every D_α (the convex-order step of the proof), so the values stay below the
    realized pair's."""

    def _sides(self, log_w, shift_p: float, shift_q: float, orientation: str):
        log_w = np.asarray(log_w, dtype=float)
        self.shift_p = check_real("shift_p", shift_p, "[0, inf)")
        self.shift_q = check_real("shift_q", shift_q, "[0, inf)")
        self.orientation = orientation
        self.hits = log_w.size - 1
        out = []
        for shift in (self.shift_p, self.shift_q):
            if shift == 0.0:
                out.append((np.zeros(1), np.zeros(1)))  # one component at 0, weight 1
            else:
                out.append((np.array([mul_down(float(j), shift) for j in range(log_w.size)]),
                            log_w))
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(hits={self.hits}, shift_p={self.shift_p!r}, "
                f"shift_q={self.shift_q!r}, orientation={self.orientation!r})")


class RealizedGroupCurve(_RealizedPair, GaussianMixtureCurve):
    """One realizable pair of a group of K records under WOR or WR (substitution), or Poisson
    (add/remove), of the Gaussian mechanism: the curve of

        P = Σ_j w_j N(j·s_P, 1)   against   Q = Σ_j w_j N(−j·s_Q, 1)

    with w the law of the hit count (clipped: its last weight is P(hits ≥ J)), in units of σ.
    Module doc, "A lower end for WOR and WR groups": a pair of datasets and a query of the
    mechanism's class produce exactly these outputs, so its values bound the true worst case
    from below. ``s_P = 0`` (``s_Q = 0``) is the single component N(0, 1) on that side.
    """

    def __init__(self, log_w: np.ndarray, shift_p: float, shift_q: float, orientation: str):
        (mu, la), (nu, lb) = self._sides(log_w, shift_p, shift_q, orientation)
        self._up = self._lo = _DoubleMixture(mu, la, -nu, lb)


#: The relaxed double mixture of WOR/WR groups (:class:`RelaxedGroupProfile`) keeps the hit
#: counts up to the first J whose remaining mass is at most :data:`_RELAXED_TAIL` (that mass is
#: added to δ in full), and is not used when J would exceed this (the coupling bound stands):
#: at most 129 components per side.
RELAXED_MAX_HITS = 128
_RELAXED_TAIL = 1e-30
#: A bound on the relative error of each weight of a hit law (MultiplicityPmf: within
#: 32 ulp·(1 + |log w|) in log, below 2e-11 for every weight a double holds), with room to spare.
_RELAXED_WEIGHT_REL = 1e-10


class _RelaxedCurve(GaussianMixtureCurve):
    """The curve of the double mixture of :class:`RelaxedGroupProfile` (its weights as given)."""

    orientation = "symmetric"

    def __init__(self, mix: _DoubleMixture):
        self._up = self._lo = mix


class RelaxedGroupProfile(PrivacyProfile):
    """An upper bound on the profile of a group of K records under WOR or WR (substitution) of
    the Gaussian mechanism (θ = Δ/σ, Δ the sensitivity under substitution): the curve of the
    *relaxed double mixture*

        P* = Σ_j w_j N(jθ, 1)   against   Q* = Σ_j w_j N(−jθ, 1),

    and with ``family="laplace"`` the same with unit Laplace components for the Laplace
    mechanism (θ = Δ/b, Δ the ℓ1 sensitivity under substitution),

    w the law of the group's hit count (Hypergeometric(n, K, m) under WOR, Binomial(m, K/n)
    under WR, :meth:`~privamp.sampling.SamplingScheme.group_multiplicity`).

    *Proof.* Let D be the records outside the group G (the same in x and x'). Draw the
    subsample through a reference batch Z of m records of D, independent of which positions
    hit the group: under WR (n > K), m independent uniform draws from D, each position then
    replaced by a uniform member of G with probability K/n; under WOR (n − K ≥ m), a uniform
    random order of all n records, Z the first m records of D in it and the subsample its
    first m records — the j members of G among them replace the last j records of Z, and the
    pattern of hits is independent of Z. Given Z and the pattern S, the two subsamples are Z
    with j = |S| substitutions (the members' records of x, resp. x'), so the mechanism's
    means are c + a_S and c + b_S with c = f(Z), ‖a_S‖ ≤ jΔ and ‖b_S‖ ≤ jΔ (a chain of j
    substitutions; any norm, any dimension). By joint convexity over Z it is enough
    to bound each Z; there D_α is E[(Σ_S w_S X_S − α Σ_S w_S Y_S)⁺] with log-normal ratios
    against N(c, σ²I), and the comonotone and convex-order steps of the Poisson claim (module
    doc, (i) and (ii)) put every a_S on +e₁ and every b_S on −e₁ with norms |S|Δ: the pair above.
    For the Laplace mechanism the norms are ℓ1 norms and the convex-order step is that of
    :mod:`privamp.pld.group_laplace` (each ratio dominated by the one-dimensional one at its ℓ1
    shift, which grows with the shift).
    The reverse order of the datasets gives the reflected pair, whose curve is the same, so the
    curve bounds both orientations. The constraint ‖a_S − b_S‖ ≤ jΔ is dropped (hence
    "relaxed": P* and Q*'s j-th components are 2jθ apart), so at K = 1 and at small ε the
    coupling bound is smaller; for K ≥ 2 at larger ε this one is smaller by orders of magnitude
    (the coupling bound's joint convexity over the hit count evaluates each multi-hit term
    against N(0) alone). The group uses the pointwise smaller (:func:`group_pair_curves`).

    Certification: each centre jθ is rounded up (D_α grows with every shift, step (ii)); each
    weight w̃_j is within a relative r of the true w_j (:data:`_RELAXED_WEIGHT_REL`), so P ≤
    P̃/(1 − r) and Q ≥ Q̃/(1 + r), whence D_α(P‖Q) ≤ D_{α(1−r)/(1+r)}(P̃‖Q̃)/(1 − r): the curve
    is read at ε − 3r and raised by 4r (below ε = 3r, at 0 plus 6r: the curve's slope in α is at
    least −Q̃(Ω) ≥ −2); hit counts beyond J (and a law's truncated tail) are dropped from both
    sides and their mass τ added in full (joint convexity again, D_α ≤ τ for that part).
    """

    is_curve = False
    relation = None  # set in __init__ (substitution)

    def __init__(self, theta: float, law: Any, relation: Any, family: str = "gaussian"):
        self.theta = check_real("theta", theta, "(0, inf)")
        self.relation = relation
        if family not in ("gaussian", "laplace"):
            raise InvalidParameterError("family", "'gaussian' or 'laplace'", family)
        self.family = family
        lw = np.asarray(law.log_pmf, dtype=float)
        # log P(hits > j) for each j (running sums of the pmf from the top; they only choose J
        # and bound the dropped mass below, raised by the weights' relative error)
        above = np.append(np.logaddexp.accumulate(lw[::-1])[::-1][1:], -np.inf)
        above = np.logaddexp(above, law.log_tail)
        small = np.flatnonzero(above <= math.log(_RELAXED_TAIL))
        self.hits = int(small[0]) if small.size else lw.size - 1
        if self.hits > RELAXED_MAX_HITS or not small.size:
            raise UnsupportedCombinationError(
                f"the relaxed group pair keeps at most {RELAXED_MAX_HITS} hit counts")
        rest = above[self.hits]
        # the dropped mass: its running sum has an ulp or two of error per term added, far
        # inside the relative allowance
        self.log_tau = (float(rest + 2 * _RELAXED_WEIGHT_REL + 64 * ULP * (1 + abs(rest)))
                        if rest > -math.inf else -math.inf)
        mu = np.array([mul_up(float(j), self.theta) for j in range(self.hits + 1)])
        la = lw[:self.hits + 1]
        if family == "gaussian":
            self._curve = _RelaxedCurve(_DoubleMixture(mu, la, -mu, la))
        else:
            from .group_laplace import _LaplaceDoubleMixture, _RelaxedLaplaceCurve

            # the hit law's log weights are within a few ulp; 16 + |log w| over-covers them
            mag = 16.0 + np.abs(la)
            self._curve = _RelaxedLaplaceCurve(_LaplaceDoubleMixture(mu, la, -mu, la, mag, mag))

    def _log_delta(self, eps):
        eps = np.asarray(eps, dtype=float)
        r = _RELAXED_WEIGHT_REL
        with np.errstate(invalid="ignore"):
            # at least 2r below ε also where 3r is below ε's own ulp (ε ≳ 1e6)
            shifted = np.where(np.isfinite(eps),
                               np.maximum(eps - (3 * r + 8 * ULP * np.abs(eps)), 0.0), eps)
            val = self._curve.log_upper(shifted) + math.log1p(4 * r)
            near = eps - 3 * r < 0
            if np.any(near):
                val[near] = np.logaddexp(val[near], math.log(6 * r))
            val = np.logaddexp(val, self.log_tau)
        return np.minimum(round_up_log(val, ulps=8), 0.0)

    def _log_delta_lower(self, eps):
        # a lower bound on the relaxed pair's δ (the function represented): its curve's lower
        # value at ε + 3r, lowered by 4r (the same weight argument, the other way)
        eps = np.asarray(eps, dtype=float)
        r = _RELAXED_WEIGHT_REL
        with np.errstate(invalid="ignore"):
            val = self._curve.log_lower(eps + 3 * r) + math.log1p(-4 * r)
        return np.minimum(round_down_log(val, ulps=8), 0.0)

    def __repr__(self) -> str:
        return (f"RelaxedGroupProfile(theta={self.theta!r}, hits={self.hits}, "
                f"family={self.family!r})")


def relaxed_group_profile(source: Any, scheme: Any, relation: Any, group_size: int,
                          group_privacy: Any = None) -> RelaxedGroupProfile | None:
    """:class:`RelaxedGroupProfile` for a group of ``group_size`` ≥ 2 records of the Gaussian
    or the Laplace mechanism (a mechanism, stated under substitution) under WOR (with n − K ≥
    m) or WR (with n > K), the relation ``relation`` (resolved) substitution and white-box
    group privacy; ``None`` for any other combination, or when the hit law needs more than
    :data:`RELAXED_MAX_HITS` counts."""
    from ..mechanisms.gaussian import GaussianMechanism
    from ..mechanisms.laplace import LaplaceMechanism
    from ..profiles import GroupPrivacy
    from ..relations import NeighbouringRelation
    from ..sampling.schemes import WithoutReplacement, WithReplacement

    if group_size < 2 or type(scheme) not in (WithoutReplacement, WithReplacement):
        return None
    if relation is not NeighbouringRelation.SUBSTITUTE:
        return None
    if type(source) is GaussianMechanism:
        family = "gaussian"
    elif type(source) is LaplaceMechanism:
        family = "laplace"
    else:
        return None
    if not (source.relation is relation and source.theta > 0):
        return None
    if group_privacy is not None and \
            GroupPrivacy.parse(group_privacy) is GroupPrivacy.BLACK_BOX:
        return None
    if type(scheme) is WithoutReplacement and scheme.n - group_size < scheme.m:
        return None  # no reference batch of m records outside the group
    if scheme.n <= group_size:
        return None  # no record outside the group to draw the reference batch from
    law = scheme.group_multiplicity(group_size, relation)
    if law is None:
        return None
    try:
        return RelaxedGroupProfile(source.theta, law, relation, family)
    except UnsupportedCombinationError:
        return None


def _poisson_gaussian_ok(source, scheme, relation) -> bool:
    from ..mechanisms.gaussian import GaussianMechanism, GaussianProfile
    from ..relations import NeighbouringRelation
    from ..sampling.schemes import Poisson

    return (isinstance(scheme, Poisson) and relation is NeighbouringRelation.ADD_REMOVE
            and isinstance(source, (GaussianMechanism, GaussianProfile)) and source.theta > 0
            and getattr(source, "relation", relation) is relation)


def _poisson_laplace_ok(source, scheme, relation) -> bool:
    from ..mechanisms.laplace import LaplaceMechanism, LaplaceProfile
    from ..relations import NeighbouringRelation
    from ..sampling.schemes import Poisson

    return (isinstance(scheme, Poisson) and relation is NeighbouringRelation.ADD_REMOVE
            and isinstance(source, (LaplaceMechanism, LaplaceProfile)) and source.theta > 0
            and getattr(source, "relation", relation) is relation)


def tight_pairs_apply(source: Any, scheme: Any, relation: Any) -> bool:
    """Whether privamp has the tight split pairs for this combination (Poisson under add/remove
    of the Gaussian or the Laplace mechanism), whatever the group size. ``relation``: the
    scheme's resolved relation."""
    return scheme is not None and (_poisson_gaussian_ok(source, scheme, relation)
                                   or _poisson_laplace_ok(source, scheme, relation))


def tight_limit_note(events: Any, group_size: int) -> str | None:
    """Why a ledger whose lines have tight split pairs takes another bound: the sentence the
    CLI prints (and its JSON carries as ``group_bound_reason``), or ``None`` when no line
    passed :data:`TIGHT_MAX_GROUP`."""
    if group_size <= TIGHT_MAX_GROUP:
        return None
    if not any(tight_pairs_apply(ev.mechanism, ev.scheme, ev.effective_relation)
               for ev in events):
        return None
    return (f"the tight split pairs are composed for groups of at most {TIGHT_MAX_GROUP} "
            f"records (K + 1 compositions of (K + 1)-component mixtures); groups of "
            f"{group_size} take the coupling bound instead")


def check_group_reach(scheme: Any, group_size: int) -> int:
    """``group_size`` validated against what privamp can account under ``scheme``, before any
    work: a group larger than the dataset is refused where the scheme knows the dataset size n
    (WOR(n, m), WR(n, m), Poisson(rate, n=n)), and a group beyond :data:`MAX_SAMPLED_GROUP` under
    any sampling scheme. Without sampling nothing is checked here: the mechanism's own group
    profile costs the same for every K, and a group whose per-step loss passes the engine's
    range is refused by the engine at once (:class:`~privamp.errors.NumericalError`).

    Raises
    ------
    InvalidParameterError
        Naming ``group_size``, the largest K allowed and the value.
    """
    from ..errors import InvalidParameterError

    k = check_int("group_size", group_size, "[1, inf)")
    if scheme is None or k == 1:
        return k
    scheme._check_group_in_dataset(k)
    if k > MAX_SAMPLED_GROUP:
        raise InvalidParameterError(
            "group_size",
            f"at most {MAX_SAMPLED_GROUP} under sampling ({scheme!r}): each step's group curve "
            f"sums the mechanism's group profiles over up to K hit counts and its privacy loss "
            f"outgrows what the PLD engine represents well before K = 10^4", k)
    return k


def group_pair_curves(source: Any, scheme: Any, relation: Any, group_size: int,
                      group_privacy: Any = None) -> tuple[dict[str, PairCurve], str]:
    """The curves a group of ``group_size`` records is composed through, and the bound used.

    Parameters
    ----------
    source : Mechanism or PrivacyProfile
    scheme : SamplingScheme or None
    relation : NeighbouringRelation or None
        The relation on the whole dataset (the scheme's natural one by default).
    group_size : int
        K ≥ 1 records.
    group_privacy : GroupPrivacy, optional
        As for :func:`~privamp.pld.builders.pair_curves` (WR/MUST multiplicities; without
        sampling, how the mechanism's group profile is obtained).

    Returns
    -------
    (dict, str)
        The curves (the K + 1 splits of :func:`split_names`, or ``{"symmetric": curve}``) and
        ``"tight"``, ``"coupling"`` or ``"post-hoc"`` (module doc).

    Raises
    ------
    UnsupportedCombinationError
        For the batch samplers (random allocation, shuffling, truncated Poisson).

    >>> from privamp import GaussianMechanism
    >>> from privamp.sampling import Poisson
    >>> curves, bound = group_pair_curves(GaussianMechanism(2.0), Poisson(0.01), None, 3)
    >>> sorted(curves), bound
    (['add', 'mixed1', 'mixed2', 'remove'], 'tight')
    """
    from ..amplification.subsampling import amplify
    from ..mechanisms.base import Mechanism
    from ..profiles import GroupPrivacy
    from ..sampling.rounds import _BatchedScheme
    from .builders import pair_curves

    k = check_int("group_size", group_size, "[1, inf)")
    if k == 1:
        # one record: the PLD rules; "tight" only where the rule's pair is exact
        from .builders import PAIR_RULES

        curves = pair_curves(source, scheme, relation, group_privacy)
        rel = None if scheme is None else scheme.resolve(relation)[0]
        exact = (not isinstance(source, PairCurve)
                 and PAIR_RULES.find(source, scheme, rel, group_privacy).exact
                 and getattr(source, "exact_pair", False))
        return curves, "tight" if exact else "post-hoc"
    if scheme is None:
        profile = source.profile() if isinstance(source, Mechanism) else source
        method = None if group_privacy is None else GroupPrivacy.parse(group_privacy)
        white = (None if method is GroupPrivacy.BLACK_BOX else profile._white_box_group(k))
        grp = white if white is not None else profile.group(k, GroupPrivacy.BLACK_BOX)
        return {"symmetric": ProfileCurve(grp)}, group_bound(source, None, None, group_privacy)
    if isinstance(scheme, _BatchedScheme):
        raise UnsupportedCombinationError(
            f"group_size={k} does not apply to {scheme!r}: the sampler ties the records of a "
            "round together and privamp has no group pair for it (use group_size=1)")
    check_group_reach(scheme, k)
    rel = scheme.resolve(relation)[0]
    tight = k <= TIGHT_MAX_GROUP
    if tight and _poisson_gaussian_ok(source, scheme, rel):
        lower = getattr(source, "theta_lower", source.theta)
        curves = {}
        for name in split_names(k):
            a, b = _split_of(name, k)
            curves[name] = GroupGaussianCurve(source.theta, scheme.rate, a, b, theta_lower=lower)
        return curves, "tight"
    if tight and _poisson_laplace_ok(source, scheme, rel):
        from .group_laplace import laplace_split_curves

        return laplace_split_curves(source, scheme.rate, k), "tight"
    amplified = amplify(source, scheme, rel, group_privacy)
    post_hoc = amplified.group(k, GroupPrivacy.BLACK_BOX)
    if scheme.group_multiplicity(k, rel) is None:
        return {"symmetric": ProfileCurve(post_hoc)}, "post-hoc"
    coupled = amplify(source, scheme, rel, group_privacy, group_size=k)
    parts = [coupled, post_hoc]
    relaxed = relaxed_group_profile(source, scheme, rel, k, group_privacy)
    if relaxed is not None:
        parts.append(relaxed)
    return {"symmetric": ProfileCurve(MinimumProfile(parts))}, "coupling"


def _realized_curve_class(source, scheme, relation):
    """The realizable pair class for this combination (the Gaussian's or the Laplace's), or
    ``None``: WOR or WR under substitution, or Poisson under add/remove, the mechanism's own
    relation the same. Only a mechanism: a profile given as such bounds some mechanism from
    above, and the query of the construction need not be one it covers."""
    from ..mechanisms.gaussian import GaussianMechanism
    from ..mechanisms.laplace import LaplaceMechanism
    from ..relations import NeighbouringRelation
    from ..sampling.schemes import Poisson, WithoutReplacement, WithReplacement

    if isinstance(scheme, (WithoutReplacement, WithReplacement)):
        scheme_relation = NeighbouringRelation.SUBSTITUTE
    elif isinstance(scheme, Poisson):
        scheme_relation = NeighbouringRelation.ADD_REMOVE
    else:
        return None
    if not (relation is scheme_relation
            and getattr(source, "theta", 0.0) > 0
            and getattr(source, "relation", relation) is relation):
        return None
    if isinstance(source, GaussianMechanism):
        return RealizedGroupCurve
    if isinstance(source, LaplaceMechanism):
        from .group_laplace import RealizedLaplaceGroupCurve

        return RealizedLaplaceGroupCurve
    return None


def realizable_group_curves(source: Any, scheme: Any, relation: Any,
                            group_size: int) -> dict[str, PairCurve] | None:
    """Pairs whose composition bounds the privacy of a group of ``group_size`` records from
    below: WOR or WR under substitution, or Poisson under add/remove, of the Gaussian or the
    Laplace mechanism (module doc, "A lower end for WOR and WR groups" and "Poisson groups
    beyond the tight pairs"), or ``None`` for any other combination. A hit law kept to a
    truncated support (WR with more than 20,000 draws) has its missing mass moved down to its
    heaviest count, which only lowers the pair.

    The orientations are ``"remove"`` (t = 1: Σ_j w_j N(jθ) against N(0)), ``"add"`` (its
    reverse) and, under substitution, ``"mixed1"`` (t = 0: Σ_j w_j N(jθ/2) against
    Σ_j w_j N(−jθ/2)), each a pair of datasets that stays the same for every step, so each is
    composed over the whole ledger. Under Poisson these are valid for every K, but the tight
    split pairs (K ≤ :data:`TIGHT_MAX_GROUP`) carry a lower end of their own, at least as
    large; the accountant uses these beyond them.

    >>> from privamp import GaussianMechanism
    >>> from privamp.sampling import WOR
    >>> curves = realizable_group_curves(GaussianMechanism(2.0, relation="substitute"),
    ...                                  WOR(100, 10), None, 3)
    >>> sorted(curves), curves["remove"].hits
    (['add', 'mixed1', 'remove'], 3)
    """
    from ..relations import NeighbouringRelation

    k = check_int("group_size", group_size, "[1, inf)")
    if scheme is None or k == 1:
        return None
    rel = scheme.resolve(relation)[0]
    curve = _realized_curve_class(source, scheme, rel)
    if curve is None:
        return None
    law = scheme.group_multiplicity(k, rel)
    if law is None:
        return None
    lw = np.asarray(law.log_pmf, dtype=float)
    if law.log_tail > -math.inf:
        # a law kept to a truncated support (WR with more than EXACT_SUPPORT draws): its
        # missing mass, at most e^{log_tail} (a Chernoff bound, ≤ 1e-300), is beyond the support
        # and so at or above any clip J chosen below; it is moved to the heaviest count (below
        # J, or at or above it and then lumped into J with it, where the clipped law has it
        # anyway). A smaller shift of that mass only lowers every D_α (the convex-order step
        # above), so the pair stays below the realized one; the bound's own excess over the
        # true missing mass is at most 1e-300 on a weight of at least 1/(support size) —
        # inside the mixtures' 1e-12 relative allowance.
        top = int(np.argmax(lw))
        lw = lw.copy()
        lw[top] = float(np.logaddexp(lw[top], law.log_tail))
    # the count clipped at J: the smallest J whose tail P(hits ≥ J) is below
    # _REALIZED_TAIL, at most REALIZED_MAX_HITS (any J is realizable; a larger J is tighter;
    # this running sum only chooses J)
    tails = np.logaddexp.accumulate(lw[::-1])[::-1]  # log P(hits ≥ j)
    small = np.flatnonzero(tails[1:] <= math.log(_REALIZED_TAIL)) + 1
    hits = int(min(small[0] if small.size else lw.size - 1, REALIZED_MAX_HITS, lw.size - 1))
    if hits < 1:
        return None
    clipped = lw[:hits + 1].copy()
    if hits < lw.size - 1:
        # the lumped weight within lse_error (a few tens of ulp: terms of one sign, summed
        # pairwise), not the running log-add-exp above (an ulp or two per term added)
        clipped[hits] = float(logsumexp_signed(lw[hits:])[0])
    theta = float(getattr(source, "theta_lower", source.theta))
    pairs = {"remove": curve(clipped, theta, 0.0, "remove"),
             "add": curve(clipped, 0.0, theta, "add")}
    if rel is NeighbouringRelation.SUBSTITUTE:
        half = theta / 2  # exact
        pairs["mixed1"] = curve(clipped, half, half, "mixed1")
    return pairs


def group_bound(source: Any, scheme: Any, relation: Any, group_privacy: Any = None,
                group_size: int = 2) -> str:
    """``"tight"``, ``"coupling"`` or ``"post-hoc"``: which bound :func:`group_pair_curves`
    uses for groups of ``group_size`` > 1 records (module doc), without building the curves.
    The tight split pairs take groups of at most :data:`TIGHT_MAX_GROUP` records; larger
    groups of the same combination take the coupling bound."""
    from ..mechanisms.base import Mechanism
    from ..profiles import GroupPrivacy

    if scheme is None:
        if group_privacy is not None and GroupPrivacy.parse(group_privacy) is \
                GroupPrivacy.BLACK_BOX:
            return "post-hoc"
        # tight: the white-box group profile of a mechanism whose profile is its exact pair
        # (Gaussian, Laplace: sensitivity kΔ; randomized response: the same pair); a white-box
        # bound of anything else (e.g. a diffusion's amplified profile) is valid, not tight
        if not (isinstance(source, Mechanism) and source.exact_pair):
            return "post-hoc"
        return "tight" if source.profile()._white_box_group(2) is not None else "post-hoc"
    from ..sampling.rounds import _BatchedScheme

    rel = scheme.resolve(relation)[0]
    if tight_pairs_apply(source, scheme, rel) and group_size <= TIGHT_MAX_GROUP:
        return "tight"
    if not isinstance(scheme, _BatchedScheme) and scheme.group_multiplicity(2, rel) is not None:
        return "coupling"
    return "post-hoc"


# ---- group privacy after composition ----------------------------------------------------------


def _vadhan_ratio_down(u: np.ndarray, k: int) -> np.ndarray:
    """``(e^u − 1)/(e^{ku} − 1)`` rounded down (1/k at u = 0): Vadhan's factor inverted."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        num = np.expm1(u)
        den = np.expm1(k * u)
        r = np.where(u > 0, num / den, 1.0 / k)
    # expm1 within 1 ulp each and the division 1 more; the rounding of the argument k·u (½ ulp
    # of k·u) moves expm1(k·u) by up to k·u·ulp relative (d log expm1(x)/dx ≤ 1 + 1/x, times
    # x·ulp/2): a slack of (8 + 2(k + 1)u) ulp
    return np.where(np.isfinite(r), r * (1 - (8 + 2 * (k + 1) * u) * ULP), 0.0)


def _vadhan_factor_up(u: np.ndarray, k: int) -> np.ndarray:
    """``(e^{ku} − 1)/(e^u − 1)`` rounded up (k at u = 0)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        f = np.where(u > 0, np.expm1(k * u) / np.expm1(u), float(k))
    # as in _vadhan_ratio_down: the argument k·u is rounded too
    return np.where(np.isnan(f), np.inf, f * (1 + (8 + 2 * (k + 1) * u) * ULP))


#: evaluations of the one-record ε in :func:`composed_group_epsilon`, the upward nudge of an
#: extrapolated candidate, and the relative width at which the search stops
_AFTER_STEPS = 16
_AFTER_NUDGE = 2e-4
_AFTER_WIDTH = 5e-4


def composed_group_epsilon(events, group_size: int, delta: float, eps_max: float = math.inf,
                           **kw) -> float:
    """ε for groups of ``group_size`` records from the *composed* one-record guarantee: group
    privacy (Vadhan 2017, Lemma 2.2) applied once to the whole composition, which is itself a
    mechanism, instead of to each step. If the composition is (u, δ₁(u))-DP then for K-neighbours
    it is (Ku, δ₁(u)(e^{Ku} − 1)/(e^u − 1))-DP, so every u with

        δ₁(u) ≤ τ(u) = δ (e^u − 1)/(e^{Ku} − 1)

    certifies ε = Ku. With g(u) = ε₁(τ(u)), ε₁ the certified upper end of the one-record
    ledger's ε (:func:`~privamp.pld.engine.pld_epsilon`), g(u) ≤ u implies δ₁(u) ≤
    δ₁(g(u)) ≤ τ(u) (δ₁ non-increasing): u is certified, and only such u are returned. The
    search starts at u = ε₁(δ/K) (τ ≤ δ/K), moves up by the fixed point of the secant through
    the last two uncertified points (g grows with u; plain iteration u ← g(u) where the secant
    is steeper than 1), nudged up by 2e-4, then bisects between the largest uncertified and the
    smallest certified u to 0.05 %; at most 16 evaluations of ε₁, ``inf`` if none certifies,
    once Ku passes ``eps_max`` (the bound to beat), or when two secants in a row are steeper
    than 1 (g(u) − u grows: the iteration diverges). τ is rounded down and Ku up. Valid under any
    relation (a chain of K neighbours). After many steps it can beat Vadhan's lemma applied to
    each step, or lose to it (WOR(60000, 600), σ = 2, 1000 steps, K = 8: 8.37 against 7.56):
    the accountant takes the smaller, and it answers where the per-step bound overflows."""
    from .engine import pld_epsilon

    k = check_int("group_size", group_size, "[2, inf)")

    def g(u: float) -> float:
        tau = float(delta * _vadhan_ratio_down(np.array([u]), k)[0])
        if not tau > 0:
            return math.inf
        return pld_epsilon(events, tau, lower=False, **kw).bracket.upper

    u = pld_epsilon(events, delta / k, lower=False, **kw).bracket.upper
    lo, hi = None, None
    pts: list[tuple[float, float]] = []
    steep = 0  # consecutive secants of slope ≥ 1: g(u) − u grows, no fixed point ahead
    for _ in range(_AFTER_STEPS):
        if not math.isfinite(u) or (hi is None and k * u >= eps_max):
            break
        v = g(u)
        if v <= u:
            hi = u
        else:
            lo = u
            pts.append((u, v))
        if hi is not None:
            if lo is None or hi - lo <= _AFTER_WIDTH * hi:
                break
            u = 0.5 * (lo + hi)
            continue
        if not math.isfinite(v):
            break
        nxt = v
        if len(pts) >= 2:
            (u1, v1), (u2, v2) = pts[-2:]
            slope = (v2 - v1) / (u2 - u1) if u2 != u1 else math.inf
            if slope < 1:
                steep = 0
                nxt = max(v2, (v2 - slope * u2) / (1 - slope))
            else:
                steep += 1
                if steep >= 2:
                    break
        u = nxt * (1 + _AFTER_NUDGE)
    if hi is None or k * hi >= eps_max:
        return math.inf
    return float(k * hi * (1 + 4 * ULP))


def composed_group_delta(events, group_size: int, eps: float, **kw) -> float:
    """δ(ε) for groups of ``group_size`` from the composed one-record guarantee (see
    :func:`composed_group_epsilon`): δ₁(u)(e^{Ku} − 1)/(e^u − 1) at u = ε/K rounded down (Ku ≤
    ε, δ₁ non-increasing), δ₁ the certified upper end (:func:`~privamp.pld.engine.pld_delta`),
    the factor rounded up."""
    from .engine import pld_delta

    k = check_int("group_size", group_size, "[2, inf)")
    u = float(eps) / k * (1 - 4 * ULP)
    one = pld_delta(events, u, **kw).bracket.upper
    val = one * float(_vadhan_factor_up(np.array([u]), k)[0]) * (1 + 4 * ULP)
    return min(val, 1.0)
