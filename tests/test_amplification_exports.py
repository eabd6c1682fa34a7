"""The ``privamp.amplification`` package re-exports every public name of its modules, lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import privamp.amplification as amplification

MODULES = ["subsampling", "tightness", "mixing", "iteration", "diffusion"]


def test_exports_are_exactly_the_modules_public_names():
    """The static name table equals the union of the modules' ``__all__`` (it cannot drift)."""
    expected = {}
    for name in MODULES:
        module = importlib.import_module(f"privamp.amplification.{name}")
        for public in module.__all__:
            assert public not in expected, f"{public} is exported by two modules"
            expected[public] = name
    assert amplification._EXPORTS == expected
    assert amplification.__all__ == sorted(expected)


@pytest.mark.parametrize("name", sorted(amplification._EXPORTS))
def test_each_name_is_the_module_object(name):
    module = importlib.import_module(f"privamp.amplification.{amplification._EXPORTS[name]}")
    assert getattr(amplification, name) is getattr(module, name)
    assert name in dir(amplification)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        amplification.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec("from privamp.amplification import no_such_name", {})


def test_importing_one_submodule_does_not_import_the_others():
    """``import privamp.amplification.subsampling`` (what the PLD code does) stays cheap; a
    re-exported name imports only its own module; ``import *`` gives every name."""
    code = (
        "import sys\n"
        "import privamp.amplification.subsampling\n"
        "pre = 'privamp.amplification.'\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith(pre))\n"
        "assert loaded() == ['privamp.amplification.subsampling'], loaded()\n"
        "from privamp.amplification import MarkovKernel\n"
        "assert 'privamp.amplification.diffusion' not in sys.modules, loaded()\n"
        "ns = {}\n"
        "exec('from privamp.amplification import *', ns)\n"
        "import privamp.amplification as a\n"
        "assert set(a.__all__) <= set(ns), set(a.__all__) - set(ns)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
