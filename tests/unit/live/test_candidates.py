"""The live candidates callback: Nova's RequestSpec, placement (asked once
per query and period) and filters, each refused destination with the rule
that refused it; and Nova's server-group filters with moves planned this
period.
"""

import dataclasses
import types
from unittest import mock

import fixtures
from nova import context as nova_context
from nova import exception
from nova import objects
from nova import test
from nova.scheduler import filters as nova_filters
from nova.scheduler import utils as scheduler_utils
from nova.scheduler.filters import affinity_filter
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler import pacing
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import candidates
from tests import snapshots as h
from tests.unit import fakes


def _move(uuid, source, destination):
    return model.Move(instance=uuid, source=source, destination=destination,
                      reason='test', expected={})


class PlannedMovesTest(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.snapshot = h.snapshot(
            [h.host(n, 10.0) for n in ('host1', 'host2', 'host3')],
            [h.instance(uuids.p1, 'host1', 1.0),
             h.instance(uuids.p2, 'host2', 1.0),
             h.instance(uuids.other, 'host1', 1.0)])

    def spec(self, policy, hosts):
        request = fakes.spec()
        request.instance_uuid = uuids.p2
        request.instance_group = objects.InstanceGroup(
            policy=policy, policies=[policy], members=[uuids.p1, uuids.p2],
            hosts=hosts, rules={})
        return request

    def states(self, planned):
        states = {
            'host1': fakes.host('host1', instances={uuids.p1: None,
                                                    uuids.other: None}),
            'host2': fakes.host('host2', instances={uuids.p2: None}),
            'host3': fakes.host('host3', instances={})}
        for state in states.values():
            candidates.instances_after(state, planned)
        return states

    def test_anti_affinity_sees_a_peer_planned_to_a_host(self):
        states = self.states([_move(uuids.p1, 'host1', 'host3')])
        spec = self.spec('anti-affinity', ['host1', 'host2'])
        filter_ = affinity_filter.ServerGroupAntiAffinityFilter()
        self.assertFalse(filter_.host_passes(states['host3'], spec))
        # p1 is leaving host1: a peer may go there.
        self.assertTrue(filter_.host_passes(states['host1'], spec))
        self.assertEqual({uuids.other}, set(states['host1'].instances))

    def test_affinity_follows_the_planned_move(self):
        # A group whose members were split (say, by an operator's forced
        # migration): p1 planned to join p2 on host2 empties host1 of
        # members, so host1 is no longer a place for p2.
        spec = self.spec('affinity', ['host1', 'host2'])
        candidates.group_after(spec.instance_group,
                               [_move(uuids.p1, 'host1', 'host2')],
                               self.snapshot)
        self.assertEqual(['host2'], spec.instance_group.hosts)
        filter_ = affinity_filter.ServerGroupAffinityFilter()
        states = self.states([])
        self.assertFalse(filter_.host_passes(states['host1'], spec))
        self.assertTrue(filter_.host_passes(states['host2'], spec))

    def test_affinity_keeps_a_source_another_member_stays_on(self):
        snapshot = h.snapshot(
            [h.host(n, 10.0) for n in ('host1', 'host2')],
            [h.instance(uuids.p1, 'host1', 1.0),
             h.instance(uuids.p3, 'host1', 1.0)])
        group = objects.InstanceGroup(policy='affinity',
                                      members=[uuids.p1, uuids.p3],
                                      hosts=['host1'])
        candidates.group_after(group, [_move(uuids.p1, 'host1', 'host2')],
                               snapshot)
        self.assertEqual(['host1', 'host2'], group.hosts)

    def test_a_member_that_stays_keeps_its_host_in_the_group(self):
        # p1 leaves host1 for host2; p3 stays on host3, which stays a
        # group host (affinity: the filter keeps allowing it).
        snapshot = h.snapshot(
            [h.host(n, 10.0) for n in ('host1', 'host2', 'host3')],
            [h.instance(uuids.p1, 'host1', 1.0),
             h.instance(uuids.p3, 'host3', 1.0)])
        group = objects.InstanceGroup(policy='affinity',
                                      members=[uuids.p1, uuids.p3],
                                      hosts=['host1', 'host3'])
        candidates.group_after(group, [_move(uuids.p1, 'host1', 'host2')],
                               snapshot)
        self.assertEqual(['host2', 'host3'], group.hosts)

    def test_no_planned_move_changes_nothing(self):
        state = fakes.host('host1', instances={uuids.p1: None})
        before = state.instances
        candidates.instances_after(state,
                                   [_move(uuids.x, 'host2', 'host3')])
        self.assertIs(before, state.instances)


class _RefuseFilter(nova_filters.BaseHostFilter):
    """Refuses the hosts named in ``refuse``."""

    refuse = ()

    def host_passes(self, host_state, spec_obj):
        return host_state.host not in self.refuse


class FirstFilter(_RefuseFilter):
    pass


class SecondFilter(_RefuseFilter):
    pass


class CandidatesSeenFilter(nova_filters.BaseHostFilter):
    """Records the allocation candidates each host state carries, as
    Nova's NUMA and PCI filters read them."""

    def __init__(self):
        self.seen = {}

    def host_passes(self, host_state, spec_obj):
        self.seen[host_state.host] = host_state.allocation_candidates
        return True


class FakeHostManager:

    def __init__(self, states, filters):
        self.states = states
        self.enabled_filters = filters
        self.filter_handler = nova_filters.HostFilterHandler()

    def get_host_states_by_uuids(self, context, uuids, spec):
        return [s for s in self.states if s.uuid in uuids]


class FakePlacement:
    """Allocation candidates for the providers of ``hosts``; None: silent."""

    def __init__(self, providers):
        self.providers = providers
        self.asked = None

    def get_allocation_candidates(self, context, resources):
        self.asked = resources
        if self.providers is None:
            return None, None, None
        requests = [{'allocations': {rp: {'resources': {'VCPU': 1}}}}
                    for rp in self.providers]
        # Placement's summaries: capacity with ratios and reserved amounts,
        # and usage; a host's child provider (a GPU) sums into its room.
        summaries = {rp: {'resources': {
            'VCPU': {'capacity': 40, 'used': 4 * i},
            'MEMORY_MB': {'capacity': 7680, 'used': 1000 * i}},
            'root_provider_uuid': rp}
            for i, rp in enumerate(self.providers)}
        for rp in self.providers[:1]:
            summaries['gpu'] = {'resources': {'VGPU': {'capacity': 4,
                                                       'used': 1}},
                                'root_provider_uuid': rp}
        return requests, summaries, '1.36'


class LiveCandidatesTest(test.NoDBTestCase):
    """Where Nova would let an instance go, each refused host with the
    rule that refused it."""

    HOSTS = ('host1', 'host2', 'host3', 'host4', 'host5')

    def setUp(self):
        super().setUp()
        self.first, self.second = FirstFilter(), SecondFilter()
        self.states = [
            fakes.host(name, uuid=getattr(uuids, name),
                       free_ram_mb=1000 * (i + 1))
            for i, name in enumerate(self.HOSTS)]
        self.host_manager = FakeHostManager(self.states,
                                            [self.first, self.second])
        self.placement = FakePlacement(
            [getattr(uuids, name) for name in self.HOSTS])
        self.request = fakes.spec(vcpus=2)
        self.request.instance_group = None
        self.useFixture(fixtures.MockPatch(
            'nova.objects.RequestSpec.get_by_instance_uuid',
            side_effect=lambda _context, _uuid: self.request))
        self.useFixture(fixtures.MockPatch(
            'nova.scheduler.utils.setup_instance_group'))
        self.process = self.useFixture(fixtures.MockPatch(
            'nova.scheduler.request_filter.process_reqspec')).mock

    def call(self, pools=None, planned=(), uuid=uuids.inst, source='host1'):
        """The callback's answer.  Host names and pools in the snapshot are
        new string objects, as read from the database: never identical to
        Nova's host states' names (``h.fresh``; names of two characters
        or more: CPython shares one-character strings)."""
        pools = pools or {}
        snapshot = h.snapshot(
            [h.host(h.fresh(name), 10.0,
                    pool=pools.get(name) and h.fresh(pools[name]))
             for name in self.HOSTS],
            [h.instance(uuid, h.fresh(source), 1.0)])
        snapshot = dataclasses.replace(snapshot, planned=tuple(planned))
        instance = objects.Instance(uuid=uuid, project_id='p', user_id='u',
                                    info_cache=None)
        live = candidates.LiveCandidates(
            nova_context.get_admin_context(), self.host_manager,
            self.placement,
            {uuid: types.SimpleNamespace(
                nova=instance, cell=objects.CellMapping(uuid=uuids.cell))})
        return live(snapshot.instances[0], snapshot)

    @staticmethod
    def rules(result):
        return {(r.subject, r.rule) for r in result.rejected}

    def test_allowed_in_host_order_never_the_source(self):
        # Not weighed: the planner chooses by its own policy.
        result = self.call()
        self.assertEqual(['host2', 'host3', 'host4', 'host5'],
                         list(result.allowed))
        self.assertEqual([], list(result.rejected))

    def test_room_of_each_allowed_host_and_the_request(self):
        result = self.call(source='host2')
        self.assertEqual(
            {'host1': {'VCPU': 40, 'MEMORY_MB': 7680, 'VGPU': 3},
             'host3': {'VCPU': 32, 'MEMORY_MB': 5680},
             'host4': {'VCPU': 28, 'MEMORY_MB': 4680},
             'host5': {'VCPU': 24, 'MEMORY_MB': 3680}},
            {name: result.room[name] for name in result.allowed})
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 1},
                         result.request)

    def test_each_refused_host_is_named_with_the_first_filter_refusing_it(
            self):
        self.first.refuse = ('host3',)
        self.second.refuse = ('host3', 'host4')
        result = self.call()
        self.assertEqual(['host2', 'host5'], list(result.allowed))
        self.assertEqual({('host3', 'FirstFilter'), ('host4', 'SecondFilter')},
                         self.rules(result))

    def test_hosts_of_another_pool_are_refused_naming_both_pools(self):
        # Aggregate mode: the snapshot sets pools; an unaggregated host
        # (pool None) is another pool too.
        result = self.call(pools={'host1': 'agg-a', 'host2': 'agg-a',
                                  'host3': 'agg-b', 'host5': 'agg-a'})
        self.assertEqual(['host2', 'host5'], list(result.allowed))
        self.assertEqual(
            {('host3', 'drs_pool', "pool agg-b, not the source's agg-a"),
             ('host4', 'drs_pool', "pool None, not the source's agg-a")},
            {(r.subject, r.rule, r.detail) for r in result.rejected})

    def test_host_without_an_allocation_candidate_is_refused_by_placement(
            self):
        self.placement.providers = [uuids.host2, uuids.host4]
        result = self.call()
        self.assertEqual(['host2', 'host4'], list(result.allowed))
        self.assertEqual({('host3', 'placement'), ('host5', 'placement')},
                         self.rules(result))
        self.assertEqual({'no allocation candidate in its cell'},
                         {r.detail for r in result.rejected})

    def test_no_allocation_candidate_at_all_refuses_every_host(self):
        self.placement.providers = []
        result = self.call()
        self.assertEqual([], list(result.allowed))
        self.assertEqual({(name, 'placement') for name in self.HOSTS[1:]},
                         self.rules(result))

    def test_filters_see_each_host_with_its_own_allocation_candidates(self):
        seen = CandidatesSeenFilter()
        self.host_manager.enabled_filters = [seen]
        self.call()
        self.assertEqual(
            {name: [{'allocations': {getattr(uuids, name): {
                'resources': {'VCPU': 1}}}}] for name in self.HOSTS[1:]},
            seen.seen)

    def test_silent_placement_is_not_read_as_no_room(self):
        # A period planned on it would see every destination full.
        self.placement.providers = None
        self.assertRaises(candidates.PlacementUnavailableError, self.call)

    def test_request_spec_refused_by_nova_refuses_every_other_host(self):
        self.process.side_effect = exception.RequestFilterFailed(
            reason='no such image')
        result = self.call()
        self.assertEqual([], list(result.allowed))
        self.assertEqual({(name, 'RequestSpec') for name in self.HOSTS[1:]},
                         self.rules(result))
        self.assertIn('no such image', result.rejected[0].detail)

    def test_placement_error_refuses_the_pool_and_keeps_pool_refusals(self):
        self.placement.get_allocation_candidates = mock.Mock(
            side_effect=exception.NovaException('placement broke'))
        result = self.call(pools={'host1': 'agg-a', 'host2': 'agg-a',
                                  'host3': 'agg-b', 'host4': 'agg-a',
                                  'host5': 'agg-a'})
        self.assertEqual([], list(result.allowed))
        self.assertEqual({('host2', 'placement'), ('host3', 'drs_pool'),
                          ('host4', 'placement'), ('host5', 'placement')},
                         self.rules(result))

    def test_pinned_instance_asks_placement_for_dedicated_cpus(self):
        self.request = fakes.spec(vcpus=2,
                                  extra_specs={'hw:cpu_policy': 'dedicated'})
        self.request.instance_group = None
        self.call()
        resources = self.placement.asked.merged_resources()
        self.assertEqual(2, resources.get('PCPU'))
        self.assertNotIn('VCPU', resources)

    def test_peers_planned_earlier_in_the_period_are_seen(self):
        # Anti-affinity: the peers planned to host3 and host4 keep the
        # instance off them; the hosts they leave are free for it.  One
        # peer's uuid sorts before the instance's, the other's after.
        low, mid, high = (f'{digit * 8}-0000-4000-8000-000000000000'
                          for digit in '159')
        self.host_manager.enabled_filters = [
            affinity_filter.ServerGroupAntiAffinityFilter()]
        self.request.instance_group = objects.InstanceGroup(
            policy='anti-affinity', members=[low, mid, high],
            hosts=['host1', 'host2', 'host5'], rules={})
        self.states[0].instances = {low: None}
        self.states[4].instances = {high: None}
        result = self.call(
            planned=[_move(low, h.fresh('host1'), h.fresh('host3')),
                     _move(high, h.fresh('host5'), h.fresh('host4'))],
            uuid=mid, source='host2')
        self.assertEqual({('host3', 'ServerGroupAntiAffinityFilter'),
                          ('host4', 'ServerGroupAntiAffinityFilter')},
                         self.rules(result))
        self.assertEqual(['host1', 'host5'], list(result.allowed))

    def test_filters_nova_runs_once_per_request_still_judge(self):
        # DifferentHostFilter (like the other hint filters) runs only for
        # the first instance of a boot request; a move is one instance.
        self.host_manager.enabled_filters = [
            affinity_filter.DifferentHostFilter()]
        self.request.scheduler_hints = {'different_host': [uuids.other]}
        self.states[2].instances = {uuids.other: None}
        result = self.call()
        self.assertEqual({('host3', 'DifferentHostFilter')},
                         self.rules(result))


