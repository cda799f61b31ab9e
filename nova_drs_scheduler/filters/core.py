"""CoreFilter and AggregateCoreFilter: vCPU over-commit."""

from nova_drs_scheduler.filters import capacity


class CoreFilter(capacity.CapacityFilter):
    """vCPUs at the host's ``cpu_allocation_ratio``."""

    LIMIT_KEY = 'vcpu'
    RATIO_ATTR = 'cpu_allocation_ratio'
    UNIT = 'vCPUs'
    LIMIT_BEFORE_DECIDING = True

    def _total(self, host_state):
        return host_state.vcpus_total

    def _used(self, host_state):
        return host_state.vcpus_used

    def _requested(self, spec_obj):
        return spec_obj.vcpus


class AggregateCoreFilter(capacity.AggregateRatioMixin, CoreFilter):
    """vCPUs at the aggregate's ``cpu_allocation_ratio``."""

    AGGREGATE_KEY = 'cpu_allocation_ratio'
