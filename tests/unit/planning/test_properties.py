"""Properties of every plan, checked on generated snapshots.

The checks recompute loads from the snapshot itself rather than trusting
the plan's ``expected`` figures, so a wrong projection in the planner
fails them.
"""

import collections
import dataclasses
import random

import hypothesis
import testtools
from hypothesis import strategies as st

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import search
from nova_drs_scheduler.planning import working

HOSTS = [f'h{n}' for n in range(8)]
EPSILON = 1e-6


def _maybe(strategy, none_one_in=20):
    """``strategy``, or None about once in ``none_one_in`` draws."""
    return st.integers(1, none_one_in).flatmap(
        lambda n: st.none() if n == 1 else strategy)


_PERCENT = st.one_of(st.integers(0, 50), st.integers(0, 50),
                     st.integers(50, 100)).map(float)
_HOT = st.one_of(_PERCENT, st.integers(85, 100).map(float))


@st.composite
def snapshots(draw, policies=('seed', 'balanced'), hot=False):
    """Small clusters shaped like real ones (whole percents, common sizes),
    so that a good share of examples have violated hosts and moves;
    ``hot``: every host usually hot (a cluster at its peak)."""
    names = HOSTS[:draw(st.integers(2, len(HOSTS)))]
    stabilization = draw(st.integers(1, 3))
    hosts = {}
    for name in names:
        # The first host is usually hot, so most examples have work to do.
        cpu = draw(_maybe(_HOT if hot or name == names[0] else _PERCENT))
        contention = draw(_maybe(st.sampled_from([0.0, 2.0, 15.0]),
                                 none_one_in=2))
        if hot and name == names[0]:  # At 100 %, often far past it.
            cpu, contention = 100.0, draw(st.sampled_from([0.0, 15.0, 30.0]))
        ram = draw(_maybe(_PERCENT, none_one_in=5))
        cpu_threshold = draw(st.sampled_from([60.0, 80.0, 90.0]))
        ram_threshold = draw(st.sampled_from([70.0, 90.0, 100.0]))
        over = cpu is not None and metrics.is_over(cpu, ram, cpu_threshold,
                                                   ram_threshold)
        hosts[name] = model.HostSnapshot(
            name=name, vcpus=draw(st.sampled_from([4, 8, 16, 32])),
            memory_mb=draw(st.sampled_from([16000, 32000, 64000])),
            cpu_percent=cpu, ram_percent=ram,
            # As the windows count: only a host over its threshold has one.
            counter=draw(st.one_of(st.integers(1, 6),
                                   st.just(stabilization))) if over else 0,
            pool=draw(st.sampled_from([None, 'A', 'B'])),
            cpu_threshold=cpu_threshold, ram_threshold=ram_threshold,
            schedulable=draw(st.integers(0, 9)) > 0,
            excluded=draw(st.integers(0, 9)) == 0,
            cpu_deviation=draw(_maybe(st.integers(0, 4).map(float),
                                      none_one_in=2)),
            # Contention measured on half the hosts, now and then far past
            # the CPUs (the search's last stage).
            cpu_contention=contention)
    instances = []
    for n in range(draw(st.integers(0, 30) | st.integers(8, 30))):
        host = draw(st.sampled_from(names[:3]) | st.sampled_from(names))
        # Now and then an instance that moved lately (no-return).
        left = draw(st.lists(st.sampled_from(names), max_size=2)
                    if draw(st.integers(0, 4)) == 0 else st.just([]))
        instances.append(model.InstanceSnapshot(
            uuid=f'i{n:02d}', host=host, vcpus=draw(st.integers(1, 8)),
            memory_mb=draw(st.sampled_from([512, 1024, 2048, 4096, 8192])),
            cpu_cores=draw(st.integers(0, 40)) / 10,
            blocked=draw(st.sampled_from([None, None, None, 'cooldown'])),
            left=tuple(sorted(set(left) - {host}))))
    config = model.PlannerConfig(
        policy=draw(st.sampled_from(policies)),
        mode=draw(st.sampled_from(['global', 'aggregate'])),
        unaggregated_hosts=draw(st.sampled_from(['ignore', 'pool'])),
        stabilization=stabilization,
        margin=float(draw(st.integers(0, 25))),
        min_improvement=float(draw(st.integers(0, 10))),
        cure_below_min_improvement=draw(st.booleans()),
        max_migrations_per_period=draw(st.integers(1, 4)),
        max_concurrent_migrations_per_host=draw(st.integers(1, 2)),
        max_concurrent_migrations_per_violated_host=draw(st.integers(0, 3)),
        max_concurrent_migrations=draw(st.integers(1, 6)),
        max_instances_evaluated=draw(st.integers(1, 8)))
    inflight = {name: draw(st.integers(0, 2)) for name in names
                if draw(st.integers(0, 3)) == 0}
    return model.Snapshot(hosts=hosts, instances=tuple(instances),
                          config=config, inflight_by_host=inflight,
                          inflight_total=draw(st.sampled_from([0, 0, 1, 3])))


