"""One rebalance period against the live cloud, from reading to acting.

Read Nova's rows, continue the metric windows stored in the DRS database,
build the Snapshot, let the pure planner choose, store the decision record
and (automation ``automatic``) start the moves, or (``manual``) store them
as recommendations for an operator to approve.  Only the leader acts, and
everything it knows lives in the DRS database, so a new leader continues
where the last one stopped.  ``nova-drs plan`` runs the same period as a
dry run: nothing started, nothing stored.
"""

import dataclasses
import datetime
import os
import time
import typing
from collections.abc import Mapping

from nova import objects
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler import from_conf
from nova_drs_scheduler import pacing
from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import relief
from nova_drs_scheduler.planning.goals import level
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import recommendations
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import sources
from nova_drs_scheduler.rebalance import standby
from nova_drs_scheduler.rebalance import telemetry
from nova_drs_scheduler.rebalance.sources import base as sources_base

CONF = conf.CONF
LOG = logging.getLogger(__name__)

#: ``trigger`` of the records of a drain's flow between periods.
FLOW = 'drain-flow'

#: What skips a period (or a flow step) with nothing judged or moved: the
#: data it needs could not be read.
_SKIPPING = (sources_base.MetricsUnavailable, db_exc.DBError,
             candidates.PlacementUnavailableError)

#: Outcomes of a move that ended, as the recommendation's state.
_ENDED = {'completed': db_store.COMPLETED}


