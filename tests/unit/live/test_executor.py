"""Cooldown, quarantine and in-flight counts derived from Nova's records."""

import datetime
import logging
import types

import fixtures
import oslo_messaging as messaging
import sqlalchemy
import testtools
from nova import context as nova_context
from nova import exception
from nova import objects
from nova import test
from nova.db.main import api as main_db_api
from oslo_utils import fixture as utils_fixture
from oslo_utils import uuidutils

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import executor
from tests import snapshots as h

NOW = datetime.datetime(2026, 11, 1, 12, 0, 0)


def migration(instance, status, age, source='h1', dest='h2',
              user=executor.DRS_USER):
    changed = NOW - datetime.timedelta(seconds=age)
    return objects.Migration(
        uuid=uuidutils.generate_uuid(), instance_uuid=instance,
        status=status, source_compute=source, dest_compute=dest,
        user_id=user, created_at=changed, updated_at=changed)


def state(*migrations, cooldown=600, quarantine=3600, no_return=0):
    objects.register_all()
    return executor.migration_state(migrations, NOW, cooldown, quarantine,
                                    no_return)


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
        # Keystone's user ids are hex, sorting before DRS's.
        self.assertEqual({}, state(migration(
            'a', 'error', 10, user=uuidutils.generate_uuid(dashed=False))
        ).blocked)
        # DRS's user id as read from the database: equal, not identical.
        self.assertIn('quarantine', state(migration(
            'a', 'error', 10, user=h.fresh(executor.DRS_USER))).blocked['a'])

    def test_a_record_from_a_clock_ahead_is_just_changed(self):
        ahead = migration('a', 'completed', -5)
        self.assertEqual({}, state(ahead, cooldown=0).blocked)
        self.assertEqual({}, state(ahead, cooldown=0).left)  # Disabled.
        self.assertEqual(
            'cooldown: moved h1 -> h2 0s ago (cooldown 600s)',
            state(ahead, no_return=600).blocked['a'])
        self.assertEqual({'a': ('h1',)}, state(ahead, no_return=600).left)
        # Half a second old: within a one-second cooldown.
        self.assertIn('a', state(migration('a', 'completed', 0.5),
                                 cooldown=1).blocked)

    def test_age_from_the_last_change_else_the_creation(self):
        started = migration('a', 'completed', 7200)
        started.updated_at = NOW - datetime.timedelta(seconds=30)
        self.assertIn('30s ago', state(started).blocked['a'])
        started.updated_at = None
        self.assertEqual({}, state(started).blocked)
        self.assertEqual({'a': ('h1',)}, state(
            started, no_return=7201).left)
        self.assertEqual({}, state(migration('a', 'failed', 3601)).blocked)

    def test_newest_record_decides(self):
        # Failed an hour ago (quarantine over), completed since: cooldown.
        result = state(migration('a', 'error', 3000),
                       migration('a', 'completed', 30), quarantine=60)
        self.assertIn('cooldown', result.blocked['a'])
        self.assertEqual(0, result.inflight_total)


