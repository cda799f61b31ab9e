"""A rebuilt compute node row reuses what was parsed from its unchanged
JSON columns, and only those."""

from nova import objects
from nova.pci import stats as pci_stats
from nova.scheduler import host_manager as nova_host_manager
from nova.scheduler import manager as scheduler_manager
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_utils.fixture import uuidsentinel as uuids

from tests.unit.host_manager import base
from tests.unit.host_manager import test_isolation
from tests.unit.host_manager import test_owner_trait


def metrics_json(value):
    return jsonutils.dumps([{'name': 'cpu.percent', 'value': value,
                             'source': 'virt',
                             'timestamp': timeutils.utcnow().isoformat()}])


def comparable(value):
    """``value`` with its Nova objects as primitives."""
    if isinstance(value, objects.base.NovaObject):
        return value.obj_to_primitive()
    if isinstance(value, pci_stats.PciDeviceStats):
        return value.pools, comparable(value.numa_topology)
    return value


def public(state):
    return {name: comparable(value) for name, value in vars(state).items()
            if not name.startswith('_')}


class ReuseTest(base.HostCacheTestCase):

    def setUp(self):
        super().setUp()
        self.compute = self.add_compute(
            'host1', numa_topology=test_isolation.numa_topology_json(),
            pci_device_pools=test_isolation.pci_pools(),
            supported_hv_specs=[objects.HVSpec(
                arch='x86_64', hv_type='kvm', vm_mode='hvm')],
            stats={'num_instances': '3', 'io_workload': '1'},
            metrics=metrics_json(0.3))
        self.states()
        self.before = self.entry()

    def entry(self):
        snap = self.manager.rows.snapshots[self.cell.uuid]
        return snap.nodes[self.compute.uuid]

    def report(self, **columns):
        """The compute writes ``columns``; the next request sees them."""
        self.stamp_compute(self.compute, updated_at=timeutils.utcnow(),
                           **columns)
        self.advance()
        self.states()
        after = self.entry()
        self.assertIsNot(self.before, after)
        return after

    def assert_parsed_as_nova_does(self, entry):
        with self.cell_context() as cctxt:
            compute = objects.ComputeNode.get_by_uuid(cctxt,
                                                      self.compute.uuid)
        stock = nova_host_manager.HostState('host1', 'host1', self.cell.uuid)
        stock._update_from_compute_node(compute)
        self.assertEqual(public(stock), public(entry.template))
        self.assertEqual(compute.obj_to_primitive(),
                         entry.compute.obj_to_primitive())

    def test_unchanged_json_is_reused(self):
        after = self.report(vcpus_used=5, free_ram_mb=1024)
        self.assertEqual(5, after.template.vcpus_used)
        old, new = self.before.template, after.template
        self.assertIs(old.numa_topology, new.numa_topology)
        self.assertIs(old.pci_stats, new.pci_stats)
        self.assertIs(old.metrics, new.metrics)
        self.assertIs(self.before.compute.pci_device_pools,
                      after.compute.pci_device_pools)
        self.assertIs(self.before.compute.supported_hv_specs[0],
                      after.compute.supported_hv_specs[0])
        self.assert_parsed_as_nova_does(after)

    def test_changed_metrics_are_parsed_again(self):
        after = self.report(metrics=metrics_json(0.9))
        self.assertIsNot(self.before.template.metrics, after.template.metrics)
        self.assertNotEqual(self.before.template.metrics[0].value,
                            after.template.metrics[0].value)
        # The NUMA topology did not change.
        self.assertIs(self.before.template.numa_topology,
                      after.template.numa_topology)
        self.assert_parsed_as_nova_does(after)

    def test_changed_numa_topology_is_parsed_again(self):
        numa = objects.NUMATopology.obj_from_db_obj(
            test_isolation.numa_topology_json())
        numa.cells[0].cpu_usage = 3
        numa.cells[0].memory_usage = 4096
        after = self.report(numa_topology=numa._to_json())
        self.assertEqual((3, 4096), (after.template.numa_topology.cells[0]
                                     .cpu_usage,
                                     after.template.numa_topology.cells[0]
                                     .memory_usage))
        # The PCI stats hold the topology: built again with it.
        self.assertIsNot(self.before.template.pci_stats,
                         after.template.pci_stats)
        self.assertIs(after.template.numa_topology,
                      after.template.pci_stats.numa_topology)
        self.assertIs(self.before.template.metrics, after.template.metrics)
        self.assert_parsed_as_nova_does(after)

    def test_changed_pci_pools_are_parsed_again(self):
        pools = test_isolation.pci_pools()
        pools[0].count = 1
        after = self.report(
            pci_stats=jsonutils.dumps(pools.obj_to_primitive()))
        self.assertEqual(1, test_isolation.free_pci(after.template))
        self.assertEqual(1, after.compute.pci_device_pools[0].count)
        self.assertIsNot(self.before.template.numa_topology,
                         after.template.numa_topology)
        self.assert_parsed_as_nova_does(after)

    def test_changed_stats_and_hypervisor_specs_are_parsed_again(self):
        after = self.report(
            stats=jsonutils.dumps({'num_instances': '4',
                                   'io_workload': '2'}),
            supported_instances=jsonutils.dumps([['aarch64', 'kvm',
                                                  'hvm']]))
        self.assertEqual((4, 2), (after.template.num_instances,
                                  after.template.num_io_ops))
        self.assertEqual([['aarch64', 'kvm', 'hvm']],
                         after.template.supported_instances)
        self.assertEqual('aarch64', after.compute.supported_hv_specs[0].arch)
        self.assert_parsed_as_nova_does(after)

    def test_a_group_reused_when_every_other_column_changed(self):
        numa = objects.NUMATopology.obj_from_db_obj(
            test_isolation.numa_topology_json())
        numa.cells[0].cpu_usage = 1
        pools = test_isolation.pci_pools()
        pools[0].count = 1
        after = self.report(
            numa_topology=numa._to_json(),
            pci_stats=jsonutils.dumps(pools.obj_to_primitive()),
            stats=jsonutils.dumps({'num_instances': '4'}),
            supported_instances=jsonutils.dumps([['aarch64', 'kvm',
                                                  'hvm']]))
        self.assertIs(self.before.template.metrics, after.template.metrics)
        self.assert_parsed_as_nova_does(after)

    def test_full_reload_reuses_unchanged_json(self):
        self.flags(full_refresh_interval=1, group='drs_host_cache')
        after = self.report(vcpus_used=5)
        self.assertEqual(self.now, self.manager.rows.snapshots[
            self.cell.uuid].full_loaded_at)
        self.assertIs(self.before.template.numa_topology,
                      after.template.numa_topology)

    def test_consumed_host_state_does_not_leak_into_the_next_pass(self):
        # A request consumes NUMA cells and PCI devices of a fork of the
        # template, whose objects the next row version then reuses.
        state = self.states()['host1']
        scheduler_manager.SchedulerManager._consume_selected_host(
            state, test_isolation.spec(numa=True, pci=True),
            instance_uuid=uuids.instance)
        self.assertEqual(2, state.numa_topology.cells[0].cpu_usage)
        self.assertEqual(1, test_isolation.free_pci(state))
        after = self.report(vcpus_used=2)
        self.assertIs(self.before.template.numa_topology,
                      after.template.numa_topology)
        self.assertEqual(0, after.template.numa_topology.cells[0].cpu_usage)
        self.assertEqual(2, test_isolation.free_pci(after.template))
        fork = self.states()['host1']
        self.assertEqual(0, fork.numa_topology.cells[0].cpu_usage)
        self.assertEqual(2, test_isolation.free_pci(fork))
        self.assert_parsed_as_nova_does(after)


