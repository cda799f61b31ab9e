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

    def test_migration_model_defaults_to_the_planners_and_is_overridden(
            self):
        path = tempfiles.write(self, '[drs]\nmigration_bandwidth = 2000\n'
                               'migration_dirty_rate = 16\n', '.conf')
        for extra, bandwidth, dirty in (
                ((), 2000.0, 16.0),
                (('--bandwidth-mbps', '500', '--dirty-rate', '0'), 500.0,
                 0.0)):
            setup = cli.prepare(cli.parser().parse_args(
                ['--vms', '10', '--steps', '2', '--config-file', path]
                + list(extra)))
            self.assertEqual((bandwidth, dirty),
                             (setup.spec.bandwidth_mbps,
                              setup.spec.dirty_mib_per_core))
        setup = cli.prepare(cli.parser().parse_args(['--vms', '10']))
        self.assertEqual((10000.0, 64.0), (setup.spec.bandwidth_mbps,
                                           setup.spec.dirty_mib_per_core))
        self.assertEqual(10, setup.settings.relief_check_periods)

    def test_the_tables_new_columns(self):
        code, stdout, _ = self._main(
            '--vms', '60', '--steps', '6', '--strategies', 'none,balanced',
            '--output-dir', self.out, '--no-plot')
        self.assertEqual(0, code)
        self.assertIn('| DRS-caused | worst overload % | unserved core-min |'
                      ' migrations | failed | GB moved | instance-min in '
                      'migration | ping-pongs | relief checked | relief '
                      'held % |', stdout)
        # Nothing moved: no relief checked, none held.
        self.assertRegex(stdout, r'\| none \|( [^|]+ \|){9} 0 \| - \|')
        with open(os.path.join(self.out, 'rebalance.json')) as stream:
            document = json.load(stream)
        none = document['results'][0]
        self.assertIsNone(none['relief_held_percent'])
        self.assertEqual(0, none['drs_caused_overloaded_host_periods'])
        self.assertEqual(30, len(none['drs_caused_hosts']))

    def test_rolling_maintenance_adds_the_drain_columns(self):
        code, stdout, _ = self._main(
            '--vms', '60', '--steps', '6', '--hosts', '3', '--strategies',
            'balanced', '--maintenance', 'rolling', '--work-time', '60',
            '--output-dir', self.out, '--no-plot')
        self.assertEqual(0, code)
        self.assertIn('| drain min mean |', stdout)
        with open(os.path.join(self.out, 'rebalance.json')) as stream:
            document = json.load(stream)
        self.assertEqual({'hosts': [], 'start': 0.0, 'work_time': 60.0,
                          'deadline': 3600.0},
                         document['parameters']['maintenance'])
        result, = document['results']
        self.assertEqual('host-0', result['drains'][0]['host'])
        self.assertEqual(len(result['drains']), result['hosts_drained'])
        with open(os.path.join(self.out, 'rebalance.csv')) as stream:
            self.assertIn('left_behind', stream.readline())

    def test_no_maintenance_no_drain_columns(self):
        code, stdout, _ = self._main(
            '--vms', '30', '--steps', '2', '--strategies', 'none',
            '--output-dir', self.out, '--no-plot')
        self.assertEqual(0, code)
        self.assertNotIn('drain', stdout)
        with open(os.path.join(self.out, 'rebalance.json')) as stream:
            document = json.load(stream)
        self.assertIsNone(document['parameters']['maintenance'])
        self.assertNotIn('drains', document['results'][0])

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
        self.assertIn('watcher_host_maintenance', stderr)
        code, _, stderr = self._main('--hosts', '1', '--vms', '500',
                                     '--steps', '2')
        self.assertEqual(2, code)
        self.assertIn('no host can take', stderr)


