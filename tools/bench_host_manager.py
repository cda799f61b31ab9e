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

import sys

from benchlib import patching  # noqa: I001

# Nova must be monkey patched before anything imports eventlet or futurist.
patching.monkey_patch(sys.argv[1:])

import argparse  # noqa: E402
import datetime  # noqa: E402
import time  # noqa: E402

import tabulate  # noqa: E402
from benchlib import clocks  # noqa: E402
from benchlib.cloud import create_cell  # noqa: E402
from benchlib.cloud import drop_cell  # noqa: E402
from benchlib.cloud import environment  # noqa: E402
from benchlib.cloud import populate  # noqa: E402
from benchlib.host_manager.latency import latency_rows  # noqa: E402
from benchlib.host_manager.latency import measure_latency  # noqa: E402
from benchlib.host_manager.medians import REPEATS  # noqa: E402
from benchlib.host_manager.medians import UNSYNCED_MAX_NODES  # noqa: E402
from benchlib.host_manager.medians import growth_rows  # noqa: E402
from benchlib.host_manager.medians import measure  # noqa: E402
from benchlib.host_manager.medians import measure_refresh  # noqa: E402
from benchlib.host_manager.medians import measure_unsynced  # noqa: E402
from benchlib.host_manager.medians import report_rows  # noqa: E402
from benchlib.host_manager.memory import measure_memory  # noqa: E402
from benchlib.host_manager.period import AlwaysLeader  # noqa: E402
from benchlib.host_manager.period import measure_period  # noqa: E402
from benchlib.host_manager.period import period_rows  # noqa: E402
from benchlib.host_manager.period import write_static_metrics  # noqa: E402
from benchlib.host_manager.refresh_pass import measure_pass  # noqa: E402
from benchlib.host_manager.refresh_pass import pass_rows  # noqa: E402
from benchlib.options import add_db_argument  # noqa: E402
from benchlib.options import add_gc_argument  # noqa: E402
from benchlib.options import apply_gc_argument  # noqa: E402
from benchlib.placement_service import INPROCESS  # noqa: E402
from benchlib.placement_service import PLACEMENT  # noqa: E402
from benchlib.placement_service import placement_service  # noqa: E402
from benchlib.row_writer import RowWriter  # noqa: E402
from benchlib.scheduling import with_instance_info  # noqa: E402
from benchlib.tables import print_overlaps  # noqa: E402
from benchlib.tables import print_tables  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.scheduler import manager as scheduler_manager  # noqa: E402

from nova_drs_scheduler import concurrency  # noqa: E402
from nova_drs_scheduler import conf as drs_conf  # noqa: E402
from nova_drs_scheduler.manager import DRSSchedulerManager  # noqa: E402

CONF = drs_conf.CONF


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
    parser.add_argument('--concurrency', choices=patching.CONCURRENCY,
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
        ours.rebalancer.reader.reload()
        ours.rebalancer.leader = AlwaysLeader()
        ours.host_manager.start_refresher()
        return {'period': measure_period(ctxt, ours, placement, writer,
                                         args.requests)}
    finally:
        ours.host_manager.stop_refresher()
        writer.close()


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


def main():
    args = parse_args()
    clocks.COLLECT = not args.no_collect
    results = []
    with environment(args.db) as workdir:
        apply_gc_argument(args)
        for size in args.nodes:
            result = run_size(args, workdir, size)
            print(f'N={size}: setup {result["setup"]:.1f} s, '
                  f'{result["repeats"]} repeats', file=sys.stderr)
            results.append(result)
    db = args.db.split('://')[0] if args.db else 'sqlite (files)'
    mode = f'{concurrency.backend()}; placement {args.placement}'
    if args.measure != 'medians':
        print(f'Database: {db}; {args.instances_per_host} instances per '
              f'host; {mode}; {args.requests} requests per '
              f'scheduler or condition; garbage '
              f'{"collected" if clocks.COLLECT else "not collected"} '
              f'before each request; {datetime.date.today()}.\n')
        print_percentiles(args, results)
        return 0
    print_tables([
        (f'Database: {db}; {args.instances_per_host} instances per host; '
         f'{mode}; {datetime.date.today()}; medians in ms.',
         report_rows(results),
         ['N', 'measure', 'stock ms', 'ours ms', 'stock/ours']),
        ('Growth of cost between sizes (1.0 = constant, = factor: '
         'linear):', growth_rows(results),
         ['sizes', 'measure', 'stock growth', 'ours growth'])])
    return 0


if __name__ == '__main__':
    sys.exit(main())
