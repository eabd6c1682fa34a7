"""
Compare samplers at equal noise
===============================

The same DP-SGD run — n = 10,000 records, batches of about 100, noise multiplier z = 1, clipping
norm C = 1, 1,000 steps (ten epochs), δ = 1e-5 — accounted for seven ways of drawing the
batches. Only the sampler changes; the noise added to each batch's clipped gradient sum is the
same N(0, (zC)²) everywhere.

A few terms first:

* **(ε, δ)-differential privacy**: for any two *neighbouring* datasets D, D' and any set of
  outputs E, P[M(D) ∈ E] ≤ e^ε P[M(D') ∈ E] + δ. Smaller ε is stronger privacy; δ is the small
  probability allowed to escape the e^ε bound (here 1e-5, below 1/n).
* **Neighbouring relation**: what "neighbouring" means. Under *add/remove* D' is D with one
  record added or removed; under *substitution* one record is replaced by another.
* **Sensitivity**: how far one neighbour change can move the statistic the noise protects.
  For a sum of gradients clipped to norm C it is C under add/remove and 2C under substitution
  (one record leaves, another arrives).
* **Bracket**: privamp does not return one number but a certified interval [lower, upper] that
  contains the exact ε of the accounted bound; the upper end is the one to report.
"""

# %%
# The samplers and the relation each one is accounted under
# ----------------------------------------------------------
# The first four accept add/remove with sensitivity C; the subsampling schemes of Balle, Barthe
# and Gaboardi (2018) without replacement (WOR) and with replacement (WR), and MUST.OW (Zhao &
# Liu 2023: b records without replacement, then m draws with replacement from them) are stated
# under substitution, where the same noise is a Gaussian mechanism of sensitivity 2C.
#
# * **Poisson** (rate q = m/n): each record joins each batch independently with probability q;
# * **random allocation** (``RandomAllocation(t)``, balls-in-bins): every record is put in
#   exactly one of the t = n/m batches of an epoch (Feldman & Shenfeld 2025);
# * **truncated Poisson** (``TruncatedPoisson``): Poisson, cut to at most B records so that the
#   batch has a fixed shape (B = m + 4√m leaves room for four standard deviations);
# * **shuffling** (``Shuffle``): one random permutation per epoch cut into n/m batches — the
#   usual ``DataLoader(shuffle=True)``;
# * **WOR**, **WR**, **MUST.OW**: one independent subsample per step.
import math

from privamp import (
    Accountant,
    GaussianMechanism,
    MustOW,
    Poisson,
    RandomAllocation,
    Shuffle,
    TruncatedPoisson,
    WithoutReplacement,
    WithReplacement,
    clipped_sum_sensitivity,
)
from privamp.display import lower, upper

n, m, z, clip, delta, steps = 10_000, 100, 1.0, 1.0, 1e-5, 1000
B = m + 4 * math.isqrt(m)  # truncation of truncated Poisson: 140


def mechanism(relation):
    """The Gaussian noise N(0, (zC)²) on the clipped sum, as a mechanism under ``relation``."""
    sensitivity = clipped_sum_sensitivity(clip, relation)
    return GaussianMechanism(z * clip, sensitivity=sensitivity, relation=relation)


