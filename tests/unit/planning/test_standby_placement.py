"""A standby's placement check, on its own (power's tests drive it through
the planner)."""

import testtools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import standby_placement
from tests import snapshots as h


class PlacingTest(testtools.TestCase):

    def test_an_instance_grows_with_the_pool_on_its_destination(self):
        # 1.25 cores grown by 1.5 on 10 vCPUs: 18.75 points; RAM as is.
        dest = h.host('d', 40.0, ram=50.0)
        placing = standby_placement.Placing({'d': 40.0}, {'d': 50.0}, [])
        instance = h.instance('i', 'a', 1.25, memory_mb=1000)
        self.assertEqual((58.75, 60.0), placing.after(instance, dest, 1.5))
        placing.add(instance, dest, 1.5)
        self.assertEqual((58.75, 60.0), (placing.cpu['d'], placing.ram['d']))


class PlaceTest(testtools.TestCase):

    def test_an_instance_moving_already_is_skipped_not_the_rest(self):
        # 'big' moves this period already; 'small' is still placed.
        hosts = [h.host('a', 50.0), h.host('d', 20.0)]
        big = h.instance('big', 'a', 1.0, memory_mb=4000)
        small = h.instance('small', 'a', 1.0, memory_mb=1000)
        moving = model.Move(instance='big', source='a', destination='d',
                            reason='', expected={}, memory_mb=4000)
        snapshot = h.snapshot(hosts, [big, small])
        placing = standby_placement.Placing({'d': 30.0}, {'d': None},
                                            [moving])
        found = standby_placement.place(
            placing, snapshot.hosts['a'], [big, small], snapshot,
            h.allow_all, lambda host: 75.0, 1.0)
        self.assertEqual('', found)
        self.assertEqual({'d': [small]}, placing.placed)
        self.assertEqual(['big', 'small'],
                         [move.instance for move in placing.planned])
