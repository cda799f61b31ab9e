"""Cooldown, quarantine and in-flight counts derived from Nova's records."""

import datetime

import testtools
from nova import objects
from oslo_utils import uuidutils

from nova_drs_scheduler.rebalance import executor

NOW = datetime.datetime(2026, 11, 1, 12, 0, 0)


def migration(instance, status, age, source='h1', dest='h2',
              user=executor.DRS_USER):
    changed = NOW - datetime.timedelta(seconds=age)
    return objects.Migration(
        uuid=uuidutils.generate_uuid(), instance_uuid=instance,
        status=status, source_compute=source, dest_compute=dest,
        user_id=user, created_at=changed, updated_at=changed)


def state(*migrations, cooldown=600, quarantine=3600):
    objects.register_all()
    return executor.migration_state(migrations, NOW, cooldown, quarantine)


class MigrationStateTest(testtools.TestCase):

    def test_in_flight_counts_both_hosts_and_blocks(self):
        result = state(migration('a', 'running', 5),
                       migration('b', 'queued', 5, source='h3', dest='h2'))
        self.assertEqual(2, result.inflight_total)
        self.assertEqual({'h1': 1, 'h2': 2, 'h3': 1}, result.inflight_by_host)
        self.assertTrue(result.blocked['a'].startswith('migrating'))

    def test_cooldown_after_completion_then_expires(self):
        self.assertIn('cooldown', state(
            migration('a', 'completed', 599)).blocked['a'])
        self.assertEqual({}, state(migration('a', 'completed', 601)).blocked)

    def test_quarantine_only_for_drs_failures(self):
        self.assertIn('quarantine', state(
            migration('a', 'error', 10)).blocked['a'])
        self.assertEqual({}, state(
            migration('a', 'error', 10, user='operator')).blocked)
        self.assertEqual({}, state(migration('a', 'failed', 3601)).blocked)

    def test_newest_record_decides(self):
        # Failed an hour ago (quarantine over), completed since: cooldown.
        result = state(migration('a', 'error', 3000),
                       migration('a', 'completed', 30), quarantine=60)
        self.assertIn('cooldown', result.blocked['a'])
        self.assertEqual(0, result.inflight_total)
