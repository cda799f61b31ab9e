"""What a move is expected to buy and what it costs: the cost-benefit rule.

Pure arithmetic, shared by the planner (live task, CLI, simulator) and the
simulator's migration model.  Units: CPU in cores, time in seconds, relief
and cost in core-minutes of CPU demand over a host's threshold, those of
demand over 100 % counted :data:`UNSERVED_WEIGHT` times.
"""

import dataclasses
import math

from nova_drs_scheduler.planning import model

#: Bytes of RAM per MiB, in megabits: a MiB is 8 * 1.048576 Mbit.
MBIT_PER_MIB = 8 * 1.048576
#: Pre-copy rounds before the hypervisor stops the instance and copies the
#: rest (QEMU converges or forces it within a few dozen).
MAX_ROUNDS = 30


def migration_seconds(memory_mb: float, cpu_cores: float,
                      bandwidth_mbps: float,
                      dirty_mib_per_core: float) -> float:
    """How long a live migration of this instance runs.

    Pre-copy sends the RAM once, then, round after round, the pages the
    instance dirtied meanwhile: ``dirty_mib_per_core`` MiB per second for
    each busy core.  Each round lasts ``ratio`` times the one before
    (dirty rate over bandwidth), so the rounds sum to a geometric series;
    a ratio of 1 or more never converges and the copy is cut after
    :data:`MAX_ROUNDS` rounds, as the hypervisor's auto-converge does.
    """
    first = memory_mb * MBIT_PER_MIB / bandwidth_mbps
    ratio = cpu_cores * dirty_mib_per_core * MBIT_PER_MIB / bandwidth_mbps
    if ratio <= 0:
        return first
    if ratio < 1:
        return first * (1 - ratio ** (MAX_ROUNDS + 1)) / (1 - ratio)
    return first * (MAX_ROUNDS + 1)


#: Points in time the horizon is judged at (midpoints of equal slices).
_SLICES = 6


@dataclasses.dataclass(frozen=True)
class Load:
    """A load as the planner expects it over the next minutes, in a host's
    percent points: now, its usual level, and how far it strays."""

    current: float
    expected: float
    deviation: float = 0.0

    def at(self, seconds: float, halflife: float) -> float:
        """The load expected ``seconds`` from now: away from its usual level
        now, it comes back to it by half every ``halflife``."""
        if halflife <= 0:
            return self.current
        keep = 0.5 ** (seconds / halflife)
        return self.expected + (self.current - self.expected) * keep


@dataclasses.dataclass(frozen=True)
class Estimate:
    """What a move is expected to buy and to cost, core-minutes."""

    #: Overload taken off the source over the horizon.
    relief: float
    #: Overload the destination is expected to take on over the horizon.
    risk: float
    #: The instance's load held on both hosts while the migration runs.
    migration: float

    @property
    def cost(self) -> float:
        return self.risk + self.migration

    @property
    def pays(self) -> bool:
        return self.relief > self.cost


def excess(mean: float, deviation: float, threshold: float) -> float:
    """Expected points over ``threshold`` of a load normally distributed
    around ``mean`` with ``deviation``: a load that swings is over its
    threshold part of the time even when its mean is under it."""
    if deviation <= 0:
        return max(mean - threshold, 0.0)
    z = (mean - threshold) / deviation
    cdf = 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
    pdf = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return (mean - threshold) * cdf + deviation * pdf


#: How much more a point of demand over a host's CPUs (over 100 %) weighs
#: than a point between its threshold and 100 %.  The threshold is the
#: operator's comfort line: a host at 90 % serves every instance; over
#: 100 % an instance waits for a CPU, which is what a tenant feels.
UNSERVED_WEIGHT = 10.0


def harm(mean: float, deviation: float, threshold: float) -> float:
    """Expected points over ``threshold`` (:func:`excess`), and the
    points by which ``mean`` itself is over 100 % weighing
    :data:`UNSERVED_WEIGHT` times more.  Only the level: weighing the
    swing's tail past 100 % too refused the moves that kept generated
    days' hosts under it (doc/benchmarks-balancing.md)."""
    return (excess(mean, deviation, threshold)
            + UNSERVED_WEIGHT * max(mean - 100.0, 0.0))


def estimate(source: Load, source_vcpus: int, source_threshold: float,
             destination: Load, destination_vcpus: int,
             destination_threshold: float, instance: Load,
             instance_memory_mb: int,
             config: model.PlannerConfig,
             ram_relief: float = 0.0) -> Estimate:
    """The relief, risk and migration cost of moving ``instance`` (its load
    in cores, not points) from ``source`` to ``destination``.

    Over ``config.benefit_horizon`` seconds each load goes back to its
    usual level (``Load.at``); the overload of each host is the expected
    points over its threshold at that level and its spread, those over
    100 % weighing more (:func:`harm`),
    the instance's spread added to the destination's and taken off the
    source's (independent swings add as variances).  ``ram_relief``:
    points of RAM over its threshold the move takes off the source, which
    stay until moved and weigh as CPU points do in ``pressure``.
    """
    horizon, halflife = config.benefit_horizon, config.load_halflife
    src_share = 100.0 / source_vcpus
    dst_share = 100.0 / destination_vcpus
    src_dev_after = math.sqrt(max(
        source.deviation ** 2 - (instance.deviation * src_share) ** 2, 0.0))
    dst_dev_after = math.hypot(destination.deviation,
                               instance.deviation * dst_share)
    relief = risk = 0.0
    for k in range(_SLICES):
        t = (k + 0.5) * horizon / _SLICES
        cores = instance.at(t, halflife)
        src = source.at(t, halflife)
        dst = destination.at(t, halflife)
        relief += (harm(src, source.deviation, source_threshold)
                   - harm(src - cores * src_share, src_dev_after,
                          source_threshold)) / src_share
        risk += (harm(dst + cores * dst_share, dst_dev_after,
                      destination_threshold)
                 - harm(dst, destination.deviation,
                        destination_threshold)) / dst_share
    relief += ram_relief * _SLICES / src_share
    minutes = horizon / 60.0 / _SLICES
    seconds = migration_seconds(instance_memory_mb, instance.current,
                                config.migration_bandwidth,
                                config.migration_dirty_rate)
    return Estimate(relief=relief * minutes, risk=risk * minutes,
                    migration=seconds / 60.0 * instance.current)
