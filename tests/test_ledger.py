"""The training-loop ledger: equal events merge (consecutive or not), state dicts and JSON files
round-trip, ``explain()`` says what is composed and how.

Generated from the registries (the conformance cases: every mechanism × scheme example ×
relation); the reference is the batched ledger (one ``add`` with the total count), and the
numbers must be *equal*, not close: merging only changes how many lines the ledger has.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from conformance.cases import cases
from privamp import (
    DiscretePairMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PrivacyProfile,
)
from privamp._state import decode_value, encode_value
from privamp.accountant import Accountant, Backend
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.mechanisms import GaussianProfile
from privamp.sampling import MustWW, Poisson, WithoutReplacement

CASES = cases()
BACKENDS = [b.value for b in Backend]


def _accepted(backend: str, case):
    """(mechanism, scheme, relation) of ``case`` if ``backend`` accounts it, else ``None``."""
    mech, scheme, rel = case.build()
    if not Accountant(backend).supports(mech, scheme=scheme, relation=rel):
        return None
    return mech, scheme, rel


def _fixed_grid(backend: str) -> dict:
    """A fixed PLD grid: the numbers are compared for equality, not accuracy, and a fixed
    spacing keeps every case cheap (boundary examples refine for seconds otherwise)."""
    return {"grid_step": 0.01} if backend == "pld" else {}


def _rebuilt(case):
    """The same event built again from scratch: equal by value, not the same objects."""
    return case.build()


@pytest.mark.parametrize("backend", BACKENDS)
def test_single_step_adds_merge_into_the_batched_ledger(backend):
    """For every case: 7 single-step adds, interleaved with another event and built anew each
    time, give the ledger of two batched adds (equal events, equal counts, one line each)."""
    other = (LaplaceMechanism(3.0), None)
    checked = 0
    for case in CASES:
        got = _accepted(backend, case)
        if got is None:
            continue
        _, scheme, rel = got
        acc = Accountant(backend)
        for _ in range(7):
            mech, scheme, rel = _rebuilt(case)
            acc.step(mech, scheme=scheme, relation=rel)
            if rel is other[0].relation and acc.supports(other[0], scheme=None):
                acc.add(other[0])
        ref = Accountant(backend).add(*_rebuilt(case)[:1], 7, scheme=scheme, relation=rel)
        assert acc.events[0] == ref.events[0], case.id
        assert acc.events[0].count == 7 and acc._calls[0] == 7
        assert len(acc.events) in (1, 2)
        assert acc.steps == 7 + (len(acc.events) == 2) * 7
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("backend", BACKENDS)
def test_merged_ledgers_answer_exactly_as_the_batched_call(backend):
    """The numbers, not only the lines (which the test above checks for every case): each
    common mechanism with each scheme kind, ε and δ equal to the last digit."""
    seen = set()
    for case in CASES:
        key = (case.mechanism, type(case.scheme).__name__)
        if (key in seen or case.mechanism not in ("gaussian", "laplace", "randomized-response")
                or key[1] not in ("NoneType", "Poisson", "WithoutReplacement", "WithReplacement")
                or (backend == "fourier" and case.mechanism == "gaussian")  # seconds a case
                or _accepted(backend, case) is None):
            continue
        seen.add(key)
        mech, scheme, rel = case.build()
        acc = Accountant(backend, **_fixed_grid(backend))
        for _ in range(5):
            acc.add(*_rebuilt(case)[:1], 2, scheme=scheme, relation=rel)
        ref = Accountant(backend, **_fixed_grid(backend)).add(mech, 10, scheme=scheme,
                                                              relation=rel)
        assert acc.epsilon(1e-5) == ref.epsilon(1e-5), case.id
        assert acc.delta(1.0) == ref.delta(1.0), case.id
    assert len(seen) >= (6 if backend == "fourier" else 9)


def test_labels_keep_lines_apart_but_compose_as_one_segment():
    g, s = GaussianMechanism(1.0), Poisson(0.01)
    acc = Accountant().add(g, 100, scheme=s, label="epoch 1").add(g, 100, scheme=s,
                                                                   label="epoch 2")
    acc.add(g, 50, scheme=s, label="epoch 1")
    assert [(e.label, e.count) for e in acc.events] == [("epoch 1", 150), ("epoch 2", 100)]
    (seg,) = acc.segments
    assert seg.count == 250 and seg.label == "epoch 1, epoch 2"
    assert acc.epsilon(1e-5) == Accountant().add(g, 250, scheme=s).epsilon(1e-5)


def test_a_cycling_schedule_is_as_many_lines_as_distinct_events():
    """10 noise levels cycled through 100 runs: 10 lines, the counts summed per level."""
    acc = Accountant("rdp")
    ref = Accountant("rdp")
    sigmas = [0.8 + 0.1 * i for i in range(10)]
    for run in range(100):
        acc.add(GaussianMechanism(sigmas[run % 10]), 3, scheme=Poisson(0.01))
    for sigma in sigmas:
        ref.add(GaussianMechanism(sigma), 30, scheme=Poisson(0.01))
    assert acc.events == ref.events and acc._calls == [10] * 10
    assert acc.epsilon(1e-6) == ref.epsilon(1e-6)


def test_unhashable_mechanisms_merge_by_value():
    """A discrete pair holds arrays (no hash): the full path compares by value and merges."""
    acc = Accountant()
    for _ in range(4):
        acc.step(DiscretePairMechanism([0.6, 0.4], [0.4, 0.6]), scheme=Poisson(0.1))
    assert len(acc.events) == 1 and acc.steps == 4


def test_invalid_counts_and_labels_are_refused_on_every_path():
    g, s = GaussianMechanism(1.0), Poisson(0.01)
    acc = Accountant().add(g, 1, scheme=s)
    for bad in (0, -1, 1.5, float("nan"), True, "3"):
        with pytest.raises(InvalidParameterError, match="count"):
            acc.add(g, bad, scheme=s)  # the merging fast path validates too
    with pytest.raises(InvalidParameterError, match="label"):
        acc.add(g, 1, scheme=s, label=3)
    assert acc.steps == 1


def test_supports_is_a_dry_run():
    g, s = GaussianMechanism(1.0), Poisson(0.01)
    acc = Accountant().add(g, 5, scheme=s)
    assert acc.supports(g, scheme=s)
    assert acc.steps == 5 and acc._calls == [1]


# ---- state dicts ------------------------------------------------------------------------------


def _round_trip(acc: Accountant) -> Accountant:
    return Accountant.from_state_dict(json.loads(json.dumps(acc.state_dict(), allow_nan=False)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_state_dicts_round_trip_every_registered_case(backend):
    checked = 0
    for case in CASES:
        got = _accepted(backend, case)
        if got is None:
            continue
        mech, scheme, rel = got
        acc = Accountant(backend, orders=[2.0, 8.0, 32.0] if backend == "rdp" else None)
        acc.add(mech, 3, scheme=scheme, relation=rel, label=case.id).add(mech, 2, scheme=scheme,
                                                                         relation=rel,
                                                                         label=case.id)
        again = _round_trip(acc)
        assert again.events == acc.events, case.id
        assert again._calls == acc._calls and again.backend is acc.backend
        checked += 1
    assert checked > 100


def test_round_tripped_ledgers_answer_the_same_numbers(tmp_path):
    acc = Accountant(eps_error=0.01, upper_error=1e-4)
    acc.add(GaussianMechanism(0.9), 200, scheme=Poisson(0.02))
    acc.add(LaplaceMechanism(2.0), 3)
    path = tmp_path / "ledger.json"
    acc.save(path)
    again = Accountant.load(path)
    assert again.eps_error == 0.01 and again.upper_error == 1e-4
    assert again.epsilon(1e-6) == acc.epsilon(1e-6)
    assert again.delta(2.0) == acc.delta(2.0)
    # a resumed run continues the ledger: the merged line grows
    again.step(GaussianMechanism(0.9), scheme=Poisson(0.02))
    assert again.events[0].count == 201


def test_arrays_non_finite_floats_and_scheme_options_round_trip():
    m = DiscretePairMechanism(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5]),
                              outcomes=("a", "b", "c"))
    acc = Accountant().add(m, 2, scheme=Poisson(0.5))
    again = _round_trip(acc)
    assert again.events == acc.events
    assert again.epsilon(1e-3) == acc.epsilon(1e-3)
    for scheme in (MustWW(100, 50, 10, bound="published"), WithoutReplacement(100, 10)):
        _, base = scheme.resolve(None)
        acc = Accountant().add(GaussianMechanism(2.0, relation=base), 2, scheme=scheme)
        again = _round_trip(acc)
        assert again.events == acc.events and again.certified == acc.certified
    for value in (float("inf"), float("-inf"), 1e-320, -0.0, 0.1):
        data = json.loads(json.dumps(encode_value(value, "x"), allow_nan=False))
        back = decode_value(data, "x")
        assert back == value and np.copysign(1.0, back) == np.copysign(1.0, value)


def test_state_dict_refuses_what_it_cannot_write_by_name():
    acc = Accountant().add(GaussianProfile(1.0), 3)
    assert isinstance(acc.events[0].mechanism, PrivacyProfile)
    with pytest.raises(UnsupportedCombinationError,
                       match=r"events\[0\]\.mechanism.*GaussianProfile"):
        acc.state_dict()


@pytest.mark.parametrize("mutate, where", [
    (lambda s: s.update(format="x"), "state"),
    (lambda s: s.update(version=99), "state.version"),
    (lambda s: s["options"].update(speed=3), "state.options"),
    (lambda s: s["events"][0]["mechanism"].update(name="nope"),
     r"state.events\[0\].mechanism.name"),
    (lambda s: s["events"][0].update(count=-2), "count"),
    (lambda s: s["events"][0].update(calls=0), r"state.events\[0\].calls"),
    (lambda s: s["events"][0]["mechanism"]["fields"].update(sigma=-1.0), "sigma"),
    (lambda s: s["events"][0]["scheme"]["args"].update(rate=2.0), "rate"),
    (lambda s: s["events"][0]["scheme"].update(kind="lottery"), r"state.events\[0\].scheme.kind"),
    (lambda s: s["events"][0]["mechanism"]["fields"].update(relation="substitute"), "relation"),
    (lambda s: s["events"][0]["scheme"]["args"].update(bound="x"),
     r"state.events\[0\].scheme.bound"),
])
def test_tampered_states_are_refused_naming_the_field(mutate, where):
    state = Accountant().add(GaussianMechanism(1.0), 3, scheme=Poisson(0.1)).state_dict()
    mutate(state)
    with pytest.raises((InvalidParameterError, UnsupportedCombinationError), match=where):
        Accountant.from_state_dict(state)


def test_a_state_with_repeated_lines_merges_them_and_their_calls():
    """Two equal lines in a (hand-written) state merge on load, counts and add() calls summed
    into the line they merge into, not into the ledger's last line."""
    acc = Accountant().add(GaussianMechanism(1.0), 3, scheme=Poisson(0.1))
    acc.step(GaussianMechanism(1.0), scheme=Poisson(0.1))
    acc.add(LaplaceMechanism(1.0), 2)
    state = acc.state_dict()
    state["events"].append(dict(state["events"][0]))
    again = Accountant.from_state_dict(state)
    assert [e.count for e in again.events] == [8, 2] and again._calls == [4, 1]


