"""Instance loads under the period's deadline: who is late, who is not."""

import threading
import time
from unittest import mock

import futurist
import testtools

from nova_drs_scheduler import concurrency
from nova_drs_scheduler import deadline
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import snapshot_reader
from nova_drs_scheduler.rebalance.sources import base


class GatherTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.release = threading.Event()
        self.addCleanup(self.release.set)

    def test_late_calls_are_not_waited_for(self):
        started = time.monotonic()
        done, late = deadline.gather(
            {'fast': lambda: 1, 'hung': lambda: self.release.wait(30)}, 0.2)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(({'fast': 1}, {'hung'}), (done, late))

    def test_an_error_within_the_deadline_is_raised(self):
        def fail():
            raise base.MetricsUnavailable('down')
        self.assertRaises(base.MetricsUnavailable, deadline.gather,
                          {'a': fail}, 5)

    def test_executor_of_the_process_kind_with_at_most_8_workers(self):
        made = []

        class Executor:
            """Records its workers; runs each call at once."""

            def __init__(self, max_workers):
                made.append(max_workers)

            def submit(self, call):
                future = futurist.Future()
                future.set_result(call())
                return future

        for backend, kind, count, workers in (
                ('eventlet', 'GreenThreadPoolExecutor', 10, 8),
                ('threading', 'ThreadPoolExecutor', 10, 8),
                ('threading', 'ThreadPoolExecutor', 3, 3)):
            made.clear()
            calls = {n: (lambda n=n: n * n) for n in range(count)}
            with mock.patch.object(concurrency, 'backend',
                                   return_value=backend), \
                    mock.patch.object(futurist, kind, Executor):
                self.assertEqual(
                    ({n: n * n for n in range(count)}, set()),
                    deadline.gather(calls, 5))
            self.assertEqual([workers], made)


class Hung(base.MetricsSource):
    """A source measuring all at once (as Prometheus does), hung."""

    def __init__(self, release):
        super().__init__(None)
        self.release = release

    def host_samples(self, context, hosts):
        return {}

    def instance_loads(self, context, instances):
        self.release.wait(30)
        return {}


class Instance:
    def __init__(self, uuid, host):
        self.uuid, self.host, self.vcpus = uuid, host, 2


class DefaultWithinTest(testtools.TestCase):

    def test_whole_call_late_means_every_host_late(self):
        release = threading.Event()
        self.addCleanup(release.set)
        measured = Hung(release).instance_loads_within(
            None, [Instance('a', 'h1'), Instance('b', 'h2')], 0.2)
        self.assertEqual(base.Measured({}, frozenset({'h1', 'h2'})),
                         measured)


def host(name, cpu):
    return model.HostSnapshot(name=name, vcpus=10, memory_mb=8192,
                              cpu_percent=cpu, ram_percent=None,
                              counter=1 if cpu > 80 else 0)


class NotRelievedTest(testtools.TestCase):
    """A late host is violated but keeps its instances; the record names
    it with the rule; a measured hot host is still relieved."""

    def test_late_host_not_relieved(self):
        config = model.PlannerConfig(stabilization=1)
        snapshot = model.Snapshot(
            hosts={'h1': host('h1', 90), 'h2': host('h2', 90),
                   'h3': host('h3', 10)},
            instances=[model.InstanceSnapshot(f'{h}-{n}', h, 2, 512, 4.5)
                       for h in ('h1', 'h2') for n in range(2)],
            config=config)
        snapshot = snapshot_reader.unmeasured(snapshot, frozenset({'h2'}))
        plan = planner.plan(snapshot, lambda inst, snap: model.Candidates(
            allowed=sorted(snap.hosts)))
        rec = record.new_record('automatic', config)
        record.add_plan(rec, snapshot, plan)
        record.add_not_relieved(rec, plan, frozenset({'h2'}), 2.5)
        self.assertEqual(['h1'], [m['source'] for m in rec['moves']])
        self.assertEqual(
            [{'subject': 'h2', 'rule': 'instance_metrics_timeout',
              'detail': 'CPU of its instances not measured within 2.5 s: '
                        'not relieved this period'}], rec['not_relieved'])
        self.assertEqual(record.NOT_MEASURED_BLOCK, rec['blocked']['h2-0'])
        self.assertNotIn('h1-0', rec['blocked'])
