"""The background refresher, and the inline refresh it leaves as fallback."""

import gc
import time
import weakref
from unittest import mock

import fixtures
from oslo_utils import timeutils

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler import pacing
from nova_drs_scheduler.conf import host_cache
from nova_drs_scheduler.host_manager import cache
from nova_drs_scheduler.host_manager import manager as manager_mod
from nova_drs_scheduler.host_manager import snapshot
from tests.unit.host_manager import base
from tests.unit.host_manager import test_freezing

#: Half of it is no whole number of seconds.
INTERVAL = 3.0


class RefreshDueTest(base.HostCacheTestCase):
    """One pass of the refresher, on the cache's clock."""

    def setUp(self):
        super().setUp()
        self.flags(background_refresh_interval=INTERVAL,
                   group='drs_host_cache')
        self.add_compute('host1')
        self.assertEqual(INTERVAL, self.manager.rows.refresh_due())

    def test_refreshes_cells_once_their_rows_are_interval_old(self):
        self.add_compute('host2')
        self.advance(INTERVAL - 0.5)
        with self.count_sql() as sql:
            self.assertAlmostEqual(0.5, self.manager.rows.refresh_due())
        self.assertEqual([], sql.queries)
        self.advance(0.5)
        with self.count_sql() as sql:
            self.assertEqual(INTERVAL, self.manager.rows.refresh_due())
        self.assertEqual(3, len(sql.queries))
        # The request that follows finds host2 without reading rows.
        with self.count_sql() as sql:
            self.assertEqual({'host1', 'host2'}, set(self.states()))
        self.assertEqual([], sql.row_reads)

    def test_requests_between_interval_and_bound_do_not_refresh(self):
        # Rows older than the interval but inside max_staleness are used
        # as they are: only the refresher, never a request, reads them.
        # A request reads only the services' flags.
        self.add_compute('host2')
        self.advance(self.MAX_STALENESS - 0.1)
        with self.count_sql() as sql:
            self.assertEqual({'host1'}, set(self.states()))
        self.assertEqual([], sql.row_reads)
        self.assertEqual(1, len(sql.flag_reads))

    def test_request_refreshes_inline_when_the_refresher_is_late(self):
        self.add_compute('host2')
        self.advance()
        with self.count_sql() as sql:
            self.assertEqual({'host1', 'host2'}, set(self.states()))
        self.assertEqual(3, len(sql.row_reads))
        # The refresher finds nothing left to do.
        with self.count_sql() as sql:
            self.assertEqual(INTERVAL, self.manager.rows.refresh_due())
        self.assertEqual([], sql.queries)

    def test_first_pass_loads_every_enabled_cell(self):
        self.manager.invalidate()
        with self.count_sql() as sql:
            self.assertEqual(INTERVAL, self.manager.rows.refresh_due())
        # Three queries per cell: cell0 and cell1.
        self.assertEqual(3 * len(self.manager.enabled_cells),
                         len(sql.queries))
        with self.count_sql() as sql:
            self.assertEqual({'host1'}, set(self.states()))
        self.assertEqual([], sql.row_reads)

    def test_failure_is_logged_and_retried_after_an_interval(self):
        self.advance(INTERVAL)
        with mock.patch.object(self.manager.rows, 'refresh',
                               side_effect=RuntimeError('db gone')):
            self.assertEqual(INTERVAL, self.manager.rows.refresh_due())
        self.assertIn('Background refresh of the cached computes failed',
                      self.stdlog.logger.output)
        self.add_compute('host2')
        self.assertEqual(INTERVAL, self.manager.rows.refresh_due())
        self.assertEqual({'host1', 'host2'}, set(self.states()))

    def test_failed_cell_does_not_make_it_spin(self):
        self.manager.invalidate()
        with base_load_failure(self.manager):
            wait = self.manager.rows.refresh_due()
        self.assertGreaterEqual(wait, cache.MIN_REFRESH_WAIT)


