"""A line-by-line Python model of the real FFT that ``numpy.fft.rfft`` / ``irfft`` run (NumPy 2.x),
used by ``tests/test_fft_bounds.py`` for two things:

1. **Fidelity.** Run in float64 (Python floats) or ``numpy.longdouble`` scalars, the model
   reproduces NumPy's output *bit for bit* — evidence that the transcription below has the same
   operations in the same order as the compiled code (no reassociation, no FMA contraction).
2. **Error analysis.** Run on symbolic values (:class:`Sym`), the same butterfly code yields the
   per-pass rounding-error constants of ``privamp.pld._fft_bounds``.

Source transcribed: ``pocketfft_hdronly.h`` of github.com/mreineck/pocketfft, branch ``cpp``,
commit 33ae5dc94c9cdc7f1c78346504a85de87cadaa12 (the ``numpy/fft/pocketfft`` submodule of NumPy
v2.0.0 … v2.4.6): ``sincos_2pibyn``, ``rfftp::factorize``, ``rfftp::comp_twiddle``,
``rfftp::radf2/3/4/5``, ``rfftp::radb2/3/4/5``, ``rfftp::exec``, ``rfftp::copy_and_norm``; and
NumPy's ``numpy/fft/_pocketfft_umath.cpp`` (``rfft_impl``, ``irfft_loop``: the halfcomplex
packing) and ``numpy/fft/_pocketfft.py`` (``_raw_fft``: ``fct = reciprocal(n)`` for irfft).
Only what 5-smooth lengths reach is modelled: ``pocketfft_r`` picks ``rfftp`` (not Bluestein)
whenever ``length < 50`` or ``largest_prime_factor² ≤ length``, always true for 5-smooth
lengths, and ``radfg``/``radbg`` (factors > 5) never run.
"""

from __future__ import annotations

import math

import numpy as np

# -------------------------------------------------------------------------------------------
# constants exactly as pocketfft spells them (long double literals, then T0(...))
# -------------------------------------------------------------------------------------------

LD_PI = "3.141592653589793238462643383279502884197"
LITERALS = {
    "taui": "0.8660254037844386467637231707529362",   # radf3, radb3: sin(2π/3)
    "hsqt2": "0.707106781186547524400844362104849",   # radf4: √2/2
    "sqrt2": "1.414213562373095048801688724209698",   # radb4: √2
    "tr11": "0.3090169943749474241022934171828191",   # radf5, radb5: cos(2π/5)
    "ti11": "0.9510565162951535721164393333793821",   # sin(2π/5)
    "tr12": "-0.8090169943749474241022934171828191",  # cos(4π/5)
    "ti12": "0.5877852522924731291687059546390728",   # sin(4π/5)
}


def literal(name: str, dtype):
    """``T0(<long double literal>)``: parsed to x87 extended, then converted to T0."""
    ld = np.longdouble(LITERALS[name])
    return float(ld) if dtype is np.float64 else ld


def exact_constants():
    """The exact values of the radix constants (mpmath, 50 digits)."""
    import mpmath
    with mpmath.workdps(50):
        return {"taui": mpmath.sqrt(3) / 2, "hsqt2": mpmath.sqrt(2) / 2, "sqrt2": mpmath.sqrt(2),
                "tr11": mpmath.cos(2 * mpmath.pi / 5), "ti11": mpmath.sin(2 * mpmath.pi / 5),
                "tr12": mpmath.cos(4 * mpmath.pi / 5), "ti12": mpmath.sin(4 * mpmath.pi / 5)}


# -------------------------------------------------------------------------------------------
# plan: factorisation, pass order, twiddles
# -------------------------------------------------------------------------------------------

def factorize(n: int) -> list[int]:
    """``rfftp::factorize``: factors of 4 first, one factor 2 moved to the front, then odd
    factors in increasing order."""
    fact = []
    ln = n
    while ln % 4 == 0:
        fact.append(4)
        ln //= 4
    if ln % 2 == 0:
        ln //= 2
        fact.append(2)
        fact[0], fact[-1] = fact[-1], fact[0]
    d = 3
    while d * d <= ln:
        while ln % d == 0:
            fact.append(d)
            ln //= d
        d += 2
    if ln > 1:
        fact.append(ln)
    return fact


def passes(n: int, forward: bool) -> list[tuple[int, int, int]]:
    """``(ip, ido, l1)`` of each pass in execution order (``rfftp::exec``)."""
    fact = factorize(n)
    out = []
    if forward:
        l1 = n
        for k in reversed(range(len(fact))):
            ip = fact[k]
            ido = n // l1
            l1 //= ip
            out.append((ip, ido, l1))
    else:
        l1 = 1
        for ip in fact:
            ido = n // (ip * l1)
            out.append((ip, ido, l1))
            l1 *= ip
    return out


