#!/usr/bin/env python3
"""Rebalancing benchmark: quality side by side, then planning-time scaling.

1. Quality: one trace (``--trace FILE``, or a seeded synthetic ``--shape``,
   either with ``--bursts``), replayed for every seed of ``--seeds`` under
   ``none``, our policies and Watcher's two strategies: each at its default
   averaging periods and at the trace's granularity (60 s), and with
   ``--grid full`` over a small grid of Watcher's own parameters.  The
   table gives each row's mean ± standard deviation over the seeds; the
   verdict checks ``balanced`` against Watcher's best single setting on
   the trace and against WB at 60 s, threshold 80 (WB60), on sums over
   the seeds (:func:`single_setting_checks`): **o** fewer overloaded
   host-periods than the best single setting (bursty trace: no more than
   WB60); **m** no more migrations than it (bursty trace: at most 1.25
   times WB60's); **p** zero ping-pongs on every seed; **u** no more
   unserved core-minutes than WB60, and on a PlanetLab day (``--trace``
   without ``--bursts``) than every Watcher row; **w** worst host no
   hotter than WB60's; **d** a DRS-caused share of the overloaded
   host-periods under WB60's.  A check that needs WB60 fails when it was
   not run on every seed.
   Needs python-watcher: run it with ``tox -e bench-rebalance``.
2. Scale: our policies' input-building and decision time per period at
   100, 300 and 1000 hosts with 20 VMs per host (20000 VMs at 1000 hosts),
   on hosts small enough for those VMs to load them to about 60 %.

Every table is printed as Markdown and written under ``--output-dir``,
with one plot per trace: each row's unserved core-minutes against its
migrations (``tradeoff-TRACE.png``).
"""

import argparse
import concurrent.futures
import json
import os
import sys

from benchlib.rebalance.checks import aggregate
from benchlib.rebalance.checks import bar_checks
from benchlib.rebalance.checks import best_per_seed
from benchlib.rebalance.checks import seed_checks
from benchlib.rebalance.checks import single_setting_checks
from benchlib.rebalance.checks import verdict
from benchlib.rebalance.markdown import bar_markdown
from benchlib.rebalance.markdown import headline_markdown
from benchlib.rebalance.markdown import plain_markdown
from benchlib.rebalance.markdown import quality_markdown
from benchlib.rebalance.markdown import run_line
from benchlib.rebalance.markdown import seed_markdown
from benchlib.rebalance.plot import trace_name
from benchlib.rebalance.plot import trace_title
from benchlib.rebalance.plot import tradeoff_png
from benchlib.rebalance.runs import reused
from benchlib.rebalance.runs import run_one
from benchlib.rebalance.runs import simulate_argv
from benchlib.rebalance.scale import planning_time
from benchlib.rebalance.watcher_grid import GRIDS
from benchlib.rebalance.watcher_grid import watcher_variants

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces


def quality(args) -> int:
    seeds = [int(s) for s in args.seeds.split(',')]
    names = [n.strip() for n in args.strategies.split(',') if n.strip()]
    ours = [n for n in names if not n.startswith('watcher')]
    threshold = model.PlannerConfig().cpu_threshold
    rows = ours + (watcher_variants(args.grid, threshold)
                   if 'watcher' in names else [])
    runs = reused(args.reuse, args)
    done = {(r['seed'], r['strategy']) for r in runs}
    tasks = [(simulate_argv(args, seed), seed, row)
             for seed in seeds for row in rows
             if (seed, getattr(row, 'label', row)) not in done]
    failures = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        finished = (pool.map(run_one, *zip(*tasks, strict=True))
                    if tasks else ())
        for run in finished:
            if 'error' in run:
                print(f"seed {run['seed']}: {run['strategy']}: failed "
                      f"inside Watcher: {run['error']}", flush=True)
                failures.append(run)
                continue
            print(run_line(run), flush=True)
            runs.append(run)
    table = aggregate(runs)
    result = single_setting_checks(table, args.bursts, bool(args.trace))
    hosts = sorted({r['hosts'] for r in runs})
    loads = sorted({r['mean_load'] for r in runs})
    source = cli.describe(cli.parser().parse_args(
        list(simulate_argv(args, seeds[0]))))
    trace = source.replace(f' (seed {seeds[0]})', '')
    print(f'\n{trace}, seeds '
          f'{", ".join(map(str, seeds))}: {hosts[0]}-{hosts[-1]} hosts, '
          f'mean host CPU {loads[0]}-{loads[-1]} %; mean ± standard '
          f'deviation over the seeds')
    print(quality_markdown(table, result.get('against')))
    print()
    print(headline_markdown(result))
    for run in failures:
        print(f"- seed {run['seed']}: {run['strategy']} failed inside "
              f"Watcher ({run['error']})")
    checks = seed_checks(runs)
    bar = bar_checks(runs) if checks else []
    if checks:
        print('\nPer seed, against the best Watcher row of that seed:')
        print(seed_markdown(checks))
        print('\nMean ± standard deviation over the seeds, with each '
              'seed\'s best Watcher row:')
        print(quality_markdown(best_per_seed(checks)))
        print('\nThe same per-seed check for every row, each Watcher row '
              'against the best of the other Watcher rows of each seed '
              '(o: not fewer overloaded host-periods, m: more migrations '
              'or GB, p: a ping-pong, w: above none):')
        print(bar_markdown(bar))
    os.makedirs(args.output_dir, exist_ok=True)
    plot = tradeoff_png(table, trace_title(trace, args), args.output_dir,
                        trace_name(args))
    print(f'wrote {plot}')
    path = os.path.join(args.output_dir, 'quality.json')
    with open(path, 'w') as stream:
        json.dump({'source': source, 'seeds': seeds, 'runs': runs,
                   'rows': table, 'verdict': result,
                   'mean_verdict': verdict(table),
                   'seed_checks': checks,
                   'bar_checks': bar,
                   'failed_rows': failures},
                  stream, indent=1)
    print(f'wrote {path}')
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trace', help='Trace file for the quality run.')
    parser.add_argument('--shape', choices=traces.SHAPES,
                        default='planetlab',
                        help='Shape of the synthetic trace (without '
                             '--trace).')
    parser.add_argument('--step-seconds', type=int, default=300,
                        help='Seconds between two samples of the trace '
                             '(the steps shape: 60).')
    parser.add_argument('--target-load', type=float,
                        default=cli.TARGET_LOAD,
                        help='Size the cluster for this mean host CPU '
                             'over the trace (warm: 70).')
    parser.add_argument('--bursts', action='store_true',
                        help='Add 1-3 minute bursts at 60 s steps.')
    parser.add_argument('--strategies', default='none,balanced,watcher',
                        help='Ours by name; "watcher" adds every Watcher '
                             'row of --grid.')
    parser.add_argument('--grid', choices=GRIDS, default='full',
                        help='Watcher rows: both strategies at their '
                             'default periods and at 60 s (defaults); '
                             'workload_balance only, at both (wb), and '
                             'at 60 s, threshold 70 too (wb+70); one WB '
                             'row (wb60, wb60-70, wb300, wb300-70); '
                             'workload_stabilization\'s rows (ws) or its '
                             'row at 60 s, threshold 0.05, retry 1 '
                             '(ws60-05) or 0.1 (ws60-10), or its rows at '
                             '60 s with no audit while a plan runs '
                             '(ws-unforced); or '
                             'the whole grid (full).')
    parser.add_argument('--seeds', default='1,2,3',
                        help='Comma-separated seeds (the synthetic trace '
                             'and bursts, flavors and placement).')
    parser.add_argument('--vms', type=int, default=1052,
                        help='VMs of the synthetic quality trace (as many '
                             'as PlanetLab 20110303 by default).')
    parser.add_argument('--config-file', action='append', default=[],
                        help='[drs] options of our policies.')
    parser.add_argument('--reuse', action='append', default=[],
                        metavar='QUALITY_JSON',
                        help='Take Watcher\'s runs from an earlier '
                             'quality.json of the same trace instead of '
                             'rerunning them (they do not depend on our '
                             'options).')
    parser.add_argument('--jobs', type=int, default=1,
                        help='Runs in parallel (each is one process).')
    parser.add_argument('--scale-hosts', default='100,300,1000')
    parser.add_argument('--vms-per-host', type=int, default=20)
    parser.add_argument('--scale-steps', type=int, default=6,
                        help='5-minute trace steps of the scale run '
                             '(30 one-minute periods by default).')
    parser.add_argument('--skip-quality', action='store_true')
    parser.add_argument('--skip-scale', action='store_true')
    parser.add_argument('--output-dir', default='bench-output/rebalance')
    args = parser.parse_args(argv)
    if not args.skip_quality:
        code = quality(args)
        if code:
            return code
    if not args.skip_scale:
        rows = planning_time([int(h) for h in args.scale_hosts.split(',')],
                      args.vms_per_host, args.scale_steps,
                      strategies.PLANNER_POLICIES,
                      int(args.seeds.split(',')[0]), args.config_file)
        print(plain_markdown(rows))
        os.makedirs(args.output_dir, exist_ok=True)
        path = os.path.join(args.output_dir, 'scale.json')
        with open(path, 'w') as stream:
            json.dump(rows, stream, indent=1)
        print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
