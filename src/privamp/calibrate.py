"""Calibration: the parameter value that meets a target (ε, δ), never overshooting.

Every calibration is a monotone root-find on one parameter — the noise (σ of the Gaussian, the
scale of the Laplace mechanism; more noise, less ε), the Poisson sampling rate, the number of
steps, or the sizes b and m of a MUST scheme (larger, more ε) — whose feasibility test is the
*certified upper* ε of the accountant. The search keeps the feasible end of its bracket and
returns it, so the calibrated value's certified ε is at most the target; the continuous searches
stop at a relative width ``rtol`` (default 1e-5), the integer ones at the exact boundary.
When no admissible value reaches the target (a single step already exceeds it, a MUST size of 1
is too much), :class:`~privamp.errors.UnreachableTargetError` says so.

**How it stays within a few evaluations.** log ε is a smooth function of log(value) (nearly
linear over the last few percent: ε ∝ 1/σ for a Gaussian far from the target, ∝ √T over the
steps), so the search runs a safeguarded secant method on ``g(u) = log ε(e^u) − log target``
rather than a bisection (:class:`_Search`):

1. a *coarse* phase on a cheaper certified upper ε (the PLD grid chosen for an upper error of
   1e-3 × target instead of 1e-5 × ε; a coarser upper side is still an upper bound) walks from
   a classical first guess to within about 0.05 % of the coarse boundary and learns the slope
   d log ε / d log value;
2. a *fine* phase on the default accuracy starts at the last coarse-feasible point, steps by the
   learned slope to the predicted fine boundary and places its trials so that one feasible and
   one infeasible value end up within ``rtol`` of each other — usually two or three fine
   evaluations. Trials stay strictly inside the current bracket, a bisection step is taken
   whenever the bracket does not halve within two steps, so the search terminates whatever the
   function does.

Only fine evaluations decide the returned value: the result is feasible by the certified upper ε
at the default accuracy (never by the coarse one alone), and the next value beyond it (the value
× (1 ± ``rtol``) for continuous parameters, ± 1 for integers) was found infeasible at that same
accuracy. The final bracket with its lower end reuses the fine composition at the value
(:class:`~privamp.cache.AccountingCache`). ``evaluations`` counts every accountant evaluation —
coarse, fine and the final bracket; ``coarse_evaluations`` how many of them were coarse.

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
from dataclasses import dataclass, field

import numpy as np

from ._progress import report
from ._validation import check_choice, check_int, check_real
from .accountant import Accountant, Backend
from .cache import AccountingCache
from .errors import (
    InconsistentBoundsError,
    InvalidParameterError,
    InvalidTypeError,
    NumericalError,
    UnreachableTargetError,
)
from .mechanisms.base import Mechanism
from .relations import NeighbouringRelation
from .sampling.schemes import SCHEMES, Poisson, SamplingScheme

__all__ = ["Calibration", "RiskCalibration", "StepSearch", "calibrate", "calibrate_must",
           "calibrate_rate", "calibrate_sigma", "calibrate_sigma_risk", "calibrate_steps",
           "guess_steps"]


@dataclass(frozen=True)
class Calibration:
    """The calibrated ``value`` of ``parameter`` and its certified ``epsilon`` (≤ target).

    ``evaluations`` counts every accountant evaluation the calibration ran (coarse trials, fine
    trials and the final bracket); ``coarse_evaluations`` how many of them were on the coarser
    grid (each a fraction of a default evaluation's time).
    """

    parameter: str
    value: float
    epsilon: float
    epsilon_lower: float | None
    target_epsilon: float
    delta: float
    backend: str
    evaluations: int
    coarse_evaluations: int = 0
    #: the guarantee is for groups of this many records (:mod:`privamp.pld.group`)
    group_size: int = 1


#: The coarse phase's accuracy: the PLD upper side chosen for an estimated error of this
#: fraction of the target (the default is 1e-5 of ε). Still a certified upper bound.
_COARSE_ERROR = 1e-3
#: The coarse phase stops at a coarse-feasible point this close to the target in log ε (its
#: own error is about _COARSE_ERROR, so getting closer would not help the fine phase).
_COARSE_GTOL = 5e-4
#: Largest move of log(value) by one extrapolation (a factor of 4).
_MAX_STEP = math.log(4.0)
#: Evaluations allowed per phase (the safeguarded search needs about log2(range / rtol)).
_MAX_EVALS = 200


@dataclass
class _Point:
    value: float
    u: float        # log(value)
    g: float        # log(ε / target): ≤ 0 where feasible; ±inf allowed
    eps: float
    feasible: bool  # ε ≤ target, decided on ε itself (never on the rounded logarithm)


@dataclass
class _Search:
    """A safeguarded secant search on ``g(u) = log ε(e^u) − log target`` with one evaluator.

    ``d`` is +1 when ε grows with the value (rate, steps, sizes), −1 when it falls (noise).
    ``F`` is the most permissive feasible point evaluated, ``I`` the least permissive infeasible
    one; while both exist every trial lies strictly between them, so (ε being monotone) they
    never cross. Each trial is a secant step from the point closest to the target along the
    slope learned so far (the two points of this phase closest to the target, else those of the
    earlier phase in ``prior``, else ``slope``), leaning towards the side whose trial would
    close the bracket, and clamped inside the bracket; a bisection step replaces it whenever
    the smallest |g| did not halve within two steps.
    """

    fn: Callable[[float], float]
    target: float
    d: float
    lo: float
    hi: float
    integer: bool
    rtol: float
    slope: float
    prior: list = field(default_factory=list)
    max_step: float = _MAX_STEP
    calls: int = 0
    points: list = field(default_factory=list)
    F: _Point | None = None
    I: _Point | None = None  # noqa: E741
    best: list = field(default_factory=list)

    @property
    def permissive_end(self) -> float:
        return self.hi if self.d > 0 else self.lo

    @property
    def private_end(self) -> float:
        return self.lo if self.d > 0 else self.hi

    @property
    def tol(self) -> float:
        """The closing width in log(value) (0 for integers: they close at a gap of 1)."""
        return 0.0 if self.integer else math.log1p(self.rtol)

    def at(self, value: float) -> _Point:
        value = min(max(value, self.lo), self.hi)
        if self.integer:
            value = int(value)
        for p in self.points:
            if p.value == value:
                return p
        self.calls += 1
        try:
            eps = float(self.fn(value))
        except InconsistentBoundsError:  # a defect, never "infeasible"
            raise
        except NumericalError:
            eps = math.inf  # beyond the memory bound: hopelessly infeasible
        return self.record(value, eps)

    def record(self, value: float, eps: float) -> _Point:
        """Enter ``ε(value) = eps`` (evaluated here, or earlier by the same evaluator)."""
        feasible = eps <= self.target
        if eps <= 0.0:
            g = -math.inf
        elif math.isinf(eps) or math.isnan(eps):
            g, feasible = math.inf, False
        else:
            g = math.log(eps) - math.log(self.target)
        p = _Point(value, math.log(value), g, eps, feasible)
        self.points.append(p)
        if feasible:
            if self.F is None or self.d * (p.u - self.F.u) > 0:
                self.F = p
        elif self.I is None or self.d * (p.u - self.I.u) < 0:
            self.I = p
        return p

    def closed(self) -> bool:
        """The search is over: the permissive end is feasible, the private end infeasible, or
        the bracket is within ``rtol`` (a gap of one for integers)."""
        F, I = self.F, self.I  # noqa: E741
        if F is not None and F.value == self.permissive_end:
            return True
        if I is not None and I.value == self.private_end:
            return True
        if F is None or I is None:
            return False
        if self.integer:
            return abs(I.value - F.value) <= 1
        return abs(I.value - F.value) <= self.rtol * abs(F.value)

    def _slope(self) -> float:
        """d g / d u near the root: from the two points of this phase closest to the target,
        else from the earlier phase's, else the prior; only a slope of the right sign."""
        for pts in (self.points, self.prior):
            finite = sorted((p for p in pts if math.isfinite(p.g)), key=lambda p: abs(p.g))
            for i, a in enumerate(finite):
                for b in finite[i + 1:]:
                    if a.u != b.u:
                        k = (b.g - a.g) / (b.u - a.u)
                        if self.d * k > 0 and math.isfinite(k):
                            return k
                        break
                else:
                    continue
                break
        return self.slope

    def _value(self, t: float, lean: float) -> float:
        """The trial value at log-value ``t``; integers are rounded towards the feasible side
        (``lean`` = −d) or the infeasible one (``lean`` = +d)."""
        t = min(max(t, math.log(self.lo)), math.log(self.hi))
        v = math.exp(t)
        if not self.integer:
            return min(max(v, self.lo), self.hi)
        v = math.floor(v + 1e-9) if lean < 0 else math.ceil(v - 1e-9)
        return int(min(max(v, self.lo), self.hi))

    def trial(self) -> float | None:
        """The next value to evaluate (``None``: no representable value is left between the
        ends of the bracket)."""
        F, I, d, tol = self.F, self.I, self.d, self.tol  # noqa: E741
        if F is not None and I is not None:
            w = abs(I.u - F.u)
            best = min(abs(F.g), abs(I.g))
            self.best.append(best)
            # safeguard: bisect when the best |g| did not halve within two steps
            stalled = len(self.best) >= 3 and best > 0.5 * self.best[-3]
            near = F if abs(F.g) <= abs(I.g) else I
            if not stalled and math.isfinite(near.g):
                r = near.u - near.g / self._slope()  # the predicted boundary
                if 0 < tol and abs(r - near.u) < tol:
                    # within reach of closing: the trial the prediction says closes the bracket
                    t = near.u + (d if near is F else -d) * 0.98 * tol
                else:
                    t = r - d * 0.25 * tol
                m = min(0.1 * w, 0.9 * tol) if tol > 0 else 0.0
                a, b = sorted((F.u + d * m, I.u - d * m))
                t = min(max(t, a), b)
            else:
                t = 0.5 * (F.u + I.u)
            v = self._value(t, -d)
            if self.integer:
                a, b = sorted((F.value, I.value))
                v = min(max(v, a + 1), b - 1)
            if v in (F.value, I.value) or not (min(F.value, I.value) < v
                                                < max(F.value, I.value)):
                return None
            return v
        p = F if F is not None else I
        side = d if p is F else -d  # the direction to go from p
        k = self._slope()
        if math.isfinite(p.g):
            step = -p.g / k
            # within reach of closing: the farthest closing trial; else lean past the boundary
            step = (side * 0.98 * tol if abs(step) < tol
                    else side * max(side * (step + side * 0.5 * tol), 0.98 * tol))
        else:
            step = side * self.max_step
        step = max(-self.max_step, min(self.max_step, step))
        v = self._value(p.u + step, side)
        if self.integer and v == p.value:
            v = int(min(max(p.value + side, self.lo), self.hi))
        if v == p.value:
            return None
        return v

    def run(self, start: float, stop: Callable[[_Search], bool] | None = None) -> _Search:
        self.at(start)
        while not self.closed() and not (stop is not None and stop(self)):
            if self.calls >= _MAX_EVALS:
                break
            v = self.trial()
            if v is None:
                break
            self.at(v)
        return self


def _coarse_done(s: _Search) -> bool:
    F, I = s.F, s.I  # noqa: E741
    if F is None:
        return False
    if F.g >= -_COARSE_GTOL:
        return True
    return I is not None and abs(I.u - F.u) <= _COARSE_GTOL


@dataclass(frozen=True)
class _Outcome:
    value: float
    eps: float
    fine: int
    coarse: int


@dataclass(frozen=True)
class _Coarse:
    """What the coarse phase leaves to the fine one: where to start, the points learned (for
    the slope), the coarse evaluations, the pairs to seed the fine search with, and the most
    permissive coarse-feasible value (``None`` if none was found)."""

    start: float
    prior: list
    calls: int
    seeded: tuple
    feasible: float | None


def _coarse_phase(*, target, d, lo, hi, integer, rtol, guess, coarse, slope, max_step,
                  known) -> _Coarse:
    start = math.sqrt(lo * hi) if guess is None else min(max(guess, lo), hi)
    if integer:
        start = int(min(max(round(start), lo), hi))
    if coarse is None:
        return _Coarse(start, [], 0, tuple(known), None)
    cs = _Search(coarse, target, d, lo, hi, integer, rtol, slope, max_step=max_step)
    for value, eps in known:
        cs.record(value, eps)
    cs.run(start, _coarse_done)
    # the fine phase starts where the coarse one found the boundary: a coarse-feasible point
    # is feasible at the finer accuracy too (almost always; checked, not assumed)
    if cs.F is not None:
        start = cs.F.value
    elif cs.I is not None:
        start = cs.I.value
    return _Coarse(start, cs.points, cs.calls, (), None if cs.F is None else cs.F.value)


def _fine_phase(evaluate, c: _Coarse, *, parameter, target, d, lo, hi, integer, rtol, slope,
                max_step) -> _Outcome:
    fs = _Search(evaluate, target, d, lo, hi, integer, rtol, slope, c.prior, max_step=max_step)
    for value, eps in c.seeded:
        fs.record(value, eps)
    fs.run(c.start)
    if fs.F is None:
        end = fs.at(fs.private_end)
        if not end.feasible:
            raise UnreachableTargetError(
                "target_epsilon", f"reachable: even {parameter} = {end.value:g} gives ε = "
                f"{end.eps:.6g}", target)
        fs.run(end.value)  # feasible after all (the search stopped early): go on from there
    permissive = hi if d > 0 else lo
    best = fs.F
    if best.value != permissive and abs(best.value - permissive) <= 2 * rtol * permissive:
        # within rtol of the permissive end: the end itself may be feasible (then it is the
        # answer, exactly — not a value a rounding away from it)
        end = fs.at(permissive)
        if end.feasible:
            best = end
    return _Outcome(best.value, best.eps, fs.calls, c.calls)


def _reported(fn, parameter: str, kind: str):
    """``fn`` reporting each evaluation on the progress logger (:mod:`privamp._progress`)."""
    if fn is None:
        return None

    def run(value):
        report("calibrating %s: %s evaluation at %.6g", parameter, kind, value)
        return fn(value)

    return run


def _solve(evaluate, *, parameter, target, increasing, lo, hi, integer, rtol, guess, coarse,
           slope, max_step=_MAX_STEP, known=()) -> _Outcome:
    """The two phases (module docstring). ``known``: ``(value, ε)`` pairs already evaluated by
    ``coarse`` (or by ``evaluate`` when there is no coarse evaluator)."""
    d = 1.0 if increasing else -1.0
    evaluate, coarse = _reported(evaluate, parameter, "fine"), _reported(coarse, parameter,
                                                                        "coarse")
    c = _coarse_phase(target=target, d=d, lo=lo, hi=hi, integer=integer, rtol=rtol,
                      guess=guess, coarse=coarse, slope=slope, max_step=max_step, known=known)
    return _fine_phase(evaluate, c, parameter=parameter, target=target, d=d, lo=lo, hi=hi,
                       integer=integer, rtol=rtol, slope=slope, max_step=max_step)


def calibrate(evaluate: Callable[[float], float], *, parameter: str, target_epsilon: float,
              increasing: bool, lo: float, hi: float, integer: bool = False,
              rtol: float = 1e-5, guess: float | None = None,
              coarse: Callable[[float], float] | None = None,
              slope: float | None = None) -> tuple[float, float, int]:
    """The generic monotone search: the most permissive feasible value in ``[lo, hi]``
    (``0 < lo ≤ hi``).

    ``evaluate(value)`` is a certified upper ε, non-decreasing in the value when ``increasing``
    (rate, steps, sizes) and non-increasing otherwise (noise). Returns ``(value, ε, evaluations)``
    with ε = ``evaluate(value)`` ≤ ``target_epsilon`` and, unless ``value`` is the permissive
    end, a value beyond it by at most ``rtol`` relative (1 for integers) infeasible; the count
    includes the coarse evaluations. Raises :class:`UnreachableTargetError` when even the most
    private end is infeasible.

    ``guess`` is where the search starts (default the geometric middle of the range);
    ``coarse`` a cheaper certified upper ε (a coarser grid) for the first phase; ``slope`` the
    expected d log ε / d log value to start from (default ±1). See the module docstring.
    """
    out = _search(evaluate, parameter=parameter, target_epsilon=target_epsilon,
                  increasing=increasing, lo=lo, hi=hi, integer=integer, rtol=rtol, guess=guess,
                  coarse=coarse, slope=slope)
    return out.value, out.eps, out.fine + out.coarse


def _search(evaluate, *, parameter, target_epsilon, increasing, lo, hi, integer=False,
            rtol=1e-5, guess=None, coarse=None, slope=None, max_step=_MAX_STEP,
            known=()) -> _Outcome:
    target = check_real("target_epsilon", target_epsilon, "(0, inf)")
    rtol = check_real("rtol", rtol, "(0, 0.5]")
    lo = check_real("lo", lo, "(0, inf)")
    hi = check_real("hi", hi, f"[{lo!r}, inf)")
    if slope is None:
        slope = 1.0 if increasing else -1.0
    elif (slope > 0) != bool(increasing) or not math.isfinite(slope):
        raise InvalidParameterError("slope", "finite, of the sign of the monotonicity "
                                    "(positive when increasing)", slope)
    return _solve(evaluate, parameter=parameter, target=target, increasing=increasing, lo=lo,
                  hi=hi, integer=integer, rtol=rtol, guess=guess, coarse=coarse, slope=slope,
                  max_step=max_step, known=known)


def _new_cache() -> AccountingCache:
    """The memo the fine trials and the final bracket share: the bracket at the returned value
    reuses that value's fine composition (a modest budget: only the last few matter)."""
    return AccountingCache(step_bytes=64 * 2**20, composed_bytes=128 * 2**20)


def _finish(parameter, value, out: _Outcome, build, target, delta, backend,
            report_lower, group_size: int = 1) -> Calibration:
    """The result, with the lower end of the certified bracket at ``value`` (one more
    evaluation, counted; it reuses the search's fine composition through the shared cache)."""
    lower = None
    eps = out.eps
    evaluations = out.fine + out.coarse
    if report_lower and backend == "pld":
        evaluations += 1
        try:
            bracket = build(value).epsilon(delta)
        except InconsistentBoundsError:  # a defect, never "infeasible"
            raise
        except NumericalError:  # the default accuracy is beyond the memory bound here: the
            bracket = None      # search's certified value stands, without a lower end
        if bracket is not None:
            lower = bracket.lower
            eps = min(eps, bracket.upper)
    return Calibration(parameter, value, eps, lower, target, delta, backend, evaluations,
                       out.coarse, group_size)


def _group(group_size) -> int:
    return check_int("group_size", group_size, "[1, inf)")


def _check_common(target_epsilon, delta, backend):
    target = check_real("target_epsilon", target_epsilon, "(0, inf)")
    delta = check_real("delta", delta, "(0, 1)")
    backend = Backend.parse(backend)
    return target, delta, backend


def _noise_multiplier(mechanism: Mechanism) -> float | None:
    """The mechanism's noise over its sensitivity (σ/Δ, or the Laplace scale over Δ), for first
    guesses only; ``None`` for mechanisms without a noise parameter."""
    name = getattr(type(mechanism), "noise", None)
    noise = getattr(mechanism, name, None) if name else None
    sens = getattr(mechanism, "sensitivity", None)
    try:
        z = float(noise) / float(sens)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return z if math.isfinite(z) and z > 0 else None


def _gdp_mu(target: float, delta: float) -> float:
    """The μ of the μ-GDP Gaussian trade-off that is exactly (``target``, δ)-DP: 1/σ of the
    analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8) of unit sensitivity. With the
    central limit theorem for subsampled Gaussians (Dong, Roth, Su 2022, Corollary 5.4:
    T steps at rate q and noise multiplier z are about μ-GDP with μ = q √(T (e^{1/z²} − 1)))
    it gives every first guess below; only ever a starting point of the search, which decides
    everything on certified values."""
    from .mechanisms.gaussian import GaussianMechanism

    return 1.0 / GaussianMechanism.calibrated(target, delta).sigma


def _expm1_inv_sq(z: float) -> float:
    """e^{1/z²} − 1, saturating instead of overflowing (a guess needs no more)."""
    return math.expm1(min(1.0 / (z * z), 700.0))


def _guess_noise(mu: float, steps: int, eta: float | None) -> float:
    """The noise multiplier z with μ = η √(T (e^{1/z²} − 1)) (√T / z exactly without
    subsampling, ``eta`` None)."""
    if eta is None:
        return math.sqrt(steps) / mu
    ratio = mu / eta
    if ratio > 1e100:  # log1p(ratio²/T) = log(ratio²/T) to double precision; ratio² overflows
        return 1.0 / math.sqrt(2.0 * math.log(ratio) - math.log(steps))
    return 1.0 / math.sqrt(math.log1p(ratio**2 / steps))


def calibrate_sigma(target_epsilon: float, delta: float, *, steps: int,
                    scheme: SamplingScheme | None = None, sensitivity: float = 1.0,
                    relation: NeighbouringRelation | str | None = None,
                    mechanism: str | type[Mechanism] = "gaussian", backend: str = "pld",
                    rtol: float = 1e-5, report_lower: bool = True,
                    group_size: int = 1) -> Calibration:
    """The smallest noise (Gaussian σ, or Laplace scale with ``mechanism="laplace"``) whose
    ``steps``-fold composition (on ``scheme``'s subsamples) is (``target_epsilon``, δ)-DP,
    to a relative ``rtol``: the noise × (1 − ``rtol``) is infeasible (unless it is below the
    search range, 1e-3 × the sensitivity).

    ``mechanism`` is a mechanism class with a noise parameter (:attr:`Mechanism.noise`:
    :class:`GaussianMechanism`, :class:`LaplaceMechanism`) or its registry name.

    The mechanism is stated under the relation the scheme needs (add/remove for Poisson,
    substitution for the others), with ``sensitivity`` under that relation. ``group_size`` K:
    the guarantee is for groups of K records (every calibration function takes it; the ledgers
    are :meth:`Accountant.add` with ``group_size=K``, PLD backend only).
    """
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")
    k = _group(group_size)
    sens = check_real("sensitivity", sensitivity, "(0, inf)")
    rtol = check_real("rtol", rtol, "(0, 0.5]")
    cls = _noise_class(mechanism)
    outer, base_rel = _relations(scheme, relation)
    cache = _new_cache()

    def build(noise, coarse=False):
        mech = cls.from_params(base_rel, **{cls.noise: noise, "sensitivity": sens})
        acc = (Accountant(backend, upper_error=_COARSE_ERROR * target) if coarse
               else Accountant(backend, cache=cache))
        return acc.add(mech, steps, scheme=scheme,
                       relation=outer if scheme is not None else None, group_size=k)

    def evaluate(noise):
        return build(noise).epsilon(delta, lower=False).upper

    def evaluate_coarse(noise):
        return build(noise, coarse=True).epsilon(delta, lower=False).upper

    # a first guess: the CLT of subsampled Gaussians (exact without subsampling); a group of
    # K records is guessed like sensitivity KΔ
    eta = None if scheme is None else _guess_rate(scheme)
    guess = k * sens * _guess_noise(_gdp_mu(target, delta), steps, eta)
    out = _search(evaluate, parameter=cls.noise, target_epsilon=target, increasing=False,
                  lo=sens * 1e-3, hi=sens * 1e6, rtol=rtol, guess=max(guess, sens * 1e-2),
                  coarse=evaluate_coarse if backend == "pld" else None, slope=-1.5)
    return _finish(cls.noise, out.value, out, build, target, delta, backend, report_lower, k)


def _relations(scheme: SamplingScheme | None, relation) -> tuple:
    """(relation on the whole dataset, relation the base mechanism is stated under): the
    scheme's (:meth:`SamplingScheme.resolve`), or the given one (add/remove by default)."""
    if scheme is not None:
        return scheme.resolve(relation)
    rel = (NeighbouringRelation.ADD_REMOVE if relation is None
           else NeighbouringRelation.parse(relation))
    return rel, rel


def _guess_rate(scheme) -> float:
    """The per-step rate of a scheme for first guesses only (η; the batch samplers, which have
    no per-step amplification, say their own: :attr:`guess_rate`)."""
    rate = getattr(scheme, "guess_rate", None)
    return float(scheme.eta if rate is None else rate)


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
                   report_lower: bool = True, group_size: int = 1) -> Calibration:
    """The largest Poisson sampling rate with (``target_epsilon``, δ)-DP after ``steps`` steps
    (add/remove; ``mechanism`` stated under add/remove), to a relative ``rtol``: the rate ×
    (1 + ``rtol``) is infeasible unless the rate is 1; ``group_size`` as for
    :func:`calibrate_sigma`."""
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    steps = check_int("steps", steps, "[1, inf)")
    k = _group(group_size)
    rtol = check_real("rtol", rtol, "(0, 0.5]")
    cache = _new_cache()

    def build(rate, coarse=False):
        acc = (Accountant(backend, upper_error=_COARSE_ERROR * target) if coarse
               else Accountant(backend, cache=cache))
        return acc.add(mechanism, steps, scheme=Poisson(rate), group_size=k)

    def evaluate(rate):
        return build(rate).epsilon(delta, lower=False).upper

    def evaluate_coarse(rate):
        return build(rate, coarse=True).epsilon(delta, lower=False).upper

    # first guess: the CLT of subsampled Gaussians, q = μ / √(T (e^{1/z²} − 1))
    z = _noise_multiplier(mechanism)
    guess = (_gdp_mu(target, delta) / math.sqrt(steps * _expm1_inv_sq(z)) if z is not None
             else target / math.sqrt(steps))
    out = _search(evaluate, parameter="rate", target_epsilon=target, increasing=True,
                  lo=1e-9, hi=1.0, rtol=rtol, guess=min(1.0, guess / k),
                  coarse=evaluate_coarse if backend == "pld" else None, slope=1.0)
    return _finish("rate", out.value, out, build, target, delta, backend, report_lower, k)


