"""Privacy loss distributions: dominating-pair curves, discretisation, FFT composition, the
certified ε/δ engine behind the ``pld`` accountant backend, and the Fourier accountant.

* :mod:`~privamp.pld.curves` — hockey-stick curves of dominating pairs (profiles, exact
  Poisson-subsampled Gaussian orientations);
* :mod:`~privamp.pld.discretize` — connect-the-dots (upper) and merged-tangent (lower) grids;
* :mod:`~privamp.pld.distribution` — step PLDs and their FFT composition with certified error
  terms (extended-precision powering, exponential tilting for tiny δ);
* :mod:`~privamp.pld.engine` — automatic ranges and grids, brackets on ε(δ) and δ(ε);
* :mod:`~privamp.pld.builders` — the curves of a (mechanism, scheme, relation) event;
* :mod:`~privamp.pld.fourier` — the Koskela et al. Fourier accountant (MUST Algorithm 1), for
  comparison;
* :mod:`~privamp.pld.mixture` — the MUST paper's mixture-of-Gaussians PLDs it composes;
* :mod:`~privamp.pld.mixture_curve` — the curve of a disjoint-union mixture of pairs;
* :mod:`~privamp.pld.truncated` — truncated Poisson subsampling of the Gaussian (certified
  curves, fixed-shape sampler).
"""

from .builders import pair_curves
from .curves import PairCurve, PoissonGaussianCurve, ProfileCurve
from .distribution import ComposedPLD, StepPLD, compose
from .engine import PldEvent, PldResult, pld_delta, pld_epsilon

__all__ = ["ComposedPLD", "PairCurve", "PldEvent", "PldResult", "PoissonGaussianCurve",
           "ProfileCurve", "StepPLD", "compose", "pair_curves", "pld_delta", "pld_epsilon"]
