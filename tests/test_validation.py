"""Tests for privamp._validation (interval-based parameter checks) and privamp.errors."""

from __future__ import annotations

import enum
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp._validation import (
    Interval,
    check_choice,
    check_enum,
    check_int,
    check_pmf,
    check_real,
    check_real_array,
    check_rng,
)
from privamp.errors import (
    InvalidParameterError,
    InvalidTypeError,
    MissingDependencyError,
    NumericalError,
    PrivampError,
    UnsupportedCombinationError,
    format_value,
)
from privamp.relations import NeighbouringRelation

INF = math.inf
NAN = math.nan
TINY = 5e-324  # least positive subnormal


# ---------------------------------------------------------------------------------------------
# Interval
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[0, 1]", Interval(0.0, 1.0, True, True)),
        ("(0, 1)", Interval(0.0, 1.0, False, False)),
        ("(0, inf)", Interval(0.0, INF, False, False)),
        ("[0, inf]", Interval(0.0, INF, True, True)),
        ("[-inf, inf)", Interval(-INF, INF, True, False)),
        ("  [ -2.5 ,1e3 )  ", Interval(-2.5, 1000.0, True, False)),
        ("(1e-300, 0.5]", Interval(1e-300, 0.5, False, True)),
    ],
)
def test_interval_parse(text, expected):
    """Brackets give closedness, 'inf' gives unbounded ends, whitespace is ignored."""
    assert Interval.parse(text) == expected


@pytest.mark.parametrize(
    "text", ["0, 1", "[0; 1]", "[0, 1", "0, 1]", "", "[1, 0]", "[nan, 1]", "[0, nan]",
             "{0, 1}", "[0, 1, 2]", "[a, 1]", "[0 1]"],
)
def test_interval_parse_rejects_malformed(text):
    """Malformed notation, NaN end points and low > high raise ValueError."""
    with pytest.raises(ValueError):
        Interval.parse(text)


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        ("(0, inf)", [TINY, 1.0, 1e308], [0.0, -0.0, -TINY, INF, -INF, NAN]),
        ("[0, 1]", [0.0, -0.0, TINY, 0.5, 1.0], [-1e-300, -TINY, math.nextafter(1.0, 2.0),
                                                  INF, NAN]),
        ("(0, 1)", [TINY, math.nextafter(1.0, 0.0)], [0.0, 1.0, NAN]),
        ("[0, inf]", [0.0, 1e308, INF], [-TINY, -INF, NAN]),
        ("[0, inf)", [0.0, 1e308], [INF, -TINY, NAN]),
        ("(-inf, inf)", [-1e308, 0.0, 1e308], [-INF, INF, NAN]),
        ("[-inf, inf]", [-INF, 0.0, INF], [NAN]),
        ("[1, inf)", [1.0, 1e300], [math.nextafter(1.0, 0.0), INF]),
    ],
)
def test_interval_contains_both_sides_of_each_boundary(text, inside, outside):
    """Membership on both sides of every end point; closed infinite ends admit inf; NaN never."""
    iv = Interval.parse(text)
    assert np.all(iv.contains(np.array(inside)))
    assert not np.any(iv.contains(np.array(outside)))
    for x in inside:
        assert bool(iv.contains(x))
    for x in outside:
        assert not bool(iv.contains(x))


@pytest.mark.parametrize(
    "text", ["[0, 1]", "(0, inf)", "[0, inf]", "(-inf, inf)", "[-inf, 0)", "(0.5, 2]",
             "[-3, -1)", "[1e-05, 1e+10]"],
)
def test_interval_str_round_trip(text):
    """str() writes the same mathematical notation back (and it parses to the same interval)."""
    iv = Interval.parse(text)
    assert str(iv) == text
    assert Interval.parse(str(iv)) == iv


@pytest.mark.parametrize("text", ["[0, 1234567]", "(0.1234567, 1]"])
def test_interval_str_round_trips_non_round_end_points(text):
    """Interval.parse(str(iv)) == iv also when an end point needs more than 6 digits."""
    iv = Interval.parse(text)
    assert Interval.parse(str(iv)) == iv
    assert str(iv) == text


