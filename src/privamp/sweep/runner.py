"""Run a sweep on a Dask cluster, write its table, resume it after an interruption.

:func:`run_sweep` cuts the configurations into chunks of rows that share work (same mechanism,
scheme and steps next to each other, :mod:`privamp.sweep.batch`), evaluates each chunk as one
Dask task with its own :class:`~privamp.cache.AccountingCache`, and writes each finished chunk
to ``OUT.partial/`` at once. When every chunk is in, the parts are joined into ``OUT`` (Parquet,
or CSV) in the grid's order and ``OUT.partial/`` is removed.

**Where it runs.** By default a ``dask.distributed.LocalCluster`` on this machine: one worker
*process* per core (accounting is CPU-bound Python and NumPy; processes avoid the GIL), one
thread each, listening on the loopback interface only. With ``scheduler="tcp://host:port"`` it
runs on an existing Dask cluster instead (``dask scheduler`` and ``dask worker`` processes
started by you or your cluster manager; the workers need privamp installed). The address is
checked before anything is sent: a refused connection fails at once, an unanswered one after
``connect_timeout`` seconds.

**Resuming.** ``OUT.partial/manifest.json`` records a fingerprint of the configurations (and of
``reuse``). Running the same sweep again with the same ``OUT`` reads the finished parts and
computes only the rows that are missing; a different grid is refused (``overwrite=True``
discards the old parts). A configuration whose evaluation fails is a finished row with its
message in ``error``; only chunks lost with a worker (or to an interruption) are computed again.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import socket
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import __version__
from .._progress import report
from .._validation import check_choice, check_int, check_real
from ..errors import ClusterError, InvalidParameterError, InvalidTypeError, MissingDependencyError
from .batch import REUSE, _sort_key, evaluate_one
from .grid import Configuration, fingerprint
from .table import format_of, read_table, to_table, write_table

__all__ = ["SweepSummary", "run_chunk", "run_sweep"]


@dataclass(frozen=True)
class SweepSummary:
    """What a sweep did: rows in the table, how many were computed now or found finished,
    how many carry an error, the wall time, and where it ran."""

    out: str
    format: str
    rows: int
    computed: int
    resumed: int
    errors: int
    seconds: float
    workers: int
    scheduler: str
    reuse: str

    @property
    def throughput(self) -> float:
        """Configurations computed per second of wall time (this run)."""
        return self.computed / self.seconds if self.seconds > 0 else math.inf

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "throughput": self.throughput}


def run_chunk(items: Sequence[tuple[int, str, Configuration]], reuse: str) -> list[dict]:
    """Evaluate one chunk (on a worker): ``(id, key, configuration)`` triples → result rows."""
    from ..cache import AccountingCache

    cache = AccountingCache()
    out = []
    for ident, key, cfg in items:
        row = evaluate_one(cfg, reuse=reuse, cache=cache)
        out.append({"id": ident, "key": key, **row})
    return out


def _chunks(items: list[tuple[int, str, Configuration]], size: int) -> list[list]:
    """Consecutive rows sharing (group, steps) stay in one chunk (up to 4 × size)."""
    items = sorted(items, key=lambda t: _sort_key(t[2]))
    chunks: list[list] = []
    current: list = []
    unit: list = []

    def flush_unit():
        nonlocal current
        if current and len(current) + len(unit) > size:
            chunks.append(current)
            current = []
        for start in range(0, len(unit), 4 * size):
            part = unit[start:start + 4 * size]
            if len(part) == 4 * size:
                chunks.append(part)
            else:
                current.extend(part)

    last = None
    for item in items:
        mark = (item[2].group, item[2].steps)
        if mark != last and unit:
            flush_unit()
            unit = []
        unit.append(item)
        last = mark
    if unit:
        flush_unit()
    if current:
        chunks.append(current)
    return chunks


def check_scheduler_address(address: str, timeout: float) -> str:
    """Validate ``tcp://host:port`` (or ``tls://``) and check that something listens there."""
    if not isinstance(address, str):
        raise InvalidTypeError("scheduler", "an address such as tcp://host:8786", address)
    parts = urlsplit(address)
    if parts.scheme not in ("tcp", "tls") or not parts.hostname:
        raise InvalidParameterError("scheduler", "a Dask scheduler address such as "
                                    "tcp://host:8786", address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        raise InvalidParameterError("scheduler", "an address with a port, such as "
                                    "tcp://host:8786", address)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except TimeoutError:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: no answer within "
                           f"{timeout:g} s") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {reason}") from None
    return address


