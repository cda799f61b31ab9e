"""Reads and writes of the DRS database, through oslo.db.

One :class:`Store` per process and configuration: the scheduler's
rebalancer writes (the leader only), ``nova-drs`` reads and approves.
Every method is one short transaction, so a scheduler killed at any point
leaves whole rows behind.  Errors are oslo.db's ``DBError`` subclasses;
callers decide whether that skips a period or fails a command.
"""

import datetime
import json

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler import maintenance_states
from nova_drs_scheduler.conf import database as database_conf
from nova_drs_scheduler.db import history_file
from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import power_rows
from nova_drs_scheduler.db import tables

LOG = logging.getLogger(__name__)

#: Recommendation states; the first three are still open.
PENDING, APPROVED, STARTED = 'pending', 'approved', 'started'
COMPLETED, FAILED, DISMISSED, EXPIRED = (
    'completed', 'failed', 'dismissed', 'expired')
OPEN = (PENDING, APPROVED, STARTED)
STATES = OPEN + (COMPLETED, FAILED, DISMISSED, EXPIRED)

#: Move outcomes whose migration may still be running.
UNFINISHED = ('starting', 'started')
#: Move outcomes of a move that was never tried (or not yet): neither in
#: flight nor ended.
_NOT_TRIED = ('planned', 'recommended', 'dry-run')

#: Maintenance states, as the leader reports them (``enter`` starts at
#: ``draining``).
DRAINING, DRAINED, BLOCKED = (maintenance_states.DRAINING,
                              maintenance_states.DRAINED,
                              maintenance_states.BLOCKED)

#: How a move's relief check ended (``relief_check['status']``): checked
#: against its hosts' loads (``relief.check``'s result), given up for want
#: of a CPU sample of its hosts, or not checkable (its plan recorded no
#: load before the move: an approved recommendation, an older record).
CHECKED, NO_SAMPLE, NO_EXPECTATION = 'checked', 'no sample', 'no expectation'
#: The goals whose moves are checked: a drain empties its host whatever
#: relief it buys.
_RELIEF_GOALS = ('balance', 'level')


class NotFoundError(LookupError):
    """No recommendation with that id, or the host is not in
    maintenance."""


class InvalidStateError(ValueError):
    """The recommendation cannot make that transition."""


class _Context:
    """What enginefacade keeps its per-thread transaction state on."""


#: ``MetricsWindows.export`` keys kept in a host row's ``trend``.
_TREND = ('expected', 'variance', 'previous', 'rises')


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _time(value: str | None) -> datetime.datetime:
    return timeutils.normalize_time(timeutils.parse_isotime(value)) \
        if value else timeutils.utcnow()


def _drain_host(move: dict) -> str | None:
    """The host a drain move empties; None for the other goals (and for
    moves of records written before moves had one)."""
    return move['source'] if move.get('goal', 'balance') == 'drain' else None


def _no_moves() -> dict:
    return {'completed': 0, 'failed': 0, 'in_flight': 0}


def _tally_key(status: str) -> str | None:
    """Where a drain move counts in ``Store.maintenance``: in flight,
    completed, failed (every other end), or None (never tried)."""
    if status in UNFINISHED:
        return 'in_flight'
    if status == COMPLETED:
        return 'completed'
    return None if status in _NOT_TRIED else 'failed'


def _maintenance_row(row) -> dict:
    return dict(row, progress=json.loads(row['progress'])
                if row['progress'] is not None else None)


