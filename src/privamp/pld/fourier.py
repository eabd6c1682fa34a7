"""The Fourier accountant of Koskela et al. (MUST Algorithm 1), made rigorous, and the
mixture-of-Gaussians privacy-loss distributions of the MUST paper.

This backend exists **for comparison** with the published method. privamp's own ``pld`` backend
(:mod:`privamp.pld.distribution`) discretises a dominating pair without drift; the Fourier
accountant, as published, rounds every step's loss up (upper bound) or down (lower bound) to a
grid of spacing Δx, so after k compositions the two bounds have drifted apart by up to k·Δx in the
loss. That is the method (Koskela, Jälkö, Honkela 2020; Koskela, Jälkö, Prediger, Honkela 2021;
Zhao & Liu 2023, Algorithm 1); it is kept here, documented, and every other approximation is made
rigorous.

The method (MUST Algorithm 1, with the changes listed below)
-------------------------------------------------------------
Grid ``x_i = −L + iΔx``, ``i = 0, …, r − 1``, ``Δx = 2L/r`` (r even). For the privacy loss L of a
pair (P, Q) under P (``δ(ε) = E_P[(1 − e^{ε − L})_+]`` plus the mass at +∞):

1. **Discretise** (step 3). Instead of ``Δx·ω(x_i)`` and cell minima/maxima of the density (which
   need unimodality and are not bounds), privamp uses bounds on the survival function
   ``T(s) = P(L > s)`` at the grid points — from the mixture CDFs for :class:`MixturePLD` (the
   catalogue's "most robust" recommendation: exact cell probabilities, no density, no
   derivative), from :meth:`~privamp.pld.curves.PairCurve.p_tail_bounds` for a pair curve.
   An upper sequence ``T⁺ ≥ T`` (made non-increasing by a running minimum, which keeps it an upper
   bound because T is non-increasing) is the survival function of a loss that is stochastically
   larger than L; rounding that loss up to the grid gives the *upper* PLD: cell
   ``(x_i, x_{i+1}]`` at ``x_{i+1}``, everything at or below ``x_0`` at ``x_0``, everything above
   ``x_{r−1}`` (finite or not) at +∞. A lower sequence ``T⁻ ≤ T`` (running maximum from the
   right) gives the *lower* PLD: cell ``(x_i, x_{i+1}]`` at ``x_i``, the finite mass above
   ``x_{r−1}`` at ``x_{r−1}``, a lower bound on ``P(L = +∞)`` kept at +∞, the mass at or below
   ``x_0`` dropped (sent to −∞). Both vectors are probability vectors (up to rounding), so the
   k-th power does not amplify a surplus of mass. (The alternative, per-cell mass intervals
   ``[T⁻(x_i) − T⁺(x_{i+1}), T⁺(x_i) − T⁻(x_{i+1})]``, sums to more than 1 — by 2e-4 for the
   Poisson-Gaussian curve at r = 5·10⁵ — and that surplus is raised to the power k.) δ is
   non-decreasing in every loss value and in every mass, so the upper PLD's composition bounds
   the true δ from above and the lower PLD's from below.
2. **Compose** (step 5): half-swap H, ``rfft``, k-th power, ``irfft``, H. The FFT convolution is
   circular: the composed loss is folded into the window ``[−L, L − Δx]``.
3. **δ** (step 7) ``Σ_{x_j > ε} (1 − e^{ε − x_j}) u_j`` plus the mass at +∞
   ``1 − (1 − δ(∞))^k`` (MUST footnote 12; for the lower PLD, whose dropped mass kills a
   composition, ``(1 − d)^k − (1 − d − δ(∞))^k``).

Error terms (each to the safe side; results clipped to [0, 1]):

* **Truncation / aliasing** (Koskela, Jälkö, Prediger, Honkela 2021, Theorem 7 — the term MUST
  Algorithm 1 omits, catalogue erratum 20). With ``α^±(λ) = log Σ_i c_i e^{±λ x_i}`` the
  Chernoff bounds ``P(S ≥ L) ≤ e^{kα⁺(λ) − λL}`` and ``P(S < −L) ≤ e^{kα⁻(λ) − λL}`` hold for
  the composed finite part S. The FFT composes modulo 2L: mass of S at or above L lands at a
  lower loss, where its δ weight ``(1 − e^{ε − s})_+`` is smaller — missing at most its mass,
  added to the upper δ, and harmless for the lower one; mass below −L has weight 0 and lands
  higher — at most its mass too much, subtracted from the lower δ, harmless for the upper one.
  The authors' code (catalogue §2.6.3) adds and subtracts the sum of both terms, each divided by
  ``1 − e^{−2Lλ}`` (a geometric sum over the copies that fold once, twice, …); a single
  Chernoff bound on the whole out-of-window mass already covers every fold, so privamp drops
  that factor and uses one term per side. λ = L/2 is the authors' default; every λ > 0 gives a
  valid bound, and privamp takes the best of L/2 and a geometric grid.
* **FFT rounding** (docs/certification.md, "The Fourier accountant"): the transforms are
  NumPy's (pocketfft's real FFT, the code whose rounding errors :mod:`._fft_bounds` bounds), on
  5-smooth r only. Each forward coefficient is within ``e = κ u ‖x‖₁ + a(r)`` of the exact DFT
  (κ derived for the radf passes of r's factorisation); raising to the power k,
  ``|(X + E)^k − X^k| ≤ (|X| + e)^k − |X|^k`` per frequency, plus the rounding of the power
  itself: together ``D_f``. Through an exact inverse transform this error is ``e₁ =
  irfft(Z)``, ``|Z_f| ≤ D_f``: ``|e₁_j| ≤ Σ_f w_f D_f / r`` (w_f the rfft multiplicity 1 or 2),
  and by Parseval ``‖e₁‖₂ = √(Σ_f w_f |Z_f|² / r)``. The inverse transform's own rounding e₂ is
  bounded componentwise only (``κ' u Σ_f w_f |P_f| / r + a(r)`` per output, κ' of the radb
  passes and the 1/r scaling). The δ functional ``Σ_j g_j u_j`` (``g_j = 1 − e^{ε − x_j}``)
  moves by at most ``min(Σg·max|e₁|, ‖g‖₂‖e₁‖₂) + Σg·max|e₂|``. (The ℓ2 route for e₂ — a
  normwise bound for the inverse transform, Higham's Theorem 24.2 for radix 2 — is not used:
  no such bound is derived for pocketfft's mixed-radix passes, and the componentwise one gives
  only ``‖e₂‖₂ ≤ √r max|e₂|``, never better than Σg·max|e₂|.)
* **Summation** of the δ functional: ``(n + 4)·2u Σ_j g_j |u_j|`` (any summation order), plus
  the rounding of the weights (≤ 8u(|ε| + |x| + 1) each) and of the final additions.

Published numbers this implementation corrects
---------------------------------------------
* The values printed for the MUST S7 example (catalogue §2.6: δ(1) = 1.3723e-8, …, 1.228e-4 for
  k = 200, …, 1000) and the catalogue's WOR example (q = 0.02, σ = 4, k = 1000, ε = 1:
  "δ ≈ 8.75e-5, lower 8.7492e-5 / upper 8.7531e-5") are the *left-endpoint* sums at L = 10,
  r = 5·10⁵ — the lower end of the bracket; with losses rounded up the same grid gives
  1.87e-4 and 1.37e-4. The two sides are not 4 digits apart but k·Δx = 0.04 apart in the loss.
  On finer grids the certified lower bounds exceed the printed values, which therefore
  *under-report* δ: MUST.OW at L = 6, r = 2²² gives [1.4027e-8, 1.4139e-8], [1.1032e-7,
  1.1237e-7], [3.692e-6, 3.796e-6], [3.512e-5, 3.616e-5], [1.4952e-4, 1.5408e-4] for
  k = 200, …, 1000; the WOR bracket shrinks to [1.0877e-4, 1.1022e-4] (L = 5, r = 2²³), true
  value about 1.095e-4 — the catalogue's "naive point rule" value, which it wrongly calls
  outside the bracket. (The authors' notebook prints (1.2282e-7, 1.0514e-4) for this setting:
  its upper end is below privamp's certified lower bound, consistent with its cell maxima being
  placed at the left grid points, ``linspace(−L, L, nx, endpoint=False)``.)
* MUST Algorithm 1 has no truncation term (erratum 20): it is added here.
* S7 reports that the accountant "produced numerical errors" for MUST.WW: the log-sum-exp loss,
  the bracketed inversion and the CDF cell masses have no trouble with it.

Inputs (``source``):

* a :class:`~privamp.pld.curves.PairCurve` (any dominating pair privamp knows, e.g.
  :class:`~privamp.pld.curves.ProfileCurve` of a privacy profile, or the exact Poisson-Gaussian
  :class:`~privamp.pld.curves.PoissonGaussianCurve` — pass both orientations);
* a :class:`MixturePLD` (the pairs of MUST eqs (6)–(8), S5, S6);
* a sequence of those: the accountant returns the worse (Theorem 4(a) of the MUST paper: δ is
  the maximum over the two orientations of an asymmetric relation).

The result (:class:`FourierBracket`) is certified for the pair; ``certified=False`` (``status ==
"estimate"``) says that the pair is not proven to dominate the mechanism — the MUST paper's WR and
MUST mixture pairs — so its numbers are estimates, never guarantees. :class:`~privamp.accountant.
Accountant` (``backend="fourier"``) composes dominating pair curves only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .. import _special
from .._numerics import ULP, bisect_threshold
from .._validation import check_choice, check_int, check_real, check_real_array
from ..errors import (
    InconsistentBoundsError,
    InvalidParameterError,
    InvalidTypeError,
    NumericalError,
)
from ..results import Bracket
from ..sampling.multiplicity import MultiplicityPmf
from ..sampling.schemes import Poisson, SamplingScheme, WithoutReplacement
from . import _fft_bounds as _fb
from .curves import PairCurve
from .distribution import fast_length

__all__ = ["MAX_GRID", "FourierBracket", "MixturePLD", "fourier_accountant"]

#: Largest grid (number of points r) the accountant accepts: 2^24 points are 128 MB per array.
MAX_GRID = 2**24
#: Largest and smallest grids the accountant chooses by itself when r is not given.
DEFAULT_MAX_GRID = 2**22
MIN_DEFAULT_GRID = 2**14
#: Default target width of the ε bracket caused by the grid drift (k·Δx ≈ this).
DEFAULT_EPS_RESOLUTION = 0.02
#: Largest drift k·Δx accepted on an automatic grid: beyond it (many compositions over a wide
#: window) the bracket would span more than this in ε, and the query is refused quickly
#: instead of spending the largest grid on it (explicit ``L`` and ``r`` are always honoured).
MAX_AUTO_DRIFT = 10.0
#: Default truncation tolerances: absolute when ε is given, relative to δ when δ is given.
DEFAULT_TAIL_TOL_FOR_EPS = 1e-12
DEFAULT_TAIL_TOL_FOR_DELTA = 1e-3

_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)
#: Relative accuracy assumed of ``log_ndtr``/``ndtr`` (privamp._special: within 4 ulp, 9e-16,
#: where the value is a normal float; SciPy's Cephes-based ones, used before, up to ~2e-13).
_NDTR_REL = 1e-12
#: Secant widths tried for the slope bounds of a pair curve (see ``_source_survival``).
_CURVE_TAUS = (1e-6, 1e-3)
#: λ grid for the Chernoff tail bounds (each λ gives a valid bound; the best one is used).
_LAMBDAS = np.geomspace(1e-2, 1e3, 41)


@dataclass(frozen=True)
class FourierBracket(Bracket):
    """What :func:`fourier_accountant` returns: a :class:`~privamp.results.Bracket` and whether it
    is a guarantee for the mechanism.

    ``lower ≤ exact ≤ upper`` always holds for the *pair* the accountant composed (every
    truncation and rounding term is certified). ``certified`` is ``True`` when that pair is a
    proven dominating pair of the mechanism (every :class:`~privamp.pld.curves.PairCurve`;
    the Poisson and WOR :class:`MixturePLD`), ``False`` when it is not (the MUST paper's WR and
    MUST mixture pairs): the numbers are then **estimates** for the mechanism, not bounds —
    :attr:`status` says so.

    >>> FourierBracket(0.1, 0.2, certified=False).status
    'estimate'
    """

    certified: bool = True

    @property
    def status(self) -> str:
        """``"certified"`` or ``"estimate"``."""
        return "certified" if self.certified else "estimate"


# =============================================================================================
# mixture-of-Gaussians privacy-loss distributions
# =============================================================================================


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

    def _lse(self, t: np.ndarray, means: np.ndarray, c: np.ndarray, sign: float):
        """``LSE_j(c_j + sign·t·m_j/σ²)`` with its derivative in t and an error bound.

        The bound ``16u(max|c| + |t| max|m|/σ² + |LSE| + n + 2)`` covers the rounding of the
        terms, of the exponentials (relative error ≤ argument error + u), of the sum
        (≤ n u relative) and of the logarithm."""
        s2 = self._s2
        slope = sign * means / s2
        x = c[None, :] + t[:, None] * slope[None, :]
        top = np.max(x, axis=1)
        e = np.exp(x - top[:, None])
        tot = np.sum(e, axis=1)
        val = top + np.log(tot)
        deriv = (e @ slope) / tot
        size = np.max(np.abs(c)[None, :] + np.abs(t)[:, None] * np.abs(slope)[None, :], axis=1)
        err = 16 * ULP * (size + np.abs(val) + c.size + 2)
        return val, deriv, err, top

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


# =============================================================================================
# discretisation on the Fourier-accountant grid
# =============================================================================================


@dataclass(frozen=True)
class _GridPLD:
    """Upper and lower PLDs of one step on the grid ``x_i = (i − r/2)Δx``."""

    dx: float
    r: int
    upper: np.ndarray  # masses, loss rounded up; mass above x_{r−1} in p_inf_upper
    p_inf_upper: float
    lower: np.ndarray  # masses, loss rounded down
    p_inf_lower: float
    dropped_lower: float  # lower PLD's mass sent to −∞ (at or below x_0)


def _source_survival(source, x_dn: np.ndarray, x_up: np.ndarray):
    """(T_up at x_dn, T_lo at x_up, lower bound on P(L = +∞)) for a source."""
    if isinstance(source, MixturePLD):
        # grids are uniform: size and end points identify one (cached: the same grid serves
        # every count)
        key = (x_dn.size, float(x_dn[0]), float(x_dn[-1]))
        hit = source._cache.get(key)
        if hit is not None:
            return hit
        t_lo, t_up = source._survival_pair(x_dn, x_up)
        if x_dn.size >= 1024:
            if len(source._cache) >= 4:
                source._cache.clear()
            source._cache[key] = (t_up, t_lo, 0.0)
        return t_up, t_lo, 0.0
    # p_tail_bounds brackets the slope of the curve by secants of width τ: a small τ is best
    # near kinks, a large one where the curve is flat in α (it divides the value slack by τ);
    # both are valid bounds, so take the best of a few
    t_up = np.ones(x_dn.shape)
    t_lo = np.zeros(x_up.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        for tau in _CURVE_TAUS:
            _, up = source.p_tail_bounds(x_dn, tau)
            lo, _ = source.p_tail_bounds(x_up, tau)
            t_up = np.fmin(t_up, np.where(np.isnan(up), 1.0, up))
            t_lo = np.fmax(t_lo, np.where(np.isnan(lo), 0.0, lo))
        p_inf_lo = float(np.exp(source.log_lower(np.array([np.inf]))[0]))
    if not p_inf_lo >= 0.0:  # NaN
        p_inf_lo = 0.0
    return t_up, t_lo, p_inf_lo


#: Absolute slack for survival bounds that underflowed (4 × the smallest subnormal).
_SUBNORMAL_SLACK = 2.0**-1072
#: Coarse points per grid (see :func:`_survival_on_grid`).
_COARSE = 4096


def _survival_on_grid(source, x_dn: np.ndarray, x_up: np.ndarray):
    """:func:`_source_survival` on a fine grid, evaluated only where it is informative.

    Any value ≥ T is an upper bound and any value ≤ T a lower bound, so a point may be left at
    the trivial bounds (1 and 0): the running minimum/maximum of :func:`_grid_pld` then carries
    the neighbouring bounds into it (T is non-increasing), and the result stays valid. The
    survival bounds are first evaluated on every ⌈r/4096⌉-th point; below the last coarse point
    whose upper bound is exactly 1 and whose lower bound has reached its largest coarse value,
    and above the first coarse point whose upper bound is exactly 0 (T = 0 there), the fine
    points are not evaluated. (With a window much wider than one step's loss range — many
    compositions — this skips most of the grid.)"""
    r = x_dn.size
    step = -(-r // _COARSE)
    if step <= 2:
        return _source_survival(source, x_dn, x_up)
    idx = np.append(np.arange(0, r, step), r - 1)
    c_up, c_lo, p_inf_lo = _source_survival(source, x_dn[idx], x_up[idx])
    left = np.flatnonzero((c_up >= 1.0) & (c_lo >= np.max(c_lo)))
    right = np.flatnonzero(c_up <= 0.0)
    a = int(idx[left[-1]]) if left.size else 0
    b = int(idx[right[0]]) if right.size else r - 1
    if b < a:  # not a survival function: evaluate everything
        a, b = 0, r - 1
    t_up = np.ones(r)
    t_lo = np.zeros(r)
    t_up[b + 1:] = 0.0  # T ≤ T(x_b) ≤ 0 there (exact)
    f_up, f_lo, p_inf_lo = _source_survival(source, x_dn[a:b + 1], x_up[a:b + 1])
    t_up[a:b + 1] = f_up
    t_lo[a:b + 1] = f_lo
    return t_up, t_lo, p_inf_lo


def _grid_pld(source, dx: float, r: int) -> _GridPLD:
    """Discretise a source on the grid (module docstring, step 1)."""
    x = (np.arange(r, dtype=float) - r // 2) * dx
    # evaluate the upper survival at a point ≤ the exact grid point j·Δx and the lower at a
    # point ≥ it (the float product may be rounded either way)
    x_dn = np.nextafter(x, -np.inf)
    x_up = np.nextafter(x, np.inf)
    t_up_raw, t_lo_raw, p_inf_lo = _survival_on_grid(source, x_dn, x_up)
    # the bounds carry relative margins, which do not cover a result that underflowed (an
    # upper bound rounded to 0 or to a subnormal is off by up to a few 2^-1075): 2^-1072
    # absolute each way (the upper side then keeps ≥ 2^-1072 at +∞, ≈ k·2e-323 in δ)
    t_up = np.minimum.accumulate(np.clip(t_up_raw + _SUBNORMAL_SLACK, 0.0, 1.0))
    t_lo = np.maximum.accumulate(np.clip(t_lo_raw - _SUBNORMAL_SLACK, 0.0, 1.0)[::-1])[::-1]
    grow, shrink = 1 + 2 * ULP, 1 - 2 * ULP
    upper = np.empty(r)
    upper[0] = (1.0 - t_up[0]) * grow
    upper[1:] = (t_up[:-1] - t_up[1:]) * grow
    p_inf_up = float(t_up[-1])
    p_inf_lo = min(max(p_inf_lo, 0.0), float(t_lo[-1]))
    lower = np.empty(r)
    lower[:-1] = (t_lo[:-1] - t_lo[1:]) * shrink
    lower[-1] = (float(t_lo[-1]) - p_inf_lo) * shrink
    dropped = 1.0 - float(t_lo[0])
    return _GridPLD(dx, r, upper, p_inf_up, np.maximum(lower, 0.0), p_inf_lo,
                    min(1.0, max(dropped, 0.0) * (1 + 4 * ULP) + 4 * ULP))


# =============================================================================================
# composition by FFT, with certified error terms
# =============================================================================================


#: Unit roundoff of float64 (``ULP`` is the machine epsilon, 2u).
_U = 2.0**-53
#: Smallest normal float64: a per-frequency allowance for results that underflow.
_TINY = float(np.finfo(float).tiny)
#: Assumed accuracy of the float64 elementary functions evaluated below (``np.log``, ``np.exp``,
#: ``np.log1p``, ``np.expm1``, ``np.abs`` of a complex = hypot, ``np.angle`` = arctan2, and cos/sin
#: inside ``np.exp`` of an imaginary number): within 4 ulp, i.e. a relative error ≤ 8u (cos/sin:
#: absolute ≤ 8u on [−1, 1]) — the allowance :mod:`._fft_bounds` makes for NumPy's own float64
#: trigonometry (``NUMPY_F64_TRIG_ERROR``). glibc documents ≤ 1–2 ulp for these.
_FN = 8 * _U


def _log_mgf(masses: np.ndarray, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``log Σ_i c_i e^{λ x_i}`` for each λ (c ≥ 0), rounded up.

    The terms ``log c_i + λx_i`` carry ≤ 8u|log c_i| + 2u|λ x_i| (and u|λx_i| for the float grid
    loss); a term below the maximum by d enters the sum with weight e^{−d}, and |log c_i| ≤ |out|
    + d + λ|x_i|, so the relative error of the sum is ≤ 9u(|out| + 1 + λ max|x|) plus the
    exponentials, the summation (γ_{log₂ n}) and the logarithm: within the 32u(…) added."""
    pos = masses > 0
    lc = np.log(masses[pos])
    xs = x[pos]
    out = np.array([special.logsumexp(lc + lam_i * xs) for lam_i in lam])
    return out + 16 * ULP * (1 + np.abs(out) + lam * float(np.max(np.abs(xs), initial=0.0))
                             + math.log2(xs.size + 2))


