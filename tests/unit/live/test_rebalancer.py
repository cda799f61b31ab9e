"""One rebalance period's decisions around the planner: whether it runs,
what a skipped one records, what starts and what is recommended, a
drain's flow between periods, a dry run and the database prepared at
start.  Nova and the DRS database are stand-ins here;
tests/functional/rebalance runs the whole period."""

import dataclasses
import itertools
import logging
from unittest import mock

import fixtures
import testtools
from nova import objects
from oslo_config import fixture as config_fixture
from oslo_db import exception as db_exc

from nova_drs_scheduler import conf
from nova_drs_scheduler.db import migration
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import maintenance
from nova_drs_scheduler.rebalance import period_plan
from nova_drs_scheduler.rebalance import rebalancer
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import sources
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
                             (sources, 'load')):
            self.useFixture(fixtures.MockPatchObject(module, name))
        self.store = mock.Mock(**{'maintenance_hosts.return_value': {},
                                  'power_hosts.return_value': {},
                                  'relief_due.return_value': [],
                                  'relief_checks.return_value': []})
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

    def test_maintenance_standby_or_power_management_run_it_while_off(self):
        self.config(automation='off', group='drs')
        # As read from nova.conf: equal to the literal, not identical.
        for in_maintenance, power, level, skipped in (
                ({}, {}, ''.join(['of', 'f']), 'automation is off'),
                ({'m1': {'state': 'draining'}}, {}, 'off', None),
                ({}, {'s1': {'state': model.STANDBY}}, 'off', None),
                ({}, {}, 'manual', None),
                # A queue alone drains nothing: exit starts its first.
                ({'q1': QUEUED}, {}, 'off', 'automation is off')):
            self.config(power_management=level, group='drs')
            self.store.maintenance_hosts.return_value = in_maintenance
            self.store.power_hosts.return_value = power
            self.assertEqual(skipped,
                             self.period.run(None)['skipped'])

    def test_an_unreadable_drs_database_leaves_it_off(self):
        self.config(automation='off', group='drs')
        self.store.maintenance_hosts.side_effect = db_exc.DBError('gone')
        self.assertEqual('automation is off',
                         self.period.run(None)['skipped'])
        self.assertIn('DRS cannot read the DRS database: gone',
                      self.log.output)

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
        self.period.outcomes.following = True
        self.period.leader.check.return_value = (False, 'sched-2 leads')
        rec = self.period.run(mock.sentinel.context)
        self.period.leader.check.assert_called_once_with(
            mock.sentinel.context)
        self.assertEqual('sched-2 leads', rec['skipped'])
        self.assertFalse(self.period.outcomes.following)
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
#: A host in maintenance as ``Store.maintenance_hosts`` gives it.
DRAINING = {'state': 'draining', 'queue_position': None}
QUEUED = {'state': 'queued', 'queue_position': 1}


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
        self.period.reader.windows = mock.Mock()
        self.period.outcomes.executor.poll.return_value = []
        self.period.outcomes.executor.start.side_effect = (
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

        def plan(reader, context, config, rec, windows, acting, draining,
                 power_rows, queued=frozenset(), checking=frozenset()):
            self.assertTrue(acting)
            rec['moves'] = [dict(m, outcome={'status': 'planned'}) for m in (
                {'instance': p.instance, 'source': p.source,
                 'destination': p.destination} for p in self.planned)]
            rec['hosts'] = [{'host': 'h1', 'violated': True,
                             'reason': 'hot'}]
            return period_plan.Period(
                mock.Mock(moves=self.planned), cloud, self.levels,
                self.approved, EMPTY, mock.sentinel.candidates)
        self.useFixture(fixtures.MockPatchObject(period_plan, 'plan', plan))
        # One log of the store's and executor's calls, in order.
        self.calls = mock.Mock()
        self.calls.attach_mock(self.period.store, 'store')
        self.calls.attach_mock(self.period.outcomes.executor, 'executor')

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
            self.period.outcomes.executor.start.call_args_list)
        self.period.telemetry.moves.assert_any_call('planned', 2)

    def test_a_drain_starts_at_any_level_a_leveling_move_waits(self):
        # h2 is manual.  The goal as read back: equal, not identical.
        drain = ''.join(['dra', 'in'])
        for goal, status in ((drain, 'started'),
                             (model.LEVEL, 'recommended')):
            self.planned = [dataclasses.replace(move('i2', 'h2'), goal=goal)]
            self.assertEqual(status,
                             self.outcomes(self.lead())['i2']['status'])

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
            self.period.reader.windows.return_value.export.return_value,
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
                         self.period.outcomes.executor.poll.call_args_list)

    def test_a_queued_host_is_marked_neither_drained_nor_reported(self):
        self.store.maintenance_hosts.return_value = {'m1': DRAINING,
                                                     'q1': QUEUED}
        planned = mock.Mock(side_effect=period_plan.plan)
        self.useFixture(fixtures.MockPatchObject(period_plan, 'plan',
                                                 planned))
        report = self.useFixture(fixtures.MockPatchObject(
            maintenance, 'report_drains')).mock
        self.period.power = mock.Mock()
        self.lead()
        self.assertEqual(({'m1'}, frozenset({'q1'})), (
            planned.call_args.kwargs['draining'],
            planned.call_args.kwargs['queued']))
        # Power management drains only the hosts in maintenance.
        self.assertEqual({'m1': DRAINING},
                         self.period.power.run.call_args.args[3])
        self.assertEqual({'m1': DRAINING}, report.call_args.args[5])

    def test_unfinished_moves_adopted_once_on_leading(self):
        self.lead()
        self.lead()
        self.period.store.unfinished.assert_called_once_with()
        self.assertTrue(self.period.outcomes.following)


