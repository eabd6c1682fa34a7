"""The mechanism interface and the registry the CLI and the property tests walk."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from ..profiles import GroupPrivacy, PrivacyProfile
from ..relations import NeighbouringRelation

__all__ = ["REGISTRY", "Mechanism", "register"]

#: name -> mechanism class (CLI names such as "gaussian", "randomized-response").
REGISTRY: dict[str, type[Mechanism]] = {}


def register(name: str):
    """Class decorator adding a mechanism to :data:`REGISTRY` under ``name``."""

    def decorate(cls):
        cls.registry_name = name
        REGISTRY[name] = cls
        return cls

    return decorate


class Mechanism(abc.ABC):
    """A randomized algorithm with a privacy guarantee.

    A mechanism (a) releases noisy outputs with :meth:`release`, (b) gives its privacy profile
    and group-privacy profiles, and (c) gives the privacy loss random variables of its worst-case
    pair of neighbouring output distributions (Balle et al. 2018, §3, Theorem 5).
    Parameters are validated at construction; instances are immutable.
    """

    registry_name: ClassVar[str] = ""
    relation: NeighbouringRelation

    @abc.abstractmethod
    def release(self, value: Any, rng: Any = None) -> Any:
        """Release a randomized answer for ``value`` using ``rng``."""

    @abc.abstractmethod
    def profile(self) -> PrivacyProfile:
        """The privacy profile δ(ε) with respect to :attr:`relation`."""

    @abc.abstractmethod
    def privacy_loss(self, reverse: bool = False):
        """Privacy loss random variables of the worst-case ordered pair (P, Q) of output laws
        (``reverse=True``: of (Q, P)). See :mod:`privamp.privacy_loss`."""

    def group_profile(self, k: int, method: GroupPrivacy | str | None = None) -> PrivacyProfile:
        """δ_k: the profile for datasets at path distance ≤ k (white-box where known)."""
        return self.profile().group(k, method)
