"""The planner: one period's snapshot in, the moves (and power actions)
and their reasons out.

Pure: no I/O, no Nova, no clock, no randomness; every tie is broken by a
name or uuid, so the live task, the CLI and the simulator get the same plan
from the same snapshot.  The policy (``[drs] policy``) only ranks; the rails
below hold for every policy:

- a host is violated from its stabilization counter (see ``metrics``);
  excluded hosts, stale hosts (``cpu_percent`` None) and, in aggregate
  mode with ``unaggregated_hosts=ignore``, hosts in no pool are not judged;
- a destination must be allowed by ``candidates()`` (Nova's filters live)
  and be judged, not violated, schedulable, in the source's pool in
  aggregate mode, and under the in-flight limit per host;
- a destination is judged at its *outlook*: the higher of its current load
  and its expected load (``HostSnapshot.cpu_expected``), plus the
  instance.  A host that has been busy is not taken for a free one on one
  quiet sample: the load it usually carries is what the move adds to;
- blocked instances never move; the per-period, per-host and total limits
  count migrations in flight plus those planned this period; a violated
  host that one move leaves over its threshold may send up to
  ``max_concurrent_migrations_per_violated_host`` (destinations keep the
  per-host limit);
- each planned move is applied to a working projection of host loads, so
  later moves of the same period see it; ``candidates()`` gets the moves
  planned so far (``Snapshot.planned``), so that Nova's server-group
  filters and weighers see them too, and each takes its request off its
  destination's room as placement counts it (:mod:`capacity`): two moves
  never land on a host with room for one;
- a balancing or leveling move must pay for itself (policies that
  ``weighs_benefit``, ``[drs] benefit_horizon``): the relief it is
  expected to buy on its source outweighs the overload its destination
  risks and its migration's cost (:mod:`benefit`); an instance whose move
  does not pay is skipped for the policy's next one;
- leveling (policies with ``levels``, ``[drs] level_*``) comes after the
  violated hosts, only in pools whose hosts' load jumps often
  (:func:`.goals.level.rise_rates`) or that power management packed
  (:func:`.goals.level.packed`), and its destinations pass the same
  rules;
- hosts in maintenance (``HostSnapshot.draining``) come first: they are
  neither judged nor destinations, and each sends its instances, largest
  first, to the destination the policy prefers among those under their
  threshold by the margin, or, when none is, to the allowed one left least
  loaded (:mod:`.goals.drain`);
- consolidation for standby comes last, when power management's inputs
  are given (:class:`.power.PowerInputs`): which hosts enter standby and
  which wake (:mod:`.goals.consolidate`, deciding in :mod:`.power`),
  with this period's moves counted where they go; its plan is
  ``Plan.power``.

The goals run in the order drain, relieve, level, consolidate, one
module each (:mod:`.goals`), on one working projection (:mod:`.working`:
the judged hosts, their loads and slots, the limits), one destination
search (:mod:`.search`: the margin, graded in a warm pool) and the
cost-benefit rail (:mod:`.cost_benefit`); :mod:`.moves` records each
move and takes it into the projection.  Consolidation keeps its own
placement check (:mod:`.standby_placement`): it asks whether a host's
instances all fit elsewhere at the forecast, not where one goes.

Cost: instances are indexed by host once.  Eligible destinations are kept
sorted, per pool, by the policy's score at their current load; because a
score never decreases when load is added, the search for one instance stops
at the first host whose current score is already worse than the best
projected one.  Each violated host scores at most
``max_instances_evaluated`` instances, in the policy's rank order, and
stops early once no further instance can beat the best option
(``Policy.bound``).  The full scan over every allowed host, with a record
per refused host, runs only to explain a chosen move or a failure.
"""

from nova_drs_scheduler.planning import capacity
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import policies
from nova_drs_scheduler.planning import power as power_plan
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.goals import consolidate
from nova_drs_scheduler.planning.goals import drain
from nova_drs_scheduler.planning.goals import level
from nova_drs_scheduler.planning.goals import relieve

#: The goals, in the order the planner serves them.
PIPELINE = (drain, relieve, level, consolidate)
#: Every goal's name (``model.Move.goal``), in that order.
GOALS = tuple(goal.GOAL for goal in PIPELINE)


def plan(snapshot: model.Snapshot, candidates: model.CandidatesFn,
         goals: tuple[str, ...] = GOALS,
         power: power_plan.PowerInputs | None = None) -> model.Plan:
    """Plan this period's migrations (and power actions) for
    ``snapshot``.

    ``goals``: the ones served (:data:`GOALS`); a drain's flow between
    periods plans ``(model.DRAIN,)`` alone.  ``power``: power
    management's inputs; without them consolidation plans nothing and
    ``Plan.power`` is None.
    """
    policy = policies.get(snapshot.config.policy)
    work = working.Working(snapshot, capacity.counted(candidates), policy,
                           power)
    for goal in PIPELINE:
        if goal.GOAL in goals:
            goal.run(work)
    return model.Plan(moves=tuple(work.moves),
                      hosts=tuple(work.verdicts.values()),
                      notes=tuple(work.notes), policy=policy.name,
                      drains=tuple(work.drains), power=work.power_plan)