# ---------------------------------------------------------------------------------------------
# check_real
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("interval", "accepted", "rejected"),
    [
        ("(0, inf)", [TINY, 1.0, 1e308], [0.0, -0.0, -1.0, INF]),
        ("[0, 1]", [0, 0.0, 1, 1.0, TINY], [-1e-300, math.nextafter(1.0, 2.0), 2, -INF]),
        ("(0, 1)", [TINY, 0.5, math.nextafter(1.0, 0.0)], [0.0, 1.0]),
        ("[0, inf]", [0.0, INF], [-TINY, -INF]),
        ("[0, inf)", [0.0, 1e308], [INF]),
        ("(-inf, inf)", [-1e308, 1e308], [INF, -INF]),
        ("[-inf, inf]", [-INF, INF], []),
    ],
)
def test_check_real_boundaries(interval, accepted, rejected):
    """check_real accepts exactly the members of the interval and returns them as floats."""
    for x in accepted:
        out = check_real("x", x, interval)
        assert type(out) is float and out == x
    for x in rejected:
        with pytest.raises(InvalidParameterError) as info:
            check_real("x", x, interval)
        assert not isinstance(info.value, InvalidTypeError)
        assert info.value.parameter == "x"
        assert info.value.value == x


def test_check_real_message_names_parameter_rule_and_value():
    """'sigma must be a real number in (0, inf); got -1.0'."""
    with pytest.raises(InvalidParameterError) as info:
        check_real("sigma", -1.0, "(0, inf)")
    assert str(info.value) == "sigma must be a real number in (0, inf); got -1.0"
    assert info.value.parameter == "sigma"
    assert info.value.rule == "a real number in (0, inf)"
    assert info.value.value == -1.0
    with pytest.raises(InvalidParameterError, match=r"^q must be a real number in \[0, 1\]; "
                                                    r"got 1\.0000000000000002$"):
        check_real("q", math.nextafter(1.0, 2.0), "[0, 1]")


@pytest.mark.parametrize("interval", ["(0, inf)", "[-inf, inf]", "[0, 1]"])
@pytest.mark.parametrize("nan", [NAN, np.float64("nan"), np.array(NAN), np.float32("nan")])
def test_check_real_rejects_nan_with_message(interval, nan):
    """NaN is never admissible, whatever the interval, and the message says so."""
    with pytest.raises(InvalidParameterError) as info:
        check_real("eps", nan, interval)
    assert not isinstance(info.value, InvalidTypeError)
    message = str(info.value)
    assert message.startswith(f"eps must be a real number in {interval}; got nan")
    assert "NaN" in message


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "True"),
        (False, "False"),
        (np.bool_(True), "True"),
        ("1.0", "'1.0'"),
        (None, "None"),
        ([1.0], "[1.0]"),
        (1 + 0j, "(1+0j)"),
        (np.array([1.0, 2.0]), "array [1. 2.]"),
        (np.array(True), "array True"),
        (np.complex128(1.0), "np.complex128(1+0j)"),
    ],
)
def test_check_real_rejects_non_reals_with_type_error(value, shown):
    """Bools, strings, None, lists, complex and non-scalar arrays are InvalidTypeError."""
    with pytest.raises(InvalidTypeError) as info:
        check_real("rate", value, "[0, 1]")
    err = info.value
    assert isinstance(err, TypeError)
    assert isinstance(err, InvalidParameterError)
    assert isinstance(err, ValueError)
    assert str(err) == f"rate must be a real number in [0, 1]; got {shown}"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, 2.0),
        (np.int64(-3), -3.0),
        (np.float32(0.5), 0.5),
        (np.float64(0.25), 0.25),
        (np.array(7.5), 7.5),
        (np.array(4, dtype=np.uint8), 4.0),
        (Fraction(1, 3), 1 / 3),
    ],
)
def test_check_real_accepts_real_scalars(value, expected):
    """Python/NumPy ints and floats, 0-d numeric arrays and Fractions become Python floats."""
    out = check_real("x", value)
    assert type(out) is float and out == expected


