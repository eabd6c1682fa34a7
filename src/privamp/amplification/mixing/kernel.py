"""Finite Markov kernels (row-stochastic matrices) and their best mixing constants (Balle,
Barthe, Gaboardi, Geumlek 2019, Definition 1; catalogue §1.3), each rounded up; see
:mod:`privamp.amplification.mixing`.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..._numerics import ULP, down_ulps, next_up, round_down_log, round_up_log, up_ulps
from ..._validation import check_pmf, check_real, check_real_array, read_text_file
from ...errors import InvalidParameterError, UnsupportedCombinationError
from ...profiles import PrivacyProfile
from .amplified import _eps_dobrushin_profile, _MinimumProfile, _require_profile, _zero_beyond
from .conditions import (
    Blanket,
    Dobrushin,
    Doeblin,
    EpsDobrushin,
    LocalDP,
    MixingCondition,
    UltraMixing,
    _check_point,
    eps_tilde,
    implies,
)

__all__ = ["MarkovKernel", "read_kernel_csv"]

_CHUNK = 2_000_000  # elements of the (ε × inputs × outputs) work array processed at once
_SUBNORMAL = math.ulp(0.0)  # 5e-324, the absolute rounding unit of the subnormal range
_NORMAL = float(np.finfo(float).tiny)  # 2.2e-308, the smallest normal float


# ---------------------------------------------------------------------------------------------
# finite kernels
# ---------------------------------------------------------------------------------------------


def _sum_up(total: float, m: int) -> float:
    """A computed sum of m non-negative terms raised by its rounding-error bound, capped at 1."""
    if total == 0.0:
        return 0.0
    return min(1.0, total * (1.0 + (4.0 + math.ceil(math.log2(max(m, 2)))) * ULP))


def read_kernel_csv(path: str | os.PathLike, *, tolerance: float = 1e-9) -> MarkovKernel:
    """Read a row-stochastic matrix from a CSV file (rows = inputs, columns = outputs).

    Numbers are separated by commas; blank lines and lines starting with ``#`` are ignored, and a
    first line that is not numeric is taken as a header. Every row must have the same number of
    entries, each finite and non-negative, summing to 1 within ``tolerance``.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("0.9,0.1\\n0.2,0.8\\n")
    >>> k = read_kernel_csv(f.name); os.unlink(f.name)
    >>> round(k.dobrushin, 12)
    0.7
    """
    tol = check_real("tolerance", tolerance, "[0, 1)")
    lines = read_text_file("kernel", path, "CSV file").splitlines()
    rows: list[list[float]] = []
    header_allowed = True
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        cells = [c.strip() for c in text.split(",")]
        if cells[-1] == "":
            cells = cells[:-1]  # a trailing comma
        try:
            rows.append([float(c) for c in cells])
        except ValueError as exc:
            if header_allowed:
                header_allowed = False  # the first non-comment line may be a header
                continue
            raise InvalidParameterError(
                "kernel", "a CSV file of numbers", f"{path}, line {number}: {text[:60]!r}"
            ) from exc
        header_allowed = False
    if not rows:
        raise InvalidParameterError("kernel", "a CSV file with at least one row of numbers",
                                    str(path))
    width = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width:
            raise InvalidParameterError(
                "kernel", f"a CSV file whose rows all have {width} entries",
                f"{path}: row {i + 1} has {len(r)}")
    return MarkovKernel(np.array(rows, dtype=float), tolerance=tol)


class MarkovKernel:
    """A Markov kernel between finite sets, given as a row-stochastic matrix ``K[x, y]``.

    Parameters
    ----------
    matrix : array_like, shape (n_inputs, n_outputs)
        Finite, non-negative entries; each row sums to 1 within ``tolerance`` and is then divided
        by its sum (documented, not silent: the coefficients are those of that stochastic matrix).
    tolerance : float
        Admissible deviation of the row sums from 1 (default 1e-9).

    Notes
    -----
    Attributes give the best constants of Definition 1 (all rounded up, see the module
    docstring): :attr:`dobrushin`, :meth:`eps_dobrushin` (the (γ, ε)-Dobrushin curve),
    :attr:`doeblin` with :attr:`doeblin_minorant`, :attr:`ultra_mixing`.

    Examples
    --------
    >>> k = MarkovKernel([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])
    >>> [round(g, 10) for g in (k.dobrushin, k.doeblin, k.ultra_mixing)]
    [0.3, 0.3, 0.6]
    >>> [round(float(w), 10) for w in k.doeblin_minorant]
    [0.2857142857, 0.4285714286, 0.2857142857]
    >>> eps_p, delta_p = k.amplify(1.0, 0.01)["ultra_mixing"]
    >>> round(eps_p, 6), round(delta_p, 6)
    (0.708513, 0.004483)
    """

    __slots__ = ("_cache", "_raw", "matrix", "tolerance")

    def __init__(self, matrix: Any, *, tolerance: float = 1e-9):
        tol = check_real("tolerance", tolerance, "[0, 1)")
        k = check_real_array("kernel", matrix, "[0, inf)", ndim=2)
        if k.shape[0] < 1 or k.shape[1] < 1:
            raise InvalidParameterError("kernel", "a non-empty 2-D matrix", k.shape)
        sums = np.array([math.fsum(row) for row in k.tolist()])
        bad = np.abs(sums - 1.0) > tol
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(
                "kernel", f"row-stochastic (every row sums to 1 within {tol:g})", float(sums[i]),
                detail=f"the sum of row {i}")
        self._raw = k.copy()
        self._raw.setflags(write=False)
        k = k / sums[:, None]
        k.setflags(write=False)
        self.matrix = k
        self.tolerance = tol
        self._cache: dict[str, Any] = {}

    @classmethod
    def from_csv(cls, path: str | os.PathLike, *, tolerance: float = 1e-9) -> MarkovKernel:
        """Read the matrix from a CSV file (see :func:`read_kernel_csv`)."""
        return read_kernel_csv(path, tolerance=tolerance)

    @property
    def n_inputs(self) -> int:
        return self.matrix.shape[0]

    @property
    def n_outputs(self) -> int:
        return self.matrix.shape[1]

    def __repr__(self) -> str:
        return f"MarkovKernel({self.n_inputs}x{self.n_outputs})"

    def apply(self, pmf: Any) -> np.ndarray:
        """``μK``: the output distribution when the input is drawn from ``pmf``."""
        mu = check_pmf("pmf", pmf, atol=1e-9)
        if mu.size != self.n_inputs:
            raise InvalidParameterError("pmf", f"a probability vector of length {self.n_inputs}",
                                        mu.size)
        return mu @ self.matrix

    # -----------------------------------------------------------------------------------------
    # coefficients
    # -----------------------------------------------------------------------------------------

    @property
    def dobrushin(self) -> float:
        """``γ_D = max_{x,x'} TV(K(x), K(x'))``, rounded up."""
        if "dobrushin" not in self._cache:
            k = self.matrix
            best = 0.0
            for i in range(k.shape[0]):
                a, b = k[i][None, :], k
                # each normalised entry is within 2 ulp of the exact K_raw[x, y]/Σ_y K_raw[x, y]
                # (division and the correctly rounded sum), so |a − b| is within 3 ulp (a + b)
                # of the exact term — even when a = b as floats. Rows that are identical before
                # normalisation are identical after, exactly: no margin for those pairs.
                same = np.all(self._raw[i][None, :] == self._raw, axis=1)
                # (in the subnormal range the error is absolute: one subnormal unit per entry)
                tv = 0.5 * (np.abs(a - b) + 4 * ULP * (a + b) + 4 * _SUBNORMAL).sum(axis=1)
                best = max(best, float(np.where(same, 0.0, tv).max()))
            # the true TV is at most the true Doeblin constant (Figure 1): keep the lattice
            # exact on the reported (rounded-up) values too
            self._cache["dobrushin"] = min(_sum_up(best, k.shape[1]), self.doeblin)
        return self._cache["dobrushin"]

    def eps_dobrushin(self, eps: Any):
        """The (γ, ε)-Dobrushin curve ``γ_ε = max_{x,x'} Σ_y [K[x,y] − e^ε K[x',y]]_+``.

        Vectorised over ε ∈ [0, ∞]; rounded up (each term is raised by its rounding-error bound
        before the positive part is taken, so exact zeros stay zero only when every term is
        clearly negative); ``γ_0 = γ_D`` and ``γ_∞ = max_{x,x'} K(x)(supp K(x) \\ supp K(x'))``.

        >>> k = MarkovKernel([[0.75, 0.25], [0.25, 0.75]])
        >>> [round(float(g), 10) for g in k.eps_dobrushin([0.0, 0.5, math.log(3) + 1e-9])]
        [0.5, 0.3378196823, 0.0]
        """
        arr = check_real_array("eps", eps, "[0, inf]")
        flat = arr.reshape(-1)
        out = np.empty(flat.shape)
        k = self.matrix
        n, m = k.shape
        finite = np.isfinite(flat)
        if np.any(~finite):
            best = 0.0
            for i in range(n):
                outside = np.where((k[i][None, :] > 0) & (k == 0),
                                   k[i][None, :] + 2 * _SUBNORMAL, 0.0)
                best = max(best, float(outside.sum(axis=1).max()))
            out[~finite] = _sum_up(best, m)
        idx = np.flatnonzero(finite)
        out[idx] = [_sum_up(float(v), m) for v in self._hockey_sums(flat[idx], up=True)]
        # D_{e^ε} ≤ D_1 = TV: never above γ_D (and exactly γ_D at ε = 0)
        out = np.where(flat == 0.0, self.dobrushin, np.minimum(out, self.dobrushin))
        out = out.reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    def _hockey_sums(self, eps: np.ndarray, up: bool) -> np.ndarray:
        """``max_{x,x'} Σ_y [K[x,y] − e^ε K[x',y] ± err]_+`` for a 1-D array of finite ε, each
        term raised (``up``) or lowered by its rounding-error bound before the positive part
        (the sum's own rounding is the caller's). Processed in chunks of :data:`_CHUNK`."""
        k = self.matrix
        n, m = k.shape
        out = np.zeros(eps.shape)
        step = max(1, _CHUNK // (n * m))
        # e^ε within 1 ulp, α·b within 2 ulp more, entries within 2 ulp: 8 ulp (a + α b);
        # subnormal entries are off by up to one subnormal unit (absolute), times α for b
        sub = (k > 0) & (k < _NORMAL)
        for start in range(0, eps.size, step):
            sel = slice(start, start + step)
            with np.errstate(over="ignore"):
                alpha = np.exp(eps[sel])[:, None, None]
            with np.errstate(invalid="ignore", over="ignore"):
                scaled = np.where(k[None, :, :] > 0, alpha * k[None, :, :], 0.0)
                tiny_b = np.where(sub[None, :, :], 2.0 * alpha * _SUBNORMAL, 0.0)
            best = np.zeros(scaled.shape[0])
            for i in range(n):
                a = k[i][None, None, :]
                tiny = np.where(sub[i][None, None, :], 2.0 * _SUBNORMAL, 0.0) + tiny_b
                with np.errstate(invalid="ignore"):
                    if up:
                        terms = a - scaled + 8 * ULP * (a + scaled) + tiny
                    else:
                        terms = a - scaled - 8 * ULP * (a + scaled) - tiny
                # NaN (∞ − ∞) and −∞ terms are those with e^ε K[x',y] = ∞: positive part 0
                terms = np.where(np.isnan(terms) | np.isneginf(terms), 0.0, terms)
                best = np.maximum(best, np.maximum(terms, 0.0).sum(axis=2).max(axis=1))
            out[sel] = best
        return out

    def _eps_dobrushin_lower(self, eps: Any) -> np.ndarray:
        """A lower bound on the exact (γ, ε)-Dobrushin curve of the (exactly normalised)
        kernel, for a 1-D array of ε ∈ [0, ∞]: :meth:`eps_dobrushin` with every rounding
        reversed (each term lowered by its error bound before the positive part, the sum
        lowered by its own)."""
        flat = np.asarray(eps, dtype=float).reshape(-1)
        out = np.zeros(flat.shape)
        k = self.matrix
        raw = self._raw
        n, m = k.shape
        shrink = 1.0 - (4.0 + math.ceil(math.log2(max(m, 2)))) * ULP
        finite = np.isfinite(flat)
        if np.any(~finite):
            best = 0.0
            for i in range(n):
                # mass of K(x) where K(x') is exactly 0 (zero entries stay zero)
                outside = np.where((raw[i][None, :] > 0) & (raw == 0),
                                   down_ulps(k[i][None, :], 2) - 2 * _SUBNORMAL, 0.0)
                best = max(best, float(np.maximum(outside, 0.0).sum(axis=1).max()))
            out[~finite] = best * shrink
        idx = np.flatnonzero(finite)
        out[idx] = self._hockey_sums(flat[idx], up=False) * shrink
        return out

    @property
    def doeblin(self) -> float:
        """Best Doeblin constant ``γ = 1 − Σ_y min_x K[x, y]``, rounded up."""
        self._doeblin()
        return self._cache["doeblin"]

    @property
    def doeblin_minorant(self) -> np.ndarray:
        """The optimal ω of Definition 1(3): the column minima divided by their sum (uniform when
        every column minimum is 0, where γ = 1 and any ω works)."""
        self._doeblin()
        return self._cache["omega"].copy()

    def _doeblin(self) -> None:
        if "doeblin" in self._cache:
            return
        k = self.matrix
        mins = k.min(axis=0)
        total = math.fsum(mins.tolist())
        # each entry is within 2 ulp (or, subnormal, one subnormal unit) of the exact normalised
        # value: lower the sum accordingly
        total_down = max(0.0, down_ulps(total, 4) - 2 * k.shape[1] * _SUBNORMAL)
        gamma = min(1.0, float(next_up(1.0 - total_down)), self.ultra_mixing)
        omega = mins / total if total > 0 else np.full(k.shape[1], 1.0 / k.shape[1])
        self._cache["doeblin"] = gamma
        self._cache["omega"] = omega

    @property
    def absolutely_continuous(self) -> bool:
        """Whether all rows have the same support (``K(x) ≪ K(x')`` for all x, x')."""
        positive = self.matrix > 0
        return bool(np.all(positive.all(axis=0) | ~positive.any(axis=0)))

    @property
    def ultra_mixing(self) -> float:
        """Best ultra-mixing constant ``1 − min_y min_x K[x,y]/max_x K[x,y]``, rounded up; 1 when
        the rows have different supports (see the module docstring)."""
        if "ultra" not in self._cache:
            if not self.absolutely_continuous:
                gamma = 1.0
            else:
                k = self.matrix
                cmax = k.max(axis=0)
                live = cmax > 0
                # entries within 2 ulp or one subnormal unit of their exact values
                lo = np.maximum(down_ulps(k.min(axis=0)[live], 2) - 2 * _SUBNORMAL, 0.0)
                hi = up_ulps(cmax[live], 2) + 2 * _SUBNORMAL
                ratio_down = down_ulps(float((lo / hi).min()), 2)
                gamma = min(1.0, float(next_up(1.0 - ratio_down)))
            self._cache["ultra"] = gamma
        return self._cache["ultra"]

    # -----------------------------------------------------------------------------------------
    # conditions, checks and amplification
    # -----------------------------------------------------------------------------------------

    def conditions(self, eps: float = 0.0) -> dict[str, MixingCondition]:
        """The conditions the kernel satisfies, with its best constants (the (γ, ε)-Dobrushin
        one at ``eps``): all four, except ultra-mixing when the rows have different supports."""
        e = check_real("eps", eps, "[0, inf]")
        out: dict[str, MixingCondition] = {
            "dobrushin": Dobrushin(self.dobrushin),
            "eps_dobrushin": EpsDobrushin(float(self.eps_dobrushin(e)), e),
            "doeblin": Doeblin(self.doeblin, self.doeblin_minorant),
        }
        if self.absolutely_continuous:
            out["ultra_mixing"] = UltraMixing(self.ultra_mixing)
        return out

    def satisfies(self, condition: MixingCondition | LocalDP | Blanket, *,
                  tol: float = 1e-12) -> bool:
        """Whether the kernel satisfies a mixing condition or its local-DP form (Figure 2),
        checked directly from the definitions in floating point, with an absolute slack
        ``tol`` for rounding (a check, not a bound: the bounds use the rounded-up
        coefficients)."""
        k = self.matrix
        tol = check_real("tol", tol, "[0, 1]")
        if isinstance(condition, Dobrushin):
            return self._max_pair(lambda a, b: 0.5 * np.abs(a - b).sum(axis=-1)) \
                <= condition.gamma + tol
        if isinstance(condition, EpsDobrushin | LocalDP):
            gamma = condition.gamma if isinstance(condition, EpsDobrushin) else condition.delta
            return self._max_hockey(condition.eps) <= gamma + tol
        if isinstance(condition, Doeblin | Blanket):
            if condition.omega is not None:
                omega = np.asarray(condition.omega, dtype=float)
                if omega.size != k.shape[1]:
                    return False
                return bool(np.all(k >= (1.0 - condition.gamma) * omega[None, :] - tol))
            return 1.0 - math.fsum(k.min(axis=0).tolist()) <= condition.gamma + tol
        if isinstance(condition, UltraMixing):
            if not self.absolutely_continuous:
                return False
            cmax = k.max(axis=0)
            live = cmax > 0
            return bool(np.all(k.min(axis=0)[live]
                               >= (1.0 - condition.gamma) * cmax[live] - tol))
        raise InvalidParameterError("condition", "a MixingCondition, LocalDP or Blanket",
                                    condition)

    def _max_pair(self, func) -> float:
        k = self.matrix
        return max(float(func(k[i][None, :], k).max()) for i in range(k.shape[0]))

    def _max_hockey(self, eps: float) -> float:
        if math.isinf(eps):
            return self._max_pair(lambda a, b: (((a > 0) & (b == 0)) * a).sum(axis=-1))
        alpha = math.exp(eps) if eps < 709 else math.inf

        def hockey(a, b):
            with np.errstate(invalid="ignore", over="ignore"):
                scaled = np.where(b > 0, alpha * b, 0.0)
            return np.maximum(a - scaled, 0.0).sum(axis=-1)

        return self._max_pair(hockey)

    def check_lattice(self, eps: Any = (0.0, 0.5, 1.0, 2.0, math.inf)) -> bool:
        """Figure 1 on this kernel: ``γ_ε ≤ γ_D ≤ γ_Doeblin ≤ γ_U`` at the given ε, and each
        implied condition (:func:`implies`) is satisfied."""
        curve = np.atleast_1d(self.eps_dobrushin(eps))
        chain = bool(np.all(curve <= self.dobrushin)) and \
            self.dobrushin <= self.doeblin <= self.ultra_mixing
        conds = [c for c in self.conditions().values() if self.satisfies(c)]
        implied = all(self.satisfies(w) for s in conds for w in conds if implies(s, w))
        return chain and implied

    def local_dp_profile(self) -> PrivacyProfile:
        """The kernel as a local randomiser: ``δ_K(ε) = γ_ε`` (Figure 2: K is (ε, δ)-LDP iff
        ``γ_ε ≤ δ``). An upper bound (the curve is rounded up)."""
        return _KernelLocalProfile(self)

    def amplify(self, eps: float, delta: float) -> dict[str, tuple[float, float]]:
        """Theorem 1 for every condition the kernel satisfies, at its best constants: a map from
        the condition key (``dobrushin``, ``eps_dobrushin``, ``doeblin``, ``ultra_mixing``; the
        last only when the rows share their support) to (ε', δ').

        The (γ, ε)-Dobrushin entry uses the kernel's coefficient at ``ε̃(ε, δ)``.
        """
        eps, delta = _check_point(eps, delta)
        conds = self.conditions(float(eps_tilde(eps, delta)))
        return {key: cond.amplify(eps, delta) for key, cond in conds.items()}

    def amplify_profile(self, profile: PrivacyProfile,
                        condition: str | None = None) -> PrivacyProfile:
        """Profile of K∘M from the profile of M: Theorem 1 for one condition (``condition`` is a
        key as in :meth:`amplify`), or the pointwise minimum over all four (default).

        >>> from privamp import RandomizedResponse
        >>> k = MarkovKernel([[0.9, 0.1], [0.2, 0.8]])
        >>> base = RandomizedResponse.from_epsilon(1.0).profile()
        >>> bool(k.amplify_profile(base).delta(0.0) < base.delta(0.0))
        True
        """
        profile = _require_profile(profile)
        conds = self.conditions()
        builders = {
            "dobrushin": lambda: conds["dobrushin"].amplify_profile(profile),
            "eps_dobrushin": lambda: _eps_dobrushin_profile(
                profile, EpsDobrushin(self.dobrushin, 0.0), self.eps_dobrushin,
                self._eps_dobrushin_lower),
            "doeblin": lambda: conds["doeblin"].amplify_profile(profile),
            "ultra_mixing": lambda: conds["ultra_mixing"].amplify_profile(profile),
        }
        if condition is not None:
            if condition not in builders:
                raise InvalidParameterError("condition", "one of " + ", ".join(builders),
                                            condition)
            if condition not in conds and condition != "eps_dobrushin":
                raise UnsupportedCombinationError(
                    f"the kernel is not {condition.replace('_', '-')}: its rows have "
                    "different supports (Definition 1(4))")
            return builders[condition]()
        keys = [k for k in builders if k in conds or k == "eps_dobrushin"]
        return _MinimumProfile([builders[k]() for k in keys], label=repr(self))


class _KernelLocalProfile(PrivacyProfile):
    """``ε ↦ γ_ε`` of a finite kernel (its local-DP profile, Figure 2)."""

    #: a minimum of bounds (or a kernel's ε-Dobrushin curve) need not be convex in e^ε
    is_curve = False

    def __init__(self, kernel: MarkovKernel):
        self.kernel = kernel

    def _log_delta(self, eps):
        with np.errstate(divide="ignore"):
            out = round_up_log(np.log(np.asarray(self.kernel.eps_dobrushin(eps), dtype=float)))
        return _zero_beyond(out, eps, self.pure_epsilon)

    def _log_delta_lower(self, eps):
        with np.errstate(divide="ignore"):
            out = round_down_log(np.log(self.kernel._eps_dobrushin_lower(eps)))
        return _zero_beyond(out, eps, self.pure_epsilon)

    @property
    def pure_epsilon(self) -> float:
        k = self.kernel
        if not k.absolutely_continuous:
            return math.inf
        mat = k.matrix
        cmax, cmin = mat.max(axis=0), mat.min(axis=0)
        live = cmax > 0
        # log max ratio, rounded up
        val = float(np.max(np.log(cmax[live]) - np.log(cmin[live])))
        return float(round_up_log(val, 8 * ULP)) if val > 0 else 0.0

    def __repr__(self) -> str:
        return f"_KernelLocalProfile({self.kernel!r})"
