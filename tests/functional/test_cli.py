"""Every ``nova-drs`` subcommand against a harness cloud.

The scheduler runs periods in manual mode, as in production; the CLI
handlers then read the same cloud and DRS database.  Only nova.conf parsing
is bypassed (the harness has already configured Nova).
"""

import argparse
import io
import json
import os
import subprocess
import sys

import fixtures
import testtools
from nova import objects

from nova_drs_scheduler import conf
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import history
from nova_drs_scheduler.cli import inspect
from nova_drs_scheduler.cli import recommend
from nova_drs_scheduler.rebalance import executor
from tests.functional.rebalance import base

HOT = {'host1': 90, 'host2': 30, 'host3': 10}


class CLITest(base.RebalanceTestBase):

    # margin 10: host2 (30 %) is then refused by the margin rule, which
    # the explain test reads back.
    DRS = {'automation': 'manual', 'margin': 10.0}

    def setUp(self):
        super().setUp()
        self.busy = self._boot('host1')
        self.idle = self._boot('host1')
        self.loads = {self.busy: 4.5, self.idle: 0.5}
        # One period over the threshold (stabilization is 2): the next
        # period, the dry run's, finds host1 violated.
        self.record = self._period(HOT, self.loads)

    def cli(self, handler, json_output=True, **options):
        """Run a subcommand handler; returns (exit code, output)."""
        stdout = self.useFixture(fixtures.MonkeyPatch(
            'sys.stdout', io.StringIO())).new_value
        args = argparse.Namespace(json=json_output, **options)
        code = handler(args, conf.CONF)
        text = stdout.getvalue()
        return code, json.loads(text) if json_output else text

    def test_plan_shows_the_move_and_exits_1(self):
        code, plan = self.cli(inspect.plan)
        self.assertEqual(errors.ACTION, code)
        [move] = plan['moves']
        self.assertEqual(('host1', 'host3'),
                         (move['source'], move['destination']))
        self.assertEqual('dry-run', move['outcome']['status'])
        # The dry run continued the scheduler's counter (1 -> 2) but did
        # not record anything.
        host1 = next(v for v in plan['hosts'] if v['host'] == 'host1')
        self.assertEqual(2, host1['counter'])
        self.assertEqual(1, len(history.load(conf.CONF)))

    def test_plan_table_for_humans(self):
        code, text = self.cli(inspect.plan, json_output=False)
        self.assertEqual(errors.ACTION, code)
        self.assertIn('Hosts', text)
        self.assertIn('VIOLATED', text)
        self.assertIn('host3', text)

    def test_plan_exits_0_when_nothing_would_move(self):
        self._write_metrics({'host1': 10, 'host2': 10, 'host3': 10},
                            self.loads)
        code, plan = self.cli(inspect.plan)
        self.assertEqual(errors.OK, code)
        self.assertEqual([], plan['moves'])

    def test_explain_host_names_the_rule_of_each_rejection(self):
        code, answer = self.cli(inspect.explain, subject='host1')
        self.assertEqual(errors.ACTION, code)
        self.assertTrue(answer['host']['violated'])
        [move] = answer['moves']
        rejected = {r['subject']: r['rule'] for r in move['rejected']}
        self.assertEqual('margin', rejected['host2'])
        code, answer = self.cli(inspect.explain, subject='host3')
        self.assertEqual(errors.OK, code)
        self.assertFalse(answer['host']['violated'])

    def test_explain_instance(self):
        code, answer = self.cli(inspect.explain, subject=self.busy)
        self.assertEqual(errors.ACTION, code)
        self.assertIn('would move', answer['why'])
        code, answer = self.cli(inspect.explain, subject=self.idle)
        self.assertEqual(errors.OK, code)
        self.assertIn('its host host1 is violated', answer['why'])
        self.assertIn(self.busy, answer['why'])

    def test_explain_unknown_subject_is_a_usage_error(self):
        error = self.assertRaises(errors.CLIError, self.cli,
                                  inspect.explain, subject='nohost')
        self.assertEqual(errors.USAGE, error.code)

    def test_status_lists_hosts_and_blocked_instances(self):
        self.admin_api.post_server_metadata(self.idle,
                                            {'drs_exclude': 'true'})
        code, status = self.cli(inspect.status)
        self.assertEqual(errors.OK, code)
        self.assertEqual({'host1', 'host2', 'host3'},
                         {h['host'] for h in status['hosts']})
        self.assertIn(self.idle, status['blocked'])

    def test_status_lists_an_instance_a_drs_move_left_in_error(self):
        # As Nova leaves it when the destination refuses the instance in
        # an unexpected way: the DRS migration in error, the instance too.
        migration = objects.Migration(
            context=self._admin_context(), instance_uuid=self.busy,
            source_compute='host1', dest_compute='host3', status='accepted',
            migration_type='live-migration', user_id=executor.DRS_USER,
            project_id=executor.DRS_USER)
        migration.create()
        migration.status = 'error'
        migration.save()
        self.admin_api.post_server_action(
            self.busy, {'os-resetState': {'state': 'error'}})
        code, status = self.cli(inspect.status)
        self.assertEqual(errors.OK, code)
        self.assertEqual([self.busy], list(status['attention']))
        self.assertIn(f'DRS migration {migration.uuid} from host1 to host3',
                      status['attention'][self.busy])
        code, text = self.cli(inspect.status, json_output=False)
        self.assertIn('Instances needing attention', text)
        self.assertIn(self.busy, text)

    def test_history_lists_the_periods_and_moves(self):
        second = self._period(HOT, self.loads)
        code, records = self.cli(history.run, limit=10, moves_only=False)
        self.assertEqual(errors.OK, code)
        self.assertEqual([self.record['id'], second['id']],
                         [r['id'] for r in records])
        code, text = self.cli(history.run, json_output=False, limit=10,
                              moves_only=True)
        self.assertIn('recommended', text)

    def test_recommendations_apply_and_dismiss(self):
        self._period(HOT, self.loads)  # Violated: a recommendation.
        code, found = self.cli(recommend.show, all=False)
        self.assertEqual(errors.OK, code)
        [rec] = found
        self.assertEqual((self.busy, 'host1', 'host3', 'pending'), (
            rec['instance'], rec['source'], rec['destination'],
            rec['state']))
        code, text = self.cli(recommend.show, json_output=False, all=False)
        self.assertIn('pending', text)
        code, done = self.cli(recommend.apply, ident=None, all=True)
        self.assertEqual({'approved': [rec['id']]}, done)
        error = self.assertRaises(errors.CLIError, self.cli,
                                  recommend.apply, ident=rec['id'],
                                  all=False)
        self.assertEqual(errors.USAGE, error.code)
        self.assertIn('approved, not pending', str(error))
        code, done = self.cli(recommend.dismiss, ident=rec['id'])
        self.assertEqual({'dismissed': [rec['id']]}, done)
        error = self.assertRaises(errors.CLIError, self.cli,
                                  recommend.dismiss, ident=999)
        self.assertIn('no recommendation 999', str(error))
        code, found = self.cli(recommend.show, all=True)
        self.assertEqual(['dismissed'], [r['state'] for r in found])


