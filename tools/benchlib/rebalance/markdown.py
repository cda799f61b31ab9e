"""The rebalancing benchmark's results as Markdown.
"""

from benchlib.rebalance.watcher_grid import WB60


def run_line(run: dict) -> str:
    """One seed's run of one row, as printed when it ends: unserved
    demand and the worst host first, as in :func:`quality_markdown`."""
    first = run.get('unserved_first_core_minutes')
    starts = run.get('starved_starts')
    return (f"seed {run['seed']}: {run['strategy']}: "
            f"{run['unserved_core_minutes']} unserved core-min"
            + ('' if first is None else
               f" ({first} in the first period of {starts} episode"
               f"{'' if starts == 1 else 's'} past 100 %)")
            + ", worst host "
            f"{run['worst_overload_percent']} %, "
            f"{run['overloaded_host_periods']} overloaded host-periods "
            f"({run['drs_caused_overloaded_host_periods']} DRS-caused), "
            f"{run['migrations']} migrations, {run['gb_moved']} GB, "
            f"{run['instance_minutes_in_migration']} instance-min in "
            f"migration, {run['ping_pongs']} ping-pongs")


def headline_markdown(result: dict) -> str:
    """:func:`single_setting_checks` as a list, each check with both
    figures, and the verdict."""
    if not result:
        return 'No verdict: balanced and a Watcher row run on every seed ' \
               'are needed.'
    seeds = ', '.join(map(str, result['seeds']))
    lines = [f"balanced against Watcher's best single setting on this "
             f"trace, {result['against']} (fewest overloaded host-periods "
             f"summed over seeds {seeds}), and against {WB60}; sums over "
             f"the seeds (balanced / the other figure):", '']
    for check in result['checks']:
        theirs = '-' if check['theirs'] is None else f"{check['theirs']:g}"
        lines.append(f"- {'yes' if check['passed'] else '**NO**'} "
                     f"({check['letter']}): {check['check']}: "
                     f"{check['ours']:g} / {theirs}")
    lines += ['', 'Verdict: ' + (f"**bar not met** (failed: "
                                 f"{result['failed']})" if result['failed']
                                 else '**bar met**')]
    return '\n'.join(lines)


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


#: What a tenant feels first: demand no host served, and how far the
#: worst host was pushed; then the overloads and what the moves cost.
COLUMNS = (('unserved_core_minutes', 'unserved core-min', 1),
           ('worst_overload_percent', 'worst host %', 1),
           ('overloaded_host_periods', 'overloaded host-periods', 0),
           ('drs_caused_overloaded_host_periods', 'DRS-caused', 0),
           ('migrations', 'migrations', 1), ('gb_moved', 'GB moved', 0),
           ('instance_minutes_in_migration', 'instance-min in migration',
            1),
           ('ping_pongs', 'ping-pongs', 1),
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


def plain_markdown(rows: list) -> str:
    """``rows`` (dicts with the same keys) as a table, a column a key."""
    keys = list(rows[0])
    lines = ['| ' + ' | '.join(keys) + ' |',
             '|' + '|'.join('---' for _ in keys) + '|']
    lines += ['| ' + ' | '.join(str(r[k]) for k in keys) + ' |'
              for r in rows]
    return '\n'.join(lines)
