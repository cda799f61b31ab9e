"""The DRS database's decision records and their moves' outcomes
(``drs_records``, ``drs_moves``), mixed into :class:`~.store.Store`: one
short transaction per method, like the rest.
"""

import datetime
import json

import sqlalchemy as sa
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler.db import history_file
from nova_drs_scheduler.db import states
from nova_drs_scheduler.db import tables

LOG = logging.getLogger(__name__)


def _time(value: str | None) -> datetime.datetime:
    return timeutils.normalize_time(timeutils.parse_isotime(value)) \
        if value else timeutils.utcnow()


def _drain_host(move: dict) -> str | None:
    """The host a drain move empties; None for the other goals (and for
    moves of records written before moves had one)."""
    return move['source'] if move.get('goal', 'balance') == 'drain' else None


class RecordRows:
    """Needs ``_read()`` and ``_write()`` connections and
    ``save_windows`` (the Store's)."""

    def add(self, rec: dict) -> None:
        """Store a period's record and its moves' current outcomes.

        The hosts kept in the record are those over their threshold; every
        host's verdict of the latest period is in ``drs_host_state``.
        """
        body = {key: value for key, value in rec.items()
                if key not in ('windows', 'instance_hosts')}
        body['hosts'] = [h for h in rec.get('hosts', ())
                         if h.get('counter') or h.get('violated')]
        now = timeutils.utcnow()
        with self._write() as conn:
            conn.execute(tables.records.insert().values(
                id=rec['id'], created_at=_time(rec['time']),
                automation=rec['automation'], skipped=rec.get('skipped'),
                move_count=len(rec.get('moves', ())), body=tables.dumps(body)))
            moves = [{'record_id': rec['id'], 'instance': move['instance'],
                      'status': move['outcome']['status'],
                      'outcome': tables.dumps(move['outcome']),
                      'updated_at': now, 'drain_host': _drain_host(move)}
                     for move in rec.get('moves', ())]
            if moves:
                conn.execute(tables.moves.insert(), moves)

    def set_outcome(self, record_id: str, instance: str,
                    outcome: dict) -> bool:
        """Record how a move ended (or started); False if not stored."""
        outcome = dict(outcome, time=timeutils.utcnow().isoformat())
        with self._write() as conn:
            result = conn.execute(tables.moves.update().where(
                tables.moves.c.record_id == record_id,
                tables.moves.c.instance == instance).values(
                status=outcome['status'], outcome=tables.dumps(outcome),
                updated_at=timeutils.utcnow()))
        if result.rowcount:
            LOG.info('DRS move of %s (record %s): %s', instance, record_id,
                     tables.dumps(outcome))
        return bool(result.rowcount)

    def get(self, record_id: str) -> dict | None:
        found = self._records(tables.records.c.id == record_id)
        return found[0] if found else None

    def recent(self, limit: int | None = None,
               moves_only: bool = False) -> list[dict]:
        """The newest ``limit`` records, oldest first."""
        where = tables.records.c.move_count > 0 if moves_only else sa.true()
        return self._records(where, limit)

    def count(self) -> int:
        with self._read() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(
                tables.records)).scalar_one()

    def _records(self, where, limit=None) -> list[dict]:
        query = sa.select(tables.records.c.id, tables.records.c.body).where(
            where).order_by(tables.records.c.created_at.desc(),
                            tables.records.c.id.desc())
        if limit:
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query).all()
            ids = [row.id for row in rows]
            outcomes = {}
            checks = {}
            if ids:
                for move in conn.execute(sa.select(
                        tables.moves.c.record_id, tables.moves.c.instance,
                        tables.moves.c.outcome,
                        tables.moves.c.relief_check).where(
                        tables.moves.c.record_id.in_(ids))):
                    key = move.record_id, move.instance
                    outcomes[key] = json.loads(move.outcome)
                    if move.relief_check is not None:
                        checks[key] = json.loads(move.relief_check)
        found = []
        for row in reversed(rows):
            rec = json.loads(row.body)
            for move in rec.get('moves', ()):
                key = row.id, move['instance']
                move['outcome'] = outcomes.get(key, move.get('outcome'))
                if key in checks:
                    move['relief_check'] = checks[key]
            found.append(rec)
        return found

    def unfinished(self) -> list[tuple[str, str, dict, datetime.datetime]]:
        """``(record id, instance, outcome, record time)`` of the moves
        that were starting or started and have no end yet."""
        query = sa.select(
            tables.moves.c.record_id, tables.moves.c.instance,
            tables.moves.c.outcome, tables.records.c.created_at).join(
            tables.records).where(tables.moves.c.status.in_(states.UNFINISHED))
        with self._read() as conn:
            return [(row.record_id, row.instance, json.loads(row.outcome),
                     row.created_at) for row in conn.execute(query)]

    def outcomes(self, status: str,
                 since: datetime.datetime) -> dict[str, dict]:
        """``{instance: {destination: Nova's migration uuid}}`` of the
        moves whose outcome became ``status`` since ``since`` (the
        outcome names the destination)."""
        query = sa.select(tables.moves.c.instance,
                          tables.moves.c.outcome).where(
            tables.moves.c.status == status,
            tables.moves.c.updated_at >= since)
        found = {}
        with self._read() as conn:
            for row in conn.execute(query):
                outcome = json.loads(row.outcome)
                found.setdefault(row.instance, {})[
                    outcome.get('destination')] = outcome.get('migration')
        return found

    def purge(self, max_count: int, max_age: int) -> int:
        """Delete records beyond ``max_count`` or older than ``max_age``
        seconds, and ended recommendations older than that; returns the
        number of records deleted."""
        cutoff = timeutils.utcnow() - datetime.timedelta(seconds=max_age)
        rec = tables.records
        with self._write() as conn:
            old = [row.id for row in conn.execute(
                sa.select(rec.c.id).where(rec.c.created_at < cutoff))]
            old += [row.id for row in conn.execute(
                sa.select(rec.c.id).where(rec.c.created_at >= cutoff)
                .order_by(rec.c.created_at.desc(), rec.c.id.desc())
                .offset(max_count))]
            for start in range(0, len(old), 500):
                chunk = old[start:start + 500]
                conn.execute(tables.moves.delete().where(
                    tables.moves.c.record_id.in_(chunk)))
                conn.execute(rec.delete().where(rec.c.id.in_(chunk)))
            conn.execute(tables.recommendations.delete().where(
                tables.recommendations.c.state.not_in(states.OPEN),
                tables.recommendations.c.updated_at < cutoff))
        return len(old)

    def import_file(self, path: str, limit: int) -> int:
        """Copy the newest ``limit`` records of an old ``history_file``,
        and the windows of the newest, into an empty database; returns
        how many records were copied."""
        if self.count():
            return 0
        imported = history_file.read(path)[-limit:]
        if imported and imported[-1].get('windows'):
            self.save_windows(imported[-1]['windows'], {})
        for rec in imported:
            for move in rec.get('moves', ()):
                move.setdefault('outcome', {'status': 'planned'})
            self.add(rec)
        return len(imported)
