"""The cost-benefit rule: its arithmetic and the planner's use of it."""

import dataclasses
import math

import testtools

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from tests import snapshots as h

CONFIG = model.PlannerConfig()


class MigrationSecondsTest(testtools.TestCase):

    def test_an_idle_instance_sends_its_ram_once(self):
        # 1280 MiB over 10737.41824 Mbit/s: exactly 1 s.
        self.assertAlmostEqual(
            1.0, benefit.migration_seconds(1280, 0.0, 10737.41824, 64.0))

    def test_dirty_pages_add_a_geometric_series(self):
        # Ratio 0.25 (dirty rate a quarter of the link): 1 / (1 - 0.25).
        bandwidth = 1000.0
        dirty = 0.25 * bandwidth / benefit.MBIT_PER_MIB
        seconds = benefit.migration_seconds(1000 / benefit.MBIT_PER_MIB,
                                            1.0, bandwidth, dirty)
        self.assertAlmostEqual(1.0 / 0.75, seconds, places=6)

    def test_a_copy_that_never_converges_is_cut(self):
        bandwidth = 1000.0
        dirty = 2 * bandwidth / benefit.MBIT_PER_MIB
        seconds = benefit.migration_seconds(1000 / benefit.MBIT_PER_MIB,
                                            1.0, bandwidth, dirty)
        self.assertAlmostEqual(benefit.MAX_ROUNDS + 1, seconds)


class ExcessTest(testtools.TestCase):

    def test_no_spread_is_the_plain_excess(self):
        self.assertEqual(5.0, benefit.excess(85.0, 0.0, 80.0))
        self.assertEqual(0.0, benefit.excess(70.0, 0.0, 80.0))

    def test_a_swinging_load_under_its_threshold_is_over_part_of_the_time(
            self):
        # At the threshold: deviation / sqrt(2 pi).
        self.assertAlmostEqual(10.0 / math.sqrt(2 * math.pi),
                               benefit.excess(80.0, 10.0, 80.0))
        self.assertGreater(benefit.excess(70.0, 10.0, 80.0), 0.0)
        self.assertGreater(benefit.excess(70.0, 10.0, 80.0),
                           benefit.excess(70.0, 5.0, 80.0))

    def test_far_over_it_is_the_mean_excess(self):
        self.assertAlmostEqual(20.0, benefit.excess(100.0, 2.0, 80.0))


class LoadTest(testtools.TestCase):

    def test_a_load_away_from_its_level_comes_back_by_half_life(self):
        load = benefit.Load(current=90.0, expected=70.0)
        self.assertEqual(90.0, load.at(0.0, 600.0))
        self.assertAlmostEqual(80.0, load.at(600.0, 600.0))
        self.assertEqual(90.0, load.at(600.0, 0.0))


def estimate(source, destination, instance, ram_relief=0.0):
    return benefit.estimate(source, 10, 80.0, destination, 10, 80.0,
                            instance, 1000, CONFIG, ram_relief=ram_relief)