def test_check_real_accepts_interval_object():
    """An Interval instance is as good as its text."""
    iv = Interval(0.0, 1.0, False, True)
    assert check_real("p", 1.0, iv) == 1.0
    with pytest.raises(InvalidParameterError, match=r"in \(0, 1\]; got 0\.0"):
        check_real("p", 0.0, iv)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda: check_real("x", 10**400, "[0, 1]"), id="check_real"),
        pytest.param(lambda: check_real("x", Fraction(10**400), "[0, 1]"), id="check_real-frac"),
        pytest.param(lambda: check_int("n", 10**400, "[0, 10]"), id="check_int"),
    ],
)
def test_huge_integers_raise_invalid_parameter_error(call):
    """An out-of-range huge integer is rejected with InvalidParameterError, not OverflowError."""
    with pytest.raises(InvalidParameterError):
        call()


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=False), st.floats(allow_nan=False), st.floats(allow_nan=True))
def test_check_real_agrees_with_interval_membership(a, b, x):
    """check_real accepts x iff x is in [lo, hi] (and x is not NaN)."""
    lo, hi = min(a, b), max(a, b)
    iv = Interval(lo, hi, True, True)
    if not math.isnan(x) and lo <= x <= hi:
        assert check_real("x", x, iv) == x
    else:
        with pytest.raises(InvalidParameterError):
            check_real("x", x, iv)


# ---------------------------------------------------------------------------------------------
# check_real_array
# ---------------------------------------------------------------------------------------------


def test_check_real_array_accepts_and_converts():
    """Lists, int arrays and scalars become float arrays with the same values and shape."""
    out = check_real_array("eps", [0.0, 1.0], "[0, inf]")
    assert out.dtype == float
    np.testing.assert_array_equal(out, [0.0, 1.0])
    out = check_real_array("k", np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert out.dtype == float and out.shape == (2, 2)
    out = check_real_array("x", 3)
    assert out.shape == () and out == 3.0
    out = check_real_array("x", [INF, 0.0], "[0, inf]")
    np.testing.assert_array_equal(out, [INF, 0.0])


def test_check_real_array_reports_first_offending_element():
    """The error names the first element outside the interval."""
    with pytest.raises(InvalidParameterError) as info:
        check_real_array("q", [0.5, -1.0, 2.0], "[0, 1]")
    assert str(info.value) == "q must be real number(s) in [0, 1]; got -1.0"
    assert info.value.value == -1.0
    with pytest.raises(InvalidParameterError, match=r"got inf$"):
        check_real_array("eps", [0.0, INF], "[0, inf)")
    with pytest.raises(InvalidParameterError, match=r"got 5e-324$"):
        check_real_array("q", [[0.5, 1.0], [TINY, 2.0]], "(1e-300, 1]")  # C order


def test_check_real_array_rejects_nan_with_message():
    """A NaN element is always rejected and the message says NaN."""
    with pytest.raises(InvalidParameterError) as info:
        check_real_array("x", [0.5, NAN], "[-inf, inf]")
    assert str(info.value) == (
        "x must be real number(s) in [-inf, inf]; got nan (NaN is not a number)"
    )


@pytest.mark.parametrize(
    "value",
    [True, np.bool_(False), "1.0", b"1", None, [1.0, "a"], [[1.0], [1.0, 2.0]],
     np.array([True, False]), [1 + 2j], np.array([1.0], dtype=object), [None]],
)
def test_check_real_array_rejects_non_numeric_with_type_error(value):
    """Bools, strings, bytes, None, ragged/object/complex/bool arrays are InvalidTypeError."""
    with pytest.raises(InvalidTypeError) as info:
        check_real_array("x", value)
    assert info.value.parameter == "x"
    assert isinstance(info.value, TypeError)


def test_check_real_array_ndim_and_nonempty():
    """ndim is enforced; empty arrays are rejected unless nonempty=False."""
    with pytest.raises(InvalidParameterError) as info:
        check_real_array("x", [[1.0]], ndim=1)
    assert str(info.value) == (
        "x must be a 1-dimensional array of real number(s) in (-inf, inf); got [[1.0]]"
    )
    with pytest.raises(InvalidParameterError, match="non-empty"):
        check_real_array("x", [])
    assert check_real_array("x", [], nonempty=False).size == 0
    assert check_real_array("x", [[1.0, 2.0]], ndim=2).shape == (1, 2)
    with pytest.raises(InvalidParameterError, match="1-dimensional"):
        check_real_array("x", 1.0, ndim=1)


# ---------------------------------------------------------------------------------------------
# check_int
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(10, 10), (10.0, 10), (np.int64(7), 7), (np.uint8(3), 3), (np.float64(4.0), 4),
     (np.array(5), 5), (0, 0), (1e15, 10**15)],
)
def test_check_int_accepts_integers_and_integral_floats(value, expected):
    """Integers and integral floats (10.0 -> 10) come back as Python ints."""
    out = check_int("n", value)
    assert type(out) is int and out == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (10.5, "n must be an integer in [0, inf); got 10.5"),
        (INF, "n must be an integer in [0, inf); got inf"),
        (-INF, "n must be an integer in [0, inf); got -inf"),
        (-1, "n must be an integer in [0, inf); got -1"),
        (-1.0, "n must be an integer in [0, inf); got -1"),
        (1e-300, "n must be an integer in [0, inf); got 1e-300"),
    ],
)
def test_check_int_rejects_non_integral_and_out_of_range(value, message):
    """Fractional, infinite or negative values are rejected with a precise message."""
    with pytest.raises(InvalidParameterError) as info:
        check_int("n", value)
    assert not isinstance(info.value, InvalidTypeError)
    assert str(info.value) == message


