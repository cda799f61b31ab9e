"""What a period reads into its Snapshot: the hosts, the samples of
those up, the instances of those over their threshold and those named,
and their loads within the deadline; late hosts' instances blocked."""

import datetime
from unittest import mock

import fixtures
import testtools
from nova import objects
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler.db import relief_rows
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning.goals import level
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import snapshot_reader
from nova_drs_scheduler.rebalance.sources import base as sources_base
from tests.unit.live import test_rebalancer


class SnapshotTest(test_rebalancer.PeriodTestCase):
    """What a period reads: the hosts, the samples of those up, the
    instances of those over their threshold and those named, and their
    loads within the deadline."""

    NOW = datetime.datetime(2026, 11, 24, 12, 0)

    def setUp(self):
        super().setUp()
        self.config(instance_cooldown=100, quarantine_time=400,
                    migration_timeout=300, no_return_time=200,
                    instance_metrics_timeout=7, group='drs')
        self.useFixture(utils_fixture.TimeFixture(self.NOW))
        self.useFixture(fixtures.MockPatchObject(
            snapshot_reader, 'time')).mock.time.return_value = 1234.0

        def aggregates(level):
            return [objects.Aggregate(name='a', metadata={
                'drs_automation': level, 'drs_cpu_threshold': '70'})]
        self.rows = {
            'h1': mock.Mock(aggregates=[], up=True),
            'h2': mock.Mock(aggregates=aggregates('off'), up=True),
            'h3': mock.Mock(aggregates=aggregates('manual'), up=False)}
        self.cloud = live.Cloud(hosts=self.rows, instances={},
                                migrations=[])
        self.read_cloud = self.useFixture(fixtures.MockPatchObject(
            live, 'read_cloud', return_value=self.cloud)).mock
        self.instances = {'i1': mock.Mock(host='h1'),
                          'i3': mock.Mock(host='h3')}
        self.read_instances = self.useFixture(fixtures.MockPatchObject(
            live, 'read_instances', side_effect=lambda *args: (
                self.cloud.instances.update(self.instances)))).mock
        self.build = self.useFixture(fixtures.MockPatchObject(
            live, 'build_snapshot')).mock
        self.period.reader.host_manager = mock.Mock(enabled_cells=['cell1'])
        self.period.reader.servicegroup_api = mock.sentinel.servicegroup
        self.period.reader.source = mock.Mock(**{
            'instance_loads_within.return_value': sources_base.Measured(
                {'i1': 1.5}, frozenset({'h1'}), {'i1': 0.25})})
        self.period.reader._named_instances = mock.Mock(return_value={'i9'})
        self.windows = mock.Mock(**{'update.return_value': {
            'h1': mock.Mock(counter=2), 'h2': mock.Mock(counter=0),
            'h3': mock.Mock(counter=0)}})
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0)
        self.period.store.left_standby.return_value = {}

    def snapshot(self, all_instances=False):
        return self.period.reader.read(mock.sentinel.context,
                                     self.planner_config, self.windows,
                                     all_instances)

    def test_reads_what_the_period_needs(self):
        snapshot, cloud, levels, late = self.snapshot()
        # Migrations as far back as the longest rule that reads them.
        self.read_cloud.assert_called_once_with(
            mock.sentinel.context, ['cell1'], mock.sentinel.servicegroup,
            self.NOW - datetime.timedelta(seconds=400))
        self.assertEqual({'h1': 'automatic', 'h2': 'off', 'h3': 'manual'},
                         levels)
        self.period.reader.source.host_samples_of.assert_called_once_with(
            mock.sentinel.context, {'h1': self.rows['h1'],
                                    'h2': self.rows['h2']})
        self.windows.update.assert_called_once_with(
            1234.0, self.period.reader.source.host_samples_of.return_value,
            {'h1': (80, 90.0), 'h2': (70, 90.0), 'h3': (70, 90.0)})
        # Hosts being drained start afresh (none here).
        self.windows.restart.assert_called_once_with(frozenset())
        self.read_instances.assert_called_once_with(
            mock.sentinel.context, self.cloud, {'h1'}, {'i9'})
        self.period.reader.source.instance_loads_within.assert_called_once_with(
            mock.sentinel.context, [self.instances['i1']], 7)
        settings = self.build.call_args.args[1]
        self.assertEqual({'h1': False, 'h2': True, 'h3': False},
                         {name: s.automation_off
                          for name, s in settings.items()})
        self.build.assert_called_once_with(
            self.cloud, settings, self.windows.update.return_value,
            {'i1': 1.5}, self.planner_config, 100, 400, 200, set(),
            self.period.reader.trends, self.period.store.outcomes.return_value,
            {'i1': 0.25}, frozenset(), {})
        # The moves Nova refused at start within the quarantine time.
        self.period.store.outcomes.assert_called_once_with(
            executor.REFUSED, self.NOW - datetime.timedelta(seconds=400))
        self.assertEqual((self.build.return_value, self.cloud,
                          frozenset({'h1'})), (snapshot, cloud, late))
        # What was measured feeds the instances' trends.
        self.assertEqual(1.5, self.period.reader.trends['i1'][0])

    def host_snapshots(self):
        """``live.host_snapshot`` mocked: each host at 50 %."""
        names = {id(status): name for name, status
                 in self.windows.update.return_value.items()}
        return self.useFixture(fixtures.MockPatchObject(
            live, 'host_snapshot', side_effect=lambda rows, status, *_, **kw:
            model.HostSnapshot(names[id(status)], 10, 1024, 50.0,
                               None))).mock

    def test_hosts_entering_standby_drain_beside_those_in_maintenance(self):
        # h1 in maintenance and entering standby, h2 entering, h3 standby.
        self.host_snapshots()
        self.period.reader.read(
            mock.sentinel.context, self.planner_config, self.windows, False,
            draining={'h1'}, power_rows={
                'h1': {'state': model.ENTERING},
                'h2': {'state': model.ENTERING},
                'h3': {'state': model.STANDBY}})
        self.assertEqual({'h1', 'h2'}, self.build.call_args.args[8])
        self.windows.restart.assert_called_once_with({'h1', 'h2'})

    def test_queued_hosts_marked_not_drained(self):
        # Leveling on: the hosts it judges are queued as the period's.
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0.5)
        host_snapshot = self.host_snapshots()
        self.useFixture(fixtures.MockPatchObject(
            level, 'leveling_sources', return_value=set()))
        self.period.reader.read(
            mock.sentinel.context, self.planner_config, self.windows, False,
            draining={'h1'}, queued=frozenset({'h2'}))
        self.assertEqual((frozenset({'h2'}), {'h1'}),
                         (self.build.call_args.args[12],
                          self.build.call_args.args[8]))
        names = {id(rows): name for name, rows in self.rows.items()}
        self.assertEqual(
            {'h1': False, 'h2': True, 'h3': False},
            {names[id(call.args[0])]: call.kwargs['queued']
             for call in host_snapshot.call_args_list})
        self.windows.restart.assert_called_once_with({'h1'})

    def test_leveling_sources_judged_with_the_power_states(self):
        # A pool with a host in standby levels (doc/power.md): leveling
        # sees the stored power states.
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0.5)
        self.host_snapshots()
        sources = self.useFixture(fixtures.MockPatchObject(
            level, 'leveling_sources', return_value=set())).mock
        self.period.reader.read(
            mock.sentinel.context, self.planner_config, self.windows, False,
            power_rows={'h2': {'state': model.STANDBY}})
        self.assertEqual(
            {'h1': model.ON, 'h2': model.STANDBY, 'h3': model.ON},
            {name: host.power
             for name, host in sources.call_args.args[0].items()})

    def test_instances_of_the_hosts_leveling_may_move_are_measured(self):
        # With leveling on (any gap above 0), the hosts the planner may
        # level from are read and measured too, from their host snapshots.
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0.5)
        host_snapshot = self.host_snapshots()
        sources = self.useFixture(fixtures.MockPatchObject(
            level, 'leveling_sources', return_value={'h3'})).mock
        self.snapshot()
        self.assertEqual({name: model.HostSnapshot(name, 10, 1024, 50.0, None)
                          for name in ('h1', 'h2', 'h3')},
                         sources.call_args.args[0])
        self.assertIs(self.planner_config, sources.call_args.args[1])
        self.assertEqual(3, host_snapshot.call_count)
        self.read_instances.assert_called_once_with(
            mock.sentinel.context, self.cloud, {'h1', 'h3'}, {'i9'})
        self.period.reader.source.instance_loads_within.assert_called_once_with(
            mock.sentinel.context, [self.instances['i1'],
                                    self.instances['i3']], 7)

    def test_the_instances_of_moves_checked_are_read_and_measured(self):
        # i5 is on h2 (not over): read by uuid and measured all the same;
        # i7 left (not read): not asked about; i9, named for itself too,
        # is read once.
        self.instances['i5'] = mock.Mock(host='h2', uuid='i5')
        self.period.reader.source.instance_loads_within.return_value = (
            sources_base.Measured({'i1': 1.5, 'i5': 0.75}))
        _snapshot, cloud, _levels, _late = self.period.reader.read(
            mock.sentinel.context, self.planner_config, self.windows, False,
            checking=frozenset({'i5', 'i7', 'i9'}))
        self.read_instances.assert_called_once_with(
            mock.sentinel.context, self.cloud, {'h1'}, {'i9', 'i5', 'i7'})
        self.period.reader.source.instance_loads_within.assert_called_once_with(
            mock.sentinel.context, [self.instances['i1'],
                                    self.instances['i5']], 7)
        # What the relief checks read.
        self.assertEqual({'i1': 1.5, 'i5': 0.75}, cloud.loads)

    def test_each_hosts_loads_stayed_from_the_stored_checks(self):
        # h1: two moves off it checked lately, one of whose loads stayed.
        seconds = relief_rows.epoch(self.NOW)
        self.period.store.relief_checks.return_value = [
            (seconds - 100, 'h1', True), (seconds - 50, 'h1', False),
            (seconds - 8000, 'h2', True)]
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0.5)
        host_snapshot = self.host_snapshots()
        sources = self.useFixture(fixtures.MockPatchObject(
            level, 'leveling_sources', return_value=set())).mock
        self.snapshot()
        names = {id(rows): name for name, rows in self.rows.items()}
        # Leveling's choice of sources learns it too.
        self.assertEqual(
            {'h1': (1, 2), 'h2': None, 'h3': None},
            {names[id(call.args[0])]: call.kwargs['loads_stayed']
             for call in host_snapshot.call_args_list})
        self.assertTrue(sources.called)
        self.assertEqual({'h1': (1, 2)}, self.build.call_args.args[13])
        since = self.NOW - datetime.timedelta(hours=2)
        self.period.store.relief_checks.assert_called_once_with(
            since, since - datetime.timedelta(seconds=1800))

    def test_unreadable_checks_leave_the_hosts_unknown(self):
        self.period.store.relief_checks.side_effect = db_exc.DBError('gone')
        self.snapshot()
        self.assertEqual({}, self.build.call_args.args[13])
        self.assertIn('DRS cannot read the relief checks', self.log.output)

    def power(self, power_level, power_rows=None):
        """A period read with h1's aggregate at ``power_level``
        and power management's choice of hosts to empty mocked: h2."""
        self.rows['h1'].aggregates = [objects.Aggregate(
            name='p', metadata={'drs_power_management': power_level})]
        self.host_snapshots()
        needs = self.useFixture(fixtures.MockPatchObject(
            self.period.reader.power, 'needs_instances',
            return_value={'h2'})).mock
        self.period.reader.read(
            mock.sentinel.context, self.planner_config, self.windows, False,
            power_rows=power_rows)
        return needs

    def test_hosts_power_management_may_empty_are_measured(self):
        for power_level in ('manual', 'automatic'):
            self.read_instances.reset_mock()
            self.assertTrue(self.power(power_level).called, power_level)
            self.read_instances.assert_called_once_with(
                mock.sentinel.context, self.cloud, {'h1', 'h2'}, {'i9'})

    def test_nothing_more_measured_while_power_management_is_off(self):
        # As read from an aggregate: equal to 'off', not the same object.
        self.assertFalse(self.power(''.join(['o', 'ff'])).called)
        self.read_instances.assert_called_once_with(
            mock.sentinel.context, self.cloud, {'h1'}, {'i9'})

    def test_a_host_held_out_keeps_power_management_reading(self):
        # Off everywhere, but a host still in standby: it may wake.
        self.assertTrue(self.power('off', power_rows={
            'h3': {'state': model.STANDBY}}).called)

    def test_the_snapshot_carries_the_stored_power_states(self):
        self.host_snapshots()
        self.useFixture(fixtures.MockPatchObject(
            self.period.reader.power, 'needs_instances', return_value=set()))
        self.build.return_value = model.Snapshot(
            {name: model.HostSnapshot(name, 10, 1024, 50.0, None)
             for name in ('h1', 'h2', 'h3')}, (), self.planner_config)
        snapshot, *_ = self.period.reader.read(
            mock.sentinel.context, self.planner_config, self.windows, False,
            power_rows={'h3': {'state': model.STANDBY}})
        self.assertEqual(
            {'h1': model.ON, 'h2': model.ON, 'h3': model.STANDBY},
            {name: host.power for name, host in snapshot.hosts.items()})

    def test_hosts_woken_lately_carry_the_seconds_since(self):
        # Every host on, h1's pool under power management: h2 left standby
        # an hour ago, h3 six hours ago (no longer counted), so h2's pool
        # levels (doc/power.md); leveling sees it, and so does the plan.
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0.5)
        self.period.store.left_standby.return_value = {
            'h2': self.NOW - datetime.timedelta(hours=1),
            'h3': self.NOW - datetime.timedelta(hours=6)}
        self.build.return_value = model.Snapshot(
            {name: model.HostSnapshot(name, 10, 1024, 50.0, None)
             for name in ('h1', 'h2', 'h3')}, (), self.planner_config)
        sources = self.useFixture(fixtures.MockPatchObject(
            level, 'leveling_sources', return_value=set())).mock
        self.power('automatic')
        woken = {'h1': None, 'h2': 3600.0, 'h3': None}
        self.assertEqual(woken, {
            name: host.woken_ago
            for name, host in sources.call_args.args[0].items()})
        snapshot, *_ = self.period.reader.read(
            mock.sentinel.context, self.planner_config, self.windows, False)
        self.assertEqual(woken, {name: host.woken_ago
                                 for name, host in snapshot.hosts.items()})
        # Not read where nothing levels, nor with power management off.
        self.period.store.left_standby.reset_mock()
        self.planner_config = model.PlannerConfig(level_gap=0)
        self.power('automatic')
        self.planner_config = model.PlannerConfig(level_gap=0.5)
        self.power('off')
        self.period.store.left_standby.assert_not_called()

    def test_every_instance_read_for_a_dry_run(self):
        self.snapshot(all_instances=True)
        self.read_instances.assert_called_once_with(
            mock.sentinel.context, self.cloud, None, {'i9'})

    def test_migrations_read_back_as_far_as_the_longest_rule(self):
        for longest in ('instance_cooldown', 'migration_timeout',
                        'no_return_time'):
            self.config(group='drs', **{longest: 999})
            self.read_cloud.reset_mock()
            self.snapshot()
            self.assertEqual(self.NOW - datetime.timedelta(seconds=999),
                             self.read_cloud.call_args.args[3])
            self.config(group='drs', **{longest: 1})


