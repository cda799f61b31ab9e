#!/usr/bin/env python3
"""How early power management's forecast sees a pool cross its band.

Judges :mod:`nova_drs_scheduler.planning.forecast` the way power
management uses it: a standby host must be woken a boot time before the
pool's demand crosses the band's top.  The VMs of a trace are dealt at
random into pools (``--pool`` VMs each, ``--seeds`` ways); a pool's demand
is the sum of its VMs' CPU (one core each).  For each pool, the levels at
the 50th, 70th and 90th percentiles of its day stand for the band top of
as many host counts.

- A *crossing* is a step whose demand is above a level after ``--quiet``
  seconds at or under it (a new episode, not noise dancing on the level).
  It is *caught* when the forecast made a boot time before it
  (``--boot`` seconds, in whole steps), for ``--boot`` plus one step
  ahead, plus ``deviations`` of its deviation, was above the level.
- A *false alarm* is a step at or under a level whose forecast is above
  it while no step of the next horizon is: a host woken for nothing.

Each forecast is tried at several ``deviations``; the table gives, per
forecast, the share of crossings caught at the deviations whose false
alarms stay within each ``--budget`` (the fairest comparison: any
forecast catches everything if it may cry wolf); with ``--learn-days``,
only after the days that teach the forecasts.  Forecasts compared,
each with the deviation of its own one-step error:

- ``holt``: the module as shipped (level and trend half-lives given);
- ``holt+shape``: the same raised where the daily shape it learns
  (``planning/outlook.py``, what power management reads) climbs within
  the horizon: on a trace of several days (``--days``), the first day
  learns and the next ones use it;
- ``no-trend``: the same with the trend held at 0 (an exponentially
  weighted mean): what a forecast without a slope sees;
- ``last``: the newest sample, with the deviation of step-to-step changes.

Run with the package importable (any tox env)::

    python tools/forecast_check.py ../shared/data/planetlab/20110303.csv \\
        ../shared/data/planetlab/20110306.csv --synthetic day-night
    python tools/forecast_check.py --synthetic day-night --days 3
"""

import argparse
import dataclasses
import math
import random
import sys

from nova_drs_scheduler.planning import forecast
from nova_drs_scheduler.planning import outlook
from nova_drs_scheduler.simulate import traces

QUANTILES = (0.5, 0.7, 0.9)
DEVIATIONS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)


def pools(trace, size: int, seed: int) -> list:
    """The trace's VMs dealt at random into pools of ``size``: each pool's
    demand per step, in cores."""
    order = list(range(len(trace.names)))
    random.Random(seed).shuffle(order)
    groups = [order[i:i + size]
              for i in range(0, len(order) - size + 1, size)]
    return [[sum(step[i] for i in group) / 100.0 for step in trace.steps]
            for group in groups]


def forecasts(series, step: float, method: str, level: float,
              trend: float, horizon: float) -> list:
    """``(expected, deviation)`` at ``horizon`` after each step."""
    out = []
    if method == 'last':
        # The one-step deviation weighted as the module weighs its own,
        # growing as a random walk's over the horizon.
        beta = 1 - 0.5 ** (step / forecast.DEVIATION_HALFLIFE)
        variance, previous = None, None
        for value in series:
            if previous is not None:
                change = (value - previous) ** 2
                variance = change if variance is None else (
                    variance + beta * (change - variance))
            previous = value
            steps = max(horizon / step, 1.0)
            out.append((value, math.sqrt((variance or 0.0) * steps)))
        return out
    if method == 'holt+shape':
        state = outlook.Outlook(holt=forecast.Forecast(
            level_halflife=level, trend_halflife=trend))
        for n, value in enumerate(series):
            state = outlook.update(state, n * step, value)
            out.append(outlook.ahead(state, horizon))
        return out
    state = forecast.Forecast(level_halflife=level, trend_halflife=trend)
    for n, value in enumerate(series):
        state = forecast.update(state, n * step, value)
        if method == 'no-trend':
            state = dataclasses.replace(state, trend=0.0)
        out.append(forecast.ahead(state, horizon))
    return out


def judge(series, made, threshold, lead: int, reach: int, quiet: int,
          deviations: float, start: int = 0) -> tuple:
    """``(crossings, caught, false alarms, steps at or under)``, counted
    from step ``start`` on."""
    crossings = caught = false = under = 0
    flags = [e + deviations * d > threshold for e, d in made]
    for k in range(max(lead, quiet, start), len(series)):
        if series[k] > threshold and all(
                series[j] <= threshold for j in range(k - quiet, k)):
            crossings += 1
            caught += flags[k - lead]
    for j, value in enumerate(series[:len(series) - reach]):
        if j >= start and value <= threshold:
            under += 1
            if flags[j] and not any(
                    v > threshold for v in series[j + 1:j + reach + 1]):
                false += 1
    return crossings, caught, false, under


