"""Noisy projected SGD (Balle, Barthe, Gaboardi, Geumlek 2019, Algorithm 1) with its per-index
privacy statement (Theorem 5).

One pass over a dataset ``D = (z_1, …, z_n)``::

    x_0 ~ ξ_0 (a point of 𝕂, or a sampler)
    for i = 1, …, n:   x_i = Π_𝕂(x_{i−1} − η(∇_x ℓ(x_{i−1}, z_i) + Z_i)),   Z_i ~ N(0, σ² I)
    return x_n

The noise is inside the η-scaling (effective step noise N(0, η²σ²I)). If ℓ(·, z) is C-Lipschitz,
β-smooth and ρ-strongly convex on the convex set 𝕂 for every z and η ≤ 2/(β + ρ), the final
iterate is (order, order ϵ_i)-RDP at index i (:class:`~privamp.amplification.iteration.
NoisySgdPrivacy`): records used early are exponentially better protected than late ones.

The constants C, β, ρ are the caller's statement about the loss (they cannot be verified from a
gradient oracle). privamp does check what it can: every gradient actually evaluated must have
norm ≤ C (else :class:`~privamp.errors.InvalidParameterError` naming ``lipschitz``: the
guarantee would be false), the step size condition, and that the start point lies in 𝕂.
Randomness comes only from the ``rng`` argument.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from .._validation import check_real, check_real_array, check_rng
from ..amplification.iteration import NoisySgdPrivacy
from ..errors import InvalidParameterError

__all__ = [
    "Box",
    "ConvexSet",
    "EuclideanBall",
    "NoisyProjSGD",
    "NoisySgdResult",
    "RegularizedLogisticLoss",
    "Unconstrained",
]


# ---------------------------------------------------------------------------------------------
# convex sets with Euclidean projections
# ---------------------------------------------------------------------------------------------


class ConvexSet(abc.ABC):
    """A closed convex set 𝕂 ⊆ R^d with its Euclidean projection ``Π_𝕂(x) = argmin_{y∈𝕂}‖x−y‖``
    (non-expansive, which Theorems 4 and 5 rely on)."""

    @abc.abstractmethod
    def project(self, x: Any) -> np.ndarray:
        """The Euclidean projection of a point (1-D array) onto the set."""

    @abc.abstractmethod
    def contains(self, x: Any, *, rtol: float = 1e-12) -> bool:
        """Whether x lies in the set (within a relative tolerance for rounding)."""


@dataclass(frozen=True)
class Unconstrained(ConvexSet):
    """𝕂 = R^d (the projection is the identity).

    >>> Unconstrained().project([3.0, -4.0])
    array([ 3., -4.])
    """

    def project(self, x):
        return check_real_array("x", x, "(-inf, inf)", ndim=1).copy()

    def contains(self, x, *, rtol=1e-12):
        return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))


@dataclass(frozen=True)
class EuclideanBall(ConvexSet):
    """The ball ``{x : ‖x − center‖ ≤ radius}``; ``center`` defaults to the origin.

    >>> EuclideanBall(1.0).project([3.0, 4.0])
    array([0.6, 0.8])
    """

    radius: float
    center: Any = None

    def __post_init__(self):
        object.__setattr__(self, "radius", check_real("radius", self.radius, "(0, inf)"))
        if self.center is not None:
            c = check_real_array("center", self.center, "(-inf, inf)", ndim=1)
            c.setflags(write=False)
            object.__setattr__(self, "center", c)

    def _center(self, x: np.ndarray) -> np.ndarray:
        if self.center is None:
            return np.zeros_like(x)
        if self.center.shape != x.shape:
            raise InvalidParameterError("x", f"a vector of dimension {self.center.size}",
                                        x.shape)
        return self.center

    def project(self, x):
        x = check_real_array("x", x, "(-inf, inf)", ndim=1)
        c = self._center(x)
        d = x - c
        norm = float(np.linalg.norm(d))
        if norm <= self.radius:
            return x.copy()
        return c + d * (self.radius / norm)

    def contains(self, x, *, rtol=1e-12):
        x = np.asarray(x, dtype=float)
        return bool(np.linalg.norm(x - self._center(x)) <= self.radius * (1 + rtol))


@dataclass(frozen=True)
class Box(ConvexSet):
    """The box ``{x : lower ≤ x ≤ upper}`` (coordinate-wise; scalars broadcast).

    >>> Box(-1.0, 1.0).project([2.0, -0.5, -3.0])
    array([ 1. , -0.5, -1. ])
    """

    lower: Any
    upper: Any

    def __post_init__(self):
        lo = check_real_array("lower", self.lower, "[-inf, inf)")
        hi = check_real_array("upper", self.upper, "(-inf, inf]")
        try:
            lo_b, hi_b = np.broadcast_arrays(lo, hi)
        except ValueError as exc:
            raise InvalidParameterError("upper", "broadcastable against lower", hi.shape) \
                from exc
        if np.any(lo_b > hi_b):
            raise InvalidParameterError("upper", "at least lower (coordinate-wise)", hi)
        lo.setflags(write=False)
        hi.setflags(write=False)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    def project(self, x):
        x = check_real_array("x", x, "(-inf, inf)", ndim=1)
        return np.clip(x, self.lower, self.upper)

    def contains(self, x, *, rtol=1e-12):
        x = np.asarray(x, dtype=float)
        return bool(np.all((x >= self.lower) & (x <= self.upper)))


# ---------------------------------------------------------------------------------------------
# Algorithm 1
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoisySgdResult:
    """Output of :meth:`NoisyProjSGD.run`.

    Attributes
    ----------
    x : ndarray
        The final iterate x_n (the only released value).
    privacy : NoisySgdPrivacy
        Its per-index RDP statement (Theorem 5).
    path : ndarray or None
        All iterates x_0, …, x_n (shape (n + 1, d)) when requested; not private to release.

    >>> sgd = NoisyProjSGD(lambda x, z: x - z, 0.5, 1.0, 2.0, 1.0, 1.0, EuclideanBall(1.0))
    >>> res = sgd.run(np.zeros((3, 1)), x0=np.zeros(1), rng=0, return_path=True)
    >>> res.path.shape, res.privacy.n
    ((4, 1), 3)
    """

    x: np.ndarray
    privacy: NoisySgdPrivacy
    path: np.ndarray | None = field(default=None, repr=False)

    def epsilon(self, index: int, delta: float) -> float:
        """(ε, δ)-DP of the final iterate at index i (see :class:`NoisySgdPrivacy`)."""
        return self.privacy.epsilon(index, delta)


@dataclass(frozen=True)
class NoisyProjSGD:
    """Noisy projected SGD (BBGG Algorithm 1) for a user-supplied per-example gradient.

    Parameters
    ----------
    gradient : callable
        ``gradient(x, z) -> ndarray``: ∇_x ℓ(x, z) for one record z at a point x ∈ 𝕂.
    step_size : float
        η > 0, at most ``2/(smoothness + strong_convexity)`` (Theorem 5; checked).
    sigma : float
        σ > 0: the gradient noise is N(0, σ²I) (step noise N(0, η²σ²I)).
    lipschitz, smoothness, strong_convexity : float
        C, β, ρ of the loss on 𝕂 (the caller's statement; gradients seen are checked against C).
    constraint : ConvexSet, optional
        𝕂 (default R^d): :class:`EuclideanBall`, :class:`Box` or any :class:`ConvexSet`.

    Examples
    --------
    Ridge-like quadratic loss ½‖x − z‖² on the unit ball (C = 2, β = ρ = 1):

    >>> sgd = NoisyProjSGD(lambda x, z: x - z, step_size=0.5, sigma=1.0, lipschitz=2.0,
    ...                    smoothness=1.0, strong_convexity=1.0, constraint=EuclideanBall(1.0))
    >>> res = sgd.run(np.full((50, 2), 0.3), x0=np.zeros(2), rng=0)
    >>> bool(np.linalg.norm(res.x) <= 1.0), round(res.privacy.rdp_slope(50), 6)
    (True, 8.0)
    """

    gradient: Callable[[np.ndarray, Any], Any]
    step_size: float
    sigma: float
    lipschitz: float
    smoothness: float
    strong_convexity: float
    constraint: ConvexSet = field(default_factory=Unconstrained)
    form: str = "paper"

    def __post_init__(self):
        if not callable(self.gradient):
            raise InvalidParameterError("gradient", "a callable gradient(x, z)", self.gradient)
        if not isinstance(self.constraint, ConvexSet):
            raise InvalidParameterError("constraint", "a ConvexSet (EuclideanBall, Box, ...)",
                                        self.constraint)
        # validates η ≤ 2/(β + ρ), ρ ≤ β and the ranges (n = 1 is a placeholder)
        p = NoisySgdPrivacy(1, self.step_size, self.lipschitz, self.smoothness,
                            self.strong_convexity, self.sigma, self.form)
        for name in ("step_size", "sigma", "lipschitz", "smoothness", "strong_convexity"):
            object.__setattr__(self, name, getattr(p, name))

    def privacy(self, n: int) -> NoisySgdPrivacy:
        """The per-index privacy statement for a pass over n records."""
        return NoisySgdPrivacy(n, self.step_size, self.lipschitz, self.smoothness,
                               self.strong_convexity, self.sigma, self.form)

    def run(self, data: Iterable[Any], x0: Any, rng: Any = None, *,
            return_path: bool = False) -> NoisySgdResult:
        """Run one pass of Algorithm 1 over ``data`` (record i is used at step i only).

        Parameters
        ----------
        data : sequence
            The records z_1, …, z_n (any objects ``gradient`` understands; rows of an array).
        x0 : array_like or callable
            The start: a point of 𝕂 (ξ_0 a point mass) or ``x0(rng) -> ndarray`` sampling ξ_0.
        rng : numpy.random.Generator, int or None
            The only source of randomness.
        return_path : bool
            Also return every iterate (for diagnostics; only x_n is covered by the guarantee).
        """
        gen = check_rng(rng)
        records = list(data)
        n = len(records)
        if n == 0:
            raise InvalidParameterError("data", "a non-empty sequence of records", n)
        start = x0(gen) if callable(x0) else x0
        x = check_real_array("x0", start, "(-inf, inf)", ndim=1).copy()
        if not self.constraint.contains(x):
            raise InvalidParameterError("x0", "a point of the constraint set (ξ_0 ∈ P(𝕂))", x)
        eta, sigma, c = self.step_size, self.sigma, self.lipschitz
        c_check = c * (1 + 1e-9) + 1e-12
        path = np.empty((n + 1, x.size)) if return_path else None
        if path is not None:
            path[0] = x
        for i, z in enumerate(records):
            g = np.asarray(self.gradient(x, z), dtype=float)
            if g.shape != x.shape or not np.all(np.isfinite(g)):
                raise InvalidParameterError(
                    "gradient", f"a finite vector of shape {x.shape}", g,
                    detail=f"returned for record {i + 1}")
            norm = float(np.linalg.norm(g))
            if norm > c_check:
                raise InvalidParameterError(
                    "lipschitz", "an upper bound on every per-example gradient norm (Theorem 5)",
                    c, detail=f"record {i + 1} has gradient norm {norm:.6g}")
            noise = gen.normal(0.0, sigma, size=x.shape)
            x = self.constraint.project(x - eta * (g + noise))
            if path is not None:
                path[i + 1] = x
        return NoisySgdResult(x, self.privacy(n), path)


# ---------------------------------------------------------------------------------------------
# a strongly convex example loss
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegularizedLogisticLoss:
    """``ℓ(x, (a, b)) = log(1 + e^{−b⟨a, x⟩}) + (λ/2)‖x‖²`` on the ball ‖x‖ ≤ R.

    Records are pairs (a, b) with features ‖a‖ ≤ A (``feature_bound``) and labels b ∈ {−1, +1}.
    On the ball the loss is C-Lipschitz with ``C = A + λR``, β-smooth with ``β = A²/4 + λ`` (the
    logistic Hessian is at most ‖a‖²/4) and ρ-strongly convex with ``ρ = λ``.

    >>> loss = RegularizedLogisticLoss(regularization=0.1, radius=5.0)
    >>> loss.lipschitz, loss.smoothness, loss.strong_convexity
    (1.5, 0.35, 0.1)
    >>> loss.gradient(np.zeros(2), (np.array([1.0, 0.0]), 1.0))
    array([-0.5,  0. ])
    """

    regularization: float
    radius: float
    feature_bound: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "regularization",
                           check_real("regularization", self.regularization, "(0, inf)"))
        object.__setattr__(self, "radius", check_real("radius", self.radius, "(0, inf)"))
        object.__setattr__(self, "feature_bound",
                           check_real("feature_bound", self.feature_bound, "(0, inf)"))

    @property
    def lipschitz(self) -> float:
        return self.feature_bound + self.regularization * self.radius

    @property
    def smoothness(self) -> float:
        return self.feature_bound ** 2 / 4 + self.regularization

    @property
    def strong_convexity(self) -> float:
        return self.regularization

    @property
    def constraint(self) -> EuclideanBall:
        return EuclideanBall(self.radius)

    def _record(self, z) -> tuple[np.ndarray, float]:
        try:
            a, b = z
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError("data", "records (features, label)", z) from exc
        a = np.asarray(a, dtype=float)
        b = float(b)
        if b not in (-1.0, 1.0):
            raise InvalidParameterError("data", "labels in {-1, +1}", b)
        if float(np.linalg.norm(a)) > self.feature_bound * (1 + 1e-12):
            raise InvalidParameterError(
                "data", f"features with norm at most feature_bound = {self.feature_bound!r}",
                float(np.linalg.norm(a)))
        return a, b

    def gradient(self, x: np.ndarray, z: Any) -> np.ndarray:
        """∇_x ℓ(x, (a, b)) = −b a σ(−b⟨a, x⟩) + λx."""
        a, b = self._record(z)
        return -b * a * special.expit(-b * float(a @ x)) + self.regularization * x

    def loss(self, x: Any, features: Any, labels: Any) -> float:
        """Average loss over a dataset given as a feature matrix and a label vector."""
        x = np.asarray(x, dtype=float)
        a = np.asarray(features, dtype=float)
        b = np.asarray(labels, dtype=float)
        margins = b * (a @ x)
        return float(np.mean(np.logaddexp(0.0, -margins))
                     + self.regularization / 2 * float(x @ x))

    def minimize(self, features: Any, labels: Any) -> np.ndarray:
        """The minimiser of the average loss over the ball (non-private; a reference point)."""
        from scipy import optimize  # deferred: scipy.optimize is slow to import

        a = np.asarray(features, dtype=float)
        b = np.asarray(labels, dtype=float)
        lam, r = self.regularization, self.radius

        def fun(x):
            m = b * (a @ x)
            val = float(np.mean(np.logaddexp(0.0, -m)) + lam / 2 * float(x @ x))
            grad = -(a * (b * special.expit(-m))[:, None]).mean(axis=0) + lam * x
            return val, grad

        x0 = np.zeros(a.shape[1])
        res = optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
                                options={"gtol": 1e-12, "maxiter": 10_000})
        x = res.x
        if np.linalg.norm(x) > r:  # the constrained optimum lies on the sphere
            cons = {"type": "ineq", "fun": lambda v: r * r - float(v @ v),
                    "jac": lambda v: -2 * v}
            res = optimize.minimize(fun, x * (r / np.linalg.norm(x)), jac=True,
                                    method="SLSQP", constraints=[cons],
                                    options={"ftol": 1e-14, "maxiter": 1000})
            x = res.x
            norm = float(np.linalg.norm(x))
            if norm > r:
                x = x * (r / norm)
        return x

    def __repr__(self) -> str:
        return (f"RegularizedLogisticLoss(regularization={self.regularization!r}, "
                f"radius={self.radius!r}, feature_bound={self.feature_bound!r})")
