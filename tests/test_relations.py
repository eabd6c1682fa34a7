"""Tests for privamp.relations: parsing neighbouring relations and the clipped-sum sensitivity
convention (checked by brute force over neighbouring datasets)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import relations
from privamp.errors import InvalidParameterError, InvalidTypeError
from privamp.relations import NeighbouringRelation, Relation, clipped_sum_sensitivity

AR = NeighbouringRelation.ADD_REMOVE
SUB = NeighbouringRelation.SUBSTITUTE

ALIASES = {
    "add-remove": AR,
    "add_remove": AR,
    "addremove": AR,
    "add/remove": AR,
    "remove-add": AR,
    "r": AR,
    "substitute": SUB,
    "substitution": SUB,
    "replace": SUB,
    "replace-one": SUB,
    "replace_one": SUB,
    "s": SUB,
}


# ---------------------------------------------------------------------------------------------
# the enum and its parser
# ---------------------------------------------------------------------------------------------


def test_alias_table_is_the_documented_one():
    """Every alias in the module's table is covered here and maps to the same relation."""
    assert {k: NeighbouringRelation[v] for k, v in relations._ALIASES.items()} == ALIASES


@pytest.mark.parametrize(("alias", "member"), sorted(ALIASES.items()))
@pytest.mark.parametrize("variant", [str, str.upper, str.title, str.swapcase,
                                     lambda s: f"  {s}\t"])
def test_parse_every_alias_case_insensitively(alias, member, variant):
    """Aliases parse regardless of case and surrounding whitespace."""
    assert NeighbouringRelation.parse(variant(alias)) is member


def test_parse_members_and_values():
    """Members pass through; enum values round-trip through str() and parse()."""
    for member in NeighbouringRelation:
        assert NeighbouringRelation.parse(member) is member
        assert NeighbouringRelation.parse(str(member)) is member
        assert NeighbouringRelation(member.value) is member
    assert Relation is NeighbouringRelation
    assert [m.value for m in NeighbouringRelation] == ["add-remove", "substitute"]


@pytest.mark.parametrize(
    "text", ["", " ", "x", "add remove", "addition", "substitutes", "replace one", "R S",
             "add-remove-one", "rs", "sr", "zero-out"],
)
def test_parse_rejects_unknown_strings_with_the_parameter_name(text):
    """Unknown strings raise InvalidParameterError naming the parameter and the value."""
    with pytest.raises(InvalidParameterError) as info:
        NeighbouringRelation.parse(text)
    err = info.value
    assert not isinstance(err, InvalidTypeError)
    assert err.parameter == "relation"
    assert err.value == text
    assert str(err) == f"relation must be one of 'add-remove', 'substitute'; got {text!r}"
    with pytest.raises(InvalidParameterError) as info:
        NeighbouringRelation.parse(text, name="neighbouring")
    assert info.value.parameter == "neighbouring"
    assert str(info.value).startswith("neighbouring must be one of")


@pytest.mark.parametrize("value", [None, 1, 0, True, 1.0, b"r", ["r"], ("s",)])
def test_parse_rejects_non_strings_with_type_error(value):
    """Non-strings raise InvalidTypeError (also a TypeError) naming the parameter."""
    with pytest.raises(InvalidTypeError) as info:
        NeighbouringRelation.parse(value, name="rel")
    assert isinstance(info.value, TypeError)
    assert info.value.parameter == "rel"
    assert str(info.value).startswith("rel must be one of 'add-remove', 'substitute'; got ")


def test_symbol_sizes_equal_and_str():
    """R/S symbols of Balle et al.; only substitution keeps dataset sizes equal."""
    assert AR.symbol == "R"
    assert SUB.symbol == "S"
    assert AR.sizes_equal is False
    assert SUB.sizes_equal is True
    assert str(AR) == "add-remove"
    assert str(SUB) == "substitute"
    assert f"{SUB}" == "substitute"


# ---------------------------------------------------------------------------------------------
# clipped_sum_sensitivity: the formula and its validation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clip_norm", "relation", "copies", "expected"),
    [
        (1.0, "add-remove", 1, 1.0),
        (1.0, "substitute", 1, 2.0),
        (0.5, "substitute", 3, 3.0),
        (0.5, "R", 3, 1.5),
        (2.5, AR, 4, 10.0),
        (2.5, SUB, 4, 20.0),
        (1e-300, "replace-one", 1, 2e-300),
        (3.0, "S", 2.0, 12.0),  # integral float copies are accepted
    ],
)
def test_clipped_sum_sensitivity_table(clip_norm, relation, copies, expected):
    """C under add/remove, 2C under substitution, times the number of copies."""
    out = clipped_sum_sensitivity(clip_norm, relation, copies=copies)
    assert type(out) is float
    assert out == expected


