"""One rebalance period against the live cloud, from reading to acting.

Read Nova's rows, advance the metric windows, build the Snapshot, let the
pure planner choose, record the decision, and (``automation=automatic``)
start the moves.  Outcomes of earlier moves are collected first, so a
record is completed as soon as its migration ends.  ``nova-drs plan`` runs
the same period as a dry run: nothing started, nothing recorded.
"""

import copy
import datetime
import time

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler.conf import rebalance as rebalance_conf
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import planner
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import sources
from nova_drs_scheduler.rebalance.sources import base as sources_base

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class Rebalancer:
    """The live side of DRS; the scheduler manager owns one."""

    def __init__(self, host_manager, placement_client, servicegroup_api,
                 leader=None):
        """``leader``: a :class:`~.leader.ServiceLeader`-like object; None
        only for :meth:`dry_run` callers, which never act."""
        self.host_manager = host_manager
        self.placement_client = placement_client
        self.servicegroup_api = servicegroup_api
        self.leader = leader
        self.executor = executor.Executor()
        self.history = record.History(CONF.drs.history_size,
                                      CONF.drs.history_file)
        self._adopted = False
        self.reload()

    def reload(self) -> None:
        """Rebuild what options shape: the windows and the metric source.

        The windows continue from the newest record of
        ``[drs] history_file`` when there is one (a restarted scheduler
        keeps its counters); records and followed migrations are kept.
        """
        self.windows = rebalance_conf.metrics_windows(CONF)
        newest = _newest_file_record(CONF.drs.history_file)
        if newest:
            self.windows.restore(newest.get('windows'))
        self.source = sources.load(CONF)

    def run(self, context) -> dict:
        """One period; returns its decision record."""
        drs = CONF.drs
        config = rebalance_conf.planner_config(CONF)
        rec = record.new_record(drs.automation, config)
        self._adopt_unfinished()
        self.collect_outcomes()
        if drs.automation == 'off':
            rec['skipped'] = 'automation is off'
            return rec
        is_leader, why = self.leader.check(context)
        if not is_leader:
            LOG.debug('DRS rebalance skipped: %s', why)
            rec['skipped'] = why
            return rec
        try:
            plan, cloud = self._plan(context, config, rec, self.windows)
        except (sources_base.MetricsUnavailable, db_exc.DBError) as exc:
            # Nothing is judged on data we could not read; the next period
            # starts afresh.  One warning per skipped period.
            rec['skipped'] = f'period skipped: {exc}'
            LOG.warning('DRS rebalance period skipped, no move made: %s',
                        exc)
            self.history.add(rec)
            return rec
        for move in plan.moves:
            if drs.automation == 'automatic':
                _instance, cell = cloud.instances[move.instance]
                outcome = self.executor.start(rec['id'], move, cell)
            else:
                outcome = {'status': 'recommended',
                           'detail': 'automation is manual: not started'}
            record.set_outcome(rec, move.instance, outcome)
        self.history.add(rec)
        # Moves that already ended (or failed at once) complete the record.
        self.collect_outcomes()
        return rec

    def dry_run(self, context) -> dict:
        """The record a period would produce now; nothing acts or changes.

        Whatever ``automation`` says, and on a copy of the windows.
        """
        config = rebalance_conf.planner_config(CONF)
        rec = record.new_record('dry-run', config)
        plan, cloud = self._plan(context, config, rec,
                                 copy.deepcopy(self.windows))
        for move in plan.moves:
            record.set_outcome(rec, move.instance, {'status': 'dry-run'})
        # For ``explain INSTANCE``; too large for every period's record.
        rec['instance_hosts'] = {uuid: instance.host for uuid, (instance, _)
                                 in cloud.instances.items()}
        return rec

    def _adopt_unfinished(self) -> None:
        """Follow the moves an earlier process recorded as started: their
        outcome still belongs in their record. Once, at the first period;
        dry runs (the CLI) never do."""
        if self._adopted:
            return
        self._adopted = True
        for record_id, instance, migration, started in record.unfinished(
                self.history.recent()):
            self.executor.adopt(record_id, instance, migration,
                                timeutils.parse_isotime(started))

    def collect_outcomes(self) -> None:
        for record_id, instance, outcome in self.executor.poll(
                CONF.drs.migration_timeout):
            self.history.set_outcome(record_id, instance, outcome)

    def _plan(self, context, config, rec, windows):
        """Snapshot, plan and record them; returns ``(plan, cloud)``."""
        snapshot, cloud = self._snapshot(context, config, windows)
        plan = planner.plan(snapshot, candidates.LiveCandidates(
            context, self.host_manager, self.placement_client,
            cloud.instances))
        record.add_plan(rec, snapshot, plan)
        rec['attention'] = live.needs_attention(cloud)
        rec['windows'] = windows.export()
        return plan, cloud

    def _snapshot(self, context, config, windows):
        drs = CONF.drs
        horizon = max(drs.instance_cooldown, drs.quarantine_time,
                      drs.migration_timeout, drs.no_return_time)
        cloud = live.read_cloud(
            context, self.host_manager.enabled_cells, self.servicegroup_api,
            timeutils.utcnow() - datetime.timedelta(seconds=horizon))
        settings = {name: aggregate_settings.host_settings(
            name, rows.aggregates, config)
            for name, rows in cloud.hosts.items()}
        # A host whose compute service is down can neither give nor take an
        # instance: left unsampled, it is not judged, whatever its metrics
        # say, and its window restarts when it is back.
        samples = self.source.host_samples(context, sorted(
            name for name, rows in cloud.hosts.items() if rows.up))
        statuses = windows.update(
            time.time(), samples,
            {name: (s.cpu_threshold, s.ram_threshold)
             for name, s in settings.items()})
        # Only instances of hosts over their threshold may be chosen; not
        # measuring the others spares a diagnostics call per instance.
        over = {name for name, status in statuses.items() if status.counter}
        loads = self.source.instance_loads(context, [
            instance for instance, _cell in cloud.instances.values()
            if instance.host in over])
        snapshot = live.build_snapshot(
            cloud, settings, statuses, loads, config,
            drs.instance_cooldown, drs.quarantine_time, drs.no_return_time)
        return snapshot, cloud


def _newest_file_record(path: str | None) -> dict | None:
    if not path:
        return None
    try:
        records = record.read_file(path)
    except OSError:
        return None
    return records[-1] if records else None
