"""Our filters and weigher enabled through nova.conf in a real cloud."""

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
