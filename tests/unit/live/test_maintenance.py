"""What the leader stores and logs of each drain in maintenance."""

import logging
from unittest import mock

import fixtures
import testtools

from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import maintenance


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
