"""Subsampling schemes: Poisson, without/with replacement, MUST and general stage chains.

Every scheme is an immutable object that

* draws real subsamples with a :class:`numpy.random.Generator` (:meth:`SamplingScheme.sample`),
  as distinct record indices and their multiplicities, fast for datasets of 10^7 records;
* gives the law of the multiplicity of the differing record (:meth:`SamplingScheme.multiplicity`)
  and the amplification parameter η = P(the record is in the subsample);
* declares the neighbouring relations it is analysed under (:attr:`SamplingScheme.relations`)
  and, for each, the relation the base mechanism must be stated under.

The amplification theorems that use these live in :mod:`privamp.amplification.subsampling`.

Schemes and their analyses (Balle, Barthe, Gaboardi 2018 "BBG"; Zhao & Liu 2023 "MUST"):

=====================  =================  ===================================================
scheme                 relation (outer)   theorem (base mechanism's relation)
=====================  =================  ===================================================
Poisson(γ)             add/remove         BBG Thm 8 (add/remove)
Poisson(γ, n)          substitute         BBG Thm 14 (substitute; datasets of size n)
WOR(n, m)              substitute         BBG Thm 9 (substitute)
WR(n, m)               substitute         BBG Thm 10 (substitute, group profiles)
WR(n, m)               add/remove         BBG Thm 11 (hybrid: base substitute; |x| = n)
MUST.OW(n, b, m)       substitute         MUST Thm 5(a)
MUST.WO(n, b, m)       substitute         MUST Cor 6 (identical in law to WR(n, m))
MUST.WW(n, b, m)       substitute         MUST Thm 5(c) (printed as "(c) MUST.OW": erratum)
StageChain(...)        substitute         privamp's first-stage coupling bound (docs)
=====================  =================  ===================================================
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._numerics import div_down, div_up
from .._params import Param
from .._validation import check_int, check_real, check_rng
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..relations import NeighbouringRelation
from .multiplicity import MultiplicityPmf
from .stages import Stage, WorStage, WrStage

__all__ = [
    "SCHEMES",
    "MustOW",
    "MustWO",
    "MustWW",
    "Poisson",
    "SamplingScheme",
    "StageChain",
    "Subsample",
    "WithReplacement",
    "WithoutReplacement",
]

R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE


@dataclass(frozen=True)
class Subsample:
    """One drawn subsample: distinct record ``indices`` (sorted) and their ``counts``.

    >>> s = Subsample(np.array([2, 5]), np.array([1, 3]))
    >>> s.size, s.take(np.arange(10) * 10).tolist()
    (4, [20, 50, 50, 50])
    """

    indices: np.ndarray
    counts: np.ndarray

    @property
    def size(self) -> int:
        """Total number of records drawn, with multiplicity."""
        return int(self.counts.sum())

    @property
    def distinct(self) -> int:
        """Number of distinct records drawn."""
        return int(self.indices.size)

    def take(self, data: Any):
        """The subsample as rows of ``data`` (repeated by multiplicity)."""
        return np.asarray(data)[np.repeat(self.indices, self.counts)]

    def multiset(self) -> np.ndarray:
        """Record indices repeated by multiplicity."""
        return np.repeat(self.indices, self.counts)


def _as_subsample(positions: np.ndarray) -> Subsample:
    idx, counts = np.unique(positions, return_counts=True)
    return Subsample(idx.astype(np.int64), counts.astype(np.int64))


def _dataset_size(n_or_data: Any) -> int:
    if isinstance(n_or_data, int | np.integer) and not isinstance(n_or_data, bool):
        return check_int("n", n_or_data, "[0, inf)")
    try:
        return len(n_or_data)
    except TypeError as exc:
        raise InvalidParameterError("n_or_data", "a dataset size or an array of records",
                                    n_or_data) from exc


#: kind -> scheme class, filled as the classes are defined (every concrete subclass of
#: :class:`SamplingScheme` with a ``kind``), in the order they are defined. The one place the
#: CLI, the sweeps, calibration, the plots and the paper reproductions learn which schemes
#: exist, what they are called and which parameters they take.
SCHEMES: dict[str, type] = {}

_N = Param("n", "[1, inf)", integer=True,
           help="dataset size (wor, wr, must-*, shuffle, truncated-poisson; Poisson under "
                "--relation substitute)")
_B = Param("b", "[1, inf)", integer=True, help="MUST stage-I size (must-*)")
_M = Param("m", "[1, inf)", integer=True, help="subsample size (wor, wr, must-*, shuffle)")


def flat_schemes() -> tuple[str, ...]:
    """The kinds built from flat parameters (every scheme but a general stage chain): the
    choices of ``--sampling`` and of the sweep axis ``sampling``."""
    return tuple(kind for kind, cls in SCHEMES.items() if cls.params)


class SamplingScheme(abc.ABC):
    """A subsampling scheme: draws subsamples and knows the multiplicity of a record.

    A scheme class declares, once: its ``kind`` (the CLI name), its ``params``, the relations it
    is analysed under (``relation_map``: outer relation -> the relation the base mechanism
    needs, the first being the default) and the theorem used under each (``theorems``).
    """

    #: CLI name (``poisson``, ``wor``, ``wr``, ``must-ow``, ``must-wo``, ``must-ww``, ``chain``).
    kind: ClassVar[str] = ""
    #: the parameters, in the order the constructor takes them (empty: not built from flat
    #: parameters, like a general :class:`StageChain`)
    params: ClassVar[tuple[Param, ...]] = ()
    #: outer relation -> base relation; the first entry is the default relation
    relation_map: ClassVar[dict[NeighbouringRelation, NeighbouringRelation]] = {}
    #: outer relation -> the amplification theorem used under it
    theorems: ClassVar[dict[NeighbouringRelation, str]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("kind") and not cls.__name__.startswith("_"):
            SCHEMES[cls.kind] = cls

    @classmethod
    def examples(cls) -> list[SamplingScheme]:
        """Representative instances spanning the parameter domain with its boundaries (rates
        from 1e-9 to 1, m ∈ {1, n − 1, n}, b ∈ {1, n}, …). The conformance suite
        (``tests/conformance``) runs every class of :data:`SCHEMES` through them: a new scheme
        is covered by declaring its examples, without writing a test."""
        raise NotImplementedError(f"{cls.__name__} declares no examples")

    @property
    def certified(self) -> bool:
        """Whether the amplification bound used for this scheme is proved (False only for
        MUST.WW under the published Theorem 5(c): an estimate)."""
        return True

    def reduced(self) -> SamplingScheme | None:
        """A simpler scheme identical in law to this one for amplification (the same
        multiplicity law and the same theorem), ``None`` for "no subsampling at all" (rate 1,
        m = n without replacement), or ``self``. The accountant does *not* use it — the
        conformance suite checks that both give the same answer, which is how a defect at a
        boundary (issue 15: Poisson at rate 1) shows itself."""
        return self

    @classmethod
    def from_params(cls, **values: Any) -> SamplingScheme:
        """The scheme from its declared parameters given as keywords (``None`` or absent: not
        given). Keywords that are not parameters of the scheme are refused."""
        names = {p.name for p in cls.params}
        for key, value in values.items():
            if key not in names and value is not None:
                raise InvalidParameterError(key, f"not a parameter of the {cls.kind!r} scheme "
                                            f"(it takes {', '.join(sorted(names))})", value)
        return cls(**{p.name: values[p.name] for p in cls.params
                      if values.get(p.name) is not None})

    @classmethod
    def at_size(cls, n: int, m: int, b: int | None = None) -> SamplingScheme:
        """The scheme drawing subsamples of (expected) size ``m`` from ``n`` records, with
        stage-I size ``b`` where it has one — how schemes are compared at equal batch size
        (Poisson at rate m/n, knowing n)."""
        return cls.from_params(n=n, m=m, b=b if "b" in cls.reads() else None)

    @classmethod
    def reads(cls, relation: NeighbouringRelation | str | None = None) -> tuple[str, ...]:
        """The parameters the scheme needs under ``relation`` (default: its default)."""
        return tuple(p.name for p in cls.params)

    @classmethod
    def default_relation(cls) -> NeighbouringRelation:
        """The relation the scheme is usually analysed under (the CLI default)."""
        return next(iter(cls.relation_map))

    @property
    def relations(self) -> dict[NeighbouringRelation, NeighbouringRelation]:
        """Supported outer relations, each mapped to the relation the base mechanism needs."""
        return dict(self.relation_map)

    @property
    def natural_relation(self) -> NeighbouringRelation:
        """The relation the scheme is usually analysed under (the CLI default)."""
        return self.default_relation()

    def resolve(self, relation: NeighbouringRelation | str | None = None
                ) -> tuple[NeighbouringRelation, NeighbouringRelation]:
        """(relation on the whole dataset, relation the base mechanism must be stated under);
        ``relation`` ``None`` is the default relation. Refuses an unsupported relation."""
        outer = (self.natural_relation if relation is None
                 else NeighbouringRelation.parse(relation))
        return outer, self.base_relation(outer)

    def theorem(self, relation: NeighbouringRelation | str | None = None) -> str:
        """The amplification theorem privamp uses for this scheme under ``relation``."""
        outer, _ = self.resolve(relation)
        return self.theorems[outer]

    def describe(self) -> dict[str, Any]:
        """``{"scheme": kind, <parameter>: value, ...}`` (the parameters that are set)."""
        out: dict[str, Any] = {"scheme": self.kind}
        for p in self.params:
            value = getattr(self, p.name, None)
            if value is not None:
                out[p.name] = value
        return out

    @property
    def fixed_size(self) -> int | None:
        """The subsample size (with multiplicity) when it is fixed, else ``None``."""
        return getattr(self, "m", None)

    def expected_size(self, n: int) -> float:
        """E[subsample size] (with multiplicity) on ``n`` records."""
        return float(self.fixed_size)

    def base_relation(self, relation: NeighbouringRelation | str) -> NeighbouringRelation:
        """The relation the base mechanism must be stated under for ``relation`` on the data,
        or :class:`UnsupportedCombinationError` naming both."""
        rel = NeighbouringRelation.parse(relation)
        if rel not in self.relations:
            supported = ", ".join(r.value for r in self.relations)
            raise UnsupportedCombinationError(
                f"{self!r} is not analysed under the {rel.value!r} relation (supported: "
                f"{supported}){self._relation_hint(rel)}")
        return self.relations[rel]

    def _relation_hint(self, relation: NeighbouringRelation) -> str:
        return ""

    @abc.abstractmethod
    def multiplicity(self) -> MultiplicityPmf:
        """Law of the number of copies of the differing record in one subsample."""

    def group_multiplicity(self, group_size: int,
                           relation: NeighbouringRelation | str | None = None
                           ) -> MultiplicityPmf | None:
        """Law of the number of draws that hit a fixed set of ``group_size`` records — the
        records a group of K-neighbours differs in — or ``None`` where privamp has no coupling
        argument for groups under ``relation`` (then groups use the post-hoc bound).

        Where it is given, the subsamples of the two datasets, coupled position by position,
        differ in exactly that many records, and the law of the subsamples that hit no member
        of the group is the same for both: the coupling argument of Balle, Barthe, Gaboardi
        2018 (Theorem 8, and the proofs of Theorems 9, 10) then bounds the profile of M ∘ S by
        ``Σ_k P(hits = k) δ_k(ε)`` at ε' = log(1 + η(e^ε − 1)), η = P(hits ≥ 1), with δ_k the
        mechanism's k-group profile (:mod:`privamp.pld.group`). At K = 1 this is
        :meth:`multiplicity`.
        """
        return None

    def _check_group_in_dataset(self, k: int) -> None:
        n = getattr(self, "n", None)
        if n is not None and k > n:
            raise InvalidParameterError(
                "group_size", f"at most the dataset size n = {n} (a group of records of the "
                f"dataset) for {self!r}", k)

    @property
    def eta(self) -> float:
        """η = P(the differing record appears in the subsample), rounded up."""
        return self.multiplicity().eta

    @property
    def eta_lower(self) -> float:
        """η rounded *down* (for lower values of amplified profiles)."""
        return self.multiplicity().eta_lower

    @property
    def amplification_eta(self) -> float:
        """The η of the ε-map ε' = log(1 + η(e^ε − 1)) of the scheme's theorem, rounded up: η
        itself, unless the theorem says otherwise (a general chain, MUST.WW)."""
        return self.eta

    @property
    def amplification_eta_lower(self) -> float:
        """:attr:`amplification_eta` rounded down."""
        return self.eta_lower

    @abc.abstractmethod
    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Positions drawn (with repetition), for a dataset of size n."""

    def sample(self, n_or_data: Any, rng: Any = None) -> Subsample:
        """Draw one subsample from a dataset of size n (or from an array of records).

        Returns the distinct record indices and their multiplicities; use
        :meth:`Subsample.take` to get the records themselves.
        """
        n = _dataset_size(n_or_data)
        self._check_dataset_size(n)
        return _as_subsample(self._draw(n, check_rng(rng)))

    def _check_dataset_size(self, n: int) -> None:
        expected = getattr(self, "n", None)
        if expected is not None and n != expected:
            raise InvalidParameterError(
                "n_or_data", f"a dataset of the scheme's size n = {expected}", n)


