"""dp_accounting's ``DpEvent`` trees accounted by privamp (needs the ``dp_accounting`` extra).

Code written for Google's ``dp_accounting`` (TensorFlow Privacy, jax_privacy) describes what a
training run did as a tree of ``DpEvent`` objects. This module gives that tree a privamp meaning:

* :func:`from_dp_event` / :func:`add_dp_event` turn an event into ledger lines of a privamp
  :class:`~privamp.accountant.Accountant` (certified ε / δ brackets, and every sampling scheme
  privamp knows: dp_accounting has no PLD accounting for sampling with or without replacement);
* :class:`PrivampAccountant` is a ``dp_accounting.PrivacyAccountant`` backed by such an
  accountant, so it drops into code written for dp_accounting, including
  ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism`` (whose answers then never
  overshoot the target: the accountant reports certified upper ends).

Events and their meaning
------------------------
With relation ``R`` (add/remove, ``ADD_OR_REMOVE_ONE``) or ``S`` (substitution, ``REPLACE_ONE``)
on the whole dataset, and ``s`` the ``replace_one_sensitivity`` below:

=====================================  ======================================================
dp_accounting event                    privamp ledger line
=====================================  ======================================================
``GaussianDpEvent(z)``                 ``GaussianMechanism(sigma=z)``, sensitivity 1 under R,
                                       ``s`` under S
``LaplaceDpEvent(z)``                  ``LaplaceMechanism(scale=z)``, sensitivity 1 / ``s``
``RandomizedResponseDpEvent(p, k)``    the ``DiscretePairMechanism`` of buckets x → x'
                                       (x, x' and "other" when k > 2); under S only (as
                                       dp_accounting)
``NoOpDpEvent``, sampling at rate 0    nothing
``SelfComposedDpEvent(e, N)``          the lines of ``e`` with counts × N (never a loop)
``ComposedDpEvent([...])``             the lines of every member
``PoissonSampledDpEvent(q, e)``        scheme ``Poisson(q)`` (under S: ``Poisson(q, n)``,
                                       BBG Theorem 14, ``n = dataset_size``)
``SampledWithoutReplacementDpEvent``   scheme ``WithoutReplacement(n, m)`` (S only, BBG Thm 9)
``SampledWithReplacementDpEvent``      scheme ``WithReplacement(n, m)`` (BBG Thms 10, 11)
sampled events nested in sampled ones  Poisson in Poisson: ``Poisson(q₁q₂)``; fixed-size in
                                       fixed-size: the stage chain (WOR in WOR = WOR(n, m);
                                       WOR then WR = MUST.OW; WR then WOR = MUST.WO; other
                                       chains ``StageChain``)
=====================================  ======================================================

``TruncatedSubsampledGaussianDpEvent(n, q, B, z)`` is the Gaussian on the scheme
``TruncatedPoisson(n, q, B)`` (add/remove only).

The event under a sampling event is one mechanism, or a composition of Gaussian events only:
``k`` Gaussians run (adaptively) on the same subsample are one Gaussian mechanism with
θ = sqrt(Σ (Δ/zᵢ)²) (Dong, Roth, Su 2022, "Gaussian differential privacy", Corollary 3.3: the
composition of μᵢ-GDP mechanisms is sqrt(Σ μᵢ²)-GDP, with equality for Gaussian mechanisms), and
the amplification theorems apply to that mechanism. A composition of Laplace or randomized
response events under a sampling event has no such single mechanism and is refused, as are
``NonPrivateDpEvent`` (by :func:`from_dp_event`; :class:`PrivampAccountant` follows dp_accounting's
contract and reports ε = ∞), ``UnsupportedDpEvent``, ``ZCDpEvent`` (a Rényi statement, not a
mechanism: use :class:`privamp.rdp.RdpAccountant`), ``SingleEpochTreeAggregationDpEvent``,
``RepeatAndSelectDpEvent``, ``MixtureOfGaussiansDpEvent``, ``DiscreteLaplaceDpEvent``
and any other event, each by name
(:class:`~privamp.errors.UnsupportedCombinationError`). ``REPLACE_SPECIAL`` is refused: privamp's
relations are add/remove and substitution.

The replace-one sensitivity (never a default)
---------------------------------------------
A ``GaussianDpEvent``'s ``noise_multiplier`` is σ/C for values of norm at most C. Under
add/remove one value appears or disappears, so the sum moves by C: sensitivity 1 in units of C,
and dp_accounting's accountants agree. Under ``REPLACE_ONE`` they do not:

* ``PLDAccountant`` builds the Gaussian pair with means −1 and +1 (``AdjacencyType.REPLACE``:
  "the same privacy loss distribution with twice the sensitivity"): sensitivity **2**, right for
  a sum of values clipped to C (‖g − g'‖ ≤ 2C); it refuses Laplace events under ``REPLACE_ONE``;
* ``RdpAccountant`` composes ``GaussianDpEvent(z)`` as order/(2z²) and
  ``SampledWithoutReplacementDpEvent`` by Wang, Balle, Kasiviswanathan 2019, Theorem 27 with unit
  sensitivity whatever the relation: sensitivity **1**, i.e. z is σ over the replace-one
  sensitivity itself.

The same event means a factor 2 in noise depending on the accountant. privamp asks:
``replace_one_sensitivity`` is the L2 (Gaussian) or L1 (Laplace) sensitivity under substitution
in units of the C that ``noise_multiplier`` is relative to — ``2.0`` for a clipped sum (as
dp_accounting's PLD accountant), ``1.0`` when the noise multiplier is already relative to the
replace-one sensitivity (as its RDP accountant). It is required whenever a Gaussian or Laplace
event is accounted under substitution — under ``REPLACE_ONE``, and for the base mechanism of
``SampledWithReplacementDpEvent`` under add/remove (BBG Theorem 11 states it under substitution);
omitting it then raises :class:`~privamp.errors.InvalidParameterError` naming the argument.
Randomized response needs no sensitivity (its event describes one record's bucket).

>>> from dp_accounting import dp_event
>>> event = dp_event.SelfComposedDpEvent(
...     dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 1000)
>>> acc = from_dp_event(event)
>>> acc.events[0].count, acc.events[0].scheme
(1000, Poisson(rate=0.01))
>>> b = acc.epsilon(1e-5)
>>> b.lower <= 1.8282 <= b.upper
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from ..errors import MissingDependencyError

try:
    from dp_accounting import dp_event, privacy_accountant
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("dp_accounting", "dp_accounting") from exc

from .._numerics import down_ulps, mul_up, up_ulps
from .._validation import check_int, check_optional_real, check_real
from ..accountant import Accountant, Backend
from ..errors import (
    InvalidParameterError,
    InvalidTypeError,
    PrivampError,
    UnsupportedCombinationError,
)
from ..mechanisms import (
    DiscretePairMechanism,
    GaussianMechanism,
    LaplaceMechanism,
)
from ..relations import NeighbouringRelation
from ..results import Bracket
from ..sampling.rounds import TruncatedPoisson
from ..sampling.schemes import (
    MustOW,
    MustWO,
    Poisson,
    SamplingScheme,
    StageChain,
    WithoutReplacement,
    WithReplacement,
)

__all__ = ["PrivampAccountant", "UnsupportedDpEventError", "add_dp_event", "from_dp_event",
           "relation_of"]

_DpRelation = privacy_accountant.NeighboringRelation
R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE

_SENSITIVITY_RULE = (
    "a real number in (0, inf) when {what} is accounted under substitution: the replace-one "
    "sensitivity in units of the norm bound C its noise_multiplier is relative to (2.0 for a "
    "sum clipped to C, as dp_accounting's PLDAccountant assumes; 1.0 if noise_multiplier is "
    "relative to the replace-one sensitivity itself, as its RdpAccountant assumes)")


class UnsupportedDpEventError(UnsupportedCombinationError,
                              privacy_accountant.UnsupportedEventError):
    """A ``DpEvent`` :class:`PrivampAccountant` cannot account: both privamp's
    :class:`~privamp.errors.UnsupportedCombinationError` and dp_accounting's
    ``UnsupportedEventError``, so code catching either keeps working."""


class _NonPrivate(PrivampError):
    """Internal: the event has no finite privacy guarantee (``NonPrivateDpEvent``, zero noise)."""

    def __init__(self, event: Any, why: str):
        self.event = event
        super().__init__(f"{_name(event)} is not differentially private ({why}): no finite ε "
                         f"bounds it")


def _name(event: Any) -> str:
    text = repr(event)
    return text if len(text) <= 160 else text[:157] + "..."


def _refuse(event: Any, reason: str) -> UnsupportedCombinationError:
    err = UnsupportedCombinationError(f"privamp cannot account {_name(event)}: {reason}")
    err.event = event
    return err


def relation_of(neighboring_relation: Any) -> NeighbouringRelation:
    """privamp's relation for dp_accounting's ``NeighboringRelation`` (or a privamp relation or
    its name): ``ADD_OR_REMOVE_ONE`` → add/remove, ``REPLACE_ONE`` → substitution.
    ``REPLACE_SPECIAL`` (a record replaced by a special "zero" record) is refused.

    >>> relation_of(privacy_accountant.NeighboringRelation.REPLACE_ONE).value
    'substitute'
    """
    if isinstance(neighboring_relation, _DpRelation):
        if neighboring_relation is _DpRelation.ADD_OR_REMOVE_ONE:
            return R
        if neighboring_relation is _DpRelation.REPLACE_ONE:
            return S
        raise UnsupportedCombinationError(
            f"neighboring_relation {neighboring_relation.name} has no privamp counterpart: "
            "privamp accounts under add/remove (ADD_OR_REMOVE_ONE) and substitution "
            "(REPLACE_ONE)")
    return NeighbouringRelation.parse(neighboring_relation, name="neighboring_relation")


@dataclass(frozen=True)
class _Context:
    """How events are read: the relation on the whole dataset and the two facts a DpEvent does
    not carry (the replace-one sensitivity, the dataset size for Poisson under substitution)."""

    relation: NeighbouringRelation
    replace_one_sensitivity: float | None
    dataset_size: int | None

    @classmethod
    def build(cls, neighboring_relation, replace_one_sensitivity, dataset_size) -> _Context:
        sens = check_optional_real("replace_one_sensitivity", replace_one_sensitivity,
                                   "(0, inf)")
        n = None if dataset_size is None else check_int("dataset_size", dataset_size,
                                                        "[1, inf)")
        return cls(relation_of(neighboring_relation), sens, n)

    def sensitivity(self, relation: NeighbouringRelation, event: Any) -> float:
        """The sensitivity of an additive-noise event's query stated under ``relation``."""
        if relation is R:
            return 1.0  # noise_multiplier = σ/C, and one value of norm ≤ C comes or goes
        if self.replace_one_sensitivity is None:
            raise InvalidParameterError(
                "replace_one_sensitivity",
                _SENSITIVITY_RULE.format(what=type(event).__name__), None,
                detail=f"needed for {_name(event)}")
        return self.replace_one_sensitivity


