"""PLD accounting side by side with the established libraries (Poisson-subsampled Gaussian).

For every case every tool runs in a fresh Python process (so imports and first-call costs count,
as they do for a user) and reports its ε, its bracket where it has one, the time of the
imports and of the computation inside the process, the wall time of the whole process, and its
peak memory:

* ``privamp`` — :class:`privamp.accountant.Accountant` (PLD backend, certified bracket);
* ``privamp-cli`` — the ``privamp epsilon`` command as a whole;
* ``dp_accounting`` — Google's PLD accountant at its default 1e-4 pessimistic discretisation;
* ``prv_accountant`` — Gopi et al.'s PRV accountant (eps_error 0.01, its bracket);
* ``opacus`` — Opacus's PRV accountant, when installed.

Peers are optional: ``pip install 'privamp[bench]'`` (Opacus separately). Tools that are not
installed, or fail, are reported as such — the stress and tiny-δ rows show where they fail.

Run::

    .venv/bin/python benchmarks/bench_pld.py            # all rows
    .venv/bin/python benchmarks/bench_pld.py --quick    # the three landscape rows with T ≤ 10^4
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROWS = [  # sigma, q, steps, delta
    (1.0, 0.01, 1_000, 1e-5),
    (1.0, 0.01, 10_000, 1e-5),
    (1.0, 0.01, 100_000, 1e-5),
    (0.8, 0.001, 100_000, 1e-5),
    (2.0, 0.05, 5_000, 1e-5),
    (0.6, 0.02, 2_000, 1e-5),
    (0.5, 0.1, 10_000, 1e-5),  # large-ε stress case
    (1.0, 0.01, 1_000, 1e-18),  # tiny δ
]

_FOOTER = """
import json, resource, sys
print(json.dumps({"result": RESULT, "seconds": SECONDS, "import": IMPORT,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

CODE = {
    "privamp": """
import time
t = time.perf_counter()
from privamp import GaussianMechanism
from privamp.accountant import Accountant
from privamp.sampling import Poisson
IMPORT = time.perf_counter() - t
t = time.perf_counter()
b = Accountant().add(GaussianMechanism({s}), {T}, scheme=Poisson({q})).epsilon({d})
SECONDS = time.perf_counter() - t
RESULT = [b.lower, b.upper]
""",
    "dp_accounting": """
import time, math
t = time.perf_counter()
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
IMPORT = time.perf_counter() - t
t = time.perf_counter()
acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
acc.compose(dp_event.PoissonSampledDpEvent({q}, dp_event.GaussianDpEvent({s})), {T})
e = acc.get_epsilon({d})
SECONDS = time.perf_counter() - t
RESULT = [None, e if math.isfinite(e) else "inf"]
""",
    "prv_accountant": """
import time
t = time.perf_counter()
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
IMPORT = time.perf_counter() - t
t = time.perf_counter()
prv = PoissonSubsampledGaussianMechanism(noise_multiplier={s}, sampling_probability={q})
acc = PRVAccountant(prvs=[prv], max_self_compositions=[{T}], eps_error=0.01,
                    delta_error={d} * 1e-3)
lo, est, up = acc.compute_epsilon(delta={d}, num_self_compositions=[{T}])
SECONDS = time.perf_counter() - t
RESULT = [lo, up]
""",
    "opacus": """
import time
t = time.perf_counter()
from opacus.accountants import PRVAccountant
IMPORT = time.perf_counter() - t
t = time.perf_counter()
acc = PRVAccountant()
acc.history = [({s}, {q}, {T})]
e = acc.get_epsilon(delta={d})
SECONDS = time.perf_counter() - t
RESULT = [None, e]
""",
}


def run_tool(tool: str, s, q, T, d, timeout: float) -> dict:
    if tool == "privamp-cli":
        exe = Path(sys.executable).with_name("privamp")
        if not exe.exists():
            exe = shutil.which("privamp")
        argv = [str(exe), "epsilon", "--mechanism", "gaussian", "--sigma", str(s), "--sampling",
                "poisson", "--rate", str(q), "--steps", str(T), "--delta", str(d), "--json"]
    else:
        argv = [sys.executable, "-c", CODE[tool].format(s=s, q=q, T=T, d=d) + _FOOTER]
    start = time.perf_counter()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    wall = time.perf_counter() - start
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        if "ModuleNotFoundError" in r.stderr or "No module named" in r.stderr:
            return {"error": "not installed"}
        return {"error": last[:70]}
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if tool == "privamp-cli":
        return {"lower": out["epsilon_lower"], "upper": out["epsilon"], "seconds": None,
                "import": None, "wall": wall, "peak_mb": None}
    lower, upper = out["result"]
    return {"lower": lower, "upper": upper, "seconds": out["seconds"], "import": out["import"],
            "wall": wall, "peak_mb": out["peak_mb"]}


def fmt(x, spec=".5f"):
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    return format(x, spec)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the fast landscape rows")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds per tool and case (default 300)")
    parser.add_argument("--tools", nargs="+",
                        default=["privamp", "privamp-cli", "dp_accounting", "prv_accountant",
                                 "opacus"])
    args = parser.parse_args()
    rows = [r for r in ROWS if r[2] <= 10_000 and r[3] == 1e-5][:3] if args.quick else ROWS
    print("| σ | q | steps | δ | tool | ε (upper) | bracket width | import s | compute s | "
          "whole s | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s, q, T, d in rows:
        for tool in args.tools:
            res = run_tool(tool, s, q, T, d, args.timeout)
            if "error" in res:
                print(f"| {s} | {q} | {T:,} | {d:g} | {tool} | {res['error']} | | | | | |")
                continue
            up, lo = res["upper"], res["lower"]
            width = (up - lo) if (lo is not None and not isinstance(up, str)) else None
            print(f"| {s} | {q} | {T:,} | {d:g} | {tool} | {fmt(up)} | {fmt(width, '.2e')} | "
                  f"{fmt(res['import'], '.3f')} | {fmt(res['seconds'], '.3f')} | "
                  f"{fmt(res['wall'], '.2f')} | "
                  f"{fmt(res['peak_mb'], '.0f')} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
