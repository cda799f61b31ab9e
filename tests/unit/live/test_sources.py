"""Metric sources: the stevedore loader and the static JSON source."""

import json

import fixtures
from nova import test

from nova_drs_scheduler import conf
from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.rebalance import sources
from nova_drs_scheduler.rebalance.sources import static
from nova_drs_scheduler.testing import fixtures as drs_fixtures
from tests import tempfiles


class Instance:
    def __init__(self, uuid):
        self.uuid = uuid


class StaticSourceTest(test.NoDBTestCase):

    def write(self, data):
        path = tempfiles.write(
            self, data if isinstance(data, str) else json.dumps(data),
            '.json')
        self.flags(metrics_source='static', static_metrics_file=path,
                   group='drs')
        return path

    def test_loaded_through_the_namespace(self):
        self.write({})
        self.assertIsInstance(sources.load(conf.CONF), static.StaticSource)

    def test_unknown_source_names_the_option(self):
        self.flags(metrics_source='nope', group='drs')
        error = self.assertRaises(ValueError, sources.load, conf.CONF)
        self.assertIn('[drs] metrics_source', str(error))

    def test_host_samples_and_instance_loads(self):
        self.write({'timestamp': 1000,
                    'hosts': {'a': {'cpu_percent': 91.5, 'ram_percent': 40},
                              'b': {'cpu_percent': 10, 'timestamp': 900},
                              'bad': {'cpu_percent': 'high'},
                              'unasked': {'cpu_percent': 1}},
                    'instances': {'u1': 1.5, 'u2': 'x'}})
        source = sources.load(conf.CONF)
        self.assertEqual(
            {'a': metrics.HostSample(1000.0, 91.5, 40.0),
             'b': metrics.HostSample(900.0, 10.0, None)},
            source.host_samples(None, ['a', 'b', 'bad', 'missing']))
        self.assertEqual(
            {'u1': 1.5},
            source.instance_loads(None, [Instance('u1'), Instance('u2'),
                                         Instance('u3')]))

    def test_contention_of_hosts_and_instances(self):
        self.write({'hosts': {'a': {'cpu_percent': 100, 'cpu_waiting': 2.5,
                                    'timestamp': 1},
                              'b': {'cpu_percent': 100, 'cpu_waiting': -1,
                                    'timestamp': 1},
                              'c': {'cpu_percent': 100, 'timestamp': 1}},
                    'instances': {'u1': 1.5, 'u2': 1.0},
                    'instance_waits': {'u1': 0.5, 'u2': 'x'}})
        source = sources.load(conf.CONF)
        # A bad value leaves that host seen by its CPU alone.
        self.assertEqual(
            {'a': 2.5, 'b': None, 'c': None},
            {h: s.cpu_waiting for h, s in source.host_samples(
                None, ['a', 'b', 'c']).items()})
        measured = source.instance_loads_within(
            None, [Instance('u1'), Instance('u2')], None)
        self.assertEqual(({'u1': 1.5, 'u2': 1.0}, {'u1': 0.5}),
                         (dict(measured.loads), dict(measured.waits)))

    def test_file_is_reread_on_every_call(self):
        path = self.write({'hosts': {'a': {'cpu_percent': 10,
                                           'timestamp': 1}}})
        source = sources.load(conf.CONF)
        self.assertEqual(10.0, source.host_samples(None, ['a'])['a']
                         .cpu_percent)
        with open(path, 'w') as handle:
            json.dump({'hosts': {'a': {'cpu_percent': 90,
                                       'timestamp': 2}}}, handle)
        self.assertEqual(90.0, source.host_samples(None, ['a'])['a']
                         .cpu_percent)

    def test_missing_timestamp_means_fresh_now(self):
        self.write({'hosts': {'a': {'cpu_percent': 10}}})
        self.useFixture(fixtures.MockPatchObject(
            static.time, 'time', return_value=5000.0))
        sample = sources.load(conf.CONF).host_samples(None, ['a'])['a']
        self.assertEqual(5000.0, sample.timestamp)

    def test_unreadable_file_is_an_error_naming_the_option(self):
        self.write('{not json')
        source = sources.load(conf.CONF)
        error = self.assertRaises(ValueError, source.host_samples, None,
                                  ['a'])
        self.assertIn('[drs] static_metrics_file', str(error))


class StaticMetricsFixtureTest(test.NoDBTestCase):
    """The fixture functional tests feed the static source with."""

    def test_contention_only_where_given(self):
        metrics_file = self.useFixture(
            drs_fixtures.StaticMetricsFixture(conf.CONF))
        self.flags(metrics_source='static', group='drs')
        metrics_file.write({'a': 100, 'b': 100}, {'u1': 2.0},
                           waiting={'a': 1.5}, instance_waits={'u1': 0.5})
        source = sources.load(conf.CONF)
        self.assertEqual({'a': 1.5, 'b': None}, {
            h: s.cpu_waiting
            for h, s in source.host_samples(None, ['a', 'b']).items()})
        self.assertEqual({'u1': 0.5},
                         source.instance_waits(None, [Instance('u1')]))
