"""The strategies a run compares, behind one small interface.

A strategy has a ``name`` and ``plan(view) -> (moves, input, decision)``:
the moves as ``(instance, destination)`` pairs, or as the planner's
:class:`~nova_drs_scheduler.planning.model.Move` objects, whose expected
loads the engine checks after the move; then two CPU times of
the process in seconds (``time.process_time``: other work on a shared
machine does not count), timed the same way for every strategy:
building the strategy's input from the simulated cluster (our snapshot
and candidates; Watcher's compute model and its datasource queries), and
the decision itself
(``planner.plan()``; Watcher's ``execute()`` less those queries).
``seed`` and ``balanced`` are the production planner with that
``[drs] policy``; everything else in their config comes from the same
``[drs]`` options.  A strategy may also have ``react(view)``, with the same
answer as ``plan``: the engine hands it the view of each moment between
two periods when a migration ends, or when it asked to be woken
(``PeriodView.wake``).  ``watcher_host_maintenance`` acts only on hosts in
maintenance, so it is asked for by name, never among :data:`ALL`; so are
the strategies that manage power (:data:`POWER`), which need a run with a
power model: ``balanced+power`` (``balanced`` with power management
``automatic``: the planner's consolidation goal, after balancing) and
``watcher_vm_workload_consolidation``.
"""

import dataclasses
import time

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import policies
from nova_drs_scheduler.planning import power
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_consolidation
from nova_drs_scheduler.simulate import watcher_maintenance

PLANNER_POLICIES = ('seed', 'balanced')
ALL = (('none',) + PLANNER_POLICIES
       + tuple(f'watcher_{n}' for n in watcher_adapter.WATCHER_STRATEGIES))
HOST_MAINTENANCE = f'watcher_{watcher_adapter.HOST_MAINTENANCE}'
POWER_MANAGED = 'balanced+power'
POWER = (POWER_MANAGED, watcher_consolidation.NAME)


class NoMoves:
    """The cluster as Nova leaves it: placed once, never rebalanced."""

    name = 'none'

    def plan(self, view) -> tuple:
        return [], 0.0, 0.0


class PlannerStrategy:
    """The production planner with one policy, serving ``goals`` (all by
    default; ``(model.DRAIN,)``: drains only, no balancing)."""

    def __init__(self, config: model.PlannerConfig, policy: str,
                 goals: tuple = planner.GOALS, label: str = ''):
        self.name = label or policy
        self.config = dataclasses.replace(config, policy=policy)
        self.goals = goals
        #: Power management's level, as the snapshot shows it.
        self.level = 'off'
        # Load the plugin now: the live service pays that once at start,
        # not in its first period's planning time.
        policies.get(policy)

    def decide(self, view) -> tuple:
        """``(plan, input, decision)``: the planner's whole
        :class:`~model.Plan` (verdicts and notes too, for tools that
        explain a run) and the two CPU times."""
        return self._decide(view, self.goals)

    def _decide(self, view, goals: tuple) -> tuple:
        """``(plan, input, decision)`` for ``goals``."""
        started = time.process_time()
        snapshot = view.snapshot(self.config, self.level)
        candidates = view.candidates()
        built = time.process_time()
        result = planner.plan(snapshot, candidates, goals,
                              self._power(snapshot, view, goals))
        decided = time.process_time()
        return result, built - started, decided - built

    def _power(self, snapshot: model.Snapshot, view,
               goals: tuple) -> power.PowerInputs | None:
        """Power management's inputs for the planner: none, it is off."""
        return None

    def plan(self, view) -> tuple:
        """The plan's moves themselves, so that their relief is checked."""
        result, built, decided = self.decide(view)
        return list(result.moves), built, decided

    def react(self, view) -> tuple:
        """Between two periods, while a host drains: the drains alone,
        planned at once, so that the next move off a draining host starts
        as soon as its source can send (balancing waits for the next
        period)."""
        if not view.maintenance:
            return [], 0.0, 0.0
        result, built, decided = self._decide(view, (model.DRAIN,))
        return list(result.moves), built, decided


class PowerManaged(PlannerStrategy):
    """``balanced`` with power management ``automatic``: each period the
    planner's plan, which drains the hosts entering standby and, last,
    consolidates (``Plan.power``; the live leader serves consolidation
    alone, once it has followed its hosts a step).  Its actions follow
    the moves, so that a host leaves service after this period's moves to
    it have started."""

    def __init__(self, config: model.PlannerConfig,
                 power_config: power.PowerConfig, level: str = 'automatic'):
        super().__init__(config, 'balanced', label=POWER_MANAGED)
        self.power_config = power_config
        self.level = level
        #: The pools' demand forecasts and spare counters, period to period.
        self.forecasts, self.counters = {}, {}
        #: Every power action taken, with the period's time.
        self.actions = []

    def _power(self, snapshot: model.Snapshot, view,
               goals: tuple) -> power.PowerInputs | None:
        """The period's demand fed to the forecasts and counters, which
        the planner consolidates on, when it consolidates (a drain
        between periods does not: a period's demand is counted once)."""
        if model.CONSOLIDATE not in goals:
            return None
        self.forecasts, self.counters = power.observe(
            snapshot, self.forecasts, self.counters, view.now,
            self.power_config)
        return power.PowerInputs(self.forecasts, self.counters,
                                 self.power_config)

    def plan(self, view) -> tuple:
        """The plan's moves, then the power plan's actions."""
        result, built, decided = self.decide(view)
        self.actions.extend((view.now, a) for a in result.power.actions)
        return (list(result.moves) + list(result.power.actions), built,
                decided)


def build(name: str, config: model.PlannerConfig, seed: int,
          watcher_parameters: dict,
          power_config: power.PowerConfig | None = None):
    """The strategy called ``name`` (see :data:`ALL`,
    :data:`HOST_MAINTENANCE` and :data:`POWER`; ``power_config`` for
    ``balanced+power``, ``watcher_parameters['vm_workload_consolidation']``
    for Watcher's, with its ``audit_interval`` in seconds)."""
    if name == 'none':
        return NoMoves()
    if name in PLANNER_POLICIES:
        return PlannerStrategy(config, name)
    if name == POWER_MANAGED:
        return PowerManaged(config, power_config or power.PowerConfig())
    if name == watcher_consolidation.NAME:
        parameters = dict(watcher_parameters.get(
            watcher_adapter.CONSOLIDATION, {}))
        interval = parameters.pop('audit_interval',
                                  watcher_consolidation.AUDIT_INTERVAL)
        return watcher_consolidation.Consolidation(parameters, interval)
    if name == HOST_MAINTENANCE:
        return watcher_maintenance.HostMaintenance()
    if name.startswith('watcher_'):
        kind = name[len('watcher_'):]
        return watcher_adapter.WatcherStrategy(
            kind, watcher_parameters.get(kind, {}), seed)
    raise ValueError(f'unknown strategy {name!r}; choose from '
                     f'{", ".join(ALL + (HOST_MAINTENANCE,) + POWER)}')
