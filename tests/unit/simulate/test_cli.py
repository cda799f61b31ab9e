"""The command line: a tiny run end to end, and errors that say why."""

import contextlib
import io
import json
import os

import fixtures
import testtools

from nova_drs_scheduler.simulate import cli
from tests import tempfiles


class CliTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.out = self.useFixture(fixtures.TempDir()).path

    def _main(self, *argv):
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(stderr):
            code = cli.main(list(argv))
        return code, stdout.getvalue(), stderr.getvalue()

    def test_synthetic_run_writes_csv_json_png(self):
        code, stdout, _ = self._main(
            '--vms', '60', '--steps', '12', '--output-dir', self.out)
        self.assertEqual(0, code)
        self.assertIn('| balanced |', stdout)
        for ext in ('csv', 'json', 'png'):
            self.assertTrue(os.path.getsize(
                os.path.join(self.out, f'rebalance.{ext}')))
        with open(os.path.join(self.out, 'rebalance.json')) as stream:
            document = json.load(stream)
        self.assertEqual(['none', 'seed', 'balanced'],
                         [r['strategy'] for r in document['results']])
        self.assertEqual(60, document['parameters']['interval'])
        self.assertEqual(60, len(document['results'][0]['stddev']))

    def test_drs_options_come_from_the_config_file(self):
        path = tempfiles.write(self, '[drs]\nrebalance_interval = 300\n'
                               'cpu_threshold = 70\n', '.conf')
        code, _, _ = self._main(
            '--vms', '30', '--steps', '4', '--strategies', 'balanced',
            '--config-file', path, '--output-dir', self.out, '--no-plot')
        self.assertEqual(0, code)
        with open(os.path.join(self.out, 'rebalance.json')) as stream:
            parameters = json.load(stream)['parameters']
        self.assertEqual(300, parameters['interval'])
        self.assertEqual(70.0, parameters['planner_config']['cpu_threshold'])
        self.assertEqual({'threshold': 70.0},
                         parameters['watcher']['workload_balance'])

    def test_bad_trace_is_reported_with_its_line(self):
        path = tempfiles.write(self, 'vm,t0,t1\na,10,oops\n', '.csv')
        code, _, stderr = self._main('--trace', path,
                                     '--output-dir', self.out)
        self.assertEqual(2, code)
        self.assertIn(f"{path}:2: 'oops' is not a number", stderr)

    def test_unknown_strategy_and_impossible_cluster(self):
        code, _, stderr = self._main('--strategies', 'magic', '--vms', '5',
                                     '--steps', '2')
        self.assertEqual(2, code)
        self.assertIn("unknown strategy 'magic'", stderr)
        code, _, stderr = self._main('--hosts', '1', '--vms', '500',
                                     '--steps', '2')
        self.assertEqual(2, code)
        self.assertIn('no host can take', stderr)
