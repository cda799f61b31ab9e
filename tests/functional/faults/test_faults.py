"""Faults during rebalancing, in Nova's harness: nothing lost, nothing
repeated, the scheduler keeps serving.

Each scenario injects one fault (a migration failing on its source or its
destination, a migration that never ends, a scheduler dying mid-period, a
database error, a compute going down, Prometheus down or silent) and
checks what the operator relies on afterwards: the instance ACTIVE on one
host with exactly its flavor allocated there, a decision record saying what
happened, and no move repeated.
"""

import socket
import threading
import time
from unittest import mock

import fixtures
from nova import exception
from nova.compute import rpcapi as compute_rpcapi
from oslo_db import exception as db_exc

from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live
from tests import realservers
from tests.functional.rebalance import base

#: host1 hot; host3, the coolest, is where its instance goes.
HOT = {'host1': 90, 'host2': 30, 'host3': 10}
#: One instance using 4.5 of host1's 10 cores: moving it cures host1.
LOAD = 4.5
#: The warning each skipped period logs, once.
SKIP_WARNING = 'DRS rebalance period skipped, no move made'


class HeldLiveMigration(fixtures.Fixture):
    """The fake driver's live migration runs until the test ends it.

    The migration stays ``running`` in Nova, as a real one stuck on a slow
    network would; :meth:`release` ends it through the driver's own post or
    recover callback.  Released at cleanup, before the base class waits for
    migrating instances, so a failing test never leaves a compute thread
    blocked.
    """

    def _setUp(self):
        self._go = threading.Event()
        self._succeed = False
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.FakeDriver.live_migration', self._live_migration))
        self.addCleanup(self.release, succeed=False)

    def release(self, succeed: bool) -> None:
        if not self._go.is_set():
            self._succeed = succeed
            self._go.set()

    def _live_migration(self, _driver, context, instance, dest, post_method,
                        recover_method, block_migration=False,
                        migrate_data=None):
        self._go.wait(timeout=120)
        if self._succeed:
            post_method(context, instance, dest, block_migration,
                        migrate_data)
        else:
            recover_method(context, instance, dest, migrate_data)


class FaultTestBase(base.RebalanceTestBase):
    """One instance on a hot host1; ``stabilization`` 1 acts at once."""

    DRS = {'stabilization': 1}

    def _hot_instance(self):
        """Boot the instance DRS will want to move off host1."""
        server = self._boot('host1')
        return server, {server: LOAD}

    def _wait_for_migration_status(self, uuid, status):
        for _attempt in range(100):
            migrations = self._migrations(uuid)
            if migrations and migrations[0].status == status:
                return migrations[0]
            time.sleep(0.1)
        self.fail(f'migration of {uuid} never reached {status}')

    def _assert_intact_on(self, server, host, migration):
        """ACTIVE on ``host`` only, with exactly its flavor allocated there.

        Nothing is left against any other host, nor held by the
        migration's own consumer (where Nova parks the source allocation
        while a live migration runs).
        """
        found = self._server(server)
        self.assertEqual(('ACTIVE', None, host), (
            found['status'], found['OS-EXT-STS:task_state'],
            found['OS-EXT-SRV-ATTR:host']))
        self.assertFlavorMatchesAllocation(
            self.flavor, server, self._get_provider_uuid_by_host(host))
        self.assertEqual({}, self._get_allocations_by_server_uuid(
            migration.uuid))
        for other in set(self.HOSTS) - {host}:
            self.assertRequestMatchesUsage(
                {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0},
                self._get_provider_uuid_by_host(other))

    def _assert_blocked(self, record, server, why):
        """Violated host, no move, and the instance blocked for ``why``."""
        self.assertTrue(self._verdict(record, 'host1')['violated'])
        self.assertEqual([], record['moves'])
        self.assertIn(why, record['blocked'][server])

    def _restart_scheduler(self):
        """Stop the scheduler service and start a new one (a new manager,
        rebalancer and executor: nothing kept in memory survives)."""
        self.scheduler_service.stop()
        self.scheduler_service = self.start_service('scheduler')


