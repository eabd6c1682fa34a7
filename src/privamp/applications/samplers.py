"""Batch samplers for data pipelines: index batches drawn by a privamp sampling scheme.

A :class:`SchemeBatchSampler` draws ``steps`` batches of record indices (with their
multiplicities) from a dataset of ``n`` records by a :class:`~privamp.sampling.SamplingScheme` —
Poisson, without or with replacement, MUST.OW / MUST.WO / MUST.WW or a stage chain — using only
the ``rng`` it was given. It *carries its scheme*: the accountant for the training run is built
from the sampler itself (:meth:`SchemeBatchSampler.accountant`), with the scheme the batches were
really drawn by and the number of batches really drawn, so the privacy analysis cannot be handed
a sampling rate (or a batch size, or a dataset size) that disagrees with the sampler. That
disagreement is a known trap: in Opacus issue #813 the accountant's sample rate was computed from
the data loader and did not match the Poisson sampler actually used.

Batches are what the scheme draws:

* Poisson(γ): each record independently with probability γ; the batch size is Binomial(n, γ),
  and an **empty batch is a normal outcome** (probability (1 − γ)^n), not an error — DP-SGD must
  still add its noise on such a step;
* WOR(n, m): m distinct records;
* WR(n, m), MUST.*: m draws, so a record can appear several times (the batch lists it once per
  copy; :meth:`SchemeBatchSampler.subsamples` gives distinct indices and counts instead);
* RandomAllocation(t, k): every record in k of each round's t batches (batch sizes vary);
  Shuffle(n, m): each epoch's permutation cut into ⌊n/m⌋ batches of m; TruncatedPoisson(n, q, B):
  Poisson batches of at most B records (:meth:`SchemeBatchSampler.padded` gives them with a
  mask at the fixed shape B, as JAX/XLA needs).

The PyTorch version, a ``torch.utils.data.Sampler`` for ``DataLoader(batch_sampler=...)``, is
:class:`privamp.applications.torch_sampler.TorchBatchSampler` (needs the ``torch`` extra).

>>> from privamp.sampling import MustOW
>>> sampler = SchemeBatchSampler(MustOW(1000, 50, 20), steps=3, rng=0)
>>> [b.size for b in sampler], sampler.batches_drawn
([20, 20, 20], 3)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._validation import check_int, check_rng
from ..errors import InvalidParameterError, InvalidTypeError
from ..relations import NeighbouringRelation
from ..sampling.schemes import Poisson, SamplingScheme, Subsample

__all__ = ["SchemeBatchSampler", "check_batch_fits", "expected_batch_size",
           "multiplicity_moments"]


def expected_batch_size(scheme: SamplingScheme, n: int) -> float:
    """E[batch size] (with multiplicity) of ``scheme`` on ``n`` records: γn for Poisson, the
    final subsample size m otherwise. This is the fixed normaliser of DP-SGD's averaged gradient
    and of the bootstrap's moments (dividing by the realised size would make the sensitivity
    depend on the data under add/remove).

    >>> from privamp.sampling import Poisson, WR
    >>> expected_batch_size(Poisson(0.01), 5000), expected_batch_size(WR(100, 7), 100)
    (50.0, 7.0)
    """
    return scheme.expected_size(n)


def multiplicity_moments(scheme: SamplingScheme, n: int) -> tuple[float, float]:
    """(Var K, Cov(K_i, K_j)) of the multiplicities of two distinct records in one batch.

    ``Var K`` comes from the scheme's exact multiplicity law; the covariance from
    ``Var(batch size) = n Var K + n(n − 1) Cov`` (exchangeable records): the batch size is
    fixed for every scheme but Poisson (covariance ``−Var K/(n − 1)``), and Binomial(n, γ) for
    Poisson (covariance 0). These give the sampling variance of any weighted sum
    ``Σ_i K_i a_i`` (used by the DP bootstrap's unbiased variance estimate and its intervals).

    >>> from privamp.sampling import WR
    >>> v, w = multiplicity_moments(WR(10, 5), 10)
    >>> round(v, 12), round(w, 12)
    (0.45, -0.05)
    """
    pmf = scheme.multiplicity()
    if pmf.log_tail > -np.inf:  # pragma: no cover - supports up to 20,000 are kept whole
        raise InvalidParameterError("scheme", "a scheme whose multiplicity law is not truncated",
                                    scheme)
    p = pmf.pmf
    k = np.arange(p.size, dtype=float)
    mean = float(np.dot(k, p))
    var = float(np.dot(k * k, p)) - mean * mean
    if isinstance(scheme, Poisson):
        return var, 0.0
    if n == 1:
        return var, 0.0
    return var, -var / (n - 1)


def check_batch_fits(scheme: SamplingScheme, n: int) -> int:
    """Check that ``scheme`` can draw batches from ``n`` records: n matches the scheme's own
    dataset size, and the batch size m is at most n. Returns n.

    Sampling with replacement allows m > n mathematically, but a batch larger than the data is
    almost certainly a mistake in a data pipeline (a swapped n and m), so it is refused here.
    """
    n = check_int("n", n, "[1, inf)")
    own = getattr(scheme, "n", None)
    if own is not None and own != n:
        raise InvalidParameterError(
            "n", f"the dataset size of the sampling scheme {scheme!r} (n = {own})", n)
    m = getattr(scheme, "m", None)
    if m is not None and m > n:
        raise InvalidParameterError("m", f"at most the dataset size n = {n} (a batch larger "
                                         "than the data)", m)
    return n


class SchemeBatchSampler:
    """An iterable of ``steps`` index batches drawn by ``scheme`` (NumPy).

    Parameters
    ----------
    scheme : SamplingScheme
        How each batch is drawn (Poisson, WOR, WR, MustOW, MustWO, MustWW, StageChain).
    steps : int
        Batches per pass (``len(sampler)``); each ``iter()`` draws ``steps`` new batches.
    n : int, optional
        Number of records; defaults to the scheme's own ``n`` (required for Poisson without
        one).
    rng : numpy.random.Generator or int, optional
        The only source of randomness; successive passes continue its stream.

    Notes
    -----
    Iterating yields 1-D ``int64`` arrays of record indices, each record repeated by its
    multiplicity (sorted; possibly empty for Poisson). :meth:`subsamples` yields
    :class:`~privamp.sampling.Subsample` objects (distinct indices and counts) instead, which is
    what gradient code wants: one gradient per distinct record, weighted by its count.

    The sampler counts the batches it has handed out (:attr:`batches_drawn`); the accountant it
    builds (:meth:`accountant`) composes that many steps of the given mechanism on *its* scheme.

    >>> from privamp.sampling import Poisson
    >>> s = SchemeBatchSampler(Poisson(0.05), steps=4, n=100, rng=1)
    >>> [len(b) for b in s]
    [5, 3, 8, 3]
    """

    def __init__(self, scheme: SamplingScheme, steps: int, *, n: int | None = None,
                 rng: Any = None):
        if not isinstance(scheme, SamplingScheme):
            raise InvalidTypeError("scheme", "a privamp SamplingScheme", scheme)
        self.steps = check_int("steps", steps, "[1, inf)")
        if n is None:
            n = getattr(scheme, "n", None)
            if n is None:
                raise InvalidParameterError("n", "given (the dataset size) for a scheme without "
                                                 "n (Poisson, random allocation)", None)
        self.n = check_batch_fits(scheme, n)
        self._scheme = scheme
        self._rng = check_rng(rng)
        self.batches_drawn = 0
        self._pending: list[np.ndarray] = []
        self._permutation: np.ndarray | None = None

    @property
    def scheme(self) -> SamplingScheme:
        """The scheme the batches are drawn by (read-only: the accountant uses it)."""
        return self._scheme

    @property
    def expected_batch_size(self) -> float:
        """γn for Poisson, m otherwise (see :func:`expected_batch_size`)."""
        return expected_batch_size(self._scheme, self.n)

    def __len__(self) -> int:
        return self.steps

    def subsamples(self) -> Iterator[Subsample]:
        """One pass of ``steps`` batches as distinct indices with multiplicities."""
        for _ in range(self.steps):
            sub = self._next()
            self.batches_drawn += 1
            yield sub

    def _next(self) -> Subsample:
        scheme = self._scheme
        if not hasattr(scheme, "batches"):
            return scheme.sample(self.n, self._rng)
        # random allocation and shuffling draw a whole round of batches at once; the rounds
        # continue across passes (a pass of ``steps`` need not be a whole round)
        if not self._pending:
            if getattr(scheme, "order", None) == "persistent":
                if self._permutation is None:
                    self._permutation = self._rng.permutation(self.n)
                round_ = scheme.batches(self.n, permutation=self._permutation)
            else:
                round_ = scheme.batches(self.n, self._rng)
            self._pending = list(reversed(round_))
        idx = self._pending.pop()
        return Subsample(idx, np.ones(idx.size, dtype=np.int64))

    def padded(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """One pass of fixed-shape batches ``(indices, mask)`` (truncated Poisson: JAX/XLA
        static shapes; padding entries have index 0 and mask False)."""
        if not hasattr(self._scheme, "padded"):
            raise InvalidParameterError("scheme", "a TruncatedPoisson scheme (fixed-shape "
                                                  "batches with a mask)", self._scheme)
        for _ in range(self.steps):
            out = self._scheme.padded(self.n, self._rng)
            self.batches_drawn += 1
            yield out

    def __iter__(self) -> Iterator[np.ndarray]:
        for sub in self.subsamples():
            yield sub.multiset()

    def base_relation(self, relation: NeighbouringRelation | str | None = None
                      ) -> NeighbouringRelation:
        """The relation the per-step mechanism must be stated under for ``relation`` on the
        whole dataset (default: the scheme's natural relation)."""
        return self._scheme.resolve(relation)[1]

    def accountant(self, mechanism: Any, *, relation: NeighbouringRelation | str | None = None,
                   steps: int | None = None, backend: str = "pld"):
        """An :class:`~privamp.accountant.Accountant` holding ``mechanism`` composed over this
        sampler's batches, on this sampler's scheme.

        ``steps`` defaults to the batches drawn so far (every batch handed to the pipeline
        counts, even one prefetched and never used: over-counting is the safe side), or to the
        planned ``steps`` before the first batch. ``mechanism`` is the per-batch mechanism
        stated under :meth:`base_relation` (e.g. ``GaussianMechanism(σ, 2C, "substitute")`` for
        a clipped-gradient sum under a fixed-size scheme).
        """
        from ..accountant import Accountant

        count = steps if steps is not None else (self.batches_drawn or self.steps)
        outer, _ = self._scheme.resolve(relation)
        return Accountant(backend).add(mechanism, count, scheme=self._scheme, relation=outer)

    def __repr__(self) -> str:
        return (f"SchemeBatchSampler({self._scheme!r}, steps={self.steps}, n={self.n}, "
                f"drawn={self.batches_drawn})")
