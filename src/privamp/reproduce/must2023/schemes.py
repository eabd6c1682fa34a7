"""MUST Tables 1 and 2 and Figures 5 and S1: the two-stage schemes, the law of a record's
multiplicity, the printed formulas for η and δ', and how η and δ' − δ depend on (b, m)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import display
from ...amplification.subsampling import amplify, amplify_eps
from ...mechanisms import GaussianMechanism, LaplaceMechanism
from ...sampling import MustOW, MustWO, MustWW, Poisson, WithoutReplacement, WithReplacement
from .._output import write_comparison, write_table, write_table_png
from .._registry import Cell, Check, Context, Result, register
from ._common import _MECH_LABEL, PAPER, _mechanism, _published_ww

# =============================================================================================
# Tables 1 and 2: the schemes and their amplification parameters
# =============================================================================================


def _binom_pmf(k, n, p):
    from scipy import stats

    return stats.binom.pmf(k, n, p)


def _hyper_pmf(u, b, j, m):
    from scipy import stats

    return stats.hypergeom.pmf(u, b, j, m)


def table2_formulas(n: int, b: int, m: int, group_deltas) -> dict[str, tuple[float, float]]:
    """η and δ' of MUST Table 2, evaluated as printed (direct sums with SciPy's binomial and
    hypergeometric pmfs): scheme → (η, δ'). ``group_deltas[u]`` is δ_u(ε) for u = 1 … max(b, m)
    (index 0 unused). Poisson is γ = m/n with δ' = γδ_1."""
    d = np.asarray(group_deltas, dtype=float)
    j_b = np.arange(1, b + 1)
    j_m = np.arange(1, m + 1)
    w_b = _binom_pmf(j_b, b, 1.0 / n)  # Bin(j; b, 1/n)
    out = {"Poisson": (m / n, m / n * d[1]), "WOR": (m / n, m / n * d[1])}
    out["WR"] = (1.0 - (1.0 - 1.0 / n) ** m, float(np.sum(_binom_pmf(j_m, m, 1.0 / n) * d[j_m])))
    # MUST.WO: Σ_j Bin(j; b, 1/n)(1 − C(b−j, m)/C(b, m)); Σ_j Bin Σ_{u ≤ min(j, m)} Hyp δ_u
    from scipy.special import comb

    eta_wo = float(np.sum(w_b * (1.0 - comb(b - j_b, m, exact=False) / comb(b, m))))
    delta_wo = 0.0
    for j, wj in zip(j_b, w_b, strict=True):
        u = np.arange(1, min(j, m) + 1)
        delta_wo += wj * float(np.sum(_hyper_pmf(u, b, j, m) * d[u]))
    out["MUST.WO"] = (eta_wo, delta_wo)
    out["MUST.OW"] = (b / n * (1.0 - (1.0 - 1.0 / b) ** m),
                      b / n * float(np.sum(_binom_pmf(j_m, m, 1.0 / b) * d[j_m])))
    eta_ww = float(np.sum(w_b * (1.0 - (1.0 - j_b / b) ** m)))
    delta_ww = float(sum(wj * np.sum(_binom_pmf(j_m, m, j / b) * d[j_m])
                         for j, wj in zip(j_b, w_b, strict=True)))
    out["MUST.WW"] = (eta_ww, delta_ww)
    return out


def _compare_formula(ours: float, formula: float, rtol: float = 1e-9) -> str:
    close = abs(ours - formula) <= rtol * max(abs(formula), 1e-300) or ours == formula
    return "agrees" if close else "disagrees"


@register("must-table2", paper=PAPER, kind="table", label="Table 2",
          title="η and δ' of Poisson, WOR, WR, MUST.WO, MUST.OW, MUST.WW: the printed formulas "
                "against privamp")
def table2(ctx: Context) -> Result:
    settings = ((1000, 500, 400), (300, 50, 30))
    eps = 1.0
    cells, csv_rows, png_rows = [], [], []
    checks = []
    for n, b, m in settings:
        png_rows.append((f"§ n = {n}, b = {b}, m = {m}", [], []))
        schemes = {"Poisson": Poisson(m / n), "WOR": WithoutReplacement(n, m),
                   "WR": WithReplacement(n, m), "MUST.WO": MustWO(n, b, m),
                   "MUST.OW": MustOW(n, b, m), "MUST.WW": _published_ww(n, b, m)}
        per_kind = {}
        for kind in ("laplace", "gaussian"):
            mech = _mechanism(kind, 1.0)
            top = max(b, m)
            deltas = [0.0] + [float(mech.group_profile(u).delta(eps)) for u in range(1, top + 1)]
            formulas = table2_formulas(n, b, m, deltas)
            ours = {}
            for name, s in schemes.items():
                base = mech if name != "Poisson" else (
                    LaplaceMechanism(1.0) if kind == "laplace" else GaussianMechanism(1.0))
                pts = amplify(base, s).points([eps])
                ours[name] = (float(s.eta), float(pts["delta_amplified"][0]))
            per_kind[kind] = (formulas, ours)
        for name in schemes:
            texts, statuses = [], []
            eta_f, _ = per_kind["laplace"][0][name]
            eta_o = per_kind["laplace"][1][name][0]
            st = _compare_formula(eta_o, eta_f)
            cells.append(Cell(f"n={n}, b={b}, m={m}: {name}", "η", "η", f"{eta_f:.12g}",
                              eta_o, st))
            texts.append(display.upper(eta_o))
            statuses.append(st)
            for kind in ("laplace", "gaussian"):
                d_f = per_kind[kind][0][name][1]
                d_o = per_kind[kind][1][name][1]
                st = _compare_formula(d_o, d_f)
                cells.append(Cell(f"n={n}, b={b}, m={m}: {name}", f"δ', {_MECH_LABEL[kind]}",
                                  "δ'(ε')", f"{d_f:.12g}", d_o, st))
                texts.append(display.upper(d_o))
                statuses.append(st)
            eps_p = float(amplify_eps(eps, eta_o))
            texts.append(display.upper(eps_p))
            statuses.append(None)
            png_rows.append((name, texts, statuses))
            csv_rows.append([n, b, m, name, eta_f, eta_o, eps_p,
                             per_kind["laplace"][0][name][1], per_kind["laplace"][1][name][1],
                             per_kind["gaussian"][0][name][1], per_kind["gaussian"][1][name][1]])
        f_l = per_kind["laplace"][1]
        checks.append(Check(f"(n, b, m) = ({n}, {b}, {m}): MUST.WO = WR in η and δ' "
                            "(Corollary 6)",
                            abs(f_l["MUST.WO"][0] - f_l["WR"][0]) <= 1e-12
                            and abs(f_l["MUST.WO"][1] - f_l["WR"][1]) <= 1e-12 * f_l["WR"][1]))
        checks.append(Check(f"(n, b, m) = ({n}, {b}, {m}): η_OW < η_WR < η_WOR = η_Poisson "
                            "(Proposition 7)",
                            f_l["MUST.OW"][0] < f_l["WR"][0] < f_l["WOR"][0]
                            and abs(f_l["WOR"][0] - f_l["Poisson"][0]) <= 1e-15))
    files = [
        write_table(ctx, ["n", "b", "m", "scheme", "eta_formula", "eta_privamp",
                               "eps_amplified_at_1", "delta_laplace_formula",
                               "delta_laplace_privamp", "delta_gaussian_formula",
                               "delta_gaussian_privamp"], csv_rows),
        write_comparison(ctx, cells),
        write_table_png(
            ctx, "MUST Table 2, evaluated: η, δ'(ε') at base ε = 1 (Δ/σ = 1), ε'",
            ["η", "δ', Laplace", "δ', Gaussian", "ε'"], png_rows, col_width=1.5,
            first_width=2.0,
            footnote="Green: privamp (multiplicity laws in log space) equals the printed formula "
                     "evaluated directly with SciPy's pmfs to 1e-9.\nPoisson is under add/remove "
                     "(γ = m/n, δ' = γδ); every other row under substitution, white-box group "
                     "profiles δ_u. Parameters chosen here: ε = 1, Δ/σ = 1 and the (n, b, m) of "
                     "Tables 3 and 4."),
    ]
    return Result(
        shows="Table 2 gives η and δ' of each scheme as formulas; they are evaluated as printed "
              "(direct binomial and hypergeometric sums) and compared with privamp's amplified "
              "profiles, which compute the multiplicity law stage by stage in log space.",
        parameters={"(n, b, m)": [list(s) for s in settings], "base eps": eps, "Δ/σ": 1.0},
        chosen={"(n, b, m), ε, Δ/σ": "Table 2 has formulas only; evaluated at the settings "
                                     "of Tables 3 and 4"},
        cells=cells, checks=checks, errata=["MUST-1"], files=files,
        notes=["Theorem 5(c) is printed as 'for M∘MUST.OW' but is the MUST.WW formula "
               "(erratum MUST-1); Table 2's MUST.WW row is the one evaluated."])


@register("must-table1", paper=PAPER, kind="table", label="Table 1",
          title="the three 2-stage MUST schemes: multiplicity law of a record, exact against "
                "Monte Carlo")
def table1(ctx: Context) -> Result:
    from ...sampling import StageChain

    n, b, m = 300, 50, 30
    reps = 2000 if ctx.quick else 20000
    rng = ctx.rng(ctx.artifact)
    schemes = {
        "MUST.OW": (MustOW(n, b, m), "WOR(n, b)", "WR(b, m)"),
        "MUST.WW": (MustWW(n, b, m), "WR(n, b)", "WR(b, m)"),
        "MUST.WO": (MustWO(n, b, m), "WR(n, b)", "WOR(b, m)"),
        "MUST.OO": (StageChain(n, [("wor", b), ("wor", m)]), "WOR(n, b)", "WOR(b, m)"),
        "WR": (WithReplacement(n, m), "WR(n, m)", "—"),
        "WOR": (WithoutReplacement(n, m), "WOR(n, m)", "—"),
    }
    kmax = 4
    csv_rows, png_rows, sampler_checks = [], [], []
    exact_pmfs = {}
    for name, (s, first, second) in schemes.items():
        pmf = np.zeros(kmax + 2)
        exact = s.multiplicity().pmf
        pmf[:min(exact.size, kmax + 1)] = exact[:kmax + 1]
        pmf[kmax + 1] = max(0.0, 1.0 - pmf[:kmax + 1].sum())
        exact_pmfs[name] = pmf
        counts = np.zeros(kmax + 2)
        for _ in range(reps):
            sub = s.sample(n, rng)
            full = np.zeros(n, dtype=np.int64)
            full[sub.indices] = sub.counts
            counts += np.bincount(np.minimum(full, kmax + 1), minlength=kmax + 2)
        freq = counts / counts.sum()
        total = reps * n
        se = np.sqrt(np.maximum(pmf * (1 - pmf), 1e-12) / total)
        z = np.abs(freq - pmf) / se
        worst = float(np.max(z[:kmax + 1]))
        sampler_checks.append(Check(
            f"{name}: frequencies of K in privamp's samples match the exact law",
            worst <= 4.5, f"largest deviation {worst:.1f} standard errors over k = 0 … {kmax}"))
        texts = [first, second] + [f"{pmf[k]:.4f} / {freq[k]:.4f}" for k in range(3)]
        png_rows.append((name, texts, [None] * len(texts)))
        csv_rows.append([name, first, second, float(s.eta)] + pmf.tolist() + freq.tolist())
    checks = [
        Check("MUST.WO has exactly the multiplicity law of WR(n, m) (Table 1 †, Corollary 6)",
              bool(np.max(np.abs(exact_pmfs["MUST.WO"] - exact_pmfs["WR"])) < 1e-14)),
        Check("MUST.OO has exactly the law of WOR(n, m) (Table 1: 'the same as WOR(n, m)')",
              bool(np.max(np.abs(exact_pmfs["MUST.OO"] - exact_pmfs["WOR"])) < 1e-14)),
    ] + sampler_checks
    files = [
        write_table(ctx, ["scheme", "stage_1", "stage_2", "eta"]
                    + [f"exact_P(K={k})" for k in range(kmax + 1)] + [f"exact_P(K>{kmax})"]
                    + [f"mc_P(K={k})" for k in range(kmax + 1)] + [f"mc_P(K>{kmax})"],
                    csv_rows),
        write_table_png(
            ctx, "MUST Table 1: the 2-stage schemes, P(K = k) exact / Monte Carlo",
            ["1st stage", "2nd stage", "P(K = 0)", "P(K = 1)", "P(K = 2)"], png_rows,
            col_width=1.55,
            footnote=f"K: copies of one record in the final subsample, n = {n}, b = {b}, "
                     f"m = {m} (chosen: Table 9's experiment 1); {reps:,} subsamples × {n} "
                     "records drawn by privamp's samplers.\nMUST.OO is not "
                     "in the paper's table ('the same as WOR(n, m)'); WR and WOR for "
                     "comparison."),
    ]
    return Result(
        shows="The stages of each 2-stage MUST scheme (Table 1) and, for each, the law of the "
              "number K of copies of one record in the subsample: privamp's exact stage-by-stage "
              "law against the frequencies in subsamples drawn by privamp's samplers; and the "
              "table's two identities (MUST.WO = WR, MUST.OO = WOR).",
        parameters={"n": n, "b": b, "m": m, "Monte Carlo subsamples": reps},
        chosen={"(n, b, m)": "Table 1 is symbolic; Table 9's experiment 1 is used"},
        checks=checks, files=files)


# =============================================================================================
# Figures 5 and S1: η and δ' − δ over (b, m)
# =============================================================================================


def _bm_grid(ctx: Context) -> dict[str, Any]:
    """η and δ'(ε') − δ(ε) at ε = 1 (Δ/σ = 1) for MUST.OW and MUST.WW over m = 100 … 150,
    b = 150 … 200 (n = 1000; the authors' contour_3D_plot.R), shared by Figures 5 and S1."""

    def compute():
        step = 10 if ctx.quick else 1
        ms = np.arange(100, 151, step)
        bs = np.arange(150, 201, step)
        mechs = {"laplace": _mechanism("laplace", 1.0), "gaussian": _mechanism("gaussian", 1.0)}
        base = {k: float(mm.profile().delta(1.0)) for k, mm in mechs.items()}
        out: dict[str, Any] = {"m": ms, "b": bs}
        for name, cls in (("MUST.OW", MustOW), ("MUST.WW", _published_ww)):
            eta = np.empty((bs.size, ms.size))
            diff = {k: np.empty_like(eta) for k in mechs}
            for i, b in enumerate(bs):
                for j, m in enumerate(ms):
                    scheme = cls(1000, int(b), int(m))
                    eta[i, j] = scheme.eta
                    for k, mech in mechs.items():
                        d = amplify(mech, scheme).points([1.0])["delta_amplified"][0]
                        diff[k][i, j] = d - base[k]
            out[name] = {"eta": eta, **diff}
        return out

    return ctx.memo("must-bm-grid", compute)


def _bm_panels(grid) -> list[dict[str, Any]]:
    panels = []
    for name in ("MUST.OW", "MUST.WW"):
        for key, zlabel in (("eta", "η"), ("laplace", "δ' − δ, Laplace Δ/σ = 1"),
                            ("gaussian", "δ' − δ, Gaussian Δ/σ = 1")):
            what = "η" if key == "eta" else f"δ'(ε') − δ(ε), {_MECH_LABEL[key]}"
            panels.append({"x": grid["m"], "y": grid["b"], "z": grid[name][key],
                           "title": f"{name}: {what}", "xlabel": "m (subsample size)",
                           "ylabel": "b (stage-I size)", "zlabel": zlabel})
    return panels


def _bm_checks(grid) -> tuple[list[Check], list[str]]:
    """The §4.1 claims about Figure 5, and the errata they reveal."""
    ow, ww = grid["MUST.OW"], grid["MUST.WW"]
    frac = {k: float(np.mean(ww[k] < ow[k])) for k in ("eta", "laplace", "gaussian")}

    def monotone(key, axis, sign):
        return all(bool(np.all(sign * np.diff(g[key], axis=axis) > 0)) for g in (ow, ww))

    eta_b, eta_m = monotone("eta", 0, 1), monotone("eta", 1, 1)
    eta_m_down = monotone("eta", 1, -1)
    d_b = monotone("laplace", 0, 1) and monotone("gaussian", 0, 1)
    d_b_down = monotone("laplace", 0, -1) and monotone("gaussian", 0, -1)
    d_m = monotone("laplace", 1, 1) and monotone("gaussian", 1, 1)
    checks = [
        Check("MUST.WW has a smaller η than MUST.OW", frac["eta"] == 1.0,
              f"on {frac['eta']:.0%} of the grid"),
        Check("MUST.WW has a smaller δ' − δ than MUST.OW (a stronger effect on δ)",
              frac["laplace"] == 1.0 and frac["gaussian"] == 1.0,
              f"smaller on {frac['laplace']:.0%} (Laplace) and {frac['gaussian']:.0%} "
              "(Gaussian) of the grid"),
        Check("η increases with b", eta_b),
        Check("η decreases with m", eta_m_down,
              "η increases with m everywhere" if eta_m else "η is not monotone in m"),
        Check("δ' − δ increases with b", d_b,
              "δ' − δ decreases with b everywhere" if d_b_down else "not monotone in b"),
        Check("δ' − δ increases with m", d_m),
    ]
    errata = ["MUST-12"]
    if not eta_m_down:
        errata.append("MUST-13")
    if frac["laplace"] < 1.0 or frac["gaussian"] < 1.0:
        errata.append("MUST-F5")
    if not d_b:
        errata.append("MUST-F5b")
    return checks, errata


_BM_FOOT = ("n = 1000, ε = 1, Δ/σ = 1, m = 100 … 150, b = 150 … 200 (the authors' "
            "contour_3D_plot.R); white-box group profiles. The paper labels the first row "
            "'MUST.WO': it is MUST.OW (erratum MUST-12). The authors' plotly call transposes the "
            "axes; here x = m and y = b as labelled.")


@register("must-fig5", paper=PAPER, kind="figure", label="Figure 5",
          title="contours of η and δ' − δ over (b, m) for MUST.OW and MUST.WW")
def figure5(ctx: Context) -> Result:
    from ...plots.reproduce import plot_contours

    grid = _bm_grid(ctx)
    panels = _bm_panels(grid)
    fig = plot_contours(panels, ncols=3, footnote=_BM_FOOT,
                        suptitle="MUST Figure 5: η and δ'(ε') − δ(ε) at ε = 1 over (b, m)")
    return _bm_result(
        ctx, grid, fig,
        "How the amplification parameter η and the change of δ at ε = 1 depend on the "
        "stage-I size b and the subsample size m, for MUST.OW and MUST.WW with the "
        "Laplace and Gaussian mechanisms (contours).")


@register("must-figS1", paper=PAPER, kind="figure", label="Figure S1",
          title="3-D surfaces of η and δ' − δ over (b, m) for MUST.OW and MUST.WW")
def figure_s1(ctx: Context) -> Result:
    from ...plots.reproduce import plot_surfaces

    grid = _bm_grid(ctx)
    panels = _bm_panels(grid)
    order = [0, 3, 1, 4, 2, 5]  # (a), (b) η; (c), (d) Laplace; (e), (f) Gaussian
    letters = "abcdef"
    shown = []
    for letter, i in zip(letters, order, strict=True):
        p = dict(panels[i])
        p["title"] = f"({letter}) {p['title']}"
        shown.append(p)
    fig = plot_surfaces(shown, ncols=2, footnote=_BM_FOOT,
                        suptitle="MUST Figure S1: η and δ'(ε') − δ(ε) at ε = 1 over (b, m)")
    # the surfaces are labelled by what they show: erratum MUST-12 (a row label) is Figure 5's
    return _bm_result(
        ctx, grid, fig,
        "The data of Figure 5 as 3-D surfaces: (a), (b) η; (c), (d) δ' − δ with the "
        "Laplace mechanism; (e), (f) with the Gaussian mechanism; MUST.OW left, MUST.WW "
        "right.", left_out=("MUST-12",))


def _bm_result(ctx: Context, grid, fig, shows: str, left_out: tuple[str, ...] = ()) -> Result:
    """The files and record of MUST Figure 5 or S1 (the same (b, m) grid and checks): ``fig``
    as PNG, the grid as CSV; the errata in ``left_out`` are not this figure's."""
    from .._output import _png

    _png(fig, ctx.path(ctx.artifact, ".png"))
    files = [f"{ctx.artifact}.png", _write_grid(ctx, grid)]
    checks, errata = _bm_checks(grid)
    step = int(grid["m"][1] - grid["m"][0])
    return Result(
        shows=shows,
        parameters={"n": 1000, "eps": 1.0, "Δ/σ": 1.0, "m": "100 … 150", "b": "150 … 200",
                    "grid step": step},
        checks=checks, errata=[e for e in errata if e not in left_out], files=files,
        notes=[f"Quick mode: grid step {step} instead of 1."] if step > 1 else [])


def _write_grid(ctx: Context, grid) -> str:
    rows = []
    for name in ("MUST.OW", "MUST.WW"):
        g = grid[name]
        for i, b in enumerate(grid["b"]):
            for j, m in enumerate(grid["m"]):
                rows.append([name, int(b), int(m), float(g["eta"][i, j]),
                             float(g["laplace"][i, j]), float(g["gaussian"][i, j])])
    return write_table(ctx, ["scheme", "b", "m", "eta", "delta_diff_laplace",
                                  "delta_diff_gaussian"], rows)
