"""Adaptive headroom: surprise violations measured, and relieved early."""

import itertools
import math

import testtools

from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.rebalance import planner
from tests import snapshots as h

#: One surprise's weight with a one-hour half-life: ln 2 per hour.
ONE = math.log(2)


def feed(state, cpus, step=60, thresholds=None):
    return [state.update(i * step, {'h1': metrics.HostSample(i * step, c)},
                         thresholds)['h1'] for i, c in enumerate(cpus)]


def windows(halflife=3600, window=1):
    return metrics.MetricsWindows(window, 1, 180, 80.0, 90.0,
                                  surprise_margin=5.0,
                                  surprise_halflife=halflife)


class SurpriseRateTest(testtools.TestCase):

    def test_a_jump_from_below_the_margin_is_a_surprise(self):
        statuses = feed(windows(), [70, 75, 85])
        self.assertEqual([0.0, 0.0], [s.surprise_rate for s in statuses[:2]])
        self.assertAlmostEqual(ONE, statuses[2].surprise_rate)

    def test_a_rise_from_within_the_margin_is_not(self):
        # 76 % is within the margin: the planner could have seen it coming.
        self.assertEqual(0.0, feed(windows(), [70, 76, 85])[-1].surprise_rate)

    def test_staying_over_is_not_a_new_surprise(self):
        statuses = feed(windows(), [70, 85, 90, 95])
        self.assertEqual(1, sum(b.surprise_rate > a.surprise_rate
                                for a, b in itertools.pairwise(statuses)))

    def test_a_jump_to_the_threshold_is_not_over_it(self):
        self.assertEqual(0.0, feed(windows(), [70, 80])[-1].surprise_rate)

    def test_the_rate_halves_per_halflife(self):
        # One surprise, then an hour (60 periods) under the threshold.
        status = feed(windows(), [70, 85] + [50] * 60)[-1]
        self.assertAlmostEqual(ONE / 2, status.surprise_rate)

    def test_steady_surprises_hold_the_rate_at_their_rate(self):
        # One surprise every 30 minutes for a day: two an hour.  Just
        # before the next one, the rate is at its lowest of the cycle.
        status = feed(windows(), ([70] * 29 + [85]) * 48 + [70] * 29)[-1]
        self.assertGreater(status.surprise_rate, 1.6)
        self.assertLess(status.surprise_rate, 2.0)

    def test_judged_on_the_window_average(self):
        # Window of 2: averages 70, 70, 80 (not over), 90 (from 80: no).
        state = windows(window=2)
        self.assertEqual(0.0, feed(state, [70, 70, 90, 90])[-1].surprise_rate)

    def test_against_the_hosts_own_threshold(self):
        # Aggregate metadata: threshold 70, so 62 -> 72 is a surprise.
        status = feed(windows(), [62, 72], thresholds={'h1': (70.0, 90.0)})
        self.assertAlmostEqual(ONE, status[-1].surprise_rate)

    def test_a_sample_read_again_adds_nothing(self):
        state = windows()
        state.update(0, {'h1': metrics.HostSample(0, 70)})
        state.update(60, {'h1': metrics.HostSample(60, 85)})
        again = state.update(120, {'h1': metrics.HostSample(60, 85)})['h1']
        self.assertAlmostEqual(ONE, again.surprise_rate)

    def test_off_without_halflife(self):
        self.assertIsNone(feed(windows(halflife=0), [70, 85])[-1]
                          .surprise_rate)

    def test_survives_a_restart_and_goes_with_staleness(self):
        state = windows()
        feed(state, [70, 85, 70])
        restored = windows()
        restored.restore(state.export())
        # 70 -> 85 again: a second surprise on top of the first.
        status = restored.update(180, {'h1': metrics.HostSample(180, 85)})
        self.assertAlmostEqual(ONE * (0.5 ** (2 / 60) + 1),
                               status['h1'].surprise_rate)
        self.assertIsNone(restored.update(1000, {'h1': None})
                          ['h1'].surprise_rate)
        fresh = restored.update(1060, {'h1': metrics.HostSample(1060, 85)})
        self.assertEqual(0.0, fresh['h1'].surprise_rate)

    def test_record_without_surprises_restores_as_none_seen(self):
        # Records written before the rate existed: no previous period, so
        # the next one cannot be a surprise either.
        state = windows()
        state.restore({'h1': {'counter': 0, 'samples': [[0, 70, None]]}})
        status = state.update(60, {'h1': metrics.HostSample(60, 85)})
        self.assertEqual(0.0, status['h1'].surprise_rate)

    def test_event_rate_arithmetic(self):
        self.assertAlmostEqual(2.0, metrics.event_rate(4.0, False, 3600,
                                                       3600))
        self.assertAlmostEqual(4.0 + ONE,
                               metrics.event_rate(4.0, True, 0, 3600))
        self.assertAlmostEqual(4.0, metrics.event_rate(4.0, False, -5, 3600))


