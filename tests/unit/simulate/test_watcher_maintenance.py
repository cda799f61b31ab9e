"""Watcher's host_maintenance on the modelled cluster: the applier's pacing
(everywhere), the strategy itself (``tox -e watcher``)."""

import functools
import importlib.util
import types

import testtools

from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import maintenance
from nova_drs_scheduler.simulate import traces
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_maintenance

HAVE_WATCHER = importlib.util.find_spec('watcher') is not None
CONFIG = model.PlannerConfig()


class FakeView:
    """A period's view whose ``start`` records the starts and ends each
    migration after its instance's ``seconds``; None: Nova refuses it."""

    def __init__(self, now, seconds, location=None):
        self.now, self.interval = now, 60
        self.seconds = seconds
        self.cluster = types.SimpleNamespace(
            location=location or dict.fromkeys(seconds, 'm'))
        self.started = []

    def start(self, name, destination, at):
        self.started.append((name, destination, at))
        seconds = self.seconds[name]
        return None if seconds is None else types.SimpleNamespace(
            end=at + seconds)


class ApplierTest(testtools.TestCase):

    def test_layers_of_two_each_after_the_last_poll_of_the_one_before(self):
        applier = watcher_maintenance.Applier()
        applier.add([(n, 'm', None) for n in ('a', 'b', 'c', 'd', 'e')],
                    0.0)
        view = FakeView(0.0, {'a': 2.0, 'b': 11.0, 'c': 4.0, 'd': 5.0,
                              'e': 1.0})
        applier.run(view)
        # b ends at 11 s, seen at the poll of 15 s; d at 20 s.
        self.assertEqual([('a', None, 0.0), ('b', None, 0.0),
                          ('c', None, 15.0), ('d', None, 15.0),
                          ('e', None, 20.0)], view.started)

    def test_a_layer_past_the_period_waits_for_the_next(self):
        applier = watcher_maintenance.Applier()
        applier.add([('a', 'm', None), ('b', 'm', None), ('c', 'm', None)],
                    0.0)
        view = FakeView(0.0, {'a': 61.0, 'b': 1.0, 'c': 1.0})
        applier.run(view)
        self.assertEqual(['a', 'b'], [name for name, _, _ in view.started])
        view = FakeView(60.0, {'c': 1.0})
        applier.run(view)
        self.assertEqual([('c', None, 65.0)], view.started)

    def test_refused_and_skipped_actions_end_at_once(self):
        applier = watcher_maintenance.Applier()
        applier.add([('gone', 'm', None), ('refused', 'm', None),
                     ('c', 'm', None)], 10.0)
        view = FakeView(0.0, {'refused': None, 'c': 1.0},
                        location={'gone': 'elsewhere', 'refused': 'm',
                                  'c': 'm'})
        applier.run(view)
        # 'gone' is no longer on the node: skipped, never started.
        self.assertEqual([('refused', None, 10.0), ('c', None, 10.0)],
                         view.started)


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
        # vm0 and vm4 leave host-0 in one layer of two at 60 s; host-0
        # works from 120 s and is back at 180 s, when host-1 enters.
        self.assertEqual([(1, 'host-0'), (3, 'host-1')], audits)
        first, second = result.drains
        self.assertEqual((61.0, 2, 0, 120.0, 180.0), (
            first.emptied, first.migrations, first.left_behind,
            first.work_started, first.returned))
        # Nova sent vm0 to host-1 (the most room, first by name), so
        # host-1's three instances leave in two layers: 180 s, then 185 s.
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