def _chernoff_tail(masses: np.ndarray, x: np.ndarray, k: int, level: float, above: bool,
                   lam_extra: float) -> float:
    """Bound on the composed finite mass at or above ``level`` (``above``) or at or below it:
    ``P(S ≥ level) ≤ e^{kα(λ) − λ level}``, ``P(S ≤ level) ≤ e^{kα(−λ) + λ level}`` for every
    λ > 0, α the log-MGF of one step's masses (Chernoff; :func:`_log_mgf`, rounded up). The
    exponent gets ``8u(k|α| + λ|level|)`` for the roundings of ``k·α`` (k as a float, the
    product), of ``λ·level``, of the sum, and for ``level`` being the float of the exact window
    edge; the exponential 16u relative."""
    if not np.any(masses > 0):
        return 0.0
    lam = np.append(_LAMBDAS, lam_extra)
    kf = float(k)
    alpha = _log_mgf(masses, x if above else -x, lam)
    with np.errstate(over="ignore", invalid="ignore"):
        lam_level = lam * level
        expo = kf * alpha + (-lam_level if above else lam_level)
        expo = expo + 4 * ULP * (kf * np.abs(alpha) + np.abs(lam_level))
        tail = float(np.min(np.exp(expo))) * (1 + 8 * ULP)
    return min(tail, 1.0) if tail == tail else 1.0


