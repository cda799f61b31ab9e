"""Live migrations over the hosts' links, behind Nova's queue per source.

Nova's compute runs ``[DEFAULT] max_concurrent_live_migrations`` outgoing
live migrations at once (1 by default) and queues the others (migration
status ``queued``): a queued migration already holds its allocation on the
destination and counts as in flight, but copies nothing yet.

Every host has one link of ``bandwidth_mbps``, shared by every copy into
or out of it.  A copy's share is the bandwidth over the number of copies
on the busier of its two links, recomputed whenever a copy starts or ends:
a simple fair share (a copy held back by its other link leaves the rest
of its share unused, where max-min fairness would hand it on).

A copy sends the instance's RAM, then the pages the instance re-dirtied
meanwhile: :func:`~nova_drs_scheduler.planning.benefit.migration_seconds`,
the planner's own cost model, at the instance's load when its copy
starts.  Its progress runs at the pace its whole copy would have at its
current share.  Alone on both links it takes the planner's estimate
exactly; sharing a link with one other copy, an idle instance takes twice
as long, a busy one longer (its dirty pages are resent at half the rate).
"""

import collections
import dataclasses
import math
from collections.abc import Callable

from nova_drs_scheduler.planning import benefit

#: Seconds within which two ends count as one moment (float rounding).
EPSILON = 1e-9


@dataclasses.dataclass(eq=False)
class Migration:
    """One live migration, from Nova's acceptance to its end."""

    vm: str
    source: str
    destination: str
    memory_mb: int
    #: When Nova accepted it (queued, or copying at once).
    start: float
    #: When its copy began (None while queued) and ended (None before).
    copying: float | None = None
    end: float | None = None

    @property
    def copy_seconds(self) -> float | None:
        """How long its copy ran, once it has ended."""
        return None if self.end is None else self.end - self.copying


@dataclasses.dataclass(eq=False)
class _Copy:
    """A running copy's progress at its current share."""

    cores: float
    #: Share of the copy done at ``since``.
    done: float
    since: float
    share: float = 0.0
    #: The whole copy's duration at ``share``, and when it ends at it.
    seconds: float = math.inf
    ends: float = math.inf


class Links:
    """The copies running on each host's link, and the queues of the
    sources' computes.

    ``per_source``: Nova's ``max_concurrent_live_migrations`` (0: no
    limit, its deprecated "unlimited").  Callers move time forward only:
    :meth:`add` at a time no earlier than the last :meth:`advance`.
    """

    def __init__(self, bandwidth_mbps: float, dirty_mib_per_core: float,
                 per_source: int):
        self.bandwidth_mbps = bandwidth_mbps
        self.dirty_mib_per_core = dirty_mib_per_core
        self.per_source = per_source
        self._copies: dict[Migration, _Copy] = {}
        self._queues = collections.defaultdict(collections.deque)
        self._sending = collections.Counter()
        #: Copies on each host's link, in or out.
        self._on_link = collections.Counter()

    def add(self, migration: Migration, cores: float) -> None:
        """Nova accepts ``migration`` at its start: its copy starts then,
        with the instance at ``cores``, or waits in its source's queue."""
        if self._full(migration.source):
            self._queues[migration.source].append(migration)
            return
        self._begin(migration, cores, migration.start)
        self._reshare({migration.source, migration.destination},
                      migration.start)

    def next_end(self) -> float:
        """When the first running copy ends at the current shares."""
        return min((c.ends for c in self._copies.values()),
                   default=math.inf)

    def advance(self, now: float,
                cores: Callable[[Migration], float]) -> list:
        """The copies that end by ``now``, in order, each at its own time
        (``Migration.end``); as each ends, its source's queue starts the
        next copies, the instance's load read by ``cores``."""
        ended = []
        while (at := self.next_end()) <= now + EPSILON:
            done = [m for m, c in self._copies.items()
                    if c.ends <= at + EPSILON]
            touched = set()
            for migration in done:
                migration.end = self._copies.pop(migration).ends
                self._leave(migration)
                touched.update((migration.source, migration.destination))
            for source in sorted({m.source for m in done}):
                queue = self._queues[source]
                while queue and not self._full(source):
                    waiting = queue.popleft()
                    self._begin(waiting, cores(waiting), at)
                    touched.add(waiting.destination)
            self._reshare(touched, at)
            ended.extend(done)
        return ended

    def _full(self, source: str) -> bool:
        return 0 < self.per_source <= self._sending[source]

    def _begin(self, migration: Migration, cores: float, at: float) -> None:
        migration.copying = at
        self._copies[migration] = _Copy(cores, 0.0, at)
        self._sending[migration.source] += 1
        self._on_link[migration.source] += 1
        self._on_link[migration.destination] += 1

    def _leave(self, migration: Migration) -> None:
        self._sending[migration.source] -= 1
        self._on_link[migration.source] -= 1
        self._on_link[migration.destination] -= 1

    def _reshare(self, hosts: set, at: float) -> None:
        """New shares at ``at`` for the copies on the links of ``hosts``."""
        for migration, copy in self._copies.items():
            if migration.source not in hosts \
                    and migration.destination not in hosts:
                continue
            share = self.bandwidth_mbps / max(
                self._on_link[migration.source],
                self._on_link[migration.destination])
            if share == copy.share:
                continue
            if 0 < copy.seconds < math.inf:
                copy.done = min(
                    copy.done + (at - copy.since) / copy.seconds, 1.0)
            copy.since, copy.share = at, share
            copy.seconds = benefit.migration_seconds(
                migration.memory_mb, copy.cores, share,
                self.dirty_mib_per_core)
            copy.ends = at + (1.0 - copy.done) * copy.seconds