class DryRunTest(PeriodTestCase):

    def test_what_a_period_would_do_nothing_acted_on(self):
        cloud = mock.Mock(instances={
            'i1': mock.Mock(host='h1', display_name='web'),
            'i2': mock.Mock(host='h2', display_name=None)})
        planned = [move('i1')]
        self.store.maintenance_hosts.return_value = {'m1': DRAINING,
                                                     'q1': QUEUED}

        def plan(reader, context, config, rec, windows, acting, draining,
                 power_rows, queued=frozenset()):
            self.assertFalse(acting)
            self.assertEqual(({'m1'}, frozenset({'q1'})), (draining, queued))
            rec['moves'] = [{'instance': 'i1',
                             'outcome': {'status': 'planned'}}]
            return period_plan.Period(mock.Mock(moves=planned), cloud, {},
                                     [], EMPTY, mock.sentinel.candidates)
        self.useFixture(fixtures.MockPatchObject(period_plan, 'plan', plan))
        self.period.reader.windows = mock.Mock()
        rec = self.period.dry_run(None)
        self.assertEqual('dry-run', rec['automation'])
        self.assertEqual('dry-run', rec['moves'][0]['outcome']['status'])
        self.assertEqual({'i1': 'h1', 'i2': 'h2'}, rec['instance_hosts'])
        self.assertEqual({'i1': 'web', 'i2': ''}, rec['instance_names'])
        self.period.outcomes.executor.start.assert_not_called()
        self.period.store.add.assert_not_called()


