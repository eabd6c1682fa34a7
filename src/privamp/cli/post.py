"""Command-line commands for amplification by post-processing (BBGG 2019).

* ``privamp mixing``  — coefficients of a finite Markov kernel and Theorem 1's bounds;
* ``privamp iteration`` — per-index (ε, δ) of noisy projected SGD (Theorem 5);
* ``privamp ou`` — the Ornstein–Uhlenbeck mechanism: parameters, RDP, exact ε(δ), MSE vs the
  Gaussian mechanism (Corollary 7, eq. (4), Theorem 8);
* ``privamp plot ou-mse`` — the E_OU/E_GM ratio of Theorem 8 over t and ϵ.

Thin by design: parse, call the library, format (the contract of :mod:`privamp.cli._common`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from .._validation import check_int, check_real
from ..display import num, num_down, num_up
from ..errors import InvalidParameterError
from . import SUMMARIES
from ._common import CliError, add_json, add_plot_outputs, emit_json, int_in, table

__all__ = ["add_iteration", "add_mixing", "add_ou", "add_plot_ou_mse"]

#: Parameter names of these commands -> options, for error messages.
OPTION_NAMES = {
    "kernel": "--kernel",
    "tolerance": "--tolerance",
    "delta": "--delta",
    "n": "--n",
    "index": "--index",
    "step_size": "--step-size",
    "lipschitz": "--lipschitz",
    "smoothness": "--smoothness",
    "strong_convexity": "--strong-convexity",
    "form": "--form",
    "theta": "--theta",
    "rho": "--rho",
    "t": "--t",
    "dimension": "--dimension",
    "radius": "--radius",
    "norm": "--norm",
    "rdp_epsilon": "--rdp-epsilon",
    "orders": "--orders",
    "t_max": "--t-max",
}

_CONDITION_NAMES = {
    "dobrushin": "gamma-Dobrushin (Thm 1(1))",
    "eps_dobrushin": "(gamma, eps~)-Dobrushin (Thm 1(2))",
    "doeblin": "gamma-Doeblin (Thm 1(3))",
    "ultra_mixing": "gamma-ultra-mixing (Thm 1(4))",
}

_DISPLAY_ORDERS = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]


def _say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _theorem8(epsilon: float, sensitivity: float, radius: float, dimension: int):
    """:func:`ou_parameters`, with its ``epsilon`` reported as the ``--rdp-epsilon`` option."""
    from ..amplification.diffusion import ou_parameters
    try:
        return ou_parameters(epsilon, sensitivity, radius, dimension)
    except InvalidParameterError as exc:
        if exc.parameter != "epsilon":
            raise
        raise InvalidParameterError("rdp_epsilon", exc.rule, exc.value,
                                    detail=exc.detail) from exc


# ---------------------------------------------------------------------------------------------
# privamp mixing
# ---------------------------------------------------------------------------------------------


def _cmd_mixing(args: argparse.Namespace) -> int:
    from ..amplification.mixing import MarkovKernel, eps_tilde
    eps = check_real("eps", args.eps, "[0, inf]")
    delta = check_real("delta", args.delta, "[0, 1]")
    kernel = MarkovKernel.from_csv(args.kernel, tolerance=args.tolerance)
    et = float(eps_tilde(eps, delta))
    amplified = kernel.amplify(eps, delta)  # ultra-mixing only when the supports coincide
    result: dict[str, Any] = {
        "dobrushin": kernel.dobrushin,
        "doeblin": kernel.doeblin,
        "ultra_mixing": kernel.ultra_mixing,
        "bounds": {key: {"eps": e, "delta": d} for key, (e, d) in amplified.items()},
        "eps": eps,
        "delta": delta,
        "eps_tilde": et,
        "eps_dobrushin": float(kernel.eps_dobrushin(et)),
        "doeblin_minorant": [float(w) for w in kernel.doeblin_minorant],
        "absolutely_continuous": kernel.absolutely_continuous,
        "kernel": {"path": str(args.kernel), "inputs": kernel.n_inputs,
                   "outputs": kernel.n_outputs},
    }
    if args.json:
        emit_json(result)
        return 0
    _say(f"Markov kernel {args.kernel} ({kernel.n_inputs} inputs x {kernel.n_outputs} "
         "outputs): uniform mixing coefficients (Definition 1, rounded up)")
    rows = [["dobrushin", num_up(result["dobrushin"]), "max TV between rows"],
            ["eps_dobrushin", num_up(result["eps_dobrushin"]),
             f"max hockey-stick at eps~ = {num(et)}"],
            ["doeblin", num_up(result["doeblin"]), "1 - sum of column minima"],
            ["ultra_mixing", num_up(result["ultra_mixing"]),
             "1 - min column min/max" if kernel.absolutely_continuous
             else "rows have different supports: Definition 1(4) fails"]]
    _say(table(["condition", "gamma", "definition"], rows))
    _say()
    _say(f"Theorem 1: K o M for a mechanism M that is ({num(eps)}, {num(delta)})-DP")
    rows = [[_CONDITION_NAMES[k], num_up(v["eps"]), num_up(v["delta"])]
            for k, v in result["bounds"].items()]
    _say(table(["condition", "eps'", "delta'"], rows))
    return 0


# ---------------------------------------------------------------------------------------------
# privamp iteration
# ---------------------------------------------------------------------------------------------


def _default_indices(n: int) -> list[int]:
    return sorted({1, max(1, (n + 1) // 2), max(1, n - 1), n})


def _cmd_iteration(args: argparse.Namespace) -> int:
    from ..amplification.iteration import NoisySgdPrivacy
    delta = check_real("delta", args.delta, "(0, 1)")
    priv = NoisySgdPrivacy(args.n, args.step_size, args.lipschitz, args.smoothness,
                           args.strong_convexity, args.sigma, args.form)
    indices = _default_indices(priv.n) if args.index is None else list(args.index)
    slopes = np.atleast_1d(priv.rdp_slope(np.asarray(indices)))  # validates the indices
    points = []
    for i, slope in zip(indices, slopes, strict=True):
        curve = priv.rdp(int(i))
        eps, order = curve.epsilon(delta, return_order=True, warn=False)
        points.append({"index": int(i), "rdp_slope": float(slope),
                       "epsilon": float(eps), "order": float(order)})
    result = {
        "n": priv.n, "step_size": priv.step_size, "lipschitz": priv.lipschitz,
        "smoothness": priv.smoothness, "strong_convexity": priv.strong_convexity,
        "sigma": priv.sigma, "form": priv.form, "relation": priv.relation.value,
        "contraction": priv.contraction, "delta": delta, "points": points,
    }
    if args.json:
        emit_json(result)
        return 0
    _say("Noisy projected SGD (BBGG Algorithm 1), per-index privacy of the final iterate "
         f"(Theorem 5, form={priv.form})")
    _say(f"n={priv.n}, step size={num(priv.step_size)}, C={num(priv.lipschitz)}, "
         f"beta={num(priv.smoothness)}, rho={num(priv.strong_convexity)}, "
         f"sigma={num(priv.sigma)}; contraction L={num(priv.contraction)}")
    _say("RDP at index i: (order, order * eps_i); (eps, delta) by the optimal RDP conversion")
    rows = [[str(p["index"]), num_up(p["rdp_slope"]), num_up(p["epsilon"]), num(p["order"])]
            for p in points]
    _say(table(["index", "eps_i (RDP slope)", f"eps at delta={num(delta)}", "order"], rows))
    return 0


# ---------------------------------------------------------------------------------------------
# privamp ou
# ---------------------------------------------------------------------------------------------


def _ou_mechanism(args: argparse.Namespace):
    """The mechanism from (--theta, --rho) or from Theorem 8's choice for --rdp-epsilon."""
    from ..amplification.diffusion import OrnsteinUhlenbeckMechanism
    chosen = None
    if args.rdp_epsilon is not None:
        if args.theta is not None or args.rho is not None:
            raise CliError("give either --rdp-epsilon or --theta and --rho")
        if args.radius is None:
            raise CliError("--rdp-epsilon needs --radius (Theorem 8)")
        chosen = _theorem8(args.rdp_epsilon, args.sensitivity, args.radius, args.dimension)
        mech = OrnsteinUhlenbeckMechanism(chosen.theta, chosen.rho, args.t, args.sensitivity)
        return mech, chosen
    if args.theta is None or args.rho is None:
        raise CliError("give --theta and --rho, or --rdp-epsilon")
    return OrnsteinUhlenbeckMechanism(args.theta, args.rho, args.t, args.sensitivity), None


