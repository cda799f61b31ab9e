"""The simulation loop on hand-built traces, then a short end-to-end run."""

import dataclasses
import functools
import math
import types

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces

# Three periods over before a move, so the tests can see the wait.
CONFIG = model.PlannerConfig(stabilization=3)


#: Two 4-CPU hosts, where 1 GiB copies in 90 s whatever the load.
TWO_SLOW_HOSTS = cluster.ClusterSpec(
    hosts=2, host_vcpus=4, host_memory_mb=4096, cpu_allocation_ratio=2.0,
    bandwidth_mbps=1024 * 8 * 1.048576 / 90, dirty_mib_per_core=0.0)


def _settings(interval=60, **kwargs):
    windows = functools.partial(
        metrics.MetricsWindows, 3, CONFIG.stabilization, 180,
        CONFIG.cpu_threshold, CONFIG.ram_threshold)
    return engine.Settings(CONFIG, windows, interval=interval, **kwargs)


def _trace(*columns, step_seconds=60):
    names = tuple(f'vm{i}' for i in range(len(columns)))
    return traces.Trace(names, tuple(zip(*columns, strict=True)), step_seconds)


class Recording:
    """Plays fixed moves at fixed periods and keeps what ``look`` reads."""

    name = 'recording'

    def __init__(self, look, moves=None):
        self.look, self.moves = look, moves or {}
        self.seen = []

    def plan(self, view):
        self.seen.append(self.look(view))
        return self.moves.get(view.period, []), 0.0, 0.0


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
        # Started at t=60, a migration ends at t=150.
        self.spec = TWO_SLOW_HOSTS

    def test_no_moves_counts_every_overloaded_period(self):
        result = engine.run(self.trace, self.vms, self.spec,
                            strategies.NoMoves(), _settings())
        summary = result.card.summary()
        self.assertEqual(5, summary['overloaded_host_periods'])
        self.assertEqual(100.0, summary['worst_overload_percent'])
        self.assertEqual(50.0, result.mean_load)

    def test_load_on_both_hosts_while_the_migration_runs(self):
        # In flight from 60 s to 150 s: the sample at 120 s has it on both
        # hosts; the one at 180 s on the destination, and on the source
        # for the 30 s of the minute the copy still ran.
        script = Scripted({1: [('vm0', 'host-1')]})
        result = engine.run(self.trace, self.vms, self.spec, script,
                            _settings())
        self.assertEqual([1, 1, 2, 1, 1], result.card.overloaded_series)
        self.assertEqual([100.0, 100.0, 100.0, 50.0, 0.0],
                         [load['host-0'] for load, _ in script.seen])
        self.assertEqual([0.0, 0.0, 100.0, 100.0, 100.0],
                         [load['host-1'] for load, _ in script.seen])
        self.assertEqual(1.5, result.card.summary()[
            'instance_minutes_in_migration'])
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

    def test_cooldown_and_no_return_count_from_the_end(self):
        # 1 GiB at the default 10 Gbit/s: started at 0, over at 0.859 s.
        spec = dataclasses.replace(self.spec, bandwidth_mbps=10000.0)
        script = Recording(lambda view: (dict(view.blocked),
                                         dict(view.left)),
                           {0: [('vm0', 'host-1')]})
        engine.run(_trace([100.0] * 7, [0.0] * 7), self.vms, spec, script,
                   _settings(cooldown=60, no_return=300))
        left = {'vm0': ('host-0',)}
        self.assertEqual(
            [({}, {}),
             ({'vm0': 'cooldown: moved host-0 -> host-1 59s ago '
                      '(cooldown 60s)'}, left),   # 59.14 s after the end
             ({}, left), ({}, left), ({}, left),
             ({}, left),                          # 299.14 s after
             ({}, {})],
            script.seen)

    def test_only_a_cooldown_marks_an_instance_cooling(self):
        # 1 GiB at 100 Mbit/s, over at about 86 s: in flight at 60 s
        # (blocked, not cooling), in its 100 s cooldown at 120 s and 180 s
        # (cooling), free at 240 s.
        spec = dataclasses.replace(self.spec, bandwidth_mbps=100.0)
        script = Recording(
            lambda view: [(i.blocked is not None, i.cooling)
                          for i in view.snapshot(CONFIG).instances][0],
            {0: [('vm0', 'host-1')]})
        engine.run(_trace([100.0] * 5, [0.0] * 5), self.vms, spec, script,
                   _settings(cooldown=100, no_return=0))
        self.assertEqual([(False, False), (True, False), (True, True),
                          (True, True), (False, False)], script.seen)

    def test_moves_back_and_forth_read_anew(self):
        # Four sub-second moves, none in cooldown, each source barred for
        # 150 s: the planner's instance follows every move and expiry.
        spec = dataclasses.replace(self.spec, bandwidth_mbps=10000.0)
        script = Recording(
            lambda view: [(i.host, i.left)
                          for i in view.snapshot(CONFIG).instances][0],
            {p: [('vm0', f'host-{(p + 1) % 2}')] for p in range(4)})
        engine.run(_trace([100.0] * 7, [0.0] * 7), self.vms, spec, script,
                   _settings(cooldown=0, no_return=150))
        both = ('host-0', 'host-1')
        self.assertEqual([('host-0', ()), ('host-1', ('host-0',)),
                          ('host-0', both), ('host-1', both),
                          ('host-0', both),
                          ('host-0', ('host-1',)),   # left host-0 179 s ago
                          ('host-0', ())],
                         script.seen)

    def test_history_keeps_an_hour_of_periods(self):
        script = Recording(lambda view: len(view.host_history['host-0']))
        for interval, periods, kept in ((60, 120, 60), (277, 14, 12)):
            trace = _trace([1.0], [1.0], step_seconds=interval * periods)
            engine.run(trace, self.vms, self.spec, script,
                       _settings(interval=interval))
            self.assertEqual(kept, script.seen[-1])

    def test_periods_subdivide_trace_steps(self):
        trace = _trace([100.0, 0.0], [0.0, 0.0], step_seconds=300)
        result = engine.run(trace, self.vms, self.spec,
                            strategies.NoMoves(), _settings(interval=60))
        self.assertEqual([1] * 5 + [0] * 5, result.card.overloaded_series)


