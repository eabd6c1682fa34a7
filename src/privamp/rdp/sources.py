"""The RDP backend's rules: which Rényi bound applies to a (scheme, mechanism, relation).

:data:`RDP_RULES` is walked in order; the first rule that matches an accountant event gives its
RDP *source*, an upper bound: a callable ``orders -> RdpCurve`` wherever the bound can be
evaluated at any order (so that the accountant can refine the order around its optimum), or a
curve on the given orders.

==========================  ==============  ==========  ===========================================
scheme                      mechanism       relation    bound
==========================  ==============  ==========  ===========================================
none                        any             any         its own curve (:func:`rdp_curve`)
Poisson                     Gaussian        add/remove  exact (Mironov, Talwar, Zhang 2019)
Poisson                     Laplace, RR,    add/remove  exact (:mod:`privamp.rdp.poisson_exact`)
                            membership
Poisson                     any             add/remove  Zhu & Wang 2019 (:func:`subsampled_rdp`)
WOR                         any             substitute  Wang, Balle, Kasiviswanathan 2019
any                         any             any         Theorem 6 on the amplified profile, where it
                                                        has pure DP (else refused: use the PLD)
==========================  ==============  ==========  ===========================================

The three subsampled rules apply without an explicit group-privacy choice only (a record
appears at most once in their subsamples).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from .._rules import ANY, RuleTable
from ..errors import NumericalError, UnsupportedCombinationError
from ..mechanisms.base import Mechanism
from ..mechanisms.gaussian import GaussianMechanism
from ..mechanisms.laplace import LaplaceMechanism, LaplaceProfile
from ..mechanisms.randomized_response import (
    RandomizedMembershipMechanism,
    RandomizedResponse,
    RandomizedResponseProfile,
)
from ..profiles import PrivacyProfile
from ..relations import NeighbouringRelation
from ..sampling.schemes import Poisson, WithoutReplacement

__all__ = ["RDP_RULES", "check_source", "rdp_source"]

R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE
_SOURCES = (Mechanism, PrivacyProfile)

#: The RDP backend's rules, most specific first.
RDP_RULES = RuleTable("rdp")


@RDP_RULES.rule(scheme=None, source=_SOURCES)
def unsampled(mech, scheme, relation, group_privacy, orders=None):
    from .mechanisms import rdp_curve

    return lambda o: rdp_curve(mech, o)


@RDP_RULES.rule(scheme=Poisson, source=GaussianMechanism, relation=R, grouped=False)
def poisson_gaussian(mech, scheme, relation, group_privacy, orders=None):
    from . import poisson_gaussian_rdp

    return lambda o: poisson_gaussian_rdp(mech.noise_multiplier, scheme.rate, o)


@RDP_RULES.rule(scheme=Poisson, source=(LaplaceMechanism, LaplaceProfile, RandomizedResponse,
                                        RandomizedMembershipMechanism,
                                        RandomizedResponseProfile), relation=R, grouped=False)
def poisson_exact(mech, scheme, relation, group_privacy, orders=None):
    """exact (the dominating pair ((1−q)Q + qP, Q) and its reverse, attained; Zhu, Dong, Wang
    2022, Theorem 11; W-20 without the factor 3 at integer orders)"""
    from .poisson_exact import poisson_exact_rdp

    return lambda o: poisson_exact_rdp(mech, scheme.rate, o)


@RDP_RULES.rule(scheme=Poisson, source=_SOURCES, relation=R, grouped=False)
def poisson_zhu_wang(mech, scheme, relation, group_privacy, orders=None):
    from . import subsampled_rdp

    return lambda o: subsampled_rdp(mech, scheme, orders=o)


@RDP_RULES.rule(scheme=WithoutReplacement, source=_SOURCES, relation=S, grouped=False)
def without_replacement_wbk(mech, scheme, relation, group_privacy, orders=None):
    from . import subsampled_rdp

    return subsampled_rdp(mech, scheme, orders=orders)


def _amplified_with_pure_dp(mech, scheme, relation, group_privacy, *, check_only=False):
    """The amplified profile, refused where it has no pure DP. ``check_only``: the check run at
    ``add`` (:data:`_CHECKS`) decides from the largest multiplicity's group profile alone
    (:attr:`~privamp.amplification.subsampling.AmplifiedProfile.has_pure_epsilon`), without
    placing the threshold; the query then computes it (and refuses there in the unlikely case
    that the placement fails)."""
    from ..amplification.subsampling import amplify

    profile = amplify(mech, scheme, relation, group_privacy)
    cheap = getattr(profile, "has_pure_epsilon", None) if check_only else None
    pure = cheap if cheap is not None else math.isfinite(profile.pure_epsilon)
    if not pure:
        # Theorem 6 on the amplified profile is valid here too (its tail is bounded through the
        # group profiles) but, with the many-copies terms of WR and MUST, it is both very loose
        # (ε ≈ 100 where the PLD gives 4.8 for σ = 1, m = 100, 1,000 steps) and slow
        raise UnsupportedCombinationError(
            f"no useful RDP bound for {mech!r} on {scheme!r}: only Theorem 6 applies, and it is "
            "very loose for mechanisms without pure DP under multiplicities; use the 'pld' "
            "backend (or privamp.rdp.rdp_from_profile on the amplified profile directly)")
    return profile


@RDP_RULES.rule(scheme=ANY, source=_SOURCES)
def amplified_theorem6(mech, scheme, relation, group_privacy, orders=None):
    from .mechanisms import rdp_from_profile

    profile = _amplified_with_pure_dp(mech, scheme, relation, group_privacy)
    try:
        return rdp_from_profile(profile, orders)
    except NumericalError as exc:
        raise UnsupportedCombinationError(
            f"no RDP bound for {mech!r} on {scheme!r}: Theorem 6 needs the amplified profile to "
            f"reach 0 or to bound its tail ({exc}); use the 'pld' backend") from None


#: rules whose applicability needs more than the types: a cheap check run when an event is
#: added to a ledger (so that the refusal comes at ``add``, not at the query)
_CHECKS = {amplified_theorem6: functools.partial(_amplified_with_pure_dp, check_only=True)}


def check_source(mech, scheme, relation, group_privacy) -> None:
    """Refuse (:class:`UnsupportedCombinationError`) an event the RDP backend cannot bound."""
    rule = RDP_RULES.find(mech, scheme, relation, group_privacy)
    check = _CHECKS.get(rule.build)
    if check is not None:
        check(mech, scheme, relation, group_privacy)


def rdp_source(mech, scheme, relation, group_privacy, orders: Any):
    """The RDP source of an event (see the module doc)."""
    rule = RDP_RULES.find(mech, scheme, relation, group_privacy)
    return rule.build(mech, scheme, relation, group_privacy, orders)
