"""One rebalance period against the live cloud, from reading to acting.

Read Nova's rows, continue the metric windows stored in the DRS database,
build the Snapshot, let the pure planner choose, store the decision record
and (automation ``automatic``) start the moves, or (``manual``) store them
as recommendations for an operator to approve.  Only the leader acts, and
everything it knows lives in the DRS database, so a new leader continues
where the last one stopped.  ``nova-drs plan`` runs the same period as a
dry run: nothing started, nothing stored.
"""

import os
import time

from nova import objects
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler import from_conf
from nova_drs_scheduler import pacing
from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import maintenance as maintenance_mod
from nova_drs_scheduler.rebalance import outcomes
from nova_drs_scheduler.rebalance import period_plan
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import relief_check
from nova_drs_scheduler.rebalance import snapshot_reader
from nova_drs_scheduler.rebalance import standby
from nova_drs_scheduler.rebalance import starting
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


class Rebalancer:
    """The live side of DRS; the scheduler manager owns one.

    It decides when a period runs and in what order its steps go; its
    collaborators read the cloud (:attr:`reader`), start the moves
    (:attr:`starter`), follow them to their end (:attr:`outcomes`) and
    manage power (:attr:`power`).
    """

    def __init__(self, host_manager, placement_client, servicegroup_api,
                 leader=None, store=None):
        """``leader``: a :class:`~.leader.ServiceLeader`-like object; None
        only for :meth:`dry_run` callers, which never act."""
        self.leader = leader
        self.store = store or db_store.Store(CONF)
        self.telemetry = telemetry.Telemetry()
        #: Power management's side of each period.
        self.power = standby.PowerPeriod(self.store, self.telemetry)
        self.reader = snapshot_reader.SnapshotReader(
            host_manager, placement_client, servicegroup_api, self.store,
            self.power)
        self.outcomes = outcomes.Outcomes(self.store, self.telemetry)
        self.starter = starting.Starter(self.store, self.telemetry,
                                        self.outcomes)

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
            self.outcomes.following = False
            self.power.stand_down()
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
            return bool(maintenance_mod.draining(
                self.store.maintenance_hosts()) or self.store.power_hosts())
        except db_exc.DBError as exc:
            LOG.warning('DRS cannot read the DRS database: %s', exc)
            return False

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
        # Planned with every move ended so far: the flow waits for the
        # next end.
        self.outcomes.lead()
        windows = self.reader.windows()
        rows = self.store.maintenance_hosts()
        # Hosts waiting in the queue are not drained: ``exit`` starts them.
        maintenance = maintenance_mod.draining(rows)
        power_rows = self.store.power_hosts()
        # Measured with the period's instances: their loads at the check.
        checking = relief_check.checking(self.store, started)
        period = period_plan.plan(
            self.reader, context, from_conf.planner_config(CONF), rec,
            windows, acting=True, draining=set(maintenance),
            power_rows=power_rows, queued=maintenance_mod.queued(rows),
            checking=checking)
        self.store.save_windows(windows.export(), {
            verdict['host']: verdict for verdict in rec['hosts']})
        self.telemetry.hosts(rec['hosts'])
        moving = self.starter.dispatch(rec, period.plan, period.levels,
                                       period.approved)
        # Power management's step (its decisions go in the record): after
        # the plan, whose drains empty the hosts entering standby.
        self.power.run(rec, period, power_rows, maintenance)
        self.starter.start(rec, period.plan, period.cloud, moving)
        if maintenance:
            maintenance_mod.report_drains(self.store, self.telemetry, rec,
                                          period.plan, period.cloud,
                                          maintenance)
        relief_check.check_due(self.store, self.telemetry, rec['hosts'],
                               started, period.cloud.loads)

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
        if not self.outcomes.following:
            return None
        self.outcomes.collect()
        if not self.outcomes.ended:
            return None
        rows = self.store.maintenance_hosts()
        maintenance = maintenance_mod.draining(rows)
        power_rows = self.store.power_hosts()
        if not (maintenance or standby.entering(power_rows)):
            return None
        is_leader, why = self.leader.check(context)
        if not is_leader:
            self.outcomes.following = False
            self.power.stand_down()
            LOG.debug('DRS drain flow stopped: %s', why)
            return None
        self.outcomes.ended = False
        config = from_conf.planner_config(CONF)
        rec = record.new_record(CONF.drs.automation, config)
        rec.update(scheduler=CONF.host, trigger=FLOW)
        try:
            with pacing.budget(CONF.drs.drain_flow_interval):
                period = period_plan.plan(
                    self.reader, context, config, rec, self.reader.windows(),
                    acting=True, draining=set(maintenance),
                    power_rows=power_rows, goals=(model.DRAIN,),
                    queued=maintenance_mod.queued(rows))
                for move in period.plan.moves:
                    record.set_outcome(rec, move.instance,
                                       {'status': 'starting'})
                # Stored when it moves or reports a drain (whose report
                # names it); else history stays lean.
                if period.plan.moves or maintenance:
                    self.starter.start(
                        rec, period.plan, period.cloud,
                        [(move, {}) for move in period.plan.moves])
                if maintenance:
                    maintenance_mod.report_drains(
                        self.store, self.telemetry, rec, period.plan,
                        period.cloud, maintenance)
        except _SKIPPING as exc:
            # The next move's end, or the next period, tries again.
            LOG.warning('DRS drain flow step skipped: %s', exc)
            return None
        return rec

    def dry_run(self, context) -> dict:
        """The record a period would produce now; nothing acts or changes.

        Whatever ``automation`` says, from the stored windows.
        """
        config = from_conf.planner_config(CONF)
        rec = record.new_record('dry-run', config)
        power_rows = self.store.power_hosts()
        rows = self.store.maintenance_hosts()
        period = period_plan.plan(
            self.reader, context, config, rec, self.reader.windows(),
            acting=False, draining=set(maintenance_mod.draining(rows)),
            power_rows=power_rows, queued=maintenance_mod.queued(rows))
        self.power.preview(rec, period.snapshot, period.candidates,
                           power_rows)
        for move in period.plan.moves:
            record.set_outcome(rec, move.instance, {'status': 'dry-run'})
        # For ``explain INSTANCE``; too large for every period's record.
        instances = period.cloud.instances
        rec['instance_hosts'] = {uuid: instance.host for uuid, instance
                                 in instances.items()}
        rec['instance_names'] = {uuid: instance.display_name or ''
                                 for uuid, instance in instances.items()}
        return rec
