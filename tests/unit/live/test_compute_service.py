"""Disabling and enabling a host's nova-compute for nova-drs: only what
nova-drs disabled, for its own purpose, is enabled again."""

from unittest import mock

import fixtures
import testtools
from nova import exception

from nova_drs_scheduler.rebalance import compute_service


class Service:
    host = 'h1'

    def __init__(self, disabled=False, reason=None):
        self.disabled, self.disabled_reason = disabled, reason


class ComputeServiceTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(fixtures.MockPatchObject(
            compute_service.compute_api, 'HostAPI')).mock.return_value
        self.useFixture(fixtures.MockPatchObject(
            compute_service.executor, 'drs_context',
            return_value=mock.sentinel.context))

    def found(self, service):
        self.api.service_get_by_compute_host.return_value = service
        return service

    def test_disables_an_enabled_service_with_its_reason(self):
        service = self.found(Service())
        self.assertEqual((service, True), compute_service.disable(
            'h1', 'standby', 'quiet pool'))
        self.assertEqual((True, 'nova-drs: standby: quiet pool'),
                         (service.disabled, service.disabled_reason))
        self.api.service_get_by_compute_host.assert_called_once_with(
            mock.sentinel.context, 'h1')
        self.api.service_update.assert_called_once_with(
            mock.sentinel.context, service)

    def test_a_disable_of_its_own_purpose_is_ours_without_an_update(self):
        service = self.found(Service(True, 'nova-drs: standby: earlier'))
        self.assertEqual((service, True),
                         compute_service.disable('h1', 'standby', None))
        self.api.service_update.assert_not_called()

    def test_a_disable_of_another_purpose_or_person_is_not_ours(self):
        for reason in ('nova-drs: maintenance', 'disk', None):
            service = self.found(Service(True, reason))
            self.assertEqual((service, False),
                             compute_service.disable('h1', 'standby', 'x'))
        self.api.service_update.assert_not_called()

    def test_rewords_its_own_disable_only(self):
        service = Service(True, 'nova-drs: maintenance: bios')
        compute_service.reword(service, 'maintenance', 'bios')
        self.api.service_update.assert_not_called()
        self.assertIs(service, compute_service.reword(
            service, 'maintenance', 'disk'))
        self.assertEqual('nova-drs: maintenance: disk',
                         service.disabled_reason)
        self.api.service_update.assert_called_once_with(
            mock.sentinel.context, service)
        # A new reason that sorts before the old one is written too.
        compute_service.reword(service, 'maintenance', 'bios')
        self.assertEqual('nova-drs: maintenance: bios',
                         service.disabled_reason)
        self.assertEqual(2, self.api.service_update.call_count)
        self.api.service_update.reset_mock()
        for theirs in (Service(True, 'broken fan'),
                       Service(True, 'nova-drs: standby: quiet'),
                       Service(False, 'nova-drs: maintenance: old')):
            reason = theirs.disabled_reason
            compute_service.reword(theirs, 'maintenance', 'disk')
            self.assertEqual(reason, theirs.disabled_reason)
        self.api.service_update.assert_not_called()

    def test_the_reason_fits_novas_255_characters(self):
        self.assertEqual(255, len(compute_service.disabled_reason(
            'standby', 'x' * 300)))
        self.assertEqual('nova-drs: standby',
                         compute_service.disabled_reason('standby', None))

    def test_enables_only_its_own_disable(self):
        service = self.found(Service(True, 'nova-drs: standby: quiet'))
        self.assertEqual((service, False), compute_service.enable(
            'h1', 'standby', disabled_by_drs=False))
        self.assertEqual((service, False), compute_service.enable(
            'h1', 'maintenance', disabled_by_drs=True))
        self.api.service_update.assert_not_called()
        self.assertEqual((service, True), compute_service.enable(
            'h1', 'standby', disabled_by_drs=True))
        self.assertEqual((False, None),
                         (service.disabled, service.disabled_reason))
        self.api.service_update.assert_called_once_with(
            mock.sentinel.context, service)

    def test_an_operator_who_changed_the_reason_keeps_the_disable(self):
        service = self.found(Service(True, 'broken fan'))
        self.assertEqual((service, False), compute_service.enable(
            'h1', 'standby', disabled_by_drs=True))
        self.assertTrue(service.disabled)

    def test_an_unknown_host(self):
        for error in (exception.HostMappingNotFound(name='h1'),
                      exception.ComputeHostNotFound(host='h1')):
            self.api.service_get_by_compute_host.side_effect = error
            self.assertRaisesRegex(
                compute_service.UnknownHostError,
                "no nova-compute service on host 'h1'",
                compute_service.disable, 'h1', 'standby', None)
            self.assertEqual((None, False), compute_service.enable(
                'h1', 'standby', True))
