"""CachingHostManager: Nova's HostManager over cached, incrementally
refreshed rows.

What is cached are rows (compute nodes, nova-compute services and which
instances sit on which host), never decisions. Each request still builds its
own HostStates, by forking per-row templates (see ``state``), so that
no request's HostState is shared with another (bug 1742827).
Once the service starts, its own thread reads what changed in the
background, so requests find fresh rows and issue no database query at
all.  A request that still finds a cell's rows older than
``max_staleness`` (the background refresh is late, failed or disabled)
reads the changes itself first: the staleness bound holds whatever the
refresher does (``cache``).

One thing is read at every request all the same: which nova-compute
services are disabled or forced down, a query per cell that returns those
few rows (``rows.service_flags``). A host disabled through Nova's API is
therefore left out by every request that starts after the API call
returned, in every scheduler process, and an enabled one is back at once;
the cached rows get the flags read (``flags``).

Cached rows do not show the instances the computes claimed since they
were read: the host manager adds what this scheduler placed there
(``placements``).
"""

import functools
import math
import weakref
from typing import Any

from nova import objects
from nova.scheduler import host_manager
from oslo_config import cfg
from oslo_log import log as logging

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler.host_manager import cache
from nova_drs_scheduler.host_manager import filtering
from nova_drs_scheduler.host_manager import flags
from nova_drs_scheduler.host_manager import placements
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

#: Host managers whose refresher runs: a service that stops must leave
#: none behind (the test harness checks it after each test).
_refreshing: weakref.WeakSet = weakref.WeakSet()


def running_refreshers() -> list:
    """Host managers of this process whose background refresh runs."""
    return list(_refreshing)


def _unknown_nodes(snapshots: dict, compute_uuids: list) -> set:
    return {uuid for uuid in compute_uuids
            if all(uuid not in snap.nodes for snap in snapshots.values())}


class CachingHostManager(host_manager.HostManager):
    """HostManager whose per-request cost does not include the database."""

    def __init__(self, conf: cfg.ConfigOpts = CONF) -> None:
        # refresh_cells_caches(), called by the parent, invalidates.
        self._conf = conf
        self.rows = cache.RowCache(conf, self.host_state_cls,
                                   lambda: self.enabled_cells)
        self._placements = placements.Placements()
        #: Providers placement returned that the cached rows lacked, once
        #: a refresh started after they were returned has looked for them.
        self._looked_up: set[str] = set()
        self._overlays = flags.FlagOverlays()
        super().__init__()
        # Same results as Nova's handlers, minus per-host overheads.
        self.filter_handler = filtering.FilterHandler()
        self.weight_handler = weighing.WeightHandler()

    def host_state_cls(self, host: str, node: str, cell: str,
                       **kwargs: Any) -> state.CachedHostState:
        return state.CachedHostState(host, node, cell)

    def invalidate(self) -> None:
        """Forget every cached row: the next request reloads them all."""
        self.rows.invalidate()
        self._looked_up = set()
        self._overlays.clear()
        self._placements.clear()

    def refresh_cells_caches(self) -> None:
        # SIGHUP: cells may have been added, removed or moved hosts around.
        super().refresh_cells_caches()
        self.invalidate()

    # Background refresh, through the rows (``cache``).

    def start_refresher(self) -> bool:
        """Start refreshing the rows in the background; False if the
        options leave nothing to do in the background."""
        started = self.rows.start()
        if started:
            _refreshing.add(self)
        return started

    def stop_refresher(self) -> None:
        """Stop the background refresh; unfreeze what it froze."""
        _refreshing.discard(self)
        self.rows.stop()

    def freeze(self) -> None:
        """Freeze the process's objects (``freezing``).

        A rebalance period calls it too, once its snapshot is built: the
        full collections its planning triggers then walk only what the
        planning creates, not the cloud it read, and take less of the
        requests they land in."""
        self.rows.freeze()

    # Rows, for the requests.

    def _max_age(self, unknown_nodes: bool = False) -> float:
        max_age = self._conf.drs_host_cache.max_staleness
        return min(max_age, UNKNOWN_NODE_MAX_AGE) if unknown_nodes else max_age

    def _get_computes_for_cells(self, context, cells, compute_uuids):
        snapshots = self.rows.snapshots_for(context, cells, self._max_age())
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
            snapshots = self.rows.snapshots_for(
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
        overlays = self._overlays.read(
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

    def min_compute_version(self) -> int | None:
        """What ``get_minimum_version_all_cells(['nova-compute'])`` would
        return, from the cached service rows, or None if some cell has no
        fresh rows.

        Same rule as Nova: a cell's minimum over its live, not forced-down
        services; cells whose minimum is 0 are left out; 0 if none is left.
        """
        now = self.rows.clock()
        max_age = self._max_age()
        result = 0
        for cell_uuid in self.cells:
            snap = self.rows.snapshots.get(cell_uuid)
            if not cache.is_fresh(snap, now, max_age):
                return None
            cell_min = min((entry.service.version
                            for entry in snap.services.values()
                            if not entry.service.forced_down), default=0)
            if cell_min:
                result = min(result, cell_min) if result else cell_min
        return result

    def get_compute_nodes_by_host_or_node(self, ctxt, host, node, cell=None):
        """Answer from fresh cached rows; ask the database otherwise."""
        now = self.rows.clock()
        max_age = self._max_age()
        cells = [cell] if cell else self.enabled_cells
        found = [
            entry.compute
            for snap in (self.rows.snapshots.get(c.uuid) for c in cells)
            if cache.is_fresh(snap, now, max_age)
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
            snap = self.rows.snapshots.get(cell_uuid)
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
            overlay = (self._overlays.get(snap.cell_uuid, node.host)
                       if snap else None)
            if overlay is not None and overlay.current.service is service:
                view = overlay.current.view
            else:
                view = snapshot_mod.service_view(service)
        fork = node.template.fork(
            view, self._get_aggregates_info(node.host),
            self._instances_on(context, snap, node),
            functools.partial(self._remember, node))
        for placed in self._placements.since(snap, node):
            fork.add(placed.consumption)
        return fork

    def _remember(self, node: snapshot_mod.NodeEntry,
                  consumption: state.Consumption) -> None:
        """Keep what a request consumed for the requests that follow."""
        self._placements.remember(node, self.rows.clock(), consumption)

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
        read_at = self.rows.clock()
        super()._recreate_instance_info(context, host_name)
        self._instance_info[host_name][_READ_AT] = read_at