def filters(seed):
    """A deterministic candidates callback refusing a pseudo-random third
    of the hosts for each instance, as Nova's filters might."""
    def candidates(instance, snap):
        chooser = random.Random(f'{seed}-{instance.uuid}')
        allowed, rejected = [], []
        for name in sorted(snap.hosts):
            if name == instance.host:
                continue
            if chooser.random() < 1 / 3:
                rejected.append(model.Rejection(name, 'FakeFilter'))
            else:
                allowed.append(name)
        return model.Candidates(allowed=allowed, rejected=rejected)
    return candidates


def replay(snap, plan):
    """Yield (move, instance, source, destination, loads before, loads
    after) applying the plan's moves in order to the snapshot's loads."""
    cpu = {n: h.cpu_percent for n, h in snap.hosts.items()}
    ram = {n: h.ram_percent for n, h in snap.hosts.items()}
    by_uuid = {i.uuid: i for i in snap.instances}
    for move in plan.moves:
        inst = by_uuid[move.instance]
        src, dst = snap.hosts[move.source], snap.hosts[move.destination]
        before = {n: (cpu[n], ram[n]) for n in (src.name, dst.name)}
        cpu[src.name] = max(cpu[src.name] - 100 * inst.cpu_cores / src.vcpus,
                            0)
        cpu[dst.name] += 100 * inst.cpu_cores / dst.vcpus
        for host, sign in ((src, -1), (dst, 1)):
            if ram[host.name] is not None:
                ram[host.name] = max(
                    ram[host.name] + sign * 100 * inst.memory_mb
                    / host.memory_mb, 0)
        after = {n: (cpu[n], ram[n]) for n in (src.name, dst.name)}
        yield move, inst, src, dst, before, after


def advance(snap, plan, drift):
    """The next period: the plan's moves done (each instance remembering
    the host it left), every host's CPU drifted by ``drift`` points from
    its projection, and its counter counted again."""
    loads = {}
    for *_, after in replay(snap, plan):
        loads.update(after)
    moved = {m.instance: m for m in plan.moves}
    instances = tuple(
        dataclasses.replace(i, host=moved[i.uuid].destination,
                            left=i.left + (i.host,))
        if i.uuid in moved else i for i in snap.instances)
    hosts = {}
    for (name, host), points in zip(snap.hosts.items(), drift,
                                    strict=False):
        cpu, ram = loads.get(name, (host.cpu_percent, host.ram_percent))
        if cpu is not None:
            cpu = float(min(max(cpu + points, 0), 100))
        over = cpu is not None and metrics.is_over(
            cpu, ram, host.cpu_threshold, host.ram_threshold)
        hosts[name] = dataclasses.replace(
            host, cpu_percent=cpu, ram_percent=ram,
            counter=host.counter + 1 if over else 0)
    return dataclasses.replace(snap, hosts=hosts, instances=instances)


def came_from(snap):
    """Host -> the hosts its instances left within no_return_time."""
    came = collections.defaultdict(set)
    for inst in snap.instances:
        came[inst.host].update(inst.left)
    return came


def worst(host, cpu, ram):
    excess = cpu - host.cpu_threshold
    return excess if ram is None else max(excess, ram - host.ram_threshold)


SETTINGS = hypothesis.settings(max_examples=200, deadline=None)


