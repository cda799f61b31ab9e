"""The states of a host in maintenance.

The planner's drains end in one of them (``planning.drain.state``), the
leader reports it and the DRS database stores it: a module below both, so
that neither imports the other.
"""

DRAINING, DRAINED, BLOCKED = 'draining', 'drained', 'blocked'
#: The states the leader reports of a drain.
STATES = (DRAINING, DRAINED, BLOCKED)
#: Waiting in the maintenance queue (``enter --one-at-a-time``): not
#: drained yet, its service still enabled; ``exit`` of the last host
#: draining starts the first one.  Never a drain's state: the leader
#: neither drains nor reports a queued host.
QUEUED = 'queued'
