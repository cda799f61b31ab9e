"""How the instances of a host in maintenance reach the planner: what
holds each back, whether that passes by itself, and how it moves."""

import datetime
from unittest import mock

import testtools
from nova import objects
from oslo_utils import fixture as utils_fixture
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import recent_moves
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.rebalance import executor
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import recommendations
from nova_drs_scheduler.rebalance import snapshot_reader
from tests import snapshots as h

NOW = datetime.datetime(2026, 11, 1, 12, 0, 0)
FACTS = live.InstanceFacts(vcpus=2, memory_mb=512)
OPTED_OUT = live.InstanceFacts(2, 512, instance_opt_out='true')
DOWN = ('the host\'s nova-compute service is down: nothing can migrate '
        'off it (evacuate it instead)')


def instance(vm_state='active', task_state=None):
    """A row's instance, its states spelled as read from the database."""
    return mock.Mock(vm_state=h.fresh(vm_state),
                     task_state=task_state and h.fresh(task_state))


def blocked(vm_state='active', task_state=None, facts=FACTS, up=True,
            reason=None, kind=None):
    return live.drain_blocked(instance(vm_state, task_state), facts, up,
                              reason, kind and h.fresh(kind))


class DrainMigrationsTest(testtools.TestCase):

    def test_active_and_paused_live_stopped_cold_nothing_else(self):
        self.assertEqual({'active': model.LIVE, 'paused': model.LIVE,
                          'stopped': model.COLD}, live.DRAIN_MIGRATIONS)
        self.assertEqual(('live', 'cold'), (model.LIVE, model.COLD))


class DrainBlockedTest(testtools.TestCase):

    def test_free_instances_move_by_their_state(self):
        self.assertEqual((None, False, model.LIVE), blocked('active'))
        self.assertEqual((None, False, model.LIVE), blocked('paused'))
        self.assertEqual((None, False, model.COLD), blocked('stopped'))

    def test_a_move_in_flight_is_waited_for_whatever_else(self):
        for vm_state, up in (('active', True), ('stopped', True),
                             ('error', True), ('active', False)):
            self.assertEqual(
                ('migrating m -> a', True, model.LIVE),
                blocked(vm_state, up=up, reason='migrating m -> a',
                        kind=recent_moves.IN_FLIGHT, facts=OPTED_OUT))

    def test_compute_down_blocks_every_instance(self):
        for vm_state in ('active', 'stopped', 'error'):
            self.assertEqual((DOWN, False, model.LIVE),
                             blocked(vm_state, up=False))
        self.assertEqual((DOWN, False, model.LIVE),
                         blocked('active', 'migrating', up=False))

    def test_a_state_a_drain_cannot_move_blocks(self):
        for vm_state in ('error', 'suspended', 'shelved', 'rescued',
                         'resized', 'building'):
            self.assertEqual(
                (f'vm_state {vm_state}: a drain moves active, paused and '
                 f'stopped instances only', False, model.LIVE),
                blocked(vm_state, task_state='migrating'))

    def test_a_task_running_is_transient(self):
        self.assertEqual(('busy (task_state powering-off)', True,
                          model.LIVE), blocked('active', 'powering-off'))
        self.assertEqual(('busy (task_state powering-on)', True,
                          model.COLD),
                         blocked('stopped', 'powering-on',
                                 reason='quarantine: x',
                                 kind=recent_moves.QUARANTINE,
                                 facts=OPTED_OUT))

    def test_quarantine_blocks(self):
        self.assertEqual(
            ('quarantine: failed', False, model.COLD),
            blocked('stopped', reason='quarantine: failed',
                    kind=recent_moves.QUARANTINE, facts=OPTED_OUT))
        self.assertEqual(
            ('quarantine: failed', False, model.LIVE),
            blocked('paused', reason='quarantine: failed',
                    kind=recent_moves.QUARANTINE))

    def test_a_cooldown_does_not_hold_a_drain_back(self):
        self.assertEqual((None, False, model.LIVE), blocked(
            reason='cooldown: moved', kind=recent_moves.COOLDOWN))
        self.assertEqual((None, False, model.COLD), blocked(
            'stopped', reason='cooldown: moved', kind=recent_moves.COOLDOWN))
        # An opt-out still does.
        self.assertEqual(
            ('opted out: instance metadata drs_exclude=true', False,
             model.LIVE),
            blocked(reason='cooldown: moved', kind=recent_moves.COOLDOWN,
                    facts=OPTED_OUT))

    def test_opt_out_blocks(self):
        self.assertEqual(
            ('opted out: flavor extra spec drs:exclude=true', False,
             model.COLD),
            blocked('stopped', facts=live.InstanceFacts(
                2, 512, flavor_opt_out='True')))
        self.assertEqual((None, False, model.LIVE), blocked(
            facts=live.InstanceFacts(2, 512, flavor_opt_out='false')))


def host_rows(name, up=True, disabled=False):
    return live.HostRows(
        name=name, node=mock.Mock(vcpus=10, memory_mb=8192),
        service={'disabled': disabled}, cell=None, up=up, aggregates=[])


