"""Consolidate for standby: last, once the moves of the period are
planned, which hosts enter standby and which wake (:mod:`..power`).

It runs only when the planner is given power management's inputs
(:class:`..power.PowerInputs`), and plans on the snapshot with the
period's moves (``Snapshot.planned``): a standby's placement check counts
them where they go.  It moves nothing itself: a host entering standby is
drained by the drain goal from the next period on.
"""

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import power
from nova_drs_scheduler.planning import working

GOAL = model.CONSOLIDATE


def run(work: working.Working) -> None:
    """Plan the period's power actions into ``work.power_plan``, if power
    management is in use."""
    inputs = work.power
    if inputs is None:
        return
    work.power_plan = power.plan(work.view, work.candidates,
                                 inputs.forecasts, inputs.counters,
                                 inputs.config, inputs.unplaced)
