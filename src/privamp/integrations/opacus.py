"""Opacus accounting for the sampler actually used (needs the ``opacus`` extra).

Opacus accounts every run as Poisson sampling at ``sample_rate = 1/len(data_loader)``. That is
right only when Opacus's own ``DPDataLoader`` (``poisson_sampling=True``) draws the batches. With
fixed-size batches it is wrong twice: the rate is a property of the loader's length, not of the
sampler (a :class:`~privamp.applications.torch_sampler.TorchBatchSampler` of ``WOR(10000, 100)``
with 300 batches per pass is accounted at rate 1/300), and the scheme is analysed under
substitution, where the clipped sum moves by 2C, not C. For ``WOR(10000, 100)``, 300 steps,
noise multiplier 1 and δ = 1e-5, Opacus's RDP accountant reports ε ≈ 0.87; Poisson accounting at
the true rate 0.01 gives 1.07; the certified figure for those batches is 9.17.

:class:`PrivampAccountant` is an Opacus ``IAccountant`` bound to the sampler (or told the
scheme), never to the rate Opacus passes:

* **bound to a** :class:`~privamp.applications.torch_sampler.TorchBatchSampler` (or a
  ``DataLoader`` built on one): every optimizer step must have been drawn by that sampler — a
  step for which the sampler has not handed out a batch is refused (that is what happens when
  Opacus's ``poisson_sampling=True`` replaces the sampler by its own Poisson one), and so is a
  step with gradient accumulation (one noise draw over several batches is not one step of the
  scheme);
* **bound to a scheme** (:class:`~privamp.sampling.Poisson`, ``WithoutReplacement``,
  ``WithReplacement``, ``MustOW`` / ``MustWO`` / ``MustWW``, ``StageChain``): the caller asserts
  that the batches are drawn by that scheme (a shuffled ``DataLoader`` is *not* sampling without
  replacement). Checks: for Poisson(γ), a rate from Opacus above γ is refused (the batches may be
  drawn at that larger rate; ε would be under-reported) and a smaller one warned about (the
  answer is safe but loose: Poisson ε increases with the rate); for a fixed-size scheme, every
  batch reaching the optimizer must have the scheme's size m (rows, copies included) — Opacus's
  Poisson loader fails this check at the first step with probability ≈ 1 − 1/√(2πm).

Each step is recorded in Opacus's format, ``history = [(noise_multiplier, sample_rate, steps)]``
(consecutive equal steps merged), and ε is computed by privamp's
:class:`~privamp.accountant.Accountant` on the bound scheme (one event per distinct noise
multiplier: composition commutes). ``get_epsilon`` returns the certified upper end;
:meth:`PrivampAccountant.epsilon_bracket` the whole bracket.

Stopping at a budget: ``PrivampAccountant(..., budget=(ε, δ))`` (or
``PrivampPrivacyEngine(budget=...)``) answers :meth:`PrivampAccountant.can_step` before each
``optimizer.step()`` from :class:`privamp.filter.PrivacyFilter` (O(1) per step; valid for a
noise schedule fixed in advance), with :meth:`~PrivampAccountant.steps_left` and
:meth:`~PrivampAccountant.budget_left`.

Sensitivity convention (:mod:`privamp.relations`). Opacus adds ``N(0, (z·C)² I)`` to the sum of
per-example gradients clipped to norm C, where z is its ``noise_multiplier`` — z is relative to
the clipping norm C, not to the sensitivity. privamp states the Gaussian with its sensitivity
under the relation the scheme needs (:meth:`~privamp.sampling.SamplingScheme.resolve`):

* Poisson, add/remove: ``GaussianMechanism(sigma=z·C, sensitivity=C, "add-remove")``, privamp's
  noise multiplier σ/Δ = z;
* WOR, WR, MUST, chains (substitution): ``GaussianMechanism(sigma=z·C, sensitivity=2C,
  "substitute")``, privamp's noise multiplier σ/Δ = **z/2**. A record drawn k times (WR, MUST)
  moves the sum by 2kC; the amplification theorems account for the copies (group privacy).

ε does not depend on C (only the ratio σ/Δ does), so the accountant works in units of C.

Getting it into Opacus:

* :class:`PrivampPrivacyEngine` — a ``PrivacyEngine`` whose ``make_private`` binds its
  accountant to the loader's :class:`TorchBatchSampler` (and keeps Opacus from replacing it), to a
  ``scheme=`` given explicitly, or, for a plain loader with Opacus's Poisson sampling, to
  ``Poisson(1/len(data_loader))`` — exactly the rate Opacus's ``DPDataLoader`` draws at. Its
  ``make_private_with_epsilon`` calibrates the noise with :func:`privamp.calibrate.calibrate_sigma`
  (the noise multiplier returned has certified ε ≤ target).
* The registry name ``"privamp"`` (registered when this module is imported):
  ``PrivacyEngine(accountant="privamp")`` gives an unbound :class:`PrivampAccountant`; bind it
  with ``engine.accountant.bind(sampler)`` before the first step (an unbound accountant refuses
  to step). A bound accountant also registers a name of its own (``privamp[...]``, see
  :meth:`PrivampAccountant.mechanism`), so Opacus's stock ``make_private_with_epsilon``, which
  recreates the accountant by name for its noise search, searches with this scheme; that search
  returns a noise multiplier whose certified ε is ≤ the target (it keeps the feasible end of its
  bisection), but only within Opacus's ``epsilon_tolerance``.
* :func:`calibrate_noise_multiplier` — the smallest noise multiplier (to ``rtol``) certified for
  a target, for a scheme and a number of steps.

>>> from privamp.sampling import WithoutReplacement
>>> acc = PrivampAccountant(WithoutReplacement(10_000, 100))
>>> for _ in range(300):
...     acc.step(noise_multiplier=1.0, sample_rate=0.01)
>>> acc.history, len(acc)
([(1.0, 0.01, 300)], 300)
>>> round(acc.get_epsilon(1e-5), 2)      # Opacus's RDP accountant: 0.87 (at rate 1/300)
9.17
"""

