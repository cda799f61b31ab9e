"""Watcher's vm_workload_consolidation on the modelled cluster: its service
changes in power terms and its datasource (everywhere), the strategy
itself (``tox -e watcher``)."""

import functools
import importlib.util
import types

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import power
from nova_drs_scheduler.simulate import traces
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_consolidation

HAVE_WATCHER = importlib.util.find_spec('watcher') is not None
CONFIG = model.PlannerConfig()


def _cluster():
    spec = cluster.ClusterSpec(hosts=3, host_vcpus=4, host_memory_mb=8192,
                               cpu_allocation_ratio=1.0,
                               bandwidth_mbps=8 * 1024 * 1.048576,
                               dirty_mib_per_core=0.0)
    return cluster.Cluster(spec, [cluster.VM(f'vm{i}', i, cluster.Flavor(
        'f', 2, 1024)) for i in range(3)])


class ServiceTest(testtools.TestCase):
    """What a compute-service action of Watcher's plan does to a host."""

    def setUp(self):
        super().setUp()
        self.placed = _cluster()
        self.hosts = power.Hosts(power.PowerModel(boot_seconds=300.0),
                                 self.placed, 80.0)
        self.view = types.SimpleNamespace(power=self.hosts, now=600.0)

    def _service(self, host, state):
        watcher_consolidation.Consolidation._service(self.view, host, state)
        return self.hosts.state[host]

    def test_disable_drains_the_host_for_standby(self):
        self.assertEqual(model.ENTERING, self._service('host-1', 'disabled'))

    def test_enable_gives_back_a_host_not_yet_off(self):
        self._service('host-1', 'disabled')
        self.assertEqual(model.ON, self._service('host-1', 'enabled'))

    def test_enable_boots_a_host_already_off(self):
        self.hosts.state['host-1'] = model.STANDBY
        self.placed.disabled.add('host-1')
        self.assertEqual(model.WAKING, self._service('host-1', 'enabled'))
        self.assertEqual({'host-1': 900.0}, self.hosts.ready_at)

    def test_enable_of_a_host_on_changes_nothing(self):
        self.assertEqual(model.ON, self._service('host-0', 'enabled'))
        self.assertEqual([], self.hosts.events)


class DatasourceTest(testtools.TestCase):
    """Watcher's per-metric getters, answered from the simulated
    samples in Watcher's units."""

    def setUp(self):
        super().setUp()
        placed = _cluster()
        trace = traces.Trace(('vm0', 'vm1', 'vm2'),
                             ((10.0, 20.0, 30.0), (30.0, 20.0, 30.0)), 60)
        self.view = engine.PeriodView(
            1, 60.0, 60, trace, placed,
            {'host-0': [40.0, 60.0, 80.0]}, {}, {}, 1)
        self.source = watcher_adapter.Datasource(self.view)

    def test_instance_meters(self):
        vm = types.SimpleNamespace(uuid='vm0')
        self.assertEqual(
            (20.0, 1024.0, 1024.0, 0.0),
            (self.source.get_instance_cpu_usage(
                resource=vm, period=120, aggregate='mean', granularity=60),
             self.source.get_instance_ram_usage(vm, 120, 'mean'),
             self.source.get_instance_ram_allocated(vm, 120, 'mean'),
             self.source.get_instance_root_disk_size(vm, 120, 'mean')))

    def test_host_meters(self):
        node = types.SimpleNamespace(uuid='host-0')
        # The last two samples; RAM in KB (vm0 is on host-0).
        self.assertEqual((70.0, 1024.0 * 1024),
                         (self.source.get_host_cpu_usage(node, 120, 'mean'),
                          self.source.get_host_ram_usage(node, 120, 'mean')))

    def test_unknown_getters_are_missing(self):
        self.assertRaises(AttributeError, getattr, self.source,
                          'get_host_outlet_temp')


@testtools.skipUnless(HAVE_WATCHER, 'python-watcher is not installed')
class ConsolidationTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # Three VMs of 2 vCPUs at 10 %, one per 4-CPU host: two fit on one
        # host (allocation ratio 1.0), so a host is freed.
        self.trace = traces.Trace(('vm0', 'vm1', 'vm2'),
                                  ((10.0, 10.0, 10.0),) * 20, 60)
        self.vms = cluster.assign_flavors(
            self.trace.names, (cluster.Flavor('f', 2, 1024),), 0)
        self.spec = cluster.ClusterSpec(
            hosts=3, host_vcpus=4, host_memory_mb=8192,
            cpu_allocation_ratio=1.0, bandwidth_mbps=8 * 1024 * 1.048576,
            dirty_mib_per_core=0.0)
        self.settings = engine.Settings(CONFIG, functools.partial(
            metrics.MetricsWindows, 1, 1, 60, 80.0, 90.0))

    def _run(self, strategy, modelled=True):
        return engine.run(self.trace, self.vms, self.spec, strategy,
                          self.settings,
                          power=power.PowerModel() if modelled else None)

    def test_frees_a_host_that_then_counts_as_off(self):
        strategy = watcher_consolidation.Consolidation(audit_interval=300.0)
        result = self._run(strategy)
        self.assertEqual((1, 1, 0), (result.card.migrations,
                                     result.power['standbys'],
                                     result.power['wakes']))
        # Every host on for 20 minutes would be 3 hosts x 1/3 h.
        self.assertLess(result.power['host_hours_on'], 1.0)
        # Audits at 0, 300, 600 and 900 s.
        self.assertEqual(4, strategy.audits + strategy.skipped)

    def test_needs_a_power_model(self):
        strategy = watcher_consolidation.Consolidation()
        self.assertRaises(ValueError, self._run, strategy, False)

    def test_a_booting_host_is_down_in_watchers_model(self):
        placed = cluster.Cluster(self.spec, self.vms)
        placed.disabled.add('host-2')
        root = watcher_adapter.ComputeModel().sync(placed, {'host-2'})
        node = root.get_node_by_uuid('host-2')
        self.assertEqual(('down', 'disabled'), (node.state, node.status))
        self.assertEqual('up', root.get_node_by_uuid('host-0').state)
