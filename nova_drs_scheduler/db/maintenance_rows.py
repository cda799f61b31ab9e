"""The hosts in maintenance and the leader's reports of their drains
(``drs_maintenance``), mixed into :class:`~.store.Store`: one short
transaction per method, like the rest.
"""

import json

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import timeutils

from nova_drs_scheduler import maintenance_states
from nova_drs_scheduler.db import states
from nova_drs_scheduler.db import tables

#: Move outcomes of a move that was never tried (or not yet): neither in
#: flight nor ended.
_NOT_TRIED = ('planned', 'recommended', 'dry-run')


def _no_moves() -> dict:
    return {'completed': 0, 'failed': 0, 'in_flight': 0}


def _tally_key(status: str) -> str | None:
    """Where a drain move counts in ``Store.maintenance``: in flight,
    completed, failed (every other end), or None (never tried)."""
    if status in states.UNFINISHED:
        return 'in_flight'
    if status == states.COMPLETED:
        return 'completed'
    return None if status in _NOT_TRIED else 'failed'


def _maintenance_row(row) -> dict:
    return dict(row, progress=json.loads(row['progress'])
                if row['progress'] is not None else None)


class MaintenanceRows:
    """Needs ``_read()`` and ``_write()`` connections (the Store's)."""

    def enter_maintenance(self, host: str, reason: str | None,
                          disabled_by_drs: bool, queued: bool = False
                          ) -> dict:
        """Ask the leader to drain ``host``, or with ``queued`` put it at
        the end of the maintenance queue; its row, with ``'new'``.

        Entering again only replaces the reason (when one is given):
        ``requested_at`` still counts the drain's moves from the first
        request, ``disabled_by_drs`` still says whether exit must enable
        the service again, and a queued host keeps its place.  A queued
        host entered without ``queued`` leaves the queue and drains from
        now (its service disabled by the caller, as ``disabled_by_drs``
        says).
        """
        try:
            return self._enter_maintenance(host, reason, disabled_by_drs,
                                           queued)
        except db_exc.DBDuplicateEntry:
            # Another enter inserted the row since this one looked.
            return self._enter_maintenance(host, reason, disabled_by_drs,
                                           queued)

    def _enter_maintenance(self, host, reason, disabled_by_drs,
                           queued=False) -> dict:
        rows = tables.maintenance
        now = timeutils.utcnow()
        with self._write() as conn:
            found = self._find_maintenance(conn, host)
            if found is None and queued:
                conn.execute(rows.insert().values(
                    host=host, reason=reason, state=states.QUEUED,
                    disabled_by_drs=False, requested_at=now, updated_at=now,
                    queue_position=self._queue_end(conn) + 1))
            elif found is None:
                conn.execute(rows.insert().values(
                    host=host, reason=reason, state=states.DRAINING,
                    disabled_by_drs=bool(disabled_by_drs), requested_at=now,
                    updated_at=now))
            elif found['state'] == states.QUEUED and not queued:
                self._start(conn, found, disabled_by_drs, now,
                            found['reason'] if reason is None else reason)
            elif reason is not None:
                conn.execute(rows.update().where(rows.c.host == host).values(
                    reason=reason, updated_at=now))
            row = self._find_maintenance(conn, host)
        return dict(_maintenance_row(row), new=found is None)

    @staticmethod
    def _queue_end(conn) -> int:
        """The last queued host's position; 0 when none waits."""
        return conn.execute(sa.select(sa.func.max(
            tables.maintenance.c.queue_position))).scalar() or 0

    @staticmethod
    def _leave_queue(conn, position: int | None) -> None:
        """Move up every host queued behind ``position`` (a host that
        left the queue), so that positions stay 1, 2, ..."""
        if position is None:
            return
        rows = tables.maintenance
        conn.execute(rows.update().where(
            rows.c.queue_position > position).values(
            queue_position=rows.c.queue_position - 1))

    def _start(self, conn, found, disabled_by_drs: bool, now,
               reason: str | None) -> None:
        """A queued host's row becomes a drain requested ``now``."""
        rows = tables.maintenance
        conn.execute(rows.update().where(rows.c.host == found['host']).values(
            state=states.DRAINING, queue_position=None,
            disabled_by_drs=bool(disabled_by_drs), requested_at=now,
            updated_at=now, reported_at=None, progress=None, reason=reason))
        self._leave_queue(conn, found['queue_position'])

    def first_queued(self) -> dict | None:
        """The row of the host that drains next (position 1), or None
        when the queue is empty."""
        rows = tables.maintenance
        with self._read() as conn:
            found = conn.execute(sa.select(rows).where(
                rows.c.state == states.QUEUED).order_by(
                rows.c.queue_position, rows.c.host).limit(1)).mappings(
            ).first()
        return None if found is None else _maintenance_row(found)

    def start_queued(self, host: str, disabled_by_drs: bool) -> dict | None:
        """Take ``host`` out of the queue: it drains from now, the hosts
        behind it move up.  Its new row, or None when it is no longer
        queued (an exit or an enter came first)."""
        now = timeutils.utcnow()
        with self._write() as conn:
            found = self._find_maintenance(conn, host)
            if found is None or found['state'] != states.QUEUED:
                return None
            self._start(conn, found, disabled_by_drs, now, found['reason'])
            row = self._find_maintenance(conn, host)
        return _maintenance_row(row)

    @staticmethod
    def _find_maintenance(conn, host: str):
        return conn.execute(sa.select(tables.maintenance).where(
            tables.maintenance.c.host == host)).mappings().first()

    def exit_maintenance(self, host: str) -> dict:
        """End ``host``'s maintenance (a queued host leaves the queue, the
        hosts behind it move up); its last row, so the caller knows
        whether to enable the service again (``disabled_by_drs``).
        Raises :class:`~.states.NotFoundError` if it is not in maintenance."""
        rows = tables.maintenance
        with self._write() as conn:
            found = self._find_maintenance(conn, host)
            if found is None:
                raise states.NotFoundError(
                    f'host {host} is not in maintenance')
            conn.execute(rows.delete().where(rows.c.host == host))
            self._leave_queue(conn, found['queue_position'])
        return _maintenance_row(found)

    def maintenance(self, host: str | None = None) -> list[dict]:
        """The hosts in maintenance (or ``host`` only), by name, each with
        ``moves``: its drain moves of records since ``requested_at`` by
        outcome, ``{'completed': n, 'failed': n, 'in_flight': n}``
        (moves planned or recommended but not started are not counted).
        """
        rows, moves, recs = tables.maintenance, tables.moves, tables.records
        query = sa.select(rows).order_by(rows.c.host)
        counts = sa.select(moves.c.drain_host, moves.c.status,
                           sa.func.count()).join(recs).join(
            rows, rows.c.host == moves.c.drain_host).where(
            recs.c.created_at >= rows.c.requested_at).group_by(
            moves.c.drain_host, moves.c.status)
        if host is not None:
            query = query.where(rows.c.host == host)
            counts = counts.where(rows.c.host == host)
        tally = {}
        with self._read() as conn:
            found = conn.execute(query).mappings().all()
            for drained, status, count in conn.execute(counts):
                key = _tally_key(status)
                if key is not None:
                    moves_of = tally.setdefault(drained, _no_moves())
                    moves_of[key] += count
        return [dict(_maintenance_row(row),
                     moves=tally.get(row['host']) or _no_moves())
                for row in found]

    def report_maintenance(self, host: str, state: str,
                           progress: dict) -> bool:
        """Store the leader's latest view of ``host``'s drain; False when
        the row is gone (an exit came first), so the leader stops, or
        queued (a queued host's state stays ``queued`` until its turn)."""
        if state not in maintenance_states.STATES:
            raise ValueError(f'unknown maintenance state {state!r}')
        now = timeutils.utcnow()
        rows = tables.maintenance
        with self._write() as conn:
            result = conn.execute(rows.update().where(
                rows.c.host == host, rows.c.state != states.QUEUED).values(
                state=state, progress=tables.dumps(progress), reported_at=now,
                updated_at=now))
        return bool(result.rowcount)

    def maintenance_hosts(self) -> dict[str, dict]:
        """``{host: {'state', 'requested_at', 'disabled_by_drs',
        'queue_position'}}``: what the leader reads every period, without
        progress or counts.  A ``queued`` host is not to be drained."""
        rows = tables.maintenance
        with self._read() as conn:
            found = conn.execute(sa.select(
                rows.c.host, rows.c.state, rows.c.requested_at,
                rows.c.disabled_by_drs, rows.c.queue_position)).all()
        return {row.host: {'state': row.state,
                           'requested_at': row.requested_at,
                           'disabled_by_drs': row.disabled_by_drs,
                           'queue_position': row.queue_position}
                for row in found}
