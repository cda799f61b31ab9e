"""Draining hosts planned before any enters maintenance: each alone, what
blocks, what goes over, and the largest set found to drain at once."""

import dataclasses

import testtools

from nova_drs_scheduler.planning import drain_plan
from nova_drs_scheduler.planning import drain_time
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from tests import snapshots as h

MB = 2500


def snap(hosts, instances, **config):
    """The hosts to plan already marked draining, as the live side builds
    the snapshot; tight drain limits the plan must lift."""
    return h.snapshot(hosts, instances, **{
        'drain_max_concurrent_migrations_per_host': 1,
        'max_concurrent_migrations': 2, **config})


def big(uuid, host, **kwargs):
    return h.instance(uuid, host, 0.5, memory_mb=MB, **kwargs)


def _only_to(destinations):
    """Candidates callback allowing each instance one host."""
    def candidates(instance, snapshot):
        return model.Candidates(allowed=[destinations[instance.uuid]])
    return candidates


def full(*names):
    """Rooms of hosts that take no instance of ``MB``."""
    return dict.fromkeys(names, 0)


class AloneTest(testtools.TestCase):

    def test_every_instance_planned_at_once_timed_at_the_configured_pace(
            self):
        hosts = [h.host('m', 30.0, draining=True), h.host('a', 10.0),
                 h.host('b', 20.0)]
        instances = [h.instance(f'i{n}', 'm', 0.5) for n in range(5)]
        snapshot = snap(hosts, instances)
        self.assertEqual(1, len(planner.plan(snapshot, h.allow_all).moves))
        found = drain_plan.assess(snapshot, h.allow_all, ['m'])
        [alone] = found.alone
        self.assertEqual(5, len(alone.moves))
        self.assertEqual({'a', 'b'}, {m.destination for m in alone.moves})
        self.assertEqual(((), ()), (alone.drains[0].waiting,
                                    alone.drains[0].blockers))
        # m's link carries the five one at a time, as configured.
        config = snapshot.config
        self.assertIs(config, found.config)
        self.assertAlmostEqual(
            drain_time.link_seconds(
                [(1000, 0.5)] * 5, 1, config.migration_bandwidth,
                config.migration_dirty_rate), alone.seconds)
        self.assertTrue(found.all_at_once)
        self.assertEqual(('m',), found.together.hosts)
        self.assertEqual(set(found.instances), {i.uuid for i in instances})

    def test_a_blocker_keeps_the_host_out_its_other_instances_placed(self):
        hosts = [h.host('m1', 30.0, draining=True),
                 h.host('m2', 30.0, draining=True), h.host('a', 10.0)]
        instances = [h.instance('out', 'm1', 0.5,
                                blocked='opted out: instance metadata'),
                     h.instance('i1', 'm1', 0.5), h.instance('i2', 'm2', 0.5)]
        found = drain_plan.assess(snap(hosts, instances), h.allow_all,
                                  ['m1', 'm2'])
        m1, m2 = found.alone
        self.assertFalse(m1.can_drain)
        self.assertEqual(['i1'], [m.instance for m in m1.moves])
        self.assertEqual([('out', 'blocked', 'opted out: instance metadata')],
                         [(b.subject, b.rule, b.detail)
                          for b in m1.drains[0].blockers])
        self.assertTrue(m2.can_drain)
        self.assertEqual(('m2',), found.together.hosts)
        self.assertEqual((('m1', 'alone: 1 instance(s) would block'),),
                         found.left_out)
        self.assertFalse(found.all_at_once)

    def test_an_instance_waiting_for_its_move_in_flight_does_not_block(
            self):
        hosts = [h.host('m', 30.0, draining=True), h.host('a', 10.0)]
        found = drain_plan.assess(snap(hosts, [
            h.instance('moving', 'm', 0.5, blocked='migrating m -> a',
                       transient=True)]), h.allow_all, ['m'])
        [alone] = found.alone
        self.assertTrue(alone.can_drain)
        self.assertEqual(['moving'], [w.subject
                                      for w in alone.drains[0].waiting])
        self.assertTrue(found.all_at_once)

    def test_a_host_already_in_maintenance_drains_too_and_takes_its_room(
            self):
        # a-old is in maintenance (draining, not asked about); its
        # instance is planned first and takes d's only room.
        hosts = [h.host('a-old', 30.0, draining=True),
                 h.host('b-new', 30.0, draining=True), h.host('d', 10.0)]
        instances = [big('old', 'a-old'), big('new', 'b-new')]
        rooms = h.allow_with_room({'d': MB, **full('a-old', 'b-new')})
        found = drain_plan.assess(snap(hosts, instances), rooms, ['b-new'])
        [alone] = found.alone
        self.assertEqual(('b-new',), alone.hosts)
        [blocker] = alone.drains[0].blockers
        self.assertIn('capacity', blocker.detail)
        self.assertEqual((), alone.moves)
        self.assertFalse(found.all_at_once)

    def test_the_others_asked_about_are_destinations_when_not_draining(self):
        hosts = [h.host('m1', 40.0, draining=True),
                 h.host('m2', 0.0, draining=True), h.host('a', 30.0)]
        instances = [h.instance('i1', 'm1', 0.5)]
        found = drain_plan.assess(snap(hosts, instances), h.allow_all,
                                  ['m1', 'm2'])
        self.assertEqual(['m2'], [m.destination for m in found.alone[0].moves])
        self.assertEqual(['a'], [m.destination
                                 for m in found.together.moves])

    def test_a_host_asked_twice_is_planned_once(self):
        hosts = [h.host('m', 30.0, draining=True), h.host('a', 10.0)]
        found = drain_plan.assess(snap(hosts, [h.instance('i', 'm', 0.5)]),
                                  h.allow_all, ['m', 'm'])
        self.assertEqual(1, len(found.alone))
        self.assertEqual(('m',), found.together.hosts)


