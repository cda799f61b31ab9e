"""What the leader stores and logs of each drain in maintenance."""

import logging
from unittest import mock

import fixtures
import testtools

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import maintenance
from tests.unit.db import test_store


class ReportDrainsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.store = mock.Mock()
        self.telemetry = mock.Mock()
        self.cloud = live.Cloud(
            hosts={}, instances={'i1': mock.Mock(display_name='web'),
                                 'i2': mock.Mock(display_name=None)},
            migrations=[])

    def report(self, drains, maintenance_rows):
        plan = mock.Mock(drains=drains)
        maintenance.report_drains(self.store, self.telemetry, {'id': 'r1'},
                                  plan, self.cloud, maintenance_rows)

    def test_each_drain_in_maintenance_stored_and_its_changes_logged(self):
        blocked = model.Drain('m2', 1, blockers=(
            model.Rejection('i2', 'blocked', 'opted out'),))
        # The states as the database gives them: equal, not identical.
        draining = ''.join(['drain', 'ing'])
        self.report(
            [model.Drain('e1', 3, planned=('i9',)),
             model.Drain('m1', 2, planned=('i1',)), blocked,
             model.Drain('m3', 0), model.Drain('m4', 1, planned=('i3',))],
            {'m1': {'state': draining}, 'm2': {'state': draining},
             'm3': {'state': draining},
             'm4': {'state': ''.join(['block', 'ed'])}})
        # e1 is entering standby: not maintenance's to report.
        self.assertEqual(
            [mock.call('m1', drain.DRAINING, {
                'instances': 2, 'planned': ['i1'], 'waiting': [],
                'blockers': [], 'record': 'r1'}),
             mock.call('m2', drain.BLOCKED, {
                 'instances': 1, 'planned': [], 'waiting': [],
                 'blockers': [{'instance': 'i2', 'name': '',
                               'rule': 'blocked', 'reason': 'opted out'}],
                 'record': 'r1'}),
             mock.call('m3', drain.DRAINED, mock.ANY),
             mock.call('m4', drain.DRAINING, mock.ANY)],
            self.store.report_maintenance.call_args_list)
        # A state unchanged is not logged again; a blocked one warns.
        self.assertNotIn('host m1', self.log.output)
        self.assertIn('DRS maintenance: drain of m2 is blocked: i2: opted '
                      'out', self.log.output)
        self.assertIn('DRS maintenance: host m3 is drained (0 instance(s) '
                      'left)', self.log.output)
        self.assertIn('DRS maintenance: host m4 is draining (1 instance(s) '
                      'left)', self.log.output)
        self.telemetry.maintenance.assert_called_once_with(
            self.store.maintenance.return_value)

    def test_a_blocker_without_detail_shows_its_rule(self):
        self.report([model.Drain('m1', 1, blockers=(
            model.Rejection('i1', 'no-destination'),))],
            {'m1': {'state': drain.DRAINING}})
        self.assertIn('drain of m1 is blocked: i1: no-destination',
                      self.log.output)
        self.assertEqual('web', self.store.report_maintenance.call_args.args[
            2]['blockers'][0]['name'])


class EnterExitTest(testtools.TestCase):
    """``enter`` and ``exit`` with Nova's compute service mocked."""

    def setUp(self):
        super().setUp()
        self.store = mock.Mock()
        self.service = mock.Mock(disabled=True, disabled_reason='drs')
        self.compute = self.useFixture(fixtures.MockPatchObject(
            maintenance, 'compute_service')).mock
        self.compute.disable.return_value = (self.service, True)
        self.store.enter_maintenance.return_value = {'host': 'h1',
                                                     'new': True}

    def test_enter_disables_then_stores(self):
        found = maintenance.enter(self.store, 'h1', None)
        self.compute.disable.assert_called_once_with(
            'h1', maintenance.PURPOSE, None)
        self.compute.reword.assert_not_called()
        self.store.enter_maintenance.assert_called_once_with('h1', None,
                                                             True)
        self.assertEqual({'host': 'h1', 'new': True,
                          'service_disabled_reason': 'drs'}, found)

    def test_enter_with_a_reason_rewords_the_disable(self):
        maintenance.enter(self.store, 'h1', 'new disks')
        self.compute.reword.assert_called_once_with(
            self.service, maintenance.PURPOSE, 'new disks')
        self.store.enter_maintenance.assert_called_once_with(
            'h1', 'new disks', True)

    def test_exit_of_a_host_not_in_maintenance_names_it(self):
        self.store.maintenance.return_value = []
        self.store.exit_maintenance.side_effect = LookupError('h1')
        self.assertRaises(LookupError, maintenance.exit, self.store, 'h1')
        self.compute.enable.assert_not_called()

    def test_exit_enables_what_it_disabled_then_forgets(self):
        self.store.maintenance.return_value = [{'disabled_by_drs': True}]
        self.store.exit_maintenance.return_value = {'host': 'h1',
                                                    'state': 'drained'}
        self.store.maintenance_hosts.return_value = {}
        self.store.first_queued.return_value = None
        self.compute.enable.return_value = (mock.Mock(disabled=False), True)
        found = maintenance.exit(self.store, 'h1')
        self.compute.enable.assert_called_once_with(
            'h1', maintenance.PURPOSE, True)
        self.store.exit_maintenance.assert_called_once_with('h1')
        self.assertEqual({'host': 'h1', 'state': 'drained', 'enabled': True,
                          'service_disabled': False, 'next': None}, found)

    def test_exit_of_a_host_gone_from_nova(self):
        self.store.maintenance.return_value = [{'disabled_by_drs': False}]
        self.store.exit_maintenance.return_value = {'host': 'h1',
                                                    'state': 'drained'}
        self.store.maintenance_hosts.return_value = {}
        self.store.first_queued.return_value = None
        self.compute.enable.return_value = (None, False)
        found = maintenance.exit(self.store, 'h1')
        self.assertEqual((False, False), (found['enabled'],
                                          found['service_disabled']))


