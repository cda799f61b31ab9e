"""Core, Ram and DiskFilter and their aggregate variants.

One contract, run against each resource: the resource-specific classes
below only say how to express "total", "used" and "requested" for it.
"""


from nova_drs_scheduler.filters import core
from nova_drs_scheduler.filters import disk
from nova_drs_scheduler.filters import ram
from tests.unit import fakes


class _CapacityContract:
    """Tests shared by every capacity filter; mixed into NoDBTestCase."""

    FILTER = None
    AGGREGATE_FILTER = None
    AGGREGATE_KEY = None
    #: Whether the classic filter recorded the limit on a rejected host
    #: (CoreFilter set it before deciding; Ram/DiskFilter only on pass).
    LIMIT_ON_REJECT = False

    def rejected_limit(self, total, ratio):
        return self.limit(total, ratio) if self.LIMIT_ON_REJECT else {}

    def host(self, total, used, ratio, aggregates=None):
        raise NotImplementedError()

    def spec(self, amount):
        raise NotImplementedError()

    #: host_state.limits key and its expected value for total at ratio.
    def limit(self, total, ratio):
        raise NotImplementedError()

    def test_passes_with_room(self):
        state = self.host(total=4, used=1, ratio=1.0)
        self.assertTrue(self.FILTER().host_passes(state, self.spec(3)))
        self.assertEqual(self.limit(4, 1.0), state.limits)

    def test_fails_without_room(self):
        state = self.host(total=4, used=2, ratio=1.0)
        self.assertFalse(self.FILTER().host_passes(state, self.spec(3)))
        self.assertEqual(self.rejected_limit(4, 1.0), state.limits)

    def test_ratio_allows_overcommit(self):
        state = self.host(total=4, used=6, ratio=2.0)
        self.assertTrue(self.FILTER().host_passes(state, self.spec(2)))
        self.assertEqual(self.limit(4, 2.0), state.limits)
        self.assertFalse(self.FILTER().host_passes(state, self.spec(3)))

    def test_fail_safe_when_capacity_unknown(self):
        state = self.host(total=0, used=0, ratio=1.0)
        with self.assertLogs('nova_drs_scheduler.filters.capacity',
                             level='WARNING') as logs:
            self.assertTrue(self.FILTER().host_passes(state, self.spec(8)))
            self.assertTrue(self.FILTER().host_passes(state, self.spec(8)))
        self.assertEqual(1, len(logs.output))
        self.assertIn('host1', logs.output[0])

    def test_single_instance_cannot_overcommit_against_itself(self):
        # Ratio 10 leaves plenty of room, but the request alone is larger
        # than the physical host.
        state = self.host(total=4, used=0, ratio=10.0)
        self.assertFalse(self.FILTER().host_passes(state, self.spec(5)))
        self.assertEqual(self.rejected_limit(4, 10.0), state.limits)

    def test_request_of_exactly_the_physical_capacity_fits(self):
        state = self.host(total=4, used=0, ratio=1.0)
        self.assertTrue(self.FILTER().host_passes(state, self.spec(4)))

    def test_rebuild_on_a_full_host_is_not_refused(self):
        # A rebuild keeps the server where it is: Nova skips filters that
        # check the host's usage (RUN_ON_REBUILD False), or a rebuild on a
        # full host would fail.
        state = self.host(total=4, used=4, ratio=1.0)
        request = self.spec(2)
        request.scheduler_hints = {'_nova_check_type': ['rebuild']}
        for cls in (self.FILTER, self.AGGREGATE_FILTER):
            self.assertEqual([state], list(cls().filter_all([state],
                                                            request)))
            del request.scheduler_hints
            self.assertEqual([], list(cls().filter_all([state], request)))
            request.scheduler_hints = {'_nova_check_type': ['rebuild']}

    def test_aggregate_ratio_replaces_host_ratio(self):
        state = self.host(total=4, used=4, ratio=1.0,
                          aggregates=[{self.AGGREGATE_KEY: '2.0'}])
        self.assertFalse(self.FILTER().host_passes(state, self.spec(2)))
        self.assertTrue(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(2)))

    def test_aggregate_ratio_can_tighten(self):
        state = self.host(total=4, used=4, ratio=16.0,
                          aggregates=[{self.AGGREGATE_KEY: '1.0'}])
        self.assertFalse(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(1)))

    def test_aggregate_minimum_of_conflicting_values(self):
        state = self.host(total=4, used=5, ratio=1.0, aggregates=[
            {self.AGGREGATE_KEY: '3.0'}, {self.AGGREGATE_KEY: '1.5'}])
        self.assertTrue(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(1)))
        self.assertEqual(self.limit(4, 1.5), state.limits)
        self.assertFalse(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(2)))

    def test_aggregate_conflicting_values_on_a_rejected_host(self):
        # Modelled on Nova's test_aggregate_core_filter_conflict_values
        # (Stein): the minimum ratio wins and, for CoreFilter, the rejected
        # host still carries the limit computed at that ratio.
        state = self.host(total=4, used=8, ratio=1.0, aggregates=[
            {self.AGGREGATE_KEY: '2'}, {self.AGGREGATE_KEY: '3'}])
        self.assertFalse(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(1)))
        self.assertEqual(self.rejected_limit(4, 2.0), state.limits)

    def test_aggregate_without_key_uses_host_ratio(self):
        state = self.host(total=4, used=6, ratio=2.0,
                          aggregates=[{'other': 'x'}])
        self.assertTrue(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(2)))
        self.assertEqual(self.limit(4, 2.0), state.limits)

    def test_invalid_aggregate_values_are_ignored_and_logged_once(self):
        for bad in ('abc', '', '-1', '0', 'nan', 'inf', '3.41e38'):
            fakes.forget_logged()
            state = self.host(total=4, used=6, ratio=2.0, aggregates=[
                {self.AGGREGATE_KEY: bad}, {self.AGGREGATE_KEY: '3.0'}])
            with self.assertLogs('nova_drs_scheduler.filters.aggregate',
                                 level='WARNING') as logs:
                for _ in range(3):
                    self.assertTrue(self.AGGREGATE_FILTER().host_passes(
                        state, self.spec(2)))
            self.assertEqual(1, len(logs.output), bad)
            self.assertIn('host1', logs.output[0])
            self.assertEqual(self.limit(4, 3.0), state.limits, bad)

    def test_largest_ratio_placement_stores_is_valid(self):
        state = self.host(total=4, used=6, ratio=2.0, aggregates=[
            {self.AGGREGATE_KEY: '3.40282e38'}])
        self.assertTrue(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(2)))
        self.assertEqual(self.limit(4, 3.40282e38), state.limits)

    def test_only_invalid_aggregate_values_fall_back_to_host_ratio(self):
        state = self.host(total=4, used=6, ratio=2.0,
                          aggregates=[{self.AGGREGATE_KEY: 'abc'}])
        self.assertTrue(self.AGGREGATE_FILTER().host_passes(
            state, self.spec(2)))
        self.assertEqual(self.limit(4, 2.0), state.limits)


