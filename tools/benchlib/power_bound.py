"""The hindsight bound of power management: the least energy a pool needs.

In every period the bound keeps on just the hosts needed to hold that
period's demand, with every host at the band's top in CPU
(``power_band_high``) and under ``ram_threshold`` in RAM, plus what the
product itself keeps: ``max(power_min_hosts, needed + power_reserve_hosts)``.
It knows the future: each host is powered on a boot time before a period
needs it, and draws its idle power while it boots.  The demand is spread
evenly over the hosts on, and charged on the simulator's linear power model
(``simulate/power.py``); the rest draw standby power.  With every host on
it gives the energy of ``balanced`` (all hosts on) but for what migrations
add while they copy and what a host over 100 % cannot draw.

No planner can beat it: it ignores how instances pack into hosts, the time
a drain takes, and a forecast's errors.  A row's *captured* share is its
saving against ``balanced`` over the bound's saving.
"""

import math

JOULES_PER_KWH = 3.6e6


def hosts_needed(cores: float, memory_mb: float, *, host_vcpus: int,
                 host_memory_mb: int, band_high: float, ram_threshold: float,
                 min_hosts: int, reserve_hosts: int, hosts: int) -> int:
    """Hosts one period needs on: the demand at the band's top and under
    the RAM threshold, the reserve on top, never under the minimum, never
    more than the cluster has."""
    # Rounded first, so that exactly n hosts' worth needs n, not n + 1.
    by_cpu = math.ceil(round(cores / (host_vcpus * band_high / 100.0), 9))
    by_ram = math.ceil(round(
        memory_mb / (host_memory_mb * ram_threshold / 100.0), 9))
    return min(hosts, max(min_hosts, max(by_cpu, by_ram) + reserve_hosts))


def hosts_on(needed: list, boot_periods: int) -> list:
    """Hosts on in each period: a host needed in a period is on (or
    booting) from ``boot_periods`` before it."""
    return [max(needed[p:p + boot_periods + 1])
            for p in range(len(needed))]


def energy_kwh(cores: list, on: list, *, hosts: int, host_vcpus: int,
               interval: float, idle_watts: float, peak_watts: float,
               standby_watts: float) -> float:
    """The energy of ``on[p]`` hosts holding ``cores[p]`` evenly, the
    others in standby, each period held for ``interval`` seconds."""
    span = peak_watts - idle_watts
    joules = sum(
        (count * idle_watts + span * min(demand / host_vcpus, count)
         + (hosts - count) * standby_watts) * interval
        for demand, count in zip(cores, on, strict=True))
    return joules / JOULES_PER_KWH


def bound(setup) -> dict:
    """The bound of one simulator setup (``simulate.cli.Setup`` run with
    ``--power``), and the same accounting with every host on."""
    spec, power, cfg = setup.spec, setup.power, setup.power_config
    interval, trace = setup.settings.interval, setup.trace
    memory = float(sum(vm.flavor.memory_mb for vm in setup.vms))
    cores = []
    for period in range(setup.settings.periods(trace)):
        step = min(int(period * interval // trace.step_seconds),
                   len(trace.steps) - 1)
        row = trace.steps[step]
        cores.append(sum(row[vm.index] * vm.flavor.vcpus
                         for vm in setup.vms) / 100.0)
    needed = [hosts_needed(
        demand, memory, host_vcpus=spec.host_vcpus,
        host_memory_mb=spec.host_memory_mb, band_high=cfg.band_high,
        ram_threshold=setup.config.ram_threshold, min_hosts=cfg.min_hosts,
        reserve_hosts=cfg.reserve_hosts, hosts=spec.hosts)
        for demand in cores]
    on = hosts_on(needed, math.ceil(power.boot_seconds / interval))
    watts = dict(hosts=spec.hosts, host_vcpus=spec.host_vcpus,
                 interval=interval, idle_watts=power.idle_watts,
                 peak_watts=power.peak_watts,
                 standby_watts=power.standby_watts)
    return {
        'bound_kwh': round(energy_kwh(cores, on, **watts), 2),
        'bound_all_on_kwh': round(
            energy_kwh(cores, [spec.hosts] * len(cores), **watts), 2),
        'bound_host_hours_on': round(sum(on) * interval / 3600.0, 1),
    }


def captured(row_kwh: float, balanced_kwh: float,
             bound_kwh: float) -> float | None:
    """Percent of the bound's saving against ``balanced`` that a row's
    energy captures (None when the bound saves nothing)."""
    possible = balanced_kwh - bound_kwh
    if possible <= 0:
        return None
    return round(100.0 * (balanced_kwh - row_kwh) / possible, 1)
