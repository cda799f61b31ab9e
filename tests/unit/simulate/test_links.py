"""Copies over the hosts' shared links, behind Nova's queue per source."""

import testtools

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.simulate import links

#: Mbit/s at which 1 GiB copies in exactly 1 s.
GIB_PER_SECOND = 8 * 1024 * 1.048576


def _idle(migration):
    return 0.0


class LinksTest(testtools.TestCase):

    def _links(self, per_source=1, dirty=0.0):
        return links.Links(GIB_PER_SECOND, dirty, per_source)

    def _add(self, network, vm, source, destination, at, cores=0.0,
             memory_mb=1024):
        migration = links.Migration(vm, source, destination, memory_mb, at)
        network.add(migration, cores)
        return migration

    def test_alone_a_copy_takes_the_planners_estimate(self):
        network = self._links(dirty=64.0)
        migration = self._add(network, 'a', 'h1', 'h2', 5.0, cores=3.0,
                              memory_mb=16384)
        self.assertEqual([migration], network.advance(100.0, _idle))
        self.assertAlmostEqual(
            benefit.migration_seconds(16384, 3.0, GIB_PER_SECOND, 64.0),
            migration.copy_seconds)

    def test_two_copies_sharing_a_source_link_take_twice_as_long(self):
        network = self._links(per_source=2)
        first = self._add(network, 'a', 'h1', 'h2', 0.0)
        second = self._add(network, 'b', 'h1', 'h3', 0.0)
        self.assertEqual([first, second], network.advance(10.0, _idle))
        self.assertEqual((2.0, 2.0), (first.end, second.end))

    def test_a_copy_into_a_host_that_sends_shares_its_link(self):
        network = self._links()
        out = self._add(network, 'a', 'h1', 'h2', 0.0)
        self.assertEqual([], network.advance(0.5, _idle))
        into = self._add(network, 'b', 'h3', 'h1', 0.5)
        # From 0.5 s both run at half the rate: the first's last half
        # takes 1 s; the second has half done then, and the rest alone.
        self.assertEqual([out, into], network.advance(10.0, _idle))
        self.assertEqual((1.5, 2.0), (out.end, into.end))

    def test_a_busy_instance_is_slowed_more_than_twice(self):
        # A busy core dirties a quarter of the full rate: 4/3 s alone;
        # at half the rate it dirties half of it: 2 s per half-rate
        # copy, 4 s.
        network = self._links(per_source=2, dirty=256.0)
        busy = self._add(network, 'a', 'h1', 'h2', 0.0, cores=1.0)
        idle = self._add(network, 'b', 'h1', 'h3', 0.0)
        self.assertEqual([idle], network.advance(2.0, _idle))
        self.assertEqual((2.0, None), (idle.end, busy.end))
        # Half done at 2 s: the other half alone at 4/3 s for the whole.
        network.advance(10.0, _idle)
        self.assertAlmostEqual(2.0 + 2.0 / 3.0, busy.end)

    def test_the_busier_link_sets_the_share(self):
        # h1 sends two copies and h2 receives two: the copy from h4 into
        # h2 runs at half the rate though h4's link is free.
        network = self._links(per_source=2)
        self._add(network, 'a', 'h1', 'h2', 0.0)
        self._add(network, 'b', 'h1', 'h3', 0.0)
        into = self._add(network, 'c', 'h4', 'h2', 0.0)
        self.assertAlmostEqual(2.0, network.next_end())
        network.advance(10.0, _idle)
        self.assertEqual(2.0, into.end)

    def test_a_second_copy_from_a_source_waits_in_its_queue(self):
        network = self._links()
        first = self._add(network, 'a', 'h1', 'h2', 0.0)
        second = self._add(network, 'b', 'h1', 'h3', 0.0, cores=1.0)
        self.assertIsNone(second.copying)
        loads = []
        network.advance(10.0, lambda m: loads.append(m.vm) or 0.0)
        # It copies when the first ends, at its load then.
        self.assertEqual((1.0, 1.0, 2.0, ['b']),
                         (first.end, second.copying, second.end, loads))

    def test_no_limit_per_source(self):
        network = self._links(per_source=0)
        self._add(network, 'a', 'h1', 'h2', 0.0)
        second = self._add(network, 'b', 'h1', 'h3', 0.0)
        self.assertEqual(0.0, second.copying)