class OverTest(testtools.TestCase):
    """A receiving host is judged at the planner's projection after the
    last move into it, against its own thresholds, strictly."""

    def plan(self, *destinations, cores=3.0, memory_mb=1000):
        hosts = [h.host('m', 50.0, draining=True), *destinations]
        found = drain_plan.assess(
            snap(hosts, [h.instance('i', 'm', cores, memory_mb=memory_mb)]),
            h.allow_all, ['m'])
        return found, found.alone[0]

    def test_a_host_pushed_over_its_cpu_threshold_is_named(self):
        # No host stays under the margin: the drain falls back to a.
        found, alone = self.plan(h.host('a', 60.0), h.host('b', 70.0))
        self.assertEqual(['a'], [m.destination for m in alone.moves])
        self.assertEqual((drain_plan.Over('a', 90.0, None, 80.0, 90.0),),
                         alone.over)
        self.assertFalse(alone.can_drain)
        self.assertEqual((('m', 'alone: a would go over a threshold'),),
                         found.left_out)

    def test_at_the_threshold_is_not_over(self):
        _, alone = self.plan(h.host('a', 50.0))
        self.assertEqual((), alone.over)
        self.assertTrue(alone.can_drain)

    def test_against_the_host_s_own_threshold(self):
        _, alone = self.plan(h.host('a', 50.0, cpu_threshold=75.0))
        self.assertEqual(['a'], [o.host for o in alone.over])

    def test_ram(self):
        _, alone = self.plan(h.host('a', 10.0, ram=85.0), cores=0.5)
        [over] = alone.over
        self.assertEqual(('a', 15.0, 95.0), (over.host, over.cpu_percent,
                                             over.ram_percent))

    def test_at_its_outlook_not_one_quiet_sample(self):
        # 50 % now, 60 % usually: 60 + 30 points.
        _, alone = self.plan(h.host('a', 50.0, cpu_expected=60.0))
        self.assertEqual([90.0], [o.cpu_percent for o in alone.over])

    def test_after_every_move_into_it(self):
        hosts = [h.host('m', 50.0, draining=True), h.host('a', 50.0)]
        found = drain_plan.assess(
            snap(hosts, [h.instance('i1', 'm', 2.0),
                         h.instance('i2', 'm', 2.0)]), h.allow_all, ['m'])
        self.assertEqual([90.0], [o.cpu_percent
                                  for o in found.alone[0].over])

    def test_only_hosts_receiving_from_the_hosts_asked_about(self):
        _, alone = self.plan(h.host('a', 10.0), h.host('hot', 95.0))
        self.assertEqual((), alone.over)

    def test_not_a_host_only_an_earlier_drain_pushes_over(self):
        # a-old (in maintenance already) pushes a over; m's instance goes
        # to b, so a is not m's to answer for.
        hosts = [h.host('a-old', 50.0, draining=True),
                 h.host('m', 50.0, draining=True), h.host('a', 60.0),
                 h.host('b', 10.0)]
        found = drain_plan.assess(
            snap(hosts, [h.instance('old', 'a-old', 3.0),
                         h.instance('i', 'm', 0.5)]),
            _only_to({'old': 'a', 'i': 'b'}), ['m'])
        self.assertEqual((), found.alone[0].over)
        self.assertTrue(found.all_at_once)

    def test_blockers_and_over_together(self):
        outcome = drain_plan.Outcome(
            drains=(model.Drain('m', 2, blockers=(
                model.Rejection('i', 'blocked'),)),),
            over=(drain_plan.Over('a', 90.0, None, 80.0, 90.0),
                  drain_plan.Over('b', 85.0, None, 80.0, 90.0)))
        self.assertEqual('1 instance(s) would block; a, b would go over a '
                         'threshold', outcome.why_not())


