#!/usr/bin/env python3
"""Power benchmark: energy against overload, ours against Watcher's.

Each trace (``--trace`` files, and a generated day with a clear day/night
shape unless ``--synthetic-vms 0``) and each seed is replayed on a cluster
sized for the trace's busiest step (``--peak-load``), with host power
states and a linear power model (``simulate/power.py``), under four rows:

- ``none``: Nova's placement, never rebalanced, every host on;
- ``balanced``: our planner, every host on;
- ``balanced+power``: the same with power management ``automatic``
  (``planning.power.plan`` after each balancing plan);
- Watcher's ``vm_workload_consolidation`` (python-watcher 17.0.0, unchanged,
  ``simulate/watcher_consolidation.py``) as a continuous audit every
  ``--audit-interval`` seconds; the hosts it disables count as powered off
  once empty, and a host it enables again boots first.

Each trace and seed also gets its hindsight bound
(``benchlib/power_bound.py``): the least energy that the hosts needed
period by period could draw, powered a boot time ahead.  Prints per trace
the rows summed over the seeds and each seed's (with the share of the
bound's saving each row captured, and the minutes each standby took from
the decision to the host empty), then the bar per trace and seed: ours
captures enough of the bound's saving (75 % on a generated day, 60 % on a
trace file sized at 50 % or less; no share asked at a larger sizing), adds
no more than a tenth to ``balanced``'s overloaded host-periods (10 where it
has under 100) and unserved demand, and is never short of a host.
``--rows`` runs only the rows it names (``balanced`` and ours among them),
to save the time of the others.  Writes every run to ``power.json`` under
``--output-dir``.  Needs python-watcher:
``tox -e bench-power``.
"""

import argparse
import concurrent.futures
import functools
import json
import os
import platform
import sys

import tabulate
from benchlib import power_bound

from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import maintenance
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import watcher_consolidation

NONE, BALANCED = 'none', 'balanced'
OURS = strategies.POWER_MANAGED
VMC = 'Watcher vm_workload_consolidation'
ROWS = (NONE, BALANCED, OURS, VMC)

#: (key, title, how seeds add up: sum or max) of the table's columns.
COLUMNS = (
    ('energy_kwh', 'energy kWh', sum),
    ('host_hours_on', 'host-hours on', sum),
    ('overloaded_host_periods', 'overloaded host-periods', sum),
    ('worst_overload_percent', 'worst host %', max),
    ('unserved_core_minutes', 'unserved core-min', sum),
    ('migrations', 'migrations', sum),
    ('gb_moved', 'GB moved', sum),
    ('ping_pongs', 'ping-pongs', sum),
    ('short_periods', 'periods short, a host off or booting', sum),
    ('failed_migrations', 'refused moves', sum),
    ('standbys', 'standbys', sum),
    ('wakes', 'wakes', sum),
)

#: The bar's checks: (letter, what ours must do).
CHECKS = (
    ('c', "the bound's saving captured, at least the trace's share"),
    ('o', "overloaded host-periods no more than balanced's + 10 % "
          "(+ 10 under 100)"),
    ('u', "unserved core-minutes no more than balanced's + 10 %"),
    ('z', 'no period short of a host'),
)
#: The share of the bound's saving ours must capture: on a generated day,
#: and on a trace file sized at this peak load or less.
CAPTURE_GENERATED = 75.0
CAPTURE_TRACE, CAPTURE_TRACE_PEAK_LOAD = 60.0, 50.0


@functools.cache
def prepared(argv: tuple) -> cli.Setup:
    """A trace, cluster and power model, built once per worker process."""
    return cli.prepare(cli.parser().parse_args(list(argv)))


def _strategy(row: str, setup: cli.Setup, seed: int, audit_interval: float):
    if row == VMC:
        return watcher_consolidation.Consolidation(
            audit_interval=audit_interval, label=VMC)
    return strategies.build(row, setup.config, seed, {}, setup.power_config)


@functools.cache
def bound_of(argv: tuple) -> dict:
    return power_bound.bound(prepared(argv))


