"""Relief checks in the DRS database: which moves are due, what a saved
check looks like when read back, and revision 0004 over older rows."""

import datetime
import json

import sqlalchemy as sa
import testtools
from alembic import command
from oslo_utils import fixture as utils_fixture
from oslo_utils import timeutils

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import relief_rows
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.db import tables
from tests.unit.db import test_store

NOW = datetime.datetime(2026, 11, 28, 12, 0, 0)
EXPECTED = {'source_cpu_before': 92.0, 'source_cpu': 70.0,
            'destination_cpu': 45.0, 'relief': 12.5, 'cost': 1.5}


def planned(instance, goal=None, expected=EXPECTED, **kwargs):
    found = test_store.move(instance, goal=goal, **kwargs)
    found['expected'] = dict(expected)
    return found


class ReliefDueTest(test_store.StoreTestBase):

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(NOW))

    def at(self, minutes):
        self.clock.advance_time_delta(datetime.timedelta(minutes=minutes))

    def complete(self, rec, instance, status='completed'):
        self.assertTrue(self.store.set_outcome(rec['id'], instance,
                                               {'status': status}))

    def due(self, minutes_ago=0):
        return self.store.relief_due(
            timeutils.utcnow() - datetime.timedelta(minutes=minutes_ago))

    def test_completed_balancing_and_leveling_moves_are_due(self):
        rec = self.record(planned('i1'), planned('i2', goal='level'),
                          planned('i3', goal='drain'), planned('i4'),
                          planned('i5'))
        for instance in ('i1', 'i2', 'i3'):
            self.complete(rec, instance)
        self.complete(rec, 'i4', 'failed')
        self.complete(rec, 'i5', 'started')
        self.assertEqual(
            [{'record_id': rec['id'], 'instance': 'i1', 'source': 'h1',
              'destination': 'h2', 'goal': 'balance', 'expected': EXPECTED,
              'completed_at': NOW},
             {'record_id': rec['id'], 'instance': 'i2', 'source': 'h1',
              'destination': 'h2', 'goal': 'level', 'expected': EXPECTED,
              'completed_at': NOW}],
            self.due())

    def test_due_once_completed_long_enough_oldest_first(self):
        first = self.record(planned('i1'))
        second = self.record(planned('i2'))
        self.complete(second, 'i2')
        self.at(5)
        self.complete(first, 'i1')
        self.assertEqual([], self.due(minutes_ago=10))
        self.assertEqual(['i2'], [m['instance'] for m in self.due(5)])
        self.at(5)
        self.assertEqual(['i2', 'i1'], [m['instance'] for m in self.due(5)])

    def test_a_saved_check_is_no_longer_due_and_is_read_back(self):
        rec = self.record(planned('i1'), planned('i2'))
        self.complete(rec, 'i1')
        self.complete(rec, 'i2')
        self.at(10)
        result = {'status': db_store.CHECKED, 'held': True,
                  'relief_points': 20.0, 'expected_points': 22.0}
        self.assertTrue(self.store.save_relief(rec['id'], 'i1', result))
        self.assertEqual(['i2'], [m['instance'] for m in self.due()])
        [stored] = self.store.recent()
        moves = {m['instance']: m for m in stored['moves']}
        self.assertEqual(dict(result, time=timeutils.utcnow().isoformat()),
                         moves['i1']['relief_check'])
        self.assertNotIn('relief_check', moves['i2'])
        # Saving leaves the outcome and its time alone.
        self.assertEqual('completed', moves['i1']['outcome']['status'])
        with self.store.engine.connect() as conn:
            self.assertEqual({NOW}, set(conn.execute(sa.select(
                tables.moves.c.updated_at)).scalars()))

    def test_a_no_sample_result_takes_the_move_off_too(self):
        rec = self.record(planned('i1'))
        self.complete(rec, 'i1')
        self.store.save_relief(rec['id'], 'i1', {
            'status': db_store.NO_SAMPLE, 'detail': 'no CPU sample of h2'})
        self.assertEqual([], self.due())
        move = self.store.get(rec['id'])['moves'][0]
        self.assertEqual('no sample', move['relief_check']['status'])

    def test_a_goal_not_checked_first_in_the_order_leaves_the_rest_due(self):
        # A goal this code does not check (a newer planner's), sorted
        # before a balancing move: skipped, not the end of the scan.
        rec = self.record(planned('a0', goal='future'), planned('b1'))
        self.complete(rec, 'a0')
        self.complete(rec, 'b1')
        self.assertEqual(['b1'], [m['instance'] for m in self.due()])

    def test_saving_touches_its_own_record_s_move_only(self):
        # The same instance moved in two periods: each record's move has
        # its own check, whichever record id sorts first.
        first, second = sorted(
            (self.record(planned('i1')) for _ in range(2)),
            key=lambda rec: rec['id'])
        self.complete(first, 'i1')
        self.complete(second, 'i1')
        self.store.save_relief(first['id'], 'i1', {'status': 'one'})
        self.assertNotIn('relief_check', self.store.get(second['id'])
                         ['moves'][0])
        self.store.save_relief(second['id'], 'i1', {'status': 'two'})
        self.assertEqual(
            ['one', 'two'],
            [self.store.get(rec['id'])['moves'][0]['relief_check']['status']
             for rec in (first, second)])

    def test_saving_on_a_purged_move_says_so(self):
        self.assertFalse(self.store.save_relief('gone', 'i1', {}))

    def test_moves_without_an_expectation_are_due_with_an_empty_one(self):
        bare = test_store.move('i1')  # An older record: no expected.
        rec = self.record(bare)
        self.complete(rec, 'i1')
        [due] = self.due()
        self.assertEqual(({}, 'balance'), (due['expected'], due['goal']))


