"""Draining a host in maintenance through the planner."""


import testscenarios
import testtools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning.goals import drain
from nova_drs_scheduler.planning.goals import level
from nova_drs_scheduler.planning.policies import balanced
from nova_drs_scheduler.planning.policies import base
from tests import snapshots as h

load_tests = testscenarios.load_tests_apply_scenarios

POLICIES = [('seed', {'policy': 'seed'}), ('balanced', {'policy': 'balanced'})]


class DrainTest(testtools.TestCase):

    scenarios = POLICIES

    def plan(self, hosts, instances, candidates=h.allow_all, **kwargs):
        config = {'policy': self.policy, 'max_migrations_per_period': 10,
                  'max_concurrent_migrations': 10,
                  'max_concurrent_migrations_per_host': 2,
                  'drain_max_concurrent_migrations_per_host': 10, **kwargs}
        return planner.plan(h.snapshot(hosts, instances, **config),
                            candidates)

    def test_largest_first_to_the_coolest_and_never_to_a_drained_host(self):
        hosts = [h.host('m', 50.0, draining=True, schedulable=False),
                 h.host('other-m', 0.0, draining=True, schedulable=False),
                 h.host('a', 20.0), h.host('b', 40.0)]
        small = h.instance('small', 'm', 1.0, memory_mb=500)
        big = h.instance('big', 'm', 1.0, memory_mb=4000)
        # The coolest takes both: a destination takes as many at once as
        # the drain sends (a: 20 -> 30 -> 40 %, no hotter than b).
        result = self.plan(hosts, [small, big],
                           max_concurrent_migrations_per_host=1,
                           drain_max_concurrent_migrations_per_host=2)
        self.assertEqual([('big', 'a', model.DRAIN), ('small', 'a',
                                                      model.DRAIN)],
                         [(m.instance, m.destination, m.goal)
                          for m in result.moves])
        drain = {d.host: d for d in result.drains}
        self.assertEqual(('big', 'small'), drain['m'].planned)
        self.assertEqual(2, drain['m'].instances)
        self.assertEqual((), drain['m'].blockers)
        self.assertEqual(0, drain['other-m'].instances)
        verdicts = {v.host: v for v in result.hosts}
        self.assertIn('maintenance', verdicts['m'].reason)
        self.assertFalse(verdicts['m'].violated)

    def test_draining_host_is_never_a_balancing_destination(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('m', 0.0, draining=True),
                 h.host('ok', 60.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)])
        self.assertEqual(['ok'], [m.destination for m in result.moves])
        rejected = {r.subject: r.rule for r in result.moves[0].rejected}
        self.assertEqual('maintenance', rejected['m'])

    def test_drains_come_first_and_leave_the_period_to_balancing(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('hot2', 95.0, counter=3),
                 h.host('m', 10.0, draining=True, schedulable=False),
                 h.host('ok', 10.0), h.host('ok2', 10.0)]
        instances = [h.instance('i1', 'hot', 2.0),
                     h.instance('i2', 'hot2', 2.0),
                     h.instance('d1', 'm', 0.5), h.instance('d2', 'm', 0.5)]
        result = self.plan(hosts, instances, max_migrations_per_period=1)
        self.assertEqual([('d1', model.DRAIN), ('d2', model.DRAIN),
                          ('i1', model.BALANCE)],
                         [(m.instance, m.goal) for m in result.moves])
        self.assertTrue(any('limit:per-period' in n for n in result.notes))
        # The total still counts them, and they leave a slot of it to a
        # violated host (up to the period's budget): d2 waits, i1 moves.
        result = self.plan(hosts, instances, max_migrations_per_period=1,
                           max_concurrent_migrations=2)
        self.assertEqual(['d1', 'i1'], [m.instance for m in result.moves])
        self.assertEqual([('d2', 'limit:drain-share')],
                         [(r.subject, r.rule)
                          for r in result.drains[0].waiting])
        # With no violated host, drains may use the whole total.
        calm = [h.host('m', 10.0, draining=True, schedulable=False),
                h.host('ok', 10.0), h.host('ok2', 10.0)]
        result = self.plan(calm, instances[2:], max_concurrent_migrations=2)
        self.assertEqual(['d1', 'd2'], [m.instance for m in result.moves])
        # And at least one slot of it, whatever balancing's budget.
        result = self.plan(hosts, instances, max_migrations_per_period=5,
                           max_concurrent_migrations=2)
        self.assertEqual(['d1', 'i1'], [m.instance for m in result.moves])

    def test_blockers_and_waiting_are_told_apart(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        instances = [
            h.instance('out', 'm', 1.0, blocked='opted out: metadata'),
            h.instance('moving', 'm', 1.0, blocked='migrating m -> a',
                       transient=True),
            h.instance('i1', 'm', 1.0, memory_mb=3000),
            h.instance('i2', 'm', 1.0, memory_mb=2000),
        ]
        result = self.plan(hosts, instances,
                           drain_max_concurrent_migrations_per_host=2,
                           inflight_by_host={'m': 1, 'a': 1},
                           inflight_total=1)
        drain = result.drains[0]
        self.assertEqual(('i1',), drain.planned)
        self.assertEqual({'moving': 'blocked',
                          'i2': 'limit:per-draining-host'},
                         {r.subject: r.rule for r in drain.waiting})
        self.assertEqual([('out', 'blocked', 'opted out: metadata')],
                         [(r.subject, r.rule, r.detail)
                          for r in drain.blockers])

    def test_no_allowed_destination_is_a_blocker_naming_the_filters(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0),
                 h.host('b', 10.0, schedulable=False)]
        result = self.plan(
            hosts, [h.instance('i1', 'm', 1.0)],
            candidates=h.allow_except({'a': 'ServerGroupAntiAffinityFilter'}))
        self.assertEqual((), result.moves)
        blocker = result.drains[0].blockers[0]
        self.assertEqual(('i1', 'no-destination'),
                         (blocker.subject, blocker.rule))
        self.assertIn('ServerGroupAntiAffinityFilter', blocker.detail)
        self.assertIn('not-schedulable', blocker.detail)

    def test_busy_destinations_make_the_instance_wait(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           max_concurrent_migrations_per_host=1,
                           drain_max_concurrent_migrations_per_host=1,
                           inflight_by_host={'a': 1}, inflight_total=1)
        self.assertEqual((), result.moves)
        self.assertEqual([('i1', 'limit:per-host')],
                         [(r.subject, r.rule)
                          for r in result.drains[0].waiting])
        self.assertEqual((), result.drains[0].blockers)

    def test_falls_back_to_least_loaded_when_none_is_under_the_margin(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 78.0),
                 h.host('b', 76.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        self.assertEqual(['b'], [m.destination for m in result.moves])
        # seed accepts any destination; balanced keeps the margin.
        self.assertIn('accepts none' if self.policy == 'balanced'
                      else "seed policy's preferred",
                      result.moves[0].reason)

    def test_prefers_a_host_under_the_margin(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 60.0),
                 h.host('b', 79.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        self.assertEqual(['a'], [m.destination for m in result.moves])
        self.assertIn("policy's preferred destination",
                      result.moves[0].reason)

    def test_aggregate_mode_keeps_the_drain_in_its_pool(self):
        hosts = [h.host('m', 50.0, draining=True, pool='p1'),
                 h.host('a', 0.0, pool='p2'), h.host('b', 70.0, pool='p1')]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           mode='aggregate')
        self.assertEqual(['b'], [m.destination for m in result.moves])

    def test_cold_instances_move_cold(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        result = self.plan(hosts, [h.instance('off', 'm', 0.0,
                                              migration=model.COLD)])
        self.assertEqual([model.COLD], [m.migration for m in result.moves])
        self.assertIn('cold migration', result.moves[0].reason)

    def test_destination_load_counts_for_the_next_instance(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0),
                 h.host('b', 15.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 2.0, memory_mb=2),
                                   h.instance('i2', 'm', 2.0, memory_mb=1)])
        self.assertEqual(['a', 'b'], [m.destination for m in result.moves])

    def test_each_limit_makes_the_rest_wait(self):
        hosts = [h.host('m', 50.0, draining=True)] + [
            h.host(name, 10.0) for name in ('a', 'b', 'c', 'd')]
        instances = [h.instance(f'i{n}', 'm', 0.5, memory_mb=4000 - 1000 * n)
                     for n in (1, 2, 3)]

        def drain(**limits):
            result = self.plan(hosts, instances, **limits)
            [drain] = result.drains
            self.assertEqual(len(drain.planned), len(result.moves))
            return drain.planned, [(r.subject, r.rule, r.detail)
                                   for r in drain.waiting]

        self.assertEqual((('i1', 'i2', 'i3'), []), drain())
        # Not the period's budget: that is balancing's.
        self.assertEqual((('i1', 'i2', 'i3'), []),
                         drain(max_migrations_per_period=1))
        self.assertEqual(
            (('i1', 'i2'), [('i3', 'limit:total', '')]),
            drain(max_concurrent_migrations=3, inflight_total=1))
        self.assertEqual(
            (('i1', 'i2'), [('i3', 'limit:per-draining-host', '')]),
            drain(drain_max_concurrent_migrations_per_host=2))
        # Checked in that order.
        self.assertEqual(
            (('i1',), [('i2', 'limit:total', ''), ('i3', 'limit:total', '')]),
            drain(max_concurrent_migrations=1,
                  drain_max_concurrent_migrations_per_host=1))

    def test_a_blocked_instance_takes_no_slot_nor_asks_for_hosts(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        asked = []

        def candidates(instance, snap):
            asked.append(instance.uuid)
            return h.allow_all(instance, snap)

        result = self.plan(hosts, [
            h.instance('big', 'm', 1.0, memory_mb=8000, blocked='opted out'),
            h.instance('busy', 'm', 1.0, memory_mb=6000,
                       blocked='busy (task_state powering-off)',
                       transient=True),
            h.instance('small', 'm', 1.0)], candidates=candidates,
            max_migrations_per_period=1,
            drain_max_concurrent_migrations_per_host=1)
        self.assertEqual(['small'], asked)
        [drain] = result.drains
        self.assertEqual((3, ('small',)), (drain.instances, drain.planned))
        self.assertEqual([('busy', 'blocked',
                           'busy (task_state powering-off)')],
                         [(r.subject, r.rule, r.detail)
                          for r in drain.waiting])
        self.assertEqual([('big', 'blocked', 'opted out')],
                         [(r.subject, r.rule, r.detail)
                          for r in drain.blockers])

    def test_memory_first_then_vcpus_then_uuid(self):
        hosts = [h.host('m', 50.0, draining=True)] + [
            h.host(name, 0.0) for name in ('a', 'b', 'c', 'd')]
        instances = [h.instance('y', 'm', 0.1, vcpus=2),
                     h.instance('a', 'm', 0.1, vcpus=2),
                     h.instance('x', 'm', 0.1, vcpus=4),
                     h.instance('z', 'm', 0.1, memory_mb=2000, vcpus=1)]
        result = self.plan(hosts, instances)
        self.assertEqual(('z', 'x', 'a', 'y'), result.drains[0].planned)

    def test_drains_in_host_order_and_only_of_draining_hosts(self):
        hosts = [h.host('m2', 0.0, draining=True),
                 h.host('m1', 0.0, draining=True), h.host('a', 0.0)]
        result = self.plan(hosts, [])
        self.assertEqual([('m1', 0), ('m2', 0)],
                         [(d.host, d.instances) for d in result.drains])
        self.assertEqual((), self.plan([h.host('a', 0.0)], []).drains)

    def test_the_rails_choose_the_destinations_automation_off_is_none(self):
        hosts = [h.host('m', 50.0, draining=True),
                 h.host('m2', 0.0, draining=True),
                 h.host('x', 0.0, excluded=True),
                 h.host('v', 95.0, counter=1),
                 h.host('u', 0.0, schedulable=False),
                 h.host('s', None),
                 h.host('off', 60.0, automation_off=True)]

        def candidates(instance, snap):
            # The source itself and a host unknown to the snapshot too.
            return model.Candidates(allowed=['ghost', 'm'] + sorted(
                snap.hosts))

        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           candidates=candidates)
        self.assertEqual([('i1', 'm', 'off', model.DRAIN)],
                         [(m.instance, m.source, m.destination, m.goal)
                          for m in result.moves])
        result = self.plan(hosts[:-1], [h.instance('i1', 'm', 1.0)],
                           candidates=candidates)
        self.assertEqual((), result.moves)
        self.assertEqual(
            [('i1', 'no-destination',
              '1x excluded, 1x maintenance, 1x not-schedulable, '
              '1x stale-metrics, 1x violated')],
            [(r.subject, r.rule, r.detail)
             for r in result.drains[0].blockers])

    def test_automation_off_is_no_balancing_destination(self):
        hosts = [h.host('hot', 95.0, counter=1),
                 h.host('off', 0.0, automation_off=True),
                 h.host('ok', 50.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)])
        self.assertEqual([('ok', model.BALANCE)],
                         [(m.destination, m.goal) for m in result.moves])
        self.assertIn(('off', 'automation-off'),
                      [(r.subject, r.rule) for r in result.moves[0].rejected])
        # Nor judged, however hot.
        result = self.plan([h.host('off', 95.0, counter=1,
                                   automation_off=True), h.host('ok', 0.0)],
                           [h.instance('i1', 'off', 1.0)])
        self.assertEqual((), result.moves)
        [verdict, _] = result.hosts
        self.assertEqual((False, 'automation off: not judged'),
                         (verdict.violated, verdict.reason))

    def test_maintenance_comes_before_any_other_verdict(self):
        # A draining host with automation off, excluded, or violated is a
        # host in maintenance: never a destination, even for a drain.
        for flags in ({'automation_off': True}, {'excluded': True},
                      {'counter': 1}):
            hosts = [h.host('m', 50.0, draining=True),
                     h.host('m2', 95.0, draining=True, **flags),
                     h.host('a', 70.0)]
            result = self.plan(hosts, [h.instance('i1', 'm', 0.1),
                                       h.instance('i2', 'm2', 0.1)])
            self.assertEqual([('i1', 'a'), ('i2', 'a')],
                             [(m.instance, m.destination)
                              for m in result.moves])
            verdicts = {v.host: v for v in result.hosts}
            self.assertEqual(
                (False, 'in maintenance: draining, not judged'),
                (verdicts['m2'].violated, verdicts['m2'].reason))

    def test_ties_go_to_the_first_name_else_the_lower_load(self):
        def destination(*loads):
            hosts = [h.host('m', 50.0, draining=True)] + [
                h.host(name, cpu) for name, cpu in loads]
            result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
            return result.moves[0].destination

        self.assertEqual('a', destination(('b', 20.0), ('a', 20.0)))
        self.assertEqual('b', destination(('a', 30.0), ('b', 20.0)))
        # Over the margin (balanced's fallback) likewise.
        self.assertEqual('a', destination(('b', 78.0), ('a', 78.0)))
        self.assertEqual('b', destination(('a', 79.0), ('b', 77.0)))
        self.assertEqual('a', destination(('a', 77.0), ('b', 79.0)))

    def test_a_destination_under_its_per_host_limit_takes_one_more(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           max_concurrent_migrations_per_host=2,
                           inflight_by_host={'a': 1}, inflight_total=1)
        self.assertEqual(['a'], [m.destination for m in result.moves])

    def test_busy_beside_refused_destinations_is_a_blocker(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0),
                 h.host('x', 10.0, excluded=True), h.host('b', 10.0)]
        busy = dict(max_concurrent_migrations_per_host=1,
                    drain_max_concurrent_migrations_per_host=1,
                    inflight_by_host={'a': 1}, inflight_total=1)
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           candidates=h.allow_except({'b': 'AnyFilter'}),
                           **busy)
        self.assertEqual((), result.drains[0].waiting)
        self.assertEqual(
            [('i1', 'no-destination',
              '1x AnyFilter, 1x excluded, 1x limit:per-host')],
            [(r.subject, r.rule, r.detail)
             for r in result.drains[0].blockers])
        result = self.plan(hosts[:2], [h.instance('i1', 'm', 1.0)], **busy)
        self.assertEqual(
            [('i1', 'limit:per-host', '1x limit:per-host')],
            [(r.subject, r.rule, r.detail)
             for r in result.drains[0].waiting])

    def test_another_pool_is_no_destination(self):
        hosts = [h.host('m', 50.0, draining=True, pool='p1'),
                 h.host('a', 0.0, pool='p2')]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           mode='aggregate')
        self.assertEqual([('i1', 'no-destination', '1x pool')],
                         [(r.subject, r.rule, r.detail)
                          for r in result.drains[0].blockers])
        # In global mode pools do not matter.
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        self.assertEqual(['a'], [m.destination for m in result.moves])

    def test_the_reason_names_the_policy_and_the_projection(self):
        hosts = [h.host('m', 50.0, ram=40.0, draining=True),
                 h.host('a', 10.0, ram=30.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0),
                                   h.instance('i2', 'm', 0.0,
                                              migration=model.COLD)])
        self.assertEqual([
            ('i1', model.LIVE,
             f'maintenance: host m is draining; live migration to a, the '
             f'{self.policy} policy\'s preferred destination (projected cpu '
             f'20.0%, ram 40.0%)'),
            ('i2', model.COLD,
             f'maintenance: host m is draining; cold migration to a, the '
             f'{self.policy} policy\'s preferred destination (projected cpu '
             f'20.0%, ram 50.0%)')],
            [(m.instance, m.migration, m.reason) for m in result.moves])
        self.assertEqual(
            {'source_cpu': 40.0, 'destination_cpu': 20.0,
             'source_ram': 30.0, 'destination_ram': 40.0,
             'instance_cores': 1.0},
            {key: value for key, value in result.moves[0].expected.items()
             if key != 'improvement'})
        self.assertEqual(1000, result.moves[0].memory_mb)

    def test_candidates_see_the_moves_planned_before(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 0.0),
                 h.host('b', 0.0)]
        seen = []

        def candidates(instance, snap):
            seen.append((instance.uuid, [m.instance for m in snap.planned]))
            return h.allow_all(instance, snap)

        self.plan(hosts, [h.instance('i1', 'm', 1.0, memory_mb=2000),
                          h.instance('i2', 'm', 1.0)], candidates=candidates)
        self.assertEqual([('i1', []), ('i2', ['i1'])], seen)

    def test_no_allowed_host_is_a_blocker_not_a_wait(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        for allowed in ([], [h.fresh('m')]):
            # Nova allows nothing, or only the source itself (its name as
            # Nova's host state spells it).
            result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                               candidates=lambda instance, snap, allowed=(
                                   allowed): model.Candidates(allowed))
            self.assertEqual((), result.drains[0].waiting)
            self.assertEqual(
                [('i1', 'no-destination', 'no allowed destination')],
                [(r.subject, r.rule, r.detail)
                 for r in result.drains[0].blockers])

    def test_an_instance_with_no_destination_holds_no_other_back(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]

        def candidates(instance, snap):
            if instance.uuid == 'big':
                return model.Candidates([], [model.Rejection('a',
                                                             'RamFilter')])
            return h.allow_all(instance, snap)

        result = self.plan(hosts, [h.instance('big', 'm', 1.0, memory_mb=9000),
                                   h.instance('small', 'm', 1.0)],
                           candidates=candidates)
        [drain] = result.drains
        self.assertEqual(('small',), drain.planned)
        self.assertEqual([('big', 'no-destination', '1x RamFilter')],
                         [(r.subject, r.rule, r.detail)
                          for r in drain.blockers])

    def test_a_cold_instance_read_back_is_cold(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        result = self.plan(hosts, [h.instance(
            'off', 'm', 0.0, migration=h.fresh(model.COLD))])
        self.assertIn('cold migration to a', result.moves[0].reason)

    def test_pools_compared_by_value(self):
        hosts = [h.host('m', 50.0, draining=True, pool=h.fresh('p1')),
                 h.host('a', 0.0, pool='p2'),
                 h.host('b', 70.0, pool=h.fresh('p1'))]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           mode='aggregate')
        self.assertEqual(['b'], [m.destination for m in result.moves])

    def test_a_destination_over_its_per_host_limit_takes_none(self):
        # More in flight than the limit (an operator's migrations, or a
        # limit lowered since): still refused.
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           max_concurrent_migrations_per_host=1,
                           drain_max_concurrent_migrations_per_host=1,
                           inflight_by_host={'a': 3}, inflight_total=3)
        self.assertEqual((), result.moves)
        self.assertEqual(['limit:per-host'],
                         [r.rule for r in result.drains[0].waiting])

    def test_a_host_without_a_cpu_sample_still_drains(self):
        hosts = [h.host('m', None, draining=True), h.host('a', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        [drain] = result.drains
        self.assertEqual((1, ('i1',)), (drain.instances, drain.planned))


class BalancedFallbackTest(testtools.TestCase):

    def test_the_reason_of_a_fallback_names_what_the_policy_refused(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 78.0),
                 h.host('x', 0.0, excluded=True)]
        result = planner.plan(h.snapshot(hosts, [h.instance('i1', 'm', 1.0)],
                                         policy='balanced'), h.allow_all)
        self.assertEqual(
            ['maintenance: host m is draining; live migration to a, the '
             'least loaded allowed host (projected cpu 88.0%): the balanced '
             'policy accepts none (1x excluded, 1x margin)'],
            [m.reason for m in result.moves])
        # A drain past the margin is a fallback, not a move inside it.
        self.assertNotIn('inside_margin', result.moves[0].expected)

    def test_a_fallback_destination_takes_the_next_instance_too(self):
        # Refused by the policy at its current load, it is not indexed:
        # after the move it is judged again, still a fallback.
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 76.0)]
        result = planner.plan(h.snapshot(
            hosts, [h.instance('i1', 'm', 0.5, memory_mb=2000),
                    h.instance('i2', 'm', 0.5)], policy='balanced',
            max_migrations_per_period=10, max_concurrent_migrations=10,
            max_concurrent_migrations_per_host=3,
            drain_max_concurrent_migrations_per_host=2), h.allow_all)
        self.assertEqual([('i1', 'a', {'destination_cpu': 81.0}),
                          ('i2', 'a', {'destination_cpu': 86.0})],
                         [(m.instance, m.destination,
                           {'destination_cpu': m.expected[
                               'destination_cpu']}) for m in result.moves])


