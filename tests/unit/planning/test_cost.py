"""The planner's documented cost: pruning that keeps a period cheap.

Nova's filters (``candidates()``) are the costly call and the policy's
destination score is evaluated per host; these tests pin the pruning the
planner's docstring promises, so a change that silently scans everything
fails here rather than only in the benchmark.
"""

from unittest import mock

import testtools

from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning.policies import balanced
from tests import snapshots as h


class PlannerCostTest(testtools.TestCase):

    def counted(self, hosts, instances, **config):
        calls = {'candidates': 0, 'destination': 0}

        def candidates(instance, snap):
            calls['candidates'] += 1
            return h.allow_all(instance, snap)

        real = balanced.BalancedPolicy.destination

        def destination(policy, *args):
            calls['destination'] += 1
            return real(policy, *args)

        with mock.patch.object(balanced.BalancedPolicy, 'destination',
                               destination):
            result = planner.plan(h.snapshot(hosts, instances, **config),
                                  candidates)
        return result, calls

    def test_search_stops_at_the_first_host_that_cannot_win(self):
        # 100 destinations, 0..99% CPU. Each is scored once to index it and
        # once for the chosen move's record; the search itself only needs
        # the dozen coolest, never a third pass over all of them.
        hosts = [h.host('hot', 95.0, counter=3)]
        hosts += [h.host(f'd{n:03}', float(n)) for n in range(100)]
        result, calls = self.counted(hosts, [h.instance('i1', 'hot', 1.0)],
                                     margin=10.0)
        self.assertEqual('d000', result.moves[0].destination)
        self.assertLess(calls['destination'], 200)

    def test_filters_run_once_when_the_first_instance_cannot_be_beaten(self):
        # Eight equal instances, one lighter in RAM: it cures as well as
        # any and costs least, and no other can beat it, so Nova's filters
        # run once.
        hosts = [h.host('hot', 95.0, counter=3), h.host('cold', 0.0)]
        instances = [h.instance('light', 'hot', 3.0, memory_mb=500)]
        instances += [h.instance(f'i{n}', 'hot', 3.0, memory_mb=1000 + n)
                      for n in range(7)]
        result, calls = self.counted(hosts, instances)
        self.assertEqual('light', result.moves[0].instance)
        self.assertEqual(1, calls['candidates'])

    def test_hopeless_instances_cost_no_filter_run(self):
        # No instance can lower the source by min_improvement nor cure it
        # (90 -> 88%): refused without asking Nova's filters.
        hosts = [h.host('hot', 90.0, counter=3), h.host('cold', 0.0)]
        instances = [h.instance(f'i{n}', 'hot', 0.2) for n in range(3)]
        result, calls = self.counted(hosts, instances)
        self.assertEqual((), result.moves)
        self.assertEqual(0, calls['candidates'])

    def test_a_cure_is_scored_before_partial_reliefs(self):
        # One instance cures the host (99 -> 79%); the others relieve it
        # only partly or not enough to count. Any cure beats a partial
        # relief, so the partial ones are never scored: Nova's filters run
        # once.
        hosts = [h.host('hot', 99.0, counter=3), h.host('cold', 0.0,
                                                      vcpus=100)]
        instances = [h.instance('cure', 'hot', 2.0)]
        instances += [h.instance(f'part{n}', 'hot', 1.0 + n / 10)
                      for n in range(5)]
        instances += [h.instance('hopeless', 'hot', 0.1)]
        result, calls = self.counted(hosts, instances, margin=10.0)
        self.assertEqual('cure', result.moves[0].instance)
        self.assertEqual(1, calls['candidates'])

    def test_filters_skip_an_instance_that_cannot_beat_the_best_so_far(self):
        # 'big' cures the host most but fills 'cold' to 70%; 'mid' leaves
        # the pair level at 65%, the best option. 'small' could at best
        # leave the source at 68%, worse than 'mid' though better than
        # 'big': it can only lose, so Nova's filters never run for it.
        hosts = [h.host('hot', 95.0, counter=3), h.host('cold', 35.0)]
        instances = [h.instance('big', 'hot', 3.5),
                     h.instance('mid', 'hot', 3.0),
                     h.instance('small', 'hot', 2.7)]
        result, calls = self.counted(hosts, instances)
        self.assertEqual([('mid', 'cold')], [(m.instance, m.destination)
                                             for m in result.moves])
        self.assertEqual(2, calls['candidates'])

    def test_at_most_eight_instances_scored_per_violated_host(self):
        # doc/balancing.md: 8 by default. Nova's filters refuse every
        # destination, so no option ends the scan early.
        hosts = [h.host('hot', 99.0, counter=3), h.host('cold', 0.0)]
        instances = [h.instance(f'i{n:02}', 'hot', 1.0) for n in range(12)]
        asked = []

        def candidates(instance, snap):
            asked.append(instance.uuid)
            return h.allow_except({'cold': 'RamFilter'})(instance, snap)

        result = planner.plan(h.snapshot(hosts, instances), candidates)
        self.assertEqual((), result.moves)
        self.assertEqual(8, len(set(asked)))
