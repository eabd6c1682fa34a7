"""A PyTorch batch sampler that draws batches by a privamp scheme (needs the ``torch`` extra).

:class:`TorchBatchSampler` is a ``torch.utils.data.Sampler`` of index lists for
``DataLoader(dataset, batch_sampler=...)``. It wraps a
:class:`~privamp.applications.samplers.SchemeBatchSampler`, so it draws with NumPy from the
``rng`` it is given (not from torch's global generator) and carries its scheme: build the
accountant from the sampler (:meth:`TorchBatchSampler.accountant`), never from a sampling rate
typed in separately (Opacus issue #813: an accountant fed a rate that the loader did not use).

Poisson batches can be empty; PyTorch's default collate fails on an empty list, so
:meth:`TorchBatchSampler.data_loader` (or :func:`collate_allowing_empty`) returns zero-length
tensors of the right shapes and dtypes for such a step — DP-SGD must still take the step and add
its noise.

>>> import torch
>>> from torch.utils.data import TensorDataset
>>> from privamp.sampling import Poisson
>>> ds = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))
>>> sampler = TorchBatchSampler(Poisson(0.01), steps=3, n=10, rng=0)
>>> [tuple(x.shape) for x, y in sampler.data_loader(ds)]   # empty with probability 0.99^10
[(0, 2), (1, 2), (0, 2)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..errors import MissingDependencyError

try:
    import torch
    from torch.utils.data import DataLoader, Sampler
    from torch.utils.data._utils.collate import default_collate
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("torch", "torch") from exc

from ..sampling.schemes import SamplingScheme
from ._forward import forwarded
from .samplers import SchemeBatchSampler

__all__ = ["TorchBatchSampler", "collate_allowing_empty"]


def _empty_like(batch: Any) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch[:0]
    if isinstance(batch, tuple | list):
        return type(batch)(_empty_like(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _empty_like(v) for k, v in batch.items()}
    raise TypeError(f"cannot make an empty batch of {type(batch).__name__}")


def collate_allowing_empty(dataset: Any, collate: Callable = default_collate) -> Callable:
    """``collate`` for non-empty batches; for an empty one, zero-length tensors shaped like
    ``collate([dataset[0]])`` (same structure, dtypes and trailing shapes)."""

    def collate_fn(batch):
        if len(batch) == 0:
            return _empty_like(collate([dataset[0]]))
        return collate(batch)

    return collate_fn


class TorchBatchSampler(Sampler):
    """``torch.utils.data.Sampler`` of index batches drawn by a privamp scheme.

    Parameters
    ----------
    scheme : SamplingScheme
        Poisson, WOR, WR, MustOW, MustWO, MustWW or a StageChain.
    steps : int
        Batches per pass (``len(sampler)``).
    n : int, optional
        Dataset size (default: the scheme's n; required for Poisson without one). Checked
        against ``len(dataset)`` by :meth:`data_loader`.
    rng : numpy.random.Generator or int, optional
        The only source of randomness.

    Each batch is a list of indices, a record repeated once per copy (WR, MUST).
    """

    def __init__(self, scheme: SamplingScheme, steps: int, *, n: int | None = None,
                 rng: Any = None):
        super().__init__()
        self._inner = SchemeBatchSampler(scheme, steps, n=n, rng=rng)

    scheme = forwarded("_inner.scheme")
    n = forwarded("_inner.n")
    steps = forwarded("_inner.steps")
    batches_drawn = forwarded("_inner.batches_drawn")
    expected_batch_size = forwarded("_inner.expected_batch_size")

    def __len__(self) -> int:
        return self._inner.steps

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self._inner:
            yield batch.tolist()

    def base_relation(self, relation=None):
        """See :meth:`SchemeBatchSampler.base_relation`."""
        return self._inner.base_relation(relation)

    def accountant(self, mechanism: Any, *, relation=None, steps: int | None = None,
                   backend: str = "pld"):
        """The accountant of the batches drawn so far, on this sampler's scheme (see
        :meth:`SchemeBatchSampler.accountant`)."""
        return self._inner.accountant(mechanism, relation=relation, steps=steps,
                                      backend=backend)

    def data_loader(self, dataset: Any, **kwargs: Any) -> DataLoader:
        """A ``DataLoader`` over ``dataset`` with this batch sampler and a collate function that
        allows empty batches (pass ``collate_fn`` to wrap your own)."""
        from ..errors import InvalidParameterError

        if len(dataset) != self.n:
            raise InvalidParameterError(
                "dataset", f"a dataset of the sampler's size n = {self.n}", len(dataset))
        collate = kwargs.pop("collate_fn", default_collate)
        return DataLoader(dataset, batch_sampler=self,
                          collate_fn=collate_allowing_empty(dataset, collate), **kwargs)

    def __repr__(self) -> str:
        return repr(self._inner).replace("SchemeBatchSampler", "TorchBatchSampler")
