"""Large groups (issue 20, item 2): what privamp answers and what it refuses, before any work.

* A group larger than the dataset is refused by name wherever the scheme knows n (WOR(n, m),
  WR(n, m), Poisson(rate, n=n)), for every mechanism.
* Beyond :data:`~privamp.pld.group.MAX_SAMPLED_GROUP` under sampling every combination is
  refused at ``add`` (before a curve is built: the builders are replaced by a function that
  fails), with the rule naming the largest K; the advice (that K) answers when followed.
* The tight split pairs stop at :data:`~privamp.pld.group.TIGHT_MAX_GROUP`; one record more
  takes the coupling bound, and the ledger, the CLI line and its JSON say so.
* The coupling bound that replaces them is an upper bound on the tight one (checked where both
  are cheap, K = 8) — the switch loosens, never under-reports.
"""

from __future__ import annotations

import math

import pytest

from cli_helpers import run_error, run_json
from privamp import Accountant, GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privamp.errors import InvalidParameterError, LossRangeError
from privamp.pld import group as group_mod
from privamp.pld.group import (
    MAX_SAMPLED_GROUP,
    TIGHT_MAX_GROUP,
    group_bound,
    group_pair_curves,
    tight_limit_note,
)
from privamp.sampling import WOR, WR, Poisson

MECHANISMS = {
    "gaussian": lambda rel: GaussianMechanism(2.0, relation=rel),
    "laplace": lambda rel: LaplaceMechanism(2.0, relation=rel),
    "rr": lambda rel: RandomizedResponse(0.8, relation=rel),
}
SCHEMES = {
    "poisson": (lambda: Poisson(0.01), "add-remove"),
    "poisson-n": (lambda: Poisson(0.01, n=50), "add-remove"),
    "wor": (lambda: WOR(60, 6), "substitute"),
    "wr": (lambda: WR(60, 6), "substitute"),
}
CASES = [(m, s) for m in MECHANISMS for s in SCHEMES]


def _event(mech, scheme):
    make, rel = SCHEMES[scheme]
    return MECHANISMS[mech](rel), make()


@pytest.fixture
def no_curves(monkeypatch):
    """Any curve built from here on fails the test: a refusal must come before the work."""
    def boom(*args, **kwargs):
        raise AssertionError("a group curve was built before the refusal")

    monkeypatch.setattr(group_mod, "GroupGaussianCurve", boom)
    monkeypatch.setattr("privamp.pld.group_laplace.GroupLaplaceCurve", boom)
    monkeypatch.setattr("privamp.amplification.subsampling.amplify", boom)


@pytest.mark.parametrize("mech,scheme", CASES)
def test_beyond_the_reach_is_refused_at_add(mech, scheme, no_curves):
    source, sch = _event(mech, scheme)
    with pytest.raises(InvalidParameterError) as info:
        Accountant().add(source, 1000, scheme=sch, group_size=10**6)
    err = info.value
    assert err.parameter == "group_size" and err.value == 10**6
    n = getattr(sch, "n", None)
    if n is not None:
        assert f"at most the dataset size n = {n}" in err.rule
    else:
        assert f"at most {MAX_SAMPLED_GROUP} under sampling" in err.rule
    with pytest.raises(InvalidParameterError):
        group_pair_curves(source, sch, None, 10**6)


@pytest.mark.parametrize("scheme", ["poisson-n", "wor", "wr"])
@pytest.mark.parametrize("mech", list(MECHANISMS))
def test_a_group_larger_than_the_dataset_is_refused(mech, scheme, no_curves):
    source, sch = _event(mech, scheme)
    with pytest.raises(InvalidParameterError) as info:
        Accountant().add(source, 10, scheme=sch, group_size=sch.n + 1)
    assert info.value.parameter == "group_size" and info.value.value == sch.n + 1
    assert f"n = {sch.n}" in str(info.value)
    # the whole dataset is a group privamp accounts (the refusal is exactly at n)
    Accountant().add(source, 10, scheme=sch, group_size=sch.n)