class CellTest(test.TestCase):
    """Real cell and API databases; only Nova's ``live_migrate`` (a
    conductor call) is replaced, by one that writes the Migration record
    as the conductor does."""

    T0 = datetime.datetime(2026, 11, 1, 12, 0)

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(self.T0))
        self.ctxt = nova_context.get_admin_context()
        self.cell = self.cell_mappings['cell1']
        self.executor = executor.Executor()
        self.instance = self.add_instance()
        self.move = types.SimpleNamespace(
            instance=self.instance, source='h1', destination='h2',
            migration=model.LIVE)
        self.calls = []
        self.useFixture(fixtures.MockPatchObject(
            self.executor.compute_api, 'live_migrate',
            side_effect=self.live_migrate))
        #: Raised by live_migrate, after writing its record if ``written``.
        self.refusal = None
        self.written = True

    def add_instance(self):
        uuid = uuidutils.generate_uuid()
        with nova_context.target_cell(self.ctxt, self.cell) as cctxt:
            objects.Instance(cctxt, uuid=uuid, host='h1', project_id='p',
                             user_id='u', vm_state='active').create()
        objects.InstanceMapping(self.ctxt, instance_uuid=uuid,
                                cell_mapping=self.cell,
                                project_id='p').create()
        return uuid

    def live_migrate(self, ctx, instance, **kwargs):
        self.calls.append((ctx, instance, kwargs))
        if self.written:
            self.migration(instance.uuid, user=ctx.user_id)
        if self.refusal:
            raise self.refusal

    def migration(self, instance, user=executor.DRS_USER,
                  kind='live-migration', status='accepted'):
        with nova_context.target_cell(self.ctxt, self.cell) as cctxt:
            record = objects.Migration(
                cctxt, uuid=uuidutils.generate_uuid(), instance_uuid=instance,
                source_compute='h1', dest_compute='h2', status=status,
                migration_type=kind, user_id=user, project_id=user)
            record.create()
        return record

    def set_status(self, record, status):
        with nova_context.target_cell(self.ctxt, self.cell) as cctxt:
            record = objects.Migration.get_by_uuid(cctxt, record.uuid)
            record.status = status
            record.save()

    def later(self, seconds):
        self.clock.advance_time_delta(datetime.timedelta(seconds=seconds))

    def records(self):
        with nova_context.target_cell(self.ctxt, self.cell) as cctxt:
            return objects.MigrationList.get_by_filters(
                cctxt, {'instance_uuid': self.instance})

    def ended(self, status):
        """A new instance's move whose record Nova then set to ``status``;
        the record and what poll reports."""
        self.move.instance = self.instance = self.add_instance()
        self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.set_status(record, status)
        return record, self.executor.poll(timeout=60)


