"""The trade-off of ``[drs] aggressiveness``: a table and a plot.

Reads the ``quality.json`` that ``tools/bench_rebalance.py`` wrote for each
level of each trace (one ``--output-dir`` per level, named by ``--runs``)
and prints a Markdown table of sums over the seeds: overloaded
host-periods, DRS-caused ones, unserved core-minutes and worst host
against migrations and GB moved. With ``--plot`` it also draws overloaded
host-periods and unserved demand against migrations, one panel per trace
(needs matplotlib: the watcher env has it)::

    python tools/plot_aggressiveness.py --plot doc/aggressiveness.png \\
        --runs 'PlanetLab 20110303=out/plain-level{level}' \\
        --runs 'bursts=out/bursts-level{level}'
"""

import argparse
import json
import os
import sys

LEVELS = (1, 2, 3, 4, 5)


def load(pattern: str) -> dict:
    """``{level: the balanced row's sums and seeds}`` of one trace."""
    found = {}
    for level in LEVELS:
        path = os.path.join(pattern.format(level=level), 'quality.json')
        with open(path) as handle:
            runs = [run for run in json.load(handle)['runs']
                    if run['strategy'] == 'balanced']
        found[level] = {
            'seeds': len(runs),
            'overloaded': sum(r['overloaded_host_periods'] for r in runs),
            'drs_caused': sum(r['drs_caused_overloaded_host_periods']
                              for r in runs),
            'unserved': sum(r['unserved_core_minutes'] for r in runs),
            'worst': max(r['worst_overload_percent'] for r in runs),
            'migrations': sum(r['migrations'] for r in runs),
            'gb': sum(r['gb_moved'] for r in runs),
            'ping_pongs': sum(r['ping_pongs'] for r in runs)}
    return found


def table(traces: dict) -> str:
    lines = ['| trace | level | overloaded host-periods | DRS-caused | '
             'unserved core-min | worst % | migrations | GB | ping-pongs |',
             '|---|---|---|---|---|---|---|---|---|']
    for name, levels in traces.items():
        for level, row in levels.items():
            mark = ' (default)' if level == 3 else ''
            lines.append(
                f'| {name}, {row["seeds"]} seeds | {level}{mark} | '
                f'{row["overloaded"]} | {row["drs_caused"]} | '
                f'{row["unserved"]:.1f} | {row["worst"]:.1f} | '
                f'{row["migrations"]} | {row["gb"]:.0f} | '
                f'{row["ping_pongs"]} |')
    return '\n'.join(lines)


def plot(traces: dict, path: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(2, len(traces), squeeze=False,
                                   figsize=(5 * len(traces), 7))
    for column, (name, levels) in enumerate(traces.items()):
        moves = [levels[level]['migrations'] for level in LEVELS]
        for row, (key, label) in enumerate((
                ('overloaded', 'overloaded host-periods'),
                ('unserved', 'unserved core-minutes'))):
            axis = axes[row][column]
            values = [levels[level][key] for level in LEVELS]
            axis.plot(moves, values, marker='o')
            for level, x, y in zip(LEVELS, moves, values, strict=True):
                axis.annotate(str(level), (x, y), textcoords='offset points',
                              xytext=(5, 5))
            axis.set_xlabel('migrations (sum over the seeds)')
            axis.set_ylabel(label)
            axis.set_title(f'{name}: {label}')
            axis.grid(True, alpha=0.3)
    figure.suptitle('[drs] aggressiveness 1-5 (labels): '
                    'overload against migrations')
    figure.tight_layout()
    figure.savefig(path, dpi=80)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        '--runs', action='append', required=True,
        help='NAME=DIR_PATTERN: a trace\'s name and its output directories, '
             '"{level}" standing for 1 to 5.')
    parser.add_argument('--plot', help='Write the plot (PNG) here.')
    args = parser.parse_args(argv)
    traces = {}
    for spec in args.runs:
        name, _, pattern = spec.partition('=')
        traces[name] = load(pattern)
    print(table(traces))
    if args.plot:
        plot(traces, args.plot)
        print(f'wrote {args.plot}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