class AtOnceTest(testtools.TestCase):
    """The greedy largest set: smallest first, a host kept only if the
    whole set still drains."""

    def test_a_host_that_does_not_fit_with_the_others_is_left_out(self):
        # d has room for two: a and c (one each) fit together, b (two)
        # only alone.
        hosts = [h.host(name, 30.0, draining=True) for name in 'abc']
        hosts.append(h.host('d', 10.0))
        instances = [big('a1', 'a'), big('b1', 'b'), big('b2', 'b'),
                     big('c1', 'c')]
        rooms = h.allow_with_room({'d': 2 * MB, **full('a', 'b', 'c')})
        found = drain_plan.assess(snap(hosts, instances), rooms,
                                  ['b', 'a', 'c'])
        self.assertEqual([True] * 3, [o.can_drain for o in found.alone])
        self.assertEqual(('b', 'a', 'c'), tuple(o.hosts[0]
                                                for o in found.alone))
        self.assertEqual(('a', 'c'), found.together.hosts)
        self.assertEqual(['a1', 'c1'], sorted(m.instance
                                              for m in found.together.moves))
        self.assertEqual((('b', 'with a, c: 2 instance(s) would block'),),
                         found.left_out)
        self.assertFalse(found.all_at_once)

    def test_the_smallest_is_tried_first_whatever_its_name(self):
        hosts = [h.host('a-big', 30.0, draining=True),
                 h.host('z-small', 30.0, draining=True), h.host('d', 10.0)]
        instances = [big('b1', 'a-big'), big('b2', 'a-big'),
                     big('s1', 'z-small')]
        rooms = h.allow_with_room({'d': 2 * MB,
                                   **full('a-big', 'z-small')})
        found = drain_plan.assess(snap(hosts, instances), rooms,
                                  ['a-big', 'z-small'])
        self.assertEqual(('z-small',), found.together.hosts)
        self.assertEqual('a-big', found.left_out[0][0])

    def test_every_host_at_once(self):
        hosts = [h.host('m1', 30.0, draining=True),
                 h.host('m2', 30.0, draining=True), h.host('a', 10.0),
                 h.host('b', 10.0)]
        instances = [h.instance('i1', 'm1', 0.5), h.instance('i2', 'm2', 0.5)]
        found = drain_plan.assess(snap(hosts, instances), h.allow_all,
                                  ['m1', 'm2'])
        self.assertTrue(found.all_at_once)
        self.assertEqual(('m1', 'm2'), found.together.hosts)
        self.assertEqual((), found.left_out)

    def test_no_host_can_drain(self):
        hosts = [h.host('m', 30.0, draining=True), h.host('a', 10.0)]
        found = drain_plan.assess(snap(hosts, [
            h.instance('out', 'm', 0.5, blocked='opted out')]),
            h.allow_all, ['m'])
        self.assertEqual((), found.together.hosts)
        self.assertEqual(0.0, found.together.seconds)

    def test_smallest_first_by_memory_then_vcpus_then_name(self):
        instances = [h.instance('x1', 'x', 0, memory_mb=2000, vcpus=1),
                     h.instance('y1', 'y', 0, memory_mb=1000, vcpus=4),
                     h.instance('z1', 'z', 0, memory_mb=1000, vcpus=2),
                     h.instance('w1', 'w', 0, memory_mb=1000, vcpus=2)]
        self.assertEqual(['empty', 'w', 'z', 'y', 'x'],
                         drain_plan.smallest_first(
                             instances, ['x', 'y', 'z', 'w', 'empty']))


class LimitsAndShapeTest(testtools.TestCase):

    def test_a_host_that_cannot_drain_alone_leaves_the_next_in(self):
        # 'a' (the smallest) blocks alone; 'b' still joins the set.
        hosts = [h.host('a', 30.0, draining=True),
                 h.host('b', 30.0, draining=True), h.host('d', 10.0)]
        instances = [big('a1', 'a', blocked='opted out'), big('b1', 'b'),
                     big('b2', 'b')]
        found = drain_plan.assess(snap(hosts, instances), h.allow_all,
                                  ['a', 'b'])
        self.assertEqual(('b',), found.together.hosts)
        self.assertEqual('a', found.left_out[0][0])

    def test_every_instance_of_a_large_host_is_planned_at_once(self):
        hosts = [h.host('m', 30.0, draining=True, vcpus=1000,
                        memory_mb=10 ** 7)]
        hosts += [h.host(f'd{n}', 0.0, vcpus=1000, memory_mb=10 ** 7)
                  for n in range(3)]
        instances = [h.instance(f'i{n:04d}', 'm', 0.01, memory_mb=10)
                     for n in range(200)]
        found = drain_plan.assess(
            snap(hosts, instances, max_concurrent_migrations_per_host=1),
            h.allow_all, ['m'])
        self.assertEqual(200, len(found.alone[0].moves))

    def test_results_are_immutable(self):
        hosts = [h.host('m', 30.0, draining=True), h.host('d', 99.0)]
        found = drain_plan.assess(
            snap(hosts, [h.instance('i1', 'm', 0.5)]), h.allow_all, ['m'])
        for frozen in (found, found.alone[0]):
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              frozen, 'hosts', ())
        if found.alone[0].over:
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              found.alone[0].over[0], 'host', '')
