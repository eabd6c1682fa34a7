"""Small sampling rates: the lower side's first grid resolves the bulk of a step's loss, and
small δ's above the tilting threshold are tilted when the FFT's rounding bound would rule.

1. At a sampling rate γ a step's loss lies between log(1 − γ) and its tail, most of it within
   about γ of 0. A lower grid coarser than that sees one kink for the whole bulk; merging it
   across 0 takes the thin tail down with it, and the composed lower end *collapses* to 0
   (σ 0.5, γ 1e-4, 10³ steps, δ 1e-10: lower ends 0 on 6.9e-4 and 2.3e-4, three compositions,
   before :func:`privamp.pld.grids._resolve_bulk`; now one).
2. The δ query composes untilted above δ = 1e-9; the FFT's rounding bound is absolute, and at
   δ ≈ 5e-9 it was a tenth of a percent of δ on each side (a bracket 0.16 % wide and a warning;
   at 10⁴ steps 0.47 % and 38 s, refining the lower side only widened it). Now such a query is
   composed again, tilted (exact for any tilt). That pass is optional: where it does not fit
   (a fixed grid) or only coarsened, the untilted pass stands.
3. Below the smallest loss the exact curve is 1 − α with no slack; the lower step's kinks are
   rounded down so that its rounded P-masses cannot lift it above that floor.
"""

from __future__ import annotations

import logging
import math
import warnings

import numpy as np
import pytest

from privamp import Accountant, GaussianMechanism
from privamp.errors import AccuracyWarning
from privamp.pld.curves import PoissonGaussianCurve
from privamp.pld.engine import _step_range
from privamp.pld.grids import _BULK_FRACTION, _bulk_width, _resolve_bulk
from privamp.sampling import Poisson


@pytest.mark.parametrize("rate", [1e-9, 1e-6, 1e-4, 0.01, 0.3])
@pytest.mark.parametrize("orientation", ["add", "remove"])
def test_bulk_width_is_the_bounded_side_of_the_loss(rate, orientation):
    # the loss of a Poisson-Gaussian pair is bounded on one side by ∓log(1 − γ): the range's
    # cut there (the left one at about twice the smallest loss) gives that bound within 1 %
    curve = PoissonGaussianCurve(2.0, rate, orientation)
    lo, hi = _step_range(curve, math.log(1e-18))
    width = _bulk_width({"x": [(lo, hi)]})
    assert width == pytest.approx(-math.log1p(-rate), rel=1e-2)


def test_resolve_bulk_boundaries():
    ranges = {"a": [(-2e-4, 8.0)], "b": [(-9.0, 3e-4)]}  # bulk widths 1e-4 and 3e-4
    bulk = _BULK_FRACTION * 1e-4
    assert _bulk_width(ranges) == pytest.approx(1e-4)
    assert _resolve_bulk(5e-5, 1e-5, ranges) == 5e-5  # already inside the bulk: unchanged
    assert _resolve_bulk(1e-3, 1e-5, ranges) == pytest.approx(bulk)
    # never finer than the upper side's spacing (it resolved the same steps), never coarser
    # than asked
    assert _resolve_bulk(1e-3, 2e-4, ranges) == 2e-4
    assert _resolve_bulk(1e-3, 5e-3, ranges) == 1e-3
    # ranges of one sign (a loss that never changes sign, or a single point) leave it alone
    assert _bulk_width({"a": [(0.0, 5.0)], "b": [(-3.0, 0.0)]}) == math.inf
    assert _resolve_bulk(1e-3, 1e-5, {"a": [(0.0, 5.0)]}) == 1e-3


def _lower_grids(records):
    return [m for m in records if m.startswith("composing") and "lower side" in m]


