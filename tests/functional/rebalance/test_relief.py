"""Relief checked after the move, against a real (in-process) Nova: the
period after a DRS move completes stores what it bought on the move and
whether the moved load stayed, ``nova-drs history`` shows it, and the
next snapshots learn it."""

import argparse
import contextlib
import io
import json

from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler.cli import history
from nova_drs_scheduler.rebalance import relief_check
from tests.functional.rebalance import base

HOT = {'host1': 90, 'host2': 30, 'host3': 10}


class ReliefCheckTest(base.RebalanceTestBase):

    DRS = {'relief_check_delay': 0}

    def history(self, json_output):
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            history.run(argparse.Namespace(json=json_output, limit=10,
                                           moves_only=True), conf.CONF)
        text = stdout.getvalue()
        return json.loads(text) if json_output else text

    def test_the_next_period_records_the_relief_bought(self):
        servers = [self._boot('host1') for _ in range(2)]
        loads = dict.fromkeys(servers, 4.5)
        self._period(HOT, loads)
        moved = self._settle(self._period(HOT, loads))
        [move] = moved['moves']
        self.assertEqual(('host1', 'host3', 'completed', 90.0, 4.5), (
            move['source'], move['destination'], move['outcome']['status'],
            move['expected']['source_cpu_before'],
            move['expected']['instance_cores']))
        # Completed after its period's samples were read: not checked
        # against the loads from before the move.
        self.assertNotIn('relief_check', move)

        # The instance left: its source now carries the other one alone,
        # and it carries 3 of the 4.5 cores it was moved with: it stayed.
        after = {'host1': 45, 'host2': 30, 'host3': 55}
        loads[move['instance']] = 3.0
        self._period(after, loads)

        [stored] = self.rebalancer.store.get(moved['id'])['moves']
        check = stored['relief_check']
        self.assertEqual(
            ('checked', 45.0, 90.0 - move['expected']['source_cpu'],
             True, True, True, 80.0),
            (check['status'], check['relief_points'],
             check['expected_points'], check['source_relieved'],
             check['destination_spared'], check['held'],
             check['source_threshold']))
        self.assertEqual(55.0, check['destination_cpu'])
        self.assertEqual((3.0, True, 'host1'), (
            check['instance_cores'], check['load_stayed'], check['source']))
        # What the next snapshots learn: one move off host1, which stayed.
        now = timeutils.utcnow()
        self.assertEqual({'host1': (1, 1)}, relief_check.loads_stayed(
            self.rebalancer.store, now))
        # Checked once: the period after leaves it as it is.
        self._period(after, loads)
        self.assertEqual(check, self.rebalancer.store.get(
            moved['id'])['moves'][0]['relief_check'])

        [listed] = [m for r in self.history(json_output=True)
                    for m in r['moves']]
        self.assertEqual(check, listed['relief_check'])
        text = self.history(json_output=False)
        row = next(line for line in text.splitlines()
                   if move['instance'][:8] in line)
        for cell in (history.expected_relief(listed),
                     f'45.0 / {check["expected_points"]:.1f}',
                     '55.0 / 80.0', 'yes'):
            self.assertIn(cell, row)
        self.assertIn('relief checked for 1 move: the expectation held for '
                      '1 (100 %); the moved load stayed for 1 of 1 (100 %)',
                      text)