def calibrate_steps(target_epsilon: float, delta: float, *, mechanism: Mechanism,
                    scheme: SamplingScheme | None = None,
                    relation: NeighbouringRelation | str | None = None,
                    max_steps: int = 10**9, backend: str = "pld",
                    report_lower: bool = True, group_size: int = 1) -> Calibration:
    """The largest number of steps with (``target_epsilon``, δ)-DP: one more step is
    infeasible (unless the result is ``max_steps``); ``group_size`` as for
    :func:`calibrate_sigma`."""
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    k = _group(group_size)
    max_steps = check_int("max_steps", max_steps, "[1, inf)")
    cache = _new_cache()

    # accuracy relative to the target, not to ε(t): far below the target (10^7 steps of tiny
    # losses) a relative target would ask for grids beyond the memory bound, which would count
    # as infeasible; 1e-5 of the target still decides "≤ target" to that precision. The final
    # bracket uses the same grid, so it reuses the search's composition at the result.
    coarse_cache = _new_cache()

    def build(t, error=1e-5):
        pld = backend == "pld"
        if error == 1e-5:
            acc = Accountant(backend, upper_error=error * target if pld else None, cache=cache)
        else:  # coarse trials share the pair curves, step ranges and discretised steps
            acc = Accountant(backend, upper_error=error * target, cache=coarse_cache,
                             shared_grid=True)
        return acc.add(mechanism, int(t), scheme=scheme, relation=relation, group_size=k)

    def evaluate(t):
        return build(t).epsilon(delta, lower=False).upper

    def evaluate_coarse(t):
        return build(t, _COARSE_ERROR).epsilon(delta, lower=False).upper

    out = StepSearch(evaluate, evaluate_coarse if backend == "pld" else None, target=target,
                     guess=max(1.0, guess_steps(target, delta, mechanism, scheme) / k ** 2),
                     max_steps=max_steps).refine()
    return _finish("steps", int(out.value), out, build, target, delta, backend, report_lower,
                   k)


