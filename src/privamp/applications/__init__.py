"""Applications: private algorithms together with their privacy statements.

* :mod:`~privamp.applications.noisy_sgd` — noisy projected SGD (BBGG 2019) with per-index privacy;
* :mod:`~privamp.applications.dpsgd` — DP-SGD for linear and logistic regression with any
  sampling scheme, noise calibrated by the accountant;
* :mod:`~privamp.applications.bootstrap` — the DP subsampling bootstrap (mean, variance, CIs);
* :mod:`~privamp.applications.samplers` — index-batch samplers for data pipelines
  (:mod:`~privamp.applications.torch_sampler`: a PyTorch batch sampler, ``torch`` extra);
* :mod:`~privamp.applications.privacy` — the privacy statement of a run.

The MUST paper's experiments built on them are in :mod:`privamp.reproduce.must2023.experiments`.
The names of the last five modules are imported on first use.
"""

from importlib import import_module

from .noisy_sgd import (
    Box,
    ConvexSet,
    EuclideanBall,
    NoisyProjSGD,
    NoisySgdResult,
    RegularizedLogisticLoss,
    Unconstrained,
)

_LAZY = {
    "DPSGD": "dpsgd",
    "DpSgdResult": "dpsgd",
    "LinearRegression": "dpsgd",
    "LogisticRegression": "dpsgd",
    "clip_gradients": "dpsgd",
    "clipped_gradient_sum": "dpsgd",
    "nonprivate_sgd": "dpsgd",
    "DpBootstrap": "bootstrap",
    "DpBootstrapResult": "bootstrap",
    "SchemeBatchSampler": "samplers",
    "PrivacyStatement": "privacy",
    "TorchBatchSampler": "torch_sampler",
}

__all__ = [
    "DPSGD",
    "Box",
    "ConvexSet",
    "DpBootstrap",
    "DpBootstrapResult",
    "DpSgdResult",
    "EuclideanBall",
    "LinearRegression",
    "LogisticRegression",
    "NoisyProjSGD",
    "NoisySgdResult",
    "PrivacyStatement",
    "RegularizedLogisticLoss",
    "SchemeBatchSampler",
    "TorchBatchSampler",
    "Unconstrained",
    "clip_gradients",
    "clipped_gradient_sum",
    "nonprivate_sgd",
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