from __future__ import annotations

import functools
import json
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..errors import MissingDependencyError

try:
    import torch  # noqa: F401  (opacus needs it; imported first for a clear error)
    from opacus import PrivacyEngine
    from opacus.accountants import IAccountant
    from opacus.accountants.registry import _ACCOUNTANTS, register_accountant
    from opacus.data_loader import DPDataLoader
except ImportError as exc:  # tests/test_missing_extras.py runs without each package
    # the package that is missing: torch (imported first) or opacus
    missing = "torch" if (exc.name or "").partition(".")[0] == "torch" else "opacus"
    raise MissingDependencyError(missing, "opacus") from exc

from .._state import decode_scheme, encode_scheme
from .._validation import check_int, check_real
from ..applications.torch_sampler import TorchBatchSampler
from ..errors import (
    BudgetExceededError,
    InvalidParameterError,
    InvalidTypeError,
    UnsupportedCombinationError,
)
from ..relations import NeighbouringRelation, clipped_sum_sensitivity
from ..results import Bracket
from ..sampling.schemes import SCHEMES, Poisson, SamplingScheme

__all__ = ["PrivampAccountant", "PrivampPrivacyEngine", "calibrate_noise_multiplier",
           "scheme_from_state", "scheme_state"]

#: The name under which :class:`PrivampAccountant` is registered with Opacus.
NAME = "privamp"

#: Relative tolerance when comparing Opacus's float rate ``1/len(loader)`` with a rate privamp
#: computes (both are correctly rounded quotients: equal reals give equal doubles, and any real
#: disagreement between rates of loaders of sizes below 10^8 is far above it).
_RATE_RTOL = 1e-9


# ---- schemes as plain data (for state_dict and registry names) ---------------------------------


def scheme_state(scheme: SamplingScheme) -> dict[str, Any]:
    """``scheme`` as plain data (``{"scheme": kind, <argument>: value, ...}``, arguments at
    their defaults left out): what :meth:`PrivampAccountant.state_dict` stores, inverted by
    :func:`scheme_from_state`. The encoding is the accountant's own
    (:func:`privamp._state.encode_scheme`), flattened.

    >>> from privamp.sampling import MustOW
    >>> scheme_state(MustOW(1000, 50, 20))
    {'scheme': 'must-ow', 'n': 1000, 'b': 50, 'm': 20}
    """
    if not isinstance(scheme, SamplingScheme):
        raise InvalidTypeError("scheme", "a privamp SamplingScheme", scheme)
    data = encode_scheme(scheme, "scheme")
    args = {k: v for k, v in data["args"].items()
            if v is not None and not (k == "bound" and v == "proved")}
    return {"scheme": data["kind"], **args}


def scheme_from_state(state: Any) -> SamplingScheme:
    """The scheme :func:`scheme_state` described (refuses an unknown kind or argument, naming
    it)."""
    if not isinstance(state, dict) or "scheme" not in state:
        raise InvalidParameterError("scheme", "a dict with a 'scheme' key (scheme_state's form)",
                                    state)
    values = dict(state)
    kind = values.pop("scheme")
    if kind not in SCHEMES:
        raise InvalidParameterError("scheme", "one of " + ", ".join(sorted(SCHEMES)), kind)
    return decode_scheme({"kind": kind, "args": values}, "scheme")


def _resolve_source(source: Any) -> tuple[TorchBatchSampler | None, SamplingScheme]:
    """(sampler or None, scheme) of a TorchBatchSampler, a DataLoader built on one, or a
    scheme."""
    if isinstance(source, TorchBatchSampler):
        return source, source.scheme
    if isinstance(source, SamplingScheme):
        return None, source
    inner = getattr(source, "batch_sampler", None)
    if isinstance(inner, TorchBatchSampler):
        return inner, inner.scheme
    raise InvalidTypeError("source", "a TorchBatchSampler, a DataLoader built on one, or a "
                           "privamp SamplingScheme", source)


def _step_mechanism(noise_multiplier: float, base: NeighbouringRelation):
    """The per-step Gaussian of Opacus's DP-SGD in units of the clipping norm C = 1: noise
    σ = z·C = z on a clipped sum of sensitivity C (add/remove) or 2C (substitution)."""
    from ..mechanisms.gaussian import GaussianMechanism

    return GaussianMechanism(sigma=noise_multiplier,
                             sensitivity=clipped_sum_sensitivity(1.0, base), relation=base)


