"""The rebalancer against a real (in-process) Nova: the 11 scenarios."""

import gc
from unittest import mock

import fixtures
from nova import exception
from nova import objects
from nova.tests.functional.api import client

from nova_drs_scheduler import conf
from nova_drs_scheduler import host_manager
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.rebalance import rebalancer
from nova_drs_scheduler.rebalance import record
from nova_drs_scheduler.rebalance import snapshot_reader
from nova_drs_scheduler.rebalance.sources import static
from tests.functional.rebalance import base
from tests.unit.host_manager import test_freezing


class SustainedOverloadTest(base.RebalanceTestBase):
    """Scenario 1, end to end with the default ``nova`` metric source."""

    DRS = {'metrics_source': 'nova', 'rebalance_interval': 45}

    def test_manager_setup(self):
        manager = self.scheduler_service.manager
        self.assertIsInstance(manager.host_manager,
                              host_manager.CachingHostManager)
        # The spacing comes from the parsed option, not the import.
        self.assertEqual(45, manager._periodic_spacing['_drs_rebalance'])

    def test_moves_one_instance_to_the_coolest_allowed_host(self):
        servers = [self._boot('host1') for _ in range(2)]
        loads = {'host1': 90, 'host2': 40, 'host3': 10}
        self._publish_cpu(loads)
        first = self.scheduler_service.manager.run_rebalance(
            self._admin_context())
        self.assertEqual([], first['moves'])
        self.assertEqual(1, self._verdict(first, 'host1')['counter'])

        self._publish_cpu(loads)
        record = self._settle(self.scheduler_service.manager.run_rebalance(
            self._admin_context()))

        self.assertTrue(self._verdict(record, 'host1')['violated'])
        self.assertEqual(1, len(record['moves']))
        move = record['moves'][0]
        self.assertIn(move['instance'], servers)
        # Diagnostics were read over RPC, but the fake driver's counters
        # are constant: vCPU shares of the measured 90% (4.5 cores each)
        # are used instead, so host2 would end at 85%.
        source = self.scheduler_service.manager.rebalancer.reader.source
        self.assertEqual(sorted(servers), sorted(source._cpu_time))
        self.assertEqual('host3', move['destination'])
        self.assertEqual('completed', move['outcome']['status'])
        host2 = self._rejection(move, 'host2')
        self.assertEqual('margin', host2['rule'])
        self.assertIn('projected cpu 85.0%', host2['detail'])
        self.assertEqual('host3', self._host_of(move['instance']))
        self.assertEqual(['host3'], self._allocated_hosts(move['instance']))
        stayed = next(s for s in servers if s != move['instance'])
        self.assertEqual(['host1'], self._allocated_hosts(stayed))
        self.assertFlavorMatchesUsage(
            self._get_provider_uuid_by_host('host1'), self.flavor)
        self.assertFlavorMatchesUsage(
            self._get_provider_uuid_by_host('host3'), self.flavor)
        # Started under a DRS identity: the migrations API can show it.
        listed = self.admin_api.api_get('/os-migrations').body['migrations']
        self.assertEqual([move['instance']],
                         [m['instance_uuid'] for m in listed])


class FreezeBeforePlanTest(base.RebalanceTestBase):
    """What a period read is out of the full collections its planning
    triggers (``freezing``), unless ``gc_collect_interval`` is 0."""

    def _frozen_when_planned(self):
        # Only the period may freeze: the background refresher, which
        # freezes after its passes, is stopped (stopping unfreezes).
        self.scheduler_service.manager.host_manager.stop_refresher()
        self.addCleanup(gc.unfreeze)
        self.assertEqual(0, gc.get_freeze_count())
        self._boot('host1')
        real = planner.plan
        frozen = []

        def plan(snapshot, cands, goals=planner.GOALS):
            frozen.append(test_freezing.is_frozen(snapshot.hosts['host1']))
            return real(snapshot, cands, goals)

        with mock.patch.object(planner, 'plan', plan):
            self._period({'host1': 90, 'host2': 40, 'host3': 10})
        return frozen

    def test_snapshot_is_frozen_before_planning(self):
        self.assertEqual([True], self._frozen_when_planned())

    def test_zero_interval_freezes_nothing(self):
        self.flags(gc_collect_interval=0, group='drs_host_cache')
        self.assertEqual([False], self._frozen_when_planned())
        self.assertEqual(0, gc.get_freeze_count())


HOT = {'host1': 90, 'host2': 30, 'host3': 10}


class SpikeTest(base.RebalanceTestBase):
    """Scenario 2: a spike shorter than ``stabilization`` moves nothing."""

    def test_spike_is_not_acted_on_but_sustained_load_is(self):
        servers = [self._boot('host1') for _ in range(2)]
        loads = dict.fromkeys(servers, 4.5)
        calm = dict(HOT, host1=40)
        records = [self._period(HOT, loads), self._period(calm, loads),
                   self._period(HOT, loads)]
        self.assertEqual([1, 0, 1], [self._verdict(r, 'host1')['counter']
                                     for r in records])
        self.assertEqual([[], [], []], [r['moves'] for r in records])
        self.assertEqual([], list(self._migrations()))
        # The same overload sustained for ``stabilization`` periods moves.
        record = self._settle(self._period(HOT, loads))
        self.assertEqual(['completed'], [m['outcome']['status']
                                         for m in record['moves']])


