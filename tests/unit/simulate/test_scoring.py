"""The benchmark's accounting on numbers worked out by hand."""

import testtools

from nova_drs_scheduler.simulate import scoring


class ScorecardTest(testtools.TestCase):

    def test_overloaded_host_periods_and_worst(self):
        card = scoring.Scorecard(threshold=80.0, ping_pong_periods=3)
        card.observe({'a': 81.0, 'b': 80.0, 'c': 20.0})   # 80 is not over
        card.observe({'a': 95.5, 'b': 85.0, 'c': 20.0})
        card.observe({'a': 10.0, 'b': 10.0, 'c': 10.0})
        summary = card.summary()
        self.assertEqual([1, 2, 0], card.overloaded_series)
        self.assertEqual(3, summary['overloaded_host_periods'])
        self.assertEqual(95.5, summary['worst_overload_percent'])
        self.assertEqual(0.0, card.stddev_series[2])

    def test_stddev_mean_and_p95(self):
        card = scoring.Scorecard(80.0, 3)
        card.observe({'a': 40.0, 'b': 60.0})     # population sd 10
        card.observe({'a': 50.0, 'b': 50.0})     # 0
        summary = card.summary()
        self.assertEqual(5.0, summary['stddev_mean'])
        self.assertEqual(10.0, summary['stddev_p95'])

    def test_ping_pong_within_window_only(self):
        card = scoring.Scorecard(80.0, ping_pong_periods=3)
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
        card = scoring.Scorecard(80.0, ping_pong_periods=100)
        card.migrated(0, 'vm', 'a', 'b', 1024)
        card.migrated(1, 'vm', 'b', 'c', 1024)
        self.assertEqual(0, card.summary()['ping_pongs'])

    def test_refusals_and_plan_times(self):
        card = scoring.Scorecard(80.0, 3)
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
        card = scoring.Scorecard(80.0, 3)
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
            card = scoring.Scorecard(80.0, 3)
            card.migrated(0, 'vm', 'a', 'b', memory_mb)
            self.assertEqual(gb, card.summary()['gb_moved'])

    def test_nothing_observed_scores_zero(self):
        summary = scoring.Scorecard(80.0, 3).summary()
        self.assertEqual(dict.fromkeys(summary, 0), summary)

    def test_percentile(self):
        self.assertEqual(0.0, scoring.percentile([], 0.95))
        self.assertEqual(95, scoring.percentile(range(1, 101), 0.95))
        self.assertEqual(7, scoring.percentile([7], 0.5))
        self.assertEqual(1, scoring.percentile([3, 1, 2], 0.0))
