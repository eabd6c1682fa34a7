"""``privamp experiment bootstrap | linear | logistic | efficiency``: the MUST paper's experiments.

Thin, like the rest of the command line: parse, call :mod:`privamp.reproduce.must2023.experiments`,
format. ::

    privamp experiment bootstrap --scheme must-ow --b 50
    privamp experiment linear --scheme wr --step-epsilon 0.001 --json
    privamp experiment logistic --scheme must-ww     # the Adult data shipped with privamp
    privamp experiment efficiency --draws 10000

Defaults are the paper's parameters; ``--quick`` runs a small version (fewer repeats,
replicates or draws; a count given explicitly wins). With ``--json`` each prints one object
with ``epsilon``, ``delta``, ``sigma``, ``scheme`` and the utility metrics (``rmse`` for
bootstrap and linear, ``accuracy`` and ``auc`` for logistic; the efficiency command prints its
tables). Long runs show a progress bar on stderr, only on a terminal and never with ``--json``.
"""

from __future__ import annotations

import argparse
import sys

from ..display import num, num_down, num_up
from . import SUMMARIES
from ._common import SUBSAMPLINGS, CliError, Parser, Progress, add_json, emit_json, int_in, table

__all__ = ["add_experiment"]

#: Parameter names of these commands -> options, for error messages.
OPTION_NAMES = {
    "repeats": "--repeats",
    "replicates": "--replicates",
    "clip_norm": "--clip",
    "learning_rate": "--learning-rate",
    "step_epsilon": "--step-epsilon",
    "step_delta": "--step-epsilon",
    "target_epsilon": "--target-epsilon",
    "noise_multiplier": "--noise-multiplier",
    "data": "--data",
    "draws": "--draws",
    "bounds": "--bounds",
    "confidence": "--confidence",
    "scheme": "--scheme",
    "steps": "--steps",
    "delta": "--delta",
    "rng": "--seed",
}


def add_experiment(sub) -> None:
    """Add ``privamp experiment`` with its four subcommands."""
    exp = sub.add_parser("experiment", help=SUMMARIES["experiment"])
    exp_sub = exp.add_subparsers(dest="experiment", required=True, parser_class=Parser)

    b = exp_sub.add_parser("bootstrap", help="experiment 1: DP bootstrap of a mean and a "
                                             "variance (Tables 4, 5)")
    _scheme_options(b, n=300, m=30, b=50)
    b.add_argument("--replicates", type=int_in("[2, inf)"), default=None,
                   help="bootstrap subsamples per dataset, >= 2 (default 500; --quick 100)")
    b.add_argument("--repeats", type=int_in("[2, inf)"), default=None,
                   help="simulated datasets, >= 2 (default 200; --quick 20)")
    b.add_argument("--bounds", type=float, nargs=2, default=[-4.0, 4.0], metavar=("L", "U"),
                   help="public bounds the data are clipped to (default -4 4)")
    b.add_argument("--confidence", type=float, default=0.95,
                   help="confidence level of the intervals (default 0.95)")
    _noise_options(b, step_epsilon=0.1)
    b.set_defaults(func=_cmd_bootstrap)

    lin = exp_sub.add_parser("linear", help="experiment 2: DP-SGD linear regression "
                                            "(Algorithm 2, Tables 6, 7)")
    _scheme_options(lin, n=1000, m=100, b=200)
    _sgd_options(lin, steps=200, clip=3.0, lr=0.04, repeats=200, quick=10, least=2)
    _noise_options(lin, step_epsilon=0.01)
    lin.set_defaults(func=_cmd_linear)

    log = exp_sub.add_parser("logistic", help="experiment 3: DP-SGD logistic regression on "
                                              "Adult, label excluded (Table 8)")
    log.add_argument("--data", metavar="PATH", default=None,
                     help="the preprocessed Adult CSV, plain or .gz (default: the copy shipped "
                          "with privamp; e.g. ../shared/data/adult_processed.csv)")
    _scheme_options(log, n=None, m=300, b=500)
    _sgd_options(log, steps=1000, clip=3.0, lr=0.01, repeats=5, quick=1, least=1)
    _noise_options(log, step_epsilon=0.0005)
    log.set_defaults(func=_cmd_logistic)

    eff = exp_sub.add_parser("efficiency", help="Tables 9, 10: distinct records per subsample "
                                                "and sampling time relative to WOR")
    eff.add_argument("--draws", type=int_in("[1, inf)"), default=None,
                     help="subsamples drawn per scheme and setting (default 10000; --quick "
                          "1000)")
    eff.add_argument("--n", type=int_in("[1, inf)"), default=None,
                     help="one setting (n, b, m) instead of the paper's three")
    eff.add_argument("--b", type=int_in("[1, inf)"), default=None,
                     help="MUST stage-I size (with --n, for must-* schemes)")
    eff.add_argument("--m", type=int_in("[1, inf)"), default=None,
                     help="subsample size (with --n)")
    eff.add_argument("--schemes", nargs="+", choices=SUBSAMPLINGS, default=list(SUBSAMPLINGS),
                     help="schemes (default: all six)")
    eff.add_argument("--seed", type=int_in("[0, inf)"), default=0,
                     help="seed of the random generator (>= 0)")
    eff.add_argument("--quick", action="store_true", help="1000 draws (unless --draws)")
    add_json(eff)
    eff.set_defaults(func=_cmd_efficiency)


