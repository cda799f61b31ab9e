"""The demo's story: periods of load, the rebalancer's answers, a summary.

Each period the VMs' loads come from the scenario (or ``--trace``); host
loads follow from where Nova says each server is *now*, so a completed
migration moves its load.  The same loads with the servers left where they
booted give the "without DRS" figures of the summary.
"""

import dataclasses
import os

from nova_drs_scheduler.demo import cloud as demo_cloud
from nova_drs_scheduler.demo import plot
from nova_drs_scheduler.demo import scenario

#: The demo's periods run a few seconds apart, not a minute: the load
#: trends the cost-benefit rule reads (half-life ``expected_load_halflife``,
#: 600 s) cannot build up in them, so the rule is off here
#: (``benefit_horizon`` 0; doc/balancing.md, "Moves that pay for
#: themselves").
DRS = {
    'automation': 'automatic', 'mode': 'aggregate',
    'unaggregated_hosts': 'pool', 'cpu_threshold': 75.0, 'window': 2,
    'stabilization': 2, 'margin': 10.0, 'max_migrations_per_period': 4,
    'instance_cooldown': 3600, 'benefit_horizon': 0,
}


@dataclasses.dataclass
class Result:
    periods: int = 0
    threshold: float = DRS['cpu_threshold']
    #: {host: [load per period]} with DRS, and with no rebalancing.
    loads: dict = dataclasses.field(default_factory=dict)
    baseline: dict = dataclasses.field(default_factory=dict)
    #: [{period, instance, name, source, destination, status}]
    migrations: list = dataclasses.field(default_factory=list)

    def overloaded(self, loads: dict) -> int:
        return sum(1 for series in loads.values() for load in series
                   if load > self.threshold)

    def overloaded_series(self, loads: dict) -> list:
        """Hosts over the threshold, per period."""
        return [sum(1 for series in loads.values() if series[period] >
                    self.threshold) for period in range(self.periods)]

    def longest_overload(self, loads: dict) -> int:
        """Most consecutive periods one host stayed over the threshold.

        Unlike the worst load (a fake host's own four servers can fill it
        no further than 80 %, with or without DRS), this is what DRS
        shortens.
        """
        longest = 0
        for series in loads.values():
            run = 0
            for load in series:
                run = run + 1 if load > self.threshold else 0
                longest = max(longest, run)
        return longest

    def summary(self) -> dict:
        statuses = [m['status'] for m in self.migrations]
        return {
            'periods': self.periods,
            'cpu_threshold': self.threshold,
            'overloaded_host_periods_without_drs':
                self.overloaded(self.baseline),
            'overloaded_host_periods_with_drs': self.overloaded(self.loads),
            'longest_overload_periods_without_drs':
                self.longest_overload(self.baseline),
            'longest_overload_periods_with_drs':
                self.longest_overload(self.loads),
            'migrations': len(self.migrations),
            'migrations_completed': statuses.count('completed'),
            'migrations_failed': sum(1 for s in statuses
                                     if s not in ('completed',)),
        }


def host_loads(cores: dict, hosts_of: dict) -> dict:
    """Percent of each host's CPUs used by the servers on it."""
    totals = dict.fromkeys(scenario.HOSTS, 0.0)
    for uuid, used in cores.items():
        totals[hosts_of[uuid]] += used
    return {host: 100.0 * used / scenario.HOST_VCPUS
            for host, used in totals.items()}


def _row(period, loads, record, names, threshold) -> str:
    cells = ' '.join(
        f'{host[4:]:>2}:{loads[host]:3.0f}'
        + ('!' if loads[host] > threshold else ' ')
        for host in scenario.HOSTS)
    violated = [v['host'] for v in record.get('hosts', [])
                if v.get('violated')]
    moves = ', '.join(
        f'{names[m["instance"]]} {m["source"]}->{m["destination"]} '
        f'({m["outcome"]["status"]})' for m in record.get('moves', []))
    return (f'{period:3d} | {cells} | violated: {",".join(violated) or "-"}'
            f' | moves: {moves or "-"}')


def play(trace, output_dir: str, echo=print) -> Result:
    """Run the whole demo; returns its measurements."""
    result = Result()

    def story(cloud):
        servers = cloud.build(scenario.SERVER_VCPUS)
        names = {uuid: name for name, uuid in servers.items()}
        booted = cloud.hosts_of()
        pools = '; '.join(f'{pool}: {",".join(hosts)}'
                          for pool, hosts in scenario.POOLS.items())
        echo(f'Cloud ready: {len(scenario.HOSTS)} computes ({pools}; '
             f'no aggregate: {",".join(scenario.UNAGGREGATED)}), '
             f'{len(servers)} servers of {scenario.SERVER_VCPUS} vCPUs.')
        echo(f'Threshold {result.threshold:.0f}% CPU, window '
             f'{DRS["window"]}, stabilization {DRS["stabilization"]}, '
             f'aggregate mode. "!" marks a host over the threshold.\n')
        for period, step in enumerate(trace.steps):
            cores = {servers[name]: value / 100.0 * scenario.SERVER_VCPUS
                     for name, value in zip(trace.names, step, strict=True)}
            now = cloud.hosts_of()
            loads = host_loads(cores, now)
            cloud.write_metrics(loads, cores)
            record = cloud.finish(cloud.rebalance())
            for host, load in loads.items():
                result.loads.setdefault(host, []).append(load)
            for host, load in host_loads(cores, booted).items():
                result.baseline.setdefault(host, []).append(load)
            for move in record.get('moves', []):
                result.migrations.append({
                    'period': period, 'instance': move['instance'],
                    'name': names[move['instance']],
                    'source': move['source'],
                    'destination': move['destination'],
                    'status': move['outcome']['status']})
            result.periods = period + 1
            echo(_row(period, loads, record, names, result.threshold))

    demo_cloud.run(story, DRS)
    os.makedirs(output_dir, exist_ok=True)
    return result


def report(result: Result, output_dir: str, echo=print) -> dict:
    """Print the summary, write the plot; returns the summary."""
    summary = result.summary()
    summary['plot'] = plot.write(result, os.path.join(
        output_dir, 'demo-host-utilization.png'))
    echo('\nSummary')
    echo('  overloaded host-periods: '
         f'{summary["overloaded_host_periods_without_drs"]} without DRS -> '
         f'{summary["overloaded_host_periods_with_drs"]} with DRS')
    echo('  longest stretch a host stayed over the threshold: '
         f'{summary["longest_overload_periods_without_drs"]} periods '
         f'without DRS -> {summary["longest_overload_periods_with_drs"]} '
         'with DRS')
    echo(f'  migrations: {summary["migrations"]} '
         f'({summary["migrations_completed"]} completed, '
         f'{summary["migrations_failed"]} failed)')
    echo(f'  plot: {summary["plot"]}')
    return summary
