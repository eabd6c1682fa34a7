"""examples/training_loop_ledger.py: a NumPy DP-SGD loop accounted step by step (small sizes)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from privamp import Accountant, GaussianMechanism
from privamp.display import lower, upper
from privamp.sampling import Poisson, WithoutReplacement

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "training_loop_ledger.py"


@pytest.mark.parametrize("sampling", ["poisson", "wor"])
def test_the_loop_reports_the_batched_accountants_bracket(sampling, tmp_path):
    n, batch, epochs = 600, 30, 2
    state = tmp_path / "ledger.json"
    out = subprocess.run([sys.executable, str(EXAMPLE), "--n", str(n), "--batch", str(batch),
                          "--epochs", str(epochs), "--sampling", sampling, "--state",
                          str(state)], capture_output=True, text=True, check=True).stdout
    steps = n // batch * epochs
    if sampling == "poisson":
        ref = Accountant().add(GaussianMechanism(1.0), steps, scheme=Poisson(batch / n))
    else:  # substitution: the clipped sum has sensitivity 2C
        ref = Accountant().add(GaussianMechanism(1.0, sensitivity=2.0, relation="substitute"),
                               steps, scheme=WithoutReplacement(n, batch))
    b = ref.epsilon(1e-5)
    last = re.findall(r"epoch \d+: (\d+) steps, epsilon in \[([^,]+), ([^\]]+)\]", out)[-1]
    assert last == (str(steps), lower(b.lower, 4), upper(b.upper, 4))
    assert f"({steps} add calls)" in out and state.exists()
    assert Accountant.load(state).steps == steps // 2  # saved half-way
