"""The relief checks of completed moves (``drs_moves.relief_check``),
mixed into :class:`~.store.Store`: one short transaction per method, like
the rest.
"""

import datetime
import json

import sqlalchemy as sa
from oslo_utils import timeutils

from nova_drs_scheduler.db import states
from nova_drs_scheduler.db import tables

#: The goals whose moves are checked: a drain empties its host whatever
#: relief it buys.
_RELIEF_GOALS = ('balance', 'level')


class ReliefRows:
    """Needs ``_read()`` and ``_write()`` connections (the Store's)."""

    def relief_due(self, completed_before: datetime.datetime) -> list[dict]:
        """The completed balancing and leveling moves not checked yet that
        completed at or before ``completed_before``, oldest first.

        Each is ``{'record_id', 'instance', 'source', 'destination',
        'goal', 'expected', 'completed_at'}``: ``expected`` is the plan's
        mapping (``{}`` when the record has none), ``completed_at`` when
        the completion was stored.
        """
        moves = tables.moves
        query = sa.select(
            moves.c.record_id, moves.c.instance, moves.c.updated_at,
            tables.records.c.body).join(tables.records).where(
            moves.c.status == states.COMPLETED, moves.c.relief_check.is_(None),
            moves.c.drain_host.is_(None),
            moves.c.updated_at <= completed_before).order_by(
            moves.c.updated_at, moves.c.record_id, moves.c.instance)
        with self._read() as conn:
            rows = conn.execute(query).all()
        planned = {}
        due = []
        for row in rows:
            if row.record_id not in planned:
                planned[row.record_id] = {
                    move.get('instance'): move
                    for move in json.loads(row.body).get('moves', ())}
            move = planned[row.record_id].get(row.instance, {})
            goal = move.get('goal', 'balance')
            if goal not in _RELIEF_GOALS:
                continue
            due.append({'record_id': row.record_id, 'instance': row.instance,
                        'source': move.get('source'),
                        'destination': move.get('destination'),
                        'goal': goal,
                        'expected': move.get('expected') or {},
                        'completed_at': row.updated_at})
        return due

    def save_relief(self, record_id: str, instance: str,
                    result: dict) -> bool:
        """Store a move's relief check (with the time it was made), which
        takes it off :meth:`relief_due`; False if the move is gone."""
        result = dict(result, time=timeutils.utcnow().isoformat())
        with self._write() as conn:
            found = conn.execute(tables.moves.update().where(
                tables.moves.c.record_id == record_id,
                tables.moves.c.instance == instance).values(
                relief_check=tables.dumps(result)))
        return bool(found.rowcount)