class PacingTest(base.HostCacheTestCase):
    """The wait after a pass grows with the pass: no back-to-back passes
    where one takes about as long as the interval."""

    def setUp(self):
        super().setUp()
        self.flags(background_refresh_interval=INTERVAL,
                   group='drs_host_cache')
        self.add_compute('host1')
        self.manager.rows.refresh_due()
        self.advance(INTERVAL)

    def pass_taking(self, seconds):
        """One refresher pass whose refresh takes ``seconds``."""
        refresh = self.manager.rows.refresh

        def slow(*args):
            try:
                return refresh(*args)
            finally:
                self.now += seconds

        with mock.patch.object(self.manager.rows, 'refresh', slow):
            return self.manager.rows.refresh_due()

    def test_wait_after_a_long_pass_is_a_multiple_of_it(self):
        # Default share 0.5: as long as the pass, not at once again.
        self.assertEqual(5.0, self.pass_taking(5.0))
        self.assertIn('the next one waits 5.00 s', self.stdlog.logger.output)

    def test_a_longer_wait_is_logged_once(self):
        self.pass_taking(5.0)
        self.advance(5.0)
        self.assertEqual(5.0, self.pass_taking(5.0))
        self.assertEqual(1, self.stdlog.logger.output.count(
            'the next one waits'))

    def test_share_sets_the_multiple(self):
        self.flags(background_refresh_max_share=0.25, group='drs_host_cache')
        self.assertEqual(9.0, self.pass_taking(3.0))

    def test_share_of_one_lets_passes_run_back_to_back(self):
        self.flags(background_refresh_max_share=1, group='drs_host_cache')
        # Never at once, though (MIN_REFRESH_WAIT).
        self.assertEqual(0.1, self.pass_taking(3.0))

    def test_short_pass_keeps_the_interval(self):
        self.assertAlmostEqual(INTERVAL - 0.2, self.pass_taking(0.2))
        self.assertNotIn('the next one waits', self.stdlog.logger.output)

    def test_pace_no_longer_than_the_interval_left_is_not_logged(self):
        # 1.5 s taken, 1.5 s of the interval left: the share adds nothing.
        self.assertEqual(1.5, self.pass_taking(1.5))
        self.assertNotIn('the next one waits', self.stdlog.logger.output)

    def test_rows_left_older_than_the_bound_are_refreshed_inline(self):
        wait = self.pass_taking(3.0)
        self.add_compute('host2')
        # The rows were read when the pass started: the refresher sleeps
        # past max_staleness, and a request reads the changes itself.
        self.advance(wait)
        self.assertGreater(3.0 + wait, self.MAX_STALENESS)
        with self.count_sql() as sql:
            self.assertEqual({'host1', 'host2'}, set(self.states()))
        self.assertEqual(3, len(sql.row_reads))


def base_load_failure(manager):
    return mock.patch.object(manager.rows, 'load_cell',
                             side_effect=RuntimeError('cell down'))


class FreezingTest(base.HostCacheTestCase):
    """What background refreshes freeze, and that it does not leak."""

    def setUp(self):
        super().setUp()
        self.flags(background_refresh_interval=INTERVAL,
                   group='drs_host_cache')
        self.addCleanup(gc.unfreeze)
        self.compute = self.add_compute('host1')

    def template(self):
        [entry] = [entry for snap in self.manager.rows.snapshots.values()
                   for entry in snap.nodes.values()]
        return entry.template

    def test_rows_are_frozen_and_freed_once_replaced(self):
        self.manager.rows.refresh_due()
        template = self.template()
        self.assertTrue(test_freezing.is_frozen(template))
        replaced = weakref.ref(template)
        del template
        # host1 reports: its row is read again and replaces the old one,
        # which the cache no longer holds and nothing keeps frozen.
        self.stamp_compute(self.compute, free_ram_mb=1024,
                           updated_at=timeutils.utcnow())
        self.advance(INTERVAL)
        self.manager.rows.refresh_due()
        self.assertEqual(1024, self.template().free_ram_mb)
        self.assertIsNone(replaced())
        self.assertTrue(test_freezing.is_frozen(self.template()))
        # Stopping the refresher hands everything back to the collector.
        self.manager.stop_refresher()
        self.assertEqual(0, gc.get_freeze_count())
        self.assertFalse(test_freezing.is_frozen(self.template()))

    def test_requests_freeze_nothing(self):
        self.advance()
        self.assertEqual({'host1'}, set(self.states()))
        self.assertFalse(test_freezing.is_frozen(self.template()))

    def test_zero_interval_freezes_nothing(self):
        self.flags(gc_collect_interval=0, group='drs_host_cache')
        self.manager.rows.refresh_due()
        self.assertFalse(test_freezing.is_frozen(self.template()))
        self.assertEqual(0, gc.get_freeze_count())