class Store(power_rows.PowerRows):
    """The DRS database of one ``[drs_database]`` configuration."""

    def __init__(self, conf):
        self._ctx = enginefacade.transaction_context()
        self._ctx.configure(**database_conf.settings(conf))

    @property
    def engine(self):
        return self._ctx.writer.get_engine()

    def _write(self):
        return self._ctx.writer.connection.using(_Context())

    def _read(self):
        return self._ctx.reader.connection.using(_Context())

    def check(self) -> None:
        """Raise unless reachable and migrated (``nova-drs db sync``)."""
        migration.check(self.engine)

    def close(self) -> None:
        self._ctx.dispose_pool()

    # Windows and counters.

    def save_windows(self, exported: dict, verdicts: dict) -> None:
        """Replace every host's row: window, counter, latest verdict
        (``verdicts``: {host: the record's verdict dict})."""
        now = timeutils.utcnow()
        rows = []
        for host, data in exported.items():
            verdict = verdicts.get(host, {})
            trend = {key: data[key] for key in _TREND if key in data}
            rows.append({
                'host': host, 'counter': data['counter'],
                'samples': _dumps(data['samples']),
                'trend': _dumps(trend) if trend else None,
                'cpu_percent': verdict.get('cpu_percent'),
                'ram_percent': verdict.get('ram_percent'),
                'violated': bool(verdict.get('violated')),
                'reason': verdict.get('reason'),
                'updated_at': now})
        with self._write() as conn:
            conn.execute(tables.host_state.delete())
            if rows:
                conn.execute(tables.host_state.insert(), rows)

    def load_windows(self) -> dict:
        """What :meth:`save_windows` stored, in ``MetricsWindows.export``
        form."""
        with self._read() as conn:
            rows = conn.execute(sa.select(
                tables.host_state.c.host, tables.host_state.c.counter,
                tables.host_state.c.samples, tables.host_state.c.trend)).all()
        return {row.host: {'counter': row.counter,
                           'samples': json.loads(row.samples),
                           **(json.loads(row.trend) if row.trend else {})}
                for row in rows}

    def host_states(self) -> list[dict]:
        """Every host's stored row, by name."""
        with self._read() as conn:
            rows = conn.execute(sa.select(tables.host_state).order_by(
                tables.host_state.c.host)).mappings().all()
        return [dict(row, samples=json.loads(row['samples']),
                     trend=json.loads(row['trend']) if row['trend'] else None)
                for row in rows]

    # Decision records.

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
                move_count=len(rec.get('moves', ())), body=_dumps(body)))
            moves = [{'record_id': rec['id'], 'instance': move['instance'],
                      'status': move['outcome']['status'],
                      'outcome': _dumps(move['outcome']), 'updated_at': now,
                      'drain_host': _drain_host(move)}
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
                status=outcome['status'], outcome=_dumps(outcome),
                updated_at=timeutils.utcnow()))
        if result.rowcount:
            LOG.info('DRS move of %s (record %s): %s', instance, record_id,
                     _dumps(outcome))
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
            tables.records).where(tables.moves.c.status.in_(UNFINISHED))
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

    # Relief checked after the move.

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
            moves.c.status == COMPLETED, moves.c.relief_check.is_(None),
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
                relief_check=_dumps(result)))
        return bool(found.rowcount)

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
                tables.recommendations.c.state.not_in(OPEN),
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

    # Recommendations.

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
                rows.c.state.in_(OPEN))).first()
            if found is None:
                return conn.execute(rows.insert().values(
                    instance=move['instance'], state=PENDING,
                    created_at=now, **values)).inserted_primary_key[0]
            if found.state == PENDING:
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

    def transition(self, ident: int | None, to: str, allowed=(PENDING,),
                   detail: str | None = None) -> list[int]:
        """Move recommendation ``ident`` (None: every one in ``allowed``)
        to state ``to``; returns the ids changed.  Raises
        :class:`NotFoundError` or :class:`InvalidStateError` for one id."""
        rows = tables.recommendations
        with self._write() as conn:
            if ident is not None:
                found = conn.execute(sa.select(rows.c.state).where(
                    rows.c.id == ident)).first()
                if found is None:
                    raise NotFoundError(f'no recommendation {ident}')
                if found.state not in allowed:
                    raise InvalidStateError(
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
                rows.c.state == STARTED).values(
                state=state, detail=detail, updated_at=timeutils.utcnow()))

    # Maintenance mode.

    def enter_maintenance(self, host: str, reason: str | None,
                          disabled_by_drs: bool) -> dict:
        """Ask the leader to drain ``host``; its row, with ``'new'``.

        Entering again only replaces the reason (when one is given):
        ``requested_at`` still counts the drain's moves from the first
        request, and ``disabled_by_drs`` still says whether exit must
        enable the service again.
        """
        try:
            return self._enter_maintenance(host, reason, disabled_by_drs)
        except db_exc.DBDuplicateEntry:
            # Another enter inserted the row since this one looked.
            return self._enter_maintenance(host, reason, disabled_by_drs)

    def _enter_maintenance(self, host, reason, disabled_by_drs) -> dict:
        rows = tables.maintenance
        now = timeutils.utcnow()
        with self._write() as conn:
            found = self._find_maintenance(conn, host)
            if found is None:
                conn.execute(rows.insert().values(
                    host=host, reason=reason, state=DRAINING,
                    disabled_by_drs=bool(disabled_by_drs), requested_at=now,
                    updated_at=now))
            elif reason is not None:
                conn.execute(rows.update().where(rows.c.host == host).values(
                    reason=reason, updated_at=now))
            row = self._find_maintenance(conn, host)
        return dict(_maintenance_row(row), new=found is None)

    @staticmethod
    def _find_maintenance(conn, host: str):
        return conn.execute(sa.select(tables.maintenance).where(
            tables.maintenance.c.host == host)).mappings().first()

    def exit_maintenance(self, host: str) -> dict:
        """End ``host``'s maintenance; its last row, so the caller knows
        whether to enable the service again (``disabled_by_drs``).
        Raises :class:`NotFoundError` if it is not in maintenance."""
        rows = tables.maintenance
        with self._write() as conn:
            found = self._find_maintenance(conn, host)
            if found is None:
                raise NotFoundError(f'host {host} is not in maintenance')
            conn.execute(rows.delete().where(rows.c.host == host))
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
        the row is gone (an exit came first), so the leader stops."""
        if state not in maintenance_states.STATES:
            raise ValueError(f'unknown maintenance state {state!r}')
        now = timeutils.utcnow()
        with self._write() as conn:
            result = conn.execute(tables.maintenance.update().where(
                tables.maintenance.c.host == host).values(
                state=state, progress=_dumps(progress), reported_at=now,
                updated_at=now))
        return bool(result.rowcount)

    def maintenance_hosts(self) -> dict[str, dict]:
        """``{host: {'state', 'requested_at', 'disabled_by_drs'}}``: what
        the leader reads every period, without progress or counts."""
        rows = tables.maintenance
        with self._read() as conn:
            found = conn.execute(sa.select(
                rows.c.host, rows.c.state, rows.c.requested_at,
                rows.c.disabled_by_drs)).all()
        return {row.host: {'state': row.state,
                           'requested_at': row.requested_at,
                           'disabled_by_drs': row.disabled_by_drs}
                for row in found}
