"""Where a drain stands, from the planner's :class:`~.model.Drain`.

Pure: the leader turns each period's drains into the state and progress it
stores for the host (``nova-drs maintenance status`` reads them), and the
CLI estimates the time left from them.
"""

import datetime
from collections.abc import Iterable
from collections.abc import Mapping

from nova_drs_scheduler import maintenance_states
from nova_drs_scheduler.planning import model

#: States of a host in maintenance.
DRAINING, DRAINED, BLOCKED = (maintenance_states.DRAINING,
                              maintenance_states.DRAINED,
                              maintenance_states.BLOCKED)
STATES = maintenance_states.STATES


def state(drain: model.Drain) -> str:
    """Drained when empty; blocked when what is left can only stay (no
    move planned, none waiting for a slot or a move in flight)."""
    if not drain.instances:
        return DRAINED
    if drain.planned or drain.waiting:
        return DRAINING
    return BLOCKED


def progress(drain: model.Drain, names: Mapping[str, str],
             record_id: str) -> dict:
    """The report stored for the host: counts, and each instance waiting
    or blocking with its reason and name."""
    return {'instances': drain.instances, 'planned': list(drain.planned),
            'waiting': rows(drain.waiting, names),
            'blockers': rows(drain.blockers, names), 'record': record_id}


def rows(rejections: Iterable[model.Rejection],
         names: Mapping[str, str]) -> list[dict]:
    """Instances waiting or blocking, as reports and the CLI show them:
    each with its name, rule and reason."""
    return [{'instance': r.subject, 'name': names.get(r.subject, ''),
             'rule': r.rule, 'reason': r.detail or r.rule}
            for r in rejections]


def time_left(requested_at: datetime.datetime, now: datetime.datetime,
              completed: int, left: int | None) -> float | None:
    """Seconds until drained at the pace so far (seconds since the
    request per instance moved, times the instances left); None before
    the first move ends."""
    if not completed or left is None:
        return None
    elapsed = max(0.0, (now - requested_at).total_seconds())
    return elapsed / completed * left
