"""The OWNER_NOVA decision from cached service rows agrees with Nova's
per-request query, and is only taken when the rows can answer."""

import os_traits
import testtools
from nova import objects
from nova.db.main import api as main_db_api
from nova.db.main import models
from nova.objects import service as service_obj
from nova.scheduler import request_filter
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler import compat
from nova_drs_scheduler import owner_trait
from tests.unit.host_manager import base
from tests.unit.host_manager import test_requests

#: None before Nova 34, which has no OWNER_NOVA request filter.
THRESHOLD = compat.owner_trait_min_compute_version()
OLD = (THRESHOLD or service_obj.SERVICE_VERSION) - 1


@main_db_api.pick_context_manager_writer
def update_service(context, host, values):
    # Service.save() refuses to go below the minimum version: write the row.
    context.session.query(models.Service).filter_by(
        host=host, binary='nova-compute').update(
            values, synchronize_session=False)


class MinVersionTest(base.HostCacheTestCase):

    NUMBER_OF_CELLS = 2

    def setUp(self):
        super().setUp()
        self.cell2 = self.cell_mappings['cell2']
        self.manager.refresh_cells_caches()
        self.add_compute('host1')
        self.add_compute('host2')
        self.add_compute('host3', cell=self.cell2)

    def set_service(self, host, cell=None, **values):
        with self.cell_context(cell) as cctxt:
            update_service(cctxt, host, values)

    def assertAgreesWithNova(self, expected):
        self.advance()  # the next read sees the rows written so far
        self.states()
        nova = service_obj.get_minimum_version_all_cells(
            self.ctxt, ['nova-compute'])
        self.assertEqual(expected, nova)
        self.assertEqual(nova, self.manager.min_compute_version())

    def test_current_computes(self):
        self.assertAgreesWithNova(service_obj.SERVICE_VERSION)

    def test_an_old_compute_in_any_cell(self):
        self.set_service('host3', cell=self.cell2, version=OLD)
        self.assertAgreesWithNova(OLD)

    def test_a_forced_down_old_compute_does_not_count(self):
        self.set_service('host1', version=OLD, forced_down=True)
        self.assertAgreesWithNova(service_obj.SERVICE_VERSION)
        # Nor a cell whose every compute is.
        self.set_service('host3', cell=self.cell2, version=OLD,
                         forced_down=True)
        self.assertAgreesWithNova(service_obj.SERVICE_VERSION)

    def test_a_cell_whose_minimum_is_zero_is_left_out(self):
        self.set_service('host1', version=OLD)
        self.set_service('host3', cell=self.cell2, version=0)
        self.assertAgreesWithNova(OLD)
        self.set_service('host1', version=0)
        self.set_service('host3', cell=self.cell2, version=OLD)
        self.assertAgreesWithNova(OLD)

    def test_no_answer_without_fresh_rows_for_every_cell(self):
        self.assertIsNone(self.manager.min_compute_version())
        self.states()
        self.assertIsNotNone(self.manager.min_compute_version())
        self.advance()
        self.assertIsNone(self.manager.min_compute_version())


@testtools.skipIf(THRESHOLD is None, 'Nova before 34 has no OWNER_NOVA '
                  'request filter: see NoOwnerFilterTest')
class RequireTraitTest(base.HostCacheTestCase):

    def setUp(self):
        super().setUp()
        self.compute = self.add_compute('host1')
        self.states()

    def require(self, spec_obj, host_manager=None):
        added = owner_trait.require_if_all_upgraded(
            spec_obj, host_manager or self.manager)
        self.assertEqual(added,
                         os_traits.OWNER_NOVA in spec_obj.root_required)
        return added

    def test_added_when_every_compute_is_new_enough(self):
        spec_obj = test_requests.full_spec()
        self.assertTrue(self.require(spec_obj))
        # Nova's filter then finds it and skips its own query.
        with self.count_sql() as sql:
            self.assertTrue(request_filter.owner_nova_filter(
                self.ctxt, spec_obj))
        self.assertEqual([], sql.statements)

    def test_left_to_nova_when_a_compute_is_old(self):
        with self.cell_context() as cctxt:
            update_service(cctxt, 'host1', {'version': OLD})
        self.advance()
        self.states()
        self.assertFalse(self.require(test_requests.full_spec()))

    def test_left_to_nova_when_rows_are_stale(self):
        self.advance()
        self.assertFalse(self.require(test_requests.full_spec()))

    def test_left_to_nova_for_rebuilds_and_pci_requests(self):
        rebuild = test_requests.full_spec(
            scheduler_hints={'_nova_check_type': ['rebuild']})
        self.assertFalse(self.require(rebuild))
        pci = test_requests.full_spec(
            pci_requests=objects.InstancePCIRequests(requests=[
                objects.InstancePCIRequest(
                    count=1, spec=[{'vendor_id': '8086'}],
                    request_id=uuids.pci)]))
        self.assertFalse(self.require(pci))

    def test_left_to_nova_with_a_host_manager_that_cannot_tell(self):
        self.assertFalse(self.require(test_requests.full_spec(),
                                      host_manager=object()))


@testtools.skipIf(THRESHOLD is not None, 'Nova 34 has the OWNER_NOVA filter')
class NoOwnerFilterTest(base.HostCacheTestCase):
    """Nova 31-33: computes report no OWNER_NOVA trait; never require it."""

    def test_never_added(self):
        self.add_compute('host1')
        self.states()
        self.assertIsNotNone(self.manager.min_compute_version())
        spec_obj = test_requests.full_spec()
        self.assertFalse(owner_trait.require_if_all_upgraded(
            spec_obj, self.manager))
        self.assertNotIn(os_traits.OWNER_NOVA, spec_obj.root_required)
