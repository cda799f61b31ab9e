"""Relieve: each violated host, the most pressed first, sends the
instance whose move the policy scores best, until it is cured (policies
that go ``until_cured``) or a limit stops it.

Each violated host scores at most ``max_instances_evaluated`` instances,
in the policy's rank order, and stops early once no further instance can
beat the best option (``Policy.bound``).  When the margin refused every
destination and the pool is warm, or the host is starved, a policy that
``grades`` scores them again inside the margin: a warm pool must not turn
the DRS off, and a host at 90 % hurts no one where one at 120 % does.
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


def _choose(work, source, movable, head):
    """Score the policy's best-ranked instances; plan the winner, first
    at the margin, then, off a starved host or in a warm pool (its graded
    margin below ``margin``), inside it."""
    cfg, policy = work.config, work.policy
    removals = [work.removal(source, i) for i in movable]
    ranked = policy.rank(removals, cfg)[:cfg.max_instances_evaluated]
    scored, failed = _score(work, source, ranked)
    inside = (not scored and policy.grades
              and (source.starved
                   or search.graded(work, work.pool(source)) < cfg.margin)
              and any(rules[base.MARGIN] for _, rules in failed))
    detail = reasons.failures(failed)
    if inside:
        scored, failed = _score(work, source, ranked, inside=True)
        detail += f'; {search.INSIDE}: {reasons.failures(failed)}'
    if not scored:
        work.notes.append(f'{head}: {detail or "no instance ranked"}')
        return None
    _, option, found, estimate = scored[0]
    moves.apply(work, source, option, found, scored, failed,
                estimate=estimate, inside=inside)
    return option


def _score(work, source, ranked, inside=False):
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
        option, refused = search.search(work, source, removal, None, inside)
        if option is None:
            if unreachable is None:
                unreachable = search.unreachable(work, source, inside)
            failed.append((uuid, unreachable + refused))
            continue
        found = work.candidates(removal.instance, work.view)
        allowed = set(found.allowed)
        if option.destination.name not in allowed:
            option, _ = search.search(work, source, removal, allowed, inside)
        rule = option and policy.refuse(option, cfg)
        if option is None:
            failed.append((uuid, search.explain(work, source, removal, found,
                                                inside)))
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
