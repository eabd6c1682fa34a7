"""``privamp epsilon``, ``privamp delta``, ``privamp calibrate``, ``privamp plot composition`` and
``privamp plot delta``.

Thin, like the rest of the command line: parse, call :class:`privamp.accountant.Accountant` or
:mod:`privamp.calibrate`, format. ::

    privamp epsilon --mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 \\
        --steps 1000 --delta 1e-5
    privamp epsilon --mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 \\
        --steps 1000 --delta 1e-5 --budget 3
    privamp delta --mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 \\
        --steps 1000 --epsilon 1 --json
    privamp calibrate --mechanism gaussian --target-epsilon 2 --delta 1e-5 \\
        --sampling poisson --rate 0.01 --steps 1000
    privamp plot composition --mechanism gaussian --sigma 1 --n 10000 --m 100 --b 5000 \\
        --max-steps 10000 --out composition.png
    privamp plot delta --mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 \\
        --steps 100 1000 --out d.png

JSON objects: ``{"epsilon": upper, "epsilon_lower": lower_or_null, "accountant": name, ...}``,
``{"delta": upper, "delta_lower": lower_or_null, ...}``, ``{"<parameter>": value, "epsilon":
achieved, ...}``. ``plot delta`` draws δ(ε) of ``--steps`` compositions over a grid of ε, with
the certified ``[lower, upper]`` band of :meth:`privamp.accountant.Accountant.delta`. On a
terminal (and not with ``--json``) long computations show their progress on stderr.
"""

from __future__ import annotations

import argparse

import numpy as np

from .._validation import check_real
from ..display import num, num_down, num_up
from ..errors import UnsupportedCombinationError
from ..mechanisms import noise_mechanisms
from ..relations import NeighbouringRelation
from . import SUMMARIES
from . import _common as options
from ._common import (
    SAMPLINGS,
    CliError,
    Progress,
    build_event,
    build_mechanism,
    build_scheme,
    composition_group_privacy,
    describe_mechanism,
    describe_scheme,
    emit_json,
    eps_grid,
    int_in,
    relation_text,
    scheme_text,
    short_description,
    stage_one_size,
    table,
)

__all__ = ["add_calibrate", "add_delta", "add_epsilon", "add_plot_composition", "add_plot_delta"]

_ACCOUNTANTS = ("pld", "rdp", "fourier")
#: what --calibrate solves for: a mechanism's noise, the Poisson rate, the steps, a MUST size
_CALIBRATED = (*noise_mechanisms(), "rate", "steps", "b", "m")


#: Parameter names of these commands -> options, for error messages.
OPTION_NAMES = {
    "steps": "--steps",
    "delta": "--delta",
    "eps": "--epsilon",
    "target_epsilon": "--target-epsilon",
    "tpr": "--target-tpr",
    "advantage": "--target-advantage",
    "fpr": "--fpr",
    "eps_error": "--eps-error",
    "delta_error": "--delta-error",
    "grid_step": "--grid-step",
    "max_steps": "--max-steps",
    "backend": "--accountant",
    "count": "--steps",
    "budget_epsilon": "--budget",
    "budget_delta": "--delta",
}


def add_epsilon(sub) -> None:
    """Add ``privamp epsilon``."""
    _add_query(sub, "epsilon", SUMMARIES["epsilon"])


def add_delta(sub) -> None:
    """Add ``privamp delta``."""
    _add_query(sub, "delta", SUMMARIES["delta"])


