"""``nova-drs simulate``: replay a CPU trace and compare strategies.

Runs every requested strategy on the same trace and the same initially
placed cluster, prints one row per strategy (or, with --json, the whole
result as JSON) and writes CSV, JSON and PNG files. The [drs] options come
from --config-file exactly as the scheduler reads them, so a simulated
policy is the one the operator would deploy. Bad input exits 2 with a
one-line message, before anything runs.
"""

import argparse
import dataclasses
import functools
import json
import os
import sys

from oslo_config import cfg

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler import extras
from nova_drs_scheduler import from_conf
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.planning import power as power_plan
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import maintenance as maintenance_mod
from nova_drs_scheduler.simulate import power as power_mod
from nova_drs_scheduler.simulate import report
from nova_drs_scheduler.simulate import strategies
from nova_drs_scheduler.simulate import traces
from nova_drs_scheduler.simulate import watcher_adapter

DEFAULT_STRATEGIES = 'none,seed,balanced'
#: Mean host CPU a cluster is sized for, percent, unless told otherwise.
TARGET_LOAD = 60.0
#: Bounds that keep a run within a laptop's memory and patience.
MAX_HOSTS = 10000
MAX_VMS = 100000
_positive = errors.number(float, above=0)
_percent = errors.number(float, above=0, maximum=100)
_share = errors.number(float, minimum=0, maximum=1)


def _hours(text: str) -> tuple:
    """``8,16`` -> (8.0, 16.0): hours into the trace, none negative."""
    hours = tuple(map(errors.number(float, minimum=0),
                      filter(None, (part.strip() for part in
                                    text.split(',')))))
    if not hours:
        raise argparse.ArgumentTypeError('no hour given')
    return hours