# -------------------------------------------------------------------------------------------
# one-stage schemes
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Poisson(SamplingScheme):
    """Poisson subsampling: each record is kept independently with probability ``rate``.

    Parameters
    ----------
    rate : float
        Sampling rate γ ∈ (0, 1].
    n : int, optional
        Dataset size. Needed only for the substitution relation (Theorem 14 of BBG depends on
        it); under add/remove (the natural relation) the dataset size is not needed.

    Multiplicity: K ∈ {0, 1} with P(K = 1) = γ; η = γ.

    >>> s = Poisson(0.01)
    >>> s.eta, s.sample(10_000, rng=0).size > 0
    (0.01, True)
    """

    rate: float
    n: int | None = None
    kind: ClassVar[str] = "poisson"
    params: ClassVar = (Param("rate", "(0, 1]", help="Poisson sampling rate, in (0, 1]"), _N)
    relation_map: ClassVar = {R: R, S: S}
    theorems: ClassVar = {
        R: "BBG Theorem 8 (Poisson, add/remove)",
        S: "BBG Theorem 14 (Poisson, substitution; extended profile for ε_k < 0)"}

    def __post_init__(self):
        object.__setattr__(self, "rate", check_real("rate", self.rate, "(0, 1]"))
        if self.n is not None:
            object.__setattr__(self, "n", check_int("n", self.n, "[1, inf)"))

    @classmethod
    def at_size(cls, n, m, b=None):
        return cls(m / n, n=n)

    @classmethod
    def reads(cls, relation=None):
        # Balle et al. 2018, Theorem 14 depends on the dataset size
        rel = cls.default_relation() if relation is None else NeighbouringRelation.parse(relation)
        return ("rate", "n") if rel is S else ("rate",)

    def expected_size(self, n: int) -> float:
        return self.rate * n

    def multiplicity(self) -> MultiplicityPmf:
        return MultiplicityPmf.bernoulli(self.rate)

    def group_multiplicity(self, group_size, relation=None):
        """Binomial(K, γ) under add/remove: the members of the group that are kept. With every
        record of D ∪ A ∪ B given its own coin (x = D ∪ A, x' = D ∪ B, |A| + |B| = K), the
        subsamples are D_s ∪ A_s and D_s ∪ B_s, at add/remove distance |A_s| + |B_s|; when no
        coin of the group comes up both are D_s; and D_s ∪ A_s is at distance |A_s| ≤ |A_s| +
        |B_s| from D_s, an independent copy of the no-hit law (the group profiles are for path
        distance ≤ k). Under substitution ``None``."""
        k = check_int("group_size", group_size, "[1, inf)")
        if self.resolve(relation)[0] is not R:
            return None
        from .._numerics import binomial_logpmf

        with np.errstate(divide="ignore", invalid="ignore"):
            log_pmf = np.asarray(binomial_logpmf(np.arange(k + 1, dtype=float), k, self.rate),
                                 dtype=float)
        return MultiplicityPmf(np.where(np.isnan(log_pmf), -np.inf, log_pmf))

    @classmethod
    def examples(cls):
        rates = (1e-9, 1e-6, 0.01, 0.5, 1 - 1e-12, 1.0)
        return [cls(r) for r in rates] + [cls(r, n=n) for r in (0.01, 1.0) for n in (1, 10)]

    def reduced(self):
        return None if self.rate == 1.0 else self

    @property
    def eta(self) -> float:
        return self.rate

    eta_lower = eta  # η = q exactly: nothing to round

    def _draw(self, n, rng):
        q = self.rate
        if q >= 0.05 or n < 10_000:
            return np.flatnonzero(rng.random(n) < q)
        # gaps between kept records are Geometric(q): O(kept) work, exact
        expected = n * q
        chunk = int(expected + 10 * math.sqrt(expected) + 16)
        positions = []
        last = -1
        while True:
            gaps = rng.geometric(q, size=chunk)
            pos = last + np.cumsum(gaps)
            inside = pos[pos < n]
            positions.append(inside)
            if inside.size < pos.size:
                break
            last = int(pos[-1])
        return np.concatenate(positions)

    def _check_dataset_size(self, n):
        if self.n is not None and n != self.n:
            raise InvalidParameterError("n_or_data", f"a dataset of the scheme's size n = "
                                        f"{self.n}", n)

    def __repr__(self) -> str:
        return f"Poisson(rate={self.rate:g}" + (f", n={self.n})" if self.n else ")")


