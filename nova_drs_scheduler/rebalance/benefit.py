"""What a move is expected to buy and what it costs: the cost-benefit rule.

Pure arithmetic, shared by the planner (live task, CLI, simulator) and the
simulator's migration model.  Units: CPU in cores, time in seconds, relief
and cost in core-minutes of CPU demand over a host's threshold.
"""

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
    ratio = max(cpu_cores, 0.0) * dirty_mib_per_core * MBIT_PER_MIB \
        / bandwidth_mbps
    if ratio <= 0:
        return first
    if ratio < 1:
        return first * (1 - ratio ** (MAX_ROUNDS + 1)) / (1 - ratio)
    return first * (MAX_ROUNDS + 1)
