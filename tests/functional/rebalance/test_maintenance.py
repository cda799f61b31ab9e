"""Maintenance mode against a real (in-process) Nova: drains, blockers,
nothing new on the host, and the operator's commands."""

import argparse
import collections
import io
import json
from unittest import mock

import fixtures
from nova import exception
from nova import objects
from nova.compute import api as compute_api
from nova.compute import rpcapi

from nova_drs_scheduler import conf
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import maintenance as cli
from nova_drs_scheduler.cli import maintenance_plan
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import maintenance
from nova_drs_scheduler.testing import records
from tests.functional.rebalance import base

LOADS = {'host1': 40, 'host2': 30, 'host3': 20, 'host4': 10}


class MaintenanceTestBase(base.RebalanceTestBase):

    HOSTS = ('host1', 'host2', 'host3', 'host4')
    #: Four drain moves at once off a host, so that one period plans
    #: several (``FlowTest`` drains at Nova's default pace of one).
    DRS = {'max_migrations_per_period': 4, 'max_concurrent_migrations': 4,
           'max_concurrent_migrations_per_host': 2,
           'drain_max_concurrent_migrations_per_host': 4}

    def cli(self, handler, json_output=True, **options):
        """A ``nova-drs maintenance`` handler: (exit code, output)."""
        stdout = self.useFixture(fixtures.MonkeyPatch(
            'sys.stdout', io.StringIO())).new_value
        args = argparse.Namespace(json=json_output, **options)
        try:
            code = handler(args, conf.CONF)
        except errors.CLIError as exc:
            stdout.write(str(exc))
            return exc.code, stdout.getvalue()
        text = stdout.getvalue()
        return code, json.loads(text) if json_output else text

    def enter(self, host, reason='kernel update'):
        return self.cli(cli.enter_, hosts=[host], reason=reason, wait=False,
                        timeout=1.0)

    def status(self, host=None):
        code, rows = self.cli(cli.status_, host=host)
        self.assertEqual(errors.OK, code)
        return {row['host']: row for row in rows}

    def drain(self, loads, instances=None, periods=8):
        """Periods until no drain moves anything; the records."""
        found = []
        for _ in range(periods):
            found.append(self.run_period(loads, instances))
            if not found[-1]['moves']:
                break
        return found

    def service(self, host):
        [found] = self.admin_api.api_get(
            f'/os-services?host={host}&binary=nova-compute').body['services']
        return found

    def assertAllocatedOn(self, uuid, host):
        self.assertEqual([host], self._allocated_hosts(uuid))


