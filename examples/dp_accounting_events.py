"""Account dp_accounting ``DpEvent``s with privamp, next to dp_accounting's own accountants.

Code written for Google's dp_accounting (TensorFlow Privacy, jax_privacy) describes a training
run as a ``DpEvent``. This example converts three such events with
:mod:`privamp.integrations.dp_accounting` and prints privamp's certified ε bracket next to what
dp_accounting's PLD and RDP accountants report (``refused`` where they cannot account the event):

1. DP-SGD with Poisson batches: ``SelfComposed(PoissonSampled(q, Gaussian(z)), T)`` under
   add/remove — both libraries compose the exact subsampled-Gaussian pair; they agree;
2. the same steps with fixed-size batches drawn without replacement, under REPLACE_ONE —
   dp_accounting has only RDP for them (Wang, Balle, Kasiviswanathan 2019), privamp composes the
   privacy loss distribution of BBG Theorem 9. The clipped sum moves by 2C when a record is
   replaced (``replace_one_sensitivity=2``); dp_accounting's RDP accountant assumes 1 (it is
   given the noise multiplier relative to the replace-one sensitivity), so its column is shown
   for z/2 as well, which is the same mechanism;
3. batches drawn with replacement: dp_accounting has no accountant for them.

Finally ``calibrate_dp_mechanism`` finds the noise for a target ε with privamp's
``PrivampAccountant`` (certified: never above the target) and with dp_accounting's PLD
accountant (not with ``--small``: it is slow), and the certified ε of both answers is shown.

Every printed ε is rounded up, every lower end down (:mod:`privamp.display`).

Usage: python examples/dp_accounting_events.py [--steps T] [--small]
"""

from __future__ import annotations

import argparse

from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.mechanism_calibration import ExplicitBracketInterval, calibrate_dp_mechanism
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from privamp import display
from privamp.integrations.dp_accounting import PrivampAccountant, from_dp_event

DELTA = 1e-5


def _peer(make, event) -> str:
    acc = make()
    if not acc.supports(event):
        return "refused"
    return display.upper(acc.compose(event).get_epsilon(DELTA), 5)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="DP-SGD steps (default 1000)")
    parser.add_argument("--small", action="store_true", help="100 steps (for the test suite)")
    args = parser.parse_args(argv)
    steps = 100 if args.small else args.steps
    n, batch, z = 60_000, 600, 1.0
    replace = NeighboringRelation.REPLACE_ONE
    rows = []

    poisson = dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(batch / n, dp_event.GaussianDpEvent(z)), steps)
    rows.append(("Poisson, add/remove", from_dp_event(poisson).epsilon(DELTA),
                 _peer(PLDAccountant, poisson), _peer(RdpAccountant, poisson)))

    def wor(noise):
        return dp_event.SelfComposedDpEvent(dp_event.SampledWithoutReplacementDpEvent(
            n, batch, dp_event.GaussianDpEvent(noise)), steps)

    privamp_wor = from_dp_event(wor(z), neighboring_relation=replace,
                                replace_one_sensitivity=2.0).epsilon(DELTA)
    rows.append(("WOR, replace-one, sensitivity 2C", privamp_wor,
                 _peer(lambda: PLDAccountant(replace), wor(z)),
                 _peer(lambda: RdpAccountant(neighboring_relation=replace), wor(z / 2))))

    wr = dp_event.SelfComposedDpEvent(dp_event.SampledWithReplacementDpEvent(
        n, batch, dp_event.GaussianDpEvent(z)), steps)
    rows.append(("WR, replace-one, sensitivity 2C",
                 from_dp_event(wr, neighboring_relation=replace,
                               replace_one_sensitivity=2.0).epsilon(DELTA),
                 _peer(lambda: PLDAccountant(replace), wr),
                 _peer(lambda: RdpAccountant(neighboring_relation=replace), wr)))

    print(f"{steps} steps, batches of {batch} from {n} records, noise multiplier z = {z}, "
          f"delta = {DELTA:g}\n")
    print(f"{'event':34} {'privamp PLD bracket':>24} {'dp_acc. PLD':>12} {'dp_acc. RDP':>12}")
    for name, bracket, pld, rdp in rows:
        print(f"{name:34} {display.bracket(bracket.lower, bracket.upper, 5):>24} "
              f"{pld:>12} {rdp:>12}")

    target = 2.0

    def event_for(noise):
        return dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(batch / n, dp_event.GaussianDpEvent(noise)), steps)

    print(f"\ncalibrate_dp_mechanism for epsilon <= {target} (Poisson, add/remove):")
    ours = calibrate_dp_mechanism(PrivampAccountant, event_for, target, DELTA)
    found = [("PrivampAccountant", ours)]
    if not args.small:  # dp_accounting's search, started near privamp's answer (it is slow)
        near = ExplicitBracketInterval(0.98 * ours, 1.02 * ours)
        found.append(("PLDAccountant", calibrate_dp_mechanism(PLDAccountant, event_for, target,
                                                              DELTA, near)))
    for name, noise in found:
        certified = from_dp_event(event_for(noise)).epsilon(DELTA).upper
        print(f"  {name:18} noise multiplier {noise:.9f}  certified epsilon "
              f"{display.upper(certified, 8)}")


if __name__ == "__main__":
    main()
