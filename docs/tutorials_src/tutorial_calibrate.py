"""
Calibrate noise, rate or steps
==============================

Accounting answers "what ε does this run give?". Calibration answers the reverse question:
*which* noise level, sampling rate or number of steps gives a target ε at a given δ?

Terms used below:

* **(ε, δ)-differential privacy**: for neighbouring datasets D, D' (here: one record added or
  removed — the *add/remove relation*) and every set of outputs E,
  P[M(D) ∈ E] ≤ e^ε P[M(D') ∈ E] + δ;
* **sensitivity**: how far one record can move the statistic the noise protects (1 here: a
  sum of gradients clipped to norm C = 1);
* **σ** (or the noise multiplier z = σ / C): the standard deviation of the Gaussian noise;
* **bracket**: privamp's certified interval [lower, upper] around the exact ε.

Every calibration in :mod:`privamp.calibrate` is a monotone search whose feasibility test is the
*certified upper end* of the accountant's bracket, and it returns the feasible end of its search:
the returned value's certified ε is at most the target. This tutorial checks that claim by typing
each returned value back into an :class:`~privamp.Accountant`.
"""

# %%
# The setting
# -----------
# DP-SGD with Poisson sampling at rate q = 0.01 (each record joins each batch independently with
# probability q), 1,000 steps, a target of ε = 1 at δ = 1e-5.
import time

from privamp import (
    Accountant,
    GaussianMechanism,
    Poisson,
    calibrate_rate,
    calibrate_sigma,
    calibrate_steps,
)
from privamp.display import lower, upper

target, delta, steps, q = 1.0, 1e-5, 1000, 0.01

# %%
# Noise: ``calibrate_sigma``
# --------------------------
# The smallest σ, to a relative tolerance ``rtol`` (1e-5 by default): σ × (1 − rtol) was found
# infeasible. ``c.epsilon`` is the certified upper end at the returned σ, ``c.evaluations`` how
# many accountant evaluations the search needed.
t0 = time.perf_counter()
c = calibrate_sigma(target, delta, steps=steps, scheme=Poisson(q))
print(f"σ = {c.value!r}  (certified ε ≤ {upper(c.epsilon)}, bracket lower end "
      f"{lower(c.epsilon_lower)}; {c.evaluations} evaluations, "
      f"{time.perf_counter() - t0:.2f} s)")

# %%
# Typed back into an accountant, the returned σ meets the target. When you *print* or *store*
# σ with fewer digits, round it **up** (more noise is safer): ``privamp.display.upper`` rounds
# up, and the rounded σ meets the target too.
def eps_at_sigma(sigma):
    return Accountant().add(GaussianMechanism(sigma), steps, scheme=Poisson(q)).epsilon(delta)


sigma_printed = float(upper(c.value, 4))
for label, sigma in [("returned", c.value), ("printed, rounded up", sigma_printed)]:
    b = eps_at_sigma(sigma)
    print(f"{label:20s} σ = {sigma!r:22s} ε ∈ [{lower(b.lower)}, {upper(b.upper)}]  "
          f"upper ≤ target: {b.upper <= target}")

# %%
# Rounding to nearest, or down, can land on the wrong side. One relative step of ``rtol`` below
# the returned σ is already infeasible:
b = eps_at_sigma(c.value * (1 - 1e-5))
print(f"σ × (1 − 1e-5): certified upper ε = {upper(b.upper, 8)} > target: {b.upper > target}")

# %%
# The sampling rate: ``calibrate_rate``
# -------------------------------------
# With the noise fixed (σ = 1), the largest Poisson rate. A larger rate means more privacy loss,
# so the safe direction to round is **down** (``privamp.display.lower``).
mech = GaussianMechanism(1.0)
r = calibrate_rate(target, delta, steps=steps, mechanism=mech)
rate_printed = float(lower(r.value, 4))
for label, rate in [("returned", r.value), ("printed, rounded down", rate_printed)]:
    b = Accountant().add(mech, steps, scheme=Poisson(rate)).epsilon(delta)
    print(f"{label:22s} q = {rate!r:22s} certified upper ε = {upper(b.upper)}  "
          f"≤ target: {b.upper <= target}")

# %%
# The number of steps: ``calibrate_steps``
# ----------------------------------------
# With σ = 1 and q = 0.01, how many steps fit in the budget? The answer is an integer T such that
# T steps are feasible and T + 1 are not — no rounding needed.
s = calibrate_steps(target, delta, mechanism=mech, scheme=Poisson(q))
for t in (s.value, s.value + 1):
    b = Accountant().add(mech, int(t), scheme=Poisson(q)).epsilon(delta)
    print(f"T = {int(t):5d}: certified upper ε = {upper(b.upper, 8)}  ≤ target: {b.upper <= target}")

# %%
# A MUST sample size: ``calibrate_must``
# --------------------------------------
# MUST schemes (Zhao & Liu 2023) draw b of the n records, then m from those b. Under the
# *substitution* relation (one record replaced by another) the base mechanism is stated with the
# sensitivity it has there. ``calibrate_must`` finds the largest m given b (or b given m).
from privamp import MustOW, calibrate_must

g = GaussianMechanism(1.0, relation="substitute")
cm = calibrate_must(target, delta, steps=20, mechanism=g, n=600, kind="ow", b=150)
for m in (int(cm.value), int(cm.value) + 1):
    b = Accountant().add(g, 20, scheme=MustOW(600, 150, m)).epsilon(delta)
    print(f"MUST.OW(600, 150, m = {m}), 20 steps: certified upper ε = {upper(b.upper)}  "
          f"≤ target: {b.upper <= target}")

# %%
# What the calibration did, in a figure
# -------------------------------------
# The certified upper ε as σ varies, the target, and the calibrated σ: the curve crosses the
# target exactly where the search stopped.
import matplotlib.pyplot as plt
import numpy as np

sigmas = np.linspace(0.75 * c.value, 1.4 * c.value, 9)
eps = [eps_at_sigma(s_).upper for s_ in sigmas]
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(sigmas, eps, marker="o", label="certified upper ε")
ax.axhline(target, color="grey", linestyle="--", label=f"target ε = {target:g}")
ax.axvline(c.value, color="C3", linestyle=":", label=f"calibrated σ = {upper(c.value, 5)}")
ax.set_xlabel("noise σ (in units of the sensitivity C = 1)")
ax.set_ylabel("ε at δ = 1e-5 (dimensionless)")
ax.set_title(f"Gaussian, Poisson q = {q:g}, T = {steps}, δ = {delta:g}, add/remove")
ax.legend(loc="upper right", frameon=True)
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()

# %%
# The command line does the same: ``privamp calibrate --mechanism gaussian --sampling poisson
# --rate 0.01 --steps 1000 --delta 1e-5 --target-epsilon 1`` prints the calibrated σ with its certified ε.
