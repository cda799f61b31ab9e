"""Power management's rows in the DRS database: host states, the time
banked in standby, wake requests, power recommendations, and revisions
0005 and 0006 over older rows."""

import datetime
from unittest import mock

import sqlalchemy as sa
import testtools
from alembic import command
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.db import tables
from tests.unit.db import test_store

NOW = datetime.datetime(2026, 11, 27, 12, 0, 0)


class PowerRowsTest(test_store.StoreTestBase):

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(NOW))

    def test_a_state_change_restarts_since_and_keeps_what_is_not_given(self):
        row = self.store.set_power('h1', 'entering', 'pool-a', 'quiet',
                                   disabled_by_drs=True, detail={})
        self.assertEqual(('entering', 'pool-a', 'quiet', True, NOW, {}),
                         (row['state'], row['pool'], row['reason'],
                          row['disabled_by_drs'], row['requested_at'],
                          row['detail']))
        self.clock.advance_time_seconds(60)
        row = self.store.set_power('h1', 'entering', detail={'x': 1})
        self.assertEqual((NOW, 'quiet', {'x': 1}),
                         (row['requested_at'], row['reason'],
                          row['detail']))
        self.clock.advance_time_seconds(60)
        row = self.store.set_power('h1', 'standby')
        later = NOW + datetime.timedelta(seconds=120)
        self.assertEqual(('standby', later, 'pool-a', True, {'x': 1}),
                         (row['state'], row['requested_at'], row['pool'],
                          row['disabled_by_drs'], row['detail']))
        self.assertEqual(['h1'], list(self.store.power_hosts()))

    def test_a_new_row_is_not_disabled_by_drs_unless_said(self):
        self.assertFalse(self.store.set_power('h2', 'waking')[
            'disabled_by_drs'])

    def test_forget_returns_the_last_row_then_none(self):
        self.store.set_power('h1', 'standby', reason='quiet')
        self.assertEqual('standby', self.store.forget_power('h1')['state'])
        self.assertIsNone(self.store.forget_power('h1'))
        self.assertEqual({}, self.store.power_hosts())

    def test_wake_requests_are_read_once(self):
        self.store.request_wake(None, 'no valid host: ' + 'x' * 2000)
        self.store.request_wake('pool-a', 'second')
        found = self.store.take_wake_requests()
        self.assertEqual([None, 'pool-a'], [r['pool'] for r in found])
        self.assertEqual(1000, len(found[0]['reason']))
        self.assertEqual([], self.store.take_wake_requests())

    def test_a_power_recommendation_is_refreshed_while_pending(self):
        first = self.store.recommend_power('r1', 'standby', 'h1', 'quiet')
        again = self.store.recommend_power('r2', 'standby', 'h1', 'quieter')
        other = self.store.recommend_power('r2', 'wake', 'h1', 'busy')
        self.assertEqual(first, again)
        self.assertNotEqual(first, other)
        rows = {r['id']: r for r in self.store.recommendations()}
        self.assertEqual(('standby', '', 'h1', '', 'quieter', 'r2'), (
            rows[first]['action'], rows[first]['instance'],
            rows[first]['source'], rows[first]['destination'],
            rows[first]['reason'], rows[first]['record_id']))
        self.store.transition(first, db_store.APPROVED)
        self.store.recommend_power('r3', 'standby', 'h1', 'quietest')
        self.assertEqual('quieter', self.store.recommendations()[0]['reason'])

    def test_each_host_has_its_own_row(self):
        for host in ('h3', 'h2', 'h1'):
            self.assertEqual(host, self.store.set_power(
                host, 'entering', reason=host)['reason'])
        self.assertIsNone(self.store.forget_power('h0'))
        self.clock.advance_time_seconds(60)
        row = self.store.set_power('h2', 'standby', detail={'x': 1})
        self.assertEqual(('h2', 'h2', 'standby'),
                         (row['host'], row['reason'], row['state']))
        self.assertEqual('h2', self.store.forget_power('h2')['host'])
        found = self.store.power_hosts()
        self.assertEqual({'h1': ('entering', 'h1', NOW, {}),
                          'h3': ('entering', 'h3', NOW, {})},
                         {host: (row['state'], row['reason'],
                                 row['requested_at'], row['detail'])
                          for host, row in found.items()})

    def test_a_state_back_to_an_earlier_one_restarts_since(self):
        self.store.set_power('h1', 'waking')
        self.clock.advance_time_seconds(60)
        row = self.store.set_power('h1', 'standby')
        self.assertEqual(NOW + datetime.timedelta(seconds=60),
                         row['requested_at'])

    def test_a_row_inserted_meanwhile_is_updated_instead(self):
        real = self.store._set_power
        calls = []

        def racing(*args):
            calls.append(args)
            if len(calls) == 1:
                real('h1', 'entering', 'other', None, None, None)
                raise db_exc.DBDuplicateEntry(['host'])
            return real(*args)

        with mock.patch.object(self.store, '_set_power', racing):
            row = self.store.set_power('h1', 'standby', reason='quiet')
        self.assertEqual(2, len(calls))
        self.assertEqual(('standby', 'other', 'quiet'),
                         (row['state'], row['pool'], row['reason']))

    def test_wake_requests_are_all_taken(self):
        for pool in ('a', 'b', 'c'):
            self.store.request_wake(pool, pool)
        self.assertEqual(['a', 'b', 'c'], [
            r['pool'] for r in self.store.take_wake_requests()])
        self.assertEqual([], self.store.take_wake_requests())

    def test_a_request_stored_while_taking_is_left_for_next_time(self):
        self.store.request_wake('a', 'first')
        late = []

        def another_writer(conn, clause, *args):
            if (isinstance(clause, sa.sql.Delete)
                    and clause.table is tables.power_requests and not late):
                late.append(conn.execute(tables.power_requests.insert(
                    ).values(pool='b', reason='late', created_at=NOW)))

        sa.event.listen(self.store.engine, 'before_execute', another_writer)
        self.addCleanup(sa.event.remove, self.store.engine,
                        'before_execute', another_writer)
        self.assertEqual(['a'], [
            r['pool'] for r in self.store.take_wake_requests()])
        self.assertEqual(['b'], [
            r['pool'] for r in self.store.take_wake_requests()])

    def test_one_recommendation_per_action_and_host(self):
        first = self.store.recommend_power('r1', 'wake', 'h2', 'busy')
        other = self.store.recommend_power('r1', 'standby', 'h2', 'quiet')
        third = self.store.recommend_power('r1', 'wake', 'h1', 'busy')
        fourth = self.store.recommend_power('r1', 'wake', 'h3', 'busy')
        self.assertEqual(4, len({first, other, third, fourth}))
        self.assertEqual(third, self.store.recommend_power(
            'r2', 'wake', 'h1', 'busier'))
        self.assertEqual(['busy', 'quiet', 'busier', 'busy'], [
            r['reason'] for r in self.store.recommendations()])

    def test_a_started_recommendation_is_not_refreshed(self):
        found = self.store.recommend_power('r1', 'standby', 'h1', 'quiet')
        self.store.transition(found, db_store.STARTED)
        self.assertEqual(found, self.store.recommend_power(
            'r2', 'standby', 'h1', 'quieter'))
        self.assertEqual([('quiet', 'r1')], [
            (r['reason'], r['record_id'])
            for r in self.store.recommendations()])


