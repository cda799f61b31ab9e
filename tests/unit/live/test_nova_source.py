"""The nova metric source: host samples and instance CPU rates."""

import datetime
import threading
import time
from unittest import mock

import fixtures
import testtools
from nova import objects
from nova.objects import monitor_metric
from oslo_config import cfg
from oslo_serialization import jsonutils
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.rebalance.sources import nova


def node(metrics, memory_mb=8192, used=2048):
    objects.register_all()
    return objects.ComputeNode(host='h1', metrics=metrics,
                               memory_mb=memory_mb, memory_mb_used=used)


class NodeSampleTest(testtools.TestCase):

    def test_cpu_percent_with_its_timestamp(self):
        taken = datetime.datetime(2026, 11, 1, 12, 0, 0)
        metrics = ('[{"name": "cpu.percent", "value": 0.42, "source": "x", '
                   '"timestamp": "%s"}]' % taken.isoformat())
        sample = nova.node_sample(node(metrics))
        self.assertEqual(
            (taken.replace(tzinfo=datetime.timezone.utc).timestamp(), 42.0),
            (sample.timestamp, sample.cpu_percent))

    def test_ram_allocated_is_not_ram_used(self):
        # memory_mb_used is what the resource tracker allocated: at
        # ram_allocation_ratio 1.5 a full host reads 150%, whatever its
        # guests really touch.  Nova measures no guest memory use, so the
        # nova source leaves RAM unknown and hosts are judged on CPU.
        metrics = ('[{"name": "cpu.percent", "value": 0.42, "source": "x", '
                   '"timestamp": "2026-11-01T12:00:00"}]')
        for used in (2048, 8192, 12288):
            sample = nova.node_sample(node(metrics, memory_mb=8192,
                                           used=used))
            self.assertIsNone(sample.ram_percent, used)

    def test_samples_from_the_rows_the_period_read(self):
        metrics = ('[{"name": "cpu.percent", "value": 0.42, "source": "x", '
                   '"timestamp": "2026-11-01T12:00:00"}]')
        with mock.patch('nova.compute.api.API'):
            source = nova.NovaSource(cfg.ConfigOpts())
        hosts = {'h1': mock.Mock(node=node(metrics)),
                 'h2': mock.Mock(node=node('[]'))}
        self.assertEqual({'h1': 42.0}, {
            name: sample.cpu_percent
            for name, sample in source.host_samples_of(None, hosts).items()})

    def test_no_or_bad_metrics(self):
        self.assertIsNone(nova.node_sample(node('[]')))
        self.assertIsNone(nova.node_sample(node('not json')))
        self.assertIsNone(nova.node_sample(node('[{"value": 1}]')))

    def test_cpu_entry_parsed_as_nova_parses_it(self):
        # Only the cpu.percent entry is parsed, with Nova's conversions:
        # the same value and timestamp as MonitorMetricList.from_json,
        # or an error where it fails.
        entries = [
            {'value': 0.42, 'timestamp': '2026-11-01T12:00:00'},
            {'value': 0.905, 'timestamp': '2026-11-01T12:00:00.5+02:00'},
            {'value': 1, 'timestamp': '2026-11-01T12:00:00Z'},
            {'value': 0, 'timestamp': '2026-11-01T12:00:00Z'},
            {'value': 'high', 'timestamp': '2026-11-01T12:00:00Z'},
            {'value': None, 'timestamp': '2026-11-01T12:00:00Z'},
            {'value': 0.5, 'timestamp': 'yesterday'},
            {'value': 0.5, 'timestamp': 1700000000},
            {'value': 0.5, 'timestamp': None},
            {'value': 0.5},
            {'timestamp': '2026-11-01T12:00:00Z'},
        ]
        # Other metrics Nova's CPU monitor reports, named before and
        # after cpu.percent.
        others = [{'name': 'cpu.frequency', 'value': 2400,
                   'timestamp': '2026-11-01T12:00:00Z', 'source': 's'},
                  {'name': 'cpu.user.percent', 'value': 0.1,
                   'timestamp': '2026-11-01T11:00:00Z', 'source': 's'}]
        for entry in entries:
            metrics = jsonutils.dumps(
                others + [dict(entry, name='cpu.percent', source='s')])
            try:
                parsed = monitor_metric.MonitorMetricList.from_json(metrics)
            except (TypeError, ValueError) as exc:
                self.assertRaises(type(exc), nova.cpu_metric, metrics)
                continue
            expected = [m for m in parsed if m.name == 'cpu.percent'][0]
            got = nova.cpu_metric(metrics)
            for field in ('value', 'timestamp'):
                self.assertEqual(
                    getattr(expected, field) if expected.obj_attr_is_set(
                        field) else None,
                    getattr(got, field), (entry, field))


class InstanceLoadsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        with mock.patch('nova.compute.api.API'):
            self.source = nova.NovaSource(cfg.ConfigOpts())
        self.times = {}
        self.source._read_cpu_time = (
            lambda ctx, instance: self.times.get(instance.uuid))
        self.useFixture(fixtures.MockPatch(
            'nova.objects.HostMapping.get_by_host'))
        self.useFixture(fixtures.MockPatch(
            'nova.context.set_target_cell'))
        self.context = mock.Mock()

    def loads(self, clock, *uuids_):
        instances = [mock.Mock(uuid=u, host='h1') for u in uuids_]
        with mock.patch('time.time', return_value=clock):
            return self.source.instance_loads(self.context, instances)

    def test_rate_between_two_calls(self):
        self.times = {uuids.a: 10 * 10**9, uuids.b: 5 * 10**9}
        self.assertEqual({}, self.loads(100.0, uuids.a, uuids.b))
        # a: 30 s of CPU in 20 s: 1.5 cores; b's counter did not advance.
        self.times = {uuids.a: 40 * 10**9, uuids.b: 5 * 10**9}
        self.assertEqual({uuids.a: 1.5}, self.loads(120.0, uuids.a, uuids.b))

    def test_unmeasured_and_forgotten_instances(self):
        self.times = {uuids.a: 10**9}
        self.loads(100.0, uuids.a)
        self.loads(110.0)  # a is gone: its counter is forgotten.
        self.times = {uuids.a: 3 * 10**9}
        self.assertEqual({}, self.loads(120.0, uuids.a))
        self.times = {}
        self.assertEqual({}, self.loads(130.0, uuids.a))

    def test_host_late_at_the_deadline_others_measured(self):
        release = threading.Event()
        self.addCleanup(release.set)

        def read(ctx, instance):
            if instance.host == 'hung':
                release.wait(30)
            self.times[instance.uuid] = self.times.get(
                instance.uuid, 0) + 10**9
            return self.times[instance.uuid]

        self.source._read_cpu_time = read
        instances = [mock.Mock(uuid=uuids.a, host='h1'),
                     mock.Mock(uuid=uuids.b, host='hung')]
        self.source.instance_loads_within(self.context, instances, 0.2)
        started = time.monotonic()
        measured = self.source.instance_loads_within(
            self.context, instances, 0.2)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(frozenset({'hung'}), measured.late)
        self.assertEqual({uuids.a}, set(measured.loads))
