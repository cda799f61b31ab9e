"""The planner's data: immutable, copied cheaply, written as plain JSON."""

import dataclasses
import json

import testtools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from tests import snapshots as h


class ModelTest(testtools.TestCase):

    def test_snapshots_and_plans_cannot_be_changed_in_place(self):
        """The planner shares them between periods and policies."""
        move = model.Move('i1', 'a', 'b', 'r', {})
        for value, field in (
                (model.PlannerConfig(), 'margin'),
                (h.host('a', 1.0), 'counter'),
                (h.instance('i1', 'a', 1.0), 'blocked'),
                (h.snapshot([], []), 'inflight_total'),
                (model.Rejection('a', 'rule'), 'detail'),
                (model.Candidates(allowed=[]), 'allowed'),
                (move, 'destination'),
                (model.HostVerdict('a', False, ''), 'counter'),
                (model.Drain('a', 0), 'instances'),
                (model.Plan(moves=[move], hosts=[]), 'policy')):
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              value, field, 1)

    def test_loaded_is_a_copy_with_only_the_load_changed(self):
        original = h.instance('i1', 'a', 1.0, name='vm', blocked='why',
                              left=('b',))
        copy = original.loaded(2.5)
        self.assertEqual(dataclasses.replace(original, cpu_cores=2.5), copy)
        self.assertEqual(1.0, original.cpu_cores)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, copy,
                          'cpu_cores', 3.0)

    def test_plan_as_plain_json(self):
        plan = model.Plan(
            moves=(model.Move('i1', 'a', 'b', 'r', {'source_cpu': 50.0},
                              alternatives=({'instance': 'i2'},),
                              rejected=[model.Rejection('c', 'margin')]),),
            hosts=[model.HostVerdict('a', True, 'hot', window=(1.0, 2.0))],
            notes=('n',), policy='balanced')
        data = plan.to_dict()
        self.assertEqual(
            {'instance': 'i1', 'source': 'a', 'destination': 'b',
             'reason': 'r', 'expected': {'source_cpu': 50.0},
             'alternatives': [{'instance': 'i2'}],
             'rejected': [{'subject': 'c', 'rule': 'margin', 'detail': ''}],
             'memory_mb': 0, 'goal': 'balance', 'migration': 'live',
             'resources': {}},
            data['moves'][0])
        self.assertEqual([], data['drains'])
        self.assertEqual([1.0, 2.0], data['hosts'][0]['window'])
        self.assertEqual((['n'], 'balanced'), (data['notes'], data['policy']))
        line = plan.to_json()
        self.assertEqual(data, json.loads(line))
        self.assertEqual(json.dumps(data, sort_keys=True,
                                    separators=(',', ':')), line)
        # Power management's plan only when it planned.
        self.assertNotIn('power', data)
        powered = dataclasses.replace(plan, power={'pools': []})
        self.assertEqual({'pools': []}, powered.to_dict()['power'])

    def test_unset_counts_are_none(self):
        """A snapshot built without in-flight migrations or a host's
        counter (the CLI, the simulator's adapters) has none of them."""
        hosts = [model.HostSnapshot('warm', 10, 10000, 95.0, None),
                 h.host('hot', 95.0, counter=1), h.host('a', 0.0),
                 h.host('b', 0.0)]
        instances = [h.instance(f'i{n}', 'hot', 1.0) for n in range(3)]
        snapshot = model.Snapshot(
            hosts={host.name: host for host in hosts}, instances=instances,
            config=model.PlannerConfig(
                max_concurrent_migrations=1,
                max_concurrent_migrations_per_host=2))
        result = planner.plan(snapshot, h.allow_all)
        self.assertEqual(['hot'], [m.source for m in result.moves])
        verdicts = {v.host: v for v in result.hosts}
        self.assertEqual((False, 0), (verdicts['warm'].violated,
                                      verdicts['warm'].counter))
        self.assertEqual(0, model.HostVerdict('a', False, '').counter)


class DemandViewTest(testtools.TestCase):
    """Which view a host's unserved demand is judged by, and when it is
    starved in each."""

    def host(self, cpu, contention=None):
        return model.HostSnapshot('h1', 8, 1024, cpu, None,
                                  cpu_contention=contention)

    def test_measured_contention_decides(self):
        # A CPU at 100 % with little wait is busy, not starved; one under
        # 100 % with wait is starved (the CPU reading lags or is capped).
        self.assertFalse(self.host(100.0, 0.5).starved)
        self.assertTrue(self.host(90.0, 12.0).starved)
        self.assertFalse(self.host(90.0, model.STARVED_CONTENTION).starved)
        self.assertEqual(model.CONTENTION, self.host(90.0, 0.0).view)

    def test_without_it_a_cpu_at_100_is_possibly_starved(self):
        self.assertTrue(self.host(100.0).starved)
        # A simulated or uncapped reading past its CPUs.
        self.assertTrue(self.host(108.9).starved)
        self.assertFalse(self.host(99.9).starved)
        self.assertFalse(self.host(None).starved)
        self.assertEqual(model.CPU, self.host(100.0).view)