@dataclass(frozen=True)
class _Line:
    """One ledger line: ``mechanism`` run ``count`` times on ``scheme``'s subsamples."""

    mechanism: Any
    count: int
    scheme: SamplingScheme | None


# ---- leaf mechanisms ------------------------------------------------------------------------


@functools.singledispatch
def _mechanism(event: Any, relation: NeighbouringRelation, ctx: _Context) -> Any:
    """The privamp mechanism of a leaf event stated under ``relation`` (``None``: the event has
    no privacy cost), or a refusal naming the event."""
    raise _refuse(event, _REFUSED.get(type(event).__name__, "privamp has no meaning for this "
                                      "event"))


#: refused events -> why (the other events not registered below are refused generically)
_REFUSED = {
    "UnsupportedDpEvent": "dp_accounting marks it unsupported by every accountant",
    "ZCDpEvent": ("a zCDP statement is a Rényi bound, not a mechanism privamp's Accountant can "
                  "compose (use privamp.rdp.RdpAccountant with an RdpCurve)"),
    "SingleEpochTreeAggregationDpEvent": "privamp has no tree-aggregation analysis",
    "RepeatAndSelectDpEvent": "privamp has no repeat-and-select theorem",
    "MixtureOfGaussiansDpEvent": "privamp has no mixture-of-Gaussians mechanism",
    "DiscreteLaplaceDpEvent": "privamp has no discrete Laplace mechanism",
}


