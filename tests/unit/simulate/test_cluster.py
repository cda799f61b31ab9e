"""The cluster model: placement, capacity filters and migration timing."""

import testtools

from nova_drs_scheduler.rebalance import model
from nova_drs_scheduler.simulate import cluster

SMALL = cluster.Flavor('small', 1, 1024)
BIG = cluster.Flavor('big', 4, 4096)


def _vms(*flavors):
    return [cluster.VM(f'vm{i}', i, f) for i, f in enumerate(flavors)]


def _spec(**kwargs):
    values = dict(hosts=2, host_vcpus=4, host_memory_mb=8192,
                  cpu_allocation_ratio=1.0, ram_allocation_ratio=1.0)
    values.update(kwargs)
    return cluster.ClusterSpec(**values)


class PlacementTest(testtools.TestCase):

    def test_spread_alternates_between_equal_hosts(self):
        placed = cluster.Cluster(_spec(), _vms(*[SMALL] * 4))
        self.assertEqual({'host-0': 2, 'host-1': 2},
                         {h: placed.used_vcpus[h] for h in placed.hosts})
        self.assertEqual('host-0', placed.location['vm0'])
        self.assertEqual('host-1', placed.location['vm1'])

    def test_random_is_seeded_and_respects_capacity(self):
        vms = _vms(*[SMALL] * 8)
        first = cluster.Cluster(_spec(placement='random', seed=5), vms)
        again = cluster.Cluster(_spec(placement='random', seed=5), vms)
        self.assertEqual(first.location, again.location)
        self.assertEqual([4, 4], sorted(first.used_vcpus.values()))

    def test_no_room_is_a_clear_error(self):
        error = self.assertRaises(ValueError, cluster.Cluster, _spec(),
                                  _vms(BIG, BIG, SMALL))
        self.assertIn('no host can take vm2', str(error))

    def test_allocation_ratio_allows_overcommit(self):
        placed = cluster.Cluster(_spec(cpu_allocation_ratio=2.0,
                                       host_memory_mb=65536),
                                 _vms(*[BIG] * 4))
        self.assertEqual([8, 8], sorted(placed.used_vcpus.values()))

    def test_rejections_name_the_filter(self):
        placed = cluster.Cluster(_spec(), _vms(BIG))
        core = placed.rejection(_vms(SMALL)[0], 'host-0')
        self.assertEqual(('host-0', 'CoreFilter'), (core.subject, core.rule))
        roomy = cluster.Cluster(
            _spec(cpu_allocation_ratio=4.0, host_memory_mb=6144),
            _vms(BIG, BIG))
        ram = roomy.rejection(_vms(BIG)[0], 'host-0')
        self.assertEqual('RamFilter', ram.rule)
        self.assertIn('8192 MB > 6144 MB allowed', ram.detail)
        self.assertIsNone(roomy.rejection(_vms(SMALL)[0], 'host-0'))

    def test_parse_flavors(self):
        self.assertEqual((cluster.Flavor('a', 1, 512, 0.5),),
                         cluster.parse_flavors('a:1:512:0.5'))
        for bad in ('a:1:512', 'a:x:512:1', 'a:0:512:1', ''):
            self.assertRaises(ValueError, cluster.parse_flavors, bad)


class MigrationTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # 1 GiB is 8 * 1024 * 1.048576 Mbit: at that rate, exactly 1 s.
        self.cluster = cluster.Cluster(
            _spec(bandwidth_mbps=8 * 1024 * 1.048576),
            _vms(cluster.Flavor('one-gib', 1, 1024)))

    def test_duration_from_ram_and_bandwidth(self):
        vm = self.cluster.vms['vm0']
        self.assertAlmostEqual(1.0, self.cluster.duration(vm))

    def test_destination_claimed_at_start_source_released_at_end(self):
        step = (50.0,)
        migration = self.cluster.start_migration('vm0', 'host-1', now=10.0)
        self.assertEqual(('host-0', 11.0), (migration.source, migration.end))
        self.assertEqual(1, self.cluster.used_vcpus['host-0'])
        self.assertEqual(1, self.cluster.used_vcpus['host-1'])
        self.assertEqual({'host-0': 1, 'host-1': 1},
                         self.cluster.inflight_by_host())
        # The load stays on the source while the copy runs.
        self.assertEqual({'host-0': 0.5, 'host-1': 0.0},
                         self.cluster.host_cores(step))
        self.assertEqual([], self.cluster.finish_migrations(10.5))
        self.assertEqual([migration], self.cluster.finish_migrations(11.0))
        self.assertEqual({'host-0': 0.0, 'host-1': 0.5},
                         self.cluster.host_cores(step))
        self.assertEqual(0, self.cluster.used_vcpus['host-0'])
        self.assertEqual({}, self.cluster.inflight)


class CandidatesTest(testtools.TestCase):

    def test_source_excluded_and_full_hosts_rejected(self):
        placed = cluster.Cluster(_spec(hosts=3), _vms(BIG, SMALL, SMALL))
        candidates = cluster.CapacityCandidates(placed)
        source = placed.location['vm1']
        inst = model.InstanceSnapshot('vm1', source, 1, 1024, 0.1)
        found = candidates(inst, None)
        self.assertNotIn(source, found.allowed)
        self.assertEqual([('host-0', 'CoreFilter')],
                         [(r.subject, r.rule) for r in found.rejected])
        self.assertEqual(1, len(found.allowed))
