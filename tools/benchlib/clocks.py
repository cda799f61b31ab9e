"""Timing helpers: time a call, or the time spent inside patched calls.
"""

import collections
import contextlib
import gc
import statistics
import time
import unittest.mock

from nova.scheduler.client import report

#: Whether :func:`elapsed` collects garbage before what it times
#: (``--no-collect`` turns it off).
COLLECT = True


class CallClock:
    """Accumulates the time spent inside the patched calls, per label.

    ``targets``: ``{label: [(owner, attribute name)]}``; attributes an
    owner lacks are skipped (another version of the code).  A call made
    inside another timed call counts for the outer one only.
    """

    def __init__(self, targets):
        self.targets = targets
        #: Wall clock seconds per label.
        self.spent = collections.Counter()
        #: CPU seconds of this process per label (a loaded machine
        #: stretches wall clock time, not this).
        self.cpu = collections.Counter()
        #: Outermost calls per label.
        self.calls = collections.Counter()
        self._depth = 0

    def clear(self):
        self.spent.clear()
        self.cpu.clear()
        self.calls.clear()

    @contextlib.contextmanager
    def installed(self):
        with contextlib.ExitStack() as stack:
            for label, calls in self.targets.items():
                for owner, name in calls:
                    original = getattr(owner, name, None)
                    if original is None:
                        continue
                    stack.enter_context(unittest.mock.patch.object(
                        owner, name, self._timed(label, original)))
            yield self

    def _timed(self, label, original):
        def timed(*args, **kwargs):
            self._depth += 1
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.spent[label] += time.perf_counter() - start
                    self.cpu[label] += time.process_time() - cpu
                    self.calls[label] += 1
        return timed


def placement_clock():
    """The time spent inside placement calls, as ``spent['placement']``."""
    return CallClock({'placement': [
        (report.SchedulerReportClient, name)
        for name in ('get_allocation_candidates', 'claim_resources')]})


def median_ms(samples):
    return statistics.median(samples) * 1000.0


def elapsed(fn, *args, **kwargs):
    """Seconds ``fn(*args, **kwargs)`` took.

    Garbage is collected first, untimed (unless ``COLLECT`` is false): the
    samples of both managers alternate, and a collection the other one's
    garbage triggers must not land in this sample. Collections this call
    triggers itself count.
    """
    if COLLECT:
        gc.collect()
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def percentiles_ms(samples):
    """p50, p95, p99 and max of ``samples`` (seconds), in ms."""
    cuts = statistics.quantiles(samples, n=100, method='inclusive')
    return {'p50': cuts[49] * 1000.0, 'p95': cuts[94] * 1000.0,
            'p99': cuts[98] * 1000.0, 'max': max(samples) * 1000.0,
            'n': len(samples)}
