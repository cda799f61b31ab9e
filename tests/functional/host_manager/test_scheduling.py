"""Real API, conductor, computes and placement over CachingHostManager.

In most tests the cache's clock is frozen and the background refresh is
off: a test sees a refresh only where it lets the staleness bound pass, so
what is exercised is the cached path. ``BackgroundRefreshTest`` runs the
refresher on the real clock.
"""

import time

import fixtures
from nova import context as nova_context
from nova import utils
from oslo_config import cfg

from nova_drs_scheduler import compat
from nova_drs_scheduler import owner_trait
from tests.functional import base
from tests.functional.host_manager import manager

CONF = cfg.CONF


def set_service_status(admin_api, host, status, reason=None):
    """``PUT /os-services/{id}`` as an operator does (microversion 2.53:
    by uuid, with a reason)."""
    with utils.temporary_mutation(admin_api, microversion='2.53'):
        service = admin_api.get_services(host=host,
                                         binary='nova-compute')[0]
        body = {'status': status}
        if reason:
            body['disabled_reason'] = reason
        admin_api.put_service(service['id'], body)


class CachingHostManagerTest(base.DRSFunctionalTestBase):

    SCHEDULER_MANAGER = manager.PATH
    FLAGS = {'filter_scheduler': {'host_subset_size': 1},
             'quota': {'cores': -1, 'instances': -1, 'ram': -1},
             # A frozen cache keeps the heartbeats of its first load; on a
             # busy machine the test may outlive the default 60 s.
             'DEFAULT': {'service_down_time': 3600},
             # A refresh on the real clock before the clock is frozen would
             # look fresh for ever to the frozen one.
             'drs_host_cache': {'background_refresh_interval': 0}}
    HOSTS = ('host1', 'host2', 'host3')

    def setUp(self):
        super().setUp()
        for host in self.HOSTS:
            self._start_compute(host)
        self.host_manager = self.scheduler_service.manager.host_manager
        self.now = 0.0
        self.host_manager.rows.clock = lambda: self.now
        # MediumFakeDriver hosts: 10 vCPUs, 8 GB RAM, 1 TB disk.
        self.flavor_id = self._create_flavor(
            name='small', vcpu=2, memory_mb=1024, disk=1, ephemeral=0)
        self.large_id = self._create_flavor(
            name='large', vcpu=4, memory_mb=2048, disk=1, ephemeral=0)

    def expire(self):
        """Let the staleness bound pass."""
        self.now += CONF.drs_host_cache.max_staleness + 1

    def boot(self, **kwargs):
        kwargs.setdefault('flavor_id', self.flavor_id)
        return self._create_server(networks='none', **kwargs)

    def host_of(self, server):
        return self.api.get_server(server['id'])['OS-EXT-SRV-ATTR:host']

    def cached_states(self):
        return {state.host: state for state in
                self.host_manager.get_host_states_by_uuids(
                    nova_context.get_admin_context(), None, None)}

    def test_boot_many_with_a_frozen_cache(self):
        # Nothing refreshes, so every request sees the same free RAM on
        # every host. Placement still decides what fits: a host takes
        # (8192 - 512 reserved) // 1024 = 7 of these servers, no more.
        servers = [self.boot() for _ in range(16)]
        per_host = {}
        for server in servers:
            host = self.host_of(server)
            per_host[host] = per_host.get(host, 0) + 1
        self.assertEqual(16, sum(per_host.values()))
        self.assertLessEqual(max(per_host.values()), 7)

    def test_owner_trait_decided_from_cached_rows(self):
        # Every compute here is current: once the rows are cached, the
        # scheduler requires OWNER_NOVA itself and Nova's request filter
        # skips its query to every cell.
        decided = []
        real = owner_trait.require_if_all_upgraded

        def spy(spec_obj, host_manager):
            decided.append(real(spec_obj, host_manager))
            return decided[-1]

        self.useFixture(fixtures.MonkeyPatch(
            'nova_drs_scheduler.owner_trait.require_if_all_upgraded', spy))
        self.cached_states()
        self.boot()
        self.expire()
        self.boot()
        # Nova before 34 has no OWNER_NOVA filter: nothing to decide.
        upgraded = compat.owner_trait_min_compute_version() is not None
        self.assertEqual([upgraded, False], decided)

    def test_boots_spread_as_rows_refresh(self):
        hosts = []
        for _ in range(6):
            hosts.append(self.host_of(self.boot(flavor_id=self.large_id)))
            self.expire()
        self.assertEqual({h: 2 for h in self.HOSTS},
                         {h: hosts.count(h) for h in self.HOSTS})

    def _multi_create(self, count):
        body = {'server': dict(
            self._build_server(flavor_id=self.flavor_id, networks='none'),
            min_count=count, max_count=count, return_reservation_id=True)}
        reservation = self.api.post_server(body)['reservation_id']
        servers = self.api.get_servers(
            detail=True, search_opts={'reservation_id': reservation})
        return [self._wait_for_state_change(s, 'ACTIVE') for s in servers]

    def test_multi_create_consumes_within_the_request_only(self):
        seen = []
        filtered = self.host_manager.get_filtered_hosts

        def record(hosts, spec_obj, index=0):
            hosts = list(hosts)
            if index == 0:
                seen.append({h.host: h.free_ram_mb for h in hosts})
            return filtered(hosts, spec_obj, index)

        self.host_manager.get_filtered_hosts = record
        for _ in range(2):
            servers = self._multi_create(3)
            # RAMWeigher spreads: each instance sees its predecessors'
            # consumption, so the three land on three hosts.
            self.assertEqual(set(self.HOSTS),
                             {self.host_of(s) for s in servers})
        # Same cached rows: the second request sees the first's three
        # servers once each, from what this scheduler placed, and never
        # more (a forked state's consumption stays in its request).
        self.assertEqual({h: free - 1024 for h, free in seen[0].items()},
                         seen[1])

    def test_placed_resources_are_counted_once_after_a_refresh(self):
        for _ in range(3):
            self.boot()
        self.expire()
        self.assertEqual(
            {h: self._compute_node(h).free_ram_mb for h in self.HOSTS},
            {h: s.free_ram_mb for h, s in self.cached_states().items()})

    def test_resize(self):
        server = self.boot()
        source = self.host_of(server)
        server = self._resize_server(server, self.large_id)
        self.assertNotEqual(source, self.host_of(server))
        self._confirm_resize(server)

    def test_cold_migrate(self):
        server = self.boot()
        source = self.host_of(server)
        server = self._migrate_server(server)
        self.assertNotEqual(source, self.host_of(server))
        self._confirm_resize(server)

    def test_live_migrate(self):
        server = self.boot()
        source = self.host_of(server)
        self._live_migrate(server, 'completed')
        self.assertNotEqual(source, self.host_of(server))

    def test_live_migrate_to_a_requested_host(self):
        server = self.boot(host='host1')
        self.api.post_server_action(server['id'], {'os-migrateLive': {
            'host': 'host3', 'block_migration': 'auto'}})
        self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': 'host3', 'status': 'ACTIVE'})

    def set_status(self, host, status, reason=None):
        set_service_status(self.admin_api, host, status, reason)

    def record_filtering(self):
        """[(hosts placement returned, hosts that passed the filters)],
        one pair per request."""
        seen = []
        filtered = self.host_manager.get_filtered_hosts

        def record(hosts, spec_obj, index=0):
            hosts = list(hosts)
            passed = list(filtered(hosts, spec_obj, index))
            seen.append(({h.host for h in hosts}, {h.host for h in passed}))
            return passed

        self.host_manager.get_filtered_hosts = record
        return seen

    def test_disabled_service_is_avoided_at_once(self):
        # The clock is frozen: the cached rows would be stale for ever.
        self.boot()  # loads the cache
        self.set_status('host1', 'disabled', 'maintenance')
        state = self.cached_states()['host1']
        self.assertTrue(state.service['disabled'])
        self.assertEqual('maintenance', state.service['disabled_reason'])
        hosts = {self.host_of(self.boot()) for _ in range(4)}
        self.assertNotIn('host1', hosts)
        # Enabled again: usable by the very next request.
        self.set_status('host1', 'enabled')
        self.assertEqual('host1', self.host_of(self.boot(host='host1')))

    def test_disabled_service_is_avoided_without_the_trait(self):
        # The compute did not set COMPUTE_STATUS_DISABLED in placement
        # (down, unreachable, or the call failed): placement still returns
        # host1, and the scheduler alone keeps boots away from it.
        self.useFixture(fixtures.MockPatch(
            'nova.compute.api.HostAPI._update_compute_provider_status'))
        self.boot()  # loads the cache
        self.set_status('host1', 'disabled', 'maintenance')
        seen = self.record_filtering()
        hosts = {self.host_of(self.boot()) for _ in range(3)}
        self.assertNotIn('host1', hosts)
        self.assertEqual(3, len(seen))
        for returned, passed in seen:
            self.assertIn('host1', returned)
            self.assertNotIn('host1', passed)

    def test_enabled_service_is_used_at_once(self):
        # Placement's trait goes as the service is enabled; the cached row
        # that still shows it disabled does not keep it out.
        self.set_status('host1', 'disabled', 'maintenance')
        self.boot()  # loads the cache, host1 disabled
        [cached] = [snap.services['host1'].service
                    for snap in self.host_manager.rows.snapshots.values()
                    if 'host1' in snap.services]
        self.assertTrue(cached.disabled)
        self.set_status('host1', 'enabled')
        self.assertEqual('host1', self.host_of(self.boot(host='host1')))

    def test_forced_down_service_is_avoided_at_once(self):
        # No placement trait follows forced_down: only the scheduler.
        self.boot()  # loads the cache
        service = self.admin_api.get_services(
            host='host1', binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)
        hosts = {self.host_of(self.boot()) for _ in range(3)}
        self.assertNotIn('host1', hosts)
        self.admin_api.put_service_force_down(service['id'], False)
        self.assertEqual('host1', self.host_of(self.boot(host='host1')))

    def test_added_compute_is_schedulable_before_the_bound(self):
        self.boot()  # loads the cache
        self._start_compute('host4')
        # Placement returns the new node; one second later the cache reads
        # it instead of waiting for max_staleness.
        self.now += 1
        server = self.boot(host='host4')
        self.assertEqual('host4', self.host_of(server))

    def test_deleted_compute(self):
        self.boot()  # loads the cache
        self.computes['host3'].stop()
        service = self.admin_api.get_services(
            host='host3', binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)
        self.admin_api.api_delete('/os-services/%s' % service['id'])
        hosts = {self.host_of(self.boot()) for _ in range(4)}
        self.assertNotIn('host3', hosts)
        self.assertIn('host3', self.cached_states())
        self.expire()
        self.assertNotIn('host3', self.cached_states())


