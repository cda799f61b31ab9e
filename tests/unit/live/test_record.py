"""Decision records and their bounded history."""

import json

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

    def test_file_reader_keeps_the_latest_version_of_each(self):
        path = self.useFixture(fixtures.TempDir()).join('history.jsonl')
        first, second = plan_record('i1'), plan_record('i2')
        done = json.loads(json.dumps(first))
        record.set_outcome(done, 'i1', {'status': 'completed'})
        with open(path, 'w') as handle:
            for rec in (first, second, done):
                handle.write(json.dumps(rec) + '\n')
            handle.write('{"cut by a cra')
        read = record.read_file(path)
        self.assertEqual([first['id'], second['id']],
                         [r['id'] for r in read])
        self.assertEqual('completed',
                         read[0]['moves'][0]['outcome']['status'])

    def test_added_move_carries_its_outcome(self):
        rec = plan_record()
        record.add_move(rec, model.Move('i9', 'h1', 'h3', 'approved', {}),
                        {'status': 'starting'})
        self.assertEqual('h3', record.move_of(rec, 'i9')['destination'])
        self.assertEqual('starting',
                         record.move_of(rec, 'i9')['outcome']['status'])
        json.dumps(rec)
