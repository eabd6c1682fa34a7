"""A long-lived AccountingCache stays bounded: past MAX_PINNED objects kept alive for their
identity keys it starts a new generation (tables emptied, pins dropped, tokens changed), and
its answers stay exactly those of an accountant without a cache — also when objects are
created, dropped and their identities reused across generations."""

from __future__ import annotations

import gc

import pytest

from privamp import Accountant, GaussianMechanism, LaplaceMechanism
from privamp import cache as cache_mod
from privamp.cache import AccountingCache
from privamp.sampling import Poisson


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(cache_mod, "MAX_PINNED", 3)


def _events():
    # group pairs are built per query (new curve objects each time), plain events once per key
    yield dict(mechanism=GaussianMechanism(1.0), count=100, scheme=Poisson(0.01))
    yield dict(mechanism=GaussianMechanism(2.0), count=50, scheme=Poisson(0.02), group_size=2)
    yield dict(mechanism=LaplaceMechanism(1.0), count=20, scheme=Poisson(0.05))
    yield dict(mechanism=GaussianMechanism(1.5), count=30, scheme=Poisson(0.01), group_size=3)


def test_pins_stay_bounded_and_answers_are_unchanged(small_limit):
    cache = AccountingCache()
    for _ in range(3):
        for ev in _events():
            ev = dict(ev)
            mech, count = ev.pop("mechanism"), ev.pop("count")
            got = Accountant(cache=cache).add(mech, count, **ev).epsilon(1e-5)
            ref = Accountant().add(mech, count, **ev).epsilon(1e-5)
            assert got == ref
            assert len(cache._pinned) <= 3
            gc.collect()  # dropped curves free their identities for reuse
    assert cache._generation > 0


def test_tokens_of_different_generations_differ(small_limit):
    cache = AccountingCache()
    objs = [object() for _ in range(3)]
    first = [cache.token(o) for o in objs]
    assert cache.token(objs[0]) == first[0]  # pinned: the same token while it lasts
    cache.token(object())  # a fourth object: a new generation
    assert cache.token(objs[0]) != first[0]
    assert not any(tab.items for tab in cache._tables.values())
