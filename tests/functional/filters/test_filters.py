"""Our filters and weigher enabled through nova.conf in a real cloud."""

from nova.tests.functional.api import client
from oslo_serialization import jsonutils

from tests.functional import base

FILTERS = ['ComputeFilter', 'AggregateCoreFilter', 'DRSPoolFilter',
           'UtilizationFilter']


class _FilterTestBase(base.DRSFunctionalTestBase):
    FLAGS = {
        'filter_scheduler': {
            'available_filters': [
                'nova.scheduler.filters.all_filters',
                'nova_drs_scheduler.filters.all_filters'],
            'enabled_filters': FILTERS,
            'weight_classes': ['nova_drs_scheduler.weighers.all_weighers'],
            'host_subset_size': 1,
        },
    }

    def setUp(self):
        super().setUp()
        for host in ('host1', 'host2'):
            self._start_compute(host)
        # MediumFakeDriver: 10 vCPUs, 8 GB RAM per host.
        self.flavor_id = self._create_flavor(
            name='small', vcpu=2, memory_mb=512, disk=1, ephemeral=0)

    def _host_of(self, server):
        return server['OS-EXT-SRV-ATTR:host']


class AggregateCoreFilterTest(_FilterTestBase):

    def test_aggregate_ratio_stops_before_placement(self):
        # Placement allows 10 * 4.0 vCPUs; the aggregate allows 10.
        self._aggregate_with_hosts('tight', ['host1'],
                                   {'cpu_allocation_ratio': '1.0'})
        # Make host1 the weigher's choice so boots go there until full.
        self._publish_cpu({'host1': 5, 'host2': 60})
        hosts = [self._host_of(self._create_server(
            flavor_id=self.flavor_id, networks='none')) for _ in range(6)]
        self.assertEqual(['host1'] * 5 + ['host2'], hosts)


class DRSPoolFilterTest(_FilterTestBase):

    def test_pool_flavor_stays_in_matching_aggregate(self):
        self._aggregate_with_hosts('gold', ['host1'], {'pool': 'gold'})
        self._aggregate_with_hosts('silver', ['host2'], {'pool': 'silver'})
        gold = self._create_flavor(
            name='gold', vcpu=1, memory_mb=256, disk=1, ephemeral=0,
            extra_spec={'drs_pool:pool': 'gold'})
        # The weigher prefers host2; the pool must still win.
        self._publish_cpu({'host1': 70, 'host2': 5})
        hosts = {self._host_of(self._create_server(
            flavor_id=gold, networks='none')) for _ in range(3)}
        self.assertEqual({'host1'}, hosts)
        plain = self._create_server(flavor_id=self.flavor_id,
                                    networks='none')
        self.assertEqual('host2', self._host_of(plain))

    def test_flavor_api_validates_pool_keys(self):
        flavor = self.admin_api.post_flavor({'flavor': {
            'name': 'f', 'ram': 256, 'vcpus': 1, 'disk': 1}})
        self.admin_api.api_post(
            '/flavors/%s/os-extra_specs' % flavor['id'],
            {'extra_specs': {'drs_pool:tier': 'gold'}})
        error = self.assertRaises(
            client.OpenStackApiException, self.admin_api.api_post,
            '/flavors/%s/os-extra_specs' % flavor['id'],
            {'extra_specs': {'drs_pool:bad key': 'gold'}})
        self.assertEqual(400, error.response.status_code)


class UtilizationWeigherTest(_FilterTestBase):

    def _boot_hosts(self, count):
        return [self._host_of(self._create_server(
            flavor_id=self.flavor_id, networks='none'))
            for _ in range(count)]

    def test_boot_goes_to_the_cooler_host(self):
        # The second boot goes to host1 again although host2 has more free
        # RAM: measured CPU dominates the blend.
        self._publish_cpu({'host1': 10, 'host2': 70})
        self.assertEqual(['host1', 'host1'], self._boot_hosts(2))
        self._publish_cpu({'host1': 70, 'host2': 10})
        self.assertEqual(['host2'], self._boot_hosts(1))

    def test_metrics_reach_the_compute_node(self):
        self._publish_cpu({'host1': 42, 'host2': 7})
        for host, expected in (('host1', 42), ('host2', 7)):
            metrics = jsonutils.loads(self._compute_node(host).metrics)
            cpu = [m['value'] for m in metrics if m['name'] == 'cpu.percent']
            self.assertEqual([expected / 100.0], cpu)


class UtilizationFilterTest(_FilterTestBase):

    def test_busy_host_gets_no_new_server(self):
        self.flags(max_cpu_utilization=80, group='drs')
        self._publish_cpu({'host1': 95, 'host2': 90})
        self._create_server(flavor_id=self.flavor_id, networks='none',
                            expected_state='ERROR')
        self._publish_cpu({'host1': 95, 'host2': 50})
        server = self._create_server(flavor_id=self.flavor_id,
                                     networks='none')
        self.assertEqual('host2', self._host_of(server))