@dataclass(frozen=True)
class WithoutReplacement(SamplingScheme):
    """Sampling without replacement: a uniform m-subset of the n records (BBG §4).

    Multiplicity: K ∈ {0, 1} with P(K = 1) = m/n; η = m/n. Analysed under substitution only: under
    add/remove the dataset size is private and a fixed m is not always available.

    >>> WithoutReplacement(n=5, m=2).eta
    0.4
    """

    n: int
    m: int
    kind: ClassVar[str] = "wor"
    params: ClassVar = (_N, _M)
    relation_map: ClassVar = {S: S}
    theorems: ClassVar = {S: "BBG Theorem 9 (without replacement, substitution)"}

    def __post_init__(self):
        n = _N.check(self.n)
        m = _M.check(self.m)
        if m > n:
            raise InvalidParameterError("m", f"at most n = {n} (sampling without replacement)",
                                        m)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "m", m)

    def _relation_hint(self, relation):
        return ("; under add/remove the dataset size is private, use Poisson subsampling or "
                "sampling with replacement (Theorem 11)")

    def multiplicity(self) -> MultiplicityPmf:
        return MultiplicityPmf.bernoulli(self.m / self.n)

    def group_multiplicity(self, group_size, relation=None):
        """Hypergeometric(n, K, m): the members of the group among the m positions drawn;
        coupling a subsample with no member to one with k members replaces each member by a
        record outside the group (uniform on the subsets that miss the group)."""
        k = check_int("group_size", group_size, "[1, inf)")
        if self.resolve(relation)[0] is not S:
            return None
        self._check_group_in_dataset(k)
        return MultiplicityPmf.point(k).then_without_replacement(self.n, self.m)

    @classmethod
    def examples(cls):
        return [cls(n, m) for n in (1, 10, 1000) for m in sorted({1, max(n - 1, 1), n})]

    def reduced(self):
        return None if self.m == self.n else self

    @property
    def eta(self) -> float:
        from .._numerics import div_up

        return div_up(float(self.m), float(self.n))

    @property
    def eta_lower(self) -> float:
        return div_down(self.m, self.n)

    def _draw(self, n, rng):
        return rng.choice(n, size=self.m, replace=False)

    def __repr__(self) -> str:
        return f"WOR(n={self.n}, m={self.m})"


