"""Lower bounds and tightness of subsampling bounds (BBG Lemma 12, Theorem 13), and the aligned
privacy profiles of Zhao & Liu (2023, Definition 5, Figure 3).

* :func:`membership_lower_bound` — the exact profile ``η ψ_p(ε)`` of the randomized membership
  mechanism under a natural subsampling scheme (Lemma 12). It shows that the multiplicity bound is
  attained (Theorem 13) for Poisson, WOR, WR and the MUST schemes.
* :func:`tightness_report` — how far privamp's upper bound for a concrete mechanism is from what
  a concrete pair of neighbouring datasets achieves: for Gaussian and Laplace, the count query
  whose differing record contributes Δ per copy (the output laws are mixtures
  ``Σ_k P(K = k) · noise(kΔ)`` against ``noise(0)``); for randomized response / membership, the
  exact Lemma 12 profile.
* :func:`aligned_profile` — the curve ε ↦ (ε'/ε, δ'(ε') − δ(ε)) and its classification as strong
  amplification, weak type I, weak type II or dilution (Definition 5, with its typos corrected
  from Figure 3's caption: type I is ε' < ε with δ' > δ; dilution is ε' > ε with δ' > δ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numerics import down_ulps, logsumexp_signed, round_down_log
from .._validation import check_real, check_real_array
from ..divergences import hockey_stick_density
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedMembershipMechanism,
    RandomizedResponse,
    RandomizedResponseProfile,
)
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from ..sampling.schemes import Poisson, SamplingScheme
from .subsampling import amplify, amplify_eps, deamplify_eps

__all__ = [
    "AlignedProfile",
    "MembershipLowerBound",
    "TightnessReport",
    "aligned_profile",
    "classify_amplification",
    "membership_lower_bound",
    "tightness_report",
]


class MembershipLowerBound(PrivacyProfile):
    """Exact profile of M_{v,p} ∘ S: ``δ(ε') = η ψ_p(ε)`` with ε' = log(1 + η(e^ε − 1)) and
    η = P(the record is in the subsample) (BBG Lemma 12; ψ_p with the E1 correction)."""

    def __init__(self, scheme: SamplingScheme, p: float, relation: NeighbouringRelation):
        self.scheme = scheme
        self.p = check_real("p", p, "[0, 1]")
        self.relation = relation
        self.eta = scheme.multiplicity().eta if not isinstance(scheme, Poisson) else scheme.rate
        #: η rounded down (lower values)
        self.eta_lower = scheme.eta_lower
        self._psi = RandomizedResponseProfile(self.p, relation)

    def _log_delta(self, eps_prime):
        eps = np.atleast_1d(deamplify_eps(eps_prime, self.eta))
        return math.log(self.eta) + self._psi._log_delta(eps)

    def _log_delta_lower(self, eps_prime):
        # η ψ_p(ε(ε')) grows with η in both factors: η rounded down, the map rounded up
        if self.eta_lower <= 0.0:
            return np.full(np.shape(eps_prime), -np.inf)
        eps = np.atleast_1d(deamplify_eps(eps_prime, self.eta_lower, up=True))
        log_eta = math.log(self.eta_lower)
        with np.errstate(invalid="ignore"):
            return round_down_log(log_eta + self._psi._log_delta_lower(eps), ulps=4)

    @property
    def pure_epsilon(self) -> float:
        pure = self._psi.pure_epsilon
        return float(amplify_eps(pure, self.eta)) if math.isfinite(pure) else math.inf

    def __repr__(self) -> str:
        return f"MembershipLowerBound(p={self.p}, {self.scheme!r})"


def membership_lower_bound(scheme: SamplingScheme, p: float,
                           relation: NeighbouringRelation | str | None = None) -> PrivacyProfile:
    """The exact privacy profile of the randomized membership mechanism M_{v,p} under ``scheme``.

    Every scheme here is natural (BBG §5), so by Lemma 12 this profile is ``η ψ_p(ε)``, and no
    bound for mechanisms with profile ψ_p can be smaller (Theorem 13). Rounding is to nearest
    (a few ulp), as befits a lower bound that is also exact.

    >>> from privamp.sampling import WOR
    >>> lb = membership_lower_bound(WOR(5, 2), p=0.8)
    >>> round(float(lb.delta(float(amplify_eps(0.5, 0.4)))), 12)  # catalogue §3.11
    0.188102298344
    """
    if not isinstance(scheme, SamplingScheme):
        raise InvalidParameterError("scheme", "a SamplingScheme", scheme)
    rel, _ = scheme.resolve(relation)  # raises for unsupported combinations
    return MembershipLowerBound(scheme, p, rel)


@dataclass(frozen=True)
class TightnessReport:
    """Upper bound versus an achieved lower bound, at base ε values."""

    eps: np.ndarray
    eps_amplified: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    method: str

    @property
    def ratio(self) -> np.ndarray:
        """upper / lower (1 means tight; inf where the lower bound is 0 but the upper is not)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = self.upper / self.lower
        return np.where((self.upper == 0) & (self.lower == 0), 1.0, r)


def _log_mixture(weights_log: np.ndarray, shifts: np.ndarray, kind: str, scale: float):
    def logpdf(z):
        z = np.atleast_1d(np.asarray(z, dtype=float))
        d = z[:, None] - shifts[None, :]
        if kind == "gaussian":
            comp = -0.5 * (d / scale) ** 2 - math.log(scale * math.sqrt(2 * math.pi))
        else:
            comp = -np.abs(d) / scale - math.log(2 * scale)
        out, _ = logsumexp_signed(comp + weights_log[None, :], axis=1)
        out = np.atleast_1d(out)
        return out if out.size > 1 else float(out[0])

    return logpdf


def tightness_report(mechanism, scheme: SamplingScheme, eps: Any,
                     relation: NeighbouringRelation | str | None = None) -> TightnessReport:
    """Compare privamp's amplified upper bound with a lower bound achieved by a concrete pair.

    Gaussian / Laplace mechanisms: the differing record adds Δ per copy to a sum query, so the
    output laws are ``Σ_k P(K = k) noise(kΔ)`` and ``noise(0)``; their hockey-stick divergence in
    both orders (by quadrature) at ε' is a lower bound on the true profile. Randomized response
    and membership: the exact profile of Lemma 12.

    >>> from privamp import GaussianMechanism
    >>> from privamp.sampling import Poisson
    >>> rep = tightness_report(GaussianMechanism(1.0), Poisson(0.1), [1.0])
    >>> bool(rep.lower[0] <= rep.upper[0]), round(float(rep.ratio[0]), 3)
    (True, 1.0)
    """
    e = check_real_array("eps", eps, "[0, inf)").reshape(-1)
    upper_profile = amplify(mechanism, scheme, relation)
    pts = upper_profile.points(e)
    eps_prime = pts["eps_amplified"]
    if isinstance(mechanism, RandomizedResponse | RandomizedMembershipMechanism):
        lb = membership_lower_bound(scheme, mechanism.p, upper_profile.relation)
        lower = down_ulps(np.atleast_1d(lb.delta(eps_prime)), 8)
        method = "randomized membership, exact (Lemma 12)"
    elif isinstance(mechanism, GaussianMechanism | LaplaceMechanism):
        pmf = scheme.multiplicity()
        ks = np.arange(pmf.support_size, dtype=float)
        keep = pmf.log_pmf > pmf.log_pmf.max() - 60.0  # drop mass below e^-60 of the mode
        lw = pmf.log_pmf[keep] - float(logsumexp_signed(pmf.log_pmf[keep])[0])
        shifts = ks[keep] * mechanism.sensitivity
        kind = "gaussian" if isinstance(mechanism, GaussianMechanism) else "laplace"
        scale = mechanism.sigma if kind == "gaussian" else mechanism.scale
        mix = _log_mixture(lw, shifts, kind, scale)
        zero = _log_mixture(np.zeros(1), np.zeros(1), kind, scale)
        lo_z = -40 * scale
        hi_z = float(shifts.max()) + 40 * scale
        points = np.unique(np.concatenate([shifts, [0.0]]))
        fwd = hockey_stick_density(mix, zero, eps_prime, log_density=True, lower=lo_z,
                                   upper=hi_z, points=points)
        bwd = hockey_stick_density(zero, mix, eps_prime, log_density=True, lower=lo_z,
                                   upper=hi_z, points=points)
        lower = np.maximum(np.atleast_1d(fwd.lower), np.atleast_1d(bwd.lower))
        # the dropped e^-60 mass can only lower the achieved divergence by as much
        lower = np.maximum(lower - math.exp(-60.0), 0.0)
        method = f"sum query with the record contributing Δ per copy ({kind} noise, quadrature)"
    else:
        raise UnsupportedCombinationError(
            f"no concrete lower-bound construction for {type(mechanism).__name__}; "
            "use membership_lower_bound for the class of mechanisms with profile ψ_p")
    return TightnessReport(e, eps_prime, pts["delta_amplified"], lower, method)


# -------------------------------------------------------------------------------------------
# aligned privacy profiles (MUST Definition 5, Figure 3)
# -------------------------------------------------------------------------------------------

_CLASSES = ("strong", "weak-I", "weak-II", "dilution")


def classify_amplification(eps_ratio: Any, delta_difference: Any, *,
                           delta_tolerance: float = 0.0):
    """Classify (ε'/ε, δ' − δ) points (MUST Definition 5, typos corrected via Figure 3).

    * ``strong``: ε'/ε < 1 and δ' − δ ≤ tolerance;
    * ``weak-I``: ε'/ε < 1 and δ' − δ > tolerance;
    * ``weak-II``: ε'/ε ≥ 1 and δ' − δ ≤ tolerance;
    * ``dilution``: ε'/ε ≥ 1 and δ' − δ > tolerance.

    The δ-condition is non-strict (δ' = δ counts as met): Figure 4 calls WOR with Laplace "100%
    strong" although both δ's are 0 there.

    >>> classify_amplification([0.5, 0.5], [-0.1, 0.2]).tolist()
    ['strong', 'weak-I']
    """
    r = check_real_array("eps_ratio", eps_ratio, "[0, inf]")
    d = check_real_array("delta_difference", delta_difference, "[-1, 1]")
    tol = check_real("delta_tolerance", delta_tolerance, "[0, 1]")
    eps_ok = r < 1.0
    delta_ok = d <= tol
    idx = np.where(eps_ok, np.where(delta_ok, 0, 1), np.where(delta_ok, 2, 3))
    return np.asarray(_CLASSES, dtype=object)[idx]


@dataclass(frozen=True)
class AlignedProfile:
    """The aligned privacy profile ε ↦ (ε'/ε, δ'(ε') − δ(ε)) and its classification."""

    eps: np.ndarray
    eps_ratio: np.ndarray
    delta_difference: np.ndarray
    classes: np.ndarray

    def fraction(self, kind: str) -> float:
        """Fraction of the ε grid in class ``kind``."""
        if kind not in _CLASSES:
            raise InvalidParameterError("kind", f"one of {', '.join(_CLASSES)}", kind)
        return float(np.mean(self.classes == kind))


def aligned_profile(amplified, eps: Any, *, delta_tolerance: float = 0.0) -> AlignedProfile:
    """The aligned profile of an amplified profile (from :func:`amplify`) on a grid of base ε > 0.

    >>> from privamp import LaplaceMechanism
    >>> from privamp.sampling import WOR
    >>> prof = amplify(LaplaceMechanism(1.0, relation="substitute"), WOR(1000, 400))
    >>> aligned_profile(prof, [0.05, 1.0, 4.5]).classes.tolist()
    ['strong', 'strong', 'strong']
    """
    if not hasattr(amplified, "points"):
        raise InvalidParameterError("amplified", "an amplified profile (from amplify)",
                                    amplified)
    e = check_real_array("eps", eps, "(0, inf)").reshape(-1)
    pts = amplified.points(e)
    ratio = pts["eps_amplified"] / e
    diff = pts["delta_amplified"] - pts["delta"]
    classes = classify_amplification(ratio, diff, delta_tolerance=delta_tolerance)
    return AlignedProfile(e, ratio, diff, classes)