def test_a_state_with_mixed_relations_is_refused():
    state = Accountant().add(GaussianMechanism(1.0), 3, scheme=Poisson(0.1)).state_dict()
    other = Accountant().add(GaussianMechanism(1.0, relation="substitute"), 2).state_dict()
    state["events"] += other["events"]
    with pytest.raises(UnsupportedCombinationError, match="relation"):
        Accountant.from_state_dict(state)


def test_load_refuses_a_file_that_is_not_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(InvalidParameterError, match="path"):
        Accountant.load(path)


def test_accountants_pickle_after_a_query_without_their_memo():
    acc = Accountant().add(GaussianMechanism(1.0), 100, scheme=Poisson(0.01))
    first = acc.epsilon(1e-5)
    assert acc._own_cache is not None
    again = pickle.loads(pickle.dumps(acc))
    assert again._own_cache is None and again.epsilon(1e-5) == first


# ---- explain ----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_explain_names_every_segment_the_relation_and_the_backend(backend):
    checked = 0
    for case in CASES[::7]:
        got = _accepted(backend, case)
        if got is None:
            continue
        mech, scheme, rel = got
        acc = Accountant(backend)
        for _ in range(3):
            acc.step(mech, scheme=scheme, relation=rel)
        text = acc.explain()
        assert f"relation {rel.value}" in text
        assert ("2C" in text) == (rel.value == "substitute")
        assert "[1] 3 x " in text and "(3 add calls)" in text
        assert f"backend: {backend}" in text
        if scheme is not None:
            assert scheme.theorem(rel) in text
        assert "certified: " + ("yes" if acc.certified else "no") in text
        checked += 1
    assert checked > 10
    assert "empty ledger" in Accountant(backend).explain()


