"""A privacy filter: "may I take one more step of this kind within the budget (ε, δ)?".

:class:`PrivacyFilter` wraps an :class:`~privamp.accountant.Accountant` (the ledger) and a
budget (ε_B, δ_B). :meth:`PrivacyFilter.can_add` answers whether ``count`` more steps of a kind
(mechanism, scheme, relation) keep the certified upper ε(δ_B) of the ledger at most ε_B;
:meth:`PrivacyFilter.add` adds them, or refuses with
:class:`~privamp.errors.BudgetExceededError` instead of exceeding; :meth:`budget_left` reports
the certified ε spent, the ε left and, per kind, :meth:`steps_left`.

**Cheap.** A training loop asks once per step. The filter does not compose the ledger at each
question: for the kind asked about it computes once the largest admissible count T_max (the
integer search of :func:`privamp.calibrate.calibrate_steps`, on the ledger plus t steps of the
kind) and answers every later question of that kind by counting, until the ledger changes in
another way (another kind added, or steps added to the wrapped accountant behind the filter's
back). The search's trials share one cache, so the query of the spent ε at the stop reuses the
composition of the search.

**Two filters, two conditions** (never more is claimed than is proven):

* ``adaptive=False`` (default; backend ``"pld"``, or ``"rdp"``/``"fourier"``): the certified
  upper ε of the whole ledger. Valid when the sequence of step kinds is fixed in advance and only
  the *stopping time* is decided by the filter — the usual training loop (the same noise and
  sampler every step, stop at the budget). The stopping time is then a function of the step
  kinds alone, never of a released output, so the run is a prefix, fixed in advance, of the
  planned sequence: each prefix the filter allows has certified ε ≤ ε_B, and the true ε(δ_B) of
  composition is non-decreasing in the number of steps, so every count up to T_max is within the
  budget too. With step kinds chosen *adaptively* from released outputs (noise lowered after a
  good epoch, say) an ε(δ) budget is not a valid filter for PLD composition: use
* ``adaptive=True``: the Rényi filter (Feldman & Zrnic 2021, "Individual privacy accounting via
  a Rényi filter", NeurIPS, Theorem 3.1): at an order λ fixed before the first step, steps may
  be chosen adaptively as long as Σ_t ρ_t(λ) ≤ B(λ); the whole run is then (λ, B(λ))-RDP and so
  (ε_B, δ_B)-DP by the conversion privamp uses for RDP (Canonne, Kamath, Steinke 2020,
  Proposition 12): ε = ρ + log(1 − 1/λ) − (log δ + log λ)/(λ − 1). The filter checks the
  converted value of the composed RDP at λ (each curve an upper bound, products and sums rounded
  up, :class:`~privamp.rdp.curve.RdpCurve`), so "≤ ε_B" is decided on an upper bound. The order
  is ``order=`` or, by default, the order of the ledger's RDP grid that admits the most steps
  of the first kind asked about (chosen before the filter lets any step run; a non-empty
  wrapped ledger needs ``order=`` given, since its kinds may have been chosen adaptively).
  For fully adaptive composition with (ε, δ) filters see Whitehouse, Ramdas, Rogers, Wu 2023,
  "Fully adaptive composition in differential privacy" (ICML); privamp does not implement
  their filters.

>>> from privamp import GaussianMechanism, Poisson
>>> f = PrivacyFilter(1.0, 1e-5)
>>> step = dict(mechanism=GaussianMechanism(1.0), scheme=Poisson(0.01))
>>> t_max = f.steps_left(**step)
>>> f.add(count=t_max, **step).can_add(**step)
False
>>> left = f.budget_left()
>>> left.epsilon_spent <= 1.0, left.epsilon_left >= 0.0
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import check_int, check_real
from .accountant import Accountant, Backend, _value_key
from .errors import (
    BudgetExceededError,
    InvalidParameterError,
    InvalidTypeError,
    NumericalError,
    UnreachableTargetError,
    UnsupportedCombinationError,
)

__all__ = ["BudgetLeft", "PrivacyFilter"]

#: The PLD grid of the filter's evaluations: an estimated upper error of this fraction of the
#: budget (as :func:`privamp.calibrate.calibrate_steps`); the coarse trials use 1e-3.
_FINE_ERROR = 1e-5
_COARSE_ERROR = 1e-3
#: The first coarse phase stops at a certified count whose ε is within this (in log ε) of the
#: budget: enough for a loop that ends well before the budget, one evaluation or two.
_EARLY = 0.1
#: Default largest count one search considers (more is searched again when reached).
_MAX_STEPS = 10**9


@dataclass(frozen=True)
class BudgetLeft:
    """What :meth:`PrivacyFilter.budget_left` reports.

    ``epsilon_spent`` is the certified upper end of the ledger's ε at ``budget_delta`` (0 for an
    empty ledger; for the adaptive filter the converted RDP at the filter's ``order``, which is
    what that filter certifies); ``epsilon_left`` = ``budget_epsilon`` − ``epsilon_spent`` (a
    lower bound on what is really left; negative only when a ledger handed to the filter already
    exceeded the budget); ``steps`` the ledger's number of steps.
    """

    budget_epsilon: float
    budget_delta: float
    epsilon_spent: float
    epsilon_left: float
    steps: int
    adaptive: bool
    order: float | None = None


@dataclass
class _Plan:
    """The answer for one kind, counted from the ledger of ``base`` steps the plan was made
    on: ``certain`` steps of the kind on top of it are certified within the budget (by the
    coarse phase of the search), ``exact`` is T_max once the fine phase ran (``None`` before;
    ``search`` runs it on demand); ``steps`` is the ledger's count now (base + taken)."""

    key: Any
    base: int
    steps: int
    certain: int
    exact: int | None
    search: Any
    max_steps: int

    def remaining(self, count: int | None) -> int:
        """The steps left when ``count`` more are asked (``None``: the exact number): from the
        certain count when it suffices, else from T_max (the fine phase, run once)."""
        taken = self.steps - self.base
        if self.exact is None and (count is None or count > self.certain - taken):
            try:
                fine = int(self.search.refine().value)
            except UnreachableTargetError:
                fine = 0  # even one more step exceeds the budget
            # both counts are certified (each by a certified upper ε): the larger stands
            self.exact = max(fine, self.certain)
        return (self.certain if self.exact is None else self.exact) - taken

    def capped(self) -> bool:
        """The search stopped at ``max_steps``: more steps may fit (searched again)."""
        return self.max_steps in (self.certain, self.exact)


