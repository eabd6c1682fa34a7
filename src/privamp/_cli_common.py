"""Shared machinery of the command line: one-line errors, JSON/table output, common options.

Every command module (``cli.py`` and the ``_cli_*.py`` modules of each feature area) builds on
these, so the contract — exactly one JSON object with ``--json``, exit status 2 and a one-line
message naming the option for bad input — is implemented once.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

# numbers in text output: the directed rounding of privamp.display (re-exported here)
from .display import num, num_down, num_up  # noqa: F401
from .mechanisms import GaussianMechanism, LaplaceMechanism, Mechanism, RandomizedResponse
from .profiles import GroupPrivacy, PrivacyProfile
from .relations import NeighbouringRelation

#: Python parameter names -> command-line options, for error messages.
OPTION_NAMES = {
    "sigma": "--sigma",
    "scale": "--scale",
    "sensitivity": "--sensitivity",
    "epsilon": "--rr-epsilon",
    "p": "--rr-p",
    "eps": "--eps",
    "relation": "--relation",
    "k": "--group-size",
    "group_privacy": "--group-privacy",
    "eps_max": "--eps-max",
    "rate": "--rate",
    "n": "--n",
    "m": "--m",
    "b": "--b",
}

MECHANISMS = ("gaussian", "laplace", "randomized-response")
SAMPLINGS = ("none", "poisson", "wor", "wr", "must-ow", "must-wo", "must-ww")


def register_option_names(names: dict[str, str]) -> None:
    """Let a command module map its parameter names to option names for error messages."""
    OPTION_NAMES.update(names)


class CliError(Exception):
    """A usage error: reported on one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise CliError(f"{self.prog}: error: {message}")



# ---------------------------------------------------------------------------------------------
# option groups shared by commands
# ---------------------------------------------------------------------------------------------


def add_mechanism_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("mechanism")
    g.add_argument("--mechanism", required=True, choices=MECHANISMS,
                   help="the base mechanism")
    g.add_argument("--sigma", type=float, help="Gaussian noise standard deviation (> 0)")
    g.add_argument("--scale", type=float, help="Laplace scale b (> 0)")
    g.add_argument("--rr-epsilon", type=float, dest="rr_epsilon",
                   help="randomized response: its pure-DP epsilon (>= 0)")
    g.add_argument("--rr-p", type=float, dest="rr_p",
                   help="randomized response: probability of the true bit, in [0, 1]")
    g.add_argument("--sensitivity", type=float, default=1.0,
                   help="sensitivity under the relation (default 1)")
    g.add_argument("--relation", choices=("add-remove", "substitute"), default=None,
                   help="neighbouring relation on the full dataset (default: the sampling "
                        "scheme's natural one; add-remove without sampling). --sensitivity is "
                        "read under the relation the amplification theorem needs for the base "
                        "mechanism: substitute, except Poisson under add-remove")


def add_sampling_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sampling")
    g.add_argument("--sampling", choices=SAMPLINGS, default="none",
                   help="subsampling scheme applied before the mechanism (default none)")
    g.add_argument("--rate", type=float, help="Poisson sampling rate, in (0, 1]")
    g.add_argument("--n", type=int, help="dataset size (wor, wr, must-*; Poisson under "
                                         "substitute)")
    g.add_argument("--b", type=int, help="MUST stage-I size")
    g.add_argument("--m", type=int, help="subsample size (wor, wr, must-*)")
    g.add_argument("--group-privacy", choices=("white-box", "black-box"), default=None,
                   dest="group_privacy",
                   help="how group profiles are obtained (default: white-box where available)")
    g.add_argument("--group-size", type=int, default=1, dest="group_size",
                   help="report the profile for groups of this many records (default 1)")


def build_scheme(args: argparse.Namespace):
    """The sampling scheme named by ``--sampling`` (``None`` for ``none``)."""
    from .sampling import MustOW, MustWO, MustWW, Poisson, WithoutReplacement, WithReplacement

    kind = getattr(args, "sampling", "none")
    if kind == "none":
        return None
    needed = {"poisson": ("rate",), "wor": ("n", "m"), "wr": ("n", "m"),
              "must-ow": ("n", "b", "m"), "must-wo": ("n", "b", "m"),
              "must-ww": ("n", "b", "m")}[kind]
    for name in needed:
        if getattr(args, name) is None:
            raise CliError(f"--{name} is required with --sampling {kind}")
    if kind == "poisson":
        return Poisson(args.rate, n=args.n)
    if kind == "wor":
        return WithoutReplacement(args.n, args.m)
    if kind == "wr":
        return WithReplacement(args.n, args.m)
    cls = {"must-ow": MustOW, "must-wo": MustWO, "must-ww": MustWW}[kind]
    return cls(args.n, args.b, args.m)


