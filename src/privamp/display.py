"""Numbers shown to people: directed decimal rounding for text, tables, plots and docs.

A privacy guarantee printed with fewer digits than it was computed with must still be a
guarantee. Every number privamp shows to a person (command-line text, the demo and the examples,
figure labels and notes, the reproduction report) goes through one of these functions, chosen by
what the number *is*:

=====================================  ===========================  =============================
kind of number                          function                     rounded
=====================================  ===========================  =============================
upper bound (ε, δ, RDP ε, η, log δ)     :func:`upper`                up (towards +∞)
lower end of a bracket, lower bound     :func:`lower`                down (towards −∞)
a certified bracket ``[lo, hi]``        :func:`bracket`              outward
calibrated parameter (σ, rate, steps)   :func:`calibrated`           the safe direction given
value that bounds nothing               :func:`nearest`              to nearest
=====================================  ===========================  =============================

"Rounded up" is meant *as a float*: ``float(upper(x)) >= x`` and ``float(lower(x)) <= x`` for
every float ``x``, so a printed bound that is typed back in is still a bound. A value that
already prints exactly (``0.1``, ``1e-05``, ``3``) is therefore printed as itself. The text has
at most ``digits`` significant digits (default 6), in the ``g`` style of Python's format
mini-language; ``notation="e"`` gives a fixed scientific notation (``digits`` significant
digits) and ``notation="f"`` a fixed-point one with ``digits`` decimals, as tables print them.

For a calibrated parameter the safe direction is the one in which the target stays met: more
noise (σ, a Laplace scale) is more private, so σ is rounded **up**; a larger sampling rate, more
steps or a larger probability of telling the truth are less private, so they are rounded
**down**. Integers are printed in full.

>>> upper(1.8282483), lower(1.8273698), nearest(1.8273698)
('1.82825', '1.82736', '1.82737')
>>> bracket(1.82737, 1.82825, digits=4)
'[1.827, 1.829]'
>>> calibrated(1.4146285413259512, "up"), calibrated(0.0123456789, "down")
('1.41463', '0.0123456')
>>> calibrated(1202.0, "down")
'1202'
>>> upper(0.1), upper(-0.1234567), lower(-0.1234567), upper(float("inf")), upper(0.0)
('0.1', '-0.123456', '-0.123457', 'inf', '0')
>>> upper(2.5e-7, notation="e", digits=3), upper(0.126936, notation="e", digits=5)
('2.50e-07', '1.2694e-01')
>>> upper(0.14521, 3, notation="f"), lower(0.14521, 3, notation="f"), upper(-1e-9, 3, notation="f")
('0.146', '0.145', '0.000')
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from typing import Any

__all__ = [
    "SAFE_DIRECTION",
    "bracket",
    "calibrated",
    "lower",
    "nearest",
    "num",
    "num_down",
    "num_up",
    "upper",
]

#: The direction in which a calibrated parameter can be rounded without missing its target:
#: "up" when a larger value is more private, "down" when a smaller one is.
SAFE_DIRECTION = {
    "sigma": "up",  # Gaussian noise standard deviation
    "scale": "up",  # Laplace scale
    "noise_multiplier": "up",
    "rate": "down",  # Poisson sampling rate
    "steps": "down",
    "m": "down",  # subsample size
    "p": "down",  # randomized response: probability of the true bit (≥ 1/2)
}


def _check(digits: int, notation: str) -> None:
    top = 340 if notation == "f" else 17
    low = 0 if notation == "f" else 1
    if not isinstance(digits, int) or isinstance(digits, bool) or not low <= digits <= top:
        raise ValueError(f"digits must be an integer in [{low}, {top}], got {digits!r}")
    if notation not in ("g", "e", "f"):
        raise ValueError(f"notation must be 'g', 'e' or 'f', got {notation!r}")


def _special(x: float) -> str | None:
    """The text of 0, ±inf and nan (the same in every direction), else ``None``."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    return None


def _format(value: float, digits: int, notation: str) -> str:
    if notation == "e":
        return f"{value:.{digits - 1}e}"
    if notation == "f":
        text = f"{value:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.000"
    return f"{value:.{digits}g}"


def nearest(x: float, digits: int = 6, *, notation: str = "g") -> str:
    """``x`` to ``digits`` significant digits, rounded to nearest: for values that bound nothing
    (parameters the user gave, estimates, ratios).

    >>> nearest(25.57333778), nearest(0.0), nearest(float("nan")), nearest(1234567.0)
    ('25.5733', '0', 'nan', '1.23457e+06')
    """
    _check(digits, notation)
    x = float(x)
    special = _special(x)
    return special if special is not None else _format(x, digits, notation)


