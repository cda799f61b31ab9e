"""Rails every policy gets: eligibility, limits, pools, records."""

import json
from unittest import mock

import testscenarios
import testtools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning.policies import balanced
from tests import snapshots as h

load_tests = testscenarios.load_tests_apply_scenarios

POLICIES = [('seed', {'policy': 'seed'}), ('balanced', {'policy': 'balanced'})]


class RailsTest(testtools.TestCase):

    scenarios = POLICIES

    def plan(self, hosts, instances, candidates=h.allow_all, **kwargs):
        config = {'policy': self.policy, **kwargs}
        return planner.plan(h.snapshot(hosts, instances, **config),
                            candidates)

    def test_ineligible_destinations_are_rejected_by_rule(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('also-hot', 92.0, counter=6),
                 h.host('disabled', 0.0, schedulable=False),
                 h.host('opted-out', 0.0, excluded=True),
                 h.host('stale', None),
                 h.host('ok', 30.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0),
                                   h.instance('i2', 'also-hot', 1.0)],
                           max_concurrent_migrations_per_host=2)
        self.assertEqual({'ok'}, {m.destination for m in result.moves})
        rejected = {r.subject: r.rule for r in result.moves[0].rejected}
        self.assertEqual('not-schedulable', rejected['disabled'])
        self.assertEqual('excluded', rejected['opted-out'])
        self.assertEqual('stale-metrics', rejected['stale'])
        self.assertEqual('violated', rejected['also-hot'])

    def test_stale_and_excluded_hosts_are_not_judged(self):
        hosts = [h.host('stale', None, counter=3),
                 h.host('out', 99.0, counter=3, excluded=True),
                 h.host('ok', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'stale', 1.0),
                                   h.instance('i2', 'out', 1.0)])
        self.assertEqual((), result.moves)
        verdicts = {v.host: v for v in result.hosts}
        self.assertFalse(verdicts['stale'].violated)
        self.assertIn('not judged', verdicts['stale'].reason)
        self.assertFalse(verdicts['out'].violated)
        self.assertIn('opted out', verdicts['out'].reason)

    def test_host_without_capacity_is_neither_judged_nor_chosen(self):
        # None recorded (0), or bad inventory (negative): a negative size
        # would project the load *down* as instances are added and make
        # the host every move's destination.
        for size in (0, -8):
            hosts = [h.host('hot', 95.0, counter=3),
                     h.host('no-cpu', 0.0, vcpus=size),
                     h.host('no-ram', 0.0, ram=0.0, memory_mb=size * 1000),
                     h.host('no-ram-hot', 99.0, counter=3, memory_mb=size),
                     h.host('ok', 30.0)]
            result = self.plan(hosts, [h.instance('i1', 'hot', 1.0),
                                       h.instance('i2', 'no-ram-hot', 1.0)])
            self.assertEqual([('i1', 'ok')], [(m.instance, m.destination)
                                              for m in result.moves])
            rejected = {r.subject: r.rule for r in result.moves[0].rejected}
            self.assertEqual('no-capacity', rejected['no-cpu'])
            self.assertEqual('no-capacity', rejected['no-ram'])
            verdict = {v.host: v for v in result.hosts}['no-ram-hot']
            self.assertFalse(verdict.violated)
            self.assertEqual('no CPU or memory capacity recorded: not '
                             'judged', verdict.reason)

    def test_counter_not_at_a_multiple_is_not_violated(self):
        hosts = [h.host('hot', 95.0, counter=4), h.host('ok', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           stabilization=3)
        self.assertEqual((), result.moves)
        verdict = result.hosts[0]
        self.assertIn('over for 4 periods', verdict.reason)
        self.assertIn('not violated until 6', verdict.reason)
        self.assertEqual(80.0, verdict.cpu_threshold)

    def test_blocked_instances_never_move(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('ok', 10.0)]
        instances = [h.instance('i1', 'hot', 1.0, blocked='cooldown'),
                     h.instance('i2', 'hot', 2.0, blocked='opt-out')]
        result = self.plan(hosts, instances)
        self.assertEqual((), result.moves)
        self.assertIn('no movable instance', result.notes[0])
        self.assertIn('1x cooldown', result.notes[0])
        self.assertIn('1x opt-out', result.notes[0])

    def test_limit_per_period(self):
        hosts = [h.host(f'hot{n}', 95.0, counter=3) for n in range(3)]
        hosts += [h.host(f'ok{n}', 0.0) for n in range(3)]
        instances = [h.instance(f'i{n}', f'hot{n}', 2.0) for n in range(3)]
        result = self.plan(hosts, instances, max_migrations_per_period=2)
        self.assertEqual(2, len(result.moves))
        self.assertIn('limit:per-period', result.notes[0])

    def test_limit_total_counts_inflight(self):
        hosts = [h.host(f'hot{n}', 95.0, counter=3) for n in range(3)]
        hosts += [h.host(f'ok{n}', 0.0) for n in range(3)]
        instances = [h.instance(f'i{n}', f'hot{n}', 2.0) for n in range(3)]
        result = self.plan(hosts, instances, inflight_total=3,
                           max_concurrent_migrations=4,
                           max_migrations_per_period=3)
        self.assertEqual(1, len(result.moves))
        self.assertIn('limit:total', result.notes[0])
        result = self.plan(hosts, instances, inflight_total=3,
                           max_concurrent_migrations=5,
                           max_migrations_per_period=3)
        self.assertEqual(2, len(result.moves))

    def test_limit_per_host_at_source_and_destination(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('busy-src', 96.0, counter=3),
                 h.host('busy-dst', 0.0), h.host('ok', 30.0)]
        instances = [h.instance('i1', 'hot', 1.0),
                     h.instance('i2', 'busy-src', 1.0)]
        result = self.plan(hosts, instances,
                           inflight_by_host={'busy-src': 1, 'busy-dst': 1},
                           max_concurrent_migrations_per_violated_host=1)
        self.assertEqual([('i1', 'ok')],
                         [(m.instance, m.destination) for m in result.moves])
        rejected = {r.subject: r for r in result.moves[0].rejected}
        # The record says why, for the operator.
        self.assertEqual(model.Rejection(
            'busy-dst', 'limit:per-host',
            '1 migrations in flight or planned'), rejected['busy-dst'])
        self.assertIn('host busy-src: violated, no move: limit:per-host',
                      result.notes)

    def test_limits_already_exceeded_stop_every_move(self):
        # After an operator lowers a limit, migrations in flight may exceed
        # it: nothing more is planned until they drop below.
        hosts = [h.host('hot', 95.0, counter=3), h.host('ok', 10.0),
                 h.host('busy', 0.0)]
        instances = [h.instance('i1', 'hot', 1.0)]
        result = self.plan(hosts, instances, inflight_total=5,
                           max_concurrent_migrations=4)
        self.assertEqual(('host hot: violated, no move: limit:total',),
                         result.notes)
        result = self.plan(hosts, instances, inflight_by_host={'hot': 2})
        self.assertEqual(('host hot: violated, no move: limit:per-host',),
                         result.notes)
        result = self.plan(hosts, instances, inflight_by_host={'busy': 2})
        self.assertEqual('ok', result.moves[0].destination)
        rejected = {r.subject: r.rule for r in result.moves[0].rejected}
        self.assertEqual('limit:per-host', rejected['busy'])

    def test_large_limits_are_counted_exactly(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('ok', 10.0)]
        instances = [h.instance('i1', 'hot', 1.0)]
        result = self.plan(hosts, instances, inflight_total=1000,
                           max_concurrent_migrations=1000,
                           max_concurrent_migrations_per_host=1000,
                           inflight_by_host={'ok': 1000})
        self.assertEqual(('host hot: violated, no move: limit:total',),
                         result.notes)
        result = self.plan(hosts, instances,
                           max_concurrent_migrations_per_host=1000,
                           inflight_by_host={'hot': 1000})
        self.assertEqual(('host hot: violated, no move: limit:per-host',),
                         result.notes)

    def test_large_period_limit_is_counted_exactly(self):
        # Counts above 256 are distinct int objects in CPython: the limit
        # must be compared by value.
        hosts = [h.host(f'hot{n:03}', 95.0, counter=3) for n in range(259)]
        hosts += [h.host(f'cold{n:03}', 0.0) for n in range(259)]
        instances = [h.instance(f'i{n:03}', f'hot{n:03}', 2.0)
                     for n in range(259)]

        def paired(instance, snap):
            # Each instance to its own cold host: keeps the test fast.
            return model.Candidates(allowed=['cold' + instance.uuid[1:]])

        result = self.plan(hosts, instances, candidates=paired,
                           max_migrations_per_period=257,
                           max_concurrent_migrations=1000)
        self.assertEqual(257, len(result.moves))
        self.assertEqual(2, sum('limit:per-period' in note
                                for note in result.notes))

    def test_smallest_host_is_judged_and_can_take_an_instance(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('tiny', 0.0, vcpus=1, memory_mb=1)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 0.6)])
        self.assertEqual([('i1', 'tiny')],
                         [(m.instance, m.destination) for m in result.moves])
        tiny = {v.host: v for v in result.hosts}['tiny']
        self.assertIn('under threshold', tiny.reason)

    def test_source_projection_never_goes_below_zero(self):
        # An instance may use more than the host's measured load (samples
        # of different ages): the source then projects to 0%, not less.
        hosts = [h.host('hot', 95.0, ram=95.0, counter=3),
                 h.host('ok', 0.0, ram=0.0, vcpus=100, memory_mb=100000)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 10.0,
                                              memory_mb=9600)])
        self.assertEqual(0.0, result.moves[0].expected['source_cpu'])
        self.assertEqual(0.0, result.moves[0].expected['source_ram'])

    def test_planned_moves_are_projected_for_later_ones(self):
        # One cold host with room for one instance only (margin for
        # balanced); the seed, blind to margins, still sees it fuller.
        hosts = [h.host('hot1', 95.0, counter=3),
                 h.host('hot2', 94.0, counter=3),
                 h.host('cold', 0.0), h.host('warm', 20.0)]
        instances = [h.instance('a', 'hot1', 3.0),
                     h.instance('b', 'hot2', 3.0)]
        result = self.plan(hosts, instances,
                           max_concurrent_migrations_per_host=2)
        self.assertEqual([('a', 'cold'), ('b', 'warm')],
                         [(m.instance, m.destination) for m in result.moves])

    def test_equal_destinations_are_told_apart_by_host_name(self):
        # Two hosts end equally loaded after the move although they start
        # apart (a 10-core host at 30%, a 5-core one at 20%): the plan
        # must not depend on which was scanned first, so the first name
        # wins, as for every tie.
        for names in (('a', 'b'), ('b', 'a')):
            big, small = names
            hosts = [h.host('hot', 95.0, counter=3),
                     h.host(big, 30.0, vcpus=10), h.host(small, 20.0, vcpus=5)]
            result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)])
            self.assertEqual(40.0,
                             result.moves[0].expected['destination_cpu'])
            self.assertEqual('a', result.moves[0].destination, names)

    def test_filter_rejections_are_recorded(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('ok', 10.0),
                 h.host('full', 0.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=h.allow_except({'full': 'RamFilter'}))
        self.assertEqual('ok', result.moves[0].destination)
        self.assertIn(model.Rejection('full', 'RamFilter'),
                      result.moves[0].rejected)

    def test_filters_refusing_every_destination_are_counted_per_rule(self):
        # The operator reads which of Nova's filters kept the host hot.
        hosts = [h.host('hot', 95.0, counter=3), h.host('a', 10.0),
                 h.host('b', 10.0), h.host('c', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=h.allow_except({
                               'a': 'AvailabilityZoneFilter',
                               'b': 'AvailabilityZoneFilter',
                               'c': 'ComputeFilter'}))
        self.assertEqual((), result.moves)
        self.assertEqual(('host hot: violated, no move: instance i1: '
                          '2x AvailabilityZoneFilter, 1x ComputeFilter',),
                         result.notes)

    def test_allowed_hosts_the_planner_refuses_are_counted_too(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('a', 10.0),
                 h.host('off', 10.0, schedulable=False)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=h.allow_except({
                               'a': 'AvailabilityZoneFilter'}))
        self.assertEqual(('host hot: violated, no move: instance i1: '
                          '1x AvailabilityZoneFilter, 1x not-schedulable',),
                         result.notes)

    def test_no_allowed_destination_is_said_so(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('a', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=lambda i, s: model.Candidates(
                               allowed=[]))
        self.assertEqual(('host hot: violated, no move: instance i1: no '
                          'allowed destination',), result.notes)

    def test_unknown_allowed_host_is_refused(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('ok', 10.0)]

        def candidates(instance, snap):
            return model.Candidates(allowed=['ghost', 'ok'])

        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=candidates)
        self.assertEqual('ok', result.moves[0].destination)
        self.assertIn(model.Rejection('ghost', 'unknown-host'),
                      result.moves[0].rejected)

    def test_candidates_see_the_moves_planned_earlier_in_the_period(self):
        hosts = [h.host('a', 92.0, counter=3), h.host('b', 90.0, counter=3),
                 h.host('cool', 5.0)]
        seen = []

        def candidates(instance, snap):
            seen.append((instance.uuid, [(m.instance, m.source,
                                          m.destination)
                                         for m in snap.planned]))
            return h.allow_all(instance, snap)

        result = self.plan(hosts, [h.instance('p1', 'a', 3.0),
                                   h.instance('p2', 'b', 3.0)],
                           candidates=candidates,
                           max_migrations_per_period=2,
                           max_concurrent_migrations_per_host=2)
        self.assertEqual(2, len(result.moves))
        self.assertEqual([('p1', []), ('p2', [('p1', 'a', 'cool')])], seen)

    def test_candidates_is_never_called_when_no_host_can_take_it(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('other', 99.0, counter=3)]
        calls = []

        def candidates(instance, snap):
            calls.append(instance.uuid)
            return h.allow_all(instance, snap)

        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=candidates)
        self.assertEqual([], calls)
        self.assertIn('host hot: violated, no move: instance i1: '
                      '1x violated', result.notes)

    def test_the_source_is_not_counted_among_the_violated(self):
        hosts = [h.host('hot', 99.0, counter=3),
                 h.host('other', 95.0, counter=3),
                 h.host('third', 95.0, counter=3)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)])
        self.assertEqual('host hot: violated, no move: instance i1: '
                         '2x violated', result.notes[0])

    def test_candidates_naming_the_source_do_not_count_it(self):
        # Nova's filters may pass the source itself, under a name that is
        # an equal but distinct string.
        hosts = [h.host('hot', 95.0, counter=3), h.host('a', 10.0)]

        def candidates(instance, snap):
            return model.Candidates(
                allowed=[h.fresh('hot')],
                rejected=[model.Rejection('a', 'ComputeFilter')])

        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=candidates)
        self.assertEqual(('host hot: violated, no move: instance i1: '
                          '1x ComputeFilter',), result.notes)

    def test_hosts_listed_after_the_source_are_still_counted(self):
        # Nova's filters may list the source among the allowed hosts, in
        # any place: it is skipped, and every host after it still counts.
        hosts = [h.host('hot', 95.0, counter=3), h.host('a', 95.0, counter=3),
                 h.host('ok', 10.0), h.host('z', 10.0, schedulable=False)]

        def candidates(instance, snap):
            return model.Candidates(
                allowed=['a', h.fresh('hot'), 'z'],
                rejected=[model.Rejection('ok', 'ComputeFilter')])

        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)],
                           candidates=candidates)
        self.assertIn('host hot: violated, no move: instance i1: '
                      '1x ComputeFilter, 1x not-schedulable, 1x violated',
                      result.notes)

    def test_one_destination_per_host_limit_counts_planned_moves(self):
        hosts = [h.host('hot1', 95.0, counter=3),
                 h.host('hot2', 94.0, counter=3),
                 h.host('big', 0.0, vcpus=100)]
        instances = [h.instance('a', 'hot1', 3.0),
                     h.instance('b', 'hot2', 3.0)]
        result = self.plan(hosts, instances)
        self.assertEqual([('a', 'big')],
                         [(m.instance, m.destination) for m in result.moves])
        result = self.plan(hosts, instances,
                           max_concurrent_migrations_per_host=2)
        self.assertEqual([('a', 'big'), ('b', 'big')],
                         [(m.instance, m.destination) for m in result.moves])

    def test_expected_loads_are_exact_projections(self):
        hosts = [h.host('hot', 95.0, ram=50.0, counter=3),
                 h.host('ok', 10.0, ram=20.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.25,
                                              memory_mb=1250)])
        expected = result.moves[0].expected
        self.assertEqual(82.5, expected['source_cpu'])
        self.assertEqual(37.5, expected['source_ram'])
        self.assertEqual(22.5, expected['destination_cpu'])
        self.assertEqual(32.5, expected['destination_ram'])

    def test_record_rounds_alternatives_to_two_decimals(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('ok', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.2345)])
        [alternative] = result.moves[0].alternatives
        self.assertEqual(round(95.0 - 12.345, 2), alternative['source_cpu'])
        self.assertEqual(round(10.0 + 12.345, 2),
                         alternative['destination_cpu'])
        self.assertEqual(round(result.moves[0].expected['improvement'], 2),
                         alternative['improvement'])
        self.assertNotEqual(alternative['improvement'],
                            round(alternative['improvement'], 1))

    def test_worst_host_first_when_only_one_move_is_allowed(self):
        hosts = [h.host('a-hot', 85.0, counter=3),
                 h.host('z-hotter', 99.0, counter=3), h.host('ok', 0.0)]
        instances = [h.instance('i1', 'a-hot', 1.0),
                     h.instance('i2', 'z-hotter', 2.0)]
        result = self.plan(hosts, instances, max_migrations_per_period=1)
        self.assertEqual('z-hotter', result.moves[0].source)

    def test_plan_is_one_json_line(self):
        hosts = [h.host('hot', 95.0, 50.0, counter=3, window=(94.0, 96.0)),
                 h.host('ok', 10.0, 20.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)])
        line = result.to_json()
        self.assertNotIn('\n', line)
        data = json.loads(line)
        self.assertEqual(self.policy, data['policy'])
        self.assertEqual('i1', data['moves'][0]['instance'])
        self.assertEqual([94.0, 96.0], data['hosts'][0]['window'])
        self.assertIn('violated', data['moves'][0]['reason'])


