"""The batch samplers practitioners run: random allocation, shuffling, truncated Poisson.

Unlike the subsampling schemes of :mod:`privamp.sampling.schemes`, whose steps draw independent
subsamples (so one step's amplification composes), these samplers tie the steps of a *round*
together, and their accounting is not the amplified profile of a per-step multiplicity:

=========================  ============  ========================================================
scheme                     relation      accounting (the ``pld`` backend)
=========================  ============  ========================================================
RandomAllocation(t, k)     add/remove    the random-allocation pair of a round of t steps
                                         (Feldman & Shenfeld 2025), certified by convex order
                                         (:mod:`privamp.pld.allocation`); k > 1 through k
                                         stratified blocks; ⌈steps/t⌉ rounds
Shuffle(n, m, order)       add/remove    upper: the un-amplified composition over epochs (a
                           (zero-out),   record is in one batch per epoch); lower: Chua et al.
                           substitute    2024's construction (:mod:`privamp.pld.shuffle`)
TruncatedPoisson(n, q, B)  add/remove    the mixture over the other records' count
                                         (:mod:`privamp.pld.truncated`)
=========================  ============  ========================================================

Each is a :class:`~privamp.sampling.schemes.SamplingScheme` registered in ``SCHEMES`` (so the
CLI, the sweeps and the conformance suite pick it up), but its :meth:`multiplicity` refuses: a
generic per-step amplification theorem would be wrong for it (for shuffling, unsafe). The Gaussian
mechanism is accounted; the ``rdp`` and ``fourier`` backends refuse with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._params import Param
from .._validation import check_choice, check_rng
from ..errors import InvalidParameterError, UnsupportedCombinationError
from ..relations import NeighbouringRelation
from .schemes import (
    _M,
    _N,
    Poisson,
    SamplingScheme,
    Subsample,
    _as_subsample,
    _dataset_size,
)

__all__ = ["RandomAllocation", "Shuffle", "TruncatedPoisson"]

R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE

_T = Param("t", "[1, inf)", integer=True, help="steps per round (random-allocation)")
_K = Param("k", "[1, inf)", integer=True, default=1,
           help="steps each record is used in per round (random-allocation; default 1: "
                "balls-in-bins)")
_RATE = Poisson.params[0]   # the same rate, declared once
_MAX_BATCH = Param("max_batch", "[1, inf)", integer=True,
                   help="maximum batch size of truncated Poisson sampling (truncated-poisson)")
_ORDERS = ("reshuffle", "persistent")


class _BatchedScheme(SamplingScheme):
    """A sampler whose steps are accounted together (see the module doc)."""

    #: accounted by the PLD backend only
    pld_only: ClassVar[bool] = True
    #: the lower end of a bracket comes from the sampler's own lower-bound pairs
    #: (:meth:`pld_lower_events`), not from the upper pairs' composition
    own_lower_bound: ClassVar[bool] = False

    @property
    def steps_per_round(self) -> int:
        """Steps of one round (the unit the accounting composes)."""
        return 1

    @property
    def guess_rate(self) -> float:
        """A per-step rate for first guesses of calibration searches (never a bound)."""
        return 1.0

    @property
    def ties_steps(self) -> bool:
        """Whether steps are accounted together in rounds (then a ledger holds one mechanism
        on one such sampler: a line per mechanism would split rounds)."""
        return self.steps_per_round > 1

    def rounds(self, steps: int) -> int:
        """Rounds covering ``steps`` steps: a partial round is accounted as a whole one (its
        missing steps are a post-processing away) unless the scheme does better."""
        return -(-int(steps) // self.steps_per_round)

    def multiplicity(self):
        raise UnsupportedCombinationError(
            f"{self!r} is not a per-step subsampling scheme: no amplification theorem of a "
            "record's multiplicity applies to it; it is accounted by the 'pld' backend from its "
            "own dominating pair")

    def _draw(self, n, rng):
        raise UnsupportedCombinationError(
            f"{self!r} draws the batches of a whole round together: use .batches(n, rng)")

    @property
    def exact_pair(self) -> bool:
        """Whether the pair composed is the mechanism's exact worst case (the lower end of a
        bracket then bounds the mechanism's own ε)."""
        return False

    def check_mechanism(self, mechanism: Any, relation: NeighbouringRelation) -> str | None:
        """``None`` if the pld backend can account ``mechanism`` on this scheme, else why not."""
        from ..mechanisms.gaussian import GaussianMechanism

        if not isinstance(mechanism, GaussianMechanism):
            return (f"{type(self).__name__} is accounted for the Gaussian mechanism (DP-SGD's "
                    f"noisy sums); {type(mechanism).__name__} has no pair for it in privamp")
        return None

    def pld_events(self, mechanism: Any, count: int, label: str = ""):
        """The PLD engine's events for ``count`` steps (upper side and its bracket)."""
        raise NotImplementedError

    def pld_lower_events(self, mechanism: Any, count: int, label: str = ""):
        """Events whose composed *lower* end bounds the mechanism's ε from below, when the upper
        events' own lower end does not (``None``: use :meth:`pld_events`)."""
        return None

    def describe_accounting(self) -> str:
        """How the steps are accounted (shown by the CLI and ``explain``)."""
        return self.theorem()

    @property
    def short_name(self) -> str:
        """A legend label: the kind and the parameter that is not a dataset or batch size."""
        return self.kind


