"""Relief checked after the move: did a move buy what the planner expected?

Some periods after a balancing or leveling move has completed, the loads
its two hosts really carry are set against what the plan expected
(``Move.expected``).  Pure: the live rebalancer, ``nova-drs history`` and
the simulator share it.
"""

from collections.abc import Mapping


def check(expected: Mapping, source_cpu: float | None,
          destination_cpu: float | None, source_threshold: float,
          destination_threshold: float) -> dict | None:
    """What one move really did, from its hosts' CPU percents now.

    ``expected`` is the move's ``expected`` mapping (``source_cpu_before``,
    ``source_cpu`` and ``destination_cpu``, percents).  The relief bought
    is the drop of the source's CPU since the plan; the expectation *held*
    when the source is under its threshold and the destination did not go
    over its own.  None when a host has no sample now or the plan recorded
    no load before the move (a drain's source).
    """
    before = expected.get('source_cpu_before')
    if source_cpu is None or destination_cpu is None or before is None:
        return None
    relieved = source_cpu <= source_threshold
    spared = destination_cpu <= destination_threshold
    return {
        'source_cpu': round(source_cpu, 2),
        'destination_cpu': round(destination_cpu, 2),
        'relief_points': round(before - source_cpu, 2),
        'expected_points': round(before - expected['source_cpu'], 2),
        'source_relieved': relieved,
        'destination_spared': spared,
        'held': relieved and spared,
    }


def held_share(outcomes) -> tuple[int, int]:
    """``(held, checked)`` over some checks' results (Nones skipped)."""
    checked = [o for o in outcomes if o is not None]
    return sum(1 for o in checked if o['held']), len(checked)
