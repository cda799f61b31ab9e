"""The README's demo, run the way the README runs it: ``tools/demo.sh``.

``tools/demo.sh`` prepares tox's demo virtualenv and runs ``nova-drs demo``
in it.  These tests run it from the functional env, which sets
``OS_STDOUT_CAPTURE=1`` as every test env does: the per-period rows
must reach stdout all the same.  A cloud takes a minute or more to build on
a busy machine, so the runs are short.  Each run is a test of its own, so
stestr can put them on different workers (the suite's longest tests).

The demo runs in the ``demo`` env, on the newest Nova whatever env runs
these tests, so CI runs them on Nova 34 only
(``tests/functional/nova33-exclude.txt``).
"""

import json
import os
import re
import subprocess
import tempfile

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
#: tox's env creation on a fresh checkout plus the cloud's start.
TIMEOUT = 1200


def demo(*argv):
    return subprocess.run(
        [os.path.join(ROOT, 'tools', 'demo.sh'), *argv,
         '--output-dir', tempfile.mkdtemp(prefix='drs-demo-')],
        capture_output=True, text=True, timeout=TIMEOUT)


class DemoTest(testtools.TestCase):

    def test_readme_command_rows_summary_and_plot(self):
        self.assertEqual('1', os.environ.get('OS_STDOUT_CAPTURE'))
        run = demo('--periods', '3')
        self.assertEqual(0, run.returncode, run.stderr[-3000:])
        rows = re.findall(r'^\s+(\d+) \|.*\| violated: .* \| moves: ',
                          run.stdout, re.M)
        self.assertEqual(['0', '1', '2'], rows, run.stdout)
        self.assertIn('Summary', run.stdout)
        self.assertIn('longest stretch a host stayed over the threshold',
                      run.stdout)
        plot = re.search(r'plot: (\S+\.png)', run.stdout).group(1)
        with open(plot, 'rb') as png:
            self.assertEqual(b'\x89PNG', png.read(4))

    def test_json_for_scripts_shows_relief(self):
        run = demo('--short', '--json')
        self.assertEqual(0, run.returncode, run.stderr[-3000:])
        summary = json.loads(run.stdout)
        self.assertEqual(12, summary['periods'])
        self.assertLess(summary['overloaded_host_periods_with_drs'],
                        summary['overloaded_host_periods_without_drs'])
        self.assertLess(summary['longest_overload_periods_with_drs'],
                        summary['longest_overload_periods_without_drs'])
        self.assertGreaterEqual(summary['migrations_completed'], 1)
        self.assertEqual(0, summary['migrations_failed'])
        # Every move left an overloaded host, for a host of its own pool.
        pools = {'host2': {'host1', 'host3', 'host4'},
                 'host7': {'host5', 'host6', 'host8'}}
        for move in summary['migrations_detail']:
            self.assertIn(move['destination'], pools[move['source']], move)

    def test_bad_periods_are_refused_in_one_line(self):
        run = demo('--periods', '0')
        self.assertEqual(2, run.returncode)
        self.assertEqual('', run.stdout)
        self.assertIn('nova-drs demo: error: argument --periods: 0 must be '
                      'at least 1', run.stderr)
