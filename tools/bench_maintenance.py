#!/usr/bin/env python3
"""Maintenance benchmark: our drains against Watcher's host_maintenance.

Two schedules (``simulate/maintenance.py``) on each trace (``--trace``
files, and a generated day unless ``--synthetic-vms 0``) and each seed:

- ``drain one host``: the cluster's first host enters maintenance at
  ``--drain-at`` and stays out;
- ``rolling``: from ``--rolling-start``, every host in turn is drained,
  kept ``--work-time`` seconds for its work once empty (or at the latest
  ``--deadline`` seconds after it entered), then brought back, empty.

Rows: ours (the planner with the ``balanced`` policy and the ``[drs]``
options of ``--config-file``, defaults without), Watcher's
``host_maintenance`` (one audit per host entering maintenance, its plan
run as Watcher's applier paces it; ``simulate/watcher_maintenance.py``),
and the same with Watcher's ``workload_balance`` every period beside it
(60 s, threshold at our ``cpu_threshold``: its best single setting on
PlanetLab, doc/benchmarks.md), as an operator who balances with Watcher
runs both.  Needs python-watcher: run it with ``tox -e bench-maintenance``.

Prints, per schedule, the sums over traces and seeds with our ratios to
each Watcher row, then the issue's bar per trace, as Markdown; writes every
run to ``maintenance.json`` under ``--output-dir``.
"""

import argparse
import concurrent.futures
import functools
import json
import os
import sys

import tabulate

from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import maintenance
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_maintenance

OURS = 'balanced'
HM = 'Watcher host_maintenance'
HM_WB = 'Watcher host_maintenance + WB 60 s'
ROWS = (OURS, HM, HM_WB)
SCHEDULES = ('drain one host', 'rolling')

#: (key, title) of the summed columns, in table order.
SUMS = (
    ('hosts_drained', 'hosts drained'),
    ('drain_migrations', 'drain migrations'),
    ('migrations', 'migrations'),
    ('drain_gb', 'drain GB'),
    ('gb_moved', 'GB moved'),
    ('overloaded_while_draining', 'overloaded host-periods while draining'),
    ('overloaded_host_periods', 'overloaded host-periods'),
    ('left_behind', 'left behind'),
    ('failed_migrations', 'refused moves'),
)


@functools.cache
def _setup(argv: tuple) -> cli.Setup:
    """A trace, cluster and schedule, built once per worker process."""
    return cli.prepare(cli.parser().parse_args(list(argv)))


def schedule_argv(name: str, args) -> list:
    """The simulator's options for the schedule called ``name``."""
    if name == 'rolling':
        return ['--maintenance', 'rolling', '--maintenance-start',
                str(args.rolling_start), '--work-time', str(args.work_time),
                '--drain-deadline', str(args.deadline)]
    return ['--maintenance', 'drain', '--maintenance-start',
            str(args.drain_at), '--drain-deadline', str(args.deadline)]


def _strategy(row: str, config: model.PlannerConfig, seed: int):
    if row == OURS:
        return strategies.build(OURS, config, seed, {})
    balancer = None
    if row == HM_WB:
        balancer = watcher_adapter.WatcherStrategy(
            'workload_balance',
            {'period': 60, 'granularity': 60,
             'threshold': config.cpu_threshold}, seed)
    return watcher_maintenance.HostMaintenance(balancer, row)


def one(trace: str, argv: tuple, seed: int, name: str, row: str) -> dict:
    """One row on one trace, seed and schedule: its figures."""
    setup = _setup(argv)
    result = engine.run(setup.trace, setup.vms, setup.spec,
                        _strategy(row, setup.config, seed), setup.settings,
                        setup.maintenance)
    card = result.card
    return dict(trace=trace, seed=seed, schedule=name, row=row,
                hosts=setup.hosts, **card.summary(),
                **maintenance.summary(result.drains, card.overloaded_series,
                                      setup.settings.interval,
                                      setup.spec.bandwidth_mbps))


def totals(runs: list) -> dict:
    """Sums over ``runs``, the drain times' mean and max (minutes) and the
    worst host."""
    mean, longest = maintenance.drain_minutes(
        [s for run in runs for s in run['drain_seconds']])
    total = {key: round(sum(run[key] for run in runs), 1)
             for key, _ in SUMS}
    total.update(
        hosts_emptied=sum(run['hosts_emptied'] for run in runs),
        drain_minutes_mean=mean, drain_minutes_max=longest,
        worst_overload_percent=max(run['worst_overload_percent']
                                   for run in runs))
    return total


#: (key, title) of a table's columns after the row's name.
COLUMNS = (('drain_minutes_mean', 'drain min mean'),
           ('drain_minutes_max', 'drain min max')) + SUMS[1:] + (
    ('worst_overload_percent', 'worst host %'),)


def _ratio(ours, theirs) -> str:
    if ours is None or theirs is None:
        return '-'
    if theirs == 0:
        return '=' if ours == 0 else 'inf'
    return f'{ours / theirs:.2f}'


