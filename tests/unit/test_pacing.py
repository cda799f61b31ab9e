"""Requests in flight, and a period's pacing points giving way to them."""

import threading
from unittest import mock

import fixtures
import testtools
from nova.scheduler import manager as nova_manager
from oslo_config import fixture as config_fixture

from nova_drs_scheduler import conf
from nova_drs_scheduler import manager
from nova_drs_scheduler import pacing
from nova_drs_scheduler.rebalance import rebalancer


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

    def paced(self, items, **kwargs):
        """What ``paced`` yields, with ``'pause'`` where it pauses."""
        seen = []
        with mock.patch.object(pacing, 'pause',
                               lambda: seen.append('pause')):
            for item in pacing.paced(items, **kwargs):
                seen.append(item)
        return seen

    def test_paced_pauses_before_every_nth_item(self):
        self.assertEqual([0, 1, 'pause', 2, 3, 4, 'pause', 5, 6],
                         self.paced(range(7), every=3))

    def test_paced_by_default_pauses_before_every_50th_item(self):
        # doc/architecture.md: a pacing point every 50 hosts.
        seen = self.paced(range(100))
        self.assertEqual([49, 99], [seen[i + 1] for i, item
                                    in enumerate(seen) if item == 'pause'])
        self.assertEqual(list(range(100)),
                         [item for item in seen if item != 'pause'])

    def steps(self):
        return [c for c in self.sleep.call_args_list if c != mock.call(0)]

    def test_gives_way_at_most_its_budget_in_all(self):
        pace = pacing.Budgeted(self.requests, budget=0.5)
        waits = []
        with self.requests.request():
            for _ in range(5):
                before = pace.waited
                pace()
                waits.append(round(pace.waited - before, 6))
        # 0.2 s a point (doc/host-manager.md), then the 0.1 s left; after
        # that only sleep(0).
        self.assertEqual([0.2, 0.2, 0.1, 0.0, 0.0], waits)
        self.assertAlmostEqual(0.5, pace.waited)
        self.assertAlmostEqual(0.5, len(self.steps()) * pacing.STEP)
        self.assertEqual([mock.call(0)] * 2,
                         self.sleep.call_args_list[-2:])

    def test_a_budget_overspent_by_rounding_then_waits_no_more(self):
        # 0.099 s is 49.5 steps, rounded to 50: the budget ends 1 ms below
        # zero, and a limit below zero must not make a point wait.
        def sleep(seconds):
            if len(self.sleep.call_args_list) > 1000:
                raise AssertionError('a point waits for ever')
        self.sleep.side_effect = sleep
        pace = pacing.Budgeted(self.requests, budget=0.099)
        with self.requests.request():
            pace()
            pace()
        self.assertAlmostEqual(0.1, pace.waited)
        self.assertEqual([mock.call(0)] + [mock.call(0.002)] * 50 +
                         [mock.call(0)], self.sleep.call_args_list)

    def test_no_request_no_wait_and_budget_kept(self):
        pace = pacing.Budgeted(self.requests, budget=0.5)
        for _ in range(3):
            pace()
        self.assertEqual(0.0, pace.waited)
        self.assertEqual(0.5, pace.left)
        self.assertEqual([mock.call(0)] * 3, self.sleep.call_args_list)


    def test_budgeted_waits_at_most_its_limit_at_a_time(self):
        pace = pacing.Budgeted(self.requests, budget=2.0, limit=0.5)
        with self.requests.request():
            pace()
        self.assertAlmostEqual(0.5, pace.waited)


class PauseTest(testtools.TestCase):
    """A pacing point: within a period's budget, it waits a request out
    (longer than one outside), at most the budget in all."""

    def setUp(self):
        super().setUp()
        self.sleep = self.useFixture(fixtures.MockPatch('time.sleep')).mock

    def waited(self):
        steps = [c for c in self.sleep.call_args_list if c != mock.call(0)]
        self.sleep.reset_mock()
        return len(steps) * pacing.STEP

    def test_outside_a_budget_a_point_waits_at_most_limit(self):
        with pacing.REQUESTS.request():
            pacing.pause()
        # doc/host-manager.md: at most 0.2 s at a point, in 2 ms steps.
        self.assertEqual([mock.call(0)] + [mock.call(0.002)] * 100,
                         self.sleep.call_args_list)

    def test_within_a_budget_longer_at_a_point_and_bounded_in_all(self):
        with pacing.budget(1.5) as pace, pacing.REQUESTS.request():
            pacing.pause()
            self.assertAlmostEqual(pacing.PERIOD_LIMIT, self.waited())
            pacing.pause()
            self.assertAlmostEqual(0.5, self.waited())
            pacing.pause()  # Budget spent: only lets others run.
            self.assertEqual([mock.call(0)], self.sleep.call_args_list)
        self.assertAlmostEqual(1.5, pace.waited)

    def test_no_request_no_wait_within_a_budget(self):
        with pacing.budget(1.5) as pace:
            pacing.pause()
        self.assertEqual(0.0, pace.waited)
        self.assertEqual([mock.call(0)], self.sleep.call_args_list)

    def test_the_budget_ends_with_its_block(self):
        with pacing.budget(0.0):
            with pacing.budget(1.5):
                pass
            with pacing.REQUESTS.request():
                pacing.pause()  # The outer block's budget: spent.
            self.assertEqual(0.0, self.waited())
        with pacing.REQUESTS.request():
            pacing.pause()
        self.assertAlmostEqual(pacing.LIMIT, self.waited())

    def test_the_budget_is_the_threads_own(self):
        with pacing.budget(1.5), pacing.REQUESTS.request():
            other = threading.Thread(target=pacing.pause)
            other.start()
            other.join()
        self.assertAlmostEqual(pacing.LIMIT, self.waited())


class PeriodBudgetTest(testtools.TestCase):

    def test_a_period_waits_out_requests_within_half_an_interval(self):
        self.useFixture(config_fixture.Config(conf.CONF)).config(
            rebalance_interval=1, automation='manual', group='drs')
        sleep = self.useFixture(fixtures.MockPatch('time.sleep')).mock
        period = rebalancer.Rebalancer.__new__(rebalancer.Rebalancer)
        period.leader = mock.Mock(**{'check.return_value': (True, '')})
        period.telemetry = mock.Mock()

        def lead(context, rec):
            with pacing.REQUESTS.request():  # Never ends.
                for _ in range(3):
                    pacing.pause()
        period._lead = lead
        period.run(None)
        steps = [c for c in sleep.call_args_list if c != mock.call(0)]
        # Half of the 1 s interval; outside a period 3 x LIMIT.
        self.assertAlmostEqual(0.5, len(steps) * pacing.STEP)
        with pacing.REQUESTS.request():
            pacing.pause()  # The period's budget ended with it.
        self.assertEqual(len(steps) + round(pacing.LIMIT / pacing.STEP),
                         len([c for c in sleep.call_args_list
                              if c != mock.call(0)]))


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