def test_check_int_rejects_nan_with_message():
    """NaN is not an integer; the message shows the value as nan."""
    with pytest.raises(InvalidParameterError) as info:
        check_int("n", NAN)
    assert "nan" in str(info.value).lower()
    assert str(info.value).startswith("n must be an integer in [0, inf); got nan")


@pytest.mark.parametrize("value", [True, False, np.bool_(True), "3", None, [3], 3 + 0j])
def test_check_int_rejects_wrong_types(value):
    """Bools, strings, None, lists and complex numbers are InvalidTypeError."""
    with pytest.raises(InvalidTypeError) as info:
        check_int("copies", value, "[1, inf)")
    assert str(info.value).startswith("copies must be an integer in [1, inf); got ")


@pytest.mark.parametrize(
    ("interval", "accepted", "rejected"),
    [
        ("[1, inf)", [1, 2, 10**15], [0, -1]),
        ("(0, 10)", [1, 9], [0, 10]),
        ("[0, 10]", [0, 10], [-1, 11]),
        ("[-5, -5]", [-5], [-4, -6]),
    ],
)
def test_check_int_boundaries(interval, accepted, rejected):
    """Both sides of integer interval boundaries."""
    for v in accepted:
        assert check_int("n", v, interval) == v
    for v in rejected:
        with pytest.raises(InvalidParameterError) as info:
            check_int("n", v, interval)
        assert str(info.value) == f"n must be an integer in {interval}; got {v}"


# ---------------------------------------------------------------------------------------------
# check_enum / check_choice
# ---------------------------------------------------------------------------------------------


class Colour(enum.Enum):
    LIGHT_RED = "light-red"
    BLUE = "blue"


def test_check_enum_without_parse():
    """Members pass through; strings match a value exactly or a name case-insensitively."""
    assert check_enum("colour", Colour.BLUE, Colour) is Colour.BLUE
    assert check_enum("colour", "blue", Colour) is Colour.BLUE
    assert check_enum("colour", "light-red", Colour) is Colour.LIGHT_RED
    assert check_enum("colour", "light_red", Colour) is Colour.LIGHT_RED
    assert check_enum("colour", "Blue", Colour) is Colour.BLUE
    with pytest.raises(InvalidParameterError) as info:
        check_enum("colour", "green", Colour)
    assert not isinstance(info.value, InvalidTypeError)
    assert str(info.value) == "colour must be one of 'light-red', 'blue'; got 'green'"


@pytest.mark.parametrize("value", [1, None, 1.5, NeighbouringRelation.SUBSTITUTE])
def test_check_enum_rejects_non_strings(value):
    """Anything that is neither a member nor a string is InvalidTypeError."""
    with pytest.raises(InvalidTypeError) as info:
        check_enum("colour", value, Colour)
    assert info.value.parameter == "colour"


def test_check_enum_delegates_to_parse_with_the_name():
    """Enums with a parse() classmethod use it (aliases work) and errors carry the name."""
    r = NeighbouringRelation
    assert check_enum("rel", "R", r) is r.ADD_REMOVE
    assert check_enum("rel", "replace-one", r) is r.SUBSTITUTE
    assert check_enum("rel", r.SUBSTITUTE, r) is r.SUBSTITUTE
    with pytest.raises(InvalidParameterError) as info:
        check_enum("rel", "neither", r)
    assert info.value.parameter == "rel"
    assert str(info.value).startswith("rel must be one of")


