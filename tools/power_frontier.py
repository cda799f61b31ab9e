#!/usr/bin/env python3
"""Power management's frontier: the bound's saving captured against the
overload it adds, with our forecast and with hindsight.

``power_band_low`` trades one for the other: the lower the band, the more
hosts stay on.  This tool sweeps it (``--band-low``) on the traces of
``tools/bench_power.py`` (same options) and, beside each of our runs, runs
the same planner with the pool's forecast replaced by hindsight: the
trace's own demand, the most it reaches within
``planning.power.RAMP_HORIZONS`` horizons (a boot time and a period each),
with no deviation, raised by each ``--headroom`` percent (ours adds a
deviation of its own forecast).  Hindsight knows when every ramp comes
and how high; if its frontier is no better than ours, the forecast is not
what holds the saving back: the hosts' own swings at the density the
saving needs are.

Per trace, summed over the seeds: the share of the bound's saving
captured, overloaded host-periods with the bench's allowance
(``balanced``'s plus a tenth, or plus 10 under 100), how many of them
begin an episode (the host was not over the period before: no planner
acting on what it measured could have moved load off it in time),
unserved core-minutes and migrations.  Run as::

    tox -e power-frontier -- --trace FILE --peak-load 50 \\
        --synthetic-vms 0 --seeds 1,2,3,4
"""

import argparse
import collections.abc
import concurrent.futures
import dataclasses
import functools
import sys

import bench_power
import tabulate
from benchlib import power_bound

from nova_drs_scheduler.planning import forecast
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import outlook
from nova_drs_scheduler.planning import power
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies

OURS, HINDSIGHT = 'ours', 'hindsight'
FORECASTS = (OURS, HINDSIGHT)


class _Hindsight(collections.abc.Mapping):
    """Every pool's outlook: a forecast that reads ``cores`` at any
    horizon, with no spread.  It has no keys of its own, so that
    ``power.observe`` starts each period from it (the simulator's cluster
    is one pool, and the trace's demand is that pool's)."""

    def __init__(self, now: float, cores: float):
        self.state = outlook.Outlook(
            holt=forecast.Forecast(time=now, level=cores, samples=1))

    def __getitem__(self, key):
        return self.state

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


