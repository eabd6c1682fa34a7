"""Subsampling schemes, their samplers and the multiplicity law of a record."""

from .multiplicity import MultiplicityPmf
from .schemes import (
    MustOW,
    MustWO,
    MustWW,
    Poisson,
    SamplingScheme,
    StageChain,
    Subsample,
    WithoutReplacement,
    WithReplacement,
)

WOR = WithoutReplacement
WR = WithReplacement

__all__ = [
    "WOR",
    "WR",
    "MultiplicityPmf",
    "MustOW",
    "MustWO",
    "MustWW",
    "Poisson",
    "SamplingScheme",
    "StageChain",
    "Subsample",
    "WithReplacement",
    "WithoutReplacement",
]
