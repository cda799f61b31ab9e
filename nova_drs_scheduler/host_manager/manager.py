"""CachingHostManager: Nova's HostManager over cached, incrementally
refreshed rows.

What is cached are rows (compute nodes, nova-compute services and which
instances sit on which host), never decisions. Each request still builds its
own HostStates, by forking per-row templates (see ``state``), so that
no request's HostState is shared with another (bug 1742827).
Once the service starts, its own thread (a green thread under eventlet)
reads what changed every ``[drs_host_cache] background_refresh_interval``
seconds, so requests find fresh rows and issue no database query at all.
A request that still finds a cell's rows older than ``max_staleness`` (the
background refresh is late, failed or disabled) reads the changes itself
first: the staleness bound holds whatever the refresher does.

One thing is read at every request all the same: which nova-compute
services are disabled or forced down, a query per cell that returns those
few rows (``rows.service_flags``). A host disabled through Nova's API is
therefore left out by every request that starts after the API call
returned, in every scheduler process, and an enabled one is back at once;
the cached rows get the flags read (``snapshot.overlay_flags``).

Stock Nova re-reads the rows at each request, so it sees the instances the
computes claimed since the previous one.  Cached rows do not, so the host
manager remembers what this scheduler placed on each compute node (the
counters ``consume_from_request`` changed) and adds it to every later
request's HostState, until a refresh brings a different row for that node:
the database then wins, so nothing is counted twice.
"""

import dataclasses
import functools
import math
import threading
import time
import weakref
from typing import Any

from nova import context as context_module
from nova import objects
from nova.scheduler import host_manager
from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import loopingcall

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler import pacing
from nova_drs_scheduler.conf import host_cache as host_cache_conf
from nova_drs_scheduler.host_manager import filtering
from nova_drs_scheduler.host_manager import freezing
from nova_drs_scheduler.host_manager import rows
from nova_drs_scheduler.host_manager import snapshot as snapshot_mod
from nova_drs_scheduler.host_manager import state
from nova_drs_scheduler.host_manager import weighing

CONF = drs_conf.CONF
LOG = logging.getLogger(__name__)

#: Seconds a cell's rows may be old when placement returned a node they do
#: not have. Placement may also return providers that are no compute node
#: (sharing providers, or nodes of cells outside the request), so this
#: limits such requests to one incremental refresh per second.
UNKNOWN_NODE_MAX_AGE = 1.0

#: Key, in a host's stock ``_instance_info`` entry, of the monotonic time
#: its instances were last read from the database on the compute's behalf.
_READ_AT = 'drs_read_at'

#: Seconds after which a placement is forgotten although the node's row has
#: not changed: the compute claims an instance (and rewrites its row) within
#: seconds, so a row unchanged this long after shows a build that never
#: happened, which stock Nova does not count either.
PLACED_MAX_AGE = 120.0

#: Shortest wait between two passes of the background refresher, so that a
#: cell that cannot be refreshed does not make it spin.
MIN_REFRESH_WAIT = 0.1

#: Host managers whose refresher runs: a service that stops must leave
#: none behind (the test harness checks it after each test).
_refreshing: weakref.WeakSet = weakref.WeakSet()


def running_refreshers() -> list:
    """Host managers of this process whose background refresh runs."""
    return list(_refreshing)


@dataclasses.dataclass(frozen=True)
class _Placed:
    """Resources this scheduler consumed on a node, against one row."""

    node: snapshot_mod.NodeEntry
    at: float
    consumption: state.Consumption


def _same_row(a: snapshot_mod.NodeEntry, b: snapshot_mod.NodeEntry) -> bool:
    # An entry parsed by a request (values None) stands for no stored row.
    return a is b or (a.values is not None and a.values == b.values)


def _unknown_nodes(snapshots: dict, compute_uuids: list) -> set:
    return {uuid for uuid in compute_uuids
            if all(uuid not in snap.nodes for snap in snapshots.values())}


