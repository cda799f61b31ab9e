"""The Prometheus source's contention queries: parsing and fallback.

The answers are given per query (``query`` patched); the default queries
against a real Prometheus are in tests/functional/telemetry.
"""

import types
from unittest import mock

import fixtures
from nova import test

from nova_drs_scheduler import conf
from nova_drs_scheduler import log_once
from nova_drs_scheduler.rebalance.sources import base
from nova_drs_scheduler.rebalance.sources import prometheus

LOG_NAME = 'nova_drs_scheduler.rebalance.sources.prometheus'


def node(host, value):
    return {'instance': f'{host}:9100'}, value


def domain(uuid, value):
    return {'instance_id': uuid}, value


class ContentionTest(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        log_once.reset()
        self.flags(host_cpu_query='cpu', host_ram_query='',
                   host_contention_query='wait', instance_cpu_query='load',
                   instance_contention_query='vcpu_wait',
                   group='drs_prometheus')
        self.answers = {
            'cpu': [node('h1', 100.0), node('h2', 100.0), node('h3', 60.0),
                    node('h4', 100.0)],
            'wait': [node('h1', 3.5), node('h2', float('nan')),
                     node('h4', -1.0), node('h9', 2.0)],
            'load': [domain('a', 1.0), domain('b', 2.0)],
            'vcpu_wait': [domain('a', 0.5), domain('b', 3.0)],
        }
        self.source = prometheus.PrometheusSource(conf.CONF)
        self.useFixture(fixtures.MockPatchObject(
            self.source, 'query', side_effect=self.answer))

    def answer(self, promql):
        found = self.answers[promql]
        if isinstance(found, Exception):
            raise found
        return found

    def test_hosts_with_a_valid_series_have_their_contention(self):
        with self.assertLogs(LOG_NAME, level='INFO') as logs:
            samples = self.source.host_samples(None, ['h1', 'h2', 'h3',
                                                      'h4'])
        self.assertEqual({'h1': 3.5, 'h2': None, 'h3': None, 'h4': None},
                         {h: s.cpu_waiting for h, s in samples.items()})
        # Every host is still judged on its CPU.
        self.assertEqual({100.0, 60.0},
                         {s.cpu_percent for s in samples.values()})
        text = '\n'.join(logs.output)
        self.assertIn('WARNING', text)
        for host, why in (('h2', 'invalid'), ('h4', 'invalid'),
                          ('h3', 'no CPU contention series')):
            self.assertIn(f'Host {host}: ', text)
            self.assertIn(why, text)
        self.assertNotIn('h1', text)

    def test_a_failing_contention_query_falls_back_for_every_host(self):
        self.answers['wait'] = base.MetricsUnavailable('bad_data')
        with self.assertLogs(LOG_NAME, level='WARNING') as logs:
            samples = self.source.host_samples(None, ['h1', 'h3'])
        self.assertEqual({'h1': None, 'h3': None},
                         {h: s.cpu_waiting for h, s in samples.items()})
        self.assertIn('bad_data', logs.output[0])

    def test_a_failing_cpu_query_still_skips_the_period(self):
        self.answers['cpu'] = base.MetricsUnavailable('down')
        self.assertRaises(base.MetricsUnavailable,
                          self.source.host_samples, None, ['h1'])

    def test_off_when_its_query_is_empty(self):
        self.flags(host_contention_query='', instance_contention_query='',
                   group='drs_prometheus')
        source = prometheus.PrometheusSource(conf.CONF)
        with mock.patch.object(source, 'query', side_effect=self.answer):
            samples = source.host_samples(None, ['h1'])
            waits = source.instance_waits(None, [instance('a', 2)])
        self.assertIsNone(samples['h1'].cpu_waiting)
        self.assertEqual({}, waits)

    def test_instance_waits_within_its_vcpus(self):
        # b waits 3 cores with 2 vCPUs: nonsense, left out.
        with self.assertLogs(LOG_NAME, level='WARNING') as logs:
            measured = self.source.instance_loads_within(
                None, [instance('a', 2), instance('b', 2)], None)
        self.assertEqual({'a': 1.0, 'b': 2.0}, dict(measured.loads))
        self.assertEqual({'a': 0.5}, dict(measured.waits))
        self.assertIn('Instance b: ignoring invalid vCPU wait',
                      logs.output[0])

    def test_a_failing_instance_query_measures_no_wait(self):
        self.answers['vcpu_wait'] = base.MetricsUnavailable('bad_data')
        measured = self.source.instance_loads_within(
            None, [instance('a', 2)], None)
        self.assertEqual(({'a': 1.0}, {}),
                         (dict(measured.loads), dict(measured.waits)))


def instance(uuid, vcpus):
    return types.SimpleNamespace(uuid=uuid, vcpus=vcpus, host='h1')
