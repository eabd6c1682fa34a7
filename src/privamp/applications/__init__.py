"""Applications: private algorithms together with their privacy statements."""

from .noisy_sgd import (
    Box,
    ConvexSet,
    EuclideanBall,
    NoisyProjSGD,
    NoisySgdResult,
    RegularizedLogisticLoss,
    Unconstrained,
)

__all__ = [
    "Box",
    "ConvexSet",
    "EuclideanBall",
    "NoisyProjSGD",
    "NoisySgdResult",
    "RegularizedLogisticLoss",
    "Unconstrained",
]
