"""One rebalance period against the live cloud, from reading to acting.

Read Nova's rows, advance the metric windows, build the Snapshot, let the
pure planner choose, record the decision, and (``automation=automatic``)
start the moves.  Outcomes of earlier moves are collected first, so a
record is completed as soon as its migration ends.
"""

import datetime
import time

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

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class Rebalancer:
    """The live side of DRS; the scheduler manager owns one."""

    def __init__(self, host_manager, placement_client, servicegroup_api,
                 leader):
        self.host_manager = host_manager
        self.placement_client = placement_client
        self.servicegroup_api = servicegroup_api
        self.leader = leader
        self.reload()

    def reload(self) -> None:
        """(Re)build what depends on options: windows, source, history."""
        drs = CONF.drs
        self.windows = rebalance_conf.metrics_windows(CONF)
        self.source = sources.load(CONF)
        self.executor = executor.Executor(drs.migration_timeout)
        self.history = record.History(drs.history_size, drs.history_file)

    def run(self, context) -> dict:
        """One period; returns its decision record."""
        drs = CONF.drs
        config = rebalance_conf.planner_config(CONF)
        rec = record.new_record(drs.automation, config)
        self.collect_outcomes()
        if drs.automation == 'off':
            rec['skipped'] = 'automation is off'
            return rec
        is_leader, why = self.leader.check(context)
        if not is_leader:
            LOG.debug('DRS rebalance skipped: %s', why)
            rec['skipped'] = why
            return rec
        snapshot, cloud = self._snapshot(context, config)
        plan = planner.plan(snapshot, candidates.LiveCandidates(
            context, self.host_manager, self.placement_client,
            cloud.instances))
        record.add_plan(rec, snapshot, plan)
        if drs.automation == 'automatic':
            for move in plan.moves:
                _instance, cell = cloud.instances[move.instance]
                record.set_outcome(rec, move.instance, self.executor.start(
                    rec['id'], move, cell))
        else:
            for move in plan.moves:
                record.set_outcome(rec, move.instance, {
                    'status': 'recommended',
                    'error': 'automation is manual: not started'})
        self.history.add(rec)
        # Moves that already ended (or failed at once) complete the record.
        self.collect_outcomes()
        return rec

    def collect_outcomes(self) -> None:
        for record_id, instance, outcome in self.executor.poll():
            self.history.set_outcome(record_id, instance, outcome)

    def _snapshot(self, context, config):
        drs = CONF.drs
        horizon = max(drs.instance_cooldown, drs.quarantine_time,
                      drs.migration_timeout)
        cloud = live.read_cloud(
            context, self.host_manager.enabled_cells, self.servicegroup_api,
            timeutils.utcnow() - datetime.timedelta(seconds=horizon))
        settings = {name: aggregate_settings.host_settings(
            name, rows.aggregates, config)
            for name, rows in cloud.hosts.items()}
        samples = self.source.host_samples(context, sorted(cloud.hosts))
        statuses = self.windows.update(
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
            drs.instance_cooldown, drs.quarantine_time)
        return snapshot, cloud
