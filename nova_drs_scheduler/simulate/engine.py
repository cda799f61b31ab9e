"""The simulation loop, one rebalance period at a time, and what happens
between two periods.

Periods are ``[drs] rebalance_interval`` seconds long, as in production; a
trace step (5 minutes for PlanetLab) holds its value for every period inside
it.  Each period, in the order the live service sees the world:

1. the maintenance schedule, if any, moves on (a host enters maintenance,
   starts its work once empty, comes back; see ``maintenance``), as do
   the hosts' power states when power is modelled (a host entering
   standby powers off once empty, a waking host serves once booted; see
   ``power``);
2. every host's CPU is measured from the trace (a copy of the period past
   on both hosts for as long as it ran) and fed to the same
   :class:`~nova_drs_scheduler.planning.metrics.MetricsWindows` as in
   production (built from the same ``[drs]`` options), which judge hosts;
   the scorecard counts overloaded, DRS-caused and unserved load, and the
   moves due for their relief check are checked on this measurement;
3. the strategy plans on that view (for our policies: a
   :class:`~nova_drs_scheduler.planning.model.Snapshot` and the capacity
   candidates, handed to the production planner);
4. each planned move is re-validated as Nova would when it starts it
   (instance not already migrating, capacity filters on the destination)
   and started, or counted as failed; a power plan's actions among them
   (``planning.power.PowerAction``) apply after them.  A move with no
   destination is Nova's scheduler's to place (Watcher's
   ``host_maintenance``).

Between two periods time runs from event to event (``_Run.flow``): a
migration ends when its copy is over (``links``: Nova's queue per source,
the hosts' shared links), letting the next queued copy of its source
start; at each such moment, and at the times a strategy asked to be woken
(``PeriodView.wake``), a strategy with a ``react(view)`` method is handed
the view of that moment (the last period's measurements, the cluster as it
is now) and may start moves at once: our drains flow that way, as does
Watcher's applier, layer after layer.
"""

import collections
import dataclasses
import functools
import gc
import heapq
import itertools
import math
import statistics
from collections.abc import Callable

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import power as power_plan
from nova_drs_scheduler.planning import recent_moves
from nova_drs_scheduler.planning import relief
from nova_drs_scheduler.planning.goals import level
from nova_drs_scheduler.simulate import cluster as cluster_mod
from nova_drs_scheduler.simulate import links
from nova_drs_scheduler.simulate import maintenance as maintenance_mod
from nova_drs_scheduler.simulate import power as power_mod
from nova_drs_scheduler.simulate import scoring
from nova_drs_scheduler.simulate import traces

#: Seconds of measured host CPU kept for strategies that read their own
#: history (Watcher's default periods are 5 to 12 minutes).
HISTORY_SECONDS = 3600


@dataclasses.dataclass(frozen=True)
class Settings:
    """The ``[drs]`` values the loop needs besides the planner's own."""

    config: model.PlannerConfig
    #: Fresh per-host windows, e.g. ``from_conf.metrics_windows``.
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
    #: A host over its threshold is DRS-caused when it would not be over
    #: without the instances whose migration to it ended within this many
    #: periods (``tools/diagnose_overload.py --arrival-periods``).
    arrival_periods: int = 60
    #: A balancing or leveling move's relief is checked at the first period
    #: this many periods after its migration ended (``[drs]
    #: relief_check_delay`` over the interval).
    relief_check_periods: int = 10
    #: Seconds an instance's load trend is kept unmeasured; None: as the
    #: live service keeps it (``metrics.LoadTrends.KEPT_HALFLIVES``).
    trend_max_age: float | None = None

    def periods(self, trace: traces.Trace) -> int:
        return len(trace.steps) * trace.step_seconds // self.interval


