"""The rebalancer fed by a real Prometheus server, in Nova's harness.

The test serves an exporter on 127.0.0.1, a real Prometheus scrapes it,
and ``[drs] metrics_source = prometheus`` reads it back: the rebalancer
must see the utilization the test set and make the move it implies.
"""

from nova_drs_scheduler import log_once
from tests import realservers
from tests.functional.rebalance import base
from tests.functional.telemetry import exporter as drs_exporter

HOST_QUERY = 'drs_test_host_cpu'
INSTANCE_QUERY = 'drs_test_instance_cores'
WAIT_QUERY = 'drs_test_host_wait'


class PrometheusRebalanceTest(base.RebalanceTestBase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        drs_exporter.start_class_servers(cls)

    def setUp(self):
        log_once.reset()
        # Series of the previous test go stale once no longer exported.
        self.exporter.clear_gauges()
        realservers.wait_until(
            lambda: not self.prometheus.query(HOST_QUERY), 30,
            'the previous test\'s series to go stale')
        self.DRS = {'metrics_source': 'prometheus'}
        super().setUp()
        self.flags(url=self.prometheus.url, host_cpu_query=HOST_QUERY,
                   host_ram_query='', host_label='host',
                   instance_cpu_query=INSTANCE_QUERY,
                   instance_label='instance_id', group='drs_prometheus')

    def publish(self, hosts, instances):
        """Set the exporter's values and wait until Prometheus has them."""
        for host, cpu in hosts.items():
            self.exporter.set_gauge(HOST_QUERY, cpu, host=host)
        for uuid, cores in instances.items():
            self.exporter.set_gauge(INSTANCE_QUERY, cores, instance_id=uuid)
        wanted = {**{('host', h): float(v) for h, v in hosts.items()},
                  **{('instance_id', u): float(v)
                     for u, v in instances.items()}}

        def scraped():
            seen = {}
            for query in (HOST_QUERY, INSTANCE_QUERY):
                for series in self.prometheus.query(query):
                    for label in ('host', 'instance_id'):
                        if label in series['metric']:
                            key = (label, series['metric'][label])
                            seen[key] = float(series['value'][1])
            return all(seen.get(k) == v for k, v in wanted.items())

        realservers.wait_until(scraped, 30, 'Prometheus to scrape the values')

    def test_rebalancer_reads_prometheus_and_moves(self):
        busy = self._boot('host1')
        idle = self._boot('host1')
        self.publish({'host1': 90, 'host2': 40, 'host3': 10},
                     {busy: 4.5, idle: 0.5})
        manager = self.scheduler_service.manager
        first = manager.run_rebalance(self._admin_context())
        self.assertEqual(90.0, self._verdict(first, 'host1')['cpu_percent'])
        self.assertEqual(10.0, self._verdict(first, 'host3')['cpu_percent'])
        self.assertEqual([], first['moves'])
        record = self._settle(manager.run_rebalance(self._admin_context()))
        [move] = record['moves']
        # host2 would end at 40 + 45 = 85% > 80 - 10: refused (margin).
        self.assertEqual(('host1', 'host3', 'completed'),
                         (move['source'], move['destination'],
                          move['outcome']['status']))
        self.assertEqual(busy, move['instance'])
        self.assertEqual('host3', self._host_of(busy))
        self.assertEqual(['host3'], self._allocated_hosts(busy))

    def test_hosts_missing_from_prometheus_are_not_judged(self):
        self.publish({'host1': 95}, {})
        record = self.scheduler_service.manager.run_rebalance(
            self._admin_context())
        self.assertEqual(95.0, self._verdict(record, 'host1')['cpu_percent'])
        for host in ('host2', 'host3'):
            verdict = self._verdict(record, host)
            self.assertIsNone(verdict['cpu_percent'], verdict)
            self.assertFalse(verdict['violated'])

    def test_record_says_which_view_judged_each_host(self):
        # host1 has a contention series, host2 none (no PSI): it is seen
        # by its CPU alone, which at 100 % may hide starved demand.
        self.flags(host_contention_query=WAIT_QUERY,
                   group='drs_prometheus')
        self.exporter.set_gauge(WAIT_QUERY, 2.0, host='host1')
        self.publish({'host1': 100, 'host2': 100, 'host3': 10}, {})
        self.prometheus.wait_for(WAIT_QUERY, 1)
        record = self.scheduler_service.manager.run_rebalance(
            self._admin_context())
        host1, host2 = (self._verdict(record, h) for h in ('host1', 'host2'))
        self.assertEqual(('contention', True), (host1['view'],
                                                host1['starved']))
        self.assertGreater(host1['cpu_contention'], 0)
        self.assertEqual(('cpu', None, True),
                         (host2['view'], host2['cpu_contention'],
                          host2['starved']))
