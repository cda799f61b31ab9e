#!/usr/bin/env python3
"""Rebalancing benchmark: quality side by side, then planning-time scaling.

1. Quality: one trace (``--trace FILE``, or a seeded synthetic ``--shape``,
   either with ``--bursts``), replayed for every seed of ``--seeds`` under
   ``none``, our policies and Watcher's two strategies: each at its default
   averaging periods and at the trace's granularity (60 s), and with
   ``--grid full`` over a small grid of Watcher's own parameters.  The
   table gives each row's mean ± standard deviation over the seeds; the
   verdict checks ``balanced`` against Watcher's best single setting on
   the trace, on sums over the seeds (:func:`single_setting_checks`).
   Needs python-watcher: run it with ``tox -e bench-rebalance``.
2. Scale: our policies' input-building and decision time per period at
   100, 300 and 1000 hosts with 20 VMs per host (20000 VMs at 1000 hosts),
   on hosts small enough for those VMs to load them to about 60 %.

Every table is printed as Markdown and written under ``--output-dir``.
"""

import argparse
import collections
import concurrent.futures
import dataclasses
import functools
import json
import os
import statistics
import sys

from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces
from nova_drs_scheduler.simulate import watcher_adapter

#: 20 VMs of the default flavor mix use about 6 cores: 10-CPU hosts run
#: them at about 60 %.
SCALE_HOST_VCPUS = 10
SCALE_HOST_RAM_MB = 128 * 1024

WB, WS = watcher_adapter.WATCHER_STRATEGIES
#: Seconds per sample of the traces (the simulator's period).
GRANULARITY = 60
#: Watcher's own grid: workload_balance thresholds (percent) and
#: workload_stabilization CPU thresholds (normalised std-dev) and retry
#: counts.  Defaults are in it; 80 is our ``cpu_threshold``.
WB_THRESHOLDS = (70.0, 80.0)
WS_THRESHOLDS = (0.05, 0.1)
WS_RETRIES = (1, 5)


@dataclasses.dataclass(frozen=True)
class Variant:
    """One Watcher row: a strategy and the parameters it runs with."""

    label: str
    kind: str
    parameters: tuple
    default: bool = False


def _wb(period: int, threshold: float, default: bool = False) -> Variant:
    return Variant(f'WB period {period} s, threshold {threshold:g}'
                   + (' (default)' if default else ''), WB,
                   (('period', period), ('granularity', min(period, 300)),
                    ('threshold', threshold)), default)


def _ws(periods: tuple, threshold: float, retries: int,
        default: bool = False) -> Variant:
    instance, node = periods
    when = f'{instance} s' if instance == node else f'{instance}/{node} s'
    return Variant(f'WS period {when}, threshold {threshold:g}, retry '
                   f'{retries}' + (' (default)' if default else ''), WS,
                   (('periods', {'instance': instance, 'compute_node': node,
                                 'node': 0}),
                    ('granularity', min(instance, 300)),
                    ('thresholds', {'instance_cpu_usage': threshold,
                                    'instance_ram_usage': 0.1}),
                    ('retry_count', retries)), default)


GRIDS = ('defaults', 'wb', 'wb+70', 'wb60', 'wb60-70', 'wb300', 'wb300-70',
         'ws', 'ws60-05', 'full')


