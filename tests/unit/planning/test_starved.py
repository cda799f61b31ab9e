"""Starved hosts (demand unserved: contention, or a CPU at 100 %) first.

Hosts have 10 vCPUs (``tests.snapshots``): 0.8 cores are 8 points.
"""

import dataclasses

import testtools

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import search
from nova_drs_scheduler.planning.policies import balanced
from nova_drs_scheduler.planning.policies import base
from tests import snapshots as h


def plan(hosts, instances, candidates=h.allow_all, **config):
    return planner.plan(h.snapshot(hosts, instances, **config), candidates)


class StarvedFirstTest(testtools.TestCase):

    def test_a_starved_host_takes_the_budget_before_a_hotter_one(self):
        # hot looks hotter (95 %) but serves its demand; waiting is at 88 %
        # with 4 points of its demand waiting for a CPU.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('waiting', 88.0, counter=1, cpu_contention=4.0),
                 h.host('cool', 20.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0),
                              h.instance('i2', 'waiting', 1.0)],
                      max_migrations_per_period=1)
        self.assertEqual([('i2', 'waiting')],
                         [(m.instance, m.source) for m in result.moves])

    def test_contention_under_the_floor_is_not_starved(self):
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('busy', 88.0, counter=1,
                        cpu_contention=model.STARVED_CONTENTION),
                 h.host('cool', 20.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0),
                              h.instance('i2', 'busy', 1.0)],
                      max_migrations_per_period=1)
        self.assertEqual(['hot'], [m.source for m in result.moves])

    def test_without_contention_a_cpu_at_100_is_starved(self):
        hosts = [h.host('hot', 99.9, counter=1, ram=95.0),
                 h.host('full', 100.0, counter=1),
                 h.host('cool', 20.0)]
        self.assertFalse(hosts[0].starved)
        self.assertTrue(hosts[1].starved)
        result = plan(hosts, [h.instance('i1', 'hot', 1.0),
                              h.instance('i2', 'full', 1.0)],
                      max_migrations_per_period=1)
        self.assertEqual(['full'], [m.source for m in result.moves])


class StarvedInTheirCooldownTest(testtools.TestCase):
    """A starved host refilled lately holds only instances in their
    cooldown: when no other may move, those may."""

    COOLING = 'cooldown: moved a -> full 600s ago (cooldown 3600s)'

    def relieved(self, source, *others):
        hosts = [source, h.host('cool', 20.0)]
        instances = [h.instance('i1', source.name, 2.0,
                                blocked=self.COOLING, cooling=True),
                     *others]
        return plan(hosts, instances)

    def test_a_starved_host_sends_an_instance_in_its_cooldown(self):
        result = self.relieved(h.host('full', 110.0, counter=1,
                                      cpu_contention=10.0))
        self.assertEqual([('i1', 'full', 'cool')],
                         [(m.instance, m.source, m.destination)
                          for m in result.moves])
        self.assertIn('host full: starved, and no other instance may '
                      'move: 1 in their cooldown may leave it', result.notes)

    def test_not_from_a_host_merely_over(self):
        result = self.relieved(h.host('hot', 95.0, counter=1))
        self.assertEqual((), result.moves)
        self.assertIn('host hot: violated, no move: no movable instance '
                      f'(blocked: 1x {self.COOLING})', result.notes)

    def test_not_while_another_instance_may_move(self):
        result = self.relieved(h.host('full', 100.0, counter=1),
                               h.instance('i2', 'full', 0.5))
        self.assertEqual(['i2'], [m.instance for m in result.moves])

    def test_an_instance_blocked_otherwise_stays(self):
        hosts = [h.host('full', 100.0, counter=1), h.host('cool', 20.0)]
        result = plan(hosts, [h.instance('i1', 'full', 2.0,
                                         blocked=self.COOLING)])
        self.assertEqual((), result.moves)
        self.assertFalse([n for n in result.notes if 'cooldown may' in n])

    def test_never_back_to_the_host_it_left(self):
        hosts = [h.host('full', 110.0, counter=1, cpu_contention=10.0),
                 h.host('cool', 20.0), h.host('other', 30.0)]
        result = plan(hosts, [h.instance('i1', 'full', 2.0,
                                         blocked=self.COOLING, cooling=True,
                                         left=('cool',))])
        self.assertEqual([('i1', 'other')],
                         [(m.instance, m.destination) for m in result.moves])


