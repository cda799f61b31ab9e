"""Leader election through a tooz coordination backend.

Same interface as :class:`~.leader.ServiceLeader`: ``check(context)``
returns ``(is_leader, why)``.  The leader is whoever holds one tooz lock;
tooz's heartbeat thread keeps the lease alive, and before each period the
holder re-checks that it still owns the lock (a lease can expire during a
long pause), so two rebalancers never act in the same period.  A new holder
also waits ``settle`` seconds (one rebalance interval) before its first
period, so a period its dead predecessor just ran is not run again.
"""

import os
import socket
import time

from oslo_log import log as logging
from tooz import coordination

LOG = logging.getLogger(__name__)


class ToozLeader:

    def __init__(self, backend_url: str, lock_name: str, settle: float,
                 member_id: str | None = None):
        self.settle = settle
        self._since = None
        self.member_id = member_id or f'{socket.gethostname()}-{os.getpid()}'
        self.coordinator = coordination.get_coordinator(
            backend_url, self.member_id.encode())
        self.coordinator.start(start_heart=True)
        self.lock = self.coordinator.get_lock(lock_name.encode())
        self.lock_name = lock_name
        self._held = False

    def check(self, context=None) -> tuple[bool, str]:
        try:
            if self._held and not self._still_owner():
                LOG.warning('DRS leadership lost: lock %s is no longer '
                            'ours.', self.lock_name)
                self._held = False
            if not self._held:
                self._held = bool(self.lock.acquire(blocking=False))
                if self._held:
                    self._since = time.monotonic()
                    LOG.info('DRS leadership acquired by %s (lock %s).',
                             self.member_id, self.lock_name)
        except coordination.ToozError as exc:
            self._held = False
            return False, f'coordination backend unavailable: {exc}'
        if not self._held:
            return False, f'another rebalancer holds {self.lock_name}'
        waited = time.monotonic() - self._since
        if waited < self.settle:
            return False, (f'{self.member_id} holds {self.lock_name}; '
                           f'first period in {self.settle - waited:.0f}s')
        return True, f'leader: {self.member_id} holds {self.lock_name}'

    def _still_owner(self) -> bool:
        # Backends with leases can tell; a file lock is held until the
        # process exits, so holding it once is holding it still.
        owner = getattr(self.lock, 'is_still_owner', None)
        return owner() if owner else True

    def stop(self) -> None:
        if self._held:
            self.lock.release()
            self._held = False
        self.coordinator.stop()
