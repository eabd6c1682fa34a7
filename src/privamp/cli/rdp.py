"""``privamp rdp`` and ``privamp plot rdp``: Rényi-DP curves of (subsampled) mechanisms.

Thin, like the rest of the command line: parse, call :mod:`privamp.rdp`, format. ::

    privamp rdp --mechanism gaussian --sigma 2 --sampling poisson --rate 0.01 --orders 2 8 32
    privamp rdp --mechanism laplace --scale 0.5 --sampling wor --n 100 --m 5 --json
    privamp rdp --mechanism laplace --scale 0.5 --sampling poisson --rate 0.05 --steps 1000 --zcdp
    privamp plot rdp --out rdp.png

``--json`` prints ``{"orders": [...], "rdp": [...], "bound": "upper|lower|exact", ...}``
(``"inf"`` for infinite values); with ``--steps T`` the values are the ledger's (T runs) and
a ``"steps"`` key is added, with ``--zcdp`` a ``"zcdp"`` object (``rho``, ``bounded_by``,
``order``, ``grid_rho``, ``tail_cap``, ``reason``). The relation defaults to the scheme's
natural one (add/remove for none and Poisson, substitution for WOR).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .._numerics import down_ulps
from ..display import num, num_up
from ..rdp import (
    DEFAULT_ORDERS,
    ExactRdpCurve,
    RdpCurve,
    SubsampledBound,
    rdp_curve,
    subsampled_rdp,
)
from ..rdp.subsampled import SUBSAMPLED_SCHEMES
from . import SUMMARIES
from ._common import (
    CliError,
    add_json,
    add_mechanism_options,
    add_plot_outputs,
    build_mechanism,
    describe_mechanism,
    emit_json,
    int_in,
    table,
)

__all__ = ["add_plot_rdp", "add_rdp"]

#: --sampling: none, or a scheme privamp.rdp.subsampled_rdp has bounds for -> its relation
_NATURAL = {"none": "add-remove",
            **{c.kind: c.default_relation().value for c in SUBSAMPLED_SCHEMES}}


#: Parameter names of these commands -> options, for error messages.
OPTION_NAMES = {
    "orders": "--orders",
    "sampling_rate": "--rate",
    "n": "--n",
    "m": "--m",
    "group_size": "--group-size",
    "method": "--method",
    "max_order": "--max-order",
    "steps": "--steps",
}


def add_rdp(sub) -> None:
    """Add ``privamp rdp``."""
    p = sub.add_parser("rdp", help=SUMMARIES["rdp"])
    add_mechanism_options(p)
    g = p.add_argument_group("sampling")
    g.add_argument("--sampling", choices=tuple(_NATURAL), default="none",
                   help="subsampling before the mechanism: none, poisson (--rate) or wor "
                        "(--n, --m); default none")
    g.add_argument("--rate", type=float, help="Poisson sampling rate in [0, 1]")
    g.add_argument("--n", type=int_in("[1, inf)"),
                   help="dataset size for --sampling wor (>= 1)")
    g.add_argument("--m", type=int_in("[0, inf)"),
                   help="subsample size for --sampling wor (0 <= m <= n)")
    p.add_argument("--method", choices=tuple(m.value for m in SubsampledBound), default="auto",
                   help="subsampled bound: auto (exact for Poisson with gaussian, laplace and "
                        "randomized-response; WBK for WOR), wbk, zhu-wang, exact or lower")
    p.add_argument("--group-size", type=int_in("[1, inf)"), default=1, dest="group_size",
                   help="white-box group privacy for this many records (--sampling none only)")
    p.add_argument("--orders", type=float, nargs="+", default=None,
                   help="strictly increasing orders > 1 ('inf' allowed; with --sampling, "
                        "finite orders up to 1e6: the subsampled bounds cost about one term "
                        "per unit of order; --method lower: orders >= 2); default: 200 orders "
                        "from 1.01 to 1e4 and inf")
    p.add_argument("--steps", type=int_in("[1, inf)"), default=None,
                   help="compose this many runs (a ledger of T identical steps): prints the "
                        "ledger's RDP curve, T times the per-step bound (default 1)")
    p.add_argument("--zcdp", action="store_true",
                   help="also print the ledger's certified zCDP rho (D_order <= rho * order "
                        "at every order > 1) and what bounded it (--method auto only)")
    add_json(p)
    p.set_defaults(func=_cmd_rdp)


def add_plot_rdp(plot_sub) -> None:
    """Add ``privamp plot rdp``."""
    pp = plot_sub.add_parser("rdp", help="RDP of the subsampled Gaussian and Laplace mechanisms "
                                         "(the slides' panels)")
    pp.add_argument("--rate", type=float, default=0.001, help="sampling ratio (default 0.001)")
    pp.add_argument("--sigma", type=float, default=5.0, help="Gaussian sigma (default 5)")
    pp.add_argument("--scale", type=float, default=0.5, help="Laplace scale b (default 0.5)")
    pp.add_argument("--max-order", type=float, default=4096.0, dest="max_order",
                    help="largest order plotted (default 4096)")
    add_plot_outputs(pp)
    pp.set_defaults(func=_cmd_plot_rdp)


def _check_sampling_options(args: argparse.Namespace) -> None:
    # options that do not apply are refused by _common.check_applicable
    if args.sampling == "poisson" and args.rate is None:
        raise CliError("--rate is required with --sampling poisson")
    if args.sampling == "wor" and (args.n is None or args.m is None):
        raise CliError("--n and --m are required with --sampling wor")
    if args.sampling == "none" and args.method != "auto":
        raise CliError(f"--method {args.method} needs --sampling poisson or wor")
    if args.sampling != "none" and args.group_size != 1:
        raise CliError("--group-size applies to --sampling none only (the subsampling bounds "
                       "are for one differing record)")
    if args.zcdp and args.method != "auto":
        raise CliError(f"--zcdp uses the accountant's bounds (--method auto), not --method "
                       f"{args.method}")
    if args.zcdp and args.group_size != 1:
        raise CliError("--zcdp needs --group-size 1")


def _cmd_rdp(args: argparse.Namespace) -> int:
    _check_sampling_options(args)
    if args.relation is None:
        args.relation = _NATURAL[args.sampling]
    mech = build_mechanism(args)
    orders = DEFAULT_ORDERS if args.orders is None else np.asarray(args.orders, dtype=float)
    if args.sampling == "none":
        curve = rdp_curve(mech, orders, args.group_size)
        method = "mechanism"
    else:
        curve = subsampled_rdp(mech, sampling=args.sampling, sampling_rate=args.rate, n=args.n,
                               m=args.m, method=args.method, orders=orders,
                               relation=args.relation)
        method = args.method
    steps = 1 if args.steps is None else args.steps
    lower = curve.lower_epsilons if isinstance(curve, ExactRdpCurve) else None
    if steps != 1:
        # composition: T times the per-step values (upper rounded up, lower rounded down)
        if lower is not None:
            lower = down_ulps(lower * steps, 8)
        curve = RdpCurve(curve.orders, (curve * steps).epsilons, bound=curve.bound,
                         relation=curve.relation, label=f"{curve.label}, {steps} steps")
    result = {
        "orders": curve.orders.tolist(),
        "rdp": curve.epsilons.tolist(),
        "bound": curve.bound,
        "rdp_lower": None if lower is None else lower.tolist(),
        "method": method,
        "description": curve.label,
        "relation": None if curve.relation is None else curve.relation.value,
        "mechanism": describe_mechanism(mech),
        "sampling": args.sampling,
        "sampling_rate": args.rate,
        "n": args.n,
        "m": args.m,
        "group_size": args.group_size,
    }
    if args.steps is not None:
        result["steps"] = steps
    zcdp = _ledger_zcdp(mech, args, steps) if args.zcdp else None
    if zcdp is not None:
        result["zcdp"] = zcdp.as_dict()
    if args.json:
        emit_json(result)
        return 0
    out = sys.stdout
    out.write(f"Rényi DP ({result['bound']}): {curve.label}\n")
    out.write(f"relation: {result['relation']}, sampling: {args.sampling}\n")
    rows = [[num(o), num_up(e)] for o, e in zip(result["orders"], result["rdp"], strict=True)]
    out.write(table(["order", "rdp epsilon"], rows) + "\n")
    if zcdp is not None:
        out.write(f"zCDP rho ({steps} step{'s' * (steps != 1)}): {num_up(zcdp.rho)} — "
                  f"bounded by {zcdp.bounded_by}"
                  + (f" ({zcdp.reason})" if zcdp.reason else "") + "\n")
    return 0


def _ledger_zcdp(mech, args, steps: int):
    """The certified zCDP ρ of ``steps`` runs of the mechanism on the scheme, through the
    accountant's ledger (:meth:`privamp.Accountant.zcdp_rho`)."""
    from ..accountant import Accountant
    from ..sampling.schemes import Poisson, WithoutReplacement

    scheme = None
    if args.sampling == "poisson":
        scheme = Poisson(args.rate)
    elif args.sampling == "wor":
        scheme = WithoutReplacement(n=args.n, m=args.m)
    return Accountant("rdp").add(mech, steps, scheme=scheme).zcdp_rho()


def _cmd_plot_rdp(args: argparse.Namespace) -> int:
    from .._validation import check_real
    from ..plots import save_figure
    from ..plots.rdp import plot_rdp_panels
    from ..reproduce.wang2019 import rdp_panels

    top = check_real("max_order", args.max_order, "[2, 1e5]")
    orders = np.unique(np.round(np.geomspace(2.0, top, 60)))
    panels = rdp_panels(args.rate, args.sigma, args.scale, orders)
    fig = plot_rdp_panels(panels, sampling_rate=args.rate)
    save_figure(fig, args.out)
    if args.json:
        emit_json({"out": args.out, "sampling_rate": args.rate, "sigma": args.sigma,
                   "scale": args.scale})
    else:
        sys.stdout.write(f"wrote {args.out}\n")
    return 0