@dataclass(frozen=True)
class WithReplacement(SamplingScheme):
    """Sampling with replacement: m independent uniform draws from the n records (BBG §4).

    Multiplicity: K ~ Binomial(m, 1/n); η = 1 − (1 − 1/n)^m. m > n is allowed (catalogue E14).
    Under substitution: Theorem 10; under add/remove: the hybrid Theorem 11, whose guarantee is
    for datasets of size exactly n (and their add/remove neighbours).

    >>> round(WithReplacement(n=10, m=5).eta, 12)
    0.40951
    """

    n: int
    m: int
    kind: ClassVar[str] = "wr"
    params: ClassVar = (_N, _M)
    relation_map: ClassVar = {S: S, R: S}
    theorems: ClassVar = {
        S: "BBG Theorem 10 (with replacement, substitution)",
        R: "BBG Theorem 11 (with replacement, hybrid: base substitution, data add/remove)"}

    def __post_init__(self):
        object.__setattr__(self, "n", _N.check(self.n))
        object.__setattr__(self, "m", _M.check(self.m))

    def multiplicity(self) -> MultiplicityPmf:
        return MultiplicityPmf.point(1).then_with_replacement(self.n, self.m)

    def group_multiplicity(self, group_size, relation=None):
        """Binomial(m, K/n) under substitution: the draws that land on the group (a record
        drawn twice counts twice); coupling a subsample with no such draw to one with k redraws
        each of them uniformly outside the group. Under add/remove (the hybrid Theorem 11)
        ``None``."""
        k = check_int("group_size", group_size, "[1, inf)")
        if self.resolve(relation)[0] is not S:
            return None
        self._check_group_in_dataset(k)
        return MultiplicityPmf.point(k).then_with_replacement(self.n, self.m)

    @classmethod
    def examples(cls):
        return [cls(n, m) for n in (1, 10, 1000) for m in sorted({1, max(n - 1, 1), n})]

    def _draw(self, n, rng):
        return rng.integers(0, n, size=self.m)

    def __repr__(self) -> str:
        return f"WR(n={self.n}, m={self.m})"


