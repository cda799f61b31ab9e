"""The one rule, shared by the live executor and the simulator, that turns
recent migrations into blocked instances, in-flight counts and the hosts
an instance may not return to."""

import dataclasses

import testtools

from nova_drs_scheduler.planning import recent_moves as rm
from tests import snapshots as h


def move(instance, phase, age, source='h1', destination='h2', by_drs=True,
         ident=''):
    return rm.Move(instance=instance, phase=phase, source=source,
                   destination=destination, age=age, by_drs=by_drs,
                   ident=ident)


def state(*moves, cooldown=600, quarantine=3600, no_return=0):
    return rm.migration_state(moves, cooldown, quarantine, no_return)


class InFlightTest(testtools.TestCase):

    def test_counts_each_host_once_per_migration(self):
        result = state(move('a', rm.IN_FLIGHT, 5),
                       move('b', rm.IN_FLIGHT, 5, source='h3'),
                       move('c', rm.IN_FLIGHT, 5, source='h2'),
                       move('d', rm.IN_FLIGHT, 5, source=None))
        self.assertEqual(4, result.inflight_total)
        # c: source and destination both h2, counted once; d: no source.
        self.assertEqual({'h1': 1, 'h2': 4, 'h3': 1},
                         result.inflight_by_host)

    def test_reason_names_the_hosts_and_the_record_when_known(self):
        result = state(move('a', rm.IN_FLIGHT, 5, ident='m1'),
                       move('b', rm.IN_FLIGHT, 5))
        self.assertEqual({'a': 'migrating h1 -> h2 (migration m1)',
                          'b': 'migrating h1 -> h2'}, result.blocked)

    def test_in_flight_blocks_and_counts_behind_a_newer_record(self):
        result = state(move('a', rm.DONE, 10, source='h2', destination='h1'),
                       move('a', rm.IN_FLIGHT, 100))
        self.assertEqual('migrating h1 -> h2', result.blocked['a'])
        self.assertEqual(1, result.inflight_total)

    def test_other_phases_count_nothing(self):
        # Phases sorting before and after DONE, FAILED and IN_FLIGHT.
        result = state(move('a', 'reverted', 5), move('b', rm.FAILED, 5,
                                                      by_drs=False),
                       move('c', 'confirming', 5), move('d', 'zzz', 5),
                       no_return=3600)
        self.assertEqual((0, {}, {}, {}),
                         (result.inflight_total, result.inflight_by_host,
                          result.blocked, result.left))

    def test_phases_are_compared_by_value(self):
        """A phase spelled by its source (read from a file or a
        database) is the same phase as the constant."""
        result = state(move('a', h.fresh(rm.IN_FLIGHT), 5),
                       move('b', h.fresh(rm.DONE), 5),
                       move('c', h.fresh(rm.FAILED), 5), no_return=3600)
        self.assertEqual(1, result.inflight_total)
        self.assertEqual(['a', 'b', 'c'], sorted(result.blocked))
        self.assertEqual({'b': ('h1',)}, result.left)

    def test_a_move_cannot_be_changed_in_place(self):
        self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                          move('a', rm.DONE, 5), 'age', 0)