class StarvedInsideTheMarginTest(testtools.TestCase):
    """A starved host may send inside the margin in a cool pool: its
    destination only stays under its threshold."""

    HOSTS = dict(a=72.0, idle=10.0)

    def hosts(self, **source):
        return [h.host('src', counter=1, **source),
                *(h.host(name, cpu) for name, cpu in self.HOSTS.items())]

    def plan(self, **source):
        # idle is refused by a filter: 'a' (78 % after, past 75 %) is the
        # only destination; the pool averages 60 %, keeping the margin.
        return plan(self.hosts(**source), [h.instance('i1', 'src', 0.6)],
                    candidates=h.allow_except({'idle': 'FakeFilter'}))

    def test_a_host_merely_over_keeps_the_margin(self):
        result = self.plan(cpu=98.0)
        self.assertEqual((), result.moves)

    def test_a_starved_host_goes_inside_it(self):
        for source in ({'cpu': 100.0}, {'cpu': 98.0, 'cpu_contention': 6.0}):
            [move] = self.plan(**source).moves
            self.assertEqual('a', move.destination)
            self.assertEqual((True, 0.0), (move.expected['inside_margin'],
                                           move.expected['graded_margin']))
            self.assertIn(
                '; inside the margin: no allowed destination keeps the '
                'margin of 5 points, and host src is starved (part of its '
                'demand goes unserved), so a destination only stays under '
                'its threshold: a ends at cpu 78.0%, under 80.0%',
                move.reason)

    def test_never_over_the_destination_threshold(self):
        self.HOSTS = dict(a=75.0, idle=10.0)
        result = self.plan(cpu=100.0)
        self.assertEqual((), result.moves)
        [note] = result.notes
        self.assertIn('inside the margin: instance i1: 1x FakeFilter, '
                      '1x graded-margin', note)


