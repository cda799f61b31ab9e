"""Incremental refresh and the staleness bound, one change at a time."""

import dataclasses
import datetime
import threading
import time
from unittest import mock

import nova.conf
import sqlalchemy
from nova import exception
from nova import objects
from nova.db.main import api as main_db_api
from nova.db.main import models
from nova.scheduler.filters import compute_filter
from oslo_utils import fixture as utils_fixture
from oslo_utils import timeutils
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.host_manager import manager as manager_mod
from nova_drs_scheduler.host_manager import rows
from tests.unit.host_manager import base

CONF = nova.conf.CONF


class StalenessTest(base.HostCacheTestCase):
    """Each change is invisible within the bound and visible past it."""

    def setUp(self):
        super().setUp()
        compute = self.add_compute('host1')
        # Ids past CPython's cached small ints, as in a real cloud.
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, 'host1')
        self.stamp_service(service, id=1000)
        self.stamp_compute(compute, id=1001, service_id=1000)
        with self.cell_context() as cctxt:
            self.compute = objects.ComputeNode.get_by_uuid(cctxt,
                                                           compute.uuid)
        self.states()

    def assert_seen_only_after_bound(self, check):
        self.advance(self.MAX_STALENESS - 0.5)
        self.assertFalse(check(self.states()), 'seen inside the bound')
        self.advance(0.6)
        self.assertTrue(check(self.states()), 'not seen past the bound')

    def test_new_host(self):
        self.add_compute('host2')
        self.assert_seen_only_after_bound(lambda states: 'host2' in states)

    def test_resource_report(self):
        self.compute.free_ram_mb = 1024
        self.compute.save()
        self.assert_seen_only_after_bound(
            lambda states: states['host1'].free_ram_mb == 1024)

    def test_disabled_service(self):
        # Requests see it at once (test_flags); the cached row, like any
        # other, is read again within the bound.
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, 'host1')
            service.disabled = True
            service.save()
        self.assertTrue(self.states()['host1'].service['disabled'])
        self.assert_seen_only_after_bound(
            lambda states: self.cached_service('host1').disabled)

    def test_forced_down_service(self):
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, 'host1')
            service.forced_down = True
            service.save()
        self.assertFalse(compute_filter.ComputeFilter().host_passes(
            self.states()['host1'], objects.RequestSpec()))
        self.assert_seen_only_after_bound(
            lambda states: self.cached_service('host1').forced_down)

    def test_deleted_node(self):
        self.compute.destroy()
        self.assert_seen_only_after_bound(lambda states: not states)

    def test_deleted_service(self):
        with self.cell_context() as cctxt:
            objects.Service.get_by_compute_host(cctxt, 'host1').destroy()
        self.assert_seen_only_after_bound(lambda states: not states)

    def recreate_service(self):
        """host1's service row deleted and created again (a new id):
        the old row and the new."""
        with self.cell_context() as cctxt:
            old = objects.Service.get_by_compute_host(cctxt, 'host1')
            old.destroy()
            new = objects.Service(cctxt, host='host1', binary='nova-compute',
                                  topic='compute', report_count=1)
            new.create()
        return old, new

    def test_service_deleted_and_recreated_in_one_refresh(self):
        _old, new = self.recreate_service()
        # Deleting a service deletes its nodes; only the row cache shows it.
        self.assert_seen_only_after_bound(
            lambda states: self.cached_service('host1').id == new.id)

    def test_deleted_row_read_again_keeps_its_successor(self):
        old, new = self.recreate_service()
        self.advance()
        self.states()
        # Only the old, deleted row changes (a late write) and is read.
        self.flags(timestamp_margin=0, group='drs_host_cache')
        self.advance()
        self.states()
        self.stamp_service(old, updated_at=timeutils.utcnow())
        self.advance()
        with self.count_sql() as sql:
            self.states()
        self.assertEqual(3, len(sql.queries))
        self.assertEqual(new.id, self.cached_service('host1').id)

    def cached_service(self, host):
        snap = self.manager.rows.snapshots[self.cell.uuid]
        return snap.services[host].service

    def test_down_service_needs_no_refresh(self):
        # A compute that stops reporting changes no row: the cached
        # heartbeat ages and ComputeFilter sees it down on its own.
        passes = compute_filter.ComputeFilter().host_passes
        self.assertTrue(passes(self.states()['host1'], objects.RequestSpec()))
        later = timeutils.utcnow() + datetime.timedelta(
            seconds=CONF.service_down_time + 1)
        self.useFixture(utils_fixture.TimeFixture(later))
        self.assertFalse(passes(self.states()['host1'],
                                objects.RequestSpec()))


