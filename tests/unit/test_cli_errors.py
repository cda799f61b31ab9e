"""The CLI's exit codes, failure lines, version, extras and tables."""

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import types
from importlib import metadata

import sqlalchemy
import testtools
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import engines

from nova_drs_scheduler import extras
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import history
from nova_drs_scheduler.cli import inspect
from nova_drs_scheduler.cli import output
from nova_drs_scheduler.db import history_file
from nova_drs_scheduler.db import migration
from tests import tempfiles


class ClassifyTest(testtools.TestCase):
    """Real library exceptions map to the documented codes."""

    def code(self, exc):
        error = errors.classify(exc)
        return error.code if error else None

    def test_config_files(self):
        self.assertEqual(errors.CONFIG, self.code(
            cfg.ConfigFilesNotFoundError(['/etc/nova/nova.conf'])))
        self.assertEqual(errors.CONFIG, self.code(
            cfg.ConfigFileParseError('/x.conf', 'no = found')))
        self.assertEqual(errors.CONFIG, self.code(
            extras.MissingExtraError('needs [demo]')))

    def test_keystone_and_placement(self):
        self.assertEqual(errors.CONFIG,
                         self.code(ks_exc.MissingAuthPlugin()))
        self.assertEqual(errors.CONFIG, self.code(ks_exc.Unauthorized()))
        self.assertEqual(errors.CLOUD,
                         self.code(ks_exc.ConnectFailure('refused')))
        self.assertEqual(errors.CLOUD,
                         self.code(ks_exc.DiscoveryFailure('no version')))

    def test_database_unmigrated_is_not_unreachable(self):
        engine = engines.create_engine('sqlite://')
        with engine.connect() as connection:
            unmigrated = self.assertRaises(
                db_exc.DBError, connection.execute,
                sqlalchemy.text('SELECT * FROM cell_mappings'))
        self.assertEqual(errors.DB_SCHEMA, self.code(unmigrated))
        self.assertIn('db sync', str(errors.classify(unmigrated)))
        self.assertEqual(errors.CLOUD, self.code(
            db_exc.DBConnectionError(Exception('refused'))))
        self.assertEqual(errors.CONFIG, self.code(
            db_exc.CantStartEngineError('No sql_connection parameter')))

    def test_drs_database_unmigrated_is_5_naming_its_sync(self):
        engine = engines.create_engine('sqlite://')
        unmigrated = self.assertRaises(migration.NotMigratedError,
                                       migration.check, engine)
        self.assertEqual(errors.DB_SCHEMA, self.code(unmigrated))
        self.assertIn('nova-drs db sync', str(errors.classify(unmigrated)))

    def test_a_bug_is_unclassified(self):
        self.assertIsNone(errors.classify(KeyError('time')))


class HandleTest(testtools.TestCase):

    def handle(self, run, debug=False):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = errors.handle('nova-drs plan', run, debug)
        return code, stderr.getvalue()

    def test_known_failure_is_one_line_with_its_code(self):
        def run():
            raise ks_exc.MissingAuthPlugin()
        code, text = self.handle(run)
        self.assertEqual(errors.CONFIG, code)
        self.assertEqual(['nova-drs plan: no credentials for placement: set '
                          '[placement] auth_type and its options in '
                          'nova.conf'], text.splitlines())

    def test_unexpected_failure_is_70_never_0_or_1(self):
        def run():
            return {}['time']
        code, text = self.handle(run)
        self.assertEqual(errors.UNEXPECTED, code)
        self.assertEqual(1, len(text.splitlines()))
        self.assertIn("unexpected error: KeyError: 'time'", text)
        code, text = self.handle(run, debug=True)
        self.assertEqual(errors.UNEXPECTED, code)
        self.assertIn('Traceback', text)

    def test_codes_are_distinct(self):
        codes = [code for code, _ in errors.CODES]
        self.assertEqual(len(codes), len(set(codes)))


class VersionTest(testtools.TestCase):

    def test_scheduler_version_is_ours_with_novas(self):
        run = subprocess.run(
            [sys.executable, '-c', 'import sys; sys.argv[0] = "x"; '
             'from nova_drs_scheduler.cmd.scheduler import main; main()',
             '--version'], capture_output=True, text=True, timeout=120)
        self.assertEqual(0, run.returncode, run.stderr)
        self.assertEqual(
            f'nova-drs-scheduler {metadata.version("nova-drs-scheduler")} '
            f'(nova {metadata.version("nova")})', run.stdout.strip())
        self.assertNotEqual(metadata.version('nova-drs-scheduler'),
                            metadata.version('nova'))


