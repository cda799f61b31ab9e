"""Immutable per-cell snapshots of the cached rows, and how to advance one.

A refresh never mutates the snapshot requests may be reading: it builds
the next one (sharing unchanged entries) and the host manager swaps the
reference. A request therefore sees one consistent set of rows per cell.
"""

import dataclasses
import datetime
import functools
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

from nova import objects
from nova.scheduler import host_manager as nova_host_manager
from oslo_utils import timeutils

from nova_drs_scheduler.host_manager import rows
from nova_drs_scheduler.host_manager import state


@dataclasses.dataclass(frozen=True)
class NodeEntry:
    """A compute node row and the HostState template parsed from it."""

    #: The row's column values, to skip rebuilding a row read again.
    values: tuple | None
    compute: Any
    template: state.CachedHostState
    #: Plain copies of the row's names: versioned-object attribute access
    #: costs a few microseconds per host and request.
    host: str
    nodename: str

    @property
    def row_id(self) -> int:
        return self.compute.id


@dataclasses.dataclass(frozen=True)
class ServiceEntry:
    """A compute service row and the read-only dict filters see."""

    values: tuple
    service: Any
    view: Mapping

    @property
    def row_id(self) -> int:
        return self.service.id

    @property
    def flags(self) -> tuple:
        """The ``rows.FLAG_COLUMNS`` values of this entry."""
        data = self.view.data
        return tuple(data[column] for column in rows.FLAG_COLUMNS)


@dataclasses.dataclass(frozen=True)
class CellSnapshot:
    """Every cached row of one cell, as of ``read_at``."""

    cell_uuid: str
    #: Compute node uuid -> NodeEntry.
    nodes: Mapping[str, NodeEntry]
    #: Host name -> ServiceEntry of its nova-compute service.
    services: Mapping[str, ServiceEntry]
    #: Host name -> {instance uuid: Instance stub}, read from the database.
    instances: Mapping[str, Mapping[str, Any]]
    #: Instance uuid -> host name, to move or drop an instance that changed.
    instance_hosts: Mapping[str, str]
    #: Scheduler's UTC clock when the queries of this snapshot started.
    read_at: datetime.datetime
    #: Monotonic time of the refresh, and of the last full load.
    loaded_at: float
    full_loaded_at: float
    #: Uuids of the compute nodes left out because their row was not
    #: complete yet (no resources reported): read again at every refresh
    #: until they are, whatever their timestamps say.
    incomplete: frozenset = frozenset()
    #: Host names whose service row here is disabled or forced down.
    flagged: frozenset = frozenset()

    @functools.cached_property
    def by_compute_object(self) -> Mapping[int, NodeEntry]:
        """``id(entry.compute)`` -> entry, to map the compute objects
        handed to Nova's code back to their entries."""
        return {id(entry.compute): entry for entry in self.nodes.values()}


StateFactory = Callable[..., state.CachedHostState]

#: Rows merged between two pacing points of a refresh (see ``_paced``).
YIELD_EVERY = 50

#: What a refresh does at a pacing point: by default let other threads run.
Pace = Callable[[], None]


def _let_others_run() -> None:
    # Looked up at each call: under eventlet, ``time.sleep`` is green.
    time.sleep(0)


def _paced(rows: Iterable, pace: Pace | None) -> Iterator:
    """``rows``, calling ``pace`` every ``YIELD_EVERY`` of them.

    A refresh running beside requests must not hold the GIL (native
    threads) or the hub (eventlet) for its whole length: ``time.sleep(0)``
    hands either to a request that waits for it, and the background
    refresher's ``pace`` also waits while requests are in flight
    (``pacing.Budgeted``).
    """
    pace = pace or _let_others_run
    for count, row in enumerate(rows, 1):
        if count % YIELD_EVERY == 0:
            pace()
        yield row


#: The JSON columns of ``compute_nodes``, and the ComputeNode field each
#: is read into.
JSON_COLUMNS = {'numa_topology': 'numa_topology',
                'pci_stats': 'pci_device_pools',
                'stats': 'stats',
                'supported_instances': 'supported_hv_specs',
                'metrics': 'metrics'}

#: Those ``ComputeNode._from_db_object`` parses into objects; it leaves
#: the others as text, for the HostState to parse.
PARSED_BY_COMPUTE = ('pci_stats', 'stats', 'supported_instances')


def unchanged_json(row: Any, values: tuple,
                   previous: NodeEntry | None) -> frozenset:
    """The JSON columns whose text in ``row`` is that of ``previous``'s row
    (none if ``previous`` was not read as a row)."""
    if previous is None or previous.values is None:
        return frozenset()
    columns = row._fields
    return frozenset(
        column for column in JSON_COLUMNS
        if values[columns.index(column)] ==
        previous.values[columns.index(column)])