class LevelingTest(base.RebalanceTestBase):
    """Where load jumps often, a host near its threshold is leveled before
    it goes over (``[drs] level_*`` at their defaults).

    Without the cost-benefit rule: the periods here run a fraction of a
    second apart, too little for the 600 s half-life to build a deviation
    of host1's swings, so the rule would see no risk of host1 going over
    (tests/unit/planning/test_benefit.py covers leveling under it).
    """

    DRS = {'benefit_horizon': 0}
    LOW = {'host1': 56, 'host2': 30, 'host3': 10}
    HIGH = {'host1': 76, 'host2': 50, 'host3': 30}

    def _rises(self, loads, count):
        """``count`` periods at LOW then HIGH: each a rise of 20 points on
        every host, worth ln 2 an hour with the 1 h half-life."""
        records = []
        for _ in range(count):
            records += [self._period(self.LOW, loads),
                        self._period(self.HIGH, loads)]
        return records

    def test_levels_once_the_load_jumps_often_enough(self):
        servers = [self._boot('host1') for _ in range(2)]
        loads = dict.fromkeys(servers, 1.0)
        # Four rises make 2.8 a host and hour, under level_rise_rate (3),
        # and nothing moves.
        records = self._rises(loads, 4)
        self.assertEqual([], [m for r in records for m in r['moves']])
        self._period(self.LOW, loads)
        # The fifth makes 3.5: host1 at 76 % (within 10 points of 80 %, not
        # over it) sends an instance to the coolest host.
        record = self._settle(self._period(self.HIGH, loads))
        self.assertFalse(self._verdict(record, 'host1')['violated'])
        self.assertEqual(1, len(record['moves']))
        move = record['moves'][0]
        self.assertIn(move['instance'], servers)
        self.assertTrue(move['reason'].startswith('level: load jumps 3.5 '
                                                  'times an hour'),
                        move['reason'])
        self.assertEqual(('host1', 'host3', 'completed'),
                         (move['source'], move['destination'],
                          move['outcome']['status']))
        self.assertEqual('host3', self._host_of(move['instance']))
        self.assertEqual(['host3'], self._allocated_hosts(move['instance']))
        self.assertEqual('ACTIVE', self._server(move['instance'])['status'])


    def test_a_pool_whose_moved_loads_do_not_stay_does_not_level(self):
        # The DRS database holds 20 recent relief checks of moves off
        # host1 whose loads were gone by their check (bursts).
        store = self.rebalancer.store
        rec = record.new_record('automatic', model.PlannerConfig())
        rec['moves'] = [{'instance': f'gone-{n:02d}', 'source': 'host1',
                         'destination': 'host2', 'goal': 'level',
                         'reason': 'level', 'outcome': {'status': 'starting'}}
                        for n in range(20)]
        rec['hosts'] = []
        store.add(rec)
        for move in rec['moves']:
            store.set_outcome(rec['id'], move['instance'],
                              {'status': 'completed'})
            store.save_relief(rec['id'], move['instance'], {
                'status': 'checked', 'held': True, 'source': 'host1',
                'instance_cores': 0.1, 'load_stayed': False})
        servers = [self._boot('host1') for _ in range(2)]
        records = self._rises(dict.fromkeys(servers, 1.0), 5)
        # The rise rate is there (3.5 an hour), as in the test above; the
        # moved loads did not stay: nothing moves, and the plan says why.
        self.assertEqual([], [m for r in records for m in r['moves']])
        self.assertIn('pool global: no leveling though load jumps 3.5 times '
                      'an hour per host (level_rise_rate 3): its moved loads '
                      'do not stay, 0 of 20 moved loads stayed '
                      '(level_steady_share 0.45)', records[-1]['notes'])


