"""Evaluate a table of configurations, reusing the work they share.

:func:`evaluate` answers every :class:`~privamp.sweep.grid.Configuration` — ε(δ), δ(ε) or a
calibrated parameter — with the same library calls as ``privamp epsilon``, ``privamp delta`` and
``privamp calibrate``, through one :class:`~privamp.cache.AccountingCache`, in an order that puts
rows sharing work next to each other. Two ways of reusing work (``reuse=``):

* ``"exact"`` (default): every row is computed by :class:`~privamp.accountant.Accountant`
  exactly as a single query would be; the cache only remembers pure intermediate results
  (pair curves, step ranges and moments — shared by every δ ≥ 1e-6 of a (mechanism, scheme,
  steps) —, discretised and composed PLDs when their grids coincide, RDP curves at each set of
  orders — shared by every steps and δ of a (mechanism, scheme)). The numbers are **identical**
  to the per-row accountant's.
* ``"grid"``: ε queries of the ``pld`` backend use ``Accountant(shared_grid=True)``: the
  choices that only set the accuracy are rounded to the safe side (finer grids, smaller tail
  budgets; :func:`~privamp.pld.engine.pld_epsilon`) so that the δ's of a (mechanism, scheme,
  steps) share one set of composed PLDs and step PLDs are shared across step counts. Each
  bracket is certified and at least as accurate as the default's, but its digits differ
  slightly from it (both enclose the exact ε); each row still depends only on itself, so the
  result does not depend on how the table is split between workers. Other rows are computed as
  in ``"exact"``.

A configuration that fails (an unsupported combination, a target no value reaches, ...) gets
its message in the ``error`` column; the others are unaffected.

>>> from privamp.sweep import expand
>>> rows = evaluate(expand({"mechanism": "gaussian", "sigma": 1.0, "sampling": "poisson",
...                         "rate": 0.01, "steps": 1000, "delta": [1e-5, 1e-6]}))
>>> [round(r["epsilon"], 4) for r in rows], rows[0]["error"]
([1.8282, 2.1245], None)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

from .._progress import report
from .._validation import check_choice
from ..cache import AccountingCache
from ..errors import InvalidTypeError, UnsupportedCombinationError
from .grid import Configuration

__all__ = ["OUTPUT_COLUMNS", "REUSE", "evaluate", "evaluate_one", "result_columns"]

#: ways of reusing work between rows
REUSE = ("exact", "grid")

#: columns a result adds to the configuration's (epsilon and delta are inputs of some queries)
OUTPUT_COLUMNS = ("epsilon_lower", "delta_lower", "reuse", "seconds", "error")


def result_columns() -> list[str]:
    """The columns of a sweep result, in order: ``id``, ``key``, the configuration's fields
    (with ``epsilon_lower`` after ``epsilon`` and ``delta_lower`` after ``delta``), then
    ``reuse``, ``seconds``, ``error``."""
    cols = ["id", "key"]
    for f in fields(Configuration):
        cols.append(f.name)
        if f.name in ("delta", "epsilon"):
            cols.append(f"{f.name}_lower")
    return cols + ["reuse", "seconds", "error"]


def _scheme(cfg: Configuration):
    """The configuration's scheme, from the scheme registry (``None`` for no sampling)."""
    from ..sampling import SCHEMES

    if cfg.sampling == "none":
        return None
    cls = SCHEMES[cfg.sampling]
    extra = {"order": cfg.order} if cfg.order is not None else {}
    return cls.from_params(**{p.name: getattr(cfg, p.name) for p in cls.params}, **extra)


def _mechanism(cfg: Configuration, relation):
    """The configuration's mechanism under ``relation``, from the mechanism registry."""
    from ..mechanisms import REGISTRY

    cls = REGISTRY[cfg.mechanism]
    return cls.from_params(relation, **{p.name: getattr(cfg, p.name) for p in cls.params})


def _event(cfg: Configuration):
    """(mechanism under the relation the scheme needs, scheme, outer relation) — as the
    ``privamp epsilon`` command builds them."""
    from ..relations import NeighbouringRelation

    scheme = _scheme(cfg)
    if scheme is None:
        outer = NeighbouringRelation.parse(cfg.relation)
        return _mechanism(cfg, outer), None, outer
    outer, base = scheme.resolve(cfg.relation)
    return _mechanism(cfg, base), scheme, outer


def _accountant(cfg: Configuration, cache: AccountingCache | None, shared_grid: bool):
    from ..accountant import Accountant

    mech, scheme, outer = _event(cfg)
    acc = Accountant(cfg.backend, eps_error=cfg.eps_error, delta_error=cfg.delta_error,
                     grid_step=cfg.grid_step, cache=cache, shared_grid=shared_grid)
    return acc.add(mech, cfg.steps, scheme=scheme,
                   relation=outer if scheme is not None else None,
                   group_privacy=cfg.group_privacy)


