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
