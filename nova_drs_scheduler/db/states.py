"""The DRS database's vocabulary: the states of its rows and the errors
its reads and writes raise.

Below :mod:`.store` and its row modules, which all name them; callers name
them through :mod:`.store`.
"""

from nova_drs_scheduler import maintenance_states

#: Recommendation states; the first three are still open.
PENDING, APPROVED, STARTED = 'pending', 'approved', 'started'
COMPLETED, FAILED, DISMISSED, EXPIRED = (
    'completed', 'failed', 'dismissed', 'expired')
OPEN = (PENDING, APPROVED, STARTED)

#: Move outcomes whose migration may still be running.
UNFINISHED = ('starting', 'started')

#: Maintenance states, as the leader reports them (``enter`` starts at
#: ``draining``), and a host waiting in the queue (``queued``).
DRAINING, DRAINED, BLOCKED = (maintenance_states.DRAINING,
                              maintenance_states.DRAINED,
                              maintenance_states.BLOCKED)
QUEUED = maintenance_states.QUEUED

#: How a move's relief check ended (``relief_check['status']``): checked
#: against its hosts' loads (``relief.check``'s result), given up for want
#: of a CPU sample of its hosts, or not checkable (its plan recorded no
#: load before the move: an approved recommendation, an older record).
CHECKED, NO_SAMPLE, NO_EXPECTATION = 'checked', 'no sample', 'no expectation'


class NotFoundError(LookupError):
    """No recommendation with that id, or the host is not in
    maintenance."""


class InvalidStateError(ValueError):
    """The recommendation cannot make that transition."""
