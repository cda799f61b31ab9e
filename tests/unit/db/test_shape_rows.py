"""The pools' daily shapes in the DRS database, and revision 0007 over
older rows."""

import datetime

import sqlalchemy as sa
import testtools
from alembic import command
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler.db import migration
from nova_drs_scheduler.db import tables
from tests.unit.db import test_store

NOW = datetime.datetime(2026, 11, 29, 12, 0, 0)


def learnt(demand, days=1, day=20425, weight=1.0):
    return {'demand': demand, 'days': days, 'day': day, 'weight': weight}


class ShapeRowsTest(test_store.StoreTestBase):

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(NOW))

    def test_nothing_stored(self):
        self.assertEqual({}, self.store.daily_shapes())
        self.store.save_daily_shape('A', 900, {})
        self.assertEqual({}, self.store.daily_shapes())

    def test_bins_round_trip_per_pool_the_global_one_as_none(self):
        self.store.save_daily_shape(None, 900, {3: learnt(12.5),
                                                0: learnt(4.0, 2, 20426, 1.7)})
        self.store.save_daily_shape('A', 900, {95: learnt(1.0)})
        self.assertEqual({
            None: [dict(learnt(4.0, 2, 20426, 1.7), bin=0, seconds=900),
                   dict(learnt(12.5), bin=3, seconds=900)],
            'A': [dict(learnt(1.0), bin=95, seconds=900)]},
            self.store.daily_shapes())

    def test_a_bin_saved_again_replaces_its_row(self):
        self.store.save_daily_shape('A', 900, {3: learnt(12.5)})
        self.clock.advance_time_seconds(86400)
        self.store.save_daily_shape('A', 900, {3: learnt(14.0, 2, 20426,
                                                         1.7),
                                               4: learnt(9.0)})
        self.assertEqual([dict(learnt(14.0, 2, 20426, 1.7), bin=3,
                               seconds=900),
                          dict(learnt(9.0), bin=4, seconds=900)],
                         self.store.daily_shapes()['A'])
        with self.store.engine.connect() as conn:
            self.assertEqual([NOW + datetime.timedelta(days=1)] * 2, list(
                conn.execute(sa.select(
                    tables.daily_shape.c.updated_at)).scalars()))


    def test_a_bin_saved_again_leaves_other_pools_and_bins_alone(self):
        # Pools and bins on either side of the one saved again, in name
        # and index order both.
        for pool in (None, 'A', 'B', 'C'):
            self.store.save_daily_shape(pool, 900, {
                2: learnt(1.0), 3: learnt(2.0), 4: learnt(3.0)})
        self.store.save_daily_shape('B', 900, {3: learnt(9.0, 2)})
        # A new pool between them: its first bin is a row of its own.
        self.store.save_daily_shape('AB', 900, {3: learnt(7.0)})
        found = self.store.daily_shapes()
        self.assertEqual([dict(learnt(7.0), bin=3, seconds=900)],
                         found['AB'])
        for pool in (None, 'A', 'C'):
            self.assertEqual([1.0, 2.0, 3.0],
                             [row['demand'] for row in found[pool]], pool)
        self.assertEqual([(2, 1.0, 1), (3, 9.0, 2), (4, 3.0, 1)],
                         [(row['bin'], row['demand'], row['days'])
                          for row in found['B']])

    def test_a_duplicate_from_another_writer_is_written_again(self):
        calls = []
        real = self.store._save_shape

        def save(*args):
            calls.append(args)
            if len(calls) == 1:
                real(*args)  # Another writer's row, then the clash.
                raise db_exc.DBDuplicateEntry()
            real(*args)
        self.store._save_shape = save
        self.store.save_daily_shape('A', 900, {3: learnt(5.0)})
        self.assertEqual(2, len(calls))
        self.assertEqual([dict(learnt(5.0), bin=3, seconds=900)],
                         self.store.daily_shapes()['A'])

class ShapeRevisionTest(testtools.TestCase):

    def test_upgrade_from_0006_starts_with_no_shape(self):
        store = test_store.sqlite_store(self)
        with store.engine.begin() as connection:
            command.upgrade(migration._config(connection), '0006')
            connection.execute(tables.power_saved.insert().values(
                host='h1', pool='A', standby_seconds=60.0, updated_at=NOW))
        self.assertEqual(migration.head(), migration.sync(store.engine))
        store.check()
        self.assertEqual({}, store.daily_shapes())
        self.assertEqual({'A': 60.0}, store.standby_seconds())