class PoolTest(testtools.TestCase):

    scenarios = POLICIES

    # Mode, choices and pool names arrive from nova.conf and aggregate
    # names: equal strings, not the literals the planner compares with.
    def plan(self, hosts, instances, **kwargs):
        config = {'policy': self.policy, 'mode': h.fresh('aggregate'),
                  'unaggregated_hosts': h.fresh('ignore'), **kwargs}
        return planner.plan(h.snapshot(hosts, instances, **config),
                            h.allow_all)

    def hosts(self):
        return [h.host('hot', 95.0, counter=3, pool=h.fresh('pool-a')),
                h.host('same-pool', 40.0, pool=h.fresh('pool-a')),
                h.host('other-pool', 0.0, pool='B'),
                h.host('loose', 0.0),
                h.host('loose-hot', 95.0, counter=3)]

    def instances(self):
        return [h.instance('i1', 'hot', 1.0),
                h.instance('i2', 'loose-hot', 1.0)]

    def test_moves_stay_in_the_pool(self):
        result = self.plan(self.hosts(), self.instances())
        self.assertEqual([('i1', 'same-pool')],
                         [(m.instance, m.destination) for m in result.moves])
        rejected = {r.subject: r.rule for r in result.moves[0].rejected}
        self.assertEqual('pool', rejected['other-pool'])
        self.assertEqual('unaggregated', rejected['loose'])
        self.assertNotIn('same-pool', rejected)

    def test_unaggregated_ignored_hosts_are_not_judged(self):
        result = self.plan(self.hosts(), self.instances())
        verdict = {v.host: v for v in result.hosts}['loose-hot']
        self.assertFalse(verdict.violated)
        self.assertIn('unaggregated_hosts=ignore', verdict.reason)

    def test_unaggregated_hosts_form_their_own_pool(self):
        result = self.plan(self.hosts(), self.instances(),
                           unaggregated_hosts=h.fresh('pool'),
                           max_concurrent_migrations_per_host=2)
        self.assertEqual([('i1', 'same-pool'), ('i2', 'loose')],
                         sorted((m.instance, m.destination)
                                for m in result.moves))

    def test_global_mode_ignores_pools(self):
        result = planner.plan(
            h.snapshot(self.hosts(), self.instances(), policy=self.policy,
                       max_concurrent_migrations_per_host=2), h.allow_all)
        destinations = {m.destination for m in result.moves}
        self.assertTrue(destinations <= {'other-pool', 'loose'})
        self.assertEqual(2, len(result.moves))


class RefusedOptionTest(testtools.TestCase):

    def test_an_instance_the_policy_refuses_leaves_the_next_one_scored(self):
        # The policy refuses whichever instance it is asked about first;
        # the host's other instance still moves.
        asked = []
        real = balanced.BalancedPolicy.refuse

        def refuse(policy, option, config):
            asked.append(option.removal.instance.uuid)
            return 'min-improvement' if len(asked) == 1 else real(
                policy, option, config)

        hosts = [h.host('hot', 95.0, counter=3), h.host('cold', 10.0)]
        instances = [h.instance('i1', 'hot', 2.0),
                     h.instance('i2', 'hot', 2.0, memory_mb=1200)]
        with mock.patch.object(balanced.BalancedPolicy, 'refuse', refuse):
            result = planner.plan(h.snapshot(hosts, instances),
                                  h.allow_all)
        self.assertEqual(2, len(set(asked)))
        self.assertEqual([m.instance for m in result.moves],
                         [u for u in asked[1:2]])
