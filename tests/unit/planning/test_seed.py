"""The seed policy reproduces the first users' algorithm."""

import testtools

from nova_drs_scheduler.planning import planner
from tests import snapshots as h


def seed_snapshot(**config):
    # 'hot' is violated (counter 3 = stabilization); its instances use
    # 3.0, 0.5, 2.0 and 0.5 cores; the two 0.5 tie, broken by uuid.
    hosts = [h.host('hot', 95.0, 50.0, counter=3),
             h.host('cool', 40.0, 50.0),
             h.host('cold', 30.0, 50.0, vcpus=4),
             h.host('warm', 60.0, 50.0, vcpus=40)]
    instances = [h.instance('i-big', 'hot', 3.0),
                 h.instance('i-b', 'hot', 0.5, memory_mb=8000),
                 h.instance('i-mid', 'hot', 2.0),
                 h.instance('i-a', 'hot', 0.5, memory_mb=8000)]
    return h.snapshot(hosts, instances, policy='seed', **config)


class SeedTest(testtools.TestCase):

    def test_least_loaded_instance_to_lowest_utilization_after(self):
        plan = planner.plan(seed_snapshot(), h.allow_all)
        self.assertEqual(1, len(plan.moves))
        move = plan.moves[0]
        self.assertEqual('i-a', move.instance)
        # After +0.5 core: cool 45%, cold (4 vCPUs) 42.5%, warm 61.25%:
        # the seed ranks by CPU after the move, not before.
        self.assertEqual('cold', move.destination)
        self.assertAlmostEqual(42.5, move.expected['destination_cpu'])
        self.assertAlmostEqual(90.0, move.expected['source_cpu'])
        self.assertEqual('seed', plan.policy)

    def test_seed_has_no_margin_nor_min_improvement(self):
        # RAM would end at 130% on every host and CPU gain is tiny: the seed
        # moves anyway, as the original algorithm did.
        plan = planner.plan(seed_snapshot(min_improvement=50.0, margin=50.0),
                            h.allow_all)
        self.assertEqual('i-a', plan.moves[0].instance)

    def test_one_move_per_violated_host(self):
        plan = planner.plan(seed_snapshot(max_migrations_per_period=10,
                                          max_concurrent_migrations=10,
                                          max_concurrent_migrations_per_host=5),
                            h.allow_all)
        self.assertEqual(['i-a'], [m.instance for m in plan.moves])

    def test_no_destination_for_the_chosen_instance_means_no_move(self):
        plan = planner.plan(seed_snapshot(),
                            h.allow_except({'cool': 'CoreFilter',
                                            'cold': 'CoreFilter',
                                            'warm': 'RamFilter'}))
        self.assertEqual((), plan.moves)
        self.assertEqual(1, len(plan.notes))
        self.assertIn('instance i-a', plan.notes[0])
        self.assertIn('2x CoreFilter', plan.notes[0])
        self.assertIn('1x RamFilter', plan.notes[0])

    def test_blocked_least_loaded_instance_is_skipped(self):
        snap = seed_snapshot()
        instances = [i if i.uuid != 'i-a' else
                     h.instance('i-a', 'hot', 0.5, blocked='cooldown')
                     for i in snap.instances]
        plan = planner.plan(h.snapshot(list(snap.hosts.values()), instances,
                                       policy='seed'), h.allow_all)
        self.assertEqual('i-b', plan.moves[0].instance)
