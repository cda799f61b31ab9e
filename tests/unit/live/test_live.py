"""Snapshot pieces built from Nova rows: pools, opt-outs, fallbacks."""

import dataclasses
import datetime
import logging
from unittest import mock

import fixtures
import testtools
from nova import objects
from oslo_utils import fixture as utils_fixture
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live


def instance(uuid=uuids.i1, host='h1', vcpus=2, metadata=None,
             extra_specs=None, vm_state='active', task_state=None):
    objects.register_all()
    return objects.Instance(
        uuid=uuid, host=host, vcpus=vcpus, metadata=metadata or {},
        vm_state=vm_state, task_state=task_state,
        flavor=objects.Flavor(vcpus=vcpus, memory_mb=512,
                              extra_specs=extra_specs or {}))


def loaded(text):
    """``text`` as a string read from a database or a config file: equal
    to this module's constants, but not the same object."""
    return ''.join(list(text))


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

    def test_modes_read_from_metadata_and_config(self):
        # Modes come from aggregate metadata and the config file, never
        # from this module's string constants.
        self.assertEqual('a', self.pool(loaded('aggregate'), 'a', 'global'))
        self.assertEqual(live.GLOBAL_POOL,
                         self.pool('global', 'a', loaded('aggregate')))


class HostSnapshotTest(testtools.TestCase):
    """The windows' verdict reaches the planner's host as the live
    service, the CLI and the simulator all give it."""

    def snapshot(self, status, up=True, disabled=False):
        rows = live.HostRows(
            name='h1', node=mock.Mock(vcpus=10, memory_mb=8192),
            service={'disabled': disabled}, cell=None, up=up, aggregates=[])
        settings = aggregate_settings.HostSettings(
            'global', None, 80, 90, False)
        return live.host_snapshot(rows, status, settings,
                                  model.PlannerConfig())

    def test_expected_load_and_spread_of_a_judged_host(self):
        status = metrics.HostStatus('h1', 85.0, None, 2, (85.0,), True,
                                    'over', cpu_expected=70.0,
                                    cpu_deviation=6.0, rise_rate=4.5)
        host = self.snapshot(status)
        self.assertEqual((85.0, 2, 70.0, 6.0, 4.5, 80, True),
                         (host.cpu_percent, host.counter, host.cpu_expected,
                          host.cpu_deviation, host.rise_rate,
                          host.cpu_threshold, host.schedulable))

    def test_power_level_of_its_settings(self):
        rows = live.HostRows(
            name='h1', node=mock.Mock(vcpus=10, memory_mb=8192),
            service={'disabled': False}, cell=None, up=True, aggregates=[])
        for level in ('off', 'manual', 'automatic'):
            settings = aggregate_settings.HostSettings(
                'global', None, 80, 90, False, power_level=level)
            host = live.host_snapshot(rows, None, settings,
                                      model.PlannerConfig())
            self.assertEqual((level, model.ON),
                             (host.power_level, host.power))

    def test_whether_the_loads_moved_off_it_stayed(self):
        self.assertIsNone(self.snapshot(None).loads_stayed)
        rows = live.HostRows(
            name='h1', node=mock.Mock(vcpus=10, memory_mb=8192),
            service={'disabled': False}, cell=None, up=True, aggregates=[])
        host = live.host_snapshot(
            rows, None, aggregate_settings.HostSettings(
                'global', None, 80, 90, False), model.PlannerConfig(),
            loads_stayed=(3, 20))
        self.assertEqual((3, 20), host.loads_stayed)

    def test_contention_in_percent_of_its_cpus(self):
        # 2.5 cores waiting on 10 CPUs: a quarter more demand than CPUs.
        status = metrics.HostStatus('h1', 100.0, None, 1, (100.0,), False,
                                    'over', cpu_waiting=2.5)
        host = self.snapshot(status)
        self.assertEqual((25.0, model.CONTENTION, True),
                         (host.cpu_contention, host.view, host.starved))

    def test_without_contention_it_is_seen_by_its_cpu(self):
        status = metrics.HostStatus('h1', 100.0, None, 1, (100.0,), False,
                                    'over')
        host = self.snapshot(status)
        self.assertEqual((None, model.CPU, True),
                         (host.cpu_contention, host.view, host.starved))

    def test_unjudged_host_has_no_load(self):
        status = metrics.HostStatus('h1', None, None, 0, (), False,
                                    'no sample', cpu_expected=70.0,
                                    cpu_deviation=6.0, rise_rate=4.5,
                                    cpu_waiting=1.0)
        for unjudged in (status, None):
            host = self.snapshot(unjudged)
            self.assertEqual((None, 0, None, None, None, None),
                             (host.cpu_percent, host.counter,
                              host.cpu_expected, host.cpu_deviation,
                              host.rise_rate, host.cpu_contention))


    def test_disabled_or_down_host_takes_no_new_load(self):
        # An operator disables a compute service for maintenance: DRS must
        # not move instances onto it even though it still reports up.
        self.assertEqual(
            (True, False, False, False),
            tuple(self.snapshot(None, up, disabled).schedulable
                  for up, disabled in ((True, False), (True, True),
                                       (False, False), (False, True))))


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
        # vm_state as read from the database, not this module's constant.
        self.assertIsNone(live.instance_blocked(
            instance(vm_state=loaded('active')), facts, None))


