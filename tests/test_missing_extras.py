"""Clean failures without an optional extra, checked for every command and every package.

The optional packages are read from ``pyproject.toml`` (``[project.optional-dependencies]``: each
requirement's distribution, and the distributions its own extras bring, e.g. ``distributed`` for
``dask[distributed]``) and mapped to the top-level modules they install. Each command of
``scripts/fuzz_cli.py``'s ``BASES`` runs in a subprocess (``tests/extras_launcher.py``) in a fresh
folder, first with every package, then with one package really absent per run (no finder finds
it: ``import`` raises ModuleNotFoundError and ``importlib.util.find_spec`` returns None). The
command either succeeds exactly as with the package, or exits 2 with one line ``privamp: error:``
naming the package and ``pip install 'privamp[<extra>]'``, before any work and leaving nothing
behind.

Which (command, package) pairs run: the launcher records every top-level name a run asks the
import system for (imports and ``find_spec`` probes alike). Hiding a package acts only on those
requests, so a package the command with every package installed never asked for cannot change
the run; such pairs are checked together, all hidden at once, in one run per command (which must
give the same answer). Every package the command asks for is hidden alone.

Also here: importing privamp and every module without any extra, and each entry point of the
Python API that needs an extra raising MissingDependencyError without it.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LAUNCHER = Path(__file__).resolve().parent / "extras_launcher.py"

spec = importlib.util.spec_from_file_location("fuzz_cli", ROOT / "scripts" / "fuzz_cli.py")
fuzz_cli = sys.modules.get("fuzz_cli")
if fuzz_cli is None:
    fuzz_cli = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_cli"] = fuzz_cli
    spec.loader.exec_module(fuzz_cli)


# ---------------------------------------------------------------------------------------------
# the optional packages, from pyproject.toml
# ---------------------------------------------------------------------------------------------


def _dist_name(requirement: str) -> tuple[str, list[str]]:
    """``"dask[distributed]>=2024.8"`` -> ``("dask", ["distributed"])``."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    return req.name, sorted(req.extras)


def _optional_modules() -> tuple[dict[str, set[str]], dict[str, set[str]], list[str]]:
    """From pyproject: the optional distributions installed here, each as its main top-level
    module -> (every top-level module it installs, the extras of privamp that bring it); and
    the distributions named by an extra that are not installed (nothing to hide)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    modules_of: dict[str, set[str]] = {}
    for module, dists in metadata.packages_distributions().items():
        if module.startswith("_") or not module.isidentifier():
            continue
        for dist in dists:
            modules_of.setdefault(canonicalize_name(dist), set()).add(module)
    extras_of: dict[str, set[str]] = {}
    absent: list[str] = []
    for extra, requirements in project["optional-dependencies"].items():
        for requirement in requirements:
            name, extras = _dist_name(requirement)
            if canonicalize_name(name) == "privamp":  # dev = privamp[plots,...]: the others
                continue
            dists = {name}
            for sub in extras:  # dask[distributed] brings the distributed package
                for r in metadata.requires(name) or ():
                    req = Requirement(r)
                    if req.marker is not None and req.marker.evaluate({"extra": sub}) \
                            and not req.marker.evaluate({"extra": ""}):  # that extra's own
                        dists.add(req.name)
            for dist in map(canonicalize_name, dists):
                if dist in core:
                    continue
                if dist not in modules_of:
                    absent.append(dist)
                    continue
                extras_of.setdefault(dist, set()).add(extra)
    modules, extras = {}, {}
    for dist, found in extras_of.items():
        own = dist.replace("-", "_")
        main = own if own in modules_of[dist] else min(
            modules_of[dist], key=lambda m: (not dist.endswith(m), len(m)))
        modules[main], extras[main] = modules_of[dist], found
    return modules, extras, sorted(set(absent))


#: main module of each optional distribution -> every top-level module it installs (hidden
#: together: an absent distribution takes them all); main module -> the extras that bring it.
MODULES, OPTIONAL, NOT_INSTALLED = _optional_modules()
ALL_MODULES = frozenset().union(*MODULES.values())
#: The packages privamp's own extras exist for (the others are tools: test, docs, bench).
FEATURE_PACKAGES = ("matplotlib", "dask", "distributed", "pyarrow", "torch", "opacus",
                    "dp_accounting")


def test_the_optional_packages_are_read_from_pyproject():
    for name in FEATURE_PACKAGES:
        assert name in OPTIONAL, name
    assert OPTIONAL["matplotlib"] >= {"plots"}
    assert OPTIONAL["distributed"] == {"dask"} and OPTIONAL["pyarrow"] >= {"dask"}
    assert OPTIONAL["torch"] >= {"torch", "opacus"}


# ---------------------------------------------------------------------------------------------
# running a command in a subprocess without some packages
# ---------------------------------------------------------------------------------------------

#: The command lines: fuzz_cli's base per command (the cheapest one where it has several), or a
#: cheaper variant (delta: the unsampled Gaussian takes 0.5 s, the bases 2 s).
CHEAPEST = {"tradeoff": 1}
CHEAPER = {"delta": [*fuzz_cli.G, "--steps", "10", "--epsilon", "1"]}
#: Keys of the JSON answers that are timings (they differ between two runs).
TIMINGS = {"seconds", "throughput", "microseconds", "percent_vs_wor"}
INPUTS = ("kernel.csv", "grid.toml", "table.parquet")


@pytest.fixture(scope="module")
def inputs():
    fuzz_cli._prepare()
    return fuzz_cli.TMP


def _argv(command: str) -> list[str]:
    base = CHEAPER.get(command) or fuzz_cli.BASES[command][CHEAPEST.get(command, 0)]
    return [*command.split(), *base, "--json"]


def _outputs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--out"]


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _launch(spec: dict, folder: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """Run the launcher in ``folder``; (the process, its report)."""
    report = folder.parent / f"{folder.name}.report.json"
    spec_file = folder.parent / f"{folder.name}.spec.json"
    spec_file.write_text(json.dumps({**spec, "report": str(report)}))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run([sys.executable, "-P", str(LAUNCHER), str(spec_file)], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=120)
    return proc, json.loads(report.read_text()) if report.exists() else {}


def _run(command: str, hide, inputs: Path, tmp: Path) -> dict:
    """``privamp COMMAND ...`` in a fresh folder holding the input files, ``hide`` absent."""
    folder = Path(tempfile_dir(tmp))
    for name in INPUTS:
        shutil.copy(inputs / name, folder / name)
    argv = [a.replace("{tmp}", str(folder)) for a in _argv(command)]
    before = _listing(folder)
    proc, report = _launch({"hide": sorted(hide), "argv": argv}, folder)
    return {"proc": proc, "report": report, "argv": argv, "folder": folder, "before": before,
            "after": _listing(folder)}


def tempfile_dir(tmp: Path) -> str:
    import tempfile

    return tempfile.mkdtemp(dir=tmp)


def _answer(stdout: str, folder: Path):
    """The JSON answer without its timings, ``folder`` written ``{tmp}``."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in TIMINGS}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(json.loads(stdout.replace(str(folder), "{tmp}")))