def _scheme_options(p, *, n, m, b) -> None:
    p.add_argument("--scheme", choices=SUBSAMPLINGS, default="poisson",
                   help="sampling scheme (default poisson, rate m/n)")
    if n is not None:
        p.add_argument("--n", type=int_in("[1, inf)"), default=n,
                       help=f"dataset size (default {n})")
    p.add_argument("--m", type=int_in("[1, inf)"), default=m,
                   help=f"subsample size (default {m})")
    p.add_argument("--b", type=int_in("[1, inf)"), default=None,
                   help=f"MUST stage-I size (must-* schemes; default {b})")
    p.add_argument("--relation", choices=("add-remove", "substitute"), default=None,
                   help="relation on the whole dataset (default: the scheme's natural one)")
    p.add_argument("--seed", type=int_in("[0, inf)"), default=0,
                   help="seed of the random generator (>= 0)")
    p.add_argument("--quick", action="store_true",
                   help="a small version (for CI): fewer repeats (and replicates), unless "
                        "given")
    add_json(p)


def _sgd_options(p, *, steps, clip, lr, repeats, quick, least) -> None:
    p.add_argument("--steps", type=int_in("[1, inf)"), default=steps,
                   help=f"iterations T (default {steps})")
    p.add_argument("--clip", type=float, default=clip, dest="clip_norm",
                   help=f"gradient clipping norm C (default {clip:g})")
    p.add_argument("--learning-rate", type=float, default=lr, dest="learning_rate",
                   help=f"learning rate (default {lr:g})")
    p.add_argument("--repeats", type=int_in(f"[{least}, inf)"), default=None,
                   help=f"independent runs, >= {least} (default {repeats}; --quick {quick})")


def _noise_options(p, *, step_epsilon) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--step-epsilon", type=float, default=None, dest="step_epsilon",
                   help=f"per-step epsilon' after amplification, the paper's protocol "
                        f"(the default, {step_epsilon:g})")
    g.add_argument("--target-epsilon", type=float, default=None, dest="target_epsilon",
                   help="calibrate the noise so that the whole run meets this epsilon")
    g.add_argument("--noise-multiplier", type=float, default=None, dest="noise_multiplier",
                   help="noise standard deviation over the per-copy sensitivity")
    p.add_argument("--delta", type=float, default=None,
                   help="delta of the whole run, and the per-step delta before amplification "
                        "(default 1/n)")


def _size(args, name: str, default: int, quick: int) -> int:
    """``--NAME`` if given, else the ``--quick`` value or the paper's (``default``)."""
    value = getattr(args, name)
    return value if value is not None else (quick if args.quick else default)


def _stage_one(args) -> dict:
    """``b=`` for the experiment functions: only when given (the default is theirs)."""
    return {} if args.b is None else {"b": args.b}


def _noise(args) -> dict:
    return {"step_epsilon": args.step_epsilon, "target_epsilon": args.target_epsilon,
            "noise_multiplier": args.noise_multiplier}


def _sgd(args, repeats: int) -> dict:
    """The DP-SGD arguments of the linear and logistic experiments."""
    return {"steps": args.steps, "clip_norm": args.clip_norm,
            "learning_rate": args.learning_rate, "delta": args.delta, "repeats": repeats,
            "relation": args.relation, "seed": args.seed, **_noise(args)}