@dataclasses.dataclass
class PeriodView:
    """What a strategy may look at in one period, or at a moment between
    two periods (``sampled`` False: the last period's measurements, the
    cluster as it is at ``now``)."""

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
    #: VMs whose migration ended since the last period's start: on a new
    #: host.
    arrived: frozenset = frozenset()
    #: Hosts over their threshold now that would not be without the
    #: instances migrated to them lately (``scoring.Arrivals``).
    drs_caused: frozenset = frozenset()
    #: {host being drained (in maintenance, or entering standby): when
    #: it entered}
    maintenance: dict = dataclasses.field(default_factory=dict)
    #: Hosts waiting in the maintenance queue, to be drained later.
    queued: frozenset = frozenset()
    #: ``start(instance, destination or None)``: start a move now, as
    #: the engine starts planned moves; the migration, or None when Nova
    #: refuses it.
    start: Callable | None = None
    #: ``wake(at)``: hand the strategy's ``react`` the view of ``at``.
    wake: Callable | None = None
    #: The hosts' power states, when the run models them (else None):
    #: a strategy that manages power moves hosts through it.
    power: power_mod.Hosts | None = None
    #: False at a moment between two periods: no new sample, so the
    #: instances' load trends are not fed.
    sampled: bool = True
    #: {host: (stayed, checked)} of its moves' recent relief checks
    #: (``HostSnapshot.loads_stayed``).
    stayed: dict = dataclasses.field(default_factory=dict)

    #: VMs of ``blocked`` held by their cooldown alone.
    cooling: frozenset = frozenset()

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

    def snapshot(self, config: model.PlannerConfig,
                 power_level: str = 'off') -> model.Snapshot:
        """The planner's input, built as the live service builds it.

        An instance's load is averaged over the same window as its host's,
        so that the planner's projections add up.  ``power_level``: the
        pool's power management level, as the strategy runs it.
        """
        cluster, maintenance = self.cluster, self.maintenance
        states = self.power.state if self.power else {}
        woken = self.power.woken_at if self.power else {}
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
                draining=name in maintenance,
                queued=name in self.queued,
                power=states.get(name, model.ON), power_level=power_level,
                woken_ago=(self.now - woken[name] if name in woken
                           else None),
                loads_stayed=self.stayed.get(name))
        measured = self.measured(hosts, config)
        return model.Snapshot(hosts=hosts,
                              instances=self.inputs.build(self, measured,
                                                          config),
                              config=config,
                              inflight_by_host=cluster.inflight_by_host(),
                              inflight_total=len(cluster.inflight),
                              trends=self.inputs.trends or {})

    def measured(self, hosts: dict, config: model.PlannerConfig) -> set:
        """The hosts whose instances the live service measures: over
        their threshold this period, in maintenance, or a leveling
        source."""
        measured = {name for name, status in self.statuses.items()
                    if status.counter > 0}
        measured.update(self.maintenance)
        return measured | level.leveling_sources(hosts, config)

    def candidates(self) -> model.CandidatesFn:
        return cluster_mod.CapacityCandidates(self.cluster)


