"""Watcher's applier: an action plan's migrations in layers, over time.

Watcher's default ``weight`` planner lays an action plan out as the
service changes first, then the migrations in layers of
``parallelization['migrate']`` = 2, each layer starting when every action
of the one before has ended, the slower one included.  A migrate action
ends when Watcher's poll of the instance (``[nova] migration_interval``,
5 s, from the action's start) sees it done; one that Nova refuses ends at
once, and the plan goes on (no execution rule is set for these
strategies); a failed one is not tried again.  An action whose instance
is no longer on its source is skipped, as its pre-condition does; it
still holds its place in its layer.  Layers start at their own times,
between periods too (``PeriodView.wake``).
"""

import collections
import math

#: Migrate actions at once: the weight planner's ``parallelization``.
PARALLEL_MIGRATIONS = 2
#: Seconds between Watcher's checks of a migration (``[nova]
#: migration_interval``).
POLL_SECONDS = 5.0


class Applier:
    """Watcher's applier running migrate actions in layers, over time.

    :meth:`run` at every moment the strategy is handed (each period, and
    each moment between periods): it notes the ends of the running layer
    and starts the next layer once Watcher has seen them all.
    """

    def __init__(self):
        #: (instance, source node, destination node or None: Nova's
        #: scheduler picks) of the actions not started yet.
        self._pending = collections.deque()
        #: {migration of the running layer: when its action started}
        self._running = {}
        #: When Watcher has seen the last layer done.
        self._free_at = 0.0

    def add(self, actions, at: float) -> None:
        """Queue one action plan's migrations, run from ``at`` on."""
        self._pending.extend(actions)
        self._free_at = max(self._free_at, at)

    def busy(self, now: float) -> bool:
        """An action plan is still running at ``now`` (Watcher skips the
        audits of a continuous audit meanwhile)."""
        return bool(self._pending or self._running) or self._free_at > now

    def run(self, view) -> None:
        """The layer's ends seen at their polls; the next layers started
        when due, or a wake asked for then."""
        for migration in [m for m in self._running if m.end is not None]:
            at = self._running.pop(migration)
            polls = math.ceil((migration.end - at) / POLL_SECONDS)
            self._free_at = max(self._free_at, at + polls * POLL_SECONDS)
        while self._pending and not self._running:
            if self._free_at > view.now:
                view.wake(self._free_at)
                return
            self._layer(view)

    def _layer(self, view) -> None:
        """Start the next layer's actions now."""
        for _ in range(min(PARALLEL_MIGRATIONS, len(self._pending))):
            name, source, destination = self._pending.popleft()
            if view.cluster.location[name] != source:
                continue
            migration = view.start(name, destination)
            if migration is not None:
                self._running[migration] = view.now
        self._free_at = view.now