class DrainTest(MaintenanceTestBase):
    """Every kind of instance: moved live or cold, or named as a blocker."""

    def setUp(self):
        super().setUp()
        self.api.microversion = self.admin_api.microversion = '2.74'
        group = self.admin_api.post_server_groups(
            {'name': 'spread', 'policy': 'anti-affinity'})
        self.member = self._boot_in_group('host1', group['id'])
        self.peer = self._boot_in_group('host2', group['id'])
        self.active = [self._boot('host1') for _ in range(3)]
        self.stopped = self._boot('host1')
        self.admin_api.post_server_action(self.stopped, {'os-stop': None})
        self._wait_for_state_change(self._server(self.stopped), 'SHUTOFF')
        self.paused = self._boot('host1')
        self.admin_api.post_server_action(self.paused, {'pause': None})
        self._wait_for_state_change(self._server(self.paused), 'PAUSED')
        self.opted_out = self._boot('host1')
        self.admin_api.post_server_metadata(self.opted_out,
                                            {'drs_exclude': 'true'})
        self.failing = self._boot('host1')
        self.movers = [self.member, *self.active, self.stopped, self.paused]

    def failing_check(self):
        """The destination refuses the failing server's live migration."""
        original = rpcapi.ComputeAPI.check_can_live_migrate_destination
        real = rpcapi.ComputeAPI()

        def check(ctxt, instance, *args):
            if instance.uuid == self.failing:
                raise exception.MigrationPreCheckError(reason='injected')
            return original(real, ctxt, instance, *args)
        return mock.patch.object(rpcapi.ComputeAPI,
                                 'check_can_live_migrate_destination',
                                 side_effect=check)

    def test_drains_every_movable_instance_and_names_the_blockers(self):
        code, row = self.enter('host1')
        self.assertEqual(errors.OK, code)
        self.assertEqual(('host1', 'draining'), (row['host'], row['state']))
        service = self.service('host1')
        self.assertEqual('disabled', service['status'])
        self.assertEqual('nova-drs: maintenance: kernel update',
                         service['disabled_reason'])
        # Nothing new lands on the host from the moment enter returns.
        fresh = self._create_server(flavor_id=self.flavor['id'],
                                    networks='none')
        self.assertNotEqual('host1', fresh['OS-EXT-SRV-ATTR:host'])

        with self.failing_check():
            records = self.drain(LOADS)

        for uuid in self.movers:
            self.assertNotEqual('host1', self._host_of(uuid), uuid)
            self.assertAllocatedOn(uuid, self._host_of(uuid))
        self.assertNotEqual('host2', self._host_of(self.member))
        self.assertEqual(
            ['ACTIVE'] * 4 + ['SHUTOFF', 'PAUSED'],
            [self._server(uuid)['status'] for uuid in self.movers])
        for uuid in (self.opted_out, self.failing):
            self.assertEqual(('ACTIVE', 'host1'), (
                self._server(uuid)['status'], self._host_of(uuid)))
            self.assertAllocatedOn(uuid, 'host1')
        for host in self.HOSTS:
            self.assertFalse(any(
                self._get_allocations_by_server_uuid(m.uuid)
                for m in objects.MigrationList.get_by_filters(
                    self.admin_context(), {'source_compute': host})))
        moves = [m for rec in records for m in rec['moves']]
        self.assertEqual({'drain'}, {m['goal'] for m in moves})
        [cold] = [m for m in moves if m['instance'] == self.stopped]
        self.assertEqual(('cold', 'completed'), (
            cold['migration'], cold['outcome']['status']))
        # Nova's conductor reports a requested destination whose
        # pre-migration check fails as no valid host: each other host is
        # tried once, none twice, and the instance is not quarantined.
        tried = [m for m in moves if m['instance'] == self.failing]
        self.assertEqual({'refused'},
                         {m['outcome']['status'] for m in tried})
        self.assertEqual(sorted({m['destination'] for m in tried}),
                         sorted(m['destination'] for m in tried))

        # The last record and the status name each blocker and why.
        drain = records[-1]['drains'][0]
        self.assertEqual(('host1', 2), (drain['host'], drain['instances']))
        reasons = {b['subject']: b['detail'] for b in drain['blockers']}
        self.assertIn('opted out', reasons[self.opted_out])
        self.assertIn('Nova refused it at start on', reasons[self.failing])
        status = self.status()['host1']
        self.assertEqual(('blocked', 2), (status['state'],
                                          status['instances']))
        self.assertEqual(len(self.movers), status['moves']['completed'])
        self.assertEqual((len(tried), 0), (status['moves']['failed'],
                                           status['moves']['in_flight']))
        self.assertEqual({self.opted_out, self.failing},
                         {b['instance'] for b in status['blockers']})
        code, text = self.cli(cli.status_, json_output=False, host='host1')
        self.assertIn('blocked', text)
        self.assertIn('opted out', text)

        # Nothing landed on the host meanwhile; exit gives it back.
        self.assertEqual(
            {self.opted_out, self.failing},
            {i.uuid for i in objects.InstanceList.get_by_host(
                self.admin_context(), 'host1')})
        code, row = self.cli(cli.exit_, host='host1')
        self.assertEqual((errors.OK, True), (code, row['enabled']))
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual({}, self.status())