class SnapshotInputs:
    """What building the planner's input keeps from one period to the next.

    At 1000 hosts and 20000 instances, building every
    :class:`~model.InstanceSnapshot` anew would be most of a period's input
    time.  So each is kept and reused while nothing about it changes, and
    copied with its new load (:meth:`~model.InstanceSnapshot.loaded`) when
    only that does.  Only instances in flight, in cooldown, barred from a
    host or on a host in maintenance can change host, block or no-return
    hosts, so only those (this period's and the last's) are compared field
    by field; the others are compared on their load alone, and not at all
    while the trace rows are those of the last period.

    It also keeps the instances' load trends (:class:`metrics.LoadTrends`,
    ``Snapshot.trends``), fed with the loads the live service measures:
    those of the instances on the hosts it is given.
    """

    def __init__(self, cluster: cluster_mod.Cluster,
                 trend_max_age: float | None = None):
        vms = cluster.vms
        #: (name, trace column, cores per trace percent), by name.
        self.columns = [(name, vms[name].index, vms[name].flavor.vcpus / 100.0)
                        for name in sorted(vms)]
        self.position = {name: i for i, (name, _, _) in
                         enumerate(self.columns)}
        self.instances = [None] * len(self.columns)
        self.rows = None
        #: Each instance's load over ``rows``, in cores, by position.
        self.cores = []
        self.special = set()
        self.trend_max_age = trend_max_age
        self.trends = None

    def build(self, view: PeriodView, measured: set,
              config: model.PlannerConfig) -> list:
        """This period's instances, in name order; ``measured``: the hosts
        whose instances' loads feed the trends (none between periods)."""
        rows = view.rows(view.window)
        instances, position = self.instances, self.position
        new_rows = (self.rows is None or len(rows) != len(self.rows) or any(
            a is not b for a, b in zip(rows, self.rows, strict=True)))
        if new_rows:
            self.cores = self._loads(rows)
        cores = self.cores
        self._update_trends(view, measured, config)
        # Only an instance blocked or left behind reads maintenance (its
        # block lifted, or transient): the others are the same on a host
        # in maintenance.  Ended moves too: with no cooldown or no-return
        # time, a move shorter than a period is never blocked or left
        # behind.
        special = view.blocked.keys() | view.left.keys()
        recheck = special | self.special | view.arrived
        if self.rows is None:
            recheck = position.keys()
        elif new_rows:
            self._reload(recheck)
        for name in recheck:
            i = position[name]
            instances[i] = self._fresh(view, instances[i], name, cores[i])
        self.rows, self.special = rows, special
        return list(instances)

    def _loads(self, rows) -> list:
        """Every instance's trace CPU averaged over ``rows``, in cores."""
        if len(rows) == 1:
            row = rows[0]
            return [row[column] * scale for _, column, scale in self.columns]
        count = len(rows)
        sums = [sum(values) for values in zip(*rows, strict=True)]
        return [sums[column] / count * scale
                for _, column, scale in self.columns]

    def _update_trends(self, view, measured: set,
                       config: model.PlannerConfig) -> None:
        """Feed the loads of the instances on the ``measured`` hosts;
        nothing while ``load_halflife`` is 0, nor between periods."""
        if config.load_halflife <= 0 or not view.sampled:
            return
        if self.trends is None:
            self.trends = metrics.LoadTrends(config.load_halflife,
                                             self.trend_max_age)
        now, residents = view.now, view.cluster.residents
        cores, position = self.cores, self.position
        loads = {name: cores[position[name]]
                 for host in measured for name in residents[host]}
        self.trends.update(now, loads)

    def _reload(self, skip) -> None:
        """New loads for every instance but ``skip`` (rechecked apart)."""
        instances, cores, columns = self.instances, self.cores, self.columns
        for i, known in enumerate(instances):
            if known is None or known.cpu_cores == cores[i] \
                    or columns[i][0] in skip:
                continue
            instances[i] = known.loaded(cores[i])

    def _fresh(self, view, known, name, cores):
        host = view.cluster.location[name]
        blocked, left = view.blocked.get(name), view.left.get(name, ())
        # The live builder's rule (live.drain_blocked): off a host in
        # maintenance a move in flight waits, a cooldown is no bar.
        transient = host in view.maintenance and name in view.cluster.inflight
        if host in view.maintenance and not transient:
            blocked = None
        cooling = blocked is not None and name in view.cooling
        if (known is None or known.host != host or known.blocked != blocked
                or known.left != left or known.transient != transient
                or known.cooling != cooling):
            flavor = view.cluster.vms[name].flavor
            return model.InstanceSnapshot(
                uuid=name, host=host, name=name, vcpus=flavor.vcpus,
                memory_mb=flavor.memory_mb, cpu_cores=cores,
                blocked=blocked, left=left, transient=transient,
                cooling=cooling)
        return known if known.cpu_cores == cores else known.loaded(cores)


def _cooling(recent: recent_moves.MigrationState) -> frozenset:
    """The instances that only their cooldown holds."""
    return frozenset(name for name, kind in recent.kinds.items()
                     if kind == recent_moves.COOLDOWN)


