"""privamp.filter.PrivacyFilter: T_max is the exact boundary of the certified upper ε (T_max
steps within the budget, T_max + 1 not), checked against the accountant itself and against
independent references (the closed-form ε of a composed Gaussian in mpmath; the Poisson
subsampled Gaussian's integer-order RDP by its binomial sum in mpmath, for the Rényi filter);
the loop that stops at the budget; adaptive vs non-adaptive; the ledger changing in other ways;
bad input; the state round trip; a real Opacus training loop stopped by the budget."""

from __future__ import annotations

import math
import os

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privamp import Accountant, GaussianMechanism, LaplaceMechanism, Poisson
from privamp.errors import BudgetExceededError, InvalidParameterError, InvalidTypeError
from privamp.filter import PrivacyFilter
from privamp.sampling import WithoutReplacement

DELTA = 1e-5


def _upper(events, budget_eps, delta=DELTA, backend="pld"):
    """The certified upper ε of ``events`` ((mechanism, count, scheme) triples) on the grid
    the filter uses (an upper error of 1e-5 of the budget), built independently of the
    filter."""
    acc = Accountant(backend, upper_error=1e-5 * budget_eps if backend == "pld" else None)
    for mech, count, scheme in events:
        acc.add(mech, count, scheme=scheme)
    return acc.epsilon(delta, lower=False).upper


def _gaussian_delta(mu, eps):
    """δ(ε) of the μ-GDP Gaussian pair in mpmath (Balle & Wang 2018, Theorem 8)."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


# ---- T_max: the exact boundary ----------------------------------------------------------------


@pytest.mark.parametrize("sigma,rate,budget", [
    (1.0, 0.01, 0.5), (1.0, 0.01, 2.0), (0.8, 0.05, 3.0), (2.0, 0.1, 1.0), (1.5, 1.0, 4.0)])
def test_t_max_is_the_exact_boundary_pld(sigma, rate, budget):
    mech, scheme = GaussianMechanism(sigma), Poisson(rate)
    f = PrivacyFilter(budget, DELTA)
    t = f.steps_left(mech, scheme=scheme)
    assert t >= 1
    assert _upper([(mech, t, scheme)], budget) <= budget
    assert _upper([(mech, t + 1, scheme)], budget) > budget
    assert f.can_add(mech, t, scheme=scheme) and not f.can_add(mech, t + 1, scheme=scheme)


@settings(max_examples=4, deadline=None)
@given(sigma=st.floats(0.8, 3.0), log_rate=st.floats(-2.5, -0.5), budget=st.floats(0.3, 6.0),
       log_delta=st.sampled_from([-3.0, -5.0, -8.0]))
def test_t_max_boundary_generated(sigma, log_rate, budget, log_delta):
    """The boundary over generated (σ, rate, budget, δ): T_max within on the filter's grid,
    T_max + 1 not (or no step at all fits: then one step is over)."""
    mech, scheme, delta = GaussianMechanism(sigma), Poisson(10.0**log_rate), 10.0**log_delta
    t = PrivacyFilter(budget, delta, max_steps=10**6).steps_left(mech, scheme=scheme)
    if t:
        assert _upper([(mech, t, scheme)], budget, delta) <= budget
    if t < 10**6:
        assert _upper([(mech, t + 1, scheme)], budget, delta) > budget


@pytest.mark.parametrize("sigma,budget", [(20.0, 1.0), (5.0, 2.0), (50.0, 0.7), (30.0, 3.0)])
def test_t_max_against_the_closed_form_gaussian(sigma, budget):
    """No subsampling: T Gaussians of σ are one Gaussian of μ = √T/σ (mpmath): the truth at
    T_max is within the budget, and T_max + 1 is above it up to the grid's accuracy."""
    f = PrivacyFilter(budget, DELTA)
    t = f.steps_left(GaussianMechanism(sigma))
    assert t >= 1
    assert _gaussian_delta(math.sqrt(t) / sigma, budget) <= DELTA
    # not conservative: one step more is over the budget loosened by 1e-4 (the grid's error)
    assert _gaussian_delta(math.sqrt(t + 1) / sigma, budget * (1 - 1e-4)) > DELTA


@pytest.mark.parametrize("sigma,rate,budget", [(1.0, 0.01, 2.0), (0.8, 0.05, 3.0)])
def test_t_max_is_the_exact_boundary_rdp(sigma, rate, budget):
    mech, scheme = GaussianMechanism(sigma), Poisson(rate)
    t = PrivacyFilter(budget, DELTA, backend="rdp").steps_left(mech, scheme=scheme)
    assert _upper([(mech, t, scheme)], budget, backend="rdp") <= budget
    assert _upper([(mech, t + 1, scheme)], budget, backend="rdp") > budget