class LeaderTest(MaintenanceTestBase):
    """The drain belongs to the DRS database, not to a process."""

    DRS = dict(MaintenanceTestBase.DRS,
               drain_max_concurrent_migrations_per_host=2)

    def test_a_new_leader_resumes_and_moves_no_instance_twice(self):
        servers = [self._boot('host1') for _ in range(4)]
        self.enter('host1')
        first = self.run_period(LOADS)
        moved = {m['instance'] for m in first['moves']}
        self.assertEqual(2, len(moved))  # drain_max_concurrent_..._per_host
        # A new scheduler process takes over: a fresh rebalancer, same
        # database.
        manager = self.scheduler_service.manager
        manager.rebalancer = type(manager.rebalancer)(
            manager.host_manager, manager.rebalancer.reader.placement_client,
            manager.rebalancer.reader.servicegroup_api,
            leader=manager.rebalancer.leader)
        rest = self.drain(LOADS)
        again = [m['instance'] for rec in rest for m in rec['moves']]
        self.assertEqual(sorted(set(servers) - moved), sorted(again))
        self.assertEqual('drained', self.status()['host1']['state'])
        for uuid in servers:
            self.assertEqual(1, len(self.migrations(uuid)))


class OperatorDisableTest(MaintenanceTestBase):
    """An operator's own disable is theirs: exit leaves it."""

    def test_exit_leaves_an_operators_disable_alone(self):
        self.admin_api.api_put(
            '/os-services/' + self.service('host2')['id'],
            {'status': 'disabled', 'disabled_reason': 'broken fan'})
        self.enter('host2')
        self.assertEqual('broken fan',
                         self.service('host2')['disabled_reason'])
        code, row = self.cli(cli.exit_, host='host2')
        self.assertEqual((errors.OK, False), (code, row['enabled']))
        self.assertEqual(('disabled', 'broken fan'), (
            self.service('host2')['status'],
            self.service('host2')['disabled_reason']))

    def test_unknown_host_and_host_not_in_maintenance_are_usage_errors(self):
        code, text = self.enter('nohost')
        self.assertEqual(errors.USAGE, code)
        self.assertIn("no nova-compute service on host 'nohost'", text)
        code, text = self.cli(cli.exit_, host='host3')
        self.assertEqual(errors.USAGE, code)
        self.assertIn('host3 is not in maintenance', text)
        code, text = self.cli(cli.status_, host='host3')
        self.assertEqual(errors.USAGE, code)


class ReasonTest(MaintenanceTestBase):
    """enter run again with a new reason: the status and nova-drs's own
    disable take it, an operator's disable keeps theirs."""

    def test_enter_again_changes_the_service_reason(self):
        self.enter('host1')
        code, row = self.enter('host1', reason='bios')
        reason = 'nova-drs: maintenance: bios'
        self.assertEqual((errors.OK, reason),
                         (code, row['service_disabled_reason']))
        self.assertEqual(('disabled', reason), (
            self.service('host1')['status'],
            self.service('host1')['disabled_reason']))
        self.assertEqual('bios', self.status()['host1']['reason'])
        self.enter('host1', reason=None)
        self.assertEqual(reason, self.service('host1')['disabled_reason'])
        # Still nova-drs's disable: exit enables the service again.
        code, row = self.cli(cli.exit_, host='host1')
        self.assertEqual((errors.OK, True), (code, row['enabled']))
        self.assertEqual('enabled', self.service('host1')['status'])

    def test_an_operators_disable_keeps_its_reason(self):
        self.admin_api.api_put(
            '/os-services/' + self.service('host2')['id'],
            {'status': 'disabled', 'disabled_reason': 'broken fan'})
        self.enter('host2')
        self.enter('host2', reason='bios')
        self.assertEqual('broken fan',
                         self.service('host2')['disabled_reason'])
        self.assertEqual('bios', self.status()['host2']['reason'])


