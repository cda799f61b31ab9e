"""Bug 1742827: what one request consumes never leaks into the next."""

import copy

from nova import objects
from nova.scheduler import manager as scheduler_manager
from nova.scheduler.filters import numa_topology_filter
from nova.scheduler.filters import pci_passthrough_filter
from oslo_utils import timeutils
from oslo_utils.fixture import uuidsentinel as uuids

from tests.unit.host_manager import base


def numa_topology_json():
    cell = objects.NUMACell(
        id=0, cpuset={0, 1, 2, 3}, pcpuset=set(), memory=16384,
        cpu_usage=0, memory_usage=0, siblings=[],
        mempages=[objects.NUMAPagesTopology(size_kb=4, total=4194304,
                                            used=0)],
        pinned_cpus=set(), socket=0,
        network_metadata=objects.NetworkMetadata(physnets=set(),
                                                 tunneled=False))
    return objects.NUMATopology(cells=[cell])._to_json()


def pci_pools():
    return objects.PciDevicePoolList(objects=[objects.PciDevicePool(
        vendor_id='8086', product_id='1520', numa_node=0, tags={},
        count=2)])


def spec(numa=False, pci=False, group=None):
    flavor = objects.Flavor(vcpus=2, memory_mb=2048, root_gb=10,
                            ephemeral_gb=0, swap=0, extra_specs={})
    requests = [objects.InstancePCIRequest(
        count=1, spec=[{'vendor_id': '8086', 'product_id': '1520'}],
        request_id=None)] if pci else []
    numa_topology = objects.InstanceNUMATopology(cells=[
        objects.InstanceNUMACell(id=0, cpuset={0, 1}, pcpuset=set(),
                                 memory=2048)]) if numa else None
    return objects.RequestSpec(
        flavor=flavor, numa_topology=numa_topology,
        pci_requests=objects.InstancePCIRequests(requests=requests),
        requested_resources=[], instance_group=group)


def free_pci(state):
    return sum(pool['count'] for pool in state.pci_stats.pools)


