"""The ``privamp`` command line (also ``python -m privamp``).

Thin by design: it parses options, builds library objects, calls them, and formats the result as
a readable table or, with ``--json``, as exactly one JSON object on stdout. Bad input exits with
status 2 and a one-line message on stderr naming the option and the accepted range; no traceback.

Non-finite numbers appear in JSON as the strings ``"inf"`` / ``"-inf"`` (JSON has no infinity).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import __version__
from .errors import InvalidParameterError, PrivampError
from .mechanisms import GaussianMechanism, LaplaceMechanism, Mechanism, RandomizedResponse
from .profiles import GroupPrivacy, PrivacyProfile
from .relations import NeighbouringRelation

__all__ = ["build_parser", "main"]

#: Python parameter names -> command-line options, for error messages.
_OPTION_NAMES = {
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
}

MECHANISMS = ("gaussian", "laplace", "randomized-response")
SAMPLINGS = ("none",)


class CliError(Exception):
    """A usage error: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise CliError(f"{self.prog}: error: {message}")


# ---------------------------------------------------------------------------------------------
# option groups shared by commands
# ---------------------------------------------------------------------------------------------


def _add_mechanism_options(p: argparse.ArgumentParser) -> None:
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
                   help="neighbouring relation (default: add-remove)")


def _add_sampling_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sampling")
    g.add_argument("--sampling", choices=SAMPLINGS, default="none",
                   help="subsampling scheme applied before the mechanism (default none)")
    g.add_argument("--group-privacy", choices=("white-box", "black-box"), default=None,
                   dest="group_privacy",
                   help="how group profiles are obtained (default: white-box where available)")
    g.add_argument("--group-size", type=int, default=1, dest="group_size",
                   help="report the profile for groups of this many records (default 1)")


def _build_mechanism(args: argparse.Namespace) -> Mechanism:
    relation = NeighbouringRelation.parse(args.relation or "add-remove")
    name = args.mechanism
    if name == "gaussian":
        _require(args, "sigma", "--sigma", name)
        return GaussianMechanism(sigma=args.sigma, sensitivity=args.sensitivity,
                                 relation=relation)
    if name == "laplace":
        _require(args, "scale", "--scale", name)
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


def _require(args, attr: str, option: str, mechanism: str) -> None:
    if getattr(args, attr) is None:
        raise CliError(f"{option} is required with --mechanism {mechanism}")


def _describe(mech: Mechanism) -> dict[str, Any]:
    if isinstance(mech, GaussianMechanism):
        return {"name": "gaussian", "sigma": mech.sigma, "sensitivity": mech.sensitivity,
                "noise_multiplier": mech.noise_multiplier}
    if isinstance(mech, LaplaceMechanism):
        return {"name": "laplace", "scale": mech.scale, "sensitivity": mech.sensitivity}
    if isinstance(mech, RandomizedResponse):
        return {"name": "randomized-response", "p": mech.p, "epsilon": mech.epsilon}
    return {"name": type(mech).__name__}  # pragma: no cover


def _profile_for(args: argparse.Namespace) -> tuple[Mechanism, PrivacyProfile]:
    mech = _build_mechanism(args)
    profile = mech.profile()
    if args.group_size != 1 or args.group_privacy is not None:
        method = None if args.group_privacy is None else GroupPrivacy.parse(args.group_privacy)
        profile = profile.group(args.group_size, method)
    return mech, profile


# ---------------------------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------------------------


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _emit_json(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(_jsonable(obj), allow_nan=False) + "\n")


def _num(x: float) -> str:
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.6g}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------


def _cmd_profile(args: argparse.Namespace) -> int:
    mech, profile = _profile_for(args)
    eps = np.asarray(args.eps, dtype=float)
    delta = np.atleast_1d(profile.delta(eps))
    log_delta = np.atleast_1d(profile.log_delta(eps))
    eta = 1.0
    points = [
        {"eps": float(e), "delta": float(d), "log_delta": float(ld),
         "eps_amplified": float(e), "delta_amplified": float(d)}
        for e, d, ld in zip(eps, delta, log_delta, strict=True)
    ]
    result = {
        "mechanism": _describe(mech),
        "relation": profile.relation.value,
        "sampling": args.sampling,
        "group_size": args.group_size,
        "eta": eta,
        "points": points,
    }
    if args.json:
        _emit_json(result)
        return 0
    desc = ", ".join(f"{k}={_num(v) if isinstance(v, float) else v}"
                     for k, v in result["mechanism"].items() if k != "name")
    print(f"Privacy profile of the {result['mechanism']['name']} mechanism ({desc})")
    group = f", groups of {args.group_size}" if args.group_size != 1 else ""
    print(f"relation: {result['relation']}, sampling: {args.sampling}{group}")
    rows = [[_num(p["eps"]), _num(p["delta"]),
             f"{p['log_delta']:.6g}" if p["delta"] < 1e-300 else ""] for p in points]
    if not any(r[2] for r in rows):
        rows = [r[:2] for r in rows]
        print(_table(["eps", "delta(eps)"], rows))
    else:
        print(_table(["eps", "delta(eps)", "log delta"], rows))
    return 0


def _cmd_plot_profile(args: argparse.Namespace) -> int:
    from .plots import plot_profiles, save_figure

    mech, profile = _profile_for(args)
    eps_max = args.eps_max
    if not (math.isfinite(eps_max) and eps_max > 0):
        raise InvalidParameterError("eps_max", "a real number in (0, inf)", eps_max)
    eps = np.linspace(0.0, eps_max, 400)
    label = ", ".join(f"{k}={_num(v) if isinstance(v, float) else v}"
                      for k, v in _describe(mech).items())
    fig = plot_profiles([(label, profile)], eps, title="Privacy profile")
    save_figure(fig, args.out)
    if args.json:
        _emit_json({"out": args.out})
    else:
        print(f"wrote {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="privamp",
                     description="Privacy amplification and privacy accounting.")
    parser.add_argument("--version", action="version", version=f"privamp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    prof = sub.add_parser("profile", help="privacy profile delta(eps) of a mechanism")
    _add_mechanism_options(prof)
    _add_sampling_options(prof)
    prof.add_argument("--eps", type=float, nargs="+", required=True,
                      help="epsilon values (>= 0)")
    prof.add_argument("--json", action="store_true", help="print one JSON object")
    prof.set_defaults(func=_cmd_profile)

    plot = sub.add_parser("plot", help="plots (needs the 'plots' extra)")
    plot_sub = plot.add_subparsers(dest="what", required=True, parser_class=_Parser)
    pprof = plot_sub.add_parser("profile", help="plot the privacy profile")
    _add_mechanism_options(pprof)
    _add_sampling_options(pprof)
    pprof.add_argument("--eps-max", type=float, default=5.0, dest="eps_max",
                       help="largest epsilon on the plot (default 5)")
    pprof.add_argument("--out", required=True, help="output image (PNG, PDF or SVG)")
    pprof.add_argument("--json", action="store_true", help="print one JSON object")
    pprof.set_defaults(func=_cmd_plot_profile)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privamp`` console script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except CliError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except InvalidParameterError as exc:
        name = _OPTION_NAMES.get(exc.parameter, exc.parameter)
        print(f"privamp: error: {exc.render(name)}", file=sys.stderr)
        return 2
    except PrivampError as exc:
        print(f"privamp: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"privamp: error: {exc}", file=sys.stderr)
        return 2