class RoomByHostTest(test.NoDBTestCase):

    def test_a_host_s_room_sums_its_provider_tree(self):
        # Two NUMA children both hold VCPU: their free amounts add up.
        summaries = {
            uuids.root: {'resources': {'MEMORY_MB': {'capacity': 4096,
                                                     'used': 1024}}},
            uuids.numa0: {'resources': {'VCPU': {'capacity': 8, 'used': 5}},
                          'root_provider_uuid': uuids.root},
            uuids.numa1: {'resources': {'VCPU': {'capacity': 8, 'used': 3}},
                          'root_provider_uuid': uuids.root},
            uuids.other: {'resources': {'VCPU': {'capacity': 4, 'used': 0}}},
        }
        states = [types.SimpleNamespace(host='host1', uuid=uuids.root),
                  types.SimpleNamespace(host='host2', uuid=uuids.gone)]
        self.assertEqual({'host1': {'VCPU': 8, 'MEMORY_MB': 3072}},
                         candidates.room_by_host(states, summaries))


class PlacementOncePerQueryTest(test.NoDBTestCase):
    """One period asks placement once per distinct query."""

    def setUp(self):
        super().setUp()
        self.client = mock.Mock()
        self.client.get_allocation_candidates.return_value = (
            [{'allocations': {uuids.rp1: {}}},
             {'allocations': {uuids.rp2: {}}}],
            {uuids.rp1: {}, uuids.rp2: {}}, '1.36')
        self.cands = candidates.LiveCandidates(
            'ctxt', mock.Mock(), self.client, {})

    @staticmethod
    def resources(vcpus):
        return scheduler_utils.ResourceRequest.from_request_spec(
            fakes.spec(vcpus=vcpus), enable_pinning_translate=False)

    def test_same_query_asked_once(self):
        first = self.cands._allocation_candidates(self.resources(2))
        again = self.cands._allocation_candidates(self.resources(2))
        self.assertIs(first, again)
        self.client.get_allocation_candidates.assert_called_once()
        by_provider, providers = first
        self.assertEqual({uuids.rp1, uuids.rp2}, set(by_provider))
        self.assertEqual({uuids.rp1, uuids.rp2}, set(providers))

    def test_other_query_asked_again(self):
        self.cands._allocation_candidates(self.resources(2))
        self.cands._allocation_candidates(self.resources(4))
        self.assertEqual(2, self.client.get_allocation_candidates.call_count)

    def test_next_period_asks_again(self):
        self.cands._allocation_candidates(self.resources(2))
        candidates.LiveCandidates('ctxt', mock.Mock(), self.client, {}
                                  )._allocation_candidates(self.resources(2))
        self.assertEqual(2, self.client.get_allocation_candidates.call_count)

    def test_a_query_waits_for_requests_in_flight_an_answer_kept_not(self):
        # A query costs as much as a request's own: the period gives way
        # before it, not before an answer it already has.
        order = []
        self.client.get_allocation_candidates.side_effect = (
            lambda *args: order.append('query') or mock.DEFAULT)
        with mock.patch.object(pacing, 'pause',
                               lambda: order.append('pause')):
            for _ in range(2):
                self.cands._allocation_candidates(self.resources(2))
        self.assertEqual(['pause', 'query'], order)

    def test_no_answer_is_not_kept(self):
        self.client.get_allocation_candidates.return_value = (None, None,
                                                              None)
        for _ in range(2):
            self.assertRaises(candidates.PlacementUnavailableError,
                              self.cands._allocation_candidates,
                              self.resources(2))
        self.assertEqual(2, self.client.get_allocation_candidates.call_count)
