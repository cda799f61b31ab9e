"""``--measure pass``: the cost of one background refresh of the host cache.

Rows read and rebuilt, and CPU time by part, over passes run back to back
on a simulated clock.
"""

import collections
import contextlib
import datetime
import math
import statistics
import time
import unittest.mock

from nova import objects
from oslo_utils import timeutils

from benchlib.clocks import CallClock
from benchlib.row_writer import RowWriter
from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler import host_manager as host_manager_mod
from nova_drs_scheduler.conf import host_cache as host_cache_conf
from nova_drs_scheduler.host_manager import freezing
from nova_drs_scheduler.host_manager import rows as rows_mod
from nova_drs_scheduler.host_manager import snapshot as snapshot_mod

CONF = drs_conf.CONF
#: ``--measure pass``: the parts of a background refresh pass, timed apart.
PASS_PARTS = {
    'query': [(rows_mod, 'read_changes')],
    # ``compute_node`` (which calls ``_from_db_object``) since parsed JSON
    # is reused, ``_from_db_object`` alone before: two calls a row either
    # way, which ``pass_rows`` counts as one rebuild.
    'node objects + templates': [
        (objects.ComputeNode, '_from_db_object'),
        (snapshot_mod, 'compute_node'),
        (snapshot_mod, 'node_entry')],
    'service objects + views': [
        (objects.Service, '_from_db_object'),
        (snapshot_mod, 'service_view')],
    'instance locations': [(snapshot_mod, '_merge_instances')],
    'freeze': [(freezing.Freezer, 'freeze')],
}


class SimulatedTime:
    """The refresher's monotonic clock and everyone's UTC clock, advanced
    by hand: passes run back to back on the real CPU, but each sees the
    rows a real cloud changes in one refresh interval, and its timestamp
    margin re-reads what it would in a service."""

    def __init__(self):
        self.monotonic = 0.0
        self.utc = timeutils.utcnow()

    def advance(self, seconds):
        self.monotonic += seconds
        self.utc += datetime.timedelta(seconds=seconds)

    @contextlib.contextmanager
    def installed(self):
        with unittest.mock.patch.object(
                timeutils, 'utcnow',
                lambda with_timezone=False: self.utc):
            yield self


class ReadCounter:
    """Rows per table each ``read_changes`` returned."""

    def __init__(self):
        self.read = collections.Counter()

    @contextlib.contextmanager
    def installed(self):
        original = rows_mod.read_changes

        def counted(*args, **kwargs):
            changes = original(*args, **kwargs)
            for table, found in changes._asdict().items():
                self.read[table] += len(found)
            return changes

        with unittest.mock.patch.object(rows_mod, 'read_changes', counted):
            yield self


def measure_pass(cell_url, size, passes):
    """What one background refresh pass costs at ``size`` nodes, by part,
    and how many rows it reads and rebuilds.

    Passes run back to back on a simulated clock advanced by the refresh
    interval before each, with the rows a real cloud changes in that time
    stamped (:class:`RowWriter`). The first passes, until the timestamp
    margin is full of stamped rows, are not counted.
    """
    group = CONF.drs_host_cache
    interval = host_cache_conf.refresh_interval(group) or 2.5
    warmup = 1 + math.ceil((group.timestamp_margin + interval) / interval)
    manager = host_manager_mod.CachingHostManager()
    sim = SimulatedTime()
    manager.rows.clock = lambda: sim.monotonic
    writer = RowWriter(cell_url, size)
    clock = CallClock(PASS_PARTS)
    reads = ReadCounter()
    samples = collections.defaultdict(list)
    try:
        with sim.installed(), reads.installed(), clock.installed():
            for done in range(warmup + passes):
                sim.advance(interval)
                writer.advance(interval)
                clock.clear()
                reads.read.clear()
                wall, cpu = time.perf_counter(), time.process_time()
                manager.rows.refresh_due()
                cpu = time.process_time() - cpu
                wall = time.perf_counter() - wall
                if done < warmup:
                    continue
                samples['pass cpu'].append(cpu)
                samples['pass wall'].append(wall)
                for label in PASS_PARTS:
                    samples[f'{label} cpu'].append(clock.cpu[label])
                    samples[f'{label} calls'].append(clock.calls[label])
                for table, count in reads.read.items():
                    samples[f'{table} read'].append(count)
                for table, count in writer.batch.items():
                    samples[f'{table} stamped'].append(count)
    finally:
        manager.stop_refresher()
        writer.close()
    return {key: statistics.median(values)
            for key, values in samples.items()}


def pass_rows(results):
    """Per N, the rows one pass stamps, reads and rebuilds, and its CPU
    time by part (medians over the passes)."""
    counts, parts = [], []
    rebuilt = {'compute_nodes': 'node objects + templates',
               'services': 'service objects + views'}
    for r in results:
        p = r['pass']
        for table in ('compute_nodes', 'services', 'instances'):
            counts.append([r['size'], table, p.get(f'{table} stamped', 0),
                           p.get(f'{table} read', 0),
                           p.get(f'{rebuilt.get(table)} calls', 0) / 2
                           if table in rebuilt else None])
        total = p['pass cpu']
        for label in PASS_PARTS:
            parts.append([r['size'], label, p[f'{label} cpu'] * 1000.0,
                          p[f'{label} cpu'] / total * 100.0])
        rest = total - sum(p[f'{label} cpu'] for label in PASS_PARTS)
        parts.append([r['size'], 'other (row compare, merge, garbage '
                      'collection)', rest * 1000.0, rest / total * 100.0])
        parts.append([r['size'], 'whole pass', total * 1000.0, 100.0])
        parts.append([r['size'], 'whole pass, wall clock',
                      p['pass wall'] * 1000.0, None])
    return counts, parts
