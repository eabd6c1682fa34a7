"""Yu-Xiang Wang's slides, *Privacy Amplification by Subsampling and Rényi Differential Privacy*
(Wang, Balle, Kasiviswanathan, AISTATS 2019; Zhu, Wang 2019): the three figures.

* ``wang-fig-rdp`` — "Numerical evaluation of the bounds": RDP of the subsampled Gaussian
  (σ = 5) and Laplace (b = 0.5) mechanisms against the order (W-10);
* ``wang-fig-composition`` — "Using our bounds for advanced composition": overall ε after k
  compositions, Gaussian σ = 5 and 0.5, Laplace b = 2 and 0.5 (W-13);
* ``wang-fig-chi`` — "Negative χ^α divergence in Poisson distribution" (W-20, W-14).

The slides give σ and b but not the sampling ratio, δ, the order range or the number of
compositions (catalogue A, erratum E18): γ = 0.001, δ = 1e-8, orders up to 4096 and k up to
60,000 are used here (the catalogue's suggestion, from the authors' scripts), and stated on the
figures.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from .. import display
from .._validation import check_real
from ..mechanisms import GaussianMechanism, LaplaceMechanism
from ..plots import Curve, Panel
from ..rdp import (
    DEFAULT_ORDERS,
    RdpCurve,
    check_orders,
    poisson_gaussian_rdp,
    rdp_curve,
    subsampled_lower_bound,
    wbk_upper_bound,
    zhu_wang_upper_bound,
)
from ._output import write_panels, write_table
from ._registry import Check, Context, Result, register

__all__ = ["rdp_panel_curves", "rdp_panels"]

PAPER = "wang2019"
GAMMA = 0.001
DELTA = 1e-8
#: WOR needs integer sizes: γ is represented as m / n with this n (exact for γ = k·1e-9).
_WOR_N = 10**9


# =============================================================================================
# W-10: RDP of the subsampled Gaussian and Laplace mechanisms
# =============================================================================================


def rdp_panel_curves(sampling_rate: float = GAMMA, sigma: float = 5.0, scale: float = 0.5,
                     orders: Any = None) -> dict[str, list[tuple[str, RdpCurve]]]:
    """The curves of the slides' two RDP panels: ``{"gaussian": [...], "laplace": [...]}``,
    each a list of ``(label, curve)``: WBK upper bound (WOR, substitution), the Zhu–Wang
    Poisson upper bound, the exact Poisson RDP (Gaussian only), the W-9 lower bound and the
    unsubsampled curve. Sensitivity 1 under each relation, as in the slides."""
    gamma = check_real("sampling_rate", sampling_rate, "(0, 1]")
    sigma = check_real("sigma", sigma, "(0, inf)")
    scale = check_real("scale", scale, "(0, inf)")
    if orders is None:
        orders = np.unique(np.round(np.geomspace(2.0, 4096.0, 60)))
    o = check_orders(orders)
    m = round(gamma * _WOR_N)
    panels = {}
    for name, make in (("gaussian", lambda rel: GaussianMechanism(sigma, 1.0, rel)),
                       ("laplace", lambda rel: LaplaceMechanism(scale, 1.0, rel))):
        wor, poisson = make("substitute"), make("add-remove")
        curves = [
            ("upper bound (WBK, WOR)", wbk_upper_bound(wor, _WOR_N, m, o)),
            ("Zhu–Wang upper bound (Poisson)", zhu_wang_upper_bound(poisson, gamma, o)),
        ]
        if name == "gaussian":  # equal to the lower bound's expression at integer orders
            curves.append(("exact (Poisson)", poisson_gaussian_rdp(sigma, gamma, o)))
        curves.append(("lower bound (W-9)", subsampled_lower_bound(wor, m / _WOR_N, o[o >= 2])))
        curves.append(("no subsampling", rdp_curve(poisson, o)))
        panels[name] = curves
    return panels


def _as_curve(label: str, curve: RdpCurve) -> Curve:
    finite = np.isfinite(curve.orders) & np.isfinite(curve.epsilons)
    return Curve(label, curve.orders[finite], curve.epsilons[finite],
                 style="--" if curve.bound == "lower" else None,
                 note=f"bound: {curve.bound}")


def rdp_panels(sampling_rate: float = GAMMA, sigma: float = 5.0, scale: float = 0.5,
               orders: Any = None) -> list[Panel]:
    """The two panels of W-10 as :class:`~privamp.plots.Panel` objects (log–log axes)."""
    curves = rdp_panel_curves(sampling_rate, sigma, scale, orders)
    return [Panel(f"Subsampled Gaussian, σ = {sigma:g}", "Rényi order", "RDP ε(order)",
                  [_as_curve(lab, c) for lab, c in curves["gaussian"]], xscale="log",
                  yscale="log", legend="upper left"),
            Panel(f"Subsampled Laplace, b = {scale:g}", "Rényi order", "RDP ε(order)",
                  [_as_curve(lab, c) for lab, c in curves["laplace"]], xscale="log",
                  yscale="log", legend="lower right")]  # under the curves' plateau: free


@register("wang-fig-rdp", paper=PAPER, kind="figure", label="RDP figure (W-10)",
          title="RDP of the subsampled Gaussian (σ = 5) and Laplace (b = 0.5) mechanisms: upper "
                "and lower bounds against the order")
def figure_rdp(ctx: Context) -> Result:
    orders = np.unique(np.round(np.geomspace(2.0, 4096.0, 30 if ctx.quick else 60)))
    curves = rdp_panel_curves(GAMMA, 5.0, 0.5, orders)
    checks = []
    for name, items in curves.items():
        by = dict(items)
        ints = by["lower bound (W-9)"].orders
        lower = by["lower bound (W-9)"].epsilons
        wbk = by["upper bound (WBK, WOR)"].at(ints).epsilons
        zw = by["Zhu–Wang upper bound (Poisson)"].at(ints).epsilons
        checks.append(Check(f"{name}: lower bound ≤ WBK upper bound at every order",
                            bool(np.all(lower <= wbk * (1 + 1e-9))),
                            f"largest ratio upper/lower {np.max(wbk / lower):.3g}"))
        checks.append(Check(f"{name}: lower bound ≤ Zhu–Wang upper bound at every order",
                            bool(np.all(lower <= zw * (1 + 1e-9)))))
        if "exact (Poisson)" in by:
            exact = by["exact (Poisson)"].at(ints).epsilons
            rel = float(np.max(np.abs(exact - lower) / lower))
            checks.append(Check("Gaussian: the exact Poisson RDP equals the W-9 lower-bound "
                                "expression (W-20 without its factor 3)", rel < 1e-8,
                                f"largest relative difference {rel:.1e}"))
    panels = rdp_panels(GAMMA, 5.0, 0.5, orders)
    files = write_panels(
        ctx, panels, ncols=2, panel_size=(6.2, 4.8),
        suptitle="Wang's slides (W-10): RDP of subsampled mechanisms",
        footnote=f"Sampling ratio γ = {GAMMA:g}, orders 2 … 4096 (chosen: the slides give "
                 "neither, erratum W-E18); WOR bounds under substitution, Poisson under "
                 "add/remove, sensitivity 1. Between integer orders the bounds use the "
                 "convex chord of the cumulant generating function.")
    return Result(
        shows="The Rényi-DP curve ε(order) of the subsampled Gaussian and Laplace mechanisms: "
              "the general upper bound for sampling without replacement (W-8), the Zhu–Wang "
              "Poisson bound (W-20), the exact Poisson-subsampled Gaussian, the lower bound "
              "(W-9) and the mechanism without subsampling.",
        parameters={"σ": 5.0, "b": 0.5, "γ": GAMMA, "orders": f"{orders.size} from 2 to 4096"},
        chosen={"γ, orders": "not in the slides (erratum W-E18)"},
        checks=checks, errata=["W-E18"], files=files)


# =============================================================================================
# W-13: composition
# =============================================================================================


def _eps_delta_composition(profile, k: int, gamma: float, delta: float) -> float:
    """The (ε, δ) route the slides compare against: each step is (ε₀, δ₀)-DP by the base
    profile, amplified by the subsampling lemma to (log(1 + γ(e^{ε₀} − 1)), γδ₀), then composed
    k times — naively (kε₁, kγδ₀) or by the advanced composition theorem of Dwork, Rothblum and
    Vadhan (√(2k log(1/δ'))ε₁ + kε₁(e^{ε₁} − 1), kγδ₀ + δ'). The best over a grid of splits
    of δ between the steps and δ'; a valid bound, not one privamp uses for accounting."""
    best = math.inf
    for frac in np.linspace(0.05, 0.95, 19):
        d0 = min(frac * delta / (k * gamma), 0.999)
        e0 = float(profile.epsilon(d0))
        e1 = math.log1p(gamma * math.expm1(e0))
        slack = delta - k * gamma * d0
        if slack > 0:
            best = min(best, math.sqrt(2 * k * math.log(1 / slack)) * e1 + k * e1 * math.expm1(e1))
    d0 = min(delta / (k * gamma), 0.999)
    e1 = math.log1p(gamma * math.expm1(float(profile.epsilon(d0))))
    return min(best, k * e1)


@register("wang-fig-composition", paper=PAPER, kind="figure",
          label="composition figure (W-13)",
          title="overall ε after k compositions of subsampled Gaussian (σ = 5, 0.5) and Laplace "
                "(b = 2, 0.5) mechanisms: RDP against (ε, δ) composition")
def figure_composition(ctx: Context) -> Result:
    from ..accountant import Accountant
    from ..sampling import WithoutReplacement

    n, m = 10**6, round(GAMMA * 10**6)
    scheme = WithoutReplacement(n, m)
    ks = np.unique(np.geomspace(1, 60_000, 5 if ctx.quick else 16).round().astype(int))
    setups = (("(a) Subsampled Gaussian, σ = 5", GaussianMechanism(5.0, relation="substitute")),
              ("(b) Subsampled Gaussian, σ = 0.5",
               GaussianMechanism(0.5, relation="substitute")),
              ("(c) Subsampled Laplace, b = 2", LaplaceMechanism(2.0, relation="substitute")),
              ("(d) Subsampled Laplace, b = 0.5", LaplaceMechanism(0.5, relation="substitute")))
    panels, rows, checks = [], [], []
    for title, mech in setups:
        curve = wbk_upper_bound(mech, n, m, DEFAULT_ORDERS)
        rdp = np.array([float((curve * int(k)).epsilon(DELTA, warn=False)) for k in ks])
        ed = np.array([_eps_delta_composition(mech.profile(), int(k), GAMMA, DELTA)
                       for k in ks])
        pld = np.array([Accountant().add(mech, int(k), scheme=scheme)
                        .epsilon(DELTA, lower=False).upper for k in ks])
        curves = [Curve("RDP, WBK upper bound (the slides' method)", ks, rdp, marker="o"),
                  Curve("(ε, δ): subsampling lemma + advanced composition", ks, ed,
                        marker="s"),
                  Curve("privamp PLD, certified (tight)", ks, pld, marker="^")]
        panels.append(Panel(title, "number of compositions k", f"ε at δ = {DELTA:g}", curves,
                            xscale="log", yscale="log", legend="upper left"))
        rows += [[title, int(k), rdp[i], ed[i], pld[i]] for i, k in enumerate(ks)]
        big = ks >= 100
        checks.append(Check(f"{title[4:].strip()}: RDP beats (ε, δ) advanced composition for "
                            "k ≥ 100 ('stronger composition than advanced composition')",
                            bool(np.all(rdp[big] < ed[big])),
                            f"at k = {ks[-1]:,}: RDP {display.upper(rdp[-1], 3)}, (ε, δ) "
                            f"{display.upper(ed[-1], 3)}"))
        checks.append(Check(f"{title[4:].strip()}: the certified PLD accountant is tighter "
                            "than RDP (equal, within its 0.1% accuracy, where both give the "
                            "pure-DP value)", bool(np.all(pld <= rdp * (1 + 1e-3))
                                                   and np.all(pld[big] < rdp[big])),
                            f"at k = {ks[-1]:,}: PLD {display.upper(pld[-1], 3)}"))
    files = write_panels(
        ctx, panels, ncols=2, panel_size=(6.2, 4.6),
        suptitle="Wang's slides (W-13): overall (ε, δ) over k compositions",
        footnote=f"Sampling without replacement γ = m/n = {GAMMA:g} (n = 10^6, m = 1000), "
                 "substitution relation, sensitivity 1, "
                 f"δ = {DELTA:g}, k = 1 … 60,000 (chosen: the slides give none of them, "
                 "erratum W-E18; two panels are labelled (a) in the slides). RDP: the WBK bound "
                 "composed and converted optimally (Canonne–Kamath–Steinke). (ε, δ): best of "
                 "naive and advanced composition over splits of δ. PLD: privamp's certified "
                 "accountant (upper end).")
    files.append(write_table(ctx, ["panel", "k", "eps_rdp_wbk", "eps_eps_delta",
                                        "eps_pld_certified"], rows, suffix="-values.csv"))
    return Result(
        shows="The overall ε (at δ = 1e-8) of k compositions of a subsampled mechanism, by "
              "RDP accounting with the slides' general upper bound, by (ε, δ) composition of "
              "the subsampling lemma (naive or advanced), and by privamp's certified PLD "
              "accountant.",
        parameters={"γ": GAMMA, "δ": DELTA, "k": f"{ks.size} values from 1 to 60,000",
                    "σ": [5.0, 0.5], "b": [2.0, 0.5]},
        chosen={"γ, δ, k": "not in the slides (erratum W-E18); the catalogue's suggestion"},
        checks=checks, errata=["W-E18", "W-E2"], files=files,
        notes=["RDP is converted with the standard ε(δ) = min_α ε(α) + … with ε(α), not the "
               "slides' ε(α − 1) (erratum W-E2), and with the optimal conversion of "
               "Canonne, Kamath and Steinke."])


# =============================================================================================
# the negative χ^α divergence (Figure 2 of the Poisson-sampling slides)
# =============================================================================================


def _poisson_pmf(rate: float, support: np.ndarray) -> np.ndarray:
    return np.exp(support * math.log(rate) - rate - special.gammaln(support + 1))


@register("wang-fig-chi", paper=PAPER, kind="figure", label="Figure 2 (Poisson sampling slides)",
          title="negative odd-order Pearson–Vajda χ^α divergences between two Poisson "
                "distributions")
def figure_chi(ctx: Context) -> Result:
    from ..divergences import pearson_vajda

    lam_p, lam_q = 0.5, 1.0
    support = np.arange(0, 120)
    p, q = _poisson_pmf(lam_p, support), _poisson_pmf(lam_q, support)
    ells = np.arange(1, 13)
    chi = np.array([pearson_vajda(p, q, int(ell)) for ell in ells])
    abs_chi = np.array([pearson_vajda(p, q, float(ell), absolute=True) for ell in ells])
    # closed form: E_q[(p/q)^j] = exp(λ_p^j λ_q^{1−j} − jλ_p − (1 − j)λ_q), alternating sum
    closed = []
    for ell in ells:
        j = np.arange(0, ell + 1)
        moments = np.exp(lam_p**j * lam_q ** (1 - j) - j * lam_p - (1 - j) * lam_q)
        closed.append(math.fsum((special.comb(ell, j) * (-1.0) ** (ell - j) * moments).tolist()))
    closed = np.array(closed)
    # χ^1 = E_Q[P/Q − 1] = 0 exactly: values at rounding level are zero, not negative
    is_negative = chi < -1e-12
    negative = ells[is_negative]
    # relative, with an absolute floor for χ^1 (a sum that cancels exactly)
    gap = np.abs(chi - closed)
    agree = bool(np.all(gap <= 1e-8 * np.abs(closed) + 1e-12))
    rel = float(np.max(gap[1:] / np.abs(closed[1:])))
    checks = [
        Check("odd orders 5 and 7 give a negative χ^α (the slide's title)",
              bool(chi[4] < 0 and chi[6] < 0), f"χ^5 = {chi[4]:.6g}, χ^7 = {chi[6]:.6g}"),
        Check("even orders are non-negative", bool(np.all(chi[1::2] >= 0))),
        Check("|χ|^α ≥ |χ^α| at every order", bool(np.all(abs_chi >= np.abs(chi) * (1 - 1e-12)))),
        Check("privamp's χ^α equals the closed form of the Poisson moments",
              agree, f"largest relative difference {rel:.1e} at orders ≥ 2 (the alternating "
                     f"sum loses digits to cancellation); |χ^1| = {abs(chi[0]):.1e}"),
    ]
    sign = np.where(is_negative, "negative", np.where(np.abs(chi) <= 1e-12, "zero", "positive"))
    panels = [
        Panel("signed χ^α(P‖Q) = E_Q[(P/Q − 1)^α] (symmetric log scale)", "order α", "χ^α", [
            Curve("χ^α", ells, chi, marker="o"),
            Curve("negative values", ells[is_negative], chi[is_negative], kind="points",
                  color="#d62728", marker="v")],
            hlines=[(0.0, "")], yscale="symlog", linthresh=1e-3, ylim=(-0.05, 1.0),
            legend="upper right"),
        Panel("absolute |χ|^α(P‖Q) = E_Q[|P/Q − 1|^α] and |χ^α|", "order α", "value", [
            Curve("|χ|^α", ells, abs_chi, marker="o"),
            Curve("|χ^α| where χ^α > 0", ells[chi > 1e-12], chi[chi > 1e-12], kind="points",
                  marker="^", color="#2ca02c"),
            Curve("|χ^α| where χ^α < 0", ells[is_negative], -chi[is_negative],
                  kind="points", marker="v", color="#d62728")],
            yscale="log", legend="upper right"),
    ]
    files = write_panels(
        ctx, panels, ncols=2, panel_size=(6.0, 4.4),
        suptitle="Wang's slides: negative χ^α divergence between Poisson distributions",
        footnote=f"P = Poisson({lam_p:g}), Q = Poisson({lam_q:g}) (chosen: the slide gives no "
                 "parameters; the catalogue's instance). The odd moments of the linearised "
                 "privacy loss P/Q − 1 can be negative, which is why the Poisson bound keeps a "
                 "factor 3 unless odd Pearson–Vajda divergences are ≥ 0.")
    files.append(write_table(ctx, ["order", "chi_signed", "chi_closed_form", "chi_abs",
                                        "sign"],
                             [[int(e), chi[i], closed[i], abs_chi[i], sign[i]]
                              for i, e in enumerate(ells)], suffix="-values.csv"))
    return Result(
        shows="The Pearson–Vajda divergences χ^α(P‖Q) of two Poisson distributions: at odd "
              f"orders {', '.join(str(int(e)) for e in negative)} they are negative, the "
              "counterexample (Nielsen & Nock 2014) that keeps the factor 3 in the Zhu–Wang "
              "Poisson bound for general mechanisms.",
        parameters={"P": f"Poisson({lam_p:g})", "Q": f"Poisson({lam_q:g})",
                    "orders": "1 … 12"},
        chosen={"P, Q": "not in the slides (erratum W-fig2)"},
        checks=checks, errata=["W-fig2"], files=files)
