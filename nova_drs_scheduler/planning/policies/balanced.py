"""The balanced policy (default): cure the host for good, never ping-pong.

For a violated host it prefers, in this order:

1. a move that brings the host to its threshold minus ``margin`` (cured
   with the same hysteresis a destination must keep: on bursty loads a
   host cured by a hair re-violates a few periods later and costs a second
   migration);
2. a move that brings it under its threshold;
3. otherwise the move that lowers the pair's worst pressure the most (a
   partial cure, recorded as such; the host stays violated and is acted on
   again at the next multiple of ``stabilization``).

Within 1 and 2 the move that leaves the hotter of the two hosts coolest
wins (the pair ends as level as one move can make it), then the lowest
RAM (live-migration cost grows with memory), then the uuid.  A cure that
only just clears the margin leaves the host one load change away from the
next violation and the next migration; the most level pair holds longest.
On the benchmark this made fewer migrations *and* fewer overloaded
host-periods than curing with the smallest instance
(doc/benchmarks-balancing.md).

Among the destinations an instance may go to, the one with the lowest
pressure after the move wins, its CPU counted with
``destination_deviations`` of its standard deviations
(``HostSnapshot.cpu_deviation``) on top: of two hosts with room, the
smooth one takes the instance before the bursty one (or the one that just
received a move, whose step still shows as spread).  The margin below
is judged without the spread, so no destination is lost; the improvement
(and so ``min_improvement``) counts it.

No-ping-pong rule: a destination is refused (rule ``margin``) when its
projected CPU, or RAM when known, would exceed *its own* threshold minus
``margin``.  A move that lowers the worst pressure of the two hosts by
less than ``min_improvement`` points is refused (rule ``min-improvement``),
unless it cures the host and ``cure_below_min_improvement`` is on: a host
a few points over is cured by a small instance, and refusing that cure
leaves it overloaded until a larger one fits somewhere.
CPU and RAM are weighed together through
:func:`~nova_drs_scheduler.planning.policies.base.pressure`.

Inside the margin (:meth:`BalancedPolicy.inside`): when the margin refuses
every destination of a violated host, the planner looks again with the
margin graded by how warm the pool is (``working.pool_room``).  A
flat margin turns the DRS off exactly when a pool is warm, while a load
that rose and stays never cools by itself; a cool pool keeps the whole
margin, which earns its keep against ping-pong on bursty days.
"""

from nova_drs_scheduler.planning.policies import base

#: Loads are compared to a millionth of a percentage point: closer ones are
#: equal (float noise of the projections), and the tie goes to the move with
#: less RAM, then to the uuid.
_DECIMALS = 6

#: The rule refusing a destination inside the margin: it would not stay
#: under its threshold minus the graded margin.
GRADED_MARGIN = 'graded-margin'

_TIER_TEXT = (
    'cures the host with margin, leaving the pair most level',
    'cures the host, leaving the pair most level',
    'partial: no single move cures the host; largest improvement',
)


def _tier(after: float, config) -> int:
    if after <= -config.margin:
        return 0
    return 1 if after <= 0 else 2


def _score(host, cpu: float, ram: float | None, config) -> float:
    """A destination's pressure with ``destination_deviations`` of its
    standard deviations on its CPU: smooth hosts first."""
    spread = config.destination_deviations * (host.cpu_deviation or 0.0)
    return base.pressure(host, cpu + spread, ram)


def _relief(removal) -> float:
    """The most a move of this instance can improve: the source's drop."""
    return removal.before - removal.after


def _small(removal, improvement: float, config) -> bool:
    """A gain below ``min_improvement`` that does not cure the host (or
    whose cure the options do not exempt): not worth a live migration."""
    if improvement >= config.min_improvement:
        return False
    return not (config.cure_below_min_improvement and removal.after <= 0)


def _bound(removal, config, last) -> tuple:
    """Rank key of a removal, also the lowest key any of its options can
    get (the destination only adds pressure, and the pair's worst pressure
    is at least the source's): by tier, source pressure after the move
    (within tier 2, the largest relief first), RAM; hopeless ones last."""
    if _small(removal, _relief(removal), config):
        return (3, removal.instance.uuid)
    return (_tier(removal.after, config), round(removal.after, _DECIMALS),
            removal.instance.memory_mb, last)


class BalancedPolicy(base.Policy):
    name = 'balanced'
    until_cured = True
    levels = True
    grades = True

    def rank(self, removals, config):
        return sorted(removals,
                      key=lambda r: _bound(r, config, r.instance.uuid))

    def bound(self, removal, config):
        return _bound(removal, config, '')

    def hopeless(self, removal, config):
        if _small(removal, _relief(removal), config):
            return 'min-improvement'
        return None

    def destination(self, host, cpu, ram, config):
        if cpu > host.cpu_threshold - config.margin or (
                ram is not None and ram > host.ram_threshold - config.margin):
            return base.MARGIN, 0.0
        return None, _score(host, cpu, ram, config)

    def drain(self, host, cpu, ram, config, free):
        # The margin as for balancing, but ranked as Nova's RAM and CPU
        # weighers rank hosts (``free``: placement's free room), else by
        # the room left under each threshold, CPU and RAM added; never by
        # the spread.  A drain places instances for good, one after the
        # other: the host just back from its own maintenance is the
        # emptiest in placement while the drain's own arrivals show on it
        # as spread and as CPU, and ranked by those the rest went to
        # hosts still to be drained, to move again
        # (doc/benchmarks-maintenance.md).
        rule, _ = self.destination(host, cpu, ram, config)
        if rule:
            return rule, 0.0
        if free is not None:
            return None, -free
        score = cpu - host.cpu_threshold
        return None, score if ram is None else score + ram - host.ram_threshold

    def inside(self, host, cpu, ram, config, margin):
        # Strictly under: at the graded margin 0, a destination is still
        # not over its threshold after the move.  Ranked without the
        # spread: in a warm pool the host with the most room comes first
        # (ranking the smooth one first made a quarter more overloaded
        # host-periods on the step benchmark).
        if cpu >= host.cpu_threshold - margin or (
                ram is not None and ram >= host.ram_threshold - margin):
            return GRADED_MARGIN, 0.0
        return None, base.pressure(host, cpu, ram)

    def key(self, option, config):
        # The pair's worst pressure after the move, lowest first: the
        # largest improvement, as the source's pressure before is common.
        return (_tier(option.removal.after, config),
                round(option.peak_after, _DECIMALS),
                option.removal.instance.memory_mb,
                option.removal.instance.uuid)

    def refuse(self, option, config):
        if _small(option.removal, option.improvement, config):
            return 'min-improvement'
        return None

    def describe(self, option, config):
        return (f'balanced: {_TIER_TEXT[_tier(option.removal.after, config)]}'
                f' ({option.removal.instance.memory_mb} MB, improvement '
                f'{option.improvement:.1f} points)')
