"""The mechanism interface and the registry the CLI and the property tests walk."""

from __future__ import annotations

import abc
import importlib
import math
from collections.abc import Iterator, MutableMapping
from typing import Any, ClassVar

from .._numerics import div_up
from .._params import Param
from .._validation import check_real, check_real_array, check_rng
from ..errors import InvalidParameterError
from ..profiles import GroupPrivacy, PrivacyProfile
from ..relations import NeighbouringRelation

__all__ = ["REGISTRY", "SENSITIVITY", "AdditiveNoiseMechanism", "Mechanism", "MechanismRegistry",
           "build_mechanism", "noise_mechanisms", "register"]


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
        if name not in self._entries:  # a mechanism registered already needs no provider
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

    def parametrised(self) -> tuple[str, ...]:
        """The names of the mechanisms built from flat parameters (those declaring
        :attr:`Mechanism.params`), sorted: the choices of ``--mechanism`` and of the sweep axis
        ``mechanism``. Reads the mechanisms registered so far without importing the providers
        (whose mechanisms take curves and times, not flat parameters), so that building the
        command line stays fast."""
        return tuple(sorted(name for name, cls in self._entries.items() if cls.params))


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


#: The sensitivity parameter of the additive-noise mechanisms, as the CLI and the sweeps take
#: it (the constructors also accept 0; a query of sensitivity 0 needs no noise and no
#: accounting, so the command line refuses it).
SENSITIVITY = Param("sensitivity", "(0, inf)", default=1.0,
                    help="gaussian, laplace: sensitivity under the relation (default 1)")


def noise_mechanisms() -> dict[str, str]:
    """noise parameter -> mechanism name, for the parametrised mechanisms with a noise scale
    (``{"scale": "laplace", "sigma": "gaussian"}``): what ``--calibrate sigma`` and the sweeps'
    ``calibrate`` axis may solve for."""
    return {REGISTRY[name].noise: name for name in REGISTRY.parametrised()
            if REGISTRY[name].noise is not None}


def build_mechanism(name: str, relation: NeighbouringRelation | str | None = None,
                    **values: Any) -> Mechanism:
    """The mechanism ``name`` of :data:`REGISTRY` from its declared parameters (``None``: not
    given), stated under ``relation`` — how the CLI, the sweeps and calibration build them.

    >>> build_mechanism("laplace", "substitute", scale=2.0, sensitivity=None).describe()
    {'name': 'laplace', 'scale': 2.0, 'sensitivity': 1.0, 'relation': 'substitute'}
    """
    return REGISTRY[name].from_params(relation, **values)


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
    #: The parameters set from the command line and the sweep grids (declared once: the CLI
    #: options, the sweep axes and :meth:`from_params` are generated from them). Empty for a
    #: mechanism that is not built from flat numbers (a given pair, a diffusion).
    params: ClassVar[tuple[Param, ...]] = ()
    #: Parameters of which exactly one must be given (randomized response: ε or p).
    one_of: ClassVar[tuple[str, ...]] = ()
    #: The noise parameter noise calibration solves for (``"sigma"``, ``"scale"``); ``None``
    #: when the mechanism has no noise scale to calibrate.
    noise: ClassVar[str | None] = None

    @classmethod
    def required(cls) -> tuple[Param, ...]:
        """The declared parameters that must be given (no default, not in :attr:`one_of`)."""
        return tuple(p for p in cls.params if p.default is None and p.name not in cls.one_of)

    @classmethod
    def from_params(cls, relation: NeighbouringRelation | str | None = None,
                    **values: Any) -> Mechanism:
        """The mechanism from its declared parameters as keywords (``None`` or absent: the
        parameter's default), stated under ``relation`` (default add/remove)."""
        names = {p.name for p in cls.params}
        for key, value in values.items():
            if key not in names and value is not None:
                raise InvalidParameterError(key, f"not a parameter of the {cls.registry_name!r} "
                                            f"mechanism (it takes {', '.join(sorted(names))})",
                                            value)
        given = {p.name: (p.default if values.get(p.name) is None else values[p.name])
                 for p in cls.params}
        for p in cls.required():
            if given[p.name] is None:
                raise InvalidParameterError(p.name, f"given for mechanism {cls.registry_name!r}",
                                            None)
        if cls.one_of and sum(given[name] is not None for name in cls.one_of) != 1:
            first, *others = cls.one_of
            raise InvalidParameterError(
                first, f"given, or {' or '.join(others)}, but not both (mechanism "
                f"{cls.registry_name!r})", tuple(given[name] for name in cls.one_of))
        rel = NeighbouringRelation.ADD_REMOVE if relation is None else relation
        return cls._from_values(rel, **given)

    @classmethod
    def _from_values(cls, relation, **values):
        return cls(**values, relation=relation)

    def describe(self) -> dict[str, Any]:
        """``{"name": registry name, <parameter>: value, ..., "relation": ...}``."""
        out: dict[str, Any] = {"name": self.registry_name}
        out.update({p.name: getattr(self, p.name) for p in self.params
                    if hasattr(self, p.name)})
        out["relation"] = self.relation.value
        return out

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


class AdditiveNoiseMechanism(Mechanism):
    """A mechanism ``f(x) + Z`` adding independent noise of scale s (the parameter named by
    :attr:`noise`: σ, b) to each coordinate of a real query f of sensitivity Δ ≥ 0 under
    :attr:`relation`; its privacy depends on θ = Δ/s alone. Subclasses are frozen dataclasses
    with the fields ``<noise>``, ``sensitivity`` and ``relation`` and draw the noise in
    :meth:`_draw_noise`."""

    sensitivity: float

    def __post_init__(self):
        name = self.noise
        scale = check_real(name, getattr(self, name), "(0, inf)")
        sens = check_real("sensitivity", self.sensitivity, "[0, inf)")
        object.__setattr__(self, name, scale)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "relation", NeighbouringRelation.parse(self.relation))
        if not math.isfinite(sens / scale):
            raise InvalidParameterError(
                name, f"large enough that sensitivity / {name} is finite (sensitivity={sens!r})",
                scale,
            )

    @property
    def theta(self) -> float:
        """θ = Δ/s rounded up (privacy gets worse as θ grows, so rounding up is safe)."""
        return div_up(self.sensitivity, getattr(self, self.noise))

    def release(self, value: Any, rng: Any = None):
        """``value`` plus independent noise on each coordinate: value is a finite real scalar or
        array."""
        x = check_real_array("value", value, "(-inf, inf)", nonempty=False)
        noisy = x + self._draw_noise(check_rng(rng), x.shape)
        return float(noisy) if noisy.ndim == 0 else noisy

    @abc.abstractmethod
    def _draw_noise(self, rng, shape):
        """An array of the given shape of independent noise draws from ``rng``."""