class ReliefChecksTest(test_store.StoreTestBase):
    """The recent checks leveling learns from (``relief_checks``)."""

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(NOW))

    at, complete = ReliefDueTest.at, ReliefDueTest.complete

    def checked(self, rec, instance, source='h1', **result):
        self.assertTrue(self.store.save_relief(rec['id'], instance, dict(
            {'status': db_store.CHECKED, 'held': True, 'source': source},
            **result)))

    def checks(self, minutes, completed_minutes):
        now = timeutils.utcnow()
        return self.store.relief_checks(
            now - datetime.timedelta(minutes=minutes),
            now - datetime.timedelta(minutes=completed_minutes))

    def test_recent_checks_with_their_time_source_and_load_stayed(self):
        rec = self.record(*(planned(f'i{n}') for n in range(1, 6)))
        for n in range(1, 6):
            self.complete(rec, f'i{n}')
        self.at(10)
        self.checked(rec, 'i1', load_stayed=True)
        self.checked(rec, 'i2', source='h7', load_stayed=False)
        # Checked without the instance's load.
        self.checked(rec, 'i3')
        # Not checked: nothing to learn from.
        self.store.save_relief(rec['id'], 'i4', {
            'status': db_store.NO_SAMPLE, 'detail': 'no CPU sample of h2',
            'source': 'h1'})
        seconds = relief_rows.epoch(timeutils.utcnow())
        self.assertCountEqual(
            [(seconds, 'h1', True), (seconds, 'h7', False),
             (seconds, 'h1', None)],
            self.checks(60, 60))
        self.assertEqual(
            (NOW + datetime.timedelta(minutes=10)).replace(
                tzinfo=datetime.timezone.utc).timestamp(), seconds)

    def test_only_checks_made_since_the_time_given(self):
        rec = self.record(planned('i1'), planned('i2'))
        self.complete(rec, 'i1')
        self.complete(rec, 'i2')
        self.at(10)
        self.checked(rec, 'i1', load_stayed=True)
        self.at(30)
        self.checked(rec, 'i2', load_stayed=True)
        self.assertEqual([(relief_rows.epoch(timeutils.utcnow()), 'h1',
                           True)], self.checks(29, 120))
        self.assertEqual(2, len(self.checks(30, 120)))

    def test_only_moves_completed_since_the_bound_are_read(self):
        # The bound on the moves' completion keeps the query recent: a
        # check of a move completed before it is not read.
        rec = self.record(planned('i1'), planned('i2'))
        self.complete(rec, 'i1')
        self.at(5)
        self.complete(rec, 'i2')
        self.at(10)
        self.checked(rec, 'i1', load_stayed=False)
        self.checked(rec, 'i2', load_stayed=True)
        self.assertEqual([True], [c[2] for c in self.checks(60, 10)])
        self.assertCountEqual([False, True],
                              [c[2] for c in self.checks(60, 15)])

    def test_checks_stored_without_their_source_are_left_out(self):
        rec = self.record(planned('i1'), planned('i2'), planned('i3'))
        for instance in ('i1', 'i2', 'i3'):
            self.complete(rec, instance)
        self.at(10)
        # As stored before the source was: skipped.
        self.assertTrue(self.store.save_relief(rec['id'], 'i1', {
            'status': db_store.CHECKED, 'held': True}))
        self.checked(rec, 'i2', load_stayed=True)
        with self.store.engine.begin() as conn:
            # Unreadable: no time, or not JSON.
            conn.execute(tables.moves.update().where(
                tables.moves.c.instance == 'i3').values(
                relief_check='not json'))
        self.assertEqual([('h1', True)],
                         [c[1:] for c in self.checks(60, 60)])
        with self.store.engine.begin() as conn:
            conn.execute(tables.moves.update().where(
                tables.moves.c.instance == 'i3').values(
                relief_check=json.dumps({'status': 'checked',
                                         'source': 'h1'})))
        self.assertEqual([('h1', True)],
                         [c[1:] for c in self.checks(60, 60)])

    def test_an_unreadable_check_before_a_good_one(self):
        rec = self.record(planned('i1'), planned('i2'))
        self.complete(rec, 'i1')
        self.complete(rec, 'i2')
        self.at(10)
        self.checked(rec, 'i2', load_stayed=True)
        with self.store.engine.begin() as conn:
            conn.execute(tables.moves.update().where(
                tables.moves.c.instance == 'i1').values(
                relief_check='not json'))
        self.assertEqual([('h1', True)],
                         [c[1:] for c in self.checks(60, 60)])

    def test_only_completed_moves_are_read(self):
        # A check on a move not completed (written by hand: the leader
        # checks completed moves only) is not read.
        rec = self.record(planned('i1'), planned('i2'))
        self.complete(rec, 'i1')
        self.complete(rec, 'i2', 'failed')
        self.at(10)
        self.checked(rec, 'i1', load_stayed=True)
        self.checked(rec, 'i2', load_stayed=False)
        self.assertEqual([('h1', True)],
                         [c[1:] for c in self.checks(60, 60)])


class MigrationTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.store = test_store.sqlite_store(self)

    def test_upgrade_from_0003_leaves_old_moves_unchecked_and_due(self):
        body = {'id': 'r1', 'moves': [{'instance': 'i1', 'source': 'h1',
                                       'destination': 'h2'}]}
        with self.store.engine.begin() as connection:
            command.upgrade(migration._config(connection), '0003')
            connection.execute(tables.records.insert().values(
                id='r1', created_at=NOW, automation='automatic',
                move_count=1, body=json.dumps(body)))
            connection.execute(tables.moves.insert().values(
                record_id='r1', instance='i1', status='completed',
                outcome='{"status": "completed"}', updated_at=NOW))
        self.assertEqual(migration.head(), migration.sync(self.store.engine))
        self.store.check()
        [due] = self.store.relief_due(NOW)
        self.assertEqual(('r1', 'i1', {}), (due['record_id'],
                                            due['instance'],
                                            due['expected']))
        self.assertNotIn('relief_check',
                         self.store.get('r1')['moves'][0])
