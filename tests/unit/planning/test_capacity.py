"""Capacity counted per planned move: what earlier moves of a period take
off a destination's room, for every goal."""

import testtools

from nova_drs_scheduler.planning import capacity
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from tests import snapshots as h

MB = 'MEMORY_MB'


def _move(uuid, destination, **resources):
    return model.Move(instance=uuid, source='src', destination=destination,
                      reason='test', expected={}, resources=resources)


class FitTest(testtools.TestCase):

    def found(self, **rooms):
        return model.Candidates(
            allowed=sorted(rooms), rejected=[model.Rejection('x', 'F')],
            room={n: {MB: free, 'VCPU': 8} for n, free in rooms.items()},
            request={MB: 2500, 'VCPU': 2})

    def test_nothing_planned_keeps_the_answer(self):
        found = self.found(a=3000, b=9000)
        self.assertIs(found, capacity.fit(found, ()))

    def test_a_planned_move_takes_its_request_off_its_destination(self):
        fitted = capacity.fit(self.found(a=3000, b=9000),
                              [_move('i1', 'a', MEMORY_MB=2500, VCPU=2)])
        self.assertEqual(['b'], list(fitted.allowed))
        self.assertEqual(['x', 'a'], [r.subject for r in fitted.rejected])
        refused = fitted.rejected[-1]
        self.assertEqual(capacity.RULE, refused.rule)
        self.assertEqual('MEMORY_MB 2500 wanted, 3000 free less 2500 taken '
                         'by moves planned earlier this period',
                         refused.detail)

    def test_exactly_the_room_left_still_fits(self):
        fitted = capacity.fit(self.found(a=5000),
                              [_move('i1', 'a', MEMORY_MB=2500)])
        self.assertEqual(['a'], list(fitted.allowed))

    def test_one_unit_short_does_not(self):
        fitted = capacity.fit(self.found(a=4999),
                              [_move('i1', 'a', MEMORY_MB=2500)])
        self.assertEqual([], list(fitted.allowed))

    def test_moves_to_one_host_add_up(self):
        planned = [_move('i1', 'a', MEMORY_MB=2500),
                   _move('i2', 'a', MEMORY_MB=2500),
                   _move('i3', 'b', MEMORY_MB=2500)]
        fitted = capacity.fit(self.found(a=7000, b=5000), planned)
        self.assertEqual(['b'], list(fitted.allowed))

    def test_every_resource_class_counts(self):
        fitted = capacity.fit(self.found(a=90000),
                              [_move('i1', 'a', VCPU=7)])
        self.assertEqual([], list(fitted.allowed))
        self.assertEqual('VCPU 2 wanted, 8 free less 7 taken by moves '
                         'planned earlier this period',
                         fitted.rejected[-1].detail)

    def test_a_host_without_room_reported_is_not_counted(self):
        found = model.Candidates(allowed=['a'], request={MB: 2500})
        self.assertIs(found, capacity.fit(
            found, [_move('i1', 'a', MEMORY_MB=99999)]))
        found = model.Candidates(allowed=['a', 'b'], room={'b': {MB: 1}},
                                 request={MB: 2500})
        self.assertEqual(['a'], list(capacity.fit(found, ()).allowed))

    def test_a_class_the_host_does_not_report_is_not_counted(self):
        found = model.Candidates(allowed=['a'], room={'a': {'VCPU': 4}},
                                 request={MB: 2500, 'VCPU': 4})
        self.assertEqual(['a'], list(capacity.fit(found, ()).allowed))

    def test_room_short_by_one_unit_with_nothing_planned(self):
        found = model.Candidates(allowed=['a', 'b'],
                                 room={'a': {MB: 2499}, 'b': {MB: 2500}},
                                 request={MB: 2500})
        fitted = capacity.fit(found, ())
        self.assertEqual(['b'], list(fitted.allowed))
        self.assertEqual('MEMORY_MB 2500 wanted, 2499 free',
                         fitted.rejected[0].detail)

    def test_a_class_missing_from_the_room_does_not_hide_the_next(self):
        # DISK_GB sorts first and is not reported: MEMORY_MB still counts.
        found = model.Candidates(allowed=['a'], room={'a': {MB: 100}},
                                 request={'DISK_GB': 1, MB: 2500})
        self.assertEqual([], list(capacity.fit(found, ()).allowed))

    def test_every_short_class_is_named(self):
        found = model.Candidates(allowed=['a'],
                                 room={'a': {MB: 100, 'VCPU': 1}},
                                 request={MB: 2500, 'VCPU': 2})
        self.assertEqual('MEMORY_MB 2500 wanted, 100 free; VCPU 2 wanted, '
                         '1 free',
                         capacity.fit(found, ()).rejected[0].detail)

    def test_taken_sums_per_destination(self):
        took = capacity.taken([_move('i1', 'a', VCPU=1, MEMORY_MB=10),
                               _move('i2', 'a', VCPU=2),
                               _move('i3', 'b', VCPU=4)])
        self.assertEqual({'a': {'VCPU': 3, MB: 10}, 'b': {'VCPU': 4}},
                         {k: dict(v) for k, v in took.items()})