def _step(trace: traces.Trace, now: float) -> int:
    return min(int(now // trace.step_seconds), len(trace.steps) - 1)


@dataclasses.dataclass
class Result:
    strategy: str
    card: scoring.Scorecard
    mean_load: float
    #: One :class:`~maintenance.Drain` per host taken into maintenance.
    drains: list = dataclasses.field(default_factory=list)
    #: The energy figures (:meth:`power.Hosts.summary`) when the run
    #: modelled power, else None.
    power: dict | None = None


class _Blocker:
    """The live executor's rule (``recent_moves``) over the simulated
    migrations: in flight, and completed within the cooldown or the
    no-return time."""

    def __init__(self, cooldown: float, no_return: float):
        self.cooldown = cooldown
        self.no_return = no_return
        self._finished = []

    def finished(self, migration: links.Migration) -> None:
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

    def __init__(self, trace, vms, spec, strategy, settings, schedule,
                 power):
        self.trace, self.spec = trace, spec
        self.strategy, self.settings = strategy, settings
        self.cluster = cluster_mod.Cluster(spec, vms)
        if schedule and power:
            raise ValueError('maintenance and power management are not '
                             'simulated in the same run')
        self.maintenance = (maintenance_mod.Tracker(schedule, self.cluster)
                            if schedule else None)
        self.power = (power_mod.Hosts(power, self.cluster,
                                      settings.config.cpu_threshold)
                      if power else None)
        self.windows = settings.windows()
        self.card = scoring.Scorecard(settings.config.cpu_threshold,
                                      settings.ping_pong_periods,
                                      spec.host_vcpus, settings.interval)
        self.arrivals = scoring.Arrivals(settings.arrival_periods)
        #: {instance in flight: the relief its move promised}
        self._promises = {}
        #: Heap of (when due, order, promise, source, destination, vm).
        self._reliefs = []
        #: The relief checks made: ``(time, source, load_stayed)``, what a
        #: pool learns whether its moved loads stay from.
        self.checks = collections.deque()
        self._order = itertools.count()
        self.blocker = _Blocker(settings.cooldown, settings.no_return)
        keep = max(self.windows.window,
                   HISTORY_SECONDS // settings.interval)
        self.history = {h: collections.deque(maxlen=keep)
                        for h in self.cluster.hosts}
        self.loads = []
        self.inputs = SnapshotInputs(self.cluster, settings.trend_max_age)
        #: The migrations ended since the last period's start.
        self._ended = []
        #: Heap of the times the strategy asked to be woken.
        self._wakes = []
        #: The last period's view; moments between periods derive theirs.
        self._view = None

    def _measure(self, period: int, now: float, ended: list) -> tuple:
        """Every host's CPU now (migrations during the period past on both
        hosts): the windows' statuses, and the hosts over their threshold
        by the DRS's doing."""
        cluster, vcpus = self.cluster, self.spec.host_vcpus
        row = self.trace.steps[_step(self.trace, now)]
        cores = cluster.host_cores(row, now - self.settings.interval, now,
                                   ended)
        percent = {h: 100.0 * c / vcpus for h, c in cores.items()}
        caused = self.arrivals.caused(
            period, percent, self.settings.config.cpu_threshold,
            cluster.location,
            lambda name: 100.0 * cluster.vm_cores(cluster.vms[name], row)
            / vcpus)
        off = frozenset()
        if self.power:
            self.power.account(percent, self.settings.interval)
            off = self.power.off()
        # A host off or booting serves nothing and reports no metrics.
        serving = ({h: v for h, v in percent.items() if h not in off}
                   if off else percent)
        self.card.observe(serving, len(caused))
        self._check_reliefs(now, percent)
        self.loads.append(statistics.fmean(serving.values()))
        for host, value in percent.items():
            self.history[host].append(value)
        # As the live service does: a host being drained starts afresh.
        self.windows.restart(self._draining())
        return self.windows.update(now, {
            h: None if h in off else metrics.HostSample(
                now, percent[h], cluster.memory_percent(h))
            for h in cluster.hosts}), frozenset(caused)

    def _finished(self, migration: links.Migration) -> None:
        """A migration is over: its copy time, its instance's arrival (from
        the first period that samples it), its relief check due."""
        self.card.copied(migration.copy_seconds)
        self.blocker.finished(migration)
        self.arrivals.arrived(
            math.ceil(migration.end / self.settings.interval),
            migration.vm, migration.destination)
        promise = self._promises.pop(migration.vm, None)
        if promise is not None:
            due = migration.end + (self.settings.relief_check_periods
                                   * self.settings.interval)
            heapq.heappush(self._reliefs, (
                due, next(self._order), promise, migration.source,
                migration.destination, migration.vm))
        self._ended.append(migration)

    def _check_reliefs(self, now: float, percent: dict) -> None:
        """The moves due: their relief on this period's measurement, and
        whether their instance's load stayed (its trace load now)."""
        threshold = self.settings.config.cpu_threshold
        row = self.trace.steps[_step(self.trace, now)]
        while self._reliefs and self._reliefs[0][0] <= now:
            _, _, promise, source, destination, vm = heapq.heappop(
                self._reliefs)
            result = relief.check(
                promise, percent[source], percent[destination], threshold,
                threshold, self.cluster.vm_cores(self.cluster.vms[vm], row))
            self.card.relieved(result)
            if result is not None:
                self.checks.append((now, source, result.get('load_stayed')))
        while self.checks and now - self.checks[0][0] > relief.LEARN_SECONDS:
            self.checks.popleft()

    def period(self, period: int) -> None:
        now = float(period * self.settings.interval)
        cluster = self.cluster
        self.flow(now)
        ended, self._ended = self._ended, []
        if self.maintenance:
            self.maintenance.advance(now, ended)
        if self.power:
            self.power.advance(now, ended)
        statuses, caused = self._measure(period, now, ended)
        recent = self.blocker.state(cluster.inflight, now)
        view = self._view = PeriodView(
            period, now, self.settings.interval, self.trace, cluster,
            self.history, statuses, recent.blocked, self.windows.window,
            recent.left, self.inputs, arrived=frozenset(m.vm for m in ended),
            drs_caused=caused, maintenance=self._draining(),
            queued=self._queued(),
            start=functools.partial(self.start, period, at=now),
            wake=self.wake, power=self.power,
            stayed=relief.stayed_counts(self.checks, now),
            cooling=_cooling(recent))
        # Collect the simulator's garbage now, so that a strategy's
        # planning time does not include a collection it did not cause
        # (cheap: what existed before the loop is frozen).
        gc.collect()
        moves, built, decided = self.strategy.plan(view)
        self.card.planned(built, decided)
        self._apply(period, moves, now)

    def flow(self, until: float) -> None:
        """Run time on to ``until`` from event to event: migrations end
        (and queued copies start), and the strategy reacts to each moment
        and to the wakes it asked for."""
        react = getattr(self.strategy, 'react', None)
        wakes = self._wakes
        while True:
            at = min(self.cluster.next_end(),
                     wakes[0] if wakes else math.inf)
            if at > until:
                return
            for migration in self.cluster.finish_migrations(
                    at, self.trace.steps[_step(self.trace, at)]):
                self._finished(migration)
            while wakes and wakes[0] <= at:
                heapq.heappop(wakes)
            if react is not None and self._view is not None:
                moves, built, decided = react(self._moment(at))
                self.card.planned_between(built, decided)
                self._apply(self._view.period, moves, at)

    def wake(self, at: float) -> None:
        """Hand the strategy the view of ``at`` (``PeriodView.wake``)."""
        heapq.heappush(self._wakes, at)

    def _moment(self, at: float) -> PeriodView:
        """The view at ``at``, between two periods: the last period's
        measurements, the cluster, its migrations and drains as they are
        now."""
        period = self._view.period
        recent = self.blocker.state(self.cluster.inflight, at)
        return dataclasses.replace(
            self._view, now=at, blocked=recent.blocked, left=recent.left,
            cooling=_cooling(recent),
            arrived=frozenset(m.vm for m in self._ended),
            maintenance=self._draining(), queued=self._queued(),
            start=functools.partial(self.start, period, at=at),
            sampled=False)

    def _queued(self) -> frozenset:
        return self.maintenance.queued if self.maintenance else frozenset()

    def _draining(self) -> dict:
        """{host being drained (maintenance, or entering standby): when it
        entered}."""
        if self.maintenance:
            return self.maintenance.hosts
        return self.power.entering if self.power else {}

    def _apply(self, period: int, moves, at: float) -> None:
        """Start a plan's moves at ``at``; then its power actions."""
        for move in moves:
            if isinstance(move, model.Move):
                self.start(period, move.instance, move.destination, at,
                           _promise(move))
            elif isinstance(move, power_plan.PowerAction):
                self._power(move, at)
            else:
                self.start(period, *move, at=at)

    def _power(self, action, now: float) -> None:
        """A power plan's action on its host (after the period's moves); a
        host entering standby is drained from this moment on."""
        if self.power is None:
            raise ValueError(f'{self.strategy.name} manages power: run it '
                             f'with a power model')
        if getattr(self.power, action.kind)(action.host, now) \
                and action.kind == power_plan.STANDBY:
            self.wake(now)

    def start(self, period: int, name: str, destination: str | None,
              at: float, promise=None):
        """Start one move at ``at`` if Nova would; the migration or None.
        ``promise``: the move's expected loads, checked after it ends."""
        destination, refusal = _admit(self.cluster, name, destination)
        if refusal:
            self.card.refused(refusal)
            return None
        migration = self.cluster.start_migration(
            name, destination, at, self.trace.steps[_step(self.trace, at)])
        self.card.migrated(period, name, migration.source, destination,
                           migration.memory_mb)
        if promise is not None:
            self._promises[name] = promise
        if self.maintenance:
            self.maintenance.migrated(migration)
        if self.power:
            self.power.migrated(migration)
        return migration


def _promise(move: model.Move):
    """What a balancing or leveling move is expected to do, to be checked
    after it (a drain promises no relief)."""
    if move.goal in (model.BALANCE, model.LEVEL):
        return move.expected
    return None


def run(trace: traces.Trace, vms, spec: cluster_mod.ClusterSpec,
        strategy, settings: Settings,
        maintenance: maintenance_mod.Schedule | None = None,
        power: power_mod.PowerModel | None = None) -> Result:
    """Replay the trace under one strategy on a freshly placed cluster,
    with hosts in maintenance as ``maintenance`` schedules them; with
    ``power``, hosts have power states the strategy may change, and the
    run's energy is measured."""
    replay = _Run(trace, vms, spec, strategy, settings, maintenance, power)
    gc.collect()
    gc.freeze()
    try:
        for period in range(settings.periods(trace)):
            replay.period(period)
    finally:
        gc.unfreeze()
    drains = replay.maintenance.finish() if replay.maintenance else []
    return Result(strategy.name, replay.card, statistics.fmean(replay.loads),
                  drains, replay.power.summary() if replay.power else None)
