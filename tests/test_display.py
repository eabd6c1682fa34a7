"""privamp.display: numbers shown to people are rounded to the safe side.

``upper(x)`` read back as a float is never below ``x``, ``lower(x)`` never above, brackets are
rounded outward and a calibrated parameter is rounded so that the printed value still meets its
target — for every float, negative, subnormal, huge and infinite ones included.
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from privamp import display
from privamp.display import bracket, calibrated, lower, nearest, upper
from privamp.results import Bracket

finite = st.floats(allow_nan=False, allow_infinity=False)
anything = st.floats(allow_nan=False)
digit_counts = st.integers(1, 17)
notations = st.sampled_from(["g", "e"])
EDGES = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, sys.float_info.max,
         -sys.float_info.max, 99999.95, 0.1, 1.0 / 3.0, 1e300, -1e-300, 1.8273698303]


def significant(text: str) -> int:
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


@given(anything, digit_counts, notations)
@example(5e-324, 6, "g")
@example(-5e-324, 6, "g")
@example(sys.float_info.max, 6, "g")
@example(-sys.float_info.max, 6, "g")
@example(sys.float_info.max, 3, "e")
@example(1e-310, 2, "e")
@example(99999.95, 6, "g")
def test_upper_is_never_below_and_lower_never_above(x, digits, notation):
    up = upper(x, digits, notation=notation)
    down = lower(x, digits, notation=notation)
    assert float(up) >= x and float(down) <= x
    assert float(down) <= float(up)
    for text in (up, down):
        if math.isfinite(x):
            assert significant(text) <= digits, text


@given(anything, st.integers(0, 20))
@example(1e-10, 3)
@example(-1e-10, 3)
@example(0.14521, 3)
@example(sys.float_info.max, 2)
@example(5e-324, 0)
def test_fixed_point_notation(x, decimals):
    """``notation="f"`` (a table's fixed number of decimals) is directed the same way and keeps
    at most ``decimals`` decimals; no "-0.000"."""
    up = upper(x, decimals, notation="f")
    down = lower(x, decimals, notation="f")
    assert float(up) >= x and float(down) <= x
    for text in (up, down):
        if math.isfinite(x):
            assert not text.startswith("-") or float(text) != 0, text
            if x != 0:
                assert len(text.split(".")[1]) == decimals if decimals else "." not in text
    if math.isfinite(x) and abs(x) < 1e15:
        unit = Decimal(1).scaleb(-decimals)
        assert abs(Decimal(up) - Decimal(x)) <= unit and abs(Decimal(down) - Decimal(x)) <= unit


@given(finite, st.integers(1, 15))
def test_directed_text_is_within_one_unit_of_the_last_digit(x, digits):
    """No more pessimistic than needed: one unit of the last printed digit at most."""
    if x == 0 or abs(x) < 1e-290 or abs(x) > 1e300:
        return  # subnormal spacing / overflow: covered by the test above
    unit = Decimal(1).scaleb(Decimal(x).adjusted() - (digits - 1))
    for text in (upper(x, digits), lower(x, digits)):
        assert abs(Decimal(text) - Decimal(x)) <= unit


@given(finite, digit_counts, notations)
def test_round_trips(x, digits, notation):
    """Rounding printed text again changes nothing, and a value that prints exactly (so every
    value at 17 digits) is printed the same in all three directions."""
    for f in (upper, lower, nearest):
        text = f(x, digits, notation=notation)
        assert f(float(text), digits, notation=notation) == text or not math.isfinite(
            float(text))
    exact = nearest(x, 17)
    assert float(exact) == x
    assert upper(x, 17) == lower(x, 17) == exact
    short = float(nearest(x, digits, notation=notation))
    if math.isfinite(short):
        assert upper(short, digits) == lower(short, digits) == nearest(short, digits)


@pytest.mark.parametrize("x", EDGES)
def test_edges(x):
    for digits in (1, 6, 17):
        assert float(upper(x, digits)) >= x and float(lower(x, digits)) <= x


def test_special_values():
    inf = math.inf
    assert (upper(inf), lower(inf), upper(-inf), lower(-inf)) == ("inf", "inf", "-inf", "-inf")
    assert upper(math.nan) == lower(math.nan) == nearest(math.nan) == "nan"
    assert upper(-0.0) == lower(0.0) == nearest(-0.0) == "0"
    assert upper(0.1) == lower(0.1) == "0.1"  # 0.1 reads back as the same double
    assert upper(1e-5) == "1e-05" and upper(3) == "3"
    assert upper(sys.float_info.max) == "1.7977e+308"  # reads back as inf: still ≥ x
    assert lower(5e-324) == "4.94066e-324" and float(lower(5e-324)) == 5e-324
    assert upper(-0.1234567) == "-0.123456" and lower(-0.1234567) == "-0.123457"


def test_the_numbers_of_the_issue():
    # σ = 1.4146 (rounded to nearest) certifies ε = 1.0000275 > 1: printed up instead
    assert calibrated(1.4146285413259512, "sigma") == "1.41463"
    assert calibrated(1.4146285413259512, "sigma", digits=5) == "1.4147"
    assert bracket(1.8273698303, 1.8282483, digits=5) == "[1.8273, 1.8283]"
    assert bracket(1.8273698303, 1.8282483) == "[1.82736, 1.82825]"


@given(finite, finite, digit_counts)
def test_bracket_rounds_outward(a, b, digits):
    lo, hi = min(a, b), max(a, b)
    text = bracket(lo, hi, digits)
    left, right = text.strip("[]").split(", ")
    assert float(left) <= lo and float(right) >= hi
    assert text == bracket(Bracket(lo, hi), digits=digits)
    assert bracket(None, hi, digits) == f"≤ {upper(hi, digits)}"


@given(st.floats(min_value=1e-300, max_value=1e300), digit_counts)
def test_calibrated_rounds_in_the_safe_direction(x, digits):
    assume_integer = float(x).is_integer()
    up, down = calibrated(x, "up", digits), calibrated(x, "down", digits)
    assert float(up) >= x and float(down) <= x
    assert calibrated(x, "sigma", digits) == up and calibrated(x, "scale", digits) == up
    assert calibrated(x, "rate", digits) == down and calibrated(x, "steps", digits) == down
    assert float(calibrated(x, "exact")) == x
    if assume_integer and x < 2**53:
        assert up == down == str(int(x))


def test_calibrated_integers_and_errors():
    assert calibrated(1202, "steps") == calibrated(1202.0, "down") == "1202"
    assert calibrated(0.5, "exact") == "0.5"
    with pytest.raises(ValueError, match="safe"):
        calibrated(1.0, "sideways")
    with pytest.raises(ValueError, match="digits"):
        upper(1.0, 0)
    with pytest.raises(ValueError, match="notation"):
        upper(1.0, notation="%")
    with pytest.raises(ValueError, match="digits"):
        upper(1.0, -1, notation="f")
    with pytest.raises(ValueError, match="upper end"):
        bracket(1.0)


def test_cli_names_are_the_display_functions():
    from privamp.cli import _common

    assert _common.num_up is display.num_up and _common.num_down is display.num_down
    assert _common.num is display.num
    assert display.num_up(25.57333778) == "25.5734" and display.num(25.57333778) == "25.5733"
    assert display.num_down(1.8273698303) == "1.82736"