def _step_law(mechanism):
    """The law of one step as the allocation code takes it: θ = Δ/σ for the Gaussian (closed
    form; θ rounded to the nearest double moves the curves by far less than the laws' relative
    margin, 1e-9, which covers it), a function of t for the Laplace mechanism and symmetric
    finite pairs, two for an asymmetric finite pair (either side may hold the record),
    ``None`` for anything else."""
    import functools

    from ..mechanisms.base import Mechanism
    from ..mechanisms.gaussian import GaussianMechanism
    from ..mechanisms.laplace import LaplaceMechanism
    from ..pld import allocation

    if not isinstance(mechanism, Mechanism):
        return None
    if isinstance(mechanism, GaussianMechanism):
        return float(mechanism.theta)
    if isinstance(mechanism, LaplaceMechanism):
        return functools.partial(_laplace_law, mechanism.sensitivity / mechanism.scale)
    try:
        loss = mechanism.privacy_loss()
    except (AttributeError, NotImplementedError, TypeError):
        return None
    p, q = getattr(loss, "p", None), getattr(loss, "q", None)
    if p is None or q is None:
        return None
    p, q = tuple(np.asarray(p).tolist()), tuple(np.asarray(q).tolist())
    forward = functools.partial(allocation.discrete_allocation_law, p, q)
    if mechanism.exact_pair:
        return forward
    # an asymmetric pair: either law may be the one with the record; both are accounted and
    # the worse taken, orientation by orientation
    return (forward, functools.partial(allocation.discrete_allocation_law, q, p))


def _laplace_law(theta, steps):
    from ..pld.allocation import laplace_allocation_law

    return laplace_allocation_law(theta, steps)


