"""The background refresher stops with the service, whichever host manager
it ended up with.

A refresher left running after its service stopped keeps reading the
cells (torn down, in tests) and opening Nova executors; in Nova's harness
the next test's setUp then fails.
"""

import fixtures

from nova_drs_scheduler.host_manager import manager as caching
from tests.functional import base
from tests.functional.host_manager import manager


class SwappedAfterStartTest(base.DRSFunctionalTestBase):
    """``[scheduler] host_manager`` applied to a started service, as the
    test fixture's ``SCHEDULER_FROM_CONFIG`` does."""

    SCHEDULER_MANAGER = manager.PATH

    def setUp(self):
        self.started = []
        start = caching.CachingHostManager.start_refresher

        def record(host_manager):
            self.started.append(host_manager)
            return start(host_manager)

        self.useFixture(fixtures.MonkeyPatch(
            'nova_drs_scheduler.host_manager.manager.CachingHostManager.'
            'start_refresher', record))
        super().setUp()

    def running(self):
        return [hm for hm in self.started if hm.rows.refresher is not None]

    def test_refresher_follows_the_host_manager(self):
        drs = self.scheduler_service.manager
        first = drs.host_manager
        self.assertEqual([first], self.running())
        second = caching.CachingHostManager()
        drs.host_manager = second
        self.assertEqual([second], self.running())
        self.scheduler_service.stop()
        self.assertEqual([], self.running())

    def test_a_refresher_left_running_fails_the_test(self):
        stray = caching.CachingHostManager()
        stray.start_refresher()
        self.assertRaises(AssertionError, self._check_no_refresher_left)
        # Stopped by the check, so that no later test pays for it.
        self.assertIsNone(stray.rows.refresher)
        self.assertEqual([], caching.running_refreshers())
