"""The symmetric curve of a profile evaluates the profile once per magnitude |ε|, and the upper
discretisation puts an atom at 0 on a grid point, so a grid symmetric about 0 costs half.

Tests are generated over every registered mechanism example under every scheme example: the
values on a grid holding both signs are those of evaluating each sign alone (the profile's
bound at each point does not depend on the other points of the call), up to the last bits
NumPy's vector loops may round differently.
"""
from __future__ import annotations

import numpy as np
import pytest

from conformance.cases import scheme_examples
from privamp.amplification.subsampling import amplify
from privamp.mechanisms import REGISTRY
from privamp.pld.curves import ProfileCurve
from privamp.pld.engine import _step
from privamp.pld.grids import ATOM_LIFT, _atom_offset


def _profiles():
    """One amplified profile per (mechanism, scheme example, relation) of the registries: the
    first example of each that the library accepts (the shared evaluation is a matter of
    indexing, the same for every parameter value)."""
    out, seen = [], set()
    for scheme in scheme_examples():
        for relation in scheme.relations:
            base = scheme.base_relation(relation)
            for name, entry in REGISTRY.items():
                key = (name, repr(scheme), relation)
                if key in seen or (name == "discrete-pair" and getattr(scheme, "m", 0) >= 999):
                    # (the black-box group profiles of ~1000 multiplicities: 2 s a call; the
                    # same code path is covered by the smaller WR examples)
                    continue
                for i, mech in enumerate(entry.examples(base)):
                    try:
                        prof = amplify(mech, scheme, relation)
                    except Exception:  # combinations the library refuses are tested elsewhere
                        continue
                    out.append((f"{name}#{i}-{scheme!r}-{relation.value}", prof))
                    seen.add(key)
                    break
    return out


PROFILES = _profiles()
IDS = [p[0] for p in PROFILES]


def _grid(h: float, below: int, above: int, offset: float = 0.0) -> np.ndarray:
    return offset + np.arange(-below, above + 1) * h


def _one_sign_at_a_time(curve: ProfileCurve, eps: np.ndarray, lower: bool) -> np.ndarray:
    """The curve's values with each sign evaluated in a call of its own (the path without the
    shared evaluation)."""
    out = np.empty(eps.shape)
    pos = eps >= 0
    for part in (pos, ~pos):
        if np.any(part):
            out[part] = curve._curve(eps[part], lower)
    return out


@pytest.mark.parametrize("name,profile", PROFILES, ids=IDS)
def test_shared_magnitudes_give_the_values_of_separate_calls(name, profile):
    curve = ProfileCurve(profile)
    specials = np.array([-np.inf, -3.0, -0.0, 0.0, 3.0, np.inf, -1e-300, 1e-300])
    grids = [np.concatenate([_grid(0.05, 60, 140), specials]),  # symmetric about 0: shared
             np.concatenate([_grid(0.37, 40, 25),               # more below 0 than above,
                             _grid(0.05, 20, 20, offset=0.05 / 1024)])]  # and off-centre
    for eps in grids:
        for lower in (False, True):
            got = curve._curve(eps, lower)
            want = _one_sign_at_a_time(curve, eps, lower)
            # equal up to the last bits: NumPy's vector loops and their scalar remainders may
            # round exp/log differently (both within the error model the margins cover)
            np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
            fin = np.isfinite(want)
            np.testing.assert_allclose(got[fin], want[fin], rtol=1e-14, atol=1e-300,
                                       err_msg=f"{name} lower={lower}")


@pytest.mark.parametrize("name,profile", PROFILES[::4], ids=IDS[::4])
def test_a_symmetric_grid_evaluates_each_magnitude_once(name, profile):
    curve = ProfileCurve(profile)
    sizes = []
    original = profile._log_delta

    def counted(eps):
        sizes.append(np.size(eps))
        return original(eps)

    profile._log_delta = counted
    try:
        curve.log_upper(_grid(0.01, 200, 500))
    finally:
        del profile._log_delta
    assert sizes == [501]


def test_the_upper_grid_has_an_atom_at_zero_on_a_grid_point():
    """The kink of an amplified profile at 0 (the record missed) is a grid point of the upper
    discretisation; the lower one keeps the lift above it."""
    from privamp import GaussianMechanism
    from privamp.sampling import WithReplacement

    prof = amplify(GaussianMechanism(sigma=1.0, relation="substitute"),
                   WithReplacement(60000, 600), "substitute")
    curve = ProfileCurve(prof)
    assert 0.0 in np.asarray(curve.atoms())
    h = 1.8566e-4
    assert _atom_offset(curve, h, lift=0.0) == 0.0
    lifted = _atom_offset(curve, h)
    assert lifted == pytest.approx(h - ATOM_LIFT * h, rel=1e-9)
    # the engine's own step: the upper side on the atom, the lower side lifted above it
    upper = _step(curve, h, -3.0, 5.0, "upper", 0.0)
    assert upper.offset == 0.0 and np.any(upper.losses == 0.0)
    lower = _step(curve, 64 * h, -3.0, 5.0, "lower", 0.0)
    assert lower.offset == pytest.approx(64 * h * (1 - ATOM_LIFT), rel=1e-9)
