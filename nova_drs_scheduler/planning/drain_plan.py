"""Draining hosts, planned before any enters maintenance: ``nova-drs
maintenance plan``.

The planner plans the drains as a period would (Nova's filters and
placement through the candidates callback, capacity counted per planned
move, the policy's destinations), drains only, with one difference: the
drain limits are lifted, so that every instance of the hosts is planned
at once and the answer covers the whole drain, not its first period.  The
hosts already in maintenance drain too, and take their room.

A set of hosts *can drain* when none of their instances blocks and no host
receiving them is projected over a threshold.  Besides each host alone,
the answer is the largest set that can drain at once, as vSphere's
EnterMaintenanceMode answers; it is found greedily, so it can be smaller
than the best.  Hosts are tried smallest first (the memory, then vCPUs,
of their instances): each host drained takes room from the others, and as
in packing, taking the smallest items first fits the most of them.  A
host joins only if all the set's instances still place with every
receiving host under its thresholds and none blocks.

Pure: no Nova, no database, no options; the live side builds the snapshot
(``SnapshotReader.maintenance_snapshot``).
"""

import collections
import dataclasses
from collections.abc import Mapping
from collections.abc import Sequence

from nova_drs_scheduler.planning import drain_time
from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner

#: The drain limits of the dry run: more migrations than any cloud holds.
LIFTED = 10 ** 9


@dataclasses.dataclass(frozen=True)
class Over:
    """A receiving host a drain leaves over a threshold, as projected."""

    host: str
    cpu_percent: float
    ram_percent: float | None
    cpu_threshold: float
    ram_threshold: float


@dataclasses.dataclass(frozen=True)
class Outcome:
    """Some hosts drained at once, as planned."""

    hosts: tuple[str, ...] = ()
    #: The moves off them.
    moves: tuple[model.Move, ...] = ()
    #: One per host, in the order of ``hosts``.
    drains: tuple[model.Drain, ...] = ()
    over: tuple[Over, ...] = ()
    #: Estimated seconds until the moves are done (:mod:`.drain_time`).
    seconds: float = 0.0

    @property
    def blockers(self) -> int:
        return sum(len(found.blockers) for found in self.drains)

    @property
    def can_drain(self) -> bool:
        return not self.blockers and not self.over

    def why_not(self) -> str:
        """What keeps these hosts from draining at once ('' if nothing)."""
        parts = []
        if self.blockers:
            parts.append(f'{self.blockers} instance(s) would block')
        if self.over:
            parts.append(', '.join(o.host for o in self.over)
                         + ' would go over a threshold')
        return '; '.join(parts)


@dataclasses.dataclass(frozen=True)
class Assessment:
    """Each host drained alone, and the largest set found to drain at
    once."""

    #: One per host, in the order asked.
    alone: tuple[Outcome, ...]
    #: Its hosts in the order they joined.
    together: Outcome
    #: ``(host, why)`` of each host left out of ``together``.
    left_out: tuple[tuple[str, str], ...]
    #: The configuration the times are estimated at.
    config: model.PlannerConfig
    #: The instances of the hosts, by uuid.
    instances: Mapping[str, model.InstanceSnapshot]

    @property
    def all_at_once(self) -> bool:
        return not self.left_out


def assess(snapshot: model.Snapshot, candidates: model.CandidatesFn,
           hosts: Sequence[str]) -> Assessment:
    """Plan draining ``hosts``, each alone and as many as can at once.

    ``snapshot``: built with ``hosts`` in maintenance (their instances
    judged as a drain judges them), every one a host of it.
    """
    hosts = tuple(dict.fromkeys(hosts))
    alone = {name: outcome(snapshot, candidates, hosts, (name,))
             for name in hosts}
    together, left_out = Outcome(), []
    for name in smallest_first(snapshot.instances, hosts):
        single = alone[name]
        if not single.can_drain:
            left_out.append((name, f'alone: {single.why_not()}'))
            continue
        trial = (outcome(snapshot, candidates, hosts,
                         together.hosts + (name,))
                 if together.hosts else single)
        if trial.can_drain:
            together = trial
        else:
            left_out.append((name, f'with {", ".join(together.hosts)}: '
                                   f'{trial.why_not()}'))
    return Assessment(
        alone=tuple(alone.values()), together=together,
        left_out=tuple(left_out), config=snapshot.config,
        instances={i.uuid: i for i in snapshot.instances
                   if i.host in hosts})


def outcome(snapshot: model.Snapshot, candidates: model.CandidatesFn,
            hosts: Sequence[str], drained: Sequence[str]) -> Outcome:
    """``drained`` (some of ``hosts``) drained at once, the other
    ``hosts`` staying, with the drain limits lifted."""
    draining = set(drained)
    found = planner.plan(_draining(snapshot, hosts, draining), candidates,
                         goals=(model.DRAIN,))
    moves = tuple(m for m in found.moves if m.source in draining)
    drains = {d.host: d for d in found.drains}
    instances = {i.uuid: i for i in snapshot.instances}
    return Outcome(
        hosts=tuple(drained), moves=moves,
        drains=tuple(drains[name] for name in drained),
        over=pushed_over(found.moves, snapshot.hosts, draining),
        seconds=drain_time.drain_seconds(moves, instances, snapshot.config))


def pushed_over(moves: Sequence[model.Move],
                hosts: Mapping[str, model.HostSnapshot],
                sources: set) -> tuple[Over, ...]:
    """The hosts receiving instances of ``sources`` that ``moves`` leave
    over a threshold, each at the planner's projection after the last
    move into it: its outlook (the higher of its current and expected
    load) plus what it received."""
    last = {move.destination: move.expected for move in moves}
    found = []
    for name in sorted({m.destination for m in moves if m.source in sources}):
        host = hosts[name]
        cpu = last[name]['destination_cpu']
        ram = last[name].get('destination_ram')
        if metrics.is_over(cpu, ram, host.cpu_threshold, host.ram_threshold):
            found.append(Over(name, cpu, ram, host.cpu_threshold,
                              host.ram_threshold))
    return tuple(found)


def _draining(snapshot: model.Snapshot, hosts: Sequence[str],
              draining: set) -> model.Snapshot:
    """The snapshot with ``draining`` of ``hosts`` in maintenance, the
    others not, and no drain limit."""
    states = dict(snapshot.hosts)
    for name in hosts:
        states[name] = dataclasses.replace(states[name],
                                           draining=name in draining)
    config = dataclasses.replace(
        snapshot.config, max_concurrent_migrations=LIFTED,
        drain_max_concurrent_migrations_per_host=LIFTED)
    return dataclasses.replace(snapshot, hosts=states, config=config)


def smallest_first(instances: Sequence[model.InstanceSnapshot],
                   hosts: Sequence[str]) -> list[str]:
    """``hosts`` in the order the greedy tries them: by the memory, then
    the vCPUs, of their instances, then by name."""
    memory, vcpus = collections.Counter(), collections.Counter()
    for instance in instances:
        memory[instance.host] += instance.memory_mb
        vcpus[instance.host] += instance.vcpus
    return sorted(hosts, key=lambda name: (memory[name], vcpus[name], name))
