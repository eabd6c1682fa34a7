"""Privacy amplification: by subsampling, by mixing Markov kernels, by iteration, by diffusion.

* :mod:`privamp.amplification.subsampling` — the amplified profile of a mechanism on a subsample
  (BBG 2018 Theorems 8–11 and 14, the MUST schemes, stage chains): :func:`amplify`;
* :mod:`privamp.amplification.tightness` — lower bounds (Lemma 12), tightness reports and the
  aligned profiles of the MUST paper;
* :mod:`privamp.amplification.mixing` — post-processing by uniformly mixing Markov kernels
  (BBGG 2019 §3): :class:`MarkovKernel` and the four mixing conditions of Theorem 1;
* :mod:`privamp.amplification.iteration` — coupling and iteration bounds (BBGG 2019 §4): iterated
  Gaussian/Laplace, Lipschitz kernels, projected noisy iterations, noisy projected SGD;
* :mod:`privamp.amplification.diffusion` — the Brownian-motion and Ornstein–Uhlenbeck mechanisms
  (BBGG 2019 §5): RDP via the intrinsic sensitivity, mean squared error, Theorem 8.

Every public name of these modules is re-exported here, lazily: ``from privamp.amplification
import MarkovKernel`` imports :mod:`~privamp.amplification.mixing` on first use, so importing one
submodule (the PLD code imports :mod:`~privamp.amplification.subsampling`) does not import the
others. None of them imports a slow SciPy submodule at module level (quadrature and
optimisation are imported inside the functions that use them).

>>> from privamp.amplification import MarkovKernel
>>> round(MarkovKernel([[0.9, 0.1], [0.2, 0.8]]).dobrushin, 12)
0.7
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> submodule defining it (each submodule's ``__all__``; a test keeps them equal)
_EXPORTS: dict[str, str] = {
    # subsampling
    "AmplifiedProfile": "subsampling",
    "PoissonSubstitutionProfile": "subsampling",
    "amplify": "subsampling",
    "amplify_eps": "subsampling",
    "deamplify_eps": "subsampling",
    # tightness
    "AlignedProfile": "tightness",
    "MembershipLowerBound": "tightness",
    "TightnessReport": "tightness",
    "aligned_profile": "tightness",
    "classify_amplification": "tightness",
    "membership_lower_bound": "tightness",
    "tightness_report": "tightness",
    # mixing
    "Blanket": "mixing",
    "Dobrushin": "mixing",
    "Doeblin": "mixing",
    "EpsDobrushin": "mixing",
    "LocalDP": "mixing",
    "MarkovKernel": "mixing",
    "MixingCondition": "mixing",
    "UltraMixing": "mixing",
    "eps_tilde": "mixing",
    "implies": "mixing",
    "read_kernel_csv": "mixing",
    # iteration
    "ITERATION_ORDERS": "iteration",
    "NoisySgdPrivacy": "iteration",
    "TranslationBound": "iteration",
    "gaussian_location_renyi": "iteration",
    "gaussian_split_bound": "iteration",
    "iterated_gaussian_rdp": "iteration",
    "iterated_laplace_log_density": "iteration",
    "iterated_laplace_privacy_loss": "iteration",
    "iterated_laplace_pure_epsilon": "iteration",
    "iterated_laplace_rdp": "iteration",
    "laplace_location_renyi": "iteration",
    "laplace_log_g": "iteration",
    "lipschitz_gaussian_kernel_rdp": "iteration",
    "noisy_iteration_rdp": "iteration",
    "noisy_iteration_rdp_path": "iteration",
    "noisy_sgd_rdp": "iteration",
    "optimal_path_distances": "iteration",
    "translation_kernel_rdp": "iteration",
    # diffusion
    "BrownianMotionMechanism": "diffusion",
    "DiffusionSemigroup": "diffusion",
    "OUParameters": "diffusion",
    "OrnsteinUhlenbeckMechanism": "diffusion",
    "brownian_intrinsic_sensitivity": "diffusion",
    "brownian_semigroup": "diffusion",
    "equivalent_gaussian_sigma": "diffusion",
    "intrinsic_sensitivity_numerical": "diffusion",
    "ou_gaussian_mse": "diffusion",
    "ou_intrinsic_sensitivity": "diffusion",
    "ou_mse": "diffusion",
    "ou_mse_ratio": "diffusion",
    "ou_parameters": "diffusion",
    "ou_semigroup": "diffusion",
    "post_processed_gaussian_mse": "diffusion",
    "theorem8_condition": "diffusion",
    "theorem8_ratio_bound": "diffusion",
    "transition_renyi_divergence": "diffusion",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