def table(runs: list, name: str) -> str:
    """One schedule's rows summed over traces and seeds, and our ratios
    to each Watcher row."""
    sums = {row: totals([r for r in runs if r['schedule'] == name
                         and r['row'] == row]) for row in ROWS}
    lines = [[row, f"{sums[row]['hosts_emptied']}/"
              f"{sums[row]['hosts_drained']:g}"]
             + [sums[row][key] for key, _ in COLUMNS] for row in ROWS]
    lines += [[f'ours / {row}', '']
              + [_ratio(sums[OURS][key], sums[row][key])
                 for key, _ in COLUMNS] for row in ROWS[1:]]
    return tabulate.tabulate(
        lines, ['row', 'hosts emptied'] + [t for _, t in COLUMNS],
        tablefmt='github', missingval='-')


def bar(runs: list) -> str:
    """The issue's bar for the rolling maintenance, per trace (summed over
    seeds): ours leaves no instance behind, has no refused move, fewer
    overloaded host-periods than Watcher's host_maintenance and no more
    GB moved."""
    lines = []
    for trace in dict.fromkeys(r['trace'] for r in runs):
        sums = {row: totals([r for r in runs if r['trace'] == trace
                             and r['schedule'] == 'rolling'
                             and r['row'] == row]) for row in (OURS, HM)}
        ours, theirs = sums[OURS], sums[HM]
        met = (ours['left_behind'] == 0 and ours['failed_migrations'] == 0
               and ours['overloaded_host_periods']
               < theirs['overloaded_host_periods']
               and ours['gb_moved'] <= theirs['gb_moved'])
        lines.append([trace, ours['left_behind'], ours['failed_migrations'],
                      f"{ours['overloaded_host_periods']:g} / "
                      f"{theirs['overloaded_host_periods']:g}",
                      f"{ours['gb_moved']:g} / {theirs['gb_moved']:g}",
                      'yes' if met else 'no'])
    return tabulate.tabulate(
        lines, ['trace', 'left behind', 'refused moves',
                'overloaded host-periods, ours / HM',
                'GB moved, ours / HM', 'bar met'], tablefmt='github')


def _traces(args) -> list:
    """(label, simulate arguments without the seed) per trace."""
    common = []
    for path in args.config_file:
        common += ['--config-file', path]
    found = [(os.path.basename(path), ['--trace', path] + common)
             for path in args.trace]
    if args.synthetic_vms:
        found.append((f'synthetic ({args.synthetic_vms} VMs)',
                      ['--vms', str(args.synthetic_vms)] + common))
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trace', action='append', default=[],
                        help='A PlanetLab-format trace file (repeat).')
    parser.add_argument('--synthetic-vms', type=int, default=1052,
                        help='VMs of the generated day, one per seed '
                             '(0: none).')
    parser.add_argument('--seeds', default='1,2,3',
                        help='Comma-separated seeds (flavors, placement, '
                             'the generated day).')
    parser.add_argument('--drain-at', type=float, default=12 * 3600.0,
                        help='Seconds into the day when the one host '
                             'enters maintenance.')
    parser.add_argument('--rolling-start', type=float, default=3600.0,
                        help='Seconds into the day when the rolling '
                             'maintenance starts.')
    parser.add_argument('--work-time', type=float, default=1800.0,
                        help='Seconds a host stays in maintenance once '
                             'empty (rolling).')
    parser.add_argument('--deadline', type=float, default=3600.0,
                        help='Seconds after entering when a host\'s work '
                             'starts even if it is not empty.')
    parser.add_argument('--config-file', action='append', default=[],
                        help='[drs] options of our planner.')
    parser.add_argument('--jobs', type=int, default=2,
                        help='Runs in parallel (each is one process).')
    parser.add_argument('--output-dir', default='bench-output/maintenance')
    args = parser.parse_args(argv)
    if not _traces(args):
        parser.error('no trace: give --trace or --synthetic-vms')
    seeds = [int(s) for s in args.seeds.split(',')]
    tasks = [(label, tuple(simulate + schedule_argv(name, args)
                           + ['--seed', str(seed)]), seed, name, row)
             for label, simulate in _traces(args) for seed in seeds
             for name in SCHEDULES for row in ROWS]
    print(f'{len(tasks)} runs, {args.jobs} at a time, on a machine with '
          f'{os.cpu_count()} cores', flush=True)
    runs = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for run in pool.map(one, *zip(*tasks, strict=True)):
            print(f"{run['trace']} seed {run['seed']}, {run['schedule']}, "
                  f"{run['row']}: {run['overloaded_host_periods']} "
                  f"overloaded host-periods, {run['gb_moved']} GB, "
                  f"{run['left_behind']} left behind", flush=True)
            runs.append(run)
    for name in SCHEDULES:
        print(f'\n{name}: sums over {len(_traces(args))} traces and seeds '
              f'{args.seeds}; drain times in minutes, from entering '
              f'maintenance to empty\n')
        print(table(runs, name))
    print('\nThe bar, rolling maintenance (sums over the seeds):\n')
    print(bar(runs))
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, 'maintenance.json')
    with open(path, 'w') as stream:
        json.dump({'parameters': {key: value for key, value
                                  in vars(args).items()},
                   'runs': runs}, stream, indent=1)
    print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