# -------------------------------------------------------------------------------------------
# multistage schemes
# -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StageChain(SamplingScheme):
    """A chain of sampling stages: stage i draws ``sizes[i]`` items, with (``"wr"``) or without
    (``"wor"``) replacement, from the items of stage i − 1 (stage 0 draws from the dataset).

    Parameters
    ----------
    n : int
        Dataset size.
    stages : sequence of Stage or of (kind, size)
        e.g. ``[WorStage(500), WrStage(400)]`` (or ``[("wor", 500), ("wr", 400)]``) is
        MUST.OW(n, 500, 400). Stored as :class:`~privamp.sampling.stages.Stage` objects.

    Notes
    -----
    The multiplicity law is exact (hypergeometric and binomial transitions, stage by stage). The
    amplification bound used for a general chain is privamp's *first-stage coupling bound*
    (docs/architecture.md): ε' uses η₁ = P(the record is selected by the first stage), δ' the
    exact final multiplicity law. For the two-stage MUST forms, :class:`MustOW`, :class:`MustWO`
    and :class:`MustWW` use the tighter η of Zhao & Liu's Theorem 5 / Corollary 6.

    >>> chain = StageChain(100, [("wr", 50), ("wor", 30), ("wr", 20)])
    >>> round(chain.first_stage_eta, 6), round(chain.eta, 6)
    (0.394994, 0.137868)
    """

    n: int
    stages: tuple = field(default=())
    kind: ClassVar[str] = "chain"
    relation_map: ClassVar = {S: S}
    theorems: ClassVar = {S: "privamp first-stage coupling bound (stage chain, substitution)"}

    def __post_init__(self):
        n = _N.check(self.n)
        if isinstance(self.stages, str | bytes) or not hasattr(self.stages, "__iter__"):
            raise InvalidParameterError("stages", "a sequence of (kind, size) pairs",
                                        self.stages)
        stages = []
        size_in = n
        for i, stage in enumerate(self.stages):
            stages.append(Stage.parse(stage, i, size_in))
            size_in = stages[-1].size
        if not stages:
            raise InvalidParameterError("stages", "a non-empty sequence of stages", self.stages)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "stages", tuple(stages))

    def describe(self) -> dict[str, Any]:
        if self.params:  # the MUST forms: their parameters
            return super().describe()
        return {"scheme": self.kind, "n": self.n, "m": self.m,
                "stages": [list(s) for s in self.stages]}

    def _relation_hint(self, relation):
        return "; multistage schemes are analysed under substitution"

    @property
    def m(self) -> int:
        """Final subsample size."""
        return self.stages[-1][1]

    def multiplicity(self) -> MultiplicityPmf:
        pmf = MultiplicityPmf.point(1)
        size_in = self.n
        for stage in self.stages:
            pmf = stage.transition(pmf, size_in)
            size_in = stage.size
        return pmf

    @classmethod
    def examples(cls):
        return [cls(10, [("wor", 10)]), cls(10, [("wr", 4)]),
                cls(100, [("wr", 50), ("wor", 30), ("wr", 20)])]

    def reduced(self):
        # stages without replacement that keep everything change nothing
        size_in = self.n
        kept = []
        for stage in self.stages:
            if not (isinstance(stage, WorStage) and stage.size == size_in):
                kept.append(stage)
            size_in = stage.size
        if not kept:
            return None
        if len(kept) == 1 and self.stages[0] == kept[0]:
            one = {WrStage: WithReplacement, WorStage: WithoutReplacement}[type(kept[0])]
            return one(self.n, kept[0].size)
        return self

    @property
    def first_stage_eta(self) -> float:
        """η₁ = P(the record is selected by the first stage), rounded up."""
        kind, size = self.stages[0]
        if kind == "wor":
            return div_up(float(size), float(self.n))
        return MultiplicityPmf.point(1).then_with_replacement(self.n, size).eta

    @property
    def first_stage_eta_lower(self) -> float:
        """η₁ rounded down."""
        kind, size = self.stages[0]
        if kind == "wor":
            return div_down(size, self.n)
        return MultiplicityPmf.point(1).then_with_replacement(self.n, size).eta_lower

    # the η used in the ε-map: η₁ for a general chain (see the class docstring)
    amplification_eta = first_stage_eta
    amplification_eta_lower = first_stage_eta_lower

    def _draw(self, n, rng):
        current = self.stages[0].draw(rng, n)
        for stage in self.stages[1:]:
            current = current[stage.draw(rng, current.size)]
        return current

    def __repr__(self) -> str:
        parts = ", ".join(f"{k.upper()}({s})" for k, s in self.stages)
        return f"StageChain(n={self.n}, {parts})"


