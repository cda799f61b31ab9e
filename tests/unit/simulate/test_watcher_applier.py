"""Watcher's applier: layers of two, each after the slower of the one
before, as Watcher's polls see them end (no Watcher needed)."""

import functools
import heapq
import itertools
import types

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import links
from nova_drs_scheduler.simulate import traces
from nova_drs_scheduler.simulate import watcher_applier


class Clock:
    """Plays an applier as the engine does: a migration ends ``seconds``
    after it starts (None: Nova refuses it), and the applier runs at each
    end and at each wake it asks for."""

    def __init__(self, seconds, location=None):
        self.seconds = seconds
        self.cluster = types.SimpleNamespace(
            location=location or dict.fromkeys(seconds, 'm'))
        self.now = 0.0
        self.started = []
        self._events = []
        self._order = itertools.count()

    def start(self, name, destination):
        self.started.append((name, destination, self.now))
        if self.seconds[name] is None:
            return None
        migration = links.Migration(name, 'm', destination, 1024, self.now)
        heapq.heappush(self._events, (self.now + self.seconds[name],
                                      next(self._order), migration))
        return migration

    def wake(self, at):
        heapq.heappush(self._events, (at, next(self._order), None))

    def play(self, applier, at):
        self.now = at
        applier.run(self)
        while self._events:
            self.now, _, migration = heapq.heappop(self._events)
            if migration is not None:
                migration.end = self.now
            applier.run(self)


class ApplierTest(testtools.TestCase):

    def test_the_next_layer_waits_for_the_slower_one(self):
        applier = watcher_applier.Applier()
        applier.add([(n, 'm', None) for n in ('a', 'b', 'c', 'd', 'e')],
                    0.0)
        clock = Clock({'a': 2.0, 'b': 11.0, 'c': 4.0, 'd': 5.0, 'e': 1.0})
        clock.play(applier, 0.0)
        # b ends at 11 s, seen at the poll of 15 s; d at 20 s.
        self.assertEqual([('a', None, 0.0), ('b', None, 0.0),
                          ('c', None, 15.0), ('d', None, 15.0),
                          ('e', None, 20.0)], clock.started)

    def test_refused_and_skipped_actions_end_at_once(self):
        applier = watcher_applier.Applier()
        applier.add([('gone', 'm', None), ('refused', 'm', None),
                     ('c', 'm', None)], 10.0)
        clock = Clock({'refused': None, 'c': 1.0},
                      location={'gone': 'elsewhere', 'refused': 'm',
                                'c': 'm'})
        clock.play(applier, 10.0)
        # 'gone' is no longer on the node: skipped, never started.
        self.assertEqual([('refused', None, 10.0), ('c', None, 10.0)],
                         clock.started)

    def test_busy_until_the_last_poll(self):
        applier = watcher_applier.Applier()
        applier.add([('a', 'm', None)], 0.0)
        self.assertTrue(applier.busy(0.0))
        clock = Clock({'a': 6.0})
        clock.play(applier, 0.0)
        # Ended at 6 s, seen at 10 s.
        self.assertEqual((True, False), (applier.busy(9.0),
                                         applier.busy(10.0)))


class QueuedLayerTest(testtools.TestCase):
    """The applier on the engine: both of a layer leave one host, so
    Nova's compute copies them one after the other."""

    def test_a_layer_off_one_host_copies_in_turn(self):
        # Six idle 1 GiB VMs, two per host (vm0 and vm3 on host-0); 1 GiB
        # copies in 1 s.
        trace = traces.Trace(tuple(f'vm{i}' for i in range(6)),
                             ((0.0,) * 6,) * 3, 60)
        vms = cluster.assign_flavors(trace.names,
                                     (cluster.Flavor('f', 1, 1024),), 0)
        spec = cluster.ClusterSpec(hosts=3, host_vcpus=4,
                                   host_memory_mb=8192,
                                   bandwidth_mbps=8 * 1024 * 1.048576)
        config = model.PlannerConfig()
        settings = engine.Settings(config, functools.partial(
            metrics.MetricsWindows, 1, 1, 60, 80.0, 90.0))
        started = []

        class Applied:
            name = 'applied'

            def __init__(self):
                self.applier = watcher_applier.Applier()

            def plan(self, view):
                if view.period == 1:
                    self.applier.add([('vm0', 'host-0', 'host-1'),
                                      ('vm3', 'host-0', 'host-2'),
                                      ('vm1', 'host-1', 'host-2')],
                                     view.now)
                return self.react(view)

            def react(self, view):
                self.applier.run(view)
                started.extend(m for m in view.cluster.inflight.values()
                               if m not in started)
                return [], 0.0, 0.0

        engine.run(trace, vms, spec, Applied(), settings)
        # vm3 waits in host-0's queue while vm0 copies; Watcher sees the
        # layer done at its poll of 65 s, and vm1 leaves then.
        self.assertEqual([('vm0', 60.0, 60.0, 61.0),
                          ('vm3', 60.0, 61.0, 62.0),
                          ('vm1', 65.0, 65.0, 66.0)],
                         [(m.vm, m.start, m.copying, m.end)
                          for m in started])
