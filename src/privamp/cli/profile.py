"""``privamp profile`` and ``privamp plot profile``: the privacy profile δ(ε) of a mechanism,
optionally amplified by a sampling scheme.

Thin, like the rest of the command line: parse, call :func:`privamp.cli._common.profile_for`
(:func:`privamp.amplification.subsampling.amplify`), format. ::

    privamp profile --mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 --eps 0 1 2
    privamp plot profile --mechanism laplace --scale 1 --sampling wor --n 100 --m 10 --out p.png

``--json`` prints ``{"eta": η, "points": [{"eps", "delta", "log_delta", "eps_amplified",
"delta_amplified"}, ...], ...}``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ..errors import InvalidParameterError
from ._common import (
    add_image_out,
    add_mechanism_options,
    add_sampling_options,
    build_scheme,
    describe_mechanism,
    describe_scheme,
    emit_json,
    group_of,
    num,
    num_up,
    profile_for,
    table,
)

__all__ = ["add_plot_profile", "add_profile"]

#: Parameter names of this module's commands -> options (the shared ones are in ``_common``).
OPTION_NAMES: dict[str, str] = {}


def add_profile(sub) -> None:
    """Add ``privamp profile``."""
    prof = sub.add_parser("profile", help="privacy profile delta(eps) of a mechanism")
    add_mechanism_options(prof)
    add_sampling_options(prof)
    prof.add_argument("--eps", type=float, nargs="+", required=True,
                      help="epsilon values (>= 0)")
    prof.add_argument("--json", action="store_true", help="print one JSON object")
    prof.set_defaults(func=_cmd_profile)


def add_plot_profile(plot_sub) -> None:
    """Add ``privamp plot profile``."""
    pprof = plot_sub.add_parser("profile", help="plot the privacy profile")
    add_mechanism_options(pprof)
    add_sampling_options(pprof)
    pprof.add_argument("--eps-max", type=float, default=5.0, dest="eps_max",
                       help="largest epsilon on the plot (default 5)")
    add_image_out(pprof)
    pprof.add_argument("--json", action="store_true", help="print one JSON object")
    pprof.set_defaults(func=_cmd_plot_profile)


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
