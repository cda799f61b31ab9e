"""A period's Snapshot, read from the live cloud and the DRS database.

Nova's rows, the metric windows continued from the stored ones, the
aggregates' settings and the instances worth measuring become the pure
planner's :class:`~nova_drs_scheduler.planning.model.Snapshot`.  Only the
instances of hosts that may give one are read and measured: a period
stays cheap on a large cloud.
"""

import dataclasses
import datetime
import time

from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler import from_conf
from nova_drs_scheduler import pacing
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning.goals import level
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import maintenance
from nova_drs_scheduler.rebalance import recommendations
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import relief_check
from nova_drs_scheduler.rebalance import sources
from nova_drs_scheduler.rebalance import standby

CONF = conf.CONF


class SnapshotReader:
    """Reads the cloud into Snapshots; the rebalancer owns one."""

    def __init__(self, host_manager, placement_client, servicegroup_api,
                 store, power: standby.PowerPeriod):
        #: Replaced by the scheduler manager when the service swaps in
        #: another host manager.
        self.host_manager = host_manager
        self.placement_client = placement_client
        self.servicegroup_api = servicegroup_api
        self.store = store
        #: Asked which instances power management may need moved.
        self.power = power
        #: Measured instance loads' trends, for the cost-benefit rule; in
        #: memory only: a new leader learns the swings again.
        self.trends = from_conf.load_trends(CONF)
        self.reload()

    def reload(self) -> None:
        """Re-read what options shape: the metric source."""
        self.source = sources.load(CONF)

    def windows(self) -> metrics.MetricsWindows:
        """The windows and counters as the DRS database stores them."""
        windows = from_conf.metrics_windows(CONF)
        windows.restore(self.store.load_windows())
        return windows

    def candidates(self, context, cloud: live.Cloud
                   ) -> candidates.LiveCandidates:
        """The planner's destination callback over ``cloud``'s instances."""
        return candidates.LiveCandidates(
            context, self.host_manager, self.placement_client,
            cloud.instances)

    def read(self, context, config: model.PlannerConfig,
             windows: metrics.MetricsWindows, all_instances: bool,
             draining=frozenset(), power_rows=None,
             queued=frozenset(), checking=frozenset()
             ) -> tuple[model.Snapshot, live.Cloud, dict, frozenset]:
        """The period's snapshot, from hosts to the instances worth it.

        ``draining``: the hosts in maintenance; those entering standby
        (``power_rows``) drain too; ``queued``: the hosts waiting in the
        maintenance queue (still in service, a drain's last resort);
        ``checking``: instances to measure too, wherever they are (those
        of the moves whose relief is checked by the next period,
        :func:`.relief_check.checking`).  Every host's ``loads_stayed``
        comes from the relief checks stored.  Returns ``(snapshot,
        cloud, automation levels, hosts whose instances were not
        measured in time)``; ``cloud.loads`` holds the loads measured.
        """
        draining = set(draining) | standby.entering(power_rows or {})
        drs = CONF.drs
        cooldown = from_conf.instance_cooldown(CONF)
        horizon = max(cooldown, drs.quarantine_time,
                      drs.migration_timeout, drs.no_return_time)
        cloud = live.read_cloud(
            context, self.host_manager.enabled_cells, self.servicegroup_api,
            timeutils.utcnow() - datetime.timedelta(seconds=horizon))
        # What leveling learns from the relief checks (doc/balancing.md).
        stayed = relief_check.loads_stayed(self.store, timeutils.utcnow())
        settings = {}
        levels = {}
        for name, rows in pacing.paced(cloud.hosts.items()):
            found = aggregate_settings.host_settings(
                name, rows.aggregates, config, drs.power_management)
            levels[name] = found.automation or drs.automation
            if levels[name] == 'off':
                found = dataclasses.replace(
                    found, automation_off=True)
            settings[name] = found
        # A host whose compute service is down can neither give nor take an
        # instance: left unsampled, it is not judged, whatever its metrics
        # say, and its window restarts when it is back.
        samples = self.source.host_samples_of(context, {
            name: rows for name, rows in cloud.hosts.items() if rows.up})
        windows.restart(draining)
        statuses = windows.update(
            time.time(), samples,
            {name: (s.cpu_threshold, s.ram_threshold)
             for name, s in settings.items()})
        # Only instances of hosts over their threshold may be chosen: the
        # others are neither read nor measured (a diagnostics call per
        # instance), except those a DRS migration or an open
        # recommendation names.
        over = {name for name, status in statuses.items() if status.counter}
        # And those of the hosts in maintenance, every one of which leaves.
        draining = draining & cloud.hosts.keys()
        over |= draining
        powered = bool(power_rows) or any(
            found.power_level != 'off' for found in settings.values())
        # Hosts power management woke lately: their pools level too.
        woken = standby.woken_ago(self.store, timeutils.utcnow(),
                                  config.level_after_wake) \
            if powered and config.level_gap > 0 else {}
        if config.level_gap > 0 or powered:
            # With their power states: a pool with a host held out, or one
            # woken lately, levels.
            hosts = standby.with_power(model.Snapshot(
                {name: live.host_snapshot(rows, statuses.get(name),
                                          settings[name], config,
                                          queued=name in queued,
                                          loads_stayed=stayed.get(name))
                 for name, rows in cloud.hosts.items()}, (), config),
                power_rows or {}, draining, woken)
        if config.level_gap > 0:
            # And those the planner may level from (doc/balancing.md).
            over |= level.leveling_sources(hosts.hosts, config)
        if powered:
            # And those power management may choose to empty for standby.
            over |= self.power.needs_instances(hosts)
        live.read_instances(
            context, cloud, None if all_instances else over,
            self._named_instances(cloud) | set(checking))
        measured = self.source.instance_loads_within(
            context, [instance for instance in cloud.instances.values()
                      if instance.host in over or instance.uuid in checking],
            drs.instance_metrics_timeout)
        cloud.loads = dict(measured.loads)
        self.trends.update(time.time(), measured.loads)
        snapshot = live.build_snapshot(
            cloud, settings, statuses, measured.loads, config,
            cooldown, drs.quarantine_time, drs.no_return_time,
            draining, self.trends, self.store.outcomes(
                executor.REFUSED, timeutils.utcnow() - datetime.timedelta(
                    seconds=drs.quarantine_time)), measured.waits,
            queued, stayed)
        if power_rows or woken:
            snapshot = standby.with_power(snapshot, power_rows or {},
                                          draining, woken)
        return snapshot, cloud, levels, measured.late

    def _named_instances(self, cloud: live.Cloud) -> set:
        """Instances of DRS migrations (ERROR after one needs attention)
        and of open recommendations (re-validated each period)."""
        named = {migration.instance_uuid for migration in cloud.migrations
                 if migration.user_id == executor.DRS_USER}
        named.update(rec['instance'] for rec in recommendations.migrations(
            self.store, (db_store.PENDING, db_store.APPROVED)))
        return named

    def maintenance_snapshot(self, context, hosts: list[str]
                             ) -> tuple[model.Snapshot, model.CandidatesFn]:
        """The snapshot a period would plan with ``hosts`` in maintenance
        too, and its candidates callback; nothing acts or changes.

        For ``nova-drs maintenance plan``
        (:mod:`~nova_drs_scheduler.planning.drain_plan`): built as a dry
        run's period is, from the stored windows.
        """
        config = from_conf.planner_config(CONF)
        rows = self.store.maintenance_hosts()
        snapshot, cloud, _, late = self.read(
            context, config, self.windows(), all_instances=False,
            draining=set(maintenance.draining(rows)) | set(hosts),
            power_rows=self.store.power_hosts(),
            queued=maintenance.queued(rows) - set(hosts))
        return unmeasured(snapshot, late), self.candidates(context, cloud)


def unmeasured(snapshot: model.Snapshot, late) -> model.Snapshot:
    """The snapshot with the instances of ``late`` hosts blocked, so those
    hosts are not relieved on loads that were not measured (approved
    recommendations, an operator's choice, are already reserved).  A host
    in maintenance empties whatever its instances' loads: they keep their
    vCPU shares of its load (``live.fallback_loads``)."""
    late = {host for host in late if not snapshot.hosts[host].draining}
    if not late:
        return snapshot
    return dataclasses.replace(snapshot, instances=[
        dataclasses.replace(inst, blocked=record.NOT_MEASURED_BLOCK)
        if inst.host in late and inst.blocked is None else inst
        for inst in snapshot.instances])
