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

The calls run host by host, hosts side by side, under the period's
deadline (``[drs] instance_metrics_timeout``): a host whose compute does
not answer in time is reported late, not waited for.  The instances given
are the rows the period read (``live.InstanceRow``), so no instance is
read again: each call takes the row's Instance object, made from it, and
targets the row's cell.
"""

import collections
import datetime
import functools
import math
import time

from nova import context as nova_context
from nova import objects
from nova.compute import api as compute_api
from nova.objects import fields
from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import timeutils

from nova_drs_scheduler import deadline
from nova_drs_scheduler import pacing
from nova_drs_scheduler import utilization
from nova_drs_scheduler.planning.metrics import HostSample
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

    def host_samples_of(self, context, hosts):
        samples = {name: node_sample(rows.node)
                   for name, rows in pacing.paced(hosts.items())}
        return {name: sample for name, sample in samples.items()
                if sample is not None}

    def instance_loads(self, context, instances):
        return self.instance_loads_within(context, instances, None).loads

    def instance_loads_within(self, context, instances, timeout):
        by_host = {}
        for instance in instances:
            by_host.setdefault(instance.host, []).append(instance)
        readings, late = deadline.gather(
            {host: functools.partial(self._read_host, context, listed)
             for host, listed in sorted(by_host.items())}, timeout)
        for host in sorted(late):
            LOG.warning('DRS: no instance diagnostics from host %s within '
                        '%s s ([drs] instance_metrics_timeout).', host,
                        timeout)
        loads = {}
        for host_readings in readings.values():
            for uuid, (cpu_time, now) in host_readings.items():
                previous = self._cpu_time.get(uuid)
                self._cpu_time[uuid] = (cpu_time, now)
                if previous is None or cpu_time <= previous[0]:
                    continue
                loads[uuid] = (cpu_time - previous[0]) / 1e9 / max(
                    now - previous[1], 1e-3)
        # Instances not asked about left their over host: forgotten.
        for gone in set(self._cpu_time) - {i.uuid for i in instances}:
            del self._cpu_time[gone]
        return base.Measured(loads, frozenset(late))

    def _read_host(self, context, instances) -> dict:
        """``{uuid: (cpu time in ns, wall clock in s)}`` of one host's
        instances, asked in the cell their rows came from (the host's);
        runs in a worker, so it changes nothing shared."""
        ctx = context.elevated()  # A copy, targeted at the host's cell.
        nova_context.set_target_cell(ctx, instances[0].cell)
        readings = {}
        for instance in instances:
            cpu_time = self._read_cpu_time(ctx, instance)
            if cpu_time is not None:
                readings[instance.uuid] = (cpu_time, time.time())
        return readings

    def _read_cpu_time(self, context, instance) -> int | None:
        """Total CPU time of the instance's vCPUs, in ns, or None."""
        try:
            diagnostics = self.compute_api.get_instance_diagnostics(
                context, instance.nova)
        except Exception as exc:  # Any failure: this instance unmeasured.
            LOG.debug('No diagnostics for instance %s: %s', instance.uuid,
                      exc)
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
        metric = cpu_metric(node.metrics)
    except (TypeError, ValueError, KeyError):
        return None
    cpu = utilization.cpu_percent(node.host, [metric] if metric else [],
                                  max_age=math.inf)
    if cpu is None:
        return None
    taken = timeutils.normalize_time(metric.timestamp)
    return HostSample(
        timestamp=taken.replace(tzinfo=datetime.timezone.utc).timestamp(),
        cpu_percent=cpu,
        ram_percent=None)


#: The ``cpu.percent`` entry of a node's metrics, as Nova's objects read it.
Metric = collections.namedtuple('Metric', ['name', 'value', 'timestamp'])
#: Nova's conversions of a MonitorMetric's value and timestamp.
_INTEGER = fields.IntegerField(nullable=False)
_DATETIME = fields.DateTimeField(nullable=False)


def cpu_metric(metrics: str | None) -> Metric | None:
    """The ``cpu.percent`` entry of a compute node's ``metrics`` column,
    with the values ``MonitorMetricList.from_json`` gives it (the stored
    fraction in integer percent, the timestamp a datetime), or None.

    Only that entry is parsed: making every reported metric a Nova object
    was most of a period's metrics phase.  Raises TypeError, ValueError
    or KeyError where Nova's parsing of it would fail.
    """
    for entry in jsonutils.loads(metrics) if metrics else ():
        if entry['name'] != utilization.CPU_METRIC:
            continue
        # A field the entry lacks is unset, read as None.
        value = (_INTEGER.coerce(None, 'value', entry['value'] * 100)
                 if 'value' in entry else None)
        timestamp = (_DATETIME.coerce(None, 'timestamp', entry['timestamp'])
                     if 'timestamp' in entry else None)
        return Metric(utilization.CPU_METRIC, value, timestamp)
    return None

