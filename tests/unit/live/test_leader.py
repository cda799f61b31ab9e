"""The default leader: lowest up scheduler host, one worker per host."""

import fcntl
from unittest import mock

import fixtures
import testtools
from nova import objects

from nova_drs_scheduler.rebalance import leader


class LeaderTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.lock_dir = self.useFixture(fixtures.TempDir()).path
        self.addCleanup(leader._release_process_lock,
                        f'{self.lock_dir}/{leader.LOCK_NAME}')
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

    def test_stop_hands_the_lock_to_another_worker(self):
        first = leader.ServiceLeader('sched-a', self.servicegroup,
                                     self.lock_dir)
        self.assertTrue(first.check(mock.sentinel.ctx)[0])
        path = first.lock_path
        _pid, handle = leader._held[path]
        first.stop()
        self.assertTrue(handle.closed)
        self.assertNotIn(path, leader._held)
        # A second worker's descriptor now gets the lock.
        other = open(path, 'a')
        self.addCleanup(other.close)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def test_stop_without_the_lock_is_harmless(self):
        leader.ServiceLeader('sched-b', self.servicegroup,
                             self.lock_dir).stop()
