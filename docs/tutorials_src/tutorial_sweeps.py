"""
Sweeps on a laptop and on a Dask cluster
========================================

Choosing a training configuration usually means looking at ε over a grid: several noise levels,
run lengths, samplers, δ. :mod:`privamp.sweep` evaluates such a grid — one row per
configuration, every option of ``privamp epsilon``, ``delta`` and ``calibrate`` can be an axis —
in this process, on a local Dask cluster, or on a remote one.

Terms used below:

* **(ε, δ)-DP**: for neighbouring datasets D, D' and every set of outputs E,
  P[M(D) ∈ E] ≤ e^ε P[M(D') ∈ E] + δ;
* **relation**: what "neighbouring" means — add/remove one record (Poisson sampling), or
  substitute one (sampling without replacement, WOR); the **sensitivity** (how far one record
  moves the statistic) is stated under that relation;
* **bracket**: every row carries the certified interval [``epsilon_lower``, ``epsilon``] around
  the exact ε; ``epsilon`` (the upper end) is the value to report.
"""

# %%
# A grid
# ------
# :func:`~privamp.sweep.expand` takes the axes (a scalar or a list each; ``grids`` adds sub-grids
# joined with them) and returns validated :class:`~privamp.sweep.Configuration` objects: an
# unknown axis or an out-of-range value is refused here, before anything is computed.
import time

from privamp.sweep import evaluate, expand

axes = {"mechanism": "gaussian", "sigma": [0.8, 1.0, 1.5], "steps": [100, 300, 1000],
        "delta": 1e-5}
grids = [{"sampling": "poisson", "rate": 0.01},
         {"sampling": "wor", "n": 10_000, "m": 100}]
configs = expand(axes, grids)
print(f"{len(configs)} configurations; the first: {configs[0]}")

# %%
# In this process: ``evaluate``
# -----------------------------
# ``evaluate`` answers the configurations in one process, ordering them so that rows that share
# work (same mechanism and sampler) reuse one :class:`~privamp.cache.AccountingCache`. Each row
# equals what ``privamp epsilon`` prints for it.
t0 = time.perf_counter()
rows = evaluate(configs)
print(f"{len(rows)} rows in {time.perf_counter() - t0:.1f} s")
print(f"{'sampling':8s} {'relation':11s} {'σ':>4s} {'steps':>6s} {'ε lower':>9s} {'ε upper':>9s}")
for r in rows:
    print(f"{r['sampling']:8s} {r['relation']:11s} {r['sigma']:4g} {r['steps']:6d} "
          f"{r['epsilon_lower']:9.4f} {r['epsilon']:9.4f}")

# %%
# ``relation`` was filled in per sampler: Poisson under add/remove, WOR under substitution (the
# sensitivity 1 is stated under each). A row that cannot be computed (say, no RDP bound exists
# for that scheme) gets its message in the ``error`` column and the sweep goes on.
#
# The result, as a figure:
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7.5, 4))
for k, sigma in enumerate(axes["sigma"]):
    for sampling, style in (("poisson", "-"), ("wor", "--")):
        sel = [r for r in rows if r["sigma"] == sigma and r["sampling"] == sampling]
        ax.plot([r["steps"] for r in sel], [r["epsilon"] for r in sel], linestyle=style,
                marker="o", color=f"C{k}", label=f"σ = {sigma:g}, {sampling}")
ax.set_xscale("log")
ax.set_xlabel("steps T")
ax.set_ylabel("ε at δ = 1e-5 (certified upper end)")
ax.set_title("Gaussian, sensitivity 1: Poisson q = 0.01 (add/remove) vs WOR(10,000, 100) "
             "(substitution)", fontsize=9)
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=8)
ax.grid(alpha=0.3, which="both")
fig.tight_layout()
plt.show()

# %%
# On Dask: ``run_sweep``
# ----------------------
# :func:`~privamp.sweep.run_sweep` (it needs the ``dask`` extra: ``pip install
# 'privamp[dask]'``) cuts the rows into chunks of rows that share work, evaluates each chunk as
# one Dask task, writes each finished chunk to ``OUT.partial/`` and finally the table (Parquet,
# or CSV) to ``OUT``. An interrupted sweep resumes: the same call computes only what is missing.
#
# Without ``scheduler=``, ``run_sweep`` starts a ``LocalCluster`` of worker *processes* (one per
# core) on the loopback interface. Worker processes are started with the ``spawn`` method, which
# re-imports your script in each of them: a script that calls ``run_sweep`` this way must put
# that call under ``if __name__ == "__main__":``.
#
# This page is built by a documentation tool that runs the script inside its own process, so
# here we start a small in-process cluster ourselves — one worker, a thread rather than a
# process, everything bound to 127.0.0.1 — and pass its address as the scheduler. To keep
# the page quick it recomputes the Poisson half of the grid:
import logging
import tempfile
from pathlib import Path

