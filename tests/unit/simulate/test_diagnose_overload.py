"""tools/diagnose_overload.py: the planner's notes read back as reasons,
and every overloaded host-period of a replay classified once."""

import functools
import importlib.util
import os

import testtools

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import traces
from tests import snapshots as h

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))), 'tools',
    'diagnose_overload.py')


def _tool():
    """The script as a module (``tools/`` is no package)."""
    spec = importlib.util.spec_from_file_location('diagnose_overload', TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _detail(plan, host):
    """The detail of the planner's note on ``host``."""
    prefix = f'host {host}: violated, no move: '
    notes = [n for n in plan.notes if n.startswith(prefix)]
    return notes[0][len(prefix):]


class ReasonTest(testtools.TestCase):
    """Notes made by the planner itself, so a change of their wording
    that the tool would misread fails here."""

    def setUp(self):
        super().setUp()
        self.tool = _tool()

    def test_rate_limit(self):
        hosts = [h.host('hot', 95.0, counter=1), h.host('warm', 90.0,
                                                      counter=1),
                 h.host('a', 10.0), h.host('b', 10.0)]
        instances = [h.instance('i1', 'hot', 2.0),
                     h.instance('i2', 'warm', 2.0)]
        plan = planner.plan(h.snapshot(hosts, instances,
                                       max_migrations_per_period=1),
                            h.allow_all)
        self.assertEqual('limit:per-period',
                         self.tool.reason(_detail(plan, 'warm')))

    def test_no_destination_within_margin(self):
        # A cool pool ('idle', which a filter refuses, cools it): the
        # margin is the whole reason.
        hosts = [h.host('hot', 95.0, counter=1), h.host('a', 70.0),
                 h.host('idle', 0.0)]
        plan = planner.plan(h.snapshot(hosts, [h.instance('i1', 'hot', 2.0)]),
                            h.allow_except({'idle': 'CoreFilter'}))
        self.assertEqual('no destination: margin',
                         self.tool.reason(_detail(plan, 'hot')))

    def test_no_destination_inside_the_margin_either(self):
        # A warm pool: the second pass refused 'a' (90 %) and 'back' (an
        # instance of 'hot' came from it).
        hosts = [h.host('hot', 95.0, counter=1), h.host('a', 70.0),
                 h.host('back', 60.0)]
        instances = [h.instance('i1', 'hot', 2.0),
                     h.instance('i0', 'hot', 0.1, left=('back',))]
        plan = planner.plan(h.snapshot(hosts, instances), h.allow_all)
        self.assertEqual('no destination: margin; inside it: '
                         'came-from+graded-margin',
                         self.tool.reason(_detail(plan, 'hot')))

    def test_no_destination_past_the_threshold_either(self):
        # 'hot' is far past its CPUs: the last stage refused 'a' (it
        # would end at 98 %, near full) after the margin and, inside it,
        # its threshold did.
        hosts = [h.host('hot', 115.0, counter=1), h.host('a', 78.0)]
        plan = planner.plan(
            h.snapshot(hosts, [h.instance('i1', 'hot', 2.0)]), h.allow_all)
        self.assertEqual('no destination: margin; inside it: '
                         'graded-margin; past it: near-full',
                         self.tool.reason(_detail(plan, 'hot')))

    def test_filters_are_not_the_reason(self):
        hosts = [h.host('hot', 95.0, counter=1), h.host('a', 70.0),
                 h.host('b', 10.0)]
        plan = planner.plan(
            h.snapshot(hosts, [h.instance('i1', 'hot', 2.0)]),
            h.allow_except({'b': 'CoreFilter'}))
        self.assertEqual('no destination: margin',
                         self.tool.reason(_detail(plan, 'hot')))

    def test_every_instance_too_small(self):
        hosts = [h.host('hot', 83.0, counter=1), h.host('a', 10.0)]
        instances = [h.instance(f'i{n}', 'hot', 0.1) for n in range(3)]
        plan = planner.plan(h.snapshot(hosts, instances), h.allow_all)
        self.assertEqual('every instance below min-improvement',
                         self.tool.reason(_detail(plan, 'hot')))

    def test_blocked_instances(self):
        hosts = [h.host('hot', 95.0, counter=1), h.host('a', 10.0)]
        instances = [h.instance('i1', 'hot', 2.0, blocked='cooldown')]
        plan = planner.plan(h.snapshot(hosts, instances), h.allow_all)
        self.assertEqual('no movable instance',
                         self.tool.reason(_detail(plan, 'hot')))


class ReplayTest(testtools.TestCase):
    """Two hosts of 4 CPUs; spread placement puts vm0 and vm2 on host-0,
    vm1 on host-1 (2-vCPU flavors)."""

    @staticmethod
    def _replay(trace, vcpus, hosts, host_vcpus, memory_mb):
        """``(recorder, result)`` of ``balanced`` on one flavor's VMs."""
        config = model.PlannerConfig()
        vms = cluster.assign_flavors(
            trace.names, (cluster.Flavor('f', vcpus, 1024),), 0)
        spec = cluster.ClusterSpec(hosts=hosts, host_vcpus=host_vcpus,
                                   host_memory_mb=memory_mb,
                                   cpu_allocation_ratio=4.0)
        windows = functools.partial(
            metrics.MetricsWindows, 1, 1, 180, config.cpu_threshold,
            config.ram_threshold)
        recorder = _tool().Recorder(config, 'balanced')
        result = engine.run(trace, vms, spec, recorder,
                            engine.Settings(config, windows))
        return recorder, result

    def _run(self, hosts, *steps):
        recorder, result = self._replay(
            traces.Trace(('vm0', 'vm1', 'vm2'), steps, 60), 2, hosts, 4, 8192)
        recorder.finish()
        self.assertEqual(sum(recorder.counts.values()),
                         result.card.summary()['overloaded_host_periods'])
        self.caused = result.card.caused_series
        return recorder

    def test_no_destination_at_all(self):
        recorder = self._run(1, *((100.0, 0.0, 100.0),) * 3)
        self.assertEqual({'first: from below margin': 1,
                          'no move: no destination: none allowed': 2},
                         dict(recorder.counts))
        self.assertEqual({3: 1}, dict(recorder.episodes))

    def test_an_arrival_that_overloads_its_destination(self):
        # host-0 (vm0 80 %, vm2 90 % of 2 vCPUs: 85 %) sends vm0 to
        # host-1 (10 %), which is at 50 % after it.  Then host-1's own
        # vm1 goes to 100 %: 90 % with vm0, 50 % without; vm0 is in
        # cooldown and vm1 fits nowhere within the margin.
        recorder = self._run(2, (80.0, 20.0, 90.0), (80.0, 100.0, 90.0),
                             (80.0, 100.0, 90.0))
        self.assertEqual({'first: from below margin': 1,
                          'first: after an arrival': 1,
                          'no move: no destination: margin': 1},
                         dict(recorder.counts))
        self.assertEqual({1: 1, 2: 1}, dict(recorder.episodes))
        # The simulator's own DRS-caused count: the arrival's first
        # period and the one after.
        self.assertEqual([0, 1, 1], self.caused)

    def test_moves_inside_the_margin_are_counted(self):
        # Three hosts of 10 CPUs, two 8-vCPU VMs each (0.8 point per
        # percent): host-0 at 8 + 77 = 85 %, host-1 at 72 %, host-2 at
        # 70 %, a warm pool.  vm0 (8 points) goes to host-2, inside the
        # margin; the markdown says so.
        tool = _tool()
        recorder, result = self._replay(
            traces.Trace(tuple(f'vm{i}' for i in range(6)),
                         ((10.0, 45.0, 43.75, 96.25, 45.0, 43.75),) * 3, 60),
            8, 3, 10, 65536)
        self.assertEqual({'planned': 1, 'inside the margin': 1,
                          'past the threshold': 0},
                         dict(recorder.moves))
        table = tool.markdown([{
            'label': 'seed 1', 'summary': result.card.summary(),
            'counts': dict(recorder.counts), 'moves': dict(recorder.moves),
            'episodes': {}}])
        self.assertIn('| planned moves inside the margin | 1 of 1 |', table)
        self.assertIn("| of those, past the destination's threshold | 0 |",
                      table)