@_mechanism.register
def _(event: dp_event.GaussianDpEvent, relation, ctx):
    z = check_real("noise_multiplier", event.noise_multiplier, "[0, inf)")
    if z == 0:
        raise _NonPrivate(event, "noise_multiplier 0")
    return GaussianMechanism(sigma=z, sensitivity=ctx.sensitivity(relation, event),
                             relation=relation)


@_mechanism.register
def _(event: dp_event.LaplaceDpEvent, relation, ctx):
    z = check_real("noise_multiplier", event.noise_multiplier, "[0, inf)")
    if z == 0:
        raise _NonPrivate(event, "noise_multiplier 0")
    return LaplaceMechanism(scale=z, sensitivity=ctx.sensitivity(relation, event),
                            relation=relation)


@_mechanism.register
def _(event: dp_event.RandomizedResponseDpEvent, relation, ctx):
    p = check_real("noise_parameter", event.noise_parameter, "[0, 1]")
    k = check_int("num_buckets", event.num_buckets, "[1, inf)")
    if relation is not S:
        raise _refuse(event, "randomized response changes one record's bucket: it is accounted "
                      "under substitution (REPLACE_ONE), as in dp_accounting; under add/remove "
                      "its output without the record is undefined")
    if k == 1 or p == 1:
        return None  # one bucket, or a uniformly random output: independent of the input
    if p == 0:
        raise _NonPrivate(event, "noise_parameter 0 reports the bucket")
    # the pair (input x, input x') has P = (a, b, c), Q = (b, a, c) on (x, x', other) with
    # a = 1 − p + p/k, b = p/k, c = (k − 2)p/k, so δ(ε) = [a − e^ε b]_+ for ε ≥ 0: a is rounded
    # up and b down (p/2 is exact), which only raises δ and the privacy loss log(a/b); the
    # masses then sum to 1 within a few ulp (c takes the rest)
    b = p / k if k == 2 else down_ulps(p / k, 2)
    a = min(1.0, up_ulps(1.0 - p + p / k, 4))
    if k == 2:
        return DiscretePairMechanism([a, b], [b, a], relation=relation)
    c = max(0.0, 1.0 - a - b)
    return DiscretePairMechanism([a, b, c], [b, a, c], relation=relation)


