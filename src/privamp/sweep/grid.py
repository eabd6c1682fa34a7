"""Configurations of a sweep and the grids that name them (axes, ranges, TOML files).

A :class:`Configuration` is one row of a sweep: everything ``privamp epsilon``, ``privamp
delta`` or ``privamp calibrate`` takes on the command line (mechanism, noise, sensitivity,
sampling scheme and its sizes, relation, group privacy, steps, δ or ε or the target ε, the
accountant backend and its accuracy options), validated, with the parameters that do not apply
to it removed (a Poisson row has no ``m``; an ``rdp`` row no ``grid_step``) so that equal
configurations compare equal.

A grid names **axes**: each parameter is a value, a list of values, or a range (an inline table
``{start, stop, num}`` — ``scale = "log"`` for geometric spacing — or ``{start, stop, step}``,
stop included when it is reached; integer parameters are rounded to the nearest integer and
repeated values dropped). The configurations are the Cartesian product of the axes, optionally
joined over **sub-grids** (each combined with the shared axes), with duplicates removed in order.
In a TOML file the shared axes are top-level keys and the sub-grids ``[[grid]]`` tables::

    # grid.toml: Poisson vs WOR, σ × steps × δ
    mechanism = "gaussian"
    sigma = [0.8, 1.0, 1.2]
    steps = {start = 100, stop = 10000, num = 5, scale = "log"}
    delta = [1e-5, 1e-6]

    [[grid]]
    sampling = "poisson"
    rate = 0.01

    [[grid]]
    sampling = "wor"
    n = 60000
    m = 600

Axis names are the command-line option names (``rr-epsilon`` or ``rr_epsilon``; ``accountant``
or ``backend``). Unknown axes, empty lists, values out of range and missing parameters raise
:class:`~privamp.errors.InvalidParameterError` naming the axis before anything is computed.

>>> rows = expand({"mechanism": "gaussian", "sigma": [1.0, 2.0], "sampling": "poisson",
...                "rate": 0.01, "steps": {"start": 10, "stop": 1000, "num": 3, "scale": "log"},
...                "delta": 1e-5})
>>> len(rows), rows[0].steps, rows[-1].sigma, rows[0].relation
(6, 10, 2.0, 'add-remove')
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_choice, check_int, check_real, read_text_file
from ..accountant import Backend
from ..errors import InvalidParameterError, InvalidTypeError
from ..mechanisms import REGISTRY, noise_mechanisms
from ..relations import NeighbouringRelation
from ..sampling.schemes import SCHEMES, flat_schemes

__all__ = ["AXES", "Configuration", "expand", "fingerprint", "read_grid"]

QUERIES = ("epsilon", "delta", "calibrate")
BACKENDS = tuple(b.value for b in Backend)
#: the mechanisms and schemes built from flat parameters (their registries)
MECHANISMS = REGISTRY.parametrised()
SAMPLINGS = ("none", *flat_schemes())
RELATIONS = tuple(r.value for r in NeighbouringRelation)
GROUP_PRIVACY = ("white-box", "black-box")
CALIBRATED = (*noise_mechanisms(), "rate", "steps", "b", "m")


def default_relation(sampling: str) -> str:
    """The relation a scheme is analysed under by default (add/remove without sampling)."""
    if sampling == "none":
        return NeighbouringRelation.ADD_REMOVE.value
    return SCHEMES[sampling].default_relation().value


def _declared(classes) -> dict[str, tuple[str, str]]:
    """The axes of the parameters the classes declare (their ``params``)."""
    return {p.name: p.axis for cls in classes for p in cls.params}


#: The axes of a sweep grid, each mapped to a pair (kind, rule) where the kind is "real", "int"
#: or "choice" and the rule an interval or the choices. The mechanism and scheme axes are the
#: parameters their classes declare.
AXES: dict[str, tuple[str, Any]] = {
    "query": ("choice", QUERIES),
    "backend": ("choice", BACKENDS),
    "mechanism": ("choice", MECHANISMS),
    **_declared(REGISTRY[name] for name in MECHANISMS),
    "sampling": ("choice", SAMPLINGS),
    **_declared(SCHEMES[kind] for kind in SAMPLINGS[1:]),
    "order": ("choice", ("reshuffle", "persistent")),
    "relation": ("choice", RELATIONS),
    "group_privacy": ("choice", GROUP_PRIVACY),
    "steps": ("int", "[1, inf)"),
    "delta": ("real", "(0, 1)"),
    "epsilon": ("real", "[0, inf)"),
    "target_epsilon": ("real", "(0, inf)"),
    "calibrate": ("choice", CALIBRATED),
    "max_steps": ("int", "[1, inf)"),
    "eps_error": ("real", "(0, inf)"),
    "delta_error": ("real", "(0, 1)"),
    "grid_step": ("real", "(0, 1]"),
}

#: other spellings accepted in grid files
ALIASES = {"accountant": "backend"}

#: largest number of configurations a grid may name (before duplicates are removed)
MAX_CONFIGURATIONS = 10_000_000


@dataclass(frozen=True)
class Configuration:
    """One configuration of a sweep (see the module doc); build it with :func:`expand` or
    :meth:`make` (which validate and normalise), not directly."""

    query: str = "epsilon"
    backend: str = "pld"
    mechanism: str | None = None
    sigma: float | None = None
    scale: float | None = None
    rr_epsilon: float | None = None
    rr_p: float | None = None
    sensitivity: float | None = 1.0
    sampling: str = "none"
    rate: float | None = None
    n: int | None = None
    b: int | None = None
    m: int | None = None
    t: int | None = None
    k: int | None = None
    max_batch: int | None = None
    order: str | None = None
    relation: str | None = None
    group_privacy: str | None = None
    steps: int | None = None
    delta: float | None = None
    epsilon: float | None = None
    target_epsilon: float | None = None
    calibrate: str | None = None
    max_steps: int | None = None
    eps_error: float | None = None
    delta_error: float | None = None
    grid_step: float | None = None

    @classmethod
    def make(cls, **values: Any) -> Configuration:
        """Validate every value (by its axis rule) and normalise the configuration."""
        clean = {}
        for name, value in values.items():
            axis = _axis_name(name, name)
            clean[axis] = None if value is None else _check_value(axis, value, axis)
        return cls(**clean).normalised()

    def normalised(self) -> Configuration:
        """The same configuration with defaults filled in and inapplicable parameters removed;
        raises :class:`InvalidParameterError` for a missing parameter."""
        v = asdict(self)
        query, mech, sampling = v["query"], v["mechanism"], v["sampling"]
        if mech is None:
            _missing("mechanism", "every configuration")
        calibrated = v["calibrate"] if query == "calibrate" else None
        if query == "calibrate" and calibrated is None:
            calibrated = REGISTRY[mech].noise
            if calibrated is None:
                _missing("calibrate", f"calibrating with mechanism {mech!r}")
        mech_cls = REGISTRY[mech]
        keep = {"query", "backend", "mechanism", "sampling", "relation"}
        keep |= {p.name for p in mech_cls.params}
        if sampling != "none":
            keep.add("group_privacy")
        relation = v["relation"] or default_relation(sampling)
        v["relation"] = relation
        if sampling == "poisson":
            if v["rate"] is None and v["n"] is not None and v["m"] is not None \
                    and calibrated != "rate":
                v["rate"] = v["m"] / v["n"]  # the same expected subsample size as WOR/WR
        needs = () if sampling == "none" else SCHEMES[sampling].reads(relation)
        keep |= set(needs)
        if sampling != "none":   # declared defaults (random allocation's k = 1)
            for p in SCHEMES[sampling].params:
                if v[p.name] is None and p.default is not None:
                    v[p.name] = p.default
        if sampling == "shuffle":
            keep.add("order")
            v["order"] = v["order"] or "reshuffle"
        if query == "epsilon":
            keep |= {"steps", "delta", "eps_error"}
        elif query == "delta":
            keep |= {"steps", "epsilon", "delta_error"}
        else:
            keep |= {"steps", "delta", "target_epsilon", "calibrate"}
            v["calibrate"] = calibrated
            if calibrated == "steps":
                keep.add("max_steps")
                v["max_steps"] = v["max_steps"] or 10**9
        if v["backend"] == "pld":
            keep.add("grid_step")
        else:
            keep -= {"eps_error", "delta_error"}
        if calibrated is not None:
            keep.discard(calibrated)  # the result goes there
            if calibrated == "rate":
                keep.discard("n")
        out = {k: (val if k in keep else None) for k, val in v.items()}
        if calibrated is not None:
            out["calibrate"] = calibrated
        # what must be there
        for p in mech_cls.required():
            if p.name != calibrated:
                _need(out, p.name, f"mechanism {mech!r}")
        if mech_cls.one_of and sum(out[n] is not None for n in mech_cls.one_of) != 1:
            first, *others = mech_cls.one_of
            raise InvalidParameterError(
                first, f"given, or {' or '.join(others)}, but not both (mechanism {mech!r})",
                tuple(out[n] for n in mech_cls.one_of))
        for name in needs:
            if name != calibrated:
                _need(out, name, f"sampling {sampling!r}")
        if calibrated != "steps":
            _need(out, "steps", f"query {query!r}")
        _need(out, {"epsilon": "delta", "delta": "epsilon", "calibrate": "delta"}[query],
              f"query {query!r}")
        if query == "calibrate":
            _need(out, "target_epsilon", "query 'calibrate'")
        return Configuration(**out)

    @property
    def key(self) -> str:
        """A stable identifier of the configuration's values (for resuming a sweep)."""
        text = json.dumps([getattr(self, f.name) for f in fields(self)], allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    @property
    def group(self) -> tuple:
        """What rows that can share work have in common: everything but steps and the
        query's number (δ, ε or the target)."""
        return tuple(getattr(self, f.name) for f in fields(self)
                     if f.name not in ("steps", "delta", "epsilon", "target_epsilon"))

    def with_values(self, **values: Any) -> Configuration:
        return replace(self, **values)


def _missing(name: str, where: str):
    raise InvalidParameterError(name, f"given (an axis of the grid) for {where}", None)


def _need(values: dict, name: str, where: str) -> None:
    if values[name] is None:
        _missing(name, where)


def _axis_name(name: str, where: str) -> str:
    if not isinstance(name, str):
        raise InvalidTypeError(where, "an axis name (a string)", name)
    key = name.strip().replace("-", "_")
    key = ALIASES.get(key, key)
    if key not in AXES:
        known = sorted(set(AXES) | set(ALIASES))
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(where, "a known axis (" + ", ".join(known) + ")", name,
                                    detail=f"unknown axis{hint}")
    return key


def _check_value(axis: str, value: Any, where: str) -> Any:
    kind, rule = AXES[axis]
    if kind == "choice":
        return check_choice(where, value, rule)
    if kind == "int":
        return check_int(where, value, rule)
    return check_real(where, value, rule)


def _axis_values(axis: str, spec: Any, where: str) -> list:
    """The values of one axis: a scalar, a list, or a range table."""
    kind, rule = AXES[axis]
    if isinstance(spec, Mapping):
        if kind == "choice":
            raise InvalidParameterError(where, "a value or a list of values (no range for a "
                                        "choice)", dict(spec))
        raw = _range_values(spec, where)
        if kind == "int":
            raw = [int(round(x)) for x in raw]
    elif isinstance(spec, list | tuple):
        if not spec:
            raise InvalidParameterError(where, "a non-empty list of values", [])
        raw = list(spec)
    else:
        raw = [spec]
    out = []
    for x in raw:
        val = _check_value(axis, x, where)
        if val not in out:
            out.append(val)
    return out


def _range_values(spec: Mapping, where: str) -> list[float]:
    allowed = {"start", "stop", "num", "step", "scale"}
    unknown = set(spec) - allowed
    if unknown:
        raise InvalidParameterError(where, "a range {start, stop, num[, scale]} or {start, "
                                    "stop, step}", dict(spec),
                                    detail=f"unknown key {sorted(unknown)[0]!r}")
    for k in ("start", "stop"):
        if k not in spec:
            raise InvalidParameterError(where, f"a range with {k!r}", dict(spec))
    start = check_real(f"{where}.start", spec["start"])
    stop = check_real(f"{where}.stop", spec["stop"])
    if ("num" in spec) == ("step" in spec):
        raise InvalidParameterError(where, "a range with exactly one of 'num' and 'step'",
                                    dict(spec))
    if "num" in spec:
        num = check_int(f"{where}.num", spec["num"], "[1, 1000000]")
        scale = check_choice(f"{where}.scale", spec.get("scale", "linear"), ("linear", "log"))
        if scale == "log":
            if start <= 0 or stop <= 0:
                raise InvalidParameterError(f"{where}.start", "positive for scale = 'log'",
                                            min(start, stop))
            return np.geomspace(start, stop, num).tolist()
        return np.linspace(start, stop, num).tolist()
    if "scale" in spec:
        raise InvalidParameterError(f"{where}.scale", "used with 'num' only", spec["scale"])
    step = check_real(f"{where}.step", spec["step"], "(0, inf)")
    count = math.floor((stop - start) / step * (1 + 1e-12)) + 1 if stop >= start else 0
    if count < 1:
        raise InvalidParameterError(where, "a range with start <= stop", dict(spec))
    if count > 1_000_000:
        raise InvalidParameterError(f"{where}.step", "at most 10^6 values in the range", step)
    return [start + i * step for i in range(count)]


def expand(axes: Mapping[str, Any], grids: Sequence[Mapping[str, Any]] = (), *,
           prefix: str = "") -> list[Configuration]:
    """The configurations named by shared ``axes`` and optional sub-``grids`` (see the module
    doc): the Cartesian product of each sub-grid with the shared axes, joined, without
    duplicates, in order."""
    if not isinstance(axes, Mapping):
        raise InvalidTypeError(prefix or "axes", "a mapping of axis names to values", axes)
    shared = _parse_axes(axes, prefix)
    blocks = list(grids) or [{}]
    parsed = []
    for i, block in enumerate(blocks):
        where = f"{prefix}grid[{i + 1}]"
        if not isinstance(block, Mapping):
            raise InvalidTypeError(where, "a table of axes", block)
        own = _parse_axes(block, f"{where}.")
        merged = {**shared, **own}
        if not merged:
            raise InvalidParameterError(prefix or "axes", "a grid naming at least one axis", {})
        parsed.append(merged)
    total = sum(math.prod(len(v) for v in m.values()) for m in parsed)
    if total > MAX_CONFIGURATIONS:
        raise InvalidParameterError(prefix or "axes", f"a grid of at most "
                                    f"{MAX_CONFIGURATIONS:,} configurations", total)
    seen: dict[Configuration, None] = {}
    for i, merged in enumerate(parsed):
        where = f"{prefix}grid[{i + 1}]." if grids else prefix
        names = list(merged)
        for combo in itertools.product(*(merged[k] for k in names)):
            cfg = Configuration(**dict(zip(names, combo, strict=True))).normalised()
            if cfg not in seen:
                _preflight(cfg, where)
                seen[cfg] = None
    return list(seen)


def _preflight(cfg: Configuration, where: str) -> None:
    """Build the configuration's scheme and mechanism (cheap) so that a row the library refuses
    — m > n without replacement, b > n for MUST, a relation the scheme is not analysed under —
    is refused with the grid, naming the axis and the row, before anything is computed."""
    from ..errors import UnsupportedCombinationError
    from ..relations import NeighbouringRelation
    from .batch import _mechanism, _scheme

    calibrated = cfg.calibrate if cfg.query == "calibrate" else None
    try:
        scheme = None if calibrated in ("rate", "b", "m") else _scheme(cfg)
        outer = NeighbouringRelation.parse(cfg.relation)
        base = outer if scheme is None else scheme.base_relation(outer)
        if calibrated not in ("sigma", "scale"):
            _mechanism(cfg, base)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"{where}{exc.parameter}", exc.rule, exc.value,
                                    detail=_row(cfg) + (f"; {exc.detail}" if exc.detail
                                                        else "")) from None
    except UnsupportedCombinationError as exc:
        raise InvalidParameterError(f"{where}relation", "a relation the scheme is analysed "
                                    "under", cfg.relation, detail=f"{_row(cfg)}; {exc}") from None


