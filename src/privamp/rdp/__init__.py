"""Rényi differential privacy: curves, base mechanisms, subsampled bounds, moments accountant."""

from .curve import DEFAULT_ORDERS, OrderGridWarning, RdpCurve

__all__ = ["DEFAULT_ORDERS", "OrderGridWarning", "RdpCurve"]
