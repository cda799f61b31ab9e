"""Where a drain stands: its state, its stored report and the time left."""

import datetime

import testtools

from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import model

T0 = datetime.datetime(2026, 11, 1, 12, 0, 0)


def rejection(subject, rule='blocked', detail=''):
    return model.Rejection(subject, rule, detail)


class StateTest(testtools.TestCase):

    def test_empty_host_is_drained_whatever_else_it_reports(self):
        self.assertEqual(drain.DRAINED, drain.state(model.Drain('m', 0)))
        self.assertEqual(drain.DRAINED, drain.state(model.Drain(
            'm', 0, blockers=(rejection('i1'),))))

    def test_draining_while_a_move_is_planned_or_waits(self):
        self.assertEqual(drain.DRAINING, drain.state(model.Drain(
            'm', 2, planned=('i1',), blockers=(rejection('i2'),))))
        self.assertEqual(drain.DRAINING, drain.state(model.Drain(
            'm', 2, waiting=(rejection('i1'),), blockers=(rejection('i2'),))))
        self.assertEqual(drain.DRAINING, drain.state(model.Drain(
            'm', 1, planned=('i1',), waiting=(rejection('i2'),))))

    def test_blocked_when_what_is_left_can_only_stay(self):
        self.assertEqual(drain.BLOCKED, drain.state(model.Drain(
            'm', 1, blockers=(rejection('i1'),))))
        # Nothing planned, waiting or blocking, yet instances left.
        self.assertEqual(drain.BLOCKED, drain.state(model.Drain('m', 3)))

    def test_states(self):
        self.assertEqual(('draining', 'drained', 'blocked'), drain.STATES)


class ProgressTest(testtools.TestCase):

    def test_counts_and_each_instance_with_its_name_and_reason(self):
        report = drain.progress(model.Drain(
            'm', 4, planned=('p1', 'p2'),
            waiting=(rejection('w1', 'limit:per-draining-host'),
                     rejection('w2', 'blocked', 'migrating m -> a')),
            blockers=(rejection('b1', 'blocked', 'opted out'),
                      rejection('b2', 'no-destination', ''))),
            {'w1': 'web', 'b1': 'db', 'p1': 'planned-name'}, 'rec-1')
        self.assertEqual({
            'instances': 4, 'planned': ['p1', 'p2'],
            'waiting': [
                {'instance': 'w1', 'name': 'web',
                 'rule': 'limit:per-draining-host',
                 'reason': 'limit:per-draining-host'},
                {'instance': 'w2', 'name': '', 'rule': 'blocked',
                 'reason': 'migrating m -> a'}],
            'blockers': [
                {'instance': 'b1', 'name': 'db', 'rule': 'blocked',
                 'reason': 'opted out'},
                {'instance': 'b2', 'name': '', 'rule': 'no-destination',
                 'reason': 'no-destination'}],
            'record': 'rec-1'}, report)

    def test_drained_host(self):
        self.assertEqual(
            {'instances': 0, 'planned': [], 'waiting': [], 'blockers': [],
             'record': 'r'},
            drain.progress(model.Drain('m', 0), {}, 'r'))


class TimeLeftTest(testtools.TestCase):

    def at(self, seconds):
        return T0 + datetime.timedelta(seconds=seconds)

    def test_seconds_per_instance_moved_times_those_left(self):
        # 120 s for 4 instances: 30 s each, 3 left.
        self.assertEqual(90.0, drain.time_left(T0, self.at(120), 4, 3))
        self.assertEqual(7.5, drain.time_left(T0, self.at(5), 2, 3))

    def test_nothing_left_is_no_time(self):
        self.assertEqual(0.0, drain.time_left(T0, self.at(60), 2, 0))

    def test_unknown_before_the_first_move_ends_or_without_a_count(self):
        self.assertIsNone(drain.time_left(T0, self.at(60), 0, 3))
        self.assertIsNone(drain.time_left(T0, self.at(60), 0, None))
        self.assertIsNone(drain.time_left(T0, self.at(60), 2, None))

    def test_a_request_time_ahead_of_now_is_just_made(self):
        # The database's clock ahead of this one: no negative time.
        self.assertEqual(0.0, drain.time_left(T0, self.at(-30), 2, 5))
        self.assertEqual(0.25, drain.time_left(T0, self.at(0.5), 2, 1))