class FallbackLoadsTest(testtools.TestCase):

    def test_vcpu_share_of_host_load_for_unmeasured_only(self):
        # 5 busy cores split 4:1:3 over 8 vCPUs, not rounded; 'c' is
        # measured, and coming first it hides none of the others.
        instances = [instance(uuids.c, vcpus=4), instance(uuids.a, vcpus=1),
                     instance(uuids.b, vcpus=3)]
        loads = live.fallback_loads({'h1': host(cpu=50.0)}, instances,
                                    {uuids.c: 0.5})
        self.assertEqual({uuids.a: 0.625, uuids.b: 1.875, uuids.c: 0.5},
                         loads)

    def test_guesses_logged_for_hosts_over_their_threshold_only(self):
        # Only an over-threshold host's instances may be chosen, so only
        # there does the operator need to know a load was guessed.
        log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        live.fallback_loads({'h1': host(counter=0)}, [instance()], {})
        self.assertNotIn('no measured CPU load', log.output)
        live.fallback_loads({'h1': host(counter=2)}, [instance()], {})
        self.assertIn(f'no measured CPU load for 1 instance(s) ({uuids.i1})',
                      log.output)

    def test_unjudged_host_gives_no_share(self):
        loads = live.fallback_loads({'h1': host(cpu=None)}, [instance()], {})
        self.assertEqual({}, loads)


class BuildSnapshotTest(testtools.TestCase):
    """The planner's instances as a period builds them from Nova's rows."""

    def row(self, uuid, host, display_name):
        return live.InstanceRow(
            {'uuid': uuid, 'host': host, 'display_name': display_name,
             'vm_state': 'active', 'task_state': None, 'vcpus': 2},
            live.InstanceFacts(2, 512), None, None)

    def build(self, rows, loads, statuses, trends=None, migrations=(),
              refused=None, stayed=None):
        cloud = live.Cloud(
            hosts={name: live.HostRows(
                name=name, node=mock.Mock(vcpus=10, memory_mb=8192),
                service={'disabled': False}, cell=None, up=True,
                aggregates=[]) for name in ('h1', 'h2')},
            instances={r.uuid: r for r in rows}, migrations=list(migrations))
        settings = dict.fromkeys(('h1', 'h2'), aggregate_settings.HostSettings(
            'global', None, 80, 90, False))
        return live.build_snapshot(cloud, settings, statuses, loads,
                                   model.PlannerConfig(), 3600, 3600, 0,
                                   trends=trends, refused=refused,
                                   stayed=stayed)

    def test_a_move_refused_at_start_quarantines_nothing(self):
        self.useFixture(utils_fixture.TimeFixture(
            datetime.datetime(2026, 1, 1, 12, 30)))
        rows = [self.row(uuids.a, 'h1', 'web'), self.row(uuids.b, 'h1', '')]
        failed = [migration(uuids.m1, uuids.a, 10),
                  migration(uuids.m2, uuids.b, 10)]
        snapshot = self.build(rows, {}, {}, migrations=failed,
                              refused={uuids.a: {'h2': uuids.m1}})
        got = {i.uuid: (i.blocked is None, i.refused)
               for i in snapshot.instances}
        # a's failure was Nova refusing h2 at start: a may move, not to
        # h2; b's was a real failure: quarantined.
        self.assertEqual({uuids.a: (True, ('h2',)),
                          uuids.b: (False, ())}, got)

    def test_each_hosts_loads_stayed(self):
        snapshot = self.build([], {}, {}, stayed={'h1': (4, 21)})
        self.assertEqual({'h1': (4, 21), 'h2': None},
                         {name: host.loads_stayed
                          for name, host in snapshot.hosts.items()})
        self.assertIsNone(self.build([], {}, {}).hosts['h1'].loads_stayed)

    def test_trends_of_the_measured_instances(self):
        judged = metrics.HostStatus('h1', 50.0, None, 0, (50.0,), False, 'ok')
        trends = metrics.LoadTrends(600, 1800)
        trends.update(0, {uuids.a: 1.0})
        trends.update(60, {uuids.a: 2.0})
        snapshot = self.build(
            [self.row(uuids.a, 'h1', 'web'), self.row(uuids.b, 'h1', None)],
            {uuids.a: 2.0}, {'h1': judged}, trends)
        self.assertIs(trends, snapshot.trends)
        self.assertGreater(snapshot.trends[uuids.a][1], 0.0)
        self.assertEqual({}, self.build(
            [self.row(uuids.a, 'h1', 'web')], {}, {'h1': judged}).trends)

    def test_names_and_loads(self):
        judged = metrics.HostStatus('h1', 50.0, None, 0, (50.0,), False, 'ok')
        snapshot = self.build(
            [self.row(uuids.a, 'h1', 'web'), self.row(uuids.b, 'h1', None),
             self.row(uuids.c, 'h2', 'db')],
            {uuids.a: 1.5}, {'h1': judged})
        got = {i.uuid: (i.host, i.name, i.cpu_cores)
               for i in snapshot.instances}
        # b: half of h1's 5 busy cores (its vCPUs' share of the 4 there);
        # c: on h2, which has no sample, so nothing to share: no load.
        self.assertEqual({uuids.a: ('h1', 'web', 1.5),
                          uuids.b: ('h1', '', 2.5),
                          uuids.c: ('h2', 'db', 0.0)}, got)

    def test_rows_are_read_only_and_hash_by_identity(self):
        row = self.row(uuids.a, 'h1', 'web')
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, row,
                          'cell', 'other')
        self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                          row.facts, 'vcpus', 4)
        # Compared and hashed by identity: two reads of one row are two
        # rows, and a row is hashable although its dict row is not.
        self.assertEqual(2, len({row, self.row(uuids.a, 'h1', 'web')}))


