"""Writing a run's results: a table, CSV, JSON and a PNG plot.

matplotlib is imported only when a plot is asked for, so the simulator
itself needs nothing beyond the package's own requirements.
"""

import csv
import dataclasses
import itertools
import json
import os

from nova_drs_scheduler.simulate import maintenance

COLUMNS = (
    ('strategy', 'strategy'),
    ('overloaded_host_periods', 'overloaded host-periods'),
    ('drs_caused_overloaded_host_periods', 'DRS-caused'),
    ('worst_overload_percent', 'worst overload %'),
    ('unserved_core_minutes', 'unserved core-min'),
    ('migrations', 'migrations'),
    ('failed_migrations', 'failed'),
    ('gb_moved', 'GB moved'),
    ('instance_minutes_in_migration', 'instance-min in migration'),
    ('ping_pongs', 'ping-pongs'),
    ('relief_checked', 'relief checked'),
    ('relief_held_percent', 'relief held %'),
    ('stddev_mean', 'load std-dev mean'),
    ('stddev_p95', 'load std-dev p95'),
    ('input_ms_mean', 'input ms mean'),
    ('plan_ms_mean', 'decision ms mean'),
    ('plan_ms_p95', 'decision ms p95'),
    ('total_ms_p95', 'input+decision ms p95'),
)


#: Added when hosts went into maintenance (``parameters['maintenance']``).
MAINTENANCE_COLUMNS = (
    ('hosts_drained', 'hosts drained'),
    ('hosts_emptied', 'emptied'),
    ('drain_minutes_mean', 'drain min mean'),
    ('drain_minutes_max', 'drain min max'),
    ('link_minutes_mean', 'link-limit min mean'),
    ('drain_migrations', 'drain migrations'),
    ('drain_gb', 'drain GB'),
    ('overloaded_while_draining', 'overloaded while draining'),
    ('left_behind', 'left behind'),
)


#: Added when the run modelled power (``parameters['power']``).
POWER_COLUMNS = (
    ('energy_kwh', 'energy kWh'),
    ('host_hours_on', 'host-hours on'),
    ('short_periods', 'periods short of a host off or booting'),
    ('standbys', 'standbys'),
    ('standby_drain_minutes_mean', 'standby drain min mean'),
    ('standby_drain_minutes_max', 'standby drain min max'),
    ('wakes', 'wakes'),
)


def columns(parameters: dict) -> tuple:
    """The columns of a run's table."""
    shown = COLUMNS
    if parameters.get('maintenance') is not None:
        shown += MAINTENANCE_COLUMNS
    if parameters.get('power') is not None:
        shown += POWER_COLUMNS
    return shown


def rows(results, parameters: dict) -> list:
    """One flat row per strategy, keys as in :func:`columns`."""
    table = []
    for result in results:
        row = dict(strategy=result.strategy, **result.card.summary())
        if parameters.get('maintenance') is not None:
            figures = maintenance.summary(
                result.drains, result.card.overloaded_series,
                parameters['interval'],
                parameters['cluster']['bandwidth_mbps'])
            mean, longest = maintenance.drain_minutes(
                figures.pop('drain_seconds'))
            link, _ = maintenance.drain_minutes(figures.pop('link_seconds'))
            row.update(figures, drain_minutes_mean=mean,
                       drain_minutes_max=longest, link_minutes_mean=link)
        if result.power is not None:
            figures = dict(result.power)
            mean, longest = maintenance.drain_minutes(
                figures.pop('standby_drain_seconds'))
            row.update(figures, standby_drain_minutes_mean=mean,
                       standby_drain_minutes_max=longest)
        table.append({key: row[key] for key, _ in columns(parameters)})
    return table


def markdown(table: list, parameters: dict) -> str:
    """A Markdown table, for the terminal and doc/benchmarks.md."""
    shown = columns(parameters)
    lines = ['| ' + ' | '.join(title for _, title in shown) + ' |',
             '|' + '|'.join('---' for _ in shown) + '|']
    for row in table:
        lines.append('| ' + ' | '.join(
            '-' if row[key] is None else str(row[key]) for key, _ in shown)
            + ' |')
    return '\n'.join(lines)


def write_csv(path: str, table: list, parameters: dict) -> None:
    with open(path, 'w', newline='') as stream:
        writer = csv.DictWriter(stream,
                                [key for key, _ in columns(parameters)])
        writer.writeheader()
        writer.writerows(table)


def document(parameters: dict, results) -> dict:
    """Rows plus per-period series and refusal reasons, for later plots;
    each host's maintenance, if any."""
    document = {'parameters': parameters, 'results': []}
    for result, row in zip(results, rows(results, parameters), strict=True):
        card = result.card
        document['results'].append(dict(
            row, mean_host_load_percent=round(result.mean_load, 2),
            failed_by_reason=dict(card.failed),
            overloaded_hosts=card.overloaded_series,
            drs_caused_hosts=card.caused_series,
            stddev=[round(v, 3) for v in card.stddev_series]))
        if parameters.get('maintenance') is not None:
            document['results'][-1]['drains'] = [
                dataclasses.asdict(d) for d in result.drains]
    return document


def write_json(path: str, parameters: dict, results) -> None:
    with open(path, 'w') as stream:
        json.dump(document(parameters, results), stream, indent=1)


def write_png(path: str, results, interval: int, title: str) -> None:
    """Cumulative overloaded host-periods, hourly host-load std-dev."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    figure, (top, bottom) = pyplot.subplots(2, 1, sharex=True,
                                            figsize=(10, 7))
    bucket = max(1, 3600 // interval)
    for result in results:
        card = result.card
        hours = [p * interval / 3600.0
                 for p in range(len(card.stddev_series))]
        top.plot(hours, list(itertools.accumulate(card.overloaded_series)),
                 label=result.strategy)
        series = card.stddev_series
        hourly = [sum(series[i:i + bucket]) / len(series[i:i + bucket])
                  for i in range(0, len(series), bucket)]
        bottom.step(hours[::bucket], hourly, where='post',
                    label=result.strategy)
    top.set_ylabel('overloaded host-periods (cumulative)')
    bottom.set_ylabel('std-dev of host CPU %, hourly mean')
    bottom.set_xlabel('hours')
    top.legend()
    top.set_title(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def write_all(directory: str, parameters: dict, results,
              plot: bool = True) -> list:
    """rebalance.{csv,json,png} in ``directory``; returns the paths."""
    os.makedirs(directory, exist_ok=True)
    paths = [os.path.join(directory, f'rebalance.{ext}')
             for ext in ('csv', 'json', 'png')]
    write_csv(paths[0], rows(results, parameters), parameters)
    write_json(paths[1], parameters, results)
    if not plot:
        return paths[:2]
    write_png(paths[2], results, parameters['interval'],
              parameters['title'])
    return paths