class RefresherLifecycleTest(base.HostCacheTestCase):
    """The looping call itself, on the real clock."""

    def make_manager(self):
        manager = manager_mod.CachingHostManager()
        self.addCleanup(manager.stop_refresher)
        return manager

    def wait_for(self, check, timeout=20.0):
        deadline = time.monotonic() + timeout
        while not check():
            self.assertLess(time.monotonic(), deadline, 'timed out')
            time.sleep(0.05)

    def cached_hosts(self):
        return {entry.host for snap in self.manager.rows.snapshots.values()
                for entry in snap.nodes.values()}

    def test_new_host_is_read_without_any_request(self):
        self.flags(background_refresh_interval=0.2, group='drs_host_cache')
        self.add_compute('host1')
        self.assertTrue(self.manager.start_refresher())
        self.assertFalse(self.manager.start_refresher(), 'started twice')
        self.wait_for(lambda: self.cached_hosts() == {'host1'})
        self.add_compute('host2')
        self.wait_for(lambda: self.cached_hosts() == {'host1', 'host2'})
        with self.count_sql() as sql:
            self.assertEqual({'host1', 'host2'}, set(self.states()))
        self.assertEqual([], sql.row_reads)

    def test_stop_waits_for_the_loop_to_end(self):
        self.flags(background_refresh_interval=0.2, group='drs_host_cache')
        self.manager.start_refresher()
        refresher = self.manager.rows.refresher
        self.manager.stop_refresher()
        self.assertIsNone(self.manager.rows.refresher)
        # wait() returns once the loop has left; nothing runs any more.
        self.assertTrue(refresher.wait())
        self.manager.invalidate()
        time.sleep(0.5)
        self.assertEqual({}, self.manager.rows.snapshots)

    def test_not_started_when_disabled_or_pointless(self):
        self.flags(background_refresh_interval=0, group='drs_host_cache')
        self.assertFalse(self.manager.start_refresher())
        self.flags(background_refresh_interval=2, max_staleness=0,
                   group='drs_host_cache')
        self.assertFalse(self.manager.start_refresher())
        self.assertIsNone(self.manager.rows.refresher)


