"""The stages of a multistage sampling scheme: draws without (WOR) or with (WR) replacement.

A stage draws ``size`` items from the items of the previous stage (the first stage from the
dataset). It knows the three things a chain needs of it: the law of the differing record's
multiplicity after it (:meth:`Stage.transition`), how to draw (:meth:`Stage.draw`) and the
largest size it allows. Stages are tuples ``(kind, size)`` as well, so ``WorStage(500) ==
("wor", 500)`` and a chain may be written with either.

>>> WorStage(5), WrStage(3) == ("wr", 3), Stage.parse(("wor", 2))
(WorStage(5), True, WorStage(2))
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from .._validation import check_int
from ..errors import InvalidParameterError
from .multiplicity import MultiplicityPmf

__all__ = ["STAGES", "Stage", "WorStage", "WrStage"]


class _Fields(NamedTuple):
    kind: str
    size: int


class Stage(_Fields):
    """One stage of a chain (abstract: use :class:`WorStage` or :class:`WrStage`)."""

    __slots__ = ()
    KIND: ClassVar[str] = ""

    def __new__(cls, size: int):
        return super().__new__(cls, cls.KIND, size)

    def __getnewargs__(self):
        return (self.size,)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.size})"

    @staticmethod
    def parse(stage: Any, index: int = 0, size_in: int | None = None) -> Stage:
        """A stage from a :class:`Stage` or a ``(kind, size)`` pair, checked against the size
        of the stage before (``size_in``)."""
        try:
            kind, size = stage
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"stages[{index}]", "a (kind, size) pair",
                                        stage) from exc
        if kind not in STAGES:
            raise InvalidParameterError(f"stages[{index}]", "a stage kind 'wor' or 'wr'", kind)
        size = check_int(f"stages[{index}] size", size, "[1, inf)")
        out = STAGES[kind](size)
        out._check_fits(index, size_in)
        return out

    def _check_fits(self, index: int, size_in: int | None) -> None:
        """Refuse a size the stage cannot draw from ``size_in`` items."""

    def transition(self, pmf: MultiplicityPmf, size_in: int) -> MultiplicityPmf:
        """The multiplicity law after this stage, given ``pmf`` before it (over ``size_in``
        items)."""
        raise NotImplementedError  # pragma: no cover - every stage kind defines it

    def draw(self, rng: np.random.Generator, size_in: int) -> np.ndarray:
        """Positions (in ``range(size_in)``) this stage draws."""
        raise NotImplementedError  # pragma: no cover - every stage kind defines it


class WorStage(Stage):
    """``size`` items drawn without replacement (hypergeometric transition)."""

    __slots__ = ()
    KIND = "wor"

    def _check_fits(self, index, size_in):
        if size_in is not None and self.size > size_in:
            raise InvalidParameterError(
                f"stages[{index}] size", f"at most the previous stage's size {size_in} "
                "(without replacement)", self.size)

    def transition(self, pmf, size_in):
        return pmf.then_without_replacement(size_in, self.size)

    def draw(self, rng, size_in):
        return rng.choice(size_in, size=self.size, replace=False)


class WrStage(Stage):
    """``size`` independent uniform draws with replacement (binomial transition)."""

    __slots__ = ()
    KIND = "wr"

    def transition(self, pmf, size_in):
        return pmf.then_with_replacement(size_in, self.size)

    def draw(self, rng, size_in):
        return rng.integers(0, size_in, size=self.size)


#: stage kind -> stage class
STAGES: dict[str, type[Stage]] = {"wor": WorStage, "wr": WrStage}