def _run(args, fn, *fn_args, **kwargs):
    from ..reproduce.must2023 import experiments

    bar = Progress(not args.json)
    try:
        return getattr(experiments, fn)(*fn_args, progress=bar, **kwargs)
    finally:
        bar.done()


# ---------------------------------------------------------------------------------------------
# text output
# ---------------------------------------------------------------------------------------------


def _privacy_lines(r: dict, what: str) -> list[str]:
    samp = r["sampling"]
    desc = ", ".join(f"{k}={num(v) if isinstance(v, float) else v}"
                     for k, v in samp.items() if k != "scheme")
    lower = "" if r["epsilon_lower"] is None else f" (bracket [{num_down(r['epsilon_lower'])}, " \
                                                  f"{num_up(r['epsilon'])}])"
    lines = [f"sampling: {samp['scheme']}({desc}); relation: {r['relation']} (per-step "
             f"mechanism stated under {r['base_relation']})",
             f"privacy: ({num_up(r['epsilon'])}, {num(r['delta'])})-DP{lower} for the "
             f"{r['steps']} {what}, {r['accountant']} accountant"]
    if r.get("step_epsilon") is not None:
        lines.append(f"per step: eps' = {num(r['step_epsilon'])}, delta'(eps') = "
                     f"{num_up(r['step_delta'])} (exact amplified profile)")
    return lines


def _noise_line(r: dict) -> str:
    return (f"noise: sigma = {num_up(r['sigma'])} on the clipped-gradient sum (per-copy "
            f"sensitivity {num(r['per_copy_sensitivity'])}), "
            f"{num_up(r['sigma_averaged_gradient'])} on the averaged gradient")


def _output(args, r: dict, text) -> int:
    """With ``--json`` the result ``r`` as one JSON object, else the lines ``text(r)``."""
    if args.json:
        emit_json(r)
    else:
        sys.stdout.write("\n".join(text(r)) + "\n")
    return 0


def _report(r: dict, title: str, what: str, noise: str, headers, rows) -> list[str]:
    """An experiment's text: its title, the privacy and noise lines, then the table of results
    (``what``: what the steps are, for the privacy line)."""
    return [title, *_privacy_lines(r, what), noise, "", table(headers, rows)]


def _fmt(x) -> str:
    return "nan" if x != x else f"{x:.4g}"


def _cmd_bootstrap(args: argparse.Namespace) -> int:
    r = _run(args, "bootstrap_experiment", args.scheme, n=args.n, m=args.m, **_stage_one(args),
             replicates=_size(args, "replicates", 500, 100),
             repeats=_size(args, "repeats", 200, 20), delta=args.delta,
             bounds=tuple(args.bounds), relation=args.relation, confidence=args.confidence,
             seed=args.seed, **_noise(args))
    return _output(args, r, _bootstrap_text)


def _bootstrap_text(r: dict) -> list[str]:
    p = r["parameters"]
    rows = []
    for label, est, truth, cov in (
            ("mu (DP)", r["mean"], 0.0, r["coverage_mean"]),
            ("tau^2 (DP)", r["variance"], 1.0, r["coverage_variance"]),
            ("mu (non-private poisson)", r["baseline"]["mean"], 0.0, None),
            ("tau^2 (non-private poisson)", r["baseline"]["variance"], 1.0, None)):
        rows.append([label, num(truth), f"{est['mean']:.4f} ({est['sd']:.3f})",
                     f"{est['bias']:.4f}", f"{est['rmse']:.4f}",
                     "" if cov is None else f"{cov:.3f}"])
    return _report(
        r, f"MUST experiment 1: DP subsampling bootstrap, {p['replicates']} replicates on each "
        f"of {p['repeats']} datasets of n = {p['n']} N(0, 1) values clipped to "
        f"[{num(p['bounds'][0])}, {num(p['bounds'][1])}]",
        "replicates of one dataset",
        f"noise: sigma = {num_up(r['sigma'])} on a replicate's mean, "
        f"{num_up(r['sigma_second_moment'])} on its second moment (noise multiplier "
        f"{num_up(r['noise_multiplier'])})",
        ["estimate", "truth", "mean (SD)", "bias", "RMSE",
         f"{int(round(100 * r['confidence']))}% CI coverage"], rows)