def test_without_sampling_the_group_profile_answers_or_is_refused_by_the_engine():
    """No cap without sampling (the group profile's cost does not grow with K): K = 20 answers
    (the Gaussian at sensitivity 20), K = 10⁶ passes the engine's per-step loss range and is a
    typed error naming ``group_size``, not a hang."""
    acc = Accountant().add(GaussianMechanism(2.0), 10, group_size=20)
    assert acc.group_bound == "tight" and math.isfinite(acc.epsilon(1e-5).upper)
    with pytest.raises(InvalidParameterError, match="group_size"):
        Accountant().add(GaussianMechanism(2.0), 10, group_size=10**6).epsilon(1e-5)


def test_the_advice_answers_when_followed():
    """The refusal names MAX_SAMPLED_GROUP; the reference setting of the issue answers there
    (the coupling bound: the tight pairs stop at TIGHT_MAX_GROUP)."""
    acc = Accountant().add(GaussianMechanism(2.0), 1000, scheme=Poisson(0.01),
                           group_size=MAX_SAMPLED_GROUP)
    assert acc.group_bound == "coupling"
    b = acc.epsilon(1e-5)
    assert math.isfinite(b.upper) and b.upper > 0


@pytest.mark.parametrize("mech", ["gaussian", "laplace"])
def test_the_tight_pairs_stop_at_their_limit(mech):
    source = MECHANISMS[mech]("add-remove")
    rel = Poisson(0.01).resolve(None)[0]
    assert group_bound(source, Poisson(0.01), rel, None, TIGHT_MAX_GROUP) == "tight"
    assert group_bound(source, Poisson(0.01), rel, None, TIGHT_MAX_GROUP + 1) == "coupling"
    curves, bound = group_pair_curves(source, Poisson(0.01), None, TIGHT_MAX_GROUP + 1)
    assert bound == "coupling" and list(curves) == ["symmetric"]
    acc = Accountant().add(source, 10, scheme=Poisson(0.01), group_size=TIGHT_MAX_GROUP + 1)
    assert acc.group_bound == "coupling"
    note = tight_limit_note(acc.events, acc.group_size)
    assert note is not None and f"at most {TIGHT_MAX_GROUP} records" in note
    small = Accountant().add(source, 10, scheme=Poisson(0.01), group_size=TIGHT_MAX_GROUP)
    assert small.group_bound == "tight"
    assert tight_limit_note(small.events, small.group_size) is None


def test_the_coupling_bound_is_above_the_tight_one():
    """What the switch gives is a valid upper bound: at K = 8 (both cheap) the coupling
    bound's ε is at least the tight bracket's upper end (7.536 against 6.460)."""
    from privamp.pld.curves import ProfileCurve
    from privamp.pld.engine import PldEvent, pld_epsilon

    k, mech, sch = 8, GaussianMechanism(2.0), Poisson(0.01)
    tight = Accountant().add(mech, 1000, scheme=sch, group_size=k).epsilon(1e-5)
    # the coupling route of group_pair_curves, forced (what K > TIGHT_MAX_GROUP takes)
    from privamp.amplification.subsampling import amplify
    from privamp.profiles import GroupPrivacy, MinimumProfile

    rel = sch.resolve(None)[0]
    prof = MinimumProfile([amplify(mech, sch, rel, None, group_size=k),
                           amplify(mech, sch, rel, None).group(k, GroupPrivacy.BLACK_BOX)])
    coupled = pld_epsilon([PldEvent({"symmetric": ProfileCurve(prof)}, 1000, "")], 1e-5,
                          lower=False)
    assert coupled.bracket.upper >= tight.upper
    assert tight.upper <= 6.4605  # the paper's value (a looser accountant) bounds it


BASE = ["--mechanism", "gaussian", "--sigma", "2", "--sampling", "poisson", "--rate", "0.01",
        "--steps", "1000", "--delta", "1e-5"]


def test_cli_refuses_in_one_line(capsys):
    line = run_error(["epsilon", *BASE, "--group-size", "1000000"], capsys)
    assert line.startswith("privamp: error: ")
    assert "group_size" in line or "--group-size" in line
    assert f"at most {MAX_SAMPLED_GROUP}" in line and "1000000" in line
    line = run_error(["epsilon", "--mechanism", "gaussian", "--sigma", "2", "--sampling", "wor",
                      "--n", "100", "--m", "10", "--steps", "10", "--delta", "1e-5",
                      "--group-size", "101"], capsys)
    assert line.startswith("privamp: error: ") and "n = 100" in line


