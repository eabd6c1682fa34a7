"""Typed exceptions raised by privamp.

Every exception privamp raises on purpose derives from :class:`PrivampError`, so callers can catch
the whole family in one place (the command-line interface does: it turns them into exit status 2
and a one-line message). The parameter errors also derive from the built-in ``ValueError`` /
``TypeError`` so that generic code that expects those keeps working.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

__all__ = [
    "AccuracyWarning",
    "BudgetExceededError",
    "ClusterError",
    "DataIntegrityError",
    "InconsistentBoundsError",
    "InvalidParameterError",
    "InvalidTypeError",
    "GroupRangeError",
    "LossRangeError",
    "MissingDependencyError",
    "NumericalError",
    "PrivampError",
    "UnreachableTargetError",
    "UnsupportedCombinationError",
]


def format_value(value: Any) -> str:
    """Short, unambiguous rendering of a (possibly NumPy) value for error messages."""
    if isinstance(value, bool | np.bool_):
        return repr(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        return "nan" if math.isnan(v) else repr(v)
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=6, precision=6)
        return f"array {text}"
    if isinstance(value, os.PathLike):
        return repr(os.fspath(value))  # a path is shown whole: the user must recognise it
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class PrivampError(Exception):
    """Base class of every error privamp raises deliberately."""


class InvalidParameterError(PrivampError, ValueError):
    """A parameter is outside its admissible range (or NaN / infinite where that is meaningless).

    The message names the parameter, the rule it breaks and the offending value, e.g.
    ``sigma must be a real number in (0, inf); got -1.0``.

    Attributes
    ----------
    parameter : str
        Name of the offending parameter (as the Python API spells it).
    rule : str
        The rule, phrased to follow "must be".
    value : object
        The offending value.
    """

    def __init__(self, parameter: str, rule: str, value: Any, *, detail: str | None = None):
        self.parameter = parameter
        self.rule = rule
        self.value = value
        self.detail = detail
        super().__init__(self.render(parameter))

    def __reduce__(self):  # picklable across processes (multiprocessing, dask)
        return (_rebuild_parameter_error,
                (type(self), self.parameter, self.rule, self.value, self.detail))

    def render(self, name: str) -> str:
        """The message with the parameter called ``name`` (the CLI uses option names)."""
        message = f"{name} must be {self.rule}; got {format_value(self.value)}"
        if self.detail:
            message += f" ({self.detail})"
        return message


def _rebuild_parameter_error(cls, parameter, rule, value, detail):
    return cls(parameter, rule, value, detail=detail)


class InvalidTypeError(InvalidParameterError, TypeError):
    """A parameter has the wrong type (a string where a number is expected, a bool, None, ...)."""


class UnreachableTargetError(InvalidParameterError):
    """A calibration target that no admissible value of the parameter reaches (for example a
    target ε that a single step already exceeds)."""


class UnsupportedCombinationError(PrivampError, ValueError):
    """Two valid choices that do not go together, e.g. a sampling scheme and a relation.

    The message names both sides of the mismatch.
    """


class NumericalError(PrivampError, ArithmeticError):
    """A computation could not certify its result (a bracket not found, a tail not bounded).

    privamp raises this rather than return a number it cannot stand behind.
    """


class InconsistentBoundsError(NumericalError):
    """A certified lower end came out above the certified upper end: one of two independently
    certified computations is wrong, so privamp reports neither. This is a defect in privamp
    (please report it), never a property of the input; the conformance suite fails on it."""


class LossRangeError(NumericalError):
    """One step's privacy loss reaches beyond what the PLD engine represents (|loss| > 700, where
    likelihood ratios overflow a double) or has no bounded tail: the step gives no useful
    (ε, δ) guarantee. A ledger for groups of K records re-raises it as a
    :class:`GroupRangeError` naming ``group_size`` (the group is what pushed the loss out of
    range)."""


class GroupRangeError(InvalidParameterError, LossRangeError):
    """A :class:`LossRangeError` of a ledger for groups of K > 1 records, named as the
    ``group_size`` parameter's: an :class:`InvalidParameterError` (the message names
    ``group_size``, its rule and value) that is still a :class:`NumericalError`, so searches that
    read a numerical failure as "infeasible" (calibration) keep doing so."""


class BudgetExceededError(PrivampError):
    """Steps a privacy filter refuses: they would take the certified ε above the budget
    (:class:`privamp.filter.PrivacyFilter`). The filter's ledger is unchanged.

    Attributes
    ----------
    spent : float
        The certified upper ε already spent at the budget's δ.
    asked : int
        The steps asked for.
    steps_left : int
        How many steps of that kind still fit.
    budget : tuple of float
        The budget (ε, δ).
    taken : bool
        ``True`` when the steps had already run when they were checked (an Opacus optimizer
        step: the noise was drawn before the accountant heard of it); they are then recorded,
        and ``spent`` includes them.
    """

    def __init__(self, *, spent: float, asked: int, steps_left: int,
                 budget: tuple[float, float], taken: bool = False):
        self.spent, self.asked, self.steps_left = spent, asked, steps_left
        self.budget, self.taken = budget, taken
        steps = f"{asked} step{'s' * (asked != 1)}"
        head = (f"{steps} taken exceeded the privacy budget (they are recorded; ask "
                "can_step() before each step)" if taken
                else f"{asked} more step{'s' * (asked != 1)} would exceed the privacy budget")
        super().__init__(
            f"{head} (epsilon {budget[0]!r}, delta {budget[1]!r}): certified epsilon spent "
            f"{spent!r}, {steps_left} step{'s' * (steps_left != 1)} of this kind left")

    def __reduce__(self):
        return (_rebuild_budget_error,
                (self.spent, self.asked, self.steps_left, self.budget, self.taken))


def _rebuild_budget_error(spent, asked, steps_left, budget, taken=False):
    return BudgetExceededError(spent=spent, asked=asked, steps_left=steps_left, budget=budget,
                               taken=taken)


class ClusterError(PrivampError, ConnectionError):
    """A distributed computation could not run: the scheduler is unreachable, has no workers,
    or workers died with their tasks (what was finished is kept; rerunning resumes)."""


class DataIntegrityError(PrivampError, ValueError):
    """A data file shipped with privamp (:mod:`privamp.data`) is not the file privamp was
    released with: it cannot be read, is not gzip data, or its decompressed bytes have another
    sha256. privamp refuses it rather than compute a number from the wrong data.

    Attributes
    ----------
    path : str
        The file.
    problem : str
        What is wrong with it.
    """

    def __init__(self, path: Any, problem: str):
        self.path = os.fspath(path) if isinstance(path, str | os.PathLike) else str(path)
        self.problem = problem
        super().__init__(f"the data file {self.path} shipped with privamp is damaged: {problem} "
                         "(reinstall privamp, or give another copy: data=PATH, --data PATH)")

    def __reduce__(self):
        return (type(self), (self.path, self.problem))


class AccuracyWarning(UserWarning):
    """A computation met every guarantee but not the accuracy asked for (its certified bracket is
    wider than requested, for example when the memory bound stops a refinement)."""


class MissingDependencyError(PrivampError, ImportError):
    """An optional dependency (an ``extra``) is needed for this feature and is not installed."""

    def __init__(self, package: str, extra: str):
        self.package = package
        self.extra = extra
        super().__init__(
            f"this feature needs the optional package {package!r}; "
            f"install it with: pip install 'privamp[{extra}]'"
        )

    def __reduce__(self):
        return (type(self), (self.package, self.extra))
