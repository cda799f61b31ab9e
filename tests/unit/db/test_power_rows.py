"""Power management's rows in the DRS database: host states, wake
requests, power recommendations, and revision 0005 over older rows."""

import datetime

import testtools
from alembic import command
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
        self.assertEqual('0005', migration.sync(self.store.engine))
        self.store.check()
        [found] = self.store.recommendations()
        self.assertEqual(('i1', None), (found['instance'], found['action']))
        self.assertEqual({}, self.store.power_hosts())
