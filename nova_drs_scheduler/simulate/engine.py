"""The simulation loop, one rebalance period at a time.

Periods are ``[drs] rebalance_interval`` seconds long, as in production; a
trace step (5 minutes for PlanetLab) holds its value for every period inside
it.  Each period, in the order the live service sees the world:

1. migrations whose copy has finished by now complete (the instance's load
   and RAM leave the source, its load lands on the destination), and the
   maintenance schedule, if any, moves on (a host enters maintenance, starts
   its work once empty, comes back; see ``maintenance``);
2. every host's CPU is measured from the trace and fed to the same
   :class:`~nova_drs_scheduler.rebalance.metrics.MetricsWindows` as in
   production (built from the same ``[drs]`` options), which judge hosts;
3. the strategy plans on that view (for our policies: a
   :class:`~nova_drs_scheduler.rebalance.model.Snapshot` and the capacity
   candidates, handed to the production planner);
4. each planned move is re-validated as Nova would when it starts it
   (instance not already migrating, capacity filters on the destination)
   and started, or counted as failed.  A move with no destination is
   Nova's scheduler's to place (Watcher's ``host_maintenance``); a
   strategy that paces its own moves inside the period (Watcher's applier)
   starts them through ``PeriodView.start``.
"""

import collections
import dataclasses
import functools
import gc
import statistics
from collections.abc import Callable

from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.rebalance import recent_moves
from nova_drs_scheduler.simulate import cluster as cluster_mod
from nova_drs_scheduler.simulate import maintenance as maintenance_mod
from nova_drs_scheduler.simulate import scoring
from nova_drs_scheduler.simulate import traces

#: Seconds of measured host CPU kept for strategies that read their own
#: history (Watcher's default periods are 5 to 12 minutes).
HISTORY_SECONDS = 3600


@dataclasses.dataclass(frozen=True)
class Settings:
    """The ``[drs]`` values the loop needs besides the planner's own."""

    config: model.PlannerConfig
    #: Fresh per-host windows, e.g. ``conf.rebalance.metrics_windows``.
    windows: Callable[[], metrics.MetricsWindows]
    #: Seconds per period (``[drs] rebalance_interval``).
    interval: int = 60
    #: Seconds an instance stays put after a migration
    #: (``[drs] instance_cooldown``).
    cooldown: float = 3600.0
    #: Seconds an instance is not sent back to a host it left
    #: (``[drs] no_return_time``).
    no_return: float = 21600.0
    #: A return to a host left this many periods ago or less is a ping-pong.
    ping_pong_periods: int = 180

    def periods(self, trace: traces.Trace) -> int:
        return len(trace.steps) * trace.step_seconds // self.interval


@dataclasses.dataclass
class PeriodView:
    """What a strategy may look at in one period."""

    period: int
    now: float
    interval: int
    trace: traces.Trace
    cluster: cluster_mod.Cluster
    #: Measured host CPU percent of recent periods, newest last.
    host_history: dict
    statuses: dict
    blocked: dict
    window: int
    #: {vm: hosts it left within the no-return time}
    left: dict = dataclasses.field(default_factory=dict)

    #: What the planner's input keeps between periods (see
    #: :class:`SnapshotInputs`); None for strategies that do not plan.
    inputs: 'SnapshotInputs | None' = None
    #: VMs whose migration ended since the last period: on a new host.
    arrived: frozenset = frozenset()
    #: {host in maintenance: when it entered}
    maintenance: dict = dataclasses.field(default_factory=dict)
    #: ``start(instance, destination or None, at)``: start a move at ``at``
    #: seconds (within this period), as the engine starts planned moves;
    #: the migration, or None when Nova refuses it.
    start: Callable | None = None

    #: {periods: the trace rows of the last ``periods`` periods}
    _rows: dict = dataclasses.field(default_factory=dict)

    def rows(self, periods: int) -> list:
        """The trace rows of the last ``periods`` periods, oldest first."""
        rows = self._rows.get(periods)
        if rows is None:
            first = max(0, self.period - periods + 1)
            steps = self.trace.steps
            rows = self._rows[periods] = [
                steps[_step(self.trace, p * self.interval)]
                for p in range(first, self.period + 1)]
        return rows

    def vm_percent(self, vm: cluster_mod.VM, periods: int) -> float:
        """The VM's trace CPU averaged over its last ``periods`` periods."""
        rows = self.rows(periods)
        index = vm.index
        return sum(row[index] for row in rows) / len(rows)

    def snapshot(self, config: model.PlannerConfig) -> model.Snapshot:
        """The planner's input, built as the live service builds it.

        An instance's load is averaged over the same window as its host's,
        so that the planner's projections add up.
        """
        cluster, maintenance = self.cluster, self.maintenance
        hosts = {}
        for name in cluster.hosts:
            status = self.statuses[name]
            hosts[name] = model.HostSnapshot(
                name=name, vcpus=cluster.spec.host_vcpus,
                memory_mb=cluster.spec.host_memory_mb,
                cpu_percent=status.cpu_percent,
                ram_percent=status.ram_percent, counter=status.counter,
                window=status.window, cpu_threshold=config.cpu_threshold,
                ram_threshold=config.ram_threshold,
                cpu_expected=status.cpu_expected,
                cpu_deviation=status.cpu_deviation,
                rise_rate=status.rise_rate,
                schedulable=name not in cluster.disabled,
                draining=name in maintenance)
        return model.Snapshot(hosts=hosts,
                              instances=self.inputs.build(self),
                              config=config,
                              inflight_by_host=cluster.inflight_by_host(),
                              inflight_total=len(cluster.inflight))

    def candidates(self) -> model.CandidatesFn:
        return cluster_mod.CapacityCandidates(self.cluster)