class AccountingTest(testtools.TestCase):
    """The columns the engine feeds the scorecard from each measurement."""

    def setUp(self):
        super().setUp()
        self.flavor = cluster.Flavor('f', 4, 1024)
        self.spec = TWO_SLOW_HOSTS

    def test_unserved_core_minutes(self):
        # Both VMs (4 vCPUs at 100 %) on one 4-CPU host: 4 cores over its
        # capacity, for five one-minute periods.
        trace = _trace([100.0] * 5, [100.0] * 5)
        vms = cluster.assign_flavors(trace.names, (self.flavor,), 0)
        spec = dataclasses.replace(self.spec, hosts=1)
        card = engine.run(trace, vms, spec, strategies.NoMoves(),
                          _settings()).card
        self.assertEqual(20.0, card.summary()['unserved_core_minutes'])

    def test_drs_caused_host_periods(self):
        # vm0 (host-0, 100 %) goes to host-1 at 60 s, in flight until
        # 150 s: host-1 is over from 120 s, by an arrival from 180 s, for
        # two periods.
        trace = _trace([100.0] * 7, [0.0] * 7)
        vms = cluster.assign_flavors(trace.names, (self.flavor,), 0)
        script = Recording(lambda view: sorted(view.drs_caused),
                           {1: [('vm0', 'host-1')]})
        card = engine.run(trace, vms, self.spec, script,
                          _settings(arrival_periods=2)).card
        self.assertEqual([1, 1, 2, 1, 1, 1, 1], card.overloaded_series)
        self.assertEqual([[], [], [], ['host-1'], ['host-1'], [], []],
                         script.seen)
        self.assertEqual([0, 0, 0, 1, 1, 0, 0], card.caused_series)
        self.assertEqual(
            2, card.summary()['drs_caused_overloaded_host_periods'])

    def test_an_arrival_causes_the_overload_it_alone_brings(self):
        # vm0 (4 vCPUs at 50.5 %: 50.5 % of a 4-CPU host) reaches host-1 at
        # 150 s; host-1 carries vm1 at 79.75 % or 80.25 %.  Without the
        # arrival the first is not over its threshold (80 %): caused; the
        # second is: not caused.
        for own, over, caused in ((79.75, [0, 0, 1, 1], [0, 0, 0, 1]),
                                  (80.25, [1, 1, 1, 1], [0, 0, 0, 0])):
            trace = _trace([50.5] * 4, [own] * 4)
            vms = cluster.assign_flavors(trace.names, (self.flavor,), 0)
            script = Recording(lambda view: None, {1: [('vm0', 'host-1')]})
            card = engine.run(trace, vms, self.spec, script,
                              _settings(arrival_periods=2)).card
            self.assertEqual(over, card.overloaded_series)
            self.assertEqual(caused, card.caused_series)

    def test_relief_checked_after_the_move_ends(self):
        # Three 4-CPU hosts; vm0 and vm3 (2 vCPUs at 90 %) on host-0
        # (90 %), vm1 on host-1 and vm2 on host-2 (10 %: 5 %).  Sub-second
        # copies; checks one period after the end: the first period 60 s
        # after it.
        trace = _trace([90.0] * 8, [10.0] * 8, [10.0] * 8, [90.0] * 8)
        vms = cluster.assign_flavors(
            trace.names, (cluster.Flavor('f', 2, 1024),), 0)
        spec = dataclasses.replace(self.spec, hosts=3, host_memory_mb=8192,
                                   bandwidth_mbps=10000.0)

        def move(instance, destination, goal, **expected):
            return model.Move(instance, 'host-0', destination, 'test',
                              expected, goal=goal)

        promise = {'source_cpu_before': 90.0, 'source_cpu': 45.0,
                   'destination_cpu': 50.0}
        script = Recording(lambda view: None, {
            # Checked at 120 s: host-0 45 %, host-1 50 %: held.
            0: [move('vm0', 'host-1', model.BALANCE, **promise)],
            # Checked at 240 s: host-0 0 %, host-1 95 %: not held.
            2: [move('vm3', 'host-1', model.LEVEL, **promise)],
            # None checked: a pair (Watcher's), a drain, and a move whose
            # plan recorded no load before it.
            3: [('vm2', 'host-0'),
                move('vm1', 'host-2', model.DRAIN, **promise)],
            4: [move('vm0', 'host-2', model.BALANCE, source_cpu=1.0,
                     destination_cpu=1.0)],
        })
        card = engine.run(trace, vms, spec, script,
                          _settings(relief_check_periods=1)).card
        self.assertEqual(5, card.migrations)
        summary = card.summary()
        self.assertEqual(2, summary['relief_checked'])
        self.assertEqual(50.0, summary['relief_held_percent'])
        self.assertEqual([True, False],
                         [o['held'] for o in card.reliefs if o])
        self.assertEqual((True, False),
                         (card.reliefs[1]['source_relieved'],
                          card.reliefs[1]['destination_spared']))

    def test_relief_check_learns_whether_the_moved_load_stayed(self):
        # vm0 keeps its 90 % (1.8 cores) after its move at 0 s; vm3 falls
        # to 10 % from 180 s, before its check at 240 s: the first load
        # stayed, the second did not.  The snapshot's host-0 has them.
        trace = _trace([90.0] * 6, [10.0] * 6, [10.0] * 6,
                       [90.0] * 3 + [10.0] * 3)
        seen, card = self._stayed(trace, 3, {0: ('vm0', 'host-1'),
                                             2: ('vm3', 'host-2')})
        self.assertEqual([None, None, (1, 1), (1, 1), (1, 2), (1, 2)], seen)
        self.assertEqual([(True, 1.8), (False, 0.2)],
                         [(o['load_stayed'], o['instance_cores'])
                          for o in card.reliefs if o])

    def test_a_relief_due_at_a_period_is_checked_in_it(self):
        # A 60 s copy from 60 s ends at 120 s: checked a period later, at
        # 180 s, the fourth period.
        spec = dataclasses.replace(
            self.spec, bandwidth_mbps=1024 * 8 * 1.048576 / 60)
        trace = _trace([100.0] * 4, [0.0] * 4)
        vms = cluster.assign_flavors(trace.names, (self.flavor,), 0)
        script = Recording(lambda view: None, {1: [model.Move(
            'vm0', 'host-0', 'host-1', 'test',
            {'source_cpu_before': 100.0, 'source_cpu': 0.0,
             'destination_cpu': 100.0})]})
        card = engine.run(trace, vms, spec, script,
                          _settings(relief_check_periods=1)).card
        self.assertEqual(1, card.summary()['relief_checked'])

    def test_reliefs_are_checked_in_the_order_they_fall_due(self):
        # 90 s copies on separate links: vm0 host-0 -> host-1 from 0 s
        # (due at 150 s), vm2 host-2 -> host-3 from 60 s (due at 210 s).
        # The period at 180 s checks the first, though the second is
        # queued behind it.
        spec = dataclasses.replace(self.spec, hosts=4)
        trace = _trace(*([[100.0] * 4] * 4))
        vms = cluster.assign_flavors(trace.names, (self.flavor,), 0)
        promise = {'source_cpu_before': 100.0, 'source_cpu': 0.0,
                   'destination_cpu': 100.0}
        script = Recording(lambda view: None, {
            0: [model.Move('vm0', 'host-0', 'host-1', 'test', promise)],
            1: [model.Move('vm2', 'host-2', 'host-3', 'test', promise)]})
        card = engine.run(trace, vms, spec, script,
                          _settings(relief_check_periods=1)).card
        self.assertEqual(2, card.migrations)
        self.assertEqual(1, card.summary()['relief_checked'])

    def test_relief_checks_are_learnt_from_for_two_hours(self):
        # vm0's move at 0 s (over at 0.86 s) is checked at the first
        # period a period after its end, 120 s; what leveling learns from
        # it counts until 7200 s after the check (7320 s), not after.
        trace = _trace([90.0] * 124, [10.0] * 124)
        seen, _ = self._stayed(trace, 2, {0: ('vm0', 'host-1')})
        self.assertEqual([None, None] + [(1, 1)] * 121 + [None], seen)

    def _stayed(self, trace, hosts, moves):
        """host-0's ``loads_stayed`` each period of ``trace`` on ``hosts``
        hosts (2-vCPU VMs, sub-second copies, checks a period after the
        end), with ``moves`` ({period: (instance, destination)}) off
        host-0 that each promise vm0's load; and the scorecard."""
        vms = cluster.assign_flavors(
            trace.names, (cluster.Flavor('f', 2, 1024),), 0)
        spec = dataclasses.replace(self.spec, hosts=hosts,
                                   host_memory_mb=8192,
                                   bandwidth_mbps=10000.0)
        promise = {'source_cpu_before': 90.0, 'source_cpu': 45.0,
                   'destination_cpu': 50.0, 'instance_cores': 1.8}
        script = Recording(
            lambda view: view.snapshot(model.PlannerConfig())
            .hosts['host-0'].loads_stayed,
            {period: [model.Move(name, 'host-0', destination, 'test',
                                 promise)]
             for period, (name, destination) in moves.items()})
        card = engine.run(trace, vms, spec, script,
                          _settings(relief_check_periods=1)).card
        return script.seen, card

    def test_relief_check_waits_for_the_end_of_the_migration(self):
        # A 90 s copy from 60 s ends at 150 s: checked 10 periods later at
        # the first period from 750 s (780 s, period 13): a 13-period run
        # checks nothing, a 14-period one checks it.
        for periods, checked in ((13, 0), (14, 1)):
            trace = _trace([100.0] * periods, [0.0] * periods)
            vms = cluster.assign_flavors(trace.names, (self.flavor,), 0)
            script = Recording(lambda view: None, {1: [model.Move(
                'vm0', 'host-0', 'host-1', 'test',
                {'source_cpu_before': 100.0, 'source_cpu': 0.0,
                 'destination_cpu': 100.0})]})
            card = engine.run(trace, vms, self.spec, script,
                              _settings()).card
            self.assertEqual(checked, card.summary()['relief_checked'])


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

    def test_drains_only_leaves_the_overload(self):
        drains = strategies.PlannerStrategy(CONFIG, 'balanced',
                                            goals=(model.DRAIN,),
                                            label='drains only')
        card = engine.run(self.trace, self.vms, self.spec, drains,
                          _settings()).card
        self.assertEqual(('drains only', [1] * 8, 0),
                         (drains.name, card.overloaded_series,
                          card.migrations))


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

        trended = []

        class Checking:
            name = 'checking'

            def plan(self, view):
                snapshot = view.snapshot(CONFIG)
                kept = snapshot.instances
                # Trends need history: the fresh build reads the same.
                fresh = engine.SnapshotInputs(view.cluster)
                fresh.trends = view.inputs.trends
                checked.append(list(kept) == fresh.build(
                    view, view.measured(snapshot.hosts, CONFIG), CONFIG))
                trended.append(len(snapshot.trends))
                return planner.plan(view)

        # With no cooldown and no no-return time, a sub-second move (1 GiB
        # at 10 Gbit/s) is never blocked: only its end says it moved.
        for cooldown, no_return in ((120, 180), (0, 0)):
            del checked[:]
            card = engine.run(trace, vms, spec, Checking(),
                              _settings(cooldown=cooldown,
                                        no_return=no_return)).card
            self.assertGreater(card.migrations, 0)
            self.assertEqual([True] * 8, checked)
            self.assertGreater(max(trended), 0)

    def test_trends_of_the_instances_on_measured_hosts(self):
        # vm0 (2 vCPUs) alone on 2-CPU host-0 runs at 90 % then 100 %
        # (two periods each, over the threshold: measured), then 10 %;
        # vm1 on host-1 stays at 10 %, never measured.
        trace = _trace([90.0, 100.0, 10.0, 10.0], [10.0] * 4,
                       step_seconds=120)
        flavor = cluster.Flavor('f', 2, 1024)
        vms = cluster.assign_flavors(trace.names, (flavor,), 0)
        spec = cluster.ClusterSpec(hosts=2, host_vcpus=2,
                                   host_memory_mb=8192)
        windows = functools.partial(metrics.MetricsWindows, 1, 1, 180,
                                    80.0, 90.0)
        def trends(view):
            found = view.snapshot(CONFIG).trends
            return [found.get(name, (None, None)) for name in ('vm0', 'vm1')]
        script = Recording(trends)
        engine.run(trace, vms, spec, script,
                   engine.Settings(CONFIG, windows, trend_max_age=120))
        # The oracle: the same trends fed by hand at 0, 60, 120 and 180 s.
        trends = metrics.LoadTrends(CONFIG.load_halflife, 120)
        expected = []
        for now, cores in ((0, 1.8), (60, 1.8), (120, 2.0), (180, 2.0)):
            trends.update(now, {'vm0': cores})
            expected.append(trends['vm0'])
        # Kept unmeasured up to 120 s after 180 s, forgotten at 360 s.
        expected += [expected[-1]] * 2 + [(None, None)] * 2
        self.assertEqual(expected, [vm0 for vm0, _ in script.seen])
        self.assertEqual([(None, None)] * 8, [vm1 for _, vm1 in script.seen])
        self.assertIsNone(expected[0][1])
        self.assertGreater(expected[3][1], 0.0)

    def test_no_trends_with_a_half_life_of_0(self):
        # vm0 alone on 2-CPU host-0 at 90 %: measured every period.
        trace = _trace([90.0] * 3, [10.0] * 3)
        flavor = cluster.Flavor('f', 2, 1024)
        vms = cluster.assign_flavors(trace.names, (flavor,), 0)
        spec = cluster.ClusterSpec(hosts=2, host_vcpus=2,
                                   host_memory_mb=8192)
        for halflife, trended in ((0.0, [0, 0, 0]), (1.0, [1, 1, 1])):
            config = dataclasses.replace(CONFIG, load_halflife=halflife)
            script = Recording(
                lambda view, c=config: len(view.snapshot(c).trends))
            engine.run(trace, vms, spec, script,
                       engine.Settings(config, functools.partial(
                           metrics.MetricsWindows, 1, 1, 180, 80.0, 90.0)))
            self.assertEqual(trended, script.seen)

    def test_trends_of_the_instances_on_a_leveling_source(self):
        # vm0 alone on 2-CPU host-0 at 75 %: under its threshold, within
        # level_band of it, in a pool that levels everywhere
        # (level_rise_rate 0): a leveling source, whose instances are
        # measured; not with leveling off (level_gap 0).  At 85 % it is
        # measured as over its threshold, a leveling source too.
        flavor = cluster.Flavor('f', 2, 1024)
        spec = cluster.ClusterSpec(hosts=2, host_vcpus=2,
                                   host_memory_mb=8192)
        for load, gap, trended in ((75.0, 10.0, ['vm0']), (75.0, 0.0, []),
                                   (85.0, 10.0, ['vm0'])):
            trace = _trace([load] * 3, [10.0] * 3)
            vms = cluster.assign_flavors(trace.names, (flavor,), 0)
            config = dataclasses.replace(CONFIG, level_rise_rate=0.0,
                                         level_gap=gap)
            script = Recording(
                lambda view, c=config: sorted(view.snapshot(c).trends))
            engine.run(trace, vms, spec, script,
                       engine.Settings(config, functools.partial(
                           metrics.MetricsWindows, 1, 1, 180, 80.0, 90.0)))
            self.assertEqual([trended] * 3, script.seen)

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

    def test_host_percent_of_its_cpus(self):
        # 90 % of 2 vCPUs on 8 CPUs.
        self.assertEqual(22.5, self._hosts_seen([90.0], 8)[0]['host-0']
                         .cpu_percent)

    def test_instance_loads_by_hand(self):
        # vm0 (2 vCPUs) stays on host-0 and falls, so each trace row is
        # below the one before; vm1 moves to host-0 at period 1, in flight
        # for 200 s (periods 2 to 4), up then down. Windows of 2 periods.
        trace = _trace([90.0, 71.0, 50.0, 41.0, 30.0, 21.0],
                       [10.0, 10.0, 20.0, 40.0, 10.0, 30.0])
        flavor = cluster.Flavor('f', 2, 1024)
        vms = cluster.assign_flavors(trace.names, (flavor,), 0)
        spec = cluster.ClusterSpec(hosts=2, host_vcpus=4,
                                   host_memory_mb=8192,
                                   bandwidth_mbps=1024 * 8 * 1.048576 / 200,
                                   dirty_mib_per_core=0.0)
        windows = functools.partial(metrics.MetricsWindows, 2, 1, 180,
                                    80.0, 90.0)
        script = Recording(
            lambda view: [(i.host, round(i.cpu_cores, 6))
                          for i in view.snapshot(CONFIG).instances],
            {1: [('vm1', 'host-0')]})
        engine.run(trace, vms, spec, script,
                   engine.Settings(CONFIG, windows, cooldown=0, no_return=0))
        self.assertEqual(
            [[('host-0', 1.8), ('host-1', 0.2)],     # 90 and 10 %
             [('host-0', 1.61), ('host-1', 0.2)],    # (90 + 71) / 2
             [('host-0', 1.21), ('host-1', 0.3)],
             [('host-0', 0.91), ('host-1', 0.6)],
             [('host-0', 0.71), ('host-1', 0.5)],
             [('host-0', 0.51), ('host-0', 0.4)]],   # arrived at 260 s
            script.seen)

    def test_hosts_carry_their_rise_rate(self):
        # 10 %, then 90 % in one step on a 2-CPU host-0.
        seen = self._hosts_seen([10.0, 90.0], 2, rise_halflife=3600)
        self.assertEqual([0.0, 0.0],
                         [seen[0][n].rise_rate for n in sorted(seen[0])])
        self.assertAlmostEqual(math.log(2), seen[1]['host-0'].rise_rate)

