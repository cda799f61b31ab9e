"""Judging the runs: means over the seeds, and the checks against Watcher.

:func:`single_setting_checks` is the headline verdict (``balanced``
against Watcher's best single setting on the trace and against
:data:`~benchlib.rebalance.watcher_grid.WB60`, on sums over the seeds,
with a bar of its own for the bursty trace and for the PlanetLab days);
:func:`seed_checks` judges each seed against that seed's best
Watcher row, and :func:`bar_checks` puts every row to the same checks.
"""

import collections
import statistics

from benchlib.rebalance.watcher_grid import WB60

MEAN_KEYS = ('overloaded_host_periods', 'drs_caused_overloaded_host_periods',
             'migrations', 'gb_moved', 'instance_minutes_in_migration',
             'ping_pongs', 'worst_overload_percent', 'unserved_core_minutes',
             'relief_checked', 'relief_held_percent', 'failed_migrations',
             'input_ms_mean', 'plan_ms_mean', 'total_ms_p95')
#: Figures that runs of an older scorecard (``--reuse``) may lack: None
#: for those seeds.
LATER_KEYS = ('unserved_first_core_minutes', 'starved_starts')


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
    deviation of every :data:`MEAN_KEYS` and :data:`LATER_KEYS` column
    over the seeds, and the per-seed values."""
    order = list(dict.fromkeys(
        r['strategy'] for r in sorted(runs, key=lambda r: r['watcher'])))
    rows = []
    for name in order:
        mine = sorted((r for r in runs if r['strategy'] == name),
                      key=lambda r: r['seed'])
        row = {'strategy': name, 'watcher': mine[0]['watcher'],
               'default': mine[0]['default'],
               'seeds': [r['seed'] for r in mine]}
        for key in MEAN_KEYS + LATER_KEYS:
            values = [r.get(key) for r in mine]
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


#: On the bursty trace, ours may make at most this many times WB60's
#: migrations.
BURST_MIGRATIONS_FACTOR = 1.25


def _sum(row: dict, key: str) -> float:
    return sum(row[f'{key}_per_seed'])


def _share(row: dict) -> float | None:
    """The DRS-caused share of a row's overloaded host-periods, summed
    over the seeds; None when it has no overloaded host-period."""
    overloaded = _sum(row, 'overloaded_host_periods')
    if not overloaded:
        return None
    return _sum(row, 'drs_caused_overloaded_host_periods') / overloaded


def _percent(share: float | None) -> float | None:
    return None if share is None else round(100 * share, 2)


def _first_periods(ours: dict, theirs: dict) -> str:
    """How much of each row's unserved demand fell in the first period
    of an episode past 100 % (a step between two samples), and in how
    many episodes, when both rows' runs counted it."""
    figures = [row[f'{key}_per_seed'] for row in (ours, theirs)
               for key in LATER_KEYS]
    if any(None in values for values in figures):
        return ''
    mine, my_starts, other, their_starts = map(sum, figures)
    return (f" (in the first period of an episode past 100 %: "
            f"{mine:.1f} of ours, in {my_starts} episodes, "
            f"{other:.1f} of theirs, in {their_starts})")


def _drs_caused_check(ours: dict, wb60: dict) -> tuple:
    """``d``: our DRS-caused share of the overloaded host-periods strictly
    under WB60's (both in %), or none DRS-caused (nothing is under 0 %);
    when WB60 has no overloaded host-period, no DRS-caused one of ours
    (both figures then counts)."""
    caused = _sum(ours, 'drs_caused_overloaded_host_periods')
    theirs = _share(wb60)
    if theirs is None:
        return ('d', f'no DRS-caused overloaded host-period, as {WB60} has '
                     f'no overloaded host-period (counts)',
                caused, _sum(wb60, 'drs_caused_overloaded_host_periods'),
                not caused)
    mine = _share(ours) or 0.0
    figures = (f'{caused:g} of {_sum(ours, "overloaded_host_periods"):g} '
               f'against '
               f'{_sum(wb60, "drs_caused_overloaded_host_periods"):g} of '
               f'{_sum(wb60, "overloaded_host_periods"):g}')
    return ('d', f'DRS-caused share of overloaded host-periods, in %, '
                 f'under {WB60}\'s ({figures})',
            _percent(mine), _percent(theirs), mine < theirs or not caused)


