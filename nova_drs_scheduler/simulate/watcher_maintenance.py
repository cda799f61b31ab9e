"""OpenStack Watcher's ``host_maintenance``, as an operator runs it.

When a host enters maintenance the operator runs one audit of python-watcher
17.0.0's ``HostMaintenance`` strategy, unchanged, with ``maintenance_node``
set to it and no backup node.  Its solution disables the node and migrates
each instance with no destination: Nova's scheduler picks one when the
migration starts (the engine's ``scheduler_choice``: its filters, then
its default weighers, most free RAM and vCPUs).

Watcher's applier (``watcher_applier``) runs the plan in layers of two
migrations; both of a layer leave the node, so Nova's compute queues the
second behind the first (``max_concurrent_live_migrations``) and a layer
copies one instance after the other.

Optionally a balancing Watcher strategy runs every period beside it, as a
continuous audit would.
"""

import time

from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_applier


class HostMaintenance:
    """One ``host_maintenance`` audit per host entering maintenance, its
    plan run by Watcher's applier; ``balancer``, if given, plans every
    period as well."""

    def __init__(self, balancer=None, label: str = ''):
        self._class = watcher_adapter.StrategyClass(
            watcher_adapter.HOST_MAINTENANCE, {})
        self._model = watcher_adapter.ComputeModel()
        self._applier = watcher_applier.Applier()
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
        balancer's audit for this period."""
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

    def react(self, view) -> tuple:
        """Between periods: the applier's layers, and the balancer's."""
        self._applier.run(view)
        if self._balancer is None:
            return [], 0.0, 0.0
        return self._balancer.react(view)
