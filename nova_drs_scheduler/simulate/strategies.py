"""The strategies a run compares, behind one small interface.

A strategy has a ``name`` and ``plan(view) -> (moves, input, decision)``:
the moves as ``(instance, destination)`` pairs, or as the planner's
:class:`~nova_drs_scheduler.rebalance.model.Move` objects, whose expected
loads the engine checks after the move; then two CPU times of
the process in seconds (``time.process_time``: other work on a shared
machine does not count), timed the same way for every strategy:
building the strategy's input from the simulated cluster (our snapshot
and candidates; Watcher's compute model and its datasource queries), and
the decision itself
(``planner.plan()``; Watcher's ``execute()`` less those queries).
``seed`` and ``balanced`` are the production planner with that
``[drs] policy``; everything else in their config comes from the same
``[drs]`` options.  ``watcher_host_maintenance`` acts only on hosts in
maintenance, so it is asked for by name, never among :data:`ALL`.
"""

import dataclasses
import time

from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.rebalance import planner
from nova_drs_scheduler.rebalance import policies
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_maintenance

PLANNER_POLICIES = ('seed', 'balanced')
ALL = (('none',) + PLANNER_POLICIES
       + tuple(f'watcher_{n}' for n in watcher_adapter.WATCHER_STRATEGIES))
HOST_MAINTENANCE = f'watcher_{watcher_adapter.HOST_MAINTENANCE}'


class NoMoves:
    """The cluster as Nova leaves it: placed once, never rebalanced."""

    name = 'none'

    def plan(self, view) -> tuple:
        return [], 0.0, 0.0


class PlannerStrategy:
    """The production planner with one policy."""

    def __init__(self, config: model.PlannerConfig, policy: str):
        self.name = policy
        self.config = dataclasses.replace(config, policy=policy)
        # Load the plugin now: the live service pays that once at start,
        # not in its first period's planning time.
        policies.get(policy)

    def decide(self, view) -> tuple:
        """``(plan, input, decision)``: the planner's whole
        :class:`~model.Plan` (verdicts and notes too, for tools that
        explain a run) and the two CPU times."""
        started = time.process_time()
        snapshot = view.snapshot(self.config)
        candidates = view.candidates()
        built = time.process_time()
        result = planner.plan(snapshot, candidates)
        decided = time.process_time()
        return result, built - started, decided - built

    def plan(self, view) -> tuple:
        """The plan's moves themselves, so that their relief is checked."""
        result, built, decided = self.decide(view)
        return list(result.moves), built, decided


def build(name: str, config: model.PlannerConfig, seed: int,
          watcher_parameters: dict):
    """The strategy called ``name`` (see :data:`ALL`, and
    :data:`HOST_MAINTENANCE`)."""
    if name == 'none':
        return NoMoves()
    if name in PLANNER_POLICIES:
        return PlannerStrategy(config, name)
    if name == HOST_MAINTENANCE:
        return watcher_maintenance.HostMaintenance()
    if name.startswith('watcher_'):
        kind = name[len('watcher_'):]
        return watcher_adapter.WatcherStrategy(
            kind, watcher_parameters.get(kind, {}), seed)
    raise ValueError(f'unknown strategy {name!r}; choose from '
                     f'{", ".join(ALL + (HOST_MAINTENANCE,))}')