class _BurstTest:
    """Six boots made back to back, as fast as the API takes them."""

    FLAGS = CachingHostManagerTest.FLAGS
    HOSTS = CachingHostManagerTest.HOSTS

    def setUp(self):
        super().setUp()
        for host in self.HOSTS:
            self._start_compute(host)
        self.flavor_id = self._create_flavor(
            name='small', vcpu=2, memory_mb=1024, disk=1, ephemeral=0)

    def test_burst_spreads(self):
        # Nova's RAMWeigher spreads: every boot goes to the host with the
        # most free RAM, as its predecessors left it.
        placed = [self.api.get_server(
            self._create_server(flavor_id=self.flavor_id,
                                networks='none')['id'])[
            'OS-EXT-SRV-ATTR:host'] for _ in range(6)]
        self.assertEqual({h: 2 for h in self.HOSTS},
                         {h: placed.count(h) for h in self.HOSTS})


class StockBurstTest(_BurstTest, base.DRSFunctionalTestBase):
    """The reference: Nova's own manager and HostManager."""

    SCHEDULER_MANAGER = 'nova.scheduler.manager.SchedulerManager'


class StaleCacheBurstTest(_BurstTest, base.DRSFunctionalTestBase):
    """Default max_staleness and a frozen clock: no row is re-read."""

    SCHEDULER_MANAGER = manager.PATH

    def setUp(self):
        super().setUp()
        self.scheduler_service.manager.host_manager.rows.clock = lambda: 0.0