def test_t_max_on_top_of_a_ledger_and_after_another_kind():
    """A wrapped ledger counts against the budget; a step of another kind makes the filter
    search again (its answer is that of a fresh filter on the same ledger)."""
    a, b, scheme = GaussianMechanism(1.0), GaussianMechanism(2.0), Poisson(0.02)
    budget = 2.0
    f = PrivacyFilter(budget, DELTA, accountant=Accountant().add(a, 50, scheme=scheme))
    t = f.steps_left(a, scheme=scheme)
    assert _upper([(a, 50 + t, scheme)], budget) <= budget < _upper([(a, 51 + t, scheme)],
                                                                     budget)
    f.add(a, 10, scheme=scheme)
    assert f.steps_left(a, scheme=scheme) == t - 10  # counted, not searched again
    f.add(b, 30, scheme=scheme)
    tb = f.steps_left(a, scheme=scheme)
    assert _upper([(a, 60 + tb, scheme), (b, 30, scheme)], budget) <= budget
    assert _upper([(a, 61 + tb, scheme), (b, 30, scheme)], budget) > budget
    # steps added to the wrapped accountant behind the filter's back are seen too
    f.accountant.add(a, 5, scheme=scheme)
    tc = f.steps_left(a, scheme=scheme)  # searched again, on the ledger as it is now
    assert _upper([(a, 65 + tc, scheme), (b, 30, scheme)], budget) <= budget
    assert _upper([(a, 66 + tc, scheme), (b, 30, scheme)], budget) > budget


# ---- the loop ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["pld", "rdp"])
def test_loop_stops_at_the_budget(backend):
    mech, scheme = GaussianMechanism(3.0, 2.0, "substitute"), WithoutReplacement(2000, 40)
    budget = 1.5
    f = PrivacyFilter(budget, DELTA, backend=backend)
    steps = 0
    while f.can_add(mech, scheme=scheme):
        f.add(mech, scheme=scheme)
        steps += 1
    left = f.budget_left()
    assert left.steps == steps == f.accountant.steps
    assert 0 <= left.epsilon_spent <= budget and left.epsilon_left == budget - left.epsilon_spent
    assert _upper([(mech, steps, scheme)], budget, backend=backend) <= budget
    assert _upper([(mech, steps + 1, scheme)], budget, backend=backend) > budget
    with pytest.raises(BudgetExceededError) as err:
        f.add(mech, scheme=scheme)
    assert err.value.asked == 1 and err.value.steps_left == 0
    assert err.value.budget == (budget, DELTA) and err.value.spent == left.epsilon_spent
    assert "1 more step would exceed the privacy budget" in str(err.value)
    assert f.accountant.steps == steps  # refused: the ledger is unchanged


def test_counts_above_one_and_an_empty_ledger():
    mech = LaplaceMechanism(4.0)
    f = PrivacyFilter(1.0, DELTA)
    assert f.budget_left().epsilon_spent == 0.0 and f.budget_left().steps == 0
    t = f.steps_left(mech)
    f.add(mech, t - 1)
    assert f.can_add(mech) and not f.can_add(mech, 2)
    with pytest.raises(BudgetExceededError):
        f.add(mech, 2)
    f.add(mech)
    assert f.steps_left(mech) == 0


def test_a_ledger_already_over_the_budget():
    acc = Accountant().add(GaussianMechanism(1.0), 1000, scheme=Poisson(0.05))
    f = PrivacyFilter(0.5, DELTA, accountant=acc)
    assert f.steps_left(GaussianMechanism(1.0), scheme=Poisson(0.05)) == 0
    assert f.budget_left().epsilon_left < 0


# ---- the Rényi filter -------------------------------------------------------------------------


def _poisson_gaussian_rdp(q, sigma, order):
    """RDP of the Poisson-subsampled Gaussian at an integer order (add/remove): the binomial
    sum of Mironov, Talwar, Zhang 2019 (Section 3.3), in mpmath."""
    q, s2 = mp.mpf(q), mp.mpf(sigma) ** 2
    total = mp.fsum(mp.binomial(order, k) * (1 - q) ** (order - k) * q ** k
                    * mp.exp((k * k - k) / (2 * s2)) for k in range(order + 1))
    return mp.log(total) / (order - 1)


