"""
Use privamp from Opacus and dp_accounting
=========================================

Much DP training code already talks to an accountant: Google's ``dp_accounting`` (TensorFlow
Privacy, jax_privacy) or PyTorch's Opacus. privamp plugs into both, so that the ε they report is
privamp's certified one — and is computed for the sampler the batches were really drawn with.

Terms used below:

* **(ε, δ)-DP**: for neighbouring datasets D, D' and every set of outputs E,
  P[M(D) ∈ E] ≤ e^ε P[M(D') ∈ E] + δ;
* **relation**: what "neighbouring" means — *add/remove* one record (``ADD_OR_REMOVE_ONE`` in
  dp_accounting) or *substitute* one (``REPLACE_ONE``);
* **sensitivity**: how far one neighbour change moves the clipped gradient sum: C under
  add/remove, 2C under substitution (one record's gradient leaves, another's arrives);
* **noise multiplier** z: the Gaussian noise's standard deviation σ in units of the clipping
  norm C;
* **bracket**: privamp's certified interval [lower, upper] around the exact ε of the accounted
  bound; the upper end is what the integrations report.

The run accounted throughout: n = 10,000 records, batches of 100, z = 1, 1,000 steps, δ = 1e-5.
"""

# %%
# dp_accounting: a ``DpEvent`` accounted by privamp
# -------------------------------------------------
# dp_accounting describes a run as a tree of events. ``from_dp_event`` turns it into a privamp
# :class:`~privamp.Accountant`; here DP-SGD with Poisson batches (each record in each batch
# independently with probability q = m/n) under add/remove, next to dp_accounting's own PLD and
# RDP accountants.
import warnings

from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from privamp.display import lower, upper
from privamp.integrations.dp_accounting import PrivampAccountant, from_dp_event

n, m, z, steps, delta = 10_000, 100, 1.0, 1000, 1e-5
replace = NeighboringRelation.REPLACE_ONE

poisson = dp_event.SelfComposedDpEvent(
    dp_event.PoissonSampledDpEvent(m / n, dp_event.GaussianDpEvent(z)), steps)
acc = from_dp_event(poisson)
b = acc.epsilon(delta)
print(acc.explain().splitlines()[1])
results = {"Poisson, add/remove": {
    "privamp": b.upper,
    "dp_accounting PLD": PLDAccountant().compose(poisson).get_epsilon(delta),
    "dp_accounting RDP": RdpAccountant().compose(poisson).get_epsilon(delta)}}
print(f"privamp ε ∈ [{lower(b.lower)}, {upper(b.upper)}]; dp_accounting PLD "
      f"{results['Poisson, add/remove']['dp_accounting PLD']:.6f}, RDP "
      f"{results['Poisson, add/remove']['dp_accounting RDP']:.6f}")

# %%
# privamp's bracket contains dp_accounting's PLD figure (which is an estimate with its own
# discretisation error, not a certified bound); RDP is a looser upper bound.
#
# Fixed-size batches: the replace-one sensitivity
# ------------------------------------------------
# Batches of exactly m distinct records (sampling without replacement, WOR) are accounted under
# substitution (BBG 2018, Theorem 9). dp_accounting's two accountants read a ``GaussianDpEvent``
# differently under ``REPLACE_ONE``: its PLD accountant takes the sensitivity to be 2 (in units
# of C: right for a clipped sum), its RDP accountant 1. privamp does not guess: under
# substitution it needs ``replace_one_sensitivity``, and refuses without it.
from privamp import InvalidParameterError

wor = dp_event.SelfComposedDpEvent(
    dp_event.SampledWithoutReplacementDpEvent(n, m, dp_event.GaussianDpEvent(z)), steps)
try:
    from_dp_event(wor, neighboring_relation=replace)
except InvalidParameterError as err:
    print(f"{type(err).__name__}: {err}")

# %%
# With ``replace_one_sensitivity=2.0`` (a sum clipped to C) privamp composes the privacy loss
# distribution of the WOR-subsampled Gaussian. dp_accounting's PLD accountant has no
# WOR accounting; its RDP accountant (Wang, Balle & Kasiviswanathan 2019) assumes sensitivity 1,
# so the same mechanism is given to it as noise multiplier z/2.
b_wor = from_dp_event(wor, neighboring_relation=replace, replace_one_sensitivity=2.0).epsilon(delta)
print("dp_accounting PLD supports WOR:", PLDAccountant(replace).supports(wor))
wor_half = dp_event.SelfComposedDpEvent(
    dp_event.SampledWithoutReplacementDpEvent(n, m, dp_event.GaussianDpEvent(z / 2)), steps)
rdp_wor = RdpAccountant(neighboring_relation=replace).compose(wor_half).get_epsilon(delta)
results["WOR, replace-one (2C)"] = {"privamp": b_wor.upper, "dp_accounting RDP": rdp_wor}
print(f"WOR: privamp ε ∈ [{lower(b_wor.lower)}, {upper(b_wor.upper)}]; "
      f"dp_accounting RDP (z/2) {rdp_wor:.6f}")

