"""Leveling where load jumps: the rise rate and the planner's moves."""

import dataclasses
import math

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.goals import level
from tests import snapshots as h


def windows(halflife=3600, points=10.0):
    return metrics.MetricsWindows(1, 1, 180, 80.0, 90.0,
                                  rise_points=points,
                                  rise_halflife=halflife)


def feed(state, cpus, step=60):
    return [state.update(i * step, {'h1': metrics.HostSample(i * step, c)})
            ['h1'] for i, c in enumerate(cpus)]


class RiseRateTest(testtools.TestCase):

    def test_one_rise_adds_ln2_per_halflife_in_hours(self):
        rate = feed(windows(), [50, 60])[-1].rise_rate
        self.assertAlmostEqual(math.log(2) * 3600 / 3600, rate)

    def test_a_smaller_rise_or_a_fall_is_no_rise(self):
        self.assertEqual(0.0, feed(windows(), [50, 59.9])[-1].rise_rate)
        self.assertEqual(0.0, feed(windows(), [70, 40])[-1].rise_rate)

    def test_the_rise_is_against_the_period_before(self):
        # 50 -> 55 -> 65: each step 5 or 10; only the second is a rise,
        # though the host is 15 above where it was two periods before.
        rates = [s.rise_rate for s in feed(windows(), [50, 55, 65])]
        self.assertEqual(0.0, rates[1])
        self.assertGreater(rates[2], 0.0)

    def test_the_first_sample_is_no_rise(self):
        self.assertEqual(0.0, feed(windows(), [90])[-1].rise_rate)

    def test_steady_rises_hold_the_rate_at_their_frequency(self):
        # A rise every other period of 60 s: 30 an hour.
        rate = feed(windows(halflife=600), [40, 60] * 300)[-1].rise_rate
        # Just after a rise it is at the top of its sawtooth, 32.1.
        self.assertAlmostEqual(30.0, rate, delta=2.5)

    def test_the_rate_halves_per_halflife(self):
        statuses = feed(windows(), [40, 60] + [60] * 60)
        self.assertAlmostEqual(statuses[1].rise_rate / 2,
                               statuses[-1].rise_rate)

    def test_off_without_halflife(self):
        self.assertIsNone(feed(windows(halflife=0), [40, 60])[-1].rise_rate)

    def test_off_by_default_and_with_a_negative_halflife(self):
        plain = metrics.MetricsWindows(1, 1, 180, 80.0, 90.0)
        self.assertIsNone(feed(plain, [40, 60])[-1].rise_rate)
        self.assertIsNone(feed(windows(halflife=-1), [40, 60])[-1].rise_rate)

    def test_a_one_second_halflife_still_counts(self):
        rate = feed(windows(halflife=1), [40, 60], step=1)[-1].rise_rate
        self.assertAlmostEqual(math.log(2) * 3600, rate)

    def test_a_rise_is_ten_points_by_default(self):
        default = metrics.MetricsWindows(1, 1, 180, 80.0, 90.0,
                                         rise_halflife=3600)
        self.assertGreater(feed(default, [40, 50])[-1].rise_rate, 0.0)
        default = metrics.MetricsWindows(1, 1, 180, 80.0, 90.0,
                                         rise_halflife=3600)
        self.assertEqual(0.0, feed(default, [40, 49.99])[-1].rise_rate)

    def test_the_rate_neither_decays_nor_grows_without_time(self):
        self.assertEqual(2.0, metrics.event_rate(2.0, False, 0.0, 3600))
        # A clock going back changes nothing either.
        self.assertEqual(2.0, metrics.event_rate(2.0, False, -5.0, 3600))

    def test_a_damaged_or_old_record_restores_no_rises(self):
        for rises in (None, -4.0):
            state = windows()
            state.restore({'h1': {'counter': 0, 'samples': [[0, 60, None]],
                                  'previous': 60.0, 'rises': rises}})
            status = state.update(60, {'h1': metrics.HostSample(60, 60)})
            self.assertEqual(0.0, status['h1'].rise_rate)

    def test_survives_a_restart_and_goes_with_staleness(self):
        state = windows()
        before = feed(state, [40, 60])[-1].rise_rate
        restored = windows()
        restored.restore(state.export())
        status = restored.update(120, {'h1': metrics.HostSample(120, 60)})
        self.assertAlmostEqual(before * 0.5 ** (60 / 3600),
                               status['h1'].rise_rate)
        self.assertIsNone(restored.update(1000, {'h1': None})
                          ['h1'].rise_rate)
        status = restored.update(1060, {'h1': metrics.HostSample(1060, 90)})
        self.assertEqual(0.0, status['h1'].rise_rate)


