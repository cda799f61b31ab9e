#!/usr/bin/env python3
"""Benchmark: stock Nova's scheduler against ours (DRSSchedulerManager
with CachingHostManager).

Builds, per N, a real Nova API and cell database with N compute nodes, their
nova-compute services, host mappings and instances, plus an in-process
placement with one provider per node, then times side by side, in one
process:

1. host-state retrieval (``get_host_states_by_uuids``) for one request;
2. filtering and weighing those host states (Nova's default filters and
   weighers);
3. a whole ``select_destinations`` with placement, and the same minus the
   time spent inside placement calls.

Stock is Nova's ``SchedulerManager`` with its ``HostManager``; ours is
``DRSSchedulerManager``, as ``nova-drs-scheduler`` runs it. Our manager is
measured on a fresh cache (the steady state), and once on
the request that pays an incremental refresh.

``--measure latency`` instead times a few hundred ``select_destinations``
per scheduler on the real clock, while the rows change at a real cloud's
pace, and reports percentiles: stock, ours refreshing inline (the request
that finds stale rows reads them) and ours refreshing in the background,
each scheduler in a process of its own.
``--measure pass`` breaks one background refresh pass down: rows read and
rebuilt, CPU time by part.
``--measure period`` times ours between and during rebalance periods run
back to back in another thread of the same process, the periods giving way
to requests in flight, as they do, at most 0.2 s at a point (as before
they waited requests out), or not (turned off: as before they could), and
tells what the slowest requests overlapped.
``--concurrency``
picks native threads (Nova 34's default) or eventlet. ``--placement
process`` runs placement in a process of its own, reached over HTTP, as
deployed (tools/bench_placement.py), instead of inside the benchmark's.
Usage::

    tools/bench_host_manager.py --nodes 100 1000 5000
    tools/bench_host_manager.py --db mysql+pymysql://root@127.0.0.1:3307
    tools/bench_host_manager.py --measure latency --nodes 1000 10000
    tools/bench_host_manager.py --measure pass --nodes 10000 --requests 20
    tools/bench_host_manager.py --measure period --concurrency eventlet
    tools/bench_host_manager.py --measure period --placement process
"""

import argparse
import os
import sys

CONCURRENCY = ('threading', 'eventlet')