class CommandLineTest(testtools.TestCase):
    """The real ``nova-drs`` process: nova.conf parsing and exit codes."""

    def nova_drs(self, *argv, config=''):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'nova.conf')
        with open(path, 'w') as handle:
            handle.write(config)
        return subprocess.run(
            [sys.executable, '-c',
             'from nova_drs_scheduler.cmd.drs import main; main()',
             *argv, '--config-file', path],
            capture_output=True, text=True, timeout=120)

    def test_bad_option_exits_3_naming_it(self):
        run = self.nova_drs('plan', config='[drs]\ncpu_threshold = 500\n')
        self.assertEqual(errors.CONFIG, run.returncode, run.stderr)
        self.assertIn('[drs] cpu_threshold', run.stderr)

    def test_db_sync_then_version_then_history(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'drs.sqlite')
        config = f'[drs_database]\nconnection = sqlite:///{path}\n'
        run = self.nova_drs('history', config=config)
        self.assertEqual(errors.CLOUD, run.returncode, run.stderr)
        self.assertIn('run "nova-drs db sync"', run.stderr)
        run = self.nova_drs('--json', 'db', 'version', config=config)
        self.assertEqual(errors.OK, run.returncode, run.stderr)
        self.assertIsNone(json.loads(run.stdout)['version'])
        run = self.nova_drs('db', 'sync', config=config)
        self.assertEqual(errors.OK, run.returncode, run.stderr)
        run = self.nova_drs('--json', 'db', 'version', config=config)
        versions = json.loads(run.stdout)
        self.assertEqual(versions['head'], versions['version'])
        run = self.nova_drs('--json', 'history', config=config)
        self.assertEqual(errors.OK, run.returncode, run.stderr)
        self.assertEqual([], json.loads(run.stdout))

    def test_unreachable_drs_database_exits_4(self):
        run = self.nova_drs('recommendations', config=(
            '[drs_database]\nconnection = sqlite:////nonexistent/x.db\n'))
        self.assertEqual(errors.CLOUD, run.returncode, run.stderr)
        self.assertIn('[drs_database] connection', run.stderr)

    def test_usage_error_exits_2(self):
        run = self.nova_drs('explain')
        self.assertEqual(errors.USAGE, run.returncode)
