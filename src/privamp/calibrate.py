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
(0.959, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._validation import check_choice, check_int, check_real
from .accountant import Accountant, Backend
from .errors import (
    InconsistentBoundsError,
    InvalidTypeError,
    NumericalError,
    UnreachableTargetError,
)
from .mechanisms.base import Mechanism
from .relations import NeighbouringRelation
from .sampling.schemes import SCHEMES, Poisson, SamplingScheme

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
              rtol: float = 1e-5, guess: float | None = None,
              coarse: Callable[[float], float] | None = None) -> tuple[float, float, int]:
    """The generic monotone search: the most permissive feasible value in ``[lo, hi]``.

    ``evaluate(value)`` is a certified upper ε, non-decreasing in the value when ``increasing``
    (rate, steps, sizes) and non-increasing otherwise (noise). Returns ``(value, ε, evaluations)``
    with ε ≤ ``target_epsilon``. Raises :class:`UnreachableTargetError` when even the most
    private end is infeasible.

    ``guess`` starts a geometric bracket search there (factor 2) instead of at the ends;
    ``coarse`` is a cheaper certified upper ε (a coarser grid: never below ``evaluate``) used to
    narrow the bracket to a relative width of 1e-3 before ``evaluate`` finishes it. A value the
    coarse bound accepts is feasible; one it rejects is only *probably* infeasible, so the fine
    phase re-checks the ends it inherits.
    """
    target = check_real("target_epsilon", target_epsilon, "(0, inf)")
    calls = [0]
    caches: dict = {}

    def eps_at(v, fn):
        cache = caches.setdefault(id(fn), {})
        if v not in cache:
            calls[0] += 1
            try:
                cache[v] = fn(v)
            except InconsistentBoundsError:  # a defect, never "infeasible"
                raise
            except NumericalError:
                cache[v] = math.inf  # beyond the memory bound: hopelessly infeasible
        return cache[v]

    def more_private(a, b):  # is a on the private side of b?
        return a < b if increasing else a > b

    private_end = lo if increasing else hi
    permissive_end = hi if increasing else lo

    def search(fn, good, bad, tol):
        """good feasible, bad infeasible (or the permissive end) → feasible end at width tol."""
        if integer:
            good, bad = int(good), int(bad)
            while abs(bad - good) > 1:
                mid = (good + bad) // 2
                good, bad = (mid, bad) if eps_at(mid, fn) <= target else (good, mid)
            return good, bad
        while abs(bad - good) > tol * abs(good):
            mid = math.sqrt(good * bad) if good > 0 and bad > 0 else 0.5 * (good + bad)
            if mid in (good, bad):
                break
            good, bad = (mid, bad) if eps_at(mid, fn) <= target else (good, mid)
        return good, bad

    def bracket(fn):
        """A feasible value and an infeasible one (or the permissive end if it is feasible)."""
        if guess is None:
            if eps_at(private_end, fn) > target:
                return None, private_end
            return private_end, permissive_end
        v = min(max(guess, lo), hi)
        if integer:
            v = int(round(v))
        if eps_at(v, fn) <= target:
            good = v
            while True:
                nxt = min(v * 2, hi) if increasing else max(v / 2, lo)
                if integer:
                    nxt = int(nxt)
                if nxt == v or eps_at(nxt, fn) > target:
                    return good, nxt
                good = v = nxt
        bad = v
        while True:
            nxt = max(v / 2, lo) if increasing else min(v * 2, hi)
            if integer:
                nxt = int(nxt)
            if eps_at(nxt, fn) <= target:
                return nxt, bad
            if nxt == v:
                return None, bad
            bad = v = nxt

    fine_only = coarse is None
    good, bad = bracket(evaluate if fine_only else coarse)
    if good is None and not fine_only:
        good, bad = bracket(evaluate)
    if good is None:
        raise UnreachableTargetError(
            "target_epsilon", f"reachable: even {parameter} = {bad:g} gives ε = "
            f"{eps_at(bad, evaluate):.6g}", target)
    if good == bad or (not more_private(good, bad) and good == permissive_end):
        return good, eps_at(good, evaluate), calls[0]
    if not fine_only:
        good, bad = search(coarse, good, bad, 1e-3)
        # the coarse bound over-estimates: widen towards the permissive side, re-check
        if not integer:
            bad = min(bad * 1.01, hi) if increasing else max(bad / 1.01, lo)
    if eps_at(good, evaluate) > target:  # rare: the coarse grid happened to be the tighter
        return calibrate(evaluate, parameter=parameter, target_epsilon=target,
                         increasing=increasing, lo=lo, hi=hi, integer=integer, rtol=rtol,
                         guess=good)
    if eps_at(bad, evaluate) <= target:
        if bad == permissive_end:
            return bad, eps_at(bad, evaluate), calls[0]
        return calibrate(evaluate, parameter=parameter, target_epsilon=target,
                         increasing=increasing, lo=lo, hi=hi, integer=integer, rtol=rtol,
                         guess=bad)
    good, bad = search(evaluate, good, bad, rtol)
    return good, eps_at(good, evaluate), calls[0]