@dataclass(frozen=True, init=False, repr=False)
class _Must(StageChain):
    b: int = 0
    params: ClassVar = (_N, _B, _M)

    def __init__(self, n: int, b: int, m: int):
        n, b, m = _N.check(n), _B.check(b), _M.check(m)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "stages", self._stage_list(n, b, m))
        object.__setattr__(self, "n", n)
        StageChain.__post_init__(self)

    #: the stages of the form: stage I draws b of the n records, stage II m of those b
    stage_types: ClassVar[tuple[type[Stage], type[Stage]]]
    #: the (n, b, m) of :meth:`examples`, boundaries included
    example_sizes: ClassVar[tuple[tuple[int, int, int], ...]]

    def _stage_list(self, n, b, m):
        first, second = self.stage_types
        for name, size, of, size_in, stage, kind in (("b", b, "n", n, "I", first),
                                                     ("m", m, "b", b, "II", second)):
            if kind is WorStage and size > size_in:
                raise InvalidParameterError(
                    name, f"at most {of} = {size_in} (stage {stage} is without replacement)",
                    size)
        return (first(b), second(m))

    @classmethod
    def examples(cls):
        return [cls(*sizes) for sizes in cls.example_sizes]

    # η = P(the record is in the final subsample) (MUST Theorem 5 / Corollary 6), not the
    # first-stage η₁ of a general chain
    amplification_eta = SamplingScheme.amplification_eta
    amplification_eta_lower = SamplingScheme.amplification_eta_lower

    def __repr__(self) -> str:
        return f"{type(self).__name__.replace('Must', 'MUST.')}(n={self.n}, b={self.b}, m={self.m})"