def plan(hosts, instances, rate=3.0, **config):
    # The order and limits of leveling, without the cost-benefit rule (its
    # own tests: test_benefit).
    config.setdefault('benefit_horizon', 0)
    hosts = [h.host(name, cpu, rise_rate=rate, **kwargs)
             for name, cpu, kwargs in hosts]
    return planner.plan(h.snapshot(hosts, instances, **config), h.allow_all)


#: 'hot' at 78 % (within 10 points of 80), 'cool' at 40 %, 'mid' at 55 %;
#: hosts of 10 vCPUs, so a core is 10 points.
HOSTS = [('hot', 78.0, {}), ('mid', 55.0, {}), ('cool', 40.0, {})]
INSTANCES = [h.instance('big', 'hot', 2.0, memory_mb=1000),
             h.instance('fits', 'hot', 1.0, memory_mb=3000),
             h.instance('small', 'hot', 0.5, memory_mb=500)]


class LevelingTest(testtools.TestCase):

    def test_largest_instance_that_leaves_the_destination_cooler(self):
        # 'big' would leave 'hot' at 58 % and 'cool' at 60 %: hotter than
        # its source; 'fits' leaves 68 % and 50 %.
        result = plan(HOSTS, INSTANCES)
        self.assertEqual([('fits', 'hot', 'cool')],
                         [(m.instance, m.source, m.destination)
                          for m in result.moves])
        self.assertIn('level: load jumps 3.0 times an hour',
                      result.moves[0].reason)
        self.assertIn('cool the coolest destination at 40.0%',
                      result.moves[0].reason)

    def test_a_pool_with_a_host_held_out_levels_without_rises(self):
        # Power management packed the pool, or wakes a host into it
        # empty: it levels even where load never jumps.
        for state in (model.STANDBY, model.ENTERING, model.WAKING):
            held = [*HOSTS, ('off', None, {'power': state,
                                           'schedulable': False})]
            result = plan(held, INSTANCES, rate=0.0)
            self.assertEqual([('fits', 'hot', 'cool')],
                             [(m.instance, m.source, m.destination)
                              for m in result.moves], state)
            self.assertIn(f'level: power management holds host off out '
                          f'({state}); host hot at 78.0%',
                          result.moves[0].reason)
        # Every host on: no rises, no leveling; nor with no gap.
        self.assertEqual((), plan(HOSTS, INSTANCES, rate=0.0).moves)
        self.assertEqual((), plan(held, INSTANCES, rate=0.0,
                                  level_gap=0).moves)

    def test_a_pool_levels_for_level_after_wake_after_a_wake(self):
        # Every host on again, but 'cool' was woken 5 h 59 min ago: it
        # came back empty, and the pool levels until 6 h have passed.
        woken = [*HOSTS[:2], ('cool', 40.0, {'woken_ago': 21599.0})]
        result = plan(woken, INSTANCES, rate=0.0)
        self.assertEqual([('fits', 'hot', 'cool')],
                         [(m.instance, m.source, m.destination)
                          for m in result.moves])
        self.assertIn('level: power management woke host cool 360 minutes '
                      'ago; host hot at 78.0%', result.moves[0].reason)
        woken[2] = ('cool', 40.0, {'woken_ago': 21600.0})
        self.assertEqual((), plan(woken, INSTANCES, rate=0.0).moves)
        # The window is an option; 0 levels only while a host is out.
        self.assertEqual(1, len(plan(woken, INSTANCES, rate=0.0,
                                     level_after_wake=21601).moves))
        woken[2] = ('cool', 40.0, {'woken_ago': 0.0})
        self.assertEqual((), plan(woken, INSTANCES, rate=0.0,
                                  level_after_wake=0).moves)

    def test_a_host_held_out_is_named_before_one_woken(self):
        hosts = hosts_at(('a', 75.0, 0.0, {'woken_ago': 60.0}),
                         ('b', 40.0, 0.0, {}),
                         ('s', None, 0.0, {'power': model.WAKING}))
        self.assertEqual(
            {None: 'power management holds host s out (waking)'},
            level.packed(hosts, model.PlannerConfig()))
        # Whatever the names, and an 'on' read from the database counts
        # as on; a host entering standby is held out too.
        for state in (model.ENTERING, model.STANDBY):
            hosts = hosts_at(
                ('a', 75.0, 0.0, {'woken_ago': 60.0,
                                  'power': ''.join(['o', 'n'])}),
                ('s', None, 0.0, {'power': state}))
            self.assertEqual(
                {None: f'power management holds host s out ({state})'},
                level.packed(hosts, model.PlannerConfig()))
        # A woken host excluded from DRS does not count, nor stops the
        # count.
        hosts = hosts_at(('a', 75.0, 0.0, {'woken_ago': 60.0,
                                           'excluded': True}),
                         ('b', 40.0, 0.0, {'woken_ago': 120.0}))
        self.assertEqual(
            {None: 'power management woke host b 2 minutes ago'},
            level.packed(hosts, model.PlannerConfig()))
        # Longer ago than the window: not packed.
        hosts = hosts_at(('b', 40.0, 0.0, {'woken_ago': 21601.0}))
        self.assertEqual({}, level.packed(hosts, model.PlannerConfig()))

    def test_off_with_no_gap(self):
        self.assertEqual((), plan(HOSTS, INSTANCES, level_gap=0).moves)

    def test_balanced_only(self):
        self.assertEqual((), plan(HOSTS, INSTANCES, policy='seed').moves)

    def test_waits_for_the_pool_rise_rate(self):
        self.assertEqual((), plan(HOSTS, INSTANCES, rate=2.9).moves)
        self.assertEqual(1, len(plan(HOSTS, INSTANCES, rate=3.0).moves))
        self.assertEqual(
            (), plan(HOSTS, INSTANCES, rate=4.0, level_rise_rate=4.5).moves)

    def test_the_rate_is_the_pool_mean(self):
        hosts = [('hot', 78.0, {'rise_rate': 9.0}),
                 ('mid', 55.0, {'rise_rate': 0.0}),
                 ('cool', 40.0, {'rise_rate': 0.0})]
        result = planner.plan(h.snapshot(
            [h.host(n, c, **k) for n, c, k in hosts], INSTANCES,
            benefit_horizon=0), h.allow_all)
        self.assertEqual(('fits',), tuple(m.instance for m in result.moves))
        self.assertIn('3.0 times an hour', result.moves[0].reason)
        hosts[0] = ('hot', 78.0, {'rise_rate': 8.9})
        result = planner.plan(h.snapshot(
            [h.host(n, c, **k) for n, c, k in hosts], INSTANCES,
            benefit_horizon=0), h.allow_all)
        self.assertEqual((), result.moves)

    def test_unknown_rates_count_as_none(self):
        result = plan(HOSTS, INSTANCES, rate=None)
        self.assertEqual((), result.moves)
        self.assertEqual(1, len(plan(HOSTS, INSTANCES, rate=None,
                                     level_rise_rate=0).moves))

    def test_only_hosts_within_the_band_send(self):
        hosts = [('hot', 69.9, {}), ('cool', 40.0, {})]
        self.assertEqual((), plan(hosts, INSTANCES).moves)
        self.assertEqual(1, len(plan(hosts, INSTANCES,
                                     level_band=10.1).moves))

    def test_nothing_while_the_gap_is_small(self):
        hosts = [('hot', 78.0, {}), ('cool', 68.0, {})]
        self.assertEqual((), plan(hosts, INSTANCES).moves)
        self.assertEqual(1, len(plan(hosts, INSTANCES, level_gap=9.9).moves))

    def test_destination_keeps_its_margin(self):
        # 'small' would leave 'hot' at 77.9 % and 'warm' at 75.5 %: cooler
        # than its source, but past threshold - margin.
        hosts = [('hot', 79.9, {}), ('warm', 73.5, {})]
        instances = [h.instance('small', 'hot', 0.2)]
        self.assertEqual((), plan(hosts, instances, level_gap=5).moves)
        hosts = [('hot', 79.9, {}), ('warm', 72.9, {})]
        self.assertEqual(1, len(plan(hosts, instances, level_gap=5).moves))

    def test_a_host_the_instance_left_is_skipped(self):
        instances = [h.instance('fits', 'hot', 1.0, left=('cool',))]
        result = plan(HOSTS, instances)
        self.assertEqual(['mid'], [m.destination for m in result.moves])

    def test_a_blocked_instance_stays(self):
        instances = [h.instance('fits', 'hot', 1.0, blocked='cooldown')]
        self.assertEqual((), plan(HOSTS, instances).moves)

    def test_tiny_instances_are_not_worth_a_migration(self):
        instances = [h.instance('tiny', 'hot', 0.19)]
        self.assertEqual((), plan(HOSTS, instances).moves)
        instances = [h.instance('tiny', 'hot', 0.2)]
        self.assertEqual(1, len(plan(HOSTS, instances).moves))

    def test_within_the_total_limit(self):
        self.assertEqual((), plan(HOSTS, INSTANCES, inflight_total=4).moves)
        self.assertEqual(1, len(plan(HOSTS, INSTANCES,
                                     inflight_total=3).moves))

    def test_a_busy_host_sends_nothing(self):
        snap = h.snapshot([h.host(n, c, rise_rate=3.0) for n, c, _ in HOSTS],
                          INSTANCES, inflight_by_host={'hot': 2},
                          inflight_total=2, benefit_horizon=0)
        self.assertEqual((), planner.plan(snap, h.allow_all).moves)
        snap = h.snapshot([h.host(n, c, rise_rate=3.0) for n, c, _ in HOSTS],
                          INSTANCES, inflight_by_host={'hot': 1},
                          inflight_total=1, benefit_horizon=0)
        self.assertEqual(1, len(planner.plan(snap, h.allow_all).moves))

    def test_hottest_first_then_the_next(self):
        hosts = [('a', 76.0, {}), ('b', 79.0, {}), ('c', 30.0, {}),
                 ('d', 35.0, {})]
        instances = [h.instance('ia', 'a', 1.0), h.instance('ib', 'b', 1.0)]
        result = plan(hosts, instances)
        self.assertEqual([('ib', 'b', 'c'), ('ia', 'a', 'd')],
                         [(m.instance, m.source, m.destination)
                          for m in result.moves])

    def test_after_the_violated_hosts(self):
        # 'over' is cured first (to 'cool'); 'hot' then levels to 'mid',
        # now the coolest destination left.
        hosts = [('over', 95.0, {'counter': 1}), ('hot', 78.0, {}),
                 ('mid', 45.0, {}), ('cool', 40.0, {})]
        instances = [h.instance('o1', 'over', 2.0),
                     h.instance('fits', 'hot', 1.0)]
        result = plan(hosts, instances)
        self.assertEqual([('o1', 'over', 'cool'), ('fits', 'hot', 'mid')],
                         [(m.instance, m.source, m.destination)
                          for m in result.moves])
        self.assertIn('violated', result.moves[0].reason)
        self.assertTrue(result.moves[1].reason.startswith('level: '))

    def test_filters_have_the_last_word(self):
        # A filter refuses 'cool': 'fits' goes to 'mid' (65 % <= 68 %).
        snap = h.snapshot([h.host(n, c, rise_rate=3.0) for n, c, _ in HOSTS],
                          INSTANCES, benefit_horizon=0)
        result = planner.plan(snap, h.allow_except({'cool': 'AnyFilter'}))
        self.assertEqual([('fits', 'mid')], [(m.instance, m.destination)
                                             for m in result.moves])
        result = planner.plan(snap, h.allow_except({'cool': 'AnyFilter',
                                                    'mid': 'AnyFilter'}))
        self.assertEqual((), result.moves)


