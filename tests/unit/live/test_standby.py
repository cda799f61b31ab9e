"""The leader's side of power management (``standby``): each step of a
host on its way to standby and back, on a real SQLite DRS database, with
Nova's service update and the power driver faked at their boundary."""

import dataclasses
import datetime
import types
from unittest import mock

import testtools
from oslo_config import fixture as config_fixture
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import daily_shape
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import power
from nova_drs_scheduler.power import base as power_base
from nova_drs_scheduler.rebalance import daily_shapes
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import period_plan
from nova_drs_scheduler.rebalance import standby
from nova_drs_scheduler.rebalance import telemetry
from tests import snapshots as h
from tests.unit.db import test_store

NOW = datetime.datetime(2026, 11, 27, 12, 0, 0)


class FakeDriver(power_base.PowerDriver):
    """Records the calls; fails the hosts it is told to."""

    def __init__(self, failing=(), measured=None):
        self.calls = []
        self.failing = set(failing)
        self.measured = measured

    def _call(self, what, host):
        self.calls.append((what, host))
        if host in self.failing:
            raise power_base.PowerError(host, f'{what} refused by the BMC')

    def power_on(self, host):
        self._call('on', host)

    def power_off(self, host):
        self._call('off', host)

    def state(self, host):
        return 'unknown'

    def boot_seconds(self, host):
        return self.measured


class Service:
    def __init__(self, disabled=False, reason=None):
        self.disabled, self.disabled_reason = disabled, reason


def drain(host, instances=0, blockers=()):
    return model.Drain(host, instances, (), (), tuple(
        model.Rejection(uuid, 'blocked', 'opted out') for uuid in blockers))


class HostPowerTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(NOW))
        self.store = test_store.sqlite_store(self)
        migration.sync(self.store.engine)
        self.driver = FakeDriver()
        self.telemetry = telemetry.Telemetry()
        self.power = standby.HostPower(self.store, self.driver,
                                       self.telemetry)
        self.disable = self.useFixture(mock.patch.object(
            standby.compute_service, 'disable',
            return_value=(Service(True, 'nova-drs: standby'), True)))
        self.enable = self.useFixture(mock.patch.object(
            standby.compute_service, 'enable',
            return_value=(Service(), True)))

    def useFixture(self, patcher):
        if hasattr(patcher, 'start'):
            found = patcher.start()
            self.addCleanup(patcher.stop)
            return found
        return super().useFixture(patcher)

    def row(self, host='h1'):
        return self.store.power_hosts().get(host)

    def act(self, kind, host='h1'):
        return self.power.act(power.PowerAction(kind, host, 'p', 'quiet'),
                              self.row(host))

    def test_standby_disables_the_service_and_starts_the_drain(self):
        self.assertEqual('done', self.act(power.STANDBY))
        self.disable.assert_called_once_with('h1', 'standby', 'quiet')
        row = self.row()
        self.assertEqual(('entering', 'p', 'quiet', True), (
            row['state'], row['pool'], row['reason'],
            row['disabled_by_drs']))
        self.assertEqual([], self.driver.calls)

    def test_a_service_someone_else_disabled_is_left_alone(self):
        self.disable.return_value = (Service(True, 'broken disk'), False)
        self.assertEqual('failed', self.act(power.STANDBY))
        self.assertIsNone(self.row())

    def test_an_unknown_host_is_not_put_in_standby(self):
        self.disable.side_effect = standby.compute_service.UnknownHostError(
            'no nova-compute service on host h1')
        self.assertEqual('failed', self.act(power.STANDBY))
        self.assertIsNone(self.row())

    def test_an_empty_host_is_powered_off(self):
        self.act(power.STANDBY)
        self.power.follow(self.store.power_hosts(), {'h1': drain('h1')}, {})
        self.assertEqual([('off', 'h1')], self.driver.calls)
        self.assertEqual('standby', self.row()['state'])
        self.enable.assert_not_called()

    def test_a_host_still_draining_is_left_on(self):
        self.act(power.STANDBY)
        self.power.follow(self.store.power_hosts(), {'h1': model.Drain(
            'h1', 2, ('i1',))}, {})
        self.power.follow(self.store.power_hosts(), {}, {})
        self.assertEqual([], self.driver.calls)
        self.assertEqual('entering', self.row()['state'])

    def test_a_refused_power_off_gives_the_host_back(self):
        self.driver.failing.add('h1')
        self.act(power.STANDBY)
        self.power.follow(self.store.power_hosts(), {'h1': drain('h1')}, {})
        self.assertEqual([('off', 'h1')], self.driver.calls)
        self.enable.assert_called_once_with('h1', 'standby', True)
        self.assertIsNone(self.row())
        self.assertEqual({'h1': NOW}, self.power.refused)

    def test_a_refused_host_is_left_out_for_the_quarantine_time(self):
        period = standby.PowerPeriod(self.store, self.telemetry)
        period.refused.update(h1=NOW, h2=NOW - datetime.timedelta(
            seconds=3600))
        self.useFixture(mock.patch.object(standby.CONF.drs,
                                          'quarantine_time', 1800))
        self.assertEqual({'h1'}, period._refused())
        self.assertEqual(['h1'], list(period.refused))

    def test_a_blocked_drain_gives_the_host_back(self):
        self.act(power.STANDBY)
        self.power.follow(self.store.power_hosts(), {'h1': drain(
            'h1', 1, ['i1'])}, {})
        self.assertEqual([], self.driver.calls)
        self.enable.assert_called_once_with('h1', 'standby', True)
        self.assertIsNone(self.row())

    def test_cancel_gives_the_host_back(self):
        self.act(power.STANDBY)
        self.assertEqual('done', self.act(power.CANCEL))
        self.enable.assert_called_once_with('h1', 'standby', True)
        self.assertIsNone(self.row())

    def test_wake_then_up_enables_the_service_and_measures_the_boot(self):
        self.store.set_power('h1', model.STANDBY, disabled_by_drs=True)
        self.assertEqual('done', self.act(power.WAKE))
        self.assertEqual([('on', 'h1')], self.driver.calls)
        self.assertEqual('waking', self.row()['state'])
        self.clock.advance_time_seconds(30)
        self.assertEqual({}, self.power.follow(self.store.power_hosts(), {},
                                               {'h1': False}))
        self.assertEqual('waking', self.row()['state'])
        self.clock.advance_time_seconds(90)
        self.assertEqual({'h1': 120.0}, self.power.follow(
            self.store.power_hosts(), {}, {'h1': True}))
        self.enable.assert_called_once_with('h1', 'standby', True)
        self.assertIsNone(self.row())

    def test_a_standby_host_whose_service_is_up_stays_in_standby(self):
        self.store.set_power('h1', model.STANDBY, disabled_by_drs=True)
        self.assertEqual({}, self.power.follow(self.store.power_hosts(), {},
                                               {'h1': True}))
        self.enable.assert_not_called()
        self.assertEqual('standby', self.row()['state'])

    def test_a_blocked_drain_says_what_blocks_it(self):
        self.act(power.STANDBY)
        found = model.Drain('h1', 2, (), (), (
            model.Rejection('i1', 'pinned', ''),
            model.Rejection('i2', 'blocked', 'opted out')))
        with mock.patch.object(self.power, 'give_back') as give_back:
            self.power.follow(self.store.power_hosts(), {'h1': found}, {})
        self.assertEqual('standby given up, the host cannot be emptied: '
                         'i1: pinned; i2: opted out',
                         give_back.call_args[0][2])
        self.assertEqual(1.0, self.telemetry.registry.get_sample_value(
            'nova_drs_power_actions_total',
            {'action': 'standby', 'result': 'failed'}))

    def test_give_back_enables_only_what_nova_drs_disabled(self):
        self.power.give_back('h1', None, 'gone')
        self.power.give_back('h2', {'disabled_by_drs': False}, 'theirs')
        self.assertEqual([mock.call('h1', 'standby', False),
                          mock.call('h2', 'standby', False)],
                         self.enable.call_args_list)

    def test_a_refused_wake_stays_in_standby_with_the_error(self):
        self.driver.failing.add('h1')
        self.store.set_power('h1', model.STANDBY, disabled_by_drs=True)
        self.assertEqual('failed', self.act(power.WAKE))
        row = self.row()
        self.assertEqual('standby', row['state'])
        self.assertIn('refused by the BMC', row['detail']['error'])


class PrepareTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.config = self.useFixture(
            config_fixture.Config(standby.CONF)).config
        self.period = standby.PowerPeriod(mock.sentinel.store,
                                          mock.sentinel.telemetry)

    def test_a_driver_that_cannot_start_stops_the_service(self):
        self.config(power_driver='ipmi', group='drs')
        error = self.assertRaises(standby.conf.ConfigError,
                                  self.period.prepare)
        self.assertIn('[drs] power_credentials_file', str(error))

    def test_an_unknown_driver_stops_the_service_even_when_off(self):
        # A third party's driver may sort after noop.
        self.config(power_driver='redfish', group='drs')
        error = self.assertRaises(standby.conf.ConfigError,
                                  self.period.prepare)
        self.assertIn('[drs] power_driver', str(error))

    def test_built_once_at_start_when_on(self):
        self.config(power_management='automatic', group='drs')
        self.period.prepare()
        self.assertIs(self.period._driver, self.period.driver)

    def test_nothing_built_when_off_with_noop(self):
        # As read from nova.conf: equal to the defaults, not identical.
        self.config(power_management=h.fresh('off'),
                    power_driver=h.fresh('noop'), group='drs')
        self.period.prepare()
        self.assertIsNone(self.period._driver)


