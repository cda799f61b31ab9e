"""Moves inside the margin: the balanced policy's second pass in a warm pool.

Hosts have 10 vCPUs (``tests.snapshots``): 0.8 cores are 8 points.
"""

import testtools

from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning.policies import balanced
from nova_drs_scheduler.planning.policies import base
from tests import snapshots as h


def plan(hosts, instances, candidates=h.allow_all, **config):
    return planner.plan(h.snapshot(hosts, instances, **config), candidates)


class InsideMarginTest(testtools.TestCase):

    def test_the_issue_case_goes_to_the_host_that_stays_under(self):
        # The pool averages 75.7 %, past 80 - 5: the margin is graded to 0.
        # host3 ends at 78 % (host1 at 77 %), host2 would reach 80 %.
        hosts = [h.host('host1', 85.0, counter=1), h.host('host2', 72.0),
                 h.host('host3', 70.0)]
        [move] = plan(hosts, [h.instance('i1', 'host1', 0.8)]).moves
        self.assertEqual('host3', move.destination)
        self.assertEqual((True, 0.0), (move.expected['inside_margin'],
                                       move.expected['graded_margin']))
        self.assertAlmostEqual(77.0, move.expected['source_cpu'])
        self.assertAlmostEqual(78.0, move.expected['destination_cpu'])
        self.assertIn(
            '; inside the margin: no allowed destination keeps the margin '
            'of 5 points, and the pool is warm (its hosts average 0.7 '
            'points past threshold - margin), so the margin is graded to '
            '0.0: host3 ends at cpu 78.0%, under 80.0%', move.reason)
        [host2] = move.rejected
        self.assertEqual(('host2', 'graded-margin',
                          'projected cpu 80.0% (graded margin 0.0 points)'),
                         (host2.subject, host2.rule, host2.detail))

    def test_a_cool_pool_keeps_the_whole_margin(self):
        # The same hosts beside an idle one that a filter refuses: the
        # pool averages 59 %, so nothing moves inside the margin.
        hosts = [h.host('host1', 85.0, counter=1), h.host('host2', 72.0),
                 h.host('host3', 70.0), h.host('idle', 10.0)]
        result = plan(hosts, [h.instance('i1', 'host1', 0.8)],
                      candidates=h.allow_except({'idle': 'FakeFilter'}))
        self.assertEqual((), result.moves)
        self.assertEqual(('host host1: violated, no move: instance i1: 1x '
                          'FakeFilter, 2x margin',), result.notes)

    def test_a_pool_with_the_whole_margin_of_room_keeps_it(self):
        # Room 5 on average (-10, 15 and 10): 'a' would end at 76 %, past
        # 75 %, and no second pass looks inside the margin.
        hosts = [h.host('hot', 85.0, counter=1), h.host('a', 60.0),
                 h.host('b', 65.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.6)])
        self.assertEqual((), result.moves)
        self.assertEqual(('host hot: violated, no move: instance i1: 2x '
                          'margin',), result.notes)

    def test_the_reason_says_how_warm_the_pool_is(self):
        # Room 0 (-10 and 10), then 0.5 (-10 and 11): 'a' ends at 77 %
        # and 76 %.
        for cpu, text in ((65.0, 'average 0.0 points of room under '
                                 'threshold - margin), so the margin is '
                                 'graded to 0.0: a ends at cpu 77.0%'),
                          (64.0, 'average 0.5 points of room under '
                                 'threshold - margin), so the margin is '
                                 'graded to 0.5: a ends at cpu 76.0%, '
                                 'under 79.5%')):
            hosts = [h.host('hot', 85.0, counter=1), h.host('a', cpu)]
            [move] = plan(hosts, [h.instance('i1', 'hot', 1.2)]).moves
            self.assertIn(text, move.reason)

    def test_a_policy_that_does_not_grade_keeps_a_flat_margin(self):
        class Flat(balanced.BalancedPolicy):
            grades = base.Policy.grades

        self.patch(planner.policies, 'get', lambda name: Flat())
        hosts = [h.host('host1', 85.0, counter=1), h.host('host2', 72.0),
                 h.host('host3', 70.0)]
        result = plan(hosts, [h.instance('i1', 'host1', 0.8)])
        self.assertEqual((), result.moves)
        self.assertEqual(('host host1: violated, no move: instance i1: 2x '
                          'margin',), result.notes)

    def test_the_margin_shrinks_with_the_pool_room(self):
        # Room under 75 %: 5, 8, -10 and 9 points, 3 on average: a
        # destination keeps 3 points.  With 9.5 points, 'a' would end at
        # 79.5 % (refused), 'b' at 76.5 % and 'c' at 75.5 %: the coolest.
        hosts = [h.host('a', 70.0), h.host('b', 67.0),
                 h.host('hot', 85.0, counter=1), h.host('c', 66.0)]
        [move] = plan(hosts, [h.instance('i1', 'hot', 0.95)]).moves
        self.assertEqual('c', move.destination)
        self.assertEqual(3.0, move.expected['graded_margin'])
        self.assertIn('graded to 3.0: c ends at cpu 75.5%, under 77.0%',
                      move.reason)
        self.assertEqual({'a': 'graded-margin'},
                         {r.subject: r.rule for r in move.rejected})
        # 2.8333 points of room are recorded to the thousandth.
        hosts[3] = h.host('c', 200.0 / 3)
        [move] = plan(hosts, [h.instance('i1', 'hot', 0.95)]).moves
        self.assertEqual(('c', 2.833), (move.destination,
                                        move.expected['graded_margin']))

    def test_hosts_resting_past_the_margin_are_reachable(self):
        # Both destinations are past 75 % before any move (not indexed):
        # the second pass still reaches them, and takes the coolest.
        hosts = [h.host('hot', 82.0, counter=1), h.host('b', 77.0),
                 h.host('a', 76.0)]
        [move] = plan(hosts, [h.instance('i1', 'hot', 0.3)]).moves
        self.assertEqual('a', move.destination)
        self.assertAlmostEqual(79.0, move.expected['destination_cpu'])
        self.assertEqual({'b'}, {r.subject for r in move.rejected})

    def test_load_never_goes_back_to_a_host_it_came_from(self):
        # 'back' sent i0 to 'hot' lately: inside the margin it takes no
        # load from 'hot', though it is the coolest; 'other' does.  Nor
        # does i0 return there (no-return), whatever the margin.
        hosts = [h.host('hot', 86.0, counter=1), h.host('back', 70.0),
                 h.host('other', 71.0)]
        instances = [h.instance('i0', 'hot', 0.9, left=('back',)),
                     h.instance('i1', 'hot', 0.8)]
        result = plan(hosts, instances, max_migrations_per_period=1)
        [move] = result.moves
        self.assertEqual(('i1', 'other'), (move.instance, move.destination))
        rejected = {r.subject: (r.rule, r.detail) for r in move.rejected}
        self.assertEqual(('came-from', 'projected cpu 78.0% (an instance '
                                       'of hot came from it)'),
                         rejected['back'])
        hosts[2] = h.host('other', 79.0)
        result = plan(hosts, instances)
        self.assertEqual((), result.moves)
        self.assertEqual(
            ('host hot: violated, no move: instance i0: 1x margin, 1x '
             'no-return; instance i1: 2x margin; inside the margin: '
             'instance i0: 1x graded-margin, 1x no-return; instance i1: 1x '
             'came-from, 1x graded-margin',), result.notes)

    def test_a_busy_host_resting_at_the_margin_is_not_reachable(self):
        # 'busy' is at its limit of 1, 'busier' past it (2 in flight):
        # neither is reachable; 'free' is, and the move's record says why
        # the others were not.
        hosts = [h.host('hot', 82.0, counter=1), h.host('busy', 76.0),
                 h.host('busier', 76.0)]
        inflight = {'busy': 1, 'busier': 2}
        result = plan(hosts, [h.instance('i1', 'hot', 0.3)],
                      inflight_by_host=inflight, inflight_total=3)
        self.assertEqual(('host hot: violated, no move: instance i1: 2x '
                          'margin; inside the margin: instance i1: 2x '
                          'limit:per-host',), result.notes)
        hosts.append(h.host('free', 76.0))
        [move] = plan(hosts, [h.instance('i1', 'hot', 0.3)],
                      inflight_by_host=inflight, inflight_total=3).moves
        self.assertEqual('free', move.destination)
        self.assertEqual(dict.fromkeys(('busy', 'busier'), 'limit:per-host'),
                         {r.subject: r.rule for r in move.rejected})

    def test_a_cure_inside_the_margin_is_exempt_like_any_cure(self):
        # 81 -> 79 %: 2 points, under min_improvement, but a cure; 'warm'
        # ends at 76 %, under 80 - 0 in this warm pool.
        hosts = [h.host('hot', 81.0, counter=1), h.host('warm', 74.0)]
        [move] = plan(hosts, [h.instance('i1', 'hot', 0.2)]).moves
        self.assertTrue(move.expected['inside_margin'])
        self.assertIn('cures the host', move.reason)
        # Without the exemption the move is hopeless before any search.
        result = plan(hosts, [h.instance('i1', 'hot', 0.2)],
                      cure_below_min_improvement=False)
        self.assertEqual(('host hot: violated, no move: instance i1: 1x '
                          'min-improvement',), result.notes)

    def test_ram_counts_inside_the_margin_too(self):
        # 'full' would end at 90 % RAM, its threshold: refused; 'roomy'
        # at 80 % RAM, inside the margin (90 - 5) but under 90.
        hosts = [h.host('hot', 82.0, ram=50.0, counter=1),
                 h.host('full', 70.0, ram=80.0), h.host('roomy', 74.0,
                                                        ram=70.0)]
        [move] = plan(hosts, [h.instance('i1', 'hot', 0.3,
                                         memory_mb=1000)]).moves
        self.assertEqual('roomy', move.destination)
        self.assertIn('ram 80.0%, under 80.0% and 90.0%', move.reason)

    def test_ram_stays_under_its_threshold_less_the_graded_margin(self):
        # Room 2 on average (-7 and 11): 'a' must end under 90 - 2 % RAM.
        # It ends at 70 % CPU, within the margin, but past 85 % RAM.
        def move_with(ram):
            hosts = [h.host('hot', 82.0, counter=1),
                     h.host('a', 64.0, ram=ram)]
            return plan(hosts, [h.instance('i1', 'hot', 0.6,
                                           memory_mb=1000)]).moves
        [move] = move_with(77.0)
        self.assertEqual((True, 2.0), (move.expected['inside_margin'],
                                       move.expected['graded_margin']))
        self.assertIn('ram 87.0%, under 78.0% and 88.0%', move.reason)
        self.assertEqual((), move_with(78.0))
        self.assertEqual((), move_with(79.0))

    def test_a_second_pass_move_that_keeps_the_margin_is_no_exception(self):
        # A warm pool (three full hosts a filter refuses).  'big' fits
        # nowhere, even inside the margin; 'mid' (12 points) goes to 'a'
        # first, ranked with b's spread (-5 against -4.8), where the pair
        # gains 7 points, under min_improvement 8.  The second pass ranks
        # by room and finds 'b' (70 %), which keeps the margin after all:
        # the move is made but is not said to be inside it.
        full = {name: 'FakeFilter' for name in ('x', 'y', 'z')}
        hosts = [h.host('hot', 82.0, counter=1),
                 h.host('a', 48.0, ram=75.0),
                 h.host('b', 58.0, cpu_deviation=2.6)]
        hosts += [h.host(name, 100.0) for name in full]
        instances = [h.instance('big', 'hot', 4.0),
                     h.instance('mid', 'hot', 1.2, memory_mb=1000)]
        result = plan(hosts, instances, candidates=h.allow_except(full),
                      min_improvement=8.0, cure_below_min_improvement=False)
        [move] = result.moves
        self.assertEqual(('mid', 'b'), (move.instance, move.destination))
        self.assertNotIn('inside_margin', move.expected)
        self.assertNotIn('inside the margin', move.reason)

    def test_seed_never_grades(self):
        hosts = [h.host('host1', 85.0, counter=1), h.host('host2', 72.0)]
        [move] = plan(hosts, [h.instance('i1', 'host1', 0.8)],
                      policy='seed').moves
        self.assertNotIn('inside_margin', move.expected)
