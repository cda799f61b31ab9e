"""One strategy on one seed, and the runs an earlier invocation left.
"""

import functools
import json

from benchlib.rebalance.checks import MEAN_KEYS
from benchlib.rebalance.watcher_grid import Variant
from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import watcher_adapter


@functools.cache
def _setup(argv: tuple) -> cli.Setup:
    """A run's trace and cluster, built once per worker process."""
    return cli.prepare(cli.parser().parse_args(list(argv)))


def run_one(argv: tuple, seed: int, row) -> dict:
    """One strategy on one seed: its summary row.  A Watcher row that
    fails inside Watcher (workload_stabilization with a retry count above
    1 does, see doc/benchmarks-balancing.md) gives a row holding only its
    ``error``, so that the run keeps every other row."""
    setup = _setup(argv)
    if isinstance(row, Variant):
        strategy = watcher_adapter.WatcherStrategy(
            row.kind, dict(row.parameters), seed, row.label, row.force)
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


def simulate_argv(args, seed: int) -> tuple:
    argv = ['--seed', str(seed), '--vms', str(args.vms), '--shape',
            args.shape, '--step-seconds', str(args.step_seconds),
            '--target-load', str(args.target_load)]
    argv += ['--trace', args.trace] if args.trace else []
    argv += ['--bursts'] if args.bursts else []
    for path in args.config_file:
        argv += ['--config-file', path]
    return tuple(argv)


def reused(paths: list, args) -> list:
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
            list(simulate_argv(args, document['seeds'][0]))))
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