def settings(automation_off=False):
    return aggregate_settings.HostSettings(
        'global', None, 80, 90, False, automation_off=automation_off)


class HostSnapshotTest(testtools.TestCase):

    def test_draining_only_when_asked(self):
        rows = host_rows('m', disabled=True)
        config = model.PlannerConfig()
        self.assertFalse(live.host_snapshot(
            rows, None, settings(), config).draining)
        host = live.host_snapshot(rows, None, settings(), config, True)
        self.assertEqual((True, False), (host.draining, host.schedulable))

    def test_queued_only_when_asked(self):
        rows = host_rows('q')
        config = model.PlannerConfig()
        self.assertFalse(live.host_snapshot(
            rows, None, settings(), config).queued)
        host = live.host_snapshot(rows, None, settings(), config,
                                  queued=True)
        # A queued host stays in service until its turn.
        self.assertEqual((True, False, True),
                         (host.queued, host.draining, host.schedulable))

    def test_automation_off_comes_from_the_settings(self):
        config = model.PlannerConfig()
        self.assertEqual((True, False), tuple(
            live.host_snapshot(host_rows('a'), None, settings(off),
                               config).automation_off
            for off in (True, False)))


def migration(uuid, instance_uuid, status, age, user_id=executor.DRS_USER):
    objects.register_all()
    changed = NOW - datetime.timedelta(seconds=age)
    return objects.Migration(
        uuid=uuid,
        instance_uuid=instance_uuid, user_id=user_id, source_compute='m',
        dest_compute='a', status=status, created_at=changed,
        updated_at=changed)


