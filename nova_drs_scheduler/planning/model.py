"""The planner's input and output: plain, immutable data.

The live periodic task, the ``nova-drs plan``/``explain`` CLI and the trace
simulator all build a :class:`Snapshot` their own way and hand it to the
same pure planner (``planner.plan``), which returns a :class:`Plan`.  Keep
this module free of Nova imports so the simulator and the unit tests stay
fast.

Units:
- host ``cpu_percent``/``ram_percent``: percent of the host's physical
  CPUs / memory, already averaged over the sliding window;
- instance ``cpu_cores``: CPU actually used, in cores (1.5 = one and a half
  vCPUs busy), so that it can be projected onto a host of another size.
"""

import dataclasses
import json
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence

from nova_drs_scheduler import power_states

#: How an instance moves (``InstanceSnapshot.migration``, ``Move.migration``).
LIVE, COLD = 'live', 'cold'
#: Why a move is made (``Move.goal``).
BALANCE, LEVEL, DRAIN = 'balance', 'level', 'drain'
#: The planner's last goal, consolidation for standby: it plans power
#: actions (``Plan.power``), no move (an entering host drains).
CONSOLIDATE = 'consolidate'
#: A host's power state (``HostSnapshot.power``; see :mod:`.power`): on;
#: entering standby (service disabled by nova-drs, drained like a host in
#: maintenance); in standby (powered off); waking (power-on sent, waiting
#: for its nova-compute to report up).
ON, ENTERING, STANDBY, WAKING = (power_states.ON, power_states.ENTERING,
                                 power_states.STANDBY, power_states.WAKING)
#: Automation and power management levels, most cautious first
#: (aggregates' ``drs_automation``, ``HostSnapshot.power_level``).
LEVELS = ('off', 'manual', 'automatic')
#: How a host's demand beyond its CPUs is seen (``HostSnapshot.view``):
#: measured as contention, or only guessed from its CPU reaching 100 %.
CONTENTION, CPU = 'contention', 'cpu'
#: Contention, percent of a host's CPUs, above which its demand is
#: unserved: a busy host always shows a little scheduling wait.
STARVED_CONTENTION = 1.0


@dataclasses.dataclass(frozen=True)
class PlannerConfig:
    """Everything the planner reads from ``[drs]``, as plain values."""

    policy: str = 'balanced'            # 'seed' | 'balanced'
    mode: str = 'global'                # 'global' | 'aggregate'
    unaggregated_hosts: str = 'ignore'  # 'ignore' | 'pool'
    cpu_threshold: float = 80.0
    ram_threshold: float = 90.0
    stabilization: int = 1
    margin: float = 5.0
    min_improvement: float = 5.0
    cure_below_min_improvement: bool = True
    max_migrations_per_period: int = 2
    max_concurrent_migrations_per_host: int = 1
    max_concurrent_migrations: int = 4
    #: Migrations at once off a violated host that one move does not cure;
    #: destinations keep ``max_concurrent_migrations_per_host`` (a value
    #: not above it applies that limit to violated hosts too).
    max_concurrent_migrations_per_violated_host: int = 2
    #: The ``balanced`` policy ranks the destinations that pass its margin
    #: at their projected CPU plus this many of their standard deviations
    #: (``HostSnapshot.cpu_deviation``); 0 ranks them at the projection.
    destination_deviations: float = 2.0
    #: Leveling (planner ``_level``): while the mean ``rise_rate`` of a
    #: pool's hosts is at least ``level_rise_rate``, the hottest host within
    #: ``level_band`` points of its threshold sends load to the coolest one,
    #: while they differ by more than ``level_gap`` points (0: off).
    level_gap: float = 10.0
    level_band: float = 10.0
    level_rise_rate: float = 3.0
    #: Leveling stops in a pool where fewer than this share of its recent
    #: relief-checked moves found the moved load still there
    #: (``HostSnapshot.loads_stayed``, :func:`.working.unsteady`); 0: never.
    level_steady_share: float = 0.45
    #: Seconds a pool keeps leveling after power management last woke one
    #: of its hosts (``HostSnapshot.woken_ago``); 0: only while one is out.
    level_after_wake: float = 21600.0
    #: Instances of one violated host scored against every destination; the
    #: policy ranks them first, so this bounds planning time, not quality.
    max_instances_evaluated: int = 8
    #: Migrations at once off a draining host, and into each of its
    #: destinations (if more than ``max_concurrent_migrations_per_host``);
    #: Nova's ``max_concurrent_live_migrations`` by default.  Drains count
    #: in ``max_concurrent_migrations`` but not in
    #: ``max_migrations_per_period``, and leave a slot of the total to each
    #: violated host, up to that budget (:meth:`working.Working.limit`).
    drain_max_concurrent_migrations_per_host: int = 1
    #: The cost-benefit rule (``benefit``): a move must buy more relief
    #: over this many seconds than it costs; 0 turns the rule off.
    benefit_horizon: float = 3600.0
    #: Half-life of the expected loads (``[drs] expected_load_halflife``):
    #: how fast a load away from its usual level is expected to return.
    load_halflife: float = 600.0
    #: Live-migration link, Mbit/s, and MiB/s of RAM a busy core dirties:
    #: the migration's duration (``benefit.migration_seconds``).
    migration_bandwidth: float = 10000.0
    migration_dirty_rate: float = 64.0

    @property
    def drain_destination_concurrency(self) -> int:
        """Migrations at once into one destination of a drain: as many
        as a draining host sends, when more than the per-host limit."""
        return max(self.max_concurrent_migrations_per_host,
                   self.drain_max_concurrent_migrations_per_host)


