"""Amplification by post-processing with uniformly mixing Markov kernels.

Balle, Barthe, Gaboardi, Geumlek (2019), *Privacy Amplification by Mixing and Diffusion
Mechanisms*, §3 (catalogue §1.2–1.3). A Markov kernel K maps each output x of a mechanism M to a
distribution K(x); the post-processed mechanism K∘M releases a sample of K(M(D)). Plain
post-processing only says K∘M is as private as M. Definition 1 lists four *uniform mixing
conditions* (``γ ∈ [0, 1]``, suprema over **all** pairs of inputs, not only neighbouring ones):

1. γ-Dobrushin: ``sup_{x,x'} TV(K(x), K(x')) ≤ γ``;
2. (γ, ε)-Dobrushin: ``sup_{x,x'} D_{e^ε}(K(x) ‖ K(x')) ≤ γ`` (hockey-stick divergence);
3. γ-Doeblin: ``K(x) ≥ (1 − γ) ω`` for all x, for some distribution ω;
4. γ-ultra-mixing: ``K(x) ≪ K(x')`` and ``dK(x)/dK(x') ≥ 1 − γ`` for all x, x'.

Theorem 1 turns an (ε, δ)-DP guarantee of M into one for K∘M:

1. γ-Dobrushin: ``(ε, γδ)``;
2. (γ, ε̃)-Dobrushin with ``ε̃ = log(1 + (e^ε − 1)/δ)`` (``ε̃ = ∞`` when δ = 0, with
   ``D_∞(μ‖ν) = μ(supp μ \\ supp ν)``): ``(ε, γδ)``;
3. γ-Doeblin: ``(ε', γ(1 − e^{ε'−ε}(1 − δ)))`` with ``ε' = log(1 + γ(e^ε − 1))``;
4. γ-ultra-mixing: ``(ε', γ δ e^{ε'−ε})`` with the same ε'.

Figure 1 (implications): ultra-mixing ⇒ Doeblin ⇒ Dobrushin ⇒ (γ, ε)-Dobrushin for every ε ≥ 0,
all with the same γ (:func:`implies`). Figure 2 (local DP): γ-Dobrushin ⇔ (0, γ)-LDP,
(γ, ε)-Dobrushin ⇔ (ε, γ)-LDP, γ-Doeblin ⇔ the blanket condition, γ-ultra-mixing ⇔
(log 1/(1 − γ), 0)-LDP (:meth:`MixingCondition.local_dp`). The paper's text calls the first of
these "Figure 2" and the second "Table 2"; the captions, followed here, are Figure 1 and Figure 2.

Finite kernels (catalogue §1.3, derived from Definition 1). For a row-stochastic matrix
``K[x, y]`` (rows = inputs) :class:`MarkovKernel` computes the best constants:

* Dobrushin ``γ_D = max_{x,x'} ½ Σ_y |K[x,y] − K[x',y]|``;
* (γ, ε)-Dobrushin curve ``γ_ε = max_{x,x'} Σ_y [K[x,y] − e^ε K[x',y]]_+`` (``γ_0 = γ_D``);
* Doeblin ``γ = 1 − Σ_y min_x K[x,y]`` with the optimal minorising distribution ω ∝ column minima;
* ultra-mixing ``1 − γ_U = min_y min_x K[x,y] / max_x K[x,y]`` over non-zero columns, when every
  column is either all zero or all positive. Otherwise the absolute-continuity part of
  Definition 1(4) fails for every γ: privamp reports ``γ_U = 1`` (catalogue convention, for
  which Theorem 1(4) would be plain post-processing), :attr:`MarkovKernel.absolutely_continuous`
  is false, and ultra-mixing is not among the conditions the kernel satisfies.

They satisfy ``γ_ε ≤ γ_D ≤ γ_Doeblin ≤ γ_U`` (the lattice of Figure 1, checked in the tests).

Safety. Every coefficient is rounded *up* (a larger γ is a weaker claim) and every amplified
(ε', δ') is rounded up. Profiles returned by :meth:`MixingCondition.amplify_profile` never exceed
the profile of M itself (plain post-processing) and are upper bounds on the true profile of K∘M.
Kernel rows must sum to 1 within a stated tolerance; they are then divided by their sums, so the
coefficients are those of an exactly stochastic kernel.
"""

# the package exports its modules' public names (their ``__all__``)
from . import conditions, kernel
from .conditions import *  # noqa: F403
from .kernel import *  # noqa: F403

__all__ = sorted([*conditions.__all__, *kernel.__all__])
