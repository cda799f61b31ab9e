"""The balanced policy: cheapest cure, no ping-pong, CPU and RAM."""

import testtools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from tests import snapshots as h


def plan(hosts, instances, candidates=h.allow_all, **config):
    return planner.plan(h.snapshot(hosts, instances, **config), candidates)


class BalancedChoiceTest(testtools.TestCase):

    def test_margin_refuses_a_destination_that_would_end_near_threshold(self):
        # 'near' ends at 60 + 20 = 80% > 80 - 10: refused; 'far' 75%... also
        # refused; only 'cold' (50 -> 70%) keeps the margin.
        hosts = [h.host('hot', 95.0, counter=3), h.host('near', 60.0),
                 h.host('far', 55.0), h.host('cold', 50.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 2.0)], margin=10.0)
        self.assertEqual('cold', result.moves[0].destination)
        rejected = {r.subject: r.rule for r in result.moves[0].rejected}
        self.assertEqual({'near': 'margin', 'far': 'margin'}, rejected)
        self.assertIn('projected cpu 80.0%', {
            r.subject: r.detail for r in result.moves[0].rejected}['near'])

    def test_no_destination_within_margin_means_no_move(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('b', 65.0),
                 h.host('c', 69.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 2.0)])
        self.assertEqual((), result.moves)
        self.assertIn('2x margin', result.notes[0])
        self.assertIn('host hot: violated, no move', result.notes[0])

    def test_whole_cluster_overload_moves_nothing(self):
        # Every host is hot at once: the only host not over (78%) would
        # end at 88% > 80 - 5.  Spreading would only add an overloaded
        # host, so nothing moves and the notes say why.
        hosts = [h.host('hot1', 95.0, counter=1),
                 h.host('hot2', 90.0, counter=1), h.host('warm', 78.0)]
        instances = [h.instance('i1', 'hot1', 1.0),
                     h.instance('i2', 'hot2', 1.0)]
        result = plan(hosts, instances)
        self.assertEqual((), result.moves)
        self.assertEqual(2, len(result.notes))
        for note in result.notes:
            self.assertIn('1x margin, 1x violated', note)

    def test_a_busy_host_is_not_a_destination_on_one_quiet_sample(self):
        # 'dipped' reads 50% but has carried 70% (its expected load): with
        # the instance's 10 points it is judged at 80% > 80 - 5.  'steady'
        # (60%, as usual) ends at 70% and takes it; the record says why
        # the less loaded host was refused.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('dipped', 50.0, cpu_expected=70.0),
                 h.host('steady', 60.0, cpu_expected=60.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0)])
        move = result.moves[0]
        self.assertEqual('steady', move.destination)
        refused = {r.subject: r for r in move.rejected}
        self.assertEqual('margin', refused['dipped'].rule)
        self.assertIn('expected load 70.0% > current 50.0%',
                      refused['dipped'].detail)
        # Without an expected load the quiet sample is taken at its word.
        hosts[1] = h.host('dipped', 50.0)
        self.assertEqual('dipped', plan(
            hosts, [h.instance('i1', 'hot', 1.0)]).moves[0].destination)

    def test_a_host_above_its_expected_load_is_judged_on_its_load(self):
        # Rising (70% now, 40% usual): the higher figure counts, so it
        # ends at 80% and is refused; the expected load never lowers the
        # bar below the current sample.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('rising', 70.0, cpu_expected=40.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0)])
        self.assertEqual((), result.moves)
        self.assertIn('1x margin', result.notes[0])

    def test_expected_load_never_lowers_the_bar_even_by_a_fraction(self):
        # 65.5% now, 65% usual: judged at 65.5 + 10 = 75.5% > 80 - 5, so
        # the move is made inside the margin, and said to be.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('rising', 65.5, cpu_expected=65.0)]
        [move] = plan(hosts, [h.instance('i1', 'hot', 1.0)]).moves
        self.assertTrue(move.expected['inside_margin'])
        self.assertIn('margin is graded to 0.0: rising ends at cpu 75.5%, '
                      'under 80.0%', move.reason)

    def test_destination_is_judged_at_exactly_its_expected_load(self):
        # 'dipped' reads 20% but usually carries 70%: judged at 80% > 75,
        # refused. 'steady' (65%, as usual) ends exactly at the margin,
        # 75%, and takes it: a steady host is judged at its load.
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('dipped', 20.0, cpu_expected=70.0),
                 h.host('steady', 65.0, cpu_expected=65.0),
                 h.host('usually-full', 70.0, cpu_expected=80.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0)])
        self.assertEqual(['steady'], [m.destination for m in result.moves])
        # The record says why a host under the margin is refused.
        self.assertEqual({
            ('dipped', 'margin', 'projected cpu 80.0% (expected load 70.0% '
                                 '> current 20.0%)'),
            ('usually-full', 'margin', 'already at cpu 70.0% (expected load '
                                       '80.0% > current 70.0%)')},
            {(r.subject, r.rule, r.detail) for r in result.moves[0].rejected})

    def test_second_move_sees_the_first_at_the_current_load(self):
        # 'dipped' (30% now, 45% expected) takes one 10-point instance:
        # judged at 55%.  The working projection is its real 40%, plus the
        # 15 points it usually carries more: a second instance is judged at
        # 40 + 15 + 10 = 65% <= 75 and lands there too.
        hosts = [h.host('hot', 99.0, counter=1),
                 h.host('dipped', 30.0, cpu_expected=45.0)]
        instances = [h.instance('i1', 'hot', 1.0),
                     h.instance('i2', 'hot', 1.0)]
        result = plan(hosts, instances, max_concurrent_migrations_per_host=2)
        self.assertEqual(['dipped', 'dipped'],
                         [m.destination for m in result.moves])
        self.assertAlmostEqual(65.0,
                               result.moves[1].expected['destination_cpu'])

    def test_margin_is_against_the_destination_own_threshold(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('strict', 30.0, cpu_threshold=40.0),
                 h.host('loose', 45.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0)])
        # strict would be 40% > 40 - 10 even though it is less loaded.
        self.assertEqual('loose', result.moves[0].destination)

    def test_min_improvement_refuses_tiny_moves(self):
        # Moving 0.2 core off 10 vCPUs lowers the source by 2 points
        # (81 -> 79%): a cure, refused only when cures are not exempt.
        hosts = [h.host('hot', 81.0, counter=3), h.host('cold', 10.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 0.2)],
                      min_improvement=5.0, cure_below_min_improvement=False)
        self.assertEqual((), result.moves)
        self.assertIn('instance i1: 1x min-improvement', result.notes[0])
        result = plan(hosts, [h.instance('i1', 'hot', 0.2)],
                      min_improvement=2.0, cure_below_min_improvement=False)
        self.assertAlmostEqual(2.0, result.moves[0].expected['improvement'])

    def test_a_cure_is_made_below_min_improvement(self):
        # 81 -> 79%: a 2-point gain, under min_improvement (5), but the
        # host is cured and 'cold' stays within its margin: it moves.
        hosts = [h.host('hot', 81.0, counter=1), h.host('cold', 10.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 0.2)])
        self.assertEqual([('i1', 'cold')], [(m.instance, m.destination)
                                            for m in result.moves])
        self.assertAlmostEqual(2.0, result.moves[0].expected['improvement'])
        self.assertIn('cures the host, leaving', result.moves[0].reason)

    def test_a_cure_exactly_at_the_threshold_is_exempt(self):
        # 82.5 -> 80%: landing on the threshold is a cure (as for the
        # verdict); 82.625 -> 80.125% is not, and 2.5 points are too few.
        hosts = [h.host('hot', 82.5, counter=1), h.host('cold', 10.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 0.25)])
        self.assertEqual(['i1'], [m.instance for m in result.moves])
        hosts[0] = h.host('hot', 82.625, counter=1)
        result = plan(hosts, [h.instance('i1', 'hot', 0.25)])
        self.assertEqual((), result.moves)
        self.assertIn('instance i1: 1x min-improvement', result.notes[0])

    def test_a_small_partial_move_is_still_refused(self):
        # 90 -> 88%: the host stays over, so the exemption does not apply.
        hosts = [h.host('hot', 90.0, counter=1), h.host('cold', 10.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 0.2)])
        self.assertEqual((), result.moves)
        self.assertIn('instance i1: 1x min-improvement', result.notes[0])

    def test_a_small_cure_still_keeps_the_destination_margin(self):
        # The cure is exempt from min_improvement only: a destination that
        # would end past its threshold minus margin is still refused while
        # the pool is cool ('idle', which a filter refuses, cools it).
        hosts = [h.host('hot', 81.0, counter=1), h.host('warm', 74.0),
                 h.host('idle', 10.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 0.2)],
                      candidates=h.allow_except({'idle': 'FakeFilter'}))
        self.assertEqual((), result.moves)
        self.assertEqual(('host hot: violated, no move: instance i1: '
                          '1x FakeFilter, 1x margin',), result.notes)

    def test_pool_failure_counts_each_refused_host_once(self):
        # 'near' shares the pool (under another string object, as read
        # from two aggregates) but ends past the margin; 'other' is in
        # another pool.
        hosts = [h.host('hot', 95.0, counter=3, pool=h.fresh('pool-a')),
                 h.host('near', 71.0, pool=h.fresh('pool-a')),
                 h.host('other', 0.0, pool='pool-b')]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0)],
                      mode=h.fresh('aggregate'), margin=10.0)
        self.assertEqual(('host hot: violated, no move: instance i1: 1x '
                          'margin, 1x pool; inside the margin: instance i1: '
                          '1x graded-margin, 1x pool',), result.notes)

    def test_refusals_at_current_load_and_projected_add_up(self):
        # 'warm' is past the margin already, 'mid' only once the instance
        # lands: both count under the same rule, and both would reach the
        # threshold inside it.
        hosts = [h.host('hot', 95.0, counter=3), h.host('warm', 75.0),
                 h.host('mid', 65.0, vcpus=5)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0)], margin=10.0)
        self.assertEqual(('host hot: violated, no move: instance i1: 2x '
                          'margin; inside the margin: instance i1: 2x '
                          'graded-margin',), result.notes)
        # A move's record tells the two apart.
        hosts.append(h.host('cold', 0.0))
        rejected = plan(hosts, [h.instance('i1', 'hot', 1.0)],
                        margin=10.0).moves[0].rejected
        self.assertEqual({('warm', 'margin', 'already at cpu 75.0%'),
                          ('mid', 'margin', 'projected cpu 85.0%')},
                         {(r.subject, r.rule, r.detail) for r in rejected})

    def test_a_move_is_seen_by_the_notes_of_the_hosts_after_it(self):
        # 'a-big' fits nowhere; 'a-small' then fills 'cold', the only
        # destination, to its per-host limit.  For 'b' the note counts
        # 'cold' as at its limit: what it was told before the move is
        # out of date.
        hosts = [h.host('a', 95.0, counter=1), h.host('b', 94.0, counter=1),
                 h.host('cold', 0.0)]
        instances = [h.instance('a-big', 'a', 9.0),
                     h.instance('a-small', 'a', 2.0),
                     h.instance('b1', 'b', 2.0)]
        result = plan(hosts, instances)
        self.assertEqual([('a-small', 'cold')],
                         [(m.instance, m.destination) for m in result.moves])
        self.assertEqual(('host b: violated, no move: instance b1: '
                          '1x limit:per-host, 1x violated',), result.notes)

    def test_second_move_to_a_host_sees_the_first_in_its_ram(self):
        hosts = [h.host('hot', 99.0, ram=50.0, counter=1),
                 h.host('big', 0.0, ram=0.0, vcpus=100)]
        instances = [h.instance('i1', 'hot', 1.0, memory_mb=3000),
                     h.instance('i2', 'hot', 1.0, memory_mb=3000)]
        result = plan(hosts, instances, max_concurrent_migrations_per_host=2)
        self.assertEqual([30.0, 60.0], [m.expected['destination_ram']
                                        for m in result.moves])

    def test_every_refused_instance_is_named_in_the_note(self):
        hosts = [h.host('hot', 91.0, counter=3), h.host('cold', 10.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 0.2),
                              h.instance('i2', 'hot', 0.3)])
        self.assertEqual(('host hot: violated, no move: instance i1: 1x '
                          'min-improvement; instance i2: 1x min-improvement',),
                         result.notes)

    def test_an_instance_that_fits_nowhere_does_not_stop_the_next(self):
        # 'big' cures best but would push 'dest' past its margin (40 + 50
        # > 70); 'small' (40 + 20 = 60) still moves.
        hosts = [h.host('hot', 95.0, counter=3), h.host('dest', 40.0)]
        result = plan(hosts, [h.instance('big', 'hot', 5.0),
                              h.instance('small', 'hot', 2.0)])
        self.assertEqual(['small'], [m.instance for m in result.moves])
        self.assertIn({'instance': 'big', 'rejected': {'margin': 1}},
                      result.moves[0].alternatives)

    def test_an_instance_nova_allows_nowhere_does_not_stop_the_next(self):
        # 'big' ranks first (95 -> 65 %) but Nova's filters refuse it
        # everywhere; 'small' (95 -> 75 %) still moves.
        def candidates(instance, snap):
            if instance.uuid == 'big':
                return model.Candidates(
                    allowed=[], rejected=[model.Rejection('cold', 'Fake')])
            return h.allow_all(instance, snap)
        hosts = [h.host('hot', 95.0, counter=1), h.host('cold', 10.0)]
        result = plan(hosts, [h.instance('big', 'hot', 3.0),
                              h.instance('small', 'hot', 2.0)], candidates)
        self.assertEqual(['small'], [m.instance for m in result.moves])
        self.assertIn({'instance': 'big', 'rejected': {'Fake': 1}},
                      result.moves[0].alternatives)

    def test_min_improvement_counts_the_destination_peak(self):
        # 2 cores leave 'hot' (85 -> 65%, a 20-point drop) but land on a
        # 4-vCPU host that ends at 18 + 50 = 68%: the worst of the pair
        # only drops from 5 to -12 points over threshold, 17 points.
        hosts = [h.host('hot', 85.0, counter=3),
                 h.host('small', 18.0, vcpus=4)]
        result = plan(hosts, [h.instance('i1', 'hot', 2.0)],
                      min_improvement=18.0, cure_below_min_improvement=False)
        self.assertEqual((), result.moves)
        self.assertEqual(('host hot: violated, no move: instance i1: 1x '
                          'min-improvement',), result.notes)
        result = plan(hosts, [h.instance('i1', 'hot', 2.0)],
                      min_improvement=17.0, cure_below_min_improvement=False)
        self.assertAlmostEqual(17.0, result.moves[0].expected['improvement'])

    def test_partial_relief_takes_the_largest_improvement(self):
        # Neither instance cures 'hot' (99%): 'heavy' lowers it 15 points,
        # 'light' 8. The larger relief wins whatever its RAM.
        hosts = [h.host('hot', 99.0, counter=3),
                 h.host('cold', 0.0, vcpus=100)]
        instances = [h.instance('heavy', 'hot', 1.5, memory_mb=4000),
                     h.instance('light', 'hot', 0.8, memory_mb=500)]
        result = plan(hosts, instances, max_migrations_per_period=1)
        self.assertEqual(['heavy'], [m.instance for m in result.moves])
        self.assertIn('balanced: partial', result.moves[0].reason)

    def test_cure_tiers_at_their_exact_boundaries(self):
        # The move's reason tells the operator whether the host was cured
        # with margin (ends at threshold - margin or lower), cured (at the
        # threshold or lower) or only partly relieved.
        cases = [(95.0, 2.5, 'balanced: cures the host with margin'),
                 (100.0, 2.0, 'balanced: cures the host'),
                 (98.0, 2.5, 'balanced: cures the host'),
                 (100.5, 2.0, 'balanced: partial')]
        for cpu, cores, text in cases:
            hosts = [h.host('hot', cpu, counter=3), h.host('cold', 0.0,
                                                          vcpus=100)]
            result = plan(hosts, [h.instance('i1', 'hot', cores)],
                          margin=10.0, max_migrations_per_period=1)
            reason = result.moves[0].reason
            self.assertIn(text, reason, cpu)
            if 'margin' not in text:
                self.assertNotIn('with margin', reason, cpu)

    def test_destination_ram_exactly_at_its_margin_is_accepted(self):
        # 'cool-full' has the coolest CPU, but 85 + 10% RAM passes 90 - 10;
        # 'ok' ends exactly at 80% RAM, which the margin allows.
        hosts = [h.host('hot', 95.0, ram=50.0, counter=3),
                 h.host('cool-full', 0.0, ram=85.0),
                 h.host('ok', 30.0, ram=70.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 2.0, memory_mb=1000)],
                      margin=10.0)
        self.assertEqual('ok', result.moves[0].destination)
        rejected = {r.subject: r.rule for r in result.moves[0].rejected}
        self.assertEqual({'cool-full': 'margin'}, rejected)

    def test_deeper_cure_beats_a_cheaper_shallow_one(self):
        # shallow: 95 -> 69% (cured with margin), cold 10 -> 36%: the pair's
        # hotter host ends at 69%.  deep: 95 -> 60%, cold -> 45%: 60%.
        hosts = [h.host('hot', 95.0, counter=3), h.host('cold', 10.0)]
        instances = [h.instance('shallow', 'hot', 2.6, memory_mb=1000),
                     h.instance('deep', 'hot', 3.5, memory_mb=4000)]
        result = plan(hosts, instances)
        self.assertEqual('deep', result.moves[0].instance)
        self.assertIn('leaving the pair most level', result.moves[0].reason)

    def test_level_pair_beats_emptying_the_source(self):
        # huge: 95 -> 35%, but cold 10 -> 70%: the pair's hotter host
        # ends at 70%.  medium: 95 -> 55%, cold -> 50%: 55%, more level.
        hosts = [h.host('hot', 95.0, counter=3), h.host('cold', 10.0)]
        instances = [h.instance('huge', 'hot', 6.0, memory_mb=1000),
                     h.instance('medium', 'hot', 4.0, memory_mb=8000)]
        result = plan(hosts, instances)
        self.assertEqual('medium', result.moves[0].instance)
        self.assertAlmostEqual(55.0, result.moves[0].expected['source_cpu'])

    def test_cheapest_ram_among_instances_that_cure(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('cold', 10.0)]
        instances = [h.instance('big', 'hot', 3.0, memory_mb=4000),
                     h.instance('small', 'hot', 3.0, memory_mb=1000),
                     h.instance('tiny-cpu', 'hot', 0.5, memory_mb=500)]
        result = plan(hosts, instances)
        move = result.moves[0]
        # tiny-cpu is cheapest but does not cure (95 -> 90%); small and big
        # both leave the pair at 65% and 40% (cured with margin, equally
        # level): small is cheaper.
        self.assertEqual('small', move.instance)
        self.assertIn('cures the host with margin', move.reason)
        self.assertEqual('small', move.alternatives[0]['instance'])

    def test_curing_with_margin_beats_a_cheaper_bare_cure(self):
        hosts = [h.host('hot', 90.0, counter=3), h.host('cold', 10.0)]
        instances = [h.instance('bare', 'hot', 1.5, memory_mb=1000),
                     h.instance('margin', 'hot', 2.5, memory_mb=2000)]
        result = plan(hosts, instances, margin=10.0)
        # bare: 90 -> 75% (under 80, not under 70); margin: -> 65%.
        self.assertEqual('margin', result.moves[0].instance)

    def test_partial_cure_when_no_single_move_cures(self):
        hosts = [h.host('hot', 99.0, counter=3), h.host('cold', 0.0)]
        instances = [h.instance('a', 'hot', 0.6), h.instance('b', 'hot', 1.0),
                     h.instance('c', 'hot', 0.8)]
        result = plan(hosts, instances)
        self.assertEqual('b', result.moves[0].instance)
        self.assertIn('partial', result.moves[0].reason)

    def test_ram_violation_is_relieved_by_moving_memory(self):
        hosts = [h.host('hot', 40.0, 96.0, counter=3),
                 h.host('cold', 40.0, 30.0)]
        instances = [h.instance('cpu-heavy', 'hot', 3.0, memory_mb=200),
                     h.instance('ram-heavy', 'hot', 0.2, memory_mb=2000)]
        result = plan(hosts, instances)
        move = result.moves[0]
        self.assertEqual('ram-heavy', move.instance)
        self.assertAlmostEqual(76.0, move.expected['source_ram'])
        self.assertAlmostEqual(50.0, move.expected['destination_ram'])

    def test_destination_ram_margin_counts_as_much_as_cpu(self):
        hosts = [h.host('hot', 95.0, 50.0, counter=3),
                 h.host('idle-cpu-full-ram', 5.0, 79.0),
                 h.host('busier', 40.0, 20.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 2.0, memory_mb=500)])
        # The idle host would end at 84% RAM > 90 - 10.
        self.assertEqual('busier', result.moves[0].destination)

    def test_destination_is_the_least_pressured_after_the_move(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('a', 30.0),
                 h.host('b', 20.0, vcpus=4), h.host('c', 25.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 1.0)])
        # +1 core: a 40%, b 45% (4 vCPUs), c 35%.
        self.assertEqual('c', result.moves[0].destination)

    def test_destination_already_at_the_best_projected_load_is_not_skipped(
            self):
        # An idle, memory-heavy instance adds no pressure to 'a', whose CPU
        # (60%) dominates; 'b' rises from RAM 60% to 70%. Both end at 20
        # points under their thresholds: 'a' ties with the best found,
        # so the search must still reach it, and the first name wins.
        hosts = [h.host('hot', 10.0, 95.0, counter=3),
                 h.host('a', 60.0, 10.0), h.host('b', 0.0, 60.0)]
        result = plan(hosts, [h.instance('i1', 'hot', 0.0,
                                         memory_mb=1000)])
        self.assertEqual([('i1', 'a')], [(m.instance, m.destination)
                                         for m in result.moves])

    def test_loads_a_millionth_of_a_point_apart_are_equal(self):
        # Both instances cure 'hot' (93%) without margin. 'big-ram' leaves
        # it at 78%, 'small-ram' a little above: 4 millionths of a point
        # is a difference and the cooler pair wins, 4 ten-millionths is
        # float noise and the move with less RAM wins.
        for cores, winner in ((1.4999996, 'big-ram'),
                              (1.49999996, 'small-ram')):
            hosts = [h.host('hot', 93.0, counter=3),
                     h.host('cold', 0.0, vcpus=100)]
            instances = [h.instance('big-ram', 'hot', 1.5, memory_mb=2000),
                         h.instance('small-ram', 'hot', cores,
                                    memory_mb=1000)]
            result = plan(hosts, instances)
            self.assertEqual([winner], [m.instance for m in result.moves],
                             cores)

    def test_relief_of_exactly_min_improvement_is_worth_scoring(self):
        # Only one instance is scored: the one lowering 'hot' by exactly
        # min_improvement (5 points) is a useful move and ranks before
        # one that lowers it by 4 (refused), whatever their uuids.
        hosts = [h.host('hot', 83.0, counter=3), h.host('cold', 0.0)]
        instances = [h.instance('a-four', 'hot', 0.4),
                     h.instance('b-five', 'hot', 0.5)]
        result = plan(hosts, instances, max_instances_evaluated=1)
        self.assertEqual([('b-five', 'cold')], [(m.instance, m.destination)
                                                for m in result.moves])
        self.assertEqual(5.0, result.moves[0].expected['improvement'])

    def test_keeps_moving_until_cured_within_limits(self):
        hosts = [h.host('hot', 99.0, counter=3), h.host('a', 0.0),
                 h.host('b', 0.0)]
        instances = [h.instance(f'i{n}', 'hot', 1.0) for n in range(5)]
        result = plan(hosts, instances, max_concurrent_migrations_per_host=2,
                      max_migrations_per_period=5)
        # 99 -> 89 -> 79: two moves cure it, the second to the other host
        # since the first destination's projection went up.
        self.assertEqual(2, len(result.moves))
        self.assertEqual({'a', 'b'}, {m.destination for m in result.moves})

    def test_equal_ram_cost_goes_to_the_lowest_worst_pressure(self):
        # Both cure with margin at 1000 MB. 'big' empties the source more
        # (60%) but fills 'dest' to 69% (-11 points); 'small' leaves the
        # source at 68% (-12) and 'dest' at 61%: its pair ends cooler.
        hosts = [h.host('hot', 95.0, counter=3), h.host('dest', 34.0)]
        instances = [h.instance('big', 'hot', 3.5),
                     h.instance('small', 'hot', 2.7)]
        result = plan(hosts, instances)
        self.assertEqual(['small'], [m.instance for m in result.moves])
        self.assertEqual(['small', 'big'], [
            a['instance'] for a in result.moves[0].alternatives])

    def moved_until_cured(self, cpu, cores):
        """Instances moved off 'hot' (10 vCPUs) with room for several."""
        hosts = [h.host('hot', cpu, counter=3), h.host('a', 0.0),
                 h.host('b', 0.0)]
        instances = [h.instance(f'i{n}', 'hot', cores) for n in range(3)]
        result = plan(hosts, instances, max_concurrent_migrations_per_host=2,
                      max_migrations_per_period=5)
        return [m.instance for m in result.moves], result.notes

    def test_source_landing_exactly_on_its_threshold_is_cured(self):
        # 100 - 2 cores of 10 = 80%: at the threshold is not over, so one
        # move is enough and no second migration is spent.
        self.assertEqual((['i0'], ()), self.moved_until_cured(100.0, 2.0))

    def test_source_half_a_point_over_after_a_move_moves_again(self):
        self.assertEqual(['i0', 'i1'], self.moved_until_cured(100.5, 2.0)[0])

    def test_stops_when_source_reaches_its_limit(self):
        # 109%: two 10-point moves leave it at 89%, still over.
        hosts = [h.host('hot', 109.0, counter=3), h.host('a', 0.0),
                 h.host('b', 0.0)]
        instances = [h.instance(f'i{n}', 'hot', 1.0) for n in range(5)]
        result = plan(hosts, instances, max_migrations_per_period=3)
        self.assertEqual(2, len(result.moves))
        self.assertIn('still projected over after 2 move(s)',
                      result.notes[0])
        self.assertIn('limit:per-host', result.notes[0])
        result = plan(hosts, instances,
                      max_concurrent_migrations_per_violated_host=1)
        self.assertEqual(1, len(result.moves))
        self.assertIn('still projected over after 1 move(s)',
                      result.notes[0])
        self.assertIn('limit:per-host', result.notes[0])
