"""The demo's PNG: every host's utilization over time, migrations marked,
and below it the number of overloaded hosts with and without DRS."""

import os

import matplotlib

matplotlib.use('Agg')
from matplotlib import pyplot  # noqa: E402
from matplotlib import ticker  # noqa: E402


def write(result, path: str) -> str:
    figure, (axes, below) = pyplot.subplots(
        2, 1, sharex=True, figsize=(11, 7.5), height_ratios=(3, 1))
    periods = range(result.periods)
    for host, series in sorted(result.loads.items(),
                               key=lambda item: int(item[0][4:])):
        axes.plot(periods, series, label=host, linewidth=1.4)
    axes.axhline(result.threshold, color='red', linestyle='--',
                 linewidth=1, label=f'threshold {result.threshold:.0f}%')
    for move in result.migrations:
        ok = move['status'] == 'completed'
        axes.annotate(
            f'{move["name"]}\n{move["source"]}->{move["destination"]}',
            xy=(move['period'], result.loads[move['source']][move['period']]),
            xytext=(0, 18), textcoords='offset points', ha='center',
            fontsize=7, color='black' if ok else 'red',
            arrowprops={'arrowstyle': '->', 'color': 'grey'})
    axes.set_ylabel('host CPU utilization (%)')
    axes.set_ylim(0, 110)
    axes.set_title('nova-drs demo: host utilization, migrations annotated')
    axes.legend(loc='upper left', ncol=6, fontsize=7)
    below.step(periods, result.overloaded_series(result.baseline),
               where='mid', color='grey', linestyle='--',
               label='without DRS')
    below.step(periods, result.overloaded_series(result.loads),
               where='mid', color='tab:blue', label='with DRS')
    below.set_ylabel('hosts over\nthe threshold')
    below.set_xlabel('period')
    below.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    below.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    below.legend(loc='upper left', fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return os.path.abspath(path)

