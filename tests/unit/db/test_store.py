"""The DRS database on SQLite: schema, records, windows, recommendations."""

import datetime
import json
import math
import os

import fixtures
import sqlalchemy as sa
import testtools
from alembic import autogenerate
from alembic import command
from alembic.runtime import migration as alembic_migration
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture
from oslo_utils import timeutils

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.db import tables
from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import record


def make_conf(connection=None, state_path=None):
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf.register_opt(cfg.StrOpt('state_path'))
    conf([], project='nova-drs-test')
    if connection:
        conf.set_override('connection', connection, group='drs_database')
    if state_path:
        conf.set_override('state_path', state_path)
    return conf


def sqlite_store(test: testtools.TestCase) -> db_store.Store:
    """A store on a fresh SQLite file of the test's, closed after it."""
    path = test.useFixture(fixtures.TempDir()).path
    store = db_store.Store(make_conf(
        'sqlite:///' + os.path.join(path, 'drs.sqlite')))
    test.addCleanup(store.close)
    return store


def move(instance, source='h1', destination='h2', goal=None,
         status='starting'):
    found = {'instance': instance, 'source': source,
             'destination': destination, 'reason': 'cpu',
             'outcome': {'status': status}}
    if goal:
        found['goal'] = goal
    return found


def drain(instance, source='h1', status='starting'):
    return move(instance, source, 'h9', goal='drain', status=status)


class StoreTestBase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.store = db_store.Store(make_conf(
            'sqlite:///' + os.path.join(self.dir, 'drs.sqlite')))
        self.addCleanup(self.store.close)
        migration.sync(self.store.engine)

    def record(self, *moves, when=None):
        rec = record.new_record('automatic', model.PlannerConfig())
        if when:
            rec['time'] = when.isoformat()
        rec['moves'] = [json.loads(json.dumps(m)) for m in moves]
        rec['hosts'] = [{'host': 'h1', 'counter': 2, 'violated': True},
                        {'host': 'h2', 'counter': 0, 'violated': False},
                        {'host': 'h3', 'counter': 1, 'violated': False}]
        self.store.add(rec)
        return rec


class MigrationTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def test_default_is_an_sqlite_file_under_state_path(self):
        store = db_store.Store(make_conf(state_path=self.dir))
        self.addCleanup(store.close)
        self.assertIsNone(migration.version(store.engine))
        error = self.assertRaises(migration.NotMigratedError, store.check)
        self.assertIn('run "nova-drs db sync"', str(error))
        self.assertEqual(migration.head(), migration.sync(store.engine))
        store.check()
        self.assertTrue(os.path.exists(os.path.join(self.dir,
                                                    'nova_drs.sqlite')))

    def test_migrations_create_exactly_the_tables_the_code_uses(self):
        store = db_store.Store(make_conf(state_path=self.dir))
        self.addCleanup(store.close)
        migration.sync(store.engine)
        with store.engine.connect() as connection:
            diff = autogenerate.compare_metadata(
                alembic_migration.MigrationContext.configure(connection),
                tables.metadata)
        self.assertEqual([], diff)

    def test_upgrade_from_0002_keeps_the_rows(self):
        store = db_store.Store(make_conf(state_path=self.dir))
        self.addCleanup(store.close)
        with store.engine.begin() as connection:
            command.upgrade(migration._config(connection), '0002')
            connection.execute(sa.text(
                "INSERT INTO drs_records (id, created_at, automation, "
                "move_count, body) VALUES ('r1', '2026-11-26 10:00:00', "
                "'automatic', 1, '{\"id\": \"r1\", \"moves\": "
                "[{\"instance\": \"i1\", \"source\": \"h1\"}]}')"))
            connection.execute(sa.text(
                "INSERT INTO drs_moves (record_id, instance, status, "
                "outcome, updated_at) VALUES ('r1', 'i1', 'completed', "
                "'{\"status\": \"completed\"}', '2026-11-26 10:01:00')"))
        self.assertEqual('0002', migration.version(store.engine))
        self.assertEqual(migration.head(), migration.sync(store.engine))
        store.check()
        with store.engine.connect() as connection:
            self.assertEqual([('r1', 'i1', 'completed', None)],
                             connection.execute(sa.select(
                                 tables.moves.c.record_id,
                                 tables.moves.c.instance,
                                 tables.moves.c.status,
                                 tables.moves.c.drain_host)).all())
            diff = autogenerate.compare_metadata(
                alembic_migration.MigrationContext.configure(connection),
                tables.metadata)
        self.assertEqual([], diff)
        self.assertEqual([{'completed'}], [
            {m['outcome']['status'] for m in r['moves']}
            for r in store.recent()])
        self.assertEqual([], store.maintenance())
        self.assertTrue(store.enter_maintenance('h1', None, False)['new'])

    def test_unreachable_database_is_a_db_error(self):
        store = db_store.Store(make_conf(
            'sqlite:///' + os.path.join(self.dir, 'missing', 'x.sqlite')))
        self.addCleanup(store.close)
        self.assertRaises(db_exc.DBError, store.check)

    def test_deprecated_database_aliases_are_not_read(self):
        # Nova's [DEFAULT] sql_connection must never become ours.
        conf = make_conf()
        conf.register_opt(cfg.StrOpt('sql_connection'))
        for opt in conf._groups['drs_database']._opts.values():
            self.assertEqual([], opt['opt'].deprecated_opts)


