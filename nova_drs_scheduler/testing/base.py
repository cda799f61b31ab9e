"""A test base class: Nova's functional harness with DRS in it.

Real REST API, conductor, in-process placement and fake-driver computes
(Nova's ``ProviderUsageBaseTestCase``), with the scheduler service running
our manager.  See doc/testing.md for a complete example.
"""

import time

from nova import context as nova_context
from nova import objects
from nova.tests.functional import integrated_helpers

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler import service
from nova_drs_scheduler.host_manager import manager as caching
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.testing import fixtures as drs_fixtures
from nova_drs_scheduler.testing import records

CONF = drs_conf.CONF

#: Migration statuses after which Nova no longer works on a migration.
_ENDED = ('completed', 'confirmed', 'error', 'failed', 'cancelled')


class DRSSchedulerMixin:
    """Start the scheduler with our manager; feed loads; run periods.

    Mix it in before a Nova ``_IntegratedTestBase`` subclass whose
    ``setUp`` starts the scheduler through ``self.start_service``.
    """

    #: Dotted path of the scheduler manager; None runs Nova's stock one.
    SCHEDULER_MANAGER = 'nova_drs_scheduler.manager.DRSSchedulerManager'
    #: Choose manager and host manager by name from ``[scheduler] driver``
    #: and ``host_manager``, exactly as the nova-drs-scheduler service does
    #: (e.g. ``filter_scheduler`` with ``caching_host_manager``: Nova's
    #: stock manager with our host manager).
    SCHEDULER_FROM_CONFIG = False
    #: Fake-driver computes started by ``setUp``, in this order.
    COMPUTES = ()
    #: Config applied before the services start: {group: {opt: value}}.
    FLAGS = {}
    #: ``[drs]`` options, applied after ``FLAGS``.
    DRS = {}
    #: Seconds to wait for a migration to end.
    MIGRATION_TIMEOUT = 30.0

    def setUp(self):
        # Config that must be in place before Nova's services start: the
        # parent setUp starts the API and the scheduler.
        self.flags(api_paste_config=drs_fixtures.api_paste_config(),
                   group='wsgi')
        self.flags(compute_monitors=['cpu.virt_driver'])
        self.useFixture(drs_fixtures.LegacyOverridesFixture(CONF))
        self.cpu_load = self.useFixture(drs_fixtures.CPULoadFixture())
        self.static_metrics = self.useFixture(
            drs_fixtures.StaticMetricsFixture(CONF))
        self.useFixture(drs_fixtures.DRSDatabaseFixture(CONF))
        for group, values in self.FLAGS.items():
            self.flags(group=None if group == 'DEFAULT' else group, **values)
        if self.DRS:
            self.flags(group='drs', **self.DRS)
        self._migrations_waited = False
        # Registered before the services start, so it runs after they stop.
        self.addCleanup(self._check_no_refresher_left)
        super().setUp()
        for host in self.COMPUTES:
            self._start_compute(host)

    def _check_no_refresher_left(self):
        """Fail the test whose services left a background refresh running.

        Left alone, it would go on reading torn-down cells and open Nova
        executors between tests, and some later test would fail instead.
        """
        left = caching.running_refreshers()
        for host_manager in left:
            host_manager.stop_refresher()
        self.assertEqual([], left, 'background refresh still running after '
                         'the services stopped')

    def _wait_once_for_no_migrating_instance(self):
        if not self._migrations_waited:
            self._migrations_waited = True
            self.wait_for_no_migrating_instance()

    def start_service(self, name, host=None, **kwargs):
        if name == 'compute':
            compute = super().start_service(name, host=host, **kwargs)
            # Runs before the computes stop (cleanups run last-in
            # first-out), so that a test failing while a migration runs
            # fails instead of hanging in the compute's pool.
            self.addCleanup(self._wait_once_for_no_migrating_instance)
            return compute
        if name != 'scheduler':
            return super().start_service(name, host=host, **kwargs)
        if self.SCHEDULER_FROM_CONFIG:
            kwargs['manager'] = service.manager_path(CONF)
        elif self.SCHEDULER_MANAGER:
            kwargs.setdefault('manager', self.SCHEDULER_MANAGER)
        scheduler = super().start_service(name, host=host, **kwargs)
        if self.SCHEDULER_FROM_CONFIG:
            service.apply_host_manager(scheduler.manager, CONF)
        return scheduler

    # Feeding loads.

    def publish_cpu(self, loads: dict) -> None:
        """Set measured CPU per host; push one sample through the computes'
        ``cpu.virt_driver`` monitor (what the ``nova`` source reads)."""
        for host, percent in loads.items():
            self.cpu_load.set(host, percent)
        self._run_periodics()

    def feed(self, hosts: dict, instances: dict | None = None) -> None:
        """Loads for the next period, through the configured source.

        ``hosts``: {host: cpu percent}; ``instances``: {uuid: cores}, read
        by the ``static`` source only (the ``nova`` source asks the
        computes for instance diagnostics).
        """
        source = CONF.drs.metrics_source
        if source == 'static':
            self.static_metrics.write(hosts, instances)
        elif source == 'nova':
            self.publish_cpu(hosts)
        else:
            raise ValueError(f'cannot feed [drs] metrics_source {source!r}: '
                             'only static and nova are fed by the test')

    # Running periods.

    @property
    def rebalancer(self):
        return self.scheduler_service.manager.rebalancer

    def admin_context(self) -> nova_context.RequestContext:
        return nova_context.get_admin_context()

    def run_period(self, hosts: dict | None = None,
                   instances: dict | None = None,
                   settle: bool = True) -> dict:
        """One rebalance period, after feeding ``hosts`` if given.

        With ``settle`` the moves it started are waited for, so the record
        returned holds their final outcomes.
        """
        if hosts is not None:
            self.feed(hosts, instances)
        record = self.scheduler_service.manager.run_rebalance(
            self.admin_context())
        return self.settle(record) if settle else record

    def run_periods(self, n: int, hosts: dict | None = None,
                    instances: dict | None = None,
                    settle: bool = True) -> list[dict]:
        """``n`` periods with the same loads; their records, oldest first."""
        return [self.run_period(hosts, instances, settle) for _ in range(n)]

    # Waiting for migrations.

    def settle(self, record: dict) -> dict:
        """Wait for the record's started moves to end; the final record."""
        for move in records.moves_with_status(record, 'started'):
            self.wait_for_migration_end(
                move['instance'], move.get('migration', 'live'))
        self.rebalancer.outcomes.collect()
        # The stored record keeps only the hosts over their threshold;
        # the moves' outcomes are the stored ones.
        stored = self.rebalancer.store.get(record['id'])
        return dict(record, moves=stored['moves']) if stored else record

    def wait_for_migration_end(self, uuid: str, kind: str = 'live'):
        """Wait until Nova is done with the instance's newest migration
        (``kind``: ``Move.migration``, live or cold), placement clean-up
        included; returns the migration.

        The compute marks a live migration completed before it deletes the
        migration's allocations; a test that ended in between would stop
        the services under the compute's feet.
        """
        deadline = time.monotonic() + self.MIGRATION_TIMEOUT
        while time.monotonic() < deadline:
            migrations = self.migrations(uuid, kind)
            if migrations and migrations[0].status == executor.FINISHED:
                # A cold migration waits for the leader to confirm it, at
                # its next poll: this is that poll.
                self.rebalancer.outcomes.collect()
                continue
            if migrations and migrations[0].status in _ENDED and not (
                    self._get_allocations_by_server_uuid(
                        migrations[0].uuid)):
                return migrations[0]
            time.sleep(0.1)
        self.fail(f'migration of {uuid} did not end in '
                  f'{self.MIGRATION_TIMEOUT}s')

    def wait_for_no_migrating_instance(self) -> None:
        """Wait (bounded) until no instance is being migrated."""
        deadline = time.monotonic() + self.MIGRATION_TIMEOUT
        while time.monotonic() < deadline:
            if not objects.InstanceList.get_by_filters(
                    self.admin_context(), {'task_state': 'migrating'}):
                return
            time.sleep(0.1)

    def migrations(self, uuid: str | None = None,
                   kind: str = 'live') -> list:
        """Migrations (``kind``: live or cold), newest first, of one
        instance or all."""
        filters = {'migration_type': executor.MIGRATION_TYPES[kind]}
        if uuid:
            filters['instance_uuid'] = uuid
        return objects.MigrationList.get_by_filters(
            self.admin_context(), filters,
            sort_keys=['created_at', 'id'], sort_dirs=['desc', 'desc'])

    # Observing.

    def host_of(self, uuid: str) -> str:
        """The server's host as the REST API shows it."""
        return self.admin_api.get_server(uuid)['OS-EXT-SRV-ATTR:host']


class DRSTestCase(DRSSchedulerMixin,
                  integrated_helpers.ProviderUsageBaseTestCase):
    """Nova's ``ProviderUsageBaseTestCase`` with DRS: subclass this."""

    compute_driver = 'fake.MediumFakeDriver'
