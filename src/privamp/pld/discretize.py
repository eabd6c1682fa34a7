"""Pessimistic and optimistic discretisation of a dominating pair onto a uniform loss grid.

Both start from the pair's hockey-stick curve f(α) = D_α(P ‖ Q), which is convex and
non-increasing in α = e^ε, with f(0) = 1.

**Upper ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022).** Take upper
bounds f̂_i at α_i = e^{ih} and the greatest convex minorant of the points; the piecewise-linear
curve through them (joined to (0, 1) on the left and flat at f̂_K on the right) is ≥ f (f is a
convex function below the points) and is itself the hockey-stick curve of a pair supported on the
grid: a kink of slope change q_j at α_j is a point with Q-mass q_j and P-mass α_j q_j, i.e. privacy
loss exactly jh. That pair dominates (P, Q), so its compositions bound the true compositions with
no drift in the number of steps (naive rounding of losses up drifts by one grid step per
composition).

**Lower (drift-free).** Rounding losses *down* to the grid is a valid lower bound but drifts by
up to one grid step per composition. Instead: (1) the upper envelope of supporting lines of f at
the grid points (slopes ``−Q(L > ε)`` bracketed by :meth:`PairCurve.slope_bounds`, each line
lowered by its slope uncertainty over its active range), of ``1 − α`` and of a lower bound on
``D_∞`` is a convex curve below f — a *dominated* pair whose atoms (the kinks) lie between grid
points; (2) neighbouring atoms on either side of a grid point are *merged* in the proportions
that put their likelihood ratio exactly at the grid point (a post-processing of the pair, so the
result is still dominated). Merging loses information only to second order in h, like the
upper side's spreading, so neither side drifts with the number of compositions
(:func:`lower_masses`). Whatever cannot be balanced moves down to the grid point below it.

Rounding: P-masses are rounded up (upper) or down (lower); the slopes use exact subtractions
(Sterbenz) of neighbouring values. Curves values below 1e-300 contribute nothing and are dropped.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._numerics import ULP
from ..errors import AccuracyWarning
from .curves import PairCurve

__all__ = ["lower_masses", "upper_masses"]


def _convex_minorant(x: np.ndarray, y: np.ndarray, *, passes: int = 24) -> np.ndarray:
    """Indices of the vertices of the greatest convex minorant of the points (x_i, y_i), x
    strictly increasing.

    A few vectorised pruning passes (remove every interior vertex on or above the chord of its
    neighbours; never two neighbours in one pass) take away almost all non-vertices; a monotone
    chain (Andrew's algorithm) on the survivors finishes the job in linear time, so long cascades
    of removals cannot make it slow.
    """
    keep = np.arange(x.size)
    for _ in range(passes):
        if keep.size <= 2:
            return keep
        xs, ys = x[keep], y[keep]
        s1 = (ys[1:-1] - ys[:-2]) * (xs[2:] - xs[1:-1])
        s2 = (ys[2:] - ys[1:-1]) * (xs[1:-1] - xs[:-2])
        bad = s1 >= s2  # slope before ≥ slope after: not a strict vertex
        if not np.any(bad):
            return keep
        drop = np.flatnonzero(bad) + 1
        if drop.size > 1:
            adjacent = np.flatnonzero(np.diff(drop) == 1) + 1
            drop = np.delete(drop, adjacent[::2]) if adjacent.size else drop
        mask = np.ones(keep.size, dtype=bool)
        mask[drop] = False
        keep = keep[mask]
    xs, ys = x[keep].tolist(), y[keep].tolist()
    hull: list[int] = []
    for j in range(len(xs)):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            if (ys[i1] - ys[i0]) * (xs[j] - xs[i1]) >= (ys[j] - ys[i1]) * (xs[i1] - xs[i0]):
                hull.pop()
            else:
                break
        hull.append(j)
    return keep[np.array(hull, dtype=np.int64)]


def _upper_envelope(slopes: np.ndarray, intercepts: np.ndarray) -> np.ndarray:
    """Indices of the lines ``c + s α`` (strictly increasing slopes) that appear in their
    maximum over α ∈ ℝ: by duality, the vertices of the upper hull of the points (s, c)."""
    return _convex_minorant(slopes, -intercepts)


#: First stride of the adaptive upper discretisation (:func:`_adaptive_upper`), a power of 2.
_FIRST_STRIDE = 64


def _adaptive_upper(curve: PairCurve, eps: np.ndarray, alpha: np.ndarray,
                    tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the grid points at which the upper discretisation takes the curve's upper
    values, and those values: every point where the chords of fewer points would lose more
    than ``tolerance``, far fewer in the tails.

    Safety does not depend on which points are taken. The greatest convex minorant of upper
    values at *any* subset of the grid points is ≥ f (f is convex and below them), and it is
    the curve of a pair supported on those points, which dominates the true pair; leaving a
    point out only moves its mass to the neighbouring points taken.

    Tightness: on a cell [α_a, α_b] between consecutive points taken, the chord exceeds the
    convex f by at most (α_b − α_a)(m₂ − m₁)/4, with m₁ ≤ f'(α_a+) and m₂ ≥ f'(α_b−): the
    slopes of the neighbouring chords (f is convex), of the chord from the anchor (0, 1) on the
    left and 0 on the right (f is non-increasing). Starting from every
    :data:`_FIRST_STRIDE`-th point, every cell where that bound exceeds ``tolerance`` is halved
    until none is left, so the curve is within ``tolerance`` of the connect-the-dots curve
    through every point (up to the values' own rounding). A pair whose curve exceeds another's
    by at most τ everywhere makes a T-fold composition's δ larger by at most T τ (replace one
    step at a time: the δ of a product is an average of one factor's curve over the other
    factors' P-law), so the engine's ``τ = tail/(4T)`` costs at most a quarter of its tail
    budget. In the bulk the bound exceeds τ on every cell and every point is taken; the gain is
    in the tails, where f is small (the heavy tails of WR, of MUST and of groups span most of
    the grid: 132,000 points down to about a third at n 60000, m 600).
    """
    n = eps.size
    with np.errstate(under="ignore"):
        if not tolerance > 0.0 or n <= 4 * _FIRST_STRIDE:
            return np.arange(n), np.exp(curve.log_upper(eps))
        idx = np.arange(0, n, _FIRST_STRIDE)
        if idx[-1] != n - 1:
            idx = np.append(idx, n - 1)
        f = np.exp(curve.log_upper(eps[idx]))
        while True:
            xs = np.concatenate([[0.0], alpha[idx]])
            ys = np.concatenate([[1.0], f])
            with np.errstate(invalid="ignore", over="ignore"):
                chord = np.diff(ys) / np.diff(xs)  # chord[j]: into point j (0: from the anchor)
                m1 = chord[:-1]
                m2 = np.append(chord[2:], 0.0)
                bound = np.diff(xs[1:]) * (m2 - m1) * 0.25
            split = ~(bound <= tolerance) & (np.diff(idx) > 1)
            if not np.any(split):
                return idx, f
            mids = (idx[:-1][split] + idx[1:][split]) // 2
            new_f = np.exp(curve.log_upper(eps[mids]))
            idx = np.concatenate([idx, mids])
            f = np.concatenate([f, new_f])
            order = np.argsort(idx, kind="stable")
            idx, f = idx[order], f[order]


def upper_masses(curve: PairCurve, h: float, i_lo: int, i_hi: int, *, offset: float = 0.0,
                 lower: bool = False, kink_error: float = 0.0, tolerance: float = 0.0):
    """P-masses of the connect-the-dots pair on losses ``offset + (i_lo + j) h``, and its mass
    at +∞.

    Returns ``(masses, p_inf)`` with ``masses.size == i_hi − i_lo + 1``.

    ``lower=True`` (only for curves whose kinks all lie on the grid, within ``kink_error`` in
    the loss, and inside it: see :meth:`PairCurve.kinks`) joins *lower* values instead: f is
    then affine on every cell up to kinks at most ``kink_error`` from its ends, where the
    chord exceeds f by at most (slope jump ≤ 1) × |α − α*| ≤ α e^h (e^{kink_error} − 1); the
    values are lowered by that much, so the chords lie below f, and so does their greatest
    convex minorant — the curve of a *dominated* pair, exact up to rounding for a discrete
    loss law whose atoms are grid points. Below the first grid point f is affine (no kink
    there) and above the last one it is flat (p∞), so the anchor (0, 1) and the flat right end
    stay valid.

    ``tolerance`` > 0 (upper values of a convex curve, ``curve.convex``) takes the values at
    the points :func:`_adaptive_upper` chooses instead of at every grid point: still an upper
    discretisation, within ``tolerance`` of the full one (its docstring). A curve that is only
    a bound and not convex keeps every point (safe either way, but its minorant gains from
    every dip of the bound between the points, and the chord bound needs convexity).
    """
    idx = np.arange(i_lo, i_hi + 1)
    eps = offset + idx * h
    alpha = np.exp(eps)
    if lower:
        taken = np.arange(idx.size)
        with np.errstate(under="ignore"):
            f = np.exp(curve.log_lower(eps))
        f = np.maximum(f - alpha * math.exp(h) * math.expm1(kink_error) - 4 * ULP * f, 0.0)
    else:
        # a bound that is not convex (BBG Theorem 14, the smaller of two bounds) keeps every
        # point: its dips between points are what its minorant gains, and no chord bound holds
        taken, f = _adaptive_upper(curve, eps, alpha, tolerance if curve.convex else 0.0)
    p_inf = float(f[-1])  # the last grid point is always taken
    live = f > 0
    if not np.any(live):
        masses = np.zeros(idx.size)
        return masses, p_inf
    # points: the anchor (0, 1), then the dots; the curve is flat at f[-1] to the right
    x = np.concatenate([[0.0], alpha[taken]])
    y = np.concatenate([[1.0], f])
    verts = _convex_minorant(x, y)
    vx, vy = x[verts], y[verts]
    slopes = np.diff(vy) / np.diff(vx)  # non-decreasing, ≤ 0
    slopes = np.append(slopes, 0.0)  # flat beyond the last dot
    q = np.diff(slopes)  # slope jump at each vertex except the anchor
    q = np.maximum(q, 0.0)
    grid_vertex = taken[verts[1:] - 1]  # index into the grid
    masses = np.zeros(idx.size)
    if lower:
        # a dominated pair: masses rounded down, no sliver of mass filled in
        masses[grid_vertex] = alpha[grid_vertex] * q * (1 - 8 * ULP)
        return masses, p_inf
    masses[grid_vertex] = alpha[grid_vertex] * q * (1 + 2 * ULP)
    # the flat right end carries p_inf; rounding can leave a sliver of P-mass unplaced
    total = math.fsum(masses.tolist()) + p_inf
    if total < 1.0:
        first = grid_vertex[0]
        masses[first] += (1.0 - total) * (1 + 2 * ULP)
    return masses, p_inf


def _merge_atoms(beta, q, cells, on_grid, alpha, reverse):
    """Merge atoms (likelihood ratio β_k in grid cell c_k, Q-mass q_k) onto the grid ``alpha``.

    A carried atom and the next atom on the other side of a grid point G are merged in the
    proportions that put their mean exactly at G (rounded so that the mean is never below G: the
    merged likelihood ratio is then at least G, and recording it at G only lowers δ). Atoms with
    no grid point between them merge into their mean (which stays in the carry's cell). Returns
    the placed (index, P-mass) lists and the unbalanced remainder ``[(β, q)]``.
    """
    k_pts = alpha.size
    out_idx: list[int] = []
    out_p: list[float] = []
    carry_q = 0.0
    carry_b = 0.0
    carry_c = -1
    order = range(beta.size - 1, -1, -1) if reverse else range(beta.size)
    bl, ql, cl, el = beta.tolist(), q.tolist(), cells.tolist(), on_grid.tolist()
    al = alpha.tolist()
    up = 1 + 8 * ULP
    down = 1 - 8 * ULP
    for k in order:
        b, qm = bl[k], ql[k]
        if el[k]:  # an atom on a grid point stays where it is
            out_idx.append(cl[k])
            out_p.append(b * qm)
            continue
        if carry_q <= 0:
            carry_q, carry_b, carry_c = qm, b, cl[k]
            continue
        # the grid point between the carry and the new atom, next to the carry
        if reverse:
            g_i = carry_c if (carry_c >= 0 and al[carry_c] < carry_b) else carry_c - 1
            between = 0 <= g_i and al[g_i] > b
        else:
            g_i = carry_c + 1
            between = g_i < k_pts and al[g_i] < b
        if not between:
            total = carry_q + qm
            carry_b = (carry_q * carry_b + qm * b) / total
            carry_q = total
            continue
        gpt = al[g_i]
        near, far = abs(carry_b - gpt), abs(b - gpt)
        # the mean must not fall below G: more weight on the atom above G
        need = carry_q * near / far * (down if reverse else up)
        if need <= qm:
            out_idx.append(g_i)
            out_p.append(gpt * (carry_q + need))
            carry_q, carry_b, carry_c = qm - need, b, cl[k]
        else:
            use = min(qm * far / near * (up if reverse else down), carry_q)
            out_idx.append(g_i)
            out_p.append(gpt * (use + qm))
            carry_q -= use
    rest = [(carry_b, carry_q)] if carry_q > 0 else []
    return out_idx, out_p, rest


#: An atom of the loss (a hint, :meth:`PairCurve.atoms`) within this many grid steps above a
#: grid point is moved down to it directly by the lower discretisation.
ATOM_CLOSE = 1.0 / 64.0


def _points_near_atoms(atoms, eps: np.ndarray, reach: float) -> list[tuple[int, float]]:
    """``(i, a − ε_i)`` for every atom position ``a`` (a hint: :meth:`PairCurve.atoms`) and
    grid point ε_i ≠ a within ``reach`` of it (either side)."""
    if atoms is None or len(atoms) == 0:
        return []
    out = []
    for a in np.asarray(atoms, dtype=float).tolist():
        lo = int(np.searchsorted(eps, a - reach, side="left"))
        hi = int(np.searchsorted(eps, a + reach, side="right"))
        out.extend((i, a - float(eps[i])) for i in range(lo, hi) if eps[i] != a)
    return out


def _kept_mean_loss(placed_idx, placed_p, left, alpha, eps, h: float) -> float:
    """E_P[L] of one merging sweep's result: the placed P-masses at their grid losses, the
    unbalanced remainder at the grid point below it (one step below the grid if it falls off)."""
    kept = 0.0
    if placed_idx:
        kept = float(np.dot(np.asarray(placed_p), eps[np.asarray(placed_idx, dtype=np.int64)]))
    if left:
        rb, rm = (np.array(v, dtype=float) for v in zip(*left, strict=True))
        cells = np.searchsorted(alpha, rb, side="right") - 1
        loss = np.where(cells >= 0, eps[np.clip(cells, 0, None)], eps[0] - h)
        kept += float(np.dot(rb * rm, loss))
    return kept


def lower_masses(curve: PairCurve, h: float, i_lo: int, i_hi: int, *,
                 slope_tau: float | None = None, negligible: float = 0.0, offset: float = 0.0,
                 atoms: np.ndarray | None = None):
    """P-masses of a pair dominated by ``curve`` on losses ``offset + (i_lo + j) h``, and its
    mass at +∞.

    1. **Tangent envelope.** At each grid point α_i a line of slope in the curve's subgradient
       (``curve.slope_bounds``) through a lower value, lowered by the slope uncertainty over the
       line's active range, is below f everywhere. The upper envelope c of these lines, of 1 − α
       and of a lower bound on D_∞ is a convex curve below f: a dominated pair whose atoms (the
       kinks β_k, Q-mass the slope jump m_k) lie between grid points.
    2. **Merging onto the grid.** Pairs of neighbouring atoms on either side of a grid point G
       are merged, in proportions x(G − β_k) = y(β_{k+1} − G) that put the merged atom's
       likelihood ratio exactly at G (slightly above, after rounding, never below) — a
       post-processing of the pair, hence dominated again, and only a second-order loss of
       information (no drift with the number of compositions). Mass that cannot be balanced is
       moved down to the grid point below it (a smaller loss, which only lowers δ); mass below
       the grid is dropped. Atoms of negligible mass (together at most ``negligible`` of
       P-mass) skip the merging and move down directly.
    3. **Atoms of the loss** (``atoms``: positions, a hint such as :meth:`PairCurve.atoms`).
       A heavy atom beside a continuous part (Laplace: about half the mass at each end of the
       loss range) merges badly: at the top of the range nothing lies beyond the next grid
       point to balance it, and the unbalanced remainder fell up to a whole step; elsewhere it
       was spread over many cells (Laplace, Poisson 0.01, 10⁴ steps: a bracket 0.14 % wide, 3 %
       at 10⁵). The engine puts each atom :data:`~privamp.pld.grids.ATOM_LIFT` steps above a
       grid point. Every grid point whose secant windows would reach an atom takes narrower
       ones that stop short of it (τ at most a quarter of the distance), so the tangent line
       at the point just below an atom is sharp and meets the next line just above that
       point; that line stands for its level when lines are thinned, and the kink it makes
       (within :data:`ATOM_CLOSE` steps above the point) moves down to the point directly.
       A second line, just above the atom (half-way to :data:`ATOM_CLOSE` steps above the
       point), makes the atom that kink also where continuous mass lies above it in the same
       cell (the atom at 0 of an amplified Gaussian under WR or WOR: without it the line just
       below met the next grid point's line a few hundredths of a step up, and the atom was
       merged across the next grid point with the mass above it).
       When both merging sweeps run, the one that keeps more of E_P[L] is used (merging and
       moving down both lower it): towards the bottom atom, it is the sweep's last remainder
       and moves down by about the lift, not a step.
       Validity does not rest on the hint: the slope bounds hold for any τ > 0, the choice of
       lines and of sweep only decide which dominated pair is built, and moving an atom down
       is the post-processing of step 2. A wrong hint costs tightness only.

    Returns ``(masses, p_inf)``; the masses may sum to less than 1.
    """
    idx = np.arange(i_lo, i_hi + 1)
    k_pts = idx.size
    masses = np.zeros(k_pts)
    grid_eps = offset + idx * h
    grid_alpha = np.exp(grid_eps)
    # the grid points just below an atom (step 3), and the lines: one at every grid point and
    # one just above each such atom, so that the atom is the kink between two lines close to
    # it even where continuous mass lies above it in the same cell
    below_grid = [(i, gap) for i, gap in _points_near_atoms(atoms, grid_eps, ATOM_CLOSE * h)
                  if 0 < gap <= ATOM_CLOSE * h]
    above = [0.5 * (grid_eps[i] + gap + grid_eps[i] + ATOM_CLOSE * h)
             for i, gap in below_grid if i + 1 < k_pts]
    eps = np.unique(np.concatenate([grid_eps, above])) if above else grid_eps
    n_lines = eps.size
    # secant width: small against the cell (curvature error) but not so small that the value
    # slack dominates the slope bounds
    tau = max(h / 256.0, 4 * math.sqrt(curve.lower_slack)) if slope_tau is None else slope_tau
    log_d, (s_lo, s_hi) = curve.lower_with_slopes(eps, tau)
    with np.errstate(under="ignore"):
        d = np.exp(log_d)
        p_inf = float(np.exp(curve.log_lower(np.array([np.inf]))[0]))
    p_inf = max(0.0, p_inf * (1 - 4 * ULP))
    alpha = np.exp(eps)
    near_atoms = _points_near_atoms(atoms, eps, max(ATOM_CLOSE * h, tau))
    if near_atoms:
        # grid points whose secant windows reach an atom (the engine puts the nearest ones a
        # little apart, :func:`privamp.pld.grids._atom_offset`): slopes from secants that stop
        # short of it (a window across it carries the whole slope jump as uncertainty); one
        # call, a window per point
        idx = np.array([i for i, _ in near_atoms], dtype=np.int64)
        window = np.full(n_lines, tau, dtype=float)
        # a point near two atoms takes the narrower window (it must stop short of both)
        np.minimum.at(window, idx, 0.25 * np.abs(np.array([g for _, g in near_atoms])))
        at = np.unique(idx)
        s_lo[at], s_hi[at] = curve.slope_bounds(eps[at], window[at], log_lower=log_d[at])
    # the lines next to an atom: at the grid point just below it and just above it
    below = np.searchsorted(eps, [grid_eps[i] for i, _ in below_grid] + above).tolist()
    s_lo = np.minimum(s_lo, s_hi)
    slope = 0.5 * (s_lo + s_hi)
    unc = 0.5 * (s_hi - s_lo)
    w = np.diff(alpha)
    reach = np.maximum(np.concatenate([[w[0]], w]), np.concatenate([w, [w[-1]]]))
    slack = 16 * ULP * (np.abs(d) + np.abs(slope) * alpha)
    y = d - slack
    # lines of slope −1 are 1 − α itself (or below it); lines below 1 − α or p∞ at their own
    # grid point contribute little — dropping lines only lowers the envelope, which is safe
    ok = (slope > -1.0) & (y > np.maximum(1.0 - alpha, p_inf))
    # thin the lines so that neighbouring slopes differ by at least 8 times their uncertainty:
    # the kinks of lines closer than that are ill-conditioned (they would land anywhere), and
    # dropping lines is always safe; then start every margin at the distance to the neighbours
    cand = np.flatnonzero(ok)
    extra = np.ones(n_lines)
    if cand.size > 1:
        sl, un = slope[cand], unc[cand]
        scale = np.maximum(0.5 * (un[1:] + un[:-1]), 1e-300)
        level = np.floor(np.concatenate([[0.0], np.cumsum(np.diff(sl) / scale)]) / 8.0)
        levels, first_of_level = np.unique(level, return_index=True)
        kept = cand[first_of_level]
        for j in np.flatnonzero(np.isin(cand, below)).tolist():
            # a line next to an atom stands for its level: the two place the atom
            kept[np.searchsorted(levels, level[j])] = cand[j]
        ok[:] = False
        ok[kept] = True
        gaps = np.diff(alpha[kept])
        span = np.maximum(np.concatenate([[gaps[0] if gaps.size else 0.0], gaps]),
                          np.concatenate([gaps, [gaps[-1] if gaps.size else 0.0]]))
        extra[kept] = np.maximum(1.0, 1.5 * span / reach[kept])
    height = y - np.maximum(1.0 - alpha, p_inf)

    def envelope(extra):
        yy = y - unc * reach * extra
        intercept = yy - slope * alpha
        sl = np.concatenate([[-1.0], slope[ok], [0.0]])
        ic = np.concatenate([[1.0], intercept[ok], [p_inf]])
        src = np.concatenate([[-1], np.flatnonzero(ok), [-1]])
        order = np.lexsort((-ic, sl))  # by slope, highest intercept first among equal slopes
        sl, ic, src = sl[order], ic[order], src[order]
        first = np.concatenate([[True], np.diff(sl) > 0])
        sl, ic, src = sl[first], ic[first], src[first]
        env = _upper_envelope(sl, ic)
        return sl[env], ic[env], src[env]

    for _round in range(64):
        es, ec, esrc = envelope(extra)
        if es.size < 2:
            break
        kinks = (ec[:-1] - ec[1:]) / (es[1:] - es[:-1])
        # each grid line must be below f on its active range
        lo_end = np.concatenate([[0.0], kinks])
        hi_end = np.concatenate([kinks, [np.inf]])
        grid = esrc >= 0
        gi = esrc[grid]
        dist = np.maximum(alpha[gi] - lo_end[grid], hi_end[grid] - alpha[gi])
        need = dist / reach[gi]
        bad = (need > extra[gi] * (1 - 1e-12)) & (unc[gi] > 0)
        if not np.any(bad):
            break
        # lower each bad line by the margin its range needs (margins only grow, so this
        # settles); a line whose margin would eat half its height above max(1 − α, p∞) carries
        # no information and is dropped instead (dropping a line only lowers the envelope)
        idx_bad = gi[bad]
        grow = need[bad] * 1.5
        hopeless = unc[idx_bad] * reach[idx_bad] * grow > 0.5 * height[idx_bad]
        ok[idx_bad[hopeless]] = False
        extra[idx_bad[~hopeless]] = grow[~hopeless]
    else:  # pragma: no cover - the margins settle in a few rounds for every curve tested
        # last resort, still valid: the dominated pair whose curve is max(1 − α, p∞)
        warnings.warn("lower PLD: the tangent margins did not settle; the lower end of the "
                      "bracket falls back to a trivial dominated pair", AccuracyWarning,
                      stacklevel=3)
        if p_inf < 1.0:
            k = math.floor((math.log1p(-p_inf) - offset) / h) - i_lo
            if 0 <= k < k_pts:
                masses[k] += (1.0 - p_inf) * (1 - 4 * ULP)
        return masses, p_inf
    if es.size < 2:
        return masses, p_inf
    q = np.maximum(es[1:] - es[:-1], 0.0)  # Q-mass of each kink
    # the kinks rounded down (each a quotient of two differences, a few roundings): an atom
    # moved to a smaller likelihood ratio only lowers the curve. Exactly, Σ β_k q_k telescopes
    # to 1 − p∞; rounded, it came out 1e-16 above, and just below the loss range, where
    # f = 1 − α leaves no slack, the step's curve was 1e-16 above f (review 35)
    beta = kinks * (1 - 8 * ULP)
    live = (q > 0) & (beta > 0)
    beta, q = beta[live], q[live]
    rest: list = []
    # from here on: the grid
    eps, alpha = grid_eps, grid_alpha
    if below_grid:
        # an atom of the loss lands just above the grid point below it (its tangent lines meet
        # there): it moves down to that point directly, by at most ATOM_CLOSE steps, instead
        # of being merged with far-away mass on the other side of the next grid point
        close = np.zeros(beta.size, dtype=bool)
        lb = np.log(beta)
        for i, _ in below_grid:
            close |= (beta >= alpha[i]) & (lb - eps[i] <= ATOM_CLOSE * h) & (
                beta < (alpha[i + 1] if i + 1 < k_pts else np.inf))
        if np.any(close):
            rest = list(zip(beta[close].tolist(), q[close].tolist(), strict=True))
            beta, q = beta[~close], q[~close]
    # merge neighbouring atoms on either side of a grid point (module doc), sweeping towards
    # the lighter tail so that the one unbalanced remainder is small
    cells = np.searchsorted(alpha, beta, side="right") - 1
    on_grid = (cells >= 0) & (alpha[np.clip(cells, 0, k_pts - 1)] == beta)
    if negligible > 0 and beta.size:
        p_mass = beta * q
        order = np.argsort(p_mass, kind="stable")
        small = order[np.cumsum(p_mass[order]) <= negligible]
        if small.size:
            keep = np.ones(beta.size, dtype=bool)
            keep[small] = False
            rest += list(zip(beta[small].tolist(), q[small].tolist(), strict=True))
            beta, q, cells, on_grid = beta[keep], q[keep], cells[keep], on_grid[keep]
    # sweep towards the end with the lighter atoms; try the other way if a remainder is left
    # (when both run, keep the one that keeps more of E_P[L]: merging and moving down both
    # lower it, so it measures what each sweep gave away — the heavy atom at one end of a
    # Laplace loss falls a whole step in one direction, a light kink half a step in the other)
    light_end_right = beta.size == 0 or beta[-1] * q[-1] <= beta[0] * q[0]
    best = None
    for reverse in ((False, True) if light_end_right else (True, False)):
        placed_idx, placed_p, left = _merge_atoms(beta, q, cells, on_grid, alpha, reverse)
        cost = sum(b * m for b, m in left)
        if cost <= negligible + 1e-300 and best is None:
            best = (0.0, placed_idx, placed_p, left)
            break
        kept = _kept_mean_loss(placed_idx, placed_p, left, alpha, eps, h)
        if best is None or kept > best[0]:
            best = (kept, placed_idx, placed_p, left)
    _, placed_idx, placed_p, left = best
    rest = rest + left
    if placed_idx:
        np.add.at(masses, np.array(placed_idx), np.array(placed_p) * (1 - 8 * ULP))
    if rest:  # the remainder moves down to the grid point below it (all at once)
        rb, rm = (np.array(v, dtype=float) for v in zip(*rest, strict=True))
        cells_rest = np.searchsorted(alpha, rb, side="right") - 1
        keep = cells_rest >= 0  # below the grid: dropped (only lowers δ)
        np.add.at(masses, np.minimum(cells_rest[keep], k_pts - 1),
                  rb[keep] * rm[keep] * (1 - 8 * ULP))
    return np.maximum(masses, 0.0), p_inf
