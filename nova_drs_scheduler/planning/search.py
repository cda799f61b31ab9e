"""The destination search every goal but a drain shares, and why each
host it did not choose was refused.

A destination passes the planner's rails (judged, not violated, in the
source's pool, a free slot; not a host the instance left lately or where
Nova refused it at start) and the policy, at the margin or, in a warm
pool, inside it at the graded margin (:func:`graded`).  Off a host far
past its CPUs, a last stage takes hosts past their threshold too
(:func:`past_threshold`).
"""

import collections
import functools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import reasons
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base

#: The stages of a search, in the order a violated host tries them, each
#: also how a note introduces its refusals: at the margin; inside it (a
#: warm pool, or a starved source); past a destination's threshold (a
#: source far past its CPUs, :data:`PAST_DEMAND`).
AT_MARGIN, INSIDE, PAST = None, 'inside the margin', 'past the threshold'

#: CPU demand, percent of its CPUs, from which a host may send past a
#: destination's threshold (:func:`past_threshold`).  Closer to 100 % it
#: loses little, and what it sends keeps its destination past its
#: threshold once the peak is over: on the benchmark's shared peak, from
#: 100 % the stage took unserved demand down by two thirds for 9 % more
#: overloaded host-periods; from 110 % by two fifths for 3 % more
#: (doc/benchmarks-balancing.md).
PAST_DEMAND = 110.0

#: The rule refusing a destination past its threshold: it would end
#: within ``margin`` of its CPUs, or starved, or past its RAM threshold.
NEAR_FULL = 'near-full'

#: The rule barring a host from a move inside the margin: one of the
#: source's instances came from it within ``no_return_time``.
CAME_FROM = 'came-from'

#: The rule barring a host where Nova's scheduler refused the instance
#: at start lately (``InstanceSnapshot.refused``).
REFUSED = 'refused-at-start'

#: Why a host is barred for one instance, by rule, for the record.
_BARRED_DETAIL = {
    'no-return': 'the instance left it recently',
    REFUSED: 'Nova refused this move there at start (no valid host)'}


def search(work: working.Working, source: model.HostSnapshot,
           removal: base.Removal, allowed: set | None,
           stage: str | None) -> tuple[base.Option | None,
                                       collections.Counter]:
    """The policy's preferred destination for one removal among the
    indexed hosts of the source's pool (and in ``allowed`` if given);
    :data:`INSIDE`: among those and the hosts resting at the margin,
    judged by :func:`inside_margin`; :data:`PAST`: among those and the
    violated ones, judged by :func:`past_threshold`.

    Returns ``(option or None, Counter of rules refusing the hosts
    scanned)``.  Scans in floor order and stops at the first host whose
    floor cannot beat the best projected score (past the first stage,
    every host: a resting host has no floor).
    """
    cores = removal.instance.cpu_cores
    memory = removal.instance.memory_mb
    decide = _decide(work, source, stage)
    hosts = work.hosts
    pool = work.pool(source)
    order = (_open_hosts(work, source, stage) if stage
             else work.order.get(pool, ()))
    left = barred_for(work, removal.instance)
    refused = collections.Counter()
    best = None
    for floor, name in order:
        if (best is not None and floor is not None
                and (floor, name) > best[:2]):
            break
        if allowed is not None and name not in allowed:
            continue
        if name in left:
            refused[left[name]] += 1
            continue
        host = hosts[name]
        cpu, ram = work.project(host, cores, memory)
        rule, score = decide(host, cpu, ram)
        if rule is not None:
            refused[rule] += 1
        elif best is None or (score, name) < best[:2]:
            best = (score, name, cpu, ram)
    if best is None:
        return None, refused
    _, name, cpu, ram = best
    host = hosts[name]
    return base.Option(removal, host, cpu, ram,
                       base.pressure(host, cpu, ram)), refused


def outside(work: working.Working, host: model.HostSnapshot, cpu: float,
            ram: float | None) -> tuple:
    """``(rule, score)`` of a destination at its projected load."""
    return work.policy.destination(host, cpu, ram, work.ranking(host))


def inside_margin(work: working.Working, source: model.HostSnapshot,
                  host: model.HostSnapshot, cpu: float,
                  ram: float | None) -> tuple:
    """``(rule, score)`` of a destination for a move off ``source``
    inside the margin: judged by the policy with :func:`margin_inside`;
    but a host the margin refuses is never one that one of the source's
    instances came from within ``no_return_time``, so that no pair of
    hosts trades load both ways inside the margin."""
    rule, _ = work.policy.destination(host, cpu, ram, work.ranking(host))
    if rule not in (None, base.MARGIN):
        return rule, 0.0
    if rule and host.name in work.came_from[source.name]:
        return CAME_FROM, 0.0
    return work.policy.inside(host, cpu, ram, work.ranking(host),
                              margin_inside(work, source))