class MustOW(_Must):
    """MUST.OW(n, b, m): b records without replacement, then m draws with replacement from them
    (Zhao & Liu 2023, Definition 4(a)). Requires b ≤ n.

    η = (b/n)(1 − (1 − 1/b)^m); multiplicity (b/n)·Binomial(m, 1/b) (MUST Theorem 5(a)).

    >>> round(MustOW(1000, 500, 400).eta, 10)
    0.2755154175
    """

    kind: ClassVar[str] = "must-ow"
    theorems: ClassVar = {S: "MUST Theorem 5(a) (MUST.OW, substitution)"}

    stage_types = (WorStage, WrStage)
    example_sizes = ((10, 10, 4), (10, 1, 1), (10, 9, 9), (10, 4, 10), (1000, 1000, 10),
                     (1000, 20, 20), (1000, 500, 10))

    def reduced(self):
        if self.b == self.n:  # stage I keeps every record: WR(n, m)
            return WithReplacement(self.n, self.m)
        if self.m == 1:  # one uniform draw from a uniform b-subset: one uniform record
            return WithoutReplacement(self.n, 1)
        return self


class MustWO(_Must):
    """MUST.WO(n, b, m): b draws with replacement, then m of them without replacement
    (Definition 4(b)). Requires m ≤ b. Identical in law to WR(n, m) (Corollary 6).

    >>> round(MustWO(1000, 500, 400).eta, 9)
    0.329814094
    """

    kind: ClassVar[str] = "must-wo"
    theorems: ClassVar = {S: "MUST Corollary 6 (MUST.WO = WR, substitution)"}

    stage_types = (WrStage, WorStage)
    example_sizes = ((10, 10, 10), (10, 1, 1), (10, 10, 4), (1000, 500, 10))

    def reduced(self):
        return WithReplacement(self.n, self.m)  # Corollary 6: identical in law


