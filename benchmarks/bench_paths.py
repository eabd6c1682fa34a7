"""Every accounting path side by side with the peers: one table and one figure (``make bench``).

The cases are the table of privamp issue 17: the Poisson-subsampled Gaussian against the number
of steps T (10^3 … 10^7), the other sampling schemes and mechanisms at T = 10^4 (Poisson under
substitution, WOR, WR, MUST.OW / MUST.WO / MUST.WW, Laplace, randomized response), tiny δ with a
small sampling rate, and the RDP accountants. Each (case, tool) runs in a **fresh Python
process** with a time limit and a memory cap; nothing is imported into this process but the
standard library (and matplotlib at the end, for the figure). For every run the table gives

* ε — the upper end of privamp's certified bracket (its lower end and the bracket's width next
  to it), the peers' single number or, for prv_accountant, its upper estimate and its own
  (uncertified) bracket;
* **compute s** — the computation inside the process, imports excluded;
* **whole s** — the wall time of a fresh process doing the whole job, start-up and imports
  included: for privamp the ``privamp epsilon`` command, for a peer its script;
* **peak MiB** — the peak resident memory of the child process (``ru_maxrss`` of the reaped
  child, from ``os.wait4``), for privamp of the in-process run (the command's is in the JSON);
* a failure as ``timeout``, ``refused: <message>`` (privamp's typed refusal, or the command's
  exit status 2) or ``error: <the exception's first line>`` instead of a number.

The tools: ``privamp`` (``Accountant``, PLD backend, and the ``privamp epsilon`` command),
``privamp RDP`` (``Backend.RDP``), ``dp_accounting PLD`` (its default 1e-4 pessimistic
discretisation), ``dp_accounting RDP``, ``prv_accountant`` (eps_error 0.01, delta_error δ/1000)
and ``Opacus RDP`` (``RDPAccountant``). A tool that is not installed is reported as such.

Timings are the median of ``--repeat`` runs (default 3) for runs whose first whole process took
under 5 s, otherwise of one run; the runs of a case alternate between the tools, so a drift of the
machine's speed affects them alike. The header of the table records the machine (CPU, cores,
memory, Python, package versions, where privamp was imported from and its commit) and the load
(``os.getloadavg`` before, during and after).

Run (``make bench`` does the first in the ``.venv-bench`` virtualenv it creates)::

    python benchmarks/bench_paths.py                 # all cases, ≈ 15-20 min on 2 cores
    BENCH_QUICK=1 python benchmarks/bench_paths.py   # a small subset, < 2 min, checks the harness
    python benchmarks/bench_paths.py --plot-only     # redraw the figure from results/paths.json

Output: ``benchmarks/results/paths.md`` (the table), ``paths.png`` (the figure) and
``paths.json`` (every run's raw numbers); the quick mode writes ``paths-quick.*`` instead, so it
never overwrites the full table. Measurements, never assertions.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import decimal
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results"

# ---------------------------------------------------------------------------------------------
# what runs in the child processes

_CHILD = """\
import json, time
_t0 = time.perf_counter()
{imports}
_t1 = time.perf_counter()
try:
{compute}
    _out = {{"compute": time.perf_counter() - _t1, "lower": LOWER, "upper": UPPER}}
except Exception as _e:
    _msg = (str(_e).strip().splitlines() or [""])[0]
    _out = {{"error": type(_e).__name__ + ": " + _msg, "refused": isinstance(_e, {refused})}}