#: The top-level packages the ``dask`` extra brings that a sweep imports.
DASK_EXTRA = ("dask", "distributed", "pyarrow")


def _require_dask() -> None:
    """:class:`MissingDependencyError` without the ``dask`` extra (Dask, its distributed
    scheduler, and pyarrow for the tables), naming the package that is missing."""
    import importlib.util

    for name in DASK_EXTRA:
        if importlib.util.find_spec(name) is None:
            raise MissingDependencyError(name, "dask")
    try:
        import dask.distributed  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:  # installed but not importable: a broken install
        raise MissingDependencyError((exc.name or "dask").partition(".")[0], "dask") from exc


def _connect(scheduler: str | None, workers: int | None, timeout: float):
    _require_dask()
    from dask.distributed import Client, LocalCluster

    if scheduler is None:
        n = workers or os.cpu_count() or 1
        # No dashboard, and the scheduler's HTTP server (health and metrics routes, which
        # Dask starts even without one) on a free loopback port: on its default port 8787 a
        # second cluster on the machine meant a "port already in use" warning in the answer.
        # Dask's note that its scratch folder was slow to create is about the machine's load,
        # not about the sweep, and is not passed on either.
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=UserWarning,
                                        message="Creating scratch directories is taking")
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       scheduler_kwargs={"dashboard": False,
                                                         "dashboard_address": "127.0.0.1:0"},
                                       silence_logs=logging.ERROR)
        except (OSError, RuntimeError, TimeoutError) as exc:
            raise ClusterError(f"could not start a local Dask cluster of {n} workers: "
                               f"{exc}") from None
        return Client(cluster, set_as_default=False), cluster, n, "local"
    check_scheduler_address(scheduler, timeout)
    try:
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") \
            from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError):
        client.close()
        raise ClusterError(f"the Dask scheduler at {scheduler} has no workers (waited "
                           f"{timeout:g} s)") from None
    n = len(client.scheduler_info().get("workers", {}))
    return client, None, n, scheduler


