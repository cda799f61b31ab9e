#!/usr/bin/env python3
"""Benchmark: a period's host samples from compute node metrics, Nova's
``MonitorMetricList.from_json`` against ``nova.cpu_metric``.

Parses 1000 nodes' ``metrics`` columns with 1 metric each (what the
period benchmark's nodes report) and with the 10 ``cpu.*`` metrics
Nova's ``cpu.virt_driver`` compute monitor reports; prints the best CPU
time of 5 runs of each.  Usage::

    tools/bench_node_sample.py
"""

import math
import sys
import time
import types

from nova import objects
from nova.objects import monitor_metric
from oslo_serialization import jsonutils
from oslo_utils import timeutils

from nova_drs_scheduler import utilization
from nova_drs_scheduler.rebalance.sources import nova

#: What the ``cpu.virt_driver`` monitor reports, cpu.percent last.
CPU_METRICS = ('cpu.frequency', 'cpu.user.time', 'cpu.kernel.time',
               'cpu.idle.time', 'cpu.iowait.time', 'cpu.user.percent',
               'cpu.kernel.percent', 'cpu.idle.percent',
               'cpu.iowait.percent', 'cpu.percent')
NODES = 1000


def from_json_sample(node):
    """The host sample as the nova source took it before: every metric
    made a Nova object."""
    metrics = monitor_metric.MonitorMetricList.from_json(node.metrics)
    cpu = utilization.cpu_percent(node.host, metrics, max_age=math.inf)
    taken = utilization._metric(metrics, utilization.CPU_METRIC).timestamp
    return cpu, timeutils.normalize_time(taken)


def best_cpu(parse, rows, runs=5):
    times = []
    for _ in range(runs):
        started = time.process_time()
        for row in rows:
            parse(row)
        times.append(time.process_time() - started)
    return min(times)


def main():
    objects.register_all()
    now = timeutils.utcnow().isoformat()
    print('| metrics per node | from_json ms | cpu_metric ms | ratio |')
    print('|---|---|---|---|')
    for count in (1, len(CPU_METRICS)):
        rows = [types.SimpleNamespace(host=f'compute-{i}', metrics=(
            jsonutils.dumps([{'name': name, 'source': 'libvirt',
                              'timestamp': now,
                              'value': 0.5 if 'percent' in name else 1000}
                             for name in CPU_METRICS[-count:]])))
            for i in range(NODES)]
        assert all(from_json_sample(row)[0] == nova.node_sample(
            row).cpu_percent for row in rows)
        old = best_cpu(from_json_sample, rows)
        new = best_cpu(nova.node_sample, rows)
        print(f'| {count} | {old * 1000:.1f} | {new * 1000:.1f} | '
              f'{old / new:.1f} |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