# ---- the tree -------------------------------------------------------------------------------


@functools.singledispatch
def _lines(event: Any, ctx: _Context, count: int) -> list[_Line]:
    """The ledger lines of ``event`` composed ``count`` times (a leaf: one line; composed zero
    times: none, whatever the event)."""
    if count == 0:
        return []
    mech = _mechanism(event, ctx.relation, ctx)
    return [] if mech is None else [_Line(mech, count, None)]


@_lines.register
def _(event: dp_event.NoOpDpEvent, ctx, count):
    return []


@_lines.register
def _(event: dp_event.NonPrivateDpEvent, ctx, count):
    raise _NonPrivate(event, "dp_accounting's marker of a non-private operation")


@_lines.register
def _(event: dp_event.SelfComposedDpEvent, ctx, count):
    n = check_int("count", event.count, "[0, inf)")
    return _lines(event.event, ctx, count * n)


@_lines.register
def _(event: dp_event.ComposedDpEvent, ctx, count):
    out: list[_Line] = []
    for member in event.events:
        out.extend(_lines(member, ctx, count))
    return out


@_lines.register
def _(event: dp_event.TruncatedSubsampledGaussianDpEvent, ctx, count):
    """Truncated Poisson sampling with a Gaussian sum: privamp's ``TruncatedPoisson`` scheme
    (add/remove only: its analysis conditions on the other records' count)."""
    if count == 0:
        return []
    n = check_int("dataset_size", event.dataset_size, "[0, inf)")
    q = check_real("sampling_probability", event.sampling_probability, "[0, 1]")
    b = check_int("truncated_batch_size", event.truncated_batch_size, "[0, inf)")
    if n == 0 or q == 0 or b == 0:
        return []  # an empty batch: the output does not depend on the data
    if ctx.relation is not R:
        raise UnsupportedCombinationError(
            f"{_name(event)}: privamp analyses truncated Poisson sampling under add/remove "
            "(ADD_OR_REMOVE_ONE) only")
    z = check_real("noise_multiplier", event.noise_multiplier, "[0, inf)")
    if z == 0:
        raise _NonPrivate(event, "noise_multiplier 0")
    mech = GaussianMechanism(sigma=z, sensitivity=ctx.sensitivity(R, event), relation=R)
    return [_Line(mech, count, TruncatedPoisson(n, q, b))]


_SAMPLED = (dp_event.PoissonSampledDpEvent, dp_event.SampledWithoutReplacementDpEvent,
            dp_event.SampledWithReplacementDpEvent)


