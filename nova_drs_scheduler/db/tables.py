"""The tables of the DRS database (SQLAlchemy Core).

The Alembic migrations in ``migrations/versions`` create exactly these;
a unit test compares them.  JSON payloads are text: they are read whole
and never queried inside.
"""

import json

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

metadata = sa.MetaData()

#: Large enough for a decision record of a few thousand hosts on MySQL.
JSON_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql')


def dumps(value) -> str:
    """A JSON payload as stored: keys sorted, anything else as text."""
    return json.dumps(value, sort_keys=True, default=str)


#: Per-host window and counter, replaced by the leader every period, with
#: the host's latest verdict.
host_state = sa.Table(
    'drs_host_state', metadata,
    sa.Column('host', sa.String(255), primary_key=True),
    sa.Column('counter', sa.Integer, nullable=False),
    sa.Column('samples', sa.Text, nullable=False),
    #: JSON: the window state beyond samples and counter (expected load,
    #: its variance, the last period's CPU and the rise rate); NULL in rows
    #: written before revision 0002.
    sa.Column('trend', sa.Text),
    sa.Column('cpu_percent', sa.Float),
    sa.Column('ram_percent', sa.Float),
    sa.Column('violated', sa.Boolean, nullable=False),
    sa.Column('reason', sa.Text),
    sa.Column('updated_at', sa.DateTime, nullable=False),
)

#: One decision record per period; the moves' outcomes are in drs_moves.
records = sa.Table(
    'drs_records', metadata,
    sa.Column('id', sa.String(36), primary_key=True),
    sa.Column('created_at', sa.DateTime, nullable=False, index=True),
    sa.Column('automation', sa.String(16), nullable=False),
    sa.Column('skipped', sa.Text),
    sa.Column('move_count', sa.Integer, nullable=False),
    sa.Column('body', JSON_TEXT, nullable=False),
)

#: One row per planned move, with its outcome (written before the move
#: starts, updated when it ends; ``updated_at`` is when the outcome was
#: last set, so a completed move's completion).
moves = sa.Table(
    'drs_moves', metadata,
    sa.Column('record_id', sa.String(36),
              sa.ForeignKey('drs_records.id', ondelete='CASCADE'),
              primary_key=True),
    sa.Column('instance', sa.String(36), primary_key=True),
    sa.Column('status', sa.String(32), nullable=False, index=True),
    sa.Column('outcome', sa.Text, nullable=False),
    sa.Column('updated_at', sa.DateTime, nullable=False),
    #: The host a drain move empties (maintenance mode); NULL for the
    #: other moves, and for every move stored before revision 0003.
    sa.Column('drain_host', sa.String(255), index=True),
    #: JSON: what a completed balancing or leveling move really bought,
    #: checked ``[drs] relief_check_delay`` after it ended (``store``'s
    #: ``CHECKED``, ``NO_SAMPLE`` or ``NO_EXPECTATION`` result); NULL until
    #: then, and for the other moves.
    sa.Column('relief_check', sa.Text),
)

#: Moves planned in ``manual`` automation, awaiting an operator.
recommendations = sa.Table(
    'drs_recommendations', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('instance', sa.String(36), nullable=False, index=True),
    sa.Column('source', sa.String(255), nullable=False),
    sa.Column('destination', sa.String(255), nullable=False),
    sa.Column('reason', sa.Text, nullable=False),
    sa.Column('state', sa.String(16), nullable=False, index=True),
    sa.Column('detail', sa.Text),
    sa.Column('record_id', sa.String(36)),
    sa.Column('created_at', sa.DateTime, nullable=False),
    sa.Column('updated_at', sa.DateTime, nullable=False),
    #: ``standby`` or ``wake`` for a power recommendation (its host in
    #: ``source``, no instance or destination); NULL for a migration.
    sa.Column('action', sa.String(16)),
)

