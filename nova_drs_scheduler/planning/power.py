"""Power management's decisions: which hosts enter standby, which wakes.

Pure, like the planner: a snapshot, the pools' demand forecasts and spare
counters (periods with a host to spare) in, a :class:`PowerPlan` with a
reason on every action and pool out.  It is the planner's last goal
(:mod:`.goals.consolidate`, given :class:`PowerInputs`): the live leader
and the simulator get the same :func:`plan` from ``planner.plan``, after
:func:`observe` has fed the period's demand to the forecasts and
counters.

A *pool* is what the planner balances within (``working.pool_key``: the
aggregate pool in ``mode = aggregate``, one pool in global mode).  Per
pool:

- *demand* is the CPU in use on its powered hosts, in cores (hosts with
  no fresh metrics count at the mean of the measured ones); the hosts
  that *take load* are those on, not entering standby and not in
  maintenance; *utilization* is demand in percent of their CPUs;
- the *forecast* (:mod:`.outlook`: Holt's, raised where the learnt
  daily shape rises) of the demand ``boot_seconds +
  period_seconds`` ahead (:data:`RAMP_HORIZONS` times that while it
  rises), plus ``forecast_deviations`` of its deviation, is the demand
  the pool must be ready for: a host woken now is up a boot time later,
  and the next period may be too late;
- a host's *ceiling* is its ``cpu_threshold`` less the planner's
  ``margin``; a host *at the forecast* is at its outlook grown as the
  pool's forecast is above its demand now;
- the hosts it *needs* under a utilization are the fewest (largest
  first) whose CPUs hold that demand under it and each under its
  ceiling, and whose memory holds the memory in use under each host's
  RAM threshold.

Wake (or cancel) comes first, one action per pool per period:

- the hosts taking load or waking are fewer than those the pool needs
  under the band's top (and their ceilings) plus the reserve,
  or fewer than ``min_hosts``, or a boot found no valid host in the pool
  (``unplaced``);
- a host entering standby is given back first (``cancel``), as is one
  whose pool's level became ``off`` or whose drain is blocked by an
  instance that cannot move; else the standby host with the most vCPUs
  wakes (name breaks ties).

Standby, when nothing wakes: the pool *keeps* ``max(min_hosts, needed +
reserve_hosts)`` hosts, needed under the band's *middle* (DPM's target; a
wake waits for the top: the gap keeps one period's noise from undoing the
last action).  When it has had more hosts taking load than that for
``low_periods`` periods, its level is not ``off`` and no host is waking,
it sheds toward that number, several hosts in one period where the check
below allows, even while others still enter standby: cheapest to empty
first (fewest GB of RAM to move), each such that every instance on it can
move (none blocked for good) and has a destination Nova's filters allow
(``candidates``, as for any move) in the pool, left under its ceiling at
the forecast and under its RAM threshold once all of them are placed
(largest first, each to the least loaded host), and every other host
stays under its ceiling at the forecast: a check of each host, not of
the pool's mean.  The instances of the hosts entering standby, and of
those chosen before, are counted where the check placed them.
The drain itself is the planner's (an entering host is ``draining``).
"""

import dataclasses
from collections.abc import Collection
from collections.abc import Mapping

from nova_drs_scheduler.planning import capacity
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import outlook
from nova_drs_scheduler.planning import standby_placement
from nova_drs_scheduler.planning import working

#: Kinds of :class:`PowerAction`.
STANDBY, WAKE, CANCEL = 'standby', 'wake', 'cancel'

#: Horizons a rising forecast reads ahead (:class:`_PoolPlan`).
RAMP_HORIZONS = 2.0


