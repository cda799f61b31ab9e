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


def epoch(when: datetime.datetime) -> float:
    """Seconds on the Unix epoch of a naive UTC time (the DRS database's,
    ``timeutils.utcnow()``'s)."""
    return when.replace(tzinfo=datetime.timezone.utc).timestamp()


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

    def relief_checks(self, since: datetime.datetime,
                      completed_since: datetime.datetime) -> list[tuple]:
        """The relief checks made at or after ``since``, as
        ``(time, source, load_stayed)``: seconds on the Unix epoch
        (:func:`epoch`), the move's source host, and whether its moved
        load stayed (None when its instance's load was not read);
        what :func:`.relief.stayed_counts` takes.

        Only the moves completed at or after ``completed_since`` are read
        (a move is checked after it completes, within a bound the caller
        knows), so the query stays on the recent rows.  Checks that were
        not made (no sample, no expectation) and those stored without
        their source (before it was stored) are left out.
        """
        moves = tables.moves
        query = sa.select(moves.c.relief_check).where(
            moves.c.status == states.COMPLETED,
            moves.c.relief_check.is_not(None),
            moves.c.updated_at >= completed_since)
        with self._read() as conn:
            rows = conn.execute(query).scalars().all()
        found = []
        start = epoch(since)
        for text in rows:
            try:
                check = json.loads(text)
                when = epoch(datetime.datetime.fromisoformat(check['time']))
            except (KeyError, TypeError, ValueError):
                continue
            if (check.get('status') != states.CHECKED or when < start
                    or not check.get('source')):
                continue
            found.append((when, check['source'], check.get('load_stayed')))
        return found
