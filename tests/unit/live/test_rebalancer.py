"""One rebalance period's decisions around the planner: whether it runs,
what a skipped one records, what starts, what is recommended, and how
moves' outcomes end their recommendations.  Nova and the DRS database are
stand-ins here; tests/functional/rebalance runs the whole period."""

import datetime
import itertools
import json
import logging
from unittest import mock

import fixtures
import testtools
from nova import objects
from oslo_config import fixture as config_fixture
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler import conf
from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning.goals import level
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import rebalancer
from nova_drs_scheduler.rebalance import recommendations
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance.sources import base as sources_base


def loaded(text):
    """``text`` as read from a file or a database: an equal string, not
    the constant itself."""
    return ''.join(list(text))


class PeriodTestCase(testtools.TestCase):
    """A new Rebalancer whose leader, store, executor, telemetry and
    metric source are mocks; ``self.config`` sets options."""

    def setUp(self):
        super().setUp()
        self.config = self.useFixture(
            config_fixture.Config(conf.CONF)).config
        self.config(automation='automatic', group='drs')
        for module, name in ((executor, 'Executor'),
                             (rebalancer.telemetry, 'Telemetry'),
                             (rebalancer.sources, 'load')):
            self.useFixture(fixtures.MockPatchObject(module, name))
        self.store = mock.Mock(**{'maintenance_hosts.return_value': {},
                                  'power_hosts.return_value': {},
                                  'relief_due.return_value': []})
        self.period = rebalancer.Rebalancer(
            mock.sentinel.host_manager, mock.sentinel.placement,
            mock.sentinel.servicegroup,
            leader=mock.Mock(**{'check.return_value': (True, '')}),
            store=self.store)
        self.assertIs(self.store, self.period.store)
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.DEBUG))


class RunTest(PeriodTestCase):

    def setUp(self):
        super().setUp()
        self.period._lead = mock.Mock()
        self.aggregates = self.useFixture(fixtures.MockPatchObject(
            objects.AggregateList, 'get_all', return_value=[])).mock

    def test_automation_off_skips_without_asking_the_leader(self):
        self.config(automation=loaded('off'), group='drs')
        self.config(host='sched-1')
        rec = self.period.run(mock.sentinel.context)
        self.assertEqual(('automation is off', 'sched-1', 'off'),
                         (rec['skipped'], rec['scheduler'],
                          rec['automation']))
        self.period.telemetry.skipped.assert_called_once_with(
            'automation_off')
        self.period.leader.check.assert_not_called()
        self.period._lead.assert_not_called()
        self.aggregates.assert_called_once_with(mock.sentinel.context)

    def test_an_aggregate_turns_it_on_while_automation_is_off(self):
        self.config(automation='off', group='drs')
        self.aggregates.return_value = [objects.Aggregate(
            metadata={'drs_automation': 'manual'})]
        rec = self.period.run(mock.sentinel.context)
        self.assertIsNone(rec['skipped'])
        self.period._lead.assert_called_once_with(mock.sentinel.context, rec)

    def test_unreadable_aggregates_leave_it_off(self):
        self.config(automation='off', group='drs')
        self.aggregates.side_effect = db_exc.DBError('gone')
        rec = self.period.run(None)
        self.assertEqual('automation is off', rec['skipped'])
        self.assertIn('DRS cannot read aggregates: gone', self.log.output)

    def test_automation_on_does_not_read_aggregates(self):
        self.period.run(None)
        self.aggregates.assert_not_called()

    def test_not_leader_skips_and_adopts_again_once_leading(self):
        self.period._leading = True
        self.period.leader.check.return_value = (False, 'sched-2 leads')
        rec = self.period.run(mock.sentinel.context)
        self.period.leader.check.assert_called_once_with(
            mock.sentinel.context)
        self.assertEqual('sched-2 leads', rec['skipped'])
        self.assertFalse(self.period._leading)
        self.period.telemetry.leader.assert_called_once_with(False)
        self.period.telemetry.skipped.assert_called_once_with('not_leader')
        self.period._lead.assert_not_called()

    def test_leader_leads_the_period(self):
        clock = self.useFixture(fixtures.MockPatchObject(
            rebalancer, 'time')).mock
        clock.monotonic.side_effect = [100.0, 250.5]
        rec = self.period.run(mock.sentinel.context)
        self.assertIsNone(rec['skipped'])
        self.period.telemetry.leader.assert_called_once_with(True)
        self.period._lead.assert_called_once_with(mock.sentinel.context, rec)
        self.period.telemetry.ran.assert_called_once_with(150.5)
        self.period.telemetry.skipped.assert_not_called()
        self.period.store.add.assert_not_called()

    def test_unreadable_data_skips_the_period_and_keeps_it(self):
        for error, reason in (
                (sources_base.MetricsUnavailable('no metrics'), 'metrics'),
                (db_exc.DBError('no database'), 'database'),
                (candidates.PlacementUnavailableError('no placement'),
                 'placement')):
            self.period.telemetry.reset_mock()
            self.period.store.reset_mock()

            def lead(context, rec, error=error):
                rec['hosts'].append({'host': 'h1'})
                raise error
            self.period._lead = lead
            rec = self.period.run(None)
            self.assertEqual(f'period skipped: {error}', rec['skipped'])
            self.period.telemetry.skipped.assert_called_once_with(reason)
            self.period.telemetry.ran.assert_not_called()
            self.period.store.add.assert_called_once_with(
                dict(rec, hosts=[], moves=[]))
            self.assertIn('DRS rebalance period skipped, no move made: '
                          f'{error}', self.log.output)

    def test_a_skipped_period_the_store_refuses_is_not_kept(self):
        self.period._lead.side_effect = db_exc.DBError('no database')
        self.period.store.add.side_effect = db_exc.DBError('still none')
        rec = self.period.run(None)
        self.assertEqual('period skipped: no database', rec['skipped'])
        self.assertIn('Skipped period not stored: still none',
                      self.log.output)

    def test_other_errors_are_not_a_skipped_period(self):
        self.period._lead.side_effect = RuntimeError('bug')
        self.assertRaises(RuntimeError, self.period.run, None)
        self.period.store.add.assert_not_called()


