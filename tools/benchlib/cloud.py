"""A Nova cloud in databases, built for the benchmarks: N compute hosts.

Nova's API, main and cell databases (SQLite files or a server's), each
host's service, compute node, host mapping and instances written in bulk
from one template made through Nova's objects, and the request specs Nova
keeps.  Import it after :mod:`benchlib.patching` has patched.
"""

import contextlib
import random
import tempfile
import unittest.mock

import sqlalchemy as sa
from nova import config
from nova import context as nova_context
from nova import objects
from nova import rpc
from nova.db import migration
from nova.db.api import models as api_models
from nova.db.main import models
from nova.scheduler import host_manager as nova_host_manager
from nova.tests import fixtures as nova_fixtures
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_utils import uuidutils

from nova_drs_scheduler import conf as drs_conf

CONF = drs_conf.CONF


def database_url(base, workdir, name):
    """URL of a new, empty database called ``name``."""
    if base is None:
        return f'sqlite:///{workdir}/{name}.db'
    engine = sa.create_engine(base)
    with engine.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS {name}'))
        conn.execute(sa.text(f'CREATE DATABASE {name}'))
    engine.dispose()
    return f'{base.rstrip("/")}/{name}'


def configure(base, workdir):
    """Nova's config: the API database, a main one it insists on, fake
    messaging and no notifications."""
    CONF.set_override('connection', database_url(base, workdir, 'bench_api'),
                      group='api_database')
    CONF.set_override('connection', database_url(base, workdir, 'bench_main'),
                      group='database')
    # parse_args wires Nova's database engines to the options above and
    # registers the messaging options set below.
    config.parse_args([], default_config_files=[])
    # No compute heartbeats here: keep the rows' services up all run long.
    CONF.set_override('service_down_time', 86400)
    CONF.set_override('transport_url', 'fake:/')
    CONF.set_override('driver', ['noop'],
                      group='oslo_messaging_notifications')
    objects.register_all()
    rpc.init(CONF)
    migration.db_sync(database='api')
    migration.db_sync(database='main')


def create_cell(ctxt, base, workdir, size):
    """A migrated cell database for one N, mapped as the only cell."""
    cell_url = database_url(base, workdir, f'bench_cell_{size}')
    cell = objects.CellMapping(ctxt, uuid=uuidutils.generate_uuid(),
                               name=f'cell-{size}', transport_url='fake:/',
                               database_connection=cell_url)
    cell.create()
    with nova_context.target_cell(ctxt, cell) as cctxt:
        migration.db_sync(database='main', context=cctxt)
    if base is None:
        # Rows change while a refresh reads them, in another thread: in
        # SQLite's default journal a reader and a writer lock each other
        # out; in WAL mode, as on a server, neither waits.
        engine = sa.create_engine(cell_url)
        with engine.connect() as conn:
            conn.exec_driver_sql('PRAGMA journal_mode=WAL')
        engine.dispose()
    return cell


def drop_cell(cell):
    """Unmap a cell so that the next N's managers see only their own."""
    engine = sa.create_engine(CONF.api_database.connection)
    with engine.begin() as conn:
        conn.execute(api_models.RequestSpec.__table__.delete())  # All ours.
        for table in (api_models.InstanceMapping.__table__,
                      api_models.HostMapping.__table__,
                      api_models.CellMapping.__table__):
            column = table.c.cell_id if 'cell_id' in table.c else table.c.id
            conn.execute(table.delete().where(column == cell.id))
    engine.dispose()


def small_flavor():
    return objects.Flavor(id=1, flavorid='small', name='small', vcpus=2,
                          memory_mb=2048, root_gb=20, ephemeral_gb=0,
                          swap=0, extra_specs={})


