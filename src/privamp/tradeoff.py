"""Trade-off curves and attack risk (f-DP) of a ledger, certified from its privacy profile.

A membership-inference attacker who sees the output of a mechanism on one of two neighbouring
datasets tests "D" against "D′". Its best test at false-positive rate α (FPR: deciding D′ when the
data was D) has true-positive rate TPR(α) = 1 − T(α), where T is the *trade-off function*
(Dong, Roth, Su 2022, "Gaussian differential privacy", Definition 2.1; the optimal false-negative
rate at FPR α, by the Neyman–Pearson lemma). This module reports, for a ledger:

* the TPR at any FPR, as a certified bracket ``[tpr_lower, tpr]`` (:func:`tradeoff_from_profile`);
* the attack advantage max_α (TPR − α) = δ(0), the total variation (Kairouz et al. 2015;
  Dong et al. 2022, §2.4): the bracket of δ at ε = 0;
* a μ-GDP value with its bracket (:func:`gdp_mu_from_profile`): the smallest μ whose Gaussian
  trade-off curve lies below the ledger's at every test whose two error rates are both at
  least ``fpr_min``.

**From the profile to the trade-off curve.** A mechanism satisfies (ε, δ(ε))-DP for every ε ≥ 0
if and only if it is f-DP with f = sup_ε f_{ε,δ(ε)}, where
f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) (Dong et al. 2022, Propositions 2.5 and
2.12). So, for every ordered pair of neighbouring datasets,

    TPR(α) ≤ g(α) := inf_{ε ≥ 0} min(1, δ(ε) + α e^ε, 1 − e^{−ε}(1 − δ(ε) − α)).

The second branch is the first one for the reversed pair (H_{e^ε}(P‖Q) = 1 − e^ε + e^ε
H_{e^{−ε}}(Q‖P)): since the profile covers both orders of every neighbouring pair, the curve is
symmetric. For a pair that is itself symmetric (the Gaussian mechanism) g is exactly 1 − T; for an
asymmetric one (Poisson subsampling under add/remove) it is the symmetrised, convexified curve
(the C_q(f) of Dong et al. 2022, Theorem 4.2 with its Proposition 2.12), which the best attack
on either order can stay below.

**The best attack itself** (:func:`best_attack`, what :meth:`privamp.Accountant.tradeoff`
reports with the PLD engine). Each ordered pair of neighbours is dominated by one orientation's
composed pair (P_o, Q_o) and its reverse by the reversed orientation's
(:func:`reversed_orientation`: remove ↔ add, a group's split (a, b) ↔ (b, a)), so its exact
curve is TPR_o(α) = inf over ε ∈ ℝ of H_{e^ε}(P_o‖Q_o) + α e^ε, whose ε < 0 half is branch 2
read on the reversed orientation's δ; the best attack is max_o TPR_o — min(T, T⁻¹), not its
convex hull. Both ends are certified per orientation exactly as below, so the lower end is a
lower bound on the best attack's TPR for the composed dominating pairs (review finding F1: the
symmetrised curve's lower end was not).

**Certified brackets.** The ledger's profile is known as a bracket δ_low(ε) ≤ δ(ε) ≤ δ_up(ε) at
the points of an ε grid 0 = ε_0 < … < ε_N (:func:`privamp.pld.engine.pld_profile`).

* Upper end: every ε gives a valid bound on g(α), so ``tpr`` = min over the grid of both branches
  with δ_up (a minimum of lines in α), clipped to 1. It is never below the truth.
* Lower end: g is an infimum over *all* ε ≥ 0, so each grid cell [ε_k, ε_{k+1}] is bounded below
  as a whole: δ is non-increasing and e^ε increasing, so on the cell
  δ(ε) + α e^ε ≥ δ_low(ε_{k+1}) + α e^{ε_k}, and 1 − e^{−ε}(1 − δ(ε) − α) ≥
  1 − e^{−ε_k}(1 − δ_low(ε_{k+1}) − α) wherever the branch is below 1 (where 1 − δ − α < 0 it
  exceeds 1 and the minimum with 1 is 1 either way). Beyond ε_N, δ ≥ 0 gives α e^{ε_N} and
  1 − e^{−ε_N}(1 − α). ``tpr_lower`` is the minimum of these, and at least α (a trade-off
  function is at most 1 − α). It is never above g(α).

The two-level evaluation keeps this cheap: every α reads all cells of a coarse grid (spacing
0.01) and the cells of the fine grid (spacing ``eps_step``) within ten coarse cells of the coarse
minimiser, and in any other coarse cell whose bound is still below the fine minimum; a coarse
cell's bound is as valid as a fine one, only looser. The width the cells leave is about
2 × ``eps_step`` relative (measured: ≤ 0.03 % for the Gaussian, μ = 1, FPR ≥ 1e-3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_real
from .errors import InconsistentBoundsError, InvalidParameterError, InvalidTypeError
from .results import Bracket

__all__ = ["TradeoffCurve", "best_attack", "gaussian_tpr", "gdp_mu", "gdp_mu_from_profile",
           "reversed_orientation", "tradeoff_eps_grid", "tradeoff_from_profile"]

#: Spacing of the fine ε grid on which the profile is read (relative width it leaves in TPR:
#: about twice this).
EPS_STEP = 2e-4
#: Spacing of the coarse ε grid every FPR scans in full.
COARSE_STEP = 1e-2
#: Coarse cells on each side of the coarse winner whose fine lines every FPR reads: the coarse
#: bound's looseness (≈ slope × COARSE_STEP) exceeds the curvature's gain over about ten cells.
_HALF_WINDOW = 10
#: Most new FPRs one splitting round of :func:`gdp_mu_from_profile` may add.
_MAX_SPLIT_POINTS = 50_000
#: A coarse cell is refined when its bound is this far (relative) below the best fine value.
_REFINE_GAP = 1e-5


#: Smallest false-positive rate asked about: below it the discretised profile's tail mass
#: (≈ 1e-15) decides everything, and the ε grid would need log(1/α) ≫ 30.
MIN_FPR = 1e-12


def real_values(name: str, values) -> np.ndarray:
    """``values`` (a number or a sequence of numbers) as a 1-D float array, or a typed error
    naming ``name``: strings, complex numbers, booleans and None are refused, not coerced."""
    try:
        arr = np.atleast_1d(np.asarray(values))
    except (TypeError, ValueError):
        raise InvalidTypeError(name, "real numbers", values) from None
    if arr.dtype.kind not in "iuf" or arr.ndim != 1 and arr.size != 1:
        raise InvalidTypeError(name, "real numbers (a number or a flat list)", values)
    arr = arr.astype(float).ravel()
    if arr.size == 0:
        raise InvalidParameterError(name, "at least one value", "[]")
    return arr


def _check_fpr(fpr, name: str = "fpr", upper: float = 1.0) -> np.ndarray:
    a = real_values(name, fpr)
    bad = ~np.isfinite(a) | (a < MIN_FPR) | (a >= upper)
    if np.any(bad):
        raise InvalidParameterError(name, f"false-positive rates in [{MIN_FPR:g}, {upper:g})",
                                    a[bad][0])
    return a


def gaussian_tpr(mu: float, fpr) -> np.ndarray:
    """TPR of the best test against μ-GDP at ``fpr``: Φ(Φ⁻¹(α) + μ) (Dong et al. 2022, eq. (3));
    the reference curve, evaluated in float (not certified)."""
    from scipy.special import ndtr, ndtri

    return ndtr(ndtri(_check_fpr(fpr)) + float(mu))


def tradeoff_eps_grid(eps_max: float, eps_step: float = EPS_STEP) -> np.ndarray:
    """The ε grid the profile is read on: 0 to ``eps_max`` with spacing ``eps_step`` (the
    coarse grid is every ``COARSE_STEP / eps_step``-th point of it)."""
    eps_max = check_real("eps_max", eps_max, "(0, inf)")
    ratio = max(int(round(COARSE_STEP / eps_step)), 1)
    n = int(math.ceil(eps_max / (eps_step * ratio))) * ratio
    return np.arange(n + 1) * eps_step


def _branch_lines(eps: np.ndarray, delta: np.ndarray, shift: bool,
                  reverse: np.ndarray | None = None):
    """The lines of the two branches for grid points (``shift`` False: at each point with its
    own δ — the upper end) or for cells (``shift`` True: cell k = [ε_k, ε_{k+1}] with
    δ(ε_{k+1}) and e^{±ε_k} — the lower end). Branch 2 reads ``reverse`` (the reversed
    pair's profile, default ``delta``)."""
    e_lo = eps[:-1] if shift else eps
    d = delta[1:] if shift else delta
    r = d if reverse is None else (reverse[1:] if shift else reverse)
    x = np.exp(e_lo)
    y = np.exp(-e_lo)
    # branch 1: δ + α e^ε ; branch 2: 1 − e^{−ε}(1 − δ_rev) + α e^{−ε}
    return (np.concatenate([d, 1.0 - y * (1.0 - r)]), np.concatenate([x, y]))


def _envelope(eps: np.ndarray, delta: np.ndarray, alpha: np.ndarray, ratio: int,
              lower: bool, reverse: np.ndarray | None = None) -> np.ndarray:
    """min over the ε grid (points, or cells when ``lower``) of both branches, two-level.

    For each α: the coarse grid (every ``ratio``-th point; its cells are unions of ``ratio``
    fine cells) is scanned in full, the fine lines are read in a window of
    2 × _HALF_WINDOW + 1 coarse cells around the coarse winner, and then every coarse cell
    whose (looser) bound is still below the best fine value is replaced by its own fine
    cells. For the upper end every line is a
    valid bound and the coarse ones are kept; for the lower end a coarse cell's bound is
    valid for the whole cell, so the result — fine cells where they could matter, coarse
    cells elsewhere — is a lower bound on the infimum over every ε ≥ 0."""
    n = eps.size
    if (n - 1) % ratio:
        ratio = 1
    coarse_idx = np.arange(0, n, ratio)
    rev = delta if reverse is None else reverse
    a, b = _branch_lines(eps[coarse_idx], delta[coarse_idx], lower, rev[coarse_idx])
    fa, fb = _branch_lines(eps, delta, lower, rev)
    m = coarse_idx.size - 1 if lower else coarse_idx.size  # coarse lines per branch
    f = n - 1 if lower else n  # fine lines per branch
    best = np.empty(alpha.size)
    cells = 2 * _HALF_WINDOW + 1
    width = cells * ratio  # fine lines in the window of coarse cells around the winner
    span = np.arange(width)
    per = max((1 << 22) // max(a.size + 4 * width, 1), 1)
    for s in range(0, alpha.size, per):
        al = alpha[s:s + per]
        rows = a[None, :] + b[None, :] * al[:, None]
        k = np.argmin(rows, axis=1) % m
        c_lo = np.clip(k - _HALF_WINDOW, 0, max(m - cells, 0))
        c_hi = np.minimum(c_lo + cells - 1, m - 1)
        j = np.minimum(c_lo[:, None] * ratio + span[None, :], f - 1)
        fine = np.min(np.minimum(fa[j] + fb[j] * al[:, None],
                                 fa[f + j] + fb[f + j] * al[:, None]), axis=1)
        per_cell = np.minimum(rows[:, :m], rows[:, m:])
        if not lower:
            best[s:s + per] = np.minimum(fine, np.min(per_cell, axis=1))
            continue
        cols = np.arange(m)[None, :]
        per_cell[(cols >= c_lo[:, None]) & (cols <= c_hi[:, None])] = np.inf  # covered above
        # coarse cells whose bound is more than _REFINE_GAP below the fine value could hold
        # the minimum: read their fine cells instead. The others stay in the minimum as they
        # are (valid, and at most _REFINE_GAP looser): near-ties, e.g. at α → 1 where many
        # cells are within 1e-9 of TPR ≈ 1, are not refined one by one.
        for r in np.flatnonzero(np.min(per_cell, axis=1) < fine * (1 - _REFINE_GAP)):
            x = al[r]
            for c in np.flatnonzero(per_cell[r] < fine[r] * (1 - _REFINE_GAP)):
                j0, j1 = int(c) * ratio, min((int(c) + 1) * ratio, f)
                per_cell[r, c] = float(np.min(np.minimum(
                    fa[j0:j1] + fb[j0:j1] * x, fa[f + j0:f + j1] + fb[f + j0:f + j1] * x)))
        best[s:s + per] = np.minimum(fine, np.min(per_cell, axis=1))
    if lower:
        # beyond the last grid point: δ ≥ 0
        e_n = float(eps[-1])
        tail = np.minimum(alpha * math.exp(e_n), 1.0 - math.exp(-e_n) * (1.0 - alpha))
        best = np.minimum(best, tail)
    return best


def tradeoff_from_profile(eps: np.ndarray, delta_upper: np.ndarray,
                          delta_lower: np.ndarray | None, fpr, *, eps_step: float = EPS_STEP,
                          reverse_upper: np.ndarray | None = None,
                          reverse_lower: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray | None]:
    """Certified bracket on the TPR of the best attack at each ``fpr`` (module docstring).

    ``eps`` is a grid from :func:`tradeoff_eps_grid` (uniform, starting at 0) and the profile
    bracket is given at its points. Returns ``(tpr_upper, tpr_lower)`` (``tpr_lower`` ``None``
    without lower profile values). The margins: the lines are evaluated in floating point with
    a relative error of a few ulp, covered by raising the upper end and lowering the lower end
    by 1e-12 relative.

    With ``reverse_upper``/``reverse_lower`` (the profile of the reversed pair, Q against P)
    the curve is that of one ordered pair: TPR(α) = inf over ε ∈ ℝ of H_{e^ε}(P‖Q) + α e^ε,
    where for ε < 0, H_{e^ε}(P‖Q) = 1 − e^ε + e^ε H_{e^{−ε}}(Q‖P) — branch 2 with the reversed
    pair's δ — exact, not symmetrised (:func:`best_attack`).
    """
    alpha = _check_fpr(fpr)
    eps = np.asarray(eps, dtype=float)
    if eps.ndim != 1 or eps.size < 2 or eps[0] != 0.0 or np.any(np.diff(eps) <= 0):
        raise InvalidParameterError("eps", "an increasing grid starting at 0", eps[:3])
    ratio = max(int(round(COARSE_STEP / eps_step)), 1)
    up = _envelope(eps, np.asarray(delta_upper, dtype=float), alpha, ratio, lower=False,
                   reverse=None if reverse_upper is None else np.asarray(reverse_upper, float))
    up = np.minimum(np.maximum(up * (1 + 1e-12), alpha), 1.0)
    if delta_lower is None:
        return up, None
    low = _envelope(eps, np.asarray(delta_lower, dtype=float), alpha, ratio, lower=True,
                    reverse=None if reverse_lower is None else np.asarray(reverse_lower, float))
    low = np.maximum(low * (1 - 1e-12), alpha)
    bad = low > up * (1 + 1e-9) + 1e-300
    if np.any(bad):  # one of the two ends would be wrong: refuse rather than print it
        i = int(np.flatnonzero(bad)[0])
        raise InconsistentBoundsError(
            f"internal inconsistency: the certified lower TPR {low[i]!r} exceeds the certified "
            f"upper TPR {up[i]!r} at FPR {alpha[i]!r}")
    return up, np.minimum(low, up)


def reversed_orientation(name: str, names) -> str | None:
    """The orientation that dominates the reversed ordered pairs of ``name``'s: ``remove`` ↔
    ``add`` (Poisson under add/remove), ``mixed{a}`` ↔ ``mixed{K−a}`` (a group of K with a
    removals: reversed, K − a removals), ``symmetric`` itself; ``None`` if not among
    ``names``."""
    names = tuple(names)
    if name == "symmetric":
        out = name
    elif name in ("remove", "add"):
        out = "add" if name == "remove" else "remove"
    elif name.startswith("mixed"):
        k = len([n for n in names if n.startswith("mixed")]) + 1  # the group size
        out = f"mixed{k - int(name[len('mixed'):])}"
    else:
        out = None
    return out if out in names else None


def best_attack(eps: np.ndarray, orientations: dict, fpr, *, eps_step: float = EPS_STEP
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """Certified bracket on the best attack's TPR over every ordered pair of neighbours, from
    the profile of each orientation (``{name: (upper, lower or None)}`` on the grid ``eps``).

    An ordered pair of datasets is dominated by one orientation's composed pair and its
    reverse by the reversed orientation's (:func:`reversed_orientation`), so its curve is that
    of :func:`tradeoff_from_profile` with branch 2 on the reversed orientation — both ends
    certified for that pair — and the best attack is the maximum over orientations. This is
    min(T, T⁻¹) for Poisson's two orientations, not its convex hull: the symmetrised curve of
    the ledger's profile (one orientation set, or a missing reversal) is only ever at least
    this. Returns ``None`` when an orientation has no reversal among ``orientations``.
    """
    names = tuple(orientations)
    ups, lows = [], []
    for name in names:
        rev = reversed_orientation(name, names)
        if rev is None:
            return None
        up_o, low_o = orientations[name]
        up_r, low_r = orientations[rev]
        both = low_o is not None and low_r is not None
        up, low = tradeoff_from_profile(eps, up_o, low_o if both else None, fpr,
                                        eps_step=eps_step, reverse_upper=up_r,
                                        reverse_lower=low_r if both else None)
        ups.append(up)
        lows.append(low)
    low = None if any(v is None for v in lows) else np.max(lows, axis=0)
    return np.max(ups, axis=0), low


def gdp_mu_from_profile(eps: np.ndarray, delta_upper: np.ndarray,
                        delta_lower: np.ndarray | None, *, fpr_min: float = 1e-6,
                        tol: float = 1e-4, eps_step: float = EPS_STEP) -> Bracket:
    """:func:`gdp_mu` of the symmetrised curve of one profile bracket."""
    return gdp_mu(lambda a: tradeoff_from_profile(eps, delta_upper, delta_lower, a,
                                                  eps_step=eps_step),
                  fpr_min=fpr_min, tol=tol)


def gdp_mu(tpr_of, *, fpr_min: float = 1e-6, tol: float = 1e-4) -> Bracket:
    """Certified bracket on μ*, the smallest μ such that the ledger's trade-off curve lies above
    the μ-GDP curve G_μ (Dong et al. 2022, Definition 2.7) at every test whose two error rates
    (FPR and FNR) are both at least ``fpr_min`` — μ itself for a μ-GDP mechanism, and the
    Gaussian-DP summary of any other:
    μ* = sup {Φ⁻¹(TPR(α)) − Φ⁻¹(α) : α ∈ [fpr_min, ½], 1 − TPR(α) ≥ fpr_min}.

    The curve is symmetric (f = f⁻¹: module docstring), and μ(α) takes the same value at a
    point (α, β) and at its mirror (β, α) (both are −Φ⁻¹(α) − Φ⁻¹(β)); every test with both
    error rates ≥ fpr_min is such a point or the mirror of one with α ≤ ½.

    μ(α) = Φ⁻¹(TPR(α)) − Φ⁻¹(α) is increasing in TPR and TPR is non-decreasing in α, so on a
    cell [α_i, α_{i+1}] μ(α) ≤ Φ⁻¹(min(TPR_up(α_{i+1}), 1 − fpr_min)) − Φ⁻¹(α_i) (inside the
    set TPR ≤ 1 − fpr_min), over the cells that can meet the set (TPR_low(α_i) ≤ 1 − fpr_min):
    the largest is an upper end. The largest Φ⁻¹(TPR_low(α_i)) − Φ⁻¹(α_i) over points
    certainly in the set (TPR_up(α_i) ≤ 1 − fpr_min) is a lower end. The cells are uniform in
    z = Φ⁻¹(α) (spacing 0.002), and every cell whose bound exceeds the largest point value by
    more than ``tol`` × max(1, μ) is split in ten, three times at most and while a round adds at
    most 50,000 FPRs. A subsampled mechanism's μ(α) peaks at one α and only the cells there
    are split (measured: width 0.04 % at T = 1e3 and 1e4, q = 0.01, σ = 1, in under a second);
    an exact Gaussian's μ(α) is flat, every cell's bound exceeds its points' values by about
    its width in z, and after one round of splitting (24,000 FPRs, ≈ 2 s) the bracket is about
    2e-4 wide ([0.99994, 1.00021] for μ = 1). The range must be stated: as α → 0 the
    discretised profile's tail mass (≈ 1e-15) makes any μ fail, and a subsampled mechanism's
    μ(α) grows slowly there.
    """
    from scipy.special import ndtr, ndtri

    fpr_min = float(_check_fpr(fpr_min, "fpr_min", upper=0.5)[0])
    cap = 1.0 - fpr_min
    z_max = -float(ndtri(fpr_min))
    z = np.linspace(-z_max, 0.0, max(int(math.ceil(z_max / 2e-3)), 2) + 1)

    def alpha_of(zs):
        return np.clip(ndtr(zs), fpr_min, 0.5)

    def evaluate(zs):
        up, low = tpr_of(alpha_of(zs))
        # without a lower curve, only TPR ≥ α is known below
        return up, (alpha_of(zs) if low is None else low)

    def cells(z, up, low):
        with np.errstate(divide="ignore"):
            bound = ndtri(np.minimum(up[1:], cap)) - ndtri(alpha_of(z[:-1]))
        return np.where(low[:-1] <= cap, bound, -np.inf)

    up, low = evaluate(z)
    has_lower = tpr_of(np.array([0.25]))[1] is not None
    for _ in range(3):
        # the cells' excess over the upper curve's own point values is what splitting removes
        with np.errstate(divide="ignore"):
            point = np.where(low <= cap, ndtri(np.minimum(up, cap)) - ndtri(alpha_of(z)),
                             -np.inf)
        target = float(np.max(point)) if np.any(np.isfinite(point)) else 0.0
        split = np.flatnonzero(cells(z, up, low) > target + tol * max(1.0, abs(target)))
        if split.size == 0 or split.size * 9 > _MAX_SPLIT_POINTS:
            break  # (a flat μ(α), e.g. an exact GDP curve, would split every cell again)
        new = (z[split, None] + (z[split + 1] - z[split])[:, None]
               * np.arange(1, 10)[None, :] / 10.0).ravel()
        nu, nl = evaluate(new)
        order = np.argsort(np.concatenate([z, new]), kind="stable")
        z = np.concatenate([z, new])[order]
        up = np.concatenate([up, nu])[order]
        low = np.concatenate([low, nl])[order]
    if not has_lower and up[0] >= cap:
        return Bracket(None, math.inf)  # the upper curve alone cannot place any test in range
    if low[0] > cap:
        # even at FPR = fpr_min the best attack's TPR exceeds 1 − fpr_min: no test has both
        # error rates ≥ fpr_min, and μ(fpr_min) > 2 Φ⁻¹(1 − fpr_min) — more than the range can
        # resolve. Reported as that lower end with no finite upper end (found in review: the
        # empty set gave μ = 0 for a 20-GDP mechanism)
        return Bracket(max(2.0 * float(ndtri(cap)) - 1e-9, 0.0), math.inf)
    # ndtri is accurate to a few ulp; margins of 1e-12 absolute cover it
    mu_up = float(np.max(cells(z, up, low))) + 1e-12
    mu_up = max(mu_up, 0.0)
    if not has_lower:
        return Bracket(None, mu_up)
    with np.errstate(divide="ignore"):
        point = np.where(up <= cap, ndtri(low) - ndtri(alpha_of(z)), -np.inf)
    mu_low = float(np.max(point)) - 1e-12 if np.any(np.isfinite(point)) else 0.0
    return Bracket(min(max(mu_low, 0.0), mu_up), mu_up)


@dataclass(frozen=True)
class TradeoffCurve:
    """A ledger's attack-risk curve: certified TPR brackets at the FPRs asked for.

    ``tpr`` ≥ the best attack's true-positive rate ≥ ``tpr_lower`` at each ``fpr``; the
    certified trade-off function (optimal false-negative rate) is ``fnr = 1 − tpr`` (a lower
    bound: never better for privacy than the truth). ``relation`` is the neighbouring relation
    the curve holds for.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    tpr_lower: np.ndarray | None
    relation: str
    advantage: Bracket
    mu: Bracket | None = None
    fpr_min: float | None = None
    certified: bool = True
    details: dict = field(default_factory=dict)

    @property
    def fnr(self) -> np.ndarray:
        """Certified trade-off values 1 − TPR_upper (never above the true optimal FNR)."""
        return 1.0 - self.tpr

    def points(self) -> list[dict]:
        """``[{"fpr", "tpr", "tpr_lower"}, ...]`` (the CLI's JSON)."""
        low = self.tpr_lower
        return [{"fpr": float(a), "tpr": float(t),
                 "tpr_lower": None if low is None else float(low[i])}
                for i, (a, t) in enumerate(zip(self.fpr, self.tpr, strict=True))]