def hosts_at(*specs):
    return {name: h.host(name, cpu, rise_rate=rate, **kwargs)
            for name, cpu, rate, kwargs in specs}


class LevelingSourcesTest(testtools.TestCase):
    """The hosts whose instances the live service must measure."""

    def sources(self, hosts, **config):
        return level.leveling_sources(hosts, model.PlannerConfig(**config))

    def test_hosts_within_the_band_of_a_pool_that_levels(self):
        hosts = hosts_at(('a', 70.0, 3.0, {}), ('b', 69.9, 3.0, {}),
                         ('c', 90.0, 3.0, {}))
        self.assertEqual({'a', 'c'}, self.sources(hosts))
        self.assertEqual({'a', 'b', 'c'}, self.sources(hosts, level_band=11))

    def test_none_while_the_pool_rate_is_low_or_leveling_is_off(self):
        hosts = hosts_at(('a', 75.0, 2.9, {}), ('b', 40.0, 2.9, {}))
        self.assertEqual(set(), self.sources(hosts))
        hosts = hosts_at(('a', 75.0, 3.0, {}), ('b', 40.0, 3.0, {}))
        self.assertEqual(set(), self.sources(hosts, level_gap=0))
        self.assertEqual(set(), self.sources(hosts, policy='seed'))

    def test_a_pool_with_a_host_held_out_levels(self):
        hosts = hosts_at(('a', 75.0, 0.0, {}), ('b', 40.0, 0.0, {}),
                         ('s', None, 0.0, {'power': model.STANDBY}))
        self.assertEqual({'a'}, self.sources(hosts))
        self.assertEqual(
            {None: 'power management holds host s out (standby)'},
            level.leveling_pools(hosts, model.PlannerConfig()))
        # An excluded host does not count; each aggregate pool apart.
        hosts = hosts_at(('a', 75.0, 0.0, {}),
                         ('x', None, 0.0, {'power': model.STANDBY,
                                           'excluded': True}))
        self.assertEqual(set(), self.sources(hosts))
        hosts = hosts_at(('a', 75.0, 0.0, {'pool': 'p1'}),
                         ('s', None, 0.0, {'pool': 'p2',
                                           'power': model.STANDBY}))
        self.assertEqual(set(), self.sources(hosts,
                                             mode=h.fresh('aggregate')))

    def test_unsampled_and_excluded_hosts_neither_send_nor_count(self):
        hosts = hosts_at(('a', 75.0, 3.0, {}), ('stale', None, 0.0, {}),
                         ('out', 79.0, 0.0, {'excluded': True}))
        self.assertEqual({'a'}, self.sources(hosts))

    def test_each_aggregate_pool_has_its_own_rate(self):
        hosts = hosts_at(('a', 75.0, 6.0, {'pool': 'p1'}),
                         ('b', 40.0, 0.0, {'pool': 'p1'}),
                         ('c', 75.0, 1.0, {'pool': 'p2'}),
                         ('d', 40.0, 1.0, {'pool': 'p2'}))
        self.assertEqual({'a'}, self.sources(hosts,
                                             mode=h.fresh('aggregate')))
        # In global mode the four share one pool: 2.0 a host, under 3.
        self.assertEqual(set(), self.sources(hosts))
        self.assertEqual({None: 2.0},
                         level.rise_rates(hosts, model.PlannerConfig()))


