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
        exported.maintenance([{'host': 'h', 'state': 'draining',
                               'progress': {'instances': 1},
                               'moves': {'completed': 1}}])
        exported.power({'standby': 1})
        exported.standby_seconds(60.0)
        names = {sample.name for family in exported.registry.collect()
                 for sample in family.samples}
        queried = {name for panel in dashboard['panels']
                   for target in panel['targets']
                   for name in re.findall(r'nova_drs_\w+', target['expr'])}
        self.assertTrue(queried)
        self.assertEqual(set(), queried - names)


def drain_row(host, state, instances=None, progress=True, **moves):
    """A ``Store.maintenance`` row as the leader's report left it."""
    return {'host': host, 'state': state, 'reason': None,
            'disabled_by_drs': True, 'requested_at': None,
            'reported_at': None, 'updated_at': None,
            'progress': ({'instances': instances} if instances is not None
                         else {'planned': []}) if progress else None,
            'moves': {'completed': 0, 'failed': 0, 'in_flight': 0,
                      **moves}}


class MaintenanceSeriesTest(testtools.TestCase):
    """The three maintenance series, read from the registry."""

    def setUp(self):
        super().setUp()
        self.telemetry = telemetry.Telemetry()

    def value(self, name, **labels):
        return self.telemetry.registry.get_sample_value(name, labels)

    def hosts(self, state):
        return self.value('nova_drs_maintenance_hosts', state=state)

    def test_hosts_by_state_instances_left_and_moves(self):
        self.telemetry.maintenance([
            drain_row('m1', 'draining', 3, completed=2, in_flight=1),
            drain_row('m2', 'draining', 0),
            drain_row('m3', 'blocked', 1, failed=1)])
        self.assertEqual((2.0, 0.0, 1.0), (
            self.hosts('draining'), self.hosts('drained'),
            self.hosts('blocked')))
        self.assertEqual(
            (3.0, 0.0, 1.0), tuple(self.value(
                'nova_drs_maintenance_instances_left', host=host)
                for host in ('m1', 'm2', 'm3')))
        moves = {(host, status): self.value(
            'nova_drs_maintenance_moves', host=host, status=status)
            for host in ('m1', 'm3')
            for status in ('completed', 'failed', 'in_flight')}
        self.assertEqual({('m1', 'completed'): 2.0, ('m1', 'failed'): 0.0,
                          ('m1', 'in_flight'): 1.0,
                          ('m3', 'completed'): 0.0, ('m3', 'failed'): 1.0,
                          ('m3', 'in_flight'): 0.0}, moves)

    def test_no_count_until_the_leader_reports_one(self):
        self.telemetry.maintenance([
            drain_row('m1', 'draining', progress=False),
            drain_row('m2', 'draining')])
        self.assertEqual(2.0, self.hosts('draining'))
        for host in ('m1', 'm2'):
            self.assertIsNone(self.value(
                'nova_drs_maintenance_instances_left', host=host))
            self.assertEqual(0.0, self.value(
                'nova_drs_maintenance_moves', host=host, status='completed'))

    def test_queued_hosts_counted_apart_without_drain_series(self):
        self.telemetry.maintenance([
            drain_row('m1', 'draining', 3),
            drain_row('q1', 'queued', progress=False),
            drain_row('q2', 'queued', progress=False)])
        self.assertEqual((1.0, 2.0), (self.hosts('draining'),
                                      self.hosts('queued')))
        for host in ('q1', 'q2'):
            self.assertIsNone(self.value(
                'nova_drs_maintenance_instances_left', host=host))
            self.assertIsNone(self.value(
                'nova_drs_maintenance_moves', host=host, status='completed'))
        self.telemetry.maintenance([])
        self.assertEqual(0.0, self.hosts('queued'))

    def test_each_report_replaces_the_last(self):
        self.telemetry.maintenance([drain_row('m1', 'draining', 3,
                                              completed=1),
                                    drain_row('m2', 'drained', 0)])
        self.telemetry.maintenance([drain_row('m2', 'drained', 0)])
        self.assertEqual((0.0, 1.0), (self.hosts('draining'),
                                      self.hosts('drained')))
        self.assertIsNone(self.value('nova_drs_maintenance_instances_left',
                                     host='m1'))
        self.assertIsNone(self.value('nova_drs_maintenance_moves',
                                     host='m1', status='completed'))
        self.telemetry.maintenance([])
        self.assertEqual((0.0, 0.0, 0.0), (
            self.hosts('draining'), self.hosts('drained'),
            self.hosts('blocked')))
        self.assertIsNone(self.value('nova_drs_maintenance_instances_left',
                                     host='m2'))

    def test_cleared_when_no_longer_leader(self):
        self.telemetry.leader(True)
        self.telemetry.maintenance([drain_row('m1', 'blocked', 2, failed=1)])
        self.telemetry.leader(True)
        self.assertEqual(1.0, self.hosts('blocked'))
        self.assertEqual(2.0, self.value(
            'nova_drs_maintenance_instances_left', host='m1'))
        self.telemetry.leader(False)
        self.assertIsNone(self.hosts('blocked'))
        self.assertIsNone(self.value('nova_drs_maintenance_instances_left',
                                     host='m1'))
        self.assertIsNone(self.value('nova_drs_maintenance_moves',
                                     host='m1', status='failed'))
