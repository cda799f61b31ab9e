"""What every policy plug-in relies on: pressure, the base class, loading."""

import dataclasses

import testtools

from nova_drs_scheduler.planning import policies
from nova_drs_scheduler.planning.policies import base
from tests import snapshots as h


class PressureTest(testtools.TestCase):
    """Points over the host's own threshold, on its worst resource."""

    def test_worst_resource_against_its_own_threshold(self):
        host = h.host('a', 0.0, cpu_threshold=80.0, ram_threshold=90.0)
        self.assertEqual(5.0, base.pressure(host, 70.0, 95.0))
        self.assertEqual(5.0, base.pressure(host, 85.0, 50.0))
        self.assertEqual(-10.0, base.pressure(host, 70.0, 60.0))
        self.assertEqual(-20.0, base.pressure(host, 60.0, 70.0))

    def test_unknown_ram_leaves_cpu_alone(self):
        host = h.host('a', 0.0, cpu_threshold=80.0, ram_threshold=90.0)
        self.assertEqual(-80.0, base.pressure(host, 0.0, None))


class PolicyPluginTest(testtools.TestCase):

    def test_a_policy_missing_a_decision_cannot_be_loaded(self):
        # A third-party policy that forgets one of the decisions fails when
        # stevedore instantiates it, not in the middle of a period.
        required = {'rank', 'destination', 'key', 'describe'}
        for missing in sorted(required):
            methods = {name: (lambda self, *args: None)
                       for name in required - {missing}}
            incomplete = type('Incomplete', (base.Policy,), methods)
            self.assertRaises(TypeError, incomplete)
        complete = type('Complete', (base.Policy,), {
            name: (lambda self, *args: None) for name in required})
        self.assertIsNone(complete().bound(None, None))

    def test_a_policy_cannot_alter_what_it_is_shown(self):
        # Policies must be pure: the removal and option they rank are the
        # planner's projection, shared with the record.
        host = h.host('a', 50.0)
        removal = base.Removal(h.instance('i1', 'a', 1.0), 40.0, None,
                               -30.0, -40.0)
        option = base.Option(removal, host, 50.0, None, -30.0)
        for shown, field in ((removal, 'after'), (option, 'destination_cpu')):
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              shown, field, 0.0)

    def test_a_policy_is_loaded_once_per_process(self):
        self.assertIs(policies.get('balanced'), policies.get('balanced'))
        self.assertIsNot(policies.get('seed'), policies.get('balanced'))
