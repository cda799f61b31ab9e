"""The harness itself: the scheduler it puts in place, and what it picks."""

import testtools
from nova.scheduler import host_manager as nova_host_manager
from nova.scheduler import manager as nova_manager
from nova.tests.functional import integrated_helpers
from oslo_config import cfg

from nova_drs_scheduler import manager as drs_manager
from nova_drs_scheduler.host_manager import manager as caching
from tests.nova_functional import fixtures
from tests.nova_functional import selection

CONF = cfg.CONF


class SchedulerInPlaceTest(integrated_helpers._IntegratedTestBase):
    """A boot through the scheduler the run's mode names."""

    ADMIN_API = True
    microversion = 'latest'

    def test_boot_through_the_scheduler_of_the_mode(self):
        manager = self.scheduler.manager
        if fixtures.mode() == 'drs':
            self.assertIsInstance(manager, drs_manager.DRSSchedulerManager)
            self.assertIsInstance(manager.host_manager,
                                  caching.CachingHostManager)
            self.assertEqual([manager.host_manager],
                             caching.running_refreshers())
        else:
            self.assertIs(nova_manager.SchedulerManager, type(manager))
            self.assertIs(nova_host_manager.HostManager,
                          type(manager.host_manager))
        # The product's default staleness bound, for every test.
        self.assertEqual(5.0, CONF.drs_host_cache.max_staleness)
        server = self._create_server(networks='none')
        self.assertEqual('compute', server['OS-EXT-SRV-ATTR:host'])


class SelectionTest(testtools.TestCase):

    def test_scheduling_regressions_in_other_regressions_out(self):
        names = selection.regression_modules()
        prefix = 'nova.tests.functional.regressions.'
        # Sets [filter_scheduler] weighers; retries on the scheduler's
        # alternates; schedules nothing (Cinder refusing a volume call).
        self.assertIn(prefix + 'test_bug_2125935', names)
        self.assertIn(prefix + 'test_bug_1719730', names)
        self.assertNotIn(prefix + 'test_bug_1554631', names)
        self.assertTrue(set(selection.MODULES).issubset(selection.modules()))