def _add_query(sub, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text)
    options.add_mechanism_options(p)
    options.add_sampling_options(p)
    p.add_argument("--steps", type=int_in("[1, inf)"), required=True,
                   help="number of composed steps (>= 1)")
    if name == "epsilon":
        p.add_argument("--delta", type=float, nargs="+", required=True,
                       help="target delta(s) in (0, 1); several share one composition "
                            "(JSON: lists)")
        p.add_argument("--eps-error", type=float, default=None, dest="eps_error",
                       help="pld: target width of the epsilon bracket (default 0.1%% of "
                            "epsilon)")
        p.add_argument("--budget", type=float, default=None, dest="budget",
                       help="a privacy budget epsilon (> 0) at --delta: also report the "
                            "epsilon left and how many more steps of this kind fit "
                            "(privamp.filter.PrivacyFilter; T_max = --steps + steps left)")
    else:
        p.add_argument("--epsilon", type=float, nargs="+", required=True, dest="eps",
                       help="epsilon(s) (>= 0); several are read from one composition per "
                            "side (JSON: lists)")
        p.add_argument("--delta-error", type=float, default=None, dest="delta_error",
                       help="pld: target relative width of the delta bracket (default "
                            "1e-3)")
    _add_accountant_options(p)
    p.set_defaults(func=_cmd_epsilon if name == "epsilon" else _cmd_delta)


def add_calibrate(sub) -> None:
    """Add ``privamp calibrate``."""
    c = sub.add_parser("calibrate", help=SUMMARIES["calibrate"])
    options.add_mechanism_options(c)
    options.add_sampling_options(c)
    c.add_argument("--target-epsilon", type=float, default=None, dest="target_epsilon",
                   help="target epsilon (> 0), with --delta")
    c.add_argument("--delta", type=float, default=None, help="delta in (0, 1)")
    c.add_argument("--target-tpr", type=float, default=None, dest="target_tpr",
                   help="instead of an epsilon: the largest true-positive rate of the best "
                        "membership-inference attack at false-positive rate --fpr (noise "
                        "only)")
    c.add_argument("--fpr", type=float, default=None,
                   help="false-positive rate of --target-tpr, in (0, 1)")
    c.add_argument("--target-advantage", type=float, default=None, dest="target_advantage",
                   help="instead of an epsilon: the largest attack advantage max(TPR - FPR) "
                        "= delta(0), in (0, 1) (noise only)")
    c.add_argument("--steps", type=int_in("[1, inf)"), default=None,
                   help="number of steps (required unless --calibrate steps)")
    c.add_argument("--calibrate", choices=_CALIBRATED, default=None,
                   help="the parameter to calibrate (default: the noise, --sigma or --scale, "
                        "of the mechanism)")
    c.add_argument("--max-steps", type=int_in("[1, inf)"), default=None, dest="max_steps",
                   help="largest number of steps considered by --calibrate steps (default "
                        "10^9)")
    _add_accountant_options(c)
    c.set_defaults(func=_cmd_calibrate)


def add_plot_composition(plot_sub) -> None:
    """Add ``privamp plot composition``."""
    pc = plot_sub.add_parser("composition",
                             help="epsilon against the number of steps for several sampling "
                                  "schemes and accountants (DP-SGD: the same noise on a "
                                  "clipped sum for every scheme)",
                             description=_COMPOSITION_DOC)
    options.add_mechanism_options(pc)
    for action in pc._actions:  # the option's meaning in this command: the clip norm C
        if action.dest == "sensitivity":
            action.help = ("clip norm C of each record's contribution to the released sum "
                           "(default 1): sensitivity C under add/remove (Poisson), 2C under "
                           "substitution (WOR, WR, MUST); --sigma is the same noise for every "
                           "scheme, noise multiplier z = sigma/C")
    options.add_size_options(pc)
    pc.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5)")
    pc.add_argument("--max-steps", type=int_in("[2, 1e15]"), default=10_000, dest="max_steps",
                    help="largest number of steps, up to 10^15 (default 10000)")
    pc.add_argument("--points", type=int_in("[2, 1000]"), default=8,
                    help="step counts per curve, 2 to 1000 (default 8)")
    pc.add_argument("--schemes", nargs="+", default=["poisson", "wor", "wr", "must-ow"],
                    choices=SAMPLINGS[1:],
                    help="sampling schemes (default poisson wor wr must-ow)")
    pc.add_argument("--accountants", nargs="+", default=["pld", "rdp"],
                    choices=("pld", "rdp"), help="accountants (default pld rdp)")
    options.add_plot_outputs(pc)
    pc.set_defaults(func=_cmd_plot_composition)


