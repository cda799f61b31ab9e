"""The maintenance schedule: who is in maintenance when, and the drains'
accounting, driven by hand on a small cluster."""

import testtools

from nova_drs_scheduler.simulate import cluster
from nova_drs_scheduler.simulate import maintenance

SMALL = cluster.Flavor('small', 1, 1024)
#: A trace row of idle VMs.
IDLE = (0.0,) * 8


def _cluster(vms=3, hosts=3):
    spec = cluster.ClusterSpec(hosts=hosts, host_vcpus=4,
                               host_memory_mb=8192,
                               bandwidth_mbps=8 * 1024 * 1.048576,
                               dirty_mib_per_core=0.0)
    # vm0 on host-0, vm1 on host-1, vm2 on host-2, then around again.
    return cluster.Cluster(spec, [cluster.VM(f'vm{i}', i, SMALL)
                                  for i in range(vms)])


class ScheduleTest(testtools.TestCase):

    def test_drain_is_one_host_for_good(self):
        schedule = maintenance.drain('host-1', 600.0, deadline=900.0)
        self.assertEqual((('host-1',), 600.0, None, 900.0),
                         (schedule.hosts, schedule.start, schedule.work_time,
                          schedule.deadline))

    def test_rolling_is_every_host(self):
        schedule = maintenance.rolling(60.0, work_time=120.0)
        self.assertEqual(((), 60.0, 120.0, 3600.0),
                         (schedule.hosts, schedule.start, schedule.work_time,
                          schedule.deadline))

    def test_bad_values_are_refused(self):
        for kwargs in ({'start': -1.0}, {'deadline': 0.0},
                       {'work_time': -1.0}):
            self.assertRaises(ValueError, maintenance.Schedule, **kwargs)


