"""nova-drs-scheduler startup: driver and host manager chosen by config."""

import json
import os
import subprocess
import sys

import fixtures
from nova import conf as nova_conf
from nova import test
from nova.conf import scheduler as nova_scheduler_conf
from nova.scheduler import host_manager as nova_host_manager
from nova.scheduler import manager as nova_manager
from oslo_config import cfg

from nova_drs_scheduler import concurrency
from nova_drs_scheduler import conf
from nova_drs_scheduler import drivers
from nova_drs_scheduler import host_manager
from nova_drs_scheduler import manager
from nova_drs_scheduler import service as cmd
from tests import tempfiles


def _forget_translations(test_case):
    """translate_legacy() sets overrides, as the service must; undo them."""
    for group, name in [('scheduler', 'driver'),
                        ('scheduler', 'host_manager'),
                        ('filter_scheduler', 'enabled_filters'),
                        ('filter_scheduler', 'available_filters')]:
        test_case.addCleanup(conf.CONF.clear_override, name, group)


class ServiceStartupTest(test.TestCase):

    def setUp(self):
        super().setUp()
        _forget_translations(self)
        self.flags(state_path=self.useFixture(fixtures.TempDir()).path)

    def test_default_is_the_drs_manager(self):
        server = cmd.create_server(conf.CONF)
        self.assertIsInstance(server.manager, manager.DRSSchedulerManager)
        self.assertEqual('nova-scheduler', server.binary)

    def test_stock_driver_keeps_stock_host_manager(self):
        self.flags(driver='filter_scheduler', group='scheduler')
        server = cmd.create_server(conf.CONF)
        self.assertIs(nova_manager.SchedulerManager, type(server.manager))
        self.assertIs(nova_host_manager.HostManager,
                      type(server.manager.host_manager))

    def test_host_manager_is_chosen_by_name(self):
        self.flags(driver='filter_scheduler',
                   host_manager='caching_host_manager', group='scheduler')
        server = cmd.create_server(conf.CONF)
        self.assertIs(nova_manager.SchedulerManager, type(server.manager))
        self.assertIsInstance(server.manager.host_manager,
                              host_manager.CachingHostManager)

    def test_unknown_driver_lists_the_names(self):
        self.flags(driver='chance_scheduler', group='scheduler')
        error = self.assertRaises(conf.ConfigError, cmd.create_server,
                                  conf.CONF)
        message = str(error)
        self.assertIn('[scheduler] driver', message)
        self.assertIn("'chance_scheduler'", message)
        self.assertIn('drs_scheduler', message)
        self.assertIn('filter_scheduler', message)

    def test_unknown_host_manager_lists_the_names(self):
        self.flags(host_manager='ironic_host_manager', group='scheduler')
        error = self.assertRaises(conf.ConfigError, cmd.create_server,
                                  conf.CONF)
        self.assertIn('[scheduler] host_manager', str(error))
        self.assertIn('caching_host_manager', str(error))

    def test_sqlite_drs_database_is_created_at_start(self):
        server = cmd.create_server(conf.CONF)
        self.assertEqual([], server.manager.rebalancer.store.recent())
        self.assertTrue(os.path.exists(os.path.join(
            conf.CONF.state_path, 'nova_drs.sqlite')))

    def test_history_file_is_imported_once_with_a_deprecation_warning(self):
        path = os.path.join(conf.CONF.state_path, 'history.jsonl')
        with open(path, 'w') as handle:
            handle.write(json.dumps({
                'id': 'r1', 'time': '2026-11-20T06:00:00', 'hosts': [],
                'automation': 'automatic', 'moves': [],
                'windows': {'h1': {'counter': 2, 'samples': []}}}) + '\n')
        self.flags(history_file=path, group='drs')
        with self.assertLogs('nova_drs_scheduler.rebalance.rebalancer',
                             level='INFO') as logs:
            server = cmd.create_server(conf.CONF)
        self.assertIn('history_file is deprecated', logs.output[0])
        self.assertIn('Imported 1 decision records', logs.output[1])
        store = server.manager.rebalancer.store
        self.assertEqual(['r1'], [r['id'] for r in store.recent()])
        self.assertEqual(2, store.load_windows()['h1']['counter'])
        # A second start imports nothing more.
        cmd.create_server(conf.CONF)
        self.assertEqual(1, store.count())

    def test_unusable_drs_database_stops_start_naming_the_fix(self):
        self.flags(connection='sqlite:////nonexistent/dir/drs.sqlite',
                   group='drs_database')
        error = self.assertRaises(conf.ConfigError, cmd.create_server,
                                  conf.CONF)
        self.assertIn('[drs_database] connection', str(error))
        self.assertIn('nova-drs db sync', str(error))

    def test_invalid_drs_option_stops_start(self):
        self.flags(cpu_utilization_weight=0, ram_utilization_weight=0,
                   group='drs')
        self.assertRaises(conf.ConfigError, cmd.create_server, conf.CONF)