def guess_steps(target: float, delta: float, mechanism: Mechanism,
                scheme: SamplingScheme | None) -> float:
    """A first guess of the number of steps with ε(δ) = ``target``, for starting a search only
    (it decides nothing): the CLT of subsampled Gaussians, T = (μ / η)² / (e^{1/z²} − 1), or
    T = (μ z)² without subsampling; 1 for mechanisms without a noise parameter."""
    z = _noise_multiplier(mechanism)
    if z is None:
        return 1.0
    mu = _gdp_mu(target, delta)
    # in logarithms, saturating: an absurd target (ε = 1e308) must not overflow a guess
    log_t = (2 * math.log(mu * z) if scheme is None
             else 2 * (math.log(mu) - math.log(_guess_rate(scheme)))
             - math.log(_expm1_inv_sq(z)))
    return math.exp(min(log_t, 700.0))


class StepSearch:
    """The integer search of :func:`calibrate_steps` in two halves, for a caller that can act
    on the cheap half first (:class:`privamp.filter.PrivacyFilter`).

    ``evaluate(t)`` and ``coarse(t)`` are certified upper ε of t steps (non-decreasing in t;
    ``coarse`` cheaper and coarser, or ``None``). Constructing the object runs the coarse
    phase: :attr:`certain` is then a count whose *coarse* certified upper ε is at most
    ``target`` (a certified bound too: any count up to it is within the target), near the
    boundary (module docstring; with ``early``, the phase stops at the first such count whose
    ε is within a factor e^-early of the target), or 0 when none was found. :meth:`refine`
    runs the fine phase once: the largest t in [1, ``max_steps``] with ``evaluate(t)`` ≤
    ``target``, with ``t + 1`` evaluated and found infeasible unless t is ``max_steps``; it
    raises :class:`UnreachableTargetError` when even t = 1 is infeasible.
    """

    def __init__(self, evaluate: Callable[[int], float], coarse: Callable[[int], float] | None,
                 *, target: float, guess: float, max_steps: int, early: float | None = None):
        self._evaluate = evaluate
        self._kw = dict(target=check_real("target_epsilon", target, "(0, inf)"), d=1.0, lo=1,
                        hi=max_steps, integer=True, rtol=1e-5, slope=0.5,
                        max_step=math.log(64.0))
        self._start = (int(round(min(max(guess, 1.0), float(max_steps))))
                       if math.isfinite(guess) else int(max_steps))
        self._cs: _Search | None = None
        if coarse is not None:
            kw = self._kw
            self._cs = _Search(coarse, kw["target"], 1.0, 1, max_steps, True, kw["rtol"],
                               kw["slope"], max_step=kw["max_step"])
            if early is None:
                stop = _coarse_done
            else:  # any certified count within ``early`` of the target (in log ε) will do
                def stop(s: _Search) -> bool:
                    return _coarse_done(s) or (s.F is not None and s.F.g >= -early)
            self._cs.run(self._start, stop)
        self._outcome: _Outcome | None = None

    @property
    def certain(self) -> int:
        """A count certified within the target by the coarse phase (0 if none was found)."""
        cs = self._cs
        return 0 if cs is None or cs.F is None else int(cs.F.value)

    def refine(self) -> _Outcome:
        """The fine phase's outcome (computed once; the coarse phase is first run to its end
        when it was stopped early)."""
        if self._outcome is None:
            cs = self._cs
            if cs is None:
                c = _Coarse(self._start, [], 0, (), None)
            else:
                p = cs.F if cs.F is not None else cs.I
                cs.run(self._start if p is None else p.value, _coarse_done)
                p = cs.F if cs.F is not None else cs.I
                c = _Coarse(self._start if p is None else p.value, cs.points, cs.calls, (),
                            None if cs.F is None else cs.F.value)
            self._outcome = _fine_phase(self._evaluate, c, parameter="steps", **self._kw)
        return self._outcome


