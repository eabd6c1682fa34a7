"""Subsampling schemes, their samplers and the multiplicity law of a record."""

from .multiplicity import MultiplicityPmf
from .rounds import RandomAllocation, Shuffle, TruncatedPoisson
from .schemes import (
    SCHEMES,
    MustOW,
    MustWO,
    MustWW,
    Poisson,
    SamplingScheme,
    StageChain,
    Subsample,
    WithoutReplacement,
    WithReplacement,
    flat_schemes,
)
from .stages import STAGES, Stage, WorStage, WrStage

WOR = WithoutReplacement
WR = WithReplacement

__all__ = [
    "SCHEMES",
    "STAGES",
    "WOR",
    "WR",
    "MultiplicityPmf",
    "MustOW",
    "MustWO",
    "MustWW",
    "Poisson",
    "RandomAllocation",
    "SamplingScheme",
    "Shuffle",
    "Stage",
    "StageChain",
    "Subsample",
    "TruncatedPoisson",
    "WithReplacement",
    "WithoutReplacement",
    "WorStage",
    "WrStage",
    "flat_schemes",
]
