"""Level: after the violated hosts, in pools whose hosts' load jumps
often or that power management packed, keep the hosts nearest their
threshold level (``[drs] level_*``, policies that ``levels``).

Where load jumps often (the pool's mean ``rise_rate``), a host is over
its threshold before any reaction; where power management holds a host
out, the pool runs packed, and a woken host comes back empty: the pool
levels until ``level_after_wake`` after its last wake.  So the
hottest host within ``level_band`` of its threshold sends the largest
instance that leaves the coolest destination no hotter than itself; its
destinations pass the same rails.

Leveling moves load before it hurts, so it pays only where the load it
moves stays.  A pool learns it from its relief checks
(``HostSnapshot.loads_stayed``): where most moved loads were gone at the
check (bursts that end within minutes), it stops leveling
(:func:`.working.unsteady`) and relieves violations only.
"""

import collections
from collections.abc import Mapping

from nova_drs_scheduler.planning import cost_benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import moves
from nova_drs_scheduler.planning import policies
from nova_drs_scheduler.planning import search
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base

GOAL = model.LEVEL

#: A leveling move moves at least this many points of its source's CPU:
#: less is not worth a live migration.
_LEVEL_LEAST = 2.0


def rise_rates(hosts: Mapping[str, model.HostSnapshot],
               config: model.PlannerConfig) -> dict:
    """Per pool, the mean rise rate of its hosts with a sample (an unknown
    rate counts as 0): the evidence leveling waits for."""
    rates = collections.defaultdict(list)
    for host in hosts.values():
        if host.cpu_percent is not None and working.balanced(host):
            rates[working.pool_key(host, config)].append(
                host.rise_rate or 0.0)
    return {pool: sum(found) / len(found) for pool, found in rates.items()}


def leveling_pools(hosts: Mapping[str, model.HostSnapshot],
                   config: model.PlannerConfig) -> dict:
    """Per pool that levels, why: its load jumps often (its mean rise
    rate), or power management packed it (:func:`packed`), which a
    reaction to violations alone would spread again only once hosts are
    over; unless its moved loads do not stay (:func:`.working.unsteady`)."""
    return _split(hosts, config, working.unsteady(hosts, config))[0]


def _split(hosts, config, bursty) -> tuple[dict, list]:
    """``(why each pool levels, notes on the pools that would but whose
    moved loads do not stay)``, ``bursty`` being :func:`.working.unsteady`'s
    verdict."""
    wanted = _wanted(hosts, config)
    why = {pool: w for pool, w in wanted.items() if pool not in bursty}
    notes = [f'pool {pool or "global"}: no leveling though {wanted[pool]}: '
             f'its moved loads do not stay, {bursty[pool]}'
             for pool in sorted(set(wanted) - set(why), key=str)]
    return why, notes


def _wanted(hosts, config) -> dict:
    """Per pool that would level whatever its moves taught it, why."""
    power = packed(hosts, config)
    why = {}
    for pool, rate in rise_rates(hosts, config).items():
        if rate >= config.level_rise_rate:
            why[pool] = (f'load jumps {rate:.1f} times an hour per host '
                         f'(level_rise_rate {config.level_rise_rate:g})')
        elif pool in power:
            why[pool] = power[pool]
    return why


def packed(hosts: Mapping[str, model.HostSnapshot],
           config: model.PlannerConfig) -> dict:
    """Per pool that power management packed, why: it holds one of its
    hosts out (in standby, entering it or waking), so the pool runs on
    fewer hosts, or it woke one less than ``level_after_wake`` ago: a
    woken host comes back empty, and reacting to violations alone would
    refill it only as the others go over, in the ramp that woke it."""
    found = {}
    # A host held out is named before one woken.
    for host in sorted(hosts.values(),
                       key=lambda h: (h.power == model.ON, h.name)):
        if not working.balanced(host):
            continue
        if host.power != model.ON:
            found.setdefault(working.pool_key(host, config),
                             f'power management holds host {host.name} '
                             f'out ({host.power})')
        elif (host.woken_ago is not None
              and host.woken_ago < config.level_after_wake):
            found.setdefault(working.pool_key(host, config),
                             f'power management woke host {host.name} '
                             f'{host.woken_ago / 60:.0f} minutes ago')
    return found


