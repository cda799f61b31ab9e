"""What a scheduling request sees, and what it costs in SQL."""

from unittest import mock

from nova import exception
from nova import objects
from nova.scheduler import host_manager as nova_host_manager
from oslo_utils import timeutils
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.host_manager import rows
from tests.unit.host_manager import base


def full_spec(**fields):
    """A RequestSpec every default filter and weigher can read."""
    values = dict(
        flavor=objects.Flavor(vcpus=1, memory_mb=512, root_gb=1,
                              ephemeral_gb=0, swap=0, extra_specs={}),
        image=objects.ImageMeta.from_dict({'properties': {}}),
        instance_group=None, scheduler_hints={}, force_hosts=None,
        force_nodes=None, ignore_hosts=None, requested_destination=None,
        numa_topology=None, availability_zone=None, project_id='p',
        pci_requests=objects.InstancePCIRequests(requests=[]),
        requested_resources=[], num_instances=1)
    values.update(fields)
    return objects.RequestSpec(**values)


class SQLCountTest(base.HostCacheTestCase):
    """A request that finds a fresh cache issues one SQL statement: the
    services that are disabled or forced down, a few columns of few rows.
    """

    def setUp(self):
        super().setUp()
        self.computes = [self.add_compute('host%d' % i) for i in range(4)]
        for compute in self.computes:
            self.add_instance(compute.host)

    def schedule(self, manager):
        """Everything HostManager does for one instance of a request."""
        spec_obj = full_spec()
        states = manager.get_host_states_by_uuids(
            self.ctxt, [c.uuid for c in self.computes], spec_obj)
        passing = manager.get_filtered_hosts(states, spec_obj)
        weighed = manager.get_weighed_hosts(passing, spec_obj)
        weighed[0].obj.consume_from_request(spec_obj)
        return weighed

    def test_only_the_flags_from_a_fresh_cache(self):
        self.schedule(self.manager)  # loads the cache
        self.advance(self.MAX_STALENESS - 0.1)
        with self.count_sql() as sql:
            weighed = self.schedule(self.manager)
        self.assertEqual(4, len(weighed))
        [read] = sql.queries
        # Four columns, and only the rows that are disabled or forced
        # down: none here, whatever the number of hosts.
        self.assertEqual(
            'SELECT services.host, services.disabled, '
            'services.disabled_reason, services.forced_down \n'
            'FROM services \n'
            'WHERE services.binary = ? AND services.deleted = ? AND '
            '(services.disabled = 1 OR services.forced_down = 1)', read)

    def test_flags_read_names_the_hosts_cached_as_disabled(self):
        # So that it sees them enabled again, or deleted.
        with self.cell_context() as cctxt:
            service = objects.Service.get_by_compute_host(cctxt, 'host2')
            service.disabled = True
            service.save()
        self.schedule(self.manager)
        with self.count_sql() as sql:
            self.schedule(self.manager)
        [read] = sql.queries
        self.assertIn('OR services.host IN (?)', read)

    def test_only_the_flags_with_instance_info_pushed_by_computes(self):
        for compute in self.computes:
            self.manager._instance_info[compute.host] = {
                'instances': {}, 'updated': True}
        self.schedule(self.manager)
        with self.count_sql() as sql:
            self.schedule(self.manager)
        self.assertEqual(1, len(sql.flag_reads))
        self.assertEqual([], sql.row_reads)

    def test_no_sql_for_a_request_without_nodes(self):
        self.schedule(self.manager)
        with self.count_sql() as sql:
            self.assertEqual({}, self.states([]))
        self.assertEqual([], sql.statements)

    def test_stale_cache_costs_one_read_per_cell(self):
        self.schedule(self.manager)
        self.advance()
        with self.count_sql() as sql:
            self.schedule(self.manager)
        self.assertEqual(3, len(sql.row_reads), sql.queries)
        self.assertEqual(1, len(sql.flag_reads))

    def test_stock_host_manager_queries_per_request(self):
        # The baseline this manager removes: services, nodes, and one
        # instance query per host whose instances were not pushed.
        stock = nova_host_manager.HostManager()
        self.schedule(stock)
        with self.count_sql() as sql:
            self.schedule(stock)
        self.assertGreaterEqual(len(sql.queries), 2 + len(self.computes))


class InstanceInfoTest(base.HostCacheTestCase):

    def setUp(self):
        super().setUp()
        self.add_compute('host1')
        self.add_compute('host2')
        self.instance = self.add_instance('host1')

    def test_instances_from_rows_until_the_compute_pushes(self):
        self.assertEqual([self.instance.uuid],
                         list(self.states()['host1'].instances))
        self.manager.update_instance_info(
            self.ctxt, 'host1', objects.InstanceList(objects=[
                objects.Instance(uuid=uuids.a),
                objects.Instance(uuid=uuids.b)]))
        self.assertEqual({uuids.a, uuids.b},
                         set(self.states()['host1'].instances))

    def test_re_read_for_a_compute_wins_over_older_rows(self):
        # A compute's first instance report makes stock re-read the host:
        # that read is newer than the cached rows, or as old (the same
        # instant on the cache's clock), and is used at once.
        self.states()
        new = self.add_instance('host2')
        self.manager.update_instance_info(
            self.ctxt, 'host2', objects.InstanceList(objects=[new]))
        self.assertEqual([new.uuid], list(self.states()['host2'].instances))
        other = self.add_instance('host1')
        self.advance(1)
        self.manager.update_instance_info(
            self.ctxt, 'host1', objects.InstanceList(objects=[other]))
        self.assertEqual({self.instance.uuid, other.uuid},
                         set(self.states()['host1'].instances))

    def test_instances_read_at_start_up_lose_to_the_rows(self):
        # Stock reads every host's instances when the service starts; the
        # rows refreshed since are newer, until the compute pushes.
        self.manager._instance_info['host1'] = {'instances': {},
                                                'updated': False}
        self.assertEqual([self.instance.uuid],
                         list(self.states()['host1'].instances))

    def test_moved_and_deleted_instances_follow_within_the_bound(self):
        self.states()
        other = self.add_instance('host2')
        self.instance.host = 'host2'
        self.instance.save()
        self.advance()
        states = self.states()
        self.assertEqual({}, states['host1'].instances)
        self.assertEqual({self.instance.uuid, other.uuid},
                         set(states['host2'].instances))
        other.destroy()
        self.advance()
        self.assertEqual([self.instance.uuid],
                         list(self.states()['host2'].instances))