def past_threshold(work: working.Working, source: model.HostSnapshot,
                   host: model.HostSnapshot, cpu: float,
                   ram: float | None) -> tuple:
    """``(rule, score)`` of a destination for a move off a host far past
    its CPUs, once no host under its threshold takes the instance: it
    may end past its threshold, but more than ``margin`` under its CPUs
    and not starved (a host at 90 % serves its tenants, one at 120 %
    does not), under its RAM threshold, and never a host one of the
    source's instances came from.  A host already past its threshold
    comes first: the move adds no host past it."""
    if host.name in work.came_from[source.name]:
        return CAME_FROM, 0.0
    if (host.starved or cpu >= 100.0 - work.config.margin
            or (ram is not None and ram >= host.ram_threshold)):
        return NEAR_FULL, 0.0
    crossing = work.cpu[host.name] + work.lag[host.name] <= host.cpu_threshold
    return None, (crossing, base.pressure(host, cpu, ram))


def _decide(work, source, stage):
    if stage == PAST:
        return functools.partial(past_threshold, work, source)
    if stage:
        return functools.partial(inside_margin, work, source)
    return functools.partial(outside, work)


def graded(work: working.Working, pool: str | None) -> float:
    """The margin a destination keeps in a move inside the margin: the
    pool's mean room under ``threshold - margin``, within 0 and
    ``margin``.  A cool pool keeps the whole margin; one whose hosts
    sit at the margin on average, or past it, none: a destination then
    only has to stay under its threshold."""
    margin = work.config.margin
    return min(max(work.room.get(pool, margin), 0.0), margin)


def margin_inside(work: working.Working, source: model.HostSnapshot
                  ) -> float:
    """The margin a destination keeps in a move off ``source`` inside the
    margin: none off a starved host (its destination only stays under
    its threshold: a host at 90 % hurts no one, one at 120 % does), else
    the pool's graded margin."""
    return 0.0 if source.starved else graded(work, work.pool(source))


#: Per stage past the first, the rules of the hosts it opens (given a
#: free slot): inside the margin, those resting at it; past the
#: threshold, the violated ones too.
_OPENED = {INSIDE: (base.MARGIN,), PAST: (base.MARGIN, 'violated')}


def _open_hosts(work, source, stage) -> list:
    """``(None, name)`` of the destinations in ``source``'s pool at
    ``stage``: the indexed ones and those the stage opens
    (:func:`_held`), by name."""
    pool = work.pool(source)
    names = [name for _, name in work.order.get(pool, ())]
    held = list(work.resting.items())
    if stage == PAST:  # Rare: off a host far past its CPUs only.
        held += [(name, rule) for name, rule in work.barred.items()
                 if rule == 'violated']
    names += [name for name, rule in held
              if _held(work, name, rule, stage) is None
              and name != source.name
              and work.pool(work.hosts[name]) == pool]
    return [(None, name) for name in sorted(names)]


def barred_for(work: working.Working,
               instance: model.InstanceSnapshot) -> dict:
    """Hosts barred for this instance, with the rule barring each: the
    ones Nova refused it at start lately, and the ones it left lately
    (the no-return rail)."""
    barred = dict.fromkeys(instance.refused, REFUSED)
    if work.policy.no_return:
        barred.update(dict.fromkeys(instance.left, 'no-return'))
    return barred


def unreachable(work: working.Working, source: model.HostSnapshot,
                stage: str | None) -> collections.Counter:
    """Per rule, the hosts refused for any instance of ``source``: all
    but the hosts of its pool that :func:`search` scans and counts.

    Cached per pool until the next planned move changes a host."""
    pool = work.pool(source)
    counts = work.unreachable_by_pool.get((pool, stage))
    if counts is None:
        counts = collections.Counter()
        for name, host in work.hosts.items():
            rule = _held(work, name, work.barred[name] or (
                'pool' if work.pool(host) != pool
                else work.resting.get(name)), stage)
            if rule:
                counts[rule] += 1
        work.unreachable_by_pool[pool, stage] = counts
    return counts - collections.Counter(
        {_held(work, source.name, work.barred[source.name], stage): 1})


