"""Groups of K records under Poisson subsampling (issue 20, item 2): privamp's tight pairs
(:mod:`privamp.pld.group`) against the post-hoc group bounds and dp_accounting.

    PYTHONPATH=src python benchmarks/bench_group.py [--repeat 1] \
        [--out benchmarks/results/group.md] [--figure group.png]
    PYTHONPATH=src python benchmarks/bench_group.py --sizes \
        [--out benchmarks/results/group_sizes.md]

``--sizes``: time against K (1 … 1000) for Poisson-Gaussian and Poisson-Laplace (the tight
split pairs up to privamp.pld.group.TIGHT_MAX_GROUP, the coupling bound beyond) and
WOR(60000, 600)-Gaussian and -Laplace (coupling upper end, realizable pairs' lower end), with
the bound used, both ends of the bracket, and the refusal beyond MAX_SAMPLED_GROUP (its time
too: it must come before any work).

The docs figure (docs/images/group.png) is made by the docs build: ``figure(path)`` computes
only what it draws (docs/figures.py).

Setting: the reference of issue 20 (Schuchardt et al. 2024): Gaussian mechanism, Poisson
q = 0.01, T = 1000 steps, δ = 1e-5, σ ∈ {2, 5}, K ∈ {1, 2, 4, 8}. Columns:

* privamp: the certified bracket (max over the K + 1 splits of insertions/removals) and the
  time of the query (minimum over the repeats, imports warmed up, a fresh accountant each time);
* post-hoc (composed): group privacy applied to the composed one-record guarantee,
  (Kε₁, δ₁(e^{Kε₁} − 1)/(e^{ε₁} − 1)) (Vadhan 2017, Lemma 2.2), from privamp's certified
  lower end at δ₁ (so the column is at most what that route gives);
* white-box Kθ: Poisson at rate 1 − (1 − q)^K with sensitivity KΔ (any sampled member moves the
  mean by at most KΔ), privamp's upper end;
* dp_accounting 0.6.0: ``from_mixture_gaussian_mechanism`` with sensitivities 0..K and binomial
  probabilities, discretisation 1e-4 — it expresses the pure-removal and pure-insertion splits
  (its REMOVE/ADD), not the mixed ones (the double mixture); here the pure splits are the worst,
  so its number is comparable (an estimate: dp_accounting's PLDs are not certified).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

from scipy import stats

from privamp import Accountant, GaussianMechanism
from privamp.sampling import Poisson

Q, T, DELTA = 0.01, 1000, 1e-5
SIGMAS = (2.0, 5.0)
KS = (1, 2, 4, 8)
PAPER = {(2.0, 1): 0.6238, (2.0, 2): 1.3335, (2.0, 4): 2.8939, (2.0, 8): 6.4605,
         (5.0, 1): 0.2159, (5.0, 2): 0.4526, (5.0, 4): 0.9620, (5.0, 8): 2.0702}


def _timed(func, repeat):
    best, out = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return out, best


def tight(sigma, k):
    acc = Accountant().add(GaussianMechanism(sigma), T, scheme=Poisson(Q), group_size=k)
    return acc.epsilon(DELTA)


def post_hoc_composed(sigma, k):
    acc = Accountant().add(GaussianMechanism(sigma), T, scheme=Poisson(Q))
    e1 = acc.epsilon(DELTA).lower
    if k == 1:
        return e1
    for _ in range(5):
        e1 = acc.epsilon(DELTA * math.expm1(e1) / math.expm1(k * e1)).lower
    return k * e1


def white_box(sigma, k):
    rate = -math.expm1(k * math.log1p(-Q))
    return Accountant().add(GaussianMechanism(sigma, sensitivity=k), T,
                            scheme=Poisson(rate)).epsilon(DELTA, lower=False).upper


def dp_accounting(sigma, k):
    from dp_accounting.pld import privacy_loss_distribution as pld

    probs = [float(p) for p in stats.binom.pmf(range(k + 1), k, Q)]
    one = pld.from_mixture_gaussian_mechanism(sigma, list(range(k + 1)), probs,
                                              value_discretization_interval=1e-4)
    return one.self_compose(T).get_epsilon_for_delta(DELTA)


SIZES = (1, 2, 4, 8, 16, 32, 64, 65, 100, 1000, 1001)


def sizes(out):
    """Time of ε(1e-5) against K, one fresh accountant per query (``--sizes``)."""
    from privamp import LaplaceMechanism
    from privamp.errors import InvalidParameterError
    from privamp.sampling import WOR

    cases = {
        "Poisson(0.01) Gaussian σ = 2": lambda: (GaussianMechanism(2.0), Poisson(Q)),
        "Poisson(0.01) Laplace b = 2": lambda: (LaplaceMechanism(2.0), Poisson(Q)),
        "WOR(60000, 600) Gaussian σ = 2": lambda: (
            GaussianMechanism(2.0, relation="substitute"), WOR(60000, 600)),
        "WOR(60000, 600) Laplace b = 2": lambda: (
            LaplaceMechanism(2.0, relation="substitute"), WOR(60000, 600)),
    }
    tight(2.0, 2)  # warm up imports
    lines = ["# Groups of K records: time against K", "",
             f"T = {T}, ε at δ = {DELTA:g}; `PYTHONPATH=src python benchmarks/bench_group.py "
             f"--sizes` (2 shared CPU cores; 1-minute load at the start "
             f"{os.getloadavg()[0]:.2f}).", "",
             "| case | K | bound | ε lower | ε upper | s |", "|---|---|---|---|---|---|"]
    for name, make in cases.items():
        for k in SIZES:
            mech, scheme = make()
            start = time.perf_counter()
            try:
                acc = Accountant().add(mech, T, scheme=scheme, group_size=k)
                b = acc.epsilon(DELTA)
                eps, bound = f"{b.upper:.5g}", acc.group_bound or "-"
                low = "—" if b.lower is None else f"{b.lower:.5g}"
            except InvalidParameterError as err:
                eps, bound, low = "refused", f"({err.rule.split(':')[0]})", "—"
            secs = time.perf_counter() - start
            lines.append(f"| {name} | {k} | {bound} | {low} | {eps} | {secs:.2f} |")
            print(lines[-1], flush=True)
    Path(out).write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--figure", default=None)
    ap.add_argument("--sizes", action="store_true", help="time against K (module doc)")
    args = ap.parse_args(argv)
    if args.sizes:
        sizes(args.out or "benchmarks/results/group_sizes.md")
        return
    args.out = args.out or "benchmarks/results/group.md"
    tight(2.0, 2)  # warm up imports
    rows = []
    for sigma in SIGMAS:
        for k in KS:
            b, secs = _timed(lambda s=sigma, kk=k: tight(s, kk), args.repeat)
            dp, dp_secs = _timed(lambda s=sigma, kk=k: dp_accounting(s, kk), args.repeat)
            rows.append((sigma, k, b.lower, b.upper, secs, PAPER[sigma, k],
                         post_hoc_composed(sigma, k), white_box(sigma, k), dp, dp_secs))
            print(rows[-1], flush=True)
    lines = [
        "# Groups of K records under Poisson subsampling (issue 20, item 2)",
        "",
        f"Gaussian mechanism, Poisson q = {Q}, T = {T}, δ = {DELTA:g}. Command: "
        "`PYTHONPATH=src python benchmarks/bench_group.py` (2 shared CPU cores; times are "
        "single queries, minimum of the repeats).",
        "",
        "| σ | K | privamp tight [lower, upper] | s | paper | post-hoc (composed) | "
        "white-box Kθ | dp_accounting (pure splits) | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for sigma, k, lo, up, secs, paper, ph, wb, dp, dps in rows:
        lines.append(f"| {sigma:g} | {k} | [{lo:.5f}, {up:.5f}] | {secs:.2f} | {paper} | "
                     f"{ph:.4f} | {wb:.4f} | {dp:.5f} | {dps:.2f} |")
    lines += [
        "",
        "privamp's bracket is certified and covers every split of K into insertions and "
        "removals; the paper's column is Schuchardt et al.'s (looser accountant, pure removals); "
        "dp_accounting cannot express the mixed splits (it has no double mixture), so its number "
        "is the pure-split value, an estimate. The post-hoc columns are valid bounds that ignore "
        "how subsampling hides each member separately.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    if args.figure:
        draw([(r[0], r[1], r[3], r[6]) for r in rows], args.figure)


def figure(path):
    """Only the figure (no timing, no dp_accounting): what the docs build runs
    (``docs/figures.py``)."""
    draw([(sigma, k, tight(sigma, k).upper, post_hoc_composed(sigma, k))
          for sigma in SIGMAS for k in KS], path)


def draw(points, path):
    """ε against K: ``points`` are ``(σ, K, tight upper end, post-hoc)``."""
    from privamp.plots import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    for sigma, style in zip(SIGMAS, ("-", "--"), strict=True):
        sub = [r for r in points if r[0] == sigma]
        ks = [r[1] for r in sub]
        ax.plot(ks, [r[2] for r in sub], "o" + style, color="C0",
                label=f"tight (privamp), σ = {sigma:g}")
        ax.plot(ks, [r[3] for r in sub], "s" + style, color="C1",
                label=f"post-hoc (composed), σ = {sigma:g}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(KS, [str(k) for k in KS])
    ax.set_xlabel("group size K")
    ax.set_ylabel(f"ε at δ = {DELTA:g}")
    ax.set_title(f"Groups of K: Gaussian Δ = 1, Poisson q = {Q}, T = {T} steps, add/remove",
                 fontsize="medium")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    save_figure(fig, str(path), dpi=120)

if __name__ == "__main__":
    main()