def template_rows(ctxt, cell_url):
    """One service, compute node and instance created through Nova's
    objects, read back as rows to copy N times."""
    compute_numa = objects.NUMATopology(cells=[objects.NUMACell(
        id=cell, cpuset=set(range(cell * 32, cell * 32 + 32)),
        pcpuset=set(), memory=128 * 1024, cpu_usage=0, memory_usage=0,
        siblings=[], pinned_cpus=set(), socket=cell,
        mempages=[objects.NUMAPagesTopology(size_kb=4, total=33554432,
                                            used=0)],
        network_metadata=objects.NetworkMetadata(physnets=set(),
                                                 tunneled=False))
        for cell in range(2)])
    metrics = objects.MonitorMetricList(objects=[objects.MonitorMetric(
        name='cpu.percent', value=0.3, source='virt',
        timestamp=timeutils.utcnow())])
    service = objects.Service(ctxt, host='template', binary='nova-compute',
                              topic='compute', report_count=1)
    service.create()
    compute = objects.ComputeNode(
        ctxt, uuid=uuidutils.generate_uuid(), host='template',
        hypervisor_hostname='template', service_id=service.id, vcpus=64,
        vcpus_used=30, memory_mb=256 * 1024, memory_mb_used=120 * 1024,
        free_ram_mb=136 * 1024, local_gb=2000, local_gb_used=300,
        free_disk_gb=1700, disk_available_least=1600,
        hypervisor_type='QEMU', hypervisor_version=8002000,
        current_workload=0, running_vms=15,
        cpu_info=jsonutils.dumps({'arch': 'x86_64', 'model': 'Icelake',
                                  'vendor': 'Intel',
                                  'features': ['avx2', 'vmx', 'aes']}),
        host_ip='192.0.2.1',
        supported_hv_specs=[objects.HVSpec(arch='x86_64', hv_type='kvm',
                                           vm_mode='hvm')],
        stats={'num_instances': '15', 'io_workload': '0',
               'num_vm_active': '15', 'num_proj_p': '15',
               'failed_builds': '0'},
        metrics=jsonutils.dumps(metrics.to_list()),
        numa_topology=compute_numa._to_json(),
        pci_device_pools=objects.PciDevicePoolList(objects=[]),
        cpu_allocation_ratio=4.0, ram_allocation_ratio=1.0,
        disk_allocation_ratio=1.0)
    compute.create()
    flavor = small_flavor()
    instance = objects.Instance(ctxt, uuid=uuidutils.generate_uuid(),
                                host='template', project_id='p',
                                user_id='u', vm_state='active',
                                vcpus=flavor.vcpus,
                                memory_mb=flavor.memory_mb,
                                root_gb=flavor.root_gb,
                                flavor=flavor, old_flavor=None,
                                new_flavor=None)
    instance.create()
    engine = sa.create_engine(cell_url)
    rows = {}
    with engine.begin() as conn:
        extra = models.InstanceExtra.__table__
        extra_id = conn.execute(sa.select(extra.c.id).where(
            extra.c.instance_uuid == instance.uuid)).scalar_one()
        for table, row_id in ((models.Instance.__table__, instance.id),
                              (extra, extra_id),
                              (models.ComputeNode.__table__, compute.id),
                              (models.Service.__table__, service.id)):
            row = conn.execute(table.select().where(
                table.c.id == row_id)).mappings().one()
            rows[table.name] = {k: v for k, v in row.items() if k != 'id'}
            # Soft-delete, as Nova does: other tables may point at the row.
            conn.execute(table.update().where(table.c.id == row_id).values(
                deleted=row_id, deleted_at=timeutils.utcnow()))
    engine.dispose()
    return rows


def host_usage(rng, row, instances):
    """Column values of a compute node running ``instances`` instances of
    varied sizes, so that weighers see a spread like a real cloud's."""
    vcpus = sum(rng.choice((1, 2, 4, 8)) for _ in range(instances))
    ram = sum(rng.choice((1024, 2048, 4096, 8192)) for _ in range(instances))
    disk = sum(rng.choice((10, 20, 40, 80)) for _ in range(instances))
    metrics = jsonutils.loads(row['metrics'])
    for metric in metrics:
        metric['value'] = round(rng.uniform(0.05, 0.95), 3)
    return dict(
        vcpus_used=vcpus, memory_mb_used=ram,
        free_ram_mb=row['memory_mb'] - ram, local_gb_used=disk,
        free_disk_gb=row['local_gb'] - disk,
        disk_available_least=row['local_gb'] - disk,
        running_vms=instances, current_workload=rng.randint(0, 3),
        metrics=jsonutils.dumps(metrics),
        stats=jsonutils.dumps(dict(
            jsonutils.loads(row['stats']), num_instances=str(instances),
            num_vm_active=str(instances), num_proj_p=str(instances),
            io_workload=str(rng.randint(0, 3)))))


