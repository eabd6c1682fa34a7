"""Rényi differential privacy: curves, base mechanisms, subsampled bounds, moments accountant.

* :mod:`privamp.rdp.curve` — :class:`RdpCurve` (composition, safe interpolation, conversion);
* :mod:`privamp.rdp.mechanisms` — :func:`rdp_curve` for mechanisms and profiles (closed forms,
  Theorem 6, pure DP);
* :mod:`privamp.rdp.subsampled` — subsampled RDP: Wang–Balle–Kasiviswanathan upper bound,
  matching lower bound, Zhu–Wang Poisson bound, and :func:`subsampled_rdp`, which picks one;
* :mod:`privamp.rdp.poisson_gaussian` — the exact Poisson-subsampled Gaussian;
* :mod:`privamp.rdp.poisson_exact` — the exact Poisson-subsampled Laplace and randomized
  response (and one entry point for every exact Poisson curve);
* :mod:`privamp.rdp.ledger` — a ledger's RDP curve and certified zCDP ρ;
* :mod:`privamp.rdp.accountant` — :class:`RdpAccountant`, the analytical moments accountant.
"""

from .accountant import RdpAccountant, RdpEvent, poisson_gaussian_epsilon
from .curve import DEFAULT_ORDERS, OrderGridWarning, RdpCurve
from .ledger import ZcdpBound, ledger_rdp_curve, ledger_zcdp
from .mechanisms import (
    ExactRdpCurve,
    check_orders,
    pure_dp_rdp,
    rdp_bracket_from_profile,
    rdp_curve,
    rdp_from_profile,
)
from .poisson_exact import poisson_exact_rdp
from .poisson_gaussian import poisson_gaussian_rdp
from .subsampled import (
    SubsampledBound,
    subsampled_lower_bound,
    subsampled_rdp,
    wbk_upper_bound,
    zhu_wang_upper_bound,
)

__all__ = [
    "DEFAULT_ORDERS",
    "ExactRdpCurve",
    "OrderGridWarning",
    "RdpAccountant",
    "RdpCurve",
    "RdpEvent",
    "SubsampledBound",
    "ZcdpBound",
    "check_orders",
    "ledger_rdp_curve",
    "ledger_zcdp",
    "poisson_exact_rdp",
    "poisson_gaussian_epsilon",
    "poisson_gaussian_rdp",
    "pure_dp_rdp",
    "rdp_bracket_from_profile",
    "rdp_curve",
    "rdp_from_profile",
    "subsampled_lower_bound",
    "subsampled_rdp",
    "wbk_upper_bound",
    "zhu_wang_upper_bound",
]
