"""The cluster model: placement, capacity filters and migration timing."""

import dataclasses
import types

import testtools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cluster

SMALL = cluster.Flavor('small', 1, 1024)
BIG = cluster.Flavor('big', 4, 4096)
#: A trace row where every VM is idle: a migration copies its RAM once.
IDLE = (0.0,) * 8


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

    def test_spread_weighs_free_ram_and_cpu_and_keeps_refusing_hosts(self):
        # Hosts of 4 vCPUs and 4096 MB; a host's score is its free share of
        # RAM plus its free share of vCPUs, the highest first, ties by name.
        placed = cluster.Cluster(
            _spec(hosts=3, host_memory_mb=4096),
            _vms(cluster.Flavor('a', 1, 512),     # all 2.0: host-0, 1.625
                 cluster.Flavor('b', 3, 1024),    # host-1, now 1.0
                 cluster.Flavor('c', 1, 3072),    # host-2, now 1.0
                 cluster.Flavor('d', 1, 2048),    # host-0 (1.625): 0.875
                 # host-1 (1.0, first by name) refuses 3 + 2 vCPUs;
                 # host-2 (1.0) takes it: 0.25
                 cluster.Flavor('e', 2, 1024),
                 cluster.Flavor('f', 1, 1024)))   # host-1 again (1.0)
        self.assertEqual(
            {'vm0': 'host-0', 'vm1': 'host-1', 'vm2': 'host-2',
             'vm3': 'host-0', 'vm4': 'host-2', 'vm5': 'host-1'},
            placed.location)

    def test_placement_compared_by_value(self):
        # As argparse hands it over: equal to the constant, not the object.
        vms = _vms(*[SMALL] * 4)
        for name in ('spread', 'random'):
            parsed = cluster.Cluster(_spec(placement=name.upper().lower()),
                                     vms)
            self.assertEqual(cluster.Cluster(_spec(placement=name),
                                             vms).location,
                             parsed.location)

    def test_host_names_padded_to_the_last(self):
        for hosts, names in ((10, ('host-0', 'host-9')),
                             (11, ('host-00', 'host-10'))):
            placed = cluster.Cluster(_spec(hosts=hosts), [])
            self.assertEqual(names, (placed.hosts[0], placed.hosts[-1]))

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

    def test_limits_scale_with_the_allocation_ratios(self):
        # 8 vCPUs and 6144 MB allowed; 4 + 1 vCPUs, 4096 + 1024 MB held.
        placed = cluster.Cluster(
            _spec(hosts=1, host_memory_mb=4096, cpu_allocation_ratio=2.0,
                  ram_allocation_ratio=1.5), _vms(BIG, SMALL))
        core = placed.rejection(_vms(BIG)[0], 'host-0')
        self.assertEqual(('CoreFilter', '9 vCPUs > 8 allowed'),
                         (core.rule, core.detail))
        ram = placed.rejection(_vms(cluster.Flavor('f', 2, 2048))[0],
                               'host-0')
        self.assertEqual(('RamFilter', '7168 MB > 6144 MB allowed'),
                         (ram.rule, ram.detail))
        # Exactly at both limits still fits.
        self.assertIsNone(placed.rejection(_vms(SMALL)[0], 'host-0'))
        # Of the host's physical RAM, so past 100 % with a ratio above 1.
        self.assertEqual(125.0, placed.memory_percent('host-0'))

    def test_parse_flavors(self):
        self.assertEqual((cluster.Flavor('a', 1, 512, 0.5),
                          cluster.Flavor('b', 2, 1, 1.0)),
                         cluster.parse_flavors('a:1:512:0.5, b:2:1:1,'))
        for bad in ('a:1:512', 'a:x:512:1', 'a:0:512:1', 'a:1:0:1',
                    'a:1:512:0', 'a:1:512:-1', ''):
            self.assertRaises(ValueError, cluster.parse_flavors, bad)

    def test_spec_bounds(self):
        cluster.ClusterSpec(hosts=1, bandwidth_mbps=0.5)
        for bad in (dict(hosts=0), dict(hosts=1, bandwidth_mbps=0),
                    dict(hosts=1, bandwidth_mbps=-1),
                    dict(hosts=1, dirty_mib_per_core=-0.1),
                    dict(hosts=1, placement='packed')):
            self.assertRaises(ValueError, cluster.ClusterSpec, **bad)

    def test_defaults_are_the_benchmarks(self):
        # As the CLI's defaults and its --flavors help say.
        self.assertEqual(
            cluster.ClusterSpec(1, 32, 524288, 8.0, 1.0, 10000.0, 64.0, 1,
                                'spread', 0), cluster.ClusterSpec(hosts=1))
        # The planner's defaults: the migration it costs is the one run.
        planner = model.PlannerConfig()
        self.assertEqual(
            (planner.migration_bandwidth, planner.migration_dirty_rate),
            (cluster.ClusterSpec(hosts=1).bandwidth_mbps,
             cluster.ClusterSpec(hosts=1).dirty_mib_per_core))
        self.assertEqual((cluster.Flavor('m1.small', 1, 2048, 0.4),
                          cluster.Flavor('m1.medium', 2, 4096, 0.35),
                          cluster.Flavor('m1.large', 4, 8192, 0.2),
                          cluster.Flavor('m1.xlarge', 8, 16384, 0.05)),
                         cluster.DEFAULT_FLAVORS)
        self.assertEqual(1.0, cluster.Flavor('a', 1, 512).weight)

    def test_records_are_immutable(self):
        placed = cluster.Cluster(_spec(), _vms(SMALL))
        for record in (placed.spec, placed.vms['vm0']):
            field = dataclasses.fields(record)[0].name
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              record, field, None)

    def test_assign_flavors_by_weight(self):
        names = [f'vm{i}' for i in range(400)]
        flavors = (cluster.Flavor('a', 1, 512, 3.0),
                   cluster.Flavor('b', 1, 512, 1.0))
        vms = cluster.assign_flavors(names, flavors, seed=1)
        self.assertEqual(vms, cluster.assign_flavors(names, flavors, 1))
        self.assertEqual(('vm7', 7), (vms[7].name, vms[7].index))
        # 300 expected, the binomial's standard deviation is under 9.
        self.assertIn(sum(vm.flavor.name == 'a' for vm in vms),
                      range(260, 341))

    def test_hosts_for_load(self):
        # One 1-vCPU and one 2-vCPU VM; hosts of 2 vCPUs at 25 %, so 0.5
        # cores a host.
        vms = _vms(cluster.Flavor('one', 1, 512),
                   cluster.Flavor('two', 2, 512))
        for steps, hosts in (
                (((49, 50), (50, 25)), 2),   # 1.49 + 1.0 cores: 2.49 hosts
                (((51, 50), (50, 25)), 3),   # 1.51 + 1.0: 2.51 hosts
                (((1, 1),), 1)):             # 0.03 cores: still one host
            trace = types.SimpleNamespace(steps=steps)
            self.assertEqual(hosts, cluster.hosts_for_load(vms, trace, 25.0,
                                                           2))


class MigrationTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # 1 GiB is 8 * 1024 * 1.048576 Mbit: at that rate, exactly 1 s.
        self.cluster = cluster.Cluster(
            _spec(bandwidth_mbps=8 * 1024 * 1.048576),
            _vms(cluster.Flavor('one-gib', 1, 1024)))

    def test_duration_from_ram_and_bandwidth(self):
        migration = self.cluster.start_migration('vm0', 'host-1', 0.0, IDLE)
        self.assertAlmostEqual(1.0, self.cluster.next_end())
        self.assertEqual(0.0, migration.copying)
        # 2 GiB at the default 10 Gbit/s: 17179.869184 Mbit.
        default = cluster.Cluster(cluster.ClusterSpec(hosts=2),
                                  _vms(cluster.DEFAULT_FLAVORS[0]))
        default.start_migration('vm0', 'host-1', 0.0, IDLE)
        self.assertAlmostEqual(1.717986918, default.next_end())

    def test_dirty_pages_lengthen_a_busy_instances_copy(self):
        # 1 GiB copies in 1 s; a busy core dirties 256 MiB/s, a quarter of
        # the bandwidth: each round lasts a quarter of the one before,
        # 1 + 1/4 + 1/16 + ... (31 rounds) = 4/3 s.  The load when the
        # copy starts (50 % of 2 vCPUs: one core) sets it.
        busy = cluster.Cluster(
            _spec(bandwidth_mbps=8 * 1024 * 1.048576,
                  dirty_mib_per_core=256.0),
            _vms(cluster.Flavor('one-gib', 2, 1024)))
        migration = busy.start_migration('vm0', 'host-1', 10.0, (50.0,))
        self.assertAlmostEqual(10.0 + 4.0 / 3.0, busy.next_end())
        busy.finish_migrations(20.0, (50.0,))
        self.assertAlmostEqual(4.0 / 3.0, migration.copy_seconds)
        # Two busy cores dirty half the bandwidth: 2 s.
        busy.start_migration('vm0', 'host-0', 20.0, (100.0,))
        self.assertAlmostEqual(22.0, busy.next_end())

    def test_destination_claimed_at_start_source_released_at_end(self):
        step = (50.0,)
        migration = self.cluster.start_migration('vm0', 'host-1', 10.0, IDLE)
        self.assertEqual(('host-0', 10.0, None),
                         (migration.source, migration.copying, migration.end))
        self.assertEqual(1, self.cluster.used_vcpus['host-0'])
        self.assertEqual(1, self.cluster.used_vcpus['host-1'])
        self.assertEqual({'host-0': 1, 'host-1': 1},
                         self.cluster.inflight_by_host())
        # Sampled now, the instance is on its source...
        self.assertEqual({'host-0': 0.5, 'host-1': 0.0},
                         self.cluster.host_cores(step))
        # ... and on its destination too for the time the copy ran in the
        # sampling window: all of it, then half of it.
        self.assertEqual({'host-0': 0.5, 'host-1': 0.5},
                         self.cluster.host_cores(step, 10.0, 10.5))
        self.assertEqual({'host-0': 0.5, 'host-1': 0.25},
                         self.cluster.host_cores(step, 9.5, 10.5))
        self.assertEqual([], self.cluster.finish_migrations(10.5, IDLE))
        self.assertEqual([migration],
                         self.cluster.finish_migrations(11.0, IDLE))
        self.assertEqual(11.0, migration.end)
        self.assertEqual({'host-0': 0.0, 'host-1': 0.5},
                         self.cluster.host_cores(step))
        # Over: on the destination, and on the source for the time the
        # copy ran in the window (0.5 s of 2 s; none of a later window).
        self.assertEqual({'host-0': 0.125, 'host-1': 0.5},
                         self.cluster.host_cores(step, 10.5, 12.5,
                                                 [migration]))
        self.assertEqual({'host-0': 0.0, 'host-1': 0.5},
                         self.cluster.host_cores(step, 11.0, 13.0,
                                                 [migration]))
        self.assertEqual(0, self.cluster.used_vcpus['host-0'])
        self.assertEqual({}, self.cluster.inflight)

    def test_a_queued_migration_holds_its_destination_and_copies_later(self):
        # Nova's default: one outgoing copy per source; host-0 sends vm0
        # and vm3 (1 GiB each), the second waits for the first.
        placed = cluster.Cluster(
            _spec(hosts=3, bandwidth_mbps=8 * 1024 * 1.048576),
            _vms(SMALL, SMALL, SMALL, SMALL))
        first = placed.start_migration('vm0', 'host-1', 0.0, IDLE)
        queued = placed.start_migration('vm3', 'host-2', 0.0, IDLE)
        self.assertEqual((None, 2), (queued.copying,
                                     placed.used_vcpus['host-2']))
        self.assertEqual({'host-0': 2, 'host-1': 1, 'host-2': 1},
                         placed.inflight_by_host())
        # Queued, it loads no destination: host-2 carries its own vm2.
        self.assertEqual(0.5, placed.host_cores((50.0,) * 4, 0.0,
                                                0.5)['host-2'])
        self.assertEqual([first], placed.finish_migrations(1.5, IDLE))
        self.assertEqual((1.0, 2.0), (queued.copying, placed.next_end()))
        self.assertEqual([queued], placed.finish_migrations(2.0, IDLE))

    def test_two_moves_into_one_host(self):
        placed = cluster.Cluster(
            _spec(hosts=3), _vms(SMALL, cluster.Flavor('two', 2, 1536)))
        placed.start_migration('vm0', 'host-2', 0.0, IDLE)
        placed.start_migration('vm1', 'host-2', 0.0, IDLE)
        self.assertEqual({'host-0': 1, 'host-1': 1, 'host-2': 2},
                         placed.inflight_by_host())
        # 1024 + 1536 MB of 8192.
        self.assertEqual(31.25, placed.memory_percent('host-2'))
        # Both copies (under 4 s each on the shared link) are over long
        # before.
        self.assertEqual(2, len(placed.finish_migrations(60.0, IDLE)))
        self.assertEqual({'host-0': 0.0, 'host-1': 0.0, 'host-2': 1.5},
                         placed.host_cores((30.0, 60.0)))   # 0.3 + 2 * 0.6
        self.assertEqual(3, placed.used_vcpus['host-2'])


