"""Privacy profiles as objects: δ(ε), log δ(ε), ε(δ), group profiles, tabulated profiles.

The privacy profile of a mechanism M with respect to a neighbouring relation ≃ is (Balle, Barthe,
Gaboardi 2018, §2)::

    δ_M(ε) = sup_{x ≃ x'} D_{e^ε}(M(x) ‖ M(x')),      ε ≥ 0,

the hockey-stick divergence of :mod:`privamp.divergences`. M is (ε, δ)-DP exactly when
δ_M(ε) ≤ δ (Theorem 1). A profile is non-increasing in ε, lies in [0, 1], and — as a supremum of
functions ``μ(E) − α μ'(E)`` that are affine in α = e^ε — is *convex in α*. privamp uses that
convexity for pessimistic interpolation of tabulated profiles.

Guarantees of every :class:`PrivacyProfile` subclass
--------------------------------------------------------
* ``delta`` / ``log_delta`` return **upper bounds** on the true profile: closed forms are
  evaluated in stable log-space forms and then raised by a bound on their floating-point error.
  ``log_delta`` stays finite far below the smallest double (the Gaussian profile at θ = 0.1,
  ε = 60 is about ``exp(-180000)``).
* ``log_delta_lower`` returns **lower bounds** on the function the profile object represents
  (its exact formula, in exact arithmetic, with the parameters it stores), every rounding taken
  the other way; ``-inf`` ("no information") is always a valid answer and is the default. They
  serve the lower ends of certified brackets (:class:`privamp.pld.curves.ProfileCurve`), never a
  guarantee. For objects that are themselves bounds (black-box group profiles, amplification
  theorems) the lower value is of that bound's formula, not of the mechanism's true profile
  (docs/certification.md, "Lower values of privacy profiles").
* ``epsilon(delta)`` returns an ε with δ(ε) ≤ delta, found by bisection that keeps the feasible
  end of its bracket, so it is never below the true ε(δ) (up to the profile's own safety margin).
* ``group(k)`` is white-box when the profile knows its group behaviour and black-box otherwise.
"""

from __future__ import annotations

import abc
import enum
import functools
import math
from typing import Any

import numpy as np

from ._numerics import (
    ULP,
    bisect_threshold,
    down_ulps,
    log1mexp,
    log_expm1,
    next_up,
    round_down_log,
    round_up_log,
    sorted_unique,
    up_ulps,
)
from ._validation import check_int, check_real, check_real_array, parse_enum
from .errors import InvalidParameterError, UnsupportedCombinationError
from .relations import NeighbouringRelation

__all__ = [
    "BlackBoxGroupProfile",
    "GroupPrivacy",
    "MinimumProfile",
    "PrivacyProfile",
    "TabulatedProfile",
    "ZeroProfile",
]


class GroupPrivacy(enum.Enum):
    """How group-privacy profiles δ_k are obtained.

    * ``WHITE_BOX``: from the mechanism itself (Gaussian and Laplace with sensitivity kΔ;
      randomized response and randomized membership: δ_k = δ because the input bit changes at
      most once however many records change).
    * ``BLACK_BOX``: from the profile alone, by Vadhan's group-privacy lemma (Balle et al. 2018,
      footnote 6): ``δ_k(ε) ≤ (e^ε − 1)/(e^{ε/k} − 1) · δ(ε/k)``.
    """

    WHITE_BOX = "white-box"
    BLACK_BOX = "black-box"

    @classmethod
    def parse(cls, value, *, name: str = "group_privacy") -> GroupPrivacy:
        """``"white-box"``/``"black-box"`` (also ``white_box``, ``whitebox``, any case)."""
        return parse_enum(name, value, cls, {"whitebox": "WHITE_BOX", "blackbox": "BLACK_BOX"})


def _scalar_or_array(arr: np.ndarray, like: np.ndarray):
    arr = arr.reshape(like.shape)
    return float(arr) if arr.ndim == 0 else arr


def log_delta_rows(profiles, eps: np.ndarray, lower: bool = False) -> np.ndarray:
    """``[p._log_delta(eps) for p in profiles]`` as a 2-D array (lower values with ``lower``).

    When every profile is of one class, that class's :meth:`PrivacyProfile._log_delta_rows`
    evaluates them together (one broadcast call for the white-box families); otherwise, and
    for classes without a batched form, one call per profile.
    """
    profiles = list(profiles)
    eps = np.asarray(eps, dtype=float).reshape(-1)
    # one evaluation per distinct object (randomized response's δ_k is δ itself for every k)
    first: dict[int, int] = {}
    rows = np.array([first.setdefault(id(p), len(first)) for p in profiles], dtype=np.intp)
    distinct = list({id(p): p for p in profiles}.values())
    kinds = {type(p) for p in distinct}
    kind = kinds.pop() if len(kinds) == 1 else PrivacyProfile
    # only a class's own batched form: a subclass that changes _log_delta must not inherit its
    # parent's broadcast formula
    if "_log_delta_rows" not in vars(kind):
        kind = PrivacyProfile
    out = kind._log_delta_rows(distinct, eps, lower)
    return out if len(distinct) == len(profiles) else out[rows]