#: A period's snapshot where power management has nothing to do.
EMPTY = model.Snapshot({}, (), model.PlannerConfig())


def move(instance, source='h1', destination='h3'):
    return model.Move(instance=instance, source=source,
                      destination=destination, reason='cpu',
                      expected={})


class Instance:
    def __init__(self, cell):
        self.cell = cell


class LeadTest(PeriodTestCase):
    """What a leading period starts, recommends and stores, in order."""

    def setUp(self):
        super().setUp()
        self.config(history_size=5, history_max_age=60,
                    migration_timeout=30, group='drs')
        self.period.windows = mock.Mock()
        self.period.executor.poll.return_value = []
        self.period.executor.start.side_effect = (
            lambda record_id, move, cell: {'status': 'started',
                                           'cell': cell})
        self.period.store.recommend.return_value = 7
        self.period.store.unfinished.return_value = []
        self.planned = [move('i1', 'h1'), move('i2', 'h2')]
        self.approved = [(5, move('i0', 'h0'))]
        # As parsed from aggregate metadata.
        self.levels = {'h1': loaded('automatic'), 'h2': loaded('manual')}
        cloud = mock.Mock(instances={
            name: Instance(f'cell-{name}') for name in ('i0', 'i1', 'i2')})

        def plan(context, config, rec, windows, acting, draining,
                 power_rows):
            self.assertTrue(acting)
            rec['moves'] = [dict(m, outcome={'status': 'planned'}) for m in (
                {'instance': p.instance, 'source': p.source,
                 'destination': p.destination} for p in self.planned)]
            rec['hosts'] = [{'host': 'h1', 'violated': True,
                             'reason': 'hot'}]
            return rebalancer.Period(
                mock.Mock(moves=self.planned), cloud, self.levels,
                self.approved, EMPTY, mock.sentinel.candidates)
        self.period._plan = plan
        # One log of the store's and executor's calls, in order.
        self.calls = mock.Mock()
        self.calls.attach_mock(self.period.store, 'store')
        self.calls.attach_mock(self.period.executor, 'executor')

    def lead(self):
        rec = record.new_record('automatic', model.PlannerConfig())
        self.period._lead(mock.sentinel.context, rec)
        return rec

    def outcomes(self, rec):
        return {m['instance']: {k: v for k, v in m['outcome'].items()
                                if k != 'time'} for m in rec['moves']}

    def test_starts_approved_and_automatic_moves_recommends_the_rest(self):
        rec = self.lead()
        self.assertEqual(
            {'i0': {'status': 'started', 'cell': 'cell-i0',
                    'recommendation': 5},
             'i1': {'status': 'started', 'cell': 'cell-i1'},
             'i2': {'status': 'recommended', 'recommendation': 7}},
            self.outcomes(rec))
        self.period.store.recommend.assert_called_once_with(
            rec['id'], record.move_of(rec, 'i2'))
        self.assertEqual(
            [mock.call(rec['id'], self.approved[0][1], 'cell-i0'),
             mock.call(rec['id'], self.planned[0], 'cell-i1')],
            self.period.executor.start.call_args_list)
        self.period.telemetry.moves.assert_any_call('planned', 2)

    def test_a_level_not_given_is_the_option(self):
        self.levels.clear()
        for option, status in (('manual', 'recommended'),
                               ('automatic', 'started')):
            self.config(automation=loaded(option), group='drs')
            self.assertEqual(status,
                             self.outcomes(self.lead())['i1']['status'])

    def test_stored_before_any_start_then_purged(self):
        rec = self.lead()
        names = [name for name, _args, _kwargs in self.calls.mock_calls
                 if name.split('.')[-1] in ('add', 'start', 'purge',
                                            'save_windows')]
        self.assertEqual(['store.save_windows', 'store.add',
                          'executor.start', 'executor.start',
                          'store.purge'], names)
        self.period.store.purge.assert_called_once_with(5, 60)
        stored = self.period.store.add.call_args.args[0]
        self.assertIs(rec, stored)
        self.period.store.save_windows.assert_called_once_with(
            self.period.windows.return_value.export.return_value,
            {'h1': {'host': 'h1', 'violated': True, 'reason': 'hot'}})

    def test_each_start_stored_as_an_outcome(self):
        rec = self.lead()
        self.assertEqual(
            [mock.call(rec['id'], 'i0', {'status': 'started',
                                         'cell': 'cell-i0',
                                         'recommendation': 5}),
             mock.call(rec['id'], 'i1', {'status': 'started',
                                         'cell': 'cell-i1'})],
            self.period.store.set_outcome.call_args_list)

    def test_outcomes_collected_before_and_after(self):
        self.lead()
        self.assertEqual([mock.call(30)] * 2,
                         self.period.executor.poll.call_args_list)

    def test_unfinished_moves_adopted_once_on_leading(self):
        self.lead()
        self.lead()
        self.period.store.unfinished.assert_called_once_with()
        self.assertTrue(self.period._leading)