class CachingHostManager(host_manager.HostManager):
    """HostManager whose per-request cost does not include the database."""

    def __init__(self, conf: cfg.ConfigOpts = CONF) -> None:
        # refresh_cells_caches(), called by the parent, invalidates.
        self._conf = conf
        self._snapshots: dict[str, snapshot_mod.CellSnapshot] = {}
        self._generation = 0
        self._refresh_lock = threading.Lock()
        #: Callers of an inline refresh (requests, periods): while one
        #: waits, the background refresh does not give way to requests.
        self._inline = pacing.InFlight()
        #: Compute node uuid -> what this scheduler placed there lately.
        self._placed: dict[str, list[_Placed]] = {}
        self._placed_lock = threading.Lock()
        #: Monotonic clock of the staleness bound; tests replace it.
        self.clock = time.monotonic
        self._refresher: Any = None
        #: Whether a pass that made the next one wait longer was logged.
        self._paced_logged = False
        #: Freezes the process's objects after background refreshes.
        self._freezer: freezing.Freezer | None = None
        #: Providers placement returned that the cached rows lacked, once
        #: a refresh started after they were returned has looked for them.
        self._looked_up: set[str] = set()
        #: Cell uuid -> {host: Overlay}: the cached services whose flags
        #: the latest request found changed, reused by the next ones.
        self._overlays: dict[str, dict[str, snapshot_mod.Overlay]] = {}
        super().__init__()
        # Same results as Nova's handlers, minus per-host overheads.
        self.filter_handler = filtering.FilterHandler()
        self.weight_handler = weighing.WeightHandler()

    def host_state_cls(self, host: str, node: str, cell: str,
                       **kwargs: Any) -> state.CachedHostState:
        return state.CachedHostState(host, node, cell)

    def invalidate(self) -> None:
        """Forget every cached row: the next request reloads them all."""
        self._generation += 1
        self._snapshots = {}
        self._looked_up = set()
        self._overlays = {}
        with self._placed_lock:
            self._placed = {}

    def refresh_cells_caches(self) -> None:
        # SIGHUP: cells may have been added, removed or moved hosts around.
        super().refresh_cells_caches()
        self.invalidate()

    # Rows.

    def _max_age(self, unknown_nodes: bool = False) -> float:
        max_age = self._conf.drs_host_cache.max_staleness
        return min(max_age, UNKNOWN_NODE_MAX_AGE) if unknown_nodes else max_age

    @staticmethod
    def _is_fresh(snap: snapshot_mod.CellSnapshot | None, now: float,
                  max_age: float) -> bool:
        return snap is not None and now - snap.loaded_at < max_age

    def _load_cell(self, cctxt: Any,
                   pace: snapshot_mod.Pace | None = None
                   ) -> snapshot_mod.CellSnapshot:
        return snapshot_mod.load(cctxt, self._snapshots.get(cctxt.cell_uuid),
                                 self.host_state_cls, self.clock(),
                                 self._conf, pace)

    def _refresh(self, context: Any, cells: list, max_age: float,
                 pace: snapshot_mod.Pace | None = None) -> dict:
        """Refresh the stale cells among ``cells``, one refresher at a time.

        Returns ``{cell_uuid: snapshot or None}``; None for a cell that
        could not be read, which, like stock Nova, contributes no host.
        """
        with self._refresh_lock:
            now = self.clock()
            # Another request may have refreshed them while we waited.
            ready = {c.uuid: self._snapshots[c.uuid] for c in cells
                     if self._is_fresh(self._snapshots.get(c.uuid), now,
                                       max_age)}
            todo = [c for c in cells if c.uuid not in ready]
            generation = self._generation
            results = context_module.scatter_gather_cells(
                context, todo, context_module.CELL_TIMEOUT,
                functools.partial(self._load_cell, pace=pace))
            for cell_uuid, result in results.items():
                if context_module.is_cell_failure_sentinel(result):
                    LOG.warning('Failed to refresh the cached computes of '
                                'cell %s', cell_uuid)
                    ready[cell_uuid] = None
                    continue
                ready[cell_uuid] = result
                if generation == self._generation:
                    self._snapshots[cell_uuid] = result
        return ready

    # Background refresh.

    def start_refresher(self) -> bool:
        """Start refreshing the rows in the background; False if the
        options leave nothing to do in the background.

        oslo.service's looping call runs in a native thread or a green
        thread, whichever backend Nova chose for the process.
        """
        interval = host_cache_conf.refresh_interval(
            self._conf.drs_host_cache)
        if self._refresher is not None or interval == 0:
            return False
        self._refresher = loopingcall.DynamicLoopingCall(self.refresh_due)
        self._refresher.start(periodic_interval_max=interval)
        _refreshing.add(self)
        LOG.info('Refreshing the cached computes every %g s in the '
                 'background', interval)
        return True

    def stop_refresher(self) -> None:
        """Stop the background refresh and wait for a pass in progress;
        unfreeze what its passes froze."""
        refresher, self._refresher = self._refresher, None
        _refreshing.discard(self)
        if refresher is not None:
            refresher.stop()
            refresher.wait()
        freezer, self._freezer = self._freezer, None
        if freezer is not None:
            freezer.release()

    def refresh_due(self) -> float:
        """One pass of the background refresher: refresh the enabled cells
        whose rows are a refresh interval old, and return the
        seconds until the next one will be.

        The wait grows with the pass (``background_refresh_max_share``):
        where a pass takes about as long as the interval, passes do not
        run back to back, and requests that find rows older than
        ``max_staleness`` meanwhile refresh them inline. While requests
        are in flight the pass gives way to them, at most half a refresh
        interval in all per pass (``pacing.Budgeted``), and not while a
        caller waits for an inline refresh; that wait does not count as
        the pass's time.
        It never raises: a failure is logged and retried at the next pass,
        and requests meanwhile fall back to refreshing inline. After a
        refresh, the objects then alive are frozen (``freezing``).
        """
        group = self._conf.drs_host_cache
        interval = host_cache_conf.refresh_interval(group)
        cells = list(self.enabled_cells)
        started = self.clock()
        # Half an interval: with the defaults and a pass of well under a
        # second (0.65 s of CPU at 10000 nodes), rows still stay younger
        # than max_staleness when a pass gives way all of it.
        pace = pacing.Budgeted(pacing.Unless(pacing.REQUESTS, self._inline),
                               interval / 2)
        try:
            due = [c for c in cells if not self._is_fresh(
                self._snapshots.get(c.uuid), started, interval)]
            if due:
                self._refresh(context_module.get_admin_context(), due,
                              interval, pace)
                self.freeze()
        except Exception:
            LOG.exception('Background refresh of the cached computes failed')
            return interval
        now = self.clock()
        loaded = [snap.loaded_at for snap in
                  (self._snapshots.get(c.uuid) for c in cells) if snap]
        wait = max(MIN_REFRESH_WAIT,
                   min((at + interval - now for at in loaded),
                       default=interval))
        if not due:
            return wait
        took = now - started - pace.waited
        paced = host_cache_conf.wait_after(group, took)
        if paced > wait and not self._paced_logged:
            self._paced_logged = True
            LOG.info('A background refresh of the cached computes took '
                     '%(took).2f s: the next one waits %(wait).2f s, so '
                     'that refreshes take at most %(share)g of the time '
                     '([drs_host_cache] background_refresh_max_share)',
                     {'took': took, 'wait': paced,
                      'share': group.background_refresh_max_share})
        return max(wait, paced)

    def freeze(self) -> None:
        """Freeze the process's objects, unless ``gc_collect_interval``
        is 0; :meth:`stop_refresher` hands them back to the collector.

        A rebalance period calls it too, once its snapshot is built: the
        full collections its planning triggers then walk only what the
        planning creates, not the cloud it read, and take less of the
        requests they land in."""
        collect_interval = self._conf.drs_host_cache.gc_collect_interval
        if not collect_interval:
            return
        if self._freezer is None:
            self._freezer = freezing.Freezer(collect_interval, self.clock)
        self._freezer.freeze()

    def _snapshots_for(self, context: Any, cells: list,
                       max_age: float) -> dict:
        now = self.clock()
        found = {c.uuid: self._snapshots.get(c.uuid) for c in cells}
        stale = [c for c in cells
                 if not self._is_fresh(found[c.uuid], now, max_age)]
        if stale:
            with self._inline.request():
                found.update(self._refresh(context, stale, max_age))
        return {uuid: snap for uuid, snap in found.items() if snap}

    def _get_computes_for_cells(self, context, cells, compute_uuids):
        snapshots = self._snapshots_for(context, cells, self._max_age())
        unknown = compute_uuids and _unknown_nodes(snapshots, compute_uuids)
        if unknown:
            # Placement already knows a node the cache does not: a new
            # compute, most likely. Read the changes now rather than leave
            # it unschedulable for up to max_staleness. Its row was
            # written before placement heard of it, so the first time a
            # provider is missing the rows are read whatever their age (a
            # refresh a moment ago may have just missed it); after that,
            # at most once a second (a sharing provider is never there).
            new = unknown - self._looked_up
            snapshots = self._snapshots_for(
                context, cells,
                0.0 if new else self._max_age(unknown_nodes=True))
            self._looked_up |= new
        entries = {}
        for cell_uuid, snap in snapshots.items():
            if compute_uuids is None:
                entries[cell_uuid] = list(snap.nodes.values())
            else:
                entries[cell_uuid] = [snap.nodes[uuid]
                                      for uuid in compute_uuids
                                      if uuid in snap.nodes]
        # Whatever the age of the rows, the flags as they are now.
        overlays = self._current_flags(
            context, [c for c in cells if entries.get(c.uuid)], snapshots)
        compute_nodes = {}
        services = {}
        for cell_uuid, snap in snapshots.items():
            if cell_uuid not in overlays:
                if entries[cell_uuid]:
                    continue  # Its flags could not be read.
                compute_nodes[cell_uuid] = []
            else:
                compute_nodes[cell_uuid] = [
                    entry.compute for entry in entries[cell_uuid]]
            services.update((host, entry.service)
                            for host, entry in snap.services.items())
            services.update(
                (host, overlay.current.service)
                for host, overlay in overlays.get(cell_uuid, {}).items())
        return compute_nodes, services

    def _read_flags(self, cctxt: Any, snapshots: dict) -> list:
        snap = snapshots[cctxt.cell_uuid]
        return rows.service_flags(cctxt, snap.flagged)

    def _current_flags(self, context: Any, cells: list,
                       snapshots: dict) -> dict:
        """``{cell_uuid: {host: Overlay}}`` for ``cells``: the services
        whose disabled or forced-down flags now differ from the cached
        rows', from one query per cell, the cells read in parallel.

        A cell whose flags cannot be read is left out: its hosts are not
        used, as stock Nova does not use the hosts of a cell it cannot
        read, rather than used on flags that may be out of date.
        """
        if not cells:
            return {}
        results = context_module.scatter_gather_cells(
            context, cells, context_module.CELL_TIMEOUT, self._read_flags,
            snapshots)
        overlays = {}
        for cell_uuid, result in results.items():
            if context_module.is_cell_failure_sentinel(result):
                LOG.warning('Failed to read the disabled and forced-down '
                            'compute services of cell %s: its hosts are '
                            'not used for this request', cell_uuid)
                continue
            overlays[cell_uuid] = snapshot_mod.overlay_flags(
                snapshots[cell_uuid], result,
                self._overlays.get(cell_uuid))
            self._overlays[cell_uuid] = overlays[cell_uuid]
        return overlays

    def min_compute_version(self) -> int | None:
        """What ``get_minimum_version_all_cells(['nova-compute'])`` would
        return, from the cached service rows, or None if some cell has no
        fresh rows.

        Same rule as Nova: a cell's minimum over its live, not forced-down
        services; cells whose minimum is 0 are left out; 0 if none is left.
        """
        now = self.clock()
        max_age = self._max_age()
        result = 0
        for cell_uuid in self.cells:
            snap = self._snapshots.get(cell_uuid)
            if not self._is_fresh(snap, now, max_age):
                return None
            cell_min = min((entry.service.version
                            for entry in snap.services.values()
                            if not entry.service.forced_down), default=0)
            if cell_min:
                result = min(result, cell_min) if result else cell_min
        return result

    def get_compute_nodes_by_host_or_node(self, ctxt, host, node, cell=None):
        """Answer from fresh cached rows; ask the database otherwise."""
        now = self.clock()
        max_age = self._max_age()
        cells = [cell] if cell else self.enabled_cells
        found = [
            entry.compute
            for snap in (self._snapshots.get(c.uuid) for c in cells)
            if self._is_fresh(snap, now, max_age)
            for entry in snap.nodes.values()
            if (not host or entry.compute.host == host) and
            (not node or entry.compute.hypervisor_hostname == node)]
        if found:
            return objects.ComputeNodeList(objects=found)
        return super().get_compute_nodes_by_host_or_node(
            ctxt, host, node, cell=cell)

    # Per-request HostStates.

    def _get_host_states(self, context, compute_nodes, services):
        states = {}
        for cell_uuid, computes in compute_nodes.items():
            snap = self._snapshots.get(cell_uuid)
            entries = snap.by_compute_object if snap else {}
            for compute in computes:
                node = entries.get(id(compute))
                if node is None or node.compute is not compute:
                    # A concurrent refresh or invalidation replaced the
                    # snapshot these rows came from: parse them here.
                    node = snapshot_mod.node_entry(
                        self.host_state_cls, cell_uuid, compute)
                service = services.get(node.host)
                if not service:
                    LOG.warning('No compute service record found for host '
                                '%(host)s', {'host': node.host})
                    continue
                key = (node.host, node.nodename)
                if key not in states:
                    states[key] = self._fork(context, snap, node, service)
        return iter(states.values())

    def _fork(self, context: Any, snap: snapshot_mod.CellSnapshot | None,
              node: snapshot_mod.NodeEntry,
              service: Any) -> state.CachedHostState:
        """A request-private HostState for ``node``."""
        cached = snap.services.get(node.host) if snap else None
        if cached is not None and cached.service is service:
            view = cached.view
        else:
            # The service with the flags this request read, most likely.
            overlay = (self._overlays.get(snap.cell_uuid, {}).get(node.host)
                       if snap else None)
            if overlay is not None and overlay.current.service is service:
                view = overlay.current.view
            else:
                view = snapshot_mod.service_view(service)
        fork = node.template.fork(
            view, self._get_aggregates_info(node.host),
            self._instances_on(context, snap, node),
            functools.partial(self._remember, node))
        for placed in self._placed_since(snap, node):
            fork.add(placed.consumption)
        return fork

    def _remember(self, node: snapshot_mod.NodeEntry,
                  consumption: state.Consumption) -> None:
        """Keep what a request consumed for the requests that follow."""
        placed = _Placed(node, self.clock(), consumption)
        with self._placed_lock:
            self._placed.setdefault(node.compute.uuid, []).append(placed)

    def _placed_since(self, snap: snapshot_mod.CellSnapshot | None,
                      node: snapshot_mod.NodeEntry) -> list[_Placed]:
        """What this scheduler placed on ``node`` that its row lacks.

        Forgets the placements whose row the cell's snapshot has replaced
        (the database now shows them, or shows they did not happen), and
        those older than PLACED_MAX_AGE at the snapshot's refresh.
        """
        uuid = node.compute.uuid
        if not self._placed.get(uuid):
            return []
        current = snap.nodes.get(uuid) if snap else None
        with self._placed_lock:
            placed = self._placed.get(uuid, [])
            kept = [p for p in placed
                    if current is not None and _same_row(p.node, current)
                    and snap.loaded_at - p.at <= PLACED_MAX_AGE]
            if kept:
                self._placed[uuid] = kept
            else:
                self._placed.pop(uuid, None)
        return [p for p in kept if _same_row(p.node, node)]

    def _instances_on(self, context: Any,
                      snap: snapshot_mod.CellSnapshot | None,
                      node: snapshot_mod.NodeEntry) -> dict:
        """The instances on the host of ``node``, shared: the state copies
        them before it consumes resources.

        What the compute pushed wins, as in stock Nova, and so does a
        re-read done on the compute's behalf if it is newer than the cached
        rows; otherwise the cached instance rows stand in for stock's
        per-host query.
        """
        pushed = self._instance_info.get(node.host)
        if snap is None:
            return self._get_instance_info(context, node.compute)
        if pushed and (pushed.get('updated') or
                       pushed.get(_READ_AT, -math.inf) >= snap.loaded_at):
            return pushed['instances']
        return snap.instances.get(node.host, {})

    def _recreate_instance_info(self, context, host_name):
        # Stock re-reads a host's instances when its compute reports
        # something unexpected, e.g. its first instance. That read is newer
        # than the cached rows, so remember when it happened.
        read_at = self.clock()
        super()._recreate_instance_info(context, host_name)
        self._instance_info[host_name][_READ_AT] = read_at
