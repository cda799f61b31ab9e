"""Reads and writes of the DRS database, through oslo.db.

One :class:`Store` per process and configuration: the scheduler's
rebalancer writes (the leader only), ``nova-drs`` reads and approves.
Every method is one short transaction, so a scheduler killed at any point
leaves whole rows behind.  Errors are oslo.db's ``DBError`` subclasses;
callers decide whether that skips a period or fails a command.
"""

import json

import sqlalchemy as sa
from oslo_db.sqlalchemy import enginefacade
from oslo_utils import timeutils

from nova_drs_scheduler.conf import database as database_conf
from nova_drs_scheduler.db import maintenance_rows
from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import power_rows
from nova_drs_scheduler.db import recommendation_rows
from nova_drs_scheduler.db import record_rows
from nova_drs_scheduler.db import relief_rows
from nova_drs_scheduler.db import shape_rows
from nova_drs_scheduler.db import tables

# The states and errors the Store's methods take, return and raise, named
# where its callers name the Store.
from nova_drs_scheduler.db.states import APPROVED as APPROVED
from nova_drs_scheduler.db.states import BLOCKED as BLOCKED
from nova_drs_scheduler.db.states import CHECKED as CHECKED
from nova_drs_scheduler.db.states import COMPLETED as COMPLETED
from nova_drs_scheduler.db.states import DISMISSED as DISMISSED
from nova_drs_scheduler.db.states import DRAINED as DRAINED
from nova_drs_scheduler.db.states import DRAINING as DRAINING
from nova_drs_scheduler.db.states import EXPIRED as EXPIRED
from nova_drs_scheduler.db.states import FAILED as FAILED
from nova_drs_scheduler.db.states import NO_EXPECTATION as NO_EXPECTATION
from nova_drs_scheduler.db.states import NO_SAMPLE as NO_SAMPLE
from nova_drs_scheduler.db.states import OPEN as OPEN
from nova_drs_scheduler.db.states import PENDING as PENDING
from nova_drs_scheduler.db.states import QUEUED as QUEUED
from nova_drs_scheduler.db.states import STARTED as STARTED
from nova_drs_scheduler.db.states import InvalidStateError as InvalidStateError
from nova_drs_scheduler.db.states import NotFoundError as NotFoundError


class _Context:
    """What enginefacade keeps its per-thread transaction state on."""


#: ``MetricsWindows.export`` keys kept in a host row's ``trend``.
_TREND = ('expected', 'variance', 'previous', 'rises')


class Store(record_rows.RecordRows, relief_rows.ReliefRows,
            recommendation_rows.RecommendationRows,
            maintenance_rows.MaintenanceRows, power_rows.PowerRows,
            shape_rows.ShapeRows):
    """The DRS database of one ``[drs_database]`` configuration: the
    connections and the metric windows here, each family of rows in its
    mixin."""

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
                'samples': tables.dumps(data['samples']),
                'trend': tables.dumps(trend) if trend else None,
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