class AggregateModeTest(base.RebalanceTestBase):
    """Scenario 3: moves stay in the pool; hosts in no aggregate."""

    HOSTS = ('host1', 'host2', 'host3', 'host4')
    DRS = {'mode': 'aggregate'}

    def test_moves_stay_in_pool_and_unaggregated_hosts(self):
        self._aggregate_with_hosts('pool-a', ['host1', 'host2'])
        small, large = self._boot('host1'), self._boot('host1')
        lone = self._boot('host3')
        loads = {small: 2.0, large: 2.5, lone: 3.0}
        hosts = {'host1': 90, 'host2': 30, 'host3': 95, 'host4': 5}
        self._period(hosts, loads)
        record = self._settle(self._period(hosts, loads))

        # host1's relief stays in pool-a although host4 is cooler.
        [move] = record['moves']
        self.assertEqual((large, 'host2'),
                         (move['instance'], move['destination']))
        self.assertEqual('host2', self._host_of(large))
        for outside in ('host3', 'host4'):
            self.assertEqual('drs_pool',
                             self._rejection(move, outside)['rule'])
        # unaggregated_hosts=ignore: host3 is neither judged nor relieved.
        self.assertIn('not judged', self._verdict(record, 'host3')['reason'])

        # unaggregated_hosts=pool: host3 and host4 form a pool of their own.
        self.flags(unaggregated_hosts='pool', group='drs')
        hosts.update(host1=60, host2=60)
        self._period(hosts, loads)
        record = self._settle(self._period(hosts, loads))
        self.assertEqual([(lone, 'host3', 'host4')],
                         [(m['instance'], m['source'], m['destination'])
                          for m in record['moves']])
        self.assertEqual('host4', self._host_of(lone))


class NoDestinationTest(base.RebalanceTestBase):
    """Scenario 4: no destination would stay under its threshold."""

    def test_no_move_and_the_reason_is_recorded(self):
        servers = [self._boot('host1') for _ in range(2)]
        loads = dict.fromkeys(servers, 4.5)
        hosts = {'host1': 90, 'host2': 75, 'host3': 78}
        self._period(hosts, loads)
        record = self._period(hosts, loads)
        self.assertTrue(self._verdict(record, 'host1')['violated'])
        self.assertEqual([], record['moves'])
        [note] = record['notes']
        self.assertIn('host host1: violated, no move', note)
        for server in servers:
            self.assertIn(f'instance {server}: 2x margin', note)
        self.assertEqual([], list(self._migrations()))


class AntiAffinityTest(base.RebalanceTestBase):
    """Scenario 5: server-group anti-affinity holds."""

    def test_coolest_host_holding_a_member_is_rejected(self):
        group = self.admin_api.post_server_groups(
            {'name': 'spread', 'policy': 'anti-affinity'})
        members = [self._boot_in_group(host, group['id'])
                   for host in ('host1', 'host3')]
        loads = {members[0]: 3.0}
        self._period(HOT, loads)
        record = self._settle(self._period(HOT, loads))
        [move] = record['moves']
        self.assertEqual((members[0], 'host2'),
                         (move['instance'], move['destination']))
        self.assertEqual('ServerGroupAntiAffinityFilter',
                         self._rejection(move, 'host3')['rule'])
        self.assertEqual(['host2', 'host3'],
                         sorted(self._host_of(m) for m in members))


class GroupPeersInOnePeriodTest(base.RebalanceTestBase):
    """Two members of one server group planned in the same period."""

    DRS = {'max_concurrent_migrations_per_host': 2,
           'max_migrations_per_period': 2}
    HOTS = {'host1': 90, 'host2': 91, 'host3': 5}

    def _peers(self, policy):
        group = self.admin_api.post_server_groups(
            {'name': 'peers', 'policy': policy})
        peers = [self._boot_in_group(host, group['id'])
                 for host in ('host1', 'host2')]
        return peers, {peer: 3.0 for peer in peers}

    def test_anti_affinity_peers_never_share_a_destination(self):
        peers, loads = self._peers('anti-affinity')
        self._period(self.HOTS, loads)
        record = self._settle(self._period(self.HOTS, loads))
        # The hottest source's peer goes to host3; the other peer's only
        # other candidate is then host3 too, which now holds a member.
        [move] = record['moves']
        self.assertEqual((peers[1], 'host3', 'completed'), (
            move['instance'], move['destination'],
            move['outcome']['status']))
        [note] = [n for n in record['notes'] if 'host host1' in n]
        self.assertIn('ServerGroupAntiAffinityFilter', note)
        self.assertEqual(['ACTIVE', 'ACTIVE'],
                         [self._server(p)['status'] for p in peers])
        self.assertEqual(['host1', 'host3'],
                         [self._host_of(p) for p in peers])
        self.assertEqual({}, record['attention'])

    def test_instance_left_in_error_needs_attention_and_is_quarantined(self):
        # Nova's destination compute re-checks the group when a migration
        # starts; a violation found there leaves the instance in ERROR.
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        record = self._refused_period(
            HOT, loads, exception.GroupAffinityViolation(
                instance_uuid=server, policy='Anti-affinity'))
        [move] = record['moves']
        self.assertEqual('failed', move['outcome']['status'])
        self.assertEqual(('ERROR', 'host1'), (
            self._server(server)['status'], self._host_of(server)))

        record = self._period(HOT, loads)
        self.assertEqual([], record['moves'])
        self.assertIn(f'DRS migration {move["outcome"]["migration"]} '
                      'from host1 ended error', record['attention'][server])
        # Once an operator has checked and reset it, the failed move's
        # quarantine holds like any other.
        self.admin_api.post_server_action(
            server, {'os-resetState': {'state': 'active'}})
        record = self._period(HOT, loads)
        self.assertEqual([], record['moves'])
        self.assertEqual({}, record['attention'])
        self.assertIn('quarantine', record['blocked'][server])


