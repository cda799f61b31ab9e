"""Relief checked after the move: did a move buy what the planner expected?

Some periods after a balancing or leveling move has completed, the loads
its two hosts really carry are set against what the plan expected
(``Move.expected``).  Pure: the live rebalancer, ``nova-drs history`` and
the simulator share it.
"""

from collections.abc import Iterable
from collections.abc import Mapping

#: A moved load *stayed* when the instance still carries at least this
#: share of the load it was moved with (``Move.expected['instance_cores']``)
#: at the check.  A burst that ends within minutes leaves far less: the
#: move bought nothing that lasts.
STAYED_SHARE = 0.5
#: What leveling learns from: the checks of the last two hours ...
LEARN_SECONDS = 7200.0
#: ... once a pool has at least this many (fewer say nothing).
LEARN_MIN_CHECKS = 20


def check(expected: Mapping, source_cpu: float | None,
          destination_cpu: float | None, source_threshold: float,
          destination_threshold: float,
          instance_cores: float | None = None) -> dict | None:
    """What one move really did, from its hosts' CPU percents now.

    ``expected`` is the move's ``expected`` mapping (``source_cpu_before``,
    ``source_cpu`` and ``destination_cpu``, percents; ``instance_cores``,
    the load it was moved with).  The relief bought is the drop of the
    source's CPU since the plan; the expectation *held* when the source is
    under its threshold and the destination did not go over its own.
    With the instance's load now (``instance_cores``), ``load_stayed``
    says whether it still carries :data:`STAYED_SHARE` of its planned
    load.  None when a host has no sample now or the plan recorded no load
    before the move (a drain's source).
    """
    before = expected.get('source_cpu_before')
    if source_cpu is None or destination_cpu is None or before is None:
        return None
    relieved = source_cpu <= source_threshold
    spared = destination_cpu <= destination_threshold
    planned = expected.get('instance_cores')
    stayed = {}
    if instance_cores is not None and planned is not None:
        stayed = {'instance_cores': round(instance_cores, 3),
                  'load_stayed': instance_cores >= STAYED_SHARE * planned}
    return {
        'source_cpu': round(source_cpu, 2),
        'destination_cpu': round(destination_cpu, 2),
        'relief_points': round(before - source_cpu, 2),
        'expected_points': round(before - expected['source_cpu'], 2),
        'source_relieved': relieved,
        'destination_spared': spared,
        'held': relieved and spared,
        **stayed,
    }


def held_share(outcomes) -> tuple[int, int]:
    """``(held, checked)`` over some checks' results (Nones skipped)."""
    checked = [o for o in outcomes if o is not None]
    return sum(1 for o in checked if o['held']), len(checked)


def stayed_counts(checks: Iterable, now: float) -> dict:
    """``{source host: (stayed, checked)}`` over the checks made within
    :data:`LEARN_SECONDS` of ``now``; ``checks`` are ``(time, source,
    load_stayed)`` (seconds; a check without the instance's load, None,
    is left out)."""
    counts = {}
    for when, source, stayed in checks:
        if stayed is None or now - when > LEARN_SECONDS:
            continue
        kept, seen = counts.get(source, (0, 0))
        counts[source] = (kept + bool(stayed), seen + 1)
    return counts
