"""``--measure period``: ours between and during rebalance periods.

Periods run back to back in another thread of the same process; blocks of
requests alternate between no period running, periods giving way to
requests in flight (``pacing``), the same waiting at most 0.2 s at a
point, and periods not giving way.  Also the phases of a period, which
tools/bench_rebalance_period.py times too.
"""

import contextlib
import random
import statistics
import threading
import time
import unittest.mock

from nova.scheduler.client import report
from oslo_serialization import jsonutils

from benchlib.clocks import percentiles_ms
from benchlib.scheduling import WARMUP
from benchlib.scheduling import timed_select
from benchlib.timeline import Timeline
from benchlib.timeline import overlap_stats
from nova_drs_scheduler.db import store as store_mod
from nova_drs_scheduler.planning import metrics as metrics_mod
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import outcomes
from nova_drs_scheduler.rebalance import recommendations
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import snapshot_reader
from nova_drs_scheduler.rebalance import telemetry
from nova_drs_scheduler.rebalance.sources import base as sources_base
from nova_drs_scheduler.rebalance.sources import nova as nova_source

try:  # Older code, measured side by side, has no pacing.
    from nova_drs_scheduler import pacing
except ImportError:
    pacing = None


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
             (snapshot_reader.SnapshotReader, '_named_instances')],
    'metrics': [(nova_source.NovaSource, 'host_samples'),
                (nova_source.NovaSource, 'host_samples_of'),
                (nova_source.NovaSource, 'instance_loads_within'),
                (nova_source.NovaSource, 'instance_loads'),
                (sources_base.MetricsSource, 'host_samples_of'),
                (sources_base.MetricsSource, 'instance_loads_within'),
                (metrics_mod.MetricsWindows, 'update'),
                (snapshot_reader.SnapshotReader, 'windows')],
    'snapshot': [(live, 'build_snapshot'),
                 (aggregate_settings, 'host_settings')],
    'plan': [(planner, 'plan'), (recommendations, 'revalidate'),
             (recommendations, 'approved')],
    'record': [(record, 'add_plan'), (live, 'needs_attention'),
               (store_mod.Store, 'save_windows'), (store_mod.Store, 'add'),
               (store_mod.Store, 'recommend'), (store_mod.Store, 'purge'),
               (telemetry.Telemetry, 'hosts'),
               (outcomes.Outcomes, 'collect')],
}
#: The period's own calls to placement (part of *plan*): inside this
#: process (``--placement inprocess``) or, as deployed, the wait for
#: another process's answer over HTTP (``--placement process``).
PERIOD_PLACEMENT = {'placement': [(report.SchedulerReportClient,
                                   'get_allocation_candidates')]}


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