@dataclasses.dataclass(frozen=True)
class PowerConfig:
    """Everything power management reads from ``[drs]``, as plain values."""

    band_low: float = 45.0
    band_high: float = 81.0
    reserve_hosts: int = 1
    min_hosts: int = 2
    low_periods: int = 6
    #: Seconds from power-on to nova-compute up (a driver's measured value
    #: replaces ``[drs] power_boot_seconds`` once known).
    boot_seconds: float = 600.0
    forecast_deviations: float = 1.0
    #: Seconds between two periods (``[drs] rebalance_interval``).
    period_seconds: float = 60.0

    @classmethod
    def from_conf(cls, conf, period_seconds: float | None = None
                  ) -> 'PowerConfig':
        """``[drs]``'s power options; ``period_seconds`` defaults to
        ``[drs] rebalance_interval`` (the simulator passes its own)."""
        drs = conf.drs
        return cls(
            band_low=drs.power_band_low, band_high=drs.power_band_high,
            reserve_hosts=drs.power_reserve_hosts,
            min_hosts=drs.power_min_hosts,
            low_periods=drs.power_low_periods,
            boot_seconds=float(drs.power_boot_seconds),
            forecast_deviations=drs.power_forecast_deviations,
            period_seconds=float(drs.rebalance_interval
                                 if period_seconds is None
                                 else period_seconds))

    @property
    def horizon(self) -> float:
        """Seconds ahead the pool must be ready for."""
        return self.boot_seconds + self.period_seconds

    @property
    def target(self) -> float:
        """The band's middle (vSphere DPM's target): a standby leaves the
        pool's forecast under it, a wake waits for the top, so that one
        period's noise cannot undo the last period's action."""
        return (self.band_low + self.band_high) / 2.0


@dataclasses.dataclass(frozen=True)
class PowerInputs:
    """What :func:`plan` reads besides the snapshot: power management's
    state between periods, handed to the planner with the snapshot."""

    #: Pool -> :class:`.outlook.Outlook` of its demand (:func:`observe`).
    forecasts: Mapping
    #: Pool -> consecutive periods with a host to spare (:func:`observe`).
    counters: Mapping
    config: PowerConfig
    #: Pools where a boot found no valid host since the last period.
    unplaced: Collection = frozenset()


@dataclasses.dataclass(frozen=True)
class PowerAction:
    kind: str                 # STANDBY | WAKE | CANCEL
    host: str
    pool: str | None
    reason: str
    #: RAM to move off the host, GB (standby).
    gb: float = 0.0
    #: The pool's forecast utilization the decision read, percent.
    forecast: float | None = None


@dataclasses.dataclass(frozen=True)
class PoolPower:
    """One pool's verdict."""

    pool: str | None
    #: The most permissive level among its hosts.
    level: str
    #: Demand in percent of the CPUs of the hosts taking load; None when
    #: unknown (no host measured or none taking load).
    utilization: float | None
    #: Forecast demand at the horizon (expected plus the deviations), in
    #: percent of the CPUs of the hosts taking load or waking.
    forecast: float | None
    band: tuple
    on: tuple = ()
    standby: tuple = ()
    waking: tuple = ()
    entering: tuple = ()
    #: Consecutive periods with a host to spare (more taking load than
    #: the pool keeps).
    counter: int = 0
    #: Hosts the forecast needs under the band's top and their ceilings
    #: (without reserve).
    needed: int | None = None
    #: The same for the demand now, without the forecast: what the
    #: forecast adds shows beside it (``nova-drs status``).
    needed_now: int | None = None
    reason: str = ''


@dataclasses.dataclass(frozen=True)
class PowerPlan:
    actions: tuple
    pools: tuple
    notes: tuple = ()

    def to_dict(self) -> dict:
        """Plain data, ready for JSON (the decision record)."""
        return model._plain(self)


@dataclasses.dataclass(frozen=True)
class _Pool:
    """A pool's hosts and figures, as :func:`_pools` finds them."""

    key: str | None
    hosts: tuple
    #: Cores in use on the powered hosts; None when none is measured.
    demand: float | None
    #: Memory in use on the powered hosts, MB.
    memory: float


def _key(pool) -> tuple:
    return (pool is not None, pool or '')


def _managed(host: model.HostSnapshot, config: model.PlannerConfig) -> bool:
    """Whether power management may count or touch the host at all."""
    if host.excluded or host.vcpus <= 0 or host.memory_mb <= 0:
        return False
    return not (config.mode == 'aggregate' and host.pool is None
                and config.unaggregated_hosts == 'ignore')


def _takes_load(host: model.HostSnapshot) -> bool:
    return host.power == model.ON and not host.draining


def _pools(snapshot: model.Snapshot) -> list:
    """The pools of the snapshot, in key order, with their demand."""
    grouped = {}
    for name in sorted(snapshot.hosts):
        host = snapshot.hosts[name]
        if _managed(host, snapshot.config):
            grouped.setdefault(working.pool_key(host, snapshot.config),
                               []).append(host)
    pools = []
    for key in sorted(grouped, key=_key):
        hosts = tuple(grouped[key])
        powered = [h for h in hosts
                   if h.power in (model.ON, model.ENTERING)]
        measured = [h for h in powered if h.cpu_percent is not None]
        demand = None
        if measured:
            cores = sum(h.cpu_percent / 100.0 * h.vcpus for h in measured)
            # Unmeasured powered hosts count at the measured ones' mean.
            demand = cores * (sum(h.vcpus for h in powered)
                              / sum(h.vcpus for h in measured))
        memory = sum((h.ram_percent or 0.0) / 100.0 * h.memory_mb
                     for h in powered)
        pools.append(_Pool(key, hosts, demand, memory))
    return pools