def compute_node(context: Any, row: Any, previous: NodeEntry | None = None,
                 unchanged: frozenset = frozenset()) -> Any:
    """Nova's ComputeNode for ``row``, with the objects ``previous``'s
    compute parsed from the ``unchanged`` JSON columns reused."""
    reused = [column for column in PARSED_BY_COMPUTE if column in unchanged]
    if not reused:
        return objects.ComputeNode._from_db_object(
            context, objects.ComputeNode(context), row._mapping)
    # Unset (None) columns are not parsed; the previous objects are set
    # instead, where Nova had set them from the same text.
    mapping = dict(row._mapping, **dict.fromkeys(reused))
    compute = objects.ComputeNode._from_db_object(
        context, objects.ComputeNode(context), mapping)
    for column in reused:
        field = JSON_COLUMNS[column]
        if previous.compute.obj_attr_is_set(field):
            setattr(compute, field, getattr(previous.compute, field))
    compute.obj_reset_changes()
    return compute


def node_entry(make_state: StateFactory, cell_uuid: str, compute: Any,
               values: tuple | None = None,
               previous: NodeEntry | None = None,
               unchanged: frozenset = frozenset()) -> NodeEntry:
    """Parse a compute node, once, into a HostState no request will touch
    (``values`` None: not read as a row), reusing what ``previous`` parsed
    from the ``unchanged`` JSON columns."""
    template = make_state(compute.host, compute.hypervisor_hostname,
                          cell_uuid, compute=compute)
    template.update_from(
        compute, previous.template if previous else None,
        frozenset(JSON_COLUMNS[column] for column in unchanged))
    return NodeEntry(values, compute, template, compute.host,
                     compute.hypervisor_hostname)


#: The columns of ``services`` a nova-compute heartbeat writes (Nova's
#: database service group driver), a quarter of the rows every pass.
HEARTBEAT_COLUMNS = frozenset({'report_count', 'last_seen_up', 'updated_at'})


def service_view(service: Any, previous: ServiceEntry | None = None,
                 changed: Iterable[str] = ()) -> Mapping:
    """The read-only dict filters see as ``HostState.service``.

    With ``previous``, the entry of the same row before its ``changed``
    columns (fields set in both versions) were written: its view with
    those fields replaced, which costs a dict copy instead of reading
    every field of the object again.
    """
    if previous is None:
        return nova_host_manager.ReadOnlyDict(dict(service))
    values = dict(previous.view.data)
    values.update((field, service[field]) for field in changed)
    return nova_host_manager.ReadOnlyDict(values)


def with_flags(entry: ServiceEntry, flags: tuple) -> ServiceEntry:
    """``entry`` with the ``rows.FLAG_COLUMNS`` of a later read: a copy of
    its Service, and its view with those fields replaced."""
    service = entry.service.obj_clone()
    values = dict(entry.view.data)
    for column, value in zip(rows.FLAG_COLUMNS, flags, strict=True):
        setattr(service, column, value)
        values[column] = value
    service.obj_reset_changes(rows.FLAG_COLUMNS)
    return ServiceEntry(entry.values, service,
                        nova_host_manager.ReadOnlyDict(values))


@dataclasses.dataclass(frozen=True)
class Overlay:
    """A cached service entry and the same with current flags."""

    cached: ServiceEntry
    current: ServiceEntry


def overlay_flags(snapshot: CellSnapshot, flag_rows: Iterable,
                  previous: Mapping[str, Overlay] | None = None
                  ) -> dict[str, Overlay]:
    """The services of ``snapshot`` whose flags differ from those in
    ``flag_rows`` (``rows.service_flags``), by host, with the flags read.

    A host the rows do not name keeps its cached flags: the rows name
    every host disabled or forced down now and every host the snapshot
    holds so (``snapshot.flagged``), so it is neither, or its row was
    deleted since and the snapshot keeps it until its next refresh, as it
    keeps any deleted row. Hosts the snapshot does not know have no node
    in it either. ``previous``: the result of an earlier call, whose
    entries are reused where the cached entry and the flags are the same.
    """
    previous = previous or {}
    result = {}
    for host, disabled, reason, forced_down in flag_rows:
        cached = snapshot.services.get(host)
        flags = (bool(disabled), reason, bool(forced_down))
        if cached is None or cached.flags == flags:
            continue
        kept = previous.get(host)
        if (kept is not None and kept.cached is cached and
                kept.current.flags == flags):
            result[host] = kept
        else:
            result[host] = Overlay(cached, with_flags(cached, flags))
    return result


def flagged_hosts(services: Mapping[str, ServiceEntry]) -> frozenset:
    """Hosts whose service entry is disabled or forced down."""
    return frozenset(host for host, entry in services.items()
                     if entry.view.data['disabled'] or
                     entry.view.data['forced_down'])


def heartbeat(row: Any, values: tuple,
              previous: ServiceEntry | None) -> frozenset | None:
    """The columns a heartbeat changed in ``row`` since ``previous``, or
    None if anything else changed."""
    if previous is None or previous.row_id != row.id:
        return None
    changed = frozenset(
        column for column, new, old in zip(row._fields, values,
                                           previous.values, strict=True)
        if new != old)
    return changed if changed <= HEARTBEAT_COLUMNS else None


def row_values(row: Any) -> tuple:
    """Every column of a result row, in a comparable form."""
    return tuple(row)