def leveled(hosts, instances, **kwargs):
    """The (instance, source, destination) of a plan's moves."""
    return [(m.instance, m.source, m.destination)
            for m in plan(hosts, instances, **kwargs).moves]


class LevelingOrderAndLimitsTest(testtools.TestCase):

    def test_the_hottest_of_several_sends_first(self):
        # Destinations first in the snapshot: the scan goes past hosts
        # outside the band.
        hosts = [('d1', 30.0, {}), ('d2', 32.0, {}), ('d3', 34.0, {}),
                 ('a', 72.0, {}), ('b', 79.0, {}), ('c', 76.0, {})]
        instances = [h.instance(f'i{n}', n, 1.0) for n in 'abc']
        self.assertEqual([('ib', 'b', 'd1'), ('ic', 'c', 'd2'),
                          ('ia', 'a', 'd3')], leveled(hosts, instances))

    def test_the_largest_instance_that_fits_whatever_the_order(self):
        instances = [h.instance('small', 'hot', 0.5),
                     h.instance('fits', 'hot', 1.0)]
        self.assertEqual([('fits', 'hot', 'cool')],
                         leveled(HOSTS, instances))
        instances = [h.instance('fits', 'hot', 1.0),
                     h.instance('small', 'hot', 0.5),
                     h.instance('larger', 'hot', 1.2)]
        self.assertEqual([('larger', 'hot', 'cool')],
                         leveled(HOSTS, instances))

    def test_any_gap_above_zero_turns_it_on(self):
        self.assertEqual(1, len(leveled(HOSTS, INSTANCES, level_gap=0.5)))
        self.assertEqual({'hot'}, level.leveling_sources(
            hosts_at(('hot', 78.0, 3.0, {}), ('cool', 40.0, 3.0, {})),
            model.PlannerConfig(level_gap=0.5)))

    def test_fractions_of_a_point_count(self):
        # 0.55 cores on 10 vCPUs: 5.5 points. 'warm' would end at 72.53 %,
        # over what 'hot' keeps (72.5 %): no move.
        hosts = [('hot', 78.0, {}), ('warm', 67.03, {})]
        instances = [h.instance('odd', 'hot', 0.55)]
        self.assertEqual([], leveled(hosts, instances))
        hosts = [('hot', 78.0, {}), ('warm', 66.9, {})]
        self.assertEqual([('odd', 'hot', 'warm')], leveled(hosts, instances))

    def test_nothing_under_the_gap_even_if_it_fits(self):
        hosts = [('hot', 78.0, {}), ('warm', 73.0, {})]
        instances = [h.instance('tiny', 'hot', 0.2)]
        self.assertEqual([], leveled(hosts, instances))

    def test_a_rate_above_the_gate_levels_too(self):
        self.assertEqual(1, len(leveled(HOSTS, INSTANCES, rate=4.0)))

    def test_as_many_as_the_total_limit_allows(self):
        hosts = [(f'd{n}', 30.0 + n, {}) for n in range(4)]
        hosts += [(f's{n}', 75.0 + n, {}) for n in range(4)]
        instances = [h.instance(f'i{n}', f's{n}', 1.0) for n in range(4)]
        for inflight, count in ((0, 4), (1, 3), (3, 1), (4, 0), (5, 0)):
            self.assertEqual(count, len(leveled(
                hosts, instances, inflight_total=inflight)), inflight)

    def test_a_host_over_its_own_limit_sends_nothing(self):
        snap = h.snapshot([h.host(n, c, rise_rate=3.0) for n, c, _ in HOSTS],
                          INSTANCES, inflight_by_host={'hot': 3},
                          inflight_total=3)
        self.assertEqual((), planner.plan(snap, h.allow_all).moves)

    def test_a_violated_host_over_its_limit_is_not_relieved(self):
        snap = h.snapshot(
            [h.host('over', 95.0, counter=1), h.host('cool', 30.0)],
            [h.instance('o1', 'over', 2.0)], inflight_by_host={'over': 3},
            inflight_total=3, max_concurrent_migrations=8, level_gap=0)
        self.assertEqual((), planner.plan(snap, h.allow_all).moves)

    def test_a_disabled_host_does_not_send(self):
        hosts = [('hot', 78.0, {'schedulable': False}), ('cool', 40.0, {})]
        self.assertEqual([], leveled(hosts, INSTANCES))

    def test_a_violated_host_cured_into_the_band_levels_too(self):
        # 'over' is cured to 75 % onto 'cool1', then sends 'o2' by
        # leveling to the coolest host left.
        hosts = [('over', 95.0, {'counter': 1}), ('cool1', 30.0, {}),
                 ('cool2', 35.0, {}), ('cool3', 40.0, {})]
        instances = [h.instance('o1', 'over', 2.0),
                     h.instance('o2', 'over', 0.5)]
        result = plan(hosts, instances)
        self.assertEqual([('o1', 'cool1'), ('o2', 'cool2')],
                         [(m.instance, m.destination) for m in result.moves])
        self.assertTrue(result.moves[1].reason.startswith('level: '))

    def test_each_aggregate_pool_levels_within_itself(self):
        # The coolest host is in another pool; pool names as read from
        # the database, equal to each other but not the same object.
        hosts = [('hot', 78.0, {'pool': h.fresh('p1')}),
                 ('mid', 55.0, {'pool': h.fresh('p1')}),
                 ('cool', 40.0, {'pool': h.fresh('p2')})]
        self.assertEqual([('fits', 'hot', 'mid')],
                         leveled(hosts, INSTANCES, mode=h.fresh('aggregate')))

    def test_the_mean_rate_is_not_rounded(self):
        hosts = hosts_at(('a', 75.0, 2.5, {}), ('b', 40.0, 3.6, {}))
        self.assertAlmostEqual(3.05, level.rise_rates(
            hosts, model.PlannerConfig())[None])
        self.assertEqual({'a'}, level.leveling_sources(
            hosts, model.PlannerConfig(level_rise_rate=3.05)))
        self.assertEqual(set(), level.leveling_sources(
            hosts, model.PlannerConfig(level_rise_rate=3.06)))
        hosts = hosts_at(('a', 75.0, 4.0, {}), ('b', 40.0, 4.0, {}))
        self.assertEqual({'a'}, level.leveling_sources(
            hosts, model.PlannerConfig(mode=h.fresh('global'))))

    def test_a_source_past_the_margin_takes_nothing_back(self):
        # Two migrations per host: 'a' (78 %, past its margin, so never a
        # destination this period) sends a1 to 'c' and ends at 68 %; b1,
        # which a filter allows onto 'a' only, stays.
        def candidates(instance, snap):
            return model.Candidates(
                allowed=['a'] if instance.uuid == 'b1' else ['c'])
        snap = h.snapshot(
            [h.host(name, cpu, rise_rate=3.0)
             for name, cpu in (('a', 78.0), ('b', 77.0), ('c', 40.0))],
            [h.instance('a1', 'a', 1.0), h.instance('b1', 'b', 0.3)],
            max_concurrent_migrations_per_host=2, benefit_horizon=0)
        self.assertEqual([('a1', 'a', 'c')],
                         [(m.instance, m.source, m.destination)
                          for m in planner.plan(snap, candidates).moves])