class RefreshTest(base.HostCacheTestCase):

    def snapshot(self):
        return self.manager.rows.snapshots[self.cell.uuid]

    def test_fresh_cache_is_reused_across_requests(self):
        self.add_compute('host1')
        self.states()
        first = self.snapshot()
        self.advance(1)
        self.states()
        self.assertIs(first, self.snapshot())

    def test_node_known_to_placement_is_read_at_once(self):
        # Even just after a refresh (the background one, say) that missed
        # it: a compute created after it is schedulable at once.
        self.add_compute('host1')
        self.states()
        new = self.add_compute('host2')
        self.advance(0.1)
        self.assertEqual(['host2'], list(self.states([new.uuid])))

    def test_unknown_provider_looked_up_once_then_once_a_second(self):
        self.add_compute('host1')
        self.states()
        self.advance(0.1)
        with self.count_sql() as sql:
            self.states([uuids.sharing_provider])
        self.assertEqual(3, len(sql.queries))  # One refresh, looking.
        self.advance(0.9)
        with self.count_sql() as sql:
            self.states([uuids.sharing_provider])
        self.assertEqual([], sql.queries)
        self.advance(0.2)
        with self.count_sql() as sql:
            self.states([uuids.sharing_provider])
        self.assertEqual(3, len(sql.queries))

    def test_a_provider_found_since_does_not_make_others_new(self):
        self.add_compute('host1')
        self.states()
        found = self.add_compute('host2')
        self.advance(0.1)
        self.states([found.uuid])  # Looked up, found.
        self.advance(0.1)
        self.states([uuids.sharing_provider])  # Looked up, never found.
        self.advance(0.1)
        with self.count_sql() as sql:
            self.states([uuids.sharing_provider])
        self.assertEqual([], sql.queries)

    def test_unknown_providers_cost_one_refresh_a_second(self):
        self.add_compute('host1')
        self.states()
        self.advance(manager_mod.UNKNOWN_NODE_MAX_AGE)
        with self.count_sql() as sql:
            for _ in range(3):
                self.states([uuids.sharing_provider])
        self.assertEqual(3, len(sql.queries))

    def test_unchanged_rows_keep_their_templates(self):
        compute = self.add_compute('host1')
        other = self.add_compute('host2')
        self.states()
        before = dict(self.snapshot().nodes)
        # Push host2 out of the re-read margin, then change host1 only.
        self.flags(timestamp_margin=0, group='drs_host_cache')
        self.advance()
        self.states()
        compute.vcpus_used = 3
        compute.save()
        self.advance()
        self.assertEqual(3, self.states()['host1'].vcpus_used)
        after = self.snapshot().nodes
        self.assertIs(before[other.uuid], after[other.uuid])
        self.assertIsNot(before[compute.uuid], after[compute.uuid])

    def test_rows_read_again_in_the_margin_are_not_rebuilt(self):
        compute = self.add_compute('host1')
        self.states()
        before = self.snapshot().nodes[compute.uuid]
        self.advance()
        self.states()
        self.assertIs(before, self.snapshot().nodes[compute.uuid])

    def test_instances_read_again_in_the_margin_are_kept(self):
        self.add_compute('host1')
        self.add_instance('host1')
        self.states()
        before = self.snapshot().instances['host1']
        self.advance()
        self.states()
        self.assertIs(before, self.snapshot().instances['host1'])

    def test_rows_are_read_without_orm_objects(self):
        # Most rows an incremental refresh reads are read again inside the
        # timestamp margin and dropped: no ORM object is built for any.
        compute = self.add_compute('host1')
        self.add_instance('host1')
        self.states()
        self.add_compute('host2')
        self.stamp_compute(compute, free_ram_mb=1024,
                           updated_at=timeutils.utcnow())
        loaded = []

        def on_load(target, context):
            loaded.append(type(target).__name__)

        for model in (models.ComputeNode, models.Service, models.Instance):
            sqlalchemy.event.listen(model, 'load', on_load)
            self.addCleanup(sqlalchemy.event.remove, model, 'load', on_load)
        self.advance()
        states = self.states()
        self.assertEqual({'host1', 'host2'}, set(states))
        self.assertEqual(1024, states['host1'].free_ram_mb)
        self.assertEqual([], loaded)

    def test_incremental_refresh_reads_only_changed_rows(self):
        for i in range(5):
            self.add_compute('host%d' % i)
        self.states()
        self.flags(timestamp_margin=0, group='drs_host_cache')
        self.advance()
        self.states()
        self.advance()
        with self.count_sql() as sql:
            self.states()
        # One query each for nodes, services and instance locations.
        self.assertEqual(3, len(sql.row_reads), sql.statements)

    def test_full_reload_rebuilds_only_changed_rows(self):
        compute = self.add_compute('host1')
        other = self.add_compute('host2')
        self.states()
        before = self.snapshot()
        compute.vcpus_used = 3
        compute.save()
        self.flags(full_refresh_interval=1, group='drs_host_cache')
        self.advance()
        self.assertEqual(3, self.states()['host1'].vcpus_used)
        after = self.snapshot()
        self.assertEqual(self.now, after.full_loaded_at)
        self.assertIs(before.nodes[other.uuid], after.nodes[other.uuid])
        self.assertIs(before.services['host2'], after.services['host2'])
        self.assertIsNot(before.nodes[compute.uuid],
                         after.nodes[compute.uuid])

    def test_full_reload_due_exactly_at_its_interval(self):
        self.now = 10.0  # Monotonic: any origin.
        self.add_compute('host1')
        self.flags(full_refresh_interval=60, group='drs_host_cache')
        self.states()
        first = self.snapshot().full_loaded_at
        self.advance(30)
        self.states()
        self.assertEqual(first, self.snapshot().full_loaded_at)
        self.advance(30)
        self.states()
        self.assertEqual(70.0, self.snapshot().full_loaded_at)

    def test_zero_interval_reloads_in_full_only_the_first_time(self):
        self.add_compute('host1')
        self.flags(full_refresh_interval=0, group='drs_host_cache')
        self.states()
        first = self.snapshot()
        self.advance(3600)
        self.states()
        self.assertIsNot(first, self.snapshot())
        self.assertEqual(first.full_loaded_at,
                         self.snapshot().full_loaded_at)

    def test_snapshots_are_immutable(self):
        # Requests read a snapshot while a refresh builds the next one.
        self.add_compute('host1')
        self.states()
        snap = self.snapshot()
        entry, = snap.nodes.values()
        for obj, field in ((snap, 'nodes'), (entry, 'template'),
                           (snap.services['host1'], 'view')):
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              obj, field, None)

    def test_invalidate_reloads_everything(self):
        self.add_compute('host1')
        self.states()
        old = self.snapshot()
        self.manager.invalidate()
        self.states()
        new = self.snapshot()
        self.assertIsNot(old, new)
        self.assertEqual(self.now, new.full_loaded_at)

    def test_refresh_cells_caches_invalidates(self):
        # SIGHUP: SchedulerManager.reset() calls refresh_cells_caches().
        self.add_compute('host1')
        self.states()
        self.manager.refresh_cells_caches()
        self.assertEqual({}, self.manager.rows.snapshots)
        self.assertIn('host1', self.states())

    def test_full_refresh_heals_a_change_with_a_skewed_clock(self):
        compute = self.add_compute('host1')
        self.states()
        # A writer whose clock is far behind stamps a row older than the
        # incremental window: only the periodic full reload sees it.
        skewed = timeutils.utcnow() - datetime.timedelta(hours=1)
        self.stamp_compute(compute, vcpus_used=7, created_at=skewed,
                           updated_at=skewed)
        self.advance()
        self.assertEqual(0, self.states()['host1'].vcpus_used)
        self.flags(full_refresh_interval=60, group='drs_host_cache')
        self.advance(60)
        self.assertEqual(7, self.states()['host1'].vcpus_used)

    def test_node_not_yet_reported_waits_for_its_report(self):
        # A refresh that reads a node between its creation and its first
        # resource report must not build a HostState without ratios
        # (CPUWeigher would fail on it): the node appears once reported.
        compute = self.add_compute('host1', free_disk_gb=None)
        self.assertEqual({}, self.states())
        self.stamp_compute(compute, free_disk_gb=1000,
                           updated_at=timeutils.utcnow())
        self.advance()
        self.assertEqual(4.0, self.states()['host1'].cpu_allocation_ratio)

    def test_node_left_out_is_read_again_until_complete(self):
        # Its report's stamp may fall before the next read's window (the
        # report committed late): the node must still appear at the next
        # refresh, not only at the next full reload.
        compute = self.add_compute('host1', free_disk_gb=None)
        self.assertEqual({}, self.states())
        self.advance()
        self.assertEqual({}, self.states())  # Still not reported.
        old = timeutils.utcnow() - datetime.timedelta(hours=1)
        self.stamp_compute(compute, free_disk_gb=1000, created_at=old,
                           updated_at=old)
        self.advance()
        self.assertEqual(1000, self.states()['host1'].free_disk_mb // 1024)
        snap, = self.manager.rows.snapshots.values()
        self.assertEqual(frozenset(), snap.incomplete)

    def test_node_left_out_then_deleted_is_forgotten(self):
        compute = self.add_compute('host1', free_disk_gb=None)
        self.states()
        self.stamp_compute(compute, deleted=compute.id,
                           deleted_at=timeutils.utcnow())
        self.advance()
        self.assertEqual({}, self.states())
        snap, = self.manager.rows.snapshots.values()
        self.assertEqual(frozenset(), snap.incomplete)

    def test_failed_cell_contributes_no_host_and_is_retried(self):
        self.add_compute('host1')
        with mock_load_failure(self.manager):
            self.assertEqual({}, self.states())
        self.assertIn('host1', self.states())

    def test_rows_swapped_between_a_requests_two_steps(self):
        # A refresh between reading the computes and building the states
        # replaces the rows: the request parses the ones it got itself.
        self.add_compute('host1')
        self.states()
        computes, services = self.manager._get_computes_for_cells(
            self.ctxt, self.manager.enabled_cells, None)
        self.manager.invalidate()
        self.states()
        states = list(self.manager._get_host_states(self.ctxt, computes,
                                                    services))
        self.assertEqual(['host1'], [state.host for state in states])
        self.assertEqual(32768, states[0].free_ram_mb)

    def test_concurrent_stale_requests_refresh_once(self):
        self.add_compute('host1')
        load = self.manager.rows.load_cell
        loads = []

        def slow_load(cctxt, **kwargs):
            loads.append(cctxt.cell_uuid)
            time.sleep(0.2)
            return load(cctxt, **kwargs)

        self.manager.rows.load_cell = slow_load
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            sorted(self.states()))) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([['host1']] * 3, results)
        self.assertEqual([self.cell.uuid], loads)

    def test_invalidation_during_refresh_is_not_overwritten(self):
        self.add_compute('host1')
        load = self.manager.rows.load_cell

        def load_then_invalidate(cctxt, **kwargs):
            snap = load(cctxt, **kwargs)
            self.manager.invalidate()
            return snap

        self.manager.rows.load_cell = load_then_invalidate
        self.assertIn('host1', self.states())
        self.assertEqual({}, self.manager.rows.snapshots)


