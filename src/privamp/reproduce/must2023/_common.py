"""What the MUST artifacts share: the paper key, the Table 3 setting and its schemes, the base
mechanisms, the paper's way of printing δ and the worst of several comparison statuses."""

from __future__ import annotations

from typing import Any

from ... import display
from ...mechanisms import GaussianMechanism, LaplaceMechanism
from ...sampling import MustOW, MustWW, WithoutReplacement, WithReplacement

PAPER = "must2023"

#: Table 3 / Figures 4 and S3 setting (§4.1).
N, B, M = 1000, 500, 400
SCHEME_NAMES = ("WOR", "WR", "MUST.OW", "MUST.WW")


def _published_ww(n: int, b: int, m: int) -> MustWW:
    """MUST.WW with the paper's Theorem 5(c), as printed: the artifacts compare the paper's
    formulas with its numbers. privamp's accountant uses its proved bound by default (η of
    min(b, m) draws); Theorem 5(c) has no complete proof, so these values are the paper's, not
    certified guarantees."""
    return MustWW(n, b, m, bound="published")


def _schemes(n: int = N, b: int = B, m: int = M) -> dict[str, Any]:
    return {"WOR": WithoutReplacement(n, m), "WR": WithReplacement(n, m),
            "MUST.OW": MustOW(n, b, m), "MUST.WW": _published_ww(n, b, m)}


def _mechanism(kind: str, ratio: float):
    """Laplace (scale σ) or Gaussian (std σ) with Δ/σ = ``ratio``, stated under substitution
    (the relation MUST Theorem 5 needs; sensitivity 1)."""
    if kind == "laplace":
        return LaplaceMechanism(scale=1.0 / ratio, relation="substitute")
    return GaussianMechanism(sigma=1.0 / ratio, relation="substitute")


_MECH_LABEL = {"laplace": "Laplace", "gaussian": "Gaussian"}


def _printed_delta(value: float) -> str:
    """δ as the paper prints it — three decimals down to 0.001, three significant digits below —
    but rounded up (a bound; :mod:`privamp.display`)."""
    if value == 0.0:
        return "0"
    if value >= 0.001:
        return display.upper(value, 3, notation="f")
    mantissa, exponent = display.upper(value, 3, notation="e").split("e")
    return f"{mantissa}e{int(exponent)}"


def _worst(*statuses: str | None) -> str | None:
    """The worst of the comparison statuses given (``None``: not compared, ignored)."""
    order = ("agrees", "monte-carlo", "rounding", "not-compared", "erratum", "disagrees")
    present = [s for s in statuses if s is not None]
    return max(present, key=order.index) if present else None
