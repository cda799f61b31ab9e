"""The maintenance queue in the DRS database (``enter --one-at-a-time``),
and revision 0008 over older rows."""

import datetime

import sqlalchemy as sa
import testtools
from alembic import command
from oslo_utils import fixture as utils_fixture
from oslo_utils import timeutils

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.db import tables
from tests.unit.db import test_store

NOW = datetime.datetime(2026, 11, 29, 12, 0, 0)


class QueueTest(test_store.StoreTestBase):

    def setUp(self):
        super().setUp()
        self.now = NOW
        self.time = self.useFixture(utils_fixture.TimeFixture(NOW))

    def later(self, seconds):
        self.time.advance_time_seconds(seconds)
        return timeutils.utcnow()

    def queue(self, *hosts, reason=None):
        return [self.store.enter_maintenance(host, reason, True, queued=True)
                for host in hosts]

    def positions(self):
        """{host: (state, position)} of every row."""
        return {row['host']: (row['state'], row['queue_position'])
                for row in self.store.maintenance()}

    def test_queued_hosts_wait_in_order_their_service_untouched(self):
        self.store.enter_maintenance('h9', 'first', True)
        rows = self.queue('h3', 'h1', 'h2', reason='bios')
        self.assertEqual(
            {'host': 'h3', 'reason': 'bios', 'state': 'queued',
             # Whatever the caller says: enter left the service alone.
             'disabled_by_drs': False, 'requested_at': self.now,
             'updated_at': self.now, 'reported_at': None, 'progress': None,
             'queue_position': 1, 'new': True}, rows[0])
        self.assertEqual([1, 2, 3], [r['queue_position'] for r in rows])
        self.assertEqual({'h9': ('draining', None), 'h3': ('queued', 1),
                          'h1': ('queued', 2), 'h2': ('queued', 3)},
                         self.positions())
        self.assertEqual('h3', self.store.first_queued()['host'])

    def test_queued_again_keeps_its_place_and_may_change_its_reason(self):
        self.queue('h1', 'h2', reason='bios')
        later = self.later(10)
        row = self.store.enter_maintenance('h1', 'disks', False, queued=True)
        self.assertEqual(('queued', 1, 'disks', False, self.now, later),
                         (row['state'], row['queue_position'], row['reason'],
                          row['new'], row['requested_at'],
                          row['updated_at']))
        self.assertEqual(row, self.store.enter_maintenance(
            'h1', None, False, queued=True))
        self.assertEqual({'h1': ('queued', 1), 'h2': ('queued', 2)},
                         self.positions())

    def test_a_host_draining_entered_queued_stays_draining(self):
        self.store.enter_maintenance('h1', None, True)
        row = self.store.enter_maintenance('h1', 'bios', False, queued=True)
        self.assertEqual(('draining', None, True, 'bios'),
                         (row['state'], row['queue_position'],
                          row['disabled_by_drs'], row['reason']))

    def test_entered_without_queued_it_leaves_the_queue_and_drains(self):
        self.queue('h1', 'h2', 'h3', reason='bios')
        self.store.report_maintenance('h2', db_store.DRAINED, {'x': 1})
        now = self.later(30)
        row = self.store.enter_maintenance('h2', None, True)
        self.assertEqual(
            {'host': 'h2', 'reason': 'bios', 'state': 'draining',
             'disabled_by_drs': True, 'requested_at': now,
             'updated_at': now, 'reported_at': None, 'progress': None,
             'queue_position': None, 'new': False}, row)
        # The host behind it moves up.
        self.assertEqual({'h1': ('queued', 1), 'h2': ('draining', None),
                          'h3': ('queued', 2)}, self.positions())
        self.assertEqual('disks', self.store.enter_maintenance(
            'h3', 'disks', False)['reason'])

    def test_exit_of_a_queued_host_moves_up_those_behind(self):
        self.store.enter_maintenance('h0', None, True)
        self.queue('h1', 'h2', 'h3')
        self.assertEqual('queued', self.store.exit_maintenance('h2')['state'])
        self.assertEqual({'h0': ('draining', None), 'h1': ('queued', 1),
                          'h3': ('queued', 2)}, self.positions())
        self.store.exit_maintenance('h0')
        self.assertEqual({'h1': ('queued', 1), 'h3': ('queued', 2)},
                         self.positions())
        self.store.exit_maintenance('h1')
        self.assertEqual({'h3': ('queued', 1)}, self.positions())
        # Queued at the end, after the ones that left.
        self.assertEqual(2, self.queue('h4')[0]['queue_position'])

    def test_start_queued_makes_a_drain_of_now(self):
        self.queue('h1', 'h2', reason='bios')
        now = self.later(60)
        row = self.store.start_queued('h1', True)
        self.assertEqual(
            {'host': 'h1', 'reason': 'bios', 'state': 'draining',
             'disabled_by_drs': True, 'requested_at': now,
             'updated_at': now, 'reported_at': None, 'progress': None,
             'queue_position': None}, row)
        self.assertEqual({'h1': ('draining', None), 'h2': ('queued', 1)},
                         self.positions())
        self.assertEqual('h2', self.store.first_queued()['host'])
        self.assertFalse(self.store.start_queued('h2', False)[
            'disabled_by_drs'])
        self.assertIsNone(self.store.first_queued())

    def test_start_queued_of_a_host_no_longer_queued(self):
        self.queue('h1')
        self.store.enter_maintenance('h2', None, True)
        self.assertIsNone(self.store.start_queued('h2', False))
        self.assertIsNone(self.store.start_queued('nope', False))
        self.assertTrue(self.store.maintenance('h2')[0]['disabled_by_drs'])
        self.assertEqual(('queued', 1), self.positions()['h1'])

    def test_a_leaders_report_never_overwrites_queued(self):
        self.queue('h1')
        self.assertFalse(self.store.report_maintenance(
            'h1', db_store.DRAINED, {'instances': 0}))
        [row] = self.store.maintenance('h1')
        self.assertEqual(('queued', None, None),
                         (row['state'], row['progress'], row['reported_at']))

    def test_first_queued_by_position(self):
        self.assertIsNone(self.store.first_queued())
        self.queue('h2', 'h1')
        self.assertEqual(('h2', 1), (self.store.first_queued()['host'],
                                     self.store.first_queued()[
                                         'queue_position']))


class QueueRevisionTest(testtools.TestCase):

    def test_upgrade_from_0007_keeps_the_hosts_draining(self):
        store = test_store.sqlite_store(self)
        with store.engine.begin() as connection:
            command.upgrade(migration._config(connection), '0007')
            connection.execute(tables.metadata.tables[
                'drs_maintenance'].insert().values(
                host='h1', reason='bios', state='blocked',
                disabled_by_drs=True, requested_at=NOW, updated_at=NOW))
            self.assertNotIn('queue_position', [
                column['name'] for column in sa.inspect(
                    connection).get_columns('drs_maintenance')])
        self.assertEqual('0008', migration.sync(store.engine))
        store.check()
        self.assertEqual(
            {'h1': {'state': 'blocked', 'requested_at': NOW,
                    'disabled_by_drs': True, 'queue_position': None}},
            store.maintenance_hosts())
        self.assertIsNone(store.first_queued())
        # A host queued after the upgrade is first.
        self.assertEqual(1, store.enter_maintenance(
            'h2', None, False, queued=True)['queue_position'])
