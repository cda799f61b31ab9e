"""The period's working projection, which every goal plans against.

Hosts judged once; their loads and migration slots as the moves planned
so far leave them; the destinations indexed by the policy's score; the
limits a move must pass.  A goal reads it and records its moves through
:func:`.moves.apply`, so the next goal, and the next move of the same
goal, sees them.
"""

import bisect
import collections
import dataclasses
from collections.abc import Mapping

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import relief
from nova_drs_scheduler.planning.policies import base

#: The limit holding a drain move back to leave balancing its share.
DRAIN_SHARE = 'limit:drain-share'


def balanced(host: model.HostSnapshot) -> bool:
    """Whether balancing may judge the host and use it as a destination."""
    return not (host.excluded or host.automation_off)


def pool_key(host: model.HostSnapshot,
             config: model.PlannerConfig) -> str | None:
    """The pool a host is judged and relieved in."""
    return host.pool if config.mode == 'aggregate' else None


def lag(host: model.HostSnapshot) -> float:
    """Points by which a host's expected CPU exceeds its current CPU."""
    if host.cpu_expected is None or host.cpu_percent is None:
        return 0.0
    return max(0.0, host.cpu_expected - host.cpu_percent)


def pool_room(hosts: Mapping[str, model.HostSnapshot],
              config: model.PlannerConfig) -> dict:
    """Per pool, the mean room its hosts with a sample have under their
    ``cpu_threshold - margin``, points (negative for a host past it): how
    warm the pool is, which grades the margin (:func:`.search.graded`)."""
    room = collections.defaultdict(list)
    for host in hosts.values():
        if host.cpu_percent is not None and balanced(host):
            room[pool_key(host, config)].append(
                host.cpu_threshold - config.margin - host.cpu_percent)
    return {pool: sum(found) / len(found) for pool, found in room.items()}


def unsteady(hosts: Mapping[str, model.HostSnapshot],
             config: model.PlannerConfig) -> dict:
    """Per pool whose moved loads did not stay, why: of its relief checks
    of the last :data:`.relief.LEARN_SECONDS` (at least
    :data:`.relief.LEARN_MIN_CHECKS`), fewer than ``level_steady_share``
    found the moved instance still carrying half its load."""
    counts = collections.defaultdict(lambda: [0, 0])
    for host in hosts.values():
        if host.loads_stayed and balanced(host):
            found = counts[pool_key(host, config)]
            found[0] += host.loads_stayed[0]
            found[1] += host.loads_stayed[1]
    return {pool: (f'{stayed} of {checked} moved loads stayed '
                   f'(level_steady_share {config.level_steady_share:g})')
            for pool, (stayed, checked) in counts.items()
            if checked >= relief.LEARN_MIN_CHECKS
            and stayed < config.level_steady_share * checked}


def judge(host: model.HostSnapshot, config: model.PlannerConfig
          ) -> tuple[model.HostVerdict, str | None]:
    """A host's verdict, and the rule barring it as a destination."""
    def verdict(violated, reason):
        return model.HostVerdict(
            host.name, violated, reason, host.cpu_percent,
            host.ram_percent, host.counter, tuple(host.window),
            host.pool, host.cpu_threshold, host.ram_threshold)

    if host.power == model.ENTERING:
        return (verdict(False, 'entering standby: draining, not '
                               'judged'), 'standby')
    if host.draining:
        return (verdict(False, 'in maintenance: draining, not judged'),
                'maintenance')
    if host.power in (model.STANDBY, model.WAKING):
        return (verdict(False, f'power {host.power}: not judged'),
                'powered-off')
    if host.excluded:
        return (verdict(False, 'aggregate opted out of DRS: not judged'),
                'excluded')
    if host.automation_off:
        return (verdict(False, 'automation off: not judged'),
                'automation-off')
    if (config.mode == 'aggregate' and host.pool is None
            and config.unaggregated_hosts == 'ignore'):
        return (verdict(False, 'in no aggregate and [drs] '
                               'unaggregated_hosts=ignore: not judged'),
                'unaggregated')
    if host.vcpus <= 0 or host.memory_mb <= 0:
        return (verdict(False, 'no CPU or memory capacity recorded: not '
                               'judged'), 'no-capacity')
    reason = metrics.judgement(
        host.cpu_percent, host.ram_percent, host.cpu_threshold,
        host.ram_threshold, host.counter, config.stabilization,
        len(host.window))
    if host.cpu_percent is None:
        return verdict(False, reason), 'stale-metrics'
    if metrics.is_violated(host.counter, config.stabilization):
        return verdict(True, reason), 'violated'
    return (verdict(False, reason),
            None if host.schedulable else 'not-schedulable')


