"""Shared setup of the rebalancer's functional tests.

Real API, conductor, placement and fake-driver computes, our scheduler
manager.  Loads come from the ``static`` metric source: a JSON file the
test rewrites before each period, so every scenario is deterministic; one
test runs the default ``nova`` source through the real compute monitor.
"""

from unittest import mock

from nova_drs_scheduler import conf
from nova_drs_scheduler.testing import records
from tests.functional import base

#: Nova's default filters, and our scheduler manager.
FILTERS = ['ComputeFilter', 'ComputeCapabilitiesFilter',
           'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
           'ServerGroupAffinityFilter']


class RebalanceTestBase(base.DRSFunctionalTestBase):
    """Three hosts, ``[drs]`` set for quick, deterministic periods.

    Importing our ``conf`` registers the ``[drs]`` options before
    ``setUp`` overrides them (``conf.CONF`` is Nova's global CONF).
    """

    SCHEDULER_MANAGER = 'nova_drs_scheduler.manager.DRSSchedulerManager'
    HOSTS = ('host1', 'host2', 'host3')
    #: [drs] options of the test class, over the defaults below.
    DRS = {}

    def setUp(self):
        drs = {'automation': 'automatic', 'metrics_source': 'static',
               'window': 1, 'stabilization': 2, 'instance_cooldown': 3600,
               'quarantine_time': 3600}
        drs.update(self.DRS)
        assert conf.CONF.drs.rebalance_interval  # Registered, see above.
        self.FLAGS = {
            'drs': drs,
            'filter_scheduler': {'enabled_filters': FILTERS,
                                 'host_subset_size': 1},
        }
        super().setUp()
        self.metrics_file = self.static_metrics.path
        for host in self.HOSTS:
            self._start_compute(host)
        # MediumFakeDriver: 10 vCPUs, 8 GB RAM per host.
        self.flavor = self._flavor('small', vcpu=2)

    # Building the cloud.

    def _flavor(self, name, vcpu=2, extra_spec=None):
        flavor_id = self._create_flavor(
            name=name, vcpu=vcpu, memory_mb=512, disk=1, ephemeral=0,
            extra_spec=extra_spec)
        return self.admin_api.get_flavor(flavor_id)

    def _boot(self, host, flavor=None, **kwargs):
        server = self._create_server(
            flavor_id=(flavor or self.flavor)['id'], host=host,
            networks='none', **kwargs)
        return server['id']

    def _boot_in_group(self, host, group_id):
        body = self._build_server(flavor_id=self.flavor['id'],
                                  networks='none', host=host)
        server = self.admin_api.post_server(
            {'server': body, 'os:scheduler_hints': {'group': group_id}})
        return self._wait_for_state_change(server, 'ACTIVE')['id']

    # Driving periods (names kept from before the testing package).

    def _write_metrics(self, hosts, instances=None, waiting=None):
        self.static_metrics.write(hosts, instances, waiting)

    def _period(self, hosts, instances=None):
        """One rebalance period with these host and instance loads in the
        static source's file (whatever source the test selected)."""
        self._write_metrics(hosts, instances)
        return self.run_period(settle=False)

    def _refused_period(self, hosts, instances, error):
        """One period whose moves the destination compute refuses with
        ``error`` (raised by its pre-migration check); the final record."""
        with mock.patch(
                'nova.compute.rpcapi.ComputeAPI.'
                'check_can_live_migrate_destination', side_effect=error):
            return self._settle(self._period(hosts, instances))

    def _settle(self, record):
        """Wait for the record's started moves to end; the final record."""
        return self.settle(record)

    def _wait_for_migration_end(self, uuid):
        return self.wait_for_migration_end(uuid)

    def _wait_for_no_migrating_instance(self):
        self.wait_for_no_migrating_instance()

    def _migrations(self, uuid=None):
        """Live migrations, newest first, of one instance or all."""
        return self.migrations(uuid)

    # Observing.

    def _host_of(self, uuid):
        return self.host_of(uuid)

    def _server(self, uuid):
        return self.admin_api.get_server(uuid)

    def _allocated_hosts(self, uuid):
        """Hosts holding the server's placement allocations."""
        by_rp = self._get_allocations_by_server_uuid(uuid)
        return sorted(host for host in self.HOSTS
                      if self._get_provider_uuid_by_host(host) in by_rp)

    def _verdict(self, record, host):
        return records.verdict(record, host)

    def _rejection(self, move, host):
        return records.rejection(move, host)