def add_plot_delta(plot_sub) -> None:
    """Add ``privamp plot delta``."""
    pd = plot_sub.add_parser("delta", help="delta(eps) of a composition with its certified "
                                           "band")
    options.add_mechanism_options(pd)
    options.add_sampling_options(pd)
    pd.add_argument("--steps", type=int_in("[1, inf)"), nargs="+", required=True,
                    help="number(s) of composed steps; one curve each")
    options.add_eps_grid_options(pd, 0.0, 5.0, 12, what="epsilon", points_help="epsilon values")
    pd.add_argument("--accountant", choices=("pld", "rdp", "fourier"), default="pld",
                    help="pld (default; certified band), rdp (upper bound only) or fourier")
    pd.add_argument("--delta-error", type=float, default=None, dest="delta_error",
                    help="pld: target relative width of each bracket (default 1e-3)")
    options.add_plot_outputs(pd)
    pd.set_defaults(func=_cmd_plot_delta)


def _add_accountant_options(p) -> None:
    p.add_argument("--accountant", choices=_ACCOUNTANTS, default="pld",
                   help="pld (default; certified bracket), rdp (upper bound only) or fourier "
                        "(Koskela et al., for comparison)")
    p.add_argument("--grid-step", type=float, default=None, dest="grid_step",
                   help="pld: fixed privacy-loss grid spacing instead of the automatic one")
    options.add_json(p)


def _accountant(args, mech, scheme, outer, steps):
    from ..accountant import Accountant

    acc = Accountant(args.accountant, eps_error=getattr(args, "eps_error", None),
                     delta_error=getattr(args, "delta_error", None), grid_step=args.grid_step)
    return acc.add(mech, steps, scheme=scheme, relation=outer if scheme is not None else None,
                   group_privacy=composition_group_privacy(args, groups=True),
                   group_size=args.group_size)


def _common(args, mech, scheme, outer, acc) -> dict:
    out = {"accountant": args.accountant, "certified": acc.certified,
           "lower_end_of": acc.lower_end_of}
    if getattr(scheme, "pld_only", False):
        out["accounted"] = scheme.describe_accounting()
    if acc.group_size != 1:
        from ..pld.group import tight_limit_note

        out["group_size"] = acc.group_size
        out["group_bound"] = acc.group_bound
        reason = tight_limit_note(acc.events, acc.group_size)
        if reason is not None:
            out["group_bound_reason"] = reason
    return {**out,
            "mechanism": describe_mechanism(mech),
            "sampling": describe_scheme(scheme), "relation": outer.value, "steps": acc.steps,
            "details": acc.details}


def _describe_line(result: dict) -> str:
    mech = result["mechanism"]
    desc = ", ".join(f"{k}={num(v) if isinstance(v, float) else v}"
                     for k, v in mech.items() if k not in ("name", "relation"))
    samp = result["sampling"]
    sdesc = ", ".join(f"{k}={v}" for k, v in samp.items() if k != "scheme")
    return (f"{result['steps']} steps of the {mech['name']} mechanism ({desc}) on "
            f"{samp['scheme']}{'(' + sdesc + ')' if sdesc else ''} subsamples, "
            f"{result['relation']} relation, {result['accountant']} accountant")


