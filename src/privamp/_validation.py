"""Declarative parameter validation.

One helper per kind of value, each taking the parameter's name and an interval written the way a
mathematician writes it: ``check_real("sigma", sigma, "(0, inf)")``. The interval string is the
whole rule:

* brackets say whether an end point is included: ``"[0, 1]"``, ``"(0, 1]"``;
* ``inf`` as an end point means unbounded; a *closed* infinite end (``"[0, inf]"``) admits the
  value ``inf`` itself, an open one (``"[0, inf)"``) does not;
* NaN is never admissible.

Every failure raises :class:`~privamp.errors.InvalidParameterError` (or its subclass
:class:`~privamp.errors.InvalidTypeError` for wrong types) naming the parameter, the rule and the
value. Booleans are rejected where numbers are expected: ``True`` is not a sampling rate.
"""

from __future__ import annotations

import enum
import functools
import math
import numbers
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .errors import InvalidParameterError, InvalidTypeError

__all__ = [
    "Interval",
    "check_choice",
    "check_enum",
    "check_int",
    "check_optional_real",
    "check_pmf",
    "check_real",
    "parse_enum",
    "check_real_array",
    "check_rng",
    "read_text_file",
]

E = TypeVar("E", bound=enum.Enum)

_INTERVAL_RE = re.compile(r"^\s*([\[(])\s*([^,\s]+)\s*,\s*([^\s\])]+)\s*([\])])\s*$")


@dataclass(frozen=True)
class Interval:
    """A real interval with open or closed, possibly infinite, end points."""

    low: float
    high: float
    low_closed: bool
    high_closed: bool

    @staticmethod
    @functools.lru_cache(maxsize=256)
    def parse(text: str) -> Interval:
        """Parse ``"[a, b)"``-style notation; ``inf`` / ``-inf`` are the infinite ends."""
        match = _INTERVAL_RE.match(text)
        if match is None:
            raise ValueError(f"malformed interval {text!r}")
        left, low, high, right = match.groups()
        interval = Interval(float(low), float(high), left == "[", right == "]")
        if math.isnan(interval.low) or math.isnan(interval.high) or interval.low > interval.high:
            raise ValueError(f"malformed interval {text!r}")
        return interval

    def contains(self, x: Any) -> Any:
        """Element-wise membership test (NaN is never a member)."""
        x = np.asarray(x, dtype=float)
        above = (x >= self.low) if self.low_closed else (x > self.low)
        below = (x <= self.high) if self.high_closed else (x < self.high)
        return above & below

    def contains_scalar(self, x: float) -> bool:
        """:meth:`contains` for one float, without NumPy (the validators' hot path)."""
        above = (x >= self.low) if self.low_closed else (x > self.low)
        below = (x <= self.high) if self.high_closed else (x < self.high)
        return above and below

    def __str__(self) -> str:
        return _interval_text(self)

    def _text(self) -> str:
        def fmt(v: float) -> str:
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
            text = repr(v)
            for digits in range(1, 18):  # shortest %g form that reads back exactly
                if float(f"{v:.{digits}g}") == v:
                    text = f"{v:.{digits}g}"
                    break
            if v.is_integer() and (len(str(int(v))) <= len(text) or abs(v) <= 1e7):
                text = str(int(v))  # "10", not "1e+01"; "100000", not "1e+05"
            return text

        return (
            f"{'[' if self.low_closed else '('}{fmt(self.low)}, "
            f"{fmt(self.high)}{']' if self.high_closed else ')'}"
        )


@functools.lru_cache(maxsize=256)
def _interval_text(iv: Interval) -> str:
    return iv._text()


def _as_interval(interval: str | Interval) -> Interval:
    return interval if isinstance(interval, Interval) else Interval.parse(interval)


def _is_real_scalar(value: Any) -> bool:
    if isinstance(value, bool | np.bool_):
        return False
    return isinstance(value, numbers.Real) or (
        isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"
    )


