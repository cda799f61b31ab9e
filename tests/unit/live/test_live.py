"""Snapshot pieces built from Nova rows: pools, opt-outs, fallbacks."""

from unittest import mock

import testtools
from nova import objects
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import metrics
from nova_drs_scheduler.rebalance import model


def instance(uuid=uuids.i1, host='h1', vcpus=2, metadata=None,
             extra_specs=None, vm_state='active', task_state=None):
    objects.register_all()
    return objects.Instance(
        uuid=uuid, host=host, vcpus=vcpus, metadata=metadata or {},
        vm_state=vm_state, task_state=task_state,
        flavor=objects.Flavor(vcpus=vcpus, memory_mb=512,
                              extra_specs=extra_specs or {}))


def host(name='h1', cpu=80.0, counter=1, vcpus=10):
    return model.HostSnapshot(name=name, vcpus=vcpus, memory_mb=8192,
                              cpu_percent=cpu, ram_percent=None,
                              counter=counter)


class PoolTest(testtools.TestCase):

    def pool(self, mode, pool, config_mode):
        settings = aggregate_settings.HostSettings(mode, pool, 80, 90, False)
        return live.pool(settings, model.PlannerConfig(mode=config_mode))

    def test_pools(self):
        self.assertEqual('a,b', self.pool('aggregate', 'a,b', 'aggregate'))
        self.assertEqual('a', self.pool('aggregate', 'a', 'global'))
        self.assertIsNone(self.pool('global', 'a', 'global'))
        self.assertEqual(live.GLOBAL_POOL,
                         self.pool('global', 'a', 'aggregate'))
        self.assertIsNone(self.pool('aggregate', None, 'aggregate'))


class HostSnapshotTest(testtools.TestCase):
    """The windows' verdict reaches the planner's host as the live
    service, the CLI and the simulator all give it."""

    def snapshot(self, status):
        rows = live.HostRows(
            name='h1', node=mock.Mock(vcpus=10, memory_mb=8192),
            service={'disabled': False}, cell=None, up=True, aggregates=[])
        settings = aggregate_settings.HostSettings(
            'global', None, 80, 90, False)
        return live.host_snapshot(rows, status, settings,
                                  model.PlannerConfig())

    def test_expected_load_and_spread_of_a_judged_host(self):
        status = metrics.HostStatus('h1', 85.0, None, 2, (85.0,), True,
                                    'over', cpu_expected=70.0,
                                    cpu_deviation=6.0)
        host = self.snapshot(status)
        self.assertEqual((85.0, 2, 70.0, 6.0, 80, True),
                         (host.cpu_percent, host.counter, host.cpu_expected,
                          host.cpu_deviation, host.cpu_threshold,
                          host.schedulable))

    def test_unjudged_host_has_no_load(self):
        status = metrics.HostStatus('h1', None, None, 0, (), False,
                                    'no sample', cpu_expected=70.0,
                                    cpu_deviation=6.0)
        for unjudged in (status, None):
            host = self.snapshot(unjudged)
            self.assertEqual((None, 0, None, None),
                             (host.cpu_percent, host.counter,
                              host.cpu_expected, host.cpu_deviation))


class BlockedTest(testtools.TestCase):

    def test_reasons(self):
        facts = live.InstanceFacts(vcpus=2, memory_mb=512)
        self.assertIsNone(live.instance_blocked(instance(), facts, None))
        self.assertIn('instance metadata', live.instance_blocked(
            instance(), live.InstanceFacts(2, 512, instance_opt_out='True'),
            None))
        self.assertIn('flavor extra spec', live.instance_blocked(
            instance(), live.InstanceFacts(2, 512, flavor_opt_out='true'),
            None))
        self.assertIsNone(live.instance_blocked(
            instance(), live.InstanceFacts(2, 512, flavor_opt_out='false',
                                           instance_opt_out='no'), None))
        self.assertIn('not ACTIVE', live.instance_blocked(
            instance(vm_state='stopped'), facts, None))
        self.assertIn('busy', live.instance_blocked(
            instance(task_state='migrating'), facts, None))
        self.assertEqual('cooldown', live.instance_blocked(
            instance(), facts, 'cooldown'))


class FallbackLoadsTest(testtools.TestCase):

    def test_vcpu_share_of_host_load_for_unmeasured_only(self):
        instances = [instance(uuids.a, vcpus=1), instance(uuids.b, vcpus=3),
                     instance(uuids.c, vcpus=4)]
        loads = live.fallback_loads({'h1': host(cpu=80.0)}, instances,
                                    {uuids.c: 0.5})
        # 8 busy cores split 1:3:4 over 8 vCPUs; 'c' is measured.
        self.assertEqual({uuids.a: 1.0, uuids.b: 3.0, uuids.c: 0.5}, loads)

    def test_unjudged_host_gives_no_share(self):
        loads = live.fallback_loads({'h1': host(cpu=None)}, [instance()], {})
        self.assertEqual({}, loads)