def one(trace: str, argv: tuple, seed: int, row: str,
        audit_interval: float, capture_bar: float | None) -> dict:
    """One row on one trace and seed: its figures, with the trace's
    bound."""
    setup = prepared(argv)
    strategy = _strategy(row, setup, seed, audit_interval)
    result = engine.run(setup.trace, setup.vms, setup.spec, strategy,
                        setup.settings, power=setup.power)
    run = dict(trace=trace, seed=seed, row=row, hosts=setup.hosts,
               capture_bar=capture_bar, **bound_of(argv),
               **result.card.summary(), **result.power)
    if row == VMC:
        run.update(audits=strategy.audits, audits_skipped=strategy.skipped,
                   audits_failed=strategy.failed,
                   audit_failure=strategy.failure)
    return run


#: Columns of the standbys' drains, pooled over seeds: (key, title).
DRAIN_COLUMNS = (
    ('standby_drain_minutes_mean', 'standby to empty, min mean'),
    ('standby_drain_minutes_max', 'standby to empty, min max'),
)


#: The bound's figures of a run, added up over seeds like energy.
BOUND_KEYS = ('bound_kwh', 'bound_all_on_kwh', 'bound_host_hours_on')


def totals(runs: list) -> dict:
    """The runs' columns added up over seeds (the worst host: the max),
    the bound's figures summed alike, and the standbys' drain minutes
    pooled."""
    total = {key: round(add(run[key] for run in runs), 2)
             for key, _, add in COLUMNS}
    total.update({key: round(sum(run[key] for run in runs), 2)
                  for key in BOUND_KEYS})
    mean, longest = maintenance.drain_minutes(
        [s for run in runs for s in run['standby_drain_seconds']])
    total.update(standby_drain_minutes_mean=mean,
                 standby_drain_minutes_max=longest)
    return total


def _saved(row: dict, baseline: dict) -> str:
    if not baseline['energy_kwh']:
        return '-'
    saved = 100.0 * (baseline['energy_kwh'] - row['energy_kwh'])
    return f"{saved / baseline['energy_kwh']:.1f}"


def _captured(row: dict, balanced: dict) -> float | None:
    return power_bound.captured(row['energy_kwh'], balanced['energy_kwh'],
                                balanced['bound_kwh'])


def table(runs: list) -> str:
    """Rows summed over ``runs``' seeds, with the energy each saves
    against ``balanced`` and the share of the bound's saving it captured;
    then the bound, and the bound with every host on beside ``balanced``
    (they differ by what migrations and hosts over 100 % add)."""
    shown = [row for row in ROWS if any(r['row'] == row for r in runs)]
    sums = {row: totals([r for r in runs if r['row'] == row])
            for row in shown}
    balanced = sums[BALANCED]
    lines = [[row, sums[row]['energy_kwh'], _saved(sums[row], balanced),
              _captured(sums[row], balanced)]
             + [sums[row][key] for key, _, _ in COLUMNS[1:]]
             + [sums[row][key] for key, _ in DRAIN_COLUMNS]
             for row in shown]
    lines.append(['hindsight bound', balanced['bound_kwh'],
                  _saved({'energy_kwh': balanced['bound_kwh']}, balanced),
                  100.0 if _captured({'energy_kwh': balanced['bound_kwh']},
                                     balanced) is not None else None,
                  balanced['bound_host_hours_on']])
    text = tabulate.tabulate(
        lines, ['row', 'energy kWh', 'saved vs balanced %',
                "bound's saving captured %"]
        + [title for _, title, _ in COLUMNS[1:]]
        + [title for _, title in DRAIN_COLUMNS], tablefmt='github',
        missingval='-')
    return (f"{text}\n\nthe bound with every host on: "
            f"{balanced['bound_all_on_kwh']:g} kWh, balanced "
            f"{balanced['energy_kwh']:g} kWh")


def standby_drains(runs: list) -> str:
    """Each standby's minutes from the decision to the host empty, per
    row that had one."""
    return '\n'.join(
        f"- {run['row']}: " + ', '.join(
            f'{seconds / 60:.1f}' for seconds in run['standby_drain_seconds'])
        for run in runs if run['standby_drain_seconds'])


