"""CPU contention from a real Prometheus: node_exporter's CPU pressure and
the libvirt exporter's vCPU wait, through the default queries."""

import time
import types

from nova import test

from nova_drs_scheduler import conf
from nova_drs_scheduler import log_once
from nova_drs_scheduler.rebalance import sources
from tests import realservers
from tests.functional.telemetry import exporter as drs_exporter

RATE_WINDOW = 6
UUID_A = 'aaaaaaaa-0000-4000-8000-000000000001'
UUID_B = 'bbbbbbbb-0000-4000-8000-000000000002'
UUID_C = 'cccccccc-0000-4000-8000-000000000003'
LOG_NAME = 'nova_drs_scheduler.rebalance.sources.prometheus'
QUERIES = ('host_cpu_query', 'instance_cpu_query', 'host_contention_query',
           'instance_contention_query')


def instance(uuid, vcpus=2):
    return types.SimpleNamespace(uuid=uuid, vcpus=vcpus, host='any')


def shrunk(query):
    """``query`` with its 5m rate() window shrunk, so that it fills in
    seconds (rate() divides by the window, so it reads low till full)."""
    return query.replace('[5m]', f'[{RATE_WINDOW}s]')


class PrometheusContentionTest(test.NoDBTestCase):
    """compute1 is starved (CPU at 100 %, 1.5 cores waiting, its two
    instances' vCPUs waiting 1.0 and 0.5 cores); compute2's kernel has no
    PSI: it exports no pressure series, and its instance no vCPU wait."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        drs_exporter.start_class_servers(cls)
        cls.exporter.set_host('compute1', cpu=100, ram=40, waiting=1.5)
        cls.exporter.set_host('compute2', cpu=60, ram=40)
        cls.exporter.set_instance('compute1', UUID_A, 1.0, wait=1.0)
        cls.exporter.set_instance('compute1', UUID_B, 0.8, wait=0.5)
        cls.exporter.set_instance('compute2', UUID_C, 0.5)
        cls.exporter.set_gauge('drs_test_wait', 2.0, host='compute1')
        cls.exporter.set_gauge('drs_test_wait', float('nan'),
                               host='compute2')
        cls.queries = {name: shrunk(getattr(conf.prometheus, name.upper()))
                       for name in QUERIES}
        cls.prometheus.wait_for(cls.queries['host_contention_query'], 1)
        cls.prometheus.wait_for(cls.queries['instance_contention_query'], 2)
        time.sleep(RATE_WINDOW)

    def setUp(self):
        super().setUp()
        log_once.reset()
        self.flags(metrics_source='prometheus', group='drs')
        self.flags(url=self.prometheus.url, group='drs_prometheus',
                   **self.queries)

    def source(self):
        return sources.load(conf.CONF)

    def waiting(self, hosts=('compute1', 'compute2')):
        return {host: sample.cpu_waiting for host, sample in
                self.source().host_samples(None, list(hosts)).items()}

    def test_node_exporter_pressure_per_host(self):
        def check():
            with self.assertLogs(LOG_NAME, level='INFO') as logs:
                waiting = self.waiting()
            self.assertEqual({'compute1', 'compute2'}, set(waiting))
            self.assertAlmostEqual(1.5, waiting['compute1'], delta=0.05)
            # No PSI: seen by its CPU alone, and said so.
            self.assertIsNone(waiting['compute2'])
            self.assertIn('Host compute2: no CPU contention series',
                          '\n'.join(logs.output))

        realservers.eventually(check)

    def test_libvirt_vcpu_wait_summed_per_host(self):
        self.flags(host_contention_query=shrunk(
            conf.prometheus.LIBVIRT_HOST_CONTENTION_QUERY),
            group='drs_prometheus')

        def check():
            waiting = self.waiting()
            self.assertAlmostEqual(1.5, waiting['compute1'], delta=0.05)
            self.assertIsNone(waiting['compute2'])

        realservers.eventually(check)

    def test_libvirt_vcpu_wait_per_instance(self):
        def check():
            measured = self.source().instance_loads_within(
                None, [instance(UUID_A), instance(UUID_B),
                       instance(UUID_C)], None)
            self.assertEqual({UUID_A, UUID_B}, set(measured.waits))
            self.assertAlmostEqual(1.0, measured.waits[UUID_A], delta=0.05)
            self.assertAlmostEqual(0.5, measured.waits[UUID_B], delta=0.05)
            self.assertEqual({UUID_A, UUID_B, UUID_C}, set(measured.loads))

        realservers.eventually(check)

    def test_a_bad_series_is_ignored_for_its_host_only(self):
        self.flags(host_contention_query='drs_test_wait', host_label='host',
                   host_cpu_query='max by (host) (label_replace('
                   + self.queries['host_cpu_query']
                   + ', "host", "$1", "instance", "([^:]+).*"))',
                   group='drs_prometheus')

        def check():
            with self.assertLogs(LOG_NAME, level='WARNING') as logs:
                waiting = self.waiting()
            self.assertEqual({'compute1': 2.0, 'compute2': None}, waiting)
            self.assertIn('Host compute2: ignoring invalid CPU contention',
                          '\n'.join(logs.output))

        realservers.eventually(check)

    def test_a_failing_query_leaves_every_host_to_its_cpu(self):
        self.flags(host_contention_query='rate(', group='drs_prometheus')
        with self.assertLogs(LOG_NAME, level='WARNING') as logs:
            waiting = self.waiting()
        self.assertEqual({'compute1': None, 'compute2': None}, waiting)
        self.assertIn('bad_data', '\n'.join(logs.output))
