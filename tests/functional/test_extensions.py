"""Third-party plug-ins, chosen only by name in config.

``tests/extension_example`` is a tiny package with its own entry points:
a filter, a weigher, a metric source, a planner policy, a power driver, a
scheduler driver and a host manager.  It is built and installed (into a
temporary target directory put on ``sys.path``) once for this module, then
selected through nova.conf options exactly as an operator would.
"""

import atexit
import importlib
import os
import shutil
import subprocess
import sys
import tempfile

import fixtures
from nova import test
from stevedore import extension

from nova_drs_scheduler import conf
from nova_drs_scheduler import filters
from nova_drs_scheduler import service
from nova_drs_scheduler import weighers
from nova_drs_scheduler.planning import policies
from nova_drs_scheduler.power import loading as power_loading
from nova_drs_scheduler.rebalance import sources
from tests.functional import base
from tests.functional.rebalance import base as rebalance_base

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                       'extension_example')
_installed = []
_TMP = tempfile.gettempdir()


def install_example() -> str:
    """pip-install the example package once; returns its directory."""
    if not _installed:
        # Not in the test's own temporary directory (Nova's fixture sets
        # one per test and removes it): the package serves every test of
        # the module, and goes when the process ends.
        target = tempfile.mkdtemp(prefix='drs-example-ext-', dir=_TMP)
        atexit.register(shutil.rmtree, target, True)
        subprocess.run(
            [sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps',
             '--target', target, PACKAGE],
            check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        sys.path.insert(0, target)
        importlib.invalidate_caches()
        # stevedore remembers each namespace's entry points per process;
        # a package installed while running is only seen after this.
        extension.ExtensionManager.ENTRY_POINT_CACHE.clear()
        _installed.append(target)
    return _installed[0]


class InstalledExtensionTest(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        install_example()

    def test_each_namespace_finds_the_plugin(self):
        names = {cls.__name__ for cls in filters.all_filters()}
        self.assertIn('ExampleAvoidFilter', names)
        self.assertIn('CoreFilter', names)
        self.assertIn('ExampleNameWeigher',
                      {cls.__name__ for cls in weighers.all_weighers()})
        self.assertEqual('example_busiest',
                         policies.get('example_busiest').name)
        self.flags(metrics_source='example_hot', group='drs')
        source = sources.load(conf.CONF)
        self.assertEqual(95.0, source.host_samples(None, ['hot1'])[
            'hot1'].cpu_percent)

    def test_power_driver_by_name(self):
        self.flags(state_path=self.useFixture(fixtures.TempDir()).path)
        self.flags(power_driver='example_file', group='drs')
        conf.validate(conf.CONF)
        driver = power_loading.load(conf.CONF)
        self.assertEqual('unknown', driver.state('cn1'))
        driver.power_off('cn1')
        self.assertEqual('off', driver.state('cn1'))


class ExtensionSchedulingTest(base.DRSFunctionalTestBase):
    """Driver, host manager, filter and weigher picked by name."""

    SCHEDULER_FROM_CONFIG = True

    def setUp(self):
        install_example()
        self.flags(driver='example_scheduler',
                   host_manager='example_host_manager', group='scheduler')
        self.flags(available_filters=[
            'nova.scheduler.filters.all_filters',
            'nova_drs_scheduler.filters.all_filters'],
            enabled_filters=['ComputeFilter', 'ExampleAvoidFilter'],
            weight_classes=['nova_drs_scheduler.weighers.all_weighers'],
            group='filter_scheduler')
        # Only the example weigher should rank.
        self.flags(utilization_weight_multiplier=0.0, group='drs')
        super().setUp()
        for host in ('host1', 'host2', 'host3'):
            self._start_compute(host)
        self.flavor_id = self._create_flavor(vcpu=1, memory_mb=256,
                                             disk=1, ephemeral=0)

    def test_plugins_schedule(self):
        manager = self.scheduler_service.manager
        self.assertEqual('ExampleSchedulerManager', type(manager).__name__)
        self.assertEqual('ExampleHostManager',
                         type(manager.host_manager).__name__)
        # The weigher prefers host3; the filter takes it out.
        self._aggregate_with_hosts('avoid', ['host3'],
                                   {'example_avoid': 'true'})
        server = self._create_server(flavor_id=self.flavor_id,
                                     networks='none')
        self.assertEqual('host2', server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(1, manager.host_manager.requests)


class ServiceWithExtensionTest(test.TestCase):

    def test_service_starts_the_named_plugins(self):
        install_example()
        self.flags(driver='example_scheduler',
                   host_manager='example_host_manager', group='scheduler')
        for name in ('driver', 'host_manager'):
            self.addCleanup(conf.CONF.clear_override, name, 'scheduler')
        server = service.create_server(conf.CONF)
        self.assertEqual('ExampleSchedulerManager',
                         type(server.manager).__name__)
        self.assertEqual('ExampleHostManager',
                         type(server.manager.host_manager).__name__)


class ExtensionRebalanceTest(rebalance_base.RebalanceTestBase):
    """Metric source and planner policy picked by name for the rebalancer."""

    SCHEDULER_FROM_CONFIG = True
    HOSTS = ('hot1', 'cool1', 'cool2')
    DRS = {'metrics_source': 'example_hot', 'policy': 'example_busiest',
           'stabilization': 1}

    def setUp(self):
        install_example()
        self.flags(driver='example_scheduler', group='scheduler')
        self.addCleanup(conf.CONF.clear_override, 'driver', 'scheduler')
        super().setUp()

    def test_source_and_policy_drive_the_period(self):
        small = self._boot('hot1')
        big = self._boot('hot1', flavor=self._flavor('big', vcpu=4))
        record = self._settle(self.scheduler_service.manager.run_rebalance(
            self._admin_context()))
        self.assertEqual('example_scheduler', record['driver'])
        self.assertEqual('example_busiest', record['policy'])
        hot1 = self._verdict(record, 'hot1')
        self.assertEqual(95.0, hot1['cpu_percent'])
        [move] = record['moves']
        # Seed would move the least-loaded (small); the plug-in moves big.
        self.assertEqual(big, move['instance'])
        self.assertNotEqual(small, move['instance'])
        self.assertIn('example_busiest', move['reason'])
        self.assertEqual('completed', move['outcome']['status'])