class MidMigrationFailureTest(FaultTestBase):
    """A live migration that fails after Nova started it, on either side."""

    def _fail_one_move(self, target, replacement):
        """Run the move with ``target`` replaced; check nothing is lost."""
        server, loads = self._hot_instance()
        with mock.patch(target, replacement):
            record = self._settle(self._period(HOT, loads))
        [move] = record['moves']
        self.assertEqual(('host3', 'failed'), (
            move['destination'], move['outcome']['status']))
        [migration] = self._migrations(server)
        self.assertIn(migration.status, executor.FAILED)
        self.assertEqual(migration.uuid, move['outcome']['migration'])
        self._assert_intact_on(server, 'host1', migration)
        # The next period, host1 still violated: quarantined, not retried.
        self._assert_blocked(self._period(HOT, loads), server, 'quarantine')
        self.assertEqual(1, len(self._migrations(server)))

    def test_failure_on_the_source(self):
        # As libvirt reports a failed transfer: the driver calls its
        # recover method, which rolls back on the source.
        def fail(_driver, context, instance, dest, post_method,
                 recover_method, block_migration=False, migrate_data=None):
            recover_method(context, instance, dest, migrate_data)

        self._fail_one_move('nova.virt.fake.FakeDriver.live_migration', fail)

    def test_failure_on_the_destination(self):
        ran_on = []

        def fail(driver, *args, **kwargs):
            ran_on.append(driver._host)
            raise exception.MigrationError(reason='injected on destination')

        self._fail_one_move('nova.virt.fake.FakeDriver.pre_live_migration',
                            fail)
        self.assertEqual(['host3'], ran_on)


class HungMigrationTest(FaultTestBase):
    """A migration that never ends: followed until the timeout, then left
    to Nova, and its instance not moved while it runs."""

    DRS = dict(FaultTestBase.DRS, migration_timeout=1)

    def test_times_out_blocks_then_quarantines(self):
        held = self.useFixture(HeldLiveMigration())
        server, loads = self._hot_instance()
        first = self._period(HOT, loads)
        self.assertEqual('started', first['moves'][0]['outcome']['status'])
        self._wait_for_migration_status(server, 'running')
        time.sleep(1.2)  # Past [drs] migration_timeout.

        record = self._period(HOT, loads)
        store = self.scheduler_service.manager.rebalancer.store
        outcome = store.get(first['id'])['moves'][0]['outcome']
        self.assertEqual('timed_out', outcome['status'])
        self.assertIn('still running', outcome['error'])
        # Nova still reports it in progress: in flight, instance blocked.
        self._assert_blocked(record, server, 'migrating')
        self.assertEqual({'total': 1, 'by_host': {'host1': 1, 'host3': 1}},
                         record['inflight'])

        # Nova finally gives up: the instance is back, and quarantined.
        held.release(succeed=False)
        migration = self._wait_for_migration_end(server)
        self._assert_intact_on(server, 'host1', migration)
        self._assert_blocked(self._period(HOT, loads), server, 'quarantine')
        self.assertEqual(1, len(self._migrations(server)))


class _KilledError(Exception):
    """The scheduler process dying."""


class SchedulerRestartTest(FaultTestBase):
    """The scheduler dies in the middle of a period, while the migration it
    just started runs; a new one continues without repeating anything."""

    DRS = {'stabilization': 2}

    def test_restart_loses_nothing_and_repeats_nothing(self):
        held = self.useFixture(HeldLiveMigration())
        server, loads = self._hot_instance()
        self.assertEqual(1, self._verdict(self._period(HOT, loads),
                                          'host1')['counter'])

        # Dies right after starting the move, before storing its outcome:
        # the record was stored first, with the move "starting".
        real_start = executor.Executor.start

        def start_then_die(self_, *args):
            real_start(self_, *args)
            raise _KilledError()

        with mock.patch.object(executor.Executor, 'start', start_then_die):
            self.assertRaises(_KilledError, self._period, HOT, loads)
        self._wait_for_migration_status(server, 'running')
        store = self.scheduler_service.manager.rebalancer.store
        killed = store.recent()[-1]
        self.assertEqual('starting', killed['moves'][0]['outcome']['status'])
        self._restart_scheduler()

        # Counters continue from the stored windows (a fresh start would
        # say 1); Nova's record of the running migration blocks the
        # instance, so the violated host does not start it again, and the
        # new process follows the move its predecessor was starting.
        record = self._period(HOT, loads)
        self.assertEqual(3, self._verdict(record, 'host1')['counter'])
        self.assertEqual('started', store.get(killed['id'])['moves'][0][
            'outcome']['status'])
        record = self._period(HOT, loads)
        self.assertEqual(4, self._verdict(record, 'host1')['counter'])
        self._assert_blocked(record, server, 'migrating')
        self.assertEqual(1, record['inflight']['total'])

        held.release(succeed=True)
        migration = self._wait_for_migration_end(server)
        self.assertEqual('completed', migration.status)
        self._assert_intact_on(server, 'host3', migration)
        self._period(HOT, loads)
        outcome = self.scheduler_service.manager.rebalancer.store.get(
            killed['id'])['moves'][0]['outcome']
        self.assertEqual(('completed', migration.uuid),
                         (outcome['status'], outcome['migration']))

        # Now its new host is hot: a restart between two periods keeps
        # host3's counter, and the cooldown (from Nova's record) holds.
        hot3 = {'host1': 10, 'host2': 30, 'host3': 90}
        self.assertEqual(1, self._verdict(self._period(hot3, loads),
                                          'host3')['counter'])
        self._restart_scheduler()
        record = self._period(hot3, loads)
        self.assertTrue(self._verdict(record, 'host3')['violated'])
        self.assertEqual([], record['moves'])
        self.assertIn('cooldown', record['blocked'][server])
        self.assertEqual(1, len(self._migrations()))


    def test_restarted_scheduler_completes_the_record(self):
        # The period is recorded with the move started; the scheduler then
        # restarts while the migration runs. The new process follows it
        # from the record and writes its outcome there.
        held = self.useFixture(HeldLiveMigration())
        server, loads = self._hot_instance()
        self._period(HOT, loads)
        started = self._period(HOT, loads)
        [move] = started['moves']
        self.assertEqual('started', move['outcome']['status'])
        self._wait_for_migration_status(server, 'running')
        self._restart_scheduler()

        held.release(succeed=True)
        migration = self._wait_for_migration_end(server)
        self._period(HOT, loads)
        store = self.scheduler_service.manager.rebalancer.store
        outcome = store.get(started['id'])['moves'][0]['outcome']
        self.assertEqual(('completed', migration.uuid, 'host3'), (
            outcome['status'], outcome['migration'],
            outcome['destination']))