class OptOutTest(base.RebalanceTestBase):
    """Scenario 6: opted-out instances and aggregates never move."""

    def test_opted_out_instances_and_aggregate_are_left_alone(self):
        frozen = self._flavor('frozen', extra_spec={'drs:exclude': 'true'})
        by_metadata = self._boot('host1')
        self.admin_api.post_server_metadata(by_metadata,
                                            {'drs_exclude': 'true'})
        by_flavor = self._boot('host1', flavor=frozen)
        free = self._boot('host1')
        # host2, the coolest, is in an opted-out aggregate; host3's
        # aggregate has an invalid threshold, ignored without failing.
        self._aggregate_with_hosts('frozen', ['host2'],
                                   {'drs_exclude': 'true'})
        self._aggregate_with_hosts('typo', ['host3'],
                                   {'drs_cpu_threshold': 'eighty'})
        loads = {by_metadata: 4.0, by_flavor: 3.0, free: 1.5}
        hosts = {'host1': 90, 'host2': 5, 'host3': 30}
        self._period(hosts, loads)
        record = self._settle(self._period(hosts, loads))

        self.assertEqual([(free, 'host3')], [
            (m['instance'], m['destination']) for m in record['moves']])
        self.assertEqual('excluded',
                         self._rejection(record['moves'][0], 'host2')['rule'])
        self.assertIn('opted out: instance metadata',
                      record['blocked'][by_metadata])
        self.assertIn('opted out: flavor extra spec',
                      record['blocked'][by_flavor])
        self.assertIn('opted out', self._verdict(record, 'host2')['reason'])
        self.assertEqual(80, self._verdict(record, 'host3')['cpu_threshold'])
        self.assertEqual(['host1', 'host1'], [
            self._host_of(s) for s in (by_metadata, by_flavor)])

    def test_flavor_opt_out_key_is_validated(self):
        flavor_id = self._create_flavor(name='typo', vcpu=1, memory_mb=512,
                                        disk=1, ephemeral=0)
        error = self.assertRaises(
            client.OpenStackApiException, self.admin_api.post_extra_spec,
            flavor_id,
            {'extra_specs': {'drs:exclude': 'maybe'}})
        self.assertEqual(400, error.response.status_code)


class FailedMigrationTest(base.RebalanceTestBase):
    """Scenario 7: a move refused at start leaves everything as it was."""

    def test_instance_stays_active_on_source_and_tries_another_host(self):
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        record = self._refused_period(
            HOT, loads, exception.MigrationPreCheckError(reason='injected'))

        # The conductor answers a requested destination whose check
        # fails with NoValidHost: refused there, not the instance's fault.
        [move] = record['moves']
        self.assertEqual(('refused', 'host3'), (
            move['outcome']['status'], move['outcome']['destination']))
        self.assertIn('NoValidHost', move['outcome']['error'])
        found = self._server(server)
        self.assertEqual(('ACTIVE', None, 'host1'), (
            found['status'], found['OS-EXT-STS:task_state'],
            found['OS-EXT-SRV-ATTR:host']))
        self.assertEqual(['host1'], self._allocated_hosts(server))
        self.assertFlavorMatchesUsage(
            self._get_provider_uuid_by_host('host1'), self.flavor)
        for host in ('host2', 'host3'):
            self.assertRequestMatchesUsage(
                {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0},
                self._get_provider_uuid_by_host(host))
        # Not quarantined: when host1 is violated again, the instance goes
        # to another host, never back to host3 while the refusal is recent.
        records = [self._settle(self._period(HOT, loads)) for _ in range(2)]
        self.assertNotIn(server, records[-1]['blocked'])
        [move] = [m for r in records for m in r['moves']]
        self.assertEqual(('host2', 'completed'), (
            move['destination'], move['outcome']['status']))
        self.assertEqual('refused-at-start',
                         self._rejection(move, 'host3')['rule'])


