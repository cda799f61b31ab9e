"""A standby's placement check: where the instances of a host leaving
would go, and whether every host left stays under its ceiling.

Power management (:mod:`.power`) takes a host into standby only when its
instances, placed as its drain would move them (largest first, each to the
least loaded host Nova's filters allow), leave every other host under its
threshold less the margin at the forecast and under its RAM threshold.
Several hosts may leave in one step: a :class:`Placing` carries what the
earlier ones placed.  Pure, like the planner.
"""

import dataclasses
from collections.abc import Callable
from collections.abc import Sequence

from nova_drs_scheduler.planning import model


def largest_first(instance: model.InstanceSnapshot) -> tuple:
    """The order instances are placed in, as a drain moves them."""
    return (-instance.memory_mb, -instance.vcpus, instance.uuid)


@dataclasses.dataclass
class Placing:
    """The destinations of a standby's placement check, as instances are
    placed: CPU percent at the forecast and RAM percent by host, and the
    moves planned so far (this period's, then the check's), the hosts
    being emptied, and the instances the check placed, by host."""

    cpu: dict
    ram: dict
    planned: list
    gone: set = dataclasses.field(default_factory=set)
    placed: dict = dataclasses.field(default_factory=dict)

    def copy(self) -> 'Placing':
        return Placing(dict(self.cpu), dict(self.ram), list(self.planned),
                       set(self.gone), {host: list(found) for host, found
                                        in self.placed.items()})

    def after(self, instance, dest, growth: float) -> tuple:
        """``dest``'s CPU and RAM percent with ``instance`` on it."""
        memory = self.ram[dest.name]
        if memory is not None:
            memory += 100.0 * instance.memory_mb / dest.memory_mb
        return (self.cpu[dest.name]
                + 100.0 * instance.cpu_cores * growth / dest.vcpus, memory)

    def add(self, instance, dest, growth: float) -> None:
        """Count ``instance`` on ``dest``."""
        self.cpu[dest.name], self.ram[dest.name] = self.after(
            instance, dest, growth)


def place(placing: Placing, host: model.HostSnapshot,
          instances: Sequence[model.InstanceSnapshot],
          snapshot: model.Snapshot, candidates: model.CandidatesFn,
          ceiling: Callable[[model.HostSnapshot], float],
          growth: float) -> str:
    """Place ``instances`` (``host``'s) not already moving this period into
    ``placing``, largest first, each on the least loaded allowed host left
    under its ``ceiling`` and RAM threshold; '' when all of them fit, else
    why not.  The instances placed on ``host`` before leave with it and
    are placed again.  ``host`` must already be out of ``placing.cpu``."""
    again = placing.placed.pop(host.name, [])
    if again:
        uuids = {i.uuid for i in again}
        placing.planned = [m for m in placing.planned
                           if m.instance not in uuids]
    moving = {move.instance for move in placing.planned}
    for instance in sorted([*instances, *again], key=largest_first):
        if instance.uuid in moving:
            continue
        view = dataclasses.replace(snapshot, planned=tuple(placing.planned))
        found = candidates(instance, view)
        best = None
        for name in sorted(found.allowed):
            dest = snapshot.hosts.get(name)
            if name not in placing.cpu:
                continue
            load, memory = placing.after(instance, dest, growth)
            if load > ceiling(dest) or (
                    memory is not None and memory > dest.ram_threshold):
                continue
            # By name, so the first of equally loaded hosts stays.
            if best is None or load < best[0]:
                best = (load, dest)
        if best is None:
            return (f'instance {instance.uuid} has no allowed destination '
                    f'in the pool left under its threshold less the margin '
                    f'at the forecast')
        placing.add(instance, best[1], growth)
        placing.placed.setdefault(best[1].name, []).append(instance)
        placing.planned.append(model.Move(
            instance=instance.uuid, source=host.name,
            destination=best[1].name, reason='standby placement check',
            expected={}, memory_mb=instance.memory_mb, goal=model.DRAIN,
            migration=instance.migration, resources=dict(found.request)))
    return ''