def watcher_variants(grid: str, threshold: float) -> list:
    """Watcher's rows.  ``defaults``: each strategy at its default periods
    and at 60 s (WB's threshold at ours, ``threshold``: at its own 25 % it
    plans nothing on a 60 % cluster).  ``wb``: workload_balance only, at
    both periods (on PlanetLab workload_stabilization, and WB at other
    thresholds, are far behind it; see doc/benchmarks.md); ``wb+70``:
    those and WB at 60 s, threshold 70 (the best row of most trace-seeds
    where WB at 60 s, threshold 80 is not).  ``wb60``,
    ``wb60-70``, ``wb300``, ``wb300-70``: one WB row alone, at 60 s at
    ``threshold`` or at 70, or at its default 300 s at ``threshold`` or
    at 70; ``ws``: workload_stabilization's rows alone (its defaults, and
    its grid at 60 s); ``ws60-05``: its one row that was ever the best
    (60 s, CPU threshold 0.05, retry count 1), to run before the others
    when time is short.  These single-strategy
    grids let a run add rows to earlier ones (``--reuse``) without
    repeating them.  ``full``: all of them, WB's other thresholds at both
    periods and workload_stabilization's grid at 60 s."""
    wb300, wb60 = _wb(300, threshold, True), _wb(GRANULARITY, threshold)
    ws = [_ws((720, 600), 0.1, 1, True),
          _ws((GRANULARITY, GRANULARITY), 0.1, 1)]
    ws_grid = [_ws((GRANULARITY, GRANULARITY), t, r)
               for t in WS_THRESHOLDS for r in WS_RETRIES
               if (t, r) != (0.1, 1)]
    others = [_wb(GRANULARITY, t) for t in WB_THRESHOLDS if t != threshold]
    others300 = [_wb(300, t) for t in WB_THRESHOLDS if t != threshold]
    grids = {
        'defaults': [wb300, wb60] + ws,
        'wb': [wb300, wb60],
        'wb+70': [wb300, wb60, _wb(GRANULARITY, 70.0)],
        'wb60': [wb60],
        'wb60-70': [_wb(GRANULARITY, 70.0)],
        'wb300': [wb300],
        'wb300-70': [_wb(300, 70.0)],
        'ws': ws + ws_grid,
        'ws60-05': [_ws((GRANULARITY, GRANULARITY), 0.05, 1)],
        'full': [wb300, wb60] + ws + others + others300 + ws_grid,
    }
    return grids[grid]


@functools.cache
def _setup(argv: tuple) -> cli.Setup:
    """A run's trace and cluster, built once per worker process."""
    return cli.prepare(cli.parser().parse_args(list(argv)))


def _one(argv: tuple, seed: int, row) -> dict:
    """One strategy on one seed: its summary row.  A Watcher row that
    fails inside Watcher (workload_stabilization with a retry count above
    1 does, see doc/benchmarks.md) gives a row holding only its ``error``,
    so that the run keeps every other row."""
    setup = _setup(argv)
    if isinstance(row, Variant):
        strategy = watcher_adapter.WatcherStrategy(
            row.kind, dict(row.parameters), seed, row.label)
    else:
        strategy = strategies.build(row, setup.config, seed, {})
    try:
        result = engine.run(setup.trace, setup.vms, setup.spec, strategy,
                            setup.settings)
    except Exception as exc:
        if not isinstance(row, Variant):
            raise
        return dict(strategy=strategy.name, seed=seed, watcher=True,
                    default=row.default,
                    error=f'{type(exc).__name__}: {exc}')
    return dict(strategy=strategy.name, seed=seed, hosts=setup.hosts,
                mean_load=round(result.mean_load, 1),
                watcher=isinstance(row, Variant),
                default=getattr(row, 'default', False),
                **result.card.summary())


MEAN_KEYS = ('overloaded_host_periods', 'drs_caused_overloaded_host_periods',
             'migrations', 'gb_moved', 'instance_minutes_in_migration',
             'ping_pongs', 'worst_overload_percent', 'unserved_core_minutes',
             'relief_checked', 'relief_held_percent', 'failed_migrations',
             'input_ms_mean', 'plan_ms_mean', 'total_ms_p95')


def _spread(values: list) -> tuple:
    """Mean and sample standard deviation (None for a single seed) of the
    known values; ``(None, None)`` when none is (relief held % of a row
    that checks no relief)."""
    known = [v for v in values if v is not None]
    if not known:
        return None, None
    mean = statistics.fmean(known)
    return mean, statistics.stdev(known) if len(known) > 1 else None


def aggregate(runs: list) -> list:
    """One row per strategy, in first-seen order: mean and standard
    deviation of every :data:`MEAN_KEYS` column over the seeds, and the
    per-seed values."""
    order = list(dict.fromkeys(
        r['strategy'] for r in sorted(runs, key=lambda r: r['watcher'])))
    rows = []
    for name in order:
        mine = sorted((r for r in runs if r['strategy'] == name),
                      key=lambda r: r['seed'])
        row = {'strategy': name, 'watcher': mine[0]['watcher'],
               'default': mine[0]['default'],
               'seeds': [r['seed'] for r in mine]}
        for key in MEAN_KEYS:
            values = [r[key] for r in mine]
            row[key] = _spread(values)
            row[f'{key}_per_seed'] = values
        rows.append(row)
    return rows


