"""Requests in flight, and a period's pacing points giving way to them."""

from unittest import mock

import fixtures
import testtools
from nova.scheduler import manager as nova_manager

from nova_drs_scheduler import manager
from nova_drs_scheduler import pacing


class GiveWayTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.requests = pacing.InFlight()
        self.sleep = self.useFixture(fixtures.MockPatch('time.sleep')).mock

    def test_no_request_yields_once_without_waiting(self):
        self.assertEqual(0.0, pacing.give_way(self.requests))
        self.assertEqual([mock.call(0)], self.sleep.call_args_list)

    def test_waits_in_steps_until_the_requests_end(self):
        first, second = self.requests.request(), self.requests.request()
        first.__enter__()
        second.__enter__()
        ends = iter([first, None, second])

        def sleep(seconds):
            if seconds:  # A step: one request more or less done.
                request = next(ends)
                if request is not None:
                    request.__exit__(None, None, None)
        self.sleep.side_effect = sleep
        waited = pacing.give_way(self.requests, step=0.01, limit=1)
        self.assertEqual(0, self.requests.count)
        self.assertEqual([mock.call(0)] + [mock.call(0.01)] * 3,
                         self.sleep.call_args_list)
        self.assertAlmostEqual(0.03, waited)

    def test_bounded_while_a_request_never_ends(self):
        with self.requests.request():
            waited = pacing.give_way(self.requests, step=0.01, limit=0.1)
        self.assertAlmostEqual(0.1, waited)
        self.assertEqual(11, self.sleep.call_count)  # One 0, ten steps.

    def test_count_drops_when_the_request_raises(self):
        with testtools.ExpectedException(ValueError):
            with self.requests.request():
                self.assertEqual(1, self.requests.count)
                raise ValueError()
        self.assertEqual(0, self.requests.count)

    def test_paced_gives_way_every_nth_item(self):
        with mock.patch.object(pacing, 'give_way') as give_way:
            self.assertEqual(list(range(7)), list(pacing.paced(
                range(7), every=3, requests=self.requests)))
        self.assertEqual([mock.call(self.requests)] * 2,
                         give_way.call_args_list)


class ManagerCountsRequestsTest(testtools.TestCase):

    def test_select_destinations_in_flight_while_it_runs(self):
        seen = []

        def nova_select(_self, context, **kwargs):
            seen.append(pacing.REQUESTS.count)
            raise RuntimeError('no valid host')

        scheduler = manager.DRSSchedulerManager.__new__(
            manager.DRSSchedulerManager)
        scheduler.host_manager = mock.Mock()
        before = pacing.REQUESTS.count
        with mock.patch.object(nova_manager.SchedulerManager,
                               'select_destinations', nova_select), \
                mock.patch('nova_drs_scheduler.owner_trait.'
                           'require_if_all_upgraded'):
            with testtools.ExpectedException(RuntimeError):
                scheduler.select_destinations(None, spec_obj=mock.Mock())
        self.assertEqual([before + 1], seen)
        self.assertEqual(before, pacing.REQUESTS.count)
