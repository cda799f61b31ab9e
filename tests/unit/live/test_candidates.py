"""Nova's server-group filters and weigher, with moves planned this period.

The helpers of the live candidates callback rewrite a RequestSpec's group
and the host states as if the period's earlier moves were done; Nova's own
filter and weigher classes then judge them.
"""

from nova import objects
from nova import test
from nova.scheduler.filters import affinity_filter
from nova.scheduler.weights import affinity as affinity_weights
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import model
from tests.unit import fakes
from tests.unit.rebalance import helpers as h


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

    def test_soft_anti_affinity_weigher_sees_a_planned_peer(self):
        states = self.states([_move(uuids.p1, 'host1', 'host3')])
        spec = self.spec('soft-anti-affinity', ['host1', 'host2'])
        weigher = affinity_weights.ServerGroupSoftAntiAffinityWeigher()
        # One member (planned) on host3, none left on host1: Nova's weigher
        # ranks host3 below.
        self.assertEqual(-1, weigher._weigh_object(states['host3'], spec))
        self.assertEqual(0, weigher._weigh_object(states['host1'], spec))

    def test_no_planned_move_changes_nothing(self):
        state = fakes.host('host1', instances={uuids.p1: None})
        before = state.instances
        candidates.instances_after(state,
                                   [_move(uuids.x, 'host2', 'host3')])
        self.assertIs(before, state.instances)