def _finish(parameter, value, eps, calls, build, target, delta, backend, report_lower):
    lower = None
    if report_lower and backend == "pld":
        try:
            bracket = build(value).epsilon(delta)
        except InconsistentBoundsError:  # a defect, never "infeasible"
            raise
        except NumericalError:  # the default accuracy is beyond the memory bound here: the
            bracket = None      # search's certified value stands, without a lower end
        if bracket is not None:
            lower = bracket.lower
            eps = min(eps, bracket.upper)
    return Calibration(parameter, value, eps, lower, target, delta, backend, calls)


def _check_common(target_epsilon, delta, backend):
    target = check_real("target_epsilon", target_epsilon, "(0, inf)")
    delta = check_real("delta", delta, "(0, 1)")
    backend = Backend.parse(backend)
    return target, delta, backend


def calibrate_sigma(target_epsilon: float, delta: float, *, steps: int,
                    scheme: SamplingScheme | None = None, sensitivity: float = 1.0,
                    relation: NeighbouringRelation | str | None = None,
                    mechanism: str | type[Mechanism] = "gaussian", backend: str = "pld",
                    rtol: float = 1e-5, report_lower: bool = True) -> Calibration:
    """The smallest noise (Gaussian σ, or Laplace scale with ``mechanism="laplace"``) whose
    ``steps``-fold composition (on ``scheme``'s subsamples) is (``target_epsilon``, δ)-DP.

    ``mechanism`` is a mechanism class with a noise parameter (:attr:`Mechanism.noise`:
    :class:`GaussianMechanism`, :class:`LaplaceMechanism`) or its registry name.

    The mechanism is stated under the relation the scheme needs (add/remove for Poisson,
    substitution for the others), with ``sensitivity`` under that relation.
    """
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")
    sens = check_real("sensitivity", sensitivity, "(0, inf)")
    cls = _noise_class(mechanism)
    if scheme is not None:
        outer, base_rel = scheme.resolve(relation)
    else:
        outer = base_rel = (NeighbouringRelation.ADD_REMOVE if relation is None
                            else NeighbouringRelation.parse(relation))

    def build(noise, coarse=False):
        mech = cls.from_params(base_rel, **{cls.noise: noise, "sensitivity": sens})
        acc = Accountant(backend, upper_error=1e-3 * target if coarse else None)
        return acc.add(mech, steps, scheme=scheme,
                       relation=outer if scheme is not None else None)

    def evaluate(noise):
        return build(noise).epsilon(delta, lower=False).upper

    def evaluate_coarse(noise):
        return build(noise, coarse=True).epsilon(delta, lower=False).upper

    # a first guess: the classical Gaussian calibration of the composition (η√T scaling)
    eta = 1.0 if scheme is None else float(scheme.eta)
    guess = sens * eta * math.sqrt(steps * 2 * math.log(1.25 / delta)) / target
    value, eps, calls = calibrate(evaluate, parameter=cls.noise,
                                  target_epsilon=target, increasing=False,
                                  lo=sens * 1e-3, hi=sens * 1e6, rtol=rtol,
                                  guess=max(guess, sens * 1e-2),
                                  coarse=evaluate_coarse if backend == "pld" else None)
    return _finish(cls.noise, value, eps, calls, build, target, delta, backend, report_lower)


def _noise_class(mechanism: str | type[Mechanism]) -> type[Mechanism]:
    """The mechanism class whose noise :func:`calibrate_sigma` solves for."""
    from .mechanisms import REGISTRY, noise_mechanisms

    if isinstance(mechanism, str):
        names = tuple(sorted(noise_mechanisms().values()))
        return REGISTRY[check_choice("mechanism", mechanism, names)]
    if not (isinstance(mechanism, type) and issubclass(mechanism, Mechanism)
            and mechanism.noise is not None):
        raise InvalidTypeError("mechanism", "a mechanism class with a noise parameter "
                               "(GaussianMechanism, LaplaceMechanism) or its name", mechanism)
    return mechanism


