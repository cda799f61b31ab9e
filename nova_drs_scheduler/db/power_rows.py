"""The DRS database's rows of power management (``drs_power``,
``drs_power_saved``, ``drs_power_requests`` and power recommendations),
mixed into :class:`~.store.Store`: one short transaction per method, like
the rest.
"""

import json

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import timeutils

from nova_drs_scheduler import power_states
from nova_drs_scheduler.db import states
from nova_drs_scheduler.db import tables


def _row(row) -> dict:
    return dict(row, detail=json.loads(row['detail'])
                if row['detail'] else {})


def _bank(conn, found, now) -> None:
    """Add the time ``found`` (a ``drs_power`` row leaving its state) spent
    in standby to its host's banked seconds, in the caller's transaction:
    the row that held its start is about to change or go."""
    if found is None or found['state'] != power_states.STANDBY:
        return
    seconds = max(0.0, (now - found['requested_at']).total_seconds())
    saved = tables.power_saved
    banked = conn.execute(sa.select(saved.c.standby_seconds).where(
        saved.c.host == found['host'])).scalar()
    values = {'pool': found['pool'], 'updated_at': now,
              'standby_seconds': (banked or 0.0) + seconds}
    if banked is None:
        conn.execute(saved.insert().values(host=found['host'], **values))
    else:
        conn.execute(saved.update().where(
            saved.c.host == found['host']).values(**values))


class PowerRows:
    """Needs ``_read()`` and ``_write()`` connections (the Store's)."""

    def power_hosts(self) -> dict[str, dict]:
        """``{host: row}`` of every host out of its pool's service."""
        rows = tables.power
        with self._read() as conn:
            found = conn.execute(sa.select(rows)).mappings().all()
        return {row['host']: _row(row) for row in found}

    def standby_seconds(self) -> dict[str | None, float]:
        """``{pool: host-seconds}`` spent in standby so far: the time
        banked as hosts left standby, plus the time of the hosts in standby
        now."""
        saved, rows = tables.power_saved, tables.power
        now = timeutils.utcnow()
        found = {}
        with self._read() as conn:
            for pool, seconds in conn.execute(sa.select(
                    saved.c.pool, saved.c.standby_seconds)):
                found[pool] = found.get(pool, 0.0) + seconds
            for pool, since in conn.execute(sa.select(
                    rows.c.pool, rows.c.requested_at).where(
                    rows.c.state == power_states.STANDBY)):
                found[pool] = found.get(pool, 0.0) + max(
                    0.0, (now - since).total_seconds())
        return found

    def left_standby(self) -> dict:
        """``{host: when it last left standby}`` (its power-on), for every
        host ever powered off by power management."""
        saved = tables.power_saved
        with self._read() as conn:
            return dict(conn.execute(sa.select(saved.c.host,
                                               saved.c.updated_at)).all())

    def set_power(self, host: str, state: str, pool: str | None = None,
                  reason: str | None = None,
                  disabled_by_drs: bool | None = None,
                  detail: dict | None = None) -> dict:
        """Put ``host`` in ``state`` (its row made on first use); the row.

        ``requested_at`` is when the host entered its present state;
        values left None keep what the row holds.
        """
        try:
            return self._set_power(host, state, pool, reason,
                                   disabled_by_drs, detail)
        except db_exc.DBDuplicateEntry:
            # Another writer inserted the row since this one looked.
            return self._set_power(host, state, pool, reason,
                                   disabled_by_drs, detail)

    def _set_power(self, host, state, pool, reason, disabled_by_drs,
                   detail) -> dict:
        rows = tables.power
        now = timeutils.utcnow()
        with self._write() as conn:
            found = conn.execute(sa.select(rows).where(
                rows.c.host == host)).mappings().first()
            values = {'state': state, 'updated_at': now}
            if found is None or found['state'] != state:
                values['requested_at'] = now
                _bank(conn, found, now)
            for key, value in (('pool', pool), ('reason', reason),
                               ('disabled_by_drs', disabled_by_drs)):
                if value is not None:
                    values[key] = value
            if detail is not None:
                values['detail'] = json.dumps(detail, sort_keys=True)
            if found is None:
                values.setdefault('disabled_by_drs', False)
                conn.execute(rows.insert().values(host=host, **values))
            else:
                conn.execute(rows.update().where(
                    rows.c.host == host).values(**values))
            row = conn.execute(sa.select(rows).where(
                rows.c.host == host)).mappings().first()
        return _row(row)

    def forget_power(self, host: str) -> dict | None:
        """Give ``host`` back to its pool; its last row, None if none."""
        rows = tables.power
        with self._write() as conn:
            found = conn.execute(sa.select(rows).where(
                rows.c.host == host)).mappings().first()
            _bank(conn, found, timeutils.utcnow())
            conn.execute(rows.delete().where(rows.c.host == host))
        return _row(found) if found is not None else None

    def request_wake(self, pool: str | None, reason: str) -> None:
        """Ask the leader to wake a host of ``pool`` (None: any)."""
        with self._write() as conn:
            conn.execute(tables.power_requests.insert().values(
                pool=pool, reason=reason[:1000],
                created_at=timeutils.utcnow()))

    def take_wake_requests(self) -> list[dict]:
        """The wake requests stored so far, deleted as they are read."""
        rows = tables.power_requests
        with self._write() as conn:
            found = [dict(row) for row in conn.execute(
                sa.select(rows).order_by(rows.c.id)).mappings()]
            if found:
                conn.execute(rows.delete().where(
                    rows.c.id <= found[-1]['id']))
        return found

    def recommend_power(self, record_id: str, action: str, host: str,
                        reason: str) -> int:
        """Open (or refresh) the recommendation to ``action`` ``host``."""
        rows = tables.recommendations
        now = timeutils.utcnow()
        with self._write() as conn:
            found = conn.execute(sa.select(rows.c.id, rows.c.state).where(
                rows.c.action == action, rows.c.source == host,
                rows.c.state.in_(states.OPEN))).first()
            if found is None:
                return conn.execute(rows.insert().values(
                    instance='', source=host, destination='', action=action,
                    reason=reason, state=states.PENDING, record_id=record_id,
                    created_at=now, updated_at=now)).inserted_primary_key[0]
            if found.state == states.PENDING:
                conn.execute(rows.update().where(rows.c.id == found.id)
                             .values(reason=reason, record_id=record_id,
                                     updated_at=now))
            return found.id
