"""Hockey-stick curves of dominating pairs, the input of PLD discretisation.

A mechanism M is dominated by an ordered pair (P, Q) when, for every ordered pair of neighbouring
datasets (x, x') of the relation, ``D_α(M(x) ‖ M(x')) ≤ D_α(P ‖ Q)`` for **every** α ≥ 0 (not
only α ≥ 1): then compositions of mechanisms are dominated by products of pairs (Zhu, Dong, Wang
2022). privamp describes a pair by its curve ``ε ↦ log D_{e^ε}(P ‖ Q)`` on the whole real line:

* :class:`ProfileCurve` — a symmetric relation: the pair must dominate both orientations, and the
  profile's symmetric extension ``1 − e^ε + e^ε δ(−ε)`` (ε < 0) is exactly the supremum over
  ordered pairs. Any privacy profile (closed form, amplified, tabulated) gives one.
* :class:`PoissonPairCurve` — Poisson subsampling under add/remove of any mechanism given by a
  dominating pair (P, Q) of its "with the record / without it" outputs: the *remove* pair
  ``((1 − γ)Q + γP, Q)`` and the *add* pair ``(Q, (1 − γ)Q + γP)`` (Zhu, Dong, Wang 2022,
  Theorem 11). The two orientations differ — their symmetrisation is up to 30 % looser after
  composition — so an accountant composes each separately and reports the worse.
* :class:`PoissonGaussianCurve` — the same for the Gaussian mechanism, in closed form (values and
  the slope ``−Q(L > ε)``; Mironov et al. 2019).

Each curve gives ``log_upper(eps)`` (an upper bound) and ``log_lower(eps)`` (a lower bound), and
the mass at +∞ (the limit ε → ∞).
"""

from __future__ import annotations

import abc
import math

import numpy as np

from .. import _special
from .._numerics import ULP, log1mexp, log_expm1, log_sub, round_down_log, round_up_log
from .._validation import check_real
from ..amplification.subsampling import deamplify_eps
from ..mechanisms.gaussian import gaussian_log_delta
from ..profiles import PrivacyProfile

__all__ = ["PairCurve", "PoissonGaussianCurve", "PoissonPairCurve", "ProfileCurve"]

#: Relative slack between the upper and the lower value of a closed-form curve. The closed forms
#: are within ~1e-11 relative in log of 80-digit references (tests/test_profiles.py); the lower
#: curve is only used for the lower end of a bracket.
_LOWER_SLACK = 1e-9


#: Absolute slack for values that may be subnormal: exp, a product or a quotient landing below
#: the normal range is accurate to half a subnormal spacing (2^-1075), not to a relative ulp.
_SUBNORMAL_SLACK = 4 * 2.0**-1074


def _with_secants(eps, where, closed, secant, tau, f_lo):
    """One side of the slope bounds: ``closed`` at the points ``where`` (a mask of the
    flattened ``eps``), ``secant(eps, tau, f_lo)`` at the others."""
    where = where.reshape(np.shape(eps))
    out = np.empty(np.shape(eps))
    out[where] = closed
    out[~where] = secant(eps[~where], tau, f_lo[~where])
    return out


