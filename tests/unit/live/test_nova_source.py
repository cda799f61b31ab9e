"""The nova metric source: host samples and instance CPU rates."""

import contextlib
import datetime
import threading
import time
import types
from unittest import mock

import fixtures
import testtools
from nova import context as nova_context
from nova import exception
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

    def test_rate_over_a_long_gap(self):
        # Periods were skipped: the rate is over the whole gap.
        self.times = {uuids.a: 10 * 10**9}
        self.loads(100.0, uuids.a)
        self.times = {uuids.a: 160 * 10**9}
        self.assertEqual({uuids.a: 0.5}, self.loads(400.0, uuids.a))

    def test_a_new_instance_does_not_hide_the_others(self):
        self.times = {uuids.a: 10 * 10**9}
        self.loads(100.0, uuids.a)
        # b arrived on the host (no earlier reading) and is read first.
        self.times = {uuids.b: 10**9, uuids.a: 20 * 10**9}
        self.assertEqual({uuids.a: 0.5}, self.loads(120.0, uuids.b, uuids.a))

    def test_counter_gone_back_is_a_new_start(self):
        # A guest rebooted: its CPU time restarted from zero.
        self.times = {uuids.a: 10 * 10**9}
        self.loads(100.0, uuids.a)
        self.times = {uuids.a: 5 * 10**9}
        self.assertEqual({}, self.loads(110.0, uuids.a))
        self.times = {uuids.a: 8 * 10**9}
        self.assertEqual({uuids.a: 0.3}, self.loads(120.0, uuids.a))

    def test_no_time_elapsed_counts_a_millisecond(self):
        self.times = {uuids.a: 10**9}
        self.loads(100.0, uuids.a)
        self.times = {uuids.a: 10**9 + 10**6}
        self.assertEqual({uuids.a: 1.0}, self.loads(100.0, uuids.a))

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
        log = self.useFixture(fixtures.FakeLogger())
        started = time.monotonic()
        measured = self.source.instance_loads_within(
            self.context, instances, 0.2)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(frozenset({'hung'}), measured.late)
        self.assertEqual({uuids.a}, set(measured.loads))
        self.assertIn('no instance diagnostics from host hung within 0.2 s '
                      '([drs] instance_metrics_timeout)', log.output)


UNSET = object()


def cell(name):
    return objects.CellMapping(uuid=getattr(uuids, name), name=name)


class HostSamplesTest(testtools.TestCase):
    """host_samples reads every cell's compute nodes but cell0's."""

    def setUp(self):
        super().setUp()
        objects.register_all()
        with mock.patch('nova.compute.api.API'):
            self.source = nova.NovaSource(cfg.ConfigOpts())

    @staticmethod
    def node(host, cpu):
        metrics = '[]' if cpu is None else jsonutils.dumps([{
            'name': 'cpu.percent', 'value': cpu / 100.0, 'source': 's',
            'timestamp': '2026-11-01T12:00:00'}])
        return objects.ComputeNode(host=host, metrics=metrics)

    def test_first_sampled_node_of_each_wanted_host(self):
        cells = [objects.CellMapping(uuid=objects.CellMapping.CELL0_UUID,
                                     name='cell0'), cell('a'), cell('b')]
        nodes = {
            'cell0': [self.node('h5', 11)],
            'a': [self.node('h1', 42), self.node('h9', 50),
                  self.node('h4', None), self.node('h2', None)],
            # A second node of h1 (ironic); h4's first node had no sample.
            'b': [self.node('h1', 10), self.node('h4', 30),
                  self.node('h3', 20)],
        }
        targeted = []

        @contextlib.contextmanager
        def target_cell(context, cell_mapping):
            targeted.append(cell_mapping.name)
            yield cell_mapping.name
        with mock.patch('nova.objects.CellMappingList.get_all',
                        return_value=cells), \
                mock.patch('nova.context.target_cell', target_cell), \
                mock.patch('nova.objects.ComputeNodeList.get_all',
                           side_effect=lambda cctxt: nodes[cctxt]):
            samples = self.source.host_samples(
                'ctxt', ['h1', 'h2', 'h3', 'h4', 'h5'])
        self.assertEqual({'h1': 42.0, 'h3': 20.0, 'h4': 30.0},
                         {name: sample.cpu_percent
                          for name, sample in samples.items()})
        self.assertEqual(['a', 'b'], targeted)


class DiagnosticsTest(testtools.TestCase):
    """Each host's calls go to the cell its instances were read from,
    with Nova's Instance object of each row."""

    def setUp(self):
        super().setUp()
        objects.register_all()
        with mock.patch('nova.compute.api.API'):
            self.source = nova.NovaSource(cfg.ConfigOpts())
        self.api = self.source.compute_api
        self.context = nova_context.get_admin_context()

    @staticmethod
    def diagnostics(*times):
        """``UNSET``: a vCPU that reports no time field at all."""
        return objects.Diagnostics(cpu_details=[
            objects.CpuDiagnostics(id=n) if time is UNSET else
            objects.CpuDiagnostics(id=n, time=time)
            for n, time in enumerate(times)])

    @staticmethod
    def row(name, host='h1', where=None):
        return types.SimpleNamespace(
            uuid=getattr(uuids, name), host=host, cell=where or cell('a'),
            nova=objects.Instance(uuid=getattr(uuids, name), host=host))

    def test_cpu_time_is_the_sum_of_the_vcpus_that_report_one(self):
        self.api.get_instance_diagnostics.return_value = self.diagnostics(
            5, None, UNSET, 7)
        self.assertEqual(12, self.source._read_cpu_time(
            self.context, self.row('a')))
        self.api.get_instance_diagnostics.return_value = self.diagnostics(
            None, UNSET)
        self.assertIsNone(self.source._read_cpu_time(
            self.context, self.row('a')))
        self.api.get_instance_diagnostics.return_value = self.diagnostics(0)
        self.assertEqual(0, self.source._read_cpu_time(
            self.context, self.row('a')))

    def test_failed_call_is_unmeasured(self):
        self.api.get_instance_diagnostics.side_effect = (
            exception.InstanceInvalidState(
                attr='power_state', instance_uuid=uuids.a, state='shutdown',
                method='get_diagnostics'))
        self.assertIsNone(self.source._read_cpu_time(
            self.context, self.row('a')))

    def test_calls_target_the_rows_cell_on_a_copy(self):
        rows = [self.row('a', where=cell('b')), self.row('b', where=cell('b'))]
        calls = []

        def diagnostics(ctxt, instance):
            calls.append((ctxt.cell_uuid, instance))
            return self.diagnostics(None if instance.uuid == uuids.b else 3)
        self.api.get_instance_diagnostics.side_effect = diagnostics
        with mock.patch('nova.context.set_target_cell',
                        lambda ctxt, mapping: setattr(
                            ctxt, 'cell_uuid', mapping.uuid)), \
                mock.patch('time.time', return_value=50.0):
            readings = self.source._read_host(self.context, rows)
        self.assertEqual({uuids.a: (3, 50.0)}, readings)
        self.assertEqual([(uuids.b, rows[0].nova), (uuids.b, rows[1].nova)],
                         calls)
        self.assertIsNone(self.context.cell_uuid)  # The caller's, untouched.
