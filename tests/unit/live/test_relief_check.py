"""The leader's relief checks: which moves it checks each period, against
which loads, what it stores and logs, and what it never lets fail the
period.  The DRS database is a stand-in; tests/unit/db/test_relief.py
has the real one, tests/functional/rebalance/test_relief.py the whole
period."""

import datetime
import logging
from unittest import mock

import fixtures
import testtools
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler.db import relief_rows
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import period_plan
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import relief_check
from nova_drs_scheduler.rebalance import telemetry
from tests.unit.live import test_rebalancer

NOW = datetime.datetime(2026, 11, 28, 12, 0, 0)
EXPECTED = {'source_cpu_before': 92.0, 'source_cpu': 70.0,
            'destination_cpu': 45.0, 'instance_cores': 4.0}


def due(instance='i1', source='h1', destination='h2', expected=EXPECTED,
        minutes_ago=15):
    return {'record_id': 'r1', 'instance': instance, 'source': source,
            'destination': destination, 'goal': 'balance',
            'expected': (dict(expected) if isinstance(expected, dict)
                         else expected),
            'completed_at': NOW - datetime.timedelta(minutes=minutes_ago)}


def verdict(host, cpu, threshold=80.0):
    return {'host': host, 'cpu_percent': cpu, 'cpu_threshold': threshold,
            'violated': False, 'reason': ''}


class ReliefResultTest(testtools.TestCase):
    """One due move against this period's verdicts (pure)."""

    def result(self, move, *verdicts, overdue=False, cores=None):
        return relief_check.relief_result(
            move, {v['host']: v for v in verdicts}, overdue, cores)

    def test_checked_with_each_hosts_own_threshold(self):
        self.assertEqual(
            {'status': 'checked', 'source_cpu': 74.0,
             'destination_cpu': 61.0, 'relief_points': 18.0,
             'expected_points': 22.0, 'source_relieved': True,
             'destination_spared': False, 'held': False,
             'source_threshold': 80.0, 'destination_threshold': 60.0,
             'source': 'h1'},
            self.result(due(), verdict('h1', 74.0),
                        verdict('h2', 61.0, threshold=60.0)))

    def test_the_instances_load_says_whether_it_stayed(self):
        # Moved with 4 cores: 2 is half, what stays.
        for cores, stayed in ((2.0, True), (1.999, False), (6.5, True)):
            found = self.result(due(), verdict('h1', 74.0),
                                verdict('h2', 61.0), cores=cores)
            self.assertEqual((cores, stayed), (found['instance_cores'],
                                               found['load_stayed']))
            self.assertEqual(('checked', 'h1'),
                             (found['status'], found['source']))

    def test_without_the_instances_load_nothing_said_of_it(self):
        for move, cores in ((due(), None), (due(expected=dict(
                EXPECTED, instance_cores=None)), 3.0)):
            found = self.result(move, verdict('h1', 74.0),
                                verdict('h2', 61.0), cores=cores)
            self.assertEqual('checked', found['status'])
            self.assertNotIn('load_stayed', found)
            self.assertNotIn('instance_cores', found)

    def test_held_when_source_relieved_and_destination_spared(self):
        found = self.result(due(), verdict('h1', 70.0),
                            verdict('h2', 80.0))
        self.assertEqual((True, True, True), (
            found['source_relieved'], found['destination_spared'],
            found['held']))

    def test_a_plan_without_the_load_before_has_nothing_to_check(self):
        for expected in ({}, {'source_cpu': 70.0}, ['not', 'a', 'mapping']):
            self.assertEqual(
                {'status': 'no expectation'},
                self.result(due(expected=expected), verdict('h1', 70.0),
                            verdict('h2', 40.0)))

    def test_an_unreadable_expectation_is_not_checked(self):
        found = self.result(due(expected={'source_cpu_before': 90.0}),
                            verdict('h1', 70.0), verdict('h2', 40.0))
        self.assertEqual('no expectation', found['status'])
        self.assertIn('source_cpu', found['detail'])

    def test_a_host_without_a_sample_waits_then_is_given_up(self):
        for verdicts in ([verdict('h1', 70.0)],
                         [verdict('h1', 70.0), verdict('h2', None)]):
            self.assertIsNone(self.result(due(), *verdicts))
            self.assertEqual(
                {'status': 'no sample',
                 'detail': 'no CPU sample of h2 since the check was due'},
                self.result(due(), *verdicts, overdue=True))
        self.assertEqual(
            'no CPU sample of h1 and h2 since the check was due',
            self.result(due(), overdue=True)['detail'])

    def test_bad_host_data_is_logged_and_skipped(self):
        logged = self.useFixture(fixtures.FakeLogger(level='WARNING'))
        for bad in (verdict('h2', 'high'), verdict('h2', 40.0, None),
                    {'host': 'h2', 'cpu_percent': 40.0}):
            self.assertIsNone(self.result(due(), verdict('h1', 70.0), bad))
        self.assertEqual(3, logged.output.count(
            'DRS relief check: host h2 has no usable CPU and threshold'))