class RequestSemanticsTest(base.HostCacheTestCase):

    NUMBER_OF_CELLS = 2

    def setUp(self):
        super().setUp()
        self.cell2 = self.cell_mappings['cell2']
        self.manager.refresh_cells_caches()
        self.one = self.add_compute('host1')
        self.two = self.add_compute('host2', cell=self.cell2)

    def test_a_failed_cell_does_not_hide_the_others(self):
        load = self.manager.rows.load_cell

        def cell1_down(cctxt, **kwargs):
            if cctxt.cell_uuid == self.cell.uuid:
                raise exception.NovaException('down')
            return load(cctxt, **kwargs)

        self.manager.rows.load_cell = cell1_down
        self.assertEqual(['host2'], list(self.states()))

    def test_flags_read_in_each_cell_with_nodes_in_the_request(self):
        self.states()
        with self.count_sql() as sql:
            self.states()
        self.assertEqual(2, len(sql.flag_reads))
        with self.count_sql() as sql:
            self.states([self.two.uuid])
        self.assertEqual(1, len(sql.flag_reads))

    def test_a_cell_whose_flags_cannot_be_read_contributes_no_host(self):
        # Its cached rows may show a host enabled that no longer is.
        self.states()
        read = rows.service_flags

        def cell1_down(cctxt, hosts):
            if cctxt.cell_uuid == self.cell.uuid:
                raise exception.NovaException('down')
            return read(cctxt, hosts)

        with mock.patch.object(rows, 'service_flags', cell1_down):
            self.assertEqual(['host2'], list(self.states()))
        self.assertIn('Failed to read the disabled and forced-down compute '
                      'services of cell %s' % self.cell.uuid,
                      self.stdlog.logger.output)
        self.assertEqual(['host1', 'host2'], sorted(self.states()))

    def test_a_node_without_a_service_is_left_out_like_stock(self):
        self.add_compute('host3')
        with self.cell_context() as cctxt:
            gone = objects.Service.get_by_compute_host(cctxt, 'host1')
        # Its service row deleted behind the objects' back: nodes stay.
        self.stamp_service(gone, deleted=gone.id,
                           deleted_at=timeutils.utcnow())
        self.assertEqual(['host2', 'host3'], sorted(self.states()))
        self.assertIn('No compute service record found for host host1',
                      self.stdlog.logger.output)

    def test_requested_cell_restricts_the_request(self):
        destination = objects.Destination(cell=self.cell2)
        spec_obj = objects.RequestSpec(requested_destination=destination)
        self.assertEqual(['host2'], list(self.states(spec=spec_obj)))
        self.assertEqual(['host1', 'host2'], sorted(self.states()))

    def test_only_the_uuids_placement_returned(self):
        self.assertEqual(['host2'], list(self.states([self.two.uuid])))
        self.assertEqual({}, self.states([]))

    def test_forced_and_ignored_hosts(self):
        def passing(**fields):
            spec_obj = full_spec(**fields)
            states = self.manager.get_host_states_by_uuids(
                self.ctxt, None, spec_obj)
            return sorted(state.host for state in
                          self.manager.get_filtered_hosts(states, spec_obj))

        self.assertEqual(['host2'], passing(ignore_hosts=['host1']))
        self.assertEqual(['host1'], passing(force_hosts=['host1']))
        self.assertEqual(['host2'], passing(force_nodes=['host2']))

    def test_aggregate_updates_apply_without_refresh(self):
        self.states()
        aggregate = objects.Aggregate(id=7, name='a', hosts=['host1'],
                                      metadata={'k': 'v'})
        self.manager.update_aggregates([aggregate])
        self.assertEqual([aggregate], self.states()['host1'].aggregates)
        self.manager.delete_aggregate(aggregate)
        self.assertEqual([], self.states()['host1'].aggregates)

    def test_compute_nodes_by_host_or_node_from_cache(self):
        self.states()
        found = []
        with self.count_sql() as sql:
            for host, node, cell in (('host1', None, None),
                                     ('host2', None, None),
                                     (None, 'host1', None),
                                     (None, 'host2', None),
                                     (None, 'host1', self.cell)):
                found.append([n.uuid for n in (
                    self.manager.get_compute_nodes_by_host_or_node(
                        self.ctxt, host, node, cell=cell))])
        self.assertEqual([], sql.statements)
        one, two = [self.one.uuid], [self.two.uuid]
        self.assertEqual([one, two, one, two, one], found)

    def test_compute_nodes_by_host_or_node_falls_back_to_the_db(self):
        self.states()
        self.add_compute('host3')
        nodes = self.manager.get_compute_nodes_by_host_or_node(
            self.ctxt, 'host3', 'host3')
        self.assertEqual(['host3'], [n.host for n in nodes])
        self.assertEqual(
            [], list(self.manager.get_compute_nodes_by_host_or_node(
                self.ctxt, 'nowhere', None)))