class ExtrasTest(testtools.TestCase):

    def test_missing_module_names_the_extra(self):
        error = self.assertRaises(
            extras.MissingExtraError, extras.load, 'demo',
            'no_such_module_for_the_demo', 'the demo')
        self.assertIn('pip install "nova-drs-scheduler[demo]"', str(error))
        self.assertIn("'no_such_module_for_the_demo'", str(error))

    def test_a_broken_import_of_ours_is_not_an_extra(self):
        self.assertRaises(ModuleNotFoundError, extras.load, 'demo',
                          'nova_drs_scheduler.no_such_module', 'the demo')

    def test_demo_without_matplotlib_says_which_extra(self):
        run = subprocess.run(
            [sys.executable, '-c', 'import sys; sys.modules["matplotlib"] '
             '= None; from nova_drs_scheduler.cmd.drs import main; main()',
             'demo', '--short'], capture_output=True, text=True,
            timeout=180)
        self.assertEqual(errors.CONFIG, run.returncode, run.stderr)
        self.assertIn('nova-drs demo: the demo needs the Python module '
                      "'matplotlib'", run.stderr)
        self.assertIn('nova-drs-scheduler[demo]', run.stderr)

    def test_setup_cfg_declares_the_extras(self):
        parser = __import__('configparser').ConfigParser()
        parser.read(os.path.join(os.path.dirname(__file__), '..', '..',
                                 'setup.cfg'))
        declared = parser['extras']
        for extra, module in (('demo', 'oslotest'), ('demo', 'placement'),
                              ('demo', 'matplotlib'),
                              ('simulate', 'matplotlib'),
                              ('prometheus', 'requests')):
            self.assertIn(extra, declared)
            importlib.import_module(module)
        self.assertIn('matplotlib', declared['simulate'])


class TablesTest(testtools.TestCase):

    def test_hosts_sort_naturally(self):
        self.assertEqual(['host1', 'host2', 'host10', 'hostb'],
                         sorted(['host10', 'hostb', 'host2', 'host1'],
                                key=output.natural))
        record = {'hosts': [{'host': h} for h in ('host10', 'host2')]}
        _title, _headers, rows = inspect._hosts_table(record)
        self.assertEqual(['host2', 'host10'], [row[0] for row in rows])

    def test_hosts_needed_with_the_reserve_and_energy_saved_by_pool(self):
        pool = {'pool': None, 'level': 'automatic', 'band': [45.0, 81.0],
                'on': ['h1', 'h2'], 'standby': ['h3'], 'waking': [],
                'entering': [], 'counter': 0, 'reason': 'quiet',
                'reserve_hosts': 1}
        record = {'power': {'pools': [
            dict(pool, needed_now=1, needed=2, standby_host_hours=2.04,
                 saved_kwh=0.367),
            dict(pool, pool='agg2', level='off', needed_now=None,
                 needed=None, standby_host_hours=0.0, saved_kwh=None)]}}
        title, headers, rows = inspect._power_tables(record)[-1]
        self.assertEqual('Hosts and energy by pool', title)
        self.assertEqual(['pool', 'on', 'needed now\n(+ reserve)',
                          'needed at forecast\n(+ reserve)',
                          'standby\nhost-hours', 'saved kWh'], headers)
        self.assertEqual([['-', 2, '2', '3', '2.0', '0.4'],
                          ['agg2', 2, '-', '-', '0.0', '-']], rows)

    def test_server_name_beside_its_short_uuid(self):
        uuid = '3f0c2a1b-0000-4000-8000-000000000001'
        self.assertEqual('3f0c2a1b web-1',
                         output.server(uuid, {uuid: 'web-1'}))
        self.assertEqual('3f0c2a1b', output.server(uuid, {}))

    def test_history_line_without_time_or_id(self):
        path = tempfiles.write(self, '\n'.join([
            json.dumps({'id': 'r1', 'moves': [
                {'instance': 'abc', 'name': 'web', 'source': 'h1',
                 'destination': 'h2'}]}),
            '42', '{"cut by a cra',
            json.dumps({'hosts': [{'host': 'host10', 'violated': True},
                                  {'host': 'host2', 'violated': True}]}),
        ]) + '\n')
        # Records as an old history_file holds them (the DRS database
        # imports them as they are): the lines that are no object skipped.
        records = history_file.read(path)
        self.assertEqual(2, len(records))
        self.patch(history, 'load', lambda conf, limit, moves_only: records)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            code = history.run(types.SimpleNamespace(
                json=False, limit=0, moves_only=False), None)
        self.assertEqual(errors.OK, code)
        self.assertIn('abc web', stdout.getvalue())
        self.assertIn('host2,host10', stdout.getvalue())


class DemoFailureTest(testtools.TestCase):

    def test_a_failed_demo_cloud_names_its_cause(self):
        from nova_drs_scheduler.demo import cloud
        error = cloud.CloudFailedError(
            'Traceback (most recent call last):\n  File "x.py", line 1\n'
            '    boot()\n    ^^^^^^\n'
            'nova.exception.NoValidHost: No valid host was found.\n\n'
            '2026-11-23 21:00:00 INFO [nova.service] Stopping: now\n')
        self.assertEqual('nova.exception.NoValidHost: No valid host was '
                         'found.', str(error))
        self.assertIn('boot()', error.detail)
