"""One rebalancer at a time across processes, with failover on SIGKILL.

Three worker processes compete through ToozLeader on a real backend
(tooz ``file://`` and a real redis-server on 127.0.0.1).  The test kills
the acting one with SIGKILL and checks that another takes over within the
lease plus one interval, that periods never overlap, and that no period is
run twice (consecutive periods stay an interval apart across the change).
"""

import itertools
import json
import os
import signal
import subprocess
import sys
import time

import fixtures
import testtools

from tests import realservers

WORKER = os.path.join(os.path.dirname(__file__), 'worker.py')
INTERVAL = 1.0


class _FailoverContract:
    """The scenario; subclasses pick the backend."""

    #: Seconds a dead holder's lease may outlive it.
    LEASE = 0.0

    def backend_url(self):
        raise NotImplementedError()

    def setUp(self):
        super().setUp()
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.log = os.path.join(self.workdir, 'periods.log')
        url = self.backend_url()
        self.workers = {}
        for name in ('drs-a', 'drs-b', 'drs-c'):
            process = subprocess.Popen(
                [sys.executable, WORKER, url, self.log, name,
                 str(INTERVAL)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            self.addCleanup(self._kill, process)
            self.workers[name] = process

    @staticmethod
    def _kill(process):
        if process.poll() is None:
            process.kill()
        process.wait()

    def periods(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def wait_periods(self, count, timeout):
        realservers.wait_until(lambda: len(self.periods()) >= count,
                               timeout, f'{count} periods')
        return self.periods()

    def test_one_leader_and_failover_after_sigkill(self):
        before = self.wait_periods(3, 30)
        leaders = {period['member'] for period in before}
        self.assertEqual(1, len(leaders), before)
        leader = leaders.pop()
        self.workers[leader].send_signal(signal.SIGKILL)
        self.workers[leader].wait()
        killed_at = time.time()
        done = len(self.periods())
        after = self.wait_periods(done + 3, 30 + self.LEASE)[done:]
        new_leaders = {period['member'] for period in after}
        self.assertEqual(1, len(new_leaders), after)
        self.assertNotIn(leader, new_leaders)
        takeover = after[0]['start'] - killed_at
        self.assertLess(takeover, self.LEASE + 2 * INTERVAL + 2.0)
        everything = sorted(self.periods(), key=lambda p: p['start'])
        for previous, period in itertools.pairwise(everything):
            # Never two at once, and never a period repeated early.
            self.assertGreaterEqual(period['start'], previous['end'])
            self.assertGreaterEqual(period['start'] - previous['start'],
                                    INTERVAL * 0.9, (previous, period))
        for process in self.workers.values():
            if process.poll() is not None and process.returncode != -9:
                self.fail(process.stderr.read().decode())


class FileBackendFailoverTest(_FailoverContract, testtools.TestCase):

    def backend_url(self):
        return 'file://' + self.workdir


class RedisBackendFailoverTest(_FailoverContract, testtools.TestCase):

    LEASE = 3.0

    def backend_url(self):
        redis = self.useFixture(realservers.RedisServer())
        return f'{redis.url}?lock_timeout={int(self.LEASE)}'
