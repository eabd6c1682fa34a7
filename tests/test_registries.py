"""The registries every consumer reads: schemes, mechanisms, backends (issue 16).

Generated from the registries themselves: a new scheme, mechanism or backend is covered here
by being registered.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from privamp import mechanisms as mech_mod
from privamp.accountant import BACKENDS, Accountant, Backend, Event
from privamp.errors import InvalidParameterError, UnsupportedCombinationError
from privamp.mechanisms import REGISTRY, build_mechanism, noise_mechanisms
from privamp.relations import NeighbouringRelation
from privamp.sampling import SCHEMES, StageChain, WorStage, WrStage, flat_schemes

R = NeighbouringRelation.ADD_REMOVE
S = NeighbouringRelation.SUBSTITUTE


# ---- schemes --------------------------------------------------------------------------------

FLAT = [(kind, ex) for kind in flat_schemes() for ex in SCHEMES[kind].examples()]


@pytest.mark.parametrize(("kind", "scheme"), FLAT, ids=[f"{k}-{s!r}" for k, s in FLAT])
def test_scheme_rebuilds_from_its_params(kind, scheme):
    cls = SCHEMES[kind]
    values = {p.name: getattr(scheme, p.name) for p in cls.params}
    if getattr(scheme, "bound", "proved") != "proved":
        pytest.skip("the published MUST.WW bound is a constructor option, not a parameter")
    if getattr(scheme, "order", "reshuffle") != "reshuffle":
        pytest.skip("the shuffle order is a constructor option (--order), not a size")
    assert cls.from_params(**values) == scheme
    described = scheme.describe()
    assert described["scheme"] == kind
    assert {k: v for k, v in described.items() if k != "scheme"} == {
        k: v for k, v in values.items() if v is not None}


@pytest.mark.parametrize("kind", list(SCHEMES))
def test_scheme_declares_relations_and_theorems(kind):
    cls = SCHEMES[kind]
    assert cls.relation_map, kind
    assert set(cls.theorems) == set(cls.relation_map)
    assert cls.default_relation() is next(iter(cls.relation_map))
    for scheme in cls.examples():
        for outer, base in cls.relation_map.items():
            assert scheme.resolve(outer) == (outer, base)
            assert scheme.theorem(outer)
        assert scheme.resolve() == (cls.default_relation(),
                                    cls.relation_map[cls.default_relation()])
        for other in set(NeighbouringRelation) - set(cls.relation_map):
            with pytest.raises(UnsupportedCombinationError, match=other.value):
                scheme.resolve(other)


@pytest.mark.parametrize("kind", flat_schemes())
def test_scheme_params_declare_their_domain(kind):
    cls = SCHEMES[kind]
    good = {p.name: getattr(cls.examples()[0], p.name) for p in cls.params}
    for p in cls.params:
        if good[p.name] is None:
            continue
        bad = 0 if p.integer else 1.5 if p.interval.endswith("1]") else -1.0
        with pytest.raises(InvalidParameterError) as info:
            cls.from_params(**{**good, p.name: bad})
        assert info.value.parameter == p.name
    with pytest.raises(InvalidParameterError, match="not a parameter"):
        cls.from_params(**good, sigma=1.0)


def test_scheme_sizes_and_stages():
    from privamp.sampling import Poisson, WithReplacement

    assert Poisson(0.01).expected_size(5000) == 50.0 and Poisson(0.01).fixed_size is None
    assert WithReplacement(100, 7).expected_size(100) == 7.0
    chain = StageChain(100, [WrStage(50), ("wor", 30), WrStage(20)])
    assert chain.stages == (("wr", 50), ("wor", 30), ("wr", 20))
    assert chain == StageChain(100, [("wr", 50), ("wor", 30), ("wr", 20)])
    assert pickle.loads(pickle.dumps(chain)) == chain
    assert isinstance(chain.stages[1], WorStage)
    with pytest.raises(InvalidParameterError, match="previous stage"):
        StageChain(10, [WorStage(5), WorStage(6)])


# ---- mechanisms -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", REGISTRY.parametrised())
def test_mechanism_rebuilds_from_its_params(name):
    cls = REGISTRY[name]
    for relation in NeighbouringRelation:
        for mech in cls.examples(relation):
            described = mech.describe()
            assert described["name"] == name and described["relation"] == relation.value
    values = {"sigma": 2.0, "scale": 0.5, "sensitivity": 3.0, "rr_p": 0.75}
    given = {p.name: values[p.name] for p in cls.params if p.name in values}
    built = build_mechanism(name, S, **given)
    assert built.relation is S
    for p in cls.params:
        if p.name in given and hasattr(built, p.name):
            assert getattr(built, p.name) == given[p.name]
    for p in cls.required():
        with pytest.raises(InvalidParameterError) as info:
            build_mechanism(name, R, **{**given, p.name: None})
        assert info.value.parameter == p.name


def test_noise_parameters_come_from_the_declarations():
    assert noise_mechanisms() == {"sigma": "gaussian", "scale": "laplace"}
    assert set(REGISTRY.parametrised()) == {"gaussian", "laplace", "randomized-response"}
    with pytest.raises(InvalidParameterError, match="not both"):
        build_mechanism("randomized-response", R, rr_epsilon=1.0, rr_p=0.7)


# ---- backends and events --------------------------------------------------------------------


def test_every_backend_is_registered():
    assert set(BACKENDS) == set(Backend)
    for backend, impl in BACKENDS.items():
        assert impl.name is backend
    assert Accountant("rdp").backend is Backend.RDP


def _separately_built():
    pair = (np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]))
    return [
        lambda: mech_mod.GaussianMechanism(1.0),
        lambda: mech_mod.GaussianProfile(1.0, "add-remove"),
        lambda: mech_mod.LaplaceProfile(1.0),
        lambda: mech_mod.DiscretePairMechanism(pair[0].copy(), pair[1].copy()),
        lambda: mech_mod.DiscretePairProfile(pair[0].copy(), pair[1].copy()),
        lambda: mech_mod.ApproxDPMechanism(1.0, 1e-6),
    ]


@pytest.mark.parametrize("make", _separately_built())
def test_events_are_values(make):
    a, b = Event(make(), 3), Event(make(), 3)
    assert a == b and hash(a) == hash(b)
    assert a != Event(make(), 4)
    # the Fourier backend composes them as one kind of event
    acc = Accountant("fourier").add(make(), 3).add(make(), 2)
    assert acc.delta(1.0) == Accountant("fourier").add(make(), 5).delta(1.0)


def test_different_events_are_not_equal():
    g = mech_mod.GaussianMechanism
    assert Event(g(1.0), 3) != Event(g(1.5), 3)
    assert Event(mech_mod.GaussianProfile(1.0), 3) != Event(mech_mod.GaussianProfile(1.0 + 1e-12),
                                                             3)
    with pytest.raises(UnsupportedCombinationError, match="one kind"):
        Accountant("fourier").add(g(1.0), 3).add(g(1.5), 3)


def test_rdp_refuses_an_event_it_cannot_bound_at_add():
    from privamp.sampling import WithReplacement

    mech = mech_mod.GaussianMechanism(1.0, relation="substitute")
    acc = Accountant("rdp")
    assert not acc.supports(mech, scheme=WithReplacement(100, 10))
    with pytest.raises(UnsupportedCombinationError, match="no useful RDP bound"):
        acc.add(mech, 10, scheme=WithReplacement(100, 10))
    assert acc.events == ()
    assert Accountant("pld").supports(mech, scheme=WithReplacement(100, 10))
    # Laplace has pure DP: Theorem 6 on the amplified profile applies
    lap = mech_mod.LaplaceMechanism(1.0, relation="substitute")
    assert acc.supports(lap, scheme=WithReplacement(100, 10))


def test_top_level_names_are_lazy():
    import subprocess
    import sys

    code = ("import sys, privamp; assert 'privamp.accountant' not in sys.modules; "
            "from privamp import Accountant, Poisson, amplify, calibrate_sigma, MustWW; "
            "from privamp import calibrate; assert calibrate.calibrate_sigma is calibrate_sigma; "
            "assert Accountant.__module__ == 'privamp.accountant'")
    subprocess.run([sys.executable, "-c", code], check=True)
    import privamp

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        privamp.nope  # noqa: B018


NEW_SCHEME = '''
import json, sys
from dataclasses import dataclass
from typing import ClassVar

from privamp._params import Param
from privamp.relations import NeighbouringRelation as Rel
from privamp.sampling import SCHEMES, MultiplicityPmf, SamplingScheme, WithoutReplacement

S = Rel.SUBSTITUTE


@dataclass(frozen=True)
class HalfWithoutReplacement(SamplingScheme):
    """A toy scheme: a uniform half of the records (WOR(n, n // 2))."""

    n: int
    kind: ClassVar[str] = "half"
    params: ClassVar = (Param("n", "[2, inf)", integer=True, help="dataset size"),)
    relation_map: ClassVar = {S: S}
    theorems: ClassVar = {S: "BBG Theorem 9 (without replacement, substitution)"}

    @property
    def m(self):
        return self.n // 2

    def multiplicity(self):
        return WithoutReplacement(self.n, self.m).multiplicity()

    def _draw(self, n, rng):
        return rng.choice(n, size=self.m, replace=False)

    @classmethod
    def examples(cls):
        return [cls(2), cls(100)]


assert "half" in SCHEMES
from privamp.cli import main
from privamp.sweep import evaluate, expand

main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling", "half", "--n", "100",
      "--steps", "10", "--delta", "1e-5", "--json"])