def log_q_tail_rows(profiles, eps: np.ndarray, lower: bool = False) -> np.ndarray | None:
    """``[p._log_q_tail(eps, lower) for p in profiles]`` as a 2-D array, or ``None`` when a
    profile's class has no closed form of its own (a subclass that changes ``_log_delta``
    must not inherit its parent's slope)."""
    out = np.empty((len(profiles), np.size(eps)))
    for i, prof in enumerate(profiles):
        row = prof._log_q_tail(eps, lower) if "_log_q_tail" in vars(type(prof)) else None
        if row is None:
            return None
        out[i] = row
    return out


class PrivacyProfile(abc.ABC):
    """A privacy profile ε ↦ δ(ε) with respect to a neighbouring relation.

    Subclasses implement :meth:`_log_delta` (an upper bound on log δ at ε ≥ 0, vectorised over
    a 1-D float array that may contain ``inf``) and may override :meth:`_log_delta_lower` (a lower
    bound, same conventions), :attr:`pure_epsilon` and :meth:`_white_box_group`.
    """

    #: The neighbouring relation the profile holds for.
    relation: NeighbouringRelation = NeighbouringRelation.ADD_REMOVE
    #: Whether the computed function is itself a privacy profile — non-increasing, and with its
    #: extension to ε < 0 convex in e^ε — and not merely an upper bound on one (BBG Theorem 14's
    #: bound is not monotone for small datasets). Only a curve has a meaningful lower end of a
    #: composition bracket.
    is_curve: bool = True
    #: Whether the bound rests on a proved theorem (False: an estimate, e.g. MUST Theorem 5(c)
    #: for MUST.WW as published, for which no complete proof is known).
    certified: bool = True

    # ----------------------------------------------------------------------------------------
    # subclass interface
    # ----------------------------------------------------------------------------------------

    @abc.abstractmethod
    def _log_delta(self, eps: np.ndarray) -> np.ndarray:
        """Upper bound on log δ(ε) for a 1-D array of ε ≥ 0 (``inf`` allowed)."""

    def _log_delta_lower(self, eps: np.ndarray) -> np.ndarray:
        """Lower bound on log δ(ε) of the function the profile represents, for a 1-D array of
        ε ≥ 0 (``inf`` allowed). The default, ``-inf`` everywhere, is always valid ("no lower
        information"); subclasses override it with certified values."""
        return np.full(np.shape(eps), -np.inf)

    @property
    def pure_epsilon(self) -> float:
        """An ε at and beyond which δ(ε) = 0 (``inf`` if the profile never reaches 0).

        Never smaller than the true threshold.
        """
        return math.inf

    @property
    def plateau(self) -> tuple[float, float] | None:
        """``(ε_p, δ_p)`` such that δ(ε) = δ_p *exactly* for every ε ≥ ε_p, or ``None``.

        Pure ε-DP is the plateau ``(pure_epsilon, 0)``; an (ε₀, δ₀)-DP guarantee or a tabulated
        profile has a non-zero plateau. :meth:`epsilon` uses it as a bracket end that is known
        to be feasible without rounding (so a mechanism's own (ε₀, δ₀) inverts to ε₀).
        """
        pure = self.pure_epsilon
        return (pure, 0.0) if math.isfinite(pure) else None

    def _white_box_group(self, k: int) -> PrivacyProfile | None:
        """The white-box group profile δ_k, or ``None`` when only the black-box bound is known."""
        return None

    @classmethod
    def _log_delta_rows(cls, profiles: list[PrivacyProfile], eps: np.ndarray,
                        lower: bool = False) -> np.ndarray:
        """Row i: ``profiles[i]._log_delta(eps)`` (``_log_delta_lower`` with ``lower``), for
        profiles that are all instances of ``cls`` exactly; shape ``(len(profiles), eps.size)``.

        The default evaluates them one by one. A family whose values are one elementwise
        formula in a parameter (the Gaussian and Laplace θ) overrides it with one broadcast
        evaluation: the same operations on every element, so the same values and the same
        error bounds as the separate calls (see :func:`log_delta_rows`).
        """
        out = np.empty((len(profiles), eps.size))
        for i, prof in enumerate(profiles):
            out[i] = prof._log_delta_lower(eps) if lower else prof._log_delta(eps)
        return out

    def _log_q_tail(self, eps: np.ndarray, lower: bool) -> np.ndarray | None:
        """Bounds on ``log(−dδ/dα)`` at α = e^ε, for a 1-D array of ε > 0 (``inf`` allowed):
        an upper bound, or a lower one with ``lower``; ``None`` when the profile has none.

        For a profile that is the hockey-stick divergence of a pair (P, Q), ``−dδ/dα`` is
        ``Q(L > ε)``, the Q-tail of the privacy loss, and it is the slope of the dominating
        curve (:meth:`privamp.pld.curves.PairCurve.slope_bounds`): a closed form there saves
        the secants' two evaluations of the profile per point. It must bound the slope of the
        function the profile represents (the lower values' function), not of its upper
        values: where a parameter is known only within bounds (a rounded θ), both bounds hold
        over the whole range. Only a class's own method counts (:func:`log_q_tail_rows`)."""
        return None

    def _mgf_tail(self, s: float, start: float) -> float | None:
        """An upper bound on ``∫_start^∞ e^{sε} δ(ε) dε``, or ``None`` if the profile cannot
        bound its tail (used by :func:`privamp.privacy_loss.mgf_from_profile`)."""
        return None

    def curve_kinks(self) -> tuple[np.ndarray, float] | None:
        """Where the symmetric dominating curve of this profile (the profile for ε ≥ 0, its
        extension ``1 − e^ε + e^ε δ(−ε)`` below) can have kinks as a function of α = e^ε —
        the atoms of a discrete privacy loss — as ``(positions, error)`` on the whole real
        line, or ``None`` when the curve is not piecewise affine (a continuous loss).

        Used to put the atoms of discrete loss laws exactly on the PLD grid
        (:meth:`privamp.pld.curves.PairCurve.kinks`). Extra positions are allowed; a missing
        one is not.
        """
        return None

    def curve_atoms(self) -> np.ndarray | None:
        """Approximate positions of the atoms of the privacy loss (the kinks of the symmetric
        dominating curve in α = e^ε), also where the loss has a continuous part besides them
        (the Laplace mechanism: atoms at ±θ); ``None`` when none are known.

        Only a matter of tightness, never of validity: the PLD engine puts these positions on grid
        points of the upper discretisation, where connect-the-dots is exact at a kink, and just
        above grid points (1/1024 step) of the lower one, which keeps them nearly whole
        (:func:`privamp.pld.grids._atom_offset`).
        Defaults to :meth:`curve_kinks`.
        """
        kinks = self.curve_kinks()
        return None if kinks is None else np.asarray(kinks[0], dtype=float)

    # ----------------------------------------------------------------------------------------
    # public interface
    # ----------------------------------------------------------------------------------------

    def log_delta(self, eps: Any):
        """``log δ(ε)`` (an upper bound), vectorised; ``-inf`` where δ(ε) = 0.

        Parameters
        ----------
        eps : float or array_like
            ε ≥ 0 (``inf`` allowed: δ(∞) is the probability of a distinguishing event). For ε < 0
            use :meth:`log_delta_extended`.
        """
        arr = check_real_array("eps", eps, "[0, inf]")
        out = np.minimum(self._log_delta(arr.reshape(-1)), 0.0)
        return _scalar_or_array(out, arr)

    def log_delta_lower(self, eps: Any):
        """A lower bound on ``log δ(ε)``, vectorised; ``-inf`` where nothing better is known.

        It bounds the function the profile object represents (its formula in exact arithmetic,
        with its stored parameters) from below, every rounding directed down: with
        :meth:`log_delta` it brackets that function. Used for the lower ends of certified
        brackets; never a privacy guarantee.

        Parameters
        ----------
        eps : float or array_like
            ε ≥ 0 (``inf`` allowed).
        """
        arr = check_real_array("eps", eps, "[0, inf]")
        out = np.minimum(self._log_delta_lower(arr.reshape(-1)), 0.0)
        return _scalar_or_array(out, arr)

    def delta(self, eps: Any):
        """δ(ε) (an upper bound on the profile), vectorised over ε ≥ 0.

        Values below about 1e-308 underflow to 0 here; use :meth:`log_delta` for those.
        """
        arr = check_real_array("eps", eps, "[0, inf]")
        out = np.exp(np.minimum(self._log_delta(arr.reshape(-1)), 0.0))
        return _scalar_or_array(out, arr)

    def log_delta_extended(self, eps: Any):
        """``log δ(ε)`` for every real ε, with the symmetric extension to ε < 0 (an upper bound).

        For a symmetric relation, ``sup D_{e^ε}`` with e^ε < 1 equals
        ``1 − e^ε + e^ε δ(−ε)`` (the α < 1 identity ``D_α(μ‖μ') = 1 − α + α D_{1/α}(μ'‖μ)``,
        catalogue §3.2). Theorem 14 of Balle et al. 2018 needs it (catalogue erratum E3).
        """
        arr = check_real_array("eps", eps, "[-inf, inf]")
        return _scalar_or_array(self._log_delta_extended(arr.reshape(-1)), arr)

    def log_delta_extended_lower(self, eps: Any):
        """A lower bound on :meth:`log_delta_extended` (from :meth:`log_delta_lower`)."""
        arr = check_real_array("eps", eps, "[-inf, inf]")
        return _scalar_or_array(self._log_delta_extended(arr.reshape(-1), lower=True), arr)

    def _log_delta_extended(self, eps: np.ndarray, lower: bool = False) -> np.ndarray:
        """The extended profile on a 1-D array of real ε (no validation): the profile (or its
        lower values) at ε ≥ 0, ``log(1 − e^ε + e^ε δ(−ε))`` below. The extension increases in
        δ, so upper (lower) values of δ give upper (lower) values; its log-add-exp (a few ulp,
        of values ≤ 0 — the 8 ulp of :func:`round_up_log` cover them) is rounded the same way.
        """
        at = self._log_delta_lower if lower else self._log_delta
        out = np.empty(eps.shape)
        pos = eps >= 0
        if np.any(pos):
            out[pos] = at(eps[pos])
        neg = ~pos
        if np.any(neg):
            e = eps[neg]
            with np.errstate(invalid="ignore", divide="ignore"):
                val = np.logaddexp(log1mexp(e), e + np.minimum(at(-e), 0.0))
                val = round_down_log(val, ulps=8) if lower else round_up_log(val)
            out[neg] = np.where(np.isneginf(e), 0.0, val)
        return np.minimum(out, 0.0)

    def delta_extended(self, eps: Any):
        """δ(ε) for every real ε (see :meth:`log_delta_extended`); lies in [max(0, 1 − e^ε), 1]."""
        return np.exp(self.log_delta_extended(eps))

    @property
    def total_variation(self) -> float:
        """δ(0), the largest total variation distance between neighbouring output laws."""
        return float(self.delta(0.0))

    def is_dp(self, eps: float, delta: float) -> bool:
        """Whether the profile certifies (ε, δ)-DP, i.e. δ(ε) ≤ delta (Theorem 1)."""
        e = check_real("eps", eps, "[0, inf]")
        d = check_real("delta", delta, "[0, 1]")
        plateau = self.plateau
        if plateau is not None and e >= plateau[0] and d >= plateau[1]:
            return True
        value = float(self._log_delta(np.array([e]))[0])
        if d == 0.0:
            return value == -math.inf
        # either comparison is safe: log δ carries a margin larger than the rounding of exp/log
        return value <= math.log(d) or d >= math.exp(min(value, 0.0))

    def epsilon(self, delta: Any):
        """The smallest ε with δ(ε) ≤ ``delta`` (rounded up), vectorised over ``delta``.

        * ``delta >= δ(0)`` gives 0;
        * ``delta = 0`` gives :attr:`pure_epsilon` (``inf`` if the profile never reaches 0);
        * a profile that stays above ``delta`` for every finite ε gives ``inf``.

        The result is found by bisection on ``log δ(ε) ≤ log delta`` that always returns the
        feasible end of its bracket (a plateau end point, see :attr:`plateau`, is feasible by
        definition), so ``δ(result) ≤ delta`` holds for the profile as computed — itself an upper
        bound on the truth: the result is never below the true ε(δ).
        """
        d = check_real_array("delta", delta, "[0, 1]")
        flat = d.reshape(-1)
        out = np.zeros(flat.shape)
        # compare in log space, with log(delta) rounded down (safe side)
        with np.errstate(divide="ignore"):
            log_target = np.log(flat)
        log_target = round_down_log(log_target)
        log_d0 = float(self._log_delta(np.zeros(1))[0])
        plateau = self.plateau
        todo = flat < 1.0
        # δ(0) ≤ delta gives ε = 0. Comparing with the reported δ(0) = exp(log δ(0)) is safe:
        # log δ(0) carries a margin of several ulp, more than the rounding of exp.
        todo &= ~((log_target >= log_d0) | (flat >= math.exp(log_d0)))
        if plateau is not None and plateau[0] == 0.0:
            todo &= flat < plateau[1]
        if np.any(todo):
            out[todo] = self._invert(flat[todo], log_target[todo], plateau)
        return _scalar_or_array(out, d)

    def _invert(self, target, log_target, plateau) -> np.ndarray:
        """ε with log δ(ε) ≤ log_target for targets below δ(0); ``inf`` where unreachable."""
        n = target.size
        lo = np.zeros(n)
        hi = np.full(n, np.inf)
        if plateau is not None:
            eps_p, delta_p = plateau
            reachable = target >= delta_p
            hi[reachable] = eps_p  # feasible by definition of the plateau
        else:
            # bracket by doubling up to 2^40; beyond that the answer is reported as inf
            open_ = np.ones(n, dtype=bool)
            trial = np.ones(n)
            for _ in range(41):
                idx = np.flatnonzero(open_)
                if idx.size == 0:
                    break
                ok = self._log_delta(trial[idx]) <= log_target[idx]
                hi[idx[ok]] = trial[idx[ok]]
                open_[idx[ok]] = False
                still = idx[~ok]
                lo[still] = trial[still]
                trial[still] = 2.0 * trial[still]
        sel = np.flatnonzero(np.isfinite(hi))
        if sel.size:
            targets = log_target[sel]

            def feasible(x, idx):
                return self._log_delta(x) <= targets[idx]

            hi[sel] = bisect_threshold(feasible, lo[sel], hi[sel])
        return hi

    def group(self, k: int, method: GroupPrivacy | str | None = None) -> PrivacyProfile:
        """The group-privacy profile δ_k: neighbours at path distance ≤ k (δ_1 = δ).

        Parameters
        ----------
        k : int
            Group size, k ≥ 1.
        method : GroupPrivacy or str, optional
            ``"white-box"`` (the mechanism's own group profile; raises
            :class:`~privamp.errors.UnsupportedCombinationError` if unknown), ``"black-box"``
            (Vadhan's bound from the profile alone), or ``None``: white-box where available,
            black-box otherwise.
        """
        k = check_int("k", k, "[1, inf)")
        method = None if method is None else GroupPrivacy.parse(method)
        if k == 1:
            return self
        if method is not GroupPrivacy.BLACK_BOX:
            white = self._white_box_group(k)
            if white is not None:
                return white
            if method is GroupPrivacy.WHITE_BOX:
                raise UnsupportedCombinationError(
                    f"white-box group privacy is not known for {self!r}; use 'black-box'"
                )
        return BlackBoxGroupProfile(self, k)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(relation={self.relation.value!r})"