_out["import"] = _t1 - _t0
print(json.dumps(_out))
"""


def child_code(imports: str, compute: str, refused: str = "()") -> str:
    """A child script: time the imports, then the computation (which sets LOWER and UPPER)."""
    return _CHILD.format(imports=textwrap.dedent(imports).strip(),
                         compute=textwrap.indent(textwrap.dedent(compute).strip(), "    "),
                         refused=refused)


@dataclasses.dataclass(frozen=True)
class PrivampSpec:
    """One privamp ledger, written both as library code and as ``privamp epsilon`` options.

    ``mechanism`` is (CLI name, {CLI option: value}); ``sampling`` is (CLI scheme or "none",
    {option: value}); ``relation`` the outer relation (None: the scheme's natural one);
    ``base_relation`` the relation the base mechanism is stated under (what the amplification
    theorem needs: substitute for WOR/WR/MUST and Poisson under substitution).
    """

    mechanism: tuple[str, dict]
    sampling: tuple[str, dict]
    relation: str | None = None
    base_relation: str = "add-remove"
    backend: str = "pld"

    _MECH = {"gaussian": ("GaussianMechanism", {"sigma": "sigma"}),
             "laplace": ("LaplaceMechanism", {"scale": "scale"}),
             "randomized-response": ("RandomizedResponse.from_epsilon",
                                     {"rr-epsilon": "epsilon"})}
    _SCHEME = {"poisson": ("Poisson", {"rate": "rate", "n": "n"}),
               "wor": ("WithoutReplacement", {"n": "n", "m": "m"}),
               "wr": ("WithReplacement", {"n": "n", "m": "m"}),
               "must-ow": ("MustOW", {"n": "n", "b": "b", "m": "m"}),
               "must-wo": ("MustWO", {"n": "n", "b": "b", "m": "m"}),
               "must-ww": ("MustWW", {"n": "n", "b": "b", "m": "m"})}

    def code(self, steps: int, delta: float) -> str:
        name, options = self.mechanism
        cls, kw = self._MECH[name]
        args = ", ".join(f"{kw[k]}={v!r}" for k, v in options.items())
        mech = f"{cls}({args}, relation={self.base_relation!r})"
        scheme_name, scheme_options = self.sampling
        if scheme_name == "none":
            scheme = "None"
            classes = [cls.split(".")[0]]
        else:
            scls, skw = self._SCHEME[scheme_name]
            scheme = f"{scls}({', '.join(f'{skw[k]}={v!r}' for k, v in scheme_options.items())})"
            classes = [cls.split(".")[0], scls]
        imports = (f"from privamp import Accountant, {', '.join(classes)}\n"
                   "from privamp.errors import PrivampError")
        # privamp imports its modules lazily, on first use: a small ledger of the same kinds
        # (another noise parameter, 2 steps, δ 0.1 — nothing the timed ledger could reuse)
        # loads them here, so that "compute" excludes imports for privamp as for the peers
        warm_args = ", ".join(f"{kw[k]}={v * 1.37!r}" if i == 0 else f"{kw[k]}={v!r}"
                              for i, (k, v) in enumerate(options.items()))
        warm = f"{cls}({warm_args}, relation={self.base_relation!r})"
        imports += (f"\ntry:\n    Accountant({self.backend!r}).add({warm}, 2, scheme={scheme}, "
                    f"relation={self.relation!r}).epsilon(0.1)\n"
                    "except PrivampError:\n    pass")
        compute = (f"acc = Accountant({self.backend!r}).add({mech}, {steps}, scheme={scheme}, "
                   f"relation={self.relation!r})\n"
                   f"b = acc.epsilon({delta!r})\n"
                   "LOWER, UPPER = b.lower, b.upper")
        return child_code(imports, compute, refused="PrivampError")

    def cli(self, steps: int, delta: float) -> list[str]:
        name, options = self.mechanism
        argv = ["epsilon", "--mechanism", name]
        for k, v in options.items():
            argv += [f"--{k}", repr(v)]
        scheme_name, scheme_options = self.sampling
        argv += ["--sampling", scheme_name]
        for k, v in scheme_options.items():
            argv += [f"--{k}", repr(v)]
        if self.relation is not None:
            argv += ["--relation", self.relation]
        return argv + ["--steps", str(steps), "--delta", repr(delta), "--accountant",
                       self.backend, "--json"]


def dpa_pld(event: str, relation: str = "ADD_OR_REMOVE_ONE") -> str:
    """dp_accounting's PLD accountant (its default pessimistic 1e-4 discretisation)."""
    return child_code(
        """
        import math
        from dp_accounting import dp_event
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.privacy_accountant import NeighboringRelation
        """,
        f"""
        acc = pld_privacy_accountant.PLDAccountant(NeighboringRelation.{relation},
                                                   value_discretization_interval=1e-4)
        acc.compose({event}, STEPS)
        LOWER, UPPER = None, acc.get_epsilon(DELTA)
        """)


def dpa_rdp(event: str, relation: str = "ADD_OR_REMOVE_ONE") -> str:
    """dp_accounting's RDP accountant (its default orders)."""
    return child_code(
        """
        from dp_accounting import dp_event
        from dp_accounting.privacy_accountant import NeighboringRelation
        from dp_accounting.rdp import rdp_privacy_accountant
        """,
        f"""
        acc = rdp_privacy_accountant.RdpAccountant(
            neighboring_relation=NeighboringRelation.{relation})
        acc.compose({event}, STEPS)
        LOWER, UPPER = None, acc.get_epsilon(DELTA)
        """)


def dpa_rr(noise_parameter: float) -> str:
    """dp_accounting's PLD of binary randomized response, self-composed.

    Not through its ``PLDAccountant``: version 0.6.0 composes a ``RandomizedResponseDpEvent``
    once whatever its count (the branch lacks the ``self_compose(count)`` of the others).
    """
    return child_code(
        """
        from dp_accounting.pld import privacy_loss_distribution
        from dp_accounting.privacy_accountant import NeighboringRelation
        """,
        f"""
        pld = privacy_loss_distribution.from_randomized_response(
            {noise_parameter!r}, 2, value_discretization_interval=1e-4,
            neighboring_relation=NeighboringRelation.REPLACE_ONE).self_compose(STEPS)
        LOWER, UPPER = None, pld.get_epsilon_for_delta(DELTA)
        """)


def prv(sigma: float, rate: float) -> str:
    """Gopi et al.'s PRV accountant (Poisson-subsampled Gaussian); its bracket is an estimate."""
    return child_code(
        """
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
        """,
        f"""
        prv = PoissonSubsampledGaussianMechanism(noise_multiplier={sigma!r},
                                                 sampling_probability={rate!r})
        acc = PRVAccountant(prvs=[prv], max_self_compositions=[STEPS], eps_error=0.01,
                            delta_error=DELTA * 1e-3)
        LOWER, _estimate, UPPER = acc.compute_epsilon(delta=DELTA, num_self_compositions=[STEPS])
        """)


def opacus_rdp(sigma: float, rate: float) -> str:
    """Opacus's RDPAccountant (its default orders) on one (σ, q, T) history entry."""
    return child_code(
        "from opacus.accountants import RDPAccountant",
        f"""
        acc = RDPAccountant()
        acc.history = [({sigma!r}, {rate!r}, STEPS)]
        LOWER, UPPER = None, acc.get_epsilon(delta=DELTA)
        """)


POISSON_GAUSSIAN = "dp_event.PoissonSampledDpEvent({q!r}, dp_event.GaussianDpEvent({s!r}))"


@dataclasses.dataclass(frozen=True)
class Case:
    """One row group of the table: a ledger of ``steps`` events at ``delta``, and its tools."""

    group: str  # "T", "scheme", "small q", "RDP": the figure's panels
    label: str
    steps: int
    delta: float
    privamp: PrivampSpec | None
    peers: dict  # tool name -> child code with STEPS / DELTA placeholders
    quick: bool = False
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.label} | T={self.steps:g} | δ={self.delta:g}"