class CheckReliefTest(test_rebalancer.PeriodTestCase):
    """The period's step: due moves from the store, results into it."""

    def setUp(self):
        super().setUp()
        self.useFixture(utils_fixture.TimeFixture(NOW))
        self.config(relief_check_delay=600, rebalance_interval=60,
                    group='drs')
        self.verdicts = [verdict('h1', 74.0), verdict('h2', 40.0),
                         verdict('h3', None), verdict('h4', 85.0)]

    def check(self, *moves, loads=None):
        self.store.relief_due.return_value = list(moves)
        relief_check.check_due(self.store, self.period.telemetry,
                               self.verdicts, NOW, loads)

    def saved(self):
        return {c.args[1]: c.args[2]
                for c in self.store.save_relief.call_args_list}

    def test_moves_completed_a_delay_before_the_period_are_checked(self):
        self.check(due('i1'), due('i2', source='h2', destination='h4'))
        self.store.relief_due.assert_called_once_with(
            NOW - datetime.timedelta(seconds=600))
        saved = self.saved()
        self.assertEqual((True, False), (saved['i1']['held'],
                                         saved['i2']['held']))
        self.store.save_relief.assert_any_call('r1', 'i1', saved['i1'])
        self.assertEqual(
            [mock.call(True), mock.call(False)],
            self.period.telemetry.relief_checked.call_args_list)
        self.assertIn(
            'DRS relief of move i1 h1->h2 (record r1): source at 74.0% '
            '(threshold 80.0%), 18.0 points bought of 22.0 expected; '
            'destination at 40.0% (threshold 80.0%): expectation held',
            self.log.output)
        self.assertIn('i2 h2->h4 (record r1): source at 40.0%',
                      self.log.output)
        self.assertIn('expectation not held', self.log.output)

    def test_the_loads_measured_say_whether_the_moved_loads_stayed(self):
        # i1 measured, i2 not (gone, no metric, its host late): checked
        # all the same, without it.
        self.check(due('i1'), due('i2', source='h2', destination='h4'),
                   due('i3'), loads={'i1': 3.0, 'i3': 0.5, 'i9': 9.0})
        saved = self.saved()
        self.assertEqual(
            [(3.0, True), (None, None), (0.5, False)],
            [(saved[i].get('instance_cores'), saved[i].get('load_stayed'))
             for i in ('i1', 'i2', 'i3')])
        self.assertEqual(['checked'] * 3,
                         [saved[i]['status'] for i in ('i1', 'i2', 'i3')])
        self.assertIn('expectation held; instance at 3.00 cores of 4.00 '
                      'moved: load stayed', self.log.output)
        self.assertIn('instance at 0.50 cores of 4.00 moved: load did not '
                      'stay', self.log.output)
        line = next(line for line in self.log.output.splitlines()
                    if 'i2 h2->h4' in line)
        self.assertTrue(line.endswith('expectation not held'), line)

    def test_the_instances_measured_are_those_due_by_the_next_period(self):
        self.store.relief_due.return_value = [due('i1'), due('i2')]
        self.assertEqual(frozenset({'i1', 'i2'}),
                         relief_check.checking(self.store, NOW))
        # Due now: completed 600 s before; by the next period, 60 s later.
        self.store.relief_due.assert_called_once_with(
            NOW - datetime.timedelta(seconds=540))

    def test_the_due_moves_unreadable_none_measured(self):
        self.store.relief_due.side_effect = db_exc.DBError('gone')
        self.assertEqual(frozenset(), relief_check.checking(self.store, NOW))
        self.assertIn('DRS relief checks: the moves due are unreadable, '
                      "their instances' loads not measured: gone",
                      self.log.output)

    def test_what_leveling_learns_from_the_last_two_hours_of_checks(self):
        seconds = relief_rows.epoch(NOW)
        self.store.relief_checks.return_value = [
            (seconds - 7000, 'h1', True), (seconds - 60, 'h1', False),
            (seconds - 30, 'h1', True), (seconds - 8000, 'h2', True),
            (seconds - 10, 'h2', None), (seconds - 5, 'h3', False)]
        self.assertEqual({'h1': (2, 3), 'h3': (0, 1)},
                         relief_check.loads_stayed(self.store, NOW))
        # The moves completed up to three delays before the oldest check
        # (when a check gives up).
        since = NOW - datetime.timedelta(hours=2)
        self.store.relief_checks.assert_called_once_with(
            since, since - datetime.timedelta(seconds=1800))

    def test_unreadable_checks_leave_every_host_unknown(self):
        self.store.relief_checks.side_effect = db_exc.DBError('gone')
        self.assertEqual({}, relief_check.loads_stayed(self.store, NOW))
        self.assertIn('DRS cannot read the relief checks, leveling does not '
                      'learn from them this period: gone', self.log.output)

    def test_no_sample_waits_three_delays_then_gives_up(self):
        # 30 minutes: three delays of 10.  Given up at INFO.
        info = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.check(due('i0', destination='h3', minutes_ago=20),
                   due('i1', destination='h3', minutes_ago=30),
                   due('i2', destination='h3', minutes_ago=31),
                   due('i3', destination='h9', minutes_ago=31))
        self.assertEqual(
            {'i2': {'status': 'no sample', 'detail':
                    'no CPU sample of h3 since the check was due'},
             'i3': {'status': 'no sample', 'detail':
                    'no CPU sample of h9 since the check was due'}},
            self.saved())
        self.period.telemetry.relief_checked.assert_not_called()
        self.assertIn('DRS relief of move i2 h1->h3 (record r1) not '
                      'checked: no CPU sample of h3', info.output)

    def test_with_no_delay_three_periods_before_giving_up(self):
        self.config(relief_check_delay=0, group='drs')
        self.check(due('i1', destination='h3', minutes_ago=3),
                   due('i2', destination='h3', minutes_ago=4))
        self.store.relief_due.assert_called_once_with(NOW)
        self.assertEqual(['i2'], list(self.saved()))

    def test_moves_without_an_expectation_are_set_aside_quietly(self):
        self.check(due('i1', expected={}))
        self.assertEqual({'i1': {'status': 'no expectation'}}, self.saved())
        self.assertIn('not checked: the plan recorded no load before it',
                      self.log.output)
        self.period.telemetry.relief_checked.assert_not_called()

    def test_a_database_error_leaves_the_moves_for_next_period(self):
        for method in ('relief_due', 'save_relief'):
            self.store.reset_mock()
            getattr(self.store, method).side_effect = db_exc.DBError('gone')
            self.check(due('i1'))
            getattr(self.store, method).side_effect = None
        self.assertEqual(2, self.log.output.count(
            'DRS relief checks left for the next period: gone'))


