"""What every answer must satisfy, and the independent reference each case has (if any)."""

from __future__ import annotations

import math

from conformance import references as ref
from privamp.accountant import Accountant
from privamp.errors import InconsistentBoundsError, PrivampError
from privamp.results import Bracket

#: relative slack for comparing privamp's floats with 50-digit references rounded to floats
ROUND = 8 * 2.0**-52


def query(mech, scheme, relation, steps, backend, *, delta=None, eps=None):
    """The bracket of one query, or the typed refusal (a PrivampError instance)."""
    try:
        acc = Accountant(backend).add(mech, steps, scheme=scheme,
                                      relation=relation if scheme is not None else None)
        return acc.epsilon(delta) if delta is not None else acc.delta(eps)
    except InconsistentBoundsError:
        # privamp's own safety net (a lower end above the upper end) refuses rather than print
        # a wrong number, but it is a defect: with the rate-1 fix reverted, most rate-1
        # Gaussian cases end here, not in a wrong bracket
        raise
    except PrivampError as exc:  # a clean refusal is an answer; any other exception fails
        return exc


def assert_valid(b) -> None:
    """A bracket: no NaN, lower ≤ upper (Bracket checks both), an upper end ≥ 0."""
    assert isinstance(b, Bracket)
    assert b.upper >= 0 and not math.isnan(b.upper)
    if b.lower is not None:
        assert 0 <= b.lower <= b.upper


def assert_contains(b: Bracket, exact: float, *, upper_only: bool = False) -> None:
    """The reference lies in the bracket (the upper end is never below the truth)."""
    if math.isinf(exact):
        assert math.isinf(b.upper)
        return
    assert b.upper >= exact * (1 - ROUND) - 1e-300, (b, exact)
    if b.lower is not None and not upper_only:
        assert b.lower <= exact * (1 + ROUND) + 1e-300, (b, exact)


def overlap(a: Bracket, b: Bracket) -> bool:
    """Two brackets of the same exact value must overlap."""
    lo_a = -math.inf if a.lower is None else a.lower
    lo_b = -math.inf if b.lower is None else b.lower
    return lo_a <= b.upper * (1 + ROUND) + 1e-300 and lo_b <= a.upper * (1 + ROUND) + 1e-300


def exact_epsilon(mech, scheme, relation, steps, delta):
    """An exact ε(δ) of the composition of the pairs privamp composes, where one is known
    independently: μ-GDP for Gaussian noise without subsampling (or a scheme that reduces to
    none), the binomial law of two-point pairs (randomized response without subsampling or with
    Poisson), and the T = 1 profile formulas. ``None`` otherwise."""
    reduced = scheme.reduced() if scheme is not None else None
    theta = ref.gaussian_family_theta(mech)
    if theta is not None and reduced is None:
        return float(ref.gdp_epsilon(ref.mpmath.sqrt(steps) * theta, delta))
    name = getattr(mech, "registry_name", "")
    if name in ("randomized-response", "randomized-membership") and 0 < mech.p < 1 and (
            scheme is None or (scheme.kind == "poisson" and relation.value == "add-remove")):
        pair = ref.rr_pair(ref.mpmath.log(ref.mpmath.mpf(mech.p) / (1 - ref.mpmath.mpf(mech.p))))
        pairs = {"pair": pair} if scheme is None else ref.poisson_pairs(pair, scheme.rate)
        return ref.binary_composition_epsilon(pairs, steps, delta)
    if getattr(scheme, "pld_only", False):
        return None   # the batch samplers: no per-step profile formula (their own tests)
    if steps == 1:
        profile_is_curve = not (scheme is not None and scheme.kind == "poisson"
                                and relation.value == "substitute")
        if profile_is_curve:
            return ref.one_step_epsilon(mech, scheme, relation, delta)
    return None


def exact_delta(mech, scheme, steps, eps):
    """μ-GDP δ(ε) where it applies, else None."""
    reduced = scheme.reduced() if scheme is not None else None
    theta = ref.gaussian_family_theta(mech)
    if theta is not None and reduced is None:
        return float(ref.gdp_delta(ref.mpmath.sqrt(steps) * theta, eps))
    return None
