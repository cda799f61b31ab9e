"""The simulation loop with hosts in maintenance: what the planner is
shown, how drains are counted, and moves Nova's scheduler places."""

import dataclasses
import functools

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import maintenance
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces
from tests import scripted

CONFIG = model.PlannerConfig()
FLAVOR = cluster.Flavor('f', 1, 1024)


def _settings(**kwargs):
    windows = functools.partial(
        metrics.MetricsWindows, 1, CONFIG.stabilization, 60,
        CONFIG.cpu_threshold, CONFIG.ram_threshold)
    return engine.Settings(CONFIG, windows, **kwargs)


class MaintenanceLoopTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # Six VMs at 40 % of one vCPU: two per host, 20 % of a host's 4.
        self.trace = traces.Trace(tuple(f'vm{i}' for i in range(6)),
                                  ((40.0,) * 6,) * 12, 60)
        self.vms = cluster.assign_flavors(self.trace.names, (FLAVOR,), 0)
        # 1 GiB copies in 1 s.
        self.spec = cluster.ClusterSpec(
            hosts=3, host_vcpus=4, host_memory_mb=8192,
            bandwidth_mbps=8 * 1024 * 1.048576,
            dirty_mib_per_core=0.0)

    def _run(self, strategy, schedule, **settings):
        return engine.run(self.trace, self.vms, self.spec, strategy,
                          _settings(**settings), schedule)

    def test_no_schedule_no_drains(self):
        result = self._run(scripted.Looking(), None)
        self.assertEqual([], result.drains)

    def test_snapshot_and_candidates_leave_the_host_out(self):
        def look(view):
            snapshot = view.snapshot(CONFIG)
            host = snapshot.hosts['host-1']
            found = view.candidates()(snapshot.instances[0], snapshot)
            return (host.draining, host.schedulable,
                    snapshot.hosts['host-0'].draining, found.allowed,
                    [(r.subject, r.rule) for r in found.rejected])

        strategy = scripted.Looking(look)
        self._run(strategy, maintenance.drain('host-1', 60.0))
        # vm0 is on host-0.
        self.assertEqual((False, True, False, ('host-1', 'host-2'), []),
                         strategy.seen[0])
        self.assertEqual((True, False, False, ('host-2',),
                          [('host-1', 'ComputeFilter')]), strategy.seen[1])

    def test_the_hosts_still_to_drain_are_queued_in_the_snapshot(self):
        def look(view):
            hosts = view.snapshot(CONFIG).hosts
            return sorted(name for name in hosts if hosts[name].queued)

        strategy = scripted.Looking(look)
        self._run(strategy, maintenance.Schedule(
            ('host-1', 'host-0'), 60.0, work_time=60.0))
        self.assertEqual([['host-0', 'host-1'], ['host-0']],
                         strategy.seen[:2])

    def test_planner_drains_the_host_and_it_comes_back_empty(self):
        strategy = strategies.PlannerStrategy(CONFIG, 'balanced')
        result = self._run(strategy, maintenance.Schedule(
            ('host-0',), 60.0, work_time=120.0))
        drain, = result.drains
        # Two 1 GiB instances, one after the other (Nova's one migration
        # at once off a host): vm0 planned at 60 s copies in 1 s over the
        # 1 GiB/s link; its end asks the planner again, and vm3 leaves at
        # 61 s, empty at 62 s.  The work starts at the next period.
        self.assertEqual((60.0, 62.0, 2.0, 120.0, 240.0, 2, 2048, 0),
                         (drain.entered, drain.emptied, drain.drain_seconds,
                          drain.work_started, drain.returned,
                          drain.migrations, drain.moved_mb,
                          drain.left_behind))
        self.assertEqual(2, result.card.migrations)
        self.assertEqual(0, sum(result.card.failed.values()))

    def test_drain_accounting_of_a_scripted_drain(self):
        # One instance a period, the second starting at 120 s.
        strategy = scripted.Looking(moves={1: [('vm0', 'host-1')],
                                  2: [('vm3', 'host-2')]})
        result = self._run(strategy, maintenance.drain('host-0', 60.0))
        drain, = result.drains
        self.assertEqual((121.0, 61.0, 180.0, 2),
                         (drain.emptied, drain.drain_seconds,
                          drain.work_started, drain.migrations))

    def test_moves_to_a_host_in_maintenance_are_refused(self):
        strategy = scripted.Looking(moves={1: [('vm0', 'host-1')]})
        result = self._run(strategy, maintenance.drain('host-1', 60.0))
        self.assertEqual({'ComputeFilter': 1}, dict(result.card.failed))
        self.assertEqual(0, result.card.migrations)

    def test_instances_on_a_draining_host_wait_only_for_a_move_in_flight(self):
        def look(view):
            return {i.uuid: (i.blocked is not None, i.transient)
                    for i in view.snapshot(CONFIG).instances
                    if i.uuid in ('vm1', 'vm3')}

        # 90 s copies: vm1 moves to host-0 from 0 s to 90 s; host-0 enters
        # maintenance at 120 s; vm3 leaves it from 120 s to 210 s.
        self.spec = cluster.ClusterSpec(
            hosts=3, host_vcpus=4, host_memory_mb=8192,
            bandwidth_mbps=1024 * 8 * 1.048576 / 90,
            dirty_mib_per_core=0.0)
        strategy = scripted.Looking(look, moves={0: [('vm1', 'host-0')],
                                        2: [('vm3', 'host-2')]})
        self._run(strategy, maintenance.drain('host-0', 120.0))
        seen = strategy.seen
        # In flight off a host in service: blocked, nothing transient.
        self.assertEqual((True, False), seen[1]['vm1'])
        # In cooldown on a draining host: no bar.
        self.assertEqual((False, False), seen[2]['vm1'])
        # In flight off a draining host: waits.
        self.assertEqual((True, True), seen[3]['vm3'])
        # In cooldown on a host in service: blocked.
        self.assertEqual((True, False), seen[4]['vm3'])

    def test_no_destination_is_nova_schedulers_choice(self):
        # Two VMs a host; vm5 leaves host-2 for host-1 at 0 s, so host-2
        # has the most room when vm0 leaves host-0 with no destination.
        strategy = scripted.Looking(lambda view: view.cluster.location['vm0'],
                           moves={0: [('vm5', 'host-1')],
                                  1: [('vm0', None)]})
        self._run(strategy, None)
        self.assertEqual('host-2', strategy.seen[2])
        # With host-2 in maintenance, the only other host.
        strategy = scripted.Looking(lambda view: view.cluster.location['vm0'],
                           moves={1: [('vm0', None)]})
        self._run(strategy, maintenance.drain('host-2', 60.0))
        self.assertEqual('host-1', strategy.seen[2])

    def test_no_valid_host_is_a_refusal(self):
        self.spec = cluster.ClusterSpec(hosts=2, host_vcpus=4,
                                        host_memory_mb=8192)
        strategy = scripted.Looking(moves={1: [('vm0', None)]})
        result = self._run(strategy, maintenance.drain('host-1', 60.0))
        self.assertEqual({'no valid host': 1}, dict(result.card.failed))

    def test_drains_flow_between_periods(self):
        strategy = Logged(CONFIG)
        self._run(strategy, maintenance.drain('host-0', 60.0))
        # The period at 60 s starts vm0's drain; its end (61 s) is a
        # moment between periods, with no new sample, where the planner
        # plans the drains alone and vm3 leaves at once; at 62 s the
        # host is empty.
        self.assertEqual(
            [(0.0, True, []), (60.0, True, [('vm0', model.DRAIN)]),
             (61.0, False, [('vm3', model.DRAIN)]), (62.0, False, []),
             (120.0, True, [])], strategy.log[:5])

    def test_a_strategy_woken_between_periods_starts_moves(self):
        started = []

        class Waking(scripted.Looking):
            def react(self, view):
                # Woken at 90 s; then handed the end of its move (91 s).
                if not started:
                    started.append(view.start('vm0', 'host-1'))
                    started.append(view.start('vm0', 'host-2'))
                return [], 0.0, 0.0

        def look(view):
            if view.period == 1:
                view.wake(view.now + 30.0)

        result = self._run(Waking(look), None)
        first, refused = started
        self.assertEqual((90.0, 90.0, 91.0, 'host-1'),
                         (first.start, first.copying, first.end,
                          first.destination))
        self.assertIsNone(refused)
        self.assertEqual({'already migrating': 1}, dict(result.card.failed))
        self.assertEqual(1, result.card.migrations)


    def test_instances_kept_between_periods_read_as_if_built_anew(self):
        # 90 s copies under a 120 s cooldown: moves in flight off a
        # draining host, instances cooling, two hosts in turn in
        # maintenance and back; each period and each moment between
        # periods, the kept instances equal a fresh build.
        self.spec = cluster.ClusterSpec(
            hosts=3, host_vcpus=4, host_memory_mb=8192,
            bandwidth_mbps=1024 * 8 * 1.048576 / 90,
            dirty_mib_per_core=0.0)
        planner = strategies.PlannerStrategy(CONFIG, 'balanced')
        checked, seen = [], set()

        def check(view):
            snapshot = view.snapshot(CONFIG)
            fresh = engine.SnapshotInputs(view.cluster)
            fresh.trends = view.inputs.trends
            checked.append(list(snapshot.instances) == fresh.build(
                view, view.measured(snapshot.hosts, CONFIG), CONFIG))
            seen.update((i.uuid, i.transient, i.cooling,
                         i.blocked is None) for i in snapshot.instances)

        class Checking:
            name = 'checking'

            def plan(self, view):
                check(view)
                return planner.plan(view)

            def react(self, view):
                check(view)
                return planner.react(view)

        result = self._run(Checking(), maintenance.Schedule(
            ('host-0', 'host-1'), 60.0, work_time=120.0), cooldown=120)
        self.assertEqual(2, len(result.drains))
        self.assertGreater(len(checked), 12)
        self.assertNotIn(False, checked)
        # The run went through every state the cache must follow.
        self.assertTrue(any(transient for _, transient, _, _ in seen))
        self.assertTrue(any(cooling for _, _, cooling, _ in seen))
        # 300 s copies, the work started at the 60 s deadline and over 60 s
        # later: host-0 is back in service while its instance is still in
        # flight, which stops being transient with nothing else changed.
        self.spec = dataclasses.replace(
            self.spec, bandwidth_mbps=1024 * 8 * 1.048576 / 300)
        del checked[:]
        planner = strategies.PlannerStrategy(CONFIG, 'balanced')
        flights = []
        check_one = check

        def check(view):
            check_one(view)
            flights.append({i.uuid: i.transient
                            for i in view.snapshot(CONFIG).instances
                            if (i.blocked or '').startswith('migrating')})

        result = self._run(Checking(), maintenance.Schedule(
            ('host-0',), 60.0, work_time=60.0, deadline=60.0))
        self.assertNotIn(False, checked)
        # vm0 leaves host-0 from 60 s (planned after that period's look)
        # to 360 s: in flight off the host in maintenance at 120 s, off the
        # host back in service at 180 s.
        self.assertEqual([{}, {}, {'vm0': True}, {'vm0': False}],
                         flights[:4])
        # vm0 leaves host-0 from 0 s; host-0 enters maintenance at 120 s,
        # with vm0 in flight: transient from then on, nothing else changed.
        del checked[:], flights[:]
        self._run(scripted.Looking(check, moves={0: [('vm0', 'host-1')]}),
                  maintenance.drain('host-0', 120.0))
        self.assertNotIn(False, checked)
        self.assertEqual([{}, {'vm0': False}, {'vm0': True}], flights[:3])

    def test_each_wake_is_a_moment_of_its_own_in_time_order(self):
        log = []

        class Waking(scripted.Looking):
            def react(self, view):
                log.append(('react', view.now))
                return [], 0.0, 0.0

        def look(view):
            log.append(('plan', view.now))
            if view.period == 1:
                # Out of order, one at the next period's very start.
                for after in (30.0, 60.0, 10.0):
                    view.wake(view.now + after)

        self._run(Waking(look), None)
        self.assertEqual([('plan', 0.0), ('plan', 60.0), ('react', 70.0),
                          ('react', 90.0), ('react', 120.0),
                          ('plan', 120.0), ('plan', 180.0)], log[:7])

    def test_a_wake_at_a_moves_end_is_one_moment(self):
        reacted = []

        class Waking(scripted.Looking):
            def react(self, view):
                reacted.append(view.now)
                return [], 0.0, 0.0

        def look(view):
            if view.period == 1:
                view.wake(150.0)

        # A 90 s copy from 60 s ends at 150 s, when the strategy asked to
        # be woken: one moment.
        self.spec = cluster.ClusterSpec(
            hosts=3, host_vcpus=4, host_memory_mb=8192,
            bandwidth_mbps=1024 * 8 * 1.048576 / 90, dirty_mib_per_core=0.0)
        self._run(Waking(look, moves={1: [('vm0', 'host-1')]}), None)
        self.assertEqual([150.0], reacted)

class Logged(strategies.PlannerStrategy):
    """``balanced``, logging each plan: (when, sampled, moves)."""

    def __init__(self, config):
        super().__init__(config, 'balanced')
        self.log = []

    def _logged(self, view, answer):
        moves = answer[0]
        self.log.append((view.now, view.sampled,
                         [(m.instance, m.goal) for m in moves]))
        return answer

    def plan(self, view):
        return self._logged(view, super().plan(view))

    def react(self, view):
        return self._logged(view, super().react(view))
