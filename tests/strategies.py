"""Hypothesis strategies producing valid instances of every registered mechanism.

``MECHANISMS`` must cover :data:`privamp.mechanisms.REGISTRY` (a test enforces it), so a new
mechanism is automatically put through every registry-driven property test.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from privamp.amplification.diffusion import BrownianMotionMechanism, OrnsteinUhlenbeckMechanism
from privamp.mechanisms import (
    ApproxDPMechanism,
    DiscretePairMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedMembershipMechanism,
    RandomizedResponse,
)
from privamp.relations import NeighbouringRelation

relations = st.sampled_from(list(NeighbouringRelation))


@st.composite
def pmfs(draw, size=None, min_size=2, max_size=6, allow_zeros=True):
    """A probability vector (optionally with exact zeros)."""
    n = draw(st.integers(min_size, max_size)) if size is None else size
    weights = draw(st.lists(st.floats(0.0 if allow_zeros else 1e-3, 1.0), min_size=n,
                            max_size=n))
    w = np.asarray(weights, dtype=float)
    if w.sum() == 0:
        w[0] = 1.0
    return w / w.sum()


@st.composite
def pmf_pairs(draw, allow_zeros=True):
    n = draw(st.integers(2, 6))
    return draw(pmfs(size=n, allow_zeros=allow_zeros)), draw(pmfs(size=n,
                                                                  allow_zeros=allow_zeros))


@st.composite
def discrete_pairs(draw):
    p, q = draw(pmf_pairs())
    return DiscretePairMechanism(p, q, relation=draw(relations))


MECHANISMS = {
    "gaussian": st.builds(GaussianMechanism, sigma=st.floats(0.05, 50.0),
                          sensitivity=st.floats(0.01, 5.0), relation=relations),
    "laplace": st.builds(LaplaceMechanism, scale=st.floats(0.05, 50.0),
                         sensitivity=st.floats(0.01, 5.0), relation=relations),
    "randomized-response": st.builds(RandomizedResponse, p=st.floats(0.0, 1.0),
                                     relation=relations),
    "randomized-membership": st.builds(RandomizedMembershipMechanism,
                                       target=st.integers(0, 5), p=st.floats(0.0, 1.0),
                                       relation=relations),
    "approx-dp": st.builds(ApproxDPMechanism, epsilon=st.floats(0.0, 5.0),
                           delta=st.floats(0.0, 0.5), relation=relations),
    "discrete-pair": discrete_pairs(),
    # t ↦ σ = sqrt(2t) in [1e-3, 45] (θ_G = Δ/σ from 2e-4 to 5e3), and OU parameters from slow
    # to fast mean reversion: θt up to 500, where e^{−θt}Δ underflows far below the noise
    "brownian-motion": st.builds(BrownianMotionMechanism, t=st.floats(5e-7, 1e3),
                                 sensitivity=st.floats(0.01, 5.0), relation=relations),
    "ornstein-uhlenbeck": st.builds(OrnsteinUhlenbeckMechanism, theta=st.floats(1e-3, 50.0),
                                    rho=st.floats(0.05, 20.0), t=st.floats(1e-6, 10.0),
                                    sensitivity=st.floats(0.01, 5.0), relation=relations),
}

any_mechanism = st.one_of(*MECHANISMS.values())
