"""The ``privamp`` command line (also ``python -m privamp``).

Thin by design: it parses options, builds library objects, calls them, and formats the result as
a readable table or, with ``--json``, as exactly one JSON object on stdout. Bad input exits with
status 2 and a one-line message on stderr naming the option and the accepted range; no traceback.

Non-finite numbers appear in JSON as the strings ``"inf"`` / ``"-inf"`` (JSON has no infinity).
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Sequence

import numpy as np

from .. import __version__
from ..errors import InvalidParameterError, PrivampError
from . import _common
from ._common import (
    OPTION_NAMES,
    CliError,
    Parser,
    add_image_out,
    add_mechanism_options,
    add_sampling_options,
    build_scheme,
    check_applicable,
    describe_mechanism,
    describe_scheme,
    emit_json,
    group_of,
    num,
    num_up,
    profile_for,
    table,
)

__all__ = ["build_parser", "main"]

# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------


def _cmd_profile(args: argparse.Namespace) -> int:
    mech, profile = profile_for(args)
    eps = np.asarray(args.eps, dtype=float)
    if hasattr(profile, "points"):  # amplified by a sampling scheme
        pts = profile.points(eps)
        grouped = group_of(profile, args)
        if grouped is not profile:  # groups of records on the full dataset
            pts["delta_amplified"] = np.atleast_1d(grouped.delta(pts["eps_amplified"]))
        base = profile.base
        log_delta = np.atleast_1d(base.log_delta(eps))
        eta = float(profile.eta)
        theorem = profile.theorem
    else:
        delta = np.atleast_1d(profile.delta(eps))
        pts = {"eps": eps, "delta": delta, "eps_amplified": eps, "delta_amplified": delta}
        log_delta = np.atleast_1d(profile.log_delta(eps))
        eta = 1.0
        theorem = None
    points = [
        {"eps": float(e), "delta": float(d), "log_delta": float(ld),
         "eps_amplified": float(ea), "delta_amplified": float(da)}
        for e, d, ld, ea, da in zip(pts["eps"], pts["delta"], log_delta,
                                     pts["eps_amplified"], pts["delta_amplified"], strict=True)
    ]
    result = {
        "mechanism": describe_mechanism(mech),
        "relation": profile.relation.value,
        "sampling": describe_scheme(build_scheme(args)),
        "theorem": theorem,
        "group_privacy": args.group_privacy or "white-box where available",
        "group_size": args.group_size,
        "eta": eta,
        "points": points,
    }
    if args.json:
        emit_json(result)
        return 0
    desc = ", ".join(f"{k}={num(v) if isinstance(v, float) else v}"
                     for k, v in result["mechanism"].items() if k not in ("name", "relation"))
    print(f"Privacy profile of the {result['mechanism']['name']} mechanism ({desc})")
    group = f", groups of {args.group_size}" if args.group_size != 1 else ""
    sampling = ", ".join(f"{k}={v}" for k, v in result["sampling"].items() if k != "scheme")
    sampling = result["sampling"]["scheme"] + (f"({sampling})" if sampling else "")
    print(f"relation: {result['relation']}, sampling: {sampling}{group}")
    if theorem:
        print(f"bound: {theorem}; eta = {eta:.6g}")
        rows = [[num(p["eps"]), num_up(p["delta"]), num_up(p["eps_amplified"]),
                 num_up(p["delta_amplified"])] for p in points]
        print(table(["eps", "delta(eps)", "eps'", "delta'(eps')"], rows))
        return 0
    rows = [[num(p["eps"]), num_up(p["delta"]),
             num_up(p["log_delta"]) if p["delta"] < 1e-300 else ""] for p in points]
    if not any(r[2] for r in rows):
        rows = [r[:2] for r in rows]
        print(table(["eps", "delta(eps)"], rows))
    else:
        print(table(["eps", "delta(eps)", "log delta"], rows))
    return 0


def _cmd_plot_profile(args: argparse.Namespace) -> int:
    from ..plots import plot_profiles, save_figure

    mech, profile = profile_for(args)
    eps_max = args.eps_max
    if not (math.isfinite(eps_max) and eps_max > 0):
        raise InvalidParameterError("eps_max", "a real number in (0, inf)", eps_max)
    eps = np.linspace(0.0, eps_max, 400)
    label = ", ".join(f"{k}={num(v) if isinstance(v, float) else v}"
                      for k, v in describe_mechanism(mech).items() if k != "relation")
    curves = [(label, getattr(profile, "base", profile))]
    title = "Privacy profile"
    if hasattr(profile, "points"):
        scheme = describe_scheme(build_scheme(args))
        params = ", ".join(f"{k}={v}" for k, v in scheme.items() if k != "scheme")
        curves.append((f"after {scheme['scheme']}({params}), η={profile.eta:.4g}",
                       group_of(profile, args)))
        title = f"Base vs amplified profile ({profile.relation.value})"
    fig = plot_profiles(curves, eps, title=title)
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out})
    else:
        print(f"wrote {args.out}")
    return 0


#: The command module of each top-level command, so that running one command imports only its
#: module (start-up time matters for a command-line tool); commands not listed here, ``plot``
#: and ``--help`` register every module.
_MODULE_OF = {"epsilon": "accounting", "delta": "accounting",
              "calibrate": "accounting", "rdp": "rdp", "mixing": "post",
              "iteration": "post", "ou": "post", "reproduce": "reproduce",
              "experiment": "apps", "sweep": "sweep"}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``argv``, only the command module it invokes is loaded."""
    parser = Parser(prog="privamp",
                     description="Privacy amplification and privacy accounting.")
    parser.add_argument("--version", action="version", version=f"privamp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    prof = sub.add_parser("profile", help="privacy profile delta(eps) of a mechanism")
    add_mechanism_options(prof)
    add_sampling_options(prof)
    prof.add_argument("--eps", type=float, nargs="+", required=True,
                      help="epsilon values (>= 0)")
    prof.add_argument("--json", action="store_true", help="print one JSON object")
    prof.set_defaults(func=_cmd_profile)

    plot = sub.add_parser("plot", help="plots (needs the 'plots' extra)")
    plot_sub = plot.add_subparsers(dest="what", required=True, parser_class=Parser)
    pprof = plot_sub.add_parser("profile", help="plot the privacy profile")
    add_mechanism_options(pprof)
    add_sampling_options(pprof)
    pprof.add_argument("--eps-max", type=float, default=5.0, dest="eps_max",
                       help="largest epsilon on the plot (default 5)")
    add_image_out(pprof)
    pprof.add_argument("--json", action="store_true", help="print one JSON object")
    pprof.set_defaults(func=_cmd_plot_profile)

    # feature areas add their own commands (see _cli_common for the shared contract)
    command = next((a for a in (argv or []) if not a.startswith("-")), None)
    if command == "profile":
        modules = []
    elif command in _MODULE_OF:
        import importlib

        modules = [importlib.import_module(f"{__package__}.{_MODULE_OF[command]}")]
    else:
        modules = _command_modules()
    for module in modules:
        module.register(sub, plot_sub)
    return parser


def _command_modules():
    """The ``_cli_*`` modules of the feature areas, each with ``register(sub, plot_sub)``."""
    from . import accounting, apps, plots, post, rdp, reproduce, sweep

    return [accounting, rdp, post, plots, reproduce, apps, sweep]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privamp`` console script; returns the exit status.

    Bad input is exit status 2 and one line ``privamp: error: ...`` on stderr (the option, the
    rule and the value); options that do not apply to the chosen mechanism or scheme are bad
    input (:func:`~privamp._common.check_applicable`).
    """
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            _common.WARNINGS = caught
            args = parser.parse_args(argv)
            check_applicable(args)
            status = args.func(args)
        if status == 0 and not getattr(args, "json", False):
            for line in _common.warning_lines():
                print(f"privamp: warning: {line}", file=sys.stderr)
        return status
    except CliError as exc:
        message = str(exc)
    except InvalidParameterError as exc:
        message = exc.render(OPTION_NAMES.get(exc.parameter, exc.parameter))
    except PrivampError as exc:
        message = str(exc)
    except OSError as exc:
        message = str(exc)
    finally:
        _common.WARNINGS = []
    print(f"privamp: error: {' '.join(message.split())}", file=sys.stderr)
    return 2