def test_cli_says_why_the_bound_changed(capsys):
    from privamp.cli import main

    base = [*BASE[:-4], "--steps", "10", "--delta", "1e-5"]
    out = run_json(["epsilon", *base, "--group-size", str(TIGHT_MAX_GROUP + 1)], capsys)
    assert out["group_bound"] == "coupling"
    assert f"at most {TIGHT_MAX_GROUP} records" in out["group_bound_reason"]
    assert main(["epsilon", *base, "--group-size", str(TIGHT_MAX_GROUP + 1)]) == 0
    text = capsys.readouterr().out
    assert "coupling group bound" in text and "tight split pairs" in text
    out = run_json(["epsilon", *base, "--group-size", "2"], capsys)
    assert out["group_bound"] == "tight" and "group_bound_reason" not in out


# ---- without sampling: the engine's range, named as the group's ------------------------------

@pytest.mark.parametrize("mechanism, k", [(GaussianMechanism(2.0), 100),
                                          (GaussianMechanism(2.0), 10**5),
                                          (LaplaceMechanism(1.0), 10**6)])
@pytest.mark.parametrize("query", ["epsilon", "delta", "tradeoff"])
def test_unsampled_group_out_of_range_names_group_size(mechanism, k, query):
    """Without sampling a group's step loss grows like K·Δ and leaves the engine's range; every
    query refuses naming ``group_size`` and its value, with the engine's reason."""
    acc = Accountant().add(mechanism, 10, group_size=k)
    ask = {"epsilon": lambda: acc.epsilon(1e-5), "delta": lambda: acc.delta(1.0),
           "tradeoff": lambda: acc.tradeoff([0.1])}[query]
    with pytest.raises(InvalidParameterError) as info:
        ask()
    err = info.value
    assert err.parameter == "group_size" and err.value == k
    assert "privacy loss" in str(err)


@pytest.mark.parametrize("query", ["advantage", "tpr", "gdp_mu"])
def test_queries_built_on_other_queries_name_the_group_once(query):
    """advantage → delta, tpr and gdp_mu → tradeoff: the inner query's renamed error passes
    through the outer one unchanged (it used to be wrapped a second time, the rule repeated)."""
    acc = Accountant().add(GaussianMechanism(2.0), 10, group_size=100)
    ask = {"advantage": acc.advantage, "tpr": lambda: acc.tpr(0.1), "gdp_mu": acc.gdp_mu}[query]
    with pytest.raises(InvalidParameterError) as info:
        ask()
    assert str(info.value).count("group_size must be") == 1


def test_unsampled_group_in_range_still_answers_and_one_record_keeps_its_error():
    """The renaming applies to groups only: K = 8 answers (the Gaussian at sensitivity 8Δ,
    exactly), and a single record whose own loss is out of range keeps the engine's error."""

    got = Accountant().add(GaussianMechanism(2.0), 10, group_size=8).epsilon(1e-5)
    ref = Accountant().add(GaussianMechanism(2.0 / 8), 10).epsilon(1e-5)
    assert got.upper == pytest.approx(ref.upper, rel=1e-9)
    with pytest.raises(LossRangeError):
        Accountant().add(GaussianMechanism(0.02), 10).epsilon(1e-5)


def test_cli_unsampled_group_out_of_range_is_one_line(capsys):
    line = run_error(["epsilon", "--mechanism", "gaussian", "--sigma", "2", "--steps", "1000",
                      "--delta", "1e-5", "--group-size", "100000"], capsys)
    assert line.startswith("privamp: error: --group-size must be") and "100000" in line


def test_calibration_reads_an_out_of_range_group_as_infeasible():
    """The renamed error (GroupRangeError) is still a NumericalError: calibration searches that
    read a numerical failure as "this value is infeasible" answer for groups as for one record
    (it aborted with InvalidParameterError in between)."""
    from privamp.calibrate import calibrate_steps
    from privamp.errors import GroupRangeError, NumericalError, UnreachableTargetError

    assert issubclass(GroupRangeError, NumericalError)
    assert issubclass(GroupRangeError, InvalidParameterError)
    for k in (1, 2):
        with pytest.raises(UnreachableTargetError):
            calibrate_steps(5.0, 1e-5, mechanism=GaussianMechanism(0.01), group_size=k)