def verdict(rows: list, name: str = 'balanced') -> dict:
    """Row ``name`` against the best other Watcher row (fewest overloaded
    host-periods on average) and against ``none``.

    Only Watcher rows run on the same seeds as ``name`` compete: a row
    that failed inside Watcher on some seeds would otherwise be averaged
    over the seeds it survived, which may be the easy ones.
    """
    by_name = {r['strategy']: r for r in rows}
    ours, none = by_name.get(name), by_name.get('none')
    if not ours or (none and none['seeds'] != ours['seeds']):
        return {}
    watcher = [r for r in rows if r['watcher'] and r['strategy'] != name
               and r['seeds'] == ours['seeds']]
    if not watcher:
        return {}
    best = min(watcher, key=lambda r: (r['overloaded_host_periods'][0],
                                       r['migrations'][0], r['strategy']))
    mean = {k: (ours[k][0], best[k][0]) for k in MEAN_KEYS}
    #: (letter as in :func:`seed_checks`, check, passed)
    checks = [
        ('o', 'fewer overloaded host-periods than the best Watcher row',
         mean['overloaded_host_periods'][0]
         < mean['overloaded_host_periods'][1]),
        ('m', 'no more migrations than it',
         mean['migrations'][0] <= mean['migrations'][1]),
        ('m', 'no more GB moved than it',
         mean['gb_moved'][0] <= mean['gb_moved'][1]),
        ('p', 'zero ping-pongs on every seed',
         not any(ours['ping_pongs_per_seed'])),
    ]
    if none:
        checks += [
            ('w', 'worst overload no higher than none on every seed',
             all(o <= n for o, n in zip(
                 ours['worst_overload_percent_per_seed'],
                 none['worst_overload_percent_per_seed'], strict=True))),
            ('w', 'overloaded host-periods no more than none on every seed',
             all(o <= n for o, n in zip(
                 ours['overloaded_host_periods_per_seed'],
                 none['overloaded_host_periods_per_seed'], strict=True))),
        ]
    return {'best_watcher': best['strategy'],
            'checks': {text: ok for _, text, ok in checks},
            'failed': ''.join(dict.fromkeys(
                letter for letter, _, ok in checks if not ok))}


#: The row the bursty traces' migrations are held to.
WB60 = _wb(GRANULARITY, 80.0).label
#: At most this share of balanced's overloaded host-periods DRS-caused.
DRS_CAUSED_SHARE = 0.10


def _sum(row: dict, key: str) -> float:
    return sum(row[f'{key}_per_seed'])