class StarvedPastTheThresholdTest(testtools.TestCase):
    """A host far past its CPUs may send past a destination's threshold
    when no host under it takes the instance: the destination stays
    clear of its CPUs, and one already past its threshold comes first."""

    def plan(self, source, others, cores=0.5, **config):
        return plan([h.host('src', counter=1, **source), *others],
                    [h.instance('i1', 'src', cores)], **config)

    def test_sends_past_a_threshold_once_demand_is_far_past_the_cpus(self):
        for source in ({'cpu': 100.0, 'cpu_contention': 10.0},
                       {'cpu': 112.0}):
            [move] = self.plan(source, [h.host('warm', 84.0)]).moves
            self.assertEqual('warm', move.destination)
            self.assertTrue(move.expected['past_threshold'])
            self.assertTrue(move.expected['inside_margin'])
            self.assertIn(
                '; past the threshold: no allowed destination stays under '
                'its threshold, and host src is far past its CPUs (demand '
                f'{100.0 + source.get("cpu_contention", 12.0):.1f}%, from '
                '110%): warm ends at cpu 89.0%, more than 5 points under '
                'its CPUs', move.reason)

    def test_not_from_a_host_just_past_its_cpus(self):
        # A tenth of a point under PAST_DEMAND (110 %).
        result = self.plan({'cpu': 100.0, 'cpu_contention': 9.9},
                           [h.host('warm', 84.0)])
        self.assertEqual((), result.moves)
        self.assertNotIn(search.PAST, result.notes[0])

    def test_a_cpu_capped_at_100_shows_no_demand_past_it(self):
        self.assertEqual((), self.plan({'cpu': 100.0},
                                       [h.host('warm', 84.0)]).moves)

    def test_the_destination_stays_clear_of_its_cpus(self):
        for others in ([h.host('warm', 90.0)],
                       [h.host('warm', 80.0, cpu_contention=2.0)],
                       [h.host('warm', 84.0, ram=81.0)]):
            # warm's RAM: 81 % and the instance's 10 points, past 90 %.
            result = self.plan({'cpu': 115.0}, others)
            self.assertEqual((), result.moves)
            self.assertIn('past the threshold: instance i1: 1x near-full',
                          result.notes[0])
        # Just under: 89.9 + 5 stays under 95.
        [move] = self.plan({'cpu': 115.0}, [h.host('warm', 89.9)]).moves
        self.assertEqual('warm', move.destination)

    def test_a_host_already_past_its_threshold_comes_first(self):
        # under ends at 83 %, crossing its threshold; over ends at 91 %.
        [move] = self.plan({'cpu': 115.0}, [h.host('under', 78.0),
                                            h.host('over', 86.0)]).moves
        self.assertEqual('over', move.destination)
        [move] = self.plan({'cpu': 115.0}, [h.host('under', 78.0),
                                            h.host('over', 91.0)]).moves
        self.assertEqual('under', move.destination)
        self.assertTrue(move.expected['past_threshold'])

    def test_judged_past_its_threshold_at_its_expected_load(self):
        # a is at 76 % but expected at 81 %, past its threshold already:
        # it ends at 86 %, under b's 88 %.
        [move] = self.plan({'cpu': 115.0}, [
            h.host('a', 76.0, cpu_expected=81.0), h.host('b', 83.0)]).moves
        self.assertEqual('a', move.destination)
        # At its threshold exactly, a host is not past it yet.
        [move] = self.plan({'cpu': 115.0}, [h.host('a', 80.0),
                                            h.host('b', 83.0)]).moves
        self.assertEqual('b', move.destination)

    def test_ram_up_to_its_threshold(self):
        # The instance's 1000 MB are 10 points of warm's RAM.
        [move] = self.plan({'cpu': 115.0}, [h.host('warm', 84.0, ram=70.0)]
                           ).moves
        self.assertEqual(80.0, move.expected['destination_ram'])
        result = self.plan({'cpu': 115.0}, [h.host('warm', 84.0, ram=80.0)])
        self.assertEqual((), result.moves)

    def test_the_record_names_what_refused_each_host(self):
        # full, violated, would end at 96 %; busy has no free slot.
        result = plan([h.host('src', 115.0, counter=1),
                       h.host('full', 91.0, counter=1),
                       h.host('busy', 84.0, counter=1),
                       h.host('warm', 84.0)],
                      [h.instance('i1', 'src', 0.5)],
                      inflight_by_host={'busy': 2}, inflight_total=2)
        [move] = result.moves
        self.assertEqual('warm', move.destination)
        self.assertEqual(
            {'full': ('near-full', 'projected cpu 96.0%'),
             'busy': ('limit:per-host', '2 migrations in flight or planned')},
            {r.subject: (r.rule, r.detail) for r in move.rejected})

    def test_a_host_that_stays_under_its_threshold_is_inside_it(self):
        # Every other host is violated, so nothing was refused by the
        # margin and the inside stage had nothing to open; 'low', violated
        # by its count but at 72 %, ends at 77 %: inside the margin, under
        # its threshold.
        [move] = plan([h.host('src', 115.0, counter=1),
                       h.host('low', 72.0, counter=1)],
                      [h.instance('i1', 'src', 0.5)]).moves
        self.assertEqual('low', move.destination)
        self.assertTrue(move.expected['inside_margin'])
        self.assertNotIn('past_threshold', move.expected)
        self.assertIn('; inside the margin: ', move.reason)

    def test_a_violated_host_takes_it_while_it_has_a_free_slot(self):
        warm = h.host('warm', 84.0, counter=1)
        [move] = self.plan({'cpu': 115.0}, [warm]).moves
        self.assertEqual('warm', move.destination)
        result = plan([h.host('src', 115.0, counter=1), warm],
                      [h.instance('i1', 'src', 0.5)],
                      inflight_by_host={'warm': 1}, inflight_total=1,
                      max_concurrent_migrations_per_host=1)
        self.assertEqual((), result.moves)
        self.assertIn('past the threshold: instance i1: 1x limit:per-host',
                      result.notes[0])

    def test_a_violated_destination_is_no_destination_at_the_margin_after(
            self):
        # src sends to warm past its threshold; src2, only over its own
        # threshold, must not then find warm at the margin stage.
        result = plan([h.host('src', 115.0, counter=1),
                       h.host('src2', 90.0, counter=1),
                       h.host('warm', 60.0, counter=1)],
                      [h.instance('i1', 'src', 0.5),
                       h.instance('i2', 'src2', 0.5)])
        self.assertEqual(['src'], [m.source for m in result.moves])

    def test_never_back_to_a_host_an_instance_came_from(self):
        result = plan([h.host('src', 115.0, counter=1),
                       h.host('warm', 84.0)],
                      [h.instance('i1', 'src', 0.5),
                       h.instance('i0', 'src', 0.1, left=('warm',))])
        self.assertEqual((), result.moves)
        self.assertIn('1x came-from', result.notes[0])

    def test_only_a_policy_that_grades(self):
        class Flat(balanced.BalancedPolicy):
            grades = base.Policy.grades

        self.patch(planner.policies, 'get', lambda name: Flat())
        result = self.plan({'cpu': 115.0}, [h.host('warm', 84.0)])
        self.assertEqual((), result.moves)
        self.assertNotIn(search.PAST, result.notes[0])