def _pow_up(base: np.ndarray, k: int) -> np.ndarray:
    """An upper bound on ``base^k`` (elementwise; base ≥ 0, normal or 0).

    ``t = log(base)`` is within 8u|log base| (:data:`_FN`), ``s = k·t`` (k as a float, within
    u; the product, u) within ``u|s| + 9.2u·k|t|`` of ``k log base``; ``12u(k|t| + |s|)`` covers
    that and the rounding of ``s + slack``; ``exp`` (8u) and the final product by ``1 + 10u``
    (u) leave ``(1 − 8u)(1 + 10u)(1 − u) ≥ 1``. A result that underflows is within a few 2^-1074
    of the truth (the callers add :data:`_TINY`)."""
    kf = float(k)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        t = np.log(base)
        s = kf * t
        slack = 12 * _U * (kf * np.abs(t) + np.abs(s))
        out = np.exp(s + slack) * (1 + 10 * _U)
    return np.where(base > 0, out, 0.0)


@dataclass(frozen=True)
class _FftError:
    """Bounds on the rounding error ``Δu`` of the composed masses ``u = H irfft(rfft(Hc)^k)``
    (:func:`_power_spectrum`): ``Δu = e₁ + e₂`` with

    * ``e₁ = irfft(P − X^k)``, the error of the powered spectrum P pushed through an *exact*
      inverse transform: ``|e₁_j| ≤ d_inf`` for every j and ``‖e₁‖₂ ≤ d_2`` (Parseval);
    * ``e₂ = fl(irfft(P)) − irfft(P)``, the rounding of the inverse transform itself:
      ``|e₂_j| ≤ rnd`` for every j (componentwise, docs/certification.md "FFT rounding errors").
    """

    d_inf: float
    d_2: float
    rnd: float

    def weighted(self, g_sum: float, g_norm: float) -> float:
        """Bound on ``|⟨g, Δu⟩|`` for weights g with ``Σ|g| ≤ g_sum`` and ``‖g‖₂ ≤ g_norm``:
        Hölder (ℓ1, ℓ∞) or Cauchy–Schwarz (ℓ2, ℓ2) for e₁, whichever is smaller, and
        (ℓ1, ℓ∞) for e₂."""
        return min(g_sum * self.d_inf, g_norm * self.d_2) + g_sum * self.rnd


