"""
The right ε for my DP-SGD sampler
=================================

DP-SGD's ε depends on *how the batches are drawn*, not only on the batch size. This tutorial
accounts the same training run — n = 10,000 records, batches of 100, noise multiplier z = 1,
clipping norm C = 1, δ = 1e-5 — for three samplers:

* **Poisson** at rate 100/10,000 (each record in each batch independently): add/remove
  relation, the clipped sum has sensitivity C;
* **without replacement** (WOR: a fixed-size batch of 100 distinct records): substitution,
  sensitivity 2C;
* **with replacement** (WR: 100 draws, a record may repeat): substitution, sensitivity 2C.
"""

# %%
# The mechanism under each relation
# ---------------------------------
# The noise is N(0, (zC)²) on the clipped sum. Under substitution one record leaves and another
# arrives, so the sum moves by up to 2C: the same noise is a Gaussian mechanism of sensitivity
# 2C (:func:`privamp.clipped_sum_sensitivity` gives C or 2C).
from privamp import (
    Accountant,
    GaussianMechanism,
    Poisson,
    WithoutReplacement,
    WithReplacement,
    clipped_sum_sensitivity,
)
from privamp.display import lower, upper

n, m, z, clip, delta = 10_000, 100, 1.0, 1.0, 1e-5


def mechanism(relation):
    sensitivity = clipped_sum_sensitivity(clip, relation)
    return GaussianMechanism(z * clip, sensitivity=sensitivity, relation=relation)


samplers = {
    "Poisson (add/remove, C)": (Poisson(m / n), "add-remove"),
    "WOR (substitution, 2C)": (WithoutReplacement(n, m), "substitute"),
    "WR (substitution, 2C)": (WithReplacement(n, m), "substitute"),
}

# %%
# ε after 300 steps
# -----------------
# Each answer is a certified bracket: the exact ε of the accounted composition lies between the
# two ends, printed rounded outward (the lower end down, the upper end up).
steps = 300
for name, (scheme, relation) in samplers.items():
    b = Accountant().add(mechanism(relation), steps, scheme=scheme).epsilon(delta)
    print(f"{name:26s} ε ∈ [{lower(b.lower)}, {upper(b.upper)}]")

# %%
# Opacus would report the Poisson figure for every loader (it assumes Poisson sampling at
# ``1/len(loader)`` under add/remove). For fixed-size batches the honest figure is the WOR or WR
# one — about eight times larger here. privamp's Opacus integration
# (:class:`privamp.integrations.opacus.PrivampAccountant`) accounts the sampler actually used.
#
# ε as training goes on
# ---------------------
# One ledger per sampler, queried after every 100 steps. ``horizon=`` plans the grids for the
# whole run, so each query reuses the previous ones' work.
import matplotlib.pyplot as plt

checkpoints = [100, 200, 300, 400, 500]
fig, ax = plt.subplots(figsize=(7, 4))
for name, (scheme, relation) in samplers.items():
    acc = Accountant(horizon=checkpoints[-1])
    eps = []
    for t in checkpoints:
        acc.add(mechanism(relation), 100, scheme=scheme)
        eps.append(acc.epsilon(delta).upper)
    ax.plot(checkpoints, eps, marker="o", label=name)
ax.set_xlabel("steps")
ax.set_ylabel("ε (certified upper end)")
ax.set_title(f"n = {n:,}, batch {m}, z = {z:g}, δ = {delta:g}")
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