class RecordsTest(StoreTestBase):

    def test_record_and_outcomes_round_trip(self):
        log = self.useFixture(fixtures.FakeLogger())
        rec = self.record(move('i1'), move('i2', 'h1', 'h3'))
        self.assertTrue(self.store.set_outcome(
            rec['id'], 'i1', {'status': 'started', 'migration': 'm1'}))
        self.assertFalse(self.store.set_outcome(
            rec['id'], 'nope', {'status': 'completed'}))
        self.assertIn(f'DRS move of i1 (record {rec["id"]}): ', log.output)
        self.assertNotIn('DRS move of nope', log.output)
        got = self.store.get(rec['id'])
        self.assertEqual(['started', 'starting'],
                         [m['outcome']['status'] for m in got['moves']])
        # Only hosts over their threshold stay in the stored record.
        self.assertEqual(['h1', 'h3'], [h['host'] for h in got['hosts']])
        unfinished = sorted(self.store.unfinished())
        self.assertEqual([(rec['id'], 'i1'), (rec['id'], 'i2')],
                         [(r, i) for r, i, _o, _t in unfinished])
        self.assertEqual('m1', unfinished[0][2]['migration'])
        self.store.set_outcome(rec['id'], 'i1', {'status': 'completed'})
        self.store.set_outcome(rec['id'], 'i2', {'status': 'failed'})
        self.assertEqual([], self.store.unfinished())

    def test_outcomes_of_a_status_since_a_time(self):
        early = self.record(move('i1'), move('i2'))
        self.store.set_outcome(early['id'], 'i1', {
            'status': 'refused', 'destination': 'h2', 'migration': 'm1'})
        self.store.set_outcome(early['id'], 'i2', {'status': 'failed'})
        self.assertEqual({'i1': {'h2': 'm1'}}, self.store.outcomes(
            'refused', timeutils.utcnow() - datetime.timedelta(minutes=1)))
        self.assertEqual({}, self.store.outcomes(
            'refused', timeutils.utcnow() + datetime.timedelta(minutes=1)))

    def test_an_outcome_is_set_in_its_own_record_only(self):
        ids = ('a-first', 'm-middle', 'z-last')  # Sorting around the one set.
        for ident in ids:
            rec = record.new_record('automatic', model.PlannerConfig())
            rec.update(id=ident, moves=[move('i1')])
            self.store.add(rec)
        self.store.set_outcome('m-middle', 'i1', {'status': 'started'})
        self.assertEqual(['starting', 'started', 'starting'], [
            self.store.get(ident)['moves'][0]['outcome']['status']
            for ident in ids])
        # Each read by its own id, not by one sorting after it.
        self.assertEqual(list(ids), [self.store.get(ident)['id']
                                     for ident in ids])

    def test_recent_is_newest_last_and_can_keep_moves_only(self):
        now = timeutils.utcnow()
        recs = [None] * 5
        for n in (3, 0, 4, 1, 2):  # By their time, not as stored.
            recs[n] = self.record(*(move(f'i{n}'),) if n % 2 else (),
                                  when=now + datetime.timedelta(seconds=n))
        self.assertEqual([r['id'] for r in recs[2:]],
                         [r['id'] for r in self.store.recent(3)])
        self.assertEqual([recs[1]['id'], recs[3]['id']],
                         [r['id'] for r in self.store.recent(
                             moves_only=True)])

    def test_purge_by_count_and_by_age(self):
        now = timeutils.utcnow()
        old = self.record(move('i0'), when=now - datetime.timedelta(days=9))
        recs = [self.record(move(f'i{n}'),
                            when=now + datetime.timedelta(seconds=n))
                for n in range(1, 5)]
        self.assertEqual(2, self.store.purge(max_count=3, max_age=86400))
        self.assertEqual([r['id'] for r in recs[1:]],
                         [r['id'] for r in self.store.recent()])
        self.assertIsNone(self.store.get(old['id']))
        self.assertEqual(3, len(self.store.unfinished()))

    def test_purge_of_more_than_a_chunk_deletes_them_all(self):
        old = timeutils.utcnow() - datetime.timedelta(days=2)
        with self.store.engine.begin() as conn:
            conn.execute(tables.records.insert(), [
                {'id': f'r{n:04}', 'created_at': old, 'automation': 'off',
                 'move_count': 0, 'body': '{}'} for n in range(1001)])
        self.assertEqual(1001, self.store.purge(max_count=10,
                                                max_age=86400))
        self.assertEqual(0, self.store.count())

    def test_purge_at_exactly_the_age_limit(self):
        now = timeutils.utcnow()
        self.useFixture(utils_fixture.TimeFixture(now))
        limit = self.record(when=now - datetime.timedelta(seconds=60))
        newer = self.record(when=now)
        self.assertEqual(0, self.store.purge(max_count=2, max_age=60))
        # As old as the limit: not too old, but one too many.
        self.assertEqual(1, self.store.purge(max_count=1, max_age=60))
        self.assertIsNone(self.store.get(limit['id']))
        self.assertIsNotNone(self.store.get(newer['id']))

    def test_purge_ended_recommendations_older_than_the_limit(self):
        now = timeutils.utcnow()
        time = self.useFixture(utils_fixture.TimeFixture(
            now - datetime.timedelta(seconds=61)))
        old_ended = self.store.recommend('r', move('old-ended'))
        self.store.transition(old_ended, db_store.DISMISSED)
        self.store.recommend('r', move('old-open'))
        time.advance_time_seconds(1)
        self.store.transition(
            self.store.recommend('r', move('limit-ended')), db_store.EXPIRED)
        self.store.recommend('r', move('limit-open'))
        time.advance_time_seconds(30)
        self.store.transition(
            self.store.recommend('r', move('new-ended')), db_store.DISMISSED)
        time.advance_time_seconds(30)
        self.store.purge(max_count=10, max_age=60)
        self.assertEqual(
            {'old-open': 'pending', 'limit-ended': 'expired',
             'limit-open': 'pending', 'new-ended': 'dismissed'},
            {r['instance']: r['state']
             for r in self.store.recommendations()})
        # Gone, though later ids are still there.
        self.assertRaises(db_store.NotFoundError, self.store.transition,
                          old_ended, db_store.APPROVED)

    def test_history_file_is_imported_once_with_its_windows(self):
        path = os.path.join(self.dir, 'history.jsonl')
        recs = []
        for n in range(4):
            rec = record.new_record('automatic', model.PlannerConfig())
            rec['moves'] = [dict(move(f'i{n}'), outcome={
                'status': 'completed'})]
            if n == 3:  # Records before outcomes were recorded had none.
                del rec['moves'][0]['outcome']
            rec['windows'] = {'h1': {'counter': n, 'samples': [
                [1.0, 90.0, None]]}}
            recs.append(rec)
        with open(path, 'w') as handle:
            handle.writelines(json.dumps(r) + '\n' for r in recs)
        self.assertEqual(3, self.store.import_file(path, limit=3))
        self.assertEqual([r['id'] for r in recs[1:]],
                         [r['id'] for r in self.store.recent()])
        self.assertEqual(3, self.store.load_windows()['h1']['counter'])
        self.assertEqual(['completed', 'completed', 'planned'], [
            r['moves'][0]['outcome']['status']
            for r in self.store.recent()])
        self.assertEqual(0, self.store.import_file(path, limit=3))

    def test_closing_a_started_recommendation_leaves_the_others(self):
        dismissed = self.store.recommend('r', move('i1'))
        self.store.transition(dismissed, db_store.DISMISSED)
        for instance in ('i0', 'i1', 'i2'):
            self.store.transition(self.store.recommend('r', move(instance)),
                                  db_store.STARTED)
        self.store.close_started('i1', db_store.COMPLETED)
        self.assertEqual(
            [('i1', 'dismissed'), ('i0', 'started'), ('i1', 'completed'),
             ('i2', 'started')],
            [(r['instance'], r['state'])
             for r in self.store.recommendations()])

    def test_windows_imported_from_the_newest_record_only(self):
        path = os.path.join(self.dir, 'history.jsonl')
        recs = [record.new_record('automatic', model.PlannerConfig())
                for _ in range(3)]
        for n, rec in enumerate(recs[:-1]):
            rec['windows'] = {'h1': {'counter': n, 'samples': []}}
        with open(path, 'w') as handle:
            handle.writelines(json.dumps(r) + '\n' for r in recs)
        self.assertEqual(3, self.store.import_file(path, limit=5))
        self.assertEqual({}, self.store.load_windows())

    def test_empty_history_file_imports_nothing(self):
        path = os.path.join(self.dir, 'history.jsonl')
        open(path, 'w').close()
        self.assertEqual(0, self.store.import_file(path, limit=2))
        self.assertEqual(({}, 0), (self.store.load_windows(),
                                   self.store.count()))