class CooldownAndQuarantineTest(testtools.TestCase):

    def test_cooldown_until_exactly_its_end_any_initiator(self):
        self.assertEqual(
            {'a': 'cooldown: moved h1 -> h2 599s ago (cooldown 600s)'},
            state(move('a', rm.DONE, 599.9, by_drs=False)).blocked)
        self.assertEqual({}, state(move('a', rm.DONE, 600)).blocked)

    def test_quarantine_until_exactly_its_end_drs_only(self):
        self.assertEqual(
            {'a': 'quarantine: migration m1 to h2 failed 3599s ago '
                  '(quarantine 3600s)'},
            state(move('a', rm.FAILED, 3599.9, ident='m1')).blocked)
        self.assertEqual({}, state(move('a', rm.FAILED, 3600)).blocked)
        self.assertEqual({}, state(move('a', rm.FAILED, 10,
                                        by_drs=False)).blocked)

    def test_a_failure_is_not_a_cooldown_nor_a_completion_a_quarantine(self):
        self.assertEqual({}, state(move('a', rm.FAILED, 10),
                               quarantine=0).blocked)
        self.assertEqual({}, state(move('a', rm.DONE, 10),
                               cooldown=0).blocked)

    def test_newest_record_decides_whatever_the_order_given(self):
        failed = move('a', rm.FAILED, 300)
        done = move('a', rm.DONE, 30)
        for moves in ((failed, done), (done, failed)):
            self.assertTrue(state(*moves).blocked['a'].startswith(
                'cooldown'))
            self.assertEqual({}, state(*moves, cooldown=10,
                                       quarantine=20).blocked)
        older_done = move('a', rm.DONE, 500)
        newer_failed = move('a', rm.FAILED, 50)
        self.assertTrue(state(older_done, newer_failed).blocked[
            'a'].startswith('quarantine'))

    def test_a_blocked_instance_does_not_stop_the_others(self):
        result = state(move('a', rm.DONE, 10), move('a', rm.DONE, 20),
                       move('b', rm.DONE, 30), move('c', rm.FAILED, 40))
        self.assertEqual(['a', 'b', 'c'], sorted(result.blocked))


class NoReturnTest(testtools.TestCase):

    def test_sources_left_within_the_time_sorted(self):
        result = state(move('a', rm.DONE, 100, source='h9'),
                       move('a', rm.DONE, 7000, source='h3'),
                       move('a', rm.DONE, 3599, source='h1'),
                       move('a', rm.DONE, 3600, source='h8'),
                       move('b', rm.DONE, 10, source=None),
                       move('c', rm.FAILED, 10),
                       move('d', rm.IN_FLIGHT, 10),
                       cooldown=0, no_return=3600)
        self.assertEqual({'a': ('h1', 'h9')}, result.left)

    def test_none_when_disabled(self):
        self.assertEqual({}, state(move('a', rm.DONE, 0.5)).left)


class KindsTest(testtools.TestCase):
    """What blocks each instance, for a drain: it waits for a move in
    flight, ignores a cooldown and reports a quarantine."""

    def test_one_kind_per_blocked_instance(self):
        result = state(move('a', rm.IN_FLIGHT, 5), move('b', rm.DONE, 5),
                       move('c', rm.FAILED, 5), move('d', rm.DONE, 700),
                       move('e', rm.FAILED, 5, by_drs=False),
                       move('f', 'reverted', 5))
        self.assertEqual({'a': rm.IN_FLIGHT, 'b': rm.COOLDOWN,
                          'c': rm.QUARANTINE}, result.kinds)
        self.assertEqual(sorted(result.blocked), sorted(result.kinds))

    def test_kinds_are_distinct(self):
        self.assertEqual(3, len({rm.IN_FLIGHT, rm.COOLDOWN, rm.QUARANTINE}))

    def test_a_move_in_flight_wins_over_a_newer_record(self):
        # Completed 10 s ago (cooldown), yet a move started 100 s ago is
        # still in flight: the drain waits for it.
        result = state(move('a', rm.DONE, 10), move('a', rm.IN_FLIGHT, 100))
        self.assertEqual({'a': rm.IN_FLIGHT}, result.kinds)
        result = state(move('a', rm.FAILED, 10), move('a', rm.IN_FLIGHT, 100))
        self.assertEqual({'a': rm.IN_FLIGHT}, result.kinds)

    def test_the_newest_blocking_record_gives_the_kind(self):
        self.assertEqual({'a': rm.COOLDOWN}, state(
            move('a', rm.FAILED, 300), move('a', rm.DONE, 30)).kinds)
        self.assertEqual({'a': rm.QUARANTINE}, state(
            move('a', rm.DONE, 500), move('a', rm.FAILED, 50)).kinds)
        # A cooldown over, a quarantine still on: quarantined.
        self.assertEqual({'a': rm.QUARANTINE}, state(
            move('a', rm.DONE, 30), move('a', rm.FAILED, 300),
            cooldown=10).kinds)

    def test_nothing_blocking_is_no_kind(self):
        self.assertEqual({}, state(move('a', rm.DONE, 600),
                                   move('b', rm.FAILED, 3600),
                                   no_return=7200).kinds)
        self.assertEqual({}, state().kinds)