class YieldingTest(base.HostCacheTestCase):

    def test_merge_yields_before_every_50th_row(self):
        # doc/host-manager.md: other threads run every 50 rows.
        seen = []
        with mock.patch.object(snapshot.time, 'sleep', seen.append):
            for row in snapshot._paced(range(120), None):
                seen.append(('row', row))
        self.assertEqual(
            [('row', row) for row in range(49)] + [0] +
            [('row', row) for row in range(49, 99)] + [0] +
            [('row', row) for row in range(99, 120)], seen)

    def test_pace_runs_every_few_rows(self):
        pace = mock.Mock()
        self.assertEqual(list(range(120)),
                         list(snapshot._paced(range(120), pace)))
        self.assertEqual(120 // snapshot.YIELD_EVERY, pace.call_count)


class GivingWayTest(base.HostCacheTestCase):
    """A background pass gives way to requests in flight, within half a
    refresh interval per pass, and never while a caller waits for an
    inline refresh (it would wait for the pass that waits for it)."""

    HOSTS = 6

    def setUp(self):
        super().setUp()
        self.flags(background_refresh_interval=INTERVAL,
                   group='drs_host_cache')
        for number in range(self.HOSTS):
            self.add_compute('host%d' % number)
        self.manager.rows.refresh_due()
        self.advance(INTERVAL)
        # Every row merged is a pacing point; the rows written a moment
        # ago are read again (inside the timestamp margin): 12 points.
        self.useFixture(fixtures.MockPatchObject(snapshot, 'YIELD_EVERY', 1))
        self.slept = []

        def sleep(seconds):
            self.slept.append(seconds)
            self.now += seconds
        self.useFixture(fixtures.MockPatch('time.sleep', side_effect=sleep))

    def given_way(self):
        return sum(self.slept)

    def test_no_request_no_wait(self):
        self.assertEqual(INTERVAL, self.manager.rows.refresh_due())
        self.assertGreaterEqual(len(self.slept), 2 * self.HOSTS)
        self.assertEqual(0, self.given_way())

    def test_gives_way_to_a_request_at_most_half_an_interval(self):
        # A share that would make a 1.5 s pass wait 4.5 s.
        self.flags(background_refresh_max_share=0.25, group='drs_host_cache')
        with pacing.REQUESTS.request():
            wait = self.manager.rows.refresh_due()
        # 12 points of up to 0.2 s, cut at the 1.5 s budget.
        self.assertAlmostEqual(INTERVAL / 2, self.given_way())
        # The rows are as old as the time given way, and that time is not
        # the pass's own: the next pass is due when the rows are an
        # interval old, not paced by it.
        self.assertAlmostEqual(INTERVAL / 2, wait)
        self.assertNotIn('the next one waits', self.stdlog.logger.output)

    def test_no_give_way_while_a_caller_waits_for_an_inline_refresh(self):
        with pacing.REQUESTS.request(), self.manager.rows.inline.request():
            self.assertEqual(INTERVAL, self.manager.rows.refresh_due())
        self.assertEqual(0, self.given_way())

    def test_inline_refresh_counts_its_caller_as_waiting(self):
        seen = []
        refresh = self.manager.rows.refresh

        def record(*args):
            seen.append(self.manager.rows.inline.count)
            return refresh(*args)
        self.advance()
        with mock.patch.object(self.manager.rows, 'refresh', record):
            self.assertEqual(self.HOSTS, len(self.states()))
        self.assertEqual([1], seen)
        self.assertEqual(0, self.manager.rows.inline.count)


class OptionCheckTest(base.HostCacheTestCase):

    def test_interval_must_be_below_the_bound(self):
        self.flags(max_staleness=5, background_refresh_interval=5,
                   group='drs_host_cache')
        error = self.assertRaises(drs_conf.ConfigError, drs_conf.validate)
        self.assertIn('[drs_host_cache] background_refresh_interval',
                      str(error))
        self.assertIn('max_staleness (5)', str(error))

    def test_unset_follows_the_bound(self):
        # An operator who lowers max_staleness below the interval the
        # cache would otherwise use must not also have to set this one:
        # the service starts, and refreshes at half the bound.
        group = drs_conf.CONF.drs_host_cache
        self.assertIsNone(group.background_refresh_interval)
        for staleness, expected in ((5, 2.5), (1, 0.5), (0, 0)):
            self.flags(max_staleness=staleness, group='drs_host_cache')
            drs_conf.validate()
            self.assertEqual(expected, host_cache.refresh_interval(group))
        self.flags(max_staleness=1, background_refresh_interval=0.25,
                   group='drs_host_cache')
        self.assertEqual(0.25, host_cache.refresh_interval(group))

    def test_zero_disables_and_zero_bound_needs_none(self):
        for staleness, interval in ((5, 0), (0, 2), (5, 4.5)):
            self.flags(max_staleness=staleness,
                       background_refresh_interval=interval,
                       group='drs_host_cache')
            drs_conf.validate()
