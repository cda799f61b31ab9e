"""Relieve: each violated host, the most pressed first, sends the
instance whose move the policy scores best, until it is cured (policies
that go ``until_cured``) or a limit stops it.

Each violated host scores at most ``max_instances_evaluated`` instances,
in the policy's rank order, and stops early once no further instance can
beat the best option (``Policy.bound``).  When the margin refused every
destination and the pool is warm, or the host is starved, a policy that
``grades`` scores them again inside the margin: a warm pool must not turn
the DRS off, and a host at 90 % hurts no one where one at 120 % does.
When nothing under its threshold takes an instance of a host far past its
CPUs, the last stage scores them past the threshold, on hosts that stay
clear of their CPUs (:func:`.search.past_threshold`).
"""

import collections

from nova_drs_scheduler.planning import cost_benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import moves
from nova_drs_scheduler.planning import reasons
from nova_drs_scheduler.planning import search
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base

GOAL = model.BALANCE


def run(work: working.Working) -> None:
    """Relieve the violated hosts, the starved ones first (their demand
    goes unserved: ``HostSnapshot.starved``), then the most pressed: the
    first take the period's budget."""
    violated = [work.hosts[n] for n, v in work.verdicts.items()
                if v.violated]
    violated.sort(key=lambda h: (not h.starved,
                                 -base.pressure(h, h.cpu_percent,
                                                h.ram_percent), h.name))
    for source in violated:
        _plan_host(work, source)


def _plan_host(work, source) -> None:
    planned = 0
    while True:
        head = (f'host {source.name}: violated, no move' if not planned
                else f'host {source.name}: still projected over after '
                     f'{planned} move(s), no further move')
        limit = work.limit(source.name)
        if limit:
            work.notes.append(f'{head}: {limit}')
            return
        instances = work.by_host.get(source.name, ())
        movable = [i for i in instances
                   if i.blocked is None and i.uuid not in work.moved]
        if not movable and source.starved:
            movable = _cooling(work, source, instances, head)
        if not movable:
            blocked = collections.Counter(
                i.blocked for i in instances if i.blocked is not None)
            work.notes.append(
                f'{head}: no movable instance'
                + (f' (blocked: {reasons.summary(blocked)})'
                   if blocked else ''))
            return
        option = _choose(work, source, movable, head)
        if option is None:
            return
        planned += 1
        if (not work.policy.until_cured
                or base.pressure(source, work.cpu[source.name],
                                 work.ram[source.name]) <= 0):
            return


def _cooling(work, source, instances, head) -> list:
    """The instances of a starved host that only their cooldown holds,
    when none other may move: a cooldown keeps an instance from bouncing
    on, but a host refilled lately holds little else, and its tenants
    wait for CPU now (no_return_time still keeps each off the host it
    left)."""
    found = [i for i in instances
             if i.cooling and i.uuid not in work.moved]
    if found:
        work.notes.append(f'host {source.name}: starved, and no other '
                          f'instance may move: {len(found)} in their '
                          f'cooldown may leave it')
    return found


def _choose(work, source, movable, head):
    """Score the policy's best-ranked instances; plan the winner, first
    at the margin, then at the later stages the source may try
    (:func:`_tries`)."""
    cfg = work.config
    removals = [work.removal(source, i) for i in movable]
    ranked = work.policy.rank(removals, cfg)[:cfg.max_instances_evaluated]
    stage = search.AT_MARGIN
    scored, failed = _score(work, source, ranked, stage)
    detail = reasons.failures(failed)
    for later in (search.INSIDE, search.PAST):
        if scored:
            break
        if _tries(work, source, later, failed):
            stage = later
            scored, failed = _score(work, source, ranked, stage)
            detail += f'; {stage}: {reasons.failures(failed)}'
    if not scored:
        work.notes.append(f'{head}: {detail or "no instance ranked"}')
        return None
    _, option, found, estimate = scored[0]
    moves.apply(work, source, option, found, scored, failed,
                estimate=estimate, stage=stage)
    return option


def _tries(work, source, stage, failed) -> bool:
    """Whether a host none of whose instances found a destination at the
    stages before tries ``stage``, with a policy that ``grades``: inside
    the margin, when the margin refused some destination and the host is
    starved or its pool warm (its graded margin below ``margin``); past
    the threshold, when its demand is :data:`.search.PAST_DEMAND` or
    more."""
    if not work.policy.grades:
        return False
    if stage == search.PAST:
        return work.demand(source) >= search.PAST_DEMAND
    return ((source.starved
             or search.graded(work, work.pool(source)) < work.config.margin)
            and any(rules[base.MARGIN] for _, rules in failed))


def _score(work, source, ranked, stage):
    """``(scored, failed)``: each ranked removal's best option, with its
    key, candidates and estimate, best first; or the rules refusing it.

    Each instance is first searched against every indexed host; only
    when some host passes the planner's rules is ``candidates()`` (Nova's
    filters live, the costly part) asked, so a saturated cluster costs
    no filter runs.
    """
    cfg, policy = work.config, work.policy
    scored, failed, unreachable = [], [], None
    for removal in ranked:
        bound = policy.bound(removal, cfg)
        if scored and bound is not None and bound > scored[0][0]:
            break
        uuid = removal.instance.uuid
        rule = policy.hopeless(removal, cfg)
        if rule:
            failed.append((uuid, collections.Counter({rule: 1})))
            continue
        option, refused = search.search(work, source, removal, None, stage)
        if option is None:
            if unreachable is None:
                unreachable = search.unreachable(work, source, stage)
            failed.append((uuid, unreachable + refused))
            continue
        found = work.candidates(removal.instance, work.view)
        allowed = set(found.allowed)
        if option.destination.name not in allowed:
            option, _ = search.search(work, source, removal, allowed, stage)
        rule = option and policy.refuse(option, cfg)
        if option is None:
            failed.append((uuid, search.explain(work, source, removal, found,
                                                stage)))
            continue
        if rule:
            failed.append((uuid, collections.Counter({rule: 1})))
            continue
        estimate = cost_benefit.estimate(work, source, option)
        if estimate is not None and not estimate.pays:
            failed.append((uuid, collections.Counter({
                cost_benefit.RULE: 1})))
            continue
        scored.append((policy.key(option, cfg), option, found, estimate))
        scored.sort(key=lambda item: item[0])
    return scored, failed
