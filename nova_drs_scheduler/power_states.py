"""A host's power states under power management.

The planner decides them (``planning.model``), the leader stores them and
the DRS database banks the time spent in standby: a module below both, so
that neither imports the other.
"""

ON, ENTERING, STANDBY, WAKING = 'on', 'entering', 'standby', 'waking'