class LevelMoveRecordTest(testtools.TestCase):

    def test_a_leveling_move_records_its_source_load_for_the_check(self):
        # The relief check needs the source's load before the move.
        move = plan(HOSTS, INSTANCES).moves[0]
        self.assertEqual(model.LEVEL, move.goal)
        self.assertEqual(78.0, move.expected['source_cpu_before'])


class LevelSourceLimitTest(testtools.TestCase):

    def test_a_host_past_its_in_flight_limit_sends_nothing(self):
        # 'hot' already runs 3 migrations, over the limit of 2 (lowered
        # since they started): no leveling move off it.
        snap = h.snapshot(
            [h.host(name, cpu, rise_rate=3.0, **kwargs)
             for name, cpu, kwargs in HOSTS], INSTANCES,
            inflight_by_host={'hot': 3}, inflight_total=3,
            benefit_horizon=0, max_concurrent_migrations_per_host=1,
            max_concurrent_migrations_per_violated_host=2)
        self.assertEqual((), planner.plan(snap, h.allow_all).moves)


class PackedTest(testtools.TestCase):

    def test_a_power_state_read_from_the_database_is_the_same_state(self):
        # Equal to 'on', not the same object: no host is held out.
        hosts = {'a': h.host('a', 50.0, power=''.join(['o', 'n']))}
        self.assertEqual({}, level.packed(hosts, model.PlannerConfig()))