def _held(work, name: str, rule: str | None, stage: str | None
          ) -> str | None:
    """The rule holding a host back at ``stage``: ``rule``, unless the
    stage opens it (:data:`_OPENED`); an opened host without a free slot
    is held by the per-host limit."""
    if stage and rule in _OPENED[stage]:
        if work.busy[name] < work.config.max_concurrent_migrations_per_host:
            return None
        return 'limit:per-host'
    return rule


def explain(work: working.Working, source: model.HostSnapshot,
            removal: base.Removal, found: model.Candidates,
            stage: str | None, record: list | None = None
            ) -> collections.Counter:
    """Count, per rule, the hosts refused for one removal (the filters'
    rejections included); append a Rejection per planner refusal to
    ``record`` when given; judged at ``stage``.  Hot when many moves are
    planned: locals."""
    instance = removal.instance
    hosts, barred, resting = work.hosts, work.barred, work.resting
    pool = work.pool(source)
    left = barred_for(work, instance)
    decide = _decide(work, source, stage)
    rules = collections.Counter(r.rule for r in found.rejected)
    for name in found.allowed:
        if name == source.name:
            continue
        rule = _held(work, name, barred.get(name, 'unknown-host'), stage)
        detail = ''
        if rule is None and name in left:
            rule = left[name]
            detail = _BARRED_DETAIL[rule]
        elif rule is None:
            host = hosts[name]
            rule = _held(work, name, resting.get(name), stage)
            if work.pool(host) != pool:
                rule, detail = 'pool', f'pool {host.pool}'
            elif rule not in (None, 'limit:per-host'):
                detail = reasons.fmt('already at', work.cpu[name],
                                     work.ram[name]) + _expected(work, host)
            elif rule is None:
                cpu, ram = work.project(host, instance.cpu_cores,
                                        instance.memory_mb)
                rule, _ = decide(host, cpu, ram)
                if rule is None:
                    continue
                detail = reasons.fmt('projected', cpu, ram) + _expected(
                    work, host)
                if rule == CAME_FROM:
                    detail += (f' (an instance of {source.name} came '
                               f'from it)')
                elif stage == INSIDE:
                    detail += (f' (graded margin '
                               f'{margin_inside(work, source):.1f} points)')
        if rule == 'limit:per-host':
            detail = f'{work.busy[name]} migrations in flight or planned'
        rules[rule] += 1
        if record is not None:
            record.append(model.Rejection(name, rule, detail))
    return rules


def _expected(work, host) -> str:
    """Why a refused host is judged above its load, for the record."""
    if not work.lag[host.name]:
        return ''
    return (f' (expected load {host.cpu_expected:.1f}% > current '
            f'{host.cpu_percent:.1f}%)')


def past_reason(work: working.Working, source: model.HostSnapshot,
                option: base.Option) -> str:
    """Why a move off ``source`` was made past its destination's
    threshold, with the numbers."""
    host = option.destination
    return (f'; {PAST}: no allowed destination stays under its threshold, '
            f'and host {source.name} is far past its CPUs (demand '
            f'{work.demand(source):.1f}%, from {PAST_DEMAND:g}%): '
            f'{host.name} ends '
            + reasons.fmt('at', option.destination_cpu,
                          option.destination_ram)
            + f', more than {work.config.margin:g} points under its CPUs')


def inside_reason(work: working.Working, source: model.HostSnapshot,
                  option: base.Option) -> str:
    """Why a move off ``source`` was made inside the margin, with the
    numbers."""
    host, cfg = option.destination, work.config
    pool = work.pool(host)
    margin, room = margin_inside(work, source), work.room[pool]
    if source.starved:
        why = (f'and host {source.name} is starved (part of its demand '
               f'goes unserved), so a destination only stays under its '
               f'threshold')
    else:
        warm = (f'{room:.1f} points of room under' if room >= 0
                else f'{-room:.1f} points past')
        why = (f'and the pool is warm (its hosts average {warm} threshold '
               f'- margin), so the margin is graded to {margin:.1f}')
    ram = option.destination_ram
    return (f'; {INSIDE}: no allowed destination keeps the margin of '
            f'{cfg.margin:g} points, {why}: {host.name} ends '
            f'{reasons.fmt("at", option.destination_cpu, ram)}, under '
            f'{host.cpu_threshold - margin:.1f}%'
            + ('' if ram is None
               else f' and {host.ram_threshold - margin:.1f}%'))
