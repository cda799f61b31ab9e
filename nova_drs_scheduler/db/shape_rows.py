"""The daily shapes of the pools' demand (``drs_daily_shape``), mixed
into :class:`~.store.Store`: one short transaction per method, like the
rest.  Rows are plain dicts: what they mean, and whether one can be
used, is the caller's to judge.
"""

from collections.abc import Mapping

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import timeutils

from nova_drs_scheduler.db import tables

#: The stored name of the one pool of global mode (pool None).
_GLOBAL = ''

#: A bin's columns besides pool and index, as :meth:`save_daily_shape`
#: takes them.
FIELDS = ('demand', 'days', 'day', 'weight')


def _pool(stored: str) -> str | None:
    return None if stored == _GLOBAL else stored


class ShapeRows:
    """Needs ``_read()`` and ``_write()`` connections (the Store's)."""

    def daily_shapes(self) -> dict[str | None, list[dict]]:
        """``{pool: [row]}`` of every stored bin, each row with ``bin``,
        ``seconds`` and :data:`FIELDS`."""
        rows = tables.daily_shape
        with self._read() as conn:
            found = conn.execute(sa.select(
                rows.c.pool, rows.c.bin, rows.c.seconds,
                *(rows.c[name] for name in FIELDS)).order_by(
                rows.c.pool, rows.c.bin)).mappings().all()
        shapes = {}
        for row in found:
            shapes.setdefault(_pool(row['pool']), []).append(
                {key: value for key, value in row.items() if key != 'pool'})
        return shapes

    def save_daily_shape(self, pool: str | None, seconds: int,
                         bins: Mapping[int, Mapping]) -> None:
        """Store ``bins`` (index -> :data:`FIELDS`) of ``pool``'s shape,
        each replacing its row."""
        if not bins:
            return
        try:
            self._save_shape(pool, seconds, bins)
        except db_exc.DBDuplicateEntry:
            # Another writer inserted a row since this one looked.
            self._save_shape(pool, seconds, bins)

    def _save_shape(self, pool, seconds, bins) -> None:
        rows = tables.daily_shape
        stored = _GLOBAL if pool is None else pool
        now = timeutils.utcnow()
        with self._write() as conn:
            present = set(conn.execute(sa.select(rows.c.bin).where(
                rows.c.pool == stored, rows.c.bin.in_(list(bins)))).scalars())
            for index, found in sorted(bins.items()):
                values = dict({name: found[name] for name in FIELDS},
                              seconds=seconds, updated_at=now)
                if index in present:
                    conn.execute(rows.update().where(
                        rows.c.pool == stored,
                        rows.c.bin == index).values(**values))
                else:
                    conn.execute(rows.insert().values(
                        pool=stored, bin=index, **values))