class FreshCacheBurstTest(StaleCacheBurstTest):
    """max_staleness 0: every request reads the rows that changed."""

    FLAGS = dict(_BurstTest.FLAGS, drs_host_cache={'max_staleness': 0})


class BackgroundRefreshTest(base.DRSFunctionalTestBase):
    """The service's refresher, on the real clock, under eventlet.

    ``max_staleness`` is long, so that a request would have to wait a
    minute before refreshing itself: changes seen sooner came from the
    refresher, and no request paid for them.
    """

    SCHEDULER_MANAGER = manager.PATH
    INTERVAL = 0.3
    FLAGS = {'drs_host_cache': {'max_staleness': 60,
                                'background_refresh_interval': INTERVAL},
             'filter_scheduler': {
                 'host_subset_size': 1,
                 'enabled_filters': ['ComputeFilter',
                                     'AggregateInstanceExtraSpecsFilter']}}

    def setUp(self):
        super().setUp()
        for host in ('host1', 'host2'):
            self._start_compute(host)
        self.host_manager = self.scheduler_service.manager.host_manager
        self.refreshes = []
        refresh = self.host_manager.rows.refresh

        def record(context, cells, max_age, *args):
            self.refreshes.append(max_age)
            return refresh(context, cells, max_age, *args)

        self.host_manager.rows.refresh = record
        self.flavor_id = self._create_flavor(
            name='small', vcpu=1, memory_mb=512, disk=1, ephemeral=0)

    def wait_for_cache(self, check, timeout=30.0):
        """Wait, sending no request, until the cached rows pass ``check``."""
        deadline = time.monotonic() + timeout
        while not check({host: entry
                         for snap in self.host_manager.rows.snapshots.values()
                         for host, entry in snap.services.items()}):
            self.assertLess(time.monotonic(), deadline, 'not refreshed')
            time.sleep(0.1)

    def cached_node_hosts(self):
        """Hosts whose compute node row is cached: a new node's row is
        left out while incomplete, and a request that finds its provider
        then reads it itself (once)."""
        return {entry.compute.host
                for snap in self.host_manager.rows.snapshots.values()
                for entry in snap.nodes.values()}

    def wait_for_hosts(self, hosts):
        """Wait until both rows of each host are cached: a request that
        finds a provider whose node row is not cached reads it itself."""
        self.wait_for_cache(lambda services: set(hosts) <= set(services)
                            and set(hosts) <= self.cached_node_hosts())

    def boot(self, **kwargs):
        server = self._create_server(networks='none',
                                     flavor_id=self.flavor_id, **kwargs)
        return self.api.get_server(server['id'])['OS-EXT-SRV-ATTR:host']

    def assert_no_request_refreshed(self):
        self.assertEqual({self.INTERVAL}, set(self.refreshes))

    def test_new_compute_is_read_in_the_background(self):
        self.wait_for_hosts({'host1', 'host2'})
        self._start_compute('host3')
        self.wait_for_hosts({'host3'})
        self.assertEqual('host3', self.boot(host='host3'))
        self.assert_no_request_refreshed()

    def test_forced_down_service_is_avoided(self):
        self.wait_for_hosts({'host1', 'host2'})
        service = self.admin_api.get_services(
            host='host1', binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)
        self.wait_for_cache(
            lambda services: 'host1' in services
            and services['host1'].service.forced_down)
        self.assertEqual({'host2'}, {self.boot() for _ in range(3)})
        self.assert_no_request_refreshed()

    def test_aggregate_change_is_seen_at_once(self):
        # Aggregates come by RPC, not from the cached rows.
        self.wait_for_hosts({'host1', 'host2'})
        self.admin_api.post_extra_spec(self.flavor_id, {'extra_specs': {
            'aggregate_instance_extra_specs:tier': 'gold'}})
        gold = self._aggregate_with_hosts('gold', ['host1'], {'tier': 'gold'})
        self.assertEqual({'host1'}, {self.boot() for _ in range(2)})
        self.admin_api.post_aggregate_action(
            gold['id'], {'remove_host': {'host': 'host1'}})
        self._aggregate_with_hosts('gold2', ['host2'], {'tier': 'gold'})
        self.assertEqual('host2', self.boot())
        self.assert_no_request_refreshed()

    def test_refresher_stops_with_the_service(self):
        refresher = self.host_manager.rows.refresher
        self.assertIsNotNone(refresher)
        self.scheduler_service.stop()
        self.assertIsNone(self.host_manager.rows.refresher)
        self.assertTrue(refresher.wait())


