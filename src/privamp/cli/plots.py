"""``privamp plot aligned`` and ``privamp plot delta``: everyday plots, drawn by the same
plotting module as every other plot and as ``privamp reproduce`` (:mod:`privamp.plots`).

Thin, like the rest of the command line: parse, call the library, draw. ::

    privamp plot aligned --mechanism gaussian --sigma 1 --n 1000 --b 500 --m 400 --out a.png
    privamp plot delta --mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 \\
        --steps 100 1000 --out d.png

``plot aligned``: the aligned privacy profile (ε'/ε, δ'(ε') − δ(ε)) of MUST Definition 5 for the
chosen schemes over a range of base ε, on the shaded regions strong / weak / dilution.
``plot delta``: δ(ε) of ``--steps`` compositions over a grid of ε, with the certified
``[lower, upper]`` band of :meth:`privamp.accountant.Accountant.delta`.
"""

from __future__ import annotations

import argparse

import numpy as np

from .._validation import check_real
from ._common import (
    CliError,
    Progress,
    add_image_out,
    add_mechanism_options,
    add_sampling_options,
    build_event,
    build_mechanism,
    build_scheme,
    composition_group_privacy,
    describe_mechanism,
    describe_scheme,
    emit_json,
    int_in,
    num,
    num_down,
    num_up,
    table,
)

__all__ = ["add_plot_aligned", "add_plot_delta"]

_SCHEMES = ("poisson", "wor", "wr", "must-ow", "must-wo", "must-ww")


#: Parameter names of these commands -> options, for error messages.
OPTION_NAMES = {"eps_min": "--eps-min", "eps_max": "--eps-max", "points": "--points",
                "steps": "--steps"}


def add_plot_aligned(plot_sub) -> None:
    """Add ``privamp plot aligned``."""
    pa = plot_sub.add_parser("aligned", help="aligned privacy profiles (MUST Figure 4) of "
                                             "several sampling schemes")
    add_mechanism_options(pa)
    pa.add_argument("--n", type=int_in("[1, inf)"), required=True, help="dataset size")
    pa.add_argument("--m", type=int_in("[1, inf)"), required=True,
                    help="subsample size (Poisson rate m/n)")
    pa.add_argument("--b", type=int_in("[1, inf)"), default=None,
                    help="MUST stage-I size (must-* schemes; default n/2)")
    pa.add_argument("--schemes", nargs="+", default=["wor", "wr", "must-ow", "must-ww"],
                    choices=_SCHEMES, help="sampling schemes (default wor wr must-ow must-ww)")
    pa.add_argument("--group-privacy", choices=("white-box", "black-box"), default=None,
                    dest="group_privacy", help="group profiles (default white-box)")
    pa.add_argument("--eps-min", type=float, default=0.01, dest="eps_min",
                    help="smallest base epsilon (default 0.01)")
    pa.add_argument("--eps-max", type=float, default=6.0, dest="eps_max",
                    help="largest base epsilon (default 6)")
    pa.add_argument("--points", type=int_in("[2, 100000]"), default=600,
                    help="grid points, 2 to 100000 (default 600)")
    add_image_out(pa)
    pa.add_argument("--json", action="store_true", help="print one JSON object")
    pa.set_defaults(func=_cmd_plot_aligned)


def add_plot_delta(plot_sub) -> None:
    """Add ``privamp plot delta``."""
    pd = plot_sub.add_parser("delta", help="delta(eps) of a composition with its certified "
                                           "band")
    add_mechanism_options(pd)
    add_sampling_options(pd)
    pd.add_argument("--steps", type=int_in("[1, inf)"), nargs="+", required=True,
                    help="number(s) of composed steps; one curve each")
    pd.add_argument("--eps-min", type=float, default=0.0, dest="eps_min",
                    help="smallest epsilon (default 0)")
    pd.add_argument("--eps-max", type=float, default=5.0, dest="eps_max",
                    help="largest epsilon (default 5)")
    pd.add_argument("--points", type=int_in("[2, 100000]"), default=12,
                    help="epsilon values, 2 to 100000 (default 12)")
    pd.add_argument("--accountant", choices=("pld", "rdp", "fourier"), default="pld",
                    help="pld (default; certified band), rdp (upper bound only) or fourier")
    pd.add_argument("--delta-error", type=float, default=None, dest="delta_error",
                    help="pld: target relative width of each bracket (default 1e-3)")
    add_image_out(pd)
    pd.add_argument("--json", action="store_true", help="print one JSON object")
    pd.set_defaults(func=_cmd_plot_delta)