class NamedInstancesTest(test_rebalancer.PeriodTestCase):

    def test_drs_migrations_and_open_recommendations(self):
        # User ids as read from the database; "ops" sorts after DRS's.
        cloud = mock.Mock(migrations=[
            mock.Mock(instance_uuid='a',
                      user_id=test_rebalancer.loaded(executor.DRS_USER)),
            mock.Mock(instance_uuid='b', user_id='admin'),
            mock.Mock(instance_uuid='d', user_id='ops')])
        self.period.store.recommendations.return_value = [
            {'instance': 'c'}]
        self.assertEqual({'a', 'c'},
                         self.period.reader._named_instances(cloud))
        self.period.store.recommendations.assert_called_once_with(
            (db_store.PENDING, db_store.APPROVED))


class UnmeasuredTest(testtools.TestCase):

    def test_late_hosts_instances_blocked_unless_already(self):
        snapshot = model.Snapshot(
            hosts={'h1': host('h1'), 'h2': host('h2')},
            instances=[
                model.InstanceSnapshot('a', 'h1', 2, 512, 4.5),
                model.InstanceSnapshot('b', 'h1', 2, 512, 4.5,
                                       blocked='cooldown'),
                model.InstanceSnapshot('c', 'h2', 2, 512, 4.5)],
            config=model.PlannerConfig())
        result = snapshot_reader.unmeasured(snapshot, frozenset({'h1'}))
        self.assertEqual(
            [record.NOT_MEASURED_BLOCK, 'cooldown', None],
            [inst.blocked for inst in result.instances])
        self.assertIs(snapshot, snapshot_reader.unmeasured(snapshot,
                                                      frozenset()))