def _arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group('trace')
    source.add_argument(
        '--trace', metavar='CSV',
        help='Per-VM CPU trace (PlanetLab rows or a generic steps x VMs '
             'table). Without it a synthetic trace is generated.')
    source.add_argument('--trace-format', default='auto',
                        choices=traces.FORMATS,
                        help='Trace layout (default: detected from the '
                             'header).')
    source.add_argument('--step-seconds', type=errors.number(int, minimum=1),
                        default=300,
                        help='Seconds between two trace samples.')
    source.add_argument('--vms', type=errors.number(int, minimum=1,
                                                    maximum=MAX_VMS),
                        default=1000,
                        help=f'VMs of the synthetic trace (at most '
                             f'{MAX_VMS}).')
    length = source.add_mutually_exclusive_group()
    length.add_argument('--steps', type=errors.number(int, minimum=1),
                        help='Trace steps to replay (synthetic: one day; '
                             'a file: all of it).')
    length.add_argument('--days', type=errors.number(int, minimum=1),
                        help='Days of the synthetic trace: its day '
                             'repeated, each after the first shifted and '
                             'scaled a little (seeded by --seed).')
    source.add_argument('--seed', type=int, default=1,
                        help='Seeds the synthetic trace, flavors and '
                             'placement.')
    source.add_argument('--shape', choices=traces.SHAPES,
                        default='planetlab',
                        help='Shape of the synthetic trace: independent '
                             'daily phases, a midday peak shared by every '
                             'VM, four staggered peaks, a day and a night, '
                             'or steady loads of which a share steps up '
                             'and stays (steps).')
    source.add_argument('--step-hours', type=_hours,
                        default=traces.STEP_HOURS,
                        help='The steps shape: hours of the day at which '
                             'a share of the VMs steps up, comma-separated '
                             '(default: 8,16).')
    source.add_argument('--step-share', type=_share,
                        default=traces.STEP_SHARE,
                        help='The steps shape: share of the VMs that steps '
                             'up, dealt evenly over --step-hours (default: '
                             '0.12).')
    source.add_argument('--bursts', action='store_true',
                        help='Replay the trace at 60 s steps with 1-3 '
                             'minute bursts added (seeded by --seed).')
    model = parser.add_argument_group('cluster')
    size = model.add_mutually_exclusive_group()
    size.add_argument('--hosts', type=errors.number(int, minimum=1,
                                                    maximum=MAX_HOSTS),
                      help=f'Hosts of the cluster (1 to {MAX_HOSTS}).')
    size.add_argument('--target-load', type=_percent, default=TARGET_LOAD,
                      help='Without --hosts: size the cluster so that the '
                           'mean host CPU over the trace is this percent.')
    size.add_argument('--peak-load', type=_percent,
                      help='Size the cluster for the trace\'s busiest step '
                           'instead: its hosts this percent busy then.')
    model.add_argument('--host-vcpus', type=errors.number(int, minimum=1),
                       default=32, help='Physical CPUs of a host.')
    model.add_argument('--host-ram-mb', type=errors.number(int, minimum=1),
                       default=512 * 1024, help='Memory of a host, MB.')
    model.add_argument('--cpu-allocation-ratio', type=_positive,
                       default=8.0,
                       help='vCPUs a host may allocate per physical CPU.')
    model.add_argument('--ram-allocation-ratio', type=_positive,
                       default=1.0,
                       help='Memory a host may allocate per MB it has.')
    model.add_argument(
        '--flavors', type=cluster.parse_flavors,
        default=cluster.DEFAULT_FLAVORS,
        help='name:vcpus:ram_mb:weight,... (default: 40%% 1 vCPU/2 GB, '
             '35%% 2/4, 20%% 4/8, 5%% 8/16)')
    model.add_argument('--placement', choices=('spread', 'random'),
                       default='spread',
                       help='Initial placement: Nova\'s default weighers '
                            '(spread) or a random host that fits.')
    model.add_argument('--bandwidth-mbps', type=_positive,
                       help='Live-migration bandwidth, Mbit/s (default: '
                            '[drs] migration_bandwidth).')
    model.add_argument('--dirty-rate', type=errors.number(float, minimum=0),
                       help='MiB/s of RAM each busy core of a migrating '
                            'instance dirties (default: [drs] '
                            'migration_dirty_rate).')
    model.add_argument('--max-concurrent-live-migrations',
                       type=errors.number(int, minimum=0),
                       help='Outgoing live migrations at once per source '
                            'compute, the rest queued; 0: no limit '
                            '(default: [DEFAULT] '
                            'max_concurrent_live_migrations of '
                            '--config-file, Nova\'s 1).')
    upkeep = parser.add_argument_group('maintenance')
    upkeep.add_argument(
        '--maintenance', choices=('drain', 'rolling'),
        help='Take hosts into maintenance: one host for good (drain), or '
             'every host in turn, each brought back after its work '
             '(rolling).')
    upkeep.add_argument('--maintenance-start',
                        type=errors.number(float, minimum=0), default=0.0,
                        help='Seconds into the trace when the (first) host '
                             'enters maintenance.')
    upkeep.add_argument('--maintenance-host',
                        help='The host to drain (default: the first).')
    upkeep.add_argument('--work-time', type=errors.number(float, minimum=0),
                        default=1800.0,
                        help='Rolling: seconds a host stays in maintenance '
                             'once empty.')
    upkeep.add_argument('--drain-deadline', type=_positive, default=3600.0,
                        help='Seconds after entering when a host\'s work '
                             'starts even if it is not empty; what is on it '
                             'then is left behind.')
    energy = parser.add_argument_group('power')
    energy.add_argument(
        '--power', action='store_true',
        help='Model host power states and energy (needed by the '
             f'{", ".join(strategies.POWER)} strategies).')
    defaults = power_mod.PowerModel()
    energy.add_argument('--idle-watts', type=errors.number(float, minimum=0),
                        default=defaults.idle_watts,
                        help='A host\'s power at idle, W.')
    energy.add_argument('--peak-watts', type=errors.number(float, minimum=0),
                        default=defaults.peak_watts,
                        help='A host\'s power at full CPU, W.')
    energy.add_argument('--standby-watts',
                        type=errors.number(float, minimum=0),
                        default=defaults.standby_watts,
                        help='A host\'s power in standby (soft off), W.')
    energy.add_argument('--boot-seconds', type=errors.number(float, minimum=0),
                        help='Seconds from power-on to nova-compute up '
                             '(default: [drs] power_boot_seconds).')
    run = parser.add_argument_group('run')
    run.add_argument('--strategies', default=DEFAULT_STRATEGIES,
                     help=f'Comma-separated, from: {", ".join(strategies.ALL)}'
                          f', {strategies.HOST_MAINTENANCE} (default '
                          f'{DEFAULT_STRATEGIES}).')
    run.add_argument('--all-strategies', action='store_true',
                     help='All of them, Watcher\'s included.')
    run.add_argument('--config-file', action='append', default=[],
                     help='Config file with the [drs] options to simulate.')
    run.add_argument('--watcher-threshold', type=_percent,
                     help='workload_balance threshold, percent (default: '
                          '[drs] cpu_threshold, for a like-for-like run).')
    run.add_argument('--ping-pong-periods', type=errors.number(int, minimum=1),
                     help='A return to a host left this many periods ago '
                          'or less is a ping-pong (default: 3 hours).')
    run.add_argument('--output-dir', default='bench-output/rebalance',
                     help='Where rebalance.csv, .json and .png are '
                          'written; checked before the run.')
    run.add_argument('--no-plot', action='store_true',
                     help='Skip the PNG (and matplotlib).')


def add_parser(subparsers, parents=()) -> argparse.ArgumentParser:
    """Mount as ``nova-drs simulate``."""
    parser = subparsers.add_parser(
        'simulate', parents=list(parents),
        help='Replay a CPU trace and compare strategies.',
        description=__doc__)
    _arguments(parser)
    parser.set_defaults(handler=run)
    return parser