def describe_scheme(scheme) -> dict[str, Any]:
    if scheme is None:
        return {"scheme": "none"}
    out = {"scheme": scheme.kind}
    for name in ("rate", "n", "b", "m"):
        value = getattr(scheme, name, None)
        if value is not None:
            out[name] = value
    return out


def build_mechanism(args: argparse.Namespace,
                    relation: NeighbouringRelation | None = None) -> Mechanism:
    if relation is None:
        relation = NeighbouringRelation.parse(args.relation or "add-remove")
    name = args.mechanism
    if name == "gaussian":
        require(args, "sigma", "--sigma", name)
        return GaussianMechanism(sigma=args.sigma, sensitivity=args.sensitivity,
                                 relation=relation)
    if name == "laplace":
        require(args, "scale", "--scale", name)
        return LaplaceMechanism(scale=args.scale, sensitivity=args.sensitivity,
                                relation=relation)
    if name == "randomized-response":
        if (args.rr_epsilon is None) == (args.rr_p is None):
            raise CliError("--mechanism randomized-response needs exactly one of "
                           "--rr-epsilon, --rr-p")
        if args.rr_epsilon is not None:
            return RandomizedResponse.from_epsilon(args.rr_epsilon, relation=relation)
        return RandomizedResponse(p=args.rr_p, relation=relation)
    raise CliError(f"unknown mechanism {name!r}")  # pragma: no cover - argparse restricts it


def require(args, attr: str, option: str, mechanism: str) -> None:
    if getattr(args, attr) is None:
        raise CliError(f"{option} is required with --mechanism {mechanism}")


def describe_mechanism(mech: Mechanism) -> dict[str, Any]:
    if isinstance(mech, GaussianMechanism):
        out = {"name": "gaussian", "sigma": mech.sigma, "sensitivity": mech.sensitivity,
               "noise_multiplier": mech.noise_multiplier}
    elif isinstance(mech, LaplaceMechanism):
        out = {"name": "laplace", "scale": mech.scale, "sensitivity": mech.sensitivity}
    elif isinstance(mech, RandomizedResponse):
        out = {"name": "randomized-response", "p": mech.p, "epsilon": mech.epsilon}
    else:  # pragma: no cover
        out = {"name": type(mech).__name__}
    out["relation"] = mech.relation.value
    return out


def profile_for(args: argparse.Namespace) -> tuple[Mechanism, PrivacyProfile]:
    """The (possibly subsampled) profile described by the mechanism and sampling options.

    Without sampling: the mechanism's profile (group profile with ``--group-size``). With
    sampling: the amplified profile of :func:`privamp.amplification.subsampling.amplify`, the
    mechanism being built under the relation the theorem needs for it.
    """
    from .amplification.subsampling import amplify

    scheme = build_scheme(args)
    method = None if args.group_privacy is None else GroupPrivacy.parse(args.group_privacy)
    if scheme is None:
        mech = build_mechanism(args)
        profile = mech.profile()
        if args.group_size != 1 or args.group_privacy is not None:
            profile = profile.group(args.group_size, method)
        return mech, profile
    outer = (scheme.natural_relation if args.relation is None
             else NeighbouringRelation.parse(args.relation))
    mech = build_mechanism(args, scheme.base_relation(outer))
    return mech, amplify(mech, scheme, outer, method)


def group_of(profile: PrivacyProfile, args: argparse.Namespace) -> PrivacyProfile:
    """``--group-size K`` applied to a (possibly amplified) profile: black-box after sampling,
    the mechanism's own group profile otherwise (already applied by :func:`profile_for`)."""
    if args.group_size == 1 or not hasattr(profile, "points"):
        return profile
    return profile.group(args.group_size, "black-box")


# ---------------------------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------------------------


def jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def emit_json(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(jsonable(obj), allow_nan=False) + "\n")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)
