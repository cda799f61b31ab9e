#!/usr/bin/env python3
"""Benchmark: one live rebalance period (``run_rebalance``) at scale.

Builds, per N, a real Nova API and cell database with N compute hosts,
their services, host and instance mappings and about
``--instances-per-host`` instances each (the benchmarks' builder,
tools/benchlib/cloud.py), plus an in-process placement, and
runs rebalance periods through ``DRSSchedulerManager.run_rebalance`` with
the default ``nova`` metric source and ``automation = manual`` (moves are
recommended, not started).  Before each period every compute node reports
a fresh ``cpu.percent`` (``--over`` of the hosts at 90 %, the others 20-70
%), as computes do every minute.

Each period is split into the phases below (wall clock, ms), the first
period being a warm-up that is not counted:

- read: Nova's rows (``live.read_cloud``, ``live.read_instances``);
- metrics: host samples, windows, instance loads (the diagnostics RPC is
  answered at once: the target excludes its wait, bounded by ``[drs]
  instance_metrics_timeout``);
- snapshot: ``live.build_snapshot``;
- plan: recommendations, ``planner.plan`` with Nova's filters and
  placement as candidates;
- record: the decision record and windows stored in the DRS database;
- garbage collection: Python's collector, inside whichever phase it
  interrupted (also counted there); *full* its full (generation 2)
  collections alone.

After the warm-up period the objects the collector tracks are counted by
type (printed to stderr): what each full collection walks.

The leader check is stubbed (one scheduler).  Usage::

    tools/bench_rebalance_period.py --nodes 1000 5000 10000
    tools/bench_rebalance_period.py --db mysql+pymysql://root@127.0.0.1:3307
"""

import sys

from benchlib import patching  # noqa: I001

# Nova must be monkey patched before anything imports eventlet or futurist.
patching.monkey_patch(sys.argv[1:])

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import cProfile  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import unittest.mock  # noqa: E402

import sqlalchemy as sa  # noqa: E402
from benchlib.census import print_census  # noqa: E402
from benchlib.clocks import CallClock  # noqa: E402
from benchlib.cloud import create_cell  # noqa: E402
from benchlib.cloud import database_url  # noqa: E402
from benchlib.cloud import drop_cell  # noqa: E402
from benchlib.cloud import environment  # noqa: E402
from benchlib.cloud import populate  # noqa: E402
from benchlib.host_manager.period import PERIOD_PHASES  # noqa: E402
from benchlib.options import add_db_argument  # noqa: E402
from benchlib.options import add_gc_argument  # noqa: E402
from benchlib.options import apply_gc_argument  # noqa: E402
from benchlib.placement_service import INPROCESS  # noqa: E402
from benchlib.placement_service import placement_service  # noqa: E402
from benchlib.scheduling import with_instance_info  # noqa: E402
from benchlib.tables import print_tables  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import objects  # noqa: E402
from nova.compute import api as compute_api  # noqa: E402
from nova.db.main import models  # noqa: E402
from nova.scheduler.client import report  # noqa: E402
from oslo_serialization import jsonutils  # noqa: E402
from oslo_utils import timeutils  # noqa: E402

from nova_drs_scheduler import conf as drs_conf  # noqa: E402
from nova_drs_scheduler.db import migration as drs_migration  # noqa
from nova_drs_scheduler.host_manager import cache  # noqa: E402
from nova_drs_scheduler.manager import DRSSchedulerManager  # noqa: E402
from nova_drs_scheduler.planning import planner  # noqa: E402
from nova_drs_scheduler.rebalance import candidates  # noqa: E402
from nova_drs_scheduler.rebalance.sources import nova as nova_source  # noqa

CONF = drs_conf.CONF
PHASES = ('read', 'metrics', 'snapshot', 'plan', 'record')
#: What each phase times; names missing in the code measured are skipped,
#: so the same benchmark measures an older version
#: (doc/benchmarks-scheduling.md).
#: Rows after the phases: placement is part of plan.
TOTALS = ('other', 'period', 'placement', 'host cache refresh',
          'period without both', 'garbage collection',
          'garbage collection, full')
#: The in-process placement service's handling of the allocation
#: candidates queries (part of *plan*).
#: The caching host manager's refresh of the rows changed since its last
#: one (every node reported since the last period), which the first
#: candidates call of a period pays here and the background refresher
#: does in a deployment.
INSIDE_PLAN = {'placement': [(report.SchedulerReportClient,
                              'get_allocation_candidates')],
               'host cache refresh': [(cache.RowCache, 'refresh')]}
TARGETS = PERIOD_PHASES


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, nargs='+',
                        default=[1000, 5000, 10000])
    parser.add_argument('--instances-per-host', type=int, default=20)
    parser.add_argument('--over', type=float, default=0.05,
                        help='share of hosts over the CPU threshold')
    parser.add_argument('--periods', type=int, default=5,
                        help='periods measured per N (after a warm-up)')
    parser.add_argument('--profile', metavar='FILE',
                        help='write a cProfile of the measured periods of '
                             'the last size to FILE (pstats format); '
                             'profiling slows them, so their times mean '
                             'less')
    parser.add_argument('--no-collect', action='store_true',
                        help='do not collect garbage (untimed) before each '
                             'period, so that full collections land in '
                             'periods as they do in a service')
    add_gc_argument(parser)
    add_db_argument(parser)
    return parser.parse_args()