def check_real(name: str, value: Any, interval: str | Interval = "(-inf, inf)") -> float:
    """Validate a real scalar and return it as a Python ``float``.

    >>> check_real("sigma", 2, "(0, inf)")
    2.0
    >>> check_real("sigma", -1.0, "(0, inf)")
    Traceback (most recent call last):
    ...
    privamp.errors.InvalidParameterError: sigma must be a real number in (0, inf); got -1.0
    """
    iv = _as_interval(interval)
    if type(value) is float and iv.contains_scalar(value):  # the common case, NaN excluded
        return value
    rule = f"a real number in {iv}"
    if not _is_real_scalar(value):
        raise InvalidTypeError(name, rule, value)
    try:
        v = float(value)
    except OverflowError as exc:  # a huge int or Fraction
        raise InvalidParameterError(name, rule, value, detail="too large for a float") from exc
    if math.isnan(v):
        raise InvalidParameterError(name, rule, v, detail="NaN is not a number")
    if not iv.contains_scalar(v):
        raise InvalidParameterError(name, rule, v)
    return v


def check_optional_real(name: str, value: Any,
                        interval: str | Interval = "(-inf, inf)") -> float | None:
    """:func:`check_real` for an optional parameter: ``None`` (not given) passes through.

    >>> check_optional_real("grid_step", None, "(0, 1]") is None
    True
    """
    return None if value is None else check_real(name, value, interval)


