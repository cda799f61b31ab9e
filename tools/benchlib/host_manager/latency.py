"""``--measure latency``: percentiles of ``select_destinations``.

Stock, ours refreshing inline and ours refreshing in the background, each
in a process of its own, their requests alternating on the real clock
while the rows change as a real cloud's do.
"""

import contextlib
import multiprocessing
import os
import sys
import traceback

from nova import context as nova_context
from nova import thread_pool_factory
from nova.scheduler import manager as scheduler_manager

from benchlib.census import print_census
from benchlib.clocks import percentiles_ms
from benchlib.placement_service import INPROCESS
from benchlib.placement_service import placement_service
from benchlib.scheduling import WARMUP
from benchlib.scheduling import timed_select
from benchlib.scheduling import with_instance_info
from benchlib.timeline import Timeline
from benchlib.timeline import overlap_stats
from nova_drs_scheduler.manager import DRSSchedulerManager

#: Seconds a scheduler of ``--measure latency`` waits for a cell.
FIRST_LOAD_TIMEOUT = 600
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
