"""Batch samplers for data pipelines: NumPy (SchemeBatchSampler) and PyTorch
(TorchBatchSampler in a real DataLoader). Batch-size and multiplicity statistics are compared
with each scheme's exact laws; the accountant is built from the sampler's own scheme."""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy import stats

from privamp import GaussianMechanism, InvalidParameterError
from privamp.accountant import Accountant
from privamp.applications.samplers import (
    SchemeBatchSampler,
    expected_batch_size,
    multiplicity_moments,
)
from privamp.sampling import (
    MustOW,
    MustWO,
    MustWW,
    Poisson,
    StageChain,
    WithoutReplacement,
    WithReplacement,
)

N = 40
SCHEMES = {
    "poisson": Poisson(0.15),
    "wor": WithoutReplacement(N, 8),
    "wr": WithReplacement(N, 8),
    "must-ow": MustOW(N, 12, 8),
    "must-wo": MustWO(N, 12, 8),
    "must-ww": MustWW(N, 12, 8),
    "chain": StageChain(N, [("wr", 20), ("wor", 12), ("wr", 8)]),
}


def _multiplicity_check(batches: list[np.ndarray], scheme, n: int) -> None:
    """Pooled per-record multiplicity frequencies against the scheme's exact pmf, and the
    distinct-count mean against n·η."""
    counts = np.stack([np.bincount(b, minlength=n) for b in batches])  # (batches, n)
    pmf = scheme.multiplicity().pmf
    k_max = max(int(counts.max()), pmf.size - 1)
    freq = np.bincount(counts.ravel(), minlength=k_max + 1) / counts.size
    p = np.zeros(k_max + 1)
    p[:pmf.size] = pmf
    # the pooled records are dependent within a batch; the SE of one record's frequency over
    # the batches is a conservative scale
    se = np.sqrt(p * (1 - p) / len(batches))
    assert np.all(np.abs(freq - p) <= 5 * se + 2e-3), (freq[:5], p[:5])
    distinct = (counts > 0).sum(axis=1)
    exact = n * scheme.eta
    assert abs(distinct.mean() - exact) <= 5 * distinct.std() / np.sqrt(len(batches)) + 1e-9


@pytest.mark.parametrize("name", list(SCHEMES))
def test_numpy_sampler_statistics_match_the_exact_laws(name):
    scheme = SCHEMES[name]
    sampler = SchemeBatchSampler(scheme, steps=3000, n=N, rng=7)
    batches = list(sampler)
    assert sampler.batches_drawn == 3000 and len(sampler) == 3000
    sizes = np.array([b.size for b in batches])
    if name == "poisson":
        # Binomial(n, γ) batch sizes: a chi-square test on the bins with enough mass
        k = np.arange(N + 1)
        expected = stats.binom.pmf(k, N, 0.15) * sizes.size
        keep = expected > 5
        observed = np.bincount(sizes, minlength=N + 1)
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum())
        assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-4
    else:
        assert np.all(sizes == scheme.m)
    assert expected_batch_size(scheme, N) == pytest.approx(sizes.mean(), rel=0.05)
    _multiplicity_check(batches, scheme, N)


def test_subsamples_give_distinct_indices_and_counts():
    sampler = SchemeBatchSampler(MustWW(100, 10, 30), steps=5, rng=0)
    for sub in sampler.subsamples():
        assert sub.size == 30 and np.all(np.diff(sub.indices) > 0) and np.all(sub.counts >= 1)
        assert sub.distinct <= 10


def test_same_seed_same_batches_and_passes_continue_the_stream():
    a = SchemeBatchSampler(Poisson(0.1), steps=4, n=50, rng=3)
    b = SchemeBatchSampler(Poisson(0.1), steps=4, n=50, rng=3)
    first = [x.tolist() for x in a]
    assert first == [x.tolist() for x in b]
    assert [x.tolist() for x in a] != first  # the second pass draws new batches
    assert a.batches_drawn == 8


def test_multiplicity_moments_match_simulation():
    """Var K and Cov(K_i, K_j) (used by the bootstrap's unbiased estimates) by simulation."""
    rng = np.random.default_rng(1)
    for scheme in (Poisson(0.2), WithoutReplacement(20, 5), MustOW(20, 6, 9), MustWW(20, 6, 9)):
        v, w = multiplicity_moments(scheme, 20)
        counts = np.stack([np.bincount(scheme.sample(20, rng).multiset(), minlength=20)
                           for _ in range(20_000)])
        cov = np.cov(counts, rowvar=False)
        assert np.mean(np.diag(cov)) == pytest.approx(v, rel=0.03)
        off = cov[~np.eye(20, dtype=bool)]
        assert np.mean(off) == pytest.approx(w, abs=0.03 * v)