def gaussian_poisson(sigma=1.0, rate=0.01, backend="pld") -> PrivampSpec:
    return PrivampSpec(("gaussian", {"sigma": sigma}), ("poisson", {"rate": rate}),
                       backend=backend)


def substitution_scheme(scheme: str, **sizes) -> PrivampSpec:
    return PrivampSpec(("gaussian", {"sigma": 1.0}), (scheme, sizes),
                       base_relation="substitute")


def cases() -> list[Case]:
    out: list[Case] = []
    pg = POISSON_GAUSSIAN.format(q=0.01, s=1.0)
    # 1. the headline path against T
    for steps in (1_000, 10_000, 100_000, 1_000_000, 10_000_000):
        out.append(Case("T", "Poisson-Gaussian σ 1 q 0.01", steps, 1e-5, gaussian_poisson(),
                        {"dp_accounting PLD": dpa_pld(pg), "prv_accountant": prv(1.0, 0.01)},
                        quick=steps <= 10_000))
    # 2. off the headline path, T = 10^4 (σ 1, δ 1e-5)
    sub = PrivampSpec(("gaussian", {"sigma": 1.0}), ("poisson", {"rate": 0.01, "n": 60_000}),
                      relation="substitute", base_relation="substitute")
    for steps in (10, 10_000):
        out.append(Case("scheme", "Poisson subst. n 60000 q 0.01", steps, 1e-5, sub,
                        {"dp_accounting PLD": dpa_pld(pg, "REPLACE_ONE")},
                        note="dp_accounting: its REPLACE_ONE pair, not Theorem 14"))
    sizes = {"n": 60_000, "m": 600}
    wor = "dp_event.SampledWithoutReplacementDpEvent(60000, 600, dp_event.GaussianDpEvent(1.0))"
    out.append(Case("scheme", "WOR n 60000 m 600", 10_000, 1e-5,
                    substitution_scheme("wor", **sizes),
                    {"privamp RDP": PrivampSpec(("gaussian", {"sigma": 1.0}), ("wor", sizes),
                                                base_relation="substitute", backend="rdp"),
                     "dp_accounting RDP": dpa_rdp(wor, "REPLACE_ONE")}, quick=True))
    out.append(Case("scheme", "WR n 60000 m 600", 10_000, 1e-5,
                    substitution_scheme("wr", **sizes), {}))
    for kind in ("must-ow", "must-wo", "must-ww"):
        out.append(Case("scheme", f"{kind.upper()} n 60000 b 30000 m 600", 10_000, 1e-5,
                        substitution_scheme(kind, n=60_000, b=30_000, m=600), {},
                        quick=kind == "must-ow"))
    laplace = "dp_event.PoissonSampledDpEvent(0.01, dp_event.LaplaceDpEvent(1.0))"
    out.append(Case("scheme", "Laplace b 1, Poisson q 0.01", 10_000, 1e-5,
                    PrivampSpec(("laplace", {"scale": 1.0}), ("poisson", {"rate": 0.01})),
                    {"dp_accounting PLD": dpa_pld(laplace)}, quick=True))
    # binary randomized response, ε = 0.01 (ε ≈ 4 after 10^4 steps): true bit with
    # p = e^ε/(1+e^ε); dp_accounting's k-bucket form keeps the input with 1 - ρ and draws
    # uniformly with ρ, so p = 1 - ρ/2, ρ = 2/(1+e^ε)
    rho = 2 / (1 + math.exp(0.01))
    out.append(Case("scheme", "Randomized response ε 0.01", 10_000, 1e-5,
                    PrivampSpec(("randomized-response", {"rr-epsilon": 0.01}), ("none", {})),
                    {"dp_accounting PLD": dpa_rr(rho)}, quick=True,
                    note="dp_accounting: from_randomized_response(...).self_compose(T), since "
                         "its PLDAccountant ignores the count of a RandomizedResponseDpEvent"))
    out.append(Case("scheme", "Randomized response ε 1, Poisson q 0.01", 10_000, 1e-5,
                    PrivampSpec(("randomized-response", {"rr-epsilon": 1.0}),
                                ("poisson", {"rate": 0.01})), {}))
    # 3. tiny δ and small sampling rates
    small = POISSON_GAUSSIAN.format(q=1e-4, s=0.5)
    for steps, delta in ((1_000, 1e-10), (10_000, 1e-10), (1_000, 1e-3)):
        out.append(Case("small q", "Poisson-Gaussian σ 0.5 q 1e-4", steps, delta,
                        gaussian_poisson(0.5, 1e-4),
                        {"dp_accounting PLD": dpa_pld(small), "prv_accountant": prv(0.5, 1e-4)},
                        quick=(steps, delta) == (1_000, 1e-10)))
    # 4. RDP accountants (privamp's RDP goes in the privamp slot: compute + command)
    for steps in (1_000, 10_000, 100_000, 1_000_000):
        out.append(Case("RDP", "RDP, Poisson-Gaussian σ 1 q 0.01", steps, 1e-5,
                        gaussian_poisson(backend="rdp"),
                        {"Opacus RDP": opacus_rdp(1.0, 0.01), "dp_accounting RDP": dpa_rdp(pg)},
                        quick=steps == 1_000))
    return out