def test_check_choice():
    """Exact (case-sensitive) membership in the choices; the message lists them."""
    assert check_choice("method", "a", ["a", "b"]) == "a"
    assert check_choice("method", "b", (c for c in "ab")) == "b"
    with pytest.raises(InvalidParameterError) as info:
        check_choice("method", "c", ["a", "b"])
    assert not isinstance(info.value, InvalidTypeError)
    assert str(info.value) == "method must be one of 'a', 'b'; got 'c'"
    with pytest.raises(InvalidParameterError):
        check_choice("method", "A", ["a", "b"])
    for bad in [1, None, b"a", ["a"]]:
        with pytest.raises(InvalidTypeError):
            check_choice("method", bad, ["a", "b"])


# ---------------------------------------------------------------------------------------------
# check_pmf
# ---------------------------------------------------------------------------------------------


def test_check_pmf_accepts_probability_vectors_unchanged():
    """A vector summing to 1 (within atol) is returned as is, never renormalised."""
    p = [0.2, 0.3, 0.5]
    np.testing.assert_array_equal(check_pmf("p", p), p)
    q = [0.5, 0.5 + 5e-10]  # sum 1 + 5e-10 is within the default 1e-9
    np.testing.assert_array_equal(check_pmf("p", q), q)
    np.testing.assert_array_equal(check_pmf("p", [1.0, 0.0]), [1.0, 0.0])
    np.testing.assert_array_equal(check_pmf("p", [0.1] * 10), [0.1] * 10)  # fsum, not naive


@pytest.mark.parametrize(("value", "total"), [([0.5, 0.4], 0.9), ([0.6, 0.6], 1.2),
                                              ([0.5, 0.5 + 2e-9], 1.000000002)])
def test_check_pmf_rejects_wrong_sum(value, total):
    """Vectors not summing to 1 are rejected and the message reports the sum."""
    with pytest.raises(InvalidParameterError) as info:
        check_pmf("p", value)
    assert info.value.value == pytest.approx(total, rel=1e-15)
    assert str(info.value).startswith(
        "p must be a probability vector (entries >= 0 summing to 1 within 1e-09); got "
    )
    assert str(info.value).endswith("(this is its sum)")


def test_check_pmf_atol_and_measure():
    """atol widens the tolerance; measure=True accepts any finite non-negative vector."""
    np.testing.assert_array_equal(check_pmf("p", [0.5, 0.4], atol=0.2), [0.5, 0.4])
    np.testing.assert_array_equal(check_pmf("mu", [3.0, 0.0, 7.5], measure=True),
                                  [3.0, 0.0, 7.5])
    np.testing.assert_array_equal(check_pmf("mu", [0.0], measure=True), [0.0])
    for bad in ([1.0, -0.5, 0.5], [INF, 0.0], [NAN, 1.0]):
        for measure in (False, True):
            with pytest.raises(InvalidParameterError):
                check_pmf("mu", bad, measure=measure)


@pytest.mark.parametrize(
    ("value", "exc"),
    [([], InvalidParameterError), ([[0.5, 0.5]], InvalidParameterError), (1.0,
                                                                          InvalidParameterError),
     ("0.5", InvalidTypeError), ([True, False], InvalidParameterError)],
)
def test_check_pmf_rejects_bad_shapes_and_types(value, exc):
    """Empty, 2-D and scalar inputs are rejected; strings are type errors."""
    with pytest.raises(exc):
        check_pmf("p", value)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
def test_check_pmf_accepts_normalised_vectors(weights):
    """w / sum(w) passes (rounding error is far below atol) and comes back unchanged."""
    w = np.asarray(weights)
    if w.sum() == 0:
        w[0] = 1.0
    p = w / w.sum()
    np.testing.assert_array_equal(check_pmf("p", p), p)


# ---------------------------------------------------------------------------------------------
# check_rng
# ---------------------------------------------------------------------------------------------


def test_check_rng_accepts_generators_seeds_and_none():
    """A Generator passes through; seeds and SeedSequences give reproducible Generators."""
    g = np.random.default_rng(3)
    assert check_rng(g) is g
    for seed in (0, 12345, np.int64(7), 2**100):
        a = check_rng(seed)
        assert isinstance(a, np.random.Generator)
        np.testing.assert_array_equal(a.random(5), np.random.default_rng(seed).random(5))
    ss = check_rng(np.random.SeedSequence(42))
    np.testing.assert_array_equal(ss.random(5), np.random.default_rng(42).random(5))
    fresh = check_rng(None)
    assert isinstance(fresh, np.random.Generator)


