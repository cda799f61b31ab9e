"""The planner: one period's snapshot in, the moves and their reasons out.

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
  (:func:`rise_rates`), and its destinations pass the same rules;
- hosts in maintenance (``HostSnapshot.draining``) come first: they are
  neither judged nor destinations, and each sends its instances, largest
  first, to the destination the policy prefers among those under their
  threshold by the margin, or, when none is, to the allowed one left least
  loaded (:meth:`_Planner._drain_host`).

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

import bisect
import collections
import dataclasses
import functools
from collections.abc import Mapping

from nova_drs_scheduler.rebalance import benefit
from nova_drs_scheduler.rebalance import capacity
from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.rebalance import policies
from nova_drs_scheduler.rebalance.policies import base

#: Every goal, in the order the planner serves them.
GOALS = (model.DRAIN, model.BALANCE, model.LEVEL)


def plan(snapshot: model.Snapshot, candidates: model.CandidatesFn,
         goals=GOALS) -> model.Plan:
    """Plan this period's migrations for ``snapshot``.

    ``goals``: the ones served (:data:`GOALS`); a drain's flow between
    periods plans ``(model.DRAIN,)`` alone.
    """
    policy = policies.get(snapshot.config.policy)
    return _Planner(snapshot, capacity.counted(candidates), policy).run(
        goals)


def rise_rates(hosts: Mapping[str, model.HostSnapshot],
               config: model.PlannerConfig) -> dict:
    """Per pool, the mean rise rate of its hosts with a sample (an unknown
    rate counts as 0): the evidence leveling waits for."""
    rates = collections.defaultdict(list)
    for host in hosts.values():
        if host.cpu_percent is not None and _balanced(host):
            rates[_pool_key(host, config)].append(host.rise_rate or 0.0)
    return {pool: sum(found) / len(found) for pool, found in rates.items()}


def leveling_sources(hosts: Mapping[str, model.HostSnapshot],
                     config: model.PlannerConfig) -> set:
    """The hosts this period may level from, at their measured load.

    The live service measures their instances, as it does a violated
    host's: the planner can only move an instance whose load it knows.
    """
    if config.level_gap <= 0 or not policies.get(config.policy).levels:
        return set()
    rates = rise_rates(hosts, config)
    return {name for name, host in hosts.items()
            if host.cpu_percent is not None and _balanced(host)
            and rates[_pool_key(host, config)] >= config.level_rise_rate
            and host.cpu_percent >= host.cpu_threshold - config.level_band}


def _balanced(host: model.HostSnapshot) -> bool:
    """Whether balancing may judge the host and use it as a destination."""
    return not (host.excluded or host.automation_off)


def _pool_key(host: model.HostSnapshot, config: model.PlannerConfig):
    """The pool a host is judged and relieved in."""
    return host.pool if config.mode == 'aggregate' else None


def _fmt(label: str, cpu: float, ram: float | None) -> str:
    text = f'{label} cpu {cpu:.1f}%'
    return text if ram is None else f'{text}, ram {ram:.1f}%'


def pool_room(hosts: Mapping[str, model.HostSnapshot],
              config: model.PlannerConfig) -> dict:
    """Per pool, the mean room its hosts with a sample have under their
    ``cpu_threshold - margin``, points (negative for a host past it): how
    warm the pool is, which grades the margin (``_Planner._graded``)."""
    room = collections.defaultdict(list)
    for host in hosts.values():
        if host.cpu_percent is not None and _balanced(host):
            room[_pool_key(host, config)].append(
                host.cpu_threshold - config.margin - host.cpu_percent)
    return {pool: sum(found) / len(found) for pool, found in room.items()}


def _failures(failed: list) -> str:
    """``(uuid, Counter of rules)`` per instance refused, for a note."""
    return '; '.join(f'instance {uuid}: {_summary(rules)}'
                     for uuid, rules in failed)


def _summary(rules: collections.Counter) -> str:
    if not rules:
        return 'no allowed destination'
    return ', '.join(f'{count}x {rule}'
                     for rule, count in sorted(rules.items()))


class _Planner:

    def __init__(self, snapshot, candidates, policy):
        self.snapshot = snapshot
        self.config = snapshot.config
        self.candidates = candidates
        self.policy = policy
        self.hosts = snapshot.hosts
        self.aggregate = self.config.mode == 'aggregate'
        self.verdicts = {}
        #: Host name -> planner rule barring it as a destination, or None.
        self.barred = {}
        for name in sorted(self.hosts):
            self.verdicts[name], self.barred[name] = self._judge(
                self.hosts[name])
        #: Violated hosts: drains leave each a slot (``_limit``).
        self.violated = sum(v.violated for v in self.verdicts.values())
        self.cpu = {n: h.cpu_percent for n, h in self.hosts.items()}
        self.ram = {n: h.ram_percent for n, h in self.hosts.items()}
        self.busy = collections.Counter(snapshot.inflight_by_host)
        #: Host name -> points its expected load is above its current one.
        self.lag = {n: _lag(h) for n, h in self.hosts.items()}
        #: Pool key -> indexed destinations as sorted (floor score, name).
        self.order = collections.defaultdict(list)
        self.floors = {}
        #: Unbarred host -> rule refusing it whatever the instance, at its
        #: current load (policy rule or in-flight limit); not indexed.
        self.resting = {}
        self._unreachable_by_pool = {}
        for name, rule in self.barred.items():
            if rule is None:
                self._enter(name)
        self.by_host = collections.defaultdict(list)
        for instance in snapshot.instances:
            self.by_host[instance.host].append(instance)
        self.moved = set()
        #: Pool key -> how warm it is (:func:`pool_room`).
        self.room = pool_room(self.hosts, self.config)
        #: Host -> the hosts its instances came from within
        #: ``no_return_time``: never its destinations inside the margin.
        #: (A destination of this plan is no source in it.)
        self.came_from = collections.defaultdict(set)
        for instance in snapshot.instances:
            self.came_from[instance.host].update(instance.left)
        self._rises = None
        self.moves = []
        #: Drain moves among them: they have a budget of their own.
        self.drain_moves = 0
        self.notes = []
        #: The snapshot with the moves planned so far, for candidates().
        self.view = snapshot

    def _judge(self, host):
        """A host's verdict, and the rule barring it as a destination."""
        cfg = self.config

        def verdict(violated, reason):
            return model.HostVerdict(
                host.name, violated, reason, host.cpu_percent,
                host.ram_percent, host.counter, tuple(host.window),
                host.pool, host.cpu_threshold, host.ram_threshold)

        if host.power == model.ENTERING:
            return (verdict(False, 'entering standby: draining, not '
                                   'judged'), 'standby')
        if host.draining:
            return (verdict(False, 'in maintenance: draining, not judged'),
                    'maintenance')
        if host.power in (model.STANDBY, model.WAKING):
            return (verdict(False, f'power {host.power}: not judged'),
                    'powered-off')
        if host.excluded:
            return (verdict(False, 'aggregate opted out of DRS: not judged'),
                    'excluded')
        if host.automation_off:
            return (verdict(False, 'automation off: not judged'),
                    'automation-off')
        if (self.aggregate and host.pool is None
                and cfg.unaggregated_hosts == 'ignore'):
            return (verdict(False, 'in no aggregate and [drs] '
                                   'unaggregated_hosts=ignore: not judged'),
                    'unaggregated')
        if host.vcpus <= 0 or host.memory_mb <= 0:
            return (verdict(False, 'no CPU or memory capacity recorded: not '
                                   'judged'), 'no-capacity')
        reason = metrics.judgement(
            host.cpu_percent, host.ram_percent, host.cpu_threshold,
            host.ram_threshold, host.counter, cfg.stabilization,
            len(host.window))
        if host.cpu_percent is None:
            return verdict(False, reason), 'stale-metrics'
        if metrics.is_violated(host.counter, cfg.stabilization):
            return verdict(True, reason), 'violated'
        return (verdict(False, reason),
                None if host.schedulable else 'not-schedulable')

    def _pool(self, host):
        return _pool_key(host, self.config)

    def _project(self, host, cores, memory, outlook=True):
        """A host's (cpu, ram) percents with an instance added, CPU at its
        outlook (for decisions) or at its current load (the projection)."""
        cpu = self.cpu[host.name] + 100.0 * cores / host.vcpus
        if outlook:
            cpu += self.lag[host.name]
        ram = self.ram[host.name]
        if ram is not None:
            ram += 100.0 * memory / host.memory_mb
        return cpu, ram

    def _enter(self, name):
        """Index a destination by its score at its current load, unless
        the policy or the per-host limit already refuses it."""
        host = self.hosts[name]
        rule, floor = self.policy.destination(
            host, self.cpu[name] + self.lag[name], self.ram[name],
            self.config)
        if (rule is None and self.busy[name]
                >= self.config.max_concurrent_migrations_per_host):
            rule = 'limit:per-host'
        if rule is None:
            self.floors[name] = floor
            bisect.insort(self.order[self._pool(host)], (floor, name))
        else:
            self.resting[name] = rule

    def _leave(self, name):
        """Unindex a destination (always an indexed one: a move's)."""
        floor = self.floors.pop(name)
        order = self.order[self._pool(self.hosts[name])]
        del order[bisect.bisect_left(order, (floor, name))]

    def run(self, goals=GOALS) -> model.Plan:
        drains = [self._drain_host(self.hosts[name])
                  for name in sorted(self.hosts)
                  if self.hosts[name].draining and model.DRAIN in goals]
        violated = [self.hosts[n] for n, v in self.verdicts.items()
                    if v.violated and model.BALANCE in goals]
        violated.sort(key=lambda h: (-base.pressure(h, h.cpu_percent,
                                                    h.ram_percent), h.name))
        for source in violated:
            self._plan_host(source)
        if (model.LEVEL in goals and self.policy.levels
                and self.config.level_gap > 0):
            self._level()
        return model.Plan(moves=tuple(self.moves),
                          hosts=tuple(self.verdicts.values()),
                          notes=tuple(self.notes), policy=self.policy.name,
                          drains=tuple(drains))

    def _drain_host(self, source) -> model.Drain:
        """Plan the moves off a host in maintenance, within the limits.

        Largest first (memory, then vCPUs): the instances hardest to place
        go while the destinations have the most room, and the small ones
        fit in what is left.  An instance held by a move in flight or a
        limit waits; one that cannot go (opted out, not in a movable
        state, quarantined, no allowed destination) is a blocker.
        """
        instances = self.by_host.get(source.name, ())
        planned, waiting, blockers = [], [], []
        for instance in sorted(instances, key=lambda i: (
                -i.memory_mb, -i.vcpus, i.uuid)):
            if instance.blocked is not None:
                (waiting if instance.transient else blockers).append(
                    model.Rejection(instance.uuid, 'blocked',
                                    instance.blocked))
                continue
            limit = self._limit(
                source.name,
                self.config.drain_max_concurrent_migrations_per_host,
                'limit:per-draining-host', drain=True)
            if limit:
                waiting.append(model.Rejection(instance.uuid, limit))
                continue
            found = self.candidates(instance, self.view)
            option, rule, detail = self._drain_option(source, instance,
                                                      found)
            if option is None:
                (waiting if rule == 'limit:per-host' else blockers).append(
                    model.Rejection(instance.uuid, rule, detail))
                continue
            self._apply(source, option, found, [], [], reason=detail,
                        goal=model.DRAIN)
            planned.append(instance.uuid)
        return model.Drain(source.name, len(instances), tuple(planned),
                           tuple(waiting), tuple(blockers))

    def _drain_option(self, source, instance, found):
        """``(option, None, reason)`` for one instance leaving ``source``,
        or ``(None, rule, detail)`` when it cannot go this period.

        Destinations are Nova's allowed hosts of the source's pool that
        the planner's rails accept (schedulable, judged, not violated, not
        in maintenance; automation off is no bar).  The policy's preferred
        one (for ``balanced``, under its threshold by the margin) wins;
        when the policy accepts none, the drain still proceeds to the host
        left with the least pressure, and says so.
        """
        cfg, pool = self.config, self._pool(source)
        per_host = cfg.drain_destination_concurrency
        rules = collections.Counter(r.rule for r in found.rejected)
        preferred = fallback = None
        for name in sorted(found.allowed):
            host = self.hosts.get(name)
            if name == source.name or host is None:
                continue
            rule = _DRAIN_DESTINATION.get(self.barred[name],
                                          self.barred[name]) or (
                'pool' if self._pool(host) != pool else None)
            if rule is None and name in instance.refused:
                rule = _REFUSED
            if rule is None and self.busy[name] >= per_host:
                rule = 'limit:per-host'
            if rule is not None:
                rules[rule] += 1
                continue
            cpu, ram = self._project(host, instance.cpu_cores,
                                     instance.memory_mb)
            refused, score = self.policy.drain(host, cpu, ram, cfg)
            option = (host, cpu, ram)
            if refused is None:
                if preferred is None or (score, name) < preferred[0]:
                    preferred = ((score, name), option)
            else:
                rules[refused] += 1
                key = (base.pressure(host, cpu, ram), name)
                if fallback is None or key < fallback[0]:
                    fallback = (key, option)
        chosen = preferred or fallback
        if chosen is None:
            only_busy = set(rules) == {'limit:per-host'}
            detail = _summary(rules)
            if instance.refused:
                detail += (f' (Nova refused it at start on '
                           f'{", ".join(instance.refused)})')
            return (None, 'limit:per-host' if only_busy else
                    'no-destination', detail)
        host, cpu, ram = chosen[1]
        option = base.Option(self._removal(source, instance), host, cpu,
                             ram, base.pressure(host, cpu, ram))
        how = 'cold' if instance.migration == model.COLD else 'live'
        why = ('standby' if source.power == model.ENTERING
               else 'maintenance')
        reason = (f'{why}: host {source.name} is draining; {how} '
                  f'migration to {host.name}, ')
        if preferred is not None:
            reason += (f'the {self.policy.name} policy\'s preferred '
                       f'destination ({_fmt("projected", cpu, ram)})')
        else:
            reason += (f'the least loaded allowed host '
                       f'({_fmt("projected", cpu, ram)}): the '
                       f'{self.policy.name} policy accepts none '
                       f'({_summary(rules)})')
        return option, None, reason

    def _level(self) -> None:
        """Leveling moves, after the violated hosts' (``[drs] level_*``).

        Where load jumps often (the pool's mean ``rise_rate``), a host is
        over its threshold before any reaction, so the hosts nearest it are
        kept level instead: the hottest sends the largest instance that
        leaves the coolest destination no hotter than itself.
        """
        cfg = self.config
        done = {n for n, h in self.hosts.items()
                if not self._level_on(self._pool(h))}
        while (self.snapshot.inflight_total + len(self.moves)
               < cfg.max_concurrent_migrations):
            source = self._level_source(done)
            if source is None:
                return
            done.add(source.name)
            self._level_from(source)

    def _level_on(self, pool) -> bool:
        """Whether a pool's load jumps often enough to level it."""
        return self._rise_rate(pool) >= self.config.level_rise_rate

    def _rise_rate(self, pool) -> float:
        if self._rises is None:
            self._rises = rise_rates(self.hosts, self.config)
        return self._rises.get(pool, 0.0)

    def _level_source(self, done):
        """The hottest host within ``level_band`` of its threshold that may
        still send a migration, or None."""
        cfg = self.config
        limit = max(cfg.max_concurrent_migrations_per_host,
                    cfg.max_concurrent_migrations_per_violated_host)
        best = None
        for name, host in self.hosts.items():
            cpu = self.cpu[name]
            if (name in done or cpu is None
                    or self.barred[name] not in (None, 'violated')
                    or self.busy[name] >= limit
                    or cpu < host.cpu_threshold - cfg.level_band):
                continue
            if best is None or (-cpu, name) < best[0]:
                best = ((-cpu, name), host)
        return best and best[1]

    def _level_from(self, source) -> None:
        """Plan the leveling move off ``source``, if it has one."""
        top = self.cpu[source.name]
        pool = self._pool(source)
        dests = sorted((self.cpu[n], n) for n in self.floors
                       if n != source.name
                       and self._pool(self.hosts[n]) == pool)
        if not dests or top - dests[0][0] <= self.config.level_gap:
            return
        best = None
        for instance in self.by_host.get(source.name, ()):
            load = 100.0 * instance.cpu_cores / source.vcpus
            if (instance.blocked is not None or instance.uuid in self.moved
                    or load < _LEVEL_LEAST):
                continue
            key = (-load, instance.memory_mb, instance.uuid)
            if best is not None and key > best[0]:
                continue
            option = self._level_option(source, instance, top - load, dests)
            if option is not None:
                best = (key, option)
        if best is None:
            return
        option = best[1]
        instance = option.removal.instance
        found = self.candidates(instance, self.view)
        if option.destination.name not in found.allowed:
            option = self._level_option(source, instance,
                                        option.removal.cpu, dests,
                                        set(found.allowed))
            if option is None:
                return
        dest = option.destination.name
        estimate = self._estimate(source, option)
        if estimate is not None and not estimate.pays:
            self.notes.append(
                f'host {source.name}: level, no move: {_COST_BENEFIT} '
                f'(instance {instance.uuid} to {dest}: relief '
                f'{estimate.relief:.2f} <= cost {estimate.cost:.2f} '
                f'core-minutes)')
            return
        reason = (f'level: load jumps {self._rise_rate(pool):.1f} times an '
                  f'hour per host (level_rise_rate '
                  f'{self.config.level_rise_rate:g}); host {source.name} at '
                  f'{top:.1f}% is the hottest within '
                  f'{self.config.level_band:g} points of its threshold, '
                  f'{dest} the coolest destination at '
                  f'{self.cpu[dest]:.1f}%')
        indexed = source.name in self.floors
        if indexed:
            self._leave(source.name)
        self._apply(source, option, found, [], [], reason=reason,
                    goal=model.LEVEL, estimate=estimate)
        if indexed:
            self._enter(source.name)

    def _level_option(self, source, instance, ceiling, dests, allowed=None):
        """The coolest destination (in ``allowed`` if given) that the
        policy accepts and that ``instance`` leaves no hotter than
        ``ceiling``, its source's CPU after the move; None if none."""
        left = self._left(instance)
        for cpu_d, name in dests:
            host = self.hosts[name]
            if cpu_d + 100.0 * instance.cpu_cores / host.vcpus > ceiling:
                return None
            if name in left or (allowed is not None and name not in allowed):
                continue
            cpu, ram = self._project(host, instance.cpu_cores,
                                     instance.memory_mb)
            if self.policy.destination(host, cpu, ram, self.config)[0] is None:
                return base.Option(self._removal(source, instance), host,
                                   cpu, ram, base.pressure(host, cpu, ram))
        return None

    def _limit(self, source: str, per_host: int | None = None,
               rule: str = 'limit:per-host', drain: bool = False
               ) -> str | None:
        """The limit holding back a move off ``source``, or None.

        ``per_host``: the source's own cap (default: a violated host's);
        a drain's moves count in the total but not in a period's budget,
        which is balancing's, and leave a slot of the total to each
        violated host, up to that budget (at least one slot to drains):
        an overloaded host never waits for a drain to finish.
        """
        cfg = self.config
        if not drain and (len(self.moves) - self.drain_moves
                          >= cfg.max_migrations_per_period):
            return 'limit:per-period'
        busy = self.snapshot.inflight_total + len(self.moves)
        total = cfg.max_concurrent_migrations
        if busy >= total:
            return 'limit:total'
        if drain and busy >= total - min(cfg.max_migrations_per_period,
                                         self.violated, total - 1):
            return _DRAIN_SHARE
        if per_host is None:
            per_host = max(cfg.max_concurrent_migrations_per_host,
                           cfg.max_concurrent_migrations_per_violated_host)
        if self.busy[source] >= per_host:
            return rule
        return None

    def _removal(self, source, instance) -> base.Removal:
        cpu, ram = self.cpu[source.name], self.ram[source.name]
        if cpu is None:  # A host in maintenance empties, sampled or not.
            cpu = 0.0
        cpu_after = max(cpu - 100.0 * instance.cpu_cores / source.vcpus, 0.0)
        ram_after = None if ram is None else max(
            ram - 100.0 * instance.memory_mb / source.memory_mb, 0.0)
        return base.Removal(instance, cpu_after, ram_after,
                            base.pressure(source, cpu, ram),
                            base.pressure(source, cpu_after, ram_after))

    def _plan_host(self, source):
        planned = 0
        while True:
            head = (f'host {source.name}: violated, no move' if not planned
                    else f'host {source.name}: still projected over after '
                         f'{planned} move(s), no further move')
            limit = self._limit(source.name)
            if limit:
                self.notes.append(f'{head}: {limit}')
                return
            instances = self.by_host.get(source.name, ())
            movable = [i for i in instances
                       if i.blocked is None and i.uuid not in self.moved]
            if not movable:
                blocked = collections.Counter(
                    i.blocked for i in instances if i.blocked is not None)
                self.notes.append(
                    f'{head}: no movable instance'
                    + (f' (blocked: {_summary(blocked)})' if blocked else ''))
                return
            option = self._choose(source, movable, head)
            if option is None:
                return
            planned += 1
            if (not self.policy.until_cured
                    or base.pressure(source, self.cpu[source.name],
                                     self.ram[source.name]) <= 0):
                return

    def _choose(self, source, movable, head):
        """Score the policy's best-ranked instances; plan the winner.

        When the margin refused every destination of every instance and
        the pool is warm (its graded margin is below ``margin``), a policy
        that ``grades`` scores them again inside the margin
        (:meth:`_inside`): a warm pool must not turn the DRS off.
        """
        cfg, policy = self.config, self.policy
        removals = [self._removal(source, i) for i in movable]
        ranked = policy.rank(removals, cfg)[:cfg.max_instances_evaluated]
        scored, failed = self._score(source, ranked)
        inside = (not scored and policy.grades
                  and self._graded(self._pool(source)) < cfg.margin
                  and any(rules[base.MARGIN] for _, rules in failed))
        detail = _failures(failed)
        if inside:
            scored, failed = self._score(source, ranked, inside=True)
            detail += f'; {_INSIDE}: {_failures(failed)}'
        if not scored:
            self.notes.append(f'{head}: {detail or "no instance ranked"}')
            return None
        _, option, found, estimate = scored[0]
        self._apply(source, option, found, scored, failed,
                    estimate=estimate, inside=inside)
        return option

    def _score(self, source, ranked, inside=False):
        """``(scored, failed)``: each ranked removal's best option, with its
        key, candidates and estimate, best first; or the rules refusing it.

        Each instance is first searched against every indexed host; only
        when some host passes the planner's rules is ``candidates()`` (Nova's
        filters live, the costly part) asked, so a saturated cluster costs
        no filter runs.
        """
        cfg, policy = self.config, self.policy
        scored, failed, unreachable = [], [], None
        for removal in ranked:
            bound = policy.bound(removal, cfg)
            if scored and bound is not None and bound > scored[0][0]:
                break
            uuid = removal.instance.uuid
            rule = policy.hopeless(removal, cfg)
            if rule:
                failed.append((uuid, collections.Counter({rule: 1})))
                continue
            option, refused = self._search(source, removal, None, inside)
            if option is None:
                if unreachable is None:
                    unreachable = self._unreachable(source, inside)
                failed.append((uuid, unreachable + refused))
                continue
            found = self.candidates(removal.instance, self.view)
            allowed = set(found.allowed)
            if option.destination.name not in allowed:
                option, _ = self._search(source, removal, allowed, inside)
            rule = option and policy.refuse(option, cfg)
            if option is None:
                failed.append((uuid, self._explain(source, removal, found,
                                                   inside)))
                continue
            if rule:
                failed.append((uuid, collections.Counter({rule: 1})))
                continue
            estimate = self._estimate(source, option)
            if estimate is not None and not estimate.pays:
                failed.append((uuid, collections.Counter({
                    _COST_BENEFIT: 1})))
                continue
            scored.append((policy.key(option, cfg), option, found, estimate))
            scored.sort(key=lambda item: item[0])
        return scored, failed

    def _estimate(self, source, option) -> benefit.Estimate | None:
        """What ``option`` is expected to buy and cost, at the working
        projection; None when the policy or ``benefit_horizon`` turns the
        rule off."""
        if not self.policy.weighs_benefit or self.config.benefit_horizon <= 0:
            return None
        instance = option.removal.instance
        dest = option.destination
        expected, deviation = self.snapshot.trends.get(instance.uuid,
                                                       (None, None))
        return benefit.estimate(
            self._load(source), source.vcpus, source.cpu_threshold,
            self._load(dest), dest.vcpus, dest.cpu_threshold,
            benefit.Load(instance.cpu_cores,
                         _known(expected, instance.cpu_cores),
                         deviation or 0.0),
            instance.memory_mb, self.config,
            ram_relief=_over(self.ram[source.name], option.removal.ram,
                             source.ram_threshold))

    def _load(self, host) -> benefit.Load:
        """A host's load at the working projection: the moves planned so
        far shift its expected level as they shift its current one."""
        current = self.cpu[host.name]
        shift = current - (host.cpu_percent or 0.0)
        return benefit.Load(
            current, _known(host.cpu_expected, host.cpu_percent) + shift,
            host.cpu_deviation or 0.0)

    def _search(self, source, removal, allowed, inside):
        """The policy's preferred destination for one removal among the
        indexed hosts of the source's pool (and in ``allowed`` if given);
        ``inside``: among those and the hosts resting at the margin, judged
        by :meth:`_inside`.

        Returns ``(option or None, Counter of rules refusing the hosts
        scanned)``.  Scans in floor order and stops at the first host whose
        floor cannot beat the best projected score (inside the margin,
        every host: a resting host has no floor).
        """
        cores = removal.instance.cpu_cores
        memory = removal.instance.memory_mb
        decide = (functools.partial(self._inside, source) if inside
                  else self._outside)
        hosts = self.hosts
        pool = self._pool(source)
        order = (self._inside_hosts(pool) if inside
                 else self.order.get(pool, ()))
        left = self._left(removal.instance)
        refused = collections.Counter()
        best = None
        for floor, name in order:
            if (best is not None and floor is not None
                    and (floor, name) > best[:2]):
                break
            if allowed is not None and name not in allowed:
                continue
            if name in left:
                refused[left[name]] += 1
                continue
            host = hosts[name]
            cpu, ram = self._project(host, cores, memory)
            rule, score = decide(host, cpu, ram)
            if rule is not None:
                refused[rule] += 1
            elif best is None or (score, name) < best[:2]:
                best = (score, name, cpu, ram)
        if best is None:
            return None, refused
        _, name, cpu, ram = best
        host = hosts[name]
        return base.Option(removal, host, cpu, ram,
                           base.pressure(host, cpu, ram)), refused

    def _outside(self, host, cpu, ram):
        """``(rule, score)`` of a destination at its projected load."""
        return self.policy.destination(host, cpu, ram, self.config)

    def _inside(self, source, host, cpu, ram):
        """``(rule, score)`` of a destination for a move off ``source``
        inside the margin: judged by the policy with the pool's graded
        margin; but a host the margin refuses is never one that one of the
        source's instances came from within ``no_return_time``, so that no
        pair of hosts trades load both ways inside the margin."""
        rule, _ = self.policy.destination(host, cpu, ram, self.config)
        if rule not in (None, base.MARGIN):
            return rule, 0.0
        if rule and host.name in self.came_from[source.name]:
            return _CAME_FROM, 0.0
        return self.policy.inside(host, cpu, ram, self.config,
                                  self._graded(self._pool(host)))

    def _graded(self, pool) -> float:
        """The margin a destination keeps in a move inside the margin: the
        pool's mean room under ``threshold - margin``, within 0 and
        ``margin``.  A cool pool keeps the whole margin; one whose hosts
        sit at the margin on average, or past it, none: a destination then
        only has to stay under its threshold."""
        margin = self.config.margin
        return min(max(self.room.get(pool, margin), 0.0), margin)

    def _inside_hosts(self, pool) -> list:
        """``(None, name)`` of the pool's destinations inside the margin:
        the indexed ones and those resting at the margin with a free slot,
        by name."""
        per_host = self.config.max_concurrent_migrations_per_host
        names = [name for _, name in self.order.get(pool, ())]
        names += [name for name, rule in self.resting.items()
                  if rule == base.MARGIN and self.busy[name] < per_host
                  and self._pool(self.hosts[name]) == pool]
        return [(None, name) for name in sorted(names)]

    def _left(self, instance) -> dict:
        """Hosts barred for this instance, with the rule barring each: the
        ones Nova refused it at start lately, and the ones it left lately
        (the no-return rail)."""
        barred = dict.fromkeys(instance.refused, _REFUSED)
        if self.policy.no_return:
            barred.update(dict.fromkeys(instance.left, 'no-return'))
        return barred

    def _unreachable(self, source, inside):
        """Per rule, the hosts refused for any instance of ``source``: all
        but the hosts of its pool that ``_search`` scans and counts.

        Cached per pool until the next planned move changes a host."""
        pool = self._pool(source)
        counts = self._unreachable_by_pool.get((pool, inside))
        if counts is None:
            per_host = self.config.max_concurrent_migrations_per_host
            counts = collections.Counter()
            for name, host in self.hosts.items():
                rule = self.barred[name] or (
                    'pool' if self._pool(host) != pool
                    else self.resting.get(name))
                if inside and rule == base.MARGIN:
                    rule = (None if self.busy[name] < per_host
                            else 'limit:per-host')
                if rule:
                    counts[rule] += 1
            self._unreachable_by_pool[pool, inside] = counts
        return counts - collections.Counter({self.barred[source.name]: 1})

    def _explain(self, source, removal, found, inside, record=None):
        """Count, per rule, the hosts refused for one removal (the filters'
        rejections included); append a Rejection per planner refusal to
        ``record`` when given; ``inside``: judged inside the margin.  Hot
        when many moves are planned: locals."""
        instance = removal.instance
        hosts, barred, resting = self.hosts, self.barred, self.resting
        pool = self._pool(source)
        left = self._left(instance)
        decide = (functools.partial(self._inside, source) if inside
                  else self._outside)
        per_host = self.config.max_concurrent_migrations_per_host
        rules = collections.Counter(r.rule for r in found.rejected)
        for name in found.allowed:
            if name == source.name:
                continue
            rule, detail = barred.get(name, 'unknown-host'), ''
            if rule is None and name in left:
                rule = left[name]
                detail = _BARRED_DETAIL[rule]
            elif rule is None:
                host = hosts[name]
                rule = resting.get(name)
                if inside and rule == base.MARGIN:
                    rule = None if self.busy[name] < per_host else (
                        'limit:per-host')
                if self._pool(host) != pool:
                    rule, detail = 'pool', f'pool {host.pool}'
                elif rule == 'limit:per-host':
                    detail = (f'{self.busy[name]} migrations in flight or '
                              f'planned')
                elif rule is not None:
                    detail = _fmt('already at', self.cpu[name],
                                  self.ram[name]) + self._expected(host)
                else:
                    cpu, ram = self._project(host, instance.cpu_cores,
                                             instance.memory_mb)
                    rule, _ = decide(host, cpu, ram)
                    if rule is None:
                        continue
                    detail = _fmt('projected', cpu, ram) + self._expected(host)
                    if rule == _CAME_FROM:
                        detail += (f' (an instance of {source.name} came '
                                   f'from it)')
                    elif inside:
                        detail += (f' (graded margin '
                                   f'{self._graded(pool):.1f} points)')
            rules[rule] += 1
            if record is not None:
                record.append(model.Rejection(name, rule, detail))
        return rules

    def _expected(self, host) -> str:
        """Why a refused host is judged above its load, for the record."""
        if not self.lag[host.name]:
            return ''
        return (f' (expected load {host.cpu_expected:.1f}% > current '
                f'{host.cpu_percent:.1f}%)')

    def _inside_reason(self, option) -> str:
        """Why a move was made inside the margin, with the numbers."""
        host, cfg = option.destination, self.config
        pool = self._pool(host)
        margin, room = self._graded(pool), self.room[pool]
        ram = option.destination_ram
        warm = (f'{room:.1f} points of room under' if room >= 0
                else f'{-room:.1f} points past')
        return (f'; {_INSIDE}: no allowed destination keeps the margin of '
                f'{cfg.margin:g} points, and the pool is warm (its hosts '
                f'average {warm} threshold - margin), so the margin is '
                f'graded to {margin:.1f}: {host.name} ends '
                f'{_fmt("at", option.destination_cpu, ram)}, under '
                f'{host.cpu_threshold - margin:.1f}%'
                + ('' if ram is None
                   else f' and {host.ram_threshold - margin:.1f}%'))

    def _apply(self, source, option, found, scored, failed, reason=None,
               goal=model.BALANCE, estimate=None, inside=False):
        removal = option.removal
        instance = removal.instance
        dest = option.destination.name
        rejected = list(found.rejected)
        self._explain(source, removal, found, inside, record=rejected)
        # A second pass may still choose a host outside the margin.
        inside = inside and self._outside(
            option.destination, option.destination_cpu,
            option.destination_ram)[0] == base.MARGIN
        expected = {'source_cpu': removal.cpu,
                    'destination_cpu': option.destination_cpu,
                    'improvement': option.improvement}
        if inside:
            expected.update(inside_margin=True, graded_margin=round(
                self._graded(self._pool(source)), 3))
        if self.cpu[source.name] is not None and goal != model.DRAIN:
            expected['source_cpu_before'] = self.cpu[source.name]
        if estimate is not None:
            expected.update(relief=round(estimate.relief, 3),
                            cost=round(estimate.cost, 3),
                            risk=round(estimate.risk, 3),
                            migration_cost=round(estimate.migration, 3))
        if removal.ram is not None:
            expected['source_ram'] = removal.ram
        if option.destination_ram is not None:
            expected['destination_ram'] = option.destination_ram
        alternatives = [_alternative(o) for _, o, *_ in scored]
        alternatives += [{'instance': uuid, 'rejected': dict(sorted(
            rules.items()))} for uuid, rules in failed]
        self.moves.append(model.Move(
            instance=instance.uuid, source=source.name, destination=dest,
            reason=reason or (f'{self.verdicts[source.name].reason}; '
                              f'{self.policy.describe(option, self.config)}'
                              + (self._inside_reason(option) if inside
                                 else '')),
            expected=expected, alternatives=tuple(alternatives),
            rejected=tuple(rejected), memory_mb=instance.memory_mb,
            goal=goal, migration=instance.migration,
            resources=dict(found.request)))
        if dest in self.floors:
            self._leave(dest)
        else:  # A drain's fallback: a host the policy refuses.
            self.resting.pop(dest, None)
        self.cpu[source.name], self.ram[source.name] = removal.cpu, removal.ram
        self.cpu[dest], self.ram[dest] = self._project(
            option.destination, instance.cpu_cores, instance.memory_mb,
            outlook=False)
        self.busy[source.name] += 1
        self.busy[dest] += 1
        self.drain_moves += goal == model.DRAIN
        self.moved.add(instance.uuid)
        self.view = dataclasses.replace(self.snapshot,
                                        planned=tuple(self.moves))
        self._enter(dest)
        self._unreachable_by_pool.clear()