class PairCurve(abc.ABC):
    """``ε ↦ log D_{e^ε}(P ‖ Q)`` for a dominating pair, on all of ℝ."""

    #: "symmetric" or the orientation ("remove" / "add") of an add/remove pair.
    orientation: str = "symmetric"
    #: relative gap between :meth:`log_upper` and :meth:`log_lower`
    lower_slack: float = _LOWER_SLACK
    #: whether :meth:`log_upper` and :meth:`log_lower` bound a convex curve (a real pair); a
    #: bound that is not convex still gives a valid upper side (the convex minorant of upper
    #: values dominates the convex curve below them) but no lower side
    convex: bool = True

    @abc.abstractmethod
    def log_upper(self, eps: np.ndarray) -> np.ndarray:
        """Upper bound on log D_{e^ε}(P ‖ Q), any real ε (1-D array)."""

    def log_lower(self, eps: np.ndarray) -> np.ndarray:
        """Lower bound on log D_{e^ε}(P ‖ Q). This default is the bound every pair satisfies,
        ``D_α ≥ max(1 − α, 0)`` (take the whole space): a curve that cannot certify better
        values gets no useful lower end, never a wrong one. Every curve of privamp overrides
        it with certified values."""
        eps = np.asarray(eps, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = round_down_log(log1mexp(np.minimum(eps, 0.0)), ulps=8)
        return np.where(eps < 0, val, -np.inf)

    def slope_bounds(self, eps: np.ndarray, tau: float | np.ndarray,
                     log_lower: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Bounds ``(s_lo, s_hi)`` with ``s_lo ≤ f'(α−) ≤ f'(α+) ≤ s_hi`` at α = e^ε.

        ``log_lower``: ``self.log_lower(eps)`` when the caller has it already (it is reused, not
        recomputed: one evaluation of the curve fewer per point). ``tau`` may be an array of
        the shape of ``eps`` (a window per point; every implementation is element-wise).

        The slope of f is ``−Q(L > ε)``. This default brackets it by the secants of f on
        ``[α e^{−τ}, α]`` and ``[α, α e^{τ}]`` (f is convex), from the lower and upper values,
        every rounding directed, at the points where :meth:`_closed_slopes` has no closed
        form; curves with a closed-form Q-tail everywhere override it.

        With certified lower values as tight as the upper ones, the default secants' rounding
        (of exp, of α − α e^{−τ}, of the abscissae ε ± τ) is no longer hidden under a 1e-11
        value gap: it is ~ulp/τ relative, 5e-11 at τ = 4e-6, and it made the tangent lines of
        the lower discretisation cross f (P-masses summing to 1 + 2e-12). Here the secants are
        between the exact points e^ε and e^{fl(ε ∓ τ)} at which f is bounded, the values
        exponentiated with 2 ulp margins, and the abscissa gaps ``e^ε |expm1(fl(ε±τ) − ε)|``
        bounded within 8 ulp.
        """
        eps = np.asarray(eps, dtype=float)
        shape = eps.shape
        eps = eps.reshape(-1)
        tau = np.asarray(tau, dtype=float).reshape(-1) if np.ndim(tau) else tau
        closed = self._closed_slopes(eps)
        rest = None if closed is None else np.flatnonzero(~closed[0])
        e = eps if rest is None else eps[rest]
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            if log_lower is None:
                ll = self.log_lower(e)
            else:
                ll = np.asarray(log_lower, dtype=float).reshape(-1)
                ll = ll if rest is None else ll[rest]
            f_lo = np.exp(ll) * (1 - 2 * ULP)
        t = tau if rest is None or not np.ndim(tau) else tau[rest]
        sec_lo, sec_hi = self._secant_lo(e, t, f_lo), self._secant_hi(e, t, f_lo)
        if closed is None:
            return sec_lo.reshape(shape), sec_hi.reshape(shape)
        where, c_lo, c_hi = closed
        s_lo, s_hi = np.empty(eps.shape), np.empty(eps.shape)
        s_lo[where], s_hi[where] = c_lo, c_hi
        s_lo[rest], s_hi[rest] = sec_lo, sec_hi
        return s_lo.reshape(shape), s_hi.reshape(shape)

    def lower_with_slopes(self, eps: np.ndarray, tau: float | np.ndarray
                          ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``(log_lower(eps), slope_bounds(eps, tau))``, the same numbers, with every value of
        the curve evaluated once. This default passes the lower values on to
        :meth:`slope_bounds`; curves made of other curves (:class:`~privamp.pld.mixture_curve.\
MixtureCurve`, ``MaxCurve``) override it so that their components do the same, instead of
        evaluating their lower values a second time inside :meth:`slope_bounds`."""
        log_lower = self.log_lower(eps)
        return log_lower, self.slope_bounds(eps, tau, log_lower=log_lower)

    def _closed_slopes(self, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Slope bounds in closed form where the curve has them, independent of the secant
        width: ``(where, s_lo, s_hi)``, ``where`` a boolean mask of the 1-D ``eps`` and the
        bounds at those points; ``None`` (this default) where it has none. :meth:`slope_bounds`
        and the P-tail bounds take the secants at the other points."""
        return None

    def _secant_lo(self, eps: np.ndarray, tau: float | np.ndarray,
                   f_lo: np.ndarray) -> np.ndarray:
        """The default ``s_lo`` of :meth:`slope_bounds` (secant on [α e^{−τ}, α]); ``f_lo``: the
        lower value at α, exponentiated with its 2-ulp margin."""
        e_left = eps - tau
        # (a window below the ulp of ε gives a zero gap: the bound is then trivial, -1 or 0)
        with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
            alpha = np.exp(eps)
            f_left_up = np.exp(self.log_upper(e_left)) * (1 + 2 * ULP)
            # α − x_l, within 4 ulp (exp, expm1 of an exact difference, product)
            gap_left = alpha * -np.expm1(e_left - eps)
            # f'(α−) ≥ (f(α) − f(x_l))/(α − x_l) ≥ (f_lo − f_left_up)/(gap, rounded down): the
            # numerator is ≤ 0, so a smaller gap gives a smaller (safe) slope
            num_lo = (f_lo - f_left_up) * (1 + ULP) - _SUBNORMAL_SLACK
            s_lo = num_lo / (gap_left * (1 - 8 * ULP)) * (1 + ULP) - _SUBNORMAL_SLACK
        return np.clip(np.nan_to_num(s_lo, nan=-1.0), -1.0, 0.0)

    def _secant_hi(self, eps: np.ndarray, tau: float | np.ndarray,
                   f_lo: np.ndarray) -> np.ndarray:
        """The default ``s_hi`` of :meth:`slope_bounds` (secant on [α, α e^{τ}])."""
        e_right = eps + tau
        # (a window below the ulp of ε gives a zero gap: the bound is then trivial, -1 or 0)
        with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
            alpha = np.exp(eps)
            f_right_up = np.exp(self.log_upper(e_right)) * (1 + 2 * ULP)
            gap_right = alpha * np.expm1(e_right - eps)
            # f'(α+) ≤ (f(x_r) − f(α))/(x_r − α) ≤ (f_right_up − f_lo)/(gap, rounded up) when the
            # numerator is ≤ 0 (else the bound is 0: f is non-increasing)
            num_hi = (f_right_up - f_lo) * (1 - ULP) + _SUBNORMAL_SLACK
            s_hi = np.where(num_hi < 0, num_hi / (gap_right * (1 + 8 * ULP)) * (1 - ULP)
                            + _SUBNORMAL_SLACK, 0.0)
        return np.clip(np.nan_to_num(s_hi, nan=0.0), -1.0, 0.0)

    def p_tail_bounds(self, eps: np.ndarray, tau: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
        """Bounds on ``P(L > ε)`` (the privacy loss under P; ``L = +∞`` included).

        From ``D_α(P‖Q) = P(L > ε) − α Q(L > ε)`` and ``Q(L > ε) = −f'(α)``:
        ``P(L > ε) = f(α) − α f'(α)``, bracketed with the value and slope bounds.
        """
        alpha = np.exp(eps)
        s_lo, s_hi = self.slope_bounds(eps, tau)
        with np.errstate(under="ignore"):
            f_lo = np.exp(self.log_lower(eps))
            f_up = np.exp(self.log_upper(eps))
        lower = np.clip((f_lo - alpha * s_hi) * (1 - 4 * ULP), 0.0, 1.0)
        upper = np.clip((f_up - alpha * s_lo) * (1 + 4 * ULP), 0.0, 1.0)
        return lower, upper

    def p_tail_upper(self, eps: np.ndarray, taus: tuple[float, ...]) -> np.ndarray:
        """The smallest of :meth:`p_tail_bounds`' upper bounds over the secant widths ``taus``
        (NaN taken as the trivial bound 1), computed with each value of the curve evaluated once:
        the upper bound needs only the left secant, so with the default :meth:`slope_bounds`
        the right one is not evaluated. The same numbers as the loop over ``p_tail_bounds``."""
        alpha = np.exp(eps)
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            log_lower = self.log_lower(eps)
            f_lo = np.exp(log_lower) * (1 - 2 * ULP)
            f_up = np.exp(self.log_upper(eps))
        default = type(self).slope_bounds is PairCurve.slope_bounds
        closed = self._closed_slopes(np.asarray(eps).reshape(-1)) if default else None
        out = np.ones(np.shape(eps))
        for tau in taus:
            if closed is not None:  # the closed form once, the left secants elsewhere
                s_lo = _with_secants(eps, closed[0], closed[1], self._secant_lo, tau, f_lo)
            else:
                s_lo = (self._secant_lo(eps, tau, f_lo) if default
                        else self.slope_bounds(eps, tau, log_lower)[0])
            with np.errstate(under="ignore", over="ignore", invalid="ignore"):
                up = np.clip((f_up - alpha * s_lo) * (1 + 4 * ULP), 0.0, 1.0)
            out = np.fmin(out, np.where(np.isnan(up), 1.0, up))
        return out

    def p_tail_lower(self, eps: np.ndarray, taus: tuple[float, ...]) -> np.ndarray:
        """The largest of :meth:`p_tail_bounds`' lower bounds over ``taus`` (NaN taken as 0),
        each value evaluated once and, with the default :meth:`slope_bounds`, only the right
        secant (the one the lower bound uses)."""
        alpha = np.exp(eps)
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            log_lower = self.log_lower(eps)
            f_lo_slope = np.exp(log_lower) * (1 - 2 * ULP)
            f_lo = np.exp(log_lower)
        default = type(self).slope_bounds is PairCurve.slope_bounds
        closed = self._closed_slopes(np.asarray(eps).reshape(-1)) if default else None
        out = np.zeros(np.shape(eps))
        for tau in taus:
            if closed is not None:  # the closed form once, the right secants elsewhere
                s_hi = _with_secants(eps, closed[0], closed[2], self._secant_hi, tau, f_lo_slope)
            else:
                s_hi = (self._secant_hi(eps, tau, f_lo_slope) if default
                        else self.slope_bounds(eps, tau, log_lower)[1])
            with np.errstate(under="ignore", over="ignore", invalid="ignore"):
                lo = np.clip((f_lo - alpha * s_hi) * (1 - 4 * ULP), 0.0, 1.0)
            out = np.fmax(out, np.where(np.isnan(lo), 0.0, lo))
        return out

    def log_excess(self, eps: np.ndarray) -> np.ndarray:
        """Upper bound on ``log(f(α) − (1 − α))`` for ε ≤ 0 — equal to ``ε + log D_{1/α}(Q‖P)``,
        which bounds the P-mass of small losses: ``P(L < ε₀) ≤ e^{ε₀}(f(α) − 1 + α)/(α − e^{ε₀})``
        for any α > e^{ε₀}. This default subtracts in floating point (noisy near the line
        1 − α); curves with the reverse divergence at hand override it."""
        alpha = np.exp(eps)
        with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
            f_up = np.exp(self.log_upper(eps))
            diff = f_up - (1.0 - alpha) + 4 * ULP
            return np.log(np.maximum(diff, 0.0))

    @property
    def log_mass_at_infinity(self) -> float:
        """log D_∞(P ‖ Q) = log P(q = 0), an upper bound (``-inf`` if P ≪ Q)."""
        return float(self.log_upper(np.array([np.inf]))[0])

    @property
    def log_q_mass_at_minus_infinity(self) -> float:
        """A lower bound on log Q(p = 0), the Q-mass of the loss −∞ (``-inf``: none known).
        It has no P-mass, so the left tail of the loss may leave it out
        (:func:`privamp.pld.engine._left_end`)."""
        return -math.inf

    def kinks(self) -> tuple[np.ndarray, float] | None:
        """The atoms of the pair's (finite) privacy loss, if it has only finitely many and no
        continuous part: ``(positions, error)``, every atom within ``error`` of a listed
        position (the list may hold extra points). Then f is affine in α between the atoms,
        which lets the PLD engine put them exactly on its grid (``None``: not known to be
        discrete)."""
        return None

    def atoms(self) -> np.ndarray | None:
        """Approximate positions of the atoms of the pair's (finite) privacy loss, also when
        the loss has a continuous part as well (``None``: none known). A matter of tightness
        only: the engine puts them on grid points of the upper discretisation, where
        connect-the-dots is exact at a kink, and just above grid points of the lower one, which
        keeps them nearly whole (:func:`privamp.pld.grids._atom_offset`).
        Defaults to the positions of :meth:`kinks`."""
        kinks = self.kinks()
        return None if kinks is None else np.asarray(kinks[0], dtype=float)


class ProfileCurve(PairCurve):
    """The symmetric dominating curve of a privacy profile (its extension to ε < 0).

    The upper values are the profile's own (certified upper bounds), the lower values its
    certified lower values (:meth:`~privamp.profiles.PrivacyProfile.log_delta_lower`, a lower
    bound on the function the profile represents), carried through the symmetric extension
    ``1 − e^ε + e^ε δ(−ε)``, which is increasing in δ, with the log-add-exp rounded down. They
    only serve the lower end of brackets, never a reported guarantee; where a profile has no
    lower information its lower value is −inf (δ ≥ 0), and still ``1 − e^ε`` for ε < 0.
    """

    orientation = "symmetric"
    #: Not a gap between the upper and lower values any more (those are certified separately):
    #: only the secant width of the slope bounds, τ = max(h/256, 4√lower_slack), in
    #: :func:`privamp.pld.discretize.lower_masses`; 1e-12 gives τ ≥ 4e-6, a step above the
    #: rounding-level gap of well-conditioned profiles.
    lower_slack = 1e-12

    def __init__(self, profile: PrivacyProfile):
        self.profile = profile

    def _curve(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        side = self.profile._log_delta_lower if lower else self.profile._log_delta
        out = np.empty(eps.shape)
        pos = eps >= 0
        neg = ~pos
        if np.any(pos) and np.any(neg):
            # a grid symmetric about 0 asks for δ at ε and, through the extension, at −ε: one
            # call at the distinct magnitudes serves both (each value is the profile's bound at
            # its own point, whatever else the call holds: :meth:`PrivacyProfile._log_delta`
            # is evaluated point by point; only the last bits of NumPy's vector loops may
            # depend on the call, inside the error model every margin covers)
            mags, where = np.unique(np.concatenate([eps[pos], -eps[neg]]), return_inverse=True)
            values = side(mags)[where]
            at_pos, at_neg = values[:np.count_nonzero(pos)], values[np.count_nonzero(pos):]
        else:
            at_pos = side(eps[pos]) if np.any(pos) else None
            at_neg = side(-eps[neg]) if np.any(neg) else None
        if at_pos is not None:
            out[pos] = np.minimum(at_pos, 0.0)
        if at_neg is not None:
            e = eps[neg]
            with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
                # 1 − e^ε + e^ε δ(−ε) is increasing in δ: the profile's bound of either side
                # gives the extension's. log1mexp is within 3 ulp of its magnitude, e + log δ
                # within ½ ulp of its own, the log-add-exp within ½ ulp of the result: the
                # error is at most 4 ulp (|log sum| + Σ w_i |term_i|), w_i the terms' shares —
                # relative to the value even where log f ≈ −e^{ε} is tiny (a margin of ulp·1
                # there would turn f < 1 into f = 1)
                t1 = log1mexp(e)
                t2 = e + np.minimum(at_neg, 0.0)
                val = np.logaddexp(t1, t2)
                w1 = np.exp(t1 - val)
                w2 = np.where(np.isneginf(t2), 0.0, np.exp(t2 - val))
                margin = 4 * ULP * (np.abs(val) + w1 * np.abs(t1)
                                    + np.where(w2 > 0, w2 * np.abs(t2), 0.0))
                val = val - margin if lower else val + margin
            out[neg] = np.where(np.isneginf(e), 0.0, np.minimum(val, 0.0))
        return out

    def log_upper(self, eps):
        return self._curve(eps, lower=False)

    def log_lower(self, eps):
        return self._curve(eps, lower=True)

    def _closed_slopes(self, eps):
        """At ε > 0, f is the profile itself: its closed-form Q-tail
        (:meth:`~privamp.profiles.PrivacyProfile._log_q_tail`: the Gaussian and its subsampled
        sums) brackets the slope −Q(L > ε) directly. Only a profile class's own method counts
        (a subclass that changes ``_log_delta`` keeps the secants). The values are
        exponentiated with 2-ulp relative margins and :data:`_SUBNORMAL_SLACK` absolute ones
        (a subnormal result has only an absolute accuracy)."""
        if "_log_q_tail" not in vars(type(self.profile)):
            return None
        where = eps > 0  # NaN and ε ≤ 0 keep the secants
        pos = eps[where]
        if pos.size == 0:
            return None
        q_hi = self.profile._log_q_tail(pos, False)
        q_lo = None if q_hi is None else self.profile._log_q_tail(pos, True)
        if q_lo is None:
            return None
        with np.errstate(under="ignore"):
            s_lo = -np.minimum(np.exp(q_hi) * (1 + 2 * ULP) + _SUBNORMAL_SLACK, 1.0)
            s_hi = -np.clip(np.exp(q_lo) * (1 - 2 * ULP) - _SUBNORMAL_SLACK, 0.0, 1.0)
        return where, s_lo, s_hi

    def log_excess(self, eps):
        if eps.size == 0:
            return np.empty(0)
        with np.errstate(invalid="ignore"):
            return eps + np.minimum(self.profile._log_delta(-eps), 0.0)

    def kinks(self):
        return self.profile.curve_kinks()

    def atoms(self):
        return self.profile.curve_atoms()

    @property
    def log_q_mass_at_minus_infinity(self) -> float:
        """The symmetric curve: Q(p = 0) = P(q = 0) = δ(∞), from the lower value."""
        return float(self.log_lower(np.array([np.inf]))[0])

    @property
    def convex(self) -> bool:
        return self.profile.is_curve

    def __repr__(self) -> str:
        return f"ProfileCurve({self.profile!r})"


class PoissonPairCurve(PairCurve):
    """Poisson subsampling (rate γ) under add/remove of a mechanism with dominating pair (P, Q).

    ``base`` is the curve of (P, Q), a dominating pair of the base mechanism's outputs *with* the
    differing record against *without* it, and must be **self-dual** (the curve of (Q, P) is the
    same; true of every :class:`ProfileCurve`, whose symmetric extension dominates both orders).
    With f the base curve, α = e^ε and c = 1 − α(1 − γ) (Zhu, Dong, Wang 2022, Theorem 11; the
    formulas are the hockey-stick divergences of the mixtures, exact for the pairs):

    * remove, ``((1 − γ)Q + γP, Q)``: ``γ f((α − 1 + γ)/γ)`` for α > 1 − γ, ``1 − α`` below;
    * add, ``(Q, (1 − γ)Q + γP)``: ``c f(αγ/c)`` while c > 0, and 0 once α ≥ 1/(1 − γ).

    Each orientation is evaluated for ε ≥ 0 from these and for ε < 0 from the other through
    ``D_α(P‖Q) = 1 − α + α D_{1/α}(Q‖P)``. Upper values round the inner argument down (f is
    non-increasing) and c up; lower values the other way round, from the base's lower values.
    At γ = 1 both orientations are the base curve itself (c = 1).

    >>> from privamp.mechanisms import LaplaceMechanism
    >>> f = ProfileCurve(LaplaceMechanism(1.0).profile())
    >>> rem, add = (PoissonPairCurve(f, 0.01, o) for o in ("remove", "add"))
    >>> e = np.array([0.005])
    >>> bool(rem.log_upper(e)[0] > add.log_upper(e)[0])
    True
    """

    def __init__(self, base: PairCurve, rate: float, orientation: str = "remove"):
        if not isinstance(base, PairCurve) or base.orientation != "symmetric":
            raise ValueError("base must be a symmetric (self-dual) PairCurve")
        self.base = base
        self.rate = check_real("rate", rate, "(0, 1]")
        if orientation not in ("remove", "add"):
            raise ValueError(f"orientation must be 'remove' or 'add', not {orientation!r}")
        self.orientation = orientation
        self.lower_slack = base.lower_slack

    # ---- the two orientations at ε ≥ 0 (log values; upper or lower bounds) ----------------

    def _remove_pos(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        g = self.rate
        # β = (α − 1 + γ)/γ ≥ 1: log β = log(1 + (e^ε − 1)/γ), rounded down by deamplify_eps;
        # its error is below 8 ulp, so +16 ulp is above the exact value
        log_beta = np.atleast_1d(deamplify_eps(eps, g))
        if lower:
            with np.errstate(invalid="ignore"):
                log_beta = np.where(np.isfinite(log_beta),
                                    log_beta + 16 * ULP * np.abs(log_beta) + 1e-300, log_beta)
            val = math.log(g) + self.base.log_lower(log_beta)
            return round_down_log(val, ulps=4)
        return round_up_log(math.log(g) + self.base.log_upper(log_beta), ulps=4)

    def _add_pos(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        g = self.rate
        out = np.full(eps.shape, -np.inf)
        finite = np.isfinite(eps)
        if g == 1.0:
            # c = 1 for every α, ∞ included: the add pair is the base pair reversed, whose
            # mass at +∞ is the base's (the base is self-dual)
            log_c = np.zeros(eps.shape)
            log_beta = eps.copy()
        else:
            l1g = math.log1p(-g)
            with np.errstate(invalid="ignore", over="ignore"):
                x = eps + l1g  # log(α(1 − γ)) < 0 while c > 0
                err = 4 * ULP * (np.abs(eps) + abs(l1g))
                # c = 1 − e^x from the end of x's error interval that rounds c up (or down)
                xe = x + err if lower else x - err
                log_c = np.where(finite & (xe < 0), log1mexp(np.minimum(xe, 0.0)), -np.inf)
                log_beta = eps + math.log(g) - log_c
                margin = 4 * ULP * (np.abs(eps) + abs(math.log(g)) + np.abs(log_c)) + 1e-300
                log_beta = log_beta + margin if lower else log_beta - margin
        ok = np.isfinite(log_c)
        if np.any(ok):
            # β = αγ/c ≥ 1 exactly for α ≥ 1: rounding may not take it below
            lb = np.maximum(log_beta[ok], 0.0)
            if lower:
                out[ok] = round_down_log(log_c[ok] + self.base.log_lower(lb), ulps=4)
            else:
                out[ok] = round_up_log(log_c[ok] + self.base.log_upper(lb), ulps=4)
        return out

    def _pos(self, orientation: str, eps: np.ndarray, lower: bool = False) -> np.ndarray:
        if orientation == "remove":
            return self._remove_pos(eps, lower)
        return self._add_pos(eps, lower)

    def _curve(self, eps: np.ndarray, lower: bool) -> np.ndarray:
        other = "add" if self.orientation == "remove" else "remove"
        out = np.empty(eps.shape)
        pos = eps >= 0
        if np.any(pos):
            out[pos] = self._pos(self.orientation, eps[pos], lower)
        neg = ~pos
        if np.any(neg):
            e = eps[neg]
            with np.errstate(invalid="ignore"):
                val = np.logaddexp(log1mexp(e), e + self._pos(other, -e, lower))
            val = round_down_log(val, ulps=4) if lower else round_up_log(val, ulps=4)
            out[neg] = np.where(np.isneginf(e), 0.0, val)
        return np.minimum(out, 0.0)

    def log_upper(self, eps):
        return self._curve(np.asarray(eps, dtype=float), lower=False)

    def log_lower(self, eps):
        return self._curve(np.asarray(eps, dtype=float), lower=True)

    def log_excess(self, eps):
        other = "add" if self.orientation == "remove" else "remove"
        with np.errstate(invalid="ignore"):
            return eps + self._pos(other, -eps)

    @property
    def convex(self) -> bool:
        return self.base.convex

    def kinks(self):
        """Atoms of the subsampled loss: ``±log(1 − γ + γe^{±l})`` for the base atoms l (remove:
        log(1 − γ + γe^l) under the mixture; add: −log(1 − γ + γe^l) under Q), and ±log(1 − γ)
        for the outcomes only Q can produce (mass at −∞ in the base, present iff its mass at
        +∞ is, the base being self-dual). The maps have slope ≤ 1, so the base's error
        carries over, plus rounding."""
        base = self.base.kinks()
        if base is None:
            return None
        pos, err = base
        out = self._mapped_atoms(pos)
        if out is None:
            return None
        return out, err + 8 * ULP * (1 + float(np.max(np.abs(out), initial=0.0)))

    @property
    def log_q_mass_at_minus_infinity(self) -> float:
        """add, (Q, (1 − γ)Q + γP): the mixture's mass where Q = 0, γ P(Q = 0) (the base's mass
        at +∞); remove, ((1 − γ)Q + γP, Q): Q's mass where the mixture vanishes, none for γ < 1
        and the base's mass at −∞ (the same, self-dual) for γ = 1. Lower values, rounded down."""
        base = float(self.base.log_lower(np.array([np.inf]))[0])
        if not base > -math.inf:
            return -math.inf
        if self.orientation == "add":
            val = math.log(self.rate) + base
            return val - 4 * ULP * (1.0 + abs(val))
        return base if self.rate == 1.0 else -math.inf

    def atoms(self):
        """The base's atoms mapped as in :meth:`kinks` (Laplace: the two atoms of the
        subsampled loss at ±log(1 − γ + γe^{±θ}), besides its continuous part)."""
        base = self.base.atoms()
        return None if base is None else self._mapped_atoms(base)

    def _mapped_atoms(self, pos) -> np.ndarray | None:
        g = self.rate
        pos = np.asarray(pos, dtype=float)
        with np.errstate(over="ignore"):
            mapped = np.log1p(g * np.expm1(pos))  # log(1 − γ + γ e^l)
        extra = []
        if g < 1 and self.base.log_mass_at_infinity > -np.inf:
            extra.append(math.log1p(-g))
        out = np.concatenate([mapped, extra])
        if self.orientation == "add":
            out = -out
        if not np.all(np.isfinite(out)):
            return None
        return out

    def __repr__(self) -> str:
        return f"PoissonPairCurve({self.base!r}, rate={self.rate!r}, {self.orientation})"


class PoissonGaussianCurve(PairCurve):
    """Exact curves of the Poisson-subsampled Gaussian mechanism under add/remove.

    With θ = Δ/σ and rate γ, the remove orientation is (M, N) = ((1 − γ)N(0,1) + γN(θ,1),
    N(0,1)) and the add orientation is (N, M). For α = e^ε ≥ 1:

    * ``D_α(M ‖ N) = γ δ_θ(log(1 + (α − 1)/γ))`` (advanced joint convexity is an equality here,
      BBG Theorem 2 with μ₀ = μ₁' = N), δ_θ the Gaussian profile;
    * ``D_α(N ‖ M) = c Φ(z*) − αγ Φ(z* − θ)`` with c = 1 − α(1 − γ) and
      z* = (log(c/(αγ)) + θ²/2)/θ, and 0 once c ≤ 0 (the likelihood ratio is monotone in z).

    For α < 1 each orientation uses the other through ``D_α(P‖Q) = 1 − α + α D_{1/α}(Q‖P)``.
    """

    def __init__(self, theta: float, rate: float, orientation: str = "remove",
                 theta_lower: float | None = None):
        self.theta = check_real("theta", theta, "(0, inf)")
        #: a lower bound on the exact θ, for the lower values (default ``theta``)
        self.theta_lower = (self.theta if theta_lower is None
                            else check_real("theta_lower", theta_lower, f"[0, {self.theta!r}]"))
        self.rate = check_real("rate", rate, "(0, 1]")
        if orientation not in ("remove", "add"):
            raise ValueError(f"orientation must be 'remove' or 'add', not {orientation!r}")
        self.orientation = orientation

    def _remove_pos(self, eps: np.ndarray) -> np.ndarray:
        base = np.atleast_1d(deamplify_eps(eps, self.rate))
        return math.log(self.rate) + gaussian_log_delta(self.theta, base)

    def _add_pos(self, eps: np.ndarray) -> np.ndarray:
        th, g = self.theta, self.rate
        out = np.full(eps.shape, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # c = 1 − α(1 − γ): exactly 1 at γ = 1 (no subsampling, the add pair is the plain
            # Gaussian pair reversed). Writing it as −inf there made the add orientation
            # vanish and under-reported ε at rate 1 by up to 100× (issue 15).
            log_c = (log1mexp(eps + math.log1p(-g)) if g < 1
                     else np.where(np.isfinite(eps), 0.0, -np.inf))
        ok = np.isfinite(log_c) & np.isfinite(eps)
        if np.any(ok):
            lc = log_c[ok]
            la = eps[ok] + math.log(g)
            z = (lc - la + th * th / 2) / th
            first = lc + _special.log_ndtr(z)
            second = la + _special.log_ndtr(z - th)
            diff = np.maximum(first - second, 0.0)
            val = log_sub(first, np.minimum(second, first))
            # error of the difference: a few ulp of each term over their gap
            rel = 32 * ULP * (1 + np.abs(first) + np.abs(second)) / np.maximum(diff, 1e-300)
            val = np.where(diff > 0, val + np.log1p(np.minimum(rel, 1.0)), -np.inf)
            out[ok] = round_up_log(np.minimum(val, first), ulps=32)
        return out

    def log_excess(self, eps):
        other = "add" if self.orientation == "remove" else "remove"
        with np.errstate(invalid="ignore"):
            return eps + self._pos(other, -eps)

    def q_tail(self, eps: np.ndarray) -> np.ndarray:
        """Q(L > ε) for this orientation's pair, any real ε (the negative slope of the curve).

        remove (P = mixture, Q = N(0,1)): L = log(1 − γ + γ e^{θz − θ²/2}) is increasing in z,
        so Q(L > ε) = Φ(−z_ε) with z_ε = (log((e^ε − 1 + γ)/γ) + θ²/2)/θ (1 if e^ε ≤ 1 − γ).
        add (P = N(0,1), Q = mixture): L = −log(…) is decreasing, so Q(L > ε) =
        (1 − γ)Φ(z') + γΦ(z' − θ) with z' = (log((e^{−ε} − 1 + γ)/γ) + θ²/2)/θ (0 if
        e^{−ε} ≤ 1 − γ).
        """
        th, g = self.theta, self.rate
        lg = math.log(g)
        x = eps if self.orientation == "remove" else -eps
        # log(e^x − (1 − γ)) for e^x > 1 − γ, as log(γ + (e^x − 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            pos = x >= 0
            lx = np.where(pos, np.logaddexp(lg, log_expm1(np.maximum(x, 0.0))),
                          log_sub(lg, log1mexp(np.minimum(x, -1e-300))))
        valid = np.isfinite(lx) | (np.isposinf(x))
        if g == 1.0:
            lx = x
            valid = np.isfinite(x) | np.isposinf(x)
        z = (lx - lg + th * th / 2) / th
        if self.orientation == "remove":
            tail = np.where(valid, _special.ndtr(-z), 1.0)
            tail = np.where(np.isposinf(x), 0.0, tail)
        else:
            tail = np.where(valid, (1 - g) * _special.ndtr(z) + g * _special.ndtr(z - th), 0.0)
            tail = np.where(np.isposinf(x), 1.0, tail)
        return np.clip(tail, 0.0, 1.0)

    def slope_bounds(self, eps, tau, log_lower=None):
        tail = self.q_tail(eps)
        # (a subnormal tail is accurate to half a spacing, not to a relative ulp)
        return (-np.minimum(tail * (1 + 1e-12) + _SUBNORMAL_SLACK, 1.0),
                -np.maximum(tail * (1 - 1e-12) - _SUBNORMAL_SLACK, 0.0))

    def log_lower(self, eps):
        """Certified lower values: those of the generic construction from the Gaussian
        profile's certified lower values (:class:`PoissonPairCurve`), the same exact curve."""
        if not hasattr(self, "_generic"):
            from ..mechanisms.gaussian import GaussianProfile

            self._generic = PoissonPairCurve(
                ProfileCurve(GaussianProfile(self.theta, theta_lower=self.theta_lower)),
                self.rate, self.orientation)
        return np.minimum(self._generic.log_lower(np.asarray(eps, dtype=float)),
                          self.log_upper(np.asarray(eps, dtype=float)))

    def _pos(self, orientation: str, eps: np.ndarray) -> np.ndarray:
        return self._remove_pos(eps) if orientation == "remove" else self._add_pos(eps)

    def log_upper(self, eps):
        other = "add" if self.orientation == "remove" else "remove"
        out = np.empty(eps.shape)
        pos = eps >= 0
        if np.any(pos):
            out[pos] = self._pos(self.orientation, eps[pos])
        neg = ~pos
        if np.any(neg):
            e = eps[neg]
            with np.errstate(invalid="ignore"):
                val = np.logaddexp(log1mexp(e), e + self._pos(other, -e))
            out[neg] = np.where(np.isneginf(e), 0.0, val)
        return np.minimum(out, 0.0)

    def __repr__(self) -> str:
        low = "" if self.theta_lower == self.theta else f", theta_lower={self.theta_lower!r}"
        return (f"PoissonGaussianCurve(theta={self.theta!r}, rate={self.rate!r}, "
                f"{self.orientation}{low})")
