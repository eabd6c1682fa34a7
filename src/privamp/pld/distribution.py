"""Privacy loss distributions on a uniform grid, composed by FFT with certified error terms.

A :class:`StepPLD` is the distribution of the privacy loss L = log(P/Q) under P of one
dominating pair, on the grid ``l_j = (i_lo + j) h``, plus a mass at +∞. It comes in two kinds:
``"upper"`` (a dominating pair, :func:`~privamp.pld.discretize.upper_masses`) and ``"lower"`` (a
dominated one). For a composition the privacy profile is

    δ(ε) = E[(1 − e^{ε − S})_+] + P(S = +∞),   S = L_1 + … + L_T,

so composing is convolving the finite parts (FFT; self-composition by exponentiation in the
Fourier domain, one FFT for any number of steps) and combining the masses at +∞.

Certified error terms of :func:`compose` (each goes to the safe side of the bracket):

* **window/aliasing**: the FFT is circular; the window [A, B] is chosen with Chernoff bounds
  ``P(S ≥ B) ≤ e^{Λ(λ) − λB}`` and ``P(S ≤ A) ≤ e^{Λ(−λ) + λA}`` (Λ the log-MGF of the composed
  finite part, computed exactly from the discrete masses) so that both tails are below a
  tolerance; mass above B is missing from the top (added to the upper δ), mass below A folds to the
  top (subtracted from the lower δ);
* **FFT rounding**: each rfft coefficient is computed to within κ·u·‖p‖₁ (κ = 10 log₂N, the
  standard FFT error bound of Higham, *Accuracy and Stability of Numerical Algorithms*, §24.1, with
  a safety factor); the error of the powered spectrum is propagated to first order and bounded
  against the δ weight function in the Fourier domain (:meth:`ComposedPLD.fft_error`);
* **masses and loss positions**: per-step masses carry relative rounding ≤ 2u, which composes to a
  relative factor (1 + 2u)^T on the finite part; losses carry ≤ 4u(1 + |l|) each, which shifts
  the composed loss by at most T times that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import fft

from .._numerics import ULP, bisect_threshold, logsumexp_signed
from ..errors import InvalidParameterError, NumericalError
from .curves import PairCurve
from .discretize import lower_masses, upper_masses

__all__ = ["ComposedPLD", "StepPLD", "compose"]

#: Largest FFT length (2^25 points: 256 MB per real work array; about 1 GB peak in total).
MAX_FFT = 2**25
_LAMBDAS = np.geomspace(1e-4, 1e4, 97)


@dataclass(frozen=True)
class StepPLD:
    """Privacy-loss distribution of one dominating (``kind="upper"``) or dominated (``"lower"``)
    pair on the grid ``(i_lo + j) h``, with mass ``p_inf`` at +∞."""

    h: float
    i_lo: int
    masses: np.ndarray
    p_inf: float
    kind: str
    label: str = ""

    @classmethod
    def from_curve(cls, curve: PairCurve, h: float, eps_lo: float, eps_hi: float,
                   kind: str = "upper") -> StepPLD:
        """Discretise a pair's hockey-stick curve on [eps_lo, eps_hi] with spacing h."""
        if kind not in ("upper", "lower"):
            raise InvalidParameterError("kind", "'upper' or 'lower'", kind)
        i_lo = math.floor(eps_lo / h)
        i_hi = math.ceil(eps_hi / h)
        build = upper_masses if kind == "upper" else lower_masses
        masses, p_inf = build(curve, h, i_lo, i_hi)
        return cls(h, i_lo, masses, p_inf, kind, repr(curve))

    @property
    def losses(self) -> np.ndarray:
        return (self.i_lo + np.arange(self.masses.size)) * self.h

    def log_mgf(self, lam: np.ndarray, bins: int = 2048) -> np.ndarray:
        """Upper bound on log E[e^{λL}; L finite] for an array of λ.

        The masses are aggregated into at most ``bins`` bins, each represented by its largest
        loss for λ > 0 and its smallest for λ < 0 — an upper bound on the MGF, at a cost
        independent of the grid size.
        """
        pos = np.flatnonzero(self.masses > 0)
        if pos.size == 0:
            return np.full(lam.shape, -np.inf)
        width = max(1, math.ceil(pos.size / bins))
        groups = pos // width if width > 1 else pos
        uniq, start = np.unique(groups, return_index=True)
        mass = np.add.reduceat(self.masses[pos], start)
        ls = self.losses[pos]
        top = np.maximum.reduceat(ls, start)
        bottom = np.minimum.reduceat(ls, start)
        logs = np.log(mass)
        rep = np.where(lam[:, None] >= 0, top[None, :], bottom[None, :])
        out, _ = logsumexp_signed(logs[None, :] + lam[:, None] * rep, axis=1)
        return np.atleast_1d(out)

    def mean_var(self) -> tuple[float, float]:
        w = self.masses
        tot = w.sum()
        if tot <= 0:
            return 0.0, 0.0
        ls = self.losses
        mean = float(np.sum(w * ls) / tot)
        var = float(np.sum(w * (ls - mean) ** 2) / tot)
        return mean, var