class ManualModeTest(base.RebalanceTestBase):
    """Scenario 8: ``automation=manual`` recommends; an operator approves
    or dismisses; the leader starts approved moves through its rails."""

    DRS = {'automation': 'manual'}

    def _recommendations(self, *states):
        store = self.scheduler_service.manager.rebalancer.store
        return {r['instance']: r for r in store.recommendations(states)}

    def _pending(self):
        """A hot host1 for two periods: ``(server, loads, recommendation
        id, store)``."""
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        ident = self._period(HOT, loads)['moves'][0]['outcome'][
            'recommendation']
        return (server, loads, ident,
                self.scheduler_service.manager.rebalancer.store)

    def test_recommendation_stays_pending_then_runs_once_approved(self):
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        record = self._period(HOT, loads)
        [move] = record['moves']
        self.assertEqual(('host3', 'recommended'),
                         (move['destination'], move['outcome']['status']))
        ident = move['outcome']['recommendation']
        store = self.scheduler_service.manager.rebalancer.store
        self.assertEqual(record['id'], store.recent()[-1]['id'])
        self.assertEqual([], list(self._migrations()))

        # What ``nova-drs plan`` does in its own process: a new rebalancer
        # continues from the stored windows, acts on and stores nothing.
        manager = self.scheduler_service.manager
        cli = rebalancer.Rebalancer(manager.host_manager,
                                    manager.placement_client,
                                    manager.servicegroup_api)
        dry = cli.dry_run(self._admin_context())
        self.assertEqual(3, self._verdict(dry, 'host1')['counter'])
        self.assertEqual(record['id'], store.recent()[-1]['id'])

        # Not violated at counter 3 (stabilization 2), but still over: the
        # recommendation stays pending instead of vanishing.
        record = self._period(HOT, loads)
        self.assertEqual(3, self._verdict(record, 'host1')['counter'])
        self.assertEqual('pending', self._recommendations()[server]['state'])
        self.assertEqual('host1', self._host_of(server))

        self.assertEqual([ident], store.transition(ident, 'approved'))
        record = self._settle(self._period(HOT, loads))
        [move] = record['moves']
        self.assertEqual((server, 'host3', 'completed'), (
            move['instance'], move['destination'],
            move['outcome']['status']))
        self.assertIn(f'approved recommendation {ident}', move['reason'])
        self.assertEqual('host3', self._host_of(server))
        self.assertEqual(['host3'], self._allocated_hosts(server))
        self.assertEqual('completed',
                         self._recommendations()[server]['state'])

    def test_recommendation_expires_when_the_host_cools(self):
        server, loads, _ident, store = self._pending()
        self.assertEqual('pending', self._recommendations()[server]['state'])
        self._period({'host1': 50, 'host2': 30, 'host3': 10}, loads)
        rec = self._recommendations()[server]
        self.assertEqual('expired', rec['state'])
        self.assertIn('no longer over', rec['detail'])
        # Expired is final: approving it is refused, nothing moves.
        self.assertRaises(db_store.InvalidStateError, store.transition,
                          rec['id'], 'approved')
        self.assertEqual([], list(self._migrations()))

    def test_approved_move_refused_by_the_rails_fails_with_the_reason(self):
        server, loads, ident, store = self._pending()
        store.transition(ident, 'approved')
        # Its destination is disabled before the leader's next period.
        self.admin_api.put_service(
            self.admin_api.get_services(
                host='host3', binary='nova-compute')[0]['id'],
            {'status': 'disabled'})
        self._period(HOT, loads)
        rec = self._recommendations()[server]
        self.assertEqual('failed', rec['state'])
        self.assertIn('host3', rec['detail'])
        self.assertEqual([], list(self._migrations()))

    def test_dismissed_recommendation_is_not_started(self):
        server, loads, ident, store = self._pending()
        store.transition(ident, 'dismissed', ('pending', 'approved'))
        self._period(HOT, loads)
        self.assertEqual('dismissed',
                         self._recommendations()[server]['state'])
        self.assertEqual([], list(self._migrations()))


class AggregateAutomationTest(base.RebalanceTestBase):
    """``drs_automation`` in aggregate metadata overrides ``[drs]``."""

    DRS = {'automation': 'manual'}

    def test_aggregate_automatic_moves_while_global_is_manual(self):
        self._aggregate_with_hosts('auto', self.HOSTS,
                                   {'drs_automation': 'automatic'})
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        record = self._settle(self._period(HOT, loads))
        self.assertEqual([(server, 'completed')], [
            (m['instance'], m['outcome']['status'])
            for m in record['moves']])

    def test_aggregate_off_keeps_its_hosts_out(self):
        self._aggregate_with_hosts('quiet', ['host1'],
                                   {'drs_automation': 'off'})
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        record = self._period(HOT, loads)
        self.assertFalse(self._verdict(record, 'host1')['violated'])
        self.assertEqual([], record['moves'])

    def test_global_off_with_a_manual_aggregate_recommends(self):
        self.flags(automation='off', group='drs')
        self._aggregate_with_hosts('watched', self.HOSTS,
                                   {'drs_automation': 'manual'})
        server = self._boot('host1')
        loads = {server: 4.5}
        self._period(HOT, loads)
        record = self._period(HOT, loads)
        self.assertEqual(['recommended'], [
            m['outcome']['status'] for m in record['moves']])

    def test_bad_value_is_logged_and_ignored_for_the_host(self):
        self._aggregate_with_hosts('typo', ['host1'],
                                   {'drs_automation': 'sometimes'})
        server = self._boot('host1')
        loads = {server: 4.5}
        with self.assertLogs('nova_drs_scheduler.rebalance',
                             level='WARNING') as logs:
            self._period(HOT, loads)
        self.assertIn('drs_automation', '\n'.join(logs.output))
        record = self._period(HOT, loads)
        self.assertEqual(['recommended'], [
            m['outcome']['status'] for m in record['moves']])


