"""Measured utilization of a compute host, read defensively.

Shared by the UtilizationFilter, the UtilizationWeigher and the
rebalancer: a host's CPU comes from the ``cpu.percent`` compute-monitor
metric (measured).  Its RAM here is the HostState's allocated memory (the
resource tracker's ``memory_mb_used``, flavors plus reserved), which the
filter and weigher use as an over-commit figure; the rebalancer judges RAM
only from a source that measures it.  Anything missing,
stale or nonsensical yields ``None`` and is logged once with the host's
name, so callers apply their documented fallback and never raise.
"""

import math

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler import log_once

LOG = logging.getLogger(__name__)

CPU_METRIC = 'cpu.percent'


def _field(metric, name):
    """A metric's field, or None when unset: a Nova object raises
    NotImplementedError on reading a field that JSON row did not set."""
    try:
        return getattr(metric, name, None)
    except NotImplementedError:
        return None


def _metric(metrics, name):
    for metric in metrics or ():
        if _field(metric, 'name') == name:
            return metric
    return None


def cpu_percent(host: str, metrics, max_age: float, now=None):
    """CPU utilization in percent from a MonitorMetricList, or None."""
    try:
        metric = _metric(metrics, CPU_METRIC)
    except TypeError:
        log_once.warning(LOG, (host, 'metrics-type'),
                         'Host %s: metrics are not a list (%r); treating '
                         'its CPU utilization as unknown.', host, metrics)
        return None
    if metric is None:
        return None
    try:
        value = float(_field(metric, 'value'))
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 0 or value > 100:
        log_once.warning(LOG, (host, 'cpu-value', repr(value)),
                         'Host %s: ignoring invalid %s value %r.',
                         host, CPU_METRIC, _field(metric, 'value'))
        return None
    timestamp = _field(metric, 'timestamp')
    if timestamp is None:
        return None
    now = timeutils.normalize_time(now or timeutils.utcnow())
    age = (now - timeutils.normalize_time(timestamp)).total_seconds()
    if age > max_age:
        log_once.warning(LOG, (host, 'cpu-stale', timestamp),
                         'Host %s: %s sample from %s is older than %ss; '
                         'treating its CPU utilization as unknown.',
                         host, CPU_METRIC, timestamp, max_age)
        return None
    return value


def ram_percent(host: str, total_mb, free_mb):
    """Used (allocated) RAM in percent of physical memory, capped at 100,
    or None."""
    try:
        total = float(total_mb)
        free = float(free_mb)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(total) or not math.isfinite(free) or total <= 0:
        return None
    return min(max(100.0 * (total - free) / total, 0.0), 100.0)


def host_cpu_percent(host_state, max_age: float, now=None):
    return cpu_percent(host_state.host, host_state.metrics, max_age, now)


def host_ram_percent(host_state):
    return ram_percent(host_state.host, host_state.total_usable_ram_mb,
                       host_state.free_ram_mb)
