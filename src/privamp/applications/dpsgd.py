"""DP-SGD for linear and logistic regression (NumPy), with any privamp sampling scheme.

One step (Abadi et al. 2016, Algorithm 1; Zhao & Liu 2023, Algorithm 2 with its errors fixed)::

    Y      ← scheme.sample(n, rng)                 # a multiset: distinct records and counts
    ḡ_i    ← g_i / max(1, ‖g_i‖₂ / C)              # per-example gradient clipped to norm C
    S      ← Σ_{i ∈ Y} count_i · ḡ_i               # each copy counts
    w      ← w − η_t (S + N(0, σ² I)) / B          # B = E|Y|: γn for Poisson, m otherwise

The released quantity of a step is the noisy sum S + N(0, σ² I), a Gaussian mechanism on the
subsample whose **per-copy** L2 sensitivity Δ is C under add/remove and 2C under substitution
(:func:`privamp.relations.clipped_sum_sensitivity`). The scheme decides which of the two
relations the step must be analysed under (:meth:`~privamp.sampling.SamplingScheme.base_relation`:
add/remove only for Poisson under add/remove). A record drawn k times (WR, MUST) moves S by up to
2kC: privamp's amplification theorems account for that through the white-box group profiles of
the base mechanism (sensitivity kΔ), so the base mechanism keeps the per-copy Δ. The noise is
calibrated by the accountant so that the *whole run* meets the privacy target
(:mod:`privamp.applications.privacy`); the weights are a post-processing of the T releases.

Dividing by the fixed B (not by the realised |Y|, and not by n) keeps the step a post-processing
of S: the MUST paper's Algorithm 2 averages by |Y| and calibrates σ to a sensitivity C/n, i.e.
about n/m times too little noise for its own averaging by m (≈ 10× in its experiment 2, ≈ 103×
in experiment 3; catalogue errata 15), and treats every scheme as if its sensitivity were that of
add/remove.

>>> import numpy as np
>>> from privamp.sampling import Poisson
>>> rng = np.random.default_rng(0)
>>> X = np.column_stack([np.ones(2000), rng.normal(size=2000)])
>>> y = X @ [1.0, 2.0] + rng.normal(size=2000)
>>> sgd = DPSGD(LinearRegression(), scheme=Poisson(0.05), steps=300, clip_norm=5.0,
...             learning_rate=0.1, target_epsilon=2.0, delta=1e-5)
>>> res = sgd.fit(X, y, rng=1)
>>> res.privacy.epsilon <= 2.0, np.round(res.weights, 1).tolist()
(True, [1.0, 2.0])
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .._validation import check_int, check_real, check_real_array, check_rng
from ..errors import InvalidParameterError
from ..relations import NeighbouringRelation, clipped_sum_sensitivity
from ..sampling.schemes import SamplingScheme
from .privacy import (
    PrivacyStatement,
    account,
    calibrate_noise,
    per_step_statement,
    resolve_relations,
)
from .samplers import check_batch_fits, expected_batch_size

__all__ = ["DPSGD", "DpSgdResult", "LinearRegression", "LogisticRegression", "Model",
           "clip_gradients", "clipped_gradient_sum", "nonprivate_sgd"]


# ---------------------------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------------------------


class Model(abc.ABC):
    """A loss ``l(w; x, y)`` with per-example gradients (rows of X are records)."""

    @abc.abstractmethod
    def per_example_gradients(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The (k, d) matrix of gradients ∇_w l(w; x_i, y_i)."""

    @abc.abstractmethod
    def loss(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
        """The average loss over the rows of X."""

    @abc.abstractmethod
    def predict(self, w: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Predictions for the rows of X."""

    def check_labels(self, y: np.ndarray) -> None:
        """Reject labels the model cannot use (a hook; regression accepts any reals)."""
        return None


class LinearRegression(Model):
    """Squared error ``l(w; x, y) = (xᵀw − y)²``, gradient ``2x(xᵀw − y)`` (MUST §4.2.2).

    >>> LinearRegression().per_example_gradients(np.array([1.0, 0.0]), np.eye(2), np.zeros(2))
    array([[2., 0.],
           [0., 0.]])
    """

    def per_example_gradients(self, w, X, y):
        return 2.0 * X * (X @ w - y)[:, None]

    def loss(self, w, X, y):
        r = X @ w - y
        return float(np.mean(r * r))

    def predict(self, w, X):
        return X @ w


class LogisticRegression(Model):
    """Cross-entropy of ``S(xᵀw) = 1/(1 + e^{−xᵀw})`` for labels y ∈ {0, 1}, gradient
    ``x(S(xᵀw) − y)`` (MUST §4.2.3).

    >>> LogisticRegression().loss(np.zeros(1), np.ones((2, 1)), np.array([0.0, 1.0]))
    0.6931471805599453
    """

    def per_example_gradients(self, w, X, y):
        return X * (special.expit(X @ w) - y)[:, None]

    def loss(self, w, X, y):
        z = X @ w
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    def predict(self, w, X):
        """Probabilities S(xᵀw); class 1 iff xᵀw > 0."""
        return special.expit(X @ w)

    def check_labels(self, y):
        if not np.all((y == 0) | (y == 1)):
            bad = y[(y != 0) & (y != 1)][0]
            raise InvalidParameterError("y", "labels in {0, 1}", float(bad))


# ---------------------------------------------------------------------------------------------
# clipping
# ---------------------------------------------------------------------------------------------


def clip_gradients(gradients: np.ndarray, clip_norm: float) -> np.ndarray:
    """Each row g scaled to ``g / max(1, ‖g‖₂ / C)`` (norm at most C, direction kept).

    >>> clip_gradients(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    c = check_real("clip_norm", clip_norm, "(0, inf)")
    g = np.asarray(gradients, dtype=float)
    norms = np.linalg.norm(g, axis=1)
    # the rescaled norm C·(1 + ~ulp) can exceed C by a rounding: shrink by 4 ulp more
    scale = np.minimum(1.0, c / np.where(norms > 0, norms, 1.0) * (1.0 - 4 * np.finfo(float).eps))
    return g * scale[:, None]


def clipped_gradient_sum(gradients: np.ndarray, counts: np.ndarray, clip_norm: float
                         ) -> np.ndarray:
    """``Σ_i counts_i · clip(g_i)``: the statistic a DP-SGD step releases (with noise).

    Replacing one record that appears k times changes it by at most 2kC (k·C if the record is
    added or removed).

    >>> clipped_gradient_sum(np.array([[3.0, 4.0], [0.0, 1.0]]), np.array([2, 1]), 1.0)
    array([1.2, 2.6])
    """
    g = clip_gradients(gradients, clip_norm)
    return np.asarray(counts, dtype=float) @ g


# ---------------------------------------------------------------------------------------------
# the trainer
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DpSgdResult:
    """The outcome of :meth:`DPSGD.fit`.

    Attributes
    ----------
    weights : ndarray
        The final iterate w_T — the only output covered by :attr:`privacy`.
    privacy : PrivacyStatement
        (ε, δ), relation, scheme, steps, σ and the per-copy sensitivity.
    loss_history : ndarray
        The average loss on the training data at :attr:`loss_steps` (step 0 is the initial
        point). **A non-private diagnostic**: it reads the raw training data; do not publish it.
    loss_steps : ndarray
    batch_sizes : ndarray
        Realised batch size (with multiplicity) of each step.
    distinct : ndarray
        Distinct records (gradient evaluations) of each step.
    trajectory : ndarray or None
        All iterates w_0..w_T when asked for (``keep_trajectory=True``).
    """

    weights: np.ndarray
    privacy: PrivacyStatement | None
    loss_history: np.ndarray
    loss_steps: np.ndarray
    batch_sizes: np.ndarray
    distinct: np.ndarray
    trajectory: np.ndarray | None = None


def _check_data(X, y, model: Model) -> tuple[np.ndarray, np.ndarray]:
    X = check_real_array("X", X, "(-inf, inf)", ndim=2)
    y = check_real_array("y", y, "(-inf, inf)", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise InvalidParameterError("y", f"one label per row of X ({X.shape[0]})", y.shape[0])
    model.check_labels(y)
    return X, y


def _learning_rates(learning_rate, steps) -> Callable[[int], float]:
    if callable(learning_rate):
        return learning_rate
    lr = check_real("learning_rate", learning_rate, "(0, inf)")
    return lambda t: lr


def _run(model: Model, X, y, *, scheme, steps, rng, learning_rate, clip_norm, noise_std,
         normaliser, initial_weights, loss_every, keep_trajectory, progress):
    """The shared SGD loop (private when ``noise_std`` is not None)."""
    n, d = X.shape
    lr_at = _learning_rates(learning_rate, steps)
    w = (np.zeros(d) if initial_weights is None
         else check_real_array("initial_weights", initial_weights, "(-inf, inf)", ndim=1).copy())
    if w.shape[0] != d:
        raise InvalidParameterError("initial_weights", f"a vector of length {d} (columns of X)",
                                    w.shape[0])
    loss_every = check_int("loss_every", loss_every, "[0, inf)")
    gen = check_rng(rng)
    losses, loss_steps = [], []
    if loss_every:
        losses.append(model.loss(w, X, y))
        loss_steps.append(0)
    sizes = np.zeros(steps, dtype=np.int64)
    distinct = np.zeros(steps, dtype=np.int64)
    path = np.empty((steps + 1, d)) if keep_trajectory else None
    if path is not None:
        path[0] = w
    for t in range(steps):
        sub = scheme.sample(n, gen)
        idx, counts = sub.indices, sub.counts
        sizes[t] = counts.sum()
        distinct[t] = idx.size
        grads = model.per_example_gradients(w, X[idx], y[idx])
        if noise_std is not None:
            total = clipped_gradient_sum(grads, counts, clip_norm)
            # the released statistic: noise on the sum, drawn on every step (empty batches too)
            total = total + gen.normal(0.0, noise_std, size=d)
            step = total / normaliser
        else:  # the non-private baseline: plain average over the realised batch
            if idx.size == 0:
                step = np.zeros(d)
            else:
                if clip_norm is not None:
                    grads = clip_gradients(grads, clip_norm)
                step = (counts @ grads) / counts.sum()
        w = w - lr_at(t) * step
        if path is not None:
            path[t + 1] = w
        if loss_every and ((t + 1) % loss_every == 0 or t + 1 == steps):
            losses.append(model.loss(w, X, y))
            loss_steps.append(t + 1)
        if progress is not None:
            progress(t + 1, steps)
    return w, np.asarray(losses), np.asarray(loss_steps, dtype=np.int64), sizes, distinct, path


class DPSGD:
    """Differentially private SGD whose noise is calibrated by the accountant.

    Parameters
    ----------
    model : Model
        :class:`LinearRegression`, :class:`LogisticRegression` or any :class:`Model`.
    scheme : SamplingScheme
        How each batch is drawn (Poisson, WOR, WR, MustOW, MustWO, MustWW, StageChain); it must
        fit the data (its n is the number of rows; Poisson needs no n under add/remove).
    steps : int
        Number of iterations T.
    clip_norm : float
        C > 0: per-example gradients are clipped to L2 norm C.
    learning_rate : float or callable
        A constant η > 0, or ``t -> η_t``.
    delta : float
        δ of the privacy statement of the whole run.
    target_epsilon : float, optional
        Calibrate σ so that the whole run is (target_epsilon, δ)-DP (certified).
    noise_multiplier : float, optional
        Use σ = noise_multiplier × Δ instead; the run's ε at δ is accounted.
    step_epsilon, step_delta : float, optional
        The MUST paper's per-step protocol (:func:`~privamp.applications.privacy.
        per_step_noise_multiplier`): per-step ε' after amplification, δ before it.
    relation : NeighbouringRelation or str, optional
        Relation on the whole dataset (default: the scheme's natural one).
    backend : str
        Accountant backend (default "pld").
    account_privacy : bool
        ``False`` skips the accounting (only with ``noise_multiplier``): :attr:`privacy` is
        then ``None`` and the run has **no privacy statement**. For re-running published noise
        levels that no accountant can certify (the MUST paper's, in
        :mod:`privamp.reproduce.must2023`); never for a release.

    Notes
    -----
    Exactly one of ``target_epsilon``, ``noise_multiplier``, ``step_epsilon`` is given. The
    calibration happens once, here; :meth:`fit` can then run on many datasets of the same size.
    :attr:`noise_std` is σ, the standard deviation of the Gaussian noise added to the clipped
    sum (= z·Δ).

    Attributes
    ----------
    privacy : PrivacyStatement or None
    sensitivity : float
        Per-copy sensitivity Δ of the clipped-gradient sum under the base relation (C or 2C).
    """

    def __init__(self, model: Model, *, scheme: SamplingScheme, steps: int, clip_norm: float,
                 learning_rate: float | Callable[[int], float], delta: float,
                 target_epsilon: float | None = None, noise_multiplier: float | None = None,
                 step_epsilon: float | None = None, step_delta: float | None = None,
                 relation: NeighbouringRelation | str | None = None, backend: str = "pld",
                 account_privacy: bool = True):
        if not isinstance(model, Model):
            raise InvalidParameterError("model", "a privamp.applications.dpsgd.Model", model)
        self.model = model
        self.steps = check_int("steps", steps, "[1, inf)")
        self.clip_norm = check_real("clip_norm", clip_norm, "(0, inf)")
        self.learning_rate = (learning_rate if callable(learning_rate)
                              else check_real("learning_rate", learning_rate, "(0, inf)"))
        outer, base = resolve_relations(scheme, relation)
        self.scheme = scheme
        self.relation = outer
        self.sensitivity = clipped_sum_sensitivity(self.clip_norm, base)
        given = [v is not None for v in (target_epsilon, noise_multiplier, step_epsilon)]
        if sum(given) != 1:
            raise InvalidParameterError(
                "target_epsilon", "given alone, or replaced by exactly one of noise_multiplier, "
                "step_epsilon", target_epsilon)
        if not account_privacy and noise_multiplier is None:
            raise InvalidParameterError(
                "account_privacy", "True unless noise_multiplier is given (the other noise "
                "choices are made by the accountant)", account_privacy)
        self.privacy: PrivacyStatement | None
        if target_epsilon is not None:
            self.privacy = calibrate_noise(target_epsilon, delta, scheme=scheme,
                                           steps=self.steps, sensitivity=self.sensitivity,
                                           relation=outer, backend=backend)
            self._noise_std = self.privacy.sigma
        elif noise_multiplier is not None:
            from ..mechanisms.gaussian import GaussianMechanism

            z = check_real("noise_multiplier", noise_multiplier, "(0, inf)")
            mech = GaussianMechanism(z * self.sensitivity, self.sensitivity, base)
            self.privacy = (account(mech, scheme=scheme, steps=self.steps, delta=delta,
                                    relation=outer, backend=backend)
                            if account_privacy else None)
            self._noise_std = mech.sigma
        else:
            self.privacy = per_step_statement(
                step_epsilon, delta if step_delta is None else step_delta, scheme=scheme,
                steps=self.steps, delta=delta, sensitivity=self.sensitivity, relation=outer,
                backend=backend)
            self._noise_std = self.privacy.sigma

    @property
    def noise_std(self) -> float:
        """σ: standard deviation of the noise on the clipped-gradient sum."""
        return self._noise_std

    @property
    def noise_multiplier(self) -> float:
        """σ / Δ."""
        return self._noise_std / self.sensitivity

    def normaliser(self, n: int) -> float:
        """The fixed divisor B of the noisy sum: γn for Poisson, m otherwise."""
        return expected_batch_size(self.scheme, n)

    def fit(self, X: Any, y: Any, *, rng: Any = None, initial_weights: Any = None,
            loss_every: int = 1, keep_trajectory: bool = False,
            progress: Callable[[int, int], None] | None = None) -> DpSgdResult:
        """Train on (X, y) (rows are records); randomness (batches and noise) only from ``rng``.

        ``loss_every`` records the full-data loss every that many steps (0: never);
        ``progress(step, steps)`` is called after each step.
        """
        X, y = _check_data(X, y, self.model)
        n = check_batch_fits(self.scheme, X.shape[0])
        w, losses, loss_steps, sizes, distinct, path = _run(
            self.model, X, y, scheme=self.scheme, steps=self.steps, rng=rng,
            learning_rate=self.learning_rate, clip_norm=self.clip_norm,
            noise_std=self.noise_std, normaliser=self.normaliser(n),
            initial_weights=initial_weights, loss_every=loss_every,
            keep_trajectory=keep_trajectory, progress=progress)
        return DpSgdResult(w, self.privacy, losses, loss_steps, sizes, distinct, path)

    def __repr__(self) -> str:
        return (f"DPSGD({type(self.model).__name__}, {self.scheme!r}, steps={self.steps}, "
                f"C={self.clip_norm:g}, sigma={self.noise_std:.6g})")


def nonprivate_sgd(model: Model, X: Any, y: Any, *, scheme: SamplingScheme, steps: int,
                   learning_rate: float | Callable[[int], float], rng: Any = None,
                   clip_norm: float | None = None, initial_weights: Any = None,
                   loss_every: int = 1) -> DpSgdResult:
    """Minibatch SGD without privacy (the MUST paper's "non-private Poisson" baseline): the
    gradient is the plain average over the realised batch (no noise; clipping only if
    ``clip_norm`` is given; an empty batch leaves w unchanged). ``privacy`` is ``None``."""
    X, y = _check_data(X, y, model)
    n = check_batch_fits(scheme, X.shape[0])
    steps = check_int("steps", steps, "[1, inf)")
    if clip_norm is not None:
        clip_norm = check_real("clip_norm", clip_norm, "(0, inf)")
    w, losses, loss_steps, sizes, distinct, path = _run(
        model, X, y, scheme=scheme, steps=steps, rng=rng, learning_rate=learning_rate,
        clip_norm=clip_norm, noise_std=None, normaliser=float(n), initial_weights=initial_weights,
        loss_every=loss_every, keep_trajectory=False, progress=None)
    return DpSgdResult(w, None, losses, loss_steps, sizes, distinct, path)