class TrackerTest(testtools.TestCase):

    def _moved(self, placed, tracker, name, destination, now):
        migration = placed.start_migration(name, destination, now, IDLE)
        tracker.migrated(migration)
        return migration

    def test_waits_for_the_start_then_disables_the_host(self):
        placed = _cluster()
        tracker = maintenance.Tracker(maintenance.drain('host-1', 120.0),
                                      placed)
        tracker.advance(60.0, [])
        self.assertEqual({}, tracker.hosts)
        self.assertEqual(set(), placed.disabled)
        tracker.advance(120.0, [])
        self.assertEqual({'host-1': 120.0}, tracker.hosts)
        self.assertEqual({'host-1'}, placed.disabled)

    def test_time_to_drain_ends_with_the_last_departure(self):
        placed = _cluster(vms=4)          # host-0 holds vm0 and vm3
        tracker = maintenance.Tracker(
            maintenance.Schedule(('host-0',), 0.0, 600.0), placed)
        tracker.advance(0.0, [])
        self._moved(placed, tracker, 'vm0', 'host-1', 0.0)
        # A move that is not off the host in maintenance is not its drain's.
        self._moved(placed, tracker, 'vm1', 'host-2', 0.0)
        tracker.advance(60.0, placed.finish_migrations(60.0, IDLE))
        self.assertIsNone(tracker.current.emptied)
        last = self._moved(placed, tracker, 'vm3', 'host-2', 60.0)
        tracker.advance(120.0, placed.finish_migrations(120.0, IDLE))
        drain = tracker.current
        self.assertEqual((last.end, 61.0, 120.0, 2, 2048, 0),
                         (drain.emptied, drain.drain_seconds,
                          drain.work_started, drain.migrations,
                          drain.moved_mb, drain.left_behind))

    def test_rolling_brings_each_host_back_empty_and_starts_the_next(self):
        placed = _cluster(vms=0)
        tracker = maintenance.Tracker(maintenance.rolling(0.0, 120.0),
                                      placed)
        seen = []
        for now in range(0, 600, 60):
            tracker.advance(float(now), [])
            seen.append(tuple(tracker.hosts))
        # Empty hosts: each works 120 s, and the next enters as it leaves.
        self.assertEqual([('host-0',)] * 2 + [('host-1',)] * 2
                         + [('host-2',)] * 2 + [()] * 4, seen)
        self.assertEqual([(0.0, 0.0, 0.0, 120.0), (120.0, 0.0, 120.0, 240.0),
                          (240.0, 0.0, 240.0, 360.0)],
                         [(d.entered, d.drain_seconds, d.work_started,
                           d.returned) for d in tracker.drains])
        self.assertEqual(set(), placed.disabled)

    def test_the_hosts_still_to_drain_are_queued(self):
        placed = _cluster(vms=0)
        tracker = maintenance.Tracker(maintenance.rolling(60.0, 60.0),
                                      placed)
        seen = []
        for now in range(0, 300, 60):
            tracker.advance(float(now), [])
            seen.append(sorted(tracker.queued))
        # Before the start every host waits; then those behind the one
        # in maintenance (each empty, back after 60 s), and none once the
        # last has entered.
        self.assertEqual([['host-0', 'host-1', 'host-2'],
                          ['host-1', 'host-2'], ['host-2'], [], []], seen)

    def test_deadline_starts_the_work_and_leaves_instances_behind(self):
        placed = _cluster()
        tracker = maintenance.Tracker(
            maintenance.Schedule(('host-0', 'host-1'), 0.0, 60.0,
                                 deadline=120.0), placed)
        for now in (0.0, 60.0, 120.0):
            tracker.advance(now, [])
        first = tracker.drains[0]
        self.assertEqual((120.0, 1, None), (first.work_started,
                                            first.left_behind, first.emptied))
        # Its drain goes on during the work.
        self._moved(placed, tracker, 'vm0', 'host-2', 120.0)
        tracker.advance(180.0, placed.finish_migrations(180.0, IDLE))
        self.assertEqual((121.0, 180.0), (first.emptied, first.returned))
        self.assertEqual({'host-1': 180.0}, tracker.hosts)

    def test_a_move_landing_on_the_host_keeps_it_from_being_empty(self):
        placed = _cluster(vms=2)           # host-2 holds nothing
        placed.start_migration('vm0', 'host-2', 0.0, IDLE)
        tracker = maintenance.Tracker(maintenance.drain('host-2', 0.0),
                                      placed)
        tracker.advance(0.0, [])
        self.assertIsNone(tracker.current.work_started)
        tracker.advance(60.0, placed.finish_migrations(60.0, IDLE))
        self.assertIsNone(tracker.current.emptied)
        self.assertEqual(['vm0'], placed.instances_on('host-2'))

    def test_a_drain_under_way_at_the_end_leaves_its_instances(self):
        placed = _cluster()
        tracker = maintenance.Tracker(maintenance.drain('host-0', 0.0),
                                      placed)
        tracker.advance(0.0, [])
        self.assertEqual(1, tracker.finish()[0].left_behind)

    def test_no_return_keeps_the_host_out_and_the_others_waiting(self):
        placed = _cluster(vms=0)
        tracker = maintenance.Tracker(
            maintenance.Schedule(('host-0', 'host-1'), 0.0, None), placed)
        for now in (0.0, 3600.0, 7200.0):
            tracker.advance(now, [])
        self.assertEqual({'host-0': 0.0}, tracker.hosts)
        self.assertEqual(1, len(tracker.finish()))


class SummaryTest(testtools.TestCase):

    def test_figures_and_overload_while_draining(self):
        drains = [maintenance.Drain('host-0', 60.0, emptied=90.0,
                                    work_started=120.0, returned=180.0,
                                    migrations=2, moved_mb=3072),
                  maintenance.Drain('host-1', 180.0, migrations=1,
                                    moved_mb=1024, left_behind=4)]
        # Periods 1 (host-0 draining), 3 and 4 (host-1 draining) count.
        series = [1, 2, 4, 8, 16]
        self.assertEqual(
            {'hosts_drained': 2, 'hosts_emptied': 1, 'hosts_returned': 1,
             'drain_seconds': [30.0], 'link_seconds': [3.0],
             'drain_migrations': 3, 'drain_gb': 4.0,
             'left_behind': 4, 'overloaded_while_draining': 26},
            maintenance.summary(drains, series, 60, 8 * 1024 * 1.048576))