samplers = {
    "Poisson": (Poisson(m / n), "add-remove"),
    "random allocation": (RandomAllocation(t=n // m), "add-remove"),
    f"truncated Poisson (B={B})": (TruncatedPoisson(n=n, rate=m / n, max_batch=B), "add-remove"),
    "shuffling": (Shuffle(n=n, m=m), "add-remove"),
    "WOR": (WithoutReplacement(n, m), "substitute"),
    "WR": (WithReplacement(n, m), "substitute"),
    "MUST.OW (b=5000)": (MustOW(n, 5000, m), "substitute"),
}

# %%
# One ledger per sampler
# ----------------------
# Each ``Accountant`` holds the 1,000 steps; ``epsilon(δ)`` returns the bracket, printed rounded
# outward (the lower end down, the upper end up). ``explain()`` names the theorem each line used.
brackets = {}
print(f"{'sampler':28s} {'relation':11s} {'ε lower':>9s} {'ε upper':>9s}")
for name, (scheme, relation) in samplers.items():
    acc = Accountant().add(mechanism(relation), steps, scheme=scheme)
    b = acc.epsilon(delta)
    brackets[name] = b
    print(f"{name:28s} {relation:11s} {lower(b.lower):>9s} {upper(b.upper):>9s}")

# %%
# Reading the table:
#
# * **Random allocation** is at least as good as Poisson at the same batch size, and it uses
#   every record once per epoch.
# * **Truncated Poisson** costs a little more than Poisson: a batch that would exceed B is cut,
#   and then the record's presence behaves like a substitution.
# * **Shuffling** has no known amplification: the certified upper end is the un-amplified
#   composition (each record is in one batch per epoch, so 10 Gaussian steps of noise
#   multiplier z), and the lower end is the best known *lower* bound (Chua et al. 2024). The true
#   ε of shuffled batches is somewhere in that wide bracket — certainly not the Poisson figure
#   that Poisson accounting at rate m/n would report.
# * **WOR, WR and MUST.OW** are stated under substitution (sensitivity 2C): they are several times
#   larger. WR and MUST.OW can draw a record more than once in a batch, which costs more still.
#
# The explanation of one line, and the theorem behind it:
print(Accountant().add(mechanism("add-remove"), steps, scheme=Shuffle(n=n, m=m)).explain())

# %%
# Samplers that tie steps together are accounted by the PLD backend only; the RDP backend
# refuses them with the reason rather than returning a wrong number:
from privamp import UnsupportedCombinationError

try:
    Accountant("rdp").add(mechanism("add-remove"), steps, scheme=Shuffle(n=n, m=m)).epsilon(delta)
except UnsupportedCombinationError as err:
    print(err)

# %%
# The brackets side by side
# -------------------------
# Each bar runs from 0 to the certified upper end; the dark segment marks the bracket
# [lower, upper] (visible only where it is wide: shuffling).
import matplotlib.pyplot as plt

names = list(brackets)
ups = [brackets[k].upper for k in names]
lows = [brackets[k].lower for k in names]
colors = ["C0" if samplers[k][1] == "add-remove" else "C1" for k in names]
fig, ax = plt.subplots(figsize=(8, 4.2))
ax.barh(names, ups, color=colors, alpha=0.6)
ax.hlines(names, lows, ups, colors="black", linewidth=4, label="certified bracket [lower, upper]")
for y, u in enumerate(ups):
    ax.text(u, y, f" {upper(u, 4)}", va="center", fontsize=8)
ax.invert_yaxis()
ax.set_xlabel("ε at δ = 1e-5 (dimensionless)")
ax.set_xlim(0, max(ups) * 1.15)
ax.set_title(f"Gaussian z = {z:g}, C = {clip:g}, n = {n:,}, batch {m}, T = {steps} steps, "
             f"δ = {delta:g}", fontsize=10)
from matplotlib.patches import Patch

handles = [Patch(color="C0", alpha=0.6, label="add/remove, sensitivity C"),
           Patch(color="C1", alpha=0.6, label="substitution, sensitivity 2C"),
           ax.get_legend_handles_labels()[0][0]]
ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
ax.grid(axis="x", alpha=0.3)
fig.tight_layout()
plt.show()

# %%
# Which one to use
# ----------------
# If the training code can draw batches by random allocation or Poisson, do so and account that
# sampler; truncated Poisson gives fixed shapes for JAX/XLA at almost Poisson's ε. If it
# shuffles, report the shuffling bracket's upper end, not a Poisson figure. The same comparison
# is available on the command line, e.g. ``privamp epsilon --mechanism gaussian --sigma 1
# --sampling shuffle --n 10000 --m 100 --steps 1000 --delta 1e-5``.
