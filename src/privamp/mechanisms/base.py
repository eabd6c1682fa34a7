"""The mechanism interface and the registry the CLI and the property tests walk."""

from __future__ import annotations

import abc
import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any, ClassVar

from ..profiles import GroupPrivacy, PrivacyProfile
from ..relations import NeighbouringRelation

__all__ = ["REGISTRY", "Mechanism", "MechanismRegistry", "register"]


class MechanismRegistry(MutableMapping):
    """name -> mechanism class, filled by :func:`register`.

    Mechanisms defined outside :mod:`privamp.mechanisms` (the diffusion mechanisms of
    :mod:`privamp.amplification.diffusion`) register themselves when their module is imported.
    So that the registry is complete whatever has been imported, its first read imports those
    modules (``providers``); ``import privamp`` itself stays as fast as without them.
    """

    def __init__(self, providers: tuple[str, ...] = ()):
        self._entries: dict[str, type[Mechanism]] = {}
        self._providers = tuple(providers)
        self._loaded = not self._providers

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True  # before importing: a provider's own reads must not recurse
        try:
            for module in self._providers:
                importlib.import_module(module)
        except BaseException:
            self._loaded = False
            raise

    def __getitem__(self, name: str) -> type[Mechanism]:
        self._load()
        return self._entries[name]

    def __setitem__(self, name: str, cls: type[Mechanism]) -> None:
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        self._load()
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(self._entries)

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"MechanismRegistry({sorted(self)!r})"


#: name -> mechanism class (CLI names such as "gaussian", "randomized-response",
#: "ornstein-uhlenbeck").
REGISTRY = MechanismRegistry(providers=("privamp.amplification.diffusion",))


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
    #: Whether the profile's symmetric curve is the curve of the mechanism's worst-case pair in
    #: both orders (a symmetric pair: Gaussian, Laplace, randomized response, ...). Then
    #: composing that curve gives the mechanism's exact ε; otherwise (an asymmetric discrete
    #: pair) it gives an upper bound, and a bracket's lower end bounds that bound.
    exact_pair: ClassVar[bool] = True

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

    @classmethod
    def examples(cls, relation: NeighbouringRelation | str = NeighbouringRelation.ADD_REMOVE
                 ) -> list[Mechanism]:
        """Representative instances stated under ``relation``, spanning the parameter domain
        with its boundaries. The conformance suite (``tests/conformance``) runs every class of
        :data:`REGISTRY` through them, with every scheme, relation and backend: a new
        mechanism is covered by declaring its examples, without writing a test."""
        raise NotImplementedError(f"{cls.__name__} declares no examples")

    def group_profile(self, k: int, method: GroupPrivacy | str | None = None) -> PrivacyProfile:
        """δ_k: the profile for datasets at path distance ≤ k (white-box where known)."""
        return self.profile().group(k, method)
