"""The simulation loop on hand-built traces, then a short end-to-end run."""

import dataclasses
import functools
import math

import testtools

from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces

# Three periods over before a move, so the tests can see the wait.
CONFIG = model.PlannerConfig(stabilization=3)


def _settings(interval=60, **kwargs):
    windows = functools.partial(
        metrics.MetricsWindows, 3, CONFIG.stabilization, 180,
        CONFIG.cpu_threshold, CONFIG.ram_threshold)
    return engine.Settings(CONFIG, windows, interval=interval, **kwargs)


def _trace(*columns, step_seconds=60):
    names = tuple(f'vm{i}' for i in range(len(columns)))
    return traces.Trace(names, tuple(zip(*columns, strict=True)), step_seconds)


class Scripted:
    """Plays fixed moves at fixed periods and keeps every view."""

    name = 'scripted'

    def __init__(self, moves):
        self.moves = moves
        self.seen = []

    def plan(self, view):
        self.seen.append(({h: view.host_history[h][-1]
                           for h in view.cluster.hosts},
                          dict(view.blocked)))
        return self.moves.get(view.period, []), 0.0, 0.001


class LoopTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        flavor = cluster.Flavor('f', 4, 1024)
        self.trace = _trace([100.0] * 5, [0.0] * 5)
        self.vms = cluster.assign_flavors(self.trace.names, (flavor,), 0)
        # 1 GiB copies in 90 s: started at t=60 it ends at t=150.
        self.spec = cluster.ClusterSpec(
            hosts=2, host_vcpus=4, host_memory_mb=4096,
            cpu_allocation_ratio=2.0,
            bandwidth_mbps=1024 * 8 * 1.048576 / 90)

    def test_no_moves_counts_every_overloaded_period(self):
        result = engine.run(self.trace, self.vms, self.spec,
                            strategies.NoMoves(), _settings())
        summary = result.card.summary()
        self.assertEqual(5, summary['overloaded_host_periods'])
        self.assertEqual(100.0, summary['worst_overload_percent'])
        self.assertEqual(50.0, result.mean_load)

    def test_load_arrives_when_the_migration_ends(self):
        script = Scripted({1: [('vm0', 'host-1')]})
        result = engine.run(self.trace, self.vms, self.spec, script,
                            _settings())
        self.assertEqual([1, 1, 1, 1, 1], result.card.overloaded_series)
        self.assertEqual([100.0, 100.0, 100.0, 0.0, 0.0],
                         [load['host-0'] for load, _ in script.seen])
        self.assertEqual([0.0, 0.0, 0.0, 100.0, 100.0],
                         [load['host-1'] for load, _ in script.seen])
        self.assertEqual({}, script.seen[1][1])
        self.assertEqual({'vm0': 'migrating host-0 -> host-1'},
                         script.seen[2][1])
        self.assertIn('cooldown', script.seen[3][1]['vm0'])
        self.assertEqual(1, result.card.migrations)
        self.assertEqual(1.0, result.card.summary()['gb_moved'])
        self.assertEqual(5, len(result.card.plan_seconds))

    def test_moves_nova_would_refuse_are_counted_not_applied(self):
        script = Scripted({0: [('vm0', 'host-0'), ('vm0', 'host-1'),
                               ('vm0', 'host-1'), ('vm1', 'host-0')]})
        result = engine.run(self.trace, self.vms, self.spec, script,
                            _settings())
        self.assertEqual({'destination is the source': 1,
                          'already migrating': 1},
                         dict(result.card.failed))
        self.assertEqual(2, result.card.migrations)

    def test_periods_subdivide_trace_steps(self):
        trace = _trace([100.0, 0.0], [0.0, 0.0], step_seconds=300)
        result = engine.run(trace, self.vms, self.spec,
                            strategies.NoMoves(), _settings(interval=60))
        self.assertEqual([1] * 5 + [0] * 5, result.card.overloaded_series)


class PlannerTest(testtools.TestCase):
    """The production planner, driven through the simulator."""

    def setUp(self):
        super().setUp()
        # Spread puts vm0 and vm3 on host-0: 2 x 1.8 cores = 90 %.
        self.trace = _trace([90.0] * 8, [10.0] * 8, [10.0] * 8, [90.0] * 8)
        flavor = cluster.Flavor('f', 2, 1024)
        self.vms = cluster.assign_flavors(self.trace.names, (flavor,), 0)
        self.spec = cluster.ClusterSpec(hosts=3, host_vcpus=4,
                                        host_memory_mb=8192,
                                        cpu_allocation_ratio=2.0)

    def _run(self, policy):
        return engine.run(self.trace, self.vms, self.spec,
                          strategies.PlannerStrategy(CONFIG, policy),
                          _settings())

    def test_sustained_overload_moves_one_instance_after_stabilization(self):
        for policy in strategies.PLANNER_POLICIES:
            card = self._run(policy).card
            # Over in periods 0, 1, 2; violated at 2; cured from 3 on.
            self.assertEqual([1, 1, 1, 0, 0, 0, 0, 0],
                             card.overloaded_series, policy)
            self.assertEqual(1, card.migrations, policy)
            self.assertEqual(0, sum(card.failed.values()), policy)


