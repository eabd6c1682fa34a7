"""Attack risk (f-DP) of a ledger: certified trade-off curves, advantage, μ-GDP, calibration.

References, all computed here independently of privamp's PLD code:

* the Gaussian mechanism composed T times is μ-GDP with μ = √T Δ/σ, and its trade-off curve is
  exactly G_μ: TPR(α) = Φ(Φ⁻¹(α) + μ), advantage 2Φ(μ/2) − 1 (Dong, Roth, Su 2022, eq. (3),
  Corollary 3.3); the issue's reference: σ = √3, T = 3 → δ(1) = 0.126936, TPR(0.1) = 0.38914;
* randomized response composed T times by brute force: its privacy loss is ε₀(2K − T) with K
  binomial, its profile a finite sum, and the profile's trade-off curve the minimum of the two
  branches over ε ∈ {0} ∪ {loss atoms ≥ 0} (between atoms each branch is monotone in e^{±ε});
* one step of the Poisson-subsampled Gaussian from the closed forms of its two orientations
  (written out below with SciPy), the curve's infimum taken on a dense ε grid.
"""

from __future__ import annotations

import json
import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from privamp import Accountant, GaussianMechanism, LaplaceMechanism, Poisson
from privamp.calibrate import calibrate_sigma_risk
from privamp.cli import main
from privamp.errors import InvalidParameterError
from privamp.mechanisms.randomized_response import RandomizedResponse
from privamp.sampling import WithoutReplacement
from privamp.tradeoff import gaussian_tpr, tradeoff_eps_grid, tradeoff_from_profile

FPRS = np.array([1e-6, 1e-4, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999])


def _assert_bracket(curve, exact, rtol=0.0):
    """tpr_lower ≤ exact ≤ tpr (up to ``rtol`` for references that are themselves rounded)."""
    assert np.all(curve.tpr_lower <= exact * (1 + rtol) + 1e-300), (curve.tpr_lower, exact)
    assert np.all(curve.tpr >= exact * (1 - rtol)), (curve.tpr, exact)


def _assert_shape(curve):
    a = curve.fpr
    assert np.all(curve.tpr <= 1.0) and np.all(curve.tpr >= a)
    if curve.tpr_lower is not None:
        assert np.all(curve.tpr_lower >= a) and np.all(curve.tpr_lower <= curve.tpr)
    order = np.argsort(a)
    assert np.all(np.diff(curve.tpr[order]) >= -1e-12)  # non-decreasing in the FPR


# ---- the Gaussian: exact G_μ -------------------------------------------------------------


def test_issue_reference():
    acc = Accountant().add(GaussianMechanism(sigma=math.sqrt(3)), 3)
    d = acc.deltas([1.0])[0]
    assert d.lower <= 0.1269367 <= d.upper and d.upper - d.lower < 1e-4 * d.upper
    t = acc.tpr(0.1)
    assert t.lower <= 0.389143692 <= t.upper and round(t.upper, 5) == 0.38915
    mu = acc.gdp_mu()
    assert mu.lower <= 1.0 <= mu.upper and mu.upper - mu.lower < 1e-3


@pytest.mark.parametrize(("sigma", "steps", "with_mu"), [
    (math.sqrt(3), 3, True), (1.0, 1, False), (0.5, 1, False), (20.0, 10, False),
    (3.0, 100, False), (50.0, 1, True), (0.3, 4, True)])
def test_gaussian_composition_is_exact_gdp(sigma, steps, with_mu):
    acc = Accountant().add(GaussianMechanism(sigma=sigma), steps)
    mu = math.sqrt(steps) / sigma
    curve = acc.tradeoff(FPRS, fpr_min=1e-6 if with_mu else None)
    _assert_shape(curve)
    _assert_bracket(curve, gaussian_tpr(mu, FPRS), rtol=1e-12)
    # tight: within 0.1 % of the TPR (or 1e-6 absolute where the TPR is tiny)
    assert np.all(curve.tpr - curve.tpr_lower <= 1e-3 * curve.tpr + 1e-6)
    adv = 2 * ndtr(mu / 2) - 1
    assert curve.advantage.lower <= adv * (1 + 1e-12) and curve.advantage.upper >= adv
    if with_mu:
        assert curve.mu.lower <= mu * (1 + 1e-9) and curve.mu.upper >= mu * (1 - 1e-9)
        assert curve.mu.upper - curve.mu.lower <= 1e-3 * max(mu, 1.0)


