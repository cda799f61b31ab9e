#!/usr/bin/env python3
"""Rebalancing benchmark: quality side by side, then planning-time scaling.

1. Quality: ``nova-drs-simulate --all-strategies`` on a seeded synthetic
   PlanetLab-like day (or ``--trace FILE``), cluster sized for 60 % mean
   CPU.  Needs python-watcher for its two strategies: run it with
   ``tox -e bench-rebalance`` (``--strategies`` narrows the list).
2. Scale: our policies' planning time per period at 100, 300 and 1000
   hosts with 20 VMs per host (20000 VMs at 1000 hosts), on hosts small
   enough for those VMs to load them to about 60 %.

Every table is printed as Markdown and written under ``--output-dir``.
"""

import argparse
import functools
import json
import os
import sys

from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces

#: 20 VMs of the default flavor mix use about 6 cores: 10-CPU hosts run
#: them at about 60 %.
SCALE_HOST_VCPUS = 10
SCALE_HOST_RAM_MB = 128 * 1024


def _scale(host_counts, vms_per_host: int, steps: int, names,
           seed: int) -> list:
    config = model.PlannerConfig()
    windows = functools.partial(
        metrics.MetricsWindows, 3, config.stabilization, 180,
        config.cpu_threshold, config.ram_threshold)
    settings = engine.Settings(config, windows, interval=60)
    rows = []
    for hosts in host_counts:
        trace = traces.synthetic(hosts * vms_per_host, steps, seed)
        vms = cluster.assign_flavors(trace.names, cluster.DEFAULT_FLAVORS,
                                     seed)
        spec = cluster.ClusterSpec(hosts=hosts, host_vcpus=SCALE_HOST_VCPUS,
                                   host_memory_mb=SCALE_HOST_RAM_MB,
                                   seed=seed)
        for name in names:
            result = engine.run(trace, vms, spec,
                                strategies.build(name, config, seed, {}),
                                settings)
            summary = result.card.summary()
            rows.append({
                'hosts': hosts, 'vms': len(vms), 'strategy': name,
                'mean_load': round(result.mean_load, 1),
                'periods': len(result.card.plan_seconds),
                'migrations': summary['migrations'],
                'plan_ms_mean': summary['plan_ms_mean'],
                'plan_ms_p95': summary['plan_ms_p95'],
                'plan_ms_max': round(1000 * max(result.card.plan_seconds),
                                     3)})
            print(f'scale: {rows[-1]}', flush=True)
    return rows


def _across_seeds(documents: list) -> list:
    """One row per strategy: each seed's value, then their sum."""
    keys = ('overloaded_host_periods', 'migrations', 'gb_moved',
            'ping_pongs', 'failed_migrations')
    rows = []
    for index, result in enumerate(documents[0]['results']):
        runs = [d['results'][index] for d in documents]
        row = {'strategy': result['strategy']}
        for key in keys:
            values = [r[key] for r in runs]
            row[key] = (' / '.join(str(v) for v in values)
                        + f' (sum {round(sum(values), 1)})')
        rows.append(row)
    return rows


def _markdown(rows: list) -> str:
    keys = list(rows[0])
    lines = ['| ' + ' | '.join(keys) + ' |',
             '|' + '|'.join('---' for _ in keys) + '|']
    lines += ['| ' + ' | '.join(str(r[k]) for k in keys) + ' |'
              for r in rows]
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trace', help='Trace file for the quality run.')
    parser.add_argument('--strategies', default=','.join(strategies.ALL))
    parser.add_argument('--seeds', default='1',
                        help='Comma-separated seeds of the quality run (the '
                             'synthetic trace, flavors and placement); '
                             'several show how much a ranking depends on '
                             'the initial placement.')
    parser.add_argument('--vms', type=int, default=1052,
                        help='VMs of the synthetic quality trace (as many '
                             'as PlanetLab 20110303 by default).')
    parser.add_argument('--scale-hosts', default='100,300,1000')
    parser.add_argument('--vms-per-host', type=int, default=20)
    parser.add_argument('--scale-steps', type=int, default=6,
                        help='5-minute trace steps of the scale run '
                             '(30 one-minute periods by default).')
    parser.add_argument('--skip-quality', action='store_true')
    parser.add_argument('--skip-scale', action='store_true')
    parser.add_argument('--output-dir', default='bench-output/rebalance')
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(',')]
    if not args.skip_quality:
        documents = []
        for seed in seeds:
            directory = os.path.join(args.output_dir, f'seed-{seed}')
            quality = ['--strategies', args.strategies, '--seed', str(seed),
                       '--output-dir', directory]
            quality += (['--trace', args.trace] if args.trace
                        else ['--vms', str(args.vms)])
            code = cli.main(quality)
            if code:
                return code
            with open(os.path.join(directory, 'rebalance.json')) as stream:
                documents.append(json.load(stream))
        if len(seeds) > 1:
            print(f'Per seed ({", ".join(map(str, seeds))}), then summed:')
            print(_markdown(_across_seeds(documents)))
    if not args.skip_scale:
        rows = _scale([int(h) for h in args.scale_hosts.split(',')],
                      args.vms_per_host, args.scale_steps,
                      strategies.PLANNER_POLICIES, seeds[0])
        print(_markdown(rows))
        os.makedirs(args.output_dir, exist_ok=True)
        path = os.path.join(args.output_dir, 'scale.json')
        with open(path, 'w') as stream:
            json.dump(rows, stream, indent=1)
        print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