class DatabaseErrorTest(FaultTestBase):
    """The database failing for one period."""

    def test_period_skipped_with_one_warning_then_next_moves(self):
        server, loads = self._hot_instance()
        with mock.patch.object(
                live, 'read_cloud',
                side_effect=db_exc.DBConnectionError('injected outage')), \
                self.assertLogs(level='WARNING') as logs:
            skipped = self._period(HOT, loads)
        self.assertIn('period skipped', skipped['skipped'])
        self.assertIn('injected outage', skipped['skipped'])
        self.assertEqual([], skipped['moves'])
        self.assertEqual(1, len(logs.records), logs.output)
        self.assertIn(SKIP_WARNING, logs.output[0])
        store = self.scheduler_service.manager.rebalancer.store
        self.assertEqual(skipped['id'], store.recent()[-1]['id'])

        record = self._settle(self._period(HOT, loads))
        self.assertEqual(1, self._verdict(record, 'host1')['counter'])
        self.assertEqual([(server, 'host3', 'completed')], [
            (m['instance'], m['destination'], m['outcome']['status'])
            for m in record['moves']])


class ComputeDownTest(FaultTestBase):
    """A compute whose service is down (stopped and forced down)."""

    HOSTS = ('host1', 'host2', 'host3', 'host4')

    def _take_down(self, host):
        self.computes[host].stop()
        previous = self.admin_api.microversion
        self.admin_api.microversion = '2.53'  # Service ids become uuids.
        try:
            [service] = self.admin_api.get_services(binary='nova-compute',
                                                    host=host)
            self.admin_api.put_service(service['id'], {'forced_down': True})
        finally:
            self.admin_api.microversion = previous

    def test_down_hosts_neither_judged_nor_destinations(self):
        server, loads = self._hot_instance()
        stranded = self._boot('host4')
        loads[stranded] = LOAD
        for host in ('host3', 'host4'):
            self._take_down(host)
        # host3 would be the coolest destination, host4 the hottest source.
        hosts = {'host1': 90, 'host2': 20, 'host3': 5, 'host4': 95}
        record = self._settle(self._period(hosts, loads))

        [move] = record['moves']
        self.assertEqual((server, 'host2', 'completed'), (
            move['instance'], move['destination'],
            move['outcome']['status']))
        # Kept out either by Nova's ComputeFilter, when the scheduler's
        # service row already shows it down (seen on Nova 33), or else by
        # our rule for hosts without fresh metrics.
        self.assertIn(self._rejection(move, 'host3')['rule'],
                      ('stale-metrics', 'ComputeFilter'))
        for host in ('host3', 'host4'):
            verdict = self._verdict(record, host)
            self.assertIn('not judged', verdict['reason'])
            self.assertFalse(verdict['violated'])
        self.assertEqual('host4', self._host_of(stranded))
        self.assertEqual([], list(self._migrations(stranded)))


