"""The Prometheus metric source against a real Prometheus server."""

import socket
import threading
import time
import types

from nova import test

from nova_drs_scheduler import conf
from nova_drs_scheduler import log_once
from nova_drs_scheduler.rebalance import sources
from nova_drs_scheduler.rebalance.sources import base
from tests import realservers
from tests.functional.telemetry import exporter as drs_exporter

RATE_WINDOW = 6
UUID_A = 'aaaaaaaa-0000-4000-8000-000000000001'
UUID_B = 'bbbbbbbb-0000-4000-8000-000000000002'
UUID_C = 'cccccccc-0000-4000-8000-000000000003'


def instance(uuid, vcpus=2):
    return types.SimpleNamespace(uuid=uuid, vcpus=vcpus, host='any')


def shrunk(query: str) -> str:
    """``query`` with its 5m rate() window shrunk: rate() divides by the
    window, so it reads low until the window is full."""
    return query.replace('[5m]', f'[{RATE_WINDOW}s]')


class RealPrometheusTestCase(test.NoDBTestCase):
    """The source reading the class's own exporter and Prometheus, with
    the default queries named in :attr:`WAIT` (their windows shrunk)."""

    #: {query option: series it answers once scraped}
    WAIT = {}

    @classmethod
    def setUpClass(cls):
        # One exporter and one Prometheus for the class: a server takes
        # seconds to start and to fill its rate() window.
        super().setUpClass()
        drs_exporter.start_class_servers(cls)
        cls.publish(cls.exporter)
        cls.queries = {name: shrunk(getattr(conf.prometheus, name.upper()))
                       for name in cls.WAIT}
        for name, count in cls.WAIT.items():
            cls.prometheus.wait_for(cls.queries[name], count)
        time.sleep(RATE_WINDOW)

    @classmethod
    def publish(cls, exporter) -> None:
        """Set the exporter's series, once for the class."""

    def setUp(self):
        super().setUp()
        log_once.reset()
        self.flags(metrics_source='prometheus', group='drs')
        self.flags(url=self.prometheus.url, group='drs_prometheus',
                   **self.queries)

    def source(self):
        return sources.load(conf.CONF)


class PrometheusSourceTest(RealPrometheusTestCase):
    """Default queries (node_exporter, libvirt exporter) and bad input."""

    WAIT = {'host_cpu_query': 2, 'instance_cpu_query': 2}

    @classmethod
    def publish(cls, exporter):
        exporter.set_host('compute1', cpu=85, ram=40)
        exporter.set_host('compute2', cpu=20, ram=70)
        exporter.set_instance('compute1', UUID_A, 1.5)
        exporter.set_instance('compute1', UUID_B, 0.25)
        exporter.set_gauge('drs_test_cpu', 55, host='compute1')
        exporter.set_gauge('drs_test_cpu', float('nan'), host='compute2')
        exporter.set_gauge('drs_test_cpu', -3, host='compute3')
        exporter.set_gauge('drs_test_cpu', 250, host='compute4')

    def test_default_queries_read_node_and_libvirt_exporters(self):
        def hosts():
            samples = self.source().host_samples(
                None, ['compute1', 'compute2'])
            self.assertEqual({'compute1', 'compute2'}, set(samples))
            self.assertAlmostEqual(85, samples['compute1'].cpu_percent,
                                   delta=1)
            self.assertAlmostEqual(20, samples['compute2'].cpu_percent,
                                   delta=1)
            self.assertAlmostEqual(40, samples['compute1'].ram_percent,
                                   delta=.1)
            self.assertAlmostEqual(70, samples['compute2'].ram_percent,
                                   delta=.1)

        def instances():
            loads = self.source().instance_loads(
                None, [instance(UUID_A), instance(UUID_B), instance(UUID_C)])
            self.assertEqual({UUID_A, UUID_B}, set(loads))
            self.assertAlmostEqual(1.5, loads[UUID_A], delta=0.05)
            self.assertAlmostEqual(0.25, loads[UUID_B], delta=0.05)

        realservers.eventually(hosts)
        realservers.eventually(instances)

    def test_hosts_missing_from_prometheus_are_left_out(self):
        def check():
            with self.assertLogs('nova_drs_scheduler.rebalance.sources.'
                                 'prometheus', level='WARNING') as logs:
                samples = self.source().host_samples(
                    None, ['compute1', 'compute9'])
            self.assertEqual({'compute1'}, set(samples))
            self.assertEqual(1, len(logs.output), logs.output)
            self.assertIn('compute9', logs.output[0])

        realservers.eventually(check)

    def test_operator_queries_and_labels(self):
        self.flags(host_cpu_query='drs_test_cpu', host_ram_query='',
                   host_label='host', group='drs_prometheus')

        def check():
            samples = self.source().host_samples(None, ['compute1'])
            self.assertIn('compute1', samples)
            self.assertEqual(55, samples['compute1'].cpu_percent)
            self.assertIsNone(samples['compute1'].ram_percent)

        realservers.eventually(check)

    def test_nonsense_values_are_rejected_and_logged(self):
        self.flags(host_cpu_query='drs_test_cpu', host_ram_query='',
                   host_label='host', group='drs_prometheus')
        hosts = ['compute1', 'compute2', 'compute3', 'compute4']

        def check():
            with self.assertLogs('nova_drs_scheduler.rebalance.sources.'
                                 'prometheus', level='WARNING') as logs:
                samples = self.source().host_samples(None, hosts)
            self.assertEqual({'compute1'}, set(samples))
            text = '\n'.join(logs.output)
            for host in hosts[1:]:
                self.assertIn(host, text)

        realservers.eventually(check)
        # An instance using more cores than it has vCPUs is nonsense too,
        # once the series is there to be judged.
        realservers.eventually(lambda: self.assertEqual(
            {UUID_A}, set(self.source().instance_loads(
                None, [instance(UUID_A, 2)]))))
        loads = self.source().instance_loads(None, [instance(UUID_A, 1)])
        self.assertEqual({}, loads)

    def test_query_error_makes_the_period_unusable(self):
        self.flags(host_cpu_query='rate(', group='drs_prometheus')
        error = self.assertRaises(base.MetricsUnavailable,
                                  self.source().host_samples, None,
                                  ['compute1'])
        self.assertIn('bad_data', str(error))


class PrometheusUnreachableTest(test.NoDBTestCase):

    def test_server_down(self):
        self.flags(url=f'http://127.0.0.1:{realservers.free_port()}',
                   group='drs_prometheus')
        self.flags(metrics_source='prometheus', group='drs')
        self.assertRaises(base.MetricsUnavailable,
                          sources.load(conf.CONF).host_samples, None, ['h'])

    def test_server_too_slow(self):
        # Accepts the connection, never answers.
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen(1)
        self.addCleanup(listener.close)
        accepted = []
        thread = threading.Thread(
            target=lambda: accepted.append(listener.accept()), daemon=True)
        thread.start()
        self.flags(url='http://127.0.0.1:%d' % listener.getsockname()[1],
                   timeout=0.5, group='drs_prometheus')
        self.flags(metrics_source='prometheus', group='drs')
        error = self.assertRaises(base.MetricsUnavailable,
                                  sources.load(conf.CONF).host_samples,
                                  None, ['h'])
        self.assertIn('timed out', str(error).lower())
        for conn, _addr in accepted:
            conn.close()