def _same_as_baseline(run: dict, base: dict) -> str | None:
    proc = run["proc"]
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}"
    if _answer(proc.stdout, run["folder"]) != _answer(base["proc"].stdout, base["folder"]):
        return f"another answer: {proc.stdout[:300]} (with every package: " \
               f"{base['proc'].stdout[:300]})"
    if [p for p in run["after"] if p not in run["before"]] != \
            [p for p in base["after"] if p not in base["before"]]:
        return f"other files: {run['after']} (with every package: {base['after']})"
    return None


def _refused_cleanly(run: dict, package: str, base: dict) -> str | None:
    """None if ``run`` refused for the missing ``package`` by the contract; else why not."""
    proc, report = run["proc"], run["report"]
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    if proc.returncode != 2 or proc.stdout or len(lines) != 1:
        return (f"exit {proc.returncode}, {len(lines)} stderr lines: "
                f"{proc.stderr.strip()[-600:]}")
    line = lines[0]
    if not line.startswith("privamp: error: "):
        return f"no 'privamp: error: ' prefix: {line}"
    if f"'{package}'" not in line:
        return f"the missing package {package!r} is not named: {line}"
    if not any(f"pip install 'privamp[{extra}]'" in line for extra in OPTIONAL[package]):
        return f"no pip install 'privamp[{'|'.join(sorted(OPTIONAL[package]))}]': {line}"
    for out in _outputs(run["argv"]):
        for path in (Path(out), Path(out + ".partial")):
            if path.exists():
                return f"{path} was left behind"
    if run["after"] != run["before"]:
        return f"the folder changed: {run['before']} -> {run['after']}"
    # before any work: no progress report (the long computations all report), and a refusal
    # inside the command's handler only when the command reports its first step
    if report["progress"]:
        return f"{report['progress']} progress reports before the refusal"
    if report["entered"] is not None and not base["report"]["progress"]:
        return "refused inside the command, which reports no progress to prove it came first"
    if report["seconds"] > max(0.6 * base["report"]["seconds"], 0.5):
        return (f"refused after {report['seconds']:.2f} s; the command takes "
                f"{base['report']['seconds']:.2f} s with the package")
    return None