class SnapshotInputsTest(testtools.TestCase):
    """Instances kept between periods read as if built anew."""

    def test_reused_instances_equal_a_fresh_build_every_period(self):
        trace = _trace([90.0, 90.0, 50.0, 50.0, 95.0, 95.0, 95.0, 20.0],
                       [10.0] * 8, [10.0, 60.0] * 4, [90.0] * 8)
        flavor = cluster.Flavor('f', 2, 1024)
        vms = cluster.assign_flavors(trace.names, (flavor,), 0)
        spec = cluster.ClusterSpec(hosts=3, host_vcpus=4,
                                   host_memory_mb=8192,
                                   cpu_allocation_ratio=2.0)
        planner = strategies.PlannerStrategy(
            dataclasses.replace(CONFIG, stabilization=1), 'balanced')
        checked = []

        class Checking:
            name = 'checking'

            def plan(self, view):
                kept = view.snapshot(CONFIG).instances
                fresh = engine.SnapshotInputs(view.cluster).build(view)
                checked.append(list(kept) == fresh)
                return planner.plan(view)

        card = engine.run(trace, vms, spec, Checking(),
                          _settings(cooldown=120, no_return=180)).card
        self.assertGreater(card.migrations, 0)
        self.assertEqual([True] * 8, checked)

    @staticmethod
    def _hosts_seen(loads, host_vcpus, **windows_options):
        """Each period's host snapshots of a two-host replay where vm0
        (2 vCPUs) alone on host-0 runs at ``loads``."""
        trace = _trace(loads, [10.0] * len(loads))
        flavor = cluster.Flavor('f', 2, 1024)
        vms = cluster.assign_flavors(trace.names, (flavor,), 0)
        spec = cluster.ClusterSpec(hosts=2, host_vcpus=host_vcpus,
                                   host_memory_mb=8192)
        windows = functools.partial(metrics.MetricsWindows, 1, 1, 180,
                                    80.0, 90.0, **windows_options)
        seen = []

        class Recording:
            name = 'recording'

            def plan(self, view):
                seen.append(view.snapshot(CONFIG).hosts)
                return [], 0.0, 0.0

        engine.run(trace, vms, spec, Recording(),
                   engine.Settings(CONFIG, windows, interval=60))
        return seen

    def test_hosts_carry_their_expected_load(self):
        seen = self._hosts_seen([90.0, 10.0], 4, halflife=60)
        # vm0 alone on host-0: 45 % then 5 %, half-way after one
        # half-life.
        host = seen[1]['host-0']
        self.assertEqual(5.0, host.cpu_percent)
        self.assertAlmostEqual(25.0, host.cpu_expected)

    def test_hosts_carry_their_rise_rate(self):
        # 10 %, then 90 % in one step on a 2-CPU host-0.
        seen = self._hosts_seen([10.0, 90.0], 2, rise_halflife=3600)
        self.assertEqual([0.0, 0.0],
                         [seen[0][n].rise_rate for n in sorted(seen[0])])
        self.assertAlmostEqual(math.log(2), seen[1]['host-0'].rise_rate)

class EndToEndTest(testtools.TestCase):
    """A few seconds of the real thing on a synthetic trace."""

    def test_strategies_side_by_side(self):
        trace = traces.synthetic(vms=240, steps=36, seed=7)
        vms = cluster.assign_flavors(trace.names, cluster.DEFAULT_FLAVORS,
                                     7)
        hosts = cluster.hosts_for_load(vms, trace, 60.0, 32)
        spec = cluster.ClusterSpec(hosts=hosts)
        settings = _settings(interval=300)
        results = {name: engine.run(trace, vms, spec,
                                    strategies.build(name, CONFIG, 7, {}),
                                    settings)
                   for name in ('none', 'seed', 'balanced')}
        for name, result in results.items():
            card = result.card
            self.assertEqual(36, len(card.stddev_series), name)
            self.assertEqual(36, len(card.plan_seconds), name)
            self.assertEqual(0, sum(card.failed.values()), name)
            self.assertAlmostEqual(60.0, result.mean_load, delta=8.0)
        self.assertEqual(0, results['none'].card.migrations)
        self.assertLessEqual(
            sum(results['balanced'].card.overloaded_series),
            sum(results['none'].card.overloaded_series))