@pytest.mark.parametrize("sigma,rate,budget,order", [
    (1.0, 0.01, 2.0, 8), (1.5, 0.05, 4.0, 6), (2.0, 0.02, 2.0, 12), (3.0, 1.0, 4.0, 8)])
def test_renyi_filter_against_mpmath(sigma, rate, budget, order):
    """T_max of the adaptive filter at a fixed integer order: the largest T with
    T·ρ(λ) + log(1 − 1/λ) − (log δ + log λ)/(λ − 1) ≤ ε_B, ρ from the binomial sum (mpmath);
    the filter may stop one short (its values are rounded up), never later."""
    mp.mp.dps = 40
    f = PrivacyFilter(budget, DELTA, adaptive=True, order=order)
    t = f.steps_left(GaussianMechanism(sigma), scheme=Poisson(rate))
    rho = _poisson_gaussian_rdp(rate, sigma, order)
    room = (mp.mpf(budget) - mp.log(1 - mp.mpf(1) / order)
            + (mp.log(DELTA) + mp.log(order)) / (order - 1))
    reference = int(mp.floor(room / rho))
    assert reference >= 1 and reference - 1 <= t <= reference


def test_adaptive_filter_default_order_and_heterogeneous_steps():
    """The default order admits the most steps of the first kind (a scan of the grid, the
    filter's own check at each order); steps of other kinds then add their RDP at that order,
    and the total stays within the budget (mpmath)."""
    mp.mp.dps = 40
    a, b, scheme = GaussianMechanism(1.0), GaussianMechanism(2.0), Poisson(0.02)
    f = PrivacyFilter(3.0, DELTA, adaptive=True)
    t = f.steps_left(a, scheme=scheme)
    order = f.order
    for other in (2.0, 4.0, 16.0):
        if other != order:
            assert PrivacyFilter(3.0, DELTA, adaptive=True, order=other).steps_left(
                a, scheme=scheme) <= t
    f.add(a, t // 2, scheme=scheme)
    tb = f.steps_left(b, scheme=scheme)
    f.add(b, tb, scheme=scheme)
    assert not f.can_add(b, scheme=scheme) and not f.can_add(a, scheme=scheme)
    assert f.budget_left().epsilon_spent <= 3.0
    if float(order).is_integer():
        o = int(order)
        total = (t // 2) * _poisson_gaussian_rdp(0.02, 1.0, o) + tb * _poisson_gaussian_rdp(
            0.02, 2.0, o)
        conv = total + mp.log(1 - mp.mpf(1) / o) - (mp.log(DELTA) + mp.log(o)) / (o - 1)
        assert conv <= 3.0


@pytest.mark.parametrize("sigma,rate,budget", [(1.0, 0.01, 2.0), (2.0, 0.05, 1.0)])
def test_adaptive_is_never_more_permissive_than_rdp_composition(sigma, rate, budget):
    """One fixed order (adaptive) vs the best order per count (a fixed sequence): the Rényi
    filter admits at most as many steps; the PLD filter (fixed sequence) at least as many."""
    mech, scheme = GaussianMechanism(sigma), Poisson(rate)
    adaptive = PrivacyFilter(budget, DELTA, adaptive=True).steps_left(mech, scheme=scheme)
    rdp = PrivacyFilter(budget, DELTA, backend="rdp").steps_left(mech, scheme=scheme)
    pld = PrivacyFilter(budget, DELTA).steps_left(mech, scheme=scheme)
    assert adaptive <= rdp <= pld


# ---- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,name", [
    (dict(budget_epsilon=0.0, budget_delta=DELTA), "budget_epsilon"),
    (dict(budget_epsilon=math.nan, budget_delta=DELTA), "budget_epsilon"),
    (dict(budget_epsilon=math.inf, budget_delta=DELTA), "budget_epsilon"),
    (dict(budget_epsilon=1.0, budget_delta=1.0), "budget_delta"),
    (dict(budget_epsilon=1.0, budget_delta=0.0), "budget_delta"),
    (dict(budget_epsilon=1.0, budget_delta=DELTA, adaptive="yes"), "adaptive"),
    (dict(budget_epsilon=1.0, budget_delta=DELTA, order=4.0), "order"),
    (dict(budget_epsilon=1.0, budget_delta=DELTA, adaptive=True, order=1.0), "order"),
    (dict(budget_epsilon=1.0, budget_delta=DELTA, adaptive=True, backend="pld"), "backend"),
    (dict(budget_epsilon=1.0, budget_delta=DELTA, accountant="ledger"), "accountant"),
    (dict(budget_epsilon=1.0, budget_delta=DELTA, accountant=Accountant("rdp"),
          backend="pld"), "backend"),
    (dict(budget_epsilon=1.0, budget_delta=DELTA, max_steps=0), "max_steps"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InvalidParameterError) as err:
        PrivacyFilter(**kwargs)
    assert err.value.parameter == name


def test_adaptive_on_a_ledger_with_steps_needs_an_order():
    acc = Accountant("rdp").add(GaussianMechanism(1.0), 10, scheme=Poisson(0.01))
    with pytest.raises(InvalidParameterError, match="order"):
        PrivacyFilter(1.0, DELTA, adaptive=True, accountant=acc)
    assert PrivacyFilter(1.0, DELTA, adaptive=True, accountant=acc, order=8).order == 8.0


def test_bad_steps_are_refused_by_name():
    f = PrivacyFilter(1.0, DELTA)
    with pytest.raises(InvalidParameterError) as err:
        f.can_add(GaussianMechanism(1.0), 0)
    assert err.value.parameter == "count"
    with pytest.raises(InvalidTypeError) as err:
        f.can_add("gaussian")
    assert err.value.parameter == "mechanism"
    with pytest.raises(InvalidParameterError):
        f.add(GaussianMechanism(1.0), 1.5)
    assert f.accountant.steps == 0


# ---- state and explanation ------------------------------------------------------------------


@pytest.mark.parametrize("adaptive", [False, True])
def test_state_round_trip_keeps_the_budget(adaptive):
    mech, scheme = GaussianMechanism(1.0), Poisson(0.02)
    f = PrivacyFilter(2.0, DELTA, adaptive=adaptive)
    f.add(mech, 40, scheme=scheme)
    state = f.state_dict()
    again = PrivacyFilter.from_state_dict(state)
    assert (again.budget_epsilon, again.budget_delta, again.adaptive, again.order) == (
        f.budget_epsilon, f.budget_delta, f.adaptive, f.order)
    assert again.accountant.events == f.accountant.events
    assert again.steps_left(mech, scheme=scheme) == f.steps_left(mech, scheme=scheme)
    assert again.budget_left() == f.budget_left()
    # an accountant reads the same state (without the budget)
    assert Accountant.from_state_dict(state).events == f.accountant.events
    text = again.explain()
    assert "budget: (epsilon 2, delta 1e-05)" in text
    assert ("adaptive Renyi filter at order" in text) == adaptive
    with pytest.raises(InvalidParameterError):
        PrivacyFilter.from_state_dict(f.accountant.state_dict())  # no budget in it
    bad = dict(state, budget=dict(state["budget"], epsilon=-1.0))
    with pytest.raises(InvalidParameterError) as err:
        PrivacyFilter.from_state_dict(bad)
    assert err.value.parameter == "budget_epsilon"


# ---- Opacus -----------------------------------------------------------------------------------


def test_opacus_training_stops_at_the_budget():
    """A tiny logistic regression trained by real Opacus on Poisson batches, asking
    can_step() before each step: it stops where one more step would exceed the budget, and its
    final certified ε is within it."""
    if not os.environ.get("CI"):
        pytest.importorskip("opacus")
    import torch
    from torch import nn
    from torch.utils.data import TensorDataset

    from privamp.applications.torch_sampler import TorchBatchSampler
    from privamp.integrations.opacus import PrivampAccountant, PrivampPrivacyEngine

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(200, 4, generator=gen)
    y = (x[:, 0] > 0).long()
    scheme, z, budget = Poisson(0.1, n=200), 2.0, (1.0, DELTA)
    sampler = TorchBatchSampler(scheme, steps=500, rng=1)
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    engine = PrivampPrivacyEngine(budget=budget)
    model, opt, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5),
        data_loader=sampler.data_loader(TensorDataset(x, y)), noise_multiplier=z,
        max_grad_norm=1.0)
    acc = engine.accountant
    t_max = acc.steps_left(noise_multiplier=z)
    steps = 0
    for xb, yb in loader:
        if not acc.can_step(noise_multiplier=z):
            break
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
        steps += 1
    assert 0 < steps == len(acc) == t_max < 500
    assert acc.get_epsilon(DELTA) <= budget[0]
    assert acc.budget_left().epsilon_spent <= budget[0]
    mech = GaussianMechanism(z)  # σ = z·C on a clipped sum of sensitivity C (add/remove)
    assert _upper([(mech, steps + 1, scheme)], budget[0]) > budget[0]
    assert not acc.can_step()  # the last step's noise multiplier by default
    # a step taken anyway is recorded (the ledger is honest) and refused loudly
    with pytest.raises(BudgetExceededError) as err:
        acc.step(noise_multiplier=z, sample_rate=0.1)
    assert err.value.taken and len(acc) == steps + 1
    assert err.value.spent > budget[0]
    # the budget survives a checkpoint
    fresh = PrivampAccountant()
    fresh.load_state_dict(acc.state_dict())
    assert fresh.budget == budget and not fresh.can_step()
    with pytest.raises(InvalidParameterError) as err:
        PrivampAccountant(scheme, budget=(0.0, DELTA))
    assert err.value.parameter == "budget epsilon"
    with pytest.raises(InvalidParameterError, match="budget"):
        PrivampAccountant(scheme).can_step(1.0)