@pytest.mark.parametrize("command", list(fuzz_cli.BASES))
def test_every_command_without_each_optional_package(command, inputs, tmp_path):
    base = _run(command, (), inputs, tmp_path)
    assert base["proc"].returncode == 0, base["proc"].stderr
    asked = sorted(m for m, modules in MODULES.items() if modules & set(base["report"]["asked"]))
    failures = []
    # the packages the command never asked for: all absent at once, the same answer
    unasked = sorted(set(MODULES) - set(asked))
    others = _run(command, set().union(*(MODULES[m] for m in unasked)), inputs, tmp_path)
    problem = _same_as_baseline(others, base)
    if problem:
        failures.append(f"without {unasked}: {problem}")
    for package in asked:
        run = _run(command, MODULES[package], inputs, tmp_path)
        if run["proc"].returncode == 0:
            problem = _same_as_baseline(run, base)
        else:
            problem = _refused_cleanly(run, package, base)
        if problem:
            failures.append(f"privamp {' '.join(run['argv'])} without {package}: {problem}")
    assert not failures, "\n".join(failures)


def test_the_packages_each_command_needs_are_refused_where_expected(inputs, tmp_path):
    """The check above is not vacuous: the plot commands ask for matplotlib, sweep for the dask
    extra, and each refuses without it."""
    run = _run("plot profile", MODULES["matplotlib"], inputs, tmp_path)
    assert "pip install 'privamp[plots]'" in run["proc"].stderr
    run = _run("sweep", MODULES["pyarrow"], inputs, tmp_path)
    assert "'pyarrow'" in run["proc"].stderr and "privamp[dask]" in run["proc"].stderr
    assert run["report"]["entered"] is not None and run["report"]["progress"] == 0


# ---------------------------------------------------------------------------------------------
# the Python API
# ---------------------------------------------------------------------------------------------

_IMPORT_ALL = """
import importlib, json, pkgutil, sys
import privamp
from privamp.errors import MissingDependencyError
result = {}
for info in pkgutil.walk_packages(privamp.__path__, "privamp."):
    if info.name == "privamp.__main__":  # runs the command line
        continue
    try:
        importlib.import_module(info.name)
        result[info.name] = "ok"
    except MissingDependencyError as exc:
        result[info.name] = f"missing {exc.package} {exc.extra} {exc}"
    except BaseException as exc:
        result[info.name] = f"error {type(exc).__name__}: {exc}"
for name in privamp.__all__:
    try:
        getattr(privamp, name)
    except BaseException as exc:
        result["privamp." + name] = f"error {type(exc).__name__}: {exc}"
print(json.dumps(result))
"""