def calibrate_must(target_epsilon: float, delta: float, *, steps: int, mechanism: Mechanism,
                   n: int, kind: str = "ow", b: int | None = None, m: int | None = None,
                   backend: str = "pld", report_lower: bool = True,
                   group_size: int = 1) -> Calibration:
    """The largest MUST size — ``b`` (first-stage size) given ``m``, or ``m`` (second-stage size)
    given ``b`` — with (``target_epsilon``, δ)-DP after ``steps`` steps (substitution).

    ε grows with m. It is not monotone in b (small b means many copies of a record in the
    subsample, large b a larger η): for b the result is the largest feasible value found by a
    geometric scan from n downwards refined between the first feasible grid value and the one
    above it — certified feasible, with b + 1 infeasible (or b = n). ``group_size`` as for
    :func:`calibrate_sigma`.
    """
    target, delta, backend = _check_common(target_epsilon, delta, backend)
    k = _group(group_size)
    steps = check_int("steps", steps, "[1, inf)")
    n = check_int("n", n, "[1, inf)")
    kind = check_choice("kind", kind, ("ow", "wo", "ww"))
    cls = SCHEMES[f"must-{kind}"]
    if (b is None) == (m is None):
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

    cache = _new_cache()

    def build(v, coarse=False):
        acc = (Accountant(backend, upper_error=_COARSE_ERROR * target) if coarse
               else Accountant(backend, cache=cache))
        return acc.add(mechanism, steps, scheme=scheme_at(v), group_size=k)

    def evaluate(v):
        return build(v).epsilon(delta, lower=False).upper

    def evaluate_coarse(v):
        return build(v, coarse=True).epsilon(delta, lower=False).upper

    coarse = evaluate_coarse if backend == "pld" else None
    if parameter == "m":
        # first guess: the CLT's η = μ / √(T (e^{1/z²} − 1)), and η about linear in m
        z = _noise_multiplier(mechanism)
        guess = None
        if z is not None:
            eta1 = float(scheme_at(1).eta)
            if eta1 > 0:
                guess = _gdp_mu(target, delta) / math.sqrt(steps * _expm1_inv_sq(z)) / eta1
        out = _search(evaluate, parameter="m", target_epsilon=target, increasing=True, lo=1,
                      hi=hi, integer=True, guess=None if guess is None else min(hi, guess),
                      coarse=coarse, slope=1.0)
        return _finish("m", int(out.value), out, build, target, delta, backend, report_lower, k)
    # ε is not monotone in b: a small first stage puts many copies of one record into the
    # subsample (MUST.OW/WW), a large one raises η. Scan a geometric grid of b from n down
    # (coarsely: a coarse upper ε at most target is feasible), stop at the first feasible value
    # and refine between it and the grid value above it, where ε rises with b.
    lo_b = m if kind == "wo" else 1
    grid = sorted({int(round(v)) for v in np.geomspace(lo_b, n, 12)} | {lo_b, n})
    scan = coarse if coarse is not None else evaluate
    scanned = 0
    above = None  # (b, ε) of the grid value above the current one, by ``scan``
    for v in reversed(grid):
        scanned += 1
        try:
            eps = float(scan(v))
        except InconsistentBoundsError:  # a defect, never "infeasible"
            raise
        except NumericalError:
            eps = math.inf
        if eps > target:
            above = (v, eps)
            continue
        try:
            out = _search(evaluate, parameter="b", target_epsilon=target, increasing=True,
                          lo=v, hi=v if above is None else above[0], integer=True, guess=v,
                          coarse=coarse, slope=1.0,
                          known=[(v, eps)] + ([] if above is None or above[1] is None
                                              else [above]))
        except UnreachableTargetError:
            # the coarse grid was the tighter one at v (rare): v is infeasible after all;
            # go on down the grid (v bounds the refinement; its coarse ε is not a bound there)
            above = (v, None)
            continue
        if coarse is None:
            out = _Outcome(out.value, out.eps, out.fine + scanned, out.coarse)
        else:
            out = _Outcome(out.value, out.eps, out.fine, out.coarse + scanned)
        return _finish("b", int(out.value), out, build, target, delta, backend, report_lower, k)
    raise UnreachableTargetError(
        "target_epsilon", f"reachable: no first-stage size b in [{lo_b}, {n}] on a "
        f"geometric grid of {len(grid)} values gives ε ≤ the target", target)


