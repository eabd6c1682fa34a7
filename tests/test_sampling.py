"""Sampling schemes: multiplicity pmfs, samplers against exact laws, η ordering, validation."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from oracles.enumerate import scheme_law
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.relations import NeighbouringRelation
from privamp.sampling import (
    MultiplicityPmf,
    MustOW,
    MustWO,
    MustWW,
    Poisson,
    StageChain,
    Subsample,
    WithoutReplacement,
    WithReplacement,
)

R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE

SCHEMES = [
    Poisson(0.05), WithoutReplacement(60, 12), WithReplacement(60, 12), MustOW(60, 20, 12),
    MustWO(60, 20, 12), MustWW(60, 20, 12), StageChain(60, [("wr", 30), ("wor", 20), ("wr", 10)]),
]


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_multiplicity_pmf_sums_to_one(scheme):
    """Σ_k P(K = k) + tail = 1 within 1e-12 and η = 1 − P(K = 0)."""
    pmf = scheme.multiplicity()
    assert pmf.total_mass() == pytest.approx(1.0, abs=1e-12)
    assert scheme.eta == pytest.approx(1 - pmf.pmf[0], rel=1e-12)
    assert scheme.eta >= 1 - pmf.pmf[0] - 1e-16  # rounded up


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_sampler_multiplicity_matches_pmf(scheme):
    """Chi-square test (fixed seed): copies of record 0 in 20,000 drawn subsamples."""
    rng = np.random.default_rng(20241121)
    n = 60
    draws = 20_000
    copies = np.empty(draws, dtype=int)
    for i in range(draws):
        sub = scheme.sample(n, rng)
        hit = np.searchsorted(sub.indices, 0)
        copies[i] = sub.counts[hit] if hit < sub.indices.size and sub.indices[hit] == 0 else 0
    pmf = scheme.multiplicity().pmf
    observed = np.bincount(copies, minlength=pmf.size)[: pmf.size]
    expected = pmf * draws
    # pool the sparse upper tail into one bin
    cut = max(1, int(np.flatnonzero(expected >= 5)[-1]))
    obs = np.append(observed[:cut], observed[cut:].sum())
    exp = np.append(expected[:cut], expected[cut:].sum())
    keep = exp > 0
    chi2 = float(np.sum((obs[keep] - exp[keep]) ** 2 / exp[keep]))
    dof = max(int(keep.sum()) - 1, 1)
    assert stats.chi2.sf(chi2, dof) > 1e-4, (chi2, dof, obs, exp)


def test_must_wo_is_wr_in_law():
    """Corollary 6: MUST.WO(n, b, m) has the multiplicity law of WR(n, m) (η 0.329814094)."""
    wo = MustWO(1000, 500, 400).multiplicity().pmf
    wr = WithReplacement(1000, 400).multiplicity().pmf
    np.testing.assert_allclose(wo, wr, rtol=1e-11, atol=1e-300)
    assert MustWO(1000, 500, 400).eta == pytest.approx(0.329814094, abs=1e-9)


@pytest.mark.parametrize(
    ("scheme", "eta"),
    [
        (WithReplacement(100, 10), 0.09561792499119559),  # catalogue §6.4
        (WithReplacement(10, 5), 0.40951),
        (WithReplacement(4, 3), 0.578125),
        (MustOW(1000, 500, 400), 0.2755154175),  # catalogue §2.7
        (MustWW(1000, 500, 400), 0.240907592),
        (MustOW(10_000, 118, 200), 0.0096489382),  # catalogue S7
        (WithoutReplacement(5, 2), 0.4),
        (Poisson(0.37), 0.37),
    ],
)
def test_eta_reference_values(scheme, eta):
    """η values from the catalogue (printed to 8–10 significant digits)."""
    assert scheme.eta == pytest.approx(eta, rel=5e-9)


@settings(max_examples=200)
@given(n=st.integers(2, 5000), data=st.data())
def test_proposition7_eta_ordering(n, data):
    """η_OW ≤ η_WR ≤ η_WOR = η_Poisson(m/n); OW = WR only if b = n; WR = WOR only if m = 1."""
    m = data.draw(st.integers(1, n))
    b = data.draw(st.integers(1, n))
    ow, wr, wor = MustOW(n, b, m).eta, WithReplacement(n, m).eta, WithoutReplacement(n, m).eta
    assert ow <= wr * (1 + 1e-12)
    assert wr <= wor * (1 + 1e-12)
    assert wor == pytest.approx(Poisson(m / n).eta, rel=1e-15)
    if b < n and m > 1:
        assert ow < wr * (1 - 1e-13)
    if m > 1:
        assert wr < wor
    if m == 1:
        assert wr == pytest.approx(wor, rel=1e-12)


def test_large_schemes_truncate_with_a_bounded_tail():
    """n = 10^6: supports are cut where a Chernoff bound on the tail is below 1e-300."""
    for scheme in [WithReplacement(10**6, 10**5), MustWW(10**6, 2 * 10**5, 10**5),
                   MustOW(10**6, 2 * 10**5, 10**5)]:
        pmf = scheme.multiplicity()
        assert pmf.support_size < 2000
        assert pmf.log_tail <= math.log(1e-300) or pmf.log_tail == -math.inf
        assert pmf.total_mass() == pytest.approx(1.0, abs=1e-12)
        assert pmf.max_multiplicity is None or pmf.log_tail == -math.inf


def _exact_size_laws(spec, n):
    law = scheme_law(tuple(range(n)), spec)
    sizes, distinct = Counter(), Counter()
    for y, prob in law.items():
        sizes[len(y)] += prob
        distinct[len(set(y))] += prob
    return sizes, distinct


@pytest.mark.parametrize(
    ("scheme", "spec"),
    [
        (Poisson(0.4), ("poisson", 0.4)),
        (WithoutReplacement(6, 3), ("chain", [("wor", 3)])),
        (WithReplacement(6, 4), ("chain", [("wr", 4)])),
        (MustOW(6, 4, 3), ("chain", [("wor", 4), ("wr", 3)])),
        (MustWO(6, 4, 3), ("chain", [("wr", 4), ("wor", 3)])),
        (MustWW(6, 3, 4), ("chain", [("wr", 3), ("wr", 4)])),
    ],
    ids=repr,
)
def test_sampler_sizes_and_distinct_counts_match_exact_laws(scheme, spec):
    """Subsample size and number of distinct records follow their exact (enumerated) laws."""
    rng = np.random.default_rng(7)
    n = 6
    draws = 20_000
    samples = [scheme.sample(n, rng) for _ in range(draws)]
    exact_sizes, exact_distinct = _exact_size_laws(spec, n)
    for observed, exact in ((Counter(s.size for s in samples), exact_sizes),
                            (Counter(s.distinct for s in samples), exact_distinct)):
        keys = sorted(set(exact) | set(observed))
        exp = np.array([exact.get(k, 0.0) * draws for k in keys])
        obs = np.array([observed.get(k, 0) for k in keys])
        assert np.all(obs[exp == 0] == 0)
        keep = exp > 0
        if keep.sum() <= 1:
            assert obs[keep].sum() == draws
            continue
        chi2 = float(np.sum((obs[keep] - exp[keep]) ** 2 / exp[keep]))
        assert stats.chi2.sf(chi2, int(keep.sum()) - 1) > 1e-4


@pytest.mark.parametrize("scheme", [Poisson(0.001), WithoutReplacement(10**7, 10**5),
                                    WithReplacement(10**7, 10**5),
                                    MustOW(10**7, 2 * 10**5, 10**5),
                                    MustWW(10**7, 2 * 10**5, 10**5)], ids=repr)
def test_samplers_at_ten_million_records(scheme):
    """Real draws at n = 10^7: distinct records average n·η (each record appears w.p. η)."""
    rng = np.random.default_rng(3)
    n = 10**7
    distinct = np.array([scheme.sample(n, rng).distinct for _ in range(5)])
    mean = n * scheme.eta
    assert abs(distinct.mean() - mean) < 6 * math.sqrt(mean) + 1
    sub = scheme.sample(n, rng)
    assert np.all(np.diff(sub.indices) > 0) and sub.indices[-1] < n and sub.indices[0] >= 0


def test_subsample_from_records_and_reproducibility():
    """sample() takes a dataset size or an array; take() returns records by multiplicity."""
    data = np.arange(100) * 10
    scheme = WithReplacement(100, 30)
    a = scheme.sample(data, rng=11)
    b = scheme.sample(100, rng=np.random.default_rng(11))
    np.testing.assert_array_equal(a.indices, b.indices)
    rows = a.take(data)
    assert rows.shape == (30,) and set(rows) <= set(data)
    assert Subsample(np.array([1]), np.array([2])).multiset().tolist() == [1, 1]
    empty = Poisson(1e-9).sample(10, rng=0)  # empty Poisson batches are normal
    assert empty.size == 0 and empty.distinct == 0


@pytest.mark.parametrize(
    ("make", "parameter"),
    [
        (lambda: Poisson(1.5), "rate"),
        (lambda: Poisson(0.0), "rate"),
        (lambda: Poisson(math.nan), "rate"),
        (lambda: WithoutReplacement(10, 20), "m"),
        (lambda: WithoutReplacement(0, 1), "n"),
        (lambda: WithReplacement(10, 0), "m"),
        (lambda: MustOW(10, 20, 5), "b"),
        (lambda: MustWO(10, 5, 6), "m"),
        (lambda: MustWW(10, 0, 6), "b"),
        (lambda: StageChain(10, [("wor", 5), ("wor", 6)]), "stages[1] size"),
        (lambda: StageChain(10, [("xyz", 5)]), "stages[0]"),
        (lambda: StageChain(10, []), "stages"),
        (lambda: WithReplacement(10, 5).sample(11, rng=0), "n_or_data"),
    ],
)
def test_bad_sizes_are_rejected(make, parameter):
    """Inconsistent sizes give InvalidParameterError naming the parameter."""
    with pytest.raises(InvalidParameterError) as info:
        make()
    assert str(info.value).startswith(f"{parameter} must be")


def test_relations_and_unsupported_combinations():
    """Each scheme declares its relations and the base relation it needs."""
    assert Poisson(0.1).natural_relation is R and Poisson(0.1).base_relation(S) is S
    assert WithReplacement(10, 3).base_relation(R) is S  # Theorem 11
    with pytest.raises(UnsupportedCombinationError, match="add-remove.*supported: substitute"):
        WithoutReplacement(10, 3).base_relation(R)
    with pytest.raises(UnsupportedCombinationError, match="multistage"):
        MustWW(10, 5, 3).base_relation("add-remove")


def test_multiplicity_pmf_helpers():
    """point, bernoulli, transitions and the η of a certain record."""
    assert MultiplicityPmf.point(1).eta == 1.0
    assert MultiplicityPmf.bernoulli(0.25).eta == pytest.approx(0.25)
    hyp = MultiplicityPmf.point(2).then_without_replacement(5, 2)
    np.testing.assert_allclose(hyp.pmf, [0.3, 0.6, 0.1], rtol=1e-13)
    binom = MultiplicityPmf.point(2).then_with_replacement(4, 3)
    np.testing.assert_allclose(binom.pmf, stats.binom.pmf(np.arange(4), 3, 0.5), rtol=1e-13)