class WindowsTest(StoreTestBase):

    def test_a_new_reader_continues_the_counters(self):
        windows = metrics.MetricsWindows(2, 3, 180, 80.0, 90.0)
        for now in (100.0, 160.0):
            statuses = windows.update(now, {
                'h1': metrics.HostSample(now, 95.0, 50.0),
                'h2': metrics.HostSample(now, 20.0)})
        self.store.save_windows(windows.export(), {
            host: {'cpu_percent': status.cpu_percent, 'violated':
                   status.violated, 'reason': status.reason}
            for host, status in statuses.items()})
        other = metrics.MetricsWindows(2, 3, 180, 80.0, 90.0)
        other.restore(self.store.load_windows())
        third = other.update(220.0, {'h1': metrics.HostSample(220.0, 95.0),
                                     'h2': metrics.HostSample(220.0, 20.0)})
        self.assertEqual(3, third['h1'].counter)
        self.assertTrue(third['h1'].violated)
        rows = {r['host']: r for r in self.store.host_states()}
        self.assertEqual((2, 95.0), (rows['h1']['counter'],
                                     rows['h1']['cpu_percent']))
        self.assertIn('over for 2 periods', rows['h1']['reason'])
        self.store.save_windows({}, {})
        self.assertEqual({}, self.store.load_windows())


    def test_a_new_reader_continues_the_trend_and_rise_rate(self):
        # The expected load, its spread and the rise rate: without them a
        # restarted or other leader would start each from its newest
        # sample, and leveling would never see load jump often.
        windows = metrics.MetricsWindows(1, 1, 180, 80.0, 90.0,
                                         halflife=600, rise_halflife=3600)
        for now, cpu in ((100.0, 40.0), (160.0, 60.0), (220.0, 40.0)):
            before = windows.update(now, {'h1': metrics.HostSample(now, cpu)})
        self.store.save_windows(windows.export(), {})
        other = metrics.MetricsWindows(1, 1, 180, 80.0, 90.0,
                                       halflife=600, rise_halflife=3600)
        other.restore(self.store.load_windows())
        after = other.update(280.0, {'h1': metrics.HostSample(280.0, 60.0)})
        windows_after = windows.update(
            280.0, {'h1': metrics.HostSample(280.0, 60.0)})
        self.assertGreater(before['h1'].rise_rate, 0.0)
        for field in ('cpu_expected', 'cpu_deviation', 'rise_rate'):
            self.assertAlmostEqual(getattr(windows_after['h1'], field),
                                   getattr(after['h1'], field))
        # Rises at 160 s (decayed for 120 s) and at 280 s.
        self.assertAlmostEqual(math.log(2) * (1 + 0.5 ** (120 / 3600)),
                               after['h1'].rise_rate)
        row = self.store.host_states()[0]
        self.assertEqual({'expected', 'variance', 'previous', 'rises'},
                         set(row['trend']))

    def test_rows_without_trend_restore_as_before(self):
        # As rows written before revision 0002 are.
        self.store.save_windows(
            {'h1': {'counter': 1, 'samples': [[100.0, 90.0, None]]}}, {})
        self.assertEqual({'counter': 1, 'samples': [[100.0, 90.0, None]]},
                         self.store.load_windows()['h1'])
        self.assertIsNone(self.store.host_states()[0]['trend'])