def single_setting_checks(rows: list, bursts: bool,
                          name: str = 'balanced') -> dict:
    """The headline verdict: row ``name`` against Watcher's best single
    setting on the trace, on sums over the seeds.

    That setting is the Watcher row with the fewest overloaded
    host-periods summed over the seeds, among the rows run on every seed
    of ``name``.  Letters: ``o`` fewer overloaded host-periods than it,
    ``m`` no more migrations, ``p`` no ping-pong on any seed, ``u`` less
    unserved demand than every such Watcher row, ``w`` worst host (max
    over the seeds) no higher than its, ``d`` DRS-caused overloaded
    host-periods at most :data:`DRS_CAUSED_SHARE` of ours, and with
    ``bursts`` ``b`` no more migrations than :data:`WB60`.  Each check
    keeps both figures; ``{}`` when there is nothing to judge.
    """
    by_name = {r['strategy']: r for r in rows}
    ours = by_name.get(name)
    if not ours:
        return {}
    watcher = [r for r in rows if r['watcher'] and r['strategy'] != name
               and r['seeds'] == ours['seeds']]
    if not watcher:
        return {}
    best = min(watcher, key=lambda r: (_sum(r, 'overloaded_host_periods'),
                                       _sum(r, 'migrations'), r['strategy']))
    least = min(watcher, key=lambda r: (_sum(r, 'unserved_core_minutes'),
                                        r['strategy']))
    overloaded = _sum(ours, 'overloaded_host_periods')
    checks = [
        ('o', 'fewer overloaded host-periods than the best Watcher row',
         overloaded, _sum(best, 'overloaded_host_periods'),
         overloaded < _sum(best, 'overloaded_host_periods')),
        ('m', 'no more migrations than it', _sum(ours, 'migrations'),
         _sum(best, 'migrations'),
         _sum(ours, 'migrations') <= _sum(best, 'migrations')),
        ('p', 'zero ping-pongs on every seed', _sum(ours, 'ping_pongs'), 0,
         not any(ours['ping_pongs_per_seed'])),
        ('u', 'less unserved core-minutes than every Watcher row (the '
              f'least: {least["strategy"]})',
         round(_sum(ours, 'unserved_core_minutes'), 1),
         round(_sum(least, 'unserved_core_minutes'), 1),
         _sum(ours, 'unserved_core_minutes')
         < _sum(least, 'unserved_core_minutes')),
        ('w', 'worst host (max over the seeds) no higher than the best '
              'Watcher row\'s',
         max(ours['worst_overload_percent_per_seed']),
         max(best['worst_overload_percent_per_seed']),
         max(ours['worst_overload_percent_per_seed'])
         <= max(best['worst_overload_percent_per_seed'])),
        ('d', f'DRS-caused overloaded host-periods at most '
              f'{DRS_CAUSED_SHARE:.0%} of its overloaded host-periods',
         _sum(ours, 'drs_caused_overloaded_host_periods'),
         round(DRS_CAUSED_SHARE * overloaded, 1),
         _sum(ours, 'drs_caused_overloaded_host_periods')
         <= DRS_CAUSED_SHARE * overloaded),
    ]
    if bursts:
        wb60 = by_name.get(WB60)
        if wb60 and wb60['seeds'] == ours['seeds']:
            checks.append(('b', f'no more migrations than {WB60}',
                           _sum(ours, 'migrations'),
                           _sum(wb60, 'migrations'),
                           _sum(ours, 'migrations')
                           <= _sum(wb60, 'migrations')))
        else:
            checks.append(('b', f'no more migrations than {WB60} (not run '
                                f'on every seed: no figure)',
                           _sum(ours, 'migrations'), None, False))
    return {'strategy': name, 'against': best['strategy'],
            'seeds': ours['seeds'],
            'checks': [dict(letter=letter, check=text, ours=mine,
                            theirs=theirs, passed=ok)
                       for letter, text, mine, theirs, ok in checks],
            'failed': ''.join(c[0] for c in checks if not c[4])}


def headline_markdown(result: dict) -> str:
    """:func:`single_setting_checks` as a list, each check with both
    figures, and the verdict."""
    if not result:
        return 'No verdict: balanced and a Watcher row run on every seed ' \
               'are needed.'
    seeds = ', '.join(map(str, result['seeds']))
    lines = [f"balanced against Watcher's best single setting on this "
             f"trace, {result['against']} (fewest overloaded host-periods "
             f"summed over seeds {seeds}); sums over the seeds "
             f"(balanced / the other figure):", '']
    for check in result['checks']:
        theirs = '-' if check['theirs'] is None else f"{check['theirs']:g}"
        lines.append(f"- {'yes' if check['passed'] else '**NO**'} "
                     f"({check['letter']}): {check['check']}: "
                     f"{check['ours']:g} / {theirs}")
    lines += ['', 'Verdict: ' + (f"**bar not met** (failed: "
                                 f"{result['failed']})" if result['failed']
                                 else '**bar met**')]
    return '\n'.join(lines)


def _best_run(runs: list) -> dict:
    """The best of some Watcher runs of one seed, by the rule of
    :func:`verdict`: fewest overloaded host-periods, then fewest
    migrations."""
    return min(runs, key=lambda r: (r['overloaded_host_periods'],
                                    r['migrations'], r['strategy']))


def _failed(ours: dict, best: dict, none: dict | None) -> str:
    """The letters of the checks ``ours`` fails against ``best`` and
    ``none`` on one seed (see :func:`seed_checks`)."""
    failed = ''
    if ours['overloaded_host_periods'] >= best['overloaded_host_periods']:
        failed += 'o'
    if (ours['migrations'] > best['migrations']
            or ours['gb_moved'] > best['gb_moved']):
        failed += 'm'
    if ours['ping_pongs']:
        failed += 'p'
    if none and (
            ours['worst_overload_percent'] > none['worst_overload_percent']
            or ours['overloaded_host_periods']
            > none['overloaded_host_periods']):
        failed += 'w'
    return failed


