"""How long a drain takes at the configured pace: ``maintenance plan``'s
estimate.

Each host has one link (``[drs] migration_bandwidth``), shared by the
migrations in and out of it.  A host sends (a destination takes) at most
its concurrency of migrations at once; they go largest first, in waves:
the migrations of a wave share the link equally, each at the bandwidth
over the wave's size (:func:`.benefit.migration_seconds`, the planner's
own cost model), and a wave lasts as long as its longest migration.
Sharing the link copies no faster: ``k`` migrations at a ``k``-th of the
bandwidth each take ``k`` times as long, longer still when their pages
are dirtied meanwhile (``[drs] migration_dirty_rate``), so concurrency
does not shorten a drain whose link is the limit.  A drain takes as long
as its busiest link.

Pure: the CLI's dry run and its unit tests share it.
"""

import collections
from collections.abc import Iterable
from collections.abc import Mapping

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import model


def link_seconds(migrations: Iterable[tuple[float, float]],
                 concurrency: int, bandwidth: float,
                 dirty_rate: float) -> float:
    """Seconds one link carries ``migrations`` (``(memory MiB, busy
    cores)`` each), ``concurrency`` at a time, in waves, largest first."""
    ordered = sorted(migrations, reverse=True)
    seconds = 0.0
    for start in range(0, len(ordered), concurrency):
        wave = ordered[start:start + concurrency]
        seconds += max(benefit.migration_seconds(
            memory, cores, bandwidth / len(wave), dirty_rate)
            for memory, cores in wave)
    return seconds


def drain_seconds(moves: Iterable[model.Move],
                  instances: Mapping[str, model.InstanceSnapshot],
                  config: model.PlannerConfig) -> float:
    """Seconds until ``moves`` are done: their busiest link's time, each
    source at ``drain_max_concurrent_migrations_per_host`` and each
    destination at what the planner lets it take at once."""
    out, into = collections.defaultdict(list), collections.defaultdict(list)
    for move in moves:
        instance = instances[move.instance]
        migration = (instance.memory_mb, instance.cpu_cores)
        out[move.source].append(migration)
        into[move.destination].append(migration)
    links = [(found, config.drain_max_concurrent_migrations_per_host)
             for found in out.values()]
    links += [(found, config.drain_destination_concurrency)
              for found in into.values()]
    return max((link_seconds(found, concurrency, config.migration_bandwidth,
                             config.migration_dirty_rate)
                for found, concurrency in links), default=0.0)