class AggregateDrainTest(MaintenanceTestBase):
    """In aggregate mode a drain stays in its pool, even near full."""

    DRS = dict(MaintenanceTestBase.DRS, mode='aggregate')

    def test_stays_in_the_pool_on_its_least_loaded_host(self):
        for name, hosts in (('a', ('host1', 'host2')),
                            ('b', ('host3', 'host4'))):
            agg = self.admin_api.post_aggregate(
                {'aggregate': {'name': name}})
            for host in hosts:
                self.admin_api.add_host_to_aggregate(agg['id'], host)
        servers = [self._boot('host1') for _ in range(2)]
        self.enter('host1')
        # host2, the pool's only other host, is near its threshold.
        records = self.drain({'host1': 30, 'host2': 76, 'host3': 5,
                              'host4': 5})
        moves = [m for rec in records for m in rec['moves']]
        self.assertEqual(['host2', 'host2'],
                         [m['destination'] for m in moves])
        self.assertIn('accepts none', moves[0]['reason'])
        self.assertEqual(['host2', 'host2'],
                         [self._host_of(s) for s in servers])
        self.assertEqual('drained', self.status()['host1']['state'])


class AutomationOffTest(MaintenanceTestBase):
    """Drains run at any automation level: enter is the approval."""

    DRS = dict(MaintenanceTestBase.DRS, automation='off')

    def test_drains_with_automation_off(self):
        server = self._boot('host1')
        self.enter('host1')
        self.drain(LOADS)
        self.assertNotEqual('host1', self._host_of(server))
        self.assertEqual('drained', self.status()['host1']['state'])
        maintenance.exit(self.rebalancer.store, 'host1')
        self.assertEqual('enabled', self.service('host1')['status'])