class StandbySecondsTest(test_store.StoreTestBase):
    """The host-seconds spent in standby survive the row that held their
    start: banked when a host leaves standby, whichever way."""

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(NOW))

    def test_only_the_time_in_standby_counts(self):
        self.store.set_power('h1', 'entering', 'pool-a')
        self.clock.advance_time_seconds(600)
        self.assertEqual({}, self.store.standby_seconds())
        self.store.set_power('h1', 'standby')
        self.clock.advance_time_seconds(3600)
        self.assertEqual({'pool-a': 3600.0}, self.store.standby_seconds())
        # A wake the driver refused leaves it in standby: still counting.
        self.store.set_power('h1', 'standby', detail={'error': 'BMC'})
        self.clock.advance_time_seconds(1800)
        self.store.set_power('h1', 'waking')
        self.clock.advance_time_seconds(600)
        self.assertEqual({'pool-a': 5400.0}, self.store.standby_seconds())
        self.store.forget_power('h1')
        self.clock.advance_time_seconds(600)
        self.assertEqual({'pool-a': 5400.0}, self.store.standby_seconds())

    def test_banked_and_current_add_up_per_pool(self):
        self.store.set_power('h1', 'standby', 'pool-a')
        self.store.set_power('h2', 'standby', 'pool-a')
        self.store.set_power('h3', 'standby')
        self.clock.advance_time_seconds(3600)
        self.store.set_power('h1', 'waking')
        self.store.forget_power('h1')
        self.clock.advance_time_seconds(3600)
        # Standby again: its new stretch adds to what it banked.
        self.store.set_power('h1', 'standby', 'pool-a')
        self.clock.advance_time_seconds(1800)
        self.assertEqual({'pool-a': 3600.0 + 1800.0 + 2 * 3600.0 + 1800.0,
                          None: 2 * 3600.0 + 1800.0},
                         self.store.standby_seconds())

    def test_a_host_forgotten_in_standby_banks_its_time(self):
        self.store.set_power('h1', 'standby', 'pool-a')
        self.clock.advance_time_seconds(900)
        self.store.forget_power('h1')
        self.store.set_power('h1', 'entering', 'pool-b')
        self.clock.advance_time_seconds(900)
        self.store.set_power('h1', 'standby')
        self.clock.advance_time_seconds(900)
        self.store.set_power('h1', 'waking')
        # Counted where its last standby was.
        self.assertEqual({'pool-b': 1800.0}, self.store.standby_seconds())

    def test_each_host_banks_its_own_time(self):
        self.store.set_power('h1', 'standby', 'pool-a')
        self.clock.advance_time_seconds(3600)
        self.store.set_power('h1', 'waking')
        # h2, sorting after h1, banks for the first time: its own row.
        self.store.set_power('h2', 'standby', 'pool-b')
        self.clock.advance_time_seconds(1800)
        self.store.set_power('h2', 'waking')
        self.assertEqual({'pool-a': 3600.0, 'pool-b': 1800.0},
                         self.store.standby_seconds())
        # Each adds to its own row only, whichever sorts first.
        for host, seconds in (('h1', 600), ('h2', 60)):
            self.store.set_power(host, 'standby')
            self.clock.advance_time_seconds(seconds)
            self.store.set_power(host, 'waking')
        self.assertEqual({'pool-a': 4200.0, 'pool-b': 1860.0},
                         self.store.standby_seconds())

    def test_no_time_or_a_clock_gone_back_banks_nothing(self):
        self.store.set_power('h1', 'standby', 'pool-a')
        self.store.set_power('h1', 'waking')
        self.assertEqual({'pool-a': 0.0}, self.store.standby_seconds())
        self.store.set_power('h1', 'standby')
        self.clock.advance_time_seconds(-10)
        self.assertEqual({'pool-a': 0.0}, self.store.standby_seconds())
        self.store.set_power('h1', 'waking')
        self.assertEqual({'pool-a': 0.0}, self.store.standby_seconds())

    def test_when_each_host_last_left_standby(self):
        self.assertEqual({}, self.store.left_standby())
        self.store.set_power('h1', 'entering', 'pool-a')
        self.store.set_power('h2', 'standby', 'pool-a')
        self.clock.advance_time_seconds(600)
        self.store.set_power('h1', 'standby')
        # A refused wake leaves it in standby: it has not left.
        self.store.set_power('h2', 'standby', detail={'error': 'BMC'})
        self.assertEqual({}, self.store.left_standby())
        self.clock.advance_time_seconds(600)
        self.store.set_power('h2', 'waking')
        woken = NOW + datetime.timedelta(seconds=1200)
        self.assertEqual({'h2': woken}, self.store.left_standby())
        # Up and given back: still when it left standby, not later.
        self.clock.advance_time_seconds(600)
        self.store.forget_power('h2')
        self.store.forget_power('h1')
        self.assertEqual(
            {'h1': NOW + datetime.timedelta(seconds=1800), 'h2': woken},
            self.store.left_standby())

    def test_a_retried_write_banks_once(self):
        self.store.set_power('h1', 'standby', 'pool-a')
        self.clock.advance_time_seconds(3600)
        real = self.store._set_power
        calls = []

        def racing(*args):
            calls.append(args)
            if len(calls) == 1:
                real('h1', 'waking', None, None, None, None)
                raise db_exc.DBDuplicateEntry(['host'])
            return real(*args)

        with mock.patch.object(self.store, '_set_power', racing):
            self.store.set_power('h1', 'waking')
        self.assertEqual({'pool-a': 3600.0}, self.store.standby_seconds())


class PowerRevisionTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.store = test_store.sqlite_store(self)

    def test_upgrade_from_0004_keeps_recommendations_as_migrations(self):
        with self.store.engine.begin() as connection:
            command.upgrade(migration._config(connection), '0004')
            connection.execute(tables.recommendations.insert().values(
                instance='i1', source='h1', destination='h2', reason='cpu',
                state='pending', created_at=NOW, updated_at=NOW))
        self.assertEqual(migration.head(), migration.sync(self.store.engine))
        self.store.check()
        [found] = self.store.recommendations()
        self.assertEqual(('i1', None), (found['instance'], found['action']))
        self.assertEqual({}, self.store.power_hosts())

    def test_upgrade_from_0005_counts_a_host_in_standby_from_its_row(self):
        with self.store.engine.begin() as connection:
            command.upgrade(migration._config(connection), '0005')
            connection.execute(tables.power.insert().values(
                host='h1', state='standby', pool='pool-a',
                disabled_by_drs=True, requested_at=NOW, updated_at=NOW))
        self.assertEqual(migration.head(), migration.sync(self.store.engine))
        self.store.check()
        self.useFixture(utils_fixture.TimeFixture(
            NOW + datetime.timedelta(hours=2)))
        self.assertEqual({'pool-a': 7200.0}, self.store.standby_seconds())