def leveling_sources(hosts: Mapping[str, model.HostSnapshot],
                     config: model.PlannerConfig) -> set:
    """The hosts this period may level from, at their measured load.

    The live service measures their instances, as it does a violated
    host's: the planner can only move an instance whose load it knows.
    """
    if config.level_gap <= 0 or not policies.get(config.policy).levels:
        return set()
    pools = leveling_pools(hosts, config)
    return {name for name, host in hosts.items()
            if host.cpu_percent is not None and working.balanced(host)
            and working.pool_key(host, config) in pools
            and host.cpu_percent >= host.cpu_threshold - config.level_band}


def run(work: working.Working) -> None:
    """Level from the hottest host first while the total limit allows."""
    cfg = work.config
    if not work.policy.levels or cfg.level_gap <= 0:
        return
    why, notes = _split(work.hosts, cfg, work.unsteady)
    work.notes.extend(notes)
    done = {n for n, h in work.hosts.items() if work.pool(h) not in why}
    while (work.snapshot.inflight_total + len(work.moves)
           < cfg.max_concurrent_migrations):
        source = _level_source(work, done)
        if source is None:
            return
        done.add(source.name)
        _level_from(work, source, why)


def _level_source(work, done):
    """The hottest host within ``level_band`` of its threshold that may
    still send a migration, or None."""
    cfg = work.config
    limit = max(cfg.max_concurrent_migrations_per_host,
                cfg.max_concurrent_migrations_per_violated_host)
    best = None
    for name, host in work.hosts.items():
        cpu = work.cpu[name]
        if (name in done or cpu is None
                or work.barred[name] not in (None, 'violated')
                or work.busy[name] >= limit
                or cpu < host.cpu_threshold - cfg.level_band):
            continue
        if best is None or (-cpu, name) < best[0]:
            best = ((-cpu, name), host)
    return best and best[1]


def _level_from(work, source, why) -> None:
    """Plan the leveling move off ``source``, if it has one."""
    top = work.cpu[source.name]
    pool = work.pool(source)
    dests = sorted((work.cpu[n], n) for n in work.floors
                   if n != source.name
                   and work.pool(work.hosts[n]) == pool)
    if not dests or top - dests[0][0] <= work.config.level_gap:
        return
    best = None
    for instance in work.by_host.get(source.name, ()):
        load = 100.0 * instance.cpu_cores / source.vcpus
        if (instance.blocked is not None or instance.uuid in work.moved
                or load < _LEVEL_LEAST):
            continue
        key = (-load, instance.memory_mb, instance.uuid)
        if best is not None and key > best[0]:
            continue
        option = _level_option(work, source, instance, top - load, dests)
        if option is not None:
            best = (key, option)
    if best is None:
        return
    option = best[1]
    instance = option.removal.instance
    found = work.candidates(instance, work.view)
    if option.destination.name not in found.allowed:
        option = _level_option(work, source, instance, option.removal.cpu,
                               dests, set(found.allowed))
        if option is None:
            return
    dest = option.destination.name
    estimate = cost_benefit.estimate(work, source, option)
    if estimate is not None and not estimate.pays:
        work.notes.append(
            f'host {source.name}: level, no move: {cost_benefit.RULE} '
            f'(instance {instance.uuid} to {dest}: relief '
            f'{estimate.relief:.2f} <= cost {estimate.cost:.2f} '
            f'core-minutes)')
        return
    reason = (f'level: {why[pool]}; host {source.name} at '
              f'{top:.1f}% is the hottest within '
              f'{work.config.level_band:g} points of its threshold, '
              f'{dest} the coolest destination at '
              f'{work.cpu[dest]:.1f}%')
    indexed = source.name in work.floors
    if indexed:
        work.leave(source.name)
    moves.apply(work, source, option, found, [], [], reason=reason,
                goal=model.LEVEL, estimate=estimate)
    if indexed:
        work.enter(source.name)


def _level_option(work, source, instance, ceiling, dests, allowed=None):
    """The coolest destination (in ``allowed`` if given) that the
    policy accepts and that ``instance`` leaves no hotter than
    ``ceiling``, its source's CPU after the move; None if none."""
    left = search.barred_for(work, instance)
    for cpu_d, name in dests:
        host = work.hosts[name]
        if cpu_d + 100.0 * instance.cpu_cores / host.vcpus > ceiling:
            return None
        if name in left or (allowed is not None and name not in allowed):
            continue
        cpu, ram = work.project(host, instance.cpu_cores,
                                instance.memory_mb)
        if work.policy.destination(host, cpu, ram,
                                   work.ranking(host))[0] is None:
            return base.Option(work.removal(source, instance), host,
                               cpu, ram, base.pressure(host, cpu, ram))
    return None
