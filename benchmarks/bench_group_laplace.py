"""Groups of K records under Poisson subsampling, Laplace mechanism (issue 20, item 2): the
tight double-mixture pairs (:mod:`privamp.pld.group_laplace`) against the bound the tree at hand
uses (run the same script on a tree without them to get the "before" column).

    PYTHONPATH=src python benchmarks/bench_group_laplace.py [--repeat 1] [--coupling] \
        [--out benchmarks/results/group_laplace.md] [--figure group_laplace.png]

The docs figure (docs/images/group_laplace.png) is made by the docs build: ``figure(path)``
(docs/figures.py).

Setting: Laplace mechanism with θ = Δ/b ∈ {0.5, 1} (b = 1/θ, Δ = 1), Poisson q = 0.01,
T = 1000 steps, δ = 1e-5, K ∈ {1, 2, 4, 8}. Columns: privamp's certified ε bracket, the group
bound it used (``details["group_bound"]``) and the time of the query (minimum over the repeats,
imports warmed up, a fresh accountant each time); with ``--coupling``, the upper end of the
coupling bound (the coupling profile with the post-hoc floor, composed as a symmetric curve:
what privamp used before the tight pairs).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from privamp import Accountant, LaplaceMechanism
from privamp.sampling import Poisson

Q, T, DELTA = 0.01, 1000, 1e-5
THETAS = (0.5, 1.0)
KS = (1, 2, 4, 8)


def query(theta, k):
    acc = Accountant().add(LaplaceMechanism(1.0 / theta), T, scheme=Poisson(Q), group_size=k)
    b = acc.epsilon(DELTA)
    return b, acc.details.get("group_bound")


def coupling(theta, k):
    """The bound privamp used before the tight pairs (:mod:`privamp.pld.group`, "coupling"):
    the coupling profile with the post-hoc floor, composed as a symmetric curve; upper end."""
    from privamp.amplification.subsampling import amplify
    from privamp.pld.curves import ProfileCurve
    from privamp.pld.engine import PldEvent, pld_epsilon
    from privamp.profiles import MinimumProfile

    mech = LaplaceMechanism(1.0 / theta)
    if k == 1:
        return Accountant().add(mech, T, scheme=Poisson(Q)).epsilon(DELTA).upper
    prof = MinimumProfile([amplify(mech, Poisson(Q), None, group_size=k),
                           amplify(mech, Poisson(Q), None).group(k, "black-box")])
    res = pld_epsilon([PldEvent({"symmetric": ProfileCurve(prof)}, T)], DELTA, lower=False)
    return res.bracket.upper


def _fmt(x, up=True):
    """Five decimals rounded outward: upper ends up, lower ends down (the project's rule for
    numbers shown to people)."""
    if x is None:
        return "—"
    scaled = x * 1e5
    return f"{(math.ceil(scaled) if up else math.floor(scaled)) / 1e5:.5f}"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--figure", type=Path)
    ap.add_argument("--coupling", action="store_true",
                    help="also compose the coupling bound (needs privamp.profiles.MinimumProfile)")
    args = ap.parse_args(argv)
    query(1.0, 2)  # warm the imports
    rows = []
    for theta in THETAS:
        for k in KS:
            best, out = math.inf, None
            for _ in range(args.repeat):
                start = time.perf_counter()
                out = query(theta, k)
                best = min(best, time.perf_counter() - start)
            (b, bound) = out
            cp = coupling(theta, k) if args.coupling else None
            rows.append((theta, k, b.lower, b.upper, bound, best, cp))
            print(f"theta={theta} K={k}: eps in [{_fmt(b.lower, False)}, {_fmt(b.upper)}] "
                  f"bound={bound} time={best:.2f}s coupling={_fmt(cp)}", flush=True)
    lines = ["| θ | K | ε lower | ε upper | group bound | time (s) | coupling (upper) |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {th} | {k} | {_fmt(lo, False)} | {_fmt(up)} | {bd} | {t:.2f} | {_fmt(cp)} |"
              for th, k, lo, up, bd, t, cp in rows]
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    if args.figure:
        _figure(rows, args.figure)
    return rows


def figure(path):
    """Only the figure (no repeats, no table): what the docs build runs (docs/figures.py)."""
    rows = []
    for theta in THETAS:
        for k in KS:
            b, bound = query(theta, k)
            rows.append((theta, k, b.lower, b.upper, bound, None, coupling(theta, k)))
    _figure(rows, path)


def _figure(rows, path):
    from privamp.plots import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.8, 3.8), layout="constrained")
    for theta, colour in zip(THETAS, ("C0", "C1"), strict=True):
        sel = [r for r in rows if r[0] == theta]
        ks = [r[1] for r in sel]
        ax.plot(ks, [r[3] for r in sel], "o-", color=colour,
                label=f"tight pair, θ = Δ/b = {theta}")
        if all(r[6] is not None for r in sel):
            ax.plot(ks, [r[6] for r in sel], "s--", color=colour, alpha=0.6,
                    label=f"coupling bound, θ = {theta}")
    ax.set_xlabel("group size K")
    ax.set_ylabel(f"ε at δ = {DELTA:g} (upper end)")
    ax.set_xticks(KS)
    ax.set_title(f"Laplace Δ = 1, Poisson q = {Q}, T = {T} steps, add/remove",
                 fontsize="medium")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    save_figure(fig, str(path), dpi=120)

if __name__ == "__main__":
    main()
