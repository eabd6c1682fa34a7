"""privamp: privacy amplification and privacy accounting for differential privacy.

The top level re-exports the everyday names; the subpackages hold the rest:

* :mod:`privamp.profiles` — privacy profiles δ(ε), inversion ε(δ), group privacy, tabulated data;
* :mod:`privamp.mechanisms` — Gaussian, Laplace, randomized response, randomized membership,
  generic (ε, δ)-DP and discrete-pair mechanisms;
* :mod:`privamp.divergences` — hockey-stick, total variation, Rényi, KL, Pearson–Vajda;
* :mod:`privamp.privacy_loss` — privacy loss random variables (Theorem 5) and Theorem 6;
* :mod:`privamp.relations` — neighbouring relations and their sensitivity conventions.

>>> import privamp
>>> m = privamp.GaussianMechanism(sigma=1.0)
>>> round(float(m.profile().delta(1.0)), 6)
0.126937
"""

from .errors import (
    InvalidParameterError,
    InvalidTypeError,
    MissingDependencyError,
    NumericalError,
    PrivampError,
    UnsupportedCombinationError,
)
from .mechanisms import (
    ApproxDPMechanism,
    ApproxDPProfile,
    DiscretePairMechanism,
    DiscretePairProfile,
    GaussianMechanism,
    GaussianProfile,
    LaplaceMechanism,
    LaplaceProfile,
    Mechanism,
    RandomizedMembershipMechanism,
    RandomizedResponse,
    RandomizedResponseProfile,
)
from .profiles import (
    BlackBoxGroupProfile,
    GroupPrivacy,
    PrivacyProfile,
    TabulatedProfile,
    ZeroProfile,
)
from .relations import NeighbouringRelation, Relation, clipped_sum_sensitivity
from .results import Bracket

__version__ = "0.1.0"

__all__ = [
    "ApproxDPMechanism",
    "ApproxDPProfile",
    "BlackBoxGroupProfile",
    "Bracket",
    "DiscretePairMechanism",
    "DiscretePairProfile",
    "GaussianMechanism",
    "GaussianProfile",
    "GroupPrivacy",
    "InvalidParameterError",
    "InvalidTypeError",
    "LaplaceMechanism",
    "LaplaceProfile",
    "Mechanism",
    "MissingDependencyError",
    "NeighbouringRelation",
    "NumericalError",
    "PrivacyProfile",
    "PrivampError",
    "RandomizedMembershipMechanism",
    "RandomizedResponse",
    "RandomizedResponseProfile",
    "Relation",
    "TabulatedProfile",
    "UnsupportedCombinationError",
    "ZeroProfile",
    "__version__",
    "clipped_sum_sensitivity",
]