from dask.distributed import LocalCluster

from privamp.sweep import run_sweep
from privamp.sweep.table import read_table

poisson = [c for c in configs if c.sampling == "poisson"]
out = Path(tempfile.mkdtemp(prefix="privamp-sweep-")) / "sweep.csv"
with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                  host="127.0.0.1", dashboard_address=None,
                  silence_logs=logging.ERROR) as cluster:
    summary = run_sweep(poisson, out, scheduler=cluster.scheduler_address)
print(summary)

# %%
# The table has the configuration's columns (empty where a parameter does not apply) and the
# bracket; its values are the same as ``evaluate``'s rows:
table = read_table(out)
print(table.num_rows, "rows; columns:", ", ".join(table.column_names[:12]), "...")
same = all(abs(a - r["epsilon"]) == 0.0
           for a, r in zip(table.column("epsilon").to_pylist(),
                           [r for r in rows if r["sampling"] == "poisson"], strict=True))
print("identical to evaluate():", same)

# %%
# On a real cluster — and how not to expose it
# --------------------------------------------
# Start a scheduler and workers (each worker needs the same privamp version, with the ``dask``
# extra), then point the sweep at the scheduler — in Python ``run_sweep(configs, out,
# scheduler="tcp://10.0.0.5:8786")``, or on the command line::
#
#     privamp sweep grid.toml --out results.parquet --scheduler tcp://10.0.0.5:8786
#
# (``grid.toml`` holds the same axes and ``[[grid]]`` sub-grids as above; see
# ``examples/sweep.toml``.) One thread per worker process is best: accounting is CPU-bound.
#
# **Security.** A Dask scheduler executes whatever any connected client sends it: anyone who can
# reach its port can run code on every worker. By default ``dask scheduler`` and ``dask worker``
# listen on *all* interfaces (their HTTP dashboards and diagnostics pages too), with plain,
# unauthenticated TCP. Never start them on a machine reachable from an untrusted network as is.
#
# * **One machine**: bind to the loopback interface::
#
#       dask scheduler --host 127.0.0.1 --port 8786 --dashboard-address 127.0.0.1:8787
#       dask worker tcp://127.0.0.1:8786 --host 127.0.0.1 --nworkers 4 --nthreads 1 --no-dashboard
#
# * **Several machines on a private network**: bind to the private interface only (by name with
#   ``--interface``, or by address with ``--host``), and keep the ports closed to anything else
#   with a firewall::
#
#       dask scheduler --interface eth1 --port 8786 --dashboard-address 127.0.0.1:8787
#       dask worker tcp://10.0.0.5:8786 --interface eth1 --nthreads 1 --no-dashboard
#
# * **Encrypt and authenticate with TLS**: give every process a certificate signed by your own
#   CA; the scheduler then accepts only peers that present one. Use ``tls://`` addresses::
#
#       dask scheduler --protocol tls --host 10.0.0.5 --port 8786 \
#           --tls-ca-file ca.pem --tls-cert scheduler.pem --tls-key scheduler.key
#       dask worker tls://10.0.0.5:8786 --tls-ca-file ca.pem \
#           --tls-cert worker.pem --tls-key worker.key
#
#   The client side (``privamp sweep`` or ``run_sweep``) reads its certificates from Dask's
#   configuration, ``distributed.comm.tls.ca-file``, ``distributed.comm.tls.client.cert`` and
#   ``distributed.comm.tls.client.key`` (for instance in ``~/.config/dask/distributed.yaml``, or
#   the environment variables ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``,
#   ``DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT`` and ``DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY``),
#   and ``--scheduler tls://10.0.0.5:8786`` then connects over TLS; with
#   ``distributed.comm.require-encryption: true`` Dask refuses any unencrypted connection. In
#   your own Dask code the same settings are a ``distributed.security.Security(tls_ca_file=...,
#   tls_client_cert=..., tls_client_key=..., require_encryption=True)`` object passed as
#   ``Client(address, security=...)``.
#
# The client only sends configurations and receives rows; the table is written where
# ``privamp sweep`` runs.