class GcClock:
    """Time Python's garbage collector spends inside the period, whichever
    phase it interrupts (``gc.callbacks``): a full collection walks every
    live object, so it costs more in a larger process, and lands in the
    phase that happens to allocate when it is due."""

    def __init__(self):
        self.spent = self.cpu = 0.0
        #: Full (generation 2) collections, and their share of the above.
        self.full = 0
        self.full_spent = self.full_cpu = 0.0
        self._started = None

    def __call__(self, phase, info):
        if phase == 'start':
            self._started = (time.perf_counter(), time.process_time())
        elif self._started is not None:
            spent = time.perf_counter() - self._started[0]
            cpu = time.process_time() - self._started[1]
            self.spent += spent
            self.cpu += cpu
            if info['generation'] == 2:
                self.full += 1
                self.full_spent += spent
                self.full_cpu += cpu
            self._started = None

    def clear(self):
        self.spent = self.cpu = 0.0
        self.full = 0
        self.full_spent = self.full_cpu = 0.0

    @contextlib.contextmanager
    def installed(self):
        gc.callbacks.append(self)
        try:
            yield self
        finally:
            gc.callbacks.remove(self)


def report_cpu(cell_url, names, hot):
    """Every compute node reports a fresh cpu.percent now."""
    rng = random.Random(len(names))
    now = timeutils.utcnow().isoformat()
    table = models.ComputeNode.__table__
    engine = sa.create_engine(cell_url)
    with engine.begin() as conn:
        conn.execute(
            table.update().where(table.c.host == sa.bindparam('name'))
            .values(metrics=sa.bindparam('report')),
            [{'name': name, 'report': jsonutils.dumps([{
                'name': 'cpu.percent', 'source': 'virt', 'timestamp': now,
                'value': 0.9 if name in hot else rng.uniform(0.2, 0.7)}])}
             for name in names])
    engine.dispose()


def instant_diagnostics(pushed, vcpus=64):
    """Diagnostics answered at once.  Each instance is busy on a steady
    share of its host's reported CPU (90 % on the hosts over, the only
    ones measured), drawn per instance from its uuid, so its measured
    load, hence what the planner scores and asks Nova about, does not
    depend on how long periods take on a loaded machine."""
    on_host = {uuid: len(instances) for instances in pushed.values()
               for uuid in instances}

    def diagnostics(_api, _context, instance):
        cores = 0.9 * vcpus / on_host[instance.uuid] * random.Random(
            instance.uuid).uniform(0.5, 1.5)
        return objects.Diagnostics(cpu_details=[objects.CpuDiagnostics(
            id=0, time=int(time.time() * cores * 10**9))])
    return unittest.mock.patch.object(
        compute_api.API, 'get_instance_diagnostics', diagnostics)


def run_size(args, workdir, size):
    ctxt = nova_context.get_admin_context()
    cell = create_cell(ctxt, args.db, workdir, size)
    cell_url = cell.database_connection
    started = time.perf_counter()
    with nova_context.target_cell(ctxt, cell) as cctxt:
        nodes, pushed = populate(cctxt, cell, cell_url, size,
                                 args.instances_per_host)
    names = sorted(nodes)
    hot = set(random.Random(size).sample(names, int(size * args.over)))
    #: {phase: [(wall s, CPU s) per period]}
    samples = {phase: [] for phase in PHASES + TOTALS}
    with placement_service(INPROCESS, nodes):
        setup = time.perf_counter() - started
        manager = with_instance_info(DRSSchedulerManager(), pushed)
        manager.rebalancer.leader = types.SimpleNamespace(
            check=lambda _ctxt: (True, 'benchmark: the only scheduler'))
        clock = CallClock(TARGETS)
        # Inside plan, a clock of its own: a deployment spends it in the
        # placement service, not in the scheduler.
        placement_clock = CallClock(INSIDE_PLAN)
        profiler = cProfile.Profile() if args.profile else None
        collector = GcClock()
        with counted() as counts, clock.installed(), \
                placement_clock.installed(), collector.installed(), \
                instant_diagnostics(pushed):
            for period in range(args.periods + 1):
                report_cpu(cell_url, names, hot)
                # Untimed: the service's refresher thread reads the rows
                # changed between two periods (and freezes what is alive).
                manager.host_manager.rows.refresh_due()
                clock.clear()
                placement_clock.clear()
                if not args.no_collect:
                    gc.collect()  # Untimed: earlier garbage is not ours.
                collector.clear()
                cpu, total = time.process_time(), time.perf_counter()
                if profiler is not None and period:
                    profiler.runcall(manager.run_rebalance, ctxt)
                else:
                    manager.run_rebalance(ctxt)
                cpu = time.process_time() - cpu
                total = time.perf_counter() - total
                if not period:
                    print_census(f'N={size}, after the warm-up period')
                    counts.clear()
                    continue  # Warm-up: imports, caches, first samples.
                samples['period'].append((total, cpu))
                samples['garbage collection'].append(
                    (collector.spent, collector.cpu))
                samples['garbage collection, full'].append(
                    (collector.full_spent, collector.full_cpu))
                counts['full garbage collections'] += collector.full
                add_samples(samples, clock, total, cpu, 'other')
                add_samples(samples, placement_clock, total, cpu,
                            'period without both')
        manager.host_manager.stop_refresher()
    drop_cell(cell)
    if profiler is not None:
        profiler.dump_stats(args.profile)
    return {'size': size, 'setup': setup, 'hot': len(hot),
            'instances': sum(len(v) for v in pushed.values()),
            'samples': samples,
            'per_period': {key: value / args.periods
                           for key, value in counts.items()}}