def _calibrate(cfg: Configuration) -> dict[str, Any]:
    from .. import calibrate as cal
    from ..mechanisms import noise_mechanisms
    from ..relations import NeighbouringRelation
    from ..sampling import Poisson

    param = cfg.calibrate
    target, delta, backend = cfg.target_epsilon, cfg.delta, cfg.backend
    if param in noise_mechanisms():
        wanted = noise_mechanisms()[param]
        if cfg.mechanism != wanted:
            raise UnsupportedCombinationError(f"calibrate = {param!r} needs mechanism "
                                              f"{wanted!r}, not {cfg.mechanism!r}")
        res = cal.calibrate_sigma(target, delta, steps=cfg.steps, scheme=_scheme(cfg),
                                  sensitivity=cfg.sensitivity, relation=cfg.relation,
                                  mechanism=cfg.mechanism, backend=backend)
    elif param == "rate":
        if cfg.sampling != "poisson":
            raise UnsupportedCombinationError("calibrate = 'rate' needs sampling 'poisson', not "
                                              f"{cfg.sampling!r}")
        if cfg.relation != "add-remove":
            raise UnsupportedCombinationError("calibrate = 'rate' is for Poisson sampling under "
                                              "'add-remove'")
        mech = _mechanism(cfg, Poisson(0.5).resolve()[1])
        res = cal.calibrate_rate(target, delta, steps=cfg.steps, mechanism=mech,
                                 backend=backend)
    elif param == "steps":
        mech, scheme, outer = _event(cfg)
        res = cal.calibrate_steps(target, delta, mechanism=mech, scheme=scheme,
                                  relation=outer if scheme is not None else None,
                                  max_steps=cfg.max_steps, backend=backend)
    else:
        if not cfg.sampling.startswith("must"):
            raise UnsupportedCombinationError(f"calibrate = {param!r} needs a MUST sampling "
                                              f"scheme, not {cfg.sampling!r}")
        mech = _mechanism(cfg, NeighbouringRelation.SUBSTITUTE)
        other = "m" if param == "b" else "b"
        res = cal.calibrate_must(target, delta, steps=cfg.steps, mechanism=mech, n=cfg.n,
                                 kind=cfg.sampling[-2:], **{other: getattr(cfg, other)},
                                 backend=backend)
    value = int(res.value) if param in ("steps", "b", "m") else float(res.value)
    return {param: value, "epsilon": res.epsilon, "epsilon_lower": res.epsilon_lower}


def evaluate_one(cfg: Configuration, *, reuse: str = "exact",
                 cache: AccountingCache | None = None) -> dict[str, Any]:
    """The result row of one configuration: its fields, the answer, ``reuse``, ``seconds``
    and ``error`` (``None``, or the message of the exception that stopped it)."""
    start = time.perf_counter()
    row: dict[str, Any] = {**asdict(cfg), "epsilon_lower": None, "delta_lower": None,
                           "reuse": reuse, "error": None}
    try:
        if cfg.query == "calibrate":
            row.update(_calibrate(cfg))
        else:
            shared = reuse == "grid" and cfg.query == "epsilon" and cfg.backend == "pld"
            acc = _accountant(cfg, cache, shared)
            if cfg.query == "epsilon":
                bracket = acc.epsilon(cfg.delta)
                row["epsilon"], row["epsilon_lower"] = bracket.upper, bracket.lower
            else:
                bracket = acc.delta(cfg.epsilon)
                row["delta"], row["delta_lower"] = bracket.upper, bracket.lower
    except Exception as exc:  # one failing configuration is recorded, not fatal
        row["error"] = f"{type(exc).__name__}: {exc}"
    row["seconds"] = time.perf_counter() - start
    return row


def evaluate(configs: Iterable[Configuration] | Sequence[Mapping[str, Any]], *,
             reuse: str = "exact", cache: AccountingCache | None = None,
             progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Result rows (:func:`evaluate_one`) of ``configs``, in their order.

    ``configs``: :class:`Configuration` objects, or mappings of axis names to single values
    (validated by :meth:`Configuration.make`). ``reuse``: ``"exact"`` or ``"grid"`` (module
    doc). ``cache``: an :class:`AccountingCache` to share (a fresh one by default).
    ``progress(k)`` is called after each row with the number of rows done.
    """
    reuse = check_choice("reuse", reuse, REUSE)
    rows = []
    for item in configs:
        if isinstance(item, Configuration):
            rows.append(item)
        elif isinstance(item, Mapping):
            rows.append(Configuration.make(**item))
        else:
            raise InvalidTypeError("configs", "Configuration objects or mappings", item)
    cache = AccountingCache() if cache is None else cache
    order = sorted(range(len(rows)), key=lambda i: _sort_key(rows[i]))
    out: list[dict[str, Any] | None] = [None] * len(rows)
    for done, i in enumerate(order, 1):
        out[i] = evaluate_one(rows[i], reuse=reuse, cache=cache)
        report("sweep: %s of %s rows", done, len(rows))
        if progress is not None:
            progress(done)
    return out  # type: ignore[return-value]


def _sort_key(cfg: Configuration) -> tuple:
    """Rows that share work next to each other: by group, then steps, then the query's number
    (None sorts first)."""
    def k(v):
        return (v is not None, v if v is not None else 0)

    return (tuple(map(lambda v: (v is not None, str(v)), cfg.group)), k(cfg.steps),
            k(cfg.delta), k(cfg.epsilon), k(cfg.target_epsilon))