# ---- attack risk (issue 20) ---------------------------------------------------------------


@dataclass(frozen=True)
class RiskCalibration:
    """The calibrated noise ``value`` meeting an attack-risk target: the best attack's
    certified TPR at ``fpr`` (``target="tpr"``) or its certified advantage
    (``target="advantage"``) is ``achieved`` ≤ ``target_value``; ``achieved_lower`` is the
    lower end of the same bracket."""

    parameter: str
    value: float
    target: str
    target_value: float
    achieved: float
    achieved_lower: float | None
    fpr: float | None
    evaluations: int
    group_size: int = 1


def calibrate_sigma_risk(*, steps: int, tpr: float | None = None, fpr: float | None = None,
                         advantage: float | None = None, scheme: SamplingScheme | None = None,
                         sensitivity: float = 1.0,
                         relation: NeighbouringRelation | str | None = None,
                         mechanism: str | type[Mechanism] = "gaussian",
                         rtol: float = 1e-4, group_size: int = 1) -> RiskCalibration:
    """The smallest noise (σ, or the Laplace scale) at which the best membership-inference
    attack on ``steps`` composed steps (on ``scheme``'s subsamples) has a certified
    true-positive rate at most ``tpr`` at false-positive rate ``fpr``, or a certified advantage
    (max TPR − FPR = δ(0)) at most ``advantage`` — the attack-risk targets of riskcal
    (Kulynych et al. 2024) with privamp's certified trade-off curves
    (:meth:`Accountant.tradeoff`).

    The same safeguarded monotone search as :func:`calibrate_sigma`, on the certified upper
    TPR (or advantage), which falls as the noise grows: the returned noise meets the target,
    and the noise × (1 − ``rtol``) does not (unless it is below the search range).
    """
    steps = check_int("steps", steps, "[1, inf)")
    k = _group(group_size)
    sens = check_real("sensitivity", sensitivity, "(0, inf)")
    rtol = check_real("rtol", rtol, "(0, 0.5]")
    if (tpr is None) == (advantage is None):
        raise InvalidParameterError("target", "exactly one of tpr (with fpr) and advantage",
                                    {"tpr": tpr, "advantage": advantage})
    from scipy.special import ndtri

    if tpr is not None:
        if fpr is None:
            raise InvalidParameterError("fpr", "a false-positive rate in (0, 1) with tpr", fpr)
        fpr = check_real("fpr", fpr, "(0, 1)")
        target = check_real("tpr", tpr, f"({fpr!r}, 1)")  # the best attack has TPR ≥ FPR
        mu = float(ndtri(target) - ndtri(fpr))
    else:
        if fpr is not None:
            raise InvalidParameterError("fpr", "not given with advantage (it has no FPR)", fpr)
        target = check_real("advantage", advantage, "(0, 1)")
        mu = 2.0 * float(ndtri((1.0 + target) / 2.0))  # advantage of μ-GDP: 2Φ(μ/2) − 1
    cls = _noise_class(mechanism)
    outer, base_rel = _relations(scheme, relation)
    cache = _new_cache()

    def build(noise):
        mech = cls.from_params(base_rel, **{cls.noise: noise, "sensitivity": sens})
        return Accountant("pld", cache=cache).add(
            mech, steps, scheme=scheme, relation=outer if scheme is not None else None,
            group_size=k)

    def bracket(noise):
        acc = build(noise)
        return acc.tpr(fpr) if tpr is not None else acc.advantage()

    def evaluate(noise):
        try:
            return bracket(noise).upper
        except NumericalError:  # beyond the memory bound: far on the wrong side
            return math.inf

    eta = None if scheme is None else _guess_rate(scheme)
    guess = k * sens * _guess_noise(max(mu, 1e-6), steps, eta)
    try:
        out = _search(evaluate, parameter=cls.noise, target_epsilon=target, increasing=False,
                      lo=sens * 1e-3, hi=sens * 1e6, rtol=rtol,
                      guess=max(guess, sens * 1e-2), slope=-1.0)
    except UnreachableTargetError as exc:  # name the target the caller gave, not ε
        name = "tpr" if tpr is not None else "advantage"
        raise UnreachableTargetError(
            name, f"reachable: even {cls.noise} = {sens * 1e6:g} (the search's most private "
            f"end) gives a larger certified {name}", target) from exc
    final = bracket(out.value)
    return RiskCalibration(cls.noise, out.value, "tpr" if tpr is not None else "advantage",
                           target, min(out.eps, final.upper), final.lower, fpr,
                           out.fine + out.coarse + 1, k)