def test_accountant_is_built_from_the_sampler_scheme_and_drawn_batches():
    """The Opacus #813 trap cannot happen: the sampler, not the user, tells the accountant the
    scheme and the number of steps."""
    sampler = SchemeBatchSampler(Poisson(0.01), steps=1000, n=10_000, rng=0)
    mech = GaussianMechanism(1.0)
    planned = sampler.accountant(mech)
    assert planned.steps == 1000 and planned.events[0].scheme is sampler.scheme
    for i, _ in enumerate(sampler):
        if i == 99:
            break
    acc = sampler.accountant(mech)
    assert acc.steps == 100
    ref = Accountant().add(mech, 100, scheme=Poisson(0.01)).epsilon(1e-5)
    assert acc.epsilon(1e-5) == ref
    # the scheme wants a base mechanism under substitution for WOR: a wrong one is refused
    wor = SchemeBatchSampler(WithoutReplacement(100, 10), steps=5)
    assert wor.base_relation().value == "substitute"
    with pytest.raises(Exception, match="substitute"):
        wor.accountant(GaussianMechanism(1.0))


@pytest.mark.parametrize("kwargs, param", [
    ({"scheme": WithReplacement(10, 20), "steps": 5}, "m"),
    ({"scheme": WithoutReplacement(10, 5), "steps": 5, "n": 11}, "n"),
    ({"scheme": Poisson(0.1), "steps": 5}, "n"),
    ({"scheme": Poisson(0.1), "steps": 0, "n": 10}, "steps"),
    ({"scheme": "poisson", "steps": 5, "n": 10}, "scheme"),
])
def test_bad_sampler_input_is_a_clear_error(kwargs, param):
    with pytest.raises(InvalidParameterError) as info:
        SchemeBatchSampler(**kwargs)
    assert info.value.parameter == param


# ---------------------------------------------------------------------------------------------
# PyTorch (the torch extra; CI installs the CPU build)
# ---------------------------------------------------------------------------------------------


def _torch():
    if os.environ.get("CI"):
        import torch  # CI must have the extra: fail rather than skip there
        return torch
    return pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["poisson", "wor", "wr", "must-ow", "must-wo", "must-ww"])
def test_torch_batch_sampler_in_a_dataloader_matches_the_exact_laws(name):
    torch = _torch()
    from torch.utils.data import DataLoader, TensorDataset

    from privamp.applications.torch_sampler import TorchBatchSampler

    scheme = SCHEMES[name]
    features = torch.arange(N, dtype=torch.float32).repeat(3, 1).T  # row i = (i, i, i)
    labels = torch.arange(N) % 2
    ds = TensorDataset(features, labels)
    sampler = TorchBatchSampler(scheme, steps=3000, n=N, rng=11)
    loader = sampler.data_loader(ds)
    assert isinstance(loader, DataLoader) and len(loader) == 3000
    batches = []
    for x, y in loader:
        assert x.dtype == torch.float32 and y.dtype == labels.dtype
        assert x.shape[1:] == (3,) and x.shape[0] == y.shape[0]
        idx = x[:, 0].long()
        assert torch.equal(y, idx % 2) and torch.equal(x[:, 1].long(), idx)
        batches.append(idx.numpy())
    assert sampler.batches_drawn == 3000
    sizes = np.array([b.size for b in batches])
    if name == "poisson":
        assert abs(sizes.mean() - 0.15 * N) < 5 * np.sqrt(0.15 * 0.85 * N / 3000)
        assert abs(sizes.var() - 0.15 * 0.85 * N) < 0.1 * 0.15 * 0.85 * N
    else:
        assert np.all(sizes == scheme.m)
    _multiplicity_check(batches, scheme, N)


def test_torch_empty_poisson_batches_are_zero_length_tensors():
    torch = _torch()
    from torch.utils.data import TensorDataset

    from privamp.applications.torch_sampler import TorchBatchSampler

    ds = TensorDataset(torch.randn(50, 4, 2), torch.zeros(50, dtype=torch.int64))
    sampler = TorchBatchSampler(Poisson(0.002), steps=200, n=50, rng=0)
    shapes = [(tuple(x.shape), y.dtype) for x, y in sampler.data_loader(ds)]
    empty = [s for s in shapes if s[0][0] == 0]
    # P(empty) = 0.998^50 ≈ 0.905
    assert 150 < len(empty) < 200
    assert all(s == ((0, 4, 2), torch.int64) for s in empty)
    assert sampler.accountant(GaussianMechanism(1.0)).steps == 200


def test_torch_sampler_refuses_a_dataset_of_another_size():
    torch = _torch()
    from torch.utils.data import TensorDataset

    from privamp.applications.torch_sampler import TorchBatchSampler

    sampler = TorchBatchSampler(WithoutReplacement(10, 3), steps=2)
    with pytest.raises(InvalidParameterError, match="dataset"):
        sampler.data_loader(TensorDataset(torch.zeros(11, 1)))
    assert [len(b) for b in sampler] == [3, 3]
