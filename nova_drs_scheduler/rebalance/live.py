"""The planner's Snapshot, built from live Nova state.

:func:`read_cloud` reads every enabled cell's compute nodes and services
(only the columns a period uses, as plain rows: parsing thousands of them
into Nova objects was most of a period's read), the aggregates and the
recent migrations; :func:`read_instances` then reads only the instances a
period can use: those of the hosts over their threshold (the only
sources), plus the few named by migrations and open recommendations, a
few hosts per query so that requests in flight get their turn in between
(an instance that changes host between two of those queries may be left
out of that period, as one created just after the read is).  Instances
are read as plain rows too (:class:`InstanceRow`); Nova's Instance object
is made only for those that need one (measured over Nova's diagnostics
RPC, scored as candidates).  Database reads only: nothing here calls
another service over RPC, so the reads may run under ``target_cell``
(§0.4 of the integration notes).
:func:`build_snapshot` then turns those rows, the metric windows' verdicts
and the instances' measured loads into the planner's
:class:`~.model.Snapshot`.
"""

import dataclasses
import datetime
import functools
from collections.abc import Mapping

import sqlalchemy as sa
from nova import context as nova_context
from nova import objects
from nova.compute import vm_states
from nova.db.main import api as main_db_api
from nova.db.main import models
from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import strutils
from oslo_utils import timeutils

from nova_drs_scheduler import log_once
from nova_drs_scheduler import pacing
from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import recent_moves
from nova_drs_scheduler.rebalance import executor

LOG = logging.getLogger(__name__)

#: Instance metadata and flavor extra spec that keep an instance in place.
INSTANCE_OPT_OUT = 'drs_exclude'
FLAVOR_OPT_OUT = 'drs:exclude'
#: Pool of hosts an aggregate puts in global mode under ``mode=aggregate``.
GLOBAL_POOL = '(global)'
#: How a drain moves an instance, by ``vm_state``: Nova live-migrates
#: active and paused instances and cold-migrates stopped ones.
DRAIN_MIGRATIONS = {vm_states.ACTIVE: model.LIVE,
                    vm_states.PAUSED: model.LIVE,
                    vm_states.STOPPED: model.COLD}
#: Hosts (or instance uuids) per instance query; requests in flight get
#: their turn between two (:mod:`~nova_drs_scheduler.pacing`).
READ_SLICE = 10
#: Labels of the flavor and metadata columns read beside an instance's
#: (:func:`_instance_rows`).
_FLAVOR = 'drs_flavor'
_OPT_OUT = 'drs_instance_opt_out'


#: The compute node columns a period uses (:func:`host_snapshot`, the
#: nova source's ``node_sample``).
NODE_COLUMNS = ('host', 'hypervisor_hostname', 'vcpus', 'memory_mb',
                'metrics')
#: The service columns a period uses: ``disabled``, and what Nova's
#: servicegroup drivers read to tell whether it is up.
SERVICE_COLUMNS = ('host', 'binary', 'topic', 'disabled', 'forced_down',
                   'created_at', 'updated_at', 'last_seen_up')


@dataclasses.dataclass
class HostRows:
    """One compute host as Nova records it."""

    name: str
    #: A row of :data:`NODE_COLUMNS`, read by attribute.
    node: object
    #: {column: value} of :data:`SERVICE_COLUMNS`, as
    #: ``ServiceGroupAPI.service_is_up`` takes it.
    service: Mapping
    cell: object
    up: bool
    aggregates: list


@dataclasses.dataclass(frozen=True)
class InstanceFacts:
    """What a period needs of an instance's flavor and metadata.

    Read as plain values (:func:`instance_row`): Nova's Instance objects
    with their flavor and metadata loaded cost most of a period's read.
    """

    vcpus: int
    memory_mb: int
    #: The flavor's ``drs:exclude`` extra spec, None when unset.
    flavor_opt_out: str | None = None
    #: The instance's ``drs_exclude`` metadata, None when unset.
    instance_opt_out: str | None = None


def _column(name: str) -> property:
    """A read-only attribute of :class:`InstanceRow`: the row's column, as
    Nova's Instance object of the row would give it."""
    return property(lambda self: self.row[name])