class CapacityTest(MaintenanceTestBase):
    """Each planned move takes its flavor off its destination's room as
    placement counts it, so a drain never sends a host more than it holds;
    a move Nova still refuses for want of room is not the instance's fault.

    MediumFakeDriver hosts have 8192 MB, 512 of them reserved: placement
    counts 7680 MB free on an empty host, room for three 2500 MB servers.
    A drain ranks its destinations as Nova's RAM and CPU weighers do, so
    with two left (host2 the one with the most free vCPUs, host3 the one
    with the most free MB) they tie and host2 comes first, by name.
    """

    HOSTS = ('host1', 'host2', 'host3', 'host4')
    #: host2 is the coolest; host4 the hottest, but under the threshold.
    LOADS = {'host1': 20, 'host2': 10, 'host3': 45, 'host4': 60}

    def setUp(self):
        super().setUp()
        self.api.microversion = self.admin_api.microversion = '2.74'
        self.big = self.admin_api.get_flavor(self._create_flavor(
            name='big', vcpu=1, memory_mb=2500, disk=1, ephemeral=0))
        self.leaving = [self._boot('host1', self.big) for _ in range(3)]
        self.wide = self.admin_api.get_flavor(self._create_flavor(
            name='wide', vcpu=4, memory_mb=64, disk=1, ephemeral=0))

    def fill(self, host, servers):
        for _ in range(servers):
            self._boot(host, self.big)

    def placed(self):
        """{server: host} of the servers that left host1, allocations
        checked to be on that host alone."""
        found = {}
        for uuid in self.leaving:
            found[uuid] = self._host_of(uuid)
            self.assertAllocatedOn(uuid, found[uuid])
            self.assertEqual('ACTIVE', self._server(uuid)['status'])
        return found

    def test_a_host_with_room_for_one_gets_one(self):
        # host2 (coolest) has room for one more, host3 for all three;
        # host4 is full.
        self.fill('host2', 2)
        self._boot('host3', self.wide)
        self.fill('host4', 3)
        self.assertEqual(errors.OK, self.enter('host1')[0])
        first, *_ = self.drain(self.LOADS)
        self.assertEqual(
            ['host2', 'host3', 'host3'],
            [move['destination'] for move in first['moves']])
        self.assertEqual(['completed'] * 3, [
            move['outcome']['status'] for move in first['moves']])
        refused = self._rejection(first['moves'][1], 'host2')
        self.assertEqual('capacity', refused['rule'])
        self.assertIn('MEMORY_MB 2500 wanted', refused['detail'])
        self.assertEqual({'host2': 1, 'host3': 2}, collections.Counter(
            self.placed().values()))
        self.assertEqual('drained', self.status('host1')['host1']['state'])

    def test_two_destinations_each_take_part_of_a_host(self):
        # Neither host2 nor host3 can take all three: two and one.
        self.fill('host2', 1)
        self.fill('host3', 1)
        self.fill('host4', 3)
        self.assertEqual(errors.OK, self.enter('host1')[0])
        first, *_ = self.drain(self.LOADS)
        self.assertEqual(['completed'] * 3, [
            move['outcome']['status'] for move in first['moves']])
        self.assertEqual({'host2': 2, 'host3': 1}, collections.Counter(
            self.placed().values()))
        self.assertEqual('drained', self.status('host1')['host1']['state'])

    def test_a_move_nova_refuses_for_room_is_tried_elsewhere(self):
        # Placement's answer is stale (as when another scheduler's boot
        # took host2's room after it was read): the planner sends two to
        # host2, and Nova refuses the second at start.
        self.fill('host2', 2)
        self._boot('host3', self.wide)
        self.fill('host4', 3)
        real = candidates.room_by_host

        def stale(states, summaries):
            room = real(states, summaries)
            if 'host2' in room:
                room['host2'] = dict(room['host2'], MEMORY_MB=5000)
            return room
        self.assertEqual(errors.OK, self.enter('host1')[0])
        with mock.patch.object(candidates, 'room_by_host', stale):
            first = self.run_period(self.LOADS)
        self.assertEqual(['completed', 'refused'], [
            move['outcome']['status'] for move in first['moves'][:2]])
        refused_uuid = first['moves'][1]['instance']
        self.assertEqual('host2', first['moves'][1]['outcome']['destination'])
        # Not quarantined: the next period sends it to the host with room
        # (placement now counts host2 full).
        second = self.run_period(self.LOADS)
        move = records.move(second, refused_uuid)
        self.assertEqual(('host3', 'completed'),
                         (move['destination'], move['outcome']['status']))
        self.assertNotIn(refused_uuid, second['blocked'])
        self.drain(self.LOADS)
        self.assertEqual({'host2': 1, 'host3': 2}, collections.Counter(
            self.placed().values()))
        self.assertEqual('drained', self.status('host1')['host1']['state'])