def _percent(cores: float | None, hosts) -> float | None:
    capacity = sum(h.vcpus for h in hosts)
    if cores is None or capacity <= 0:
        return None
    return 100.0 * cores / capacity


def _upper(pool: _Pool, state, config: PowerConfig) -> tuple:
    """``(cores, seconds)``: the demand the pool must be ready for, the
    forecast's upper bound that many seconds ahead and never less than
    now (None when no host is measured).  On a ramp a host woken late
    leaves the others over their threshold until it boots and balancing
    refills it, while one woken early costs its idle power: a rising
    forecast is read :data:`RAMP_HORIZONS` ahead."""
    seconds = config.horizon
    if pool.demand is None or state is None:
        return pool.demand, seconds
    expected, deviation = outlook.ahead(state, seconds)
    if expected > pool.demand:
        seconds = RAMP_HORIZONS * config.horizon
        expected, deviation = outlook.ahead(state, seconds)
    return max(pool.demand, expected
               + config.forecast_deviations * deviation), seconds


def _keep(cores: float, memory: float, hosts, config: PowerConfig,
          margin: float) -> int:
    """Hosts a pool keeps taking load: the fewest of ``hosts`` that hold
    the forecast ``cores`` under the band's middle (and each under its
    ceiling) and ``memory`` under their RAM thresholds, plus the reserve;
    never under the minimum."""
    return max(config.min_hosts,
               _needed(cores, memory, hosts, config.target, margin)
               + config.reserve_hosts)


def observe(snapshot: model.Snapshot, forecasts: Mapping, counters: Mapping,
            now: float, config: PowerConfig) -> tuple[dict, dict]:
    """This period's ``(forecasts, counters)``, per pool: the demand (in
    cores) fed to its forecast, and one more period to its counter while
    it has a host to spare (more hosts taking load than it keeps at the
    forecast, :func:`_keep`), else 0.  A pool no longer in the snapshot
    keeps only its daily shape, days of learning that would otherwise be
    overwritten when it comes back; a pool with no measured host keeps its
    forecast unchanged and counts 0."""
    new_forecasts = {key: outlook.Outlook(shape=state.shape)
                     for key, state in forecasts.items()}
    new_counters = {}
    for pool in _pools(snapshot):
        state = forecasts.get(pool.key) or outlook.Outlook()
        if pool.demand is not None:
            state = outlook.update(state, now, pool.demand)
        new_forecasts[pool.key] = state
        taking = [h for h in pool.hosts if _takes_load(h)]
        cores, _ = _upper(pool, state, config)
        spare = cores is not None and taking and len(taking) > _keep(
            cores, pool.memory, taking, config, snapshot.config.margin)
        new_counters[pool.key] = counters.get(pool.key, 0) + 1 if spare \
            else 0
    return new_forecasts, new_counters


def needs_instances(snapshot: model.Snapshot, counters: Mapping,
                    config: PowerConfig) -> set:
    """Hosts whose instances :func:`plan` must see in the snapshot: those
    it may choose for standby this period (a host shown without its
    instances would look free to empty)."""
    wanted = set()
    for pool in _pools(snapshot):
        if counters.get(pool.key, 0) >= config.low_periods:
            wanted.update(h.name for h in pool.hosts
                          if _standby_candidate(h))
    return wanted


def _standby_candidate(host: model.HostSnapshot) -> bool:
    # A host waiting in the maintenance queue drains for its maintenance
    # when its turn comes: the operator has it, not power management.
    return (host.power == model.ON
            and host.power_level in model.LEVELS[1:]
            and not host.draining and not host.queued and host.schedulable
            and host.cpu_percent is not None)


def _needed(cores: float, memory: float, hosts, top: float,
            margin: float) -> int:
    """The fewest of ``hosts`` (largest first) that hold ``cores`` under
    ``top`` percent of their CPUs, and each under its CPU threshold less
    ``margin`` (the room balancing keeps), and ``memory`` MB under their
    RAM thresholds; one more than all of them when they cannot."""
    def fewest(demand, capacities):
        total = 0.0
        for used, room in enumerate(sorted(capacities, reverse=True)):
            if total >= demand:
                return used
            total += room
        return len(capacities) + (total < demand)
    return max(
        fewest(cores, [h.vcpus * min(top, h.cpu_threshold - margin) / 100.0
                       for h in hosts]),
        fewest(memory, [h.memory_mb * h.ram_threshold / 100.0
                        for h in hosts]))