@dataclasses.dataclass(frozen=True, eq=False)
class InstanceRow:
    """One instance as a period reads it (:func:`read_instances`).

    A plain row: making each one Nova's Instance object was most of a
    period's read, and a period needs that object only for the instances
    it measures over Nova's diagnostics RPC (the ``nova`` source) or
    scores as candidates; :attr:`nova` makes it for those.  Compared and
    hashed by identity: field by field would compare whole rows, and a
    dict row cannot be hashed.
    """

    #: Every column of the instance's ``instances`` row, by name.
    row: Mapping
    facts: InstanceFacts
    cell: object
    #: The context the row was read with, targeted at :attr:`cell`.
    context: object

    uuid, host, display_name, vm_state, task_state, vcpus = map(_column, (
        'uuid', 'host', 'display_name', 'vm_state', 'task_state', 'vcpus'))

    @functools.cached_property
    def nova(self) -> objects.Instance:
        """Nova's Instance object of the row, made once, as
        ``InstanceList.get_by_filters`` makes it without ``expected_attrs``
        (flavor, metadata and the other optional fields load on access):
        what Nova's diagnostics RPC and a RequestSpec take."""
        return objects.Instance._from_db_object(
            self.context, objects.Instance(), self.row, expected_attrs=[])


@dataclasses.dataclass
class Cloud:
    """Everything one period reads from Nova's databases."""

    hosts: dict
    #: {instance uuid: InstanceRow}, as :func:`read_instances` filled it.
    instances: dict
    migrations: list
    #: {instance uuid: CPU cores} as the period measured them (the
    #: metric source's answer; an instance not measured is absent).
    loads: dict = dataclasses.field(default_factory=dict)


def read_cloud(context, cells, servicegroup_api, since: datetime.datetime
               ) -> Cloud:
    """Hosts of every cell in ``cells``; migrations changed since ``since``.

    No instance yet: which ones are worth reading depends on the hosts'
    verdicts (:func:`read_instances`).
    """
    by_host = {}
    for aggregate in objects.AggregateList.get_all(context):
        for name in aggregate.hosts:
            by_host.setdefault(name, []).append(aggregate)
    hosts, migrations = {}, []
    for cell in cells:
        with nova_context.target_cell(context, cell) as cctxt:
            nodes, services = _host_rows(cctxt)
            migrations.extend(recent_migrations(cctxt, since))
        for node in pacing.paced(sorted(
                nodes, key=lambda node: node.hypervisor_hostname)):
            service = services.get(node.host)
            if service is None or node.host in hosts:
                continue  # No service yet, or a second node (ironic).
            hosts[node.host] = HostRows(
                node.host, node, service, cell,
                servicegroup_api.service_is_up(service),
                by_host.get(node.host, []))
    return Cloud(hosts, {}, migrations)


@main_db_api.pick_context_manager_reader
def _host_rows(context) -> tuple[list, dict]:
    """``(compute node rows, {host: service mapping})`` of one cell, live
    rows only, in one transaction."""
    node, service = models.ComputeNode, models.Service
    nodes = context.session.query(
        *(getattr(node, name) for name in NODE_COLUMNS)).filter(
        node.deleted == 0).all()
    services = context.session.query(
        *(getattr(service, name) for name in SERVICE_COLUMNS)).filter(
        service.deleted == 0, service.binary == 'nova-compute').all()
    return nodes, {row.host: dict(row._mapping) for row in services}


def read_instances(context, cloud: Cloud, hosts=None, uuids=()) -> None:
    """Add to ``cloud.instances`` the instances on ``hosts`` and ``uuids``.

    ``hosts`` None reads every host's (``nova-drs plan`` and ``explain``
    show them all); the periodic task names the hosts over their threshold,
    which is what keeps a period's read small in a large cloud.  ``uuids``
    (e.g. instances of recent migrations) are read wherever they are, if on
    a host of ``cloud``.  An instance with no flavor stored yet (not built)
    is left out: nothing a period can move.
    """
    wanted = set(cloud.hosts) if hosts is None else set(hosts)
    uuids = sorted(set(uuids))
    for cell in {rows.cell.uuid: rows.cell
                 for rows in cloud.hosts.values()}.values():
        names = sorted(name for name in wanted
                       if name in cloud.hosts
                       and cloud.hosts[name].cell.uuid == cell.uuid)
        if not names and not uuids:
            continue
        with nova_context.target_cell(context, cell) as cctxt:
            for key, values in (('host', names), ('uuid', uuids)):
                # In slices, so that requests get their turn in between.
                for start in range(0, len(values), READ_SLICE):
                    pacing.pause()
                    for row in _instance_rows(
                            cctxt, key, values[start:start + READ_SLICE]):
                        found = instance_row(row, cell, cctxt)
                        if found is not None and found.host in cloud.hosts:
                            cloud.instances[found.uuid] = found