def allowed_overload(balanced: float) -> float:
    return balanced + 10 if balanced < 100 else balanced * 1.1


def failed(ours: dict, balanced: dict, capture_bar: float | None) -> str:
    """The letters of the checks ours fails ('' when it meets the bar)."""
    share = _captured(ours, balanced)
    passed = {
        'c': capture_bar is None or share is None or share >= capture_bar,
        'o': (ours['overloaded_host_periods']
              <= allowed_overload(balanced['overloaded_host_periods'])),
        'u': (ours['unserved_core_minutes']
              <= balanced['unserved_core_minutes'] * 1.1),
        'z': not ours['short_periods'],
    }
    return ''.join(letter for letter, _ in CHECKS if not passed[letter])


def bar(runs: list) -> tuple:
    """``(table, met)``: the bar per trace (sums over the seeds) and per
    trace and seed, each check with both figures, and migrations beside
    ``balanced``'s."""
    lines, met = [], True
    for trace in dict.fromkeys(r['trace'] for r in runs):
        seeds = sorted({r['seed'] for r in runs if r['trace'] == trace})
        for seed in [None] + seeds:
            chosen = [r for r in runs if r['trace'] == trace
                      and (seed is None or r['seed'] == seed)]
            sums = {row: totals([r for r in chosen if r['row'] == row])
                    for row in (BALANCED, OURS)}
            ours, balanced = sums[OURS], sums[BALANCED]
            wanted = chosen[0]['capture_bar']
            letters = failed(ours, balanced, wanted)
            if seed is None:
                met = met and not letters
            share = _captured(ours, balanced)
            lines.append([
                trace, 'sum' if seed is None else seed,
                f"{'-' if share is None else f'{share:g}'} "
                f"({'-' if wanted is None else f'{wanted:g}'})",
                f"{ours['overloaded_host_periods']:g} / "
                f"{balanced['overloaded_host_periods']:g}",
                f"{ours['unserved_core_minutes']:g} / "
                f"{balanced['unserved_core_minutes']:g}",
                f"{ours['short_periods']:g}",
                f"{ours['migrations']:g} / {balanced['migrations']:g}",
                'yes' if not letters else f'no ({letters})'])
    return tabulate.tabulate(
        lines, ['trace', 'seed', 'c: captured % (bar)',
                'o: overloaded host-periods ours / balanced',
                'u: unserved core-min ours / balanced',
                'z: periods short', 'migrations ours / balanced',
                'bar met'], tablefmt='github'), met


def _capture_bar(generated: bool, peak_load: float) -> float | None:
    """The share of the bound's saving a trace asks of ours."""
    if generated:
        return CAPTURE_GENERATED
    if peak_load <= CAPTURE_TRACE_PEAK_LOAD:
        return CAPTURE_TRACE
    return None


def traces(args) -> list:
    """(label, simulate arguments without the seed, capture bar) per
    trace."""
    common = ['--peak-load', str(args.peak_load), '--power',
              '--idle-watts', str(args.idle_watts),
              '--peak-watts', str(args.peak_watts),
              '--standby-watts', str(args.standby_watts)]
    if args.boot_seconds is not None:
        common += ['--boot-seconds', str(args.boot_seconds)]
    for path in args.config_file:
        common += ['--config-file', path]
    found = [(os.path.basename(path), ['--trace', path] + common,
              _capture_bar(False, args.peak_load))
             for path in args.trace]
    if args.synthetic_vms:
        days = f', {args.days} days' if args.days > 1 else ''
        found.append((f'generated day-night ({args.synthetic_vms} VMs{days})',
                      ['--vms', str(args.synthetic_vms),
                       '--shape', 'day-night', '--days', str(args.days)]
                      + common,
                      _capture_bar(True, args.peak_load)))
    return found


