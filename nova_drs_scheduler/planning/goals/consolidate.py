"""Consolidate for standby: last, once the moves of the period are
planned, which hosts enter standby and which wake (:mod:`..power`).

It runs only when the planner is given power management's inputs
(:class:`..power.PowerInputs`), and plans on the snapshot with the
period's moves (``Snapshot.planned``): a standby's placement check counts
them where they go, and a host that one of them goes to is not put in
standby this period (the move would land on a host leaving service).  It
moves nothing itself: a host entering standby is drained by the drain
goal from the next period on.
"""

import dataclasses

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
    found = power.plan(work.view, work.candidates, inputs.forecasts,
                       inputs.counters, inputs.config, inputs.unplaced)
    work.power_plan = after_moves(found, work.view.planned)


def after_moves(found: power.PowerPlan, planned) -> power.PowerPlan:
    """``found`` without the standbys of hosts a ``planned`` move goes
    to: each is left for a later period, with a note."""
    receiving = {move.destination for move in planned}
    held = [action for action in found.actions
            if action.kind == power.STANDBY and action.host in receiving]
    if not held:
        return found
    return dataclasses.replace(
        found,
        actions=tuple(a for a in found.actions if a not in held),
        notes=tuple(found.notes) + tuple(
            f'host {action.host}: standby left for a later period, a move '
            f'of this period goes to it' for action in held))