def _row(cfg: Configuration) -> str:
    """The inputs of a configuration, for error messages."""
    skip = {"query", "backend"}
    return "in the row " + ", ".join(f"{f.name}={getattr(cfg, f.name)!r}" for f in fields(cfg)
                                     if getattr(cfg, f.name) is not None and f.name not in skip)


def _parse_axes(axes: Mapping[str, Any], prefix: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for name, spec in axes.items():
        if name == "grid" and not prefix:
            continue
        axis = _axis_name(name, f"{prefix}{name}")
        if axis in out:
            raise InvalidParameterError(f"{prefix}{name}", "named once (it is also spelled "
                                        f"{axis!r})", name)
        out[axis] = _axis_values(axis, spec, f"{prefix}{name}")
    return out


def read_grid(path: str | Path) -> list[Configuration]:
    """The configurations of a TOML grid file (see the module doc)."""
    text = read_text_file("grid", path, "TOML file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidParameterError("grid", "a valid TOML file", str(path),
                                    detail=str(exc)) from None
    grids = data.get("grid", [])
    if isinstance(grids, Mapping):
        grids = [grids]
    if not isinstance(grids, list):
        raise InvalidTypeError("grid", "an array of tables ([[grid]])", grids)
    axes = {k: v for k, v in data.items() if k != "grid"}
    if not axes and not grids:
        raise InvalidParameterError("grid", "a file naming at least one axis", str(path),
                                    detail="the file is empty")
    return expand(axes, grids)


def fingerprint(configs: Iterable[Configuration], *extra: str) -> str:
    """A digest of the configurations (in order) and ``extra`` strings."""
    digest = hashlib.sha256()
    for cfg in configs:
        digest.update(cfg.key.encode())
    for item in extra:
        digest.update(b"\0" + item.encode())
    return digest.hexdigest()[:24]