@dataclasses.dataclass(frozen=True)
class HostSnapshot:
    name: str
    vcpus: int
    memory_mb: int
    #: Window average of measured CPU, percent; None when stale or missing.
    cpu_percent: float | None
    #: Memory in use, percent; None when unknown.
    ram_percent: float | None
    #: Consecutive periods over the threshold (the seed's counter).
    counter: int = 0
    #: The raw samples of the window, oldest first, for the record.
    window: tuple = ()
    #: Pool key (aggregate) in aggregate mode; None for unaggregated hosts.
    pool: str | None = None
    #: Effective thresholds after aggregate overrides.
    cpu_threshold: float = 80.0
    ram_threshold: float = 90.0
    #: False when disabled, down or in maintenance: never a destination.
    schedulable: bool = True
    #: Aggregate opted out of DRS: neither judged nor a destination.
    excluded: bool = False
    #: Automation ``off`` for the host: neither judged nor a balancing
    #: destination, but a drain may send an instance there (the operator
    #: asked for the drain).
    automation_off: bool = False
    #: Expected CPU over the next periods, percent: the exponentially
    #: weighted mean of its samples; None when unknown.
    cpu_expected: float | None = None
    #: How far its CPU samples stray from ``cpu_expected``: their
    #: exponentially weighted standard deviation, points; None when unknown.
    cpu_deviation: float | None = None
    #: One-period CPU rises of at least ``[drs] level_rise_points`` per
    #: hour, exponentially weighted; None when unknown.
    rise_rate: float | None = None
    #: In maintenance: every instance leaves it (``planner`` drains it
    #: before balancing), and it is never a destination.
    draining: bool = False
    #: Waiting in the maintenance queue (``maintenance enter
    #: --one-at-a-time``): it drains later, so an instance sent there
    #: moves twice; a drain sends there only when no other host can take
    #: the instance.
    queued: bool = False
    #: Power state (:data:`ON`, :data:`ENTERING`, :data:`STANDBY`,
    #: :data:`WAKING`).  An entering host is also ``draining``; a host in
    #: standby or waking is neither judged nor a destination.
    power: str = ON
    #: Effective power management level of the host's pool (``[drs]
    #: power_management`` or its aggregates' ``drs_power_management``):
    #: ``off``, ``manual`` or ``automatic``.
    power_level: str = 'off'
    #: Seconds since power management last took it out of standby; None
    #: when not known to have been in standby.
    woken_ago: float | None = None
    #: CPU demand that waited for a CPU, percent of the host's CPUs, window
    #: average (PSI or its instances' vCPU wait; in the simulator the
    #: demand beyond its capacity): the part of its demand that
    #: ``cpu_percent``, capped at 100, cannot show.  None when not measured.
    cpu_contention: float | None = None
    #: ``(stayed, checked)``: of the moves off this host whose relief was
    #: checked lately (:data:`.relief.LEARN_SECONDS`), how many found the
    #: moved instance still carrying at least half the load it was moved
    #: with (:func:`.relief.check`'s ``load_stayed``); None when unknown.
    loads_stayed: tuple | None = None

    @property
    def view(self) -> str:
        """:data:`CONTENTION` when demand beyond the host's CPUs is
        measured, else :data:`CPU` (then only a CPU at 100 % hints at it)."""
        return CPU if self.cpu_contention is None else CONTENTION

    @property
    def starved(self) -> bool:
        """Whether some of its demand may go unserved: contention above
        :data:`STARVED_CONTENTION`, or, seen by its CPU alone, a CPU at
        100 %."""
        if self.cpu_contention is not None:
            return self.cpu_contention > STARVED_CONTENTION
        return self.cpu_percent is not None and self.cpu_percent >= 100.0