def seed_checks(runs: list) -> list:
    """Per seed, ``balanced`` against the best Watcher row *of that seed*
    and against ``none``: the best row may differ from seed to seed, and
    means over seeds hide the seeds a check fails on.  ``failed`` holds a
    letter per failed check: ``o`` not fewer overloaded host-periods than
    that row, ``m`` more migrations or GB than it, ``p`` a ping-pong,
    ``w`` worst host or overloaded host-periods above ``none``'s."""
    rows = []
    for seed in sorted({r['seed'] for r in runs}):
        mine = [r for r in runs if r['seed'] == seed]
        ours = [r for r in mine if r['strategy'] == 'balanced']
        watcher = [r for r in mine if r['watcher']]
        if not ours or not watcher:
            continue
        ours, best = ours[0], _best_run(watcher)
        none = next((r for r in mine if r['strategy'] == 'none'), None)
        rows.append({'seed': seed, 'none': none, 'balanced': ours,
                     'best_watcher': best,
                     'failed': _failed(ours, best, none)})
    return rows


def bar_checks(runs: list) -> list:
    """How hard the checks are: every row but ``none`` put to them, each
    Watcher row against the other Watcher rows (``balanced`` against all
    of them, as in :func:`seed_checks` and :func:`verdict`).

    The best of several rows per seed is a row no single setting runs, so
    a setting as good as the others on average still fails it on the
    seeds where another was luckier.  One row per strategy, ours first:
    the seeds judged, the count of each failed per-seed check's letter,
    the seeds lost on overload or migrations (``o`` or ``m``), and the
    letters of the checks failed against the best other row on the mean
    (None for a row not run on every seed)."""
    table = {r['strategy']: r for r in aggregate(runs)}
    rows = []
    for name in table:
        if name == 'none':
            continue
        letters = collections.Counter()
        seeds, lost = [], 0
        for seed in sorted({r['seed'] for r in runs}):
            mine = [r for r in runs if r['seed'] == seed]
            ours = [r for r in mine if r['strategy'] == name]
            others = [r for r in mine
                      if r['watcher'] and r['strategy'] != name]
            if not ours or not others:
                continue
            none = next((r for r in mine if r['strategy'] == 'none'), None)
            seeds.append(seed)
            failed = _failed(ours[0], _best_run(others), none)
            letters.update(failed)
            lost += bool({'o', 'm'} & set(failed))
        if not seeds:
            continue
        mean = verdict(list(table.values()), name)
        rows.append({'strategy': name, 'seeds': seeds,
                     'failed': dict(letters), 'lost': lost,
                     'against': mean.get('best_watcher'),
                     'mean_failed': mean.get('failed')})
    return rows


def bar_markdown(rows: list) -> str:
    """:func:`bar_checks` as a table, one column per per-seed check."""
    lines = ['| row | seeds | o | m | p | w | failed checks | seeds lost '
             '(o or m) | '
             'on the mean, against | failed on the mean |',
             '|---|---|---|---|---|---|---|---|---|---|']
    for row in rows:
        failed, mean = row['failed'], row['mean_failed']
        name = row['strategy']
        lines.append(
            f"| {'**balanced**' if name == 'balanced' else name} | "
            f"{len(row['seeds'])} | "
            + ' | '.join(str(failed.get(k, 0)) for k in 'ompw')
            + f" | {sum(failed.values())} | "
            f"{row['lost']} | "
            f"{row['against'] or '-'} | "
            + ('-' if mean is None else f'✗{mean}' if mean else 'pass')
            + ' |')
    return '\n'.join(lines)


#: The name of the row made of each seed's best Watcher run.
BEST_PER_SEED = 'best Watcher row of each seed'


def best_per_seed(checks: list) -> list:
    """``none``, ``balanced`` and each seed's best Watcher run as one row,
    each as mean ± standard deviation over the seeds of ``checks``."""
    runs = [c[k] for c in checks for k in ('none', 'balanced') if c[k]]
    runs += [dict(c['best_watcher'], strategy=BEST_PER_SEED)
             for c in checks]
    return aggregate(runs)


def _counts(run: dict) -> str:
    return (f"{run['overloaded_host_periods']} / {run['migrations']} / "
            f"{run['gb_moved']:g}")


