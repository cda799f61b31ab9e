"""The records of an old ``[drs] history_file``, as the database imports
them."""

import json

import fixtures
import testtools

from nova_drs_scheduler.db import history_file
from nova_drs_scheduler.rebalance import record
from tests.unit.live.test_record import plan_record


class HistoryFileTest(testtools.TestCase):

    def test_file_reader_keeps_the_latest_version_of_each(self):
        path = self.useFixture(fixtures.TempDir()).join('history.jsonl')
        first, second = plan_record('i1'), plan_record('i2')
        done = json.loads(json.dumps(first))
        record.set_outcome(done, 'i1', {'status': 'completed'})
        with open(path, 'w') as handle:
            for rec in (first, second, done):
                handle.write(json.dumps(rec) + '\n')
            handle.write('{"cut by a cra')
        read = history_file.read(path)
        self.assertEqual([first['id'], second['id']],
                         [r['id'] for r in read])
        self.assertEqual('completed',
                         read[0]['moves'][0]['outcome']['status'])

    def test_file_lines_that_are_not_objects_are_skipped(self):
        path = self.useFixture(fixtures.TempDir()).join('history.jsonl')
        rec = plan_record()
        with open(path, 'w') as handle:
            handle.write('{"cut\n[1, 2]\n"text"\n' + json.dumps(rec) + '\n\n')
        self.assertEqual([rec['id']], [r['id'] for r in
                                       history_file.read(path)])