class EstimateTest(testtools.TestCase):

    def test_a_sustained_overload_pays(self):
        # 90 % for good, 2 cores (20 points) off: 10 points over for the
        # whole hour, on 10 cores: 1 core * 60 min.
        found = estimate(benefit.Load(90.0, 90.0), benefit.Load(40.0, 40.0),
                         benefit.Load(2.0, 2.0))
        self.assertAlmostEqual(60.0, found.relief)
        self.assertEqual(0.0, found.risk)
        self.assertGreater(found.migration, 0.0)
        self.assertTrue(found.pays)

    def test_a_burst_buys_less_than_a_sustained_overload(self):
        sustained = estimate(benefit.Load(90.0, 90.0),
                             benefit.Load(40.0, 40.0), benefit.Load(2.0, 2.0))
        burst = estimate(benefit.Load(90.0, 60.0), benefit.Load(40.0, 40.0),
                         benefit.Load(2.0, 2.0))
        self.assertLess(burst.relief, sustained.relief / 2)

    def test_a_destination_that_swings_near_its_threshold_is_a_risk(self):
        calm = estimate(benefit.Load(90.0, 90.0), benefit.Load(55.0, 55.0),
                        benefit.Load(2.0, 2.0))
        swinging = estimate(benefit.Load(90.0, 90.0),
                            benefit.Load(55.0, 55.0, 10.0),
                            benefit.Load(2.0, 2.0))
        self.assertEqual(0.0, calm.risk)
        self.assertGreater(swinging.risk, 1.0)

    def test_the_instance_swing_counts_on_the_destination(self):
        smooth = estimate(benefit.Load(90.0, 90.0),
                          benefit.Load(55.0, 55.0, 5.0),
                          benefit.Load(2.0, 2.0))
        bursty = estimate(benefit.Load(90.0, 90.0),
                          benefit.Load(55.0, 55.0, 5.0),
                          benefit.Load(2.0, 2.0, 1.0))
        self.assertGreater(bursty.risk, smooth.risk)

    def test_a_move_that_only_shifts_the_overload_does_not_pay(self):
        # The destination ends as far over as the source was.
        found = estimate(benefit.Load(85.0, 85.0), benefit.Load(75.0, 75.0),
                         benefit.Load(1.0, 1.0))
        self.assertAlmostEqual(found.relief, found.risk)
        self.assertFalse(found.pays)

    def test_ram_relief_weighs_as_cpu_points(self):
        found = estimate(benefit.Load(50.0, 50.0), benefit.Load(40.0, 40.0),
                         benefit.Load(0.1, 0.1), ram_relief=4.0)
        # 4 points of a 10-core host for the hour.
        self.assertAlmostEqual(24.0, found.relief)


