"""Independent references for the conformance suite, written without privamp's numerics.

Each function here recomputes a privacy quantity from its definition with mpmath (arbitrary
precision) or by brute force; nothing in it imports privamp's profiles, curves or accountants,
so a defect in privamp's code cannot hide in its own reference.

* :func:`gdp_delta` / :func:`gdp_epsilon` — T Gaussian steps of noise multiplier σ (sensitivity
  1) compose to μ-GDP with μ = √T/σ exactly (Dong, Roth, Su 2022, Cor. 2.3); the profile is
  Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Theorem 8).
"""

from __future__ import annotations

import mpmath

mpmath.mp.dps = 50


def _phi(x):
    return mpmath.ncdf(x)


def gdp_delta(mu, eps) -> mpmath.mpf:
    """δ(ε) of μ-GDP, exactly (50 digits)."""
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return _phi(-eps / mu + mu / 2) - mpmath.exp(eps) * _phi(-eps / mu - mu / 2)


def gdp_epsilon(mu, delta) -> mpmath.mpf:
    """The ε ≥ 0 with δ(ε) = ``delta`` for μ-GDP (0 if δ(0) ≤ delta), to 40 digits."""
    mu, delta = mpmath.mpf(mu), mpmath.mpf(delta)
    if gdp_delta(mu, 0) <= delta:
        return mpmath.mpf(0)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    while gdp_delta(mu, hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):  # bisection: δ(ε) is decreasing
        mid = (lo + hi) / 2
        if gdp_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def gaussian_composition_epsilon(sigma, steps, delta) -> float:
    """ε(δ) of ``steps`` Gaussian releases of noise multiplier σ (sensitivity 1)."""
    return float(gdp_epsilon(mpmath.sqrt(steps) / mpmath.mpf(sigma), delta))


def gaussian_composition_delta(sigma, steps, eps) -> float:
    return float(gdp_delta(mpmath.sqrt(steps) / mpmath.mpf(sigma), eps))
