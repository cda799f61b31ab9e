"""What ran beside each request: garbage collections, background refreshes,
rebalance periods, and how much of each fell inside the request.
"""

import collections
import contextlib
import gc
import statistics
import threading
import time
import unittest.mock

from nova_drs_scheduler.host_manager import cache
from nova_drs_scheduler.host_manager import freezing

#: What :class:`Timeline` times outside the main thread besides what it
#: is given: a refresh of the host cache (the background refresher's, or
#: one a period's candidates call pays), and the freezing after a pass.
BACKGROUND_CALLS = {'cache refresh': [(cache.RowCache, 'refresh')],
                    'freeze': [(freezing.Freezer, 'freeze')]}


class Timeline:
    """When garbage collections, background refreshes (and, given
    ``targets``, e.g. a rebalance period's phases) ran, to tell what the
    slow requests overlapped.

    Collections are timed with ``gc.callbacks`` (label ``gc gen N``, in
    any thread); the calls of :data:`BACKGROUND_CALLS` and ``targets``
    (``{label: [(owner, attribute name)]}``, as :class:`CallClock` takes
    them) only outside the main thread, where the requests run.
    """

    def __init__(self, targets=None):
        #: [(start, end, label)] of everything timed.
        self.spans = []
        #: [(start, end)] of the requests timed, in order.
        self.requests = []
        self.targets = dict(BACKGROUND_CALLS, **(targets or {}))
        self._gc_started = None

    def _on_gc(self, phase, info):
        if phase == 'start':
            self._gc_started = time.perf_counter()
        elif self._gc_started is not None:
            self.spans.append((self._gc_started, time.perf_counter(),
                               f'gc gen {info["generation"]}'))
            self._gc_started = None

    def _timed(self, label, original, main):
        spans = self.spans

        def timed(*args, **kwargs):
            if threading.get_ident() == main:
                return original(*args, **kwargs)
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spans.append((start, time.perf_counter(), label))
        return timed

    @contextlib.contextmanager
    def installed(self):
        """Time from now on; the thread (green thread under eventlet,
        whose ``main_thread()`` is not it) installing is the requests'."""
        main = threading.get_ident()
        gc.callbacks.append(self._on_gc)
        try:
            with contextlib.ExitStack() as stack:
                for label, calls in self.targets.items():
                    for owner, name in calls:
                        original = getattr(owner, name, None)
                        if original is not None:
                            stack.enter_context(unittest.mock.patch.object(
                                owner, name,
                                self._timed(label, original, main)))
                yield self
        finally:
            gc.callbacks.remove(self._on_gc)

    def overlap(self, request):
        """``{label: seconds of that label's spans inside request}``;
        spans of one label that overlap (nested calls) count once."""
        start, end = request
        inside = collections.defaultdict(list)
        for a, b, label in self.spans:
            if a < end and b > start:
                inside[label].append((max(a, start), min(b, end)))
        found = collections.Counter()
        for label, spans in inside.items():
            reached = start
            for a, b in sorted(spans):
                found[label] += max(0.0, b - max(a, reached))
                reached = max(reached, b)
        return found


def overlap_stats(timeline, samples, intervals):
    """What the requests of one scheduler (or condition) overlapped,
    slowest 5 % apart: ``{(part, label): [requests, seconds]}``, and under
    ``(part, 'n')`` the requests of that part; under ``'slowest'`` the
    slowest five as ``(ms, {label: ms})``."""
    cut = statistics.quantiles(samples, n=100, method='inclusive')[94]
    stats = collections.defaultdict(lambda: [0, 0.0])
    slowest = []
    for took, interval in zip(samples, intervals, strict=True):
        found = timeline.overlap(interval)
        part = 'slow' if took >= cut else 'rest'
        stats[(part, 'n')][0] += 1
        for label, seconds in found.items():
            stats[(part, label)][0] += 1
            stats[(part, label)][1] += seconds
        slowest.append((took * 1000.0, {
            label: seconds * 1000.0 for label, seconds in found.items()}))
    result = dict(stats)
    result['slowest'] = sorted(slowest, key=lambda s: -s[0])[:5]
    return result
