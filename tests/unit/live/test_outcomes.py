"""Moves followed to their end: outcomes stored, recommendations ended,
and a previous leader's moves adopted."""

import datetime
import json
from unittest import mock

from nova_drs_scheduler.db import store as db_store
from tests.unit.live import test_rebalancer


class OutcomeTest(test_rebalancer.PeriodTestCase):

    def test_an_ended_move_ends_its_recommendation(self):
        for status, state in (('completed', db_store.COMPLETED),
                              ('failed', db_store.FAILED),
                              ('timeout', db_store.FAILED),
                              ('not_started', db_store.FAILED)):
            self.period.store.reset_mock()
            self.period.telemetry.reset_mock()
            outcome = {'status': test_rebalancer.loaded(status),
                       'error': 'why'}
            self.period.outcomes.save('r1', 'i1', outcome)
            self.period.store.set_outcome.assert_called_once_with(
                'r1', 'i1', outcome)
            self.period.telemetry.moves.assert_called_once_with(status, 1)
            self.period.store.close_started.assert_called_once_with(
                'i1', state, 'why')

    def test_a_started_move_keeps_it_open(self):
        self.period.outcomes.save(
            'r1', 'i1', {'status': test_rebalancer.loaded('started')})
        self.period.store.close_started.assert_not_called()
        self.period.telemetry.moves.assert_called_once_with('started', 1)

    def test_nothing_has_ended_before_the_first_poll(self):
        # A drain's flow plans again only after a move ended.
        self.assertFalse(self.period.outcomes.ended)
        self.period.outcomes.executor.poll.return_value = []
        self.period.outcomes.collect()
        self.assertFalse(self.period.outcomes.ended)
        self.period.outcomes.executor.poll.return_value = [
            ('r1', 'i1', {'status': 'completed'})]
        self.period.outcomes.collect()
        self.assertTrue(self.period.outcomes.ended)

    def test_a_period_reads_what_ended_before_it(self):
        # A period collects first and plans on a fresh read of the cloud:
        # what ended before it needs no flow step of its own.
        self.period.outcomes.executor.poll.return_value = [
            ('r1', 'i1', {'status': 'completed'})]
        self.period.outcomes.following = True  # Nothing to adopt.
        self.period.outcomes.lead()
        self.period.store.set_outcome.assert_called_once_with(
            'r1', 'i1', {'status': 'completed'})
        self.assertFalse(self.period.outcomes.ended)

    def test_collected_outcomes_are_stored(self):
        self.config(migration_timeout=30, group='drs')
        self.period.outcomes.executor.poll.return_value = [
            ('r1', 'i1', {'status': 'completed'})]
        self.period.outcomes.collect()
        self.period.outcomes.executor.poll.assert_called_once_with(30)
        self.period.store.set_outcome.assert_called_once_with(
            'r1', 'i1', {'status': 'completed'})


class AdoptTest(test_rebalancer.PeriodTestCase):

    def test_started_moves_followed_the_others_asked_about(self):
        created = [datetime.datetime(2026, 11, 24, hour) for hour in
                   range(4)]
        # Outcomes as the store reads them: from JSON.
        self.period.store.unfinished.return_value = [
            (record_id, instance, json.loads(outcome), at)
            for record_id, instance, outcome, at in (
                ('r1', 'i1', '{"status": "started", "migration": "m1", '
                 '"time": "2026-11-24T10:30:00"}', created[0]),
                ('r2', 'i2', '{"status": "started", "migration": "m2"}',
                 created[1]),
                ('r3', 'i3', '{"status": "starting"}', created[2]),
                ('r4', 'i4', '{"status": "started", "migration": null}',
                 created[3]),
                # Only a started move is followed, whatever else it has.
                ('r5', 'i5', '{"status": "starting", "migration": "m5"}',
                 created[0]))]
        self.period.outcomes.executor.adopt_starting.return_value = {
            'status': 'not_started'}
        self.period.outcomes.adopt_unfinished()
        self.assertEqual(
            [mock.call('r1', 'i1', 'm1',
                       datetime.datetime(2026, 11, 24, 10, 30,
                                         tzinfo=datetime.timezone.utc)),
             mock.call('r2', 'i2', 'm2', created[1])],
            self.period.outcomes.executor.adopt.call_args_list)
        self.assertEqual(
            [mock.call('r3', 'i3', created[2]),
             mock.call('r4', 'i4', created[3]),
             mock.call('r5', 'i5', created[0])],
            self.period.outcomes.executor.adopt_starting.call_args_list)
        self.assertEqual(
            [mock.call('r3', 'i3', {'status': 'not_started'}),
             mock.call('r4', 'i4', {'status': 'not_started'}),
             mock.call('r5', 'i5', {'status': 'not_started'})],
            self.period.store.set_outcome.call_args_list)