class Rebalancer:
    """The live side of DRS; the scheduler manager owns one."""

    def __init__(self, host_manager, placement_client, servicegroup_api,
                 leader=None, store=None):
        """``leader``: a :class:`~.leader.ServiceLeader`-like object; None
        only for :meth:`dry_run` callers, which never act."""
        self.host_manager = host_manager
        self.placement_client = placement_client
        self.servicegroup_api = servicegroup_api
        self.leader = leader
        self.store = store or db_store.Store(CONF)
        self.executor = executor.Executor()
        self.telemetry = telemetry.Telemetry()
        #: Measured instance loads' trends, for the cost-benefit rule; in
        #: memory only: a new leader learns the swings again.
        self.trends = from_conf.load_trends(CONF)
        #: Power management's side of each period.
        self.power = standby.PowerPeriod(self.store, self.telemetry)
        #: Whether the last period was led here; adoption happens on the
        #: change to True.
        self._leading = False
        #: Whether a move ended since the last period or flow step read
        #: the cloud: a drain's flow plans only then.
        self._flow_due = False
        self.reload()

    def reload(self) -> None:
        """Re-read what options shape: the metric source."""
        self.source = sources.load(CONF)

    def prepare(self) -> None:
        """At service start: a usable DRS database (and, with power
        management on, power driver), or one clear error.

        An SQLite database (the default, one scheduler host) is created
        and upgraded here; any other must be made with ``nova-drs db
        sync``.  An old ``[drs] history_file`` is imported once.
        """
        try:
            if self.store.engine.dialect.name == 'sqlite':
                migration.sync(self.store.engine)
            self.store.check()
            path = CONF.drs.history_file
            if path:
                LOG.warning('[drs] history_file is deprecated: decision '
                            'records are in the DRS database now; remove '
                            'the option once imported.')
                if os.path.exists(path):
                    count = self.store.import_file(path,
                                                   CONF.drs.history_size)
                    LOG.info('Imported %d decision records from %s into '
                             'the DRS database.', count, path)
        except (db_exc.DBError, migration.NotMigratedError, OSError) as exc:
            raise conf.ConfigError(
                f'The DRS database ([drs_database] connection) is not '
                f'usable: {exc}. Create it and run "nova-drs db sync".'
            ) from exc
        self.power.prepare()

    def windows(self):
        """The windows and counters as the DRS database stores them."""
        windows = from_conf.metrics_windows(CONF)
        windows.restore(self.store.load_windows())
        return windows

    def run(self, context) -> dict:
        """One period; returns its decision record."""
        started = time.monotonic()
        rec = record.new_record(CONF.drs.automation,
                                from_conf.planner_config(CONF))
        # Which scheduler led the period: records of every leader share
        # one database.
        rec['scheduler'] = CONF.host
        if (CONF.drs.automation == 'off'
                and CONF.drs.power_management == 'off'
                and not self._in_maintenance()
                and not self._aggregates_enable(context)):
            return self._skipped(rec, 'automation is off', 'automation_off')
        is_leader, why = self.leader.check(context)
        self.telemetry.leader(is_leader)
        if not is_leader:
            self._leading = False
            LOG.debug('DRS rebalance skipped: %s', why)
            return self._skipped(rec, why, 'not_leader')
        try:
            # Requests in flight first (``pacing``), within half an
            # interval in all, so that the period ends before the next.
            with pacing.budget(CONF.drs.rebalance_interval / 2) as pace:
                self._lead(context, rec)
        except _SKIPPING as exc:
            # Nothing is judged on data we could not read, and the stored
            # windows stay as they were.  One warning per skipped period.
            LOG.warning('DRS rebalance period skipped, no move made: %s',
                        exc)
            rec['skipped'] = f'period skipped: {exc}'
            self.telemetry.skipped(
                'database' if isinstance(exc, db_exc.DBError) else
                'placement' if isinstance(
                    exc, candidates.PlacementUnavailableError) else
                'metrics')
            self._store_skipped(rec)
            return rec
        self.telemetry.ran(time.monotonic() - started)
        LOG.debug('DRS rebalance period gave way to requests for %.2f s',
                  pace.waited)
        return rec

    @staticmethod
    def _aggregates_enable(context) -> bool:
        """Whether an aggregate's ``drs_automation`` turns rebalancing on
        while ``[drs] automation`` is off (unreadable: no)."""
        try:
            return aggregate_settings.any_enabled(
                objects.AggregateList.get_all(context))
        except db_exc.DBError as exc:
            LOG.warning('DRS cannot read aggregates: %s', exc)
            return False

    def _in_maintenance(self) -> bool:
        """Whether a host is in maintenance or out of its pool for power
        management (unreadable: no): drains run, and standby hosts are
        followed, whatever the automation level."""
        try:
            return bool(self.store.maintenance_hosts() or
                        self.store.power_hosts())
        except db_exc.DBError as exc:
            LOG.warning('DRS cannot read the DRS database: %s', exc)
            return False

    def request_wake(self, reason: str) -> None:
        """A request found no valid host: when a host is in standby, ask
        the leader to wake one.  Never raises: the request's own error is
        what its caller must see."""
        try:
            if any(row['state'] == model.STANDBY
                   for row in self.store.power_hosts().values()):
                self.store.request_wake(None, reason)
                LOG.info('DRS power: a host in standby is to wake: %s',
                         reason)
        except db_exc.DBError as exc:
            LOG.warning('DRS power: no wake requested, the DRS database '
                        'is not usable: %s', exc)

    def _store_skipped(self, rec) -> None:
        """Keep a skipped period in the history when the DRS database
        itself is up (it may be what failed)."""
        try:
            self.store.add(dict(rec, hosts=[], moves=[]))
        except db_exc.DBError as exc:
            LOG.debug('Skipped period not stored: %s', exc)

    def _skipped(self, rec, why, reason):
        rec['skipped'] = why
        self.telemetry.skipped(reason)
        return rec

    def _lead(self, context, rec) -> None:
        # Before this period's samples are read: only moves completed by
        # then are checked against them.
        started = timeutils.utcnow()
        if not self._leading:
            self._adopt_unfinished()
            self._leading = True
        self.collect_outcomes()
        # Planned with every move ended so far: the flow waits for the
        # next end.
        self._flow_due = False
        drs = CONF.drs
        config = from_conf.planner_config(CONF)
        windows = self.windows()
        maintenance = self.store.maintenance_hosts()
        power_rows = self.store.power_hosts()
        period = self._plan(context, config, rec, windows, acting=True,
                            draining=set(maintenance),
                            power_rows=power_rows)
        plan, cloud, levels, approved = period[:4]
        self.store.save_windows(windows.export(), {
            verdict['host']: verdict for verdict in rec['hosts']})
        self.telemetry.hosts(rec['hosts'])
        #: [(move, what its outcomes carry)]
        starting = []
        for ident, move in approved:
            record.add_move(rec, move, {'status': 'starting',
                                        'recommendation': ident})
            starting.append((move, {'recommendation': ident}))
        for move in plan.moves:
            # A drain is started at any level: ``maintenance enter`` was
            # the operator's approval.
            if move.goal == model.DRAIN or levels.get(
                    move.source, drs.automation) == 'automatic':
                record.set_outcome(rec, move.instance,
                                   {'status': 'starting'})
                starting.append((move, {}))
            else:
                ident = self.store.recommend(rec['id'], record.move_of(
                    rec, move.instance))
                record.set_outcome(rec, move.instance, {
                    'status': 'recommended', 'recommendation': ident})
        # Power management's step (its decisions go in the record): after
        # the plan, whose drains empty the hosts entering standby.
        self.power.run(rec, period, power_rows, maintenance)
        self._start(rec, plan, cloud, starting)
        if maintenance:
            self._report_drains(rec, plan, cloud, maintenance)
        self._check_relief(rec['hosts'], started)

    def _start(self, rec, plan, cloud, starting) -> None:
        """Store the record, then start ``starting`` (``[(move, what its
        outcomes carry)]``) and record how each began."""
        # Stored before anything starts: a scheduler killed from here on
        # leaves a record its successor completes (_adopt_unfinished).
        self.store.add(rec)
        self.telemetry.moves('planned', len(plan.moves))
        for move, extra in starting:
            outcome = dict(self.executor.start(
                rec['id'], move, cloud.instances[move.instance].cell),
                **extra)
            self._outcome(rec['id'], move.instance, outcome)
            record.set_outcome(rec, move.instance, outcome)
        self.store.purge(CONF.drs.history_size, CONF.drs.history_max_age)
        _log_period(rec)
        # Moves that already ended (or failed at once) complete the record.
        self.collect_outcomes()

    def flow(self, context) -> dict | None:
        """Between periods: once a move this leader follows has ended and
        a host is draining (maintenance or standby), plan the drains alone
        at once and start their moves, so that a drain goes at the pace of
        its migrations, not of the period.

        Returns the step's decision record (``trigger`` ``drain-flow``;
        stored when it moves something or reports a host in maintenance),
        or None when nothing was to be planned.  Only the scheduler that led
        the last period acts, after checking it still leads; the windows
        are read, not advanced, and nothing but the drains is planned.
        """
        if not self._leading:
            return None
        self.collect_outcomes()
        if not self._flow_due:
            return None
        maintenance = self.store.maintenance_hosts()
        power_rows = self.store.power_hosts()
        if not (maintenance or standby.entering(power_rows)):
            return None
        is_leader, why = self.leader.check(context)
        if not is_leader:
            self._leading = False
            LOG.debug('DRS drain flow stopped: %s', why)
            return None
        self._flow_due = False
        config = from_conf.planner_config(CONF)
        rec = record.new_record(CONF.drs.automation, config)
        rec.update(scheduler=CONF.host, trigger=FLOW)
        try:
            with pacing.budget(CONF.drs.drain_flow_interval):
                period = self._plan(
                    context, config, rec, self.windows(), acting=True,
                    draining=set(maintenance), power_rows=power_rows,
                    goals=(model.DRAIN,))
                for move in period.plan.moves:
                    record.set_outcome(rec, move.instance,
                                       {'status': 'starting'})
                # Stored when it moves or reports a drain (whose report
                # names it); else history stays lean.
                if period.plan.moves or maintenance:
                    self._start(rec, period.plan, period.cloud,
                                [(move, {}) for move in period.plan.moves])
                if maintenance:
                    self._report_drains(rec, period.plan, period.cloud,
                                        maintenance)
        except _SKIPPING as exc:
            # The next move's end, or the next period, tries again.
            LOG.warning('DRS drain flow step skipped: %s', exc)
            return None
        return rec

    def _report_drains(self, rec, plan, cloud, maintenance) -> None:
        """Store where each drain stands, for ``maintenance status`` and
        any later leader; log each change of state."""
        names = {uuid: instance.display_name or ''
                 for uuid, instance in cloud.instances.items()}
        for found in plan.drains:
            if found.host not in maintenance:
                continue  # Entering standby: ``standby`` follows it.
            now = drain.state(found)
            self.store.report_maintenance(
                found.host, now, drain.progress(found, names, rec['id']))
            if now == maintenance[found.host]['state']:
                continue
            if now == drain.BLOCKED:
                LOG.warning('DRS maintenance: drain of %s is blocked: %s',
                            found.host, '; '.join(
                                f'{r.subject}: {r.detail or r.rule}'
                                for r in found.blockers))
            else:
                LOG.info('DRS maintenance: host %s is %s (%d instance(s) '
                         'left)', found.host, now, found.instances)
        self.telemetry.maintenance(self.store.maintenance())

    def _check_relief(self, verdicts: list[dict],
                      started: datetime.datetime) -> None:
        """Store what each move due for its relief check really bought
        (``relief``), from this period's verdicts.  Last in the period:
        a database error here is logged and leaves the moves due."""
        delay = CONF.drs.relief_check_delay
        # Three delays (or periods) with no sample of its hosts: given up.
        give_up = datetime.timedelta(
            seconds=3 * max(delay, CONF.drs.rebalance_interval))
        by_host = {verdict['host']: verdict for verdict in verdicts}
        try:
            for move in self.store.relief_due(
                    started - datetime.timedelta(seconds=delay)):
                result = relief_result(
                    move, by_host, started - move['completed_at'] > give_up)
                if result is None:
                    continue
                self.store.save_relief(move['record_id'], move['instance'],
                                       result)
                _log_relief(move, result)
                if result['status'] == db_store.CHECKED:
                    self.telemetry.relief_checked(result['held'])
        except db_exc.DBError as exc:
            LOG.warning('DRS relief checks left for the next period: %s',
                        exc)

    def dry_run(self, context) -> dict:
        """The record a period would produce now; nothing acts or changes.

        Whatever ``automation`` says, from the stored windows.
        """
        config = from_conf.planner_config(CONF)
        rec = record.new_record('dry-run', config)
        power_rows = self.store.power_hosts()
        period = self._plan(
            context, config, rec, self.windows(), acting=False,
            draining=set(self.store.maintenance_hosts()),
            power_rows=power_rows)
        plan, cloud = period.plan, period.cloud
        self.power.preview(rec, period.snapshot, period.candidates,
                           power_rows)
        for move in plan.moves:
            record.set_outcome(rec, move.instance, {'status': 'dry-run'})
        # For ``explain INSTANCE``; too large for every period's record.
        rec['instance_hosts'] = {uuid: instance.host for uuid, instance
                                 in cloud.instances.items()}
        rec['instance_names'] = {uuid: instance.display_name or ''
                                 for uuid, instance
                                 in cloud.instances.items()}
        return rec

    def _adopt_unfinished(self) -> None:
        """Follow the moves a previous leader recorded as starting or
        started: their outcome still belongs in their record."""
        for record_id, instance, outcome, created in self.store.unfinished():
            if outcome['status'] == 'started' and outcome.get('migration'):
                self.executor.adopt(
                    record_id, instance, outcome['migration'],
                    timeutils.parse_isotime(outcome.get('time')) if
                    outcome.get('time') else created)
            else:
                self._outcome(record_id, instance,
                              self.executor.adopt_starting(
                                  record_id, instance, created))

    def collect_outcomes(self) -> None:
        """Store the outcomes of the moves that ended; a drain's flow
        plans again after any (:meth:`flow`)."""
        for record_id, instance, outcome in self.executor.poll(
                CONF.drs.migration_timeout):
            self._outcome(record_id, instance, outcome)
            self._flow_due = True

    def _outcome(self, record_id: str, instance: str, outcome: dict) -> None:
        """Store a move's outcome; an ended one also ends its
        recommendation and counts in the metrics."""
        self.store.set_outcome(record_id, instance, outcome)
        status = outcome['status']
        self.telemetry.moves(status, 1)
        if status != 'started':
            self.store.close_started(
                instance, _ENDED.get(status, db_store.FAILED),
                outcome.get('error'))

    def _plan(self, context, config, rec, windows, acting, draining,
              power_rows, goals=planner.GOALS) -> 'Period':
        """Snapshot, (when acting) recommendations, plan, into ``rec``.

        ``draining``: the hosts in maintenance; ``power_rows``: the hosts
        out of their pool's service (``Store.power_hosts``), those entering
        standby drained too; ``goals``: the planner's, all but in a
        drain's flow, which neither reads every instance nor takes up
        approved recommendations.
        """
        snapshot, cloud, levels, late = self._snapshot(
            context, config, windows,
            all_instances=not acting and goals == planner.GOALS,
            draining=draining | standby.entering(power_rows),
            power_rows=power_rows)
        cands = candidates.LiveCandidates(
            context, self.host_manager, self.placement_client,
            cloud.instances)
        approved = []
        if acting and goals == planner.GOALS:
            recommendations.revalidate(self.store, snapshot)
            approved = recommendations.approved(self.store, snapshot, cands)
            for ident, _move in approved:
                self.store.transition(ident, db_store.STARTED,
                                      (db_store.APPROVED,))
            snapshot = recommendations.reserve(snapshot, approved)
        snapshot = unmeasured(snapshot, late)
        # What the period read lives until it ends: out of the way of
        # the full collections planning triggers (``freezing``).
        freeze = getattr(self.host_manager, 'freeze', None)
        if freeze is not None:
            freeze()
        plan = planner.plan(snapshot, cands, goals)
        record.add_plan(rec, snapshot, plan)
        record.add_not_relieved(rec, plan, late,
                                CONF.drs.instance_metrics_timeout)

        rec['attention'] = live.needs_attention(cloud)
        return Period(plan, cloud, levels, approved, snapshot, cands)

    def _snapshot(self, context, config, windows, all_instances,
                  draining=frozenset(), power_rows=None):
        """The period's snapshot, from hosts to the instances worth it.

        Returns ``(snapshot, cloud, automation levels, hosts whose
        instances were not measured in time)``.
        """
        drs = CONF.drs
        cooldown = from_conf.instance_cooldown(CONF)
        horizon = max(cooldown, drs.quarantine_time,
                      drs.migration_timeout, drs.no_return_time)
        cloud = live.read_cloud(
            context, self.host_manager.enabled_cells, self.servicegroup_api,
            timeutils.utcnow() - datetime.timedelta(seconds=horizon))
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
        if config.level_gap > 0 or powered:
            # With their power states: a pool with a host held out levels.
            hosts = standby.with_power(model.Snapshot(
                {name: live.host_snapshot(rows, statuses.get(name),
                                          settings[name], config)
                 for name, rows in cloud.hosts.items()}, (), config),
                power_rows or {}, draining)
        if config.level_gap > 0:
            # And those the planner may level from (doc/balancing.md).
            over |= level.leveling_sources(hosts.hosts, config)
        if powered:
            # And those power management may choose to empty for standby.
            over |= self.power.needs_instances(hosts)
        live.read_instances(
            context, cloud, None if all_instances else over,
            self._named_instances(cloud))
        measured = self.source.instance_loads_within(
            context, [instance for instance in cloud.instances.values()
                      if instance.host in over],
            drs.instance_metrics_timeout)
        self.trends.update(time.time(), measured.loads)
        snapshot = live.build_snapshot(
            cloud, settings, statuses, measured.loads, config,
            cooldown, drs.quarantine_time, drs.no_return_time,
            draining, self.trends, self.store.outcomes(
                executor.REFUSED, timeutils.utcnow() - datetime.timedelta(
                    seconds=drs.quarantine_time)), measured.waits)
        if power_rows:
            snapshot = standby.with_power(snapshot, power_rows, draining)
        return snapshot, cloud, levels, measured.late

    def _named_instances(self, cloud) -> set:
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
        (:mod:`~nova_drs_scheduler.planning.drain_plan`): built as
        :meth:`dry_run`'s period is, from the stored windows.
        """
        config = from_conf.planner_config(CONF)
        power_rows = self.store.power_hosts()
        draining = set(self.store.maintenance_hosts()) | set(hosts)
        snapshot, cloud, _, late = self._snapshot(
            context, config, self.windows(), all_instances=False,
            draining=draining | standby.entering(power_rows),
            power_rows=power_rows)
        return unmeasured(snapshot, late), candidates.LiveCandidates(
            context, self.host_manager, self.placement_client,
            cloud.instances)


class Period(typing.NamedTuple):
    """What :meth:`Rebalancer._plan` read and decided."""

    plan: model.Plan
    cloud: live.Cloud
    #: Automation level by host.
    levels: dict
    #: Approved recommendations starting now: ``[(id, move)]``.
    approved: list
    snapshot: model.Snapshot
    candidates: model.CandidatesFn


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


def _host_cpu(verdict: dict | None) -> tuple[float, float] | None:
    """A verdict's CPU percent and threshold; None when the host has no
    sample (or an unreadable one, logged)."""
    if verdict is None or verdict.get('cpu_percent') is None:
        return None
    try:
        return (float(verdict['cpu_percent']),
                float(verdict['cpu_threshold']))
    except (KeyError, TypeError, ValueError) as exc:
        LOG.warning('DRS relief check: host %s has no usable CPU and '
                    'threshold (%r): skipped', verdict.get('host'), exc)
        return None


def relief_result(move: dict, verdicts: dict, overdue: bool) -> dict | None:
    """The relief check of one due move (``Store.relief_due``) against
    ``verdicts`` ({host: this period's verdict}): ``relief.check``'s
    result with the hosts' thresholds, or why it could not be made.  None
    to try again next period: a host has no sample now, and ``overdue``
    is False."""
    expected = move['expected']
    if (not isinstance(expected, Mapping)
            or expected.get('source_cpu_before') is None):
        return {'status': db_store.NO_EXPECTATION}
    hosts = (move['source'], move['destination'])
    found = [_host_cpu(verdicts.get(host)) for host in hosts]
    if None in found:
        if not overdue:
            return None
        missing = [h for h, cpu in zip(hosts, found, strict=True)
                   if cpu is None]
        return {'status': db_store.NO_SAMPLE,
                'detail': f'no CPU sample of {" and ".join(missing)} '
                          'since the check was due'}
    (source_cpu, source_thr), (dest_cpu, dest_thr) = found
    try:
        checked = relief.check(expected, source_cpu, dest_cpu, source_thr,
                               dest_thr)
    except (KeyError, TypeError, ValueError) as exc:
        return {'status': db_store.NO_EXPECTATION,
                'detail': f'unreadable expectation: {exc!r}'}
    return dict(checked, status=db_store.CHECKED, source_threshold=source_thr,
                destination_threshold=dest_thr)


def _log_relief(move: dict, result: dict) -> None:
    """One line per check; a move with nothing to check at DEBUG (every
    move of the records older than the check)."""
    what = (f'DRS relief of move {move["instance"]} {move["source"]}->'
            f'{move["destination"]} (record {move["record_id"]})')
    if result['status'] == db_store.CHECKED:
        LOG.info('%s: source at %.1f%% (threshold %.1f%%), %.1f points '
                 'bought of %.1f expected; destination at %.1f%% '
                 '(threshold %.1f%%): expectation %s', what,
                 result['source_cpu'], result['source_threshold'],
                 result['relief_points'], result['expected_points'],
                 result['destination_cpu'], result['destination_threshold'],
                 'held' if result['held'] else 'not held')
    elif result['status'] == db_store.NO_SAMPLE:
        LOG.info('%s not checked: %s', what, result['detail'])
    else:
        LOG.debug('%s not checked: %s', what, result.get(
            'detail', 'the plan recorded no load before it'))


def _log_period(rec: dict) -> None:
    """One INFO line per period; every host's verdict at DEBUG."""
    for verdict in rec['hosts']:
        LOG.debug('DRS host %s: %s', verdict['host'], verdict['reason'])
    judged = [v for v in rec['hosts'] if v.get('cpu_percent') is not None]
    violated = sorted(v['host'] for v in rec['hosts'] if v['violated'])
    moves = ', '.join(
        f'{m["instance"]} {m["source"]}->{m["destination"]} '
        f'{m["outcome"]["status"]}' for m in rec['moves'])
    LOG.info('DRS period %s (%s): %d hosts, %d judged, %d over, '
             '%d violated%s; %d move(s)%s', rec['id'], rec['automation'],
             len(rec['hosts']), len(judged),
             sum(1 for v in judged if v.get('counter')), len(violated),
             f' ({", ".join(violated)})' if violated else '',
             len(rec['moves']), f': {moves}' if moves else '')