class SinCos:
    """``sincos_2pibyn<T0>(n)``: e^{2πi·idx/n} from two tables (v1, v2) computed in
    ``Thigh`` = long double if sizeof(T0) > sizeof(double) else double, multiplied in Thigh."""

    def __init__(self, n: int, dtype):
        self.n = n
        self.ext = dtype is not np.float64
        if self.ext:
            ang = np.longdouble("0.25") * np.longdouble(LD_PI) / np.longdouble(n)
            self.cos, self.sin, self.T = np.cos, np.sin, np.longdouble
        else:
            ang = float(np.longdouble("0.25") * np.longdouble(LD_PI) / np.longdouble(n))
            self.cos, self.sin, self.T = math.cos, math.sin, float
        self.ang = ang
        nval = (n + 2) // 2
        shift = 1
        while (1 << shift) * (1 << shift) < nval:
            shift += 1
        self.shift = shift
        self.mask = (1 << shift) - 1
        one, zero = self.T(1), self.T(0)
        self.v1 = [(one, zero)] + [self.calc(i) for i in range(1, self.mask + 1)]
        nv2 = (nval + self.mask) // (self.mask + 1)
        self.v2 = [(one, zero)] + [self.calc(i * (self.mask + 1)) for i in range(1, nv2)]

    def calc(self, x: int):
        n, ang, cos, sin, T = self.n, self.ang, self.cos, self.sin, self.T
        x <<= 3
        if x < 4 * n:
            if x < 2 * n:
                if x < n:
                    return cos(T(x) * ang), sin(T(x) * ang)
                return sin(T(2 * n - x) * ang), cos(T(2 * n - x) * ang)
            x -= 2 * n
            if x < n:
                return -sin(T(x) * ang), cos(T(x) * ang)
            return -cos(T(2 * n - x) * ang), sin(T(2 * n - x) * ang)
        x = 8 * n - x
        if x < 2 * n:
            if x < n:
                return cos(T(x) * ang), -sin(T(x) * ang)
            return sin(T(2 * n - x) * ang), -cos(T(2 * n - x) * ang)
        x -= 2 * n
        if x < n:
            return -sin(T(x) * ang), -cos(T(x) * ang)
        return -cos(T(2 * n - x) * ang), -sin(T(2 * n - x) * ang)

    def __getitem__(self, idx: int):
        if 2 * idx <= self.n:
            x1, x2 = self.v1[idx & self.mask], self.v2[idx >> self.shift]
            return x1[0] * x2[0] - x1[1] * x2[1], x1[0] * x2[1] + x1[1] * x2[0]
        idx = self.n - idx
        x1, x2 = self.v1[idx & self.mask], self.v2[idx >> self.shift]
        return x1[0] * x2[0] - x1[1] * x2[1], -(x1[0] * x2[1] + x1[1] * x2[0])