class IsolationTest(base.HostCacheTestCase):

    def setUp(self):
        super().setUp()
        self.compute = self.add_compute(
            'host1', numa_topology=numa_topology_json(),
            pci_device_pools=pci_pools())

    def consume(self, state, spec_obj, instance_uuid=uuids.instance):
        scheduler_manager.SchedulerManager._consume_selected_host(
            state, spec_obj, instance_uuid=instance_uuid)

    def test_next_request_sees_counters_never_numa_or_pci(self):
        first = self.states()['host1']
        self.consume(first, spec(numa=True, pci=True))
        self.assertEqual(32768 - 2048, first.free_ram_mb)
        self.assertEqual(2, first.vcpus_used)
        self.assertEqual(1, free_pci(first))
        self.assertEqual(2, first.numa_topology.cells[0].cpu_usage)

        # The cached row does not show the placement yet: the counters
        # consume_from_request changed are carried, as stock Nova would
        # read them once the compute saved its usage; the NUMA cells and
        # PCI pools, and the template, stay untouched.
        second = self.states()['host1']
        self.assertIsNot(first, second)
        self.assertEqual(
            (32768 - 2048, 990 * 1024, 2, 1, 1),
            (second.free_ram_mb, second.free_disk_mb, second.vcpus_used,
             second.num_instances, second.num_io_ops))
        self.assertEqual(2, free_pci(second))
        self.assertEqual(0, second.numa_topology.cells[0].cpu_usage)
        self.assertNotIn(uuids.instance, second.instances)
        # So does every later request, until the row shows the placement.
        self.assertEqual(32768 - 2048, self.states()['host1'].free_ram_mb)

    def test_database_row_replaces_what_was_placed(self):
        self.consume(self.states()['host1'], spec())
        # The compute claims the instance and saves its usage.
        with self.cell_context() as cctxt:
            compute = objects.ComputeNode.get_by_host_and_nodename(
                cctxt, 'host1', 'host1')
            compute.memory_mb_used = 2048
            compute.free_ram_mb = 32768 - 2048
            compute.vcpus_used = 2
            compute.save()
        self.assertEqual(32768 - 2048, self.states()['host1'].free_ram_mb)
        self.advance()
        # Counted once, from the row.
        state = self.states()['host1']
        self.assertEqual((32768 - 2048, 2),
                         (state.free_ram_mb, state.vcpus_used))

    def test_row_with_less_in_use_replaces_what_was_placed(self):
        # Another instance left as ours arrived: the usage the row shows
        # went down, and the row still replaces what was placed.
        self.stamp_compute(self.compute, vcpus_used=4,
                           updated_at=timeutils.utcnow())
        self.advance()
        self.consume(self.states()['host1'], spec())
        self.stamp_compute(self.compute, vcpus_used=2,
                           updated_at=timeutils.utcnow())
        self.advance()
        self.assertEqual(2, self.states()['host1'].vcpus_used)

    def test_placement_the_row_never_shows_is_forgotten(self):
        # At the first refresh more than 120 s after it (doc/host-manager.md).
        self.flags(max_staleness=0.2, group='drs_host_cache')
        self.consume(self.states()['host1'], spec())
        self.advance(120)
        self.assertEqual(32768 - 2048, self.states()['host1'].free_ram_mb)
        self.advance(0.5)
        self.assertEqual(32768, self.states()['host1'].free_ram_mb)

    def test_placed_beside_a_reload_counts_against_the_equal_row(self):
        # A request that began before an invalidation consumes after it:
        # the rows read again are equal, so its placement still counts.
        state = self.states()['host1']
        self.manager.invalidate()
        self.states()
        self.consume(state, spec())
        self.assertEqual(32768 - 2048, self.states()['host1'].free_ram_mb)

    def test_invalidate_forgets_what_was_placed(self):
        self.consume(self.states()['host1'], spec())
        self.manager.invalidate()
        self.assertEqual(32768, self.states()['host1'].free_ram_mb)

    def test_multi_create_consumes_cumulatively_within_a_request(self):
        state = self.states()['host1']
        for uuid in (uuids.i1, uuids.i2):
            self.consume(state, spec(numa=True, pci=True), uuid)
        self.assertEqual(32768 - 4096, state.free_ram_mb)
        self.assertEqual(4, state.vcpus_used)
        self.assertEqual(2, state.num_instances)
        self.assertEqual(0, free_pci(state))
        self.assertEqual(4, state.numa_topology.cells[0].cpu_usage)

    def test_filter_limits_do_not_leak(self):
        self.states()['host1'].limits['vcpu'] = 1
        self.assertEqual({}, self.states()['host1'].limits)

    def test_group_stub_instances_do_not_leak(self):
        # _consume_selected_host adds the instance to HostState.instances
        # for the anti-affinity filter of the next instance of the request.
        self.manager.update_instance_info(
            self.ctxt, 'host1', objects.InstanceList(objects=[
                objects.Instance(uuid=uuids.a),
                objects.Instance(uuid=uuids.b)]))
        group = objects.InstanceGroup(policy='anti-affinity', hosts=[],
                                      members=[])
        state = self.states()['host1']
        self.consume(state, spec(group=group), uuids.new)
        self.assertIn(uuids.new, state.instances)
        self.assertEqual({uuids.a, uuids.b},
                         set(self.states()['host1'].instances))
        self.assertEqual({uuids.a, uuids.b},
                         set(self.manager._instance_info['host1']
                             ['instances']))

    def test_allocation_candidates_and_updated_are_per_request(self):
        state = self.states()['host1']
        updated = state.updated
        state.allocation_candidates.append({'allocations': {}})
        state.updated = 'reset'  # as _ensure_sufficient_hosts does
        again = self.states()['host1']
        self.assertEqual([], again.allocation_candidates)
        self.assertEqual(updated, again.updated)

    def test_template_is_never_consumed(self):
        self.consume(self.states()['host1'], spec(numa=True, pci=True))
        template = next(iter(
            self.manager.rows.snapshots[self.cell.uuid].nodes.values())).template
        self.assertEqual(0, template.vcpus_used)
        self.assertEqual(2, free_pci(template))
        self.assertEqual(0, template.numa_topology.cells[0].cpu_usage)

    def test_numa_and_pci_filters_leave_the_template_alone(self):
        # Forks share these two objects with the template until they consume.
        state = self.states()['host1']
        template = next(iter(
            self.manager.rows.snapshots[self.cell.uuid].nodes.values())).template
        numa = template.numa_topology.obj_to_primitive()
        pools = copy.deepcopy(template.pci_stats.pools)
        numa_spec = spec(numa=True)
        numa_spec.image = objects.ImageMeta.from_dict({'properties': {}})
        numa_spec.instance_uuid = uuids.instance
        # Whatever its verdict, the filter has fitted the instance against
        # the host's NUMA cells, which is what could have touched them.
        numa_topology_filter.NUMATopologyFilter().host_passes(
            state, numa_spec)
        state.allocation_candidates = [{'mappings': {}}]
        self.assertTrue(pci_passthrough_filter.PciPassthroughFilter()
                        .host_passes(state, spec(pci=True)))
        self.assertEqual(numa, template.numa_topology.obj_to_primitive())
        self.assertEqual(pools, template.pci_stats.pools)