@main_db_api.pick_context_manager_reader
def _instance_rows(context, column: str, values: list) -> list:
    """The live instances of one cell whose ``column`` (``host`` or
    ``uuid``) is in ``values``, each row with its stored flavor and its
    ``drs_exclude`` metadata, in one query.

    The instances are those ``InstanceList.get_by_filters`` returns for
    ``{column: values, 'deleted': False}`` (neither deleted nor soft
    deleted, not hidden), but unsorted: its sort by creation time made
    SQLite walk the ``(deleted, created_at)`` index, every live instance
    of the cell, for each query, instead of the index on ``column``.
    """
    instance = models.Instance.__table__
    extra = models.InstanceExtra.__table__
    metadata = models.InstanceMetadata.__table__
    joined = instance.outerjoin(extra, sa.and_(
        extra.c.instance_uuid == instance.c.uuid, extra.c.deleted == 0)
    ).outerjoin(metadata, sa.and_(
        metadata.c.instance_uuid == instance.c.uuid,
        metadata.c.deleted == 0, metadata.c.key == INSTANCE_OPT_OUT))
    query = sa.select(
        instance, extra.c.flavor.label(_FLAVOR),
        metadata.c.value.label(_OPT_OUT)).select_from(joined).where(
        instance.c[column].in_(values), instance.c.deleted == 0,
        sa.or_(instance.c.vm_state != vm_states.SOFT_DELETED,
               instance.c.vm_state.is_(None)),
        sa.or_(instance.c.hidden == sa.false(), instance.c.hidden.is_(None)))
    return [row._mapping for row in context.session.execute(query)]


def instance_row(row: Mapping, cell, context) -> InstanceRow | None:
    """The :class:`InstanceRow` of one of :func:`_instance_rows`' rows,
    its :class:`InstanceFacts` from the flavor Nova embeds in
    ``instance_extra`` (its ``cur`` version, as ``Instance.flavor`` loads
    it); None for an instance with no flavor stored yet."""
    if not row[_FLAVOR]:
        return None
    data = jsonutils.loads(row[_FLAVOR])['cur']['nova_object.data']
    return InstanceRow(row, InstanceFacts(
        vcpus=data['vcpus'], memory_mb=data['memory_mb'],
        flavor_opt_out=(data.get('extra_specs') or {}).get(FLAVOR_OPT_OUT),
        instance_opt_out=row[_OPT_OUT]), cell, context)


def recent_migrations(cctxt, since: datetime.datetime) -> list:
    """Migrations in progress or ended since ``since``, of one cell.

    ``changes-since`` alone would miss a migration just created and not yet
    updated (``updated_at`` is NULL), so those in progress are read by
    status; one not updated since ``since`` is taken as stale.
    """
    found = {m.uuid: m for m in objects.MigrationList.get_by_filters(
        cctxt, {'changes-since': since})}
    for migration in objects.MigrationList.get_by_filters(
            cctxt, {'status': sorted(executor.IN_PROGRESS)}):
        changed = migration.updated_at or migration.created_at
        if timeutils.normalize_time(changed) >= since:
            found.setdefault(migration.uuid, migration)
    return list(found.values())


def needs_attention(cloud: Cloud) -> dict:
    """Instances Nova left in ERROR after a DRS migration: ``{uuid: why}``.

    Nova puts an instance in ERROR when a live migration fails in an
    unexpected way (e.g. the destination compute's late server-group
    check); only an operator can tell whether it is healthy and reset it.
    Such an instance is blocked (not ACTIVE) and, once reset, quarantined
    like any failed DRS move; this says it needs someone meanwhile.
    """
    newest = {}
    for migration in sorted(cloud.migrations, key=executor.changed_at):
        newest[migration.instance_uuid] = migration
    found = {}
    for uuid, instance in sorted(cloud.instances.items()):
        migration = newest.get(uuid)
        if (instance.vm_state != vm_states.ERROR or migration is None
                or migration.user_id != executor.DRS_USER):
            continue
        # The destination is unknown to the record when the conductor
        # failed before choosing it.
        to = f' to {migration.dest_compute}' if migration.dest_compute \
            else ''
        found[uuid] = (
            f'vm_state error after DRS migration {migration.uuid} from '
            f'{migration.source_compute}{to} ended {migration.status}: '
            f'check the instance, then reset its state')
        log_once.warning(LOG, ('attention', uuid, migration.uuid),
                         'DRS: instance %s needs attention: %s', uuid,
                         found[uuid])
    return found