class FlowTest(PeriodTestCase):
    """Between periods, a drain's next moves start once a move ended."""

    def setUp(self):
        super().setUp()
        self.period.outcomes.following = True
        self.period.outcomes.executor.poll.return_value = [
            ('r0', 'i0', {'status': 'completed'})]
        self.store.maintenance_hosts.return_value = {'h1': DRAINING}
        self.cloud = mock.Mock(instances={'i1': mock.Mock(cell='c1')})
        self.planned = [move('i1')]
        self.seen = []

        def plan(reader, context, config, rec, windows, acting, draining,
                 power_rows, goals, queued=frozenset()):
            self.seen.append((acting, draining, goals))
            self.queued = queued
            rec['moves'] = [{'instance': m.instance, 'source': m.source,
                             'destination': m.destination,
                             'outcome': {'status': 'planned'}}
                            for m in self.planned]
            return period_plan.Period(mock.Mock(moves=self.planned, drains=()),
                                     self.cloud, {}, [], EMPTY, None)
        self.useFixture(fixtures.MockPatchObject(period_plan, 'plan', plan))
        self.period.reader.windows = mock.Mock()
        self.period.outcomes.executor.start.return_value = {
            'status': 'started'}

    def test_an_ended_move_and_a_drain_plan_the_drains_alone(self):
        self.period.outcomes.executor.poll.side_effect = itertools.chain(
            [[('r0', 'i0', {'status': 'completed'})]], itertools.repeat([]))
        rec = self.period.flow(mock.sentinel.context)
        self.assertEqual([(True, {'h1'}, (model.DRAIN,))], self.seen)
        self.assertEqual(rebalancer.FLOW, rec['trigger'])
        self.period.leader.check.assert_called_once_with(
            mock.sentinel.context)
        # Stored before it starts, then started.
        self.store.add.assert_called_once_with(rec)
        self.period.outcomes.executor.start.assert_called_once_with(
            rec['id'], self.planned[0], 'c1')
        # Planned with every end so far: the next check waits for another.
        self.assertIsNone(self.period.flow(mock.sentinel.context))
        self.assertEqual(1, len(self.seen))

    def test_a_flow_move_is_stored_as_starting_before_it_starts(self):
        # A leader that dies between the store and the start leaves a
        # move its successor adopts, not one planned and forgotten.
        stored = []
        self.store.add.side_effect = lambda rec: stored.append(
            [m['outcome']['status'] for m in rec['moves']])
        self.period.flow(mock.sentinel.context)
        self.assertEqual([['starting']], stored)

    def test_a_host_entering_standby_drains_too(self):
        self.report = self.useFixture(fixtures.MockPatchObject(
            maintenance, 'report_drains')).mock
        self.store.maintenance_hosts.return_value = {}
        self.store.power_hosts.return_value = {
            'h2': {'state': model.ENTERING}}
        self.assertIsNotNone(self.period.flow(None))
        self.assertEqual([(True, set(), (model.DRAIN,))], self.seen)
        # Only maintenance is reported there; standby follows its own.
        self.report.assert_not_called()

    def test_a_queue_alone_is_no_drain(self):
        self.store.maintenance_hosts.return_value = {'q1': QUEUED}
        self.assertIsNone(self.period.flow(None))
        self.assertEqual([], self.seen)
        self.store.maintenance_hosts.return_value = {'h1': DRAINING,
                                                     'q1': QUEUED}
        self.period.flow(None)
        self.assertEqual([(True, {'h1'}, (model.DRAIN,))], self.seen)
        self.assertEqual(frozenset({'q1'}), self.queued)

    def test_drains_in_maintenance_are_reported(self):
        self.report = self.useFixture(fixtures.MockPatchObject(
            maintenance, 'report_drains')).mock
        rec = self.period.flow(None)
        self.report.assert_called_once_with(
            self.store, self.period.telemetry, rec, mock.ANY, self.cloud,
            {'h1': DRAINING})
        self.assertEqual('started', rec['moves'][0]['outcome']['status'])

    def test_nothing_without_an_ended_move_a_drain_or_the_lead(self):
        self.period.outcomes.executor.poll.return_value = []
        self.assertIsNone(self.period.flow(None))
        self.period.outcomes.executor.poll.return_value = [
            ('r0', 'i0', {'status': 'completed'})]
        self.store.maintenance_hosts.return_value = {}
        self.assertIsNone(self.period.flow(None))
        self.store.maintenance_hosts.return_value = {'h1': DRAINING}
        self.period.leader.check.return_value = (False, 'sched-2 leads')
        self.assertIsNone(self.period.flow(None))
        self.assertFalse(self.period.outcomes.following)
        self.assertIsNone(self.period.flow(None))
        self.assertEqual([], self.seen)
        self.period.outcomes.executor.start.assert_not_called()

    def test_a_step_with_nothing_to_move_stores_only_a_drain_report(self):
        self.planned = []
        self.report = self.useFixture(fixtures.MockPatchObject(
            maintenance, 'report_drains')).mock
        # Its report names the record: stored.
        rec = self.period.flow(None)
        self.assertEqual([], rec['moves'])
        self.store.add.assert_called_once_with(rec)
        # Standby alone: nothing reported, nothing stored.
        self.store.add.reset_mock()
        self.store.maintenance_hosts.return_value = {}
        self.store.power_hosts.return_value = {
            'h2': {'state': model.ENTERING}}
        self.period.outcomes.executor.poll.return_value = [
            ('r1', 'i1', {'status': 'completed'})]
        self.assertEqual([], self.period.flow(None)['moves'])
        self.store.add.assert_not_called()

    def test_unreadable_data_skips_the_step(self):
        def fail(*args, **kwargs):
            raise db_exc.DBError('gone')
        self.useFixture(fixtures.MockPatchObject(period_plan, 'plan', fail))
        self.assertIsNone(self.period.flow(None))
        self.assertIn('DRS drain flow step skipped: gone', self.log.output)
        self.period.outcomes.executor.start.assert_not_called()


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
