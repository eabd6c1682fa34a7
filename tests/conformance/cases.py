"""The combinations the conformance suite runs, generated from privamp's registries.

Every class of :data:`privamp.mechanisms.REGISTRY` and :data:`privamp.sampling.SCHEMES`
declares ``examples()`` spanning its parameter domain and boundaries (rates 1e-9 … 1, m = 1,
n − 1, n, …); every :class:`~privamp.relations.NeighbouringRelation` and every
:class:`~privamp.accountant.Backend` is taken from its enum. A new mechanism, scheme, relation
or backend is therefore in the suite as soon as it is registered — no test to write.

The full product (≈ 30 mechanism examples × 50 scheme examples × 2 relations × 3 backends × 4
step counts × 6 δ) is far too large to run; the suite runs

* every scheme example × relation with the *first* example of every mechanism (``CORE``),
* every mechanism example × relation without subsampling and with Poisson at rates 0.01 and 1,

each at every backend, with step counts and δ taken in turn from ``STEPS`` and ``DELTAS`` so
that each value meets every mechanism and scheme (a deterministic rotation, not a random
sample: a failure reproduces by its test id).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from privamp.accountant import Backend
from privamp.mechanisms import REGISTRY
from privamp.relations import NeighbouringRelation
from privamp.sampling import Poisson
from privamp.sampling.schemes import SCHEMES

RELATIONS = tuple(NeighbouringRelation)
BACKENDS = tuple(b.value for b in Backend)
STEPS = (1, 2, 10, 1000)
DELTAS = (1e-3, 1e-5, 1e-10, 1e-30, 1e-100)
EPSILONS = (0.0, 0.1, 1.0, 10.0, 100.0)


@dataclass(frozen=True)
class Case:
    """One event: a mechanism example on a scheme example, under an outer relation."""

    mechanism: str  # registry name
    index: int  # which of its examples
    scheme: object  # a SamplingScheme or None
    relation: NeighbouringRelation

    @property
    def base_relation(self) -> NeighbouringRelation:
        if self.scheme is None:
            return self.relation
        return self.scheme.base_relation(self.relation)

    def build(self):
        """(mechanism under the base relation, scheme, outer relation)."""
        mech = REGISTRY[self.mechanism].examples(self.base_relation)[self.index]
        return mech, self.scheme, self.relation

    @property
    def id(self) -> str:
        return f"{self.mechanism}#{self.index}-{self.scheme!r}-{self.relation.value}"


def scheme_examples() -> list:
    """Every example of every registered scheme."""
    return [ex for cls in SCHEMES.values() for ex in cls.examples()]


def _supported(scheme, relation) -> bool:
    return scheme is None or relation in scheme.relations


def cases() -> list[Case]:
    out = []
    for name in REGISTRY:
        for scheme, rel in itertools.product([None, *scheme_examples()], RELATIONS):
            if _supported(scheme, rel):
                out.append(Case(name, 0, scheme, rel))
        n_examples = len(REGISTRY[name].examples())
        for index in range(1, n_examples):
            for scheme in (None, Poisson(0.01), Poisson(1.0)):
                for rel in RELATIONS:
                    if _supported(scheme, rel) and not (
                            isinstance(scheme, Poisson) and rel is NeighbouringRelation.SUBSTITUTE):
                        out.append(Case(name, index, scheme, rel))
    return out


def rotate(items, values, offset: int = 0):
    """Pair each item with a value of ``values`` in turn (deterministic coverage)."""
    return [(item, values[(i + offset) % len(values)]) for i, item in enumerate(items)]