def add_samples(samples, clock, total, cpu, rest):
    """One period's ``(wall, CPU)`` per label of ``clock``, and under
    ``rest`` the period's minus all of them."""
    for label in clock.targets:
        samples[label].append((clock.spent[label], clock.cpu[label]))
    samples[rest].append((total - sum(clock.spent.values()),
                          cpu - sum(clock.cpu.values())))


@contextlib.contextmanager
def counted():
    """Count the candidates callback's calls and the moves planned: the
    plan phase's cost depends on them."""
    counts = collections.Counter()
    call, plan = candidates.LiveCandidates.__call__, planner.plan

    def counting_call(*args, **kwargs):
        counts['candidates calls'] += 1
        return call(*args, **kwargs)

    def counting_plan(*args, **kwargs):
        result = plan(*args, **kwargs)
        counts['moves'] += len(result.moves)
        return result
    with unittest.mock.patch.object(candidates.LiveCandidates, '__call__',
                                    counting_call), \
            unittest.mock.patch.object(planner, 'plan', counting_plan):
        yield counts


def p95(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def report_rows(results):
    rows = []
    for r in results:
        for phase in PHASES + TOTALS:
            wall, cpu = zip(*r['samples'][phase], strict=True)
            rows.append([r['size'], r['instances'], phase,
                         statistics.mean(cpu) * 1000, p95(cpu) * 1000,
                         statistics.mean(wall) * 1000, p95(wall) * 1000])
    return rows


def growth_rows(results):
    """CPU time growth (wall clock on a shared machine says little)."""
    rows = []
    for prev, cur in zip(results, results[1:], strict=False):
        factor = cur['size'] / prev['size']
        for phase in ('read', 'metrics', 'plan', 'period',
                      'period without both'):
            ratio = (statistics.mean(c for _w, c in cur['samples'][phase])
                     / statistics.mean(c for _w, c in prev['samples'][phase]))
            rows.append([f'{prev["size"]} -> {cur["size"]} (x{factor:g})',
                         phase, ratio, ratio / factor])
    return rows


def main():
    args = parse_args()
    results = []
    with environment(args.db) as workdir:
        drs_url = database_url(args.db, workdir, 'bench_drs')
        CONF.set_override('connection', drs_url, group='drs_database')
        apply_gc_argument(args)
        if args.db:  # The service makes an SQLite one, not a server's.
            engine = sa.create_engine(drs_url)
            drs_migration.sync(engine)
            engine.dispose()
        # The diagnostics are answered at once, but a loaded machine may
        # not run their threads within the default 10 s: hosts left
        # unmeasured would not be relieved, and plan would do less.
        for name, value in (('automation', 'manual'),
                            ('metrics_source', 'nova'),
                            ('stabilization', 1),
                            ('instance_metrics_timeout', 3600)):
            CONF.set_override(name, value, group='drs')
        for size in args.nodes:
            result = run_size(args, workdir, size)
            print(f'N={size}: setup {result["setup"]:.1f} s, {result["hot"]}'
                  f' hosts over, {args.periods} periods; per period: '
                  + ', '.join(f'{value:g} {key}' for key, value in
                              sorted(result['per_period'].items())),
                  file=sys.stderr)
            results.append(result)
    db = args.db.split('://')[0] if args.db else 'sqlite (files)'
    print_tables([
        (f'Database: {db}; {args.instances_per_host} instances per host '
         f'(on average); {args.over:.0%} of hosts over; '
         f'{datetime.date.today()}; ms over {args.periods} periods.',
         report_rows(results),
         ['N', 'instances', 'phase', 'CPU mean ms', 'CPU p95 ms',
          'wall mean ms', 'wall p95 ms']),
        ('Growth of CPU time between sizes (ratio of means; per host 1.0 '
         '= linear):', growth_rows(results),
         ['sizes', 'phase', 'growth', 'growth per host'])], floatfmt='.1f')
    return 0


if __name__ == '__main__':
    sys.exit(main())
