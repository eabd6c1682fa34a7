"""Smoke test of an installed privamp (``make package-check``): run from outside the checkout
with the interpreter of a fresh virtualenv into which only the built wheel was installed.

Checks that the package imported is the installed one (not the source tree), that its version,
``py.typed``, license file and the packaged Adult data (sha256-checked, with its licences) are
in place, that the console script answers ``--help`` and
computes a certified bracket, and that the library gives the same number.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path


def main() -> int:
    import privamp
    from privamp import Accountant, GaussianMechanism, Poisson

    where = Path(privamp.__file__).resolve()
    assert "site-packages" in where.parts, f"privamp imported from {where}, not the wheel"
    assert metadata.version("privamp") == privamp.__version__, "two versions"
    assert (where.parent / "py.typed").is_file(), "py.typed missing"
    dist = metadata.distribution("privamp")
    files = [str(f) for f in dist.files or []]
    assert any(f.endswith("LICENSE") for f in files), "LICENSE not in the wheel"
    from privamp.data import ADULT_ROWS, adult_path, adult_text

    assert adult_path().is_file() and (adult_path().parent / "LICENSES.md").is_file(), \
        "the Adult data or its licences are not in the wheel"
    assert adult_text().count("\n") == ADULT_ROWS + 1, "the packaged Adult data"

    script = shutil.which("privamp", path=str(Path(sys.executable).parent))
    assert script, "the privamp console script is not installed"
    help_text = subprocess.run([script, "--help"], capture_output=True, text=True, check=True)
    assert "epsilon" in help_text.stdout
    out = subprocess.run([script, "epsilon", "--mechanism", "gaussian", "--sigma", "1",
                          "--sampling", "poisson", "--rate", "0.01", "--steps", "1000",
                          "--delta", "1e-5", "--json"], capture_output=True, text=True,
                         check=True)
    cli = json.loads(out.stdout)
    lib = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.01)).epsilon(1e-5)
    assert cli["epsilon_lower"] <= lib.upper and lib.lower <= cli["epsilon"], (cli, lib)
    print(f"privamp {privamp.__version__} from {where.parent}: --help ok, epsilon "
          f"[{cli['epsilon_lower']}, {cli['epsilon']}] ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