# %%
# ``PrivampAccountant`` is a dp_accounting ``PrivacyAccountant``: code written for dp_accounting
# (``compose``, ``get_epsilon``, ``calibrate_dp_mechanism``) works unchanged, and
# ``get_epsilon`` is the certified upper end.
pa = PrivampAccountant(replace, replace_one_sensitivity=2.0)
pa.compose(wor)
print(f"PrivampAccountant.get_epsilon = {pa.get_epsilon(delta)!r}; "
      f"bracket {pa.epsilon_bracket(delta)}")

# %%
# Opacus: an accountant bound to the sampler
# ------------------------------------------
# Opacus tells its accountant only ``sample_rate = 1/len(data_loader)`` and assumes Poisson
# sampling under add/remove — whatever the loader does. privamp's Opacus accountant is *bound* to
# the scheme (or to the :class:`~privamp.applications.torch_sampler.TorchBatchSampler`) that
# draws the batches, and picks the relation from it (substitution for WOR). Here we step it as
# Opacus's optimizer hook would, once per optimizer step:
from opacus.accountants import RDPAccountant as OpacusRDP

from privamp import WithoutReplacement
from privamp.integrations.opacus import PrivampAccountant as OpacusPrivamp

ours = OpacusPrivamp(WithoutReplacement(n, m))
for _ in range(steps):
    ours.step(noise_multiplier=z, sample_rate=m / n)
theirs = OpacusRDP()
theirs.history = list(ours.history)   # the same (z, rate, steps) history
print("history:", ours.history, "relation:", ours.relation.value)
print(f"Opacus RDP (Poisson, add/remove assumed): ε = {theirs.get_epsilon(delta):.4f}")
print(f"privamp (WOR, substitution, 2C):          ε = {upper(ours.get_epsilon(delta))}")

# %%
# The Opacus figure is several times too small for these batches: it accounts a different
# sampler. privamp's figure for WOR is the certified one.
#
# A tiny training loop
# --------------------
# ``PrivampPrivacyEngine`` is Opacus's ``PrivacyEngine`` with the accountant bound to the
# sampler of the data loader (see ``examples/opacus_training.py``): a logistic regression on
# 1,200 random points, 60 WOR batches of 20, z = 1, C = 1.
import torch
from torch import nn
from torch.utils.data import TensorDataset

from privamp.applications.torch_sampler import TorchBatchSampler
from privamp.integrations.opacus import PrivampPrivacyEngine

warnings.filterwarnings("ignore", message="Secure RNG turned off")
warnings.filterwarnings("ignore", message="Full backward hook is firing")
torch.manual_seed(0)
gen = torch.Generator().manual_seed(0)
x = torch.randn(1200, 5, generator=gen)
y = (x @ torch.tensor([1.0, -0.5, 0.25, 0.0, 0.0]) > 0).long()
data = TensorDataset(x, y)

model = nn.Linear(5, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
sampler = TorchBatchSampler(WithoutReplacement(len(data), 20), steps=60, rng=0)
engine = PrivampPrivacyEngine()
model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer,
                                               data_loader=sampler.data_loader(data),
                                               noise_multiplier=1.0, max_grad_norm=1.0)
for xb, yb in loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(xb), yb).backward()
    optimizer.step()
accuracy = float((model(x).argmax(1) == y).float().mean())
eb = engine.epsilon_bracket(1e-5)
print(f"{len(engine.accountant)} steps, accuracy {accuracy:.3f}; "
      f"privamp ε ∈ [{lower(eb.lower)}, {upper(eb.upper)}] ({engine.accountant.relation.value})")
opacus_view = OpacusRDP()
opacus_view.history = list(engine.accountant.history)
print(f"Opacus's own RDP accountant on the same history: ε = "
      f"{opacus_view.get_epsilon(1e-5):.4f}")

# %%
# The numbers side by side
# ------------------------
import matplotlib.pyplot as plt
import numpy as np

labels = list(results)
columns = ["privamp", "dp_accounting PLD", "dp_accounting RDP"]
fig, ax = plt.subplots(figsize=(8, 4))
width = 0.25
for k, col in enumerate(columns):
    vals = [results[lab].get(col, np.nan) for lab in labels]
    pos = np.arange(len(labels)) + (k - 1) * width
    ax.bar(pos, vals, width, label=col if col != "privamp" else "privamp (certified upper end)")
    for p_, v in zip(pos, vals, strict=True):
        ax.text(p_, 0 if np.isnan(v) else v, "n/a" if np.isnan(v) else f"{v:.2f}",
                ha="center", va="bottom", fontsize=8)
ax.set_xticks(np.arange(len(labels)), labels)
ax.set_ylabel("ε at δ = 1e-5 (dimensionless)")
ax.set_title(f"Gaussian z = {z:g}, n = {n:,}, batch {m}, T = {steps}, δ = {delta:g}",
             fontsize=10)
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=8)
ax.grid(axis="y", alpha=0.3)
fig.tight_layout()
plt.show()

# %%
# "n/a": dp_accounting's PLD accountant does not account sampling without replacement. The RDP
# bar for WOR is an upper bound for the same mechanism (given z/2 at sensitivity 1), well above
# privamp's certified figure.