class SnapshotInputs:
    """What building the planner's input keeps from one period to the next.

    At 1000 hosts and 20000 instances, building every
    :class:`~model.InstanceSnapshot` anew was most of a period's input
    time.  So each is kept and reused while nothing about it changes, and
    copied with its new load (:meth:`~model.InstanceSnapshot.loaded`) when
    only that does.  Only instances in flight, in cooldown, barred from a
    host or on a host in maintenance can change host, block or no-return
    hosts, so only those (this period's and the last's) are compared field
    by field; the others are compared on their load alone, and not at all
    while the trace rows are those of the last period.
    """

    def __init__(self, cluster: cluster_mod.Cluster):
        vms = cluster.vms
        #: (name, trace column, cores per trace percent), by name.
        self.columns = [(name, vms[name].index, vms[name].flavor.vcpus / 100.0)
                        for name in sorted(vms)]
        self.position = {name: i for i, (name, _, _) in
                         enumerate(self.columns)}
        self.instances = [None] * len(self.columns)
        self.rows = None
        self.special = set()
        self.maintained = set()

    def build(self, view: PeriodView) -> list:
        """This period's instances, in name order."""
        rows = view.rows(view.window)
        instances = self.instances
        special = view.blocked.keys() | view.left.keys()
        maintained = set()
        if view.maintenance:
            maintained = {name for name, host
                          in view.cluster.location.items()
                          if host in view.maintenance}
        # Ended moves too: with no cooldown or no-return time, a move
        # shorter than a period is never blocked or left behind.
        recheck = (special | self.special | view.arrived | maintained
                   | self.maintained)
        if self.rows is None:
            recheck = self.position.keys()
        elif len(rows) != len(self.rows) or any(
                a is not b for a, b in zip(rows, self.rows, strict=True)):
            self._reload(rows, recheck)
        for name in recheck:
            i = self.position[name]
            instances[i] = self._fresh(view, instances[i], name,
                                       self._load(rows, *self.columns[i][1:]))
        self.rows, self.special = rows, special
        self.maintained = maintained
        return list(instances)

    @staticmethod
    def _load(rows, column, scale):
        if len(rows) == 1:
            return rows[0][column] * scale
        return sum(row[column] for row in rows) / len(rows) * scale

    def _reload(self, rows, skip) -> None:
        """New loads for every instance but ``skip`` (rechecked apart)."""
        instances, load = self.instances, self._load
        for i, (name, column, scale) in enumerate(self.columns):
            known = instances[i]
            if known is None or name in skip:
                continue
            cores = load(rows, column, scale)
            if known.cpu_cores != cores:
                instances[i] = known.loaded(cores)

    def _fresh(self, view, known, name, cores):
        host = view.cluster.location[name]
        blocked, left = view.blocked.get(name), view.left.get(name, ())
        # The live builder's rule (live.drain_blocked): off a host in
        # maintenance a move in flight waits, a cooldown is no bar.
        transient = host in view.maintenance and name in view.cluster.inflight
        if host in view.maintenance and not transient:
            blocked = None
        if (known is None or known.host != host or known.blocked != blocked
                or known.left != left or known.transient != transient):
            flavor = view.cluster.vms[name].flavor
            return model.InstanceSnapshot(
                uuid=name, host=host, name=name, vcpus=flavor.vcpus,
                memory_mb=flavor.memory_mb, cpu_cores=cores,
                blocked=blocked, left=left, transient=transient)
        return known if known.cpu_cores == cores else known.loaded(cores)


