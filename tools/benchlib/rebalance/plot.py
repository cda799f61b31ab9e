"""The rebalancing benchmark's plot: unserved demand against migrations.

One plot per trace, every row a labelled point, so that the trade-off
each Watcher setting and ours make shows at a glance: a row down and to
the left serves more demand for fewer moves.  matplotlib is imported
only here, when the plot is drawn.
"""

import os


def trace_name(args) -> str:
    """The trace's short name, for the plot's file: the trace file's
    name without its extension, or the synthetic shape; ``-bursts`` after
    it with bursts."""
    name = (os.path.splitext(os.path.basename(args.trace))[0] if args.trace
            else args.shape)
    return name + ('-bursts' if args.bursts else '')


def trace_title(words: str, args) -> str:
    """The plot's title: the trace in words (``simulate.cli.describe``)
    without the trace file's directory, which is the machine's, not the
    trace's."""
    if not args.trace:
        return words
    return words.replace(args.trace, os.path.basename(args.trace), 1)


def short(label: str) -> str:
    """A row's label in few words, for a point crowded by others:
    ``WB period 60 s, threshold 80`` becomes ``WB 60 s, 80``."""
    for word, kept in (('period ', ''), ('threshold ', ''),
                       ('retry ', 'r'),
                       ('no audit while a plan runs', 'unforced')):
        label = label.replace(word, kept)
    return label


def tradeoff_png(rows: list, title: str, directory: str, name: str) -> str:
    """``tradeoff-NAME.png`` in ``directory``: each row of
    :func:`~.checks.aggregate` at its mean migrations and unserved
    core-minutes over the seeds, with one standard deviation as bars;
    returns its path."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(10, 6))
    for row in rows:
        (moves, moves_spread), (unserved, unserved_spread) = (
            row['migrations'], row['unserved_core_minutes'])
        watcher = row['watcher']
        axes.errorbar(moves, unserved, xerr=moves_spread,
                      yerr=unserved_spread, fmt='o' if watcher else 's',
                      color='tab:blue' if watcher else 'tab:red',
                      capsize=3, label='Watcher' if watcher else 'ours')
        axes.annotate(short(row['strategy']), (moves, unserved), fontsize=8,
                      textcoords='offset points', xytext=(5, 4))
    handles, labels = axes.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    axes.legend(unique.values(), unique.keys(), loc='lower right')
    axes.set_xlabel('migrations (mean over the seeds)')
    axes.set_ylabel('unserved core-minutes (mean over the seeds)')
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3, which='both')
    # Rows span three orders of magnitude (a setting that runs away makes
    # thousands of migrations, ours a few hundred), so both axes are
    # logarithmic, linear near 0 to keep the rows at 0 (no DRS, no
    # unserved demand): from 0, with room for the farthest labels.
    axes.set_xscale('symlog', linthresh=10)
    axes.set_yscale('symlog', linthresh=1)
    axes.set_xlim(0, 3 * _reach(rows, 'migrations') or 1)
    axes.set_ylim(0, 3 * _reach(rows, 'unserved_core_minutes') or 1)
    figure.tight_layout()
    path = os.path.join(directory, f'tradeoff-{name}.png')
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
    return path


def _reach(rows: list, key: str) -> float:
    """The farthest a row's ``key`` goes: mean plus its spread."""
    return max(mean + (spread or 0.0) for mean, spread in
               (row[key] for row in rows))