@pytest.mark.parametrize(("rate", "steps"), [(1e-4, 1000), (1e-3, 1000)])
def test_small_rate_lower_side_is_composed_once(caplog, rate, steps):
    acc = Accountant("pld").add(GaussianMechanism(0.5), steps, scheme=Poisson(rate))
    with caplog.at_level(logging.INFO, logger="privamp.progress"), warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        res = acc.epsilon(1e-10)
    lows = _lower_grids([r.getMessage() for r in caplog.records])
    assert len(lows) == 1, lows
    assert 0 < res.lower <= res.upper
    assert res.upper - res.lower <= 1e-3 * res.upper


def _small_delta(width, warnings_are="error", **options):
    """δ(3) of 10³ steps of σ 0.5 at rate 1e-4 (≈ 5.1e-9), checked for its width."""
    acc = Accountant("pld", **options).add(GaussianMechanism(0.5), 1000, scheme=Poisson(1e-4))
    with warnings.catch_warnings():
        warnings.simplefilter(warnings_are, AccuracyWarning)
        res = acc.delta(3.0)
    assert 1e-9 < res.lower <= res.upper < 1e-8
    assert res.upper - res.lower <= width * res.upper
    return res


def test_small_delta_above_the_tilting_threshold_meets_its_target():
    res = _small_delta(1e-3)
    # the coarse query (untilted: its target is far above the rounding bound) is certified too:
    # the two brackets overlap
    coarse = Accountant("pld", delta_error=0.05).add(GaussianMechanism(0.5), 1000,
                                                     scheme=Poisson(1e-4)).delta(3.0)
    assert coarse.lower <= res.upper and res.lower <= coarse.upper


def test_the_tilted_pass_is_optional_with_a_fixed_grid():
    """The tilted pass the FFT bound asks for needs a wider window; with a fixed ``grid_step``
    that does not fit it is refused by name — the untilted pass's certified bracket stands
    (review 35: the query raised InvalidParameterError)."""
    _small_delta(5e-3, "ignore", grid_step=1.2e-5)


def test_a_coarsened_tilted_pass_does_not_decide_the_lower_side(monkeypatch):
    """Under a small memory bound the tilted pass is coarsened; its grid would set the lower
    side (a bracket 100 % wide): the untilted pass stands (0.2 % wide, with a warning)."""
    from privamp.pld import distribution

    monkeypatch.setattr(distribution, "MAX_FFT", 300_000)
    _small_delta(5e-3, "ignore")


@pytest.mark.parametrize("rate", [1e-4, 0.01, 0.5])
@pytest.mark.parametrize("h", [1e-4, 1.3e-3, 1e-2])
@pytest.mark.parametrize("lift", [0.0, 2.0**-52, 1 / 3])
def test_lower_step_stays_on_the_floor_below_the_loss_range(rate, h, lift):
    """Below the smallest loss log(1 − γ) of the remove orientation the exact curve is 1 − α,
    with no slack: the lower step must not exceed it there. Exactly, its kinks' P-masses sum to
    1 − p∞; in floating point they came out 1e-16 above, and the step's curve was up to 1.9e-16
    above 1 − α at 125 of these points (review 35). Exact sums of the float masses (mpmath)."""
    import mpmath

    from privamp.pld.curves import PoissonGaussianCurve
    from privamp.pld.distribution import StepPLD

    curve = PoissonGaussianCurve(1.0, rate, "remove")
    step = StepPLD.from_curve(curve, h, -0.6, 0.6, "lower", offset=lift * h)
    live = step.masses > 0
    masses = [mpmath.mpf(float(m)) for m in step.masses[live]]
    losses = [mpmath.mpf(float(x)) for x in step.losses[live]]
    with mpmath.workdps(40):
        for e in np.linspace(math.log1p(-rate) - 3 * h, math.log1p(-rate), 13).tolist():
            a = mpmath.e ** mpmath.mpf(e)
            d = mpmath.fsum(m * (1 - a * mpmath.e ** (-x)) for m, x in zip(masses, losses,
                                                                            strict=True)
                            if x > e) + step.p_inf
            assert d <= 1 - a, (e, float(d - (1 - a)))
