"""The README's demo, in its short CI mode, as a user runs it."""

import json
import subprocess
import sys
import tempfile

import testtools


class DemoTest(testtools.TestCase):

    def test_short_demo_relieves_the_overload(self):
        output_dir = tempfile.mkdtemp(prefix='drs-demo-')
        run = subprocess.run(
            [sys.executable, '-c',
             'from nova_drs_scheduler.cmd.drs import main; main()',
             'demo', '--short', '--json', '--output-dir', output_dir],
            capture_output=True, timeout=300)
        self.assertEqual(0, run.returncode, run.stderr.decode()[-3000:])
        summary = json.loads(run.stdout)
        self.assertEqual(12, summary['periods'])
        self.assertLess(summary['overloaded_host_periods_with_drs'],
                        summary['overloaded_host_periods_without_drs'])
        self.assertGreaterEqual(summary['migrations_completed'], 1)
        self.assertEqual(0, summary['migrations_failed'])
        # Every move left an overloaded host, for a host of its own pool.
        pools = {'host2': {'host1', 'host3', 'host4'},
                 'host7': {'host5', 'host6', 'host8'}}
        for move in summary['migrations_detail']:
            self.assertIn(move['destination'], pools[move['source']], move)
        self.assertTrue(summary['plot'].endswith('.png'))
        with open(summary['plot'], 'rb') as png:
            self.assertEqual(b'\x89PNG', png.read(4))