# ---- the command line -------------------------------------------------------------------------

CLI = ["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--sampling", "poisson", "--rate",
       "0.02", "--delta", "1e-5"]


@pytest.mark.parametrize("steps,budget", [(100, 2.0), (400, 1.0)])
def test_cli_budget_is_the_filter(capsys, steps, budget):
    """``privamp epsilon --budget`` reports what the library's filter answers on the same
    ledger; over the budget, T_max is null and no step is left."""
    from cli_helpers import run_json

    out = run_json([*CLI, "--steps", str(steps), "--budget", str(budget)], capsys)
    mech, scheme = GaussianMechanism(1.0), Poisson(0.02)
    f = PrivacyFilter(budget, DELTA, accountant=Accountant().add(mech, steps, scheme=scheme))
    left = f.steps_left(mech, scheme=scheme)
    b = out["budget"]
    assert (b["epsilon"], b["delta"], b["steps_left"]) == (budget, DELTA, left)
    assert b["epsilon_spent"] == f.budget_left().epsilon_spent
    if b["epsilon_left"] >= 0:
        assert b["t_max"] == steps + left
        assert _upper([(mech, steps + left, scheme)], budget) <= budget
    else:
        assert b["t_max"] is None and left == 0


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_cli_bad_budget_exits_2(capsys, value):
    from cli_helpers import run_error

    message = run_error([*CLI, "--steps", "10", "--budget", value], capsys)
    assert message.startswith("privamp: error: --budget must be")