def test_gaussian_in_mpmath_at_extreme_fprs():
    """TPR at FPR 1e-6 and 1 − 1e-6 against 50-digit mpmath."""
    mp.mp.dps = 50
    acc = Accountant().add(GaussianMechanism(sigma=0.8), 2)
    mu = mp.sqrt(2) / mp.mpf("0.8")
    alphas = [1e-6, 1 - 1e-6]
    curve = acc.tradeoff(alphas, fpr_min=None)
    for a, lo, up in zip(alphas, curve.tpr_lower, curve.tpr, strict=True):
        exact = mp.ncdf(mp.sqrt(2) * mp.erfinv(2 * mp.mpf(a) - 1) + mu)
        assert lo <= exact <= up


# ---- randomized response: brute force ---------------------------------------------------


def _rr_reference(p: float, steps: int, alphas) -> np.ndarray:
    """g(α) of T-fold randomized response from its exact loss law (mpmath, 40 digits)."""
    mp.mp.dps = 40
    p = mp.mpf(p)
    e0 = mp.log(p / (1 - p))
    atoms = [(e0 * (2 * k - steps), mp.binomial(steps, k) * p**k * (1 - p) ** (steps - k))
             for k in range(steps + 1)]

    def delta(e):
        return sum((w * (1 - mp.exp(e - loss)) for loss, w in atoms if loss > e), mp.mpf(0))

    points = [mp.mpf(0)] + [loss for loss, _ in atoms if loss >= 0]
    out = []
    for a in alphas:
        a = mp.mpf(a)
        best = mp.mpf(1)
        for e in points:
            d = delta(e)
            best = min(best, d + a * mp.exp(e), 1 - mp.exp(-e) * (1 - d - a))
        out.append(float(best))
    return np.array(out)


@pytest.mark.parametrize(("p", "steps"), [(0.75, 1), (0.75, 5), (0.6, 40), (0.95, 3),
                                          (0.51, 200)])
def test_randomized_response_brute_force(p, steps):
    acc = Accountant().add(RandomizedResponse(p), steps)
    alphas = np.array([1e-4, 0.01, 0.1, 0.37, 0.5, 0.8])
    curve = acc.tradeoff(alphas, fpr_min=None)
    _assert_shape(curve)
    ref = _rr_reference(p, steps, alphas)
    _assert_bracket(curve, ref, rtol=1e-9)
    assert np.all(curve.tpr - curve.tpr_lower <= 2e-3 * curve.tpr + 1e-6)


def test_one_step_pure_dp_closed_form():
    """One step of ε₀-DP randomized response: TPR = min(1, e^ε₀ α, 1 − e^−ε₀ (1 − α))."""
    e0 = math.log(3)
    acc = Accountant().add(RandomizedResponse(0.75), 1)
    curve = acc.tradeoff(FPRS, fpr_min=None)
    exact = np.minimum(1, np.minimum(np.exp(e0) * FPRS, 1 - np.exp(-e0) * (1 - FPRS)))
    _assert_bracket(curve, exact, rtol=1e-9)


# ---- one Poisson-subsampled Gaussian step, from closed forms -----------------------------


def _poisson_gaussian_profile(theta, q, eps):
    """max over the remove and add orientations of the subsampled Gaussian's δ(ε), written
    out from the mixture (1 − q) N(0, 1) + q N(θ, 1) against N(0, 1)."""
    x = np.exp(eps)
    out = np.zeros_like(eps)
    ok = x > 1 - q
    xs = (np.log((x[ok] - (1 - q)) / q) + theta**2 / 2) / theta
    rem = (1 - q) * ndtr(-xs) + q * ndtr(theta - xs) - x[ok] * ndtr(-xs)
    out[ok] = rem
    inv = np.exp(-eps)
    ok2 = inv > 1 - q
    xa = (np.log((inv[ok2] - (1 - q)) / q) + theta**2 / 2) / theta
    add = ndtr(xa) - x[ok2] * ((1 - q) * ndtr(xa) + q * ndtr(xa - theta))
    out[ok2] = np.maximum(out[ok2], add)
    return np.maximum(out, 0.0)