class LegacyOptionsTest(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        _forget_translations(self)

    def test_legacy_names_are_translated(self):
        self.flags(scheduler_driver='filter_scheduler',
                   scheduler_host_manager='caching_host_manager',
                   scheduler_default_filters=['ComputeFilter', 'CoreFilter'],
                   scheduler_available_filters=[
                       'nova.scheduler.filters.all_filters',
                       'nova_drs_scheduler.filters.all_filters'])
        with self.assertLogs('nova_drs_scheduler.drivers',
                             level='WARNING') as logs:
            done = drivers.translate_legacy(conf.CONF)
        self.assertEqual(4, len(done))
        self.assertEqual(4, len(logs.output))
        self.assertIn('deprecated', logs.output[0])
        self.assertEqual('filter_scheduler', conf.CONF.scheduler.driver)
        self.assertEqual('caching_host_manager',
                         conf.CONF.scheduler.host_manager)
        self.assertEqual(['ComputeFilter', 'CoreFilter'],
                         conf.CONF.filter_scheduler.enabled_filters)
        self.assertEqual(['nova.scheduler.filters.all_filters',
                          'nova_drs_scheduler.filters.all_filters'],
                         conf.CONF.filter_scheduler.available_filters)

    def test_new_name_wins(self):
        self.flags(scheduler_driver='caching_scheduler',
                   scheduler_default_filters=['CoreFilter'])
        self.flags(driver='filter_scheduler', group='scheduler')
        self.flags(enabled_filters=['ComputeFilter'],
                   group='filter_scheduler')
        with self.assertLogs('nova_drs_scheduler.drivers',
                             level='WARNING') as logs:
            self.assertEqual([], drivers.translate_legacy(conf.CONF))
        self.assertIn('Ignoring deprecated [DEFAULT] scheduler_driver',
                      logs.output[0])
        self.assertEqual('filter_scheduler', conf.CONF.scheduler.driver)
        self.assertIsNone(conf.CONF.scheduler.host_manager)
        self.assertEqual(['ComputeFilter'],
                         conf.CONF.filter_scheduler.enabled_filters)

    def test_nothing_set_translates_nothing(self):
        self.assertEqual([], drivers.translate_legacy(conf.CONF))
        self.assertEqual('drs_scheduler', conf.CONF.scheduler.driver)

    def test_caching_scheduler_maps_to_caching_host_manager(self):
        self.flags(scheduler_driver='caching_scheduler')
        drivers.translate_legacy(conf.CONF)
        self.assertEqual('filter_scheduler', conf.CONF.scheduler.driver)
        self.assertEqual('caching_host_manager',
                         conf.CONF.scheduler.host_manager)


class LegacyOptionsFromFileTest(test.NoDBTestCase):
    """Precedence as nova.conf writes it: a written new name always wins."""

    def parse(self, text):
        fresh = cfg.ConfigOpts()
        nova_scheduler_conf.register_opts(fresh)
        conf.register_opts(fresh)
        fresh(args=['--config-file', tempfiles.write(self, text, '.conf')],
              default_config_files=[])
        return fresh

    def test_new_driver_written_with_its_default_wins(self):
        # doc/deployment.md recipe 2 on top of an old nova.conf.
        fresh = self.parse('[DEFAULT]\nscheduler_driver = caching_scheduler\n'
                           '[scheduler]\ndriver = drs_scheduler\n')
        self.assertEqual([], drivers.translate_legacy(fresh))
        self.assertEqual('drs_scheduler', fresh.scheduler.driver)
        self.assertIsNone(fresh.scheduler.host_manager)
        self.assertIs(manager.DRSSchedulerManager,
                      drivers.manager_class(fresh))

    def test_explicit_default_filter_list_wins(self):
        default = nova_conf.CONF.filter_scheduler.enabled_filters
        fresh = self.parse(
            '[DEFAULT]\nscheduler_default_filters = ComputeFilter\n'
            '[filter_scheduler]\nenabled_filters = %s\n' % ','.join(default))
        self.assertEqual([], drivers.translate_legacy(fresh))
        self.assertEqual(default, fresh.filter_scheduler.enabled_filters)
        self.assertIn('ServerGroupAntiAffinityFilter',
                      fresh.filter_scheduler.enabled_filters)

    def test_legacy_name_applies_where_the_new_one_is_not_written(self):
        fresh = self.parse(
            '[DEFAULT]\nscheduler_default_filters = ComputeFilter\n')
        self.assertEqual(1, len(drivers.translate_legacy(fresh)))
        self.assertEqual(['ComputeFilter'],
                         fresh.filter_scheduler.enabled_filters)

    def test_dotted_host_manager_is_translated(self):
        fresh = self.parse('[DEFAULT]\nscheduler_host_manager = '
                           'nova.scheduler.host_manager.HostManager\n')
        drivers.translate_legacy(fresh)
        self.assertEqual('host_manager', fresh.scheduler.host_manager)
        self.assertIs(nova_host_manager.HostManager,
                      drivers.host_manager_class(fresh))


class ConcurrencyTest(test.NoDBTestCase):
    """The mode the service logs, forced as an operator forces it."""

    def _mode_of_a_fresh_process(self, disable_patching):
        code = ('from nova_drs_scheduler import compat; '
                "compat.monkey_patch(backend='threading'); "
                'from nova_drs_scheduler import concurrency; '
                'print(concurrency.backend())')
        env = dict(os.environ,
                   OS_NOVA_DISABLE_EVENTLET_PATCHING=disable_patching)
        run = subprocess.run([sys.executable, '-c', code], env=env,
                             capture_output=True, text=True, check=True,
                             timeout=120)
        return run.stdout.strip().splitlines()[-1]

    def test_forced_eventlet(self):
        self.assertEqual('eventlet', self._mode_of_a_fresh_process('0'))

    def test_forced_threads(self):
        self.assertEqual('threading', self._mode_of_a_fresh_process('1'))

    def test_the_harness_runs_eventlet(self):
        self.assertEqual('eventlet', concurrency.backend())