def _power_spectrum(c: np.ndarray, k: int) -> tuple[np.ndarray, _FftError]:
    """``u = H irfft(rfft(Hc)^k)`` (NumPy's pocketfft, r 5-smooth) and bounds on its rounding
    error (:class:`_FftError`; the derivation is in docs/certification.md, "The Fourier
    accountant").

    * **forward**: ``|X̃_f − X_f| ≤ e = κ u ‖x‖₁ + a(r)`` for every f
      (:func:`~privamp.pld._fft_bounds.rfft_error_bound`: κ of pocketfft's radf passes for the
      factorisation of r, a(r) = r·2^-1040 for underflow);
    * **power**: ``|P_f − X_f^k| ≤ D_f``, ``D_f = B_f(1 − e^{−a_f}) + B_f ρ_f + tiny`` with
      ``B_f ≥ (|X̃_f| + e)^k`` (:func:`_pow_up`) and ``a_f ≥ k log(1 + e/|X̃_f|)``: the
      perturbation ``|X^k − X̃^k| ≤ (|X̃| + e)^k − |X̃|^k``, and ρ_f the relative rounding of
      ``P = exp(k log|X̃|)·exp(i k arg X̃)``: ``expm1(u(k(11|log|X̃|| + 41) + 21))`` (logarithm,
      products by k, exponential, arctan2, cos/sin and the final product, each within
      :data:`_FN`);
    * **inverse** (``e₁``): ``|irfft(Z)_j| ≤ Σ_f w_f|Z_f|/r`` and ``‖irfft(Z)‖₂ =
      √(Σ_f w_f|Z_f|²/r)`` (Parseval; w_f = 1 at f = 0 and r/2, 2 elsewhere: the Hermitian
      spectrum; irfft drops the imaginary parts of Z_0 and Z_{r/2}, which only lowers both);
    * **inverse rounding** (``e₂``): ``κ' u Σ_f w_f|P_f|/r + a(r)`` per output
      (:func:`~privamp.pld._fft_bounds.irfft_error_constant`, the 1/r scaling included).

    The sums (≤ 2^23 terms, pairwise: relative error ≤ 24u) and the O(u) relative roundings of
    the products forming D_f are covered by the factor 1 + 1e-6."""
    r = c.size
    h = r // 2
    xvec = np.concatenate([c[h:], c[:h]])  # H: position p holds the loss ≡ pΔx (mod 2L)
    # ‖x‖₁ in floating point: within r·u ≤ 2^-29 of the exact sum in any summation order,
    # covered by the 1 + 1e-6 of rfft_error_bound
    e = _fb.rfft_error_bound(r, np.float64, float(np.sum(np.abs(xvec))))
    spec = np.fft.rfft(xvec)
    kf = float(k)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        mag = np.abs(spec)  # within 8u of |X̃|
        pos = mag > 0
        log_mag = np.log(mag)
        powered = np.exp(kf * log_mag) * np.exp(1j * (kf * np.angle(spec)))
        powered = np.where(pos, powered, 0.0)
        # B ≥ (|X̃| + e)^k: mag(1 + 32u) ≥ |X̃| after its rounding, the sum and the product
        # rounded up by (1 + 4u)
        big = _pow_up((mag * (1 + 32 * _U) + e) * (1 + 4 * _U), k)
        # a ≥ k log1p(e/|X̃|): e/(mag(1 − 32u)) ≥ e/|X̃|, log1p and the products rounded up
        a = kf * np.log1p(e / (mag * (1 - 32 * _U))) * (1 + 32 * _U)
        frac = np.minimum(-np.expm1(-a) * (1 + 20 * _U), 1.0)
        frac = np.where(pos, frac, 1.0)  # X̃_f = 0: |X_f^k| ≤ e^k ≤ B
        lam = np.where(pos, np.abs(log_mag), 0.0)
        rho = np.expm1(_U * (kf * (11 * lam + 41) + 21) * (1 + 1e-6)) * (1 + 20 * _U)
        d = big * frac + np.where(pos, big * rho, 0.0) + _TINY
        d = np.where(np.isnan(d), np.inf, d)
    y = np.fft.irfft(powered, r)
    u = np.concatenate([y[h:], y[:h]])
    m = spec.size
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if r % 2 == 0:
        weights[-1] = 1.0
    kappa_inv = _fb.irfft_error_constant(r, np.float64) * _U
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        sum_d = float(np.sum(weights * d))
        # squares that underflow lose < 2^-1074 each: 2m·tiny covers them
        sum_d2 = float(np.sum(weights * d * d)) + 2 * m * _TINY
        sum_p = float(np.sum(weights * np.abs(powered)))
        d_inf = sum_d / r * (1 + 1e-6)
        d_2 = math.sqrt(sum_d2 / r) * (1 + 1e-6)
    rnd = kappa_inv * sum_p / r * (1 + 1e-6) + _fb.underflow_allowance(r)
    return u, _FftError(d_inf, d_2, rnd)


