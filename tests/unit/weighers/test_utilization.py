"""UtilizationWeigher: ordering by projected utilization, multipliers."""

from nova import test
from nova.scheduler import weights

from nova_drs_scheduler.weighers import utilization
from tests.unit import fakes


class UtilizationWeigherTest(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        fakes.forget_logged()
        self.handler = weights.HostWeightHandler()

    def ranked(self, hosts, request=None):
        weighed = self.handler.get_weighed_objects(
            [utilization.UtilizationWeigher()], hosts,
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
        weigher = utilization.UtilizationWeigher()
        self.flags(utilization_weight_multiplier=2.0, group='drs')
        self.assertEqual(2.0, weigher.weight_multiplier(fakes.host()))
        state = fakes.host(aggregates=[
            {'drs_utilization_weight_multiplier': '0.5'},
            {'drs_utilization_weight_multiplier': '3'}])
        self.assertEqual(0.5, weigher.weight_multiplier(state))

    def test_invalid_aggregate_multiplier_falls_back(self):
        weigher = utilization.UtilizationWeigher()
        state = fakes.host(aggregates=[
            {'drs_utilization_weight_multiplier': 'abc'}])
        self.assertEqual(1.0, weigher.weight_multiplier(state))

    def test_projection_helpers(self):
        self.assertEqual(35.0, utilization.projected_cpu_percent(
            10.0, 2, 4, 50.0))
        self.assertEqual(10.0, utilization.projected_cpu_percent(
            10.0, 2, 0, 50.0))
        self.assertEqual(50.0, utilization.projected_ram_percent(
            1024, 1024, 4096))
