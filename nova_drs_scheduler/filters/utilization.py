"""UtilizationFilter: keep new load off hosts that are measured busy."""

from nova.scheduler import filters
from oslo_log import log as logging

from nova_drs_scheduler import conf
from nova_drs_scheduler import log_once
from nova_drs_scheduler import utilization

LOG = logging.getLogger(__name__)
CONF = conf.CONF


class UtilizationFilter(filters.BaseHostFilter):
    """Reject hosts whose measured CPU (or RAM) is over its ceiling.

    Placement counts allocations; this filter looks at what the host is
    actually doing, from the ``cpu.percent`` compute-monitor metric
    (``[DEFAULT] compute_monitors = cpu.virt_driver`` on the computes).
    """

    RUN_ON_REBUILD = False

    def __init__(self):
        conf.validate(CONF)

    def host_passes(self, host_state, spec_obj):
        opts = CONF.drs
        cpu = utilization.host_cpu_percent(host_state, opts.metrics_max_age)
        if cpu is None:
            passes = opts.missing_metrics_action == 'pass'
            log_once.warning(
                LOG, (host_state.host, 'UtilizationFilter', 'no-metrics'),
                'UtilizationFilter: host %s has no usable %s metric; it '
                '%s ([drs] missing_metrics_action=%s).', host_state.host,
                utilization.CPU_METRIC, 'passes' if passes else 'is rejected',
                opts.missing_metrics_action)
            if not passes:
                return False
        elif cpu > opts.max_cpu_utilization:
            LOG.debug('%(host)s fails UtilizationFilter: CPU %(cpu).1f%% > '
                      '%(max).1f%%.', {'host': host_state, 'cpu': cpu,
                                       'max': opts.max_cpu_utilization})
            return False
        if opts.max_ram_utilization is not None:
            ram = utilization.host_ram_percent(host_state)
            if ram is not None and ram > opts.max_ram_utilization:
                LOG.debug('%(host)s fails UtilizationFilter: RAM %(ram).1f%% '
                          '> %(max).1f%%.', {'host': host_state, 'ram': ram,
                                             'max': opts.max_ram_utilization})
                return False
        return True
