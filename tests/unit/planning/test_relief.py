"""What a move really bought, against what its plan expected."""

import testtools

from nova_drs_scheduler.planning import relief

EXPECTED = {'source_cpu_before': 90.0, 'source_cpu': 70.0,
            'destination_cpu': 50.0}


class CheckTest(testtools.TestCase):

    def test_held_when_the_source_stays_under_and_the_destination_too(self):
        self.assertEqual(
            {'source_cpu': 72.0, 'destination_cpu': 55.0,
             'relief_points': 18.0, 'expected_points': 20.0,
             'source_relieved': True, 'destination_spared': True,
             'held': True},
            relief.check(EXPECTED, 72.0, 55.0, 80.0, 80.0))

    def test_figures_to_two_places(self):
        expected = dict(EXPECTED, source_cpu=40.123)
        found = relief.check(expected, 40.12345, 60.98765, 80.0, 80.0)
        self.assertEqual((40.12, 60.99, 49.88, 49.88),
                         (found['source_cpu'], found['destination_cpu'],
                          found['relief_points'], found['expected_points']))

    def test_at_the_threshold_is_not_over(self):
        self.assertTrue(relief.check(EXPECTED, 80.0, 80.0, 80.0, 80.0)
                        ['held'])

    def test_a_source_back_over_its_threshold_was_not_relieved(self):
        found = relief.check(EXPECTED, 80.5, 55.0, 80.0, 80.0)
        self.assertEqual((False, True, False),
                         (found['source_relieved'],
                          found['destination_spared'], found['held']))

    def test_a_destination_pushed_over_its_own_threshold(self):
        found = relief.check(EXPECTED, 60.0, 75.5, 80.0, 75.0)
        self.assertEqual((True, False, False),
                         (found['source_relieved'],
                          found['destination_spared'], found['held']))

    def test_nothing_to_check(self):
        self.assertIsNone(relief.check(EXPECTED, None, 50.0, 80.0, 80.0))
        self.assertIsNone(relief.check(EXPECTED, 50.0, None, 80.0, 80.0))
        drain = {'source_cpu': 0.0, 'destination_cpu': 50.0}
        self.assertIsNone(relief.check(drain, 50.0, 50.0, 80.0, 80.0))


class HeldShareTest(testtools.TestCase):

    def test_counts_the_checked_ones(self):
        held = relief.check(EXPECTED, 70.0, 50.0, 80.0, 80.0)
        missed = relief.check(EXPECTED, 85.0, 50.0, 80.0, 80.0)
        self.assertEqual((1, 2), relief.held_share([held, None, missed]))
        self.assertEqual((0, 0), relief.held_share([]))


class LoadStayedTest(testtools.TestCase):
    """Whether the moved instance still carries the load it moved with."""

    MOVED = dict(EXPECTED, instance_cores=2.0)

    def test_half_the_planned_load_stayed_less_did_not(self):
        found = relief.check(self.MOVED, 70.0, 50.0, 80.0, 80.0, 1.0)
        self.assertEqual((1.0, True),
                         (found['instance_cores'], found['load_stayed']))
        found = relief.check(self.MOVED, 70.0, 50.0, 80.0, 80.0, 0.999)
        self.assertEqual((0.999, False),
                         (found['instance_cores'], found['load_stayed']))
        self.assertTrue(relief.check(self.MOVED, 70.0, 50.0, 80.0, 80.0,
                                     3.0)['load_stayed'])

    def test_the_load_to_three_places(self):
        found = relief.check(self.MOVED, 70.0, 50.0, 80.0, 80.0, 1.23456)
        self.assertEqual(1.235, found['instance_cores'])

    def test_unknown_without_either_load(self):
        for expected, now in ((self.MOVED, None), (EXPECTED, 1.0)):
            found = relief.check(expected, 70.0, 50.0, 80.0, 80.0, now)
            self.assertNotIn('load_stayed', found)
            self.assertNotIn('instance_cores', found)
        # The held verdict does not depend on it.
        self.assertTrue(relief.check(self.MOVED, 70.0, 50.0, 80.0, 80.0,
                                     0.0)['held'])

    def test_an_idle_instance_moved_idle_stayed(self):
        idle = dict(EXPECTED, instance_cores=0.0)
        self.assertTrue(relief.check(idle, 70.0, 50.0, 80.0, 80.0,
                                     0.0)['load_stayed'])


class StayedCountsTest(testtools.TestCase):

    def test_per_source_within_the_window(self):
        now = 10000.0
        checks = [(now, 'a', True), (now - 10, 'a', False),
                  (now - relief.LEARN_SECONDS, 'b', True),
                  (now - relief.LEARN_SECONDS - 0.1, 'b', False),
                  (now, 'c', None)]
        self.assertEqual({'a': (1, 2), 'b': (1, 1)},
                         relief.stayed_counts(checks, now))

    def test_nothing_learnt_from_nothing(self):
        self.assertEqual({}, relief.stayed_counts([], 0.0))

    def test_two_hours_twenty_checks_half_the_load(self):
        self.assertEqual((7200.0, 20, 0.5),
                         (relief.LEARN_SECONDS, relief.LEARN_MIN_CHECKS,
                          relief.STAYED_SHARE))
