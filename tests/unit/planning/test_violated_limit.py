"""A second move off a violated host that one move does not cure
(``max_concurrent_migrations_per_violated_host``)."""

import testscenarios
import testtools

from nova_drs_scheduler.planning import planner
from tests import snapshots as h

load_tests = testscenarios.load_tests_apply_scenarios

POLICIES = [('seed', {'policy': 'seed'}), ('balanced', {'policy': 'balanced'})]


def plan(hosts, instances, **config):
    return planner.plan(h.snapshot(hosts, instances, **config), h.allow_all)


class ViolatedHostLimitTest(testtools.TestCase):

    scenarios = POLICIES

    # 'hot' at 99% needs two 10-point moves to get under 80%; two
    # destinations can each take one.

    def setUp(self):
        super().setUp()
        self.hosts = [h.host('hot', 99.0, counter=1), h.host('a', 20.0),
                      h.host('b', 30.0)]
        self.instances = [h.instance('i1', 'hot', 1.0),
                          h.instance('i2', 'hot', 1.0)]

    def moves(self, **config):
        return plan(self.hosts, self.instances, policy=self.policy,
                    **config).moves

    def test_a_violated_host_may_send_a_second_move(self):
        moves = self.moves(max_concurrent_migrations_per_violated_host=2)
        if self.policy == 'seed':
            # The seed makes one move per violated host whatever the limit.
            self.assertEqual(1, len(moves))
            return
        self.assertEqual([('hot', 'a'), ('hot', 'b')],
                         [(m.source, m.destination) for m in moves])

    def test_destinations_keep_the_per_host_limit(self):
        # One destination only: it takes one move, not two.
        self.hosts = self.hosts[:2]
        moves = self.moves(max_concurrent_migrations_per_violated_host=2)
        self.assertEqual(['a'], [m.destination for m in moves])

    def test_two_moves_by_default(self):
        self.assertEqual(1 if self.policy == 'seed' else 2,
                         len(self.moves()))

    def test_one_move_at_or_below_the_per_host_limit(self):
        for limit in (0, 1):
            moves = self.moves(
                max_concurrent_migrations_per_violated_host=limit)
            self.assertEqual(1, len(moves), limit)

    def test_a_cured_host_gets_no_second_move(self):
        # 90%: one 10-point move brings it to 80%, at its threshold.
        self.hosts[0] = h.host('hot', 90.0, counter=1)
        self.assertEqual(1, len(self.moves()))

    def test_a_per_host_limit_above_it_still_applies(self):
        self.instances.append(h.instance('i3', 'hot', 1.0))
        self.hosts[0] = h.host('hot', 109.0, counter=1)
        self.hosts.append(h.host('c', 10.0))
        moves = self.moves(max_concurrent_migrations_per_host=3,
                           max_concurrent_migrations_per_violated_host=2,
                           max_migrations_per_period=3)
        self.assertEqual(1 if self.policy == 'seed' else 3, len(moves))

    def test_in_flight_moves_off_the_host_count(self):
        snap = h.snapshot(self.hosts, self.instances, policy=self.policy,
                          inflight_by_host={'hot': 1}, inflight_total=1,
                          max_concurrent_migrations_per_violated_host=2)
        self.assertEqual(1, len(planner.plan(snap, h.allow_all).moves))
        snap = h.snapshot(self.hosts, self.instances, policy=self.policy,
                          inflight_by_host={'hot': 2}, inflight_total=2,
                          max_concurrent_migrations_per_violated_host=2)
        result = planner.plan(snap, h.allow_all)
        self.assertEqual((), result.moves)
        self.assertIn('host hot: violated, no move: limit:per-host',
                      result.notes)

    def test_more_in_flight_than_the_limit_still_stops_it(self):
        # Lowering the limits while migrations run leaves a host with more
        # in flight than they allow: it is over them, not only at them.
        snap = h.snapshot(self.hosts, self.instances, policy=self.policy,
                          inflight_by_host={'hot': 3}, inflight_total=3,
                          max_concurrent_migrations=10,
                          max_concurrent_migrations_per_violated_host=2)
        result = planner.plan(snap, h.allow_all)
        self.assertEqual((), result.moves)
        self.assertIn('host hot: violated, no move: limit:per-host',
                      result.notes)