def _best_attack_one_step(q, s, a):
    """Exact best TPR at FPR a over both orders of one Poisson-subsampled Gaussian step
    (Neyman–Pearson: the likelihood ratio is monotone in the output, so each order's best test
    is a threshold test), from SciPy's normal CDF and a root-find."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    t2 = s * norm.isf(a)  # null N(0, s²), reject for large outputs
    order2 = (1 - q) * norm.sf(t2 / s) + q * norm.sf((t2 - 1) / s)
    t1 = brentq(lambda t: (1 - q) * norm.cdf(t / s) + q * norm.cdf((t - 1) / s) - a,
                -60, 60, xtol=1e-15)  # null the mixture, reject for small outputs
    return max(norm.cdf(t1 / s), order2)


@pytest.mark.parametrize(("sigma", "q"), [(1.0, 0.01), (0.5, 0.2), (2.0, 0.5), (1.0, 1.0),
                                          (1.0, 0.5)])
def test_poisson_gaussian_one_step_best_attack(sigma, q):
    """The curve is the best attack over both orders — min(T, T⁻¹), not its convex hull —
    and both ends hold against the exact Neyman–Pearson tests."""
    acc = Accountant().add(GaussianMechanism(sigma=sigma), 1, scheme=Poisson(q))
    alphas = np.array([1e-4, 0.01, 0.1, 0.4, 0.5, 0.9])
    curve = acc.tradeoff(alphas, fpr_min=None)
    _assert_shape(curve)
    ref = np.array([_best_attack_one_step(q, sigma, a) for a in alphas])
    _assert_bracket(curve, ref, rtol=1e-9)
    # below (or at) the symmetrised curve of the profile, which convexifies
    eps = np.linspace(0, 15, 150_001)
    d = _poisson_gaussian_profile(1 / sigma, q, eps)
    sym = np.array([np.min(np.minimum(d + a * np.exp(eps), 1 - np.exp(-eps) * (1 - d - a)))
                    for a in alphas])
    assert np.all(curve.tpr <= np.minimum(sym, 1.0) * (1 + 1e-6))


# ---- many steps: consistency with the ε(δ) and δ(ε) queries --------------------------------


@pytest.mark.parametrize("scheme", [Poisson(0.01), WithoutReplacement(1000, 10), None])
def test_consistent_with_profile_queries(scheme):
    mech = (GaussianMechanism(sigma=1.5) if not isinstance(scheme, WithoutReplacement)
            else GaussianMechanism(sigma=3.0, relation="substitute"))
    acc = Accountant().add(mech, 200, scheme=scheme)
    alphas = np.array([1e-3, 0.05, 0.3])
    curve = acc.tradeoff(alphas)
    _assert_shape(curve)
    # every ε gives a bound: the upper TPR is below δ_up(ε) + α e^ε at the ε queried
    for e in (0.0, 0.5, 1.0, 2.0):
        d = acc.delta(e)
        assert np.all(curve.tpr <= d.upper + alphas * math.exp(e) + 1e-12)
    adv = acc.delta(0.0)
    assert curve.advantage.upper >= adv.lower and (
        curve.advantage.lower is None or curve.advantage.lower <= adv.upper)


def test_rdp_backend_gives_an_upper_end_only():
    pld = Accountant().add(GaussianMechanism(sigma=1.0), 100, scheme=Poisson(0.05))
    rdp = Accountant("rdp").add(GaussianMechanism(sigma=1.0), 100, scheme=Poisson(0.05))
    a = np.array([1e-3, 0.1])
    c_pld, c_rdp = pld.tradeoff(a, fpr_min=None), rdp.tradeoff(a, fpr_min=None)
    assert c_rdp.tpr_lower is None and c_rdp.mu is None
    assert np.all(c_rdp.tpr >= c_pld.tpr_lower)


def test_laplace_and_shuffle_ledgers():
    from privamp import Shuffle

    acc = Accountant().add(LaplaceMechanism(scale=2.0), 20, scheme=Poisson(0.1))
    _assert_shape(acc.tradeoff([0.01, 0.2]))
    sh = Accountant().add(GaussianMechanism(sigma=1.0, relation="substitute"), 10,
                          scheme=Shuffle(100, 10), relation="substitute")
    c = sh.tradeoff([0.01, 0.2], fpr_min=None)
    _assert_shape(c)
    assert c.details.get("lower_from")


# ---- vector queries -----------------------------------------------------------------------


def test_epsilons_match_single_queries():
    acc = Accountant().add(GaussianMechanism(sigma=1.0), 1000, scheme=Poisson(0.01))
    deltas = [1e-3, 1e-5, 1e-8]
    many = acc.epsilons(deltas)
    for d, b in zip(deltas, many, strict=True):
        one = Accountant().add(GaussianMechanism(sigma=1.0), 1000,
                               scheme=Poisson(0.01)).epsilon(d)
        assert b.lower <= one.upper and one.lower <= b.upper
        assert b.width <= 1e-3 * b.upper
    assert acc.shared_grid is False  # restored


def test_deltas_match_single_queries():
    acc = Accountant().add(GaussianMechanism(sigma=1.0), 1000, scheme=Poisson(0.01))
    eps = [0.0, 0.5, 1.0, 2.0]
    for e, b in zip(eps, acc.deltas(eps), strict=True):
        one = acc.delta(e)
        assert b.lower <= one.upper and one.lower <= b.upper


def test_profile_floor_from_eps_grid():
    eps = tradeoff_eps_grid(3.0)
    assert eps[0] == 0 and (eps.size - 1) % 50 == 0 and eps[-1] >= 3.0
    up, low = tradeoff_from_profile(eps, np.zeros(eps.size), np.zeros(eps.size), [0.5])
    assert up[0] == pytest.approx(0.5) and low[0] == pytest.approx(0.5)  # no leakage: TPR = α


# ---- calibration --------------------------------------------------------------------------


def test_calibrate_to_tpr_is_tight_and_safe():
    target = float(ndtr(ndtri(0.1) + 1.0))  # μ = 1 at FPR 0.1: σ = √3 for 3 steps
    res = calibrate_sigma_risk(steps=3, tpr=target, fpr=0.1, rtol=1e-4)
    assert res.achieved <= target
    assert math.sqrt(3) <= res.value <= math.sqrt(3) * (1 + 1e-3)
    below = Accountant().add(GaussianMechanism(sigma=res.value * (1 - 1e-4)), 3).tpr(0.1)
    assert below.upper > target


def test_calibrate_to_advantage():
    res = calibrate_sigma_risk(steps=500, advantage=0.1, scheme=Poisson(0.02))
    acc = Accountant().add(GaussianMechanism(sigma=res.value), 500, scheme=Poisson(0.02))
    assert acc.advantage().upper <= 0.1 and res.achieved <= 0.1
    more = Accountant().add(GaussianMechanism(sigma=res.value * (1 - 2e-4)), 500,
                            scheme=Poisson(0.02))
    assert more.advantage().upper > 0.1


@pytest.mark.parametrize("kw", [dict(tpr=0.05, fpr=0.1), dict(tpr=0.5), dict(advantage=1.0),
                                dict(advantage=0.1, fpr=0.1), dict(),
                                dict(tpr=0.5, fpr=0.1, advantage=0.1), dict(tpr=math.nan,
                                                                            fpr=0.1)])
def test_calibrate_bad_input(kw):
    with pytest.raises(InvalidParameterError):
        calibrate_sigma_risk(steps=3, **kw)


# ---- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("fpr", [0.0, 1.0, -0.1, math.nan, math.inf, [], [0.1, 2.0]])
def test_bad_fpr(fpr):
    acc = Accountant().add(GaussianMechanism(sigma=1.0), 2)
    with pytest.raises(InvalidParameterError, match="fpr"):
        acc.tradeoff(fpr)


@pytest.mark.parametrize("fpr_min", [0.0, 0.5, math.nan, -1.0])
def test_bad_fpr_min(fpr_min):
    acc = Accountant().add(GaussianMechanism(sigma=1.0), 2)
    with pytest.raises(InvalidParameterError, match="fpr_min"):
        acc.tradeoff([0.1], fpr_min=fpr_min)


def test_empty_ledger_and_bad_vectors():
    with pytest.raises(InvalidParameterError):
        Accountant().tradeoff([0.1])
    acc = Accountant().add(GaussianMechanism(sigma=1.0), 2)
    for bad in ([], [0.0], [1.0], [math.nan]):
        with pytest.raises(InvalidParameterError):
            acc.epsilons(bad)
    for bad in ([], [-1.0], [math.inf]):
        with pytest.raises(InvalidParameterError):
            acc.deltas(bad)


# ---- the command line ---------------------------------------------------------------------


def test_cli_tradeoff_json(capsys):
    assert main(["tradeoff", "--mechanism", "gaussian", "--sigma", repr(math.sqrt(3)),
                 "--steps", "3", "--fpr", "0.1", "0.01", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["fpr"] for p in out["points"]] == [0.1, 0.01]
    p = out["points"][0]
    assert p["tpr_lower"] <= 0.389143692 <= p["tpr"]
    assert out["mu_lower"] <= 1.0 <= out["mu"]
    assert out["advantage_lower"] <= 2 * ndtr(0.5) - 1 <= out["advantage"]


def test_cli_tradeoff_text(capsys):
    assert main(["tradeoff", "--mechanism", "gaussian", "--sigma", "2", "--sampling", "poisson",
                 "--rate", "0.01", "--steps", "100", "--fpr", "0.1"]) == 0
    text = capsys.readouterr().out
    assert "TPR of the best attack" in text and "mu-GDP" in text and "advantage" in text


@pytest.mark.parametrize("args", [
    ["--fpr", "1.5"], ["--fpr", "nan"], ["--fpr", "0.1", "--fpr-min", "0.6"],
    ["--fpr", "0.1", "--accountant", "fourier"]])
def test_cli_tradeoff_bad_input(args, capsys):
    assert main(["tradeoff", "--mechanism", "gaussian", "--sigma", "1", "--steps", "3",
                 *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("privamp: error:")


def test_cli_calibrate_risk(capsys):
    assert main(["calibrate", "--mechanism", "gaussian", "--steps", "3", "--target-tpr",
                 "0.38914369", "--fpr", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tpr"] <= 0.38914369 and out["sigma"] >= math.sqrt(3)


@pytest.mark.parametrize("args", [
    ["--target-tpr", "0.5"], ["--target-tpr", "0.05", "--fpr", "0.1"],
    ["--target-advantage", "0.1", "--delta", "1e-5"], ["--target-epsilon", "1"],
    ["--target-epsilon", "1", "--delta", "1e-5", "--target-advantage", "0.1"],
    ["--target-advantage", "0.1", "--fpr", "0.1"], [],
    ["--target-advantage", "0.1", "--calibrate", "steps"]])
def test_cli_calibrate_risk_bad_input(args, capsys):
    assert main(["calibrate", "--mechanism", "gaussian", "--steps", "3", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("privamp: error:")


def test_cli_plot_tradeoff(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "t.png"
    assert main(["plot", "tradeoff", "--mechanism", "gaussian", "--sigma", "1", "--n", "1000",
                 "--m", "10", "--steps", "50", "--points", "16", "--out", str(out),
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert out.stat().st_size > 10_000
    assert [c["scheme"] for c in res["curves"]] == ["poisson", "wor"]


def test_guide_example_is_current(capsys):
    """The guide's ``privamp tradeoff`` console block is what the command prints, exactly."""
    import pathlib
    import shlex

    page = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guide" / "attack-risk.md"
    text = page.read_text("utf-8")
    block = text.split("$ privamp tradeoff", 1)[1].split("```", 1)[0]
    command, expected = block.split("\n", 1)
    assert main(["tradeoff", *shlex.split(command)]) == 0
    assert capsys.readouterr().out.strip() == expected.strip()


