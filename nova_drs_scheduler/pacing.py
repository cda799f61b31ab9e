"""Scheduling requests in flight, and background work that gives way.

A rebalance period is long pure-Python work in the scheduler's process.
In native threading mode it shares the GIL with ``select_destinations``,
which then runs at about half speed; under eventlet it holds the hub until
it does I/O, which SQLite never does, so a request waits for the whole
period.  The manager counts the requests in flight (:data:`REQUESTS`); the
period calls :func:`pause` at cheap points (:func:`paced`), which
always lets other threads run once and, while a request is in flight,
sleeps in short steps until none is.  A period runs within a budget
(:func:`budget`): at most :data:`PERIOD_LIMIT` at one point, longer than
a request, so that it resumes between requests rather than inside one,
and at most the budget in all, so that a period under a steady stream of
requests still ends.  Outside a budget a point waits at most
:data:`LIMIT`.  The host cache's background refresh gives way the same
way, within a budget per pass (:class:`Budgeted`).

``time.sleep`` is looked up at each call: eventlet's monkey patching
replaces it with a green sleep, so the same code yields in either mode.
"""

import contextlib
import threading
import time
from collections.abc import Iterable
from collections.abc import Iterator

#: Seconds between two looks at the requests in flight while one is.
STEP = 0.002
#: Longest pause at one point (seconds).
LIMIT = 0.2
#: Longest pause at one point of a rebalance period (seconds, see
#: :func:`budget`): a request may take longer than :data:`LIMIT` (a slow
#: placement, a large cloud), and a period resuming inside it slows it.
PERIOD_LIMIT = 1.0
#: Items of a paced loop between two points.
EVERY = 50


class InFlight:
    """How many requests run now; thread-safe (and green-thread-safe)."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """Count one request for as long as the block runs."""
        with self._lock:
            self._count += 1
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1

    @property
    def count(self) -> int:
        return self._count


#: The scheduler process's requests (one manager per process).
REQUESTS = InFlight()


class Unless:
    """``requests``, counted as none while any of ``waiting`` runs.

    The host cache's refresher gives way to requests, but not while one
    of them waits for the rows it is reading: that request would wait for
    itself.
    """

    def __init__(self, requests: InFlight, waiting: InFlight) -> None:
        self._requests = requests
        self._waiting = waiting

    @property
    def count(self) -> int:
        return 0 if self._waiting.count else self._requests.count


def give_way(requests: InFlight | Unless = REQUESTS, step: float = STEP,
             limit: float = LIMIT) -> float:
    """Let other threads run; while requests are in flight, sleep until
    none is or ``limit`` seconds passed.  Returns the seconds waited."""
    time.sleep(0)
    steps = 0
    while requests.count and steps < round(limit / step):
        time.sleep(step)
        steps += 1
    return steps * step


class Budgeted:
    """Gives way at most ``limit`` seconds at a time and ``budget``
    seconds in all, then only lets other threads run: background work
    must still end under a steady stream of requests."""

    def __init__(self, requests: InFlight | Unless, budget: float,
                 limit: float = LIMIT) -> None:
        self._requests = requests
        self._limit = limit
        self.left = budget
        #: Seconds given way so far.
        self.waited = 0.0

    def __call__(self) -> None:
        waited = give_way(self._requests, limit=min(self._limit, self.left))
        self.left -= waited
        self.waited += waited


#: The budget of the block the current thread (green thread under
#: eventlet: monkey patching makes this green-local) runs, if any.
_current = threading.local()


@contextlib.contextmanager
def budget(seconds: float, limit: float = PERIOD_LIMIT
           ) -> Iterator[Budgeted]:
    """Within the block, this thread's :func:`pause` gives way to
    :data:`REQUESTS` up to ``limit`` seconds per point and ``seconds`` in
    all (a rebalance period's budget)."""
    previous = getattr(_current, 'pace', None)
    _current.pace = pace = Budgeted(REQUESTS, seconds, limit)
    try:
        yield pace
    finally:
        _current.pace = previous


def pause() -> None:
    """A pacing point: the :func:`budget` of the block this thread runs,
    else :func:`give_way` to :data:`REQUESTS`."""
    pace = getattr(_current, 'pace', None)
    if pace is None:
        give_way()
    else:
        pace()


def paced(items: Iterable, every: int = EVERY) -> Iterator:
    """``items``, with :func:`pause` before every ``every``-th one."""
    for count, item in enumerate(items, 1):
        if count % every == 0:
            pause()
        yield item
