"""The default leader: lowest up scheduler host, one worker per host."""

from unittest import mock

import fixtures
import testtools
from nova import objects

from nova_drs_scheduler.rebalance import leader


class LeaderTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.lock_dir = self.useFixture(fixtures.TempDir()).path
        services = [mock.Mock(host=h) for h in ('sched-b', 'sched-a', 'c')]
        self.useFixture(fixtures.MockPatchObject(
            objects.ServiceList, 'get_by_binary', return_value=services))
        self.servicegroup = mock.Mock()
        self.servicegroup.service_is_up.side_effect = (
            lambda service: service.host != 'c')

    def check(self, host):
        return leader.ServiceLeader(host, self.servicegroup,
                                    self.lock_dir).check(mock.sentinel.ctx)

    def test_lowest_up_scheduler_leads(self):
        self.assertTrue(self.check('sched-a')[0])
        is_leader, why = self.check('sched-b')
        self.assertFalse(is_leader)
        self.assertIn('sched-a', why)

    def test_down_services_do_not_count(self):
        self.servicegroup.service_is_up.side_effect = (
            lambda service: service.host == 'sched-b')
        self.assertTrue(self.check('sched-b')[0])

    def test_second_process_on_the_host_is_refused(self):
        self.assertTrue(self.check('sched-a')[0])
        # Forget this process's hold: the next check opens the file anew,
        # as a second worker would, while the first hold keeps the lock.
        _pid, first = leader._held.pop(f'{self.lock_dir}/{leader.LOCK_NAME}')
        self.addCleanup(first.close)
        is_leader, why = self.check('sched-a')
        self.assertFalse(is_leader)
        self.assertIn('another worker', why)