@dataclass(frozen=True)
class RandomAllocation(_BatchedScheme):
    """Random allocation: every record is used in exactly ``k`` of the ``t`` steps of a round,
    the k steps chosen uniformly (k = 1: balls-in-bins — every record thrown into one of t
    batches). Rounds compose (one round per epoch; ``steps`` is rounded up to whole rounds).

    Accounting: the random-allocation pair of a round (Feldman & Shenfeld 2025, arXiv 2502.08202
    and 2602.17284) under add/remove, sensitivity C, certified in convex order — for the
    Gaussian, the Laplace mechanism and finite pairs (randomized response, a discrete PLD given
    as a pair of laws; an asymmetric pair in both orders, the worse taken); for k > 1 the
    k-out-of-t pair is dominated by k stratified one-out-of-⌈t/k⌉ or ⌊t/k⌋ rounds (see
    :mod:`privamp.pld.allocation`). The DP-SGD mapping accounted is therefore "k-out-of-t over
    each round of t steps, rounds composed": per-epoch balls-in-bins is ``RandomAllocation(t =
    steps per epoch)`` with one round per epoch.

    >>> s = RandomAllocation(t=100)
    >>> s.steps_per_round, s.rounds(250), len(s.batches(1000, rng=0))
    (100, 3, 100)
    """

    t: int
    k: int = 1
    kind: ClassVar[str] = "random-allocation"
    params: ClassVar = (_T, _K)
    relation_map: ClassVar = {R: R}
    theorems: ClassVar = {
        R: "Feldman & Shenfeld 2025 (random allocation pair, PLD; k > 1: stratified blocks)"}

    def __post_init__(self):
        t = _T.check(self.t)
        k = _K.check(self.k)
        if k > t:
            raise InvalidParameterError("k", f"at most t = {t} (k distinct steps of t)", k)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "k", k)

    def _relation_hint(self, relation):
        return ("; random allocation is analysed under add/remove (sensitivity C); the record's "
                "steps are chosen independently of the data")

    @property
    def steps_per_round(self) -> int:
        return self.t

    @property
    def guess_rate(self) -> float:
        return self.k / self.t

    @property
    def exact_pair(self) -> bool:
        return self.k == 1 or self.k == self.t

    @classmethod
    def examples(cls):
        return [cls(1), cls(2), cls(10), cls(1000), cls(10, 10), cls(10, 3), cls(100, 10)]

    @classmethod
    def at_size(cls, n, m, b=None):
        """Balls-in-bins with batches of m records on average: t = round(n/m) bins."""
        return cls(max(1, round(n / m)))

    def reduced(self):
        return None if self.k == self.t else self

    def expected_size(self, n: int) -> float:
        return n * self.k / self.t

    @property
    def fixed_size(self):
        return None

    def check_mechanism(self, mechanism, relation):
        from ..pld.allocation import _MAX_THETA

        theta = _step_law(mechanism) if self.k != self.t else None
        if isinstance(theta, float) and theta > _MAX_THETA:
            return (f"random allocation is accounted for sensitivity/sigma up to {_MAX_THETA:g} "
                    f"(here {theta:.4g}: sigma below {1 / _MAX_THETA:g} of the sensitivity, "
                    "where a round's epsilon is in the hundreds)")
        return None if self.k == self.t or _step_law(mechanism) is not None else (
            f"random allocation accounts the Gaussian, the Laplace mechanism and mechanisms "
            f"given by a finite pair (randomized response, a discrete PLD); not "
            f"{type(mechanism).__name__}")

    def pld_events(self, mechanism, count, label=""):
        """k = t: every step uses every record (the plain composition, ``count`` steps). k = 1:
        the whole rounds, and the last partial round exactly (its record's step may not have
        run). 1 < k < t: whole rounds of stratified blocks, a partial round counted whole."""
        from ..pld.allocation import allocation_blocks, random_allocation_curves
        from ..pld.curves import ProfileCurve
        from ..pld.engine import PldEvent

        count = int(count)
        if self.k == self.t:
            profile = mechanism.profile() if hasattr(mechanism, "profile") else mechanism
            return [PldEvent({"symmetric": ProfileCurve(profile)}, count, label)]
        theta = _step_law(mechanism)
        if self.k == 1:
            whole, rest = divmod(count, self.t)
            out = [PldEvent(random_allocation_curves(theta, self.t), whole, label)] \
                if whole else []
            if rest:
                out.append(PldEvent(random_allocation_curves(theta, self.t, rest), 1, label))
            return out
        rounds = self.rounds(count)
        return [PldEvent(random_allocation_curves(theta, block), blocks * rounds, label)
                for block, blocks in allocation_blocks(self.t, self.k)]

    @property
    def short_name(self) -> str:
        return f"random-allocation t={self.t}" + (f" k={self.k}" if self.k != 1 else "")

    def describe_accounting(self) -> str:
        how = ("the exact pair of a round (Feldman & Shenfeld 2025)" if self.exact_pair else
               f"bounded by {self.k} stratified one-out-of-~{self.t // self.k} rounds")
        return (f"random allocation: each record in {self.k} of every {self.t} steps "
                f"(k-out-of-t over each round of t steps; rounds composed); {how}")

    def batches(self, n_or_data: Any, rng: Any = None) -> list[np.ndarray]:
        """The t batches of one round (record indices, each sorted): every record in exactly k
        of them, the k chosen uniformly."""
        n = _dataset_size(n_or_data)
        rng = check_rng(rng)
        t, k = self.t, self.k
        if k == 1:
            step = rng.integers(0, t, size=n)
            rec = np.arange(n)
        else:
            # Floyd's algorithm, vectorised over records: k distinct steps of t, uniform
            chosen = np.empty((n, k), dtype=np.int64)
            for i, j in enumerate(range(t - k, t)):
                r = rng.integers(0, j + 1, size=n)
                dup = (chosen[:, :i] == r[:, None]).any(axis=1) if i else np.zeros(n, bool)
                chosen[:, i] = np.where(dup, j, r)
            step = chosen.ravel()
            rec = np.repeat(np.arange(n), k)
        order = np.argsort(step, kind="stable")
        cuts = np.searchsorted(step[order], np.arange(1, t))
        return [np.asarray(b, dtype=np.int64) for b in np.split(rec[order], cuts)]

    def __repr__(self) -> str:
        return f"RandomAllocation(t={self.t}" + (f", k={self.k})" if self.k != 1 else ")")