def _directed(x: float, digits: int, notation: str, up: bool) -> str:
    _check(digits, notation)
    x = float(x)
    special = _special(x)
    if special is not None:
        return special
    text = _format(x, digits, notation)
    if (float(text) >= x) if up else (float(text) <= x):
        return text
    with localcontext() as ctx:
        ctx.prec = 1000  # exact: a double has at most 767 significant decimal digits
        d = Decimal(x)
        # one unit of the last digit
        step = Decimal(1).scaleb(-digits if notation == "f" else d.adjusted() - (digits - 1))
        q = d.quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR)
        return _first_safe(q, step, x, digits, notation, up)


def _first_safe(q: Decimal, step: Decimal, x: float, digits: int, notation: str,
                up: bool) -> str:
    while True:  # q >= x (<= x) exactly; its nearest double keeps that, x being a double
        value = float(q)
        text = (_format(value, digits, notation) if math.isfinite(value)
                else format(q.normalize() if notation == "g" else q,  # beyond 1.8e308
                            f".{digits - (notation == 'e')}{notation}"))
        if (float(text) >= x) if up else (float(text) <= x):
            return text
        q += step if up else -step  # pragma: no cover - defensive, never needed for doubles


def upper(x: float, digits: int = 6, *, notation: str = "g") -> str:
    """``x`` to ``digits`` significant digits, rounded up: for upper bounds (ε, δ, RDP ε).

    ``float(upper(x)) >= x`` for every float; an exactly printable ``x`` is printed as itself.

    >>> upper(25.57333778), upper(99999.95), upper(1.7976931348623157e308)
    ('25.5734', '100000', '1.7977e+308')
    """
    return _directed(x, digits, notation, up=True)


def lower(x: float, digits: int = 6, *, notation: str = "g") -> str:
    """``x`` to ``digits`` significant digits, rounded down: for lower bounds and the lower
    ends of brackets.

    >>> lower(1.8273698303), lower(-0.1234567), lower(5e-324)
    ('1.82736', '-0.123457', '4.94066e-324')
    """
    return _directed(x, digits, notation, up=False)


def bracket(lo: Any, hi: float | None = None, digits: int = 6, *, notation: str = "g") -> str:
    """A certified bracket ``[lo, hi]`` rounded outward (``lo`` down, ``hi`` up).

    ``lo`` may be a :class:`~privamp.results.Bracket` (then ``hi`` is not given). Without a
    lower end (``None``: an upper bound only) the text is ``"≤ hi"``.

    >>> from privamp.results import Bracket
    >>> bracket(1.8273698, 1.8282483), bracket(Bracket(None, 3.57614)), bracket(0.1, 0.2)
    ('[1.82736, 1.82825]', '≤ 3.57614', '[0.1, 0.2]')
    """
    if hi is None and hasattr(lo, "upper"):
        lo, hi = lo.lower, lo.upper
    if hi is None:
        raise ValueError("bracket needs an upper end")
    top = upper(hi, digits, notation=notation)
    if lo is None:
        return f"≤ {top}"
    return f"[{lower(lo, digits, notation=notation)}, {top}]"


def calibrated(x: float, safe: str, digits: int = 6, *, notation: str = "g") -> str:
    """A calibrated parameter, printed so that the printed value still meets the target.

    ``safe`` is ``"up"`` when a larger value is more private (σ, a Laplace scale), ``"down"``
    when a smaller one is (a sampling rate, a number of steps, a subsample size), ``"exact"`` to
    print the value in full (``repr``), or a parameter name of :data:`SAFE_DIRECTION`.
    Integer values are printed in full.

    >>> calibrated(1.4146285413259512, "sigma"), calibrated(0.0099999987, "rate")
    ('1.41463', '0.00999999')
    >>> calibrated(1.4146285413259512, "exact"), calibrated(20, "m")
    ('1.4146285413259512', '20')
    """
    direction = SAFE_DIRECTION.get(safe, safe)
    if direction not in ("up", "down", "exact"):
        raise ValueError(f"safe must be 'up', 'down', 'exact' or one of {sorted(SAFE_DIRECTION)},"
                         f" got {safe!r}")
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    x = float(x)
    if x.is_integer() and abs(x) < 2.0**53:
        return str(int(x))
    if direction == "exact":
        return nearest(x) if not math.isfinite(x) else repr(x)
    return _directed(x, digits, notation, up=direction == "up")


# the command line's historical names (privamp.cli._common re-exports them)


def num(x: float) -> str:
    """A value that bounds nothing, to six significant digits (:func:`nearest`)."""
    return nearest(x)


def num_up(x: float) -> str:
    """An upper bound to six significant digits, rounded up (:func:`upper`).

    >>> num_up(25.57333778), num(25.57333778)
    ('25.5734', '25.5733')
    """
    return upper(x)


def num_down(x: float) -> str:
    """A lower end to six significant digits, rounded down (:func:`lower`).

    >>> num_down(1.8273698303), num_down(-0.1234567), num_up(99999.95)
    ('1.82736', '-0.123457', '100000')
    """
    return lower(x)