def _step(trace: traces.Trace, now: float) -> int:
    return min(int(now // trace.step_seconds), len(trace.steps) - 1)


@dataclasses.dataclass
class Result:
    strategy: str
    card: scoring.Scorecard
    mean_load: float
    #: One :class:`~maintenance.Drain` per host taken into maintenance.
    drains: list = dataclasses.field(default_factory=list)


class _Blocker:
    """The live executor's rule (``recent_moves``) over the simulated
    migrations: in flight, and completed within the cooldown or the
    no-return time."""

    def __init__(self, cooldown: float, no_return: float):
        self.cooldown = cooldown
        self.no_return = no_return
        self._finished = []

    def finished(self, migration: cluster_mod.Migration) -> None:
        self._finished.append(migration)

    def state(self, inflight: dict, now: float) -> recent_moves.MigrationState:
        keep = max(self.cooldown, self.no_return)
        self._finished = [m for m in self._finished if now - m.end < keep]
        moves = [recent_moves.Move(
            instance=m.vm, phase=recent_moves.DONE, source=m.source,
            destination=m.destination, age=now - m.end, by_drs=True)
            for m in self._finished]
        moves += [recent_moves.Move(
            instance=name, phase=recent_moves.IN_FLIGHT, source=m.source,
            destination=m.destination, age=now - m.start, by_drs=True)
            for name, m in inflight.items()]
        return recent_moves.migration_state(
            moves, self.cooldown, quarantine=0, no_return=self.no_return)


def _admit(cluster: cluster_mod.Cluster, name: str,
           destination: str | None) -> tuple:
    """``(destination, None)`` where Nova would start this live migration,
    or ``(None, why it refuses)``; no destination: its scheduler picks."""
    if name in cluster.inflight:
        return None, 'already migrating'
    vm = cluster.vms[name]
    if destination is None:
        chosen = cluster.scheduler_choice(vm)
        return (chosen, None) if chosen else (None, 'no valid host')
    if destination == cluster.location[name]:
        return None, 'destination is the source'
    rejection = cluster.rejection(vm, destination)
    return (None, rejection.rule) if rejection else (destination, None)


class _Run:
    """One strategy's replay: the cluster, its windows and its scorecard."""

    def __init__(self, trace, vms, spec, strategy, settings, schedule):
        self.trace, self.spec = trace, spec
        self.strategy, self.settings = strategy, settings
        self.cluster = cluster_mod.Cluster(spec, vms)
        self.maintenance = (maintenance_mod.Tracker(schedule, self.cluster)
                            if schedule else None)
        self.windows = settings.windows()
        self.card = scoring.Scorecard(settings.config.cpu_threshold,
                                      settings.ping_pong_periods)
        self.blocker = _Blocker(settings.cooldown, settings.no_return)
        keep = max(self.windows.window,
                   HISTORY_SECONDS // settings.interval)
        self.history = {h: collections.deque(maxlen=keep)
                        for h in self.cluster.hosts}
        self.loads = []
        self.inputs = SnapshotInputs(self.cluster)

    def _measure(self, now: float) -> dict:
        cluster = self.cluster
        cores = cluster.host_cores(self.trace.steps[_step(self.trace, now)])
        percent = {h: 100.0 * c / self.spec.host_vcpus
                   for h, c in cores.items()}
        self.card.observe(percent)
        self.loads.append(statistics.fmean(percent.values()))
        for host, value in percent.items():
            self.history[host].append(value)
        return self.windows.update(now, {
            h: metrics.HostSample(now, percent[h], cluster.memory_percent(h))
            for h in cluster.hosts})

    def period(self, period: int) -> None:
        now = float(period * self.settings.interval)
        cluster, card = self.cluster, self.card
        ended = cluster.finish_migrations(now)
        for migration in ended:
            self.blocker.finished(migration)
        if self.maintenance:
            self.maintenance.advance(now, ended)
        statuses = self._measure(now)
        recent = self.blocker.state(cluster.inflight, now)
        view = PeriodView(period, now, self.settings.interval, self.trace,
                          cluster, self.history, statuses, recent.blocked,
                          self.windows.window, recent.left, self.inputs,
                          arrived=frozenset(m.vm for m in ended),
                          maintenance=(self.maintenance.hosts
                                       if self.maintenance else {}),
                          start=functools.partial(self.start, period))
        # Collect the simulator's garbage now, so that a strategy's
        # planning time does not include a collection it did not cause
        # (cheap: what existed before the loop is frozen).
        gc.collect()
        moves, built, decided = self.strategy.plan(view)
        card.planned(built, decided)
        for name, destination in moves:
            self.start(period, name, destination, now)

    def start(self, period: int, name: str, destination: str | None,
              at: float):
        """Start one move at ``at`` if Nova would; the migration or None."""
        destination, refusal = _admit(self.cluster, name, destination)
        if refusal:
            self.card.refused(refusal)
            return None
        migration = self.cluster.start_migration(name, destination, at)
        self.card.migrated(period, name, migration.source, destination,
                           migration.memory_mb)
        if self.maintenance:
            self.maintenance.migrated(migration)
        return migration


def run(trace: traces.Trace, vms, spec: cluster_mod.ClusterSpec,
        strategy, settings: Settings,
        maintenance: maintenance_mod.Schedule | None = None) -> Result:
    """Replay the trace under one strategy on a freshly placed cluster,
    with hosts in maintenance as ``maintenance`` schedules them."""
    replay = _Run(trace, vms, spec, strategy, settings, maintenance)
    gc.collect()
    gc.freeze()
    try:
        for period in range(settings.periods(trace)):
            replay.period(period)
    finally:
        gc.unfreeze()
    drains = replay.maintenance.finish() if replay.maintenance else []
    return Result(strategy.name, replay.card, statistics.fmean(replay.loads),
                  drains)