def plan(snapshot: model.Snapshot, candidates: model.CandidatesFn,
         forecasts: Mapping, counters: Mapping, config: PowerConfig,
         unplaced=frozenset()) -> PowerPlan:
    """This period's power actions for ``snapshot``.

    ``forecasts``: pool -> :class:`.outlook.Outlook` of its demand in
    cores; ``counters``: pool -> consecutive low periods (both from
    :func:`observe`); ``unplaced``: pools where a boot found no valid
    host since the last period.  The instances of the hosts
    :func:`needs_instances` names must be in the snapshot.
    """
    actions, verdicts = [], []
    notes = [f'host {name}: {host.power} but outside power management '
             f'(opted out of DRS, no capacity or unaggregated): left as is'
             for name, host in sorted(snapshot.hosts.items())
             if host.power != model.ON
             and not _managed(host, snapshot.config)]
    # Room is counted for the moves a standby's placement check plans.
    candidates = capacity.counted(candidates)
    for pool in _pools(snapshot):
        verdict, taken = _PoolPlan(snapshot, candidates, pool,
                                    forecasts.get(pool.key),
                                    counters.get(pool.key, 0), config,
                                    pool.key in unplaced).run()
        verdicts.append(verdict)
        actions.extend(taken)
    return PowerPlan(tuple(actions), tuple(verdicts), tuple(notes))


def _level(hosts) -> str:
    """The most permissive level among the hosts' (one it does not know
    counts as ``off``)."""
    levels = model.LEVELS
    return levels[max((levels.index(h.power_level) for h in hosts
                       if h.power_level in levels), default=0)]


def _fmt(value: float | None) -> str:
    return 'unknown' if value is None else f'{value:.1f}%'