def test_cli_budget_beyond_the_search_says_at_least(capsys):
    """A budget so large that the search stops at its cap (10⁹ more steps): the steps left are
    a lower bound, said as "at least", and T_max is unknown (null), never the cap passed off as
    the largest count within the budget."""
    from cli_helpers import run_json
    from privamp.filter import PrivacyFilter as _F

    out = run_json([*CLI, "--steps", "10", "--budget", "1e308"], capsys)
    b = out["budget"]
    assert b["steps_left_capped"] is True and b["t_max"] is None
    assert b["steps_left"] == _F(1.0, DELTA).max_steps
    from privamp.cli import main

    assert main([*CLI, "--steps", "10", "--budget", "1e308"]) == 0
    text = capsys.readouterr().out
    assert "at least 1000000000 more steps" in text and "T_max" not in text
    out = run_json([*CLI, "--steps", "10", "--budget", "2"], capsys)
    assert out["budget"]["steps_left_capped"] is False


@pytest.mark.parametrize("mech", [GaussianMechanism(1.0), LaplaceMechanism(2.0)])
def test_a_budget_beyond_the_cap_is_settled_at_the_cap(mech):
    """When the search's guess lies beyond ``max_steps`` and ``max_steps`` more steps fit (one
    certified evaluation there), the answer is the cap, flagged as capped — and it is certified:
    the ledger with the cap's steps added is within the budget. A budget the cap exceeds still
    gets the exact boundary."""
    scheme = Poisson(0.01)
    cap = 1000
    eps_cap = Accountant().add(mech, 10 + cap, scheme=scheme).epsilon(DELTA, lower=False).upper
    f = PrivacyFilter(10 * eps_cap, DELTA, max_steps=cap,
                      accountant=Accountant().add(mech, 10, scheme=scheme))
    assert f.steps_left(mech, scheme=scheme) == cap
    assert f._plan.capped()
    assert _upper([(mech, 10 + cap, scheme)], 10 * eps_cap) <= 10 * eps_cap
    g = PrivacyFilter(eps_cap / 2, DELTA, max_steps=cap,
                      accountant=Accountant().add(mech, 10, scheme=scheme))
    left = g.steps_left(mech, scheme=scheme)
    assert 0 < left < cap
    assert _upper([(mech, 10 + left, scheme)], eps_cap / 2) <= eps_cap / 2
    assert _upper([(mech, 11 + left, scheme)], eps_cap / 2) > eps_cap / 2
