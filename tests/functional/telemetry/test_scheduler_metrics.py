"""The scheduler's own metrics endpoint, scraped by a real Prometheus.

Nova's harness runs under eventlet, so this also proves the endpoint
serves from a green thread; ``tests/unit/live/test_telemetry.py`` covers
native threads.
"""

from tests import realservers
from tests.functional.rebalance import base

HOT = {'host1': 90, 'host2': 30, 'host3': 10}


class SchedulerMetricsTest(base.RebalanceTestBase):

    def setUp(self):
        self.port = realservers.free_port()
        self.DRS = {'exporter_port': self.port,
                    'exporter_host': '127.0.0.1'}
        super().setUp()
        self.prometheus = self.useFixture(realservers.PrometheusServer(
            [f'127.0.0.1:{self.port}']))

    def value(self, promql):
        found = self.prometheus.query(promql)
        return float(found[0]['value'][1]) if found else None

    def wait_for_value(self, promql, expected):
        realservers.wait_until(
            lambda: self.value(promql) == expected, 30,
            f'{promql} == {expected} (last: {self.value(promql)})')

    def test_prometheus_scrapes_hosts_periods_moves_and_leadership(self):
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        self.wait_for_value('nova_drs_host_counter{host="host1"}', 1)
        self.wait_for_value('nova_drs_host_violated{host="host1"}', 0)
        self._settle(self._period(HOT, loads))
        self.scheduler_service.manager.rebalancer.outcomes.collect()
        self.wait_for_value('nova_drs_host_violated{host="host1"}', 1)
        self.wait_for_value('nova_drs_host_cpu_percent{host="host1"}', 90)
        self.wait_for_value('nova_drs_host_cpu_percent{host="host3"}', 10)
        self.wait_for_value('nova_drs_leader', 1)
        self.wait_for_value('nova_drs_periods_run_total', 2)
        self.wait_for_value('nova_drs_period_duration_seconds_count', 2)
        self.wait_for_value('nova_drs_moves_total{status="planned"}', 1)
        self.wait_for_value('nova_drs_moves_total{status="started"}', 1)
        self.wait_for_value('nova_drs_moves_total{status="completed"}', 1)

        self.flags(automation='off', group='drs')
        self._period(HOT, loads)
        self.wait_for_value(
            'nova_drs_periods_skipped_total{reason="automation_off"}', 1)
        self.assertEqual(2, self.value('nova_drs_periods_run_total'))