class PlanPropertiesTest(testtools.TestCase):

    @SETTINGS
    @hypothesis.given(snapshots(policies=['balanced']), st.integers(0, 3))
    def test_destinations_keep_the_margin_or_stay_under_inside_it(
            self, snap, seed):
        self._destinations_keep_their_rails(snap, seed)

    @SETTINGS
    @hypothesis.given(snapshots(policies=['balanced'], hot=True),
                      st.integers(0, 3))
    def test_at_a_peak_destinations_stay_clear_of_their_cpus(self, snap,
                                                             seed):
        self._destinations_keep_their_rails(snap, seed)

    def _destinations_keep_their_rails(self, snap, seed):
        cfg = snap.config
        plan = planner.plan(snap, filters(seed))
        room = working.pool_room(snap.hosts, cfg)
        for move, _, src, dst, before, after in replay(snap, plan):
            cpu, ram = after[dst.name]
            if not move.expected.get('inside_margin'):
                self.assertLessEqual(cpu, dst.cpu_threshold - cfg.margin
                                     + EPSILON)
                if ram is not None:
                    self.assertLessEqual(
                        ram, dst.ram_threshold - cfg.margin + EPSILON)
                continue
            self.assertTrue(
                cpu > dst.cpu_threshold - cfg.margin + EPSILON
                or (ram is not None
                    and ram > dst.ram_threshold - cfg.margin + EPSILON))
            if move.expected.get('past_threshold'):
                # Past the threshold: off a host far past its CPUs, onto one
                # not starved that stays clear of its CPUs and under its
                # RAM threshold.
                self.assertGreaterEqual(
                    before[src.name][0] + (src.cpu_contention or 0.0),
                    search.PAST_DEMAND - EPSILON)
                self.assertFalse(dst.starved)
                self.assertLess(cpu, 100.0 - cfg.margin + EPSILON)
                if ram is not None:
                    self.assertLess(ram, dst.ram_threshold + EPSILON)
                self.assertIn('past the threshold', move.reason)
                continue
            # Inside the margin: past it, off a starved host or in a warm
            # pool, and under the threshold by more than the pool's graded
            # margin (none off a starved host).
            pool = src.pool if cfg.mode == 'aggregate' else None
            graded = (0.0 if src.starved
                      else min(max(room[pool], 0.0), cfg.margin))
            self.assertAlmostEqual(graded, move.expected['graded_margin'],
                                   places=3)
            self.assertLess(graded, cfg.margin)
            self.assertLess(cpu, dst.cpu_threshold - graded + EPSILON)
            if ram is not None:
                self.assertLess(ram, dst.ram_threshold - graded + EPSILON)
            self.assertIn('inside the margin', move.reason)

    @SETTINGS
    @hypothesis.given(st.one_of(snapshots(policies=['balanced']),
                                snapshots(policies=['balanced'], hot=True)),
                      st.integers(0, 3))
    def test_no_return_and_no_load_back_inside_the_margin(self, snap, seed):
        plan = planner.plan(snap, filters(seed))
        came = came_from(snap)
        for move, inst, src, dst, _, _ in replay(snap, plan):
            self.assertNotIn(dst.name, inst.left)
            if move.expected.get('inside_margin'):
                self.assertNotIn(dst.name, came[src.name])
            came[dst.name].update(inst.left + (src.name,))

    @SETTINGS
    @hypothesis.given(snapshots(policies=['balanced']), st.integers(0, 3),
                      st.lists(st.lists(st.integers(-15, 15),
                                        min_size=len(HOSTS),
                                        max_size=len(HOSTS)),
                               min_size=2, max_size=6))
    def test_no_ping_pong_over_periods(self, snap, seed, drifts):
        # Periods closer together than no_return_time: each plan's moves
        # complete and loads drift.  No instance goes back to a host it
        # left, and no move inside the margin sends load back to a host it
        # came from while it is still there.
        candidates = filters(seed)
        for drift in drifts:
            plan = planner.plan(snap, candidates)
            came = came_from(snap)
            for move, inst, src, dst, _, _ in replay(snap, plan):
                self.assertNotIn(dst.name, inst.left)
                if move.expected.get('inside_margin'):
                    self.assertNotIn(dst.name, came[src.name])
                came[dst.name].update(inst.left + (src.name,))
            snap = advance(snap, plan, drift)

    @SETTINGS
    @hypothesis.given(snapshots(policies=['balanced']), st.integers(0, 3))
    def test_balanced_moves_improve_by_min_improvement(self, snap, seed):
        plan = planner.plan(snap, filters(seed))
        for _, _, src, dst, before, after in replay(snap, plan):
            gain = worst(src, *before[src.name]) - max(
                worst(src, *after[src.name]), worst(dst, *after[dst.name]))
            if (snap.config.cure_below_min_improvement
                    and worst(src, *after[src.name]) <= EPSILON):
                continue   # a cure is worth any gain
            self.assertGreaterEqual(
                gain, snap.config.min_improvement - EPSILON)

    @SETTINGS
    @hypothesis.given(snapshots(), st.integers(0, 3))
    def test_limits_are_never_exceeded(self, snap, seed):
        cfg = snap.config
        plan = planner.plan(snap, filters(seed))
        self.assertLessEqual(len(plan.moves), cfg.max_migrations_per_period)
        if plan.moves:
            self.assertLessEqual(snap.inflight_total + len(plan.moves),
                                 cfg.max_concurrent_migrations)
        touched = {}
        for move in plan.moves:
            for name in (move.source, move.destination):
                touched[name] = touched.get(name, 0) + 1
        sources = {move.source for move in plan.moves}
        for name, count in touched.items():
            # A violated host is never a destination; as a source it may
            # send up to the violated-host limit when that is higher.
            limit = cfg.max_concurrent_migrations_per_host
            if name in sources:
                limit = max(limit,
                            cfg.max_concurrent_migrations_per_violated_host)
            self.assertLessEqual(snap.inflight_by_host.get(name, 0) + count,
                                 limit)

    @SETTINGS
    @hypothesis.given(snapshots(), st.integers(0, 3))
    def test_moves_are_legal(self, snap, seed):
        cfg = snap.config
        candidates = filters(seed)
        plan = planner.plan(snap, candidates)
        moved = [m.instance for m in plan.moves]
        self.assertEqual(len(moved), len(set(moved)))
        for _, inst, src, dst, _, _ in replay(snap, plan):
            self.assertIsNone(inst.blocked)
            self.assertEqual(inst.host, src.name)
            self.assertIn(dst.name, candidates(inst, snap).allowed)
            self.assertTrue(metrics.is_violated(src.counter,
                                                cfg.stabilization))
            self.assertIsNotNone(src.cpu_percent)
            self.assertFalse(src.excluded)
            self.assertTrue(dst.schedulable)
            self.assertFalse(dst.excluded)
            self.assertIsNotNone(dst.cpu_percent)
            self.assertFalse(metrics.is_violated(dst.counter,
                                                 cfg.stabilization))
            if cfg.mode == 'aggregate':
                self.assertEqual(src.pool, dst.pool)
                if cfg.unaggregated_hosts == 'ignore':
                    self.assertIsNotNone(dst.pool)

    @SETTINGS
    @hypothesis.given(snapshots(), st.integers(0, 3))
    def test_every_violated_host_is_explained(self, snap, seed):
        plan = planner.plan(snap, filters(seed))
        sources = {m.source for m in plan.moves}
        for verdict in plan.hosts:
            self.assertTrue(verdict.reason)
            if verdict.violated and verdict.host not in sources:
                self.assertTrue(
                    any(n.startswith(f'host {verdict.host}: ')
                        for n in plan.notes), plan.notes)

    @SETTINGS
    @hypothesis.given(snapshots(), st.integers(0, 3), st.randoms())
    def test_planning_is_deterministic(self, snap, seed, shuffler):
        first = planner.plan(snap, filters(seed)).to_dict()
        instances = list(snap.instances)
        shuffler.shuffle(instances)
        names = list(snap.hosts)
        shuffler.shuffle(names)
        shuffled = model.Snapshot(
            hosts={n: snap.hosts[n] for n in names},
            instances=tuple(instances), config=snap.config,
            inflight_by_host=snap.inflight_by_host,
            inflight_total=snap.inflight_total)
        self.assertEqual(first, planner.plan(snap, filters(seed)).to_dict())
        self.assertEqual(first,
                         planner.plan(shuffled, filters(seed)).to_dict())
