"""Rigorous rounding-error constants for the FFTs privamp runs (``numpy.fft.rfft`` / ``irfft``,
NumPy ≥ 2, i.e. pocketfft's real FFT ``rfftp``) and for its direct extended-precision DFT.

The derivation is in ``docs/certification.md`` ("FFT rounding errors"); this module only
evaluates it. In short, for a 5-smooth length n (the only lengths privamp uses):

* ``|fl(rfft(x))_k − DFT(x)_k| ≤ κ u ‖x‖₁ + underflow_allowance(n)`` for every k, with
  ``κ = rfft_error_constant(n, dtype)`` and u the unit roundoff of ``dtype`` (2^-53 for float64,
  2^-64 for x87 extended);
* ``|fl(irfft(Y, n))_j − irfft(Y, n)_j| ≤ κ' u (Σ_k w_k |Y_k|)/n + underflow_allowance(n)``
  (w_k = 1 at k = 0 and at the Nyquist frequency, 2 elsewhere: Σ_k w_k|Y_k| is the ℓ1 norm of
  the full Hermitian spectrum), ``κ' = irfft_error_constant(n, dtype)``, the multiplication by
  fl(1/n) included.

Each pass of pocketfft's ``rfftp`` (radix ip, inner length ido) adds at most
``c(ip, part) u`` times the ℓ1 norm of its inputs to every partial coefficient it writes, where
the part is the butterfly that writes it: ``"0"`` (coefficient 0 of each block: the k-loop
without twiddles), ``"N"`` (the Nyquist coefficient of blocks of even length: the
``(ido&1)==0`` loop of radf2/radf4/radb2/radb4) or ``"G"`` (the general i-loop, with twiddle
factors). The constants below are upper bounds on the values that the symbolic running-error
analysis of ``tests/pocketfft_model.py`` computes from a statement-by-statement transcription of
pocketfft's butterflies (which reproduces NumPy's transforms bit for bit), rounded up to 2
decimals; ``tests/test_fft_bounds.py`` recomputes them. The passes compose to
``κ ≤ S/(1 − S u)``, S the sum of the per-pass constants (an error in a partial coefficient
reaches every final coefficient with a weight of modulus ≤ 1, and ``Π(1 + c_l u) − 1 ≤
S u/(1 − S u)``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

__all__ = ["direct_dft_error_constant", "fold_error_constant", "irfft_error_constant",
           "pairwise_sum", "rfft_error_bound", "rfft_error_constant", "underflow_allowance",
           "unit_roundoff"]

#: Assumed accuracy of the C library's cos/sin (cosl/sinl) on arguments |a| ≤ π: absolute
#: error ≤ LIBM_ERROR·u (results lie in [−1, 1], where 1 ulp ≤ u). glibc's table of known
#: maximum errors (manual §19.7, sysdeps/x86_64/fpu/libm-test-ulps) lists 1 ulp for cos and sin
#: in double and in ldouble, measured from the correctly rounded value, i.e. ≤ 1.5 u from the
#: exact value; 2 leaves a margin. tests/test_fft_bounds.py measures the library actually loaded.
LIBM_ERROR = 2

#: Per-pass constants c(ip, part) in units of u, forward (radfN) and backward (radbN), for
#: float64 and for x87 long double. "G" = τ + (adds and constant products of the butterfly),
#: τ = μ + (1 + μu)(1 + √2(1 + u)) the error of one twiddle multiplication conj(w̃)·z (μ u ≥
#: |w̃ − w|, :func:`twiddle_error`; two products and a sum per part, ≤ u|w̃||z|(1 + u) +
#: u|part|, the two parts' squares adding to |w̃ z|²). The radix constants (cos 2π/5 …) are
#: stored rounded — through long double, then double, for float64 — and their representation
#: errors (0.03 u … 0.79 u relative) are included. "N" of radix 2 is 0: copies and negations.
_PASS = {
    "float64": {
        "f": {2: {"0": 1.01, "N": 0.0, "G": 15.64}, 3: {"0": 3.19, "G": 22.00},
              4: {"0": 2.01, "N": 5.12, "G": 17.64}, 5: {"0": 5.32, "G": 26.27}},
        "b": {2: {"0": 1.01, "N": 0.0, "G": 15.64}, 3: {"0": 2.82, "G": 22.00},
              4: {"0": 2.01, "N": 4.03, "G": 17.64}, 5: {"0": 4.92, "G": 26.27}},
    },
    "longdouble": {
        "f": {2: {"0": 1.01, "N": 0.0, "G": 16.64}, 3: {"0": 3.16, "G": 22.95},
              4: {"0": 2.01, "N": 4.95, "G": 18.64}, 5: {"0": 5.40, "G": 27.42}},
        "b": {2: {"0": 1.01, "N": 0.0, "G": 16.64}, 3: {"0": 2.80, "G": 22.95},
              4: {"0": 2.01, "N": 3.91, "G": 18.64}, 5: {"0": 5.00, "G": 27.42}},
    },
}

#: Accuracy of NumPy's own float64 cos/sin (SIMD loops, not the C library; "< 4 ULP" per
#: numpy/numpy#23399), used by the float64 direct DFT: the light masses of an extended pass at
#: few frequencies (``distribution._light_direct``), and everything where long double is not
#: x87 extended. tests/test_fft_bounds.py measures the NumPy actually loaded.
NUMPY_F64_TRIG_ERROR = 8

#: π and √2 from above, as exact fractions (for the twiddle bound).
_PI_UP = Fraction("3.14159265358979323846264338327950289")
_SQRT2_UP = Fraction("1.41421356237309504880168872420970")


def _key(dtype) -> str:
    dt = np.dtype(dtype)
    if dt == np.float64:
        return "float64"
    if dt == np.longdouble and np.finfo(np.longdouble).nmant == 63:
        return "longdouble"
    raise ValueError(f"no FFT error analysis for {dt} (float64 and x87 long double only)")


def unit_roundoff(dtype) -> float:
    """u = 2^-53 (float64) or 2^-64 (x87 extended)."""
    return 2.0**-53 if _key(dtype) == "float64" else 2.0**-64


@cache
def twiddle_error(dtype) -> float:
    """μ with |w̃ − w| ≤ μ u for every twiddle factor pocketfft computes (``sincos_2pibyn``).

    ``sincos_2pibyn<T0>`` works in Thigh = long double if sizeof(T0) > sizeof(double), else
    double: for float64 twiddles are computed in double, for long double *in long double* (no
    double-precision twiddles in the extended transform). ang = Thigh(0.25L·π_L/n): π_L the
    long-double literal (relative error ≤ 2^-63/π ≤ 0.637 u_ext), one long-double division
    (u_ext), for float64 one conversion to double (u). Each table entry is ±cos or ±sin of
    x·ang, x ≤ n an integer (exact), argument ≤ π/4 after the octant reduction, one rounding
    of the product (u): argument error ≤ (π/4) θ, θ the relative error of the product; plus the
    library's error LIBM_ERROR·u in each part: entry error D ≤ (π/4)θ + √2·LIBM_ERROR·u. A
    twiddle is the product of two entries in Thigh (``operator[]``): 2D + D² for the entries and
    u(1 + D)²(1 + √2(1 + u)) for the product (the MULPM argument of ``_PASS``)."""
    key = _key(dtype)
    u_ext = Fraction(1, 2**64)
    u = Fraction(1, 2**53) if key == "float64" else u_ext
    pi_rel = Fraction(637, 1000) * u_ext
    theta_ang = (1 + pi_rel) * (1 + u_ext) - 1
    if key == "float64":
        theta_ang = (1 + theta_ang) * (1 + u) - 1
    theta = (1 + theta_ang) * (1 + u) - 1
    d = _PI_UP / 4 * theta + _SQRT2_UP * LIBM_ERROR * u
    mu = 2 * d + d * d + u * (1 + d) ** 2 * (1 + _SQRT2_UP * (1 + u))
    return float(mu / u) * (1 + 1e-12)


def factorize(n: int) -> list[int]:
    """pocketfft's ``rfftp::factorize``: factors 4 first, one 2 moved to the front, then 3s and
    5s (only 5-smooth n)."""
    fact = []
    m = n
    while m % 4 == 0:
        fact.append(4)
        m //= 4
    if m % 2 == 0:
        m //= 2
        fact.append(2)
        fact[0], fact[-1] = fact[-1], fact[0]
    for p in (3, 5):
        while m % p == 0:
            fact.append(p)
            m //= p
    if m != 1:
        raise ValueError(f"FFT length {n} is not 5-smooth: no error analysis for radfg/Bluestein")
    return fact


def _passes(n: int, forward: bool) -> list[tuple[int, int]]:
    """(radix, ido) of each pass of ``rfftp::exec``: forward from the last factor (ido = 1
    first), backward from the first (ido = n/ip first)."""
    fact = factorize(n)
    out = []
    if forward:
        ido = 1
        for ip in reversed(fact):
            out.append((ip, ido))
            ido *= ip
    else:
        l1 = 1
        for ip in fact:
            out.append((ip, n // (ip * l1)))
            l1 *= ip
    return out


def _sum_constants(n: int, dtype, forward: bool) -> float:
    table = _PASS[_key(dtype)]["f" if forward else "b"]
    s = 0.0
    for ip, ido in _passes(n, forward):
        parts = table[ip]
        c = parts["0"]
        if ido % 2 == 0:  # radf3/5 and radb3/5 only ever see odd ido (factor order)
            c = max(c, parts["N"])
        if ido >= 3:
            c = max(c, parts["G"])
        s += c
    return s


@cache
def rfft_error_constant(n: int, dtype=np.float64) -> float:
    """κ with ``|fl(rfft(x))_k − DFT(x)_k| ≤ κ u ‖x‖₁`` (+ :func:`underflow_allowance`) for
    every k, u = :func:`unit_roundoff` (dtype). n must be 5-smooth."""
    if n < 1:
        raise ValueError("n must be positive")
    u = unit_roundoff(dtype)
    s = _sum_constants(n, dtype, True) * (1 + 1e-12)
    return s / (1 - s * u) * (1 + 1e-12)


@cache
def irfft_error_constant(n: int, dtype=np.float64) -> float:
    """κ' with ``|fl(irfft(Y, n))_j − irfft(Y, n)_j| ≤ κ' u (Σ_k w_k |Y_k|)/n``
    (+ :func:`underflow_allowance`), as ``numpy.fft.irfft`` computes it: the unnormalised
    backward transform (error ≤ κ_b u Σ w|Y|, κ_b from the radbN passes) times fct = fl(1/n)
    (``_raw_fft``: ``reciprocal(n)``; ``rfftp::copy_and_norm``: one product per output), which
    adds ``κ_b((1 + u)² − 1) + 2 + u`` unless n is a power of two (fct and the product exact)."""
    if n < 1:
        raise ValueError("n must be positive")
    u = unit_roundoff(dtype)
    s = _sum_constants(n, dtype, False) * (1 + 1e-12)
    kappa = s / (1 - s * u)
    if n & (n - 1):  # κ_b(1 + u)² + (1 + u)² − 1, the small terms added separately
        kappa = kappa + kappa * 3 * u + 2 + 2 * u
    return kappa * (1 + 1e-12)


def rfft_error_bound(n: int, dtype, l1: float, size: int | None = None) -> float:
    """Bound on the error of every coefficient of ``rfft`` (in ``dtype``) of values of ℓ1 norm
    ``l1`` folded onto n bins by ``np.add.at`` (``size`` values; bins of ≤ ⌈size/n⌉): the FFT's
    κ u ‖buf‖₁, ‖buf‖₁ ≤ (1 + fold u) l1, plus the folding error fold·u·l1
    (:func:`fold_error_constant`), plus :func:`underflow_allowance`. ``l1`` computed in floating
    point: relative margin 1e-6 (it is within (size)·u ≤ 1e-9 of the exact sum)."""
    u = unit_roundoff(dtype)
    kappa = rfft_error_constant(n, dtype)
    fold = fold_error_constant(n if size is None else size, n)
    return ((kappa + fold + kappa * fold * u) * u * l1 * (1 + 1e-6)
            + underflow_allowance(n))


def direct_dft_error_constant(m: int, dtype=np.longdouble) -> float:
    """Error per unit mass, in units of u, of privamp's direct DFT of m masses (``_step_spectrum``):
    ``Σ_j x_j e^{−iθ_j}`` with θ = fl(fl(2π̃·j')/n), j' ≡ j·k (mod n) reduced exactly into
    [−n/2, n/2] so |θ| ≤ π; terms fl(x_j·cos θ̃), fl(x_j·sin θ̃); real and imaginary parts summed
    by :func:`privamp.pld.distribution._tree_sum` (every term in ≤ ⌈log₂ m⌉ additions); then one
    complex addition to the light part's FFT value.

    * angle: 2π̃ (relative ≤ 0.637 u), a product and a division (u each): |θ̃ − θ| ≤ π·2.64 u;
    * library: each of cos, sin within LIBM_ERROR·u (``np.cos`` on long doubles calls the C
      library's ``cosl``; on float64 NumPy's own SIMD code, NUMPY_F64_TRIG_ERROR): twiddle error
      ≤ 2.64π u + √2·LIBM_ERROR u;
    * products: ≤ u |x_j| |e^{−iθ̃}|;
    * pairwise sums: ≤ γ_L Σ_j |t_j| with L = ⌈log₂ m⌉, γ_L = Lu/(1 − Lu) (Higham, *Accuracy and
      Stability of Numerical Algorithms*, 2nd ed., §4.2), for the real and the imaginary part,
      together ≤ γ_L Σ|t_j| (Minkowski);
    * the final complex addition: ≤ u |sum| — counted here per unit of the heavy mass (the light
      mass's share is added by the caller).
    """
    u = unit_roundoff(dtype)
    levels = max(m - 1, 0).bit_length()  # ⌈log₂ m⌉
    libm = LIBM_ERROR if _key(dtype) == "longdouble" else NUMPY_F64_TRIG_ERROR
    rho = 2.64 * math.pi + math.sqrt(2) * libm  # |fl-twiddle − e^{−iθ}| / u
    term = rho + 1 + rho * u  # |t̂_j − x_j e^{−iθ_j}| ≤ term u |x_j|
    gamma = levels / (1 - levels * u)
    return (term + gamma * (1 + term * u) + 1 + 1e-6) * (1 + 1e-9)


def pairwise_sum(v: np.ndarray) -> np.ndarray:
    """Σ over axis 0 by repeated halving (``v[:h] + v[h:2h]``, an odd last row carried over):
    every term takes part in at most ⌈log₂ m⌉ additions, so the error is ≤ γ_⌈log₂ m⌉ Σ|v|
    whatever the memory layout. (``v @ w`` on long doubles has no BLAS and sums in sequence —
    ``LONGDOUBLE_matmul_inner_noblas`` in numpy/_core/src/umath/matmul.c.src: error γ_m — and
    ``np.sum``'s pairwise summation applies only along a contiguous inner loop.)"""
    if v.shape[0] == 0:
        return np.zeros(v.shape[1:], dtype=v.dtype)
    while v.shape[0] > 1:
        h = v.shape[0] // 2
        top = v[:h] + v[h:2 * h]
        v = np.concatenate([top, v[2 * h:]]) if v.shape[0] % 2 else top
    # a copy, never a view of the argument: a caller that reuses its buffer (the DFT of one
    # heavy mass writes the sines into the array whose sum held the cosines) must not change
    # the sum returned
    return v[0].copy()


def fold_error_constant(size: int, n: int) -> float:
    """Folding ``size`` masses onto n bins with ``np.add.at`` (bins of ≤ c = ⌈size/n⌉ terms,
    summed in sequence): the bin values are within γ_{c−1} of exact, ‖Δx‖₁ ≤ γ_{c−1}‖x‖₁
    (Higham, §4.2), and a DFT coefficient moves by at most ‖Δx‖₁. In units of the u of the
    summation (γ computed with the float64 u, an upper bound for both formats)."""
    c = -(-size // n)
    if c <= 1:
        return 0.0
    k = c - 1
    return k / (1 - k * 2.0**-53) * (1 + 1e-12)


def underflow_allowance(n: int) -> float:
    """Absolute term for gradual underflow in float64: a product or quotient that underflows is
    off by ≤ 2^-1075 (sums of subnormals are exact). Each pass's butterflies propagate such
    errors to a partial coefficient with total weight Γ ≤ 64 (tests/test_fft_bounds.py), and
    to a final value through ≤ n coefficients per pass with weights ≤ 1 (÷ n after the
    irfft normalisation); with at most 2 log₂ n passes this is ≤ n·2^-1040. For x87 extended the
    threshold is 2^-16445 and the same allowance covers it."""
    return n * 2.0**-1040