def _cmd_ou(args: argparse.Namespace) -> int:
    from ..amplification.diffusion import (
        ou_gaussian_mse,
        ou_mse,
        ou_mse_ratio,
        post_processed_gaussian_mse,
        theorem8_condition,
    )
    delta = check_real("delta", args.delta, "(0, 1)")
    check_int("dimension", args.dimension, "[1, inf)")
    if args.radius is not None:
        check_real("radius", args.radius, "(0, inf)")
    mech, chosen = _ou_mechanism(args)
    orders = _DISPLAY_ORDERS if args.orders is None else args.orders
    curve = mech.rdp(orders)
    eps_exact = float(mech.profile().epsilon(delta))
    eps_rdp = float(mech.rdp().epsilon(delta, warn=False))
    norm = args.norm if args.norm is not None else args.radius
    result: dict[str, Any] = {
        "theta": mech.theta, "rho": mech.rho, "t": mech.t, "sensitivity": mech.sensitivity,
        "dimension": args.dimension, "radius": args.radius,
        "intrinsic_sensitivity": mech.intrinsic_sensitivity,
        "orders": [float(o) for o in curve.orders], "rdp": [float(e) for e in curve.epsilons],
        "bound": "upper",
        "mean_factor": mech.mean_factor, "noise_sigma": mech.noise_sigma,
        "equivalent_sigma": mech.equivalent_sigma, "gaussian_theta": mech.gaussian_theta,
        "delta": delta, "epsilon": eps_exact, "epsilon_rdp": eps_rdp,
    }
    if norm is not None:
        check_real("norm", norm, "[0, inf)")
        mse = {
            "norm": norm,
            "ou": ou_mse(mech.theta, mech.rho, mech.t, args.dimension, norm),
            "gaussian": ou_gaussian_mse(mech.theta, mech.rho, mech.t, args.dimension),
            "ratio": ou_mse_ratio(mech.theta, mech.rho, mech.t, args.dimension, norm),
        }
        if args.radius is not None:
            mse["post_processed_gaussian"] = post_processed_gaussian_mse(
                mech.equivalent_sigma, args.dimension, args.radius)
        result["mse"] = mse
    if args.radius is not None:
        t8: dict[str, Any] = {"condition": theorem8_condition(mech.theta, mech.rho,
                                                               args.radius, args.dimension)}
        if chosen is not None:
            t8["rdp_epsilon"] = chosen.epsilon
            t8["ratio_bound"] = chosen.ratio_bound
        result["theorem8"] = t8
    if args.json:
        emit_json(result)
        return 0
    src = " (Theorem 8 choice for rdp epsilon " + num(chosen.epsilon) + ")" if chosen else ""
    _say(f"Ornstein-Uhlenbeck mechanism theta={num(mech.theta)}, rho={num(mech.rho)}, "
         f"t={num(mech.t)}{src}")
    _say(f"release e^(-theta t) f(D) + N(0, {num(mech.noise_sigma)}^2 I), "
         f"mean factor {num(mech.mean_factor)}")
    _say(f"intrinsic sensitivity Lambda(t) = {num_up(mech.intrinsic_sensitivity)} "
         f"(Corollary 7, sensitivity {num(mech.sensitivity)}); equivalent Gaussian sigma~ = "
         f"{num_down(mech.equivalent_sigma)}")
    _say(f"(eps, delta): eps = {num_up(eps_exact)} at delta = {num(delta)} (exact Gaussian "
         f"profile; via RDP: {num_up(eps_rdp)})")
    _say(table(["order", "RDP epsilon"],
               [[num(float(o)), num_up(float(e))] for o, e in zip(curve.orders, curve.epsilons,
                                                                strict=True)]))
    if "mse" in result:
        m = result["mse"]
        _say()
        _say(f"mean squared error (eq. (4)) at ||f(D)|| = {num(m['norm'])}, "
             f"d = {args.dimension}:")
        rows = [["Ornstein-Uhlenbeck", num(m["ou"])],
                ["Gaussian, same RDP (d sigma~^2)", num(m["gaussian"])]]
        if "post_processed_gaussian" in m:
            rows.append(["post-processed Gaussian (worst case)",
                         num(m["post_processed_gaussian"])])
        rows.append(["ratio OU / Gaussian", num(m["ratio"])])
        _say(table(["mechanism", "MSE"], rows))
    if "theorem8" in result:
        t8 = result["theorem8"]
        line = f"Theorem 8 condition theta R^2 <= 4 d rho^2: {t8['condition']}"
        if "ratio_bound" in t8:
            line += f"; ratio bound at t = 1: {num(t8['ratio_bound'])}"
        _say(line)
    return 0


