"""The simulator's power model: host power states, the energy they draw,
the run's accounting, and the loop with power managed (no Watcher
needed)."""

import functools

import fixtures
import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import power as power_plan
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import power
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces
from tests import scripted

CONFIG = model.PlannerConfig()
FLAVOR = cluster.Flavor('f', 1, 1024)
IDLE = (0.0,) * 6


def _cluster(vms=3, hosts=3):
    spec = cluster.ClusterSpec(hosts=hosts, host_vcpus=4,
                               host_memory_mb=8192,
                               bandwidth_mbps=8 * 1024 * 1.048576,
                               dirty_mib_per_core=0.0)
    # vm0 on host-0, vm1 on host-1, vm2 on host-2, then around again.
    return cluster.Cluster(spec, [cluster.VM(f'vm{i}', i, FLAVOR)
                                  for i in range(vms)])


class _Drained(scripted.Looking):
    """Scripted actions, then the balanced planner, which drains the hosts
    entering standby."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.planner = strategies.PlannerStrategy(CONFIG, 'balanced')

    def plan(self, view):
        moves, _, _ = super().plan(view)
        return (moves + self.planner.plan(view)[0]), 0.0, 0.0

    def react(self, view):
        return self.planner.react(view)


class PowerModelTest(testtools.TestCase):

    def test_linear_between_idle_and_peak(self):
        watts = power.PowerModel(100.0, 300.0, 10.0).watts
        self.assertEqual((100.0, 150.0, 250.0, 300.0),
                         (watts(model.ON, 0.0), watts(model.ON, 25.0),
                          watts(model.ENTERING, 75.0),
                          watts(model.ON, 100.0)))

    def test_demand_over_capacity_draws_the_peak_only(self):
        watts = power.PowerModel(100.0, 300.0, 10.0).watts
        self.assertEqual(300.0, watts(model.ON, 140.0))

    def test_standby_and_booting(self):
        watts = power.PowerModel(100.0, 300.0, 10.0).watts
        self.assertEqual((10.0, 100.0), (watts(model.STANDBY, 0.0),
                                         watts(model.WAKING, 0.0)))

    def test_defaults_are_a_two_socket_server(self):
        self.assertEqual((100.0, 350.0, 10.0, 600.0), (
            power.PowerModel().idle_watts, power.PowerModel().peak_watts,
            power.PowerModel().standby_watts,
            power.PowerModel().boot_seconds))

    def test_bad_models_are_refused(self):
        for args in ((100.0, 50.0, 10.0), (100.0, 300.0, 200.0),
                     (100.0, 300.0, -1.0), (100.0, 300.0, 10.0, -1.0)):
            self.assertRaises(ValueError, power.PowerModel, *args)


class HostsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.placed = _cluster()
        self.hosts = power.Hosts(power.PowerModel(100.0, 300.0, 10.0, 120.0),
                                 self.placed, 80.0)

    def test_standby_disables_and_powers_off_once_empty(self):
        self.assertTrue(self.hosts.standby('host-1', 60.0))
        self.assertEqual((model.ENTERING, {'host-1': 60.0}, {'host-1'}),
                         (self.hosts.state['host-1'], self.hosts.entering,
                          self.placed.disabled))
        self.hosts.advance(120.0, [])
        # vm1 is still on it.
        self.assertEqual(model.ENTERING, self.hosts.state['host-1'])
        self.hosts.migrated(
            self.placed.start_migration('vm1', 'host-2', 120.0, IDLE))
        self.hosts.advance(180.0, self.placed.finish_migrations(180.0, IDLE))
        self.assertEqual((model.STANDBY, {}, frozenset({'host-1'})),
                         (self.hosts.state['host-1'], self.hosts.entering,
                          self.hosts.off()))
        self.assertEqual({'host-1'}, self.placed.disabled)
        # Decided at 60 s, empty when vm1's 1 s copy ended at 121 s.
        drain, = self.hosts.drains
        self.assertEqual((61.0, 1, 1024), (drain.drain_seconds,
                                           drain.migrations, drain.moved_mb))
        self.assertEqual([61.0],
                         self.hosts.summary()['standby_drain_seconds'])

    def test_a_move_on_its_way_keeps_the_host_on(self):
        self.placed.start_migration('vm0', 'host-1', 0.0, IDLE)
        self.placed.start_migration('vm1', 'host-2', 0.0, IDLE)
        self.hosts.standby('host-1', 0.5)
        self.placed.finish_migrations(0.9, IDLE)
        self.hosts.advance(0.9, [])
        self.assertEqual(model.ENTERING, self.hosts.state['host-1'])

    def test_wake_serves_after_the_boot(self):
        self.hosts.state['host-2'] = model.STANDBY
        self.placed.disabled.add('host-2')
        self.assertTrue(self.hosts.wake('host-2', 600.0))
        self.assertFalse(self.hosts.wake('host-1', 610.0))
        self.assertEqual({'host-2': 600.0}, self.hosts.woken_at)
        self.hosts.advance(660.0, [])
        self.assertEqual((model.WAKING, {'host-2'}),
                         (self.hosts.state['host-2'], self.placed.disabled))
        self.hosts.advance(720.0, [])
        self.assertEqual((model.ON, set(), {}),
                         (self.hosts.state['host-2'], self.placed.disabled,
                          self.hosts.ready_at))

    def test_cancel_gives_an_entering_host_back(self):
        self.hosts.standby('host-0', 0.0)
        self.assertTrue(self.hosts.cancel('host-0', 60.0))
        self.assertEqual((model.ON, {}, set()),
                         (self.hosts.state['host-0'], self.hosts.entering,
                          self.placed.disabled))
        self.assertEqual(
            {'standbys': 1, 'wakes': 0, 'cancels': 1},
            {k: v for k, v in self.hosts.summary().items()
             if k in ('standbys', 'wakes', 'cancels')})

    def test_transitions_from_the_wrong_state_do_nothing(self):
        self.assertFalse(self.hosts.wake('host-0', 0.0))
        self.assertFalse(self.hosts.cancel('host-0', 0.0))
        self.hosts.standby('host-0', 0.0)
        self.assertFalse(self.hosts.standby('host-0', 60.0))
        self.assertEqual([('standby', 'host-0', 0.0)], self.hosts.events)

    def test_energy_and_hours_of_a_period(self):
        self.hosts.state.update({'host-1': model.STANDBY,
                                 'host-2': model.WAKING})
        self.hosts.account({'host-0': 50.0, 'host-1': 0.0,
                            'host-2': 0.0}, 3600.0)
        # 200 W + 10 W + 100 W for an hour; the standby host is not on.
        self.assertEqual((0.31, 2.0),
                         (self.hosts.summary()['energy_kwh'],
                          self.hosts.summary()['host_hours_on']))

    def test_short_periods_need_a_host_off_and_the_pool_over(self):
        load = {'host-0': 90.0, 'host-1': 75.0, 'host-2': 0.0}
        # Every host on: the pool at 55 % is not short.
        self.hosts.account(load, 60.0)
        self.hosts.state['host-2'] = model.STANDBY
        # Host-2 off: the two serving hosts average 82.5 % > 80 %.
        self.hosts.account(load, 60.0)
        self.hosts.account(dict(load, **{'host-1': 69.0}), 60.0)
        self.assertEqual(1, self.hosts.summary()['short_periods'])

    def test_hosts_for_peak(self):
        trace = traces.Trace(('a', 'b'), ((50.0, 50.0), (100.0, 60.0)), 300)
        vms = cluster.assign_flavors(trace.names, (
            cluster.Flavor('f', 8, 1024),), 0)
        # Busiest step: 8 + 4.8 = 12.8 cores; 4-CPU hosts at 50 %: 6.4.
        self.assertEqual(7, cluster.hosts_for_peak(vms, trace, 50.0, 4))
        self.assertEqual(4, cluster.hosts_for_peak(vms, trace, 100.0, 4))


class DayNightTest(testtools.TestCase):

    def test_lowest_at_three_highest_at_fifteen(self):
        flat = traces.synthetic(5, 288, 3, 300, 'planetlab')
        bent = traces.synthetic(5, 288, 3, 300, 'day-night')
        night, day = 3 * 12, 15 * 12
        for vm in range(5):
            for step, factor in ((night, 0.3), (day, 1.5), (9 * 12, 0.9)):
                self.assertAlmostEqual(
                    min(flat.steps[step][vm] * factor, 100.0),
                    bent.steps[step][vm], delta=0.051)


def _settings():
    windows = functools.partial(
        metrics.MetricsWindows, 1, CONFIG.stabilization, 60,
        CONFIG.cpu_threshold, CONFIG.ram_threshold)
    return engine.Settings(CONFIG, windows)


class PowerLoopTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # Six VMs at 40 % of one vCPU: two per host, 20 % of a host's 4.
        self.trace = traces.Trace(tuple(f'vm{i}' for i in range(6)),
                                  ((40.0,) * 6,) * 30, 60)
        self.vms = cluster.assign_flavors(self.trace.names, (FLAVOR,), 0)
        self.spec = cluster.ClusterSpec(
            hosts=3, host_vcpus=4, host_memory_mb=8192,
            bandwidth_mbps=8 * 1024 * 1.048576, dirty_mib_per_core=0.0)
        self.model = power.PowerModel(100.0, 300.0, 10.0, 120.0)

    def _run(self, strategy, modelled=True):
        return engine.run(self.trace, self.vms, self.spec, strategy,
                          _settings(), power=self.model if modelled else None)

    def test_without_a_power_model_no_figures(self):
        self.assertIsNone(self._run(scripted.Looking(), modelled=False).power)

    def test_all_on_energy(self):
        result = self._run(scripted.Looking())
        # 3 hosts at 20 %: 140 W each, 30 minutes.
        self.assertEqual((0.21, 1.5, 0), (
            result.power['energy_kwh'], result.power['host_hours_on'],
            result.power['short_periods']))

    def test_a_scripted_standby_is_drained_by_the_planner(self):
        def look(view):
            snapshot = view.snapshot(CONFIG, 'automatic')
            host = snapshot.hosts['host-2']
            return (host.power, host.power_level, host.draining,
                    host.schedulable, host.cpu_percent)

        standby = power_plan.PowerAction(power_plan.STANDBY, 'host-2', None,
                                         'test')
        strategy = _Drained(look, {1: [standby]})
        result = self._run(strategy)
        # Period 1 plans the standby after its moves, and the drain starts
        # then: vm2 (1 GiB over 1 GiB/s) from 60 s to 61 s, then vm5 from
        # 61 s to 62 s.  Period 2 finds the host empty and powers it off;
        # its last sample (period 1) goes stale after the window's 60 s.
        self.assertEqual((model.ON, 'automatic', False, True, 20.0),
                         strategy.seen[1])
        self.assertEqual((model.STANDBY, 'automatic', False, False, 20.0),
                         strategy.seen[2])
        self.assertEqual((model.STANDBY, 'automatic', False, False, None),
                         strategy.seen[3])
        self.assertEqual(2, result.card.migrations)
        self.assertEqual((1, [2.0]), (result.power['standbys'],
                                      result.power['standby_drain_seconds']))
        # Two hosts at 30 % and one in standby from 2 minutes on.
        self.assertLess(result.power['energy_kwh'], 0.21)
        # The host off serves nothing: the spread and the mean load are
        # the two hosts on's (its instances went to one of them: 40 % and
        # 20 %), the mean 20 % in periods 0 and 1, 30 % once it is off.
        self.assertEqual(10.0, result.card.stddev_series[-1])
        self.assertEqual((20.0 * 2 + 30.0 * 28) / 30, result.mean_load)

    def test_a_woken_host_carries_the_seconds_since_its_wake(self):
        def look(view):
            host = view.snapshot(CONFIG, 'automatic').hosts['host-2']
            return host.power, host.woken_ago

        actions = {1: [power_plan.PowerAction(power_plan.STANDBY, 'host-2',
                                              None, 'test')],
                   4: [power_plan.PowerAction(power_plan.WAKE, 'host-2',
                                              None, 'test')]}
        strategy = _Drained(look, actions)
        self._run(strategy)
        # Powered on at 240 s, up after its 120 s boot; never woken before.
        self.assertEqual(
            [(model.ON, None), (model.ON, None), (model.STANDBY, None),
             (model.STANDBY, None), (model.STANDBY, None),
             (model.WAKING, 60.0), (model.ON, 120.0), (model.ON, 180.0),
             (model.ON, 240.0)],
            strategy.seen[:9])

    def test_only_a_standby_wakes_the_strategy_between_periods(self):
        reacted = []

        class Reacting(_Drained):
            def react(self, view):
                reacted.append(view.now)
                return super().react(view)

        actions = {1: [power_plan.PowerAction(power_plan.STANDBY, 'host-2',
                                              None, 'test')],
                   4: [power_plan.PowerAction(power_plan.WAKE, 'host-2',
                                              None, 'test')]}
        self._run(Reacting(lambda view: None, actions))
        # The standby at 60 s starts a drain (moves end at 61 s and 62 s);
        # the wake at 240 s has nothing to drain.
        self.assertEqual([60.0, 61.0, 62.0], reacted)
        # 90 s copies: host-2 is still entering standby at 120 s, when it
        # is given back; the move in flight ends at 150 s.
        self.spec = cluster.ClusterSpec(
            hosts=3, host_vcpus=4, host_memory_mb=8192,
            bandwidth_mbps=1024 * 8 * 1.048576 / 90, dirty_mib_per_core=0.0)
        del reacted[:]
        actions = {1: actions[1],
                   2: [power_plan.PowerAction(power_plan.CANCEL, 'host-2',
                                              None, 'test')]}
        result = self._run(Reacting(lambda view: None, actions))
        self.assertEqual(1, result.power['cancels'])
        self.assertEqual([60.0, 150.0], reacted)

    def test_several_standbys_of_one_period_drain_together(self):
        standbys = [power_plan.PowerAction(power_plan.STANDBY, host, None,
                                           'test')
                    for host in ('host-1', 'host-2')]
        strategy = _Drained(lambda view: None, {1: standbys})
        result = self._run(strategy)
        # Both drained from period 1 on, their instances on host-0.
        self.assertEqual(4, result.card.migrations)
        self.assertEqual(2, result.power['standbys'])
        self.assertEqual(2, len(result.power['standby_drain_seconds']))
        self.assertEqual(0, result.power['cancels'])

    def test_moves_to_a_host_off_are_refused(self):
        standby = power_plan.PowerAction(power_plan.STANDBY, 'host-2', None,
                                         'test')
        strategy = scripted.Looking(
            moves={0: [standby], 2: [('vm0', 'host-2')]})
        result = self._run(strategy)
        self.assertEqual({'ComputeFilter': 1}, dict(result.card.failed))

    def test_a_power_action_needs_a_power_model(self):
        standby = power_plan.PowerAction(power_plan.STANDBY, 'host-2', None,
                                         'test')
        self.assertRaises(ValueError, self._run,
                          scripted.Looking(moves={0: [standby]}), False)

    def test_power_management_saves_energy_on_a_quiet_pool(self):
        config = power_plan.PowerConfig(min_hosts=1, reserve_hosts=0,
                                        low_periods=2, boot_seconds=120.0)
        managed = self._run(strategies.PowerManaged(CONFIG, config))
        balanced = self._run(strategies.PlannerStrategy(CONFIG, 'balanced'))
        self.assertGreater(managed.power['standbys'], 0)
        self.assertLess(managed.power['energy_kwh'],
                        balanced.power['energy_kwh'])
        self.assertEqual(0, managed.card.summary()['overloaded_host_periods'])

    def test_maintenance_and_power_are_not_combined(self):
        from nova_drs_scheduler.simulate import maintenance
        self.assertRaises(ValueError, engine.run, self.trace, self.vms,
                          self.spec, scripted.Looking(), _settings(),
                          maintenance.drain('host-0', 0.0), self.model)


class CliTest(testtools.TestCase):
    """``nova-drs simulate``'s power options."""

    def _setup(self, *argv):
        from nova_drs_scheduler.simulate import cli
        return cli.prepare(cli.parser().parse_args(
            ['--vms', '20', '--steps', '3'] + list(argv)))

    def test_power_model_and_peak_sizing(self):
        setup = self._setup('--power', '--peak-load', '50',
                            '--idle-watts', '80', '--boot-seconds', '300')
        self.assertEqual(power.PowerModel(80.0, 350.0, 10.0, 300.0),
                         setup.power)
        self.assertEqual((300.0, 60.0), (setup.power_config.boot_seconds,
                                         setup.power_config.period_seconds))
        self.assertEqual(cluster.hosts_for_peak(setup.vms, setup.trace,
                                                50.0, 32), setup.hosts)

    def test_power_management_options_come_from_drs(self):
        path = self.useFixture(fixtures.TempDir()).join('nova.conf')
        with open(path, 'w') as stream:
            stream.write('[drs]\npower_band_high = 70\n'
                         'power_boot_seconds = 420\n')
        setup = self._setup('--power', '--config-file', path)
        self.assertEqual((70.0, 420.0, 420.0), (
            setup.power_config.band_high, setup.power_config.boot_seconds,
            setup.power.boot_seconds))

    def test_no_power_by_default(self):
        setup = self._setup()
        self.assertEqual((None, None), (setup.power, setup.power_config))

    def test_a_bad_model_is_refused(self):
        self.assertRaises(ValueError, self._setup, '--power',
                          '--standby-watts', '500')
