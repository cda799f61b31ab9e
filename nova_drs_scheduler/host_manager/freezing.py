"""Keep long-lived objects out of Python's full garbage collections.

A full (generation 2) collection walks every object the collector tracks:
in a scheduler with 1000 compute nodes, Nova's code plus the cached rows
(each node's HostState template with its NUMA topology, each instance's
stub) are over a million objects, and one collection holds the GIL for
hundreds of milliseconds, in whichever request or rebalance period
allocated when it was due. After each background refresh, the refresher
moves every object then alive into the collector's permanent generation
(``gc.freeze``), so later collections walk only what was created since.

Frozen objects are still freed by reference counting when the cache drops
them (a replaced row, a reload), but frozen *cyclic* garbage is never
collected. So, before it freezes, the refresher collects the young
generations (cheap), and every ``collect_interval`` seconds it unfreezes
everything and runs one full collection, which bounds what cycles can
keep: this is the only full walk of the whole process left, and it runs
in the refresher's thread, between requests' allocations rather than in
them.
"""

import gc
import time
from collections.abc import Callable


class Freezer:
    """Freezes the process's objects after background refreshes."""

    def __init__(self, collect_interval: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.collect_interval = collect_interval
        self.clock = clock
        self._collected_at: float | None = None

    def freeze(self) -> None:
        """Freeze what is alive now; first, once every
        ``collect_interval`` seconds (and the first time), collect
        everything, frozen objects included."""
        now = self.clock()
        if (self._collected_at is None or
                now - self._collected_at >= self.collect_interval):
            gc.unfreeze()
            gc.collect()
            self._collected_at = now
        else:
            gc.collect(1)
        gc.freeze()

    def release(self) -> None:
        """Hand every frozen object back to the collector."""
        gc.unfreeze()
        self._collected_at = None