def test_cli_several_deltas_and_epsilons(capsys):
    base = ["--mechanism", "gaussian", "--sigma", "1", "--sampling", "poisson", "--rate",
            "0.01", "--steps", "1000", "--json"]
    assert main(["epsilon", *base, "--delta", "1e-5", "1e-8"]) == 0
    many = json.loads(capsys.readouterr().out)
    assert many["delta"] == [1e-5, 1e-8] and len(many["epsilon"]) == 2
    assert main(["epsilon", *base, "--delta", "1e-8"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert isinstance(one["epsilon"], float)
    assert many["epsilon_lower"][1] <= one["epsilon"] and one["epsilon_lower"] <= many["epsilon"][1]
    assert main(["delta", *base, "--epsilon", "0", "1"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["epsilon"] == [0.0, 1.0] and d["delta"][0] > d["delta"][1]
    assert main(["epsilon", *base, "--delta", "1e-5", "1.5"]) == 2
    assert capsys.readouterr().err.startswith("privamp: error: --delta")


@pytest.mark.parametrize("seed", range(25))
def test_envelope_against_exact_infimum_on_random_discrete_pairs(seed):
    """:func:`tradeoff_from_profile` (two-level grid, windows, refined cells) against the exact
    infimum of a random finite loss law: between loss atoms both branches are monotone in
    e^{±ε}, so the infimum over ε ≥ 0 is attained at 0 or at an atom."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 12))
    losses = np.sort(rng.uniform(-3, 6 if seed % 3 else 14, k))
    w = rng.dirichlet(np.ones(k))
    # a valid pair needs Σ w e^{-l} ≤ 1 (Q is a sub-probability): rescale the losses' weights
    w = w / max(1.0, float(np.sum(w * np.exp(-losses))))

    def delta(e):
        e = np.atleast_1d(e)[:, None]
        return np.sum(np.where(losses[None, :] > e, w * (1 - np.exp(e - losses[None, :])), 0),
                      axis=1)

    eps = tradeoff_eps_grid(float(max(losses.max(), 1.0)) + 1.0)
    d = delta(eps)
    alphas = np.sort(rng.uniform(1e-4, 0.999, 6))
    up, low = tradeoff_from_profile(eps, d, d, alphas)
    points = np.concatenate([[0.0], losses[losses >= 0]])
    dp = delta(points)
    exact = np.array([min(1.0, float(np.min(np.minimum(
        dp + a * np.exp(points), 1 - np.exp(-points) * (1 - dp - a))))) for a in alphas])
    exact = np.maximum(exact, alphas)
    assert np.all(low <= exact * (1 + 1e-9)), (low, exact)
    assert np.all(up >= exact * (1 - 1e-9)), (up, exact)
    assert np.all(up - low <= 2e-3 * up + 1e-9)


def test_group_ledger_tradeoff(capsys):
    """A ledger of groups of K records has its trade-off curve too (the profile path), and
    groups are riskier than single records."""
    one = Accountant().add(GaussianMechanism(sigma=2.0), 200, scheme=Poisson(0.01))
    four = Accountant().add(GaussianMechanism(sigma=2.0), 200, scheme=Poisson(0.01),
                            group_size=4)
    a = [0.01, 0.1]
    c1, c4 = one.tradeoff(a, fpr_min=None), four.tradeoff(a, fpr_min=None)
    _assert_shape(c4)
    assert np.all(c4.tpr_lower > c1.tpr)
    assert main(["tradeoff", "--mechanism", "gaussian", "--sigma", "2", "--sampling", "poisson",
                 "--rate", "0.01", "--steps", "200", "--fpr", "0.1", "--group-size", "4",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["group_size"] == 4
    assert out["points"][0]["tpr_lower"] <= c4.tpr[1] and c4.tpr_lower[1] <= out["points"][0]["tpr"]
