"""The lines a period logs; what it starts and recommends is
test_rebalancer's LeadTest, through the whole leading period."""

import logging

import fixtures
import testtools

from nova_drs_scheduler.rebalance import starting


class LogPeriodTest(testtools.TestCase):

    def test_one_info_line_and_each_verdict_at_debug(self):
        log = self.useFixture(fixtures.FakeLogger(level=logging.DEBUG))
        rec = {'id': 'r1', 'automation': 'automatic', 'hosts': [
            {'host': 'h1', 'reason': 'hot', 'cpu_percent': 95.0,
             'counter': 3, 'violated': True},
            {'host': 'h2', 'reason': 'warm', 'cpu_percent': 85.0,
             'counter': 1, 'violated': False},
            {'host': 'h3', 'reason': 'cool', 'cpu_percent': 0.0,
             'counter': 0, 'violated': False},
            {'host': 'h4', 'reason': 'unmeasured', 'cpu_percent': None,
             'counter': 0, 'violated': False}],
            'moves': [{'instance': 'i1', 'source': 'h1',
                       'destination': 'h3',
                       'outcome': {'status': 'started'}}]}
        starting._log_period(rec)
        starting._log_period({'id': 'r2', 'automation': 'manual',
                                'hosts': [], 'moves': []})
        self.assertEqual(
            ['DRS host h1: hot', 'DRS host h2: warm', 'DRS host h3: cool',
             'DRS host h4: unmeasured',
             'DRS period r1 (automatic): 4 hosts, 3 judged, 2 over, '
             '1 violated (h1); 1 move(s): i1 h1->h3 started',
             'DRS period r2 (manual): 0 hosts, 0 judged, 0 over, '
             '0 violated; 0 move(s)'],
            log.output.splitlines())