main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling", "wor", "--n", "100",
      "--m", "50", "--steps", "10", "--delta", "1e-5", "--json"])
rows = evaluate(expand({"mechanism": "gaussian", "sigma": 1.0, "sampling": "half", "n": 100,
                        "steps": 10, "delta": 1e-5}))
print(json.dumps({"sweep": rows[0]["epsilon"]}))
'''


def test_a_new_scheme_is_one_class(tmp_path):
    """Issue 16: a scheme declared as one class (nothing else edited) is offered by the CLI and
    the sweeps, and accounted like the scheme it equals in law."""
    import json
    import subprocess
    import sys

    script = tmp_path / "new_scheme.py"
    script.write_text(NEW_SCHEME)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, timeout=300).stdout.splitlines()
    half, wor, sweep = (json.loads(line) for line in out[-3:])
    assert half["sampling"] == {"scheme": "half", "n": 100}
    # the same law; η is rounded up along another path (a few ulp)
    assert half["epsilon"] == pytest.approx(wor["epsilon"], rel=1e-9)
    assert sweep["sweep"] == pytest.approx(wor["epsilon"], rel=1e-9)


@pytest.mark.parametrize("kind", [None, *SCHEMES])
def test_lower_end_of_follows_the_pld_rules(kind):
    """The lower end bounds the mechanism itself exactly when the event is composed through its
    own pair: no sampling, or Poisson under add/remove (Zhu, Dong, Wang 2022)."""
    schemes = [None] if kind is None else SCHEMES[kind].examples()[:2]
    for scheme in schemes:
        relations = [None] if scheme is None else list(scheme.relations)
        for outer in relations:
            base = outer if scheme is None else scheme.resolve(outer)[1]
            for mech in (mech_mod.GaussianMechanism(1.0, relation=base or R),
                         mech_mod.LaplaceMechanism(1.0, relation=base or R)):
                if scheme is not None and outer is S and kind == "poisson" and scheme.n is None:
                    continue
                if getattr(scheme, "pld_only", False):
                    # the batch samplers account the Gaussian through their own pair, and say
                    # whether it is the mechanism's exact worst case
                    if scheme.check_mechanism(mech, outer) is not None:
                        with pytest.raises(UnsupportedCombinationError):
                            Accountant().add(mech, 2, scheme=scheme, relation=outer)
                        continue
                    acc = Accountant().add(mech, 2, scheme=scheme, relation=outer)
                    assert acc.lower_end_of == ("mechanism" if scheme.exact_pair else "bound")
                    continue
                acc = Accountant().add(mech, 2, scheme=scheme, relation=outer)
                own = scheme is None or (kind == "poisson" and outer is R)
                assert acc.lower_end_of == ("mechanism" if own else "bound"), (scheme, outer)
    profile = mech_mod.GaussianProfile(1.0)
    assert Accountant().add(profile, 2).lower_end_of == "bound"


def test_identity_keys_hold_their_object():
    """An object compared by identity stays referenced by its key: a reused id() can never make
    a memo hand one event's result to another."""
    import gc

    from privamp.accountant import _value_key

    class Opaque:
        __slots__ = ("x",)
        __hash__ = None  # unhashable, no __dict__: compared by identity

        def __init__(self, x):
            self.x = x

    key = _value_key(Opaque(1))
    gc.collect()
    assert key == key and key != _value_key(Opaque(1))
    assert key.obj.x == 1
