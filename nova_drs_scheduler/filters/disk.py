"""DiskFilter and AggregateDiskFilter: local disk over-commit."""

from nova_drs_scheduler.filters import capacity


class DiskFilter(capacity.CapacityFilter):
    """Local disk (MB) at the host's ``disk_allocation_ratio``.

    A volume-backed instance's root disk is not on the host, so only its
    ephemeral and swap disks count, as in placement's request.
    """

    LIMIT_KEY = 'disk_gb'
    RATIO_ATTR = 'disk_allocation_ratio'
    UNIT = 'MB'

    def _total(self, host_state):
        return host_state.total_usable_disk_gb * 1024

    def _used(self, host_state):
        return host_state.total_usable_disk_gb * 1024 - host_state.free_disk_mb

    def _requested(self, spec_obj):
        is_bfv = spec_obj.obj_attr_is_set('is_bfv') and spec_obj.is_bfv
        root_gb = 0 if is_bfv else spec_obj.root_gb
        return 1024 * (root_gb + spec_obj.ephemeral_gb) + spec_obj.swap

    def _limit_value(self, limit):
        return limit / 1024


class AggregateDiskFilter(capacity.AggregateRatioMixin, DiskFilter):
    """Local disk at the aggregate's ``disk_allocation_ratio``."""

    AGGREGATE_KEY = 'disk_allocation_ratio'
