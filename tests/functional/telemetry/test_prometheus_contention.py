"""CPU contention from a real Prometheus: node_exporter's CPU pressure and
the libvirt exporter's vCPU wait, through the default queries."""

from nova_drs_scheduler import conf
from tests import realservers
from tests.functional.telemetry import test_prometheus_source as base

LOG_NAME = 'nova_drs_scheduler.rebalance.sources.prometheus'


class PrometheusContentionTest(base.RealPrometheusTestCase):
    """compute1 is starved (CPU at 100 %, 1.5 cores waiting, its two
    instances' vCPUs waiting 1.0 and 0.5 cores); compute2's kernel has no
    PSI: it exports no pressure series, and its instance no vCPU wait."""

    WAIT = {'host_cpu_query': 2, 'instance_cpu_query': 3,
            'host_contention_query': 1, 'instance_contention_query': 2}

    @classmethod
    def publish(cls, exporter):
        exporter.set_host('compute1', cpu=100, ram=40, waiting=1.5)
        exporter.set_host('compute2', cpu=60, ram=40)
        exporter.set_instance('compute1', base.UUID_A, 1.0, wait=1.0)
        exporter.set_instance('compute1', base.UUID_B, 0.8, wait=0.5)
        exporter.set_instance('compute2', base.UUID_C, 0.5)
        exporter.set_gauge('drs_test_wait', 2.0, host='compute1')
        exporter.set_gauge('drs_test_wait', float('nan'), host='compute2')

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
        self.flags(host_contention_query=base.shrunk(
            conf.prometheus.LIBVIRT_HOST_CONTENTION_QUERY),
            group='drs_prometheus')

        def check():
            waiting = self.waiting()
            self.assertAlmostEqual(1.5, waiting['compute1'], delta=0.05)
            self.assertIsNone(waiting['compute2'])

        realservers.eventually(check)

    def test_libvirt_vcpu_wait_per_instance(self):
        uuids = (base.UUID_A, base.UUID_B, base.UUID_C)

        def check():
            measured = self.source().instance_loads_within(
                None, [base.instance(uuid) for uuid in uuids], None)
            self.assertEqual(set(uuids), set(measured.loads))
            self.assertEqual(set(uuids[:2]), set(measured.waits))
            self.assertAlmostEqual(1.0, measured.waits[uuids[0]], delta=0.05)
            self.assertAlmostEqual(0.5, measured.waits[uuids[1]], delta=0.05)

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