@_lines.register(dp_event.PoissonSampledDpEvent)
@_lines.register(dp_event.SampledWithoutReplacementDpEvent)
@_lines.register(dp_event.SampledWithReplacementDpEvent)
def _(event, ctx, count):
    if count == 0:
        return []
    try:
        scheme, inner = _scheme(event, ctx)
        if scheme is None:
            return []  # rate 0 or an empty sample: the output does not depend on the data
        try:
            _, base_relation = scheme.resolve(ctx.relation)
        except UnsupportedCombinationError as exc:
            raise _refuse(event, str(exc)) from None
        mech = _sampled_mechanism(inner, base_relation, ctx, event)
    except InvalidParameterError as exc:  # name the sampled event, not only its member
        if exc.parameter not in ("replace_one_sensitivity", "dataset_size"):
            raise
        raise type(exc)(exc.parameter, exc.rule, exc.value,
                        detail=f"needed for {_name(event)}") from None
    return [] if mech is None else [_Line(mech, count, scheme)]


def _scheme(event: Any, ctx: _Context) -> tuple[SamplingScheme | None, Any]:
    """The scheme of a (possibly nested) sampling event and the event run on its samples."""
    if isinstance(event, dp_event.PoissonSampledDpEvent):
        rate = check_real("sampling_probability", event.sampling_probability, "[0, 1]")
        inner = event.event
        # Poisson(q₂) of a Poisson(q₁) sample keeps each record independently with probability
        # q₁q₂ (the same law); the product is rounded up, and a larger rate is never more
        # private (the smaller rate is a data-independent thinning of the larger one's sample)
        while isinstance(inner, dp_event.PoissonSampledDpEvent):
            rate = mul_up(rate, check_real("sampling_probability", inner.sampling_probability,
                                           "[0, 1]"))
            inner = inner.event
        if isinstance(inner, _SAMPLED):
            raise _refuse(event, "Poisson sampling nested with fixed-size sampling has no "
                          "privamp scheme")
        if rate == 0:
            return None, inner
        if ctx.relation is S and ctx.dataset_size is None:
            raise InvalidParameterError(
                "dataset_size", "the dataset size (an integer in [1, inf)) when Poisson "
                "sampling is accounted under substitution (REPLACE_ONE): Balle, Barthe, "
                "Gaboardi 2018, Theorem 14 depends on it", None,
                detail=f"needed for {_name(event)}")
        return Poisson(rate, n=ctx.dataset_size if ctx.relation is S else None), inner
    stages: list[tuple[str, int]] = []
    n = check_int("source_dataset_size", event.source_dataset_size, "[1, inf)")
    size_in = n
    inner = event
    while isinstance(inner, (dp_event.SampledWithoutReplacementDpEvent,
                             dp_event.SampledWithReplacementDpEvent)):
        source = check_int("source_dataset_size", inner.source_dataset_size, "[1, inf)")
        if source != size_in:
            raise _refuse(event, f"a nested sampling event draws from {source} records but the "
                          f"sample it is applied to has {size_in}")
        size = check_int("sample_size", inner.sample_size, "[0, inf)")
        kind = "wor" if isinstance(inner, dp_event.SampledWithoutReplacementDpEvent) else "wr"
        if kind == "wor" and size > source:
            raise InvalidParameterError("sample_size", f"at most source_dataset_size = "
                                        f"{source} (sampling without replacement)", size)
        if size == 0:
            return None, inner.event
        # m of a uniform b-subset without replacement is a uniform m-subset: one stage
        if kind == "wor" and stages and stages[-1][0] == "wor":
            stages[-1] = ("wor", size)
        else:
            stages.append((kind, size))
        size_in = size
        inner = inner.event
    if isinstance(inner, dp_event.PoissonSampledDpEvent):
        raise _refuse(event, "fixed-size sampling nested with Poisson sampling has no privamp "
                      "scheme")
    return _chain(n, stages), inner


def _chain(n: int, stages: list[tuple[str, int]]) -> SamplingScheme:
    """The scheme of a chain of fixed-size stages, by its tightest privamp analysis."""
    kinds = tuple(kind for kind, _ in stages)
    if kinds == ("wor",):
        return WithoutReplacement(n, stages[0][1])
    if kinds == ("wr",):
        return WithReplacement(n, stages[0][1])
    if kinds == ("wor", "wr"):
        return MustOW(n, stages[0][1], stages[1][1])  # Zhao & Liu 2023, Theorem 5(a)
    if kinds == ("wr", "wor"):
        return MustWO(n, stages[0][1], stages[1][1])  # Zhao & Liu 2023, Corollary 6
    return StageChain(n, stages)


