"""How long a drain takes: one link per host, shared by its migrations."""

import testtools

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import drain_time
from nova_drs_scheduler.planning import model
from tests import snapshots as h

#: A link of 100 MiB/s: 1000 MiB cross it in 10 s.
LINK = 100 * benefit.MBIT_PER_MIB
#: A busy core dirties a quarter of the link.
DIRTY = 25.0


def seconds(migrations, concurrency, dirty=DIRTY):
    return drain_time.link_seconds(migrations, concurrency, LINK, dirty)


class LinkTest(testtools.TestCase):

    def test_one_migration_runs_at_the_whole_link(self):
        self.assertAlmostEqual(10.0, seconds([(1000, 0.0)], 1))
        self.assertAlmostEqual(
            benefit.migration_seconds(1000, 1.0, LINK, DIRTY),
            seconds([(1000, 1.0)], 3))

    def test_concurrency_does_not_shorten_idle_migrations(self):
        idle = [(1000, 0.0)] * 4
        for concurrency in (1, 2, 4, 8):
            self.assertAlmostEqual(40.0, seconds(idle, concurrency))

    def test_concurrency_lengthens_busy_ones(self):
        # Each at half the link: its pages are dirtied twice as fast
        # relative to what it sends (ratio 0.5 instead of 0.25).
        busy = [(1000, 1.0)] * 4
        one = seconds(busy, 1)
        self.assertAlmostEqual(4 * 10.0 / 0.75, one, places=3)
        self.assertAlmostEqual(2 * 20.0 / 0.5, seconds(busy, 2), places=3)
        self.assertGreater(seconds(busy, 2), one)

    def test_largest_first_in_waves_each_as_long_as_its_longest(self):
        # (3000, 3000) at half the link: 60 s; then 1000 alone: 10 s.
        # Smallest first would pair 1000 with a 3000 (60 s) and leave the
        # other 3000 alone (30 s).
        self.assertAlmostEqual(
            70.0, seconds([(1000, 0.0), (3000, 0.0), (3000, 0.0)], 2))

    def test_nothing_to_carry(self):
        self.assertEqual(0.0, seconds([], 2))


class DrainSecondsTest(testtools.TestCase):

    def config(self, **kwargs):
        return model.PlannerConfig(**{
            'migration_bandwidth': LINK, 'migration_dirty_rate': DIRTY,
            'max_concurrent_migrations_per_host': 1,
            'drain_max_concurrent_migrations_per_host': 1, **kwargs})

    def moves(self, *pairs):
        return [model.Move(instance=f'i{n}', source=source,
                           destination=destination, reason='', expected={})
                for n, (source, destination) in enumerate(pairs)]

    def instances(self, count, memory_mb=1000):
        return {f'i{n}': h.instance(f'i{n}', 'x', 0.0, memory_mb=memory_mb)
                for n in range(count)}

    def test_the_busiest_link_is_the_source_s(self):
        # m sends two, one after the other; each destination takes one.
        found = drain_time.drain_seconds(
            self.moves(('m', 'a'), ('m', 'b')), self.instances(2),
            self.config())
        self.assertAlmostEqual(20.0, found)

    def test_or_a_destination_two_sources_share(self):
        # Two hosts draining at once, one instance each, into c: each
        # source's link carries 10 s, c's carries both.
        moves = self.moves(('m1', 'c'), ('m2', 'c'))
        self.assertAlmostEqual(20.0, drain_time.drain_seconds(
            moves, self.instances(2), self.config()))
        # c takes both at once, each at half its link: the same 20 s.
        config = self.config(drain_max_concurrent_migrations_per_host=2)
        self.assertEqual(2, config.drain_destination_concurrency)
        self.assertAlmostEqual(20.0, drain_time.drain_seconds(
            moves, self.instances(2), config))

    def test_destinations_take_the_per_host_limit_when_higher(self):
        config = self.config(max_concurrent_migrations_per_host=3,
                             drain_max_concurrent_migrations_per_host=2)
        self.assertEqual(3, config.drain_destination_concurrency)

    def test_no_move(self):
        self.assertEqual(0.0, drain_time.drain_seconds([], {},
                                                       self.config()))