@dataclasses.dataclass(frozen=True)
class InstanceSnapshot:
    uuid: str
    host: str
    vcpus: int
    memory_mb: int
    #: Measured CPU load in cores.
    cpu_cores: float
    name: str = ''
    #: Why the instance may not move now (opt-out, cooldown, quarantine,
    #: not ACTIVE, migrating); None when it may.
    blocked: str | None = None
    #: Hosts the instance left within ``[drs] no_return_time``: never its
    #: destination then (the no-ping-pong rail).
    left: tuple = ()
    #: How it moves: ``live`` (running or paused) or ``cold`` (stopped,
    #: drained only).
    migration: str = LIVE
    #: ``blocked`` only for now (migrating, another task running): a
    #: drain waits for it instead of reporting it as a blocker.
    transient: bool = False
    #: Hosts where Nova's scheduler refused a move of the instance at
    #: start lately (no valid host): never its destination then, while
    #: any other host may be.
    refused: tuple = ()
    #: Cores of its demand that waited for a CPU (its vCPUs' wait time);
    #: None when not measured.
    cpu_waiting: float | None = None
    #: ``blocked`` by its cooldown alone (``[drs] instance_cooldown``): a
    #: starved host none of whose other instances may move still sends it.
    cooling: bool = False

    def loaded(self, cpu_cores: float) -> 'InstanceSnapshot':
        """This instance with a new load.

        Builders call this for every instance every period (20000 at 1000
        hosts); copying the fields costs a fifth of
        ``dataclasses.replace``, which re-runs ``__init__``.
        """
        copy = object.__new__(InstanceSnapshot)
        fields = copy.__dict__
        fields.update(self.__dict__)
        fields['cpu_cores'] = cpu_cores
        return copy


@dataclasses.dataclass(frozen=True)
class Snapshot:
    hosts: Mapping[str, HostSnapshot]
    instances: Sequence[InstanceSnapshot]
    config: PlannerConfig
    #: Migrations in flight, per host (as source or destination).
    inflight_by_host: Mapping[str, int] = dataclasses.field(
        default_factory=dict)
    inflight_total: int = 0
    #: Moves planned earlier in this period, in order.  The planner sets it
    #: on the snapshot it hands to ``candidates()``, so the destination
    #: checks (server groups) see those moves as done.
    planned: Sequence['Move'] = ()
    #: Instance uuid -> (expected load, deviation), cores, of the instances
    #: measured lately (``metrics.LoadTrends``; the deviation None after
    #: one sample): what the cost-benefit rule judges an instance's swing
    #: by.  An instance left out is judged at its load, without swing.
    trends: Mapping[str, tuple] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Rejection:
    """A destination or instance ruled out, and by what."""

    subject: str      # host name or instance uuid
    rule: str         # filter class name or planner rule name
    detail: str = ''