def _query(args: argparse.Namespace, answer: str, given: str, values: list[float]) -> int:
    """``privamp epsilon`` (``answer="epsilon"``, at ``given="delta"``) or ``privamp delta``:
    the certified bracket of the composition at each of ``values``, as JSON or a table. One
    value: scalars in the JSON; several: lists, computed by the vector queries
    (:meth:`Accountant.epsilons` / :meth:`Accountant.deltas`), which share compositions."""
    if getattr(args, "budget", None) is not None and len(values) > 1:
        raise CliError("--budget is read at one --delta; got several")
    if getattr(args, "budget", None) is not None and getattr(args, "group_size", 1) != 1:
        raise CliError("--budget counts steps for single records; it does not take "
                       "--group-size")
    check = "(0, 1)" if answer == "epsilon" else "[0, inf)"
    values = [check_real(given if answer == "epsilon" else "eps", v, check) for v in values]
    mech, scheme, outer = build_event(args)
    acc = _accountant(args, mech, scheme, outer, args.steps)
    progress = Progress(not args.json)
    progress.stage(f"computing {answer}")
    if len(values) == 1:
        brackets = [acc.epsilon(values[0]) if answer == "epsilon" else acc.delta(values[0])]
    else:
        brackets = acc.epsilons(values) if answer == "epsilon" else acc.deltas(values)
    progress.done()
    if len(values) == 1:
        result = {answer: brackets[0].upper, f"{answer}_lower": brackets[0].lower,
                  given: values[0]}
    else:
        result = {answer: [b.upper for b in brackets],
                  f"{answer}_lower": [b.lower for b in brackets], given: values}
    result = {**result, **_common(args, mech, scheme, outer, acc)}
    budget = getattr(args, "budget", None)
    if budget is not None:
        result["budget"] = _budget(args, values[0], acc, mech, scheme, outer, progress)
    if args.json:
        emit_json(result)
        return 0
    print(_describe_line(result))
    # certified ends rounded outward in the text (the JSON has the exact floats)
    note = acc.details.get("lower_note")
    kind = "certified upper" if acc.certified else "estimate, not proved"
    print(table([given, f"{answer} ({kind})", "lower end of bracket"],
                [[num(v), num_up(b.upper),
                  "none (upper bound only)" if b.lower is None else num_down(b.lower)]
                 for v, b in zip(values, brackets, strict=True)]))
    bracket = brackets[-1]
    if getattr(scheme, "pld_only", False):
        print(f"accounted: {scheme.describe_accounting()}")
    if budget is not None:
        b = result["budget"]
        head = f"budget epsilon {num(b['epsilon'])} at delta {num(b['delta'])}: "
        if b["steps_left_capped"]:
            print(head + f"at least {b['steps_left']} more steps of this kind fit (the search "
                  f"stops there; certified epsilon spent {num_up(b['epsilon_spent'])}, left "
                  f"{num_down(b['epsilon_left'])})")
        elif b["t_max"] is None:
            print(head + f"already exceeded (certified epsilon spent "
                  f"{num_up(b['epsilon_spent'])}); no more steps fit")
        else:
            print(head + f"{b['steps_left']} more steps of this kind fit, T_max = "
                  f"{b['t_max']} (certified epsilon spent {num_up(b['epsilon_spent'])}, left "
                  f"{num_down(b['epsilon_left'])}; the filter assumes the steps are fixed in "
                  "advance, not chosen from released outputs)")
    if acc.group_size != 1:
        from ..pld.group import tight_limit_note

        reason = tight_limit_note(acc.events, acc.group_size)
        print(f"groups of {acc.group_size} records: {_GROUP_BOUND_NOTE[acc.group_bound]}"
              + ("" if reason is None else f"; {reason}"))
    if note:
        print(note)
    elif acc.details.get("lower_from") == "realizable pairs of datasets":
        print("(the lower end is that of a pair of datasets and a query within the mechanism's "
              "sensitivity: the group's exact value lies in the bracket)")
    elif acc.details.get("lower_from"):
        print("(the lower end is the best known lower bound on the mechanism's epsilon: no "
              "amplification upper bound is known for this sampler)")
    elif bracket.lower is not None and acc.lower_end_of == "bound":
        print("(the lower end is that of composing the amplification theorem's bound; the "
              "mechanism's own epsilon may be lower)")
    return 0


def _budget(args, delta, acc, mech, scheme, outer, progress) -> dict:
    """What ``--budget`` adds to ``privamp epsilon``: the filter's certified ε spent (on its
    own grid, relative to the budget), the ε left and T_max (:class:`PrivacyFilter`)."""
    from ..filter import PrivacyFilter

    progress.stage("searching the steps left in the budget")
    f = PrivacyFilter(args.budget, delta, accountant=acc)
    left = f.steps_left(mech, scheme=scheme, relation=outer if scheme is not None else None,
                        group_privacy=composition_group_privacy(args))
    spent = f.budget_left()
    progress.done()
    # the search stops at the filter's max_steps: then more steps may fit, and steps_left is
    # only a lower bound on them (t_max is then unknown: null)
    capped = left >= f.max_steps
    return {"epsilon": f.budget_epsilon, "delta": f.budget_delta,
            "epsilon_spent": spent.epsilon_spent, "epsilon_left": spent.epsilon_left,
            "steps_left": left, "steps_left_capped": capped,
            # the largest total count within the budget; unknown (null) when the --steps
            # given already exceed it, or when the search stopped at its cap
            "t_max": acc.steps + left if spent.epsilon_left >= 0 and not capped else None,
            "adaptive": False}


