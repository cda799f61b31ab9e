"""OpenStack Watcher's ``host_maintenance``, as an operator runs it.

When a host enters maintenance the operator runs one audit of python-watcher
17.0.0's ``HostMaintenance`` strategy, unchanged, with ``maintenance_node``
set to it and no backup node.  Its solution disables the node and migrates
each instance with no destination: Nova's scheduler picks one when the
migration starts (the engine's ``scheduler_choice``: its filters, then
its default weighers, most free RAM and vCPUs).

Watcher's applier runs that action plan as its default ``weight`` planner
lays it out: the node's disabling first, then the migrations in layers of
``parallelization['migrate']`` = 2, each layer starting when every action
of the one before has ended.  A migrate action ends when Watcher's poll of
the instance (``[nova] migration_interval``, 5 s) sees it done; one that
Nova refuses ends at once, and the plan goes on (no execution rule is set
for this strategy).  An action whose instance is no longer on the node is
skipped, as its pre-condition does.  The layers start inside periods, at
their own times (``PeriodView.start``).

Optionally a balancing Watcher strategy runs every period beside it, as a
continuous audit would.
"""

import collections
import math
import time

from nova_drs_scheduler.simulate import watcher_adapter

#: Migrate actions at once: the weight planner's ``parallelization``.
PARALLEL_MIGRATIONS = 2
#: Seconds between Watcher's checks of a migration (``[nova]
#: migration_interval``).
POLL_SECONDS = 5.0


class Applier:
    """Watcher's applier running migrate actions in layers, over time."""

    def __init__(self):
        #: (instance, source node, destination node or None: Nova's
        #: scheduler picks) of the actions not started yet.
        self._pending = collections.deque()
        #: When the layer in progress has ended, as Watcher sees it.
        self._free_at = 0.0

    def add(self, actions, at: float) -> None:
        """Queue one action plan's migrations, run from ``at`` on."""
        self._pending.extend(actions)
        self._free_at = max(self._free_at, at)

    def busy(self, now: float) -> bool:
        """An action plan is still running at ``now`` (Watcher skips the
        audits of a continuous audit meanwhile)."""
        return bool(self._pending) or self._free_at > now

    def run(self, view) -> None:
        """Start the layers that begin during this period."""
        end = view.now + view.interval
        pending = self._pending
        while pending and self._free_at < end:
            at = max(self._free_at, view.now)
            seen = at
            for _ in range(min(PARALLEL_MIGRATIONS, len(pending))):
                name, source, destination = pending.popleft()
                if view.cluster.location[name] != source:
                    continue
                migration = view.start(name, destination, at)
                if migration is not None:
                    polls = math.ceil((migration.end - at) / POLL_SECONDS)
                    seen = max(seen, at + polls * POLL_SECONDS)
            self._free_at = seen


class HostMaintenance:
    """One ``host_maintenance`` audit per host entering maintenance, its
    plan run by :class:`Applier`; ``balancer``, if given, plans every
    period as well."""

    def __init__(self, balancer=None, label: str = ''):
        self._class = watcher_adapter.StrategyClass(
            watcher_adapter.HOST_MAINTENANCE, {})
        self._model = watcher_adapter.ComputeModel()
        self._applier = Applier()
        self._balancer = balancer
        self._audited = set()
        self.name = label or 'watcher_host_maintenance' + (
            f'+{balancer.name}' if balancer else '')

    def _audit(self, view, host: str) -> tuple:
        """The audit's migrations as (instance, source, None), and its
        input and decision seconds."""
        strategy = self._class.new()
        started = time.process_time()
        self._class.ready(strategy, self._model.sync(view.cluster), None,
                          {'maintenance_node': host})
        built = time.process_time()
        solution = strategy.execute()
        decided = time.process_time()
        actions = [(a['input_parameters']['resource_id'],
                    a['input_parameters']['source_node'], None)
                   for a in solution.actions if a['action_type'] == 'migrate']
        return actions, built - started, decided - built

    def plan(self, view) -> tuple:
        """Audit new hosts in maintenance, run the applier, then the
        balancer's moves for this period."""
        built = decided = 0.0
        for host, entered in sorted(view.maintenance.items()):
            if (host, entered) not in self._audited:
                self._audited.add((host, entered))
                actions, audit_input, audit_decision = self._audit(view, host)
                self._applier.add(actions, view.now)
                built, decided = built + audit_input, decided + audit_decision
        self._applier.run(view)
        if self._balancer is None:
            return [], built, decided
        moves, balance_input, balance_decision = self._balancer.plan(view)
        return moves, built + balance_input, decided + balance_decision