@dataclass(frozen=True, init=False, repr=False)
class MustWW(_Must):
    """MUST.WW(n, b, m): b draws with replacement, then m draws with replacement from them
    (Definition 4(c); Theorem 5 prints its part (c) as "MUST.OW", an erratum).

    Parameters
    ----------
    n, b, m : int
    bound : {"proved", "published"}
        ``"proved"`` (default): privamp's bound, proved in docs/certification.md — the ε map
        with η* = 1 − (1 − 1/n)^{min(b, m)} (the probability that the record is among the at
        most min(b, m) stage-I slots the subsample can reach) and the exact multiplicity law
        in δ'. ``"published"``: MUST Theorem 5(c) as printed, with the smaller η = P(K ≥ 1);
        no complete proof is known (brute-force evidence only), so results built on it are
        labelled estimates (:attr:`certified` is False).

    >>> s = MustWW(1000, 500, 400)
    >>> round(s.eta, 9), round(s.amplification_eta, 9), s.certified
    (0.240907592, 0.329814094, True)
    >>> MustWW(1000, 500, 400, bound="published").certified
    False
    """

    bound: str = "proved"
    kind: ClassVar[str] = "must-ww"
    theorems: ClassVar = {S: ("privamp's proved MUST.WW bound (substitution; eta of min(b, m) "
                              "draws, docs/certification.md)")}

    def theorem(self, relation=None) -> str:
        if self.bound == "published":
            self.resolve(relation)
            return ("MUST Theorem 5(c) as published (MUST.WW, substitution; printed as "
                    "'(c) MUST.OW'; not proved: an estimate)")
        return super().theorem(relation)

    def __init__(self, n: int, b: int, m: int, bound: str = "proved"):
        if bound not in ("proved", "published"):
            raise InvalidParameterError("bound", "'proved' or 'published'", bound)
        object.__setattr__(self, "bound", bound)
        super().__init__(n, b, m)

    stage_types = (WrStage, WrStage)
    example_sizes = ((10, 10, 10), (10, 1, 1), (10, 4, 10), (1000, 500, 10), (1000, 10, 1))

    @property
    def certified(self) -> bool:
        return self.bound == "proved"

    @property
    def amplification_eta(self) -> float:
        """η* = 1 − (1 − 1/n)^{min(b, m)} (proved), or P(K ≥ 1) (Theorem 5(c) as published).

        Proof of the proved form (docs/certification.md): given the stage-II assignment π of
        the m draws to stage-I slots (independent of the data), the subsample is a
        deterministic replication of u = |π(draws)| ≤ min(b, m) i.i.d. uniform records — WR(n,
        u) — so the mechanism is a data-independent mixture over π of WR(n, u) mechanisms;
        BBG Theorem 10 bounds each with η_u = 1 − (1 − 1/n)^u ≤ η* (a larger η is valid), the
        coupling distance being the copies K of the record, and the hockey-stick divergence is
        jointly convex."""
        if self.bound == "published":
            return self.eta
        return MultiplicityPmf.point(1).then_with_replacement(self.n, min(self.b, self.m)).eta

    @property
    def amplification_eta_lower(self) -> float:
        """:attr:`amplification_eta` rounded down (the lower values of the bound privamp uses;
        they were those of the published η, valid but up to 1 % below the proved bound)."""
        if self.bound == "published":
            return self.eta_lower
        return MultiplicityPmf.point(1).then_with_replacement(
            self.n, min(self.b, self.m)).eta_lower

    def __repr__(self) -> str:
        tail = ", bound='published'" if self.bound == "published" else ""
        return f"MUST.WW(n={self.n}, b={self.b}, m={self.m}{tail})"

    def reduced(self):
        if self.m == 1:  # one draw from a slot holding a uniform record
            return WithReplacement(self.n, 1)
        return self