class LearnedFromReliefTest(testtools.TestCase):
    """A pool whose moved loads do not stay stops leveling, and ranks
    destinations at their projected load alone."""

    def learned(self, counts, **config):
        hosts = [('hot', 78.0, {'loads_stayed': counts}),
                 ('mid', 55.0, {}), ('cool', 40.0, {})]
        return plan(hosts, INSTANCES, **config)

    def test_fewer_than_the_share_stayed_no_leveling(self):
        result = self.learned((8, 20))
        self.assertEqual((), result.moves)
        self.assertIn('pool global: no leveling though load jumps 3.0 '
                      'times an hour per host (level_rise_rate 3): its '
                      'moved loads do not stay, 8 of 20 moved loads '
                      'stayed (level_steady_share 0.45)', result.notes)
        self.assertEqual([('fits', 'hot', 'cool')],
                         [(m.instance, m.source, m.destination)
                          for m in self.learned((9, 20)).moves])

    def test_too_few_checks_say_nothing(self):
        self.assertEqual(1, len(self.learned((0, 19)).moves))
        self.assertEqual((), self.learned((0, 20)).moves)
        self.assertEqual((), self.learned((17, 40)).moves)

    def test_more_than_the_share_stayed_levels(self):
        for counts in ((20, 20), (30, 40)):
            self.assertEqual(1, len(self.learned(counts).moves), counts)

    def test_the_share_is_an_option_and_zero_never_stops(self):
        self.assertEqual((), self.learned((11, 20),
                                          level_steady_share=0.6).moves)
        self.assertEqual(1, len(self.learned((12, 20),
                                             level_steady_share=0.6).moves))
        self.assertEqual(1, len(self.learned((0, 100),
                                             level_steady_share=0).moves))

    def test_a_pool_that_would_not_level_gets_no_note(self):
        result = self.learned((0, 20), rate=0.0)
        self.assertEqual((), result.moves)
        self.assertFalse([n for n in result.notes if 'no leveling' in n])

    def test_counts_add_up_over_the_pool_s_balanced_hosts(self):
        hosts = hosts_at(('a', 75.0, 3.0, {'loads_stayed': (4, 10)}),
                         ('b', 40.0, 3.0, {'loads_stayed': (4, 10)}),
                         ('x', 40.0, 3.0, {'loads_stayed': (20, 20),
                                           'excluded': True}))
        config = model.PlannerConfig()
        self.assertEqual(
            {None: '8 of 20 moved loads stayed (level_steady_share 0.45)'},
            working.unsteady(hosts, config))
        self.assertEqual({}, level.leveling_pools(hosts, config))
        self.assertEqual(set(), level.leveling_sources(hosts, config))
        # Each aggregate pool learns apart: 4 of 10 is too few checks.
        aggregate = model.PlannerConfig(mode='aggregate')
        pooled = {n: dataclasses.replace(host, pool=n)
                  for n, host in hosts.items()}
        self.assertEqual({}, working.unsteady(pooled, aggregate))

    def test_a_packed_pool_stops_too(self):
        held = [('hot', 78.0, {'loads_stayed': (0, 20)}), ('mid', 55.0, {}),
                ('cool', 40.0, {}),
                ('off', None, {'power': model.STANDBY,
                               'schedulable': False})]
        self.assertEqual((), plan(held, INSTANCES, rate=0.0).moves)