class HindsightPower(strategies.PowerManaged):
    """``balanced+power`` whose pool forecast is the trace's demand to
    come, raised by ``headroom`` percent (:class:`_Hindsight`);
    everything else as ours."""

    def __init__(self, config, power_config, demand: list,
                 step_seconds: float, headroom: float = 0.0):
        super().__init__(config, power_config)
        self.demand, self.step_seconds = demand, step_seconds
        self.headroom = headroom

    def ahead(self, now: float) -> float:
        """The most the trace's demand reaches from ``now`` to
        ``RAMP_HORIZONS`` horizons on, in cores, with the headroom."""
        last = len(self.demand) - 1
        reach = power.RAMP_HORIZONS * self.power_config.horizon
        first = min(int(now // self.step_seconds), last)
        end = min(int((now + reach) // self.step_seconds), last)
        return (max(self.demand[first:end + 1])
                * (1.0 + self.headroom / 100.0))

    def _power(self, snapshot, view, goals):
        if model.CONSOLIDATE not in goals:
            return None
        # The hindsight state is as new as this period's sample, which
        # ``observe`` then leaves as it is (a sample no newer is ignored).
        self.forecasts, self.counters = power.observe(
            snapshot, _Hindsight(view.now, self.ahead(view.now)),
            self.counters, view.now, self.power_config)
        return power.PowerInputs(self.forecasts, self.counters,
                                 self.power_config)


def demand(setup) -> list:
    """The trace's demand per step, in cores, over the setup's VMs."""
    return [sum(row[vm.index] * vm.flavor.vcpus for vm in setup.vms) / 100.0
            for row in setup.trace.steps]


def one(trace: str, argv: tuple, seed: int, band_low: float | None,
        kind: str | None, headroom: float = 0.0) -> dict:
    """One run: ``balanced`` (``band_low`` None) or power management at
    ``band_low`` with the ``kind`` of forecast (hindsight with
    ``headroom``)."""
    setup = bench_power.prepared(argv)
    if band_low is None:
        strategy = strategies.build(bench_power.BALANCED, setup.config, seed,
                                    {})
    else:
        config = dataclasses.replace(setup.power_config, band_low=band_low)
        strategy = (strategies.PowerManaged(setup.config, config)
                    if kind == OURS else HindsightPower(
                        setup.config, config, _demand(argv),
                        setup.trace.step_seconds, headroom))
    result = engine.run(setup.trace, setup.vms, setup.spec, strategy,
                        setup.settings, power=setup.power)
    return dict(trace=trace, seed=seed, band_low=band_low,
                kind=label(kind, headroom),
                **bench_power.bound_of(argv), **result.card.summary(),
                **result.power)


def label(kind: str | None, headroom: float) -> str | None:
    """A run's row: ``ours``, or ``hindsight`` with its headroom."""
    if kind == HINDSIGHT and headroom:
        return f'{HINDSIGHT} +{headroom:g} %'
    return kind


@functools.cache
def _demand(argv: tuple) -> list:
    return demand(bench_power.prepared(argv))


#: (key, title) of the figures summed over seeds.
SUMMED = (('overloaded_host_periods', 'overloaded host-periods'),
          ('overload_starts', 'of them episode starts'),
          ('unserved_core_minutes', 'unserved core-min'),
          ('migrations', 'migrations'))


def table(runs: list) -> str:
    """One trace's frontier: ``balanced``, then each forecast at each
    band bottom, summed over the seeds."""
    def total(chosen, key):
        return round(sum(run[key] for run in chosen), 2)
    balanced = [r for r in runs if r['band_low'] is None]
    energy = total(balanced, 'energy_kwh')
    bound = total(balanced, 'bound_kwh')
    allowed = bench_power.allowed_overload(
        total(balanced, 'overloaded_host_periods'))
    lines = [['balanced (every host on)', '-', '-']
             + [total(balanced, key) for key, _ in SUMMED]]
    kinds = dict.fromkeys(r['kind'] for r in runs if r['kind'])
    for kind in kinds:
        for band_low in sorted({r['band_low'] for r in runs
                                if r['kind'] == kind}):
            chosen = [r for r in runs if r['kind'] == kind
                      and r['band_low'] == band_low]
            share = power_bound.captured(total(chosen, 'energy_kwh'),
                                         energy, bound)
            lines.append([kind, f'{band_low:g}',
                          '-' if share is None else f'{share:g}']
                         + [total(chosen, key) for key, _ in SUMMED])
    text = tabulate.tabulate(
        lines, ['forecast', 'power_band_low', "bound's saving captured %"]
        + [title for _, title in SUMMED], tablefmt='github',
        missingval='-')
    return (f'{text}\n\noverloaded host-periods allowed by the bench\'s '
            f'bar: {allowed:g}')


def _numbers(parser, option: str, text: str) -> list:
    try:
        return [float(value) for value in text.split(',')]
    except ValueError:
        parser.error(f'{option}: comma-separated numbers, not {text!r}')


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_power.trace_options(parser)
    parser.add_argument('--band-low', default='25,35,45,55',
                        help='Comma-separated power_band_low values to '
                             'sweep, each under power_band_high.')
    parser.add_argument('--forecasts', default=','.join(FORECASTS),
                        help='Comma-separated: ours, hindsight or both.')
    parser.add_argument('--headroom', default='0',
                        help='Comma-separated percents hindsight\'s '
                             'demand is raised by, each a row of its own.')
    args = parser.parse_args(argv)
    kinds = args.forecasts.split(',')
    if set(kinds) - set(FORECASTS):
        parser.error(f'--forecasts: a choice of {", ".join(FORECASTS)}')
    bands = _numbers(parser, '--band-low', args.band_low)
    headrooms = _numbers(parser, '--headroom', args.headroom)
    if any(headroom < 0 for headroom in headrooms):
        parser.error(f'--headroom: percents of 0 or more, not '
                     f'{args.headroom}')
    seeds = [int(s) for s in args.seeds.split(',')]
    variants = [(None, None, 0.0)] + [
        (band, kind, headroom) for kind in kinds
        for headroom in (headrooms if kind == HINDSIGHT else (0.0,))
        for band in bands]
    tasks = [(trace, tuple(simulate + ['--seed', str(seed)]), seed) + run
             for trace, simulate, _ in bench_power.traces(args)
             for seed in seeds for run in variants]
    if not tasks:
        parser.error('no trace: give --trace or --synthetic-vms')
    high = bench_power.prepared(tasks[0][1]).power_config.band_high
    if not all(0 <= band < high for band in bands):
        parser.error(f'--band-low: each from 0 to under power_band_high '
                     f'({high:g}), not {args.band_low}')
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(one, *zip(*tasks, strict=True)))
    for trace in dict.fromkeys(r['trace'] for r in runs):
        print(f'\n{trace}, seeds {args.seeds}\n')
        print(table([r for r in runs if r['trace'] == trace]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
