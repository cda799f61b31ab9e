"""What a period (a drain's flow step, a dry run) reads and decides.

The snapshot of :mod:`.snapshot_reader`, the approved recommendations
taken up (when acting), the pure planner's plan and its verdicts in the
decision record: shared by every kind of period, so that a dry run shows
what the leader would do.
"""

import typing

from nova_drs_scheduler import conf
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import recommendations
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import snapshot_reader

CONF = conf.CONF


class Period(typing.NamedTuple):
    """What :func:`plan` read and decided."""

    plan: model.Plan
    cloud: live.Cloud
    #: Automation level by host.
    levels: dict
    #: Approved recommendations starting now: ``[(id, move)]``.
    approved: list
    snapshot: model.Snapshot
    candidates: model.CandidatesFn


def plan(reader: snapshot_reader.SnapshotReader, context,
         config: model.PlannerConfig, rec: dict,
         windows: metrics.MetricsWindows, acting: bool, draining: set,
         power_rows: dict, goals=planner.GOALS,
         queued=frozenset(), checking=frozenset()) -> Period:
    """Snapshot, (when acting) recommendations, plan, into ``rec``.

    ``draining``: the hosts in maintenance; ``power_rows``: the hosts
    out of their pool's service (``Store.power_hosts``), those entering
    standby drained too; ``goals``: the planner's, all but in a
    drain's flow, which neither reads every instance nor takes up
    approved recommendations; ``queued``: the hosts waiting in the
    maintenance queue; ``checking``: the instances to measure for the
    relief checks (:func:`.relief_check.checking`).
    """
    snapshot, cloud, levels, late = reader.read(
        context, config, windows,
        all_instances=not acting and goals == planner.GOALS,
        draining=draining,
        power_rows=power_rows, queued=queued, checking=checking)
    cands = reader.candidates(context, cloud)
    approved = []
    if acting and goals == planner.GOALS:
        recommendations.revalidate(reader.store, snapshot)
        approved = recommendations.approved(reader.store, snapshot, cands)
        for ident, _move in approved:
            reader.store.transition(ident, db_store.STARTED,
                                    (db_store.APPROVED,))
        snapshot = recommendations.reserve(snapshot, approved)
    snapshot = snapshot_reader.unmeasured(snapshot, late)
    # What the period read lives until it ends: out of the way of
    # the full collections planning triggers (``freezing``).
    freeze = getattr(reader.host_manager, 'freeze', None)
    if freeze is not None:
        freeze()
    found = planner.plan(snapshot, cands, goals)
    record.add_plan(rec, snapshot, found)
    record.add_not_relieved(rec, found, late,
                            CONF.drs.instance_metrics_timeout)
    rec['attention'] = live.needs_attention(cloud)
    return Period(found, cloud, levels, approved, snapshot, cands)
