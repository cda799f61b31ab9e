"""DRS moves an instance off a host that stays hot."""

from nova_drs_scheduler.testing import base
from nova_drs_scheduler.testing import records

HOT = {'host1': 95, 'host2': 10}  # cpu percent per host


class HotHostTest(base.DRSTestCase):
    """Loads from the ``static`` source: exact, chosen by the test."""

    COMPUTES = ('host1', 'host2')
    DRS = {'automation': 'automatic', 'stabilization': 2,
           'metrics_source': 'static'}

    def setUp(self):
        super().setUp()
        flavor = self._create_flavor(vcpu=2, memory_mb=512, disk=1)
        self.servers = [
            self._create_server(flavor_id=flavor, host='host1',
                                networks='none')['id']
            for _ in range(2)]

    def assertOneMovedToHost2(self, record):
        [move] = record['moves']
        self.assertIn(move['instance'], self.servers)
        self.assertEqual('host2', move['destination'])
        self.assertEqual('completed', records.outcome(move)['status'])
        self.assertEqual('host2', self.host_of(move['instance']))

    def test_moves_after_two_hot_periods(self):
        cores = dict.fromkeys(self.servers, 4.5)  # load per instance
        first, second = self.run_periods(2, HOT, cores)
        self.assertEqual([], first['moves'])  # hot once: not yet
        self.assertEqual(['host1'], records.violated_hosts(second))
        self.assertOneMovedToHost2(second)


class MeasuredHotHostTest(HotHostTest):
    """The default ``nova`` source: loads go through Nova's CPU monitor."""

    DRS = dict(HotHostTest.DRS, metrics_source='nova')

    def test_moves_after_two_hot_periods(self):
        first, second = self.run_periods(2, HOT)
        self.assertEqual(95, records.verdict(first, 'host1')['cpu_percent'])
        self.assertOneMovedToHost2(second)