def _cmd_linear(args: argparse.Namespace) -> int:
    r = _run(args, "linear_experiment", args.scheme, n=args.n, **_stage_one(args), m=args.m,
             **_sgd(args, _size(args, "repeats", 200, 10)))
    return _output(args, r, _linear_text)


def _linear_text(r: dict) -> list[str]:
    p = r["parameters"]
    rows = []
    for label, res in (("DP-SGD", r), ("non-private poisson", r["baseline"])):
        c = res["coefficients"]
        rows.append([label, f"{res['rmse']:.4f} ({res['rmse_sd']:.3f})",
                     ", ".join(f"{v:.4f}" for v in c["bias"]),
                     ", ".join(f"{v:.3f}" for v in c["rmse"])])
    return _report(
        r, f"MUST experiment 2: DP-SGD linear regression, {p['repeats']} datasets of "
        f"n = {p['n']}, T = {p['steps']}, C = {num(p['clip_norm'])}, learning rate "
        f"{num(p['learning_rate'])}",
        "steps", _noise_line(r),
        ["run", "RMSE of y (SD)", "bias of beta0..2", "RMSE of beta0..2"], rows)


def _cmd_logistic(args: argparse.Namespace) -> int:
    r = _run(args, "logistic_experiment", args.data, args.scheme, **_stage_one(args), m=args.m,
             **_sgd(args, _size(args, "repeats", 5, 1)))
    return _output(args, r, _logistic_text)


def _logistic_text(r: dict) -> list[str]:
    p = r["parameters"]
    keys = ("accuracy", "auc", "sensitivity", "specificity", "ppv", "npv", "f1")
    rows = [[label] + [_fmt(res[k]) for k in keys]
            for label, res in (("DP-SGD", r), ("non-private poisson", r["baseline"]))]
    return [*_report(
        r, f"MUST experiment 3: DP-SGD logistic regression on Adult ({p['n_train']} train / "
        f"{p['n_test']} test records, {len(p['features'])} features, label excluded), "
        f"T = {p['steps']}, C = {num(p['clip_norm'])}, learning rate "
        f"{num(p['learning_rate'])}, {p['repeats']} run(s)",
        "steps", _noise_line(r), ["run", *keys], rows),
        f"(majority class on the test set: {r['majority_class_accuracy']:.4f}; the "
        "paper's 0.98 kept the label among the features)"]


def _cmd_efficiency(args: argparse.Namespace) -> int:
    settings = None
    if args.n is not None or args.m is not None or args.b is not None:
        must = any(s.startswith("must") for s in args.schemes)
        if args.n is None or args.m is None or (must and args.b is None):
            raise CliError("--n, --m" + (" and --b (for the must-* schemes)" if must else "")
                           + " go together")
        settings = [(args.n, args.b, args.m)]
    r = _run(args, "efficiency_experiment", settings, draws=_size(args, "draws", 10_000, 1000),
             schemes=args.schemes, seed=args.seed)
    return _output(args, r, _efficiency_text)


def _efficiency_text(r: dict) -> list[str]:
    lines = [f"MUST Tables 9 and 10: distinct records per subsample over {r['draws']} draws, "
             "time per draw relative to WOR (paper values in brackets)"]
    for s in r["settings"]:
        lines += ["", f"(n, b, m) = ({s['n']}, {s['b']}, {s['m']})"]
        rows = []
        for kind, row in s["schemes"].items():
            paper = row.get("paper")

            def cell(value, key, paper=paper):
                return str(value) if paper is None else f"{value} [{paper[key]}]"

            pct = row.get("percent_vs_wor")
            rows.append([kind, cell(row["min"], "min"), cell(f"{row['mean']:.2f}", "mean"),
                         cell(row["max"], "max"), f"{row['exact_mean']:.2f}",
                         f"{row['microseconds']:.1f}",
                         "" if pct is None else cell(f"{pct:+.0f}%",
                                                     "percent_vs_wor")])
        lines.append(table(["scheme", "min", "mean", "max", "exact mean", "us/draw",
                            "time vs WOR"], rows))
    if any((s["n"], s["b"], s["m"]) == (1000, 200, 100) for s in r["settings"]):
        lines.append("(the paper's must-ow / must-ww min and mean for (1000, 200, 100) are "
                     "swapped in print: a minimum cannot exceed the mean)")
    return lines
