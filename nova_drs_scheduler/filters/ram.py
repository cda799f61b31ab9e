"""RamFilter and AggregateRamFilter: memory over-commit."""

from nova_drs_scheduler.filters import capacity


class RamFilter(capacity.CapacityFilter):
    """Memory (MB) at the host's ``ram_allocation_ratio``."""

    LIMIT_KEY = 'memory_mb'
    RATIO_ATTR = 'ram_allocation_ratio'
    UNIT = 'MB'

    def _total(self, host_state):
        return host_state.total_usable_ram_mb

    def _used(self, host_state):
        return host_state.total_usable_ram_mb - host_state.free_ram_mb

    def _requested(self, spec_obj):
        return spec_obj.memory_mb


class AggregateRamFilter(capacity.AggregateRatioMixin, RamFilter):
    """Memory at the aggregate's ``ram_allocation_ratio``."""

    AGGREGATE_KEY = 'ram_allocation_ratio'