_GROUP_BOUND_NOTE = {
    "tight": "tight group bound (the exact pairs of a group of records: the split pairs of "
             "the Gaussian (Schuchardt et al. 2024) and the Laplace mechanism under Poisson, "
             "the mechanism's own group profile without sampling)",
    "coupling": "coupling group bound (the subsamples coupled draw by draw, the group's hit "
                "count with the mechanism's group profiles, BBG Theorem 8, and for the "
                "Gaussian and Laplace under WOR/WR the relaxed double mixture, the smaller; "
                "valid, not "
                "known to be tight)",
    "post-hoc": "post-hoc group bound (Vadhan's lemma applied to the amplified profile of one "
                "record at each step, or once to the composed one-record guarantee, whichever "
                "is smaller: valid, not tight)",
}


def _cmd_epsilon(args: argparse.Namespace) -> int:
    return _query(args, "epsilon", "delta", args.delta)


def _cmd_delta(args: argparse.Namespace) -> int:
    return _query(args, "delta", "epsilon", args.eps)


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from .. import calibrate as cal
    from ..mechanisms import REGISTRY, noise_mechanisms

    noises = noise_mechanisms()
    parameter = args.calibrate or REGISTRY[args.mechanism].noise
    risk = args.target_tpr is not None or args.target_advantage is not None
    given = [name for name, v in (("--target-epsilon", args.target_epsilon),
                                  ("--target-tpr", args.target_tpr),
                                  ("--target-advantage", args.target_advantage))
             if v is not None]
    if len(given) != 1:
        raise CliError("give exactly one target: --target-epsilon (with --delta), --target-tpr "
                       "(with --fpr) or --target-advantage" + (f"; got {' and '.join(given)}"
                                                                 if given else ""))
    if not risk and args.delta is None:
        raise CliError("--delta is required with --target-epsilon")
    if risk and args.delta is not None:
        raise CliError(f"--delta does not apply to {given[0]} (an attack-risk target)")
    if args.fpr is not None and args.target_tpr is None:
        raise CliError("--fpr applies only to --target-tpr")
    if args.target_tpr is not None and args.fpr is None:
        raise CliError("--fpr is required with --target-tpr")
    if parameter is None:
        raise CliError(f"--mechanism {args.mechanism} has no noise to calibrate: give "
                       "--calibrate rate, steps, b or m")
    if risk:
        return _calibrate_risk(args, parameter, noises)
    if parameter in noises:
        wanted = noises[parameter]
        if args.mechanism != wanted:
            raise CliError(f"--calibrate {parameter} needs --mechanism {wanted}")
    if parameter != "steps" and args.steps is None:
        raise CliError("--steps is required unless --calibrate steps")
    composition_group_privacy(args, groups=True)
    if args.group_size != 1 and args.accountant != "pld":
        raise CliError(f"--group-size is accounted by the pld accountant only, not "
                       f"--accountant {args.accountant}")
    k = args.group_size
    natural = {"rate": "add-remove", "b": "substitute", "m": "substitute"}.get(parameter)
    if natural is not None and args.relation not in (None, natural):
        raise CliError(f"--calibrate {parameter} is analysed under --relation {natural} only, "
                       f"not {args.relation}")
    # the scheme is built from its sizes, except the one calibrated (which is not given)
    scheme = build_scheme(args) if parameter in (*noises, "steps") else None
    progress = Progress(not args.json)
    if parameter in noises:
        progress.stage(f"calibrating {parameter}")
        res = cal.calibrate_sigma(args.target_epsilon, args.delta, steps=args.steps,
                                  scheme=scheme, sensitivity=args.sensitivity,
                                  relation=args.relation, mechanism=args.mechanism,
                                  backend=args.accountant, group_size=k)
        mech_desc = {"name": args.mechanism, "sensitivity": args.sensitivity}
    elif parameter == "rate":
        if args.sampling not in ("none", "poisson"):
            raise CliError(f"--calibrate rate needs --sampling poisson (or none), not "
                           f"--sampling {args.sampling}")
        mech, _, _ = build_event(args, scheme=_poisson_placeholder())
        progress.stage("calibrating the sampling rate")
        res = cal.calibrate_rate(args.target_epsilon, args.delta, steps=args.steps,
                                 mechanism=mech, backend=args.accountant, group_size=k)
        mech_desc = describe_mechanism(mech)
    elif parameter == "steps":
        mech, scheme, outer = build_event(args, scheme=scheme)
        progress.stage("calibrating the number of steps")
        res = cal.calibrate_steps(args.target_epsilon, args.delta, mechanism=mech,
                                  scheme=scheme, relation=outer if scheme is not None else None,
                                  max_steps=10**9 if args.max_steps is None else args.max_steps,
                                  backend=args.accountant, group_size=k)
        mech_desc = describe_mechanism(mech)
    else:
        from ..sampling import SCHEMES

        staged = [kind for kind in SAMPLINGS[1:] if "b" in SCHEMES[kind].reads()]
        if args.sampling not in staged:
            raise CliError(f"--calibrate {parameter} needs --sampling {'|'.join(staged)}")
        if args.n is None:
            raise CliError(f"--n is required with --sampling {args.sampling}")
        other = "m" if parameter == "b" else "b"
        if getattr(args, other) is None:
            raise CliError(f"--{other} is required with --calibrate {parameter}")
        mech = build_mechanism(args, NeighbouringRelation.SUBSTITUTE)
        progress.stage(f"calibrating {parameter}")
        res = cal.calibrate_must(args.target_epsilon, args.delta, steps=args.steps,
                                 mechanism=mech, n=args.n, kind=args.sampling[-2:],
                                 **{other: getattr(args, other)}, backend=args.accountant,
                                 group_size=k)
        mech_desc = describe_mechanism(mech)
    progress.done()
    result = {res.parameter: res.value, "epsilon": res.epsilon,
              "epsilon_lower": res.epsilon_lower, "parameter": res.parameter,
              "target_epsilon": res.target_epsilon, "delta": res.delta,
              "accountant": res.backend, "evaluations": res.evaluations,
              "mechanism": mech_desc, "sampling": describe_scheme(scheme),
              "steps": res.value if res.parameter == "steps" else args.steps}
    if k != 1:
        result["group_size"] = k
    if args.json:
        emit_json(result)
        return 0
    # the calibrated value in full (a rounded σ could be less private than the certified one)
    value = str(int(res.value)) if float(res.value).is_integer() else repr(float(res.value))
    print(f"Calibrated {res.parameter} = {value}: certified epsilon "
          f"{num_up(res.epsilon)} <= target {num(res.target_epsilon)} at delta "
          f"{num(res.delta)} ({res.backend} accountant, {res.evaluations} evaluations)"
          + (f", for groups of {k} records" if k != 1 else ""))
    if res.parameter == "steps" and int(res.value) == args.max_steps:
        print(f"(the --max-steps limit, {args.max_steps}: more steps may meet the target too)")
    return 0