class PlannerRuleTest(testtools.TestCase):

    def test_the_record_gives_relief_and_cost(self):
        hosts = [h.host('hot', 90.0, counter=1, cpu_expected=90.0),
                 h.host('cold', 30.0)]
        result = planner.plan(h.snapshot(
            hosts, [h.instance('i1', 'hot', 1.5)]), h.allow_all)
        (move,) = result.moves
        self.assertEqual(90.0, move.expected['source_cpu_before'])
        self.assertGreater(move.expected['relief'], move.expected['cost'])
        self.assertEqual(
            move.expected['cost'],
            round(move.expected['risk'] + move.expected['migration_cost'],
                  3))

    def test_a_burst_into_a_swinging_destination_is_refused(self):
        # 'hot' is over on a burst (its usual level 60 %), and the only
        # destination swings near its threshold.
        hosts = [h.host('hot', 84.0, counter=1, cpu_expected=60.0,
                        cpu_deviation=3.0),
                 h.host('near', 64.0, cpu_expected=64.0, cpu_deviation=8.0)]
        instances = [h.instance('i1', 'hot', 1.0)]
        result = planner.plan(h.snapshot(hosts, instances), h.allow_all)
        self.assertEqual((), result.moves)
        self.assertIn('instance i1: 1x cost-benefit', result.notes[0])
        off = planner.plan(h.snapshot(hosts, instances, benefit_horizon=0),
                           h.allow_all)
        self.assertEqual(['i1'], [m.instance for m in off.moves])

    def test_the_next_instance_is_tried_when_one_does_not_pay(self):
        # Both cure the host and the swinging one ranks first (as level,
        # less RAM), but into 'near' its swing costs more than it
        # relieves; the smooth one pays.
        hosts = [h.host('hot', 83.0, counter=1, cpu_expected=83.0),
                 h.host('near', 65.0, cpu_expected=65.0, cpu_deviation=6.0)]
        instances = [h.instance('swinging', 'hot', 1.0, memory_mb=500),
                     h.instance('smooth', 'hot', 0.8)]
        snapshot = dataclasses.replace(
            h.snapshot(hosts, instances, destination_deviations=0),
            trends={'swinging': (1.0, 1.5), 'smooth': (0.8, None)})
        result = planner.plan(snapshot, h.allow_all)
        self.assertEqual(['smooth'], [m.instance for m in result.moves])
        self.assertIn({'instance': 'swinging', 'rejected': {
            'cost-benefit': 1}}, result.moves[0].alternatives)

    def test_leveling_moves_pass_the_same_rule(self):
        hosts = [h.host('hot', 78.0, rise_rate=5.0, cpu_expected=78.0,
                        cpu_deviation=8.0),
                 h.host('cool', 40.0, rise_rate=5.0, cpu_expected=40.0)]
        instances = [h.instance('i1', 'hot', 1.0)]
        result = planner.plan(h.snapshot(hosts, instances), h.allow_all)
        self.assertEqual(['i1'], [m.instance for m in result.moves])
        self.assertEqual(model.LEVEL, result.moves[0].goal)
        self.assertIn('relief', result.moves[0].expected)
        # Without any swing the host is never expected over: nothing to buy.
        hosts[0] = h.host('hot', 78.0, rise_rate=5.0, cpu_expected=78.0)
        result = planner.plan(h.snapshot(hosts, instances), h.allow_all)
        self.assertEqual((), result.moves)
        self.assertIn('level, no move: cost-benefit', result.notes[-1])

    def test_the_seed_policy_ignores_it(self):
        hosts = [h.host('hot', 84.0, counter=1, cpu_expected=60.0),
                 h.host('near', 60.0, cpu_expected=60.0, cpu_deviation=8.0)]
        result = planner.plan(h.snapshot(
            hosts, [h.instance('i1', 'hot', 1.0)], policy='seed'),
            h.allow_all)
        self.assertEqual(['i1'], [m.instance for m in result.moves])

    def test_drains_ignore_it(self):
        hosts = [h.host('old', 30.0, draining=True),
                 h.host('near', 60.0, cpu_expected=60.0, cpu_deviation=8.0)]
        result = planner.plan(h.snapshot(
            hosts, [h.instance('i1', 'old', 1.0)]), h.allow_all)
        self.assertEqual(['i1'], [m.instance for m in result.moves])
        self.assertNotIn('relief', result.moves[0].expected)


#: 1280 MiB at this bandwidth: exactly one second.
ONE_SECOND_MBPS = 10737.41824


