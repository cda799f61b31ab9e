"""Decision records: what each period saw, chose, rejected and achieved.

One record per period, built from the planner's
:class:`~nova_drs_scheduler.planning.model.Plan`, so the periodic task,
``nova-drs explain`` and ``history`` show the same thing.  The leader
stores each record in the DRS database (:mod:`nova_drs_scheduler.db.store`)
before starting its moves; a move's outcome, known only later, is stored
with the move.
"""

import dataclasses
import uuid
from collections.abc import Mapping

from oslo_utils import timeutils

from nova_drs_scheduler.planning import model


def new_record(automation: str, config: model.PlannerConfig) -> dict:
    """An empty record for a period that starts now."""
    return {
        'id': str(uuid.uuid4()),
        'time': timeutils.utcnow().isoformat(),
        'automation': automation,
        'policy': config.policy,
        'mode': config.mode,
        'skipped': None,
        'hosts': [],
        'moves': [],
        'notes': [],
    }


def add_plan(record: dict, snapshot: model.Snapshot,
             plan: model.Plan) -> None:
    """Copy the plan (verdicts, moves with alternatives and rejections),
    each verdict with how its host's demand beyond 100 % was seen
    (:func:`add_views`)."""
    record.update(plan.to_dict())
    add_views(record['hosts'], snapshot.hosts)
    record['notes'] = list(record['notes'])
    record['inflight'] = {'total': snapshot.inflight_total,
                          'by_host': dict(snapshot.inflight_by_host)}
    record['blocked'] = {inst.uuid: inst.blocked
                         for inst in snapshot.instances if inst.blocked}
    names = {inst.uuid: inst.name for inst in snapshot.instances}
    for move in record['moves']:
        move['name'] = names.get(move['instance'], '')
        move['outcome'] = {'status': 'planned'}


def add_views(verdicts: list[dict],
              hosts: Mapping[str, model.HostSnapshot]) -> None:
    """Say in each host's verdict which view of unserved demand it was
    judged by (``view``: its measured contention, or its CPU alone when
    the metric source has none for it), the contention and whether it is
    ``starved``: a reader can then tell a calm host from an unmeasured one.
    """
    for verdict in verdicts:
        host = hosts.get(verdict['host'])
        if host is not None:
            verdict.update(view=host.view,
                           cpu_contention=host.cpu_contention,
                           starved=host.starved)


#: Rule of a violated host not relieved because the CPU of its instances
#: was not measured before the period's deadline.
NOT_MEASURED = 'instance_metrics_timeout'
#: Why its instances may not move in that period.
NOT_MEASURED_BLOCK = ('CPU not measured within [drs] '
                      'instance_metrics_timeout: not relieved this period')


def add_not_relieved(record: dict, plan: model.Plan, late,
                     timeout: float) -> None:
    """List the violated hosts of ``late`` (instances not measured in
    time) as not relieved, in the shape of a move's rejections."""
    record['not_relieved'] = [
        {'subject': verdict.host, 'rule': NOT_MEASURED,
         'detail': f'CPU of its instances not measured within {timeout:g} '
                   f's: not relieved this period'}
        for verdict in plan.hosts if verdict.violated and verdict.host in late]


def set_outcome(record: dict, instance: str, outcome: dict) -> bool:
    """Write ``outcome`` into the record's move of ``instance``."""
    for move in record['moves']:
        if move['instance'] == instance:
            move['outcome'] = dict(outcome,
                                   time=timeutils.utcnow().isoformat())
            return True
    return False


def move_of(record: dict, instance: str) -> dict:
    """The record's move of ``instance``."""
    return next(move for move in record['moves']
                if move['instance'] == instance)


def add_move(record: dict, move: model.Move, outcome: dict) -> None:
    """Append a move the planner did not choose (an approved
    recommendation) with its outcome."""
    record['moves'].append(dict(dataclasses.asdict(move), outcome=outcome))

