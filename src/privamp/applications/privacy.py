"""The privacy statement of an application run, and the three ways of choosing its noise.

An application (DP-SGD, the DP bootstrap) runs one Gaussian mechanism per step on a subsample
drawn by a :class:`~privamp.sampling.SamplingScheme`, ``steps`` times. What it releases is
covered by a :class:`PrivacyStatement`: the whole run is (ε, δ)-DP under ``relation`` on the full
dataset, with ε the *certified upper end* of the accountant's bracket. The statement keeps the
per-step base mechanism exactly as it was accounted — its noise standard deviation ``sigma``, its
``sensitivity`` **per copy** of a record, and the relation that sensitivity is measured under —
so an independent :class:`~privamp.accountant.Accountant` call reproduces it
(:meth:`PrivacyStatement.accountant`).

Which number goes where (the sensitivity of a sum of per-record vectors clipped to norm C,
:func:`privamp.relations.clipped_sum_sensitivity`):

* the scheme fixes the relation the base mechanism must be stated under
  (:meth:`~privamp.sampling.SamplingScheme.base_relation`): add/remove for Poisson under
  add/remove, substitution for every other case (WOR, WR, MUST; Poisson under substitution;
  WR under add/remove is Theorem 11's hybrid, whose subsamples differ by a substitution);
* the base mechanism's ``sensitivity`` is the per-copy one under that relation: C under
  add/remove, 2C under substitution;
* a record drawn k times moves the sum by up to k times as much (2kC): that is *not* put into the
  sensitivity. The amplification theorems for WR and MUST (BBG 2018 Theorem 10, MUST Theorem 5)
  already weight the white-box group profiles δ_k of the base mechanism — the Gaussian profile
  with sensitivity k·Δ — by the probability of k copies. Putting 2kC into the base mechanism
  would count the copies twice; putting C under substitution would count half a record.

Three ways of choosing the noise (:func:`calibrate_noise`, :func:`account`,
:func:`per_step_noise_multiplier`):

1. a target (ε, δ) for the whole run: the smallest σ whose certified ε is at most the target
   (:func:`privamp.calibrate.calibrate_sigma`);
2. a given noise multiplier z = σ/Δ: the run's ε at δ is accounted;
3. the MUST paper's per-step protocol (Zhao & Liu 2023, §4.2): a per-step ε' *after*
   amplification and a δ before it; the base ε solves ε' = log(1 + η(e^ε − 1)) and σ is the
   *exact* analytic Gaussian calibration at (ε, δ) (Balle & Wang 2018) instead of the paper's
   eq. (9), σ = Δ√(2 log(1.25/δ))/ε, which is only valid for ε < 1 (the paper's back-solved ε
   reach 1.47). The whole run is then accounted as in 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .._validation import check_int, check_real
from ..errors import InvalidParameterError, InvalidTypeError
from ..mechanisms.gaussian import GaussianMechanism
from ..relations import NeighbouringRelation
from ..sampling.schemes import SamplingScheme
from ._forward import forwarded

__all__ = ["PrivacyStatement", "account", "calibrate_noise", "describe_scheme",
           "per_step_noise_multiplier", "per_step_statement", "resolve_relations"]


def resolve_relations(scheme: SamplingScheme, relation: NeighbouringRelation | str | None
                      ) -> tuple[NeighbouringRelation, NeighbouringRelation]:
    """(relation on the whole dataset, relation the base mechanism is stated under):
    :meth:`SamplingScheme.resolve`, for a value that must be a privamp scheme."""
    if not isinstance(scheme, SamplingScheme):
        raise InvalidTypeError("scheme", "a privamp SamplingScheme", scheme)
    return scheme.resolve(relation)


def describe_scheme(scheme: SamplingScheme) -> dict[str, Any]:
    """``{"scheme": kind, "rate"/"n"/"b"/"m": ...}``: :meth:`SamplingScheme.describe`."""
    return scheme.describe()


@dataclass(frozen=True)
class PrivacyStatement:
    """The run is (``epsilon``, ``delta``)-DP under ``relation`` on the full dataset.

    Attributes
    ----------
    epsilon : float
        Certified upper bound on ε at ``delta`` for the composition of ``steps`` steps.
    epsilon_lower : float or None
        Lower end of the accountant's bracket (how tight ``epsilon`` is), when available.
    delta : float
    relation : NeighbouringRelation
        Relation on the whole dataset.
    scheme : SamplingScheme
        How each step's subsample is drawn.
    steps : int
        Number of composed steps (iterations, bootstrap replicates).
    mechanism : GaussianMechanism
        The per-step base mechanism as accounted: ``sigma`` (noise standard deviation on the
        released statistic), ``sensitivity`` (per copy of a record) and ``relation`` (the base
        relation, which the scheme dictates).
    backend : str
        The accountant backend ("pld", "rdp" or "fourier").
    method : str
        How the noise was chosen: ``"target"``, ``"noise_multiplier"`` or ``"per_step"``.
    step_epsilon, step_delta : float or None
        For the per-step protocol: the per-step (ε', δ'(ε')) after amplification — δ' is the
        amplified profile's exact value, including the group terms of WR and MUST.
    """

    epsilon: float
    delta: float
    relation: NeighbouringRelation
    scheme: SamplingScheme
    steps: int
    mechanism: GaussianMechanism
    epsilon_lower: float | None = None
    backend: str = "pld"
    method: str = "target"
    step_epsilon: float | None = None
    step_delta: float | None = None
    extra: dict = field(default_factory=dict, compare=False)

    sigma = forwarded("mechanism.sigma",
                      "Noise standard deviation added to the released per-step statistic.")
    sensitivity = forwarded(
        "mechanism.sensitivity",
        "Per-copy L2 sensitivity of that statistic under :attr:`base_relation`.")
    noise_multiplier = forwarded("mechanism.noise_multiplier", "σ / sensitivity.")
    base_relation = forwarded("mechanism.relation")

    def accountant(self, backend: str | None = None):
        """A fresh :class:`~privamp.accountant.Accountant` holding this run's events."""
        from ..accountant import Accountant

        return Accountant(backend or self.backend).add(
            self.mechanism, self.steps, scheme=self.scheme, relation=self.relation)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able description (used by the command line)."""
        out = {"epsilon": self.epsilon, "epsilon_lower": self.epsilon_lower,
               "delta": self.delta, "relation": self.relation.value,
               "base_relation": self.base_relation.value, "steps": self.steps,
               "sigma": self.sigma, "sensitivity": self.sensitivity,
               "noise_multiplier": self.noise_multiplier, "accountant": self.backend,
               "noise_choice": self.method, "sampling": describe_scheme(self.scheme)}
        if self.step_epsilon is not None:
            out["step_epsilon"] = self.step_epsilon
            out["step_delta"] = self.step_delta
        out.update(self.extra)
        return out

    def __str__(self) -> str:
        """The statement as text, rounded to the safe side (:mod:`privamp.display`): ε up, the
        bracket outward, σ up.

        >>> from privamp.sampling import Poisson
        >>> print(account(GaussianMechanism(1.0), scheme=Poisson(0.01), steps=1000, delta=1e-5))
        ... # doctest: +NORMALIZE_WHITESPACE
        (1.82825, 1e-05)-DP (bracket [1.82736, 1.82825]) under add-remove for 1000 steps on
        Poisson(rate=0.01): Gaussian noise sigma = 1 on a statistic of per-copy sensitivity 1
        (add-remove)
        """
        from ..display import bracket, calibrated, upper

        lower = ("" if self.epsilon_lower is None
                 else f" (bracket {bracket(self.epsilon_lower, self.epsilon)})")
        return (f"({upper(self.epsilon)}, {upper(self.delta, 3)})-DP{lower} under "
                f"{self.relation.value} for {self.steps} steps on {self.scheme!r}: Gaussian "
                f"noise sigma = {calibrated(self.sigma, 'sigma')} on a statistic of per-copy "
                f"sensitivity {upper(self.sensitivity)} ({self.base_relation.value})")


def _steps_delta(steps, delta):
    return check_int("steps", steps, "[1, inf)"), check_real("delta", delta, "(0, 1)")


def account(mechanism: GaussianMechanism, *, scheme: SamplingScheme, steps: int, delta: float,
            relation: NeighbouringRelation | str | None = None, backend: str = "pld",
            method: str = "noise_multiplier", step_epsilon: float | None = None,
            step_delta: float | None = None) -> PrivacyStatement:
    """The statement of ``steps`` runs of ``mechanism`` on ``scheme``'s subsamples, at δ.

    >>> from privamp.sampling import Poisson
    >>> st = account(GaussianMechanism(1.0), scheme=Poisson(0.01), steps=1000, delta=1e-5)
    >>> round(st.epsilon, 4), st.relation.value
    (1.8282, 'add-remove')
    """
    from ..accountant import Accountant

    steps, delta = _steps_delta(steps, delta)
    outer, _ = resolve_relations(scheme, relation)
    bracket = Accountant(backend).add(mechanism, steps, scheme=scheme,
                                      relation=outer).epsilon(delta)
    return PrivacyStatement(bracket.upper, delta, outer, scheme, steps, mechanism,
                            bracket.lower, backend, method, step_epsilon, step_delta)


def calibrate_noise(target_epsilon: float, delta: float, *, scheme: SamplingScheme, steps: int,
                    sensitivity: float, relation: NeighbouringRelation | str | None = None,
                    backend: str = "pld") -> PrivacyStatement:
    """The smallest Gaussian σ for which ``steps`` steps on ``scheme`` are
    (``target_epsilon``, δ)-DP, for a statistic of per-copy ``sensitivity`` under the base
    relation. Raises :class:`~privamp.errors.UnreachableTargetError` when no σ ≤ 10^6·Δ reaches
    the target.

    >>> from privamp.sampling import WOR
    >>> st = calibrate_noise(1.0, 1e-5, scheme=WOR(10_000, 100), steps=1000, sensitivity=2.0)
    >>> round(st.noise_multiplier, 3), st.epsilon <= 1.0, st.base_relation.value
    (1.588, True, 'substitute')
    """
    from ..calibrate import calibrate_sigma

    steps, delta = _steps_delta(steps, delta)
    sens = check_real("sensitivity", sensitivity, "(0, inf)")
    outer, base = resolve_relations(scheme, relation)
    cal = calibrate_sigma(target_epsilon, delta, steps=steps, scheme=scheme, sensitivity=sens,
                          relation=outer, backend=backend)
    mech = GaussianMechanism(cal.value, sensitivity=sens, relation=base)
    return PrivacyStatement(cal.epsilon, delta, outer, scheme, steps, mech, cal.epsilon_lower,
                            backend, "target")


def per_step_noise_multiplier(step_epsilon: float, step_delta: float,
                              scheme: SamplingScheme) -> float:
    """The noise multiplier z = σ/Δ of the MUST paper's per-step protocol, made exact.

    The per-step budget ε' is *after* amplification; the base ε before it solves
    ε' = log(1 + η(e^ε − 1)) (BBG 2018 Theorem 2; rounded down, the safe side), with η the
    scheme's amplification parameter; z is the smallest noise multiplier whose Gaussian
    mechanism is (ε, ``step_delta``)-DP by its exact profile (Balle & Wang 2018 analytic
    calibration). The MUST paper's eq. (9), z = √(2 log(1.25/δ))/ε, is used there with ε up to
    1.47 although it needs ε < 1 (catalogue, MUST errata 16); where it is valid it adds more
    noise than needed.

    >>> from privamp.sampling import WOR
    >>> z = per_step_noise_multiplier(0.01, 1e-3, WOR(1000, 100))
    >>> round(z, 2), round(math.sqrt(2 * math.log(1250)) / 0.0957661, 2)  # exact vs eq. (9)
    (18.02, 39.43)
    """
    from ..amplification.subsampling import deamplify_eps

    eps_prime = check_real("step_epsilon", step_epsilon, "(0, inf)")
    delta = check_real("step_delta", step_delta, "(0, 1)")
    eta = float(getattr(scheme, "amplification_eta", scheme.eta))
    eps = float(deamplify_eps(eps_prime, eta))
    if not math.isfinite(eps):  # pragma: no cover - η > 0 for every scheme
        raise InvalidParameterError("step_epsilon", "reachable for this scheme", eps_prime)
    return GaussianMechanism.calibrated(eps, delta).noise_multiplier


def per_step_statement(step_epsilon: float, step_delta: float, *, scheme: SamplingScheme,
                       steps: int, delta: float, sensitivity: float,
                       relation: NeighbouringRelation | str | None = None,
                       noise_multiplier: float | None = None,
                       backend: str = "pld") -> PrivacyStatement:
    """The statement of the per-step protocol (:func:`per_step_noise_multiplier`): σ = z·Δ, the
    whole run accounted at ``delta``, and the per-step (ε', δ'(ε')) of the amplified profile.

    ``noise_multiplier`` overrides z (the bootstrap calibrates one statistic and releases two).
    """
    from ..amplification.subsampling import amplify

    sens = check_real("sensitivity", sensitivity, "(0, inf)")
    z = (per_step_noise_multiplier(step_epsilon, step_delta, scheme)
         if noise_multiplier is None else check_real("noise_multiplier", noise_multiplier,
                                                     "(0, inf)"))
    outer, base = resolve_relations(scheme, relation)
    mech = GaussianMechanism(z * sens, sensitivity=sens, relation=base)
    amplified = amplify(mech, scheme, outer)
    eps_prime = float(step_epsilon)
    step_delta_amp = float(amplified.delta(eps_prime))
    return account(mech, scheme=scheme, steps=steps, delta=delta, relation=outer,
                   backend=backend, method="per_step", step_epsilon=eps_prime,
                   step_delta=step_delta_amp)
