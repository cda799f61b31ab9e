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
options of ``--config-file``, defaults without: balancing and drains),
ours with drains only (our balancing off), Watcher's ``host_maintenance``
(one audit per host entering maintenance, its plan run as Watcher's
applier paces it; ``simulate/watcher_maintenance.py``), and the same with
Watcher's ``workload_balance`` every period beside it (60 s, threshold at
our ``cpu_threshold``: its best single setting on PlanetLab,
doc/benchmarks-maintenance.md), as an operator who balances with Watcher
runs both.
Every row's migrations wait in Nova's queue per source and share the
hosts' links (``simulate/links.py``).  Needs python-watcher: run it with
``tox -e bench-maintenance``.

Prints, per schedule, the sums over traces and seeds with our ratios to
each Watcher row, then the issue's bar per trace, as Markdown; writes every
run to ``maintenance.json`` under ``--output-dir``.
"""

import argparse
import concurrent.futures
import functools
import json
import os
import platform
import sys
import time

import tabulate

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import maintenance
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_maintenance

OURS = 'balanced'
DRAINS = 'balanced, drains only'
HM = 'Watcher host_maintenance'
HM_WB = 'Watcher host_maintenance + WB 60 s'
ROWS = (OURS, DRAINS, HM, HM_WB)
SCHEDULES = ('drain one host', 'rolling')
#: Nova's refusals for want of room: its filters' and its scheduler's.
CAPACITY = ('CoreFilter', 'RamFilter', 'no valid host')

#: (key, title) of the summed columns, in table order.
SUMS = (
    ('hosts_drained', 'hosts drained'),
    ('drain_migrations', 'drain migrations'),
    ('migrations', 'migrations'),
    ('drain_gb', 'drain GB'),
    ('gb_moved', 'GB moved'),
    ('overloaded_while_draining', 'overloaded host-periods while draining'),
    ('overloaded_host_periods', 'overloaded host-periods'),
    ('unserved_core_minutes', 'unserved core-min'),
    ('left_behind', 'left behind'),
    ('failed_migrations', 'refused moves'),
    ('refused_for_capacity', 'refused for capacity'),
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
    if row == DRAINS:
        return strategies.PlannerStrategy(config, OURS, (model.DRAIN,), row)
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
                refused_for_capacity=sum(card.failed[r] for r in CAPACITY),
                **maintenance.summary(result.drains, card.overloaded_series,
                                      setup.settings.interval,
                                      setup.spec.bandwidth_mbps))


def totals(runs: list) -> dict:
    """Sums over ``runs``, the drain times' mean and max and the link
    limit's mean (minutes), and the worst host."""
    mean, longest = maintenance.drain_minutes(
        [s for run in runs for s in run['drain_seconds']])
    link, _ = maintenance.drain_minutes(
        [s for run in runs for s in run['link_seconds']])
    total = {key: round(sum(run[key] for run in runs), 1)
             for key, _ in SUMS}
    total.update(
        hosts_emptied=sum(run['hosts_emptied'] for run in runs),
        drain_minutes_mean=mean, drain_minutes_max=longest,
        link_minutes_mean=link,
        worst_overload_percent=max(run['worst_overload_percent']
                                   for run in runs))
    return total


#: (key, title) of a table's columns after the row's name.
COLUMNS = (('drain_minutes_mean', 'drain min mean'),
           ('drain_minutes_max', 'drain min max'),
           ('link_minutes_mean', 'link-limit min mean')) + SUMS[1:] + (
    ('worst_overload_percent', 'worst host %'),)


def _ratio(ours, theirs) -> str:
    if ours is None or theirs is None:
        return '-'
    if theirs == 0:
        return '=' if ours == 0 else 'inf'
    return f'{ours / theirs:.2f}'


#: The rows set against each other: ours against each Watcher row, and
#: drains against drains.
RATIOS = ((OURS, HM), (OURS, HM_WB), (DRAINS, HM))


def table(runs: list, name: str) -> str:
    """One schedule's rows summed over traces and seeds, and the ratios
    of :data:`RATIOS`."""
    sums = {row: totals([r for r in runs if r['schedule'] == name
                         and r['row'] == row]) for row in ROWS}
    lines = [[row, f"{sums[row]['hosts_emptied']}/"
              f"{sums[row]['hosts_drained']:g}"]
             + [sums[row][key] for key, _ in COLUMNS] for row in ROWS]
    lines += [[f'{ours} / {theirs}', '']
              + [_ratio(sums[ours][key], sums[theirs][key])
                 for key, _ in COLUMNS] for ours, theirs in RATIOS]
    return tabulate.tabulate(
        lines, ['row', 'hosts emptied'] + [t for _, t in COLUMNS],
        tablefmt='github', missingval='-')


#: The bar's checks: (letter, what our rows must do).
CHECKS = (
    ('t', 'mean drain time no longer than host_maintenance\'s'),
    ('l', 'mean drain time within 1.5 times the link limit'),
    ('o', 'ours: fewer overloaded host-periods than host_maintenance + '
          'WB 60 s'),
    ('g', 'ours: GB moved no more than host_maintenance + WB 60 s; drains '
          'only: no more than host_maintenance alone'),
    ('b', 'no instance left behind'),
    ('c', 'no move refused for capacity'),
)
#: How far above the link limit a mean drain time may be.
LINK_FACTOR = 1.5