def schedulable(rows: HostRows) -> bool:
    """Disabled (e.g. for maintenance), forced down or down: no new load."""
    return rows.up and not rows.service['disabled']


def opt_out(facts: InstanceFacts) -> str | None:
    """Why the instance's owner or flavor keeps it in place, if they do."""
    if strutils.bool_from_string(facts.instance_opt_out):
        return f'opted out: instance metadata {INSTANCE_OPT_OUT}=true'
    if strutils.bool_from_string(facts.flavor_opt_out):
        return f'opted out: flavor extra spec {FLAVOR_OPT_OUT}=true'
    return None


def instance_blocked(instance, facts: InstanceFacts,
                     migration_blocked: str | None) -> str | None:
    """The first reason the instance may not move now, or None."""
    if instance.vm_state != vm_states.ACTIVE:
        return f'not ACTIVE (vm_state {instance.vm_state})'
    if instance.task_state is not None:
        return f'busy (task_state {instance.task_state})'
    return migration_blocked or opt_out(facts)


def drain_blocked(instance, facts: InstanceFacts, up: bool,
                  reason: str | None, kind: str | None
                  ) -> tuple[str | None, bool, str]:
    """How an instance leaves a host in maintenance: ``(why it cannot
    now or None, whether that passes by itself, Move.migration)``.

    ``reason`` and ``kind``: what recent migrations say of it
    (``recent_moves.MigrationState``).  A move in flight or a task
    running passes; a cooldown does not hold a drain back; anything else
    blocks it until someone acts.
    """
    migration = DRAIN_MIGRATIONS.get(instance.vm_state)
    if kind == recent_moves.IN_FLIGHT:
        return reason, True, model.LIVE
    if not up:
        return ('the host\'s nova-compute service is down: nothing can '
                'migrate off it (evacuate it instead)', False, model.LIVE)
    if migration is None:
        return (f'vm_state {instance.vm_state}: a drain moves active, '
                f'paused and stopped instances only', False, model.LIVE)
    if instance.task_state is not None:
        return f'busy (task_state {instance.task_state})', True, migration
    if kind == recent_moves.QUARANTINE:
        return reason, False, migration
    return opt_out(facts), False, migration


def pool(settings, config: model.PlannerConfig) -> str | None:
    """The host's pool key as the planner and candidates compare it.

    A host in aggregate mode (``[drs] mode`` or its aggregates'
    ``drs_mode``) pools with the hosts of exactly the same aggregates; in
    global mode every host shares one pool, None in global mode and
    :data:`GLOBAL_POOL` for hosts an aggregate puts in global mode while
    ``[drs] mode = aggregate``.  Hosts in no aggregate are always None,
    which ``[drs] unaggregated_hosts`` governs.
    """
    if settings.pool is None:
        return None
    if settings.mode == 'aggregate':
        return settings.pool
    return GLOBAL_POOL if config.mode == 'aggregate' else None


def host_snapshot(rows: HostRows, status, settings,
                  config: model.PlannerConfig,
                  draining: bool = False,
                  queued: bool = False,
                  loads_stayed: tuple | None = None) -> model.HostSnapshot:
    """One host: windows' verdict, node capacity, aggregate settings,
    whether it is in maintenance or waiting in its queue, and whether the
    loads moved off it stayed (``(stayed, checked)`` of its recent relief
    checks, None when unknown)."""
    judged = status is not None and status.cpu_percent is not None
    return model.HostSnapshot(
        name=rows.name,
        vcpus=rows.node.vcpus,
        memory_mb=rows.node.memory_mb,
        cpu_percent=status.cpu_percent if judged else None,
        ram_percent=status.ram_percent if judged else None,
        counter=status.counter if judged else 0,
        window=status.window if judged else (),
        cpu_expected=status.cpu_expected if judged else None,
        cpu_deviation=status.cpu_deviation if judged else None,
        rise_rate=status.rise_rate if judged else None,
        cpu_contention=metrics.contention_percent(
            status.cpu_waiting, rows.node.vcpus) if judged else None,
        pool=pool(settings, config),
        cpu_threshold=settings.cpu_threshold,
        ram_threshold=settings.ram_threshold,
        schedulable=schedulable(rows),
        excluded=settings.excluded,
        automation_off=settings.automation_off,
        draining=draining,
        queued=queued,
        power_level=settings.power_level,
        loads_stayed=loads_stayed)