class BuildSnapshotTest(testtools.TestCase):
    """Instances on a draining host get the drain's rules; the others
    keep balancing's."""

    def setUp(self):
        super().setUp()
        self.useFixture(utils_fixture.TimeFixture(NOW))
        self.up = {'m': True, 'n': True, 'a': True}

    def row(self, uuid, host, vm_state='active', task_state=None,
            facts=FACTS):
        return live.InstanceRow(
            {'uuid': uuid, 'host': host, 'display_name': 'vm',
             'vm_state': h.fresh(vm_state), 'task_state': task_state,
             'vcpus': 2}, facts, None, None)

    def build(self, rows, migrations=(), draining=frozenset({'m'})):
        cloud = live.Cloud(
            hosts={name: host_rows(name, up=up, disabled=name in draining)
                   for name, up in self.up.items()},
            instances={r.uuid: r for r in rows}, migrations=list(migrations))
        snapshot = live.build_snapshot(
            cloud, dict.fromkeys(self.up, settings()), {}, {},
            model.PlannerConfig(), 600, 3600, 0, draining=draining)
        return snapshot, {i.uuid: (i.blocked, i.transient, i.migration)
                          for i in snapshot.instances}

    def test_draining_hosts_are_marked(self):
        snapshot, _ = self.build([])
        self.assertEqual({'m': True, 'n': False, 'a': False},
                         {n: host.draining
                          for n, host in snapshot.hosts.items()})
        snapshot, _ = self.build([], draining=frozenset())
        self.assertFalse(any(host.draining
                             for host in snapshot.hosts.values()))

    def test_queued_hosts_are_marked_and_stay_schedulable(self):
        cloud = live.Cloud(
            hosts={name: host_rows(name, disabled=name == 'm')
                   for name in self.up},
            instances={uuids.a: self.row(uuids.a, 'n', 'stopped')},
            migrations=[])
        snapshot = live.build_snapshot(
            cloud, dict.fromkeys(self.up, settings()), {}, {},
            model.PlannerConfig(), 600, 3600, 0, draining=frozenset({'m'}),
            queued=frozenset({'n'}))
        self.assertEqual(
            {'m': (True, False, False), 'n': (False, True, True),
             'a': (False, False, True)},
            {name: (host.draining, host.queued, host.schedulable)
             for name, host in snapshot.hosts.items()})
        # Its instances are not drained until its turn: balancing's rules.
        self.assertEqual(['not ACTIVE (vm_state stopped)'],
                         [i.blocked for i in snapshot.instances])

    def test_by_default_nothing_drains(self):
        cloud = live.Cloud(hosts={'m': host_rows('m')},
                           instances={uuids.a: self.row(uuids.a, 'm',
                                                        'stopped')},
                           migrations=[])
        snapshot = live.build_snapshot(
            cloud, {'m': settings()}, {}, {}, model.PlannerConfig(), 600,
            3600, 0)
        self.assertFalse(snapshot.hosts['m'].draining)
        self.assertFalse(snapshot.hosts['m'].queued)
        self.assertEqual(
            [('not ACTIVE (vm_state stopped)', False, model.LIVE)],
            [(i.blocked, i.transient, i.migration)
             for i in snapshot.instances])

    def test_the_drains_rules_on_a_draining_host_only(self):
        rows = [self.row(uuids.stopped, 'm', 'stopped'),
                self.row(uuids.stopped_n, 'n', 'stopped'),
                self.row(uuids.paused, 'm', 'paused'),
                self.row(uuids.busy, 'm', task_state='migrating'),
                self.row(uuids.busy_n, 'n', task_state='migrating'),
                self.row(uuids.error, 'm', 'error'),
                self.row(uuids.out, 'm', facts=OPTED_OUT)]
        _, got = self.build(rows)
        self.assertEqual({
            uuids.stopped: (None, False, model.COLD),
            uuids.stopped_n: ('not ACTIVE (vm_state stopped)', False,
                              model.LIVE),
            uuids.paused: (None, False, model.LIVE),
            uuids.busy: ('busy (task_state migrating)', True, model.LIVE),
            uuids.busy_n: ('busy (task_state migrating)', False,
                           model.LIVE),
            uuids.error: ('vm_state error: a drain moves active, paused and '
                          'stopped instances only', False, model.LIVE),
            uuids.out: ('opted out: instance metadata drs_exclude=true',
                        False, model.LIVE)}, got)

    def after(self, *cases):
        """Built with each ``(instance, host, its migration's status, age
        in seconds[, row options])`` case's row and migration (migration
        ``m1`` the first case's, and so on)."""
        rows, migrations = [], []
        for number, (uuid, host, status, age, *options) in enumerate(
                cases, 1):
            rows.append(self.row(uuid, host, **(options[0] if options
                                               else {})))
            migrations.append(migration(getattr(uuids, f'm{number}'), uuid,
                                        status, age))
        return self.build(rows, migrations)

    def test_recent_migrations_on_and_off_a_draining_host(self):
        _, got = self.after((uuids.flying, 'm', 'running', 5),
                            (uuids.cool, 'm', 'completed', 30),
                            (uuids.cool_n, 'n', 'completed', 30),
                            (uuids.sick, 'm', 'error', 30),
                            (uuids.done, 'm', 'completed', 601))
        flying = f'migrating m -> a (migration {uuids.m1})'
        self.assertEqual({
            uuids.flying: (flying, True, model.LIVE),
            uuids.cool: (None, False, model.LIVE),
            uuids.cool_n: ('cooldown: moved m -> a 30s ago (cooldown 600s)',
                           False, model.LIVE),
            uuids.sick: (f'quarantine: migration {uuids.m4} to '
                         f'a failed 30s ago (quarantine 3600s)', False,
                         model.LIVE),
            uuids.done: (None, False, model.LIVE)}, got)

    def test_held_by_their_cooldown_alone(self):
        # Off a host not draining: a cooldown alone marks it cooling, not
        # with an opt-out, another state, or another kind of block.
        snapshot, _ = self.after(
            (uuids.cool, 'n', 'completed', 30),
            (uuids.out, 'n', 'completed', 30, {'facts': OPTED_OUT}),
            (uuids.busy, 'n', 'completed', 30, {'task_state': 'migrating'}),
            (uuids.sick, 'n', 'error', 30),
            (uuids.drained, 'm', 'completed', 30),
            # Its migration long over: not blocked at all.
            (uuids.free, 'n', 'completed', 601))
        self.assertEqual(
            {uuids.cool: True, uuids.out: False, uuids.busy: False,
             uuids.sick: False, uuids.free: False, uuids.drained: False},
            {i.uuid: i.cooling for i in snapshot.instances})

    def test_a_down_draining_host_blocks_its_instances(self):
        self.up['m'] = False
        rows = [self.row(uuids.a, 'm'), self.row(uuids.b, 'm', 'stopped'),
                self.row(uuids.c, 'n')]
        _, got = self.build(rows)
        self.assertEqual({uuids.a: (DOWN, False, model.LIVE),
                          uuids.b: (DOWN, False, model.LIVE),
                          uuids.c: (None, False, model.LIVE)}, got)
        # The other host's state is not the draining one's.
        self.up['m'], self.up['n'] = True, False
        _, got = self.build(rows)
        self.assertEqual((None, False, model.COLD), got[uuids.b])


class HeldForThePeriodTest(testtools.TestCase):
    """What the period itself holds back on a draining host passes by
    itself: the drain waits for it rather than reporting it blocked
    (``nova-drs maintenance enter --wait`` exits 6 on blocked)."""

    def drain_state(self, snapshot):
        [found] = planner.plan(snapshot, h.allow_all).drains
        return drain.state(found)

    def snapshot(self):
        return h.snapshot([h.host('m', 50.0, draining=True),
                           h.host('a', 10.0)],
                          [h.instance('i1', 'm', 1.0)])

    def test_free_instance_drains(self):
        self.assertEqual(drain.DRAINING, self.drain_state(self.snapshot()))

    def test_a_late_measurement_is_waited_for(self):
        # A draining host's instances keep their vCPU shares: not held.
        snapshot = snapshot_reader.unmeasured(self.snapshot(), {'m'})
        self.assertEqual(drain.DRAINING, self.drain_state(snapshot))

    def test_an_approved_move_starting_is_waited_for(self):
        move = model.Move(instance='i1', source='m', destination='a',
                          reason='approved', expected={})
        snapshot = recommendations.reserve(self.snapshot(), [(1, move)])
        self.assertEqual(drain.DRAINING, self.drain_state(snapshot))
