"""Privacy amplification by subsampling: the amplified privacy profile of M ∘ S.

One generic computation covers every scheme analysed through the multiplicity of the differing
record (Balle, Barthe, Gaboardi 2018 "BBG", Theorems 8–11 and Table 1; Zhao & Liu 2023 "MUST",
Theorem 5 and Corollary 6)::

    ε' = log(1 + η (e^ε − 1)),       δ'(ε') ≤ Σ_{k ≥ 1} P(K = k) · δ_k(ε)  (+ truncated tail mass)

with K the number of copies of the differing record in the subsample, δ_k the group-privacy
profile of M (white-box where the mechanism knows it, black-box otherwise), and η:

* P(K ≥ 1) for Poisson (Thm 8), WOR (Thm 9), WR (Thms 10, 11), MUST.OW, MUST.WO, MUST.WW
  (Thm 5, Cor 6);
* P(the record is selected by the first stage) for a general :class:`~privamp.sampling.StageChain`
  (privamp's first-stage coupling bound; see docs/architecture.md for the proof).

Poisson subsampling under substitution is Theorem 14 of BBG, which is not of that form; it is
:class:`PoissonSubstitutionProfile` (with the extended profile at negative ε_k: catalogue E3).

Safety: η is rounded up and the inverse map ε'→ε rounded down (both make δ' larger); the
multiplicity pmf is computed to a few ulp and its truncated tail is added as if δ_k = 1; the sum is
formed in log space and raised by a bound on its rounding error. Lower values (of the theorem's
formula, :meth:`~privamp.profiles.PrivacyProfile.log_delta_lower`) take every one of these the
other way: η rounded down, the map rounded up, the group profiles' lower values, no tail mass.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .._numerics import (
    ULP,
    amplify_eps,
    deamplify_eps,
    log1mexp,
    logsumexp_signed,
    lse_error,
    round_down_log,
    round_up_log,
)
from .._validation import check_enum, check_int, check_real_array
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..mechanisms.base import Mechanism
from ..profiles import GroupPrivacy, PrivacyProfile, log_delta_rows, log_q_tail_rows
from ..relations import NeighbouringRelation
from ..sampling.multiplicity import EXACT_SUPPORT, binomial_log_tail_bound
from ..sampling.schemes import Poisson, SamplingScheme

__all__ = [
    "AmplifiedProfile",
    "PoissonSubstitutionProfile",
    "amplify",
    "amplify_eps",
    "deamplify_eps",
]

R = NeighbouringRelation.ADD_REMOVE
#: Theorem 14 with at most this many shifts is summed term by term; with more, tabulated
_DIRECT_SHIFTS = 48
#: the multiplicity sum evaluates about this many (term, point) values per call of the group
#: profiles (see AmplifiedProfile._log_sum)
_BLOCK_VALUES = 1 << 14
S = NeighbouringRelation.SUBSTITUTE


# the ε map of advanced joint convexity (BBG Theorem 2), ε' = log(1 + η(e^ε − 1)), and its
# inverse are the toolkit's amplify_eps / deamplify_eps (re-exported here; one rounding policy
# with the mixing conditions)


# -------------------------------------------------------------------------------------------
# the generic multiplicity bound
# -------------------------------------------------------------------------------------------


class AmplifiedProfile(PrivacyProfile):
    """Upper bound on the privacy profile of M ∘ S from the multiplicity view (see module doc).

    ``delta(eps')`` maps each target ε' back to ε = log(1 + (e^{ε'} − 1)/η) and returns
    ``Σ_k P(K = k) δ_k(ε)`` (+ tail); :meth:`points` gives the (ε, δ(ε), ε', δ'(ε')) table for
    base ε values, the form of the command-line contract.

    Attributes
    ----------
    base : PrivacyProfile
        Profile of M under the base relation.
    scheme : SamplingScheme
    relation : NeighbouringRelation
        The relation the amplified profile holds for (on the full dataset).
    eta : float
        The η of the ε map (rounded up).
    theorem : str
        Which result the bound comes from.
    """

    def __init__(self, base: PrivacyProfile, scheme: SamplingScheme,
                 relation: NeighbouringRelation, group_privacy: GroupPrivacy | None = None,
                 group_size: int = 1):
        self.base = base
        self.scheme = scheme
        self.relation = relation
        self.group_privacy = group_privacy
        self.group_size = group_size = check_int("group_size", group_size, "[1, inf)")
        self.theorem = scheme.theorem(relation)
        if group_size == 1:
            self.multiplicity = scheme.multiplicity()
            self.eta = scheme.amplification_eta
            #: η rounded down (lower values)
            self.eta_lower = scheme.amplification_eta_lower
        else:
            # a group of K records (privamp.pld.group): K counts the draws that hit the group
            mult = scheme.group_multiplicity(group_size, relation)
            if mult is None:
                raise UnsupportedCombinationError(
                    f"{scheme!r} under {relation.value!r} has no coupling bound for groups of "
                    f"{group_size} records (privamp.pld.group uses the post-hoc bound there)")
            self.multiplicity = mult
            self.eta, self.eta_lower = mult.eta, mult.eta_lower
            self.theorem += f", groups of {group_size} records (coupling of the group's draws)"
        self.certified = scheme.certified and getattr(base, "certified", True)
        lw = self.multiplicity.log_pmf
        self._ks = np.flatnonzero(lw[1:] > -np.inf) + 1
        self._log_w = lw[self._ks]

    @property
    def is_curve(self) -> bool:
        """δ' is convex in e^{ε'} when every group profile is a curve (an affine change of
        variable and a positive sum keep convexity); not otherwise (black-box groups)."""
        return all(grp.is_curve for grp in self._groups)

    @functools.cached_property
    def _groups(self) -> list[PrivacyProfile]:
        return [self.base.group(int(k), self.group_privacy) for k in self._ks]

    @functools.cached_property
    def _by_weight(self):
        """Terms in decreasing weight, and log of the weight left after each (tail included)."""
        order = np.argsort(-self._log_w, kind="stable")
        log_w = self._log_w[order]
        groups = [self._groups[i] for i in order]
        left = np.empty(log_w.size + 1)
        left[-1] = self.multiplicity.log_tail
        for i in range(log_w.size - 1, -1, -1):
            left[i] = np.logaddexp(left[i + 1], log_w[i])
        return log_w, groups, left

    def _log_sum(self, eps: np.ndarray, lower: bool = False, rows=log_delta_rows) -> np.ndarray:
        """log Σ_k w_k δ_k(ε) + tail, for base ε values (1-D array); with ``lower``, a lower
        bound on log Σ_k w_k δ_k(ε). ``rows``: the per-group values (``log_q_tail_rows``: the
        same sum of the groups' Q-tails, each also at most 1, for :meth:`_log_q_tail`).

        Terms are added in decreasing weight; a point stops as soon as the weight still to come
        is below 1e-12 (lower side: 1e-17) of its sum so far. The upper side adds that weight in
        full (δ_k ≤ 1): an upper bound within 1e-12 of the sum, at a cost of a few terms per point
        instead of one per multiplicity. The lower side uses the group profiles' lower values,
        drops the remaining weight (every term is ≥ 0) and the tail mass, and subtracts the
        rounding margin the upper side adds.

        The group profiles are evaluated in blocks of consecutive terms on the points still
        running at the block's start, one :func:`log_delta_rows` call per block (one broadcast
        evaluation for the Gaussian and Laplace groups; one term per block when there are many
        points, more when there are few); the terms are then
        added one at a time with the per-point stop above, so every point sums exactly the terms
        it summed when each group was evaluated alone (a point that stops inside a block leaves
        the rest of its block's values unused).
        """
        log_w, groups, left = self._by_weight
        acc = np.full(eps.size, -np.inf)
        active = np.arange(eps.size)
        # the upper side adds what is left in full: a looser stop costs 1e-12 relative; the
        # lower side drops it, and the PLD engine's lower side reads differences of the curve
        # at fine spacings, so it keeps 1e-17
        rel = math.log(1e-17 if lower else 1e-12)
        t, block = 0, 1
        while t < len(groups) and active.size:
            # about _BLOCK_VALUES values per call (at least one term; the block at most doubles
            # from one call to the next): many points take one term per call, as cache-sized
            # arrays, few points many terms per call (the per-call overhead dominates there)
            block = min(2 * block, max(1, -(-_BLOCK_VALUES // active.size)))
            stop = min(len(groups), t + block)
            values = rows(groups[t:stop], eps[active], lower)
            cols = None  # columns of ``values`` still running (None: all)
            for j in range(stop - t):
                idx = active if cols is None else active[cols]
                if idx.size == 0:
                    break
                row = values[j] if cols is None else values[j, cols]
                with np.errstate(invalid="ignore"):
                    acc[idx] = np.logaddexp(acc[idx], log_w[t + j] + row)
                done = left[t + j + 1] <= acc[idx] + rel
                if np.any(done):
                    if not lower:
                        fin = idx[done]
                        acc[fin] = np.logaddexp(acc[fin], left[t + j + 1])
                    keep = ~done
                    cols = np.flatnonzero(keep) if cols is None else cols[keep]
            if cols is not None:
                active = active[cols]
            t = stop
        # pmf entries carry a few ulp of relative error each; the log-add-exps a few more each
        margin = (64 + 4 * len(groups)) * ULP
        if lower:
            with np.errstate(invalid="ignore"):
                return np.minimum(round_down_log(acc - margin, ulps=8), 0.0)
        if active.size:
            acc[active] = np.logaddexp(acc[active], left[-1])
        return np.minimum(round_up_log(acc, margin), 0.0)

    def _log_delta(self, eps_prime):
        eps = np.atleast_1d(deamplify_eps(eps_prime, self.eta))
        return self._log_sum(eps)

    def _log_delta_lower(self, eps_prime):
        # the theorem's ε = log(1 + (e^{ε'} − 1)/η) with the exact η: η rounded down and the
        # map rounded up give an ε at least as large, where every δ_k is at most as large
        eps = np.atleast_1d(deamplify_eps(eps_prime, self.eta_lower, up=True))
        return self._log_sum(eps, lower=True)

    @functools.cached_property
    def _q_tail_known(self) -> bool:
        """Whether every group profile has a closed-form Q-tail (probed once)."""
        return bool(self._groups) and log_q_tail_rows(self._groups, np.ones(1)) is not None

    def _log_q_tail(self, eps_prime, lower):
        """Bounds on log(−dδ'/dα') (:meth:`PrivacyProfile._log_q_tail`). With α = e^ε =
        1 + (α' − 1)/η, δ'(α') = Σ_k w_k δ_k(α), so −dδ'/dα' = (1/η) Σ_k w_k Q_k(L_k > ε): the
        multiplicity sum of the groups' Q-tails, each within [0, 1] as δ_k is (the weight left
        after the terms summed, and the tail, count in full on the upper side and not on the
        lower). The exact η lies in [eta_lower, eta] and Q_k falls as ε grows: the upper bound
        takes ε from ``eta`` (rounded down) and divides by ``eta_lower``, the lower bound ε from
        ``eta_lower`` (rounded up) and divides by ``eta``. ``None`` when a group has no closed
        form (:func:`~privamp.profiles.log_q_tail_rows`)."""
        if not self._q_tail_known:
            return None
        eps_prime = np.asarray(eps_prime, dtype=float)
        if lower:
            if not self.eta > 0.0:
                return np.full(eps_prime.shape, -np.inf)
            eps = np.atleast_1d(deamplify_eps(eps_prime, self.eta_lower, up=True))
            total = self._log_sum(eps, lower=True, rows=log_q_tail_rows)
            with np.errstate(invalid="ignore"):
                return np.minimum(round_down_log(total - math.log(self.eta), ulps=8), 0.0)
        if not self.eta_lower > 0.0:
            return np.zeros(eps_prime.shape)  # the slope is only known to be in [−1, 0]
        eps = np.atleast_1d(deamplify_eps(eps_prime, self.eta))
        total = self._log_sum(eps, rows=log_q_tail_rows)
        return np.minimum(round_up_log(total - math.log(self.eta_lower), ulps=8), 0.0)

    def _mgf_tail(self, s, start):
        """``∫_T^∞ e^{sε'} δ'(ε') dε' ≤ Σ_k w_k ∫_{ε(T)}^∞ e^{sε} δ_k(ε) dε``: with
        ``ε = log(1 + (e^{ε'} − 1)/η)`` one has ε' ≤ ε and dε'/dε ≤ 1, so each term is bounded by
        the group profile's own tail; ``None`` when a group profile has no tail bound or the
        multiplicity law has mass beyond its exact support (whose δ would count as 1)."""
        if self.multiplicity.log_tail > -math.inf:
            return None
        base_start = float(np.atleast_1d(deamplify_eps(start, self.eta))[0])
        total = 0.0
        for lw, grp in zip(self._log_w, self._groups, strict=True):
            tail = grp._mgf_tail(s, base_start)
            if tail is None:
                return None
            total += math.exp(lw) * tail
        return total * (1 + 16 * ULP) if math.isfinite(total) else math.inf

    def curve_kinks(self):
        """δ'(ε') = Σ_k w_k δ_k(ε) with e^ε affine in e^{ε'}: where every group profile is
        piecewise affine in α with the same positive kinks K, δ' is piecewise affine with kinks
        at ``amplify_eps(K)``, and its symmetric extension adds their negatives and 0."""
        sets = [grp.curve_kinks() for grp in self._groups]
        if not sets or any(k is None for k in sets):
            return None
        first = np.unique(np.abs(sets[0][0]))
        if any(not np.array_equal(np.unique(np.abs(k[0])), first) for k in sets[1:]):
            return None
        err = max(k[1] for k in sets)
        pos = np.atleast_1d(amplify_eps(first, self.eta))
        return (np.concatenate([-pos, [0.0], pos]),
                err + 8 * ULP * (1 + float(np.max(pos, initial=0.0))))

    def curve_atoms(self):
        """The same map on the group profiles' atoms, also beside a continuous part (Laplace
        under WOR: ±amplify_eps(θ) and 0; under WR one pair per multiplicity): a hint for the
        PLD grid (:meth:`PrivacyProfile.curve_atoms`)."""
        sets = [grp.curve_atoms() for grp in self._groups]
        if not sets:
            return None
        if any(a is None for a in sets):
            # the symmetric extension still has its kink at 0 (slopes scale by 1/η on one
            # side only): the atom where both laws agree, mass about 1 − η
            return np.array([0.0]) if self.eta < 1 else None
        pos = np.unique(np.abs(np.concatenate(sets)))
        pos = np.atleast_1d(amplify_eps(pos[pos > 0], self.eta))
        return np.concatenate([-pos, [0.0], pos])

    @property
    def has_pure_epsilon(self) -> bool:
        """Whether the profile reaches 0 at a finite ε: the largest multiplicity's group profile
        has pure DP (or no record is ever drawn). Cheap — :attr:`pure_epsilon` also places the
        threshold, by evaluations of the sum (a tenth of a second for black-box groups, once
        per ledger line checked by the RDP backend)."""
        k_max = self.multiplicity.max_multiplicity
        if k_max is None:
            return False
        return k_max == 0 or math.isfinite(self.base.group(k_max, self.group_privacy).pure_epsilon)

    @property
    def pure_epsilon(self) -> float:
        k_max = self.multiplicity.max_multiplicity
        if k_max is None or k_max == 0:
            return 0.0 if k_max == 0 else math.inf
        pure = self.base.group(k_max, self.group_privacy).pure_epsilon
        if not math.isfinite(pure):
            return math.inf
        # the ε map is rounded up and its inverse down: nudge the threshold until the profile,
        # as computed, is exactly zero there (a few ulp at most)
        cand = float(amplify_eps(pure, self.eta))
        for _ in range(64):
            if self._log_delta(np.array([cand]))[0] == -math.inf:
                return cand
            cand = cand * (1 + 64 * ULP) + 1e-300
        return math.inf  # pragma: no cover - the nudge converges in a few steps

    def points(self, eps: Any) -> dict[str, np.ndarray]:
        """For base ε values: ``eps``, ``delta`` = δ(ε), ``eps_amplified`` = ε' (rounded up) and
        ``delta_amplified`` = Σ_k P(K = k) δ_k(ε) ≥ δ_{M∘S}(ε')."""
        e = check_real_array("eps", eps, "[0, inf]").reshape(-1)
        with np.errstate(under="ignore"):
            return {
                "eps": e,
                "delta": np.atleast_1d(self.base.delta(e)),
                "eps_amplified": np.atleast_1d(amplify_eps(e, self.eta)),
                "delta_amplified": np.exp(self._log_sum(e)),
            }

    def __repr__(self) -> str:
        return f"AmplifiedProfile({self.base!r} under {self.scheme!r}, {self.relation.value})"


# -------------------------------------------------------------------------------------------
# Theorem 14: Poisson subsampling under substitution
# -------------------------------------------------------------------------------------------


class PoissonSubstitutionProfile(PrivacyProfile):
    """BBG Theorem 14: Poisson(γ) on datasets of size n, substitution relation::

        δ'(ε') ≤ γβ δ(ε) + γ(1 − β)( Σ_{k=1}^{n−1} γ̃_k δ(ε_k) + γ̃_n ),
        β = e^{ε'−ε},  ε_k = ε + log((γ/(1−γ))(n/k − 1)),  γ̃_k = Bin(k − 1; n − 1, γ).

    ε_k can be negative: δ is then the extended profile 1 − e^{ε_k} + e^{ε_k} δ(−ε_k)
    (catalogue erratum E3; clipping ε_k at 0 is not justified by the proof). For large n the sum
    is restricted to a window of k holding all but 1e-300 of the γ̃ mass (Chernoff bounds); the
    omitted mass counts with δ = 1.
    """

    #: the bound can increase with ε' (n = 10, Gaussian σ = 1, γ = 0.01: on ε' ∈ [0, 0.002]):
    #: an upper bound on a profile, not a profile, so compositions get no lower end
    is_curve = False

    def __init__(self, base: PrivacyProfile, scheme: Poisson):
        if scheme.n is None:
            raise InvalidParameterError(
                "n", "the dataset size (Theorem 14 for Poisson subsampling under substitution "
                "depends on it)", None)
        self.base = base
        self.scheme = scheme
        self.relation = S
        self.group_privacy = None
        self.eta = scheme.rate
        self.theorem = scheme.theorem(S)
        self._setup_window()

    def _setup_window(self) -> None:
        n, g = self.scheme.n, self.scheme.rate
        trials = n - 1
        if n <= EXACT_SUPPORT or g >= 1.0:
            lo, hi = 0, trials
            omitted = -math.inf
        else:
            mean = trials * g
            sd = math.sqrt(trials * g * (1 - g)) + 1.0
            hi = min(trials, int(mean + 40 * sd) + 1)
            lo = max(0, int(mean - 40 * sd) - 1)
            tails = [binomial_log_tail_bound(hi, trials, g),  # P[X > hi]
                     binomial_log_tail_bound(trials - lo, trials, 1 - g)]  # P[X < lo]
            tails = [t for t in tails if t > -math.inf]
            omitted = float(logsumexp_signed(np.array(tails))[0]) if tails else -math.inf
        from .._numerics import binomial_logpmf

        j = np.arange(lo, hi + 1, dtype=float)  # j = k − 1
        self._k = j + 1.0
        self._log_gt = np.asarray(binomial_logpmf(j, trials, g), dtype=float)
        self._log_omitted = omitted
        # ε_k − ε = log(γ/(1 − γ)) + log((n − k)/k) for k < n (n − k exact), rounded down by a
        # bound on its rounding error for the upper values (a smaller shift only raises δ(ε_k)),
        # up for the lower values (``_shifts_up``: a larger shift only lowers it)
        inner = self._k < n
        k_in = self._k[inner]
        if g < 1.0 and k_in.size:
            lg, l1g = math.log(g), math.log1p(-g)
            lr = np.log((n - k_in) / k_in)
            centre = lg - l1g + lr
            margin = 4 * ULP * (abs(lg) + abs(l1g) + np.abs(lr))
            self._shifts, self._shifts_up = centre - margin, centre + margin
        else:
            self._shifts = self._shifts_up = np.empty(0)
        self._log_w_in = self._log_gt[inner]
        # constants of the inner sum: γ̃_n · 1 (when k = n is in the window) and the omitted mass
        consts = [*self._log_gt[~inner], omitted]
        self._log_const = float(np.logaddexp.reduce(np.array(consts))) if consts else -math.inf
        # many shifts: tabulate the sum (see _tables); few: term by term
        self._table = None
        if self._shifts.size > _DIRECT_SHIFTS:
            from ._tables import ShiftedSum  # deferred: only Theorem 14 needs it

            self._table = ShiftedSum(self.base._log_delta_extended, self._shifts, self._log_w_in)

    def _log_inner_sum(self, eps):
        """Upper values of ``log(Σ_{k<n} γ̃_k δ(ε_k) + γ̃_n + omitted mass)`` at base ε."""
        out = np.full(eps.shape, -np.inf)
        direct = np.ones(eps.shape, dtype=bool)
        if self._table is not None:
            tab = self._table.covers(eps)
            if np.any(tab):
                out[tab] = self._table.log_upper(eps[tab])
            direct = ~tab
        idx = np.flatnonzero(direct)
        # term by term, in chunks of points so that (shifts × points) stays below 2^22 floats
        step = max(1, (1 << 22) // max(1, self._shifts.size))
        for c0 in range(0, idx.size, step):
            sel = idx[c0:c0 + step]
            e = eps[sel]
            with np.errstate(invalid="ignore"):
                e_k = e[None, :] + self._shifts[:, None]
                e_k = np.where(np.isfinite(e_k), e_k - ULP * (np.abs(e_k) + 1.0), e_k)
            terms = self._log_w_in[:, None] + self.base._log_delta_extended(
                e_k.reshape(-1)).reshape(e_k.shape)
            if terms.size:
                lse = logsumexp_signed(terms, axis=0)[0]
                out[sel] = lse + lse_error(terms.shape[0], lse)  # its own rounding, upward
            else:
                out[sel] = -np.inf
        return np.logaddexp(out, self._log_const)

    def _log_delta(self, eps_prime):
        g = self.scheme.rate
        if g >= 1.0:
            return self.base._log_delta(eps_prime)
        eps_prime = np.atleast_1d(np.asarray(eps_prime, dtype=float))
        # the exact ε(ε') lies in [eps, eps_hi] (the inverse map rounded down and up): δ and the
        # inner sum are taken at eps (they are non-increasing), β = e^{ε'−ε} at the end that
        # makes each term largest — its largest value in γβδ, its smallest in γ(1 − β)(…)
        eps = np.atleast_1d(deamplify_eps(eps_prime, g))
        eps_hi = np.atleast_1d(deamplify_eps(eps_prime, g, up=True))
        # log β ≤ 0; at ε' = ∞, β = e^{−ε} + γ(1 − e^{−ε}) → γ (the bound's limit, valid at ∞
        # because δ' is non-increasing)
        inf = np.isposinf(eps_prime)
        with np.errstate(invalid="ignore"):
            x_hi = eps_prime - eps
            x_lo = eps_prime - eps_hi
            log_beta = np.where(inf, math.log(g), np.minimum(x_hi + ULP * np.abs(x_hi), 0.0))
            log_beta_lo = np.where(inf, math.log(g),
                                   np.minimum(x_lo - ULP * np.abs(x_lo), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_1mb = log1mexp(log_beta_lo)  # log(1 − β) at the smallest β
        log_g = math.log(g)
        first = log_g + log_beta + self.base._log_delta(eps)
        inner_sum = self._log_inner_sum(eps)
        second = log_g + log_1mb + inner_sum
        total = np.logaddexp(first, np.where(np.isneginf(log_1mb), -np.inf, second))
        return np.minimum(round_up_log(total, 64 * ULP), 0.0)

    def _log_delta_lower(self, eps_prime):
        """Lower bound on Theorem 14's right-hand side at ε' (exact ε(ε'), β, ε_k, weights).

        The exact ε lies in [ε_lo, ε_hi] (the inverse map rounded down and up), so β = e^{ε'−ε}
        lies in [e^{ε'−ε_hi}, e^{ε'−ε_lo}] and each ε_k below ε_hi + shift_k (rounded up); every
        piece is taken at the end of its range that makes it smallest (δ and the extended δ are
        non-increasing, 1 − β decreases in β), the omitted window mass is dropped, and the
        binomial weights and the sums carry the margin of the upper value, subtracted."""
        g = self.scheme.rate
        n = self.scheme.n
        if g >= 1.0:
            return self.base._log_delta_lower(eps_prime)
        eps_prime = np.atleast_1d(np.asarray(eps_prime, dtype=float))
        eps_hi = np.atleast_1d(deamplify_eps(eps_prime, g, up=True))
        eps_lo = np.atleast_1d(deamplify_eps(eps_prime, g))
        log_g = math.log(g)
        inf = np.isposinf(eps_prime)
        with np.errstate(invalid="ignore"):
            x_lo = eps_prime - eps_hi
            x_hi = eps_prime - eps_lo
            log_beta_lo = np.where(inf, log_g, np.minimum(x_lo - ULP * np.abs(x_lo), 0.0))
            log_beta_hi = np.where(inf, log_g, np.minimum(x_hi + ULP * np.abs(x_hi), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_1mb = log1mexp(log_beta_hi)  # log(1 − β) at the largest β: a lower value
        first = log_g + log_beta_lo + self.base._log_delta_lower(eps_hi)
        inner = self._k < n
        shifts = self._shifts_up
        inner_sum = np.empty(eps_prime.shape)
        # every term of every point in one call of the extended profile (elementwise, so the
        # values of separate calls), in chunks of points so that (terms × points) stays below
        # 2^22 floats
        step = max(1, (1 << 22) // max(1, self._k.size))
        for c0 in range(0, eps_prime.size, step):
            e = eps_hi[c0:c0 + step]
            terms = np.empty((self._k.size, e.size))
            if shifts.size:
                with np.errstate(invalid="ignore"):
                    e_k = e[None, :] + shifts[:, None]
                    e_k = np.where(np.isfinite(e_k),
                                   e_k + ULP * (np.abs(e)[None, :] + np.abs(shifts)[:, None]), e_k)
                terms[inner] = self._log_gt[inner][:, None] + self.base._log_delta_extended(
                    e_k.reshape(-1), lower=True).reshape(e_k.shape)
            terms[~inner] = self._log_gt[~inner][:, None]  # γ̃_n · 1
            lse, _ = logsumexp_signed(terms, axis=0)
            inner_sum[c0:c0 + step] = lse - lse_error(terms.shape[0], lse)  # downward
        second = log_g + log_1mb + inner_sum
        with np.errstate(invalid="ignore"):
            total = np.logaddexp(first, np.where(np.isneginf(log_1mb), -np.inf, second))
            total = round_down_log(total - 64 * ULP, ulps=8)
        return np.minimum(total, 0.0)

    def points(self, eps: Any) -> dict[str, np.ndarray]:
        """Same table as :meth:`AmplifiedProfile.points` (δ' evaluated at ε' = amplify(ε))."""
        e = check_real_array("eps", eps, "[0, inf]").reshape(-1)
        eps_prime = np.atleast_1d(amplify_eps(e, self.eta))
        return {"eps": e, "delta": np.atleast_1d(self.base.delta(e)),
                "eps_amplified": eps_prime,
                "delta_amplified": np.exp(self._log_delta(eps_prime))}

    def __repr__(self) -> str:
        return f"PoissonSubstitutionProfile({self.base!r} under {self.scheme!r})"


# -------------------------------------------------------------------------------------------
# entry point
# -------------------------------------------------------------------------------------------


def amplify(
    mechanism: Mechanism | PrivacyProfile,
    scheme: SamplingScheme,
    relation: NeighbouringRelation | str | None = None,
    group_privacy: GroupPrivacy | str | None = None,
    group_size: int = 1,
) -> PrivacyProfile:
    """The privacy profile of ``mechanism`` run on a subsample drawn by ``scheme``.

    Parameters
    ----------
    mechanism : Mechanism or PrivacyProfile
        The base mechanism M (or its profile), stated under the relation the theorem needs
        (``scheme.base_relation(relation)``): add/remove for Poisson under add/remove,
        substitution otherwise. A mismatch raises :class:`UnsupportedCombinationError` naming
        both relations — the sensitivity of M depends on it (a clipped sum has sensitivity C
        under add/remove and 2C under substitution).
    scheme : SamplingScheme
    relation : NeighbouringRelation or str, optional
        The relation on the full dataset (default: the scheme's natural one).
    group_privacy : "white-box", "black-box" or None
        How the group profiles δ_k (k ≥ 2 copies) are obtained (default: white-box where the
        mechanism knows them).
    group_size : int
        The guarantee is for groups of this many records (default 1): the multiplicity law
        becomes that of the draws hitting the group
        (:meth:`~privamp.sampling.SamplingScheme.group_multiplicity`; Poisson under add/remove,
        WOR and WR under substitution), the rest of the formula unchanged.

    Returns
    -------
    PrivacyProfile
        An :class:`AmplifiedProfile` (or :class:`PoissonSubstitutionProfile`), with
        ``.eta``, ``.theorem`` and ``.points(eps)``.

    Examples
    --------
    Laplace θ = 1 with WR(10, 5), white-box group privacy (catalogue §3.10):

    >>> from privamp import LaplaceMechanism
    >>> from privamp.sampling import WR
    >>> prof = amplify(LaplaceMechanism(1.0, relation="substitute"), WR(10, 5))
    >>> row = prof.points(1.0)
    >>> round(float(row["eps_amplified"][0]), 10), round(float(row["delta_amplified"][0]), 10)
    (0.5327751164, 0.0341623295)
    """
    if not isinstance(scheme, SamplingScheme):
        raise InvalidParameterError("scheme", "a SamplingScheme", scheme)
    profile = mechanism.profile() if isinstance(mechanism, Mechanism) else mechanism
    if not isinstance(profile, PrivacyProfile):
        raise InvalidParameterError("mechanism", "a Mechanism or a PrivacyProfile", mechanism)
    outer, needed = scheme.resolve(relation)
    if profile.relation is not needed:
        raise UnsupportedCombinationError(
            f"{scheme!r} under {outer.value!r} needs a base mechanism stated under "
            f"{needed.value!r}, but the given one holds for {profile.relation.value!r} "
            f"(restate its sensitivity under {needed.value!r})")
    group = None if group_privacy is None else check_enum("group_privacy", group_privacy,
                                                          GroupPrivacy)
    k = group_size if type(group_size) is int and group_size >= 1 else check_int(
        "group_size", group_size, "[1, inf)")
    if isinstance(scheme, Poisson) and outer is S and k == 1:
        return PoissonSubstitutionProfile(profile, scheme)
    return AmplifiedProfile(profile, scheme, outer, group, group_size=k)
