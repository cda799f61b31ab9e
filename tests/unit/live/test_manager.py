"""Which leader election the scheduler manager uses."""

from unittest import mock

import testtools
from oslo_config import cfg

from nova_drs_scheduler import conf
from nova_drs_scheduler import manager
from nova_drs_scheduler.rebalance import leader


class MakeLeaderTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        conf.register_opts(self.conf)
        self.conf.register_opts([cfg.StrOpt('lock_path')],
                                group='oslo_concurrency')
        self.conf([])

    def test_nova_services_by_default(self):
        chosen = manager.make_leader('sched-1', mock.sentinel.sg, self.conf)
        self.assertIsInstance(chosen, leader.ServiceLeader)
        self.assertEqual('sched-1', chosen.host)

    def test_tooz_when_a_backend_is_configured(self):
        self.conf.set_override('coordination_backend_url', 'file:///tmp/x',
                               group='drs')
        self.conf.set_override('rebalance_interval', 30, group='drs')
        with mock.patch('nova_drs_scheduler.rebalance.coordination.'
                        'ToozLeader') as tooz:
            chosen = manager.make_leader('sched-1', None, self.conf)
        self.assertIs(tooz.return_value, chosen)
        tooz.assert_called_once_with('file:///tmp/x', 'nova-drs-rebalancer',
                                     settle=30)
