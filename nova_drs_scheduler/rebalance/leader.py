"""Who may rebalance: one acting rebalancer per cloud, no extra service.

Two schedulers fighting over the same overloaded host would double the
migrations, so a period acts only where :meth:`ServiceLeader.check` says so.
The default needs nothing but Nova: the leader is the lowest-named
nova-scheduler host whose service is up (as Nova's own host discovery
chooses), and within that host the one worker process holding an exclusive
file lock.  A coordination backend (tooz) can replace this class by
providing the same ``check(context)`` method.
"""

import fcntl
import os
import tempfile

from nova import objects
from oslo_log import log as logging

LOG = logging.getLogger(__name__)

LOCK_NAME = 'nova-drs-rebalancer.lock'

#: Lock files held by this process: {path: (pid, file object)}.
_held = {}


def _hold_process_lock(path: str) -> bool:
    """Take (once) and keep an exclusive lock until the service stops.

    Forked workers re-try on their own pid: a descriptor inherited through
    fork would share its owner's lock.
    """
    held = _held.get(path)
    if held and held[0] == os.getpid():
        return True
    # Kept open on success: closing the file would release the lock.
    handle = open(path, 'a')
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return False
    _held[path] = (os.getpid(), handle)
    return True


def _release_process_lock(path: str) -> None:
    """Let another worker lead: closing the file releases the lock."""
    held = _held.get(path)
    if held and held[0] == os.getpid():
        del _held[path]
        held[1].close()


class ServiceLeader:
    """Leader: the lowest-named up nova-scheduler host, one worker in it."""

    def __init__(self, host: str, servicegroup_api, lock_dir: str | None):
        self.host = host
        self.servicegroup_api = servicegroup_api
        self.lock_path = os.path.join(lock_dir or tempfile.gettempdir(),
                                      LOCK_NAME)

    def check(self, context) -> tuple[bool, str]:
        """``(is_leader, why)``; ``why`` goes into the decision record."""
        services = objects.ServiceList.get_by_binary(
            context, 'nova-scheduler')
        up = sorted(service.host for service in services
                    if self.servicegroup_api.service_is_up(service))
        if not up or up[0] != self.host:
            leader = up[0] if up else 'none (no scheduler service is up)'
            return False, f'leader is scheduler host {leader}'
        if not _hold_process_lock(self.lock_path):
            return False, (f'another worker on {self.host} holds '
                           f'{self.lock_path}')
        return True, f'leader: scheduler host {self.host}'

    def stop(self) -> None:
        """The service stops: hand the worker lock over at once."""
        _release_process_lock(self.lock_path)