class LimitsTest(base.RebalanceTestBase):
    """Scenario 9: per-period and concurrency limits."""

    DRS = {'max_migrations_per_period': 1, 'max_concurrent_migrations': 1}

    def test_one_move_per_period_and_none_while_one_is_in_flight(self):
        servers = {host: [self._boot(host) for _ in range(2)]
                   for host in ('host1', 'host2')}
        loads = {s: 4.5 for pair in servers.values() for s in pair}
        hosts = {'host1': 90, 'host2': 92, 'host3': 5}
        self._period(hosts, loads)
        record = self._settle(self._period(hosts, loads))
        [move] = record['moves']
        self.assertEqual('host2', move['source'])  # The hottest first.
        self.assertEqual('completed', move['outcome']['status'])
        self.assertIn('host host1: violated, no move: limit:per-period',
                      record['notes'])

        # A migration in flight (say, an operator's) fills the cloud-wide
        # limit: nothing more starts until it ends.
        self._in_flight(servers['host1'][0], 'host1', 'host3')
        self._period(hosts, loads)
        record = self._period(hosts, loads)
        self.assertEqual([], record['moves'])
        self.assertEqual({'total': 1, 'by_host': {'host1': 1, 'host3': 1}},
                         record['inflight'])
        self.assertIn('host host1: violated, no move: limit:total',
                      record['notes'])
        self.assertEqual(2, len(self._migrations()))

    def _in_flight(self, uuid, source, dest):
        # Just created, as the conductor does: not yet updated by a compute.
        objects.Migration(
            context=self._admin_context(), instance_uuid=uuid,
            source_compute=source, dest_compute=dest, status='accepted',
            migration_type='live-migration').create()


class NoPingPongTest(base.RebalanceTestBase):
    """Scenario 10: oscillating load never sends an instance back."""

    # host3 (65 %) stays out of reach: the oscillation between host1 and
    # host2 is what is tested.  With the expected load on, a host at 20 %
    # that averages 55 % is judged at 55 % and refused, and nothing would
    # move: off, so that the rail under test is reached.
    DRS = {'stabilization': 1, 'margin': 10.0, 'expected_load_halflife': 0}

    def test_no_instance_returns_to_a_host_it_left(self):
        servers = [self._boot(host) for host in ('host1', 'host2')
                   for _ in range(3)]
        loads = dict.fromkeys(servers, 3.0)
        moves = []
        for period in range(6):
            hot, cold = ('host1', 'host2')[::1 if period % 2 else -1]
            record = self._settle(self._period(
                {hot: 90, cold: 20, 'host3': 65}, loads))
            moves += [(m['instance'], m['source'], m['destination'])
                      for m in record['moves']
                      if m['outcome']['status'] == 'completed']
        self.assertGreaterEqual(len(moves), 4)
        left = {}
        for instance, source, destination in moves:
            self.assertNotIn(destination, left.get(instance, set()),
                             f'{instance} went back to {destination}')
            left.setdefault(instance, set()).add(source)
        self.assertIn('cooldown', ' '.join(record['blocked'].values()))


class InsideMarginTest(base.RebalanceTestBase):
    """A warm pool: the move goes inside the margin, and does not return.

    No cooldown, so that only the no-ping-pong rails hold the instance.
    """

    DRS = {'cpu_threshold': 80.0, 'margin': 5.0, 'instance_cooldown': 0}

    def test_moves_to_the_host_that_stays_under_and_never_back(self):
        # 0.8 cores on 10 vCPUs: 8 points.  No host can take them and stay
        # under 75 %; the pool averages 75.7 %, so the margin is graded
        # to 0: host3 ends at 78 % (host1 at 77 %), host2 would reach 80.
        server = self._boot('host1')
        loads = {server: 0.8}
        warm = {'host1': 85, 'host2': 72, 'host3': 70}
        self._period(warm, loads)
        record = self._settle(self._period(warm, loads))
        [move] = record['moves']
        self.assertEqual(('host1', 'host3', 'completed'),
                         (move['source'], move['destination'],
                          move['outcome']['status']))
        self.assertEqual((True, 0.0), (move['expected']['inside_margin'],
                                       move['expected']['graded_margin']))
        self.assertAlmostEqual(77.0, move['expected']['source_cpu'])
        self.assertAlmostEqual(78.0, move['expected']['destination_cpu'])
        self.assertIn('inside the margin: no allowed destination keeps the '
                      'margin of 5 points', move['reason'])
        self.assertIn('host3 ends at cpu 78.0%, under 80.0%', move['reason'])
        host2 = self._rejection(move, 'host2')
        self.assertEqual('graded-margin', host2['rule'])
        self.assertIn('projected cpu 80.0%', host2['detail'])
        self.assertEqual('host3', self._host_of(server))

        # As planned, nothing is over: nothing moves.
        settled = {'host1': 77, 'host2': 72, 'host3': 78}
        for _ in range(2):
            self.assertEqual([], self._period(settled, loads)['moves'])
        # host3 turns hot.  host1 would take the instance back under its
        # threshold (78 %), but the instance left it: it stays.
        hot = {'host1': 70, 'host2': 79, 'host3': 86}
        self._period(hot, loads)
        record = self._period(hot, loads)
        self.assertTrue(self._verdict(record, 'host3')['violated'])
        self.assertEqual([], record['moves'])
        [note] = record['notes']
        self.assertIn(f'inside the margin: instance {server}: 1x '
                      'graded-margin, 1x no-return', note)
        self.assertEqual('host3', self._host_of(server))
        self.assertEqual(1, len(self._migrations(server)))