def stored(state):
    """``state`` as the database gives it: equal to the constant, not the
    same object."""
    return ''.join(list(state))


def rows(**states):
    """``Store.maintenance_hosts`` with these hosts' states, as the
    database gives them."""
    return {host: {'state': stored(state), 'queue_position': None}
            for host, state in states.items()}


class QueueTest(testtools.TestCase):
    """``enter --one-at-a-time`` and the start of the queue's first host
    on ``exit``, with Nova's compute service mocked."""

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.store = mock.Mock()
        self.store.maintenance_hosts.return_value = {}
        self.store.enter_maintenance.side_effect = (
            lambda host, reason, ours, queued=False: {
                'host': host, 'state': 'queued' if queued else 'draining'})
        self.service = mock.Mock(disabled=True,
                                 disabled_reason='nova-drs: maintenance: x')
        self.compute = self.useFixture(fixtures.MockPatchObject(
            maintenance, 'compute_service')).mock
        self.compute.disable.return_value = (self.service, True)

    def test_draining_and_queued_rows(self):
        found = rows(d='draining', e='drained', b='blocked', q='queued')
        self.assertIsNot(maintenance.QUEUED, found['q']['state'])
        self.assertEqual({'d', 'e', 'b'}, set(maintenance.draining(found)))
        self.assertEqual(frozenset({'q'}), maintenance.queued(found))
        self.assertEqual(found['d'], maintenance.draining(found)['d'])

    def test_the_first_host_drains_when_none_does(self):
        # A queue whose first host could not start drains nothing.
        self.store.maintenance_hosts.return_value = rows(q='queued')
        found = maintenance.enter(self.store, 'h1', 'bios', True)
        self.compute.disable.assert_called_once_with(
            'h1', maintenance.PURPOSE, 'bios')
        self.store.enter_maintenance.assert_called_once_with('h1', 'bios',
                                                             True)
        self.assertEqual(('draining', 'nova-drs: maintenance: x'),
                         (found['state'], found['service_disabled_reason']))

    def test_queued_behind_a_host_draining_its_service_untouched(self):
        for state in ('draining', 'drained', 'blocked'):
            self.store.enter_maintenance.reset_mock()
            self.store.maintenance_hosts.return_value = rows(h0=state)
            found = maintenance.enter(self.store, 'h1', 'bios', True)
            self.compute.disable.assert_not_called()
            self.compute.reword.assert_not_called()
            # An unknown host is refused as without the queue.
            self.compute.service.assert_called_with('h1')
            self.store.enter_maintenance.assert_called_once_with(
                'h1', 'bios', False, queued=True)
            self.assertEqual(('queued', None),
                             (found['state'],
                              found['service_disabled_reason']))

    def test_an_unknown_host_is_not_queued(self):
        self.store.maintenance_hosts.return_value = rows(h0='draining')
        self.compute.service.side_effect = maintenance.UnknownHostError('x')
        self.assertRaises(maintenance.UnknownHostError, maintenance.enter,
                          self.store, 'nope', None, True)
        self.store.enter_maintenance.assert_not_called()

    def test_a_queued_host_keeps_its_place_a_draining_one_its_drain(self):
        self.store.maintenance_hosts.return_value = rows(q='queued')
        maintenance.enter(self.store, 'q', 'disks', True)
        self.store.enter_maintenance.assert_called_once_with(
            'q', 'disks', False, queued=True)
        self.compute.disable.assert_not_called()
        # A host draining entered again: as without the flag.
        self.store.enter_maintenance.reset_mock()
        self.store.maintenance_hosts.return_value = rows(d='draining',
                                                        q='queued')
        maintenance.enter(self.store, 'd', 'disks', True)
        self.compute.disable.assert_called_once_with(
            'd', maintenance.PURPOSE, 'disks')
        self.store.enter_maintenance.assert_called_once_with('d', 'disks',
                                                             True)

    def test_without_the_flag_a_queued_host_drains_now(self):
        self.store.maintenance_hosts.return_value = rows(h0='draining',
                                                        q='queued')
        maintenance.enter(self.store, 'q', None)
        self.compute.disable.assert_called_once_with(
            'q', maintenance.PURPOSE, None)
        self.store.enter_maintenance.assert_called_once_with('q', None,
                                                             True)
        self.store.maintenance_hosts.assert_not_called()

    def exit(self, left, state='drained'):
        """Exit h1 (in ``state``), ``left``: the rows after it."""
        self.store.maintenance.side_effect = lambda host=None: (
            [{'disabled_by_drs': True}] if host == 'h1' else [])
        self.store.exit_maintenance.return_value = {'host': 'h1',
                                                    'state': stored(state)}
        self.store.maintenance_hosts.return_value = left
        self.store.first_queued.return_value = {'host': 'q1',
                                                'reason': 'bios'}
        self.store.start_queued.return_value = {'host': 'q1'}
        self.compute.enable.return_value = (mock.Mock(disabled=False), True)
        return maintenance.exit(self.store, 'h1')

    def test_exit_of_the_last_host_draining_starts_the_first_queued(self):
        found = self.exit(rows(q1='queued', q2='queued'))
        self.compute.enable.assert_called_once_with(
            'h1', maintenance.PURPOSE, True)
        # Disabled as enter would, with its stored reason, then started.
        self.compute.disable.assert_called_once_with(
            'q1', maintenance.PURPOSE, 'bios')
        self.store.start_queued.assert_called_once_with('q1', True)
        self.assertEqual({'host': 'q1', 'started': True,
                          'service_disabled_reason':
                              'nova-drs: maintenance: x', 'error': None},
                         found['next'])
        self.assertEqual((True, False), (found['enabled'],
                                         found['service_disabled']))
        self.assertIn('q1, first in the queue, starts draining',
                      self.log.output)

    def test_an_operators_disable_is_not_for_exit_to_enable(self):
        self.compute.disable.return_value = (self.service, False)
        self.exit(rows(q1='queued'))
        self.store.start_queued.assert_called_once_with('q1', False)

    def test_no_start_while_another_host_drains_or_for_a_queued_exit(self):
        for left, state in ((rows(h2='blocked', q1='queued'), 'drained'),
                            (rows(q1='queued'), 'queued')):
            found = self.exit(left, state)
            self.assertIsNone(found['next'])
            self.compute.disable.assert_not_called()
            self.store.start_queued.assert_not_called()

    def test_an_empty_queue_starts_nothing(self):
        self.store.first_queued.return_value = None
        self.store.maintenance.return_value = [{'disabled_by_drs': False}]
        self.store.exit_maintenance.return_value = {'host': 'h1',
                                                    'state': 'draining'}
        self.compute.enable.return_value = (None, False)
        self.assertIsNone(maintenance.exit(self.store, 'h1')['next'])
        self.compute.disable.assert_not_called()

    def test_nova_refusing_leaves_the_exit_and_the_queue(self):
        from nova import exception
        for error in (exception.ServiceNotFound(service_id='q1'),
                      maintenance.UnknownHostError('no host q1')):
            self.compute.disable.side_effect = error
            found = self.exit(rows(q1='queued'))
            self.assertEqual(
                {'host': 'q1', 'started': False,
                 'service_disabled_reason': None, 'error': str(error)},
                found['next'])
            self.store.exit_maintenance.assert_called_with('h1')
            self.store.start_queued.assert_not_called()
            self.assertIn('cannot start the drain of q1, first in the '
                          'queue', self.log.output)

    def test_a_host_gone_from_the_queue_meanwhile(self):
        # Its exit came first: the service is enabled again.
        self.exit(rows(q1='queued'))
        self.compute.enable.reset_mock()
        self.store.start_queued.return_value = None
        self.assertIsNone(maintenance.exit(self.store, 'h1')['next'])
        self.assertEqual(
            [mock.call('h1', maintenance.PURPOSE, True),
             mock.call('q1', maintenance.PURPOSE, True)],
            self.compute.enable.call_args_list)

    def test_a_host_started_meanwhile_by_its_own_enter(self):
        found = []

        def enter_came_first(host=None):
            found.append(host)
            return [{'disabled_by_drs': True}]
        self.exit(rows(q1='queued'))
        self.compute.enable.reset_mock()
        self.store.start_queued.return_value = None
        self.store.maintenance.side_effect = enter_came_first
        self.assertIsNone(maintenance.exit(self.store, 'h1')['next'])
        # h1's own enable only: q1's drain is the enter's.
        self.compute.enable.assert_called_once_with(
            'h1', maintenance.PURPOSE, True)
        self.assertEqual(['h1', 'q1'], found)

    def test_a_queued_host_is_never_drained_nor_reported(self):
        store, telemetry = mock.Mock(), mock.Mock()
        maintenance.report_drains(
            store, telemetry, {'id': 'r1'},
            mock.Mock(drains=[model.Drain('q1', 2), model.Drain('m1', 1)]),
            live.Cloud(hosts={}, instances={}, migrations=[]),
            rows(q1='queued', m1='draining'))
        self.assertEqual(['m1'], [call.args[0] for call in
                                  store.report_maintenance.call_args_list])