def trace_options(parser: argparse.ArgumentParser) -> None:
    """The options choosing the traces, seeds, sizing and power model
    (:func:`traces`), which ``tools/power_frontier.py`` shares."""
    parser.add_argument('--trace', action='append', default=[],
                        help='A PlanetLab-format trace file (repeat).')
    parser.add_argument('--synthetic-vms', type=int, default=1000,
                        help='VMs of the generated day-night day, one per '
                             'seed (0: none).')
    parser.add_argument('--days', type=int, default=1,
                        help='Days of the generated trace: the first '
                             'learns the day\'s shape, the next ones use it '
                             '(default 1).')
    parser.add_argument('--seeds', default='1,2',
                        help='Comma-separated seeds (flavors, placement, '
                             'the generated day).')
    parser.add_argument('--peak-load', type=float, default=70.0,
                        help='Host CPU percent at the trace\'s busiest step '
                             '(the cluster is sized for it).')
    parser.add_argument('--idle-watts', type=float, default=100.0)
    parser.add_argument('--peak-watts', type=float, default=350.0)
    parser.add_argument('--standby-watts', type=float, default=10.0)
    parser.add_argument('--boot-seconds', type=float,
                        help='Power-on to nova-compute up, for every row '
                             '(default: [drs] power_boot_seconds).')
    parser.add_argument('--config-file', action='append', default=[],
                        help='[drs] options of our planner and power '
                             'management.')
    parser.add_argument('--jobs', type=int, default=2,
                        help='Runs in parallel (each is one process).')


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    trace_options(parser)
    parser.add_argument('--audit-interval', type=float,
                        default=watcher_consolidation.AUDIT_INTERVAL,
                        help='Seconds between Watcher\'s audits.')
    parser.add_argument('--rows', default=','.join(ROWS),
                        help='Comma-separated rows to run (balanced and '
                             'ours are needed for the bar).')
    parser.add_argument('--output-dir', default='bench-output/power')
    args = parser.parse_args(argv)
    rows = args.rows.split(',')
    if set(rows) - set(ROWS) or not {BALANCED, OURS} <= set(rows):
        parser.error(f'--rows: a choice of {", ".join(ROWS)}, with '
                     f'{BALANCED} and {OURS}')
    if not traces(args):
        parser.error('no trace: give --trace or --synthetic-vms')
    seeds = [int(s) for s in args.seeds.split(',')]
    tasks = [(label, tuple(simulate + ['--seed', str(seed)]), seed, row,
              args.audit_interval, wanted)
             for label, simulate, wanted in traces(args) for seed in seeds
             for row in ROWS if row in rows]
    print(f'{len(tasks)} runs, {args.jobs} at a time, on {platform.node()}'
          f' ({os.cpu_count()} cores, Python {platform.python_version()})',
          flush=True)
    runs = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for run in pool.map(one, *zip(*tasks, strict=True)):
            failures = (f", {run['audits_failed']} of {run['audits']} "
                        f"audits failed inside Watcher (first: "
                        f"{run['audit_failure']})"
                        if run.get('audits_failed') else '')
            print(f"{run['trace']} seed {run['seed']}, {run['row']}: "
                  f"{run['energy_kwh']} kWh, {run['overloaded_host_periods']}"
                  f" overloaded host-periods, {run['migrations']} "
                  f"migrations{failures}", flush=True)
            runs.append(run)
    for trace in dict.fromkeys(r['trace'] for r in runs):
        chosen = [r for r in runs if r['trace'] == trace]
        hosts = ', '.join(f"{r['hosts']} (seed {r['seed']})"
                          for r in chosen if r['row'] == BALANCED)
        print(f"\n{trace}: hosts {hosts}; sums over seeds {args.seeds}\n")
        print(table(chosen))
        for seed in seeds:
            seeded = [r for r in chosen if r['seed'] == seed]
            print(f'\n{trace}, seed {seed}\n')
            print(table(seeded))
            drains = standby_drains(seeded)
            if drains:
                print(f'\nminutes from each standby decision to the host '
                      f'empty:\n{drains}')
    text, met = bar(runs)
    print('\nThe bar: ' + '; '.join(f'{letter}: {what}'
                                    for letter, what in CHECKS) + '\n')
    print(text)
    print(f"\nbar met on every trace: {'yes' if met else 'no'}")
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, 'power.json')
    with open(path, 'w') as stream:
        json.dump({'parameters': vars(args), 'runs': runs, 'met': met},
                  stream, indent=1)
    print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
