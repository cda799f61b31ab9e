"""Allocation requests copy like ``copy.deepcopy`` would, only faster."""

import copy
from unittest import mock

import testtools

from nova_drs_scheduler import allocation_requests


def placement_json():
    return {'allocations': {'rp1': {'resources': {'VCPU': 2,
                                                  'MEMORY_MB': 2048}},
                            'rp2': {'resources': {'DISK_GB': 20}}},
            'mappings': {'': ['rp1'], 'group1': ['rp2']}}


class AllocationRequestTest(testtools.TestCase):

    def test_deep_copy_is_equal_and_shares_no_container(self):
        original = allocation_requests.AllocationRequest(placement_json())
        copied = copy.deepcopy([original])[0]
        self.assertEqual(placement_json(), copied)
        self.assertIsInstance(copied, allocation_requests.AllocationRequest)
        copied['allocations']['rp1']['resources']['VCPU'] = 64
        copied['mappings'][''].append('rp3')
        del copied['allocations']['rp2']
        self.assertEqual(placement_json(), original)

    def test_values_that_are_not_json_still_copy_deeply(self):
        marker = {'nested': [1, 2]}

        class Odd:
            def __init__(self):
                self.data = marker

        original = allocation_requests.AllocationRequest(
            placement_json(), extra=(Odd(), Odd()))
        copied = copy.deepcopy(original)
        self.assertIsNot(original['extra'][0], copied['extra'][0])
        self.assertIsNot(marker, copied['extra'][0].data)
        # The memo is shared: what was one object is still one object.
        self.assertIs(copied['extra'][0].data, copied['extra'][1].data)


class ReportClientTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = mock.Mock()
        self.wrapped = allocation_requests.ReportClient(self.client)

    def test_candidates_come_back_as_allocation_requests(self):
        self.client.get_allocation_candidates.return_value = (
            [placement_json()], {'rp1': {}}, '1.36')
        requests, summaries, version = (
            self.wrapped.get_allocation_candidates('ctxt', 'resources'))
        self.client.get_allocation_candidates.assert_called_once_with(
            'ctxt', 'resources')
        self.assertEqual([placement_json()], requests)
        self.assertIsInstance(requests[0],
                              allocation_requests.AllocationRequest)
        self.assertEqual(({'rp1': {}}, '1.36'), (summaries, version))

    def test_no_candidates_pass_through_unchanged(self):
        for result in (None, (None, None, None), ([], {}, '1.36')):
            self.client.get_allocation_candidates.return_value = result
            self.assertEqual(result, self.wrapped.get_allocation_candidates(
                'ctxt', 'resources'))

    def test_everything_else_is_the_wrapped_client(self):
        self.wrapped.claim_resources('a', b='c')
        self.client.claim_resources.assert_called_once_with('a', b='c')
