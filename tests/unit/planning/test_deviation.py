"""A destination's spread: its samples' deviation and how it is judged."""

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import planner
from tests import snapshots as h


def feed(state, cpus, step=60):
    return [state.update(i * step, {'h1': metrics.HostSample(i * step, c)})
            ['h1'] for i, c in enumerate(cpus)]


def windows(halflife=600):
    return metrics.MetricsWindows(1, 1, 180, 80.0, 90.0, halflife=halflife)


class DeviationArithmeticTest(testtools.TestCase):

    def test_first_sample_has_no_spread(self):
        self.assertEqual(0.0, metrics.ewm_variance(None, None, 70.0, 0, 600))

    def test_off_without_halflife(self):
        self.assertEqual(0.0, metrics.ewm_variance(50.0, 9.0, 90.0, 60, 0))

    def test_new_sample_adds_its_weighted_distance(self):
        # Half a weight each: 0.5 * (4 + 0.5 * (60 - 50) ** 2) = 27.
        self.assertEqual(27.0,
                         metrics.ewm_variance(50.0, 4.0, 60.0, 600, 600))

    def test_no_time_passed_changes_nothing(self):
        self.assertEqual(4.0, metrics.ewm_variance(50.0, 4.0, 90.0, 0, 600))

    def test_a_clock_going_back_changes_nothing(self):
        self.assertEqual(4.0,
                         metrics.ewm_variance(50.0, 4.0, 90.0, -0.5, 600))

    def test_unknown_spread_starts_at_none(self):
        self.assertEqual(0.0, metrics.ewm_variance(50.0, None, 70.0, 60, 600))

    def test_negative_halflife_is_off(self):
        self.assertEqual(0.0, metrics.ewm_variance(50.0, 9.0, 90.0, 60, -600))

    def test_a_short_halflife_still_counts(self):
        # One half-life passed: 0.5 * (0 + 0.5 * (60 - 50) ** 2) = 25.
        self.assertEqual(25.0, metrics.ewm_variance(50.0, 0.0, 60.0, 1, 1))


class HostDeviationTest(testtools.TestCase):

    def test_off_without_halflife(self):
        status = feed(windows(halflife=0), [50, 90])[-1]
        self.assertIsNone(status.cpu_deviation)

    def test_smooth_host_has_none_bursty_host_has_some(self):
        smooth = feed(windows(), [60] * 30)[-1]
        bursty = feed(windows(), [50, 70] * 15)[-1]
        self.assertEqual(0.0, smooth.cpu_deviation)
        # Alternating +-10 around 60: a deviation near 10.
        self.assertGreater(bursty.cpu_deviation, 8.0)
        self.assertLess(bursty.cpu_deviation, 11.0)

    def test_a_step_shows_as_spread_that_fades(self):
        statuses = feed(windows(), [50] * 30 + [65] * 120)
        after_step = statuses[31].cpu_deviation
        self.assertGreater(after_step, 2.0)
        self.assertLess(statuses[-1].cpu_deviation, 0.5)

    def test_survives_a_restart_and_goes_with_staleness(self):
        state = windows()
        feed(state, [50, 70, 50, 70])
        restored = windows()
        restored.restore(state.export())
        status = restored.update(240, {'h1': metrics.HostSample(240, 60)})
        self.assertGreater(status['h1'].cpu_deviation, 5.0)
        self.assertIsNone(restored.update(1000, {'h1': None})
                          ['h1'].cpu_deviation)

    def test_record_without_deviation_restores_as_smooth(self):
        # Records written before the deviation existed.
        state = windows()
        state.restore({'h1': {'counter': 0, 'samples': [[0, 60, None]],
                              'expected': 60.0}})
        status = state.update(60, {'h1': metrics.HostSample(60, 60)})
        self.assertEqual(0.0, status['h1'].cpu_deviation)

    def test_negative_recorded_variance_restores_as_smooth(self):
        # A damaged record must not make the deviation's root fail.
        state = windows()
        state.restore({'h1': {'counter': 0, 'samples': [[0, 60, None]],
                              'expected': 60.0, 'variance': -4.0}})
        status = state.update(60, {'h1': metrics.HostSample(60, 60)})
        self.assertEqual(0.0, status['h1'].cpu_deviation)


def plan(hosts, deviations, cores=1.0):
    instances = [h.instance('i1', 'hot', cores)]
    return planner.plan(h.snapshot(hosts, instances,
                                   destination_deviations=deviations),
                        h.allow_all)


class DestinationRankTest(testtools.TestCase):
    """``balanced`` ranks destinations with their spread, and judges the
    margin without it."""

    def test_smooth_destination_is_preferred_to_a_bursty_one(self):
        # 'bursty' ends at 66%, 'smooth' at 68%: by load alone 'bursty'
        # wins; with 2 deviations it ranks at 66 + 8 = 74% and 'smooth'
        # (68 + 0) takes the instance.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('bursty', 56.0, cpu_deviation=4.0),
                 h.host('smooth', 58.0, cpu_deviation=0.0)]
        self.assertEqual('smooth', plan(hosts, 2.0).moves[0].destination)
        self.assertEqual('bursty', plan(hosts, 0.0).moves[0].destination)

    def test_spread_never_rules_a_destination_out(self):
        # 66 + 10 = 76% would be past the margin (75%) with its spread,
        # but only the projection is judged: 'bursty' is the only host and
        # still takes the instance.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('bursty', 56.0, cpu_deviation=5.0)]
        result = plan(hosts, 2.0)
        self.assertEqual('bursty', result.moves[0].destination)
        self.assertAlmostEqual(66.0,
                               result.moves[0].expected['destination_cpu'])

    def test_unknown_deviation_is_no_spread(self):
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('unknown', 60.0),
                 h.host('spread', 59.0, cpu_deviation=1.0)]
        self.assertEqual('unknown', plan(hosts, 2.0).moves[0].destination)

    def test_unknown_deviation_is_not_less_than_none(self):
        # 'steady' ends at 69 + 2 * 0.25 = 69.5%, 'unknown' at 70%: an
        # unknown spread counts as 0, never as a bonus.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('unknown', 60.0),
                 h.host('steady', 59.0, cpu_deviation=0.25)]
        self.assertEqual('steady', plan(hosts, 2.0).moves[0].destination)

    def test_ranking_matches_a_full_scan(self):
        # The planner's index stops early on the policy's score at the
        # current load; with the spread in both, the early stop must pick
        # what a scan of every host picks.
        hosts = [h.host('hot', 99.0, counter=1)]
        hosts += [h.host(f'd{i}', 40.0 + 3 * i, cpu_deviation=(7 - i) * 3.0)
                  for i in range(8)]
        chosen = plan(hosts, 1.5).moves[0].destination
        self.assertEqual('d7', chosen)   # d0 by load alone
        best = min((40.0 + 3 * i + 10.0 + 1.5 * (7 - i) * 3.0, f'd{i}')
                   for i in range(8) if 40.0 + 3 * i + 10.0 <= 75.0)
        self.assertEqual(best[1], chosen)