def _calibrate_risk(args: argparse.Namespace, parameter: str, noises: dict) -> int:
    """``privamp calibrate --target-tpr T --fpr F`` or ``--target-advantage A``: the noise."""
    from .. import calibrate as cal

    if parameter not in noises:
        raise CliError(f"--calibrate {parameter} with an attack-risk target is not supported: "
                       "the noise (--sigma or --scale) is calibrated to --target-tpr and "
                       "--target-advantage")
    if args.mechanism != noises[parameter]:
        raise CliError(f"--calibrate {parameter} needs --mechanism {noises[parameter]}")
    if args.steps is None:
        raise CliError("--steps is required with --target-tpr and --target-advantage")
    if args.accountant != "pld":
        raise CliError("attack-risk targets are calibrated with the pld accountant only "
                       f"(certified trade-off curves), not --accountant {args.accountant}")
    composition_group_privacy(args, groups=True)
    scheme = build_scheme(args)
    progress = Progress(not args.json)
    progress.stage(f"calibrating {parameter}")
    res = cal.calibrate_sigma_risk(steps=args.steps, tpr=args.target_tpr, fpr=args.fpr,
                                   advantage=args.target_advantage, scheme=scheme,
                                   sensitivity=args.sensitivity, relation=args.relation,
                                   mechanism=args.mechanism, group_size=args.group_size)
    progress.done()
    result = {res.parameter: res.value, "parameter": res.parameter, "target": res.target,
              f"target_{res.target}": res.target_value, res.target: res.achieved,
              f"{res.target}_lower": res.achieved_lower, "fpr": res.fpr,
              "accountant": "pld", "evaluations": res.evaluations,
              "mechanism": {"name": args.mechanism, "sensitivity": args.sensitivity},
              "sampling": describe_scheme(scheme), "steps": args.steps}
    if args.group_size != 1:
        result["group_size"] = args.group_size
    if args.json:
        emit_json(result)
        return 0
    what = (f"TPR of the best attack at FPR {num(res.fpr)}" if res.target == "tpr"
            else "attack advantage max(TPR - FPR)")
    print(f"Calibrated {res.parameter} = {float(res.value)!r}: certified {what} "
          f"{num_up(res.achieved)} <= target {num(res.target_value)} (pld accountant, "
          f"{res.evaluations} evaluations)"
          + (f", for groups of {args.group_size} records" if args.group_size != 1 else ""))
    return 0