#: Hosts in maintenance mode (``nova-drs maintenance enter``), drained by
#: the leader period by period until ``exit`` deletes the row.
maintenance = sa.Table(
    'drs_maintenance', metadata,
    sa.Column('host', sa.String(255), primary_key=True),
    sa.Column('reason', sa.Text),
    #: ``draining``, ``drained`` or ``blocked`` (``store.DRAINING``...) as
    #: the leader reports them, or ``queued``: waiting for its turn
    #: (``maintenance enter --one-at-a-time``), service still enabled.
    sa.Column('state', sa.String(16), nullable=False),
    #: Whether ``enter`` disabled the compute service, so that ``exit``
    #: enables it again only then.
    sa.Column('disabled_by_drs', sa.Boolean, nullable=False),
    sa.Column('requested_at', sa.DateTime, nullable=False),
    sa.Column('updated_at', sa.DateTime, nullable=False),
    #: When a leader last wrote ``progress``; NULL until the first report.
    sa.Column('reported_at', sa.DateTime),
    #: JSON: the leader's latest report (a dict).
    sa.Column('progress', JSON_TEXT),
    #: A queued host's place in the queue (1 drains next); NULL for a
    #: host draining.
    sa.Column('queue_position', sa.Integer),
)

#: Hosts power management has taken from their pool: being emptied for
#: standby (``entering``), powered off (``standby``) or powering on
#: (``waking``).  A host on and in its pool has no row.
power = sa.Table(
    'drs_power', metadata,
    sa.Column('host', sa.String(255), primary_key=True),
    sa.Column('state', sa.String(16), nullable=False),
    sa.Column('pool', sa.String(255)),
    #: Why it entered this state (the planner's reason).
    sa.Column('reason', sa.Text),
    #: Whether nova-drs disabled the compute service, so that a wake (or a
    #: standby given up) enables it again only then.
    sa.Column('disabled_by_drs', sa.Boolean, nullable=False),
    #: When the host entered this state.
    sa.Column('requested_at', sa.DateTime, nullable=False),
    sa.Column('updated_at', sa.DateTime, nullable=False),
    #: JSON: the last driver error, the measured boot time.
    sa.Column('detail', sa.Text),
)

#: Boot requests that found no valid host, for the leader to wake a host
#: of their pool (NULL: any pool) at its next period.
power_requests = sa.Table(
    'drs_power_requests', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('pool', sa.String(255)),
    sa.Column('reason', sa.Text, nullable=False),
    sa.Column('created_at', sa.DateTime, nullable=False),
)

#: Seconds each host has spent in standby (powered off by power
#: management), banked each time it leaves standby: a ``drs_power`` row is
#: deleted once its host is back, so the time would be lost with it.
power_saved = sa.Table(
    'drs_power_saved', metadata,
    sa.Column('host', sa.String(255), primary_key=True),
    #: The pool of its last standby, where the time counts (NULL: the one
    #: pool of global mode).
    sa.Column('pool', sa.String(255)),
    sa.Column('standby_seconds', sa.Float, nullable=False),
    #: When it last left standby: a pool levels for ``[drs]
    #: level_after_wake`` after it.
    sa.Column('updated_at', sa.DateTime, nullable=False),
)

#: Each pool's demand by time of day, as power management learnt it
#: (``planning/daily_shape.py``): one row per pool and bin of the UTC
#: day, written when the bin has learnt a day, read by a new leader.
daily_shape = sa.Table(
    'drs_daily_shape', metadata,
    #: The pool; '' for the one pool of global mode (an aggregate's name
    #: is never empty).
    sa.Column('pool', sa.String(255), primary_key=True),
    #: The bin's index from midnight UTC.
    sa.Column('bin', sa.Integer, primary_key=True, autoincrement=False),
    #: The bins' width, seconds: rows of another width are not used.
    sa.Column('seconds', sa.Integer, nullable=False),
    #: The demand learnt, cores, averaged over days by their weights.
    sa.Column('demand', sa.Float, nullable=False),
    #: Days that fed the bin, the last of them (days since the epoch) and
    #: the sum of their weights then.
    sa.Column('days', sa.Integer, nullable=False),
    sa.Column('day', sa.Integer, nullable=False),
    sa.Column('weight', sa.Float, nullable=False),
    sa.Column('updated_at', sa.DateTime, nullable=False),
)