def calibrate_rate(target_epsilon: float, delta: float, *, steps: int, mechanism: Mechanism,
                   backend: str = "pld", rtol: float = 1e-5,
                   report_lower: bool = True) -> Calibration:
    """The largest Poisson sampling rate with (``target_epsilon``, δ)-DP after ``steps`` steps
    (add/remove; ``mechanism`` stated under add/remove)."""
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")

    def build(rate, coarse=False):
        acc = Accountant(backend, upper_error=1e-3 * target if coarse else None)
        return acc.add(mechanism, steps, scheme=Poisson(rate))

    def evaluate(rate):
        return build(rate).epsilon(delta, lower=False).upper

    def evaluate_coarse(rate):
        return build(rate, coarse=True).epsilon(delta, lower=False).upper

    value, eps, calls = calibrate(evaluate, parameter="rate", target_epsilon=target,
                                  increasing=True, lo=1e-9, hi=1.0, rtol=rtol,
                                  guess=min(1.0, target / math.sqrt(steps)),
                                  coarse=evaluate_coarse if backend == "pld" else None)
    return _finish("rate", value, eps, calls, build, target, delta, backend, report_lower)


def calibrate_steps(target_epsilon: float, delta: float, *, mechanism: Mechanism,
                    scheme: SamplingScheme | None = None,
                    relation: NeighbouringRelation | str | None = None,
                    max_steps: int = 10**9, backend: str = "pld",
                    report_lower: bool = True) -> Calibration:
    """The largest number of steps with (``target_epsilon``, δ)-DP."""
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    max_steps = check_int("max_steps", max_steps, "[1, inf)")

    def build(t, error=None):
        return Accountant(backend, upper_error=error).add(mechanism, int(t), scheme=scheme,
                                                          relation=relation)

    # accuracy relative to the target, not to ε(t): far below the target (10^7 steps of tiny
    # losses) a relative target would ask for grids beyond the memory bound, which would count
    # as infeasible; 1e-5 of the target still decides "≤ target" to that precision
    def evaluate(t, error=1e-5):
        return build(t, error * target if backend == "pld" else None).epsilon(
            delta, lower=False).upper

    # the permissive end first, coarsely (still certified): when even max_steps meets the target
    # there is nothing to search
    try:
        at_max = evaluate(max_steps, 1e-2)
    except InconsistentBoundsError:  # a defect, never "infeasible"
        raise
    except NumericalError:
        at_max = math.inf
    if at_max <= target:
        return _finish("steps", max_steps, at_max, 1, build, target, delta, backend,
                       report_lower)
    # exponential search for an infeasible upper end keeps the work logarithmic
    hi = 1
    while hi < max_steps:
        try:
            if evaluate(min(2 * hi, max_steps)) > target:
                hi = min(2 * hi, max_steps)
                break
        except InconsistentBoundsError:  # a defect, never "infeasible"
            raise
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
    given ``b`` — with (``target_epsilon``, δ)-DP after ``steps`` steps (substitution).

    ε grows with m. It is not monotone in b (small b means many copies of a record in the
    subsample, large b a larger η): for b the result is the largest feasible value found by a
    geometric scan refined by bisection — certified feasible, with b + 1 infeasible.
    """
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")
    n = check_int("n", n, "[1, inf)")
    kind = check_choice("kind", kind, ("ow", "wo", "ww"))
    cls = SCHEMES[f"must-{kind}"]
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

    if parameter == "m":
        value, eps, calls = calibrate(evaluate, parameter="m", target_epsilon=target,
                                      increasing=True, lo=1, hi=hi, integer=True)
    else:
        # ε is not monotone in b: a small first stage puts many copies of one record into the
        # subsample (MUST.OW/WW), a large one raises η. Scan b geometrically, take the largest
        # feasible grid value, and bisect between it and the next (infeasible) grid value.
        lo_b = m if kind == "wo" else 1
        grid = sorted({int(round(v)) for v in np.geomspace(lo_b, n, 12)} | {lo_b, n})
        feasible = [v for v in grid if evaluate(v) <= target]
        if not feasible:
            raise UnreachableTargetError(
                "target_epsilon", f"reachable: no first-stage size b in [{lo_b}, {n}] on a "
                f"geometric grid of {len(grid)} values gives ε ≤ the target", target)
        good = max(feasible)
        above = [v for v in grid if v > good]
        if not above:
            value, eps, calls = good, evaluate(good), len(grid)
        else:
            value, eps, calls = calibrate(evaluate, parameter="b", target_epsilon=target,
                                          increasing=True, lo=good, hi=above[0], integer=True)
            calls += len(grid)
    return _finish(parameter, int(value), eps, calls, build, target, delta, backend,
                   report_lower)
