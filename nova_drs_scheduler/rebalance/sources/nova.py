"""The default metric source: what Nova itself already measures.

Hosts: the ``cpu.percent`` compute-monitor metric stored in
``ComputeNode.metrics`` (computes need ``[DEFAULT] compute_monitors =
cpu.virt_driver``).  RAM is reported as unknown: the compute node's
``memory_mb_used`` is what the resource tracker *allocated* to instances
(over 100% with ``ram_allocation_ratio`` above 1), not memory in use, and
no Nova compute monitor measures memory (``MonitorMetricType`` has no
memory metric).  Hosts are then judged on CPU alone; a source that
measures RAM (Prometheus) judges RAM too.

Instances: the CPU time reported by Nova's instance diagnostics (a compute
RPC call per instance).  A load is a rate, so it needs two samples: each
call keeps the counters it read and returns the rate since the previous
call for the same instance, i.e. over one rebalance period, with no sleep
in the scheduler.  An instance seen for the first time, or whose counter
did not advance (a driver returning constants, such as Nova's fake driver;
a running guest's CPU time always advances), or whose diagnostics failed,
is left out; the caller then falls back to a share of its host's load.
"""

import datetime
import math
import time

from nova import context as nova_context
from nova import objects
from nova.compute import api as compute_api
from nova.objects import monitor_metric
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler import utilization
from nova_drs_scheduler.rebalance.metrics import HostSample
from nova_drs_scheduler.rebalance.sources import base

LOG = logging.getLogger(__name__)


class NovaSource(base.MetricsSource):

    def __init__(self, conf):
        super().__init__(conf)
        self.compute_api = compute_api.API()
        #: {instance uuid: (cpu time in ns, wall clock in s)}
        self._cpu_time = {}

    def host_samples(self, context, hosts):
        wanted = set(hosts)
        samples = {}
        for cell in objects.CellMappingList.get_all(context):
            if cell.is_cell0():
                continue
            with nova_context.target_cell(context, cell) as cctxt:
                nodes = objects.ComputeNodeList.get_all(cctxt)
            for node in nodes:
                if node.host in wanted and node.host not in samples:
                    sample = node_sample(node)
                    if sample is not None:
                        samples[node.host] = sample
        return samples

    def instance_loads(self, context, instances):
        loads = {}
        seen = set()
        for instance in instances:
            seen.add(instance.uuid)
            cpu_time = self._read_cpu_time(context, instance.uuid)
            if cpu_time is None:
                continue
            now = time.time()
            previous = self._cpu_time.get(instance.uuid)
            self._cpu_time[instance.uuid] = (cpu_time, now)
            if previous is None or cpu_time <= previous[0]:
                continue
            loads[instance.uuid] = (cpu_time - previous[0]) / 1e9 / max(
                now - previous[1], 1e-3)
        for gone in set(self._cpu_time) - seen:
            del self._cpu_time[gone]
        return loads

    def _read_cpu_time(self, context, uuid: str) -> int | None:
        """Total CPU time of the instance's vCPUs, in ns, or None."""
        ctx = context.elevated()  # A copy: get() targets it at the cell.
        try:
            instance = self.compute_api.get(ctx, uuid)
            diagnostics = self.compute_api.get_instance_diagnostics(
                ctx, instance)
        except Exception as exc:  # Any failure: this instance unmeasured.
            LOG.debug('No diagnostics for instance %s: %s', uuid, exc)
            return None
        times = [cpu.time for cpu in diagnostics.cpu_details
                 if cpu.obj_attr_is_set('time') and cpu.time is not None]
        return sum(times) if times else None


def node_sample(node) -> HostSample | None:
    """A ComputeNode's CPU sample with its timestamp, if it has a valid one.

    Age is not judged here (the windows do), only the value.  RAM stays
    unknown (see the module docstring).
    """
    try:
        metrics = monitor_metric.MonitorMetricList.from_json(node.metrics)
    except (TypeError, ValueError):
        return None
    cpu = utilization.cpu_percent(node.host, metrics, max_age=math.inf)
    if cpu is None:
        return None
    taken = timeutils.normalize_time(
        utilization._metric(metrics, utilization.CPU_METRIC).timestamp)
    return HostSample(
        timestamp=taken.replace(tzinfo=datetime.timezone.utc).timestamp(),
        cpu_percent=cpu,
        ram_percent=None)