class InputTest(testtools.TestCase):
    """Bad input: exit 2, one line on stderr, nothing run or written."""

    def setUp(self):
        super().setUp()
        self.out = self.useFixture(fixtures.TempDir()).path

    def refused(self, *argv):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), \
                contextlib.redirect_stdout(io.StringIO()):
            try:
                code = cli.main(list(argv))
            except SystemExit as exc:
                code = exc.code
        lines = stderr.getvalue().strip().splitlines()
        self.assertEqual(2, code, stderr.getvalue())
        self.assertEqual(1, len(lines), stderr.getvalue())
        return lines[0]

    def test_zero_or_negative_sizes_are_refused(self):
        for option, value in (('--host-vcpus', '0'), ('--target-load', '0'),
                              ('--cpu-allocation-ratio', '0'),
                              ('--ram-allocation-ratio', '-1'),
                              ('--host-ram-mb', '0'), ('--hosts', '0'),
                              ('--steps', '0'), ('--steps', '-1'),
                              ('--step-seconds', '0'), ('--vms', '0'),
                              ('--bandwidth-mbps', '0'),
                              ('--dirty-rate', '-1'),
                              ('--target-load', 'nan'),
                              ('--ping-pong-periods', '0'),
                              ('--step-hours', '-1'), ('--step-hours', ','),
                              ('--step-hours', '8,x'),
                              ('--step-share', '1.5'), ('--days', '0')):
            line = self.refused(option, value, '--output-dir', self.out)
            self.assertIn(f'argument {option}', line)
        self.assertEqual([], os.listdir(self.out))

    def test_days_and_steps_together_are_refused(self):
        line = self.refused('--days', '2', '--steps', '3', '--output-dir',
                            self.out)
        self.assertIn('argument --steps: not allowed with argument --days',
                      line)

    def test_bad_maintenance_is_refused(self):
        line = self.refused('--maintenance', 'drain', '--maintenance-host',
                            'host-9', '--hosts', '3', '--vms', '10',
                            '--steps', '2', '--output-dir', self.out)
        self.assertIn('--maintenance-host host-9: no such host (the hosts '
                      'are host-0 to host-2)', line)
        for option, value in (('--maintenance-start', '-1'),
                              ('--work-time', '-1'),
                              ('--drain-deadline', '0')):
            line = self.refused(option, value, '--output-dir', self.out)
            self.assertIn(f'argument {option}', line)

    def test_absurd_cluster_is_refused_at_once(self):
        line = self.refused('--hosts', '100000000')
        self.assertIn(f'must be at most {cli.MAX_HOSTS}', line)
        line = self.refused('--target-load', '0.0001', '--steps', '2',
                            '--vms', '2000', '--output-dir', self.out)
        self.assertIn(f'more than {cli.MAX_HOSTS}', line)

    def test_unwritable_output_dir_is_refused_before_the_run(self):
        blocker = tempfiles.write(self, 'a file, not a directory')
        line = self.refused('--output-dir', os.path.join(blocker, 'out'))
        self.assertIn('not writable', line)
        read_only = os.path.join(self.out, 'ro')
        os.mkdir(read_only, 0o500)
        if os.access(read_only, os.W_OK):
            # root writes anywhere; the file case above still holds.
            return
        self.assertIn('not writable', self.refused('--output-dir', read_only))


class DaysTest(testtools.TestCase):
    """--days: a generated trace of several days."""

    def test_days_of_steps_and_the_description(self):
        args = cli.parser().parse_args(['--shape', 'day-night', '--days',
                                        '3', '--vms', '10'])
        self.assertEqual(3 * 288, len(cli.prepare(args).trace.steps))
        self.assertEqual('synthetic day-night (seed 1) over 3 days',
                         cli.describe(args))
        one = cli.parser().parse_args(['--days', '1', '--vms', '10'])
        self.assertEqual(288, len(cli.prepare(one).trace.steps))
        self.assertEqual('synthetic planetlab (seed 1)', cli.describe(one))

    def test_days_with_a_trace_file_is_refused(self):
        path = tempfiles.write(self, 'vm-0,1,2,3\n')
        args = cli.parser().parse_args(['--trace', path, '--days', '2'])
        error = self.assertRaises(ValueError, cli.prepare, args)
        self.assertIn('--days is for a synthetic trace', str(error))


class StepsShapeTest(testtools.TestCase):
    """--shape steps and its options reach the trace; sizing shows."""

    def _args(self, *argv):
        return cli.parser().parse_args(['--shape', 'steps', *argv])

    def test_a_day_of_steps_at_any_step_length(self):
        args = self._args('--step-seconds', '60', '--vms', '20',
                          '--step-hours', '1', '--step-share', '0.5')
        trace = cli.prepare(args).trace
        self.assertEqual((1440, 60), (len(trace.steps), trace.step_seconds))
        # Half the VMs step up at 01:00 (minute 60) and stay.
        risen = [vm for vm in range(20) if trace.steps[60][vm] >= 79.0]
        self.assertEqual(10, len(risen))
        self.assertTrue(all(trace.steps[-1][vm] >= 79.0 for vm in risen))

    def test_the_description_names_a_warm_sizing(self):
        self.assertEqual('synthetic steps (seed 1)',
                         cli.describe(self._args()))
        self.assertEqual('synthetic steps (seed 1), sized for 70 % mean CPU',
                         cli.describe(self._args('--target-load', '70')))
        self.assertEqual('synthetic steps (seed 1)',
                         cli.describe(self._args('--hosts', '3')))

