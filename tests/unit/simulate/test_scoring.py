"""The benchmark's accounting on numbers worked out by hand."""

import testtools

from nova_drs_scheduler.planning import relief
from nova_drs_scheduler.simulate import scoring


def _card(ping_pong_periods=3, host_vcpus=4, interval=60):
    return scoring.Scorecard(80.0, ping_pong_periods, host_vcpus, interval)


class ScorecardTest(testtools.TestCase):

    def test_overloaded_host_periods_and_worst(self):
        card = _card()
        card.observe({'a': 81.0, 'b': 80.0, 'c': 20.0})   # 80 is not over
        card.observe({'a': 95.5, 'b': 85.0, 'c': 20.0})
        card.observe({'a': 10.0, 'b': 10.0, 'c': 10.0})
        summary = card.summary()
        self.assertEqual([1, 2, 0], card.overloaded_series)
        self.assertEqual(3, summary['overloaded_host_periods'])
        self.assertEqual(95.5, summary['worst_overload_percent'])
        self.assertEqual(0.0, card.stddev_series[2])

    def test_overload_starts_count_each_episode_once(self):
        card = _card()
        card.observe({'a': 81.0, 'b': 50.0})
        card.observe({'a': 90.0, 'b': 85.0})     # a goes on; b starts
        card.observe({'a': 70.0})                # b gone from the reading
        card.observe({'a': 82.0, 'b': 83.0})     # both start again
        summary = card.summary()
        self.assertEqual(5, summary['overloaded_host_periods'])
        self.assertEqual(4, summary['overload_starts'])
        # None said to be DRS-caused.
        self.assertEqual(0, summary['drs_caused_overloaded_host_periods'])

    def test_stddev_mean_and_p95(self):
        card = _card()
        card.observe({'a': 40.0, 'b': 60.0})     # population sd 10
        card.observe({'a': 50.0, 'b': 50.0})     # 0
        summary = card.summary()
        self.assertEqual(5.0, summary['stddev_mean'])
        self.assertEqual(10.0, summary['stddev_p95'])

    def test_ping_pong_within_window_only(self):
        card = _card()
        card.migrated(0, 'vm', 'a', 'b', 1024)
        card.migrated(2, 'vm', 'b', 'a', 1024)    # left a at 0: 2 <= 3
        card.migrated(5, 'vm', 'a', 'b', 1024)    # left b at 2: 3 <= 3
        card.migrated(7, 'vm', 'b', 'a', 1024)    # left a at 5: 2
        card.migrated(10, 'vm', 'a', 'b', 1024)   # left b at 7: 3
        card.migrated(14, 'vm', 'b', 'a', 1024)   # left a at 10: 4 > 3
        card.migrated(15, 'other', 'b', 'c', 2048)
        summary = card.summary()
        self.assertEqual(4, summary['ping_pongs'])
        self.assertEqual(7, summary['migrations'])
        self.assertEqual(8.0, summary['gb_moved'])

    def test_move_to_a_new_host_is_not_a_ping_pong(self):
        card = _card(ping_pong_periods=100)
        card.migrated(0, 'vm', 'a', 'b', 1024)
        card.migrated(1, 'vm', 'b', 'c', 1024)
        self.assertEqual(0, card.summary()['ping_pongs'])

    def test_refusals_and_plan_times(self):
        card = _card()
        card.refused('CoreFilter')
        card.refused('CoreFilter')
        card.refused('already migrating')
        for seconds in (0.001, 0.002, 0.003, 0.010):
            card.planned(0.020, seconds)
        summary = card.summary()
        self.assertEqual(3, summary['failed_migrations'])
        self.assertEqual(2, card.failed['CoreFilter'])
        self.assertEqual(20.0, summary['input_ms_mean'])
        self.assertEqual(4.0, summary['plan_ms_mean'])
        self.assertEqual(10.0, summary['plan_ms_p95'])
        self.assertEqual(30.0, summary['total_ms_p95'])

    def test_rounding(self):
        card = _card()
        card.observe({'a': 0.0, 'b': 1.0, 'c': 3.0})   # sd sqrt(14) / 3
        card.observe({'a': 95.26, 'b': 95.26})         # 0
        card.planned(0.02012356, 0.00123456)
        card.migrated(0, 'vm', 'a', 'b', 103000)       # 100.5859 GB
        summary = card.summary()
        self.assertEqual(95.3, summary['worst_overload_percent'])
        self.assertEqual(0.62, summary['stddev_mean'])
        self.assertEqual(1.25, summary['stddev_p95'])
        self.assertEqual(20.124, summary['input_ms_mean'])
        self.assertEqual(1.235, summary['plan_ms_mean'])
        self.assertEqual(1.235, summary['plan_ms_p95'])
        self.assertEqual(21.358, summary['total_ms_p95'])
        self.assertEqual(100.6, summary['gb_moved'])

    def test_gb_moved_rounds_at_half_a_tenth(self):
        # 0.05 GB is 51.2 MB.
        for memory_mb, gb in ((51, 0.0), (52, 0.1)):
            card = _card()
            card.migrated(0, 'vm', 'a', 'b', memory_mb)
            self.assertEqual(gb, card.summary()['gb_moved'])

    def test_nothing_observed_scores_zero(self):
        summary = _card().summary()
        self.assertIsNone(summary.pop('relief_held_percent'))
        self.assertEqual(dict.fromkeys(summary, 0), summary)

    def test_unserved_core_minutes(self):
        # 4-CPU hosts measured every 5 minutes: 150 % is 2 cores over
        # capacity for 5 minutes, 10 core-minutes; 125 % adds 5; 100 %
        # exactly is served.
        card = _card(host_vcpus=4, interval=300)
        card.observe({'a': 150.0, 'b': 100.0, 'c': 20.0})
        card.observe({'a': 125.0, 'b': 99.0, 'c': 20.0})
        self.assertEqual(15.0, card.summary()['unserved_core_minutes'])
        # At one-minute periods on 32 CPUs: 0.5 % is 0.16 core-minute.
        card = _card(host_vcpus=32, interval=60)
        card.observe({'a': 100.5, 'b': 99.5})
        self.assertEqual(0.2, card.summary()['unserved_core_minutes'])
        # Past twice its CPUs: 110 points over, 4.4 cores for a minute.
        card = _card(host_vcpus=4, interval=60)
        card.observe({'a': 210.0})
        self.assertEqual(4.4, card.summary()['unserved_core_minutes'])

    def test_unserved_in_the_first_period_of_each_episode(self):
        # 4-CPU hosts at one-minute periods: a point over 100 % is 0.04
        # core-minute.
        card = _card(host_vcpus=4, interval=60)
        card.observe({'a': 150.0, 'b': 100.0})   # a starts: 50 points
        card.observe({'a': 125.0, 'b': 110.0})   # a goes on; b starts: 10
        card.observe({'a': 90.0})                # b gone from the reading
        card.observe({'a': 120.0, 'b': 105.0})   # both start again: 25
        summary = card.summary()
        self.assertEqual(4.4, summary['unserved_core_minutes'])
        self.assertEqual(3.4, summary['unserved_first_core_minutes'])
        self.assertEqual(4, summary['starved_starts'])
        # Past twice its CPUs: 110 points over.
        card.observe({'a': 90.0, 'c': 210.0})
        self.assertEqual(7.8, card.summary()['unserved_first_core_minutes'])
        # 32 CPUs at 5-minute periods: a point is 1.6 core-minutes, and
        # half a point past 100 % counts.
        card = _card(host_vcpus=32, interval=300)
        self.assertEqual(0.0, card.summary()['unserved_first_core_minutes'])
        card.observe({'a': 100.5, 'b': 100.0})
        self.assertEqual(0.8, card.summary()['unserved_first_core_minutes'])

    def test_instance_minutes_in_migration(self):
        card = _card()
        card.migrated(0, 'vm', 'a', 'b', 1024)
        card.migrated(3, 'other', 'a', 'c', 2048)
        # Counted as each copy ends.
        card.copied(30.0)
        card.copied(96.0)
        summary = card.summary()
        self.assertEqual(2.1, summary['instance_minutes_in_migration'])
        self.assertEqual(2, summary['migrations'])
        # Rounded to a tenth of a minute either side of 1.05 minutes.
        for seconds, minutes in ((62.9, 1.0), (63.1, 1.1)):
            card = _card()
            card.copied(seconds)
            self.assertEqual(
                minutes, card.summary()['instance_minutes_in_migration'])

    def test_planning_between_periods_adds_to_the_last(self):
        card = _card()
        card.planned(0.001, 0.002)
        card.planned(0.003, 0.004)
        card.planned(0.005, 0.006)
        card.planned_between(0.010, 0.020)
        self.assertEqual(([0.001, 0.003, 0.015], [0.002, 0.004, 0.026]), (
            [round(s, 6) for s in card.input_seconds],
            [round(s, 6) for s in card.plan_seconds]))

    def test_drs_caused_host_periods(self):
        card = _card()
        card.observe({'a': 90.0, 'b': 85.0}, caused=1)
        card.observe({'a': 90.0, 'b': 70.0}, caused=0)
        summary = card.summary()
        self.assertEqual(3, summary['overloaded_host_periods'])
        self.assertEqual(1, summary['drs_caused_overloaded_host_periods'])

    def test_relief_checks_counted_and_held_share(self):
        card = _card()
        promise = {'source_cpu_before': 95.0, 'source_cpu': 70.0,
                   'destination_cpu': 60.0}
        card.relieved(relief.check(promise, 75.0, 60.0, 80.0, 80.0))
        card.relieved(relief.check(promise, 85.0, 60.0, 80.0, 80.0))
        card.relieved(relief.check(promise, 70.0, 81.0, 80.0, 80.0))
        # A planner that records no load before the move: not checked.
        card.relieved(relief.check({'source_cpu': 70.0}, 75.0, 60.0, 80.0,
                                   80.0))
        summary = card.summary()
        self.assertEqual(3, summary['relief_checked'])
        self.assertEqual(33.3, summary['relief_held_percent'])
        card.relieved(relief.check(promise, 74.0, 60.0, 80.0, 80.0))
        card.relieved(relief.check(promise, 73.0, 60.0, 80.0, 80.0))
        self.assertEqual(60.0, card.summary()['relief_held_percent'])


