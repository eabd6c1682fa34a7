"""Sweeps on Dask: a real LocalCluster (2 worker processes, loopback only), row-by-row equality
with the single-process accountant, resuming a killed sweep, bad schedulers and outputs.

Needs the ``dask`` extra, which ``make test`` installs: no skipping when it is missing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privamp import GaussianMechanism, LaplaceMechanism
from privamp.accountant import Accountant
from privamp.cli import main
from privamp.errors import ClusterError, InvalidParameterError
from privamp.sampling import Poisson, WithoutReplacement
from privamp.sweep import evaluate, expand, read_grid
from privamp.sweep.runner import run_sweep
from privamp.sweep.table import read_table

#: 216 configurations: 108 PLD and 108 RDP (Poisson, WOR; Gaussian and Laplace)
CLUSTER_GRID = expand({"steps": [5, 40, 300], "delta": [1e-5, 1e-6, 1e-7]}, [
    {"mechanism": "gaussian", "sigma": [0.8, 1.2, 2.0], "sampling": "poisson",
     "rate": [0.005, 0.02], "accountant": ["pld", "rdp"]},
    {"mechanism": "gaussian", "sigma": [1.0, 1.6], "sampling": "wor", "n": 20000,
     "m": [100, 400], "accountant": ["pld", "rdp"]},
    {"mechanism": "laplace", "scale": [2.0, 4.0], "sampling": "poisson", "rate": 0.01,
     "accountant": ["pld", "rdp"]},
])


def per_row(cfg):
    """The single-process accountant for one configuration, built by hand."""
    if cfg.sampling == "poisson":
        scheme, rel = Poisson(cfg.rate), "add-remove"
    else:
        scheme, rel = WithoutReplacement(cfg.n, cfg.m), "substitute"
    mech = (GaussianMechanism(cfg.sigma, relation=rel) if cfg.mechanism == "gaussian"
            else LaplaceMechanism(cfg.scale, relation=rel))
    return Accountant(cfg.backend).add(mech, cfg.steps, scheme=scheme).epsilon(cfg.delta)


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40,
                      scheduler_kwargs={"dashboard": False,
                                        "dashboard_address": "127.0.0.1:0"}) as c:
        yield c


@pytest.mark.slow
def test_local_cluster_sweep_equals_the_single_process_accountant(cluster, tmp_path):
    assert len(CLUSTER_GRID) == 216
    assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
    out = tmp_path / "results.parquet"
    summary = run_sweep(CLUSTER_GRID, out, scheduler=cluster.scheduler_address,
                        chunk_size=16)
    assert summary.rows == summary.computed == 216 and summary.errors == 0
    assert summary.workers == 2 and summary.resumed == 0
    rows = read_table(out).to_pylist()
    assert [r["id"] for r in rows] == list(range(216))
    assert [r["key"] for r in rows] == [c.key for c in CLUSTER_GRID]
    for cfg, row in zip(CLUSTER_GRID, rows, strict=True):
        ref = per_row(cfg)
        assert row["epsilon"] == ref.upper and row["epsilon_lower"] == ref.lower, cfg
        assert row["sigma"] == cfg.sigma and row["steps"] == cfg.steps
        assert row["backend"] == cfg.backend and row["error"] is None
    assert not Path(str(out) + ".partial").exists()
    # the finished table is recognised: nothing to compute again
    again = run_sweep(CLUSTER_GRID, out, scheduler=cluster.scheduler_address)
    assert again.computed == 0 and again.resumed == 216


@pytest.mark.slow
def test_shared_grid_sweep_is_independent_of_the_split(cluster, tmp_path):
    cfgs = [c for c in CLUSTER_GRID if c.backend == "pld" and c.steps < 300][:24]
    out = tmp_path / "grid.csv"
    run_sweep(cfgs, out, scheduler=cluster.scheduler_address, reuse="grid", chunk_size=5)
    rows = read_table(out).to_pylist()
    local = evaluate(cfgs, reuse="grid")
    for a, b in zip(rows, local, strict=True):
        assert (a["epsilon"], a["epsilon_lower"]) == (b["epsilon"], b["epsilon_lower"])
        assert a["reuse"] == "grid"


def write_grid(path: Path) -> Path:
    path.write_text('mechanism = "gaussian"\nsigma = [0.7, 1.0]\n'
                    'sampling = "poisson"\nrate = [0.005, 0.01, 0.02]\n'
                    'steps = [20, 200, 2000]\ndelta = [1e-5, 1e-6, 1e-8]\n')
    return path


def sweep_cmd(grid: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "privamp", "sweep", str(grid), "--out", str(out),
            "--workers", "1", "--chunk-size", "3", "--json", *extra]


@pytest.mark.slow
def test_killed_sweep_resumes_without_recomputing(tmp_path):
    grid = write_grid(tmp_path / "grid.toml")
    total = len(read_grid(grid))
    assert total == 54
    out = tmp_path / "results.parquet"
    partial = Path(str(out) + ".partial")
    proc = subprocess.Popen(sweep_cmd(grid, out), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(partial.glob("part-*.parquet"))) >= 4:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        os.killpg(proc.pid, signal.SIGKILL)  # the command and its Dask processes
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert not out.exists()
    import pyarrow.parquet as pq

    before = {}
    for part in partial.glob("part-*.parquet"):
        for row in pq.read_table(part).to_pylist():
            before[row["key"]] = row
    assert 12 <= len(before) < total
    done = subprocess.run(sweep_cmd(grid, out), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["resumed"] == len(before)
    assert summary["computed"] == total - len(before)
    rows = read_table(out).to_pylist()
    assert len(rows) == total and len({r["key"] for r in rows}) == total
    for row in rows:
        if row["key"] in before:  # not recomputed: the very row written before the kill
            assert row["seconds"] == before[row["key"]]["seconds"]
            assert row["epsilon"] == before[row["key"]]["epsilon"]
    assert not partial.exists()
    # the resumed table is the table of an uninterrupted sweep
    cfgs = read_grid(grid)
    ref = evaluate(cfgs[:: 9])
    for row, r in zip(rows[:: 9], ref, strict=True):
        assert (row["epsilon"], row["epsilon_lower"]) == (r["epsilon"], r["epsilon_lower"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_fails_fast(tmp_path):
    cfgs = CLUSTER_GRID[:2]
    start = time.monotonic()
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler"):
        run_sweep(cfgs, tmp_path / "x.parquet", scheduler=f"tcp://127.0.0.1:{free_port()}")
    assert time.monotonic() - start < 5  # a refused connection is not waited for
    for bad in ("127.0.0.1:8786", "http://127.0.0.1:8786", "tcp://127.0.0.1"):
        with pytest.raises(InvalidParameterError, match="scheduler"):
            run_sweep(cfgs, tmp_path / "x.parquet", scheduler=bad)
    assert not (tmp_path / "x.parquet.partial").exists()


def run_cli(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_errors_are_one_line(tmp_path, capsys):
    grid = write_grid(tmp_path / "grid.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('mechanism = "gaussian"\nsigma = 1\nsteps = 1\ndelta = 1e-5\nrates = 1\n')
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    port = free_port()
    cases = [
        (["sweep", str(bad), "--out", "x.parquet"], "unknown axis; did you mean 'rate'?"),
        (["sweep", str(empty), "--out", "x.parquet"], "naming at least one axis"),
        (["sweep", str(tmp_path / "nope.toml"), "--out", "x.parquet"], "readable TOML"),
        (["sweep", str(grid), "--out", str(tmp_path / "x.parquet"), "--scheduler",
          f"tcp://127.0.0.1:{port}"], "cannot reach the Dask scheduler"),
        (["sweep", str(grid), "--out", str(tmp_path / "x.parquet"), "--scheduler", "nowhere"],
         "--scheduler must be a Dask scheduler address"),
        (["sweep", str(grid), "--out", str(tmp_path / "x.parquet"), "--workers", "0"],
         "--workers must be an integer in [1, 1024]"),
    ]
    for argv, message in cases:
        status, out, err = run_cli(argv, capsys)
        lines = [x for x in err.splitlines() if x.strip()]
        assert status == 2 and out == "" and len(lines) == 1, (argv, err)
        assert message in lines[0] and "Traceback" not in err


@pytest.mark.slow
def test_cli_local_cluster_csv_refuses_another_grid_and_plots(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text('mechanism = "gaussian"\nsigma = [1.0, 2.0]\nsteps = [10, 100, 1000]\n'
                    'delta = 1e-5\naccountant = "rdp"\n[[grid]]\nsampling = "poisson"\n'
                    'rate = 0.01\n[[grid]]\nsampling = "wor"\nn = 10000\nm = 100\n')
    out = tmp_path / "results.csv"
    status, text, err = run_cli(["sweep", str(grid), "--out", str(out), "--workers", "2",
                                 "--json"], capsys)
    assert status == 0, err
    summary = json.loads(text)
    assert summary["rows"] == summary["computed"] == 12 and summary["workers"] == 2
    assert summary["scheduler"] == "local" and summary["throughput"] > 0
    rows = read_table(out).to_pylist()
    assert {r["sampling"] for r in rows} == {"poisson", "wor"}
    assert out.read_text().splitlines()[0].startswith('"id","key","query"')
    # another grid with the same output is refused unless --overwrite
    other = tmp_path / "other.toml"
    other.write_text(grid.read_text().replace("[1.0, 2.0]", "[3.0]"))
    status, _, err = run_cli(["sweep", str(other), "--out", str(out)], capsys)
    assert status == 2 and "--overwrite" in err
    # plots: the usual view, and the errors
    png = tmp_path / "eps.png"
    status, text, err = run_cli(["plot", "sweep", str(out), "--x", "steps", "--y", "epsilon",
                                 "--hue", "sampling", "--where", "sigma=1", "--out", str(png),
                                 "--json"], capsys)
    assert status == 0, err
    assert json.loads(text) == {"out": str(png), "rows": 6, "failed_rows": 0, "lines": 2}
    assert png.stat().st_size > 1000
    status, _, err = run_cli(["plot", "sweep", str(out), "--x", "steps", "--y", "epsilon",
                              "--hue", "sampling", "--out", str(png)], capsys)
    assert status == 2 and "sigma vary" in err
    status, _, err = run_cli(["plot", "sweep", str(out), "--x", "step", "--y", "epsilon",
                              "--out", str(png)], capsys)
    assert status == 2 and "no column 'step'" in err


@pytest.mark.slow
def test_a_busy_dask_port_leaves_the_answer_without_warnings(tmp_path, capsys):
    """Dask's default HTTP port taken (another cluster on the machine, as under a parallel
    test run): the local cluster picks a free port and the JSON answer carries no warning."""
    grid = tmp_path / "grid.toml"
    grid.write_text('mechanism = "gaussian"\nsigma = 1.0\nsampling = "poisson"\nrate = 0.01\n'
                    'steps = 10\ndelta = 1e-5\naccountant = "rdp"\n')
    busy = socket.socket()
    try:
        try:
            busy.bind(("127.0.0.1", 8787))
            busy.listen()
        except OSError:
            pass  # already taken by someone else: the case this test is about
        status, text, err = run_cli(["sweep", str(grid), "--out", str(tmp_path / "s.parquet"),
                                     "--workers", "1", "--json"], capsys)
    finally:
        busy.close()
    assert status == 0, err
    summary = json.loads(text)
    assert "warnings" not in summary and summary["computed"] == 1
