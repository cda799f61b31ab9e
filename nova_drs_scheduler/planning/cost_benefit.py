"""The cost-benefit rail at the working projection (:mod:`.benefit`'s
rule): a balancing or leveling move must buy more relief than it costs."""

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base

#: The rule refusing a move that buys less relief than it costs.
RULE = 'cost-benefit'


def estimate(work: working.Working, source: model.HostSnapshot,
             option: base.Option) -> benefit.Estimate | None:
    """What ``option`` is expected to buy and cost, at the working
    projection; None when the policy or ``benefit_horizon`` turns the
    rule off."""
    if not work.policy.weighs_benefit or work.config.benefit_horizon <= 0:
        return None
    instance = option.removal.instance
    dest = option.destination
    expected, deviation = work.snapshot.trends.get(instance.uuid,
                                                   (None, None))
    return benefit.estimate(
        _load(work, source), source.vcpus, source.cpu_threshold,
        _load(work, dest), dest.vcpus, dest.cpu_threshold,
        benefit.Load(instance.cpu_cores,
                     _known(expected, instance.cpu_cores),
                     deviation or 0.0),
        instance.memory_mb, work.config,
        ram_relief=_over(work.ram[source.name], option.removal.ram,
                         source.ram_threshold))


def _load(work, host) -> benefit.Load:
    """A host's load at the working projection, its measured contention
    added (the demand its CPU, capped at 100 %, cannot show; it passes
    as a burst does): the moves planned so far shift its expected level
    as they shift its current one."""
    current = work.cpu[host.name]
    shift = current - (host.cpu_percent or 0.0)
    current += host.cpu_contention or 0.0
    return benefit.Load(
        current, _known(host.cpu_expected, host.cpu_percent) + shift,
        host.cpu_deviation or 0.0)


def _over(before: float | None, after: float | None,
          threshold: float) -> float:
    """Points over ``threshold`` taken off by going from ``before`` to
    ``after`` (0 when either is unknown)."""
    if before is None or after is None:
        return 0.0
    return max(before - threshold, 0.0) - max(after - threshold, 0.0)


def _known(value: float | None, default: float | None) -> float:
    """``value``, or ``default`` when it is unknown (0 if both are)."""
    if value is not None:
        return value
    return default or 0.0