class CandidatesTest(testtools.TestCase):

    def test_source_neither_allowed_nor_rejected(self):
        # host-0 and host-1 full with a big VM each, host-2 to host-4 with a
        # small one.
        placed = cluster.Cluster(_spec(hosts=5),
                                 _vms(BIG, BIG, SMALL, SMALL, SMALL))
        candidates = cluster.CapacityCandidates(placed)
        # The host's name as the snapshot spells it, a string of its own.
        big = candidates(model.InstanceSnapshot(
            'vm1', f'host-{1}', 4, 4096, 0.1), None)
        self.assertEqual((), big.allowed)
        self.assertEqual([('host-0', 'CoreFilter'), ('host-2', 'CoreFilter'),
                          ('host-3', 'CoreFilter'), ('host-4', 'CoreFilter')],
                         [(r.subject, r.rule) for r in big.rejected])
        small = candidates(model.InstanceSnapshot(
            'vm3', f'host-{3}', 1, 1024, 0.1), None)
        self.assertEqual(('host-2', 'host-4'), small.allowed)
        self.assertEqual(['host-0', 'host-1'],
                         [r.subject for r in small.rejected])


class MaintenanceTest(testtools.TestCase):
    """A host in maintenance has its compute service disabled."""

    def setUp(self):
        super().setUp()
        # vm0 on host-0, vm1 on host-1, vm2 on host-2, vm3 on host-0.
        self.placed = cluster.Cluster(_spec(hosts=3),
                                      _vms(SMALL, SMALL, SMALL, SMALL))

    def test_disabled_host_is_refused_by_the_compute_filter(self):
        self.placed.disabled.add('host-1')
        rejection = self.placed.rejection(self.placed.vms['vm0'], 'host-1')
        self.assertEqual(('host-1', 'ComputeFilter'),
                         (rejection.subject, rejection.rule))
        candidates = cluster.CapacityCandidates(self.placed)(
            model.InstanceSnapshot('vm0', 'host-0', 1, 1024, 0.1), None)
        self.assertEqual(('host-2',), candidates.allowed)
        self.assertEqual([('host-1', 'ComputeFilter')],
                         [(r.subject, r.rule) for r in candidates.rejected])

    def test_scheduler_choice_is_the_most_free_enabled_host(self):
        vm = self.placed.vms['vm0']
        # host-1 and host-2 hold one small VM each: a tie, by name.
        self.assertEqual('host-1', self.placed.scheduler_choice(vm))
        self.placed.start_migration('vm2', 'host-1', 0.0, IDLE)
        self.assertEqual('host-2', self.placed.scheduler_choice(vm))
        self.placed.disabled.add('host-2')
        self.assertEqual('host-1', self.placed.scheduler_choice(vm))

    def test_scheduler_choice_ignores_the_source_and_may_find_none(self):
        self.placed.disabled.update({'host-1', 'host-2'})
        self.assertIsNone(self.placed.scheduler_choice(self.placed.vms['vm0']))

    def test_instances_on_a_host(self):
        self.assertEqual(['vm0', 'vm3'], self.placed.instances_on('host-0'))
        self.placed.start_migration('vm0', 'host-1', 0.0, IDLE)
        self.assertEqual(['vm0', 'vm3'], self.placed.instances_on('host-0'))
        self.assertEqual({'vm0', 'vm3'}, self.placed.residents['host-0'])
        self.placed.finish_migrations(60.0, IDLE)
        self.assertEqual({'host-0': {'vm3'}, 'host-1': {'vm0', 'vm1'},
                          'host-2': {'vm2'}}, self.placed.residents)
        self.assertEqual(('host-00', 'host-10'),
                         cluster.host_names(11)[::10])
