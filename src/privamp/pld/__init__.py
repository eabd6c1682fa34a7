"""Privacy loss distributions: dominating-pair curves, discretisation, FFT composition."""

from .curves import PairCurve, PoissonGaussianCurve, ProfileCurve
from .distribution import ComposedPLD, StepPLD, compose

__all__ = ["ComposedPLD", "PairCurve", "PoissonGaussianCurve", "ProfileCurve", "StepPLD",
           "compose"]
