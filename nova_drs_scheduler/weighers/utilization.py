"""UtilizationWeigher: prefer the host least loaded after placement."""

import math

from nova.scheduler import utils as scheduler_utils
from nova.scheduler import weights
from oslo_log import log as logging

from nova_drs_scheduler import conf
from nova_drs_scheduler import log_once
from nova_drs_scheduler import utilization

CONF = conf.CONF
LOG = logging.getLogger(__name__)

#: Aggregate metadata key overriding [drs] utilization_weight_multiplier.
AGGREGATE_MULTIPLIER_KEY = 'drs_utilization_weight_multiplier'


def projected_cpu_percent(measured: float, vcpus: int, vcpus_total: int,
                          expected_vcpu_load: float) -> float:
    """Host CPU after adding ``vcpus`` each busy ``expected_vcpu_load`` %."""
    if not vcpus_total:
        return measured
    return measured + vcpus * expected_vcpu_load / vcpus_total


def projected_ram_percent(used_mb: float, requested_mb: float,
                          total_mb: float) -> float:
    if not total_mb:
        return 0.0
    return 100.0 * (used_mb + requested_mb) / total_mb


class UtilizationWeigher(weights.BaseHostWeigher):
    """Rank hosts by projected utilization: lowest first.

    Projected CPU is the measured ``cpu.percent`` plus the flavor's
    expected demand over the host's physical CPUs; projected RAM is the
    compute node's allocated memory plus the flavor's, over physical
    memory (an over-commit figure: Nova measures no guest memory use).
    The two are blended with ``[drs] cpu_utilization_weight`` and
    ``ram_utilization_weight``.  Weights are negated so that Nova's
    "highest weight wins" picks the coolest host.
    """

    def __init__(self):
        conf.validate(CONF)

    def weight_multiplier(self, host_state):
        default = CONF.drs.utilization_weight_multiplier
        value = scheduler_utils.get_weight_multiplier(
            host_state, AGGREGATE_MULTIPLIER_KEY, default)
        if math.isfinite(value):
            return value
        # Nova's parser takes "nan" or "inf", which would make every
        # host's weight nan and the ranking arbitrary.  The log key holds
        # the text: nan != nan, so a float key would log at every request.
        log_once.warning(
            LOG, (host_state.host, AGGREGATE_MULTIPLIER_KEY, repr(value)),
            'Host %s: ignoring non-finite aggregate metadata %s=%s.',
            host_state.host, AGGREGATE_MULTIPLIER_KEY, value)
        return default

    def _weigh_object(self, host_state, weight_properties):
        opts = CONF.drs
        measured = utilization.host_cpu_percent(host_state,
                                                opts.metrics_max_age)
        if measured is None:
            measured = opts.unmeasured_cpu_utilization
        cpu = projected_cpu_percent(measured, weight_properties.vcpus,
                                    host_state.vcpus_total,
                                    opts.expected_vcpu_load)
        total_ram = host_state.total_usable_ram_mb or 0
        ram = projected_ram_percent(total_ram - (host_state.free_ram_mb or 0),
                                    weight_properties.memory_mb, total_ram)
        cpu_w = opts.cpu_utilization_weight
        ram_w = opts.ram_utilization_weight
        return -(cpu_w * cpu + ram_w * ram) / (cpu_w + ram_w)