def test_identity_hashed_profiles_merge_without_piling_up():
    """A loop building a new profile object every step: one line, and the fast-path map stays
    bounded (it holds references)."""
    acc = Accountant()
    for _ in range(5000):
        acc.step(GaussianProfile(2.0))
    assert len(acc.events) == 1 and acc.steps == 5000 and len(acc._seen) <= 4096


def test_the_cheap_pure_dp_check_agrees_with_the_threshold():
    """The RDP backend's check at ``add`` reads only whether the largest multiplicity's group
    profile has pure DP; for every registered amplified case it must agree with the placed
    threshold (:attr:`AmplifiedProfile.pure_epsilon`) that the query computes."""
    from privamp.amplification.subsampling import AmplifiedProfile, amplify
    from privamp.errors import PrivampError

    checked = 0
    seen = set()
    for case in CASES:
        mech, scheme, rel = case.build()
        # one example per (mechanism, scheme kind, relation): placing a finite threshold takes
        # evaluations of the sum, a tenth of a second each for black-box groups
        key = (case.id.split("-")[0], type(scheme).__name__, rel)
        if scheme is None or key in seen:
            continue
        seen.add(key)
        try:
            profile = amplify(mech, scheme, rel)
        except PrivampError:
            continue
        if not isinstance(profile, AmplifiedProfile):
            continue
        assert profile.has_pure_epsilon == np.isfinite(profile.pure_epsilon), case.id
        checked += 1
    assert checked > 50
