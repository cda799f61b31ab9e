"""Recommend-and-approve against a real DRS database (SQLite): which open
recommendations expire, which approved ones start, wait or fail, and the
snapshot the planner then sees."""


import testtools

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import recommendations as recs
from tests import snapshots as h
from tests.unit.db import test_store


class RecommendationsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.store = test_store.sqlite_store(self)
        migration.sync(self.store.engine)
        self.hosts = [h.host('hot', 95.0, counter=2), h.host('h2', 20.0),
                      h.host('h3', 30.0)]
        self.instances = [h.instance(f'i{n}', 'hot', 1.0) for n in range(4)]

    def snap(self, **kwargs):
        return h.snapshot(self.hosts, self.instances, **kwargs)

    def recommend(self, instance, destination='h2', source='hot',
                  approve=True):
        ident = self.store.recommend('r1', {
            'instance': instance, 'source': source,
            'destination': destination, 'reason': 'cpu 95%'})
        if approve:
            self.store.transition(ident, db_store.APPROVED)
        return ident

    def states(self):
        return {r['id']: (r['state'], r['detail'])
                for r in self.store.recommendations()}

    def test_revalidate_expires_only_what_no_longer_holds(self):
        self.hosts.append(h.host('cool', 10.0))
        self.instances[1] = h.instance('i1', 'h2', 1.0)
        self.instances[2] = h.instance('i2', 'cool', 1.0)
        kept = self.recommend('i0', approve=False)
        moved = self.recommend('i1')
        cured = self.recommend('i2', source='cool', approve=False)
        gone = self.recommend('i9', approve=False)
        unknown_source = self.recommend('i3', source='nowhere')
        self.instances[3] = h.instance('i3', 'nowhere', 1.0)
        dismissed = self.recommend('i4', approve=False)
        self.store.transition(dismissed, db_store.DISMISSED)
        recs.revalidate(self.store, self.snap())
        self.assertEqual({
            kept: ('pending', None),
            moved: ('expired', 'the instance is no longer on hot'),
            cured: ('expired', 'cool is no longer over its threshold'),
            gone: ('expired', 'the instance is no longer on hot'),
            unknown_source: ('expired',
                             'nowhere is no longer over its threshold'),
            dismissed: ('dismissed', None)}, self.states())

    def test_approved_becomes_a_move_through_nova_filters(self):
        seen = []

        def candidates(instance, snapshot):
            seen.append((instance.uuid, snapshot))
            return h.allow_all(instance, snapshot)

        ident = self.recommend('i0')
        self.recommend('i1', approve=False)
        snapshot = self.snap()
        self.assertEqual(
            [(ident, model.Move(
                instance='i0', source='hot', destination='h2',
                reason=f'approved recommendation {ident}: cpu 95%',
                expected={}, memory_mb=1000))],
            recs.approved(self.store, snapshot, candidates))
        self.assertEqual([('i0', snapshot)], seen)
        self.assertEqual('approved', self.states()[ident][0])

    def test_broken_rails_fail_the_recommendation_with_the_reason(self):
        self.hosts += [h.host('down', 10.0, schedulable=False),
                       h.host('out', 10.0, excluded=True),
                       h.host('busy', 85.0, counter=1),
                       h.host('blind', None), h.host('back', 10.0)]
        self.instances += [h.instance('blocked', 'hot', 1.0,
                                      blocked='cooldown: moved'),
                           h.instance('left', 'hot', 1.0, left=('back',))]
        cases = {
            ('blocked', 'h2'): 'instance not movable now: cooldown: moved',
            ('i0', 'nowhere'): 'nowhere is not a schedulable DRS host',
            ('i1', 'down'): 'down is not a schedulable DRS host',
            ('i2', 'out'): 'out is not a schedulable DRS host',
            ('i3', 'busy'): 'busy is over its threshold or not measured',
            ('left', 'blind'): 'blind is over its threshold or not measured',
        }
        idents = {self.recommend(instance, destination): why
                  for (instance, destination), why in cases.items()}
        snapshot = self.snap(max_migrations_per_period=10,
                             max_concurrent_migrations=10,
                             max_concurrent_migrations_per_host=10)
        self.assertEqual([], recs.approved(self.store, snapshot,
                                           h.allow_all))
        self.assertEqual({ident: ('failed', why)
                          for ident, why in idents.items()}, self.states())
        self.store.transition(None, db_store.DISMISSED, (db_store.FAILED,))
        back = self.recommend('left', 'back')
        self.assertEqual([], recs.approved(self.store, snapshot,
                                           h.allow_all))
        self.assertEqual(
            ('failed', 'the instance left back recently (no_return_time)'),
            self.states()[back])

    def test_filters_refusal_names_their_rules_for_the_destination(self):
        first = self.recommend('i0', 'h2')
        second = self.recommend('i1', 'h3')
        refusing = h.allow_except({'h2': 'AffinityFilter'})
        chosen = recs.approved(
            self.store, self.snap(), lambda i, s: model.Candidates(
                allowed=refusing(i, s).allowed,
                rejected=[model.Rejection('h2', 'AffinityFilter'),
                          model.Rejection('h3', 'RamFilter'),
                          model.Rejection('a-host', 'CoreFilter'),
                          model.Rejection('h2', 'DRSPoolFilter')]))
        self.assertEqual([second], [ident for ident, _ in chosen])
        self.assertEqual(
            ('failed', 'h2 refused by AffinityFilter, DRSPoolFilter'),
            self.states()[first])
        self.assertEqual('approved', self.states()[second][0])
        self.assertEqual([], recs.approved(
            self.store, self.snap(),
            lambda i, s: model.Candidates(allowed=['h2'])))
        self.assertEqual(('failed', 'h3 refused by the scheduler'),
                         self.states()[second])

    def test_limits_hold_approved_ones_for_a_later_period(self):
        for n in range(3):
            self.recommend(f'i{n}', 'h2' if n < 2 else 'h3')
        # Per host: one at a time on h2 (source hot has room for two).
        chosen = recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=1,
            inflight_by_host={'hot': 0}), h.allow_all)
        self.assertEqual(['i0'], [m.instance for _, m in chosen])
        chosen = recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=1), h.allow_all)
        self.assertEqual(['i0'], [m.instance for _, m in chosen])
        chosen = recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=2), h.allow_all)
        self.assertEqual(['i0', 'i1'], [m.instance for _, m in chosen])
        chosen = recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=3,
            max_migrations_per_period=2), h.allow_all)
        self.assertEqual(['i0', 'i1'], [m.instance for _, m in chosen])
        chosen = recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=3,
            max_migrations_per_period=3), h.allow_all)
        self.assertEqual(['i0', 'i1', 'i2'], [m.instance for _, m in chosen])
        # Migrations already in flight count on both hosts and in total.
        chosen = recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=2,
            max_migrations_per_period=3, inflight_by_host={'h2': 1}),
            h.allow_all)
        self.assertEqual(['i0', 'i2'], [m.instance for _, m in chosen])
        chosen = recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=3,
            max_migrations_per_period=3, max_concurrent_migrations=4,
            inflight_total=2), h.allow_all)
        self.assertEqual(['i0', 'i1'], [m.instance for _, m in chosen])
        self.assertEqual([], recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=2,
            inflight_by_host={'hot': 2}), h.allow_all))
        # More in flight than the limits allow (an operator lowered them
        # while migrations ran): nothing more starts.
        self.assertEqual([], recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=2,
            inflight_by_host={'hot': 3}), h.allow_all))
        self.assertEqual([], recs.approved(self.store, self.snap(
            max_concurrent_migrations_per_host=3,
            max_concurrent_migrations=4, inflight_total=5), h.allow_all))
        self.assertEqual({'approved'}, {state for state, _ in
                                        self.states().values()})

    def test_large_period_limit_is_counted_exactly(self):
        """Above 256 the count and the limit are distinct int objects."""
        self.hosts = [h.host('hot', 95.0, counter=2), h.host('h2', 20.0)]
        self.instances = [h.instance(f'i{n}', 'hot', 1.0)
                          for n in range(301)]
        for inst in self.instances:
            self.recommend(inst.uuid, approve=False)
        self.store.transition(None, db_store.APPROVED)
        chosen = recs.approved(self.store, self.snap(
            max_migrations_per_period=300, max_concurrent_migrations=1000,
            max_concurrent_migrations_per_host=1000), h.allow_all)
        self.assertEqual(300, len(chosen))

    def test_reserve_counts_the_approved_moves_as_in_flight(self):
        moves = [(1, model.Move('i0', 'hot', 'h2', 'r', {})),
                 (2, model.Move('i1', 'hot', 'h3', 'r', {}))]
        snapshot = self.snap(inflight_by_host={'h3': 1, 'h9': 1},
                             inflight_total=3)
        reserved = recs.reserve(snapshot, moves)
        self.assertEqual({'hot': 2, 'h2': 1, 'h3': 2, 'h9': 1},
                         reserved.inflight_by_host)
        self.assertEqual(5, reserved.inflight_total)
        self.assertEqual(['approved move starting'] * 2 + [None] * 2,
                         [i.blocked for i in reserved.instances])
        self.assertEqual(list(snapshot.instances[2:]),
                         list(reserved.instances[2:]))
        self.assertEqual({'h3': 1, 'h9': 1}, snapshot.inflight_by_host)