class RecommendationsTest(StoreTestBase):

    def test_one_open_recommendation_per_instance(self):
        before = self.store.recommend('r1', move('i0'))
        first = self.store.recommend('r1', move('i1'))
        after = self.store.recommend('r1', move('i2'))
        again = self.store.recommend('r2', move('i1', 'h1', 'h3'))
        self.assertEqual(first, again)
        rec = self.store.recommendations()[1]
        self.assertEqual(('pending', 'h3', 'r2'),
                         (rec['state'], rec['destination'],
                          rec['record_id']))
        # The others' stay as they were.
        self.assertEqual([(before, 'h2', 'r1'), (after, 'h2', 'r1')], [
            (r['id'], r['destination'], r['record_id'])
            for r in self.store.recommendations() if r['id'] != first])
        # Once approved (or started), what the operator chose stays.
        for state in (db_store.APPROVED, db_store.STARTED):
            self.store.transition(first, state, db_store.OPEN)
            self.assertEqual(first, self.store.recommend(
                'r3', move('i1', 'h1', 'h4')))
            rec = self.store.recommendations()[1]
            self.assertEqual((state, 'h3', 'r2'),
                             (rec['state'], rec['destination'],
                              rec['record_id']))

    def test_transitions(self):
        one = self.store.recommend('r', move('i1'))
        two = self.store.recommend('r', move('i2'))
        three = self.store.recommend('r', move('i3'))
        self.assertEqual([one], self.store.transition(
            one, db_store.APPROVED))
        self.assertRaises(db_store.InvalidStateError, self.store.transition,
                          one, db_store.APPROVED)
        self.assertRaises(db_store.NotFoundError, self.store.transition,
                          99, db_store.APPROVED)
        self.store.transition(two, db_store.DISMISSED,
                              (db_store.PENDING, db_store.APPROVED))
        self.assertEqual([three], self.store.transition(
            None, db_store.APPROVED))
        self.store.transition(one, db_store.STARTED, (db_store.APPROVED,))
        self.store.transition(three, db_store.STARTED, (db_store.APPROVED,))
        self.store.close_started('i1', db_store.COMPLETED)
        states = {r['instance']: r['state']
                  for r in self.store.recommendations()}
        self.assertEqual({'i1': 'completed', 'i2': 'dismissed',
                          'i3': 'started'}, states)
        # Ended ones do not block a new recommendation for the instance.
        self.assertNotEqual(one, self.store.recommend('r', move('i1')))
        self.assertEqual(['i1', 'i3'], sorted(
            r['instance'] for r in self.store.recommendations(
                db_store.OPEN)))