@dataclass(frozen=True)
class Shuffle(_BatchedScheme):
    """Shuffling: every epoch a uniformly random permutation of the n records is cut into
    ⌊n/m⌋ batches of m (the remainder is left out that epoch); ``order="persistent"`` draws one
    permutation and reuses it every epoch.

    Accounting. No amplification upper bound is known: the certified upper end is the
    un-amplified composition over epochs (the record is in at most one batch an epoch). The lower
    end is the best known lower bound, from Chua et al. (ICML 2024, arXiv 2403.17673; NeurIPS
    2024, arXiv 2411.04205): the other records' gradients at −C, the record's at +C against 0
    (zero-out, add/remove) or −C (substitute), and the adversary's test on the largest batch sum
    (see :mod:`privamp.pld.shuffle`). Under add/remove the neighbour is the record replaced by
    one that contributes nothing (zero-out), the reading in which batch shapes stay fixed (a
    removal that shifts every later record changes many batches and is not covered);
    sensitivity C (2C under substitution).

    >>> s = Shuffle(n=1000, m=10)
    >>> s.steps_per_round, s.rounds(250)
    (100, 3)
    """

    n: int
    m: int
    order: str = "reshuffle"
    kind: ClassVar[str] = "shuffle"
    own_lower_bound: ClassVar[bool] = True
    params: ClassVar = (_N, _M)
    relation_map: ClassVar = {R: R, S: S}
    theorems: ClassVar = {
        R: "un-amplified composition over epochs (upper); Chua et al. 2024 (lower, zero-out)",
        S: "un-amplified composition over epochs (upper); Chua et al. 2024 (lower, substitute)"}

    def __post_init__(self):
        n = _N.check(self.n)
        m = _M.check(self.m)
        if m > n:
            raise InvalidParameterError("m", f"at most n = {n} (batches of m records)", m)
        check_choice("order", self.order, _ORDERS)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "m", m)

    @classmethod
    def from_params(cls, **values):
        order = values.pop("order", None)
        scheme = super().from_params(**values)
        return scheme if order is None else cls(scheme.n, scheme.m, order)

    def describe(self):
        out = super().describe()
        if self.order != "reshuffle":
            out["order"] = self.order
        return out

    @property
    def steps_per_round(self) -> int:
        return self.n // self.m

    @classmethod
    def examples(cls):
        return [cls(1, 1), cls(10, 1), cls(10, 10), cls(1000, 10),
                cls(1000, 10, "persistent"), cls(1000, 999)]

    def reduced(self):
        return self

    def _theta_pair(self, mechanism, relation):
        theta = float(mechanism.theta)
        # (a, b): the record's batch mean under x and x', in units of σ (see the class doc)
        return (2 * theta, theta) if relation is R else (theta, 0.0)

    def pld_events(self, mechanism, count, label=""):
        from ..pld.curves import ProfileCurve
        from ..pld.engine import PldEvent

        return [PldEvent({"symmetric": ProfileCurve(mechanism.profile())}, self.rounds(count),
                         label)]

    def pld_lower_events(self, mechanism, count, label=""):
        from ..pld.engine import PldEvent
        from ..pld.shuffle import shuffle_lower_curves

        rel = getattr(mechanism, "relation", R)
        a, b = self._theta_pair(mechanism, rel)
        return [PldEvent(curves, c, label) for curves, c in
                shuffle_lower_curves(a, b, self.steps_per_round, self.rounds(count),
                                     self.order)]

    @property
    def exact_pair(self) -> bool:
        return True   # the lower end bounds the mechanism (its own lower events)

    @property
    def short_name(self) -> str:
        return f"shuffle ({self.order})"

    def describe_accounting(self) -> str:
        return (f"shuffling ({self.order}): {self.steps_per_round} batches of {self.m} per "
                "epoch; upper end: no amplification (the record's one Gaussian step per epoch, "
                "composed over epochs); lower end: the best known lower bound (Chua et al. "
                "2024) — shuffled batches accounted as Poisson under-report epsilon")

    def batches(self, n_or_data: Any, rng: Any = None,
                permutation: np.ndarray | None = None) -> list[np.ndarray]:
        """The ⌊n/m⌋ batches of one epoch (``permutation``: reuse one, for persistent order)."""
        n = _dataset_size(n_or_data)
        self._check_dataset_size(n)
        perm = check_rng(rng).permutation(n) if permutation is None else permutation
        used = self.steps_per_round * self.m
        return [np.sort(b) for b in np.split(np.asarray(perm[:used], dtype=np.int64),
                                             self.steps_per_round)]

    def expected_size(self, n: int) -> float:
        return float(self.m)

    def __repr__(self) -> str:
        return (f"Shuffle(n={self.n}, m={self.m}"
                + (f", order={self.order!r})" if self.order != "reshuffle" else ")"))