def _partial_dir(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _read_parts(partial: Path, keys: set[str]) -> dict[str, dict]:
    import pyarrow.parquet as pq

    done: dict[str, dict] = {}
    for part in sorted(partial.glob("part-*.parquet")):
        for row in pq.read_table(part).to_pylist():
            if row["key"] in keys:
                done.setdefault(row["key"], row)
    return done


def run_sweep(configs: Iterable[Configuration], out: str | os.PathLike, *,
              scheduler: str | None = None, workers: int | None = None,
              fmt: str | None = None, reuse: str = "exact", chunk_size: int | None = None,
              overwrite: bool = False, connect_timeout: float = 10.0,
              progress: Callable[[int, int], None] | None = None) -> SweepSummary:
    """Evaluate ``configs`` on Dask and write one row per configuration to ``out``.

    Parameters
    ----------
    configs : iterable of Configuration
        The rows (:func:`~privamp.sweep.grid.expand`, :func:`~privamp.sweep.grid.read_grid`).
    out : path
        The result table (Parquet, or CSV when it ends in ``.csv`` or ``fmt="csv"``).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``); default a local cluster.
    workers : int, optional
        Worker processes of the local cluster (default: the number of cores).
    reuse : {"exact", "grid"}
        How rows share work (:mod:`privamp.sweep.batch`).
    chunk_size : int, optional
        Rows per task (default: about an eighth of the rows per worker, at most 64).
    overwrite : bool
        Replace an existing ``out`` and discard the parts of a different sweep.
    connect_timeout : float
        Seconds to wait for a remote scheduler and its first worker.
    progress : callable, optional
        ``progress(rows_done, rows_total)`` after each finished chunk.
    """
    start = time.perf_counter()
    configs = list(configs)
    for cfg in configs:
        if not isinstance(cfg, Configuration):
            raise InvalidTypeError("configs", "Configuration objects", cfg)
    if not configs:
        raise InvalidParameterError("configs", "at least one configuration", [])
    reuse = check_choice("reuse", reuse, REUSE)
    fmt = format_of(out, fmt)
    if workers is not None:
        workers = check_int("workers", workers, "[1, 1024]")
        if scheduler is not None:
            raise InvalidParameterError("workers", "left out with a scheduler address (the "
                                        "cluster decides its workers)", workers)
    if chunk_size is not None:
        chunk_size = check_int("chunk_size", chunk_size, "[1, inf)")
    connect_timeout = check_real("connect_timeout", connect_timeout, "(0, 3600]")
    if scheduler is not None:
        check_scheduler_address(scheduler, connect_timeout)
    out = Path(out)
    keys = [cfg.key for cfg in configs]
    key_set = set(keys)
    fp = fingerprint(configs, reuse, __version__)
    partial = _partial_dir(out)
    _require_dask()  # before anything is read or written: no OUT.partial/ without the extra
    if out.exists() and not overwrite:
        try:
            existing = read_table(out, fmt)
        except InvalidParameterError as exc:  # the file at --out is not this sweep's table
            raise InvalidParameterError("out", "a new file, or the table of this same sweep "
                                        "(use --overwrite to replace it)", str(out),
                                        detail=exc.detail) from None
        same = (sorted(existing.column("key").to_pylist()) == sorted(keys)
                and set(existing.column("reuse").to_pylist()) == {reuse})
        if not same:
            raise InvalidParameterError("out", "a new file, or the table of this same sweep "
                                        "(use --overwrite to replace it)", str(out))
        errors = sum(e is not None for e in existing.column("error").to_pylist())
        return SweepSummary(str(out), fmt, len(keys), 0, len(keys), errors,
                            time.perf_counter() - start, 0, "none", reuse)
    manifest = {"fingerprint": fp, "rows": len(configs), "reuse": reuse,
                "privamp": __version__}
    if partial.exists():
        try:
            old = json.loads((partial / "manifest.json").read_text())
        except (OSError, ValueError):
            old = {}
        if old.get("fingerprint") != fp:
            if not overwrite:
                raise InvalidParameterError(
                    "out", "the output of this same sweep to resume it (use --overwrite to "
                    "start again)", str(out),
                    detail=f"{partial} holds the parts of a different sweep")
            shutil.rmtree(partial)
    partial.mkdir(parents=True, exist_ok=True)
    (partial / "manifest.json").write_text(json.dumps(manifest))
    done = _read_parts(partial, key_set)
    resumed = len(done)
    todo = [(i, key, cfg) for i, (key, cfg) in enumerate(zip(keys, configs, strict=True))
            if key not in done]
    n_workers, where = 0, "none"
    lost: list[str] = []
    if progress is not None:
        progress(resumed, len(configs))
    if todo:
        client, cluster, n_workers, where = _connect(scheduler, workers, connect_timeout)
        try:
            size = chunk_size or max(1, min(64, math.ceil(len(todo) / (8 * n_workers))))
            def tick() -> None:
                report("sweep: %s of %s rows", len(done), len(configs))
                if progress is not None:
                    progress(len(done), len(configs))

            _run_chunks(client, _chunks(todo, size), reuse, partial, done, n_workers, tick,
                        lost)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    missing = len(configs) - len(done)
    if missing:
        why = f" ({lost[0]})" if lost else ""
        raise ClusterError(f"{missing} configurations were not computed{why}; the "
                           f"{len(done)} finished are kept in {partial}: run again to resume")
    rows = [done[key] for key in keys]
    for i, row in enumerate(rows):
        row["id"] = i
    write_table(to_table(rows), out, fmt)
    shutil.rmtree(partial, ignore_errors=True)
    errors = sum(r["error"] is not None for r in rows)
    return SweepSummary(str(out), fmt, len(rows), len(rows) - resumed, resumed, errors,
                        time.perf_counter() - start, n_workers, where, reuse)


def _run_chunks(client, chunks: list[list], reuse: str, partial: Path, done: dict,
                n_workers: int, tick: Callable[[], Any], lost: list[str]) -> None:
    """Submit the chunks a few per worker at a time; write each result as it arrives."""
    from dask.distributed import as_completed

    token = f"{int(time.time() * 1000):x}-{os.getpid():x}"
    pending = iter(enumerate(chunks))
    window = max(2, 4 * n_workers)
    futures = {}

    def submit(ac=None):
        try:
            index, chunk = next(pending)
        except StopIteration:
            return
        fut = client.submit(run_chunk, chunk, reuse, pure=False)
        futures[fut] = index
        if ac is not None:
            ac.add(fut)

    for _ in range(window):
        submit()
    ac = as_completed(list(futures), loop=client.loop)
    for fut in ac:
        index = futures.pop(fut)
        try:
            rows = fut.result()
        except Exception as exc:  # a lost chunk stays missing (resumable)
            lost.append(f"{type(exc).__name__}: {exc}")
            rows = None
        if rows is not None:
            write_table(to_table(rows), partial / f"part-{token}-{index:06d}.parquet",
                        "parquet")
            for row in rows:
                done.setdefault(row["key"], row)
            tick()
        submit(ac)