class PlannerCapacityTest(testtools.TestCase):
    """The planner never plans two moves Nova would refuse together."""

    def test_a_drain_spreads_over_the_hosts_with_room(self):
        # host2 is the coolest but has room for one 2500 MB server; host3
        # has room for all three.  Ranked as Nova's RAM and CPU weighers
        # rank them: host3 first (the most free MB); then both tie (host3
        # the most MB, host2 the most vCPUs), by name; host2 is full.
        snap = h.snapshot(
            [h.host('host1', 20.0, draining=True), h.host('host2', 10.0),
             h.host('host3', 40.0)],
            [h.instance(f'i{n}', 'host1', 0.5, memory_mb=2500)
             for n in (1, 2, 3)],
            drain_max_concurrent_migrations_per_host=4)
        plan = planner.plan(snap, h.allow_with_room({'host2': 3000,
                                                      'host3': 9000}))
        self.assertEqual(
            [('i1', 'host3'), ('i2', 'host2'), ('i3', 'host3')],
            [(m.instance, m.destination) for m in plan.moves])
        self.assertEqual({MB: 2500, 'VCPU': 2}, plan.moves[0].resources)
        self.assertEqual((), plan.drains[0].blockers)
        refused = [r for r in plan.moves[2].rejected
                   if r.rule == capacity.RULE]
        self.assertEqual(['host2'], [r.subject for r in refused])

    def test_a_drain_with_room_for_part_waits_not_blocks(self):
        snap = h.snapshot(
            [h.host('host1', 20.0, draining=True), h.host('host2', 10.0)],
            [h.instance(f'i{n}', 'host1', 0.5, memory_mb=2500)
             for n in (1, 2)],
            drain_max_concurrent_migrations_per_host=4)
        plan = planner.plan(snap, h.allow_with_room({'host2': 3000}))
        self.assertEqual(['i1'], [m.instance for m in plan.moves])
        blocker, = plan.drains[0].blockers
        self.assertEqual(('i2', 'no-destination'),
                         (blocker.subject, blocker.rule))
        self.assertIn(capacity.RULE, blocker.detail)

    def test_two_violated_hosts_do_not_share_a_host_with_room_for_one(self):
        snap = h.snapshot(
            [h.host('hot1', 95.0, counter=1), h.host('hot2', 94.0, counter=1),
             h.host('cool', 10.0), h.host('warm', 40.0)],
            [h.instance('a', 'hot1', 2.0, memory_mb=2500),
             h.instance('b', 'hot2', 2.0, memory_mb=2500)],
            benefit_horizon=0, max_concurrent_migrations_per_host=2)
        plan = planner.plan(snap, h.allow_with_room({'cool': 3000,
                                                      'warm': 9000}))
        self.assertEqual([('a', 'cool'), ('b', 'warm')],
                         [(m.instance, m.destination) for m in plan.moves])


class RefusedAtStartTest(testtools.TestCase):
    """A host where Nova refused the instance at start is barred for it
    alone; the others stay open, and a drain's blocker names the host."""

    def snap(self, *hosts, draining=False, **config):
        return h.snapshot(
            [h.host('src', 95.0, counter=1, draining=draining), *hosts],
            [h.instance('i1', 'src', 2.0, refused=('cool',))],
            benefit_horizon=0, **config)

    def test_a_drain_goes_to_another_host(self):
        plan = planner.plan(self.snap(h.host('cool', 10.0),
                                      h.host('warm', 40.0), draining=True),
                            h.allow_all)
        self.assertEqual(['warm'], [m.destination for m in plan.moves])

    def test_a_drain_with_no_other_host_names_the_refusing_one(self):
        plan = planner.plan(self.snap(h.host('cool', 10.0), draining=True),
                            h.allow_all)
        self.assertEqual((), plan.moves)
        blocker, = plan.drains[0].blockers
        self.assertEqual('no-destination', blocker.rule)
        self.assertEqual('1x refused-at-start (Nova refused it at start on '
                         'cool)', blocker.detail)

    def test_balancing_counts_and_records_the_refusal(self):
        plan = planner.plan(self.snap(h.host('cool', 10.0),
                                      h.host('warm', 30.0)), h.allow_all)
        move, = plan.moves
        self.assertEqual('warm', move.destination)
        refused, = [r for r in move.rejected if r.subject == 'cool']
        self.assertEqual(('refused-at-start', 'Nova refused this move there '
                          'at start (no valid host)'),
                         (refused.rule, refused.detail))

    def test_balancing_with_no_other_host_says_why(self):
        plan = planner.plan(self.snap(h.host('cool', 10.0)), h.allow_all)
        self.assertEqual((), plan.moves)
        self.assertIn('instance i1: 1x refused-at-start', plan.notes[0])

    def test_refused_bars_even_without_the_no_return_rail(self):
        plan = planner.plan(self.snap(h.host('cool', 10.0),
                                      h.host('warm', 30.0), policy='seed'),
                            h.allow_all)
        self.assertEqual(['warm'], [m.destination for m in plan.moves])


class GoalsTest(testtools.TestCase):
    """A drain's flow between periods plans the drains alone."""

    def test_drain_only(self):
        snap = h.snapshot(
            [h.host('hot', 95.0, counter=1), h.host('gone', 20.0,
                                                     draining=True),
             h.host('cool', 10.0), h.host('warm', 30.0)],
            [h.instance('a', 'hot', 2.0), h.instance('b', 'gone', 0.5)],
            benefit_horizon=0, max_concurrent_migrations_per_host=4)
        both = planner.plan(snap, h.allow_all)
        self.assertEqual(['b', 'a'], [m.instance for m in both.moves])
        drain = planner.plan(snap, h.allow_all, goals=(model.DRAIN,))
        self.assertEqual(['b'], [m.instance for m in drain.moves])
        self.assertEqual(['gone'], [d.host for d in drain.drains])
        balance = planner.plan(snap, h.allow_all, goals=(model.BALANCE,))
        self.assertEqual(['a'], [m.instance for m in balance.moves])
        self.assertEqual((), balance.drains)
