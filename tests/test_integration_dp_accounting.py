"""privamp.integrations.dp_accounting against the real dp_accounting library.

* Agreement with dp_accounting's PLD accountant on every event both account (Gaussian, Laplace,
  randomized response, Poisson-subsampled Gaussian and Laplace, compositions), over a grid of
  parameters: dp_accounting's ε must lie in privamp's certified bracket widened by
  dp_accounting's own discretisation tolerance (see :func:`_dp_tolerance`).
* Tighter than dp_accounting's RDP accountant on sampling without replacement; sampling with
  replacement, which dp_accounting refuses, accounted with a certified bracket.
* The conversions checked against independent references (mpmath for the composed Gaussian
  and for k-ary randomized response, the ledger's structure for nested events).
* Every refusal names the event (or the missing argument); ``supports`` agrees with
  ``compose``; ``calibrate_dp_mechanism`` with :class:`PrivampAccountant` never overshoots.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.mechanism_calibration import calibrate_dp_mechanism
from dp_accounting.pld import PLDAccountant
from dp_accounting.privacy_accountant import UnsupportedEventError
from dp_accounting.rdp import RdpAccountant

from privamp import InvalidParameterError, UnsupportedCombinationError
from privamp.accountant import Accountant
from privamp.integrations.dp_accounting import (
    PrivampAccountant,
    UnsupportedDpEventError,
    add_dp_event,
    from_dp_event,
)
from privamp.mechanisms import GaussianMechanism
from privamp.sampling import MustOW, MustWO, Poisson, StageChain, WithoutReplacement

ROOT = Path(__file__).resolve().parents[1]
ADD = NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE = NeighboringRelation.REPLACE_ONE
E = dp_event
DELTAS = (1e-5, 1e-8)

#: dp_accounting's PLDAccountant default grid step of the privacy loss
DP_INTERVAL = 1e-4


def _dp_tolerance(pmf_compositions: int) -> float:
    """How far dp_accounting's ε may be from the exact ε of the pair it discretises.

    Its connect-the-dots discretisation (Doroshenko et al. 2022) puts each composed privacy
    loss distribution on a grid of step ``DP_INTERVAL``: a loss moves by less than one step, so
    the composition of N discretised distributions has its losses within N steps of the exact
    ones and its ε(δ) within N·``DP_INTERVAL`` of the exact ε (its truncated tail, e^-50 of mass
    per distribution, is counted at infinite loss and changes δ by far less than the δ's here).
    N is the number of discretised distributions it composes (a self-composed Gaussian without
    sampling is one distribution of standard deviation z/sqrt(count)).
    """
    return pmf_compositions * DP_INTERVAL


def _gaussian(z, count=1):
    return E.SelfComposedDpEvent(E.GaussianDpEvent(z), count)


def _poisson(q, event, count):
    return E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, event), count)


# (event, relation, replace_one_sensitivity, number of PLDs dp_accounting discretises)
AGREEMENT = (
    [(_gaussian(z, c), ADD, None, 1) for z, c in itertools.product((0.8, 2.0, 5.0), (1, 10))]
    + [(_gaussian(z, c), REPLACE, 2.0, 1) for z, c in itertools.product((1.0, 4.0), (1, 10))]
    + [(E.SelfComposedDpEvent(E.LaplaceDpEvent(b), c), ADD, None, c)
       for b, c in itertools.product((1.0, 3.0), (1, 5))]
    + [(E.SelfComposedDpEvent(E.RandomizedResponseDpEvent(p, k), c), REPLACE, None, c)
       for p, k, c in itertools.product((0.2, 0.7), (2, 5), (1, 4))]
    + [(_poisson(q, E.GaussianDpEvent(z), c), ADD, None, c)
       for q, z, c in itertools.product((0.01, 0.1), (0.8, 1.5), (10, 200))]
    + [(_poisson(0.05, E.LaplaceDpEvent(2.0), 50), ADD, None, 50)]
    + [(E.ComposedDpEvent([_poisson(0.02, E.GaussianDpEvent(1.0), 100), _gaussian(6.0, 3),
                           E.LaplaceDpEvent(10.0), E.NoOpDpEvent()]), ADD, None, 102)]
)


def _for_dp_accounting(event):
    """dp_accounting's PLDAccountant composes a RandomizedResponseDpEvent once whatever its
    count (dp_accounting 0.6.0, pld_privacy_accountant.py: the count is unused in that
    branch), so a self-composed one is given to it as the list of its copies."""
    if isinstance(event, E.SelfComposedDpEvent) and isinstance(event.event,
                                                               E.RandomizedResponseDpEvent):
        return E.ComposedDpEvent([event.event] * event.count)
    return event


@pytest.mark.parametrize("case", AGREEMENT, ids=lambda c: repr(c[0])[:60])
def test_agrees_with_dp_accounting_pld(case):
    event, relation, sensitivity, n_pmfs = case
    ours = PrivampAccountant(relation, replace_one_sensitivity=sensitivity).compose(event)
    theirs = PLDAccountant(relation).compose(_for_dp_accounting(event))
    tol = _dp_tolerance(n_pmfs)
    for delta in DELTAS:
        bracket = ours.epsilon_bracket(delta)
        eps = theirs.get_epsilon(delta)
        assert bracket.lower - tol <= eps <= bracket.upper + tol, (delta, bracket, eps, tol)
        assert ours.get_epsilon(delta) == bracket.upper
        # the bracket is certified: δ at the reported ε is at most δ (lower end of its bracket)
        assert ours.delta_bracket(bracket.upper).lower <= delta * (1 + 1e-9)


# every (n, rate, z), with 100 and 1000 steps alternating over them (each z meets both)
WOR_GRID = [(n, rate, z, steps) for (n, rate, z), steps in zip(
    itertools.product((1_000, 60_000), (0.001, 0.01, 0.1), (0.8, 2.0)),
    itertools.cycle((100, 100, 1000, 1000)))]


@pytest.mark.parametrize("n, rate, z, steps", WOR_GRID)
def test_tighter_than_dp_accounting_rdp_without_replacement(n, rate, z, steps):
    m = max(1, round(rate * n))
    event = E.SelfComposedDpEvent(
        E.SampledWithoutReplacementDpEvent(n, m, E.GaussianDpEvent(z)), steps)
    # dp_accounting's RDP accountant reads z relative to the replace-one sensitivity: 1.0
    theirs = RdpAccountant(neighboring_relation=REPLACE).compose(event).get_epsilon(1e-5)
    assert not PLDAccountant(REPLACE).supports(event)  # no PLD accounting for WOR there
    ours = from_dp_event(event, neighboring_relation=REPLACE, replace_one_sensitivity=1.0)
    assert ours.events[0].scheme == WithoutReplacement(n, m)
    assert ours.epsilon(1e-5).upper < theirs


@pytest.mark.parametrize("n, m, z, relation", [(1_000, 10, 1.0, ADD), (10_000, 100, 2.0, REPLACE),
                                               (500, 500, 4.0, REPLACE)])
def test_with_replacement_refused_by_dp_accounting_certified_here(n, m, z, relation):
    event = E.SelfComposedDpEvent(E.SampledWithReplacementDpEvent(n, m, E.GaussianDpEvent(z)),
                                  200)
    assert not RdpAccountant(neighboring_relation=relation).supports(event)
    assert not PLDAccountant(relation).supports(event)
    acc = PrivampAccountant(relation, replace_one_sensitivity=2.0).compose(event)
    bracket = acc.epsilon_bracket(1e-5)
    assert 0 < bracket.lower <= bracket.upper < math.inf


# ---- the conversions against independent references -----------------------------------------


@pytest.mark.parametrize("zs", [(1.0, 1.0), (0.7, 3.0, 11.0), (2.5,), (1e-3, 1e3)])
@pytest.mark.parametrize("count", [1, 7])
def test_gaussians_on_one_sample_are_one_gaussian(zs, count):
    """Dong, Roth, Su 2022, Corollary 3.3: θ² = Σ count·θᵢ², checked in 50-digit mpmath; the
    noise multiplier is on the safe side (never above the exact one) and within 1e-14."""
    inner = E.ComposedDpEvent([E.SelfComposedDpEvent(E.GaussianDpEvent(z), count) for z in zs])
    acc = from_dp_event(E.PoissonSampledDpEvent(0.1, inner))
    (line,) = acc.events
    with mpmath.workdps(50):
        exact = 1 / mpmath.sqrt(mpmath.fsum(count / mpmath.mpf(z) ** 2 for z in zs))
        assert line.mechanism.sigma <= exact
        assert abs(line.mechanism.sigma / exact - 1) < 1e-14
    assert line.mechanism.sensitivity == 1.0 and line.scheme == Poisson(0.1)


@pytest.mark.parametrize("p", [1e-6, 0.05, 0.5, 0.99, 1 - 1e-9])
@pytest.mark.parametrize("k", [2, 3, 10, 1000])
def test_randomized_response_profile(p, k):
    """δ(ε) of k-ary randomized response under REPLACE_ONE is [a − e^ε b]_+ with
    a = 1 − p + p/k, b = p/k (pair x → x'): the converted mechanism is never below it (mpmath)
    and within 1e-12 of it."""
    acc = from_dp_event(E.RandomizedResponseDpEvent(p, k), neighboring_relation=REPLACE)
    profile = acc.events[0].mechanism.profile()
    with mpmath.workdps(40):
        a = 1 - mpmath.mpf(p) + mpmath.mpf(p) / k
        b = mpmath.mpf(p) / k
        pure = mpmath.log(a / b)
        for eps in [0.0, 0.01, 0.5, 2.0, float(pure) * 0.999]:
            exact = max(mpmath.mpf(0), a - mpmath.exp(eps) * b)
            got = float(profile.delta(eps))
            assert got >= exact * (1 - 1e-15)
            assert got >= exact  # never below, not even by a rounding
            assert got <= exact + 1e-12 * max(1, exact)


def test_self_composition_is_one_line_with_its_count():
    event = E.SelfComposedDpEvent(E.SelfComposedDpEvent(
        E.PoissonSampledDpEvent(0.001, E.GaussianDpEvent(1.0)), 1000), 1000)
    acc = from_dp_event(event)
    assert [ev.count for ev in acc.events] == [10 ** 6]
    ours = PrivampAccountant().compose(event, 3)
    assert [ev.count for ev in ours.accountant.events] == [3 * 10 ** 6]


def test_compositions_flatten_and_equal_separate_adds():
    event = E.ComposedDpEvent([_gaussian(2.0, 3), E.NoOpDpEvent(),
                               E.ComposedDpEvent([_poisson(0.1, E.GaussianDpEvent(1.0), 5)])])
    acc = from_dp_event(event)
    direct = (Accountant().add(GaussianMechanism(2.0), 3)
              .add(GaussianMechanism(1.0), 5, scheme=Poisson(0.1)))
    assert acc.events == direct.events
    assert acc.epsilon(1e-6) == direct.epsilon(1e-6)
    add_dp_event(acc, E.GaussianDpEvent(2.0), 2)  # the same event again: its line grows
    assert [ev.count for ev in acc.events] == [5, 5]


@pytest.mark.parametrize("stages, expected", [
    ([("wor", 1000, 500), ("wor", 500, 50)], WithoutReplacement(1000, 50)),
    ([("wor", 1000, 500), ("wr", 500, 50)], MustOW(1000, 500, 50)),
    ([("wr", 1000, 500), ("wor", 500, 50)], MustWO(1000, 500, 50)),
    ([("wr", 1000, 500), ("wr", 500, 50)], StageChain(1000, [("wr", 500), ("wr", 50)])),
    ([("wor", 100, 80), ("wr", 80, 60), ("wor", 60, 60)],
     StageChain(100, [("wor", 80), ("wr", 60), ("wor", 60)])),
])
def test_nested_fixed_size_sampling_is_a_stage_chain(stages, expected):
    event = E.GaussianDpEvent(3.0)
    for kind, n, m in reversed(stages):
        cls = (E.SampledWithoutReplacementDpEvent if kind == "wor"
               else E.SampledWithReplacementDpEvent)
        event = cls(n, m, event)
    acc = from_dp_event(event, neighboring_relation=REPLACE, replace_one_sensitivity=2.0)
    assert acc.events[0].scheme == expected


@pytest.mark.parametrize("q1, q2", [(0.1, 0.3), (1.0, 0.01), (1 / 3, 1 / 7)])
def test_nested_poisson_rate_is_the_product_rounded_up(q1, q2):
    event = E.PoissonSampledDpEvent(q1, E.PoissonSampledDpEvent(q2, E.GaussianDpEvent(1.0)))
    rate = from_dp_event(event).events[0].scheme.rate
    with mpmath.workdps(40):
        exact = mpmath.mpf(q1) * mpmath.mpf(q2)
        assert exact <= rate <= exact * (1 + 1e-15)


@pytest.mark.parametrize("event", [
    E.NoOpDpEvent(), E.PoissonSampledDpEvent(0.0, E.GaussianDpEvent(1.0)),
    E.SampledWithoutReplacementDpEvent(10, 0, E.GaussianDpEvent(1.0)),
    E.RandomizedResponseDpEvent(0.3, 1), E.RandomizedResponseDpEvent(1.0, 4),
    E.SelfComposedDpEvent(E.GaussianDpEvent(1.0), 0),
    E.ComposedDpEvent([]),
])
def test_events_without_privacy_cost(event):
    assert from_dp_event(event, neighboring_relation=REPLACE).events == ()
    if isinstance(event, E.SelfComposedDpEvent):
        return  # dp_accounting's own ledger refuses a count of 0
    acc = PrivampAccountant(REPLACE).compose(event)
    assert acc.get_epsilon(1e-6) == 0.0 and acc.get_delta(0.0) == 0.0


def test_non_private_event_gives_infinite_epsilon_with_a_valid_lower_end():
    acc = PrivampAccountant().compose(_gaussian(1.0, 4))
    before = acc.epsilon_bracket(1e-5)
    for event in (E.NonPrivateDpEvent(), E.GaussianDpEvent(0.0),
                  E.PoissonSampledDpEvent(0.5, E.LaplaceDpEvent(0.0))):
        assert acc.supports(event)
        acc.compose(event)
        bracket = acc.epsilon_bracket(1e-5)
        assert bracket.upper == math.inf == acc.get_epsilon(1e-5)
        assert bracket.lower == before.lower and acc.get_delta(3.0) == 1.0


# ---- refusals ---------------------------------------------------------------------------------


REFUSED = [
    (E.NonPrivateDpEvent(), ADD),
    (E.UnsupportedDpEvent(), ADD),
    (E.ZCDpEvent(0.1), ADD),
    (E.SingleEpochTreeAggregationDpEvent(1.0, 10), REPLACE),
    (E.RepeatAndSelectDpEvent(E.GaussianDpEvent(1.0), 2.0, 1.0), ADD),
    (E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5]), ADD),
    (E.DiscreteLaplaceDpEvent(0.5, 1), ADD),
    (E.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 20, 1.0), REPLACE),
    (E.RandomizedResponseDpEvent(0.5, 2), ADD),
    (E.SampledWithoutReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)), ADD),
    (E.PoissonSampledDpEvent(0.1, E.ComposedDpEvent([E.LaplaceDpEvent(1.0),
                                                     E.GaussianDpEvent(1.0)])), ADD),
    (E.PoissonSampledDpEvent(0.1, E.SampledWithReplacementDpEvent(
        100, 10, E.GaussianDpEvent(1.0))), REPLACE),
    (E.SampledWithoutReplacementDpEvent(100, 10, E.SampledWithoutReplacementDpEvent(
        50, 5, E.GaussianDpEvent(1.0))), REPLACE),
]


@pytest.mark.parametrize("event, relation", REFUSED, ids=lambda v: repr(v)[:50])
def test_refusals_name_the_event(event, relation):
    kwargs = {"replace_one_sensitivity": 2.0, "dataset_size": 100}
    with pytest.raises(UnsupportedCombinationError) as info:
        from_dp_event(E.ComposedDpEvent([E.GaussianDpEvent(3.0), event]),
                      neighboring_relation=relation, **kwargs)
    assert type(event).__name__ in str(info.value)
    acc = PrivampAccountant(relation, **kwargs)
    if isinstance(event, E.NonPrivateDpEvent):  # dp_accounting's contract: ε = ∞
        assert acc.supports(event)
        return
    assert not acc.supports(event)
    with pytest.raises(UnsupportedDpEventError) as info:
        acc.compose(event)
    assert isinstance(info.value, UnsupportedEventError)  # dp_accounting's type too
    assert type(event).__name__ in str(info.value)
    assert acc.accountant.events == ()


@pytest.mark.parametrize("event, relation, argument", [
    (E.GaussianDpEvent(1.0), REPLACE, "replace_one_sensitivity"),
    (E.LaplaceDpEvent(1.0), REPLACE, "replace_one_sensitivity"),
    (E.SampledWithoutReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)), REPLACE,
     "replace_one_sensitivity"),
    # BBG Theorem 11 states the base mechanism under substitution
    (E.SampledWithReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)), ADD,
     "replace_one_sensitivity"),
    (E.PoissonSampledDpEvent(0.1, E.RandomizedResponseDpEvent(0.5, 2)), REPLACE,
     "dataset_size"),
])
def test_missing_convention_is_refused_naming_the_argument(event, relation, argument):
    with pytest.raises(InvalidParameterError) as info:
        from_dp_event(event, neighboring_relation=relation)
    assert info.value.parameter == argument
    assert type(event).__name__ in str(info.value)
    acc = PrivampAccountant(relation)
    assert not acc.supports(event)
    with pytest.raises(UnsupportedDpEventError, match=argument):
        acc.compose(event)


def test_replace_special_and_bad_arguments_are_refused():
    with pytest.raises(UnsupportedCombinationError, match="REPLACE_SPECIAL"):
        PrivampAccountant(NeighboringRelation.REPLACE_SPECIAL)
    with pytest.raises(InvalidParameterError, match="replace_one_sensitivity"):
        PrivampAccountant(REPLACE, replace_one_sensitivity=-2.0)
    with pytest.raises(InvalidParameterError, match="backend"):
        PrivampAccountant(backend="fourier")
    with pytest.raises(InvalidParameterError, match="noise_multiplier"):
        from_dp_event(E.GaussianDpEvent(-1.0))
    with pytest.raises(InvalidParameterError, match="event"):
        PrivampAccountant().compose("gaussian")


def test_sensitivity_convention_is_the_stated_one():
    """REPLACE_ONE with sensitivity 2 is dp_accounting's PLD reading (equal numbers), with 1 its
    RDP reading: the same event at half the noise under the other convention."""
    event = _gaussian(2.0, 5)
    two = from_dp_event(event, neighboring_relation=REPLACE, replace_one_sensitivity=2.0)
    one = from_dp_event(_gaussian(1.0, 5), neighboring_relation=REPLACE,
                        replace_one_sensitivity=1.0)
    assert two.epsilon(1e-6) == one.epsilon(1e-6)


def test_rdp_backend():
    event = _poisson(0.01, E.GaussianDpEvent(1.0), 1000)
    acc = PrivampAccountant(backend="rdp").compose(event)
    bracket = acc.epsilon_bracket(1e-5)
    assert bracket.lower is None
    assert PrivampAccountant().compose(event).get_epsilon(1e-5) < bracket.upper


# ---- calibration ------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("kind", ["poisson", "wor"])
def test_calibrate_dp_mechanism_never_overshoots(target, kind):
    if kind == "poisson":
        relation, sens = ADD, None

        def make_event(z):
            return _poisson(0.02, E.GaussianDpEvent(z), 200)
    else:
        relation, sens = REPLACE, 2.0

        def make_event(z):
            return E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(
                5_000, 100, E.GaussianDpEvent(z)), 200)

    z = calibrate_dp_mechanism(
        lambda: PrivampAccountant(relation, replace_one_sensitivity=sens), make_event, target,
        1e-5)
    certified = from_dp_event(make_event(z), neighboring_relation=relation,
                              replace_one_sensitivity=sens).epsilon(1e-5)
    assert certified.upper <= target
    assert certified.upper > 0.99 * target  # and not wastefully below it


# ---- packaging --------------------------------------------------------------------------------


def test_importing_privamp_does_not_import_dp_accounting():
    code = ("import sys, privamp, privamp.integrations; privamp.Accountant; "
            "assert 'dp_accounting' not in sys.modules, 'imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_example_runs():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "dp_accounting_events.py"),
                        "--small"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Poisson, add/remove" in r.stdout and "refused" in r.stdout
    assert "PrivampAccountant" in r.stdout


@pytest.mark.parametrize("zs", [[1e-160, 1e-160], [1e160, 3e159], [1e-200, 1.0, 1e200],
                                [0.5, 0.7, 3.0]])
def test_gaussians_on_one_sample_merge_safely_at_extreme_noise(zs):
    """1/sqrt(Σ 1/zᵢ²) without squares that overflow or underflow: never above the exact value
    (mpmath), within 1e-14 of it."""
    event = E.PoissonSampledDpEvent(0.01, E.ComposedDpEvent([E.GaussianDpEvent(z) for z in zs]))
    z = from_dp_event(event).events[0].mechanism.sigma
    with mpmath.workdps(50):
        exact = 1 / mpmath.sqrt(mpmath.fsum(1 / mpmath.mpf(x) ** 2 for x in zs))
        assert z <= exact and (exact - z) / exact < 1e-14


def test_gaussians_merging_beyond_doubles_are_refused_by_name():
    event = E.PoissonSampledDpEvent(0.01, E.ComposedDpEvent([E.GaussianDpEvent(1e-320),
                                                             E.GaussianDpEvent(1.0)]))
    with pytest.raises(UnsupportedCombinationError, match="PoissonSampledDpEvent"):
        from_dp_event(event)
    assert not PrivampAccountant().supports(event)


def test_truncated_poisson_event_is_the_truncated_scheme():
    """dp_accounting's truncated subsampled Gaussian maps to privamp's TruncatedPoisson; both
    accountants agree to within the brackets (privamp's bound is at or below theirs)."""
    from dp_accounting.pld import PLDAccountant

    from privamp.sampling import TruncatedPoisson

    event = E.SelfComposedDpEvent(E.TruncatedSubsampledGaussianDpEvent(4, 0.5, 2, 1.0), 3)
    acc = from_dp_event(event)
    (line,) = acc.events
    assert line.scheme == TruncatedPoisson(4, 0.5, 2) and line.count == 3
    ours = acc.epsilon(1e-3)
    theirs = PLDAccountant().compose(event).get_epsilon(1e-3)
    assert ours.upper <= theirs * (1 + 1e-3)
    assert from_dp_event(E.TruncatedSubsampledGaussianDpEvent(4, 0.0, 2, 1.0)).events == ()
