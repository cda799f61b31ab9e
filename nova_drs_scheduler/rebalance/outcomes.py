"""The moves the leader follows to their end, and what each ended as.

An outcome is stored in its decision record as soon as it is known; an
ended move also ends its recommendation.  A new leader adopts the moves
its predecessor left starting or started, so every record completes.
"""

from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.rebalance import executor

CONF = conf.CONF

#: Outcomes of a move that ended, as the recommendation's state.
_ENDED = {'completed': db_store.COMPLETED}


class Outcomes:
    """The executor's moves, followed from the DRS database's records."""

    def __init__(self, store, telemetry):
        self.store = store
        self.telemetry = telemetry
        self.executor = executor.Executor()
        #: Whether the last period was led here; adoption happens on the
        #: change to True.
        self.following = False
        #: Whether a move ended since the last period or flow step read
        #: the cloud: a drain's flow plans only then.
        self.ended = False

    def lead(self) -> None:
        """At a period led here: adopt what a previous leader left (on
        becoming leader), then collect; the flow waits for the next end."""
        if not self.following:
            self.adopt_unfinished()
            self.following = True
        self.collect()
        self.ended = False

    def adopt_unfinished(self) -> None:
        """Follow the moves a previous leader recorded as starting or
        started: their outcome still belongs in their record."""
        for record_id, instance, outcome, created in self.store.unfinished():
            if outcome['status'] == 'started' and outcome.get('migration'):
                self.executor.adopt(
                    record_id, instance, outcome['migration'],
                    timeutils.parse_isotime(outcome.get('time')) if
                    outcome.get('time') else created)
            else:
                self.save(record_id, instance,
                          self.executor.adopt_starting(
                              record_id, instance, created))

    def collect(self) -> None:
        """Store the outcomes of the moves that ended; a drain's flow
        plans again after any."""
        for record_id, instance, outcome in self.executor.poll(
                CONF.drs.migration_timeout):
            self.save(record_id, instance, outcome)
            self.ended = True

    def save(self, record_id: str, instance: str, outcome: dict) -> None:
        """Store a move's outcome; an ended one also ends its
        recommendation and counts in the metrics."""
        self.store.set_outcome(record_id, instance, outcome)
        status = outcome['status']
        self.telemetry.moves(status, 1)
        if status != 'started':
            self.store.close_started(
                instance, _ENDED.get(status, db_store.FAILED),
                outcome.get('error'))