# ---------------------------------------------------------------------------------------------
# running one child


def run_child(argv: list[str], timeout: float, mem_bytes: int | None) -> dict:
    """Run ``argv`` in a fresh process group; wall time, exit status and peak RSS of the child.

    The child is reaped with ``os.wait4``, whose resource usage is that child's alone (not the
    maximum over every child so far, as ``RUSAGE_CHILDREN`` would be). A timer kills the
    child's process group at ``timeout``; it cannot hit a reused pid, because it only kills
    while the child is unreaped (a zombie keeps its pid).
    """
    def limit():  # in the child, before exec
        if mem_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))

    lock = threading.Lock()
    state = {"reaped": False, "timed_out": False}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True, preexec_fn=limit)

        def kill():
            with lock:
                if not state["reaped"]:
                    state["timed_out"] = True
                    os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        with lock:
            state["reaped"] = True
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        try:  # anything the child left in its group
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    return {"returncode": proc.returncode, "wall": wall, "peak_mib": usage.ru_maxrss / 1024,
            "timed_out": state["timed_out"], "stdout": stdout, "stderr": stderr}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _failure(raw: dict, timeout: float) -> dict | None:
    """The status of a run that did not answer, or None."""
    if raw["timed_out"]:
        return {"status": "timeout", "message": f"timeout after {timeout:g} s"}
    if "No module named" in raw["stderr"]:
        return {"status": "not installed", "message": _last_line(raw["stderr"])[:100]}
    if raw["returncode"] < 0:
        return {"status": "error",
                "message": f"killed by {signal.Signals(-raw['returncode']).name}"}
    return None


def run_script(code: str, timeout: float, mem_bytes: int | None) -> dict:
    """A child script (``child_code``): its answer, its compute and import times, wall, peak."""
    raw = run_child([sys.executable, "-c", code], timeout, mem_bytes)
    base = {"wall": raw["wall"], "peak_mib": raw["peak_mib"]}
    failed = _failure(raw, timeout)
    if failed:
        return base | failed
    try:
        out = json.loads(_last_line(raw["stdout"]))
    except json.JSONDecodeError:
        message = _last_line(raw["stderr"]) or f"exit status {raw['returncode']}"
        return base | {"status": "error", "message": message[:160]}
    if "error" in out:
        status = "refused" if out["refused"] else "error"
        return base | {"status": status, "message": out["error"][:160], "import": out["import"]}
    return base | {"status": "ok", "lower": out["lower"], "upper": out["upper"],
                   "compute": out["compute"], "import": out["import"]}


def privamp_command() -> list[str]:
    exe = Path(sys.executable).with_name("privamp")  # the venv's console script
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "privamp"]


def run_cli(argv: list[str], timeout: float, mem_bytes: int | None) -> dict:
    """The ``privamp epsilon ... --json`` command as a whole: wall time, peak, its answer."""
    raw = run_child(privamp_command() + argv, timeout, mem_bytes)
    base = {"wall": raw["wall"], "peak_mib": raw["peak_mib"]}
    failed = _failure(raw, timeout)
    if failed:
        return base | failed
    if raw["returncode"] == 2 and "privamp: error:" in raw["stderr"]:
        message = _last_line(raw["stderr"]).removeprefix("privamp: error:").strip()
        return base | {"status": "refused", "message": message[:160]}
    if raw["returncode"] != 0:
        return base | {"status": "error", "message": _last_line(raw["stderr"])[:160]}
    out = json.loads(_last_line(raw["stdout"]))
    return base | {"status": "ok", "lower": out.get("epsilon_lower"), "upper": out["epsilon"]}


