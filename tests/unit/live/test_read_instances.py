"""live.read_instances against real cell databases (SQLite): the instances
Nova's InstanceList would list, as rows, and their Instance objects as
Nova makes them; live.read_cloud's hosts and migrations from the same
databases."""

import contextlib
import datetime
from unittest import mock

import sqlalchemy
from nova import context as nova_context
from nova import objects
from nova import test
from nova.compute import vm_states
from nova.db.main import api as main_db_api
from oslo_utils import fixture as utils_fixture
from oslo_utils import uuidutils

from nova_drs_scheduler.rebalance import live


class ReadInstancesTest(test.TestCase):

    NUMBER_OF_CELLS = 2

    def setUp(self):
        super().setUp()
        self.ctxt = nova_context.get_admin_context()
        self.cell1 = self.cell_mappings['cell1']
        self.cell2 = self.cell_mappings['cell2']
        self.cloud = live.Cloud(hosts={
            name: live.HostRows(name, node=None, service={}, cell=cell,
                                up=True, aggregates=[])
            for name, cell in (('h1', self.cell1), ('h2', self.cell1),
                               ('h3', self.cell2))}, instances={},
            migrations=[])

    def add(self, host, cell=None, flavor=True, extra_specs=None, **fields):
        """An instance created as Nova's API does; returns its uuid."""
        values = dict(uuid=uuidutils.generate_uuid(), host=host,
                      project_id='p', user_id='u', vm_state='active',
                      vcpus=2, memory_mb=512, display_name=f'vm-{host}')
        if flavor:
            values['flavor'] = objects.Flavor(
                id=1, flavorid='f', name='f', vcpus=2, memory_mb=512,
                root_gb=1, ephemeral_gb=0, swap=0,
                extra_specs=extra_specs or {})
        values.update(fields)
        with self.cell(cell) as cctxt:
            instance = objects.Instance(cctxt, **values)
            instance.create()
        return instance

    @contextlib.contextmanager
    def cell(self, cell=None):
        with nova_context.target_cell(self.ctxt, cell or self.cell1) as cc:
            yield cc

    def soft_delete(self, table, column, uuid):
        with self.cell() as cctxt:
            engine = main_db_api.get_engine(context=cctxt)
            with engine.begin() as conn:
                conn.execute(sqlalchemy.text(
                    f'UPDATE {table} SET deleted = id WHERE {column} = :u'),
                    {'u': uuid})

    def listed(self, cell, key, values):
        """What Nova's InstanceList lists, as the period read it before."""
        with self.cell(cell) as cctxt:
            return {instance.uuid: instance
                    for instance in objects.InstanceList.get_by_filters(
                        cctxt, {key: values, 'deleted': False},
                        expected_attrs=[])}

    def test_instances_of_the_hosts_asked_as_nova_lists_them(self):
        kept = [self.add('h1'), self.add('h1', vm_state='stopped'),
                self.add('h1', task_state='migrating'),
                self.add('h3', cell=self.cell2)]
        others = [self.add('h2'), self.add('h1', flavor=False),
                  self.add('h1', vm_state=vm_states.SOFT_DELETED),
                  self.add('h1', hidden=True), self.add('h1')]
        others[-1].destroy()  # Soft-deleted row, as Nova deletes.
        # Rows soft-deleted alone, behind the objects' back: the instance
        # (its flavor kept), and an instance's flavor.
        others += [self.add('h1'), self.add('h1')]
        self.soft_delete('instances', 'uuid', others[-2].uuid)
        self.soft_delete('instance_extra', 'instance_uuid', others[-1].uuid)
        live.read_instances(self.ctxt, self.cloud, hosts={'h1', 'h3'})
        self.assertEqual({i.uuid for i in kept}, set(self.cloud.instances))
        nova = dict(self.listed(self.cell1, 'host', ['h1']),
                    **self.listed(self.cell2, 'host', ['h3']))
        # Listed, but no flavor (stored or live): not movable.
        del nova[others[1].uuid], nova[others[-1].uuid]
        self.assertEqual(set(nova), set(self.cloud.instances))
        for uuid, found in self.cloud.instances.items():
            self.assertEqual(nova[uuid].obj_to_primitive(),
                             found.nova.obj_to_primitive())
            self.assertEqual(
                (nova[uuid].host, nova[uuid].vm_state, nova[uuid].task_state,
                 nova[uuid].vcpus, nova[uuid].display_name),
                (found.host, found.vm_state, found.task_state, found.vcpus,
                 found.display_name))
            self.assertIs(found.nova, found.nova)  # Made once.
        self.assertEqual({kept[0].uuid: self.cell1, kept[3].uuid: self.cell2},
                         {uuid: self.cloud.instances[uuid].cell
                          for uuid in (kept[0].uuid, kept[3].uuid)})
        # The object lazy-loads from the instance's own cell.
        self.assertEqual(2, self.cloud.instances[kept[3].uuid].nova.flavor
                         .vcpus)

    def test_every_host_when_none_named(self):
        uuids = {self.add(host, cell=cell).uuid for host, cell in (
            ('h1', self.cell1), ('h2', self.cell1), ('h3', self.cell2))}
        live.read_instances(self.ctxt, self.cloud)
        self.assertEqual(uuids, set(self.cloud.instances))

    def test_named_instances_wherever_they_are_on_known_hosts(self):
        on_h2 = self.add('h2')
        on_h3 = self.add('h3', cell=self.cell2)
        unknown_host = self.add('h9')
        offloaded = self.add(None)
        self.add('h2')  # Neither named nor on a host asked about.
        live.read_instances(
            self.ctxt, self.cloud, hosts=set(),
            uuids=[on_h2.uuid, on_h3.uuid, unknown_host.uuid,
                   offloaded.uuid, uuidutils.generate_uuid()])
        self.assertEqual({on_h2.uuid, on_h3.uuid}, set(self.cloud.instances))
        self.assertEqual(self.cell2, self.cloud.instances[on_h3.uuid].cell)

    def test_a_cell_with_nothing_asked_does_not_end_the_read(self):
        # h1 and h2's cell comes first and has nothing to read.
        on_h3 = self.add('h3', cell=self.cell2)
        live.read_instances(self.ctxt, self.cloud, hosts={'h3'})
        self.assertEqual({on_h3.uuid}, set(self.cloud.instances))

    def test_many_hosts_read_in_slices(self):
        self.cloud.hosts.update({
            f'x{n:02d}': live.HostRows(f'x{n:02d}', None, {}, self.cell1,
                                       True, [])
            for n in range(live.READ_SLICE * 2 + 1)})
        uuids = {self.add(f'x{n:02d}').uuid
                 for n in range(live.READ_SLICE * 2 + 1)}
        live.read_instances(self.ctxt, self.cloud,
                            hosts={f'x{n:02d}' for n in range(30)})
        self.assertEqual(uuids, set(self.cloud.instances))

    def test_opt_outs_from_flavor_and_live_metadata(self):
        flavor_out = self.add('h1', extra_specs={'drs:exclude': 'true'})
        owner_out = self.add('h1', metadata={'drs_exclude': 'yes',
                                             'other': 'x'})
        took_back = self.add('h1', metadata={'drs_exclude': 'true'})
        took_back.metadata = {}
        took_back.save()  # Nova soft-deletes the metadata row.
        # Keys sorting before and after drs_exclude: neither is read.
        plain = self.add('h1', metadata={'other': 'true', 'auto': 'true'})
        live.read_instances(self.ctxt, self.cloud, hosts={'h1'})
        facts = {uuid: found.facts
                 for uuid, found in self.cloud.instances.items()}
        self.assertEqual(
            {flavor_out.uuid: live.InstanceFacts(2, 512, 'true', None),
             owner_out.uuid: live.InstanceFacts(2, 512, None, 'yes'),
             took_back.uuid: live.InstanceFacts(2, 512, None, None),
             plain.uuid: live.InstanceFacts(2, 512, None, None)}, facts)

    def test_an_opt_out_is_joined_to_its_own_instance_only(self):
        # Opted-out instances on either side of a plain one in uuid order
        # (random uuids would leave the order to chance).
        low, mid, high = (f'{digit * 8}-0000-4000-8000-000000000000'
                          for digit in '18f')
        self.add('h1', uuid=low, metadata={'drs_exclude': 'true'})
        self.add('h1', uuid=mid)
        self.add('h1', uuid=high, metadata={'drs_exclude': 'yes'})
        live.read_instances(self.ctxt, self.cloud, hosts={'h1'})
        self.assertEqual(
            {low: 'true', mid: None, high: 'yes'},
            {uuid: found.facts.instance_opt_out
             for uuid, found in self.cloud.instances.items()})

    def test_facts_are_the_current_flavor(self):
        # A resize in progress: the row's vcpus and the current flavor are
        # what Nova's Instance.flavor gives, not the new flavor.
        instance = self.add('h1')
        instance.new_flavor = objects.Flavor(
            id=2, flavorid='g', name='g', vcpus=8, memory_mb=4096,
            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
        instance.save()
        live.read_instances(self.ctxt, self.cloud, hosts={'h1'})
        self.assertEqual(live.InstanceFacts(2, 512),
                         self.cloud.instances[instance.uuid].facts)

    def test_the_host_index_not_a_walk_of_every_instance(self):
        # Nova's InstanceList sorts by creation time, which SQLite did by
        # walking the (deleted, created_at) index: every live instance of
        # the cell, for each query of a few hosts.
        self.add('h1')
        plans = []

        def explain(conn, cursor, statement, parameters, context, many):
            if 'FROM instances' in statement:
                plans.append([row[3] for row in cursor.connection.execute(
                    'EXPLAIN QUERY PLAN ' + statement, parameters)])
        sqlalchemy.event.listen(sqlalchemy.engine.Engine,
                                'before_cursor_execute', explain)
        self.addCleanup(sqlalchemy.event.remove, sqlalchemy.engine.Engine,
                        'before_cursor_execute', explain)
        live.read_instances(self.ctxt, self.cloud, hosts={'h1'})
        self.assertEqual(1, len(plans))
        self.assertIn('SEARCH instances USING INDEX '
                      'instances_host_deleted_cleaned_idx', plans[0][0])
        self.assertNotIn('ORDER BY', ' '.join(plans[0]))
        self.assertFalse([step for step in plans[0] if 'SCAN' in step
                          or 'created_at' in step], plans[0])

    # live.read_cloud, on the same databases: the hosts a period may plan
    # with, and the migrations it must know about.
    T0 = datetime.datetime(2026, 1, 1, 12, 0)

    def service(self, host, cell=None, binary='nova-compute',
                topic='compute', **fields):
        with self.cell(cell) as cctxt:
            service = objects.Service(cctxt, host=host, binary=binary,
                                      topic=topic, **fields)
            service.create()
        return service

    def node(self, host, name=None, cell=None):
        with self.cell(cell) as cctxt:
            node = objects.ComputeNode(
                cctxt, host=host, hypervisor_hostname=name or host,
                uuid=uuidutils.generate_uuid(), vcpus=8, memory_mb=4096,
                local_gb=10, vcpus_used=0, memory_mb_used=0,
                local_gb_used=0, hypervisor_type='fake',
                hypervisor_version=1, cpu_info='{}')
            node.create()
        return node

    def migration(self, status, cell=None):
        with self.cell(cell) as cctxt:
            migration = objects.Migration(
                cctxt, uuid=uuidutils.generate_uuid(),
                instance_uuid=uuidutils.generate_uuid(), source_compute='h1',
                dest_compute='h2', status=status,
                migration_type='live-migration')
            migration.create()
        return migration

    def test_hosts_with_a_live_compute_service_and_node(self):
        self.service('h1')
        # Other services of the host, their binaries sorting after and
        # before nova-compute: not its compute service.
        self.service('h1', binary='nova-conductor', topic='conductor')
        self.service('h1', binary='nova-api', topic='api')
        self.node('h1', 'h1-b')
        self.node('h1', 'h1-a')  # Ironic: a second node, the first kept.
        self.node('h0', 'a-no-service')  # Sorts first: no service yet.
        self.service('h2')
        self.node('h2').destroy()  # Node deleted: not a host any more.
        self.service('h4').destroy()  # Service deleted.
        self.node('h4')
        self.service('h3', cell=self.cell2, forced_down=True)
        self.node('h3', cell=self.cell2)
        for name, hosts in (('agg', ['h1', 'h3']), ('h3-only', ['h3'])):
            aggregate = objects.Aggregate(self.ctxt, name=name, metadata={})
            aggregate.create()
            for host in hosts:
                aggregate.add_host(host)
        servicegroup = mock.Mock()
        servicegroup.service_is_up.side_effect = (
            lambda service: not service['forced_down'])
        cloud = live.read_cloud(self.ctxt, [self.cell1, self.cell2],
                                servicegroup, self.T0)
        self.assertEqual(
            {'h1': ('h1-a', 'nova-compute', True, ['agg'], self.cell1),
             'h3': ('h3', 'nova-compute', False, ['agg', 'h3-only'],
                    self.cell2)},
            {name: (rows.node.hypervisor_hostname, rows.service['binary'],
                    rows.up, sorted(a.name for a in rows.aggregates),
                    rows.cell)
             for name, rows in cloud.hosts.items()})
        self.assertEqual((8, 4096, False),
                         (cloud.hosts['h1'].node.vcpus,
                          cloud.hosts['h1'].node.memory_mb,
                          cloud.hosts['h1'].service['disabled']))

    def test_migrations_changed_or_in_progress_since(self):
        """A migration in progress holds both hosts even when Nova has not
        updated its record yet; one not touched since ``since`` is stale."""
        clock = self.useFixture(utils_fixture.TimeFixture(self.T0))
        since = self.T0 + datetime.timedelta(minutes=10)
        self.migration('running')  # Stale: never updated.
        self.migration('completed')  # Ended before.
        ended = self.migration('running')
        clock.advance_time_delta(datetime.timedelta(minutes=10))
        at_since = self.migration('running')
        clock.advance_time_delta(datetime.timedelta(minutes=1))
        ended.status = 'completed'
        ended.save()
        new = self.migration('queued', cell=self.cell2)
        self.service('h1')  # The cells' reads go through read_cloud.
        cloud = live.read_cloud(self.ctxt, [self.cell1, self.cell2],
                                mock.Mock(), since)
        self.assertEqual({ended.uuid, at_since.uuid, new.uuid},
                         {m.uuid for m in cloud.migrations})
