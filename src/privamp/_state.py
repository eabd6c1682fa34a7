"""Plain-data (JSON-ready) form of an accountant's ledger: what ``Accountant.state_dict`` writes
and ``Accountant.from_state_dict`` reads, so that a resumed training run continues its ledger.

A mechanism is written as its registry name (:data:`privamp.mechanisms.REGISTRY`) and its
dataclass fields; a scheme as its kind (:data:`privamp.sampling.SCHEMES`) and its constructor's
arguments. Floats are written as Python writes them (``repr``, which reads back to the same
double), so the restored ledger is *equal* to the saved one (``Event.__eq__``) and answers with
the same numbers. Non-finite floats and arrays are tagged; nothing is pickled, so a state file
cannot run code when read. Objects that are not registered (privacy profiles, user subclasses)
are refused by name rather than written approximately.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import math
from typing import Any

import numpy as np

from .errors import InvalidParameterError, UnsupportedCombinationError

#: The format written by :func:`encode_event` (the ``format`` key of a state dict).
FORMAT = "privamp.accountant"
#: Its version: a reader refuses versions it does not know.
VERSION = 1


def encode_value(value: Any, where: str) -> Any:
    """``value`` as JSON data: numbers, strings, lists, tagged non-finite floats and arrays."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.ndarray):
        return {"array": [encode_value(v, where) for v in value.ravel().tolist()],
                "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, list | tuple):
        return [encode_value(v, where) for v in value]
    raise UnsupportedCombinationError(
        f"{where}: a {type(value).__name__} value cannot be written to a state dict (numbers, "
        "strings, sequences and arrays can)")


def decode_value(data: Any, where: str) -> Any:
    """The inverse of :func:`encode_value` (lists come back as tuples)."""
    if isinstance(data, dict):
        if set(data) == {"float"}:
            return float(data["float"])
        if set(data) == {"array", "dtype", "shape"}:
            values = [decode_value(v, where) for v in data["array"]]
            return np.array(values, dtype=np.dtype(data["dtype"])).reshape(data["shape"])
        raise InvalidParameterError(where, "a number, string, list, {'float': ...} or "
                                    "{'array': ..., 'dtype': ..., 'shape': ...}", data)
    if isinstance(data, list):
        return tuple(decode_value(v, where) for v in data)
    return data


def encode_mechanism(mechanism: Any, where: str) -> dict:
    from .mechanisms import REGISTRY

    name = getattr(type(mechanism), "registry_name", "")
    if not name or name not in REGISTRY or REGISTRY[name] is not type(mechanism) \
            or not dataclasses.is_dataclass(mechanism):
        raise UnsupportedCombinationError(
            f"{where}: {type(mechanism).__name__} is not a registered mechanism, so it cannot be "
            "written to a state dict (registered: " + ", ".join(REGISTRY) + "; a privacy "
            "profile or a user class is rebuilt by the caller and added again)")
    fields = {f.name: encode_value(getattr(mechanism, f.name), f"{where}.{f.name}")
              for f in dataclasses.fields(mechanism) if f.init}
    return {"name": name, "fields": fields}


def decode_mechanism(data: Any, where: str) -> Any:
    from .mechanisms import REGISTRY

    if not isinstance(data, dict) or set(data) != {"name", "fields"}:
        raise InvalidParameterError(where, "{'name': ..., 'fields': {...}}", data)
    if data["name"] not in REGISTRY:
        raise InvalidParameterError(f"{where}.name", "a registered mechanism ("
                                    + ", ".join(REGISTRY) + ")", data["name"])
    fields = {k: decode_value(v, f"{where}.{k}") for k, v in data["fields"].items()}
    return REGISTRY[data["name"]](**fields)


def _scheme_arguments(cls: type) -> list[str]:
    return [name for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD]


def encode_scheme(scheme: Any, where: str) -> dict | None:
    from .sampling import SCHEMES

    if scheme is None:
        return None
    kind = getattr(type(scheme), "kind", "")
    if SCHEMES.get(kind) is not type(scheme):
        raise UnsupportedCombinationError(
            f"{where}: {type(scheme).__name__} is not a registered scheme, so it cannot be "
            "written to a state dict (registered: " + ", ".join(SCHEMES) + ")")
    args = {name: encode_value(getattr(scheme, name), f"{where}.{name}")
            for name in _scheme_arguments(type(scheme))}
    return {"kind": kind, "args": args}


def decode_scheme(data: Any, where: str) -> Any:
    from .sampling import SCHEMES

    if data is None:
        return None
    if not isinstance(data, dict) or set(data) != {"kind", "args"}:
        raise InvalidParameterError(where, "null or {'kind': ..., 'args': {...}}", data)
    if data["kind"] not in SCHEMES:
        raise InvalidParameterError(f"{where}.kind", "a registered scheme ("
                                    + ", ".join(SCHEMES) + ")", data["kind"])
    cls = SCHEMES[data["kind"]]
    allowed = _scheme_arguments(cls)
    for key in data["args"]:
        if key not in allowed:
            raise InvalidParameterError(f"{where}.{key}", f"an argument of the {data['kind']!r} "
                                        f"scheme ({', '.join(allowed)})", data["args"][key])
    args = {k: decode_value(v, f"{where}.{k}") for k, v in data["args"].items()}
    return cls(**args)