class MaintenanceTest(StoreTestBase):

    def setUp(self):
        super().setUp()
        self.now = timeutils.utcnow()
        self.time = self.useFixture(utils_fixture.TimeFixture(self.now))

    def later(self, seconds):
        self.time.advance_time_seconds(seconds)
        return timeutils.utcnow()

    def drain_hosts(self):
        with self.store.engine.connect() as conn:
            return dict(conn.execute(sa.select(
                tables.moves.c.instance, tables.moves.c.drain_host)).all())

    def test_enter_stores_a_draining_row(self):
        self.assertEqual(
            {'host': 'h1', 'reason': 'kernel update', 'state': 'draining',
             'disabled_by_drs': True, 'requested_at': self.now,
             'updated_at': self.now, 'reported_at': None, 'progress': None,
             'queue_position': None, 'new': True},
            self.store.enter_maintenance('h1', 'kernel update', True))
        self.assertEqual(
            {'host': 'h2', 'reason': None, 'state': 'draining',
             'disabled_by_drs': False, 'requested_at': self.now,
             'updated_at': self.now, 'reported_at': None, 'progress': None,
             'queue_position': None, 'new': True},
            self.store.enter_maintenance('h2', None, False))

    def test_enter_twice_replaces_only_the_reason(self):
        self.store.enter_maintenance('h0', 'before', False)
        self.store.enter_maintenance('h1', 'kernel update', True)
        self.store.enter_maintenance('h2', 'after', False)
        reported = self.later(10)
        self.store.report_maintenance('h1', db_store.BLOCKED,
                                      {'left': ['i1']})
        again = self.later(10)
        row = self.store.enter_maintenance('h1', 'disk swap', False)
        self.assertEqual(
            {'host': 'h1', 'reason': 'disk swap', 'state': 'blocked',
             'disabled_by_drs': True, 'requested_at': self.now,
             'updated_at': again, 'reported_at': reported,
             'progress': {'left': ['i1']}, 'queue_position': None,
             'new': False}, row)
        # Without a reason: nothing changes at all.
        self.later(10)
        self.assertEqual(row, self.store.enter_maintenance('h1', None, False))
        self.assertEqual([dict(row, moves={'completed': 0, 'failed': 0,
                                           'in_flight': 0})],
                         [dict(r, new=False)
                          for r in self.store.maintenance('h1')])
        # The others' rows are as they were.
        self.assertEqual(
            [('h0', 'before', self.now), ('h2', 'after', self.now)],
            [(r['host'], r['reason'], r['updated_at'])
             for r in self.store.maintenance() if r['host'] != 'h1'])

    def test_enter_racing_another_enter_updates_its_row(self):
        self.store.enter_maintenance('h1', 'first', True)
        real = db_store.Store._find_maintenance
        calls = []

        def first_misses(conn, host):
            calls.append(host)
            return None if len(calls) == 1 else real(conn, host)

        self.useFixture(fixtures.MockPatchObject(
            db_store.Store, '_find_maintenance', staticmethod(first_misses)))
        row = self.store.enter_maintenance('h1', 'second', False)
        self.assertEqual((False, 'second', True),
                         (row['new'], row['reason'], row['disabled_by_drs']))
        self.assertEqual(3, len(calls))

    def test_exit_returns_the_row_and_deletes_it(self):
        self.store.enter_maintenance('h0', None, False)
        self.store.enter_maintenance('h1', 'kernel update', True)
        self.store.enter_maintenance('h2', None, False)
        reported = self.later(5)
        self.store.report_maintenance('h1', db_store.DRAINED, {'left': []})
        self.assertEqual(
            {'host': 'h1', 'reason': 'kernel update', 'state': 'drained',
             'disabled_by_drs': True, 'requested_at': self.now,
             'updated_at': reported, 'reported_at': reported,
             'progress': {'left': []}, 'queue_position': None},
            self.store.exit_maintenance('h1'))
        self.assertEqual(['h0', 'h2'], [r['host']
                                        for r in self.store.maintenance()])
        error = self.assertRaises(db_store.NotFoundError,
                                  self.store.exit_maintenance, 'h1')
        self.assertIn('host h1 is not in maintenance', str(error))
        self.assertRaises(db_store.NotFoundError,
                          self.store.exit_maintenance, 'nope')
        self.assertEqual({'host': 'h2', 'reason': None, 'state': 'draining',
                          'disabled_by_drs': False,
                          'requested_at': self.now, 'updated_at': self.now,
                          'reported_at': None, 'progress': None,
                          'queue_position': None},
                         self.store.exit_maintenance('h2'))
        self.assertEqual(['h0'], list(self.store.maintenance_hosts()))

    def test_maintenance_is_by_host_and_can_read_one(self):
        for host in ('h2', 'h3', 'h1'):
            self.store.enter_maintenance(host, f'why {host}', False)
        self.store.report_maintenance('h3', db_store.DRAINING,
                                      {'moved': 2, 'left': ['i3']})
        rows = self.store.maintenance()
        self.assertEqual(['h1', 'h2', 'h3'], [r['host'] for r in rows])
        self.assertEqual({'moved': 2, 'left': ['i3']}, rows[2]['progress'])
        self.assertIsNone(rows[0]['progress'])
        self.assertEqual([rows[1]], self.store.maintenance('h2'))
        self.assertEqual([], self.store.maintenance('nope'))

    def test_moves_counted_by_outcome_since_requested(self):
        self.store.enter_maintenance('h1', None, True)
        # A drain of an earlier maintenance of h1, before this one.
        self.record(drain('i0'), when=self.now - datetime.timedelta(
            microseconds=1))
        self.store.enter_maintenance('h2', None, True)
        self.store.enter_maintenance('h3', None, True)
        first = self.record(
            drain('i1'), drain('i2'), drain('i3'), drain('i4', 'h2'),
            move('i5'), move('i6', goal='level'), move('i7', goal='balance'),
            when=self.now)  # At requested_at: counted.
        second = self.record(
            drain('i8'), drain('i9', status='recommended'),
            drain('i10', status='planned'), drain('i11'), drain('i12'),
            when=self.later(60))
        # Any other end is a failure, even one this code does not know.
        for rec, instance, status in (
                (first, 'i1', 'completed'), (first, 'i2', 'failed'),
                (first, 'i3', 'timed_out'), (second, 'i12', 'cancelled'),
                (second, 'i8', 'started'),
                (second, 'i11', 'completed'), (first, 'i5', 'failed'),
                (first, 'i6', 'completed')):
            self.store.set_outcome(rec['id'], instance, {'status': status})
        expected = {
            'h1': {'completed': 2, 'failed': 3, 'in_flight': 1},
            'h2': {'completed': 0, 'failed': 0, 'in_flight': 1},
            'h3': {'completed': 0, 'failed': 0, 'in_flight': 0}}
        self.assertEqual(expected, {r['host']: r['moves']
                                    for r in self.store.maintenance()})
        for host in expected:
            self.assertEqual([expected[host]], [
                r['moves'] for r in self.store.maintenance(host)])
        # A new request counts from itself.
        self.store.exit_maintenance('h1')
        self.later(1)
        self.store.enter_maintenance('h1', None, True)
        self.assertEqual({'completed': 0, 'failed': 0, 'in_flight': 0},
                         self.store.maintenance('h1')[0]['moves'])

    def test_add_marks_drain_moves_with_their_host(self):
        rec = self.record(drain('i1'), drain('i2', 'h3'), move('i3'),
                          move('i4', goal='level'),
                          move('i5', goal='balance'))
        self.assertEqual({'i1': 'h1', 'i2': 'h3', 'i3': None, 'i4': None,
                          'i5': None}, self.drain_hosts())
        self.assertEqual(['drain', 'drain', None, 'level', 'balance'], [
            m.get('goal') for m in self.store.get(rec['id'])['moves']])

    def test_report_sets_state_and_progress_until_exit(self):
        self.store.enter_maintenance('h1', None, True)
        self.store.enter_maintenance('h2', None, False)
        first = self.later(30)
        self.assertTrue(self.store.report_maintenance(
            'h1', db_store.BLOCKED, {'blocked': {'i1': 'no host'}}))
        row = self.store.maintenance('h1')[0]
        self.assertEqual(
            ('blocked', {'blocked': {'i1': 'no host'}}, first, first,
             self.now),
            (row['state'], row['progress'], row['reported_at'],
             row['updated_at'], row['requested_at']))
        second = self.later(30)
        self.assertTrue(self.store.report_maintenance(
            'h1', db_store.DRAINED, {}))
        row = self.store.maintenance('h1')[0]
        self.assertEqual(('drained', {}, second, second),
                         (row['state'], row['progress'],
                          row['reported_at'], row['updated_at']))
        # The other host's row is left alone.
        self.assertEqual(('draining', None, None, self.now), tuple(
            self.store.maintenance('h2')[0][key] for key in (
                'state', 'progress', 'reported_at', 'updated_at')))
        self.store.exit_maintenance('h1')
        self.assertFalse(self.store.report_maintenance(
            'h1', db_store.DRAINED, {}))
        self.assertEqual(['h2'], [r['host']
                                  for r in self.store.maintenance()])
        self.assertRaises(ValueError, self.store.report_maintenance,
                          'h2', 'done', {})
        self.assertEqual('draining', self.store.maintenance('h2')[0]['state'])

    def test_maintenance_hosts_is_the_leaders_read(self):
        self.assertEqual({}, self.store.maintenance_hosts())
        self.store.enter_maintenance('h1', 'x', True)
        self.later(5)
        self.store.enter_maintenance('h2', None, False)
        self.store.enter_maintenance('h3', None, False, queued=True)
        self.store.report_maintenance('h1', db_store.DRAINED, {'a': 1})
        later = self.now + datetime.timedelta(seconds=5)
        self.assertEqual(
            {'h1': {'state': 'drained', 'requested_at': self.now,
                    'disabled_by_drs': True, 'queue_position': None},
             'h2': {'state': 'draining', 'requested_at': later,
                    'disabled_by_drs': False, 'queue_position': None},
             'h3': {'state': 'queued', 'requested_at': later,
                    'disabled_by_drs': False, 'queue_position': 1}},
            self.store.maintenance_hosts())

    def test_purge_takes_drain_moves_with_their_records(self):
        self.store.enter_maintenance('h1', None, True)
        old = self.record(drain('i1'), drain('i2'))
        self.store.set_outcome(old['id'], 'i1', {'status': 'completed'})
        self.later(120)
        new = self.record(drain('i3'))
        self.assertEqual(1, self.store.purge(max_count=10, max_age=60))
        self.assertIsNone(self.store.get(old['id']))
        self.assertEqual({'i3': 'h1'}, self.drain_hosts())
        self.assertEqual({'completed': 0, 'failed': 0, 'in_flight': 1},
                         self.store.maintenance('h1')[0]['moves'])
        self.assertEqual(new['id'], self.store.recent()[0]['id'])
