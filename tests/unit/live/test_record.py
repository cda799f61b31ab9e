"""Decision records and their bounded history."""

import json
import os

import fixtures
import testtools

from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.rebalance import record


def plan_record(instance='i1'):
    snapshot = model.Snapshot(hosts={}, instances=[],
                              config=model.PlannerConfig())
    plan = model.Plan(
        moves=[model.Move(instance=instance, source='h1', destination='h2',
                          reason='cpu', expected={'source_cpu': 50.0})],
        hosts=[model.HostVerdict(host='h1', violated=True, reason='cpu',
                                 counter=3, window=(90, 95))])
    rec = record.new_record('automatic', snapshot.config)
    record.add_plan(rec, snapshot, plan)
    return rec


class RecordTest(testtools.TestCase):

    def test_plan_copied_with_planned_outcome(self):
        rec = plan_record()
        self.assertEqual('h2', rec['moves'][0]['destination'])
        self.assertEqual({'status': 'planned'}, rec['moves'][0]['outcome'])
        self.assertEqual([90, 95], list(rec['hosts'][0]['window']))
        json.dumps(rec)

    def test_history_is_bounded_and_updates_outcomes(self):
        history = record.History(size=2)
        recs = [plan_record(f'i{n}') for n in range(3)]
        for rec in recs:
            history.add(rec)
        self.assertEqual([r['id'] for r in recs[1:]],
                         [r['id'] for r in history.recent()])
        self.assertIsNone(history.set_outcome(recs[0]['id'], 'i0', {}))
        updated = history.set_outcome(recs[2]['id'], 'i2',
                                      {'status': 'completed'})
        self.assertEqual('completed', updated['moves'][0]['outcome']['status'])

    def test_file_keeps_latest_version_and_is_trimmed(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, 'h')
        history = record.History(size=2, path=path)
        recs = [plan_record(f'i{n}') for n in range(5)]
        for rec in recs:
            history.add(rec)
        history.set_outcome(recs[4]['id'], 'i4', {'status': 'failed'})
        read = record.read_file(path)
        self.assertLessEqual(len(read), 4)
        self.assertEqual(recs[4]['id'], read[-1]['id'])
        self.assertEqual('failed', read[-1]['moves'][0]['outcome']['status'])

    def test_new_history_starts_from_the_file(self):
        path = self.useFixture(fixtures.TempDir()).join('history.jsonl')
        first = record.History(size=2, path=path)
        recs = [plan_record(f'i{n}') for n in range(3)]
        for rec in recs:
            first.add(rec)
        first.set_outcome(recs[2]['id'], 'i2', {'status': 'started',
                                                'migration': 'm2'})
        second = record.History(size=2, path=path)
        self.assertEqual([r['id'] for r in recs[1:]],
                         [r['id'] for r in second.recent()])
        [(record_id, instance, migration, started)] = record.unfinished(
            second.recent())
        self.assertEqual((recs[2]['id'], 'i2', 'm2'),
                         (record_id, instance, migration))
        self.assertTrue(started)
        second.set_outcome(record_id, instance, {'status': 'completed'})
        self.assertEqual([], record.unfinished(
            record.History(size=2, path=path).recent()))

    def test_unreadable_file_starts_empty(self):
        path = self.useFixture(fixtures.TempDir()).path  # a directory
        self.assertEqual([], record.History(size=2, path=path).recent())