def _gaussian_terms(event: Any, count: int, out: list[tuple[float, int]]) -> bool:
    """Collect (noise multiplier, count) of a composition made of Gaussian events only."""
    if isinstance(event, dp_event.NoOpDpEvent):
        return True
    if isinstance(event, dp_event.GaussianDpEvent):
        out.append((check_real("noise_multiplier", event.noise_multiplier, "[0, inf)"), count))
        return True
    if isinstance(event, dp_event.SelfComposedDpEvent):
        return _gaussian_terms(event.event, count * check_int("count", event.count,
                                                              "[0, inf)"), out)
    if isinstance(event, dp_event.ComposedDpEvent):
        return all(_gaussian_terms(e, count, out) for e in event.events)
    return False


def _sampled_mechanism(inner: Any, relation: NeighbouringRelation, ctx: _Context,
                       event: Any) -> Any:
    """The one mechanism run on each subsample of ``event``, stated under ``relation``."""
    if not isinstance(inner, (dp_event.SelfComposedDpEvent, dp_event.ComposedDpEvent)):
        if isinstance(inner, dp_event.NoOpDpEvent):
            return None
        return _lines_leaf(inner, relation, ctx)
    terms: list[tuple[float, int]] = []
    if not _gaussian_terms(inner, 1, terms):
        raise _refuse(event, "the event run on each sample is a composition of other than "
                      "Gaussian events: privamp amplifies one mechanism per sample (Gaussian "
                      "events compose into one Gaussian mechanism; others do not)")
    terms = [(z, c) for z, c in terms if c > 0]
    if not terms:
        return None
    if any(z == 0 for z, _ in terms):
        raise _NonPrivate(event, "a Gaussian event with noise_multiplier 0")
    # Dong, Roth, Su 2022, Corollary 3.3: Gaussians with θᵢ = Δ/zᵢ on the same sample compose to
    # the Gaussian mechanism with θ² = Σ cᵢ θᵢ², i.e. noise multiplier 1/sqrt(Σ cᵢ/zᵢ²). The
    # θᵢ are scaled by their largest, m, so that no square overflows or underflows (noise
    # multipliers of 1e-160 or 1e160): z = 1/(m·sqrt(Σ cᵢ (θᵢ/m)²)). Eight roundings of at most
    # half an ulp each (θᵢ, the ratio, its square, the product, fsum, sqrt, m·, 1/): the result
    # is lowered by 16 ulp, and a smaller noise multiplier is never more private.
    if len(terms) == 1 and terms[0][1] == 1:
        z = terms[0][0]
    else:
        z = _merged_noise_multiplier(event, terms)
    return GaussianMechanism(sigma=z, sensitivity=ctx.sensitivity(relation, inner),
                             relation=relation)


def _merged_noise_multiplier(event: Any, terms: list[tuple[float, int]]) -> float:
    """1/sqrt(Σ cᵢ/zᵢ²), rounded down (see the caller), or the event refused by name when no
    double holds it."""
    thetas = [(1.0 / zi, c) for zi, c in terms]  # Python floats: inf on overflow
    m = max(t for t, _ in thetas)
    z = 0.0
    if math.isfinite(m) and m > 0:
        total = math.fsum(c * (t / m) ** 2 for t, c in thetas)
        z = down_ulps(1.0 / (m * math.sqrt(total)), 16)
    if not (math.isfinite(z) and z > 0):
        raise _refuse(event, "its Gaussian noise multipliers compose to one outside the range "
                      "of double-precision numbers")
    return z


def _lines_leaf(inner: Any, relation: NeighbouringRelation, ctx: _Context) -> Any:
    if isinstance(inner, dp_event.NonPrivateDpEvent):
        raise _NonPrivate(inner, "dp_accounting's marker of a non-private operation")
    return _mechanism(inner, relation, ctx)


def _check_event(event: Any) -> None:
    if not isinstance(event, dp_event.DpEvent):
        raise InvalidTypeError("event", "a dp_accounting DpEvent", event)


# ---- public conversion ----------------------------------------------------------------------


