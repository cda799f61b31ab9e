"""Starved hosts (demand unserved: contention, or a CPU at 100 %) first.

Hosts have 10 vCPUs (``tests.snapshots``): 0.8 cores are 8 points.
"""

import dataclasses

import testtools

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
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