def run(args) -> list:
    """Per trace and forecast: ``(trace, method, level s, trend s,
    crossings, [(deviations, caught share, false alarm share)])``."""
    loaded = [(path, traces.load(path)) for path in args.traces]
    days = f' ({args.days} days)' if args.days > 1 else ''
    for shape in args.synthetic:
        loaded.append((f'synthetic {shape}{days}', traces.synthetic(
            1000, args.days * 86400 // int(args.step), 1, int(args.step),
            shape)))
    horizon = args.boot + args.step
    lead = math.ceil(args.boot / args.step)
    reach = math.ceil(horizon / args.step)
    quiet = max(lead, math.ceil(args.quiet / args.step))
    start = math.ceil(args.learn_days * 86400 / args.step)
    methods = [('holt', level, level * ratio)
               for level in args.levels for ratio in args.ratios]
    methods += [('holt+shape', level, level * ratio)
                for level in args.levels for ratio in args.ratios]
    methods += [('no-trend', level, level) for level in args.levels]
    methods += [('last', 0.0, 0.0)]
    rows = []
    for name, trace in loaded:
        series_list = [series for seed in range(args.seeds)
                       for series in pools(trace, args.pool, seed)]
        for method, level, trend in methods:
            totals = {dev: [0, 0, 0, 0] for dev in DEVIATIONS}
            for series in series_list:
                made = forecasts(series, args.step, method, level, trend,
                                 horizon)
                ordered = sorted(series)
                for q in QUANTILES:
                    threshold = ordered[int(q * (len(ordered) - 1))]
                    for dev in DEVIATIONS:
                        found = judge(series, made, threshold, lead, reach,
                                      quiet, dev, start)
                        totals[dev] = [a + b for a, b in zip(
                            totals[dev], found, strict=True)]
            crossings = totals[DEVIATIONS[0]][0]
            rows.append((name, method, level, trend, crossings, [
                (dev, caught / max(crossings, 1), false / max(under, 1))
                for dev, (_, caught, false, under) in totals.items()]))
    return rows


def best(points, budget: float) -> tuple | None:
    """The point catching most with false alarms within ``budget``."""
    within = [p for p in points if p[2] <= budget]
    return max(within, key=lambda p: (p[1], -p[2])) if within else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('traces', nargs='*', help='PlanetLab-format files')
    parser.add_argument('--synthetic', action='append', default=[],
                        choices=traces.SHAPES,
                        help='also a generated 1000-VM trace of this shape')
    parser.add_argument('--days', type=int, default=1,
                        help='days of the generated traces (default 1)')
    parser.add_argument('--learn-days', type=int, default=0,
                        help='days that only teach the forecasts: '
                             'crossings and false alarms count after them '
                             '(default 0)')
    parser.add_argument('--pool', type=int, default=40,
                        help='VMs per pool (default 40)')
    parser.add_argument('--seeds', type=int, default=3,
                        help='ways of dealing the VMs (default 3)')
    parser.add_argument('--step', type=float, default=300.0,
                        help='seconds between samples (PlanetLab: 300)')
    parser.add_argument('--boot', type=float, default=600.0,
                        help='boot seconds (default 600)')
    parser.add_argument('--quiet', type=float, default=3600.0,
                        help='seconds under a level before a crossing '
                             'counts (default 3600)')
    parser.add_argument('--levels', type=float, nargs='+',
                        default=[forecast.LEVEL_HALFLIFE],
                        help='level half-lives to try, seconds')
    parser.add_argument('--ratios', type=float, nargs='+',
                        default=[forecast.TREND_HALFLIFE
                                 / forecast.LEVEL_HALFLIFE],
                        help='trend half-life / level half-life to try')
    parser.add_argument('--budget', type=float, nargs='+',
                        default=[0.05, 0.10, 0.20],
                        help='false alarm shares to compare at')
    parser.add_argument('--show', type=float, nargs='+', default=[1.0],
                        choices=DEVIATIONS, metavar='DEVIATIONS',
                        help='also show caught and false alarms at these '
                             'deviations (default 1, [drs] '
                             'power_forecast_deviations\'s default)')
    args = parser.parse_args(argv)
    if not args.traces and not args.synthetic:
        parser.error('give a trace file or --synthetic')
    print('trace | forecast | level s | trend s | crossings | '
          + ' | '.join(f'caught at <= {100 * b:g}% false alarms (deviations)'
                       for b in args.budget) + ' | '
          + ' | '.join(f'caught / false alarms at {d:g}' for d in args.show))
    print('|'.join(['---'] * (5 + len(args.budget) + len(args.show))))
    for name, method, level, trend, crossings, points in run(args):
        cells = []
        for budget in args.budget:
            point = best(points, budget)
            cells.append('-' if point is None else
                         f'{100 * point[1]:.1f}% ({point[0]:g})')
        for dev, caught, false in points:
            if dev in args.show:
                cells.append(f'{100 * caught:.1f}% / {100 * false:.1f}%')
        print(f'{name} | {method} | {level:g} | {trend:g} | {crossings} | '
              + ' | '.join(cells))
    return 0


if __name__ == '__main__':
    sys.exit(main())
