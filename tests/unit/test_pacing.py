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

    def steps(self):
        return [c for c in self.sleep.call_args_list if c != mock.call(0)]

    def test_gives_way_at_most_its_budget_in_all(self):
        pace = pacing.Budgeted(self.requests, budget=0.5)
        with self.requests.request():
            for _ in range(5):
                pace()
        # 0.2 s, 0.2 s, then the 0.1 s left; after that only sleep(0).
        self.assertAlmostEqual(0.5, pace.waited)
        self.assertAlmostEqual(0.5, len(self.steps()) * pacing.STEP)
        self.assertEqual([mock.call(0)] * 2,
                         self.sleep.call_args_list[-2:])

    def test_no_request_no_wait_and_budget_kept(self):
        pace = pacing.Budgeted(self.requests, budget=0.5)
        for _ in range(3):
            pace()
        self.assertEqual(0.0, pace.waited)
        self.assertEqual(0.5, pace.left)
        self.assertEqual([mock.call(0)] * 3, self.sleep.call_args_list)


class UnlessTest(testtools.TestCase):

    def test_requests_count_as_none_while_one_waits(self):
        requests, waiting = pacing.InFlight(), pacing.InFlight()
        unless = pacing.Unless(requests, waiting)
        with requests.request(), requests.request():
            self.assertEqual(2, unless.count)
            with waiting.request():
                self.assertEqual(0, unless.count)
            self.assertEqual(2, unless.count)
        self.assertEqual(0, unless.count)


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