class ZeroProfile(PrivacyProfile):
    """The profile of a mechanism whose output does not depend on its input: δ ≡ 0."""

    def __init__(self, relation: NeighbouringRelation | str = NeighbouringRelation.ADD_REMOVE):
        self.relation = NeighbouringRelation.parse(relation)

    def _log_delta(self, eps):
        return np.full(eps.shape, -np.inf)

    def _log_delta_lower(self, eps):
        return np.full(eps.shape, -np.inf)  # δ ≡ 0: exact

    @property
    def pure_epsilon(self) -> float:
        return 0.0

    def _white_box_group(self, k):
        return self

    def _mgf_tail(self, s, start):
        return 0.0


# -------------------------------------------------------------------------------------------
# black-box group privacy
# -------------------------------------------------------------------------------------------

_SUBNORMAL = math.ulp(0.0)  # 5e-324: the absolute rounding unit of the subnormal range

#: ε grid on which the black-box group bound is minimised from the left (see below).
_GROUP_GRID = sorted_unique(
    np.concatenate([np.linspace(0.0, 10.0, 2001), np.geomspace(10.0, 1e4, 1201)])
)


class BlackBoxGroupProfile(PrivacyProfile):
    """Group-privacy profile δ_k from δ alone (Vadhan 2017, Lemma 2.2; Balle et al. 2018, fn. 6).

    ``V(ε) = (e^ε − 1)/(e^{ε/k} − 1) · δ(ε/k)`` (``= k δ(0)`` at ε = 0) bounds δ_k(ε) pointwise.
    V need not be monotone (it grows once δ reaches a plateau, as for a generic (ε₀, δ₀)-DP
    mechanism), while δ_k is non-increasing, so every V(ε') with ε' ≤ ε also bounds δ_k(ε). The
    profile returned is ``min(1, V(ε), min{V(g) : g ∈ G, g ≤ ε})`` for a fixed fine grid G: a valid
    bound everywhere, equal to the paper's formula wherever V is non-increasing (as it is for the
    Gaussian and Laplace profiles), and much tighter where it is not.

    :meth:`log_delta_lower` bounds this *formula* from below (with the base profile's lower
    values), not the group profile δ_k of the mechanism, which can be much smaller.
    """

    #: Vadhan's bound with its running minimum is not known to be convex in e^ε: compositions
    #: of it have a certified upper end only
    is_curve = False

    def __init__(self, base: PrivacyProfile, k: int):
        if not isinstance(base, PrivacyProfile):
            raise InvalidParameterError("base", "a PrivacyProfile", base)
        self.base = base
        self.k = check_int("k", k, "[1, inf)")
        self.relation = base.relation

    def _base_arg(self, eps: np.ndarray, direction: float) -> np.ndarray:
        """ε/k rounded toward ``direction`` (−inf: down, for the upper value; +inf: up, for the
        lower value): δ is non-increasing, so δ at a smaller argument is larger."""
        k = self.k
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            u = eps / k
            if k & (k - 1) == 0:
                exact = u * k == eps  # a power of two: exact unless ε/k lost bits to underflow
            elif k < 2**26:
                # u·k == ε exactly iff fl(u·k) == ε and the product's rounding error (Dekker's
                # two-product with u split in halves of 26 bits; k has ≤ 26 bits) is zero
                g = 134217729.0 * u
                hi = g - (g - u)
                lo = u - hi
                p = u * k
                err = (hi * k - p) + lo * k
                exact = (p == eps) & (err == 0) & np.isfinite(g)
            else:
                exact = np.zeros(eps.shape, dtype=bool)
        exact |= (eps == 0) | np.isinf(eps)
        return np.where(exact, u, np.nextafter(u, direction))

    def _log_sum(self, eps: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log((e^ε − 1)/(e^u − 1))`` (``log k`` at ε = 0) and a bound on its rounding error:
        each ``log_expm1`` is within ~2 ulp + ½ ulp of its magnitude, the difference ½ ulp more,
        so 8 ulp·(1 + |log_expm1(ε)| + |log_expm1(u)|) covers both (the magnitudes can be far
        above that of the difference: ε = 1e-300 gives two logarithms near −690)."""
        k = self.k
        with np.errstate(invalid="ignore", divide="ignore"):
            le = log_expm1(eps)
            lu = log_expm1(u)
            log_sum = np.where(u > 0, le - lu, math.log(k))
            err = np.where(u > 0, 8 * ULP * (1.0 + np.abs(le) + np.abs(lu)),
                           8 * ULP * (1.0 + math.log(k)))
        inf = np.isinf(u)
        return np.where(inf, np.inf, log_sum), np.where(inf, 0.0, err)

    def _log_vadhan(self, eps: np.ndarray, base: tuple | None = None) -> np.ndarray:
        """Upper values of log min(1, V(ε)); ``base``: ``(u, values)``, u = ``_base_arg(eps,
        −inf)`` and the base profile's upper values there, when the caller has them already."""
        u, base = (self._base_arg(eps, -np.inf), None) if base is None else base
        log_sum, err = self._log_sum(eps, u)
        if base is None:
            base = self.base._log_delta(u)
        with np.errstate(invalid="ignore"):
            log_sum = log_sum + err
            # the sum rounds by ½ ulp of its two terms (they can cancel)
            out = log_sum + base
            out = out + np.where(np.isfinite(out), ULP * (np.abs(log_sum) + np.abs(base)), 0.0)
        out = np.where(np.isneginf(base), -np.inf, out)
        return np.minimum(out, 0.0)

    def _log_vadhan_lower(self, eps: np.ndarray, base: tuple | None = None) -> np.ndarray:
        """Lower bound on log min(1, V(ε)): the same terms with ε/k rounded up (the factor
        (e^ε − 1)/(e^u − 1) decreases in u, δ does not increase) and the margins subtracted
        (``base``: ``(u, values)``, u = ``_base_arg(eps, +inf)`` and the base profile's lower
        values there, if known)."""
        u, base = (self._base_arg(eps, np.inf), None) if base is None else base
        log_sum, err = self._log_sum(eps, u)
        if base is None:
            base = self.base._log_delta_lower(u)
        with np.errstate(invalid="ignore"):
            log_sum = log_sum - err
            out = log_sum + base
            out = out - np.where(np.isfinite(out), ULP * (np.abs(log_sum) + np.abs(base)), 0.0)
        out = np.where(np.isneginf(base), -np.inf, out)
        return np.minimum(out, 0.0)

    @functools.cached_property
    def _running_min(self) -> np.ndarray:
        return np.minimum.accumulate(self._log_vadhan(_GROUP_GRID))

    @functools.cached_property
    def _running_min_lower(self) -> np.ndarray:
        return np.minimum.accumulate(self._log_vadhan_lower(_GROUP_GRID))

    def _log_delta(self, eps, base=None):
        direct = self._log_vadhan(eps, base)
        idx = np.searchsorted(_GROUP_GRID, eps, side="right") - 1
        envelope = self._running_min[np.clip(idx, 0, None)]
        return np.minimum(direct, envelope)

    def _log_delta_lower(self, eps, base=None):
        # min is non-decreasing in each argument: the min of lower bounds bounds the min below
        direct = self._log_vadhan_lower(eps, base)
        idx = np.searchsorted(_GROUP_GRID, eps, side="right") - 1
        envelope = self._running_min_lower[np.clip(idx, 0, None)]
        return np.minimum(direct, envelope)

    @classmethod
    def _log_delta_rows(cls, profiles, eps, lower=False):
        # groups of one base profile: the base is evaluated once, at every group's argument ε/k
        # (rounded as in the group's own call), and each row is the group's own formula on its
        # share of those values
        base = profiles[0].base
        if any(p.base is not base for p in profiles):
            return PrivacyProfile._log_delta_rows(profiles, eps, lower)
        direction = np.inf if lower else -np.inf
        args = [p._base_arg(eps, direction) for p in profiles]
        values = base._log_delta_lower if lower else base._log_delta
        values = values(np.concatenate(args)).reshape(len(profiles), eps.size)
        out = np.empty((len(profiles), eps.size))
        for i, prof in enumerate(profiles):
            given = (args[i], values[i])
            out[i] = prof._log_delta_lower(eps, given) if lower else prof._log_delta(eps, given)
        return out

    @property
    def pure_epsilon(self) -> float:
        return float(next_up(self.k * self.base.pure_epsilon))

    def _white_box_group(self, k):
        return None

    def group(self, k: int, method=None) -> PrivacyProfile:
        k = check_int("k", k, "[1, inf)")
        if k == 1:
            return self
        if method is not None and GroupPrivacy.parse(method) is GroupPrivacy.WHITE_BOX:
            raise UnsupportedCombinationError(
                f"white-box group privacy is not known for {self!r}; use 'black-box'"
            )
        return BlackBoxGroupProfile(self.base, self.k * k)

    def __repr__(self) -> str:
        return f"BlackBoxGroupProfile({self.base!r}, k={self.k})"


# -------------------------------------------------------------------------------------------
# tabulated profiles
# -------------------------------------------------------------------------------------------


class MinimumProfile(PrivacyProfile):
    """The pointwise smaller of several upper bounds on one privacy profile (same relation).

    Each part bounds the true δ(ε) at every ε, so their minimum does too. The minimum of curves
    is not convex in e^ε in general, so ``is_curve`` is False: the PLD engine composes its
    convex-safe form and a composition has a certified upper end. Lower values: the minimum of
    the parts' lower values (a lower bound on the function represented, never a guarantee).

    >>> from privamp import GaussianMechanism
    >>> a, b = GaussianMechanism(1.0).profile(), GaussianMechanism(2.0).profile()
    >>> MinimumProfile([a, b]).delta(1.0) == b.delta(1.0)
    True
    """

    is_curve = False

    def __init__(self, parts):
        parts = list(parts)
        if not parts or not all(isinstance(p, PrivacyProfile) for p in parts):
            raise InvalidParameterError("parts", "a non-empty sequence of PrivacyProfile", parts)
        relations = {p.relation for p in parts}
        if len(relations) > 1:
            raise UnsupportedCombinationError(
                "MinimumProfile needs bounds for one relation, got "
                + ", ".join(sorted(r.value for r in relations)))
        self.parts = parts
        self.relation = parts[0].relation
        self.certified = all(getattr(p, "certified", True) for p in parts)

    def _log_delta(self, eps):
        return np.min([p._log_delta(eps) for p in self.parts], axis=0)

    def _log_delta_lower(self, eps):
        return np.min([p._log_delta_lower(eps) for p in self.parts], axis=0)

    @property
    def pure_epsilon(self) -> float:
        return min(p.pure_epsilon for p in self.parts)

    def _mgf_tail(self, s, start):
        # ∫ e^{sε} min(f, g) ≤ min(∫ e^{sε} f, ∫ e^{sε} g)
        tails = [p._mgf_tail(s, start) for p in self.parts]
        tails = [t for t in tails if t is not None]
        return min(tails) if tails else None

    def __repr__(self) -> str:
        return f"MinimumProfile({', '.join(repr(p) for p in self.parts)})"


class TabulatedProfile(PrivacyProfile):
    """A privacy profile known at finitely many points, interpolated pessimistically.

    The given values are upper bounds on some profile; their interpolation need not be convex
    in e^ε, so compositions of it have a certified upper end only (:attr:`is_curve` False).

    Parameters
    ----------
    eps : array_like
        Strictly increasing, finite, non-negative ε values.
    delta : array_like
        Upper bounds on δ(ε) at those points, in [0, 1]. If they are not non-increasing they
        are replaced by their running minimum (valid: δ is non-increasing).
    relation : NeighbouringRelation or str
        The relation the values hold for.

    Interpolation (every value returned is an upper bound given upper bounds at the nodes):

    * between nodes, the chord in α = e^ε: a profile is convex in α, so it lies below its chords,
      and below the chord of upper bounds;
    * before the first node ε₀: ``min(1, δ₀ + e^{ε₀} − e^ε)`` (the slope of δ in α is ≥ −1);
    * after the last node: the last value (δ is non-increasing).

    Group profiles are black-box.

    >>> t = TabulatedProfile([0.0, 1.0, 2.0], [0.5, 0.2, 0.0])
    >>> round(float(t.delta(1.0)), 12), t.pure_epsilon
    (0.2, 2.0)
    """

    is_curve = False

    def __init__(self, eps: Any, delta: Any, relation=NeighbouringRelation.ADD_REMOVE):
        e = check_real_array("eps", eps, "[0, inf)", ndim=1)
        d = check_real_array("delta", delta, "[0, 1]", ndim=1)
        if e.size != d.size:
            raise InvalidParameterError("delta", f"an array of the same length as eps ({e.size})",
                                        d.size)
        if np.any(np.diff(e) <= 0):
            raise InvalidParameterError("eps", "strictly increasing", e)
        self.relation = NeighbouringRelation.parse(relation)
        self.eps = e.copy()
        self.deltas = np.minimum.accumulate(d)
        self.eps.setflags(write=False)
        self.deltas.setflags(write=False)

    @property
    def pure_epsilon(self) -> float:
        zero = np.flatnonzero(self.deltas == 0.0)
        return float(self.eps[zero[0]]) if zero.size else math.inf

    @property
    def plateau(self):
        # constant at and after the first node that attains the last value
        first = int(np.flatnonzero(self.deltas == self.deltas[-1])[0])
        return (float(self.eps[first]), float(self.deltas[-1]))

    def _log_delta(self, eps):
        e, d = self.eps, self.deltas
        val = np.empty(eps.shape)
        idx = np.searchsorted(e, eps, side="right") - 1  # node at or left of eps
        before = idx < 0
        after = idx >= e.size - 1
        inside = ~before & ~after
        with np.errstate(over="ignore", invalid="ignore"):
            if np.any(before):
                x = eps[before]
                # δ₀ + e^{ε₀} − e^ε = δ₀ + e^ε (e^{ε₀−ε} − 1)
                val[before] = np.minimum(1.0, up_ulps(d[0] + np.exp(x) * np.expm1(e[0] - x), 4))
            val[after] = d[-1]
            if np.any(inside):
                i = idx[inside]
                x = eps[inside]
                t = np.expm1(x - e[i]) / np.expm1(e[i + 1] - e[i])  # position in α
                chord = d[i] - (d[i] - d[i + 1]) * t
                val[inside] = np.minimum(d[i], chord + 4 * ULP * d[i])
        with np.errstate(divide="ignore"):
            return round_up_log(np.log(val))

    def _log_delta_lower(self, eps):
        """Lower bound on the interpolated function (node values exact, chords in α, the
        slope-bound line before the first node, the last value after it), rounding down."""
        e, d = self.eps, self.deltas
        val = np.empty(eps.shape)
        idx = np.searchsorted(e, eps, side="right") - 1
        before = idx < 0
        after = idx >= e.size - 1
        inside = ~before & ~after
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            if np.any(before):
                x = eps[before]
                y = e[0] - x  # > 0, within ½ ulp; expm1 amplifies that by at most 1 + y
                rise = np.exp(x) * np.expm1(y) * (1 - (4 + y) * ULP)
                val[before] = np.minimum(1.0, down_ulps(d[0] + rise, 1) - 2 * _SUBNORMAL)
            val[after] = d[-1]  # the last node's value, exactly
            if np.any(inside):
                # the chord d_i (1 − t) + d_{i+1} t, a sum of two non-negative terms (no
                # cancellation next to the right node), with t = expm1(z1)/expm1(z2) and
                # 1 − t = e^{z1} expm1(y)/expm1(z2), all in logs (no overflow): z1 = ε − ε_i,
                # y = ε_{i+1} − ε, z2 = ε_{i+1} − ε_i are one subtraction each (½ ulp relative),
                # which moves log expm1(z) by at most ½ ulp (1 + z); log_expm1 itself is within
                # 2 ulp (1 + |·|)
                i = idx[inside]
                z1 = eps[inside] - e[i]
                y = e[i + 1] - eps[inside]
                z2 = e[i + 1] - e[i]
                l1, ly, l2 = log_expm1(z1), log_expm1(y), log_expm1(z2)
                err_t = 4 * ULP * (3 + z1 + z2 + np.abs(l1) + np.abs(l2))
                err_s = 4 * ULP * (3 + 2 * z1 + y + z2 + np.abs(ly) + np.abs(l2))
                t_lo = down_ulps(np.exp(l1 - l2 - err_t), 2)
                s_lo = down_ulps(np.exp(z1 + ly - l2 - err_s), 2)
                chord = down_ulps(d[i] * s_lo + d[i + 1] * t_lo, 2) - 4 * _SUBNORMAL
                # the chord never goes below the right node; at a node it is the node's value
                val[inside] = np.where(z1 == 0.0, d[i], np.maximum(chord, d[i + 1]))
        with np.errstate(divide="ignore"):
            return round_down_log(np.log(np.maximum(val, 0.0)))

    def __repr__(self) -> str:
        return f"TabulatedProfile({self.eps.size} points, relation={self.relation.value!r})"