class ExecutorTest(CellTest):
    """Starting and following moves, against real cell and API
    databases."""

    def test_start_asks_nova_for_an_ordinary_checked_live_migration(self):
        outcome = self.executor.start('r1', self.move, self.cell)
        [(ctx, instance, kwargs)] = self.calls
        # Nova re-validates the host and claims it (force=False), and the
        # call returns once the conductor has answered (async_=False).
        self.assertEqual(
            dict(block_migration=None, disk_over_commit=None,
                 host_name='h2', force=False, async_=False), kwargs)
        self.assertEqual((executor.DRS_USER, executor.DRS_USER, True),
                         (ctx.user_id, ctx.project_id, ctx.is_admin))
        self.assertEqual(self.instance, instance.uuid)
        self.assertIn('numa_topology', instance)
        self.assertIn('system_metadata', instance)
        [record] = self.records()
        self.assertEqual({'status': 'started', 'migration': record.uuid},
                         outcome)
        self.assertEqual([], self.executor.poll(timeout=60))

    def test_refusal_is_reported_and_not_followed(self):
        self.refusal = exception.NoValidHost(reason='h2 is full')
        self.written = False
        outcome = self.executor.start('r1', self.move, self.cell)
        # Refused, not failed: the destination is to blame, not the
        # instance, and the outcome names it.
        self.assertEqual(
            {'status': executor.REFUSED, 'migration': None,
             'destination': 'h2',
             'error': 'NoValidHost: No valid host was found. h2 is full'},
            outcome)
        self.assertEqual([], self.executor.poll(timeout=0))

    def test_a_refusal_wrapped_by_the_rpc_layer_is_a_refusal(self):
        try:
            raise exception.NoValidHost(reason='h2 is full')
        except exception.NoValidHost:
            self.refusal = messaging.ExpectedException()
        self.written = False
        outcome = self.executor.start('r1', self.move, self.cell)
        self.assertEqual((executor.REFUSED, 'h2'),
                         (outcome['status'], outcome['destination']))

    def test_other_start_failures_are_failures(self):
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.refusal = exception.MigrationPreCheckError(reason='no')
        self.written = False
        outcome = self.executor.start('r1', self.move, self.cell)
        self.assertEqual('failed', outcome['status'])
        self.assertNotIn('destination', outcome)
        self.assertIn('from h1 to h2 failed to start: ', log.output)
        self.assertNotIn('refused', log.output)

    def test_a_refusal_is_logged_as_one(self):
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.refusal = exception.NoValidHost(reason='h2 is full')
        self.written = False
        self.executor.start('r1', self.move, self.cell)
        self.assertIn('from h1 to h2 refused by Nova\'s scheduler at start '
                      '(the instance is not quarantined; another host is '
                      'tried): No valid host', log.output)

    def test_failure_after_nova_wrote_its_record_names_the_record(self):
        self.refusal = exception.MigrationPreCheckError(reason='no')
        outcome = self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.assertEqual(('failed', record.uuid),
                         (outcome['status'], outcome['migration']))
        self.assertEqual([], self.executor.poll(timeout=0))

    def test_unknown_instance_fails_to_start(self):
        self.move.instance = uuidutils.generate_uuid()
        outcome = self.executor.start('r1', self.move, self.cell)
        self.assertEqual('failed', outcome['status'])
        self.assertTrue(outcome['error'].startswith('InstanceNotFound: '))
        self.assertEqual([], self.calls)

    def test_no_record_after_the_start_is_unknown_and_not_followed(self):
        self.written = False
        self.assertEqual(
            {'status': 'unknown',
             'error': 'no migration record found after the start'},
            self.executor.start('r1', self.move, self.cell))
        self.assertEqual([], self.executor.poll(timeout=0))

    def test_only_drs_live_migrations_of_the_instance_are_its_record(self):
        self.written = False
        self.migration(self.instance, user='operator')
        self.migration(self.instance, kind='migration')
        self.migration(self.add_instance())
        self.assertEqual('unknown', self.executor.start(
            'r1', self.move, self.cell)['status'])

    def test_newest_record_since_a_second_before_the_start(self):
        """Records a second older than the start are the start's (the
        clocks of the database and the scheduler may differ), older ones
        are an earlier move's."""
        self.written = False
        self.migration(self.instance)
        self.later(1.000001)
        self.assertEqual('unknown', self.executor.start(
            'r1', self.move, self.cell)['status'])
        first = self.migration(self.instance)
        self.later(1)
        self.assertEqual(first.uuid, self.executor.start(
            'r1', self.move, self.cell)['migration'])
        # Two records at one instant: the later one (higher id) wins.
        self.migration(self.instance)
        newest = self.migration(self.instance)
        self.assertEqual(newest.uuid, self.executor.start(
            'r1', self.move, self.cell)['migration'])

    def test_poll_reports_each_end_once(self):
        started = self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.assertEqual([], self.executor.poll(timeout=60))
        self.set_status(record, 'running')
        self.assertEqual([], self.executor.poll(timeout=60))
        self.set_status(record, 'completed')
        self.assertEqual(
            [('r1', self.instance,
              {'migration': started['migration'], 'status': 'completed',
               'destination': 'h2'})],
            self.executor.poll(timeout=60))
        self.assertEqual([], self.executor.poll(timeout=60))

    def test_every_failed_status_is_a_failure(self):
        for status in sorted(executor.FAILED):
            record, ended = self.ended(status)
            self.assertEqual(
                [('r1', self.instance,
                  {'migration': record.uuid, 'status': 'failed',
                   'error': f'migration ended {status}'})], ended)

    def test_every_done_status_is_a_completion(self):
        for status in sorted(executor.DONE):
            _, [(_, _, outcome)] = self.ended(status)
            self.assertEqual('completed', outcome['status'])

    def test_times_out_only_past_the_timeout(self):
        self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.set_status(record, 'running')
        self.later(60)
        self.assertEqual([], self.executor.poll(timeout=60))
        self.later(0.5)
        self.assertEqual(
            [('r1', self.instance,
              {'migration': record.uuid, 'status': 'timed_out',
               'error': 'still running after 60s; Nova keeps driving it'})],
            self.executor.poll(timeout=60))
        self.assertEqual([], self.executor.poll(timeout=0))

    def test_a_record_gone_is_unknown(self):
        self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        with nova_context.target_cell(self.ctxt, self.cell) as cctxt:
            engine = main_db_api.get_engine(context=cctxt)
            with engine.begin() as conn:
                conn.execute(sqlalchemy.text(
                    'DELETE FROM migrations WHERE uuid = :u'),
                    {'u': record.uuid})
        self.assertEqual(
            [('r1', self.instance,
              {'migration': record.uuid, 'status': 'unknown',
               'error': 'migration record disappeared'})],
            self.executor.poll(timeout=60))

    def test_adopted_move_is_found_through_the_instance_mapping(self):
        record = self.migration(self.instance)
        self.executor.adopt('r0', self.instance, record.uuid,
                            self.T0.replace(tzinfo=datetime.timezone.utc))
        self.later(30)
        self.assertEqual([], self.executor.poll(timeout=30))
        self.later(1)
        [(_, _, outcome)] = self.executor.poll(timeout=30)
        # The start time was made naive UTC, as utcnow() is.
        self.assertEqual('still accepted after 31s; Nova keeps driving it',
                         outcome['error'])
        self.executor.adopt('r0', uuidutils.generate_uuid(), record.uuid,
                            self.T0)
        [(_, _, outcome)] = self.executor.poll(timeout=30)
        self.assertEqual('unknown', outcome['status'])

    def test_adopt_starting_follows_a_move_begun_since_the_record(self):
        since = self.T0
        self.later(5)
        record = self.migration(self.instance)
        self.assertEqual(
            {'status': 'started', 'migration': record.uuid},
            self.executor.adopt_starting('r0', self.instance, since))
        self.set_status(record, 'completed')
        [(record_id, instance, outcome)] = self.executor.poll(timeout=60)
        self.assertEqual(('r0', self.instance, 'completed'),
                         (record_id, instance, outcome['status']))

    def test_adopt_starting_without_a_new_record_did_not_start(self):
        self.migration(self.instance)
        self.later(5)
        not_started = {'status': 'not_started',
                       'error': 'the scheduler stopped before starting it'}
        self.assertEqual(not_started, self.executor.adopt_starting(
            'r0', self.instance, self.T0 + datetime.timedelta(seconds=1)))
        self.assertEqual(not_started, self.executor.adopt_starting(
            'r0', uuidutils.generate_uuid(), self.T0))
        self.assertEqual([], self.executor.poll(timeout=0))


