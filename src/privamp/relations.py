"""Neighbouring relations and the sensitivity convention under each.

Two datasets are *neighbours* under

* :attr:`NeighbouringRelation.ADD_REMOVE` ("R", ``≃_r`` in Balle, Barthe, Gaboardi 2018): one is
  obtained from the other by adding or removing a single record. Their sizes differ by one, so the
  dataset size itself is private.
* :attr:`NeighbouringRelation.SUBSTITUTE` ("S", ``≃_s``; also called replace-one): one record is
  replaced by a different record. Sizes are equal (and public).

Both relations are symmetric. The path distance they induce (Balle et al. 2018, §2) is
``d_r(x, x') = |x Δ x'|`` (size of the symmetric difference) and ``d_s(x, x') = |x Δ x'| / 2`` for
equal sizes (infinite otherwise).

Sensitivity convention
----------------------
privamp's mechanisms take the sensitivity **under the relation they are stated for**: ``Δ`` is the
largest change of the query between two neighbouring datasets *of that relation*. For the query
that DP-SGD privatises, the sum of per-example gradients clipped to norm ``C``:

* under add/remove, one gradient appears or disappears, so ``Δ = C``;
* under substitution, one gradient ``g`` becomes ``g'`` and ``‖g - g'‖ ≤ 2C``, so ``Δ = 2C``;
* if a record can appear ``k`` times in the input (sampling with replacement, MUST), changing it
  moves the sum by up to ``k`` times as much (white-box group privacy): ``kC`` and ``2kC``;
* averaging by a *fixed* batch size ``B`` divides the sensitivity by ``B`` (not by the dataset
  size ``n``); averaging by a random batch size has no such simple sensitivity.

Getting this factor of 2 wrong is a classic accounting error (it is why two accountants in a
widely used library disagreed by 2x in sensitivity under replace-one). Use
:func:`clipped_sum_sensitivity` rather than writing the rule again.
"""

from __future__ import annotations

import enum

from ._validation import check_int, check_real, parse_enum

__all__ = ["NeighbouringRelation", "Relation", "clipped_sum_sensitivity"]

_ALIASES = {
    "add-remove": "ADD_REMOVE",
    "add_remove": "ADD_REMOVE",
    "addremove": "ADD_REMOVE",
    "add/remove": "ADD_REMOVE",
    "remove-add": "ADD_REMOVE",
    "r": "ADD_REMOVE",
    "substitute": "SUBSTITUTE",
    "substitution": "SUBSTITUTE",
    "replace": "SUBSTITUTE",
    "replace-one": "SUBSTITUTE",
    "replace_one": "SUBSTITUTE",
    "s": "SUBSTITUTE",
}


class NeighbouringRelation(enum.Enum):
    """The neighbouring relation a privacy statement holds for.

    >>> NeighbouringRelation.parse("substitute")
    <NeighbouringRelation.SUBSTITUTE: 'substitute'>
    >>> NeighbouringRelation.ADD_REMOVE.symbol
    'R'
    """

    ADD_REMOVE = "add-remove"
    SUBSTITUTE = "substitute"

    @property
    def symbol(self) -> str:
        """The papers' one-letter name: ``"R"`` (remove/add) or ``"S"`` (substitute)."""
        return "R" if self is NeighbouringRelation.ADD_REMOVE else "S"

    @property
    def sizes_equal(self) -> bool:
        """Whether neighbouring datasets have the same size under this relation."""
        return self is NeighbouringRelation.SUBSTITUTE

    @classmethod
    def parse(cls, value: str | NeighbouringRelation, *, name: str = "relation"):
        """Parse ``"add-remove"``, ``"substitute"`` and the usual aliases (``"R"``, ``"S"``,
        ``"replace-one"``, ...), case-insensitively."""
        return parse_enum(name, value, cls, _ALIASES)

    def __str__(self) -> str:
        return self.value


#: Short alias.
Relation = NeighbouringRelation


def clipped_sum_sensitivity(
    clip_norm: float, relation: NeighbouringRelation | str, copies: int = 1
) -> float:
    """Sensitivity of a sum of vectors clipped to norm ``clip_norm`` under ``relation``.

    ``C`` under add/remove and ``2C`` under substitution, times ``copies`` when the changed
    record can occur ``copies`` times in the input (white-box group privacy).

    >>> clipped_sum_sensitivity(1.0, "add-remove"), clipped_sum_sensitivity(1.0, "substitute")
    (1.0, 2.0)
    >>> clipped_sum_sensitivity(0.5, "substitute", copies=3)
    3.0
    """
    c = check_real("clip_norm", clip_norm, "(0, inf)")
    rel = NeighbouringRelation.parse(relation)
    k = check_int("copies", copies, "[1, inf)")
    factor = 1.0 if rel is NeighbouringRelation.ADD_REMOVE else 2.0
    return factor * k * c