def _no_longer(ours, theirs) -> bool:
    """A mean drain time no longer than ``theirs`` (None: never
    emptied a host)."""
    return ours is not None and (theirs is None or ours <= theirs)


def _pair(ours, theirs) -> str:
    return ' / '.join('-' if v is None else f'{v:g}' for v in (ours, theirs))


def failed(row: str, sums: dict) -> str:
    """The letters of the checks our ``row`` fails ('' when it meets
    the bar), on the sums of one trace."""
    ours = sums[row]
    rival = sums[HM_WB] if row == OURS else sums[HM]
    link = ours['link_minutes_mean']
    passed = {
        't': _no_longer(ours['drain_minutes_mean'],
                        sums[HM]['drain_minutes_mean']),
        'l': _no_longer(ours['drain_minutes_mean'],
                        None if link is None else LINK_FACTOR * link),
        'o': (row != OURS or ours['overloaded_host_periods']
              < sums[HM_WB]['overloaded_host_periods']),
        'g': ours['gb_moved'] <= rival['gb_moved'],
        'b': ours['left_behind'] == 0,
        'c': ours['refused_for_capacity'] == 0,
    }
    return ''.join(letter for letter, _ in CHECKS if not passed[letter])


def bar(runs: list) -> str:
    """The issue's bar for the rolling maintenance, per trace and our row
    (summed over seeds), each check with its figures."""
    lines = []
    for trace in dict.fromkeys(r['trace'] for r in runs):
        sums = {row: totals([r for r in runs if r['trace'] == trace
                             and r['schedule'] == 'rolling'
                             and r['row'] == row]) for row in ROWS}
        hm, hm_wb = sums[HM], sums[HM_WB]
        for row in (OURS, DRAINS):
            ours = sums[row]
            rival = hm_wb if row == OURS else hm
            letters = failed(row, sums)
            lines.append([
                trace, row,
                _pair(ours['drain_minutes_mean'], hm['drain_minutes_mean']),
                _pair(ours['drain_minutes_mean'], ours['link_minutes_mean']),
                _pair(ours['overloaded_host_periods'],
                      hm_wb['overloaded_host_periods']),
                _pair(ours['gb_moved'], rival['gb_moved']),
                f"{ours['left_behind']:g}",
                f"{ours['refused_for_capacity']:g}",
                'yes' if not letters else f'no ({letters})'])
    return tabulate.tabulate(
        lines, ['trace', 'row', 't: drain min, row / HM',
                'l: drain min / link limit',
                'o: overloaded host-periods, row / HM + WB',
                'g: GB moved, row / HM + WB (drains only: / HM)',
                'b: left behind', 'c: refused for capacity', 'bar met'],
        tablefmt='github')


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
    parser.add_argument('--schedules', default=','.join(SCHEDULES),
                        help='Comma-separated schedules to run, of: '
                             f'{", ".join(SCHEDULES)}.')
    parser.add_argument('--config-file', action='append', default=[],
                        help='[drs] options of our planner (and [DEFAULT] '
                             'max_concurrent_live_migrations of every '
                             'row).')
    parser.add_argument('--jobs', type=int, default=2,
                        help='Runs in parallel (each is one process).')
    parser.add_argument('--output-dir', default='bench-output/maintenance')
    args = parser.parse_args(argv)
    if not _traces(args):
        parser.error('no trace: give --trace or --synthetic-vms')
    seeds = [int(s) for s in args.seeds.split(',')]
    schedules = [name.strip() for name in args.schedules.split(',')]
    if not set(schedules) <= set(SCHEDULES):
        parser.error(f'--schedules: choose from {", ".join(SCHEDULES)}')
    tasks = [(label, tuple(simulate + schedule_argv(name, args)
                           + ['--seed', str(seed)]), seed, name, row)
             for label, simulate in _traces(args) for seed in seeds
             for name in schedules for row in ROWS]
    print(f'{len(tasks)} runs, {args.jobs} at a time, on {platform.node()}'
          f' ({os.cpu_count()} cores, Python {platform.python_version()})',
          flush=True)
    started = time.monotonic()
    runs = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for run in pool.map(one, *zip(*tasks, strict=True)):
            print(f"{run['trace']} seed {run['seed']}, {run['schedule']}, "
                  f"{run['row']}: {run['overloaded_host_periods']} "
                  f"overloaded host-periods, {run['gb_moved']} GB, "
                  f"{run['left_behind']} left behind", flush=True)
            runs.append(run)
    print(f'{len(tasks)} runs in {time.monotonic() - started:.0f} s')
    for name in schedules:
        print(f'\n{name}: sums over {len(_traces(args))} traces and seeds '
              f'{args.seeds}; drain times in minutes, from entering '
              f'maintenance to empty; the link limit: the RAM moved off '
              f'the host over one link at full bandwidth\n')
        print(table(runs, name))
    if 'rolling' in schedules:
        print('\nThe bar, rolling maintenance (sums over the seeds): '
              + '; '.join(f'{letter}: {what}' for letter, what in CHECKS)
              + '\n')
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
