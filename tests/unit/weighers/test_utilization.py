"""UtilizationWeigher: ordering by projected utilization, multipliers."""

from nova.scheduler import weights

from nova_drs_scheduler.weighers import utilization
from tests.unit import fakes


class UtilizationWeigherTest(fakes.LeanTestCase):

    def setUp(self):
        super().setUp()
        self.handler = weights.HostWeightHandler()
        # Options are read at each call: flags set later still apply.
        self.weigher = utilization.UtilizationWeigher()

    def ranked(self, hosts, request=None):
        weighed = self.handler.get_weighed_objects(
            [self.weigher], hosts,
            request or fakes.spec(vcpus=1, memory_mb=512))
        return [w.obj.host for w in weighed]

    def test_cooler_host_first(self):
        hosts = [fakes.host('busy', cpu=70), fakes.host('cool', cpu=20),
                 fakes.host('mid', cpu=40)]
        self.assertEqual(['cool', 'mid', 'busy'], self.ranked(hosts))

    def test_projection_counts_the_flavor_against_host_size(self):
        # Same measured load; the request weighs more on the small host.
        small = fakes.host('small', cpu=30, vcpus_total=4)
        big = fakes.host('big', cpu=30, vcpus_total=64)
        self.assertEqual(['big', 'small'],
                         self.ranked([small, big], fakes.spec(vcpus=4)))

    def test_ram_is_blended_with_cpu(self):
        low_cpu_full_ram = fakes.host('a', cpu=10, total_usable_ram_mb=4096,
                                      free_ram_mb=512)
        mid_cpu_free_ram = fakes.host('b', cpu=30, total_usable_ram_mb=4096,
                                      free_ram_mb=4096)
        self.assertEqual(['b', 'a'],
                         self.ranked([low_cpu_full_ram, mid_cpu_free_ram]))
        self.flags(ram_utilization_weight=0, group='drs')
        self.assertEqual(['a', 'b'],
                         self.ranked([low_cpu_full_ram, mid_cpu_free_ram]))

    def test_unmeasured_host_ranks_last_by_default(self):
        hosts = [fakes.host('unknown'), fakes.host('busy', cpu=90)]
        self.assertEqual(['busy', 'unknown'], self.ranked(hosts))
        self.flags(unmeasured_cpu_utilization=0, group='drs')
        self.assertEqual(['unknown', 'busy'], self.ranked(hosts))

    def test_negative_multiplier_packs(self):
        self.flags(utilization_weight_multiplier=-1.0, group='drs')
        hosts = [fakes.host('busy', cpu=70), fakes.host('cool', cpu=20)]
        self.assertEqual(['busy', 'cool'], self.ranked(hosts))

    def test_aggregate_multiplier_overrides_config(self):
        weigher = self.weigher
        self.flags(utilization_weight_multiplier=2.0, group='drs')
        self.assertEqual(2.0, weigher.weight_multiplier(fakes.host()))
        state = fakes.host(aggregates=[
            {'drs_utilization_weight_multiplier': '0.5'},
            {'drs_utilization_weight_multiplier': '3'}])
        self.assertEqual(0.5, weigher.weight_multiplier(state))

    def test_invalid_aggregate_multiplier_falls_back(self):
        weigher = self.weigher
        state = fakes.host(aggregates=[
            {'drs_utilization_weight_multiplier': 'abc'}])
        self.assertEqual(1.0, weigher.weight_multiplier(state))

    def test_non_finite_aggregate_multiplier_falls_back(self):
        # Nova's parser accepts these; nan would make every weight nan and
        # the ranking arbitrary, inf would swamp every other weigher.
        weigher = self.weigher
        self.flags(utilization_weight_multiplier=2.0, group='drs')
        for bad in ('nan', 'inf', '-inf'):
            fakes.forget_logged()
            state = fakes.host(aggregates=[
                {'drs_utilization_weight_multiplier': bad}])
            with self.assertLogs('nova_drs_scheduler.weighers.utilization',
                                 level='WARNING') as logs:
                for _ in range(2):
                    self.assertEqual(2.0, weigher.weight_multiplier(state),
                                     bad)
            self.assertEqual(1, len(logs.output), bad)
            self.assertIn('host1', logs.output[0])

    def test_host_without_ram_inventory_is_weighed_on_cpu(self):
        # No (or zero) memory inventory counts as empty memory: the host
        # is still weighed, on CPU, instead of failing the request.
        request = fakes.spec(vcpus=1, memory_mb=0)
        weigher = self.weigher
        empty = fakes.host('empty', cpu=40)
        expected = weigher.weigh_objects(
            [weights.WeighedHost(empty, 0.0)], request)
        for total, free in ((0, 0), (None, None)):
            state = fakes.host('noram', cpu=40, total_usable_ram_mb=total,
                               free_ram_mb=free)
            self.assertEqual(expected, weigher.weigh_objects(
                [weights.WeighedHost(state, 0.0)], request), total)
        hosts = [fakes.host('busy', cpu=70),
                 fakes.host('noram', cpu=20, total_usable_ram_mb=0,
                            free_ram_mb=0)]
        self.assertEqual(['noram', 'busy'], self.ranked(hosts))

    def test_raw_weight_is_minus_the_blended_projection(self):
        # The raw weights in Nova's debug log read as percentages: minus
        # the weighted mean of projected CPU and RAM utilization.
        self.flags(cpu_utilization_weight=3, ram_utilization_weight=1,
                   expected_vcpu_load=50, group='drs')
        half = fakes.host('half', cpu=30, vcpus_total=4,
                          total_usable_ram_mb=4096, free_ram_mb=2000)
        full = fakes.host('full', cpu=30, vcpus_total=4,
                          total_usable_ram_mb=4096, free_ram_mb=0)
        raw = self.weigher.weigh_objects(
            [weights.WeighedHost(half, 0.0), weights.WeighedHost(full, 0.0)],
            fakes.spec(vcpus=1, memory_mb=1024))
        # CPU 30 + 1 vCPU * 50% / 4 = 42.5 on both; RAM (2096 + 1024) /
        # 4096 = 76.17% and (4096 + 1024) / 4096 = 125%.
        self.assertEqual([-(3 * 42.5 + 100 * 3120 / 4096) / 4,
                          -(3 * 42.5 + 125) / 4], raw)

    def test_projection_helpers(self):
        self.assertEqual(35.0, utilization.projected_cpu_percent(
            10.0, 2, 4, 50.0))
        self.assertEqual(10.0, utilization.projected_cpu_percent(
            10.0, 2, 0, 50.0))
        self.assertEqual(50.0, utilization.projected_ram_percent(
            1024, 1024, 4096))
