"""``privamp tradeoff`` and ``privamp plot tradeoff``: attack risk (f-DP) of a composition.

Thin, like the rest of the command line: parse, call :meth:`privamp.Accountant.tradeoff`,
format. ::

    privamp tradeoff --mechanism gaussian --sigma 1.7320508 --steps 3 --fpr 0.01 0.1 --json
    privamp plot tradeoff --mechanism gaussian --sigma 1 --n 60000 --m 600 --steps 1000 \\
        --out tradeoff.png

``--json`` prints ``{"points": [{"fpr", "tpr", "tpr_lower"}, ...], "mu", "mu_lower",
"advantage", "advantage_lower", "fpr_min", ...}``: ``tpr`` is a certified upper bound on the
true-positive rate of the best membership-inference attack at that false-positive rate,
``tpr_lower`` a certified lower bound on the same quantity.
"""

from __future__ import annotations

import argparse

import numpy as np

from .._validation import check_real
from ..display import num, num_down, num_up
from ..errors import UnsupportedCombinationError
from . import SUMMARIES
from . import _common as options
from ._common import (
    SAMPLINGS,
    Progress,
    build_event,
    build_mechanism,
    composition_group_privacy,
    describe_mechanism,
    describe_scheme,
    emit_json,
    int_in,
    relation_text,
    scheme_text,
    short_description,
    stage_one_size,
    table,
)

__all__ = ["add_plot_tradeoff", "add_tradeoff"]

#: Python parameter names -> options, for error messages
OPTION_NAMES = {"fpr": "--fpr", "fpr_min": "--fpr-min", "steps": "--steps",
                "grid_step": "--grid-step"}


def _add_risk_options(p, *, fpr_required: bool) -> None:
    p.add_argument("--steps", type=int_in("[1, inf)"), required=True,
                   help="number of composed steps (>= 1)")
    if fpr_required:
        p.add_argument("--fpr", type=float, nargs="+", required=True,
                       help="false-positive rate(s) of the attack, in (0, 1)")
    p.add_argument("--fpr-min", type=float, default=1e-6, dest="fpr_min",
                   help="mu-GDP value over the tests whose two error rates (FPR and FNR) "
                        "are both at least this (default 1e-6)")
    p.add_argument("--accountant", choices=("pld", "rdp"), default="pld",
                   help="pld (default; certified bracket) or rdp (upper bound only)")
    p.add_argument("--grid-step", type=float, default=None, dest="grid_step",
                   help="pld: fixed privacy-loss grid spacing instead of the automatic one")


def add_tradeoff(sub) -> None:
    """Add ``privamp tradeoff``."""
    p = sub.add_parser("tradeoff", help=SUMMARIES["tradeoff"], description=_TRADEOFF_DOC)
    options.add_mechanism_options(p)
    options.add_sampling_options(p)
    _add_risk_options(p, fpr_required=True)
    options.add_json(p)
    p.set_defaults(func=_cmd_tradeoff)


_TRADEOFF_DOC = """\
Attack risk of a composition: certified brackets on the true-positive rate of the best
membership-inference attack at each false-positive rate (--fpr), the attack advantage
max(TPR - FPR) = delta(0), and the mu of Gaussian DP that the trade-off curve satisfies on
the tests whose two error rates are both at least --fpr-min. Upper ends are rounded up and
lower ends down in the text; the JSON has the exact floats. The curve is that of the
composition's privacy profile (Dong, Roth, Su 2022, Proposition 2.12): symmetric, and exact
for the Gaussian mechanism."""


def _accountant(args, mech, scheme, outer):
    from ..accountant import Accountant

    acc = Accountant(args.accountant, grid_step=args.grid_step)
    return acc.add(mech, args.steps, scheme=scheme,
                   relation=outer if scheme is not None else None,
                   group_privacy=composition_group_privacy(args, groups=True),
                   group_size=args.group_size)