class SeedPolicyTest(base.RebalanceTestBase):
    """Scenario 11: the ``seed`` policy makes the seed's choices."""

    DRS = {'policy': 'seed'}

    def test_least_loaded_instance_to_lowest_host_at_each_multiple(self):
        light, medium, heavy = [self._boot('host1') for _ in range(3)]
        loads = {light: 0.5, medium: 1.0, heavy: 2.0}
        hosts = {'host1': 95, 'host2': 40, 'host3': 35}
        moves = []
        for _period in range(4):
            record = self._settle(self._period(hosts, loads))
            moves.append([(m['instance'], m['destination'])
                          for m in record['moves']])
        # By hand: violated at counters 2 and 4; each time the least
        # loaded instance left goes where CPU is lowest after the move
        # (host3: 35 + 5 = 40% and 35 + 10 = 45%, host2: 45% and 50%).
        # The balanced policy would have moved ``heavy`` (it cures host1).
        self.assertEqual(
            [[], [(light, 'host3')], [], [(medium, 'host3')]], moves)
        self.assertEqual('host1', self._host_of(heavy))


class StarvedFirstTest(base.RebalanceTestBase):
    """A host whose demand goes unserved is relieved first, and may send
    inside the margin: a tenant waiting for a CPU is what DRS fixes
    first.  One move per period, no cooldown."""

    DRS = {'cpu_threshold': 80.0, 'margin': 5.0, 'instance_cooldown': 0,
           'max_migrations_per_period': 1}
    HOSTS = ('host1', 'host2', 'host3', 'host4')

    def test_contention_is_relieved_before_a_hotter_looking_host(self):
        # host1 looks hotter (95 %) and serves its demand; host2 shows
        # 88 %, with 0.5 cores (5 points) of its demand waiting.
        hot, waiting = self._boot('host1'), self._boot('host2')
        loads = {hot: 1.0, waiting: 1.0}
        hosts = {'host1': 95, 'host2': 88, 'host3': 20, 'host4': 20}
        self._write_metrics(hosts, loads, waiting={'host2': 0.5})
        self.run_period(settle=False)
        self._write_metrics(hosts, loads, waiting={'host2': 0.5})
        record = self._settle(self.run_period(settle=False))
        [move] = record['moves']
        self.assertEqual((waiting, 'host2', 'completed'),
                         (move['instance'], move['source'],
                          move['outcome']['status']))
        self.assertTrue(self._verdict(record, 'host2')['starved'])
        self.assertFalse(self._verdict(record, 'host1')['starved'])
        self.assertIn('limit:per-period', ' '.join(record['notes']))
        self.assertEqual('host1', self._host_of(hot))

    def _boot_apart(self):
        """A server on host1 whose anti-affinity peers are on host3 and
        host4: host2 is its only destination."""
        group = self.admin_api.post_server_groups(
            {'name': 'apart', 'policy': 'anti-affinity'})['id']
        server = self._boot_in_group('host1', group)
        for host in ('host3', 'host4'):
            self._boot_in_group(host, group)
        return server

    def test_a_host_at_100_sends_inside_the_margin(self):
        # The pool averages 58 %: it keeps its whole margin.  host2 is
        # refused by the margin (78 % after the move, past 75 %) and the
        # others hold the instance's anti-affinity peers; host1 at 100 %
        # sends there all the same.
        server = self._boot_apart()
        loads = {server: 0.6}
        hosts = {'host1': 100, 'host2': 72, 'host3': 30, 'host4': 30}
        self._period(hosts, loads)
        record = self._settle(self._period(hosts, loads))
        [move] = record['moves']
        self.assertEqual(('host2', 'completed'),
                         (move['destination'], move['outcome']['status']))
        self.assertEqual((True, 0.0), (move['expected']['inside_margin'],
                                       move['expected']['graded_margin']))
        self.assertIn('host host1 is starved (part of its demand goes '
                      'unserved), so a destination only stays under its '
                      'threshold: host2 ends at cpu 78.0%, under 80.0%',
                      move['reason'])
        self.assertEqual('host2', self._host_of(server))
        self.assertEqual(['host2'], self._allocated_hosts(server))

    def test_a_host_merely_over_keeps_the_margin(self):
        server = self._boot_apart()
        loads = {server: 0.6}
        hosts = {'host1': 95, 'host2': 72, 'host3': 30, 'host4': 30}
        self._period(hosts, loads)
        record = self._period(hosts, loads)
        self.assertEqual([], record['moves'])
        self.assertEqual('host1', self._host_of(server))

    def _past(self, waiting):
        """host1 at 100 % with ``waiting`` cores of demand waiting; host2,
        its only destination, past its threshold at 84 %."""
        server = self._boot_apart()
        loads = {server: 0.6}
        hosts = {'host1': 100, 'host2': 84, 'host3': 30, 'host4': 30}
        for _period in range(2):
            self._write_metrics(hosts, loads, waiting={'host1': waiting})
            record = self.run_period(settle=False)
        return server, self._settle(record)

    def test_a_host_far_past_its_cpus_sends_past_a_threshold(self):
        # 1.5 cores waiting: demand at 115 % of host1's CPUs.  host2 ends
        # at 90 %, past its threshold but serving every tenant.
        server, record = self._past(1.5)
        [move] = record['moves']
        self.assertEqual(('host2', 'completed'),
                         (move['destination'], move['outcome']['status']))
        self.assertTrue(move['expected']['past_threshold'])
        self.assertIn('past the threshold: no allowed destination stays '
                      'under its threshold, and host host1 is far past its '
                      'CPUs (demand 115.0%, from 110%): host2 ends at cpu '
                      '90.0%', move['reason'])
        self.assertEqual(['host2'], self._allocated_hosts(server))

    def test_a_host_just_past_its_cpus_keeps_the_threshold(self):
        server, record = self._past(0.5)
        self.assertEqual([], record['moves'])
        self.assertEqual('host1', self._host_of(server))