class RankedAtProjectionTest(testtools.TestCase):
    """Where moved loads do not stay, a host's past swing says nothing
    of its next: destinations are ranked at their projection alone."""

    def relieved(self, counts, swingy=40.0):
        hosts = [h.host('src', 90.0, counter=1, cpu_deviation=0.0,
                        loads_stayed=counts),
                 h.host('smooth', 50.0, cpu_deviation=0.0),
                 h.host('swingy', swingy, cpu_deviation=10.0)]
        snap = h.snapshot(hosts, [h.instance('i', 'src', 2.0)],
                          benefit_horizon=0, level_gap=0)
        return [(m.instance, m.destination)
                for m in planner.plan(snap, h.allow_all).moves]

    def test_steady_pool_prefers_the_smooth_host(self):
        # swingy: 60 % + 2 deviations of 10 = 80 against smooth's 70.
        self.assertEqual([('i', 'smooth')], self.relieved(None))
        self.assertEqual([('i', 'smooth')], self.relieved((9, 20)))

    def test_unsteady_pool_takes_the_coolest(self):
        self.assertEqual([('i', 'swingy')], self.relieved((8, 20)))

    def test_unsteady_pool_does_not_favour_the_swingy_host_either(self):
        # swingy at 52 % ends at 72 %, smooth at 70 %: the projection
        # alone picks smooth; the swing counts neither way.
        self.assertEqual([('i', 'smooth')],
                         self.relieved((8, 20), swingy=52.0))