#: Nova's own option, as its computes and our drains read it.
NOVA_OPTS = (cfg.IntOpt(
    'max_concurrent_live_migrations', min=0,
    default=from_conf.NOVA_MAX_CONCURRENT_LIVE_MIGRATIONS),)


def _drs(config_files: list,
         max_concurrent_live_migrations: int | None = None) -> cfg.ConfigOpts:
    parsed = cfg.ConfigOpts()
    drs_conf.register_opts(parsed)
    parsed.register_opts(NOVA_OPTS)
    parsed([f'--config-file={path}' for path in config_files],
           project='nova', default_config_files=[])
    if max_concurrent_live_migrations is not None:
        parsed.set_override('max_concurrent_live_migrations',
                            max_concurrent_live_migrations)
    drs_conf.validate(parsed)
    return parsed


def _trace(args) -> traces.Trace:
    if args.trace:
        if args.days:
            raise ValueError('--days is for a synthetic trace; with '
                             '--trace, --steps limits its length')
        trace = traces.load(args.trace, args.trace_format, args.step_seconds)
        trace = trace.head(args.steps) if args.steps else trace
    else:
        day = max(1, 86400 // args.step_seconds)
        trace = traces.synthetic(
            args.vms, args.steps or (args.days or 1) * day,
            args.seed, args.step_seconds, args.shape, args.step_hours,
            args.step_share)
    return traces.with_bursts(trace, args.seed) if args.bursts else trace


@dataclasses.dataclass
class Setup:
    """One run's trace, cluster and ``[drs]`` settings, before strategies."""

    trace: traces.Trace
    vms: list
    spec: cluster.ClusterSpec
    config: object
    settings: engine.Settings
    #: Hosts in maintenance over the run, or None.
    maintenance: maintenance_mod.Schedule | None = None
    #: The hosts' power model, or None when power is not modelled.
    power: power_mod.PowerModel | None = None
    #: Power management's options, for ``balanced+power``.
    power_config: power_plan.PowerConfig | None = None

    @property
    def hosts(self) -> int:
        return self.spec.hosts


def prepare(args) -> Setup:
    """The trace, cluster and settings described by parsed ``args``.

    Raises the errors :func:`run` reports (bad trace, options or config).
    """
    conf = _drs(args.config_file, args.max_concurrent_live_migrations)
    trace = _trace(args)
    config = from_conf.planner_config(conf)
    vms = cluster.assign_flavors(trace.names, args.flavors, args.seed)
    if args.hosts:
        hosts = args.hosts
    elif args.peak_load:
        hosts = cluster.hosts_for_peak(vms, trace, args.peak_load,
                                       args.host_vcpus)
    else:
        hosts = cluster.hosts_for_load(vms, trace, args.target_load,
                                       args.host_vcpus)
    if hosts > MAX_HOSTS:
        raise ValueError(f'--target-load {args.target_load} needs '
                         f'{hosts} hosts, more than {MAX_HOSTS}')
    spec = cluster.ClusterSpec(
        hosts=hosts, host_vcpus=args.host_vcpus,
        host_memory_mb=args.host_ram_mb,
        cpu_allocation_ratio=args.cpu_allocation_ratio,
        ram_allocation_ratio=args.ram_allocation_ratio,
        bandwidth_mbps=_given(args.bandwidth_mbps,
                              config.migration_bandwidth),
        dirty_mib_per_core=_given(args.dirty_rate,
                                  config.migration_dirty_rate),
        max_concurrent_live_migrations=conf.max_concurrent_live_migrations,
        placement=args.placement, seed=args.seed)
    interval = conf.drs.rebalance_interval
    settings = engine.Settings(
        config=config,
        windows=functools.partial(from_conf.metrics_windows, conf),
        interval=interval, cooldown=from_conf.instance_cooldown(conf),
        no_return=conf.drs.no_return_time,
        ping_pong_periods=(args.ping_pong_periods
                           or max(1, 3 * 3600 // interval)),
        relief_check_periods=-(-conf.drs.relief_check_delay // interval))
    power = power_config = None
    if args.power:
        power_config = power_plan.PowerConfig.from_conf(conf, interval)
        boot = _given(args.boot_seconds, power_config.boot_seconds)
        power = power_mod.PowerModel(args.idle_watts, args.peak_watts,
                                     args.standby_watts, boot)
        power_config = dataclasses.replace(power_config, boot_seconds=boot)
    return Setup(trace, vms, spec, config, settings,
                 _maintenance(args, hosts), power, power_config)


def _given(value, default):
    """An option's value, or the ``[drs]`` default when it is not given."""
    return default if value is None else value


def _maintenance(args, hosts: int) -> maintenance_mod.Schedule | None:
    """The schedule the maintenance options describe, or None."""
    if args.maintenance == 'rolling':
        return maintenance_mod.rolling(args.maintenance_start, args.work_time,
                                   args.drain_deadline)
    if args.maintenance != 'drain':
        return None
    names = cluster.host_names(hosts)
    host = args.maintenance_host or names[0]
    if host not in names:
        raise ValueError(f'--maintenance-host {host}: no such host (the '
                         f'hosts are {names[0]} to {names[-1]})')
    return maintenance_mod.drain(host, args.maintenance_start,
                             args.drain_deadline)


def _output_dir(path: str) -> str:
    """Create ``path`` if needed and prove it writable, before the run."""
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, '.nova-drs-write-test')
        with open(probe, 'w'):
            pass
        os.unlink(probe)
    except OSError as exc:
        raise errors.CLIError(
            f'--output-dir {path}: not writable ({exc.strerror})',
            errors.USAGE)
    return path


def run(args, conf=None) -> int:
    """Run the simulation described by parsed ``args``; the exit code.

    Raises :class:`~nova_drs_scheduler.cli.errors.CLIError` (usage) for
    bad input, before anything long runs.
    """
    if not args.no_plot:
        extras.load('simulate', 'matplotlib',
                    'the simulator\'s plot (or --no-plot)')
    _output_dir(args.output_dir)
    try:
        setup = prepare(args)
        trace, spec, settings = setup.trace, setup.spec, setup.settings
        config, hosts = setup.config, setup.hosts
        interval = settings.interval
        names = (strategies.ALL if args.all_strategies
                 else [n.strip() for n in args.strategies.split(',')
                       if n.strip()])
        if not names:
            raise ValueError('no strategy to run')
        threshold = args.watcher_threshold or config.cpu_threshold
        watcher = {'workload_balance': {'threshold': threshold}}
        chosen = [strategies.build(n, config, args.seed, watcher,
                                   setup.power_config)
                  for n in names]
        results = [engine.run(trace, setup.vms, spec, s, settings,
                              setup.maintenance, setup.power)
                   for s in chosen]
    except (traces.TraceError, ValueError, cfg.Error,
            watcher_adapter.WatcherMissingError) as exc:
        raise errors.CLIError(str(exc), errors.USAGE)
    source = describe(args)
    parameters = {
        'title': f'{source}: {len(trace.names)} VMs, {hosts} hosts',
        'trace': source, 'vms': len(trace.names), 'steps': len(trace.steps),
        'step_seconds': trace.step_seconds, 'hosts': hosts,
        'interval': interval, 'periods': settings.periods(trace),
        'ping_pong_periods': settings.ping_pong_periods,
        'cluster': dataclasses.asdict(spec),
        'flavors': [dataclasses.asdict(f) for f in args.flavors],
        'planner_config': dataclasses.asdict(config), 'watcher': watcher,
        'maintenance': (dataclasses.asdict(setup.maintenance)
                        if setup.maintenance else None),
        'power': (dataclasses.asdict(setup.power) if setup.power else None),
        'mean_host_load_percent': round(results[0].mean_load, 1),
    }
    paths = report.write_all(args.output_dir, parameters, results,
                             plot=not args.no_plot)
    if getattr(args, 'json', False):
        json.dump(dict(report.document(parameters, results), files=paths),
                  sys.stdout, indent=1)
        sys.stdout.write('\n')
        return errors.OK
    print(f"{parameters['title']}; mean host CPU "
          f"{parameters['mean_host_load_percent']}%; "
          f"{parameters['periods']} periods of {interval}s")
    print(report.markdown(report.rows(results, parameters), parameters))
    for path in paths:
        print(f'wrote {path}')
    return errors.OK


def describe(args) -> str:
    """The trace in words, for titles and reports."""
    source = args.trace or f'synthetic {args.shape} (seed {args.seed})'
    if args.days and args.days > 1 and not args.trace:
        source += f' over {args.days} days'
    source = f'{source} with bursts' if args.bursts else source
    if not (args.hosts or args.peak_load) and args.target_load != TARGET_LOAD:
        source += f', sized for {args.target_load:g} % mean CPU'
    return source


def parser() -> argparse.ArgumentParser:
    """``nova-drs-simulate``'s argument parser."""
    parsed = errors.Parser(prog='nova-drs-simulate', description=__doc__,
                           epilog=errors.EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    _arguments(parsed)
    parsed.add_argument('--json', action='store_true',
                        help='Print the result as JSON instead of a table.')
    return parsed


def main(argv=None) -> int:
    """``nova-drs-simulate``: the same command, without Nova installed."""
    args = parser().parse_args(argv)
    return errors.handle('nova-drs-simulate', lambda: run(args))


if __name__ == '__main__':
    sys.exit(main())
