"""Disabled and forced-down services are seen by the next request, however
fresh the cached rows; the expensive rows stay cached."""

import threading

from nova import context as nova_context
from nova import objects
from nova.scheduler.filters import compute_filter
from oslo_utils import timeutils

from nova_drs_scheduler.host_manager import rows
from nova_drs_scheduler.host_manager import snapshot
from tests.unit.host_manager import base


class FlagsTest(base.HostCacheTestCase):
    """The clock never moves here: every row but the flags is cached."""

    def setUp(self):
        super().setUp()
        self.add_compute('host1')
        self.add_compute('host2')
        self.states()  # loads the cache
        self.cached = self.cached_entry('host1')

    def cached_entry(self, host):
        return self.manager.rows.snapshots[self.cell.uuid].services[host]

    def update_service(self, host='host1', **fields):
        """What Nova's API does for PUT /os-services."""
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, host)
            for name, value in fields.items():
                setattr(service, name, value)
            service.save()

    def passing(self):
        passes = compute_filter.ComputeFilter().host_passes
        return sorted(host for host, state in self.states().items()
                      if passes(state, objects.RequestSpec()))

    def test_disabled_at_once(self):
        self.update_service(disabled=True, disabled_reason='maintenance')
        states = self.states()
        self.assertTrue(states['host1'].service['disabled'])
        self.assertEqual('maintenance',
                         states['host1'].service['disabled_reason'])
        self.assertEqual(['host2'], self.passing())
        # Nothing else was read: the cached row is still the old one.
        self.assertIs(self.cached, self.cached_entry('host1'))
        self.assertFalse(self.cached.service.disabled)
        self.assertFalse(self.cached.view['disabled'])

    def test_enabled_at_once(self):
        self.update_service(disabled=True, disabled_reason='maintenance')
        self.advance()
        self.assertEqual(['host2'], self.passing())
        self.assertTrue(self.cached_entry('host1').service.disabled)
        self.update_service(disabled=False, disabled_reason=None)
        self.assertEqual(['host1', 'host2'], self.passing())
        self.assertFalse(self.states()['host1'].service['disabled'])

    def test_reason_changed_while_disabled(self):
        self.update_service(disabled=True, disabled_reason='one')
        self.advance()
        self.states()
        self.update_service(disabled_reason='two')
        self.assertEqual('two',
                         self.states()['host1'].service['disabled_reason'])

    def test_forced_down_at_once_and_back(self):
        self.update_service(forced_down=True)
        self.assertEqual(['host2'], self.passing())
        self.advance()
        self.assertEqual(['host2'], self.passing())
        self.update_service(forced_down=False)
        self.assertEqual(['host1', 'host2'], self.passing())

    def test_services_handed_to_nova_carry_the_flags(self):
        # What _get_computes_for_cells returns, as stock's does, is a
        # Service with the flags as they are now; the cached object is
        # not changed.
        self.update_service(disabled=True, disabled_reason='maintenance')
        _nodes, services = self.manager._get_computes_for_cells(
            self.ctxt, [self.cell], None)
        service = services['host1']
        self.assertIsNot(self.cached.service, service)
        self.assertTrue(service.disabled)
        self.assertEqual('maintenance', service.disabled_reason)
        self.assertEqual(set(), service.obj_what_changed())
        self.assertEqual(self.cached.service.report_count,
                         service.report_count)
        self.assertIs(self.cached_entry('host2').service, services['host2'])
        self.assertFalse(self.cached.service.disabled)

    def test_overlay_reused_until_the_row_is_refreshed(self):
        self.update_service(disabled=True)
        first = self.states()['host1'].service
        self.assertIs(first, self.states()['host1'].service)
        self.advance()
        refreshed = self.states()['host1'].service
        self.assertTrue(refreshed['disabled'])
        self.assertIs(self.cached_entry('host1').view, refreshed)
        self.assertIsNone(self.manager._overlays.get(self.cell.uuid, 'host1'))

    def test_a_deleted_service_cached_as_disabled_stays_so(self):
        # The read names host1 and finds no live row: its cached flags
        # stand until a refresh drops the row, never "enabled".
        self.update_service(disabled=True)
        self.advance()
        self.states()
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, 'host1')
        self.stamp_service(service, deleted=service.id,
                           deleted_at=timeutils.utcnow())
        self.assertEqual(['host2'], self.passing())
        self.assertTrue(self.states()['host1'].service['disabled'])

    def test_invalidate_forgets_the_overlays(self):
        self.update_service(disabled=True)
        self.states()
        self.assertIsNotNone(
            self.manager._overlays.get(self.cell.uuid, 'host1'))
        self.manager.invalidate()
        self.assertIsNone(self.manager._overlays.get(self.cell.uuid, 'host1'))
        self.assertTrue(self.states()['host1'].service['disabled'])

    def test_concurrent_requests_agree(self):
        # Requests in threads (native, or green under eventlet) read the
        # flags each; each sees host1 disabled.
        self.update_service(disabled=True)
        seen = []

        def request():
            seen.append(self.states()['host1'].service['disabled'])

        threads = [threading.Thread(target=request) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([True] * 8, seen)


class ServiceFlagsReadTest(base.HostCacheTestCase):
    """``rows.service_flags`` on its own."""

    def setUp(self):
        super().setUp()
        for host in ('host1', 'host2', 'host3', 'host4'):
            self.add_compute(host)

    def set(self, host, **fields):
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, host)
            for name, value in fields.items():
                setattr(service, name, value)
            service.save()

    def read(self, hosts=frozenset()):
        with self.cell_context() as cctxt:
            return sorted(tuple(row) for row in
                          rows.service_flags(cctxt, frozenset(hosts)))

    def test_only_disabled_or_forced_down_and_named_hosts(self):
        self.assertEqual([], self.read())
        self.set('host1', disabled=True, disabled_reason='why')
        self.set('host2', forced_down=True)
        self.assertEqual([('host1', True, 'why', False),
                          ('host2', False, None, True)], self.read())
        self.assertEqual([('host1', True, 'why', False),
                          ('host2', False, None, True),
                          ('host3', False, None, False)],
                         self.read({'host3', 'nowhere'}))

    def test_other_binaries_and_deleted_rows_left_out(self):
        with self.cell_context() as cctxt:
            objects.Service(cctxt, host='host1', binary='nova-conductor',
                            topic='conductor', disabled=True).create()
            gone = objects.Service.get_by_compute_host(cctxt, 'host4')
        self.set('host4', disabled=True)
        self.stamp_service(gone, deleted=gone.id,
                           deleted_at=timeutils.utcnow())
        self.assertEqual([], self.read({'host4'}))