def _cmd_tradeoff(args: argparse.Namespace) -> int:
    fprs = [check_real("fpr", f, "(0, 1)") for f in args.fpr]
    fpr_min = check_real("fpr_min", args.fpr_min, "(0, 0.5)")
    mech, scheme, outer = build_event(args)
    acc = _accountant(args, mech, scheme, outer)
    progress = Progress(not args.json)
    progress.stage("computing the trade-off curve")
    curve = acc.tradeoff(fprs, fpr_min=fpr_min)
    progress.done()
    mu, adv = curve.mu, curve.advantage
    result = {"points": curve.points(), "mu": mu.upper, "mu_lower": mu.lower,
              "fpr_min": fpr_min, "advantage": adv.upper, "advantage_lower": adv.lower,
              "accountant": args.accountant, "certified": acc.certified,
              "lower_end_of": acc.lower_end_of,
              "mechanism": describe_mechanism(mech), "sampling": describe_scheme(scheme),
              "relation": outer.value, "steps": acc.steps, "group_size": acc.group_size,
              "details": curve.details}
    if args.json:
        emit_json(result)
        return 0
    samp = result["sampling"]
    sdesc = ", ".join(f"{k}={v}" for k, v in samp.items() if k != "scheme")
    where = ("the whole dataset" if scheme is None else
             f"{samp['scheme']}{'(' + sdesc + ')' if sdesc else ''} subsamples")
    group = (f", groups of {acc.group_size} records ({acc.group_bound} group bound)"
             if acc.group_size != 1 else "")
    print(f"{args.steps} steps of {short_description(mech)} on {where}, {outer.value} "
          f"relation{group}, {args.accountant} accountant")

    def low(v):
        return "none (upper bound only)" if v is None else num_down(v)

    rows = [[num(p["fpr"]), num_up(p["tpr"]), low(p["tpr_lower"]),
             num_up(max(p["tpr"] - p["fpr"], 0.0))] for p in result["points"]]
    print(table(["FPR", "TPR of the best attack (upper)", "lower end", "TPR - FPR (upper)"],
                rows))
    print(f"attack advantage max(TPR - FPR) = delta(0): {num_up(adv.upper)} "
          f"(lower end {low(adv.lower)})")
    print(f"mu-GDP (tests with both error rates >= {num(fpr_min)}): {num_up(mu.upper)} "
          f"(lower end {low(mu.lower)})")
    return 0


# ---- plot -----------------------------------------------------------------------------------


def add_plot_tradeoff(plot_sub) -> None:
    """Add ``privamp plot tradeoff``."""
    pt = plot_sub.add_parser(
        "tradeoff", help="trade-off curves (attack FNR against FPR) of several sampling "
                         "schemes at equal noise, with the random-guessing diagonal",
        description=_PLOT_DOC)
    options.add_mechanism_options(pt)
    options.add_size_options(pt)
    pt.add_argument("--steps", type=int_in("[1, inf)"), required=True,
                    help="number of composed steps (>= 1)")
    pt.add_argument("--schemes", nargs="+", default=["poisson", "wor"], choices=SAMPLINGS[1:],
                    help="sampling schemes (default poisson wor)")
    pt.add_argument("--points", type=int_in("[8, 2000]"), default=200,
                    help="false-positive rates per curve (default 200)")
    options.add_plot_outputs(pt)
    pt.set_defaults(func=_cmd_plot_tradeoff)


_PLOT_DOC = """\
Trade-off curves of a composition: the smallest false-negative rate an attacker can reach at
each false-positive rate (left, linear axes) and the same as TPR against FPR on log axes
(right, where low-FPR attacks show), for each sampling scheme at equal noise and batch size
(Poisson at rate m/n, the others at size m), as in plot composition: a clipped sum with
sensitivity C (--sensitivity) under add/remove and 2C under substitution. The diagonal is random
guessing (perfect privacy). Bands are certified brackets (FNR: the lower edge is the
guarantee)."""