class ColdMigrationTest(CellTest):
    """A stopped instance leaving a host in maintenance: Nova's ``resize``
    to the chosen host (a cast: its record may come later), confirmed
    by DRS once finished.  ``resize`` and ``confirm_resize`` are replaced
    by fakes that write the record as Nova would."""

    def setUp(self):
        super().setUp()
        # As a move read back from the DRS database: equal, not identical.
        self.move.migration = h.fresh(model.COLD)
        self.resizes = []
        self.confirms = []
        self.useFixture(fixtures.MockPatchObject(
            self.executor.compute_api, 'resize', side_effect=self.resize))
        self.useFixture(fixtures.MockPatchObject(
            self.executor.compute_api, 'confirm_resize',
            side_effect=self.confirm_resize))
        #: Raised by confirm_resize, instead of confirming.
        self.confirm_refusal = None
        #: The status confirm_resize leaves the record in.
        self.confirmed = 'confirmed'

    def resize(self, ctx, instance, **kwargs):
        self.resizes.append((ctx, instance, kwargs))
        if self.written:
            self.migration(instance.uuid, user=ctx.user_id, kind='migration')
        if self.refusal:
            raise self.refusal

    def confirm_resize(self, ctx, instance):
        self.confirms.append((ctx, instance.uuid))
        if self.confirm_refusal:
            raise self.confirm_refusal
        with nova_context.target_cell(self.ctxt, self.cell) as cctxt:
            record = objects.Migration.get_by_instance_and_status(
                cctxt, instance.uuid, 'finished')
        self.set_status(record, self.confirmed)

    def test_start_asks_nova_for_a_resize_to_the_chosen_host(self):
        outcome = self.executor.start('r1', self.move, self.cell)
        self.assertEqual([], self.calls)  # No live migration.
        [(ctx, instance, kwargs)] = self.resizes
        self.assertEqual({'host_name': 'h2'}, kwargs)
        self.assertEqual((executor.DRS_USER, executor.DRS_USER, True),
                         (ctx.user_id, ctx.project_id, ctx.is_admin))
        self.assertEqual(self.instance, instance.uuid)
        [record] = self.records()
        self.assertEqual({'status': 'started', 'migration': record.uuid},
                         outcome)
        for status in ('migrating', 'post-migrating', 'reverted'):
            self.set_status(record, status)
            self.assertEqual([], self.executor.poll(timeout=60))
        self.assertEqual([], self.confirms)  # Only a finished one.
        self.set_status(record, 'confirmed')
        self.assertEqual(
            [('r1', self.instance, {'migration': record.uuid,
                                    'status': 'completed',
                                    'destination': 'h2'})],
            self.executor.poll(timeout=60))

    def test_a_refused_resize_names_its_record(self):
        self.refusal = exception.NoValidHost(reason='h2 is full')
        outcome = self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.assertEqual(
            {'status': executor.REFUSED, 'migration': record.uuid,
             'destination': 'h2',
             'error': 'NoValidHost: No valid host was found. h2 is full'},
            outcome)
        self.assertEqual([], self.executor.poll(timeout=0))

    def test_a_record_made_after_the_start_is_found_at_a_later_poll(self):
        self.written = False
        log = self.useFixture(fixtures.FakeLogger(
            name='nova_drs_scheduler.rebalance.executor',
            level=logging.INFO))
        # Not the move's: an older cold migration, a live one since, and
        # an operator's cold one since.
        self.migration(self.instance, kind='migration', status='confirmed')
        self.later(2)
        outcome = self.executor.start('r1', self.move, self.cell)
        self.assertEqual({'status': 'started', 'migration': None}, outcome)
        self.assertIn(f'DRS started cold migration (record not made yet) of '
                      f'{self.instance}: h1 -> h2', log.output)
        self.migration(self.instance, status='completed')
        self.migration(self.instance, kind='migration', user='operator',
                       status='confirmed')
        self.later(5)
        self.assertEqual([], self.executor.poll(timeout=60))
        record = self.migration(self.instance, kind='migration')
        self.assertEqual([], self.executor.poll(timeout=60))
        self.set_status(record, 'error')
        self.assertEqual(
            [('r1', self.instance, {'migration': record.uuid,
                                    'status': 'failed',
                                    'error': 'migration ended error'})],
            self.executor.poll(timeout=60))
        self.assertEqual([], self.executor.poll(timeout=0))

    def test_a_record_never_made_times_out(self):
        self.written = False
        self.executor.start('r1', self.move, self.cell)
        self.later(60)
        self.assertEqual([], self.executor.poll(timeout=60))
        self.later(0.5)
        self.assertEqual(
            [('r1', self.instance,
              {'migration': None, 'status': 'timed_out',
               'error': 'still not created yet after 60s; Nova keeps '
                        'driving it'})],
            self.executor.poll(timeout=60))
        self.assertEqual([], self.executor.poll(timeout=0))

    def test_a_record_still_to_come_holds_no_other_move_back(self):
        self.written = False
        self.executor.start('r1', self.move, self.cell)
        self.written = True
        live = types.SimpleNamespace(
            instance=self.add_instance(), source='h1', destination='h2',
            migration=model.LIVE)
        started = self.executor.start('r2', live, self.cell)
        with nova_context.target_cell(self.ctxt, self.cell) as cctxt:
            record = objects.Migration.get_by_uuid(cctxt,
                                                   started['migration'])
        self.set_status(record, 'completed')
        self.assertEqual(
            [('r2', live.instance, {'migration': record.uuid,
                                    'status': 'completed',
                                    'destination': 'h2'})],
            self.executor.poll(timeout=60))

    def test_a_finished_migration_of_drs_is_confirmed(self):
        self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.set_status(record, 'finished')
        self.assertEqual(
            [('r1', self.instance, {'migration': record.uuid,
                                    'status': 'completed',
                                    'destination': 'h2'})],
            self.executor.poll(timeout=60))
        [(ctx, uuid)] = self.confirms
        self.assertEqual((self.instance, executor.DRS_USER),
                         (uuid, ctx.user_id))

    def test_a_confirmation_still_running_is_followed(self):
        self.confirmed = 'confirming'
        self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.set_status(record, 'finished')
        self.assertEqual([], self.executor.poll(timeout=60))
        self.assertEqual(1, len(self.confirms))
        self.set_status(record, 'confirmed')
        [(_, _, outcome)] = self.executor.poll(timeout=60)
        self.assertEqual('completed', outcome['status'])
        self.assertEqual(1, len(self.confirms))

    def test_a_failed_confirmation_is_tried_again_at_the_next_poll(self):
        self.confirm_refusal = exception.ServiceUnavailable()
        self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.set_status(record, 'finished')
        self.assertEqual([], self.executor.poll(timeout=60))
        self.assertEqual([], self.executor.poll(timeout=60))
        self.assertEqual(2, len(self.confirms))
        self.confirm_refusal = None
        [(_, _, outcome)] = self.executor.poll(timeout=60)
        self.assertEqual(('completed', record.uuid),
                         (outcome['status'], outcome['migration']))
        self.assertEqual(3, len(self.confirms))

    def test_an_unconfirmed_migration_times_out(self):
        self.confirm_refusal = exception.ServiceUnavailable()
        self.executor.start('r1', self.move, self.cell)
        [record] = self.records()
        self.set_status(record, 'finished')
        self.later(61)
        self.assertEqual(
            [('r1', self.instance,
              {'migration': record.uuid, 'status': 'timed_out',
               'error': 'still finished after 61s; Nova keeps driving it'})],
            self.executor.poll(timeout=60))

    def test_a_finished_migration_not_started_by_drs_is_left_alone(self):
        # Keystone's user ids are hex, sorting before DRS's.
        self._left_alone(uuidutils.generate_uuid(dashed=False))

    def test_so_is_one_of_a_user_whose_id_sorts_after_drs(self):
        self._left_alone('operator')

    def _left_alone(self, user):
        # Adopted, e.g. a record id from an older release's outcome.
        record = self.migration(self.instance, user=user, kind='migration',
                                status='finished')
        self.executor.adopt('r0', self.instance, record.uuid, self.T0)
        self.assertEqual([], self.executor.poll(timeout=60))
        self.assertEqual([], self.confirms)
        self.set_status(record, 'confirmed')
        [(_, _, outcome)] = self.executor.poll(timeout=60)
        self.assertEqual('completed', outcome['status'])

    def test_adopt_starting_finds_a_cold_migration(self):
        since = self.T0
        self.later(5)
        record = self.migration(self.instance, kind='migration')
        self.assertEqual(
            {'status': 'started', 'migration': record.uuid},
            self.executor.adopt_starting('r0', self.instance, since))
        self.set_status(record, 'finished')
        [(_, _, outcome)] = self.executor.poll(timeout=60)
        self.assertEqual(('completed', record.uuid),
                         (outcome['status'], outcome['migration']))
        self.assertEqual(1, len(self.confirms))

    def test_adopt_starting_ignores_a_cold_migration_before_it(self):
        self.migration(self.instance, kind='migration')
        self.later(5)
        self.assertEqual(
            'not_started', self.executor.adopt_starting(
                'r0', self.instance,
                self.T0 + datetime.timedelta(seconds=1))['status'])
        # An operator's since: not DRS's.
        self.migration(self.instance, kind='migration', user='operator')
        self.assertEqual(
            'not_started', self.executor.adopt_starting(
                'r0', self.instance,
                self.T0 + datetime.timedelta(seconds=1))['status'])