class OverlayTest(base.HostCacheTestCase):
    """``snapshot.overlay_flags`` on a loaded snapshot."""

    def setUp(self):
        super().setUp()
        self.add_compute('host1')
        self.add_compute('host2')
        self.set('host2', disabled=True, disabled_reason='r')
        ctxt = nova_context.get_admin_context()
        with nova_context.target_cell(ctxt, self.cell) as cctxt:
            self.snap = snapshot.load(cctxt, None,
                                      self.manager.host_state_cls, 1.0,
                                      self.manager._conf)

    def set(self, host, **fields):
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, host)
            for name, value in fields.items():
                setattr(service, name, value)
            service.save()

    def test_flagged_hosts_of_a_snapshot(self):
        self.assertEqual(frozenset({'host2'}), self.snap.flagged)

    def test_only_differing_known_hosts(self):
        result = snapshot.overlay_flags(self.snap, [
            ('host1', True, 'x', False),   # disabled since
            ('host2', True, 'r', False),   # as cached
            ('host9', True, None, False),  # not cached: no node either
        ])
        self.assertEqual(['host1'], list(result))
        overlay = result['host1']
        self.assertIs(self.snap.services['host1'], overlay.cached)
        self.assertEqual((True, 'x', False), overlay.current.flags)
        self.assertEqual((False, None, False), overlay.cached.flags)
        # The rest of the view is the cached one.
        self.assertEqual(dict(overlay.cached.view, disabled=True,
                              disabled_reason='x'),
                         dict(overlay.current.view))

    def test_reused_while_cached_entry_and_flags_are_the_same(self):
        flags = [('host2', False, None, False)]
        first = snapshot.overlay_flags(self.snap, flags)
        again = snapshot.overlay_flags(self.snap, flags, first)
        self.assertIs(first['host2'], again['host2'])
        other = snapshot.overlay_flags(
            self.snap, [('host2', False, None, True)], first)
        self.assertIsNot(first['host2'], other['host2'])
        self.assertEqual((False, None, True), other['host2'].current.flags)
