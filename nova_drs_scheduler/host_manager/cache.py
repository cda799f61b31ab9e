"""The cached rows of every cell, and how they are kept fresh.

Each cell's rows are an immutable :class:`~.snapshot.CellSnapshot`, read
incrementally.  Once the service starts, a looping call (a native or green
thread, whichever Nova chose) reads what changed every
``[drs_host_cache] background_refresh_interval`` seconds, so requests find
fresh rows; a request that still finds a cell's rows older than it may
use reads the changes itself first (:meth:`RowCache.snapshots_for`).
"""

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

from nova import context as context_module
from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import loopingcall

from nova_drs_scheduler import pacing
from nova_drs_scheduler.conf import host_cache as host_cache_conf
from nova_drs_scheduler.host_manager import freezing
from nova_drs_scheduler.host_manager import snapshot as snapshot_mod

LOG = logging.getLogger(__name__)

#: Shortest wait between two passes of the background refresher, so that a
#: cell that cannot be refreshed does not make it spin.
MIN_REFRESH_WAIT = 0.1

def is_fresh(snap: snapshot_mod.CellSnapshot | None, now: float,
             max_age: float) -> bool:
    return snap is not None and now - snap.loaded_at < max_age


class RowCache:
    """The host manager's rows: cell uuid -> CellSnapshot."""

    def __init__(self, conf: cfg.ConfigOpts,
                 make_state: snapshot_mod.StateFactory,
                 cells: Callable[[], list]) -> None:
        """``make_state``: the host manager's HostState class; ``cells``:
        the cells the background refresh reads (the enabled ones)."""
        self._conf = conf
        self._make_state = make_state
        self._cells = cells
        self.snapshots: dict[str, snapshot_mod.CellSnapshot] = {}
        self._generation = 0
        self._refresh_lock = threading.Lock()
        #: Callers of an inline refresh (requests, periods): while one
        #: waits, the background refresh does not give way to requests.
        self.inline = pacing.InFlight()
        #: Monotonic clock of the staleness bound; tests replace it.
        self.clock = time.monotonic
        #: The background refresh's looping call while it runs.
        self.refresher: Any = None
        #: Whether a pass that made the next one wait longer was logged.
        self._paced_logged = False
        #: Freezes the process's objects after background refreshes.
        self._freezer: freezing.Freezer | None = None

    def invalidate(self) -> None:
        """Forget every row: the next read reloads them all."""
        self._generation += 1
        self.snapshots = {}

    def load_cell(self, cctxt: Any, pace: snapshot_mod.Pace | None = None
                  ) -> snapshot_mod.CellSnapshot:
        return snapshot_mod.load(cctxt, self.snapshots.get(cctxt.cell_uuid),
                                 self._make_state, self.clock(),
                                 self._conf, pace)

    def refresh(self, context: Any, cells: list, max_age: float,
                pace: snapshot_mod.Pace | None = None) -> dict:
        """Refresh the stale cells among ``cells``, one refresher at a time.

        Returns ``{cell_uuid: snapshot or None}``; None for a cell that
        could not be read, which, like stock Nova, contributes no host.
        """
        with self._refresh_lock:
            now = self.clock()
            # Another request may have refreshed them while we waited.
            ready = {c.uuid: self.snapshots[c.uuid] for c in cells
                     if is_fresh(self.snapshots.get(c.uuid), now, max_age)}
            todo = [c for c in cells if c.uuid not in ready]
            generation = self._generation
            results = context_module.scatter_gather_cells(
                context, todo, context_module.CELL_TIMEOUT,
                functools.partial(self.load_cell, pace=pace))
            for cell_uuid, result in results.items():
                if context_module.is_cell_failure_sentinel(result):
                    LOG.warning('Failed to refresh the cached computes of '
                                'cell %s', cell_uuid)
                    ready[cell_uuid] = None
                    continue
                ready[cell_uuid] = result
                if generation == self._generation:
                    self.snapshots[cell_uuid] = result
        return ready

    def snapshots_for(self, context: Any, cells: list,
                      max_age: float) -> dict:
        """``{cell_uuid: snapshot}`` of ``cells`` no older than
        ``max_age``, the stale ones refreshed first (a cell that could not
        be read left out)."""
        now = self.clock()
        found = {c.uuid: self.snapshots.get(c.uuid) for c in cells}
        stale = [c for c in cells
                 if not is_fresh(found[c.uuid], now, max_age)]
        if stale:
            with self.inline.request():
                found.update(self.refresh(context, stale, max_age))
        return {uuid: snap for uuid, snap in found.items() if snap}

    # Background refresh.

    def start(self) -> bool:
        """Start refreshing the rows in the background; False if the
        options leave nothing to do in the background."""
        interval = host_cache_conf.refresh_interval(
            self._conf.drs_host_cache)
        if self.refresher is not None or interval == 0:
            return False
        self.refresher = loopingcall.DynamicLoopingCall(self.refresh_due)
        self.refresher.start(periodic_interval_max=interval)
        LOG.info('Refreshing the cached computes every %g s in the '
                 'background', interval)
        return True

    def stop(self) -> None:
        """Stop the background refresh and wait for a pass in progress;
        unfreeze what its passes froze."""
        refresher, self.refresher = self.refresher, None
        if refresher is not None:
            refresher.stop()
            refresher.wait()
        freezer, self._freezer = self._freezer, None
        if freezer is not None:
            freezer.release()

    def refresh_due(self) -> float:
        """One pass of the background refresher: refresh the cells whose
        rows are a refresh interval old, and return the seconds until the
        next one will be.

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
        cells = list(self._cells())
        started = self.clock()
        # Half an interval: with the defaults and a pass of well under a
        # second (0.65 s of CPU at 10000 nodes), rows still stay younger
        # than max_staleness when a pass gives way all of it.
        pace = pacing.Budgeted(pacing.Unless(pacing.REQUESTS, self.inline),
                               interval / 2)
        try:
            due = [c for c in cells if not is_fresh(
                self.snapshots.get(c.uuid), started, interval)]
            if due:
                self.refresh(context_module.get_admin_context(), due,
                             interval, pace)
                self.freeze()
        except Exception:
            LOG.exception('Background refresh of the cached computes failed')
            return interval
        now = self.clock()
        loaded = [snap.loaded_at for snap in
                  (self.snapshots.get(c.uuid) for c in cells) if snap]
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
        is 0; :meth:`stop` hands them back to the collector."""
        collect_interval = self._conf.drs_host_cache.gc_collect_interval
        if not collect_interval:
            return
        if self._freezer is None:
            self._freezer = freezing.Freezer(collect_interval, self.clock)
        self._freezer.freeze()
