"""The leader's side of power management (``standby``): each step of a
host on its way to standby and back, on a real SQLite DRS database, with
Nova's service update and the power driver faked at their boundary."""

import datetime
from unittest import mock

import testtools
from oslo_config import fixture as config_fixture
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.power import base as power_base
from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.rebalance import power
from nova_drs_scheduler.rebalance import standby
from nova_drs_scheduler.rebalance import telemetry
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

    def test_built_once_at_start_when_on(self):
        self.config(power_management='automatic', group='drs')
        self.period.prepare()
        self.assertIs(self.period._driver, self.period.driver)

    def test_nothing_built_when_off_with_noop(self):
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
                ('h4', 64, 'c', 'on', 'automatic'))}
        snapshot = model.Snapshot(hosts, (), model.PlannerConfig(
            mode='aggregate'))
        self.assertEqual({'b'}, standby.wake_pools(snapshot))

    def test_hosts_the_driver_cannot_switch_are_not_managed(self):
        driver = FakeDriver()
        driver.manages = lambda host: host != 'h2'
        snapshot = self.snapshot(h1=(8, 'on'), h2=(8, 'on'),
                                 h3=(8, 'standby'))
        found = standby.unmanaged(snapshot, driver).hosts
        self.assertEqual(['automatic', 'off', 'automatic'],
                         [found[h].power_level for h in ('h1', 'h2', 'h3')])
        self.assertIs(snapshot, standby.unmanaged(snapshot, FakeDriver()))

    def test_counts(self):
        self.assertEqual({'on': 2, 'standby': 1}, standby.counts(
            self.snapshot(h1=(8, 'on'), h2=(8, 'standby'), h3=(8, 'on'))))