def _window(steps: Sequence[tuple[StepPLD, int]], tol: float) -> tuple[float, float, float,
                                                                        float]:
    """[A, B] with Chernoff-bounded tails ≤ tol; returns (A, B, tail_below, tail_above)."""
    lam = _LAMBDAS
    up = np.zeros(lam.size)
    down = np.zeros(lam.size)
    for step, count in steps:
        up += count * step.log_mgf(lam)
        down += count * step.log_mgf(-lam)
    log_tol = math.log(tol)
    with np.errstate(invalid="ignore"):
        b_cand = (up - log_tol) / lam
        a_cand = (log_tol - down) / lam
    b = float(np.nanmin(b_cand))
    a = float(np.nanmax(a_cand))
    tail_above = float(np.exp(np.nanmin(up - lam * b)))
    tail_below = float(np.exp(np.nanmin(down + lam * a)))
    return a, b, tail_below, tail_above


@dataclass
class ComposedPLD:
    """A composed privacy-loss distribution on a window, with its certified error terms."""

    h: float
    i_start: int
    masses: np.ndarray
    p_inf: float
    kind: str
    steps: int
    tail_below: float
    tail_above: float
    spectrum_error: np.ndarray
    spectrum_abs: np.ndarray
    fft_size: int
    loss_shift: float

    @property
    def losses(self) -> np.ndarray:
        return (self.i_start + np.arange(self.masses.size)) * self.h

    def _weights(self, eps: float) -> np.ndarray:
        # losses nudged by the accumulated position rounding (up for upper, down for lower)
        ls = self.losses + (self.loss_shift if self.kind == "upper" else -self.loss_shift)
        with np.errstate(over="ignore"):
            return np.where(ls > eps, -np.expm1(np.minimum(eps - ls, 0.0)), 0.0)

    def delta_raw(self, eps: float) -> float:
        """The δ functional without the FFT rounding term (fast; used for bisection)."""
        g = self._weights(eps)
        mass_factor = (1 + 2 * ULP) ** self.steps
        if self.kind == "upper":
            body = float(np.dot(np.maximum(self.masses, 0.0), g)) * mass_factor
            return min(1.0, body + self.p_inf + self.tail_above)
        body = float(np.dot(self.masses, g)) / mass_factor
        return max(0.0, body + self.p_inf - self.tail_below)

    def fft_error(self, eps: float) -> float:
        """Bound on the error of :meth:`delta_raw` at ``eps`` due to FFT rounding."""
        n = self.fft_size
        g = self._weights(eps)
        padded = np.zeros(n)
        padded[: g.size] = g
        spec_g = np.abs(fft.rfft(padded))
        weights = np.full(spec_g.size, 2.0)
        weights[0] = 1.0
        if n % 2 == 0:
            weights[-1] = 1.0
        spectral = float(np.sum(weights * spec_g * self.spectrum_error)) / n
        kappa = 10 * math.log2(n) * ULP
        inverse = float(np.sum(g)) * kappa * float(np.sum(weights * self.spectrum_abs)) / n
        return (spectral + inverse) * (1 + 1e-6)

    def delta(self, eps: float) -> float:
        """Certified δ at ``eps``: an upper bound (kind "upper") or a lower bound ("lower")."""
        raw = self.delta_raw(eps)
        err = self.fft_error(eps)
        return min(1.0, raw + err) if self.kind == "upper" else max(0.0, raw - err)