@dataclass(frozen=True)
class TruncatedPoisson(_BatchedScheme):
    """Poisson sampling at ``rate`` truncated to at most ``max_batch`` records (a uniformly
    random subset of the kept ones when there are more), as JAX/XLA training uses with padding to
    a fixed shape (:meth:`padded`). arXiv 2508.15089; dp_accounting's truncated subsampled
    Gaussian event.

    Accounting (add/remove, sensitivity C): the mixture over the number J of other records kept
    — Poisson at the rate when J < B, a substitution at rate qB/(J + 1) when J ≥ B
    (:mod:`privamp.pld.truncated`).

    >>> s = TruncatedPoisson(n=1000, rate=0.01, max_batch=20)
    >>> idx, mask = s.padded(1000, rng=0)
    >>> idx.shape, mask.dtype.name
    ((20,), 'bool')
    """

    n: int
    rate: float
    max_batch: int
    kind: ClassVar[str] = "truncated-poisson"
    params: ClassVar = (_N, _RATE, _MAX_BATCH)
    relation_map: ClassVar = {R: R}
    theorems: ClassVar = {R: "truncated Poisson: mixture over the other records' count "
                             "(arXiv 2508.15089, certified by privamp)"}

    def __post_init__(self):
        object.__setattr__(self, "n", _N.check(self.n))
        object.__setattr__(self, "rate", _RATE.check(self.rate))
        object.__setattr__(self, "max_batch", _MAX_BATCH.check(self.max_batch))

    @classmethod
    def at_size(cls, n, m, b=None):
        """Rate m/n, at most m + 4√m records (room for about four standard deviations of the
        batch size: truncation then happens on about 3e-5 of the steps)."""
        return cls(n, min(1.0, m / n), min(n, m + math.ceil(4 * math.sqrt(m))))

    @classmethod
    def examples(cls):
        return [cls(1, 1.0, 1), cls(4, 0.5, 2), cls(10, 0.5, 10), cls(1000, 0.01, 5),
                cls(1000, 0.01, 1000), cls(100, 1.0, 1)]

    @property
    def fixed_size(self):
        return None

    def reduced(self):
        from .schemes import Poisson

        return Poisson(self.rate) if self.max_batch >= self.n else self

    def expected_size(self, n: int) -> float:
        """E[min(Bin(n, q), B)] = Σ_{j < B} P(Bin(n, q) > j)."""
        from scipy.stats import binom

        j = np.arange(min(self.max_batch, n))
        return float(np.sum(binom.sf(j, n, self.rate)))

    def pld_events(self, mechanism, count, label=""):
        from ..pld.engine import PldEvent
        from ..pld.truncated import truncated_poisson_curves

        return [PldEvent(truncated_poisson_curves(float(mechanism.theta), self.n, self.rate,
                                                  self.max_batch), int(count), label)]

    @property
    def exact_pair(self) -> bool:
        return self.max_batch >= self.n   # plain Poisson then

    @property
    def guess_rate(self) -> float:
        return self.rate

    @property
    def short_name(self) -> str:
        return f"truncated-poisson B={self.max_batch}"

    def describe_accounting(self) -> str:
        return (f"truncated Poisson (rate {self.rate:g}, at most {self.max_batch} records): "
                "Poisson where the other records leave room, a substitution at rate "
                "qB/(J + 1) where J ≥ B others fill the batch (mixture over J)")

    def _draw(self, n, rng):
        from ..pld.truncated import draw_truncated_poisson

        idx, mask = draw_truncated_poisson(n, self.rate, self.max_batch, rng)
        return idx[mask]

    def sample(self, n_or_data: Any, rng: Any = None) -> Subsample:
        n = _dataset_size(n_or_data)
        self._check_dataset_size(n)
        return _as_subsample(self._draw(n, check_rng(rng)))

    def padded(self, n_or_data: Any, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """One batch of fixed shape: ``(indices, mask)``, both of length ``max_batch``
        (``mask`` False on padding entries, whose index is 0)."""
        from ..pld.truncated import draw_truncated_poisson

        n = _dataset_size(n_or_data)
        self._check_dataset_size(n)
        return draw_truncated_poisson(n, self.rate, self.max_batch, check_rng(rng))

    def __repr__(self) -> str:
        return f"TruncatedPoisson(n={self.n}, rate={self.rate:g}, max_batch={self.max_batch})"