def twiddles(n: int, dtype) -> list[list]:
    """``rfftp::comp_twiddle``: per factor k (in ``factorize`` order), the flat array ``tw`` with
    ``tw[(j-1)(ido-1) + 2i-2], tw[… + 2i-1] = twid[j·l1·i].r, .i``; none for the last factor."""
    fact = factorize(n)
    twid = SinCos(n, dtype)
    out = []
    l1 = 1
    for k, ip in enumerate(fact):
        ido = n // (l1 * ip)
        tw = [None] * ((ip - 1) * (ido - 1))
        if k < len(fact) - 1:
            for j in range(1, ip):
                for i in range(1, (ido - 1) // 2 + 1):
                    w = twid[j * l1 * i]
                    tw[(j - 1) * (ido - 1) + 2 * i - 2] = w[0]
                    tw[(j - 1) * (ido - 1) + 2 * i - 1] = w[1]
        out.append(tw)
        l1 *= ip
    return out


# -------------------------------------------------------------------------------------------
# arithmetic back ends
# -------------------------------------------------------------------------------------------

class FloatArith:
    """Plain IEEE arithmetic in T0 (Python float = double, or numpy.longdouble scalars)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.T = float if dtype is np.float64 else np.longdouble
        self.taur = self.T(-0.5)
        for name in LITERALS:
            setattr(self, name, literal(name, dtype))

    @staticmethod
    def mulpm(c, d, e, f):
        """``MULPM(a, b, c, d, e, f)``: ``a = c·e + d·f``, ``b = c·f − d·e``."""
        return c * e + d * f, c * f - d * e

    @staticmethod
    def pm(c, d):
        """``PM(a, b, c, d)``: ``a = c + d``, ``b = c − d``."""
        return c + d, c - d


# -------------------------------------------------------------------------------------------
# the butterflies (rfftp::radf2 … radb5), transcribed statement by statement
# -------------------------------------------------------------------------------------------

def radf2(A, ido, l1, cc, ch, wa):
    def CC(a, b, c): return a + ido * (b + l1 * c)
    def CH(a, b, c): return a + ido * (b + 2 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        ch[CH(0, 0, k)], ch[CH(ido - 1, 1, k)] = A.pm(cc[CC(0, k, 0)], cc[CC(0, k, 1)])
    if ido % 2 == 0:
        for k in range(l1):
            ch[CH(0, 1, k)] = -cc[CC(ido - 1, k, 1)]
            ch[CH(ido - 1, 0, k)] = cc[CC(ido - 1, k, 0)]
    if ido <= 2:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2, ti2 = A.mulpm(WA(0, i - 2), WA(0, i - 1), cc[CC(i - 1, k, 1)], cc[CC(i, k, 1)])
            ch[CH(i - 1, 0, k)], ch[CH(ic - 1, 1, k)] = A.pm(cc[CC(i - 1, k, 0)], tr2)
            ch[CH(i, 0, k)], ch[CH(ic, 1, k)] = A.pm(ti2, cc[CC(i, k, 0)])


def _rearrange(rx, ix, ry, iy):
    """``POCKETFFT_REARRANGE(rx, ix, ry, iy)``: returns the new (rx, ix, ry, iy)."""
    t1, t2, t3, t4 = rx + ry, ry - rx, ix + iy, ix - iy
    return t1, t3, t4, t2


def radf3(A, ido, l1, cc, ch, wa):
    taur, taui = A.taur, A.taui
    def CC(a, b, c): return a + ido * (b + l1 * c)
    def CH(a, b, c): return a + ido * (b + 3 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        cr2 = cc[CC(0, k, 1)] + cc[CC(0, k, 2)]
        ch[CH(0, 0, k)] = cc[CC(0, k, 0)] + cr2
        ch[CH(0, 2, k)] = taui * (cc[CC(0, k, 2)] - cc[CC(0, k, 1)])
        ch[CH(ido - 1, 1, k)] = cc[CC(0, k, 0)] + taur * cr2
    if ido == 1:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            dr2, di2 = A.mulpm(WA(0, i - 2), WA(0, i - 1), cc[CC(i - 1, k, 1)], cc[CC(i, k, 1)])
            dr3, di3 = A.mulpm(WA(1, i - 2), WA(1, i - 1), cc[CC(i - 1, k, 2)], cc[CC(i, k, 2)])
            dr2, di2, dr3, di3 = _rearrange(dr2, di2, dr3, di3)
            ch[CH(i - 1, 0, k)] = cc[CC(i - 1, k, 0)] + dr2
            ch[CH(i, 0, k)] = cc[CC(i, k, 0)] + di2
            tr2 = cc[CC(i - 1, k, 0)] + taur * dr2
            ti2 = cc[CC(i, k, 0)] + taur * di2
            tr3 = taui * dr3
            ti3 = taui * di3
            ch[CH(i - 1, 2, k)], ch[CH(ic - 1, 1, k)] = A.pm(tr2, tr3)
            ch[CH(i, 2, k)], ch[CH(ic, 1, k)] = A.pm(ti3, ti2)


def radf4(A, ido, l1, cc, ch, wa):
    hsqt2 = A.hsqt2
    def CC(a, b, c): return a + ido * (b + l1 * c)
    def CH(a, b, c): return a + ido * (b + 4 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        tr1, ch[CH(0, 2, k)] = A.pm(cc[CC(0, k, 3)], cc[CC(0, k, 1)])
        tr2, ch[CH(ido - 1, 1, k)] = A.pm(cc[CC(0, k, 0)], cc[CC(0, k, 2)])
        ch[CH(0, 0, k)], ch[CH(ido - 1, 3, k)] = A.pm(tr2, tr1)
    if ido % 2 == 0:
        for k in range(l1):
            ti1 = -hsqt2 * (cc[CC(ido - 1, k, 1)] + cc[CC(ido - 1, k, 3)])
            tr1 = hsqt2 * (cc[CC(ido - 1, k, 1)] - cc[CC(ido - 1, k, 3)])
            ch[CH(ido - 1, 0, k)], ch[CH(ido - 1, 2, k)] = A.pm(cc[CC(ido - 1, k, 0)], tr1)
            ch[CH(0, 3, k)], ch[CH(0, 1, k)] = A.pm(ti1, cc[CC(ido - 1, k, 2)])
    if ido <= 2:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            cr2, ci2 = A.mulpm(WA(0, i - 2), WA(0, i - 1), cc[CC(i - 1, k, 1)], cc[CC(i, k, 1)])
            cr3, ci3 = A.mulpm(WA(1, i - 2), WA(1, i - 1), cc[CC(i - 1, k, 2)], cc[CC(i, k, 2)])
            cr4, ci4 = A.mulpm(WA(2, i - 2), WA(2, i - 1), cc[CC(i - 1, k, 3)], cc[CC(i, k, 3)])
            tr1, tr4 = A.pm(cr4, cr2)
            ti1, ti4 = A.pm(ci2, ci4)
            tr2, tr3 = A.pm(cc[CC(i - 1, k, 0)], cr3)
            ti2, ti3 = A.pm(cc[CC(i, k, 0)], ci3)
            ch[CH(i - 1, 0, k)], ch[CH(ic - 1, 3, k)] = A.pm(tr2, tr1)
            ch[CH(i, 0, k)], ch[CH(ic, 3, k)] = A.pm(ti1, ti2)
            ch[CH(i - 1, 2, k)], ch[CH(ic - 1, 1, k)] = A.pm(tr3, ti4)
            ch[CH(i, 2, k)], ch[CH(ic, 1, k)] = A.pm(tr4, ti3)


def radf5(A, ido, l1, cc, ch, wa):
    tr11, ti11, tr12, ti12 = A.tr11, A.ti11, A.tr12, A.ti12
    def CC(a, b, c): return a + ido * (b + l1 * c)
    def CH(a, b, c): return a + ido * (b + 5 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        cr2, ci5 = A.pm(cc[CC(0, k, 4)], cc[CC(0, k, 1)])
        cr3, ci4 = A.pm(cc[CC(0, k, 3)], cc[CC(0, k, 2)])
        c0 = cc[CC(0, k, 0)]
        ch[CH(0, 0, k)] = c0 + cr2 + cr3
        ch[CH(ido - 1, 1, k)] = c0 + tr11 * cr2 + tr12 * cr3
        ch[CH(0, 2, k)] = ti11 * ci5 + ti12 * ci4
        ch[CH(ido - 1, 3, k)] = c0 + tr12 * cr2 + tr11 * cr3
        ch[CH(0, 4, k)] = ti12 * ci5 - ti11 * ci4
    if ido == 1:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            dr2, di2 = A.mulpm(WA(0, i - 2), WA(0, i - 1), cc[CC(i - 1, k, 1)], cc[CC(i, k, 1)])
            dr3, di3 = A.mulpm(WA(1, i - 2), WA(1, i - 1), cc[CC(i - 1, k, 2)], cc[CC(i, k, 2)])
            dr4, di4 = A.mulpm(WA(2, i - 2), WA(2, i - 1), cc[CC(i - 1, k, 3)], cc[CC(i, k, 3)])
            dr5, di5 = A.mulpm(WA(3, i - 2), WA(3, i - 1), cc[CC(i - 1, k, 4)], cc[CC(i, k, 4)])
            dr2, di2, dr5, di5 = _rearrange(dr2, di2, dr5, di5)
            dr3, di3, dr4, di4 = _rearrange(dr3, di3, dr4, di4)
            cr0, ci0 = cc[CC(i - 1, k, 0)], cc[CC(i, k, 0)]
            ch[CH(i - 1, 0, k)] = cr0 + dr2 + dr3
            ch[CH(i, 0, k)] = ci0 + di2 + di3
            tr2 = cr0 + tr11 * dr2 + tr12 * dr3
            ti2 = ci0 + tr11 * di2 + tr12 * di3
            tr3 = cr0 + tr12 * dr2 + tr11 * dr3
            ti3 = ci0 + tr12 * di2 + tr11 * di3
            tr5 = ti11 * dr5 + ti12 * dr4
            ti5 = ti11 * di5 + ti12 * di4
            tr4 = ti12 * dr5 - ti11 * dr4
            ti4 = ti12 * di5 - ti11 * di4
            ch[CH(i - 1, 2, k)], ch[CH(ic - 1, 1, k)] = A.pm(tr2, tr5)
            ch[CH(i, 2, k)], ch[CH(ic, 1, k)] = A.pm(ti5, ti2)
            ch[CH(i - 1, 4, k)], ch[CH(ic - 1, 3, k)] = A.pm(tr3, tr4)
            ch[CH(i, 4, k)], ch[CH(ic, 3, k)] = A.pm(ti4, ti3)


def radb2(A, ido, l1, cc, ch, wa):
    def CC(a, b, c): return a + ido * (b + 2 * c)
    def CH(a, b, c): return a + ido * (b + l1 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        ch[CH(0, k, 0)], ch[CH(0, k, 1)] = A.pm(cc[CC(0, 0, k)], cc[CC(ido - 1, 1, k)])
    if ido % 2 == 0:
        for k in range(l1):
            ch[CH(ido - 1, k, 0)] = 2 * cc[CC(ido - 1, 0, k)]
            ch[CH(ido - 1, k, 1)] = -2 * cc[CC(0, 1, k)]
    if ido <= 2:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            ch[CH(i - 1, k, 0)], tr2 = A.pm(cc[CC(i - 1, 0, k)], cc[CC(ic - 1, 1, k)])
            ti2, ch[CH(i, k, 0)] = A.pm(cc[CC(i, 0, k)], cc[CC(ic, 1, k)])
            ch[CH(i, k, 1)], ch[CH(i - 1, k, 1)] = A.mulpm(WA(0, i - 2), WA(0, i - 1), ti2, tr2)


def radb3(A, ido, l1, cc, ch, wa):
    taur, taui = A.taur, A.taui
    def CC(a, b, c): return a + ido * (b + 3 * c)
    def CH(a, b, c): return a + ido * (b + l1 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        tr2 = 2 * cc[CC(ido - 1, 1, k)]
        cr2 = cc[CC(0, 0, k)] + taur * tr2
        ch[CH(0, k, 0)] = cc[CC(0, 0, k)] + tr2
        ci3 = 2 * taui * cc[CC(0, 2, k)]
        ch[CH(0, k, 2)], ch[CH(0, k, 1)] = A.pm(cr2, ci3)
    if ido == 1:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2 = cc[CC(i - 1, 2, k)] + cc[CC(ic - 1, 1, k)]
            ti2 = cc[CC(i, 2, k)] - cc[CC(ic, 1, k)]
            cr2 = cc[CC(i - 1, 0, k)] + taur * tr2
            ci2 = cc[CC(i, 0, k)] + taur * ti2
            ch[CH(i - 1, k, 0)] = cc[CC(i - 1, 0, k)] + tr2
            ch[CH(i, k, 0)] = cc[CC(i, 0, k)] + ti2
            cr3 = taui * (cc[CC(i - 1, 2, k)] - cc[CC(ic - 1, 1, k)])
            ci3 = taui * (cc[CC(i, 2, k)] + cc[CC(ic, 1, k)])
            dr3, dr2 = A.pm(cr2, ci3)
            di2, di3 = A.pm(ci2, cr3)
            ch[CH(i, k, 1)], ch[CH(i - 1, k, 1)] = A.mulpm(WA(0, i - 2), WA(0, i - 1), di2, dr2)
            ch[CH(i, k, 2)], ch[CH(i - 1, k, 2)] = A.mulpm(WA(1, i - 2), WA(1, i - 1), di3, dr3)


def radb4(A, ido, l1, cc, ch, wa):
    sqrt2 = A.sqrt2
    def CC(a, b, c): return a + ido * (b + 4 * c)
    def CH(a, b, c): return a + ido * (b + l1 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        tr2, tr1 = A.pm(cc[CC(0, 0, k)], cc[CC(ido - 1, 3, k)])
        tr3 = 2 * cc[CC(ido - 1, 1, k)]
        tr4 = 2 * cc[CC(0, 2, k)]
        ch[CH(0, k, 0)], ch[CH(0, k, 2)] = A.pm(tr2, tr3)
        ch[CH(0, k, 3)], ch[CH(0, k, 1)] = A.pm(tr1, tr4)
    if ido % 2 == 0:
        for k in range(l1):
            ti1, ti2 = A.pm(cc[CC(0, 3, k)], cc[CC(0, 1, k)])
            tr2, tr1 = A.pm(cc[CC(ido - 1, 0, k)], cc[CC(ido - 1, 2, k)])
            ch[CH(ido - 1, k, 0)] = tr2 + tr2
            ch[CH(ido - 1, k, 1)] = sqrt2 * (tr1 - ti1)
            ch[CH(ido - 1, k, 2)] = ti2 + ti2
            ch[CH(ido - 1, k, 3)] = -sqrt2 * (tr1 + ti1)
    if ido <= 2:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2, tr1 = A.pm(cc[CC(i - 1, 0, k)], cc[CC(ic - 1, 3, k)])
            ti1, ti2 = A.pm(cc[CC(i, 0, k)], cc[CC(ic, 3, k)])
            tr4, ti3 = A.pm(cc[CC(i, 2, k)], cc[CC(ic, 1, k)])
            tr3, ti4 = A.pm(cc[CC(i - 1, 2, k)], cc[CC(ic - 1, 1, k)])
            ch[CH(i - 1, k, 0)], cr3 = A.pm(tr2, tr3)
            ch[CH(i, k, 0)], ci3 = A.pm(ti2, ti3)
            cr4, cr2 = A.pm(tr1, tr4)
            ci2, ci4 = A.pm(ti1, ti4)
            ch[CH(i, k, 1)], ch[CH(i - 1, k, 1)] = A.mulpm(WA(0, i - 2), WA(0, i - 1), ci2, cr2)
            ch[CH(i, k, 2)], ch[CH(i - 1, k, 2)] = A.mulpm(WA(1, i - 2), WA(1, i - 1), ci3, cr3)
            ch[CH(i, k, 3)], ch[CH(i - 1, k, 3)] = A.mulpm(WA(2, i - 2), WA(2, i - 1), ci4, cr4)


def radb5(A, ido, l1, cc, ch, wa):
    tr11, ti11, tr12, ti12 = A.tr11, A.ti11, A.tr12, A.ti12
    def CC(a, b, c): return a + ido * (b + 5 * c)
    def CH(a, b, c): return a + ido * (b + l1 * c)
    def WA(x, i): return wa[i + x * (ido - 1)]
    for k in range(l1):
        ti5 = cc[CC(0, 2, k)] + cc[CC(0, 2, k)]
        ti4 = cc[CC(0, 4, k)] + cc[CC(0, 4, k)]
        tr2 = cc[CC(ido - 1, 1, k)] + cc[CC(ido - 1, 1, k)]
        tr3 = cc[CC(ido - 1, 3, k)] + cc[CC(ido - 1, 3, k)]
        c0 = cc[CC(0, 0, k)]
        ch[CH(0, k, 0)] = c0 + tr2 + tr3
        cr2 = c0 + tr11 * tr2 + tr12 * tr3
        cr3 = c0 + tr12 * tr2 + tr11 * tr3
        ci5, ci4 = A.mulpm(ti5, ti4, ti11, ti12)
        ch[CH(0, k, 4)], ch[CH(0, k, 1)] = A.pm(cr2, ci5)
        ch[CH(0, k, 3)], ch[CH(0, k, 2)] = A.pm(cr3, ci4)
    if ido == 1:
        return
    for k in range(l1):
        for i in range(2, ido, 2):
            ic = ido - i
            tr2, tr5 = A.pm(cc[CC(i - 1, 2, k)], cc[CC(ic - 1, 1, k)])
            ti5, ti2 = A.pm(cc[CC(i, 2, k)], cc[CC(ic, 1, k)])
            tr3, tr4 = A.pm(cc[CC(i - 1, 4, k)], cc[CC(ic - 1, 3, k)])
            ti4, ti3 = A.pm(cc[CC(i, 4, k)], cc[CC(ic, 3, k)])
            cr0, ci0 = cc[CC(i - 1, 0, k)], cc[CC(i, 0, k)]
            ch[CH(i - 1, k, 0)] = cr0 + tr2 + tr3
            ch[CH(i, k, 0)] = ci0 + ti2 + ti3
            cr2 = cr0 + tr11 * tr2 + tr12 * tr3
            ci2 = ci0 + tr11 * ti2 + tr12 * ti3
            cr3 = cr0 + tr12 * tr2 + tr11 * tr3
            ci3 = ci0 + tr12 * ti2 + tr11 * ti3
            cr5, cr4 = A.mulpm(tr5, tr4, ti11, ti12)
            ci5, ci4 = A.mulpm(ti5, ti4, ti11, ti12)
            dr4, dr3 = A.pm(cr3, ci4)
            di3, di4 = A.pm(ci3, cr4)
            dr5, dr2 = A.pm(cr2, ci5)
            di2, di5 = A.pm(ci2, cr5)
            ch[CH(i, k, 1)], ch[CH(i - 1, k, 1)] = A.mulpm(WA(0, i - 2), WA(0, i - 1), di2, dr2)
            ch[CH(i, k, 2)], ch[CH(i - 1, k, 2)] = A.mulpm(WA(1, i - 2), WA(1, i - 1), di3, dr3)
            ch[CH(i, k, 3)], ch[CH(i - 1, k, 3)] = A.mulpm(WA(2, i - 2), WA(2, i - 1), di4, dr4)
            ch[CH(i, k, 4)], ch[CH(i - 1, k, 4)] = A.mulpm(WA(3, i - 2), WA(3, i - 1), di5, dr5)


RADF = {2: radf2, 3: radf3, 4: radf4, 5: radf5}
RADB = {2: radb2, 3: radb3, 4: radb4, 5: radb5}


# -------------------------------------------------------------------------------------------
# rfftp::exec and NumPy's packing
# -------------------------------------------------------------------------------------------

def execute(c: list, fct, r2hc: bool, dtype) -> list:
    """``rfftp::exec(c, fct, r2hc)`` (in place on the list ``c``; returned for convenience)."""
    n = len(c)
    if n == 1:
        c[0] = c[0] * fct
        return c
    A = FloatArith(dtype)
    tws = twiddles(n, dtype)
    fact = factorize(n)
    p1, p2 = c, [None] * n
    if r2hc:
        l1 = n
        for k in reversed(range(len(fact))):
            ip = fact[k]
            ido = n // l1
            l1 //= ip
            RADF[ip](A, ido, l1, p1, p2, tws[k])
            p1, p2 = p2, p1
    else:
        l1 = 1
        for k, ip in enumerate(fact):
            ido = n // (ip * l1)
            RADB[ip](A, ido, l1, p1, p2, tws[k])
            p1, p2 = p2, p1
            l1 *= ip
    # copy_and_norm(c, p1, fct)
    if fct != 1:
        for i in range(n):
            c[i] = fct * p1[i]
    elif p1 is not c:
        c[:] = p1
    return c


def model_rfft(x: np.ndarray) -> np.ndarray:
    """``numpy.fft.rfft(x)`` for a 1-D float64 or longdouble array, by the model."""
    dtype = np.float64 if x.dtype == np.float64 else np.longdouble
    T = float if dtype is np.float64 else np.longdouble
    n = x.size
    c = execute([T(v) for v in x], T(1), True, dtype)
    out = np.zeros(n // 2 + 1, dtype=np.complex128 if dtype is np.float64 else np.clongdouble)
    out.real[0] = c[0]
    for k in range(1, (n - 1) // 2 + 1):
        out.real[k], out.imag[k] = c[2 * k - 1], c[2 * k]
    if n % 2 == 0 and n > 1:
        out.real[n // 2] = c[n - 1]
    return out


def model_irfft(y: np.ndarray, n: int) -> np.ndarray:
    """``numpy.fft.irfft(y, n)`` for a complex128 or clongdouble array of length n//2 + 1."""
    dtype = np.float64 if y.dtype == np.complex128 else np.longdouble
    T = float if dtype is np.float64 else np.longdouble
    c = [T(0)] * n
    c[0] = T(y[0].real)
    for k in range(1, (n - 1) // 2 + 1):
        c[2 * k - 1], c[2 * k] = T(y[k].real), T(y[k].imag)
    if n % 2 == 0 and n > 1:
        c[n - 1] = T(y[n // 2].real)
    fct = np.reciprocal(np.asarray(n, dtype=np.float64 if dtype is np.float64 else np.longdouble))
    fct = T(fct)
    execute(c, fct, False, dtype)
    return np.array(c, dtype=np.float64 if dtype is np.float64 else np.longdouble)


# -------------------------------------------------------------------------------------------
# symbolic running-error analysis of one pass
# -------------------------------------------------------------------------------------------
#
# Each real intermediate t is a Sym: its exact value as a real-linear form in the pass's inputs
# (``lin``: one row (re, im) per input variable v, a complex partial-DFT coefficient with
# |z_v| ≤ m_v, or a real one), and its accumulated error as a linear combination of error
# *sources* (``err``: source id → coefficient vector, of length 1 for a real rounding error,
# 2 for a complex error). Every source carries a bound, a vector b with |source| ≤ Σ_v b_v m_v.
#
# An operation t = a ∘ b creates the source δ_t = fl(â ∘ b̂) − (â ∘ b̂) with
# |δ_t| ≤ u |â ∘ b̂| ≤ u (sup|t| + E_t), sup|t| = Σ_v ‖lin_v(t)‖₂ m_v (the supremum of a real
# linear form over the product of discs) and E_t = Σ_s ‖err_s(t)‖₂ b_s the bound on the
# propagated error: nothing is neglected, higher-order terms included. Multiplication by a
# stored constant k̃ of exact value k adds |k̃ − k|(sup|a| + E_a) (its representation error);
# sums x + x and products by ±2^j are exact (no source).
#
# Twiddle factors enter as whole complex multiplications (MULPM with a twiddle pair):
# forward (radfN), conj(w̃)·z of an input z with |z| ≤ m is within τ u m of conj(w)·z with
# τ = μ + (1 + μu)(1 + √2(1 + u)) (μ u ≥ |w̃ − w|; each part of the product: two products and a
# sum, error ≤ u|w̃||z|(1 + u) + u|part|, and the two parts squared add to |w̃ z|²); as conj(w)z is
# again an arbitrary point of the disc of radius m, the result is modelled as the input variable
# itself plus a complex source of bound τ u m. Backward (radbN), the twiddle multiplies an output
# P: the final error is (1 + μu) E_P + μ u S_P + (1 + μu) u (1 + √2(1 + u)) (S_P + E_P).


class _Engine:
    def __init__(self, nv: int, u: float, mu: float, consts: dict):
        self.nv, self.u, self.mu = nv, u, mu
        self.bounds: list[np.ndarray] = []
        self.uf: list[float] = []  # underflow weight: ≤ uf·2^-1075 absolute per source
        self.consts = consts  # name -> (stored value as float, exact value as float, |k̃ − k|)
        self.tau = mu + (1 + mu * u) * (1 + math.sqrt(2) * (1 + u))

    def source(self, bound: np.ndarray, uf: float = 1.0) -> int:
        self.bounds.append(bound)
        self.uf.append(uf)
        return len(self.bounds) - 1

    def err_bound(self, err: dict) -> np.ndarray:
        out = np.zeros(self.nv)
        for s, coef in err.items():
            out += float(np.linalg.norm(coef)) * self.bounds[s]
        return out


class Const:
    """A radix constant: stored value k̃ (what the code multiplies by) and exact value k."""

    def __init__(self, stored: float, exact: float, rep_err: float):
        self.stored, self.exact, self.rep_err = stored, exact, rep_err

    def __neg__(self):
        return Const(-self.stored, -self.exact, self.rep_err)

    def __rmul__(self, other):
        if isinstance(other, (int, float)):  # 2 * taui: exact scaling of the constant
            return Const(other * self.stored, other * self.exact, abs(other) * self.rep_err)
        return NotImplemented

    def __mul__(self, other):
        if isinstance(other, Sym):
            return other._scale(self)
        return NotImplemented


def _is_pow2(x: float) -> bool:
    m, _ = math.frexp(abs(x))
    return x != 0 and m == 0.5


class Sym:
    __slots__ = ("eng", "lin", "err")

    def __init__(self, eng: _Engine, lin: np.ndarray, err: dict):
        self.eng, self.lin, self.err = eng, lin, err

    def sup(self) -> np.ndarray:
        return np.hypot(self.lin[:, 0], self.lin[:, 1])

    def _rounded(self, lin, err, extra=None) -> Sym:
        e = self.eng
        probe = Sym(e, lin, err)
        mag = probe.sup() + e.err_bound(err)
        bound = e.u * mag if extra is None else extra * mag
        s = e.source(bound)
        err = dict(err)
        err[s] = np.array([1.0])
        return Sym(e, lin, err)

    @staticmethod
    def _merge(a: dict, b: dict, sb: float) -> dict:
        out = {k: v.copy() for k, v in a.items()}
        for k, v in b.items():
            out[k] = out[k] + sb * v if k in out else sb * v
        return out

    def __add__(self, other: Sym) -> Sym:
        if other is self:  # x + x = 2x exactly
            return Sym(self.eng, 2 * self.lin, {k: 2 * v for k, v in self.err.items()})
        return self._rounded(self.lin + other.lin, self._merge(self.err, other.err, 1.0))

    def __sub__(self, other: Sym) -> Sym:
        return self._rounded(self.lin - other.lin, self._merge(self.err, other.err, -1.0))

    def __neg__(self) -> Sym:
        return Sym(self.eng, -self.lin, {k: -v for k, v in self.err.items()})

    def _scale(self, k) -> Sym:
        if isinstance(k, (int, float)):
            k = Const(float(k), float(k), 0.0)
        lin = k.exact * self.lin
        err = {s: k.exact * v for s, v in self.err.items()}
        if k.rep_err == 0 and _is_pow2(k.stored):
            return Sym(self.eng, lin, err)
        # t̂ = fl(k̃ â): error k(â − a) + (k̃ − k) â + δ k̃ â, |â| ≤ sup|a| + E_a
        e = self.eng
        mag = self.sup() + e.err_bound(self.err)
        s = e.source((k.rep_err + e.u * abs(k.stored)) * mag)
        err[s] = np.array([1.0])
        return Sym(e, lin, err)

    def __mul__(self, k):
        return self._scale(k)

    __rmul__ = __mul__


class TwRe:
    """Marker for the real part of a twiddle factor (its value does not enter the bounds)."""


class TwIm:
    """Marker for the imaginary part of a twiddle factor."""


class TwOut:
    """One part (``part`` 0 = real, 1 = imaginary) of w·P for a pre-twiddle complex value P."""

    def __init__(self, re: Sym, im: Sym, part: int):
        self.re, self.im, self.part = re, im, part


class SymArith:
    def __init__(self, eng: _Engine, forward: bool):
        self.eng, self.forward = eng, forward
        self.taur = Const(-0.5, -0.5, 0.0)
        for name, (stored, exact, rep) in eng.consts.items():
            setattr(self, name, Const(stored, exact, rep))

    def pm(self, c, d):
        return c + d, c - d

    def mulpm(self, c, d, e, f):
        if isinstance(c, TwRe):
            assert isinstance(d, TwIm)
            if self.forward:
                assert not e.err and not f.err and _is_coordinate_pair(e, f)
                # forward: (e, f) = (Re z, Im z) of one input; result conj(w) z
                v = int(np.flatnonzero(np.abs(e.lin).sum(axis=1))[0])
                eng = self.eng
                bound = np.zeros(eng.nv)
                bound[v] = eng.tau * eng.u
                s = eng.source(bound, uf=4.0)  # 4 products, each ≤ 2^-1075 if it underflows
                return (Sym(eng, e.lin.copy(), {s: np.array([1.0, 0.0])}),
                        Sym(eng, f.lin.copy(), {s: np.array([0.0, 1.0])}))
            # backward: MULPM(CH(i), CH(i-1), wr, wi, ci, cr) -> (Im wP, Re wP), P = cr + i ci
            return TwOut(f, e, 1), TwOut(f, e, 0)
        # a product by constants (radb5: MULPM(ci5, ci4, ti5, ti4, ti11, ti12))
        return c * e + d * f, c * f - d * e


def _is_coordinate_pair(e: Sym, f: Sym) -> bool:
    nz_e = np.argwhere(e.lin != 0)
    nz_f = np.argwhere(f.lin != 0)
    return (len(nz_e) == 1 and len(nz_f) == 1 and nz_e[0][0] == nz_f[0][0]
            and nz_e[0][1] == 0 and nz_f[0][1] == 1
            and e.lin[tuple(nz_e[0])] == 1 and f.lin[tuple(nz_f[0])] == 1)


def _halfcomplex(p: int) -> tuple[int, int]:
    """Position p of a halfcomplex (FFTPACK) vector -> (coefficient index, 0 = re / 1 = im)."""
    if p == 0:
        return 0, 0
    return ((p + 1) // 2, 0) if p % 2 else (p // 2, 1)


def analyse_pass(ip: int, ido: int, forward: bool, u: float, mu: float, consts: dict,
                 l1: int = 1) -> dict:
    """Run one pass (radix ``ip``, ``ido``, ``l1``) on symbolic inputs.

    Returns ``{"0": c0, "N": cN, "G": cG}`` (the parts present) and ``"uf"``, the largest total
    weight Γ with which the sources reach an output (for the underflow allowance: every source
    is off by ≤ 2^-1075 more if its operation underflows): for each output coefficient,
    its error bound is Σ_v β_v m_v, and the constant is max_v β_v / (u mult_v), where
    ``mult_v`` is the number of times input v's class member appears in the exact partial sum
    (1 for the forward transform; 2 for a backward input that also stands for its conjugate
    mirror). Also checks that the transcription is a DFT butterfly (every input reaches every
    output of its class with weight of modulus exactly ``mult_v``).
    """
    n_tot = ip * ido * l1
    # input layout
    if forward:  # cc[a + ido(b + l1 c)]: block s = b + l1 c, halfcomplex of length ido
        in_len = ido

        def in_loc(idx):
            return idx // ido, idx % ido
    else:  # cc[a + ido(b + ip c)]: block c, halfcomplex of length ido·ip
        in_len = ido * ip

        def in_loc(idx):
            return idx // (ido * ip), idx % (ido * ip)
    var_of = {}
    coords = []
    for idx in range(n_tot):
        blk, pos = in_loc(idx)
        coef, part = _halfcomplex(pos)
        key = (blk, coef)
        if key not in var_of:
            var_of[key] = len(var_of)
        coords.append((var_of[key], part))
    nv = len(var_of)
    eng = _Engine(nv, u, mu, consts)
    cc = []
    for v, part in coords:
        lin = np.zeros((nv, 2))
        lin[v, part] = 1.0
        cc.append(Sym(eng, lin, {}))
    # WA(x, i) = wa[i + x(ido − 1)]: real parts at even i, imaginary parts at odd i
    wa = [TwRe() if i % 2 == 0 else TwIm() for x in range(ip - 1) for i in range(ido - 1)]
    ch = [None] * n_tot
    (RADF if forward else RADB)[ip](SymArith(eng, forward), ido, l1, cc, ch, wa)
    assert all(c is not None for c in ch)
    # output layout
    if forward:  # ch[a + ido(b + ip k)]: block k, halfcomplex of length ido·ip
        out_len = ido * ip

        def out_loc(idx):
            return idx // out_len, idx % out_len
    else:  # ch[a + ido(k + l1 j)]: block k + l1 j, halfcomplex of length ido
        out_len = ido

        def out_loc(idx):
            return idx // ido, idx % ido
    outputs: dict = {}
    for idx in range(n_tot):
        blk, pos = out_loc(idx)
        coef, part = _halfcomplex(pos)
        outputs.setdefault((blk, coef), [None, None])[part] = ch[idx]
    inv = {v: key for key, v in var_of.items()}
    consts_out: dict = {}
    for (blk, coef), (re, im) in outputs.items():
        a = coef % ido
        part_name = "0" if a == 0 else ("N" if 2 * a == ido else "G")
        if not forward:
            a = coef
        beta, blocks, gamma = _output_bound(eng, re, im)
        consts_out["uf"] = max(consts_out.get("uf", 0.0), gamma)
        mult = np.zeros(nv)
        for v in range(nv):
            iblk, kappa = inv[v]
            if forward:
                mult[v] = 1.0
            else:
                mult[v] = sum(1 for q in range(ip)
                              if (a + ido * q) % in_len in (kappa, (in_len - kappa) % in_len))
        used = blocks > 1e-12
        assert np.all(mult[used] >= 1), (ip, ido, forward, blk, coef)
        # DFT check: each input of the class reaches the output with weight of modulus mult_v
        assert np.allclose(blocks[used], mult[used], rtol=1e-12), (ip, ido, forward, blocks, mult)
        assert np.all(beta[~used] == 0)
        c = float(np.max(beta[used] / mult[used])) / u
        consts_out[part_name] = max(consts_out.get(part_name, 0.0), c)
    return consts_out


def _output_bound(eng: _Engine, re, im) -> tuple[np.ndarray, np.ndarray, float]:
    """Bound vector β of the (complex) output error, the per-input weight moduli, and Γ."""
    if isinstance(re, TwOut) or isinstance(im, TwOut):
        assert isinstance(re, TwOut) and isinstance(im, TwOut) and re.re is im.re
        pre_re, pre_im = re.re, re.im
        twiddled = True
    else:
        pre_re, pre_im = re, im
        twiddled = False
    rows = [pre_re] if pre_im is None else [pre_re, pre_im]
    lin = np.stack([r.lin for r in rows])  # (parts, nv, 2)
    blocks = np.array([np.linalg.norm(lin[:, v, :], 2) for v in range(eng.nv)])
    srcs = set()
    for r in rows:
        srcs.update(r.err)
    e_bound = np.zeros(eng.nv)
    gamma = 0.0
    for s in srcs:
        dim = len(next(r.err[s] for r in rows if s in r.err))
        mat = np.array([r.err.get(s, np.zeros(dim)) for r in rows])
        norm = float(np.linalg.norm(mat, 2))
        e_bound += norm * eng.bounds[s]
        gamma += norm * eng.uf[s]
    if not twiddled:
        return e_bound, blocks, gamma
    u, mu = eng.u, eng.mu
    s_bound = blocks  # sup |P| per unit m_v
    beta = ((1 + mu * u) * e_bound + mu * u * s_bound
            + (1 + mu * u) * u * (1 + math.sqrt(2) * (1 + u)) * (s_bound + e_bound))
    return beta, blocks, (1 + mu * u) * gamma + 4.0