def test_check_rng_rejects_negative_seeds():
    """Negative seeds are InvalidParameterError (not a type error) naming 'rng'."""
    for seed in (-1, np.int64(-5)):
        with pytest.raises(InvalidParameterError) as info:
            check_rng(seed)
        assert not isinstance(info.value, InvalidTypeError)
        assert info.value.parameter == "rng"
        assert str(info.value) == f"rng must be a non-negative integer seed; got {int(seed)}"


@pytest.mark.parametrize(
    "value",
    [np.random.RandomState(0), True, False, np.bool_(True), "42", 1.0, [1, 2],
     np.random.PCG64(1)],
)
def test_check_rng_rejects_other_types(value):
    """RandomState, bools, strings, floats, lists and bare BitGenerators are refused."""
    with pytest.raises(InvalidTypeError) as info:
        check_rng(value)
    assert info.value.parameter == "rng"
    assert info.value.rule == "a numpy.random.Generator, an integer seed or None"


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------


def test_error_hierarchy():
    """Every deliberate error is a PrivampError and also the matching built-in type."""
    assert issubclass(InvalidParameterError, PrivampError)
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidTypeError, InvalidParameterError)
    assert issubclass(InvalidTypeError, TypeError)
    assert issubclass(InvalidTypeError, ValueError)
    assert issubclass(UnsupportedCombinationError, PrivampError)
    assert issubclass(UnsupportedCombinationError, ValueError)
    assert issubclass(NumericalError, PrivampError)
    assert issubclass(NumericalError, ArithmeticError)
    assert issubclass(MissingDependencyError, PrivampError)
    assert issubclass(MissingDependencyError, ImportError)
    assert not issubclass(NumericalError, ValueError)


def test_invalid_parameter_error_attributes_and_render():
    """.parameter/.rule/.value/.detail are kept and render() substitutes another name."""
    err = InvalidParameterError("sigma", "a real number in (0, inf)", -1.0)
    assert (err.parameter, err.rule, err.value, err.detail) == (
        "sigma", "a real number in (0, inf)", -1.0, None)
    assert str(err) == "sigma must be a real number in (0, inf); got -1.0"
    assert err.render("--sigma") == "--sigma must be a real number in (0, inf); got -1.0"
    assert str(err) == err.render(err.parameter)
    err = InvalidTypeError("eps", "a real number in [0, inf]", NAN, detail="NaN is not a number")
    assert err.render("--epsilon") == (
        "--epsilon must be a real number in [0, inf]; got nan (NaN is not a number)"
    )


def test_errors_raised_by_checks_render_with_cli_names():
    """An error from a check can be re-rendered with the CLI option name."""
    with pytest.raises(InvalidParameterError) as info:
        check_real("clip_norm", 0.0, "(0, inf)")
    assert info.value.render("--clip-norm") == (
        "--clip-norm must be a real number in (0, inf); got 0.0"
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "True"),
        (np.bool_(False), "False"),
        (3, "3"),
        (np.int64(-4), "-4"),
        (0.1, "0.1"),
        (np.float32(0.5), "0.5"),
        (np.float64(NAN), "nan"),
        (INF, "inf"),
        (-1e-300, "-1e-300"),
        ("abc", "'abc'"),
        (None, "None"),
        (np.array([1.5, 2.0]), "array [1.5 2. ]"),
        ("x" * 200, repr("x" * 200)[:77] + "..."),
    ],
)
def test_format_value(value, text):
    """Values in messages: bools and ints plainly, floats by repr, long reprs cut at 80."""
    out = format_value(value)
    assert out == text
    assert len(out) <= 80 or isinstance(value, np.ndarray)


def test_format_value_long_array_is_summarised():
    """Large arrays are abbreviated rather than printed in full."""
    out = format_value(np.arange(1000.0))
    assert out.startswith("array [")
    assert "..." in out
    assert len(out) < 100


def test_missing_dependency_error_message():
    """The message names the package and the pip extra to install."""
    err = MissingDependencyError("matplotlib", "plots")
    assert (err.package, err.extra) == ("matplotlib", "plots")
    assert str(err) == (
        "this feature needs the optional package 'matplotlib'; "
        "install it with: pip install 'privamp[plots]'"
    )


def test_invalid_parameter_error_pickles():
    """Exceptions must survive a pickle round trip (multiprocessing, joblib)."""
    err = InvalidParameterError("sigma", "a real number in (0, inf)", -1.0, detail="d")
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err)
    assert (back.parameter, back.rule, back.value, back.detail) == (
        "sigma", "a real number in (0, inf)", -1.0, "d")