class HungDiagnosticsTest(FaultTestBase):
    """One compute never answers instance diagnostics (the ``nova``
    source's RPC): the period ends at ``[drs] instance_metrics_timeout``,
    that host is not relieved and the record says so; the other is."""

    DRS = {'stabilization': 1, 'metrics_source': 'nova',
           'instance_metrics_timeout': 1.0}

    def test_late_host_not_relieved_the_other_is(self):
        cool = [self._boot('host1') for _ in range(2)]
        hung = [self._boot('host2') for _ in range(2)]
        release, answered = threading.Event(), threading.Event()
        self.addCleanup(release.set)  # Before the services stop.
        call = compute_rpcapi.ComputeAPI.get_instance_diagnostics

        def no_answer_from_host2(rpcapi, ctxt, instance):
            # As a compute (or its queue) that never replies: the call
            # blocks in the caller until rpc_response_timeout.
            if instance.host == 'host2':
                release.wait(60)
                answered.set()
            return call(rpcapi, ctxt, instance=instance)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.rpcapi.ComputeAPI.get_instance_diagnostics',
            no_answer_from_host2))
        self._publish_cpu({'host1': 90, 'host2': 90, 'host3': 10})
        started = time.monotonic()
        record = self.scheduler_service.manager.run_rebalance(
            self._admin_context())
        # The period did not wait for host2: its call is still hanging
        # (a wall clock bound would depend on the machine's load).
        self.assertFalse(answered.is_set())
        self.assertLess(time.monotonic() - started, 60)
        self.assertTrue(self._verdict(record, 'host2')['violated'])
        [move] = record['moves']
        self.assertEqual('host1', move['source'])
        self.assertIn(move['instance'], cool)
        [entry] = record['not_relieved']
        self.assertEqual(('host2', 'instance_metrics_timeout'),
                         (entry['subject'], entry['rule']))
        self.assertIn('not measured within 1 s', entry['detail'])
        for uuid in hung:
            self.assertIn('instance_metrics_timeout',
                          record['blocked'][uuid])
        self.assertTrue(any('host2' in note for note in record['notes']))
        self._settle(record)
        self.assertEqual(['host2', 'host2'],
                         [self._host_of(uuid) for uuid in hung])


class PrometheusOutageTest(FaultTestBase):
    """Prometheus down or silent: no moves, one warning a period, and the
    scheduler still schedules."""

    DRS = dict(FaultTestBase.DRS, metrics_source='prometheus')

    def _check_outage(self):
        server, loads = self._hot_instance()
        for _period in range(2):
            with self.assertLogs(level='WARNING') as logs:
                record = self._period(HOT, loads)
            self.assertIn('Prometheus', record['skipped'])
            self.assertEqual([], record['moves'])
            self.assertEqual(1, len(logs.records), logs.output)
            self.assertIn(SKIP_WARNING, logs.output[0])
        self.assertEqual([], list(self._migrations()))
        self.assertEqual('host1', self._host_of(server))
        # select_destinations still works (no host forced this time).
        booted = self._create_server(flavor_id=self.flavor['id'],
                                     networks='none')
        self.assertEqual('ACTIVE', booted['status'])

    def test_server_down(self):
        self.flags(url=f'http://127.0.0.1:{realservers.free_port()}',
                   group='drs_prometheus')
        self._check_outage()

    def test_server_never_answers(self):
        listener = socket.socket()
        self.addCleanup(listener.close)
        listener.bind(('127.0.0.1', 0))
        listener.listen(8)  # Connections queue in the backlog, unanswered.
        self.flags(url=f'http://127.0.0.1:{listener.getsockname()[1]}',
                   timeout=0.5, group='drs_prometheus')
        self._check_outage()


class DRSDatabaseOutageTest(FaultTestBase):
    """The DRS database going away mid-run: periods are skipped, never a
    crash, and the windows continue once it is back."""

    DRS = {'stabilization': 2}

    def test_periods_skipped_while_down_then_continue(self):
        server, loads = self._hot_instance()
        self.assertEqual(1, self._verdict(self._period(HOT, loads),
                                          'host1')['counter'])
        store = self.scheduler_service.manager.rebalancer.store
        outage = db_exc.DBConnectionError('injected DRS database outage')
        with mock.patch.object(store, 'load_windows', side_effect=outage), \
                mock.patch.object(store, 'add', side_effect=outage), \
                self.assertLogs(level='WARNING') as logs:
            skipped = self._period(HOT, loads)
        self.assertIn('injected DRS database outage', skipped['skipped'])
        self.assertEqual([], skipped['moves'])
        self.assertEqual(1, len(logs.records), logs.output)
        self.assertIn(SKIP_WARNING, logs.output[0])
        self.assertEqual([], list(self._migrations()))
        # Back: the stored counter continues (1 -> 2, violated) and moves.
        record = self._settle(self._period(HOT, loads))
        self.assertEqual(2, self._verdict(record, 'host1')['counter'])
        self.assertEqual([(server, 'completed')], [
            (m['instance'], m['outcome']['status'])
            for m in record['moves']])