# ---------------------------------------------------------------------------------------------
# one case: every tool, alternating, repeated while cheap


def _substitute(code: str, case: Case) -> str:
    return code.replace("STEPS", str(case.steps)).replace("DELTA", repr(case.delta))


def _jobs(case: Case) -> list[tuple[str, str, object]]:
    """(tool, kind, what) in the order they alternate: kind "api", "cli" or "script"."""
    jobs: list[tuple[str, str, object]] = []
    if case.privamp is not None:
        backend = case.privamp.backend
        tool = "privamp" if backend == "pld" else f"privamp {backend.upper()}"
        jobs.append((tool, "api", case.privamp.code(case.steps, case.delta)))
        jobs.append((tool, "cli", case.privamp.cli(case.steps, case.delta)))
    for tool, what in case.peers.items():
        if isinstance(what, PrivampSpec):  # a second privamp backend
            jobs.append((tool, "api", what.code(case.steps, case.delta)))
            jobs.append((tool, "cli", what.cli(case.steps, case.delta)))
        else:
            jobs.append((tool, "script", _substitute(what, case)))
    return jobs


def run_case(case: Case, repeat: int, repeat_under: float, timeout: float,
             mem_bytes: int | None) -> list[dict]:
    jobs = _jobs(case)
    runs: dict[int, list[dict]] = {i: [] for i in range(len(jobs))}
    for round_ in range(repeat):
        for i, (_tool, kind, what) in enumerate(jobs):
            done = runs[i]
            if round_ > 0 and (not done or done[0]["status"] != "ok"
                               or done[0]["wall"] >= repeat_under):
                continue
            if kind == "cli" and runs[i - 1] and runs[i - 1][0]["status"] == "timeout":
                done.append({"status": "not run", "message": "the in-process run timed out"})
                continue
            if kind == "cli":
                done.append(run_cli(what, timeout, mem_bytes))
            else:
                done.append(run_script(what, timeout, mem_bytes))
    rows: dict[str, dict] = {}
    for i, (tool, kind, _what) in enumerate(jobs):
        row = rows.setdefault(tool, {"case": case.key, "group": case.group,
                                     "label": case.label, "steps": case.steps,
                                     "delta": case.delta, "tool": tool, "note": case.note})
        row[kind] = summarise(runs[i])
    return list(rows.values())


def summarise(runs: list[dict]) -> dict:
    """The first run's answer and status; the median of each timing over the runs."""
    first = dict(runs[0])
    first["runs"] = len(runs)
    for key in ("wall", "compute", "import", "peak_mib"):
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            first[key] = statistics.median(values)
    return first


# ---------------------------------------------------------------------------------------------
# the machine and the load


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _privamp_source() -> tuple[str, str]:
    """Where the children import privamp from (PYTHONPATH included), and its git commit."""
    spec = importlib.util.find_spec("privamp")
    if spec is None or spec.origin is None:
        return "not importable", "?"
    origin = Path(spec.origin).parent
    try:
        commit = subprocess.run(["git", "-C", str(origin), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(origin), "status", "--porcelain", "--", "."],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return str(origin), "?"
    return str(origin), (commit or "?") + (" (uncommitted changes)" if dirty else "")


def machine() -> dict:
    source, commit = _privamp_source()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": _memory_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "privamp_source": source,
        "privamp_commit": commit,
        "packages": {d: _version(d) for d in ("privamp", "numpy", "scipy", "dp-accounting",
                                              "prv-accountant", "opacus", "torch",
                                              "matplotlib")},
    }


# ---------------------------------------------------------------------------------------------
# the table


def _num(x, spec=".3g") -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return format(x, spec)


def _eps(row: dict) -> tuple[str, str, str]:
    """ε (upper), lower end, bracket width (absolute, relative) from the in-process run."""
    run = row.get("api") or row.get("script")
    if run is None or run["status"] != "ok":
        cli = row.get("cli")
        if cli is not None and cli.get("status") == "ok":
            run = cli
        else:
            return "", "", ""
    upper, lower = run["upper"], run["lower"]
    if upper is None:
        return "—", "", ""
    up = _directed(upper, up=True)
    if lower is None or math.isinf(upper):
        return up, "—", "—"
    width = upper - lower
    rel = width / upper if upper else math.nan
    return up, _directed(lower, up=False), f"{width:.2g} ({rel * 100:.2g} %)"


def _directed(x: float, up: bool, digits: int = 6) -> str:
    """``x`` to ``digits`` significant digits rounded outward (upper ends up, lower ends down):
    the project's rule for numbers shown to people."""
    if not math.isfinite(x) or x == 0:
        return _num(x, f".{digits}g")
    q = decimal.Decimal(x)
    exp = q.adjusted() - digits + 1
    r = q.quantize(decimal.Decimal(1).scaleb(exp),
                   rounding=decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR)
    return format(float(r), f".{digits}g")