def fallback_loads(hosts, instances, loads) -> dict:
    """Loads for unmeasured instances: a vCPU share of their host's CPU.

    The host's measured busy cores are split over its instances in
    proportion to their vCPUs; measured instances keep their load.  Logged
    for hosts over their threshold (the only ones whose instances may be
    chosen), since a share is a guess that can pick a worse instance.
    """
    vcpus = {}
    for instance in instances:
        vcpus[instance.host] = vcpus.get(instance.host, 0) + instance.vcpus
    result = dict(loads)
    guessed = []
    for instance in instances:
        host = hosts.get(instance.host)
        if instance.uuid in result or host is None or (
                host.cpu_percent is None):
            continue
        busy = host.cpu_percent / 100.0 * host.vcpus
        result[instance.uuid] = busy * instance.vcpus / vcpus[instance.host]
        if host.counter:
            guessed.append(instance.uuid)
    if guessed:
        LOG.info('DRS: no measured CPU load for %d instance(s) (%s); using '
                 'a vCPU-proportional share of their host\'s load.',
                 len(guessed), ', '.join(guessed))
    return result


def build_snapshot(cloud: Cloud, settings, statuses, loads,
                   config: model.PlannerConfig, cooldown: int,
                   quarantine: int, no_return: int,
                   draining=frozenset(), trends=None,
                   refused=None, waits=None,
                   queued=frozenset(), stayed=None) -> model.Snapshot:
    """The planner's input for this period.

    ``settings``: {host: aggregate_settings.HostSettings}; ``statuses``:
    {host: metrics.HostStatus}; ``loads``: {instance uuid: CPU cores} as
    measured (the others get :func:`fallback_loads`); ``draining``: the
    hosts in maintenance; ``trends``: the instances' load trends
    (``metrics.LoadTrends``, already fed ``loads``), if kept;
    ``refused``: {instance uuid: {destination: migration uuid}} of the
    moves Nova's scheduler refused at start (``executor.REFUSED``),
    which quarantine nothing; ``waits``: {instance uuid: cores waiting for
    a CPU} as measured; ``queued``: the hosts waiting in the maintenance
    queue; ``stayed``: {host: (stayed, checked)} of the moves off it whose
    relief was checked lately (``relief.stayed_counts``).
    """
    waits = waits or {}
    stayed = stayed or {}
    hosts = {name: host_snapshot(rows, statuses.get(name), settings[name],
                                 config, name in draining,
                                 name in queued, stayed.get(name))
             for name, rows in pacing.paced(sorted(cloud.hosts.items()))}
    refused = refused or {}
    not_to_blame = {uuid for found in refused.values()
                    for uuid in found.values()}
    migrations = executor.migration_state(
        [m for m in cloud.migrations if m.uuid not in not_to_blame],
        timeutils.utcnow(), cooldown, quarantine, no_return)
    on_hosts = [instance for instance in cloud.instances.values()
                if instance.host in hosts]
    loads = fallback_loads(hosts, on_hosts, loads)
    instances = []
    for instance in sorted(on_hosts, key=lambda i: i.uuid):
        reason = migrations.blocked.get(instance.uuid)
        if instance.host in draining:
            blocked, transient, how = drain_blocked(
                instance, instance.facts, cloud.hosts[instance.host].up,
                reason, migrations.kinds.get(instance.uuid))
        else:
            blocked = instance_blocked(instance, instance.facts, reason)
            transient, how = False, model.LIVE
        # Held by its cooldown alone: not by its state nor an opt-out.
        kind = migrations.kinds.get(instance.uuid)
        cooling = (kind == recent_moves.COOLDOWN and blocked == reason
                   and opt_out(instance.facts) is None)
        instances.append(model.InstanceSnapshot(
            uuid=instance.uuid, host=instance.host,
            name=instance.display_name or '',
            vcpus=instance.facts.vcpus,
            memory_mb=instance.facts.memory_mb,
            cpu_cores=loads.get(instance.uuid, 0.0),
            blocked=blocked, left=migrations.left.get(instance.uuid, ()),
            migration=how, transient=transient,
            refused=tuple(sorted(filter(None, refused.get(instance.uuid,
                                                          ())))),
            cpu_waiting=waits.get(instance.uuid), cooling=cooling))
    return model.Snapshot(
        hosts=hosts, instances=instances, config=config,
        inflight_by_host=migrations.inflight_by_host,
        inflight_total=migrations.inflight_total,
        trends=trends if trends is not None else {})