class SnapshotTest(testtools.TestCase):

    def snapshot(self, **powers):
        hosts = {name: model.HostSnapshot(
            name, vcpus, 1024, 10.0, 10.0, power=state,
            power_level='automatic')
            for name, (vcpus, state) in powers.items()}
        return model.Snapshot(hosts, (), model.PlannerConfig())

    def test_rows_set_power_and_drain_entering_and_maintenance_hosts(self):
        found = standby.with_power(
            self.snapshot(h1=(8, 'on'), h2=(8, 'entering'), h3=(8, 'on')),
            {'h1': {'state': 'entering'}}, {'h3'}).hosts
        self.assertEqual(
            [('entering', True), ('on', False), ('on', True)],
            [(found[h].power, found[h].draining) for h in ('h1', 'h2',
                                                           'h3')])

    def test_nothing_changed_is_the_same_snapshot(self):
        snapshot = self.snapshot(h1=(8, 'on'))
        self.assertIs(snapshot, standby.with_power(snapshot, {}, set()))
        self.assertIs(snapshot, standby.with_power(snapshot, {}, set(), {}))

    def test_the_seconds_since_each_host_left_standby(self):
        found = standby.with_power(
            self.snapshot(h1=(8, 'on'), h2=(8, 'waking')),
            {'h2': {'state': 'waking'}}, set(), {'h1': 60.0, 'h2': 5.0})
        self.assertEqual([60.0, 5.0], [found.hosts[n].woken_ago
                                       for n in ('h1', 'h2')])
        self.assertEqual(
            {'h1': None, 'h2': None},
            {n: host.woken_ago for n, host in standby.with_power(
                found, {}, set()).hosts.items()})

    def test_woken_within_the_window(self):
        now = datetime.datetime(2026, 11, 29, 12, 0)
        store = mock.Mock(**{'left_standby.return_value': {
            'h1': now - datetime.timedelta(seconds=3599),
            'h2': now - datetime.timedelta(seconds=3600),
            # A clock behind the writer's: just now.
            'h3': now + datetime.timedelta(seconds=5),
            'h4': now - datetime.timedelta(hours=2)}})
        self.assertEqual({'h1': 3599.0, 'h3': 0.0},
                         standby.woken_ago(store, now, 3600))
        self.assertEqual({'h3': 0.0}, standby.woken_ago(store, now, 1))
        # No window: the database is not even read.
        store.left_standby.reset_mock()
        self.assertEqual({}, standby.woken_ago(store, now, 0))
        store.left_standby.assert_not_called()
        store.left_standby.side_effect = db_exc.DBError('gone')
        with self.assertLogs(standby.LOG.logger, 'WARNING') as logs:
            self.assertEqual({}, standby.woken_ago(store, now, 3600))
        self.assertIn('when hosts left standby is unreadable', logs.output[0])

    def test_a_failed_boot_wakes_the_pool_of_the_largest_standby_host(self):
        snapshot = self.snapshot(h1=(8, 'standby'), h2=(16, 'standby'),
                                 h3=(32, 'on'))
        self.assertEqual({None}, standby.wake_pools(snapshot))
        self.assertEqual(set(), standby.wake_pools(
            self.snapshot(h1=(8, 'on'))))

    def test_a_failed_boot_wakes_in_the_pool_of_its_host(self):
        hosts = {name: model.HostSnapshot(
            name, vcpus, 1024, 10.0, 10.0, pool=pool, power=state,
            power_level=level)
            for name, vcpus, pool, state, level in (
                ('h1', 8, 'a', 'standby', 'automatic'),
                ('h2', 16, 'b', 'standby', 'automatic'),
                ('h3', 32, 'c', 'standby', 'off'),
                ('h4', 64, 'c', 'on', 'automatic'),
                ('h5', 64, 'd', 'waking', 'automatic'))}
        snapshot = model.Snapshot(hosts, (), model.PlannerConfig(
            mode='aggregate'))
        self.assertEqual({'b'}, standby.wake_pools(snapshot))
        # As read from the database and nova.conf: equal, not identical.
        fresh = {name: dataclasses.replace(
            host, power=h.fresh(host.power),
            power_level=h.fresh(host.power_level))
            for name, host in hosts.items()}
        self.assertEqual({'b'}, standby.wake_pools(dataclasses.replace(
            snapshot, hosts=fresh)))

    def test_hosts_the_driver_cannot_switch_are_not_managed(self):
        driver = FakeDriver()
        driver.manages = lambda host: host != 'h2'
        snapshot = self.snapshot(h1=(8, 'on'), h2=(8, 'on'),
                                 h3=(8, 'standby'))
        found = standby.unmanaged(snapshot, driver).hosts
        self.assertEqual(['automatic', 'off', 'automatic'],
                         [found[h].power_level for h in ('h1', 'h2', 'h3')])
        self.assertIs(snapshot, standby.unmanaged(snapshot, FakeDriver()))

    def test_only_on_hosts_of_managed_pools_are_left_out(self):
        snapshot = self.snapshot(h1=(8, h.fresh('entering')),
                                 h2=(8, h.fresh('standby')),
                                 h3=(8, h.fresh('on')))
        self.assertIs(snapshot, standby.unmanaged(
            snapshot, FakeDriver(), {'h1', 'h2'}))
        found = standby.unmanaged(snapshot, FakeDriver(), {'h3'}).hosts
        self.assertEqual('off', found['h3'].power_level)
        off = dataclasses.replace(snapshot, hosts={
            name: dataclasses.replace(host, power_level=h.fresh('off'))
            for name, host in snapshot.hosts.items()})
        self.assertIs(off, standby.unmanaged(off, FakeDriver(), {'h3'}))

    def test_entering_hosts(self):
        rows = {name: {'state': h.fresh(state)} for name, state in (
            ('h1', 'entering'), ('h2', 'standby'), ('h3', 'waking'))}
        self.assertEqual({'h1'}, standby.entering(rows))
        found = standby.with_power(self.snapshot(
            h1=(8, 'on'), h2=(8, 'on')), rows, set()).hosts
        self.assertEqual([('entering', True), ('standby', False)],
                         [(found[n].power, found[n].draining)
                          for n in ('h1', 'h2')])

    def test_counts(self):
        self.assertEqual({'on': 2, 'standby': 1}, standby.counts(
            self.snapshot(h1=(8, 'on'), h2=(8, 'standby'), h3=(8, 'on'))))