class _PoolPlan:
    """One pool's decision (a class only to share its figures)."""

    def __init__(self, snapshot, candidates, pool, state, counter, config,
                 unplaced):
        self.snapshot, self.candidates = snapshot, candidates
        self.pool, self.config = pool, config
        self.counter, self.unplaced = counter, unplaced
        self.level = _level(pool.hosts)
        by_power = {}
        for host in pool.hosts:
            by_power.setdefault(host.power, []).append(host)
        self.entering = by_power.get(model.ENTERING, [])
        self.standby = by_power.get(model.STANDBY, [])
        self.waking = by_power.get(model.WAKING, [])
        self.taking = [h for h in pool.hosts if _takes_load(h)]
        self.utilization = _percent(pool.demand, self.taking)
        self.upper, self.seconds = _upper(pool, state, config)
        # Each host's load is expected to grow as the pool's demand does.
        self.growth = self.upper / pool.demand if pool.demand else 1.0

    def verdict(self, reason, needed=None):
        needed_now = None
        if needed is not None:
            needed_now = _needed(self.pool.demand, self.pool.memory,
                                 self.taking + self.waking,
                                 self.config.band_high,
                                 self.snapshot.config.margin)
        return PoolPower(
            pool=self.pool.key, level=self.level,
            utilization=self.utilization,
            forecast=_percent(self.upper, self.taking + self.waking),
            band=(self.config.band_low, self.config.band_high),
            on=tuple(h.name for h in self.pool.hosts
                     if h.power == model.ON),
            standby=tuple(h.name for h in self.standby),
            waking=tuple(h.name for h in self.waking),
            entering=tuple(h.name for h in self.entering),
            counter=self.counter, needed=needed, needed_now=needed_now,
            reason=reason)

    def action(self, kind, host, reason, **extra):
        return PowerAction(kind, host.name, self.pool.key, reason,
                           forecast=_percent(self.upper,
                                             self.taking + self.waking),
                           **extra)

    def run(self) -> tuple:
        """``(verdict, actions)``: the pool's verdict and its actions."""
        cfg = self.config
        if self.level == 'off':
            if self.entering:
                host = self.entering[0]
                reason = ('power management is off for the pool: host '
                          f'{host.name} goes back into service')
                return (self.verdict(reason),
                        (self.action(CANCEL, host, reason),))
            rest = (f'; {len(self.standby)} host(s) stay in standby'
                    if self.standby else '')
            return self.verdict(f'power management off{rest}'), ()
        ready = self.taking + self.waking
        needed = None
        if self.upper is not None:
            needed = _needed(self.upper, self.pool.memory, ready,
                             cfg.band_high, self.snapshot.config.margin)
        why = self._short(ready, needed)
        if why:
            return self._add(why, needed)
        for host in self.entering:
            blocker = self._blocker(host)
            if blocker:
                reason = (f'host {host.name} cannot be emptied for standby: '
                          f'{blocker}; it goes back into service')
                return (self.verdict(reason, needed),
                        (self.action(CANCEL, host, reason),))
        if self.waking:
            names = ', '.join(h.name for h in self.waking)
            return self.verdict(f'waiting for host {names} to boot',
                                needed), ()
        return self._standby(needed)

    def _ceiling(self, host) -> float:
        """The CPU percent a host must stay under at the forecast: its
        threshold less the margin, the room balancing keeps."""
        return host.cpu_threshold - self.snapshot.config.margin

    def _ahead(self, host) -> float:
        """A measured host's CPU percent at the forecast: its outlook,
        grown as the pool's demand is forecast to grow."""
        return ((host.cpu_percent + working.lag(host)) * self.growth
                + self.config.forecast_deviations
                * (host.cpu_deviation or 0.0))

    def _top(self) -> str:
        """What a wake keeps the hosts under, for its reason."""
        return (f'the band top {self.config.band_high:g}% and their '
                f'thresholds less the margin '
                f'{self.snapshot.config.margin:g}')

    def _short(self, ready, needed) -> str:
        """Why the pool needs one more host now, or ''."""
        cfg = self.config
        if self.unplaced:
            return 'a boot found no valid host in the pool'
        if len(ready) < cfg.min_hosts:
            return (f'{len(ready)} host(s) taking load or waking, under '
                    f'the minimum {cfg.min_hosts}')
        if needed is None:
            return ''
        if needed > len(ready):
            return (f'demand forecast {_fmt(_percent(self.upper, ready))} in '
                    f'{self.seconds:.0f} s, over {self._top()} of the '
                    f'{len(ready)} host(s) taking load or waking')
        if needed + cfg.reserve_hosts > len(ready):
            return (f'the forecast in {self.seconds:.0f} s needs {needed} '
                    f'host(s) under {self._top()} and the reserve '
                    f'{cfg.reserve_hosts} more; {len(ready)} take load or '
                    f'wake')
        return ''

    def _add(self, why, needed):
        """Give back an entering host, else wake a standby one."""
        if self.entering:
            host = self.entering[0]
            reason = f'{why}: host {host.name} goes back into service'
            return (self.verdict(reason, needed),
                    (self.action(CANCEL, host, reason),))
        if not self.standby:
            return self.verdict(f'{why}; no host in standby to wake',
                                needed), ()
        host = min(self.standby, key=lambda h: (-h.vcpus, h.name))
        reason = f'{why}: wake host {host.name} ({host.vcpus} vCPUs)'
        return (self.verdict(reason, needed),
                (self.action(WAKE, host, reason),))

    def _blocker(self, host) -> str:
        for instance in self._instances(host):
            if instance.blocked is not None and not instance.transient:
                return f'instance {instance.uuid} {instance.blocked}'
        return ''

    def _instances(self, host):
        return sorted((i for i in self.snapshot.instances
                       if i.host == host.name),
                      key=standby_placement.largest_first)

    def _standby(self, needed):
        """Shed toward the hosts the pool keeps: each host to spare, the
        cheapest to empty first, as long as it passes the per-host check
        with the instances of the hosts entering standby, and of those
        chosen before it, counted as placed."""
        cfg = self.config
        draining = ''
        if self.entering:
            draining = (f'host {", ".join(h.name for h in self.entering)} '
                        f'entering standby: draining; ')
        if self.utilization is None:
            return self.verdict(f'{draining}no fresh CPU metrics: no '
                                f'standby', needed), ()
        keep = _keep(self.upper, self.pool.memory, self.taking, cfg,
                     self.snapshot.config.margin)
        spare = len(self.taking) - keep
        if spare <= 0 or self.counter < cfg.low_periods:
            head = (f'{len(self.taking)} host(s) take load, the pool keeps '
                    f'{keep} ({self._why_keep()})')
            if spare > 0:
                head += (f': {spare} to spare for {self.counter} of '
                         f'{cfg.low_periods} periods')
            return self.verdict(f'{draining}{head}: no standby',
                                needed), ()
        placing = self._placing()
        for host in self.entering:
            problem = self._place(host, placing)
            if problem:
                return self.verdict(
                    f'{draining}no other standby until the hosts entering '
                    f'standby are placed: {host.name}: {problem}',
                    needed), ()
        chosen, refused, actions = [], [], []
        options = sorted(
            (sum(i.memory_mb for i in self._instances(h)) / 1024.0, h.name, h)
            for h in self.taking if _standby_candidate(h))
        for gb, _name, host in options:
            trial = placing.copy()
            problem = (self._keeps(host, chosen) or self._blocker(host)
                       or self._place(host, trial))
            if problem:
                refused.append(f'{host.name}: {problem}')
                continue
            placing = trial
            chosen.append(host)
            reason = (f'{len(self.taking)} host(s) take load, the pool keeps '
                      f'{keep} ({self._why_keep()}) for {self.counter} '
                      f'periods; host {host.name} is the cheapest to empty '
                      f'({gb:.1f} GB to move)')
            if len(chosen) > 1:
                reason += (f' with {", ".join(c.name for c in chosen[:-1])}'
                           f' emptied too')
            actions.append(self.action(STANDBY, host, reason,
                                       gb=round(gb, 3)))
        detail = '; '.join(refused)
        if actions:
            names = ', '.join(c.name for c in chosen)
            kept = f'; kept: {detail}' if detail else ''
            return (self.verdict(f'{draining}{len(self.taking)} host(s) take '
                                 f'load, the pool keeps {keep}: host '
                                 f'{names} enter(s) standby{kept}', needed),
                    tuple(actions))
        detail = detail or 'no host may enter standby'
        return self.verdict(f'{draining}{len(self.taking)} host(s) take '
                            f'load, the pool keeps {keep}, no standby: '
                            f'{detail}', needed), ()

    def _why_keep(self) -> str:
        """What the hosts kept were counted from, for the reasons."""
        cfg = self.config
        return (f'forecast {_fmt(_percent(self.upper, self.taking))} in '
                f'{self.seconds:.0f} s under the band\'s middle '
                f'{cfg.target:g}%, reserve {cfg.reserve_hosts}, minimum '
                f'{cfg.min_hosts}')

    def _keeps(self, host, chosen) -> str:
        """Why the pool cannot do without ``host`` once the ``chosen``
        hosts are gone too, or ''."""
        rest = [h for h in self.taking if h is not host and h not in chosen]
        least = _keep(self.upper, self.pool.memory, rest, self.config,
                      self.snapshot.config.margin)
        if len(rest) < least:
            return (f'{len(rest)} host(s) would be left, the pool needs '
                    f'{least}')
        return ''

    def _placing(self) -> standby_placement.Placing:
        """Where a standby's instances may go: each schedulable measured
        host taking load at its CPU percent at the forecast and its RAM
        percent, with this period's planned moves added to their
        destinations."""
        cpu = {h.name: self._ahead(h) for h in self.taking
               if h.cpu_percent is not None and h.schedulable}
        ram = {h.name: h.ram_percent for h in self.taking}
        placing = standby_placement.Placing(cpu, ram,
                                            list(self.snapshot.planned))
        if self.snapshot.planned:
            instances = {i.uuid: i for i in self.snapshot.instances}
            for move in self.snapshot.planned:
                instance = instances.get(move.instance)
                if instance is not None and move.destination in cpu:
                    placing.add(instance, self.snapshot.hosts[
                        move.destination], self.growth)
        return placing

    def _place(self, host, placing: standby_placement.Placing) -> str:
        """Place every instance of ``host`` not already moving this period
        into ``placing``, largest first, each on the least loaded allowed
        host; '' when every other host stays under its threshold less the
        margin at the forecast (and under its RAM threshold), else why
        not.  ``host`` is no destination from then on, and the instances
        placed on it before are placed again."""
        placing.cpu.pop(host.name, None)
        placing.gone.add(host.name)
        for other in self.taking:
            if (other.name not in placing.gone
                    and other.cpu_percent is not None
                    and self._ahead(other) > self._ceiling(other)):
                return (f'host {other.name} forecast at '
                        f'{self._ahead(other):.1f}%, over its threshold '
                        f'less the margin {self._ceiling(other):g}%')
        return standby_placement.place(
            placing, host, self._instances(host), self.snapshot,
            self.candidates, self._ceiling, self.growth)