class MaintenanceDefaultsTest(base.DRSFunctionalTestBase):
    """A host disabled and enabled through Nova's API, with every
    ``[drs_host_cache]`` option at its default (``max_staleness`` 5 s, the
    background refresh on) and the real clock: the next boot follows."""

    SCHEDULER_MANAGER = manager.PATH
    FLAGS = {'filter_scheduler': {'host_subset_size': 1}}

    def setUp(self):
        super().setUp()
        for host in ('host1', 'host2'):
            self._start_compute(host)
        self.flavor_id = self._create_flavor(
            name='small', vcpu=1, memory_mb=512, disk=1, ephemeral=0)
        # Placement alone would keep boots off a disabled host whose
        # compute sets COMPUTE_STATUS_DISABLED; here it does not.
        self.useFixture(fixtures.MockPatch(
            'nova.compute.api.HostAPI._update_compute_provider_status'))

    def set_status(self, host, status, reason=None):
        set_service_status(self.admin_api, host, status, reason)

    def boot(self, **kwargs):
        server = self._create_server(networks='none',
                                     flavor_id=self.flavor_id, **kwargs)
        return self.api.get_server(server['id'])['OS-EXT-SRV-ATTR:host']

    def test_disable_then_enable(self):
        self.assertEqual(5.0, CONF.drs_host_cache.max_staleness)
        self.boot()  # the rows are cached
        self.set_status('host1', 'disabled', 'maintenance')
        self.assertEqual({'host2'}, {self.boot() for _ in range(3)})
        self.set_status('host1', 'enabled')
        self.assertEqual('host1', self.boot(host='host1'))