# ---------------------------------------------------------------------------------------------
# privamp plot ou-mse
# ---------------------------------------------------------------------------------------------


def _cmd_plot_ou_mse(args: argparse.Namespace) -> int:
    from ..plots import save_figure
    from ..plots.post import plot_ou_mse
    from ..reproduce.bbgg2019 import theorem8_curves

    t_max = check_real("t_max", args.t_max, "(0, inf)")
    check_int("dimension", args.dimension, "[1, inf)")
    sens = check_real("sensitivity", args.sensitivity, "(0, inf)")
    radius = check_real("radius", args.radius, "(0, inf)")
    dim = args.dimension
    epsilons = [check_real("rdp_epsilon", e, "(0, inf)") for e in args.rdp_epsilon]
    for e in epsilons:  # reports a bad ϵ as --rdp-epsilon before computing anything
        _theorem8(e, sens, radius, dim)
    over_t, at_one = theorem8_curves(epsilons, sens, radius, dim, t_max)
    title = (f"Theorem 8: OU vs Gaussian MSE (d = {dim}, L2 sensitivity Δ = {sens:g} between "
             f"neighbouring datasets, R = {radius:g}; RDP slopes ϵ as in the legend)")
    fig = plot_ou_mse([c[:4] for c in over_t], at_one, title=title)
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out, "rdp_epsilon": epsilons, "t_max": t_max})
    else:
        _say(f"wrote {args.out}")
    return 0


