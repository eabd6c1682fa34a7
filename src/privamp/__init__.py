"""privamp: privacy amplification and privacy accounting for differential privacy.

The top level re-exports the everyday names; the subpackages hold the rest:

* :mod:`privamp.profiles` — privacy profiles δ(ε), inversion ε(δ), group privacy, tabulated data;
* :mod:`privamp.mechanisms` — Gaussian, Laplace, randomized response, randomized membership,
  generic (ε, δ)-DP and discrete-pair mechanisms;
* :mod:`privamp.divergences` — hockey-stick, total variation, Rényi, KL, Pearson–Vajda;
* :mod:`privamp.privacy_loss` — privacy loss random variables (Theorem 5) and Theorem 6;
* :mod:`privamp.relations` — neighbouring relations and their sensitivity conventions.

Every name is re-exported lazily (imported on first use, PEP 562), so that ``import privamp``
costs nothing and the command line's ``privamp --help`` does not import NumPy:

>>> from privamp import Accountant, GaussianMechanism, Poisson, amplify, calibrate_sigma
>>> acc = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.01))
>>> round(acc.epsilon(1e-5).upper, 4)
1.8282

(``privamp.calibrate`` is the calibration module: ``calibrate_sigma``, ``calibrate_rate``,
``calibrate_steps`` and ``calibrate_must`` are its entry points.)

>>> import privamp
>>> m = privamp.GaussianMechanism(sigma=1.0)
>>> round(float(m.profile().delta(1.0)), 6)
0.126937
"""

__version__ = "0.1.0"

#: name -> module, for the names imported on first use (PEP 562)
_LAZY = {
    "BudgetExceededError": "privamp.errors",
    "InvalidParameterError": "privamp.errors",
    "InvalidTypeError": "privamp.errors",
    "MissingDependencyError": "privamp.errors",
    "NumericalError": "privamp.errors",
    "PrivampError": "privamp.errors",
    "UnsupportedCombinationError": "privamp.errors",
    "ApproxDPMechanism": "privamp.mechanisms",
    "ApproxDPProfile": "privamp.mechanisms",
    "DiscretePairMechanism": "privamp.mechanisms",
    "DiscretePairProfile": "privamp.mechanisms",
    "GaussianMechanism": "privamp.mechanisms",
    "GaussianProfile": "privamp.mechanisms",
    "LaplaceMechanism": "privamp.mechanisms",
    "LaplaceProfile": "privamp.mechanisms",
    "Mechanism": "privamp.mechanisms",
    "RandomizedMembershipMechanism": "privamp.mechanisms",
    "RandomizedResponse": "privamp.mechanisms",
    "RandomizedResponseProfile": "privamp.mechanisms",
    "BlackBoxGroupProfile": "privamp.profiles",
    "GroupPrivacy": "privamp.profiles",
    "PrivacyProfile": "privamp.profiles",
    "TabulatedProfile": "privamp.profiles",
    "ZeroProfile": "privamp.profiles",
    "NeighbouringRelation": "privamp.relations",
    "Relation": "privamp.relations",
    "clipped_sum_sensitivity": "privamp.relations",
    "Bracket": "privamp.results",
    "Accountant": "privamp.accountant",
    "BudgetLeft": "privamp.filter",
    "PrivacyFilter": "privamp.filter",
    "Backend": "privamp.accountant",
    "amplify": "privamp.amplification.subsampling",
    "calibrate_must": "privamp.calibrate",
    "calibrate_rate": "privamp.calibrate",
    "calibrate_sigma": "privamp.calibrate",
    "calibrate_steps": "privamp.calibrate",
    "SCHEMES": "privamp.sampling",
    "Poisson": "privamp.sampling",
    "WOR": "privamp.sampling",
    "WR": "privamp.sampling",
    "WithoutReplacement": "privamp.sampling",
    "WithReplacement": "privamp.sampling",
    "MustOW": "privamp.sampling",
    "MustWO": "privamp.sampling",
    "MustWW": "privamp.sampling",
    "StageChain": "privamp.sampling",
    "RandomAllocation": "privamp.sampling",
    "Shuffle": "privamp.sampling",
    "TruncatedPoisson": "privamp.sampling",
}


def __getattr__(name: str):
    import importlib

    module = _LAZY.get(name)
    if module is None:
        # a subpackage not imported yet (``import privamp; privamp.rdp.RdpCurve``)
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
        raise AttributeError(f"module 'privamp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "SCHEMES",
    "WOR",
    "WR",
    "Accountant",
    "ApproxDPMechanism",
    "ApproxDPProfile",
    "Backend",
    "BlackBoxGroupProfile",
    "Bracket",
    "BudgetExceededError",
    "BudgetLeft",
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
    "MustOW",
    "MustWO",
    "MustWW",
    "NeighbouringRelation",
    "NumericalError",
    "Poisson",
    "PrivacyFilter",
    "PrivacyProfile",
    "PrivampError",
    "RandomizedMembershipMechanism",
    "RandomizedResponse",
    "RandomAllocation",
    "RandomizedResponseProfile",
    "Relation",
    "Shuffle",
    "StageChain",
    "TabulatedProfile",
    "TruncatedPoisson",
    "UnsupportedCombinationError",
    "WithReplacement",
    "WithoutReplacement",
    "ZeroProfile",
    "__version__",
    "amplify",
    "calibrate_must",
    "calibrate_rate",
    "calibrate_sigma",
    "calibrate_steps",
    "clipped_sum_sensitivity",
]
