"""The metrics endpoint in native threads (no eventlet): text format."""

import json
import os
import re

import requests
import testtools

from nova_drs_scheduler.rebalance import telemetry
from tests import realservers


class TelemetryTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.telemetry = telemetry.Telemetry()
        self.port = realservers.free_port()
        self.telemetry.serve('127.0.0.1', self.port)
        self.addCleanup(self.telemetry.stop)

    def scrape(self) -> str:
        response = requests.get(f'http://127.0.0.1:{self.port}/metrics',
                                timeout=5)
        response.raise_for_status()
        return response.text

    def test_series_follow_the_periods(self):
        self.telemetry.leader(True)
        self.telemetry.hosts([
            {'host': 'h1', 'cpu_percent': 91.5, 'ram_percent': None,
             'cpu_threshold': 80.0, 'counter': 3, 'violated': True},
            {'host': 'h2', 'cpu_percent': None, 'counter': 0,
             'violated': False}])
        self.telemetry.ran(0.3)
        self.telemetry.skipped('not_leader')
        self.telemetry.moves('planned', 2)
        self.telemetry.moves('completed', 0)
        text = self.scrape()
        for line in ('nova_drs_host_cpu_percent{host="h1"} 91.5',
                     'nova_drs_host_counter{host="h1"} 3.0',
                     'nova_drs_host_violated{host="h1"} 1.0',
                     'nova_drs_host_violated{host="h2"} 0.0',
                     'nova_drs_periods_run_total 1.0',
                     'nova_drs_periods_skipped_total{reason="not_leader"} '
                     '1.0',
                     'nova_drs_moves_total{status="planned"} 2.0',
                     'nova_drs_period_duration_seconds_count 1.0',
                     'nova_drs_leader 1.0'):
            self.assertIn(line, text)
        # Not measured: no CPU series rather than a made-up value.
        self.assertNotIn('nova_drs_host_cpu_percent{host="h2"}', text)
        self.assertNotIn('status="completed"', text)

    def test_hosts_left_out_lose_their_series(self):
        self.telemetry.leader(True)
        self.telemetry.hosts([
            {'host': 'h1', 'cpu_percent': 91.5, 'counter': 3,
             'violated': True},
            {'host': 'h2', 'cpu_percent': 50.0, 'counter': 0,
             'violated': False}])
        # h1 no longer measured, h2 gone.
        self.telemetry.hosts([{'host': 'h1', 'cpu_percent': None,
                               'counter': 0, 'violated': False}])
        text = self.scrape()
        self.assertIn('nova_drs_host_counter{host="h1"} 0.0', text)
        self.assertNotIn('nova_drs_host_cpu_percent{host="h1"}', text)
        self.assertNotIn('host="h2"', text)

    def test_a_follower_reports_no_host(self):
        self.telemetry.hosts([{'host': 'h1', 'cpu_percent': 50.0,
                               'counter': 0, 'violated': False}])
        self.telemetry.leader(False)
        text = self.scrape()
        self.assertIn('nova_drs_leader 0.0', text)
        self.assertNotIn('host="h1"', text)

    def test_port_in_use_is_a_warning_not_a_crash(self):
        other = telemetry.Telemetry()
        with self.assertLogs('nova_drs_scheduler.rebalance.telemetry',
                             level='WARNING') as logs:
            other.serve('127.0.0.1', self.port)
        self.assertIsNone(other.server)
        self.assertIn('not served', logs.output[0])


class DashboardTest(testtools.TestCase):
    """doc/grafana-dashboard.json only queries series the scheduler
    exports."""

    def test_every_queried_series_exists(self):
        path = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                            'doc', 'grafana-dashboard.json')
        with open(path) as handle:
            dashboard = json.load(handle)
        exported = telemetry.Telemetry()
        exported.ran(1.0)
        exported.skipped('metrics')
        exported.moves('planned', 1)
        exported.hosts([{'host': 'h', 'cpu_percent': 1.0,
                         'ram_percent': 1.0, 'cpu_threshold': 80.0,
                         'counter': 0, 'violated': False}])
        names = {sample.name for family in exported.registry.collect()
                 for sample in family.samples}
        queried = {name for panel in dashboard['panels']
                   for target in panel['targets']
                   for name in re.findall(r'nova_drs_\w+', target['expr'])}
        self.assertTrue(queried)
        self.assertEqual(set(), queried - names)
