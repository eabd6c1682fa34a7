"""Calibration: the parameter value that meets a target (ε, δ), never overshooting.

Every calibration is a monotone root-find on one parameter — the noise (σ of the Gaussian, the
scale of the Laplace mechanism; more noise, less ε), the Poisson sampling rate, the number of
steps, or the sizes b and m of a MUST scheme (larger, more ε) — whose feasibility test is the
*certified upper* ε of the accountant. The search keeps the feasible end of its bracket and
returns it, so the calibrated value's certified ε is at most the target; the continuous searches
stop at a relative width ``rtol`` (default 1e-5), the integer ones at the exact boundary.
When no admissible value reaches the target (a single step already exceeds it, a MUST size of 1
is too much), :class:`~privamp.errors.UnreachableTargetError` says so.

Trial values whose accounting would exceed the memory bound (absurdly little noise, say) count as
infeasible — they are far on the wrong side of the target.

>>> from privamp.sampling import Poisson
>>> c = calibrate_sigma(2.0, 1e-5, steps=1000, scheme=Poisson(0.01))
>>> round(c.value, 3), c.epsilon <= 2.0
(0.952, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ._validation import check_choice, check_int, check_real
from .accountant import BACKENDS, Accountant
from .errors import NumericalError, UnreachableTargetError
from .mechanisms.base import Mechanism
from .mechanisms.gaussian import GaussianMechanism
from .mechanisms.laplace import LaplaceMechanism
from .relations import NeighbouringRelation
from .sampling.schemes import MustOW, MustWO, MustWW, Poisson, SamplingScheme

__all__ = ["Calibration", "calibrate", "calibrate_must", "calibrate_rate", "calibrate_sigma",
           "calibrate_steps"]


@dataclass(frozen=True)
class Calibration:
    """The calibrated ``value`` of ``parameter`` and its certified ``epsilon`` (≤ target)."""

    parameter: str
    value: float
    epsilon: float
    epsilon_lower: float | None
    target_epsilon: float
    delta: float
    backend: str
    evaluations: int


def calibrate(evaluate: Callable[[float], float], *, parameter: str, target_epsilon: float,
              increasing: bool, lo: float, hi: float, integer: bool = False,
              rtol: float = 1e-5) -> tuple[float, float, int]:
    """The generic monotone search: the most permissive feasible value in ``[lo, hi]``.

    ``evaluate(value)`` is a certified upper ε, non-decreasing in the value when ``increasing``
    (rate, steps, sizes) and non-increasing otherwise (noise). Returns ``(value, ε, evaluations)``
    with ε ≤ ``target_epsilon``. Raises :class:`UnreachableTargetError` when even the most
    private end is infeasible.
    """
    target = check_real("target_epsilon", target_epsilon, "(0, inf)")
    calls = [0]
    cache: dict = {}

    def eps_at(v):
        if v not in cache:
            calls[0] += 1
            try:
                cache[v] = evaluate(v)
            except NumericalError:
                cache[v] = math.inf  # beyond the memory bound: hopelessly infeasible
        return cache[v]

    def feasible(v):
        return eps_at(v) <= target

    private_end = lo if increasing else hi
    if not feasible(private_end):
        raise UnreachableTargetError(
            "target_epsilon", f"reachable: even {parameter} = {private_end:g} gives ε = "
            f"{eps_at(private_end):.6g}", target)
    permissive_end = hi if increasing else lo
    if feasible(permissive_end):
        return permissive_end, eps_at(permissive_end), calls[0]
    good, bad = private_end, permissive_end
    if integer:
        good, bad = int(good), int(bad)
        while abs(bad - good) > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if feasible(mid) else (good, mid)
        return good, eps_at(good), calls[0]
    # geometric bisection for positive parameters (noise, rates)
    while abs(bad - good) > rtol * abs(good):
        mid = math.sqrt(good * bad) if good > 0 and bad > 0 else 0.5 * (good + bad)
        if mid in (good, bad):
            break
        good, bad = (mid, bad) if feasible(mid) else (good, mid)
    return good, eps_at(good), calls[0]


def _finish(parameter, value, eps, calls, build, target, delta, backend, report_lower):
    lower = None
    if report_lower and backend == "pld":
        bracket = build(value).epsilon(delta)
        lower = bracket.lower
        eps = min(eps, bracket.upper)
    return Calibration(parameter, value, eps, lower, target, delta, backend, calls)


def _check_common(target_epsilon, delta, backend):
    target = check_real("target_epsilon", target_epsilon, "(0, inf)")
    delta = check_real("delta", delta, "(0, 1)")
    backend = check_choice("backend", backend, BACKENDS)
    return target, delta, backend


def calibrate_sigma(target_epsilon: float, delta: float, *, steps: int,
                    scheme: SamplingScheme | None = None, sensitivity: float = 1.0,
                    relation: NeighbouringRelation | str | None = None,
                    mechanism: str = "gaussian", backend: str = "pld", rtol: float = 1e-5,
                    report_lower: bool = True) -> Calibration:
    """The smallest noise (Gaussian σ, or Laplace scale with ``mechanism="laplace"``) whose
    ``steps``-fold composition (on ``scheme``'s subsamples) is (``target_epsilon``, δ)-DP.

    The mechanism is stated under the relation the scheme needs (add/remove for Poisson,
    substitution for the others), with ``sensitivity`` under that relation.
    """
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")
    sens = check_real("sensitivity", sensitivity, "(0, inf)")
    kind = check_choice("mechanism", mechanism, ("gaussian", "laplace"))
    if scheme is not None:
        outer = scheme.natural_relation if relation is None else NeighbouringRelation.parse(
            relation)
        base_rel = scheme.base_relation(outer)
    else:
        outer = base_rel = (NeighbouringRelation.ADD_REMOVE if relation is None
                            else NeighbouringRelation.parse(relation))
    cls = GaussianMechanism if kind == "gaussian" else LaplaceMechanism

    def build(noise):
        mech = cls(noise, sensitivity=sens, relation=base_rel)
        return Accountant(backend).add(mech, steps, scheme=scheme,
                                       relation=outer if scheme is not None else None)

    def evaluate(noise):
        return build(noise).epsilon(delta, lower=False).upper

    value, eps, calls = calibrate(evaluate, parameter="sigma" if kind == "gaussian" else "scale",
                                  target_epsilon=target, increasing=False,
                                  lo=sens * 1e-3, hi=sens * 1e6, rtol=rtol)
    return _finish("sigma" if kind == "gaussian" else "scale", value, eps, calls, build, target,
                   delta, backend, report_lower)


def calibrate_rate(target_epsilon: float, delta: float, *, steps: int, mechanism: Mechanism,
                   backend: str = "pld", rtol: float = 1e-5,
                   report_lower: bool = True) -> Calibration:
    """The largest Poisson sampling rate with (``target_epsilon``, δ)-DP after ``steps`` steps
    (add/remove; ``mechanism`` stated under add/remove)."""
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")

    def build(rate):
        return Accountant(backend).add(mechanism, steps, scheme=Poisson(rate))

    def evaluate(rate):
        return build(rate).epsilon(delta, lower=False).upper

    value, eps, calls = calibrate(evaluate, parameter="rate", target_epsilon=target,
                                  increasing=True, lo=1e-9, hi=1.0, rtol=rtol)
    return _finish("rate", value, eps, calls, build, target, delta, backend, report_lower)


def calibrate_steps(target_epsilon: float, delta: float, *, mechanism: Mechanism,
                    scheme: SamplingScheme | None = None,
                    relation: NeighbouringRelation | str | None = None,
                    max_steps: int = 10**9, backend: str = "pld",
                    report_lower: bool = True) -> Calibration:
    """The largest number of steps with (``target_epsilon``, δ)-DP."""
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    max_steps = check_int("max_steps", max_steps, "[1, inf)")

    def build(t):
        return Accountant(backend).add(mechanism, int(t), scheme=scheme, relation=relation)

    def evaluate(t):
        return build(t).epsilon(delta, lower=False).upper

    # exponential search for an infeasible upper end keeps the work logarithmic
    hi = 1
    while hi < max_steps:
        try:
            if evaluate(min(2 * hi, max_steps)) > target:
                hi = min(2 * hi, max_steps)
                break
        except NumericalError:
            hi = min(2 * hi, max_steps)
            break
        hi = min(2 * hi, max_steps)
    value, eps, calls = calibrate(evaluate, parameter="steps", target_epsilon=target,
                                  increasing=True, lo=1, hi=hi, integer=True)
    return _finish("steps", int(value), eps, calls, build, target, delta, backend, report_lower)


def calibrate_must(target_epsilon: float, delta: float, *, steps: int, mechanism: Mechanism,
                   n: int, kind: str = "ow", b: int | None = None, m: int | None = None,
                   backend: str = "pld", report_lower: bool = True) -> Calibration:
    """The largest MUST size — ``b`` (first-stage size) given ``m``, or ``m`` (second-stage size)
    given ``b`` — with (``target_epsilon``, δ)-DP after ``steps`` steps (substitution)."""
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")
    n = check_int("n", n, "[1, inf)")
    kind = check_choice("kind", kind, ("ow", "wo", "ww"))
    cls = {"ow": MustOW, "wo": MustWO, "ww": MustWW}[kind]
    if (b is None) == (m is None):
        from .errors import InvalidParameterError

        raise InvalidParameterError("b, m", "exactly one given (the other is calibrated)",
                                    (b, m))
    if m is None:
        b = check_int("b", b, f"[1, {n}]")
        parameter, hi = "m", (b if kind == "wo" else 10 * b)

        def scheme_at(v):
            return cls(n, b, int(v))
    else:
        m = check_int("m", m, "[1, inf)")
        parameter, hi = "b", n

        def scheme_at(v):
            return cls(n, int(v), m)

    def build(v):
        return Accountant(backend).add(mechanism, steps, scheme=scheme_at(v))

    def evaluate(v):
        return build(v).epsilon(delta, lower=False).upper

    lo = m if (parameter == "b" and kind == "wo") else 1
    value, eps, calls = calibrate(evaluate, parameter=parameter, target_epsilon=target,
                                  increasing=True, lo=lo, hi=hi, integer=True)
    return _finish(parameter, int(value), eps, calls, build, target, delta, backend,
                   report_lower)