class StarvedInTheirCooldownTest(base.RebalanceTestBase):
    """A starved host whose every instance is in its cooldown sends one
    all the same, never back where it came from; a host merely over its
    threshold waits for the cooldown."""

    DRS = {'cpu_threshold': 80.0, 'margin': 5.0, 'instance_cooldown': 3600,
           'max_migrations_per_period': 1, 'stabilization': 1}

    def test_a_cooldown_gives_way_to_a_tenant_waiting_for_cpu(self):
        server = self._boot('host1')
        loads = {server: 1.0}
        self._settle(self._period({'host1': 95, 'host2': 20, 'host3': 60},
                                  loads))
        self.assertEqual('host2', self._host_of(server))
        # Now host2 is over with the server in its cooldown: it waits.
        hosts = {'host1': 30, 'host2': 95, 'host3': 30}
        record = self._period(hosts, loads)
        self.assertTrue(self._verdict(record, 'host2')['violated'])
        self.assertEqual([], record['moves'])
        self.assertIn('cooldown', record['blocked'][server])
        # Its demand goes unserved: the server leaves, to host3 (it came
        # from host1).
        self._write_metrics(hosts, loads, waiting={'host2': 0.5})
        record = self._settle(self.run_period(settle=False))
        self.assertEqual(1, len(record['moves']),
                         (record['notes'], self._verdict(record, 'host2')))
        [move] = record['moves']
        self.assertEqual((server, 'host3', 'completed'),
                         (move['instance'], move['destination'],
                          move['outcome']['status']))
        self.assertIn('host host2: starved, and no other instance may '
                      'move: 1 in their cooldown may leave it',
                      record['notes'])
        self.assertEqual(['host3'], self._allocated_hosts(server))


class StepAfterArrivalTest(base.RebalanceTestBase):
    """A host that steps over its threshold after an arrival and stays
    there is relieved within three periods, periods a
    ``rebalance_interval`` apart on the service's clock (its load
    averages and trends age as they would live)."""

    DRS = {'instance_cooldown': 0}

    def setUp(self):
        super().setUp()
        self.now = 1767225600.0
        for module in (snapshot_reader, static):
            clock = self.useFixture(fixtures.MockPatchObject(module, 'time'))
            clock.mock.time.side_effect = lambda: self.now

    def period(self, hosts, loads):
        self.now += conf.CONF.drs.rebalance_interval
        return self._settle(self._period(hosts, loads))

    def test_relieved_within_three_periods(self):
        a = self._boot('host1')
        b, c = self._boot('host2'), self._boot('host2')
        # host2 is over with b (6 cores): b goes to host1, at 10 %.
        loads = {a: 1.0, b: 6.0, c: 1.0}
        before = {'host1': 10, 'host2': 90, 'host3': 50}
        moves = [m for _ in range(2)
                 for m in self.period(before, loads)['moves']]
        self.assertEqual([(b, 'host1', 'completed')],
                         [(m['instance'], m['destination'],
                           m['outcome']['status']) for m in moves])
        # host1 steps to 85 % and stays.
        loads = {a: 2.5, b: 6.0, c: 1.0}
        stepped = {'host1': 85, 'host2': 30, 'host3': 50}
        moves = [m for _ in range(3)
                 for m in self.period(stepped, loads)['moves']]
        self.assertEqual([('host1', 'completed')],
                         [(m['source'], m['outcome']['status'])
                          for m in moves])