class ReadChangesTest(base.HostCacheTestCase):
    """What ``rows.read_changes`` returns, read directly."""

    def read(self, since):
        with self.cell_context() as cctxt:
            return rows.read_changes(cctxt, since)

    def test_full_read_returns_live_compute_rows_only(self):
        live = self.add_compute('host1')
        gone = self.add_compute('host2')
        gone.destroy()
        kept = self.add_instance('host1')
        self.add_instance('host1').destroy()
        with self.cell_context() as cctxt:
            # Other services of a compute's host, whose binaries sort
            # before and after nova-compute (nova-cert: old clouds).
            for binary in ('nova-cert', 'nova-conductor'):
                main_db_api.service_create(cctxt, {
                    'host': 'host1', 'binary': binary, 'topic': binary[5:],
                    'report_count': 0})
        changes = self.read(None)
        self.assertEqual([live.uuid],
                         [row.uuid for row in changes.compute_nodes])
        self.assertEqual(
            [('host1', 'nova-compute'), ('host2', 'nova-compute')],
            sorted((row.host, row.binary) for row in changes.services))
        self.assertEqual([(kept.uuid, 'host1', 0)],
                         [tuple(row) for row in changes.instances])

    def test_incremental_read_takes_each_stamp_from_since_on(self):
        since = datetime.datetime(2026, 1, 1, 12, 0, 0)
        before = since - datetime.timedelta(seconds=1)
        after = since + datetime.timedelta(seconds=1)
        # Nova deletes compute nodes and instances with oslo.db's
        # Query.soft_delete, which keeps updated_at: only deleted_at moves.
        stamps = {  # created_at, updated_at, deleted_at: read or not
            'created': ((since, None, None), True),
            'updated': ((before, since, None), True),
            'deleted': ((before, before, since), True),
            'deleted-later': ((before, before, after), True),
            'deleted-before': ((before, before, before), False),
            'unchanged': ((before, before, None), False),
        }
        uuids_of = {}
        for host, ((created, updated, deleted), _) in stamps.items():
            compute = self.add_compute(host)
            self.stamp_compute(compute, created_at=created,
                               updated_at=updated, deleted_at=deleted,
                               deleted=compute.id if deleted else 0)
            uuids_of[compute.uuid] = host
        changes = self.read(since)
        self.assertEqual(
            sorted(host for host, (_, read) in stamps.items() if read),
            sorted(uuids_of[row.uuid] for row in changes.compute_nodes))


def mock_load_failure(manager):
    return mock.patch.object(manager.rows, 'load_cell',
                             side_effect=exception.NovaException('down'))