class ServiceViewTest(base.HostCacheTestCase):
    """A heartbeat rebuilds the Service but copies the previous view."""

    def setUp(self):
        super().setUp()
        self.add_compute('host1')
        # An id past CPython's cached small ints, as in a real cloud.
        with self.cell_context() as cctxt:
            test_owner_trait.update_service(cctxt, 'host1', {'id': 1000})
        self.states()
        self.before = self.entry()
        self.assertEqual(1000, self.before.service.id)

    def entry(self):
        return self.manager.rows.snapshots[self.cell.uuid].services['host1']

    def write(self, **fields):
        """Save ``fields`` as Nova does (a report_count change is a
        heartbeat: the database stamps last_seen_up and updated_at)."""
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, 'host1')
            for name, value in fields.items():
                setattr(service, name, value)
            service.save()
        self.advance()
        states = self.states()
        after = self.entry()
        self.assertIsNot(self.before, after)
        self.assertEqual(dict(after.service), dict(after.view))
        self.assertIs(after.view, states['host1'].service)
        return after

    def test_heartbeat_copies_the_previous_view(self):
        after = self.write(report_count=2)
        self.assertEqual(2, after.view['report_count'])
        self.assertGreater(after.view['last_seen_up'],
                           self.before.service.created_at)
        self.assertIs(self.before.view['created_at'],
                      after.view['created_at'])

    def test_one_heartbeat_column_alone_copies_the_previous_view(self):
        with self.cell_context() as cctxt:
            test_owner_trait.update_service(
                cctxt, 'host1', {'updated_at': timeutils.utcnow()})
        self.advance()
        self.states()
        after = self.entry()
        self.assertIsNot(self.before, after)
        self.assertIs(self.before.view['created_at'],
                      after.view['created_at'])

    def test_other_changes_rebuild_the_view(self):
        after = self.write(report_count=2, disabled=True)
        self.assertTrue(after.view['disabled'])
        self.assertIsNot(self.before.view['created_at'],
                         after.view['created_at'])