def _cmd_plot_tradeoff(args: argparse.Namespace) -> int:
    from ..accountant import Accountant
    from ..applications.privacy import resolve_relations
    from ..plots import Curve, Panel, plot_panels, save_figure
    from ..relations import clipped_sum_sensitivity
    from ..sampling import SCHEMES

    b = stage_one_size(args)
    built = {name: SCHEMES[name].at_size(args.n, args.m, b) for name in args.schemes}
    half = args.points // 2
    fpr = np.unique(np.concatenate([np.geomspace(1e-5, 0.05, half),
                                    np.linspace(0.05, 0.999, args.points - half)]))
    progress = Progress(not args.json)
    left, right, out = [], [], []
    for name, scheme in built.items():
        outer, base = resolve_relations(scheme, args.relation)
        per_step = argparse.Namespace(**vars(args))
        if args.mechanism != "randomized-response":
            per_step.sensitivity = clipped_sum_sensitivity(args.sensitivity, base)
        mech = build_mechanism(per_step, base)
        progress.stage(f"{name}: trade-off curve")
        try:
            acc = Accountant("pld").add(mech, args.steps, scheme=scheme, relation=outer)
            curve = acc.tradeoff(fpr, fpr_min=1e-5)
        except UnsupportedCombinationError:
            raise
        sens = f", Δ = {num(mech.sensitivity)}" if hasattr(mech, "sensitivity") else ""
        label = (f"{scheme_text(scheme)} ({relation_text(outer)}{sens})\n"
                 f"μ ≤ {num_up(curve.mu.upper)}, "
                 f"adv ≤ {num_up(curve.advantage.upper)}")
        low = curve.tpr_lower
        left.append(Curve(label, fpr, 1.0 - curve.tpr, lower=1.0 - curve.tpr,
                          upper=None if low is None else 1.0 - low, group=name))
        right.append(Curve(label, fpr, curve.tpr, lower=low, upper=curve.tpr, group=name))
        out.append({"scheme": name, "relation": outer.value, "sampling":
                    describe_scheme(scheme), "mechanism": describe_mechanism(mech),
                    "points": curve.points(), "mu": curve.mu.upper,
                    "mu_lower": curve.mu.lower, "advantage": curve.advantage.upper,
                    "advantage_lower": curve.advantage.lower})
    progress.done()
    diag = Curve("random guessing (perfect privacy)", fpr, 1.0 - fpr, style=":",
                 color="0.5", linewidth=1.2)
    diag_roc = Curve("random guessing (perfect privacy)", fpr, fpr, style=":", color="0.5",
                     linewidth=1.2)
    noise = {"gaussian": f"Gaussian σ = {num(args.sigma or 0.0)}",
             "laplace": f"Laplace b = {num(args.scale or 0.0)}"}.get(args.mechanism,
                                                                 args.mechanism)
    params = (f"{noise}, clip C = {num(args.sensitivity or 1.0)}, "
              f"n = {args.n:,}, m = {args.m:,}, {args.steps:,} steps")
    # every curve lies below the diagonal on the left (upper right is empty) and above it on
    # the right (lower right is empty): the legends go there, never over data
    fig = plot_panels(
        [Panel("Trade-off curve (smaller FNR: stronger attack)", "FPR α",
               "smallest FNR β = f(α)", [*left, diag], xlim=(0, 1), ylim=(0, 1),
               legend="upper right"),
         Panel("Best attack at low FPR", "FPR", "TPR", [*right, diag_roc], xscale="log",
               yscale="log", legend="lower right")],
        ncols=2, panel_size=(6.4, 5.4), suptitle=f"Attack risk: {params}",
        footnote="Certified from each composition's privacy profile (Dong, Roth, Su 2022, "
                 "Prop. 2.12); bands: [lower, upper] brackets (the FNR's lower edge and the "
                 "TPR's upper edge are the guarantees). μ: Gaussian-DP value over the tests "
                 "with both error rates ≥ 1e-5; adv: attack advantage max(TPR − FPR) = "
                 "δ(0).")
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out, "steps": args.steps, "curves": out})
        return 0
    rows = [[c["scheme"], c["relation"], num_up(c["mu"]), num_up(c["advantage"])]
            for c in out]
    print(table(["scheme", "relation", "mu-GDP (upper)", "advantage (upper)"], rows))
    print(f"wrote {args.out}")
    return 0