class ExactFiguresTest(testtools.TestCase):
    """Hand-computed figures (normal table values to six places)."""

    def test_excess_from_the_normal_table(self):
        # z = 1: 5 * Phi(1) + 5 * phi(1).
        self.assertAlmostEqual(5 * 0.841345 + 5 * 0.241971,
                               benefit.excess(85.0, 5.0, 80.0), places=5)
        # z = 0.65: 1.3 * Phi(0.65) + 2 * phi(0.65).
        self.assertAlmostEqual(1.3 * 0.742154 + 2 * 0.322972,
                               benefit.excess(81.3, 2.0, 80.0), places=5)
        # A deviation under one point is a deviation too.
        self.assertAlmostEqual(0.5 * 0.841345 + 0.5 * 0.241971,
                               benefit.excess(80.5, 0.5, 80.0), places=5)

    def test_the_return_to_the_usual_level(self):
        self.assertAlmostEqual(65.0, benefit.Load(100.0, 30.0).at(600, 600))
        self.assertAlmostEqual(65.0, benefit.Load(100.0, 30.0).at(0.5, 0.5))

    def test_migration_rounds_exactly(self):
        first = benefit.migration_seconds(1280, 0.0, ONE_SECOND_MBPS, 64.0)
        self.assertAlmostEqual(1.0, first)
        # Ratio 0.9: the 31 rounds of the geometric series.
        dirty = 0.9 * ONE_SECOND_MBPS / benefit.MBIT_PER_MIB
        self.assertAlmostEqual(
            (1 - 0.9 ** 31) / 0.1,
            benefit.migration_seconds(1280, 1.0, ONE_SECOND_MBPS, dirty))
        for ratio in (1.0, 1.5):
            dirty = ratio * ONE_SECOND_MBPS / benefit.MBIT_PER_MIB
            self.assertAlmostEqual(31.0, benefit.migration_seconds(
                1280, 1.0, ONE_SECOND_MBPS, dirty))
        # A load below zero (a bad sample) dirties nothing.
        self.assertAlmostEqual(1.0, benefit.migration_seconds(
            1280, -1.0, ONE_SECOND_MBPS, 64.0))

    def config(self, **kwargs):
        kwargs.setdefault('migration_bandwidth', ONE_SECOND_MBPS)
        kwargs.setdefault('migration_dirty_rate', 0.0)
        return model.PlannerConfig(**kwargs)

    def test_relief_is_judged_at_the_middle_of_each_slice(self):
        # 90 % going back to 70 % by half every 600 s: only the first of
        # the six 10-minute slices is over 80 %, at its middle (300 s)
        # 70 + 20 / sqrt(2) = 84.142 %, which a 10-point instance cures.
        found = benefit.estimate(
            benefit.Load(90.0, 70.0), 10, 80.0, benefit.Load(0.0, 0.0), 10,
            80.0, benefit.Load(1.0, 1.0), 1280, self.config())
        self.assertAlmostEqual(4.1421356, found.relief)
        self.assertAlmostEqual(1.0 / 60.0, found.migration)

    def test_swings_add_as_variances(self):
        # 32-core hosts: 3.125 points a core; the instance is 10 points
        # swinging by 3, the source 90 % by 5, the destination 70 % by 4:
        # 80 % by 4 and 80 % by 5 after the move.
        found = benefit.estimate(
            benefit.Load(90.0, 90.0, 5.0), 32, 80.0,
            benefit.Load(70.0, 70.0, 4.0), 32, 80.0,
            benefit.Load(3.2, 3.2, 0.96), 1280, self.config())
        relief = (benefit.harm(90.0, 5.0, 80.0)
                  - benefit.harm(80.0, 4.0, 80.0)) / 3.125 * 60
        risk = (benefit.harm(80.0, 5.0, 80.0)
                - benefit.harm(70.0, 4.0, 80.0)) / 3.125 * 60
        self.assertAlmostEqual(relief, found.relief)
        self.assertAlmostEqual(risk, found.risk)
        self.assertAlmostEqual(3.2 / 60.0, found.migration)
        self.assertAlmostEqual(found.risk + found.migration, found.cost)

    def test_a_horizon_in_seconds(self):
        found = benefit.estimate(
            benefit.Load(90.0, 90.0), 10, 80.0, benefit.Load(0.0, 0.0), 10,
            80.0, benefit.Load(1.0, 1.0), 1280,
            self.config(benefit_horizon=90))
        # 10 points (1 core) over for a minute and a half.
        self.assertAlmostEqual(1.5, found.relief)

    def test_a_horizon_in_seconds_with_the_load_coming_back(self):
        # Slice middles at 7.5 s, 22.5 s, ...: 90 % going back to 70 % by
        # half every 15 s, relieved of 10 points.
        config = self.config(benefit_horizon=90, load_halflife=15)
        found = benefit.estimate(
            benefit.Load(90.0, 70.0), 10, 80.0, benefit.Load(0.0, 0.0), 10,
            80.0, benefit.Load(1.0, 1.0), 1280, config)
        over = [max(70.0 + 20.0 * 0.5 ** (t / 15.0) - 80.0, 0.0)
                for t in (7.5, 22.5, 37.5, 52.5, 67.5, 82.5)]
        self.assertAlmostEqual(sum(over) * 0.1 * 0.25, found.relief)

    def test_a_tie_does_not_pay(self):
        self.assertFalse(benefit.Estimate(1.0, 0.5, 0.5).pays)
        self.assertTrue(benefit.Estimate(1.01, 0.5, 0.5).pays)