@dataclasses.dataclass(frozen=True)
class Candidates:
    """What Nova's filters (or the simulator's model) allow for a move."""

    allowed: Sequence[str]
    rejected: Sequence[Rejection] = ()
    #: Allowed host -> its free room by resource class (``VCPU``,
    #: ``MEMORY_MB``, ``DISK_GB``...) as placement counts it (capacity
    #: with allocation ratios and reserved amounts, less usage) when the
    #: callback asked; a host left out is not counted (:mod:`.capacity`).
    room: Mapping[str, Mapping[str, int]] = dataclasses.field(
        default_factory=dict)
    #: What the instance takes off its destination, by resource class.
    request: Mapping[str, int] = dataclasses.field(default_factory=dict)


#: ``candidates(instance, snapshot) -> Candidates``: the live callback runs
#: Nova's HostManager filters on a RequestSpec built from the instance, as
#: if ``snapshot.planned`` were done; the simulator runs its capacity model.
CandidatesFn = Callable[[InstanceSnapshot, Snapshot], Candidates]


@dataclasses.dataclass(frozen=True)
class Move:
    instance: str
    source: str
    destination: str
    reason: str
    #: Projected percents after the move: {'source_cpu':..,
    #: 'destination_cpu':.., 'source_ram':.., 'destination_ram':..}.
    expected: Mapping[str, float]
    #: Other instances considered and their scores, best first.
    alternatives: Sequence[Mapping] = ()
    #: Destinations ruled out for the chosen instance.
    rejected: Sequence[Rejection] = ()
    memory_mb: int = 0
    #: :data:`BALANCE` (a violated host), :data:`LEVEL` or :data:`DRAIN`.
    goal: str = BALANCE
    #: :data:`LIVE` or :data:`COLD`.
    migration: str = LIVE
    #: What the move takes off its destination, by resource class
    #: (``Candidates.request``): later moves of the period see it gone.
    resources: Mapping[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Drain:
    """Where one host in maintenance stands after this period's plan."""

    host: str
    #: Instances still on the host, moves planned this period included.
    instances: int
    #: Instances moved this period.
    planned: Sequence[str] = ()
    #: Instances that will go once a move in flight or a limit lets them.
    waiting: Sequence[Rejection] = ()
    #: Instances that cannot go, each with its reason: while any is left
    #: and nothing else moves, the drain is blocked.
    blockers: Sequence[Rejection] = ()


@dataclasses.dataclass(frozen=True)
class HostVerdict:
    host: str
    violated: bool
    reason: str
    cpu_percent: float | None = None
    ram_percent: float | None = None
    counter: int = 0
    window: tuple = ()
    pool: str | None = None
    #: The host's effective thresholds the verdict was made against.
    cpu_threshold: float | None = None
    ram_threshold: float | None = None


@dataclasses.dataclass(frozen=True)
class Plan:
    moves: Sequence[Move]
    hosts: Sequence[HostVerdict]
    #: Why a violated host got no move, and other period-level notes.
    notes: Sequence[str] = ()
    #: Name of the policy that chose the moves.
    policy: str = ''
    #: One per host in maintenance, by name.
    drains: Sequence[Drain] = ()
    #: Power management's plan (:class:`.power.PowerPlan`, not named
    #: here: that module builds on this one) when consolidation was
    #: served with its inputs; None otherwise.
    power: object = None

    def to_dict(self) -> dict:
        """Plain dicts, lists and scalars, ready for JSON; ``power``
        only when planned, so a record without power management reads as
        it always did."""
        found = _plain(self)
        if self.power is None:
            del found['power']
        return found

    def to_json(self) -> str:
        """One line of JSON, the record logged once per period."""
        return json.dumps(self.to_dict(), sort_keys=True,
                          separators=(',', ':'))


def _plain(value):
    # dataclasses.asdict deep-copies every leaf: too slow for a plan with
    # thousands of rejections, and the leaves here are immutable anyway.
    if dataclasses.is_dataclass(value):
        return {field.name: _plain(getattr(value, field.name))
                for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
