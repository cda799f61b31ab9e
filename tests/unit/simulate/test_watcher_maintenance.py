"""Watcher's host_maintenance on the modelled cluster (``tox -e
watcher``)."""

import functools
import importlib.util

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import maintenance
from nova_drs_scheduler.simulate import traces
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_maintenance

HAVE_WATCHER = importlib.util.find_spec('watcher') is not None
CONFIG = model.PlannerConfig()


@testtools.skipUnless(HAVE_WATCHER, 'python-watcher is not installed')
class HostMaintenanceTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # Eight VMs of 2 vCPUs / 1 GiB, two per host: host-0 holds vm0 and
        # vm4, at 90 % (of 4 CPUs), the others are at 10 %.
        self.trace = traces.Trace(
            tuple(f'vm{i}' for i in range(8)),
            ((90.0,) + (10.0,) * 3 + (90.0,) + (10.0,) * 3,) * 10, 60)
        flavor = cluster.Flavor('f', 2, 1024)
        self.vms = cluster.assign_flavors(self.trace.names, (flavor,), 0)
        # 1 GiB copies in 1 s.
        self.spec = cluster.ClusterSpec(
            hosts=4, host_vcpus=4, host_memory_mb=8192,
            bandwidth_mbps=8 * 1024 * 1.048576,
            dirty_mib_per_core=0.0)
        self.settings = engine.Settings(CONFIG, functools.partial(
            metrics.MetricsWindows, 1, 1, 60, 80.0, 90.0))

    def _run(self, strategy, schedule):
        return engine.run(self.trace, self.vms, self.spec, strategy,
                          self.settings, schedule)

    def test_one_audit_empties_the_host_through_novas_choices(self):
        strategy = watcher_maintenance.HostMaintenance()
        audits = []
        real = strategy._audit
        strategy._audit = lambda view, host: audits.append(
            (view.period, host)) or real(view, host)
        result = self._run(strategy, maintenance.Schedule(
            ('host-0', 'host-1'), 60.0, work_time=60.0))
        # vm0 and vm4 leave host-0 in one layer of two at 60 s, Nova's
        # compute copying vm4 after vm0 (1 s each); host-0 works from
        # 120 s and is back at 180 s, when host-1 enters.
        self.assertEqual([(1, 'host-0'), (3, 'host-1')], audits)
        first, second = result.drains
        self.assertEqual((62.0, 2, 0, 120.0, 180.0), (
            first.emptied, first.migrations, first.left_behind,
            first.work_started, first.returned))
        # Nova sent vm0 to host-1 (the most room, first by name), so
        # host-1's three instances leave in two layers: 180 s (one copy
        # after the other, seen done at the poll of 185 s), then 185 s.
        self.assertEqual((180.0, 186.0, 3),
                         (second.entered, second.emptied, second.migrations))
        self.assertEqual('watcher_host_maintenance', strategy.name)
        self.assertEqual(5, result.card.migrations)
        self.assertEqual(0, sum(result.card.failed.values()))

    def test_the_node_is_disabled_in_watchers_model(self):
        placed = cluster.Cluster(self.spec, self.vms)
        placed.disabled.add('host-2')
        compute = watcher_adapter.ComputeModel()
        root = compute.sync(placed)
        self.assertEqual('disabled', root.get_node_by_uuid('host-2').status)
        placed.disabled.clear()
        self.assertEqual('enabled',
                         compute.sync(placed).get_node_by_uuid(
                             'host-2').status)

    def test_a_balancer_plans_beside_it(self):
        balancer = watcher_adapter.WatcherStrategy(
            'workload_balance', {'threshold': 80.0, 'period': 60,
                                 'granularity': 60}, 1)
        strategy = watcher_maintenance.HostMaintenance(balancer, 'HM + WB')
        result = self._run(strategy, maintenance.drain('host-3', 120.0))
        self.assertEqual('HM + WB', strategy.name)
        # WB relieves host-0, and host-3's two instances are drained.
        self.assertEqual(2, result.drains[0].migrations)
        self.assertLess(2, result.card.migrations)
