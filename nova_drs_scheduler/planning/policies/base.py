"""What a rebalancing policy decides, and the arithmetic it decides with.

The planner owns everything that must hold whatever the policy: which hosts
are violated, which destinations are eligible (pools, staleness, limits,
Nova's filters), the working projection and the records.  A policy only
ranks: which instances of a violated host are worth scoring, which
destination it prefers for one instance, and which (instance, destination)
option wins.  Policies must be pure and deterministic like the planner.
"""

import abc
import dataclasses
import math
from collections.abc import Sequence

from nova_drs_scheduler.planning import model

#: The rule of a policy's margin: the one refusal a move inside the margin
#: may overrule (:meth:`Policy.inside`).
MARGIN = 'margin'


def pressure(host: model.HostSnapshot, cpu: float,
             ram: float | None) -> float:
    """Percentage points over the host's threshold, on the worst resource.

    Negative means headroom.  Comparing CPU and RAM each against its own
    threshold lets one number rank hosts and moves on both resources.
    """
    ram_excess = -math.inf if ram is None else ram - host.ram_threshold
    return max(cpu - host.cpu_threshold, ram_excess)


@dataclasses.dataclass(frozen=True)
class Removal:
    """A violated host's projected load without one of its instances."""

    instance: model.InstanceSnapshot
    cpu: float
    ram: float | None
    #: Source pressure before and after the instance leaves.
    before: float
    after: float


@dataclasses.dataclass(frozen=True)
class Option:
    """One instance moved to its preferred destination, projected."""

    removal: Removal
    destination: model.HostSnapshot
    destination_cpu: float
    destination_ram: float | None
    #: Pressure of the destination after the move.
    destination_after: float

    @property
    def peak_after(self) -> float:
        """Worst pressure of the two hosts after the move."""
        return max(self.removal.after, self.destination_after)

    @property
    def improvement(self) -> float:
        """How much the pair's worst pressure drops, in percent points."""
        return self.removal.before - self.peak_after


class Policy(abc.ABC):
    """Base of the policies registered under ``nova_drs_scheduler.policies``.
    """

    #: Name in ``[drs] policy`` and in decision records.
    name: str = ''
    #: Keep moving instances off a violated host, within the limits, while
    #: it stays projected over its threshold (False: one move per host).
    until_cured: bool = False
    #: Refuse to send an instance back to a host it recently left
    #: (``InstanceSnapshot.left``, rule ``no-return``).
    no_return: bool = True
    #: Level the hosts near their threshold where load jumps often
    #: (``[drs] level_*``, the planner's ``_level``).
    levels: bool = False
    #: Make only the moves that pay for themselves (``[drs]
    #: benefit_horizon``, the planner's cost-benefit rule).
    weighs_benefit: bool = True
    #: When every destination of a violated host is refused by the margin,
    #: look again inside it (:meth:`inside`, the planner's second pass).
    grades: bool = False

    @abc.abstractmethod
    def rank(self, removals: Sequence[Removal],
             config: model.PlannerConfig) -> list[Removal]:
        """The removals worth scoring against destinations, best first."""

    @abc.abstractmethod
    def destination(self, host: model.HostSnapshot, cpu: float,
                    ram: float | None, config: model.PlannerConfig,
                    ) -> tuple[str | None, float]:
        """``(rule, score)`` of a destination at its projected load.

        ``rule`` names why the destination is refused (None: accepted);
        among accepted ones the lowest score wins, ties by host name.
        Both must be monotone in the load: adding load never lowers the
        score nor lifts a refusal.  The planner relies on it to index
        destinations by their score at their current load.
        """

    @abc.abstractmethod
    def key(self, option: Option, config: model.PlannerConfig) -> tuple:
        """Sort key of an option; the lowest wins.  End it with the
        instance uuid so that ties break deterministically."""

    def drain(self, host: model.HostSnapshot, cpu: float,
              ram: float | None, config: model.PlannerConfig,
              free: float | None) -> tuple[str | None, float]:
        """``(rule, score)`` of a destination of a drain (a host in
        maintenance or entering standby) at its projected load; among the
        accepted ones the lowest score wins.  ``free``: its weight by
        placement's free room after the move, as Nova's RAM and CPU
        weighers give it (:func:`.goals.drain.free_weights`; higher is
        emptier), None when placement did not report room.  By default as
        :meth:`destination`."""
        return self.destination(host, cpu, ram, config)

    def inside(self, host: model.HostSnapshot, cpu: float,
               ram: float | None, config: model.PlannerConfig,
               margin: float) -> tuple[str | None, float]:
        """``(rule, score)`` of a destination in the planner's second pass
        (policies that ``grades``), judged with ``margin``, the pool's
        graded margin (below ``config.margin``), instead of the policy's
        own; among the accepted ones the lowest score wins."""
        return MARGIN, 0.0

    def bound(self, removal: Removal,
              config: model.PlannerConfig) -> tuple | None:
        """A key no option of ``removal`` can beat, or None (no bound).

        When bounds are non-decreasing in :meth:`rank` order, the planner
        stops scoring instances once the bound exceeds the best key found.
        """
        return None

    def hopeless(self, removal: Removal,
                 config: model.PlannerConfig) -> str | None:
        """Rule name when no destination can make ``removal`` acceptable,
        so it is refused without asking for candidates; else None."""
        return None

    def refuse(self, option: Option,
               config: model.PlannerConfig) -> str | None:
        """Rule name refusing an otherwise valid option, or None."""
        return None

    @abc.abstractmethod
    def describe(self, option: Option, config: model.PlannerConfig) -> str:
        """Why this option was chosen, for the move's record."""