class HeadroomMappingTest(testtools.TestCase):

    def headroom(self, rate, full=1.0, most=10.0):
        return planner.headroom(rate, model.PlannerConfig(
            headroom=most, headroom_surprise_rate=full))

    def test_none_up_to_half_the_rate_all_from_it(self):
        self.assertEqual([0.0, 0.0, 5.0, 10.0, 10.0],
                         [self.headroom(r) for r in (0.0, 0.5, 0.75, 1.0, 3)])

    def test_zero_rate_keeps_all_of_it(self):
        self.assertEqual(10.0, self.headroom(0.0, full=0.0))

    def test_off_by_default(self):
        self.assertEqual(0.0, planner.headroom(5.0, model.PlannerConfig()))


def hosts(hot=74.0, rate=1.0, cool=40.0, **kwargs):
    return [h.host('hot', hot, surprise_rate=rate, **kwargs),
            h.host('cool', cool, surprise_rate=rate)]


def plan(host_list, instances, policy='balanced', headroom=10.0,
         **config):
    return planner.plan(h.snapshot(host_list, instances, policy=policy,
                                   headroom=headroom, **config), h.allow_all)


class HeadroomPlanTest(testtools.TestCase):
    """10-CPU hosts: one core is 10 points."""

    def test_a_host_within_the_headroom_is_relieved(self):
        result = plan(hosts(), [h.instance('a', 'hot', 0.6),
                                h.instance('b', 'hot', 1.0)])
        (move,) = result.moves
        self.assertEqual(('hot', 'cool'), (move.source, move.destination))
        # 74 % to 64 % (b) beats 68 % (a): the pair is left most level.
        self.assertEqual('b', move.instance)
        self.assertIn('within the headroom of 10.0 points', move.reason)
        self.assertIn('headroom 10.0 points: 1.00 surprise violations per '
                      'host and hour', result.notes)

    def test_no_headroom_while_surprises_are_rare(self):
        # 0.5 an hour is half the full rate: h = 0, today's plan.
        instances = [h.instance('b', 'hot', 1.0)]
        rare = plan(hosts(hot=78.0, rate=0.5), instances)
        self.assertEqual((), rare.moves)
        self.assertEqual(plan(hosts(hot=78.0, rate=0.5), instances,
                              headroom=0.0), rare)

    def test_unknown_rates_count_as_none(self):
        result = plan(hosts(rate=None), [h.instance('b', 'hot', 1.0)])
        self.assertEqual((), result.moves)

    def test_headroom_follows_the_pools_mean_rate(self):
        # Rates 1.5 and 0: mean 0.75, h = 5: 74 % is not within it...
        mixed = [h.host('hot', 74.0, surprise_rate=1.5),
                 h.host('cool', 40.0, surprise_rate=0.0)]
        instances = [h.instance('b', 'hot', 1.0)]
        self.assertEqual((), plan(mixed, instances).moves)
        # ...and 76 % is.
        mixed[0] = h.host('hot', 76.0, surprise_rate=1.5)
        self.assertEqual(1, len(plan(mixed, instances).moves))

    def test_each_pool_has_its_own_headroom(self):
        host_list = [h.host('calm', 74.0, pool='a', surprise_rate=0.0),
                     h.host('calm-dest', 40.0, pool='a', surprise_rate=0.0),
                     h.host('busy', 74.0, pool='b', surprise_rate=2.0),
                     h.host('busy-dest', 40.0, pool='b', surprise_rate=2.0)]
        instances = [h.instance('c', 'calm', 1.0),
                     h.instance('b', 'busy', 1.0)]
        result = plan(host_list, instances, mode='aggregate')
        self.assertEqual([('busy', 'busy-dest')],
                         [(m.source, m.destination) for m in result.moves])

    def test_the_move_must_cure_the_host(self):
        # Only 0.3 cores: 74 % -> 71 %, still within 10 points.
        result = plan(hosts(), [h.instance('a', 'hot', 0.3)],
                      min_improvement=0.0)
        self.assertEqual((), result.moves)
        self.assertIn('1x headroom', result.notes[-1])

    def test_the_destination_keeps_the_headroom(self):
        # 62 % + 10 points = 72 %: within margin (75 %), not under 70 %.
        result = plan(hosts(cool=62.0), [h.instance('b', 'hot', 1.0)])
        self.assertEqual((), result.moves)
        self.assertIn('margin', result.notes[-1])

    def test_min_improvement_applies_without_the_cure_exemption(self):
        # 74 % -> 64 %, 'cool' 60 % -> 70 %: the pair's worst drops 4
        # points, under min_improvement (5), though it cures the host.
        result = plan(hosts(cool=60.0), [h.instance('b', 'hot', 1.0)])
        self.assertEqual((), result.moves)
        self.assertIn('min-improvement', result.notes[-1])
        self.assertEqual(1, len(plan(hosts(cool=60.0),
                                     [h.instance('b', 'hot', 1.0)],
                                     min_improvement=4.0).moves))

    def test_violated_hosts_come_first(self):
        host_list = hosts() + [h.host('over', 90.0, counter=1,
                                      surprise_rate=1.0),
                               h.host('spare', 30.0, surprise_rate=1.0)]
        instances = [h.instance('b', 'hot', 1.0),
                     h.instance('o', 'over', 1.5)]
        result = plan(host_list, instances, max_migrations_per_period=1)
        self.assertEqual(['over'], [m.source for m in result.moves])
        self.assertIn('limit:per-period', result.notes[-1])

    def test_a_violated_host_gets_no_headroom_move(self):
        # Violated on RAM (93 %) at 74 % CPU: 'r' cures its RAM, and the
        # host, still within the CPU headroom, is not relieved again
        # though the per-host limit would allow it.
        host_list = [h.host('hot', 74.0, ram=93.0, counter=1,
                            surprise_rate=1.0),
                     h.host('cool', 40.0, ram=50.0, surprise_rate=1.0)]
        instances = [h.instance('r', 'hot', 0.1, memory_mb=1000),
                     h.instance('b', 'hot', 1.0, memory_mb=500)]
        result = plan(host_list, instances,
                      max_concurrent_migrations_per_host=2)
        self.assertEqual(['r'], [m.instance for m in result.moves])

    def test_a_host_over_its_threshold_waits_for_its_counter(self):
        # Stabilization 2: 85 % for one period is not violated yet, and
        # the headroom does not jump the counter.
        result = plan(hosts(hot=85.0, counter=1),
                      [h.instance('b', 'hot', 2.0)], stabilization=2)
        self.assertEqual((), result.moves)

    def test_the_per_host_limit_is_not_the_violated_hosts(self):
        # One migration in flight: a violated host could send a second
        # (max_concurrent_migrations_per_violated_host = 2), this one not.
        result = plan(hosts(), [h.instance('b', 'hot', 1.0)],
                      inflight_by_host={'hot': 1}, inflight_total=1)
        self.assertEqual((), result.moves)
        self.assertIn('limit:per-host', result.notes[-1])

    def test_hottest_first_and_as_many_as_the_period_allows(self):
        host_list = [h.host(f'w{i}', 71.0 + i, surprise_rate=1.0)
                     for i in range(3)]
        host_list += [h.host(f'd{i}', 30.0, surprise_rate=1.0)
                      for i in range(3)]
        instances = [h.instance(f'i{i}', f'w{i}', 1.5) for i in range(3)]
        result = plan(host_list, instances)
        self.assertEqual(['w2', 'w1'], [m.source for m in result.moves])

    def test_at_most_the_periods_limit_of_hosts_is_searched(self):
        # The two hottest have nothing movable; the third is not searched.
        host_list = [h.host(f'w{i}', 71.0 + i, surprise_rate=1.0)
                     for i in range(3)]
        host_list += [h.host('d', 30.0, surprise_rate=1.0)]
        instances = [h.instance('i0', 'w0', 1.5)]
        instances += [h.instance(f'i{i}', f'w{i}', 1.5, blocked='opt-out')
                      for i in (1, 2)]
        self.assertEqual((), plan(host_list, instances).moves)
        self.assertEqual(1, len(plan(host_list, instances,
                                     max_migrations_per_period=3).moves))

    def test_no_return_holds(self):
        instances = [h.instance('b', 'hot', 1.0, left=('cool',))]
        self.assertEqual((), plan(hosts(), instances).moves)

    def test_the_seed_policy_keeps_no_headroom(self):
        result = plan(hosts(), [h.instance('b', 'hot', 1.0)], policy='seed')
        self.assertEqual((), result.moves)
