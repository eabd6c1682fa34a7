"""Random allocation (balls-in-bins): the exact dominating pair of one round, certified.

**The scheme.** Each record is used in exactly k of t steps, the k steps chosen uniformly; every
step releases a Gaussian (or another mechanism) on the records allocated to it. k = 1 is
balls-in-bins: the data are cut into t batches by throwing every record into a uniformly random
bin. A *round* is one pass of t steps; rounds compose (several epochs). Analysed under add/remove
(Feldman & Shenfeld 2025, "Privacy amplification by random allocation", arXiv 2502.08202; and
"Efficient privacy loss accounting for subsampling and random allocation", arXiv 2602.17284).

**The pair of one round, k = 1.** With (P, Q) the dominating pair of one step (the step's output
with the record against without it; for the Gaussian with θ = Δ/σ, P = N(θ, 1), Q = N(0, 1)),
one round is dominated by

    P_t = (1/t) Σ_i Q ⊗ … ⊗ P (at step i) ⊗ … ⊗ Q      against      Q_t = Q^{⊗t}

(Feldman & Shenfeld 2025: the worst case puts the other records' contributions where they
cancel; the *remove* orientation is (P_t, Q_t), the *add* orientation (Q_t, P_t)). Its likelihood
ratio is the **mean** R = (1/t) Σ_i Y_i of t independent copies of the step's likelihood ratio
Y = dP/dQ under Q (for the Gaussian, Y = exp(θZ − θ²/2) with Z standard normal), so both
orientations are functionals of the law of R under Q:

    D_α(P_t ‖ Q_t) = E[(R − α)₊]        D_α(Q_t ‖ P_t) = E[(1 − αR)₊]         (α = e^ε ≥ 0).

**Certified laws by convex order.** Both functionals are expectations of convex functions of R.
If a law R⁺ dominates R in the convex order (R ≤cx R⁺: E φ(R) ≤ E φ(R⁺) for every convex φ) then
both curves of R⁺ bound those of R from above — and R⁺ is itself the likelihood ratio of a pair
(mean 1), so it is a dominating pair the PLD engine may compose. Convex order is preserved by
independent sums and by scaling, and

* spreading the mass of an interval [a, b] onto its end points with the weights that keep its mean
  (a *mean-preserving spread*) moves a law up in convex order;
* replacing the mass of an interval by one atom at its mean (a *contraction*, Jensen) moves it
  down; dropping mass altogether lowers every expectation of a non-negative function;
* splitting any set of outcomes into "P only" (mass at R = ∞) and "Q only" (R = 0) makes the pair
  more informative (the original pair is a garbling of the split one).

So R is computed by *doubling* — R_{a+b} = (a R_a + b R_b)/(a + b) with independent parts, along
the binary expansion of t — on a grid of log R, twice: the **upper law** spreads every new atom
onto the two grid points around it (and sends negligible atoms to 0 / ∞), the **lower law**
contracts every grid cell to its mean (and drops negligible atoms). Each stage's grid is dense
(a fraction of the standard deviation of R_m, √((e^{θ²} − 1)/m) for the Gaussian) where R_m has
its mass and coarse (``coarse`` in log R) in the tails. The spreads add second-order errors only,
so the two laws bracket the exact curves tightly.

**k > 1.** A uniform k-subset of the t steps is what a uniformly random permutation of the steps
makes of *any* allocation of k steps — in particular of the stratified one that cuts the t steps
into k blocks of ⌊t/k⌋ or ⌈t/k⌉ and uses one uniformly random step per block. Permuting the
outputs is the same post-processing under P and Q (the steps' pairs are identical and Q is
exchangeable), so the k-out-of-t pair is dominated by the stratified pair, which is the
composition of k one-out-of-block rounds (privamp's argument; it reduces to the exact pair at
k = 1). The bracket then bounds this composition.

**Rounding.** The masses of one step come from Φ differences taken on the side of the smaller
tail (relative error ≲ 1e-11 for cells of width ≥ 1e-5 in z); the products, sums and spread
weights of the stages add a few ulp per stage. Values are raised by a relative 1e-9 (and
lowered by the same) when the curves are evaluated, which covers these with room to spare; the
curve itself is evaluated from suffix sums of positive terms only (no cancellation).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _special
from .._numerics import ULP, down_ulps, up_ulps
from .._validation import check_int, check_real
from .curves import _SUBNORMAL_SLACK, PairCurve

__all__ = ["AllocationCurve", "AllocationLaw", "MaxCurve", "discrete_allocation_law",
           "gaussian_allocation_law", "laplace_allocation_law",
           "random_allocation_curves", "allocation_blocks"]

#: relative margin on the curves' values (covers the rounding of masses, positions and sums)
_MARGIN = 1e-9
#: atoms with both Q-mass and P-mass below this are sent to 0 / ∞ (upper) or dropped (lower)
_NEGLIGIBLE = 1e-60
#: z-range of one Gaussian step: Q- and P-tails beyond carry less than Φ(−z) ≈ 1e-32
_Z_RANGE = 12.0
#: pairs per chunk of a combination (memory ≈ 100 bytes a pair)
_CHUNK = 1 << 21
#: largest θ = Δ/σ accounted (a round at θ = 20 already has ε in the hundreds at δ = 1e-5;
#: beyond, Var(Y) = e^{θ²} − 1 leaves the float range)
_MAX_THETA = 20.0
#: cells of one step's law at most (the combinations cost the square of the atoms)
_MAX_CELLS = 2400


class AllocationLaw:
    """The law of the likelihood ratio R of a round under Q, bracketed in convex order.

    ``upper``: atoms ``(x, q)`` (x ascending, 0 allowed) and ``p_inf``, the P-mass at R = ∞;
    ``lower``: atoms ``(x, q)`` of a sub-probability below R in convex order (``p_inf`` 0).
    ``steps``: t, the number of steps of the round.
    """

    def __init__(self, upper: tuple[np.ndarray, np.ndarray, float],
                 lower: tuple[np.ndarray, np.ndarray], steps: int):
        self.x_up, self.q_up, self.p_inf = upper
        self.x_lo, self.q_lo = lower
        self.steps = steps
        self._up = _Sums(self.x_up, self.q_up)
        self._lo = _Sums(self.x_lo, self.q_lo)

    def call(self, strike: np.ndarray, upper: bool) -> np.ndarray:
        """E[(R − K)₊] (plus ``p_inf`` on the upper side) at the strikes K ≥ 0."""
        if upper:
            return self._up.call(strike) * (1 + _MARGIN) + self.p_inf * (1 + 4 * ULP)
        return self._lo.call(strike) * (1 - _MARGIN)

    def put(self, strike: np.ndarray, upper: bool) -> np.ndarray:
        """E[(K − R)₊] at the strikes K ≥ 0 (R = 0 atoms included)."""
        if upper:
            return self._up.put(strike) * (1 + _MARGIN)
        return self._lo.put(strike) * (1 - _MARGIN)

    def partial(self, steps: int) -> AllocationLaw:
        """The law of a round of ``steps`` steps of which only ``self.steps`` are run: the
        record's step is among the run ones with probability w = self.steps/steps, and the
        likelihood ratio is w R + (1 − w) (an affine map keeps the convex order)."""
        w = self.steps / steps
        up = (w * self.x_up + (1 - w), self.q_up, w * self.p_inf)
        lo = (w * self.x_lo + (1 - w), self.q_lo)
        law = AllocationLaw(up, lo, steps)
        return law

    def q_zero(self, upper: bool) -> float:
        """Q(R = 0): the upper law's atom at 0 (raised by the margin); 0 on the lower side (its
        sub-law may have dropped it)."""
        if upper and self.x_up.size and self.x_up[0] == 0.0:
            return float(self.q_up[0]) * (1 + _MARGIN)
        return 0.0

    def moment(self, order: int, upper: bool = True) -> float:
        """E[R^order] over the finite atoms (a check of the convex order: ≥ / ≤ the exact value
        for the upper / lower law, the upper law's mass at ∞ aside)."""
        x, q = (self.x_up, self.q_up) if upper else (self.x_lo, self.q_lo)
        return float(np.sum(q * x ** order))


class _Sums:
    """Calls and puts of a discrete law from prefix/suffix sums of positive terms.

    For K in [x_j, x_{j+1}]: E[(R − K)₊] = C_{j+1} + (x_{j+1} − K)·Qtail_{j+1} with
    C_j = Σ_{i ≥ j} q_i (x_i − x_j) built backwards (C_j = C_{j+1} + (x_{j+1} − x_j) Qtail_{j+1}),
    and E[(K − R)₊] = D_j + (K − x_j)·Qhead_j with D_j = Σ_{i ≤ j} q_i (x_j − x_i) built forwards:
    every term is non-negative, so the relative error is a few ulp per term (no cancellation).
    """

    def __init__(self, x: np.ndarray, q: np.ndarray):
        self.x = x
        n = x.size
        self.qtail = np.cumsum(q[::-1])[::-1]                     # Σ_{i ≥ j} q_i
        self.qhead = np.cumsum(q)                                  # Σ_{i ≤ j} q_i
        self.phead = np.cumsum(q * x)                              # Σ_{i ≤ j} q_i x_i
        gaps = np.diff(x)
        c = np.zeros(n + 1)
        if n > 1:
            c[:n - 1] = np.cumsum((gaps * self.qtail[1:])[::-1])[::-1]
        self.c = c                                                 # C_j; C_{n-1} = C_n = 0
        d = np.zeros(n)
        if n > 1:
            d[1:] = np.cumsum(gaps * self.qhead[:-1])
        self.d = d                                                 # D_j

    def call(self, k: np.ndarray) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        x = self.x
        if x.size == 0:
            return np.zeros(k.shape)
        j = np.searchsorted(x, k, side="right")                   # first atom above K
        out = np.empty(k.shape)
        inside = j < x.size
        jj = j[inside]
        with np.errstate(invalid="ignore"):
            out[inside] = self.c[jj] + (x[jj] - k[inside]) * self.qtail[jj]
        out[~inside] = 0.0
        return out

    def q_above(self, k: np.ndarray, strict: bool) -> np.ndarray:
        """Q(R > K) (``strict``) or Q(R ≥ K)."""
        j = np.searchsorted(self.x, k, side="right" if strict else "left")
        tail = np.concatenate([self.qtail, [0.0]])
        return tail[j]

    def p_below(self, k: np.ndarray, strict: bool) -> np.ndarray:
        """E[R; R < K] (``strict``) or E[R; R ≤ K]."""
        j = np.searchsorted(self.x, k, side="left" if strict else "right")
        head = np.concatenate([[0.0], self.phead])
        return head[j]

    def put(self, k: np.ndarray) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        x = self.x
        if x.size == 0:
            return np.zeros(k.shape)
        j = np.searchsorted(x, k, side="right") - 1               # last atom at or below K
        out = np.zeros(k.shape)
        inside = j >= 0
        jj = j[inside]
        with np.errstate(invalid="ignore", over="ignore"):
            out[inside] = self.d[jj] + (k[inside] - x[jj]) * self.qhead[jj]
        return out


# ---- one step ------------------------------------------------------------------------------


def _phi_diff(z0: np.ndarray, z1: np.ndarray) -> np.ndarray:
    """Φ(z1) − Φ(z0) for z0 ≤ z1, taken on the side of the smaller tail."""
    right = z0 >= 0
    out = np.where(right, _special.ndtr(-z0) - _special.ndtr(-z1),
                   _special.ndtr(z1) - _special.ndtr(z0))
    return np.maximum(out, 0.0)


def _gaussian_step(theta: float, coarse: float, per_sd: float):
    """Upper and lower laws of Y = exp(θZ − θ²/2) (one Gaussian step), Z ~ N(0, 1)."""
    # grid of z: uniform, step min(coarse/θ, 1/per_sd), over ±_Z_RANGE (shifted by θ for P),
    # at most _MAX_CELLS cells (large θ: coarser cells, still certified, only looser)
    dz = max(min(coarse / theta, 1.0 / per_sd), (2 * _Z_RANGE + theta) / _MAX_CELLS)
    z = np.arange(-_Z_RANGE, _Z_RANGE + theta + dz, dz)
    logx = theta * z - theta * theta / 2
    x = np.exp(logx)
    q = _phi_diff(z[:-1], z[1:])
    p = _phi_diff(z[:-1] - theta, z[1:] - theta)            # P-mass = E_Q[Y; cell]
    q_below, p_below = float(_special.ndtr(z[0])), float(_special.ndtr(z[0] - theta))
    q_above, p_above = float(_special.ndtr(-z[-1])), float(_special.ndtr(theta - z[-1]))
    # below the grid: spread between 0 and x[0] (mean kept); above it: P-mass to ∞ and its
    # Q-mass to 0 (more informative); the tails are dropped from the lower law
    w0 = min(p_below / x[0], q_below)
    (x_up, q_up, _), lo = _cells_step(x[:-1], x[1:], q, p, np.empty(0), np.empty(0),
                                      (q_below - w0) + q_above, p_above)
    q_up = q_up.copy()
    q_up[np.searchsorted(x_up, x[0])] += w0          # x[0] is a grid point of the upper law
    return (x_up, q_up, p_above), lo


# ---- combining two independent means ---------------------------------------------------------


class _Grid:
    """Grid points (ascending, > 0) of a stage, uniform in log R piece by piece: step ``fine``
    over [f0, f1] (±12 sd of the bulk), ``coarse`` below and above, from x_min to a point at
    least one coarse step above x_max (so no pair's value reaches the last point)."""

    def __init__(self, x_min: float, x_max: float, sd: float, coarse: float, per_sd: float):
        lo = math.log(max(x_min, 1e-300))
        hi = math.log(x_max)
        coarse = max(coarse, (hi - lo) / _MAX_CELLS)     # a bounded number of points
        fine = min(coarse, sd / per_sd)
        f0 = max(lo, -12.0 * sd) if fine < coarse else lo
        f1 = min(hi, 12.0 * sd) if fine < coarse else lo
        f1 = max(f1, f0)
        n_a = int(math.ceil((f0 - lo) / coarse))
        n_b = int(math.ceil((f1 - f0) / fine)) if f1 > f0 else 0
        f1 = f0 + n_b * fine
        n_c = max(int(math.ceil((hi - f1) / coarse)), 0) + 1
        logs = np.concatenate([f0 - coarse * np.arange(n_a, 0, -1),
                               f0 + fine * np.arange(n_b + 1),
                               f1 + coarse * np.arange(1, n_c + 1)])
        self.points = np.exp(logs)

    def cell(self, v: np.ndarray) -> np.ndarray:
        """``k`` with ``points[k−1] ≤ v < points[k]`` (0 below the first point)."""
        return np.searchsorted(self.points, v, side="right")


def _pairs(xa, qa, xb, qb, wa: float, wb: float, same: bool):
    """Chunks ``(v, m)`` of the values wa·x_i + wb·y_j and masses q_i q'_j of all pairs; for
    two copies of one law (``same``) only i ≤ j, the off-diagonal pairs with mass 2 q_i q_j
    (exact in binary: a doubling), which halves a doubling's work."""
    chunk = max(1, _CHUNK // max(xb.size, 1))
    for s in range(0, xa.size, chunk):
        rows = slice(s, s + chunk)
        if not same:
            yield ((wa * xa[rows, None] + wb * xb[None, :]).ravel(),
                   (qa[rows, None] * qb[None, :]).ravel())
            continue
        cols = slice(s, None)
        v = wa * xa[rows, None] + wb * xb[None, cols]
        m = 2.0 * (qa[rows, None] * qb[None, cols])
        i = np.arange(v.shape[0])[:, None]
        j = np.arange(v.shape[1])[None, :]
        m = np.where(j > i, m, np.where(j == i, 0.5 * m, 0.0))
        yield v.ravel(), m.ravel()


def _combine_upper(A, a: int, B, b: int, stage: _Grid):
    """Upper law of (a R_A + b R_B)/(a + b): every pair's value spread onto the grid."""
    xa, qa, pa = A
    xb, qb, pb = B
    wa, wb = a / (a + b), b / (a + b)
    grid = stage.points
    n = grid.size
    out = np.zeros(n)
    zero = 0.0
    p_top = 0.0
    g0 = grid[0]
    same = A is B and a == b
    for v, m in _pairs(xa, qa, xb, qb, wa, wb, same):
        below = v < g0
        if below.any():
            vb, mb = v[below], m[below]
            w = np.minimum(mb * (vb / g0), mb)
            out[0] += w.sum()
            zero += (mb - w).sum()
            v, m = v[~below], m[~below]
        k = stage.cell(v)                                        # grid[k-1] ≤ v < grid[k]
        top = k >= n        # at or above the last point (the grid ends a step above the max)
        if top.any():       # never expected; if so, P-mass to ∞ and Q-mass to 0 (safe)
            p_top += float(np.sum(m[top] * v[top])) * (1 + 1e-12)
            zero += float(np.sum(m[top]))
            k, v, m = k[~top], v[~top], m[~top]
        lo_, hi_ = grid[k - 1], grid[k]
        w = np.minimum(m * ((v - lo_) / (hi_ - lo_)), m)
        out += np.bincount(k, w, n) + np.bincount(k - 1, m - w, n)
    return _prune_upper(np.concatenate([[0.0], grid]), np.concatenate([[zero], out]),
                        wa * pa + wb * pb + p_top)


def _prune_upper(x, q, p_inf):
    """Send atoms with negligible Q- and P-mass to 0 (Q-mass) and ∞ (P-mass): a more informative
    pair, so still an upper law."""
    small = (q < _NEGLIGIBLE) & (q * x < _NEGLIGIBLE)
    small[0] = False
    if small.any():
        p_inf = p_inf + float(np.sum(q[small] * x[small])) * (1 + 1e-12)
        q = q.copy()
        q[0] += float(np.sum(q[small]))
    keep = ~small & ((q > 0) | (np.arange(q.size) == 0))
    return x[keep], q[keep], p_inf


def _combine_lower(A, a: int, B, b: int, stage: _Grid):
    """Lower law of (a R_A + b R_B)/(a + b): the pairs in each grid cell contracted to their mean
    (a sub-probability: negligible atoms dropped)."""
    xa, qa = A
    xb, qb = B
    wa, wb = a / (a + b), b / (a + b)
    grid = stage.points
    n = grid.size + 1
    mass = np.zeros(n)
    moment = np.zeros(n)
    same = A is B and a == b
    for v, m in _pairs(xa, qa, xb, qb, wa, wb, same):
        k = stage.cell(v)                                        # grid[k-1] ≤ v < grid[k]
        mass += np.bincount(k, m, n)
        moment += np.bincount(k, m * v, n)
    keep = (mass > _NEGLIGIBLE) | (moment > _NEGLIGIBLE)
    keep &= mass > 0
    x = moment[keep] / mass[keep]
    # the mean of a cell lies in the cell; rounding may not: clip (a contraction either way)
    edges = np.concatenate([[0.0], grid, [np.inf]])
    idx = np.flatnonzero(keep)
    x = np.clip(x, edges[idx], edges[idx + 1])
    return x, mass[keep]


# ---- the law of a round --------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def gaussian_allocation_law(theta: float, steps: int, *, coarse: float = 0.02,
                            per_sd: float = 60.0) -> AllocationLaw:
    """Bracketing laws of R = (1/t) Σ Y_i for the Gaussian with θ = Δ/σ and t = ``steps``.

    ``coarse``: grid step of log R in the tails; ``per_sd``: grid points per standard deviation
    of the stage's mean in the bulk. Memoised (a calibration asks for the same law repeatedly).
    """
    theta = check_real("theta", theta, f"(0, {_MAX_THETA}]")
    steps = check_int("steps", steps, "[1, inf)")
    var1 = math.expm1(theta * theta)                              # Var(Y) under Q
    up1, lo1 = _gaussian_step(theta, coarse, per_sd)
    return _doubling(up1, lo1, steps, var1, coarse, per_sd)


def _doubling(up1, lo1, steps, var1, coarse, per_sd) -> AllocationLaw:
    """R = (1/t) Σ Y_i along the binary expansion of t, both sides (see the module doc)."""
    res_u = res_l = None
    size = 0
    pow_u, pow_l, psize = up1, lo1, 1
    rest = steps
    while True:
        if rest & 1:
            if res_u is None:
                res_u, res_l, size = pow_u, pow_l, psize
            else:
                grid = _grid_for(res_u, pow_u, size, psize, var1, coarse, per_sd)
                res_u = _combine_upper(res_u, size, pow_u, psize, grid)
                res_l = _combine_lower(res_l, size, pow_l, psize, grid)
                size += psize
        rest >>= 1
        if not rest:
            break
        grid = _grid_for(pow_u, pow_u, psize, psize, var1, coarse, per_sd)
        pow_u = _combine_upper(pow_u, psize, pow_u, psize, grid)
        pow_l = _combine_lower(pow_l, psize, pow_l, psize, grid)
        psize *= 2
    return AllocationLaw(res_u, res_l, steps)


def _cells_step(a, b, q, p, atoms_x, atoms_q, zero, p_inf):
    """Upper and lower laws of one step from cells [a, b] of the likelihood ratio (Q-mass q,
    P-mass p = E_Q[Y; cell]) and atoms (x, Q-mass): the upper law spreads every cell onto its
    end points (mean kept), the lower law contracts it to its mean."""
    w_b = np.clip((p - a * q) / (b - a), 0.0, q)
    xs = np.concatenate([[0.0], a, b, atoms_x])
    qs = np.concatenate([[zero], q - w_b, w_b, atoms_q])
    x_up, q_up = _merge_sorted(xs, qs)
    keep = q > 0
    x_lo = np.clip(p[keep] / q[keep], a[keep], b[keep])
    lo_x, lo_q = _merge_sorted(np.concatenate([x_lo, atoms_x]),
                               np.concatenate([q[keep], atoms_q]))
    return (x_up, q_up, p_inf), (lo_x, lo_q)


def _merge_sorted(x, q):
    order = np.argsort(x, kind="stable")
    x, q = x[order], q[order]
    ux, start = np.unique(x, return_index=True)
    return ux, np.add.reduceat(q, start) if q.size else q


def laplace_allocation_law(theta: float, steps: int, *, coarse: float = 0.02,
                           per_sd: float = 60.0) -> AllocationLaw:
    """Bracketing laws of R for the Laplace mechanism with θ = Δ/b. Under Q = Lap(0, b) the loss
    is −θ (x ≤ 0, Q-mass ½), θ (x ≥ Δ, Q-mass e^{−θ}/2) and u = (2x − Δ)/b in between, with
    Q-density e^{−(u+θ)/2}/4 and P-density e^{(u−θ)/2}/4 in u: exact cell masses."""
    theta = check_real("theta", theta, "(0, 700]")
    steps = check_int("steps", steps, "[1, inf)")
    cells = min(_MAX_CELLS, max(1, int(math.ceil(2 * theta / min(coarse, 2 * theta / 200)))))
    u = np.linspace(-theta, theta, cells + 1)
    q = 0.5 * (np.exp(-(u[:-1] + theta) / 2) - np.exp(-(u[1:] + theta) / 2))
    p = 0.5 * (np.exp((u[1:] - theta) / 2) - np.exp((u[:-1] - theta) / 2))
    atoms_x = np.array([math.exp(-theta), math.exp(theta)])
    atoms_q = np.array([0.5, 0.5 * math.exp(-theta)])
    up1, lo1 = _cells_step(np.exp(u[:-1]), np.exp(u[1:]), np.maximum(q, 0), np.maximum(p, 0),
                           atoms_x, atoms_q, 0.0, 0.0)
    x, qq, _ = up1
    var1 = max(float(np.sum(qq * x * x)) - 1.0, 1e-12)
    return _doubling(up1, lo1, steps, var1, coarse, per_sd)


def discrete_allocation_law(p, q, steps: int, *, coarse: float = 0.02,
                            per_sd: float = 60.0) -> AllocationLaw:
    """Bracketing laws of R for a step whose pair is the finite laws ``p`` (with the record)
    and ``q`` (without): Y = p_i/q_i with Q-mass q_i exactly; outcomes with q_i = 0 are P-mass
    at ∞."""
    from ..divergences import align

    p, q, _ = align(p, q)          # probability vectors on a common support (checked)
    steps = check_int("steps", steps, "[1, inf)")
    both = q > 0
    x = p[both] / q[both]
    p_inf = float(np.sum(p[~both]))
    x_u, q_u = _merge_sorted(x, q[both])
    up1 = (x_u, q_u, p_inf)
    lo1 = (x_u[x_u > 0], q_u[x_u > 0])
    var1 = max(float(np.sum(q_u * x_u * x_u)) - 1.0, 1e-12)
    return _doubling(up1, lo1, steps, var1, coarse, per_sd)


def _grid_for(A, B, a, b, var1, coarse, per_sd):
    xa, xb = A[0], B[0]
    wa, wb = a / (a + b), b / (a + b)
    pos_a, pos_b = xa[xa > 0], xb[xb > 0]
    x_min = wa * (pos_a[0] if pos_a.size else 0.0) + wb * (pos_b[0] if pos_b.size else 0.0)
    x_min = max(x_min, min(pos_a[0] if pos_a.size else 1.0, pos_b[0] if pos_b.size else 1.0))
    x_max = wa * xa[-1] + wb * xb[-1]
    sd = math.sqrt(var1 / (a + b))
    return _Grid(x_min, x_max, sd, coarse, per_sd)


# ---- the curves ------------------------------------------------------------------------------


def _widened(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Floats at least 15 ulp (and 3 subnormal spacings) below and above each x ≥ 0: two
    computed exps of one ε (NumPy's, each within FUNC_ULPS = 4 ulp) differ by at most 8."""
    tiny = 4 * math.ulp(0.0)
    return np.maximum(down_ulps(x, 16) - tiny, 0.0), up_ulps(x, 16) + tiny


class AllocationCurve(PairCurve):
    """One orientation of the random-allocation pair of a round (see the module doc).

    ``remove``: D_α(P_t‖Q_t) = E[(R − α)₊] (+ the P-mass at ∞); ``add``: D_α(Q_t‖P_t) =
    E[(1 − αR)₊] = α E[(1/α − R)₊].
    """

    lower_slack = 1e-9

    def __init__(self, law: AllocationLaw, orientation: str):
        if orientation not in ("remove", "add"):
            raise ValueError(f"orientation must be 'remove' or 'add', not {orientation!r}")
        self.law = law
        self.orientation = orientation

    def _value(self, eps: np.ndarray, upper: bool) -> np.ndarray:
        eps = np.atleast_1d(np.asarray(eps, dtype=float))
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            if self.orientation == "remove":
                val = self.law.call(np.exp(eps), upper)
            else:
                val = np.exp(eps) * self.law.put(np.exp(-eps), upper)
                big = eps > 700.0
                if big.any():   # the limit ε → ∞ (and beyond the float range): Q(R = 0)
                    val[big] = self.law.q_zero(upper)
            if not upper:       # f(α) ≥ 1 − α always (the lower law is a sub-probability)
                val = np.maximum(val, -np.expm1(np.minimum(eps, 0.0)) * (1 - 4 * ULP))
            val = np.minimum(val, 1.0)
            return np.log(val)

    def log_upper(self, eps):
        return self._value(eps, True)

    def log_lower(self, eps):
        return self._value(eps, False)

    def slope_bounds(self, eps, tau, log_lower=None):
        """Slopes of the lower law's curve g (convex, below f): its tangent lines lie below f,
        which is all the lower discretisation needs. ``remove``: g' = −(1 − m) Q(R > α) (left:
        R ≥ α); ``add``: g' = −(1 − m) E[R; R < 1/α] (left: R ≤ 1/α); where the floor 1 − α is
        above g, its slope −(1 − 4 ulp)."""
        eps = np.atleast_1d(np.asarray(eps, dtype=float))
        sums = self.law._lo
        scale = 1 - _MARGIN
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            alpha = np.exp(eps)
            # The abscissa: exp is within FUNC_ULPS, and another call (the engine's own α, a
            # vector loop over other points) may round the other way, so an atom of R within
            # a few ulp of the computed α (or 1/α) could sit on the wrong side of the strict /
            # non-strict split. The left slope is taken at an end at least 15 ulp below, the
            # right one at least 15 ulp above (a tail sum only grows as its end moves down; the
            # absolute term covers subnormal α): together they bracket the subgradient at every
            # point within 15 ulp of the computed α.
            a_lo, a_hi = _widened(alpha)
            # Subnormal values (a discrete law's masses can be): a tail sum of the lower law's
            # masses is exact where it lands below 2^-1022 (its terms and partial sums, of one
            # sign, are no larger, and subnormal additions are exact), but its product by the
            # scale is then accurate only to half a subnormal spacing, 2^-1075 absolute, which
            # the relative 1e-12 below does not cover. The moments E[R; ·] also sum products
            # q_i·x_i, each within 2^-1075 where it is below 2^-1022 (where the sum is normal
            # that is ≤ ½ ulp of it, like an addition's rounding, inside the relative margin).
            # Hence one _SUBNORMAL_SLACK (4·2^-1074) for the scale, plus one per such product.
            if self.orientation == "remove":
                s_lo = -scale * sums.q_above(a_lo, strict=False)
                s_hi = -scale * sums.q_above(a_hi, strict=True)
                g = scale * sums.call(alpha)
                slack = _SUBNORMAL_SLACK
            else:
                inv = np.exp(-eps)
                # 1/α: E[R; R ≤ ·] grows with its end, so the left slope takes the end above
                i_lo, i_hi = _widened(inv)
                s_lo = -scale * sums.p_below(i_hi, strict=False)
                s_hi = -scale * sums.p_below(i_lo, strict=True)
                g = scale * alpha * sums.put(inv)
                slack = (1 + self._small_moments()) * _SUBNORMAL_SLACK
            line = -np.expm1(np.minimum(eps, 0.0)) * (1 - 4 * ULP)
        c = 1 - 4 * ULP
        above = (line > g) & (eps < 0)
        tie = (line == g) & (eps < 0)
        s_lo = np.where(above, -c, np.where(tie, np.minimum(s_lo, -c), s_lo))
        s_hi = np.where(above, -c, np.where(tie, np.maximum(s_hi, -c), s_hi))
        # a safety margin: slopes a touch steeper / flatter only widen the bracket. The tail
        # and moment sums are running sums (np.cumsum, sequential) of n non-negative terms,
        # each within (n − 1)·u of its exact value relative (u = ULP/2), the product by the
        # scale and the searchsorted pick adding none; 2n·ULP covers that for any n (1e-12 for
        # the few-hundred-atom laws). The absolute slack is exact where the result is
        # subnormal, and never rounds back past the float it is added to elsewhere.
        rel = max(1e-12, 2 * sums.x.size * ULP)
        return (np.clip(s_lo * (1 + rel) - slack, -1.0, 0.0),
                np.clip(s_hi * (1 - rel) + slack, -1.0, 0.0))

    def _small_moments(self) -> int:
        """How many of the lower law's products q_i·x_i (the terms of its moment sums) are
        below 2^-1022: each is accurate to 2^-1075 absolute only (counted once per curve)."""
        n = self.__dict__.get("_n_small")
        if n is None:
            with np.errstate(under="ignore"):
                small = self.law.q_lo * self.law.x_lo < np.finfo(float).tiny
            n = self._n_small = int(np.count_nonzero(small))
        return n

    def log_excess(self, eps):
        # f(α) − (1 − α) = E[(α − R)₊] (remove) or E[(αR − 1)₊] (add), since E[R] = 1 with the
        # mass at ∞ counted: upper values from the upper law
        eps = np.atleast_1d(np.asarray(eps, dtype=float))
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            if self.orientation == "remove":
                val = self.law.put(np.exp(eps), True)
            else:
                val = np.exp(eps) * (self.law.call(np.exp(-eps), True))
            return np.log(val * (1 + 4 * ULP))

    def __repr__(self) -> str:
        return f"AllocationCurve(steps={self.law.steps}, orientation={self.orientation!r})"


class MaxCurve(PairCurve):
    """The pointwise maximum of several curves of one orientation: it dominates each of their
    pairs (a convex upper bound on every one), and the maximum of their lower values bounds the
    maximum of their true curves from below. Used when it is not known which of two laws of an
    asymmetric pair holds the record."""

    lower_slack = 1e-9

    def __init__(self, curves, orientation: str):
        self.curves = list(curves)
        self.orientation = orientation

    def log_upper(self, eps):
        return np.max([c.log_upper(eps) for c in self.curves], axis=0)

    def log_lower(self, eps):
        return np.max([c.log_lower(eps) for c in self.curves], axis=0)

    def log_excess(self, eps):
        return np.max([c.log_excess(eps) for c in self.curves], axis=0)

    def slope_bounds(self, eps, tau, log_lower=None):
        """The slopes of the curve whose lower value is the maximum (the maximum of convex
        functions has the active ones' subgradients); ties take the union. Only a selection of
        the curves' own brackets (their margins and subnormal slacks included): no rounding."""
        return self.lower_with_slopes(eps, tau)[1]

    def lower_with_slopes(self, eps, tau):
        """Each curve's lower values evaluated once (:meth:`PairCurve.lower_with_slopes`): they
        give the maximum and say which curves are active for the slopes."""
        eps = np.atleast_1d(np.asarray(eps, dtype=float))
        parts = [c.lower_with_slopes(eps, tau) for c in self.curves]
        lows = np.array([v for v, _ in parts])
        bounds = [b for _, b in parts]
        s_lo = np.array([b[0] for b in bounds])
        s_hi = np.array([b[1] for b in bounds])
        top = lows.max(axis=0)
        active = lows >= top
        lo = np.min(np.where(active, s_lo, np.inf), axis=0)
        hi = np.max(np.where(active, s_hi, -np.inf), axis=0)
        return top, (lo, hi)

    def __repr__(self) -> str:
        return f"MaxCurve({self.curves!r})"


def allocation_blocks(t: int, k: int) -> list[tuple[int, int]]:
    """The stratified blocks of k-out-of-t: ``[(block size, number of blocks), ...]`` (k blocks
    of ⌊t/k⌋ or ⌈t/k⌉ steps; one block of t at k = 1)."""
    t = check_int("t", t, "[1, inf)")
    k = check_int("k", k, f"[1, {t}]")
    small, extra = divmod(t, k)
    out = [(small, k - extra)] if k - extra else []
    if extra:
        out.append((small + 1, extra))
    return out


def random_allocation_curves(theta, steps: int,
                             run: int | None = None) -> dict[str, AllocationCurve]:
    """The remove and add curves of one round of balls-in-bins (1 out of ``steps``) for the
    Gaussian with θ = Δ/σ, or with the law ``theta(t)`` (a function of the number of steps:
    :func:`laplace_allocation_law`, :func:`discrete_allocation_law`);
    ``run`` < ``steps``: only the first ``run`` steps of the round are run (the end of a
    training run)."""
    count = int(steps if run is None else run)
    if isinstance(theta, tuple):   # several candidate step laws: the worse, orientation-wise
        parts = [random_allocation_curves(one, steps, run) for one in theta]
        return {o: MaxCurve([c[o] for c in parts], o) for o in ("remove", "add")}
    if callable(theta):
        law = theta(count)
    else:
        law = gaussian_allocation_law(float(theta), count)
    if run is not None and run != steps:
        law = law.partial(int(steps))
    return {o: AllocationCurve(law, o) for o in ("remove", "add")}
