"""A Prometheus exporter whose values the test sets, on 127.0.0.1."""

import threading
import time

import fixtures
from prometheus_client import core
from prometheus_client import registry as prom_registry
from prometheus_client import start_http_server

from tests import realservers


class _Collector(prom_registry.Collector):
    """Exposes node_exporter- and libvirt-exporter-shaped series.

    CPU counters advance with wall time at the rate the test set, so
    ``rate(node_cpu_seconds_total{mode="idle"}[5m])`` measures exactly
    ``1 - cpu/100`` on a one-CPU host, as on a real compute.  So do the
    contention counters: node_exporter's CPU pressure
    (``node_pressure_cpu_waiting_seconds_total``, for hosts given a
    ``waiting``) and the libvirt exporter's per-vCPU wait
    (``libvirt_domain_vcpu_wait_seconds_total``, for instances given a
    ``wait``, spread evenly over two vCPUs).
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.host_cpu = {}       # host -> percent
        self.host_ram = {}       # host -> percent
        self.instance_cpu = {}   # (host, uuid) -> cores
        self.host_waiting = {}   # host -> cores waiting (PSI)
        self.instance_wait = {}  # (host, uuid) -> cores waiting
        self.gauges = {}         # (name, labels tuple) -> value
        self._idle = {}
        self._cpu_time = {}
        self._waited = {}
        self._last = time.monotonic()

    def _advance(self):
        now = time.monotonic()
        elapsed, self._last = now - self._last, now
        for host, percent in self.host_cpu.items():
            self._idle[host] = (self._idle.get(host, 0.0) +
                                elapsed * (1 - percent / 100.0))
        for rates, totals in ((self.instance_cpu, self._cpu_time),
                              (self.host_waiting, self._waited),
                              (self.instance_wait, self._waited)):
            for key, cores in rates.items():
                totals[key] = totals.get(key, 0.0) + elapsed * cores

    def collect(self):
        with self.lock:
            self._advance()
            idle = core.CounterMetricFamily(
                'node_cpu_seconds_total', 'CPU seconds',
                labels=['instance', 'cpu', 'mode'])
            for host in self.host_cpu:
                idle.add_metric([f'{host}:9100', '0', 'idle'],
                                self._idle[host])
            yield idle
            total = core.GaugeMetricFamily(
                'node_memory_MemTotal_bytes', 'RAM', labels=['instance'])
            available = core.GaugeMetricFamily(
                'node_memory_MemAvailable_bytes', 'RAM',
                labels=['instance'])
            for host, percent in self.host_ram.items():
                total.add_metric([f'{host}:9100'], 1000.0)
                available.add_metric([f'{host}:9100'],
                                     1000.0 * (1 - percent / 100.0))
            yield total
            yield available
            cpu_time = core.CounterMetricFamily(
                'libvirt_domain_info_cpu_time_seconds_total', 'CPU time',
                labels=['instance', 'domain'])
            info = core.GaugeMetricFamily(
                'libvirt_domain_openstack_info', 'OpenStack info',
                labels=['instance', 'domain', 'instance_id'])
            for (host, uuid), seconds in self._cpu_time.items():
                domain = 'instance-' + uuid[:8]
                cpu_time.add_metric([f'{host}:9177', domain], seconds)
                info.add_metric([f'{host}:9177', domain, uuid], 1)
            yield cpu_time
            yield info
            pressure = core.CounterMetricFamily(
                'node_pressure_cpu_waiting_seconds_total',
                'Total time in seconds that processes have waited for CPU '
                'time', labels=['instance'])
            for host in self.host_waiting:
                pressure.add_metric([f'{host}:9100'], self._waited[host])
            yield pressure
            wait = core.CounterMetricFamily(
                'libvirt_domain_vcpu_wait_seconds_total',
                'Time the vCPU wants to run, but the host scheduler has '
                'something else running ahead of it.',
                labels=['instance', 'domain', 'vcpu'])
            for (host, uuid) in self.instance_wait:
                for vcpu in ('0', '1'):
                    wait.add_metric(
                        [f'{host}:9177', 'instance-' + uuid[:8], vcpu],
                        self._waited[(host, uuid)] / 2)
            yield wait
            by_name = {}
            for (name, labels), value in self.gauges.items():
                family = by_name.setdefault(name, core.GaugeMetricFamily(
                    name, name, labels=[k for k, _ in labels]))
                family.add_metric([v for _, v in labels], value)
            yield from by_name.values()


def start_class_servers(test_class) -> None:
    """An exporter and a Prometheus scraping it, for a whole test class.

    Servers take seconds to start (and rate() windows to fill), so test
    classes share them; class cleanups stop them.
    """
    test_class.exporter = Exporter()
    test_class.exporter.setUp()
    test_class.addClassCleanup(test_class.exporter.cleanUp)
    test_class.prometheus = realservers.PrometheusServer(
        [test_class.exporter.target])
    test_class.prometheus.setUp()
    test_class.addClassCleanup(test_class.prometheus.cleanUp)


class Exporter(fixtures.Fixture):
    """Serve the collector on 127.0.0.1; set values with the setters."""

    def _setUp(self):
        self.collector = _Collector()
        registry = prom_registry.CollectorRegistry()
        registry.register(self.collector)
        self.port = realservers.free_port()
        server, thread = start_http_server(self.port, addr='127.0.0.1',
                                           registry=registry)
        self.addCleanup(thread.join, 5)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.target = f'127.0.0.1:{self.port}'

    def set_host(self, host, cpu=None, ram=None, waiting=None):
        with self.collector.lock:
            self.collector._advance()
            if cpu is not None:
                self.collector.host_cpu[host] = cpu
            if ram is not None:
                self.collector.host_ram[host] = ram
            if waiting is not None:
                self.collector.host_waiting[host] = waiting

    def set_instance(self, host, uuid, cores, wait=None):
        with self.collector.lock:
            self.collector._advance()
            self.collector.instance_cpu[(host, uuid)] = cores
            if wait is not None:
                self.collector.instance_wait[(host, uuid)] = wait

    def clear_gauges(self):
        with self.collector.lock:
            self.collector.gauges.clear()

    def set_gauge(self, name, value, **labels):
        with self.collector.lock:
            self.collector.gauges[(name, tuple(sorted(labels.items())))] = \
                value