@settings(max_examples=100, deadline=None)
@given(st.floats(1e-100, 1e100), st.sampled_from(sorted(ALIASES)), st.integers(1, 1000))
def test_clipped_sum_sensitivity_formula(clip_norm, alias, copies):
    """Delta = factor * copies * C with factor 1 (add/remove) or 2 (substitute)."""
    factor = 1.0 if ALIASES[alias] is AR else 2.0
    out = clipped_sum_sensitivity(clip_norm, alias, copies)
    assert out == pytest.approx(factor * copies * clip_norm, rel=1e-15)
    # substitution is exactly twice add/remove
    assert clipped_sum_sensitivity(clip_norm, SUB, copies) == pytest.approx(
        2.0 * clipped_sum_sensitivity(clip_norm, AR, copies), rel=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "parameter", "exc"),
    [
        ({"clip_norm": 0.0, "relation": "R"}, "clip_norm", InvalidParameterError),
        ({"clip_norm": -1.0, "relation": "R"}, "clip_norm", InvalidParameterError),
        ({"clip_norm": math.inf, "relation": "R"}, "clip_norm", InvalidParameterError),
        ({"clip_norm": math.nan, "relation": "R"}, "clip_norm", InvalidParameterError),
        ({"clip_norm": "1", "relation": "R"}, "clip_norm", InvalidTypeError),
        ({"clip_norm": True, "relation": "R"}, "clip_norm", InvalidTypeError),
        ({"clip_norm": 1.0, "relation": "both"}, "relation", InvalidParameterError),
        ({"clip_norm": 1.0, "relation": None}, "relation", InvalidTypeError),
        ({"clip_norm": 1.0, "relation": "R", "copies": 0}, "copies", InvalidParameterError),
        ({"clip_norm": 1.0, "relation": "R", "copies": 1.5}, "copies", InvalidParameterError),
        ({"clip_norm": 1.0, "relation": "R", "copies": True}, "copies", InvalidTypeError),
        ({"clip_norm": 1.0, "relation": "R", "copies": "2"}, "copies", InvalidTypeError),
    ],
)
def test_clipped_sum_sensitivity_validation(kwargs, parameter, exc):
    """Invalid arguments raise naming the offending parameter."""
    with pytest.raises(exc) as info:
        clipped_sum_sensitivity(**kwargs)
    assert info.value.parameter == parameter
    assert str(info.value).startswith(f"{parameter} must be ")


def test_clipped_sum_sensitivity_error_messages():
    """Messages carry the rule and the value."""
    with pytest.raises(InvalidParameterError) as info:
        clipped_sum_sensitivity(-1.0, "R")
    assert str(info.value) == "clip_norm must be a real number in (0, inf); got -1.0"
    with pytest.raises(InvalidParameterError) as info:
        clipped_sum_sensitivity(1.0, "R", copies=0)
    assert str(info.value) == "copies must be an integer in [1, inf); got 0"


# ---------------------------------------------------------------------------------------------
# brute-force check of the sensitivity convention
# ---------------------------------------------------------------------------------------------


def clip(g: np.ndarray, c: float) -> np.ndarray:
    """Scale g down to L2 norm at most c (the per-example clipping of DP-SGD)."""
    norm = float(np.linalg.norm(g))
    return g if norm <= c else g * (c / norm)


def clipped_sum(dataset: list[np.ndarray], c: float, dim: int) -> np.ndarray:
    return np.sum([clip(g, c) for g in dataset], axis=0) if dataset else np.zeros(dim)


def make_dataset(rng: np.random.Generator, n: int, dim: int, c: float) -> list[np.ndarray]:
    """Records with norms both below and (mostly) above the clipping norm."""
    scales = rng.choice([0.1, 0.7, 1.0, 3.0, 50.0], size=n)
    return [rng.normal(size=dim) * s * c for s in scales]


def candidate_records(rng: np.random.Generator, dataset: list[np.ndarray], c: float,
                      dim: int) -> list[np.ndarray]:
    """Random replacements plus adversarial ones: the exact opposite of each record (scaled
    beyond the clip norm), zero, and huge random vectors."""
    random = [rng.normal(size=dim) * s * c for s in (0.05, 0.5, 1.0, 2.0, 1e3)]
    opposite = [-g * (10.0 * c / float(np.linalg.norm(g))) for g in dataset]
    return [*random, *opposite, np.zeros(dim)]