def add_dp_event(accountant: Accountant, event: Any, count: int = 1, *,
                 neighboring_relation: Any = _DpRelation.ADD_OR_REMOVE_ONE,
                 replace_one_sensitivity: float | None = None,
                 dataset_size: int | None = None) -> Accountant:
    """Add ``count`` compositions of the dp_accounting ``event`` to ``accountant``; chainable.

    Parameters
    ----------
    accountant : Accountant
    event : dp_accounting.DpEvent
        The event tree (see the module docstring for what each event means).
    count : int
        Times the whole event is composed (≥ 0). A ``SelfComposedDpEvent`` of count N becomes
        one ledger line of count N, not N lines.
    neighboring_relation : dp_accounting.NeighboringRelation or privamp relation
        ``ADD_OR_REMOVE_ONE`` (dp_accounting's default) or ``REPLACE_ONE``.
    replace_one_sensitivity : float, optional
        Required when a Gaussian or Laplace event is accounted under substitution: its
        sensitivity in units of the norm bound its noise multiplier is relative to (2.0 for a
        clipped sum as dp_accounting's PLD accountant; 1.0 as its RDP accountant).
    dataset_size : int, optional
        Required for a ``PoissonSampledDpEvent`` under ``REPLACE_ONE`` (BBG Theorem 14).

    Raises
    ------
    UnsupportedCombinationError
        An event privamp cannot account, named in the message (also ``NonPrivateDpEvent``).
    InvalidParameterError
        A missing ``replace_one_sensitivity`` / ``dataset_size``, or an invalid event field.
    """
    if not isinstance(accountant, Accountant):
        raise InvalidTypeError("accountant", "a privamp Accountant", accountant)
    _check_event(event)
    count = check_int("count", count, "[0, inf)")
    ctx = _Context.build(neighboring_relation, replace_one_sensitivity, dataset_size)
    try:
        lines = _lines(event, ctx, count)
    except _NonPrivate as exc:
        raise UnsupportedCombinationError(str(exc)) from None
    for line in lines:
        accountant.add(line.mechanism, line.count, scheme=line.scheme, relation=ctx.relation)
    return accountant


def from_dp_event(event: Any, *, neighboring_relation: Any = _DpRelation.ADD_OR_REMOVE_ONE,
                  replace_one_sensitivity: float | None = None, dataset_size: int | None = None,
                  backend: Backend | str = "pld", **accountant_options: Any) -> Accountant:
    """A new privamp :class:`~privamp.accountant.Accountant` holding ``event``.

    ``backend`` and ``accountant_options`` go to :class:`~privamp.accountant.Accountant`; the
    other arguments are those of :func:`add_dp_event`. An event with no privacy cost (a
    ``NoOpDpEvent``) gives an empty ledger.
    """
    acc = Accountant(backend, **accountant_options)
    return add_dp_event(acc, event, neighboring_relation=neighboring_relation,
                        replace_one_sensitivity=replace_one_sensitivity,
                        dataset_size=dataset_size)


# ---- the PrivacyAccountant -------------------------------------------------------------------