class PeriodViewTest(testtools.TestCase):

    def test_rows_and_vm_percent(self):
        # Steps of 2 periods: periods 0-7 read steps 0, 0, 1, 1, 2, 2, 3, 3.
        trace = _trace([10.0, 20.0, 30.0, 45.0], step_seconds=120)
        view = engine.PeriodView(7, 420.0, 60, trace, None, {}, {}, {}, 3)
        vm = cluster.VM('vm0', 0, cluster.Flavor('f', 1, 512))
        self.assertEqual([(30.0,), (45.0,), (45.0,)], view.rows(3))
        self.assertEqual(45.0, view.vm_percent(vm, 2))
        self.assertAlmostEqual(120.0 / 3, view.vm_percent(vm, 3))
        self.assertEqual(210.0 / 8, view.vm_percent(vm, 10))   # all 8


class SettingsTest(testtools.TestCase):

    def test_defaults_are_the_drs_options(self):
        # rebalance_interval, instance_cooldown, no_return_time; a
        # ping-pong within 3 hours of one-minute periods.
        settings = engine.Settings(CONFIG, None)
        self.assertEqual((60, 3600.0, 21600.0, 180),
                         (settings.interval, settings.cooldown,
                          settings.no_return, settings.ping_pong_periods))
        # diagnose_overload's --arrival-periods; [drs] relief_check_delay
        # (600 s) in periods.
        self.assertEqual((60, 10), (settings.arrival_periods,
                                    settings.relief_check_periods))
        # Trends kept three half-lives unmeasured, as the live service.
        self.assertIsNone(settings.trend_max_age)
        inputs = engine.SnapshotInputs(cluster.Cluster(
            cluster.ClusterSpec(hosts=1), []))
        view = types.SimpleNamespace(
            now=0.0, cluster=types.SimpleNamespace(residents={}),
            sampled=True)
        inputs._update_trends(view, set(), CONFIG)
        self.assertEqual(3 * CONFIG.load_halflife, inputs.trends.max_age)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                          settings, 'interval', 1)


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