class FlowTest(MaintenanceTestBase):
    """A drain goes at the pace of its migrations: each move ending starts
    the next at the leader's next check (``[drs] drain_flow_interval``),
    not at the next period; balancing keeps its share meanwhile."""

    DRS = dict(MaintenanceTestBase.DRS, max_concurrent_migrations=2,
               drain_max_concurrent_migrations_per_host=None)

    def setUp(self):
        super().setUp()
        self.leaving = [self._boot('host1') for _ in range(3)]

    def flow_until_drained(self, first, steps=10):
        """Flow steps, each once the moves of the one before ended; the
        records."""
        found, last = [], first
        for _ in range(steps):
            self.settle(last)
            last = self.rebalancer.flow(self.admin_context())
            if last is None or not last['moves']:
                break
            found.append(last)
        return found

    def test_one_period_and_the_flow_drain_the_host(self):
        self.assertEqual(errors.OK, self.enter('host1')[0])
        first = self.run_period(LOADS, settle=False)
        # Nova runs one live migration at a time per source by default.
        self.assertEqual(1, len(first['moves']))
        steps = self.flow_until_drained(first)
        self.assertEqual(2, len(steps))
        for step in steps:
            self.assertEqual('drain-flow', step['trigger'])
            self.assertEqual(['drain'], [m['goal'] for m in step['moves']])
        for uuid in self.leaving:
            self.assertNotEqual('host1', self._host_of(uuid))
            self.assertAllocatedOn(uuid, self._host_of(uuid))
        self.assertEqual('drained', self.status('host1')['host1']['state'])
        # The drain's last report names a stored record (the step that
        # found the host empty).
        [row] = self.rebalancer.store.maintenance('host1')
        self.assertIsNotNone(self.rebalancer.store.get(
            row['progress']['record']))
        # Nothing left to move: nothing is planned until a move ends.
        self.assertIsNone(self.rebalancer.flow(self.admin_context()))
        # Each step is stored with its moves, as a period's record.
        stored = self.rebalancer.store.get(steps[-1]['id'])
        self.assertEqual(['completed'], [
            m['outcome']['status'] for m in stored['moves']])
        self.assertEqual('drain-flow', stored['trigger'])

    def test_no_flow_without_a_drain_or_before_leading(self):
        self.assertIsNone(self.rebalancer.flow(self.admin_context()))
        self.run_period(LOADS)
        self.assertIsNone(self.rebalancer.flow(self.admin_context()))

    def test_an_overloaded_host_is_relieved_while_a_drain_runs(self):
        hot = self._boot('host2')
        self.assertEqual(errors.OK, self.enter('host1')[0])
        loads = dict(LOADS, host2=95)
        first = self.run_period(loads, {hot: 4.0})
        self.assertEqual(['drain'], [m['goal'] for m in first['moves']])
        # Stabilization 2: host2 is violated at the second period, which
        # plans its relief beside the drain's next move, within the total
        # of 2: the drain leaves a slot to each violated host.
        second = self.run_period(loads, {hot: 4.0})
        self.assertEqual(['drain', 'balance'],
                         [m['goal'] for m in second['moves']])
        self.assertEqual(hot, second['moves'][1]['instance'])

    def test_the_periodic_task_checks_at_its_own_interval(self):
        manager = self.scheduler_service.manager
        self.assertEqual(
            (60, 5), (manager._periodic_spacing['_drs_rebalance'],
                      manager._periodic_spacing['_drs_drain_flow']))
        with mock.patch.object(self.rebalancer, 'flow') as flow:
            manager._drs_drain_flow(self.admin_context())
        flow.assert_called_once_with(mock.ANY)


