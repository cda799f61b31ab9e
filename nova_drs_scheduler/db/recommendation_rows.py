"""The DRS database's recommendations of migrations
(``drs_recommendations``), mixed into :class:`~.store.Store`: one short
transaction per method, like the rest.
"""

import sqlalchemy as sa
from oslo_utils import timeutils

from nova_drs_scheduler.db import states
from nova_drs_scheduler.db import tables


class RecommendationRows:
    """Needs ``_read()`` and ``_write()`` connections (the Store's)."""

    def recommend(self, record_id: str, move: dict) -> int:
        """Open (or refresh) the instance's recommendation; its id."""
        rows = tables.recommendations
        now = timeutils.utcnow()
        values = {'source': move['source'],
                  'destination': move['destination'],
                  'reason': move.get('reason', ''), 'record_id': record_id,
                  'updated_at': now}
        with self._write() as conn:
            found = conn.execute(sa.select(rows.c.id, rows.c.state).where(
                rows.c.instance == move['instance'],
                rows.c.state.in_(states.OPEN))).first()
            if found is None:
                return conn.execute(rows.insert().values(
                    instance=move['instance'], state=states.PENDING,
                    created_at=now, **values)).inserted_primary_key[0]
            if found.state == states.PENDING:
                conn.execute(rows.update().where(
                    rows.c.id == found.id).values(**values))
            return found.id

    def recommendations(self, states=None) -> list[dict]:
        rows = tables.recommendations
        query = sa.select(rows).order_by(rows.c.id)
        if states:
            query = query.where(rows.c.state.in_(states))
        with self._read() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def transition(self, ident: int | None, to: str, allowed=(states.PENDING,),
                   detail: str | None = None) -> list[int]:
        """Move recommendation ``ident`` (None: every one in ``allowed``)
        to state ``to``; returns the ids changed.  Raises
        :class:`~.states.NotFoundError` or
        :class:`~.states.InvalidStateError` for one id."""
        rows = tables.recommendations
        with self._write() as conn:
            if ident is not None:
                found = conn.execute(sa.select(rows.c.state).where(
                    rows.c.id == ident)).first()
                if found is None:
                    raise states.NotFoundError(f'no recommendation {ident}')
                if found.state not in allowed:
                    raise states.InvalidStateError(
                        f'recommendation {ident} is {found.state}, not '
                        f'{" or ".join(allowed)}')
                ids = [ident]
            else:
                ids = [row.id for row in conn.execute(sa.select(
                    rows.c.id).where(rows.c.state.in_(allowed)))]
            if ids:
                conn.execute(rows.update().where(
                    rows.c.id.in_(ids), rows.c.state.in_(allowed)).values(
                    state=to, detail=detail,
                    updated_at=timeutils.utcnow()))
        return ids

    def close_started(self, instance: str, state: str,
                      detail: str | None = None) -> None:
        """End the instance's started recommendation, if it has one."""
        rows = tables.recommendations
        with self._write() as conn:
            conn.execute(rows.update().where(
                rows.c.instance == instance,
                rows.c.state == states.STARTED).values(
                state=state, detail=detail, updated_at=timeutils.utcnow()))
