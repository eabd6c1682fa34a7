"""The FFT rounding-error bounds of ``privamp.pld._fft_bounds`` (docs/certification.md, "FFT
rounding errors").

Oracles:
* ``tests/pocketfft_model.py``, a statement-by-statement transcription of pocketfft's real FFT,
  reproduces ``numpy.fft.rfft``/``irfft`` bit for bit (so the butterflies analysed are the ones
  that run); its symbolic mode re-derives the per-pass constants;
* exact DFTs: mpmath (40 digits) for long-double transforms; for float64 transforms a
  long-double direct DFT (exact angle reduction, pairwise sums) whose own error bound, about
  10⁻⁴ of the bound under test, is added to the observed error.

Every comparison asserts observed ≤ bound and records observed/bound; the module prints the
largest ratios at the end (``pytest -s``).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import pocketfft_model as M
from privamp.pld import _fft_bounds as fb
from privamp.pld import distribution as dist
from privamp.pld.distribution import StepPLD, fast_length

LD = np.longdouble
U64 = 2.0**-53
UEXT = 2.0**-64
X87 = np.finfo(np.longdouble).nmant == 63
needs_x87 = pytest.mark.skipif(not X87, reason="long double is not x87 extended here")
DTYPES = [np.float64, pytest.param(LD, marks=needs_x87)]
TWO_PI_LD = LD("6.283185307179586476925286766559005768394")

RATIOS: dict[str, float] = {}


def size_class(n: int) -> str:
    return "n<=16" if n <= 16 else ("n<=1024" if n <= 1024 else "n>1024")


def record(key: str, observed: float, bound: float) -> None:
    assert observed <= bound, (key, observed, bound)
    if bound > 0:
        RATIOS[key] = max(RATIOS.get(key, 0.0), observed / bound)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if RATIOS:
        print("\nlargest observed/bound ratios:")
        for key in sorted(RATIOS):
            print(f"  {key:48s} {RATIOS[key]:.3e}")


def five_smooth(limit: int) -> list[int]:
    return sorted(2**a * 3**b * 5**c for a in range(24) for b in range(16) for c in range(11)
                  if 2**a * 3**b * 5**c <= limit)


# ------------------------------------------------------------------------------------------
# exact references
# ------------------------------------------------------------------------------------------

def mpf_exact(v) -> mpmath.mpf:
    num, den = (v.as_integer_ratio() if hasattr(v, "as_integer_ratio")
                else Fraction(v).as_integer_ratio())
    return mpmath.mpf(num) / den


@functools.lru_cache(maxsize=8)
def mp_table(n: int) -> list:
    """e^{−2πi r/n}, r < n, 40 digits."""
    with mpmath.workdps(40):
        return [mpmath.expjpi(mpmath.mpf(-2 * r) / n) for r in range(n)]


def mp_dft(x: np.ndarray, ks) -> list:
    """Exact (40-digit) DFT of x at the frequencies ks."""
    n = x.size
    tab = mp_table(n)
    with mpmath.workdps(40):
        xs = [mpf_exact(v) for v in x]
        nz = [j for j in range(n) if x[j] != 0]
        return [mpmath.fsum(xs[j] * tab[(j * k) % n] for j in nz) for k in ks]


def mp_irfft(y: np.ndarray, n: int, js) -> list:
    """Exact irfft(y, n) at the outputs js (imaginary parts of y[0] and y[n/2] ignored, as
    NumPy does)."""
    tab = mp_table(n)
    h = n // 2
    with mpmath.workdps(40):
        re = [mpf_exact(v.real) for v in y]
        im = [mpf_exact(v.imag) for v in y]
        out = []
        for j in js:
            s = re[0]
            for k in range(1, (n - 1) // 2 + 1):
                w = tab[(-j * k) % n]  # e^{+2πi jk/n}
                s += 2 * (re[k] * w.real - im[k] * w.imag)
            if n % 2 == 0 and n > 1:
                s += re[h] * (1 if j % 2 == 0 else -1)
            out.append(s / n)
        return out


def angle_table(n: int):
    """cos and sin of 2π j/n in long double for every j in [−n/2, n/2], as lookups of an
    integer array of such j: the values of ``np.cos(TWO_PI_LD * j / n)`` term by term (the same
    expression, once per distinct angle; at n = 2^20 the references took 13 s of cos and sin)."""
    half = n // 2
    ang = TWO_PI_LD * np.arange(-half, half + 1, dtype=np.int64).astype(LD) / LD(n)
    cos, sin = np.cos(ang), np.sin(ang)
    return (lambda jk: cos[jk + half]), (lambda jk: sin[jk + half])


def ld_dft(xs: list[np.ndarray], ks: np.ndarray) -> tuple[list[np.ndarray], float]:
    """Long-double direct DFTs of the arrays xs (one length n) at ks, and a bound on their
    error per unit ‖x‖₁ (cos/sin evaluated once for all the arrays)."""
    n = xs[0].size
    xls = [x.astype(LD) for x in xs]
    j = np.arange(n, dtype=np.int64)
    outs = [np.empty(ks.size, dtype=np.clongdouble) for _ in xs]
    chunk = max(1, 2**20 // n)
    cos_of, sin_of = angle_table(n)
    for c0 in range(0, ks.size, chunk):
        kk = ks[c0:c0 + chunk].astype(np.int64)
        jk = (j[:, None] * kk[None, :]) % n
        jk -= n * (2 * jk > n)
        cos, sin = cos_of(jk), sin_of(jk)
        for xl, out in zip(xls, outs, strict=True):
            out[c0:c0 + chunk] = (fb.pairwise_sum(cos * xl[:, None])
                                  - 1j * fb.pairwise_sum(sin * xl[:, None]))
    return outs, fb.direct_dft_error_constant(n, LD) * UEXT


def ld_irfft(ys: list[np.ndarray], n: int, js: np.ndarray) -> tuple[list[np.ndarray], float]:
    """Long-double direct irfft of the spectra ys at the outputs js, and a bound on its error
    per unit Σ w|Y|/n (terms w(Re Y cos − Im Y sin): angle ≤ 2.64π u_ext, library 2·LIBM_ERROR,
    products and a difference ≤ 4 u_ext; pairwise sums; the division by n)."""
    m = n // 2 + 1
    k = np.arange(m, dtype=np.int64)
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    parts = []
    for y in ys:
        yr = y.real.astype(LD) * w.astype(LD)
        yi = y.imag.astype(LD) * w.astype(LD)
        yi[0] = 0
        if n % 2 == 0:
            yi[-1] = 0
        parts.append((yr, yi))
    outs = [np.empty(js.size, dtype=LD) for _ in ys]
    chunk = max(1, 2**20 // m)
    cos_of, sin_of = angle_table(n)
    for c0 in range(0, js.size, chunk):
        jj = js[c0:c0 + chunk].astype(np.int64)
        jk = (k[:, None] * jj[None, :]) % n
        jk -= n * (2 * jk > n)
        cos, sin = cos_of(jk), sin_of(jk)
        for (yr, yi), out in zip(parts, outs, strict=True):
            t = cos * yr[:, None] - sin * yi[:, None]
            out[c0:c0 + chunk] = fb.pairwise_sum(t) / LD(n)
    levels = max(m - 1, 0).bit_length()
    return outs, (2.64 * math.pi + 2 * math.sqrt(2) * fb.LIBM_ERROR + 4 + levels + 2) * UEXT * 1.01


def spectral_l1(y: np.ndarray, n: int) -> float:
    w = np.full(y.size, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    a = np.abs(y.astype(np.clongdouble))
    a[0] = abs(y[0].real)
    if n % 2 == 0:
        a[-1] = abs(y[-1].real)
    return float(np.sum(w * a.astype(float)))


# ------------------------------------------------------------------------------------------
# the model is the code that runs
# ------------------------------------------------------------------------------------------

def test_rfftp_is_the_plan_for_5_smooth_lengths():
    """pocketfft_r::pocketfft_r picks rfftp when length < 50 or lpf² ≤ length (lpf the largest
    prime factor), whatever T0: always for 5-smooth lengths, so no Bluestein, no radfg."""
    for n in five_smooth(2**23):
        lpf = max(p for p in (1, 2, 3, 5) if n % p == 0)
        assert n < 50 or lpf * lpf <= n
        assert set(fb.factorize(n)) <= {2, 3, 4, 5}
        assert fb.factorize(n) == M.factorize(n)
        assert [(ip, ido) for ip, ido, _ in M.passes(n, True)] == fb._passes(n, True)
        assert [(ip, ido) for ip, ido, _ in M.passes(n, False)] == fb._passes(n, False)
    assert fast_length(1000) in five_smooth(2000)


@pytest.mark.parametrize("dtype", DTYPES)
def test_model_reproduces_numpy_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    limit = 2200 if dtype is np.float64 else 700
    for n in five_smooth(limit):
        x = (rng.random(n) ** 3).astype(dtype)
        assert np.array_equal(np.fft.rfft(x), M.model_rfft(x)), n
        y = np.fft.rfft(rng.random(n)).astype(np.complex128 if dtype is np.float64
                                              else np.clongdouble) * (0.3 - 0.7j)
        assert np.array_equal(np.fft.irfft(y, n), M.model_irfft(y, n)), n


# ------------------------------------------------------------------------------------------
# the constants are the analysis
# ------------------------------------------------------------------------------------------

def radix_constants(dtype) -> dict:
    exact = M.exact_constants()
    out = {}
    with mpmath.workdps(50):
        for name in M.LITERALS:
            stored = M.literal(name, dtype)
            rep = abs(mpf_exact(stored) - exact[name])
            out[name] = (float(stored), float(exact[name]), float(rep))
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_pass_constants_cover_the_symbolic_analysis(dtype):
    u = fb.unit_roundoff(dtype)
    mu = fb.twiddle_error(dtype)
    consts = radix_constants(dtype)
    table = fb._PASS[fb._key(dtype)]
    gamma = 0.0
    for forward, d in ((True, "f"), (False, "b")):
        for ip in (2, 3, 4, 5):
            idos = (1, 2, 3, 4, 6, 8) if ip in (2, 4) else (1, 3, 5, 9)
            derived: dict = {}
            for ido in idos:
                for l1 in (1, 2, 3):
                    for key, c in M.analyse_pass(ip, ido, forward, u, mu, consts, l1).items():
                        derived[key] = max(derived.get(key, 0.0), c)
            gamma = max(gamma, derived.pop("uf"))
            assert set(derived) == set(table[d][ip]), (d, ip)
            for part, c in derived.items():
                # the table rounds up to 2 decimals (and covers the analysis' own rounding)
                assert table[d][ip][part] >= c * (1 + 1e-9), (d, ip, part, c)
                assert table[d][ip][part] <= c + 0.02, (d, ip, part, c)
    # underflow allowance: every source reaches an output with total weight ≤ 64
    assert gamma <= 64


def test_radix_constant_representation_errors():
    """The literals are stored within (u + u_ext)|k| (float64: rounded twice, through long
    double); the analysis uses the actual errors (0.03 u … 0.79 u)."""
    for dtype in (np.float64, LD):
        u = fb.unit_roundoff(dtype)
        for name, (_, exact, rep) in radix_constants(dtype).items():
            assert rep <= (u + UEXT) * abs(exact) * 1.0001, name


# ------------------------------------------------------------------------------------------
# twiddle factors and the C library
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_twiddles_within_mu(dtype):
    """Every twiddle e^{2πi·idx/n} that sincos_2pibyn returns is within μ u (the model's
    SinCos reproduces pocketfft's, as the bitwise test shows)."""
    u = fb.unit_roundoff(dtype)
    mu = fb.twiddle_error(dtype)
    worst = 0.0
    for n in (3, 5, 12, 100, 360, 1000, 1024, 2187, 3125, 4096):
        tw = M.SinCos(n, dtype)
        tab = mp_table(n)
        with mpmath.workdps(40):
            for idx in range(n):
                r, i = tw[idx]
                exact = mpmath.conj(tab[idx])  # e^{+2πi idx/n}
                err = abs(mpmath.mpc(mpf_exact(r), mpf_exact(i)) - exact)
                worst = max(worst, float(err) / u)
    record(f"twiddles {fb._key(dtype)} (units: mu)", worst, mu)


def test_long_double_twiddles_are_computed_in_long_double():
    """sincos_2pibyn<long double> uses Thigh = long double (sizeof > sizeof(double)): the
    long-double rfft of a spike at 1 (X_k = e^{−2πik/n}, all twiddle work) is accurate to the
    extended unit roundoff, far below the ≈1e-17 of double twiddles."""
    if not X87:
        pytest.skip("long double is not x87 extended here")
    for n in (360, 1000, 4096):
        x = np.zeros(n, dtype=LD)
        x[1] = 1
        got = np.fft.rfft(x)
        exact = mp_dft(x, range(n // 2 + 1))
        with mpmath.workdps(40):
            err_ld = max(float(abs(mpmath.mpc(mpf_exact(g.real), mpf_exact(g.imag)) - e))
                         for g, e in zip(got, exact, strict=True))
            got_d = np.fft.rfft(x.astype(float))
            err_d = max(float(abs(mpmath.mpc(mpf_exact(g.real), mpf_exact(g.imag)) - e))
                        for g, e in zip(got_d, exact, strict=True))
        assert err_ld < 16 * UEXT  # at the long-double level …
        assert err_d > 64 * UEXT   # … where double twiddles would not be
        record("ld spike at 1 (units: bound)", err_ld,
               fb.rfft_error_constant(n, LD) * UEXT)


def test_libm_accuracy_assumption():
    """|cos(a) − fl cos(a)| ≤ LIBM_ERROR·u (and sin) for the library loaded here: double cos/sin
    (math.cos: the C library, as std::cos in pocketfft) on the twiddle arguments x·π/(4n),
    and cosl/sinl (np.cos on long doubles) on twiddle arguments and on [−π, π]."""
    rng = np.random.default_rng(3)
    worst_d = worst_ld = 0.0
    with mpmath.workdps(40):
        for n in (1000, 2**20, 3**12, 5**9):
            ang_d = float(LD("0.25") * LD(M.LD_PI) / LD(n))
            ang_ld = LD("0.25") * LD(M.LD_PI) / LD(n)
            for x in rng.integers(0, n + 1, 300):
                a = float(x) * ang_d
                ex = mpf_exact(a)
                worst_d = max(worst_d, float(abs(mpmath.cos(ex) - mpf_exact(math.cos(a)))),
                              float(abs(mpmath.sin(ex) - mpf_exact(math.sin(a)))))
                al = LD(int(x)) * ang_ld
                ex = mpf_exact(al)
                worst_ld = max(worst_ld, float(abs(mpmath.cos(ex) - mpf_exact(np.cos(al)))),
                               float(abs(mpmath.sin(ex) - mpf_exact(np.sin(al)))))
        for a in np.concatenate([rng.uniform(-np.pi, np.pi, 2000), [np.pi, -np.pi, 0.0]]):
            al = LD(a)
            ex = mpf_exact(al)
            worst_ld = max(worst_ld, float(abs(mpmath.cos(ex) - mpf_exact(np.cos(al)))),
                           float(abs(mpmath.sin(ex) - mpf_exact(np.sin(al)))))
    record("libm cos/sin double (units u)", worst_d / U64, fb.LIBM_ERROR)
    if X87:
        record("libm cosl/sinl (units u)", worst_ld / UEXT, fb.LIBM_ERROR)


def test_numpy_float64_trig_accuracy_assumption():
    """|cos(a) − np.cos(a)| ≤ NUMPY_F64_TRIG_ERROR·u (and sin) for the NumPy loaded here, on
    arrays (its SIMD loops) of angles in [−π, π] — uniform, near ±π, ±π/2 and 0, and the
    angles the direct DFT forms, fl(fl(2π̃·j)/n) — the assumption of the float64 direct DFT
    (``distribution._light_direct``)."""
    rng = np.random.default_rng(29)
    n = 1_728_000
    j = rng.integers(-(n // 2), n // 2 + 1, 1500).astype(np.float64)
    edges = np.concatenate([c + np.linspace(-1e-6, 1e-6, 41)
                            for c in (-np.pi / 2, 0.0, np.pi / 2)])
    a = np.concatenate([rng.uniform(-np.pi, np.pi, 1500), j * np.float64(math.tau) / n, edges,
                        np.pi - np.geomspace(1e-12, 1e-3, 30),
                        -np.pi + np.geomspace(1e-12, 1e-3, 30), [np.pi, -np.pi]])
    cos, sin = np.cos(a), np.sin(a)  # whole arrays: the vectorised loops
    worst = 0.0
    with mpmath.workdps(40):
        for x, c, s_ in zip(a.tolist(), cos.tolist(), sin.tolist(), strict=True):
            ex = mpf_exact(x)
            worst = max(worst, float(abs(mpmath.cos(ex) - mpf_exact(c))),
                        float(abs(mpmath.sin(ex) - mpf_exact(s_))))
    record("numpy cos/sin float64 (units u)", worst / U64, fb.NUMPY_F64_TRIG_ERROR)


def test_long_double_matmul_sums_in_sequence():
    """NumPy's long-double matmul has no BLAS: LONGDOUBLE_matmul_inner_noblas accumulates
    ``*op += val1 * val2`` in order (error γ_m, not γ_log m) — why privamp sums pairwise."""
    rng = np.random.default_rng(5)
    x = rng.random(3000).astype(LD)
    w = (rng.random((3000, 3)) - 0.5).astype(LD)
    got = x @ w
    seq = np.zeros(3, dtype=LD)
    for j in range(x.size):
        seq = seq + x[j] * w[j]
    assert np.array_equal(got, seq)
    v = rng.random((1000, 4)).astype(LD)
    tree = fb.pairwise_sum(v)
    assert np.array_equal(tree, fb.pairwise_sum(v[:, ::-1])[::-1])
    assert fb.pairwise_sum(np.zeros((0, 3))).shape == (3,)


# ------------------------------------------------------------------------------------------
# observed errors against the bounds
# ------------------------------------------------------------------------------------------

def inputs(n: int, rng) -> dict:
    out = {
        "random": rng.random(n),
        "spike at 0": np.eye(1, n, 0)[0],
        "spike at 1": np.eye(1, n, min(1, n - 1))[0],
        "spike at n-1": np.eye(1, n, n - 1)[0] * 0.7,
        "all equal": np.full(n, 0.1),
        "alternating": np.tile([0.3, 0.0], n)[:n],
        "heavy + light": np.where(rng.random(n) < 0.02, 1.0, 1e-9) * rng.random(n),
        "spread exponents": rng.random(n) ** 30,
        "two spikes": np.eye(1, n, 0)[0] + np.eye(1, n, n // 3)[0] / 3,
    }
    return out


def frequencies(n: int, rng, full: int) -> np.ndarray:
    m = n // 2 + 1
    if n <= full:
        return np.arange(m)
    extra = rng.integers(0, m, 40 if n <= 8192 else 20)
    return np.unique(np.concatenate([[0, 1, 2, 3, m - 1, m // 3, m // 2], extra]))


def test_length_one_is_exact():
    """n = 1: no pass runs (rfftp::exec multiplies by fct = 1): both constants are 0."""
    for dtype in (np.float64, LD):
        x = np.array([0.3], dtype=dtype)
        assert np.fft.rfft(x)[0] == x[0] and np.fft.irfft(np.fft.rfft(x), 1)[0] == x[0]
        assert fb.rfft_error_constant(1, dtype) == 0 == fb.irfft_error_constant(1, dtype)


LENGTHS = [2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20, 25, 27, 30, 32, 45, 48, 50, 60, 64,
           81, 100, 120, 125, 128, 243, 250, 256, 360, 375, 500, 512, 625, 729, 1000, 1024, 1536,
           2048, 2187, 3125, 4096, 6561, 8192, 15625, 16384, 19683, 32768, 59049, 65536]
SLOW_LENGTHS = [78125, 131072, 177147, 2**18, 390625, 3 * 2**18, 2**20]


def check_rfft_double(n: int) -> None:
    rng = np.random.default_rng(n)
    ks = frequencies(n, rng, 1024)
    kappa = fb.rfft_error_constant(n, np.float64)
    cases = inputs(n, rng)
    refs, ref_err = ld_dft(list(cases.values()), ks)
    for (name, x), ref in zip(cases.items(), refs, strict=True):
        l1 = float(np.sum(np.abs(x)))
        got = np.fft.rfft(x)[ks]
        obs = float(np.max(np.abs(got.astype(np.clongdouble) - ref))) + ref_err * l1 * 1.01
        bound = kappa * U64 * l1 + fb.underflow_allowance(n)
        record(f"rfft float64 {size_class(n)} {name}", obs, bound)


@pytest.mark.parametrize("n", LENGTHS)
def test_rfft_double_within_bound(n):
    check_rfft_double(n)


@pytest.mark.slow
@pytest.mark.parametrize("n", SLOW_LENGTHS)
def test_rfft_double_within_bound_large(n):
    check_rfft_double(n)


def check_rfft_ext(n: int) -> None:
    rng = np.random.default_rng(n + 1)
    ks = frequencies(n, rng, 64)[:12] if n > 64 else frequencies(n, rng, 64)
    if n > 64:
        ks = np.unique(np.concatenate([ks, [n // 2, n // 2 - 1]]))
    kappa = fb.rfft_error_constant(n, LD)
    for name, x in inputs(n, rng).items():
        x = x.astype(LD)
        l1 = float(np.sum(np.abs(x)))
        got = np.fft.rfft(x)
        exact = mp_dft(x, ks)
        with mpmath.workdps(40):
            obs = max(float(abs(mpmath.mpc(mpf_exact(got[k].real), mpf_exact(got[k].imag)) - e))
                      for k, e in zip(ks, exact, strict=True))
        record(f"rfft longdouble {size_class(n)} {name}", obs, kappa * UEXT * l1)


@needs_x87
@pytest.mark.parametrize("n", [n for n in LENGTHS if n <= 4096])
def test_rfft_long_double_within_bound(n):
    check_rfft_ext(n)


@needs_x87
@pytest.mark.slow
@pytest.mark.parametrize("n", [6561, 8192, 15625, 16384, 19683])
def test_rfft_long_double_within_bound_large(n):
    check_rfft_ext(n)


def spectra(n: int, rng) -> dict:
    m = n // 2 + 1
    p = rng.random(n) ** 4
    p /= p.sum()
    base = np.fft.rfft(p)
    out = {
        "rfft of masses": base,
        "powered (T=40)": base**40,
        "random complex": (rng.random(m) - 0.5) + 1j * (rng.random(m) - 0.5),
        "single frequency": np.eye(1, m, min(1, m - 1))[0].astype(complex) * (0.6 + 0.8j),
        "all ones": np.ones(m, dtype=complex),
        "alternating": np.where(np.arange(m) % 2 == 0, 1.0, -1.0).astype(complex),
        "spread magnitudes": np.exp(-rng.random(m) * 40) * np.exp(2j * np.pi * rng.random(m)),
    }
    return out


def check_irfft_double(n: int) -> None:
    rng = np.random.default_rng(2 * n)
    js = np.arange(n) if n <= 1024 else np.unique(np.concatenate(
        [[0, 1, n - 1, n // 2], rng.integers(0, n, 40)]))
    kappa = fb.irfft_error_constant(n, np.float64)
    cases = spectra(n, rng)
    refs, ref_err = ld_irfft(list(cases.values()), n, js)
    for (name, y), ref in zip(cases.items(), refs, strict=True):
        got = np.fft.irfft(y, n)[js]
        l1 = spectral_l1(y, n)
        obs = float(np.max(np.abs(got.astype(LD) - ref))) + ref_err * l1 / n
        bound = kappa * U64 * l1 / n + fb.underflow_allowance(n)
        record(f"irfft float64 {size_class(n)} {name}", obs, bound)


@pytest.mark.parametrize("n", LENGTHS)
def test_irfft_double_within_bound(n):
    check_irfft_double(n)


@pytest.mark.slow
@pytest.mark.parametrize("n", SLOW_LENGTHS)
def test_irfft_double_within_bound_large(n):
    check_irfft_double(n)


@needs_x87
@pytest.mark.parametrize("n", [n for n in LENGTHS if n <= 2048])
def test_irfft_long_double_within_bound(n):
    rng = np.random.default_rng(3 * n)
    js = list(range(n)) if n <= 32 else sorted({0, 1, n - 1, n // 2, *rng.integers(0, n, 4)})
    kappa = fb.irfft_error_constant(n, LD)
    for name, y in spectra(n, rng).items():
        y = y.astype(np.clongdouble)
        got = np.fft.irfft(y, n)
        exact = mp_irfft(y, n, js)
        with mpmath.workdps(40):
            obs = max(float(abs(mpf_exact(got[j]) - e)) for j, e in zip(js, exact, strict=True))
        record(f"irfft longdouble {size_class(n)} {name}", obs,
               kappa * UEXT * spectral_l1(y, n) / n)


# ------------------------------------------------------------------------------------------
# privamp's own spectra (_step_spectrum): FFT, folding, direct extended-precision DFT
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size,n", [(50, 64), (300, 300), (1000, 384), (5000, 1024), (700, 2187)])
def test_step_spectrum_errors_within_their_bounds(size, n):
    rng = np.random.default_rng(size + n)
    masses = rng.random(size) ** 8
    masses[rng.integers(0, size, 3)] = [0.3, 0.2, 0.1]
    masses /= masses.sum()
    step = StepPLD(0.01, -size // 2, masses, 0.0, "upper")
    pos = np.arange(size) % n
    sel = np.unique(np.concatenate([[0, 1, n // 2], rng.integers(0, n // 2 + 1, 6)]))
    # exact spectrum of the folded masses at sel
    folded = [Fraction(0)] * n
    for p, v in zip(pos, masses, strict=True):
        folded[p] += Fraction(float(v))
    tab = mp_table(n)
    with mpmath.workdps(40):
        fx = [mpmath.mpf(f.numerator) / f.denominator for f in folded]
        exact = {int(k): mpmath.fsum(fx[j] * tab[(j * int(k)) % n] for j in range(n))
                 for k in sel}

    def worst(values, ks):
        with mpmath.workdps(40):
            return max(float(abs(mpmath.mpc(mpf_exact(values[i].real), mpf_exact(values[i].imag))
                                 - exact[int(k)])) for i, k in enumerate(ks))

    values, err, _ = dist._step_spectrum(step, n, None, 0.0)
    record("_step_spectrum double FFT", worst(values[sel], sel), err)
    for budget in (0.0, 1e-6, 0.5):  # all heavy / mixed / mostly light
        values, err, _ = dist._step_spectrum(step, n, sel, budget)
        record(f"_step_spectrum direct (rest {budget:g})", worst(values, sel), err)


@pytest.mark.parametrize(("size", "n", "nsel", "budget"),
                         [(300, 7500, 6, 0.05), (2000, 40000, 3, 0.05), (40, 40000, 17, 0.05),
                          (4000, 3125, 1, 1e-12)])
def test_step_spectrum_direct_light_part_within_bound(size, n, nsel, budget):
    """Few frequencies of a long transform: the light masses' DFT is taken term by term in
    double precision (no FFT of length n), the heavy ones in extended precision. Each selected
    coefficient lies within the bound returned (exact 40-digit reference), the path is the one
    taken (``3·light·sel ≤ n``; the last case folds 4,000 masses onto 3,125 points), and the
    values agree with the FFT path's within both bounds."""
    rng = np.random.default_rng(size * nsel)
    masses = rng.random(size) ** 8
    masses[rng.integers(0, size, 2)] = [0.4, 0.2]
    masses /= masses.sum()
    step = StepPLD(0.01, -size // 2, masses, 0.0, "upper")
    sel = np.unique(np.concatenate([[0, n // 2], rng.integers(1, n // 2, nsel)]))[:nsel + 1]
    ext = dist._split_for_extended(masses, n, budget)
    assert ext["light"].size > 0 and 3 * ext["light"].size * sel.size <= n
    assert ext["error_direct"] < ext["error"]  # the direct sum's constant is the smaller one
    values, err, _ = dist._step_spectrum(step, n, sel, budget)
    assert err == ext["error_direct"]
    tab = mp_table(n)
    with mpmath.workdps(40):
        xs = [mpf_exact(v) for v in masses]
        for value, k in zip(values, sel.tolist(), strict=True):
            exact = mpmath.fsum(xs[j] * tab[(j * k) % n] for j in range(size))
            obs = float(abs(mpmath.mpc(mpf_exact(value.real), mpf_exact(value.imag)) - exact))
            record("_step_spectrum direct light part", obs, err)
    # the FFT path (a kept step takes it): the same coefficients within both bounds
    light = np.zeros(n)
    np.add.at(light, ext["pos"][ext["light"]], masses[ext["light"]])
    fft_values = dist._direct_coefficients(masses, {**ext, "light_fft": np.fft.rfft(light)},
                                           sel, n)
    assert np.max(np.abs(np.asarray(values - fft_values, dtype=complex))) <= err + ext["error"]


@pytest.mark.parametrize("n", [720, 1000, 64])
def test_direct_dft_of_one_heavy_mass(n):
    """One heavy mass (a tilted step that is almost an atom: randomized response tilted by
    λ = 50): its DFT's cosines were summed into a view of the buffer the sines were then written
    into, so the real parts came out as sines — a spectrum √2 off, and a composed upper end of
    9.9475 for ten steps of ε₀ = 1 at δ 1e-10, whose exact ε is 10 − 2.3e-9."""
    rng = np.random.default_rng(n)
    size = 3 * n - 7  # folded almost three times
    masses = rng.random(size) * 1e-12
    masses[size // 3] = 0.9
    step = StepPLD(0.01, -size // 2, masses, 0.0, "upper")
    folded = np.zeros(n)
    np.add.at(folded, np.arange(size) % n, masses)
    reference = np.fft.rfft(folded)
    every = np.arange(n // 2 + 1)
    for budget in (1e-6, 0.5):  # the light rest, and everything but the atom
        ext = dist._split_for_extended(masses, n, budget)
        assert ext["heavy"].size == 1
        values, err, _ = dist._step_spectrum(step, n, every, budget)
        assert np.max(np.abs(np.asarray(values, dtype=complex) - reference)) <= err + 1e-15


def test_pairwise_sum_returns_its_own_array():
    v = np.arange(6.0).reshape(1, 6)
    total = fb.pairwise_sum(v)
    v[0] = -1.0
    assert np.array_equal(total, np.arange(6.0))


@needs_x87
def test_step_spectrum_full_extended_fft_within_bound():
    """The third branch (too many heavy masses for the direct DFT): one long-double FFT."""
    rng = np.random.default_rng(11)
    n = 4096
    masses = rng.random(n)
    masses /= masses.sum()
    step = StepPLD(0.01, 0, masses, 0.0, "upper")
    every = np.arange(n // 2 + 1)  # 4096 heavy masses × 2049 frequencies > 4e6
    values, err, _ = dist._step_spectrum(step, n, every, 0.0)
    sel = every[::97]
    exact = mp_dft(masses.astype(LD), sel)
    with mpmath.workdps(40):
        obs = max(float(abs(mpmath.mpc(mpf_exact(values[k].real), mpf_exact(values[k].imag))
                            - e)) for k, e in zip(sel, exact, strict=True))
    record("_step_spectrum extended FFT", obs, err)


def test_direct_dft_of_many_masses_within_bound():
    """2^17 heavy masses at the frequencies 0 and n/2 (exact references: signed sums). Summed in
    sequence (``x @ cos``) the error grows like √m u_ext … m u_ext, far above (2π + 4 + log₂ m)
    u_ext; summed pairwise it stays below the bound."""
    if not X87:
        pytest.skip("long double is not x87 extended here")
    rng = np.random.default_rng(17)
    m = n = 2**17
    masses = rng.random(m)
    masses /= masses.sum()
    step = StepPLD(0.01, 0, masses, 0.0, "upper")
    sel = np.array([0, n // 2])
    values, err, _ = dist._step_spectrum(step, n, sel, 0.0)
    fr = [Fraction(float(v)) for v in masses]
    exact = [sum(fr), sum(fr[0::2]) - sum(fr[1::2])]
    for v, e in zip(values, exact, strict=True):
        obs = abs(Fraction(*v.real.as_integer_ratio()) - e) + abs(
            Fraction(*v.imag.as_integer_ratio()))
        record("_step_spectrum direct, 2^17 masses", float(obs), err)


@pytest.mark.parametrize(("size", "n", "nsel"), [(50, 64, 9), (700, 2187, 300), (3000, 7500, 1500),
                                                  (900, 1875, 1), (5, 15625, 3)])
def test_direct_dft_table_is_the_per_term_evaluation(size, n, nsel):
    """``_direct_coefficients`` looks cos and sin up in a table of every angle when there are
    fewer angles than terms: bit for bit the values of one cos and sin per term (the same
    expression, evaluated once per distinct angle), on both sides of the switch."""
    rng = np.random.default_rng(size * n)
    masses = rng.random(size) ** 6
    masses /= masses.sum()
    ext = dist._split_for_extended(masses, n, 1e-9)
    light = np.zeros(n)
    np.add.at(light, ext["pos"][ext["light"]], masses[ext["light"]])
    ext["light_fft"] = np.fft.rfft(light)
    freqs = np.sort(rng.choice(n // 2 + 1, size=nsel, replace=False))
    # the first three cases take the table, the last two one cos and sin per term
    assert (2 * (n + 1) <= ext["heavy"].size * freqs.size) == (nsel > 3)
    got = dist._direct_coefficients(masses, ext, freqs, n)
    heavy = ext["heavy"]
    x = masses[heavy].astype(dist._EXT)
    want = []
    for k in freqs.tolist():
        jk = (ext["pos"][heavy].astype(np.int64) * k) % n
        jk -= n * (2 * jk > n)
        ang = dist._TWO_PI_EXT * jk.astype(dist._EXT) / dist._EXT(n)
        re = dist._fb.pairwise_sum((np.cos(ang) * x)[:, None])[0]
        im = dist._fb.pairwise_sum((np.sin(ang) * x)[:, None])[0]
        want.append(ext["light_fft"][k].astype(got.dtype) + (re - 1j * im))
    assert np.array_equal(got, np.array(want, dtype=got.dtype))
