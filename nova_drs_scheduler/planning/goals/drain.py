"""Drain: hosts in maintenance or entering standby send away every
instance, largest first, before any other goal plans.

Destinations are Nova's allowed hosts of the source's pool that the
planner's rails accept (schedulable, judged, not violated, not in
maintenance; automation off is no bar).  The policy's preferred one (for
``balanced``, under its threshold by the margin) wins; when the policy
accepts none, the drain still proceeds to the host left with the least
pressure, and says so.  A host waiting in the maintenance queue comes
last: only when no other host can take the instance.
"""

import collections

from nova_drs_scheduler.planning import capacity
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import moves
from nova_drs_scheduler.planning import reasons
from nova_drs_scheduler.planning import search
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base

GOAL = model.DRAIN

#: Planner rules that bar a host from balancing but not from a drain.
_DRAIN_DESTINATION = {'automation-off': None}

#: A host waiting in the maintenance queue: a drain sends there only when
#: no host out of the queue can take the instance, since what it
#: receives moves again when its own turn comes.
QUEUED = 'queued'


def run(work: working.Working) -> None:
    """Plan each draining host's moves, by host name."""
    for name in sorted(work.hosts):
        if work.hosts[name].draining:
            work.drains.append(_drain_host(work, work.hosts[name]))


def _drain_host(work, source) -> model.Drain:
    """Plan the moves off a host in maintenance, within the limits.

    Largest first (memory, then vCPUs): the instances hardest to place
    go while the destinations have the most room, and the small ones
    fit in what is left.  An instance held by a move in flight or a
    limit waits; one that cannot go (opted out, not in a movable
    state, quarantined, no allowed destination) is a blocker.
    """
    instances = work.by_host.get(source.name, ())
    planned, waiting, blockers = [], [], []
    for instance in sorted(instances, key=lambda i: (
            -i.memory_mb, -i.vcpus, i.uuid)):
        if instance.blocked is not None:
            (waiting if instance.transient else blockers).append(
                model.Rejection(instance.uuid, 'blocked',
                                instance.blocked))
            continue
        limit = work.limit(
            source.name,
            work.config.drain_max_concurrent_migrations_per_host,
            'limit:per-draining-host', drain=True)
        if limit:
            waiting.append(model.Rejection(instance.uuid, limit))
            continue
        found = work.candidates(instance, work.view)
        option, rule, detail = _drain_option(work, source, instance, found)
        if option is None:
            (waiting if rule == 'limit:per-host' else blockers).append(
                model.Rejection(instance.uuid, rule, detail))
            continue
        moves.apply(work, source, option, found, [], [], reason=detail,
                    goal=model.DRAIN)
        planned.append(instance.uuid)
    return model.Drain(source.name, len(instances), tuple(planned),
                       tuple(waiting), tuple(blockers))


def _drain_option(work, source, instance, found):
    """``(option, None, reason)`` for one instance leaving ``source``,
    or ``(None, rule, detail)`` when it cannot go this period."""
    cfg, pool = work.config, work.pool(source)
    per_host = cfg.drain_destination_concurrency
    rules = collections.Counter(r.rule for r in found.rejected)
    # A standby's drain follows the placement the power planner checked
    # it by (the least loaded host in CPU), or its check would not hold.
    weights = {} if source.power == model.ENTERING else free_weights(
        found, capacity.taken(work.view.planned))
    preferred = fallback = None
    for name in sorted(found.allowed):
        host = work.hosts.get(name)
        if name == source.name or host is None:
            continue
        rule = _DRAIN_DESTINATION.get(work.barred[name],
                                      work.barred[name]) or (
            'pool' if work.pool(host) != pool else None)
        if rule is None and name in instance.refused:
            rule = search.REFUSED
        if rule is None and work.busy[name] >= per_host:
            rule = 'limit:per-host'
        if rule is not None:
            rules[rule] += 1
            continue
        cpu, ram = work.project(host, instance.cpu_cores,
                                instance.memory_mb)
        refused, score = work.policy.drain(host, cpu, ram, cfg,
                                           weights.get(name))
        option = (host, cpu, ram)
        if refused is None and host.queued:
            refused = QUEUED
        if refused is None:
            if preferred is None or (score, name) < preferred[0]:
                preferred = ((score, name), option)
        else:
            rules[refused] += 1
            key = (host.queued, base.pressure(host, cpu, ram), name)
            if fallback is None or key < fallback[0]:
                fallback = (key, option)
    chosen = preferred or fallback
    if chosen is None:
        only_busy = set(rules) == {'limit:per-host'}
        detail = reasons.summary(rules)
        if instance.refused:
            detail += (f' (Nova refused it at start on '
                       f'{", ".join(instance.refused)})')
        return (None, 'limit:per-host' if only_busy else
                'no-destination', detail)
    host, cpu, ram = chosen[1]
    option = base.Option(work.removal(source, instance), host, cpu,
                         ram, base.pressure(host, cpu, ram))
    how = 'cold' if instance.migration == model.COLD else 'live'
    why = ('standby' if source.power == model.ENTERING
           else 'maintenance')
    reason = (f'{why}: host {source.name} is draining; {how} '
              f'migration to {host.name}, ')
    policy = work.policy.name
    if preferred is not None:
        reason += (f'the {policy} policy\'s preferred '
                   f'destination ({reasons.fmt("projected", cpu, ram)})')
    elif host.queued:
        others = collections.Counter(rules)
        del others[QUEUED]
        reason += (f'a host waiting in the maintenance queue '
                   f'({reasons.fmt("projected", cpu, ram)}): no host out '
                   f'of the queue can take it ('
                   + (reasons.summary(others) if others
                      else 'every other allowed host is queued') + ')')
    else:
        reason += (f'the least loaded allowed host '
                   f'({reasons.fmt("projected", cpu, ram)}): the '
                   f'{policy} policy accepts none '
                   f'({reasons.summary(rules)})')
    return option, None, reason


#: Placement's resource classes that Nova's default weighers rank by:
#: the RAM weigher's and the CPU weigher's.
WEIGHED = ('MEMORY_MB', 'VCPU')


def free_weights(found: model.Candidates, took) -> dict:
    """Each allowed host's weight as Nova's RAM and CPU weighers give it:
    placement's free MB and vCPUs once the moves planned before are
    counted, each normalised over the hosts (the least 0, the most 1),
    then added.  (The instance's own request, the same on every host,
    changes no weight.)  Empty when placement did not say."""
    free = {}
    for name in found.allowed:
        room = found.room.get(name) or {}
        if any(rc not in room for rc in WEIGHED):
            return {}
        taken = took.get(name, {})
        free[name] = [room[rc] - taken.get(rc, 0) for rc in WEIGHED]
    if not free:
        return {}
    weights = dict.fromkeys(free, 0.0)
    for column in range(len(WEIGHED)):
        values = [v[column] for v in free.values()]
        low, high = min(values), max(values)
        if high > low:
            for name, v in free.items():
                weights[name] += (v[column] - low) / (high - low)
    return weights
