"""Rules about recent moves: the arrivals' reserve at a destination, and a
second move off a violated host that one move does not cure."""

import testscenarios
import testtools

from nova_drs_scheduler.rebalance import planner
from tests.unit.rebalance import helpers as h

load_tests = testscenarios.load_tests_apply_scenarios

POLICIES = [('seed', {'policy': 'seed'}), ('balanced', {'policy': 'balanced'})]


def plan(hosts, instances, **config):
    return planner.plan(h.snapshot(hosts, instances, **config), h.allow_all)


def arrived(uuid, host_name, cores=1.0):
    """An instance that came to ``host_name`` by a recent migration."""
    return h.instance(uuid, host_name, cores, left=('elsewhere',))


class ArrivalReserveTest(testtools.TestCase):

    # 'hot' at 95% sheds a 10-point instance; 'dest' at 60% would end at
    # 70%, 5 points under the margin's 75%.

    def hosts(self):
        return [h.host('hot', 95.0, counter=1), h.host('dest', 60.0)]

    def test_each_recent_arrival_keeps_its_reserve(self):
        # One arrival: judged at 60 + 5 + 10 = 75%, exactly the margin:
        # accepted.  Two: 80% > 75%, refused, and the record says why.
        one = [h.instance('i1', 'hot', 1.0), arrived('a1', 'dest', 0.0)]
        result = plan(self.hosts(), one, policy='balanced',
                      arrival_reserve=5.0)
        self.assertEqual(['dest'], [m.destination for m in result.moves])
        two = one + [arrived('a2', 'dest', 0.0)]
        result = plan(self.hosts(), two, policy='balanced',
                      arrival_reserve=5.0)
        self.assertEqual((), result.moves)
        self.assertIn('1x margin', result.notes[0])

    def test_the_reserve_is_reported_with_the_refusal(self):
        hosts = self.hosts() + [h.host('other', 64.0)]
        instances = [h.instance('i1', 'hot', 1.0), arrived('a1', 'dest', 0.0),
                     arrived('a2', 'dest', 0.0)]
        result = plan(hosts, instances, policy='balanced',
                      arrival_reserve=5.0)
        self.assertEqual(['other'], [m.destination for m in result.moves])
        refused = {r.subject: r for r in result.moves[0].rejected}
        self.assertEqual('margin', refused['dest'].rule)
        self.assertIn('2 recent arrival(s) reserve 10.0 points',
                      refused['dest'].detail)

    def test_instances_that_never_moved_are_not_arrivals(self):
        instances = [h.instance('i1', 'hot', 1.0),
                     h.instance('n1', 'dest', 0.0),
                     h.instance('n2', 'dest', 0.0)]
        result = plan(self.hosts(), instances, policy='balanced',
                      arrival_reserve=5.0)
        self.assertEqual(['dest'], [m.destination for m in result.moves])

    def test_no_reserve_by_default(self):
        instances = [h.instance('i1', 'hot', 1.0), arrived('a1', 'dest', 0.0),
                     arrived('a2', 'dest', 0.0)]
        result = plan(self.hosts(), instances, policy='balanced')
        self.assertEqual(['dest'], [m.destination for m in result.moves])

    def test_a_move_planned_this_period_is_an_arrival_for_the_next(self):
        # Two hot hosts each shed 10 points; 'a' (50%) is the coolest and
        # takes the first.  Without the reserve it is then at 60% and takes
        # the second too (70% against 'b''s 72%); with it, the second is
        # judged at 60 + 5 + 10 = 75% there, and goes to 'b'.
        hosts = [h.host('hot1', 95.0, counter=1),
                 h.host('hot2', 94.0, counter=1),
                 h.host('a', 50.0), h.host('b', 62.0)]
        instances = [h.instance('i1', 'hot1', 1.0),
                     h.instance('i2', 'hot2', 1.0)]
        result = plan(hosts, instances, policy='balanced',
                      max_concurrent_migrations_per_host=2)
        self.assertEqual(['a', 'a'], [m.destination for m in result.moves])
        result = plan(hosts, instances, policy='balanced',
                      max_concurrent_migrations_per_host=2,
                      arrival_reserve=5.0)
        self.assertEqual(['a', 'b'], [m.destination for m in result.moves])


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

    def test_one_move_by_default_and_at_or_below_the_per_host_limit(self):
        for limit in (0, 1):
            moves = self.moves(
                max_concurrent_migrations_per_violated_host=limit)
            self.assertEqual(1, len(moves), limit)

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