def _short(mech) -> str:
    """A short description of a mechanism for a plot title."""
    d = describe_mechanism(mech)
    if d["name"] == "gaussian":
        return f"Gaussian mechanism σ = {num(d['sigma'])}, Δ = {num(d['sensitivity'])}"
    if d["name"] == "laplace":
        return f"Laplace mechanism b = {num(d['scale'])}, Δ = {num(d['sensitivity'])}"
    return f"randomized response p = {num(d['p'])}"


def _eps_grid(args, low: str) -> np.ndarray:
    lo = check_real("eps_min", args.eps_min, low)
    hi = check_real("eps_max", args.eps_max, "(0, inf)")
    if hi <= lo:
        raise CliError(f"--eps-max ({num(hi)}) must be larger than --eps-min ({num(lo)})")
    return np.linspace(lo, hi, args.points)  # --points: 2 to 100000 (checked while parsing)


def _cmd_plot_aligned(args: argparse.Namespace) -> int:
    from ..amplification.subsampling import amplify
    from ..amplification.tightness import aligned_profile
    from ..plots import aligned_panel, plot_panels, save_figure

    eps = _eps_grid(args, "(0, inf)")
    if "poisson" in args.schemes and args.m > args.n:
        raise CliError(f"--m must be at most --n = {args.n} for --schemes poisson (its rate is "
                       f"m/n); got {args.m}")
    b = args.b if args.b is not None else max(1, args.n // 2)
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
    fig = plot_panels([aligned_panel(aligned, f"Aligned privacy profiles: {_short(mech)}")],
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


def _cmd_plot_delta(args: argparse.Namespace) -> int:
    from ..accountant import Accountant
    from ..plots import Curve, Panel, plot_panels, save_figure

    eps = _eps_grid(args, "[0, inf)")
    steps = args.steps  # each >= 1 (checked while parsing)
    composition_group_privacy(args)
    mech, scheme, outer = build_event(args)
    progress = Progress(not args.json)
    curves, out = [], []
    for t in steps:
        acc = Accountant(args.accountant, delta_error=args.delta_error)
        acc.add(mech, t, scheme=scheme, relation=outer if scheme is not None else None,
                group_privacy=args.group_privacy)
        upper, lower = [], []
        for e in eps:
            progress.stage(f"{t} steps, eps = {num_up(float(e))}")
            bracket = acc.delta(float(e))
            upper.append(bracket.upper)
            lower.append(bracket.lower)
        has_lower = all(v is not None for v in lower)
        curves.append(Curve(f"{t:,} steps, certified upper" if has_lower else f"{t:,} steps",
                            eps, upper, lower=lower if has_lower else None,
                            upper=upper if has_lower else None, marker="o",
                            group=str(t)))
        out.append({"steps": t, "eps": eps.tolist(), "delta": upper,
                    "delta_lower": lower if has_lower else None})
    progress.done()
    samp = describe_scheme(scheme)
    sdesc = ", ".join(f"{k}={v}" for k, v in samp.items() if k != "scheme")
    title = f"δ(ε) after composition: {_short(mech)}" + \
        (f", {samp['scheme']}({sdesc})" if scheme is not None else "")
    fig = plot_panels([Panel(title, "ε", "δ(ε)", curves, yscale="log", legend="lower left")],
                      panel_size=(8.0, 5.2),
                      footnote=f"{args.accountant} accountant, {outer.value} relation; "
                               + ("shaded: the certified [lower, upper] bracket on the exact "
                                  "δ(ε) of the composition." if args.accountant != "rdp"
                                  else "RDP: an upper bound only."))
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out, "accountant": args.accountant,
                   "mechanism": describe_mechanism(mech), "sampling": samp,
                   "relation": outer.value, "curves": out})
        return 0
    rows = [[f"{c['steps']:,}", num(e), num_up(d),
             "" if c["delta_lower"] is None else num_down(c["delta_lower"][i])]
            for c in out for i, (e, d) in enumerate(zip(c["eps"], c["delta"], strict=True))]
    print(table(["steps", "eps", "delta (upper)", "delta (lower)"], rows))
    print(f"wrote {args.out}")
    return 0