def _status(run: dict | None) -> str:
    if run is None:
        return ""
    if run["status"] == "ok":
        return ""
    return f"{run['status']}: {run['message']}" if run["status"] != "timeout" else "timeout"


def _time(run: dict | None, key: str) -> str:
    if run is None:
        return "—"
    if run["status"] == "timeout":
        return "timeout"
    if run["status"] != "ok":
        return run["status"]
    return _num(run.get(key), ".3f")


def table(rows: list[dict], info: dict) -> str:
    m = info["machine"]
    pk = m["packages"]
    load = info["load"]
    quick = " (QUICK subset)" if info["quick"] else ""
    lines = [
        f"# privamp vs the peers on every accounting path{quick}",
        "",
        f"Generated by `{info['command']}` on {info['date']} in {info['seconds']:.0f} s "
        "(benchmarks/bench_paths.py; `make bench` runs it in `.venv-bench`).",
        "",
        f"- **Machine**: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), "
        f"{_num(m['memory_gib'], '.1f')} GiB; {m['platform']}; Python {m['python']}.",
        f"- **Packages**: privamp {pk['privamp']} (imported from `{m['privamp_source']}`, "
        f"commit {m['privamp_commit']}), NumPy {pk['numpy']}, SciPy {pk['scipy']}, "
        f"dp-accounting {pk['dp-accounting']}, prv-accountant {pk['prv-accountant']}, "
        f"Opacus {pk['opacus']}, torch {pk['torch']}.",
        f"- **Load** (os.getloadavg, 1/5/15 min): before {_load(load['before'])}, after "
        f"{_load(load['after'])}; largest 1-min load at the start of a case "
        f"{load['max_1min']:.2f}.",
        f"- **Runs**: every (case, tool) in a fresh process; timeout {info['timeout']:g} s, "
        f"address-space cap {info['mem_cap']}; " + (
            f"timings are the median of {info['repeat']} runs when the first whole process "
            f"took < {info['repeat_under']:g} s, else of one run (column `runs`)."
            if info["repeat"] > 1 else "one run each."),
        "- **Columns**: *compute* is inside the process, imports excluded; *whole* is a fresh "
        "process's wall time (for privamp the `privamp epsilon` command); *peak* is the child's "
        "peak RSS (for privamp the in-process run). ε is privamp's certified upper end (its "
        "bracket's lower end and width next to it), prv_accountant's upper estimate (its own, "
        "uncertified bracket), and the other peers' single value. σ 1 and δ 1e-5 unless said; "
        "under substitution (WOR/WR/MUST, Poisson subst.) the sensitivity is 1 under "
        "substitution.",
        "",
        "| case | T | δ | tool | ε (upper) | lower end | bracket width (rel.) | compute s | "
        "whole s | peak MiB | runs | status / note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        inproc = row.get("api") or row.get("script")
        whole = row.get("cli") or row.get("script")
        up, lo, width = _eps(row)
        notes = []
        for run, what in ((inproc, ""), (row.get("cli"), "command: ")):
            s = _status(run)
            if s:
                notes.append(what + s)
        if row.get("cli") and row.get("api") and row["cli"].get("status") == "ok" \
                and row["api"].get("status") == "ok" and row["cli"]["upper"] != row["api"]["upper"]:
            notes.append(f"command's ε {row['cli']['upper']:.6g}")
        if row["note"] and not row["tool"].startswith("privamp"):
            notes.append(row["note"])
        runs = "/".join(str(r.get("runs", "")) for r in (inproc, row.get("cli")) if r)
        peak = _num(inproc.get("peak_mib"), ".0f") if inproc else "—"
        lines.append(
            f"| {row['label']} | {row['steps']:,} | {row['delta']:g} | {row['tool']} | {up} | "
            f"{lo} | {width} | {_time(inproc, 'compute')} | {_time(whole, 'wall')} | {peak} | "
            f"{runs} | {'; '.join(notes).replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def _load(values) -> str:
    return "/".join(f"{v:.2f}" for v in values)


# ---------------------------------------------------------------------------------------------
# the figure

TOOL_STYLE = {
    "privamp": ("C0", "o"), "privamp RDP": ("C9", "s"),
    "dp_accounting PLD": ("C1", "^"), "dp_accounting RDP": ("C5", "v"),
    "prv_accountant": ("C2", "D"), "Opacus RDP": ("C3", "P"),
}


def _value(row: dict, which: str, key: str) -> float | None:
    """A number for the plot: which = "inproc" (api or script) or "whole" (cli or script)."""
    run = (row.get("api") or row.get("script")) if which == "inproc" \
        else (row.get("cli") or row.get("script"))
    if run is None or run.get("status") != "ok":
        return None
    return run.get(key)


def _failed_label(row: dict, which: str) -> str | None:
    run = (row.get("api") or row.get("script")) if which == "inproc" \
        else (row.get("cli") or row.get("script"))
    if run is None or run.get("status") == "ok":
        return None
    return run["status"]


def _against_t(ax, rows, group, which, key, ylabel, title):
    tools = [t for t in TOOL_STYLE if any(r["tool"] == t for r in rows if r["group"] == group)]
    failures = []
    for tool in tools:
        pts = [(r["steps"], _value(r, which, key)) for r in rows
               if r["group"] == group and r["tool"] == tool]
        ok = [(t, v) for t, v in pts if v is not None and v > 0]
        color, marker = TOOL_STYLE[tool]
        if ok:
            ax.plot(*zip(*ok, strict=True), marker=marker, color=color, label=tool)
        for r in rows:
            if r["group"] == group and r["tool"] == tool:
                bad = _failed_label(r, which)
                if bad:
                    failures.append(f"{tool} T={r['steps']:.0e}: {bad}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("steps T")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    if failures:
        ax.text(0.02, 0.98, "\n".join(failures), transform=ax.transAxes, fontsize=6.5,
                va="top", color="0.3")


def _width_against_t(ax, rows):
    failures = []
    for tool in ("privamp", "prv_accountant"):
        pts = []
        for r in rows:
            if r["group"] != "T" or r["tool"] != tool:
                continue
            run = r.get("api") or r.get("script")
            if run and run.get("status") == "ok" and run.get("lower") is not None \
                    and run["upper"] and math.isfinite(run["upper"]):
                pts.append((r["steps"], (run["upper"] - run["lower"]) / run["upper"]))
            else:
                failures.append(f"{tool} T={r['steps']:.0e}: no bracket")
        color, marker = TOOL_STYLE[tool]
        if pts:
            label = tool + (" (certified)" if tool == "privamp" else " (estimate)")
            ax.plot(*zip(*pts, strict=True), marker=marker, color=color, label=label)
    ax.axhline(1e-3, color="0.5", ls="--", lw=0.8, label="0.1 % target")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("steps T")
    ax.set_ylabel("bracket width / ε")
    ax.set_title("Poisson-Gaussian: relative bracket width", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    if failures:
        ax.text(0.02, 0.02, "\n".join(failures), transform=ax.transAxes, fontsize=6.5,
                va="bottom", color="0.3")


def _bars(ax, cases, label_of, bars, xlabel, title):
    """Horizontal bars, one group per case (``label_of(row)``), one bar per tool and measure.

    ``bars`` are (which, key, legend suffix, alpha) drawn for every tool of a case; a run that
    did not answer is named under its case's label instead of drawn.
    """
    labels = list(dict.fromkeys(label_of(r) for r in cases))
    tools = [t for t in TOOL_STYLE if any(r["tool"] == t for r in cases)]
    combos = [(tool, *bar) for tool in tools for bar in bars]
    height = 0.8 / max(len(combos), 1)
    failures: dict[str, list[str]] = {label: [] for label in labels}
    legend = set()
    for j, (tool, which, key, suffix, alpha) in enumerate(combos):
        color, _ = TOOL_STYLE[tool]
        for i, label in enumerate(labels):
            row = next((r for r in cases if label_of(r) == label and r["tool"] == tool), None)
            if row is None:
                continue
            value = _value(row, which, key)
            if value is None:
                bad = _failed_label(row, which)
                entry = f"{tool}: {bad}"
                if bad and entry not in failures[label]:
                    failures[label].append(entry)
                continue
            name = f"{tool} ({suffix})"
            ax.barh(i + (j - (len(combos) - 1) / 2) * height, value, height=height,
                    color=color, alpha=alpha, label=None if name in legend else name)
            legend.add(name)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([label + "".join(f"\n[{f}]" for f in failures[label])
                        for label in labels], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    if legend:
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4)


def _at_1e4(rows):
    return [r for r in rows if r["steps"] == 10_000 and r["group"] in ("T", "scheme")]


TIME_BARS = [("inproc", "compute", "compute", 1.0), ("whole", "wall", "whole", 0.4)]


def figure(rows: list[dict], info: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(22, 17))
    grid = fig.add_gridspec(3, 4, height_ratios=(1, 1, 1.3))
    top = [fig.add_subplot(grid[0, i]) for i in range(4)]
    _against_t(top[0], rows, "T", "inproc", "compute", "seconds (in-process, no import)",
               "Poisson-Gaussian σ 1 q 0.01 δ 1e-5: compute")
    _against_t(top[1], rows, "T", "whole", "wall", "seconds (fresh process)",
               "Poisson-Gaussian: whole command")
    _against_t(top[2], rows, "T", "inproc", "peak_mib", "peak RSS, MiB",
               "Poisson-Gaussian: peak memory")
    _width_against_t(top[3], rows)
    _against_t(fig.add_subplot(grid[1, 0]), rows, "RDP", "inproc", "compute",
               "seconds (in-process, no import)", "RDP accountants, σ 1 q 0.01 δ 1e-5: compute")
    _against_t(fig.add_subplot(grid[1, 1]), rows, "RDP", "whole", "wall",
               "seconds (fresh process)", "RDP accountants: whole command")
    _bars(fig.add_subplot(grid[1, 2:]), [r for r in rows if r["group"] == "small q"],
          lambda r: f"σ 0.5 q 1e-4\nT {r['steps']:.0e} δ {r['delta']:g}", TIME_BARS, "seconds",
          "Small q, tiny δ: compute (dark) and whole (light)")
    _bars(fig.add_subplot(grid[2, :2]), _at_1e4(rows), lambda r: r["label"], TIME_BARS,
          "seconds", "T = 1e4, σ 1, δ 1e-5: compute (dark) and whole (light)")
    _bars(fig.add_subplot(grid[2, 2:]), _at_1e4(rows), lambda r: r["label"],
          [("inproc", "peak_mib", "peak", 1.0)], "peak RSS, MiB",
          "T = 1e4: peak memory (in-process)")
    m = info["machine"]
    fig.suptitle(
        f"privamp {m['packages']['privamp']} ({m['privamp_commit']}) vs dp-accounting "
        f"{m['packages']['dp-accounting']}, prv-accountant {m['packages']['prv-accountant']}, "
        f"Opacus {m['packages']['opacus']} — {m['cpu']}, {m['usable_cores']} cores, "
        f"Python {m['python']}, load {_load(info['load']['before'])} → "
        f"{_load(info['load']['after'])}{' — QUICK subset' if info['quick'] else ''}",
        fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------


def _positive_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not value > 0:
        raise SystemExit(f"bench_paths: error: {name} must be a positive number, got {raw!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    quick_env = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", default=quick_env,
                        help="a small subset in < 2 min (also BENCH_QUICK=1)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per run (default 120, quick 30; also BENCH_TIMEOUT)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per (case, tool) when cheap (default 3, quick 1; also "
                             "BENCH_REPEAT)")
    parser.add_argument("--repeat-under", type=float, default=5.0,
                        help="repeat only runs whose first whole process took under this (s)")
    parser.add_argument("--mem-gib", type=float, default=_positive_env("BENCH_MEM_GIB", 8.0),
                        help="address-space cap of every child in GiB (default 8; 0: none)")
    parser.add_argument("--only", default="", help="run only the cases whose label contains this")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw the figure and the table from the saved JSON")
    args = parser.parse_args(argv)
    if args.timeout is None:
        args.timeout = _positive_env("BENCH_TIMEOUT", 30.0 if args.quick else 120.0)
    if args.repeat is None:
        args.repeat = int(_positive_env("BENCH_REPEAT", 1 if args.quick else 3))
    if not (args.timeout > 0 and args.repeat >= 1):
        parser.error("--timeout must be > 0 and --repeat >= 1")
    stem = "paths-quick" if args.quick else "paths"
    args.out.mkdir(parents=True, exist_ok=True)
    md, png, raw = (args.out / f"{stem}.{ext}" for ext in ("md", "png", "json"))
    if args.plot_only:
        saved = json.loads(raw.read_text())
        md.write_text(table(saved["rows"], saved["info"]))
        figure(saved["rows"], saved["info"], png)
        print(f"wrote {md} and {png} from {raw}")
        return 0

    selected = [c for c in cases() if (c.quick or not args.quick) and args.only in c.label]
    mem_bytes = int(args.mem_gib * 2**30) if args.mem_gib > 0 else None
    env_prefix = " ".join(f"{k}={os.environ[k]}" for k in ("BENCH_QUICK", "BENCH_TIMEOUT",
                                                           "BENCH_REPEAT", "BENCH_MEM_GIB",
                                                           "PYTHONPATH") if os.environ.get(k))
    python = Path(sys.executable)
    if python.is_relative_to(Path.cwd()):
        python = python.relative_to(Path.cwd())
    command = " ".join(filter(None, [env_prefix, shlex.quote(str(python)),
                                     "benchmarks/bench_paths.py",
                                     *map(shlex.quote, sys.argv[1:] if argv is None else argv)]))
    info = {"command": command, "quick": args.quick, "timeout": args.timeout,
            "repeat": args.repeat, "repeat_under": args.repeat_under,
            "mem_cap": f"{args.mem_gib:g} GiB" if mem_bytes else "none",
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(), "load": {"before": os.getloadavg()}}
    print(f"{len(selected)} cases; {command}", flush=True)
    start = time.perf_counter()
    rows: list[dict] = []
    max_load = info["load"]["before"][0]
    for n, case in enumerate(selected, 1):
        max_load = max(max_load, os.getloadavg()[0])
        t = time.perf_counter()
        case_rows = run_case(case, args.repeat, args.repeat_under, args.timeout, mem_bytes)
        rows += case_rows
        summary = ", ".join(
            f"{r['tool']} {_time(r.get('api') or r.get('script'), 'compute')}"
            for r in case_rows)
        print(f"[{n}/{len(selected)}] {case.key}: {summary} ({time.perf_counter() - t:.1f} s)",
              flush=True)
    info["load"]["after"] = os.getloadavg()
    info["load"]["max_1min"] = max(max_load, info["load"]["after"][0])
    info["seconds"] = time.perf_counter() - start
    raw.write_text(json.dumps({"info": info, "rows": rows}, indent=1, default=str))
    md.write_text(table(rows, info))
    figure(rows, info, png)
    print(f"wrote {md}, {png} and {raw} in {info['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