def migration(uuid, instance_uuid, minute, user_id=executor.DRS_USER,
              dest='h2', status='error'):
    objects.register_all()
    return objects.Migration(
        uuid=uuid, instance_uuid=instance_uuid, user_id=loaded(user_id),
        source_compute='h1', dest_compute=dest, status=status,
        created_at=datetime.datetime(2026, 1, 1, 12, minute), updated_at=None)


class NeedsAttentionTest(testtools.TestCase):
    """Only an instance a DRS migration left in ERROR is the operator's to
    check: not one in ERROR for another reason, nor one whose latest
    migration someone else started."""

    def test_error_after_the_latest_migration_being_drs(self):
        # One left alone sorts first: the others are still looked at.
        first = '00000000-0000-4000-8000-000000000000'
        states = {uuids.drs: 'error', uuids.no_dest: 'error',
                  first: 'active', uuids.active: 'active',
                  uuids.stopped: 'stopped',
                  uuids.admin: 'error', uuids.zed: 'error',
                  uuids.no_migration: 'error', uuids.operator_last: 'error',
                  uuids.drs_last: 'error'}
        instances = {uuid: instance(uuid, vm_state=loaded(state))
                     for uuid, state in states.items()}
        migrations = [
            migration(uuids.m1, uuids.drs, 1),
            migration(uuids.m2, uuids.no_dest, 1, dest=None),
            migration(uuids.m3, uuids.active, 1, status='completed'),
            migration(uuids.m0, first, 1, status='completed'),
            migration(uuids.m4, uuids.stopped, 1, status='completed'),
            migration(uuids.m5, uuids.admin, 1, user_id='admin'),
            migration(uuids.m6, uuids.zed, 1, user_id='zed'),
            # Newest last in time, not in the list.
            migration(uuids.m8, uuids.operator_last, 5, user_id='admin'),
            migration(uuids.m7, uuids.operator_last, 1),
            migration(uuids.m10, uuids.drs_last, 5),
            migration(uuids.m9, uuids.drs_last, 1, user_id='admin'),
        ]
        cloud = live.Cloud(hosts={}, instances=instances,
                           migrations=migrations)
        self.assertEqual({
            uuids.drs: f'vm_state error after DRS migration {uuids.m1} from '
                       'h1 to h2 ended error: check the instance, then reset '
                       'its state',
            uuids.no_dest: f'vm_state error after DRS migration {uuids.m2} '
                           'from h1 ended error: check the instance, then '
                           'reset its state',
            uuids.drs_last: f'vm_state error after DRS migration {uuids.m10} '
                            'from h1 to h2 ended error: check the instance, '
                            'then reset its state'},
            live.needs_attention(cloud))
