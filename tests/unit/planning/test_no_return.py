"""The no-return rail: never back to a host the instance recently left."""

import datetime
import types

import testtools

from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.simulate import engine
from tests import snapshots as h


def plan(policy, left):
    # 'back' is the coolest host, but the instance left it recently.
    hosts = [h.host('hot', 95.0, counter=3), h.host('back', 10.0),
             h.host('other', 30.0)]
    return planner.plan(
        h.snapshot(hosts, [h.instance('i1', 'hot', 2.0, left=left)],
                   policy=policy), h.allow_all)


class NoReturnPlannerTest(testtools.TestCase):

    def test_balanced_never_returns_and_says_why(self):
        [move] = plan('balanced', ('back',)).moves
        self.assertEqual('other', move.destination)
        rejected = {r.subject: r.rule for r in move.rejected}
        self.assertEqual('no-return', rejected['back'])

    def test_without_history_the_coolest_host_wins(self):
        [move] = plan('balanced', ()).moves
        self.assertEqual('back', move.destination)

    def test_only_host_left_means_no_move_and_a_note(self):
        hosts = [h.host('hot', 95.0, counter=3), h.host('back', 10.0)]
        result = planner.plan(
            h.snapshot(hosts, [h.instance('i1', 'hot', 2.0,
                                          left=('back',))]), h.allow_all)
        self.assertEqual([], list(result.moves))
        self.assertEqual(('host hot: violated, no move: instance i1: 1x '
                          'no-return',), result.notes)

    def test_seed_policy_has_no_memory(self):
        [move] = plan('seed', ('back',)).moves
        self.assertEqual('back', move.destination)


class NoReturnFromMigrationsTest(testtools.TestCase):
    """``left`` from Nova's records (live) and the simulator's log."""

    def test_live_records(self):
        from nova_drs_scheduler.rebalance import executor
        now = datetime.datetime(2026, 11, 23, 12, 0)

        def migration(uuid, source, hours_ago, status='completed'):
            return types.SimpleNamespace(
                uuid=uuid + source, instance_uuid=uuid, status=status,
                source_compute=source, dest_compute='x', user_id='u',
                updated_at=now - datetime.timedelta(hours=hours_ago),
                created_at=now - datetime.timedelta(hours=hours_ago))

        state = executor.migration_state(
            [migration('i1', 'a', 1), migration('i1', 'b', 7),
             migration('i2', 'c', 2, status='error')],
            now, cooldown=600, quarantine=0, no_return=6 * 3600)
        self.assertEqual({'i1': ('a',)}, state.left)

    def test_simulator_log(self):
        blocker = engine._Blocker(cooldown=60, no_return=3600)
        for source, end in (('a', 0.0), ('b', 3000.0)):
            blocker.finished(types.SimpleNamespace(
                vm='vm1', source=source, destination='x', end=end))
        self.assertIn('cooldown', blocker.state({}, 3030.0).blocked['vm1'])
        self.assertEqual({'vm1': ('a', 'b')}, blocker.state({}, 3500.0).left)
        self.assertEqual({}, blocker.state({}, 3500.0).blocked)
        self.assertEqual({'vm1': ('b',)}, blocker.state({}, 3700.0).left)
        self.assertEqual({}, blocker.state({}, 7000.0).left)