class PlanTest(MaintenanceTestBase):
    """``maintenance plan``: the live planner's answer, Nova's filters and
    placement included, and nothing moved or stored.

    MediumFakeDriver hosts have 7680 MB free for servers when empty: room
    for three 2500 MB ones.
    """

    def setUp(self):
        super().setUp()
        self.api.microversion = self.admin_api.microversion = '2.74'
        self.big = self.admin_api.get_flavor(self._create_flavor(
            name='big', vcpu=1, memory_mb=2500, disk=1, ephemeral=0))

    def plan(self, *hosts, json_output=True):
        self.feed(LOADS)
        return self.cli(maintenance_plan.plan_, json_output=json_output,
                        hosts=list(hosts))

    def assertNothingChanged(self, servers):
        """Every server where it was, no migration, no maintenance row, no
        record, every compute service enabled."""
        for uuid, host in servers.items():
            self.assertEqual(host, self._host_of(uuid))
            self.assertAllocatedOn(uuid, host)
        self.assertEqual([], list(self.migrations()))
        store = self.rebalancer.store
        self.assertEqual(([], []), (store.maintenance(), store.recent()))
        for host in self.HOSTS:
            self.assertEqual('enabled', self.service(host)['status'])

    def test_one_host_its_destinations_and_its_blocker(self):
        servers = {self._boot('host1'): 'host1' for _ in range(2)}
        opted_out = self._boot('host1')
        self.admin_api.post_server_metadata(opted_out,
                                            {'drs_exclude': 'true'})
        servers[opted_out] = 'host1'

        code, found = self.plan('host1')
        self.assertEqual(errors.BLOCKED, code)
        [host1] = found['hosts']
        self.assertEqual(('host1', 3, False),
                         (host1['host'], host1['instances'],
                          host1['can_drain']))
        self.assertEqual(sorted(set(servers) - {opted_out}),
                         sorted(m['instance'] for m in host1['moves']))
        for move in host1['moves']:
            self.assertIn(move['destination'], ('host2', 'host3', 'host4'))
        [blocker] = host1['blockers']
        self.assertEqual(opted_out, blocker['instance'])
        self.assertIn('opted out', blocker['reason'])
        self.assertGreater(host1['drain_seconds'], 0)
        self.assertEqual(([], [{'host': 'host1',
                                'why': 'alone: 1 instance(s) would block'}]),
                         (found['at_once']['hosts'],
                          found['at_once']['left_out']))

        code, text = self.plan('host1', json_output=False)
        self.assertEqual(errors.BLOCKED, code)
        self.assertIn('opted out', text)
        self.assertIn(host1['moves'][0]['destination'], text)
        code, text = self.plan('host1', 'nohost')
        self.assertEqual(errors.USAGE, code)
        self.assertIn("no nova-compute service on host 'nohost'", text)
        self.assertNothingChanged(servers)

    def test_two_hosts_only_one_at_once(self):
        # host3 has room for one more, host4 none: host1 and host2 each
        # drain into the other and host3, but not both at once (of their
        # four servers, host3 takes one).
        servers = {self._boot(host, self.big): host
                   for host in ('host1', 'host1', 'host2', 'host2',
                                'host3', 'host3', 'host4', 'host4',
                                'host4')}

        code, found = self.plan('host2', 'host1')
        self.assertEqual(errors.BLOCKED, code)
        self.assertEqual([('host2', True), ('host1', True)],
                         [(h['host'], h['can_drain'])
                          for h in found['hosts']])
        self.assertEqual({'host1', 'host3'}, {
            m['destination'] for m in found['hosts'][0]['moves']})
        self.assertFalse(found['all_at_once'])
        at_once = found['at_once']
        self.assertEqual(['host1'], at_once['hosts'])
        self.assertEqual(
            {'host3', 'host2'}, {m['destination'] for m in at_once['moves']})
        [left_out] = at_once['left_out']
        self.assertEqual(('host2', 'with host1: 3 instance(s) would block'),
                         (left_out['host'], left_out['why']))
        self.assertNothingChanged(servers)