# ---------------------------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------------------------


def add_mixing(sub) -> None:
    """Add ``privamp mixing``."""
    mix = sub.add_parser("mixing", help=SUMMARIES["mixing"])
    mix.add_argument("--kernel", required=True,
                     help="CSV file: a row-stochastic matrix, rows = inputs")
    mix.add_argument("--eps", type=float, required=True, help="epsilon of the mechanism (>= 0)")
    mix.add_argument("--delta", type=float, required=True, help="delta of the mechanism [0, 1]")
    mix.add_argument("--tolerance", type=float, default=1e-9,
                     help="admissible deviation of row sums from 1 (default 1e-9)")
    add_json(mix)
    mix.set_defaults(func=_cmd_mixing)


def add_iteration(sub) -> None:
    """Add ``privamp iteration``."""
    it = sub.add_parser("iteration", help=SUMMARIES["iteration"])
    it.add_argument("--n", "--steps", type=int_in("[1, inf)"), required=True, dest="n",
                    help="number of records = steps of the single pass (n >= 1)")
    it.add_argument("--index", type=int_in("[1, inf)"), nargs="+", default=None,
                    help="record indices in [1, n] (default: 1, n/2, n-1, n)")
    it.add_argument("--step-size", type=float, required=True, dest="step_size",
                    help="learning rate eta <= 2/(beta + rho)")
    it.add_argument("--lipschitz", type=float, required=True,
                    help="C: bound on per-example gradient norms")
    it.add_argument("--smoothness", type=float, required=True, help="beta >= 0")
    it.add_argument("--strong-convexity", type=float, required=True, dest="strong_convexity",
                    help="rho in [0, beta]")
    it.add_argument("--sigma", type=float, required=True, help="gradient noise std (> 0)")
    it.add_argument("--delta", type=float, default=1e-5, help="target delta (default 1e-5)")
    it.add_argument("--form", choices=("paper", "tight"), default="paper",
                    help="Theorem 5 as printed, or the exact path optimum (default paper)")
    add_json(it)
    it.set_defaults(func=_cmd_iteration)


def add_ou(sub) -> None:
    """Add ``privamp ou``."""
    ou = sub.add_parser("ou", help=SUMMARIES["ou"])
    ou.add_argument("--theta", type=float, help="mean-reversion rate theta > 0")
    ou.add_argument("--rho", type=float, help="diffusion coefficient rho > 0")
    ou.add_argument("--rdp-epsilon", type=float, dest="rdp_epsilon",
                    help="choose theta, rho by Theorem 8 for RDP (order, order * E) at t = 1")
    ou.add_argument("--t", "--time", type=float, default=1.0, dest="t",
                    help="diffusion time t > 0 (default 1)")
    ou.add_argument("--sensitivity", type=float, default=1.0,
                    help="L2 sensitivity of f (default 1)")
    ou.add_argument("--dimension", type=int_in("[1, inf)"), default=1, help="d >= 1 (default 1)")
    ou.add_argument("--radius", type=float, help="R with ||f(D)|| <= R")
    ou.add_argument("--norm", type=float, help="||f(D)|| for the MSE (default: R)")
    ou.add_argument("--orders", type=float, nargs="+", help="Renyi orders to print")
    ou.add_argument("--delta", type=float, default=1e-5, help="target delta (default 1e-5)")
    add_json(ou)
    ou.set_defaults(func=_cmd_ou)


def add_plot_ou_mse(plot_sub) -> None:
    """Add ``privamp plot ou-mse``."""
    pou = plot_sub.add_parser("ou-mse", help="Theorem 8: E_OU/E_GM over t and epsilon")
    pou.add_argument("--rdp-epsilon", type=float, nargs="+", default=[0.1, 0.5, 1.0, 4.0],
                     dest="rdp_epsilon", help="RDP slopes for the parameter choice")
    pou.add_argument("--sensitivity", type=float, default=1.0, help="default 1")
    pou.add_argument("--radius", type=float, default=1.0, help="R (default 1)")
    pou.add_argument("--dimension", type=int_in("[1, inf)"), default=1, help="d >= 1 (default 1)")
    pou.add_argument("--t-max", type=float, default=4.0, dest="t_max",
                     help="largest time on the plot (default 4)")
    add_plot_outputs(pou)
    pou.set_defaults(func=_cmd_plot_ou_mse)