class PrivampAccountant(privacy_accountant.PrivacyAccountant):
    """dp_accounting's ``PrivacyAccountant`` interface backed by a privamp
    :class:`~privamp.accountant.Accountant`.

    ``get_epsilon`` and ``get_delta`` return the **upper end** of privamp's certified bracket
    (a valid bound on the exact value of the composition, every discretisation and truncation
    error included; with ``backend="rdp"`` the Rényi upper bound); :meth:`epsilon_bracket` and
    :meth:`delta_bracket` give the whole bracket. So
    ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism(PrivampAccountant, ...)``
    returns a parameter whose certified ε is at most the target (it only returns parameters
    it evaluated at or below the target).

    Parameters
    ----------
    neighboring_relation : dp_accounting.NeighboringRelation
        ``ADD_OR_REMOVE_ONE`` (default, as dp_accounting) or ``REPLACE_ONE``.
    replace_one_sensitivity, dataset_size
        As in :func:`add_dp_event` (required only by the events that need them; such an event
        is then not :meth:`supports`-ed).
    backend : {"pld", "rdp"}
    **accountant_options
        Passed to :class:`~privamp.accountant.Accountant` (``eps_error``, ``cache``, ...).

    Notes
    -----
    A ``NonPrivateDpEvent`` (or a zero noise) is accepted as dp_accounting's contract asks:
    ε = ∞ and δ = 1 from then on. ``supports(event)`` is exactly whether :meth:`compose` accepts
    it; a refused event raises :class:`UnsupportedDpEventError` naming it.

    >>> from dp_accounting import dp_event
    >>> acc = PrivampAccountant().compose(dp_event.GaussianDpEvent(1.0), 10)
    >>> b = acc.epsilon_bracket(1e-5)
    >>> b.lower <= acc.get_epsilon(1e-5) == b.upper
    True
    """

    def __init__(self, neighboring_relation: Any = _DpRelation.ADD_OR_REMOVE_ONE, *,
                 replace_one_sensitivity: float | None = None, dataset_size: int | None = None,
                 backend: Backend | str = "pld", **accountant_options: Any):
        if not isinstance(neighboring_relation, _DpRelation):
            raise InvalidTypeError("neighboring_relation",
                                   "a dp_accounting NeighboringRelation", neighboring_relation)
        self._context = _Context.build(neighboring_relation, replace_one_sensitivity,
                                       dataset_size)
        backend = Backend.parse(backend)
        if backend not in (Backend.PLD, Backend.RDP):
            raise InvalidParameterError("backend", "'pld' or 'rdp'", backend.value)
        super().__init__(neighboring_relation)
        self._accountant = Accountant(backend, **accountant_options)
        self._non_private = False

    @property
    def accountant(self) -> Accountant:
        """The privamp accountant holding the composed events (read it, do not add to it)."""
        return self._accountant

    def _maybe_compose(self, event, count, do_compose):
        details = privacy_accountant.PrivacyAccountant.CompositionErrorDetails
        try:
            lines = _lines(event, self._context, count if do_compose else max(count, 1))
            if not do_compose:
                # a dry run on an empty ledger of the same backend and relation: whether every
                # line is accepted does not depend on the other lines for "pld" and "rdp"
                trial = Accountant(self._accountant.backend)
                for line in lines:
                    trial.add(line.mechanism, 1, scheme=line.scheme,
                              relation=self._context.relation)
                return None
        except _NonPrivate:
            if do_compose:
                self._non_private = True
            return None
        except PrivampError as exc:
            return details(invalid_event=getattr(exc, "event", event), error_message=str(exc))
        for line in lines:
            self._accountant.add(line.mechanism, line.count, scheme=line.scheme,
                                 relation=self._context.relation)
        return None

    def compose(self, event: Any, count: int = 1) -> PrivampAccountant:
        """Account ``count`` more compositions of ``event``; chainable (dp_accounting's API)."""
        _check_event(event)
        count = check_int("count", count, "[1, inf)")  # dp_accounting's ledger refuses 0
        try:
            return super().compose(event, count)
        except privacy_accountant.UnsupportedEventError as exc:
            raise UnsupportedDpEventError(str(exc)) from None

    def epsilon_bracket(self, target_delta: float) -> Bracket:
        """The certified bracket on ε(``target_delta``) (``lower`` ``None`` for "rdp"; what the
        lower end bounds: :attr:`Accountant.lower_end_of`)."""
        delta = check_real("target_delta", target_delta, "(0, 1]")
        if delta == 1.0:
            return Bracket(0.0, 0.0)  # every mechanism has δ(0) ≤ 1
        if self._non_private or not self._accountant.events:
            lower = (self._accountant.epsilon(delta).lower if self._accountant.events
                     else 0.0)
            # composing more mechanisms never lowers ε(δ): the rest's lower end stays valid
            return Bracket(lower, math.inf) if self._non_private else Bracket(0.0, 0.0)
        return self._accountant.epsilon(delta)

    def delta_bracket(self, target_epsilon: float) -> Bracket:
        """The certified bracket on δ(``target_epsilon``)."""
        eps = check_real("target_epsilon", target_epsilon, "[0, inf)")
        if self._non_private:
            lower = self._accountant.delta(eps).lower if self._accountant.events else 0.0
            return Bracket(lower, 1.0)
        if not self._accountant.events:
            return Bracket(0.0, 0.0)
        return self._accountant.delta(eps)

    def get_epsilon(self, target_delta: float) -> float:
        """The certified upper end of ε(``target_delta``) (∞ after a non-private event)."""
        if self._non_private:  # no need to compose the rest for its lower end
            check_real("target_delta", target_delta, "(0, 1]")
            return 0.0 if target_delta == 1.0 else math.inf
        return self.epsilon_bracket(target_delta).upper

    def get_delta(self, target_epsilon: float) -> float:
        """The certified upper end of δ(``target_epsilon``) (1 after a non-private event)."""
        return self.delta_bracket(target_epsilon).upper