class BalancedDrainSpreadTest(testtools.TestCase):
    """Where placement reports no room, a drain ranks its destinations by
    their room on CPU and RAM together, without their spread: a host
    filling up with the drain (the one just back from maintenance) shows
    the drain's own arrivals as spread, and its RAM may match another
    host's long before its CPU."""

    def plan(self, hosts, instances, **kwargs):
        return planner.plan(h.snapshot(
            hosts, instances, policy='balanced', max_migrations_per_period=10,
            max_concurrent_migrations=10,
            max_concurrent_migrations_per_host=2, **kwargs), h.allow_all)

    def test_the_host_with_most_room_takes_the_drain_whatever_its_spread(
            self):
        # back: just back from maintenance, 30 % after the drain's first
        # arrivals, which show as spread (2 x 10 points on top would
        # rank it at 60 %); steady: 40 %, no spread.
        hosts = [h.host('m', 50.0, draining=True),
                 h.host('back', 30.0, cpu_deviation=10.0),
                 h.host('steady', 40.0, cpu_deviation=0.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        self.assertEqual([('i1', 'back', model.DRAIN)],
                         [(m.instance, m.destination, m.goal)
                          for m in result.moves])
        self.assertIn("the balanced policy's preferred destination "
                      "(projected cpu 40.0%)", result.moves[0].reason)

    def test_it_fills_until_another_host_has_more_room(self):
        hosts = [h.host('m', 50.0, draining=True),
                 h.host('back', 30.0, cpu_deviation=10.0),
                 h.host('steady', 45.0, cpu_deviation=0.0)]
        result = self.plan(
            hosts, [h.instance(f'i{n}', 'm', 0.5, memory_mb=1000 - n)
                    for n in range(5)],
            drain_max_concurrent_migrations_per_host=5)
        # 5 points each: back ends at 35, 40, 45, then 50 % (a tie with
        # steady's 50 %, to the first name); the fifth goes to steady
        # (50 % against back's 55 %).
        self.assertEqual(['back', 'back', 'back', 'back', 'steady'],
                         [m.destination for m in result.moves])

    def test_the_room_on_cpu_and_ram_together_ranks_them(self):
        # back: 30 % CPU, 62 % RAM (worst: RAM, 28 points under 90 %);
        # busy: 50 % CPU, 60 % RAM (worst: CPU, 30 points under 80 %).
        # Together back has 78 points of room, busy 70: back.
        hosts = [h.host('m', 50.0, draining=True),
                 h.host('back', 29.0, ram=62.0),
                 h.host('busy', 49.0, ram=60.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 0.1,
                                              memory_mb=1)])
        self.assertEqual(['back'], [m.destination for m in result.moves])

    def test_the_margin_still_bars_a_drain_destination(self):
        hosts = [h.host('m', 50.0, draining=True),
                 h.host('back', 70.0, cpu_deviation=0.0),
                 h.host('steady', 60.0, cpu_deviation=10.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        # back would end at 80 %, past 80 - 5: refused for the margin.
        self.assertEqual(['steady'], [m.destination for m in result.moves])

    def test_the_hook_scores_room_under_both_thresholds(self):
        policy, config = balanced.BalancedPolicy(), model.PlannerConfig()
        host = h.host('a', 0.0, cpu_threshold=70.0, ram_threshold=85.0)
        self.assertEqual((None, (20.0 - 70.0) + (40.0 - 85.0)),
                         policy.drain(host, 20.0, 40.0, config, None))
        self.assertEqual((None, 30.0 - 70.0),
                         policy.drain(host, 30.0, None, config, None))
        # Placement's weight, when known, ranks alone: higher is emptier.
        self.assertEqual((None, -0.7),
                         policy.drain(host, 30.0, 40.0, config, 0.7))
        self.assertEqual(base.MARGIN, policy.drain(host, 66.0, 40.0, config,
                                                   0.7)[0])

    def test_balancing_still_ranks_with_the_spread(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('back', 30.0, cpu_deviation=10.0),
                 h.host('steady', 40.0, cpu_deviation=0.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)])
        self.assertEqual([('steady', model.BALANCE)],
                         [(m.destination, m.goal) for m in result.moves])


class QueuedDestinationTest(testtools.TestCase):
    """A host waiting in the maintenance queue takes a drain's instance
    only when no host out of the queue can: what it receives would move
    again when its turn comes."""

    scenarios = POLICIES

    def plan(self, hosts, instances, candidates=h.allow_all):
        return planner.plan(h.snapshot(
            hosts, instances, policy=self.policy,
            drain_max_concurrent_migrations_per_host=10), candidates)

    def moves(self, result):
        return [(m.instance, m.destination) for m in result.moves]

    def test_a_host_out_of_the_queue_comes_first_though_hotter(self):
        hosts = [h.host('m', 50.0, draining=True, schedulable=False),
                 h.host('queued', 5.0, queued=True),
                 h.host('back', 40.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        self.assertEqual([('i1', 'back')], self.moves(result))
        self.assertNotIn('queue', result.moves[0].reason)

    def test_even_past_its_threshold(self):
        # back would end at 88 %, over its threshold: a queued host under
        # it still waits, as the instance would move twice.
        hosts = [h.host('m', 50.0, draining=True, schedulable=False),
                 h.host('queued', 5.0, queued=True),
                 h.host('back', 78.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        self.assertEqual([('i1', 'back')], self.moves(result))
        if self.policy == 'balanced':  # seed's drain has no margin
            self.assertIn('least loaded allowed host',
                          result.moves[0].reason)
            self.assertIn('1x queued', result.moves[0].reason)

    def test_the_coolest_queued_host_when_every_other_is_queued(self):
        hosts = [h.host('m', 50.0, draining=True, schedulable=False),
                 h.host('q-hot', 60.0, queued=True),
                 h.host('q-cool', 20.0, queued=True)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)])
        self.assertEqual([('i1', 'q-cool')], self.moves(result))
        self.assertIn('q-cool, a host waiting in the maintenance queue '
                      '(projected cpu 30.0%): no host out of the queue can '
                      'take it (every other allowed host is queued)',
                      result.moves[0].reason)

    def test_a_queued_host_when_the_others_are_refused(self):
        hosts = [h.host('m', 50.0, draining=True, schedulable=False),
                 h.host('queued', 60.0, queued=True),
                 h.host('full', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           h.allow_except({'full': 'RamFilter'}))
        self.assertEqual([('i1', 'queued')], self.moves(result))
        self.assertIn('no host out of the queue can take it '
                      '(1x RamFilter)', result.moves[0].reason)

    def test_balancing_still_sends_to_a_queued_host(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('queued', 20.0, queued=True)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 1.0)])
        self.assertEqual([('i1', 'queued')], self.moves(result))


class AutomationOffLevelingTest(testtools.TestCase):
    """A host with automation off neither levels nor counts in its pool's
    rise rate, as an excluded one."""

    def test_neither_sends_nor_counts(self):
        hosts = {name: h.host(name, cpu, rise_rate=rate, **kwargs)
                 for name, cpu, rate, kwargs in (
                     ('a', 75.0, 3.0, {}),
                     ('off', 79.0, 0.0, {'automation_off': True}))}
        self.assertEqual({'a'}, level.leveling_sources(
            hosts, model.PlannerConfig()))
        self.assertEqual({None: 3.0}, level.rise_rates(
            hosts, model.PlannerConfig()))
        on = dict(hosts, off=h.host('off', 79.0, rise_rate=0.0))
        self.assertEqual(set(), level.leveling_sources(
            on, model.PlannerConfig()))


class FreeWeightsTest(testtools.TestCase):
    """A drain's destinations weighed as Nova's RAM and CPU weighers
    weigh them, from placement's room."""

    def found(self, room, request=None):
        return model.Candidates(allowed=sorted(room), room=room,
                                request=request or {'MEMORY_MB': 1000,
                                                    'VCPU': 1})

    def test_each_class_normalised_over_the_hosts_then_added(self):
        found = self.found({'a': {'MEMORY_MB': 5000, 'VCPU': 10},
                            'b': {'MEMORY_MB': 3000, 'VCPU': 30},
                            'c': {'MEMORY_MB': 1000, 'VCPU': 20}})
        self.assertEqual({'a': 1.0, 'b': 1.5, 'c': 0.5},
                         drain.free_weights(found, {}))

    def test_what_earlier_moves_took_is_counted(self):
        found = self.found({'a': {'MEMORY_MB': 5000, 'VCPU': 10},
                            'b': {'MEMORY_MB': 3000, 'VCPU': 10}})
        self.assertEqual({'a': 0.0, 'b': 1.0}, drain.free_weights(
            found, {'a': {'MEMORY_MB': 2001}}))

    def test_a_class_nothing_took_on_a_host_counts_whole(self):
        room = {'MEMORY_MB': 5000, 'VCPU': 10}
        found = self.found({'a': room, 'b': room, 'c': room})
        # VCPU: a 9, b 10 (nothing taken there), c 10.
        self.assertEqual({'a': 0.0, 'b': 1.0, 'c': 1.0}, drain.free_weights(
            found, {'a': {'VCPU': 1}, 'c': {'VCPU': 0}}))

    def test_equal_hosts_weigh_nothing(self):
        found = self.found({'a': {'MEMORY_MB': 5000, 'VCPU': 10},
                            'b': {'MEMORY_MB': 5000, 'VCPU': 10}})
        self.assertEqual({'a': 0.0, 'b': 0.0},
                         drain.free_weights(found, {}))

    def test_a_host_without_both_classes_weighs_none(self):
        for room in ({'MEMORY_MB': 5000}, {'VCPU': 10}, {}):
            found = model.Candidates(
                allowed=['a', 'b'],
                room={'a': {'MEMORY_MB': 1, 'VCPU': 1}, 'b': room},
                request={'MEMORY_MB': 1})
            self.assertEqual({}, drain.free_weights(found, {}))
        found = model.Candidates(allowed=['a'], request={'MEMORY_MB': 1})
        self.assertEqual({}, drain.free_weights(found, {}))


class BalancedDrainRoomTest(testtools.TestCase):
    """With placement's room, ``balanced`` sends a drain to the emptiest
    host in placement under the margin, whatever its measured load."""

    def plan(self, hosts, instances, rooms):
        return planner.plan(h.snapshot(
            hosts, instances, policy='balanced', max_migrations_per_period=10,
            max_concurrent_migrations=10,
            max_concurrent_migrations_per_host=2,
            drain_max_concurrent_migrations_per_host=5),
            h.allow_with_room(rooms))

    def test_the_emptiest_in_placement_takes_the_drain(self):
        # back: just back from maintenance, busier in CPU for the moment
        # but the emptiest in placement; cool: cooler, fuller.
        hosts = [h.host('m', 50.0, draining=True), h.host('back', 40.0),
                 h.host('cool', 20.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 0.1)],
                           {'back': 9000, 'cool': 3000})
        self.assertEqual(['back'], [m.destination for m in result.moves])

    def test_the_margin_still_bars_the_emptiest(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('back', 74.0),
                 h.host('cool', 20.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 1.0)],
                           {'back': 9000, 'cool': 3000})
        self.assertEqual(['cool'], [m.destination for m in result.moves])

    def test_the_emptiest_wins_whatever_its_name(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 20.0),
                 h.host('b', 20.0), h.host('c', 20.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 0.1)],
                           {'a': 6000, 'b': 9000, 'c': 3000})
        self.assertEqual(['b'], [m.destination for m in result.moves])

    def test_a_standby_drain_follows_the_power_planners_placement(self):
        # Entering standby: the least loaded host in CPU, as the power
        # planner's check placed it, not the emptiest in placement.
        # The state as the database gives it: equal, not identical.
        entering = ''.join(['enter', 'ing'])
        hosts = [h.host('m', 50.0, draining=True, power=entering),
                 h.host('back', 40.0), h.host('cool', 20.0)]
        result = self.plan(hosts, [h.instance('i1', 'm', 0.1)],
                           {'back': 9000, 'cool': 3000})
        self.assertEqual(['cool'], [m.destination for m in result.moves])

    def test_it_fills_until_another_host_is_as_empty(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('back', 20.0),
                 h.host('full', 20.0)]
        result = self.plan(
            hosts, [h.instance(f'i{n}', 'm', 0.1, memory_mb=1000 + n)
                    for n in range(4)],
            {'back': 6000, 'full': 3000})
        # back: 6000 MB free, less 1003, 1002, 1001; then full is
        # emptier (3000 - 1000 against 6000 - 3006 - 1000).
        self.assertEqual(['back', 'back', 'back', 'full'],
                         [m.destination for m in result.moves])