def compose(steps: Sequence[tuple[StepPLD, int]], *, tail_tol: float = 1e-15) -> ComposedPLD:
    """Compose step PLDs (each with a count) by FFT; see the module doc for the error terms.

    All steps must share the grid spacing and the kind.
    """
    if not steps:
        raise InvalidParameterError("steps", "a non-empty list of (StepPLD, count)", steps)
    h = steps[0][0].h
    kind = steps[0][0].kind
    for step, count in steps:
        if step.h != h or step.kind != kind:
            raise InvalidParameterError("steps", "step PLDs with the same grid spacing and kind",
                                        (step.h, step.kind))
        if count < 1:
            raise InvalidParameterError("count", "a positive integer", count)
    total_steps = sum(c for _, c in steps)
    a, b, tail_below, tail_above = _window(steps, tail_tol)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise NumericalError("could not bound the tails of the composed privacy loss")
    i_start = math.floor(a / h) - 1
    i_end = math.ceil(b / h) + 1
    width = i_end - i_start + 1
    n = fft.next_fast_len(max(width, 16), real=True)
    if n > MAX_FFT:
        raise NumericalError(
            f"the composed privacy loss needs {n:,} grid points at spacing {h:g} (more than "
            f"{MAX_FFT:,}); use a coarser accuracy")
    shift = sum(c * s.i_lo for s, c in steps)
    log_abs = np.zeros(n // 2 + 1)
    phase = np.zeros(n // 2 + 1)
    factor_logs = []
    kappa = 10 * math.log2(n) * ULP
    for step, count in steps:
        buf = np.zeros(n)
        pos = np.arange(step.masses.size) % n  # fold long step arrays circularly
        np.add.at(buf, pos, step.masses)
        spec = fft.rfft(buf)
        mag = np.abs(spec)
        with np.errstate(divide="ignore"):
            lm = np.log(np.maximum(mag, 1e-300))
        log_abs += count * lm
        phase += count * np.angle(spec)
        factor_logs.append((count, lm, float(np.sum(step.masses))))
    spectrum = np.exp(log_abs) * np.exp(1j * phase)
    y = fft.irfft(spectrum, n)
    roll = (i_start - shift) % n
    window = np.roll(y, -roll)[:width]
    # first-order FFT error of the powered spectrum, per frequency
    err = np.zeros(log_abs.size)
    for count, lm, mass in factor_logs:
        err += count * np.exp(log_abs - lm) * kappa * mass
        err += count * np.exp(log_abs) * 4 * ULP * (np.abs(lm) + math.pi)
    p_inf = -math.expm1(sum(c * math.log1p(-min(s.p_inf, 1.0)) for s, c in steps)) \
        if all(s.p_inf < 1 for s, _ in steps) else 1.0
    if kind == "upper":
        p_inf = min(1.0, p_inf * (1 + 4 * ULP * total_steps) + 1e-300)
    max_loss = max(max(abs(s.i_lo), abs(s.i_lo + s.masses.size)) * h for s, _ in steps)
    loss_shift = total_steps * 4 * ULP * (1 + max_loss)
    return ComposedPLD(h, i_start, window, p_inf, kind, total_steps, tail_below, tail_above,
                       err, np.exp(log_abs), n, loss_shift)


def epsilon_for_delta(composed: Sequence[ComposedPLD], delta: float) -> float:
    """ε for a target δ from one or more composed PLDs of the same kind (the δ's max).

    Upper: the smallest ε on the bisection with certified δ ≤ target (never below the truth).
    Lower: the largest ε with certified lower δ > target (never above the truth).
    """
    kind = composed[0].kind

    def raw(e):
        return max(c.delta_raw(e) for c in composed)

    def certified(e):
        return max(c.delta(e) for c in composed)

    hi = 1.0
    while raw(hi) > delta:
        hi *= 2.0
        if hi > 1e6:
            return math.inf if kind == "upper" else hi / 2.0
    if raw(0.0) <= delta:
        if kind == "upper" and certified(0.0) <= delta:
            return 0.0
        if kind == "lower":
            return 0.0
    lo = 0.0

    def feasible(x, idx):
        return np.array([raw(float(v)) <= delta for v in np.atleast_1d(x)])

    hi = float(bisect_threshold(feasible, lo, hi, rtol=1e-12, atol=1e-12))
    if kind == "upper":
        # certify with the FFT rounding term, stepping up if needed
        step = max(hi * 1e-9, 1e-12)
        for _ in range(200):
            if certified(hi) <= delta:
                return hi
            hi += step
            step *= 2.0
        raise NumericalError("could not certify ε: the FFT rounding term is too large")
    # lower: the largest ε whose certified lower δ still exceeds the target
    lo_e = max(hi - max(hi * 1e-9, 1e-12), 0.0)
    step = max(hi * 1e-9, 1e-12)
    for _ in range(200):
        if certified(lo_e) > delta or lo_e == 0.0:
            return lo_e
        lo_e = max(lo_e - step, 0.0)
        step *= 2.0
    return 0.0