def single_setting_checks(rows: list, bursts: bool, real_trace: bool,
                          name: str = 'balanced') -> dict:
    """The headline verdict: row ``name`` against Watcher's best single
    setting on the trace and against :data:`WB60`, on sums over the
    seeds.

    The best single setting is the Watcher row with the fewest
    overloaded host-periods summed over the seeds, among the rows run on
    every seed of ``name``.  ``bursts`` says the trace has bursts (the
    bursty trace); ``real_trace`` that it was read from a file
    (``--trace``), which without ``bursts`` makes it a PlanetLab day.
    Letters:

    - ``o``: fewer overloaded host-periods than the best single setting;
      on the bursty trace, no more than WB60;
    - ``m``: no more migrations than the best single setting; on the
      bursty trace, no more than :data:`BURST_MIGRATIONS_FACTOR` times
      WB60's;
    - ``p``: no ping-pong on any seed;
    - ``u``: no more unserved core-minutes than WB60, and on a PlanetLab
      day no more than any Watcher row either (the figure is then the
      least of them all, WB60's included);
    - ``w``: worst host (max over the seeds) no hotter than WB60's;
    - ``d``: DRS-caused share of the overloaded host-periods (in %)
      strictly under WB60's; when WB60 has no overloaded host-period,
      none of ours may be DRS-caused.

    A check that needs WB60 fails, with no figure of theirs, when WB60
    was not run on every seed of ``name``.  Each check keeps both
    figures; ``failed`` holds each failed check's letter; ``{}`` when
    there is nothing to judge.
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
    wb60 = next((r for r in watcher if r['strategy'] == WB60), None)
    missing = f' ({WB60} not run on every seed: no figure)'
    planetlab = real_trace and not bursts
    overloaded = _sum(ours, 'overloaded_host_periods')
    migrations = _sum(ours, 'migrations')
    unserved = _sum(ours, 'unserved_core_minutes')
    worst = max(ours['worst_overload_percent_per_seed'])
    checks = []
    if not bursts:
        theirs = _sum(best, 'overloaded_host_periods')
        checks.append(('o', 'fewer overloaded host-periods than the best '
                            'Watcher row', overloaded, theirs,
                       overloaded < theirs))
        theirs = _sum(best, 'migrations')
        checks.append(('m', 'no more migrations than it', migrations,
                       theirs, migrations <= theirs))
    elif wb60:
        theirs = _sum(wb60, 'overloaded_host_periods')
        checks.append(('o', f'no more overloaded host-periods than {WB60} '
                            f'(bursty trace)', overloaded, theirs,
                       overloaded <= theirs))
        theirs = _sum(wb60, 'migrations')
        checks.append(('m', f'no more migrations than '
                            f'{BURST_MIGRATIONS_FACTOR:g} times {WB60}\'s '
                            f'{theirs:g} (bursty trace)', migrations,
                       BURST_MIGRATIONS_FACTOR * theirs,
                       migrations <= BURST_MIGRATIONS_FACTOR * theirs))
    else:
        checks += [('o', f'no more overloaded host-periods than {WB60} '
                         f'(bursty trace){missing}', overloaded, None,
                    False),
                   ('m', f'no more migrations than '
                         f'{BURST_MIGRATIONS_FACTOR:g} times {WB60}\'s '
                         f'(bursty trace){missing}', migrations, None,
                    False)]
    checks.append(('p', 'zero ping-pongs on every seed',
                   _sum(ours, 'ping_pongs'), 0,
                   not any(ours['ping_pongs_per_seed'])))
    if not wb60:
        checks += [
            ('u', f'no more unserved core-minutes than {WB60}'
                  + (' and than every Watcher row (PlanetLab day)'
                     if planetlab else '') + missing,
             round(unserved, 1), None, False),
            ('w', f'worst host (max over the seeds) no hotter than '
                  f'{WB60}\'s{missing}', worst, None, False),
            ('d', f'DRS-caused share of overloaded host-periods, in %, '
                  f'under {WB60}\'s{missing}', _percent(_share(ours) or 0.0),
             None, False)]
    else:
        if planetlab:
            other = min(watcher, key=lambda r: (
                _sum(r, 'unserved_core_minutes'), r['strategy']))
            # WB60 is one of them: the least is no more than its.
            text = (f'no more unserved core-minutes than {WB60} and than '
                    f'every Watcher row (PlanetLab day; the least: '
                    f'{other["strategy"]})')
        else:
            other = wb60
            text = (f'no more unserved core-minutes than {WB60} (not a '
                    f'PlanetLab day: the other Watcher rows not checked)')
        theirs = _sum(other, 'unserved_core_minutes')
        text += _first_periods(ours, other)
        checks += [
            ('u', text, round(unserved, 1), round(theirs, 1),
             unserved <= theirs),
            ('w', f'worst host (max over the seeds) no hotter than '
                  f'{WB60}\'s', worst,
             max(wb60['worst_overload_percent_per_seed']),
             worst <= max(wb60['worst_overload_percent_per_seed'])),
            _drs_caused_check(ours, wb60)]
    return {'strategy': name, 'against': best['strategy'],
            'seeds': ours['seeds'],
            'checks': [dict(letter=letter, check=text, ours=mine,
                            theirs=theirs, passed=ok)
                       for letter, text, mine, theirs, ok in checks],
            'failed': ''.join(c[0] for c in checks if not c[4])}


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


#: The name of the row made of each seed's best Watcher run.
BEST_PER_SEED = 'best Watcher row of each seed'


def best_per_seed(checks: list) -> list:
    """``none``, ``balanced`` and each seed's best Watcher run as one row,
    each as mean ± standard deviation over the seeds of ``checks``."""
    runs = [c[k] for c in checks for k in ('none', 'balanced') if c[k]]
    runs += [dict(c['best_watcher'], strategy=BEST_PER_SEED)
             for c in checks]
    return aggregate(runs)