def _concurrency(argv):
    """``--concurrency``, read before anything imports Nova, and set in the
    environment: Nova's test fixtures, imported below, patch again."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument('--concurrency', choices=CONCURRENCY,
                        default='threading')
    backend = parser.parse_known_args(argv)[0].concurrency
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = str(
        backend == 'threading')
    return backend


# Nova must be monkey patched before anything imports eventlet or futurist.
from nova_drs_scheduler import compat  # noqa: E402,I001
compat.monkey_patch(_concurrency(sys.argv[1:]))

import collections  # noqa: E402
import contextlib  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import unittest.mock  # noqa: E402

import os_traits  # noqa: E402
import sqlalchemy as sa  # noqa: E402
import tabulate  # noqa: E402
from bench_placement import served as served_placement  # noqa: E402
from nova import config  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import objects  # noqa: E402
from nova import rpc  # noqa: E402
from nova import thread_pool_factory  # noqa: E402
from nova.db import migration  # noqa: E402
from nova.db.api import models as api_models  # noqa: E402
from nova.db.main import models  # noqa: E402
from nova.scheduler import host_manager as nova_host_manager  # noqa: E402
from nova.scheduler import manager as scheduler_manager  # noqa: E402
from nova.scheduler.client import report  # noqa: E402
from nova.tests import fixtures as nova_fixtures  # noqa: E402
from nova.tests.functional import fixtures as func_fixtures  # noqa: E402
from oslo_serialization import jsonutils  # noqa: E402
from oslo_utils import timeutils  # noqa: E402
from oslo_utils import uuidutils  # noqa: E402
from placement import db_api as placement_db  # noqa: E402
from placement.db.sqlalchemy import models as placement_models  # noqa

import nova_drs_scheduler.conf  # noqa: E402
from nova_drs_scheduler import host_manager as host_manager_mod  # noqa
from nova_drs_scheduler import service as drs_service  # noqa: E402
from nova_drs_scheduler.conf import host_cache as host_cache_conf  # noqa
from nova_drs_scheduler.db import store as store_mod  # noqa: E402
from nova_drs_scheduler.host_manager import freezing  # noqa: E402
from nova_drs_scheduler.host_manager import rows as rows_mod  # noqa: E402
from nova_drs_scheduler.host_manager import snapshot as snapshot_mod  # noqa
from nova_drs_scheduler.manager import DRSSchedulerManager  # noqa: E402
from nova_drs_scheduler.rebalance import aggregate_settings  # noqa: E402
from nova_drs_scheduler.rebalance import live  # noqa: E402
from nova_drs_scheduler.rebalance import metrics as metrics_mod  # noqa
from nova_drs_scheduler.rebalance import planner  # noqa: E402
from nova_drs_scheduler.rebalance import rebalancer  # noqa: E402
from nova_drs_scheduler.rebalance import recommendations  # noqa: E402
from nova_drs_scheduler.rebalance import record  # noqa: E402
from nova_drs_scheduler.rebalance import telemetry  # noqa: E402
from nova_drs_scheduler.rebalance.sources import base as sources_base  # noqa
from nova_drs_scheduler.rebalance.sources import nova as nova_source  # noqa

try:  # Older code, measured side by side, has no pacing.
    from nova_drs_scheduler import pacing  # noqa: E402
except ImportError:
    pacing = None

CONF = nova_drs_scheduler.conf.CONF
#: ``--placement``: where placement runs.
INPROCESS = 'inprocess'
PLACEMENT = (INPROCESS, 'process')
REPEATS = {100: 21, 1000: 11, 5000: 5, 10000: 3}
#: Instance info not pushed by computes costs stock one query per host;
#: measured only where it stays affordable.
UNSYNCED_MAX_NODES = 1000
#: Requests of each scheduler whose latency is not counted (warm-up).
WARMUP = 5
#: Whether :func:`elapsed` collects garbage before what it times
#: (``--no-collect`` turns it off).
COLLECT = True
#: Seconds a scheduler of ``--measure latency`` waits for a cell.
FIRST_LOAD_TIMEOUT = 600
#: Requests per block in ``--measure period``; blocks without and with
#: periods running alternate.
PERIOD_BLOCK = 25
#: The phases of a rebalance period and what each one calls (for
#: :class:`CallClock`); names missing in the code measured are skipped,
#: so that the same benchmarks measure an older version.  The metric
#: sources that do not override the base class's ``*_of`` and ``*_within``
#: are timed there.
PERIOD_PHASES = {
    'read': [(live, 'read_cloud'), (live, 'read_instances'),
             (rebalancer.Rebalancer, '_named_instances')],
    'metrics': [(nova_source.NovaSource, 'host_samples'),
                (nova_source.NovaSource, 'host_samples_of'),
                (nova_source.NovaSource, 'instance_loads_within'),
                (nova_source.NovaSource, 'instance_loads'),
                (sources_base.MetricsSource, 'host_samples_of'),
                (sources_base.MetricsSource, 'instance_loads_within'),
                (metrics_mod.MetricsWindows, 'update'),
                (rebalancer.Rebalancer, 'windows')],
    'snapshot': [(live, 'build_snapshot'),
                 (aggregate_settings, 'host_settings')],
    'plan': [(planner, 'plan'), (recommendations, 'revalidate'),
             (recommendations, 'approved')],
    'record': [(record, 'add_plan'), (live, 'needs_attention'),
               (store_mod.Store, 'save_windows'), (store_mod.Store, 'add'),
               (store_mod.Store, 'recommend'), (store_mod.Store, 'purge'),
               (telemetry.Telemetry, 'hosts'),
               (rebalancer.Rebalancer, 'collect_outcomes')],
}
#: The period's own calls to placement (part of *plan*): inside this
#: process (``--placement inprocess``) or, as deployed, the wait for
#: another process's answer over HTTP (``--placement process``).
PERIOD_PLACEMENT = {'placement': [(report.SchedulerReportClient,
                                   'get_allocation_candidates')]}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, nargs='+',
                        default=[100, 1000, 5000])
    parser.add_argument('--instances-per-host', type=int, default=15)
    parser.add_argument('--measure',
                        choices=('medians', 'latency', 'period', 'memory',
                                 'pass'),
                        default='medians',
                        help='medians: the side-by-side medians (default); '
                             'latency: percentiles of select_destinations; '
                             'period: ours between and during rebalance '
                             'periods; memory: the process\'s size and '
                             'frozen objects over --requests requests with '
                             'the background refresh every 0.2 s; pass: '
                             'what one background refresh pass costs, by '
                             'part, over --requests passes.')
    parser.add_argument('--requests', type=int, default=300,
                        help='Requests per scheduler (latency) or per '
                             'condition (period).')
    parser.add_argument('--stock-requests', type=int, default=None,
                        help='latency: fewer requests of stock, spread '
                             'over the run (at 10000 nodes each takes '
                             'seconds); as many as ours if unset.')
    parser.add_argument('--concurrency', choices=CONCURRENCY,
                        default='threading',
                        help='Native threads (Nova 34\'s default) or '
                             'eventlet, for the whole process.')
    parser.add_argument('--no-collect', action='store_true',
                        help='latency and period: do not collect garbage '
                             '(untimed) before each request, so that the '
                             'garbage collector\'s full collections land '
                             'in requests as they do in a service.')
    parser.add_argument('--placement', choices=PLACEMENT,
                        default=INPROCESS,
                        help='inprocess: placement inside this process, '
                             'through wsgi-intercept (Nova\'s functional '
                             'fixture); process: in a process of its own, '
                             'over HTTP on 127.0.0.1, as deployed.')
    add_gc_argument(parser)
    add_db_argument(parser)
    return parser.parse_args()


def add_gc_argument(parser):
    parser.add_argument('--gc-collect-interval', type=float, default=None,
                        help='[drs_host_cache] gc_collect_interval for ours '
                             '(0: nothing frozen, as before that option); '
                             'its default if unset.')


def apply_gc_argument(args):
    if args.gc_collect_interval is not None:
        CONF.set_override('gc_collect_interval', args.gc_collect_interval,
                          group='drs_host_cache')


def add_db_argument(parser):
    parser.add_argument('--db', default=None,
                        help='SQLAlchemy URL of a server without database '
                             'name, e.g. mysql+pymysql://root@127.0.0.1:3307'
                             '; SQLite files in a temp dir by default.')


# Database.

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


@contextlib.contextmanager
def placement_service(where, nodes):
    """Placement (``where``: :data:`PLACEMENT`) with one provider per
    node, answering the report client's calls; yields a client of its API
    (``get``, ``put``, ``post``, ``delete``).

    Either way the report client's calls go through Nova's functional
    fixture and keystoneauth: only where placement runs differs.
    """
    if where == INPROCESS:
        with func_fixtures.PlacementFixture() as fixture:
            populate_placement(fixture.api,
                               placement_db.get_placement_engine(), nodes)
            yield fixture.api
    else:
        with served_placement() as server, ServedPlacementFixture(
                server) as fixture:
            engine = sa.create_engine(server.db_url)
            try:
                populate_placement(fixture.api, engine, nodes)
            finally:
                engine.dispose()
            yield fixture.api


class ServedPlacementFixture(func_fixtures.PlacementFixture):
    """Nova's placement fixture sending the report client's calls to
    placement served in another process (:func:`bench_placement.served`)
    instead of one it runs inside this one."""

    def __init__(self, server):
        super().__init__(db=False, use_intercept=False)
        self.endpoint = server.url
        self.db_url = server.db_url

    def _configure_placement(self, conf_fixture):
        super()._configure_placement(conf_fixture)
        conf_fixture.config(connection=self.db_url,
                            group='placement_database')


def populate_placement(placement, engine, nodes):
    """One provider per node: the first through placement's API, the
    others copied from it in bulk into its database (``engine``; thousands
    of API calls take too long on a loaded machine, and set the same
    rows)."""
    inventories = {
        'VCPU': {'total': 64, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 256 * 1024, 'allocation_ratio': 1.0},
        'DISK_GB': {'total': 2000, 'allocation_ratio': 1.0},
    }
    (host, first), *rest = nodes.items()
    placement.post('/resource_providers', {'uuid': first, 'name': host},
                   version='1.20')
    placement.put(f'/resource_providers/{first}/inventories',
                  {'resource_provider_generation': 0,
                   'inventories': inventories})
    placement.put(f'/resource_providers/{first}/traits',
                  {'resource_provider_generation': 1,
                   'traits': [os_traits.OWNER_NOVA]}, version='1.6')
    providers = placement_models.ResourceProvider.__table__
    children = (placement_models.Inventory.__table__,
                placement_models.ResourceProviderTrait.__table__)
    with engine.begin() as conn:
        template = dict(conn.execute(providers.select().where(
            providers.c.uuid == first)).mappings().one())
        rows = {table: [dict(row) for row in conn.execute(
            table.select().where(
                table.c.resource_provider_id == template['id'])).mappings()]
            for table in children}
        del template['id']
        conn.execute(providers.insert(), [
            dict(template, uuid=uuid, name=name, root_provider_id=None)
            for name, uuid in rest])
        conn.execute(providers.update().where(
            providers.c.root_provider_id.is_(None)).values(
                root_provider_id=providers.c.id))
        ids = dict(conn.execute(sa.select(providers.c.uuid,
                                          providers.c.id)).all())
        for table, copied in rows.items():
            conn.execute(table.insert(), [
                {key: value for key, value in dict(
                    row, resource_provider_id=ids[uuid]).items()
                 if key != 'id'}
                for _name, uuid in rest for row in copied])


# Requests.

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


class CallClock:
    """Accumulates the time spent inside the patched calls, per label.

    ``targets``: ``{label: [(owner, attribute name)]}``; attributes an
    owner lacks are skipped (another version of the code).  A call made
    inside another timed call counts for the outer one only.
    """

    def __init__(self, targets):
        self.targets = targets
        #: Wall clock seconds per label.
        self.spent = collections.Counter()
        #: CPU seconds of this process per label (a loaded machine
        #: stretches wall clock time, not this).
        self.cpu = collections.Counter()
        #: Outermost calls per label.
        self.calls = collections.Counter()
        self._depth = 0

    def clear(self):
        self.spent.clear()
        self.cpu.clear()
        self.calls.clear()

    @contextlib.contextmanager
    def installed(self):
        with contextlib.ExitStack() as stack:
            for label, calls in self.targets.items():
                for owner, name in calls:
                    original = getattr(owner, name, None)
                    if original is None:
                        continue
                    stack.enter_context(unittest.mock.patch.object(
                        owner, name, self._timed(label, original)))
            yield self

    def _timed(self, label, original):
        def timed(*args, **kwargs):
            self._depth += 1
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.spent[label] += time.perf_counter() - start
                    self.cpu[label] += time.process_time() - cpu
                    self.calls[label] += 1
        return timed


def placement_clock():
    """The time spent inside placement calls, as ``spent['placement']``."""
    return CallClock({'placement': [
        (report.SchedulerReportClient, name)
        for name in ('get_allocation_candidates', 'claim_resources')]})


def median_ms(samples):
    return statistics.median(samples) * 1000.0


def elapsed(fn, *args, **kwargs):
    """Seconds ``fn(*args, **kwargs)`` took.

    Garbage is collected first, untimed (unless ``COLLECT`` is false): the
    samples of both managers alternate, and a collection the other one's
    garbage triggers must not land in this sample. Collections this call
    triggers itself count.
    """
    if COLLECT:
        gc.collect()
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def census(top=12):
    """``(total, [(type, count)])``: the objects Python's collector tracks
    (what a full collection walks, frozen ones excepted), by type."""
    counts = collections.Counter(
        f'{type(obj).__module__}.{type(obj).__qualname__}'
        for obj in gc.get_objects())
    return sum(counts.values()), counts.most_common(top)


def print_census(title, top=12):
    total, common = census(top)
    print(f'{title}: {total} objects tracked by the garbage collector, '
          f'{gc.get_freeze_count()} frozen; most common types:\n'
          + tabulate.tabulate(common, headers=['type', 'count'],
                              tablefmt='github'), file=sys.stderr)


def filter_and_weigh(manager, hosts, spec):
    return manager.get_weighed_hosts(
        manager.get_filtered_hosts(hosts, spec), spec)


def with_instance_info(scheduler, pushed):
    """``scheduler``, its host manager primed as computes would prime it."""
    scheduler.host_manager._instance_info = {
        host: {'instances': dict(instances), 'updated': True}
        for host, instances in pushed.items()}
    return scheduler


def measure(ctxt, schedulers, nodes, placement, repeats):
    """``{name: {measure: median ms}}`` for each scheduler.

    Samples of the schedulers alternate, so that load from other processes
    on the machine weighs on all of them alike.
    """
    uuids = list(nodes.values())
    spec = request_spec(ctxt)
    samples = {name: collections.defaultdict(list) for name in schedulers}

    def states(scheduler):
        return list(scheduler.host_manager.get_host_states_by_uuids(
            ctxt, uuids, spec))

    # Warm up: loads our cache, imports, lazy filter objects.
    hosts = {name: states(s) for name, s in schedulers.items()}
    for _ in range(repeats):
        for name, scheduler in schedulers.items():
            samples[name]['states'].append(elapsed(states, scheduler))
            samples[name]['filter_weigh'].append(elapsed(
                filter_and_weigh, scheduler.host_manager, hosts[name], spec))

    clock = placement_clock()
    with clock.installed():
        # The first round warms the placement client up; it is dropped.
        for round_ in range(repeats + 1):
            for name, scheduler in schedulers.items():
                spec = request_spec(ctxt)
                clock.clear()
                total = elapsed(
                    scheduler.select_destinations, ctxt, spec_obj=spec,
                    instance_uuids=[spec.instance_uuid], return_objects=True,
                    return_alternates=True)
                placement.delete(f'/allocations/{spec.instance_uuid}')
                if round_:
                    samples[name]['select'].append(total)
                    samples[name]['select_own'].append(
                        total - clock.spent['placement'])
    return {name: {key: median_ms(values) for key, values in result.items()}
            for name, result in samples.items()}


class RowWriter:
    """Writes the rows a real cloud changes in a given time, in rotation,
    as Nova writes them:

    - every nova-compute service heartbeats each ``report_interval`` (10
      s): Nova's database service group driver adds one to its
      ``report_count`` and stamps ``last_seen_up`` and ``updated_at``;
    - every compute node reports each minute
      (``update_resources_interval``): Nova saves the row only when a
      value changed, so each report here changes its ``cpu.percent``
      metric (a cloud with compute monitors, as this scheduler reads) and
      stamps ``updated_at``.

    Rows written earlier are read again, unchanged, as the timestamp
    margin makes a real refresh do."""

    def __init__(self, cell_url, size):
        self.engine = sa.create_engine(cell_url)
        self.size = size
        self.rates = {models.Service.__table__: size / CONF.report_interval,
                      models.ComputeNode.__table__: size / 60.0}
        self.next_id = dict.fromkeys(self.rates, 0)
        self.owed = dict.fromkeys(self.rates, 0.0)
        self.last = time.monotonic()
        self.stamped = 0
        self.rng = random.Random(size)

    def advance(self, seconds):
        """Stamp what changes in ``seconds``; returns the rows stamped."""
        now = timeutils.utcnow()
        stamped = 0
        #: Table name -> rows stamped by the last call.
        self.batch = {}
        with self.engine.begin() as conn:
            for table, rate in self.rates.items():
                self.owed[table] += rate * seconds
                batch = min(self.size, int(self.owed[table]))
                self.owed[table] -= batch
                self.batch[table.name] = batch
                if not batch:
                    continue
                first = self.next_id[table]
                ids = [(first + i) % self.size + 1 for i in range(batch)]
                self.next_id[table] = (first + batch) % self.size
                values = {'updated_at': now}
                if table is models.Service.__table__:
                    values.update(last_seen_up=now,
                                  report_count=table.c.report_count + 1)
                else:
                    values['metrics'] = jsonutils.dumps([{
                        'name': 'cpu.percent', 'source': 'virt',
                        'timestamp': now.isoformat(),
                        'value': round(self.rng.uniform(0.05, 0.95), 3)}])
                conn.execute(table.update().where(
                    table.c.id.in_(ids)).values(**values))
                stamped += batch
        self.stamped += stamped
        return stamped

    def catch_up(self):
        """Stamp what changed since the last call, on the real clock."""
        now = time.monotonic()
        self.advance(now - self.last)
        self.last = now

    def close(self):
        self.engine.dispose()


def measure_refresh(ctxt, manager, nodes, cell_url, repeats):
    """Median (ms) of the request that pays an incremental refresh, and the
    number of rows changed before each.

    Before each sample, the rows a real cloud changes in ``max_staleness``
    seconds are stamped (``RowWriter``).
    """
    staleness = CONF.drs_host_cache.max_staleness
    uuids = list(nodes.values())
    spec = request_spec(ctxt)
    writer = RowWriter(cell_url, len(nodes))
    samples = []
    changed = 0
    offset = 0.0
    for _ in range(repeats):
        changed = writer.advance(staleness)
        offset += staleness + 1
        manager.clock = lambda offset=offset: time.monotonic() + offset
        samples.append(elapsed(lambda: list(
            manager.get_host_states_by_uuids(ctxt, uuids, spec))))
    writer.close()
    return median_ms(samples), changed


#: ``--measure pass``: the parts of a background refresh pass, timed apart.
PASS_PARTS = {
    'query': [(rows_mod, 'read_changes')],
    # ``compute_node`` (which calls ``_from_db_object``) since parsed JSON
    # is reused, ``_from_db_object`` alone before: two calls a row either
    # way, which ``pass_rows`` counts as one rebuild.
    'node objects + templates': [
        (objects.ComputeNode, '_from_db_object'),
        (snapshot_mod, 'compute_node'),
        (snapshot_mod, 'node_entry')],
    'service objects + views': [
        (objects.Service, '_from_db_object'),
        (snapshot_mod, 'service_view')],
    'instance locations': [(snapshot_mod, '_merge_instances')],
    'freeze': [(freezing.Freezer, 'freeze')],
}


class SimulatedTime:
    """The refresher's monotonic clock and everyone's UTC clock, advanced
    by hand: passes run back to back on the real CPU, but each sees the
    rows a real cloud changes in one refresh interval, and its timestamp
    margin re-reads what it would in a service."""

    def __init__(self):
        self.monotonic = 0.0
        self.utc = timeutils.utcnow()

    def advance(self, seconds):
        self.monotonic += seconds
        self.utc += datetime.timedelta(seconds=seconds)

    @contextlib.contextmanager
    def installed(self):
        with unittest.mock.patch.object(
                timeutils, 'utcnow',
                lambda with_timezone=False: self.utc):
            yield self


class ReadCounter:
    """Rows per table each ``read_changes`` returned."""

    def __init__(self):
        self.read = collections.Counter()

    @contextlib.contextmanager
    def installed(self):
        original = rows_mod.read_changes

        def counted(*args, **kwargs):
            changes = original(*args, **kwargs)
            for table, found in changes._asdict().items():
                self.read[table] += len(found)
            return changes

        with unittest.mock.patch.object(rows_mod, 'read_changes', counted):
            yield self


def measure_pass(cell_url, size, passes):
    """What one background refresh pass costs at ``size`` nodes, by part,
    and how many rows it reads and rebuilds.

    Passes run back to back on a simulated clock advanced by the refresh
    interval before each, with the rows a real cloud changes in that time
    stamped (:class:`RowWriter`). The first passes, until the timestamp
    margin is full of stamped rows, are not counted.
    """
    group = CONF.drs_host_cache
    interval = host_cache_conf.refresh_interval(group) or 2.5
    warmup = 1 + math.ceil((group.timestamp_margin + interval) / interval)
    manager = host_manager_mod.CachingHostManager()
    sim = SimulatedTime()
    manager.clock = lambda: sim.monotonic
    writer = RowWriter(cell_url, size)
    clock = CallClock(PASS_PARTS)
    reads = ReadCounter()
    samples = collections.defaultdict(list)
    try:
        with sim.installed(), reads.installed(), clock.installed():
            for done in range(warmup + passes):
                sim.advance(interval)
                writer.advance(interval)
                clock.clear()
                reads.read.clear()
                wall, cpu = time.perf_counter(), time.process_time()
                manager.refresh_due()
                cpu = time.process_time() - cpu
                wall = time.perf_counter() - wall
                if done < warmup:
                    continue
                samples['pass cpu'].append(cpu)
                samples['pass wall'].append(wall)
                for label in PASS_PARTS:
                    samples[f'{label} cpu'].append(clock.cpu[label])
                    samples[f'{label} calls'].append(clock.calls[label])
                for table, count in reads.read.items():
                    samples[f'{table} read'].append(count)
                for table, count in writer.batch.items():
                    samples[f'{table} stamped'].append(count)
    finally:
        manager.stop_refresher()
        writer.close()
    return {key: statistics.median(values)
            for key, values in samples.items()}


def percentiles_ms(samples):
    """p50, p95, p99 and max of ``samples`` (seconds), in ms."""
    cuts = statistics.quantiles(samples, n=100, method='inclusive')
    return {'p50': cuts[49] * 1000.0, 'p95': cuts[94] * 1000.0,
            'p99': cuts[98] * 1000.0, 'max': max(samples) * 1000.0,
            'n': len(samples)}


def timed_select(ctxt, scheduler, placement, timeline=None):
    """Seconds one ``select_destinations`` took; its claim is undone
    (and checked: a request that claimed nothing raises).

    ``timeline``: a :class:`Timeline` that keeps the request's interval.
    """
    spec = request_spec(ctxt)
    took = elapsed(scheduler.select_destinations, ctxt, spec_obj=spec,
                   instance_uuids=[spec.instance_uuid], return_objects=True,
                   return_alternates=True)
    if timeline is not None:
        end = time.perf_counter()
        timeline.requests.append((end - took, end))
    undone = placement.delete(f'/allocations/{spec.instance_uuid}')
    if undone.status != 204:
        raise RuntimeError(f'no claim to undo: {undone.status} {undone}')
    return took


#: What :class:`Timeline` times outside the main thread besides what it
#: is given: a refresh of the host cache (the background refresher's, or
#: one a period's candidates call pays), and the freezing after a pass.
BACKGROUND_CALLS = {'cache refresh': [
                  (host_manager_mod.CachingHostManager, '_refresh')],
              'freeze': [(freezing.Freezer, 'freeze')]}


class Timeline:
    """When garbage collections, background refreshes (and, given
    ``targets``, e.g. a rebalance period's phases) ran, to tell what the
    slow requests overlapped.

    Collections are timed with ``gc.callbacks`` (label ``gc gen N``, in
    any thread); the calls of :data:`BACKGROUND_CALLS` and ``targets``
    (``{label: [(owner, attribute name)]}``, as :class:`CallClock` takes
    them) only outside the main thread, where the requests run.
    """

    def __init__(self, targets=None):
        #: [(start, end, label)] of everything timed.
        self.spans = []
        #: [(start, end)] of the requests timed, in order.
        self.requests = []
        self.targets = dict(BACKGROUND_CALLS, **(targets or {}))
        self._gc_started = None

    def _on_gc(self, phase, info):
        if phase == 'start':
            self._gc_started = time.perf_counter()
        elif self._gc_started is not None:
            self.spans.append((self._gc_started, time.perf_counter(),
                               f'gc gen {info["generation"]}'))
            self._gc_started = None

    def _timed(self, label, original, main):
        spans = self.spans

        def timed(*args, **kwargs):
            if threading.get_ident() == main:
                return original(*args, **kwargs)
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spans.append((start, time.perf_counter(), label))
        return timed

    @contextlib.contextmanager
    def installed(self):
        """Time from now on; the thread (green thread under eventlet,
        whose ``main_thread()`` is not it) installing is the requests'."""
        main = threading.get_ident()
        gc.callbacks.append(self._on_gc)
        try:
            with contextlib.ExitStack() as stack:
                for label, calls in self.targets.items():
                    for owner, name in calls:
                        original = getattr(owner, name, None)
                        if original is not None:
                            stack.enter_context(unittest.mock.patch.object(
                                owner, name,
                                self._timed(label, original, main)))
                yield self
        finally:
            gc.callbacks.remove(self._on_gc)

    def overlap(self, request):
        """``{label: seconds of that label's spans inside request}``;
        spans of one label that overlap (nested calls) count once."""
        start, end = request
        inside = collections.defaultdict(list)
        for a, b, label in self.spans:
            if a < end and b > start:
                inside[label].append((max(a, start), min(b, end)))
        found = collections.Counter()
        for label, spans in inside.items():
            reached = start
            for a, b in sorted(spans):
                found[label] += max(0.0, b - max(a, reached))
                reached = max(reached, b)
        return found


#: ``--measure latency``: the schedulers compared, each in a process of
#: its own.
STOCK, INLINE, BACKGROUND = (
    'stock', 'ours, inline refresh', 'ours, background refresh')


def make_scheduler(name, pushed):
    """Stock's manager, or ours refreshing inline or in the background."""
    if name == STOCK:
        scheduler = scheduler_manager.SchedulerManager()
    else:
        scheduler = DRSSchedulerManager()
    with_instance_info(scheduler, pushed)
    if name == BACKGROUND:
        scheduler.host_manager.start_refresher()
    return scheduler


class SchedulerProcess:
    """One scheduler in a process of its own, forked once the cloud's
    databases are written, timing the requests the parent asks for.

    Nothing of one scheduler then runs in another's process: not its
    threads (our background refresher), not its garbage collections, not
    its frozen objects. Each process has its own placement
    (:func:`placement_service`, ``placement``) with the same providers, so
    claims and their undoing never cross.
    """

    def __init__(self, name, ctxt, nodes, pushed, placement):
        self.name = name
        self.conn, child = multiprocessing.Pipe()
        self.pid = os.fork()
        if self.pid == 0:  # The child: serve, and never return.
            code = 1
            try:
                self.conn.close()
                _serve(child, name, ctxt, nodes, pushed, placement)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        child.close()
        self.ready = False

    def ask(self, *message):
        """Send ``message``; return the child's answer."""
        if not self.ready:
            self.ready = self.conn.recv() == 'ready'
        self.conn.send(message)
        return self.conn.recv()

    def close(self):
        with contextlib.suppress(OSError):
            self.conn.send(('exit',))
        os.waitpid(self.pid, 0)


def _serve(conn, name, ctxt, nodes, pushed, where):
    """The child's loop: ``('request', counted)``, ``('census',)``,
    ``('results',)``, ``('exit',)``."""
    # As Nova's forked workers do: no database connection of the parent's.
    nova_context.CELL_CACHE = {}
    # On a loaded machine the first, full load at 10000 nodes can take
    # longer than Nova's 60 s cell timeout, and the request then fails
    # with NoValidHost; it is a warm-up request, untimed.
    nova_context.CELL_TIMEOUT = max(nova_context.CELL_TIMEOUT,
                                    FIRST_LOAD_TIMEOUT)
    with placement_service(where, nodes) as placement:
        scheduler = make_scheduler(name, pushed)
        timeline = Timeline()
        samples, intervals = [], []
        try:
            with timeline.installed():
                conn.send('ready')
                while True:
                    command, *args = conn.recv()
                    if command == 'exit':
                        return
                    if command == 'census':
                        print_census(f'{name}, after {WARMUP} requests')
                        conn.send(None)
                    elif command == 'results':
                        conn.send((percentiles_ms(samples), overlap_stats(
                            timeline, samples, intervals)))
                    else:
                        took = timed_select(ctxt, scheduler, placement,
                                            timeline)
                        if args[0]:
                            samples.append(took)
                            intervals.append(timeline.requests[-1])
                        conn.send(took)
        finally:
            if name == BACKGROUND:
                scheduler.host_manager.stop_refresher()


def measure_latency(ctxt, nodes, pushed, writer, requests,
                    stock_requests=None, placement=INPROCESS):
    """``{name: percentiles}`` of ``select_destinations``, on the real
    clock, the rows changing between requests as a real cloud's do, and
    under ``'overlaps'`` what the requests overlapped (:class:`Timeline`).

    Each scheduler runs in its own process (:class:`SchedulerProcess`);
    their requests alternate, one at a time, so that load from other
    processes on the machine weighs on all of them alike. Our background
    refresher runs all along in its scheduler's process, as in the
    service. ``stock_requests``: stock's requests, if fewer, spread evenly;
    ``placement``: where each process's placement runs (:data:`PLACEMENT`).
    """
    # As Nova does before it forks workers: no thread pool of the parent's
    # may be inherited.
    thread_pool_factory.reset_all_executors()
    processes = {}
    try:
        for name in (STOCK, INLINE, BACKGROUND):
            processes[name] = SchedulerProcess(name, ctxt, nodes, pushed,
                                               placement)
        every = max(1, requests // (stock_requests or requests))
        for round_ in range(WARMUP + requests):
            for name, process in processes.items():
                if (name == STOCK and round_ >= WARMUP
                        and (round_ - WARMUP) % every):
                    continue
                writer.catch_up()
                process.ask('request', round_ >= WARMUP)
            if round_ == WARMUP - 1:
                for process in processes.values():
                    process.ask('census')
        result, overlaps = {}, {}
        for name, process in processes.items():
            result[name], overlaps[name] = process.ask('results')
    finally:
        for process in processes.values():
            process.close()
    result['overlaps'] = overlaps
    return result


def overlap_stats(timeline, samples, intervals):
    """What the requests of one scheduler (or condition) overlapped,
    slowest 5 % apart: ``{(part, label): [requests, seconds]}``, and under
    ``(part, 'n')`` the requests of that part; under ``'slowest'`` the
    slowest five as ``(ms, {label: ms})``."""
    cut = statistics.quantiles(samples, n=100, method='inclusive')[94]
    stats = collections.defaultdict(lambda: [0, 0.0])
    slowest = []
    for took, interval in zip(samples, intervals, strict=True):
        found = timeline.overlap(interval)
        part = 'slow' if took >= cut else 'rest'
        stats[(part, 'n')][0] += 1
        for label, seconds in found.items():
            stats[(part, label)][0] += 1
            stats[(part, label)][1] += seconds
        slowest.append((took * 1000.0, {
            label: seconds * 1000.0 for label, seconds in found.items()}))
    result = dict(stats)
    result['slowest'] = sorted(slowest, key=lambda s: -s[0])[:5]
    return result


def resident_mb():
    """The process's resident memory now (MiB), from /proc."""
    with open('/proc/self/statm', encoding='ascii') as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf('SC_PAGE_SIZE') / 2**20


def measure_memory(ctxt, scheduler, placement, writer, requests):
    """Rows of (requests done, seconds, resident MiB, frozen objects,
    tracked objects) every tenth of the run: with the background refresh
    freezing objects every 0.2 s, whether memory grows."""
    CONF.set_override('background_refresh_interval', 0.2,
                      group='drs_host_cache')
    scheduler.host_manager.start_refresher()
    started = time.monotonic()
    rows = []
    step = max(1, requests // 10)
    for done in range(requests + 1):
        if done % step == 0:
            rows.append([done, time.monotonic() - started, resident_mb(),
                         gc.get_freeze_count(), len(gc.get_objects())])
        if done < requests:
            writer.catch_up()
            timed_select(ctxt, scheduler, placement)
    return rows


class AlwaysLeader:
    """The bench has no scheduler service rows to elect a leader from."""

    def check(self, context):
        return True, 'benchmark'


class PeriodLoop:
    """Rebalance periods back to back in another thread (a green thread
    under eventlet), as the service's periodic task runs them.

    ``spans``: a list to which each period adds ``(start, end,
    'period')`` (:class:`Timeline`)."""

    def __init__(self, ctxt, scheduler, spans=None):
        self.ctxt = ctxt
        self.scheduler = scheduler
        self.spans = [] if spans is None else spans
        self.durations = []
        self.skipped = []
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self):
        """Stop after the period in progress (waited for, untimed)."""
        self._stop.set()
        self._thread.join()

    def _run(self):
        while not self._stop.is_set():
            started = time.perf_counter()
            rec = self.scheduler.run_rebalance(self.ctxt)
            ended = time.perf_counter()
            self.durations.append(ended - started)
            self.spans.append((started, ended, 'period'))
            if rec.get('skipped'):
                self.skipped.append(rec['skipped'])


def write_static_metrics(path, nodes, size):
    """A static metric sample: host CPU like the rows' ``cpu.percent``
    (seeded), instances sharing it, so that hosts are over and under."""
    rng = random.Random(size)
    hosts = {host: {'cpu_percent': round(rng.uniform(5, 95), 1)}
             for host in nodes}
    with open(path, 'w', encoding='utf-8') as handle:
        jsonutils.dump({'hosts': hosts, 'instances': {}}, handle)


#: ``--measure period``'s conditions, in the order their blocks alternate.
QUIET, GIVING_WAY, SHORT_WAITS, NOT_GIVING_WAY = (
    'quiet', 'during periods', 'during periods, 0.2 s a point',
    'during periods, not giving way')


def measure_period(ctxt, scheduler, placement, writer, requests):
    """Percentiles of ours without and during rebalance periods, and
    under ``'overlaps'`` what the requests of each condition overlapped
    (:class:`Timeline`, with the periods and their phases).

    Blocks of ``PERIOD_BLOCK`` requests alternate between the conditions,
    so that the machine's load weighs on all alike: no period running;
    periods running, giving way to requests in flight (``pacing``); the
    same, waiting at most 0.2 s at a point (``pacing.LIMIT``: as before
    periods had a budget, ``pacing.budget``); and periods running with
    giving way turned off (as before it existed).
    """
    timeline = Timeline(dict(PERIOD_PHASES, **PERIOD_PLACEMENT))
    loop = PeriodLoop(ctxt, scheduler, timeline.spans)
    samples = {QUIET: [], GIVING_WAY: []}
    budget = getattr(pacing, 'budget', None)
    if budget is not None:
        samples[SHORT_WAITS] = []
    if pacing is not None:
        samples[NOT_GIVING_WAY] = []
    intervals = {name: [] for name in samples}
    for _ in range(WARMUP):
        timed_select(ctxt, scheduler, placement)
    with timeline.installed():
        while len(samples[GIVING_WAY]) < requests:
            for name in samples:
                with contextlib.ExitStack() as stack:
                    if name == NOT_GIVING_WAY:
                        stack.enter_context(unittest.mock.patch.object(
                            pacing, 'give_way',
                            lambda *args, **kwargs: 0.0))
                    elif name == SHORT_WAITS:
                        stack.enter_context(unittest.mock.patch.object(
                            pacing, 'budget',
                            lambda seconds, limit=None: budget(
                                seconds, pacing.LIMIT)))
                    if name != QUIET:
                        loop.start()
                        stack.callback(loop.stop)
                        # Let the period get going before timing requests.
                        time.sleep(0.05)
                    for _ in range(PERIOD_BLOCK):
                        writer.catch_up()
                        samples[name].append(timed_select(
                            ctxt, scheduler, placement, timeline))
                        intervals[name].append(timeline.requests[-1])
    result = {name: percentiles_ms(values)
              for name, values in samples.items()}
    result['overlaps'] = {
        name: overlap_stats(timeline, values, intervals[name])
        for name, values in samples.items()}
    durations = loop.durations or [0.0]
    result['periods'] = {'count': len(loop.durations),
                         'median_s': statistics.median(durations),
                         'skipped': sorted(set(loop.skipped))}
    return result


def measure_unsynced(ctxt, nodes, repeats):
    """Stock host states when computes have not pushed instance info."""
    manager = nova_host_manager.HostManager()
    uuids = list(nodes.values())
    spec = request_spec(ctxt)
    return median_ms([elapsed(lambda: list(manager.get_host_states_by_uuids(
        ctxt, uuids, spec))) for _ in range(repeats)])


def run_size(args, workdir, size):
    ctxt = nova_context.get_admin_context()
    cell = create_cell(ctxt, args.db, workdir, size)
    cell_url = cell.database_connection
    started = time.perf_counter()
    with nova_context.target_cell(ctxt, cell) as cctxt:
        nodes, pushed = populate(cctxt, cell, cell_url, size,
                                 args.instances_per_host)
    if args.measure in ('pass', 'latency'):
        # No placement here: the latency's schedulers have their own.
        setup = time.perf_counter() - started
        if args.measure == 'pass':
            result = {'pass': measure_pass(cell_url, size, args.requests)}
        else:
            writer = RowWriter(cell_url, size)
            try:
                result = {'latency': measure_latency(
                    ctxt, nodes, pushed, writer, args.requests,
                    args.stock_requests, args.placement)}
            finally:
                writer.close()
        drop_cell(cell)
        return dict(result, size=size, setup=setup, repeats=args.requests)
    with placement_service(args.placement, nodes) as placement:
        setup = time.perf_counter() - started
        if args.measure != 'medians':
            result = run_percentiles(args, workdir, ctxt, nodes, pushed,
                                     placement, cell_url)
            drop_cell(cell)
            return dict(result, size=size, setup=setup,
                        repeats=args.requests)
        repeats = REPEATS.get(size, 3)
        # Fresh rows for the steady state: nothing expires mid-run.
        CONF.set_override('max_staleness', 300, group='drs_host_cache')
        ours = with_instance_info(DRSSchedulerManager(), pushed)
        result = measure(ctxt, {
            'stock': with_instance_info(
                scheduler_manager.SchedulerManager(), pushed),
            'ours': ours}, nodes, placement, repeats)
        CONF.clear_override('max_staleness', group='drs_host_cache')
        result['ours']['refresh'], changed = measure_refresh(
            ctxt, ours.host_manager, nodes, cell_url, repeats)
        unsynced = (measure_unsynced(ctxt, nodes, min(repeats, 5))
                    if size <= UNSYNCED_MAX_NODES else None)
    drop_cell(cell)
    return dict(result, size=size, changed=changed, unsynced=unsynced,
                setup=setup, repeats=repeats)


def run_percentiles(args, workdir, ctxt, nodes, pushed, placement,
                    cell_url):
    """``--measure memory`` or ``period`` on one cloud."""
    writer = RowWriter(cell_url, len(nodes))
    ours = with_instance_info(DRSSchedulerManager(), pushed)
    try:
        if args.measure == 'memory':
            return {'memory': measure_memory(ctxt, ours, placement, writer,
                                             args.requests)}
        metrics = f'{workdir}/metrics-{len(nodes)}.json'
        write_static_metrics(metrics, nodes, len(nodes))
        CONF.set_override('automation', 'manual', group='drs')
        CONF.set_override('metrics_source', 'static', group='drs')
        CONF.set_override('static_metrics_file', metrics, group='drs')
        # The manager loaded its metric source before the overrides.
        ours.rebalancer.reload()
        ours.rebalancer.leader = AlwaysLeader()
        ours.host_manager.start_refresher()
        return {'period': measure_period(ctxt, ours, placement, writer,
                                         args.requests)}
    finally:
        ours.host_manager.stop_refresher()
        writer.close()


def latency_rows(results):
    rows = []
    for r in results:
        latency = r['latency']
        base = latency['stock']['p50']
        for name, p in latency.items():
            if name != 'overlaps':
                rows.append([r['size'], name, p['p50'], p['p95'], p['p99'],
                             p['max'], p['p99'] / p['p50'], base / p['p50']])
    return rows


def overlap_rows(results, measure):
    """Per scheduler (or condition), the slowest 5 % of requests against
    the rest: per label of what they overlapped (:class:`Timeline`), how
    many did and the mean ms of it inside one of the part's requests.
    Returns ``(rows, headers)``."""
    labels = sorted({key[1] for r in results
                     for s in r[measure]['overlaps'].values()
                     for key in s if key != 'slowest' and key[1] != 'n'})
    rows = []
    for r in results:
        for name, s in r[measure]['overlaps'].items():
            for part in ('slow', 'rest'):
                n = s.get((part, 'n'), [0])[0]
                cells = []
                for label in labels:
                    count, seconds = s.get((part, label), (0, 0.0))
                    cells.append(f'{count}: {seconds * 1000.0 / (n or 1):.1f}')
                rows.append([r['size'], name, part, n] + cells)
    return rows, ['N', 'who', 'requests', 'n'] + labels


def slowest_rows(results, measure):
    """Per scheduler (or condition), its five slowest requests and what
    they overlapped, the longest overlap first (ms)."""
    rows = []
    for r in results:
        for name, s in r[measure]['overlaps'].items():
            for took, found in s['slowest']:
                rows.append([r['size'], name, took, ', '.join(
                    f'{label} {ms:.0f}' for label, ms in sorted(
                        found.items(), key=lambda item: -item[1]))])
    return rows


def print_overlaps(results, measure):
    rows, headers = overlap_rows(results, measure)
    print_tables([
        ('What the requests overlapped (slow: the slowest 5 %; each cell: '
         'how many of them overlapped it: the mean ms of it inside one '
         'of them):', rows, headers),
        ('The five slowest requests and what they overlapped (ms):',
         slowest_rows(results, measure), ['N', 'who', 'ms', 'overlapped'])],
        floatfmt='.1f')


def period_rows(results):
    rows = []
    for r in results:
        period = r['period']
        quiet = period['quiet']
        for name in (QUIET, GIVING_WAY, SHORT_WAITS, NOT_GIVING_WAY):
            if name not in period:
                continue
            p = period[name]
            rows.append([r['size'], name, p['p50'], p['p95'], p['p99'],
                         p['max'], p['p50'] / quiet['p50'],
                         p['p95'] / quiet['p95'], p['p99'] / quiet['p99'],
                         p['max'] / quiet['max']])
    return rows


def pass_rows(results):
    """Per N, the rows one pass stamps, reads and rebuilds, and its CPU
    time by part (medians over the passes)."""
    counts, parts = [], []
    rebuilt = {'compute_nodes': 'node objects + templates',
               'services': 'service objects + views'}
    for r in results:
        p = r['pass']
        for table in ('compute_nodes', 'services', 'instances'):
            counts.append([r['size'], table, p.get(f'{table} stamped', 0),
                           p.get(f'{table} read', 0),
                           p.get(f'{rebuilt.get(table)} calls', 0) / 2
                           if table in rebuilt else None])
        total = p['pass cpu']
        for label in PASS_PARTS:
            parts.append([r['size'], label, p[f'{label} cpu'] * 1000.0,
                          p[f'{label} cpu'] / total * 100.0])
        rest = total - sum(p[f'{label} cpu'] for label in PASS_PARTS)
        parts.append([r['size'], 'other (row compare, merge, garbage '
                      'collection)', rest * 1000.0, rest / total * 100.0])
        parts.append([r['size'], 'whole pass', total * 1000.0, 100.0])
        parts.append([r['size'], 'whole pass, wall clock',
                      p['pass wall'] * 1000.0, None])
    return counts, parts


def print_percentiles(args, results):
    if args.measure == 'pass':
        counts, parts = pass_rows(results)
        print_tables([
            ('Rows per pass (medians): stamped by the writer in one '
             'refresh interval, read by the pass, rebuilt by it:',
             counts, ['N', 'table', 'stamped', 'read', 'rebuilt']),
            ('CPU time of one pass by part (medians over the passes; the '
             'parts\' medians need not add up to the whole):', parts,
             ['N', 'part', 'CPU ms', '% of the pass'])], floatfmt='.1f')
        return
    if args.measure == 'memory':
        for r in results:
            print(tabulate.tabulate(
                r['memory'], headers=['requests', 's', 'resident MiB',
                                      'frozen objects', 'tracked objects'],
                floatfmt='.0f', tablefmt='github'))
        return
    if args.measure == 'latency':
        print(tabulate.tabulate(
            latency_rows(results),
            headers=['N', 'scheduler', 'p50 ms', 'p95 ms', 'p99 ms',
                     'max ms', 'p99/p50', 'stock p50/p50'],
            floatfmt='.1f', tablefmt='github'))
        print()
        print_overlaps(results, 'latency')
        return
    print_tables([(
        'Ours without (quiet) and during rebalance periods, and the '
        'ratios to quiet:', period_rows(results),
        ['N', 'ours', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms',
         'p50 / quiet', 'p95 / quiet', 'p99 / quiet', 'max / quiet'])])
    for r in results:
        periods = r['period']['periods']
        print(f'N={r["size"]}: {periods["count"]} periods ran, median '
              f'{periods["median_s"]:.2f} s'
              + (f'; skipped: {periods["skipped"]}'
                 if periods['skipped'] else '') + '\n')
    print_overlaps(results, 'period')


def report_rows(results):
    rows = []
    for r in results:
        stock, ours = r['stock'], r['ours']
        for label, key in (('host states', 'states'),
                           ('filter + weigh', 'filter_weigh'),
                           ('select_destinations', 'select'),
                           ('select_destinations w/o placement',
                            'select_own')):
            rows.append([r['size'], label, stock[key], ours[key],
                         stock[key] / ours[key]])
        rows.append([r['size'], 'host states, request that refreshes '
                     f'({r["changed"]} rows changed)', None,
                     ours['refresh'], None])
        if r['unsynced'] is not None:
            rows.append([r['size'], 'host states, instance info not synced',
                         r['unsynced'], ours['states'],
                         r['unsynced'] / ours['states']])
    return rows


def growth_rows(results):
    rows = []
    for prev, cur in zip(results, results[1:], strict=False):
        factor = cur['size'] / prev['size']
        for label, key in (('host states', 'states'),
                           ('select_destinations w/o placement',
                            'select_own')):
            rows.append([f'{prev["size"]} -> {cur["size"]} (x{factor:g})',
                         label, cur['stock'][key] / prev['stock'][key],
                         cur['ours'][key] / prev['ours'][key]])
    return rows


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


def main():
    global COLLECT
    args = parse_args()
    COLLECT = not args.no_collect
    results = []
    with environment(args.db) as workdir:
        apply_gc_argument(args)
        for size in args.nodes:
            result = run_size(args, workdir, size)
            print(f'N={size}: setup {result["setup"]:.1f} s, '
                  f'{result["repeats"]} repeats', file=sys.stderr)
            results.append(result)
    db = args.db.split('://')[0] if args.db else 'sqlite (files)'
    concurrency = (f'{drs_service.concurrency_backend()}; placement '
                   f'{args.placement}')
    if args.measure != 'medians':
        print(f'Database: {db}; {args.instances_per_host} instances per '
              f'host; {concurrency}; {args.requests} requests per '
              f'scheduler or condition; garbage '
              f'{"collected" if COLLECT else "not collected"} before each '
              f'request; {datetime.date.today()}.\n')
        print_percentiles(args, results)
        return 0
    print_tables([
        (f'Database: {db}; {args.instances_per_host} instances per host; '
         f'{concurrency}; {datetime.date.today()}; medians in ms.',
         report_rows(results),
         ['N', 'measure', 'stock ms', 'ours ms', 'stock/ours']),
        ('Growth of cost between sizes (1.0 = constant, = factor: '
         'linear):', growth_rows(results),
         ['sizes', 'measure', 'stock growth', 'ours growth'])])
    return 0


def print_tables(tables, floatfmt='.2f'):
    """``[(title, rows, headers)]`` as Markdown tables."""
    for title, rows, headers in tables:
        print(f'{title}\n')
        print(tabulate.tabulate(rows, headers=headers, floatfmt=floatfmt,
                                tablefmt='github', missingval='-'))
        print()


if __name__ == '__main__':
    sys.exit(main())