def _merge(current: Mapping[str, Any], changed: Iterable,
           key: Callable[[Any], str],
           build: Callable[[Any, tuple, Any], Any],
           replaced: Mapping[str, Any] | None = None,
           pace: Pace | None = None) -> dict[str, Any]:
    """``current`` with the ``changed`` rows merged in.

    ``replaced``: on a full load, the entries of the snapshot it replaces;
    a row whose values did not change keeps its entry, so that a full
    reload rebuilds only what changed (at 10000 nodes, rebuilding every
    template costs seconds). ``build(row, values, previous)`` gets the
    entry a changed row replaces (or None), to reuse what did not change.
    """
    merged = dict(current)
    replaced = replaced or {}
    # Deletions first: a host may have a deleted service row and a new one.
    for row in _paced(sorted(changed, key=lambda r: not r.deleted), pace):
        name = key(row)
        if row.deleted:
            if name in merged and merged[name].row_id == row.id:
                del merged[name]
            continue
        values = row_values(row)
        # Rows inside the timestamp margin come back unchanged; timestamps
        # alone cannot tell (MySQL keeps whole seconds), the values can.
        kept = merged.get(name) or replaced.get(name)
        if kept is not None and kept.values == values:
            merged[name] = kept
        else:
            entry = build(row, values, kept)
            if entry is None:
                merged.pop(name, None)
            else:
                merged[name] = entry
    return merged


def _merge_instances(snapshot: CellSnapshot | None, changed: Iterable,
                     context: Any, pace: Pace | None = None
                     ) -> tuple[dict, dict]:
    by_host = dict(snapshot.instances) if snapshot else {}
    host_of = dict(snapshot.instance_hosts) if snapshot else {}
    copied = set()

    def writable(host: str) -> dict:
        # Copy a host's dict on first write: readers may hold the old one.
        if host not in copied:
            by_host[host] = dict(by_host.get(host, {}))
            copied.add(host)
        return by_host[host]

    for uuid, host, deleted in _paced(changed, pace):
        live = bool(host) and not deleted
        previous_host = host_of.get(uuid)
        if live and previous_host == host:
            continue  # Changed in place, or read again inside the margin.
        if previous_host is not None:
            del host_of[uuid]
            writable(previous_host).pop(uuid, None)
        if live:
            writable(host)[uuid] = objects.Instance(context, uuid=uuid)
            host_of[uuid] = host
    for host in copied:
        if not by_host[host]:
            del by_host[host]
    return by_host, host_of


def load(context: Any, previous: CellSnapshot | None,
         make_state: StateFactory, now: float, conf: Any,
         pace: Pace | None = None) -> CellSnapshot:
    """Read what changed in the cell of ``context`` since ``previous``.

    Without a previous snapshot, or when a full reload is due, read every
    live row instead. ``pace`` runs every ``YIELD_EVERY`` rows merged.
    """
    interval = conf.drs_host_cache.full_refresh_interval
    full = previous is None or (
        interval > 0 and now - previous.full_loaded_at >= interval)
    base = None if full else previous
    since = None if full else previous.read_at - datetime.timedelta(
        seconds=conf.drs_host_cache.timestamp_margin)
    read_at = timeutils.utcnow()
    cell_uuid = context.cell_uuid
    incomplete = set()

    def node(row: Any, values: tuple,
             previous: NodeEntry | None) -> NodeEntry | None:
        if row.free_disk_gb is None:
            # Created by its compute, resources not written yet: Nova's
            # HostState skips such a row and keeps no ratios, which the
            # weighers need. Its first report stamps it again, but that
            # stamp may predate this read's window (a transaction that
            # committed late), so the row is read again until complete.
            incomplete.add(row.uuid)
            return None
        unchanged = unchanged_json(row, values, previous)
        compute = compute_node(context, row, previous, unchanged)
        return node_entry(make_state, cell_uuid, compute, values, previous,
                          unchanged)

    def service(row: Any, values: tuple,
                previous: ServiceEntry | None) -> ServiceEntry:
        obj = objects.Service._from_db_object(
            context, objects.Service(context), row._mapping)
        changed = heartbeat(row, values, previous)
        if changed is None:
            return ServiceEntry(values, obj, service_view(obj))
        return ServiceEntry(values, obj,
                            service_view(obj, previous, changed))

    changes = rows.read_changes(context, since,
                                base.incomplete if base else frozenset())
    replaced = previous if full else None
    nodes = _merge(base.nodes if base else {}, changes.compute_nodes,
                   lambda r: r.uuid, node,
                   replaced.nodes if replaced else None, pace)
    services = _merge(base.services if base else {}, changes.services,
                      lambda r: r.host, service,
                      replaced.services if replaced else None, pace)
    instances, instance_hosts = _merge_instances(
        base, changes.instances, context, pace)
    return CellSnapshot(
        cell_uuid=cell_uuid, nodes=nodes, services=services,
        instances=instances, instance_hosts=instance_hosts,
        read_at=read_at, loaded_at=now,
        full_loaded_at=now if full else previous.full_loaded_at,
        incomplete=frozenset(incomplete), flagged=flagged_hosts(services))