class QueueInTheDatabaseTest(testtools.TestCase):
    """The queue through a DRS database on SQLite, whose states read back
    equal to the constants but never the same objects, with Nova's
    compute service mocked."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.store = test_store.sqlite_store(self)
        migration.sync(self.store.engine)
        self.compute = self.useFixture(fixtures.MockPatchObject(
            maintenance, 'compute_service')).mock
        self.compute.disable.side_effect = lambda host, purpose, reason: (
            mock.Mock(disabled=True, disabled_reason=f'drs {host}'), True)
        self.compute.enable.return_value = (mock.Mock(disabled=False), True)

    def states(self):
        return {host: (row['state'], row['queue_position'])
                for host, row in self.store.maintenance_hosts().items()}

    def test_one_at_a_time_drains_one_host_and_queues_the_others(self):
        for host in ('h1', 'h2', 'h3'):
            maintenance.enter(self.store, host, 'bios', True)
        self.assertEqual(['h1'], [call.args[0] for call in
                                  self.compute.disable.call_args_list])
        self.assertEqual({'h1': ('draining', None), 'h2': ('queued', 1),
                          'h3': ('queued', 2)}, self.states())
        found = self.store.maintenance_hosts()
        self.assertIsNot(maintenance.QUEUED, found['h2']['state'])
        self.assertEqual(['h1'], list(maintenance.draining(found)))
        self.assertEqual(frozenset({'h2', 'h3'}), maintenance.queued(found))
        # Entered again with the flag, a queued host keeps its place and
        # its service.
        maintenance.enter(self.store, 'h2', 'disks', True)
        self.assertEqual(1, self.compute.disable.call_count)
        self.assertEqual(('queued', 1), self.states()['h2'])
        # The exit of the host draining starts the first queued.
        self.assertEqual('h2', maintenance.exit(self.store, 'h1')['next'][
            'host'])
        self.assertEqual({'h2': ('draining', None), 'h3': ('queued', 1)},
                         self.states())

    def test_a_queue_that_could_not_start_is_not_drained(self):
        maintenance.enter(self.store, 'h1', None, True)
        maintenance.enter(self.store, 'h2', None, True)
        maintenance.enter(self.store, 'h3', None, True)
        self.compute.disable.side_effect = maintenance.UnknownHostError('x')
        self.assertFalse(maintenance.exit(self.store, 'h1')['next'][
            'started'])
        self.assertEqual({'h2': ('queued', 1), 'h3': ('queued', 2)},
                         self.states())
        # The exit of a queued host starts nothing: only the exit of the
        # last host draining does.
        self.compute.disable.reset_mock()
        self.assertIsNone(maintenance.exit(self.store, 'h3')['next'])
        self.compute.disable.assert_not_called()
        # No host drains: one entered with the flag drains now.
        self.compute.disable.side_effect = lambda host, purpose, reason: (
            mock.Mock(disabled=True, disabled_reason='drs'), True)
        self.assertEqual('draining', maintenance.enter(
            self.store, 'h4', None, True)['state'])
        self.assertEqual({'h2': ('queued', 1), 'h4': ('draining', None)},
                         self.states())
