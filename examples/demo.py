"""privamp's main job, run by ``make demo``: privacy profiles, amplification, accounting.

It prints readable tables of δ(ε) for the Gaussian and Laplace mechanisms (and randomized
response calibrated to the same total variation, as in Figure 1(a) of Balle, Barthe, Gaboardi
2018), inverts the profiles to ε(δ), shows white-box versus black-box group privacy, calibrates a
Gaussian mechanism exactly, amplifies the Gaussian mechanism by Poisson, without-replacement,
with-replacement and multistage (MUST) subsampling, accounts for 1,000 steps of DP-SGD with four
batch samplers (Poisson, WOR, WR, MUST.OW; certified PLD brackets next to RDP) at the same noise
multiplier, calibrates the noise for a target ε, and writes plots of the profiles and of ε against
the number of steps.

Every number it prints goes through :mod:`privamp.display`, rounded to the safe side: bounds (ε,
δ, η) up, the lower ends of brackets down, a calibrated σ up and a calibrated probability down, so
that a printed value typed back in still meets its target.

Usage: python examples/demo.py [--out DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys

from scipy import special

import privamp
from privamp.accountant import Accountant
from privamp.amplification.subsampling import amplify
from privamp.applications.privacy import resolve_relations
from privamp.calibrate import calibrate_sigma
from privamp.display import bracket, calibrated, nearest, upper
from privamp.errors import UnsupportedCombinationError
from privamp.plots import plot_composition, plot_profiles, save_figure
from privamp.sampling import MustOW, MustWW, Poisson, WithoutReplacement, WithReplacement


def sci(x: float) -> str:
    """An upper bound (δ) in scientific notation, five significant digits, rounded up."""
    return upper(x, 5, notation="e") if x != 0 else "0"


def table(title, headers, rows):
    print(f"\n{title}")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo-output", help="folder for the plot")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    gauss = privamp.GaussianMechanism(sigma=1.0)  # L2 sensitivity 1 under add/remove
    laplace = privamp.LaplaceMechanism(scale=1.0)
    # randomized response and a Laplace mechanism with the same δ(0) as the Gaussian
    d0 = gauss.profile().delta(0.0)
    rr = privamp.RandomizedResponse(p=(1 + d0) / 2)
    laplace_matched = privamp.LaplaceMechanism(scale=1.0 / (-2 * math.log1p(-d0)))

    eps = [0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0]
    mechs = [
        ("Gaussian σ=1", gauss.profile()),
        ("Laplace b=1", laplace.profile()),
        ("Laplace, same δ(0)", laplace_matched.profile()),
        ("RR, same δ(0)", rr.profile()),
    ]
    rows = [[f"{e:g}"] + [sci(float(p.delta(e))) for _, p in mechs] for e in eps]
    table("Privacy profiles δ(ε) (sensitivity 1, add/remove relation)",
          ["ε"] + [name for name, _ in mechs], rows)

    deltas = [1e-3, 1e-5, 1e-8, 1e-12, 1e-20]
    rows = [[f"{d:g}"] + [upper(float(p.epsilon(d)), 5) for _, p in mechs] for d in deltas]
    table("Inverted: the smallest ε with δ(ε) ≤ δ (rounded up, never below the truth)",
          ["δ"] + [name for name, _ in mechs], rows)

    g = gauss.profile()
    rows = []
    for k in (1, 2, 4, 8):
        white, black = g.group(k, "white-box"), g.group(k, "black-box")
        rows.append([str(k), sci(float(white.delta(2.0))), sci(float(black.delta(2.0))),
                     upper(float(white.epsilon(1e-5)), 4), upper(float(black.epsilon(1e-5)), 4)])
    table("Group privacy of the Gaussian mechanism σ=1: white-box (sensitivity kΔ) "
          "vs black-box (Vadhan's lemma)",
          ["k", "δ_k(2) white", "δ_k(2) black", "ε_k(1e-5) white", "ε_k(1e-5) black"], rows)

    tiny = privamp.GaussianProfile(0.25)
    print(f"\nFar tails stay exact in log space: Gaussian θ=0.25 at ε=4.5 has "
          f"δ = {sci(math.exp(float(tiny.log_delta(4.5))))}; at ε=60, "
          f"log δ = {upper(float(tiny.log_delta(60.0)), 5)} (δ itself underflows a double).")

    target_eps, target_delta = 1.0, 1e-5
    exact = privamp.GaussianMechanism.calibrated(target_eps, target_delta)
    print(f"\nCalibration for ({target_eps}, {target_delta})-DP, sensitivity 1:")
    # calibrated σ rounded up (more noise), probabilities of the true bit rounded down
    print(f"  exact profile (Balle & Wang 2018): σ = {calibrated(exact.sigma, 'sigma')}")
    classic = privamp.mechanisms.classical_gaussian_sigma(0.99, target_delta)
    print(f"  classical σ = √(2 ln(1.25/δ))/ε at ε=0.99: σ = {calibrated(classic, 'sigma')} "
          f"({nearest(100 * (classic / exact.sigma - 1), 2)}% more noise)")
    print(f"  randomized response for (1, 1e-5): p = "
          f"{calibrated(privamp.RandomizedResponse.calibrated(1.0, 1e-5).p, 'p')} "
          f"(pure ε=1 needs p = {calibrated(float(special.expit(1.0)), 'p')})")

    fig = plot_profiles(mechs, [i * 0.02 for i in range(401)],
                        title=f"Privacy profiles δ(ε), sensitivity 1 (δ(0) = {upper(d0, 3)})")
    path = os.path.join(args.out, "profiles.png")
    save_figure(fig, path)
    print(f"\nWrote the plot {path}")

    # amplification by subsampling: the setting of MUST Table 3 (n=1000, m=400, b=500)
    g = privamp.GaussianMechanism(sigma=1.0, relation="substitute")
    schemes = [("Poisson γ=0.4 (add/remove)", privamp.GaussianMechanism(sigma=1.0),
                Poisson(0.4)),
               ("WOR(1000, 400)", g, WithoutReplacement(1000, 400)),
               ("WR(1000, 400)", g, WithReplacement(1000, 400)),
               ("MUST.OW(1000, 500, 400)", g, MustOW(1000, 500, 400)),
               ("MUST.WW(1000, 500, 400)", g, MustWW(1000, 500, 400))]
    eps_list = [0.5, 1.0, 2.0, 4.5]
    rows = []
    amplified = []
    for name, mech, scheme in schemes:
        prof = amplify(mech, scheme)
        amplified.append((name, prof))
        pts = prof.points(eps_list)
        rows.append([name, upper(prof.eta, 5)] + [
            f"{upper(e, 4)} / {sci(d)}" for e, d in zip(pts["eps_amplified"],
                                                        pts["delta_amplified"], strict=True)])
    table("Gaussian σ=1 on a subsample: ε' / δ'(ε') for base ε = 0.5, 1, 2, 4.5 "
          "(the base δ(ε) is in the first table)",
          ["scheme", "η"] + [f"ε={e:g}" for e in eps_list], rows)
    print("Poisson and WOR always amplify both ε and δ; with replacement and MUST the extra "
          "copies\nof a record (group privacy) can make δ' larger than δ at large ε.")
    fig = plot_profiles([("Gaussian σ=1, no sampling", g.profile())] + amplified,
                        [i * 0.01 for i in range(401)],
                        title="Gaussian σ=1 amplified by subsampling (n=1000, m=400, b=500)")
    path2 = os.path.join(args.out, "amplification.png")
    save_figure(fig, path2)
    print(f"\nWrote the plot {path2}")

    # accounting: 1,000 steps of DP-SGD with batch samplers of expected size 100 from 10,000
    # records, all at the same noise multiplier z = σ/C = 1: per-example gradients clipped to norm
    # C = 1, the same Gaussian noise σ = 1 on their sum. Each sampler is analysed under its
    # natural relation, with the sensitivity of the clipped sum under the relation its
    # amplification theorem needs (privamp.applications.privacy): C under add/remove (Poisson),
    # 2C under substitution (WOR, WR, MUST).
    n, m, steps, delta, clip, sigma = 10_000, 100, 1000, 1e-5, 1.0, 1.0
    samplers = []
    for name, scheme in [("Poisson q=0.01", Poisson(m / n)),
                         ("WOR(10000, 100)", WithoutReplacement(n, m)),
                         ("WR(10000, 100)", WithReplacement(n, m)),
                         ("MUST.OW(10000, 5000, 100)", MustOW(n, n // 2, m))]:
        outer, base = resolve_relations(scheme, None)
        sens = privamp.clipped_sum_sensitivity(clip, base)
        mech = privamp.GaussianMechanism(sigma, sensitivity=sens, relation=base)
        label = (f"{name} ({'add/remove, Δ = C' if sens == clip else 'substitution, Δ = 2C'})")
        samplers.append((label, mech, scheme, outer))
    grid = [10, 30, 100, 300, 1000]
    brackets = {label: [Accountant().add(mech, t, scheme=scheme, relation=outer).epsilon(delta)
                        for t in grid] for label, mech, scheme, outer in samplers}
    rows = []
    for label, mech, scheme, outer in samplers:
        b = brackets[label][grid.index(steps)]
        try:
            rdp = upper(Accountant("rdp").add(mech, steps, scheme=scheme, relation=outer)
                        .epsilon(delta).upper)
        except UnsupportedCombinationError:
            rdp = "—"
        rows.append([label, bracket(b), rdp])
    table(f"{steps} steps of DP-SGD with each batch sampler, noise multiplier z = σ/C = "
          f"{sigma / clip:g}: certified ε at δ={delta:g}",
          ["sampler (relation, sensitivity)", "PLD bracket (lower, upper)", "RDP (upper)"], rows)
    print("The PLD bracket encloses the exact ε of the composition (its upper end is the "
          "guarantee);\nRDP is an upper bound only, and has no bound for WR/MUST with Gaussian "
          "noise. At the same\nnoise, substitution doubles the sensitivity of the clipped sum: "
          "WOR, WR and MUST pay far more\nthan Poisson under add/remove.")
    cal = calibrate_sigma(1.0, delta, steps=steps, scheme=Poisson(m / n))
    print(f"\nNoise for ε ≤ 1 at δ={delta:g} after {steps} Poisson steps (C = 1): σ = "
          f"{calibrated(cal.value, 'sigma')} (certified ε = {upper(cal.epsilon)}, "
          f"{cal.evaluations} accountant calls)")
    curves = []
    for label, *_ in samplers:
        values = brackets[label]
        curves.append({"label": f"{label}, PLD", "steps": grid,
                       "epsilon": [v.upper for v in values],
                       "epsilon_lower": [v.lower for v in values]})
    label, mech, scheme, outer = samplers[0]
    rdp_vals = [Accountant("rdp").add(mech, t, scheme=scheme, relation=outer).epsilon(delta).upper
                for t in grid]
    curves.append({"label": f"{label}, RDP", "steps": grid, "epsilon": rdp_vals,
                   "accountant": "rdp"})
    fig = plot_composition(
        curves, delta=delta,
        title=f"DP-SGD, four batch samplers, σ = {sigma:g}: batches of 100 from 10,000 records",
        caption=f"Equal noise multiplier z = σ/C = {sigma / clip:g} (the same Gaussian noise "
                f"σ = {sigma:g} on a gradient sum clipped to C = {clip:g}), clipped-gradient "
                "sum: sensitivity C under add/remove (Poisson), 2C under substitution "
                "(WOR/WR/MUST). Solid: certified PLD upper ends (the brackets are narrower "
                "than the lines); dashed: RDP.")
    path3 = os.path.join(args.out, "composition.png")
    save_figure(fig, path3)
    print(f"Wrote the plot {path3}")

    print("\nThe same from the command line:")
    cmd = [sys.executable, "-m", "privamp", "profile", "--mechanism", "gaussian", "--sigma",
           "1", "--sampling", "must-ww", "--n", "1000", "--b", "500", "--m", "400", "--eps",
           "0.5", "1", "2"]
    print("$ privamp " + " ".join(cmd[3:]))
    sys.stdout.flush()
    status = subprocess.call(cmd)
    cmd = [sys.executable, "-m", "privamp", "epsilon", "--mechanism", "gaussian", "--sigma",
           "1", "--sampling", "poisson", "--rate", "0.01", "--steps", "100000", "--delta", "1e-5"]
    print("\n$ privamp " + " ".join(cmd[3:]))
    sys.stdout.flush()
    return status or subprocess.call(cmd)


if __name__ == "__main__":
    raise SystemExit(main())
