"""Dominating pairs (as hockey-stick curves) of mechanisms, profiles and sampling schemes.

:func:`pair_curves` turns one ledger event into the curves the PLD engine composes:

* **Poisson sampling under add/remove**: the exact *remove* and *add* pairs of the subsampled
  dominating pair (Zhu, Dong, Wang 2022, Theorem 11), composed separately by the engine — in
  closed form for the Gaussian (:class:`~privamp.pld.curves.PoissonGaussianCurve`), from the
  base profile's symmetric curve for every other mechanism or profile
  (:class:`~privamp.pld.curves.PoissonPairCurve`). Composing the symmetrised amplified profile
  instead (the maximum of the two) is valid but 3–30 % looser after many steps, and its lower
  end is not a lower bound on the mechanism's ε.
* **Everything else**: the symmetric curve of the privacy profile (a privacy profile determines a
  dominating pair: its symmetric extension ``1 − e^ε + e^ε δ(−ε)`` for ε < 0 is the supremum over
  ordered neighbours; Zhu, Dong, Wang 2022, §3). For a sampling scheme the profile is the
  amplified one (:func:`~privamp.amplification.subsampling.amplify`): Poisson under
  substitution (BBG Theorem 14), WOR (Theorem 9), WR and the MUST schemes (the multiplicity
  formula of BBG Theorem 10 / MUST Theorem 5, with group privacy). This is how the schemes that
  have no closed-form pair are composed — and it is a certified bound, unlike the mixture PLDs of
  the MUST paper for WR and MUST, whose pair of datasets is not proven to be the worst case
  (see :mod:`privamp.pld.fourier`).
"""

from __future__ import annotations

from typing import Any

from .._rules import ANY, RuleTable
from ..errors import InvalidTypeError, UnsupportedCombinationError
from ..mechanisms.base import Mechanism
from ..mechanisms.gaussian import GaussianMechanism, GaussianProfile
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from ..sampling.rounds import _BatchedScheme
from ..sampling.schemes import Poisson, SamplingScheme
from .curves import PairCurve, PoissonGaussianCurve, PoissonPairCurve, ProfileCurve

__all__ = ["PAIR_RULES", "pair_curves"]


def pair_curves(source: Any, scheme: SamplingScheme | None = None,
                relation: NeighbouringRelation | str | None = None,
                group_privacy: Any = None) -> dict[str, PairCurve]:
    """The dominating pair curves of ``source`` (run on ``scheme``'s subsample if given).

    Parameters
    ----------
    source : Mechanism, PrivacyProfile or PairCurve
        The base mechanism or its profile, stated under the relation the scheme needs (see
        :func:`~privamp.amplification.subsampling.amplify`); a ``PairCurve`` is used as is
        (symmetric).
    scheme : SamplingScheme, optional
    relation : NeighbouringRelation or str, optional
        The relation on the whole dataset (default: the scheme's natural relation).
    group_privacy : GroupPrivacy or str, optional
        White- or black-box group profiles for schemes with multiplicities.

    Returns
    -------
    dict
        ``{"symmetric": curve}`` or ``{"remove": curve, "add": curve}``.

    >>> from privamp import GaussianMechanism
    >>> from privamp.sampling import Poisson
    >>> sorted(pair_curves(GaussianMechanism(1.0), Poisson(0.01)))
    ['add', 'remove']
    """
    if isinstance(source, PairCurve):
        return {"symmetric": source}
    if not isinstance(source, (Mechanism, PrivacyProfile)):
        raise InvalidTypeError("source", "a Mechanism, a PrivacyProfile or a PairCurve", source)
    rel = None if scheme is None else scheme.resolve(relation)[0]
    return PAIR_RULES.build(source, scheme, rel, group_privacy)


#: The PLD engine's rules, most specific first: which dominating pair curves an event is
#: composed through (see the module doc).
PAIR_RULES = RuleTable("pld")
_SOURCES = (Mechanism, PrivacyProfile)
_R = NeighbouringRelation.ADD_REMOVE


def _profile(source):
    return source.profile() if isinstance(source, Mechanism) else source


@PAIR_RULES.rule(scheme=None, source=_SOURCES, exact=True)
def unsampled(source, scheme, relation, group_privacy):
    """The symmetric curve of the mechanism's own profile."""
    return {"symmetric": ProfileCurve(_profile(source))}


def _stated_add_remove(source) -> bool:
    return getattr(source, "relation", _R) is _R


@PAIR_RULES.rule(scheme=Poisson, source=(GaussianMechanism, GaussianProfile), relation=_R,
                 exact=True)
def poisson_gaussian(source, scheme, relation, group_privacy):
    """Poisson under add/remove of a Gaussian: the exact remove and add pairs in closed form (a
    record appears at most once: group privacy plays no part). θ = 0 and a base stated under
    another relation go through the next rules."""
    if source.theta > 0 and _stated_add_remove(source):
        return {o: PoissonGaussianCurve(source.theta, scheme.rate, o,
                                        theta_lower=source.theta_lower)
                for o in ("remove", "add")}
    return poisson_pair(source, scheme, relation, group_privacy)


@PAIR_RULES.rule(scheme=Poisson, source=_SOURCES, relation=_R, exact=True)
def poisson_pair(source, scheme, relation, group_privacy):
    """Poisson under add/remove: the remove and add pairs from the base profile's curve."""
    if not _stated_add_remove(source):
        return amplified(source, scheme, relation, group_privacy)
    base = ProfileCurve(_profile(source))
    return {o: PoissonPairCurve(base, scheme.rate, o) for o in ("remove", "add")}


@PAIR_RULES.rule(scheme=_BatchedScheme, source=_SOURCES)
def batched(source, scheme, relation, group_privacy):
    """Random allocation, shuffling and truncated Poisson: the sampler's own pair of a round
    (:mod:`privamp.sampling.rounds`), composed over rounds; the Gaussian only."""
    reason = scheme.check_mechanism(source, relation)
    if reason is not None:
        raise UnsupportedCombinationError(reason)
    return scheme.pld_events(source, scheme.steps_per_round)[0].curves


@PAIR_RULES.rule(scheme=ANY, source=_SOURCES)
def amplified(source, scheme, relation, group_privacy):
    """Every other scheme and relation: the symmetric curve of the amplified profile."""
    from ..amplification.subsampling import amplify

    return {"symmetric": ProfileCurve(amplify(source, scheme, relation, group_privacy))}