class ArrivalsTest(testtools.TestCase):
    """Host a at 90 % (threshold 80) holds x (15 points) and y (5), both
    arrived by a move; b at 95 % holds z (10)."""

    def setUp(self):
        super().setUp()
        self.arrivals = scoring.Arrivals(periods=3)
        self.load = {'x': 15.0, 'y': 5.0, 'z': 10.0, 'w': 40.0}
        self.location = {'x': 'a', 'y': 'a', 'z': 'b', 'w': 'a'}

    def _caused(self, period, percent):
        return self.arrivals.caused(period, percent, 80.0, self.location,
                                    self.load.get)

    def test_a_host_over_only_with_its_arrivals(self):
        self.arrivals.arrived(10, 'x', 'a')
        self.arrivals.arrived(11, 'z', 'b')
        # a: 90 - 15 = 75, not over without x; b: 95 - 10 = 85 still
        # over; c: no arrivals; d: not over.
        self.assertEqual({'a'}, self._caused(12, {'a': 90.0, 'b': 95.0,
                                                  'c': 99.0, 'd': 50.0}))
        # Arrivals add up: y alone is not enough, x and y together are.
        self.arrivals = scoring.Arrivals(periods=3)
        self.arrivals.arrived(10, 'y', 'a')
        self.assertEqual(set(), self._caused(10, {'a': 90.0}))
        self.arrivals.arrived(10, 'x', 'a')
        self.assertEqual({'a'}, self._caused(10, {'a': 100.0}))
        self.assertEqual(set(), self._caused(10, {'a': 100.1}))

    def test_a_host_not_over_is_never_caused(self):
        self.arrivals.arrived(10, 'x', 'a')
        self.arrivals.arrived(10, 'z', 'b')
        # At the threshold exactly, or under it, with arrivals: not over;
        # a host under it first does not stop the scan.
        self.assertEqual(set(), self._caused(10, {'a': 80.0, 'b': 70.0}))
        self.assertEqual({'a'}, self._caused(10, {'b': 70.0, 'a': 90.0}))

    def test_the_window_is_counted_in_periods_since_the_arrival(self):
        self.arrivals.arrived(3, 'x', 'a')
        self.assertEqual(['x'], self.arrivals.recent(5, 'a', self.location))
        self.assertEqual([], self.arrivals.recent(7, 'a', self.location))

    def test_an_arrival_that_moved_on_is_dropped(self):
        # x arrived on b, then moved to a (a name sorting first), and a
        # host's name equal but not the same string still matches.
        self.arrivals.arrived(10, 'x', 'b')
        self.assertEqual([], self.arrivals.recent(11, 'b', self.location))
        self.arrivals.arrived(10, 'w', 'host')
        self.assertEqual(['w'], self.arrivals.recent(
            11, ''.join(['ho', 'st']), {'w': 'host'}))

    def test_only_recent_arrivals_still_on_the_host(self):
        self.arrivals.arrived(10, 'x', 'a')
        self.assertEqual(['x'], self.arrivals.recent(12, 'a', self.location))
        # Three periods after: out of the window.
        self.assertEqual([], self.arrivals.recent(13, 'a', self.location))
        self.assertEqual(set(), self._caused(13, {'a': 90.0}))
        # Left the host again: no longer its doing.
        self.arrivals.arrived(20, 'x', 'a')
        self.location['x'] = 'b'
        self.assertEqual(set(), self._caused(20, {'a': 90.0}))
        # A later arrival on the same host restarts the window.
        self.location['x'] = 'a'
        self.arrivals.arrived(30, 'x', 'a')
        self.assertEqual({'a'}, self._caused(32, {'a': 90.0}))

    def test_percentile(self):
        self.assertEqual(0.0, scoring.percentile([], 0.95))
        self.assertEqual(95, scoring.percentile(range(1, 101), 0.95))
        self.assertEqual(7, scoring.percentile([7], 0.5))
        self.assertEqual(1, scoring.percentile([3, 1, 2], 0.0))