class PlanTest(PeriodTestCase):
    """Around the planner: approved recommendations when acting, the
    late hosts' instances blocked, the record's plan and attention."""

    def setUp(self):
        super().setUp()
        self.config(instance_metrics_timeout=7, group='drs')
        self.snapshot = model.Snapshot(
            hosts={'h1': host('h1')},
            instances=[model.InstanceSnapshot('i1', 'h1', 2, 512, 4.5)],
            config=model.PlannerConfig())
        self.cloud = mock.Mock(instances={})
        self.period._snapshot = mock.Mock(return_value=(
            self.snapshot, self.cloud, mock.sentinel.levels,
            frozenset({'h1'})))
        self.patched = {}
        for module, name in ((recommendations, 'revalidate'),
                             (recommendations, 'approved'),
                             (recommendations, 'reserve'),
                             (planner, 'plan'), (record, 'add_plan'),
                             (record, 'add_not_relieved'),
                             (live, 'needs_attention'),
                             (candidates, 'LiveCandidates')):
            self.patched[name] = self.useFixture(
                fixtures.MockPatchObject(module, name)).mock
        self.approved = [(5, move('i0')), (6, move('i9'))]
        self.patched['approved'].return_value = self.approved
        self.patched['reserve'].return_value = self.snapshot

    def plan(self, acting):
        rec = {}
        result = self.period._plan(mock.sentinel.context,
                                   mock.sentinel.config, rec,
                                   mock.sentinel.windows, acting,
                                   set(), {})
        return rec, result

    def planned_on(self):
        snapshot, cands, goals = self.patched['plan'].call_args.args
        self.assertIs(self.patched['LiveCandidates'].return_value, cands)
        self.assertEqual(planner.GOALS, goals)
        return snapshot

    def test_a_drain_flow_reads_no_more_and_approves_nothing(self):
        rec = {}
        self.period._plan(mock.sentinel.context, mock.sentinel.config, rec,
                          mock.sentinel.windows, True, set(), {},
                          goals=(model.DRAIN,))
        self.assertFalse(
            self.period._snapshot.call_args.kwargs['all_instances'])
        self.patched['revalidate'].assert_not_called()
        self.patched['approved'].assert_not_called()
        self.assertEqual((model.DRAIN,),
                         self.patched['plan'].call_args.args[2])

    def test_acting_starts_approved_recommendations(self):
        rec, result = self.plan(acting=True)
        self.period._snapshot.assert_called_once_with(
            mock.sentinel.context, mock.sentinel.config,
            mock.sentinel.windows, all_instances=False, draining=set(),
            power_rows={})
        self.patched['revalidate'].assert_called_once_with(
            self.store, self.snapshot)
        self.assertEqual(
            [mock.call(5, db_store.STARTED, (db_store.APPROVED,)),
             mock.call(6, db_store.STARTED, (db_store.APPROVED,))],
            self.store.transition.call_args_list)
        self.patched['reserve'].assert_called_once_with(self.snapshot,
                                                        self.approved)
        self.assertEqual(
            (self.patched['plan'].return_value, self.cloud,
             mock.sentinel.levels, self.approved), result[:4])
        self.assertEqual([record.NOT_MEASURED_BLOCK],
                         [i.blocked for i in self.planned_on().instances])
        self.patched['add_not_relieved'].assert_called_once_with(
            rec, self.patched['plan'].return_value, frozenset({'h1'}), 7)
        self.assertEqual(self.patched['needs_attention'].return_value,
                         rec['attention'])

    def test_the_host_managers_freeze_runs_before_planning(self):
        calls = mock.Mock()
        self.period.host_manager = calls.host_manager
        calls.attach_mock(self.patched['plan'], 'plan')
        self.plan(acting=True)
        self.assertEqual(['host_manager.freeze', 'plan'],
                         [name for name, _args, _kwargs in calls.mock_calls])

    def test_a_dry_run_reads_every_instance_and_no_recommendation(self):
        _rec, result = self.plan(acting=False)
        self.period._snapshot.assert_called_once_with(
            mock.sentinel.context, mock.sentinel.config,
            mock.sentinel.windows, all_instances=True, draining=set(),
            power_rows={})
        for name in ('revalidate', 'approved', 'reserve'):
            self.patched[name].assert_not_called()
        self.store.transition.assert_not_called()
        self.assertEqual([], result[3])