class _name_of:
    """``mechanism`` works on the class (Opacus's registry name, ``"privamp"``) and on an
    instance (the name of its binding, see :meth:`PrivampAccountant.mechanism`)."""

    def __init__(self, func: Callable):
        self.func = func
        functools.update_wrapper(self, func)

    def __get__(self, obj: Any, cls: type) -> Callable[[], str]:
        return functools.partial(self.func, cls if obj is None else obj)


class PrivampAccountant(IAccountant):
    """An Opacus accountant that accounts for the scheme the batches are drawn by.

    Parameters
    ----------
    source : TorchBatchSampler, DataLoader or SamplingScheme, optional
        What to bind to (see :meth:`bind`); ``None`` leaves the accountant unbound (as
        ``PrivacyEngine(accountant="privamp")`` creates it) — it refuses to step until bound.
    relation : NeighbouringRelation or str, optional
        The relation of the guarantee (default: the scheme's natural one — add/remove for
        Poisson, substitution for the others).
    backend : {"pld", "rdp"}
        privamp's composition backend: ``"pld"`` (certified bracket, default) or ``"rdp"``
        (an upper bound only).
    budget : (float, float), optional
        A privacy budget (ε, δ): :meth:`can_step` answers whether one more step fits,
        :meth:`budget_left` what is left, and a step recorded beyond it raises
        :class:`~privamp.errors.BudgetExceededError` (after recording it: Opacus calls the
        accountant once the noise is drawn, so ask :meth:`can_step` *before*
        ``optimizer.step()``). The filter is :class:`privamp.filter.PrivacyFilter`'s
        non-adaptive one: valid when the noise multipliers are fixed in advance (a constant, or
        a schedule that does not depend on released outputs) and the budget decides only when
        training stops.
    horizon : int, optional
        ``pld``: the number of steps the run is planned to take (epochs × batches per epoch).
        The grids are then chosen for the planned run, and the ε asked after every epoch reuses
        the previous queries' discretised steps and transforms (see
        :class:`~privamp.accountant.Accountant`, ``horizon``): certified like the default,
        several times faster per query. A run longer than planned still works (the plan
        doubles).

    Attributes
    ----------
    history : list of tuples
        ``(noise_multiplier, sample_rate, steps)``, Opacus's format: the rate is the one Opacus
        reported (checked, never used for ε).
    """

    def __init__(self, source: Any = None, *, relation: NeighbouringRelation | str | None = None,
                 backend: str = "pld", budget: tuple[float, float] | None = None,
                 horizon: int | None = None):
        from ..accountant import _OWN_CACHE_BYTES, Backend
        from ..cache import AccountingCache

        self._budget = _check_budget(budget)
        self._filter = None  # the PrivacyFilter on the recorded steps (rebuilt when stale)

        self.history: list[tuple[float, float, int]] = []
        self.backend = Backend.parse(backend)
        if self.backend is Backend.FOURIER:
            raise InvalidParameterError("backend", "'pld' or 'rdp' (the Fourier accountant "
                                        "composes one kind of event only)", backend)
        self._sampler: TorchBatchSampler | None = None
        self._scheme: SamplingScheme | None = None
        self._relation: NeighbouringRelation | None = None
        self._cache: dict = {}
        self.horizon = None if horizon is None else check_int("horizon", horizon, "[1, inf)")
        # what the queries of a growing history share (steps, transforms): only time, never
        # the answer (privamp.cache)
        self._work = AccountingCache(step_bytes=_OWN_CACHE_BYTES["step"],
                                         composed_bytes=_OWN_CACHE_BYTES["composed"])
        self._steps_drawn_at_bind = 0
        if source is not None:
            self.bind(source, relation=relation)
        elif relation is not None:
            raise InvalidParameterError("relation", "given only with a source to bind to",
                                        relation)

    # ---- binding ---------------------------------------------------------------------------

    def bind(self, source: Any, *, relation: NeighbouringRelation | str | None = None
             ) -> PrivampAccountant:
        """Bind to a :class:`TorchBatchSampler` (or a ``DataLoader`` built on one) or to a
        scheme; chainable. Rebinding is allowed while no step is recorded, or to an equal
        scheme (a new sampler of the same scheme, e.g. after loading a checkpoint). Refuses a
        scheme whose bound is not proved (MUST.WW ``bound="published"``): Opacus presents ε as
        a guarantee."""
        sampler, scheme = _resolve_source(source)
        outer, _ = scheme.resolve(relation)
        if not scheme.certified:
            raise UnsupportedCombinationError(
                f"{scheme!r} rests on an unproved amplification bound; an Opacus accountant "
                "reports ε as a guarantee, so bind a scheme with a proved bound")
        if self.history and (scheme != self._scheme or outer is not self._relation):
            raise InvalidParameterError(
                "source", f"the scheme this accountant has recorded steps for ({self._scheme!r}"
                f", {self._relation.value}) while it holds steps", f"{scheme!r}, {outer.value}")
        self._sampler, self._scheme, self._relation = sampler, scheme, outer
        self._filter = None
        # steps recorded before a sampler was bound were drawn by something else
        self._steps_drawn_at_bind = len(self) - (0 if sampler is None
                                                 else sampler.batches_drawn)
        self._cache.clear()
        return self

    @property
    def sampler(self) -> TorchBatchSampler | None:
        """The bound sampler (``None`` when bound to a scheme, or unbound)."""
        return self._sampler

    @property
    def scheme(self) -> SamplingScheme | None:
        """The scheme ε is computed for (``None`` while unbound)."""
        return self._scheme

    @property
    def relation(self) -> NeighbouringRelation | None:
        """The neighbouring relation of the guarantee (``None`` while unbound)."""
        return self._relation

    @property
    def base_relation(self) -> NeighbouringRelation | None:
        """The relation the per-step Gaussian is stated under (its sensitivity C or 2C)."""
        return None if self._scheme is None else self._scheme.resolve(self._relation)[1]

    def _require_bound(self) -> SamplingScheme:
        if self._scheme is None:
            raise InvalidParameterError(
                "source", "bound before the accountant is used (accountant.bind(sampler) with "
                "the TorchBatchSampler that draws the batches, or with the SamplingScheme; "
                "or use privamp.integrations.opacus.PrivampPrivacyEngine, which binds it)", None)
        return self._scheme

    # ---- Opacus's interface ----------------------------------------------------------------

    @_name_of
    def mechanism(self_or_cls) -> str:  # a class or an instance, see _name_of
        """``"privamp"`` for the class (and an unbound accountant); for a bound accountant,
        ``privamp[<scheme as JSON>|<relation>]``, registered with Opacus so that
        ``create_accountant(accountant.mechanism())`` — what Opacus's ``get_noise_multiplier``
        does for ``make_private_with_epsilon`` — builds an accountant bound to the same scheme.
        """
        if isinstance(self_or_cls, type) or self_or_cls._scheme is None:
            return NAME
        scheme, rel = self_or_cls._scheme, self_or_cls._relation
        name = (f"{NAME}[{json.dumps(scheme_state(scheme), sort_keys=True)}|{rel.value}"
                + ("" if self_or_cls.backend.value == "pld"
                   else f"|{self_or_cls.backend.value}") + "]")
        factory = _ACCOUNTANTS.get(name)
        if not isinstance(factory, _BoundFactory) or factory.key != (scheme, rel):
            register_accountant(name, _BoundFactory(scheme, rel, self_or_cls.backend.value),
                                force=True)
        return name

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step with noise multiplier z (σ = z·C on the clipped sum).

        ``sample_rate`` is what Opacus passes (``1/len(data_loader)``); it is checked against
        the binding, never used for ε: bound to a sampler it must be ``1/len(sampler)`` or the
        scheme's own rate (γ, or m/n), and the sampler must have handed out a batch for this
        step; bound to ``Poisson(γ)`` it must not exceed γ (below γ: warned, safe).
        """
        scheme = self._require_bound()
        z = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
        rate = check_real("sample_rate", sample_rate, "(0, 1]")
        if self._sampler is not None:
            self._check_sampler_step(rate)
        elif isinstance(scheme, Poisson):
            if rate > scheme.rate:  # exactly: any larger rate could be the one drawn at
                raise InvalidParameterError(
                    "sample_rate", f"at most the bound scheme's rate {scheme.rate!r} (Opacus "
                    "reports this rate because its loader may draw at it: accounting at the "
                    "smaller rate would under-report ε)", rate)
            if rate < scheme.rate * (1 - _RATE_RTOL):
                warnings.warn(
                    f"Opacus reports sample_rate={rate!r}, below the bound scheme's rate "
                    f"{scheme.rate!r}: ε is computed at {scheme.rate!r} (an upper bound for the "
                    "smaller rate, possibly loose)", UserWarning, stacklevel=2)
        within = True if self._budget is None else self.can_step(noise_multiplier=z)
        if self.history and self.history[-1][:2] == (z, rate):
            z0, r0, k = self.history[-1]
            self.history[-1] = (z0, r0, k + 1)
        else:
            self.history.append((z, rate, 1))
        if self._budget is not None:
            if not within:  # recorded all the same: the noise was drawn, the ledger is honest
                raise BudgetExceededError(spent=self.budget_left().epsilon_spent, asked=1,
                                          steps_left=0, budget=self._budget, taken=True)
            self._filter.add(**self._step_kind(z))  # within: counted, O(1)

    def _check_sampler_step(self, rate: float) -> None:
        sampler = self._sampler
        allowed = [1.0 / len(sampler), sampler.expected_batch_size / sampler.n]
        if not any(abs(rate - a) <= _RATE_RTOL * a for a in allowed):
            raise InvalidParameterError(
                "sample_rate", f"1/len(sampler) = {allowed[0]!r} (what Opacus passes for a "
                f"loader on this sampler, without gradient accumulation) or the scheme's rate "
                f"{allowed[1]!r}", rate)
        if sampler.batches_drawn + self._steps_drawn_at_bind < len(self) + 1:
            raise UnsupportedCombinationError(
                f"optimizer step {len(self) + 1} was taken but the bound {sampler!r} has handed "
                f"out {sampler.batches_drawn} batches: the optimizer was fed batches this "
                "sampler did not draw (with Opacus, make_private(..., poisson_sampling=True) "
                "replaces the sampler by its own Poisson one: pass poisson_sampling=False, or "
                "use PrivampPrivacyEngine)")

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The hook Opacus attaches to its ``DPOptimizer``: checks the step (no gradient
        accumulation; a fixed-size scheme's batch of m rows), then :meth:`step`."""

        def hook_fn(optim: Any) -> None:
            accumulated = optim.accumulated_iterations
            if accumulated != 1:
                raise UnsupportedCombinationError(
                    f"the optimizer step covers {accumulated} accumulated batches under one "
                    "noise draw; the accounting of a sampling scheme is per drawn batch (draw "
                    "larger batches instead; Opacus's BatchMemoryManager splits a Poisson "
                    "batch correctly, but not yet a fixed-size one for this accountant)")
            m = self._scheme.fixed_size if self._scheme is not None else None
            if m is not None:
                rows = _batch_rows(optim)
                if rows is not None and rows != m:
                    raise InvalidParameterError(
                        "batch size", f"the bound scheme's fixed size m = {m} (the optimizer "
                        f"received a batch of another size: Opacus's poisson_sampling=True "
                        "replaces the loader's batches, and BatchMemoryManager splits them "
                        "into physical batches, which this check cannot tell apart)", rows)
            self.step(noise_multiplier=optim.noise_multiplier, sample_rate=sample_rate)

        return hook_fn

    def __len__(self) -> int:
        return sum(k for _, _, k in self.history)

    # ---- ε ---------------------------------------------------------------------------------

    def ledger(self):
        """privamp's :class:`~privamp.accountant.Accountant` for the recorded steps: one event
        per distinct noise multiplier on the bound scheme (composition commutes)."""
        from ..accountant import Accountant

        scheme = self._require_bound()
        base = scheme.resolve(self._relation)[1]
        counts: dict[float, int] = {}
        for z, _, k in self.history:
            z = check_real("noise_multiplier", z, "(0, inf)")
            counts[z] = counts.get(z, 0) + check_int("steps", k, "[1, inf)")
        acc = Accountant(self.backend.value, horizon=self.horizon, cache=self._work)
        for z, k in counts.items():
            acc.add(_step_mechanism(z, base), k, scheme=scheme, relation=self._relation)
        return acc

    def epsilon_bracket(self, delta: float) -> Bracket:
        """The certified bracket on ε(δ) of the recorded steps (``lower`` is ``None`` for the
        ``rdp`` backend). For fixed-size schemes the lower end bounds the ε of composing the
        amplification bound (see :attr:`privamp.accountant.Accountant.lower_end_of`)."""
        return self._epsilon(delta, lower=True)

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """The certified upper end of ε(δ) — what Opacus prints. Keyword arguments of Opacus's
        own accountants (``alphas``, ``eps_error``, ...) are refused by name."""
        if kwargs:
            name = next(iter(kwargs))
            raise InvalidParameterError(name, "not an argument of PrivampAccountant.get_epsilon "
                                        "(it takes delta only)", kwargs[name])
        return self._epsilon(delta, lower=False).upper

    def _epsilon(self, delta: float, lower: bool) -> Bracket:
        delta = check_real("delta", delta, "(0, 1)")
        self._require_bound()
        if not self.history:
            return Bracket(0.0, 0.0)  # nothing released: ε = 0 exactly
        key = (tuple(self.history), delta, lower)
        if key not in self._cache:
            self._cache.clear()  # only the last query is kept: the history only grows
            self._cache[key] = self.ledger().epsilon(delta, lower=lower)
        return self._cache[key]

    def get_delta(self, eps: float) -> float:
        """The certified upper end of δ(ε) of the recorded steps."""
        eps = check_real("eps", eps, "[0, inf)")
        self._require_bound()
        if not self.history:
            return 0.0
        return self.ledger().delta(eps).upper

    # ---- the budget --------------------------------------------------------------------------

    @property
    def budget(self) -> tuple[float, float] | None:
        """The privacy budget (ε, δ), or ``None``."""
        return self._budget

    def _step_kind(self, z: float) -> dict:
        scheme = self._require_bound()
        return dict(mechanism=_step_mechanism(z, scheme.resolve(self._relation)[1]),
                    scheme=scheme, relation=self._relation)

    def _budget_filter(self):
        """The :class:`~privamp.filter.PrivacyFilter` on the recorded steps (kept in step with
        :meth:`step`; rebuilt after a checkpoint is loaded or a rebinding)."""
        from ..filter import PrivacyFilter

        if self._budget is None:
            raise InvalidParameterError("budget", "given (PrivampAccountant(..., budget=(eps, "
                                        "delta))) to ask about the budget", None)
        self._require_bound()
        if self._filter is None or self._filter.accountant.steps != len(self):
            acc = self.ledger() if self.history else None
            self._filter = PrivacyFilter(*self._budget, accountant=acc,
                                         backend=None if acc is not None else self.backend)
        return self._filter

    def _noise(self, noise_multiplier: float | None) -> float:
        if noise_multiplier is None:
            if not self.history:
                raise InvalidParameterError("noise_multiplier", "given before the first step "
                                            "(later it defaults to the last step's)", None)
            return self.history[-1][0]
        return check_real("noise_multiplier", noise_multiplier, "(0, inf)")

    def can_step(self, noise_multiplier: float | None = None, count: int = 1) -> bool:
        """Whether ``count`` more steps with this noise multiplier (default: the last step's)
        stay within the budget: the certified upper ε at the budget's δ at most its ε. O(1)
        per call in a training loop (:class:`privamp.filter.PrivacyFilter`)."""
        return self._budget_filter().can_add(count=count,
                                             **self._step_kind(self._noise(noise_multiplier)))

    def steps_left(self, noise_multiplier: float | None = None) -> int:
        """How many more steps with this noise multiplier fit in the budget (T_max: that many
        are certified within it, one more is not)."""
        return self._budget_filter().steps_left(**self._step_kind(self._noise(noise_multiplier)))

    def budget_left(self):
        """The certified ε spent at the budget's δ and the ε left
        (:class:`privamp.filter.BudgetLeft`)."""
        return self._budget_filter().budget_left()

    # ---- checkpoints -----------------------------------------------------------------------

    def state_dict(self, destination: Any = None) -> Any:
        """Opacus's ``history`` and ``mechanism`` keys, plus the scheme (as plain data, see
        :func:`scheme_state`), the relation and the backend."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = list(self.history)
        destination["mechanism"] = NAME
        destination["scheme"] = None if self._scheme is None else scheme_state(self._scheme)
        destination["relation"] = None if self._relation is None else self._relation.value
        destination["backend"] = self.backend.value
        destination["budget"] = None if self._budget is None else list(self._budget)
        destination["horizon"] = self.horizon
        return destination

    def load_state_dict(self, state_dict: Any) -> None:
        """Restore the history; an unbound accountant binds to the saved scheme (rebind it to
        the new sampler afterwards to keep the sampler checks), a bound one must hold the
        same scheme and relation."""
        if not isinstance(state_dict, dict) or not state_dict:
            raise InvalidParameterError("state_dict", "a non-empty dict from state_dict()",
                                        state_dict)
        for key in ("history", "mechanism", "scheme", "relation"):
            if key not in state_dict:
                raise InvalidParameterError("state_dict", f"a dict with the key {key!r} (from "
                                            "PrivampAccountant.state_dict())", sorted(state_dict))
        if state_dict["mechanism"] != NAME:
            raise InvalidParameterError("state_dict", f"the state of a {NAME!r} accountant",
                                        state_dict["mechanism"])
        history = []
        for entry in state_dict["history"]:
            z, rate, k = entry
            history.append((check_real("noise_multiplier", z, "(0, inf)"),
                            check_real("sample_rate", rate, "(0, 1]"),
                            check_int("steps", k, "[1, inf)")))
        if state_dict["scheme"] is not None:
            scheme = scheme_from_state(state_dict["scheme"])
            rel = NeighbouringRelation.parse(state_dict["relation"])
            if self._scheme is None:
                self.history = []
                self.bind(scheme, relation=rel)
            elif scheme != self._scheme or rel is not self._relation:
                raise InvalidParameterError(
                    "state_dict", f"the state of an accountant of {self._scheme!r} under "
                    f"{self._relation.value!r}", f"{scheme!r} under {rel.value!r}")
        elif history:
            raise InvalidParameterError("state_dict", "a bound accountant's state when it "
                                        "holds steps", state_dict["scheme"])
        if state_dict.get("horizon") is not None and self.horizon is None:
            self.horizon = check_int("horizon", state_dict["horizon"], "[1, inf)")
        saved = _check_budget(state_dict.get("budget"))
        if saved is not None:
            if self._budget is not None and saved != self._budget:
                raise InvalidParameterError("state_dict", f"the state of an accountant with the "
                                            f"budget {self._budget!r}", saved)
            self._budget = saved
        self.history = history
        self._filter = None
        if self._sampler is not None:
            # the restored steps were drawn before this sampler existed
            self._steps_drawn_at_bind = len(self) - self._sampler.batches_drawn
        self._cache.clear()

    def __setstate__(self, state: dict) -> None:
        # an accountant pickled before the horizon existed: no plan, a fresh work cache
        self.__dict__.update(state)
        if "horizon" not in state:
            self.horizon = None
        if "_work" not in state:
            from ..accountant import _OWN_CACHE_BYTES
            from ..cache import AccountingCache

            self._work = AccountingCache(step_bytes=_OWN_CACHE_BYTES["step"],
                                         composed_bytes=_OWN_CACHE_BYTES["composed"])

    def __repr__(self) -> str:
        bound = ("unbound" if self._scheme is None else
                 f"{self._sampler!r}" if self._sampler is not None else f"{self._scheme!r}")
        return f"PrivampAccountant({bound}, steps={len(self)})"


def _check_budget(budget: Any) -> tuple[float, float] | None:
    """``None`` or a budget (ε > 0, δ in (0, 1)) as a tuple of floats."""
    if budget is None:
        return None
    if not isinstance(budget, (tuple, list)) or len(budget) != 2:
        raise InvalidParameterError("budget", "None or a pair (epsilon, delta)", budget)
    return (check_real("budget epsilon", budget[0], "(0, inf)"),
            check_real("budget delta", budget[1], "(0, 1)"))


class _BoundFactory:
    """Opacus's registry calls ``_ACCOUNTANTS[name]()``: a factory of accountants bound to one
    scheme (for the noise search of Opacus's ``get_noise_multiplier``)."""

    def __init__(self, scheme: SamplingScheme, relation: NeighbouringRelation, backend: str):
        self.key = (scheme, relation)
        self.backend = backend

    def __call__(self) -> PrivampAccountant:
        return PrivampAccountant(self.key[0], relation=self.key[1], backend=self.backend)


def _batch_rows(optim: Any) -> int | None:
    """Rows of the batch behind the optimizer's per-sample gradients, or ``None`` when the
    optimizer keeps none (ghost clipping)."""
    try:
        samples = optim.grad_samples
    except (AttributeError, ValueError):
        return None
    return int(samples[0].shape[0]) if samples else None


if _ACCOUNTANTS.get(NAME) is not PrivampAccountant:
    register_accountant(NAME, PrivampAccountant, force=NAME in _ACCOUNTANTS)


# ---- calibration -------------------------------------------------------------------------------


def calibrate_noise_multiplier(target_epsilon: float, delta: float, *, steps: int,
                               scheme: SamplingScheme,
                               relation: NeighbouringRelation | str | None = None,
                               backend: str = "pld", rtol: float = 1e-5):
    """The smallest Opacus noise multiplier z (relative to the clipping norm C) whose ``steps``
    DP-SGD steps on ``scheme``'s batches are certified (``target_epsilon``, ``delta``)-DP, to a
    relative ``rtol`` (z·(1 − rtol) is infeasible, unless z is below the search range). Returns the
    :class:`~privamp.calibrate.Calibration` (``value`` is z, ``epsilon`` its certified ε ≤ the
    target).

    The Gaussian is calibrated with σ in units of C and the clipped-sum sensitivity under the
    relation the scheme needs (C under add/remove, 2C under substitution), so z = σ/C.

    >>> from privamp.sampling import Poisson
    >>> cal = calibrate_noise_multiplier(1.0, 1e-5, steps=300, scheme=Poisson(0.01))
    >>> cal.epsilon <= 1.0, round(cal.value, 3)
    (True, 1.027)
    """
    import dataclasses

    from ..calibrate import calibrate_sigma

    if not isinstance(scheme, SamplingScheme):
        raise InvalidTypeError("scheme", "a privamp SamplingScheme", scheme)
    outer, base = scheme.resolve(relation)
    # σ in units of C is Opacus's z; the sensitivity is C or 2C in those units
    cal = calibrate_sigma(target_epsilon, delta, steps=steps, scheme=scheme,
                          sensitivity=clipped_sum_sensitivity(1.0, base), relation=outer,
                          backend=backend, rtol=rtol, report_lower=False)
    return dataclasses.replace(cal, parameter="noise_multiplier")


# ---- the engine --------------------------------------------------------------------------------


class PrivampPrivacyEngine(PrivacyEngine):
    """Opacus's ``PrivacyEngine`` with a :class:`PrivampAccountant` bound by ``make_private``.

    Parameters
    ----------
    backend : {"pld", "rdp"}
        The accountant's composition backend.
    secure_mode : bool
        Opacus's flag (a cryptographically secure generator for the noise). A
        :class:`TorchBatchSampler` draws its batches with NumPy's generator either way.
    budget : (float, float), optional
        The accountant's privacy budget (ε, δ): ask ``engine.accountant.can_step()`` before
        each ``optimizer.step()`` to stop training at it (:class:`PrivampAccountant`).

    Notes
    -----
    ``make_private`` binds the accountant to

    * the loader's :class:`TorchBatchSampler` when ``data_loader`` is built on one (Opacus's
      Poisson replacement is then refused: ``poisson_sampling`` must be ``False`` or omitted);
    * ``scheme=`` when given (Poisson with Opacus's loader, or a fixed-size scheme whose batches
      the loader really draws; ``poisson_sampling`` defaults to ``True`` for Poisson, ``False``
      otherwise, and ``True`` is refused for a fixed-size scheme);
    * otherwise ``Poisson(1/len(data_loader))``, the rate Opacus's ``DPDataLoader`` draws at
      (``poisson_sampling=False`` with a plain loader is refused: its batches — sequential or
      shuffled — are not drawn by a scheme privamp can account).

    The optimizer averages by the scheme's expected batch size (γn or m) instead of Opacus's
    ``int(n/len(loader))`` (a scaling of the update, not a privacy parameter).

    ``make_private_with_epsilon`` takes ``epochs`` (passes over the loader, as in Opacus) or
    ``steps`` and sets the noise multiplier by :func:`calibrate_noise_multiplier` (certified
    ε ≤ target); the calibration is kept in :attr:`calibration`.
    """

    def __init__(self, *, backend: str = "pld", secure_mode: bool = False,
                 budget: tuple[float, float] | None = None):
        super().__init__(accountant=NAME, secure_mode=secure_mode)
        self.accountant = PrivampAccountant(backend=backend, budget=budget)
        #: the last make_private_with_epsilon calibration (``None`` before)
        self.calibration = None

    def _binding(self, data_loader: Any, scheme: SamplingScheme | None,
                 poisson_sampling: bool | None) -> tuple[Any, bool]:
        """(source to bind to, poisson_sampling to pass to Opacus)."""
        inner = getattr(data_loader, "batch_sampler", None)
        if isinstance(inner, TorchBatchSampler):
            if poisson_sampling:
                raise InvalidParameterError(
                    "poisson_sampling", "False or omitted with a loader on a TorchBatchSampler "
                    "(True makes Opacus replace its batches by Poisson ones)", poisson_sampling)
            if scheme is not None and scheme != inner.scheme:
                raise InvalidParameterError(
                    "scheme", f"omitted or the loader's sampler scheme {inner.scheme!r}", scheme)
            return inner, False
        if scheme is not None:
            if not isinstance(scheme, SamplingScheme):
                raise InvalidTypeError("scheme", "a privamp SamplingScheme", scheme)
            if isinstance(scheme, Poisson):
                if poisson_sampling is False and not isinstance(data_loader, DPDataLoader):
                    # the batches would be the plain loader's own (sequential or shuffled,
                    # fixed-size), accounted as Poisson: no step check could catch it
                    raise InvalidParameterError(
                        "poisson_sampling", f"True or omitted with the scheme {scheme!r} on a "
                        "plain DataLoader (False keeps the loader's own batches, which are not "
                        "Poisson samples; or build the loader on a TorchBatchSampler)",
                        poisson_sampling)
                return scheme, True if poisson_sampling is None else bool(poisson_sampling)
            if poisson_sampling:
                raise InvalidParameterError(
                    "poisson_sampling", f"False or omitted with the fixed-size scheme "
                    f"{scheme!r} (True makes Opacus draw Poisson batches)", poisson_sampling)
            return scheme, False
        if poisson_sampling is False:
            raise InvalidParameterError(
                "scheme", "given (or the data_loader built on a TorchBatchSampler) when "
                "poisson_sampling=False: for the shuffled fixed batches of a plain DataLoader, "
                "build it on TorchBatchSampler(Shuffle(n, batch_size), ...) — shuffled batches "
                "have no amplification upper bound, and accounting them as Poisson (as "
                "Opacus does) under-reports epsilon by up to 10-20x", None)
        n = len(data_loader.dataset)
        return Poisson(1 / len(data_loader), n=n), True

    def make_private(self, *, data_loader: Any, scheme: SamplingScheme | None = None,
                     poisson_sampling: bool | None = None, **kwargs: Any):
        """Opacus's ``make_private`` with the accountant bound (see the class docstring)."""
        source, poisson = self._binding(data_loader, scheme, poisson_sampling)
        self.accountant.bind(source)
        out = super().make_private(data_loader=data_loader, poisson_sampling=poisson, **kwargs)
        if self.accountant.sampler is not None or scheme is not None:
            # a sampler or a scheme given: Opacus's int(n/len(loader)) is not its batch size
            sampler = self.accountant.sampler
            out[1].expected_batch_size = (
                sampler.expected_batch_size if sampler is not None
                else self.accountant.scheme.expected_size(len(data_loader.dataset)))
        return out

    def make_private_with_epsilon(self, *, data_loader: Any, target_epsilon: float,
                                  target_delta: float, epochs: int | None = None,
                                  steps: int | None = None, scheme: SamplingScheme | None = None,
                                  poisson_sampling: bool | None = None, rtol: float = 1e-5,
                                  **kwargs: Any):
        """``make_private`` with the noise multiplier calibrated for (``target_epsilon``,
        ``target_delta``) after ``epochs`` passes over ``data_loader`` (or ``steps`` steps)."""
        if (epochs is None) == (steps is None):
            raise InvalidParameterError("epochs", "given, or steps given, but not both",
                                        (epochs, steps))
        if steps is None:
            steps = check_int("epochs", epochs, "[1, inf)") * len(data_loader)
        if "noise_multiplier" in kwargs:
            raise InvalidParameterError("noise_multiplier", "omitted (it is calibrated)",
                                        kwargs["noise_multiplier"])
        source, _ = self._binding(data_loader, scheme, poisson_sampling)
        _, bound_scheme = _resolve_source(source)
        if len(self.accountant) > 0:
            warnings.warn("make_private_with_epsilon calibrates for a fresh run, but the "
                          f"accountant already holds {len(self.accountant)} steps: the run's "
                          "total ε will exceed the target", UserWarning, stacklevel=2)
        self.calibration = calibrate_noise_multiplier(
            target_epsilon, target_delta, steps=steps, scheme=bound_scheme,
            backend=self.accountant.backend.value, rtol=rtol)
        return self.make_private(data_loader=data_loader, scheme=scheme,
                                 poisson_sampling=poisson_sampling,
                                 noise_multiplier=self.calibration.value, **kwargs)

    def get_epsilon(self, delta: float) -> float:
        """The certified upper end of ε(δ) so far."""
        return self.accountant.get_epsilon(delta)

    def epsilon_bracket(self, delta: float) -> Bracket:
        """The certified bracket on ε(δ) so far."""
        return self.accountant.epsilon_bracket(delta)