def _poisson_placeholder():
    """A Poisson scheme used only to state the mechanism under the relation Poisson needs."""
    from ..sampling import Poisson

    return Poisson(0.5)


_COMPOSITION_DOC = """\
Certified epsilon against the number of steps, one curve per sampling scheme and accountant, at
equal noise: each step releases a sum of per-record contributions clipped to norm C
(--sensitivity, default 1) plus the same noise (--sigma for gaussian, --scale for laplace), as in
DP-SGD with noise multiplier z = sigma/C. Each scheme is analysed under its natural relation
(--relation overrides it) with the sensitivity of the clipped sum under the relation its
amplification theorem needs (privamp.applications.privacy): C under add/remove (Poisson), 2C
under substitution (WOR, WR, MUST). --json gives, per curve, the relation, base_relation,
sensitivity and sigma used."""


def _cmd_plot_composition(args: argparse.Namespace) -> int:
    from ..accountant import Accountant
    from ..applications.privacy import resolve_relations
    from ..plots import plot_composition, save_figure
    from ..relations import clipped_sum_sensitivity
    from ..sampling import SCHEMES

    check_real("delta", args.delta, "(0, 1)")
    b = stage_one_size(args)
    steps = np.unique(np.geomspace(1, args.max_steps, args.points).round().astype(int))
    # sizes checked before computing
    built = {name: SCHEMES[name].at_size(args.n, args.m, b) for name in args.schemes}
    progress = Progress(not args.json)
    curves = []
    clip = args.sensitivity
    for name, scheme in built.items():
        outer, base = resolve_relations(scheme, args.relation)
        per_step = argparse.Namespace(**vars(args))
        if args.mechanism != "randomized-response":  # a clipped sum: C or 2C
            per_step.sensitivity = clipped_sum_sensitivity(clip, base)
        mech = build_mechanism(per_step, base)
        described = describe_mechanism(mech)
        # shuffling has no amplification upper bound: its band runs from the best known lower
        # bound to the certified upper end
        band = getattr(scheme, "own_lower_bound", False)
        for backend in args.accountants:
            values = []
            lows: list[float] = []
            for t in steps:
                progress.stage(f"{name}, {backend}, {t} steps")
                try:
                    acc = Accountant(backend).add(mech, int(t), scheme=scheme,
                                                  relation=outer)
                    if backend == "pld" and band:
                        b = acc.epsilon(args.delta)
                        values.append(b.upper)
                        lows.append(b.lower)
                        continue
                    values.append(acc.epsilon(args.delta, lower=False).upper
                                  if backend == "pld" else acc.epsilon(args.delta).upper)
                except UnsupportedCombinationError:
                    if backend == "rdp":  # no RDP bound for this scheme: the curve is left out
                        values = None
                        break
                    raise
            if values is not None:
                curve = {"scheme": name, "accountant": backend, "relation": outer.value,
                         "base_relation": base.value, "steps": steps.tolist(),
                         "epsilon": values}
                if lows:
                    curve["epsilon_lower"] = lows
                    curve["lower_is"] = "the best known lower bound (no amplification upper " \
                                        "bound is known)"
                if args.mechanism != "randomized-response":
                    curve["sensitivity"] = mech.sensitivity
                    noise_name = "sigma" if args.mechanism == "gaussian" else "scale"
                    curve[noise_name] = described[noise_name]
                curves.append(curve)
    progress.done()
    for c in curves:
        sens = f", Δ = {num(c['sensitivity'])}" if "sensitivity" in c else ""
        c["label"] = (f"{scheme_text(built[c['scheme']])} ({relation_text(c['relation'])}"
                      f"{sens}), {c['accountant'].upper()}")
    mech_text = {"gaussian": f"Gaussian σ = {num(args.sigma or 0.0)}",
                 "laplace": f"Laplace b = {num(args.scale or 0.0)}"}.get(args.mechanism,
                                                                      args.mechanism)
    noise = {"gaussian": args.sigma, "laplace": args.scale}.get(args.mechanism)
    caption = ""
    if noise is not None:
        by_relation: dict[str, list[str]] = {}
        for c in curves:
            if c["scheme"] not in by_relation.setdefault(c["base_relation"], []):
                by_relation[c["base_relation"]].append(c["scheme"])
        parts = [f"{'C' if rel == 'add-remove' else '2C'} under "
                 f"{'add/remove' if rel == 'add-remove' else 'substitution'} "
                 f"({'/'.join(names)})" for rel, names in by_relation.items()]
        symbol = "σ" if args.mechanism == "gaussian" else "b"
        caption = (f"Equal noise multiplier z = {symbol}/C = {num(noise / clip)} (the same "
                   f"noise {symbol} = {num(noise)} on a sum clipped to C = {num(clip)}), "
                   f"clipped-gradient sum: sensitivity {', '.join(parts)}.")
    banded = [c["scheme"] for c in curves if c.get("lower_is")]
    if banded:
        caption += (f" Shaded ({', '.join(banded)}): from the best known lower bound (Chua et "
                    "al. 2024) to the certified upper end; no amplification upper bound is "
                    "known for shuffled batches.")
    fig = plot_composition(
        curves, delta=args.delta, caption=caption,
        title=f"Composition: {mech_text}, n = {args.n:,}, m = {args.m:,}"
              + (f", b = {b:,}" if any(s.startswith("must") for s in args.schemes) else "")
              + f"; ε at δ = {args.delta:g}")
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out, "delta": args.delta, "clip_norm": clip,
                   "noise_multiplier": None if noise is None else noise / clip,
                   "curves": curves})
    else:
        print(f"wrote {args.out}")
    return 0


def _cmd_plot_delta(args: argparse.Namespace) -> int:
    from ..accountant import Accountant
    from ..plots import Curve, Panel, plot_panels, save_figure

    eps = eps_grid(args, "[0, inf)")
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
    steps_text = ", ".join(f"{t:,}" for t in steps)
    title = (f"δ(ε) after {steps_text} steps: {short_description(mech)},\n"
             f"{scheme_text(scheme)}, {relation_text(outer)}")
    fig = plot_panels([Panel(title, "ε", "δ(ε)", curves, yscale="log", legend="lower left")],
                      panel_size=(8.0, 5.2),
                      footnote=f"{args.accountant} accountant, {relation_text(outer)} relation; "
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
