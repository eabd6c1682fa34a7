"""Small result types shared across privamp."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Bracket"]


@dataclass(frozen=True)
class Bracket:
    """A certified interval ``lower <= truth <= upper`` around a quantity privamp computes.

    ``upper`` is the number to report as a guarantee; ``lower`` says how tight it is (``None``
    when no lower bound is available).

    >>> b = Bracket(0.9, 1.1)
    >>> 1.0 in b, round(b.width, 12)
    (True, 0.2)
    """

    lower: float | None
    upper: float

    def __post_init__(self):
        if math.isnan(self.upper) or (self.lower is not None and math.isnan(self.lower)):
            raise ValueError("a Bracket cannot hold NaN")
        if self.lower is not None and self.lower > self.upper:
            raise ValueError(f"Bracket lower {self.lower!r} exceeds upper {self.upper!r}")

    @property
    def width(self) -> float:
        return math.inf if self.lower is None else self.upper - self.lower

    def __contains__(self, value: float) -> bool:
        low = -math.inf if self.lower is None else self.lower
        return low <= value <= self.upper