def populate(ctxt, cell, cell_url, size, per_host):
    """N hosts: service, compute node, host mapping and, on average,
    ``per_host`` instances (seeded, so runs are comparable)."""
    rng = random.Random(size)
    rows = template_rows(ctxt, cell_url)
    hosts = [f'compute-{i:05d}' for i in range(size)]
    counts = {host: rng.randint(per_host // 2, per_host * 3 // 2)
              for host in hosts}
    nodes = {}
    engine = sa.create_engine(cell_url)
    with engine.begin() as conn:
        conn.execute(models.Service.__table__.insert(), [
            dict(rows['services'], host=host, uuid=uuidutils.generate_uuid())
            for host in hosts])
        service_ids = dict(conn.execute(sa.select(
            models.Service.__table__.c.host,
            models.Service.__table__.c.id)).all())
        for host in hosts:
            nodes[host] = uuidutils.generate_uuid()
        node_row = rows['compute_nodes']
        conn.execute(models.ComputeNode.__table__.insert(), [
            dict(node_row, host=host, hypervisor_hostname=host,
                 uuid=nodes[host], service_id=service_ids[host],
                 **host_usage(rng, node_row, counts[host]))
            for host in hosts])
        uuids = [(host, uuidutils.generate_uuid())
                 for host in hosts for _ in range(counts[host])]
        conn.execute(models.Instance.__table__.insert(), [
            dict(rows['instances'], host=host, node=host, uuid=uuid)
            for host, uuid in uuids])
        # Flavors, as Nova stores them, and mappings: what reading an
        # instance as Nova's API does needs.
        conn.execute(models.InstanceExtra.__table__.insert(), [
            dict(rows['instance_extra'], instance_uuid=uuid)
            for _host, uuid in uuids])
        instances = conn.execute(sa.select(
            models.Instance.__table__.c.host,
            models.Instance.__table__.c.uuid).where(
                models.Instance.__table__.c.deleted == 0)).all()
    engine.dispose()
    # A request spec per instance, as Nova keeps: rebalance periods list
    # an instance's destinations from it.
    template = request_spec(ctxt)
    template.create()
    specs = api_models.RequestSpec.__table__
    api_engine = sa.create_engine(CONF.api_database.connection)
    with api_engine.begin() as conn:
        conn.execute(api_models.HostMapping.__table__.insert(), [
            {'host': host, 'cell_id': cell.id} for host in hosts])
        conn.execute(api_models.InstanceMapping.__table__.insert(), [
            {'instance_uuid': uuid, 'cell_id': cell.id, 'project_id': 'p',
             'user_id': 'u', 'queued_for_delete': False}
            for _host, uuid in uuids])
        spec = conn.execute(sa.select(specs.c.spec).where(
            specs.c.instance_uuid == template.instance_uuid)).scalar_one()
        conn.execute(specs.delete().where(
            specs.c.instance_uuid == template.instance_uuid))
        conn.execute(specs.insert(), [
            {'instance_uuid': uuid,
             'spec': spec.replace(template.instance_uuid, uuid)}
            for _host, uuid in uuids])
    api_engine.dispose()
    pushed = {}
    for host, uuid in instances:
        pushed.setdefault(host, {})[uuid] = objects.Instance(uuid=uuid)
    return nodes, pushed


def request_spec(ctxt):
    flavor = small_flavor()
    image = objects.ImageMeta.from_dict({
        'id': uuidutils.generate_uuid(), 'name': 'cirros',
        'disk_format': 'qcow2', 'container_format': 'bare',
        'properties': {}})
    return objects.RequestSpec(
        ctxt, instance_uuid=uuidutils.generate_uuid(), flavor=flavor,
        image=image, num_instances=1, project_id='p', user_id='u',
        ignore_hosts=None, force_hosts=None, force_nodes=None,
        requested_destination=None, scheduler_hints={},
        instance_group=None, numa_topology=None,
        pci_requests=objects.InstancePCIRequests(requests=[]),
        availability_zone=None, is_bfv=False, requested_resources=[],
        request_level_params=objects.RequestLevelParams(),
        network_metadata=objects.NetworkMetadata(physnets=set(),
                                                 tunneled=False),
        security_groups=objects.SecurityGroupList(objects=[]),
        retry=None, limits=None)


@contextlib.contextmanager
def environment(base):
    """Nova configured on new databases (:func:`configure`); yields the
    work directory."""
    with contextlib.ExitStack() as stack:
        workdir = stack.enter_context(tempfile.TemporaryDirectory())
        # Bulk-loaded instead, as computes would push it.
        stack.enter_context(unittest.mock.patch.object(
            nova_host_manager.HostManager, '_init_instance_info'))
        # The placement fixture answers the report client; this only stops
        # it from looking for a Keystone catalog.
        stack.enter_context(nova_fixtures.OpenStackSDKFixture())
        configure(base, workdir)
        yield workdir
