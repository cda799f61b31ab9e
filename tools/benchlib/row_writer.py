"""The rows a real cloud changes, written at its pace while a benchmark runs.
"""

import random
import time

import sqlalchemy as sa
from nova.db.main import models
from oslo_serialization import jsonutils
from oslo_utils import timeutils

from nova_drs_scheduler import conf as drs_conf

CONF = drs_conf.CONF


class RowWriter:
    """Writes the rows a real cloud changes in a given time, in rotation,
    as Nova writes them:

    - every nova-compute service heartbeats each ``report_interval`` (10
      s): Nova's database service group driver adds one to its
      ``report_count`` and stamps ``last_seen_up`` and ``updated_at``;
    - every compute node reports each minute
      (``update_resources_interval``): Nova saves the row only when a
      value changed, so each report here changes its ``cpu.percent``
      metric (a cloud with compute monitors, as this scheduler reads) and
      stamps ``updated_at``.

    Rows written earlier are read again, unchanged, as the timestamp
    margin makes a real refresh do."""

    def __init__(self, cell_url, size):
        self.engine = sa.create_engine(cell_url)
        self.size = size
        self.rates = {models.Service.__table__: size / CONF.report_interval,
                      models.ComputeNode.__table__: size / 60.0}
        self.next_id = dict.fromkeys(self.rates, 0)
        self.owed = dict.fromkeys(self.rates, 0.0)
        self.last = time.monotonic()
        self.stamped = 0
        self.rng = random.Random(size)

    def advance(self, seconds):
        """Stamp what changes in ``seconds``; returns the rows stamped."""
        now = timeutils.utcnow()
        stamped = 0
        #: Table name -> rows stamped by the last call.
        self.batch = {}
        with self.engine.begin() as conn:
            for table, rate in self.rates.items():
                self.owed[table] += rate * seconds
                batch = min(self.size, int(self.owed[table]))
                self.owed[table] -= batch
                self.batch[table.name] = batch
                if not batch:
                    continue
                first = self.next_id[table]
                ids = [(first + i) % self.size + 1 for i in range(batch)]
                self.next_id[table] = (first + batch) % self.size
                values = {'updated_at': now}
                if table is models.Service.__table__:
                    values.update(last_seen_up=now,
                                  report_count=table.c.report_count + 1)
                else:
                    values['metrics'] = jsonutils.dumps([{
                        'name': 'cpu.percent', 'source': 'virt',
                        'timestamp': now.isoformat(),
                        'value': round(self.rng.uniform(0.05, 0.95), 3)}])
                conn.execute(table.update().where(
                    table.c.id.in_(ids)).values(**values))
                stamped += batch
        self.stamped += stamped
        return stamped

    def catch_up(self):
        """Stamp what changed since the last call, on the real clock."""
        now = time.monotonic()
        self.advance(now - self.last)
        self.last = now

    def close(self):
        self.engine.dispose()
