"""Watcher's strategies on the modelled cluster (``tox -e watcher``).

Skipped where python-watcher is not installed: Nova's test environment
cannot hold it.
"""

import functools
import importlib.util

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces
from nova_drs_scheduler.simulate import watcher_adapter

HAVE_WATCHER = importlib.util.find_spec('watcher') is not None
CONFIG = model.PlannerConfig()


class MissingTest(testtools.TestCase):

    @testtools.skipIf(HAVE_WATCHER, 'python-watcher is installed')
    def test_missing_watcher_says_where_to_run(self):
        error = self.assertRaises(watcher_adapter.WatcherMissingError,
                                  strategies.build,
                                  'watcher_workload_balance', CONFIG, 1, {})
        self.assertIn('tox -e watcher', str(error))


@testtools.skipUnless(HAVE_WATCHER, 'python-watcher is not installed')
class WatcherTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # host-0 runs vm0 and vm3 at 90 % of 2 vCPUs each: 90 % of 4 CPUs.
        columns = ([90.0] * 4, [10.0] * 4, [10.0] * 4, [90.0] * 4)
        self.trace = traces.Trace(('vm0', 'vm1', 'vm2', 'vm3'),
                                  tuple(zip(*columns, strict=True)), 60)
        flavor = cluster.Flavor('f', 2, 1024)
        self.vms = cluster.assign_flavors(self.trace.names, (flavor,), 0)
        self.spec = cluster.ClusterSpec(hosts=3, host_vcpus=4,
                                        host_memory_mb=8192,
                                        cpu_allocation_ratio=2.0)
        self.settings = engine.Settings(
            CONFIG, functools.partial(metrics.MetricsWindows, 3, 3, 180,
                                      80.0, 90.0))

    def _run(self, name, parameters):
        strategy = strategies.build(f'watcher_{name}', CONFIG, 1,
                                    {name: parameters})
        return engine.run(self.trace, self.vms, self.spec, strategy,
                          self.settings).card

    def test_workload_balance_relieves_the_hot_host_at_once(self):
        card = self._run('workload_balance', {'threshold': 80.0})
        self.assertEqual([1, 0, 0, 0], card.overloaded_series)
        self.assertEqual(1, card.migrations)
        self.assertEqual(4, len(card.plan_seconds))

    def test_its_plan_runs_through_watchers_applier(self):
        strategy = strategies.build('watcher_workload_balance', CONFIG, 1,
                                    {'workload_balance': {'threshold': 80.0}})
        added = []
        real = strategy._applier.add
        strategy._applier.add = lambda actions, at: added.append(
            (at, list(actions))) or real(actions, at)
        card = engine.run(self.trace, self.vms, self.spec, strategy,
                          self.settings).card
        # One audit a period; the first moves one instance off host-0,
        # started by the applier (the engine is handed no move).
        (at, [(vm, source, destination)]), = [a for a in added if a[1]]
        self.assertEqual((0.0, 'host-0', 1), (at, source, card.migrations))
        self.assertIn(vm, ('vm0', 'vm3'))
        self.assertIn(destination, ('host-1', 'host-2'))

    def test_audits_while_a_plan_runs_only_when_forced(self):
        def audits(force):
            strategy = watcher_adapter.WatcherStrategy(
                'workload_balance', {'threshold': 80.0}, 1, force=force)
            made = []
            new = strategy._class.new
            strategy._class.new = lambda: made.append(1) or new()
            # The plan of the first audit never ends.
            strategy._applier.busy = lambda now: bool(made)
            engine.run(self.trace, self.vms, self.spec, strategy,
                       self.settings)
            return len(made)
        self.assertEqual((4, 1), (audits(True), audits(False)))

    def test_workload_balance_default_threshold_finds_no_target(self):
        # 25 %: the two idle hosts are at 5 %, but after the move 50 %.
        card = self._run('workload_balance', {})
        self.assertEqual(0, card.migrations)

    def test_workload_stabilization_runs_with_its_defaults(self):
        card = self._run('workload_stabilization', {})
        self.assertEqual(0, card.overloaded_series[-1])
        self.assertLessEqual(1, card.migrations)

    def test_debug_string_is_not_built_and_times_are_split(self):
        strategy = strategies.build('watcher_workload_balance', CONFIG, 1,
                                    {'workload_balance': {'threshold': 80.0}})
        calls = []
        real = strategy._model.sync

        def sync(cluster):
            root = real(cluster)
            calls.append(root.to_string())
            return root

        strategy._model.sync = sync
        card = engine.run(self.trace, self.vms, self.spec, strategy,
                          self.settings).card
        self.assertIn('not built by the simulator', calls[0])
        self.assertEqual(4, len(card.input_seconds))
        self.assertTrue(all(s > 0 for s in card.input_seconds))
        self.assertTrue(all(s > 0 for s in card.plan_seconds))

    def test_label_names_the_row(self):
        strategy = watcher_adapter.WatcherStrategy(
            'workload_balance', {'period': 60}, 1, 'WB 60 s')
        self.assertEqual('WB 60 s', strategy.name)
        self.assertEqual(60, strategy.parameters['period'])
        self.assertEqual(300, strategy.parameters['granularity'])