class SnapshotTest(PeriodTestCase):
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
            rebalancer, 'time')).mock.time.return_value = 1234.0

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
        self.period.host_manager = mock.Mock(enabled_cells=['cell1'])
        self.period.servicegroup_api = mock.sentinel.servicegroup
        self.period.source = mock.Mock(**{
            'instance_loads_within.return_value': sources_base.Measured(
                {'i1': 1.5}, frozenset({'h1'}), {'i1': 0.25})})
        self.period._named_instances = mock.Mock(return_value={'i9'})
        self.windows = mock.Mock(**{'update.return_value': {
            'h1': mock.Mock(counter=2), 'h2': mock.Mock(counter=0),
            'h3': mock.Mock(counter=0)}})
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0)

    def snapshot(self, all_instances=False):
        return self.period._snapshot(mock.sentinel.context,
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
        self.period.source.host_samples_of.assert_called_once_with(
            mock.sentinel.context, {'h1': self.rows['h1'],
                                    'h2': self.rows['h2']})
        self.windows.update.assert_called_once_with(
            1234.0, self.period.source.host_samples_of.return_value,
            {'h1': (80, 90.0), 'h2': (70, 90.0), 'h3': (70, 90.0)})
        # Hosts being drained start afresh (none here).
        self.windows.restart.assert_called_once_with(frozenset())
        self.read_instances.assert_called_once_with(
            mock.sentinel.context, self.cloud, {'h1'}, {'i9'})
        self.period.source.instance_loads_within.assert_called_once_with(
            mock.sentinel.context, [self.instances['i1']], 7)
        settings = self.build.call_args.args[1]
        self.assertEqual({'h1': False, 'h2': True, 'h3': False},
                         {name: s.automation_off
                          for name, s in settings.items()})
        self.build.assert_called_once_with(
            self.cloud, settings, self.windows.update.return_value,
            {'i1': 1.5}, self.planner_config, 100, 400, 200, set(),
            self.period.trends, self.period.store.outcomes.return_value,
            {'i1': 0.25})
        # The moves Nova refused at start within the quarantine time.
        self.period.store.outcomes.assert_called_once_with(
            executor.REFUSED, self.NOW - datetime.timedelta(seconds=400))
        self.assertEqual((self.build.return_value, self.cloud,
                          frozenset({'h1'})), (snapshot, cloud, late))
        # What was measured feeds the instances' trends.
        self.assertEqual(1.5, self.period.trends['i1'][0])

    def host_snapshots(self):
        """``live.host_snapshot`` mocked: each host at 50 %."""
        names = {id(status): name for name, status
                 in self.windows.update.return_value.items()}
        return self.useFixture(fixtures.MockPatchObject(
            live, 'host_snapshot', side_effect=lambda rows, status, *_:
            model.HostSnapshot(names[id(status)], 10, 1024, 50.0,
                               None))).mock

    def test_leveling_sources_judged_with_the_power_states(self):
        # A pool with a host in standby levels (doc/power.md): leveling
        # sees the stored power states.
        self.planner_config = model.PlannerConfig(cpu_threshold=80,
                                                  level_gap=0.5)
        self.host_snapshots()
        sources = self.useFixture(fixtures.MockPatchObject(
            level, 'leveling_sources', return_value=set())).mock
        self.period._snapshot(
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
        self.period.source.instance_loads_within.assert_called_once_with(
            mock.sentinel.context, [self.instances['i1'],
                                    self.instances['i3']], 7)

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


class DryRunTest(PeriodTestCase):

    def test_what_a_period_would_do_nothing_acted_on(self):
        cloud = mock.Mock(instances={
            'i1': mock.Mock(host='h1', display_name='web'),
            'i2': mock.Mock(host='h2', display_name=None)})
        planned = [move('i1')]

        def plan(context, config, rec, windows, acting, draining,
                 power_rows):
            self.assertFalse(acting)
            rec['moves'] = [{'instance': 'i1',
                             'outcome': {'status': 'planned'}}]
            return rebalancer.Period(mock.Mock(moves=planned), cloud, {},
                                     [], EMPTY, mock.sentinel.candidates)
        self.period._plan = plan
        self.period.windows = mock.Mock()
        rec = self.period.dry_run(None)
        self.assertEqual('dry-run', rec['automation'])
        self.assertEqual('dry-run', rec['moves'][0]['outcome']['status'])
        self.assertEqual({'i1': 'h1', 'i2': 'h2'}, rec['instance_hosts'])
        self.assertEqual({'i1': 'web', 'i2': ''}, rec['instance_names'])
        self.period.executor.start.assert_not_called()
        self.period.store.add.assert_not_called()


class OutcomeTest(PeriodTestCase):

    def test_an_ended_move_ends_its_recommendation(self):
        for status, state in (('completed', db_store.COMPLETED),
                              ('failed', db_store.FAILED),
                              ('timeout', db_store.FAILED),
                              ('not_started', db_store.FAILED)):
            self.period.store.reset_mock()
            self.period.telemetry.reset_mock()
            outcome = {'status': loaded(status), 'error': 'why'}
            self.period._outcome('r1', 'i1', outcome)
            self.period.store.set_outcome.assert_called_once_with(
                'r1', 'i1', outcome)
            self.period.telemetry.moves.assert_called_once_with(status, 1)
            self.period.store.close_started.assert_called_once_with(
                'i1', state, 'why')

    def test_a_started_move_keeps_it_open(self):
        self.period._outcome('r1', 'i1', {'status': loaded('started')})
        self.period.store.close_started.assert_not_called()
        self.period.telemetry.moves.assert_called_once_with('started', 1)

    def test_collected_outcomes_are_stored(self):
        self.config(migration_timeout=30, group='drs')
        self.period.executor.poll.return_value = [
            ('r1', 'i1', {'status': 'completed'})]
        self.period.collect_outcomes()
        self.period.executor.poll.assert_called_once_with(30)
        self.period.store.set_outcome.assert_called_once_with(
            'r1', 'i1', {'status': 'completed'})


class FlowTest(PeriodTestCase):
    """Between periods, a drain's next moves start once a move ended."""

    def setUp(self):
        super().setUp()
        self.period._leading = True
        self.period.executor.poll.return_value = [
            ('r0', 'i0', {'status': 'completed'})]
        self.store.maintenance_hosts.return_value = {'h1': {}}
        self.cloud = mock.Mock(instances={'i1': mock.Mock(cell='c1')})
        self.planned = [move('i1')]
        self.seen = []

        def plan(context, config, rec, windows, acting, draining,
                 power_rows, goals):
            self.seen.append((acting, draining, goals))
            rec['moves'] = [{'instance': m.instance, 'source': m.source,
                             'destination': m.destination,
                             'outcome': {'status': 'planned'}}
                            for m in self.planned]
            return rebalancer.Period(mock.Mock(moves=self.planned, drains=()),
                                     self.cloud, {}, [], EMPTY, None)
        self.period._plan = plan
        self.period.windows = mock.Mock()
        self.period.executor.start.return_value = {'status': 'started'}

    def test_an_ended_move_and_a_drain_plan_the_drains_alone(self):
        self.period.executor.poll.side_effect = itertools.chain(
            [[('r0', 'i0', {'status': 'completed'})]], itertools.repeat([]))
        rec = self.period.flow(mock.sentinel.context)
        self.assertEqual([(True, {'h1'}, (model.DRAIN,))], self.seen)
        self.assertEqual(rebalancer.FLOW, rec['trigger'])
        self.period.leader.check.assert_called_once_with(
            mock.sentinel.context)
        # Stored before it starts, then started.
        self.store.add.assert_called_once_with(rec)
        self.period.executor.start.assert_called_once_with(
            rec['id'], self.planned[0], 'c1')
        # Planned with every end so far: the next check waits for another.
        self.assertIsNone(self.period.flow(mock.sentinel.context))
        self.assertEqual(1, len(self.seen))

    def test_a_host_entering_standby_drains_too(self):
        self.period._report_drains = mock.Mock()
        self.store.maintenance_hosts.return_value = {}
        self.store.power_hosts.return_value = {
            'h2': {'state': model.ENTERING}}
        self.assertIsNotNone(self.period.flow(None))
        self.assertEqual([(True, set(), (model.DRAIN,))], self.seen)
        # Only maintenance is reported there; standby follows its own.
        self.period._report_drains.assert_not_called()

    def test_drains_in_maintenance_are_reported(self):
        self.period._report_drains = mock.Mock()
        rec = self.period.flow(None)
        self.period._report_drains.assert_called_once_with(
            rec, mock.ANY, self.cloud, {'h1': {}})
        self.assertEqual('started', rec['moves'][0]['outcome']['status'])

    def test_nothing_without_an_ended_move_a_drain_or_the_lead(self):
        self.period.executor.poll.return_value = []
        self.assertIsNone(self.period.flow(None))
        self.period.executor.poll.return_value = [
            ('r0', 'i0', {'status': 'completed'})]
        self.store.maintenance_hosts.return_value = {}
        self.assertIsNone(self.period.flow(None))
        self.store.maintenance_hosts.return_value = {'h1': {}}
        self.period.leader.check.return_value = (False, 'sched-2 leads')
        self.assertIsNone(self.period.flow(None))
        self.assertFalse(self.period._leading)
        self.assertIsNone(self.period.flow(None))
        self.assertEqual([], self.seen)
        self.period.executor.start.assert_not_called()

    def test_a_step_with_nothing_to_move_stores_only_a_drain_report(self):
        self.planned = []
        self.period._report_drains = mock.Mock()
        # Its report names the record: stored.
        rec = self.period.flow(None)
        self.assertEqual([], rec['moves'])
        self.store.add.assert_called_once_with(rec)
        # Standby alone: nothing reported, nothing stored.
        self.store.add.reset_mock()
        self.store.maintenance_hosts.return_value = {}
        self.store.power_hosts.return_value = {
            'h2': {'state': model.ENTERING}}
        self.period.executor.poll.return_value = [
            ('r1', 'i1', {'status': 'completed'})]
        self.assertEqual([], self.period.flow(None)['moves'])
        self.store.add.assert_not_called()

    def test_unreadable_data_skips_the_step(self):
        def fail(*args, **kwargs):
            raise db_exc.DBError('gone')
        self.period._plan = fail
        self.assertIsNone(self.period.flow(None))
        self.assertIn('DRS drain flow step skipped: gone', self.log.output)
        self.period.executor.start.assert_not_called()


class AdoptTest(PeriodTestCase):

    def test_started_moves_followed_the_others_asked_about(self):
        created = [datetime.datetime(2026, 11, 24, hour) for hour in
                   range(4)]
        # Outcomes as the store reads them: from JSON.
        self.period.store.unfinished.return_value = [
            (record_id, instance, json.loads(outcome), at)
            for record_id, instance, outcome, at in (
                ('r1', 'i1', '{"status": "started", "migration": "m1", '
                 '"time": "2026-11-24T10:30:00"}', created[0]),
                ('r2', 'i2', '{"status": "started", "migration": "m2"}',
                 created[1]),
                ('r3', 'i3', '{"status": "starting"}', created[2]),
                ('r4', 'i4', '{"status": "started", "migration": null}',
                 created[3]),
                # Only a started move is followed, whatever else it has.
                ('r5', 'i5', '{"status": "starting", "migration": "m5"}',
                 created[0]))]
        self.period.executor.adopt_starting.return_value = {
            'status': 'not_started'}
        self.period._adopt_unfinished()
        self.assertEqual(
            [mock.call('r1', 'i1', 'm1',
                       datetime.datetime(2026, 11, 24, 10, 30,
                                         tzinfo=datetime.timezone.utc)),
             mock.call('r2', 'i2', 'm2', created[1])],
            self.period.executor.adopt.call_args_list)
        self.assertEqual(
            [mock.call('r3', 'i3', created[2]),
             mock.call('r4', 'i4', created[3]),
             mock.call('r5', 'i5', created[0])],
            self.period.executor.adopt_starting.call_args_list)
        self.assertEqual(
            [mock.call('r3', 'i3', {'status': 'not_started'}),
             mock.call('r4', 'i4', {'status': 'not_started'}),
             mock.call('r5', 'i5', {'status': 'not_started'})],
            self.period.store.set_outcome.call_args_list)


class NamedInstancesTest(PeriodTestCase):

    def test_drs_migrations_and_open_recommendations(self):
        # User ids as read from the database; "ops" sorts after DRS's.
        cloud = mock.Mock(migrations=[
            mock.Mock(instance_uuid='a', user_id=loaded(executor.DRS_USER)),
            mock.Mock(instance_uuid='b', user_id='admin'),
            mock.Mock(instance_uuid='d', user_id='ops')])
        self.period.store.recommendations.return_value = [
            {'instance': 'c'}]
        self.assertEqual({'a', 'c'}, self.period._named_instances(cloud))
        self.period.store.recommendations.assert_called_once_with(
            (db_store.PENDING, db_store.APPROVED))


class PrepareTest(PeriodTestCase):

    def setUp(self):
        super().setUp()
        self.sync = self.useFixture(fixtures.MockPatchObject(
            migration, 'sync')).mock
        self.period.store.engine.dialect.name = loaded('sqlite')
        self.period.store.import_file.return_value = 3

    def test_sqlite_is_created_and_upgraded(self):
        self.period.prepare()
        self.sync.assert_called_once_with(self.period.store.engine)
        self.period.store.check.assert_called_once_with()
        self.period.store.import_file.assert_not_called()

    def test_another_database_is_only_checked(self):
        self.period.store.engine.dialect.name = 'mysql'
        self.period.prepare()
        self.sync.assert_not_called()
        self.period.store.check.assert_called_once_with()

    def test_history_file_imported_once_it_exists(self):
        path = self.useFixture(fixtures.TempDir()).join('history.jsonl')
        self.config(history_file=path, history_size=9, group='drs')
        self.period.prepare()
        self.period.store.import_file.assert_not_called()
        self.assertIn('[drs] history_file is deprecated', self.log.output)
        open(path, 'w').close()
        self.period.prepare()
        self.period.store.import_file.assert_called_once_with(path, 9)
        self.assertIn(f'Imported 3 decision records from {path}',
                      self.log.output)

    def test_an_unusable_database_is_one_clear_error(self):
        for error in (db_exc.DBError('refused'),
                      migration.NotMigratedError('behind'),
                      OSError('read-only')):
            self.period.store.check.side_effect = error
            raised = self.assertRaises(conf.ConfigError,
                                       self.period.prepare)
            self.assertIn(f'is not usable: {error}', str(raised))
            self.assertIn('nova-drs db sync', str(raised))


def host(name):
    return model.HostSnapshot(name=name, vcpus=10, memory_mb=8192,
                              cpu_percent=90, ram_percent=None, counter=1)


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
        result = rebalancer.unmeasured(snapshot, frozenset({'h1'}))
        self.assertEqual(
            [record.NOT_MEASURED_BLOCK, 'cooldown', None],
            [inst.blocked for inst in result.instances])
        self.assertIs(snapshot, rebalancer.unmeasured(snapshot,
                                                      frozenset()))


class LogPeriodTest(testtools.TestCase):

    def test_one_info_line_and_each_verdict_at_debug(self):
        log = self.useFixture(fixtures.FakeLogger(level=logging.DEBUG))
        rec = {'id': 'r1', 'automation': 'automatic', 'hosts': [
            {'host': 'h1', 'reason': 'hot', 'cpu_percent': 95.0,
             'counter': 3, 'violated': True},
            {'host': 'h2', 'reason': 'warm', 'cpu_percent': 85.0,
             'counter': 1, 'violated': False},
            {'host': 'h3', 'reason': 'cool', 'cpu_percent': 0.0,
             'counter': 0, 'violated': False},
            {'host': 'h4', 'reason': 'unmeasured', 'cpu_percent': None,
             'counter': 0, 'violated': False}],
            'moves': [{'instance': 'i1', 'source': 'h1',
                       'destination': 'h3',
                       'outcome': {'status': 'started'}}]}
        rebalancer._log_period(rec)
        rebalancer._log_period({'id': 'r2', 'automation': 'manual',
                                'hosts': [], 'moves': []})
        self.assertEqual(
            ['DRS host h1: hot', 'DRS host h2: warm', 'DRS host h3: cool',
             'DRS host h4: unmeasured',
             'DRS period r1 (automatic): 4 hosts, 3 judged, 2 over, '
             '1 violated (h1); 1 move(s): i1 h1->h3 started',
             'DRS period r2 (manual): 0 hosts, 0 judged, 0 over, '
             '0 violated; 0 move(s)'],
            log.output.splitlines())
