"""Zhao & Liu (2023), *MUltistage Sampling Technique (MUST)*: every table and figure.

Artifacts computed by the library alone:

=================  ============================================================================
artifact           what
=================  ============================================================================
must-table1        Table 1, the three 2-stage MUST schemes: multiplicity law of a record against
                   Monte Carlo, and MUST.WO ≡ WR (Corollary 6)
must-table2        Table 2, η and δ' of every scheme: the printed formulas against privamp
must-table3        Table 3, (ε', δ') of Laplace/Gaussian ∘ WOR, WR, MUST.OW, MUST.WW
must-table4        Table 4, σ and δ' of utility experiment 1 (the bootstrap's calibration)
must-table6        Table 6, σ and δ' columns (utility experiment 2's calibration)
must-table8        Table 8, σ·m and (δ_{c,L}, δ_{c,U}) at ε_c = 2 (experiment 3's accounting)
must-table9        Table 9, number of distinct records in a subsample (Monte Carlo)
must-table10       Table 10, time to draw a subsample relative to WOR
must-fig3          Figure 3, the four quadrants of an aligned privacy profile
must-fig4          Figure 4, aligned privacy profiles ε'/ε against δ' − δ
must-fig5          Figure 5, contours of η and δ' − δ over (b, m)
must-figS1         Figure S1, the same as 3-D surfaces
must-figS2         Figure S2, Fourier-accountant bounds on δ(1) over k compositions
must-figS3         Figure S3, ε' against ε and δ' against δ
=================  ============================================================================

The utility experiments of §4.2 (the DP subsampling bootstrap, DP-SGD linear and logistic
regression), each run at the paper's noise and at noise valid for the stated ε':

===================  ==========================================================================
artifact             what
===================  ==========================================================================
must-table5          Table 5, DP bootstrap of μ and τ²: mean (SD) over simulated data sets
must-table6-rmse     Table 6, RMSE columns: DP-SGD linear regression, mean (SD) RMSE of ŷ
must-table7          Table 7, bias and RMSE of the DP-SGD linear-regression coefficients
must-table8-metrics  Table 8, prediction columns: DP-SGD logistic regression on Adult (the
                     packaged data, or ``--data``)
must-fig6            Figure 6, training loss of DP-SGD linear regression on one data set
must-figS4           Figure S4, training loss of DP-SGD logistic regression on Adult (the
                     packaged data, or ``--data``)
===================  ==========================================================================

Modules, by concept:

* :mod:`~privamp.reproduce.must2023.profiles` — amplified and aligned privacy profiles (Table 3,
  Figures 3, 4, S3);
* :mod:`~privamp.reproduce.must2023.schemes` — the schemes, η and δ' (Tables 1, 2, Figures 5,
  S1);
* :mod:`~privamp.reproduce.must2023.calibration` — the privacy columns of the utility
  experiments and the Fourier accountant (Tables 4, 6, 8, Figure S2);
* :mod:`~privamp.reproduce.must2023.efficiency` — distinct records and sampling time (Tables 9,
  10);
* :mod:`~privamp.reproduce.must2023.utility` — the utility experiments' settings and the
  paper's noise; :mod:`~privamp.reproduce.must2023.bootstrap` (Table 5),
  :mod:`~privamp.reproduce.must2023.linear` (Tables 6, 7, Figure 6) and
  :mod:`~privamp.reproduce.must2023.logistic` (Table 8, Figure S4) run them;
* :mod:`~privamp.reproduce.must2023.experiments` — the experiments themselves, done honestly
  (``privamp experiment``), which those artifacts call.

Everything is computed by the library: amplified profiles (:func:`~privamp.amplification.
subsampling.amplify`), aligned profiles (:mod:`~privamp.amplification.tightness`), the samplers
(:mod:`~privamp.sampling`), the Fourier accountant and the mixture PLDs
(:mod:`~privamp.pld.fourier`, :mod:`~privamp.pld.mixture`), the certified PLD accountant
(:mod:`~privamp.accountant`) and privamp's applications (:mod:`~privamp.applications`). Printed
values come from :mod:`~privamp.reproduce.paper_values`.
"""

# importing the modules registers their artifacts (privamp.reproduce imports this package)
from . import bootstrap, calibration, efficiency, linear, logistic, profiles, schemes  # noqa: F401

__all__: list[str] = []
