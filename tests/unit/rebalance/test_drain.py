"""Draining a host in maintenance through the planner."""

import testscenarios
import testtools

from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.rebalance import planner
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
        result = self.plan(hosts, [small, big],
                           max_concurrent_migrations_per_host=1)
        self.assertEqual([('big', 'a', model.DRAIN), ('small', 'b',
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

    def test_drain_comes_before_balancing_within_the_period_limit(self):
        hosts = [h.host('hot', 95.0, counter=3),
                 h.host('m', 10.0, draining=True, schedulable=False),
                 h.host('ok', 10.0), h.host('ok2', 10.0)]
        result = self.plan(hosts, [h.instance('i1', 'hot', 2.0),
                                   h.instance('d1', 'm', 0.5)],
                           max_migrations_per_period=1)
        self.assertEqual([('d1', model.DRAIN)],
                         [(m.instance, m.goal) for m in result.moves])
        self.assertTrue(any('limit:per-period' in n for n in result.notes))

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
