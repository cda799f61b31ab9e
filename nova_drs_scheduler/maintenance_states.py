"""The states of a host in maintenance.

The planner's drains end in one of them (``planning.drain.state``), the
leader reports it and the DRS database stores it: a module below both, so
that neither imports the other.
"""

DRAINING, DRAINED, BLOCKED = 'draining', 'drained', 'blocked'
STATES = (DRAINING, DRAINED, BLOCKED)
