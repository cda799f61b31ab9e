"""``nova-drs demo``: a complete in-process Nova cloud, rebalanced live."""

import functools
import json
import sys

from nova_drs_scheduler import extras
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.simulate import traces

SHORT_PERIODS = 12


def add_parser(subparsers, parents):
    parser = subparsers.add_parser(
        'demo', parents=parents,
        help='Run a whole Nova cloud in this process and watch DRS '
             'relieve overloaded hosts.',
        description='Starts Nova\'s API, conductor, placement, 10 fake '
                    'computes (two aggregates and two unaggregated hosts) '
                    'and the DRS scheduler in one process, boots 40 '
                    'servers, drives their CPU load period by period and '
                    'lets the rebalancer live-migrate. Needs the [demo] '
                    'extra (Nova\'s test fixtures, placement, matplotlib).')
    parser.add_argument('--trace', metavar='CSV',
                        help='Per-VM CPU trace (the simulator\'s formats) '
                             'instead of the bundled scenario; its first '
                             '40 VMs drive the 40 servers.')
    parser.add_argument('--trace-format', default='auto',
                        choices=traces.FORMATS,
                        help='Trace layout (default: detected from the '
                             'header).')
    parser.add_argument('--scale', type=errors.number(float, above=0),
                        default=1.0,
                        help='Multiply trace loads (PlanetLab VMs are '
                             'mostly idle; 6 makes them interesting).')
    parser.add_argument('--periods', type=errors.number(int, minimum=1),
                        help='Periods to run (default: the whole scenario '
                             'or trace).')
    parser.add_argument('--short', action='store_true',
                        help=f'{SHORT_PERIODS} periods: the CI smoke run.')
    parser.add_argument('--output-dir', default='demo-output',
                        help='Where the PNG plot is written.')
    return parser


def run(args, conf=None) -> int:
    runner = extras.load('demo', 'nova_drs_scheduler.demo.runner',
                         'the demo')
    from nova_drs_scheduler.demo import scenario

    try:
        if args.trace:
            trace = scenario.from_trace(
                traces.load(args.trace, args.trace_format), args.scale)
        else:
            trace = scenario.bundled()
    except (traces.TraceError, OSError) as exc:
        raise errors.CLIError(f'bad --trace: {exc}', errors.USAGE)
    periods = SHORT_PERIODS if args.short else args.periods
    if periods:
        trace = trace.head(periods)
    # Bound to the real stdout now: inside the cloud, Nova's test fixtures
    # may capture sys.stdout (OS_STDOUT_CAPTURE), and rows must show live.
    echo = ((lambda *_a, **_k: None) if args.json else
            functools.partial(print, file=sys.stdout, flush=True))
    try:
        result = runner.play(trace, args.output_dir, echo=echo)
    except runner.demo_cloud.CloudFailedError as exc:
        if args.debug:
            print(exc.detail, file=sys.stderr)
        raise errors.CLIError(f'the demo cloud failed: {exc}',
                              errors.UNEXPECTED)
    summary = runner.report(result, args.output_dir, echo=echo)
    if args.json:
        print(json.dumps(dict(summary, migrations_detail=result.migrations),
                         indent=2, sort_keys=True))
    return errors.OK