def add_remove_neighbours(dataset, candidates):
    """All datasets at add/remove distance 1: drop one record, or append one candidate."""
    for i in range(len(dataset)):
        yield dataset[:i] + dataset[i + 1:]
    for z in candidates:
        yield [*dataset, z]


def substitute_neighbours(dataset, candidates):
    """All datasets at substitution distance 1: replace one record by one candidate."""
    for i in range(len(dataset)):
        for z in candidates:
            yield dataset[:i] + [z] + dataset[i + 1:]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("c", [0.1, 1.0, 3.7])
@pytest.mark.parametrize("relation", [AR, SUB])
def test_sensitivity_bounds_every_neighbour_and_is_attained(seed, c, relation):
    """max over neighbours of ||S(D') - S(D)|| equals clipped_sum_sensitivity(C, relation)."""
    rng = np.random.default_rng(seed)
    dim = 4
    dataset = make_dataset(rng, 6, dim, c)
    dataset[0] = dataset[0] * (2.0 * c / float(np.linalg.norm(dataset[0])))  # one clipped record
    candidates = candidate_records(rng, dataset, c, dim)
    neighbours = add_remove_neighbours if relation is AR else substitute_neighbours
    base = clipped_sum(dataset, c, dim)
    changes = [float(np.linalg.norm(clipped_sum(d, c, dim) - base))
               for d in neighbours(dataset, candidates)]
    bound = clipped_sum_sensitivity(c, relation)
    assert max(changes) <= bound * (1 + 1e-12)
    # attained: removing a clipped record (add/remove), or replacing g by -g (substitute)
    assert max(changes) >= bound * (1 - 1e-12)


@pytest.mark.parametrize("c", [0.5, 2.0])
def test_worst_case_pair_g_and_minus_g(c):
    """Replacing a clipped g by -g moves the sum by exactly 2C; removing it moves it by C."""
    rng = np.random.default_rng(7)
    g = rng.normal(size=5)
    g *= 3 * c / np.linalg.norm(g)
    others = [rng.normal(size=5) for _ in range(3)]
    dataset = [g, *others]
    base = clipped_sum(dataset, c, 5)
    swapped = clipped_sum([-g, *others], c, 5)
    removed = clipped_sum(others, c, 5)
    assert np.linalg.norm(swapped - base) == pytest.approx(clipped_sum_sensitivity(c, SUB),
                                                           rel=1e-12)
    assert np.linalg.norm(removed - base) == pytest.approx(clipped_sum_sensitivity(c, AR),
                                                           rel=1e-12)
    # the classic error: the add/remove sensitivity does NOT bound substitution
    assert np.linalg.norm(swapped - base) > clipped_sum_sensitivity(c, AR) * 1.5


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.floats(0.01, 100.0),
    st.integers(1, 4),
    st.sampled_from([AR, SUB]),
)
def test_sensitivity_with_repeated_record(seed, c, copies, relation):
    """A record present `copies` times (sampling with replacement): changing all its copies
    moves the clipped sum by at most copies * Delta, with equality for g -> -g / removal."""
    rng = np.random.default_rng(seed)
    dim = 3
    others = [rng.normal(size=dim) * c * 2 for _ in range(3)]
    g = rng.normal(size=dim) * c * rng.choice([0.3, 1.0, 5.0])
    base = clipped_sum([*others, *[g] * copies], c, dim)
    bound = clipped_sum_sensitivity(c, relation, copies=copies)
    if relation is AR:
        # remove all copies of g (or add `copies` copies of a fresh record)
        fresh = rng.normal(size=dim) * c * 10
        changes = [np.linalg.norm(clipped_sum(others, c, dim) - base),
                   np.linalg.norm(clipped_sum([*others, *[g] * copies, *[fresh] * copies], c,
                                              dim) - base)]
        worst = copies * c  # attained by the fresh record, whose norm exceeds c
    else:
        replacements = [rng.normal(size=dim) * c * 10, -g, -g * 100, np.zeros(dim)]
        changes = [np.linalg.norm(clipped_sum([*others, *[z] * copies], c, dim) - base)
                   for z in replacements]
        worst = 2 * copies * min(c, float(np.linalg.norm(g)))  # g -> -g (scaled)
    assert max(changes) <= bound * (1 + 1e-12)
    assert max(changes) >= worst * (1 - 1e-12)
    if relation is AR or np.linalg.norm(g) >= c:
        assert max(changes) == pytest.approx(bound, rel=1e-12)