class PrivacyFilter:
    """A ledger with a budget (ε_B, δ_B) that refuses steps exceeding it (see the module
    docstring for when each mode is valid).

    Parameters
    ----------
    budget_epsilon : float
        ε_B > 0.
    budget_delta : float
        δ_B in (0, 1).
    backend : Backend or {"pld", "rdp", "fourier"}, optional
        The wrapped accountant's backend (default ``"pld"``; ``"rdp"`` when ``adaptive``).
        Ignored (must agree if given) when ``accountant`` is given.
    adaptive : bool
        ``False`` (default): the filter on the certified ε of the whole ledger, valid for a
        sequence of step kinds fixed in advance. ``True``: the Rényi filter at one order, valid
        for step kinds chosen adaptively (needs the ``"rdp"`` backend).
    accountant : Accountant, optional
        A ledger to continue (its steps count against the budget); default a new one.
    order : float, optional
        ``adaptive`` only: the Rényi order λ > 1 of the filter (default: see the module
        docstring).
    max_steps : int
        The largest count one search for T_max considers (default 10^9; when a loop reaches it
        the filter searches again).

    Raises
    ------
    InvalidParameterError
        A budget out of range, ``order`` without ``adaptive`` or out of (1, inf), an adaptive
        filter on the ``pld`` backend, or on a non-empty ledger without ``order``.
    """

    def __init__(self, budget_epsilon: float, budget_delta: float, *,
                 backend: Backend | str | None = None, adaptive: bool = False,
                 accountant: Accountant | None = None, order: float | None = None,
                 max_steps: int = _MAX_STEPS):
        self.budget_epsilon = check_real("budget_epsilon", budget_epsilon, "(0, inf)")
        self.budget_delta = check_real("budget_delta", budget_delta, "(0, 1)")
        if not isinstance(adaptive, bool):
            raise InvalidTypeError("adaptive", "True or False", adaptive)
        self.adaptive = adaptive
        self.max_steps = check_int("max_steps", max_steps, "[1, inf)")
        if accountant is None:
            accountant = Accountant(backend if backend is not None
                                    else ("rdp" if adaptive else "pld"))
        elif not isinstance(accountant, Accountant):
            raise InvalidTypeError("accountant", "a privamp Accountant or None", accountant)
        elif backend is not None and Backend.parse(backend) is not accountant.backend:
            raise InvalidParameterError("backend", f"the given accountant's backend "
                                        f"{accountant.backend.value!r} (or None)", backend)
        self.accountant = accountant
        if adaptive and accountant.backend is not Backend.RDP:
            raise InvalidParameterError(
                "backend", "'rdp' when adaptive=True (an (ε, δ) budget on PLD composition is "
                "not a valid filter for adaptively chosen steps; the Rényi filter is: Feldman "
                "& Zrnic 2021, Theorem 3.1)", accountant.backend.value)
        self.order: float | None = None
        if order is not None:
            if not adaptive:
                raise InvalidParameterError("order", "given only with adaptive=True (the "
                                            "non-adaptive filter uses the ledger's ε)", order)
            self.order = check_real("order", order, "(1, inf)")
        elif adaptive and accountant.steps:
            raise InvalidParameterError(
                "order", "given when an adaptive filter continues a ledger that holds steps "
                "(the Rényi filter's order must be fixed before any adaptively chosen step)",
                None)
        from .cache import AccountingCache

        # the fine trials, the spent ε and the final compositions share one memo; the coarse
        # trials (shared grids) another
        self._cache = AccountingCache(step_bytes=64 * 2**20, composed_bytes=128 * 2**20)
        self._coarse_cache = AccountingCache(step_bytes=32 * 2**20, composed_bytes=64 * 2**20)
        self._plan: _Plan | None = None
        self._rdp: dict = {}  # adaptive: kind -> per-step RDP at the filter's order

    # ---- the questions ----------------------------------------------------------------------

    def can_add(self, mechanism: Any, count: int = 1, *, scheme: Any = None,
                relation: Any = None, group_privacy: Any = None, label: str = "") -> bool:
        """Whether ``count`` more steps of this kind keep the ledger within the budget (the
        certified upper ε at δ_B at most ε_B; adaptive: the converted RDP at the filter's
        order). Costs one dictionary look-up while the ledger changes only by this kind."""
        if not (type(count) is int and count >= 1):
            count = check_int("count", count, "[1, inf)")
        return count <= self._remaining(mechanism, count, scheme, relation, group_privacy,
                                        label)

    def steps_left(self, mechanism: Any, *, scheme: Any = None, relation: Any = None,
                   group_privacy: Any = None, label: str = "") -> int:
        """How many more steps of this kind fit in the budget: T_max, the exact boundary
        (T_max more steps are certified within it; T_max + 1 are not, unless T_max is
        ``max_steps``)."""
        return self._remaining(mechanism, None, scheme, relation, group_privacy, label)

    def add(self, mechanism: Any, count: int = 1, *, scheme: Any = None, relation: Any = None,
            group_privacy: Any = None, label: str = "") -> PrivacyFilter:
        """Add ``count`` steps of this kind to the ledger if they fit (chainable); otherwise
        raise :class:`BudgetExceededError` naming the ε spent, the steps asked, the steps left
        and the budget, and leave the ledger unchanged."""
        if not (type(count) is int and count >= 1):
            count = check_int("count", count, "[1, inf)")
        left = self._remaining(mechanism, count, scheme, relation, group_privacy, label)
        if count > left:
            spent = self._spent()
            raise BudgetExceededError(spent=spent, asked=count, steps_left=left,
                                      budget=(self.budget_epsilon, self.budget_delta))
        self.accountant.add(mechanism, count, scheme=scheme, relation=relation,
                            group_privacy=group_privacy, label=label)
        self._plan.steps += count
        return self

    step = add

    def budget_left(self) -> BudgetLeft:
        """The certified ε spent at δ_B, the ε left and the ledger's steps (:class:`BudgetLeft`)."""
        spent = self._spent()
        return BudgetLeft(self.budget_epsilon, self.budget_delta, spent,
                          self.budget_epsilon - spent, self.accountant.steps, self.adaptive,
                          self.order)

    # ---- T_max ------------------------------------------------------------------------------

    def _remaining(self, mechanism, count, scheme, relation, group_privacy, label) -> int:
        key = (mechanism, scheme, relation, group_privacy, label)
        try:
            hash(key)
        except TypeError:  # arrays: compare by value
            key = _value_key(key)
        plan = self._plan
        if (plan is None or plan.key != key or plan.steps != self.accountant.steps
                or (count is not None and count > plan.remaining(count) and plan.capped())):
            # a new kind, or the ledger changed in another way: search T_max once
            self._check_kind(mechanism, scheme, relation, group_privacy, label)
            plan = self._plan = self._new_plan(key, (mechanism, scheme, relation,
                                                     group_privacy, label))
        return plan.remaining(count)

    def _check_kind(self, mechanism, scheme, relation, group_privacy, label) -> None:
        """The event must be one the ledger accepts (every check of Accountant.add runs on a
        copy): a refused kind raises, naming why, rather than answering False."""
        trial = self._copy(self.accountant.upper_error)
        trial.add(mechanism, 1, scheme=scheme, relation=relation, group_privacy=group_privacy,
                  label=label)

    def _copy(self, upper_error: float | None, cache: Any = None,
              shared_grid: bool | None = None, events: tuple | None = None) -> Accountant:
        """A new accountant with the wrapped one's options (the grid's ``upper_error``, the
        filter's caches) holding ``events`` (default the wrapped ledger's)."""
        acc = self.accountant
        if acc.group_size != 1:
            # the steps a filter adds are single-record steps: with a ledger of groups the
            # copy would account a different guarantee (found in review: it under-reported)
            raise UnsupportedCombinationError(
                f"the privacy filter counts steps of single records; this ledger accounts "
                f"groups of {acc.group_size} records (group_size): use a plain Accountant "
                "for group guarantees")
        out = Accountant(acc.backend, eps_error=acc.eps_error, delta_error=acc.delta_error,
                         grid_step=acc.grid_step, upper_error=upper_error, orders=acc.orders,
                         cache=self._cache if cache is None else cache,
                         shared_grid=acc.shared_grid if shared_grid is None else shared_grid)
        for ev in acc.events if events is None else events:
            out.add(ev.mechanism, ev.count, scheme=ev.scheme, relation=ev.relation,
                    group_privacy=ev.group_privacy, label=ev.label)
        return out

    def _upper_error(self, fraction: float) -> float | None:
        """The PLD grid's estimated upper error: the wrapped accountant's, else ``fraction`` of
        the budget (relative to the budget, not to ε: far below it a relative error would ask
        for grids beyond the memory bound)."""
        if self.accountant.backend is not Backend.PLD:
            return None
        if self.accountant.upper_error is not None:
            return self.accountant.upper_error
        return fraction * self.budget_epsilon

    def _epsilon_with(self, extra: tuple | None, t: int, coarse: bool = False,
                      events: tuple | None = None) -> float:
        """The certified upper ε(δ_B) of the ledger (or ``events``: the ledger when a plan was
        made) plus ``t`` steps of ``extra``, on the fine grid or the coarse one (both
        certified; the coarse one is cheaper and looser)."""
        if self.adaptive:
            return self._adaptive_epsilon(extra, t)
        if coarse:
            acc = self._copy(self._upper_error(_COARSE_ERROR), self._coarse_cache, True,
                             events)
        else:
            acc = self._copy(self._upper_error(_FINE_ERROR), events=events)
        if extra is not None and t:
            mechanism, scheme, relation, group_privacy, label = extra
            acc.add(mechanism, t, scheme=scheme, relation=relation,
                    group_privacy=group_privacy, label=label)
        if not acc.steps:
            return 0.0  # nothing released
        return acc.epsilon(self.budget_delta, lower=False).upper

    def _spent(self) -> float:
        """The certified upper ε of the ledger at δ_B, on the grid of the search's fine trials
        (so at T_max it is the composition the search certified, from the cache); above the
        budget, the coarse grid's certified value too, and the smaller of the two (a count the
        coarse phase certified is T_max in the rare case the fine grid is the looser there)."""
        eps = self._epsilon_with(None, 0)
        if eps > self.budget_epsilon and not self.adaptive \
                and self.accountant.backend is Backend.PLD:
            eps = min(eps, self._epsilon_with(None, 0, coarse=True))
        return eps

    def _new_plan(self, key: Any, extra: tuple) -> _Plan:
        """The plan for ``extra``: the coarse phase of the search for T_max now (its count is
        certified), the fine phase when a question needs it (:meth:`_Plan.remaining`)."""
        from .calibrate import StepSearch, guess_steps

        steps = self.accountant.steps
        if self.adaptive:
            t, _ = self._adaptive_t_max(extra)
            return _Plan(key, steps, steps, t, t, None, self.max_steps)
        guess = self._guess(extra, guess_steps)
        # the search counts steps on top of the ledger as it is now (the plan is dropped when
        # the ledger changes in another way than by this kind)
        base = self.accountant.events
        if guess >= self.max_steps:
            # a budget the guess puts beyond the cap: one certified evaluation at the cap
            # settles it when it fits (the search would start there on the coarse grid, which
            # at 10⁹ steps costs seconds); otherwise the search runs as usual
            at_cap = self._epsilon_with(extra, self.max_steps, events=base)
            if at_cap <= self.budget_epsilon:
                return _Plan(key, steps, steps, self.max_steps, self.max_steps, None,
                             self.max_steps)
        coarse = None
        if self.accountant.backend is Backend.PLD:
            def coarse(t):
                return self._epsilon_with(extra, int(t), coarse=True, events=base)
        # the first question is answered after about one coarse evaluation: the search starts
        # 10 % below its guess and stops at the first certified count within 10 % of the
        # budget's ε; it goes on to the exact boundary only when a question needs it
        search = StepSearch(lambda t: self._epsilon_with(extra, int(t), events=base), coarse,
                            target=self.budget_epsilon, guess=0.9 * guess,
                            max_steps=self.max_steps, early=_EARLY)
        return _Plan(key, steps, steps, search.certain, None, search, self.max_steps)

    def _guess(self, extra: tuple, guess_steps) -> float:
        """Where the search starts (it decides nothing): the CLT guess of
        :func:`~privamp.calibrate.guess_steps` for Gaussian noise; for other mechanisms the
        budget over the ε of one step on the coarse grid (ε grows about linearly for pure-DP
        noise), so that no trial lands at absurd counts, which cost seconds each."""
        from .mechanisms.gaussian import GaussianMechanism

        try:
            if isinstance(extra[0], GaussianMechanism):
                return guess_steps(self.budget_epsilon, self.budget_delta, extra[0], extra[1])
            one = self._epsilon_with(extra, 1, coarse=self.accountant.backend is Backend.PLD,
                                     events=())
        except (InvalidParameterError, NumericalError):  # a guess only
            return 1.0
        return self.budget_epsilon / one if one > 0 and math.isfinite(one) else 1.0

    # ---- the Rényi filter -------------------------------------------------------------------

    def _rdp_per_step(self, extra: tuple, orders: np.ndarray):
        """The per-step RDP curve of a kind at ``orders`` (an upper bound; the ``rdp``
        backend's rule for the event)."""
        from .accountant import _memo_source
        from .rdp.accountant import _evaluate

        mechanism, scheme, relation, group_privacy, label = extra
        probe = Accountant("rdp").add(mechanism, 1, scheme=scheme, relation=relation,
                                      group_privacy=group_privacy, label=label)
        ev = probe.segments[0]
        return _evaluate(_memo_source(self._cache, ev, orders), orders)

    def _adaptive_epsilon(self, extra: tuple | None, t: int, order: float | None = None
                          ) -> float:
        """The converted RDP at the filter's order of the ledger plus ``t`` steps of ``extra``
        (Canonne, Kamath, Steinke 2020, Proposition 12; upper bounds rounded up)."""
        from .rdp.curve import RdpCurve

        order = self.order if order is None else order
        grid = np.array([order])
        curves = []
        lines = [(ev.mechanism, ev.scheme, ev.relation, ev.group_privacy, ev.label)
                 for ev in self.accountant.segments]
        counts = [ev.count for ev in self.accountant.segments]
        if extra is not None and t:
            lines.append(extra)
            counts.append(t)
        for line, count in zip(lines, counts, strict=True):
            key = (_value_key(line[:4]), order)
            curve = self._rdp.get(key)
            if curve is None:
                curve = self._rdp[key] = self._rdp_per_step(line, grid)
            curves.append(curve * count)
        if not curves:
            return 0.0
        return float(RdpCurve.compose(curves).epsilon(self.budget_delta, warn=False))

    def _adaptive_t_max(self, extra: tuple) -> tuple[int, bool]:
        if self.order is None:
            self.order = self._best_order(extra)
        return _largest(lambda t: self._adaptive_epsilon(extra, t) <= self.budget_epsilon,
                        self.max_steps)

    def _best_order(self, extra: tuple) -> float:
        """The order of the RDP grid admitting the most steps of ``extra`` (ties: the
        smallest): fixed before the filter lets a step run, from the first kind only."""
        from .rdp.curve import DEFAULT_ORDERS

        orders = np.asarray(DEFAULT_ORDERS if self.accountant.orders is None
                            else self.accountant.orders, dtype=float)
        orders = orders[orders > 1.0]
        rho = self._rdp_per_step(extra, orders).epsilons
        log_delta = math.log(self.budget_delta)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            room = (self.budget_epsilon - np.log1p(-1.0 / orders)
                    + (log_delta + np.log(orders)) / (orders - 1.0))
            fit = np.where((rho > 0) & np.isfinite(rho), room / rho, -np.inf)
        fit = np.where(np.isnan(fit), -np.inf, fit)
        return float(orders[int(np.argmax(fit))])

    # ---- persistence and explanation --------------------------------------------------------

    def state_dict(self) -> dict:
        """The wrapped ledger's :meth:`~privamp.accountant.Accountant.state_dict` with a
        ``"budget"`` entry (ε, δ, adaptive, order, max_steps): an accountant reads it back
        without the budget, :meth:`from_state_dict` with it."""
        state = self.accountant.state_dict()
        state["budget"] = {"epsilon": self.budget_epsilon, "delta": self.budget_delta,
                           "adaptive": self.adaptive, "order": self.order,
                           "max_steps": self.max_steps}
        return state

    @classmethod
    def from_state_dict(cls, state: dict, *, cache: Any = None) -> PrivacyFilter:
        """The filter :meth:`state_dict` wrote: the ledger (every check of ``add`` runs again)
        and its budget (the adaptive filter keeps its order)."""
        if not isinstance(state, dict) or not isinstance(state.get("budget"), dict):
            raise InvalidParameterError("state", "a dict written by PrivacyFilter.state_dict "
                                        "(with a 'budget' entry)", type(state).__name__
                                        if not isinstance(state, dict) else sorted(state))
        budget = state["budget"]
        unknown = set(budget) - {"epsilon", "delta", "adaptive", "order", "max_steps"}
        if unknown:
            raise InvalidParameterError("state.budget", "keys epsilon, delta, adaptive, order, "
                                        "max_steps", sorted(unknown))
        acc = Accountant.from_state_dict(state, cache=cache)
        # the adaptive filter's order was fixed before its first step and is saved with it
        return cls(budget.get("epsilon"), budget.get("delta"),
                   adaptive=budget.get("adaptive", False), accountant=acc,
                   order=budget.get("order"), max_steps=budget.get("max_steps", _MAX_STEPS))

    def explain(self) -> str:
        """The wrapped ledger's :meth:`~privamp.accountant.Accountant.explain` and the budget:
        the filter's kind, its validity condition and the ε spent and left."""
        left = self.budget_left()
        if self.adaptive:
            kind = (f"adaptive Renyi filter at order {self.order:g}" if self.order is not None
                    else "adaptive Renyi filter (order fixed at the first step)")
            why = ("valid for step kinds chosen adaptively (Feldman & Zrnic 2021, Theorem 3.1; "
                   "RDP converted by Canonne, Kamath, Steinke 2020)")
        else:
            kind = f"filter on the certified {self.accountant.backend.value} epsilon"
            why = ("valid when the sequence of step kinds is fixed in advance and the filter "
                   "decides only when to stop; not for kinds chosen from released outputs "
                   "(use adaptive=True)")
        return "\n".join([
            self.accountant.explain(),
            f"budget: (epsilon {self.budget_epsilon:g}, delta {self.budget_delta:g}), {kind}",
            f"      {why}",
            f"      spent: epsilon {left.epsilon_spent:.6g} (certified upper), left "
            f"{left.epsilon_left:.6g}"])

    def __repr__(self) -> str:
        return (f"PrivacyFilter(budget=({self.budget_epsilon!r}, {self.budget_delta!r}), "
                f"adaptive={self.adaptive}, steps={self.accountant.steps})")


def _largest(feasible, hi: int) -> tuple[int, bool]:
    """The largest t in [0, ``hi``] with ``feasible(t)`` (non-increasing in t, feasible(0)
    assumed), by doubling then bisection; and whether it is ``hi``."""
    if not feasible(1):
        return 0, False
    lo, up = 1, 2
    while up <= hi and feasible(up):
        lo, up = up, 2 * up
    if up > hi:
        if feasible(hi):
            return hi, True
        up = hi
    while up - lo > 1:  # feasible(lo), not feasible(up)
        mid = (lo + up) // 2
        if feasible(mid):
            lo = mid
        else:
            up = mid
    return lo, False