def seed_markdown(checks: list) -> str:
    """One line per seed: the best Watcher row, ``none`` and ``balanced``
    (overloaded host-periods / migrations / GB moved, worst host %), and
    the failed checks."""
    lines = ['| seed | best Watcher row | its overloaded / migrations / '
             'GB, worst % | `none`: overloaded, worst % | `balanced`: '
             'overloaded / migrations / GB, worst %, ping-pongs | failed |',
             '|---|---|---|---|---|---|']
    for c in checks:
        best, ours, none = c['best_watcher'], c['balanced'], c['none']
        lines.append(
            f"| {c['seed']} | {best['strategy']} | {_counts(best)}, "
            f"{best['worst_overload_percent']} | "
            + (f"{none['overloaded_host_periods']}, "
               f"{none['worst_overload_percent']}" if none else '-')
            + f" | {_counts(ours)}, {ours['worst_overload_percent']}, "
            f"{ours['ping_pongs']} | "
            + (f"✗{c['failed']}" if c['failed'] else '-') + ' |')
    total = sum(len(c['failed']) for c in checks)
    lines += ['', f'{total} failed checks over {len(checks)} seeds.']
    return '\n'.join(lines)


def _cell(pair: tuple, digits: int) -> str:
    mean, spread = pair
    if mean is None:
        return '-'
    if spread is None:
        return f'{mean:.{digits}f}'
    return f'{mean:.{digits}f} ± {spread:.{digits}f}'


COLUMNS = (('overloaded_host_periods', 'overloaded host-periods', 0),
           ('drs_caused_overloaded_host_periods', 'DRS-caused', 0),
           ('migrations', 'migrations', 1), ('gb_moved', 'GB moved', 0),
           ('instance_minutes_in_migration', 'instance-min in migration',
            1),
           ('ping_pongs', 'ping-pongs', 1),
           ('worst_overload_percent', 'worst overload %', 1),
           ('unserved_core_minutes', 'unserved core-min', 1),
           ('relief_held_percent', 'relief held %', 1),
           ('input_ms_mean', 'input ms', 2),
           ('plan_ms_mean', 'decision ms', 2),
           ('total_ms_p95', 'input+decision ms p95', 1))


def quality_markdown(rows: list, best: str | None = None) -> str:
    """The rows as mean ± standard deviation over the seeds; ``best``
    (a Watcher row) in bold."""
    lines = ['| strategy | ' + ' | '.join(t for _, t, _ in COLUMNS) + ' |',
             '|---|' + '---|' * len(COLUMNS)]
    for row in rows:
        name = row['strategy']
        if name == best:
            name = f'**best Watcher: {name}**'
        elif name == 'balanced':
            name = '**balanced**'
        lines.append(f'| {name} | ' + ' | '.join(
            _cell(row[k], d) for k, _, d in COLUMNS) + ' |')
    return '\n'.join(lines)


def _scale(host_counts, vms_per_host: int, steps: int, names,
           seed: int, config_files=()) -> list:
    rows = []
    for hosts in host_counts:
        argv = ['--vms', str(hosts * vms_per_host), '--steps', str(steps),
                '--seed', str(seed), '--hosts', str(hosts),
                '--host-vcpus', str(SCALE_HOST_VCPUS),
                '--host-ram-mb', str(SCALE_HOST_RAM_MB)]
        for path in config_files:
            argv += ['--config-file', path]
        setup = cli.prepare(cli.parser().parse_args(argv))
        trace, vms, spec = setup.trace, setup.vms, setup.spec
        config, settings = setup.config, setup.settings
        for name in names:
            result = engine.run(trace, vms, spec,
                                strategies.build(name, config, seed, {}),
                                settings)
            card = result.card
            summary = card.summary()
            rows.append({
                'hosts': hosts, 'vms': len(vms), 'strategy': name,
                'mean_load': round(result.mean_load, 1),
                'periods': len(card.plan_seconds),
                'migrations': summary['migrations'],
                'input_ms_mean': summary['input_ms_mean'],
                'plan_ms_mean': summary['plan_ms_mean'],
                'plan_ms_p95': summary['plan_ms_p95'],
                'plan_ms_max': round(1000 * max(card.plan_seconds), 3),
                'total_ms_p95': summary['total_ms_p95']})
            print(f'scale: {rows[-1]}', flush=True)
    return rows


