"""Every ``nova-drs`` subcommand against a harness cloud.

The scheduler runs periods in manual mode, as in production; the CLI
handlers then read the same cloud and DRS database.  Only nova.conf parsing
is bypassed (the harness has already configured Nova).
"""

import argparse
import io
import json
import os
import socket
import subprocess
import sys

import fixtures
import requests
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
#: How a refused connection reads in an error: its text in native threads,
#: its errno's name under eventlet's green sockets (Nova 31-32 run the CLI
#: under eventlet; doc/upgrade.md).
REFUSED = ('Connection refused', 'ECONNREFUSED')


class CLITest(base.RebalanceTestBase):

    # margin 10: host2 (30 %) is then refused by the margin rule, which
    # the explain test reads back.
    DRS = {'automation': 'manual', 'margin': 10.0}

    def setUp(self):
        super().setUp()
        self.busy = self._boot('host1', name='busy')
        self.idle = self._boot('host1', name='idle')
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

    def test_explain_takes_a_server_name(self):
        code, answer = self.cli(inspect.explain, subject='busy')
        self.assertEqual(errors.ACTION, code)
        self.assertEqual((self.busy, 'busy'),
                         (answer['instance'], answer['name']))
        code, text = self.cli(inspect.explain, json_output=False,
                              subject='idle')
        self.assertEqual(errors.OK, code)
        # The planner's choice, by UUID and name.
        self.assertIn(f'{self.busy} (busy)', text)

    def test_explain_ambiguous_name_lists_the_servers(self):
        self.api.put_server(self.idle, {'server': {'name': 'busy'}})
        error = self.assertRaises(errors.CLIError, self.cli,
                                  inspect.explain, subject='busy')
        self.assertEqual(errors.USAGE, error.code)
        self.assertIn("2 servers are named 'busy'", str(error))
        self.assertIn(self.busy, str(error))
        self.assertIn(self.idle, str(error))

    def test_plan_table_names_the_server_it_moves(self):
        code, text = self.cli(inspect.plan, json_output=False)
        self.assertEqual(errors.ACTION, code)
        self.assertIn(f'{self.busy[:8]} busy', text)

    def test_placement_failure_is_not_read_as_full_hosts(self):
        """Placement failing mid-period: exit 4, never "no candidate"."""
        from nova.scheduler.client import report
        real_get = report.SchedulerReportClient.get

        def get(client, url, *args, **kwargs):
            if url.startswith('/allocation_candidates'):
                failed = requests.Response()
                failed.status_code = 503
                failed._content = b'placement is down'
                return failed
            return real_get(client, url, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.get', get))
        code = errors.handle('nova-drs plan',
                             lambda: self.cli(inspect.plan)[0])
        self.assertEqual(errors.CLOUD, code)
        # The scheduler's own period is skipped, not planned on it.
        record = self._period(HOT, self.loads)
        self.assertIn('placement did not answer', record['skipped'])
        self.assertEqual([], record['moves'])

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

    def test_status_shows_the_aggressiveness_level_and_overrides(self):
        # The harness sets stabilization 2; the rest follows level 3.
        code, status = self.cli(inspect.status)
        self.assertEqual(errors.OK, code)
        level = status['aggressiveness']
        self.assertEqual(3, level['aggressiveness'])
        self.assertEqual({'value': 2, 'level_value': 1, 'overridden': True},
                         level['options']['stabilization'])
        self.assertEqual(
            {'value': 5.0, 'level_value': 5.0, 'overridden': False},
            level['options']['min_improvement'])
        code, text = self.cli(inspect.status, json_output=False)
        self.assertIn('Aggressiveness 3 (balanced;', text)
        self.assertIn('set in the configuration (level: 1)', text)

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
        self.assertIn('Servers needing attention', text)
        self.assertIn(f'{self.busy[:8]} busy', text)

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
    """The real ``nova-drs`` process: nova.conf parsing and exit codes.

    Every failure is one line on stderr with its documented code.
    """

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def write(self, name, content, mode='w'):
        path = os.path.join(self.tmp, name)
        with open(path, mode) as handle:
            handle.write(content)
        return path

    def run_cli(self, *argv, prelude=''):
        return subprocess.run(
            [sys.executable, '-c',
             prelude + 'from nova_drs_scheduler.cmd.drs import main; main()',
             *argv], capture_output=True, text=True, timeout=180)

    def nova_drs(self, *argv, config=''):
        path = self.write('nova.conf', config)
        return self.run_cli(*argv, '--config-file', path)

    def assertFails(self, code, run, *texts):
        self.assertEqual(code, run.returncode, run.stderr)
        lines = run.stderr.strip().splitlines()
        self.assertEqual(1, len(lines), run.stderr)
        self.assertNotIn('Traceback', run.stderr)
        for text in texts:
            if isinstance(text, tuple):  # any of these wordings
                self.assertTrue(any(t in lines[0] for t in text), lines[0])
            else:
                self.assertIn(text, lines[0])
        self.assertEqual('', run.stdout)

    def test_bad_option_exits_3_naming_it(self):
        run = self.nova_drs('plan', config='[drs]\ncpu_threshold = 500\n')
        self.assertFails(errors.CONFIG, run, '[drs] cpu_threshold')

    def test_no_nova_conf_exits_3(self):
        # As on a host without /etc/nova/nova.conf or ~/.nova/nova.conf.
        run = self.run_cli('plan', prelude=(
            'from oslo_config import cfg; '
            'cfg.find_config_files = lambda *a, **k: []; '))
        self.assertFails(errors.CONFIG, run, 'no nova.conf',
                         '--config-file')

    def test_missing_config_file_exits_3(self):
        run = self.run_cli('status', '--config-file', '/nonexistent.conf')
        self.assertFails(errors.CONFIG, run, '/nonexistent.conf')

    def test_garbage_config_file_exits_3(self):
        path = self.write('garbage.conf', 'this is not\n[an ini\n')
        run = self.run_cli('plan', '--config-file', path)
        self.assertFails(errors.CONFIG, run, f'Failed to parse {path}')

    def test_binary_config_file_exits_3(self):
        path = self.write('binary.conf', bytes(range(256)) * 4, 'wb')
        run = self.run_cli('plan', '--config-file', path)
        self.assertFails(errors.CONFIG, run,
                         f'{path} is not a text (UTF-8) file')

    def test_no_placement_credentials_exits_3(self):
        run = self.nova_drs('plan', config=self.databases(migrated=True))
        self.assertFails(errors.CONFIG, run, 'no credentials for placement',
                         '[placement] auth_type')

    def test_keystone_unreachable_exits_4(self):
        config = self.databases(migrated=True) + (
            '[placement]\nauth_type = password\n'
            f'auth_url = http://127.0.0.1:{closed_port()}/identity\n'
            'username = nova\npassword = x\nproject_name = service\n'
            'user_domain_name = Default\nproject_domain_name = Default\n')
        run = self.nova_drs('plan', config=config)
        self.assertFails(errors.CLOUD, run, 'cannot reach Keystone',
                         REFUSED)

    def test_unreachable_database_exits_4_without_retrying(self):
        url = f'mysql+pymysql://nova:x@127.0.0.1:{closed_port()}'
        config = (f'[api_database]\nconnection = {url}/nova_api\n'
                  f'[database]\nconnection = {url}/nova\n')
        run = self.nova_drs('plan', config=config)
        self.assertFails(errors.CLOUD, run, 'cannot reach the database',
                         REFUSED)
        # The services' 10 retries, 10 s apart, are not the CLI's: with
        # --debug the log shows the retries --db-retries asks for, and
        # none without it.
        run = self.nova_drs('plan', '--debug', config=config)
        self.assertNotIn('attempts left', run.stderr)
        run = self.nova_drs('plan', '--debug', '--db-retries', '2',
                            config=config)
        self.assertIn('SQL connection failed. 2 attempts left', run.stderr)
        self.assertEqual(errors.CLOUD, run.returncode)

    def test_unmigrated_database_exits_5_not_4(self):
        run = self.nova_drs('status', config=self.databases(migrated=False))
        self.assertFails(errors.DB_SCHEMA, run, 'no Nova schema',
                         'no such table', 'db sync')

    def databases(self, migrated: bool) -> str:
        """[api_database] and [database] on SQLite files in the temp dir.

        Migrated: the API schema only (enough to reach placement next).
        """
        api = os.path.join(self.tmp, 'api.sqlite')
        if migrated:
            subprocess.run(
                [sys.executable, '-c',
                 'import sys; from nova.db import migration; '
                 'from nova import config; '
                 'config.parse_args(["x", "--config-file", sys.argv[1]]); '
                 'migration.db_sync(database="api")',
                 self.write('sync.conf',
                            f'[api_database]\nconnection = sqlite:///{api}\n')],
                check=True, capture_output=True, timeout=180)
        return (f'[api_database]\nconnection = sqlite:///{api}\n'
                '[database]\nconnection = sqlite:///'
                f'{os.path.join(self.tmp, "main.sqlite")}\n')

    def test_unexpected_error_exits_70_in_one_line(self):
        run = self.run_cli('history', '--config-file',
                           self.write('nova.conf', ''),
                           prelude=(
                               'from nova_drs_scheduler.cli import history; '
                               'history.load = lambda *args: 1 / 0; '))
        self.assertFails(errors.UNEXPECTED, run, 'unexpected error',
                         'ZeroDivisionError', '--debug')
        run = self.run_cli('--debug', 'history', '--config-file',
                           self.write('nova.conf', ''),
                           prelude=(
                               'from nova_drs_scheduler.cli import history; '
                               'history.load = lambda *args: 1 / 0; '))
        self.assertEqual(errors.UNEXPECTED, run.returncode)
        self.assertIn('Traceback', run.stderr)

    def test_db_sync_then_version_then_history(self):
        path = os.path.join(self.tmp, 'drs.sqlite')
        config = f'[drs_database]\nconnection = sqlite:///{path}\n'
        run = self.nova_drs('history', config=config)
        self.assertFails(errors.DB_SCHEMA, run, 'run "nova-drs db sync"')
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

    def test_usage_error_exits_2_in_one_line(self):
        run = self.nova_drs('explain')
        self.assertFails(errors.USAGE, run, 'nova-drs explain: error:')


def closed_port() -> int:
    """A local TCP port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]
