"""``privamp profile``, ``privamp plot profile`` and ``privamp plot aligned``: the privacy profile
δ(ε) of a mechanism, optionally amplified by a sampling scheme, and the aligned profiles of
several schemes.

Thin, like the rest of the command line: parse, call :func:`privamp.cli._common.profile_for`
(:func:`privamp.amplification.subsampling.amplify`), format. ::

    privamp profile --mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 --eps 0 1 2
    privamp plot profile --mechanism laplace --scale 1 --sampling wor --n 100 --m 10 --out p.png
    privamp plot aligned --mechanism gaussian --sigma 1 --n 1000 --b 500 --m 400 --out a.png

``--json`` prints ``{"eta": η, "points": [{"eps", "delta", "log_delta", "eps_amplified",
"delta_amplified"}, ...], ...}``. ``plot aligned``: the aligned privacy profile (ε'/ε,
δ'(ε') − δ(ε)) of MUST Definition 5 for the chosen schemes over a range of base ε, on the shaded
regions strong / weak / dilution.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ..display import num, num_up
from ..errors import InvalidParameterError
from . import SUMMARIES
from . import _common as options
from ._common import (
    SAMPLINGS,
    build_mechanism,
    build_scheme,
    describe_mechanism,
    describe_scheme,
    emit_json,
    eps_grid,
    group_of,
    profile_for,
    relation_text,
    scheme_text,
    short_description,
    stage_one_size,
    table,
)

__all__ = ["add_plot_aligned", "add_plot_profile", "add_profile"]

#: Parameter names of this module's commands -> options (the shared ones are in ``_common``).
OPTION_NAMES: dict[str, str] = {}


def add_profile(sub) -> None:
    """Add ``privamp profile``."""
    prof = sub.add_parser("profile", help=SUMMARIES["profile"])
    options.add_mechanism_options(prof)
    options.add_sampling_options(prof)
    prof.add_argument("--eps", type=float, nargs="+", required=True,
                      help="epsilon values (>= 0)")
    options.add_json(prof)
    prof.set_defaults(func=_cmd_profile)


def add_plot_profile(plot_sub) -> None:
    """Add ``privamp plot profile``."""
    pprof = plot_sub.add_parser("profile", help="plot the privacy profile")
    options.add_mechanism_options(pprof)
    options.add_sampling_options(pprof)
    pprof.add_argument("--eps-max", type=float, default=5.0, dest="eps_max",
                       help="largest epsilon on the plot (default 5)")
    options.add_plot_outputs(pprof)
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
    relation = relation_text(profile.relation)
    base = getattr(profile, "base", profile)
    curves = [(f"{short_description(mech)}, {relation_text(base.relation)}"
               + ("" if hasattr(profile, "points") else "" if args.group_size == 1
                  else f", groups of {args.group_size}"), base)]
    title = f"Privacy profile δ(ε): {short_description(mech)} ({relation})"
    if hasattr(profile, "points"):
        sampled = scheme_text(build_scheme(args))
        group = f", groups of {args.group_size}" if args.group_size != 1 else ""
        curves.append((f"after {sampled}{group} ({relation}), η = {profile.eta:.4g}",
                       group_of(profile, args)))
        title = (f"Base vs amplified privacy profile: {short_description(mech)},\n"
                 f"{sampled}, {relation}")
    fig = plot_profiles(curves, eps, title=title)
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out})
    else:
        print(f"wrote {args.out}")
    return 0


def add_plot_aligned(plot_sub) -> None:
    """Add ``privamp plot aligned``."""
    pa = plot_sub.add_parser("aligned", help="aligned privacy profiles (MUST Figure 4) of "
                                             "several sampling schemes")
    options.add_mechanism_options(pa)
    options.add_size_options(pa)
    pa.add_argument("--schemes", nargs="+", default=["wor", "wr", "must-ow", "must-ww"],
                    choices=SAMPLINGS[1:], help="sampling schemes (default wor wr must-ow "
                                                "must-ww)")
    pa.add_argument("--group-privacy", choices=("white-box", "black-box"), default=None,
                    dest="group_privacy", help="group profiles (default white-box)")
    options.add_eps_grid_options(pa, 0.01, 6.0, 600, what="base epsilon", points_help="grid points")
    options.add_plot_outputs(pa)
    pa.set_defaults(func=_cmd_plot_aligned)


def _cmd_plot_aligned(args: argparse.Namespace) -> int:
    from ..amplification.subsampling import amplify
    from ..amplification.tightness import aligned_profile
    from ..plots import aligned_panel, plot_panels, save_figure

    eps = eps_grid(args, "(0, inf)")
    b = stage_one_size(args)
    schemes = {name: build_scheme(argparse.Namespace(  # every size checked before computing
        sampling=name, rate=args.m / args.n, n=args.n if name != "poisson" else None, b=b,
        m=args.m)) for name in args.schemes}
    aligned, rows = {}, []
    for name, scheme in schemes.items():
        mech = build_mechanism(args, scheme.base_relation(scheme.natural_relation))
        a = aligned_profile(amplify(mech, scheme, group_privacy=args.group_privacy), eps)
        aligned[f"{name} ({scheme.natural_relation.value})"] = a
        rows.append({"scheme": name, "relation": scheme.natural_relation.value,
                     "eta": float(scheme.eta),
                     **{k: a.fraction(k) for k in ("strong", "weak-I", "weak-II",
                                                   "dilution")}})
    sizes = f"n={args.n}, m={args.m}" + (f", b={b}" if any(s.startswith("must")
                                                          for s in args.schemes) else "")
    title = f"Aligned privacy profiles: {short_description(mech)}"
    fig = plot_panels([aligned_panel(aligned, title)],
                      panel_size=(8.0, 5.4),
                      footnote=f"{sizes}; base ε = {num(eps[0])} … {num(eps[-1])} "
                               f"({eps.size} points); group privacy: "
                               f"{args.group_privacy or 'white-box where available'}. Regions: "
                               "MUST Definition 5 (corrected from its Figure 3).")
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out, "mechanism": describe_mechanism(mech), "n": args.n,
                   "m": args.m, "b": b, "eps_min": float(eps[0]), "eps_max": float(eps[-1]),
                   "schemes": rows})
        return 0
    print(table(["scheme", "eta", "strong", "weak-I", "weak-II", "dilution"],
                [[r["scheme"], num_up(r["eta"])] + [f"{100 * r[k]:.0f}%" for k in
                                                 ("strong", "weak-I", "weak-II", "dilution")]
                 for r in rows]))
    print(f"wrote {args.out}")
    return 0
