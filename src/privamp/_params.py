"""Parameter declarations: each parameter of a scheme or a mechanism is declared once.

A :class:`Param` names a parameter, its domain and how the command line spells it. The scheme
classes (:data:`privamp.sampling.SCHEMES`) and the mechanism classes
(:data:`privamp.mechanisms.REGISTRY`) list theirs in a ``params`` class attribute; the
constructors check values through it, and the CLI options, the sweep axes and the builders of
the CLI, the sweeps and calibration are generated from the same declarations (the idea of
SciPy's ``_ShapeInfo``). A new scheme or mechanism therefore states its domain in one place.

>>> rate = Param("rate", "(0, 1]", help="Poisson sampling rate")
>>> rate.flag, rate.check(0.5), rate.axis
('--rate', 0.5, ('real', '(0, 1]'))
>>> Param("n", "[1, inf)", integer=True).check(0)
Traceback (most recent call last):
...
privamp.errors.InvalidParameterError: n must be an integer in [1, inf); got 0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._validation import check_int, check_real

__all__ = ["Param"]


@dataclass(frozen=True)
class Param:
    """One parameter: ``name`` (the keyword and the attribute), ``interval`` (its domain, as
    :func:`privamp._validation.check_real` reads it), ``integer``, a one-line ``help`` and the
    command-line ``option`` (default ``--name`` with ``_`` spelt ``-``); ``default`` is used
    when the parameter is not given (``None``: it must be given)."""

    name: str
    interval: str
    integer: bool = False
    help: str = ""
    option: str = ""
    default: Any = None

    @property
    def flag(self) -> str:
        """The command-line option (``--rr-epsilon`` for ``rr_epsilon``)."""
        return self.option or "--" + self.name.replace("_", "-")

    @property
    def axis(self) -> tuple[str, str]:
        """The sweep axis rule: ``("int" | "real", interval)``."""
        return ("int" if self.integer else "real", self.interval)

    def check(self, value: Any):
        """``value`` checked against the domain (a typed error naming the parameter)."""
        if self.integer:
            return check_int(self.name, value, self.interval)
        return check_real(self.name, value, self.interval)