def _module_level_imports(path: Path) -> set[str]:
    """The top-level names ``path`` imports when it is imported (not inside a function)."""
    names = set()
    tree = ast.parse(path.read_text())
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            names |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
        elif isinstance(node, ast.Try | ast.If):
            stack += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            for handler in getattr(node, "handlers", []):
                stack += handler.body
    return names


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: Modules under src that are development scripts, never imported by privamp (they regenerate
#: the tables of privamp._special with mpmath, a test dependency).
DEV_SCRIPTS = "privamp._special._precompute"


def _run_code(code: str, hide, tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    folder = Path(tempfile_dir(tmp_path))
    return _launch({"hide": sorted(hide), "code": code}, folder)


def test_privamp_imports_without_any_extra(tmp_path):
    """Every module imports with no optional package installed, except the integrations that
    need one at import, which raise MissingDependencyError naming the package and extra."""
    proc, _ = _run_code(_IMPORT_ALL, ALL_MODULES, tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    needs = {}
    for path in sorted((SRC / "privamp").rglob("*.py")):
        name = _module_name(path)
        imported = _module_level_imports(path)
        wanted = {m for m, modules in MODULES.items() if modules & imported}
        if wanted and not name.startswith(DEV_SCRIPTS):
            needs[name] = wanted
    assert needs, "no module needs an extra at import: the scan is broken"
    problems = []
    for name, outcome in result.items():
        if name.startswith(DEV_SCRIPTS):
            continue
        if name in needs:
            package, extra = outcome.split()[1:3] if outcome.startswith("missing") else ("", "")
            if package not in needs[name] or extra not in OPTIONAL.get(package, ()):
                problems.append(f"{name}: {outcome} (imports {sorted(needs[name])})")
        elif outcome != "ok":
            problems.append(f"{name}: {outcome}")
    assert set(needs) <= set(result)
    assert not problems, "\n".join(problems)


_ENTRY_POINTS = """
import inspect, json
from privamp.errors import MissingDependencyError
out = {}
def call(name, f, *args, **kwargs):
    try:
        f(*args, **kwargs)
        out[name] = "returned"
    except MissingDependencyError as exc:
        out[name] = f"missing {exc.package} {exc.extra}"
    except BaseException as exc:
        out[name] = f"error {type(exc).__name__}: {exc}"
def nones(f):
    sig = inspect.signature(f)
    args = [None for p in sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    kwargs = {p.name: None for p in sig.parameters.values()
              if p.default is p.empty and p.kind is p.KEYWORD_ONLY}
    return args, kwargs
"""

#: The entry points of each package's feature, called without it (arguments: valid ones, or
#: None where the package must be missing before the arguments are looked at).
_CALLS = {
    "matplotlib": """
import importlib, pkgutil, privamp.plots
# functions that lay out their (computed) arguments before drawing: given valid ones
VALID = {"plot_ou_mse": ([], {"over_t": [], "at_one": ([1.0], [1.0], [1.0], [1.0])}),
         "plot_rdp_panels": ([[]], {"sampling_rate": 0.001})}
for info in [None, *pkgutil.iter_modules(privamp.plots.__path__, "privamp.plots.")]:
    module = privamp.plots if info is None else importlib.import_module(info.name)
    for name, f in vars(module).items():
        if inspect.isfunction(f) and f.__module__ == module.__name__ \\
                and (name.startswith("plot_") or name in ("pyplot", "save_figure")):
            args, kwargs = VALID.get(name) or nones(f)
            call(f"{module.__name__}.{name}", f, *args, **kwargs)
""",
    "pyarrow": """
from privamp.sweep import evaluate, expand
from privamp.sweep import table
rows = evaluate(expand({"mechanism": "gaussian", "sigma": 1.0, "steps": 2, "delta": 1e-5,
                        "accountant": "rdp"}))
for i, row in enumerate(rows):
    row["id"], row["key"] = i, f"k{i}"
call("schema", table.schema)
call("to_table", table.to_table, rows)
call("write_table", table.write_table, None, "t.parquet")
call("write_table csv", table.write_table, None, "t.csv")
open("t.parquet", "wb").close()
call("read_table", table.read_table, "t.parquet")
""",
    "dask": "",
    "distributed": "",
    "torch": """
import privamp.applications as apps
call("privamp.applications.TorchBatchSampler", getattr, apps, "TorchBatchSampler")
call("privamp.integrations.opacus", importlib.import_module, "privamp.integrations.opacus")
""",
    "opacus": """
call("privamp.integrations.opacus", importlib.import_module, "privamp.integrations.opacus")
""",
    "dp_accounting": """
call("privamp.integrations.dp_accounting", importlib.import_module,
     "privamp.integrations.dp_accounting")
""",
}
_SWEEP = """
from privamp.sweep import expand
from privamp.sweep.runner import run_sweep
configs = expand({"mechanism": "gaussian", "sigma": 1.0, "steps": 2, "delta": 1e-5,
                  "accountant": "rdp"})
call("privamp.sweep.runner.run_sweep", run_sweep, configs, "out.parquet", workers=1)
import os
out["left behind"] = sorted(os.listdir("."))
"""


@pytest.mark.parametrize("package", FEATURE_PACKAGES)
def test_entry_points_without_their_package(package, tmp_path):
    code = _ENTRY_POINTS + "import importlib\n" + _CALLS[package]
    if package in ("dask", "distributed", "pyarrow"):
        code += _SWEEP
    code += "print(json.dumps(out))\n"
    proc, _ = _run_code(code, MODULES[package], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    left = out.pop("left behind", [])
    assert not [f for f in left if f.startswith("out.parquet")], left
    assert out
    wrong = {name: outcome for name, outcome in out.items()
             if outcome.split()[:2] != ["missing", package]
             or outcome.split()[2] not in OPTIONAL[package]}
    if package == "pyarrow":  # the schema and table builders need pyarrow too
        assert {"schema", "to_table", "write_table", "read_table"} <= set(out)
    assert not wrong, wrong


def test_static_rule_no_tool_package_is_imported_by_privamp():
    """The extras for tools (test, docs, bench) are never imported by privamp itself, outside
    the development scripts: so no command needs them (checked at run time above too)."""
    tools = set().union(*(MODULES[m] for m in MODULES if m not in FEATURE_PACKAGES))
    tools -= set().union(*(MODULES[m] for m in FEATURE_PACKAGES))
    for path in (SRC / "privamp").rglob("*.py"):
        if _module_name(path).startswith(DEV_SCRIPTS):
            continue
        tree = ast.parse(path.read_text())
        used = {a.name.partition(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for a in node.names}
        used |= {node.module.partition(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module}
        assert not used & tools, (path, used & tools)
