"""A destination's spread: its samples' deviation and how it is judged."""

import testtools

from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import planner
from tests.unit.rebalance import helpers as h


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


def plan(hosts, deviations):
    instances = [h.instance('i1', 'hot', 1.0)]
    return planner.plan(h.snapshot(hosts, instances,
                                   destination_deviations=deviations),
                        h.allow_all)


class DestinationDeviationTest(testtools.TestCase):

    def test_bursty_destination_keeps_room_for_its_next_burst(self):
        # Both usually carry 60%. 'bursty' strays by 4 points: with 2
        # deviations it is judged at 68 + 10 = 78% > 75, refused; 'smooth'
        # ends at 70% and takes the instance.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('bursty', 58.0, cpu_expected=60.0, cpu_deviation=4.0),
                 h.host('smooth', 60.0, cpu_expected=60.0, cpu_deviation=0.0)]
        result = plan(hosts, 2.0)
        self.assertEqual('smooth', result.moves[0].destination)
        refused = {r.subject: r for r in result.moves[0].rejected}
        self.assertEqual('margin', refused['bursty'].rule)
        self.assertIn('expected load 60.0% + 8.0 of deviation > current '
                      '58.0%', refused['bursty'].detail)
        # Without the rule the less loaded bursty host wins.
        self.assertEqual('bursty', plan(hosts, 0.0).moves[0].destination)

    def test_current_load_above_the_outlook_still_counts(self):
        # 66% now, 60 +- 2 usual: judged at 66 + 10 = 76% > 75 whatever
        # the deviation adds below it.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('high', 66.0, cpu_expected=60.0, cpu_deviation=2.0)]
        self.assertEqual((), plan(hosts, 1.0).moves)

    def test_unknown_deviation_is_no_spread(self):
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('dest', 64.0, cpu_expected=64.0)]
        self.assertEqual('dest', plan(hosts, 3.0).moves[0].destination)