class HarmTest(testtools.TestCase):
    """Demand over 100 % weighs far more than demand over the threshold."""

    def test_ten_times_as_the_docs_say(self):
        self.assertEqual(10.0, benefit.UNSERVED_WEIGHT)

    def test_loads_and_estimates_are_values(self):
        for value, field in ((benefit.Load(1.0, 1.0), 'current'),
                             (benefit.Estimate(1.0, 0.5, 0.1), 'relief')):
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              value, field, 2.0)

    def test_points_over_100_weigh_more(self):
        self.assertEqual(10.0, benefit.harm(90.0, 0.0, 80.0))
        self.assertEqual(
            30.0 + 10.0 * benefit.UNSERVED_WEIGHT,
            benefit.harm(110.0, 0.0, 80.0))
        self.assertEqual(0.0, benefit.harm(70.0, 0.0, 80.0))

    def test_only_the_level_over_100_weighs_more(self):
        # A swing past 100 % counts as points over the threshold only.
        self.assertEqual(benefit.excess(95.0, 5.0, 80.0),
                         benefit.harm(95.0, 5.0, 80.0))
        self.assertAlmostEqual(
            benefit.excess(104.0, 5.0, 80.0)
            + 4.0 * benefit.UNSERVED_WEIGHT,
            benefit.harm(104.0, 5.0, 80.0))

    def test_relieving_a_starved_host_buys_more(self):
        config = model.PlannerConfig()

        def relief(source):
            return benefit.estimate(
                benefit.Load(source, source), 10, 80.0,
                benefit.Load(20.0, 20.0), 10, 80.0,
                benefit.Load(1.0, 1.0), 1000, config).relief
        # 10 points off: 95 -> 85 takes 10 over the threshold; 115 -> 105
        # takes 10 over it and 10 over 100.
        self.assertAlmostEqual(10.0 * 60 / 10.0, relief(95.0))
        self.assertAlmostEqual(
            (10.0 + 10.0 * benefit.UNSERVED_WEIGHT) * 60 / 10.0,
            relief(115.0))


class ContentionInTheCostBenefitTest(testtools.TestCase):

    def test_measured_contention_counts_as_demand(self):
        # At 100 % with 10 points waiting, a move of 1 core takes demand
        # from 110 to 100 %: unserved relief the capped CPU cannot show
        # (for the first minutes: contention passes as a burst does).
        def relief(contention):
            hosts = [h.host('src', 100.0, counter=1,
                            cpu_contention=contention),
                     h.host('cool', 20.0)]
            [move] = plan(hosts, [h.instance('i1', 'src', 1.0)]).moves
            return move.expected['relief']
        self.assertGreater(relief(10.0), relief(0.0) * 3)