class Working:
    """One period's hosts as the moves planned so far leave them."""

    def __init__(self, snapshot: model.Snapshot,
                 candidates: model.CandidatesFn, policy: base.Policy,
                 power: object = None):
        self.snapshot = snapshot
        self.config = snapshot.config
        #: Nova's filters live (the simulator's model), capacity counted
        #: per planned move (:mod:`.capacity`).
        self.candidates = candidates
        self.policy = policy
        self.hosts = snapshot.hosts
        #: Pool key -> why its moved loads do not stay (:func:`unsteady`).
        self.unsteady = unsteady(self.hosts, self.config)
        self._at_projection = dataclasses.replace(
            self.config, destination_deviations=0.0)
        self.verdicts = {}
        #: Host name -> planner rule barring it as a destination, or None.
        self.barred = {}
        for name in sorted(self.hosts):
            self.verdicts[name], self.barred[name] = judge(
                self.hosts[name], self.config)
        #: Violated hosts: drains leave each a slot (:meth:`limit`).
        self.violated = sum(v.violated for v in self.verdicts.values())
        self.cpu = {n: h.cpu_percent for n, h in self.hosts.items()}
        self.ram = {n: h.ram_percent for n, h in self.hosts.items()}
        self.busy = collections.Counter(snapshot.inflight_by_host)
        #: Host name -> points its expected load is above its current one.
        self.lag = {n: lag(h) for n, h in self.hosts.items()}
        #: Pool key -> indexed destinations as sorted (floor score, name).
        self.order = collections.defaultdict(list)
        self.floors = {}
        #: Unbarred host -> rule refusing it whatever the instance, at its
        #: current load (policy rule or in-flight limit); not indexed.
        self.resting = {}
        #: (pool, stage) -> :func:`.search.unreachable`'s count, until
        #: the next planned move changes a host.
        self.unreachable_by_pool = {}
        for name, rule in self.barred.items():
            if rule is None:
                self.enter(name)
        self.by_host = collections.defaultdict(list)
        for instance in snapshot.instances:
            self.by_host[instance.host].append(instance)
        self.moved = set()
        #: Pool key -> how warm it is (:func:`pool_room`).
        self.room = pool_room(self.hosts, self.config)
        #: Host -> the hosts its instances came from within
        #: ``no_return_time``: never its destinations inside the margin.
        #: (A destination of this plan is no source in it.)
        self.came_from = collections.defaultdict(set)
        for instance in snapshot.instances:
            self.came_from[instance.host].update(instance.left)
        self.moves = []
        #: Drain moves among them: they have a budget of their own.
        self.drain_moves = 0
        self.drains = []
        self.notes = []
        #: The snapshot with the moves planned so far, for candidates().
        self.view = snapshot
        #: Power management's inputs (:class:`.power.PowerInputs`, which
        #: builds on this module), None when it is not in use; the
        #: consolidation goal leaves its plan in :attr:`power_plan`.
        self.power = power
        self.power_plan = None

    def pool(self, host: model.HostSnapshot) -> str | None:
        return pool_key(host, self.config)

    def ranking(self, host: model.HostSnapshot) -> model.PlannerConfig:
        """The options a destination is judged with.  In a pool whose
        moved loads do not stay, a host's swing came from bursts already
        gone and says nothing of its next: it is ranked at its projected
        load alone (``destination_deviations`` 0)."""
        if self.pool(host) in self.unsteady:
            return self._at_projection
        return self.config

    def demand(self, host: model.HostSnapshot) -> float:
        """A judged host's CPU demand, percent of its CPUs, at the working
        projection: its CPU and the contention a CPU capped at 100 %
        cannot show."""
        return self.cpu[host.name] + (host.cpu_contention or 0.0)

    def project(self, host: model.HostSnapshot, cores: float, memory: int,
                outlook: bool = True) -> tuple[float, float | None]:
        """A host's (cpu, ram) percents with an instance added, CPU at its
        outlook (for decisions) or at its current load (the projection)."""
        cpu = self.cpu[host.name] + 100.0 * cores / host.vcpus
        if outlook:
            cpu += self.lag[host.name]
        ram = self.ram[host.name]
        if ram is not None:
            ram += 100.0 * memory / host.memory_mb
        return cpu, ram

    def enter(self, name: str) -> None:
        """Index a destination by its score at its current load, unless
        the policy or the per-host limit already refuses it."""
        host = self.hosts[name]
        rule, floor = self.policy.destination(
            host, self.cpu[name] + self.lag[name], self.ram[name],
            self.ranking(host))
        if (rule is None and self.busy[name]
                >= self.config.max_concurrent_migrations_per_host):
            rule = 'limit:per-host'
        if rule is None:
            self.floors[name] = floor
            bisect.insort(self.order[self.pool(host)], (floor, name))
        else:
            self.resting[name] = rule

    def leave(self, name: str) -> None:
        """Unindex a destination (always an indexed one: a move's)."""
        floor = self.floors.pop(name)
        order = self.order[self.pool(self.hosts[name])]
        del order[bisect.bisect_left(order, (floor, name))]

    def limit(self, source: str, per_host: int | None = None,
              rule: str = 'limit:per-host', drain: bool = False
              ) -> str | None:
        """The limit holding back a move off ``source``, or None.

        ``per_host``: the source's own cap (default: a violated host's);
        a drain's moves count in the total but not in a period's budget,
        which is balancing's, and leave a slot of the total to each
        violated host, up to that budget (at least one slot to drains):
        an overloaded host never waits for a drain to finish.
        """
        cfg = self.config
        if not drain and (len(self.moves) - self.drain_moves
                          >= cfg.max_migrations_per_period):
            return 'limit:per-period'
        busy = self.snapshot.inflight_total + len(self.moves)
        total = cfg.max_concurrent_migrations
        if busy >= total:
            return 'limit:total'
        if drain and busy >= total - min(cfg.max_migrations_per_period,
                                         self.violated, total - 1):
            return DRAIN_SHARE
        if per_host is None:
            per_host = max(cfg.max_concurrent_migrations_per_host,
                           cfg.max_concurrent_migrations_per_violated_host)
        if self.busy[source] >= per_host:
            return rule
        return None

    def removal(self, source: model.HostSnapshot,
                instance: model.InstanceSnapshot) -> base.Removal:
        """``instance`` taken off ``source`` at the working projection."""
        cpu, ram = self.cpu[source.name], self.ram[source.name]
        if cpu is None:  # A host in maintenance empties, sampled or not.
            cpu = 0.0
        cpu_after = max(cpu - 100.0 * instance.cpu_cores / source.vcpus, 0.0)
        ram_after = None if ram is None else max(
            ram - 100.0 * instance.memory_mb / source.memory_mb, 0.0)
        return base.Removal(instance, cpu_after, ram_after,
                            base.pressure(source, cpu, ram),
                            base.pressure(source, cpu_after, ram_after))