@dataclass
class _Composed:
    """A composed upper or lower PLD on the window, with its certified error terms."""

    kind: str  # "upper" or "lower"
    x: np.ndarray  # grid losses
    u: np.ndarray  # composed masses (clipped at 0 for the upper)
    fft: _FftError  # FFT rounding
    inf_term: float  # P(S = +∞) (rounded to the safe side)
    tail: float  # truncation/aliasing: P(S ≥ L) for the upper, P(S < −L) for the lower

    def delta(self, eps: float) -> float:
        """Certified δ at ``eps`` (≥ 0) for this side of the bracket."""
        x, u = self.x, self.u
        j = int(np.searchsorted(x, eps, side="right"))
        xs = x[j:]
        us = u[j:]
        n = us.size
        if n:
            g = -np.expm1(np.minimum(eps - xs, 0.0))
            body = float(np.sum(g * us))
            abs_body = float(np.sum(g * np.abs(us)))
            # each computed weight is within gerr of the weight of the exact grid loss (the
            # float x_j is within u|x_j| of it; ε − x_j, u; expm1, 8u), and the point just
            # below ε may truly lie above it (its weight is then ≤ gerr)
            gerr = min(1.0, 4 * ULP * (abs(eps) + max(abs(float(x[0])), abs(float(x[-1]))) + 1))
            g_sum = float(np.sum(g)) * (1 + 1e-9) + (n + 1) * gerr
            g_norm = math.sqrt(float(np.sum(g * g))) * (1 + 1e-9) + math.sqrt(n + 1) * gerr
            near = float(np.sum(np.abs(u[max(j - 1, 0):])))
            err = (n + 4) * ULP * abs_body + gerr * near + self.fft.weighted(g_sum, g_norm)
        else:
            body, err = 0.0, 0.0
        # the final sums: ≤ u per addition of the partial sums' moduli
        slop = 4 * ULP * (abs(body) + err + self.inf_term + self.tail)
        if self.kind == "upper":
            return min(1.0, max(body, 0.0) + err + self.inf_term + self.tail + slop)
        return max(0.0, body - err + self.inf_term - self.tail - slop)

    def epsilon(self, delta: float) -> float:
        """Upper: the smallest ε ≥ 0 with δ_upper(ε) ≤ δ (``inf`` if none); lower: the largest
        ε ≥ 0 with δ_lower(ε) > δ (0 if none). Bisection keeps the safe end."""
        top = float(self.x[-1])
        if self.kind == "upper":
            if self.delta(0.0) <= delta:
                return 0.0
            if self.delta(top) > delta:
                return math.inf

            def feasible(e, idx):
                return np.array([self.delta(float(v)) <= delta for v in np.atleast_1d(e)])

            return float(bisect_threshold(feasible, 0.0, top, rtol=1e-12, atol=1e-12))
        if self.delta(0.0) <= delta:
            return 0.0
        if self.delta(top) > delta:
            # beyond the grid δ_lower is the constant (mass at +∞ − tail) > δ: so is δ(ε)
            return math.inf

        def feasible_neg(e, idx):
            return np.array([self.delta(-float(v)) > delta for v in np.atleast_1d(e)])

        return float(-bisect_threshold(feasible_neg, -top, -0.0, rtol=1e-12, atol=1e-12))