def _markdown(rows: list) -> str:
    keys = list(rows[0])
    lines = ['| ' + ' | '.join(keys) + ' |',
             '|' + '|'.join('---' for _ in keys) + '|']
    lines += ['| ' + ' | '.join(str(r[k]) for k in keys) + ' |'
              for r in rows]
    return '\n'.join(lines)


def _simulate_argv(args, seed: int) -> tuple:
    argv = ['--seed', str(seed), '--vms', str(args.vms), '--shape',
            args.shape]
    argv += ['--trace', args.trace] if args.trace else []
    argv += ['--bursts'] if args.bursts else []
    for path in args.config_file:
        argv += ['--config-file', path]
    return tuple(argv)


def _reused(paths: list, args) -> list:
    """Watcher's runs from earlier invocations on the same trace (their
    ``quality.json``): a change to our policy cannot affect them, so they
    need not be recomputed.  The trace must match, and the runs must have
    every column: a run made before the migration cost model has none of
    its columns, and moved its instances at no cost."""
    runs = []
    for path in paths:
        with open(path) as stream:
            document = json.load(stream)
        seeds = [int(s) for s in args.seeds.split(',')]
        expected = cli.describe(cli.parser().parse_args(
            list(_simulate_argv(args, document['seeds'][0]))))
        if document['source'] != expected:
            raise SystemExit(f'{path}: runs of {document["source"]!r}, not '
                             f'{expected!r}')
        reused = [r for r in document['runs']
                  if r['watcher'] and r['seed'] in seeds]
        missing = sorted({k for r in reused for k in MEAN_KEYS
                          if k not in r})
        if missing:
            raise SystemExit(
                f'{path}: its runs lack {", ".join(missing)}: they predate '
                f'the simulator\'s migration cost and are not comparable; '
                f'run those rows again')
        runs += reused
    return runs


def quality(args) -> int:
    seeds = [int(s) for s in args.seeds.split(',')]
    names = [n.strip() for n in args.strategies.split(',') if n.strip()]
    ours = [n for n in names if not n.startswith('watcher')]
    threshold = model.PlannerConfig().cpu_threshold
    rows = ours + (watcher_variants(args.grid, threshold)
                   if 'watcher' in names else [])
    runs = _reused(args.reuse, args)
    done = {(r['seed'], r['strategy']) for r in runs}
    tasks = [(_simulate_argv(args, seed), seed, row)
             for seed in seeds for row in rows
             if (seed, getattr(row, 'label', row)) not in done]
    failures = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for run in pool.map(_one, *zip(*tasks, strict=True)) if tasks else ():
            if 'error' in run:
                print(f"seed {run['seed']}: {run['strategy']}: failed "
                      f"inside Watcher: {run['error']}", flush=True)
                failures.append(run)
                continue
            print(f"seed {run['seed']}: {run['strategy']}: "
                  f"{run['overloaded_host_periods']} overloaded host-periods"
                  f" ({run['drs_caused_overloaded_host_periods']} "
                  f"DRS-caused), {run['migrations']} migrations, "
                  f"{run['gb_moved']} GB, "
                  f"{run['instance_minutes_in_migration']} instance-min in "
                  f"migration, {run['ping_pongs']} ping-pongs, worst "
                  f"{run['worst_overload_percent']} %, "
                  f"{run['unserved_core_minutes']} unserved core-min",
                  flush=True)
            runs.append(run)
    table = aggregate(runs)
    result = single_setting_checks(table, args.bursts)
    hosts = sorted({r['hosts'] for r in runs})
    loads = sorted({r['mean_load'] for r in runs})
    source = cli.describe(cli.parser().parse_args(
        list(_simulate_argv(args, seeds[0]))))
    print(f'\n{source.replace(f" (seed {seeds[0]})", "")}, seeds '
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
                             '(ws60-05); or the whole grid (full).')
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
        rows = _scale([int(h) for h in args.scale_hosts.split(',')],
                      args.vms_per_host, args.scale_steps,
                      strategies.PLANNER_POLICIES,
                      int(args.seeds.split(',')[0]), args.config_file)
        print(_markdown(rows))
        os.makedirs(args.output_dir, exist_ok=True)
        path = os.path.join(args.output_dir, 'scale.json')
        with open(path, 'w') as stream:
            json.dump(rows, stream, indent=1)
        print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
