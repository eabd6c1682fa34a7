"""Base mechanisms: one module per family, each giving release, profile, group profiles and the
privacy loss random variables.

``REGISTRY`` maps the command-line names (``gaussian``, ``laplace``, ``randomized-response``, ...)
to the classes.
"""

from .base import REGISTRY, SENSITIVITY, Mechanism, build_mechanism, noise_mechanisms, register
from .gaussian import GaussianMechanism, GaussianProfile, classical_gaussian_sigma
from .generic import (
    ApproxDPMechanism,
    ApproxDPProfile,
    DiscretePairMechanism,
    DiscretePairProfile,
)
from .laplace import LaplaceMechanism, LaplaceProfile
from .randomized_response import (
    RandomizedMembershipMechanism,
    RandomizedResponse,
    RandomizedResponseProfile,
)

__all__ = [
    "REGISTRY",
    "SENSITIVITY",
    "ApproxDPMechanism",
    "ApproxDPProfile",
    "DiscretePairMechanism",
    "DiscretePairProfile",
    "GaussianMechanism",
    "GaussianProfile",
    "LaplaceMechanism",
    "LaplaceProfile",
    "Mechanism",
    "RandomizedMembershipMechanism",
    "RandomizedResponse",
    "RandomizedResponseProfile",
    "build_mechanism",
    "classical_gaussian_sigma",
    "noise_mechanisms",
    "register",
]