#: How a note introduces the second pass's refusals (``_choose``).
_INSIDE = 'inside the margin'

#: The rule barring a host from a move inside the margin: one of the
#: source's instances came from it within ``no_return_time``.
_CAME_FROM = 'came-from'

#: The rule refusing a move that buys less relief than it costs.
_COST_BENEFIT = 'cost-benefit'

#: The rule barring a host where Nova's scheduler refused the instance
#: at start lately (``InstanceSnapshot.refused``).
_REFUSED = 'refused-at-start'

#: Why a host is barred for one instance, by rule, for the record.
_BARRED_DETAIL = {
    'no-return': 'the instance left it recently',
    _REFUSED: 'Nova refused this move there at start (no valid host)'}

#: The limit holding a drain move back to leave balancing its share.
_DRAIN_SHARE = 'limit:drain-share'

#: Planner rules that bar a host from balancing but not from a drain.
_DRAIN_DESTINATION = {'automation-off': None}

#: A leveling move moves at least this many points of its source's CPU:
#: less is not worth a live migration.
_LEVEL_LEAST = 2.0


def _over(before: float | None, after: float | None,
          threshold: float) -> float:
    """Points over ``threshold`` taken off by going from ``before`` to
    ``after`` (0 when either is unknown)."""
    if before is None or after is None:
        return 0.0
    return max(before - threshold, 0.0) - max(after - threshold, 0.0)


def _known(value: float | None, default: float | None) -> float:
    """``value``, or ``default`` when it is unknown (0 if both are)."""
    if value is not None:
        return value
    return default or 0.0


def _lag(host: model.HostSnapshot) -> float:
    """Points by which a host's expected CPU exceeds its current CPU."""
    if host.cpu_expected is None or host.cpu_percent is None:
        return 0.0
    return max(0.0, host.cpu_expected - host.cpu_percent)


def _alternative(option: base.Option) -> dict:
    return {'instance': option.removal.instance.uuid,
            'destination': option.destination.name,
            'cpu_cores': option.removal.instance.cpu_cores,
            'memory_mb': option.removal.instance.memory_mb,
            'source_cpu': round(option.removal.cpu, 2),
            'destination_cpu': round(option.destination_cpu, 2),
            'improvement': round(option.improvement, 2)}