class CoreFilterTest(_CapacityContract, fakes.LeanTestCase):
    FILTER = core.CoreFilter
    AGGREGATE_FILTER = core.AggregateCoreFilter
    AGGREGATE_KEY = 'cpu_allocation_ratio'
    LIMIT_ON_REJECT = True

    def host(self, total, used, ratio, aggregates=None):
        return fakes.host(vcpus_total=total, vcpus_used=used,
                          cpu_allocation_ratio=ratio, aggregates=aggregates)

    def spec(self, amount):
        return fakes.spec(vcpus=amount)

    def limit(self, total, ratio):
        return {'vcpu': total * ratio}


class RamFilterTest(_CapacityContract, fakes.LeanTestCase):
    FILTER = ram.RamFilter
    AGGREGATE_FILTER = ram.AggregateRamFilter
    AGGREGATE_KEY = 'ram_allocation_ratio'
    MB = 1024

    def host(self, total, used, ratio, aggregates=None):
        return fakes.host(total_usable_ram_mb=total * self.MB,
                          free_ram_mb=(total - used) * self.MB,
                          ram_allocation_ratio=ratio, aggregates=aggregates)

    def spec(self, amount):
        return fakes.spec(memory_mb=amount * self.MB)

    def limit(self, total, ratio):
        return {'memory_mb': total * self.MB * ratio}


class DiskFilterTest(_CapacityContract, fakes.LeanTestCase):
    FILTER = disk.DiskFilter
    AGGREGATE_FILTER = disk.AggregateDiskFilter
    AGGREGATE_KEY = 'disk_allocation_ratio'

    def host(self, total, used, ratio, aggregates=None):
        return fakes.host(total_usable_disk_gb=total,
                          free_disk_mb=(total - used) * 1024,
                          disk_allocation_ratio=ratio, aggregates=aggregates)

    def spec(self, amount):
        return fakes.spec(root_gb=amount)

    def limit(self, total, ratio):
        return {'disk_gb': total * ratio}

    def test_ephemeral_and_swap_count(self):
        state = self.host(total=4, used=1, ratio=1.0)
        request = fakes.spec(root_gb=1, ephemeral_gb=1, swap=1025)
        self.assertFalse(self.FILTER().host_passes(state, request))

    def test_volume_backed_root_disk_is_not_local(self):
        state = self.host(total=4, used=3, ratio=1.0)
        self.assertFalse(self.FILTER().host_passes(
            state, fakes.spec(root_gb=2)))
        self.assertTrue(self.FILTER().host_passes(
            state, fakes.spec(root_gb=2, is_bfv=True)))

    def test_volume_backed_root_disk_counts_zero_gib(self):
        # 1 GiB free; the ephemeral disk fills it exactly, the root disk
        # on its volume takes nothing on the host.
        state = self.host(total=4, used=3, ratio=1.0)
        self.assertTrue(self.FILTER().host_passes(state, fakes.spec(
            root_gb=2, ephemeral_gb=1, is_bfv=True)))
        self.assertFalse(self.FILTER().host_passes(state, fakes.spec(
            root_gb=2, ephemeral_gb=1, is_bfv=False)))
        # ...but its ephemeral disk still needs room on the host.
        self.assertFalse(self.FILTER().host_passes(state, fakes.spec(
            root_gb=2, ephemeral_gb=2, is_bfv=True)))

    def test_swap_in_mb_fills_the_disk_exactly(self):
        state = self.host(total=4, used=2, ratio=1.0)
        self.assertTrue(self.FILTER().host_passes(
            state, fakes.spec(root_gb=1, swap=1024)))
        self.assertFalse(self.FILTER().host_passes(
            state, fakes.spec(root_gb=1, swap=1025)))

    def test_limit_keeps_fractions_of_a_gib(self):
        state = self.host(total=3, used=0, ratio=1.5)
        self.assertTrue(self.FILTER().host_passes(state, self.spec(1)))
        self.assertEqual({'disk_gb': 4.5}, state.limits)