def check_real_array(
    name: str,
    value: Any,
    interval: str | Interval = "(-inf, inf)",
    *,
    ndim: int | None = None,
    nonempty: bool = True,
) -> np.ndarray:
    """Validate an array-like of reals (every element in ``interval``); return a float array.

    Scalars are accepted and returned as 0-d arrays unless ``ndim`` asks otherwise.

    >>> check_real_array("eps", [0.0, 1.0], "[0, inf]")
    array([0., 1.])
    """
    iv = _as_interval(interval)
    rule = f"real number(s) in {iv}"
    if isinstance(value, bool | np.bool_ | str | bytes) or value is None:
        raise InvalidTypeError(name, rule, value)
    if isinstance(value, list | tuple) and any(isinstance(v, bool | np.bool_)
                                               for v in np.ravel(np.asarray(value, dtype=object))):
        raise InvalidTypeError(name, rule, value)
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as exc:  # ragged lists, huge ints
        raise InvalidTypeError(name, rule, value) from exc
    if arr.dtype.kind not in "iuf":
        raise InvalidTypeError(name, rule, value)
    arr = arr.astype(float, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise InvalidParameterError(name, f"a {ndim}-dimensional array of {rule}", value)
    if nonempty and arr.size == 0:
        raise InvalidParameterError(name, f"a non-empty array of {rule}", value)
    bad = ~iv.contains(arr)
    if np.any(bad):
        first = arr[bad].flat[0]
        detail = "NaN is not a number" if math.isnan(first) else None
        raise InvalidParameterError(name, rule, float(first), detail=detail)
    return arr


def check_int(name: str, value: Any, interval: str | Interval = "[0, inf)") -> int:
    """Validate an integer (an integral float such as ``10.0`` is accepted) and return an ``int``.

    >>> check_int("n", 10.0, "[1, inf)")
    10
    """
    iv = _as_interval(interval)
    if type(value) is int and abs(value) < 2**53 and iv.contains_scalar(float(value)):
        return value  # the common case (bool is not int by type)
    rule = f"an integer in {iv}"
    if isinstance(value, bool | np.bool_):
        raise InvalidTypeError(name, rule, value)
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif _is_real_scalar(value):
        f = float(value)
        if math.isnan(f):
            raise InvalidParameterError(name, rule, f, detail="NaN is not a number")
        if not math.isfinite(f) or not f.is_integer():
            raise InvalidParameterError(name, rule, f)
        v = int(f)
    else:
        raise InvalidTypeError(name, rule, value)
    try:
        inside = iv.contains_scalar(float(v))
    except OverflowError:
        inside = False
    if not inside:
        raise InvalidParameterError(name, rule, v)
    return v


def parse_enum(name: str, value: Any, enum_type: type[E],
               aliases: dict[str, str] | None = None) -> E:
    """An enum member from itself or from a string, case-insensitively and ignoring surrounding
    blanks: the member's value, its name, or one of ``aliases`` (lower-case string → member
    name).

    Raises :class:`InvalidTypeError` for a non-string and :class:`InvalidParameterError` for an
    unknown string, both naming the parameter, the rule ("one of" the values) and the value.

    >>> from privamp.relations import NeighbouringRelation as R
    >>> parse_enum("relation", " Add-Remove", R)
    <NeighbouringRelation.ADD_REMOVE: 'add-remove'>
    >>> parse_enum("relation", "s", R, {"s": "SUBSTITUTE"})
    <NeighbouringRelation.SUBSTITUTE: 'substitute'>
    """
    if isinstance(value, enum_type):
        return value
    rule = "one of " + ", ".join(repr(m.value) for m in enum_type)
    if not isinstance(value, str):
        raise InvalidTypeError(name, rule, value)
    key = value.strip().lower()
    for member in enum_type:
        if key == str(member.value).lower() or key == member.name.lower():
            return member
    if aliases and key in aliases:
        return enum_type[aliases[key]]
    raise InvalidParameterError(name, rule, value)


def check_enum(name: str, value: Any, enum_type: type[E]) -> E:
    """Accept an enum member, or a string naming one (via ``enum_type.parse`` if it has one,
    else :func:`parse_enum`)."""
    parse = getattr(enum_type, "parse", None)
    if isinstance(value, str) and parse is not None:
        return parse(value, name=name)
    return parse_enum(name, value, enum_type)


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Validate that a string is one of ``choices``."""
    options = tuple(choices)
    rule = "one of " + ", ".join(repr(c) for c in options)
    if not isinstance(value, str):
        raise InvalidTypeError(name, rule, value)
    if value not in options:
        raise InvalidParameterError(name, rule, value)
    return value


def check_pmf(name: str, value: Any, *, measure: bool = False, atol: float = 1e-9) -> np.ndarray:
    """Validate a probability vector (or, with ``measure=True``, a finite non-negative measure).

    A probability vector must sum to 1 within ``atol``; its entries are returned unchanged
    (privamp never renormalises silently).
    """
    arr = check_real_array(name, value, "[0, inf)", ndim=1)
    if not measure:
        total = math.fsum(arr.tolist())
        if abs(total - 1.0) > atol:
            raise InvalidParameterError(
                name, f"a probability vector (entries >= 0 summing to 1 within {atol:g})",
                total, detail="this is its sum",
            )
    return arr


def check_rng(rng: Any) -> np.random.Generator:
    """Accept a :class:`numpy.random.Generator`, a seed for ``default_rng``, or ``None`` (fresh
    OS entropy). Legacy global-state ``RandomState`` objects are refused.

    >>> isinstance(check_rng(1), np.random.Generator)
    True
    """
    rule = "a numpy.random.Generator, an integer seed or None"
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, bool | np.bool_):
        raise InvalidTypeError("rng", rule, rng)
    if rng is None or isinstance(rng, int | np.integer | np.random.SeedSequence):
        if isinstance(rng, int | np.integer) and rng < 0:
            raise InvalidParameterError("rng", "a non-negative integer seed", rng)
        return np.random.default_rng(rng)
    raise InvalidTypeError("rng", rule, rng)


def read_text_file(name: str, path: Any, what: str = "text file", *,
                   compressed: bool = False) -> str:
    """The text of the file at ``path`` (UTF-8; a leading byte-order mark is dropped);
    ``compressed``: the file is gzip-compressed, and its decompressed bytes are the text.

    Every failure is an :class:`~privamp.errors.InvalidParameterError` naming ``name``: a path
    that is missing, a folder or not a regular file, a file that cannot be read, a file that is
    not gzip data (``compressed``), and a binary or mis-encoded file (``what`` says what was
    expected, e.g. ``"CSV file"``).

    >>> read_text_file("kernel", "/nonexistent.csv", "CSV file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    privamp.errors.InvalidParameterError: kernel must be an existing, readable CSV file; got ...
    """
    if not isinstance(path, str | os.PathLike):
        raise InvalidTypeError(name, f"the path of a {what}", path)
    p = Path(path)
    shown = p  # shown whole in the message (format_value does not shorten paths)
    if not p.exists():
        raise InvalidParameterError(name, f"an existing, readable {what}", shown)
    if p.is_dir():
        raise InvalidParameterError(name, f"a {what}, not a folder", shown)
    if not p.is_file():
        raise InvalidParameterError(name, f"a regular {what}", shown)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InvalidParameterError(name, f"a readable {what}", shown,
                                    detail=exc.strerror or str(exc)) from None
    if compressed:
        import gzip
        import zlib

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InvalidParameterError(name, f"a gzip-compressed {what}", shown,
                                        detail=str(exc) or type(exc).__name__) from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise InvalidParameterError(name, f"a {what} in UTF-8 text", shown,
                                    detail=f"a NUL byte at offset {nul}: a binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(name, f"a {what} in UTF-8 text", shown,
                                    detail=f"byte {data[exc.start]:#04x} at offset {exc.start} "
                                           "is not UTF-8: a binary or mis-encoded file") \
            from None