def _compose(grid: _GridPLD, k: int) -> tuple[_Composed, _Composed]:
    """Compose the upper and the lower PLD of one step k times (module docstring, step 2).

    Aliasing: the FFT composes modulo 2L = rΔx, so a composed loss s outside the window
    ``[−L, L)`` is counted at ``s − 2Lm`` inside it. Mass at s ≥ L lands lower, where its weight
    ``(1 − e^{ε − ·})_+`` is smaller (the weight is non-decreasing): it can only *lower* δ — the
    upper side adds ``P(S ≥ L)``, the lower side needs nothing for it. Mass at s < −L has weight
    0 (ε ≥ 0 > s) but lands higher: at most ``P(S < −L)`` too much — subtracted from the lower
    side, harmless for the upper one."""
    r, dx = grid.r, grid.dx
    x = (np.arange(r, dtype=float) - r // 2) * dx
    half = (r // 2) * dx
    lam_default = half / 2  # λ = L/2 (Koskela et al.; catalogue §2.6.3)
    kf = float(k)
    # upper: the missing top tail (S ≥ L) only
    u_up, fe_up = _power_spectrum(grid.upper, k)
    above_up = _chernoff_tail(grid.upper, x, k, half, True, lam_default)
    p = grid.p_inf_upper
    if p >= 1.0:
        inf_up = 1.0
    else:
        # 1 − (1 − p)^k: log1p (8u) and k·(…) (2u) give the argument a relative error ≤ 10.1u,
        # which moves 1 − e^{arg} by ≤ 10.1u relative (x/(e^x − 1) ≤ 1); expm1 8u, product u
        arg = kf * math.log1p(-p)
        inf_up = -math.expm1(arg) * (1 + 16 * ULP)
    upper = _Composed("upper", x, np.maximum(u_up, 0.0), fe_up, min(inf_up, 1.0), above_up)
    # lower: the mass below the window folds into it
    u_lo, fe_lo = _power_spectrum(grid.lower, k)
    below_lo = _chernoff_tail(grid.lower, x, k, -half - dx, False, lam_default)
    d, p = grid.dropped_lower, grid.p_inf_lower
    if d >= 1.0 or p <= 0.0:
        inf_lo = 0.0
    else:
        # (1 − d)^k − (1 − d − p)^k: decreasing in d (an upper bound on the dropped mass is
        # used), increasing in p (a lower bound); p is clipped to 1 − d
        arg_d = kf * math.log1p(-d)
        ratio = p / (1.0 - d)
        # all the kept mass at +∞ (ratio 1): (1 − d)^k − 0
        arg_p = kf * math.log1p(-ratio) if ratio < 1.0 else -math.inf
        inf_lo = math.exp(arg_d) * -math.expm1(arg_p)
        inf_lo *= 1 - 8 * ULP * (4 + abs(arg_d) + abs(arg_p))
    lower = _Composed("lower", x, u_lo, fe_lo, max(inf_lo, 0.0), below_lo)
    return upper, lower


# =============================================================================================
# the accountant
# =============================================================================================


def _sources(source) -> list:
    if isinstance(source, PairCurve | MixturePLD):
        return [source]
    if isinstance(source, str | bytes) or not isinstance(source, Sequence) or not source:
        raise InvalidTypeError("source", "a PairCurve, a MixturePLD or a non-empty sequence of "
                               "them", source)
    out = list(source)
    for i, s in enumerate(out):
        if not isinstance(s, PairCurve | MixturePLD):
            raise InvalidTypeError(f"source[{i}]", "a PairCurve or a MixturePLD", s)
    return out


def _check_grid(L, r):
    if r is not None:
        r = check_int("r", r, "[4, inf)")
        if r % 2:
            raise InvalidParameterError("r", "an even integer >= 4 (the half-swap H needs it)", r)
        if r > MAX_GRID:
            raise NumericalError(f"r = {r:,} grid points exceed the memory bound of "
                                 f"{MAX_GRID:,} (2^24); use a smaller r or a larger grid step")
        if _even_fast_length(r) != r:
            raise InvalidParameterError(
                "r", "an even 5-smooth integer (2^a·3^b·5^c, a ≥ 1): the FFT lengths whose "
                "rounding errors privamp bounds (pocketfft's radix-2/3/4/5 passes; other lengths "
                f"run Bluestein or generic passes); e.g. {_even_fast_length(r):,}", r)
    if L is not None:
        L = check_real("L", L, "(0, inf)")
    return L, r


def _even_fast_length(n: int) -> int:
    """The smallest even 5-smooth number ≥ n (n ≥ 2)."""
    return 2 * fast_length(-(-n // 2))


def _p_inf_upper(source) -> float:
    """Upper bound on the single-step mass at +∞ (untracked mixture components count)."""
    if isinstance(source, MixturePLD):
        return math.exp(source.log_untracked)
    return math.exp(source.log_mass_at_infinity)


def _auto_L(sources, k: int, log_tol: float, eps: float | None) -> float:
    """The truncation bound L chosen from the inputs.

    1. Grow L (×1.5 from 1) until, for every source, the single-step mass that is certainly
       finite and above L (lower survival bound minus the upper bound on the mass at +∞), and
       the mass certainly below −L, are at most ``tol/(4k)`` (so moving the former to +∞ and
       dropping the latter costs about tol/4 after k steps).
    2. Raise L until the Chernoff bounds ``e^{kα^±(λ) − λL}`` on the composed mass outside
       [−L, L), with α^± from the upper and lower PLDs on a coarse grid of 2^15 points, are at
       most tol/4 for the best λ.
    The final error terms are computed rigorously on the real grid; this only picks L. The
    tolerance comes as its logarithm (``1e-3 × delta`` underflows for δ below 1e-305).
    """
    per_step = math.exp(log_tol - math.log(4.0 * k))  # 0 if it underflows: tails must vanish
    big = 1.0
    for _ in range(40):
        pts = np.array([-big, big])
        good = True
        for src in sources:
            t_up, t_lo, _ = _source_survival(src, np.nextafter(pts, -np.inf),
                                             np.nextafter(pts, np.inf))
            # mass that is certainly finite and above L, or certainly below −L (the bounds of a
            # pair curve carry a slack of their own that no L removes)
            if float(t_lo[1]) - _p_inf_upper(src) > per_step or 1.0 - float(t_up[0]) > per_step:
                good = False
                break
        if good:
            break
        big *= 1.5
    else:
        raise NumericalError("could not find a truncation bound L at which the single-step "
                             "privacy loss tails fall below the tolerance")
    best = big
    # the coarse grid covers [−2L₁, 2L₁): an atom of the loss at ±L₁ itself (Laplace: ±ε₀ =
    # ±1 = the first L₁) must be inside it, not sent to ±∞ where no Chernoff bound sees it
    r0 = 2**15
    dx0 = 4 * big / r0
    x0 = (np.arange(r0, dtype=float) - r0 // 2) * dx0
    lam = np.append(_LAMBDAS, big / 2)
    log_tol = log_tol - math.log(4.0)
    for src in sources:
        g = _grid_pld(src, dx0, r0)
        for masses in (g.upper, g.lower):
            if not np.any(masses > 0):
                continue
            for sign in (1.0, -1.0):
                with np.errstate(over="ignore", invalid="ignore"):
                    need = (k * _log_mgf(masses, sign * x0, lam) - log_tol) / lam
                need = need[~np.isnan(need)]
                best = max(best, float(np.min(need)) if need.size else math.inf)
    if not math.isfinite(best):
        raise NumericalError("could not find a truncation bound L at which the Chernoff bounds "
                             "on the composed privacy loss fall below the tolerance")
    if eps is not None:
        best = max(best, eps + 4 * dx0)
    return best * 1.05


def _build(source, k: int, L: float, r: int) -> tuple[_Composed, _Composed]:
    dx = 2.0 * L / r
    grid = _grid_pld(source, dx, r)
    return _compose(grid, k)


def fourier_accountant(source, *, count: int, eps: float | None = None,
                       delta: float | None = None, L: float | None = None, r: int | None = None,
                       grid_step: float | None = None, tail_tol: float | None = None
                       ) -> FourierBracket:
    """The Fourier accountant (Zhao & Liu 2023, Algorithm 1; Koskela et al. 2020, 2021) with
    certified error terms: a bracket on δ(ε) (``eps`` given) or on ε(δ) (``delta`` given) after
    ``count`` compositions of the same mechanism.

    See the module docstring for the construction and every error term. The bracket is certified
    for the *pair* described by ``source``; whether that pair dominates the mechanism is the
    source's business (``MixturePLD.certified``; a ``PairCurve`` is a dominating pair by
    construction), and the result says which: ``certified=False`` (``status == "estimate"``)
    as soon as one source is a :class:`MixturePLD` with ``certified=False`` (WR, MUST) — its
    numbers are then estimates for the mechanism, not guarantees. For an asymmetric relation
    pass both orientations (a sequence): the result is the worse one (MUST Theorem 4(a)).

    **Grid drift.** Each composition rounds the loss up (upper) or down (lower) by up to one
    grid step, so the two sides drift apart by up to ``count × Δx`` in the loss — that is the
    method as published. privamp's ``pld`` backend uses a drift-free construction; this backend
    exists for comparison.

    Parameters
    ----------
    source : PairCurve, MixturePLD or sequence of them
        One step's dominating pair (both orientations for add/remove).
    count : int
        Number of compositions k ≥ 1.
    eps, delta : float
        Exactly one: ε ≥ 0 (returns a bracket on δ) or δ ∈ (0, 1) (returns a bracket on ε).
    L : float, optional
        Truncation bound; the grid covers ``[−L, L)``. Default: the smallest L (×1.05) for which
        the single-step tails beyond ±L are below ``tail_tol/(4 count)`` and the Chernoff bound
        on the composed mass outside the window is below ``tail_tol/4``.
    r : int, optional
        Number of grid points: even and 5-smooth (2^a·3^b·5^c, the FFT lengths with derived
        rounding-error constants), ≤ 2^24 (``NumericalError`` above). Default:
        ``2⌈L/grid_step⌉`` rounded up to such a number, between 2^14 and 2^22 (beyond 2^22
        the drift k·Δx exceeds the requested resolution: the bracket says so by its width).
    grid_step : float, optional
        Requested Δx when r is not given. Default ``0.02/count`` (a drift of about 0.02 in ε).
    tail_tol : float, optional
        Target for the truncation terms when L is chosen automatically: default 1e-12 (absolute)
        when ``eps`` is given, ``1e-3 × delta`` when ``delta`` is given.

    Returns
    -------
    FourierBracket
        ``(lower, upper)`` on δ(ε) (clipped to [0, 1]) or on ε(δ) (``upper = inf`` when the
        grid cannot certify the target), and ``certified`` (see above).

    Raises
    ------
    InvalidParameterError
        Bad count, eps, delta, L, r, grid_step, tail_tol, or not exactly one of eps and delta.
    NumericalError
        r > 2^24; an automatic grid on which the drift ``count × Δx`` would exceed
        :data:`MAX_AUTO_DRIFT` (10) — many compositions over a wide window, where the bracket
        would be uninformative (pass ``L`` and ``r`` to force it); no truncation bound L found.

    Examples
    --------
    >>> from privamp.sampling import WOR
    >>> pld = MixturePLD.from_scheme(WOR(n=100, m=10), noise_multiplier=1.0)
    >>> b = fourier_accountant(pld, count=20, eps=1.0, L=8.0, r=2**14)
    >>> round(b.lower, 3), round(b.upper, 3), b.status
    (0.088, 0.091, 'certified')
    >>> from privamp.sampling import WR
    >>> fourier_accountant(MixturePLD.from_scheme(WR(n=100, m=10), 1.0), count=20, eps=1.0,
    ...                    L=8.0, r=2**14).status
    'estimate'
    """
    sources = _sources(source)
    k = check_int("count", count, "[1, inf)")
    if (eps is None) == (delta is None):
        raise InvalidParameterError("eps/delta", "exactly one of eps and delta",
                                    (eps, delta))
    if eps is not None:
        eps = check_real("eps", eps, "[0, inf)")
    if delta is not None:
        delta = check_real("delta", delta, "(0, 1)")
    L, r = _check_grid(L, r)
    if grid_step is not None:
        grid_step = check_real("grid_step", grid_step, "(0, inf)")
        if r is not None:
            raise InvalidParameterError("grid_step", "omitted when r is given", grid_step)
    if tail_tol is not None:
        log_tail_tol = math.log(check_real("tail_tol", tail_tol, "(0, 1)"))
    elif eps is not None:
        log_tail_tol = math.log(DEFAULT_TAIL_TOL_FOR_EPS)
    else:
        log_tail_tol = math.log(DEFAULT_TAIL_TOL_FOR_DELTA) + math.log(delta)
    if L is None:
        L = _auto_L(sources, k, log_tail_tol, eps)
    if r is None:
        step = grid_step if grid_step is not None else DEFAULT_EPS_RESOLUTION / k
        r_want = 2 * math.ceil(min(L / step, 1e30))
        if grid_step is not None and r_want > MAX_GRID:
            raise NumericalError(f"grid_step {grid_step!r} over [-{L:g}, {L:g}) needs "
                                 f"{r_want:,} points, more than {MAX_GRID:,} (2^24)")
        # 5-smooth (the analysed FFT lengths); the bounds are powers of two
        r = min(max(_even_fast_length(min(r_want, DEFAULT_MAX_GRID)), MIN_DEFAULT_GRID),
                DEFAULT_MAX_GRID)
        drift = k * 2 * L / r
        if drift > MAX_AUTO_DRIFT:
            raise NumericalError(
                f"the Fourier accountant cannot resolve {k:,} compositions here: its upper and "
                f"lower sides drift apart by count × grid step = {drift:.3g} in the privacy "
                f"loss on its largest automatic grid ({r:,} points over [-{L:.4g}, {L:.4g})), "
                f"more than {MAX_AUTO_DRIFT:g}; the bracket would carry no information. Use "
                "the 'pld' backend (no drift), or force it with explicit L and r (up to 2^24) "
                "in privamp.pld.fourier.fourier_accountant")
    lowers, uppers = [], []
    for src in sources:
        upper, lower = _build(src, k, L, r)
        if eps is not None:
            lowers.append(lower.delta(eps))
            uppers.append(upper.delta(eps))
        else:
            lowers.append(lower.epsilon(delta))
            uppers.append(upper.epsilon(delta))
    certified = all(getattr(src, "certified", True) for src in sources)
    low, up = float(max(lowers)), float(max(uppers))
    if not all(getattr(src, "convex", True) for src in sources):
        # a bound that is not a privacy profile (Theorem 14, black-box groups): its upper side
        # is valid, its lower side is not a lower bound of anything (docs/certification.md)
        return FourierBracket(None, up, certified=certified)
    if low > up * (1 + 1e-9) + 1e-300:
        raise InconsistentBoundsError(
            f"internal inconsistency: the Fourier accountant's lower end {low!r} exceeds its "
            f"upper end {up!r}; please report this (privamp refuses rather than report either)")
    return FourierBracket(min(low, up), up, certified=certified)