class PowerPeriodTest(testtools.TestCase):
    """Whole periods of :class:`standby.PowerPeriod` on small snapshots:
    three 10-vCPU hosts, quiet at 10 % unless said."""

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(NOW))
        config = self.useFixture(config_fixture.Config(standby.CONF)).config
        for name, value in (('power_low_periods', 2),
                            ('power_reserve_hosts', 0),
                            ('power_min_hosts', 1),
                            ('power_boot_seconds', 600),
                            ('rebalance_interval', 60)):
            config(**{name: value, 'group': 'drs'})
        self.config = config
        self.store = test_store.sqlite_store(self)
        migration.sync(self.store.engine)
        self.driver = FakeDriver()
        self.telemetry = telemetry.Telemetry()
        self.power = standby.PowerPeriod(self.store, self.telemetry)
        self.power._driver = self.driver
        self.now = 0.0
        self.power.clock = lambda: self.now
        self.disable = HostPowerTest.useFixture(self, mock.patch.object(
            standby.compute_service, 'disable',
            return_value=(Service(True, 'nova-drs: standby'), True)))
        self.enable = HostPowerTest.useFixture(self, mock.patch.object(
            standby.compute_service, 'enable',
            return_value=(Service(), True)))

    def snapshot(self, level='automatic', cpu=10.0, hosts=None, **config):
        hosts = hosts or {'h1': {}, 'h2': {}, 'h3': {}}
        return h.snapshot([h.host(
            name, spec.get('cpu', cpu), vcpus=spec.get('vcpus', 10),
            memory_mb=10240, pool=spec.get('pool'),
            power=spec.get('power', model.ON),
            power_level=h.fresh(spec.get('level', level)))
            for name, spec in hosts.items()], (), **config)

    def run_period(self, snapshot, moves=(), drains=(), up=None,
                   record='r1'):
        """One period: the rows as stored, the clock a period on."""
        period = period_plan.Period(
            model.Plan(tuple(moves), (), drains=tuple(drains)),
            live.Cloud({name: types.SimpleNamespace(up=value)
                        for name, value in (up or {}).items()}, {}, []),
            {}, [], snapshot, h.allow_all)
        rec = {'id': record}
        self.power.run(rec, period, self.store.power_hosts(), set())
        self.now += 60.0
        return rec

    def sample(self, name, **labels):
        return self.telemetry.registry.get_sample_value(name, labels)

    def actions(self, action, result):
        return self.sample('nova_drs_power_actions_total', action=action,
                           result=result)

    def recommendations(self):
        return [(r['action'], r['source'], r['state'], r['detail'])
                for r in self.store.recommendations()]

    def test_a_quiet_pool_puts_a_host_in_standby_at_automatic(self):
        # Two hosts stay: one of the three is to spare.
        self.config(power_min_hosts=2, group='drs')
        rec = self.run_period(self.snapshot())
        self.assertEqual([], rec['power']['actions'])
        self.assertEqual({}, rec['power']['hosts'])
        self.assertEqual({None: 1}, self.power.counters)
        self.disable.assert_not_called()
        rec = self.run_period(self.snapshot())
        [action] = rec['power']['actions']
        self.assertEqual(('standby', 'h1'), (action['kind'], action['host']))
        self.disable.assert_called_once_with('h1', 'standby',
                                             action['reason'])
        self.assertEqual({'h1': {'state': 'entering',
                                 'reason': action['reason'],
                                 'since': '2026-11-27 12:00:00',
                                 'error': None}}, rec['power']['hosts'])
        self.assertEqual(1.0, self.actions('standby', 'done'))
        self.assertEqual((2.0, 1.0, 0.0), tuple(
            self.sample('nova_drs_power_hosts', state=state)
            for state in ('on', 'entering', 'standby')))
        self.assertEqual([], self.recommendations())
        self.assertEqual([], self.driver.calls)

    def test_several_hosts_enter_standby_in_one_period(self):
        self.power.counters = {None: 5}
        rec = self.run_period(self.snapshot())
        self.assertEqual([('standby', 'h1'), ('standby', 'h2')],
                         [(a['kind'], a['host'])
                          for a in rec['power']['actions']])
        first, second = (a['reason'] for a in rec['power']['actions'])
        self.assertEqual([mock.call('h1', 'standby', first),
                          mock.call('h2', 'standby', second)],
                         self.disable.call_args_list)
        self.assertEqual({'h1': 'entering', 'h2': 'entering'},
                         {host: row['state'] for host, row in
                          self.store.power_hosts().items()})
        self.assertEqual(2.0, self.actions('standby', 'done'))

    def test_at_manual_a_standby_is_recommended_until_no_longer_made(self):
        # Two hosts stay: one of the three is to spare.
        self.config(power_min_hosts=2, group='drs')
        self.store.recommend('r0', {'instance': 'i1', 'source': 'h2',
                                    'destination': 'h3', 'reason': 'cpu'})
        for _ in range(3):
            rec = self.run_period(self.snapshot('manual'),
                                  record=f'r{int(self.now)}')
        self.disable.assert_not_called()
        self.assertEqual({}, self.store.power_hosts())
        self.assertEqual([(None, 'h2', 'pending', None),
                          ('standby', 'h1', 'pending', None)],
                         self.recommendations())
        self.assertEqual('r120', self.store.recommendations()[1][
            'record_id'])
        self.assertEqual(2.0, self.actions('standby', 'recommended'))
        self.assertEqual(rec['power']['actions'][0]['reason'],
                         self.store.recommendations()[1]['reason'])
        self.run_period(self.snapshot('manual', cpu=60.0))
        self.assertEqual([(None, 'h2', 'pending', None),
                          ('standby', 'h1', 'expired',
                           'no longer recommended')],
                         self.recommendations())

    def approve(self, action, host):
        found = self.store.recommend_power('r0', action, host, 'asked')
        self.store.transition(found, db_store.APPROVED)
        return found

    def test_approved_recommendations_are_carried_out(self):
        self.store.recommend('r0', {'instance': 'i1', 'source': 'h2',
                                    'destination': 'h3', 'reason': 'cpu'})
        self.store.transition(None, db_store.APPROVED)
        self.store.set_power('h3', model.STANDBY, disabled_by_drs=True)
        self.store.set_power('h4', model.STANDBY, disabled_by_drs=True)
        self.driver.failing.add('h4')
        self.approve(power.WAKE, 'h2')          # h2 is on
        self.approve(power.STANDBY, 'h1')
        self.approve(power.WAKE, 'h3')
        self.approve(power.WAKE, 'h4')          # its BMC refuses
        self.power.counters = {None: 0}
        self.run_period(self.snapshot(cpu=50.0))
        self.assertEqual([
            (None, 'h2', 'approved', None),
            ('wake', 'h2', 'expired', 'host h2 is on now'),
            ('standby', 'h1', 'completed', None),
            ('wake', 'h3', 'completed', None),
            ('wake', 'h4', 'failed', 'see the scheduler log')],
            self.recommendations())
        self.disable.assert_called_once_with(
            'h1', 'standby', 'approved recommendation 3: asked')
        self.assertEqual([('on', 'h3'), ('on', 'h4')], self.driver.calls)
        self.assertEqual({'h1': 'entering', 'h3': 'waking',
                          'h4': 'standby'},
                         {host: row['state'] for host, row in
                          self.store.power_hosts().items()})
        self.assertEqual((1.0, 1.0, 1.0), (
            self.actions('standby', 'done'), self.actions('wake', 'done'),
            self.actions('wake', 'failed')))
        # A standby the operator asked for is no reason to count again.
        self.assertEqual({None: 0}, self.power.counters)

    def test_an_approved_standby_of_a_host_no_longer_on_expires(self):
        self.store.set_power('h1', model.ENTERING, disabled_by_drs=True)
        self.approve(power.STANDBY, 'h1')
        self.approve(power.STANDBY, 'h2')
        self.run_period(self.snapshot(cpu=50.0))
        self.assertEqual([('standby', 'h1', 'expired',
                           'host h1 is entering now'),
                          ('standby', 'h2', 'completed', None)],
                         self.recommendations())

    def test_an_approved_action_on_a_host_gone_further_expires(self):
        self.store.set_power('h1', model.STANDBY, disabled_by_drs=True)
        self.store.set_power('h2', model.WAKING, disabled_by_drs=True)
        self.approve(power.STANDBY, 'h1')
        self.approve(power.WAKE, 'h2')
        self.run_period(self.snapshot(cpu=50.0))
        self.assertEqual([('standby', 'h1', 'expired',
                           'host h1 is standby now'),
                          ('wake', 'h2', 'expired', 'host h2 is waking now')],
                         self.recommendations())
        self.disable.assert_not_called()
        self.assertEqual([], self.driver.calls)

    def test_the_counter_of_an_approved_standby_pool_goes_on(self):
        # Two hosts stay: one of the three is to spare.
        self.config(power_min_hosts=2, group='drs')
        self.power.counters = {None: 3}
        self.approve(power.STANDBY, 'h2')
        rec = self.run_period(self.snapshot())
        self.assertEqual({None: 4}, self.power.counters)
        self.assertEqual(['h2'], list(rec['power']['hosts']))

    def test_a_standby_of_a_move_destination_waits(self):
        # Two hosts stay: one of the three is to spare.
        self.config(power_min_hosts=2, group='drs')
        self.power.counters = {None: 5}
        move = model.Move('i1', 'h2', 'h1', 'cpu', {})
        rec = self.run_period(self.snapshot(), moves=[move])
        self.disable.assert_not_called()
        self.assertEqual([], self.recommendations())
        self.assertIn('host h1: standby left for a later period, a move of '
                      'this period goes to it', rec['power']['notes'])
        rec = self.run_period(self.snapshot('manual'), moves=[move])
        self.assertEqual([], self.recommendations())

    def test_a_cancel_is_carried_out_whatever_the_level(self):
        self.store.set_power('h1', model.ENTERING, disabled_by_drs=True)
        rec = self.run_period(self.snapshot('off'))
        self.assertEqual(['cancel'], [a['kind'] for a in
                                      rec['power']['actions']])
        self.enable.assert_called_once_with('h1', 'standby', True)
        self.assertEqual({}, rec['power']['hosts'])
        self.assertEqual(1.0, self.actions('cancel', 'done'))

    def test_nothing_to_do_when_power_management_is_off_everywhere(self):
        rec = self.run_period(self.snapshot('off'))
        self.assertEqual({'id': 'r1'}, rec)
        self.assertIsNone(self.sample('nova_drs_power_hosts', state='on'))
        rec = {}
        self.power.preview(rec, self.snapshot('off'), h.allow_all, {})
        self.assertEqual({}, rec)

    def test_a_wake_request_wakes_the_largest_standby_host(self):
        hosts = {'h1': {'cpu': 50.0}, 'h2': {'cpu': None, 'power': 'standby'},
                 'h3': {'cpu': None, 'vcpus': 20, 'power': 'standby'}}
        for host in ('h2', 'h3'):
            self.store.set_power(host, model.STANDBY, disabled_by_drs=True)
        self.run_period(self.snapshot(hosts=hosts))
        self.assertEqual([], self.driver.calls)
        self.store.request_wake(None, 'no valid host for i9')
        self.run_period(self.snapshot(hosts=hosts))
        self.assertEqual([('on', 'h3')], self.driver.calls)
        self.assertEqual('waking', self.store.power_hosts()['h3']['state'])
        self.assertEqual([], self.store.take_wake_requests())

    def test_a_request_asks_a_wake_only_when_a_host_is_in_standby(self):
        self.store.set_power('h1', model.ENTERING, disabled_by_drs=True)
        self.store.set_power('h2', model.WAKING, disabled_by_drs=True)
        self.power.request_wake('no valid host for i1')
        self.assertEqual([], self.store.take_wake_requests())
        self.store.set_power('h3', model.STANDBY, disabled_by_drs=True)
        self.power.request_wake('no valid host for i2')
        self.assertEqual(['no valid host for i2'], [
            found['reason'] for found in self.store.take_wake_requests()])

    def test_a_request_with_the_database_down_asks_nothing_and_logs(self):
        with mock.patch.object(self.store, 'power_hosts',
                               side_effect=db_exc.DBError('gone')):
            with self.assertLogs(standby.LOG.logger.name,
                                 level='WARNING') as logs:
                self.power.request_wake('no valid host for i1')
        self.assertIn('no wake requested, the DRS database is not usable',
                      logs.output[0])

    def test_a_woken_host_up_measures_the_boot_and_counts_again(self):
        hosts = {'h1': {'pool': 'A'}, 'h2': {'pool': 'A'},
                 'h3': {'pool': 'B'}, 'h4': {'pool': 'B'}}
        snapshot = self.snapshot(hosts=hosts, mode=h.fresh('aggregate'))
        self.store.set_power('h1', model.WAKING, disabled_by_drs=True)
        self.store.set_power('h3', model.STANDBY, disabled_by_drs=True)
        self.power.counters = {'A': 5, 'B': 0}
        self.clock.advance_time_seconds(120)
        self.run_period(snapshot, up={'h1': True, 'h3': True})
        self.enable.assert_called_once_with('h1', 'standby', True)
        self.assertEqual(['h3'], list(self.store.power_hosts()))
        self.assertEqual(120.0, self.power.boot_seconds)
        self.assertEqual(120.0, self.power.config().boot_seconds)
        self.assertEqual({'A': 0, 'B': 1}, self.power.counters)
        self.assertEqual(1.0, self.actions('enable', 'done'))
        # A host gone from the snapshot counts nothing again.
        self.store.set_power('h9', model.WAKING, disabled_by_drs=True)
        self.driver.measured = 61.0
        self.clock.advance_time_seconds(30)
        self.run_period(snapshot, up={'h9': True})
        self.assertEqual(90.5, self.power.boot_seconds)
        self.assertEqual({'A': 1, 'B': 2}, self.power.counters)

    def test_the_boot_time_is_the_configured_one_until_measured(self):
        self.assertIsNone(self.power.boot_seconds)
        self.assertEqual(600.0, self.power.config().boot_seconds)

    def test_standby_host_seconds(self):
        for host in ('h2', 'h3'):
            self.store.set_power(host, model.STANDBY, disabled_by_drs=True)
        hosts = {'h1': {}, 'h2': {'cpu': None}, 'h3': {'cpu': None}}
        with mock.patch.object(standby.time, 'monotonic',
                               side_effect=[10.0, 40.0]):
            self.run_period(self.snapshot(hosts=hosts))
            self.assertEqual(0.0, self.sample(
                'nova_drs_standby_host_seconds_total'))
            self.run_period(self.snapshot(hosts=hosts))
        self.assertEqual(60.0, self.sample(
            'nova_drs_standby_host_seconds_total'))
        self.assertEqual(2.0, self.sample('nova_drs_power_hosts',
                                          state='standby'))

    def test_no_standby_host_seconds_without_standby_hosts(self):
        with mock.patch.object(standby.time, 'monotonic',
                               side_effect=[10.0, 40.0]):
            self.run_period(self.snapshot(cpu=60.0))
            self.run_period(self.snapshot(cpu=60.0))
        self.assertEqual(0.0, self.sample(
            'nova_drs_standby_host_seconds_total'))

    def test_refused_hosts_are_noted(self):
        self.config(quarantine_time=1800, group='drs')
        self.power.refused.update(
            h2=NOW - datetime.timedelta(seconds=10),
            h3=NOW - datetime.timedelta(seconds=1800))
        rec = self.run_period(self.snapshot(cpu=60.0))
        self.assertEqual(['host h2: its power-off was refused at 11:59:50; '
                          'left out of power management for [drs] '
                          'quarantine_time'], rec['power']['notes'])
        self.assertEqual(['h2'], list(self.power.refused))

    def test_a_refused_host_is_not_chosen_for_standby(self):
        # Two hosts stay: one of the three is to spare.
        self.config(power_min_hosts=2, group='drs')
        self.power.counters = {None: 5}
        self.power.refused['h1'] = NOW
        rec = self.run_period(self.snapshot())
        self.assertEqual(['h2'], [a['host'] for a in
                                  rec['power']['actions']])

    def test_an_entering_host_emptied_is_powered_off(self):
        self.store.set_power('h1', model.ENTERING, disabled_by_drs=True)
        rec = self.run_period(self.snapshot(), drains=[drain('h1')])
        self.assertEqual([('off', 'h1')], self.driver.calls)
        self.assertEqual('standby', rec['power']['hosts']['h1']['state'])

    def test_the_daily_shape_is_stored_per_bin_and_read_by_a_new_leader(self):
        # 15 cores (three 10-vCPU hosts at 50 %) every minute: the first
        # quarter of an hour is learnt when the next begins.
        for _ in range(15):
            self.run_period(self.snapshot(cpu=50.0))
        self.assertEqual({}, self.store.daily_shapes())
        self.run_period(self.snapshot(cpu=50.0))
        stored = {None: [{'bin': 0, 'seconds': 900, 'demand': 15.0,
                          'days': 1, 'day': 0, 'weight': 1.0}]}
        self.assertEqual(stored, self.store.daily_shapes())
        # Nothing more is written within the next bin.
        with mock.patch.object(self.store, 'save_daily_shape') as save:
            self.run_period(self.snapshot(cpu=50.0))
        save.assert_called_once_with(None, 900, {})
        # A new leader reads it at its first period, and learns on.
        successor = standby.PowerPeriod(self.store, self.telemetry)
        successor._driver = self.driver
        successor.clock = lambda: self.now
        self.power = successor
        self.run_period(self.snapshot(cpu=50.0))
        shape = successor.forecasts[None].shape
        self.assertEqual(daily_shape.Bin(15.0, 1, 0), shape.bins[0])
        self.assertEqual(95, shape.bins.count(None))

    def test_a_leader_reads_the_shapes_again_once_it_leads_again(self):
        self.run_period(self.snapshot(cpu=50.0))
        self.store.save_daily_shape(None, 900, {7: {
            'demand': 3.0, 'days': 2, 'day': 1, 'weight': 1.7}})
        self.run_period(self.snapshot(cpu=50.0))
        self.assertIsNone(self.power.forecasts[None].shape.bins[7])
        self.power.stand_down()
        self.run_period(self.snapshot(cpu=50.0))
        self.assertEqual(daily_shape.Bin(3.0, 2, 1, 1.7),
                         self.power.forecasts[None].shape.bins[7])

    def test_stored_bins_that_cannot_be_used_are_logged_and_ignored(self):
        self.store.save_daily_shape('A', 900, {
            3: {'demand': 4.0, 'days': 1, 'day': 1, 'weight': 1.0},
            500: {'demand': 4.0, 'days': 1, 'day': 1, 'weight': 1.0},
            4: {'demand': -2.0, 'days': 1, 'day': 1, 'weight': 1.0}})
        self.store.save_daily_shape('B', 600, {1: {
            'demand': 4.0, 'days': 1, 'day': 1, 'weight': 1.0}})
        with self.assertLogs(daily_shapes.LOG.logger.name,
                             level='WARNING') as logs:
            found = daily_shapes.load(self.store)
        self.assertEqual(3, len(logs.records))
        self.assertIn('a stored bin of the daily shape of pool A is not '
                      'used: bin 500: not a bin of the day (0 to 95)',
                      logs.output[1])
        self.assertEqual(daily_shape.Bin(4.0, 1, 1),
                         found['A'].shape.bins[3])
        self.assertEqual(95, found['A'].shape.bins.count(None))
        self.assertEqual(96, found['B'].shape.bins.count(None))

    def test_the_bins_read_are_logged(self):
        self.store.save_daily_shape('A', 900, {
            3: {'demand': 4.0, 'days': 1, 'day': 1, 'weight': 1.0}})
        with self.assertLogs(daily_shapes.LOG.logger.name,
                             level='INFO') as logs:
            daily_shapes.load(self.store)
        self.assertIn("pool A's daily shape read: 1 bins of 96, 0 whole "
                      "days", logs.output[0])

    def test_needs_instances_counts_this_period(self):
        self.power.counters = {None: 1}
        self.assertEqual({'h1', 'h2', 'h3'},
                         self.power.needs_instances(self.snapshot()))
        self.assertEqual({None: 1}, self.power.counters)
        self.assertEqual({}, self.power.forecasts)
        self.assertEqual(set(), self.power.needs_instances(
            self.snapshot(cpu=60.0)))

    def test_preview_shows_each_pools_hosts_needed_and_energy_saved(self):
        self.config(power_reserve_hosts=1, group='drs')
        hosts = {'h1': {'pool': 'a'}, 'h2': {'pool': 'a'},
                 'h3': {'pool': 'a', 'cpu': None, 'power': model.STANDBY},
                 'h4': {'pool': 'b'}}
        self.store.set_power('h3', model.STANDBY, pool='a')
        self.store.set_power('h4', model.STANDBY, pool='b')
        self.clock.advance_time_seconds(1800)
        self.store.forget_power('h4')
        self.clock.advance_time_seconds(5400)
        snapshot = self.snapshot(hosts=hosts, mode='aggregate')

        def pools():
            rec = {}
            self.power.preview(rec, snapshot, h.allow_all,
                               self.store.power_hosts())
            return {p['pool']: (p['needed_now'], p['needed'],
                                p['reserve_hosts'], p['standby_host_hours'],
                                p['saved_kwh'])
                    for p in rec['power']['pools']}

        self.assertEqual({'a': (1, 1, 1, 2.0, None),
                          'b': (1, 1, 1, 0.5, None)}, pools())
        self.config(power_idle_watts=200.0, power_standby_watts=20.0,
                    group='drs')
        self.assertEqual({'a': (1, 1, 1, 2.0, 0.36),
                          'b': (1, 1, 1, 0.5, 0.09)}, pools())

    def test_preview_rounds_to_a_thousandth_and_counts_none_as_zero(self):
        self.config(power_idle_watts=200.0, power_standby_watts=20.0,
                    group='drs')
        hosts = {'h1': {'pool': 'a'}, 'h2': {'pool': 'a'},
                 'h3': {'pool': 'a', 'cpu': None, 'power': model.STANDBY},
                 'h4': {'pool': 'c'}}
        self.store.set_power('h3', model.STANDBY, pool='a')
        # 1234 s: 0.34278 host-hours, 0.0617 kWh at 180 W saved.
        self.clock.advance_time_seconds(1234)
        rec = {}
        self.power.preview(rec, self.snapshot(hosts=hosts, mode='aggregate'),
                           h.allow_all, self.store.power_hosts())
        self.assertEqual(
            {'a': (0.343, 0.062), 'c': (0.0, 0.0)},
            {p['pool']: (p['standby_host_hours'], p['saved_kwh'])
             for p in rec['power']['pools']})

    def test_preview_shows_the_plan_and_changes_nothing(self):
        # Two hosts stay: one of the three is to spare.
        self.config(power_min_hosts=2, group='drs')
        self.power.counters = {None: 5}
        self.clock.advance_time_delta(datetime.timedelta(microseconds=250))
        self.store.set_power('h3', model.STANDBY, reason='quiet')
        rec = {}
        self.power.preview(rec, self.snapshot(), h.allow_all,
                           self.store.power_hosts())
        self.assertEqual(['standby'], [a['kind'] for a in
                                       rec['power']['actions']])
        self.assertEqual({'h3': {'state': 'standby', 'reason': 'quiet',
                                 'since': '2026-11-27 12:00:00',
                                 'error': None}}, rec['power']['hosts'])
        self.assertEqual({None: 5}, self.power.counters)
        self.disable.assert_not_called()
        self.assertEqual(['h3'], list(self.store.power_hosts()))
        self.assertIsNone(self.sample('nova_drs_power_hosts', state='on'))