class LeadChecksReliefTest(test_rebalancer.PeriodTestCase):
    """Where the step sits in a leading period."""

    def test_last_with_the_periods_verdicts_and_its_start(self):
        clock = self.useFixture(utils_fixture.TimeFixture(NOW))
        self.period.reader.windows = mock.Mock()
        self.period.outcomes.executor.poll.return_value = []
        self.store.unfinished.return_value = []
        verdicts = [verdict('h1', 74.0)]

        self.config(relief_check_delay=600, rebalance_interval=60,
                    group='drs')
        self.store.relief_due.return_value = [due('i1'), due('i2')]
        measuring = []

        def plan(reader, context, config, rec, windows, acting, draining,
                 power_rows, queued=frozenset(), checking=frozenset()):
            measuring.append(checking)
            # Samples are read after the period started.
            clock.advance_time_delta(datetime.timedelta(seconds=5))
            rec['hosts'] = verdicts
            return period_plan.Period(
                mock.Mock(moves=[]), mock.Mock(
                    instances={}, loads=mock.sentinel.loads), {}, [],
                test_rebalancer.EMPTY, mock.sentinel.candidates)
        self.useFixture(fixtures.MockPatchObject(period_plan, 'plan', plan))
        calls = mock.Mock()
        calls.attach_mock(self.store, 'store')
        check = self.useFixture(fixtures.MockPatchObject(
            relief_check, 'check_due')).mock
        calls.attach_mock(check, 'check')
        rec = record.new_record('automatic', model.PlannerConfig())
        self.period._lead(mock.sentinel.context, rec)
        self.assertEqual(
            mock.call.check(self.store, self.period.telemetry, verdicts,
                            NOW, mock.sentinel.loads), calls.mock_calls[-1])
        # The instances of the moves due by the next period measured.
        self.assertEqual([frozenset({'i1', 'i2'})], measuring)
        self.assertIn(mock.call.store.relief_due(
            NOW - datetime.timedelta(seconds=540)), calls.mock_calls)
        self.assertIn(mock.call.store.add(rec), calls.mock_calls)


class ReliefTelemetryTest(testtools.TestCase):

    def test_checks_counted_by_whether_the_expectation_held(self):
        found = telemetry.Telemetry()

        def value(held):
            return found.registry.get_sample_value(
                'nova_drs_relief_checks_total', {'held': held})
        # Both series exist from the start, so rates begin at zero.
        self.assertEqual((0.0, 0.0), (value('true'), value('false')))
        for held in (True, False, True):
            found.relief_checked(held)
        self.assertEqual((2.0, 1.0), (value('true'), value('false')))