def host(name):
    return model.HostSnapshot(name=name, vcpus=10, memory_mb=8192,
                              cpu_percent=90, ram_percent=None, counter=1)


class MaintenanceSnapshotTest(test_rebalancer.PeriodTestCase):
    """``nova-drs maintenance plan``'s snapshot: a dry run's, with the
    hosts asked for drained beside those in maintenance and entering
    standby."""

    def test_the_hosts_asked_for_drain_beside_the_others(self):
        reader = self.period.reader
        # 'twice': in maintenance and asked for; the power rows go as
        # stored (``read`` drains those entering standby too).
        # 'q1' waits in the queue: in service, not drained; 'q2' too, but
        # asked for: drained.
        reader.store.maintenance_hosts.return_value = {
            'm1': {'state': 'draining'}, 'twice': {'state': 'blocked'},
            'q1': {'state': 'queued'}, 'q2': {'state': 'queued'}}
        reader.store.power_hosts.return_value = {
            'e1': {'state': model.ENTERING}, 'm1': {
                'state': model.ENTERING}, 's1': {'state': model.STANDBY}}
        snapshot = model.Snapshot(
            hosts={}, instances=(), config=model.PlannerConfig())
        reader.read = mock.Mock(return_value=(
            snapshot, mock.sentinel.cloud, {}, frozenset()))
        reader.windows = mock.Mock(return_value=mock.sentinel.windows)
        reader.candidates = mock.Mock(return_value=mock.sentinel.cands)
        found, cands = reader.maintenance_snapshot(
            mock.sentinel.context, ['asked', 'twice', 'q2'])
        self.assertIs(mock.sentinel.cands, cands)
        reader.candidates.assert_called_once_with(mock.sentinel.context,
                                                  mock.sentinel.cloud)
        self.assertEqual(snapshot, found)
        call = reader.read.call_args
        self.assertEqual((mock.sentinel.context, mock.sentinel.windows),
                         (call.args[0], call.args[2]))
        self.assertEqual(
            {'all_instances': False,
             'draining': {'m1', 'twice', 'asked', 'q2'},
             'power_rows': reader.store.power_hosts.return_value,
             'queued': frozenset({'q1'})},
            call.kwargs)