class QueueTest(MaintenanceTestBase):
    """``enter --one-at-a-time``: the hosts drain one after the other, and
    a drain sends nothing to a host whose turn is still to come while
    another host can take it, so each instance moves once."""

    HOSTS = ('host1', 'host2', 'host3')
    #: host2 is the coolest and, in placement, the emptiest: the drain's
    #: preferred destination were it not queued.
    LOADS = {'host1': 40, 'host2': 10, 'host3': 30}

    def setUp(self):
        super().setUp()
        self.leaving = [self._boot('host1') for _ in range(2)]
        self.staying = self._boot('host2')
        self.others = [self._boot('host3') for _ in range(2)]

    def test_without_the_queue_host2_takes_the_drain(self):
        # The control: host2 alone in service beside host3 takes both.
        self.assertEqual(errors.OK, self.enter('host1')[0])
        moves = [m for rec in self.drain(self.LOADS) for m in rec['moves']]
        self.assertEqual(['host2', 'host2'],
                         [m['destination'] for m in moves])

    def test_one_host_at_a_time_each_instance_moved_once(self):
        code, rows = self.cli(cli.enter_, hosts=['host1', 'host2'],
                              reason='kernel update', wait=False,
                              timeout=1.0, one_at_a_time=True)
        self.assertEqual(errors.OK, code)
        self.assertEqual([('host1', 'draining', None),
                          ('host2', 'queued', 1)],
                         [(r['host'], r['state'], r['queue_position'])
                          for r in rows])
        self.assertEqual('disabled', self.service('host1')['status'])
        self.assertEqual('enabled', self.service('host2')['status'])

        records = self.drain(self.LOADS)
        moves = [m for rec in records for m in rec['moves']]
        self.assertEqual(sorted(self.leaving),
                         sorted(m['instance'] for m in moves))
        # Not to host2, the emptiest and coolest: it is queued.
        self.assertEqual({'host3'}, {m['destination'] for m in moves})
        for uuid in self.leaving:
            self.assertEqual('host3', self._host_of(uuid))
            self.assertAllocatedOn(uuid, 'host3')
        self.assertIn("the balanced policy's preferred destination",
                      moves[0]['reason'])
        # host2 waits: in service, its instance where it was, no drain.
        self.assertEqual('host2', self._host_of(self.staying))
        self.assertEqual('enabled', self.service('host2')['status'])
        self.assertEqual({'host1'}, {d['host'] for rec in records
                                     for d in rec['drains']})
        status = self.status()
        self.assertEqual(
            (('drained', None), ('queued', 1)),
            ((status['host1']['state'], status['host1']['queue_position']),
             (status['host2']['state'], status['host2']['queue_position'])))

        # exit host1: host2's turn.
        code, row = self.cli(cli.exit_, host='host1')
        self.assertEqual(errors.OK, code)
        self.assertEqual(('host2', True), (row['next']['host'],
                                          row['next']['started']))
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual(('disabled', 'nova-drs: maintenance: kernel '
                                      'update'),
                         (self.service('host2')['status'],
                          self.service('host2')['disabled_reason']))
        self.assertEqual((['host2'], 'draining', None), (
            list(self.status()), self.status()['host2']['state'],
            self.status()['host2']['queue_position']))

        records = self.drain(self.LOADS)
        [moved] = [m for rec in records for m in rec['moves']]
        self.assertEqual(self.staying, moved['instance'])
        self.assertIn(self._host_of(self.staying), ('host1', 'host3'))
        self.assertEqual('drained', self.status()['host2']['state'])
        # Each instance moved once.
        for uuid in self.leaving + [self.staying] + self.others:
            self.assertEqual(0 if uuid in self.others else 1,
                             len(self.migrations(uuid)), uuid)

    def test_exit_when_nova_refuses_the_next_host(self):
        self.cli(cli.enter_, hosts=['host1', 'host2'], reason=None,
                 wait=False, timeout=1.0, one_at_a_time=True)
        real = compute_api.HostAPI.service_update

        def refuse_host2(api, context, service):
            if service.host == 'host2':
                raise exception.ServiceNotFound(service_id='host2')
            return real(api, context, service)
        with mock.patch.object(compute_api.HostAPI, 'service_update',
                               refuse_host2):
            code, text = self.cli(cli.exit_, json_output=False,
                                  host='host1')
        self.assertEqual(errors.CLOUD, code)
        self.assertIn('host1 left maintenance, but the drain of host2, '
                      'first in the queue, did not start', text)
        self.assertIn('still queued', text)
        # The exit stands; host2 stays queued, in service.
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual('enabled', self.service('host2')['status'])
        self.assertEqual({'host2': ('queued', 1)}, {
            host: (row['state'], row['queue_position'])
            for host, row in self.status().items()})
        # enter without --one-at-a-time starts it, as the message says.
        code, row = self.enter('host2', reason=None)
        self.assertEqual((errors.OK, 'draining', None),
                         (code, row['state'], row['queue_position']))
        self.assertEqual('disabled', self.service('host2')['status'])
