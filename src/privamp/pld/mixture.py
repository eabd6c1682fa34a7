"""Mixture-of-Gaussians privacy-loss distributions of the MUST paper (Zhao & Liu 2023, eqs
(6)–(8), Supplement S5, S6; Koskela et al. 2020, §6).

:class:`MixturePLD` is the pair ``(Σ_j a_j N(μ_j, σ²), Σ_j b_j N(ν_j, σ²))`` of a subsampled
Gaussian mechanism: the substitution pair of a multiplicity law (WOR, WR, the MUST schemes) or
the two Poisson add/remove orientations. It gives the privacy loss in log-sum-exp form with an
error bound, its certified inverse, and certified bounds on the survival function of the loss
from the mixture CDFs — the inputs of the Fourier accountant (:mod:`privamp.pld.fourier`), which
composes it. ``certified`` says whether the pair is a proven dominating pair of the mechanism
(Poisson and WOR) or only the paper's construction (WR, MUST: estimates).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .. import _special
from .._numerics import ULP
from .._validation import check_choice, check_real, check_real_array
from ..errors import InvalidParameterError, InvalidTypeError
from ..sampling.multiplicity import MultiplicityPmf
from ..sampling.schemes import Poisson, SamplingScheme, WithoutReplacement

__all__ = ["MixturePLD"]

_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)
#: Relative accuracy assumed of ``log_ndtr``/``ndtr`` (privamp._special: within 4 ulp, 9e-16,
#: where the value is a normal float; SciPy's Cephes-based ones, used before, up to ~2e-13).
_NDTR_REL = 1e-12

#: Relative size below which mixture components are left out of the loss evaluation.
_HEAD_RHO = 1e-17


@dataclass(frozen=True)
class _Head:
    """The leading components of a mixture that the grid computations evaluate (see
    :meth:`MixturePLD._head`)."""

    h_a: int  # P components used in L
    h_b: int  # Q components used in L
    rho: float  # bound on the relative size of the others in numerator and denominator
    t_min: float  # interval of t on which rho holds
    t_max: float
    h_sf: int  # P components used in the survival function
    sf_rest: float  # P-mass of the others (added to the upper survival bound)


class MixturePLD:
    """Privacy-loss distribution of a pair of Gaussian mixtures with a common variance.

    ``P = Σ_j a_j N(μ_j, σ²)`` and ``Q = Σ_j b_j N(ν_j, σ²)`` with every ``μ_j ≥ 0 ≥ ν_j``, so
    that the privacy loss ``L(t) = log(f_P(t)/f_Q(t))`` is a continuous strictly increasing
    function of the output t (the quadratic terms cancel; what is left is a log-sum-exp of
    ``t μ_j/σ²`` minus one of ``t ν_j/σ²``: increasing minus decreasing, MUST §3.3 after eq (8)).
    This covers (Zhao & Liu 2023, eqs (6)–(8), Supplement S5, S6; Koskela et al. 2020, §6):

    * **substitution schemes** (WOR, WR, MUST.OW, MUST.WO, MUST.WW): with ``w_l`` the law of the
      number l of copies of the differing record in the subsample (privamp's
      :meth:`~privamp.sampling.SamplingScheme.multiplicity`),
      ``f_X = Σ_l w_l N(l, σ²)`` and ``f_X' = Σ_l w_l N(−l, σ²)``;
    * **Poisson subsampling under add/remove** (S6): the *remove* orientation
      ``((1 − q)N(0, σ²) + qN(1, σ²), N(0, σ²))`` and the *add* orientation (the reverse pair,
      stored reflected, t → −t, which leaves the loss distribution unchanged).

    **Sensitivity convention** (the paper's, "WLOG"): each copy of the differing record shifts the
    Gaussian's mean by 1, and σ — here ``noise_multiplier`` — is the noise standard deviation in
    units of that per-copy sensitivity. A copy moves the mean by +1 in X and by −1 in X'.

    **certified.** ``True`` only where the pair is a proven dominating pair of the subsampled
    Gaussian mechanism: Poisson (each orientation is exact — a guarantee for add/remove needs
    *both* orientations, and the accountant takes the maximum; Zhu, Dong, Wang 2022) and
    sampling without replacement (one copy at most; Koskela et al. 2020 §6.2, the pair of
    MUST S6). For WR, MUST.OW, MUST.WO, MUST.WW and general stage chains it is ``False``: for
    multisets it is not proven that this specific pair of datasets dominates every neighbouring
    pair — Wang et al. (2022b) give a counter-example to the with-replacement analysis of
    Koskela et al. (2020, §6.3) that this construction follows; MUST footnote 11 dismisses it on
    a support condition that concerns the *tightness* of δ, not its validity. Those numbers are
    "the paper's numbers", for reproduction and comparison only; privamp composes those schemes
    through their amplified privacy profiles instead (``ProfileCurve`` of the amplified profile).

    Parameters
    ----------
    p_means, q_means : array_like
        Component means of P (all ≥ 0) and of Q (all ≤ 0), in units of the per-copy
        sensitivity.
    p_log_weights, q_log_weights : array_like
        Log-weights (``-inf`` allowed) of the components; each family sums to
        ``1 − untracked`` within 1e-9.
    noise_multiplier : float
        σ > 0, the noise standard deviation in units of the per-copy sensitivity.
    log_untracked : float
        Log of the mass (in P, and in Q) of components that are not listed (a truncated
        multiplicity tail), whose P-means are at least ``untracked_from`` and Q-means at most
        ``−untracked_from``. Bounds go to the safe side for it.
    certified : bool
        Whether the pair is a proven dominating pair (see above).

    Examples
    --------
    >>> from privamp.sampling import WOR
    >>> pld = MixturePLD.from_scheme(WOR(n=100, m=2), noise_multiplier=1.0)
    >>> pld.certified, round(float(pld.loss(0.0)), 12)
    (True, 0.0)
    """

    def __init__(self, p_means, p_log_weights, q_means, q_log_weights, noise_multiplier: float,
                 *, log_untracked: float = -math.inf, untracked_from: float = 0.0,
                 certified: bool = False, label: str = "mixture"):
        sigma = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
        mu = check_real_array("p_means", p_means, "[0, inf)", ndim=1)
        nu = check_real_array("q_means", q_means, "(-inf, 0]", ndim=1)
        la = check_real_array("p_log_weights", p_log_weights, "[-inf, 0]", ndim=1)
        lb = check_real_array("q_log_weights", q_log_weights, "[-inf, 0]", ndim=1)
        if la.size != mu.size:
            raise InvalidParameterError("p_log_weights", f"an array of {mu.size} log-weights "
                                        "(one per P component)", la.size,
                                        detail="this is its length")
        if lb.size != nu.size:
            raise InvalidParameterError("q_log_weights", f"an array of {nu.size} log-weights "
                                        "(one per Q component)", lb.size,
                                        detail="this is its length")
        log_untracked = check_real("log_untracked", log_untracked, "[-inf, 0]")
        untracked_from = check_real("untracked_from", untracked_from, "[0, inf)")
        if not isinstance(certified, bool):
            raise InvalidTypeError("certified", "True or False", certified)
        for name, lw in (("p_log_weights", la), ("q_log_weights", lb)):
            total = float(np.logaddexp(special.logsumexp(lw), log_untracked))
            if not abs(math.expm1(total)) <= 1e-9:
                raise InvalidParameterError(
                    name, "log-weights of a probability vector (with the untracked mass, sum "
                    "1 within 1e-9)", math.exp(total), detail="this is the total")
        for arr in (mu, nu, la, lb):
            arr.setflags(write=False)
        self.noise_multiplier = sigma
        self.p_means, self.q_means = mu, nu
        self.p_log_weights, self.q_log_weights = la, lb
        self.log_untracked = log_untracked
        self.untracked_from = untracked_from
        self.certified = certified
        self.label = label
        self._cache: dict = {}
        # components with positive weight, sorted by mean (P increasing, Q decreasing)
        ka = np.flatnonzero(la > -np.inf)
        kb = np.flatnonzero(lb > -np.inf)
        if ka.size == 0 or kb.size == 0:
            raise InvalidParameterError("p_log_weights" if ka.size == 0 else "q_log_weights",
                                        "log-weights with at least one finite entry", la)
        ka = ka[np.argsort(mu[ka], kind="stable")]
        kb = kb[np.argsort(-nu[kb], kind="stable")]
        self._a = (mu[ka], la[ka])
        self._b = (nu[kb], lb[kb])
        s2 = sigma * sigma
        self._s2 = s2
        # c_j = log a_j − μ_j²/(2σ²): log f_P(t) = −t²/(2σ²) − log(√(2π)σ) + LSE_j(c_j + t μ_j/σ²)
        self._ca = la[ka] - mu[ka] ** 2 / (2 * s2)
        self._cb = lb[kb] - nu[kb] ** 2 / (2 * s2)
        # the limits of L at ±∞ (finite only when one side has no component that pulls it)
        self._loss_inf, self._loss_sup = self._limits()

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_multiplicity(cls, pmf: MultiplicityPmf, noise_multiplier: float, *,
                          certified: bool = False, label: str = "substitution mixture"
                          ) -> MixturePLD:
        """The substitution pair ``(Σ_l w_l N(l, σ²), Σ_l w_l N(−l, σ²))`` of a multiplicity law
        (MUST eqs (6)–(7), S5, S6). A truncated tail of the law (``pmf.log_tail``) is carried as
        untracked mass (multiplicities ≥ the retained support)."""
        if not isinstance(pmf, MultiplicityPmf):
            raise InvalidTypeError("pmf", "a privamp.sampling.MultiplicityPmf", pmf)
        lw = np.asarray(pmf.log_pmf, dtype=float)
        ls = np.arange(lw.size, dtype=float)
        return cls(ls, lw, -ls, lw, noise_multiplier, log_untracked=float(pmf.log_tail),
                   untracked_from=float(lw.size), certified=certified, label=label)

    @classmethod
    def from_scheme(cls, scheme: SamplingScheme, noise_multiplier: float, *,
                    orientation: str = "remove") -> MixturePLD:
        """The MUST/Koskela pair of a subsampled Gaussian for a privamp sampling scheme.

        Poisson: the ``orientation`` ("remove" or "add") pair under add/remove (S6; there is no
        mixture pair here for Poisson under substitution — use a ``ProfileCurve`` of its
        amplified profile); every other scheme: the substitution pair of its multiplicity law
        (certified only for WOR; see the class docstring). ``orientation`` is ignored for
        substitution schemes, which are symmetric.
        """
        if not isinstance(scheme, SamplingScheme):
            raise InvalidTypeError("scheme", "a privamp.sampling.SamplingScheme", scheme)
        orientation = check_choice("orientation", orientation, ("remove", "add"))
        return _mixture_for(scheme, noise_multiplier, orientation)

    @classmethod
    def poisson(cls, rate: float, noise_multiplier: float, orientation: str = "remove"
                ) -> MixturePLD:
        """Poisson-subsampled Gaussian under add/remove (MUST S6; Koskela et al. 2020 §6.1).

        ``remove``: ``P = (1 − q)N(0, σ²) + qN(1, σ²)``, ``Q = N(0, σ²)``, loss
        ``L(t) = log(q e^{(2t − 1)/(2σ²)} + 1 − q)`` on ``(log(1 − q), ∞)``. ``add``: the reverse
        pair, stored reflected (t → −t). Both are exact (Zhu, Dong, Wang 2022); an add/remove
        guarantee needs both (:meth:`poisson_pair`).
        """
        q = check_real("rate", rate, "(0, 1]")
        orientation = check_choice("orientation", orientation, ("remove", "add"))
        lq = math.log(q)
        l1q = math.log1p(-q) if q < 1 else -math.inf
        label = f"Poisson(q={q:g}) Gaussian (noise multiplier {noise_multiplier!r}), {orientation}"
        if orientation == "remove":
            return cls([0.0, 1.0], [l1q, lq], [0.0], [0.0], noise_multiplier, certified=True,
                       label=label)
        return cls([0.0], [0.0], [0.0, -1.0], [l1q, lq], noise_multiplier, certified=True,
                   label=label)

    @classmethod
    def poisson_pair(cls, rate: float, noise_multiplier: float) -> tuple[MixturePLD, MixturePLD]:
        """Both orientations ``(remove, add)`` of the Poisson-subsampled Gaussian."""
        return (cls.poisson(rate, noise_multiplier, "remove"),
                cls.poisson(rate, noise_multiplier, "add"))

    def swapped(self) -> MixturePLD:
        """The reverse pair (Q, P), reflected (t → −t) so that its means keep the sign
        convention. Its privacy loss is the X'/X loss of MUST Definition 2; Lemma 2 (Sommer):
        ``ω_{X/X'}(s) = e^s ω_{X'/X}(−s)``."""
        return MixturePLD(-self.q_means, self.q_log_weights, -self.p_means, self.p_log_weights,
                          self.noise_multiplier, log_untracked=self.log_untracked,
                          untracked_from=self.untracked_from, certified=self.certified,
                          label=f"swapped({self.label})")

    def __repr__(self) -> str:
        return f"MixturePLD({self.label}, certified={self.certified})"

    # ------------------------------------------------------------------ the loss function

    def _limits(self) -> tuple[float, float]:
        mu, la = self._a
        nu, lb = self._b
        # t → −∞: A → log Σ_{μ=0} a (or −∞); B → +∞ if some ν < 0, else log Σ b
        if np.any(nu < 0) or self.log_untracked > -math.inf:
            lo = -math.inf
        else:
            a0 = special.logsumexp(la[mu == 0]) if np.any(mu == 0) else -math.inf
            lo = float(a0 - special.logsumexp(lb))
        if np.any(mu > 0) or self.log_untracked > -math.inf:
            hi = math.inf
        else:
            b0 = special.logsumexp(lb[nu == 0]) if np.any(nu == 0) else -math.inf
            hi = float(special.logsumexp(la) - b0)
        return lo, hi

    def _untracked_bound(self, t: np.ndarray, top_a: np.ndarray, top_b: np.ndarray):
        """Relative size ρ of the untracked components in the numerator and denominator of L
        (``|L_full − L_listed| ≤ log(1 + ρ) ≤ ρ``), pointwise.

        An untracked P-component with mean μ ≥ μ₀ (μ₀ = ``untracked_from``) contributes
        ``e^{−μ²/(2σ²) + tμ/σ²}`` times its weight, at most ``e^{max_{μ ≥ μ₀}(…)}``; compared with
        the largest listed term ``e^{top}``. Likewise for Q (means ≤ −μ₀)."""
        if self.log_untracked == -math.inf:
            return np.zeros(t.shape)
        s2 = self._s2
        m0 = self.untracked_from
        mp = np.maximum(t, m0)  # argmax over μ ≥ m0 of −μ²/2 + tμ
        xp = (-mp * mp / 2 + t * mp) / s2
        mq = np.maximum(-t, m0)  # Q means −μ: −μ²/2 − tμ
        xq = (-mq * mq / 2 - t * mq) / s2
        with np.errstate(over="ignore"):
            rho = np.exp(self.log_untracked + xp - top_a) + np.exp(self.log_untracked + xq - top_b)
        return rho * (1 + 1e-6)

    def _head(self, t_min: float, t_max: float) -> _Head:
        """The components needed to evaluate L on ``[t_min, t_max]``, with a constant bound on
        the relative size ρ of the rest.

        With ``x_j(t) = c_j + tμ_j/σ²`` and P's means sorted increasingly, a dropped component j
        and *any* kept one i satisfy ``x_j(t) − max_kept x(t) ≤ x_j(t) − x_i(t)``, which is
        increasing in t (μ_j ≥ μ_i); taking i the largest kept term at t_max gives
        ``ρ_P ≤ Σ_dropped e^{x_j(t_max) − x_i(t_max)}`` on the whole interval (t ≤ t_max). The
        untracked mass (means ≥ μ₀) adds ``τ e^{max_{μ ≥ μ₀}(−μ²/2σ² + t_max μ/σ²) − x_i(t_max)}``.
        Q symmetrically at t_min. The smallest prefixes with ρ ≤ 1e-17 are kept (bisection on the
        prefix length; the full arrays if none qualifies)."""
        s2 = self._s2

        def rho_for(h, means, c, t_end, sign):
            x = c + t_end * means / s2
            i = int(np.argmax(x[:h]))  # the largest kept term at t_end
            rest = float(special.logsumexp(x[h:] - x[i])) if h < means.size else -math.inf
            if self.log_untracked > -math.inf:
                # untracked means sign·μ, μ ≥ μ₀: maximise −μ²/2 + t_end·sign·μ
                mu_u = max(self.untracked_from, sign * t_end)
                expo = (-mu_u * mu_u / 2 + t_end * sign * mu_u) / s2
                rest = float(np.logaddexp(rest, self.log_untracked + expo - x[i]))
            return math.exp(min(rest, 700.0))

        def smallest(means, c, t_end, sign):
            n = means.size
            if rho_for(n, means, c, t_end, sign) > _HEAD_RHO:
                return n, rho_for(n, means, c, t_end, sign)
            lo, hi = 0, n  # rho_for(hi) ≤ tol
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if rho_for(mid, means, c, t_end, sign) <= _HEAD_RHO:
                    hi = mid
                else:
                    lo = mid
            return hi, rho_for(hi, means, c, t_end, sign)

        mu, la = self._a
        nu, lb = self._b
        h_a, rho_a = smallest(mu, self._ca, t_max, 1.0)
        h_b, rho_b = smallest(nu, self._cb, t_min, -1.0)
        # survival function: keep P components until the rest weighs ≤ 1e-30 (added as
        # untracked P-mass to the upper bound)
        h_sf = h_a
        if h_sf < mu.size:
            suffix = np.logaddexp.accumulate(la[::-1])[::-1]  # log Σ_{j ≥ i} a_j
            small = np.flatnonzero(suffix <= math.log(1e-30))
            h_sf = max(h_a, int(small[0]) if small.size else mu.size)
        sf_rest = (float(special.logsumexp(la[h_sf:])) if h_sf < mu.size else -math.inf)
        sf_rest = float(np.logaddexp(sf_rest, self.log_untracked))
        return _Head(h_a, h_b, (rho_a + rho_b) * (1 + 1e-6), t_min, t_max, h_sf,
                     math.exp(sf_rest) * (1 + 1e-6))

    def _lse(self, t: np.ndarray, means: np.ndarray, c: np.ndarray):
        """``LSE_j(c_j + t·m_j/σ²)`` with its derivative in t and an error bound.

        The bound ``16u(max|c| + |t| max|m|/σ² + |LSE| + n + 2)`` covers the rounding of the
        terms, of the exponentials (relative error ≤ argument error + u), of the sum
        (≤ n u relative) and of the logarithm."""
        slope = means / self._s2
        x = np.multiply.outer(t, slope)
        x += c
        top = np.max(x, axis=1)
        x -= top[:, None]
        np.exp(x, out=x)
        tot = np.sum(x, axis=1)
        val = top + np.log(tot)
        deriv = (x @ slope) / tot
        # max_j(|c_j| + |t m_j|/σ²) ≤ max|c| + |t| max|m|/σ²
        size = float(np.max(np.abs(c))) + np.abs(t) * float(np.max(np.abs(slope)))
        err = 16 * ULP * (size + np.abs(val) + c.size + 2)
        return val, deriv, err, top

    def _loss_parts(self, t: np.ndarray, head: _Head | None = None):
        """(L(t), L'(t), error bound on L(t)) for a 1-D array t, in chunks; with a ``head``, only
        its components (valid for t inside the head's interval, where its ρ holds)."""
        out_l = np.empty(t.shape)
        out_d = np.empty(t.shape)
        out_e = np.empty(t.shape)
        mu, _ = self._a
        nu, _ = self._b
        ca, cb = self._ca, self._cb
        if head is not None:
            mu, ca = mu[:head.h_a], ca[:head.h_a]
            nu, cb = nu[:head.h_b], cb[:head.h_b]
        chunk = max(1, 2**21 // max(mu.size, nu.size, 1))
        for start in range(0, t.size, chunk):
            tt = t[start:start + chunk]
            va, da, ea, top_a = self._lse(tt, mu, ca)
            vb, db, eb, top_b = self._lse(tt, nu, cb)
            lval = va - vb
            rho = self._untracked_bound(tt, top_a, top_b) if head is None else head.rho
            out_l[start:start + chunk] = lval
            out_d[start:start + chunk] = da - db
            out_e[start:start + chunk] = ea + eb + 2 * ULP * np.abs(lval) + rho
        return out_l, out_d, out_e

    def loss(self, t) -> Any:
        """The privacy loss ``L(t) = log f_P(t) − log f_Q(t)`` (MUST eq (8)), in log-sum-exp form
        (no overflow for any t). Untracked components are ignored (see :meth:`loss_error`)."""
        arr = np.asarray(check_real_array("t", t, "(-inf, inf)", nonempty=False), dtype=float)
        val, _, _ = self._loss_parts(arr.reshape(-1))
        val = val.reshape(arr.shape)
        return float(val) if val.ndim == 0 else val

    def loss_derivative(self, t) -> Any:
        """``L'(t) = (E_a[μ] − E_b[ν])/σ²`` with the log-sum-exp (softmax) weights of the
        components at t — closed form (catalogue §2.5, erratum 26)."""
        arr = np.asarray(check_real_array("t", t, "(-inf, inf)", nonempty=False), dtype=float)
        _, d, _ = self._loss_parts(arr.reshape(-1))
        d = d.reshape(arr.shape)
        return float(d) if d.ndim == 0 else d

    @property
    def loss_range(self) -> tuple[float, float]:
        """``(inf L, sup L)``: e.g. ``(log(1 − q), ∞)`` for Poisson "remove", ℝ for the
        substitution pairs."""
        return self._loss_inf, self._loss_sup

    # ------------------------------------------------------------------ inversion

    def _t_table(self, s_lo: float, s_hi: float):
        """A table of t (uniform, 4097 points) whose L values cover [s_lo, s_hi] where L reaches
        it: ends found by doubling, then tightened by bisection (the table end must satisfy
        ``L + err < s_lo``, resp. ``L − err > s_hi``, or be at the cap)."""
        span = 1.0 + self._s2
        cap = 1e5 * (1.0 + self._s2 + float(np.max(self.p_means, initial=0.0)))

        def below(t):
            lv, _, le = self._loss_parts(np.array([t]))
            return lv[0] + le[0] < s_lo

        def above(t):
            lv, _, le = self._loss_parts(np.array([t]))
            return lv[0] - le[0] > s_hi

        def end(test, direction):
            inner, outer = 0.0, direction * span
            while abs(outer) < cap and not test(outer):
                inner, outer = outer, outer * 2
            if not test(outer):
                return direction * cap
            for _ in range(30):
                mid = 0.5 * (inner + outer)
                if test(mid):
                    outer = mid
                else:
                    inner = mid
            return outer

        lo = end(below, -1.0)
        hi = end(above, 1.0)
        t_tab = np.linspace(lo, hi, 4097)
        l_tab, _, _ = self._loss_parts(t_tab)
        return t_tab, np.maximum.accumulate(l_tab)

    def _invert(self, s: np.ndarray, s_dn: np.ndarray | None = None,
                s_up: np.ndarray | None = None):
        """Certified brackets ``t_lo < L⁻¹(s) < t_hi`` for the points of s inside the range of L;
        returns ``(t_lo, t_hi, ok)``, ``ok`` False where no bracket was certified.

        Safeguarded Newton (closed-form L') inside brackets from a table, then the bracket is
        certified by evaluating L at its ends with the error bound: ``L(t_lo) + err < s_dn`` and
        ``L(t_hi) − err > s_up`` (L is increasing, so ``L⁻¹`` of every point of
        ``[s_dn, s_up]`` lies between; by default ``s_dn = s_up = s``)."""
        s_dn = s if s_dn is None else s_dn
        s_up = s if s_up is None else s_up
        n = s.size
        t_lo = np.full(n, np.nan)
        t_hi = np.full(n, np.nan)
        ok = np.zeros(n, dtype=bool)
        if n == 0:
            return t_lo, t_hi, ok, None
        t_tab, l_tab = self._t_table(float(np.min(s_dn)), float(np.max(s_up)))
        head = self._head(float(t_tab[0]), float(t_tab[-1]))
        j = np.clip(np.searchsorted(l_tab, s), 1, t_tab.size - 1)
        a = t_tab[j - 1].copy()
        b = t_tab[j].copy()
        inside = (s > l_tab[0]) & (s < l_tab[-1])
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(l_tab[j] > l_tab[j - 1],
                            (s - l_tab[j - 1]) / (l_tab[j] - l_tab[j - 1]), 0.5)
        t = a + np.clip(frac, 0.0, 1.0) * (b - a)
        resid = np.full(n, np.inf)
        err = np.zeros(n)
        slope = np.ones(n)
        active = np.flatnonzero(inside)
        for _ in range(200):
            if active.size == 0:
                break
            tt = t[active]
            lv, dv, ev = self._loss_parts(tt, head)
            f = lv - s[active]
            resid[active], err[active], slope[active] = f, ev, dv
            a[active] = np.where(f < 0, tt, a[active])
            b[active] = np.where(f > 0, tt, b[active])
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                tn = tt - f / dv
            bad = ~((tn > a[active]) & (tn < b[active]))
            tn = np.where(bad, 0.5 * (a[active] + b[active]), tn)
            tiny = 4 * ULP * (1 + np.abs(tt))
            done = (np.abs(f) <= ev) | (np.abs(tn - tt) <= tiny) \
                | (b[active] - a[active] <= tiny)
            t[active] = np.where(done, tt, tn)
            active = active[~done]
        cand = np.flatnonzero(inside)
        if cand.size == 0:
            return t_lo, t_hi, ok, head
        tc = t[cand]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            width = 2 * (np.abs(resid[cand]) + err[cand] + np.abs(s_up[cand] - s_dn[cand])) \
                / np.maximum(slope[cand], 1e-300)
        width = np.where(np.isfinite(width), width, 0.0)
        width = np.maximum(width, 8 * ULP * (1 + np.abs(tc)))
        lo_ok = np.zeros(cand.size, dtype=bool)
        hi_ok = np.zeros(cand.size, dtype=bool)
        lo_t = tc - width
        hi_t = tc + width
        sd, su = s_dn[cand], s_up[cand]
        for _ in range(40):
            need = np.flatnonzero(~lo_ok)
            if need.size:
                # the head's error bound holds on [t_min, t_max]: stay inside
                lo_t[need] = np.maximum(tc[need] - width[need], head.t_min)
                lv, _, ev = self._loss_parts(lo_t[need], head)
                lo_ok[need] = lv + ev < sd[need]
            need_h = np.flatnonzero(~hi_ok)
            if need_h.size:
                hi_t[need_h] = np.minimum(tc[need_h] + width[need_h], head.t_max)
                lv, _, ev = self._loss_parts(hi_t[need_h], head)
                hi_ok[need_h] = lv - ev > su[need_h]
            if lo_ok.all() and hi_ok.all():
                break
            with np.errstate(over="ignore"):
                width = np.where(lo_ok & hi_ok, width, width * 4)
        t_lo[cand] = lo_t
        t_hi[cand] = hi_t
        ok[cand] = lo_ok & hi_ok
        return t_lo, t_hi, ok, head

    def inverse_loss(self, s) -> Any:
        """``L⁻¹(s)`` for s strictly inside :attr:`loss_range` (NaN outside), by a bracketed
        root finder (safeguarded Newton with the closed-form derivative); the returned value is
        the midpoint of a certified bracket ``L(t_lo) < s < L(t_hi)``."""
        arr = np.asarray(check_real_array("s", s, "[-inf, inf]", nonempty=False), dtype=float)
        flat = arr.reshape(-1)
        t_lo, t_hi, ok, _ = self._invert(flat)
        out = np.where(ok, 0.5 * (t_lo + t_hi), np.nan).reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    # ------------------------------------------------------------------ distribution of L

    def _log_sf_p(self, t: np.ndarray, h: int | None = None) -> np.ndarray:
        """log P(T > t) under the first h listed P components (all by default)."""
        mu, la = self._a
        if h is not None:
            mu, la = mu[:h], la[:h]
        sigma = self.noise_multiplier
        out = np.empty(t.shape)
        chunk = max(1, 2**22 // mu.size)
        for start in range(0, t.size, chunk):
            tt = t[start:start + chunk]
            z = (mu[None, :] - tt[:, None]) / sigma
            out[start:start + chunk] = special.logsumexp(la[None, :] + _special.log_ndtr(z),
                                                         axis=1)
        return out

    def survival_bounds(self, s) -> tuple[np.ndarray, np.ndarray]:
        """Bounds ``(lower, upper)`` on ``T(s) = P(L > s)`` under P, for an array of losses s.

        ``P(L > s) = P(T > L⁻¹(s)) = Σ_j a_j Φ((μ_j − L⁻¹(s))/σ)`` (L is increasing): the mixture
        survival function at the ends of the certified bracket of ``L⁻¹(s)``, widened by the
        assumed relative accuracy of ``log_ndtr`` (1e-12) and, for the upper bound, by the
        untracked mass. Outside the range of L the values are exact (1 below, 0 above); where
        no bracket can be certified (within rounding of a finite end of the range), the bounds
        are the trivial 0 and 1.
        """
        arr = check_real_array("s", s, "[-inf, inf]", ndim=1, nonempty=False)
        return self._survival_pair(arr, arr)

    def _survival_pair(self, s_dn: np.ndarray, s_up: np.ndarray):
        """(lower bound on T(s_up), upper bound on T(s_dn)) for s_dn ≤ s_up elementwise."""
        lo_b = np.zeros(s_dn.shape)
        up_b = np.ones(s_dn.shape)
        e_inf = 64 * ULP * (1 + abs(self._loss_inf)) if math.isfinite(self._loss_inf) else 0.0
        e_sup = 64 * ULP * (1 + abs(self._loss_sup)) if math.isfinite(self._loss_sup) else 0.0
        lo_b[s_up <= self._loss_inf - e_inf] = 1.0  # L > inf L ≥ s everywhere
        up_b[s_dn >= self._loss_sup + e_sup] = 0.0  # L < sup L ≤ s everywhere
        mid = np.flatnonzero((s_up > self._loss_inf - e_inf) & (s_dn < self._loss_sup + e_sup)
                             & np.isfinite(s_dn) & np.isfinite(s_up))
        if mid.size:
            s_mid = 0.5 * s_dn[mid] + 0.5 * s_up[mid]
            t_lo, t_hi, ok, head = self._invert(s_mid, s_dn[mid], s_up[mid])
            idx = mid[ok]
            if idx.size:
                untracked = head.sf_rest
                lsf_lo = self._log_sf_p(t_lo[ok], head.h_sf)
                lsf_hi = self._log_sf_p(t_hi[ok], head.h_sf)
                up_b[idx] = np.minimum(1.0, np.exp(lsf_lo) * (1 + _NDTR_REL)
                                       + untracked * (1 + 4 * ULP))
                lo_b[idx] = np.exp(lsf_hi) * (1 - _NDTR_REL)
        return lo_b, up_b

    def survival(self, s) -> np.ndarray:
        """Point estimate of ``P(L > s)`` (the midpoint of :meth:`survival_bounds`)."""
        lo, up = self.survival_bounds(s)
        return 0.5 * (lo + up)

    def cell_masses(self, edges) -> np.ndarray:
        """``P(e_i < L ≤ e_{i+1})`` for increasing edges — exact cell probabilities from the
        mixture CDF (no density, no derivative), as point estimates."""
        e = check_real_array("edges", edges, "[-inf, inf]", ndim=1)
        if e.size < 2 or np.any(np.diff(e) <= 0):
            raise InvalidParameterError("edges", "a strictly increasing array of at least two "
                                        "losses", e)
        sv = self.survival(e)
        return np.maximum(sv[:-1] - sv[1:], 0.0)

    def density(self, s) -> np.ndarray:
        """The PLD density ``ω(s) = f_P(L⁻¹(s)) / L'(L⁻¹(s))`` (MUST Definition 3, with the
        closed-form derivative), 0 outside the range of L."""
        arr = check_real_array("s", s, "[-inf, inf]", ndim=1, nonempty=False)
        t = np.atleast_1d(self.inverse_loss(arr))
        out = np.zeros(arr.shape)
        good = np.isfinite(t)
        if np.any(good):
            tg = t[good]
            mu, la = self._a
            sigma = self.noise_multiplier
            z = (tg[:, None] - mu[None, :]) / sigma
            log_f = special.logsumexp(la[None, :] - z * z / 2, axis=1) - _LOG_2PI_HALF \
                - math.log(sigma)
            _, d, _ = self._loss_parts(tg)
            out[good] = np.exp(log_f) / d
        return out

    def hockey_stick(self, eps) -> np.ndarray:
        """Single-step ``δ_{X/X'}(ε) = P(L > ε) − e^ε Q(L > ε)`` from the mixture CDFs at
        ``t* = L⁻¹(ε)`` (a point estimate; used by the tests for the k = 1 case)."""
        arr = check_real_array("eps", eps, "(-inf, inf)", ndim=1)
        t = np.atleast_1d(self.inverse_loss(arr))
        out = np.empty(arr.shape)
        nu, lb = self._b
        mu, la = self._a
        sigma = self.noise_multiplier
        for i, (e, tt) in enumerate(zip(arr, t, strict=True)):
            if not np.isfinite(tt):
                out[i] = 0.0 if e >= self._loss_sup else max(0.0, -math.expm1(e))
                continue
            p_tail = float(np.sum(np.exp(la + _special.log_ndtr((mu - tt) / sigma))))
            q_tail = float(np.sum(np.exp(lb + _special.log_ndtr((nu - tt) / sigma))))
            out[i] = max(0.0, p_tail - math.exp(e) * q_tail)
        return out


@functools.singledispatch
def _mixture_for(scheme: SamplingScheme, noise_multiplier: float, orientation: str
                 ) -> MixturePLD:
    """Substitution schemes in general (WR, MUST.OW/WO/WW, stage chains): not certified."""
    return MixturePLD.from_multiplicity(scheme.multiplicity(), noise_multiplier,
                                        certified=False, label=repr(scheme))


@_mixture_for.register
def _(scheme: WithoutReplacement, noise_multiplier: float, orientation: str) -> MixturePLD:
    return MixturePLD.from_multiplicity(scheme.multiplicity(), noise_multiplier, certified=True,
                                        label=repr(scheme))


@_mixture_for.register
def _(scheme: Poisson, noise_multiplier: float, orientation: str) -> MixturePLD:
    return MixturePLD.poisson(scheme.rate, noise_multiplier, orientation)
