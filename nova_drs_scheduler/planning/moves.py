"""A planned move: its record (reasons, expected loads, alternatives,
every refused host) and its effect on the working projection, which the
next move of any goal sees."""

import dataclasses

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import search
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base


def apply(work: working.Working, source: model.HostSnapshot,
          option: base.Option, found: model.Candidates, scored: list,
          failed: list, reason: str | None = None,
          goal: str = model.BALANCE,
          estimate: benefit.Estimate | None = None,
          stage: str | None = search.AT_MARGIN) -> None:
    """Record the move of ``option`` and take it into ``work``.

    ``scored`` and ``failed``: the other instances' options and refusals
    (:func:`.goals.relieve.run`'s); ``reason``: the goal's own, or the
    source's verdict and the policy's description; ``stage``: the
    search's (:data:`.search.INSIDE`, :data:`.search.PAST`).
    """
    removal = option.removal
    instance = removal.instance
    dest = option.destination.name
    rejected = list(found.rejected)
    search.explain(work, source, removal, found, stage, record=rejected)
    # A later stage may still choose a host an earlier one takes.
    at = (option.destination, option.destination_cpu, option.destination_ram)
    inside = stage is not None and search.outside(work, *at)[0] == base.MARGIN
    past = (inside and stage == search.PAST
            and search.inside_margin(work, source, *at)[0] is not None)
    expected = {'source_cpu': removal.cpu,
                'destination_cpu': option.destination_cpu,
                'improvement': option.improvement,
                'instance_cores': instance.cpu_cores}
    if inside:
        expected.update(inside_margin=True, graded_margin=round(
            search.margin_inside(work, source), 3))
    if past:
        expected['past_threshold'] = True
    if work.cpu[source.name] is not None and goal != model.DRAIN:
        expected['source_cpu_before'] = work.cpu[source.name]
    if estimate is not None:
        expected.update(relief=round(estimate.relief, 3),
                        cost=round(estimate.cost, 3),
                        risk=round(estimate.risk, 3),
                        migration_cost=round(estimate.migration, 3))
    if removal.ram is not None:
        expected['source_ram'] = removal.ram
    if option.destination_ram is not None:
        expected['destination_ram'] = option.destination_ram
    alternatives = [_alternative(o) for _, o, *_ in scored]
    alternatives += [{'instance': uuid, 'rejected': dict(sorted(
        rules.items()))} for uuid, rules in failed]
    work.moves.append(model.Move(
        instance=instance.uuid, source=source.name, destination=dest,
        reason=reason or (f'{work.verdicts[source.name].reason}; '
                          f'{work.policy.describe(option, work.config)}'
                          + (search.past_reason(work, source, option)
                             if past else
                             search.inside_reason(work, source, option)
                             if inside else '')),
        expected=expected, alternatives=tuple(alternatives),
        rejected=tuple(rejected), memory_mb=instance.memory_mb,
        goal=goal, migration=instance.migration,
        resources=dict(found.request)))
    if dest in work.floors:
        work.leave(dest)
    else:  # A drain's fallback: a host the policy refuses.
        work.resting.pop(dest, None)
    work.cpu[source.name], work.ram[source.name] = removal.cpu, removal.ram
    work.cpu[dest], work.ram[dest] = work.project(
        option.destination, instance.cpu_cores, instance.memory_mb,
        outlook=False)
    work.busy[source.name] += 1
    work.busy[dest] += 1
    work.drain_moves += goal == model.DRAIN
    work.moved.add(instance.uuid)
    work.view = dataclasses.replace(work.snapshot,
                                    planned=tuple(work.moves))
    if work.barred[dest] is None:  # Not a violated host past the threshold.
        work.enter(dest)
    work.unreachable_by_pool.clear()


def _alternative(option: base.Option) -> dict:
    return {'instance': option.removal.instance.uuid,
            'destination': option.destination.name,
            'cpu_cores': option.removal.instance.cpu_cores,
            'memory_mb': option.removal.instance.memory_mb,
            'source_cpu': round(option.removal.cpu, 2),
            'destination_cpu': round(option.destination_cpu, 2),
            'improvement': round(option.improvement, 2)}
